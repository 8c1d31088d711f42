/* Canonical nodes an MXNet/NNVM operator stands for together with the node
 * that reads them: the writer absorbs the producer and writes one operator
 * (a Flatten into FullyConnected(flatten=True), the Unsqueeze of PRelu's
 * slope, the Cast to bool of where's condition, ArgMax with the Cast to
 * the flavour's index type).  Each predicate returns the absorbed node's
 * index, or -1. */
#include "ops.h"

#include <stdlib.h>
#include <string.h>

/* The node making input k of n, when nothing else reads that value and it
 * is not a graph output (so it can vanish into n), else -1. */
static int32_t sole_producer(const nn_writer *w, const gir_node *n, size_t k)
{
    if (k >= n->n_in || n->in[k] < 0 || w->uses[n->in[k]] != 1)
        return -1;
    const gir_value *v = w->g->values[n->in[k]];
    if (v->producer < 0)
        return -1;
    for (size_t i = 0; i < w->g->n_outputs; i++)
        if (w->g->outputs[i] == n->in[k])
            return -1;
    return v->producer;
}

/* The Flatten(axis=1) feeding a Gemm that stands for FullyConnected's
 * flatten=True: marked by the reader, or named "<gemm>_flatten". */
int32_t nn_fc_flatten_of(const nn_writer *w, const gir_node *gemm)
{
    if (gemm->op != GIR_OP_Gemm || gemm->n_in < 2)
        return -1;
    int32_t p = sole_producer(w, gemm, 0);
    if (p < 0)
        return -1;
    const gir_node *fl = w->g->nodes[p];
    if (fl->op != GIR_OP_Flatten || gir_node_int(fl, "axis", 1) != 1 || fl->n_in != 1 || fl->in[0] < 0 ||
        fl->n_out != 1)
        return -1;
    char *want = gir_strdupf("%s_flatten", gemm->name);
    bool named = want && strcmp(want, fl->name) == 0;
    free(want);
    if (!named && !gir_attrs_get_string(&fl->meta, NN_META_FC_FLATTEN, NULL))
        return -1;
    return p;
}

/* The Unsqueeze giving PRelu's per-channel slope its trailing unit axes
 * (as the readers make it), folded into LeakyReLU prelu / prelu. */
int32_t nn_prelu_slope_of(const nn_writer *w, const gir_node *n)
{
    if (n->op != GIR_OP_PRelu || n->n_in != 2 || n->in[0] < 0)
        return -1;
    int32_t p = sole_producer(w, n, 1);
    if (p < 0)
        return -1;
    const gir_node *u = w->g->nodes[p];
    const int64_t *ax;
    ptrdiff_t k = u->op == GIR_OP_Unsqueeze ? gir_attrs_get_ints(&u->attrs, "axes", &ax) : -1;
    const gir_value *x = w->g->values[n->in[0]], *g = u->n_in == 1 && u->in[0] >= 0 ? w->g->values[u->in[0]] : NULL;
    if (k < 1 || x->shape.rank != k + 2 || !g || g->shape.rank != 1)
        return -1;
    for (ptrdiff_t i = 0; i < k; i++)
        if (ax[i] != i + 1)
            return -1;
    return p;
}

/* The Cast to bool a Where's condition is made by (as the MXNet reader
 * makes it from a numeric condition), folded into where. */
int32_t nn_where_cast_of(const nn_writer *w, const gir_node *n)
{
    if (n->op != GIR_OP_Where || n->n_in != 3)
        return -1;
    int32_t p = sole_producer(w, n, 0);
    if (p < 0)
        return -1;
    const gir_node *c = w->g->nodes[p];
    if (c->op != GIR_OP_Cast || strcmp(gir_node_string(c, "to", ""), "bool") != 0 || c->n_in != 1 || c->in[0] < 0)
        return -1;
    return p;
}

/* The ArgMax/ArgMin whose indices only Cast n reads, converting them to the
 * flavour's index type: argmax/argmin give float32 indices in MXNet, int32
 * in NNVM. */
int32_t nn_argmax_of(const nn_writer *w, const gir_node *n)
{
    if (n->op != GIR_OP_Cast || n->n_in != 1)
        return -1;
    if (gir_dtype_from_name(gir_node_string(n, "to", "")) != (w->fl == NN_MXNET ? GIR_DT_F32 : GIR_DT_I32))
        return -1;
    int32_t p = sole_producer(w, n, 0);
    if (p < 0)
        return -1;
    const gir_node *a = w->g->nodes[p];
    if ((a->op != GIR_OP_ArgMax && a->op != GIR_OP_ArgMin) || a->n_in < 1 || a->in[0] < 0)
        return -1;
    return p;
}
