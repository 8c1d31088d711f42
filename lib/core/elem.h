/* One element of a tensor's data as a double, by element type (integers
 * exactly up to 2^53; bool as 0/1; other types 0).  Inline: kernels call
 * it per element. */
#ifndef GIR_ELEM_H
#define GIR_ELEM_H

#include <stddef.h>
#include <stdint.h>

#include "graphir/types.h"

static inline double gir_elem_as_double(const void *p, gir_dtype t, size_t i)
{
    switch (t) {
    case GIR_DT_F32: return ((const float *)p)[i];
    case GIR_DT_F64: return ((const double *)p)[i];
    case GIR_DT_I8: return ((const int8_t *)p)[i];
    case GIR_DT_I16: return ((const int16_t *)p)[i];
    case GIR_DT_I32: return ((const int32_t *)p)[i];
    case GIR_DT_I64: return (double)((const int64_t *)p)[i];
    case GIR_DT_U8: case GIR_DT_BOOL: return ((const uint8_t *)p)[i];
    case GIR_DT_U16: return ((const uint16_t *)p)[i];
    case GIR_DT_U32: return ((const uint32_t *)p)[i];
    case GIR_DT_U64: return (double)((const uint64_t *)p)[i];
    default: return 0;
    }
}

#endif
