/* HDF5 parameter files in NNabla's layout: listing and reading datasets
 * from a file image in memory, deterministic writing. */
#include "io/h5.h"

#include <hdf5.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>

#include "core/ir.h"
#include "io/zip.h"

#if H5_VERSION_GE(1, 12, 0)
#define GIR_H5L_INFO H5L_info2_t
#define gir_H5Literate H5Literate2
#define GIR_H5O_INFO H5O_info2_t
#define gir_H5Oget_info_by_name(l, n, i, lapl) H5Oget_info_by_name3((l), (n), (i), H5O_INFO_BASIC, (lapl))
#else
#define GIR_H5L_INFO H5L_info_t
#define gir_H5Literate H5Literate
#define GIR_H5O_INFO H5O_info_t
#define gir_H5Oget_info_by_name(l, n, i, lapl) H5Oget_info_by_name2((l), (n), (i), H5O_INFO_BASIC, (lapl))
#endif

#define H5_MAX_DEPTH 64
#define H5_MAX_OBJECTS 1000000

/* The system HDF5 is built without thread safety: every call goes through
 * this lock.  Callbacks into the caller run with the lock released. */
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long h5_image_serial;

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

/* ---- file images -------------------------------------------------------- */

typedef struct h5_image {
    const void *data;
    size_t len;
} h5_image;

/* The file image callbacks hand HDF5 the caller's buffer instead of copies;
 * the file is opened read-only, so HDF5 never writes to it. */
static void *img_malloc(size_t size, H5FD_file_image_op_t op, void *udata)
{
    h5_image *im = udata;
    if (size != im->len || op == H5FD_FILE_IMAGE_OP_FILE_RESIZE)
        return NULL;
    return (void *)(uintptr_t)im->data;
}

static void *img_memcpy(void *dest, const void *src, size_t size, H5FD_file_image_op_t op, void *udata)
{
    h5_image *im = udata;
    (void)op;
    if (dest == src)
        return dest;
    if (dest == im->data)
        return NULL; /* never write into the caller's image */
    return memcpy(dest, src, size);
}

static void *img_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)ptr, (void)size, (void)op, (void)udata;
    return NULL;
}

static herr_t img_free(void *ptr, H5FD_file_image_op_t op, void *udata)
{
    (void)ptr, (void)op, (void)udata;
    return 0;
}

static void *img_udata_copy(void *udata)
{
    return udata;
}

static herr_t img_udata_free(void *udata)
{
    (void)udata;
    return 0;
}

/* Opens the image read-only (lock held); im must outlive the file. */
static gir_status open_image(h5_image *im, hid_t *file, gir_error *err)
{
    *file = H5I_INVALID_HID;
    if (im->len == 0)
        return gir_fail(err, GIR_E_PARAMS, "the HDF5 file is empty");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return h5_fail(err, GIR_E_INTERNAL, "cannot create a file access property list");
    H5FD_file_image_callbacks_t cb = { img_malloc, img_memcpy, img_realloc, img_free,
                                       img_udata_copy, img_udata_free, im };
    char name[64];
    snprintf(name, sizeof name, "gir-h5-image-%lu", ++h5_image_serial);
    gir_status st = GIR_OK;
    if (H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 || H5Pset_file_image_callbacks(fapl, &cb) < 0 ||
        H5Pset_file_image(fapl, (void *)(uintptr_t)im->data, im->len) < 0)
        st = h5_fail(err, GIR_E_INTERNAL, "cannot set up the HDF5 file image");
    if (st == GIR_OK) {
        *file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
        if (*file < 0)
            st = h5_fail(err, GIR_E_PARAMS, "not a readable HDF5 file");
    }
    H5Pclose(fapl);
    return st;
}

/* Every component of path (relative to the root) must be a hard link: soft
 * and external links are never followed (an external link could name any
 * file on disk). */
