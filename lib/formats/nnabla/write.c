/* Writing .nnp archives (and standalone .nntxt with a parameter file).
 *
 * The graph becomes one Network and its Executor; everything else a .nnp
 * read before carried (other networks, executors, datasets, optimizers,
 * monitors, configs, unused parameters) is put back from the graph's meta.
 * Canonical operators become NNabla functions (see the table in plugin.c);
 * the whole graph is checked first and every operator or attribute that
 * NNabla cannot express is reported at once. */
#include "write.h"

#include "io/h5.h"
#include "io/zip.h"
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- message building -------------------------------------------------- */

/* Frees a string field unless it is protobuf-c's shared empty default. */
void nnbw_str_free(char *s)
{
    if (s && s != protobuf_c_empty_string)
        free(s);
}

char *nnbw_sdup(wctx *w, const char *s)
{
    char *r = gir_strdupf("%s", s ? s : "");
    if (!r)
        w->failed_alloc = true;
    return r;
}

void *nnbw_pb_new(wctx *w, const ProtobufCMessageDescriptor *d)
{
    void *m = gir_pb_new(d);
    if (!m)
        w->failed_alloc = true;
    return m;
}

/* Appends p to a repeated field array (size_t *n, T **arr). */
bool nnbw_push_ptr(void ***arr, size_t *n, void *p)
{
    void **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na)
        return false;
    na[(*n)++] = p;
    *arr = na;
    return true;
}

bool nnbw_push_str(wctx *w, char ***arr, size_t *n, const char *s)
{
    char *d = nnbw_sdup(w, s);
    if (!d)
        return false;
    if (!nnbw_push_ptr((void ***)arr, n, d)) {
        free(d);
        w->failed_alloc = true;
        return false;
    }
    return true;
}

void *nnbw_pb_field(ProtobufCMessage *m, const char *name)
{
    return (char *)m + protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name)->offset;
}

ProtobufCMessage *nnbw_meta_msg(const gir_attrs *meta, const char *key, const ProtobufCMessageDescriptor *d)
{
    const char *text = gir_attrs_get_string(meta, key, NULL);
    ProtobufCMessage *m = NULL;
    if (text) {
        gir_error e = GIR_ERROR_INIT;
        if (gir_pbtext_parse(d, text, strlen(text), &m, &e) != GIR_OK)
            m = NULL;
        gir_error_clear(&e);
    }
    return m;
}

void nnbw_meta_repeat_ids(wctx *w, const gir_attrs *meta, char ***list, size_t *n)
{
    const gir_attr *rid = gir_attrs_find(meta, NNB_META_REPEAT_ID);
    if (rid && rid->type == GIR_ATTR_STRINGS)
        for (size_t k = 0; k < rid->u.strs.n; k++)
            nnbw_push_str(w, list, n, rid->u.strs.v[k]);
}

int64_t *nnbw_dup_ints(wctx *w, const int64_t *v, size_t n)
{
    int64_t *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) {
        w->failed_alloc = true;
        return NULL;
    }
    if (n)
        memcpy(r, v, n * sizeof *r);
    return r;
}

size_t nnbw_set_ints(wctx *w, int64_t **field, const int64_t *v, size_t n)
{
    *field = nnbw_dup_ints(w, v, n);
    return *field ? n : 0;
}

Nnabla__Shape *nnbw_shape_msg(wctx *w, const int64_t *d, size_t n)
{
    Nnabla__Shape *s = nnbw_pb_new(w, &nnabla__shape__descriptor);
    if (!s)
        return NULL;
    if (n) {
        s->dim = nnbw_dup_ints(w, d, n);
        if (!s->dim) {
            gir_pb_free(&s->base);
            return NULL;
        }
        s->n_dim = n;
    }
    return s;
}

/* The value whose variable stands for v: a folded Cast makes two values
 * one variable (aliases point one way, so the walk ends). */
int32_t nnbw_root(const wctx *w, int32_t v)
{
    for (size_t hops = 0; v >= 0 && w->alias && w->alias[v] != v && hops <= w->g->n_values; hops++)
        v = w->alias[v];
    return v;
}

const char *nnbw_vname(const wctx *w, int32_t idx)
{
    return w->g->values[nnbw_root(w, idx)]->name;
}

const gir_value *nnbw_V(const wctx *w, int32_t idx)
{
    return idx >= 0 ? w->g->values[idx] : NULL;
}

/* ---- reporting -------------------------------------------------------- */

void nnbw_refuse(wctx *w, const gir_node *n, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_unsupported_vaddf(w->uns, code, n->name, fmt, ap);
    va_end(ap);
}

/* ---- value facts ------------------------------------------------------ */

bool nnbw_single_use(const wctx *w, int32_t v)
{
    return v >= 0 && w->uses[v] == 1 && !w->is_output[v];
}

/* A constant holding one number. */
bool nnbw_scalar_const(const wctx *w, int32_t v, double *out)
{
    const gir_value *x = nnbw_V(w, v);
    if (!x || x->kind != GIR_VALUE_CONST || !x->data || gir_shape_numel(&x->data->shape) != 1)
        return false;
    gir_tensor *t = x->data;
    bool loaded = t->data != NULL;
    const void *p;
    gir_error e = GIR_ERROR_INIT;
    if (gir_tensor_load(t, &p, &e)) {
        gir_error_clear(&e);
        return false;
    }
    bool ok = true;
    switch (t->dtype) {
    case GIR_DT_F32: {
        float f;
        memcpy(&f, p, 4);
        *out = f;
        break;
    }
    case GIR_DT_F64:
        memcpy(out, p, 8);
        break;
    default:
        ok = false;
    }
    if (!loaded)
        gir_tensor_unload(t);
    return ok;
}

