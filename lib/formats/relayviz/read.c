/* Reading RelayViz JSON into the graph IR.
 *
 * 1. Parse: every node of "nodes" is checked for its kind's fields; node
 *    references must be in range and of the right kind for their slot
 *    (a Call's op is an Op, a Function's params and a Let's variable are
 *    Vars, nothing refers to an Op elsewhere or to a Function).
 * 2. Cycles: a depth-first walk over all references with an explicit stack.
 * 3. Bindings: Let and Bind bind Vars to expressions; a Var is bound once.
 * 4. Evaluate from the root on demand (explicit stack, so no recursion):
 *    Let, Bind, Tuple and TupleGetItem are plumbing, an If takes the branch
 *    its constant condition selects, every Call becomes a pending call.
 * 5. Fold nn.bias_add into the convolution or dense before it when that is
 *    its only use; note which tuple results are used.
 * 6. Build the canonical nodes in evaluation order (a topological order).
 */
#include "read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/elem.h"
#include "passes/passes.h"


/* ---- tensors and calls ---------------------------------------------------------------- */

static int32_t new_tensor(rv_reader *r, int32_t call, int32_t out, int32_t leaf)
{
    if (r->n_tensors >= INT32_MAX - 1 || !GIR_GROW(r->tensors, r->cap_tensors, r->n_tensors + 1))
        return -1;
    r->tensors[r->n_tensors] = (rtensor){ call, out, leaf, -1, 0 };
    return (int32_t)r->n_tensors++;
}

/* The tensor of output k of call c (made on first use). */
static gir_status call_out(rv_reader *r, int32_t c, size_t k, int32_t *t)
{
    rcall *cl = &r->calls[c];
    if (k >= 65535)
        return rvr_node_fail(r, GIR_E_LIMIT, cl->id, NULL, NULL, "uses item %zu of the result", k);
    if (k >= cl->n_outs) {
        if (!GIR_GROW(cl->outs, cl->cap_outs, k + 1))
            return gir_nomem(r->err);
        for (size_t i = cl->n_outs; i <= k; i++)
            cl->outs[i] = -1;
        cl->n_outs = k + 1;
    }
    if (cl->outs[k] < 0) {
        int32_t nt = new_tensor(r, c, (int32_t)k, -1);
        if (nt < 0)
            return gir_nomem(r->err);
        r->calls[c].outs[k] = nt;
    }
    *t = r->calls[c].outs[k];
    return GIR_OK;
}

/* Operators whose (non-tuple) result graphconv knows: a TupleGetItem on
 * them is an error rather than an unknown op's tuple.  They are the rows
 * of the operator table but the three whose result is a tuple. */
static bool op_is_known(const char *op)
{
    static const char *const tuple_ops[] = { "nn.batch_norm", "nn.dropout", "split", NULL };
    for (const char *const *k = tuple_ops; *k; k++)
        if (!strcmp(*k, op))
            return false;
    for (const gir_op_map *m = gir_relayviz_ops; m->format_op; m++)
        if (m->op != GIR_OP_OPAQUE && !strcmp(m->format_op, op))
            return true;
    return false;
}

/* Uses val as one tensor. */
static gir_status as_tensor(rv_reader *r, int32_t user, int32_t src, const rval *val, int32_t *t)
{
    switch (val->k) {
    case V_TENSOR: *t = val->t; return GIR_OK;
    case V_CALL: {
        rcall *c = &r->calls[val->t];
        if (c->returns_tuple)
            return rvr_node_fail(r, GIR_E_SCHEMA, user, NULL, NULL,
                                 "uses node %d, whose %s result is a tuple, as a tensor (take an item with TupleGetItem)",
                                 (int)src, c->op);
        c->used_plain = true;
        return call_out(r, val->t, 0, t);
    }
    case V_TUPLE:
        return rvr_node_fail(r, GIR_E_SCHEMA, user, NULL, NULL, "uses node %d, a tuple, where a tensor is expected",
                             (int)src);
    case V_NONE: break;
    }
    return gir_fail(r->err, GIR_E_INTERNAL, "node %d has no value", (int)src);
}

/* The tensors of val spread out (a tuple's items, or one tensor); *n is
 * their count and *is_tuple says which.  out has room for cap. */
static gir_status spread(rv_reader *r, int32_t user, int32_t src, const rval *val, int32_t **out, size_t *n,
                         bool *is_tuple)
{
    *n = 0;
    *is_tuple = false;
    size_t count = 1;
    if (val->k == V_TUPLE)
        count = val->n;
    else if (val->k == V_CALL && r->calls[val->t].returns_tuple)
        count = (size_t)r->calls[val->t].tuple_n;
    *out = gir_arena_alloc(&r->scratch, (count ? count : 1) * sizeof **out);
    if (!*out)
        return gir_nomem(r->err);
    gir_status st;
    if (val->k == V_TUPLE) {
        for (size_t i = 0; i < val->n; i++)
            if ((st = as_tensor(r, user, src, &val->items[i], &(*out)[i])))
                return st;
        *is_tuple = true;
    } else if (val->k == V_CALL && r->calls[val->t].returns_tuple) {
        for (size_t i = 0; i < count; i++)
            if ((st = call_out(r, val->t, i, &(*out)[i])))
                return st;
        *is_tuple = true;
    } else if ((st = as_tensor(r, user, src, val, &(*out)[0]))) {
        return st;
    }
    *n = count;
    return GIR_OK;
}

/* ---- parameters ------------------------------------------------------------------------ */

/* Makes the graph value of a parameter Var: a weight when the params file
 * has its name, else a graph input. */
