/* Protobuf text format: the parser over protobuf-c descriptors (see
 * pbtext.h for the dialect; pbtext_print.c prints).  Nested messages are
 * walked with an explicit stack, so the input never controls the C stack
 * depth. */
#include "io/pbtext.h"
#include "core/limits.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMBER(msg, off, type) ((type *)((char *)(msg) + (off)))

ProtobufCMessage *gir_pb_new(const ProtobufCMessageDescriptor *d)
{
    ProtobufCMessage *m = malloc(d->sizeof_message);
    if (m)
        d->message_init(m);
    return m;
}

void gir_pb_free(ProtobufCMessage *m)
{
    if (m)
        protobuf_c_message_free_unpacked(m, NULL);
}

size_t gir_pb_int_type(ProtobufCType t, bool *is_unsigned)
{
    *is_unsigned = false;
    switch (t) {
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        *is_unsigned = true;
        /* fall through */
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        return 4;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        *is_unsigned = true;
        /* fall through */
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        return 8;
    default:
        return 0;
    }
}

size_t gir_pb_elt_size(ProtobufCType t)
{
    bool is_unsigned;
    size_t w = gir_pb_int_type(t, &is_unsigned);
    if (w)
        return w;
    switch (t) {
    case PROTOBUF_C_TYPE_FLOAT:
        return sizeof(float);
    case PROTOBUF_C_TYPE_DOUBLE:
        return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_ENUM:
        return sizeof(int);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    default: /* the integers: above */
        return 0;
    }
}

static const char *type_name(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32: return "int32";
    case PROTOBUF_C_TYPE_SINT32: return "sint32";
    case PROTOBUF_C_TYPE_SFIXED32: return "sfixed32";
    case PROTOBUF_C_TYPE_UINT32: return "uint32";
    case PROTOBUF_C_TYPE_FIXED32: return "fixed32";
    case PROTOBUF_C_TYPE_INT64: return "int64";
    case PROTOBUF_C_TYPE_SINT64: return "sint64";
    case PROTOBUF_C_TYPE_SFIXED64: return "sfixed64";
    case PROTOBUF_C_TYPE_UINT64: return "uint64";
    case PROTOBUF_C_TYPE_FIXED64: return "fixed64";
    case PROTOBUF_C_TYPE_FLOAT: return "float";
    case PROTOBUF_C_TYPE_DOUBLE: return "double";
    case PROTOBUF_C_TYPE_BOOL: return "bool";
    case PROTOBUF_C_TYPE_ENUM: return "enum";
    case PROTOBUF_C_TYPE_STRING: return "string";
    case PROTOBUF_C_TYPE_BYTES: return "bytes";
    case PROTOBUF_C_TYPE_MESSAGE: return "message";
    }
    return "?";
}

/* ======================================================================
 * Lexer
 * ====================================================================== */

typedef enum tkind { T_EOF, T_IDENT, T_NUMBER, T_STRING, T_PUNCT } tkind;

typedef struct lexer {
    const char *src;
    size_t len, pos;
    int line, col;        /* of pos */
    /* the current (lookahead) token */
    tkind kind;
    size_t start, end;
    int tline, tcol;
} lexer;

static bool is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static bool is_ident_char(int c)
{
    return is_ident_start(c) || is_digit(c) || c == '+' || c == '-';
}

static bool is_number_char(int c)
{
    return is_ident_char(c) || c == '.';
}

static void lx_bump(lexer *L)
{
    if (L->src[L->pos] == '\n') {
        L->line++;
        L->col = 1;
    } else {
        L->col++;
    }
    L->pos++;
}

/* Scans the next token into the lookahead.  Unterminated strings become a
 * T_STRING whose end is at the line end; the string reader reports them. */
static void lx_next(lexer *L)
{
    for (;;) {
        while (L->pos < L->len &&
               (L->src[L->pos] == ' ' || L->src[L->pos] == '\t' || L->src[L->pos] == '\n' ||
                L->src[L->pos] == '\r' || L->src[L->pos] == '\f' || L->src[L->pos] == '\v'))
            lx_bump(L);
        if (L->pos < L->len && L->src[L->pos] == '#') {
            while (L->pos < L->len && L->src[L->pos] != '\n')
                lx_bump(L);
            continue;
        }
        break;
    }
    L->start = L->pos;
    L->tline = L->line;
    L->tcol = L->col;
    if (L->pos >= L->len) {
        L->kind = T_EOF;
        L->end = L->pos;
        return;
    }
    unsigned char c = (unsigned char)L->src[L->pos];
    if (is_ident_start(c)) {
        L->kind = T_IDENT;
        while (L->pos < L->len && is_ident_char((unsigned char)L->src[L->pos]))
            lx_bump(L);
    } else if (is_digit(c) || c == '+' || c == '-' ||
               (c == '.' && L->pos + 1 < L->len && is_digit((unsigned char)L->src[L->pos + 1]))) {
        L->kind = T_NUMBER;
        while (L->pos < L->len && is_number_char((unsigned char)L->src[L->pos]))
            lx_bump(L);
    } else if (c == '"' || c == '\'') {
        L->kind = T_STRING;
        lx_bump(L);
        while (L->pos < L->len && L->src[L->pos] != (char)c && L->src[L->pos] != '\n') {
            if (L->src[L->pos] == '\\' && L->pos + 1 < L->len && L->src[L->pos + 1] != '\n')
                lx_bump(L);
            lx_bump(L);
        }
        if (L->pos < L->len && L->src[L->pos] == (char)c)
            lx_bump(L);
    } else {
        L->kind = T_PUNCT;
        lx_bump(L);
    }
    L->end = L->pos;
}

