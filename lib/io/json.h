/* JSON for the format plugins: a read-only DOM (read by a pull lexer that
 * takes plain valid JSON, with yajl's callback parser behind it for
 * everything else and every error message), the lexer itself for readers
 * that build their own structures, and a small emitter (compact, pretty,
 * or the dmlc::JSONWriter layout that NNVM, MXNet and TVM files use).
 * Internal, not installed.
 *
 * Parsing
 *   - The DOM lives in one arena owned by the document; values are plain
 *     structs (arrays hold their elements contiguously, objects their
 *     members in file order).
 *   - Every value records the byte offset of its first character, so errors
 *     can say "line L:C" (gir_json_err_at).
 *   - Numbers keep their exact source text (gir_json_number_text); typed
 *     accessors parse it on demand (gir_json_get_i64 accepts only integer
 *     literals, gir_json_get_double any number).
 *   - Strings are unescaped, NUL-terminated, and may contain NUL bytes
 *     (their length is in len; gir_json_get_cstr refuses embedded NULs).
 *   - Duplicate keys in one object fail with GIR_E_DUPLICATE unless
 *     allowed; nesting deeper than max_depth fails with GIR_E_LIMIT; bad
 *     syntax (also truncation) fails with GIR_E_SYNTAX and a line:column.
 *   - The DOM is built with an explicit stack: the parser never recurses on
 *     input.  A walker that recurses is bounded by max_depth.
 *
 * Emitting
 *   The writer appends to a gir_buf; the caller may drain the buffer (write
 *   it out and reset len to 0) between any two calls.  Containers are
 *   opened with a multi_line flag:
 *   - GIR_JSON_DMLC reproduces dmlc::JSONWriter byte for byte: members and
 *     items are separated by ", "; when the innermost open container is
 *     multi-line, each member/item starts on a new line indented by two
 *     spaces per open container; a closing bracket goes on a new line only
 *     if the container had items and the container around it is
 *     multi-line.  Strings escape only \r \n \\ \t \" (dmlc's reader knows
 *     no other escape); every other byte is written raw.
 *   - GIR_JSON_PRETTY: standard layout (",\n" + indentation, closing bracket
 *     on its own line); GIR_JSON_COMPACT: no whitespace.  Both escape
 *     control characters as \u00XX.
 */
#ifndef GIR_IO_JSON_H
#define GIR_IO_JSON_H

#include "core/internal.h"

typedef enum gir_json_type {
    GIR_JSON_NULL = 0,
    GIR_JSON_BOOL,
    GIR_JSON_NUMBER,
    GIR_JSON_STRING,
    GIR_JSON_ARRAY,
    GIR_JSON_OBJECT
} gir_json_type;

typedef struct gir_json gir_json;
typedef struct gir_json_member gir_json_member;

struct gir_json {
    uint8_t type;     /* a gir_json_type (a byte keeps the DOM small) */
    bool b;           /* BOOL */
    uint32_t offset;  /* byte offset of the value's first character (texts are < 4 GiB) */
    size_t len;       /* STRING: bytes; NUMBER: text length; ARRAY/OBJECT: count */
    union {
        const char *str;          /* STRING: NUL-terminated, len bytes */
        const char *num;          /* NUMBER: source text (len bytes, NOT terminated) */
        const gir_json *items;    /* ARRAY: len elements */
        const gir_json_member *members; /* OBJECT: len members, file order */
    } u;
};

struct gir_json_member {
    const char *key; /* NUL-terminated */
    uint32_t key_len;
    uint32_t key_offset; /* byte offset of the key's opening quote */
    gir_json value;
};

typedef struct gir_json_options {
    unsigned max_depth;        /* 0: the max-depth limit (core/limits.h) */
    bool allow_duplicate_keys; /* false: a repeated key fails (GIR_E_DUPLICATE) */
    bool allow_comments;       /* accept C/C++ comments */
    bool no_utf8_check;        /* accept strings that are not valid UTF-8 */
    bool allow_trailing_garbage; /* ignore whatever follows the top-level value */
    bool reference_parser;     /* parse with yajl alone, not the fast path (for tests) */
} gir_json_options;

