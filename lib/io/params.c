/* .params companions: the TVM tensor list (NNVM and TVM) and the MXNet
 * NDArray list in every array layout (legacy, V1, V2, V3).  Reading records
 * where each tensor's bytes are; the data is read when a tensor is loaded.
 * Writing streams one tensor at a time. */
#include "params.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TVM_LIST_MAGIC 0xF7E58D4F05049CB7ull
#define TVM_TENSOR_MAGIC 0xDD5E40F096B4A13Full
#define MX_LIST_MAGIC 0x112ull
#define MX_V1 0xF993FAC8u
#define MX_V2 0xF993FAC9u
#define MX_V3 0xF993FACAu

/* ---- dtype tables -------------------------------------------------------- */

static const gir_dtype mx_types[] = {
    GIR_DT_F32, GIR_DT_F64, GIR_DT_F16, GIR_DT_U8,  GIR_DT_I32, GIR_DT_I8,   GIR_DT_I64,
    GIR_DT_BOOL, GIR_DT_I16, GIR_DT_U16, GIR_DT_U32, GIR_DT_U64, GIR_DT_BF16,
};

gir_dtype gir_mxnet_dtype(int64_t flag)
{
    return flag >= 0 && flag < (int64_t)(sizeof mx_types / sizeof *mx_types) ? mx_types[flag] : GIR_DT_UNKNOWN;
}

int gir_mxnet_flag(gir_dtype t)
{
    for (size_t i = 0; i < sizeof mx_types / sizeof *mx_types; i++)
        if (mx_types[i] == t)
            return (int)i;
    return -1;
}

/* NNVM TypeFlag codes of compiled graphs' "dtype" attribute. */
static const gir_dtype nnvm_types[] = {
    GIR_DT_F32, GIR_DT_F64, GIR_DT_F16, GIR_DT_U8, GIR_DT_I32, GIR_DT_I8,
    GIR_DT_I64, GIR_DT_I16, GIR_DT_U16, GIR_DT_U32, GIR_DT_U64,
};

int gir_nnvm_dtype_code(gir_dtype t)
{
    for (size_t i = 0; i < sizeof nnvm_types / sizeof *nnvm_types; i++)
        if (nnvm_types[i] == t)
            return (int)i;
    return -1;
}

static const struct {
    const char *name;
    gir_dtype t;
    uint8_t code, bits;
} dl_types[] = {
    { "float32", GIR_DT_F32, 2, 32 }, { "float64", GIR_DT_F64, 2, 64 }, { "float16", GIR_DT_F16, 2, 16 },
    { "bfloat16", GIR_DT_BF16, 4, 16 }, { "int8", GIR_DT_I8, 0, 8 },     { "int16", GIR_DT_I16, 0, 16 },
    { "int32", GIR_DT_I32, 0, 32 },     { "int64", GIR_DT_I64, 0, 64 },   { "uint8", GIR_DT_U8, 1, 8 },
    { "uint16", GIR_DT_U16, 1, 16 },    { "uint32", GIR_DT_U32, 1, 32 },  { "uint64", GIR_DT_U64, 1, 64 },
    { "bool", GIR_DT_BOOL, 1, 1 },
};
#define N_DL (sizeof dl_types / sizeof *dl_types)

gir_dtype gir_dltype(const char *s)
{
    for (size_t i = 0; s && i < N_DL; i++)
        if (strcmp(dl_types[i].name, s) == 0)
            return dl_types[i].t;
    return GIR_DT_UNKNOWN;
}

bool gir_dltype_plausible(const char *s)
{
    static const char *const classes[] = { "bfloat", "float", "uint", "int", "bool", "handle" };
    size_t k = 0;
    for (; k < sizeof classes / sizeof *classes; k++)
        if (strncmp(s, classes[k], strlen(classes[k])) == 0)
            break;
    if (k == sizeof classes / sizeof *classes)
        return false;
    const char *p = s + strlen(classes[k]);
    unsigned long bits = 0, lanes = 1;
    char *end = (char *)p;
    if (*p >= '0' && *p <= '9')
        bits = strtoul(p, &end, 10);
    else if (k < 4)
        return false; /* int, uint, float and bfloat need their bits */
    if (bits > 128 || (end != p && bits == 0))
        return false;
    if (*end == 'x') {
        p = end + 1;
        if (*p < '1' || *p > '9')
            return false;
        lanes = strtoul(p, &end, 10);
        if (lanes > 1024)
            return false;
    }
    return *end == '\0';
}