/* ---- planning ---------------------------------------------------------- */

/* Ops whose nnabla function gives 0/1 floats for the canonical bool. */
static bool gives_bool(gir_op op)
{
    switch (op) {
    case GIR_OP_Equal:
    case GIR_OP_Greater:
    case GIR_OP_Less:
    case GIR_OP_GreaterOrEqual:
    case GIR_OP_LessOrEqual:
    case GIR_OP_And:
    case GIR_OP_Or:
    case GIR_OP_Xor:
    case GIR_OP_Not: return true;
    default: return false;
    }
}

/* Does the nnabla function of node n read operand k as "nonzero is true"? */
static bool reads_truth(const gir_node *n, size_t k)
{
    switch (n->op) {
    case GIR_OP_And:
    case GIR_OP_Or:
    case GIR_OP_Xor:
    case GIR_OP_Not: return true;
    case GIR_OP_Where: return k == 0;
    default: return false;
    }
}

/* The index of the only node reading value v (and in *slot which input),
 * or -1. */
static int32_t sole_consumer(const wctx *w, int32_t v, size_t *slot)
{
    if (!nnbw_single_use(w, v))
        return -1;
    *slot = w->use_slot[w->use_at[v]];
    return w->use_node[w->use_at[v]];
}

/* Every consumer of every value (CSR over w->uses), for the folds. */
static gir_status index_uses(wctx *w)
{
    const gir_graph *g = w->g;
    size_t nv = g->n_values, total = 0;
    w->use_at = malloc((nv + 1) * sizeof *w->use_at);
    if (!w->use_at)
        return gir_nomem(w->err);
    for (size_t v = 0; v < nv; v++) {
        w->use_at[v] = total;
        total += (size_t)w->uses[v];
    }
    w->use_at[nv] = total;
    w->use_node = malloc((total ? total : 1) * sizeof *w->use_node);
    w->use_slot = malloc((total ? total : 1) * sizeof *w->use_slot);
    size_t *fill = calloc(nv ? nv : 1, sizeof *fill);
    if (!w->use_node || !w->use_slot || !fill) {
        free(fill);
        return gir_nomem(w->err);
    }
    for (size_t j = 0; j < g->n_nodes; j++)
        for (size_t k = 0; k < g->nodes[j]->n_in; k++) {
            int32_t v = g->nodes[j]->in[k];
            if (v < 0)
                continue;
            size_t at = w->use_at[v] + fill[v]++;
            w->use_node[at] = (int32_t)j;
            w->use_slot[at] = (uint32_t)k;
        }
    free(fill);
    return GIR_OK;
}

/* The pairs the reader makes of one function become one function again:
 * - BroadcastTo: Reshape (fused) + Expand naming its x;
 * - SumPooling: AveragePool counting the padding, times the window size. */
static void fold_pairs(wctx *w)
{
    const gir_graph *g = w->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        const char *type = gir_attrs_get_string(&n->meta, NNB_META_TYPE, "");
        if (n->op == GIR_OP_Expand && strcmp(type, "BroadcastTo") == 0 && n->in[0] >= 0) {
            const gir_value *r = g->values[n->in[0]];
            const char *xname = gir_attrs_get_string(&n->meta, NNB_META_BROADCAST_X, NULL);
            int32_t xi = xname ? gir_graph_value_index(g, xname) : -1;
            if (r->producer < 0 || !nnbw_single_use(w, n->in[0]) || xi < 0 ||
                !gir_shape_equal(&g->values[xi]->shape, &g->values[n->out[0]]->shape))
                continue;
            const gir_node *rs = g->nodes[r->producer];
            if (rs->op == GIR_OP_Reshape && gir_attrs_find(&rs->meta, NNB_META_FUSED)) {
                w->fuse_src[i] = r->producer;
                w->node_done[r->producer] = 1;
            }
        } else if (n->op == GIR_OP_PRelu && n->in[1] >= 0 && nnbw_single_use(w, n->in[1]) &&
                   g->values[n->in[1]]->producer >= 0) {
            /* a slope per channel, unsqueezed to [C,1,..] for canonical
             * broadcasting: PReLU(base_axis=1) takes the [C] itself */
            int32_t ui = g->values[n->in[1]]->producer;
            const gir_node *u = g->nodes[ui];
            const int64_t *ax;
            ptrdiff_t k = u->op == GIR_OP_Unsqueeze ? gir_attrs_get_ints(&u->attrs, "axes", &ax) : -1;
            const gir_value *x = nnbw_V(w, n->in[0]), *sl = u->n_in == 1 ? nnbw_V(w, u->in[0]) : NULL;
            bool ok = k >= 1 && x && x->shape.rank == k + 2 && sl && sl->shape.rank == 1;
            for (ptrdiff_t j = 0; ok && j < k; j++)
                ok = ax[j] == j + 1;
            if (ok) {
                w->alias[n->in[1]] = u->in[0];
                w->node_done[ui] = 1;
            }
        } else if (n->op == GIR_OP_AveragePool && strcmp(type, "SumPooling") == 0 &&
                   gir_node_int(n, "count_include_pad", 0) && !gir_node_int(n, "ceil_mode", 0)) {
            const int64_t *k;
            ptrdiff_t nk = gir_attrs_get_ints(&n->attrs, "kernel_shape", &k);
            double area = 1, c;
            for (ptrdiff_t j = 0; j < nk; j++)
                area *= (double)k[j];
            size_t slot;
            int32_t mi = sole_consumer(w, n->out[0], &slot);
            const gir_node *mul = mi >= 0 ? g->nodes[mi] : NULL;
            if (mul && mul->op == GIR_OP_Mul && mul->n_in == 2 && nnbw_scalar_const(w, mul->in[1 - slot], &c) &&
                c == area) {
                w->alias[n->out[0]] = mul->out[0];
                w->node_done[mi] = 1;
            }
        }
    }
}

