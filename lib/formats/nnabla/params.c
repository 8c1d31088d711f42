/* NNabla parameter files: parameter.protobuf (a binary NNablaProtoBuf with
 * only `parameter` entries) and parameter.h5 (lib/io/h5), read lazily and
 * written one tensor at a time. */
#include "nnabla.h"

#include "io/h5.h"
#include "io/pbwire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a shared image ------------------------------------------------------ */

/* The bytes of one parameter member, shared by the tensors loading from it:
 * a malloc'd copy, or (a member stored uncompressed in the archive) a
 * read-only mapping of the archive file, whose large datasets are read with
 * pread so that only the tensor being loaded occupies memory. */
typedef struct nnb_blob {
    atomic_int refs;
    unsigned char *data;
    size_t len;
    void *map;         /* the mapping (data lies inside it), or NULL: data is malloc'd */
    size_t map_len;
    int fd;            /* the archive, or -1 */
    uint64_t file_off; /* offset of data[0] in the archive */
    gir_h5 *h5;
} nnb_blob;

static nnb_blob *blob_new(void *data, size_t len)
{
    nnb_blob *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    atomic_init(&b->refs, 1);
    b->data = data;
    b->len = len;
    b->fd = -1;
    return b;
}

static nnb_blob *blob_ref(nnb_blob *b)
{
    atomic_fetch_add(&b->refs, 1);
    return b;
}

static void blob_unref(nnb_blob *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    if (b->h5)
        gir_h5_close(b->h5);
    if (b->map)
        munmap(b->map, b->map_len);
    else
        free(b->data);
    if (b->fd >= 0)
        close(b->fd);
    free(b);
}

/* Gives back the pages of a mapping that reading touched. */
static void blob_drop_pages(const nnb_blob *b)
{
    if (b->map)
        (void)madvise(b->map, b->map_len, MADV_DONTNEED);
}

/* Reads n bytes at offset off of the image from the archive itself. */
static gir_status blob_pread(const nnb_blob *b, uint64_t off, void *dst, size_t n, gir_error *err)
{
    if (gir_pread_full(b->fd, dst, n, b->file_off + off) < n)
        return gir_fail(err, GIR_E_IO, "cannot read parameter data from the archive: %s",
                        errno ? strerror(errno) : "unexpected end of file");
    return GIR_OK;
}

static bool host_is_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* ---- the list ------------------------------------------------------------- */

void nnb_params_free(nnb_params *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].name);
        gir_tensor_unref(p->items[i].tensor);
    }
    free(p->items);
    memset(p, 0, sizeof *p);
}

ptrdiff_t nnb_params_find(const nnb_params *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->items[i].name, name) == 0)
            return (ptrdiff_t)i;
    return -1;
}

/* Takes ownership of name and tensor. */
static gir_status params_put(nnb_params *p, char *name, gir_dtype dt, const gir_shape *shape, bool need_grad,
                             gir_tensor *t, gir_error *err)
{
    ptrdiff_t at = nnb_params_find(p, name);
    if (at >= 0) {
        nnb_param *q = &p->items[at];
        free(name);
        gir_tensor_unref(q->tensor);
        q->dtype = dt;
        q->shape = *shape;
        q->need_grad = need_grad;
        q->tensor = t;
        return GIR_OK;
    }
    if (!GIR_GROW(p->items, p->cap, p->n + 1)) {
        free(name);
        gir_tensor_unref(t);
        return gir_nomem(err);
    }
    p->items[p->n++] = (nnb_param){ name, dt, *shape, need_grad, t };
    return GIR_OK;
}

/* ---- parameter.protobuf --------------------------------------------------- */

/* Skips a field of wire type wt; false when malformed. */
static bool skip_field(const unsigned char **p, const unsigned char *end, unsigned wt)
{
    uint64_t v;
    switch (wt) {
    case 0:
        return gir_pb_get_varint(p, end, &v);
    case 1:
        if (end - *p < 8)
            return false;
        *p += 8;
        return true;
    case 2:
        if (!gir_pb_get_varint(p, end, &v) || v > (uint64_t)(end - *p))
            return false;
        *p += v;
        return true;
    case 5:
        if (end - *p < 4)
            return false;
        *p += 4;
        return true;
    default:
        return false;
    }
}

typedef struct pb_param {
    const unsigned char *name;
    size_t name_len;
    gir_shape shape;
    bool has_shape;
    uint64_t count; /* float values */
    bool need_grad;
    const unsigned char *seg; /* the first packed data segment */
    size_t n_seg;             /* data fields (packed or not) */
} pb_param;

