/* JSON: the emitter, compact, pretty or in dmlc::JSONWriter's layout (see
 * json.h). */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- emitting -------------------------------------------------------------- */

void gir_jw_init(gir_json_writer *w, gir_buf *out, gir_json_style style)
{
    *w = (gir_json_writer){ .out = out, .style = style };
}

void gir_jw_free(gir_json_writer *w)
{
    free(w->multi);
    free(w->count);
    memset(w, 0, sizeof *w);
}

bool gir_jw_ok(const gir_json_writer *w)
{
    return !w->failed && !w->out->failed && w->depth == 0 && !w->key_pending;
}

static void indent(gir_json_writer *w, size_t levels)
{
    static const char line[] = "\n                                                                ";
    size_t n = levels * 2, k = n < sizeof line - 2 ? n : sizeof line - 2;
    gir_buf_append(w->out, line, 1 + k);
    for (n -= k; n; n -= k) {
        k = n < sizeof line - 2 ? n : sizeof line - 2;
        gir_buf_append(w->out, line + 1, k);
    }
}

/* dmlc's WriteSeperator: a newline and indentation when the innermost open
 * container is multi-line (or none is open). */
static void dmlc_separator(gir_json_writer *w)
{
    if (w->depth == 0 || (w->multi[w->depth - 1] & 1))
        indent(w, w->depth);
}

/* Called before every member (with its key) or item. */
static void before_item(gir_json_writer *w)
{
    if (w->depth == 0)
        return;
    size_t *cnt = &w->count[w->depth - 1];
    bool multi = w->multi[w->depth - 1] & 1;
    switch (w->style) {
    case GIR_JSON_DMLC:
        if (*cnt)
            gir_buf_append(w->out, ", ", 2);
        dmlc_separator(w);
        break;
    case GIR_JSON_PRETTY:
        if (*cnt)
            gir_buf_putc(w->out, ',');
        if (multi)
            indent(w, w->depth);
        else if (*cnt)
            gir_buf_putc(w->out, ' ');
        break;
    case GIR_JSON_COMPACT:
        if (*cnt)
            gir_buf_putc(w->out, ',');
        break;
    }
    (*cnt)++;
}

/* Before a value: inside an object the key already did the separator. */
static void before_value(gir_json_writer *w)
{
    if (w->key_pending) {
        w->key_pending = false;
        return;
    }
    /* A value directly inside an object without a key is misuse. */
    if (w->depth && (w->multi[w->depth - 1] & 2) != 0)
        w->failed = true;
    before_item(w);
}

static void open_scope(gir_json_writer *w, char c, bool multi_line, bool is_object)
{
    before_value(w);
    gir_buf_putc(w->out, c);
    if (w->depth == w->cap) {
        size_t cap = w->cap, cap2 = w->cap;
        if (!GIR_GROW(w->multi, cap, w->depth + 1) || !GIR_GROW(w->count, cap2, w->depth + 1)) {
            w->failed = true;
            return;
        }
        w->cap = cap < cap2 ? cap : cap2;
    }
    /* bit 0: multi-line; bit 1: object (for misuse checks) */
    w->multi[w->depth] = (unsigned char)((multi_line ? 1 : 0) | (is_object ? 2 : 0));
    w->count[w->depth] = 0;
    w->depth++;
}

static void close_scope(gir_json_writer *w, char c, bool is_object)
{
    if (w->depth == 0 || w->key_pending || ((w->multi[w->depth - 1] & 2) != 0) != is_object) {
        w->failed = true;
        return;
    }
    w->depth--;
    bool multi = w->multi[w->depth] & 1;
    size_t n = w->count[w->depth];
    switch (w->style) {
    case GIR_JSON_DMLC:
        if (multi && n)
            dmlc_separator(w);
        break;
    case GIR_JSON_PRETTY:
        if (multi && n)
            indent(w, w->depth);
        break;
    case GIR_JSON_COMPACT:
        break;
    }
    gir_buf_putc(w->out, c);
}

void gir_jw_begin_object(gir_json_writer *w, bool multi_line)
{
    open_scope(w, '{', multi_line, true);
}

void gir_jw_end_object(gir_json_writer *w)
{
    close_scope(w, '}', true);
}

void gir_jw_begin_array(gir_json_writer *w, bool multi_line)
{
    open_scope(w, '[', multi_line, false);
}

void gir_jw_end_array(gir_json_writer *w)
{
    close_scope(w, ']', false);
}

void gir_jw_key_n(gir_json_writer *w, const char *key, size_t n)
{
    if (w->depth == 0 || w->key_pending || (w->multi[w->depth - 1] & 2) == 0) {
        w->failed = true;
        return;
    }
    before_item(w);
    gir_buf_putc(w->out, '"');
    gir_json_escape(w->out, key, n, w->style);
    if (w->style == GIR_JSON_COMPACT)
        gir_buf_append(w->out, "\":", 2);
    else
        gir_buf_append(w->out, "\": ", 3);
    w->key_pending = true;
}

void gir_jw_key(gir_json_writer *w, const char *key)
{
    gir_jw_key_n(w, key, strlen(key));
}

void gir_json_escape(gir_buf *b, const char *s, size_t n, gir_json_style style)
{
    size_t i = 0;
    while (i < n) {
        /* nearly every byte is written as it is: copy the run at once */
        size_t j = i;
        while (j < n && (unsigned char)s[j] >= 0x20 && s[j] != '"' && s[j] != '\\')
            j++;
        if (j > i)
            gir_buf_append(b, s + i, j - i);
        if (j == n)
            break;
        unsigned char c = (unsigned char)s[j];
        char esc[2] = { '\\', gir_json_escape_letter((char)c) };
        if (style == GIR_JSON_DMLC && (c == '\b' || c == '\f'))
            esc[1] = 0; /* dmlc's reader knows only \" \\ \n \r \t */
        if (esc[1])
            gir_buf_append(b, esc, 2);
        else if (style != GIR_JSON_DMLC)
            gir_buf_printf(b, "\\u%04x", c);
        else /* DMLC style: dmlc's reader knows no other escape, the byte goes raw */
            gir_buf_putc(b, (char)c);
        i = j + 1;
    }
}

void gir_jw_string_n(gir_json_writer *w, const char *s, size_t n)
{
    before_value(w);
    gir_buf_putc(w->out, '"');
    gir_json_escape(w->out, s, n, w->style);
    gir_buf_putc(w->out, '"');
}

void gir_jw_string(gir_json_writer *w, const char *s)
{
    gir_jw_string_n(w, s, strlen(s));
}

void gir_jw_int(gir_json_writer *w, int64_t v)
{
    before_value(w);
    gir_buf_put_int(w->out, v);
}

void gir_jw_uint(gir_json_writer *w, uint64_t v)
{
    before_value(w);
    gir_buf_put_uint(w->out, v);
}

void gir_jw_double(gir_json_writer *w, double v)
{
    before_value(w);
    if (!isfinite(v)) {
        gir_buf_append(w->out, "null", 4);
        return;
    }
    char buf[48];
    gir_fmt_double(buf, v, false);
    gir_buf_puts(w->out, buf);
}

void gir_jw_number_raw(gir_json_writer *w, const char *text, size_t n)
{
    before_value(w);
    gir_buf_append(w->out, text, n);
}

void gir_jw_bool(gir_json_writer *w, bool v)
{
    before_value(w);
    gir_buf_puts(w->out, v ? "true" : "false");
}

void gir_jw_null(gir_json_writer *w)
{
    before_value(w);
    gir_buf_append(w->out, "null", 4);
}
