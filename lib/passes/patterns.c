/* The registry of legalization patterns (see legalize.h).  A pattern is
 * written once in canonical operators, in a pat_*.c file, and listed here
 * once; the order is the order they are tried for a node (the first that
 * makes the target refuse less wins). */
#include "legalize.h"

#include "patterns.h"

static const gir_pattern *const registry[] = {
    &gir_pat_fold_constants,
    &gir_pat_hardsigmoid_clip,
    &gir_pat_clip_one_bound,
    &gir_pat_gemm_plain,
    &gir_pat_matmul_gemm,
    &gir_pat_gemm_transb,
    &gir_pat_selu_elu,
    &gir_pat_elu_exp,
    &gir_pat_softplus_exp,
    &gir_pat_softsign_div,
    &gir_pat_reciprocal_div,
    &gir_pat_prelu_leaky,
    &gir_pat_prelu_relu,
    &gir_pat_reducemean_global,
    &gir_pat_reducemax_global,
    &gir_pat_globalavg_reduce,
    &gir_pat_globalmax_reduce,
    &gir_pat_sum_chain,
    &gir_pat_max_chain,
    &gir_pat_min_chain,
    &gir_pat_mean_chain,
    &gir_pat_split_slices,
    &gir_pat_and_arith,
    &gir_pat_or_arith,
    &gir_pat_xor_arith,
    &gir_pat_not_arith,
    &gir_pat_equal_bool_arith,
    &gir_pat_flatten_reshape,
    &gir_pat_squeeze_reshape,
    &gir_pat_unsqueeze_reshape,
    &gir_pat_pad_merge,
    &gir_pat_maxpool_ceil_pads,
    &gir_pat_avgpool_ceil_pads,
    &gir_pat_conv_pads_split,
    &gir_pat_maxpool_pads_split,
    &gir_pat_avgpool_pads_split,
    &gir_pat_print_output,
    &gir_pat_gemm_conv,
    &gir_pat_broadcast_resize,
    &gir_pat_clip_max_min,
    &gir_pat_bn_epsilon_min,
    &gir_pat_lstm_unroll,
    &gir_pat_gru_unroll,
    &gir_pat_rnn_unroll,
    &gir_pat_gemm_bias_add,
    &gir_pat_abs_max,
    &gir_pat_expand_resize,
    &gir_pat_softmax_last,
    &gir_pat_logsoftmax_last,
    &gir_pat_reducemean_pool,
    &gir_pat_reducemax_pool,
    &gir_pat_erf_rational,
    &gir_pat_sqrt_pow,
    &gir_pat_lrn_conv,
    &gir_pat_reduceprod_mul,
    NULL /* sentinel: patterns are listed above this line */
};

const gir_pattern *gir_pattern_at(size_t i)
{
    return i < gir_pattern_count() ? registry[i] : NULL;
}

size_t gir_pattern_count(void)
{
    return sizeof registry / sizeof *registry - 1;
}