/* Parses one Parameter message; when dst is given, copies its floats. */
static gir_status scan_parameter(const nnb_blob *b, const unsigned char *p, const unsigned char *end, pb_param *out,
                                 float *dst, uint64_t dst_count, gir_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t copied = 0;
    bool le = host_is_le();
    while (p < end) {
        uint64_t key;
        if (!gir_pb_get_varint(&p, end, &key))
            return gir_fail(err, GIR_E_PARAMS, "malformed Parameter message: truncated field key");
        uint64_t field = key >> 3;
        unsigned wt = (unsigned)(key & 7);
        if (field == 1 && wt == 2) {
            uint64_t n;
            if (!gir_pb_get_varint(&p, end, &n) || n > (uint64_t)(end - p))
                return gir_fail(err, GIR_E_PARAMS, "malformed Parameter message: truncated variable_name");
            out->name = p;
            out->name_len = (size_t)n;
            p += n;
        } else if (field == 20 && wt == 2) {
            uint64_t n;
            if (!gir_pb_get_varint(&p, end, &n) || n > (uint64_t)(end - p))
                return gir_fail(err, GIR_E_PARAMS, "malformed Parameter message: truncated shape");
            const unsigned char *q = p, *qe = p + n;
            p += n;
            out->has_shape = true;
            out->shape.rank = 0;
            while (q < qe) {
                uint64_t k2;
                if (!gir_pb_get_varint(&q, qe, &k2))
                    return gir_fail(err, GIR_E_PARAMS, "malformed Shape message");
                if ((k2 >> 3) != 1) {
                    if (!skip_field(&q, qe, (unsigned)(k2 & 7)))
                        return gir_fail(err, GIR_E_PARAMS, "malformed Shape message");
                    continue;
                }
                const unsigned char *de;
                if ((k2 & 7) == 2) {
                    uint64_t m;
                    if (!gir_pb_get_varint(&q, qe, &m) || m > (uint64_t)(qe - q))
                        return gir_fail(err, GIR_E_PARAMS, "malformed Shape message");
                    de = q + m;
                } else if ((k2 & 7) == 0) {
                    de = NULL; /* one unpacked value */
                } else {
                    return gir_fail(err, GIR_E_PARAMS, "malformed Shape message: dim has wire type %u",
                                    (unsigned)(k2 & 7));
                }
                while (de ? q < de : true) {
                    uint64_t d;
                    if (!gir_pb_get_varint(&q, de ? de : qe, &d))
                        return gir_fail(err, GIR_E_PARAMS, "malformed Shape message");
                    if (out->shape.rank >= GIR_MAX_RANK)
                        return gir_fail(err, GIR_E_LIMIT, "parameter has more than %d dimensions", GIR_MAX_RANK);
                    if ((int64_t)d < 0)
                        return gir_fail(err, GIR_E_PARAMS, "parameter has a negative dimension %lld",
                                        (long long)(int64_t)d);
                    out->shape.dims[out->shape.rank++] = (int64_t)d;
                    if (!de)
                        break;
                }
            }
        } else if (field == 100 && (wt == 2 || wt == 5)) {
            const unsigned char *ds;
            uint64_t n;
            if (wt == 2) {
                if (!gir_pb_get_varint(&p, end, &n) || n > (uint64_t)(end - p) || n % 4)
                    return gir_fail(err, GIR_E_PARAMS, "malformed Parameter message: truncated data");
                ds = p;
                p += n;
                n /= 4;
            } else {
                if (end - p < 4)
                    return gir_fail(err, GIR_E_PARAMS, "malformed Parameter message: truncated data");
                ds = p;
                p += 4;
                n = 1;
            }
            if (!out->n_seg++)
                out->seg = wt == 2 ? ds : NULL;
            if (dst) {
                if (n > dst_count - copied)
                    return gir_fail(err, GIR_E_PARAMS, "parameter data changed while reading");
                if (b && b->fd >= 0) {
                    gir_status st = blob_pread(b, (uint64_t)(ds - b->data), dst + copied, (size_t)n * 4, err);
                    if (st)
                        return st;
                    if (!le)
                        for (uint64_t i = 0; i < n; i++) {
                            uint32_t u;
                            memcpy(&u, dst + copied + i, 4);
                            u = gir_le32((const unsigned char *)&u);
                            memcpy(dst + copied + i, &u, 4);
                        }
                } else if (le) {
                    memcpy(dst + copied, ds, (size_t)n * 4);
                } else {
                    for (uint64_t i = 0; i < n; i++) {
                        uint32_t u = gir_le32(ds + 4 * i);
                        memcpy(dst + copied + i, &u, 4);
                    }
                }
                copied += n;
            }
            out->count += n;
        } else if (field == 101 && wt == 0) {
            uint64_t v;
            if (!gir_pb_get_varint(&p, end, &v))
                return gir_fail(err, GIR_E_PARAMS, "malformed Parameter message: truncated need_grad");
            out->need_grad = v != 0;
        } else if (!skip_field(&p, end, wt)) {
            return gir_fail(err, GIR_E_PARAMS, "malformed Parameter message: field %llu of wire type %u",
                            (unsigned long long)field, wt);
        }
    }
    if (dst && copied != dst_count)
        return gir_fail(err, GIR_E_PARAMS, "parameter data changed while reading");
    return GIR_OK;
}

