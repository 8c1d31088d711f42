/* The canonical operator table: for every row of ops.def its attribute
 * schema, operand names, one-line documentation and shape/dtype inference.
 *
 * Each op ID has a SPEC_ID macro below (schema, doc, infer, inputs,
 * outputs); the table is generated from ops.def, so a row added there
 * without its SPEC does not compile, and a SPEC without a doc line trips a
 * _Static_assert.  tests/test_ops.c walks the whole table as well.
 *
 * Semantics are ONNX opset 13 with our rule that constant operands are
 * attributes (see ops.def). */
#include "opinfer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== attribute schema rows ============================================== */

#define A_END { .name = NULL }
/* A schema: its rows, then the end row. */
#define ATTRS(name, ...) static const gir_attr_schema name[] = { __VA_ARGS__, A_END }
#define INT_D(nm, d, rng, dc) \
    { .name = nm, .type = GIR_ATTR_INT, .presence = GIR_ATTR_DEFAULTED, .i = d, .range = rng, .doc = dc }
#define INT_R(nm, rng, dc) { .name = nm, .type = GIR_ATTR_INT, .presence = GIR_ATTR_REQUIRED, .range = rng, .doc = dc }
#define INT_O(nm, rng, dc) { .name = nm, .type = GIR_ATTR_INT, .presence = GIR_ATTR_OPTIONAL, .range = rng, .doc = dc }
#define FLT_D(nm, d, dc) { .name = nm, .type = GIR_ATTR_FLOAT, .presence = GIR_ATTR_DEFAULTED, .f = d, .doc = dc }
#define FLT_O(nm, dc) { .name = nm, .type = GIR_ATTR_FLOAT, .presence = GIR_ATTR_OPTIONAL, .doc = dc }
#define STR_D(nm, d, ch, dc) \
    { .name = nm, .type = GIR_ATTR_STRING, .presence = GIR_ATTR_DEFAULTED, .s = d, .choices = ch, .doc = dc }
#define STR_R(nm, ch, dc) \
    { .name = nm, .type = GIR_ATTR_STRING, .presence = GIR_ATTR_REQUIRED, .choices = ch, .doc = dc }
#define INTS_R(nm, rng, dc) \
    { .name = nm, .type = GIR_ATTR_INTS, .presence = GIR_ATTR_REQUIRED, .range = rng, .doc = dc }
#define INTS_O(nm, rng, dc) \
    { .name = nm, .type = GIR_ATTR_INTS, .presence = GIR_ATTR_OPTIONAL, .range = rng, .doc = dc }
#define INTS_F(nm, fl, v, rng, dc)                                                                            \
    {                                                                                                          \
        .name = nm, .type = GIR_ATTR_INTS, .presence = GIR_ATTR_DEFAULTED, .fill = fl, .i = v, .range = rng, \
        .doc = dc                                                                                              \
    }
#define FLTS_O(nm, dc) { .name = nm, .type = GIR_ATTR_FLOATS, .presence = GIR_ATTR_OPTIONAL, .doc = dc }

