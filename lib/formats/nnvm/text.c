/* Attribute values as NNVM, MXNet and TVM files spell them: everything is a
 * string; numbers in C/Python notation, bools True/False/1/0, tuples
 * "(3, 3)", "[3,3]", "(3,)", "3", "()", Python-2 longs "[1L, 1L]".  And
 * other JSON values as dmlc lays them out. */
#include "nnvm.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* int_at for numbers of 18 digits or more: strtoll checks the range. */
static bool long_int_at(const char **ps, int64_t *v)
{
    const char *s = *ps;
    errno = 0;
    char *end;
    long long y = strtoll(s, &end, 10);
    if (errno || end == s || !is_digit(end[-1]))
        return false;
    *v = (int64_t)y;
    *ps = end;
    return true;
}

/* Parses one integer at *ps (optional sign, digits, optional L/l suffix),
 * advancing *ps.  Inline: tuples are made of these. */
static inline bool int_at(const char **ps, int64_t *v)
{
    const char *s = skip_ws(*ps);
    bool neg = *s == '-';
    const char *q = s + (neg || *s == '+');
    uint64_t x = 0;
    size_t nd = 0;
    while (nd < 18 && is_digit(q[nd]))
        x = x * 10 + (uint64_t)(q[nd++] - '0');
    const char *end = q + nd;
    if (nd == 0) /* no digit after the sign (strtoll would not take it either) */
        return false;
    if (nd < 18)
        *v = neg ? -(int64_t)x : (int64_t)x;
    else if (!long_int_at(&s, v))
        return false;
    else
        end = s;
    if (*end == 'L' || *end == 'l')
        end++;
    *ps = end;
    return true;
}

/* Nothing but white space (isspace) from s on. */
static bool blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return !*s;
}

bool nn_parse_int(const char *s, int64_t *v)
{
    if (!s)
        return false;
    int64_t x;
    if (!int_at(&s, &x))
        return false;
    if (*skip_ws(s))
        return false;
    *v = x;
    return true;
}

bool nn_parse_float(const char *s, double *v)
{
    if (!s)
        return false;
    s = skip_ws(s);
    if (!*s)
        return false;
    /* infinities and NaN as Python prints them (str(float("-inf"))) */
    static const struct { const char *w; double v; } special[] = {
        { "inf", INFINITY }, { "+inf", INFINITY }, { "-inf", -INFINITY }, { "infinity", INFINITY },
        { "-infinity", -INFINITY }, { "nan", NAN }, { "-nan", NAN }, { "+nan", NAN },
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        size_t n = strlen(special[i].w);
        if (strncasecmp(s, special[i].w, n) == 0 && blank(s + n)) {
            *v = special[i].v;
            return true;
        }
    }
    errno = 0;
    char *end;
    double x = strtod(s, &end);
    if (end == s || *skip_ws(end) || !isfinite(x))
        return false;
    /* strtod also takes hex floats and "infinity"; keep to decimal text. */
    for (const char *p = s; p < end; p++)
        if (!(isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '-' || *p == '+'))
            return false;
    *v = x;
    return true;
}

/* The word w (n bytes, matched case-insensitively when nocase) and then
 * only white space at s. */
static bool word_is(const char *s, const char *w, size_t n, bool nocase)
{
    return (nocase ? strncasecmp(s, w, n) : strncmp(s, w, n)) == 0 && blank(s + n);
}

bool nn_parse_bool(const char *s, bool *v)
{
    if (!s)
        return false;
    s = skip_ws(s);
    if (word_is(s, "true", 4, true) || word_is(s, "1", 1, false)) {
        *v = true;
        return true;
    }
    if (word_is(s, "false", 5, true) || word_is(s, "0", 1, false)) {
        *v = false;
        return true;
    }
    return false;
}

bool nn_is_none(const char *s)
{
    if (!s)
        return false;
    s = skip_ws(s);
    return *s == 'N' && word_is(s, "None", 4, false);
}

bool nn_parse_tuple(const char *s, int64_t *v, size_t *n)
{
    if (!s)
        return false;
    s = skip_ws(s);
    *n = 0;
    char close = 0;
    if (*s == '(')
        close = ')';
    else if (*s == '[')
        close = ']';
    if (!close) {
        /* A bare integer is a 1-tuple. */
        int64_t x;
        if (!nn_parse_int(s, &x))
            return false;
        v[0] = x;
        *n = 1;
        return true;
    }
    s = skip_ws(s + 1);
    if (*s == close)
        return *skip_ws(s + 1) == '\0';
    for (;;) {
        int64_t x;
        if (*n >= NN_MAX_TUPLE || !int_at(&s, &x))
            return false;
        v[(*n)++] = x;
        s = skip_ws(s);
        if (*s == ',') {
            s = skip_ws(s + 1);
            if (*s == close) /* "(3,)" */
                break;
            continue;
        }
        if (*s == close)
            break;
        return false;
    }
    return *skip_ws(s + 1) == '\0';
}

void nn_fmt_tuple(gir_buf *b, const int64_t *v, size_t n)
{
    gir_buf_putc(b, '(');
    for (size_t i = 0; i < n; i++) {
        if (i)
            gir_buf_append(b, ", ", 2);
        gir_buf_put_int(b, v[i]);
    }
    if (n == 1)
        gir_buf_putc(b, ',');
    gir_buf_putc(b, ')');
}

const char *nn_fmt_bool(bool v)
{
    return v ? "True" : "False";
}

void nn_fmt_float(char out[48], double v)
{
    gir_fmt_double(out, v, true);
}

bool nn_parse_shape_hint(const char *s, gir_shape *shape)
{
    int64_t d[NN_MAX_TUPLE];
    size_t n;
    if (!nn_parse_tuple(s, d, &n) || n > GIR_MAX_RANK)
        return false;
    shape->rank = (int)n;
    for (size_t i = 0; i < n; i++) {
        if (d[i] < 0)
            return false;
        shape->dims[i] = d[i] == 0 ? -1 : d[i];
    }
    return true;
}

/* ---- JSON values as dmlc writes them ---- */

void nn_emit_json(gir_json_writer *jw, const gir_json *v)
{
    switch (v->type) {
    case GIR_JSON_NULL: gir_jw_null(jw); break;
    case GIR_JSON_BOOL: gir_jw_bool(jw, v->b); break;
    case GIR_JSON_NUMBER: gir_jw_number_raw(jw, v->u.num, v->len); break;
    case GIR_JSON_STRING: gir_jw_string_n(jw, v->u.str, v->len); break;
    case GIR_JSON_ARRAY: {
        bool pod = v->len <= 10;
        for (size_t i = 0; i < v->len && pod; i++)
            pod = v->u.items[i].type == GIR_JSON_NUMBER;
        gir_jw_begin_array(jw, !pod);
        for (size_t i = 0; i < v->len; i++)
            nn_emit_json(jw, &v->u.items[i]); /* depth bounded by the parser's cap */
        gir_jw_end_array(jw);
        break;
    }
    case GIR_JSON_OBJECT:
        gir_jw_begin_object(jw, v->len > 1);
        for (size_t i = 0; i < v->len; i++) {
            gir_jw_key_n(jw, v->u.members[i].key, v->u.members[i].key_len);
            nn_emit_json(jw, &v->u.members[i].value);
        }
        gir_jw_end_object(jw);
        break;
    }
}
