/* The ONNX operator mapping as `graphconv ops --format onnx` lists it. */
#include "onnx.h"

#define V(a) { a, a, NULL }
#define N(a, note) { a, a, note }
#define END { NULL, NULL, NULL }
#define RW (GIR_MAP_READ | GIR_MAP_WRITE)

static const gir_attr_map a_alpha[] = { V("alpha"), END };
static const gir_attr_map a_selu[] = { V("alpha"), V("gamma"), END };
static const gir_attr_map a_hsig[] = { V("alpha"), V("beta"), END };
static const gir_attr_map a_clip[] = {
    N("min", "input 1 from opset 11 (a constant of the input's type), attribute before; absent: no bound"),
    N("max", "input 2 from opset 11, attribute before"), END
};
static const gir_attr_map a_cast[] = { N("to", "TensorProto data type code; type names before opset 6"), END };
static const gir_attr_map a_mod[] = { V("fmod"), END };
static const gir_attr_map a_bcast[] = {
    { "broadcast", NULL, "before opset 7: 1 with axis aligns B at axis; a constant B is reshaped with trailing "
                         "ones, otherwise kept opaque" },
    { "axis", NULL, "before opset 7 only" }, END
};
static const gir_attr_map a_conv[] = {
    N("auto_pad", "SAME_UPPER/SAME_LOWER/VALID become explicit pads when the input size is known"),
    N("dilations", "written explicitly (default ones)"), V("group"),
    N("kernel_shape", "taken from the weight when absent"), N("pads", "all begins then all ends; default zeros"),
    N("strides", "default ones"), END
};
static const gir_attr_map a_convt[] = {
    N("auto_pad", "kept as it is"), N("dilations", "written explicitly"), V("group"),
    N("kernel_shape", "taken from the weight when absent"), V("output_padding"), V("output_shape"),
    N("pads", "all begins then all ends"), N("strides", "default ones"), END
};
static const gir_attr_map a_gemm[] = { V("alpha"), V("beta"), V("transA"), V("transB"),
                                       { "broadcast", NULL, "before opset 7: dropped" }, END };
