/* Reading operators of MXNet and NNVM graphs into canonical nodes,
 * attribute by attribute.  A node whose operator or attribute values have
 * no exact canonical counterpart is kept verbatim (opaque) by the caller.
 * Every attribute as written in the file is kept in node meta
 * "<flavour>.attrs" (key, value pairs) so a same-format round trip writes
 * it back. */
#include "ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t def_num_outputs(const gir_op_map *d, nn_flavour fl, const char *op, const nn_node *n);
static size_t row_index(nn_flavour fl, const gir_op_map *d);

const nn_node *nn_rd_raw(const nn_reader *r, size_t idx)
{
    return &r->raw->nodes[idx];
}

static const nn_kv *kv_of(const nn_reader *r, size_t idx, const char *key)
{
    const nn_node *n = nn_rd_raw(r, idx);
    for (size_t i = 0; i < n->n_attrs; i++)
        if (gir_attr_name_eq(n->attrs[i].key, key))
            return &n->attrs[i];
    return NULL;
}

const char *nn_rd_attr(const nn_reader *r, size_t idx, const char *key)
{
    const nn_kv *kv = kv_of(r, idx, key);
    return kv ? kv->value : NULL;
}

gir_status nn_rd_bad_attr(const nn_reader *r, size_t idx, const char *key, const char *what, gir_error *err)
{
    const nn_node *n = nn_rd_raw(r, idx);
    const nn_kv *kv = kv_of(r, idx, key);
    if (kv)
        gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute %s=\"%.80s\" is not %s", n->op, key, kv->value, what);
    else
        gir_fail(err, GIR_E_ATTRIBUTE, "%s lacks the required attribute %s", n->op, key);
    if (kv)
        gir_json_err_at(err, r->raw->doc, kv->where, "/nodes/%zu/%s/%s", idx, kv->obj, key);
    else
        gir_json_err_at(err, r->raw->doc, n->json, "/nodes/%zu", idx);
    gir_err_node(err, n->name);
    return GIR_E_ATTRIBUTE;
}

/* Attribute key's text in *s, NULL when absent: an error when it is
 * required. */
static gir_status attr_text(const nn_reader *r, size_t idx, const char *key, bool req, const char **s, gir_error *err)
{
    *s = nn_rd_attr(r, idx, key);
    return !*s && req ? nn_rd_bad_attr(r, idx, key, NULL, err) : GIR_OK;
}

gir_status nn_rd_int(const nn_reader *r, size_t idx, const char *key, bool req, int64_t dflt, int64_t *out,
                     gir_error *err)
{
    const char *s;
    TRY(attr_text(r, idx, key, req, &s, err));
    *out = dflt;
    return s && !nn_parse_int(s, out) ? nn_rd_bad_attr(r, idx, key, "an integer", err) : GIR_OK;
}

/* "None" means the default, as for MXNet's optional<bool>. */
gir_status nn_rd_bool(const nn_reader *r, size_t idx, const char *key, bool dflt, bool *out, gir_error *err)
{
    const char *s = nn_rd_attr(r, idx, key);
    if (!s || nn_is_none(s)) {
        *out = dflt;
        return GIR_OK;
    }
    if (!nn_parse_bool(s, out))
        return nn_rd_bad_attr(r, idx, key, "a boolean (True/False/1/0)", err);
    return GIR_OK;
}

/* Absent, "None" and "()" give n = 0. */
gir_status nnr_g_tuple(const nn_reader *r, size_t idx, const char *key, bool req, int64_t *v, size_t *n,
                       gir_error *err)
{
    const char *s = nn_rd_attr(r, idx, key);
    *n = 0;
    if (!s) {
        if (req)
            return nn_rd_bad_attr(r, idx, key, NULL, err);
        return GIR_OK;
    }
    if (nn_is_none(s))
        return GIR_OK;
    if (!nn_parse_tuple(s, v, n))
        return nn_rd_bad_attr(r, idx, key, "an integer tuple", err);
    return GIR_OK;
}

/* Value v's shape when all its dimensions are known, else NULL. */
const gir_shape *nnr_full_shape(nn_reader *r, int32_t v)
{
    nnr_catch_up(r);
    const gir_value *val = nn_rd_value(r, v);
    if (!val || val->shape.rank < 0)
        return NULL;
    for (int i = 0; i < val->shape.rank; i++)
        if (val->shape.dims[i] < 0)
            return NULL;
    return &val->shape;
}

gir_status nnr_g_float(const nn_reader *r, size_t idx, const char *key, bool req, double dflt, double *out,
                       gir_error *err)
{
    const char *s;
    TRY(attr_text(r, idx, key, req, &s, err));
    *out = dflt;
    return s && !nn_parse_float(s, out) ? nn_rd_bad_attr(r, idx, key, "a number", err) : GIR_OK;
}

gir_status nnr_g_text(const nn_reader *r, size_t idx, const char *key, const char **out, gir_error *err)
{
    *out = nn_rd_attr(r, idx, key);
    return *out ? GIR_OK : nn_rd_bad_attr(r, idx, key, NULL, err);
}

const char *nn_rd_str(const nn_reader *r, size_t idx, const char *key, const char *dflt)
{
    const char *s = nn_rd_attr(r, idx, key);
    return s ? s : dflt;
}

/* ---- nodes and values ------------------------------------------------------ */

static int cmp_kv_key(const void *a, const void *b)
{
    return strcmp(((const nn_kv *)a)->key, ((const nn_kv *)b)->key);
}

/* The memo of pairs_attr for raw node idx: one per operator definition
 * (by its place in the table, modulo the memo's size) and one for the
 * variables. */
static struct nn_pairs_memo *pairs_memo(nn_reader *r, size_t idx)
{
    const gir_op_map *d = r->defs[idx];
    if (nn_rd_raw(r, idx)->var)
        return &r->pairs_memo[NN_PAIRS_MEMO - 1];
    return d ? &r->pairs_memo[row_index(r->fl, d) % (NN_PAIRS_MEMO - 1)] : NULL;
}

/* The meta attribute key (static: nn_meta_key or a literal) listing the
 * raw attributes as key, value pairs, sorted by key (they are a map: the
 * writers emit them sorted, as dmlc does), for gir_attrs_put.  The texts
 * are copied (raw goes after reading) into a block of the graph's arena;
 * nodes of one operator often have the same pairs (every 3x3 convolution
 * of a stage), so with a memo (may be NULL) a node whose pairs equal the
 * last ones made there shares their block (STRINGS lists are never
 * written in place). */