static bool lx_is(const lexer *L, char c)
{
    return L->kind == T_PUNCT && L->src[L->start] == c;
}

static bool lx_text_is(const lexer *L, const char *s)
{
    size_t n = strlen(s);
    return L->end - L->start == n && memcmp(L->src + L->start, s, n) == 0;
}

/* The current token for messages: "x", or "the end of the input". */
static void lx_describe(const lexer *L, char out[64])
{
    if (L->kind == T_EOF) {
        strcpy(out, "the end of the input");
        return;
    }
    size_t n = L->end - L->start;
    bool cut = n > 40;
    if (cut)
        n = 40;
    size_t o = 0;
    bool quote = L->kind != T_STRING; /* a string token shows its own quotes */
    if (quote)
        out[o++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)L->src[L->start + i];
        out[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    if (quote)
        out[o++] = '"';
    out[o] = '\0';
}

/* ======================================================================
 * Parser
 * ====================================================================== */

/* Capacity of repeated-field arrays grown by the parser, keyed by the
 * address of the array pointer inside its message (messages never move). */
typedef struct capent {
    const void *key;
    size_t cap;
} capent;

typedef struct frame {
    ProtobufCMessage *msg;
    const ProtobufCFieldDescriptor *list_field; /* non-NULL: a "[...]" list of messages */
    char close;                                 /* '}' or '>' (0: the root) */
    bool after_elem;                            /* list: an element was just closed */
} frame;

typedef struct parser {
    lexer L;
    gir_error *err;
    capent *caps;
    size_t ncaps, capcap;
    frame *st;
    size_t depth, stcap;
    gir_buf sbuf; /* string scratch */
} parser;

static size_t hash_ptr(const void *p, size_t mask)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & mask;
}

static capent *cap_find(parser *P, const void *key)
{
    if (!P->capcap)
        return NULL;
    size_t mask = P->capcap - 1;
    for (size_t i = hash_ptr(key, mask);; i = (i + 1) & mask) {
        if (P->caps[i].key == key)
            return &P->caps[i];
        if (!P->caps[i].key)
            return NULL;
    }
}

static bool cap_set(parser *P, const void *key, size_t cap)
{
    capent *e = cap_find(P, key);
    if (e) {
        e->cap = cap;
        return true;
    }
    if ((P->ncaps + 1) * 2 > P->capcap) {
        size_t ncap = P->capcap ? P->capcap * 2 : 64;
        capent *nt = calloc(ncap, sizeof *nt);
        if (!nt)
            return false;
        for (size_t i = 0; i < P->capcap; i++) {
            if (!P->caps[i].key)
                continue;
            size_t j = hash_ptr(P->caps[i].key, ncap - 1);
            while (nt[j].key)
                j = (j + 1) & (ncap - 1);
            nt[j] = P->caps[i];
        }
        free(P->caps);
        P->caps = nt;
        P->capcap = ncap;
    }
    size_t mask = P->capcap - 1;
    size_t i = hash_ptr(key, mask);
    while (P->caps[i].key)
        i = (i + 1) & mask;
    P->caps[i].key = key;
    P->caps[i].cap = cap;
    P->ncaps++;
    return true;
}

static gir_status vperr(parser *P, gir_status code, int line, int col, const char *fmt, va_list ap)
    GIR_PRINTF(5, 0);
static gir_status vperr(parser *P, gir_status code, int line, int col, const char *fmt, va_list ap)
{
    gir_status st = gir_vfail(P->err, code, fmt, ap);
    gir_err_loc(P->err, "line %d:%d", line, col);
    return st;
}

/* Fails at line:col. */
static gir_status perr(parser *P, gir_status code, int line, int col, const char *fmt, ...) GIR_PRINTF(5, 6);
static gir_status perr(parser *P, gir_status code, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = vperr(P, code, line, col, fmt, ap);
    va_end(ap);
    return st;
}