static gir_status make_param(rv_reader *r, int32_t var)
{
    rnode *v = &r->nodes[var];
    gir_graph *g = r->g;
    gir_tensor *t = NULL;
    gir_status st = r->params ? rv_params_get(r->params, v->name, &t, r->err) : GIR_OK;
    if (st)
        return st;
    const char *name = gir_graph_value_index(g, v->name) >= 0 ? gir_graph_unique_value_name(g, v->name, r->err) : v->name;
    int32_t idx;
    if (!name)
        st = gir_nomem(r->err);
    else
        st = gir_graph_add_value(g, name, t ? GIR_VALUE_WEIGHT : GIR_VALUE_INPUT, &idx, r->err);
    if (st) {
        gir_tensor_unref(t);
        return st;
    }
    gir_value *val = g->values[idx];
    val->dtype = v->dtype;
    val->shape = v->shape;
    memcpy(val->dim_names, v->dim_names, sizeof val->dim_names);
    v->value = idx;
    if (!t)
        return gir_graph_add_input(g, idx, r->err);
    bool same = v->shape.rank < 0 || v->shape.rank == t->shape.rank;
    for (int i = 0; same && i < v->shape.rank; i++)
        same = v->shape.dims[i] < 0 || v->shape.dims[i] == t->shape.dims[i];
    if (!same) {
        char a[96], b[96];
        st = rvr_node_fail(r, GIR_E_SHAPE, var, gir_json_get(v->j, "shape"), "shape",
                           "Var '%s' has shape %s but its array in the params file has %s", v->name,
                           gir_shape_str(&v->shape, a, sizeof a), gir_shape_str(&t->shape, b, sizeof b));
    } else if (v->dtype != GIR_DT_UNKNOWN && v->dtype != t->dtype) {
        st = rvr_node_fail(r, GIR_E_DTYPE, var, gir_json_get(v->j, "dtype"), "dtype",
                           "Var '%s' is %s but its array in the params file is %s", v->name, gir_dtype_name(v->dtype),
                           gir_dtype_name(t->dtype));
    } else {
        gir_value_set_data(val, t);
    }
    gir_tensor_unref(t);
    return st;
}

/* ---- evaluation ------------------------------------------------------------------------- */

static bool const_truth(const rnode *c, bool *truth)
{
    const gir_tensor *t = c->data;
    if (!t || gir_shape_numel(&t->shape) != 1)
        return false;
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case GIR_DT_F32: {
        float f;
        memcpy(&f, p, 4);
        *truth = f != 0;
        return true;
    }
    case GIR_DT_F64: {
        double d;
        memcpy(&d, p, 8);
        *truth = d != 0;
        return true;
    }
    default: {
        size_t n = gir_dtype_size(t->dtype);
        *truth = false;
        for (size_t i = 0; i < n; i++)
            *truth |= p[i] != 0;
        return true;
    }
    }
}

/* The dependencies of node id at step `step`: the next node to evaluate
 * first, or -1 when everything it needs is ready. */
static gir_status next_dep(void *ctx, int32_t id, size_t step, int32_t *dep)
{
    rv_reader *r = ctx;
    rnode *nd = &r->nodes[id];
    *dep = -1;
    switch (nd->k) {
    case K_VAR:
        if (step == 0 && nd->bound_to >= 0)
            *dep = nd->bound_to;
        break;
    case K_FUNCTION:
    case K_BIND:
    case K_TGI:
        if (step == 0)
            *dep = nd->a;
        break;
    case K_LET:
        if (step == 0)
            *dep = nd->c;
        break;
    case K_CALL:
    case K_TUPLE:
        if (step < nd->n_list)
            *dep = nd->list[step];
        break;
    case K_IF:
        if (step == 0) {
            *dep = nd->a;
        } else if (step == 1) {
            const rval *cv = &r->vals[nd->a];
            const rtensor *t = cv->k == V_TENSOR ? &r->tensors[cv->t] : NULL;
            bool truth;
            if (!t || t->leaf < 0 || r->nodes[t->leaf].k != K_CONST || !const_truth(&r->nodes[t->leaf], &truth))
                return rvr_node_fail(r, GIR_E_DYNAMIC, id, gir_json_get(nd->j, "cond"), "cond",
                                     "its condition (node %d) is not a constant, so the program is not a static graph",
                                     (int)nd->a);
            *dep = truth ? nd->b : nd->c;
        }
        break;
    default: break;
    }
    return GIR_OK;
}

static gir_status eval_call(rv_reader *r, int32_t id)
{
    rnode *nd = &r->nodes[id];
    if (r->n_calls >= INT32_MAX - 1 || !GIR_GROW(r->calls, r->cap_calls, r->n_calls + 1))
        return gir_nomem(r->err);
    int32_t ci = (int32_t)r->n_calls++;
    rcall *c = &r->calls[ci];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->bias_call = c->fused_into = c->absorbed_by = -1;
    c->trans[0] = c->trans[1] = -1;
    const rnode *op = nd->b >= 0 ? &r->nodes[nd->b] : NULL;
    c->op = op ? op->name : nd->name;
    c->attrs = (rv_attrs){ nd->attrs, op ? op->attrs : NULL, id, op ? nd->b : -1, r->doc };
    c->returns_tuple = rv_op_returns_tuple(c->op, &c->attrs, &c->tuple_n);
    if (c->returns_tuple && c->tuple_n < 1)
        return rvr_node_fail(r, GIR_E_ATTRIBUTE, id, NULL, NULL,
                             "attribute indices_or_sections of split must be a positive integer or a list of indices");
    c->n_relay = nd->n_list;
    c->arity = gir_arena_alloc(&r->scratch, (nd->n_list ? nd->n_list : 1) * sizeof *c->arity);
    if (!c->arity)
        return gir_nomem(r->err);
    size_t total = 0;
    int32_t **parts = gir_arena_alloc(&r->scratch, (nd->n_list ? nd->n_list : 1) * sizeof *parts);
    if (!parts)
        return gir_nomem(r->err);
    for (size_t i = 0; i < nd->n_list; i++) {
        size_t n;
        bool is_tuple;
        gir_status st = spread(r, id, nd->list[i], &r->vals[nd->list[i]], &parts[i], &n, &is_tuple);
        c = &r->calls[ci]; /* spread may grow nothing here, but keep c fresh */
        if (st)
            return st;
        c->arity[i] = is_tuple ? (int32_t)n : -1;
        total += n;
    }
    c->args = gir_arena_alloc(&r->scratch, (total ? total : 1) * sizeof *c->args);
    if (!c->args)
        return gir_nomem(r->err);
    for (size_t i = 0, k = 0; i < nd->n_list; i++) {
        size_t n = c->arity[i] < 0 ? 1 : (size_t)c->arity[i];
        memcpy(c->args + k, parts[i], n * sizeof *c->args);
        k += n;
    }
    c->n_args = total;
    c->tuple_arg = nd->n_list == 1 && c->arity[0] >= 0;
    r->vals[id] = (rval){ V_CALL, ci, 0, NULL };
    return GIR_OK;
}

