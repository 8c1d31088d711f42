/* ONNX tensors: data types, TensorProto -> gir_tensor (inline data taken
 * over from the unpacked message, external data loaded lazily from the side
 * file), base64 for metadata blobs. */
#include "onnx.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- data types ------------------------------------------------------------ */

static const struct {
    int32_t onnx;
    gir_dtype gir;
    const char *name;
} dtypes[] = {
    { 1, GIR_DT_F32, "FLOAT" },     { 2, GIR_DT_U8, "UINT8" },      { 3, GIR_DT_I8, "INT8" },
    { 4, GIR_DT_U16, "UINT16" },    { 5, GIR_DT_I16, "INT16" },     { 6, GIR_DT_I32, "INT32" },
    { 7, GIR_DT_I64, "INT64" },     { 8, GIR_DT_UNKNOWN, "STRING" }, { 9, GIR_DT_BOOL, "BOOL" },
    { 10, GIR_DT_F16, "FLOAT16" },  { 11, GIR_DT_F64, "DOUBLE" },   { 12, GIR_DT_U32, "UINT32" },
    { 13, GIR_DT_U64, "UINT64" },   { 14, GIR_DT_UNKNOWN, "COMPLEX64" },
    { 15, GIR_DT_UNKNOWN, "COMPLEX128" }, { 16, GIR_DT_BF16, "BFLOAT16" },
};

gir_dtype onnx_dtype_to_gir(int32_t t)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].onnx == t)
            return dtypes[i].gir;
    return GIR_DT_UNKNOWN;
}

int32_t onnx_dtype_from_gir(gir_dtype t)
{
    if (t == GIR_DT_UNKNOWN)
        return 0;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].gir == t)
            return dtypes[i].onnx;
    return 0;
}

const char *onnx_dtype_name(int32_t t)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].onnx == t)
            return dtypes[i].name;
    return NULL;
}

/* ---- external data ---------------------------------------------------------- */

typedef struct ext_ctx {
    char *path;      /* resolved side file */
    uint64_t offset;
    gir_file_id id;  /* the side file as the reader saw it */
} ext_ctx;

static gir_status ext_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    ext_ctx *x = ctx;
    int fd;
    TRY(gir_open_same(x->path, &x->id, "external data", &fd, err));
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < x->offset || (uint64_t)st.st_size - x->offset < nbytes) {
        close(fd);
        gir_fail(err, GIR_E_PARAMS, "external data is short: needs %llu bytes at offset %llu",
                 (unsigned long long)nbytes, (unsigned long long)x->offset);
        gir_err_file(err, x->path);
        return GIR_E_PARAMS;
    }
    uint64_t done = gir_pread_full(fd, dst, nbytes, x->offset);
    int e = errno;
    close(fd);
    if (done < nbytes) {
        gir_fail(err, e ? GIR_E_IO : GIR_E_PARAMS, "cannot read external data: %s", e ? strerror(e) : "file ended early");
        gir_err_file(err, x->path);
        return e ? GIR_E_IO : GIR_E_PARAMS;
    }
    return GIR_OK;
}

static void ext_release(void *ctx)
{
    ext_ctx *x = ctx;
    if (x) {
        free(x->path);
        free(x);
    }
}

static const gir_loader ext_loader = { ext_load, ext_release };

/* Is rel a safe relative path: not absolute, no ".." component, not empty? */
static bool safe_relative(const char *rel)
{
    if (!*rel || rel[0] == '/')
        return false;
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return false;
        if (!e)
            break;
        p = e + 1;
    }
    return true;
}

static gir_status parse_u64(const char *what, const char *s, uint64_t *out, const char *tname, gir_error *err)
{
    int64_t v;
    if (!gir_parse_i64(s, &v) || v < 0) {
        gir_fail(err, GIR_E_SCHEMA, "external data %s '%s' of tensor '%s' is not a non-negative integer", what, s,
                 tname);
        return GIR_E_SCHEMA;
    }
    *out = (uint64_t)v;
    return GIR_OK;
}

