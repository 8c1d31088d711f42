/* The executor: topological order, static memory plan with buffer reuse
 * (values placed in their Concat's buffer), constant folding, running the
 * plan with the fusions fuse.c decides, and the public session API. */
#include "session.h"
#include "core/limits.h"

#include "passes/passes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void clear_warnings(gir_session *s)
{
    for (size_t i = 0; i < s->n_warnings; i++)
        free(s->warnings[i]);
    s->n_warnings = 0;
}

void rt_warn(rt_call *c, const char *fmt, ...)
{
    gir_session *s = c->session;
    va_list ap;
    va_start(ap, fmt);
    char *msg = gir_vstrdupf(fmt, ap);
    va_end(ap);
    char *full = msg ? gir_strdupf("node '%s': %s", c->node->name, msg) : NULL;
    free(msg);
    if (!full)
        return;
    if (s->n_warnings >= 1000 || !GIR_GROW(s->warnings, s->cap_warnings, s->n_warnings + 1)) {
        free(full);
        return;
    }
    s->warnings[s->n_warnings++] = full;
}

GIR_API size_t gir_session_warning_count(const gir_session *s)
{
    return s->n_warnings;
}

GIR_API const char *gir_session_warning(const gir_session *s, size_t i)
{
    return i < s->n_warnings ? s->warnings[i] : NULL;
}

/* ---- helpers used by kernels ------------------------------------------- */

gir_status rt_no_kernel_dtype(const rt_call *c, gir_dtype dt, gir_error *err)
{
    return gir_fail(err, GIR_E_NO_KERNEL, "no kernel for %s on %s", gir_op_name(c->node->op), gir_dtype_name(dt));
}

gir_status rt_set_out(rt_tensor *out, gir_dtype dt, const gir_shape *shape, gir_error *err)
{
    uint64_t bytes;
    gir_status st = gir_tensor_size(dt, shape, &bytes, err);
    if (st)
        return st;
    out->dtype = dt;
    out->shape = *shape;
    out->numel = (size_t)(bytes / gir_dtype_size(dt));
    return GIR_OK;
}

gir_status rt_want_dtype(const rt_call *c, size_t i, gir_dtype dt, gir_error *err)
{
    if (i >= c->n_in || !c->in[i])
        return gir_fail(err, GIR_E_ARGUMENT, "%s needs input %zu", gir_op_name(c->node->op), i);
    if (c->in[i]->dtype != dt)
        return gir_fail(err, GIR_E_DTYPE, "input %zu of %s is %s, expected %s", i, gir_op_name(c->node->op),
                        gir_dtype_name(c->in[i]->dtype), gir_dtype_name(dt));
    return GIR_OK;
}

gir_status rt_axis(const rt_call *c, const char *attr, int64_t axis, int rank, int *out, gir_error *err)
{
    (void)c;
    if (axis < -(int64_t)rank || axis >= (int64_t)rank)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s %lld is outside [-%d, %d)", attr, (long long)axis, rank, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return GIR_OK;
}

gir_status rt_broadcast_shape(const rt_call *c, const gir_shape *a, const gir_shape *b, gir_shape *out,
                              gir_error *err)
{
    (void)c;
    int r = a->rank > b->rank ? a->rank : b->rank;
    gir_shape res = { r, { 0 } }; /* out may be a or b */
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[96], sb[96];
            return gir_fail(err, GIR_E_SHAPE, "shapes %s and %s do not broadcast", gir_shape_str(a, sa, sizeof sa),
                            gir_shape_str(b, sb, sizeof sb));
        }
        res.dims[i] = da == 1 ? db : da;
    }
    *out = res;
    return GIR_OK;
}

void *rt_state(rt_call *c, size_t size)
{
    if (!c->state)
        c->state = calloc(1, size);
    return c->state;
}

/* Units of align items, in pieces of about a quarter of a worker's share
 * (gir_threads_chunks: a slowed worker's share goes to the others). */
typedef struct pf_job {
    void (*fn)(void *, size_t, size_t, int);
    void *ctx;
    size_t total, align;
} pf_job;

static void pf_units(void *ctx, size_t u0, size_t u1, int worker)
{
    const pf_job *j = ctx;
    size_t e = u1 * j->align;
    j->fn(j->ctx, u0 * j->align, e < j->total ? e : j->total, worker);
}

void rt_parallel_for(gir_threads *th, size_t total, size_t align, size_t min_per_thread,
                     void (*fn)(void *ctx, size_t begin, size_t end, int worker), void *ctx)
{
    if (total == 0)
        return;
    if (!th || gir_threads_count(th) == 1 || total < min_per_thread * 2) {
        fn(ctx, 0, total, 0);
        return;
    }
    if (align == 0)
        align = 1;
    pf_job j = { fn, ctx, total, align };
    size_t units = (total + align - 1) / align;
    gir_threads_chunks(th, units, units / (4 * (size_t)gir_threads_count(th)), pf_units, &j);
}

/* ---- session creation -------------------------------------------------- */

static void node_free_state(rt_node *rn)
{
    if (rn->k && rn->k->release && rn->call.state)
        rn->k->release(rn->call.state);
    rn->call.state = NULL;
}

static void node_free_call(rt_node *rn)
{
    node_free_state(rn);
    free(rn->call.in);
    free(rn->call.in_const);
    free(rn->call.in_done);
    free(rn->call.out);
}

static void free_buffers(gir_session *s)
{
    for (size_t i = 0; s->vals && i < s->g->n_values; i++) {
        free(s->vals[i].folded);
        s->vals[i].folded = NULL;
    }
    for (size_t i = 0; i < s->n_bufs; i++)
        free(s->bufs[i].p);
    free(s->bufs);
    s->bufs = NULL;
    s->n_bufs = s->cap_bufs = 0;
    free(s->free_bufs);
    s->free_bufs = NULL;
    s->n_free = 0;
    free(s->scratch);
    s->scratch = NULL;
    s->scratch_bytes = 0;
}

static void free_results(gir_session *s)
{
    for (size_t i = 0; i < s->n_results; i++)
        gir_tensor_unref(s->results[i]);
    free(s->results);
    s->results = NULL;
    s->n_results = 0;
}

