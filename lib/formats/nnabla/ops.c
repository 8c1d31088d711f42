/* NNabla functions <-> canonical operators as `graphconv ops --format
 * nnabla` lists them (the code is in read_ops.c and write.c). */
#include "nnabla.h"

/* ---- the mapping table (documentation for `graphconv ops`) ------------- */

#define R GIR_MAP_READ
#define W GIR_MAP_WRITE
#define RW (GIR_MAP_READ | GIR_MAP_WRITE)

static const gir_attr_map affine_attrs[] = {
    { "base_axis", NULL, "must be 1 (after normalising a negative value); written as 1" },
    { NULL, "transB", "1 for a Parameter used only as Affine weights (stored in x out, seen out x in); 0 for a "
                      "computed weight; a weight Gemm reads transposed is written transposed" },
    { NULL, "alpha", "must be 1" },
    { NULL, "beta", "must be 1" },
    { NULL, "transA", "must be 0" },
    { NULL, NULL, NULL },
};
static const gir_attr_map conv_attrs[] = {
    { "base_axis", NULL, "must be 1 (read); written 1" },
    { "pad", "pads", "symmetric: pads = pad + pad; absent means 0" },
    { "stride", "strides", "absent means 1" },
    { "dilation", "dilations", "absent means 1" },
    { "group", "group", "0 (absent) is refused on read" },
    { "channel_last", NULL, "true is kept opaque" },
    { NULL, "kernel_shape", "from the weight's shape" },
    { NULL, "auto_pad", "only NOTSET is written" },
    { NULL, NULL, NULL },
};
static const gir_attr_map deconv_attrs[] = {
    { "base_axis", NULL, "must be 1" },
    { "pad", "pads", "symmetric" },
    { "stride", "strides", NULL },
    { "dilation", "dilations", NULL },
    { "group", "group", NULL },
    { "output_padding", "output_padding", "absent means 0" },
    { "channel_last", NULL, "true is kept opaque" },
    { NULL, "output_shape", "refused on write" },
    { NULL, NULL, NULL },
};
static const gir_attr_map pool_attrs[] = {
    { "kernel", "kernel_shape", "pools the last len(kernel) axes; the input must be (N, C, spatial...)" },
    { "stride", "strides", "empty means the kernel" },
    { "pad", "pads", "symmetric" },
    { "ignore_border", "ceil_mode",
      "true: floor mode, pads = pad + pad; false: floor((L + p - 1) / s) + 1 cells, read as ceil mode when that "
      "agrees, else as extra end padding (needs the input size)" },
    { "including_pad", "count_include_pad", "AveragePooling; absent means false" },
    { "channel_last", NULL, "true is kept opaque" },
    { NULL, NULL, NULL },
};
static const gir_attr_map bn_attrs[] = {
    { "axes", NULL, "must be [1]" },
    { "eps", "epsilon", "absent means 0 (proto3), not 1e-05" },
    { "decay_rate", "momentum", NULL },
    { "batch_stat", NULL, "true (training statistics) is kept opaque" },
    { "no_scale", NULL, "true is kept opaque" },
    { "no_bias", NULL, "true is kept opaque" },
    { NULL, NULL, "inputs reordered: nnabla (x, beta, gamma, mean, var), canonical (X, scale, B, mean, var); "
                  "parameters (1, C, 1, 1) are viewed as (C)" },
    { NULL, NULL, NULL },
};
static const gir_attr_map axis_attrs[] = {
    { "axis", "axis", "absent means 0" },
    { NULL, NULL, NULL },
};
static const gir_attr_map reduce_attrs[] = {
    { "axes", "axes", "empty means every axis" },
    { "keep_dims", "keepdims", "absent means false" },
    { NULL, NULL, NULL },
};
static const gir_attr_map scalar_attrs[] = {
    { "val", NULL, "a float32 scalar constant operand; the exact double is kept for .nnp" },
    { "inplace", NULL, "a memory hint, kept for .nnp" },
    { NULL, NULL, NULL },
};
static const gir_attr_map inplace_attrs[] = {
    { "inplace", NULL, "a memory hint, kept for .nnp" },
    { NULL, NULL, NULL },
};
static const gir_attr_map reshape_attrs[] = {
    { "shape", "shape", "-1 is inferred in both; 0 is a literal zero (allowzero=1); on write a 0 that copies a "
                        "known dimension is replaced by it" },
    { "inplace", NULL, "kept for .nnp" },
    { NULL, NULL, NULL },
};
static const gir_attr_map slice_attrs[] = {
    { "start", "starts", "lists shorter than the rank apply to the trailing axes" },
    { "stop", "ends", "0x7fffffff (None) is the end" },
    { "step", "steps", "absent means 1" },
    { NULL, "axes", "the trailing axes" },
    { NULL, NULL, NULL },
};
static const gir_attr_map pad_attrs[] = {
    { "pad_width", "pads", "(before, after) pairs of the innermost axes" },
    { "mode", "mode", "constant, reflect; repeat is edge" },
    { "constant_value", "constant_value", NULL },
    { NULL, NULL, NULL },
};

