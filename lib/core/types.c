/* Element types and shapes. */
#include "internal.h"
#include "graphir/graphir.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    size_t size;
} dtypes[GIR_DT_COUNT_] = {
    [GIR_DT_UNKNOWN] = { "unknown", 0 }, [GIR_DT_F32] = { "float32", 4 }, [GIR_DT_F64] = { "float64", 8 },
    [GIR_DT_F16] = { "float16", 2 },     [GIR_DT_BF16] = { "bfloat16", 2 }, [GIR_DT_I8] = { "int8", 1 },
    [GIR_DT_I16] = { "int16", 2 },       [GIR_DT_I32] = { "int32", 4 },   [GIR_DT_I64] = { "int64", 8 },
    [GIR_DT_U8] = { "uint8", 1 },        [GIR_DT_U16] = { "uint16", 2 },  [GIR_DT_U32] = { "uint32", 4 },
    [GIR_DT_U64] = { "uint64", 8 },      [GIR_DT_BOOL] = { "bool", 1 },
};

GIR_API const char *gir_dtype_name(gir_dtype t)
{
    return (unsigned)t < GIR_DT_COUNT_ ? dtypes[t].name : "unknown";
}

GIR_API size_t gir_dtype_size(gir_dtype t)
{
    return (unsigned)t < GIR_DT_COUNT_ ? dtypes[t].size : 0;
}

GIR_API gir_dtype gir_dtype_from_name(const char *name)
{
    static const struct {
        const char *alias;
        gir_dtype t;
    } aliases[] = {
        { "float", GIR_DT_F32 },   { "double", GIR_DT_F64 },  { "half", GIR_DT_F16 },
        { "int", GIR_DT_I32 },     { "long", GIR_DT_I64 },    { "float32_t", GIR_DT_F32 },
        { "int8_t", GIR_DT_I8 },   { "int16_t", GIR_DT_I16 }, { "int32_t", GIR_DT_I32 },
        { "int64_t", GIR_DT_I64 }, { "uint8_t", GIR_DT_U8 },  { "uint16_t", GIR_DT_U16 },
        { "uint32_t", GIR_DT_U32 }, { "uint64_t", GIR_DT_U64 }, { "boolean", GIR_DT_BOOL },
    };
    if (!name)
        return GIR_DT_UNKNOWN;
    for (int t = 1; t < GIR_DT_COUNT_; t++)
        if (strcasecmp(name, dtypes[t].name) == 0)
            return (gir_dtype)t;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(name, aliases[i].alias) == 0)
            return aliases[i].t;
    return GIR_DT_UNKNOWN;
}

GIR_API bool gir_dtype_is_float(gir_dtype t)
{
    return t == GIR_DT_F32 || t == GIR_DT_F64 || t == GIR_DT_F16 || t == GIR_DT_BF16;
}

GIR_API bool gir_dtype_is_int(gir_dtype t)
{
    return t >= GIR_DT_I8 && t <= GIR_DT_U64;
}

GIR_API int64_t gir_shape_numel(const gir_shape *s)
{
    if (s->rank < 0 || s->rank > GIR_MAX_RANK)
        return -1;
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0 || __builtin_mul_overflow(n, s->dims[i], &n))
            return -1;
    }
    return n;
}

GIR_API bool gir_shape_is_known(const gir_shape *s)
{
    if (s->rank < 0)
        return false;
    for (int i = 0; i < s->rank; i++)
        if (s->dims[i] < 0)
            return false;
    return true;
}

GIR_API bool gir_shape_equal(const gir_shape *a, const gir_shape *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank && i < GIR_MAX_RANK; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

GIR_API char *gir_shape_str(const gir_shape *s, char *out, size_t n)
{
    if (!n)
        return out;
    if (s->rank < 0) {
        snprintf(out, n, "?");
        return out;
    }
    size_t used = 0;
    used += (size_t)snprintf(out, n, "[");
    for (int i = 0; i < s->rank && used < n; i++) {
        if (s->dims[i] < 0)
            used += (size_t)snprintf(out + used, n - used, "%s?", i ? "," : "");
        else
            used += (size_t)snprintf(out + used, n - used, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    }
    if (used < n)
        snprintf(out + used, n - used, "]");
    return out;
}

#include "gir_config.h"

GIR_API const char *gir_version(void)
{
    return GIR_VERSION;
}
