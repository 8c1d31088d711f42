/* Relay operators <-> canonical operators as `graphconv ops --format
 * relayviz` lists them (the code is in read_ops.c and write_ops.c). */
#include "relayviz.h"

/* ---- the mapping table ------------------------------------------------------ */

#define RW (GIR_MAP_READ | GIR_MAP_WRITE)

static const gir_attr_map conv2d_attrs[] = {
    { "strides", "strides", "1 or 2 values (default [1, 1])" },
    { "padding", "pads", "1, 2 or 4 values (top, left, bottom, right); written as 4" },
    { "dilation", "dilations", "1 or 2 values (default [1, 1])" },
    { "groups", "group", "default 1" },
    { "kernel_size", "kernel_shape", "checked against the weight; written from it" },
    { "channels", NULL, "written as the weight's output channels; ignored on read" },
    { "data_layout", NULL, "NCHW only (other layouts read as opaque)" },
    { "kernel_layout", NULL, "OIHW (conv2d), IOHW (conv2d_transpose) only" },
    { "out_layout", NULL, "empty or NCHW" },
    { "out_dtype", NULL, "empty or the input's dtype" },
    { NULL, "auto_pad", "NOTSET only (SAME_*/VALID refused on write)" },
    { NULL, NULL, NULL },
};
static const gir_attr_map conv2d_t_attrs[] = {
    { "output_padding", "output_padding", "1 or 2 values (default [0, 0])" },
    { NULL, "output_shape", "refused on write" },
    { "strides", "strides", "as nn.conv2d" },
    { "padding", "pads", "as nn.conv2d" },
    { "dilation", "dilations", "as nn.conv2d" },
    { "groups", "group", "default 1" },
    { "kernel_layout", NULL, "IOHW only" },
    { NULL, NULL, NULL },
};
static const gir_attr_map bias_add_attrs[] = {
    { "axis", NULL,
      "after nn.conv2d (axis 1) or nn.dense (axis -1 or 1) and only used there: folded into the bias input B; "
      "elsewhere an Add (with an Unsqueeze of the bias for a non-last axis)" },
    { NULL, NULL, NULL },
};
static const gir_attr_map dense_attrs[] = {
    { "units", NULL, "written as the weight's rows; ignored on read" },
    { "out_dtype", NULL, "empty or the input's dtype" },
    { NULL, "transB", "1 (weight is [units, in]); transB=0, transA=1, alpha or beta other than 1 refused" },
    { NULL, NULL, NULL },
};
static const gir_attr_map batch_norm_attrs[] = {
    { "epsilon", "epsilon", "default 1e-05" },
    { "axis", NULL, "1 only" },
    { "center", NULL, "true only" },
    { "scale", NULL, "true only" },
    { NULL, "momentum", "not written (training only)" },
    { NULL, NULL, NULL },
};
static const gir_attr_map pool_attrs[] = {
    { "pool_size", "kernel_shape", "required; 1 or 2 values" },
    { "strides", "strides", "default [1, 1]" },
    { "padding", "pads", "1, 2 or 4 values; written as 4" },
    { "dilation", "dilations", "default [1, 1] (nn.avg_pool2d: 1 only)" },
    { "ceil_mode", "ceil_mode", "default false" },
    { "count_include_pad", "count_include_pad", "nn.avg_pool2d only; default false" },
    { "layout", NULL, "NCHW only" },
    { NULL, "auto_pad", "NOTSET only" },
    { NULL, NULL, NULL },
};
static const gir_attr_map global_pool_attrs[] = {
    { "layout", NULL, "NCHW only; 4-D inputs only on write" },
    { NULL, NULL, NULL },
};
static const gir_attr_map leaky_attrs[] = {
    { "alpha", "alpha", "Relay's default 0.25 when absent; always written", GIR_CONV_FLOAT, 0.25 },
    { NULL, NULL, NULL },
};
static const gir_attr_map prelu_attrs[] = {
    { "axis", NULL,
      "the last axis maps to PRelu directly; an earlier axis gives the slope trailing unit axes (an Unsqueeze); "
      "on write the slope must be [C] or such an Unsqueeze of it" },
    { NULL, NULL, NULL },
};
static const gir_attr_map softmax_attrs[] = {
    { "axis", "axis", "default -1", GIR_CONV_INT, -1 },
    { NULL, NULL, NULL },
};
static const gir_attr_map pad_attrs[] = {
    { "pad_width", "pads", "[[before, after], ...] per axis <-> all begins then all ends; negative pads refused" },
    { "pad_mode", "mode", "constant, edge, reflect" },
    { "pad_value", "constant_value", "the second argument, a scalar Const (an attribute also read)" },
    { NULL, NULL, NULL },
};
static const gir_attr_map lrn_attrs[] = {
    { "size", "size", "Relay default 5" },
    { "bias", "bias", "Relay default 2" },
    { "alpha", "alpha", "default 0.0001" },
    { "beta", "beta", "default 0.75" },
    { "axis", NULL, "1 only" },
    { NULL, NULL, NULL },
};
static const gir_attr_map upsampling_attrs[] = {
    { "scale_h", "scales", "scales [1, 1, scale_h, scale_w]" },
    { "scale_w", "scales", NULL },
    { "method", "mode", "nearest_neighbor <-> nearest with asymmetric coordinates and floor rounding (whole "
                        "scales: also half_pixel with round_prefer_*); other methods read as opaque" },
    { "layout", NULL, "NCHW only" },
    { NULL, NULL, NULL },
};
static const gir_attr_map dropout_attrs[] = {
    { "rate", "ratio", "default 0.5; result is a 2-tuple read through TupleGetItem" },
    { NULL, NULL, NULL },
};
static const gir_attr_map concat_attrs[] = {
    { "axis", "axis", "Relay default 0; the inputs are one Tuple" },
    { NULL, NULL, NULL },
};
static const gir_attr_map split_attrs[] = {
    { "indices_or_sections", "split", "a count (equal parts, no split list) or split indices <-> sizes" },
    { "axis", "axis", "default 0; results read through TupleGetItem" },
    { NULL, NULL, NULL },
};
static const gir_attr_map reshape_attrs[] = {
    { "newshape", "shape", "0 and -1 as in ONNX; Relay's -2, -3, -4 read as opaque" },
    { "allowzero", "allowzero", "default false" },
    { NULL, NULL, NULL },
};
static const gir_attr_map transpose_attrs[] = {
    { "axes", "perm", "null (reverse) <-> absent" },
    { NULL, NULL, NULL },
};
static const gir_attr_map squeeze_attrs[] = {
    { "axis", "axes", "null (all unit axes) <-> absent" },
    { NULL, NULL, NULL },
};
static const gir_attr_map expand_dims_attrs[] = {
    { "axis", "axes", "axes [axis .. axis+num_newaxis-1]; on write the axes must be consecutive" },
    { "num_newaxis", NULL, "default 1" },
    { NULL, NULL, NULL },
};
static const gir_attr_map clip_attrs[] = {
    { "a_min", "min", "required (Clip without a bound refused)" },
    { "a_max", "max", "required" },
    { NULL, NULL, NULL },
};
static const gir_attr_map slice_attrs[] = {
    { "begin", "starts", NULL },
    { "end", "ends", NULL },
    { "strides", "steps", "null <-> absent; shorter lists padded with 1" },
    { "axes", "axes", "null <-> absent" },
    { "slice_mode", NULL, "end only (size reads as opaque)" },
    { NULL, NULL, NULL },
};
static const gir_attr_map reduce_attrs[] = {
    { "axis", "axes", "null <-> absent (all axes)" },
    { "keepdims", "keepdims", "Relay default false" },
    { "exclude", NULL, "false only" },
    { NULL, NULL, NULL },
};
static const gir_attr_map argreduce_attrs[] = {
    { "axis", "axis", "one axis" },
    { "keepdims", "keepdims", "Relay default false" },
    { "select_last_index", "select_last_index", "default false" },
    { "exclude", NULL, "false only" },
    { NULL, NULL, NULL },
};
static const gir_attr_map cast_attrs[] = {
    { "dtype", "to", "an element type name" },
    { NULL, NULL, NULL },
};