/* Fails at the current token. */
static gir_status perr_tok(parser *P, gir_status code, const char *fmt, ...) GIR_PRINTF(3, 4);
static gir_status perr_tok(parser *P, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = vperr(P, code, P->L.tline, P->L.tcol, fmt, ap);
    va_end(ap);
    return st;
}

/* The nesting allowed: protobuf's own 100 levels, or the max-depth limit
 * when that is lower. */
static size_t pbtext_depth(void)
{
    uint64_t lim = gir_limit(GIR_LIM_DEPTH);
    return lim < GIR_PBTEXT_MAX_DEPTH ? (size_t)lim : GIR_PBTEXT_MAX_DEPTH;
}

static gir_status depth_error(parser *P, const char *what)
{
    if (gir_limit(GIR_LIM_DEPTH) < GIR_PBTEXT_MAX_DEPTH)
        return perr_tok(P, GIR_E_LIMIT, "%s %zu levels " GIR_LIMIT_HINT, what, pbtext_depth(),
                        GIR_LIMIT_HINT_ARGS(GIR_LIM_DEPTH));
    return perr_tok(P, GIR_E_LIMIT, "%s %d levels", what, GIR_PBTEXT_MAX_DEPTH);
}

/* Reserves room for one more element of a repeated field and returns the
 * slot (not yet counted: the caller fills it, then increments the count). */
static gir_status reserve_elem(parser *P, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, void **slot)
{
    size_t *n = MEMBER(msg, f->quantifier_offset, size_t);
    void **arr = MEMBER(msg, f->offset, void *);
    size_t esz = gir_pb_elt_size(f->type);
    capent *ce = cap_find(P, arr);
    size_t cap = ce ? ce->cap : *n;
    if (*n >= cap) {
        size_t ncap = cap < 4 ? 4 : cap * 2;
        uint64_t bytes;
        if (ncap < cap || !gir_mul_u64(ncap, esz, &bytes) || bytes > SIZE_MAX)
            return perr_tok(P, GIR_E_LIMIT, "repeated field \"%s\" has too many elements", f->name);
        void *na = realloc(*arr, (size_t)bytes);
        if (!na)
            return gir_nomem(P->err);
        *arr = na;
        if (!cap_set(P, arr, ncap))
            return gir_nomem(P->err);
    }
    *slot = (char *)*arr + *n * esz;
    return GIR_OK;
}