static gir_status pairs_attr(gir_graph *g, const char *key, const nn_kv *kv, size_t n, struct nn_pairs_memo *memo,
                             gir_attr *out, gir_error *err)
{
    const char *tmp[32];
    nn_kv stmp[16];
    const char **v = 2 * n <= 32 ? tmp : malloc(2 * n * sizeof *v);
    nn_kv *sorted = n <= 16 ? stmp : malloc(n * sizeof *sorted);
    gir_status st = v && sorted ? GIR_OK : gir_nomem(err);
    if (st == GIR_OK) {
        if (n)
            memcpy(sorted, kv, n * sizeof *kv);
        if (n > 16) {
            qsort(sorted, n, sizeof *sorted, cmp_kv_key);
        } else {
            for (size_t i = 1; i < n; i++) /* few keys, usually in order already */
                for (size_t j = i; j > 0 && strcmp(sorted[j - 1].key, sorted[j].key) > 0; j--) {
                    nn_kv t = sorted[j];
                    sorted[j] = sorted[j - 1];
                    sorted[j - 1] = t;
                }
        }
        for (size_t i = 0; i < n; i++) {
            v[2 * i] = sorted[i].key;
            v[2 * i + 1] = sorted[i].value;
        }
        bool same = memo && memo->n == 2 * n;
        for (size_t i = 0; same && i < 2 * n; i++)
            same = strcmp(v[i], memo->v[i]) == 0;
        const char **block = same ? memo->v : gir_arena_strings(&g->arena, v, 2 * n);
        *out = (gir_attr){ .name = key, .type = GIR_ATTR_STRINGS, .u.strs = { 2 * n, block } };
        if (!block)
            st = gir_nomem(err);
        else if (memo)
            *memo = (struct nn_pairs_memo){ block, 2 * n };
    }
    if (v != tmp)
        free(v);
    if (sorted != stmp)
        free(sorted);
    return st;
}

/* Sets the meta list of pairs (pairs_attr) on a, unless there are none. */
gir_status nnr_meta_pairs(gir_graph *g, gir_attrs *a, const char *key, const nn_kv *kv, size_t n,
                          struct nn_pairs_memo *memo, gir_error *err)
{
    gir_attr at;
    if (!n)
        return GIR_OK;
    TRY(pairs_attr(g, key, kv, n, memo, &at, err));
    return gir_attrs_put(g, a, &at, err) ? gir_nomem(err) : GIR_OK;
}

/* Creates the node that stands for raw node idx, with its raw attributes,
 * original op name and entry versions in meta. */
gir_status nnr_versions_meta(gir_graph *g, gir_attrs *a, const char *key, const nn_entry *e, size_t n,
                             gir_error *err)
{
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any = any || e[i].version != 0;
    if (!any)
        return GIR_OK;
    int64_t small[16], *v = n <= 16 ? small : malloc(n * sizeof *v); /* most nodes have few inputs */
    for (size_t i = 0; v && i < n; i++)
        v[i] = e[i].version;
    gir_status st = v ? gir_attrs_set_ints(g, a, key, v, n, err) : GIR_E_NOMEM;
    if (v != small)
        free(v);
    return st ? gir_nomem(err) : GIR_OK;
}

gir_status nn_rd_node(nn_reader *r, size_t idx, gir_op op, size_t n_in, size_t n_out, gir_node **out, gir_error *err)
{
    const nn_node *rn = nn_rd_raw(r, idx);
    gir_graph *g = r->g;
    const char *name = rn->name;
    bool renamed = false;
    gir_node *n;
    gir_status st0 = gir_graph_add_node(g, name, op, n_in, n_out, &n, NULL);
    if (st0 == GIR_E_DUPLICATE) {
        /* Names need not be unique in these files; ours must be. */
        name = gir_graph_unique_node_name(g, name, err);
        if (!name)
            return gir_nomem(err);
        renamed = true;
        st0 = gir_graph_add_node(g, name, op, n_in, n_out, &n, NULL);
    }
    if (st0)
        return gir_graph_add_node(g, name, op, n_in, n_out, &n, err);
    /* The file's op name: its definition's copy of the text when it has
     * one (static, like r->pfx), else a copy (raw goes after reading). */
    const char *op_text = r->defs[idx] ? r->defs[idx]->format_op : gir_arena_strdup(&g->arena, rn->op);
    if (!op_text)
        return gir_nomem(err);
    if (op == GIR_OP_OPAQUE) {
        n->opaque_format = r->pfx;
        n->opaque_op = op_text;
        if (gir_attrs_reserve(g, &n->attrs, rn->n_attrs, err))
            return gir_nomem(err);
        for (size_t i = 0; i < rn->n_attrs; i++)
            if (gir_attrs_set_string(g, &n->attrs, rn->attrs[i].key, rn->attrs[i].value, err))
                return gir_nomem(err);
    } else {
        /* the new node's meta: the op and the pairs at once */
        gir_attr at[2] = { { .name = nn_meta_key(r->fl, NN_MK_OP), .type = GIR_ATTR_STRING, .u.s = op_text } };
        if (rn->n_attrs)
            TRY(pairs_attr(g, nn_meta_key(r->fl, NN_MK_ATTRS), rn->attrs, rn->n_attrs, pairs_memo(r, idx), &at[1],
                           err));
        if (gir_attrs_put_list(g, &n->meta, at, rn->n_attrs ? 2 : 1, err))
            return gir_nomem(err);
    }
    if (renamed && gir_attrs_set_string(g, &n->meta, nn_meta_key(r->fl, NN_MK_NAME), rn->name, err))
        return gir_nomem(err);
    TRY(nnr_versions_meta(g, &n->meta, nn_meta_key(r->fl, NN_MK_VERSIONS), rn->in, rn->n_in, err));
    if (rn->row_outputs > 0 && r->raw->row_ptr_ok) {
        const gir_op_map *d = r->defs[idx];
        size_t own = def_num_outputs(d, r->fl, rn->op, rn);
        if (d && own && (uint64_t)rn->row_outputs > own && rn->row_outputs <= 65535) {
            if (gir_attrs_set_int(g, &n->meta, nn_meta_key(r->fl, NN_MK_NUM_OUTPUTS), rn->row_outputs, err))
                return gir_nomem(err);
        }
    }
    *out = n;
    return GIR_OK;
}

/* A helper node that is part of raw node idx's mapping ("<name>_<suffix>"). */
gir_status nn_rd_part(nn_reader *r, size_t idx, const char *suffix, gir_op op, size_t n_in, size_t n_out,
                      gir_node **out, gir_error *err)
{
    char *base = gir_strdupf("%s_%s", nn_rd_raw(r, idx)->name, suffix);
    if (!base)
        return gir_nomem(err);
    const char *name = gir_graph_unique_node_name(r->g, base, err);
    free(base);
    if (!name)
        return gir_nomem(err);
    return gir_graph_add_node(r->g, name, op, n_in, n_out, out, err);
}