/* The casts the reader adds around nnabla's logical functions vanish again:
 * - bool -> float32 after a function that gives 0/1 floats: that function
 *   writes the cast's output variable;
 * - float32 -> bool read only by functions that take nonzero as true: they
 *   read the cast's input variable. */
static void fold_casts(wctx *w)
{
    const gir_graph *g = w->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *c = g->nodes[i];
        if (c->op != GIR_OP_Cast || c->n_in != 1 || c->n_out != 1 || c->in[0] < 0 || c->out[0] < 0)
            continue;
        const gir_value *x = g->values[c->in[0]], *y = g->values[c->out[0]];
        const gir_node *px = x->producer >= 0 ? g->nodes[x->producer] : NULL;
        /* a float -> bool cast is NotEqualScalar(0), which gives 0/1 floats */
        bool nonzero = px && px->op == GIR_OP_Cast && px->in[0] >= 0 && g->values[px->in[0]]->dtype == GIR_DT_F32;
        if (x->dtype == GIR_DT_BOOL && y->dtype == GIR_DT_F32 && px && (gives_bool(px->op) || nonzero) &&
            nnbw_single_use(w, c->in[0])) {
            w->alias[c->in[0]] = c->out[0];
            w->node_done[i] = 1;
        } else if (x->dtype == GIR_DT_F32 && y->dtype == GIR_DT_BOOL && !w->is_output[c->out[0]] &&
                   w->uses[c->out[0]] > 0) {
            bool all = true;
            for (size_t u = w->use_at[c->out[0]]; all && u < w->use_at[c->out[0] + 1]; u++)
                all = reads_truth(g->nodes[w->use_node[u]], w->use_slot[u]);
            if (all) {
                w->alias[c->out[0]] = c->in[0];
                w->node_done[i] = 1;
            }
        }
    }
}