const char *gir_dltype_name(gir_dtype t)
{
    for (size_t i = 0; i < N_DL; i++)
        if (dl_types[i].t == t)
            return dl_types[i].name;
    return NULL;
}

static gir_dtype dl_from_code(unsigned code, unsigned bits)
{
    for (size_t i = 0; i < N_DL; i++)
        if (dl_types[i].code == code && dl_types[i].bits == bits)
            return dl_types[i].t;
    return GIR_DT_UNKNOWN;
}

int gir_params_sniff(const unsigned char *head, size_t n, bool *npz)
{
    *npz = false;
    if (n >= 4 && head[0] == 'P' && head[1] == 'K' &&
        ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))) {
        *npz = true;
        return GIR_PARAMS_MXNET;
    }
    if (n >= 6 && memcmp(head, "\x93NUMPY", 6) == 0) {
        *npz = true;
        return GIR_PARAMS_MXNET;
    }
    if (n < 8)
        return 0;
    uint64_t m = gir_le64(head);
    if (m == TVM_LIST_MAGIC)
        return GIR_PARAMS_TVM;
    if (m == MX_LIST_MAGIC)
        return GIR_PARAMS_MXNET;
    return 0;
}

/* The file every lazy tensor of one params file reads from (shared). */
struct gir_params_src {
    _Atomic int refs; /* tensors may die on other threads */
    gir_file_id id;   /* the file as the reader saw it */
    char path[];
};
typedef struct gir_params_src src;
GIR_REFCOUNTED(static, src, src_ref, src_drop, free)

/* ---- bounded reading ---------------------------------------------------- */

typedef struct rd {
    FILE *f;
    uint64_t pos, size;
} rd;

static gir_status at(gir_error *err, uint64_t off)
{
    gir_err_loc(err, "byte %llu", (unsigned long long)off);
    return err ? err->code : GIR_E_PARAMS;
}

static gir_status rd_bytes(rd *r, void *buf, size_t n, const char *what, gir_error *err)
{
    if (r->size - r->pos < n) {
        gir_fail(err, GIR_E_PARAMS, "file ends inside %s: %zu bytes needed, %llu left", what, n,
                 (unsigned long long)(r->size - r->pos));
        return at(err, r->pos);
    }
    if (fread(buf, 1, n, r->f) != n) {
        gir_fail(err, GIR_E_IO, "cannot read: %s", ferror(r->f) ? strerror(errno) : "unexpected end of file");
        return at(err, r->pos);
    }
    r->pos += n;
    return GIR_OK;
}

static gir_status rd_u64(rd *r, uint64_t *v, const char *what, gir_error *err)
{
    unsigned char b[8];
    gir_status st = rd_bytes(r, b, 8, what, err);
    if (!st)
        *v = gir_le64(b);
    return st;
}

static gir_status rd_u32(rd *r, uint32_t *v, const char *what, gir_error *err)
{
    unsigned char b[4];
    gir_status st = rd_bytes(r, b, 4, what, err);
    if (!st)
        *v = gir_le32(b);
    return st;
}

static gir_status rd_i32(rd *r, int32_t *v, const char *what, gir_error *err)
{
    uint32_t u;
    gir_status st = rd_u32(r, &u, what, err);
    if (!st)
        *v = (int32_t)u;
    return st;
}

static gir_status rd_skip(rd *r, uint64_t n, const char *what, gir_error *err)
{
    if (r->size - r->pos < n) {
        gir_fail(err, GIR_E_PARAMS, "file ends inside %s: %llu bytes needed, %llu left", what,
                 (unsigned long long)n, (unsigned long long)(r->size - r->pos));
        return at(err, r->pos);
    }
    if (fseeko(r->f, (off_t)(r->pos + n), SEEK_SET) != 0) {
        gir_fail(err, GIR_E_IO, "cannot seek: %s", strerror(errno));
        return at(err, r->pos);
    }
    r->pos += n;
    return GIR_OK;
}