/* ---- transposed views (Affine weights, in x out, seen as out x in) ------ */

/* A view's geometry: the file holds rows x cols elements of esz bytes. */
typedef struct tview {
    bool on;
    uint64_t rows, cols;
    size_t esz;
} tview;

/* Writes the transpose of nb rows (starting at row r0) of src into dst. */
static void transpose_rows(unsigned char *dst, const unsigned char *src, uint64_t r0, uint64_t nb, const tview *v)
{
    if (v->esz == 4) {
        /* 64 x 64 tiles: the source tile stays in L1 while each output
         * row of the tile is written in one run */
        uint32_t *d = (uint32_t *)(void *)dst;
        const uint32_t *sv = (const uint32_t *)(const void *)src;
        for (uint64_t rr = 0; rr < nb; rr += 64) {
            uint64_t rh = nb - rr < 64 ? nb - rr : 64;
            for (uint64_t c0 = 0; c0 < v->cols; c0 += 64) {
                uint64_t cw = v->cols - c0 < 64 ? v->cols - c0 : 64;
                for (uint64_t c = c0; c < c0 + cw; c++) {
                    uint32_t *out = d + c * v->rows + r0 + rr;
                    const uint32_t *in = sv + rr * v->cols + c;
                    for (uint64_t r = 0; r < rh; r++)
                        out[r] = in[r * v->cols];
                }
            }
        }
        return;
    }
    for (uint64_t c = 0; c < v->cols; c++)
        for (uint64_t r = 0; r < nb; r++)
            memcpy(dst + (c * v->rows + r0 + r) * v->esz, src + (r * v->cols + c) * v->esz, v->esz);
}

/* Reads the matrix at image offset off, transposed, a block of rows at a
 * time (from the archive with pread, or copied from the image in memory,
 * which keeps the rows aligned). */
static gir_status read_transposed(const nnb_blob *b, uint64_t off, const tview *v, void *dst, gir_error *err)
{
    uint64_t row_bytes = v->cols * v->esz;
    if (!v->rows || !row_bytes)
        return GIR_OK;
    uint64_t block = ((uint64_t)1 << 20) / row_bytes;
    if (block < 1)
        block = 1;
    if (block > v->rows)
        block = v->rows;
    unsigned char *buf = malloc((size_t)(block * row_bytes));
    if (!buf)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    for (uint64_t r0 = 0; r0 < v->rows && !st; r0 += block) {
        uint64_t nb = v->rows - r0 < block ? v->rows - r0 : block;
        if (b->fd >= 0)
            st = blob_pread(b, off + r0 * row_bytes, buf, (size_t)(nb * row_bytes), err);
        else /* an aligned copy of the rows */
            memcpy(buf, b->data + off + r0 * row_bytes, (size_t)(nb * row_bytes));
        if (!st)
            transpose_rows(dst, buf, r0, nb, v);
    }
    free(buf);
    return st;
}

/* Loads through load_plain into a scratch buffer, then transposes. */
static gir_status load_then_transpose(gir_status (*load_plain)(void *, void *, uint64_t, gir_error *), void *ctx,
                                      const tview *v, void *dst, uint64_t nbytes, gir_error *err)
{
    unsigned char *tmp = malloc(nbytes ? (size_t)nbytes : 1);
    if (!tmp)
        return gir_nomem(err);
    gir_status st = load_plain(ctx, tmp, nbytes, err);
    if (!st)
        transpose_rows(dst, tmp, 0, v->rows, v);
    free(tmp);
    return st;
}

typedef struct pb_ctx {
    nnb_blob *blob;
    size_t start, len; /* the Parameter message */
    tview view;
} pb_ctx;

