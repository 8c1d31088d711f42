/* Recurrent layers (LSTM, GRU, RNN) unrolled over their steps into
 * elementary operators, for targets without them (nnabla, NNVM, RelayViz,
 * LightNet).  The unrolling itself is unroll_rnn.c's: the nodes it adds go
 * into the edit like any rewrite's, in topological order at commit. */
#include "patterns.h"

#include <stdlib.h>

#include "unroll_rnn.h"

static gir_status rnn_unroll(gir_rw *rw, const gir_node *n, gir_error *err)
{
    if (n->op != GIR_OP_LSTM && n->op != GIR_OP_GRU && n->op != GIR_OP_RNN)
        return gir_pat_skip(err, "not a recurrent layer");
    /* the node is rewritten in place (it becomes the last Concat), so the
     * edit keeps it; what it adds is placed and sorted by gir_edit_commit */
    gir_node *m = rw->g->nodes[rw->node];
    char *name = gir_strdupf("%s_Concat", m->name);
    if (!name)
        return gir_nomem(err);
    gir_status st = gir_rnn_unroll(rw->g, m, err);
    if (st == GIR_E_UNSUPPORTED) {
        free(name);
        return gir_pat_skip(err, "%s", err && err->message ? err->message : "cannot be unrolled");
    }
    /* named as a node a rewrite makes: the recurrent node is gone */
    const char *fresh = st ? NULL : gir_graph_unique_node_name(rw->g, name, err);
    free(name);
    if (!st && !fresh)
        return GIR_E_NOMEM;
    return st ? st : gir_graph_rename(rw->g, true, rw->node, fresh, err);
}

GIR_PATTERN(lstm_unroll, "lstm-unrolled", GIR_OP_LSTM, "LSTM unrolled over its steps (Gemm, activations, Mul/Add, Concat)", rnn_unroll);
GIR_PATTERN(gru_unroll, "gru-unrolled", GIR_OP_GRU, "GRU unrolled over its steps (Gemm, activations, Mul/Add, Concat)", rnn_unroll);
GIR_PATTERN(rnn_unroll, "rnn-unrolled", GIR_OP_RNN, "RNN unrolled over its steps (Gemm, activation, Add, Concat)", rnn_unroll);
