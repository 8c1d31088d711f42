/* The operator tables of the NNVM family: the rows the reader looks up
 * by name (sorted bytewise), the spellings the writer picks from, and what
 * `graphconv ops --format F` lists (the per-operator code is in read_ops*.c
 * and write_ops.c). */
#include "ops.h"

#define RW (GIR_MAP_READ | GIR_MAP_WRITE)
#define R GIR_MAP_READ
#define PREFER GIR_MAP_PREFER
#define END { NULL, NULL, NULL }
/* A composite row: the reader's function, output count (0: from the
 * attributes), input range and attribute keys (nn_rdef). */
#define RD(fn, outs, lo, hi, keys) 0, 0, &(const nn_rdef){ fn, outs, lo, hi, keys }

/* The attribute keys each reader understands (an unknown one keeps the
 * node verbatim). */
static const char *const k_conv_mx[] = { "kernel",   "stride",     "dilate",    "pad",    "num_filter",
                                         "num_group", "workspace", "no_bias",   "cudnn_tune", "cudnn_off",
                                         "layout",   NULL };
static const char *const k_deconv_mx[] = { "kernel",    "stride",  "dilate",     "pad",       "adj",
                                           "target_shape", "num_filter", "num_group", "workspace", "no_bias",
                                           "cudnn_tune", "cudnn_off", "layout", NULL };
static const char *const k_fc[] = { "num_hidden", "no_bias", "flatten", NULL };
static const char *const k_bn_mx[] = { "eps",      "momentum",       "fix_gamma", "use_global_stats",
                                       "output_mean_var", "axis", "cudnn_off", NULL };
static const char *const k_act[] = { "act_type", NULL };
static const char *const k_leaky[] = { "act_type", "slope", "lower_bound", "upper_bound", NULL };
static const char *const k_pool_mx[] = { "kernel", "pool_type", "global_pool", "cudnn_off", "pooling_convention",
                                         "stride", "pad",       "p_value",     "count_include_pad", "layout", NULL };
static const char *const k_softmax_out[] = { "grad_scale",     "ignore_label",  "multi_output", "use_ignore",
                                             "preserve_shape", "normalization", "out_grad",     "smooth_alpha",
                                             NULL };
static const char *const k_softmax_mx[] = { "axis", "temperature", "dtype", "use_length", NULL };
static const char *const k_softmax_act[] = { "mode", NULL };
static const char *const k_concat_mx[] = { "num_args", "dim", NULL };
static const char *const k_num_args[] = { "num_args", NULL };
static const char *const k_dropout_mx[] = { "p", "mode", "axes", "cudnn_off", NULL };
static const char *const k_reshape_mx[] = { "shape", "reverse", "target_shape", "keep_highest", NULL };
static const char *const k_axes[] = { "axes", NULL };
static const char *const k_clip[] = { "a_min", "a_max", NULL };
static const char *const k_pad_mx[] = { "mode", "pad_width", "constant_value", NULL };
static const char *const k_axis[] = { "axis", NULL };
static const char *const k_split_mx[] = { "num_outputs", "axis", "squeeze_axis", NULL };
static const char *const k_lrn_mx[] = { "alpha", "beta", "knorm", "nsize", NULL };
static const char *const k_reduce[] = { "axis", "keepdims", "exclude", NULL };
static const char *const k_cast[] = { "dtype", NULL };
static const char *const k_scalar_mx[] = { "scalar", "is_int", NULL };
static const char *const k_scalar[] = { "scalar", NULL };
static const char *const k_strided_slice[] = { "begin", "end", "stride", NULL };
static const char *const k_slice_axis[] = { "axis", "begin", "end", NULL };

static const char *const k_crop[] = { "num_args", "offset", "h_w", "center_crop", NULL };
static const char *const k_grad_scale[] = { "grad_scale", NULL };
static const char *const k_make_loss[] = { "grad_scale", "valid_thresh", "normalization", NULL };
static const char *const k_upsampling[] = { "scale", "num_filter", "sample_type", "multi_input_mode", "num_args",
                                            "workspace", NULL };