static gir_status check_hard_path(hid_t file, const char *path, gir_status missing, gir_error *err)
{
    char *p = gir_strdupf("%s", path);
    if (!p)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    char *slash = p;
    for (;;) {
        slash = strchr(slash, '/');
        if (slash)
            *slash = '\0';
        GIR_H5L_INFO li;
        if (H5Lget_info(file, p, &li, H5P_DEFAULT) < 0) {
            st = h5_fail(err, missing, "cannot open dataset '%s'", path);
            break;
        }
        if (li.type != H5L_TYPE_HARD) {
            H5Eclear2(H5E_DEFAULT);
            st = gir_fail(err, GIR_E_UNSUPPORTED, "'/%s' is a soft or external link, which is not supported", p);
            break;
        }
        if (!slash)
            break;
        *slash++ = '/';
    }
    free(p);
    return st;
}

/* ---- types --------------------------------------------------------------- */

static gir_dtype map_type(hid_t t)
{
    size_t sz = H5Tget_size(t);
    switch (H5Tget_class(t)) {
    case H5T_INTEGER: {
        bool sgn = H5Tget_sign(t) == H5T_SGN_2;
        switch (sz) {
        case 1: return sgn ? GIR_DT_I8 : GIR_DT_U8;
        case 2: return sgn ? GIR_DT_I16 : GIR_DT_U16;
        case 4: return sgn ? GIR_DT_I32 : GIR_DT_U32;
        case 8: return sgn ? GIR_DT_I64 : GIR_DT_U64;
        default: return GIR_DT_UNKNOWN;
        }
    }
    case H5T_FLOAT: {
        size_t spos, epos, esize, mpos, msize;
        if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0)
            return GIR_DT_UNKNOWN;
        if (sz == 4 && esize == 8 && msize == 23)
            return GIR_DT_F32;
        if (sz == 8 && esize == 11 && msize == 52)
            return GIR_DT_F64;
        if (sz == 2 && esize == 5 && msize == 10)
            return GIR_DT_F16;
        if (sz == 2 && esize == 8 && msize == 7)
            return GIR_DT_BF16;
        return GIR_DT_UNKNOWN;
    }
    case H5T_ENUM: {
        /* h5py's bool: an enum over a one-byte integer with values 0 and 1. */
        if (sz != 1 || H5Tget_nmembers(t) != 2)
            return GIR_DT_UNKNOWN;
        unsigned char v0 = 9, v1 = 9;
        if (H5Tget_member_value(t, 0, &v0) < 0 || H5Tget_member_value(t, 1, &v1) < 0)
            return GIR_DT_UNKNOWN;
        return v0 + v1 == 1 && v0 * v1 == 0 ? GIR_DT_BOOL : GIR_DT_UNKNOWN;
    }
    default:
        return GIR_DT_UNKNOWN;
    }
}

static const char *class_name(hid_t t)
{
    switch (H5Tget_class(t)) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_TIME: return "time";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown";
    }
}

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

/* ---- reading ------------------------------------------------------------ */

/* Reads an integer (or integer-based enum) scalar attribute. */
static gir_status read_int_attr(hid_t obj, const char *dset, const char *attr, bool *present, int64_t *v,
                                gir_error *err)
{
    *present = false;
    htri_t ex = H5Aexists(obj, attr);
    if (ex < 0)
        return h5_fail(err, GIR_E_PARAMS, "dataset '%s': cannot look up attribute %s", dset, attr);
    if (ex == 0)
        return GIR_OK;
    hid_t a = H5Aopen(obj, attr, H5P_DEFAULT);
    if (a < 0)
        return h5_fail(err, GIR_E_PARAMS, "dataset '%s': cannot open attribute %s", dset, attr);
    gir_status st = GIR_OK;
    hid_t sp = H5Aget_space(a), t = H5Aget_type(a), base = H5I_INVALID_HID;
    if (sp < 0 || t < 0) {
        st = h5_fail(err, GIR_E_PARAMS, "dataset '%s': cannot read attribute %s", dset, attr);
        goto out;
    }
    if (H5Sget_simple_extent_npoints(sp) != 1) {
        st = gir_fail(err, GIR_E_PARAMS, "dataset '%s': attribute %s holds %lld values, expected one", dset, attr,
                      (long long)H5Sget_simple_extent_npoints(sp));
        goto out;
    }
    H5T_class_t cls = H5Tget_class(t);
    base = cls == H5T_ENUM ? H5Tget_super(t) : H5Tcopy(t);
    if (base < 0 || H5Tget_class(base) != H5T_INTEGER || H5Tget_size(base) > 8) {
        H5Eclear2(H5E_DEFAULT);
        st = gir_fail(err, GIR_E_PARAMS, "dataset '%s': attribute %s is %s, expected an integer", dset, attr,
                      class_name(t));
        goto out;
    }
    /* Read the stored bytes as they are, then convert the integer. */
    unsigned char buf[16] = { 0 };
    if (H5Aread(a, t, buf) < 0 || H5Tconvert(base, H5T_NATIVE_INT64, 1, buf, NULL, H5P_DEFAULT) < 0) {
        st = h5_fail(err, GIR_E_PARAMS, "dataset '%s': cannot read attribute %s", dset, attr);
        goto out;
    }
    memcpy(v, buf, sizeof *v);
    *present = true;
out:
    if (base >= 0)
        H5Tclose(base);
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    H5Aclose(a);
    return st;
}