/* Computes the value of node id; its dependencies are ready. */
static gir_status eval_node(rv_reader *r, int32_t id)
{
    rnode *nd = &r->nodes[id];
    rval *out = &r->vals[id];
    gir_status st;
    switch (nd->k) {
    case K_VAR:
        if (nd->bound_to >= 0) {
            *out = r->vals[nd->bound_to];
            return GIR_OK;
        }
        if (nd->value < 0) {
            if (r->function_root)
                return rvr_node_fail(r, GIR_E_REFERENCE, id, NULL, NULL,
                                     "Var '%s' is neither a parameter of the Function nor bound by a Let or Bind", nd->name);
            if ((st = make_param(r, id)))
                return st;
        }
        out->k = V_TENSOR;
        if ((out->t = new_tensor(r, -1, 0, id)) < 0)
            return gir_nomem(r->err);
        r->tensors[out->t].value = nd->value;
        return GIR_OK;
    case K_CONST:
        out->k = V_TENSOR;
        if ((out->t = new_tensor(r, -1, 0, id)) < 0)
            return gir_nomem(r->err);
        return GIR_OK;
    case K_FUNCTION:
    case K_BIND:
        *out = r->vals[nd->a];
        return GIR_OK;
    case K_LET: *out = r->vals[nd->c]; return GIR_OK;
    case K_IF: {
        bool truth = false;
        const_truth(&r->nodes[r->tensors[r->vals[nd->a].t].leaf], &truth);
        *out = r->vals[truth ? nd->b : nd->c];
        return GIR_OK;
    }
    case K_TUPLE: {
        rval *items = gir_arena_alloc(&r->scratch, (nd->n_list ? nd->n_list : 1) * sizeof *items);
        if (!items)
            return gir_nomem(r->err);
        for (size_t i = 0; i < nd->n_list; i++)
            items[i] = r->vals[nd->list[i]];
        *out = (rval){ V_TUPLE, -1, nd->n_list, items };
        return GIR_OK;
    }
    case K_TGI: {
        const rval *tv = &r->vals[nd->a];
        const gir_json *ix = gir_json_get(nd->j, "index");
        if (tv->k == V_TUPLE) {
            if ((uint64_t)nd->index >= tv->n)
                return rvr_node_fail(r, GIR_E_SCHEMA, id, ix, "index", "index %lld is out of range for a tuple of %zu",
                                     (long long)nd->index, tv->n);
            *out = tv->items[nd->index];
            return GIR_OK;
        }
        if (tv->k == V_CALL) {
            rcall *c = &r->calls[tv->t];
            if (c->returns_tuple && nd->index >= c->tuple_n)
                return rvr_node_fail(r, GIR_E_SCHEMA, id, ix, "index",
                                     "index %lld is out of range for the %lld results of %s", (long long)nd->index,
                                     (long long)c->tuple_n, c->op);
            if (!c->returns_tuple && op_is_known(c->op))
                return rvr_node_fail(r, GIR_E_SCHEMA, id, NULL, "tuple_value",
                                     "node %d is a call of %s, whose result is not a tuple", (int)nd->a, c->op);
            if (!c->returns_tuple)
                c->used_tuple = true;
            out->k = V_TENSOR;
            return call_out(r, tv->t, (size_t)nd->index, &out->t);
        }
        return rvr_node_fail(r, GIR_E_SCHEMA, id, NULL, "tuple_value", "node %d is not a tuple", (int)nd->a);
    }
    case K_CALL: return eval_call(r, id);
    default: break;
    }
    return gir_fail(r->err, GIR_E_INTERNAL, "node %d cannot be evaluated", (int)id);
}

static gir_status eval_done(void *ctx, int32_t id)
{
    return eval_node(ctx, id);
}

static gir_status binding_cycle(void *ctx, const int32_t *path, size_t depth, int32_t to)
{
    (void)path;
    (void)depth;
    /* Only bindings can close a loop here: Let x = f(x). */
    return rvr_node_fail(ctx, GIR_E_CYCLE, to, NULL, NULL,
                         "part of a cycle through a binding (a Let or Bind whose value uses its own variable)");
}

/* Evaluates the nodes the root depends on, each after what it uses. */
static gir_status evaluate(rv_reader *r)
{
    rv_dfs d = { next_dep, eval_done, binding_cycle, r, NULL, NULL, NULL };
    gir_status st = rv_dfs_init(&d, r->n) ? rv_dfs_walk(&d, r->root) : gir_nomem(r->err);
    rv_dfs_free(&d);
    return st;
}

/* ---- fusion ------------------------------------------------------------------------------ */

static void count_uses(rv_reader *r, const int32_t *outs, size_t n_outs)
{
    for (size_t t = 0; t < r->n_tensors; t++)
        r->tensors[t].uses = 0;
    for (size_t c = 0; c < r->n_calls; c++)
        for (size_t i = 0; i < r->calls[c].n_args; i++)
            r->tensors[r->calls[c].args[i]].uses++;
    for (size_t i = 0; i < n_outs; i++)
        r->tensors[outs[i]].uses++;
}

/* Calls whose results nothing uses (a Tuple field no TupleGetItem picks)
 * are dropped: the graph is the program's dataflow.  Arguments come from
 * earlier calls, so one backward pass finds chains of them. */
static void drop_dead_calls(rv_reader *r)
{
    for (size_t ci = r->n_calls; ci-- > 0;) {
        rcall *c = &r->calls[ci];
        bool used = false;
        for (size_t k = 0; k < c->n_outs && !used; k++)
            used = c->outs[k] >= 0 && r->tensors[c->outs[k]].uses > 0;
        if (used)
            continue;
        c->dead = true;
        for (size_t i = 0; i < c->n_args; i++)
            r->tensors[c->args[i]].uses--;
    }
}