static gir_status pb_load_plain(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    pb_ctx *c = ctx;
    pb_param pp;
    gir_status st = scan_parameter(c->blob, c->blob->data + c->start, c->blob->data + c->start + c->len, &pp, dst,
                                   nbytes / 4, err);
    blob_drop_pages(c->blob);
    return st;
}

static gir_status pb_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    pb_ctx *c = ctx;
    if (!c->view.on)
        return pb_load_plain(ctx, dst, nbytes, err);
    pb_param pp;
    gir_status st = scan_parameter(c->blob, c->blob->data + c->start, c->blob->data + c->start + c->len, &pp, NULL,
                                   0, err);
    if (st)
        return st;
    if (pp.n_seg == 1 && pp.seg && pp.count * 4 == nbytes && host_is_le()) {
        st = read_transposed(c->blob, (uint64_t)(pp.seg - c->blob->data), &c->view, dst, err);
        blob_drop_pages(c->blob);
        return st;
    }
    return load_then_transpose(pb_load_plain, ctx, &c->view, dst, nbytes, err);
}

static void pb_release(void *ctx)
{
    pb_ctx *c = ctx;
    blob_unref(c->blob);
    free(c);
}

static const gir_loader pb_loader = { pb_load, pb_release };

static gir_status add_protobuf_blob(nnb_params *p, nnb_blob *b, gir_error *err)
{
    size_t len = b->len;
    const unsigned char *s = b->data, *q = s, *end = s + len;
    gir_status st = GIR_OK;
    size_t count = 0;
    while (q < end && !st) {
        size_t at = (size_t)(q - s);
        uint64_t key;
        if (!gir_pb_get_varint(&q, end, &key)) {
            st = gir_fail(err, GIR_E_PARAMS, "malformed parameter.protobuf: truncated field key");
            gir_err_loc(err, "byte %zu", at);
            break;
        }
        unsigned wt = (unsigned)(key & 7);
        if ((key >> 3) != 200 || wt != 2) {
            /* networks and the rest of an NNablaProtoBuf: ignored here */
            if (!skip_field(&q, end, wt)) {
                st = gir_fail(err, GIR_E_PARAMS, "malformed parameter.protobuf: field %llu of wire type %u",
                              (unsigned long long)(key >> 3), wt);
                gir_err_loc(err, "byte %zu", at);
            }
            continue;
        }
        uint64_t n;
        if (!gir_pb_get_varint(&q, end, &n) || n > (uint64_t)(end - q)) {
            st = gir_fail(err, GIR_E_PARAMS, "malformed parameter.protobuf: parameter %zu is truncated", count);
            gir_err_loc(err, "byte %zu", at);
            break;
        }
        const unsigned char *ms = q;
        q += n;
        pb_param pp;
        st = scan_parameter(b, ms, ms + n, &pp, NULL, 0, err);
        if (st) {
            gir_err_loc(err, "byte %zu", at);
            break;
        }
        char *name = malloc(pp.name_len + 1);
        if (!name) {
            st = gir_nomem(err);
            break;
        }
        if (pp.name_len)
            memcpy(name, pp.name, pp.name_len);
        name[pp.name_len] = '\0';
        if (!pp.name_len || strlen(name) != pp.name_len) {
            st = gir_fail(err, GIR_E_PARAMS, "parameter %zu has an empty name or one with a NUL byte", count);
            gir_err_loc(err, "byte %zu", at);
            free(name);
            break;
        }
        gir_shape shape = pp.shape;
        if (!pp.has_shape) {
            shape.rank = 1;
            shape.dims[0] = (int64_t)pp.count;
        }
        int64_t numel = gir_shape_numel(&shape);
        if (numel < 0 || (uint64_t)numel != pp.count) {
            char sh[128];
            gir_shape_str(&shape, sh, sizeof sh);
            st = gir_fail(err, GIR_E_PARAMS, "parameter '%s' has %llu values but its shape %s holds %lld", name,
                          (unsigned long long)pp.count, sh, (long long)numel);
            free(name);
            break;
        }
        pb_ctx *c = calloc(1, sizeof *c);
        if (!c) {
            free(name);
            st = gir_nomem(err);
            break;
        }
        c->blob = blob_ref(b);
        c->start = (size_t)(ms - s);
        c->len = (size_t)n;
        gir_tensor *t;
        st = gir_tensor_lazy(GIR_DT_F32, &shape, &pb_loader, c, &t, err);
        if (st) {
            free(name);
            break;
        }
        st = params_put(p, name, GIR_DT_F32, &shape, pp.need_grad, t, err);
        count++;
    }
    blob_drop_pages(b);
    blob_unref(b);
    return st;
}

/* ---- parameter.h5 ---------------------------------------------------------- */