static gir_status plan(wctx *w)
{
    const gir_graph *g = w->g;
    size_t nv = g->n_values, nn = g->n_nodes;
    w->uses = calloc(nv ? nv : 1, sizeof *w->uses);
    w->is_output = calloc(nv ? nv : 1, 1);
    w->needed = calloc(nv ? nv : 1, 1);
    w->transpose = calloc(nv ? nv : 1, 1);
    w->bn_stat = calloc(nv ? nv : 1, 1);
    w->wshape = malloc((nv ? nv : 1) * sizeof *w->wshape);
    w->node_done = calloc(nn ? nn : 1, 1);
    w->fuse_src = malloc((nn ? nn : 1) * sizeof *w->fuse_src);
    w->alias = malloc((nv ? nv : 1) * sizeof *w->alias);
    w->emitted = calloc(nn ? nn : 1, 1);
    if (!w->uses || !w->is_output || !w->needed || !w->transpose || !w->bn_stat || !w->wshape || !w->node_done ||
        !w->fuse_src || !w->alias || !w->emitted)
        return gir_nomem(w->err);
    for (size_t i = 0; i < nv; i++) {
        w->wshape[i].rank = -2;
        w->alias[i] = (int32_t)i;
    }
    for (size_t i = 0; i < nn; i++) {
        w->fuse_src[i] = -1;
        for (size_t k = 0; k < g->nodes[i]->n_in; k++)
            if (g->nodes[i]->in[k] >= 0)
                w->uses[g->nodes[i]->in[k]]++;
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        w->is_output[g->outputs[i]] = 1;
    /* Flatten + Gemm -> one Affine */
    for (size_t i = 0; i < nn; i++) {
        const gir_node *n = g->nodes[i];
        int32_t src;
        int64_t axis;
        if (n->op == GIR_OP_Gemm && nnbw_gemm_check(w, n, false) && nnbw_gemm_fusable_flatten(w, n, &src, &axis)) {
            w->fuse_src[i] = src;
            w->node_done[src] = 1;
        }
    }
    TRY(index_uses(w));
    fold_casts(w);
    fold_pairs(w);
    /* a weight read transposed (Gemm transB=1, or an nnabla Affine weight)
     * is written transposed: every canonical user must read it so */
    for (size_t v = 0; v < nv; v++) {
        const gir_value *x = g->values[v];
        if (x->kind != GIR_VALUE_WEIGHT && x->kind != GIR_VALUE_CONST)
            continue;
        bool want = gir_attrs_find(&x->meta, NNB_META_TRANSPOSED) != NULL;
        const gir_node *bad = NULL;
        for (size_t u = w->use_at[v]; u < w->use_at[v + 1]; u++) {
            const gir_node *m = g->nodes[w->use_node[u]];
            bool t_user = m->op == GIR_OP_Gemm && w->use_slot[u] == 1 && gir_node_int(m, "transB", 0);
            want |= t_user;
            if (!t_user && m->op != GIR_OP_OPAQUE && !bad)
                bad = m;
        }
        if (!want)
            continue;
        if (x->shape.rank != 2) {
            nnbw_refuse(w, bad ? bad : g->nodes[0], GIR_E_UNSUPPORTED_ATTR, "Gemm with transB=1 on a weight of rank %d",
                        x->shape.rank);
            continue;
        }
        if (bad)
            nnbw_refuse(w, bad, GIR_E_UNSUPPORTED_ATTR,
                        "weight '%s' read transposed by Gemm and untransposed by %s (nnabla stores one layout)", x->name,
                        gir_op_name(bad->op));
        else if (w->is_output[v])
            nnbw_refuse(w, g->nodes[0], GIR_E_UNSUPPORTED_ATTR, "weight '%s' read transposed is also a graph output",
                        x->name);
        w->transpose[v] = 1;
    }
    return GIR_OK;
}

/* ---- variables, executor, file -------------------------------------------- */

static Nnabla__Variable *variable_msg(wctx *w, const char *name, const char *type, const gir_shape *s,
                                      const char *const *dim_names, bool with_shape)
{
    Nnabla__Variable *v = nnbw_pb_new(w, &nnabla__variable__descriptor);
    if (!v)
        return NULL;
    v->name = nnbw_sdup(w, name);
    v->type = nnbw_sdup(w, type);
    if (with_shape && s && s->rank >= 0) {
        int64_t d[GIR_MAX_RANK];
        for (int i = 0; i < s->rank; i++)
            d[i] = s->dims[i] < 0 || (dim_names && dim_names[i]) ? -1 : s->dims[i];
        v->shape = nnbw_shape_msg(w, d, (size_t)s->rank);
    }
    if (!nnbw_push_ptr((void ***)&w->net->variable, &w->net->n_variable, v)) {
        w->failed_alloc = true;
        gir_pb_free(&v->base);
        return NULL;
    }
    return v;
}

/* Is value i written as a variable? */
static bool value_written(const wctx *w, size_t i)
{
    const gir_value *v = w->g->values[i];
    if (w->needed[i])
        return true;
    /* declared but unused variables (nothing reads or writes them) */
    return v->producer < 0 && w->uses[i] == 0 && !w->is_output[i];
}

/* A bool parameter as nnabla holds it: float32 0/1 (kept for the write). */
static gir_status bool_as_float(wctx *w, gir_tensor *t, gir_tensor **out)
{
    gir_tensor *f;
    TRY(gir_tensor_bool_as_float(t, GIR_DT_F32, &f, w->err));
    if (!GIR_GROW(w->owned, w->cap_owned, w->n_owned + 1)) {
        gir_tensor_unref(f);
        return gir_nomem(w->err);
    }
    w->owned[w->n_owned++] = f;
    *out = f;
    return GIR_OK;
}

static gir_status make_variables(wctx *w, nnb_wparam **params, size_t *n_params)
{
    const gir_graph *g = w->g;
    size_t cap = 0;
    *params = NULL;
    *n_params = 0;
    for (size_t i = 0; i < g->n_inputs; i++)
        w->needed[g->inputs[i]] = 1;
    for (size_t i = 0; i < g->n_outputs; i++)
        w->needed[g->outputs[i]] = 1;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        bool io = v->kind == GIR_VALUE_INPUT || w->is_output[i];
        if (v->dtype == GIR_DT_BOOL && (io || (v->data && w->needed[i])))
            gir_write_note(w->opts, "%s '%s' is bool: written as float32 0/1, nnabla has no bool",
                           v->kind == GIR_VALUE_INPUT ? "input" : w->is_output[i] ? "output" : "parameter",
                           v->name);
    }
    size_t extra_at = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (!value_written(w, i))
            continue;
        bool param = v->kind == GIR_VALUE_WEIGHT || v->kind == GIR_VALUE_CONST;
        const char *type = param ? "Parameter" : gir_attrs_get_string(&v->meta, "nnabla.variable_type", "Buffer");
        gir_shape s = v->shape;
        if (param) {
            if (w->wshape[i].rank != -2) {
                s = w->wshape[i];
            } else {
                const int64_t *decl;
                ptrdiff_t kd = gir_attrs_get_ints(&v->meta, NNB_META_SHAPE, &decl);
                gir_shape ds = { 0, { 0 } };
                if (kd >= 0 && kd <= GIR_MAX_RANK) {
                    ds.rank = (int)kd;
                    memcpy(ds.dims, decl, (size_t)kd * sizeof *decl);
                    if (gir_shape_numel(&ds) == gir_shape_numel(&v->shape))
                        s = ds;
                }
            }
            if (w->transpose[i]) {
                int64_t t = s.dims[0];
                s.dims[0] = s.dims[1];
                s.dims[1] = t;
            }
        }
        bool with_shape = !gir_attrs_find(&v->meta, NNB_META_NO_SHAPE) || v->shape.rank >= 0;
        if (gir_attrs_find(&v->meta, NNB_META_NO_SHAPE) && !param)
            with_shape = false;
        Nnabla__Variable *var = variable_msg(w, v->name, type, &s, param ? NULL : v->dim_names, with_shape);
        if (!var)
            continue;
        var->initializer =
            (Nnabla__Initializer *)nnbw_meta_msg(&v->meta, NNB_META_INITIALIZER, &nnabla__initializer__descriptor);
        nnbw_meta_repeat_ids(w, &v->meta, &var->repeat_id, &var->n_repeat_id);
        if (param && v->data) {
            if (!GIR_GROW(*params, cap, *n_params + 1))
                return gir_nomem(w->err);
            bool ng = gir_attrs_find(&v->meta, NNB_META_NEED_GRAD)
                          ? gir_attrs_get_int(&v->meta, NNB_META_NEED_GRAD, 0) != 0
                          : v->kind == GIR_VALUE_WEIGHT && !w->bn_stat[i];
            gir_tensor *data = v->data;
            if (data->dtype == GIR_DT_BOOL)
                TRY(bool_as_float(w, data, &data));
            (*params)[(*n_params)++] = (nnb_wparam){ v->name, data, s, ng, w->transpose[i] != 0 };
        } else if (param) {
            (*n_params)++; /* counted, without data: checked by the caller */
            if (!GIR_GROW(*params, cap, *n_params))
                return gir_nomem(w->err);
            (*params)[*n_params - 1] = (nnb_wparam){ v->name, NULL, s, false, false };
        }
        /* variables the writer made for this value's producer follow it */
        (void)extra_at;
    }
    for (size_t k = 0; k < w->n_extras; k++)
        variable_msg(w, w->extras[k].name, "Buffer", &w->extras[k].shape, w->extras[k].dim_names, true);
    return w->failed_alloc ? gir_nomem(w->err) : GIR_OK;
}