static const gir_attr_map a_bn[] = {
    V("epsilon"), V("momentum"),
    { "spatial", NULL, "before opset 9: 1 dropped, 0 kept opaque" },
    { "is_test", NULL, "before opset 7: 1 dropped, 0 (training) kept opaque" },
    { "training_mode", NULL, "opset 14+: 0 dropped, 1 kept opaque; extra outputs kept opaque" }, END
};
static const gir_attr_map a_eps[] = { V("epsilon"), END };
static const gir_attr_map a_lrn[] = { V("alpha"), V("beta"), V("bias"), V("size"), END };
static const gir_attr_map a_maxpool[] = {
    N("auto_pad", "SAME_*/VALID become explicit pads when the input size is known"),
    N("ceil_mode", "opset 10+; 0 is left out before"), N("dilations", "opset 10+; ones are left out before"),
    V("kernel_shape"), N("pads", "all begins then all ends"), N("storage_order", "opset 8+"), V("strides"), END
};
static const gir_attr_map a_avgpool[] = {
    N("auto_pad", "SAME_*/VALID become explicit pads when the input size is known"),
    N("ceil_mode", "opset 10+"), N("count_include_pad", "opset 7+"), V("kernel_shape"),
    N("pads", "all begins then all ends"), V("strides"), END
};
static const gir_attr_map a_softmax[] = {
    N("axis", "before opset 13 the axes from 'axis' on are flattened: mapped when those after it have size 1 "
              "(otherwise kept opaque / refused)"), END
};
static const gir_attr_map a_dropout[] = {
    N("ratio", "input 1 from opset 12, attribute before"), N("seed", "opset 12+; left out before"),
    { "training_mode", NULL, "input 2 (opset 12+): a constant false is dropped, anything else kept opaque" },
    { "is_test", NULL, "before opset 7: 1 dropped, 0 kept opaque" }, END
};
static const gir_attr_map a_reducesum[] = {
    N("axes", "input 1 from opset 13, attribute before; an empty list means all axes"), V("keepdims"),
    N("noop_with_empty_axes", "opset 13+"), END
};
static const gir_attr_map a_reduce[] = {
    N("axes", "input 1 from opset 18, attribute before"), V("keepdims"),
    { "noop_with_empty_axes", NULL, "opset 18+: 1 without axes kept opaque, otherwise dropped" }, END
};
static const gir_attr_map a_arg[] = { V("axis"), V("keepdims"), N("select_last_index", "opset 12+"), END };
static const gir_attr_map a_reshape[] = {
    N("shape", "input 1 (a constant; attribute before opset 5)"),
    { "allowzero", NULL, "opset 14+: dropped unless 1 with a zero in the shape (kept opaque)" }, END
};
static const gir_attr_map a_axis[] = { V("axis"), END };
static const gir_attr_map a_perm[] = { V("perm"), END };
static const gir_attr_map a_axes[] = { N("axes", "input 1 from opset 13, attribute before"), END };
static const gir_attr_map a_split[] = {
    V("axis"), N("split", "input 1 from opset 13, attribute before"),
    { "num_outputs", NULL, "opset 18: becomes split when the parts are unequal; written at 18 without split" }, END
};
static const gir_attr_map a_slice[] = {
    N("starts", "input 1 from opset 10, attribute before"), N("ends", "input 2 from opset 10"),
    N("axes", "input 3 from opset 10"), N("steps", "input 4 from opset 10; only ones before"), END
};
static const gir_attr_map a_pad[] = {
    V("mode"), N("pads", "input 1 from opset 11; 'paddings' at opset 1"),
    { "value", "constant_value", "input 2 from opset 11 (input's type), attribute 'value' before" },
    { "axes", NULL, "input 3 (opset 18): expanded into full pads when the rank is known" }, END
};
static const gir_attr_map a_tile[] = { N("repeats", "input 1 (a constant)"), END };
static const gir_attr_map a_expand[] = { N("shape", "input 1 (a constant)"), END };
static const gir_attr_map a_resize[] = {
    V("mode"), N("coordinate_transformation_mode", "opset 11+; before: asymmetric only"),
    N("nearest_mode", "opset 11+; before: floor only"), V("cubic_coeff_a"), V("exclude_outside"),
    V("extrapolation_value"), N("roi", "input 1 (opset 11+)"), N("scales", "input 2 (input 1 at opset 10)"),
    N("sizes", "input 3 (opset 11+)"),
    { "antialias", NULL, "opset 18: 0 dropped, 1 kept opaque" },
    { "keep_aspect_ratio_policy", NULL, "opset 18: stretch dropped, others kept opaque" }, END
};
static const gir_attr_map a_upsample[] = {
    { "mode", "mode", "nearest, linear (bilinear): asymmetric coordinates, nearest rounds down" },
    { "scales", "scales", "attribute at opset 7, input 1 at opset 9" }, END
};
static const gir_attr_map a_d2s[] = { V("blocksize"), N("mode", "opset 11+; DCR before"), END };
static const gir_attr_map a_s2d[] = { V("blocksize"), END };
static const gir_attr_map a_shape[] = { { "start", NULL, "opset 15: non-default start/end kept opaque" },
                                        { "end", NULL, NULL }, END };
static const gir_attr_map a_constant[] = {
    { "value", NULL, "a constant value (also value_float, value_int, value_floats, value_ints)" },
    { "value_string(s)", NULL, "kept as an opaque node" }, END
};

#define RNN_ATTRS V("activation_alpha"), V("activation_beta"), V("activations"), V("clip"), V("direction"), \
    N("hidden_size", "taken from R when absent"), N("layout", "opset 14+; 0 is left out before"),           \
    { "output_sequence", NULL, "before opset 7: dropped on reading (Y is there when named); written 1 when Y is used" }
static const gir_attr_map a_lstm[] = { RNN_ATTRS, V("input_forget"), END };
static const gir_attr_map a_gru[] = { RNN_ATTRS, N("linear_before_reset", "opset 3+; 0 is left out before"), END };
static const gir_attr_map a_rnn[] = { RNN_ATTRS, END };

#define OP(name, attrs, note) { #name, GIR_OP_##name, RW, attrs, note }

