/* LightNet's generic operators as its pre_run checks them (arguments,
 * params and their types), TensorLight dtype names, and LightNet's number
 * conversions. */
#include "lightnet.h"
#include "core/elem.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NOARGS ((const char *const[]){ NULL })
#define PARAMS(...) ((const ln_param_schema[]){ __VA_ARGS__, { NULL, 0, 0 } })
#define NOPARAMS ((const ln_param_schema[]){ { NULL, 0, 0 } })
#define NUM(n, rt) { n, LN_PT_NUMBER, LN_RT_##rt }
#define NUMS(n, rt) { n, LN_PT_NUMBERS, LN_RT_##rt }
#define STR(n) { n, LN_PT_STRING, LN_RT_OTHER }
#define BOOL(n) { n, LN_PT_BOOL, LN_RT_OTHER }

static const ln_param_schema pool_params[] = {
    NUMS("size", INT), NUMS("stride", INT), NUMS("padding", INT), STR("autopad"), { NULL, 0, 0 },
};

/* Sorted by optype (binary search). */
static const ln_op_schema schemas[] = {
    { "arange", NOARGS, ARGS("dst"),
      PARAMS(STR("dtype"), NUM("start", DOUBLE), NUM("stop", DOUBLE), NUM("step", DOUBLE)), 0,
      "a 1-D constant start, start+step, ... below stop" },
    { "avgpool2d", ARGS("src"), ARGS("dst"), pool_params, 0, "2-D average pooling, NCHW" },
    { "batchnorm", ARGS("src", "scale", "offset", "mean", "var"), ARGS("dst"), PARAMS(NUM("epsilon", FLOAT)), 0,
      "batch normalisation with running statistics" },
    { "concat", ARGS("src1", "src2"), ARGS("dst"), PARAMS(NUM("axis", INT)), 0,
      "concatenation of exactly two tensors" },
    { "conv2d", ARGS("src", "weight", "bias"), ARGS("dst"),
      PARAMS(NUM("group", INT), NUMS("size", INT), NUMS("stride", INT), NUMS("dilation", INT),
             NUMS("padding", INT), STR("autopad")),
      0, "2-D convolution, NCHW, weight OIHW, bias required" },
    { "create", NOARGS, ARGS("dst"),
      PARAMS(STR("dtype"), NUMS("dims", INT), NUMS("ran", DOUBLE), NUMS("data", DOUBLE), BOOL("from_file")), 0,
      "a tensor: inline data, uniform random fill, or weights from the .wts file" },
    { "deconv2d", ARGS("src", "weight", "bias"), ARGS("dst"),
      PARAMS(NUM("group", INT), NUMS("size", INT), NUMS("stride", INT), NUMS("output_dims", INT),
             NUMS("padding", INT), NUMS("output_padding", INT), NUMS("dilation", INT), STR("autopad")),
      0, "2-D transposed convolution, weight [I, O/group, kh, kw]" },
    { "detect_yolov3", ARGS("feature", "anchors"), ARGS("box_centers", "box_sizes", "boxes", "confs", "probs"),
      PARAMS(NUM("img_width", INT), NUM("img_height", INT)), 0, "YOLOv3 head decoding" },
    { "dot_product", ARGS("src1", "src2"), ARGS("dst"), NOPARAMS, 0, "sum of elementwise products, shape [1]" },
    { "elew", ARGS("src1", "src2"), ARGS("dst"), PARAMS(STR("elew_op")), 0,
      "elementwise binary op on equal shapes (no broadcasting)" },
    { "forward", ARGS("src"), ARGS("dst"), NOPARAMS, 0, "identity" },
    { "fprint", ARGS("src"), NOARGS, PARAMS(STR("msg"), STR("file")), 0,
      "writes msg and the tensor to a file" },
    { "gather", NOARGS, ARGS("dst"), NOPARAMS, LN_OP_VARIADIC_IN | LN_OP_ANY_PARAMS,
      "stacks src1..srcN along a new first axis" },
    { "ldmr", ARGS("src"), ARGS("dst"), NOPARAMS, 0, "DPU experiment: load into DPU memory layout" },
    { "lrelu", ARGS("src"), ARGS("dst"), PARAMS(NUM("negslope", FLOAT)), 0, "leaky ReLU" },
    { "maxpool2d", ARGS("src"), ARGS("dst"), pool_params, 0, "2-D max pooling, NCHW" },
    { "maxreduce", ARGS("src"), ARGS("dst"), PARAMS(NUM("axis", INT)), 0, "maximum along one axis, kept" },
    { "maxreduce_arg", ARGS("src"), ARGS("dst", "arg"), PARAMS(NUM("axis", INT)), 0,
      "maximum along one axis and its int32 index" },
    { "pick1d", ARGS("src", "src_index"), ARGS("dst"), PARAMS(NUM("len", INT), NUM("stride", INT)), 0,
      "copies stride-sized blocks at the given indices" },
    { "print", ARGS("src"), NOARGS, PARAMS(STR("msg")), 0, "prints msg and the tensor to stdout" },
    { "rearange", ARGS("src"), ARGS("dst"),
      PARAMS(NUM("start", DOUBLE), NUM("stop", DOUBLE), NUM("step", DOUBLE)), 0,
      "overwrites a 1-D tensor with start, start+step, ..." },
    { "relu", ARGS("src"), ARGS("dst"), NOPARAMS, 0, "ReLU" },
    { "reshape", ARGS("src"), ARGS("dst"), PARAMS(NUMS("dims", INT)), 0, "reshape to fixed dims" },
    { "resize", ARGS("src"), ARGS("dst"), PARAMS(STR("mode"), NUMS("dims", INT)), 0,
      "nearest-neighbour resize to fixed dims" },
    { "scatter", ARGS("src"), NOARGS, NOPARAMS, LN_OP_VARIADIC_OUT | LN_OP_ANY_PARAMS,
      "splits the first axis into dst1..dstN" },
    { "sigmoid", ARGS("src"), ARGS("dst"), NOPARAMS, 0, "logistic sigmoid" },
    { "slice", ARGS("src"), ARGS("dst"), PARAMS(NUM("axis", INT), NUM("start", INT), NUM("len", INT)), 0,
      "a contiguous range of one axis" },
    { "softmax", ARGS("src"), ARGS("dst"), PARAMS(NUM("axis", INT)), 0, "softmax along one axis" },
    { "sort1d", ARGS("src_key"), ARGS("dst_key"), PARAMS(STR("dir")), 0, "sorts a 1-D tensor in place" },
    { "sort1d_by_key", ARGS("src_key", "src_val"), ARGS("dst_key", "dst_val"), PARAMS(STR("dir")), 0,
      "sorts keys in place and permutes values alike" },
    { "submean", ARGS("src"), ARGS("dst"), PARAMS(NUMS("mean", DOUBLE), STR("dtype")), 0,
      "HWC image minus per-channel mean, to CHW" },
    { "svmr", ARGS("src"), ARGS("dst"), NOPARAMS, 0, "DPU experiment: save from DPU memory layout" },
    { "transform_bboxSQD", ARGS("src_delta", "src_anchor"), ARGS("dst"),
      PARAMS(NUM("width", INT), NUM("height", INT), NUM("img_width", INT), NUM("img_height", INT),
             NUM("x_shift", INT), NUM("y_shift", INT)),
      0, "SqueezeDet box decoding" },
    { "transpose", ARGS("src"), ARGS("dst"), PARAMS(NUMS("axes", INT)), 0, "axis permutation" },
    { "upsample", ARGS("src"), ARGS("dst"), PARAMS(STR("mode"), NUMS("scales", FLOAT)), 0,
      "nearest-neighbour resize by per-axis scales" },
    { "zeros", NOARGS, ARGS("dst"), PARAMS(STR("dtype"), NUMS("dims", INT)), 0, "a tensor of zeros" },
};