/* Moves the entry for value name of an executor's variable list (messages
 * with a variable_name) onto another list; false when from has none. */
static bool move_named(void **from, size_t n_from, void ***to, size_t *n_to, const char *name)
{
    for (size_t k = 0; k < n_from; k++)
        if (from[k] && strcmp(*(char **)nnbw_pb_field(from[k], "variable_name"), name) == 0) {
            nnbw_push_ptr(to, n_to, from[k]);
            from[k] = NULL;
            return true;
        }
    return false;
}

/* A new entry of message type d (DataVariable, OutputVariable) for value
 * name, its variable and data both named so, onto an executor's list. */
static void add_named(wctx *w, const ProtobufCMessageDescriptor *d, void ***list, size_t *n, const char *name)
{
    ProtobufCMessage *m = nnbw_pb_new(w, d);
    if (!m)
        return;
    char **var = nnbw_pb_field(m, "variable_name"), **data = nnbw_pb_field(m, "data_name");
    nnbw_str_free(*var);
    nnbw_str_free(*data);
    *var = nnbw_sdup(w, name);
    *data = nnbw_sdup(w, name);
    if (!nnbw_push_ptr(list, n, m))
        gir_pb_free(m);
}

/* Drops the entries moved out of a list (NULL now). */
static void drop_nulls(void **list, size_t *n)
{
    size_t kept = 0;
    for (size_t k = 0; k < *n; k++)
        if (list[k])
            list[kept++] = list[k];
    *n = kept;
}

/* The executor: the one the file had (names, data names, evaluation
 * settings) with its lists brought in line with the graph. */
static Nnabla__Executor *make_executor(wctx *w, const char *net_name)
{
    const gir_graph *g = w->g;
    Nnabla__Executor *orig = NULL;
    const char *text = gir_attrs_get_string(&g->meta, NNB_META_EXECUTOR, NULL);
    if (text) {
        gir_error e = GIR_ERROR_INIT;
        ProtobufCMessage *m = NULL;
        if (gir_pbtext_parse(&nnabla__executor__descriptor, text, strlen(text), &m, &e) == GIR_OK)
            orig = (Nnabla__Executor *)m;
        gir_error_clear(&e);
    }
    Nnabla__Executor *x = nnbw_pb_new(w, &nnabla__executor__descriptor);
    if (!x) {
        gir_pb_free(orig ? &orig->base : NULL);
        return NULL;
    }
    if (orig) {
        nnbw_str_free(x->name);
        x->name = orig->name;
        orig->name = NULL;
        x->num_evaluations = orig->num_evaluations;
        nnbw_str_free(x->repeat_evaluation_type);
        x->repeat_evaluation_type = orig->repeat_evaluation_type;
        orig->repeat_evaluation_type = NULL;
        x->need_back_propagation = orig->need_back_propagation;
        x->no_image_normalization = orig->no_image_normalization;
        x->loss_variable = orig->loss_variable;
        x->n_loss_variable = orig->n_loss_variable;
        orig->loss_variable = NULL;
        orig->n_loss_variable = 0;
    } else {
        nnbw_str_free(x->name);
        x->name = nnbw_sdup(w, "runtime");
    }
    nnbw_str_free(x->network_name);
    x->network_name = nnbw_sdup(w, net_name);
    for (size_t i = 0; i < g->n_inputs; i++) {
        const char *name = nnbw_vname(w, g->inputs[i]);
        if (orig && (move_named((void **)orig->generator_variable, orig->n_generator_variable,
                                (void ***)&x->generator_variable, &x->n_generator_variable, name) ||
                     move_named((void **)orig->data_variable, orig->n_data_variable, (void ***)&x->data_variable,
                                &x->n_data_variable, name)))
            continue;
        add_named(w, &nnabla__data_variable__descriptor, (void ***)&x->data_variable, &x->n_data_variable, name);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        const char *name = nnbw_vname(w, g->outputs[i]);
        if (!orig || !move_named((void **)orig->output_variable, orig->n_output_variable,
                                 (void ***)&x->output_variable, &x->n_output_variable, name))
            add_named(w, &nnabla__output_variable__descriptor, (void ***)&x->output_variable,
                      &x->n_output_variable, name);
    }
    /* parameters: the original list (those still parameters), then new ones */
    const Nnabla__Network *net = w->net;
    uint8_t *listed = calloc(net->n_variable ? net->n_variable : 1, 1);
    if (!listed)
        w->failed_alloc = true;
    for (size_t k = 0; orig && listed && k < orig->n_parameter_variable; k++) {
        Nnabla__ParameterVariable *pv = orig->parameter_variable[k];
        for (size_t j = 0; j < net->n_variable; j++)
            if (!listed[j] && strcmp(net->variable[j]->type, "Parameter") == 0 &&
                strcmp(net->variable[j]->name, pv->variable_name) == 0) {
                listed[j] = 1;
                nnbw_push_ptr((void ***)&x->parameter_variable, &x->n_parameter_variable, pv);
                orig->parameter_variable[k] = NULL;
                break;
            }
    }
    for (size_t j = 0; listed && j < net->n_variable; j++) {
        if (listed[j] || strcmp(net->variable[j]->type, "Parameter") != 0)
            continue;
        Nnabla__ParameterVariable *pv = nnbw_pb_new(w, &nnabla__parameter_variable__descriptor);
        if (pv) {
            nnbw_str_free(pv->variable_name);
            pv->variable_name = nnbw_sdup(w, net->variable[j]->name);
            if (!nnbw_push_ptr((void ***)&x->parameter_variable, &x->n_parameter_variable, pv))
                gir_pb_free(&pv->base);
        }
    }
    free(listed);
    if (orig) {
        /* entries moved out are NULL now: drop them before freeing */
        drop_nulls((void **)orig->data_variable, &orig->n_data_variable);
        drop_nulls((void **)orig->generator_variable, &orig->n_generator_variable);
        drop_nulls((void **)orig->output_variable, &orig->n_output_variable);
        drop_nulls((void **)orig->parameter_variable, &orig->n_parameter_variable);
        gir_pb_free(&orig->base);
    }
    return x;
}

