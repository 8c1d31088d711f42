/* LightNet's ".wts" weight files (the TensorRT text weight format):
 *
 *   COUNT
 *   NAME TYPE LEN V1 V2 ... VLEN      (COUNT records)
 *
 * whitespace-separated tokens; TYPE 0 = float32 values written as the hex
 * bit pattern ("3f99999a"), 2 = int8 values as one hex byte ("ff" = -1),
 * 1 = half (recognised, unsupported).  NAME is a tensor of the model; a
 * record naming no tensor is skipped to the end of its line. */
#include "lightnet.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WTS_NAME_MAX 511 /* LightNet reads names into a 512-byte buffer */
#define TOKEN_CAP 600

typedef struct tokrd {
    FILE *f;
    uint64_t pos;  /* offset of the next byte */
    unsigned line; /* line of the next byte (1-based) */
} tokrd;

static int rd_getc(tokrd *r)
{
    int c = getc(r->f);
    if (c != EOF) {
        r->pos++;
        if (c == '\n')
            r->line++;
    }
    return c;
}

/* Reads the next whitespace-delimited token into buf (at most cap-1 bytes
 * kept; *len is the full length).  False at end of file. */
static bool next_token(tokrd *r, char *buf, size_t cap, size_t *len, unsigned *line)
{
    int c;
    do
        c = rd_getc(r);
    while (c != EOF && isspace(c));
    if (c == EOF)
        return false;
    *line = r->line;
    size_t n = 0;
    while (c != EOF && !isspace(c)) {
        if (n + 1 < cap)
            buf[n] = (char)c;
        n++;
        c = rd_getc(r);
    }
    buf[n + 1 < cap ? n : cap - 1] = '\0';
    *len = n;
    return true;
}

static void skip_line(tokrd *r)
{
    int c;
    do
        c = rd_getc(r);
    while (c != EOF && c != '\n');
}

/* A decimal integer token as fscanf's %d reads it (optional sign). */
static bool parse_int(const char *s, int64_t *out)
{
    return gir_parse_i64(s, out) && *out >= INT32_MIN && *out <= INT32_MAX;
}

/* A hex token as %x / %hhx read it: optional 0x, then 1..max_digits hex
 * digits and nothing else. */
static bool parse_hex(const char *s, size_t len, unsigned max_digits, uint32_t *out)
{
    if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        len -= 2;
    }
    if (len == 0 || len > max_digits)
        return false;
    uint32_t v = 0;
    for (size_t i = 0; i < len; i++) {
        int d = gir_hex_digit((unsigned char)s[i]);
        if (d < 0)
            return false;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return true;
}

static const char *type_name(int type)
{
    return type == LN_WTS_FLOAT32 ? "float32" : type == LN_WTS_INT8 ? "int8" : "half";
}

static gir_status wts_fail(gir_error *err, gir_status code, const char *path, unsigned line, const char *fmt, ...)
    GIR_PRINTF(5, 6);

static gir_status wts_fail(gir_error *err, gir_status code, const char *path, unsigned line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = gir_vfail(err, code, fmt, ap);
    va_end(ap);
    if (line)
        gir_err_loc(err, "line %u", line);
    gir_err_file(err, path);
    return st;
}

void ln_wts_free(ln_wts *w)
{
    if (!w)
        return;
    free(w->recs);
    free(w->skipped);
    free(w->path);
    gir_arena_free(&w->arena);
    free(w);
}

const ln_wts_record *ln_wts_find(const ln_wts *w, const char *name)
{
    for (size_t i = w ? w->n : 0; i > 0; i--)
        if (strcmp(w->recs[i - 1].name, name) == 0)
            return &w->recs[i - 1];
    return NULL;
}

/* Reads len values of a record, checking each; when dst is not NULL the
 * values are stored little-endian there. */