static gir_status rd_name(rd *r, gir_params *p, const char **out, gir_error *err)
{
    uint64_t off = r->pos, len;
    gir_status st = rd_u64(r, &len, "a name's length", err);
    if (st)
        return st;
    if (len > r->size - r->pos || len > ((uint64_t)1 << 20)) {
        gir_fail(err, GIR_E_PARAMS, "name length %llu is larger than the %llu bytes left", (unsigned long long)len,
                 (unsigned long long)(r->size - r->pos));
        return at(err, off);
    }
    char *s = gir_arena_alloc(&p->arena, (size_t)len + 1);
    if (!s)
        return gir_nomem(err);
    st = rd_bytes(r, s, (size_t)len, "a name", err);
    if (st)
        return st;
    if (strlen(s) != len) {
        gir_fail(err, GIR_E_PARAMS, "a parameter name contains a NUL byte");
        return at(err, off);
    }
    *out = s;
    return GIR_OK;
}

/* Checks that count records of at least min_bytes each can fit. */
static gir_status check_count(rd *r, uint64_t count, uint64_t min_bytes, const char *what, uint64_t off,
                              gir_error *err)
{
    if (count > (r->size - r->pos) / min_bytes) {
        gir_fail(err, GIR_E_PARAMS, "%s count %llu is more than the %llu bytes left can hold", what,
                 (unsigned long long)count, (unsigned long long)(r->size - r->pos));
        return at(err, off);
    }
    return GIR_OK;
}

static gir_status data_size(gir_param *it, uint64_t off, gir_error *err)
{
    gir_status st = gir_tensor_size(it->dtype, &it->shape, &it->nbytes, err);
    if (st)
        return at(err, off);
    return GIR_OK;
}

/* The it->shape.rank dimensions of array i (64-bit each, none above
 * INT64_MAX); its name, when known by now, in the message. */
static gir_status rd_dims(rd *r, gir_param *it, size_t i, gir_error *err)
{
    for (int k = 0; k < it->shape.rank; k++) {
        uint64_t d;
        TRY(rd_u64(r, &d, "an array shape", err));
        if (d > (uint64_t)INT64_MAX) {
            if (it->name)
                gir_fail(err, GIR_E_PARAMS, "array %zu ('%s') has a negative dimension", i, it->name);
            else
                gir_fail(err, GIR_E_PARAMS, "array %zu has a negative dimension", i);
            return at(err, r->pos - 8);
        }
        it->shape.dims[k] = (int64_t)d;
    }
    return GIR_OK;
}

/* The start both layouts share: a header (magic, reserved), then the
 * count of what comes first (names or arrays, each of at least min_bytes
 * in what is left), and the items array for them. */
static gir_status read_head(rd *r, gir_params *p, const char *count, const char *what, uint64_t min_bytes,
                            gir_error *err)
{
    uint64_t v, n = 0;
    gir_status st = rd_u64(r, &v, "the header", err);
    if (!st)
        st = rd_u64(r, &v, "the header", err); /* reserved */
    uint64_t off = r->pos;
    if (!st)
        st = rd_u64(r, &n, count, err);
    if (!st)
        st = check_count(r, n, min_bytes, what, off, err);
    if (st)
        return st;
    p->n = (size_t)n;
    p->items = gir_arena_alloc(&p->arena, (p->n ? p->n : 1) * sizeof *p->items);
    return p->items ? GIR_OK : gir_nomem(err);
}