static gir_status external_tensor(Onnx__TensorProto *tp, const onnx_source *src, gir_dtype dt,
                                  const gir_shape *shape, uint64_t nbytes, gir_tensor **out, gir_error *err)
{
    const char *tname = tp->name ? tp->name : "";
    const char *location = NULL;
    uint64_t offset = 0, length = nbytes;
    bool has_length = false;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        const char *k = e->key ? e->key : "", *v = e->value ? e->value : "";
        gir_status st = GIR_OK;
        if (strcmp(k, "location") == 0)
            location = v;
        else if (strcmp(k, "offset") == 0)
            st = parse_u64("offset", v, &offset, tname, err);
        else if (strcmp(k, "length") == 0) {
            st = parse_u64("length", v, &length, tname, err);
            has_length = true;
        }
        /* "checksum" and unknown keys carry no layout. */
        if (st)
            return st;
    }
    if (!location)
        return gir_fail(err, GIR_E_SCHEMA, "tensor '%s' has external data without a location", tname);
    if (has_length && length != nbytes)
        return gir_fail(err, GIR_E_PARAMS, "external data of tensor '%s' has length %llu, but %s %s needs %llu bytes",
                        tname, (unsigned long long)length, gir_dtype_name(dt), "data", (unsigned long long)nbytes);
    if (!safe_relative(location))
        return gir_fail(err, GIR_E_PARAMS,
                        "external data location '%s' of tensor '%s' is not a relative path inside the model's "
                        "directory",
                        location, tname);
    char *path = gir_path_join(src->dir, location);
    if (!path)
        return gir_nomem(err);
    char *real = realpath(path, NULL);
    if (!real) {
        gir_status st = gir_fail(err, errno == ENOMEM ? GIR_E_NOMEM : GIR_E_IO,
                                 "cannot open external data '%s' of tensor '%s': %s", location, tname,
                                 strerror(errno));
        free(path);
        return st;
    }
    free(path);
    size_t dl = strlen(src->dir_real);
    bool inside = strncmp(real, src->dir_real, dl) == 0 && (real[dl] == '/' || (dl == 1 && src->dir_real[0] == '/'));
    if (!inside) {
        free(real);
        return gir_fail(err, GIR_E_PARAMS, "external data location '%s' of tensor '%s' escapes the model's directory",
                        location, tname);
    }
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
        gir_status s = gir_fail(err, GIR_E_IO, "external data '%s' of tensor '%s' is not a regular file", location,
                                tname);
        free(real);
        return s;
    }
    uint64_t end;
    if (!gir_add_u64(offset, nbytes, &end) || end > (uint64_t)st.st_size) {
        free(real);
        return gir_fail(err, GIR_E_PARAMS,
                        "external data '%s' is short: tensor '%s' needs bytes %llu..%llu but the file has %llu",
                        location, tname, (unsigned long long)offset, (unsigned long long)(offset + nbytes),
                        (unsigned long long)st.st_size);
    }
    ext_ctx *x = calloc(1, sizeof *x);
    if (!x) {
        free(real);
        return gir_nomem(err);
    }
    x->path = real;
    x->offset = offset;
    gir_file_id_from_stat(&st, &x->id);
    return gir_tensor_lazy(dt, shape, &ext_loader, x, out, err);
}

/* ---- inline data ------------------------------------------------------------ */

/* Narrows int32_data (ONNX stores 8/16-bit ints, bool, float16 and bfloat16
 * there, one element per int32) into an element array. */
static void narrow_int32(const int32_t *src, size_t n, gir_dtype dt, unsigned char *dst)
{
    size_t es = gir_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)src[i];
        if (es == 1)
            dst[i] = (unsigned char)v;
        else if (es == 2) {
            dst[2 * i] = (unsigned char)v;
            dst[2 * i + 1] = (unsigned char)(v >> 8);
        } else
            gir_put_le32(dst + 4 * i, v);
    }
}

