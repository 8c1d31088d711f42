/* Element conversions kernels and writers call per element (inline). */
#ifndef GIR_ELEM_H
#define GIR_ELEM_H

#include <stddef.h>
#include <stdint.h>

#include "graphir/types.h"

#include <string.h>

/* A float32 from its bits, and its bits. */
static inline float gir_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint32_t gir_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* A double truncated toward zero to an int64 / uint64, saturating at the
 * type's range (2^63 and 2^64 are exact doubles: anything at or beyond
 * them saturates), NaN giving 0: defined for every input, infinities
 * included. */
static inline int64_t gir_f64_to_i64(double v)
{
    return v != v ? 0 : v >= 9223372036854775808.0 ? INT64_MAX : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
}
static inline uint64_t gir_f64_to_u64(double v)
{
    return v != v || v <= 0 ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
}

/* IEEE binary16 and bfloat16 to and from float32.  Half: round to nearest
 * even, overflow to infinity.  bfloat16 keeps the upper 16 bits (truncation,
 * as ONNX's Cast test data of libonnx-testdata has it).  NaN stays NaN. */
static inline float gir_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3FF) << 13);
        }
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return gir_f32_from_bits(bits);
}

static inline uint16_t gir_float_to_half(float f)
{
    uint32_t x = gir_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t exp = (x >> 23) & 0xFF, man = x & 0x7FFFFF;
    if (exp == 0xFF)
        return sign | 0x7C00 | (man ? 0x200 : 0);
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1F)
        return sign | 0x7C00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1)))
            half++;
        return sign | (uint16_t)half;
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++; /* may carry into the exponent, up to infinity: still right */
    return sign | (uint16_t)h;
}

static inline float gir_bf16_to_float(uint16_t b)
{
    return gir_f32_from_bits((uint32_t)b << 16);
}

static inline uint16_t gir_float_to_bf16(float f)
{
    uint32_t x = gir_f32_bits(f);
    if ((x & 0x7FFFFFFF) > 0x7F800000)
        return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    return (uint16_t)(x >> 16);
}

/* One element of a tensor's data as a double, by element type (integers
 * exactly up to 2^53; bool as 0/1; other types 0). */
static inline double gir_elem_as_double(const void *p, gir_dtype t, size_t i)
{
    switch (t) {
    case GIR_DT_F32: return ((const float *)p)[i];
    case GIR_DT_F64: return ((const double *)p)[i];
    case GIR_DT_I8: return ((const int8_t *)p)[i];
    case GIR_DT_I16: return ((const int16_t *)p)[i];
    case GIR_DT_I32: return ((const int32_t *)p)[i];
    case GIR_DT_I64: return (double)((const int64_t *)p)[i];
    case GIR_DT_U8: return ((const uint8_t *)p)[i];
    case GIR_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case GIR_DT_U16: return ((const uint16_t *)p)[i];
    case GIR_DT_U32: return ((const uint32_t *)p)[i];
    case GIR_DT_U64: return (double)((const uint64_t *)p)[i];
    case GIR_DT_F16: return gir_half_to_float(((const uint16_t *)p)[i]);
    case GIR_DT_BF16: return gir_bf16_to_float(((const uint16_t *)p)[i]);
    default: return 0;
    }
}

#endif
