/* Protobuf text format: the printer (Python's text_format byte for byte)
 * and the fields kept as text (see pbtext.h).  Nested messages are walked
 * with an explicit stack. */
#include "io/pbtext.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CMEMBER(msg, off, type) ((const type *)((const char *)(msg) + (off)))

/* ======================================================================
 * Numbers as Python prints them
 * ====================================================================== */

void gir_pbtext_fmt_double(char out[48], double v)
{
    gir_fmt_double(out, v, true);
}

/* Python's type_checkers.ToShortestFloat, then str() of the result. */
void gir_pbtext_fmt_float(char out[48], float v)
{
    if (isnan(v) || isinf(v)) {
        gir_fmt_double(out, (double)v, true);
        return;
    }
    char tmp[48];
    double d = (double)v;
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, (double)v);
        d = strtod(tmp, NULL);
        if ((float)d == v)
            break;
    }
    gir_fmt_double(out, d, true);
}

/* ======================================================================
 * Printer
 * ====================================================================== */

static void put_escaped(gir_buf *b, const unsigned char *s, size_t n)
{
    gir_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        switch (c) {
        case '\t': gir_buf_puts(b, "\\t"); break;
        case '\n': gir_buf_puts(b, "\\n"); break;
        case '\r': gir_buf_puts(b, "\\r"); break;
        case '"': gir_buf_puts(b, "\\\""); break;
        case '\'': gir_buf_puts(b, "\\'"); break;
        case '\\': gir_buf_puts(b, "\\\\"); break;
        default:
            if (c < 0x20 || c >= 0x7f)
                gir_buf_printf(b, "\\%03o", c);
            else
                gir_buf_putc(b, (char)c);
        }
    }
    gir_buf_putc(b, '"');
}

/* The value at p of a field of integer type t (gir_pb_int_type), widened:
 * a signed one in *i, an unsigned one in *u; false for other types. */
static bool int_at(ProtobufCType t, const void *p, bool *is_unsigned, int64_t *i, uint64_t *u)
{
    size_t w = gir_pb_int_type(t, is_unsigned);
    if (w == 0)
        return false;
    if (*is_unsigned)
        *u = w == 8 ? *(const uint64_t *)p : *(const uint32_t *)p;
    else
        *i = w == 8 ? *(const int64_t *)p : *(const int32_t *)p;
    return true;
}

static void put_value(gir_buf *b, const ProtobufCFieldDescriptor *f, const void *p)
{
    char num[48];
    bool is_unsigned;
    int64_t i = 0;
    uint64_t u = 0;
    if (int_at(f->type, p, &is_unsigned, &i, &u)) {
        if (is_unsigned)
            gir_buf_printf(b, "%" PRIu64, u);
        else
            gir_buf_printf(b, "%" PRId64, i);
        return;
    }
    switch (f->type) {
    case PROTOBUF_C_TYPE_FLOAT:
        gir_pbtext_fmt_float(num, *(const float *)p);
        gir_buf_puts(b, num);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        gir_pbtext_fmt_double(num, *(const double *)p);
        gir_buf_puts(b, num);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        gir_buf_puts(b, *(const protobuf_c_boolean *)p ? "true" : "false");
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
        if (ev)
            gir_buf_puts(b, ev->name);
        else
            gir_buf_printf(b, "%d", v);
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        put_escaped(b, (const unsigned char *)(s ? s : ""), s ? strlen(s) : 0);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *bd = p;
        put_escaped(b, bd->data ? bd->data : (const unsigned char *)"", bd->data ? bd->len : 0);
        break;
    }
    default: /* integers above; messages are written by the caller */
        break;
    }
}

static bool nonzero_bytes(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i])
            return true;
    return false;
}

/* Number of values of field f to print (0 or 1 for singular fields). */
static size_t field_count(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return *CMEMBER(m, f->quantifier_offset, size_t);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *CMEMBER(m, f->quantifier_offset, uint32_t) == f->id;
    const void *p = CMEMBER(m, f->offset, void);
    if (f->type == PROTOBUF_C_TYPE_MESSAGE)
        return *(ProtobufCMessage *const *)p != NULL;
    if (f->label == PROTOBUF_C_LABEL_REQUIRED)
        return 1;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            const char *s = *(char *const *)p;
            return s && s != (const char *)f->default_value;
        }
        return *CMEMBER(m, f->quantifier_offset, protobuf_c_boolean) != 0;
    }
    /* proto3 implicit presence: printed when not zero */
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        const char *s = *(char *const *)p;
        return s && *s;
    }
    if (f->type == PROTOBUF_C_TYPE_BYTES)
        return ((const ProtobufCBinaryData *)p)->len > 0;
    return nonzero_bytes(p, gir_pb_elt_size(f->type));
}