/* Output k of n gets a value named after the node ("name", "name:1"). */
gir_status nn_rd_out(nn_reader *r, gir_node *n, size_t k, int32_t *vidx, gir_error *err)
{
    char *base = k ? gir_strdupf("%s:%zu", n->name, k) : NULL;
    if (k && !base)
        return gir_nomem(err);
    const char *name = k ? base : n->name;
    /* Usually free: try it first, look for another name only if taken. */
    gir_status st = gir_node_make_output(r->g, n, k, name, NULL);
    if (st == GIR_E_DUPLICATE) {
        name = gir_graph_unique_value_name(r->g, name, err);
        st = name ? gir_node_make_output(r->g, n, k, name, err) : gir_nomem(err);
    } else if (st) {
        st = gir_node_make_output(r->g, n, k, name, err);
    }
    free(base);
    if (st)
        return st;
    if (vidx)
        *vidx = n->out[k];
    return GIR_OK;
}

gir_status nnr_set_in(gir_node *n, size_t k, int32_t v)
{
    n->in[k] = v;
    return GIR_OK;
}

/* A rank-0 constant named after node idx holding v. */
gir_status nnr_const_scalar(nn_reader *r, gir_node *n, double v, gir_dtype dt, int32_t *vidx, gir_error *err)
{
    gir_shape s = { .rank = 0 };
    gir_tensor *t;
    TRY(gir_tensor_new(dt, &s, &t, err));
    switch (dt) {
    case GIR_DT_F64: *(double *)t->data = v; break;
    default: *(float *)t->data = (float)v; break;
    }
    return gir_graph_add_const_named(r->g, t, vidx, err, "%s_scalar", n->name);
}

/* A [c] constant of ones (or zeros) named "<node>_<what>". */
gir_status nnr_const_fill(nn_reader *r, const char *node, const char *what, int64_t c, float v, int32_t *vidx,
                          gir_error *err)
{
    gir_shape s = { .rank = 1, .dims = { c } };
    gir_tensor *t;
    TRY(gir_tensor_new(GIR_DT_F32, &s, &t, err));
    float *p = t->data;
    for (int64_t i = 0; i < c; i++)
        p[i] = v;
    return gir_graph_add_const_named(r->g, t, vidx, err, "%s_%s", node, what);
}

gir_value *nn_rd_value(const nn_reader *r, int32_t v)
{
    return v >= 0 ? r->g->values[v] : NULL;
}

/* The rank of a value when it is known from its shape or from the operators
 * that made it (Flatten and Gemm make matrices; many ops keep the rank). */
static int known_rank(const nn_reader *r, int32_t v)
{
    for (size_t steps = 0; v >= 0 && steps <= r->g->n_nodes; steps++) {
        const gir_value *val = r->g->values[v];
        if (val->shape.rank >= 0)
            return val->shape.rank;
        if (val->producer < 0)
            return -1;
        const gir_node *p = r->g->nodes[val->producer];
        const int64_t *li;
        ptrdiff_t ln;
        switch (p->op) {
        case GIR_OP_Flatten:
        case GIR_OP_Gemm:
            return 2;
        case GIR_OP_Reshape:
            ln = gir_attrs_get_ints(&p->attrs, "shape", &li);
            return ln >= 0 ? (int)ln : -1;
        case GIR_OP_Conv:
        case GIR_OP_ConvTranspose:
            ln = gir_attrs_get_ints(&p->attrs, "kernel_shape", &li);
            if (ln >= 1)
                return (int)ln + 2;
            v = p->n_in ? p->in[0] : -1;
            break;
        case GIR_OP_Identity: case GIR_OP_Relu: case GIR_OP_Sigmoid: case GIR_OP_Tanh: case GIR_OP_LeakyRelu:
        case GIR_OP_Elu: case GIR_OP_Selu: case GIR_OP_Softplus: case GIR_OP_Softsign: case GIR_OP_Clip:
        case GIR_OP_Exp: case GIR_OP_Log: case GIR_OP_Sqrt: case GIR_OP_Abs: case GIR_OP_Neg: case GIR_OP_Floor:
        case GIR_OP_Ceil: case GIR_OP_Round: case GIR_OP_Reciprocal: case GIR_OP_Sign: case GIR_OP_Erf:
        case GIR_OP_Sin: case GIR_OP_Cos: case GIR_OP_Cast: case GIR_OP_Dropout: case GIR_OP_BatchNormalization:
        case GIR_OP_Softmax: case GIR_OP_LogSoftmax: case GIR_OP_PRelu:
        case GIR_OP_MaxPool: case GIR_OP_AveragePool: case GIR_OP_GlobalMaxPool: case GIR_OP_GlobalAveragePool:
        case GIR_OP_LRN:
            v = p->n_in ? p->in[0] : -1;
            break;
        default:
            return -1;
        }
    }
    return -1;
}

/* Gives value v (a variable with unknown shape) a shape with the known dims
 * (-1 elsewhere); checks them against a known shape. */
gir_status nnr_hint_shape(nn_reader *r, size_t idx, int32_t v, const int64_t *dims, int rank, gir_error *err)
{
    gir_value *val = nn_rd_value(r, v);
    if (!val || val->producer >= 0)
        return GIR_OK;
    if (val->shape.rank < 0) {
        val->shape.rank = rank;
        for (int i = 0; i < rank; i++)
            val->shape.dims[i] = dims[i];
        return GIR_OK;
    }
    bool ok = val->shape.rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = dims[i] < 0 || val->shape.dims[i] < 0 || val->shape.dims[i] == dims[i];
    if (!ok) {
        char a[128], b[128];
        gir_shape want = { .rank = rank };
        memcpy(want.dims, dims, (size_t)rank * sizeof *dims);
        gir_fail(err, GIR_E_SHAPE, "%s needs %s of shape %s, but it has shape %s", nn_rd_raw(r, idx)->op, val->name,
                 gir_shape_str(&want, a, sizeof a), gir_shape_str(&val->shape, b, sizeof b));
        gir_err_node(err, nn_rd_raw(r, idx)->name);
        return GIR_E_SHAPE;
    }
    return GIR_OK;
}

gir_status nnr_keep(nn_reader *r, nn_rres *res, gir_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(r->why);
    r->why = gir_vstrdupf(fmt, ap);
    va_end(ap);
    *res = NN_OPAQUE;
    return r->why ? GIR_OK : gir_nomem(err);
}