typedef struct gir_json_doc gir_json_doc;

/* Parses text[0..len).  The document refers to text (numbers' source text,
 * line:column computation): text must outlive the document.  opts may be
 * NULL (defaults).  On failure *out is NULL and err has code, message and
 * "line L:C" location (file is left to the caller).  Texts of 4 GiB or more
 * are refused (GIR_E_LIMIT): offsets are 32-bit. */
gir_status gir_json_parse(const char *text, size_t len, const gir_json_options *opts, gir_json_doc **out,
                          gir_error *err);
/* Reads and parses a file (the document owns the text).  max_bytes caps the
 * file size (0: no cap).  Errors carry the file name. */
gir_status gir_json_parse_file(const char *path, size_t max_bytes, const gir_json_options *opts,
                               gir_json_doc **out, gir_error *err);
/* Reads (or maps) a file into a document without parsing it: its root is
 * null until gir_json_doc_parse.  Same errors as gir_json_parse_file's
 * reading. */
gir_status gir_json_open_file(const char *path, size_t max_bytes, gir_json_doc **out, gir_error *err);
/* Parses the document's whole text into it, replacing any values it held
 * (gir_json_parse's errors; the caller adds the file name). */
gir_status gir_json_doc_parse(gir_json_doc *d, const gir_json_options *opts, gir_error *err);
void gir_json_doc_free(gir_json_doc *d);
/* The root value (NULL for a NULL document). */
const gir_json *gir_json_root(const gir_json_doc *d);
/* The parsed text and its length. */
const char *gir_json_text(const gir_json_doc *d, size_t *len);
/* Total DOM values (for limits and statistics). */
size_t gir_json_value_count(const gir_json_doc *d);

/* 1-based line and byte column of a byte offset in the document's text. */
void gir_json_line_col(const gir_json_doc *d, size_t offset, unsigned *line, unsigned *col);
/* Sets err's location (if still empty) to "POINTER (line L:C)" where L:C is
 * the position of v (v may be NULL: pointer only).  pointer_fmt is a printf
 * format for the JSON pointer ("/nodes/%zu/inputs"). */
void gir_json_err_at(gir_error *err, const gir_json_doc *d, const gir_json *v, const char *pointer_fmt, ...)
    GIR_PRINTF(4, 5);

/* ---- the pull lexer -------------------------------------------------------
 *
 * The tokens of a whole text, the grammar checked as they come: what
 * gir_json_parse reads a text with before it turns to yajl, for readers
 * that build their own structures rather than a DOM.  The lexer accepts
 * only plain, valid JSON; at anything else (a syntax error, comments,
 * surrogate escapes, bad UTF-8 while checked, nesting deeper than
 * max_depth, a root that is not an object or array, trailing bytes) it
 * returns GIR_JT_FAIL, and the reader gives up: it parses the text with
 * gir_json_parse / gir_json_doc_parse, which words any error.  The lexer
 * does not look for duplicate keys (the reader must, or give up). */

typedef enum gir_json_token {
    GIR_JT_FAIL = 0,    /* not plain valid JSON (or no memory): give up */
    GIR_JT_END,         /* the root value is complete and only whitespace follows */
    GIR_JT_OBJECT,      /* '{' */
    GIR_JT_OBJECT_END,  /* '}' */
    GIR_JT_ARRAY,       /* '[' */
    GIR_JT_ARRAY_END,   /* ']' */
    GIR_JT_KEY,         /* a member's key (str, str_len); its ':' is read */
    GIR_JT_STRING,      /* str, str_len */
    GIR_JT_NUMBER,      /* source text in str, str_len */
    GIR_JT_TRUE,
    GIR_JT_FALSE,
    GIR_JT_NULL
} gir_json_token;

