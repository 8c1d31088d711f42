/* NumPy .npy reading and writing. */
#include "io/npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER (1u << 20) /* far more than any real header */
#define NPY_GROWTH_DIGITS 21      /* numpy's spare room for the first axis */
#define NPY_ALIGN 64

static bool host_is_little(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* ---- header parsing --------------------------------------------------------- */

typedef struct npy_hdr {
    gir_dtype dtype;
    bool swap;          /* stored big-endian: swap to little-endian */
    gir_shape shape;
    size_t data_off;
} npy_hdr;

typedef struct cursor {
    const unsigned char *p, *end;
    const unsigned char *base; /* start of the file, for offsets */
} cursor;

static size_t off_of(const cursor *c)
{
    return (size_t)(c->p - c->base);
}

static gir_status syntax(gir_error *err, const cursor *c, const char *fmt, ...) GIR_PRINTF(3, 4);
static gir_status syntax(gir_error *err, const cursor *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = gir_vfail(err, GIR_E_SYNTAX, fmt, ap);
    va_end(ap);
    gir_err_loc(err, "byte %zu", off_of(c));
    return st;
}

/* A printable description of the byte at the cursor, for messages. */
static const char *found(const cursor *c, char buf[16])
{
    if (c->p >= c->end)
        return "the end of the header";
    unsigned char ch = *c->p;
    if (ch >= 0x21 && ch < 0x7f && ch != '\'')
        snprintf(buf, 16, "'%c'", ch);
    else
        snprintf(buf, 16, "byte 0x%02x", ch);
    return buf;
}

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static gir_status expect_char(cursor *c, char ch, const char *ctx, gir_error *err)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == (unsigned char)ch) {
        c->p++;
        return GIR_OK;
    }
    char b[16];
    return syntax(err, c, "expected '%c' %s, found %s", ch, ctx, found(c, b));
}

/* A Python string literal without escapes into out (size n). */
static gir_status parse_str(cursor *c, char *out, size_t n, const char *what, gir_error *err)
{
    skip_ws(c);
    char b[16];
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) {
        return syntax(err, c, "expected a quoted string for %s, found %s", what, found(c, b));
    }
    unsigned char q = *c->p++;
    size_t len = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || *c->p == '\n' || *c->p < 0x20 || *c->p >= 0x7f)
            return syntax(err, c, "unexpected %s inside a string", found(c, b));
        if (len + 1 >= n)
            return syntax(err, c, "%s is too long", what);
        out[len++] = (char)*c->p++;
    }
    if (c->p >= c->end)
        return syntax(err, c, "unterminated string in %s", what);
    c->p++;
    out[len] = '\0';
    return GIR_OK;
}

static bool match_word(cursor *c, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return false;
    const unsigned char *after = c->p + n;
    if (after < c->end && ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') ||
                           (*after >= '0' && *after <= '9') || *after == '_'))
        return false;
    c->p = after;
    return true;
}

static gir_status parse_descr(cursor *c, npy_hdr *h, gir_error *err)
{
    skip_ws(c);
    if (c->p < c->end && (*c->p == '[' || *c->p == '{')) {
        gir_status st = gir_fail(err, GIR_E_UNSUPPORTED, "structured arrays (a descr list) are not supported");
        gir_err_loc(err, "byte %zu", off_of(c));
        return st;
    }
    const cursor at = *c;
    char d[16];
    gir_status st = parse_str(c, d, sizeof d, "descr", err);
    if (st)
        return st;
    static const struct {
        char kind;
        unsigned size;
        gir_dtype dt;
    } table[] = {
        { 'f', 2, GIR_DT_F16 }, { 'f', 4, GIR_DT_F32 }, { 'f', 8, GIR_DT_F64 }, { 'i', 1, GIR_DT_I8 },
        { 'i', 2, GIR_DT_I16 }, { 'i', 4, GIR_DT_I32 }, { 'i', 8, GIR_DT_I64 }, { 'u', 1, GIR_DT_U8 },
        { 'u', 2, GIR_DT_U16 }, { 'u', 4, GIR_DT_U32 }, { 'u', 8, GIR_DT_U64 }, { 'b', 1, GIR_DT_BOOL },
    };
    char order = d[0];
    h->dtype = GIR_DT_UNKNOWN;
    if (strlen(d) == 3 && (order == '<' || order == '>' || order == '|' || order == '=') && d[2] >= '1' &&
        d[2] <= '8') {
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
            if (table[i].kind == d[1] && table[i].size == (unsigned)(d[2] - '0'))
                h->dtype = table[i].dt;
    }
    if (h->dtype != GIR_DT_UNKNOWN && order == '|' && gir_dtype_size(h->dtype) > 1)
        h->dtype = GIR_DT_UNKNOWN; /* '|' (not applicable) only for one-byte types */
    if (h->dtype == GIR_DT_UNKNOWN) {
        st = gir_fail(err, GIR_E_DTYPE, "descr '%s' is not a supported element type", d);
        gir_err_loc(err, "byte %zu", off_of(&at) + 1);
        return st;
    }
    bool big = order == '>' || (order == '=' && !host_is_little());
    h->swap = big && gir_dtype_size(h->dtype) > 1;
    return GIR_OK;
}