const gir_op_map gir_relayviz_ops[] = {
    { "nn.conv2d", GIR_OP_Conv, RW, conv2d_attrs, "with a bias: nn.conv2d then nn.bias_add(axis=1)" },
    { "nn.conv2d_transpose", GIR_OP_ConvTranspose, RW, conv2d_t_attrs, "with a bias: then nn.bias_add(axis=1)" },
    { "nn.dense", GIR_OP_Gemm, RW, dense_attrs, "Gemm's C: a [units] bias is nn.dense then nn.bias_add(axis=-1), any other C an add" },
    { "nn.bias_add", GIR_OP_Add, RW, bias_add_attrs, "folded into Conv/ConvTranspose/Gemm when it follows one" },
    { "nn.batch_norm", GIR_OP_BatchNormalization, RW, batch_norm_attrs,
      "a 3-tuple read through TupleGetItem 0; using items 1 or 2 reads as opaque" },
    { "nn.dropout", GIR_OP_Dropout, RW, dropout_attrs, NULL },
    { "nn.max_pool2d", GIR_OP_MaxPool, RW, pool_attrs, "the Indices output is refused" },
    { "nn.avg_pool2d", GIR_OP_AveragePool, RW, pool_attrs, NULL },
    { "nn.global_avg_pool2d", GIR_OP_GlobalAveragePool, RW, global_pool_attrs, NULL },
    { "nn.global_max_pool2d", GIR_OP_GlobalMaxPool, RW, global_pool_attrs, NULL },
    { "nn.relu", GIR_OP_Relu, RW, NULL, NULL, RW, 1 },
    { "nn.leaky_relu", GIR_OP_LeakyRelu, RW, leaky_attrs, NULL, RW, 1 },
    { "nn.prelu", GIR_OP_PRelu, RW, prelu_attrs, NULL },
    { "nn.softmax", GIR_OP_Softmax, RW, softmax_attrs, NULL, RW, 1 },
    { "nn.log_softmax", GIR_OP_LogSoftmax, RW, softmax_attrs, NULL, RW, 1 },
    { "nn.batch_flatten", GIR_OP_Flatten, RW, NULL, "Flatten with axis 1 only" },
    { "nn.pad", GIR_OP_Pad, RW, pad_attrs, NULL },
    { "nn.lrn", GIR_OP_LRN, RW, lrn_attrs, NULL },
    { "nn.upsampling", GIR_OP_Resize, RW, upsampling_attrs, "Resize by scales [1, 1, h, w] only" },
    { "add", GIR_OP_Add, RW, NULL, NULL, RW, 2 },
    { "subtract", GIR_OP_Sub, RW, NULL, NULL, RW, 2 },
    { "multiply", GIR_OP_Mul, RW, NULL, NULL, RW, 2 },
    { "divide", GIR_OP_Div, RW, NULL, NULL, RW, 2 },
    { "power", GIR_OP_Pow, RW, NULL, NULL, RW, 2 },
    { "maximum", GIR_OP_Max, RW, NULL, "two inputs only", RW, 2 },
    { "minimum", GIR_OP_Min, RW, NULL, "two inputs only", RW, 2 },
    { "concatenate", GIR_OP_Concat, RW, concat_attrs, NULL },
    { "split", GIR_OP_Split, RW, split_attrs, NULL },
    { "reshape", GIR_OP_Reshape, RW, reshape_attrs, NULL },
    { "transpose", GIR_OP_Transpose, RW, transpose_attrs, NULL },
    { "squeeze", GIR_OP_Squeeze, RW, squeeze_attrs, NULL },
    { "expand_dims", GIR_OP_Unsqueeze, RW, expand_dims_attrs, NULL },
    { "broadcast_to", GIR_OP_Expand, RW, NULL, "shape is the result's shape (written from the known output shape)" },
    { "clip", GIR_OP_Clip, RW, clip_attrs, NULL },
    { "strided_slice", GIR_OP_Slice, RW, slice_attrs, NULL },
    { "cast", GIR_OP_Cast, RW, cast_attrs, NULL },
    { "sum", GIR_OP_ReduceSum, RW, reduce_attrs, NULL },
    { "mean", GIR_OP_ReduceMean, RW, reduce_attrs, NULL },
    { "max", GIR_OP_ReduceMax, RW, reduce_attrs, NULL },
    { "min", GIR_OP_ReduceMin, RW, reduce_attrs, NULL },
    { "prod", GIR_OP_ReduceProd, RW, reduce_attrs, NULL },
    { "argmax", GIR_OP_ArgMax, RW, argreduce_attrs, NULL },
    { "argmin", GIR_OP_ArgMin, RW, argreduce_attrs, NULL },
    { "sigmoid", GIR_OP_Sigmoid, RW, NULL, NULL, RW, 1 },
    { "tanh", GIR_OP_Tanh, RW, NULL, NULL, RW, 1 },
    { "exp", GIR_OP_Exp, RW, NULL, NULL, RW, 1 },
    { "log", GIR_OP_Log, RW, NULL, NULL, RW, 1 },
    { "sqrt", GIR_OP_Sqrt, RW, NULL, NULL, RW, 1 },
    { "negative", GIR_OP_Neg, RW, NULL, NULL, RW, 1 },
    { "abs", GIR_OP_Abs, RW, NULL, NULL, RW, 1 },
    { "floor", GIR_OP_Floor, RW, NULL, NULL, RW, 1 },
    { "ceil", GIR_OP_Ceil, RW, NULL, NULL, RW, 1 },
    { "sign", GIR_OP_Sign, RW, NULL, NULL, RW, 1 },
    { "erf", GIR_OP_Erf, RW, NULL, NULL, RW, 1 },
    { "sin", GIR_OP_Sin, RW, NULL, NULL, RW, 1 },
    { "cos", GIR_OP_Cos, RW, NULL, NULL, RW, 1 },
    { "copy", GIR_OP_Identity, RW, NULL, NULL, RW, 1 },
    { "equal", GIR_OP_Equal, RW, NULL, NULL, RW, 2 },
    { "greater", GIR_OP_Greater, RW, NULL, NULL, RW, 2 },
    { "less", GIR_OP_Less, RW, NULL, NULL, RW, 2 },
    { "greater_equal", GIR_OP_GreaterOrEqual, RW, NULL, NULL, RW, 2 },
    { "less_equal", GIR_OP_LessOrEqual, RW, NULL, NULL, RW, 2 },
    { "logical_and", GIR_OP_And, RW, NULL, NULL, RW, 2 },
    { "logical_or", GIR_OP_Or, RW, NULL, NULL, RW, 2 },
    { "logical_xor", GIR_OP_Xor, RW, NULL, NULL, RW, 2 },
    { "logical_not", GIR_OP_Not, RW, NULL, NULL, RW, 1 },
    { "where", GIR_OP_Where, RW, NULL, NULL, RW, 3 },
    { "(any other)", GIR_OP_OPAQUE, RW, NULL,
      "read as an opaque node (attributes as JSON text); written back as it was" },
    { NULL, GIR_OP_OPAQUE, 0, NULL, NULL },
};
