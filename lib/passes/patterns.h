/* Legalization patterns (each defined in a pat_*.c file, listed in
 * patterns.c) and the small helpers they share. */
#ifndef GIR_PATTERNS_H
#define GIR_PATTERNS_H

#include "legalize.h"

/* pat_act.c: activations */
extern const gir_pattern gir_pat_hardsigmoid_clip;
extern const gir_pattern gir_pat_clip_one_bound;
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

/* pat_pad.c: padding merged into and split out of convolutions and pools,
 * ceil-mode pooling as end padding */
extern const gir_pattern gir_pat_pad_merge;
extern const gir_pattern gir_pat_conv_pads_split;
extern const gir_pattern gir_pat_maxpool_pads_split;
extern const gir_pattern gir_pat_avgpool_pads_split;
extern const gir_pattern gir_pat_maxpool_ceil_pads;
extern const gir_pattern gir_pat_avgpool_ceil_pads;

/* ---- helpers (pat_util.c) ------------------------------------------------- */

/* Fails with GIR_E_UNSUPPORTED: the pattern does not apply, and why. */
gir_status gir_pat_skip(gir_error *err, const char *fmt, ...) GIR_PRINTF(2, 3);
/* The value read by input i of n, or NULL. */
const gir_value *gir_pat_in(const gir_rw *rw, const gir_node *n, size_t i);
/* A floating dtype the pattern can make constants of (float32/64), else
 * GIR_E_UNSUPPORTED naming the dtype. */
gir_status gir_pat_float_dtype(const gir_value *v, gir_error *err);

#endif