static gir_status parse_fortran(cursor *c, bool *fortran, gir_error *err)
{
    skip_ws(c);
    if (match_word(c, "True"))
        *fortran = true;
    else if (match_word(c, "False"))
        *fortran = false;
    else {
        char b[16];
        return syntax(err, c, "expected True or False for fortran_order, found %s", found(c, b));
    }
    return GIR_OK;
}

static gir_status parse_shape(cursor *c, gir_shape *s, gir_error *err)
{
    gir_status st = expect_char(c, '(', "to start the shape", err);
    if (st)
        return st;
    s->rank = 0;
    char b[16];
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == ')') {
            c->p++;
            break;
        }
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return syntax(err, c, "expected a dimension or ')' in the shape, found %s", found(c, b));
        if (s->rank == GIR_MAX_RANK) {
            st = gir_fail(err, GIR_E_LIMIT, "the shape has more than %d dimensions", GIR_MAX_RANK);
            gir_err_loc(err, "byte %zu", off_of(c));
            return st;
        }
        uint64_t v = 0;
        const cursor start = *c;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (!gir_mul_u64(v, 10, &v) || !gir_add_u64(v, (uint64_t)(*c->p - '0'), &v) || v > INT64_MAX) {
                st = gir_fail(err, GIR_E_LIMIT, "dimension %d of the shape is too large", s->rank);
                gir_err_loc(err, "byte %zu", off_of(&start));
                return st;
            }
            c->p++;
        }
        if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) /* Python 2 longs */
            c->p++;
        s->dims[s->rank++] = (int64_t)v;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == ')') {
            if (s->rank == 1)
                return syntax(err, c, "a one-dimensional shape needs a trailing comma, found %s", found(c, b));
            c->p++;
            break;
        }
        return syntax(err, c, "expected ',' or ')' in the shape, found %s", found(c, b));
    }
    return GIR_OK;
}

/* Parses magic, version and header dict of d[0..len). */
static gir_status parse_header(const unsigned char *d, size_t len, npy_hdr *h, gir_error *err)
{
    memset(h, 0, sizeof *h);
    if (len < NPY_MAGIC_LEN + 2 || memcmp(d, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        gir_status st = gir_fail(err, GIR_E_SYNTAX, "not a .npy file: the \\x93NUMPY magic string is missing");
        gir_err_loc(err, "byte 0");
        return st;
    }
    unsigned major = d[6], minor = d[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
        gir_status st = gir_fail(err, GIR_E_UNSUPPORTED, ".npy format version %u.%u is not supported (1.0, 2.0, 3.0 are)",
                                 major, minor);
        gir_err_loc(err, "byte 6");
        return st;
    }
    size_t pre = major == 1 ? 10 : 12;
    if (len < pre) {
        gir_status st = gir_fail(err, GIR_E_SYNTAX, "the file ends inside the header length");
        gir_err_loc(err, "byte %zu", len);
        return st;
    }
    uint64_t hlen = major == 1 ? (uint64_t)(d[8] | d[9] << 8) : gir_le32(d + 8);
    if (hlen > NPY_MAX_HEADER) {
        gir_status st = gir_fail(err, GIR_E_LIMIT, "header of %llu bytes is larger than the %u allowed",
                                 (unsigned long long)hlen, NPY_MAX_HEADER);
        gir_err_loc(err, "byte 8");
        return st;
    }
    if (hlen > len - pre) {
        gir_status st = gir_fail(err, GIR_E_SYNTAX, "header declares %llu bytes but the file has only %zu after byte %zu",
                                 (unsigned long long)hlen, len - pre, pre);
        gir_err_loc(err, "byte 8");
        return st;
    }
    cursor c = { d + pre, d + pre + hlen, d };
    gir_status st = expect_char(&c, '{', "to start the header", err);
    if (st)
        return st;
    bool seen[3] = { false, false, false };
    bool fortran = false;
    static const char *const keys[3] = { "descr", "fortran_order", "shape" };
    for (;;) {
        skip_ws(&c);
        if (c.p < c.end && *c.p == '}') {
            c.p++;
            break;
        }
        const cursor kat = c;
        char key[32];
        if ((st = parse_str(&c, key, sizeof key, "a header key", err)))
            return st;
        int k = -1;
        for (int i = 0; i < 3; i++)
            if (strcmp(key, keys[i]) == 0)
                k = i;
        if (k < 0)
            return syntax(err, &kat, "unknown header key '%s'", key);
        if (seen[k])
            return syntax(err, &kat, "header key '%s' appears twice", key);
        seen[k] = true;
        if ((st = expect_char(&c, ':', "after a header key", err)))
            return st;
        if (k == 0)
            st = parse_descr(&c, h, err);
        else if (k == 1)
            st = parse_fortran(&c, &fortran, err);
        else
            st = parse_shape(&c, &h->shape, err);
        if (st)
            return st;
        skip_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue;
        }
        if ((st = expect_char(&c, '}', "or ',' after a header value", err)))
            return st;
        break;
    }
    for (int i = 0; i < 3; i++)
        if (!seen[i])
            return syntax(err, &c, "the header has no '%s' key", keys[i]);
    /* Only padding may follow: spaces and the final newline. */
    while (c.p < c.end && (*c.p == ' ' || *c.p == '\t' || *c.p == '\r' || *c.p == '\n'))
        c.p++;
    if (c.p < c.end) {
        char b[16];
        return syntax(err, &c, "unexpected %s after the header dict", found(&c, b));
    }
    if (fortran) {
        st = gir_fail(err, GIR_E_UNSUPPORTED, "fortran_order True (column-major data) is not supported");
        gir_err_loc(err, "byte %zu", pre);
        return st;
    }
    h->data_off = pre + (size_t)hlen;
    return GIR_OK;
}

