/* Unrolling the recurrent operators (LSTM, GRU, RNN) into elementary ones
 * (unroll_rnn.c), for targets that have no recurrent operator. */
#ifndef GIR_PASSES_UNROLL_RNN_H
#define GIR_PASSES_UNROLL_RNN_H

#include "core/ir.h"

/* Replaces recurrent node n by Split/Squeeze, Gemm, Add/Sub/Mul, the
 * activations (and Clip), Unsqueeze and Concat nodes computing the same
 * outputs (same values, so consumers and graph outputs are untouched); n
 * itself becomes the last Concat.  GIR_E_UNSUPPORTED (nothing changed)
 * when the sequence length is unknown, W/R/B/P are not constants,
 * sequence_lens is not a constant equal to the sequence length, or there
 * is no initial state and the batch size is unknown.  Call
 * gir_graph_finish afterwards (gir_rnn_unroll_all does). */
gir_status gir_rnn_unroll(gir_graph *g, gir_node *n, gir_error *err);
/* Unrolls every recurrent node of g; *count (may be NULL) gets how many. */
gir_status gir_rnn_unroll_all(gir_graph *g, size_t *count, gir_error *err);

#endif