gir_status onnx_tensor_read(Onnx__TensorProto *tp, const onnx_source *src, gir_tensor **out, gir_error *err)
{
    *out = NULL;
    const char *tname = tp->name ? tp->name : "";
    int32_t odt = tp->has_data_type ? tp->data_type : 0;
    gir_dtype dt = onnx_dtype_to_gir(odt);
    if (dt == GIR_DT_UNKNOWN) {
        const char *n = onnx_dtype_name(odt);
        if (n)
            return gir_fail(err, GIR_E_UNSUPPORTED, "tensor '%s' has element type %s, which graphconv cannot hold",
                            tname, n);
        return gir_fail(err, GIR_E_DTYPE, "tensor '%s' has unknown element type %d", tname, (int)odt);
    }
    if (tp->segment)
        return gir_fail(err, GIR_E_UNSUPPORTED, "tensor '%s' is a segment of a larger tensor", tname);
    gir_shape shape;
    if (tp->n_dims > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "tensor '%s' has rank %zu, more than %d", tname, tp->n_dims, GIR_MAX_RANK);
    shape.rank = (int)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return gir_fail(err, GIR_E_SHAPE, "tensor '%s' has negative dimension %lld", tname,
                            (long long)tp->dims[i]);
        shape.dims[i] = tp->dims[i];
    }
    uint64_t nbytes;
    gir_status st = gir_tensor_size(dt, &shape, &nbytes, err);
    if (st) {
        gir_err_node(err, tname);
        return st;
    }
    uint64_t numel = nbytes / gir_dtype_size(dt);
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return external_tensor(tp, src, dt, &shape, nbytes, out, err);
    if (tp->n_external_data)
        return gir_fail(err, GIR_E_SCHEMA, "tensor '%s' has external_data entries but data_location is not EXTERNAL",
                        tname);

    size_t es = gir_dtype_size(dt);
    if (tp->has_raw_data) {
        if (tp->raw_data.len != nbytes)
            return gir_fail(err, GIR_E_PARAMS, "tensor '%s' has %zu bytes of raw_data, but %s %s needs %llu", tname,
                            tp->raw_data.len, gir_dtype_name(dt), "data", (unsigned long long)nbytes);
        void *data = tp->raw_data.data;
        if (!data) { /* zero-sized */
            if (!(data = malloc(1)))
                return gir_nomem(err);
        }
        tp->raw_data.data = NULL;
        tp->raw_data.len = 0;
        tp->has_raw_data = 0;
        return gir_tensor_adopt(dt, &shape, data, out, err);
    }

    /* Typed fields: which one holds this type, and its length. */
    size_t have = 0;
    const char *field = NULL;
    switch (dt) {
    case GIR_DT_F32: have = tp->n_float_data; field = "float_data"; break;
    case GIR_DT_I64: have = tp->n_int64_data; field = "int64_data"; break;
    case GIR_DT_F64: have = tp->n_double_data; field = "double_data"; break;
    case GIR_DT_U32:
    case GIR_DT_U64: have = tp->n_uint64_data; field = "uint64_data"; break;
    default: have = tp->n_int32_data; field = "int32_data"; break;
    }
    size_t other = tp->n_float_data + tp->n_int32_data + tp->n_int64_data + tp->n_double_data + tp->n_uint64_data +
                   tp->n_string_data - have;
    if (other)
        return gir_fail(err, GIR_E_SCHEMA, "tensor '%s' of type %s has data in a field other than %s", tname,
                        onnx_dtype_name(odt), field);
    if (have != numel)
        return gir_fail(err, GIR_E_PARAMS, "tensor '%s' has %zu elements in %s, but its shape needs %llu", tname,
                        have, field, (unsigned long long)numel);
    /* float_data, int64_data and double_data already have the layout. */
    void **steal = NULL;
    size_t *steal_n = NULL;
    if (dt == GIR_DT_F32) {
        steal = (void **)&tp->float_data;
        steal_n = &tp->n_float_data;
    } else if (dt == GIR_DT_I64) {
        steal = (void **)&tp->int64_data;
        steal_n = &tp->n_int64_data;
    } else if (dt == GIR_DT_F64) {
        steal = (void **)&tp->double_data;
        steal_n = &tp->n_double_data;
    } else if (dt == GIR_DT_U64) {
        steal = (void **)&tp->uint64_data;
        steal_n = &tp->n_uint64_data;
    }
    if (steal && *steal) {
        void *data = *steal;
        *steal = NULL;
        *steal_n = 0;
        return gir_tensor_adopt(dt, &shape, data, out, err);
    }
    unsigned char *data = malloc(nbytes ? (size_t)nbytes : 1);
    if (!data)
        return gir_nomem(err);
    if (dt == GIR_DT_U32) {
        for (size_t i = 0; i < have; i++) {
            if (tp->uint64_data[i] > UINT32_MAX) {
                free(data);
                return gir_fail(err, GIR_E_PARAMS, "tensor '%s' element %zu (%llu) does not fit uint32", tname, i,
                                (unsigned long long)tp->uint64_data[i]);
            }
            gir_put_le32(data + 4 * i, (uint32_t)tp->uint64_data[i]);
        }
    } else if (have) {
        (void)es;
        narrow_int32(tp->int32_data, have, dt, data);
    }
    return gir_tensor_adopt(dt, &shape, data, out, err);
}