GIR_API void gir_session_free(gir_session *s)
{
    if (!s)
        return;
    if (s->nodes)
        for (size_t i = 0; i < s->g->n_nodes; i++)
            node_free_call(&s->nodes[i]);
    if (s->vals)
        for (size_t i = 0; i < s->g->n_values; i++) {
            rt_value *v = &s->vals[i];
            gir_tensor_unref(v->fed);
            if (v->src) {
                if (v->we_loaded)
                    gir_tensor_unload(v->src);
                gir_tensor_unref(v->src);
            }
        }
    free_buffers(s);
    free_results(s);
    clear_warnings(s);
    free(s->warnings);
    gir_threads_free(s->th);
    free(s->vals);
    free(s->nodes);
    free(s->order);
    free(s->inputs);
    free(s->planned_shapes);
    free(s);
}

/* Every node must have a kernel: one error naming the first such node and
 * every distinct op without one. */
static gir_status check_kernels(gir_session *s, gir_error *err)
{
    const gir_graph *g = s->g;
    gir_buf ops = GIR_BUF_INIT;
    const gir_node *first = NULL;
    size_t count = 0;
    for (size_t oi = 0; oi < s->n_order; oi++) {
        const gir_node *n = g->nodes[s->order[oi]];
        if (gir_rt_kernel(n->op))
            continue;
        char name[256];
        if (n->op == GIR_OP_OPAQUE)
            snprintf(name, sizeof name, "%s:%s", n->opaque_format ? n->opaque_format : "?",
                     n->opaque_op ? n->opaque_op : "?");
        else
            snprintf(name, sizeof name, "%s", gir_op_name(n->op));
        count++;
        if (!first)
            first = n;
        /* list each op once */
        bool seen = false;
        if (ops.data) {
            const char *p = ops.data;
            size_t L = strlen(name);
            while ((p = strstr(p, name)) != NULL) {
                if ((p == ops.data || p[-1] == ' ') && (p[L] == ',' || p[L] == '\0')) {
                    seen = true;
                    break;
                }
                p += L;
            }
        }
        if (!seen) {
            if (ops.len)
                gir_buf_puts(&ops, ", ");
            gir_buf_puts(&ops, name);
        }
    }
    if (!first)
        return GIR_OK;
    gir_status st = gir_fail(err, GIR_E_NO_KERNEL, "no kernel for %s (%zu node%s)", ops.data ? ops.data : "?", count,
                             count == 1 ? "" : "s");
    gir_err_node(err, first->name);
    gir_buf_free(&ops);
    return st;
}

static gir_status setup_values(gir_session *s, gir_error *err)
{
    const gir_graph *g = s->g;
    for (size_t i = 0; i < g->n_values; i++) {
        rt_value *v = &s->vals[i];
        const gir_value *gv = g->values[i];
        v->buf = -1;
        v->alias = -1;
        v->consumer = -1;
        if (gv->data) {
            v->kind = RV_CONST;
        } else if (gv->kind == GIR_VALUE_INPUT) {
            v->kind = RV_INPUT;
        } else {
            v->kind = RV_INTER;
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        for (size_t j = 0; j < n->n_in; j++) {
            int32_t vi = n->in[j];
            if (vi < -1 || vi >= (int32_t)g->n_values) {
                gir_fail(err, GIR_E_REFERENCE, "input %zu refers to value %d of %zu", j, vi, g->n_values);
                gir_err_node(err, n->name);
                return err ? err->code : GIR_E_REFERENCE;
            }
            if (vi < 0)
                continue;
            rt_value *v = &s->vals[vi];
            const gir_value *gv = g->values[vi];
            if (v->kind == RV_INTER && gv->producer < 0) {
                gir_status st = gir_fail(err, gv->kind == GIR_VALUE_WEIGHT ? GIR_E_PARAMS : GIR_E_REFERENCE,
                                         gv->kind == GIR_VALUE_WEIGHT ? "weight '%s' has no data"
                                                                      : "value '%s' is read but nothing produces it",
                                         gv->name);
                gir_err_node(err, n->name);
                return st;
            }
            v->uses++;
            v->consumer = (int32_t)i;
        }
        for (size_t j = 0; j < n->n_out; j++) {
            int32_t vi = n->out[j];
            if (vi < -1 || vi >= (int32_t)g->n_values) {
                gir_status st = gir_fail(err, GIR_E_REFERENCE, "output %zu refers to value %d of %zu", j, vi,
                                         g->n_values);
                gir_err_node(err, n->name);
                return st;
            }
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        int32_t vi = g->outputs[i];
        if (vi < 0 || vi >= (int32_t)g->n_values)
            return gir_fail(err, GIR_E_REFERENCE, "graph output %zu refers to value %d of %zu", i, vi, g->n_values);
        rt_value *v = &s->vals[vi];
        if (v->kind == RV_INTER && g->values[vi]->producer < 0)
            return gir_fail(err, GIR_E_REFERENCE, "graph output '%s' is produced by no node", g->values[vi]->name);
        v->is_output = true;
        v->uses++;
    }
    /* Session inputs: graph inputs without data, in order. */
    s->inputs = malloc((g->n_inputs ? g->n_inputs : 1) * sizeof *s->inputs);
    if (!s->inputs)
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_inputs; i++) {
        int32_t vi = g->inputs[i];
        if (vi < 0 || vi >= (int32_t)g->n_values)
            return gir_fail(err, GIR_E_REFERENCE, "graph input %zu refers to value %d of %zu", i, vi, g->n_values);
        if (s->vals[vi].kind == RV_INPUT)
            s->inputs[s->n_inputs++] = vi;
    }
    /* An input-kind value that is not a graph input can never be fed. */
    for (size_t i = 0; i < g->n_values; i++) {
        rt_value *v = &s->vals[i];
        bool listed = false;
        for (size_t k = 0; k < s->n_inputs && v->kind == RV_INPUT; k++)
            if (s->inputs[k] == (int32_t)i)
                listed = true;
        if (v->kind == RV_INPUT && !listed) {
            v->kind = RV_INTER;
            if (v->uses > 0) {
                gir_status st = gir_fail(err, GIR_E_REFERENCE, "value '%s' is read but is neither a graph input nor produced by a node",
                                         g->values[i]->name);
                if (v->consumer >= 0)
                    gir_err_node(err, g->nodes[v->consumer]->name);
                return st;
            }
        }
    }
    /* Load the constants every node reads. */
    for (size_t i = 0; i < g->n_values; i++) {
        rt_value *v = &s->vals[i];
        if (v->kind != RV_CONST || (v->uses == 0 && !v->is_output))
            continue;
        gir_tensor *t = g->values[i]->data;
        v->we_loaded = t->data == NULL;
        const void *data;
        gir_status st = gir_tensor_load(t, &data, err);
        if (st) {
            gir_err_node(err, g->values[i]->name);
            return st;
        }
        v->src = gir_tensor_ref(t);
        v->t.dtype = t->dtype;
        v->t.shape = t->shape;
        v->t.numel = (size_t)(gir_dtype_size(t->dtype) ? t->nbytes / gir_dtype_size(t->dtype) : 0);
        v->t.data = (void *)data;
    }
    return GIR_OK;
}

/* Concat in place: an intermediate value whose every reader is a Concat can
 * be computed straight into its slot of one of them, its host, and the
 * Concat then copies nothing for it.  The host is the reader with the most
 * inputs: in a DenseNet block every layer's Concat reads a prefix of the
 * block's last one, so all of them can then be views of that one's buffer
 * (see concat_prefix_host).  Whether a slot is contiguous (every dimension
 * before the axis 1) is decided while planning, when the shapes are known. */
static gir_status find_concat_hosts(gir_session *s, gir_error *err)
{
    const gir_graph *g = s->g;
    int *slots = calloc(g->n_values ? g->n_values : 1, sizeof *slots);
    if (!slots)
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_values; i++)
        s->vals[i].cat_node = -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        if (n->op != GIR_OP_Concat || n->n_out != 1 || n->out[0] < 0)
            continue;
        for (size_t j = 0; j < n->n_in; j++) {
            int32_t vi = n->in[j];
            if (vi < 0)
                continue;
            rt_value *v = &s->vals[vi];
            slots[vi]++;
            if (v->cat_node < 0 || g->nodes[v->cat_node]->n_in < n->n_in) {
                v->cat_node = (int32_t)i;
                v->cat_idx = (int32_t)j;
            }
        }
    }
    for (size_t i = 0; i < g->n_values; i++) {
        rt_value *v = &s->vals[i];
        if (v->kind != RV_INTER || v->is_output || slots[i] != v->uses)
            v->cat_node = -1;
    }
    free(slots);
    return GIR_OK;
}