/* Type, shape and storage of an open dataset. */
static gir_status describe_dataset(hid_t d, const char *name, gir_dtype *dtype, gir_shape *shape, gir_error *err)
{
    gir_status st = GIR_OK;
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    if (t < 0 || sp < 0 || dcpl < 0) {
        st = h5_fail(err, GIR_E_PARAMS, "dataset '%s': cannot read its type, space or properties", name);
        goto out;
    }
    *dtype = map_type(t);
    if (*dtype == GIR_DT_UNKNOWN) {
        H5Eclear2(H5E_DEFAULT);
        st = gir_fail(err, GIR_E_DTYPE, "dataset '%s' has %zu-byte %s elements, which are not supported", name,
                      H5Tget_size(t), class_name(t));
        goto out;
    }
    H5D_layout_t lay = H5Pget_layout(dcpl);
    int next = H5Pget_external_count(dcpl);
    if (lay == H5D_VIRTUAL || next != 0) {
        st = gir_fail(err, GIR_E_UNSUPPORTED, "dataset '%s' keeps its data in other files", name);
        goto out;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(sp);
    if (sc == H5S_SCALAR) {
        shape->rank = 0;
    } else if (sc == H5S_SIMPLE) {
        int nd = H5Sget_simple_extent_ndims(sp);
        if (nd < 0 || nd > GIR_MAX_RANK) {
            st = gir_fail(err, GIR_E_LIMIT, "dataset '%s' has rank %d, more than the %d supported", name, nd,
                          GIR_MAX_RANK);
            goto out;
        }
        hsize_t dims[GIR_MAX_RANK];
        if (H5Sget_simple_extent_dims(sp, dims, NULL) != nd) {
            st = h5_fail(err, GIR_E_PARAMS, "dataset '%s': cannot read its dimensions", name);
            goto out;
        }
        shape->rank = nd;
        for (int i = 0; i < nd; i++) {
            if (dims[i] > (hsize_t)INT64_MAX) {
                st = gir_fail(err, GIR_E_LIMIT, "dataset '%s': dimension %d is too large", name, i);
                goto out;
            }
            shape->dims[i] = (int64_t)dims[i];
        }
    } else {
        st = gir_fail(err, GIR_E_PARAMS, "dataset '%s' has no dataspace (a null dataspace)", name);
        goto out;
    }
    uint64_t nbytes;
    st = gir_tensor_size(*dtype, shape, &nbytes, err);
    if (st)
        gir_err_node(err, name);
out:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    return st;
}

typedef struct child {
    char *name;
    bool hard;
} child;

typedef struct child_list {
    child *items;
    size_t n, cap;
    bool nomem;
} child_list;

static herr_t collect_link(hid_t g, const char *name, const GIR_H5L_INFO *info, void *data)
{
    (void)g;
    child_list *l = data;
    if (!GIR_GROW(l->items, l->cap, l->n + 1)) {
        l->nomem = true;
        return -1;
    }
    l->items[l->n].name = gir_strdupf("%s", name);
    if (!l->items[l->n].name) {
        l->nomem = true;
        return -1;
    }
    l->items[l->n].hard = info->type == H5L_TYPE_HARD;
    l->n++;
    return 0;
}

static void children_free(child_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].name);
    free(l->items);
    memset(l, 0, sizeof *l);
}