static gir_status read_tvm(rd *r, gir_params *p, gir_error *err)
{
    gir_status st = read_head(r, p, "the name count", "name", 8, err);
    if (st)
        return st;
    uint64_t n = p->n, off;
    for (size_t i = 0; i < p->n; i++) {
        st = rd_name(r, p, &p->items[i].name, err);
        if (st)
            return st;
        p->items[i].key = p->items[i].name;
        p->items[i].prefix = "";
    }
    off = r->pos;
    uint64_t count;
    st = rd_u64(r, &count, "the array count", err);
    if (st)
        return st;
    if (count != n) {
        gir_fail(err, GIR_E_PARAMS, "the file lists %llu names but %llu arrays", (unsigned long long)n,
                 (unsigned long long)count);
        return at(err, off);
    }
    for (size_t i = 0; i < p->n; i++) {
        gir_param *it = &p->items[i];
        it->record = r->pos;
        uint64_t magic, reserved;
        st = rd_u64(r, &magic, "an array header", err);
        if (st)
            return st;
        if (magic != TVM_TENSOR_MAGIC) {
            gir_fail(err, GIR_E_PARAMS, "array %zu ('%s') has magic 0x%016llX, expected 0x%016llX", i, it->name,
                     (unsigned long long)magic, (unsigned long long)TVM_TENSOR_MAGIC);
            return at(err, it->record);
        }
        int32_t dev_type, dev_id, ndim;
        unsigned char dt[4];
        st = rd_u64(r, &reserved, "an array header", err);
        if (!st)
            st = rd_i32(r, &dev_type, "an array header", err);
        if (!st)
            st = rd_i32(r, &dev_id, "an array header", err);
        if (!st)
            st = rd_i32(r, &ndim, "an array header", err);
        if (!st)
            st = rd_bytes(r, dt, 4, "an array header", err);
        if (st)
            return st;
        if (dev_type != 1) {
            gir_fail(err, GIR_E_PARAMS, "array %zu ('%s') has device type %d; only CPU (1) tensors are stored",
                     i, it->name, dev_type);
            return at(err, it->record + 16);
        }
        if (ndim < 0 || ndim > GIR_MAX_RANK) {
            gir_fail(err, ndim < 0 ? GIR_E_PARAMS : GIR_E_LIMIT, "array %zu ('%s') has rank %d (0..%d supported)",
                     i, it->name, ndim, GIR_MAX_RANK);
            return at(err, it->record + 24);
        }
        unsigned lanes = (unsigned)dt[2] | (unsigned)dt[3] << 8;
        it->dtype = dl_from_code(dt[0], dt[1]);
        if (it->dtype == GIR_DT_UNKNOWN || lanes != 1) {
            gir_fail(err, GIR_E_DTYPE, "array %zu ('%s') has DLPack type code %u, %u bits, %u lanes, which is not "
                     "supported", i, it->name, dt[0], dt[1], lanes);
            return at(err, it->record + 28);
        }
        it->shape.rank = ndim;
        st = rd_dims(r, it, i, err);
        if (!st)
            st = data_size(it, it->record, err);
        if (st)
            return st;
        uint64_t size;
        off = r->pos;
        st = rd_u64(r, &size, "an array's byte size", err);
        if (st)
            return st;
        if (size != it->nbytes) {
            gir_fail(err, GIR_E_PARAMS, "array %zu ('%s') declares %llu data bytes, but its shape and type need %llu",
                     i, it->name, (unsigned long long)size, (unsigned long long)it->nbytes);
            return at(err, off);
        }
        it->offset = r->pos;
        st = rd_skip(r, it->nbytes, "array data", err);
        if (st) {
            gir_err_replace_message(err, "file ends inside the data of array %zu ('%s'): %llu bytes needed, %llu "
                                    "left", i, it->name, (unsigned long long)it->nbytes,
                                    (unsigned long long)(r->size - r->pos));
            return st;
        }
    }
    return GIR_OK;
}

static gir_status read_mx_shape64(rd *r, gir_param *it, size_t i, bool v3, bool *empty, gir_error *err)
{
    uint64_t off = r->pos;
    int32_t ndim;
    gir_status st = rd_i32(r, &ndim, "an array shape", err);
    if (st)
        return st;
    *empty = false;
    if (ndim == 0 && !v3) {
        *empty = true;
        return GIR_OK;
    }
    if (ndim == -1 && v3) {
        *empty = true;
        return GIR_OK;
    }
    if (ndim < 0 || ndim > GIR_MAX_RANK) {
        gir_fail(err, ndim < 0 ? GIR_E_PARAMS : GIR_E_LIMIT, "array %zu has rank %d (0..%d supported)", i, ndim,
                 GIR_MAX_RANK);
        return at(err, off);
    }
    it->shape.rank = ndim;
    return rd_dims(r, it, i, err);
}

static gir_status read_mx_tail(rd *r, gir_param *it, size_t i, gir_error *err)
{
    int32_t dev_type, dev_id, flag;
    gir_status st = rd_i32(r, &dev_type, "an array context", err);
    if (!st)
        st = rd_i32(r, &dev_id, "an array context", err);
    uint64_t off = r->pos;
    if (!st)
        st = rd_i32(r, &flag, "an array type", err);
    if (st)
        return st;
    it->dtype = gir_mxnet_dtype(flag);
    if (it->dtype == GIR_DT_UNKNOWN) {
        gir_fail(err, GIR_E_DTYPE, "array %zu has MXNet type flag %d, which is not a known type", i, flag);
        return at(err, off);
    }
    st = data_size(it, it->record, err);
    if (st)
        return st;
    it->offset = r->pos;
    st = rd_skip(r, it->nbytes, "array data", err);
    if (st)
        gir_err_replace_message(err, "file ends inside the data of array %zu: %llu bytes needed, %llu left", i,
                                (unsigned long long)it->nbytes, (unsigned long long)(r->size - r->pos));
    return st;
}