typedef struct h5_ctx {
    nnb_blob *blob;
    char *name;
    gir_dtype dtype;
    tview view;
} h5_ctx;

static gir_status h5_load_plain(void *ctx, void *dst, uint64_t nbytes, gir_error *err);

static gir_status h5_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    h5_ctx *c = ctx;
    if (!c->view.on)
        return h5_load_plain(ctx, dst, nbytes, err);
    uint64_t off, n;
    bool found = false;
    gir_status st = gir_h5_raw_extent_open(c->blob->h5, c->name, c->dtype, &off, &n, &found, err);
    if (st)
        return st;
    if (found && n == nbytes && host_is_le()) {
        st = read_transposed(c->blob, off, &c->view, dst, err);
        blob_drop_pages(c->blob);
        return st;
    }
    return load_then_transpose(h5_load_plain, ctx, &c->view, dst, nbytes, err);
}

static gir_status h5_load_plain(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    h5_ctx *c = ctx;
    if (c->blob->fd >= 0) {
        /* a contiguous dataset is read straight from the archive */
        uint64_t off, n;
        bool found;
        gir_status st = gir_h5_raw_extent_open(c->blob->h5, c->name, c->dtype, &off, &n, &found, err);
        if (st)
            return st;
        if (found && n == nbytes && host_is_le()) {
            st = blob_pread(c->blob, off, dst, (size_t)nbytes, err);
            blob_drop_pages(c->blob);
            return st;
        }
    }
    gir_status st = gir_h5_read_open(c->blob->h5, c->name, dst, nbytes, c->dtype, err);
    blob_drop_pages(c->blob);
    return st;
}

static void h5_release(void *ctx)
{
    h5_ctx *c = ctx;
    blob_unref(c->blob);
    free(c->name);
    free(c);
}

static const gir_loader h5_loader = { h5_load, h5_release };

static gir_status add_h5_blob(nnb_params *p, nnb_blob *b, gir_error *err)
{
    gir_status st = gir_h5_open(b->data, b->len, &b->h5, err);
    gir_h5_param *hp = NULL;
    size_t n = 0;
    if (!st)
        st = gir_h5_list_open(b->h5, &hp, &n, err);
    for (size_t i = 0; !st && i < n; i++) {
        h5_ctx *c = calloc(1, sizeof *c);
        char *name = gir_strdupf("%s", hp[i].name);
        char *lname = gir_strdupf("%s", hp[i].name);
        if (!c || !name || !lname) {
            free(c);
            free(name);
            free(lname);
            st = gir_nomem(err);
            break;
        }
        c->blob = blob_ref(b);
        c->name = lname;
        c->dtype = hp[i].dtype;
        gir_tensor *t;
        st = gir_tensor_lazy(hp[i].dtype, &hp[i].shape, &h5_loader, c, &t, err);
        if (st) {
            free(name);
            break;
        }
        st = params_put(p, name, hp[i].dtype, &hp[i].shape, hp[i].need_grad, t, err);
    }
    gir_h5_params_free(hp, n);
    blob_drop_pages(b);
    blob_unref(b);
    return st;
}

gir_status nnb_params_add(nnb_params *p, void *image, size_t len, bool h5, gir_error *err)
{
    nnb_blob *b = blob_new(image, len);
    if (!b) {
        free(image);
        return gir_nomem(err);
    }
    return h5 ? add_h5_blob(p, b, err) : add_protobuf_blob(p, b, err);
}

gir_status nnb_params_add_stored(nnb_params *p, const char *archive, uint64_t offset, uint64_t size, bool h5,
                                gir_error *err)
{
    if (size > SIZE_MAX / 2)
        return gir_fail(err, GIR_E_LIMIT, "parameter member of %llu bytes is too large", (unsigned long long)size);
    int fd = open(archive, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        gir_fail(err, GIR_E_IO, "cannot open: %s", strerror(errno));
        gir_err_file(err, archive);
        return GIR_E_IO;
    }
    long page = sysconf(_SC_PAGESIZE);
    uint64_t base = page > 0 ? offset - offset % (uint64_t)page : offset;
    size_t map_len = (size_t)(offset - base + size);
    void *map = map_len ? mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, (off_t)base) : NULL;
    if (map_len && map == MAP_FAILED) {
        close(fd);
        return gir_fail(err, GIR_E_IO, "cannot map the parameter member: %s", strerror(errno));
    }
    nnb_blob *b = blob_new(map ? (unsigned char *)map + (offset - base) : NULL, (size_t)size);
    if (!b) {
        if (map)
            munmap(map, map_len);
        close(fd);
        return gir_nomem(err);
    }
    b->map = map;
    b->map_len = map_len;
    b->fd = fd;
    b->file_off = offset;
    if (!map) {
        b->data = malloc(1); /* an empty member */
        b->map = NULL;
        if (!b->data) {
            blob_unref(b);
            return gir_nomem(err);
        }
    }
    return h5 ? add_h5_blob(p, b, err) : add_protobuf_blob(p, b, err);
}