typedef struct pending {
    char *path; /* "" for the root, else "a/b" */
    int depth;
} pending;

typedef struct param_list {
    gir_h5_param *items;
    size_t n, cap;
} param_list;

static int cmp_param(const void *a, const void *b)
{
    const gir_h5_param *x = a, *y = b;
    if (x->has_index != y->has_index)
        return x->has_index ? -1 : 1;
    if (x->has_index && x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return strcmp(x->name, y->name);
}

static gir_status add_dataset(hid_t file, const char *path, param_list *out, gir_error *err)
{
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    if (d < 0)
        return h5_fail(err, GIR_E_PARAMS, "cannot open dataset '%s'", path);
    gir_h5_param p = { 0 };
    p.index = -1;
    gir_status st = describe_dataset(d, path, &p.dtype, &p.shape, err);
    bool ng_present = false;
    int64_t ng = 0;
    if (st == GIR_OK)
        st = read_int_attr(d, path, "need_grad", &ng_present, &ng, err);
    if (st == GIR_OK)
        st = read_int_attr(d, path, "index", &p.has_index, &p.index, err);
    H5Dclose(d);
    if (st)
        return st;
    p.need_grad = ng_present && ng != 0;
    if (!p.has_index)
        p.index = -1;
    if (!GIR_GROW(out->items, out->cap, out->n + 1) || !(p.name = gir_strdupf("%s", path)))
        return gir_nomem(err);
    out->items[out->n++] = p;
    return GIR_OK;
}

static gir_status walk_file(hid_t file, param_list *out, gir_error *err)
{
    gir_status st = GIR_OK;
    pending *stack = NULL;
    size_t sn = 0, scap = 0;
    size_t objects = 0;
    if (!GIR_GROW(stack, scap, 1) || !(stack[0].path = gir_strdupf("%s", ""))) {
        st = gir_nomem(err);
        goto out;
    }
    stack[0].depth = 0;
    sn = 1;
    while (st == GIR_OK && sn > 0) {
        pending cur = stack[--sn];
        hid_t g = H5Gopen2(file, cur.path[0] ? cur.path : "/", H5P_DEFAULT);
        child_list kids = { 0 };
        if (g < 0) {
            st = h5_fail(err, GIR_E_PARAMS, "cannot open group '/%s'", cur.path);
        } else {
            hsize_t idx = 0;
            if (gir_H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_link, &kids) < 0)
                st = kids.nomem ? gir_nomem(err) : h5_fail(err, GIR_E_PARAMS, "cannot list group '/%s'", cur.path);
            H5Gclose(g);
        }
        for (size_t k = 0; st == GIR_OK && k < kids.n; k++) {
            char *path = cur.path[0] ? gir_strdupf("%s/%s", cur.path, kids.items[k].name)
                                     : gir_strdupf("%s", kids.items[k].name);
            if (!path) {
                st = gir_nomem(err);
                break;
            }
            if (++objects > H5_MAX_OBJECTS) {
                st = gir_fail(err, GIR_E_LIMIT, "the file has more than %d objects", H5_MAX_OBJECTS);
            } else if (!kids.items[k].hard) {
                st = gir_fail(err, GIR_E_UNSUPPORTED, "'/%s' is a soft or external link, which is not supported",
                              path);
            } else {
                GIR_H5O_INFO oi;
                if (gir_H5Oget_info_by_name(file, path, &oi, H5P_DEFAULT) < 0) {
                    st = h5_fail(err, GIR_E_PARAMS, "cannot inspect '/%s'", path);
                } else if (oi.type == H5O_TYPE_GROUP) {
                    if (cur.depth + 1 > H5_MAX_DEPTH) {
                        st = gir_fail(err, GIR_E_LIMIT, "group '/%s' is nested deeper than %d levels", path,
                                      H5_MAX_DEPTH);
                    } else if (!GIR_GROW(stack, scap, sn + 1)) {
                        st = gir_nomem(err);
                    } else {
                        stack[sn++] = (pending){ path, cur.depth + 1 };
                        path = NULL;
                    }
                } else if (oi.type == H5O_TYPE_DATASET) {
                    st = add_dataset(file, path, out, err);
                }
                /* named datatypes are not parameters: ignored */
            }
            free(path);
        }
        children_free(&kids);
        free(cur.path);
    }
out:
    for (size_t i = 0; i < sn; i++)
        free(stack[i].path);
    free(stack);
    return st;
}