const char *const oi_ch_auto_pad[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", NULL };
static const char *const ch_pad_mode[] = { "constant", "reflect", "edge", NULL };
static const char *const ch_resize_mode[] = { "nearest", "linear", "cubic", NULL };
static const char *const ch_coord_mode[] = { "half_pixel",    "pytorch_half_pixel",   "align_corners",
                                             "asymmetric",    "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                             NULL };
static const char *const ch_nearest_mode[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL };
static const char *const ch_d2s_mode[] = { "DCR", "CRD", NULL };
static const char *const ch_dtype[] = { "float32", "float64", "float16", "bfloat16", "int8",   "int16", "int32",
                                        "int64",   "uint8",   "uint16",  "uint32",   "uint64", "bool",  NULL };

#define AUTO_PAD                                                                                \
    STR_D("auto_pad", "NOTSET", oi_ch_auto_pad,                                                    \
          "NOTSET uses pads; SAME_UPPER/SAME_LOWER pad to output = ceil(input / stride), the odd " \
          "cell at the end/start; VALID pads nothing")
#define DILATIONS \
    INTS_F("dilations", GIR_FILL_SPATIAL, 1, GIR_RANGE_POSITIVE, "kernel dilation per spatial axis (default 1 each)")
#define STRIDES \
    INTS_F("strides", GIR_FILL_SPATIAL, 1, GIR_RANGE_POSITIVE, "stride per spatial axis (default 1 each)")
#define PADS                                                                                   \
    INTS_F("pads", GIR_FILL_PADS, 0, GIR_RANGE_NONNEG,                                         \
           "padding, all begins then all ends, e.g. [top, left, bottom, right] (default 0 each; " \
           "only with auto_pad NOTSET)")
#define CEIL_MODE \
    INT_D("ceil_mode", 0, GIR_RANGE_BOOL, "1 rounds the output size up, 0 down")

static const gir_attr_schema no_attrs[] = { A_END };

ATTRS(attrs_LeakyRelu, FLT_D("alpha", 0.01, "slope for x < 0"));
ATTRS(attrs_Elu, FLT_D("alpha", 1.0, "scale of exp(x) - 1 for x < 0"));
ATTRS(attrs_Selu,
      FLT_D("alpha", 1.67326319217681884765625, "scale of exp(x) - 1 for x <= 0"),
      FLT_D("gamma", 1.05070102214813232421875, "overall scale"));
ATTRS(attrs_HardSigmoid,
      FLT_D("alpha", 0.2, "slope of the linear part"),
      FLT_D("beta", 0.5, "offset of the linear part"));
ATTRS(attrs_Clip,
      FLT_O("min", "lower bound; absent means unbounded below"),
      FLT_O("max", "upper bound; absent means unbounded above"));
ATTRS(attrs_Cast, STR_R("to", ch_dtype, "element type of the output, by name (float32, int64, bool, ...)"));
ATTRS(attrs_Mod, INT_D("fmod", 0, GIR_RANGE_BOOL, "1: C fmod, result has the sign of the dividend; 0: result has the sign of the divisor"));
ATTRS(attrs_Conv,
      AUTO_PAD,
      DILATIONS,
      INT_D("group", 1, GIR_RANGE_POSITIVE, "number of channel groups; divides input and output channels"),
      INTS_F("kernel_shape", GIR_FILL_KERNEL, 0, GIR_RANGE_POSITIVE, "kernel size per spatial axis (default: the spatial dimensions of W)"),
      PADS,
      STRIDES);
ATTRS(attrs_ConvTranspose,
      AUTO_PAD,
      DILATIONS,
      INT_D("group", 1, GIR_RANGE_POSITIVE, "number of channel groups; divides input channels"),
      INTS_F("kernel_shape", GIR_FILL_KERNEL, 0, GIR_RANGE_POSITIVE, "kernel size per spatial axis (default: the spatial dimensions of W)"),
      INTS_F("output_padding", GIR_FILL_SPATIAL, 0, GIR_RANGE_NONNEG, "extra cells added at the end of each spatial axis, less than the stride (default 0 each)"),
      INTS_O("output_shape", GIR_RANGE_NONNEG, "spatial output size; when present the padding is derived from it (absent: computed from pads)"),
      PADS,
      STRIDES);
ATTRS(attrs_Gemm,
      FLT_D("alpha", 1.0, "scale of A * B"),
      FLT_D("beta", 1.0, "scale of C"),
      INT_D("transA", 0, GIR_RANGE_BOOL, "1 transposes A before the product"),
      INT_D("transB", 0, GIR_RANGE_BOOL, "1 transposes B before the product"));
ATTRS(attrs_BatchNormalization,
      FLT_D("epsilon", 1e-5, "added to the variance before the square root"),
      FLT_D("momentum", 0.9, "running-average factor, used only in training"));
ATTRS(attrs_InstanceNormalization, FLT_D("epsilon", 1e-5, "added to the variance before the square root"));
ATTRS(attrs_LRN,
      FLT_D("alpha", 0.0001, "scale of the sum of squares"),
      FLT_D("beta", 0.75, "exponent of the normaliser"),
      FLT_D("bias", 1.0, "added to the scaled sum before the exponent"),
      INT_R("size", GIR_RANGE_POSITIVE, "number of channels summed over"));
ATTRS(attrs_MaxPool,
      AUTO_PAD,
      CEIL_MODE,
      DILATIONS,
      INTS_R("kernel_shape", GIR_RANGE_POSITIVE, "window size per spatial axis"),
      PADS,
      INT_D("storage_order", 0, GIR_RANGE_BOOL, "layout of the Indices output: 0 row major, 1 column major"),
      STRIDES);
ATTRS(attrs_AveragePool,
      AUTO_PAD,
      CEIL_MODE,
      INT_D("count_include_pad", 0, GIR_RANGE_BOOL, "1 counts padding cells in the divisor, 0 divides by the valid cells only"),
      INTS_R("kernel_shape", GIR_RANGE_POSITIVE, "window size per spatial axis"),
      PADS,
      STRIDES);
ATTRS(attrs_Softmax, INT_D("axis", -1, GIR_RANGE_ANY, "axis the normalisation runs along; negative counts from the end"));
ATTRS(attrs_Dropout,
      FLT_D("ratio", 0.5, "probability of dropping an element, in [0, 1)"),
      INT_O("seed", GIR_RANGE_ANY, "random seed; absent means an arbitrary seed"),
      INT_D("training_mode", 0, GIR_RANGE_BOOL, "1 drops and rescales; 0 (inference) is the identity"));
ATTRS(attrs_Reduce,
      INTS_O("axes", GIR_RANGE_ANY, "axes to reduce, negative counts from the end; absent means all axes"),
      INT_D("keepdims", 1, GIR_RANGE_BOOL, "1 keeps reduced axes with size 1, 0 removes them"));
ATTRS(attrs_ReduceSum,
      INTS_O("axes", GIR_RANGE_ANY, "axes to reduce, negative counts from the end; absent means all axes"),
      INT_D("keepdims", 1, GIR_RANGE_BOOL, "1 keeps reduced axes with size 1, 0 removes them"),
      INT_D("noop_with_empty_axes", 0, GIR_RANGE_BOOL, "1 makes absent or empty axes the identity instead of a full reduction"));
ATTRS(attrs_Arg,
      INT_D("axis", 0, GIR_RANGE_ANY, "axis to search along; negative counts from the end"),
      INT_D("keepdims", 1, GIR_RANGE_BOOL, "1 keeps the axis with size 1, 0 removes it"),
      INT_D("select_last_index", 0, GIR_RANGE_BOOL, "1 returns the last index of ties, 0 the first"));
ATTRS(attrs_Reshape,
      INTS_R("shape", GIR_RANGE_ANY, "target shape; 0 copies the input dimension (unless allowzero), one -1 takes the remaining size"),
      INT_D("allowzero", 0, GIR_RANGE_BOOL, "1 makes a 0 in shape a literal zero-size dimension"));
ATTRS(attrs_Flatten, INT_D("axis", 1, GIR_RANGE_ANY, "axes before it form the first output dimension, the rest the second; negative counts from the end"));
ATTRS(attrs_Transpose, INTS_O("perm", GIR_RANGE_NONNEG, "output axis i is input axis perm[i]; absent means the reversed axes"));
ATTRS(attrs_Squeeze, INTS_O("axes", GIR_RANGE_ANY, "size-1 axes to remove, negative counts from the end; absent means every size-1 axis"));
ATTRS(attrs_Unsqueeze, INTS_R("axes", GIR_RANGE_ANY, "positions of the inserted size-1 axes in the output; negative counts from the end"));
ATTRS(attrs_Concat, INT_R("axis", GIR_RANGE_ANY, "axis to join along; negative counts from the end"));
ATTRS(attrs_Split,
      INT_D("axis", 0, GIR_RANGE_ANY, "axis to split; negative counts from the end"),
      INTS_O("split", GIR_RANGE_NONNEG, "size of each output along axis; absent means equal parts, one per output"));
ATTRS(attrs_Slice,
      INTS_R("starts", GIR_RANGE_ANY, "first index per sliced axis; negative counts from the end, clamped"),
      INTS_R("ends", GIR_RANGE_ANY, "end index (exclusive) per sliced axis; negative counts from the end, clamped"),
      INTS_O("axes", GIR_RANGE_ANY, "axes that starts and ends refer to; absent means the first axes in order"),
      INTS_O("steps", GIR_RANGE_ANY, "step per sliced axis, non-zero, negative walks backwards; absent means 1 each"));
ATTRS(attrs_Pad,
      INTS_R("pads", GIR_RANGE_ANY, "cells added (negative: removed), all begins then all ends, two per axis"),
      STR_D("mode", "constant", ch_pad_mode, "constant fills with constant_value, reflect mirrors without the edge, edge repeats the edge"),
      FLT_D("constant_value", 0.0, "fill value of constant mode"));
ATTRS(attrs_Tile, INTS_R("repeats", GIR_RANGE_NONNEG, "number of copies per axis"));
ATTRS(attrs_Expand, INTS_R("shape", GIR_RANGE_NONNEG, "shape the input is broadcast with (numpy rules)"));
ATTRS(attrs_Gather, INT_D("axis", 0, GIR_RANGE_ANY, "axis of data that indices select along; negative counts from the end"));
ATTRS(attrs_Resize,
      FLTS_O("roi", "region of interest, starts then ends per axis, for tf_crop_and_resize; absent means the whole input"),
      FLTS_O("scales", "scale factor per axis, output = floor(input * scale); give scales or sizes"),
      INTS_O("sizes", GIR_RANGE_NONNEG, "output size per axis; give scales or sizes"),
      STR_D("mode", "nearest", ch_resize_mode, "interpolation: nearest, linear or cubic"),
      STR_D("coordinate_transformation_mode", "half_pixel", ch_coord_mode, "how output coordinates map to input coordinates"),
      STR_D("nearest_mode", "round_prefer_floor", ch_nearest_mode, "rounding of nearest mode"),
      FLT_D("cubic_coeff_a", -0.75, "the a of cubic interpolation"),
      INT_D("exclude_outside", 0, GIR_RANGE_BOOL, "1 gives weights of samples outside the input zero and renormalises"),
      FLT_D("extrapolation_value", 0.0, "value outside the input for tf_crop_and_resize"));
ATTRS(attrs_DepthToSpace,
      INT_R("blocksize", GIR_RANGE_POSITIVE, "side of the square block moved from channels to space"),
      STR_D("mode", "DCR", ch_d2s_mode, "channel order: DCR depth-column-row, CRD column-row-depth"));
ATTRS(attrs_SpaceToDepth, INT_R("blocksize", GIR_RANGE_POSITIVE, "side of the square block moved from space to channels"));

/* ---- operators from LightNet (semantics: infer_lightnet.c) ---- */

#define FLT_R(nm, dc) { .name = nm, .type = GIR_ATTR_FLOAT, .presence = GIR_ATTR_REQUIRED, .doc = dc }
#define STR_O(nm, dc) { .name = nm, .type = GIR_ATTR_STRING, .presence = GIR_ATTR_OPTIONAL, .doc = dc }
#define FLTS_R(nm, dc) { .name = nm, .type = GIR_ATTR_FLOATS, .presence = GIR_ATTR_REQUIRED, .doc = dc }

ATTRS(attrs_Print,
      STR_R("message", NULL, "written on its own line before the tensor"),
      STR_O("file", "write to this file (truncated) instead of standard output"));
ATTRS(attrs_Sort, INT_D("descending", 0, GIR_RANGE_BOOL, "1 sorts from largest to smallest, 0 from smallest"));
ATTRS(attrs_GatherBlocks,
      INT_R("count", GIR_RANGE_POSITIVE, "number of indices used, at most the length of indices"),
      INT_D("block_size", 1, GIR_RANGE_POSITIVE, "elements copied per index"));
ATTRS(attrs_RangeFill,
      FLT_R("start", "first value"),
      FLT_R("limit", "exclusive end: the input has ceil((limit - start) / delta) elements"),
      FLT_R("delta", "step between values, not 0"));
ATTRS(attrs_SqueezeDetBoxDecode,
      INT_R("width", GIR_RANGE_POSITIVE, "network input width"),
      INT_R("height", GIR_RANGE_POSITIVE, "network input height"),
      INT_R("img_width", GIR_RANGE_POSITIVE, "image width the boxes are scaled and clipped to"),
      INT_R("img_height", GIR_RANGE_POSITIVE, "image height the boxes are scaled and clipped to"),
      INT_D("x_shift", 0, GIR_RANGE_ANY, "added to every box centre x"),
      INT_D("y_shift", 0, GIR_RANGE_ANY, "added to every box centre y"));
ATTRS(attrs_YoloV3Decode,
      INT_R("img_width", GIR_RANGE_POSITIVE, "image width the centres are scaled to"),
      INT_R("img_height", GIR_RANGE_POSITIVE, "image height the centres are scaled to"));
ATTRS(attrs_SubMean,
      FLTS_R("mean", "the mean of each of the 3 channels"),
      STR_R("to", ch_dtype, "element type of the output, by name"));
ATTRS(attrs_Stack, INT_D("axis", 0, GIR_RANGE_ANY, "position of the new axis; negative counts from the end of the output"));
ATTRS(attrs_Unstack, INT_D("axis", 0, GIR_RANGE_ANY, "axis split into the outputs; negative counts from the end"));

static const char *const ch_rnn_direction[] = { "forward", "reverse", "bidirectional", NULL };

#define STRS_O(nm, dc) { .name = nm, .type = GIR_ATTR_STRINGS, .presence = GIR_ATTR_OPTIONAL, .doc = dc }
#define RNN_COMMON                                                                                              \
    FLTS_O("activation_alpha", "alpha of the activations that take one, in order (default: each one's own)"),  \
    FLTS_O("activation_beta", "beta of the activations that take one, in order (default: each one's own)"),    \
    STRS_O("activations", "ONNX activation names, per direction (default Sigmoid, Tanh, Tanh; RNN Tanh)"),      \
    FLT_O("clip", "gate inputs are clipped to [-clip, clip]; absent: no clipping"),                             \
    STR_D("direction", "forward", ch_rnn_direction, "forward, reverse, or bidirectional (two directions)"),   \
    INT_R("hidden_size", GIR_RANGE_POSITIVE, "number of hidden units")

ATTRS(attrs_LSTM,
      RNN_COMMON,
      INT_D("input_forget", 0, GIR_RANGE_BOOL, "1 couples the forget gate to the input gate: f = 1 - i (as ONNX Runtime)"),
      INT_D("layout", 0, GIR_RANGE_BOOL, "0: X [seq, batch, input]; 1: X [batch, seq, input] (batch first)"));
ATTRS(attrs_GRU,
      RNN_COMMON,
      INT_D("layout", 0, GIR_RANGE_BOOL, "0: X [seq, batch, input]; 1: X [batch, seq, input] (batch first)"),
      INT_D("linear_before_reset", 0, GIR_RANGE_BOOL, "1 applies the reset gate after the recurrent product of the hidden gate (cuDNN's form)"));
ATTRS(attrs_RNN,
      RNN_COMMON,
      INT_D("layout", 0, GIR_RANGE_BOOL, "0: X [seq, batch, input]; 1: X [batch, seq, input] (batch first)"));

/* ==== the table ============================================================= */

/* SPEC(attribute schema, inference, inputs, outputs, one-line doc) */
#define SPEC(attrs, infer, in, out, doc) attrs, sizeof attrs / sizeof attrs[0] - 1, doc, infer, in, out

#define UNARY(infer, in, out, doc) SPEC(no_attrs, infer, in, out, doc)
#define SPEC_Identity UNARY(infer_same, "input", "output", "copies the input unchanged")
#define SPEC_Relu UNARY(infer_same, "X", "Y", "rectified linear unit: max(x, 0)")
#define SPEC_Sigmoid UNARY(infer_same, "X", "Y", "logistic function 1 / (1 + exp(-x))")
#define SPEC_Tanh UNARY(infer_same, "input", "output", "hyperbolic tangent")
#define SPEC_LeakyRelu SPEC(attrs_LeakyRelu, infer_same, "X", "Y", "x for x >= 0, alpha * x below")
#define SPEC_Elu SPEC(attrs_Elu, infer_same, "X", "Y", "exponential linear unit: x for x >= 0, alpha * (exp(x) - 1) below")
#define SPEC_Selu SPEC(attrs_Selu, infer_same, "X", "Y", "scaled exponential linear unit: gamma * (x > 0 ? x : alpha * (exp(x) - 1))")
#define SPEC_HardSigmoid SPEC(attrs_HardSigmoid, infer_same, "X", "Y", "max(0, min(1, alpha * x + beta))")
#define SPEC_Softplus UNARY(infer_same, "X", "Y", "log(1 + exp(x))")
#define SPEC_Softsign UNARY(infer_same, "input", "output", "x / (1 + |x|)")
#define SPEC_PRelu SPEC(no_attrs, infer_PRelu, "X, slope", "Y", "x for x >= 0, slope * x below; slope broadcasts to the shape of x")
#define SPEC_Clip SPEC(attrs_Clip, infer_same, "input", "output", "limits every element to [min, max]")
#define SPEC_Exp UNARY(infer_same, "input", "output", "e raised to each element")
#define SPEC_Log UNARY(infer_same, "input", "output", "natural logarithm of each element")
#define SPEC_Sqrt UNARY(infer_same, "X", "Y", "square root of each element")
#define SPEC_Abs UNARY(infer_same, "X", "Y", "absolute value of each element")
#define SPEC_Neg UNARY(infer_same, "X", "Y", "negation of each element")
#define SPEC_Floor UNARY(infer_same, "X", "Y", "rounds each element down to an integer")
#define SPEC_Ceil UNARY(infer_same, "X", "Y", "rounds each element up to an integer")
#define SPEC_Round UNARY(infer_same, "X", "Y", "rounds each element to the nearest integer, halves to even")
#define SPEC_Reciprocal UNARY(infer_same, "X", "Y", "1 / x for each element")
#define SPEC_Sign UNARY(infer_same, "input", "output", "-1, 0 or 1 by the sign of each element")
#define SPEC_Erf UNARY(infer_same, "input", "output", "Gauss error function of each element")
#define SPEC_Sin UNARY(infer_same, "input", "output", "sine of each element")
#define SPEC_Cos UNARY(infer_same, "input", "output", "cosine of each element")
#define SPEC_Not UNARY(infer_Not, "X", "Y", "logical negation of a bool tensor")
#define SPEC_Cast SPEC(attrs_Cast, infer_Cast, "input", "output", "converts each element to the type named by 'to'")

#define BINARY(infer, doc) SPEC(no_attrs, infer, "A, B", "C", doc)
#define SPEC_Add BINARY(infer_broadcast, "elementwise sum a + b (numpy broadcasting)")
#define SPEC_Sub BINARY(infer_broadcast, "elementwise difference a - b (numpy broadcasting)")
#define SPEC_Mul BINARY(infer_broadcast, "elementwise product a * b (numpy broadcasting)")
#define SPEC_Div BINARY(infer_broadcast, "elementwise quotient a / b, truncated for integers (numpy broadcasting)")
#define SPEC_Pow SPEC(no_attrs, infer_Pow, "X, Y", "Z", "x raised to the power y, elementwise; the result has the type of x (broadcasting)")
#define SPEC_Mod SPEC(attrs_Mod, infer_broadcast, "A, B", "C", "remainder of a / b, elementwise (numpy broadcasting)")
#define SPEC_Max SPEC(no_attrs, infer_broadcast, "data_0...", "max", "elementwise maximum of one or more tensors (broadcasting)")
#define SPEC_Min SPEC(no_attrs, infer_broadcast, "data_0...", "min", "elementwise minimum of one or more tensors (broadcasting)")
#define SPEC_Sum SPEC(no_attrs, infer_broadcast, "data_0...", "sum", "elementwise sum of one or more tensors (broadcasting)")
#define SPEC_Mean SPEC(no_attrs, infer_broadcast, "data_0...", "mean", "elementwise mean of one or more tensors (broadcasting)")
#define SPEC_Equal BINARY(infer_compare, "a == b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_Greater BINARY(infer_compare, "a > b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_Less BINARY(infer_compare, "a < b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_GreaterOrEqual BINARY(infer_compare, "a >= b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_LessOrEqual BINARY(infer_compare, "a <= b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_And BINARY(infer_logic, "logical and of two bool tensors (numpy broadcasting)")
#define SPEC_Or BINARY(infer_logic, "logical or of two bool tensors (numpy broadcasting)")
#define SPEC_Xor BINARY(infer_logic, "logical exclusive or of two bool tensors (numpy broadcasting)")
#define SPEC_Where SPEC(no_attrs, infer_Where, "condition, X, Y", "output", "x where condition is true, y elsewhere (numpy broadcasting)")

#define SPEC_Conv SPEC(attrs_Conv, infer_Conv, "X, W, B?", "Y", "convolution of X [N, C, spatial...] with W [M, C / group, kernel...], plus bias B [M]")
#define SPEC_ConvTranspose SPEC(attrs_ConvTranspose, infer_ConvTranspose, "X, W, B?", "Y", "transposed convolution (the gradient of Conv) of X with W [C, M / group, kernel...], plus bias B [M]")
#define SPEC_Gemm SPEC(attrs_Gemm, infer_Gemm, "A, B, C?", "Y", "alpha * A' B' + beta * C for matrices, A' and B' optionally transposed")
#define SPEC_MatMul SPEC(no_attrs, infer_MatMul, "A, B", "Y", "matrix product, numpy semantics: batch axes broadcast, vectors promoted")
#define SPEC_BatchNormalization SPEC(attrs_BatchNormalization, infer_norm, "X, scale, B, mean, var", "Y", "per-channel (x - mean) / sqrt(var + epsilon) * scale + B with stored statistics")
#define SPEC_InstanceNormalization SPEC(attrs_InstanceNormalization, infer_norm, "input, scale, B", "output", "normalises each channel of each sample over its spatial axes, then scales and shifts")
#define SPEC_LRN SPEC(attrs_LRN, infer_same, "X", "Y", "local response normalisation across neighbouring channels")
#define SPEC_MaxPool SPEC(attrs_MaxPool, infer_pool, "X", "Y, Indices?", "maximum over sliding windows of the spatial axes, with optional int64 indices of the maxima")
#define SPEC_AveragePool SPEC(attrs_AveragePool, infer_pool, "X", "Y", "mean over sliding windows of the spatial axes")
#define SPEC_GlobalMaxPool SPEC(no_attrs, infer_global_pool, "X", "Y", "maximum over all spatial axes, which stay with size 1")
#define SPEC_GlobalAveragePool SPEC(no_attrs, infer_global_pool, "X", "Y", "mean over all spatial axes, which stay with size 1")
#define SPEC_Softmax SPEC(attrs_Softmax, infer_softmax, "input", "output", "exp(x) / sum(exp(x)) along axis")
#define SPEC_LogSoftmax SPEC(attrs_Softmax, infer_softmax, "input", "output", "log of Softmax along axis")
#define SPEC_Dropout SPEC(attrs_Dropout, infer_Dropout, "data", "output, mask?", "identity in inference; in training zeroes elements with probability ratio (optional bool mask)")

#define REDUCE(doc) SPEC(attrs_Reduce, infer_reduce, "data", "reduced", doc)
#define SPEC_ReduceSum SPEC(attrs_ReduceSum, infer_reduce, "data", "reduced", "sum over the given axes")
#define SPEC_ReduceMean REDUCE("mean over the given axes")
#define SPEC_ReduceMax REDUCE("maximum over the given axes")
#define SPEC_ReduceMin REDUCE("minimum over the given axes")
#define SPEC_ReduceProd REDUCE("product over the given axes")
#define SPEC_ArgMax SPEC(attrs_Arg, infer_arg, "data", "reduced", "int64 index of the maximum along axis")
#define SPEC_ArgMin SPEC(attrs_Arg, infer_arg, "data", "reduced", "int64 index of the minimum along axis")

#define SPEC_Reshape SPEC(attrs_Reshape, infer_Reshape, "data", "reshaped", "the same elements in a new shape (0 copies a dimension, -1 infers one)")
#define SPEC_Flatten SPEC(attrs_Flatten, infer_Flatten, "input", "output", "reshapes to a matrix: the axes before axis, then the rest")
#define SPEC_Transpose SPEC(attrs_Transpose, infer_Transpose, "data", "transposed", "permutes the axes")
#define SPEC_Squeeze SPEC(attrs_Squeeze, infer_Squeeze, "data", "squeezed", "removes axes of size 1")
#define SPEC_Unsqueeze SPEC(attrs_Unsqueeze, infer_Unsqueeze, "data", "expanded", "inserts axes of size 1")
#define SPEC_Concat SPEC(attrs_Concat, infer_Concat, "inputs...", "concat_result", "joins tensors along axis")
#define SPEC_Split SPEC(attrs_Split, infer_Split, "input", "outputs...", "cuts a tensor along axis into several outputs")
#define SPEC_Slice SPEC(attrs_Slice, infer_Slice, "data", "output", "takes starts:ends:steps along the chosen axes")
#define SPEC_Pad SPEC(attrs_Pad, infer_Pad, "data", "output", "pads each axis (or crops it, with negative pads)")
#define SPEC_Tile SPEC(attrs_Tile, infer_Tile, "input", "output", "repeats the tensor along each axis")
#define SPEC_Expand SPEC(attrs_Expand, infer_Expand, "input", "output", "broadcasts the input with shape (numpy rules)")
#define SPEC_Gather SPEC(attrs_Gather, infer_Gather, "data, indices", "output", "entries of data along axis picked by integer indices")
#define SPEC_Resize SPEC(attrs_Resize, infer_Resize, "X", "Y", "resizes axes by scales or to sizes with nearest, linear or cubic interpolation")
#define SPEC_DepthToSpace SPEC(attrs_DepthToSpace, infer_space_depth, "input", "output", "moves channel blocks into space: [N, C, H, W] to [N, C / b^2, H * b, W * b]")
#define SPEC_SpaceToDepth SPEC(attrs_SpaceToDepth, infer_space_depth, "input", "output", "moves spatial blocks into channels: [N, C, H, W] to [N, C * b^2, H / b, W / b]")
#define SPEC_Shape SPEC(no_attrs, infer_Shape, "data", "shape", "the input's dimensions as an int64 vector")

#define SPEC_Print SPEC(attrs_Print, infer_Print, "input", "", "writes message, then the tensor in nested brackets (%.3f floats, %d/%u integers) to stdout or to file")
#define SPEC_Sort SPEC(attrs_Sort, infer_Sort, "keys, values?", "sorted_keys, sorted_values?", "stable sort of a 1-D tensor; values follow their keys")
#define SPEC_GatherBlocks SPEC(attrs_GatherBlocks, infer_GatherBlocks, "data, indices", "output", "copies block_size-element blocks of 1-D data at the first count indices")
#define SPEC_RangeFill SPEC(attrs_RangeFill, infer_RangeFill, "input", "output", "start, start + delta, ... in the input's type and length (its values are not read)")
#define SPEC_SqueezeDetBoxDecode SPEC(attrs_SqueezeDetBoxDecode, infer_SqueezeDetBoxDecode, "deltas, anchors", "boxes", "SqueezeDet box decoding: deltas and anchors [..., 4] to clipped [x1, y1, x2, y2] image boxes")
#define SPEC_YoloV3Decode SPEC(attrs_YoloV3Decode, infer_YoloV3Decode, "feature, anchors", "box_centers, box_sizes, boxes, confs, probs", "YOLOv3 head decoding of one feature map [1, A*(5+C), H, W]")
#define SPEC_SubMean SPEC(attrs_SubMean, infer_SubMean, "image", "output", "HWC image minus the per-channel mean, as CHW of type 'to'")
#define SPEC_DotProduct SPEC(no_attrs, infer_DotProduct, "A, B", "dot", "sum of the elementwise products of two equal-shaped tensors, shape [1]")
#define SPEC_Stack SPEC(attrs_Stack, infer_Stack, "inputs...", "stacked", "joins equal-shaped tensors along a new axis")
#define SPEC_Unstack SPEC(attrs_Unstack, infer_Unstack, "input", "outputs...", "splits a tensor into its slices along axis, the axis removed")

#define SPEC_LSTM SPEC(attrs_LSTM, infer_rnn, "X, W, R, B?, sequence_lens?, initial_h?, initial_c?, P?", "Y?, Y_h?, Y_c?", "one LSTM layer over a sequence (gates i, o, f, c; optional peepholes), one or two directions")
#define SPEC_GRU SPEC(attrs_GRU, infer_rnn, "X, W, R, B?, sequence_lens?, initial_h?", "Y?, Y_h?", "one GRU layer over a sequence (gates z, r, h), one or two directions")
#define SPEC_RNN SPEC(attrs_RNN, infer_rnn, "X, W, R, B?, sequence_lens?, initial_h?", "Y?, Y_h?", "one simple recurrent layer H = f(X W^T + H R^T + b) over a sequence, one or two directions")

/* Every row of ops.def has a SPEC (else SPEC_<op> is undeclared) whose doc
 * is a real sentence. */
#define SPEC_DOC_(attrs, n_attrs, doc, ...) doc
#define SPEC_DOC(...) SPEC_DOC_(__VA_ARGS__)
#define GIR_OP(id, mi, ma, mo, mxo, cat) \
    _Static_assert(sizeof(SPEC_DOC(SPEC_##id)) > 10, "ops.def row " #id " needs a one-line doc in its SPEC");
#include "ops.def"
#undef GIR_OP

static const gir_op_info table[] = {
    [GIR_OP_OPAQUE] = { "opaque", "opaque", 0, GIR_VARIADIC, 0, GIR_VARIADIC, no_attrs, 0,
                        "an operator kept verbatim from its source format", NULL, "inputs...", "outputs..." },
#define GIR_OP(id, mi, ma, mo, mxo, cat) [GIR_OP_##id] = { #id, cat, mi, ma, mo, mxo, SPEC_##id },
#include "ops.def"
#undef GIR_OP
};

_Static_assert(sizeof table / sizeof table[0] == GIR_OP_COUNT_, "one table row per ops.def row");

const gir_op_info *gir_op_get(gir_op op)
{
    return (unsigned)op < GIR_OP_COUNT_ ? &table[op] : NULL;
}

const char *gir_op_name(gir_op op)
{
    return (unsigned)op < GIR_OP_COUNT_ ? table[op].name : "?";
}

gir_op gir_op_from_name(const char *name)
{
    for (int i = 1; name && i < GIR_OP_COUNT_; i++)
        if (strcmp(table[i].name, name) == 0)
            return (gir_op)i;
    return GIR_OP_OPAQUE;
}

const gir_attr_schema *gir_op_attr_schema(gir_op op, const char *name)
{
    if ((unsigned)op >= GIR_OP_COUNT_ || !name)
        return NULL;
    return gir_attr_schema_find(table[op].attrs, table[op].attrs, name);
}

const char *gir_op_operand_name(gir_op op, bool output, size_t i, char *buf, size_t n)
{
    if (!n)
        return buf;
    snprintf(buf, n, "?");
    if ((unsigned)op >= GIR_OP_COUNT_)
        return buf;
    const char *p = output ? table[op].outputs : table[op].inputs;
    for (size_t k = 0; p && *p; k++) {
        size_t len = strcspn(p, ",");
        size_t name_len = strcspn(p, ",?.");
        bool variadic = len >= 3 && strncmp(p + len - 3, "...", 3) == 0;
        if (k == i || variadic) {
            snprintf(buf, n, "%.*s", (int)name_len, p);
            return buf;
        }
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return buf;
}

const char *gir_attr_type_name(gir_attr_type t)
{
    static const char *const names[] = { "int", "float", "bool", "string", "ints", "floats", "strings", "tensor" };
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}
