/* JSON: the pull lexer and the DOM built from its tokens or from yajl's
 * callbacks, read from text or a file, with line:column diagnostics (see
 * json.h); json_value.c reads the values, json_write.c emits JSON. */
#include "json.h"
#include "../core/limits.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_parse.h>

struct gir_json_doc {
    gir_arena arena;
    char *pool;       /* string pool: the unused tail of an arena chunk */
    size_t pool_left;
    const char *text;
    size_t len;
    char *owned_text; /* when read from a file */
    void *mapped;     /* or mapped from it (mapped_len bytes) */
    size_t mapped_len;
    gir_json root;
    size_t n_values;
};

/* ---- the builder: an explicit stack of open containers ------------------- */

typedef struct frame {
    gir_json_type type; /* ARRAY or OBJECT */
    size_t offset;      /* of '[' or '{' */
    size_t start;       /* its first pending member (OBJECT) or item (ARRAY) */
    const char *key;    /* OBJECT: key of the value expected next */
    size_t key_len, key_offset;
} frame;

typedef struct builder {
    gir_json_doc *doc;
    yajl_handle h;
    unsigned max_depth;
    bool allow_dup;
    frame *frames;
    size_t n_frames, cap_frames;
    /* Children of the open containers, in order: objects' members and
     * arrays' items on separate stacks. */
    gir_json_member *pending;
    size_t n_pending, cap_pending;
    gir_json *pending_items;
    size_t n_pending_items, cap_pending_items;
    gir_json *root_slot;      /* where the outermost value goes (NULL: the root) */
    bool have_root;
    gir_status status; /* set by a callback that cancels the parse */
    gir_error *err;
} builder;

static size_t consumed(const builder *b)
{
    return yajl_get_bytes_consumed(b->h);
}

/* Offset of the opening quote of the string token that ends at end (the
 * offset just past its closing quote). */
static size_t string_start(const char *text, size_t end)
{
    if (end < 2)
        return 0;
    size_t q = end - 1; /* closing quote */
    while (q > 0) {
        q--;
        if (text[q] != '"')
            continue;
        size_t k = 0;
        while (k < q && text[q - 1 - k] == '\\')
            k++;
        if (k % 2 == 0)
            return q;
    }
    return 0;
}

static int oom(builder *b)
{
    b->status = gir_nomem(b->err);
    return 0;
}

static int cancel(builder *b, gir_status code, size_t offset, const char *fmt, ...) GIR_PRINTF(4, 5);
static int cancel(builder *b, gir_status code, size_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    b->status = gir_vfail(b->err, code, fmt, ap);
    va_end(ap);
    if (b->status == GIR_E_NOMEM)
        return 0;
    unsigned line, col;
    gir_json_line_col(b->doc, offset, &line, &col);
    gir_err_loc(b->err, "line %u:%u", line, col);
    return 0;
}

#define POOL_CHUNK 65536u

/* A NUL-terminated copy of s in the document's string pool (strings are
 * packed without alignment; long ones get their own arena allocation). */