static const char *const k_multibox_prior[] = { "sizes", "ratios", "clip", "steps", "offsets", NULL };
static const char *const k_fill[] = { "shape", "dtype", "ctx", NULL };
static const char *const k_bcast_axis[] = { "axis", "size", NULL };
static const char *const k_bcast_like[] = { "lhs_axes", "rhs_axes", NULL };
static const char *const k_mx_slice[] = { "begin", "end", "step", NULL };

static const char *const k_conv_nnvm[] = { "channels", "kernel_size", "strides",   "padding",   "dilation",
                                           "groups",   "layout",      "kernel_layout", "out_layout", "out_dtype",
                                           "use_bias", NULL };
static const char *const k_deconv_nnvm[] = { "channels", "kernel_size", "strides",       "padding",
                                             "output_padding", "dilation", "groups", "layout", "kernel_layout",
                                             "out_dtype", "use_bias", NULL };
static const char *const k_dense[] = { "units", "use_bias", NULL };
static const char *const k_bn_nnvm[] = { "axis", "epsilon", "momentum", "center", "scale", NULL };
static const char *const k_pool_nnvm[] = { "pool_size", "strides", "padding", "layout", "ceil_mode",
                                           "count_include_pad", NULL };
static const char *const k_layout[] = { "layout", NULL };
static const char *const k_concat_nnvm[] = { "axis", NULL };
static const char *const k_rate[] = { "rate", NULL };
static const char *const k_shape[] = { "shape", NULL };
static const char *const k_expand_nnvm[] = { "axis", "num_newaxis", NULL };
static const char *const k_split_nnvm[] = { "indices_or_sections", "axis", NULL };
static const char *const k_upsampling_nnvm[] = { "scale", "layout", "method", NULL };
static const char *const k_lrn_nnvm[] = { "size", "axis", "alpha", "beta", "bias", NULL };
static const char *const k_argmax_mx[] = { "axis", "keepdims", NULL };
static const char *const k_argmax_nnvm[] = { "axis", "keepdims", "exclude", "dtype", NULL };

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

/* Activation stands for five canonical ops: one row each, one reading. */
static const nn_rdef activation = { nn_rd_activation, 1, 1, 1, k_act };