/* ---- reading ---------------------------------------------------------------- */

static void swap_bytes(unsigned char *p, uint64_t count, size_t size)
{
    for (uint64_t i = 0; i < count; i++, p += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* Decodes d[0..len); owned, when not NULL, is d itself (malloc'd) and is
 * reused for the tensor's data; it is freed on failure. */
static gir_status decode(unsigned char *owned, const unsigned char *d, size_t len, gir_tensor **out,
                         gir_error *err)
{
    *out = NULL;
    npy_hdr h;
    gir_status st = parse_header(d, len, &h, err);
    uint64_t nbytes = 0;
    if (st == GIR_OK)
        st = gir_tensor_size(h.dtype, &h.shape, &nbytes, err);
    if (st == GIR_OK && nbytes != len - h.data_off) {
        char sh[160];
        gir_shape_str(&h.shape, sh, sizeof sh);
        st = gir_fail(err, GIR_E_PARAMS, "%s %s needs %llu data bytes, the file has %zu", gir_dtype_name(h.dtype), sh,
                      (unsigned long long)nbytes, len - h.data_off);
        gir_err_loc(err, "byte %zu", h.data_off);
    }
    if (st) {
        free(owned);
        return st;
    }
    unsigned char *data;
    if (owned) {
        memmove(owned, owned + h.data_off, (size_t)nbytes);
        data = realloc(owned, nbytes ? (size_t)nbytes : 1);
        if (!data)
            data = owned; /* shrinking failed: keep the larger block */
    } else {
        data = malloc(nbytes ? (size_t)nbytes : 1);
        if (!data)
            return gir_nomem(err);
        memcpy(data, d + h.data_off, (size_t)nbytes);
    }
    size_t esz = gir_dtype_size(h.dtype);
    if (h.swap)
        swap_bytes(data, nbytes / esz, esz);
    if (h.dtype == GIR_DT_BOOL)
        for (uint64_t i = 0; i < nbytes; i++)
            data[i] = data[i] != 0;
    return gir_tensor_adopt(h.dtype, &h.shape, data, out, err);
}

gir_status gir_npy_parse(const void *data, size_t len, const char *name, gir_tensor **out, gir_error *err)
{
    gir_status st = decode(NULL, data, len, out, err);
    if (st)
        gir_err_file(err, name);
    return st;
}

gir_status gir_npy_read(const char *path, gir_tensor **out, gir_error *err)
{
    *out = NULL;
    char *buf;
    size_t len;
    gir_status st = gir_read_file(path, 0, &buf, &len, err);
    if (st == GIR_OK)
        st = decode((unsigned char *)buf, (const unsigned char *)buf, len, out, err);
    if (st)
        gir_err_file(err, path);
    return st;
}

/* ---- writing ---------------------------------------------------------------- */

static const char *descr_of(gir_dtype dt)
{
    switch (dt) {
    case GIR_DT_F16: return "<f2";
    case GIR_DT_F32: return "<f4";
    case GIR_DT_F64: return "<f8";
    case GIR_DT_I8: return "|i1";
    case GIR_DT_I16: return "<i2";
    case GIR_DT_I32: return "<i4";
    case GIR_DT_I64: return "<i8";
    case GIR_DT_U8: return "|u1";
    case GIR_DT_U16: return "<u2";
    case GIR_DT_U32: return "<u4";
    case GIR_DT_U64: return "<u8";
    case GIR_DT_BOOL: return "|b1";
    default: return NULL;
    }
}

/* The header numpy (1.23 and later) writes for the same array: the dict in
 * Python's repr, spare room for the first axis, padded with spaces to a
 * multiple of 64 bytes and ended by a newline. */
static gir_status build_header(const gir_tensor *t, gir_buf *b, gir_error *err)
{
    const char *descr = descr_of(t->dtype);
    if (!descr)
        return gir_fail(err, GIR_E_UNSUPPORTED, "%s has no .npy element type", gir_dtype_name(t->dtype));
    if (t->shape.rank < 0 || t->shape.rank > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_SHAPE, "a tensor of unknown rank cannot be written as .npy");
    gir_buf d = GIR_BUF_INIT;
    gir_buf_printf(&d, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->shape.rank; i++) {
        if (t->shape.dims[i] < 0) {
            gir_buf_free(&d);
            return gir_fail(err, GIR_E_SHAPE, "dimension %d is unknown", i);
        }
        gir_buf_printf(&d, "%s%lld", i ? ", " : "", (long long)t->shape.dims[i]);
    }
    gir_buf_puts(&d, t->shape.rank == 1 ? ",), }" : "), }");
    if (t->shape.rank > 0) {
        char first[24];
        int n = snprintf(first, sizeof first, "%lld", (long long)t->shape.dims[0]);
        for (int i = n; i < NPY_GROWTH_DIGITS; i++)
            gir_buf_putc(&d, ' ');
    }
    if (d.failed) {
        gir_buf_free(&d);
        return gir_nomem(err);
    }
    size_t hlen = d.len + 1; /* with the newline */
    size_t pad = NPY_ALIGN - ((NPY_MAGIC_LEN + 2 + 2 + hlen) % NPY_ALIGN);
    size_t total = hlen + pad;
    bool v2 = total > 0xffff;
    if (v2) {
        pad = NPY_ALIGN - ((NPY_MAGIC_LEN + 2 + 4 + hlen) % NPY_ALIGN);
        total = hlen + pad;
    }
    unsigned char pre[12];
    memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
    pre[6] = v2 ? 2 : 1;
    pre[7] = 0;
    if (v2) {
        gir_put_le32(pre + 8, (uint32_t)total);
    } else {
        pre[8] = (unsigned char)total;
        pre[9] = (unsigned char)(total >> 8);
    }
    gir_buf_append(b, pre, v2 ? 12 : 10);
    gir_buf_append(b, d.data, d.len);
    for (size_t i = 0; i < pad; i++)
        gir_buf_putc(b, ' ');
    gir_buf_putc(b, '\n');
    gir_buf_free(&d);
    return b->failed ? gir_nomem(err) : GIR_OK;
}

gir_status gir_npy_save(const char *path, gir_tensor *t, bool overwrite, gir_error *err)
{
    gir_buf hdr = GIR_BUF_INIT;
    gir_status st = build_header(t, &hdr, err);
    if (st) {
        gir_buf_free(&hdr);
        gir_err_file(err, path);
        return st;
    }
    bool was_loaded = t->data != NULL;
    const void *data = NULL;
    st = gir_tensor_load(t, &data, err);
    gir_outfile *o = NULL;
    if (st == GIR_OK)
        st = gir_outfile_open(path, overwrite, &o, err);
    if (st == GIR_OK)
        st = gir_outfile_write(o, hdr.data, hdr.len, err);
    if (st == GIR_OK)
        st = gir_outfile_write(o, data, (size_t)t->nbytes, err);
    if (st == GIR_OK) {
        st = gir_outfile_commit(o, err);
    } else if (o) {
        gir_outfile_abort(o);
    }
    if (!was_loaded)
        gir_tensor_unload(t);
    gir_buf_free(&hdr);
    if (st)
        gir_err_file(err, path);
    return st;
}

gir_status gir_npy_write(const char *path, gir_tensor *t, gir_error *err)
{
    return gir_npy_save(path, t, true, err);
}