static gir_status setup_nodes(gir_session *s, gir_error *err)
{
    const gir_graph *g = s->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        rt_node *rn = &s->nodes[i];
        const gir_node *n = g->nodes[i];
        rn->n = n;
        if ((unsigned)n->op >= GIR_OP_COUNT_) {
            gir_status st = gir_fail(err, GIR_E_INTERNAL, "operator id %d is not in the op table", (int)n->op);
            gir_err_node(err, n->name);
            return st;
        }
        rn->k = gir_rt_kernel(n->op);
        rt_call *c = &rn->call;
        c->g = g;
        c->node = n;
        c->session = s;
        c->n_in = n->n_in;
        c->n_out = n->n_out;
        c->in = calloc(n->n_in ? n->n_in : 1, sizeof *c->in);
        c->in_const = calloc(n->n_in ? n->n_in : 1, sizeof *c->in_const);
        c->in_done = calloc(n->n_in ? n->n_in : 1, sizeof *c->in_done);
        c->out = calloc(n->n_out ? n->n_out : 1, sizeof *c->out);
        if (!c->in || !c->in_const || !c->in_done || !c->out)
            return gir_nomem(err);
    }
    return GIR_OK;
}

GIR_API gir_status gir_session_new(const gir_graph *g, int threads, gir_session **out, gir_error *err)
{
    *out = NULL;
    if (!g)
        return gir_fail(err, GIR_E_ARGUMENT, "no graph to run");
    gir_session *s = calloc(1, sizeof *s);
    if (!s)
        return gir_nomem(err);
    s->g = g;
    s->stream = stdout;
    s->max_elements = gir_limit(GIR_LIM_RUN_ELEMENTS);
    s->vals = calloc(g->n_values ? g->n_values : 1, sizeof *s->vals);
    s->nodes = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *s->nodes);
    s->planned_shapes = calloc(g->n_values ? g->n_values : 1, sizeof *s->planned_shapes);
    gir_status st;
    if (!s->vals || !s->nodes || !s->planned_shapes) {
        st = gir_nomem(err);
        goto fail;
    }
    if ((st = gir_threads_new(threads, &s->th, err)))
        goto fail;
    /* structure, operand counts and attributes against the op table */
    if ((st = gir_validate(g, err)))
        goto fail;
    if ((st = gir_topo_order(g, &s->order, err)))
        goto fail;
    s->n_order = g->n_nodes;
    if ((st = setup_nodes(s, err)))
        goto fail;
    if ((st = check_kernels(s, err)))
        goto fail;
    if ((st = setup_values(s, err)) || (st = find_concat_hosts(s, err)))
        goto fail;
    *out = s;
    return GIR_OK;
fail:
    gir_session_free(s);
    return st;
}

GIR_API void gir_session_set_spin(gir_session *s, uint32_t microseconds)
{
    if (s)
        gir_threads_set_spin(s->th, microseconds);
}

/* ---- inputs -------------------------------------------------------------- */

GIR_API void gir_session_set_max_elements(gir_session *s, uint64_t n)
{
    if (s) {
        s->max_elements = n ? n : gir_limit_default(GIR_LIM_RUN_ELEMENTS);
        s->planned = false;
    }
}

GIR_API void gir_session_keep_values(gir_session *s, bool keep)
{
    if (s->keep != keep) {
        s->keep = keep;
        s->planned = false;
    }
}

GIR_API void gir_session_set_print_stream(gir_session *s, void *stdio_file)
{
    s->stream = stdio_file ? stdio_file : stdout;
}

GIR_API size_t gir_session_input_count(const gir_session *s)
{
    return s->n_inputs;
}

GIR_API const gir_value *gir_session_input(const gir_session *s, size_t i)
{
    return i < s->n_inputs ? s->g->values[s->inputs[i]] : NULL;
}