static ProtobufCMessage *parse_meta(const gir_graph *g, const char *key, const ProtobufCMessageDescriptor *d)
{
    const char *text = gir_attrs_get_string(&g->meta, key, NULL);
    if (!text)
        return NULL;
    gir_error e = GIR_ERROR_INIT;
    ProtobufCMessage *m = NULL;
    if (gir_pbtext_parse(d, text, strlen(text), &m, &e) != GIR_OK)
        m = NULL;
    gir_error_clear(&e);
    return m;
}

static bool insert_at(void ***arr, size_t *n, size_t at, void *p)
{
    if (!nnbw_push_ptr(arr, n, p))
        return false;
    if (at >= *n)
        at = *n - 1;
    memmove(*arr + at + 1, *arr + at, (*n - 1 - at) * sizeof **arr);
    (*arr)[at] = p;
    return true;
}

/* The parameter list in the order the file had, unused parameters included. */
static gir_status order_params(wctx *w, nnb_wparam *gp, size_t n_gp, nnb_wparam **out, size_t *n_out)
{
    const gir_graph *g = w->g;
    const gir_attr *order = gir_attrs_find(&g->meta, NNB_META_PARAM_ORDER);
    const gir_attr *extra = gir_attrs_find(&g->meta, NNB_META_EXTRA_PARAMS);
    const int64_t *grads = NULL;
    ptrdiff_t ng = gir_attrs_get_ints(&g->meta, NNB_META_EXTRA_NEED_GRAD, &grads);
    size_t n_extra = extra && extra->type == GIR_ATTR_STRINGS ? extra->u.strs.n : 0;
    size_t total = n_gp + n_extra;
    nnb_wparam *r = calloc(total ? total : 1, sizeof *r);
    uint8_t *taken = calloc(total ? total : 1, 1);
    if (!r || !taken) {
        free(r);
        free(taken);
        return gir_nomem(w->err);
    }
    /* candidates: graph parameters, then extras */
    nnb_wparam *cand = calloc(total ? total : 1, sizeof *cand);
    if (!cand) {
        free(r);
        free(taken);
        return gir_nomem(w->err);
    }
    memcpy(cand, gp, n_gp * sizeof *gp);
    size_t nc = n_gp;
    for (size_t i = 0; i < n_extra; i++) {
        const char *name = extra->u.strs.v[i];
        char *key = gir_strdupf("%s%s", NNB_META_EXTRA_PREFIX, name);
        const gir_attr *t = key ? gir_attrs_find(&g->meta, key) : NULL;
        free(key);
        bool clash = false;
        for (size_t k = 0; k < n_gp; k++)
            clash |= strcmp(gp[k].name, name) == 0;
        if (!t || t->type != GIR_ATTR_TENSOR || !t->u.t || clash)
            continue;
        cand[nc++] = (nnb_wparam){ name, t->u.t, t->u.t->shape, ng > (ptrdiff_t)i && grads[i] != 0, false };
    }
    size_t k = 0;
    if (order && order->type == GIR_ATTR_STRINGS)
        for (size_t i = 0; i < order->u.strs.n; i++)
            for (size_t c = 0; c < nc; c++)
                if (!taken[c] && strcmp(cand[c].name, order->u.strs.v[i]) == 0) {
                    taken[c] = 1;
                    r[k++] = cand[c];
                    break;
                }
    for (size_t c = 0; c < nc; c++)
        if (!taken[c])
            r[k++] = cand[c];
    free(cand);
    free(taken);
    *out = r;
    *n_out = k;
    return GIR_OK;
}

static void wctx_free(wctx *w)
{
    free(w->uses);
    free(w->is_output);
    free(w->needed);
    free(w->transpose);
    free(w->bn_stat);
    free(w->wshape);
    free(w->node_done);
    free(w->fuse_src);
    free(w->alias);
    free(w->use_at);
    free(w->use_node);
    free(w->use_slot);
    free(w->emitted);
    for (size_t i = 0; i < w->n_owned; i++)
        gir_tensor_unref(w->owned[i]);
    free(w->owned);
    for (size_t i = 0; i < w->n_extras; i++)
        free(w->extras[i].name);
    free(w->extras);
}

/* Builds the whole NNablaProtoBuf (without parameters) and the parameter
 * list; fails with everything nnabla cannot express. */