static void fuse_bias(rv_reader *r)
{
    for (size_t ci = 0; ci < r->n_calls; ci++) {
        rcall *c = &r->calls[ci];
        if (c->dead)
            continue;
        int64_t axis;
        if (strcmp(c->op, "nn.bias_add") != 0 || c->n_args != 2 || c->n_relay != 2 || c->arity[0] >= 0 ||
            c->arity[1] >= 0 || !rv_attr_axis(&c->attrs, 1, &axis))
            continue;
        const rtensor *d = &r->tensors[c->args[0]];
        if (d->call < 0 || d->out != 0 || d->uses != 1)
            continue;
        rcall *p = &r->calls[d->call];
        if (p->bias_call >= 0 || p->used_tuple || !rv_bias_fuses(p->op, axis))
            continue;
        p->bias_call = (int32_t)ci;
        c->fused_into = d->call;
    }
}

/* nn.dense(transpose(A), W) and nn.dense(A, transpose(B)) with the
 * transpose's axes null (the reverse) and no other use fold into Gemm's
 * transA / transB; build_call checks the operand is 2-D. */
static void fuse_transposes(rv_reader *r)
{
    for (size_t ci = 0; ci < r->n_calls; ci++) {
        rcall *c = &r->calls[ci];
        if (c->dead || strcmp(c->op, "nn.dense") != 0 || c->n_args != 2 || c->n_relay != 2 || c->arity[0] >= 0 ||
            c->arity[1] >= 0)
            continue;
        for (int k = 0; k < 2; k++) {
            const rtensor *t = &r->tensors[c->args[k]];
            if (t->call < 0 || t->out != 0 || t->uses != 1)
                continue;
            rcall *tr = &r->calls[t->call];
            const gir_json *objs[2] = { tr->attrs.call, tr->attrs.op };
            bool only_axes = true;
            for (int o = 0; o < 2; o++)
                for (size_t i = 0; objs[o] && i < objs[o]->len; i++)
                    only_axes &= strcmp(objs[o]->u.members[i].key, "axes") == 0;
            if (strcmp(tr->op, "transpose") != 0 || tr->n_args != 1 || tr->arity[0] >= 0 || tr->used_tuple ||
                !only_axes || rv_attr(&tr->attrs, "axes"))
                continue;
            c->trans[k] = t->call;
            tr->absorbed_by = (int32_t)ci;
        }
    }
}

/* ---- building nodes -------------------------------------------------------------------------- */

/* The graph value of tensor t (a Const's is made on first use). */
static gir_status tensor_value(rv_reader *r, int32_t t, int32_t *value)
{
    rtensor *x = &r->tensors[t];
    if (x->value >= 0) {
        *value = x->value;
        return GIR_OK;
    }
    if (x->leaf >= 0 && r->nodes[x->leaf].k == K_CONST && r->nodes[x->leaf].value >= 0) {
        x->value = r->nodes[x->leaf].value;
        *value = x->value;
        return GIR_OK;
    }
    if (x->leaf >= 0 && r->nodes[x->leaf].k == K_CONST) {
        char base[32];
        snprintf(base, sizeof base, "const_%d", (int)x->leaf);
        const char *name = gir_graph_unique_value_name(r->g, base, r->err);
        if (!name)
            return gir_nomem(r->err);
        gir_status st = gir_graph_add_const(r->g, name, r->nodes[x->leaf].data, &x->value, r->err);
        if (st)
            return st;
        r->nodes[x->leaf].value = x->value; /* every use of the Const shares it */
        *value = x->value;
        return GIR_OK;
    }
    return gir_fail(r->err, GIR_E_INTERNAL, "tensor %d has no value yet", (int)t);
}

/* The value of a one-element tensor as a double: false for the half types,
 * other non-numeric types and 64-bit integers a double does not hold
 * exactly (a bool is its byte). */
static bool scalar_value(const gir_tensor *t, double *out)
{
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case GIR_DT_F32:
    case GIR_DT_F64:
    case GIR_DT_I8:
    case GIR_DT_I16:
    case GIR_DT_I32:
    case GIR_DT_U8:
    case GIR_DT_U16:
    case GIR_DT_U32: *out = gir_elem_as_double(p, t->dtype, 0); return true;
    case GIR_DT_BOOL: *out = *p; return true;
    case GIR_DT_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        *out = (double)v;
        return *out >= -0x1p63 && *out < 0x1p63 && (int64_t)*out == v;
    }
    case GIR_DT_U64: {
        uint64_t v;
        memcpy(&v, p, 8);
        *out = (double)v;
        return v < ((uint64_t)1 << 53);
    }
    default: return false;
    }
}

static void arg_info(rv_reader *r, int32_t t, rv_arginfo *a)
{
    const rtensor *x = &r->tensors[t];
    memset(a, 0, sizeof *a);
    a->shape.rank = -1;
    const gir_tensor *data = NULL;
    if (x->value >= 0) {
        const gir_value *v = r->g->values[x->value];
        a->dtype = v->dtype;
        a->shape = v->shape;
        data = v->kind == GIR_VALUE_CONST ? v->data : NULL;
    } else if (x->leaf >= 0 && r->nodes[x->leaf].k == K_CONST) {
        data = r->nodes[x->leaf].data;
        a->dtype = data->dtype;
        a->shape = data->shape;
    }
    if (data && data->data && gir_shape_numel(&data->shape) == 1)
        a->is_scalar_const = scalar_value(data, &a->scalar);
}

static gir_status infer(rv_reader *r, gir_node *n, int32_t id)
{
    gir_status st = gir_op_infer(r->g, n, r->err);
    if (st)
        gir_json_err_at(r->err, r->doc, r->nodes[id].j, "/nodes/%d", (int)id);
    return st;
}

