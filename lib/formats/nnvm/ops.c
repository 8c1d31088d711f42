/* The operator mapping of the NNVM family as `graphconv ops --format F`
 * lists it (the code is in read_ops.c and write_ops.c). */
#include "nnvm.h"

#define RW (GIR_MAP_READ | GIR_MAP_WRITE)
#define R GIR_MAP_READ
#define END { NULL, NULL, NULL }

/* ---- MXNet ------------------------------------------------------------------ */

static const gir_attr_map mx_conv[] = {
    { "kernel", "kernel_shape", "required; 1 to 3 spatial dimensions" },
    { "stride", "strides", "() or absent means 1 each" },
    { "dilate", "dilations", "() or absent means 1 each" },
    { "pad", "pads", "symmetric: pads = pad + pad; () means 0; asymmetric pads are refused on write" },
    { "num_filter", NULL, "checked against / written from the weight's first dimension" },
    { "num_group", "group", "default 1" },
    { "no_bias", NULL, "input count: False (default) takes a bias input" },
    { "layout", NULL, "None or NCW/NCHW/NCDHW; other layouts keep the node verbatim" },
    { "workspace", NULL, "kept for the round trip (no effect on results)" },
    { "cudnn_tune", NULL, "kept for the round trip" },
    { "cudnn_off", NULL, "kept for the round trip" },
    { NULL, "auto_pad", "only NOTSET is written" },
    END,
};
static const gir_attr_map mx_deconv[] = {
    { "kernel", "kernel_shape", "required" },
    { "stride", "strides", "() means 1 each" },
    { "dilate", "dilations", "() means 1 each" },
    { "pad", "pads", "symmetric" },
    { "adj", "output_padding", "() means 0 each" },
    { "target_shape", NULL, "non-empty keeps the node verbatim; output_shape is refused on write" },
    { "num_filter", NULL, "weight dimension 1 x group" },
    { "num_group", "group", "default 1" },
    { "no_bias", NULL, "default True (unlike Convolution)" },
    END,
};
static const gir_attr_map mx_fc[] = {
    { "num_hidden", NULL, "required; the weight's first dimension" },
    { "no_bias", NULL, "input count" },
    { "flatten", NULL, "True (default): Flatten(axis=1) + Gemm, folded back into one FullyConnected on write; "
                       "False: Gemm when the input is known to be a matrix, else kept verbatim" },
    { NULL, "transB", "always 1 (weight is [units, in]); alpha = beta = 1, transA = 0" },
    END,
};
static const gir_attr_map mx_bn[] = {
    { "eps", "epsilon", "MXNet default 0.001 (canonical 1e-05): always written explicitly" },
    { "momentum", "momentum", "default 0.9" },
    { "fix_gamma", NULL, "True (MXNet's default): scale is a constant of ones, the gamma variable kept aside "
                         "and written back; False: gamma is the scale" },
    { "axis", NULL, "only 1; other axes keep the node verbatim" },
    { "use_global_stats", NULL, "kept (inference always uses the moving statistics)" },
    { "output_mean_var", NULL, "kept; reading the mean/var outputs keeps the node verbatim" },
    END,
};
static const gir_attr_map mx_act[] = {
    { "act_type", NULL, "relu -> Relu, sigmoid -> Sigmoid, tanh -> Tanh, softrelu -> Softplus, softsign -> "
                        "Softsign" },
    END,
};
static const gir_attr_map mx_leaky[] = {
    { "act_type", NULL, "leaky -> LeakyRelu, elu -> Elu, selu -> Selu, prelu -> PRelu (gamma per channel of axis 1, unsqueezed to [C,1,..]), gelu -> x/sqrt(2), Erf, +1, *x, *0.5, rrelu -> LeakyRelu((lower+upper)/2) unless its mask is read" },
    { "slope", "alpha", "default 0.25 (canonical LeakyRelu default 0.01): written explicitly" },
    END,
};
static const gir_attr_map mx_pool[] = {
    { "pool_type", NULL, "max -> MaxPool, avg -> AveragePool; sum and lp kept verbatim" },
    { "global_pool", NULL, "True -> GlobalMaxPool / GlobalAveragePool" },
    { "kernel", "kernel_shape", "required unless global_pool" },
    { "stride", "strides", "() means 1 each" },
    { "pad", "pads", "symmetric" },
    { "pooling_convention", "ceil_mode", "valid -> 0, full -> 1; same kept verbatim" },
    { "count_include_pad", "count_include_pad", "avg only; None means True in MXNet" },
    { NULL, "dilations", "1 each" },
    END,
};
static const gir_attr_map mx_softmax_out[] = {
    { NULL, "axis", "1 (multi_output, or a matrix input); -1 with preserve_shape; other inputs of unknown "
                    "rank keep the node verbatim" },
    { "label input", NULL, "dropped; its variable's name and attributes are kept and written back" },
    { "grad_scale, ignore_label, normalization, ...", NULL, "training only: kept for the round trip" },
    END,
};
static const gir_attr_map mx_softmax[] = {
    { "axis", "axis", "default -1" },
    { "temperature", NULL, "None or 1 only" },
    END,
};
static const gir_attr_map mx_concat[] = {
    { "dim", "axis", "default 1 (canonical Concat requires axis: always written)" },
    { "num_args", NULL, "the input count" },
    END,
};
static const gir_attr_map mx_dropout[] = {
    { "p", "ratio", "default 0.5" },
    { "mode", NULL, "training (identity at inference); always is kept verbatim" },
    END,
};
static const gir_attr_map mx_rnn[] = {
    { "mode", NULL, "lstm -> LSTM, gru -> GRU (linear_before_reset=1), rnn_tanh / rnn_relu -> RNN (Tanh / Relu)" },
    { "state_size", "hidden_size", "required" },
    { "num_layers", NULL, "one canonical node per layer; between layers Y [T, D, N, H] becomes [T, N, D*H]" },
    { "bidirectional", "direction", "True: bidirectional, else forward" },
    { "state_outputs", NULL, "output count: hy (and cy) concatenated over the layers" },
    { "p", NULL, "dropout between layers: training only, dropped" },
    { "projection_size", NULL, "set: the node is kept verbatim" },
    { "lstm_state_clip_min", NULL, "set (or _max): kept verbatim" },
    { "use_sequence_length", NULL, "True: kept verbatim" },
    END,
};
static const gir_attr_map mx_reshape[] = {
    { "shape", "shape", "0 copies, -1 infers; -2, -3, -4 and reverse resolved from the input shape (verbatim without it); the codes are written back while they give the same shape" },
    END,
};
static const gir_attr_map mx_scalar[] = {
    { "scalar", NULL, "a rank-0 float constant operand (second, or first for the r-variants)" },
    { "is_int", NULL, "True keeps the node verbatim" },
    END,
};
static const gir_attr_map axes_perm[] = { { "axes", "perm", "() means reversed" }, END };
static const gir_attr_map clip_map[] = { { "a_min", "min", NULL }, { "a_max", "max", NULL }, END };
static const gir_attr_map mx_split[] = {
    { "num_outputs", NULL, "equal parts, one per output" },
    { "axis", "axis", "default 1" },
    { "squeeze_axis", NULL, "True: a Squeeze per part" },
    END,
};
static const gir_attr_map mx_lrn[] = {
    { "alpha", "alpha", NULL }, { "beta", "beta", NULL }, { "knorm", "bias", "default 2" },
    { "nsize", "size", NULL }, END,
};
static const gir_attr_map reduce_map[] = {
    { "axis", "axes", "() or absent: all axes" },
    { "keepdims", "keepdims", "default False (canonical default 1: written explicitly)" },
    { "exclude", NULL, "True reduces the axes not listed (needs the rank)" },
    END,
};
static const gir_attr_map cast_map[] = { { "dtype", "to", "type name" }, END };
static const gir_attr_map mx_slice[] = {
    { "axis", "axes", "one axis" }, { "begin", "starts", NULL },
    { "end", "ends", "None means to the end" }, { NULL, "steps", "1 only" }, END,
};
static const gir_attr_map nv_slice[] = {
    { "begin", "starts", "one value per axis from 0; an axis taken whole (0, 2147483647, 1) is not listed" },
    { "end", "ends", "2147483647 or more means to the end" },
    { "stride", "steps", "default 1" },
    { NULL, "axes", "written over axes 0..max; negative axes need the input's rank" },
    END,
};
static const gir_attr_map expand_mx[] = { { "axis", "axes", "one non-negative axis" }, END };
static const gir_attr_map squeeze_map[] = { { "axis", "axes", NULL }, END };
static const gir_attr_map mx_pad[] = {
    { "pad_width", "pads", "(before, after) per axis <-> all begins then all ends; N and C not padded" },
    { "mode", "mode", "constant, edge, reflect" },
    { "constant_value", "constant_value", "finite values only on write" },
    END,
};