typedef struct gir_json_lexer {
    /* The current token. */
    size_t offset;       /* byte offset of its first character */
    const char *str;     /* KEY, STRING: the unescaped bytes (not NUL-terminated;
                          * in the text, or in a buffer the next token reuses
                          * when escaped); NUMBER: its text */
    size_t str_len;
    bool escaped;        /* KEY, STRING: the token had escapes */
    unsigned depth;      /* containers open after this token */
    /* Private. */
    const char *text_;
    size_t len_, pos_;
    bool check_utf8_, allow_dup_;
    unsigned max_depth_, want_;
    unsigned char *kinds_; /* per open container: 1 object, 0 array */
    size_t cap_kinds_;
    char *scratch_;
    size_t cap_scratch_;
} gir_json_lexer;

/* A lexer over text[0..len) with opts' max_depth, no_utf8_check and
 * allow_duplicate_keys (opts may be NULL). */
void gir_json_lex_init(gir_json_lexer *lx, const char *text, size_t len, const gir_json_options *opts);
gir_json_token gir_json_lex_next(gir_json_lexer *lx);
void gir_json_lex_free(gir_json_lexer *lx);
/* Reading a value whose shape the reader knows, byte by byte, rather than
 * token by token (cheaper: no grammar state per token).  Where the lexer
 * expects a value (after a KEY, or after a ',' in an array ... in practice
 * after a KEY), gir_json_lex_direct gives the text and the position of the
 * value's first byte (whitespace not skipped) and checks that `levels` more
 * nested containers stay within max_depth; the reader then scans the value
 * itself with gir_json_skip_space and gir_json_lex_string (and its own
 * tests of the structural bytes: it must accept only plain valid JSON, and
 * give up at anything else), and hands the position just past the value
 * back with gir_json_lex_resume: the lexer goes on as after a value. */
bool gir_json_lex_direct(gir_json_lexer *lx, unsigned levels, const char **text, size_t *len, size_t *pos);
void gir_json_lex_resume(gir_json_lexer *lx, size_t pos);
/* 1 for the four whitespace bytes of JSON (space, tab, LF, CR). */
extern const unsigned char gir_json_space[256];
/* 1 for a byte that stands for itself inside a string: printable ASCII
 * but the quote and the backslash. */
extern const unsigned char gir_json_plain[256];

/* gir_json_lex_string for any string (escapes, UTF-8). */
bool gir_json_lex_string_any(gir_json_lexer *lx, size_t *pos);

/* The string whose opening quote is at text[*pos], the lexer's rules
 * (escapes, UTF-8 while checked): on success the token's str, str_len and
 * escaped are set and *pos is just past the closing quote.  Inline for
 * strings of plain ASCII, which most are. */
static inline bool gir_json_lex_string(gir_json_lexer *lx, size_t *pos)
{
    const char *t = lx->text_;
    size_t len = lx->len_, start = *pos + 1, p = start;
    while (p < len && gir_json_plain[(unsigned char)t[p]])
        p++;
    if (p == len || t[p] != '"')
        return gir_json_lex_string_any(lx, pos);
    lx->str = t + start;
    lx->str_len = p - start;
    lx->escaped = false;
    *pos = p + 1;
    return true;
}

/* The first byte at or after p (<= len) that is not whitespace. */
static inline size_t gir_json_skip_space(const char *t, size_t len, size_t p)
{
    while (p < len && gir_json_space[(unsigned char)t[p]])
        p++;
    return p;
}

/* Reads the next value from the lexer (a scalar, or a container and all it
 * holds) as a DOM in d's arena: offsets are the text's, so d must be the
 * document of the lexer's text.  False when the lexer or the builder gives
 * up (duplicate keys unless allowed, memory); then d may hold garbage
 * values until it is parsed or freed. */
bool gir_json_lex_dom(gir_json_lexer *lx, gir_json_doc *d, const gir_json **out);

/* "null", "a boolean", "a number", "a string", "an array", "an object". */
const char *gir_json_type_name(gir_json_type t);
/* A short description of the value for messages: the type name, with the
 * value for scalars ("the number 3", "the string \"abc\"" (truncated)). */
void gir_json_describe(const gir_json *v, char *out, size_t n);

/* ---- access ------------------------------------------------------------- */