void rv_json_emit(gir_json_writer *w, const gir_json *v)
{
    typedef struct frame {
        const gir_json *v;
        size_t i;
    } frame;
    frame *stack = NULL; /* as deep as the parsed document (the max-depth limit) */
    size_t sp = 0, cap = 0;
    if (!GIR_GROW(stack, cap, 1)) {
        w->failed = true;
        return;
    }
    stack[sp++] = (frame){ v, 0 };
    while (sp > 0 && !w->failed) {
        frame *f = &stack[sp - 1];
        const gir_json *x = f->v;
        if (x->type == GIR_JSON_ARRAY || x->type == GIR_JSON_OBJECT) {
            bool obj = x->type == GIR_JSON_OBJECT;
            if (f->i == 0)
                obj ? gir_jw_begin_object(w, false) : gir_jw_begin_array(w, false);
            if (f->i == x->len) {
                obj ? gir_jw_end_object(w) : gir_jw_end_array(w);
                sp--;
                continue;
            }
            const gir_json *child = obj ? &x->u.members[f->i].value : &x->u.items[f->i];
            if (obj)
                gir_jw_key_n(w, x->u.members[f->i].key, x->u.members[f->i].key_len);
            f->i++;
            if (!GIR_GROW(stack, cap, sp + 1)) {
                w->failed = true;
                break;
            }
            stack[sp++] = (frame){ child, 0 };
            continue;
        }
        switch (x->type) {
        case GIR_JSON_NULL: gir_jw_null(w); break;
        case GIR_JSON_BOOL: gir_jw_bool(w, x->b); break;
        case GIR_JSON_NUMBER: gir_jw_number_raw(w, x->u.num, x->len); break;
        case GIR_JSON_STRING: gir_jw_string_n(w, x->u.str, x->len); break;
        default: break;
        }
        sp--;
    }
    free(stack);
}

gir_status rv_json_text(const gir_json *v, gir_buf *out)
{
    gir_json_writer w;
    gir_jw_init(&w, out, GIR_JSON_COMPACT);
    rv_json_emit(&w, v);
    bool ok = gir_jw_ok(&w);
    gir_jw_free(&w);
    return ok ? GIR_OK : GIR_E_NOMEM;
}

/* The attributes of an opaque call, each verbatim as JSON text: the Op's
 * in file order (a Call's value overriding), then the Call's own others. */
static gir_status opaque_attrs(rv_reader *r, gir_node *n, const rv_attrs *a)
{
    const gir_json *objs[2] = { a->op, a->call };
    for (int o = 0; o < 2; o++) {
        for (size_t i = 0; objs[o] && i < objs[o]->len; i++) {
            const gir_json_member *m = &objs[o]->u.members[i];
            const gir_json *val = &m->value;
            if (o == 0 && a->call && gir_json_get(a->call, m->key))
                val = gir_json_get(a->call, m->key);
            else if (o == 1 && a->op && gir_json_get(a->op, m->key))
                continue; /* written in the Op's turn */
            gir_buf b = GIR_BUF_INIT;
            gir_status st = rv_json_text(val, &b);
            char *s = gir_buf_take(&b);
            if (st || !s || gir_attrs_set_string(r->g, &n->attrs, m->key, s, r->err)) {
                free(s);
                return gir_nomem(r->err);
            }
            free(s);
        }
    }
    return GIR_OK;
}

static const char *node_base(const char *op)
{
    return strncmp(op, "nn.", 3) == 0 ? op + 3 : op;
}

