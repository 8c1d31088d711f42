/* Legalization patterns (each defined in a pat_*.c file, listed in
 * patterns.c) and the small helpers they share. */
#ifndef GIR_PATTERNS_H
#define GIR_PATTERNS_H

#include "legalize.h"

/* pat_act.c: activations */
extern const gir_pattern gir_pat_hardsigmoid_clip;
extern const gir_pattern gir_pat_clip_one_bound;
extern const gir_pattern gir_pat_clip_max_min;
/* pat_fold.c: constant folding of a node's operands (any op) */
extern const gir_pattern gir_pat_fold_constants;
/* pat_linalg.c: matrix products */
extern const gir_pattern gir_pat_gemm_plain;
extern const gir_pattern gir_pat_matmul_gemm;
extern const gir_pattern gir_pat_gemm_transb;
/* pat_unary.c: elementwise activations in arithmetic */
extern const gir_pattern gir_pat_selu_elu;
extern const gir_pattern gir_pat_elu_exp;
extern const gir_pattern gir_pat_softplus_exp;
extern const gir_pattern gir_pat_softsign_div;
extern const gir_pattern gir_pat_reciprocal_div;
extern const gir_pattern gir_pat_prelu_leaky;
extern const gir_pattern gir_pat_prelu_relu;
/* pat_reduce.c: spatial reductions <-> global pooling */
extern const gir_pattern gir_pat_reducemean_global;
extern const gir_pattern gir_pat_reducemax_global;
extern const gir_pattern gir_pat_globalavg_reduce;
extern const gir_pattern gir_pat_globalmax_reduce;
/* pat_nary.c: variadic Sum/Max/Min/Mean as binary chains */
extern const gir_pattern gir_pat_sum_chain;
extern const gir_pattern gir_pat_max_chain;
extern const gir_pattern gir_pat_min_chain;
extern const gir_pattern gir_pat_mean_chain;
/* pat_split.c: Split as Slices */
extern const gir_pattern gir_pat_split_slices;
/* pat_logic.c: boolean logic in float arithmetic */
extern const gir_pattern gir_pat_and_arith;
extern const gir_pattern gir_pat_or_arith;
extern const gir_pattern gir_pat_xor_arith;
extern const gir_pattern gir_pat_not_arith;
extern const gir_pattern gir_pat_equal_bool_arith;
/* pat_reshape.c: Flatten/Squeeze/Unsqueeze as Reshape */
extern const gir_pattern gir_pat_flatten_reshape;
extern const gir_pattern gir_pat_squeeze_reshape;
extern const gir_pattern gir_pat_unsqueeze_reshape;
/* pat_print.c: Print for targets without print */
extern const gir_pattern gir_pat_print_output;
/* pat_conv.c: Gemm as a 1x1 convolution */
extern const gir_pattern gir_pat_gemm_conv;
extern const gir_pattern gir_pat_gemm_bias_add;
/* pat_broadcast.c: broadcasting made explicit */
extern const gir_pattern gir_pat_broadcast_resize;
extern const gir_pattern gir_pat_expand_resize;
/* pat_norm.c: BatchNormalization's epsilon */
extern const gir_pattern gir_pat_bn_epsilon_min;
/* pat_rnn.c: recurrent layers unrolled */
extern const gir_pattern gir_pat_lstm_unroll;
extern const gir_pattern gir_pat_gru_unroll;
extern const gir_pattern gir_pat_rnn_unroll;
/* pat_arith.c: elementwise operators in others; Softmax's axis moved last */
extern const gir_pattern gir_pat_abs_max;
extern const gir_pattern gir_pat_softmax_last;
extern const gir_pattern gir_pat_logsoftmax_last;
/* pat_pool.c: reductions over any axes as global pooling */
extern const gir_pattern gir_pat_reducemean_pool;
extern const gir_pattern gir_pat_reducemax_pool;

/* pat_pad.c: padding merged into and split out of convolutions and pools,
 * ceil-mode pooling as end padding */
extern const gir_pattern gir_pat_pad_merge;
extern const gir_pattern gir_pat_conv_pads_split;
extern const gir_pattern gir_pat_maxpool_pads_split;
extern const gir_pattern gir_pat_avgpool_pads_split;
extern const gir_pattern gir_pat_maxpool_ceil_pads;
extern const gir_pattern gir_pat_avgpool_ceil_pads;
/* pat_math.c: Erf as a float32 rational function; Sqrt as Pow */
extern const gir_pattern gir_pat_erf_rational;
extern const gir_pattern gir_pat_sqrt_pow;
/* pat_window.c: LRN as a convolution over channels; ReduceProd as Slices multiplied */
extern const gir_pattern gir_pat_lrn_conv;
extern const gir_pattern gir_pat_reduceprod_mul;
/* pat_window.c: ArgMax/ArgMin with indices of the target's type */
extern const gir_pattern gir_pat_argmax_f32;
extern const gir_pattern gir_pat_argmax_i32;
extern const gir_pattern gir_pat_argmin_f32;
extern const gir_pattern gir_pat_argmin_i32;

/* Defines the pattern gir_pat_<var> (declared above): its name, the op it
 * rewrites, its note and its apply function (gir_pattern). */
#define GIR_PATTERN(var, name, op, note, apply) const gir_pattern gir_pat_##var = { name, op, note, apply }

/* ---- helpers (pat_util.c) ------------------------------------------------- */

/* Fails with GIR_E_UNSUPPORTED: the pattern does not apply, and why. */
gir_status gir_pat_skip(gir_error *err, const char *fmt, ...) GIR_PRINTF(2, 3);
/* The value read by input i of n, or NULL. */
const gir_value *gir_pat_in(const gir_rw *rw, const gir_node *n, size_t i);
/* A floating dtype the pattern can make constants of (float32/64), else
 * GIR_E_UNSUPPORTED naming the dtype. */
gir_status gir_pat_float_dtype(const gir_value *v, gir_error *err);
/* Input 0 of n when it is a float tensor (gir_pat_float_dtype), else a skip. */
gir_status gir_pat_float_in(const gir_rw *rw, const gir_node *n, const gir_value **x, gir_error *err);
/* Input 0 of a windowed op n (N, C, then spatial axes) when it is a float
 * tensor (gir_pat_float_dtype) of known rank 3 or more, else a skip. */
gir_status gir_pat_spatial_in(const gir_rw *rw, const gir_node *n, const gir_value **x, gir_error *err);
/* The float32 data of constant v, or NULL (not a constant, not float32). */
const float *gir_pat_const_f32(const gir_value *v);
/* Whether every element of v is >= 0 or NaN, as far as its producers
 * show (a constant's values; operators that give no negative number from
 * such inputs); strict: and no zero is -0. */
bool gir_pat_non_negative(const gir_graph *g, int32_t v, bool strict);
/* Which of a reduction's rank axes it reduces (its axes attribute; every
 * axis without one); GIR_E_UNSUPPORTED for an axis out of range. */
gir_status gir_pat_reduced_axes(const gir_node *n, int rank, bool red[GIR_MAX_RANK], gir_error *err);
/* op(x, k) for a new rank-0 constant k of dtype dt holding v. */
gir_status gir_pat_binary_k(gir_rw *rw, gir_op op, int32_t x, gir_dtype dt, double v, int32_t *out, gir_error *err);

#endif
