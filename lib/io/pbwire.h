/* Protobuf wire format, for the codecs that write or scan protobuf bytes
 * themselves (ONNX's streaming writer and its scanners, nnabla's
 * parameter.protobuf): base-128 varints. */
#ifndef GIR_IO_PBWIRE_H
#define GIR_IO_PBWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of the longest varint (a 64-bit value). */
#define GIR_PB_VARINT_MAX 10

/* Decodes the varint at *p (ending before end) into *v and moves *p past it;
 * false when it is truncated or does not fit 64 bits (*p then undefined). */
static inline bool gir_pb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift == 63 && b > 1)
            return false;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* Encodes v at o (room for GIR_PB_VARINT_MAX bytes); returns its length. */
static inline size_t gir_pb_put_varint(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        o[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o[n++] = (uint8_t)v;
    return n;
}

/* The length gir_pb_put_varint gives v. */
static inline size_t gir_pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

#endif