static void count_elem(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
{
    (*MEMBER(msg, f->quantifier_offset, size_t))++;
}

/* For a oneof member: fails when another member is set; sets the case. */
static gir_status claim_oneof(parser *P, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, int line,
                              int col)
{
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        return GIR_OK;
    uint32_t *c = MEMBER(msg, f->quantifier_offset, uint32_t);
    if (*c != 0 && *c != f->id) {
        const ProtobufCFieldDescriptor *other =
            protobuf_c_message_descriptor_get_field(msg->descriptor, (unsigned)*c);
        return perr(P, GIR_E_SCHEMA, line, col,
                    "field \"%s\" cannot be set: field \"%s\" of the same oneof is already set", f->name,
                    other ? other->name : "?");
    }
    *c = f->id;
    return GIR_OK;
}

/* The sub-message of a singular message field, created if absent. */
static gir_status singular_submsg(parser *P, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, int line,
                                  int col, ProtobufCMessage **out)
{
    gir_status st = claim_oneof(P, msg, f, line, col);
    if (st)
        return st;
    ProtobufCMessage **slot = MEMBER(msg, f->offset, ProtobufCMessage *);
    if (!*slot) {
        *slot = gir_pb_new(f->descriptor);
        if (!*slot)
            return gir_nomem(P->err);
    }
    *out = *slot;
    return GIR_OK;
}

/* At the "[" of a list for field f: refuses a list for a field that is
 * not repeated, takes the "[", and the "]" too when the list is empty
 * (*empty). */
static gir_status list_open(parser *P, const ProtobufCFieldDescriptor *f, bool *empty)
{
    if (f->label != PROTOBUF_C_LABEL_REPEATED)
        return perr_tok(P, GIR_E_SCHEMA, "field \"%s\" is not repeated and cannot take a list", f->name);
    lx_next(&P->L);
    *empty = lx_is(&P->L, ']');
    if (*empty)
        lx_next(&P->L);
    return GIR_OK;
}

static gir_status push_frame(parser *P, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *list_field,
                             char close)
{
    if (P->depth >= pbtext_depth())
        return depth_error(P, "messages are nested deeper than");
    if (!GIR_GROW(P->st, P->stcap, P->depth + 1))
        return gir_nomem(P->err);
    P->st[P->depth++] = (frame){msg, list_field, close, false};
    return GIR_OK;
}

/* ---- scalar values -------------------------------------------------- */

static void put_utf8(gir_buf *b, uint32_t cp)
{
    char u[4];
    gir_buf_append(b, u, gir_utf8_encode(cp, u));
}

/* Unescapes the current string token (quotes included) onto P->sbuf. */
static gir_status read_string_token(parser *P)
{
    lexer *L = &P->L;
    const char *s = L->src + L->start;
    size_t n = L->end - L->start;
    char q = s[0];
    if (n < 2 || s[n - 1] != q)
        return perr_tok(P, GIR_E_SYNTAX, "unterminated string");
    int line = L->tline, col = L->tcol;
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c != '\\') {
            gir_buf_putc(&P->sbuf, (char)c);
            continue;
        }
        size_t esc = i;
        unsigned char e = (unsigned char)s[++i];
        switch (e) {
        case 'n': gir_buf_putc(&P->sbuf, '\n'); break;
        case 't': gir_buf_putc(&P->sbuf, '\t'); break;
        case 'r': gir_buf_putc(&P->sbuf, '\r'); break;
        case 'a': gir_buf_putc(&P->sbuf, '\a'); break;
        case 'b': gir_buf_putc(&P->sbuf, '\b'); break;
        case 'f': gir_buf_putc(&P->sbuf, '\f'); break;
        case 'v': gir_buf_putc(&P->sbuf, '\v'); break;
        case '\\': gir_buf_putc(&P->sbuf, '\\'); break;
        case '\'': gir_buf_putc(&P->sbuf, '\''); break;
        case '"': gir_buf_putc(&P->sbuf, '"'); break;
        case '?': gir_buf_putc(&P->sbuf, '?'); break;
        case 'x':
        case 'X': {
            int v = 0, k = 0;
            while (k < 2 && i + 1 < n - 1 && gir_hex_digit((unsigned char)s[i + 1]) >= 0) {
                v = v * 16 + gir_hex_digit((unsigned char)s[++i]);
                k++;
            }
            if (!k)
                return perr(P, GIR_E_SYNTAX, line, col + (int)esc, "invalid escape \"\\x\" without hex digits");
            gir_buf_putc(&P->sbuf, (char)v);
            break;
        }
        case 'u':
        case 'U': {
            int want = e == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int k = 0; k < want; k++) {
                if (i + 1 >= n - 1 || gir_hex_digit((unsigned char)s[i + 1]) < 0)
                    return perr(P, GIR_E_SYNTAX, line, col + (int)esc,
                                "invalid escape \"\\%c\": expected %d hex digits", e, want);
                v = v * 16 + (uint32_t)gir_hex_digit((unsigned char)s[++i]);
            }
            if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
                return perr(P, GIR_E_SYNTAX, line, col + (int)esc, "invalid escape: U+%04" PRIX32 " is not a character",
                            v);
            put_utf8(&P->sbuf, v);
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                int v = e - '0', k = 1;
                while (k < 3 && i + 1 < n - 1 && s[i + 1] >= '0' && s[i + 1] <= '7') {
                    v = v * 8 + (s[++i] - '0');
                    k++;
                }
                if (v > 255)
                    return perr(P, GIR_E_SYNTAX, line, col + (int)esc, "octal escape \\%o is above \\377", v);
                gir_buf_putc(&P->sbuf, (char)v);
                break;
            }
            return perr(P, GIR_E_SYNTAX, line, col + (int)esc, "invalid escape sequence \"\\%c\"",
                        (e >= 0x20 && e < 0x7f) ? e : '?');
        }
    }
    return P->sbuf.failed ? gir_nomem(P->err) : GIR_OK;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp;
        if ((c & 0xe0) == 0xc0) {
            k = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            k = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i <= k)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

/* Parses an integer token: [+-] then 0x hex, 0 octal or decimal. */
static bool parse_integer(const char *s, size_t n, bool *neg, uint64_t *mag)
{
    size_t i = 0;
    *neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        *neg = s[i] == '-';
        i++;
    }
    if (i >= n)
        return false;
    unsigned base = 10;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        i += 2;
    } else if (n - i > 1 && s[i] == '0') {
        base = 8;
        i += 1;
    }
    uint64_t v = 0;
    for (; i < n; i++) {
        int d = gir_hex_digit((unsigned char)s[i]);
        if (d < 0 || (unsigned)d >= base)
            return false;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            return false;
        v = v * base + (uint64_t)d;
    }
    *mag = v;
    return true;
}

static bool ieq_n(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++) {
        char a = s[i];
        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (a != lit[i])
            return false;
    }
    return true;
}

/* A float token as Python's text_format reads it: a decimal number (an
 * integer too), optionally with a trailing 'f', or inf/infinity/nan. */