gir_status onnx_read_tensor_file(const char *path, gir_tensor **out, char **name, gir_error *err)
{
    *out = NULL;
    if (name)
        *name = NULL;
    char *data;
    size_t len;
    gir_status st = gir_read_file(path, 0, &data, &len, err);
    if (st)
        return st;
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)data);
    free(data);
    if (!tp) {
        gir_fail(err, GIR_E_SYNTAX, "not a serialized ONNX TensorProto");
        gir_err_file(err, path);
        return GIR_E_SYNTAX;
    }
    onnx_source src = { gir_path_dirname(path), NULL };
    if (src.dir)
        src.dir_real = realpath(src.dir, NULL);
    if (!src.dir || !src.dir_real)
        st = gir_fail(err, GIR_E_IO, "cannot resolve the directory of the tensor file");
    else
        st = onnx_tensor_read(tp, &src, out, err);
    if (!st && name && !(*name = gir_strdupf("%s", tp->name ? tp->name : ""))) {
        gir_tensor_unref(*out);
        *out = NULL;
        st = gir_nomem(err);
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
    free(src.dir);
    free(src.dir_real);
    if (st)
        gir_err_file(err, path);
    return st;
}

/* ---- base64 ------------------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *onnx_base64_encode(const uint8_t *p, size_t n)
{
    if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    /* three bytes a time; a last one or two padded with '=' */
    for (size_t i = 0; i < n; i += 3) {
        size_t left = n - i;
        uint32_t v = (uint32_t)p[i] << 16 | (left > 1 ? (uint32_t)p[i + 1] << 8 : 0) | (left > 2 ? p[i + 2] : 0);
        *o++ = b64[v >> 18];
        *o++ = b64[(v >> 12) & 63];
        *o++ = left > 1 ? b64[(v >> 6) & 63] : '=';
        *o++ = left > 2 ? b64[v & 63] : '=';
    }
    *o = 0;
    return out;
}

static int b64_val(char c)
{
    const char *at = c ? strchr(b64, c) : NULL;
    return at ? (int)(at - b64) : -1;
}

bool onnx_base64_decode(const char *s, uint8_t **out, size_t *n)
{
    size_t len = strlen(s);
    *out = NULL;
    *n = 0;
    if (len % 4)
        return false;
    uint8_t *buf = malloc(len / 4 * 3 + 1);
    if (!buf)
        return false;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            char c = s[i + k];
            if (c == '=' && i + 4 == len && k >= 2) {
                v[k] = 0;
                pad++;
            } else if (pad || (v[k] = b64_val(c)) < 0) {
                free(buf);
                return false;
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        buf[o++] = (uint8_t)(w >> 16);
        if (pad < 2)
            buf[o++] = (uint8_t)(w >> 8);
        if (pad < 1)
            buf[o++] = (uint8_t)w;
    }
    *out = buf;
    *n = o;
    return true;
}