static gir_status feed(gir_session *s, int32_t vi, gir_tensor *t, gir_error *err)
{
    const gir_value *gv = s->g->values[vi];
    char a[128], b[128];
    if (gv->dtype != GIR_DT_UNKNOWN && t->dtype != gv->dtype)
        return gir_fail(err, GIR_E_DTYPE, "input '%s' is %s, got %s", gv->name, gir_dtype_name(gv->dtype),
                        gir_dtype_name(t->dtype));
    if (gv->shape.rank >= 0) {
        bool ok = gv->shape.rank == t->shape.rank;
        for (int d = 0; ok && d < gv->shape.rank; d++)
            if (gv->shape.dims[d] >= 0 && gv->shape.dims[d] != t->shape.dims[d])
                ok = false;
        if (!ok)
            return gir_fail(err, GIR_E_SHAPE, "input '%s' has shape %s, got %s", gv->name,
                            gir_shape_str(&gv->shape, a, sizeof a), gir_shape_str(&t->shape, b, sizeof b));
    }
    gir_status st = gir_tensor_load(t, NULL, err);
    if (st)
        return st;
    rt_value *v = &s->vals[vi];
    if (v->kind == RV_CONST) {
        /* an initializer given as a graph input: the fed tensor overrides it */
        if (!gir_shape_equal(&t->shape, &v->t.shape) || t->dtype != v->t.dtype)
            return gir_fail(err, GIR_E_SHAPE, "input '%s' overrides a constant of shape %s with shape %s", gv->name,
                            gir_shape_str(&v->t.shape, a, sizeof a), gir_shape_str(&t->shape, b, sizeof b));
    }
    if (v->kind == RV_CONST)
        s->consts_fed = true;
    gir_tensor_unref(v->fed);
    v->fed = gir_tensor_ref(t);
    return GIR_OK;
}

GIR_API gir_status gir_session_set_input(gir_session *s, size_t i, gir_tensor *t, gir_error *err)
{
    if (i >= s->n_inputs)
        return gir_fail(err, GIR_E_ARGUMENT, "input %zu does not exist (the graph takes %zu)", i, s->n_inputs);
    return feed(s, s->inputs[i], t, err);
}

GIR_API gir_status gir_session_set_input_named(gir_session *s, const char *name, gir_tensor *t, gir_error *err)
{
    int32_t vi = gir_graph_value_index(s->g, name);
    bool is_input = false;
    for (size_t i = 0; vi >= 0 && i < s->g->n_inputs; i++)
        if (s->g->inputs[i] == vi)
            is_input = true;
    if (!is_input)
        return gir_fail(err, GIR_E_ARGUMENT, "the graph has no input named '%s'", name);
    return feed(s, vi, t, err);
}

/* ---- planning ------------------------------------------------------------ */

static gir_status buf_alloc(gir_session *s, size_t bytes, int *out, gir_error *err)
{
    /* best fit among free buffers; else grow the largest free one; else new */
    int best = -1, largest = -1;
    size_t bi = 0;
    for (size_t i = 0; i < s->n_free; i++) {
        rt_buffer *b = &s->bufs[s->free_bufs[i]];
        if (b->cap >= bytes && (best < 0 || b->cap < s->bufs[s->free_bufs[best]].cap))
            best = (int)i;
        if (largest < 0 || b->cap > s->bufs[s->free_bufs[largest]].cap)
            largest = (int)i;
    }
    if (best < 0)
        best = largest;
    if (best >= 0) {
        bi = (size_t)s->free_bufs[best];
        s->free_bufs[best] = s->free_bufs[--s->n_free];
        if (s->bufs[bi].cap < bytes)
            s->bufs[bi].cap = bytes;
    } else {
        if (!GIR_GROW(s->bufs, s->cap_bufs, s->n_bufs + 1))
            return gir_nomem(err);
        bi = s->n_bufs++;
        s->bufs[bi].cap = bytes;
        s->bufs[bi].p = NULL;
        int *nf = realloc(s->free_bufs, s->cap_bufs * sizeof *nf);
        if (!nf)
            return gir_nomem(err);
        s->free_bufs = nf;
    }
    s->bufs[bi].refs = 1;
    *out = (int)bi;
    return GIR_OK;
}

static void buf_release(gir_session *s, int bi)
{
    if (bi < 0)
        return;
    if (--s->bufs[bi].refs == 0)
        s->free_bufs[s->n_free++] = bi;
}

static void *value_data(const gir_session *s, int32_t vi);

/* Constants every reader packed at prepare are unloaded after planning
 * (bounded memory: a model's weights are not held twice); a new plan loads
 * them again first. */
static gir_status reload_dropped(gir_session *s, gir_error *err)
{
    for (size_t i = 0; i < s->g->n_values; i++) {
        rt_value *v = &s->vals[i];
        if (!v->dropped)
            continue;
        const void *data;
        gir_status st = gir_tensor_load(v->src, &data, err);
        if (st) {
            gir_err_node(err, s->g->values[i]->name);
            return st;
        }
        v->t.data = (void *)data;
        v->dropped = false;
    }
    return GIR_OK;
}

/* A constant the session loaded whose readers have all been prepared: if
 * every one of them packed it (in_done), it is unloaded now, before later
 * nodes pack theirs, so a model's weights are never held twice. */
static bool droppable(const gir_session *s, const rt_value *v)
{
    return v->kind == RV_CONST && v->src && v->we_loaded && !v->fed && !v->is_output && v->uses > 0 && !s->keep &&
           !v->dropped;
}

static void drop_after_prepare(gir_session *s, const rt_node *rn)
{
    const gir_node *n = rn->n;
    for (size_t j = 0; j < n->n_in; j++) {
        int32_t vi = n->in[j];
        if (vi < 0)
            continue;
        rt_value *v = &s->vals[vi];
        if (v->folded && !s->keep) {
            /* a folded value every reader packed is freed the same way */
            if (rn->skip || !rn->call.in_done[j])
                v->needed = true;
            if (--v->pending == 0 && !v->needed) {
                free(v->folded);
                v->folded = NULL;
                v->t.data = NULL;
            }
            continue;
        }
        if (!droppable(s, v))
            continue;
        if (rn->skip || !rn->call.in_done[j])
            v->needed = true;
        if (--v->pending == 0 && !v->needed) {
            gir_tensor_unload(v->src);
            v->t.data = NULL;
            v->dropped = true;
        }
    }
}

/* Constant folding while planning: a node whose inputs are all constants
 * (weights, or values folded before it) and that makes one output no
 * larger than its inputs (a Transpose or Reshape of a weight, a weight
 * computed from others) runs once here; its result replaces the inputs,
 * which every run would otherwise recompute (ONNX exports of Linear layers
 * transpose their weight in the graph). */