static bool parse_floating(const char *s, size_t n, double *out)
{
    if (n && (s[n - 1] == 'f' || s[n - 1] == 'F') && !(n >= 3 && ieq_n(s + n - 3, 3, "inf")))
        n--;
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (ieq_n(s + i, n - i, "inf") || ieq_n(s + i, n - i, "infinity")) {
        *out = neg ? -INFINITY : INFINITY;
        return true;
    }
    if (ieq_n(s + i, n - i, "nan")) {
        *out = NAN;
        return true;
    }
    size_t j = i, digits = 0;
    while (j < n && is_digit((unsigned char)s[j]))
        j++, digits++;
    if (j < n && s[j] == '.') {
        j++;
        while (j < n && is_digit((unsigned char)s[j]))
            j++, digits++;
    }
    if (!digits)
        return false;
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        j++;
        if (j < n && (s[j] == '+' || s[j] == '-'))
            j++;
        size_t ed = 0;
        while (j < n && is_digit((unsigned char)s[j]))
            j++, ed++;
        if (!ed)
            return false;
    }
    if (j != n)
        return false;
    char small[128];
    char *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp)
        return false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    *out = strtod(tmp, NULL);
    if (tmp != small)
        free(tmp);
    return true;
}

/* Stores one scalar value token(s) of field f into msg. */
static gir_status parse_scalar(parser *P, ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, int nline,
                               int ncol)
{
    lexer *L = &P->L;
    int line = L->tline, col = L->tcol;
    const char *t = L->src + L->start;
    size_t tn = L->end - L->start;
    char desc[64];
    lx_describe(L, desc);
    union {
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f;
        double d;
        protobuf_c_boolean b;
        int e;
        char *s;
        ProtobufCBinaryData bd;
    } v;
    memset(&v, 0, sizeof v);

    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: {
        bool neg;
        uint64_t mag;
        if (L->kind != T_NUMBER || !parse_integer(t, tn, &neg, &mag))
            return perr_tok(P, GIR_E_SCHEMA, "expected an integer for %s field \"%s\", found %s",
                            type_name(f->type), f->name, desc);
        bool is_unsigned, is64 = gir_pb_int_type(f->type, &is_unsigned) == 8;
        uint64_t maxpos = is_unsigned ? (is64 ? UINT64_MAX : UINT32_MAX) : (is64 ? INT64_MAX : INT32_MAX);
        uint64_t maxneg = is_unsigned ? 0 : (is64 ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT32_MAX + 1);
        if ((neg && mag > maxneg) || (!neg && mag > maxpos))
            return perr_tok(P, GIR_E_SCHEMA, "integer %s is out of range for %s field \"%s\"", desc,
                            type_name(f->type), f->name);
        if (is_unsigned) {
            if (is64)
                v.u64 = mag;
            else
                v.u32 = (uint32_t)mag;
        } else {
            int64_t sv = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
            if (is64)
                v.i64 = sv;
            else
                v.i32 = (int32_t)sv;
        }
        lx_next(L);
        break;
    }
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
        double d;
        if ((L->kind != T_NUMBER && L->kind != T_IDENT) || !parse_floating(t, tn, &d))
            return perr_tok(P, GIR_E_SCHEMA, "expected a number for %s field \"%s\", found %s",
                            type_name(f->type), f->name, desc);
        if (f->type == PROTOBUF_C_TYPE_FLOAT) {
            if (d > FLT_MAX)
                v.f = INFINITY;
            else if (d < -FLT_MAX)
                v.f = -INFINITY;
            else
                v.f = (float)d;
        } else {
            v.d = d;
        }
        lx_next(L);
        break;
    }
    case PROTOBUF_C_TYPE_BOOL:
        if (L->kind != T_IDENT && L->kind != T_NUMBER)
            return perr_tok(P, GIR_E_SCHEMA, "expected true or false for bool field \"%s\", found %s", f->name,
                            desc);
        if (lx_text_is(L, "true") || lx_text_is(L, "True") || lx_text_is(L, "t") || lx_text_is(L, "1"))
            v.b = 1;
        else if (lx_text_is(L, "false") || lx_text_is(L, "False") || lx_text_is(L, "f") || lx_text_is(L, "0"))
            v.b = 0;
        else
            return perr_tok(P, GIR_E_SCHEMA, "expected true or false for bool field \"%s\", found %s", f->name,
                            desc);
        lx_next(L);
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumDescriptor *ed = f->descriptor;
        if (L->kind == T_IDENT) {
            char name[256];
            if (tn >= sizeof name)
                return perr_tok(P, GIR_E_SCHEMA, "enum %s has no value named %s", ed->name, desc);
            memcpy(name, t, tn);
            name[tn] = '\0';
            const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(ed, name);
            if (!ev)
                return perr_tok(P, GIR_E_SCHEMA, "enum %s has no value named %s", ed->name, desc);
            v.e = ev->value;
        } else {
            bool neg;
            uint64_t mag;
            if (L->kind != T_NUMBER || !parse_integer(t, tn, &neg, &mag) ||
                mag > (neg ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX))
                return perr_tok(P, GIR_E_SCHEMA, "expected a value of enum %s for field \"%s\", found %s",
                                ed->name, f->name, desc);
            v.e = neg ? (int)(-(int64_t)mag) : (int)mag;
        }
        lx_next(L);
        break;
    }
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES: {
        if (L->kind != T_STRING)
            return perr_tok(P, GIR_E_SCHEMA, "expected a quoted string for %s field \"%s\", found %s",
                            type_name(f->type), f->name, desc);
        P->sbuf.len = 0;
        while (L->kind == T_STRING) {
            gir_status st = read_string_token(P);
            if (st)
                return st;
            lx_next(L);
        }
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            if (memchr(P->sbuf.data ? P->sbuf.data : "", '\0', P->sbuf.len))
                return perr(P, GIR_E_SCHEMA, line, col, "string for field \"%s\" contains a NUL byte", f->name);
            if (!valid_utf8((const unsigned char *)(P->sbuf.data ? P->sbuf.data : ""), P->sbuf.len))
                return perr(P, GIR_E_SCHEMA, line, col, "string for field \"%s\" is not valid UTF-8", f->name);
            v.s = malloc(P->sbuf.len + 1);
            if (!v.s)
                return gir_nomem(P->err);
            if (P->sbuf.len)
                memcpy(v.s, P->sbuf.data, P->sbuf.len);
            v.s[P->sbuf.len] = '\0';
        } else {
            v.bd.len = P->sbuf.len;
            if (P->sbuf.len) {
                v.bd.data = malloc(P->sbuf.len);
                if (!v.bd.data)
                    return gir_nomem(P->err);
                memcpy(v.bd.data, P->sbuf.data, P->sbuf.len);
            }
        }
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        return perr_tok(P, GIR_E_INTERNAL, "message field \"%s\" parsed as a scalar", f->name);
    }

    size_t esz = gir_pb_elt_size(f->type);
    gir_status st = GIR_OK;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        void *slot;
        st = reserve_elem(P, msg, f, &slot);
        if (!st) {
            memcpy(slot, &v, esz);
            count_elem(msg, f);
            return GIR_OK;
        }
    } else {
        st = claim_oneof(P, msg, f, nline, ncol);
        if (!st) {
            void *slot = MEMBER(msg, f->offset, void);
            if (f->type == PROTOBUF_C_TYPE_STRING) {
                char *old = *(char **)slot;
                if (old && old != (const char *)f->default_value)
                    free(old);
            } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
                ProtobufCBinaryData *old = slot;
                const ProtobufCBinaryData *dflt = f->default_value;
                if (old->data && (!dflt || dflt->data != old->data))
                    free(old->data);
            }
            memcpy(slot, &v, esz);
            if (f->label == PROTOBUF_C_LABEL_OPTIONAL && !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
                *MEMBER(msg, f->quantifier_offset, protobuf_c_boolean) = 1;
            return GIR_OK;
        }
    }
    /* not stored: free what the value owns */
    if (f->type == PROTOBUF_C_TYPE_STRING)
        free(v.s);
    else if (f->type == PROTOBUF_C_TYPE_BYTES)
        free(v.bd.data);
    return st;
}