static gir_status read_mxnet(rd *r, gir_params *p, gir_error *err)
{
    gir_status st = read_head(r, p, "the array count", "array", 4, err);
    if (st)
        return st;
    for (size_t i = 0; i < p->n; i++) {
        gir_param *it = &p->items[i];
        it->record = r->pos;
        uint32_t magic;
        st = rd_u32(r, &magic, "an array header", err);
        if (st)
            return st;
        bool empty = false;
        if (magic == MX_V2 || magic == MX_V3) {
            int32_t stype;
            st = rd_i32(r, &stype, "an array header", err);
            if (st)
                return st;
            if (stype != 0) {
                gir_fail(err, stype == 1 || stype == 2 ? GIR_E_UNSUPPORTED : GIR_E_PARAMS,
                         "array %zu has storage type %d (%s); only dense arrays are supported", i, stype,
                         stype == 1 ? "row_sparse" : stype == 2 ? "csr" : "unknown");
                return at(err, it->record + 4);
            }
            st = read_mx_shape64(r, it, i, magic == MX_V3, &empty, err);
        } else if (magic == MX_V1) {
            st = read_mx_shape64(r, it, i, false, &empty, err);
        } else {
            /* Legacy (MXNet <= 0.10): the word is the rank, dims are u32. */
            if (magic > GIR_MAX_RANK) {
                gir_fail(err, GIR_E_PARAMS,
                         "array %zu starts with 0x%08X, which is neither an NDArray magic (0xF993FAC8..CA) nor a "
                         "legacy rank (0..%d)", i, magic, GIR_MAX_RANK);
                return at(err, it->record);
            }
            it->shape.rank = (int)magic;
            empty = magic == 0;
            for (uint32_t k = 0; k < magic && !st; k++) {
                uint32_t d = 0;
                st = rd_u32(r, &d, "an array shape", err);
                it->shape.dims[k] = d;
            }
        }
        if (st)
            return st;
        if (empty) {
            it->empty = true;
            it->shape.rank = -1;
            continue;
        }
        st = read_mx_tail(r, it, i, err);
        if (st)
            return st;
    }
    uint64_t n = p->n, off = r->pos, k;
    st = rd_u64(r, &k, "the name count", err);
    if (st)
        return st;
    if (k != 0 && k != n) {
        gir_fail(err, GIR_E_PARAMS, "the file has %llu arrays but %llu names", (unsigned long long)n,
                 (unsigned long long)k);
        return at(err, off);
    }
    for (size_t i = 0; i < k; i++) {
        gir_param *it = &p->items[i];
        st = rd_name(r, p, &it->name, err);
        if (st)
            return st;
        if (strncmp(it->name, "arg:", 4) == 0 || strncmp(it->name, "aux:", 4) == 0) {
            it->key = it->name + 4;
            it->prefix = strncmp(it->name, "arg:", 4) == 0 ? "arg" : "aux";
        } else {
            it->key = it->name;
            it->prefix = "";
        }
    }
    return GIR_OK;
}

gir_status gir_params_open(const char *path, gir_params *p, gir_error *err)
{
    memset(p, 0, sizeof *p);
    p->path = gir_strdupf("%s", path);
    size_t plen = strlen(path);
    p->src = malloc(sizeof *p->src + plen + 1);
    if (!p->path || !p->src) {
        gir_params_free(p);
        return gir_nomem(err);
    }
    p->src->refs = 1;
    memcpy(p->src->path, path, plen + 1);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return gir_fail_file(err, path, GIR_E_IO, "cannot open the parameters file: %s", strerror(errno));
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return gir_fail_file(err, path, GIR_E_IO, "the parameters file is not a regular file");
    }
    gir_file_id_from_stat(&sb, &p->src->id);
    rd r = { f, 0, (uint64_t)sb.st_size };
    unsigned char head[8] = { 0 };
    size_t got = fread(head, 1, sizeof head, f);
    rewind(f);
    bool npz;
    int kind = gir_params_sniff(head, got, &npz);
    gir_status st;
    if (npz) {
        st = gir_fail(err, GIR_E_UNSUPPORTED,
                      "MXNet 2.x NumPy-format parameters (.npz/.npy) are not supported; save them with "
                      "MXNet 1.x (mx.nd.save) instead");
    } else if (kind == GIR_PARAMS_TVM) {
        p->kind = GIR_PARAMS_TVM;
        st = read_tvm(&r, p, err);
    } else if (kind == GIR_PARAMS_MXNET) {
        p->kind = GIR_PARAMS_MXNET;
        st = read_mxnet(&r, p, err);
    } else {
        st = gir_fail(err, GIR_E_PARAMS,
                      got < 8 ? "the parameters file is too short (%zu bytes) for a header"
                              : "not a parameters file: the first 8 bytes are neither the TVM (0xF7E58D4F05049CB7) "
                                "nor the MXNet (0x112) list magic%.0zu",
                      got);
        at(err, 0);
    }
    fclose(f);
    return gir_err_in_file(st, err, path);
}