gir_status nnb_transpose_view(gir_tensor *t, gir_error *err)
{
    if (t->shape.rank != 2)
        return gir_fail(err, GIR_E_INTERNAL, "transposed view of a tensor of rank %d", t->shape.rank);
    tview v = { true, (uint64_t)t->shape.dims[0], (uint64_t)t->shape.dims[1], gir_dtype_size(t->dtype) };
    if (t->loader == &pb_loader || t->loader == &h5_loader) {
        if (t->data)
            gir_tensor_unload(t);
        tview *cv = t->loader == &pb_loader ? &((pb_ctx *)t->loader_ctx)->view : &((h5_ctx *)t->loader_ctx)->view;
        if (cv->on)
            return gir_fail(err, GIR_E_INTERNAL, "tensor transposed twice");
        *cv = v;
    } else if (!t->loader && t->data) {
        unsigned char *d = malloc(t->nbytes ? (size_t)t->nbytes : 1);
        if (!d)
            return gir_nomem(err);
        transpose_rows(d, t->data, 0, v.rows, &v);
        gir_tensor_replace_data(t, d);
    } else {
        return gir_fail(err, GIR_E_INTERNAL, "transposed view of a tensor this reader did not make");
    }
    int64_t r = t->shape.dims[0];
    t->shape.dims[0] = t->shape.dims[1];
    t->shape.dims[1] = r;
    return GIR_OK;
}

bool nnb_transposed_source(gir_tensor *t, gir_tensor_loader_fn *load, void **ctx)
{
    if (t->loader == &pb_loader && ((pb_ctx *)t->loader_ctx)->view.on) {
        *load = pb_load_plain;
        *ctx = t->loader_ctx;
        return true;
    }
    if (t->loader == &h5_loader && ((h5_ctx *)t->loader_ctx)->view.on) {
        *load = h5_load_plain;
        *ctx = t->loader_ctx;
        return true;
    }
    return false;
}

/* ---- writing ---------------------------------------------------------------- */

/* One buffer, grown to the largest parameter, that lazily loaded tensors
 * are loaded into while they are written: no fresh allocation (and page
 * faults) per tensor, and nothing stays loaded. */
typedef struct nnb_wscratch {
    unsigned char *buf;
    size_t cap;
} nnb_wscratch;

static unsigned char *scratch_get(nnb_wscratch *sc, uint64_t nbytes, gir_error *err)
{
    if (nbytes > SIZE_MAX - 1) {
        gir_nomem(err);
        return NULL;
    }
    size_t want = nbytes ? (size_t)nbytes : 1;
    if (sc->cap < want) {
        free(sc->buf);
        sc->buf = malloc(want);
        sc->cap = sc->buf ? want : 0;
        if (!sc->buf) {
            gir_nomem(err);
            return NULL;
        }
    }
    return sc->buf;
}

/* The bytes of w as they are written: loaded (into sc when the tensor is
 * not loaded already), transposed if asked.  *owned is set when the buffer
 * must be freed by the caller; *loaded_here when the tensor must be
 * unloaded. */