static void try_separator(lexer *L)
{
    if (lx_is(L, ',') || lx_is(L, ';'))
        lx_next(L);
}

/* Appends the normalised text of an unknown field (src[start..end)) to
 * msg's unknown fields as a text span (tag 0). */
static gir_status add_text_span(parser *P, ProtobufCMessage *msg, size_t start, size_t end)
{
    const char *s = P->L.src;
    gir_buf b = GIR_BUF_INIT;
    bool space = false;
    size_t i = start;
    while (i < end) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            /* a string, copied as it is */
            if (space && b.len)
                gir_buf_putc(&b, ' ');
            space = false;
            size_t j = i + 1;
            while (j < end && s[j] != c && s[j] != '\n') {
                if (s[j] == '\\' && j + 1 < end && s[j + 1] != '\n')
                    j++;
                j++;
            }
            if (j < end && s[j] == c)
                j++;
            gir_buf_append(&b, s + i, j - i);
            i = j;
            continue;
        }
        if (c == '#') {
            while (i < end && s[i] != '\n')
                i++;
            space = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            space = true;
            i++;
            continue;
        }
        if (space && b.len)
            gir_buf_putc(&b, ' ');
        space = false;
        gir_buf_putc(&b, c);
        i++;
    }
    size_t n = b.len;
    char *text = gir_buf_take(&b);
    if (!text)
        return gir_nomem(P->err);
    ProtobufCMessageUnknownField *u =
        realloc(msg->unknown_fields, (msg->n_unknown_fields + 1) * sizeof *msg->unknown_fields);
    if (!u) {
        free(text);
        return gir_nomem(P->err);
    }
    msg->unknown_fields = u;
    u[msg->n_unknown_fields++] = (ProtobufCMessageUnknownField){ 0, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, n,
                                                                 (uint8_t *)text };
    return GIR_OK;
}