static gir_status build_call(rv_reader *r, int32_t ci)
{
    rcall *c = &r->calls[ci];
    gir_graph *g = r->g;
    gir_status st;
    rcall *bias = c->bias_call >= 0 ? &r->calls[c->bias_call] : NULL;
    size_t n_args = c->n_args + (bias ? 1 : 0);
    int32_t *args = malloc((n_args ? n_args : 1) * sizeof *args);
    rv_arginfo *info = malloc((n_args ? n_args : 1) * sizeof *info);
    if (!args || !info) {
        free(args);
        free(info);
        return gir_nomem(r->err);
    }
    memcpy(args, c->args, c->n_args * sizeof *args);
    if (bias)
        args[c->n_args] = bias->args[1];
    bool trans[2] = { false, false };
    for (int k = 0; k < 2; k++) {
        if (c->trans[k] < 0)
            continue;
        /* A folded transpose reads its operand directly, if that is 2-D;
         * otherwise it is built now, on its own. */
        rcall *tr = &r->calls[c->trans[k]];
        rv_arginfo ti;
        arg_info(r, tr->args[0], &ti);
        if (ti.shape.rank == 2) {
            args[k] = tr->args[0];
            trans[k] = true;
            continue;
        }
        tr->absorbed_by = -1;
        int32_t tci = c->trans[k];
        c->trans[k] = -1;
        if ((st = build_call(r, tci))) {
            free(args);
            free(info);
            return st;
        }
        c = &r->calls[ci];
    }
    for (size_t i = 0; i < n_args; i++)
        arg_info(r, args[i], &info[i]);
    /* Outputs the program uses: index + 1 of the last used one. */
    size_t used = 0;
    for (size_t k = 0; k < c->n_outs; k++)
        if (c->outs[k] >= 0 && r->tensors[c->outs[k]].uses > 0)
            used = k + 1;
    if (c->used_plain && c->used_tuple) {
        free(args);
        free(info);
        return rvr_node_fail(r, GIR_E_SCHEMA, c->id, NULL, NULL,
                             "the result of %s is used both as a tensor and as a tuple (through TupleGetItem)", c->op);
    }
    rv_call_view view = { c->op, c->attrs, n_args, info, c->tuple_arg, used, bias ? (int32_t)c->n_args : -1,
                          { trans[0], trans[1] } };
    rv_mapped m;
    st = rv_map_call(g, &view, &m, r->err);
    if (st)
        goto out;
    if (m.op == GIR_OP_OPAQUE && (trans[0] || trans[1])) {
        /* An opaque nn.dense reads its arguments as they were. */
        for (int k = 0; k < 2; k++) {
            if (!trans[k])
                continue;
            int32_t tci = c->trans[k];
            r->calls[tci].absorbed_by = -1;
            c->trans[k] = -1;
            args[k] = c->args[k];
            if ((st = build_call(r, tci)))
                goto out;
            c = &r->calls[ci];
        }
    }
    if (m.op == GIR_OP_OPAQUE && bias) {
        /* The producer stays opaque: the bias_add is built on its own. */
        r->calls[c->bias_call].fused_into = -1;
        c->bias_call = -1;
        bias = NULL;
        n_args = c->n_args;
    }
    char base[96];
    snprintf(base, sizeof base, "%.80s_%d", node_base(c->op), (int)c->id);
    const char *name = gir_graph_unique_node_name(g, base, r->err);
    if (!name) {
        st = gir_nomem(r->err);
        goto out;
    }
    size_t n_in = m.op == GIR_OP_OPAQUE || m.n_in == SIZE_MAX ? n_args : m.n_in;
    size_t n_out = m.n_out;
    if (m.op == GIR_OP_OPAQUE)
        n_out = c->returns_tuple ? (size_t)c->tuple_n : c->n_outs > 1 ? c->n_outs : 1;
    int32_t expand_value = -1;
    if (m.expand_in >= 0) {
        /* Unsqueeze(axes [1..n]) on that input, in front of the node. */
        char ebase[120];
        snprintf(ebase, sizeof ebase, "%s_expand", name);
        const char *ename = gir_graph_unique_node_name(g, ebase, r->err);
        gir_node *e;
        int32_t v;
        int64_t axes[GIR_MAX_RANK];
        for (int64_t i = 0; i < m.expand_n && i < GIR_MAX_RANK; i++)
            axes[i] = i + 1;
        if (!ename) {
            st = gir_nomem(r->err);
            goto out;
        }
        if ((st = gir_graph_add_node(g, ename, GIR_OP_Unsqueeze, 1, 1, &e, r->err)) ||
            (st = tensor_value(r, args[m.in[m.expand_in]], &v)))
            goto out;
        e->in[0] = v;
        if (gir_attrs_set_ints(g, &e->attrs, "axes", axes, (size_t)m.expand_n, r->err)) {
            st = gir_nomem(r->err);
            goto out;
        }
        const char *vname = gir_graph_unique_value_name(g, ename, r->err);
        if (!vname) {
            st = gir_nomem(r->err);
            goto out;
        }
        if ((st = gir_node_make_output(g, e, 0, vname, r->err)) || (st = infer(r, e, c->id)))
            goto out;
        expand_value = e->out[0];
    }
    gir_node *n;
    if ((st = gir_graph_add_node(g, name, m.op, n_in, n_out, &n, r->err)))
        goto out;
    for (size_t i = 0; i < n_in; i++) {
        int32_t a = m.op == GIR_OP_OPAQUE || m.n_in == SIZE_MAX ? (int32_t)i : m.in[i];
        if (a < 0)
            continue;
        if ((int32_t)i == m.expand_in) {
            n->in[i] = expand_value;
            continue;
        }
        if ((st = tensor_value(r, args[a], &n->in[i])))
            goto out;
    }
    for (size_t k = 0; k < n_out; k++) {
        char vb[120];
        if (k == 0)
            snprintf(vb, sizeof vb, "%s", name);
        else
            snprintf(vb, sizeof vb, "%s_out%zu", name, k);
        const char *vname = gir_graph_unique_value_name(g, vb, r->err);
        if (!vname) {
            st = gir_nomem(r->err);
            goto out;
        }
        if ((st = gir_node_make_output(g, n, k, vname, r->err)))
            goto out;
        if (k < c->n_outs && c->outs[k] >= 0)
            r->tensors[c->outs[k]].value = n->out[k];
    }
    if (bias) {
        /* The bias_add's result is this node's output. */
        int32_t t;
        if ((st = call_out(r, c->bias_call, 0, &t)))
            goto out;
        r->tensors[t].value = n->out[0];
    }
    if (m.op == GIR_OP_OPAQUE) {
        n->opaque_format = "relayviz";
        n->opaque_op = gir_arena_strdup(&g->arena, c->op);
        if (!n->opaque_op || (st = opaque_attrs(r, n, &c->attrs)))
            goto out;
        if ((c->returns_tuple || c->used_tuple) && gir_attrs_set_int(g, &n->meta, RV_META_TUPLE, 1, r->err)) {
            st = gir_nomem(r->err);
            goto out;
        }
        bool any_tuple = false;
        for (size_t i = 0; i < c->n_relay; i++)
            any_tuple |= c->arity[i] >= 0;
        if (any_tuple) {
            int64_t ar[64];
            if (c->n_relay > 64) {
                st = rvr_node_fail(r, GIR_E_LIMIT, c->id, NULL, "args", "an unknown operator with Tuple arguments has more than 64 arguments");
                goto out;
            }
            for (size_t i = 0; i < c->n_relay; i++)
                ar[i] = c->arity[i];
            if (gir_attrs_set_ints(g, &n->meta, RV_META_ARGS, ar, c->n_relay, r->err)) {
                st = gir_nomem(r->err);
                goto out;
            }
        }
    } else {
        n->attrs = m.attrs;
        m.attrs = (gir_attrs){ NULL, 0, 0 };
        if (m.meta_op && gir_attrs_set_string(g, &n->meta, RV_META_OP, m.meta_op, r->err)) {
            st = gir_nomem(r->err);
            goto out;
        }
        st = infer(r, n, c->id);
    }
out:
    gir_attrs_free(&m.attrs);
    free(args);
    free(info);
    return st;
}

/* ---- the whole read --------------------------------------------------------------------------- */