static inline bool gir_json_is(const gir_json *v, gir_json_type t) { return v && v->type == t; }
/* Member of an object by key (first match), or NULL (also for non-objects). */
const gir_json *gir_json_get(const gir_json *obj, const char *key);
/* Element i of an array, or NULL. */
static inline const gir_json *gir_json_at(const gir_json *arr, size_t i)
{
    return (arr && arr->type == GIR_JSON_ARRAY && i < arr->len) ? &arr->u.items[i] : NULL;
}
/* Source text of a number (not NUL-terminated), or NULL. */
const char *gir_json_number_text(const gir_json *v, size_t *len);
/* True when v is an integer literal (no fraction or exponent) in range. */
bool gir_json_get_i64(const gir_json *v, int64_t *out);
bool gir_json_get_u64(const gir_json *v, uint64_t *out);
/* True when v is a number representable as a finite double. */
bool gir_json_get_double(const gir_json *v, double *out);
/* The string of a STRING value without embedded NUL bytes, else NULL. */
const char *gir_json_get_cstr(const gir_json *v);

/* ---- emitting ----------------------------------------------------------- */

typedef enum gir_json_style {
    GIR_JSON_COMPACT = 0,
    GIR_JSON_PRETTY,
    GIR_JSON_DMLC
} gir_json_style;

typedef struct gir_json_writer {
    gir_buf *out;
    gir_json_style style;
    size_t depth;           /* open containers */
    size_t cap;
    unsigned char *multi;   /* per open container: multi-line flag */
    size_t *count;          /* per open container: items written */
    bool key_pending;       /* a key was written; its value comes next */
    bool failed;            /* allocation failure or misuse */
} gir_json_writer;

void gir_jw_init(gir_json_writer *w, gir_buf *out, gir_json_style style);
void gir_jw_free(gir_json_writer *w);
/* True when nothing failed and every container was closed. */
bool gir_jw_ok(const gir_json_writer *w);

void gir_jw_begin_object(gir_json_writer *w, bool multi_line);
void gir_jw_end_object(gir_json_writer *w);
void gir_jw_begin_array(gir_json_writer *w, bool multi_line);
void gir_jw_end_array(gir_json_writer *w);
/* The key of the next member (inside an object). */
void gir_jw_key(gir_json_writer *w, const char *key);
void gir_jw_key_n(gir_json_writer *w, const char *key, size_t n);
void gir_jw_string(gir_json_writer *w, const char *s);
void gir_jw_string_n(gir_json_writer *w, const char *s, size_t n);
void gir_jw_int(gir_json_writer *w, int64_t v);
void gir_jw_uint(gir_json_writer *w, uint64_t v);
/* Shortest round-tripping text ("0.001", "1e-05", "3.0"); non-finite
 * values are written as null. */
void gir_jw_double(gir_json_writer *w, double v);
/* A number given as text (written verbatim; the caller vouches for it). */
void gir_jw_number_raw(gir_json_writer *w, const char *text, size_t n);
void gir_jw_bool(gir_json_writer *w, bool v);
void gir_jw_null(gir_json_writer *w);

/* Appends s to b with the string escaping of style (no quotes). */
void gir_json_escape(gir_buf *b, const char *s, size_t n, gir_json_style style);

/* JSON's two-character escapes, for the parser and the emitter: pairs of
 * the letter after the backslash and the byte it stands for. */
#define GIR_JSON_ESCAPE_PAIRS "\"\"\\\\//b\bf\fn\nr\rt\t"
/* The byte the escape \letter stands for; 0 for none (\u is not one). */
static inline char gir_json_unescape(char letter)
{
    for (const char *q = GIR_JSON_ESCAPE_PAIRS; *q; q += 2)
        if (q[0] == letter)
            return q[1];
    return 0;
}
/* The letter of byte c's two-character escape; 0 for none. */
static inline char gir_json_escape_letter(char c)
{
    for (const char *q = GIR_JSON_ESCAPE_PAIRS; *q; q += 2)
        if (q[1] == c)
            return q[0];
    return 0;
}

#endif