/* Infers the shapes of the nodes made so far (in the order made, which is
 * topological), each once; a failure leaves shapes unknown for
 * gir_graph_finish to report.  Mappings that depend on shapes call it. */
void nnr_catch_up(nn_reader *r)
{
    for (; r->inferred < r->g->n_nodes; r->inferred++) {
        gir_node *n = r->g->nodes[r->inferred];
        for (size_t k = 0; k < n->n_out; k++)
            if (n->out[k] < 0)
                return; /* still being made */
        gir_error e = GIR_ERROR_INIT;
        (void)gir_op_infer(r->g, n, &e);
        gir_error_clear(&e);
    }
}

int nnr_rank_of(nn_reader *r, int32_t v)
{
    nnr_catch_up(r);
    return known_rank(r, v);
}

/* A node of raw node idx's mapping taking a (and b unless -1): a helper
 * "<name>_<sfx>", or with sfx NULL the node standing for idx itself. */
gir_status nnr_node2(nn_reader *r, size_t idx, const char *sfx, gir_op op, int32_t a, int32_t b, gir_node **pn,
                     int32_t *out, gir_error *err)
{
    gir_node *n;
    size_t k = b >= 0 ? 2 : 1;
    if (sfx)
        TRY(nn_rd_part(r, idx, sfx, op, k, 1, &n, err));
    else
        TRY(nn_rd_node(r, idx, op, k, 1, &n, err));
    nnr_set_in(n, 0, a);
    if (b >= 0)
        nnr_set_in(n, 1, b);
    if (pn)
        *pn = n;
    return nn_rd_out(r, n, 0, out, err);
}

gir_status nnr_ints_node(nn_reader *r, size_t idx, gir_op op, int32_t x, const char *key, const int64_t *v, size_t n,
                         int32_t *out, gir_error *err)
{
    gir_node *nd;
    TRY(nnr_node2(r, idx, NULL, op, x, -1, &nd, out, err));
    return v && gir_attrs_set_ints(r->g, &nd->attrs, key, v, n, err) ? gir_nomem(err) : GIR_OK;
}

/* x op scalar (a rank-0 constant of x's float type). */
gir_status nnr_scalar_op(nn_reader *r, size_t idx, const char *sfx, gir_op op, int32_t x, double c, int32_t *out,
                         gir_error *err)
{
    gir_node *n;
    if (sfx)
        TRY(nn_rd_part(r, idx, sfx, op, 2, 1, &n, err));
    else
        TRY(nn_rd_node(r, idx, op, 2, 1, &n, err));
    int32_t cv;
    const gir_value *xv = nn_rd_value(r, x);
    TRY(nnr_const_scalar(r, n, c, xv && xv->dtype == GIR_DT_F64 ? GIR_DT_F64 : GIR_DT_F32, &cv, err));
    nnr_set_in(n, 0, x);
    nnr_set_in(n, 1, cv);
    return nn_rd_out(r, n, 0, out, err);
}

/* MXNet's hidden attributes (training hints, placement): harmless anywhere. */
static bool is_hidden(const char *k)
{
    if (k[0] != '_' && k[0] != 'c' && k[0] != 'l' && k[0] != 'w' && k[0] != 'f' && k[0] != 'm' && k[0] != 'p' &&
        !strstr(k, "_mult"))
        return false;
    size_t n = strlen(k);
    if (n > 4 && k[0] == '_' && k[1] == '_' && k[n - 1] == '_' && k[n - 2] == '_')
        return true;
    static const char *const names[] = { "ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
                                         "profiler_scope", NULL };
    for (size_t i = 0; names[i]; i++)
        if (strcmp(k, names[i]) == 0)
            return true;
    return (n > 8 && (strcmp(k + n - 8, "_lr_mult") == 0 || strcmp(k + n - 8, "_wd_mult") == 0));
}

/* Does the node have only attributes its row knows (a plain row's attrs,
 * a composite's keys)? */
static bool keys_known(const nn_reader *r, size_t idx, const gir_op_map *row, const nn_rdef *d, const char **unknown)
{
    const nn_node *n = nn_rd_raw(r, idx);
    for (size_t i = 0; i < n->n_attrs; i++) {
        const char *k = n->attrs[i].key;
        bool ok = false;
        for (const char *const *p = d->keys; !ok && p && *p; p++)
            ok = gir_attr_name_eq(*p, k);
        for (const gir_attr_map *a = row->plain ? row->attrs : NULL; !ok && a && (a->format_attr || a->canonical_attr); a++)
            ok = a->format_attr && gir_attr_name_eq(a->format_attr, k);
        if (!ok && !is_hidden(k)) {
            *unknown = k;
            return false;
        }
    }
    return true;
}

/* Checks the input count against what a boolean attribute implies. */
gir_status nnr_want_inputs(const nn_reader *r, size_t idx, size_t want, const char *why, gir_error *err)
{
    const nn_node *n = nn_rd_raw(r, idx);
    if (n->n_in == want)
        return GIR_OK;
    gir_fail(err, GIR_E_SCHEMA, "%s with %s takes %zu inputs, but the node has %zu", n->op, why, want, n->n_in);
    gir_json_err_at(err, r->raw->doc, gir_json_get(n->json, "inputs"), "/nodes/%zu/inputs", idx);
    gir_err_node(err, n->name);
    return GIR_E_SCHEMA;
}

/* ---- simple operators --------------------------------------------------------- */

const gir_op_map *nnr_cur_def(const nn_reader *r, size_t idx)
{
    return r->defs[idx];
}

/* The engine's access to a node's attributes (gir_attr_io). */
typedef struct attr_ctx {
    nn_reader *r;
    size_t idx;
} attr_ctx;

static gir_status attr_get(void *ctx, const char *key, gir_attr_conv conv, double dflt, int64_t *i, double *f,
                           gir_error *err)
{
    attr_ctx *c = ctx;
    if (conv == GIR_CONV_INT)
        return nn_rd_int(c->r, c->idx, key, false, (int64_t)dflt, i, err);
    return nnr_g_float(c->r, c->idx, key, false, dflt, f, err);
}

gir_status nn_rd_plain(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const gir_op_map *d = nnr_cur_def(r, idx);
    const nn_node *rn = nn_rd_raw(r, idx);
    gir_node *n;
    TRY(nn_rd_node(r, idx, d->op, rn->n_in, 1, &n, err));
    for (size_t i = 0; i < rn->n_in; i++)
        nnr_set_in(n, i, in[i]);
    attr_ctx c = { r, idx };
    gir_attr_io io = { &c, attr_get, NULL };
    TRY(gir_map_read_attrs(d, &io, r->g, &n->attrs, err));
    (void)res;
    return nn_rd_out(r, n, 0, &out[0], err);
}