static gir_status read_values(tokrd *r, const char *path, const char *name, int type, int64_t len,
                              unsigned char *dst, gir_error *err)
{
    char tok[TOKEN_CAP];
    size_t tlen;
    unsigned line = r->line;
    unsigned digits = type == LN_WTS_FLOAT32 ? 8 : 2;
    for (int64_t i = 0; i < len; i++) {
        if (!next_token(r, tok, sizeof tok, &tlen, &line))
            return wts_fail(err, GIR_E_PARAMS, path, line,
                            "weight '%s': the file ends after %lld of its %lld values", name, (long long)i,
                            (long long)len);
        uint32_t v;
        if (tlen >= sizeof tok || !parse_hex(tok, tlen, digits, &v))
            return wts_fail(err, GIR_E_PARAMS, path, line,
                            "weight '%s': value %lld of %lld is '%.40s', not a %s hex value (%u hex digits at most)",
                            name, (long long)i + 1, (long long)len, tok, type_name(type), digits);
        if (dst) {
            if (type == LN_WTS_FLOAT32)
                gir_put_le32(dst + 4 * i, v);
            else
                dst[i] = (unsigned char)v;
        }
    }
    return GIR_OK;
}

gir_status ln_wts_scan(const char *path, ln_wts_lookup lookup, void *ctx, size_t max_bytes, ln_wts **out,
                       gir_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        gir_fail(err, GIR_E_IO, "cannot open the weight file: %s", strerror(errno));
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0) {
        fclose(f);
        return wts_fail(err, GIR_E_IO, path, 0, "cannot stat the weight file: %s", strerror(errno));
    }
    if (max_bytes && (uint64_t)sb.st_size > max_bytes) {
        fclose(f);
        return wts_fail(err, GIR_E_LIMIT, path, 0, "weight file is %lld bytes, more than the %zu allowed",
                        (long long)sb.st_size, max_bytes);
    }
    ln_wts *w = calloc(1, sizeof *w);
    if (!w || !(w->path = gir_strdupf("%s", path))) {
        free(w);
        fclose(f);
        return gir_nomem(err);
    }
    gir_file_id_from_stat(&sb, &w->id);
    tokrd r = { f, 0, 1 };
    const char *cur_op = NULL; /* the op creating the tensor of the record being read */
    char tok[TOKEN_CAP];
    size_t tlen = 0;
    unsigned line = 1;
    gir_status st = GIR_OK;
    if (!next_token(&r, tok, sizeof tok, &tlen, &line) || tlen >= sizeof tok || !parse_int(tok, &w->count)) {
        st = wts_fail(err, GIR_E_PARAMS, path, line, "the file must start with the record count, found %s",
                      tlen ? "something else" : "nothing");
        goto fail;
    }
    if (w->count < 0) {
        st = wts_fail(err, GIR_E_PARAMS, path, line, "negative record count %lld", (long long)w->count);
        goto fail;
    }
    for (int64_t i = 0; i < w->count; i++) {
        if (!next_token(&r, tok, sizeof tok, &tlen, &line)) {
            st = wts_fail(err, GIR_E_PARAMS, path, r.line, "the count says %lld records but the file holds %lld",
                          (long long)w->count, (long long)i);
            goto fail;
        }
        if (tlen > WTS_NAME_MAX) {
            st = wts_fail(err, GIR_E_PARAMS, path, line, "record %lld: the name is %zu bytes, more than %d",
                          (long long)i + 1, tlen, WTS_NAME_MAX);
            goto fail;
        }
        int64_t numel = 0;
        gir_dtype dt = GIR_DT_UNKNOWN;
        cur_op = NULL;
        if (!lookup(ctx, tok, &numel, &dt, &cur_op)) {
            /* LightNet: "ignore unused weight NAME", then skips the line. */
            if (w->n_skipped < 8) {
                char **sk = realloc(w->skipped, (w->n_skipped + 1) * sizeof *sk);
                char *nm = gir_arena_strdup(&w->arena, tok);
                if (!sk || !nm) {
                    if (sk)
                        w->skipped = sk;
                    st = gir_nomem(err);
                    goto fail;
                }
                w->skipped = sk;
                w->skipped[w->n_skipped] = nm;
            }
            w->n_skipped++;
            skip_line(&r);
            cur_op = NULL;
            continue;
        }
        if (!GIR_GROW(w->recs, w->cap, w->n + 1)) {
            st = gir_nomem(err);
            goto fail;
        }
        ln_wts_record *rec = &w->recs[w->n];
        memset(rec, 0, sizeof *rec);
        rec->line = line;
        if (!(rec->name = gir_arena_strdup(&w->arena, tok))) {
            st = gir_nomem(err);
            goto fail;
        }
        int64_t type, len;
        unsigned l2;
        if (!next_token(&r, tok, sizeof tok, &tlen, &l2) || tlen >= sizeof tok || !parse_int(tok, &type) ||
            !next_token(&r, tok, sizeof tok, &tlen, &l2) || tlen >= sizeof tok || !parse_int(tok, &len)) {
            st = wts_fail(err, GIR_E_PARAMS, path, line, "weight '%s': its type and length must follow its name",
                          rec->name);
            goto fail;
        }
        if (type < 0 || len < 0) {
            st = wts_fail(err, GIR_E_PARAMS, path, line, "weight '%s': negative %s %lld", rec->name,
                          type < 0 ? "type" : "length", (long long)(type < 0 ? type : len));
            goto fail;
        }
        if (len != numel) {
            st = wts_fail(err, GIR_E_PARAMS, path, line,
                          "weight '%s': length %lld does not match the tensor's %lld elements", rec->name,
                          (long long)len, (long long)numel);
            goto fail;
        }
        if (type != LN_WTS_FLOAT32 && type != LN_WTS_INT8) {
            st = wts_fail(err, GIR_E_PARAMS, path, line, "weight '%s': type %lld is not supported (%s)", rec->name,
                          (long long)type,
                          type == LN_WTS_HALF ? "half; LightNet reads only 0 = float32 and 2 = int8"
                                              : "LightNet reads only 0 = float32 and 2 = int8");
            goto fail;
        }
        gir_dtype want = type == LN_WTS_FLOAT32 ? GIR_DT_F32 : GIR_DT_I8;
        if (dt != want) {
            st = wts_fail(err, GIR_E_PARAMS, path, line, "weight '%s': %s values (type %lld) for a %s tensor",
                          rec->name, type_name((int)type), (long long)type, ln_dtype_name(dt) ? ln_dtype_name(dt) : "?");
            goto fail;
        }
        rec->type = (int)type;
        rec->len = len;
        rec->offset = r.pos;
        rec->value_line = r.line;
        st = read_values(&r, path, rec->name, rec->type, len, NULL, err);
        if (st)
            goto fail;
        w->n++;
        cur_op = NULL;
    }
    fclose(f);
    *out = w;
    return GIR_OK;