static bool may_fold(const gir_session *s, const rt_node *rn)
{
    const gir_node *n = rn->n;
    if (rn->k->flags & (RT_SIDE_EFFECT | RT_VIEW) || n->n_in < 1 || n->n_out != 1 || n->out[0] < 0 ||
        s->vals[n->out[0]].is_output)
        return false;
    for (size_t j = 0; j < n->n_in; j++)
        if (n->in[j] >= 0 && (!rn->call.in_const[j] || !rn->call.in[j]->data))
            return false;
    return true;
}

/* After prepare: runs node rn into its own memory when its output is no
 * larger than its inputs (*done says whether it did). */
static gir_status fold_node(gir_session *s, rt_node *rn, bool *done, gir_error *err)
{
    const gir_node *n = rn->n;
    rt_call *c = &rn->call;
    rt_value *v = &s->vals[n->out[0]];
    *done = false;
    uint64_t in_bytes = 0, bytes = (uint64_t)v->t.numel * gir_dtype_size(v->t.dtype);
    for (size_t j = 0; j < n->n_in; j++)
        if (n->in[j] >= 0)
            in_bytes += (uint64_t)c->in[j]->numel * gir_dtype_size(c->in[j]->dtype);
    if (v->t.dtype == GIR_DT_UNKNOWN || bytes > in_bytes)
        return GIR_OK;
    void *out = NULL, *scratch = NULL;
    if (posix_memalign(&out, 64, bytes ? (size_t)bytes : 1) != 0 ||
        (c->scratch_bytes && posix_memalign(&scratch, 64, (c->scratch_bytes + 63) / 64 * 64) != 0)) {
        free(out);
        return gir_nomem(err);
    }
    v->t.data = out;
    c->scratch = scratch;
    gir_status st = rn->k->run(c, err);
    free(scratch);
    c->scratch = NULL;
    c->scratch_bytes = 0;
    if (st) {
        free(out);
        v->t.data = NULL;
        return st;
    }
    v->folded = out;
    for (size_t j = 0; j < n->n_in; j++)
        c->in_done[j] = true;
    rn->folded = true;
    *done = true;
    return GIR_OK;
}

/* The value a fused chain ends in: output vi of node self followed by the
 * nodes fused into self that read it (a Relu, a bias Add): what the next
 * unfused node reads, in vi's buffer. */
static int32_t fused_tail(const gir_session *s, int32_t self, int32_t vi)
{
    for (int32_t q; (q = sole_consumer(s, vi)) >= 0 && s->nodes[q].skip && s->nodes[q].host == self &&
                    s->g->nodes[q]->n_out == 1 && s->g->nodes[q]->out[0] >= 0;)
        vi = s->g->nodes[q]->out[0];
    return vi;
}

/* The reader a node may hand its result to blocked (rt_call.reader): the
 * one Conv (with constant weights) or MaxPool that reads the end of its
 * fused chain, when that value is no graph output, the session keeps no
 * values, and no residual is added into the result. */
static void blocked_reader(gir_session *s, rt_node *rn)
{
    const gir_node *n = rn->n;
    if (s->keep || rn->call.accumulate || n->n_out < 1 || n->out[0] < 0)
        return;
    /* the chain's end: the value the last node fused into rn writes; a
     * gated activation's Mul (SiLU, HardSwish, GELU) reads rn's result
     * beside its gate, so there the chain is no line of sole consumers and
     * the nodes are looked for in the order they run */
    int32_t self = (int32_t)(rn - s->nodes), tail = fused_tail(s, self, n->out[0]);
    int kind = rn->call.act.kind;
    if (rn->call.act.on && (kind == RT_ACT_SILU || kind == RT_ACT_HSWISH || kind == RT_ACT_GELU))
        for (size_t oi = 0; oi < s->n_order; oi++) {
            const rt_node *f = &s->nodes[s->order[oi]];
            if (f->skip && f->host == self && f->n->n_out == 1 && f->n->out[0] >= 0)
                tail = f->n->out[0];
        }
    int32_t q = sole_consumer(s, tail);
    if (q < 0 || s->vals[tail].is_output)
        return;
    const gir_node *qn = s->g->nodes[q];
    if (qn->op == GIR_OP_MaxPool && qn->n_in == 1 && qn->in[0] == tail) {
        rn->call.reader = qn;
        return;
    }
    if (qn->op != GIR_OP_Conv || qn->n_in < 2 || qn->in[0] != tail || qn->in[1] < 0 || qn->in[1] == tail ||
        !value_const(s, qn->in[1]))
        return;
    rn->call.reader = qn;
    rn->call.reader_w = &s->vals[qn->in[1]].t;
}

static void buf_grow(gir_session *s, int bi, size_t bytes)
{
    if (s->bufs[bi].cap < bytes)
        s->bufs[bi].cap = bytes;
}

/* Tries to give output vi of node self (bytes long, its shape known) its slot
 * in the buffer of the Concat that reads the chain's tail: there the inputs
 * lie one after another when every dimension before the axis is 1, so the
 * slot's offset is the size of the inputs before it, which must be known. */
static gir_status place_in_concat(gir_session *s, int32_t self, int32_t vi, size_t bytes, bool *placed,
                                  gir_error *err)
{
    *placed = false;
    rt_value *v = &s->vals[vi], *tv = &s->vals[fused_tail(s, self, vi)];
    if (tv->cat_node < 0 || tv->cat_node == self)
        return GIR_OK;
    rt_node *h = &s->nodes[tv->cat_node];
    const gir_node *hn = h->n;
    int axis = 0;
    if (rt_axis(NULL, "axis", gir_node_int(hn, "axis", 0), v->t.shape.rank, &axis, NULL))
        return GIR_OK;
    for (int d = 0; d < axis; d++)
        if (v->t.shape.dims[d] != 1)
            return GIR_OK;
    size_t off = 0, es = gir_dtype_size(v->t.dtype);
    for (int32_t k = 0; k < tv->cat_idx; k++) {
        const rt_value *u = hn->in[k] >= 0 ? &s->vals[hn->in[k]] : NULL;
        if (!u || !u->produced || u->t.dtype != v->t.dtype)
            return GIR_OK;
        off += u->t.numel * es;
    }
    if (h->grp_buf < 0) {
        /* its first reference is the Concat's result, taken when it is planned */
        gir_status st = buf_alloc(s, off + bytes ? off + bytes : 1, &h->grp_buf, err);
        if (st)
            return st;
    }
    buf_grow(s, h->grp_buf, off + bytes);
    s->bufs[h->grp_buf].refs++;
    v->buf = h->grp_buf;
    v->off = off;
    tv->placed = *placed = true;
    return GIR_OK;
}

