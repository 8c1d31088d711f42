#ifndef GRAPHIR_TYPES_H
#define GRAPHIR_TYPES_H

/* Element types and shapes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Append only: values are part of the ABI. */
typedef enum gir_dtype {
    GIR_DT_UNKNOWN = 0,
    GIR_DT_F32,
    GIR_DT_F64,
    GIR_DT_F16,
    GIR_DT_BF16,
    GIR_DT_I8,
    GIR_DT_I16,
    GIR_DT_I32,
    GIR_DT_I64,
    GIR_DT_U8,
    GIR_DT_U16,
    GIR_DT_U32,
    GIR_DT_U64,
    GIR_DT_BOOL,
    GIR_DT_COUNT_
} gir_dtype;

/* "float32", "int64", "bool", ... ("unknown" for GIR_DT_UNKNOWN). */
GIR_API const char *gir_dtype_name(gir_dtype t);
/* Accepts the names above and the common aliases ("float", "int", "double",
 * "half", "uint8_t", ...); GIR_DT_UNKNOWN when none matches. */
GIR_API gir_dtype gir_dtype_from_name(const char *name);
/* Bytes per element (bool is one byte); 0 for GIR_DT_UNKNOWN. */
GIR_API size_t gir_dtype_size(gir_dtype t);
GIR_API bool gir_dtype_is_float(gir_dtype t);
GIR_API bool gir_dtype_is_int(gir_dtype t); /* signed or unsigned integer, not bool */

#define GIR_MAX_RANK 8

/* A shape: rank -1 means the rank itself is unknown; a dimension of -1 is
 * unknown (or symbolic: see gir_value_dim_name). */
typedef struct gir_shape {
    int rank;
    int64_t dims[GIR_MAX_RANK];
} gir_shape;

/* Element count; -1 when the rank or any dimension is unknown or the count
 * does not fit in int64. */
GIR_API int64_t gir_shape_numel(const gir_shape *s);
GIR_API bool gir_shape_is_known(const gir_shape *s);
GIR_API bool gir_shape_equal(const gir_shape *a, const gir_shape *b);
/* "[1,3,224,224]", "[?,10]", "?" into out (size n); returns out. */
GIR_API char *gir_shape_str(const gir_shape *s, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