fail:
    if (cur_op)
        gir_err_node(err, cur_op);
    fclose(f);
    ln_wts_free(w);
    return st;
}

/* ---- lazy loading -------------------------------------------------------- */

typedef struct wts_ctx {
    char *path;
    gir_file_id id;
    char *name;
    uint64_t offset;
    int type;
    int64_t len;
    unsigned line;
} wts_ctx;

static gir_status wts_load(void *vctx, void *dst, uint64_t nbytes, gir_error *err)
{
    wts_ctx *c = vctx;
    uint64_t want = (uint64_t)c->len * (c->type == LN_WTS_FLOAT32 ? 4 : 1);
    if (want != nbytes)
        return gir_fail(err, GIR_E_INTERNAL, "weight '%s': %llu bytes expected, %llu asked", c->name,
                        (unsigned long long)want, (unsigned long long)nbytes);
    int fd;
    TRY(gir_open_same(c->path, &c->id, "the weight file", &fd, err));
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return gir_nomem(err);
    }
    gir_status st = GIR_OK;
    if (c->offset > (uint64_t)INT64_MAX || fseeko(f, (off_t)c->offset, SEEK_SET) != 0) {
        st = wts_fail(err, GIR_E_IO, c->path, 0, "cannot seek to weight '%s'", c->name);
    } else {
        tokrd r = { f, c->offset, c->line };
        st = read_values(&r, c->path, c->name, c->type, c->len, dst, err);
        if (st)
            gir_err_replace_message(err, "weight '%s' changed since the file was first read: %s", c->name,
                                    err->message ? err->message : "");
    }
    fclose(f);
    return st;
}