void gir_h5_params_free(gir_h5_param *params, size_t n)
{
    for (size_t i = 0; params && i < n; i++)
        free(params[i].name);
    free(params);
}

static gir_status list_locked(hid_t file, gir_h5_param **params, size_t *n, gir_error *err)
{
    param_list l = { 0 };
    gir_status st = walk_file(file, &l, err);
    if (st) {
        gir_h5_params_free(l.items, l.n);
        return st;
    }
    if (l.n > 1)
        qsort(l.items, l.n, sizeof *l.items, cmp_param);
    *params = l.items;
    *n = l.n;
    return GIR_OK;
}

static gir_status read_locked(hid_t file, const char *name, void *dst, uint64_t nbytes, gir_dtype dtype,
                              gir_error *err)
{
    while (name[0] == '/')
        name++;
    if (!name[0])
        return gir_fail(err, GIR_E_ARGUMENT, "empty dataset name");
    if (gir_dtype_size(dtype) == 0)
        return gir_fail(err, GIR_E_ARGUMENT, "dataset '%s': no element type to read as", name);
    gir_status st = check_hard_path(file, name, GIR_E_REFERENCE, err);
    if (st)
        return st;
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0)
        return h5_fail(err, GIR_E_REFERENCE, "cannot open dataset '%s'", name);
    gir_dtype have;
    gir_shape shape;
    st = describe_dataset(d, name, &have, &shape, err);
    uint64_t want = 0;
    if (st == GIR_OK)
        st = gir_tensor_size(dtype, &shape, &want, err);
    if (st == GIR_OK && want != nbytes) {
        char sh[128];
        gir_shape_str(&shape, sh, sizeof sh);
        st = gir_fail(err, GIR_E_SHAPE, "dataset '%s' of shape %s holds %llu bytes as %s, not %llu", name, sh,
                      (unsigned long long)want, gir_dtype_name(dtype), (unsigned long long)nbytes);
    }
    if (st == GIR_OK && (have == GIR_DT_BOOL) != (dtype == GIR_DT_BOOL))
        st = gir_fail(err, GIR_E_DTYPE, "dataset '%s' holds %s, which cannot be read as %s", name,
                      gir_dtype_name(have), gir_dtype_name(dtype));
    if (st == GIR_OK && want > 0) {
        bool owned;
        hid_t mt = le_type(dtype, &owned);
        if (mt < 0) {
            st = h5_fail(err, GIR_E_INTERNAL, "cannot make the memory type for %s", gir_dtype_name(dtype));
        } else {
            if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, dst) < 0)
                st = h5_fail(err, GIR_E_PARAMS, "cannot read dataset '%s' as %s", name, gir_dtype_name(dtype));
            if (owned)
                H5Tclose(mt);
        }
        if (st == GIR_OK && dtype == GIR_DT_BOOL) {
            unsigned char *b = dst;
            for (uint64_t i = 0; i < want; i++)
                b[i] = b[i] != 0;
        }
    }
    H5Dclose(d);
    if (st)
        gir_err_node(err, name);
    return st;
}

/* ---- public reading API ------------------------------------------------- */

struct gir_h5 {
    atomic_int refs;
    h5_image img;
    hid_t file;
};

gir_status gir_h5_open(const void *image, size_t len, gir_h5 **out, gir_error *err)
{
    *out = NULL;
    gir_h5 *h = calloc(1, sizeof *h);
    if (!h)
        return gir_nomem(err);
    atomic_init(&h->refs, 1);
    h->img = (h5_image){ image, len };
    h5_enter();
    gir_status st = open_image(&h->img, &h->file, err);
    h5_leave();
    if (st) {
        free(h);
        return st;
    }
    *out = h;
    return GIR_OK;
}

gir_h5 *gir_h5_ref(gir_h5 *h)
{
    if (h)
        atomic_fetch_add(&h->refs, 1);
    return h;
}