static gir_status build_proto(wctx *w, Nnabla__NNablaProtoBuf **pb_out, nnb_wparam **params, size_t *n_params)
{
    const gir_graph *g = w->g;
    *pb_out = NULL;
    *params = NULL;
    *n_params = 0;
    Nnabla__Network *net = (Nnabla__Network *)parse_meta(g, NNB_META_NETWORK, &nnabla__network__descriptor);
    if (!net) {
        net = nnbw_pb_new(w, &nnabla__network__descriptor);
        if (!net)
            return gir_nomem(w->err);
        nnbw_str_free(net->name);
        net->name = nnbw_sdup(w, g->name && g->name[0] ? g->name : "net");
        net->batch_size = 1;
        for (size_t i = 0; i < g->n_inputs; i++) {
            const gir_value *v = g->values[g->inputs[i]];
            if (v->shape.rank > 0 && v->shape.dims[0] > 0) {
                net->batch_size = v->shape.dims[0];
                break;
            }
        }
    } else if (g->name && g->name[0] && strcmp(g->name, net->name) != 0) {
        nnbw_str_free(net->name);
        net->name = nnbw_sdup(w, g->name);
    }
    w->net = net;
    gir_status st = plan(w);
    int32_t *order = NULL;
    if (!st)
        st = gir_topo_order(g, &order, w->err);
    for (size_t i = 0; !st && i < g->n_nodes; i++)
        if (!w->node_done[order[i]]) {
            nnbw_emit_node(w, order[i]);
            w->emitted[order[i]] = 1;
        }
    free(order);
    nnb_wparam *gp = NULL;
    size_t n_gp = 0;
    if (!st && gir_unsupported_count(w->uns) == 0)
        st = make_variables(w, &gp, &n_gp);
    if (!st && gir_unsupported_count(w->uns))
        st = gir_unsupported_fail(w->uns, "nnabla", w->err);
    if (!st && w->failed_alloc)
        st = gir_nomem(w->err);
    /* parameters without data: all of them (structure only) or an error */
    size_t with_data = 0;
    for (size_t i = 0; !st && i < n_gp; i++)
        with_data += gp[i].tensor != NULL;
    if (!st && with_data && with_data < n_gp) {
        for (size_t i = 0; i < n_gp; i++)
            if (!gp[i].tensor) {
                st = gir_fail(w->err, GIR_E_PARAMS, "parameter '%s' has no data to write", gp[i].name);
                break;
            }
    }
    if (!st && with_data)
        st = order_params(w, gp, n_gp, params, n_params);
    free(gp);
    Nnabla__Executor *exec = NULL;
    /* a network read without an executor is written without one */
    bool want_exec = !gir_attrs_find(&g->meta, NNB_META_NETWORK) || gir_attrs_find(&g->meta, NNB_META_EXECUTOR);
    if (!st && want_exec) {
        exec = make_executor(w, net->name);
        if (!exec || w->failed_alloc)
            st = gir_nomem(w->err);
    }
    Nnabla__NNablaProtoBuf *pb = NULL;
    if (!st) {
        pb = (Nnabla__NNablaProtoBuf *)parse_meta(g, NNB_META_REST, &nnabla__nnabla_proto_buf__descriptor);
        if (!pb)
            pb = nnbw_pb_new(w, &nnabla__nnabla_proto_buf__descriptor);
        if (!pb)
            st = gir_nomem(w->err);
    }
    if (!st) {
        size_t ni = (size_t)gir_attrs_get_int(&g->meta, NNB_META_NETWORK_INDEX, 0);
        size_t ei = (size_t)gir_attrs_get_int(&g->meta, NNB_META_EXECUTOR_INDEX, 0);
        if (!insert_at((void ***)&pb->network, &pb->n_network, ni, net))
            st = gir_nomem(w->err);
        else
            net = NULL;
        if (!st && exec && !insert_at((void ***)&pb->executor, &pb->n_executor, ei, exec))
            st = gir_nomem(w->err);
        else
            exec = NULL;
    }
    gir_pb_free(net ? &net->base : NULL);
    gir_pb_free(exec ? &exec->base : NULL);
    if (st) {
        gir_pb_free(pb ? &pb->base : NULL);
        free(*params);
        *params = NULL;
        *n_params = 0;
        return st;
    }
    *pb_out = pb;
    return GIR_OK;
}

/* The .nnp archive into tmp (a gir_outfile's temporary path), members
 * listed as nnabla writes them: nnp_version.txt, network.nntxt, then the
 * parameters, each written once.  parameter.protobuf is streamed into its
 * member; parameter.h5 is written by HDF5 in place, first in the file,
 * behind a user block that ends up holding its zip local header. */
#define NNP_H5_USERBLOCK 512

static gir_status write_nnp(const char *tmp, const gir_buf *text, const nnb_wparam *params, size_t n_params,
                            bool protobuf, gir_error *err)
{
    gir_zipw *z = NULL;
    gir_zip_extent *ext = NULL;
    size_t n_ext = 0;
    bool inplace = n_params && !protobuf;
    gir_status st = GIR_OK;
    if (inplace)
        st = nnb_write_h5_inplace(tmp, NNP_H5_USERBLOCK, params, n_params, &ext, &n_ext, err);
    if (!st)
        st = inplace ? gir_zipw_open_inplace(tmp, NNP_H5_USERBLOCK, &z, err) : gir_zipw_open(tmp, &z, err);
    if (!st)
        st = gir_zipw_add_buffer(z, "nnp_version.txt", "0.1\n", 4, false, err);
    if (!st)
        st = gir_zipw_add_buffer(z, "network.nntxt", text->data ? text->data : "", text->len, false, err);
    if (!st && inplace)
        st = gir_zipw_add_inplace(z, "parameter.h5", ext, n_ext, err);
    if (!st && n_params && protobuf)
        st = nnb_write_protobuf_member(z, "parameter.protobuf", params, n_params, err);
    free(ext);
    if (z) {
        if (st)
            gir_zipw_discard(z);
        else
            st = gir_zipw_close(z, err);
    }
    return st;
}

gir_status nnb_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    wctx w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    gir_error e2 = GIR_ERROR_INIT;
    w.err = &e2;
    w.uns = u;
    Nnabla__NNablaProtoBuf *pb = NULL;
    nnb_wparam *params = NULL;
    size_t n_params = 0;
    gir_status st = build_proto(&w, &pb, &params, &n_params);
    gir_pb_free(pb ? &pb->base : NULL);
    free(params);
    wctx_free(&w);
    /* a refusal is what u lists; anything else is the caller's error */
    if (st && !gir_unsupported_count(u)) {
        if (err && !err->code)
            *err = e2;
        else
            gir_error_clear(&e2);
        return st;
    }
    gir_error_clear(&e2);
    return GIR_OK;
}

