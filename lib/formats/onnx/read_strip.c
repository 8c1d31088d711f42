/* Large initializers read in place: before the protobuf is unpacked (which
 * copies every byte field), the raw_data of each large graph initializer is
 * cut out of the message and replaced by an external-data reference to the
 * same bytes of the model file itself (data_location EXTERNAL, location =
 * the file's name, offset, length).  The unpacked model is then small, the
 * file's buffer is freed before unpacking, and the weights are read lazily
 * by tensor.c's external-data loader when something needs them: a
 * model's weights are never held twice while it is read.
 *
 * Wire format: a field is a varint key (number << 3 | wire type) and a
 * value: 0 varint, 1 eight bytes, 2 varint length and bytes, 5 four bytes
 * (3 and 4, groups, never occur in ONNX: a message holding them is left as
 * it is).  ModelProto.graph = 7, GraphProto.initializer = 5,
 * TensorProto.raw_data = 9, .external_data = 13 (StringStringEntryProto:
 * key = 1, value = 2), .data_location = 14 (EXTERNAL = 1).  Three fixed
 * levels: no recursion. */
#include "onnx.h"
#include "io/pbwire.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct wire_field {
    uint32_t number, type;
    const uint8_t *start;  /* the key's first byte */
    const uint8_t *value;  /* LEN: the payload; else the value's first byte */
    size_t vlen;           /* LEN: payload bytes */
    const uint8_t *end;    /* past the field */
} wire_field;

/* The next field of [*p, end); false at the end or on anything malformed
 * (*bad set then). */
static bool next_field(const uint8_t **p, const uint8_t *end, wire_field *f, bool *bad)
{
    if (*p >= end)
        return false;
    f->start = *p;
    uint64_t key, v;
    if (!gir_pb_get_varint(p, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX) {
        *bad = true;
        return false;
    }
    f->number = (uint32_t)(key >> 3);
    f->type = (uint32_t)(key & 7);
    f->value = *p;
    f->vlen = 0;
    switch (f->type) {
    case 0:
        if (!gir_pb_get_varint(p, end, &v)) {
            *bad = true;
            return false;
        }
        break;
    case 1:
    case 5: {
        size_t n = f->type == 1 ? 8 : 4;
        if ((size_t)(end - *p) < n) {
            *bad = true;
            return false;
        }
        *p += n;
        break;
    }
    case 2:
        if (!gir_pb_get_varint(p, end, &v) || v > (uint64_t)(end - *p)) {
            *bad = true;
            return false;
        }
        f->value = *p;
        f->vlen = (size_t)v;
        *p += v;
        break;
    default:
        *bad = true;
        return false;
    }
    f->end = *p;
    return true;
}

static void put_varint(gir_buf *b, uint64_t v)
{
    uint8_t tmp[GIR_PB_VARINT_MAX];
    gir_buf_append(b, tmp, gir_pb_put_varint(tmp, v));
}

static void put_len_field(gir_buf *b, uint32_t number, const void *p, size_t n)
{
    put_varint(b, (uint64_t)number << 3 | 2);
    put_varint(b, n);
    gir_buf_append(b, p, n);
}

static void put_entry(gir_buf *b, const char *key, const char *value)
{
    gir_buf e = GIR_BUF_INIT;
    put_len_field(&e, 1, key, strlen(key));
    put_len_field(&e, 2, value, strlen(value));
    put_len_field(b, 13, e.failed ? "" : e.data, e.failed ? 0 : e.len);
    if (e.failed)
        b->failed = true;
    gir_buf_free(&e);
}

/* A TensorProto: its raw_data made external when large enough.  Returns
 * whether it changed (out holds the new message then). */
static bool strip_tensor(const uint8_t *base, const uint8_t *p, const uint8_t *end, const char *location,
                         size_t min_bytes, gir_buf *out)
{
    wire_field f, raw = { 0 };
    bool bad = false, has_raw = false;
    for (const uint8_t *q = p; next_field(&q, end, &f, &bad);) {
        if (f.number == 13 || f.number == 14)
            return false; /* already external, or a location of its own */
        if (f.number == 9 && f.type == 2) {
            if (has_raw)
                return false; /* repeated: protobuf's last-wins is the unpacker's business */
            raw = f;
            has_raw = true;
        }
    }
    if (bad || !has_raw || raw.vlen < min_bytes)
        return false;
    gir_buf_append(out, p, (size_t)(raw.start - p));
    gir_buf_append(out, raw.end, (size_t)(end - raw.end));
    char num[32];
    put_entry(out, "location", location);
    snprintf(num, sizeof num, "%llu", (unsigned long long)(raw.value - base));
    put_entry(out, "offset", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)raw.vlen);
    put_entry(out, "length", num);
    put_varint(out, 14 << 3 | 0);
    put_varint(out, 1);
    return true;
}

/* A GraphProto with its initializers stripped; false when none changed or
 * the message is malformed. */
static bool strip_graph(const uint8_t *base, const uint8_t *p, const uint8_t *end, const char *location,
                        size_t min_bytes, gir_buf *out)
{
    wire_field f;
    bool bad = false, changed = false;
    const uint8_t *copied = p; /* bytes before this were emitted */
    for (const uint8_t *q = p; next_field(&q, end, &f, &bad);) {
        if (f.number != 5 || f.type != 2)
            continue;
        gir_buf t = GIR_BUF_INIT;
        if (strip_tensor(base, f.value, f.value + f.vlen, location, min_bytes, &t)) {
            gir_buf_append(out, copied, (size_t)(f.start - copied));
            put_len_field(out, 5, t.data, t.len);
            copied = f.end;
            changed = true;
        }
        if (t.failed)
            out->failed = true;
        gir_buf_free(&t);
    }
    if (bad || !changed)
        return false;
    gir_buf_append(out, copied, (size_t)(end - copied));
    return true;
}

gir_status onnx_strip_raw_data(const uint8_t *data, size_t len, const char *location, size_t min_bytes,
                               char **out, size_t *out_len, gir_error *err)
{
    *out = NULL;
    *out_len = 0;
    wire_field f;
    bool bad = false, changed = false;
    gir_buf b = GIR_BUF_INIT;
    const uint8_t *copied = data, *end = data + len;
    for (const uint8_t *q = data; next_field(&q, end, &f, &bad);) {
        if (f.number != 7 || f.type != 2)
            continue;
        gir_buf g = GIR_BUF_INIT;
        if (strip_graph(data, f.value, f.value + f.vlen, location, min_bytes, &g)) {
            gir_buf_append(&b, copied, (size_t)(f.start - copied));
            put_len_field(&b, 7, g.data, g.len);
            copied = f.end;
            changed = true;
        }
        if (g.failed)
            b.failed = true;
        gir_buf_free(&g);
    }
    if (bad || !changed) {
        /* left for the unpacker to read (or to report) as it is */
        gir_buf_free(&b);
        return GIR_OK;
    }
    gir_buf_append(&b, copied, (size_t)(end - copied));
    if (b.failed) {
        gir_buf_free(&b);
        return gir_nomem(err);
    }
    *out_len = b.len;
    *out = gir_buf_take(&b);
    return *out ? GIR_OK : gir_nomem(err);
}