/* A Concat (node self) whose every input lies in its slot of another
 * Concat's buffer, at the same index, over the same axis, reads a prefix of
 * that buffer: its result is that prefix.  Returns that Concat, or -1. */
static int32_t concat_prefix_host(const gir_session *s, int32_t self)
{
    const gir_node *n = s->g->nodes[self];
    if (n->op != GIR_OP_Concat || n->n_in == 0 || n->in[0] < 0 || n->out[0] < 0)
        return -1;
    int32_t h = s->vals[n->in[0]].cat_node;
    if (h < 0 || h == self || s->nodes[h].grp_buf < 0)
        return -1;
    for (size_t k = 0; k < n->n_in; k++) {
        const rt_value *u = n->in[k] >= 0 ? &s->vals[n->in[k]] : NULL;
        if (!u || !u->placed || u->cat_node != h || u->cat_idx != (int32_t)k)
            return -1;
    }
    int rank = s->vals[n->out[0]].t.shape.rank, a = 0, b = 0;
    if (rt_axis(NULL, "axis", gir_node_int(n, "axis", 0), rank, &a, NULL) ||
        rt_axis(NULL, "axis", gir_node_int(s->g->nodes[h], "axis", 0), rank, &b, NULL) || a != b)
        return -1;
    return h;
}