static const void *field_value(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, size_t i)
{
    const void *p = CMEMBER(m, f->offset, void);
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return (const char *)*(void *const *)p + i * gir_pb_elt_size(f->type);
    return p;
}

/* A protoc map field: repeated <CamelName>Entry { key = 1; value = 2; }. */
static bool is_map_field(const ProtobufCFieldDescriptor *f)
{
    if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
        return false;
    const ProtobufCMessageDescriptor *d = f->descriptor;
    if (d->n_fields != 2 || d->fields[0].id != 1 || d->fields[1].id != 2 || strcmp(d->fields[0].name, "key") ||
        strcmp(d->fields[1].name, "value"))
        return false;
    char camel[256];
    size_t o = 0;
    bool up = true;
    for (const char *s = f->name; *s && o + 6 < sizeof camel; s++) {
        if (*s == '_') {
            up = true;
            continue;
        }
        camel[o++] = (up && *s >= 'a' && *s <= 'z') ? (char)(*s - 'a' + 'A') : *s;
        up = (*s >= '0' && *s <= '9');
    }
    memcpy(camel + o, "Entry", 6);
    return strcmp(d->short_name, camel) == 0;
}

static int cmp_keys(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    const ProtobufCFieldDescriptor *k = &a->descriptor->fields[0];
    const void *pa = CMEMBER(a, k->offset, void), *pb = CMEMBER(b, k->offset, void);
    bool is_unsigned;
    int64_t xi = 0, yi = 0;
    uint64_t xu = 0, yu = 0;
    if (int_at(k->type, pa, &is_unsigned, &xi, &xu) && int_at(k->type, pb, &is_unsigned, &yi, &yu))
        return is_unsigned ? (xu > yu) - (xu < yu) : (xi > yi) - (xi < yi);
    switch (k->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *sa = *(char *const *)pa, *sb = *(char *const *)pb;
        return strcmp(sa ? sa : "", sb ? sb : "");
    }
    case PROTOBUF_C_TYPE_BOOL: {
        int x = *(const protobuf_c_boolean *)pa != 0, y = *(const protobuf_c_boolean *)pb != 0;
        return x - y;
    }
    default:
        return 0;
    }
}

static bool key_before(const void *ctx, size_t x, size_t y)
{
    ProtobufCMessage *const *e = ctx;
    return cmp_keys(e[x], e[y]) < 0;
}

/* The indices of the map entries e[0..n) in key order (stable). */
static size_t *sorted_entries(ProtobufCMessage *const *e, size_t n)
{
    size_t *a = malloc((n ? n : 1) * sizeof *a), *t = malloc((n ? n : 1) * sizeof *t);
    if (a && t) {
        gir_sort_indices(a, t, n, key_before, e);
    } else {
        free(a);
        a = NULL;
    }
    free(t);
    return a;
}

typedef struct pframe {
    const ProtobufCMessage *msg;
    unsigned fi;  /* field index */
    unsigned ui;  /* unknown field index (after the known fields) */
    size_t ei;    /* element index within the field */
    size_t *perm; /* map fields: entries in key order */
    bool map;     /* entries print key and value always */
} pframe;

static void put_indent(gir_buf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gir_buf_puts(b, "  ");
}