static gir_status check_root(rv_reader *r, const gir_json *root)
{
    gir_error *err = r->err;
    if (!gir_json_is(root, GIR_JSON_OBJECT)) {
        gir_fail(err, GIR_E_SCHEMA, "the document must be an object {\"format\": \"relayviz\", ...}");
        gir_json_err_at(err, r->doc, root, "%s", "");
        return GIR_E_SCHEMA;
    }
    const gir_json *f = gir_json_get(root, "format");
    const char *fs = f ? gir_json_get_cstr(f) : NULL;
    if (!fs || strcmp(fs, "relayviz") != 0) {
        char got[64];
        gir_json_describe(f, got, sizeof got);
        gir_fail(err, GIR_E_SCHEMA, "\"format\" must be \"relayviz\", not %s", f ? got : "missing");
        gir_json_err_at(err, r->doc, f ? f : root, "%s", f ? "/format" : "");
        return GIR_E_SCHEMA;
    }
    const gir_json *v = gir_json_get(root, "version");
    int64_t major, minor = 0;
    if (!gir_json_is(v, GIR_JSON_ARRAY) || v->len < 1 || v->len > 2 || !gir_json_get_i64(gir_json_at(v, 0), &major) ||
        (v->len == 2 && !gir_json_get_i64(gir_json_at(v, 1), &minor))) {
        gir_fail(err, GIR_E_SCHEMA, "\"version\" must be [major, minor], such as [1, 0]");
        gir_json_err_at(err, r->doc, v ? v : root, "%s", v ? "/version" : "");
        return GIR_E_SCHEMA;
    }
    if (major != 1) {
        gir_fail(err, GIR_E_SCHEMA, "RelayViz version %lld.%lld is not supported (only 1.x)", (long long)major,
                 (long long)minor);
        gir_json_err_at(err, r->doc, v, "/version");
        return GIR_E_SCHEMA;
    }
    const gir_json *nodes = gir_json_get(root, "nodes");
    if (!gir_json_is(nodes, GIR_JSON_ARRAY) || nodes->len == 0) {
        gir_fail(err, GIR_E_SCHEMA, "\"nodes\" must be a non-empty list of nodes");
        gir_json_err_at(err, r->doc, nodes ? nodes : root, "%s", nodes ? "/nodes" : "");
        return GIR_E_SCHEMA;
    }
    if (nodes->len >= INT32_MAX / 2) {
        gir_fail(err, GIR_E_LIMIT, "%zu nodes are more than this reader takes", nodes->len);
        return GIR_E_LIMIT;
    }
    return GIR_OK;
}

/* dtype and shape of the Function's ret_type: fills what the graph does
 * not know and checks what it does. */
static gir_status check_ret_type(rv_reader *r, const int32_t *outs, size_t n_outs)
{
    const rnode *fn = &r->nodes[r->root];
    const gir_json *rt = gir_json_get(fn->j, "ret_type");
    if (!rt || rt->type == GIR_JSON_NULL)
        return GIR_OK;
    size_t n = rt->type == GIR_JSON_ARRAY ? rt->len : 1;
    if ((rt->type != GIR_JSON_ARRAY && rt->type != GIR_JSON_OBJECT) || n != n_outs)
        return rvr_node_fail(r, GIR_E_SCHEMA, r->root, rt, "ret_type",
                             "ret_type must be one {dtype, shape} per result (%zu), not %s", n_outs,
                             rt->type == GIR_JSON_ARRAY ? "a list of another length" : gir_json_type_name(rt->type));
    for (size_t i = 0; i < n; i++) {
        const gir_json *t = rt->type == GIR_JSON_ARRAY ? gir_json_at(rt, i) : rt;
        char where[48];
        snprintf(where, sizeof where, rt->type == GIR_JSON_ARRAY ? "ret_type/%zu" : "ret_type", i);
        if (!gir_json_is(t, GIR_JSON_OBJECT))
            return rvr_node_fail(r, GIR_E_SCHEMA, r->root, t, where, "%s must be an object {dtype, shape}", where);
        gir_value *v = r->g->values[outs[i]];
        const gir_json *dt = gir_json_get(t, "dtype"), *sh = gir_json_get(t, "shape");
        if (dt && dt->type != GIR_JSON_NULL) {
            const char *s = gir_json_get_cstr(dt);
            gir_dtype d = s ? gir_dtype_from_name(s) : GIR_DT_UNKNOWN;
            if (d == GIR_DT_UNKNOWN)
                return rvr_node_fail(r, GIR_E_DTYPE, r->root, dt, where, "the dtype of %s is not a known element type",
                                     where);
            if (v->dtype != GIR_DT_UNKNOWN && v->dtype != d)
                return rvr_node_fail(r, GIR_E_DTYPE, r->root, dt, where, "%s says %s but the body computes %s", where,
                                     gir_dtype_name(d), gir_dtype_name(v->dtype));
            v->dtype = d;
        }
        gir_shape s;
        const char *names[GIR_MAX_RANK] = { 0 };
        gir_status st = rvr_shape_value(r, r->root, sh, where, &s, names);
        if (st)
            return st;
        if (s.rank < 0)
            continue;
        bool same = v->shape.rank < 0 || v->shape.rank == s.rank;
        for (int k = 0; same && k < s.rank && v->shape.rank >= 0; k++)
            same = s.dims[k] < 0 || v->shape.dims[k] < 0 || s.dims[k] == v->shape.dims[k];
        if (!same) {
            char a[96], b[96];
            return rvr_node_fail(r, GIR_E_SHAPE, r->root, sh, where, "%s says shape %s but the body computes %s", where,
                                 gir_shape_str(&s, a, sizeof a), gir_shape_str(&v->shape, b, sizeof b));
        }
        if (v->shape.rank < 0)
            v->shape = s;
        for (int k = 0; k < s.rank; k++) {
            if (v->shape.dims[k] < 0)
                v->shape.dims[k] = s.dims[k];
            if (!v->dim_names[k])
                v->dim_names[k] = names[k];
        }
    }
    return GIR_OK;
}