/* The current token names a field msg's type does not have: skips its
 * value ("name: scalar", "name: [..]", "name {..}", "name: {..}") without
 * knowing its type, and keeps the whole field as text. */
static gir_status keep_unknown(parser *P, ProtobufCMessage *msg)
{
    lexer *L = &P->L;
    char desc[64];
    size_t start = L->start;
    char fname[64];
    size_t fl = L->end - L->start < sizeof fname - 1 ? L->end - L->start : sizeof fname - 1;
    memcpy(fname, L->src + L->start, fl);
    fname[fl] = '\0';
    lx_next(L);
    bool colon = lx_is(L, ':');
    if (colon)
        lx_next(L);
    size_t end;
    if (lx_is(L, '{') || lx_is(L, '<') || (colon && lx_is(L, '['))) {
        /* a balanced group, skipped without knowing what it holds */
        size_t depth = 0;
        for (;;) {
            if (L->kind == T_EOF) {
                return perr_tok(P, GIR_E_SYNTAX, "unterminated value of field \"%s\" before the end of the input",
                                fname);
            }
            if (L->kind == T_PUNCT) {
                char c = L->src[L->start];
                if (c == '{' || c == '<' || c == '[') {
                    if (++depth > pbtext_depth()) {
                        char what[160];
                        snprintf(what, sizeof what, "field \"%.100s\" nests deeper than", fname);
                        return depth_error(P, what);
                    }
                } else if (c == '}' || c == '>' || c == ']') {
                    depth--;
                }
            }
            end = L->end;
            lx_next(L);
            if (depth == 0)
                break;
        }
    } else if (colon && (L->kind == T_NUMBER || L->kind == T_IDENT || L->kind == T_STRING)) {
        bool str = L->kind == T_STRING;
        end = L->end;
        lx_next(L);
        while (str && L->kind == T_STRING) { /* adjacent strings */
            end = L->end;
            lx_next(L);
        }
    } else {
        lx_describe(L, desc);
        return perr_tok(P, GIR_E_SYNTAX, "expected a value for field \"%s\", found %s", fname, desc);
    }
    try_separator(L);
    return add_text_span(P, msg, start, end);
}