gir_status gir_pbtext_print(const ProtobufCMessage *msg, gir_buf *out, gir_error *err)
{
    pframe *st = NULL;
    size_t depth = 0, cap = 0;
    gir_status rc = GIR_OK;
    if (!GIR_GROW(st, cap, 1))
        return gir_nomem(err);
    st[depth++] = (pframe){msg, 0, 0, 0, NULL, false};
    while (depth) {
        pframe *fr = &st[depth - 1];
        const ProtobufCMessageDescriptor *d = fr->msg->descriptor;
        if (fr->fi >= d->n_fields && fr->ui < fr->msg->n_unknown_fields) {
            /* fields of a newer schema, as the text they were read from */
            const ProtobufCMessageUnknownField *u = &fr->msg->unknown_fields[fr->ui++];
            if (u->tag == 0) {
                put_indent(out, depth - 1);
                gir_buf_append(out, (const char *)u->data, u->len);
                gir_buf_putc(out, '\n');
            }
            continue;
        }
        if (fr->fi >= d->n_fields) {
            depth--;
            if (depth) {
                put_indent(out, depth - 1);
                gir_buf_puts(out, "}\n");
            }
            continue;
        }
        const ProtobufCFieldDescriptor *f = &d->fields[fr->fi];
        size_t n = field_count(fr->msg, f);
        if (fr->map && fr->ei == 0 && n == 0)
            n = 1; /* map entries print both key and value */
        if (fr->ei >= n) {
            free(fr->perm);
            fr->perm = NULL;
            fr->fi++;
            fr->ei = 0;
            continue;
        }
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            ProtobufCMessage *const *arr = NULL;
            size_t idx = fr->ei;
            if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                arr = *(ProtobufCMessage *const *const *)CMEMBER(fr->msg, f->offset, void);
                if (fr->ei == 0 && n > 1 && is_map_field(f)) {
                    fr->perm = sorted_entries(arr, n);
                    if (!fr->perm) {
                        rc = gir_nomem(err);
                        break;
                    }
                }
                if (fr->perm)
                    idx = fr->perm[fr->ei];
            }
            const ProtobufCMessage *sub =
                arr ? arr[idx] : *(ProtobufCMessage *const *)CMEMBER(fr->msg, f->offset, void);
            bool map = f->label == PROTOBUF_C_LABEL_REPEATED && is_map_field(f);
            fr->ei++;
            put_indent(out, depth - 1);
            gir_buf_puts(out, f->name);
            gir_buf_puts(out, " {\n");
            if (!sub) { /* the absent value of a map entry */
                put_indent(out, depth - 1);
                gir_buf_puts(out, "}\n");
                continue;
            }
            if (!GIR_GROW(st, cap, depth + 1)) {
                rc = gir_nomem(err);
                break;
            }
            st[depth++] = (pframe){sub, 0, 0, 0, NULL, map};
            continue;
        }
        put_indent(out, depth - 1);
        gir_buf_puts(out, f->name);
        gir_buf_puts(out, ": ");
        put_value(out, f, field_value(fr->msg, f, fr->ei));
        gir_buf_putc(out, '\n');
        fr->ei++;
    }
    for (size_t i = 0; i < depth; i++)
        free(st[i].perm);
    free(st);
    if (!rc && out->failed)
        rc = gir_nomem(err);
    return rc;
}

/* ======================================================================
 * Fields of a newer schema
 * ====================================================================== */

gir_status gir_pbtext_each_unknown(const ProtobufCMessage *msg, gir_pbtext_unknown_fn fn, void *ctx, gir_error *err)
{
    const ProtobufCMessage **st = NULL;
    size_t depth = 0, cap = 0;
    if (!GIR_GROW(st, cap, 1))
        return gir_nomem(err);
    st[depth++] = msg;
    while (depth) {
        const ProtobufCMessage *m = st[--depth];
        for (unsigned i = 0; i < m->n_unknown_fields; i++)
            if (m->unknown_fields[i].tag == 0)
                fn(ctx, m, (const char *)m->unknown_fields[i].data, m->unknown_fields[i].len);
        /* sub-messages, pushed last first so they are visited in order */
        const ProtobufCMessageDescriptor *d = m->descriptor;
        for (unsigned fi = d->n_fields; fi-- > 0;) {
            const ProtobufCFieldDescriptor *f = &d->fields[fi];
            if (f->type != PROTOBUF_C_TYPE_MESSAGE)
                continue;
            size_t n = field_count(m, f);
            for (size_t k = n; k-- > 0;) {
                const ProtobufCMessage *sub =
                    f->label == PROTOBUF_C_LABEL_REPEATED
                        ? (*(ProtobufCMessage *const *const *)CMEMBER(m, f->offset, void))[k]
                        : *(ProtobufCMessage *const *)CMEMBER(m, f->offset, void);
                if (!sub)
                    continue;
                if (!GIR_GROW(st, cap, depth + 1)) {
                    free(st);
                    return gir_nomem(err);
                }
                st[depth++] = sub;
            }
        }
    }
    free(st);
    return GIR_OK;
}

static void count_one(void *ctx, const ProtobufCMessage *m, const char *text, size_t len)
{
    (void)m;
    (void)text;
    (void)len;
    (*(size_t *)ctx)++;
}

size_t gir_pbtext_unknown_count(const ProtobufCMessage *msg)
{
    size_t n = 0;
    gir_error e = GIR_ERROR_INIT;
    if (gir_pbtext_each_unknown(msg, count_one, &n, &e) != GIR_OK) {
        gir_error_clear(&e);
        return n ? n : 1; /* out of memory: at least say "some" */
    }
    return n;
}

size_t gir_pbtext_field_name(const char *text, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    while (n < len && (isalnum((unsigned char)text[n]) || text[n] == '_'))
        n++;
    size_t k = n < cap ? n : (cap ? cap - 1 : 0);
    if (cap) {
        memcpy(out, text, k);
        out[k] = '\0';
    }
    return n;
}