/* Attributes the mapping engine converts, from and to the function's
 * parameter message (proto3: an absent field is 0). */
static const gir_attr_map softmax_attrs[] = {
    { "axis", "axis", "softmax_param; absent means 0", GIR_CONV_INT, 0 },
    { NULL, NULL, NULL },
};
static const gir_attr_map log_softmax_attrs[] = {
    { "axis", "axis", "log_softmax_param; absent means 0", GIR_CONV_INT, 0 },
    { NULL, NULL, NULL },
};
static const gir_attr_map elu_attrs[] = {
    { "alpha", "alpha", "elu_param", GIR_CONV_FLOAT, 0 },
    { NULL, NULL, NULL },
};
static const gir_attr_map selu_attrs[] = {
    { "alpha", "alpha", "selu_param", GIR_CONV_FLOAT, 0 },
    { "scale", "gamma", "selu_param", GIR_CONV_FLOAT, 0 },
    { NULL, NULL, NULL },
};
static const gir_attr_map mod2_attrs[] = {
    { "fmod", "fmod", "mod2_param: true has the dividend's sign (C fmod), false the divisor's", GIR_CONV_INT, 0 },
    { NULL, NULL, NULL },
};

const gir_op_map nnb_ops[] = {
    { "Affine", GIR_OP_Gemm, RW, affine_attrs,
      "x is viewed as a matrix: Flatten(axis=1) + Gemm when x is not 2-D" },
    { "Affine", GIR_OP_Flatten, RW, NULL,
      "the Flatten(axis=1) an Affine implies (or one of unknown shape) feeding only a Gemm is absorbed again" },
    { "Reshape", GIR_OP_Flatten, RW, NULL, "a Reshape to (prod(x[:k]), prod(x[k:])) is Flatten(axis=k)" },
    { "Convolution", GIR_OP_Conv, RW, conv_attrs, NULL },
    { "Deconvolution", GIR_OP_ConvTranspose, RW, deconv_attrs, NULL },
    { "MaxPooling", GIR_OP_MaxPool, RW, pool_attrs, "an Indices output must be unused" },
    { "AveragePooling", GIR_OP_AveragePool, RW, pool_attrs, NULL },
    { "GlobalAveragePooling", GIR_OP_GlobalAveragePool, RW, NULL, "4-D input; other ranks are written as Mean" },
    { "Max", GIR_OP_GlobalMaxPool, W, NULL, "Max over the spatial axes, keep_dims" },
    { "Unpooling", GIR_OP_Resize, RW, NULL, "nearest, asymmetric, floor, whole scale factors" },
    { "Embed", GIR_OP_Gather, R, NULL, "Gather(w, x0, axis=0)" },
    { "DepthwiseConvolution", GIR_OP_Conv, RW, NULL,
      "group = channels, the weight (C*multiplier, K...) viewed as (C*multiplier, 1, K...)" },
    { "DepthwiseDeconvolution", GIR_OP_ConvTranspose, RW, NULL, "divisor 1: group = channels" },
    { "Swish", GIR_OP_Mul, R, NULL, "x * Sigmoid(x)" },
    { "GELU", GIR_OP_Tanh, R, NULL, "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), nnabla's tanh form" },
    { "Mish", GIR_OP_Softplus, R, NULL, "x * Tanh(Softplus(x))" },
    { "LogSigmoid", GIR_OP_Softplus, R, NULL, "-Softplus(-x)" },
    { "TanhShrink", GIR_OP_Tanh, R, NULL, "x - Tanh(x)" },
    { "CReLU", GIR_OP_Concat, R, NULL, "Concat(Relu(x), Relu(-x)) along axis" },
    { "CELU", GIR_OP_Concat, R, NULL, "Concat(Elu(x), Elu(-x)) along axis" },
    { "LayerNormalization", GIR_OP_ReduceMean, R, NULL, "(x - mean) / sqrt(var + eps) * gamma + beta" },
    { "InstanceNormalization", GIR_OP_ReduceMean, R, NULL, "statistics per batch and channel" },
    { "GroupNormalization", GIR_OP_ReduceMean, R, NULL, "(B, C, ...) layout: Reshape to groups, statistics" },
    { "TensorNormalization", GIR_OP_ReduceMean, R, NULL, "statistics over the axes not listed" },
    { "WeightStandardization", GIR_OP_ReduceMean, R, NULL, "statistics over every axis but channel_axis" },
    { "WeightNormalization", GIR_OP_ReduceSum, R, NULL, "g * w / sqrt(sum(w^2) + eps)" },
    { "Interpolate", GIR_OP_Resize, RW, NULL,
      "nearest (floor) or linear; align_corners, asymmetric, half_pixel or tf_half_pixel_for_nn coordinates" },
    { "Max", GIR_OP_ArgMax, RW, NULL, "only_index (with_index: also ReduceMax) over one axis" },
    { "Min", GIR_OP_ArgMin, RW, NULL, "only_index (with_index: also ReduceMin) over one axis" },
    { "Stack", GIR_OP_Stack, RW, NULL, NULL },
    { "OneHot", GIR_OP_Equal, R, NULL, "one index axis: Cast(Equal(x, 0..n-1), float32)" },
    { "Arange", GIR_OP_Identity, R, NULL, "a constant, known when read" },
    { "Constant", GIR_OP_Identity, R, NULL, "a constant, known when read" },
    { "BatchMatmul", GIR_OP_Transpose, R, NULL, "transpose_a / transpose_b: Transpose of the last two axes" },
    { "Unlink", GIR_OP_Identity, R, NULL, "the identity on the forward pass (also ClipGradByValue, ClipGradByNorm)" },
    { "MulN", GIR_OP_Mul, R, NULL, "a chain of Mul" },
    { "Tan", GIR_OP_Div, R, NULL, "Sin(x) / Cos(x)" },
    { "Sinh", GIR_OP_Exp, R, NULL, "(exp(x) - exp(-x)) / 2 (Cosh: +)" },
    { "Sinc", GIR_OP_Where, R, NULL, "1 at 0, Sin(x) / x elsewhere" },
    { "IsNaN", GIR_OP_Not, R, NULL, "not (x == x), as 0/1 floats" },
    { "IsInf", GIR_OP_Equal, R, NULL, "|x| == inf, as 0/1 floats" },
    { "ResetNaN", GIR_OP_Where, R, NULL, "val where x is NaN (ResetInf: where x is infinite)" },
    { "BinarySigmoid", GIR_OP_Where, R, NULL, "x > 0 ? 1 : 0 (BinaryTanh: 1 : -1)" },
    { "Mod2", GIR_OP_Mod, RW, mod2_attrs, NULL, RW, 2 },
    { "Round", GIR_OP_Floor, R, NULL, "halves away from zero: Sign(x) * (t + (|x| - t >= 0.5)), t = Floor(|x|)" },
    { "Gather", GIR_OP_Gather, RW, axis_attrs, "batch_dims must be 0" },
    { "ReLU", GIR_OP_Relu, RW, inplace_attrs, NULL },
    { "LeakyReLU", GIR_OP_LeakyRelu, RW, NULL, "alpha; absent means 0" },
    { "Softmax", GIR_OP_Softmax, RW, softmax_attrs, NULL, RW, 1 },
    { "LogSoftmax", GIR_OP_LogSoftmax, RW, log_softmax_attrs, NULL, RW, 1 },
    { "ELU", GIR_OP_Elu, RW, elu_attrs, NULL, RW, 1 },
    { "SELU", GIR_OP_Selu, RW, selu_attrs, NULL, RW, 1 },
    { "PReLU", GIR_OP_PRelu, RW, NULL, "one shared slope, or a (C,) slope of channel axis base_axis" },
    { "SoftPlus", GIR_OP_Softplus, RW, NULL, "beta must be 1" },
    { "HardSigmoid", GIR_OP_HardSigmoid, RW, NULL, "alpha 0.2, beta 0.5" },
    { "HardTanh", GIR_OP_Clip, RW, NULL, "Clip(-1, 1)" },
    { "ReLU6", GIR_OP_Clip, RW, NULL, "Clip(0, 6)" },
    { "MinimumScalar", GIR_OP_Clip, RW, scalar_attrs, "Clip(max=val); Clip with both bounds is written as "
                                                      "MaximumScalar then MinimumScalar" },
    { "MaximumScalar", GIR_OP_Clip, RW, scalar_attrs, "Clip(min=val)" },
    { "Sigmoid", GIR_OP_Sigmoid, RW, NULL, NULL , RW, 1 },
    { "Tanh", GIR_OP_Tanh, RW, NULL, NULL , RW, 1 },
    { "SoftSign", GIR_OP_Softsign, RW, NULL, NULL , RW, 1 },
    { "BatchNormalization", GIR_OP_BatchNormalization, RW, bn_attrs, NULL },
    { "Sum", GIR_OP_ReduceSum, RW, reduce_attrs, NULL },
    { "Mean", GIR_OP_ReduceMean, RW, reduce_attrs, NULL },
    { "Max", GIR_OP_ReduceMax, RW, reduce_attrs, "with_index/only_index are kept opaque" },
    { "Min", GIR_OP_ReduceMin, RW, reduce_attrs, "with_index/only_index are kept opaque" },
    { "Prod", GIR_OP_ReduceProd, RW, reduce_attrs, NULL },
    { "ReduceSum", GIR_OP_ReduceSum, RW, NULL, "every axis, keepdims 0" },
    { "ReduceMean", GIR_OP_ReduceMean, RW, NULL, "every axis, keepdims 0" },
    { "Add2", GIR_OP_Add, RW, inplace_attrs, "nnabla broadcasts equal ranks only: a Reshape adds leading 1s" },
    { "BcAdd2", GIR_OP_Add, RW, inplace_attrs, NULL },
    { "Sub2", GIR_OP_Sub, RW, inplace_attrs, NULL },
    { "Mul2", GIR_OP_Mul, RW, inplace_attrs, NULL },
    { "Div2", GIR_OP_Div, RW, inplace_attrs, NULL },
    { "Pow2", GIR_OP_Pow, RW, inplace_attrs, NULL },
    { "AddN", GIR_OP_Sum, RW, NULL, NULL },
    { "Maximum2", GIR_OP_Max, RW, NULL, "more than two inputs are chained" , R, 2 },
    { "Minimum2", GIR_OP_Min, RW, NULL, "more than two inputs are chained" , R, 2 },
    { "AddScalar", GIR_OP_Add, RW, scalar_attrs, "Add with a scalar constant; Sub(x, c) is AddScalar(-c)" },
    { "MulScalar", GIR_OP_Mul, RW, scalar_attrs, "Mul with a scalar constant" },
    { "MulScalar", GIR_OP_Neg, RW, scalar_attrs, "val -1" },
    { "PowScalar", GIR_OP_Pow, RW, scalar_attrs, "Pow(x, c)" },
    { "PowScalar", GIR_OP_Sqrt, RW, scalar_attrs, "val 0.5" },
    { "RSubScalar", GIR_OP_Sub, RW, scalar_attrs, "Sub(c, x)" },
    { "RDivScalar", GIR_OP_Div, RW, scalar_attrs, "Div(c, x)" },
    { "RDivScalar", GIR_OP_Reciprocal, RW, scalar_attrs, "val 1" },
    { "RPowScalar", GIR_OP_Pow, RW, scalar_attrs, "Pow(c, x)" },
    { "Sign", GIR_OP_Sign, RW, NULL, "alpha must be 0 (ONNX's sign of 0)" },
    { "Abs", GIR_OP_Abs, RW, NULL, NULL , RW, 1 },
    { "Exp", GIR_OP_Exp, RW, NULL, NULL , RW, 1 },
    { "Log", GIR_OP_Log, RW, NULL, NULL , RW, 1 },
    { "Identity", GIR_OP_Identity, RW, NULL, NULL , RW, 1 },
    { "Sin", GIR_OP_Sin, RW, NULL, NULL , RW, 1 },
    { "Cos", GIR_OP_Cos, RW, NULL, NULL , RW, 1 },
    { "Erf", GIR_OP_Erf, RW, NULL, NULL , RW, 1 },
    { "Ceil", GIR_OP_Ceil, RW, NULL, NULL , R, 1 },
    { "Floor", GIR_OP_Floor, RW, NULL, NULL , R, 1 },
    { "BatchMatmul", GIR_OP_MatMul, RW, NULL, "no transposes; equal ranks of at least 2" },
    { "Concatenate", GIR_OP_Concat, RW, axis_attrs, NULL },
    { "Split", GIR_OP_Split, RW, axis_attrs,
      "an unstack: Split into parts of 1, each followed by Squeeze(axis); other splits are written as Slice" },
    { "Slice", GIR_OP_Slice, RW, slice_attrs, NULL },
    { "Pad", GIR_OP_Pad, RW, pad_attrs, NULL },
    { "Transpose", GIR_OP_Transpose, RW, NULL, "axes is perm" },
    { "Reshape", GIR_OP_Reshape, RW, reshape_attrs, NULL },
    { "Reshape", GIR_OP_Squeeze, W, NULL, "to the known output shape" },
    { "Reshape", GIR_OP_Unsqueeze, W, NULL, "to the known output shape" },
    { "Broadcast", GIR_OP_Expand, RW, NULL, "equal ranks; a -1 (batch) in shape keeps the input's size" },
    { "Tile", GIR_OP_Tile, RW, NULL, "reps is repeats (leading 1s added)" },
    { "Dropout", GIR_OP_Dropout, RW, NULL, "inverted dropout: the identity at inference; p is ratio" },
    { "Equal", GIR_OP_Equal, RW, NULL,
      "nnabla has no bool: its comparisons give 0/1 floats, read as the canonical op then Cast(to=float32); a "
      "bool value is written as a 0/1 float variable (bool parameters as float32 data)" },
    { "Greater", GIR_OP_Greater, RW, NULL, "as Equal" },
    { "EqualScalar", GIR_OP_Equal, RW, NULL,
      "the comparison with a float32 scalar constant (val exact in meta); likewise GreaterScalar, "
      "GreaterEqualScalar, LessScalar, LessEqualScalar" },
    { "Less", GIR_OP_Less, RW, NULL, "as Equal" },
    { "GreaterEqual", GIR_OP_GreaterOrEqual, RW, NULL, "as Equal" },
    { "LessEqual", GIR_OP_LessOrEqual, RW, NULL, "as Equal" },
    { "LogicalAnd", GIR_OP_And, RW, NULL, "operands read through Cast(to=bool) (nonzero is true), as Equal" , W, 2 },
    { "LogicalOr", GIR_OP_Or, RW, NULL, "as LogicalAnd" , W, 2 },
    { "LogicalXor", GIR_OP_Xor, RW, NULL, "as LogicalAnd" , W, 2 },
    { "LogicalNot", GIR_OP_Not, RW, NULL, "as LogicalAnd" , W, 1 },
    { "Where", GIR_OP_Where, RW, NULL, "the condition read through Cast(to=bool)" , W, 3 },
    { "NotEqualScalar", GIR_OP_Cast, RW, NULL,
      "Cast(to=bool) of a float is NotEqualScalar(0) unless only logical functions read it; Cast between "
      "bool and float32 is the identity (folded into the function next to it); other casts are refused; "
      "NotEqualScalar with another val is kept opaque" },
    { "BroadcastTo", GIR_OP_Expand, RW, NULL,
      "y broadcast to x's shape from axis: Reshape(y) + Expand to x's known shape, folded back when written" },
    { "SumPooling", GIR_OP_AveragePool, RW, pool_attrs,
      "AveragePool counting the padding (whole windows) times the window size, folded back when written" },
    { "(LRN)", GIR_OP_LRN, W, NULL,
      "written as nnabla's converter spells it: PowScalar(2), Transpose, SumPooling over the channels, "
      "Transpose, MulScalar(alpha/size), AddScalar(bias), PowScalar(beta), Div2; odd size, 4-D input" },
    { "(any other)", GIR_OP_OPAQUE, RW, NULL,
      "kept as an opaque node: type and parameter message as text; written back to .nnp only" },
    { NULL, GIR_OP_OPAQUE, 0, NULL, NULL },
};