gir_status nn_rd_flatten(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Flatten, in[0], -1, &n, &out[0], err));
    (void)res;
    return gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err) ? gir_nomem(err) : GIR_OK;
}

static gir_op act_op(const char *t)
{
    if (!t)
        return GIR_OP_OPAQUE;
    if (strcmp(t, "relu") == 0)
        return GIR_OP_Relu;
    if (strcmp(t, "sigmoid") == 0)
        return GIR_OP_Sigmoid;
    if (strcmp(t, "tanh") == 0)
        return GIR_OP_Tanh;
    if (strcmp(t, "softrelu") == 0)
        return GIR_OP_Softplus;
    if (strcmp(t, "softsign") == 0)
        return GIR_OP_Softsign;
    return GIR_OP_OPAQUE;
}

gir_status nn_rd_activation(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    const char *t;
    TRY(nnr_g_text(r, idx, "act_type", &t, err));
    gir_op op = act_op(t);
    if (op == GIR_OP_OPAQUE)
        return nnr_opaque(res);
    return nnr_node2(r, idx, NULL, op, in[0], -1, NULL, &out[0], err);
}

/* MXNet's gelu, 0.5 * x * (1 + erf(x / sqrt(2))), in canonical operators. */
static gir_status gelu(nn_reader *r, size_t idx, int32_t x, int32_t *out, gir_error *err)
{
    int32_t t1, t2, t3, t4;
    TRY(nnr_scalar_op(r, idx, "div", GIR_OP_Div, x, M_SQRT2, &t1, err));
    TRY(nnr_node2(r, idx, "erf", GIR_OP_Erf, t1, -1, NULL, &t2, err));
    TRY(nnr_scalar_op(r, idx, "add", GIR_OP_Add, t2, 1.0, &t3, err));
    TRY(nnr_node2(r, idx, "mul", GIR_OP_Mul, x, t3, NULL, &t4, err));
    return nnr_scalar_op(r, idx, NULL, GIR_OP_Mul, t4, 0.5, out, err);
}

/* prelu: gamma holds one slope per channel (axis 1), or a single one;
 * canonical PRelu broadcasts from the last axis, so gamma gets trailing
 * unit axes (an Unsqueeze the writers fold back). */
static gir_status prelu(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int rank = nnr_rank_of(r, in[0]);
    if (rank < 2)
        return nnr_keep(r, res, err, "act_type=prelu on data of unknown rank (give --input-shape)");
    const gir_value *x = nn_rd_value(r, in[0]);
    int64_t c = x->shape.rank >= 2 ? x->shape.dims[1] : -1;
    const gir_value *gv = nn_rd_value(r, in[1]);
    if (!(gv && gv->shape.rank == 1 && gv->shape.dims[0] == 1))
        TRY(nnr_hint_shape(r, idx, in[1], &c, 1, err));
    int32_t slope = in[1];
    if (rank > 2) {
        int64_t axes[GIR_MAX_RANK];
        for (int i = 0; i < rank - 2; i++)
            axes[i] = i + 1;
        gir_node *u;
        TRY(nn_rd_part(r, idx, "slope", GIR_OP_Unsqueeze, 1, 1, &u, err));
        nnr_set_in(u, 0, in[1]);
        if (gir_attrs_set_ints(r->g, &u->attrs, "axes", axes, (size_t)rank - 2, err))
            return gir_nomem(err);
        TRY(nn_rd_out(r, u, 0, &slope, err));
    }
    return nnr_node2(r, idx, NULL, GIR_OP_PRelu, in[0], slope, NULL, &out[0], err);
}

gir_status nn_rd_leaky(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const char *t = nn_rd_str(r, idx, "act_type", "leaky");
    double slope, lo, hi;
    TRY(nnr_g_float(r, idx, "slope", false, 0.25, &slope, err));
    TRY(nnr_g_float(r, idx, "lower_bound", false, 0.125, &lo, err));
    TRY(nnr_g_float(r, idx, "upper_bound", false, 0.334, &hi, err));
    const nn_node *rn = nn_rd_raw(r, idx);
    bool is_prelu = strcmp(t, "prelu") == 0, rrelu = strcmp(t, "rrelu") == 0;
    gir_op op = strcmp(t, "leaky") == 0 || rrelu ? GIR_OP_LeakyRelu
              : strcmp(t, "elu") == 0            ? GIR_OP_Elu
              : strcmp(t, "selu") == 0           ? GIR_OP_Selu
              : is_prelu                         ? GIR_OP_PRelu
              : strcmp(t, "gelu") == 0           ? GIR_OP_Mul
                                                 : GIR_OP_OPAQUE;
    if (op == GIR_OP_OPAQUE)
        return nnr_keep(r, res, err, "act_type=%s", t);
    TRY(nnr_want_inputs(r, idx, is_prelu ? 2 : 1, is_prelu ? "act_type=prelu" : "act_type other than prelu", err));
    if (is_prelu)
        return prelu(r, idx, in, out, res, err);
    if (op == GIR_OP_Mul)
        return gelu(r, idx, in[0], out, err);
    /* rrelu at inference: the slope is the middle of its random range. */
    if (rrelu && rn->max_index > 1)
        return nnr_keep(r, res, err, "act_type=rrelu with its mask output read (a training output)");
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, op, in[0], -1, &n, &out[0], err));
    if (op != GIR_OP_Selu && gir_attrs_set_float(r->g, &n->attrs, "alpha", rrelu ? (lo + hi) / 2 : slope, err))
        return gir_nomem(err);
    return GIR_OK;
}

gir_status nn_rd_prelu_nnvm(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    int64_t axis;
    TRY(nn_rd_int(r, idx, "axis", false, 1, &axis, err));
    if (axis != 1)
        return nnr_keep(r, res, err, "axis=%lld (a slope per channel of axis 1 only)", (long long)axis);
    return prelu(r, idx, in, out, res, err);
}

/* ---- the tables ------------------------------------------------------------------------------ */

/* A flavour's table and the count of its operator rows: they come first,
 * before the prose row "(any other)" that ends it (nn_rows_sorted checks). */
static const gir_op_map *rows_of(nn_flavour fl, size_t *n)
{
    *n = fl == NN_MXNET ? nn_mxnet_op_rows : fl == NN_NNVM ? nn_nnvm_op_rows : 0;
    return fl == NN_MXNET ? nn_mxnet_ops : fl == NN_NNVM ? nn_nnvm_ops : NULL;
}

/* The tables are sorted by name (bytewise), checked by nn_rows_sorted;
 * rows that share a name share their nn_rdef, so any of them will do. */