static gir_status wparam_bytes(const nnb_wparam *w, nnb_wscratch *sc, const void **data, void **owned,
                               bool *loaded_here, gir_error *err)
{
    *owned = NULL;
    *loaded_here = false;
    gir_tensor_loader_fn plain;
    void *pctx;
    gir_tensor *t = w->tensor;
    bool direct = !t->data && t->loader;
    if (direct && w->transpose && nnb_transposed_source(t, &plain, &pctx)) {
        /* a weight this reader views transposed: its file bytes as they are */
        unsigned char *buf = scratch_get(sc, t->nbytes, err);
        if (!buf)
            return err && err->code ? err->code : GIR_E_NOMEM;
        gir_status st = plain(pctx, buf, t->nbytes, err);
        if (st)
            return st;
        *data = buf;
        return GIR_OK;
    }
    if (direct && !w->transpose) {
        unsigned char *buf = scratch_get(sc, t->nbytes, err);
        if (!buf)
            return err && err->code ? err->code : GIR_E_NOMEM;
        gir_status st = t->loader->load(t->loader_ctx, buf, t->nbytes, err);
        if (st)
            return st;
        *data = buf;
        return GIR_OK;
    }
    *loaded_here = t->data == NULL;
    const void *src;
    gir_status st = gir_tensor_load(t, &src, err);
    if (st)
        return st;
    if (!w->transpose) {
        *data = src;
        return GIR_OK;
    }
    const gir_shape *s = &t->shape;
    if (s->rank != 2) {
        if (*loaded_here)
            gir_tensor_unload(t);
        return gir_fail(err, GIR_E_INTERNAL, "transposing a tensor of rank %d", s->rank);
    }
    size_t es = gir_dtype_size(t->dtype);
    size_t rows = (size_t)s->dims[0], cols = (size_t)s->dims[1];
    unsigned char *tb = malloc(t->nbytes ? (size_t)t->nbytes : 1);
    if (!tb) {
        if (*loaded_here)
            gir_tensor_unload(t);
        return gir_nomem(err);
    }
    const unsigned char *a = src;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            memcpy(tb + (c * rows + r) * es, a + (r * cols + c) * es, es);
    if (*loaded_here)
        gir_tensor_unload(t);
    *loaded_here = false;
    *owned = tb;
    *data = tb;
    return GIR_OK;
}

/* Where parameter.protobuf's bytes go. */
typedef gir_status (*pb_sink)(void *ctx, const void *p, size_t n, gir_error *err);

static gir_status pb_check_f32(const nnb_wparam *w, size_t n, gir_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (w[i].tensor->dtype != GIR_DT_F32)
            return gir_fail(err, GIR_E_UNSUPPORTED,
                            "parameter.protobuf holds only float32 data but parameter '%s' is %s; write "
                            "parameter.h5 instead",
                            w[i].name, gir_dtype_name(w[i].tensor->dtype));
    return GIR_OK;
}

/* Emits the NNablaProtoBuf of the parameters through sink, or with sink
 * NULL only adds up its size in *total. */
static gir_status pb_emit(const nnb_wparam *w, size_t n, pb_sink sink, void *sctx, uint64_t *total, gir_error *err)
{
    gir_status st = GIR_OK;
    bool le = host_is_le();
    nnb_wscratch sc = { NULL, 0 };
    *total = 0;
    for (size_t i = 0; i < n && !st; i++) {
        const nnb_wparam *p = &w[i];
        size_t name_len = strlen(p->name);
        uint64_t count = p->tensor->nbytes / 4;
        /* Shape { dim (packed) } */
        unsigned char dims[GIR_MAX_RANK * 10];
        size_t dl = 0;
        for (int d = 0; d < p->shape.rank; d++)
            dl += gir_pb_put_varint(dims + dl, (uint64_t)p->shape.dims[d]);
        uint64_t shape_body = dl ? 1 + gir_pb_varint_len(dl) + dl : 0;
        uint64_t data_bytes = count * 4;
        uint64_t body = 1 + gir_pb_varint_len(name_len) + name_len + 2 + gir_pb_varint_len(shape_body) + shape_body;
        if (count)
            body += 2 + gir_pb_varint_len(data_bytes) + data_bytes;
        if (p->need_grad)
            body += 3;
        *total += 2 + gir_pb_varint_len(body) + body;
        if (!sink)
            continue;
        unsigned char hdr[64];
        size_t h = 0;
        hdr[h++] = 0xc2; /* field 200, length-delimited */
        hdr[h++] = 0x0c;
        h += gir_pb_put_varint(hdr + h, body);
        hdr[h++] = 0x0a; /* variable_name */
        h += gir_pb_put_varint(hdr + h, name_len);
        st = sink(sctx, hdr, h, err);
        if (!st)
            st = sink(sctx, p->name, name_len, err);
        h = 0;
        hdr[h++] = 0xa2; /* shape = 20 */
        hdr[h++] = 0x01;
        h += gir_pb_put_varint(hdr + h, shape_body);
        if (dl) {
            hdr[h++] = 0x0a;
            h += gir_pb_put_varint(hdr + h, dl);
        }
        if (!st)
            st = sink(sctx, hdr, h, err);
        if (!st && dl)
            st = sink(sctx, dims, dl, err);
        if (!st && count) {
            h = 0;
            hdr[h++] = 0xa2; /* data = 100 */
            hdr[h++] = 0x06;
            h += gir_pb_put_varint(hdr + h, data_bytes);
            st = sink(sctx, hdr, h, err);
            const void *data;
            void *owned = NULL;
            bool loaded_here = false;
            if (!st)
                st = wparam_bytes(p, &sc, &data, &owned, &loaded_here, err);
            if (!st && le) {
                st = sink(sctx, data, (size_t)data_bytes, err);
            } else if (!st) {
                const uint32_t *u = data;
                unsigned char be[4096];
                for (uint64_t k = 0; !st && k < count; k += sizeof be / 4) {
                    size_t m = count - k < sizeof be / 4 ? (size_t)(count - k) : sizeof be / 4;
                    for (size_t j = 0; j < m; j++)
                        gir_put_le32(be + 4 * j, u[k + j]);
                    st = sink(sctx, be, 4 * m, err);
                }
            }
            free(owned);
            if (loaded_here)
                gir_tensor_unload(p->tensor);
            if (!st)
                gir_progress_add(p->tensor->nbytes);
        }
        if (!st && p->need_grad) {
            static const unsigned char ng[3] = { 0xa8, 0x06, 0x01 };
            st = sink(sctx, ng, 3, err);
        }
    }
    free(sc.buf);
    return st;
}