const gir_op_map nn_mxnet_ops[] = {
    { "Convolution", GIR_OP_Conv, RW, mx_conv, "data, weight, [bias]" },
    { "Deconvolution", GIR_OP_ConvTranspose, RW, mx_deconv, "weight [in, out/group, k...]" },
    { "FullyConnected", GIR_OP_Gemm, RW, mx_fc, "data, weight, [bias]" },
    { "BatchNorm", GIR_OP_BatchNormalization, RW, mx_bn,
      "data, gamma, beta, moving_mean, moving_var (aux:); MXNet < 0.9 files get <name>_moving_mean/var" },
    { "Activation", GIR_OP_Relu, RW, mx_act, "also Sigmoid, Tanh, Softplus, Softsign" },
    { "LeakyReLU", GIR_OP_LeakyRelu, RW, mx_leaky, "also Elu, Selu" },
    { "Pooling", GIR_OP_MaxPool, RW, mx_pool, "also AveragePool, GlobalMaxPool, GlobalAveragePool; the extra "
                                             "workspace output of MKLDNN builds is ignored" },
    { "SoftmaxOutput", GIR_OP_Softmax, RW, mx_softmax_out, "alias Softmax" },
    { "softmax", GIR_OP_Softmax, RW, mx_softmax, NULL },
    { "log_softmax", GIR_OP_LogSoftmax, RW, mx_softmax, NULL },
    { "SoftmaxActivation", GIR_OP_Softmax, R, NULL, "mode=channel: axis 1; instance: axis 1 of a matrix, else Flatten, Softmax, Reshape (needs the shape)" },
    { "UpSampling", GIR_OP_Resize, R, NULL, "nearest: Resize (asymmetric, floor; several inputs each to the first's size, then Concat or Sum); bilinear: ConvTranspose with the weight, kernel 2s-s%2, stride s, pad s/2, group num_filter; written back from Resize (nearest, whole scale)" },
    { "Crop", GIR_OP_Slice, R, NULL, "axes 2, 3; h_w or the crop_like input's size; offset or centre (center_crop)" },
    { "LinearRegressionOutput", GIR_OP_Identity, R, NULL, "also MAERegressionOutput, MakeLoss; LogisticRegressionOutput -> Sigmoid; labels (and operators only computing them) dropped" },
    { "slice", GIR_OP_Slice, RW, NULL, "begin/end/step with None; written for Slice of several axes or steps" },
    { "slice_like", GIR_OP_Slice, R, NULL, "from 0 to the second input's size (needs its shape)" },
    { "broadcast_greater", GIR_OP_Greater, R, NULL, "also equal, not_equal, greater_equal, lesser, lesser_equal (and _equal ...): the comparison then a Cast to the data's type" },
    { "where", GIR_OP_Where, RW, NULL, "condition cast to bool (a 1-D condition selects rows)" },
    { "broadcast_to", GIR_OP_Expand, RW, NULL, "also broadcast_axis, broadcast_like; 0 keeps a dimension" },
    { "_zeros", GIR_OP_OPAQUE, R, NULL, "also _ones, zeros_like, ones_like, _contrib_MultiBoxPrior: constants once shapes are known" },
    { "_foreach", GIR_OP_OPAQUE, R, NULL, "also _while_loop, _cond, WarpCTC, _contrib_MultiBoxDetection: kept verbatim with the reason, refused by other writers" },
    { "Flatten", GIR_OP_Flatten, RW, NULL, "alias flatten; axis 1" },
    { "Concat", GIR_OP_Concat, RW, mx_concat, "alias concat" },
    { "add_n", GIR_OP_Sum, RW, NULL, "alias ElementWiseSum; num_args = input count" },
    { "Dropout", GIR_OP_Dropout, RW, mx_dropout, NULL },
    { "Reshape", GIR_OP_Reshape, RW, mx_reshape, "alias reshape" },
    { "RNN", GIR_OP_LSTM, RW, mx_rnn,
      "data [T, N, I], parameters (packed, unpacked into per-layer W/R/B in ONNX gate order), state, "
      "state_cell; also GRU and RNN; needs the weights file; written one layer per RNN from constant "
      "weights, with initial states, forward or bidirectional, default activations, Y through "
      "Squeeze or Transpose + Reshape" },
    { "transpose", GIR_OP_Transpose, RW, axes_perm, NULL },
    { "clip", GIR_OP_Clip, RW, clip_map, NULL },
    { "expand_dims", GIR_OP_Unsqueeze, RW, expand_mx, NULL },
    { "squeeze", GIR_OP_Squeeze, RW, squeeze_map, NULL },
    { "SliceChannel", GIR_OP_Split, RW, mx_split, "alias split" },
    { "LRN", GIR_OP_LRN, RW, mx_lrn, NULL },
    { "Pad", GIR_OP_Pad, RW, mx_pad, "4-d and 5-d data" },
    { "slice_axis", GIR_OP_Slice, RW, mx_slice, NULL },
    { "sum", GIR_OP_ReduceSum, RW, reduce_map, "also mean, max, min, prod" },
    { "Cast", GIR_OP_Cast, RW, cast_map, "alias cast" },
    { "elemwise_add", GIR_OP_Add, RW, NULL, "also _plus/_Plus/_add, broadcast_add (written when shapes differ "
                                           "or are unknown); sub, mul, div alike" },
    { "broadcast_power", GIR_OP_Pow, RW, NULL, "also _power" },
    { "broadcast_maximum", GIR_OP_Max, RW, NULL, "also _maximum; broadcast_minimum -> Min" },
    { "_plus_scalar", GIR_OP_Add, RW, mx_scalar, "also _minus/_rminus/_mul/_div/_rdiv/_power/_rpower/"
                                               "_maximum/_minimum_scalar" },
    { "relu", GIR_OP_Relu, RW, NULL, "also sigmoid, tanh, exp, log, sqrt, abs, negative (Neg), floor, ceil, round, "
                                     "reciprocal, sign, erf, sin, cos, softsign" },
    { "_copy", GIR_OP_Identity, RW, NULL, "also identity, BlockGrad, stop_gradient" },
    { "(any other)", GIR_OP_OPAQUE, RW, NULL, "kept verbatim; only the mxnet writer writes it back" },
    { NULL, 0, 0, NULL, NULL },
};