static gir_status parse_loop(parser *P)
{
    lexer *L = &P->L;
    char desc[64];
    lx_next(L);
    for (;;) {
        frame *fr = &P->st[P->depth - 1];
        if (fr->list_field) {
            if (fr->after_elem) {
                if (lx_is(L, ']')) {
                    lx_next(L);
                    P->depth--;
                    try_separator(L);
                    continue;
                }
                if (lx_is(L, ',')) {
                    lx_next(L);
                    fr->after_elem = false;
                    continue;
                }
                lx_describe(L, desc);
                return perr_tok(P, GIR_E_SYNTAX, "expected \",\" or \"]\" in the list of field \"%s\", found %s",
                                fr->list_field->name, desc);
            }
            if (!lx_is(L, '{') && !lx_is(L, '<')) {
                lx_describe(L, desc);
                return perr_tok(P, GIR_E_SYNTAX, "expected \"{\" to start an element of field \"%s\", found %s",
                                fr->list_field->name, desc);
            }
            char close = lx_is(L, '{') ? '}' : '>';
            const ProtobufCFieldDescriptor *f = fr->list_field;
            ProtobufCMessage *parent = fr->msg;
            void *slot;
            gir_status st = reserve_elem(P, parent, f, &slot);
            if (st)
                return st;
            ProtobufCMessage *sub = gir_pb_new(f->descriptor);
            if (!sub)
                return gir_nomem(P->err);
            *(ProtobufCMessage **)slot = sub;
            count_elem(parent, f);
            fr->after_elem = true;
            st = push_frame(P, sub, NULL, close);
            if (st)
                return st;
            lx_next(L);
            continue;
        }

        if (L->kind == T_EOF) {
            if (P->depth == 1)
                return GIR_OK;
            return perr_tok(P, GIR_E_SYNTAX, "expected \"%c\" before the end of the input", fr->close);
        }
        if (fr->close && lx_is(L, fr->close)) {
            lx_next(L);
            P->depth--;
            if (!P->st[P->depth - 1].list_field)
                try_separator(L);
            continue;
        }
        if (L->kind != T_IDENT) {
            lx_describe(L, desc);
            if (lx_is(L, '['))
                return perr_tok(P, GIR_E_SCHEMA, "extension and Any fields (\"[...]\") are not supported");
            if (fr->close)
                return perr_tok(P, GIR_E_SYNTAX, "expected a field name or \"%c\", found %s", fr->close, desc);
            return perr_tok(P, GIR_E_SYNTAX, "expected a field name, found %s", desc);
        }
        /* a field */
        ProtobufCMessage *msg = fr->msg;
        char name[256];
        size_t nn = L->end - L->start;
        int nline = L->tline, ncol = L->tcol;
        const ProtobufCFieldDescriptor *f = NULL;
        if (nn < sizeof name) {
            memcpy(name, L->src + L->start, nn);
            name[nn] = '\0';
            f = protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
        }
        if (!f) {
            /* a field of a newer schema: kept as text on the message */
            if (nn == 0 || nn >= sizeof name) {
                lx_describe(L, desc);
                return perr_tok(P, GIR_E_SCHEMA, "message %s has no field named %s", msg->descriptor->name, desc);
            }
            gir_status st = keep_unknown(P, msg);
            if (st)
                return st;
            continue;
        }
        lx_next(L);
        bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            if (lx_is(L, ':'))
                lx_next(L);
            if (lx_is(L, '[')) {
                bool empty = false;
                TRY(list_open(P, f, &empty));
                if (empty) {
                    try_separator(L);
                    continue;
                }
                gir_status st = push_frame(P, msg, f, 0);
                if (st)
                    return st;
                continue;
            }
            if (!lx_is(L, '{') && !lx_is(L, '<')) {
                lx_describe(L, desc);
                return perr_tok(P, GIR_E_SYNTAX, "expected \"{\" after message field \"%s\", found %s", f->name,
                                desc);
            }
            char close = lx_is(L, '{') ? '}' : '>';
            ProtobufCMessage *sub = NULL;
            gir_status st;
            if (repeated) {
                void *slot;
                st = reserve_elem(P, msg, f, &slot);
                if (st)
                    return st;
                sub = gir_pb_new(f->descriptor);
                if (!sub)
                    return gir_nomem(P->err);
                *(ProtobufCMessage **)slot = sub;
                count_elem(msg, f);
            } else {
                st = singular_submsg(P, msg, f, nline, ncol, &sub);
                if (st)
                    return st;
            }
            st = push_frame(P, sub, NULL, close);
            if (st)
                return st;
            lx_next(L);
            continue;
        }
        if (!lx_is(L, ':')) {
            lx_describe(L, desc);
            return perr_tok(P, GIR_E_SYNTAX, "expected \":\" after field \"%s\", found %s", f->name, desc);
        }
        lx_next(L);
        if (lx_is(L, '[')) {
            bool empty = false;
            TRY(list_open(P, f, &empty));
            if (!empty) {
                for (;;) {
                    gir_status st = parse_scalar(P, msg, f, nline, ncol);
                    if (st)
                        return st;
                    if (lx_is(L, ']')) {
                        lx_next(L);
                        break;
                    }
                    if (!lx_is(L, ',')) {
                        lx_describe(L, desc);
                        return perr_tok(P, GIR_E_SYNTAX,
                                        "expected \",\" or \"]\" in the list of field \"%s\", found %s", f->name,
                                        desc);
                    }
                    lx_next(L);
                }
            }
        } else {
            gir_status st = parse_scalar(P, msg, f, nline, ncol);
            if (st)
                return st;
        }
        try_separator(L);
    }
}

gir_status gir_pbtext_merge(const char *text, size_t len, ProtobufCMessage *msg, gir_error *err)
{
    parser P;
    memset(&P, 0, sizeof P);
    P.err = err;
    P.L.src = text;
    P.L.len = len;
    P.L.line = 1;
    P.L.col = 1;
    gir_status st = push_frame(&P, msg, NULL, 0);
    if (!st)
        st = parse_loop(&P);
    free(P.caps);
    free(P.st);
    gir_buf_free(&P.sbuf);
    return st;
}

gir_status gir_pbtext_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
                            ProtobufCMessage **out, gir_error *err)
{
    *out = NULL;
    ProtobufCMessage *m = gir_pb_new(d);
    if (!m)
        return gir_nomem(err);
    gir_status st = gir_pbtext_merge(text, len, m, err);
    if (st) {
        gir_pb_free(m);
        return st;
    }
    *out = m;
    return GIR_OK;
}