void gir_h5_close(gir_h5 *h)
{
    if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
        return;
    h5_enter();
    H5Fclose(h->file);
    h5_leave();
    free(h);
}

gir_status gir_h5_list_open(gir_h5 *h, gir_h5_param **params, size_t *n, gir_error *err)
{
    *params = NULL;
    *n = 0;
    h5_enter();
    gir_status st = list_locked(h->file, params, n, err);
    h5_leave();
    return st;
}

gir_status gir_h5_read_open(gir_h5 *h, const char *name, void *dst, uint64_t nbytes, gir_dtype dtype,
                            gir_error *err)
{
    h5_enter();
    gir_status st = read_locked(h->file, name, dst, nbytes, dtype, err);
    h5_leave();
    return st;
}

static gir_status extent_locked(gir_h5 *h, const char *name, gir_dtype dtype, uint64_t *offset, uint64_t *nbytes,
                                bool *found, gir_error *err)
{
    while (name[0] == '/')
        name++;
    gir_status st = check_hard_path(h->file, name, GIR_E_REFERENCE, err);
    if (st)
        return st;
    hid_t d = H5Dopen2(h->file, name, H5P_DEFAULT);
    if (d < 0)
        return h5_fail(err, GIR_E_REFERENCE, "cannot open dataset '%s'", name);
    hid_t fcpl = H5Fget_create_plist(h->file);
    hid_t dcpl = H5Dget_create_plist(d);
    hid_t ft = H5Dget_type(d);
    bool owned = false;
    hid_t mt = dtype == GIR_DT_BOOL ? H5I_INVALID_HID : le_type(dtype, &owned);
    hsize_t ub = 1;
    if (fcpl >= 0 && dcpl >= 0 && ft >= 0 && mt >= 0 && H5Pget_userblock(fcpl, &ub) >= 0 && ub == 0 &&
        H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_nfilters(dcpl) == 0 && H5Tequal(ft, mt) > 0) {
        haddr_t off = H5Dget_offset(d);
        hsize_t size = H5Dget_storage_size(d);
        if (off != HADDR_UNDEF && off <= h->img.len && size <= h->img.len - off) {
            *offset = (uint64_t)off;
            *nbytes = (uint64_t)size;
            *found = true;
        }
    }
    if (owned)
        H5Tclose(mt);
    if (ft >= 0)
        H5Tclose(ft);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    H5Dclose(d);
    H5Eclear2(H5E_DEFAULT);
    return GIR_OK;
}

gir_status gir_h5_raw_extent_open(gir_h5 *h, const char *name, gir_dtype dtype, uint64_t *offset, uint64_t *nbytes,
                                  bool *found, gir_error *err)
{
    *found = false;
    *offset = 0;
    *nbytes = 0;
    h5_enter();
    gir_status st = extent_locked(h, name, dtype, offset, nbytes, found, err);
    h5_leave();
    return st;
}

gir_status gir_h5_list(const void *image, size_t len, gir_h5_param **params, size_t *n, gir_error *err)
{
    *params = NULL;
    *n = 0;
    gir_h5 *h;
    gir_status st = gir_h5_open(image, len, &h, err);
    if (st)
        return st;
    st = gir_h5_list_open(h, params, n, err);
    gir_h5_close(h);
    return st;
}

gir_status gir_h5_read(const void *image, size_t len, const char *name, void *dst, uint64_t nbytes,
                       gir_dtype dtype, gir_error *err)
{
    gir_h5 *h;
    gir_status st = gir_h5_open(image, len, &h, err);
    if (st)
        return st;
    st = gir_h5_read_open(h, name, dst, nbytes, dtype, err);
    gir_h5_close(h);
    return st;
}

/* ---- writing ------------------------------------------------------------ */

static gir_status check_param_name(const char *name, gir_error *err)
{
    if (!name || !name[0])
        return gir_fail(err, GIR_E_ARGUMENT, "a parameter has an empty name");
    const char *c = name;
    for (;;) {
        const char *e = strchr(c, '/');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return gir_fail(err, GIR_E_ARGUMENT,
                            "parameter name '%s' has an empty, '.' or '..' component", name);
        if (!e)
            break;
        c = e + 1;
    }
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