/* ---- NNVM ------------------------------------------------------------------- */

static const gir_attr_map nv_conv[] = {
    { "channels", NULL, "required; the weight's first dimension" },
    { "kernel_size", "kernel_shape", "required; 2-d only" },
    { "strides", "strides", "default (1, 1)" },
    { "padding", "pads", "1, 2 (symmetric) or 4 (top, left, bottom, right) values; written symmetric" },
    { "dilation", "dilations", "default (1, 1)" },
    { "groups", "group", "default 1" },
    { "use_bias", NULL, "input count (default True)" },
    { "layout, kernel_layout, out_layout, out_dtype", NULL, "NCHW, OIHW, __undef__, same only; others keep "
                                                             "the node verbatim" },
    END,
};
static const gir_attr_map nv_dense[] = {
    { "units", NULL, "required; the weight's first dimension" },
    { "use_bias", NULL, "input count" },
    { NULL, "transB", "Gemm(transB=1) when the input is known to be a matrix, else kept verbatim" },
    END,
};
static const gir_attr_map nv_bn[] = {
    { "epsilon", "epsilon", "default 1e-05" },
    { "momentum", "momentum", "default 0.9" },
    { "scale", NULL, "False: gamma ignored (a constant of ones, the variable kept aside)" },
    { "center", NULL, "False: beta ignored (a constant of zeros, the variable kept aside)" },
    { "axis", NULL, "only 1" },
    END,
};
static const gir_attr_map nv_pool[] = {
    { "pool_size", "kernel_shape", "required" },
    { "strides", "strides", "default (1, 1)" },
    { "padding", "pads", "1, 2 or 4 values" },
    { "ceil_mode", "ceil_mode", "default False" },
    { "count_include_pad", "count_include_pad", "avg_pool2d; default False" },
    { "layout", NULL, "NCHW only" },
    END,
};
static const gir_attr_map nv_leaky[] = { { "alpha", "alpha", "default 0.25: written explicitly" }, END };
static const gir_attr_map nv_softmax[] = { { "axis", "axis", "default -1" }, END };
static const gir_attr_map nv_concat[] = { { "axis", "axis", "default 1" }, END };
static const gir_attr_map nv_dropout[] = { { "rate", "ratio", "default 0.5" }, END };
static const gir_attr_map nv_reshape[] = { { "shape", "shape", "special values below -1 keep the node verbatim" },
                                           END };
