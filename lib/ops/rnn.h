/* The recurrent operators LSTM, GRU and RNN (ONNX semantics): one reading
 * of their attributes shared by shape inference, the runtime kernel, the
 * unrolling rewrite and the format mappings.
 *
 * Shapes (layout 0; layout 1 swaps the sequence and batch axes of X and Y
 * and puts batch first in the states):
 *   X [seq, batch, input]      W [dirs, gates*hidden, input]
 *   R [dirs, gates*hidden, hidden]   B [dirs, 2*gates*hidden] (W then R bias)
 *   sequence_lens [batch] int32      initial_h, initial_c [dirs, batch, hidden]
 *   P [dirs, 3*hidden] (LSTM peepholes i, o, f)
 *   Y [seq, dirs, batch, hidden]     Y_h, Y_c [dirs, batch, hidden]
 * Gate order in W, R and B: LSTM i, o, f, c; GRU z, r, h; RNN one gate. */
#ifndef GIR_OPS_RNN_H
#define GIR_OPS_RNN_H

#include "ops.h"

#include <math.h>

typedef enum gir_rnn_act {
    GIR_RNN_RELU = 0,
    GIR_RNN_TANH,
    GIR_RNN_SIGMOID,
    GIR_RNN_AFFINE,
    GIR_RNN_LEAKYRELU,
    GIR_RNN_THRESHOLDEDRELU,
    GIR_RNN_SCALEDTANH,
    GIR_RNN_HARDSIGMOID,
    GIR_RNN_ELU,
    GIR_RNN_SOFTSIGN,
    GIR_RNN_SOFTPLUS,
    GIR_RNN_ACT_COUNT_
} gir_rnn_act;

/* One activation with its parameters (defaults filled in). */
typedef struct gir_rnn_fn {
    gir_rnn_act act;
    float alpha, beta;
} gir_rnn_fn;

enum { GIR_RNN_FORWARD = 0, GIR_RNN_REVERSE, GIR_RNN_BIDIRECTIONAL };

typedef struct gir_rnn_desc {
    gir_op op;
    int gates;      /* 4 LSTM, 3 GRU, 1 RNN */
    int n_fn;       /* activations per direction: 3 LSTM, 2 GRU, 1 RNN */
    int direction;  /* GIR_RNN_FORWARD, ... */
    int dirs;       /* 1 or 2 */
    int64_t hidden;
    int layout;     /* 0 or 1 */
    bool linear_before_reset; /* GRU */
    bool input_forget;        /* LSTM */
    bool has_clip;
    float clip;
    bool default_fns;         /* no activations attribute (or the defaults spelled out) */
    gir_rnn_fn fn[2][3];      /* per direction */
} gir_rnn_desc;

/* The ONNX name of an activation ("Tanh"). */
const char *gir_rnn_act_name(gir_rnn_act a);
/* Index of an activation name (case-insensitive), or -1. */
int gir_rnn_act_from_name(const char *name);
/* Whether an activation takes alpha / beta (and their defaults). */
bool gir_rnn_act_has_alpha(gir_rnn_act a, float *dflt);
bool gir_rnn_act_has_beta(gir_rnn_act a, float *dflt);

/* Reads and checks a canonical LSTM/GRU/RNN node's attributes: known
 * activation names, their count (one set, shared by both directions, or
 * one per direction), alpha/beta consumed in order by the activations that
 * take them (no values left over), clip > 0.  Errors name the node's op
 * and attribute (callers add the node). */
gir_status gir_rnn_desc_read(const gir_node *n, gir_rnn_desc *d, gir_error *err);

/* Applies one activation (float, as the runtime computes). */
static inline float gir_rnn_apply(const gir_rnn_fn *f, float x)
{
    switch (f->act) {
    case GIR_RNN_RELU: return x > 0.0f ? x : 0.0f;
    case GIR_RNN_TANH: return tanhf(x);
    case GIR_RNN_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case GIR_RNN_AFFINE: return f->alpha * x + f->beta;
    case GIR_RNN_LEAKYRELU: return x >= 0.0f ? x : f->alpha * x;
    case GIR_RNN_THRESHOLDEDRELU: return x > f->alpha ? x : 0.0f;
    case GIR_RNN_SCALEDTANH: return f->alpha * tanhf(f->beta * x);
    case GIR_RNN_HARDSIGMOID: {
        float y = f->alpha * x + f->beta;
        return y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y;
    }
    case GIR_RNN_ELU: return x >= 0.0f ? x : f->alpha * (expf(x) - 1.0f);
    case GIR_RNN_SOFTSIGN: return x / (1.0f + fabsf(x));
    case GIR_RNN_SOFTPLUS: return log1pf(expf(x));
    case GIR_RNN_ACT_COUNT_: break;
    }
    return x;
}

#endif
