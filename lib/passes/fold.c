/* Constant folding on the reference runtime (see fold.h). */
#include "fold.h"

#include <stdlib.h>
#include <string.h>

#include "graphir/runtime.h"
#include "passes.h"
#include "runtime/rt.h"

/* A value the graph holds as data: a weight or constant, not produced. */
static bool is_const(const gir_value *v)
{
    return v && v->producer < 0 && v->data && (v->kind == GIR_VALUE_CONST || v->kind == GIR_VALUE_WEIGHT);
}

static bool is_graph_input(const gir_graph *g, int32_t v)
{
    for (size_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == v)
            return true;
    return false;
}

/* Whether n can be evaluated now: a canonical op with a kernel and no
 * side effect, every input a constant (graph inputs that carry data are
 * defaults a caller may override: not constant).  Shape needs only a
 * known input shape. */
static bool foldable(const gir_graph *g, const gir_node *n, bool *by_shape)
{
    *by_shape = false;
    if (n->op == GIR_OP_OPAQUE || !gir_rt_kernel(n->op) || strcmp(gir_op_get(n->op)->category, "side-effect") == 0 ||
        strcmp(gir_op_get(n->op)->category, "generator") == 0)
        return false;
    if (n->op == GIR_OP_Shape) {
        const gir_value *x = gir_in(g, n, 0);
        if (x && x->shape.rank >= 0 && gir_shape_is_known(&x->shape)) {
            *by_shape = true;
            return true;
        }
    }
    if (n->n_in == 0)
        return false;
    for (size_t k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0)
            continue;
        if (!is_const(g->values[n->in[k]]) || is_graph_input(g, n->in[k]))
            return false;
    }
    return true;
}

/* Runs node n alone on its constant inputs; outs[k] are new references. */
static gir_status evaluate(const gir_graph *g, const gir_node *n, gir_tensor **outs, gir_error *err)
{
    gir_graph *m;
    TRY(gir_graph_new(&m, err));
    gir_node *c = NULL;
    gir_status st = gir_graph_add_node(m, n->name, n->op, n->n_in, n->n_out, &c, err);
    for (size_t k = 0; !st && k < n->n_in; k++) {
        const gir_value *v = gir_in(g, n, k);
        if (!v)
            continue;
        int32_t idx = gir_graph_value_index(m, v->name);
        if (idx < 0)
            st = gir_graph_add_const(m, v->name, v->data, &idx, err);
        c->in[k] = idx;
    }
    for (size_t k = 0; !st && k < n->n_out; k++) {
        const gir_value *v = gir_out(g, n, k);
        char *name = gir_strdupf("%s#%zu", n->name, k);
        if (!name) {
            st = gir_nomem(err);
            break;
        }
        st = gir_node_make_output(m, c, k, name, err);
        if (!st && v)
            st = gir_graph_add_output(m, c->out[k], err);
        free(name);
    }
    if (!st)
        st = gir_attrs_copy(m, &c->attrs, &n->attrs, err);
    if (!st)
        st = gir_op_infer(m, c, err);
    gir_session *s = NULL;
    if (!st)
        st = gir_session_new(m, 1, &s, err);
    if (!st)
        st = gir_session_run(s, err);
    size_t j = 0;
    for (size_t k = 0; !st && k < n->n_out; k++)
        outs[k] = gir_out(g, n, k) ? gir_tensor_ref(gir_session_output(s, j++)) : NULL;
    gir_session_free(s);
    gir_graph_free(m);
    return st;
}

static gir_status shape_tensor(const gir_value *x, gir_tensor **out, gir_error *err)
{
    gir_shape s = { .rank = 1, .dims = { x->shape.rank } };
    gir_tensor *t;
    TRY(gir_tensor_new(GIR_DT_I64, &s, &t, err));
    for (int i = 0; i < x->shape.rank; i++)
        ((int64_t *)t->data)[i] = x->shape.dims[i];
    *out = t;
    return GIR_OK;
}

gir_status gir_fold_node(gir_edit *e, gir_graph *g, int32_t node, uint64_t limit, bool *folded, gir_error *err)
{
    *folded = false;
    const gir_node *n = g->nodes[node];
    bool by_shape;
    if (!foldable(g, n, &by_shape))
        return GIR_OK;
    /* never bigger than the constants it reads (or the limit) */
    uint64_t in_bytes = 0, out_bytes = 0;
    bool weight = false;
    for (size_t k = 0; !by_shape && k < n->n_in; k++) {
        const gir_value *v = gir_in(g, n, k);
        if (v) {
            in_bytes += v->data->nbytes;
            weight |= v->kind == GIR_VALUE_WEIGHT;
        }
    }
    for (size_t k = 0; k < n->n_out; k++) {
        const gir_value *v = gir_out(g, n, k);
        uint64_t b;
        if (v && (v->shape.rank < 0 || !gir_shape_is_known(&v->shape) || v->dtype == GIR_DT_UNKNOWN ||
                  gir_tensor_size(v->dtype, &v->shape, &b, NULL)))
            return GIR_OK; /* unknown output size: evaluated only where inference knows it */
        if (v)
            out_bytes += b;
    }
    if (out_bytes > (in_bytes > limit ? in_bytes : limit))
        return GIR_OK;
    gir_tensor *outs[GIR_FOLD_MAX_OUTPUTS] = { 0 };
    if (n->n_out > GIR_FOLD_MAX_OUTPUTS)
        return GIR_OK;
    gir_status st = by_shape ? shape_tensor(gir_in(g, n, 0), &outs[0], err) : evaluate(g, n, outs, err);
    if (st == GIR_E_NO_KERNEL || st == GIR_E_UNSUPPORTED) {
        /* a dtype the kernel lacks: left as it is */
        gir_error_clear(err);
        st = GIR_OK;
    } else if (!st) {
        st = gir_edit_fold(e, node, outs, weight, err);
        *folded = st == GIR_OK;
    }
    for (size_t k = 0; k < n->n_out && k < GIR_FOLD_MAX_OUTPUTS; k++)
        gir_tensor_unref(outs[k]);
    return st;
}

gir_status gir_fold_constants(gir_graph *g, uint64_t limit, size_t *n_folded, gir_error *err)
{
    *n_folded = 0;
    int32_t *order;
    TRY(gir_topo_order(g, &order, err));
    gir_edit *e;
    gir_status st = gir_edit_begin(g, &e, err);
    if (st) {
        free(order);
        return st;
    }
    gir_edit_sweep_all(e);
    size_t n = g->n_nodes;
    for (size_t i = 0; !st && i < n; i++) {
        bool f;
        st = gir_fold_node(e, g, order[i], limit, &f, err);
        *n_folded += f;
    }
    free(order);
    if (st) {
        gir_edit_free(e);
        return st;
    }
    return gir_edit_commit(e, err);
}