static char *pool_strndup(gir_json_doc *d, const char *s, size_t n)
{
    char *p;
    if (n >= POOL_CHUNK / 8) {
        p = gir_arena_alloc_uninit(&d->arena, n + 1);
    } else {
        if (d->pool_left < n + 1) {
            d->pool = gir_arena_alloc_uninit(&d->arena, POOL_CHUNK);
            d->pool_left = d->pool ? POOL_CHUNK : 0;
        }
        p = d->pool;
        if (p) {
            d->pool += n + 1;
            d->pool_left -= n + 1;
        }
    }
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* The place of a new value in the innermost open container (or the root),
 * with its type, offset and len set and the rest cleared; NULL when out
 * of memory.  Values are built in place: assembling one elsewhere and
 * copying it costs more than the rest of adding it. */
static gir_json *new_value(builder *b, gir_json_type t, size_t offset, size_t len)
{
    gir_json *v;
    if (b->n_frames == 0) {
        v = b->root_slot ? b->root_slot : &b->doc->root;
        b->have_root = true;
    } else if (b->frames[b->n_frames - 1].type == GIR_JSON_ARRAY) {
        if (b->n_pending_items == b->cap_pending_items &&
            !GIR_GROW(b->pending_items, b->cap_pending_items, b->n_pending_items + 1))
            return NULL;
        v = &b->pending_items[b->n_pending_items++];
    } else {
        frame *f = &b->frames[b->n_frames - 1];
        if (b->n_pending == b->cap_pending && !GIR_GROW(b->pending, b->cap_pending, b->n_pending + 1))
            return NULL;
        gir_json_member *m = &b->pending[b->n_pending++];
        m->key = f->key;
        m->key_len = f->key_len;
        m->key_offset = f->key_offset;
        f->key = NULL;
        v = &m->value;
    }
    b->doc->n_values++;
    v->type = t;
    v->b = false;
    v->offset = offset;
    v->len = len;
    v->u.str = NULL;
    return v;
}

/* ---- values, keys and containers at known offsets (both parsers) ----------- */

static int put_literal(builder *b, gir_json_type t, bool val, size_t offset)
{
    gir_json *v = new_value(b, t, offset, 0);
    if (!v)
        return oom(b);
    v->b = val;
    return 1;
}

/* A string or number value over its text c (NULL: copying it failed). */
static int put_text(builder *b, gir_json_type t, const char *c, size_t len, size_t offset)
{
    gir_json *v = c ? new_value(b, t, offset, len) : NULL;
    if (!v)
        return oom(b);
    if (t == GIR_JSON_STRING)
        v->u.str = c;
    else
        v->u.num = c;
    return 1;
}

/* s is the number's text; when it lies in the document's text the value
 * points there rather than at a copy. */
static int put_number(builder *b, const char *s, size_t len, size_t offset)
{
    const char *text = b->doc->text, *num = s;
    if (s < text || s + len > text + b->doc->len)
        num = pool_strndup(b->doc, s, len);
    return put_text(b, GIR_JSON_NUMBER, num, len, offset);
}

/* s: the unescaped string; offset: its opening quote. */
static int put_string(builder *b, const char *s, size_t len, size_t offset)
{
    return put_text(b, GIR_JSON_STRING, pool_strndup(b->doc, s, len), len, offset);
}

static int put_key(builder *b, const char *key, size_t len, size_t offset)
{
    frame *f = &b->frames[b->n_frames - 1];
    char *k = pool_strndup(b->doc, key, len);
    if (!k)
        return oom(b);
    f->key = k;
    f->key_len = len;
    f->key_offset = offset;
    return 1;
}

/* offset: of the '[' or '{'. */
static inline int open_container(builder *b, gir_json_type t, size_t offset)
{
    if (b->n_frames >= b->max_depth) {
        if (b->max_depth == gir_limit(GIR_LIM_DEPTH))
            return cancel(b, GIR_E_LIMIT, offset, "JSON nesting is deeper than %u levels " GIR_LIMIT_HINT,
                          b->max_depth, GIR_LIMIT_HINT_ARGS(GIR_LIM_DEPTH));
        return cancel(b, GIR_E_LIMIT, offset, "JSON nesting is deeper than %u levels", b->max_depth);
    }
    if (!GIR_GROW(b->frames, b->cap_frames, b->n_frames + 1))
        return oom(b);
    frame *f = &b->frames[b->n_frames++];
    memset(f, 0, sizeof *f);
    f->type = t;
    f->offset = offset;
    f->start = t == GIR_JSON_ARRAY ? b->n_pending_items : b->n_pending;
    return 1;
}

/* ---- yajl's callbacks: offsets from the bytes it has consumed --------------- */

static int cb_null(void *ctx)
{
    builder *b = ctx;
    size_t end = consumed(b);
    return put_literal(b, GIR_JSON_NULL, false, end >= 4 ? end - 4 : 0);
}

static int cb_bool(void *ctx, int val)
{
    builder *b = ctx;
    size_t end = consumed(b), n = val ? 4 : 5;
    return put_literal(b, GIR_JSON_BOOL, val != 0, end >= n ? end - n : 0);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    builder *b = ctx;
    size_t end = consumed(b);
    /* The whole text is parsed in one chunk: the token lies in it, except
     * at the very end (yajl then hands out a copy). */
    return put_number(b, s, len, end >= len ? end - len : 0);
}

/* The opening quote of a string token: yajl hands unescaped strings out of
 * the text itself (one byte after the quote); others need a scan. */
static size_t token_start(const builder *b, const unsigned char *s)
{
    const char *text = b->doc->text;
    const char *p = (const char *)s;
    if (p > text && p <= text + b->doc->len && p[-1] == '"')
        return (size_t)(p - text) - 1;
    return string_start(text, consumed(b));
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    builder *b = ctx;
    return put_string(b, (const char *)s, len, token_start(b, s));
}

static size_t bracket_offset(const builder *b)
{
    size_t off = consumed(b);
    return off ? off - 1 : 0;
}

static int cb_start_map(void *ctx)
{
    return open_container(ctx, GIR_JSON_OBJECT, bracket_offset(ctx));
}

static int cb_start_array(void *ctx)
{
    return open_container(ctx, GIR_JSON_ARRAY, bracket_offset(ctx));
}

static int cb_map_key(void *ctx, const unsigned char *key, size_t len)
{
    builder *b = ctx;
    return put_key(b, (const char *)key, len, token_start(b, key));
}

static int cmp_member_ptr(const void *pa, const void *pb)
{
    const gir_json_member *a = *(const gir_json_member *const *)pa;
    const gir_json_member *b = *(const gir_json_member *const *)pb;
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, n);
    if (c)
        return c;
    if (a->key_len != b->key_len)
        return a->key_len < b->key_len ? -1 : 1;
    /* Equal keys: file order, so the later one is reported. */
    return a->key_offset < b->key_offset ? -1 : a->key_offset > b->key_offset;
}