const gir_op_map onnx_ops[] = {
    OP(Identity, NULL, NULL),
    OP(Relu, NULL, NULL),
    OP(Sigmoid, NULL, NULL),
    OP(Tanh, NULL, NULL),
    OP(LeakyRelu, a_alpha, NULL),
    OP(Elu, a_alpha, NULL),
    OP(Selu, a_selu, NULL),
    OP(HardSigmoid, a_hsig, NULL),
    OP(Softplus, NULL, NULL),
    OP(Softsign, NULL, NULL),
    OP(PRelu, NULL, NULL),
    OP(Clip, a_clip, "non-constant min/max: kept opaque"),
    OP(Exp, NULL, NULL),
    OP(Log, NULL, NULL),
    OP(Sqrt, NULL, NULL),
    OP(Abs, NULL, NULL),
    OP(Neg, NULL, NULL),
    OP(Floor, NULL, NULL),
    OP(Ceil, NULL, NULL),
    OP(Round, NULL, "opset 11+"),
    OP(Reciprocal, NULL, NULL),
    OP(Sign, NULL, "opset 9+"),
    OP(Erf, NULL, "opset 9+"),
    OP(Sin, NULL, "opset 7+"),
    OP(Cos, NULL, "opset 7+"),
    OP(Not, NULL, NULL),
    OP(Cast, a_cast, NULL),
    OP(Add, a_bcast, NULL),
    OP(Sub, a_bcast, NULL),
    OP(Mul, a_bcast, NULL),
    OP(Div, a_bcast, NULL),
    OP(Pow, a_bcast, NULL),
    OP(Mod, a_mod, "opset 10+"),
    OP(Max, NULL, NULL),
    OP(Min, NULL, NULL),
    OP(Sum, NULL, NULL),
    OP(Mean, NULL, NULL),
    OP(Equal, a_bcast, NULL),
    OP(Greater, a_bcast, NULL),
    OP(Less, a_bcast, NULL),
    OP(GreaterOrEqual, NULL, "opset 12+"),
    OP(LessOrEqual, NULL, "opset 12+"),
    OP(And, a_bcast, NULL),
    OP(Or, a_bcast, NULL),
    OP(Xor, a_bcast, NULL),
    OP(Where, NULL, "opset 9+"),
    OP(Conv, a_conv, NULL),
    OP(ConvTranspose, a_convt, NULL),
    OP(Gemm, a_gemm, "without C: opset 11+"),
    OP(MatMul, NULL, NULL),
    OP(BatchNormalization, a_bn, "inference form: one output"),
    OP(InstanceNormalization, a_eps, NULL),
    OP(LRN, a_lrn, NULL),
    OP(MaxPool, a_maxpool, NULL),
    OP(AveragePool, a_avgpool, NULL),
    OP(GlobalMaxPool, NULL, NULL),
    OP(GlobalAveragePool, NULL, NULL),
    OP(Softmax, a_softmax, NULL),
    OP(LogSoftmax, a_softmax, NULL),
    OP(Dropout, a_dropout, NULL),
    OP(ReduceSum, a_reducesum, NULL),
    OP(ReduceMean, a_reduce, NULL),
    OP(ReduceMax, a_reduce, NULL),
    OP(ReduceMin, a_reduce, NULL),
    OP(ReduceProd, a_reduce, NULL),
    OP(ArgMax, a_arg, NULL),
    OP(ArgMin, a_arg, NULL),
    OP(Reshape, a_reshape, "non-constant shape: kept opaque"),
    OP(Flatten, a_axis, NULL),
    OP(Transpose, a_perm, NULL),
    OP(Squeeze, a_axes, NULL),
    OP(Unsqueeze, a_axes, NULL),
    OP(Concat, a_axis, "axis defaults to 1 before opset 4"),
    OP(Split, a_split, NULL),
    OP(Slice, a_slice, "non-constant operands: kept opaque"),
    OP(Pad, a_pad, NULL),
    OP(Tile, a_tile, "opset 6+"),
    OP(Expand, a_expand, "opset 8+"),
    OP(Gather, a_axis, NULL),
    OP(Resize, a_resize, "opset 10+; written as Upsample at opsets 7-9"),
    { "Upsample", GIR_OP_Resize, GIR_MAP_READ, a_upsample, "opsets 7-9 (deprecated at 10: kept opaque)" },
    OP(DepthToSpace, a_d2s, NULL),
    OP(SpaceToDepth, a_s2d, NULL),
    OP(Shape, a_shape, NULL),
    OP(LSTM, a_lstm, NULL),
    OP(GRU, a_gru, NULL),
    OP(RNN, a_rnn, NULL),
    { "Constant", GIR_OP_OPAQUE, RW, a_constant, "becomes a constant value; written back as a Constant node" },
    { "(any other operator)", GIR_OP_OPAQUE, RW, NULL,
      "kept verbatim (attributes, subgraphs); written back only at the opset it was read at" },
    { NULL, GIR_OP_OPAQUE, 0, NULL, NULL },
};