static void wts_release(void *vctx)
{
    wts_ctx *c = vctx;
    free(c->path);
    free(c->name);
    free(c);
}

static const gir_loader wts_loader = { wts_load, wts_release };

gir_status ln_wts_tensor(const ln_wts *w, const ln_wts_record *rec, const gir_shape *shape, gir_tensor **out,
                         gir_error *err)
{
    wts_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return gir_nomem(err);
    c->path = gir_strdupf("%s", w->path);
    c->name = gir_strdupf("%s", rec->name);
    if (!c->path || !c->name) {
        wts_release(c);
        return gir_nomem(err);
    }
    c->id = w->id;
    c->offset = rec->offset;
    c->type = rec->type;
    c->len = rec->len;
    c->line = rec->value_line;
    return gir_tensor_lazy(rec->type == LN_WTS_FLOAT32 ? GIR_DT_F32 : GIR_DT_I8, shape, &wts_loader, c, out, err);
}

/* ---- writing ------------------------------------------------------------- */

static gir_status flush(gir_outfile *f, gir_buf *b, gir_error *err)
{
    if (b->failed)
        return gir_nomem(err);
    gir_status st = gir_outfile_write(f, b->data, b->len, err);
    b->len = 0;
    return st;
}

gir_status ln_wts_write(gir_outfile *f, const ln_wts_item *items, size_t n, gir_error *err)
{
    static const char hex[] = "0123456789abcdef";
    gir_buf b = GIR_BUF_INIT;
    gir_buf_printf(&b, "%zu\n", n);
    gir_status st = GIR_OK;
    for (size_t i = 0; i < n && st == GIR_OK; i++) {
        gir_tensor *t = items[i].t;
        bool was_loaded = t->data != NULL;
        const void *data;
        st = gir_tensor_load(t, &data, err);
        if (st)
            break;
        const unsigned char *p = data;
        bool f32 = t->dtype == GIR_DT_F32;
        uint64_t count = t->nbytes / (f32 ? 4 : 1);
        gir_buf_printf(&b, "%s %d %llu", items[i].name, f32 ? LN_WTS_FLOAT32 : LN_WTS_INT8,
                       (unsigned long long)count);
        for (uint64_t k = 0; k < count && st == GIR_OK; k++) {
            char v[10];
            v[0] = ' ';
            if (f32) {
                uint32_t u = gir_le32(p + 4 * k);
                for (int d = 0; d < 8; d++)
                    v[1 + d] = hex[(u >> (28 - 4 * d)) & 15];
                gir_buf_append(&b, v, 9);
            } else {
                v[1] = hex[p[k] >> 4];
                v[2] = hex[p[k] & 15];
                gir_buf_append(&b, v, 3);
            }
            if (b.len >= 1 << 16)
                st = flush(f, &b, err);
        }
        gir_buf_putc(&b, '\n');
        if (!was_loaded)
            gir_tensor_unload(t);
        if (st == GIR_OK)
            gir_progress_add(t->nbytes);
    }
    if (st == GIR_OK)
        st = flush(f, &b, err);
    gir_buf_free(&b);
    return st;
}