static gir_status file_sink(void *ctx, const void *p, size_t n, gir_error *err)
{
    if (n && fwrite(p, 1, n, (FILE *)ctx) != n)
        return gir_fail(err, GIR_E_IO, "cannot write the parameter file");
    return GIR_OK;
}

gir_status nnb_write_protobuf(const char *path, const nnb_wparam *w, size_t n, gir_error *err)
{
    gir_status st = pb_check_f32(w, n, err);
    if (st)
        return st;
    FILE *f = fopen(path, "wb");
    if (!f) {
        gir_fail(err, GIR_E_IO, "cannot create the parameter file");
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    uint64_t total;
    st = pb_emit(w, n, file_sink, f, &total, err);
    if (fclose(f) != 0 && !st)
        st = gir_fail(err, GIR_E_IO, "cannot write the parameter file");
    if (st)
        gir_err_file(err, path);
    return st;
}

static gir_status zip_sink(void *ctx, const void *p, size_t n, gir_error *err)
{
    return gir_zipw_write(ctx, p, n, err);
}

gir_status nnb_write_protobuf_member(gir_zipw *z, const char *name, const nnb_wparam *w, size_t n, gir_error *err)
{
    gir_status st = pb_check_f32(w, n, err);
    uint64_t total = 0;
    if (!st)
        st = pb_emit(w, n, NULL, NULL, &total, err);
    if (!st)
        st = gir_zipw_begin(z, name, total, err);
    if (!st)
        st = pb_emit(w, n, zip_sink, z, &total, err);
    if (!st)
        st = gir_zipw_end(z, err);
    return st;
}

typedef struct h5w_ctx {
    const nnb_wparam *w;
    nnb_wscratch sc;
    void *owned;
    bool loaded_here;
} h5w_ctx;

static gir_status h5w_get(void *ctx, size_t i, const void **data, gir_error *err)
{
    h5w_ctx *c = ctx;
    return wparam_bytes(&c->w[i], &c->sc, data, &c->owned, &c->loaded_here, err);
}

static void h5w_put(void *ctx, size_t i)
{
    h5w_ctx *c = ctx;
    gir_progress_add(c->w[i].tensor->nbytes);
    free(c->owned);
    c->owned = NULL;
    if (c->loaded_here)
        gir_tensor_unload(c->w[i].tensor);
    c->loaded_here = false;
}

gir_status nnb_write_h5_inplace(const char *path, uint64_t userblock, const nnb_wparam *w, size_t n,
                                gir_zip_extent **extents, size_t *n_extents, gir_error *err)
{
    gir_h5_param *hp = calloc(n ? n : 1, sizeof *hp);
    if (!hp)
        return gir_nomem(err);
    for (size_t i = 0; i < n; i++) {
        hp[i].name = (char *)w[i].name;
        hp[i].dtype = w[i].tensor->dtype;
        hp[i].shape = w[i].shape;
        hp[i].need_grad = w[i].need_grad;
        hp[i].index = (int64_t)i;
        hp[i].has_index = true;
    }
    h5w_ctx c = { w, { NULL, 0 }, NULL, false };
    gir_status st =
        gir_h5_write_inplace(path, userblock, hp, n, h5w_get, h5w_put, &c, extents, n_extents, err);
    free(c.owned);
    free(c.sc.buf);
    free(hp);
    return st;
}

gir_status nnb_write_h5(const char *path, const nnb_wparam *w, size_t n, gir_error *err)
{
    return nnb_write_h5_inplace(path, 0, w, n, NULL, NULL, err);
}