const gir_op_map nn_mxnet_ops[] = {
    { "Activation", GIR_OP_Relu, RW | PREFER, mx_act, "act_type relu", 0, 0, &activation },
    { "Activation", GIR_OP_Sigmoid, RW | PREFER, NULL, "act_type sigmoid", 0, 0, &activation },
    { "Activation", GIR_OP_Tanh, RW | PREFER, NULL, "act_type tanh", 0, 0, &activation },
    { "Activation", GIR_OP_Softplus, RW | PREFER, NULL, "act_type softrelu", 0, 0, &activation },
    { "Activation", GIR_OP_Softsign, RW | PREFER, NULL, "act_type softsign", 0, 0, &activation },
    { "BatchNorm", GIR_OP_BatchNormalization, RW, mx_bn, "data, gamma, beta, moving_mean, moving_var (aux:); MXNet < 0.9 files get <name>_moving_mean/var", RD(nn_rd_bn, 3, 3, 5, k_bn_mx) },
    { "BlockGrad", GIR_OP_Identity, RW, NULL, NULL, RW, 1 },
    { "Cast", GIR_OP_Cast, RW | PREFER, cast_map, NULL, RD(nn_rd_cast, 1, 1, 1, k_cast) },
    { "Concat", GIR_OP_Concat, RW | PREFER, mx_concat, NULL, RD(nn_rd_variadic, 1, 1, GIR_VARIADIC, k_concat_mx) },
    { "Convolution", GIR_OP_Conv, RW, mx_conv, "data, weight, [bias]", RD(nn_rd_mx_conv, 1, 2, 3, k_conv_mx) },
    { "Crop", GIR_OP_Slice, R, NULL, "axes 2, 3; h_w or the crop_like input's size; offset or centre (center_crop)", RD(nn_rd_crop, 1, 1, 2, k_crop) },
    { "Deconvolution", GIR_OP_ConvTranspose, RW, mx_deconv, "weight [in, out/group, k...]", RD(nn_rd_mx_conv, 1, 2, 3, k_deconv_mx) },
    { "Dropout", GIR_OP_Dropout, RW, mx_dropout, NULL, RD(nn_rd_dropout, 2, 1, 1, k_dropout_mx) },
    { "ElementWiseSum", GIR_OP_Sum, RW, NULL, NULL, RD(nn_rd_variadic, 1, 1, GIR_VARIADIC, k_num_args) },
    { "Flatten", GIR_OP_Flatten, RW | PREFER, NULL, "axis 1", RD(nn_rd_flatten, 1, 1, 1, NULL) },
    { "FullyConnected", GIR_OP_Gemm, RW, mx_fc, "data, weight, [bias]", RD(nn_rd_fc, 1, 2, 3, k_fc) },
    { "LRN", GIR_OP_LRN, RW, mx_lrn, NULL, RD(nn_rd_lrn, 1, 1, 1, k_lrn_mx) },
    { "LeakyReLU", GIR_OP_LeakyRelu, RW, mx_leaky, "act_type leaky, elu, selu, prelu, gelu, rrelu", RD(nn_rd_leaky, 0, 1, 2, k_leaky) },
    { "LinearRegressionOutput", GIR_OP_Identity, R, NULL, "labels (and operators only computing them) dropped", RD(nn_rd_output_layer, 1, 1, 2, k_grad_scale) },
    { "LogisticRegressionOutput", GIR_OP_Sigmoid, R, NULL, NULL, RD(nn_rd_output_layer, 1, 1, 2, k_grad_scale) },
    { "MAERegressionOutput", GIR_OP_Identity, R, NULL, NULL, RD(nn_rd_output_layer, 1, 1, 2, k_grad_scale) },
    { "MakeLoss", GIR_OP_Identity, R, NULL, NULL, RD(nn_rd_output_layer, 1, 1, 1, k_make_loss) },
    { "Pad", GIR_OP_Pad, RW, mx_pad, "4-d and 5-d data", RD(nn_rd_mx_pad, 1, 1, 1, k_pad_mx) },
    { "Pooling", GIR_OP_MaxPool, RW, mx_pool, "pool_type max; avg -> AveragePool, global_pool -> GlobalMaxPool / GlobalAveragePool; the extra workspace output of MKLDNN builds is ignored", RD(nn_rd_mx_pool, 1, 1, 1, k_pool_mx) },
    { "RNN", GIR_OP_LSTM, RW, mx_rnn, "data [T, N, I], parameters (packed, unpacked into per-layer W/R/B in ONNX gate order), state, state_cell; also GRU and RNN; needs the weights file; written one layer per RNN from constant weights, with initial states, forward or bidirectional, default activations, Y through Squeeze or Transpose + Reshape", RD(nn_rd_mx_rnn, 0, 3, 5, nn_k_rnn_mx) },
    { "Reshape", GIR_OP_Reshape, RW | PREFER, mx_reshape, NULL, RD(nn_rd_reshape, 1, 1, 1, k_reshape_mx) },
    { "SliceChannel", GIR_OP_Split, RW | PREFER, mx_split, NULL, RD(nn_rd_split, 0, 1, 1, k_split_mx) },
    { "Softmax", GIR_OP_Softmax, RW, mx_softmax_out, NULL, RD(nn_rd_softmax_output, 1, 1, 2, k_softmax_out) },
    { "SoftmaxActivation", GIR_OP_Softmax, R, NULL, "mode=channel: axis 1; instance: axis 1 of a matrix, else Flatten, Softmax, Reshape (needs the shape)", RD(nn_rd_softmax_act, 1, 1, 1, k_softmax_act) },
    { "SoftmaxOutput", GIR_OP_Softmax, RW, mx_softmax_out, NULL, RD(nn_rd_softmax_output, 1, 1, 2, k_softmax_out) },
    { "UpSampling", GIR_OP_Resize, RW, NULL, "nearest: Resize (asymmetric, floor; several inputs each to the first's size, then Concat or Sum); bilinear: ConvTranspose with the weight, kernel 2s-s%2, stride s, pad s/2, group num_filter; written back from Resize (nearest, whole scale)", RD(nn_rd_upsampling, 1, 1, GIR_VARIADIC, k_upsampling) },
    { "WarpCTC", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_refused, 1, 0, GIR_VARIADIC, NULL) },
    { "_Div", GIR_OP_Div, RW, NULL, NULL, R, 2 },
    { "_Minus", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "_Mul", GIR_OP_Mul, RW, NULL, NULL, R, 2 },
    { "_Plus", GIR_OP_Add, RW, NULL, NULL, R, 2 },
    { "_add", GIR_OP_Add, RW, NULL, NULL, R, 2 },
    { "_cond", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_refused, 0, 0, GIR_VARIADIC, NULL) },
    { "_contrib_MultiBoxDetection", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_refused, 1, 0, GIR_VARIADIC, NULL) },
    { "_contrib_MultiBoxPrior", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_multibox_prior, 1, 1, 1, k_multibox_prior) },
    { "_copy", GIR_OP_Identity, RW | PREFER, NULL, NULL, RW, 1 },
    { "_div", GIR_OP_Div, RW, NULL, NULL, R, 2 },
    { "_div_scalar", GIR_OP_Div, RW, mx_scalar, "x / scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_equal", GIR_OP_Equal, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "_foreach", GIR_OP_OPAQUE, R, NULL, "kept verbatim with the reason, refused by other writers", RD(nn_rd_refused, 0, 0, GIR_VARIADIC, NULL) },
    { "_greater", GIR_OP_Greater, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "_greater_equal", GIR_OP_GreaterOrEqual, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "_lesser", GIR_OP_Less, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "_lesser_equal", GIR_OP_LessOrEqual, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "_maximum", GIR_OP_Max, RW, NULL, NULL, R, 2 },
    { "_maximum_scalar", GIR_OP_Max, RW, mx_scalar, "max(x, scalar)", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_minimum", GIR_OP_Min, RW, NULL, NULL, R, 2 },
    { "_minimum_scalar", GIR_OP_Min, RW, mx_scalar, "min(x, scalar)", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_minus", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "_minus_scalar", GIR_OP_Sub, RW, mx_scalar, "x - scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_mul", GIR_OP_Mul, RW, NULL, NULL, R, 2 },
    { "_mul_scalar", GIR_OP_Mul, RW, mx_scalar, "x * scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_not_equal", GIR_OP_Equal, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "_ones", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_fill, 1, 0, 0, k_fill) },
    { "_plus", GIR_OP_Add, RW, NULL, NULL, R, 2 },
    { "_plus_scalar", GIR_OP_Add, RW, mx_scalar, "x + scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_power", GIR_OP_Pow, RW, NULL, NULL, R, 2 },
    { "_power_scalar", GIR_OP_Pow, RW, mx_scalar, "x ^ scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_rdiv_scalar", GIR_OP_Div, RW, mx_scalar, "scalar / x", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_rminus_scalar", GIR_OP_Sub, RW, mx_scalar, "scalar - x", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_rpower_scalar", GIR_OP_Pow, RW, mx_scalar, "scalar ^ x", RD(nn_rd_scalar, 1, 1, 1, k_scalar_mx) },
    { "_sub", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "_while_loop", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_refused, 0, 0, GIR_VARIADIC, NULL) },
    { "_zeros", GIR_OP_OPAQUE, R, NULL, "a constant once shapes are known", RD(nn_rd_fill, 1, 0, 0, k_fill) },
    { "abs", GIR_OP_Abs, RW, NULL, NULL, RW, 1 },
    { "add_n", GIR_OP_Sum, RW | PREFER, NULL, "num_args = input count", RD(nn_rd_variadic, 1, 1, GIR_VARIADIC, k_num_args) },
    { "argmax", GIR_OP_ArgMax, RW, NULL, "one axis, keepdims; ArgMax then Cast to float32 (MXNet's indices are float32); written from that pair", RD(nn_rd_argmax, 1, 1, 1, k_argmax_mx) },
    { "argmin", GIR_OP_ArgMin, RW, NULL, NULL, RD(nn_rd_argmax, 1, 1, 1, k_argmax_mx) },
    { "broadcast_add", GIR_OP_Add, RW, NULL, NULL, R, 2 },
    { "broadcast_axes", GIR_OP_Expand, R, NULL, NULL, RD(nn_rd_bcast_to, 1, 1, 1, k_bcast_axis) },
    { "broadcast_axis", GIR_OP_Expand, R, NULL, NULL, RD(nn_rd_bcast_to, 1, 1, 1, k_bcast_axis) },
    { "broadcast_div", GIR_OP_Div, RW, NULL, NULL, R, 2 },
    { "broadcast_equal", GIR_OP_Equal, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "broadcast_greater", GIR_OP_Greater, R, NULL, "the comparison then a Cast to the data's type", RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "broadcast_greater_equal", GIR_OP_GreaterOrEqual, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "broadcast_lesser", GIR_OP_Less, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "broadcast_lesser_equal", GIR_OP_LessOrEqual, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "broadcast_like", GIR_OP_Expand, R, NULL, NULL, RD(nn_rd_bcast_to, 1, 2, 2, k_bcast_like) },
    { "broadcast_maximum", GIR_OP_Max, RW, NULL, NULL, R, 2 },
    { "broadcast_minimum", GIR_OP_Min, RW, NULL, NULL, R, 2 },
    { "broadcast_minus", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "broadcast_mul", GIR_OP_Mul, RW, NULL, NULL, R, 2 },
    { "broadcast_not_equal", GIR_OP_Equal, R, NULL, NULL, RD(nn_rd_compare, 1, 2, 2, NULL) },
    { "broadcast_plus", GIR_OP_Add, RW, NULL, NULL, R, 2 },
    { "broadcast_power", GIR_OP_Pow, RW, NULL, NULL, R, 2 },
    { "broadcast_sub", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "broadcast_to", GIR_OP_Expand, RW, NULL, "0 keeps a dimension", RD(nn_rd_bcast_to, 1, 1, 1, k_shape) },
    { "cast", GIR_OP_Cast, RW, NULL, NULL, RD(nn_rd_cast, 1, 1, 1, k_cast) },
    { "ceil", GIR_OP_Ceil, RW, NULL, NULL, RW, 1 },
    { "clip", GIR_OP_Clip, RW, clip_map, NULL, RD(nn_rd_clip, 1, 1, 1, k_clip) },
    { "concat", GIR_OP_Concat, RW, NULL, NULL, RD(nn_rd_variadic, 1, 1, GIR_VARIADIC, k_concat_mx) },
    { "cos", GIR_OP_Cos, RW, NULL, NULL, RW, 1 },
    { "elemwise_add", GIR_OP_Add, RW, NULL, "broadcast_add is written when shapes differ or are unknown; sub, mul, div alike", R, 2 },
    { "elemwise_div", GIR_OP_Div, RW, NULL, NULL, R, 2 },
    { "elemwise_mul", GIR_OP_Mul, RW, NULL, NULL, R, 2 },
    { "elemwise_sub", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "erf", GIR_OP_Erf, RW, NULL, NULL, RW, 1 },
    { "exp", GIR_OP_Exp, RW, NULL, NULL, RW, 1 },
    { "expand_dims", GIR_OP_Unsqueeze, RW, expand_mx, NULL, RD(nn_rd_expand_dims, 1, 1, 1, k_axis) },
    { "flatten", GIR_OP_Flatten, RW, NULL, NULL, RD(nn_rd_flatten, 1, 1, 1, NULL) },
    { "floor", GIR_OP_Floor, RW, NULL, NULL, RW, 1 },
    { "identity", GIR_OP_Identity, RW, NULL, NULL, RW, 1 },
    { "log", GIR_OP_Log, RW, NULL, NULL, RW, 1 },
    { "log_softmax", GIR_OP_LogSoftmax, RW, mx_softmax, NULL, RD(nn_rd_softmax, 1, 1, 2, k_softmax_mx) },
    { "max", GIR_OP_ReduceMax, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "mean", GIR_OP_ReduceMean, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "min", GIR_OP_ReduceMin, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "negative", GIR_OP_Neg, RW, NULL, NULL, RW, 1 },
    { "ones_like", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_fill, 1, 1, 1, NULL) },
    { "prod", GIR_OP_ReduceProd, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "reciprocal", GIR_OP_Reciprocal, RW, NULL, NULL, RW, 1 },
    { "relu", GIR_OP_Relu, RW, NULL, "written when the source had it (else Activation)", RW, 1 },
    { "reshape", GIR_OP_Reshape, RW, NULL, NULL, RD(nn_rd_reshape, 1, 1, 1, k_reshape_mx) },
    { "round", GIR_OP_Round, RW, NULL, NULL, RW, 1 },
    { "sigmoid", GIR_OP_Sigmoid, RW, NULL, NULL, RW, 1 },
    { "sign", GIR_OP_Sign, RW, NULL, NULL, RW, 1 },
    { "sin", GIR_OP_Sin, RW, NULL, NULL, RW, 1 },
    { "slice", GIR_OP_Slice, RW, NULL, "begin/end/step with None; written for Slice of several axes or steps", RD(nn_rd_mx_slice, 1, 1, 1, k_mx_slice) },
    { "slice_axis", GIR_OP_Slice, RW, mx_slice, NULL, RD(nn_rd_slice_axis, 1, 1, 1, k_slice_axis) },
    { "slice_like", GIR_OP_Slice, R, NULL, "from 0 to the second input's size (needs its shape)", RD(nn_rd_slice_like, 1, 2, 2, k_axes) },
    { "softmax", GIR_OP_Softmax, RW, mx_softmax, NULL, RD(nn_rd_softmax, 1, 1, 2, k_softmax_mx) },
    { "softsign", GIR_OP_Softsign, RW, NULL, NULL, RW, 1 },
    { "split", GIR_OP_Split, RW, NULL, NULL, RD(nn_rd_split, 0, 1, 1, k_split_mx) },
    { "sqrt", GIR_OP_Sqrt, RW, NULL, NULL, RW, 1 },
    { "squeeze", GIR_OP_Squeeze, RW, squeeze_map, NULL, RD(nn_rd_axes_list, 1, 1, 1, k_axis) },
    { "stop_gradient", GIR_OP_Identity, RW, NULL, NULL, RW, 1 },
    { "sum", GIR_OP_ReduceSum, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "tanh", GIR_OP_Tanh, RW, NULL, NULL, RW, 1 },
    { "transpose", GIR_OP_Transpose, RW, axes_perm, NULL, RD(nn_rd_axes_list, 1, 1, 1, k_axes) },
    { "where", GIR_OP_Where, RW, NULL, "condition cast to bool (a 1-D condition selects rows)", RD(nn_rd_where, 1, 3, 3, NULL) },
    { "zeros_like", GIR_OP_OPAQUE, R, NULL, NULL, RD(nn_rd_fill, 1, 1, 1, NULL) },
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
static const gir_attr_map nv_leaky[] = {
    { "alpha", "alpha", "NNVM's default 0.25 when absent; left out when 0.25", GIR_CONV_FLOAT, 0.25 }, END
};
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
    { "__add_scalar__", GIR_OP_Add, RW, nv_scalar, "x + scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "__div_scalar__", GIR_OP_Div, RW, nv_scalar, "x / scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "__mul_scalar__", GIR_OP_Mul, RW, nv_scalar, "x * scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "__pow_scalar__", GIR_OP_Pow, RW, nv_scalar, "x ^ scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "__rdiv_scalar__", GIR_OP_Div, RW, nv_scalar, "scalar / x", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "__rpow_scalar__", GIR_OP_Pow, RW, nv_scalar, "scalar ^ x", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "__rsub_scalar__", GIR_OP_Sub, RW, nv_scalar, "scalar - x", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "__sub_scalar__", GIR_OP_Sub, RW, nv_scalar, "x - scalar", RD(nn_rd_scalar, 1, 1, 1, k_scalar) },
    { "abs", GIR_OP_Abs, RW, NULL, NULL, RW, 1 },
    { "argmax", GIR_OP_ArgMax, RW, NULL, "one axis, keepdims, dtype (int32): ArgMax then Cast to dtype; written from ArgMax then Cast to int32", RD(nn_rd_argmax, 1, 1, 1, k_argmax_nnvm) },
    { "argmin", GIR_OP_ArgMin, RW, NULL, NULL, RD(nn_rd_argmax, 1, 1, 1, k_argmax_nnvm) },
    { "avg_pool2d", GIR_OP_AveragePool, RW, nv_pool, NULL, RD(nn_rd_nnvm_pool, 1, 1, 1, k_pool_nnvm) },
    { "batch_norm", GIR_OP_BatchNormalization, RW, nv_bn, "data, gamma, beta, moving_mean, moving_var", RD(nn_rd_bn, 3, 5, 5, k_bn_nnvm) },
    { "block_grad", GIR_OP_Identity, RW, NULL, NULL, RW, 1 },
    { "broadcast_add", GIR_OP_Add, RW, NULL, NULL, R, 2 },
    { "broadcast_div", GIR_OP_Div, RW, NULL, NULL, R, 2 },
    { "broadcast_max", GIR_OP_Max, RW, NULL, NULL, R, 2 },
    { "broadcast_min", GIR_OP_Min, RW, NULL, NULL, R, 2 },
    { "broadcast_mul", GIR_OP_Mul, RW, NULL, NULL, R, 2 },
    { "broadcast_pow", GIR_OP_Pow, RW, NULL, NULL, R, 2 },
    { "broadcast_sub", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "broadcast_to", GIR_OP_Expand, RW, NULL, NULL, RD(nn_rd_bcast_to, 1, 1, 1, k_shape) },
    { "cast", GIR_OP_Cast, RW, cast_map, NULL, RD(nn_rd_cast, 1, 1, 1, k_cast) },
    { "ceil", GIR_OP_Ceil, RW, NULL, NULL, RW, 1 },
    { "clip", GIR_OP_Clip, RW, clip_map, NULL, RD(nn_rd_clip, 1, 1, 1, k_clip) },
    { "concatenate", GIR_OP_Concat, RW, nv_concat, NULL, RD(nn_rd_variadic, 1, 1, GIR_VARIADIC, k_concat_nnvm) },
    { "conv2d", GIR_OP_Conv, RW, nv_conv, "data, weight, [bias]", RD(nn_rd_nnvm_conv, 1, 2, 3, k_conv_nnvm) },
    { "conv2d_transpose", GIR_OP_ConvTranspose, RW, nv_conv, "+ output_padding", RD(nn_rd_nnvm_conv, 1, 2, 3, k_deconv_nnvm) },
    { "copy", GIR_OP_Identity, RW | PREFER, NULL, NULL, RW, 1 },
    { "dense", GIR_OP_Gemm, RW, nv_dense, NULL, RD(nn_rd_dense, 1, 2, 3, k_dense) },
    { "dropout", GIR_OP_Dropout, RW, nv_dropout, NULL, RD(nn_rd_dropout, 2, 1, 1, k_rate) },
    { "elemwise_add", GIR_OP_Add, RW, NULL, "broadcast_add when shapes differ or are unknown; sub, mul, div, pow alike; broadcast_max/min -> Max/Min", R, 2 },
    { "elemwise_div", GIR_OP_Div, RW, NULL, NULL, R, 2 },
    { "elemwise_mul", GIR_OP_Mul, RW, NULL, NULL, R, 2 },
    { "elemwise_pow", GIR_OP_Pow, RW, NULL, NULL, R, 2 },
    { "elemwise_sub", GIR_OP_Sub, RW, NULL, NULL, R, 2 },
    { "elemwise_sum", GIR_OP_Sum, RW, NULL, "num_args = input count", RD(nn_rd_variadic, 1, 1, GIR_VARIADIC, k_num_args) },
    { "exp", GIR_OP_Exp, RW, NULL, NULL, RW, 1 },
    { "expand_dims", GIR_OP_Unsqueeze, RW, nv_expand, NULL, RD(nn_rd_expand_dims, 1, 1, 1, k_expand_nnvm) },
    { "flatten", GIR_OP_Flatten, RW, NULL, "axis 1", RD(nn_rd_flatten, 1, 1, 1, NULL) },
    { "floor", GIR_OP_Floor, RW, NULL, NULL, RW, 1 },
    { "global_avg_pool2d", GIR_OP_GlobalAveragePool, RW, NULL, "layout NCHW", RD(nn_rd_nnvm_pool, 1, 1, 1, k_layout) },
    { "global_max_pool2d", GIR_OP_GlobalMaxPool, RW, NULL, "layout NCHW", RD(nn_rd_nnvm_pool, 1, 1, 1, k_layout) },
    { "leaky_relu", GIR_OP_LeakyRelu, RW, nv_leaky, NULL, RW, 1 },
    { "log", GIR_OP_Log, RW, NULL, NULL, RW, 1 },
    { "log_softmax", GIR_OP_LogSoftmax, RW, nv_softmax, NULL, RD(nn_rd_softmax, 1, 1, 1, k_axis) },
    { "lrn", GIR_OP_LRN, RW, nv_lrn, NULL, RD(nn_rd_lrn, 1, 1, 1, k_lrn_nnvm) },
    { "max", GIR_OP_ReduceMax, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "max_pool2d", GIR_OP_MaxPool, RW, nv_pool, NULL, RD(nn_rd_nnvm_pool, 1, 1, 1, k_pool_nnvm) },
    { "mean", GIR_OP_ReduceMean, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "min", GIR_OP_ReduceMin, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "negative", GIR_OP_Neg, RW, NULL, NULL, RW, 1 },
    { "prelu", GIR_OP_PRelu, RW, NULL, NULL, RD(nn_rd_prelu_nnvm, 1, 2, 2, k_axis) },
    { "prod", GIR_OP_ReduceProd, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "relu", GIR_OP_Relu, RW, NULL, NULL, RW, 1 },
    { "reshape", GIR_OP_Reshape, RW, nv_reshape, NULL, RD(nn_rd_reshape, 1, 1, 1, k_shape) },
    { "round", GIR_OP_Round, RW, NULL, NULL, RW, 1 },
    { "sigmoid", GIR_OP_Sigmoid, RW, NULL, NULL, RW, 1 },
    { "softmax", GIR_OP_Softmax, RW, nv_softmax, NULL, RD(nn_rd_softmax, 1, 1, 1, k_axis) },
    { "split", GIR_OP_Split, RW, nv_split, NULL, RD(nn_rd_split, 0, 1, 1, k_split_nnvm) },
    { "sqrt", GIR_OP_Sqrt, RW, NULL, NULL, RW, 1 },
    { "squeeze", GIR_OP_Squeeze, RW, squeeze_map, NULL, RD(nn_rd_axes_list, 1, 1, 1, k_axis) },
    { "strided_slice", GIR_OP_Slice, RW, nv_slice, NULL, RD(nn_rd_strided_slice, 1, 1, 1, k_strided_slice) },
    { "sum", GIR_OP_ReduceSum, RW, reduce_map, NULL, RD(nn_rd_reduce, 1, 1, 1, k_reduce) },
    { "tanh", GIR_OP_Tanh, RW, NULL, NULL, RW, 1 },
    { "transpose", GIR_OP_Transpose, RW, axes_perm, NULL, RD(nn_rd_axes_list, 1, 1, 1, k_axes) },
    { "upsampling", GIR_OP_Resize, RW, NULL, NULL, RD(nn_rd_upsampling_nnvm, 1, 1, 1, k_upsampling_nnvm) },
    { "(any other)", GIR_OP_OPAQUE, RW, NULL, "kept verbatim; only the nnvm writer writes it back" },
    { NULL, 0, 0, NULL, NULL },
};

const size_t nn_mxnet_op_rows = sizeof nn_mxnet_ops / sizeof *nn_mxnet_ops - 2;
const size_t nn_nnvm_op_rows = sizeof nn_nnvm_ops / sizeof *nn_nnvm_ops - 2;

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
