/* JSON: reading the values of a parsed document (types, members,
 * numbers from their source text, strings) (see json.h). */
#include "json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gir_json_type_name(gir_json_type t)
{
    switch (t) {
    case GIR_JSON_NULL: return "null";
    case GIR_JSON_BOOL: return "a boolean";
    case GIR_JSON_NUMBER: return "a number";
    case GIR_JSON_STRING: return "a string";
    case GIR_JSON_ARRAY: return "an array";
    case GIR_JSON_OBJECT: return "an object";
    }
    return "a value";
}

void gir_json_describe(const gir_json *v, char *out, size_t n)
{
    if (!n)
        return;
    if (!v) {
        snprintf(out, n, "nothing");
        return;
    }
    switch (v->type) {
    case GIR_JSON_BOOL:
        snprintf(out, n, "%s", v->b ? "true" : "false");
        break;
    case GIR_JSON_NUMBER:
        snprintf(out, n, "the number %.*s", (int)(v->len > 32 ? 32 : v->len), v->u.num);
        break;
    case GIR_JSON_STRING:
        snprintf(out, n, "the string \"%.*s\"%s", (int)(v->len > 40 ? 40 : v->len), v->u.str,
                 v->len > 40 ? "..." : "");
        break;
    case GIR_JSON_ARRAY:
        snprintf(out, n, "an array of %zu", (size_t)v->len);
        break;
    case GIR_JSON_OBJECT:
        snprintf(out, n, "an object");
        break;
    default:
        snprintf(out, n, "null");
        break;
    }
}

/* ---- access -------------------------------------------------------------- */

const gir_json *gir_json_get(const gir_json *obj, const char *key)
{
    if (!obj || obj->type != GIR_JSON_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < obj->len; i++) {
        const gir_json_member *m = &obj->u.members[i];
        if (m->key_len == kl && memcmp(m->key, key, kl) == 0)
            return &m->value;
    }
    return NULL;
}

const char *gir_json_number_text(const gir_json *v, size_t *len)
{
    if (!v || v->type != GIR_JSON_NUMBER)
        return NULL;
    if (len)
        *len = v->len;
    return v->u.num;
}

static bool is_integer_text(const char *s, size_t n, bool allow_minus)
{
    size_t i = 0;
    if (n && s[0] == '-') {
        if (!allow_minus)
            return false;
        i = 1;
    }
    if (i == n)
        return false;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* The integer literal s[0..n) of at most 24 characters (is_signed: it may
 * start with '-') read by strtoll into *sx, or strtoull into *ux; false if
 * it is none or out of range. */
static bool strto_integer(const char *s, size_t n, bool is_signed, long long *sx, unsigned long long *ux)
{
    if (n > 24 || !is_integer_text(s, n, is_signed))
        return false;
    char buf[32], *end;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    if (is_signed)
        *sx = strtoll(buf, &end, 10);
    else
        *ux = strtoull(buf, &end, 10);
    return !errno && !*end;
}

/* Digits only, no overflow: the common case without strtoll. */
static bool small_digits(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 18)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9)
            return false;
        x = x * 10 + d;
    }
    *out = x;
    return true;
}

/* The integer a number's source text spells, as gir_json_get_i64 and
 * gir_json_get_u64 read it (integer literals in range only). */
static bool text_i64(const char *s, size_t n, int64_t *out)
{
    uint64_t u;
    if (small_digits(s, n, &u)) {
        *out = (int64_t)u;
        return true;
    }
    if (n > 1 && s[0] == '-' && small_digits(s + 1, n - 1, &u)) {
        *out = -(int64_t)u;
        return true;
    }
    long long x;
    if (!strto_integer(s, n, true, &x, NULL))
        return false;
    *out = (int64_t)x;
    return true;
}

static bool text_u64(const char *s, size_t n, uint64_t *out)
{
    unsigned long long x;
    if (small_digits(s, n, out))
        return true;
    if (!strto_integer(s, n, false, NULL, &x))
        return false;
    *out = (uint64_t)x;
    return true;
}

bool gir_json_get_i64(const gir_json *v, int64_t *out)
{
    return v && v->type == GIR_JSON_NUMBER && text_i64(v->u.num, v->len, out);
}

bool gir_json_get_u64(const gir_json *v, uint64_t *out)
{
    return v && v->type == GIR_JSON_NUMBER && text_u64(v->u.num, v->len, out);
}

bool gir_json_get_double(const gir_json *v, double *out)
{
    if (!v || v->type != GIR_JSON_NUMBER || v->len == 0)
        return false;
    char small[128];
    char *buf = v->len < sizeof small ? small : malloc(v->len + 1);
    if (!buf)
        return false;
    memcpy(buf, v->u.num, v->len);
    buf[v->len] = '\0';
    errno = 0;
    char *end;
    double x = strtod(buf, &end);
    bool ok = *end == '\0' && isfinite(x);
    if (buf != small)
        free(buf);
    if (ok)
        *out = x;
    return ok;
}

const char *gir_json_get_cstr(const gir_json *v)
{
    if (!v || v->type != GIR_JSON_STRING || strlen(v->u.str) != v->len)
        return NULL;
    return v->u.str;
}