static gir_status read_program(rv_reader *r, const gir_json *root)
{
    gir_status st;
    const gir_json *nodes = gir_json_get(root, "nodes");
    r->n = nodes->len;
    r->nodes = calloc(r->n, sizeof *r->nodes);
    r->vals = calloc(r->n, sizeof *r->vals);
    if (!r->nodes || !r->vals)
        return gir_nomem(r->err);
    for (size_t i = 0; i < r->n; i++)
        r->nodes[i].j = gir_json_at(nodes, i);
    for (size_t i = 0; i < r->n; i++)
        if ((st = rvr_parse_node(r, (int32_t)i)))
            return st;
    if ((st = rvr_check_kinds(r)) || (st = rvr_check_cycles(r)) || (st = rvr_collect_bindings(r)))
        return st;
    r->root = (int32_t)r->n - 1;
    rnode *root_node = &r->nodes[r->root];
    if (root_node->k == K_OP)
        return rvr_node_fail(r, GIR_E_SCHEMA, r->root, NULL, NULL,
                             "the last node is the program's root and must be a Function or an expression, not an Op");
    r->function_root = root_node->k == K_FUNCTION;
    if (r->function_root) {
        for (size_t i = 0; i < root_node->n_list; i++) {
            rnode *v = &r->nodes[root_node->list[i]];
            char where[48];
            snprintf(where, sizeof where, "params/%zu", i);
            if (v->value >= 0)
                return rvr_node_fail(r, GIR_E_DUPLICATE, r->root, NULL, where, "lists Var %d twice among its params",
                                     (int)root_node->list[i]);
            if (v->bound_by >= 0)
                return rvr_node_fail(r, GIR_E_SCHEMA, r->root, NULL, where,
                                     "parameter Var %d ('%s') is also bound by node %d", (int)root_node->list[i], v->name,
                                     (int)v->bound_by);
            if ((st = make_param(r, root_node->list[i])))
                return st;
        }
    }
    if ((st = evaluate(r)))
        return st;
    /* batch-size=N: an unknown or symbolic first dimension of an input. */
    for (size_t i = 0; r->batch > 0 && i < r->g->n_inputs; i++) {
        gir_value *v = r->g->values[r->g->inputs[i]];
        if (v->shape.rank >= 1 && v->shape.dims[0] < 0) {
            v->shape.dims[0] = r->batch;
            v->dim_names[0] = NULL;
        }
    }

    /* The program's results. */
    int32_t *outs;
    size_t n_outs;
    bool is_tuple;
    int32_t body = r->function_root ? root_node->a : r->root;
    if ((st = spread(r, r->root, body, &r->vals[r->root], &outs, &n_outs, &is_tuple)))
        return st;
    if (n_outs == 0)
        return rvr_node_fail(r, GIR_E_SCHEMA, r->root, NULL, NULL, "the program returns an empty tuple");
    count_uses(r, outs, n_outs);
    drop_dead_calls(r);
    fuse_transposes(r);
    fuse_bias(r);
    for (size_t ci = 0; ci < r->n_calls; ci++) {
        const rcall *c = &r->calls[ci];
        if (c->dead || c->absorbed_by >= 0 || c->bias_call >= 0)
            continue; /* folded into a later call, or built at its bias_add */
        if (c->fused_into >= 0) {
            /* The producer goes here: the bias may come from a call after it. */
            if ((st = build_call(r, c->fused_into)))
                return st;
            if (r->calls[ci].fused_into >= 0)
                continue;
        }
        if ((st = build_call(r, (int32_t)ci)))
            return st;
    }
    for (size_t i = 0; i < n_outs; i++) {
        int32_t v;
        if ((st = tensor_value(r, outs[i], &v)) || (st = gir_graph_add_output(r->g, v, r->err)))
            return st;
        outs[i] = v;
    }
    if (r->function_root && (st = check_ret_type(r, outs, n_outs)))
        return st;
    return gir_graph_finish(r->g, r->err);
}

char *gir_relayviz_params_path(const char *path)
{
    if (gir_str_ends_with(path, ".relayviz.json")) {
        size_t n = strlen(path) - strlen(".relayviz.json");
        return gir_strdupf("%.*s.params", (int)n, path);
    }
    return gir_path_with_ext(path, ".params");
}

static char *graph_name(const char *path)
{
    const char *base = gir_path_basename(path);
    size_t n = strlen(base);
    if (gir_str_ends_with(base, ".relayviz.json"))
        n -= strlen(".relayviz.json");
    else if (gir_str_ends_with(base, ".json"))
        n -= strlen(".json");
    return gir_strdupf("%.*s", (int)n, base);
}

gir_status gir_relayviz_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err)
{
    *out = NULL;
    int64_t max_bytes;
    gir_status st = gir_options_int(opts, "max-bytes", 0, &max_bytes, err);
    if (st)
        return st;
    rv_reader r = { .err = err };
    if ((st = gir_options_int(opts, "batch-size", 0, &r.batch, err)))
        return st;
    if (gir_options_get(opts, "batch-size") && r.batch < 1)
        return gir_fail(err, GIR_E_ARGUMENT, "option batch-size=%lld is not a positive integer", (long long)r.batch);
    gir_json_doc *doc = NULL;
    rv_params *params = NULL;
    char *ppath = NULL;
    const char *popt = gir_options_get(opts, "params");
    if ((st = gir_json_parse_file(path, max_bytes > 0 ? (size_t)max_bytes : 0, NULL, &doc, err)))
        return st;
    r.doc = doc;
    if ((st = gir_graph_new(&r.g, err)))
        goto done;
    if ((st = check_root(&r, gir_json_root(doc))))
        goto done;
    /* The companion weights: --params, else <model>.params if it exists. */
    ppath = popt ? gir_strdupf("%s", popt) : gir_relayviz_params_path(path);
    if (!ppath) {
        st = gir_nomem(err);
        goto done;
    }
    if (popt || gir_path_exists(ppath)) {
        if ((st = rv_params_open(ppath, &params, err))) {
            gir_err_file(err, ppath);
            goto done;
        }
        r.params = params;
    }
    char *name = graph_name(path);
    r.g->name = name ? gir_arena_strdup(&r.g->arena, name) : NULL;
    free(name);
    if (gir_attrs_set_string(r.g, &r.g->meta, "source.format", "relayviz", err) ||
        (params && gir_attrs_set_string(r.g, &r.g->meta, "source.params", ppath, err))) {
        st = gir_nomem(err);
        goto done;
    }
    st = read_program(&r, gir_json_root(doc));
done:
    for (size_t i = 0; i < r.n; i++)
        gir_tensor_unref(r.nodes ? r.nodes[i].data : NULL);
    for (size_t i = 0; i < r.n_calls; i++)
        free(r.calls[i].outs);
    free(r.calls);
    free(r.tensors);
    free(r.nodes);
    free(r.vals);
    gir_arena_free(&r.scratch);
    rv_params_free(params);
    free(ppath);
    gir_json_doc_free(doc);
    if (st) {
        gir_graph_free(r.g);
        return st;
    }
    *out = r.g;
    return GIR_OK;
}