void gir_params_free(gir_params *p)
{
    gir_arena_free(&p->arena);
    free(p->path);
    src_drop(p->src);
    memset(p, 0, sizeof *p);
}

/* ---- lazy loading ------------------------------------------------------------ */

typedef struct lazy {
    src *s;
    uint64_t offset;
} lazy;

static gir_status lazy_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    lazy *l = ctx;
    int fd;
    TRY(gir_open_same(l->s->path, &l->s->id, "the parameters file", &fd, err));
    uint64_t done = gir_pread_full(fd, dst, nbytes, l->offset);
    int e = errno;
    close(fd);
    if (done < nbytes) {
        gir_fail(err, e ? GIR_E_IO : GIR_E_PARAMS,
                 e ? "cannot read tensor data: %s" : "the parameters file became shorter: %s",
                 e ? strerror(e) : "data is missing");
        gir_err_file(err, l->s->path);
        gir_err_loc(err, "byte %llu", (unsigned long long)(l->offset + done));
        return e ? GIR_E_IO : GIR_E_PARAMS;
    }
    return GIR_OK;
}

static void lazy_release(void *ctx)
{
    lazy *l = ctx;
    src_drop(l->s);
    free(l);
}

static const gir_loader lazy_loader = { lazy_load, lazy_release };

gir_status gir_params_tensor(const gir_params *p, size_t i, gir_tensor **out, gir_error *err)
{
    const gir_param *it = &p->items[i];
    lazy *l = calloc(1, sizeof *l);
    if (!l)
        return gir_nomem(err);
    l->s = src_ref(p->src);
    l->offset = it->offset;
    return gir_tensor_lazy(it->dtype, &it->shape, &lazy_loader, l, out, err);
}

/* ---- writing ---------------------------------------------------------------- */

static gir_status put(gir_outfile *f, const void *p, size_t n, gir_error *err)
{
    return gir_outfile_write(f, p, n, err);
}

static gir_status put64(gir_outfile *f, uint64_t v, gir_error *err)
{
    unsigned char b[8];
    gir_put_le64(b, v);
    return put(f, b, 8, err);
}

static gir_status put32(gir_outfile *f, uint32_t v, gir_error *err)
{
    unsigned char b[4];
    gir_put_le32(b, v);
    return put(f, b, 4, err);
}

static gir_status put_name(gir_outfile *f, const char *s, gir_error *err)
{
    size_t n = strlen(s);
    gir_status st = put64(f, n, err);
    return st ? st : put(f, s, n, err);
}

/* Writes t's bytes, loading it only for the duration of the call. */
static gir_status put_data(gir_outfile *f, gir_tensor *t, const char *name, void (*progress)(uint64_t),
                           gir_error *err)
{
    bool loaded = t->data != NULL;
    const void *data;
    gir_status st = gir_tensor_load(t, &data, err);
    if (st) {
        gir_err_node(err, name);
        return st;
    }
    st = put(f, data, (size_t)t->nbytes, err);
    if (!loaded)
        gir_tensor_unload(t);
    if (!st && progress)
        progress(t->nbytes);
    return st;
}