static const gir_attr_map nv_expand[] = { { "axis", "axes", "non-negative" },
                                          { "num_newaxis", NULL, "consecutive axes" }, END };
static const gir_attr_map nv_split[] = {
    { "indices_or_sections", NULL, "one number: equal sections; a list of indices keeps the node verbatim" },
    { "axis", "axis", "default 1" },
    END,
};
static const gir_attr_map nv_lrn[] = { { "size", "size", NULL }, { "axis", NULL, "1 only" },
                                       { "alpha", "alpha", NULL }, { "beta", "beta", NULL },
                                       { "bias", "bias", NULL }, END };
static const gir_attr_map nv_scalar[] = { { "scalar", NULL, "a rank-0 float constant operand" }, END };

const gir_op_map nn_nnvm_ops[] = {
    { "conv2d", GIR_OP_Conv, RW, nv_conv, "data, weight, [bias]" },
    { "conv2d_transpose", GIR_OP_ConvTranspose, RW, nv_conv, "+ output_padding" },
    { "dense", GIR_OP_Gemm, RW, nv_dense, NULL },
    { "batch_norm", GIR_OP_BatchNormalization, RW, nv_bn, "data, gamma, beta, moving_mean, moving_var" },
    { "leaky_relu", GIR_OP_LeakyRelu, RW, nv_leaky, NULL },
    { "max_pool2d", GIR_OP_MaxPool, RW, nv_pool, NULL },
    { "avg_pool2d", GIR_OP_AveragePool, RW, nv_pool, NULL },
    { "global_max_pool2d", GIR_OP_GlobalMaxPool, RW, NULL, "layout NCHW" },
    { "global_avg_pool2d", GIR_OP_GlobalAveragePool, RW, NULL, "layout NCHW" },
    { "softmax", GIR_OP_Softmax, RW, nv_softmax, NULL },
    { "log_softmax", GIR_OP_LogSoftmax, RW, nv_softmax, NULL },
    { "flatten", GIR_OP_Flatten, RW, NULL, "axis 1" },
    { "concatenate", GIR_OP_Concat, RW, nv_concat, NULL },
    { "elemwise_sum", GIR_OP_Sum, RW, NULL, "num_args = input count" },
    { "dropout", GIR_OP_Dropout, RW, nv_dropout, NULL },
    { "reshape", GIR_OP_Reshape, RW, nv_reshape, NULL },
    { "transpose", GIR_OP_Transpose, RW, axes_perm, NULL },
    { "clip", GIR_OP_Clip, RW, clip_map, NULL },
    { "expand_dims", GIR_OP_Unsqueeze, RW, nv_expand, NULL },
    { "squeeze", GIR_OP_Squeeze, RW, squeeze_map, NULL },
    { "split", GIR_OP_Split, RW, nv_split, NULL },
    { "lrn", GIR_OP_LRN, RW, nv_lrn, NULL },
    { "strided_slice", GIR_OP_Slice, RW, nv_slice, NULL },
    { "sum", GIR_OP_ReduceSum, RW, reduce_map, "also mean, max, min, prod" },
    { "cast", GIR_OP_Cast, RW, cast_map, NULL },
    { "elemwise_add", GIR_OP_Add, RW, NULL, "broadcast_add when shapes differ or are unknown; sub, mul, div, pow "
                                           "alike; broadcast_max/min -> Max/Min" },
    { "__add_scalar__", GIR_OP_Add, RW, nv_scalar, "also __sub/__rsub/__mul/__div/__rdiv/__pow/__rpow_scalar__" },
    { "relu", GIR_OP_Relu, RW, NULL, "also sigmoid, tanh, exp, log, sqrt, abs, negative (Neg), floor, ceil, round" },
    { "copy", GIR_OP_Identity, RW, NULL, "also block_grad" },
    { "(any other)", GIR_OP_OPAQUE, RW, NULL, "kept verbatim; only the nnvm writer writes it back" },
    { NULL, 0, 0, NULL, NULL },
};

/* ---- TVM executor -------------------------------------------------------------- */

static const gir_attr_map tvm_op_attrs[] = {
    { "func_name", "func_name", "kept verbatim (string attributes)" },
    { "num_inputs", "num_inputs", "must equal the input count" },
    { "num_outputs", "num_outputs", "the node's outputs (node_row_ptr)" },
    { "flatten_data", "flatten_data", NULL },
    { "hash, *layout, ...", NULL, "kept verbatim, in file order" },
    { "graph shape/dltype", NULL, "each tensor's shape and type, via node_row_ptr" },
    { "graph storage_id, device_index, storage_scope, dtype", NULL, "kept per tensor (value meta tvm.*); new "
                                                                   "tensors get fresh storage ids" },
    END,
};

const gir_op_map nn_tvm_ops[] = {
    { "tvm_op", GIR_OP_OPAQUE, RW, tvm_op_attrs, "a compiled function call: kept verbatim; canonical operators "
                                                 "cannot be written (they are not compiled)" },
    { NULL, 0, 0, NULL, NULL },
};