/* nnabla names parameters by scope paths, which parameter.h5 holds as
 * HDF5 groups: names with empty, "." or ".." components (PyTorch's
 * "/block/Constant_output_0") cannot be stored.  Such parameters are
 * renamed in a copy of g (*own; NULL when no name needed it): empty
 * components dropped, "." and ".." as "_" and "__", made unique in value
 * order (so the same graph always gives the same names). */
static gir_status param_names(const gir_graph *g, const gir_options *opts, gir_graph **own, gir_error *err)
{
    *own = NULL;
    bool any = false;
    for (size_t i = 0; i < g->n_values && !any; i++) {
        const gir_value *v = g->values[i];
        any = (v->kind == GIR_VALUE_WEIGHT || v->kind == GIR_VALUE_CONST) && !gir_h5_name_ok(v->name);
    }
    if (!any)
        return GIR_OK;
    gir_graph *c;
    TRY(gir_graph_clone(g, &c, err));
    size_t renamed = 0;
    char *first_old = NULL, *first_new = NULL;
    gir_status st = GIR_OK;
    for (size_t i = 0; !st && i < c->n_values; i++) {
        const gir_value *v = c->values[i];
        if ((v->kind != GIR_VALUE_WEIGHT && v->kind != GIR_VALUE_CONST) || gir_h5_name_ok(v->name))
            continue;
        gir_buf b = GIR_BUF_INIT;
        for (const char *p = v->name; *p;) {
            const char *e = strchr(p, '/');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len) {
                bool dots = (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.');
                gir_buf_printf(&b, "%s%.*s", b.len ? "/" : "", (int)len, dots ? "__" : p);
            }
            p += len + (e != NULL);
        }
        char *base = gir_buf_take(&b);
        gir_buf_free(&b);
        const char *name = base ? gir_graph_unique_value_name(c, *base ? base : "parameter", err) : NULL;
        if (!renamed && name) {
            first_old = gir_strdupf("%s", v->name);
            first_new = gir_strdupf("%s", name);
        }
        st = !name || (!renamed && (!first_old || !first_new)) ? gir_nomem(err)
                                                               : gir_graph_rename(c, false, (int32_t)i, name, err);
        free(base);
        renamed++;
    }
    if (!st)
        gir_write_note(opts, "%zu parameter name%s with empty, '.' or '..' components (nnabla stores scope paths) "
                             "renamed, first '%s' as '%s'",
                       renamed, renamed == 1 ? "" : "s", first_old, first_new);
    free(first_old);
    free(first_new);
    if (st)
        gir_graph_free(c);
    else
        *own = c;
    return st;
}

gir_status nnb_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err)
{
    const char *pf = gir_options_get(opts, "param-format");
    bool protobuf = false;
    if (pf && strcmp(pf, "protobuf") == 0)
        protobuf = true;
    else if (pf && strcmp(pf, "h5") != 0)
        return gir_fail(err, GIR_E_ARGUMENT, "param-format must be h5 or protobuf, not '%s'", pf);
    bool force = gir_options_flag(opts, "force");
    bool text_only = gir_str_ends_with(path, ".nntxt") || gir_str_ends_with(path, ".prototxt");

    gir_graph *renamed;
    TRY(param_names(g, opts, &renamed, err));
    if (renamed)
        g = renamed;
    wctx w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    w.err = err;
    w.uns = gir_unsupported_new();
    if (!w.uns) {
        gir_graph_free(renamed);
        return gir_nomem(err);
    }
    Nnabla__NNablaProtoBuf *pb = NULL;
    nnb_wparam *params = NULL;
    size_t n_params = 0;
    gir_status st = build_proto(&w, &pb, &params, &n_params);
    gir_buf text = GIR_BUF_INIT;
    if (!st)
        st = gir_pbtext_print(&pb->base, &text, err);
    gir_pb_free(pb ? &pb->base : NULL);

    gir_outfile *out = NULL;
    if (!st)
        st = gir_outfile_open(path, force, &out, err);
    if (!st && !text_only) {
        st = write_nnp(gir_outfile_temp_path(out), &text, params, n_params, protobuf, err);
    } else if (!st) {
        /* a standalone .nntxt: parameters go to a companion file */
        st = gir_outfile_write(out, text.data ? text.data : "", text.len, err);
        if (!st && n_params) {
            const char *pp = gir_options_get(opts, "params");
            char *own = pp ? NULL : gir_path_with_ext(path, protobuf ? ".protobuf" : ".h5");
            const char *target = pp ? pp : own;
            gir_outfile *po = NULL;
            if (!target)
                st = gir_nomem(err);
            if (!st)
                st = gir_outfile_open(target, force, &po, err);
            if (!st)
                st = protobuf ? nnb_write_protobuf(gir_outfile_temp_path(po), params, n_params, err)
                              : nnb_write_h5(gir_outfile_temp_path(po), params, n_params, err);
            if (!st) {
                /* the parameters, then the network, as one unit */
                gir_outfile *both[2] = { po, out };
                st = gir_outfile_commit_all(both, 2, err);
                out = NULL;
            } else {
                gir_outfile_abort(po);
            }
            free(own);
        }
    }
    if (out) {
        if (st)
            gir_outfile_abort(out);
        else
            st = gir_outfile_commit(out, err);
    }
    gir_buf_free(&text);
    free(params);
    wctx_free(&w);
    gir_unsupported_free(w.uns);
    gir_graph_free(renamed);
    return st;
}