const gir_op_map *nn_row_find(nn_flavour fl, const char *op)
{
    size_t lo = 0, hi;
    const gir_op_map *t = rows_of(fl, &hi);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *name = t[mid].format_op;
        /* the first byte orders most pairs without a call */
        int c = name[0] != op[0] ? (unsigned char)name[0] - (unsigned char)op[0] : strcmp(name, op);
        if (c == 0)
            return t[mid].impl || (t[mid].plain & GIR_MAP_READ) ? &t[mid] : NULL;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const nn_rdef *nn_row_rdef(const gir_op_map *row)
{
    static const nn_rdef plain[] = {
        { nn_rd_plain, 1, 0, 0, NULL }, { nn_rd_plain, 1, 1, 1, NULL },
        { nn_rd_plain, 1, 2, 2, NULL }, { nn_rd_plain, 1, 3, 3, NULL },
    };
    if (row->impl)
        return row->impl;
    return &plain[row->n_in < 4 ? row->n_in : 0];
}

/* d's place in fl's table (d from nn_row_find(fl, ...)). */
static size_t row_index(nn_flavour fl, const gir_op_map *d)
{
    size_t n;
    return (size_t)(d - rows_of(fl, &n));
}

bool nn_rows_sorted(nn_flavour fl)
{
    size_t n;
    const gir_op_map *t = rows_of(fl, &n);
    /* the count ends at the prose row, the one after the operator rows */
    if (!t || !t[n].format_op || t[n].format_op[0] != '(' || t[n + 1].format_op)
        return false;
    for (size_t i = 0; i < n; i++) {
        int c = i ? strcmp(t[i - 1].format_op, t[i].format_op) : -1;
        if (t[i].format_op[0] == '(' || c > 0 || (c == 0 && t[i - 1].impl != t[i].impl))
            return false;
    }
    return true;
}

bool nn_op_known(nn_flavour fl, const char *op)
{
    return nn_row_find(fl, op) != NULL;
}

/* nn_op_num_outputs for op's definition d (NULL: unknown op). */
static size_t def_num_outputs(const gir_op_map *row, nn_flavour fl, const char *op, const nn_node *n)
{
    if (!row)
        return 0;
    const nn_rdef *d = nn_row_rdef(row);
    if (d->outputs)
        return d->outputs;
    const char *s;
    int64_t k;
    if (strcmp(op, "LeakyReLU") == 0) {
        s = nn_node_attr(n, "act_type");
        return s && strcmp(s, "rrelu") == 0 ? 2 : 1;
    }
    if (fl == NN_MXNET && strcmp(op, "RNN") == 0)
        return nn_mx_rnn_outputs(n);
    if (fl == NN_MXNET) {
        s = nn_node_attr(n, "num_outputs");
        return s && nn_parse_int(s, &k) && k >= 1 && k <= 65535 ? (size_t)k : 0;
    }
    int64_t t[NN_MAX_TUPLE];
    size_t tn;
    s = nn_node_attr(n, "indices_or_sections");
    if (!s || !nn_parse_tuple(s, t, &tn))
        return 0;
    if (tn == 1 && !strchr(s, '(') && !strchr(s, '['))
        return t[0] >= 1 && t[0] <= 65535 ? (size_t)t[0] : 0;
    return tn + 1;
}

size_t nn_op_num_outputs(nn_flavour fl, const char *op, const nn_node *n)
{
    return def_num_outputs(nn_row_find(fl, op), fl, op, n);
}

/* ---- variables -------------------------------------------------------------------------------- */

/* Creates a variable's value: its attributes in meta, __shape__/__dtype__
 * hints, the parameter of the same name (making it a weight), or else a
 * graph input (with the input-shape option applied).  rn may be NULL for a
 * variable the reader synthesises. */
static gir_status make_value(nn_reader *r, const char *name, const nn_node *rn, size_t idx, int32_t *out,
                             gir_error *err)
{
    gir_graph *g = r->g;
    int32_t v;
    gir_status st0 = gir_graph_add_value(g, name, GIR_VALUE_INPUT, &v, NULL);
    if (st0 == GIR_E_DUPLICATE) {
        gir_fail(err, GIR_E_DUPLICATE, "two variables are named '%s'", name);
        if (rn)
            gir_json_err_at(err, r->raw->doc, rn->json, "/nodes/%zu/name", idx);
        gir_err_node(err, name);
        return GIR_E_DUPLICATE;
    }
    if (st0)
        TRY(gir_graph_add_value(g, name, GIR_VALUE_INPUT, &v, err));
    gir_value *val = g->values[v];
    if (rn)
        TRY(nnr_meta_pairs(g, &val->meta, nn_meta_key(r->fl, NN_MK_ATTRS), rn->attrs, rn->n_attrs, pairs_memo(r, idx),
                           err));
    for (size_t i = 0; rn && i < rn->n_attrs; i++) {
        const nn_kv *kv = &rn->attrs[i];
        if (strcmp(kv->key, "__shape__") == 0) {
            gir_shape s;
            if (!nn_parse_shape_hint(kv->value, &s)) {
                gir_fail(err, GIR_E_ATTRIBUTE, "variable attribute __shape__=\"%.80s\" is not a shape", kv->value);
                gir_json_err_at(err, r->raw->doc, kv->where, "/nodes/%zu/%s/__shape__", idx, kv->obj);
                gir_err_node(err, name);
                return GIR_E_ATTRIBUTE;
            }
            val->shape = s;
        } else if (strcmp(kv->key, "__dtype__") == 0) {
            int64_t code;
            if (nn_parse_int(kv->value, &code) && gir_mxnet_dtype(code) != GIR_DT_UNKNOWN)
                val->dtype = gir_mxnet_dtype(code);
        }
    }
    /* The parameter of that name (binary search over the sorted keys). */
    if (r->params && r->params->n) {
        size_t lo = 0, hi = r->params->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (strcmp(r->params->items[r->by_key[mid]].key, name) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < r->params->n && strcmp(r->params->items[r->by_key[lo]].key, name) == 0) {
            size_t pi = r->by_key[lo];
            const gir_param *p = &r->params->items[pi];
            if (p->empty) {
                gir_fail(err, GIR_E_PARAMS, "parameter '%s' is an empty array (no shape, no data)", p->name);
                gir_err_file(err, r->params->path);
                gir_err_loc(err, "byte %llu", (unsigned long long)p->record);
                return GIR_E_PARAMS;
            }
            /* A shape hint (unknown dims aside) must agree with the data. */
            if (val->shape.rank >= 0) {
                bool ok = val->shape.rank == p->shape.rank;
                for (int k = 0; ok && k < p->shape.rank; k++)
                    ok = val->shape.dims[k] < 0 || val->shape.dims[k] == p->shape.dims[k];
                if (!ok) {
                    char a[128], b[128];
                    gir_fail(err, GIR_E_SHAPE, "parameter '%s' has shape %s, but the graph declares %s", p->name,
                             gir_shape_str(&p->shape, a, sizeof a), gir_shape_str(&val->shape, b, sizeof b));
                    gir_err_file(err, r->params->path);
                    gir_err_node(err, name);
                    return GIR_E_SHAPE;
                }
            }
            gir_tensor *t;
            TRY(gir_params_tensor(r->params, pi, &t, err));
            gir_value_set_data(val, t);
            gir_tensor_unref(t);
            val->kind = GIR_VALUE_WEIGHT;
            r->claimed[pi] = v;
            if (r->params->kind == GIR_PARAMS_MXNET &&
                gir_attrs_set_string(g, &val->meta, "mxnet.param_prefix", p->prefix, err))
                return gir_nomem(err);
        }
    }
    if (val->kind == GIR_VALUE_INPUT) {
        for (size_t i = 0; i < r->n_ishapes; i++) {
            if (strcmp(r->ishapes[i].name, name) == 0) {
                val->shape = r->ishapes[i].shape;
                r->ishapes[i].used = true;
            }
        }
        if (r->batch > 0 && val->shape.rank > 0 && val->shape.dims[0] < 0)
            val->shape.dims[0] = r->batch;
        TRY(gir_graph_add_input(g, v, err));
    }
    *out = v;
    return GIR_OK;
}

gir_status nn_make_var(nn_reader *r, size_t idx, gir_error *err)
{
    if (r->var_made[idx])
        return GIR_OK;
    const nn_node *rn = nn_rd_raw(r, idx);
    TRY(make_value(r, rn->name, rn, idx, &r->outs[idx][0], err));
    r->var_made[idx] = true;
    return GIR_OK;
}

/* MXNet < 0.9 stored no auxiliary states: BatchNorm has 3 inputs and the
 * loader appends <name>_moving_mean and <name>_moving_var, as we do. */
static gir_status synth_bn_aux(nn_reader *r, size_t idx, int32_t *in, gir_error *err)
{
    static const char *const sfx[] = { "moving_mean", "moving_var" };
    for (size_t k = 0; k < 2; k++) {
        char *name = gir_strdupf("%s_%s", nn_rd_raw(r, idx)->name, sfx[k]);
        if (!name)
            return gir_nomem(err);
        gir_status st = make_value(r, name, NULL, idx, &in[3 + k], err);
        free(name);
        if (st)
            return st;
        if (gir_attrs_set_string(r->g, &r->g->values[in[3 + k]]->meta, "mxnet.synthesized", "1", err))
            return gir_nomem(err);
    }
    return GIR_OK;
}

/* The executor's rules for a compiled function call. */
static gir_status check_tvm_op(const nn_reader *r, size_t idx, uint32_t *n_out, gir_error *err)
{
    const nn_node *rn = nn_rd_raw(r, idx);
    static const char *const req[] = { "func_name", "num_inputs", "num_outputs", "flatten_data" };
    for (size_t k = 0; k < 4; k++)
        if (!nn_rd_attr(r, idx, req[k]))
            return nn_rd_bad_attr(r, idx, req[k], NULL, err);
    int64_t ni, no, fd;
    TRY(nn_rd_int(r, idx, "num_inputs", true, 0, &ni, err));
    TRY(nn_rd_int(r, idx, "num_outputs", true, 0, &no, err));
    TRY(nn_rd_int(r, idx, "flatten_data", true, 0, &fd, err));
    if (ni != (int64_t)rn->n_in) {
        char what[64];
        snprintf(what, sizeof what, "the number of inputs (%zu)", rn->n_in);
        return nn_rd_bad_attr(r, idx, "num_inputs", what, err);
    }
    if (no < 1 || no > 65535)
        return nn_rd_bad_attr(r, idx, "num_outputs", "a positive count", err);
    if (rn->max_index > (uint64_t)no) {
        gir_fail(err, GIR_E_REFERENCE, "an entry takes output %u of '%s', which has num_outputs %lld",
                 rn->max_index - 1, rn->name, (long long)no);
        gir_json_err_at(err, r->raw->doc, rn->json, "/nodes/%zu", idx);
        gir_err_node(err, rn->name);
        return GIR_E_REFERENCE;
    }
    *n_out = (uint32_t)no;
    return GIR_OK;
}

uint32_t nn_node_outputs(const nn_reader *r, size_t idx)
{
    const nn_node *rn = nn_rd_raw(r, idx);
    if (rn->var)
        return 1;
    uint64_t n = rn->max_index ? rn->max_index : 1;
    if (r->fl == NN_TVM && strcmp(rn->op, "tvm_op") == 0) {
        /* The count is explicit; check_tvm_op refuses a bad one. */
        int64_t no;
        const char *s = nn_rd_attr(r, idx, "num_outputs");
        if (s && nn_parse_int(s, &no) && no > (int64_t)n && no <= 65535)
            n = (uint64_t)no;
        return (uint32_t)n;
    }
    size_t own = def_num_outputs(r->defs[idx], r->fl, rn->op, rn);
    if (own > n)
        n = own;
    if (!own && r->raw->row_ptr_ok && rn->row_outputs > (int64_t)n && rn->row_outputs <= 65535)
        n = (uint64_t)rn->row_outputs;
    return (uint32_t)n;
}

gir_status nn_map_node(nn_reader *r, size_t idx, gir_error *err)
{
    const nn_node *rn = nn_rd_raw(r, idx);
    uint32_t n_out = r->n_outs[idx];
    int32_t small[16]; /* room for the synthesised BatchNorm inputs too */
    int32_t *in = rn->n_in + 2 <= 16 ? small : malloc((rn->n_in + 2) * sizeof *in);
    if (!in)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    bool deferred = false;
    for (size_t j = 0; j < rn->n_in && !st; j++) {
        uint32_t src = rn->in[j].node;
        if (r->label_only[src]) {
            in[j] = -1;
            deferred = true;
            continue;
        }
        if (nn_rd_raw(r, src)->var && !r->var_made[src]) {
            st = nn_make_var(r, src, err);
            if (st)
                break;
        }
        in[j] = rn->in[j].index < r->n_outs[src] ? r->outs[src][rn->in[j].index] : -1;
        if (in[j] < 0) {
            gir_fail(err, GIR_E_UNSUPPORTED, "'%s' takes output %u of '%s' (%s), which has no counterpart here",
                     rn->name, rn->in[j].index, nn_rd_raw(r, src)->name, nn_rd_raw(r, src)->op);
            gir_json_err_at(err, r->raw->doc, gir_json_at(gir_json_get(rn->json, "inputs"), j),
                            "/nodes/%zu/inputs/%zu", idx, j);
            gir_err_node(err, rn->name);
            st = GIR_E_UNSUPPORTED;
        }
    }
    nn_rres res = NN_OPAQUE;
    if (!st && r->fl == NN_TVM && strcmp(rn->op, "tvm_op") == 0)
        st = check_tvm_op(r, idx, &n_out, err);
    const gir_op_map *row = r->fl == NN_TVM ? NULL : r->defs[idx];
    const nn_rdef *d = row ? nn_row_rdef(row) : NULL;
    if (!st && d && r->fl == NN_MXNET && strcmp(rn->op, "BatchNorm") == 0 && rn->n_in == 3 && r->mx_version < 900) {
        st = synth_bn_aux(r, idx, in, err);
        if (!st) {
            r->bn_synth[idx] = true;
            r->n_synth++;
        }
    }
    size_t n_in = r->bn_synth[idx] ? 5 : rn->n_in;
    free(r->why);
    r->why = NULL;
    const char *unknown_key = NULL;
    if (!st && d && d->read != nn_rd_refused && !keys_known(r, idx, row, d, &unknown_key)) {
        r->why = gir_strdupf("attribute %s is not one of %s's", unknown_key, rn->op);
        if (!r->why)
            st = gir_nomem(err);
    }
    if (!st && d && !unknown_key && n_in >= d->min_in && (d->max_in == GIR_VARIADIC || n_in <= d->max_in)) {
        res = NN_MAPPED;
        st = d->read(r, idx, in, r->outs[idx], &res, err);
        if (!st && res == NN_MAPPED) {
            for (uint32_t k = 0; k < rn->max_index && !st; k++)
                if (r->outs[idx][k] < 0)
                    st = gir_fail(err, GIR_E_INTERNAL, "the mapping of %s left output %u unset", rn->op, k);
        }
    }
    if (!st && res == NN_OPAQUE) {
        if (deferred)
            for (size_t j = 0; j < rn->n_in && !st; j++) {
                if (in[j] >= 0)
                    continue;
                const nn_node *src = nn_rd_raw(r, rn->in[j].node);
                if (!src->var) {
                    st = gir_fail(err, GIR_E_UNSUPPORTED, "%s '%s' is kept verbatim%s%s, but its label comes from "
                                  "operator '%s' (%s), which only computes labels and was dropped",
                                  rn->op, rn->name, r->why ? ": " : "", r->why ? r->why : "", src->name, src->op);
                    gir_err_node(err, rn->name);
                    break;
                }
                st = nn_make_var(r, rn->in[j].node, err);
                in[j] = r->outs[rn->in[j].node][0];
            }
        gir_node *n = NULL;
        if (!st)
            st = nn_rd_node(r, idx, GIR_OP_OPAQUE, n_in, n_out, &n, err);
        for (size_t j = 0; !st && j < n_in; j++)
            nnr_set_in(n, j, in[j]);
        if (!st && r->why && gir_attrs_set_string(r->g, &n->meta, NN_META_WHY, r->why, err))
            st = gir_nomem(err);
        for (uint32_t k = 0; !st && k < n_out; k++)
            st = nn_rd_out(r, n, k, &r->outs[idx][k], err);
    }
    if (in != small)
        free(in);
    return st;
}

/* After shape inference: BatchNorm nodes whose ignored gamma/beta waited
 * for the channel count get their constants, or are kept verbatim. */
gir_status nn_resolve_pending(nn_reader *r, gir_error *err)
{
    gir_graph *g = r->g;
    size_t opaque = 0;
    const char *first = NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        gir_node *n = g->nodes[i];
        const gir_attr *p = gir_attrs_find(&n->meta, NN_META_PENDING);
        if (!p || p->type != GIR_ATTR_STRING)
            continue;
        bool gamma = strstr(p->u.s, "gamma") != NULL, beta = strstr(p->u.s, "beta") != NULL;
        gir_attrs_remove(&n->meta, NN_META_PENDING);
        int64_t c = nnr_bn_channels(r, n->in);
        if (c > 0) {
            int32_t v;
            if (gamma) {
                TRY(gir_attrs_set_string(g, &n->meta, NN_META_IGNORED_GAMMA, nn_rd_value(r, n->in[1])->name, err) ? gir_nomem(err)
                                                                                                    : GIR_OK);
                TRY(nnr_const_fill(r, n->name, "ones", c, 1.0f, &v, err));
                n->in[1] = v;
            }
            if (beta) {
                TRY(gir_attrs_set_string(g, &n->meta, NN_META_IGNORED_BETA, nn_rd_value(r, n->in[2])->name, err) ? gir_nomem(err)
                                                                                                  : GIR_OK);
                TRY(nnr_const_fill(r, n->name, "zeros", c, 0.0f, &v, err));
                n->in[2] = v;
            }
            continue;
        }
        /* Keep it verbatim: its source attributes become its attributes. */
        const char *op = gir_attrs_get_string(&n->meta, nn_meta_key(r->fl, NN_MK_OP), "BatchNorm");
        n->opaque_op = gir_arena_strdup(&g->arena, op);
        n->opaque_format = gir_arena_strdup(&g->arena, r->pfx);
        if (!n->opaque_op || !n->opaque_format)
            return gir_nomem(err);
        gir_attrs_free(&n->attrs);
        memset(&n->attrs, 0, sizeof n->attrs);
        size_t np;
        const char *const *pairs = nn_meta_pairs(&n->meta, nn_meta_key(r->fl, NN_MK_ATTRS), &np);
        for (size_t k = 0; k + 1 < np; k += 2)
            if (gir_attrs_set_string(g, &n->attrs, pairs[k], pairs[k + 1], err))
                return gir_nomem(err);
        gir_attrs_remove(&n->meta, nn_meta_key(r->fl, NN_MK_ATTRS));
        gir_attrs_remove(&n->meta, nn_meta_key(r->fl, NN_MK_OP));
        n->op = GIR_OP_OPAQUE;
        if (!opaque++)
            first = n->name;
    }
    if (opaque && gir_graph_note(g, err, "kept %zu BatchNorm node%s verbatim (first '%s'): a fixed gamma or beta needs "
                                 "the channel count; give the params or --input-shape",
                                 opaque, opaque == 1 ? "" : "s", first))
        return gir_nomem(err);
    return GIR_OK;
}