static gir_status plan(gir_session *s, gir_error *err)
{
    const gir_graph *g = s->g;
    free_buffers(s);
    s->planned = false;
    gir_status rst = reload_dropped(s, err);
    if (rst)
        return rst;
    for (size_t i = 0; i < g->n_values; i++) {
        rt_value *v = &s->vals[i];
        v->remaining = v->uses;
        v->buf = -1;
        v->off = 0;
        v->placed = false;
        v->alias = -1;
        v->produced = v->kind != RV_INTER;
        v->needed = false;
        v->pending = v->uses - (v->is_output ? 1 : 0);
        if (v->kind == RV_INPUT) {
            if (!v->fed)
                return gir_fail(err, GIR_E_ARGUMENT, "input '%s' was not given", g->values[i]->name);
            v->t.dtype = v->fed->dtype;
            v->t.shape = v->fed->shape;
            v->t.numel = (size_t)(gir_dtype_size(v->fed->dtype) ? v->fed->nbytes / gir_dtype_size(v->fed->dtype) : 0);
            s->planned_shapes[i] = v->fed->shape;
        } else if (v->kind == RV_INTER) {
            memset(&v->t, 0, sizeof v->t);
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        s->nodes[i].skip = s->nodes[i].folded = false;
        s->nodes[i].grp_buf = -1;
    }
    size_t scratch = 0;
    uint64_t elements = 0; /* computed by the nodes so far: bounded before any buffer exists */
    for (size_t oi = 0; oi < s->n_order; oi++) {
        rt_node *rn = &s->nodes[s->order[oi]];
        const gir_node *n = rn->n;
        rt_call *c = &rn->call;
        gir_status st;
        for (size_t j = 0; j < n->n_in; j++) {
            int32_t vi = n->in[j];
            c->in[j] = vi >= 0 ? &s->vals[vi].t : NULL;
            c->in_const[j] = vi >= 0 && value_const(s, vi);
            c->in_done[j] = false;
        }
        for (size_t j = 0; j < n->n_out; j++)
            c->out[j] = n->out[j] >= 0 ? &s->vals[n->out[j]].t : NULL;
        c->th = s->th;
        c->stream = s->stream;
        if (rn->skip) {
            /* fused into its producer: its output is the producer's result */
            /* (a fused Add's two inputs share one buffer) */
            /* (the operand in the fused chain: the one with a buffer, not a constant) */
            int32_t o = n->out[0], src = n->in[0];
            for (size_t j = 0; j < n->n_in && (src < 0 || s->vals[src].buf < 0); j++)
                src = n->in[j];
            s->vals[o].t = s->vals[src].t;
            s->vals[o].buf = s->vals[src].buf;
            s->vals[o].off = s->vals[src].off;
            s->bufs[s->vals[o].buf].refs++;
            s->vals[o].produced = true;
        } else {
            bool fold = may_fold(s, rn), folded = false;
            c->reader = NULL;
            c->reader_w = NULL;
            if (fold) {
                memset(&c->act, 0, sizeof c->act);
                c->accumulate = false;
            } else {
                rt_plan_fusion(s, rn);
                blocked_reader(s, rn);
            }
            st = rn->k->prepare(c, err);
            if (!st && fold)
                st = fold_node(s, rn, &folded, err);
            if (st) {
                gir_err_node(err, n->name);
                return st;
            }
            if (folded) {
                s->vals[n->out[0]].produced = true;
                goto prepared;
            }
            if (c->act.on && (!c->out[0] || c->out[0]->dtype != GIR_DT_F32))
                rt_undo_fusion(s, rn); /* activations are float kernels */
            if (c->bias && (!c->out[0] || c->out[0]->dtype != GIR_DT_F32 || c->out[0]->shape.rank < c->bias->shape.rank ||
                            c->bias->numel != (size_t)c->out[0]->shape.dims[c->out[0]->shape.rank - 1]))
                rt_undo_fusion(s, rn); /* not a bias of this result */
            if (c->accumulate) {
                int32_t add;
                int32_t res = rt_fused_residual(s, rn, &add);
                rt_value *rv = &s->vals[res];
                if (!gir_shape_equal(&rv->t.shape, &c->out[0]->shape) || c->out[0]->dtype != GIR_DT_F32)
                    rt_undo_fusion(s, rn);
            }
            if (n->n_out > 0 && c->out[0] && c->out[0]->blocked && (!c->reader || c->accumulate)) {
                gir_status e =
                    gir_fail(err, GIR_E_INTERNAL, "%s result is in channel blocks for no reader", gir_op_name(n->op));
                gir_err_node(err, n->name);
                return e;
            }
            for (size_t j = 0; j < n->n_out; j++) {
                int32_t vi = n->out[j];
                if (vi < 0)
                    continue;
                rt_value *v = &s->vals[vi];
                if (v->t.dtype == GIR_DT_UNKNOWN) {
                    gir_status e = gir_fail(err, GIR_E_INTERNAL, "kernel left output %zu of %s without a type", j,
                                            gir_op_name(n->op));
                    gir_err_node(err, n->name);
                    return e;
                }
                if (!gir_add_u64(elements, v->t.numel, &elements) || elements > s->max_elements) {
                    gir_status e = gir_fail(err, GIR_E_LIMIT,
                                            "a run computes more than %" PRIu64 " tensor elements " GIR_LIMIT_HINT,
                                            s->max_elements, gir_limit_name(GIR_LIM_RUN_ELEMENTS),
                                            s->max_elements, gir_limit_name(GIR_LIM_RUN_ELEMENTS),
                                            gir_limit_name(GIR_LIM_RUN_ELEMENTS));
                    gir_err_node(err, n->name);
                    return e;
                }
                size_t bytes = v->t.numel * gir_dtype_size(v->t.dtype);
                if (v->t.blocked && bytes && (bytes = rt_blocked_bytes(&v->t)) == 0) {
                    gir_status e = gir_fail(err, GIR_E_LIMIT, "%s result in channel blocks is too large",
                                            gir_op_name(n->op));
                    gir_err_node(err, n->name);
                    return e;
                }
                int32_t hc;
                bool placed = false;
                int32_t in0 = n->n_in > 0 ? n->in[0] : -1;
                if (j == 0 && (rn->k->flags & RT_VIEW) && in0 >= 0) {
                    rt_value *iv = &s->vals[in0];
                    if (iv->buf >= 0) {
                        v->buf = iv->buf;
                        v->off = iv->off;
                        s->bufs[v->buf].refs++;
                    } else {
                        v->alias = storage_of(s, in0);
                        if (value_const(s, vi)) /* readers may pack it while planning */
                            v->t.data = value_data(s, vi);
                    }
                } else if (j == 0 && c->accumulate) {
                    int32_t add;
                    rt_value *rv = &s->vals[rt_fused_residual(s, rn, &add)];
                    v->buf = rv->buf;
                    v->off = rv->off;
                    s->bufs[v->buf].refs++;
                } else if (j == 0 && rn->grp_buf >= 0) {
                    /* a Concat whose inputs were computed into its buffer:
                     * the reference taken for it then becomes its own */
                    v->buf = rn->grp_buf;
                    buf_grow(s, v->buf, bytes);
                } else if (j == 0 && (hc = concat_prefix_host(s, (int32_t)(rn - s->nodes))) >= 0) {
                    v->buf = s->nodes[hc].grp_buf;
                    buf_grow(s, v->buf, bytes);
                    s->bufs[v->buf].refs++;
                } else if ((st = place_in_concat(s, (int32_t)(rn - s->nodes), vi, bytes, &placed, err))) {
                    return st;
                } else if (placed) {
                    /* computed into its Concat's buffer */
                } else if (j == 0 && (rn->k->flags & RT_INPLACE) && !s->keep && in0 >= 0 &&
                           s->vals[in0].kind == RV_INTER && s->vals[in0].buf >= 0 && !s->vals[in0].is_output &&
                           s->bufs[s->vals[in0].buf].refs == 1 &&
                           s->vals[in0].t.numel * gir_dtype_size(s->vals[in0].t.dtype) == bytes) {
                    /* in0 dies here unless another input slot of this node still reads it */
                    size_t occ = 0;
                    for (size_t k2 = 0; k2 < n->n_in; k2++)
                        if (n->in[k2] == in0)
                            occ++;
                    if (s->vals[in0].remaining == (int)occ && occ == 1) {
                        v->buf = s->vals[in0].buf;
                        v->off = s->vals[in0].off;
                        s->bufs[v->buf].refs++;
                    } else if ((st = buf_alloc(s, bytes ? bytes : 1, &v->buf, err))) {
                        return st;
                    }
                } else if ((st = buf_alloc(s, bytes ? bytes : 1, &v->buf, err))) {
                    return st;
                }
                v->produced = true;
            }
            if (c->scratch_bytes > scratch)
                scratch = c->scratch_bytes;
        }
    prepared:
        drop_after_prepare(s, rn);
        /* inputs die after their last use (never in keep mode) */
        for (size_t j = 0; j < n->n_in; j++) {
            int32_t vi = n->in[j];
            if (vi < 0)
                continue;
            rt_value *v = &s->vals[vi];
            if (--v->remaining == 0 && v->kind == RV_INTER && !s->keep)
                buf_release(s, v->buf);
        }
        for (size_t j = 0; j < n->n_out; j++) {
            int32_t vi = n->out[j];
            if (vi >= 0 && s->vals[vi].uses == 0 && !s->keep)
                buf_release(s, s->vals[vi].buf);
        }
    }
    for (size_t i = 0; i < s->n_bufs; i++) {
        size_t cap = (s->bufs[i].cap + 63) / 64 * 64;
        if (posix_memalign(&s->bufs[i].p, 64, cap) != 0) {
            s->bufs[i].p = NULL;
            return gir_nomem(err);
        }
    }
    if (scratch) {
        size_t cap = (scratch + 63) / 64 * 64;
        if (posix_memalign(&s->scratch, 64, cap) != 0) {
            s->scratch = NULL;
            return gir_nomem(err);
        }
        s->scratch_bytes = scratch;
    }
    s->planned = true;
    return GIR_OK;
}

static bool shapes_changed(const gir_session *s)
{
    for (size_t i = 0; i < s->g->n_values; i++) {
        const rt_value *v = &s->vals[i];
        if (v->kind == RV_INPUT && v->fed &&
            (!gir_shape_equal(&v->fed->shape, &s->planned_shapes[i]) || v->fed->dtype != v->t.dtype))
            return true;
    }
    return false;
}

static void *value_data(const gir_session *s, int32_t vi)
{
    vi = storage_of(s, vi);
    const rt_value *v = &s->vals[vi];
    if (v->folded)
        return v->folded;
    if (v->fed)
        return v->fed->data;
    if (v->kind == RV_CONST)
        return v->src ? v->src->data : NULL;
    return v->buf >= 0 ? (char *)s->bufs[v->buf].p + v->off : NULL;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

GIR_API gir_status gir_session_run(gir_session *s, gir_error *err)
{
    const gir_graph *g = s->g;
    gir_status st;
    free_results(s);
    clear_warnings(s);
    for (size_t i = 0; i < s->n_inputs; i++)
        if (!s->vals[s->inputs[i]].fed)
            return gir_fail(err, GIR_E_ARGUMENT, "input '%s' was not given", g->values[s->inputs[i]]->name);
    if (s->consts_fed) {
        /* constants overridden: kernels rebuild what they packed */
        for (size_t k = 0; k < g->n_nodes; k++)
            node_free_state(&s->nodes[k]);
        s->planned = false;
        s->consts_fed = false;
    }
    if (!s->planned || shapes_changed(s)) {
        if ((st = plan(s, err)))
            return st;
    }
    for (size_t i = 0; i < g->n_values; i++)
        s->vals[i].t.data = value_data(s, (int32_t)i);
    for (size_t oi = 0; oi < s->n_order; oi++) {
        rt_node *rn = &s->nodes[s->order[oi]];
        if (rn->skip || rn->folded)
            continue;
        rn->call.scratch = s->scratch;
        rn->call.stream = s->stream;
        uint64_t t0 = s->profiling ? now_ns() : 0;
        st = rn->k->run(&rn->call, err);
        if (st) {
            gir_err_node(err, rn->n->name);
            return st;
        }
        if (s->profiling)
            rn->prof_ns += now_ns() - t0;
    }
    if (s->profiling)
        s->prof_runs++;
    s->results = calloc(g->n_outputs ? g->n_outputs : 1, sizeof *s->results);
    if (!s->results)
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_outputs; i++) {
        const rt_value *v = &s->vals[g->outputs[i]];
        if ((st = gir_tensor_create(v->t.dtype, &v->t.shape, v->t.data, v->t.numel * gir_dtype_size(v->t.dtype),
                                    &s->results[i], err)))
            return st;
        s->n_results++;
    }
    return GIR_OK;
}

GIR_API size_t gir_session_output_count(const gir_session *s)
{
    return s->g->n_outputs;
}

GIR_API gir_tensor *gir_session_output(const gir_session *s, size_t i)
{
    return i < s->n_results ? s->results[i] : NULL;
}

GIR_API gir_tensor *gir_session_value(const gir_session *s, const char *name)
{
    int32_t vi = gir_graph_value_index(s->g, name);
    if (vi < 0 || !s->planned || s->n_results != s->g->n_outputs)
        return NULL;
    const rt_value *v = &s->vals[vi];
    if (v->kind == RV_INTER && !s->keep && !v->is_output)
        return NULL;
    if (!v->t.data || v->t.dtype == GIR_DT_UNKNOWN)
        return NULL;
    gir_tensor *t;
    if (gir_tensor_create(v->t.dtype, &v->t.shape, v->t.data, v->t.numel * gir_dtype_size(v->t.dtype), &t, NULL))
        return NULL;
    return t;
}

GIR_API gir_status gir_tensor_create(gir_dtype dtype, const gir_shape *shape, const void *data, size_t nbytes,
                                     gir_tensor **out, gir_error *err)
{
    *out = NULL;
    uint64_t need;
    gir_status st = gir_tensor_size(dtype, shape, &need, err);
    if (st)
        return st;
    if (data && need != nbytes)
        return gir_fail(err, GIR_E_ARGUMENT, "%zu bytes given for a tensor of %llu bytes", nbytes,
                        (unsigned long long)need);
    gir_tensor *t;
    if ((st = gir_tensor_new(dtype, shape, &t, err)))
        return st;
    if (data && need)
        memcpy(t->data, data, (size_t)need);
    *out = t;
    return GIR_OK;
}

GIR_API bool gir_runtime_supports_op(const char *op)
{
    gir_op o = gir_op_from_name(op);
    return o != GIR_OP_OPAQUE && gir_rt_kernel(o) != NULL;
}

size_t gir_rt_planned_bytes(const gir_session *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_bufs; i++)
        n += s->bufs[i].cap;
    return n;
}