#define N_SCHEMAS (sizeof schemas / sizeof schemas[0])

size_t ln_schema_count(void)
{
    return N_SCHEMAS;
}

const ln_op_schema *ln_schema_at(size_t i)
{
    return i < N_SCHEMAS ? &schemas[i] : NULL;
}

static int cmp_schema(const void *key, const void *elem)
{
    return strcmp(key, ((const ln_op_schema *)elem)->optype);
}

const ln_op_schema *ln_schema_find(const char *optype)
{
    return bsearch(optype, schemas, N_SCHEMAS, sizeof schemas[0], cmp_schema);
}

static size_t count_names(const char *const *v)
{
    size_t n = 0;
    while (v[n])
        n++;
    return n;
}

size_t ln_schema_n_ins(const ln_op_schema *s) { return count_names(s->ins); }
size_t ln_schema_n_outs(const ln_op_schema *s) { return count_names(s->outs); }

size_t ln_schema_n_params(const ln_op_schema *s)
{
    size_t n = 0;
    while (s->params[n].name)
        n++;
    return n;
}

const ln_param_schema *ln_schema_param(const ln_op_schema *s, const char *name)
{
    for (const ln_param_schema *p = s->params; p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

const ln_op_schema *ln_schema_resolve(const char *optype, const char **variant)
{
    static const char *const suffixes[] = { "cpu", "cuda", "cudnn", "dpu" };
    *variant = NULL;
    const ln_op_schema *s = ln_schema_find(optype);
    if (s)
        return s;
    const char *us = strrchr(optype, '_');
    if (!us)
        return NULL;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        if (strcmp(us + 1, suffixes[i]) != 0)
            continue;
        size_t n = (size_t)(us - optype);
        char base[64];
        if (n == 0 || n >= sizeof base)
            return NULL;
        memcpy(base, optype, n);
        base[n] = '\0';
        s = ln_schema_find(base);
        if (s)
            *variant = suffixes[i];
        return s;
    }
    return NULL;
}

/* ---- dtypes ---------------------------------------------------------------- */

static const struct {
    const char *name;
    gir_dtype dt;
} dtypes[] = {
    { "TL_DOUBLE", GIR_DT_F64 }, { "TL_FLOAT", GIR_DT_F32 },  { "TL_INT64", GIR_DT_I64 },
    { "TL_INT32", GIR_DT_I32 },  { "TL_INT16", GIR_DT_I16 },  { "TL_INT8", GIR_DT_I8 },
    { "TL_UINT64", GIR_DT_U64 }, { "TL_UINT32", GIR_DT_U32 }, { "TL_UINT16", GIR_DT_U16 },
    { "TL_UINT8", GIR_DT_U8 },   { "TL_BOOL", GIR_DT_BOOL },
};

gir_dtype ln_dtype_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return dtypes[i].dt;
    return GIR_DT_UNKNOWN;
}