static gir_status check_tensor(gir_params_kind kind, const gir_param_out *it, gir_error *err)
{
    gir_tensor *t = it->t;
    if (t->shape.rank < 0 || t->shape.rank > GIR_MAX_RANK || !gir_shape_is_known(&t->shape)) {
        gir_fail(err, GIR_E_SHAPE, "parameter '%s' has no known shape", it->name);
        gir_err_node(err, it->name);
        return GIR_E_SHAPE;
    }
    bool ok = kind == GIR_PARAMS_TVM ? gir_dltype_name(t->dtype) != NULL : gir_mxnet_flag(t->dtype) >= 0;
    if (!ok) {
        gir_fail(err, GIR_E_UNSUPPORTED, "parameter '%s' has type %s, which %s parameters cannot store", it->name,
                 gir_dtype_name(t->dtype), kind == GIR_PARAMS_TVM ? "TVM" : "MXNet");
        gir_err_node(err, it->name);
        return GIR_E_UNSUPPORTED;
    }
    return GIR_OK;
}

/* The start both layouts share: magic, reserved, the first count. */
static gir_status put_head(gir_outfile *f, uint64_t magic, size_t n, gir_error *err)
{
    gir_status st = put64(f, magic, err);
    if (!st)
        st = put64(f, 0, err);
    return st ? st : put64(f, n, err);
}

static gir_status write_tvm(gir_outfile *f, const gir_param_out *items, size_t n, void (*progress)(uint64_t),
                           gir_error *err)
{
    gir_status st = put_head(f, TVM_LIST_MAGIC, n, err);
    for (size_t i = 0; i < n && !st; i++)
        st = put_name(f, items[i].name, err);
    if (!st)
        st = put64(f, n, err);
    for (size_t i = 0; i < n && !st; i++) {
        gir_tensor *t = items[i].t;
        unsigned code = 0, bits = 0;
        for (size_t k = 0; k < N_DL; k++)
            if (dl_types[k].t == t->dtype) {
                code = dl_types[k].code;
                bits = dl_types[k].bits;
            }
        unsigned char hdr[8 + 8 + 4 + 4 + 4 + 4];
        gir_put_le64(hdr, TVM_TENSOR_MAGIC);
        gir_put_le64(hdr + 8, 0);
        gir_put_le32(hdr + 16, 1); /* kDLCPU */
        gir_put_le32(hdr + 20, 0);
        gir_put_le32(hdr + 24, (uint32_t)t->shape.rank);
        hdr[28] = (unsigned char)code;
        hdr[29] = (unsigned char)bits;
        hdr[30] = 1;
        hdr[31] = 0;
        st = put(f, hdr, sizeof hdr, err);
        for (int k = 0; k < t->shape.rank && !st; k++)
            st = put64(f, (uint64_t)t->shape.dims[k], err);
        if (!st)
            st = put64(f, t->nbytes, err);
        if (!st)
            st = put_data(f, t, items[i].name, progress, err);
    }
    return st;
}

static gir_status write_mxnet(gir_outfile *f, const gir_param_out *items, size_t n, void (*progress)(uint64_t),
                             gir_error *err)
{
    gir_status st = put_head(f, MX_LIST_MAGIC, n, err);
    for (size_t i = 0; i < n && !st; i++) {
        gir_tensor *t = items[i].t;
        /* V2 cannot hold a scalar (its rank 0 means "empty"); V3 can. */
        st = put32(f, t->shape.rank == 0 ? MX_V3 : MX_V2, err);
        if (!st)
            st = put32(f, 0, err); /* dense */
        if (!st)
            st = put32(f, (uint32_t)t->shape.rank, err);
        for (int k = 0; k < t->shape.rank && !st; k++)
            st = put64(f, (uint64_t)t->shape.dims[k], err);
        if (!st)
            st = put32(f, 1, err); /* cpu */
        if (!st)
            st = put32(f, 0, err);
        if (!st)
            st = put32(f, (uint32_t)gir_mxnet_flag(t->dtype), err);
        if (!st)
            st = put_data(f, t, items[i].name, progress, err);
    }
    if (!st)
        st = put64(f, n, err);
    for (size_t i = 0; i < n && !st; i++)
        st = put_name(f, items[i].name, err);
    return st;
}

gir_status gir_params_write(gir_outfile *f, gir_params_kind kind, const gir_param_out *items, size_t n,
                            void (*progress)(uint64_t bytes), gir_error *err)
{
    for (size_t i = 0; i < n; i++) {
        gir_status st = check_tensor(kind, &items[i], err);
        if (st)
            return st;
    }
    return kind == GIR_PARAMS_TVM ? write_tvm(f, items, n, progress, err) : write_mxnet(f, items, n, progress, err);
}
