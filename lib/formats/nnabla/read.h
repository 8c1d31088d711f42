/* The NNabla function mapping's context, shared by read_ops.c (helpers,
 * the table, one-to-one maps) and read_ops_layers.c, read_ops_array.c,
 * read_ops_decomp.c (the map functions the table points at).  Internal to
 * lib/formats/nnabla. */
#ifndef GIR_NNABLA_READ_H
#define GIR_NNABLA_READ_H

#include "nnabla.h"

typedef struct mctx {
    nnb_reader *r;
    gir_graph *g;
    const Nnabla__Function *f;
    const char *name;
    const int32_t *in;
    size_t n_in;
    const int32_t *out;
    size_t n_out;
    gir_error *err;
    gir_node *first; /* the node carrying the function's meta */
    const struct fn_map *row; /* the function's row of the table */
} mctx;

/* A row of the function table (fns, read_ops.c): the function's type and map
 * function, and what a map function that serves a family of functions
 * needs to know about this one. */
typedef struct fn_map {
    const char *type;
    gir_status (*fn)(mctx *m, bool *mapped);
    gir_op op;          /* the canonical op (families) */
    int form;           /* scalar_form (*Scalar), arity (logic functions) */
    gir_op special;     /* *Scalar: the op of val special_val; Max/Min with an index: ArgMax/ArgMin */
    double special_val;
} fn_map;

/* A map function: maps the function m describes onto canonical nodes and
 * sets *mapped, or leaves *mapped false (a plain row of nnb_ops maps it
 * then, else it is kept opaque); an error only for what stops the read. */
#define NNBR_MAP_FN(name) gir_status name(mctx *m, bool *mapped)

/* The function's parameter message when it is of the expected case; a
 * proto3 all-default message otherwise (absent means every field zero). */
