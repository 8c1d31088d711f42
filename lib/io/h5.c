/* HDF5 parameter files in NNabla's layout: deterministic writing through
 * libhdf5 (reading, of files from anywhere, is h5read.c's own code). */
#include "io/h5.h"

#include <hdf5.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>

#include "core/ir.h"
#include "io/zip.h"

#if H5_VERSION_GE(1, 12, 0)
#define GIR_H5O_INFO H5O_info2_t
#define gir_H5Oget_info_by_name(l, n, i, lapl) H5Oget_info_by_name3((l), (n), (i), H5O_INFO_BASIC, (lapl))
#else
#define GIR_H5O_INFO H5O_info_t
#define gir_H5Oget_info_by_name(l, n, i, lapl) H5Oget_info_by_name2((l), (n), (i), H5O_INFO_BASIC, (lapl))
#endif

/* The system HDF5 is built without thread safety: every call goes through
 * this lock.  Callbacks into the caller run with the lock released. */
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

static void h5_enter(void)
{
    pthread_mutex_lock(&h5_lock);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    H5Eclear2(H5E_DEFAULT);
}

static void h5_leave(void)
{
    H5Eclear2(H5E_DEFAULT);
    pthread_mutex_unlock(&h5_lock);
}

/* ---- errors ------------------------------------------------------------- */

typedef struct h5_why {
    char inner[200];
    char outer[200];
    unsigned frames;
} h5_why;

static herr_t why_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    h5_why *w = data;
    const char *d = e->desc && e->desc[0] ? e->desc : NULL;
    if (n == 0 && d)
        snprintf(w->inner, sizeof w->inner, "%s", d);
    if (d)
        snprintf(w->outer, sizeof w->outer, "%s", d);
    w->frames = n + 1;
    return 0;
}

/* Fails with code and "<what>: <HDF5's reasons>", then clears the stack. */
static gir_status h5_fail(gir_error *err, gir_status code, const char *fmt, ...) GIR_PRINTF(3, 4);
static gir_status h5_fail(gir_error *err, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = gir_vstrdupf(fmt, ap);
    va_end(ap);
    h5_why w = { "", "", 0 };
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, why_walk, &w);
    H5Eclear2(H5E_DEFAULT);
    if (!what)
        return gir_nomem(err);
    if (w.inner[0] && w.outer[0] && strcmp(w.inner, w.outer) != 0)
        gir_fail(err, code, "%s: %s (%s)", what, w.outer, w.inner);
    else if (w.inner[0])
        gir_fail(err, code, "%s: %s", what, w.inner);
    else
        gir_fail(err, code, "%s", what);
    free(what);
    return code;
}

/* ---- types --------------------------------------------------------------- */

