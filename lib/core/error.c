/* Status registry and error objects. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int exit_code;
    const char *desc;
} codes[] = {
#define GIR_CODE(e, name, exitc, desc) { name, exitc, desc },
#include "graphir/codes.def"
#undef GIR_CODE
};

_Static_assert(sizeof codes / sizeof codes[0] == GIR_STATUS_COUNT_,
               "every gir_status has a registry row");

GIR_API void gir_error_init(gir_error *err)
{
    if (err) {
        err->code = GIR_OK;
        err->message = err->file = err->location = err->node = NULL;
    }
}

GIR_API void gir_error_clear(gir_error *err)
{
    if (!err)
        return;
    free(err->message);
    free(err->file);
    free(err->location);
    free(err->node);
    gir_error_init(err);
}

GIR_API const char *gir_status_name(gir_status code)
{
    if ((unsigned)code >= GIR_STATUS_COUNT_)
        return "invalid-status";
    return codes[code].name;
}

GIR_API const char *gir_status_describe(gir_status code)
{
    if ((unsigned)code >= GIR_STATUS_COUNT_)
        return "Not a libgraphir status code.";
    return codes[code].desc;
}

GIR_API int gir_status_exit_code(gir_status code)
{
    if ((unsigned)code >= GIR_STATUS_COUNT_)
        return 5;
    return codes[code].exit_code;
}

GIR_API gir_status gir_status_from_name(const char *name)
{
    for (unsigned i = 0; name && i < GIR_STATUS_COUNT_; i++)
        if (strcmp(codes[i].name, name) == 0)
            return (gir_status)i;
    return GIR_STATUS_COUNT_;
}

char *gir_vstrdupf(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *gir_strdupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = gir_vstrdupf(fmt, ap);
    va_end(ap);
    return s;
}

/* Error texts carry names from files (nodes, tensors, members): control
 * bytes (C0, DEL) are written as \xNN so that a file cannot move the
 * cursor, recolour a terminal or forge lines of output.  Takes s. */
static char *escape_controls(char *s)
{
    if (!s)
        return NULL;
    size_t extra = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        extra += *p < 0x20 || *p == 0x7f ? 3 : 0;
    if (!extra)
        return s;
    size_t len = strlen(s);
    char *e = malloc(len + extra + 1), *q = e;
    if (!e) {
        free(s);
        return NULL;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            *q++ = '\\';
            *q++ = 'x';
            *q++ = hex[*p >> 4];
            *q++ = hex[*p & 15];
        } else {
            *q++ = (char)*p;
        }
    }
    *q = '\0';
    free(s);
    return e;
}

/* gir_fail's record: code and the message (none for a NULL fmt). */
static void record(gir_error *err, gir_status code, const char *fmt, va_list ap)
{
    if (!err || err->code != GIR_OK)
        return;
    err->code = code;
    if (fmt)
        err->message = escape_controls(gir_vstrdupf(fmt, ap));
}

gir_status gir_fail(gir_error *err, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(err, code, fmt, ap);
    va_end(ap);
    return code;
}

gir_status gir_fail_file(gir_error *err, const char *path, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(err, code, fmt, ap);
    va_end(ap);
    gir_err_file(err, path);
    return code;
}

gir_status gir_vfail(gir_error *err, gir_status code, const char *fmt, va_list ap)
{
    if (!err || err->code != GIR_OK)
        return code;
    char *msg = escape_controls(gir_vstrdupf(fmt, ap));
    if (!msg)
        return gir_nomem(err);
    err->code = code;
    err->message = msg;
    return code;
}

static void set_once(gir_error *err, char **slot, const char *fmt, va_list ap)
{
    if (!err || err->code == GIR_OK || *slot)
        return;
    *slot = escape_controls(gir_vstrdupf(fmt, ap));
}

void gir_err_file(gir_error *err, const char *path)
{
    if (err && err->code != GIR_OK && !err->file && path)
        err->file = escape_controls(gir_strdupf("%s", path));
}

void gir_err_node(gir_error *err, const char *name)
{
    if (err && err->code != GIR_OK && !err->node && name)
        err->node = escape_controls(gir_strdupf("%s", name));
}

gir_status gir_err_in_node(gir_status st, gir_error *err, const char *name)
{
    if (st != GIR_OK)
        gir_err_node(err, name);
    return st;
}

gir_status gir_err_in_file(gir_status st, gir_error *err, const char *path)
{
    if (st != GIR_OK)
        gir_err_file(err, path);
    return st;
}

void gir_err_loc(gir_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_once(err, err ? &err->location : NULL, fmt, ap);
    va_end(ap);
}

void gir_err_replace_message(gir_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *m = escape_controls(gir_vstrdupf(fmt, ap));
    va_end(ap);
    if (m) {
        free(err->message);
        err->message = m;
    }
}

GIR_API char *gir_error_format(const gir_error *err)
{
    if (!err)
        return NULL;
    gir_buf b = GIR_BUF_INIT;
    if (err->file)
        gir_buf_printf(&b, "%s: ", err->file);
    if (err->location)
        gir_buf_printf(&b, "%s: ", err->location);
    if (err->node)
        gir_buf_printf(&b, "node '%s': ", err->node);
    if (err->message)
        gir_buf_puts(&b, err->message);
    else
        gir_buf_puts(&b, gir_status_describe(err->code));
    gir_buf_printf(&b, " [%s]", gir_status_name(err->code));
    return gir_buf_take(&b);
}