size_t gir_rt_fused_count(const gir_session *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->g->n_nodes; i++)
        n += s->nodes[i].skip;
    return n;
}

size_t gir_rt_blocked_count(const gir_session *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->g->n_nodes; i++) {
        const rt_node *rn = &s->nodes[i];
        n += !rn->skip && rn->n->n_out > 0 && rn->call.out && rn->call.out[0] && rn->call.out[0]->blocked;
    }
    return n;
}

/* ---- profiling ------------------------------------------------------------ */

GIR_API void gir_session_set_profiling(gir_session *s, bool on)
{
    if (on && !s->profiling) {
        for (size_t i = 0; i < s->g->n_nodes; i++)
            s->nodes[i].prof_ns = 0;
        s->prof_runs = 0;
    }
    s->profiling = on;
}

GIR_API size_t gir_session_profile_count(const gir_session *s)
{
    if (!s->planned)
        return 0;
    size_t n = 0;
    for (size_t oi = 0; oi < s->n_order; oi++)
        n += !s->nodes[s->order[oi]].skip && !s->nodes[s->order[oi]].folded;
    return n;
}

GIR_API bool gir_session_profile_entry(const gir_session *s, size_t i, gir_profile_entry *e)
{
    if (!s->planned)
        return false;
    for (size_t oi = 0; oi < s->n_order; oi++) {
        const rt_node *rn = &s->nodes[s->order[oi]];
        if (rn->skip || rn->folded || i-- > 0)
            continue;
        memset(e, 0, sizeof *e);
        e->node = rn->n->name;
        e->op = gir_op_name(rn->n->op);
        e->total_ms = (double)rn->prof_ns / 1e6;
        e->runs = s->prof_runs;
        /* the nodes fused into it, in execution order */
        size_t len = 0;
        for (size_t k = oi + 1; k < s->n_order; k++) {
            const rt_node *fn = &s->nodes[s->order[k]];
            if (!fn->skip || fn->host != s->order[oi])
                continue;
            int w = snprintf(e->fused + len, sizeof e->fused - len, "%s%s", len ? "+" : "", gir_op_name(fn->n->op));
            if (w < 0 || (size_t)w >= sizeof e->fused - len)
                break;
            len += (size_t)w;
        }
        return true;
    }
    return false;
}