#define PARAM(m, CASE, member, INIT)                                                            \
    ((m)->f->parameter_case == NNABLA__FUNCTION__PARAMETER_##CASE ? (m)->f->member : &(INIT))

/* The function's parameter message, NULL when it has none. */
const ProtobufCMessage *nnbr_param_msg(const mctx *m);

/* A number, integer or bool field of the function's parameter message as
 * a double; 0 (proto3's default) when the message or the field is absent. */
double nnbr_param_num(const mctx *m, const char *key);
/* The same of an integer or bool field, as an integer. */
int64_t nnbr_param_int(const mctx *m, const char *key);

gir_value *nnbr_val(const mctx *m, int32_t idx);

int nnbr_rank_of(const mctx *m, int32_t idx);

int64_t nnbr_numel_of(const mctx *m, int32_t idx);

/* Adds a node; its meta is filled by the caller for the function's node. */
gir_status nnbr_add_node(mctx *m, const char *name, gir_op op, size_t n_in, size_t n_out, gir_node **out);

/* Runs the op's shape inference; shapes the file declares win. */
gir_status nnbr_infer(mctx *m, gir_node *n);

/* One node with the function's own inputs and outputs. */
gir_status nnbr_simple(mctx *m, gir_op op, gir_node **out);
/* The function is mapped (*mapped set) to one node of op: nnbr_simple. */
gir_status nnbr_map_to(mctx *m, bool *mapped, gir_op op, gir_node **out);
/* The same with the node's one attribute key set to v (an integer, a list
 * of k integers), and its shape inferred. */
gir_status nnbr_map_int(mctx *m, bool *mapped, gir_op op, const char *key, int64_t v);
gir_status nnbr_map_ints(mctx *m, bool *mapped, gir_op op, const char *key, const int64_t *v, size_t k);

gir_status nnbr_set_int(mctx *m, gir_node *n, const char *k, int64_t v);

/* NNabla's arguments are float32: widened through their shortest text, so
 * eps 1e-05 equals the 1e-05 a text or double format gives. */
gir_status nnbr_set_float(mctx *m, gir_node *n, const char *k, double v);

gir_status nnbr_set_ints(mctx *m, gir_node *n, const char *k, const int64_t *v, size_t c);

gir_status nnbr_set_string(mctx *m, gir_node *n, const char *k, const char *v);

gir_status nnbr_meta_int(mctx *m, gir_node *n, const char *k, int64_t v);

/* Whether the function has min_in..max_in inputs and min_out..max_out
 * outputs (a mapping that does not fit leaves the function opaque). */
/* Maps the function to one Slice of k axes (sets *mapped). */
gir_status nnbr_slice(mctx *m, bool *mapped, const int64_t *starts, const int64_t *ends, const int64_t *axes,
                      const int64_t *steps, size_t k);
bool nnbr_arity(const mctx *m, size_t min_in, size_t max_in, size_t min_out, size_t max_out);
/* The rank of a one-input, one-output function's input; -1 when unknown or
 * when the function has other inputs or outputs. */
int nnbr_unary_rank(const mctx *m);

gir_status nnbr_step(mctx *m, const char *suffix, gir_op op, const int32_t *ins, size_t n_in, int32_t out,
                     gir_node **node, int32_t *made);

gir_status nnbr_step2(mctx *m, const char *suffix, gir_op op, int32_t a, int32_t b, int32_t out, int32_t *made);

gir_status nnbr_map_batch_matmul_t(mctx *m, bool *mapped, bool ta, bool tb);

gir_status nnbr_map_arg(mctx *m, bool *mapped, gir_op reduce, gir_op arg, const int64_t *axes, size_t n_axes,
                        bool keep, bool with_index, bool only_index);

/* The same with the node's shape inferred (its attributes set by then). */
gir_status nnbr_step1(mctx *m, const char *suffix, gir_op op, int32_t a, int32_t out, int32_t *made);

/* op(x, scalar v), named as the *Scalar function nnabla writes for it
 * reads back (the constant "<node>/val", the node's nnabla.val) */
gir_status nnbr_step_scalar(mctx *m, const char *suffix, gir_op op, int32_t a, double v, int32_t out,
                            int32_t *made);

/* A unary op nnabla writes as a *Scalar function of v (Neg: MulScalar -1,
 * Sqrt: PowScalar 0.5), with the nnabla.val that function reads back. */
gir_status nnbr_step_val(mctx *m, const char *suffix, gir_op op, int32_t a, double v, int32_t out, int32_t *made);

gir_status nnbr_step_neg(mctx *m, const char *suffix, int32_t a, int32_t out, int32_t *made);

bool nnbr_unary(const mctx *m);

/* Swish: x * sigmoid(x) */
NNBR_MAP_FN(nnbr_map_swish);

/* TanhShrink: x - tanh(x) */
NNBR_MAP_FN(nnbr_map_tanh_shrink);

/* Mish: x * tanh(log(1 + exp(x))) */
NNBR_MAP_FN(nnbr_map_mish);

/* LogSigmoid: log(1 / (1 + exp(-x))) = -softplus(-x) */
NNBR_MAP_FN(nnbr_map_log_sigmoid);

/* GELU as nnabla computes it (the tanh form):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
NNBR_MAP_FN(nnbr_map_gelu);
NNBR_MAP_FN(nnbr_map_crelu);
NNBR_MAP_FN(nnbr_map_celu);
NNBR_MAP_FN(nnbr_map_layer_normalization);
NNBR_MAP_FN(nnbr_map_tensor_normalization);
NNBR_MAP_FN(nnbr_map_instance_normalization);
NNBR_MAP_FN(nnbr_map_group_normalization);

/* Interpolate: Resize of the last len(output_size) axes.  nnabla's source
 * coordinate is scale * dst (align_corners: scale (L - 1) / (L' - 1), else
 * L / L'), or with half_pixel max(0, scale (dst + 0.5) - 0.5), linear
 * between floor and the next cell, nearest the floor; half_pixel_for_nn:
 * floor(L / L' (dst + 0.5)).  Those are ONNX's align_corners, asymmetric,
 * half_pixel and tf_half_pixel_for_nn modes with nearest_mode floor. */
NNBR_MAP_FN(nnbr_map_interpolate);

/* Arange: start + i * step (float32 arithmetic, as nnabla's kernel),
 * ceil((stop - start) / step) values, known when the file is read */
NNBR_MAP_FN(nnbr_map_arange);

/* Constant: shape filled with val */
NNBR_MAP_FN(nnbr_map_constant);

/* OneHot of one index axis: (x[..., 0:1] == 0..n-1) as float */
NNBR_MAP_FN(nnbr_map_one_hot);

/* WeightStandardization: (w - mean) / sqrt(var + eps) over every axis
 * but channel_axis */
NNBR_MAP_FN(nnbr_map_weight_standardization);

/* WeightNormalization: g * w / sqrt(sum(w^2) + eps), the sum over every
 * axis but dim, g (one value per index of dim) reshaped to (1.., C, 1..) */
NNBR_MAP_FN(nnbr_map_weight_normalization);

/* ---- more helpers and map functions (read_ops*.c) -------------------------- */

const ProtobufCFieldDescriptor *nnb_param_field(const Nnabla__Function *f);

/* A float32 scalar constant "<function>/<suffix>" holding v (rounded to
 * float32, out-of-range values to infinity). */
gir_status nnbr_scalar_value(mctx *m, const char *suffix, double v, int32_t *ci);

NNBR_MAP_FN(nnbr_map_slice);
NNBR_MAP_FN(nnbr_map_pad);
NNBR_MAP_FN(nnbr_map_transpose);

/* Reshape: one -1 is inferred in both; nnabla has no "0 copies" rule, so
 * a 0 is a literal zero (allowzero). */
NNBR_MAP_FN(nnbr_map_reshape);
NNBR_MAP_FN(nnbr_map_broadcast);

/* BroadcastTo(x, y, axis): y broadcast to x's shape, y's axes placed from
 * `axis` on (-1: the trailing axes).  Canonically Reshape(y) to x's rank
 * with 1s around, then Expand to x's shape, which must be known. */
NNBR_MAP_FN(nnbr_map_broadcast_to);
NNBR_MAP_FN(nnbr_map_tile);
NNBR_MAP_FN(nnbr_map_gather);

/* nnabla's dropout is inverted (training scales by 1/(1-p)), so inference
 * is the identity, as for ONNX's. */
NNBR_MAP_FN(nnbr_map_dropout);

/* A Cast node "<function>/<suffix>" of value x to the type named `to`,
 * into value out (or, when out < 0, into a new value of the node's name);
 * returns the value written. */
gir_status nnbr_cast_to(mctx *m, const char *suffix, int32_t x, const char *to, int32_t out, int32_t *made);

/* Where(condition, x_true, x_false): nnabla's condition is a float array. */
NNBR_MAP_FN(nnbr_map_where);

/* A plain row of nnb_ops (the engine's reading of it). */
gir_status nnbr_map_plain(mctx *m, bool *mapped, const gir_op_map *pm);

/* The function carries the parameter message of another function. */
bool nnbr_foreign_param(const mctx *m, Nnabla__Function__ParameterCase expected);

bool nnbr_own_weight(const mctx *m, int32_t idx);

gir_status nnbr_view_weight(mctx *m, int32_t idx, const int64_t *dims, int rank);

NNBR_MAP_FN(nnbr_map_convolution);
NNBR_MAP_FN(nnbr_map_deconvolution);

/* DepthwiseConvolution: Conv with one group per input channel, the weight
 * (C * multiplier, K...) viewed as (C * multiplier, 1, K...). */
NNBR_MAP_FN(nnbr_map_depthwise_convolution);

/* DepthwiseDeconvolution with divisor 1: ConvTranspose with one group per
 * channel, the weight (C, K...) viewed as (C, 1, K...). */
NNBR_MAP_FN(nnbr_map_depthwise_deconvolution);
NNBR_MAP_FN(nnbr_map_max_pooling);
NNBR_MAP_FN(nnbr_map_average_pooling);

/* SumPooling: AveragePool with the padding counted, every window whole
 * (floor mode, more end padding for ignore_border=false), times the window
 * size; the writer folds the pair back. */
NNBR_MAP_FN(nnbr_map_sum_pooling);
NNBR_MAP_FN(nnbr_map_global_average_pooling);
NNBR_MAP_FN(nnbr_map_unpooling);
NNBR_MAP_FN(nnbr_map_embed);


/* ---- map functions of read_ops_layers.c (activations) ---------------------- */

NNBR_MAP_FN(nnbr_map_softplus);
NNBR_MAP_FN(nnbr_map_hard_sigmoid);
NNBR_MAP_FN(nnbr_map_hard_tanh);
NNBR_MAP_FN(nnbr_map_relu6);
NNBR_MAP_FN(nnbr_map_prelu);
NNBR_MAP_FN(nnbr_map_sign);

#endif