static bool same_key(const gir_json_member *a, const gir_json_member *b)
{
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

/* Returns the later member of the first duplicated key, or NULL; *failed on
 * allocation failure. */
static const gir_json_member *find_duplicate(const gir_json_member *m, size_t n, bool *failed)
{
    *failed = false;
    if (n < 2)
        return NULL;
    if (n <= 16) {
        const gir_json_member *best = NULL;
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (same_key(&m[i], &m[j]) && (!best || m[i].key_offset < best->key_offset))
                    best = &m[i];
        return best;
    }
    const gir_json_member **idx = malloc(n * sizeof *idx);
    if (!idx) {
        *failed = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = &m[i];
    qsort(idx, n, sizeof *idx, cmp_member_ptr);
    const gir_json_member *best = NULL;
    for (size_t i = 1; i < n; i++)
        if (same_key(idx[i], idx[i - 1]) && (!best || idx[i]->key_offset < best->key_offset))
            best = idx[i];
    free(idx);
    return best;
}

/* A copy of elements [start, start + n) of size sz of base in the
 * document's arena (NULL for none: base may then be NULL, and no pointer is
 * formed from it); false when out of memory. */
static bool arena_copy(builder *b, const void *base, size_t start, size_t n, size_t sz, void **out)
{
    *out = NULL;
    if (!n)
        return true;
    uint64_t bytes;
    return gir_mul_u64(n, sz, &bytes) && bytes <= SIZE_MAX &&
           (*out = gir_arena_memdup(&b->doc->arena, (const char *)base + start * sz, (size_t)bytes)) != NULL;
}

static int close_container(builder *b)
{
    frame f = b->frames[--b->n_frames];
    size_t n;
    void *copy;
    if (f.type == GIR_JSON_OBJECT) {
        n = b->n_pending - f.start;
        const gir_json_member *src = n ? b->pending + f.start : NULL;
        if (n && !b->allow_dup) {
            bool failed;
            const gir_json_member *dup = find_duplicate(src, n, &failed);
            if (failed)
                return oom(b);
            if (dup)
                return cancel(b, GIR_E_DUPLICATE, dup->key_offset, "duplicate key \"%s\" in a JSON object",
                              dup->key);
        }
        if (!arena_copy(b, b->pending, f.start, n, sizeof *src, &copy))
            return oom(b);
        b->n_pending = f.start;
    } else {
        n = b->n_pending_items - f.start;
        if (!arena_copy(b, b->pending_items, f.start, n, sizeof *b->pending_items, &copy))
            return oom(b);
        b->n_pending_items = f.start;
    }
    gir_json *v = new_value(b, f.type, f.offset, n);
    if (!v)
        return oom(b);
    if (f.type == GIR_JSON_OBJECT)
        v->u.members = copy;
    else
        v->u.items = copy;
    return 1;
}

static int cb_end_map(void *ctx)
{
    return close_container(ctx);
}

static int cb_end_array(void *ctx)
{
    return close_container(ctx);
}

static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string, cb_start_map, cb_map_key, cb_end_map,
    cb_start_array, cb_end_array,
};

/* yajl's short error text, without its "lexical error: " style prefix and
 * trailing period/newline, as a malloc'd string. */
static char *yajl_reason(yajl_handle h, const char *text, size_t len)
{
    unsigned char *e = yajl_get_error(h, 0, (const unsigned char *)text, len);
    const char *s = e ? (const char *)e : "unknown error";
    const char *colon = strstr(s, "error: ");
    if (colon)
        s = colon + 7;
    char *r = gir_strdupf("%s", s);
    if (e)
        yajl_free_error(h, e);
    if (r) {
        size_t n = strlen(r);
        while (n && (r[n - 1] == '\n' || r[n - 1] == '.' || r[n - 1] == ' '))
            r[--n] = '\0';
    }
    return r;
}

/* ---- the pull lexer: plain JSON scanned directly ------------------------------
 *
 * yajl spends most of a large file's parse time lexing it byte by byte.
 * Most files are plain, valid JSON; the lexer (gir_json_lex_next) reads
 * those token by token, checking the grammar as it goes, and gives up
 * (GIR_JT_FAIL) at anything it does not handle: a syntax error of any kind,
 * comments, whitespace other than space/tab/CR/LF, a \u escape of a
 * surrogate, a non-ASCII byte that is not well-formed UTF-8 (while UTF-8 is
 * checked), a root that is not an object or array, nesting deeper than
 * max_depth, trailing bytes.  Two readers consume its tokens: scan() below,
 * which builds the DOM (and gives up besides at whatever the builder
 * reports: duplicate keys, memory), and format readers that build their
 * own structures from the text (the NNVM family's read_raw_fast.c).  When
 * either gives up, the whole text is parsed again by yajl, which accepts
 * or rejects it and words the error exactly as without the lexer.
 * Everything the lexer accepts, yajl accepts too and builds into the
 * identical DOM (tests/test_json.c compares the two). */

const unsigned char gir_json_space[256] = { [' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1 };

static bool is_space(char c)
{
    return gir_json_space[(unsigned char)c];
}

/* A byte that may follow a number or a literal. */
static bool ends_token(const char *t, size_t len, size_t p)
{
    return p == len || is_space(t[p]) || t[p] == ',' || t[p] == ']' || t[p] == '}';
}

/* Length of the well-formed UTF-8 sequence at s (s[0] >= 0x80) within n
 * bytes, 0 if there is none (no overlong forms, surrogates or code points
 * above U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        k = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        k = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return k;
}

const unsigned char gir_json_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00: control characters */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20: the quote (0x22) */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x30 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: the backslash (0x5C) */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x70 */
    /* 0x80-0xFF: zeros (UTF-8 is checked separately) */
};

/* Appends n bytes to the lexer's scratch buffer. */
static bool scratch_put(gir_json_lexer *lx, size_t *len, const char *s, size_t n)
{
    if (n == 0)
        return true;
    if (*len + n > lx->cap_scratch_ && !GIR_GROW(lx->scratch_, lx->cap_scratch_, *len + n))
        return false;
    memcpy(lx->scratch_ + *len, s, n);
    *len += n;
    return true;
}

/* The string token whose opening quote is at text[*pos]: on success *pos is
 * just past the closing quote and the token's str/len/escaped are set:
 * the unescaped bytes, in the text itself when there is no escape, else in
 * the scratch buffer. */
bool gir_json_lex_string_any(gir_json_lexer *lx, size_t *pos)
{
    const char *t = lx->text_;
    size_t len = lx->len_, p = *pos + 1, start = p, out = 0;
    bool escaped = false;
    while (p < len) {
        while (p < len && gir_json_plain[(unsigned char)t[p]])
            p++;
        if (p == len)
            break;
        unsigned char c = (unsigned char)t[p];
        if (c == '"') {
            if (escaped && !scratch_put(lx, &out, t + start, p - start))
                return false;
            lx->str = escaped ? lx->scratch_ : t + start;
            lx->str_len = escaped ? out : p - start;
            lx->escaped = escaped;
            *pos = p + 1;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c >= 0x80) {
            size_t k = lx->check_utf8_ ? utf8_len((const unsigned char *)t + p, len - p) : 1;
            if (!k)
                return false;
            p += k;
            continue;
        }
        /* An escape: what came before it goes to the scratch buffer. */
        escaped = true;
        if (!scratch_put(lx, &out, t + start, p - start) || p + 1 >= len)
            return false;
        char e = t[p + 1], one = gir_json_unescape(e);
        p += 2;
        if (e == 'u') {
            if (len - p < 4)
                return false;
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                int h = gir_hex_digit((unsigned char)t[p + i]);
                if (h < 0)
                    return false;
                cp = cp * 16 + (unsigned)h;
            }
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDFFF) /* surrogates: yajl's own rules */
                return false;
            char u[4];
            size_t k = gir_utf8_encode(cp, u);
            if (!scratch_put(lx, &out, u, k))
                return false;
            start = p;
            continue;
        }
        if (!one || !scratch_put(lx, &out, &one, 1))
            return false;
        start = p;
    }
    return false;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A number at t[*pos] (the JSON grammar), followed by a delimiter. */
static inline __attribute__((always_inline)) bool scan_number(const char *t, size_t len, size_t *pos)
{
    size_t p = *pos;
    if (p < len && t[p] == '-')
        p++;
    if (p < len && t[p] == '0')
        p++;
    else if (p < len && t[p] >= '1' && t[p] <= '9')
        while (p < len && is_digit(t[p]))
            p++;
    else
        return false;
    if (p < len && t[p] == '.') {
        p++;
        if (p == len || !is_digit(t[p]))
            return false;
        while (p < len && is_digit(t[p]))
            p++;
    }
    if (p < len && (t[p] == 'e' || t[p] == 'E')) {
        p++;
        if (p < len && (t[p] == '+' || t[p] == '-'))
            p++;
        if (p == len || !is_digit(t[p]))
            return false;
        while (p < len && is_digit(t[p]))
            p++;
    }
    if (!ends_token(t, len, p))
        return false;
    *pos = p;
    return true;
}

/* What the lexer expects next: a value (FIRST_VALUE: or the end of an
 * empty array), a key (FIRST_KEY: or the end of an empty object), after a
 * value a comma or the end of the innermost container, or (DONE) nothing
 * but whitespace. */
enum { LEX_VALUE, LEX_FIRST_VALUE, LEX_KEY, LEX_FIRST_KEY, LEX_AFTER, LEX_DONE };

/* The nesting depth allowed: the caller's, else the max-depth limit. */
static unsigned json_depth(const gir_json_options *opts)
{
    if (opts && opts->max_depth)
        return opts->max_depth;
    uint64_t lim = gir_limit(GIR_LIM_DEPTH);
    return lim > UINT_MAX - 1 ? UINT_MAX - 1 : (unsigned)lim;
}

void gir_json_lex_init(gir_json_lexer *lx, const char *text, size_t len, const gir_json_options *opts)
{
    *lx = (gir_json_lexer){ .text_ = text,
                            .len_ = len,
                            .check_utf8_ = !(opts && opts->no_utf8_check),
                            .allow_dup_ = opts && opts->allow_duplicate_keys,
                            .max_depth_ = json_depth(opts),
                            .want_ = LEX_VALUE };
}

void gir_json_lex_free(gir_json_lexer *lx)
{
    free(lx->kinds_);
    free(lx->scratch_);
    memset(lx, 0, sizeof *lx);
}

/* The next token.  Inlined into its two callers (scan and
 * gir_json_lex_next): a call per token costs the DOM builder a fifth of
 * its time. */
static inline __attribute__((always_inline)) gir_json_token lex_next(gir_json_lexer *lx)
{
    const char *t = lx->text_;
    size_t len = lx->len_, p = gir_json_skip_space(t, len, lx->pos_);
    unsigned want = lx->want_;
    char c;
    if (want == LEX_DONE) {
        lx->offset = lx->pos_ = p;
        return p == len ? GIR_JT_END : GIR_JT_FAIL;
    }
    if (p == len)
        return GIR_JT_FAIL;
again:
    c = t[p];
    lx->offset = p;
    switch (want) {
    case LEX_AFTER:
        if (c == ',') {
            p = gir_json_skip_space(t, len, p + 1);
            if (p == len)
                return GIR_JT_FAIL;
            want = lx->kinds_[lx->depth - 1] ? LEX_KEY : LEX_VALUE;
            goto again;
        }
        if (c != (lx->kinds_[lx->depth - 1] ? '}' : ']'))
            return GIR_JT_FAIL;
        goto close;
    case LEX_FIRST_KEY:
        if (c == '}')
            goto close;
        /* fall through */
    case LEX_KEY:
        if (c != '"' || !gir_json_lex_string(lx, &p))
            return GIR_JT_FAIL;
        p = gir_json_skip_space(t, len, p);
        if (p == len || t[p] != ':')
            return GIR_JT_FAIL;
        lx->pos_ = p + 1;
        lx->want_ = LEX_VALUE;
        return GIR_JT_KEY;
    case LEX_FIRST_VALUE:
        if (c == ']')
            goto close;
        /* fall through */
    case LEX_VALUE:
        break;
    default:
        return GIR_JT_FAIL;
    }
    /* a value */
    if (c == '{' || c == '[') {
        if (lx->depth >= lx->max_depth_ ||
            (lx->depth == lx->cap_kinds_ && !GIR_GROW(lx->kinds_, lx->cap_kinds_, lx->depth + 1)))
            return GIR_JT_FAIL;
        lx->kinds_[lx->depth++] = c == '{';
        lx->pos_ = p + 1;
        lx->want_ = c == '{' ? LEX_FIRST_KEY : LEX_FIRST_VALUE;
        return c == '{' ? GIR_JT_OBJECT : GIR_JT_ARRAY;
    }
    if (lx->depth == 0) /* the root is an object or an array */
        return GIR_JT_FAIL;
    gir_json_token tok;
    size_t q = p;
    switch (c) {
    case '"':
        if (!gir_json_lex_string(lx, &q))
            return GIR_JT_FAIL;
        tok = GIR_JT_STRING;
        break;
    case 't':
    case 'f':
    case 'n': {
        const char *word = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t n = c == 'f' ? 5 : 4;
        if (len - p < n || memcmp(t + p, word, n) != 0 || !ends_token(t, len, p + n))
            return GIR_JT_FAIL;
        q = p + n;
        tok = c == 't' ? GIR_JT_TRUE : c == 'f' ? GIR_JT_FALSE : GIR_JT_NULL;
        break;
    }
    default:
        if (!scan_number(t, len, &q))
            return GIR_JT_FAIL;
        lx->str = t + p;
        lx->str_len = q - p;
        lx->escaped = false;
        tok = GIR_JT_NUMBER;
        break;
    }
    lx->pos_ = q;
    lx->want_ = LEX_AFTER;
    return tok;
close:
    lx->depth--;
    lx->pos_ = p + 1;
    lx->want_ = lx->depth ? LEX_AFTER : LEX_DONE;
    return c == '}' ? GIR_JT_OBJECT_END : GIR_JT_ARRAY_END;
}

gir_json_token gir_json_lex_next(gir_json_lexer *lx)
{
    return lex_next(lx);
}

bool gir_json_lex_direct(gir_json_lexer *lx, unsigned levels, const char **text, size_t *len, size_t *pos)
{
    if (lx->want_ != LEX_VALUE || lx->depth == 0 || levels > lx->max_depth_ || lx->depth > lx->max_depth_ - levels)
        return false;
    *text = lx->text_;
    *len = lx->len_;
    *pos = lx->pos_;
    return true;
}

void gir_json_lex_resume(gir_json_lexer *lx, size_t pos)
{
    lx->pos_ = pos;
    lx->want_ = LEX_AFTER;
}


/* Reads the next value from the lexer into the builder (its root, or the
 * builder's root_slot); true when it was read whole. */
static bool scan(builder *b, gir_json_lexer *lx)
{
    for (;;) {
        gir_json_token tok = lex_next(lx);
        size_t at = lx->offset;
        int ok;
        switch (tok) {
        case GIR_JT_OBJECT: ok = open_container(b, GIR_JSON_OBJECT, at); break;
        case GIR_JT_ARRAY: ok = open_container(b, GIR_JSON_ARRAY, at); break;
        case GIR_JT_OBJECT_END:
        case GIR_JT_ARRAY_END: ok = close_container(b); break;
        case GIR_JT_KEY:
            if (!put_key(b, lx->str, lx->str_len, at))
                return false;
            continue;
        case GIR_JT_STRING: ok = put_string(b, lx->str, lx->str_len, at); break;
        case GIR_JT_NUMBER: ok = put_number(b, lx->str, lx->str_len, at); break;
        case GIR_JT_TRUE: ok = put_literal(b, GIR_JSON_BOOL, true, at); break;
        case GIR_JT_FALSE: ok = put_literal(b, GIR_JSON_BOOL, false, at); break;
        case GIR_JT_NULL: ok = put_literal(b, GIR_JSON_NULL, false, at); break;
        default: return false;
        }
        if (!ok)
            return false;
        if (b->n_frames == 0)
            return true;
    }
}

/* ---- parsing -------------------------------------------------------------- */

/* Parses the text with yajl into the (empty) builder; fills err. */
static gir_status parse_with_yajl(builder *b, const gir_json_options *opts, gir_error *err)
{
    gir_json_doc *d = b->doc;
    const char *text = d->text;
    size_t len = d->len;
    b->h = yajl_alloc(&callbacks, NULL, b);
    if (!b->h)
        return gir_nomem(err);
    if (opts->allow_comments)
        yajl_config(b->h, yajl_allow_comments, 1);
    if (opts->no_utf8_check)
        yajl_config(b->h, yajl_dont_validate_strings, 1);
    if (opts->allow_trailing_garbage)
        yajl_config(b->h, yajl_allow_trailing_garbage, 1);

    gir_status st = GIR_OK;
    yajl_status ys = yajl_parse(b->h, (const unsigned char *)text, len);
    bool in_finish = false;
    if (ys == yajl_status_ok) {
        /* yajl finishes by parsing a private one-byte buffer: offsets it
         * reports from here on mean the end of the text. */
        in_finish = true;
        ys = yajl_complete_parse(b->h);
    }
    if (ys == yajl_status_client_canceled) {
        st = b->status ? b->status : gir_fail(err, GIR_E_INTERNAL, "JSON parse cancelled without a reason");
    } else if (ys != yajl_status_ok || !b->have_root) {
        /* yajl stops just past the offending token: point at its last byte
         * (truncation points just past the end). */
        size_t off = yajl_get_bytes_consumed(b->h);
        off = in_finish ? len : off > 0 ? off - 1 : 0;
        char *why = yajl_reason(b->h, text, len);
        if (len == 0)
            st = gir_fail(err, GIR_E_SYNTAX, "empty file, expected a JSON value");
        else if (in_finish && b->n_frames > 0)
            st = gir_fail(err, GIR_E_SYNTAX, "JSON text ends early (truncated file?): %zu container%s still open",
                          b->n_frames, b->n_frames == 1 ? "" : "s");
        else
            st = gir_fail(err, GIR_E_SYNTAX, "malformed JSON: %s", why ? why : "syntax error");
        free(why);
        if (off > len)
            off = len;
        unsigned line, col;
        gir_json_line_col(d, off, &line, &col);
        gir_err_loc(err, "line %u:%u", line, col);
    }
    yajl_free(b->h);
    b->h = NULL;
    return st;
}

static void doc_reset(gir_json_doc *d)
{
    gir_arena_free(&d->arena);
    d->pool = NULL;
    d->pool_left = 0;
    d->n_values = 0;
    memset(&d->root, 0, sizeof d->root);
}

static void builder_free(builder *b)
{
    free(b->frames);
    free(b->pending);
    free(b->pending_items);
}

/* Parses the document's whole text into it (replacing whatever it held):
 * the lexer first, yajl when the lexer gives up. */
static gir_status parse_doc(gir_json_doc *d, const gir_json_options *opts, gir_error *err)
{
    gir_json_options defaults = { 0 };
    if (!opts)
        opts = &defaults;
    doc_reset(d);
    builder b = { 0 };
    b.doc = d;
    b.max_depth = json_depth(opts);
    b.allow_dup = opts->allow_duplicate_keys;
    gir_status st = GIR_OK;
    /* The lexer's path reports nothing (err stays NULL): when it gives up,
     * yajl starts over on an empty document. */
    bool done = false;
    if (!opts->reference_parser) {
        gir_json_lexer lx;
        gir_json_lex_init(&lx, d->text, d->len, opts);
        done = scan(&b, &lx) && lex_next(&lx) == GIR_JT_END;
        gir_json_lex_free(&lx);
    }
    if (!done) {
        doc_reset(d);
        b.n_frames = b.n_pending = b.n_pending_items = 0;
        b.have_root = false;
        b.status = GIR_OK;
        b.err = err;
        st = parse_with_yajl(&b, opts, err);
    }
    builder_free(&b);
    return st;
}

static gir_status too_long(size_t len, gir_error *err)
{
    return gir_fail(err, GIR_E_LIMIT, "JSON text of %zu bytes is larger than the 4 GiB this reader takes", len);
}

gir_status gir_json_parse(const char *text, size_t len, const gir_json_options *opts, gir_json_doc **out,
                          gir_error *err)
{
    *out = NULL;
    /* offsets are kept in 32 bits (a smaller DOM reads faster) */
    if (len > UINT32_MAX)
        return too_long(len, err);
    gir_json_doc *d = calloc(1, sizeof *d);
    if (!d)
        return gir_nomem(err);
    d->text = text;
    d->len = len;
    gir_status st = parse_doc(d, opts, err);
    if (st) {
        gir_json_doc_free(d);
        return st;
    }
    *out = d;
    return GIR_OK;
}

gir_status gir_json_doc_parse(gir_json_doc *d, const gir_json_options *opts, gir_error *err)
{
    return parse_doc(d, opts, err);
}

bool gir_json_lex_dom(gir_json_lexer *lx, gir_json_doc *d, const gir_json **out)
{
    *out = NULL;
    gir_json *v = gir_arena_alloc_uninit(&d->arena, sizeof *v);
    if (!v)
        return false;
    builder b = { 0 };
    b.doc = d;
    b.root_slot = v;
    b.max_depth = UINT_MAX; /* the lexer counts the depth from the root */
    b.allow_dup = lx->allow_dup_;
    bool ok = scan(&b, lx);
    builder_free(&b);
    if (ok)
        *out = v;
    return ok;
}

/* Maps a regular, non-empty file of at most max_bytes (0: any) read-only,
 * its pages populated at once where the system can: cheaper than reading a
 * large file into fresh memory.  False when it cannot; the caller then
 * reads the file, which also words any error. */
static bool map_file(const char *path, size_t max_bytes, void **map, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
              (uint64_t)st.st_size <= SIZE_MAX && (!max_bytes || (uint64_t)st.st_size <= max_bytes);
    if (ok) {
        int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE;
#endif
        *len = (size_t)st.st_size;
        *map = mmap(NULL, *len, PROT_READ, flags, fd, 0);
        ok = *map != MAP_FAILED;
    }
    close(fd);
    return ok;
}

gir_status gir_json_open_file(const char *path, size_t max_bytes, gir_json_doc **out, gir_error *err)
{
    *out = NULL;
    gir_json_doc *d = calloc(1, sizeof *d);
    if (!d)
        return gir_nomem(err);
    void *map;
    size_t len;
    if (map_file(path, max_bytes, &map, &len)) {
        d->mapped = map;
        d->mapped_len = len;
        d->text = map;
    } else {
        char *text;
        gir_status st = gir_read_file(path, max_bytes, &text, &len, err);
        if (st) {
            free(d);
            return st;
        }
        d->owned_text = text;
        d->text = text;
    }
    d->len = len;
    if (len > UINT32_MAX) {
        too_long(len, err);
        gir_err_file(err, path);
        gir_json_doc_free(d);
        return GIR_E_LIMIT;
    }
    *out = d;
    return GIR_OK;
}

gir_status gir_json_parse_file(const char *path, size_t max_bytes, const gir_json_options *opts,
                               gir_json_doc **out, gir_error *err)
{
    TRY(gir_json_open_file(path, max_bytes, out, err));
    gir_status st = parse_doc(*out, opts, err);
    if (st) {
        gir_err_file(err, path);
        gir_json_doc_free(*out);
        *out = NULL;
    }
    return st;
}

void gir_json_doc_free(gir_json_doc *d)
{
    if (!d)
        return;
    gir_arena_free(&d->arena);
    free(d->owned_text);
    if (d->mapped)
        munmap(d->mapped, d->mapped_len);
    free(d);
}

const gir_json *gir_json_root(const gir_json_doc *d)
{
    return d ? &d->root : NULL;
}

const char *gir_json_text(const gir_json_doc *d, size_t *len)
{
    if (len)
        *len = d->len;
    return d->text;
}

size_t gir_json_value_count(const gir_json_doc *d)
{
    return d->n_values;
}

void gir_json_line_col(const gir_json_doc *d, size_t offset, unsigned *line, unsigned *col)
{
    if (offset > d->len)
        offset = d->len;
    size_t l = 1, line_start = 0;
    const char *p = d->text, *end = d->text + offset;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        l++;
        line_start = (size_t)(nl - d->text) + 1;
        p = nl + 1;
    }
    *line = l > UINT32_MAX ? UINT32_MAX : (unsigned)l;
    size_t c = offset - line_start + 1;
    *col = c > UINT32_MAX ? UINT32_MAX : (unsigned)c;
}

void gir_json_err_at(gir_error *err, const gir_json_doc *d, const gir_json *v, const char *pointer_fmt, ...)
{
    if (!err || err->location)
        return;
    va_list ap;
    va_start(ap, pointer_fmt);
    char *ptr = gir_vstrdupf(pointer_fmt, ap);
    va_end(ap);
    if (!ptr)
        return;
    if (d && v) {
        unsigned line, col;
        gir_json_line_col(d, v->offset, &line, &col);
        gir_err_loc(err, "%s (line %u:%u)", *ptr ? ptr : "/", line, col);
    } else {
        gir_err_loc(err, "%s", *ptr ? ptr : "/");
    }
    free(ptr);
}