const char *ln_dtype_name(gir_dtype dt)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dt == dt)
            return dtypes[i].name;
    return NULL;
}

/* ---- numbers ------------------------------------------------------------- */

int32_t ln_int_slot(double v)
{
    if (isnan(v))
        return 0;
    if (v >= (double)INT32_MAX)
        return INT32_MAX;
    if (v <= (double)INT32_MIN)
        return INT32_MIN;
    return (int32_t)v;
}

float ln_float_slot(double v)
{
    /* LightNet bounds the float slot by [FLT_MIN, FLT_MAX], FLT_MIN being
     * the smallest positive normal float: zero and negatives become it. */
    if (!(v > FLT_MIN))
        return FLT_MIN;
    if (v >= FLT_MAX)
        return FLT_MAX;
    return (float)v;
}

static double clamp_trunc(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    if (v <= lo)
        return lo;
    if (v >= hi)
        return hi;
    return trunc(v);
}

void ln_convert_from_double(void *dst, gir_dtype dt, double v)
{
    unsigned char *p = dst;
    switch (dt) {
    case GIR_DT_F64: {
        uint64_t u;
        memcpy(&u, &v, 8);
        gir_put_le64(p, u);
        break;
    }
    case GIR_DT_F32: {
        gir_put_le32(p, gir_f32_bits((float)v));
        break;
    }
    case GIR_DT_I64: {
        gir_put_le64(p, (uint64_t)gir_f64_to_i64(v));
        break;
    }
    case GIR_DT_U64: {
        gir_put_le64(p, gir_f64_to_u64(v));
        break;
    }
    case GIR_DT_I32: gir_put_le32(p, (uint32_t)(int32_t)clamp_trunc(v, INT32_MIN, INT32_MAX)); break;
    case GIR_DT_U32: gir_put_le32(p, (uint32_t)clamp_trunc(v, 0, UINT32_MAX)); break;
    case GIR_DT_I16: {
        uint16_t u = (uint16_t)(int16_t)clamp_trunc(v, INT16_MIN, INT16_MAX);
        p[0] = (unsigned char)u;
        p[1] = (unsigned char)(u >> 8);
        break;
    }
    case GIR_DT_U16: {
        uint16_t u = (uint16_t)clamp_trunc(v, 0, UINT16_MAX);
        p[0] = (unsigned char)u;
        p[1] = (unsigned char)(u >> 8);
        break;
    }
    case GIR_DT_I8: p[0] = (unsigned char)(int8_t)clamp_trunc(v, INT8_MIN, INT8_MAX); break;
    case GIR_DT_U8: p[0] = (unsigned char)clamp_trunc(v, 0, UINT8_MAX); break;
    case GIR_DT_BOOL: p[0] = v != 0; break;
    default: break;
    }
}

void ln_autopad_conv(const char *mode, int64_t in, int64_t k, int64_t s, int64_t d, int64_t *begin, int64_t *end)
{
    if (strcmp(mode, "VALID") == 0) {
        *begin = *end = 0;
        return;
    }
    int64_t out = (in + s - 1) / s;
    int64_t total = (out - 1) * s + (k - 1) * d + 1 - in;
    if (total < 0)
        total = 0;
    if (strcmp(mode, "SAME_UPPER") == 0) {
        *begin = total / 2;
        *end = total - *begin;
    } else {
        *end = total / 2;
        *begin = total - *end;
    }
}