static hid_t make_bool_enum(void)
{
    hid_t t = H5Tenum_create(H5T_STD_I8LE);
    signed char f = 0, tr = 1;
    if (t < 0 || H5Tenum_insert(t, "FALSE", &f) < 0 || H5Tenum_insert(t, "TRUE", &tr) < 0) {
        if (t >= 0)
            H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

static hid_t make_half(bool bf16)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0)
        return t;
    herr_t r;
    if (bf16)
        r = H5Tset_fields(t, 15, 7, 8, 0, 7) < 0 || H5Tset_precision(t, 16) < 0 || H5Tset_offset(t, 0) < 0 ||
                    H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 127) < 0
                ? -1
                : 0;
    else
        r = H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_precision(t, 16) < 0 || H5Tset_offset(t, 0) < 0 ||
                    H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0
                ? -1
                : 0;
    if (r < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* The little-endian HDF5 type of dt; *owned says whether to H5Tclose it. */
static hid_t le_type(gir_dtype dt, bool *owned)
{
    *owned = false;
    switch (dt) {
    case GIR_DT_F32: return H5T_IEEE_F32LE;
    case GIR_DT_F64: return H5T_IEEE_F64LE;
    case GIR_DT_I8: return H5T_STD_I8LE;
    case GIR_DT_I16: return H5T_STD_I16LE;
    case GIR_DT_I32: return H5T_STD_I32LE;
    case GIR_DT_I64: return H5T_STD_I64LE;
    case GIR_DT_U8: return H5T_STD_U8LE;
    case GIR_DT_U16: return H5T_STD_U16LE;
    case GIR_DT_U32: return H5T_STD_U32LE;
    case GIR_DT_U64: return H5T_STD_U64LE;
    case GIR_DT_F16: *owned = true; return make_half(false);
    case GIR_DT_BF16: *owned = true; return make_half(true);
    case GIR_DT_BOOL: *owned = true; return make_bool_enum();
    default: return H5I_INVALID_HID;
    }
}

/* ---- writing ------------------------------------------------------------ */

bool gir_h5_name_ok(const char *name)
{
    if (!name || !name[0])
        return false;
    for (const char *c = name;;) {
        const char *e = strchr(c, '/');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (!e)
            return true;
        c = e + 1;
    }
}

static gir_status check_param_name(const char *name, gir_error *err)
{
    if (!name || !name[0])
        return gir_fail(err, GIR_E_ARGUMENT, "a parameter has an empty name");
    if (!gir_h5_name_ok(name))
        return gir_fail(err, GIR_E_ARGUMENT, "parameter name '%s' has an empty, '.' or '..' component", name);
    return GIR_OK;
}

typedef struct h5_writer {
    hid_t file, gcpl, dcpl, scalar, bool_t, i64_t;
} h5_writer;

/* Creates the groups above name (each '/' prefix) unless they exist. */
static gir_status make_groups(h5_writer *w, const char *name, gir_error *err)
{
    char *path = gir_strdupf("%s", name);
    if (!path)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    for (char *p = strchr(path, '/'); st == GIR_OK && p; p = strchr(p + 1, '/')) {
        *p = '\0';
        htri_t ex = H5Lexists(w->file, path, H5P_DEFAULT);
        if (ex < 0) {
            st = h5_fail(err, GIR_E_IO, "cannot look up group '%s'", path);
        } else if (ex > 0) {
            GIR_H5O_INFO oi;
            if (gir_H5Oget_info_by_name(w->file, path, &oi, H5P_DEFAULT) < 0)
                st = h5_fail(err, GIR_E_IO, "cannot inspect '%s'", path);
            else if (oi.type != H5O_TYPE_GROUP)
                st = gir_fail(err, GIR_E_DUPLICATE, "parameter '%s' needs a group '%s', which is a parameter",
                              name, path);
        } else {
            hid_t g = H5Gcreate2(w->file, path, H5P_DEFAULT, w->gcpl, H5P_DEFAULT);
            if (g < 0)
                st = h5_fail(err, GIR_E_IO, "cannot create group '%s'", path);
            else
                H5Gclose(g);
        }
        *p = '/';
    }
    free(path);
    return st;
}

static gir_status write_attr(h5_writer *w, hid_t obj, const char *attr, hid_t type, const void *value,
                             const char *name, gir_error *err)
{
    hid_t a = H5Acreate2(obj, attr, type, w->scalar, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        return h5_fail(err, GIR_E_IO, "parameter '%s': cannot create attribute %s", name, attr);
    gir_status st = GIR_OK;
    if (H5Awrite(a, type, value) < 0)
        st = h5_fail(err, GIR_E_IO, "parameter '%s': cannot write attribute %s", name, attr);
    H5Aclose(a);
    return st;
}

/* Creates the dataset of p (lock held); *d gets it open for writing. */
static gir_status make_dataset(h5_writer *w, const gir_h5_param *p, hid_t ftype, hid_t *d, gir_error *err)
{
    *d = H5I_INVALID_HID;
    gir_status st = make_groups(w, p->name, err);
    if (st)
        return st;
    htri_t ex = H5Lexists(w->file, p->name, H5P_DEFAULT);
    if (ex < 0)
        return h5_fail(err, GIR_E_IO, "cannot look up '%s'", p->name);
    if (ex > 0) {
        GIR_H5O_INFO oi;
        if (gir_H5Oget_info_by_name(w->file, p->name, &oi, H5P_DEFAULT) < 0)
            return h5_fail(err, GIR_E_IO, "cannot inspect '%s'", p->name);
        if (oi.type == H5O_TYPE_GROUP)
            return gir_fail(err, GIR_E_DUPLICATE, "parameter '%s' is also the group of other parameters", p->name);
        return gir_fail(err, GIR_E_DUPLICATE, "parameter '%s' appears more than once", p->name);
    }
    hid_t sp;
    if (p->shape.rank == 0) {
        sp = H5Screate(H5S_SCALAR);
    } else {
        hsize_t dims[GIR_MAX_RANK];
        for (int i = 0; i < p->shape.rank; i++)
            dims[i] = (hsize_t)p->shape.dims[i];
        sp = H5Screate_simple(p->shape.rank, dims, NULL);
    }
    if (sp < 0)
        return h5_fail(err, GIR_E_INTERNAL, "parameter '%s': cannot create its dataspace", p->name);
    *d = H5Dcreate2(w->file, p->name, ftype, sp, H5P_DEFAULT, w->dcpl, H5P_DEFAULT);
    H5Sclose(sp);
    if (*d < 0)
        return h5_fail(err, GIR_E_IO, "cannot create dataset '%s'", p->name);
    signed char ng = p->need_grad ? 1 : 0;
    int64_t idx = p->index;
    st = write_attr(w, *d, "need_grad", w->bool_t, &ng, p->name, err);
    if (st == GIR_OK)
        st = write_attr(w, *d, "index", w->i64_t, &idx, p->name, err);
    if (st) {
        H5Dclose(*d);
        *d = H5I_INVALID_HID;
    }
    return st;
}

static void writer_close(h5_writer *w)
{
    hid_t *ps[] = { &w->gcpl, &w->dcpl };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        if (*ps[i] >= 0)
            H5Pclose(*ps[i]);
    if (w->scalar >= 0)
        H5Sclose(w->scalar);
    if (w->bool_t >= 0)
        H5Tclose(w->bool_t);
}

static int cmp_extent(const void *a, const void *b)
{
    const gir_zip_extent *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The file was written with a user block of ub bytes: make the HDF5 file
 * that starts at ub a file on its own (superblock version 0 or 1: base
 * address 0, end-of-file address relative to it), byte for byte what HDF5
 * writes without a user block. */
static gir_status unbase_superblock(const char *path, uint64_t ub, gir_error *err)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return gir_fail(err, GIR_E_IO, "cannot reopen the HDF5 file: %s", strerror(errno));
    unsigned char sb[64];
    static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
    gir_status st = GIR_OK;
    if (gir_pread_full(fd, sb, sizeof sb, ub) != sizeof sb || memcmp(sb, sig, 8) != 0) {
        st = gir_fail(err, GIR_E_INTERNAL, "no HDF5 superblock after the user block");
    } else if (sb[8] > 1 || sb[13] != 8) {
        st = gir_fail(err, GIR_E_INTERNAL, "HDF5 wrote superblock version %u with %u-byte addresses", sb[8],
                      sb[13]);
    } else {
        size_t b = sb[8] == 0 ? 24 : 28; /* base, free space, end of file, driver info */
        uint64_t base = gir_le64(sb + b), fs = gir_le64(sb + b + 8), eof = gir_le64(sb + b + 16),
                 drv = gir_le64(sb + b + 24);
        if (base != ub || fs != UINT64_MAX || drv != UINT64_MAX || eof < ub)
            st = gir_fail(err, GIR_E_INTERNAL, "unexpected HDF5 superblock addresses after a user block");
        else {
            gir_put_le64(sb + b, 0);
            gir_put_le64(sb + b + 16, eof - ub);
            if (!gir_pwrite_full(fd, sb, sizeof sb, ub))
                st = gir_fail(err, GIR_E_IO, "cannot update the HDF5 superblock: %s", strerror(errno));
        }
    }
    close(fd);
    return st;
}

gir_status gir_h5_write(const char *path, const gir_h5_param *params, size_t n,
                        gir_status (*get_data)(void *ctx, size_t i, const void **data, gir_error *err),
                        void (*put_data)(void *ctx, size_t i), void *ctx, gir_error *err)
{
    return gir_h5_write_inplace(path, 0, params, n, get_data, put_data, ctx, NULL, NULL, err);
}

gir_status gir_h5_write_inplace(const char *path, uint64_t userblock, const gir_h5_param *params, size_t n,
                                gir_status (*get_data)(void *ctx, size_t i, const void **data, gir_error *err),
                                void (*put_data)(void *ctx, size_t i), void *ctx, gir_zip_extent **extents,
                                size_t *n_extents, gir_error *err)
{
    if (extents) {
        *extents = NULL;
        *n_extents = 0;
    }
    if (userblock && (userblock < 512 || (userblock & (userblock - 1)))) {
        gir_fail(err, GIR_E_ARGUMENT, "an HDF5 user block of %llu bytes is not a power of two from 512",
                 (unsigned long long)userblock);
        gir_err_file(err, path);
        return GIR_E_ARGUMENT;
    }
    gir_zip_extent *ext = NULL;
    size_t n_ext = 0;
    if (extents && n) {
        ext = calloc(n, sizeof *ext);
        if (!ext)
            return gir_nomem(err);
    }
    /* Check every parameter before touching the file. */
    for (size_t i = 0; i < n; i++) {
        const gir_h5_param *p = &params[i];
        gir_status st = check_param_name(p->name, err);
        uint64_t nb;
        if (st == GIR_OK && (p->dtype <= GIR_DT_UNKNOWN || p->dtype >= GIR_DT_COUNT_))
            st = gir_fail(err, GIR_E_DTYPE, "parameter '%s' has no known element type", p->name);
        if (st == GIR_OK)
            st = gir_tensor_size(p->dtype, &p->shape, &nb, err);
        if (st) {
            gir_err_node(err, p->name);
            gir_err_file(err, path);
            free(ext);
            return st;
        }
    }
    h5_writer w = { H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID,
                    H5T_STD_I64LE };
    gir_status st = GIR_OK;
    h5_enter();
    /* Fixed creation properties and no time stamps, so the bytes depend
     * only on the parameters. */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
    w.gcpl = H5Pcreate(H5P_GROUP_CREATE);
    w.dcpl = H5Pcreate(H5P_DATASET_CREATE);
    w.scalar = H5Screate(H5S_SCALAR);
    w.bool_t = make_bool_enum();
    if (fcpl < 0 || fapl < 0 || w.gcpl < 0 || w.dcpl < 0 || w.scalar < 0 || w.bool_t < 0 ||
        H5Pset_obj_track_times(fcpl, 0) < 0 || H5Pset_obj_track_times(w.gcpl, 0) < 0 ||
        H5Pset_obj_track_times(w.dcpl, 0) < 0 || H5Pset_layout(w.dcpl, H5D_CONTIGUOUS) < 0 ||
        H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST) < 0 ||
        (userblock && H5Pset_userblock(fcpl, (hsize_t)userblock) < 0))
        st = h5_fail(err, GIR_E_INTERNAL, "cannot set up the HDF5 creation properties");
    if (st == GIR_OK) {
        w.file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
        if (w.file < 0)
            st = h5_fail(err, GIR_E_IO, "cannot create the HDF5 file");
    }
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    for (size_t i = 0; st == GIR_OK && i < n; i++) {
        const gir_h5_param *p = &params[i];
        bool owned;
        hid_t ft = le_type(p->dtype, &owned);
        if (ft < 0) {
            st = h5_fail(err, GIR_E_INTERNAL, "cannot make the HDF5 type for %s", gir_dtype_name(p->dtype));
            break;
        }
        hid_t d;
        st = make_dataset(&w, p, ft, &d, err);
        uint64_t nb = 0;
        if (st == GIR_OK)
            st = gir_tensor_size(p->dtype, &p->shape, &nb, err);
        if (st == GIR_OK && nb > 0) {
            /* The caller's callbacks run without the HDF5 lock: they may
             * load a tensor from another HDF5 image. */
            const void *data = NULL;
            h5_leave();
            st = get_data(ctx, i, &data, err);
            h5_enter();
            if (st == GIR_OK && !data)
                st = gir_fail(err, GIR_E_INTERNAL, "no data for parameter '%s'", p->name);
            /* the CRC the zip needs is computed while HDF5 writes */
            gir_crc_job crc;
            bool crc_started = st == GIR_OK && ext;
            if (crc_started)
                gir_crc32_start(&crc, 0, data, (size_t)nb);
            if (st == GIR_OK && H5Dwrite(d, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
                st = h5_fail(err, GIR_E_IO, "cannot write dataset '%s'", p->name);
            uint32_t data_crc = crc_started ? gir_crc32_finish(&crc) : 0;
            if (st == GIR_OK && ext) {
                /* contiguous, unfiltered, file type = memory type: the
                 * bytes at the dataset's offset are exactly data */
                haddr_t off = H5Dget_offset(d);
                if (off == HADDR_UNDEF)
                    st = h5_fail(err, GIR_E_INTERNAL, "dataset '%s' has no offset", p->name);
                else
                    ext[n_ext++] = (gir_zip_extent){ (uint64_t)off, nb, data_crc };
            }
            if (put_data && data) {
                h5_leave();
                put_data(ctx, i);
                h5_enter();
            }
        }
        if (d >= 0)
            H5Dclose(d);
        if (owned)
            H5Tclose(ft);
        if (st)
            gir_err_node(err, p->name);
    }
    if (w.file >= 0 && H5Fclose(w.file) < 0 && st == GIR_OK)
        st = h5_fail(err, GIR_E_IO, "cannot finish the HDF5 file");
    writer_close(&w);
    h5_leave();
    if (st == GIR_OK && userblock)
        st = unbase_superblock(path, userblock, err);
    if (st && w.file >= 0)
        unlink(path);
    if (st) {
        gir_err_file(err, path);
        free(ext);
        return st;
    }
    if (extents) {
        qsort(ext, n_ext, sizeof *ext, cmp_extent);
        *extents = ext;
        *n_extents = n_ext;
    }
    return GIR_OK;
}
