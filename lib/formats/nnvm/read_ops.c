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

static size_t def_num_outputs(const nn_rdef *d, nn_flavour fl, const char *op, const nn_node *n);
static size_t rdef_index(nn_flavour fl, const nn_rdef *d);

static const nn_node *RN(const nn_reader *r, size_t idx)
{
    return &r->raw->nodes[idx];
}

static const nn_kv *kv_of(const nn_reader *r, size_t idx, const char *key)
{
    const nn_node *n = RN(r, idx);
    for (size_t i = 0; i < n->n_attrs; i++)
        if (gir_attr_name_eq(n->attrs[i].key, key))
            return &n->attrs[i];
    return NULL;
}

static const char *A(const nn_reader *r, size_t idx, const char *key)
{
    const nn_kv *kv = kv_of(r, idx, key);
    return kv ? kv->value : NULL;
}

static gir_status bad_attr(const nn_reader *r, size_t idx, const char *key, const char *what, gir_error *err)
{
    const nn_node *n = RN(r, idx);
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

static gir_status g_int(const nn_reader *r, size_t idx, const char *key, bool req, int64_t dflt, int64_t *out,
                        gir_error *err)
{
    const char *s = A(r, idx, key);
    if (!s) {
        if (req)
            return bad_attr(r, idx, key, NULL, err);
        *out = dflt;
        return GIR_OK;
    }
    if (!nn_parse_int(s, out))
        return bad_attr(r, idx, key, "an integer", err);
    return GIR_OK;
}

static gir_status g_float(const nn_reader *r, size_t idx, const char *key, bool req, double dflt, double *out,
                          gir_error *err)
{
    const char *s = A(r, idx, key);
    if (!s) {
        if (req)
            return bad_attr(r, idx, key, NULL, err);
        *out = dflt;
        return GIR_OK;
    }
    if (!nn_parse_float(s, out))
        return bad_attr(r, idx, key, "a number", err);
    return GIR_OK;
}

/* "None" means the default, as for MXNet's optional<bool>. */
static gir_status g_bool(const nn_reader *r, size_t idx, const char *key, bool dflt, bool *out, gir_error *err)
{
    const char *s = A(r, idx, key);
    if (!s || nn_is_none(s)) {
        *out = dflt;
        return GIR_OK;
    }
    if (!nn_parse_bool(s, out))
        return bad_attr(r, idx, key, "a boolean (True/False/1/0)", err);
    return GIR_OK;
}

/* Absent, "None" and "()" give n = 0. */
static gir_status g_tuple(const nn_reader *r, size_t idx, const char *key, bool req, int64_t *v, size_t *n,
                          gir_error *err)
{
    const char *s = A(r, idx, key);
    *n = 0;
    if (!s) {
        if (req)
            return bad_attr(r, idx, key, NULL, err);
        return GIR_OK;
    }
    if (nn_is_none(s))
        return GIR_OK;
    if (!nn_parse_tuple(s, v, n))
        return bad_attr(r, idx, key, "an integer tuple", err);
    return GIR_OK;
}

static const char *g_str(const nn_reader *r, size_t idx, const char *key, const char *dflt)
{
    const char *s = A(r, idx, key);
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
    const nn_rdef *d = r->defs[idx];
    if (RN(r, idx)->var)
        return &r->pairs_memo[NN_PAIRS_MEMO - 1];
    return d ? &r->pairs_memo[rdef_index(r->fl, d) % (NN_PAIRS_MEMO - 1)] : NULL;
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
static gir_status meta_pairs(gir_graph *g, gir_attrs *a, const char *key, const nn_kv *kv, size_t n,
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
static gir_status mk(nn_reader *r, size_t idx, gir_op op, size_t n_in, size_t n_out, gir_node **out, gir_error *err)
{
    const nn_node *rn = RN(r, idx);
    gir_graph *g = r->g;
    const char *name = rn->name;
    bool renamed = false;
    gir_node *n;
    gir_status st0 = gir_graph_add_node(g, name, op, n_in, n_out, &n, NULL);
    if (st0 == GIR_E_DUPLICATE) {
        /* Names need not be unique in these files; ours must be. */
        name = gir_graph_unique_node_name(g, name);
        if (!name)
            return gir_nomem(err);
        renamed = true;
        st0 = gir_graph_add_node(g, name, op, n_in, n_out, &n, NULL);
    }
    if (st0)
        return gir_graph_add_node(g, name, op, n_in, n_out, &n, err);
    /* The file's op name: its definition's copy of the text when it has
     * one (static, like r->pfx), else a copy (raw goes after reading). */
    const char *op_text = r->defs[idx] ? r->defs[idx]->name : gir_arena_strdup(&g->arena, rn->op);
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
    bool any = false;
    for (size_t i = 0; i < rn->n_in; i++)
        any = any || rn->in[i].version != 0;
    if (any) {
        int64_t *v = malloc(rn->n_in * sizeof *v);
        if (!v)
            return gir_nomem(err);
        for (size_t i = 0; i < rn->n_in; i++)
            v[i] = rn->in[i].version;
        gir_status st = gir_attrs_set_ints(g, &n->meta, nn_meta_key(r->fl, NN_MK_VERSIONS), v, rn->n_in, err);
        free(v);
        if (st)
            return gir_nomem(err);
    }
    if (rn->row_outputs > 0 && r->raw->row_ptr_ok) {
        const nn_rdef *d = r->defs[idx];
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
static gir_status mk_part(nn_reader *r, size_t idx, const char *suffix, gir_op op, size_t n_in, size_t n_out,
                          gir_node **out, gir_error *err)
{
    char *base = gir_strdupf("%s_%s", RN(r, idx)->name, suffix);
    if (!base)
        return gir_nomem(err);
    const char *name = gir_graph_unique_node_name(r->g, base);
    free(base);
    if (!name)
        return gir_nomem(err);
    return gir_graph_add_node(r->g, name, op, n_in, n_out, out, err);
}

/* Output k of n gets a value named after the node ("name", "name:1"). */
static gir_status mkout(nn_reader *r, gir_node *n, size_t k, int32_t *vidx, gir_error *err)
{
    char *base = k ? gir_strdupf("%s:%zu", n->name, k) : NULL;
    if (k && !base)
        return gir_nomem(err);
    const char *name = k ? base : n->name;
    /* Usually free: try it first, look for another name only if taken. */
    gir_status st = gir_node_make_output(r->g, n, k, name, NULL);
    if (st == GIR_E_DUPLICATE) {
        name = gir_graph_unique_value_name(r->g, name);
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

static gir_status set_in(gir_node *n, size_t k, int32_t v)
{
    n->in[k] = v;
    return GIR_OK;
}

/* A rank-0 constant named after node idx holding v. */
static gir_status const_scalar(nn_reader *r, gir_node *n, double v, gir_dtype dt, int32_t *vidx, gir_error *err)
{
    gir_shape s = { .rank = 0 };
    gir_tensor *t;
    TRY(gir_tensor_new(dt, &s, &t, err));
    switch (dt) {
    case GIR_DT_F64: *(double *)t->data = v; break;
    default: *(float *)t->data = (float)v; break;
    }
    char *base = gir_strdupf("%s_scalar", n->name);
    const char *name = base ? gir_graph_unique_value_name(r->g, base) : NULL;
    free(base);
    if (!name) {
        gir_tensor_unref(t);
        return gir_nomem(err);
    }
    gir_status st = gir_graph_add_const(r->g, name, t, vidx, err);
    gir_tensor_unref(t);
    return st;
}

/* A [c] constant of ones (or zeros) named "<node>_<what>". */
static gir_status const_fill(nn_reader *r, const char *node, const char *what, int64_t c, float v, int32_t *vidx,
                             gir_error *err)
{
    gir_shape s = { .rank = 1, .dims = { c } };
    gir_tensor *t;
    TRY(gir_tensor_new(GIR_DT_F32, &s, &t, err));
    float *p = t->data;
    for (int64_t i = 0; i < c; i++)
        p[i] = v;
    char *base = gir_strdupf("%s_%s", node, what);
    const char *name = base ? gir_graph_unique_value_name(r->g, base) : NULL;
    free(base);
    if (!name) {
        gir_tensor_unref(t);
        return gir_nomem(err);
    }
    gir_status st = gir_graph_add_const(r->g, name, t, vidx, err);
    gir_tensor_unref(t);
    return st;
}

static gir_value *V(const nn_reader *r, int32_t v)
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
static gir_status hint_shape(nn_reader *r, size_t idx, int32_t v, const int64_t *dims, int rank, gir_error *err)
{
    gir_value *val = V(r, v);
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
        gir_fail(err, GIR_E_SHAPE, "%s needs %s of shape %s, but it has shape %s", RN(r, idx)->op, val->name,
                 gir_shape_str(&want, a, sizeof a), gir_shape_str(&val->shape, b, sizeof b));
        gir_err_node(err, RN(r, idx)->name);
        return GIR_E_SHAPE;
    }
    return GIR_OK;
}

/* Keeps raw node idx verbatim, saying why (node meta NN_META_WHY, which the
 * writers' refusals quote). */
static gir_status keep(nn_reader *r, nn_rres *res, gir_error *err, const char *fmt, ...) GIR_PRINTF(4, 5);
static gir_status keep(nn_reader *r, nn_rres *res, gir_error *err, const char *fmt, ...)
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
static void catch_up(nn_reader *r)
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

/* Value v's shape when all its dimensions are known, else NULL. */
static const gir_shape *full_shape(nn_reader *r, int32_t v)
{
    catch_up(r);
    const gir_value *val = V(r, v);
    if (!val || val->shape.rank < 0)
        return NULL;
    for (int i = 0; i < val->shape.rank; i++)
        if (val->shape.dims[i] < 0)
            return NULL;
    return &val->shape;
}

static int rank_of(nn_reader *r, int32_t v)
{
    catch_up(r);
    return known_rank(r, v);
}

/* A node of raw node idx's mapping taking a (and b unless -1): a helper
 * "<name>_<sfx>", or with sfx NULL the node standing for idx itself. */
static gir_status node2(nn_reader *r, size_t idx, const char *sfx, gir_op op, int32_t a, int32_t b, gir_node **pn,
                        int32_t *out, gir_error *err)
{
    gir_node *n;
    size_t k = b >= 0 ? 2 : 1;
    if (sfx)
        TRY(mk_part(r, idx, sfx, op, k, 1, &n, err));
    else
        TRY(mk(r, idx, op, k, 1, &n, err));
    set_in(n, 0, a);
    if (b >= 0)
        set_in(n, 1, b);
    if (pn)
        *pn = n;
    return mkout(r, n, 0, out, err);
}

/* x op scalar (a rank-0 constant of x's float type). */
static gir_status scalar_op(nn_reader *r, size_t idx, const char *sfx, gir_op op, int32_t x, double c, int32_t *out,
                            gir_error *err)
{
    gir_node *n;
    if (sfx)
        TRY(mk_part(r, idx, sfx, op, 2, 1, &n, err));
    else
        TRY(mk(r, idx, op, 2, 1, &n, err));
    int32_t cv;
    const gir_value *xv = V(r, x);
    TRY(const_scalar(r, n, c, xv && xv->dtype == GIR_DT_F64 ? GIR_DT_F64 : GIR_DT_F32, &cv, err));
    set_in(n, 0, x);
    set_in(n, 1, cv);
    return mkout(r, n, 0, out, err);
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

static bool keys_known(const nn_reader *r, size_t idx, const nn_rdef *d, const char **unknown)
{
    const nn_node *n = RN(r, idx);
    for (size_t i = 0; i < n->n_attrs; i++) {
        const char *k = n->attrs[i].key;
        bool ok = false;
        for (const char *const *p = d->keys; !ok && p && *p; p++)
            ok = gir_attr_name_eq(*p, k);
        if (!ok && !is_hidden(k)) {
            *unknown = k;
            return false;
        }
    }
    return true;
}

/* Checks the input count against what a boolean attribute implies. */
static gir_status want_inputs(const nn_reader *r, size_t idx, size_t want, const char *why, gir_error *err)
{
    const nn_node *n = RN(r, idx);
    if (n->n_in == want)
        return GIR_OK;
    gir_fail(err, GIR_E_SCHEMA, "%s with %s takes %zu inputs, but the node has %zu", n->op, why, want, n->n_in);
    gir_json_err_at(err, r->raw->doc, gir_json_get(n->json, "inputs"), "/nodes/%zu/inputs", idx);
    gir_err_node(err, n->name);
    return GIR_E_SCHEMA;
}

/* ---- simple operators --------------------------------------------------------- */

static const nn_rdef *cur_def(const nn_reader *r, size_t idx)
{
    return r->defs[idx];
}

/* Same inputs, one output, no attributes (or only Flatten's implied axis). */
static gir_status rd_simple(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                            gir_error *err)
{
    const nn_rdef *d = cur_def(r, idx);
    const nn_node *rn = RN(r, idx);
    gir_node *n;
    TRY(mk(r, idx, d->op, rn->n_in, 1, &n, err));
    for (size_t i = 0; i < rn->n_in; i++)
        set_in(n, i, in[i]);
    if (d->op == GIR_OP_Flatten && gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err))
        return gir_nomem(err);
    (void)res;
    return mkout(r, n, 0, &out[0], err);
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

static gir_status rd_activation(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    const char *t = A(r, idx, "act_type");
    if (!t)
        return bad_attr(r, idx, "act_type", NULL, err);
    gir_op op = act_op(t);
    if (op == GIR_OP_OPAQUE) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    gir_node *n;
    TRY(mk(r, idx, op, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    return mkout(r, n, 0, &out[0], err);
}

/* MXNet's gelu, 0.5 * x * (1 + erf(x / sqrt(2))), in canonical operators. */
static gir_status gelu(nn_reader *r, size_t idx, int32_t x, int32_t *out, gir_error *err)
{
    int32_t t1, t2, t3, t4;
    TRY(scalar_op(r, idx, "div", GIR_OP_Div, x, M_SQRT2, &t1, err));
    TRY(node2(r, idx, "erf", GIR_OP_Erf, t1, -1, NULL, &t2, err));
    TRY(scalar_op(r, idx, "add", GIR_OP_Add, t2, 1.0, &t3, err));
    TRY(node2(r, idx, "mul", GIR_OP_Mul, x, t3, NULL, &t4, err));
    return scalar_op(r, idx, NULL, GIR_OP_Mul, t4, 0.5, out, err);
}

/* prelu: gamma holds one slope per channel (axis 1), or a single one;
 * canonical PRelu broadcasts from the last axis, so gamma gets trailing
 * unit axes (an Unsqueeze the writers fold back). */
static gir_status prelu(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int rank = rank_of(r, in[0]);
    if (rank < 2)
        return keep(r, res, err, "act_type=prelu on data of unknown rank (give --input-shape)");
    const gir_value *x = V(r, in[0]);
    int64_t c = x->shape.rank >= 2 ? x->shape.dims[1] : -1;
    const gir_value *gv = V(r, in[1]);
    if (!(gv && gv->shape.rank == 1 && gv->shape.dims[0] == 1))
        TRY(hint_shape(r, idx, in[1], &c, 1, err));
    int32_t slope = in[1];
    if (rank > 2) {
        int64_t axes[GIR_MAX_RANK];
        for (int i = 0; i < rank - 2; i++)
            axes[i] = i + 1;
        gir_node *u;
        TRY(mk_part(r, idx, "slope", GIR_OP_Unsqueeze, 1, 1, &u, err));
        set_in(u, 0, in[1]);
        if (gir_attrs_set_ints(r->g, &u->attrs, "axes", axes, (size_t)rank - 2, err))
            return gir_nomem(err);
        TRY(mkout(r, u, 0, &slope, err));
    }
    return node2(r, idx, NULL, GIR_OP_PRelu, in[0], slope, NULL, &out[0], err);
}

static gir_status rd_leaky(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const char *t = g_str(r, idx, "act_type", "leaky");
    double slope, lo, hi;
    TRY(g_float(r, idx, "slope", false, 0.25, &slope, err));
    TRY(g_float(r, idx, "lower_bound", false, 0.125, &lo, err));
    TRY(g_float(r, idx, "upper_bound", false, 0.334, &hi, err));
    const nn_node *rn = RN(r, idx);
    bool is_prelu = strcmp(t, "prelu") == 0, rrelu = strcmp(t, "rrelu") == 0;
    gir_op op = strcmp(t, "leaky") == 0 || rrelu ? GIR_OP_LeakyRelu
              : strcmp(t, "elu") == 0            ? GIR_OP_Elu
              : strcmp(t, "selu") == 0           ? GIR_OP_Selu
              : is_prelu                         ? GIR_OP_PRelu
              : strcmp(t, "gelu") == 0           ? GIR_OP_Mul
                                                 : GIR_OP_OPAQUE;
    if (op == GIR_OP_OPAQUE)
        return keep(r, res, err, "act_type=%s", t);
    TRY(want_inputs(r, idx, is_prelu ? 2 : 1, is_prelu ? "act_type=prelu" : "act_type other than prelu", err));
    if (is_prelu)
        return prelu(r, idx, in, out, res, err);
    if (op == GIR_OP_Mul)
        return gelu(r, idx, in[0], out, err);
    /* rrelu at inference: the slope is the middle of its random range. */
    if (rrelu && rn->max_index > 1)
        return keep(r, res, err, "act_type=rrelu with its mask output read (a training output)");
    gir_node *n;
    TRY(mk(r, idx, op, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    if (op != GIR_OP_Selu && gir_attrs_set_float(r->g, &n->attrs, "alpha", rrelu ? (lo + hi) / 2 : slope, err))
        return gir_nomem(err);
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_prelu_nnvm(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    int64_t axis;
    TRY(g_int(r, idx, "axis", false, 1, &axis, err));
    if (axis != 1)
        return keep(r, res, err, "axis=%lld (a slope per channel of axis 1 only)", (long long)axis);
    return prelu(r, idx, in, out, res, err);
}

static gir_status rd_leaky_nnvm(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    double alpha;
    TRY(g_float(r, idx, "alpha", false, 0.25, &alpha, err));
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_LeakyRelu, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    if (gir_attrs_set_float(r->g, &n->attrs, "alpha", alpha, err))
        return gir_nomem(err);
    (void)res;
    return mkout(r, n, 0, &out[0], err);
}

/* ---- convolution ----------------------------------------------------------------- */

/* Fills a spatial list: empty means every entry is fill; otherwise its length
 * must be rank. */
static gir_status spatial(const nn_reader *r, size_t idx, const char *key, const int64_t *v, size_t n, size_t rank,
                          int64_t fill, int64_t *out, gir_error *err)
{
    if (n == 0) {
        for (size_t i = 0; i < rank; i++)
            out[i] = fill;
        return GIR_OK;
    }
    if (n != rank) {
        char what[64];
        snprintf(what, sizeof what, "a tuple of %zu values like the kernel", rank);
        return bad_attr(r, idx, key, what, err);
    }
    for (size_t i = 0; i < rank; i++) {
        if (v[i] < 0 || (fill == 1 && v[i] < 1)) {
            return bad_attr(r, idx, key, fill == 1 ? "a tuple of positive values" : "a tuple of non-negative values",
                            err);
        }
        out[i] = v[i];
    }
    return GIR_OK;
}

/* NNVM padding: 1 value (all sides), rank values (symmetric), or 2*rank
 * values (top, left, bottom, right = begins then ends). */
static gir_status nnvm_pads(const nn_reader *r, size_t idx, const char *key, const int64_t *v, size_t n,
                            size_t rank, int64_t *pads, gir_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0)
            return bad_attr(r, idx, key, "a tuple of non-negative values", err);
    if (n == 0 || n == 1) {
        for (size_t i = 0; i < 2 * rank; i++)
            pads[i] = n ? v[0] : 0;
    } else if (n == rank) {
        for (size_t i = 0; i < rank; i++)
            pads[i] = pads[i + rank] = v[i];
    } else if (n == 2 * rank) {
        for (size_t i = 0; i < 2 * rank; i++)
            pads[i] = v[i];
    } else {
        return bad_attr(r, idx, key, "a tuple of 1, 2 or 4 values", err);
    }
    return GIR_OK;
}

typedef struct convp {
    size_t rank;
    int64_t kernel[3], strides[3], dil[3], pads[6], adj[3];
    int64_t channels, group;
    bool bias;
} convp;

/* The canonical attributes, set at once; their names are literals (not
 * copied), their lists share one arena block. */
static gir_status set_conv_attrs(nn_reader *r, gir_node *n, const convp *c, bool transpose, gir_error *err)
{
    gir_graph *g = r->g;
    size_t k = c->rank;
    int64_t *v = gir_arena_alloc_uninit(&g->arena, (transpose ? 6 : 5) * k * sizeof *v);
    if (!v)
        return gir_nomem(err);
    memcpy(v, c->kernel, k * sizeof *v);
    memcpy(v + k, c->strides, k * sizeof *v);
    memcpy(v + 2 * k, c->pads, 2 * k * sizeof *v);
    memcpy(v + 4 * k, c->dil, k * sizeof *v);
    if (transpose)
        memcpy(v + 5 * k, c->adj, k * sizeof *v);
    /* In the schema's order, with its default auto_pad (MXNet and NNVM
     * have none): normalising then finds nothing to fill or reorder. */
    const gir_attr at[] = {
        { .name = "auto_pad", .type = GIR_ATTR_STRING, .u.s = "NOTSET" },
        { .name = "dilations", .type = GIR_ATTR_INTS, .u.ints = { k, v + 4 * k } },
        { .name = "group", .type = GIR_ATTR_INT, .u.i = c->group },
        { .name = "kernel_shape", .type = GIR_ATTR_INTS, .u.ints = { k, v } },
        { .name = "output_padding", .type = GIR_ATTR_INTS, .u.ints = { k, v + 5 * k } },
        { .name = "pads", .type = GIR_ATTR_INTS, .u.ints = { 2 * k, v + 2 * k } },
        { .name = "strides", .type = GIR_ATTR_INTS, .u.ints = { k, v + k } },
    };
    if (transpose)
        return gir_attrs_put_list(g, &n->attrs, at, 7, err) ? gir_nomem(err) : GIR_OK;
    const gir_attr conv[] = { at[0], at[1], at[2], at[3], at[5], at[6] };
    return gir_attrs_put_list(g, &n->attrs, conv, 6, err) ? gir_nomem(err) : GIR_OK;
}

static gir_status conv_common(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, const convp *c,
                              bool transpose, gir_error *err)
{
    gir_node *n;
    TRY(mk(r, idx, transpose ? GIR_OP_ConvTranspose : GIR_OP_Conv, c->bias ? 3 : 2, 1, &n, err));
    for (size_t i = 0; i < (c->bias ? 3u : 2u); i++)
        set_in(n, i, in[i]);
    TRY(set_conv_attrs(r, n, c, transpose, err));
    int64_t w[5] = { transpose ? -1 : c->channels, transpose ? c->channels / (c->group ? c->group : 1) : -1,
                     c->kernel[0], c->kernel[1], c->kernel[2] };
    if (transpose && c->channels % c->group)
        w[1] = -1;
    TRY(hint_shape(r, idx, in[1], w, (int)c->rank + 2, err));
    if (c->bias)
        TRY(hint_shape(r, idx, in[2], &c->channels, 1, err));
    return mkout(r, n, 0, &out[0], err);
}

static bool layout_ok(const char *layout, size_t rank)
{
    if (!layout || nn_is_none(layout))
        return true;
    static const char *const ok[] = { "NCW", "NCHW", "NCDHW" };
    return rank >= 1 && rank <= 3 && strcmp(layout, ok[rank - 1]) == 0;
}

static gir_status rd_mx_conv(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    bool transpose = strcmp(RN(r, idx)->op, "Deconvolution") == 0;
    convp c = { 0 };
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(g_tuple(r, idx, "kernel", true, t, &n, err));
    if (n < 1 || n > 3)
        return bad_attr(r, idx, "kernel", "a tuple of 1 to 3 values", err);
    c.rank = n;
    TRY(spatial(r, idx, "kernel", t, n, c.rank, 1, c.kernel, err));
    TRY(g_tuple(r, idx, "stride", false, t, &n, err));
    TRY(spatial(r, idx, "stride", t, n, c.rank, 1, c.strides, err));
    TRY(g_tuple(r, idx, "dilate", false, t, &n, err));
    TRY(spatial(r, idx, "dilate", t, n, c.rank, 1, c.dil, err));
    int64_t pad[3];
    TRY(g_tuple(r, idx, "pad", false, t, &n, err));
    TRY(spatial(r, idx, "pad", t, n, c.rank, 0, pad, err));
    for (size_t i = 0; i < c.rank; i++)
        c.pads[i] = c.pads[i + c.rank] = pad[i];
    if (transpose) {
        TRY(g_tuple(r, idx, "adj", false, t, &n, err));
        TRY(spatial(r, idx, "adj", t, n, c.rank, 0, c.adj, err));
        TRY(g_tuple(r, idx, "target_shape", false, t, &n, err));
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any = any || t[i] != 0;
        if (any) {
            /* The output size given instead of padding: MXNet derives
             * symmetric pads and adj from the input size. */
            if (n != c.rank)
                return bad_attr(r, idx, "target_shape", "a tuple as long as the kernel", err);
            const gir_shape *xs = full_shape(r, in[0]);
            if (!xs || xs->rank != (int)c.rank + 2)
                return keep(r, res, err, "target_shape=%s needs the input's shape (give --input-shape)",
                            A(r, idx, "target_shape"));
            for (size_t i = 0; i < c.rank; i++) {
                int64_t full = c.strides[i] * (xs->dims[2 + i] - 1) + c.dil[i] * (c.kernel[i] - 1) + 1;
                if (full < t[i])
                    return bad_attr(r, idx, "target_shape", "at most the size the stride and kernel give", err);
                int64_t tot = full - t[i];
                c.adj[i] = tot % 2;
                c.pads[i] = c.pads[i + c.rank] = (tot + 1) / 2;
            }
        }
    }
    TRY(g_int(r, idx, "num_filter", true, 0, &c.channels, err));
    if (c.channels < 1)
        return bad_attr(r, idx, "num_filter", "a positive integer", err);
    TRY(g_int(r, idx, "num_group", false, 1, &c.group, err));
    if (c.group < 1)
        return bad_attr(r, idx, "num_group", "a positive integer", err);
    bool no_bias;
    TRY(g_bool(r, idx, "no_bias", transpose, &no_bias, err));
    c.bias = !no_bias;
    TRY(want_inputs(r, idx, c.bias ? 3 : 2, c.bias ? "no_bias=False" : "no_bias=True", err));
    if (!layout_ok(A(r, idx, "layout"), c.rank)) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return conv_common(r, idx, in, out, &c, transpose, err);
}

static gir_status rd_nnvm_conv(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                               gir_error *err)
{
    bool transpose = strcmp(RN(r, idx)->op, "conv2d_transpose") == 0;
    convp c = { .rank = 2 };
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(g_tuple(r, idx, "kernel_size", true, t, &n, err));
    TRY(spatial(r, idx, "kernel_size", t, n == 1 ? 0 : n, 2, 1, c.kernel, err));
    if (n == 1)
        c.kernel[0] = c.kernel[1] = t[0];
    if (n == 0 || c.kernel[0] < 1 || c.kernel[1] < 1)
        return bad_attr(r, idx, "kernel_size", "a tuple of 2 positive values", err);
    TRY(g_tuple(r, idx, "strides", false, t, &n, err));
    TRY(spatial(r, idx, "strides", t, n, 2, 1, c.strides, err));
    TRY(g_tuple(r, idx, "dilation", false, t, &n, err));
    TRY(spatial(r, idx, "dilation", t, n, 2, 1, c.dil, err));
    TRY(g_tuple(r, idx, "padding", false, t, &n, err));
    TRY(nnvm_pads(r, idx, "padding", t, n, 2, c.pads, err));
    if (transpose) {
        TRY(g_tuple(r, idx, "output_padding", false, t, &n, err));
        TRY(spatial(r, idx, "output_padding", t, n, 2, 0, c.adj, err));
    }
    TRY(g_int(r, idx, "channels", true, 0, &c.channels, err));
    if (c.channels < 1)
        return bad_attr(r, idx, "channels", "a positive integer", err);
    TRY(g_int(r, idx, "groups", false, 1, &c.group, err));
    if (c.group < 1)
        return bad_attr(r, idx, "groups", "a positive integer", err);
    bool use_bias;
    TRY(g_bool(r, idx, "use_bias", true, &use_bias, err));
    c.bias = use_bias;
    TRY(want_inputs(r, idx, c.bias ? 3 : 2, c.bias ? "use_bias=True" : "use_bias=False", err));
    const char *layout = g_str(r, idx, "layout", "NCHW");
    const char *kl = g_str(r, idx, "kernel_layout", "OIHW");
    const char *ol = g_str(r, idx, "out_layout", "__undef__");
    const char *od = g_str(r, idx, "out_dtype", "same");
    if (strcmp(layout, "NCHW") || strcmp(kl, "OIHW") || (strcmp(ol, "__undef__") && *ol && strcmp(ol, "NCHW")) ||
        (strcmp(od, "same") && *od)) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return conv_common(r, idx, in, out, &c, transpose, err);
}

/* ---- dense ----------------------------------------------------------------------------- */

static gir_status gemm(nn_reader *r, size_t idx, int32_t a, const int32_t *in, bool bias, int64_t units,
                       int32_t *out, gir_error *err)
{
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_Gemm, bias ? 3 : 2, 1, &n, err));
    set_in(n, 0, a);
    set_in(n, 1, in[1]);
    if (bias)
        set_in(n, 2, in[2]);
    if (gir_attrs_set_float(r->g, &n->attrs, "alpha", 1.0, err) || gir_attrs_set_float(r->g, &n->attrs, "beta", 1.0, err) ||
        gir_attrs_set_int(r->g, &n->attrs, "transA", 0, err) || gir_attrs_set_int(r->g, &n->attrs, "transB", 1, err))
        return gir_nomem(err);
    int64_t w[2] = { units, -1 };
    TRY(hint_shape(r, idx, in[1], w, 2, err));
    if (bias)
        TRY(hint_shape(r, idx, in[2], &units, 1, err));
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_fc(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t units;
    bool no_bias, flatten;
    TRY(g_int(r, idx, "num_hidden", true, 0, &units, err));
    if (units < 1)
        return bad_attr(r, idx, "num_hidden", "a positive integer", err);
    TRY(g_bool(r, idx, "no_bias", false, &no_bias, err));
    TRY(g_bool(r, idx, "flatten", true, &flatten, err));
    TRY(want_inputs(r, idx, no_bias ? 2 : 3, no_bias ? "no_bias=True" : "no_bias=False", err));
    int32_t a = in[0];
    if (flatten) {
        gir_node *f;
        TRY(mk_part(r, idx, "flatten", GIR_OP_Flatten, 1, 1, &f, err));
        set_in(f, 0, in[0]);
        if (gir_attrs_set_int(r->g, &f->attrs, "axis", 1, err) ||
            gir_attrs_set_string(r->g, &f->meta, NN_META_FC_FLATTEN, "1", err))
            return gir_nomem(err);
        TRY(mkout(r, f, 0, &a, err));
    } else if (rank_of(r, in[0]) != 2) {
        /* Applied to the last axis of an N-d input: no Gemm. */
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return gemm(r, idx, a, in, !no_bias, units, out, err);
}

static gir_status rd_dense(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                           gir_error *err)
{
    int64_t units;
    bool use_bias;
    TRY(g_int(r, idx, "units", true, 0, &units, err));
    if (units < 1)
        return bad_attr(r, idx, "units", "a positive integer", err);
    TRY(g_bool(r, idx, "use_bias", true, &use_bias, err));
    TRY(want_inputs(r, idx, use_bias ? 3 : 2, use_bias ? "use_bias=True" : "use_bias=False", err));
    if (rank_of(r, in[0]) != 2) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return gemm(r, idx, in[0], in, use_bias, units, out, err);
}

/* ---- batch normalisation ----------------------------------------------------------------- */

/* The channel count: from a 1-d operand's shape, or dimension 1 of the data. */
static int64_t bn_channels(const nn_reader *r, const int32_t *in)
{
    for (size_t i = 1; i < 5; i++) {
        const gir_value *v = V(r, in[i]);
        if (v && v->shape.rank == 1 && v->shape.dims[0] > 0)
            return v->shape.dims[0];
    }
    const gir_value *x = V(r, in[0]);
    if (x && x->shape.rank >= 2 && x->shape.dims[1] > 0)
        return x->shape.dims[1];
    /* The output channels of the Conv or Gemm that makes the data. */
    if (x && x->producer >= 0) {
        const gir_node *p = r->g->nodes[x->producer];
        const gir_value *w = p->n_in > 1 ? V(r, p->in[1]) : NULL;
        bool ok = p->op == GIR_OP_Conv || (p->op == GIR_OP_Gemm && gir_attrs_get_int(&p->attrs, "transB", 0) == 1);
        if (ok && w && w->shape.rank >= 2 && w->shape.dims[0] > 0)
            return w->shape.dims[0];
    }
    return -1;
}

static gir_status bn_common(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, double eps,
                            double momentum, bool use_gamma, bool use_beta, gir_error *err)
{
    int32_t ins[5] = { in[0], in[1], in[2], in[3], in[4] };
    int32_t ignored[2] = { -1, -1 };
    int64_t c = !use_gamma || !use_beta ? bn_channels(r, in) : 0;
    if (c < 0) {
        /* The constant needs the channel count: shape inference may give
         * it (nn_resolve_pending); gamma/beta stand in until then. */
        gir_node *n;
        TRY(mk(r, idx, GIR_OP_BatchNormalization, 5, 1, &n, err));
        for (size_t i = 0; i < 5; i++)
            set_in(n, i, in[i]);
        if (gir_attrs_set_float(r->g, &n->attrs, "epsilon", eps, err) ||
            gir_attrs_set_float(r->g, &n->attrs, "momentum", momentum, err) ||
            gir_attrs_set_string(r->g, &n->meta, NN_META_PENDING,
                                 !use_gamma && !use_beta ? "gamma,beta" : !use_gamma ? "gamma" : "beta", err))
            return gir_nomem(err);
        return mkout(r, n, 0, &out[0], err);
    }
    if (!use_gamma || !use_beta) {
        const char *nm = RN(r, idx)->name;
        if (!use_gamma) {
            ignored[0] = in[1];
            TRY(const_fill(r, nm, "ones", c, 1.0f, &ins[1], err));
        }
        if (!use_beta) {
            ignored[1] = in[2];
            TRY(const_fill(r, nm, "zeros", c, 0.0f, &ins[2], err));
        }
    }
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_BatchNormalization, 5, 1, &n, err));
    for (size_t i = 0; i < 5; i++)
        set_in(n, i, ins[i]);
    if (gir_attrs_set_float(r->g, &n->attrs, "epsilon", eps, err) ||
        gir_attrs_set_float(r->g, &n->attrs, "momentum", momentum, err))
        return gir_nomem(err);
    if ((ignored[0] >= 0 && gir_attrs_set_string(r->g, &n->meta, NN_META_IGNORED_GAMMA, V(r, ignored[0])->name, err)) ||
        (ignored[1] >= 0 && gir_attrs_set_string(r->g, &n->meta, NN_META_IGNORED_BETA, V(r, ignored[1])->name, err)))
        return gir_nomem(err);
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_mx_bn(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    double eps, momentum;
    bool fix_gamma, omv;
    int64_t axis;
    TRY(g_float(r, idx, "eps", false, 1e-3, &eps, err));
    TRY(g_float(r, idx, "momentum", false, 0.9, &momentum, err));
    TRY(g_bool(r, idx, "fix_gamma", true, &fix_gamma, err));
    TRY(g_bool(r, idx, "output_mean_var", false, &omv, err));
    TRY(g_int(r, idx, "axis", false, 1, &axis, err));
    if (axis != 1 || RN(r, idx)->max_index > 1 || (RN(r, idx)->n_in != 5 && !r->bn_synth[idx])) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return bn_common(r, idx, in, out, res, eps, momentum, !fix_gamma, true, err);
}

static gir_status rd_nnvm_bn(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    double eps, momentum;
    bool center, scale;
    int64_t axis;
    TRY(g_float(r, idx, "epsilon", false, 1e-5, &eps, err));
    TRY(g_float(r, idx, "momentum", false, 0.9, &momentum, err));
    TRY(g_bool(r, idx, "center", true, &center, err));
    TRY(g_bool(r, idx, "scale", true, &scale, err));
    TRY(g_int(r, idx, "axis", false, 1, &axis, err));
    if (axis != 1 || RN(r, idx)->max_index > 1 || RN(r, idx)->n_in != 5) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return bn_common(r, idx, in, out, res, eps, momentum, scale, center, err);
}

/* ---- pooling ------------------------------------------------------------------------------ */

typedef struct poolp {
    size_t rank;
    int64_t kernel[3], strides[3], pads[6];
    bool ceil, count_pad;
} poolp;

static gir_status pool_node(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, gir_op op, const poolp *p,
                            gir_error *err)
{
    gir_node *n;
    TRY(mk(r, idx, op, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    gir_graph *g = r->g;
    if (op == GIR_OP_MaxPool || op == GIR_OP_AveragePool) {
        int64_t ones[3] = { 1, 1, 1 };
        if (gir_attrs_set_ints(g, &n->attrs, "kernel_shape", p->kernel, p->rank, err) ||
            gir_attrs_set_ints(g, &n->attrs, "strides", p->strides, p->rank, err) ||
            gir_attrs_set_ints(g, &n->attrs, "pads", p->pads, 2 * p->rank, err) ||
            gir_attrs_set_int(g, &n->attrs, "ceil_mode", p->ceil, err) ||
            (op == GIR_OP_MaxPool && gir_attrs_set_ints(g, &n->attrs, "dilations", ones, p->rank, err)) ||
            (op == GIR_OP_AveragePool && gir_attrs_set_int(g, &n->attrs, "count_include_pad", p->count_pad, err)))
            return gir_nomem(err);
    }
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_mx_pool(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    const char *type = g_str(r, idx, "pool_type", "max");
    const char *conv = g_str(r, idx, "pooling_convention", "valid");
    bool global, count_pad;
    TRY(g_bool(r, idx, "global_pool", false, &global, err));
    TRY(g_bool(r, idx, "count_include_pad", true, &count_pad, err));
    bool is_max = strcmp(type, "max") == 0, is_avg = strcmp(type, "avg") == 0;
    if ((!is_max && !is_avg) || (strcmp(conv, "valid") && strcmp(conv, "full"))) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    poolp p = { 0 };
    TRY(g_tuple(r, idx, "kernel", !global, t, &n, err));
    if (global) {
        if (!layout_ok(A(r, idx, "layout"), n ? n : 2)) {
            *res = NN_OPAQUE;
            return GIR_OK;
        }
        return pool_node(r, idx, in, out, is_max ? GIR_OP_GlobalMaxPool : GIR_OP_GlobalAveragePool, &p, err);
    }
    if (n < 1 || n > 3)
        return bad_attr(r, idx, "kernel", "a tuple of 1 to 3 values", err);
    p.rank = n;
    TRY(spatial(r, idx, "kernel", t, n, p.rank, 1, p.kernel, err));
    TRY(g_tuple(r, idx, "stride", false, t, &n, err));
    TRY(spatial(r, idx, "stride", t, n, p.rank, 1, p.strides, err));
    int64_t pad[3];
    TRY(g_tuple(r, idx, "pad", false, t, &n, err));
    TRY(spatial(r, idx, "pad", t, n, p.rank, 0, pad, err));
    for (size_t i = 0; i < p.rank; i++)
        p.pads[i] = p.pads[i + p.rank] = pad[i];
    p.ceil = strcmp(conv, "full") == 0;
    p.count_pad = count_pad;
    if (!layout_ok(A(r, idx, "layout"), p.rank)) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return pool_node(r, idx, in, out, is_max ? GIR_OP_MaxPool : GIR_OP_AveragePool, &p, err);
}

static gir_status rd_nnvm_pool(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                               gir_error *err)
{
    const char *op = RN(r, idx)->op;
    if (strcmp(g_str(r, idx, "layout", "NCHW"), "NCHW") != 0) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    poolp p = { .rank = 2 };
    if (strncmp(op, "global_", 7) == 0)
        return pool_node(r, idx, in, out, strcmp(op, "global_max_pool2d") == 0 ? GIR_OP_GlobalMaxPool
                                                                              : GIR_OP_GlobalAveragePool,
                         &p, err);
    bool is_max = strcmp(op, "max_pool2d") == 0;
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(g_tuple(r, idx, "pool_size", true, t, &n, err));
    if (n == 1)
        t[1] = t[0], n = 2;
    if (n != 2)
        return bad_attr(r, idx, "pool_size", "a tuple of 2 values", err);
    TRY(spatial(r, idx, "pool_size", t, n, 2, 1, p.kernel, err));
    TRY(g_tuple(r, idx, "strides", false, t, &n, err));
    TRY(spatial(r, idx, "strides", t, n, 2, 1, p.strides, err));
    TRY(g_tuple(r, idx, "padding", false, t, &n, err));
    TRY(nnvm_pads(r, idx, "padding", t, n, 2, p.pads, err));
    TRY(g_bool(r, idx, "ceil_mode", false, &p.ceil, err));
    TRY(g_bool(r, idx, "count_include_pad", false, &p.count_pad, err));
    return pool_node(r, idx, in, out, is_max ? GIR_OP_MaxPool : GIR_OP_AveragePool, &p, err);
}

/* ---- softmax ------------------------------------------------------------------------------ */

static gir_status softmax_node(nn_reader *r, size_t idx, int32_t x, int32_t *out, gir_op op, int64_t axis,
                               gir_node **pn, gir_error *err)
{
    gir_node *n;
    TRY(mk(r, idx, op, 1, 1, &n, err));
    set_in(n, 0, x);
    if (gir_attrs_set_int(r->g, &n->attrs, "axis", axis, err))
        return gir_nomem(err);
    if (pn)
        *pn = n;
    return mkout(r, n, 0, &out[0], err);
}

/* A softmax over all axes but the first (MXNet's instance mode, and
 * SoftmaxOutput without multi_output): a plain Softmax(axis 1) for a
 * matrix, else Flatten, Softmax and a Reshape back, which needs the shape. */
static gir_status softmax_instance(nn_reader *r, size_t idx, int32_t x, int32_t *out, nn_rres *res,
                                   gir_node **pn, gir_error *err)
{
    int rank = rank_of(r, x);
    if (rank == 2)
        return softmax_node(r, idx, x, out, GIR_OP_Softmax, 1, pn, err);
    const gir_shape *s = full_shape(r, x);
    if (!s)
        return keep(r, res, err, "a softmax over all axes but the first of data whose shape is unknown "
                                 "(give --input-shape)");
    int32_t f, sm;
    gir_node *n;
    TRY(node2(r, idx, "flatten", GIR_OP_Flatten, x, -1, &n, &f, err));
    if (gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err))
        return gir_nomem(err);
    TRY(node2(r, idx, "softmax", GIR_OP_Softmax, f, -1, &n, &sm, err));
    if (gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err))
        return gir_nomem(err);
    int64_t dims[GIR_MAX_RANK];
    dims[0] = 0;
    for (int i = 1; i < s->rank; i++)
        dims[i] = s->dims[i];
    TRY(node2(r, idx, NULL, GIR_OP_Reshape, sm, -1, &n, out, err));
    if (gir_attrs_set_ints(r->g, &n->attrs, "shape", dims, (size_t)s->rank, err))
        return gir_nomem(err);
    if (pn)
        *pn = n;
    return GIR_OK;
}

static gir_status rd_softmax(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    int64_t axis;
    TRY(g_int(r, idx, "axis", false, -1, &axis, err));
    const char *temp = A(r, idx, "temperature");
    double tv = 1.0;
    if (temp && !nn_is_none(temp) && (!nn_parse_float(temp, &tv) || !(tv > 0) || !isfinite(tv)))
        return bad_attr(r, idx, "temperature", "a positive number", err);
    bool use_length;
    TRY(g_bool(r, idx, "use_length", false, &use_length, err));
    const char *dt = A(r, idx, "dtype");
    if (use_length)
        return keep(r, res, err, "use_length=True (a second input of lengths)");
    if (dt && !nn_is_none(dt))
        return keep(r, res, err, "dtype=%s", dt);
    if (RN(r, idx)->n_in != 1)
        return keep(r, res, err, "%zu inputs", RN(r, idx)->n_in);
    const char *op = RN(r, idx)->op;
    int32_t x = in[0];
    /* softmax(x / T) */
    if (tv != 1.0)
        TRY(scalar_op(r, idx, "temperature", GIR_OP_Div, x, tv, &x, err));
    return softmax_node(r, idx, x, out, strcmp(op, "log_softmax") == 0 ? GIR_OP_LogSoftmax : GIR_OP_Softmax,
                        axis, NULL, err);
}

bool nn_is_label_edge(const nn_node *n, size_t j)
{
    static const char *const layers[] = { "SoftmaxOutput", "Softmax", "LinearRegressionOutput",
                                          "LogisticRegressionOutput", "MAERegressionOutput", NULL };
    if (j != 1 || n->n_in != 2 || n->var)
        return false;
    for (size_t i = 0; layers[i]; i++)
        if (strcmp(n->op, layers[i]) == 0)
            return true;
    return false;
}

/* The dropped label of output layer n (raw node idx): its variable's name
 * and attributes in meta, for an MXNet writer to put back. */
static gir_status note_label(nn_reader *r, size_t idx, gir_node *n, gir_error *err)
{
    const nn_node *rn = RN(r, idx);
    if (rn->n_in != 2)
        return GIR_OK;
    const nn_node *lab = RN(r, rn->in[1].node);
    if (lab->var) {
        if (gir_attrs_set_string(r->g, &n->meta, "mxnet.label", lab->name, err))
            return gir_nomem(err);
        TRY(meta_pairs(r->g, &n->meta, "mxnet.label.attrs", lab->attrs, lab->n_attrs, NULL, err));
    } else {
        /* computed by operators that were dropped: a variable stands in */
        char *nm = gir_strdupf("%s_label", rn->name);
        gir_status st = nm && gir_attrs_set_string(r->g, &n->meta, "mxnet.label", nm, err) == GIR_OK ? GIR_OK
                                                                                                 : gir_nomem(err);
        free(nm);
        TRY(st);
    }
    r->n_labels++;
    return GIR_OK;
}

static gir_status rd_softmax_output(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                    gir_error *err)
{
    bool multi, preserve;
    TRY(g_bool(r, idx, "multi_output", false, &multi, err));
    TRY(g_bool(r, idx, "preserve_shape", false, &preserve, err));
    gir_node *n = NULL;
    /* multi_output: over axis 1; preserve_shape: over the last axis;
     * neither: over all axes but the first. */
    if (multi || preserve)
        TRY(softmax_node(r, idx, in[0], out, GIR_OP_Softmax, preserve ? -1 : 1, &n, err));
    else
        TRY(softmax_instance(r, idx, in[0], out, res, &n, err));
    if (*res == NN_OPAQUE)
        return GIR_OK;
    return note_label(r, idx, n, err);
}

/* LinearRegressionOutput, MAERegressionOutput and MakeLoss are the
 * identity at inference, LogisticRegressionOutput the sigmoid. */
static gir_status rd_output_layer(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                  gir_error *err)
{
    (void)res;
    gir_node *n;
    gir_op op = strcmp(RN(r, idx)->op, "LogisticRegressionOutput") == 0 ? GIR_OP_Sigmoid : GIR_OP_Identity;
    TRY(node2(r, idx, NULL, op, in[0], -1, &n, out, err));
    return note_label(r, idx, n, err);
}

static gir_status rd_softmax_act(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                 gir_error *err)
{
    const char *mode = g_str(r, idx, "mode", "instance");
    if (strcmp(mode, "channel") == 0)
        return softmax_node(r, idx, in[0], out, GIR_OP_Softmax, 1, NULL, err);
    if (strcmp(mode, "instance") != 0)
        return bad_attr(r, idx, "mode", "instance or channel", err);
    return softmax_instance(r, idx, in[0], out, res, NULL, err);
}

/* ---- element-wise ----------------------------------------------------------------------- */

static gir_status rd_binary(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                            gir_error *err)
{
    const nn_rdef *d = cur_def(r, idx);
    gir_node *n;
    TRY(mk(r, idx, d->op, 2, 1, &n, err));
    set_in(n, 0, in[0]);
    set_in(n, 1, in[1]);
    (void)res;
    return mkout(r, n, 0, &out[0], err);
}

/* x op scalar, or scalar op x for the r-variants. */
static gir_status rd_scalar(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                            gir_error *err)
{
    const nn_rdef *d = cur_def(r, idx);
    const char *op = RN(r, idx)->op;
    double s;
    TRY(g_float(r, idx, "scalar", true, 0, &s, err));
    bool is_int = false;
    TRY(g_bool(r, idx, "is_int", false, &is_int, err));
    if (is_int) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    bool rev = strstr(op, "_rminus") || strstr(op, "_rdiv") || strstr(op, "_rpower") || strstr(op, "__rsub") ||
               strstr(op, "__rdiv") || strstr(op, "__rpow");
    gir_node *n;
    TRY(mk(r, idx, d->op, 2, 1, &n, err));
    int32_t c;
    const gir_value *x = V(r, in[0]);
    gir_dtype dt = x && x->dtype == GIR_DT_F64 ? GIR_DT_F64 : GIR_DT_F32;
    TRY(const_scalar(r, n, s, dt, &c, err));
    set_in(n, rev ? 1 : 0, in[0]);
    set_in(n, rev ? 0 : 1, c);
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_variadic(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                              gir_error *err)
{
    const nn_rdef *d = cur_def(r, idx);
    const nn_node *rn = RN(r, idx);
    const char *na = A(r, idx, "num_args");
    int64_t k;
    if (na) {
        TRY(g_int(r, idx, "num_args", false, 0, &k, err));
        if (k != (int64_t)rn->n_in) {
            char what[64];
            snprintf(what, sizeof what, "the input count (%zu)", rn->n_in);
            return bad_attr(r, idx, "num_args", what, err);
        }
    }
    if (rn->n_in < 1) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    int64_t axis = 0;
    if (d->op == GIR_OP_Concat)
        TRY(g_int(r, idx, r->fl == NN_MXNET ? "dim" : "axis", false, 1, &axis, err));
    gir_node *n;
    TRY(mk(r, idx, d->op, rn->n_in, 1, &n, err));
    for (size_t i = 0; i < rn->n_in; i++)
        set_in(n, i, in[i]);
    if (d->op == GIR_OP_Concat && gir_attrs_set_int(r->g, &n->attrs, "axis", axis, err))
        return gir_nomem(err);
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_dropout(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    double p;
    bool mx = r->fl == NN_MXNET;
    TRY(g_float(r, idx, mx ? "p" : "rate", false, 0.5, &p, err));
    if (p < 0 || p >= 1)
        return bad_attr(r, idx, mx ? "p" : "rate", "a probability in [0, 1)", err);
    if ((mx && strcmp(g_str(r, idx, "mode", "training"), "training") != 0) || RN(r, idx)->max_index > 1) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_Dropout, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    if (gir_attrs_set_float(r->g, &n->attrs, "ratio", p, err))
        return gir_nomem(err);
    return mkout(r, n, 0, &out[0], err);
}

/* ---- shape operators --------------------------------------------------------------------- */

/* MXNet's Reshape codes against a known input shape: k a dimension, 0
 * copies the input's, -1 the remaining size, -2 copies all remaining
 * input dimensions, -3 merges two, -4 splits one into the next two codes
 * (one may be -1).  False when the codes do not fit the shape. */
bool nn_mx_reshape_dims(const int64_t *code, size_t n, const gir_shape *in, int64_t *out, int *rank)
{
    size_t i = 0;
    int k = 0, inf = -1;
    int64_t total = gir_shape_numel(in), known = 1;
    for (size_t c = 0; c < n; c++) {
        int64_t d = code[c];
        if (k >= GIR_MAX_RANK)
            return false;
        if (d > 0) {
            out[k++] = d;
            i++;
        } else if (d == 0) {
            if (i >= (size_t)in->rank)
                return false;
            out[k++] = in->dims[i++];
        } else if (d == -1) {
            if (inf >= 0)
                return false;
            inf = k;
            out[k++] = 1;
            i++;
        } else if (d == -2) {
            for (; i < (size_t)in->rank; i++) {
                if (k >= GIR_MAX_RANK)
                    return false;
                out[k++] = in->dims[i];
            }
        } else if (d == -3) {
            if (i + 1 >= (size_t)in->rank)
                return false;
            out[k++] = in->dims[i] * in->dims[i + 1];
            i += 2;
        } else if (d == -4) {
            if (c + 2 >= n || i >= (size_t)in->rank || k + 2 > GIR_MAX_RANK)
                return false;
            int64_t d0 = in->dims[i++], a = code[c + 1], b = code[c + 2];
            if ((a == -1 && b == -1) || a < -1 || b < -1 || a == 0 || b == 0)
                return false;
            if (a == -1)
                a = b > 0 && d0 % b == 0 ? d0 / b : -1;
            if (b == -1)
                b = a > 0 && d0 % a == 0 ? d0 / a : -1;
            if (a < 1 || b < 1 || a * b != d0)
                return false;
            out[k++] = a;
            out[k++] = b;
            c += 2;
        } else {
            return false;
        }
    }
    for (int j = 0; j < k; j++)
        if (j != inf)
            known *= out[j];
    if (inf >= 0) {
        if (known <= 0 || total % known)
            return false;
        out[inf] = total / known;
    } else if (known != total) {
        return false;
    }
    *rank = k;
    return true;
}

static gir_status rd_reshape(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(g_tuple(r, idx, "shape", true, t, &n, err));
    bool reverse = false, keep_hi = false;
    int64_t ts[NN_MAX_TUPLE];
    size_t tn = 0;
    if (r->fl == NN_MXNET) {
        TRY(g_bool(r, idx, "reverse", false, &reverse, err));
        TRY(g_bool(r, idx, "keep_highest", false, &keep_hi, err));
        TRY(g_tuple(r, idx, "target_shape", false, ts, &tn, err));
    }
    if (tn || keep_hi)
        return keep(r, res, err, "the legacy target_shape/keep_highest form");
    if (n == 0)
        return keep(r, res, err, "an empty shape");
    bool special = reverse;
    int minus1 = 0;
    for (size_t i = 0; i < n; i++) {
        special = special || t[i] < -1;
        minus1 += t[i] == -1;
    }
    int64_t dims[GIR_MAX_RANK];
    int rank = (int)n;
    if (special || minus1 > 1) {
        const gir_shape *s = full_shape(r, in[0]);
        if (!s)
            return keep(r, res, err, "shape=%s needs the input's shape (give --input-shape)", A(r, idx, "shape"));
        gir_shape rs = *s;
        int64_t rt[NN_MAX_TUPLE];
        if (reverse) {
            for (size_t i = 0; i < n; i++) {
                if (t[i] == -4)
                    return keep(r, res, err, "reverse=True with a -4 code");
                rt[i] = t[n - 1 - i];
            }
            for (int i = 0; i < s->rank; i++)
                rs.dims[i] = s->dims[s->rank - 1 - i];
        }
        if (!nn_mx_reshape_dims(reverse ? rt : t, n, &rs, dims, &rank)) {
            char what[160], sb[96];
            snprintf(what, sizeof what, "a valid reshape of %s", gir_shape_str(s, sb, sizeof sb));
            return bad_attr(r, idx, "shape", what, err);
        }
        if (reverse)
            for (int i = 0; i < rank / 2; i++) {
                int64_t x = dims[i];
                dims[i] = dims[rank - 1 - i];
                dims[rank - 1 - i] = x;
            }
    } else {
        memcpy(dims, t, n * sizeof *t);
    }
    gir_node *nd;
    TRY(mk(r, idx, GIR_OP_Reshape, 1, 1, &nd, err));
    set_in(nd, 0, in[0]);
    if (gir_attrs_set_ints(r->g, &nd->attrs, "shape", dims, (size_t)rank, err))
        return gir_nomem(err);
    return mkout(r, nd, 0, &out[0], err);
}

static gir_status rd_transpose(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                               gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(g_tuple(r, idx, "axes", false, t, &n, err));
    for (size_t i = 0; i < n; i++)
        if (t[i] < 0) {
            *res = NN_OPAQUE;
            return GIR_OK;
        }
    gir_node *nd;
    TRY(mk(r, idx, GIR_OP_Transpose, 1, 1, &nd, err));
    set_in(nd, 0, in[0]);
    if (n && gir_attrs_set_ints(r->g, &nd->attrs, "perm", t, n, err))
        return gir_nomem(err);
    return mkout(r, nd, 0, &out[0], err);
}

/* MXNet Pad: pad_width is (before, after) per axis; constant (with
 * constant_value), edge or reflect. */
static gir_status rd_mx_pad(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    double cv;
    TRY(g_tuple(r, idx, "pad_width", true, t, &n, err));
    if (n < 2 || n % 2 || n / 2 > GIR_MAX_RANK)
        return bad_attr(r, idx, "pad_width", "a (before, after) pair per axis", err);
    const char *mode = g_str(r, idx, "mode", "constant");
    if (strcmp(mode, "constant") != 0 && strcmp(mode, "edge") != 0 && strcmp(mode, "reflect") != 0)
        return bad_attr(r, idx, "mode", "constant, edge or reflect", err);
    TRY(g_float(r, idx, "constant_value", false, 0.0, &cv, err));
    size_t k = n / 2;
    int64_t pads[2 * GIR_MAX_RANK];
    for (size_t i = 0; i < k; i++) {
        if (t[2 * i] < 0 || t[2 * i + 1] < 0)
            return bad_attr(r, idx, "pad_width", "non-negative pads", err);
        pads[i] = t[2 * i];
        pads[k + i] = t[2 * i + 1];
    }
    gir_node *nd;
    TRY(mk(r, idx, GIR_OP_Pad, 1, 1, &nd, err));
    set_in(nd, 0, in[0]);
    if (gir_attrs_set_ints(r->g, &nd->attrs, "pads", pads, 2 * k, err) ||
        gir_attrs_set_string(r->g, &nd->attrs, "mode", mode, err) ||
        gir_attrs_set_float(r->g, &nd->attrs, "constant_value", cv, err))
        return gir_nomem(err);
    (void)res;
    return mkout(r, nd, 0, &out[0], err);
}

static gir_status rd_clip(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    double lo, hi;
    TRY(g_float(r, idx, "a_min", true, 0, &lo, err));
    TRY(g_float(r, idx, "a_max", true, 0, &hi, err));
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_Clip, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    if (gir_attrs_set_float(r->g, &n->attrs, "min", lo, err) || gir_attrs_set_float(r->g, &n->attrs, "max", hi, err))
        return gir_nomem(err);
    (void)res;
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_expand_dims(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                 gir_error *err)
{
    int64_t axis, k = 1;
    TRY(g_int(r, idx, "axis", true, 0, &axis, err));
    if (r->fl == NN_NNVM)
        TRY(g_int(r, idx, "num_newaxis", false, 1, &k, err));
    if (k < 1 || k > GIR_MAX_RANK)
        return bad_attr(r, idx, "num_newaxis", "a count from 1 to 8", err);
    if (axis < 0) {
        /* counts from the end of the output (MXNet: axis + ndim + 1) */
        int rank = rank_of(r, in[0]);
        if (rank < 0)
            return keep(r, res, err, "axis=%lld on data of unknown rank (give --input-shape)", (long long)axis);
        axis += rank + 1;
        if (axis < 0)
            return bad_attr(r, idx, "axis", "an axis of the output", err);
    }
    int64_t axes[GIR_MAX_RANK];
    for (int64_t i = 0; i < k; i++)
        axes[i] = axis + i;
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_Unsqueeze, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    if (gir_attrs_set_ints(r->g, &n->attrs, "axes", axes, (size_t)k, err))
        return gir_nomem(err);
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_squeeze(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(g_tuple(r, idx, "axis", false, t, &n, err));
    gir_node *nd;
    TRY(mk(r, idx, GIR_OP_Squeeze, 1, 1, &nd, err));
    set_in(nd, 0, in[0]);
    if (n && gir_attrs_set_ints(r->g, &nd->attrs, "axes", t, n, err))
        return gir_nomem(err);
    (void)res;
    return mkout(r, nd, 0, &out[0], err);
}

static gir_status rd_split(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t parts, axis;
    bool squeeze = false;
    if (r->fl == NN_MXNET) {
        TRY(g_int(r, idx, "num_outputs", true, 0, &parts, err));
        TRY(g_bool(r, idx, "squeeze_axis", false, &squeeze, err));
    } else {
        int64_t t[NN_MAX_TUPLE];
        size_t n;
        TRY(g_tuple(r, idx, "indices_or_sections", true, t, &n, err));
        const char *s = A(r, idx, "indices_or_sections");
        /* One bare number means that many equal sections; a list means
         * split indices, which need the dimension's size. */
        if (n != 1 || strchr(s, '(') || strchr(s, '[')) {
            *res = NN_OPAQUE;
            return GIR_OK;
        }
        parts = t[0];
    }
    TRY(g_int(r, idx, "axis", false, 1, &axis, err));
    if (parts < 1 || parts > 65535)
        return bad_attr(r, idx, r->fl == NN_MXNET ? "num_outputs" : "indices_or_sections", "a positive count", err);
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_Split, 1, (size_t)parts, &n, err));
    set_in(n, 0, in[0]);
    if (gir_attrs_set_int(r->g, &n->attrs, "axis", axis, err))
        return gir_nomem(err);
    for (int64_t k = 0; k < parts; k++)
        TRY(mkout(r, n, (size_t)k, &out[k], err));
    /* squeeze_axis: each part loses the split axis (of size 1 then). */
    for (int64_t k = 0; squeeze && k < parts; k++) {
        char sfx[32];
        snprintf(sfx, sizeof sfx, "squeeze%lld", (long long)k);
        gir_node *q;
        TRY(node2(r, idx, sfx, GIR_OP_Squeeze, out[k], -1, &q, &out[k], err));
        if (gir_attrs_set_ints(r->g, &q->attrs, "axes", &axis, 1, err))
            return gir_nomem(err);
    }
    return GIR_OK;
}

/* "To the end of the axis" in strided_slice / slice_axis. */
#define NN_SLICE_END INT32_MAX

static gir_status slice_node(nn_reader *r, size_t idx, int32_t x, const int64_t *st, const int64_t *en,
                             const int64_t *ax, const int64_t *sp, size_t n, int32_t *out, gir_error *err)
{
    gir_node *nd;
    TRY(mk(r, idx, GIR_OP_Slice, 1, 1, &nd, err));
    set_in(nd, 0, x);
    if (gir_attrs_set_ints(r->g, &nd->attrs, "starts", st, n, err) || gir_attrs_set_ints(r->g, &nd->attrs, "ends", en, n, err) ||
        gir_attrs_set_ints(r->g, &nd->attrs, "axes", ax, n, err) || gir_attrs_set_ints(r->g, &nd->attrs, "steps", sp, n, err))
        return gir_nomem(err);
    return mkout(r, nd, 0, &out[0], err);
}

/* NNVM strided_slice(begin, end, stride): axes 0..n-1; an axis taken
 * whole (0, INT32_MAX or more, step 1) is not listed. */
static gir_status rd_strided_slice(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                   gir_error *err)
{
    int64_t b[NN_MAX_TUPLE], e[NN_MAX_TUPLE], s[NN_MAX_TUPLE];
    size_t nb, ne, ns;
    TRY(g_tuple(r, idx, "begin", true, b, &nb, err));
    TRY(g_tuple(r, idx, "end", true, e, &ne, err));
    TRY(g_tuple(r, idx, "stride", false, s, &ns, err));
    if (ne != nb)
        return bad_attr(r, idx, "end", "a tuple as long as begin", err);
    if (ns && ns != nb)
        return bad_attr(r, idx, "stride", "a tuple as long as begin", err);
    int64_t st[NN_MAX_TUPLE], en[NN_MAX_TUPLE], ax[NN_MAX_TUPLE], sp[NN_MAX_TUPLE];
    size_t n = 0;
    for (size_t i = 0; i < nb; i++) {
        int64_t step = ns ? s[i] : 1;
        if (step == 0)
            return bad_attr(r, idx, "stride", "a tuple of non-zero steps", err);
        if (b[i] == 0 && e[i] >= NN_SLICE_END && step == 1)
            continue;
        st[n] = b[i];
        en[n] = e[i] >= NN_SLICE_END ? INT64_MAX : e[i];
        ax[n] = (int64_t)i;
        sp[n++] = step;
    }
    if (n == 0) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    return slice_node(r, idx, in[0], st, en, ax, sp, n, out, err);
}

/* MXNet slice_axis(axis, begin, end): end None means to the end. */
static gir_status rd_slice_axis(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    int64_t axis, begin, end = INT64_MAX;
    TRY(g_int(r, idx, "axis", true, 0, &axis, err));
    TRY(g_int(r, idx, "begin", true, 0, &begin, err));
    const char *es = A(r, idx, "end");
    if (!es)
        return bad_attr(r, idx, "end", NULL, err);
    if (!nn_is_none(es))
        TRY(g_int(r, idx, "end", true, 0, &end, err));
    int64_t one = 1;
    (void)res;
    return slice_node(r, idx, in[0], &begin, &end, &axis, &one, 1, out, err);
}

static gir_status rd_lrn(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    double alpha, beta, bias;
    int64_t size, axis = 1;
    bool mx = r->fl == NN_MXNET;
    TRY(g_float(r, idx, "alpha", !mx, 1e-4, &alpha, err));
    TRY(g_float(r, idx, "beta", !mx, 0.75, &beta, err));
    TRY(g_float(r, idx, mx ? "knorm" : "bias", !mx, 2.0, &bias, err));
    TRY(g_int(r, idx, mx ? "nsize" : "size", true, 0, &size, err));
    if (!mx)
        TRY(g_int(r, idx, "axis", true, 1, &axis, err));
    if (size < 1)
        return bad_attr(r, idx, mx ? "nsize" : "size", "a positive integer", err);
    if (axis != 1) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_LRN, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    if (gir_attrs_set_float(r->g, &n->attrs, "alpha", alpha, err) || gir_attrs_set_float(r->g, &n->attrs, "beta", beta, err) ||
        gir_attrs_set_float(r->g, &n->attrs, "bias", bias, err) || gir_attrs_set_int(r->g, &n->attrs, "size", size, err))
        return gir_nomem(err);
    return mkout(r, n, 0, &out[0], err);
}

static gir_status rd_reduce(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                            gir_error *err)
{
    const nn_rdef *d = cur_def(r, idx);
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    bool keepdims, exclude;
    TRY(g_tuple(r, idx, "axis", false, t, &n, err));
    TRY(g_bool(r, idx, "keepdims", false, &keepdims, err));
    TRY(g_bool(r, idx, "exclude", false, &exclude, err));
    if (exclude && n) {
        /* the axes not listed */
        int rank = rank_of(r, in[0]);
        if (rank < 0)
            return keep(r, res, err, "exclude=True on data of unknown rank (give --input-shape)");
        int64_t rest[NN_MAX_TUPLE];
        size_t m = 0;
        for (int a = 0; a < rank; a++) {
            bool listed = false;
            for (size_t i = 0; i < n; i++)
                listed = listed || t[i] == a || t[i] + rank == a;
            if (!listed)
                rest[m++] = a;
        }
        if (m == 0)
            return keep(r, res, err, "exclude=True excluding every axis (no reduction)");
        memcpy(t, rest, m * sizeof *t);
        n = m;
    }
    gir_node *nd;
    TRY(mk(r, idx, d->op, 1, 1, &nd, err));
    set_in(nd, 0, in[0]);
    if ((n && gir_attrs_set_ints(r->g, &nd->attrs, "axes", t, n, err)) ||
        gir_attrs_set_int(r->g, &nd->attrs, "keepdims", keepdims, err))
        return gir_nomem(err);
    return mkout(r, nd, 0, &out[0], err);
}

static gir_status rd_cast(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const char *dt = A(r, idx, "dtype");
    if (!dt)
        return bad_attr(r, idx, "dtype", NULL, err);
    gir_dtype t = gir_dltype(dt);
    if (t == GIR_DT_UNKNOWN) {
        *res = NN_OPAQUE;
        return GIR_OK;
    }
    gir_node *n;
    TRY(mk(r, idx, GIR_OP_Cast, 1, 1, &n, err));
    set_in(n, 0, in[0]);
    if (gir_attrs_set_string(r->g, &n->attrs, "to", gir_dtype_name(t), err))
        return gir_nomem(err);
    return mkout(r, n, 0, &out[0], err);
}

/* ---- operators of the model zoos (detection, faces) ------------------------------------------ */

/* A tuple of numbers with None entries ("(None, 1, 2.5)"): present[i] is
 * false for None; float values. */
static bool parse_opt_ftuple(const char *s, double *v, bool *present, size_t *n)
{
    *n = 0;
    if (!s)
        return false;
    while (*s == ' ')
        s++;
    char close = *s == '(' ? ')' : *s == '[' ? ']' : 0;
    if (close)
        s++;
    for (;;) {
        while (*s == ' ')
            s++;
        if (close && *s == close)
            break;
        if (!close && !*s)
            break;
        if (*n >= NN_MAX_TUPLE)
            return false;
        const char *e = s;
        while (*e && *e != ',' && *e != close)
            e++;
        char item[64];
        size_t len = (size_t)(e - s);
        while (len && s[len - 1] == ' ')
            len--;
        if (len == 0 || len >= sizeof item)
            return false;
        memcpy(item, s, len);
        item[len] = '\0';
        if (nn_is_none(item)) {
            present[*n] = false;
            v[*n] = 0;
        } else {
            if (!nn_parse_float(item, &v[*n]))
                return false;
            present[*n] = true;
        }
        (*n)++;
        s = e;
        if (*s == ',')
            s++;
    }
    return true;
}

static gir_status g_ftuple(const nn_reader *r, size_t idx, const char *key, const double *dflt, size_t dn,
                           double *v, size_t *n, gir_error *err)
{
    const char *s = A(r, idx, key);
    bool present[NN_MAX_TUPLE];
    if (!s || nn_is_none(s)) {
        memcpy(v, dflt, dn * sizeof *v);
        *n = dn;
        return GIR_OK;
    }
    if (!parse_opt_ftuple(s, v, present, n))
        return bad_attr(r, idx, key, "a tuple of numbers", err);
    for (size_t i = 0; i < *n; i++)
        if (!present[i])
            return bad_attr(r, idx, key, "a tuple of numbers", err);
    return GIR_OK;
}

static gir_status resize_nearest(nn_reader *r, size_t idx, const char *sfx, int32_t x, double scale, int32_t *out,
                                 gir_error *err)
{
    gir_node *n;
    TRY(node2(r, idx, sfx, GIR_OP_Resize, x, -1, &n, out, err));
    double sc[4] = { 1, 1, scale, scale };
    if (gir_attrs_set_floats(r->g, &n->attrs, "scales", sc, 4, err) ||
        gir_attrs_set_string(r->g, &n->attrs, "mode", "nearest", err) ||
        gir_attrs_set_string(r->g, &n->attrs, "coordinate_transformation_mode", "asymmetric", err) ||
        gir_attrs_set_string(r->g, &n->attrs, "nearest_mode", "floor", err))
        return gir_nomem(err);
    return GIR_OK;
}

/* UpSampling: nearest is a Resize (several inputs: each to the first's
 * output size, then concatenated or summed); bilinear is a depthwise
 * Deconvolution with the given weight, as MXNet computes it. */
static gir_status rd_upsampling(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    int64_t scale, nargs, nf;
    TRY(g_int(r, idx, "scale", true, 0, &scale, err));
    if (scale < 1)
        return bad_attr(r, idx, "scale", "a positive integer", err);
    const char *type = A(r, idx, "sample_type");
    if (!type)
        return bad_attr(r, idx, "sample_type", NULL, err);
    TRY(g_int(r, idx, "num_args", true, 0, &nargs, err));
    TRY(g_int(r, idx, "num_filter", false, 0, &nf, err));
    const nn_node *rn = RN(r, idx);
    if (strcmp(type, "bilinear") == 0) {
        TRY(want_inputs(r, idx, 2, "sample_type=bilinear (data and weight)", err));
        if (nf < 1)
            return bad_attr(r, idx, "num_filter", "a positive integer (the channel count)", err);
        convp c = { .rank = 2, .channels = nf, .group = nf, .bias = false };
        for (size_t i = 0; i < 2; i++) {
            c.kernel[i] = 2 * scale - scale % 2;
            c.strides[i] = scale;
            c.dil[i] = 1;
            c.pads[i] = c.pads[i + 2] = scale / 2; /* ceil((scale - 1) / 2) */
        }
        return conv_common(r, idx, in, out, &c, true, err);
    }
    if (strcmp(type, "nearest") != 0)
        return bad_attr(r, idx, "sample_type", "nearest or bilinear", err);
    if (nargs != (int64_t)rn->n_in) {
        char what[64];
        snprintf(what, sizeof what, "the input count (%zu)", rn->n_in);
        return bad_attr(r, idx, "num_args", what, err);
    }
    if (nargs == 1)
        return resize_nearest(r, idx, NULL, in[0], (double)scale, &out[0], err);
    const char *mode = g_str(r, idx, "multi_input_mode", "concat");
    bool sum = strcmp(mode, "sum") == 0;
    if (!sum && strcmp(mode, "concat") != 0)
        return bad_attr(r, idx, "multi_input_mode", "concat or sum", err);
    const gir_shape *s0 = full_shape(r, in[0]);
    if (!s0 || s0->rank != 4)
        return keep(r, res, err, "num_args=%lld needs the inputs' shapes (give --input-shape)", (long long)nargs);
    int64_t oh = s0->dims[2] * scale;
    int32_t *ups = malloc(rn->n_in * sizeof *ups);
    if (!ups)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    for (size_t i = 0; i < rn->n_in && !st; i++) {
        const gir_shape *si = full_shape(r, in[i]);
        if (!si || si->rank != 4 || oh % si->dims[2]) {
            st = keep(r, res, err, "input %zu's size does not divide the output size (or is unknown)", i);
            break;
        }
        char sfx[32];
        snprintf(sfx, sizeof sfx, "up%zu", i);
        st = resize_nearest(r, idx, sfx, in[i], (double)(oh / si->dims[2]), &ups[i], err);
    }
    gir_node *n = NULL;
    if (!st && *res != NN_OPAQUE)
        st = mk(r, idx, sum ? GIR_OP_Sum : GIR_OP_Concat, rn->n_in, 1, &n, err);
    if (!st && n) {
        for (size_t i = 0; i < rn->n_in; i++)
            set_in(n, i, ups[i]);
        if (!sum && gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err))
            st = gir_nomem(err);
        if (!st)
            st = mkout(r, n, 0, &out[0], err);
    }
    free(ups);
    return st;
}

/* Crop: a Slice of axes 2 and 3; the size comes from h_w or the second
 * input's shape, the offset from offset or (center_crop) the middle. */
static gir_status rd_crop(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t nargs, t[NN_MAX_TUPLE];
    size_t n;
    bool center;
    TRY(g_int(r, idx, "num_args", true, 0, &nargs, err));
    if (nargs < 1 || nargs > 2 || nargs != (int64_t)RN(r, idx)->n_in)
        return bad_attr(r, idx, "num_args", "1 or 2, the input count", err);
    TRY(g_bool(r, idx, "center_crop", false, &center, err));
    int64_t off[2] = { 0, 0 }, hw[2] = { 0, 0 };
    TRY(g_tuple(r, idx, "offset", false, t, &n, err));
    if (n && n != 2)
        return bad_attr(r, idx, "offset", "a pair", err);
    if (n)
        off[0] = t[0], off[1] = t[1];
    TRY(g_tuple(r, idx, "h_w", false, t, &n, err));
    if (n && n != 2)
        return bad_attr(r, idx, "h_w", "a pair", err);
    if (n)
        hw[0] = t[0], hw[1] = t[1];
    if (nargs == 2) {
        const gir_shape *like = full_shape(r, in[1]);
        if (!like || like->rank != 4)
            return keep(r, res, err, "num_args=2 needs the shape of the crop_like input (give --input-shape)");
        hw[0] = like->dims[2];
        hw[1] = like->dims[3];
    } else if (hw[0] < 1 || hw[1] < 1) {
        return bad_attr(r, idx, "h_w", "a pair of positive sizes (num_args=1)", err);
    }
    if (center) {
        const gir_shape *xs = full_shape(r, in[0]);
        if (!xs || xs->rank != 4)
            return keep(r, res, err, "center_crop=True needs the data's shape (give --input-shape)");
        off[0] = (xs->dims[2] - hw[0]) / 2;
        off[1] = (xs->dims[3] - hw[1]) / 2;
    }
    int64_t st[2] = { off[0], off[1] }, en[2] = { off[0] + hw[0], off[1] + hw[1] }, ax[2] = { 2, 3 }, sp[2] = { 1, 1 };
    return slice_node(r, idx, in[0], st, en, ax, sp, 2, out, err);
}

/* slice_like: data sliced from 0 to the other input's size on the axes
 * given (all when none). */
static gir_status rd_slice_like(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(g_tuple(r, idx, "axes", false, t, &n, err));
    const gir_shape *like = full_shape(r, in[1]);
    int rank = rank_of(r, in[0]);
    if (!like || rank < 0)
        return keep(r, res, err, "the shapes of both inputs are needed (give --input-shape)");
    int64_t st[NN_MAX_TUPLE], en[NN_MAX_TUPLE], ax[NN_MAX_TUPLE], sp[NN_MAX_TUPLE];
    size_t k = 0;
    for (size_t i = 0; i < (n ? n : (size_t)rank) && i < NN_MAX_TUPLE; i++) {
        int64_t a = n ? t[i] : (int64_t)i;
        if (a < 0)
            a += rank;
        if (a < 0 || a >= rank || a >= like->rank)
            return bad_attr(r, idx, "axes", "axes of both inputs", err);
        st[k] = 0;
        en[k] = like->dims[a];
        ax[k] = a;
        sp[k++] = 1;
    }
    return slice_node(r, idx, in[0], st, en, ax, sp, k, out, err);
}

/* MXNet slice(begin, end, step): None is the whole axis in the direction
 * of the step. */
static gir_status rd_mx_slice(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                              gir_error *err)
{
    double b[NN_MAX_TUPLE], e[NN_MAX_TUPLE], s[NN_MAX_TUPLE];
    bool bp[NN_MAX_TUPLE], ep[NN_MAX_TUPLE], sp_[NN_MAX_TUPLE];
    size_t nb, ne, ns = 0;
    if (!parse_opt_ftuple(A(r, idx, "begin"), b, bp, &nb))
        return bad_attr(r, idx, "begin", "a tuple of integers or None", err);
    if (!parse_opt_ftuple(A(r, idx, "end"), e, ep, &ne) || ne != nb)
        return bad_attr(r, idx, "end", "a tuple of integers or None as long as begin", err);
    const char *stxt = A(r, idx, "step");
    if (stxt && !nn_is_none(stxt) && (!parse_opt_ftuple(stxt, s, sp_, &ns) || (ns && ns != nb)))
        return bad_attr(r, idx, "step", "a tuple as long as begin", err);
    int64_t st[NN_MAX_TUPLE], en[NN_MAX_TUPLE], ax[NN_MAX_TUPLE], sp[NN_MAX_TUPLE];
    size_t k = 0;
    for (size_t i = 0; i < nb; i++) {
        int64_t step = i < ns && sp_[i] ? (int64_t)s[i] : 1;
        if (step == 0)
            return bad_attr(r, idx, "step", "a tuple of non-zero steps", err);
        if (!bp[i] && !ep[i] && step == 1)
            continue;
        if (step < 0 && (!bp[i] || !ep[i]))
            return keep(r, res, err, "a negative step with a None bound");
        st[k] = bp[i] ? (int64_t)b[i] : 0;
        en[k] = ep[i] ? (int64_t)e[i] : INT64_MAX;
        ax[k] = (int64_t)i;
        sp[k++] = step;
    }
    if (k == 0)
        return node2(r, idx, NULL, GIR_OP_Identity, in[0], -1, NULL, out, err);
    return slice_node(r, idx, in[0], st, en, ax, sp, k, out, err);
}

/* Comparisons give 1 or 0 in the data's type in MXNet: compare, Cast. */
static gir_status rd_compare(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    (void)res;
    const char *op = RN(r, idx)->op;
    const char *base = strncmp(op, "broadcast_", 10) == 0 ? op + 10 : op[0] == '_' ? op + 1 : op;
    bool ne = strcmp(base, "not_equal") == 0;
    gir_op c = ne || strcmp(base, "equal") == 0 ? GIR_OP_Equal
             : strcmp(base, "greater") == 0     ? GIR_OP_Greater
             : strcmp(base, "greater_equal") == 0 ? GIR_OP_GreaterOrEqual
             : strcmp(base, "lesser") == 0      ? GIR_OP_Less
                                                : GIR_OP_LessOrEqual;
    int32_t b, t;
    TRY(node2(r, idx, "cmp", c, in[0], in[1], NULL, &b, err));
    if (ne)
        TRY(node2(r, idx, "not", GIR_OP_Not, b, -1, NULL, &b, err));
    gir_node *n;
    TRY(node2(r, idx, NULL, GIR_OP_Cast, b, -1, &n, &t, err));
    const gir_value *x = V(r, in[0]);
    gir_dtype dt = x && x->dtype != GIR_DT_UNKNOWN ? x->dtype : GIR_DT_F32;
    if (gir_attrs_set_string(r->g, &n->attrs, "to", gir_dtype_name(dt), err))
        return gir_nomem(err);
    out[0] = t;
    return GIR_OK;
}

/* where(condition, x, y): a non-zero condition picks x; a 1-D condition
 * picks rows (axis 0), so it gets trailing unit axes. */
static gir_status rd_where(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                           gir_error *err)
{
    int rc = rank_of(r, in[0]), rx = rank_of(r, in[1]);
    if (rc < 0 || rx < 0)
        return keep(r, res, err, "the ranks of condition and x are needed (give --input-shape)");
    int32_t c;
    gir_node *n;
    TRY(node2(r, idx, "cond", GIR_OP_Cast, in[0], -1, &n, &c, err));
    if (gir_attrs_set_string(r->g, &n->attrs, "to", "bool", err))
        return gir_nomem(err);
    if (rc == 1 && rx > 1) {
        int64_t axes[GIR_MAX_RANK];
        for (int i = 0; i < rx - 1; i++)
            axes[i] = i + 1;
        TRY(node2(r, idx, "rows", GIR_OP_Unsqueeze, c, -1, &n, &c, err));
        if (gir_attrs_set_ints(r->g, &n->attrs, "axes", axes, (size_t)rx - 1, err))
            return gir_nomem(err);
    } else if (rc != rx) {
        return bad_attr(r, idx, "condition", "of x's shape or 1-D", err);
    }
    TRY(mk(r, idx, GIR_OP_Where, 3, 1, &n, err));
    set_in(n, 0, c);
    set_in(n, 1, in[1]);
    set_in(n, 2, in[2]);
    return mkout(r, n, 0, &out[0], err);
}

/* broadcast_to(shape; 0 keeps a dimension), broadcast_axis(axis, size),
 * broadcast_like(lhs, rhs): an Expand (a 1 keeps the input's dimension
 * there, as MXNet's 0 does). */
static gir_status rd_bcast_to(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                              gir_error *err)
{
    const char *op = RN(r, idx)->op;
    int64_t dims[NN_MAX_TUPLE];
    size_t n = 0;
    if (strcmp(op, "broadcast_to") == 0) {
        TRY(g_tuple(r, idx, "shape", true, dims, &n, err));
        for (size_t i = 0; i < n; i++)
            if (dims[i] == 0)
                dims[i] = 1;
            else if (dims[i] < 0)
                return bad_attr(r, idx, "shape", "a tuple of sizes (0 keeps one)", err);
    } else if (strcmp(op, "broadcast_like") == 0) {
        const char *la = A(r, idx, "lhs_axes"), *ra = A(r, idx, "rhs_axes");
        if ((la && !nn_is_none(la) && strcmp(la, "()")) || (ra && !nn_is_none(ra) && strcmp(ra, "()")))
            return keep(r, res, err, "lhs_axes/rhs_axes");
        const gir_shape *like = full_shape(r, in[1]);
        if (!like)
            return keep(r, res, err, "the shape of rhs is needed (give --input-shape)");
        n = (size_t)like->rank;
        memcpy(dims, like->dims, n * sizeof *dims);
    } else {
        int64_t ax[NN_MAX_TUPLE], sz[NN_MAX_TUPLE];
        size_t na, ns;
        TRY(g_tuple(r, idx, "axis", false, ax, &na, err));
        TRY(g_tuple(r, idx, "size", false, sz, &ns, err));
        if (na != ns)
            return bad_attr(r, idx, "size", "a tuple as long as axis", err);
        int rank = rank_of(r, in[0]);
        if (rank < 0)
            return keep(r, res, err, "data of unknown rank (give --input-shape)");
        n = (size_t)rank;
        for (size_t i = 0; i < n; i++)
            dims[i] = 1;
        for (size_t i = 0; i < na; i++) {
            int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
            if (a < 0 || a >= rank || sz[i] < 1)
                return bad_attr(r, idx, "axis", "axes of the data with positive sizes", err);
            dims[a] = sz[i];
        }
    }
    gir_node *nd;
    TRY(node2(r, idx, NULL, GIR_OP_Expand, in[0], -1, &nd, out, err));
    if (gir_attrs_set_ints(r->g, &nd->attrs, "shape", dims, n, err))
        return gir_nomem(err);
    return GIR_OK;
}

/* A raw node that is a constant once shapes are known: its value gets the
 * node's name. */
static gir_status named_const(nn_reader *r, size_t idx, const gir_shape *s, float v, const float *data, int32_t *out,
                              gir_error *err)
{
    gir_tensor *t;
    TRY(gir_tensor_new(GIR_DT_F32, s, &t, err));
    float *p = t->data;
    size_t n = (size_t)(t->nbytes / 4);
    for (size_t i = 0; i < n; i++)
        p[i] = data ? data[i] : v;
    const char *name = gir_graph_unique_value_name(r->g, RN(r, idx)->name);
    gir_status st = name ? gir_graph_add_const(r->g, name, t, out, err) : gir_nomem(err);
    gir_tensor_unref(t);
    return st;
}

/* _zeros, _ones (shape attribute), zeros_like, ones_like (an input's). */
static gir_status rd_fill(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const char *op = RN(r, idx)->op;
    float v = strstr(op, "ones") ? 1.0f : 0.0f;
    gir_shape s = { .rank = 0 };
    if (strstr(op, "_like")) {
        const gir_shape *xs = full_shape(r, in[0]);
        if (!xs)
            return keep(r, res, err, "the input's shape is needed (give --input-shape)");
        const gir_value *x = V(r, in[0]);
        if (x->dtype != GIR_DT_F32 && x->dtype != GIR_DT_UNKNOWN)
            return keep(r, res, err, "an input of type %s", gir_dtype_name(x->dtype));
        s = *xs;
    } else {
        int64_t t[NN_MAX_TUPLE];
        size_t n;
        TRY(g_tuple(r, idx, "shape", false, t, &n, err));
        const char *dt = A(r, idx, "dtype");
        if (dt && strcmp(dt, "float32") != 0)
            return keep(r, res, err, "dtype=%s", dt);
        if (n > GIR_MAX_RANK)
            return bad_attr(r, idx, "shape", "a shape of at most 8 dimensions", err);
        for (size_t i = 0; i < n; i++) {
            if (t[i] < 1)
                return keep(r, res, err, "shape=%s with unknown (0) dimensions", A(r, idx, "shape"));
            s.dims[i] = t[i];
        }
        s.rank = (int)n;
    }
    return named_const(r, idx, &s, v, NULL, out, err);
}

/* _contrib_MultiBoxPrior: anchor boxes (xmin, ymin, xmax, ymax) for every
 * cell of the input's feature map, a constant once its size is known. */
static gir_status rd_multibox_prior(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                    gir_error *err)
{
    static const double one[] = { 1.0 }, steps_d[] = { -1.0, -1.0 }, offs_d[] = { 0.5, 0.5 };
    double sizes[NN_MAX_TUPLE], ratios[NN_MAX_TUPLE], steps[NN_MAX_TUPLE], offs[NN_MAX_TUPLE];
    size_t ns, nr, nst, no;
    bool clip;
    TRY(g_ftuple(r, idx, "sizes", one, 1, sizes, &ns, err));
    TRY(g_ftuple(r, idx, "ratios", one, 1, ratios, &nr, err));
    TRY(g_ftuple(r, idx, "steps", steps_d, 2, steps, &nst, err));
    TRY(g_ftuple(r, idx, "offsets", offs_d, 2, offs, &no, err));
    TRY(g_bool(r, idx, "clip", false, &clip, err));
    if (ns < 1)
        return bad_attr(r, idx, "sizes", "a non-empty tuple", err);
    if (nr < 1)
        return bad_attr(r, idx, "ratios", "a non-empty tuple", err);
    if (nst != 2)
        return bad_attr(r, idx, "steps", "a pair (y, x)", err);
    if (no != 2)
        return bad_attr(r, idx, "offsets", "a pair (y, x)", err);
    for (size_t i = 0; i < nr; i++)
        if (!(ratios[i] > 0))
            return bad_attr(r, idx, "ratios", "a tuple of positive ratios", err);
    const gir_shape *xs = full_shape(r, in[0]);
    if (!xs || xs->rank != 4)
        return keep(r, res, err, "the input's shape is needed (give --input-shape)");
    int64_t h = xs->dims[2], w = xs->dims[3], per = (int64_t)(ns + nr - 1);
    if (h * w * per > (int64_t)1 << 26)
        return keep(r, res, err, "%lld anchors is too many to hold as a constant", (long long)(h * w * per));
    gir_shape s = { .rank = 3, .dims = { 1, h * w * per, 4 } };
    float *box = malloc((size_t)(h * w * per * 4) * sizeof *box);
    if (!box)
        return gir_nomem(err);
    float sy = steps[0] > 0 ? (float)steps[0] : 1.0f / (float)h, sx = steps[1] > 0 ? (float)steps[1] : 1.0f / (float)w;
    float *p = box;
    for (int64_t y = 0; y < h; y++) {
        float cy = ((float)y + (float)offs[0]) * sy;
        for (int64_t x = 0; x < w; x++) {
            float cx = ((float)x + (float)offs[1]) * sx;
            for (size_t k = 0; k < ns + nr - 1; k++) {
                float size = (float)sizes[k < ns ? k : 0];
                float ratio = k < ns ? 1.0f : sqrtf((float)ratios[k - ns + 1]);
                float bw = size * (float)h / (float)w * ratio / 2, bh = size / ratio / 2;
                p[0] = cx - bw;
                p[1] = cy - bh;
                p[2] = cx + bw;
                p[3] = cy + bh;
                for (int j = 0; clip && j < 4; j++)
                    p[j] = p[j] < 0 ? 0 : p[j] > 1 ? 1 : p[j];
                p += 4;
            }
        }
    }
    gir_status st = named_const(r, idx, &s, 0, box, out, err);
    free(box);
    return st;
}

/* Operators with no inference form or no canonical counterpart, refused by
 * name when written elsewhere (kept verbatim for MXNet). */
static gir_status rd_refused(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    (void)in;
    (void)out;
    const char *op = RN(r, idx)->op;
    const char *why = strcmp(op, "_foreach") == 0 || strcmp(op, "_while_loop") == 0 || strcmp(op, "_cond") == 0
                          ? "a control-flow operator with a subgraph"
                      : strcmp(op, "WarpCTC") == 0 ? "a training loss (CTC) with no inference form"
                      : strcmp(op, "_contrib_MultiBoxDetection") == 0
                          ? "box decoding with non-maximum suppression, which no canonical operator computes"
                          : "no canonical counterpart";
    return keep(r, res, err, "%s", why);
}

/* NNVM upsampling(scale, layout, method): nearest neighbour in NCHW. */
static gir_status rd_upsampling_nnvm(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                     gir_error *err)
{
    int64_t scale;
    TRY(g_int(r, idx, "scale", true, 0, &scale, err));
    if (scale < 1)
        return bad_attr(r, idx, "scale", "a positive integer", err);
    const char *layout = g_str(r, idx, "layout", "NCHW"), *method = g_str(r, idx, "method", "NEAREST_NEIGHBOR");
    if (strcmp(layout, "NCHW") != 0)
        return keep(r, res, err, "layout=%s", layout);
    if (strcmp(method, "NEAREST_NEIGHBOR") != 0 && strcmp(method, "nearest_neighbor") != 0)
        return keep(r, res, err, "method=%s", method);
    return resize_nearest(r, idx, NULL, in[0], (double)scale, &out[0], err);
}

/* ---- the tables ------------------------------------------------------------------------------ */

static const char *const k_conv_mx[] = { "kernel",   "stride",     "dilate",    "pad",    "num_filter",
                                         "num_group", "workspace", "no_bias",   "cudnn_tune", "cudnn_off",
                                         "layout",   NULL };
static const char *const k_deconv_mx[] = { "kernel",    "stride",  "dilate",     "pad",       "adj",
                                           "target_shape", "num_filter", "num_group", "workspace", "no_bias",
                                           "cudnn_tune", "cudnn_off", "layout", NULL };
static const char *const k_fc[] = { "num_hidden", "no_bias", "flatten", NULL };
static const char *const k_bn_mx[] = { "eps",      "momentum",       "fix_gamma", "use_global_stats",
                                       "output_mean_var", "axis", "cudnn_off", NULL };
static const char *const k_act[] = { "act_type", NULL };
static const char *const k_leaky[] = { "act_type", "slope", "lower_bound", "upper_bound", NULL };
static const char *const k_pool_mx[] = { "kernel", "pool_type", "global_pool", "cudnn_off", "pooling_convention",
                                         "stride", "pad",       "p_value",     "count_include_pad", "layout", NULL };
static const char *const k_softmax_out[] = { "grad_scale",     "ignore_label",  "multi_output", "use_ignore",
                                             "preserve_shape", "normalization", "out_grad",     "smooth_alpha",
                                             NULL };
static const char *const k_softmax_mx[] = { "axis", "temperature", "dtype", "use_length", NULL };
static const char *const k_softmax_act[] = { "mode", NULL };
static const char *const k_concat_mx[] = { "num_args", "dim", NULL };
static const char *const k_num_args[] = { "num_args", NULL };
static const char *const k_dropout_mx[] = { "p", "mode", "axes", "cudnn_off", NULL };
static const char *const k_reshape_mx[] = { "shape", "reverse", "target_shape", "keep_highest", NULL };
static const char *const k_axes[] = { "axes", NULL };
static const char *const k_clip[] = { "a_min", "a_max", NULL };
static const char *const k_pad_mx[] = { "mode", "pad_width", "constant_value", NULL };
static const char *const k_axis[] = { "axis", NULL };
static const char *const k_split_mx[] = { "num_outputs", "axis", "squeeze_axis", NULL };
static const char *const k_lrn_mx[] = { "alpha", "beta", "knorm", "nsize", NULL };
static const char *const k_reduce[] = { "axis", "keepdims", "exclude", NULL };
static const char *const k_cast[] = { "dtype", NULL };
static const char *const k_scalar_mx[] = { "scalar", "is_int", NULL };
static const char *const k_scalar[] = { "scalar", NULL };
static const char *const k_strided_slice[] = { "begin", "end", "stride", NULL };
static const char *const k_slice_axis[] = { "axis", "begin", "end", NULL };

static const char *const k_crop[] = { "num_args", "offset", "h_w", "center_crop", NULL };
static const char *const k_grad_scale[] = { "grad_scale", NULL };
static const char *const k_make_loss[] = { "grad_scale", "valid_thresh", "normalization", NULL };
static const char *const k_upsampling[] = { "scale", "num_filter", "sample_type", "multi_input_mode", "num_args",
                                            "workspace", NULL };
static const char *const k_multibox_prior[] = { "sizes", "ratios", "clip", "steps", "offsets", NULL };
static const char *const k_fill[] = { "shape", "dtype", "ctx", NULL };
static const char *const k_bcast_axis[] = { "axis", "size", NULL };
static const char *const k_bcast_like[] = { "lhs_axes", "rhs_axes", NULL };
static const char *const k_mx_slice[] = { "begin", "end", "step", NULL };

static const char *const k_conv_nnvm[] = { "channels", "kernel_size", "strides",   "padding",   "dilation",
                                           "groups",   "layout",      "kernel_layout", "out_layout", "out_dtype",
                                           "use_bias", NULL };
static const char *const k_deconv_nnvm[] = { "channels", "kernel_size", "strides",       "padding",
                                             "output_padding", "dilation", "groups", "layout", "kernel_layout",
                                             "out_dtype", "use_bias", NULL };
static const char *const k_dense[] = { "units", "use_bias", NULL };
static const char *const k_bn_nnvm[] = { "axis", "epsilon", "momentum", "center", "scale", NULL };
static const char *const k_alpha[] = { "alpha", NULL };
static const char *const k_pool_nnvm[] = { "pool_size", "strides", "padding", "layout", "ceil_mode",
                                           "count_include_pad", NULL };
static const char *const k_layout[] = { "layout", NULL };
static const char *const k_concat_nnvm[] = { "axis", NULL };
static const char *const k_rate[] = { "rate", NULL };
static const char *const k_shape[] = { "shape", NULL };
static const char *const k_expand_nnvm[] = { "axis", "num_newaxis", NULL };
static const char *const k_split_nnvm[] = { "indices_or_sections", "axis", NULL };
static const char *const k_upsampling_nnvm[] = { "scale", "layout", "method", NULL };
static const char *const k_lrn_nnvm[] = { "size", "axis", "alpha", "beta", "bias", NULL };

#define SIMPLE(nm, o) { nm, GIR_OP_##o, rd_simple, 1, 1, 1, NULL }
#define BINARY(nm, o) { nm, GIR_OP_##o, rd_binary, 1, 2, 2, NULL }
#define SCALAR(nm, o, k) { nm, GIR_OP_##o, rd_scalar, 1, 1, 1, k }

static const nn_rdef mx_defs[] = {
    { "Activation", GIR_OP_Relu, rd_activation, 1, 1, 1, k_act },
    { "BatchNorm", GIR_OP_BatchNormalization, rd_mx_bn, 3, 3, 5, k_bn_mx },
    SIMPLE("BlockGrad", Identity),
    { "Cast", GIR_OP_Cast, rd_cast, 1, 1, 1, k_cast },
    { "Concat", GIR_OP_Concat, rd_variadic, 1, 1, GIR_VARIADIC, k_concat_mx },
    { "Convolution", GIR_OP_Conv, rd_mx_conv, 1, 2, 3, k_conv_mx },
    { "Crop", GIR_OP_Slice, rd_crop, 1, 1, 2, k_crop },
    { "Deconvolution", GIR_OP_ConvTranspose, rd_mx_conv, 1, 2, 3, k_deconv_mx },
    { "Dropout", GIR_OP_Dropout, rd_dropout, 2, 1, 1, k_dropout_mx },
    { "ElementWiseSum", GIR_OP_Sum, rd_variadic, 1, 1, GIR_VARIADIC, k_num_args },
    { "Flatten", GIR_OP_Flatten, rd_simple, 1, 1, 1, NULL },
    { "FullyConnected", GIR_OP_Gemm, rd_fc, 1, 2, 3, k_fc },
    { "LRN", GIR_OP_LRN, rd_lrn, 1, 1, 1, k_lrn_mx },
    { "LeakyReLU", GIR_OP_LeakyRelu, rd_leaky, 0, 1, 2, k_leaky },
    { "LinearRegressionOutput", GIR_OP_Identity, rd_output_layer, 1, 1, 2, k_grad_scale },
    { "LogisticRegressionOutput", GIR_OP_Sigmoid, rd_output_layer, 1, 1, 2, k_grad_scale },
    { "MAERegressionOutput", GIR_OP_Identity, rd_output_layer, 1, 1, 2, k_grad_scale },
    { "MakeLoss", GIR_OP_Identity, rd_output_layer, 1, 1, 1, k_make_loss },
    { "Pad", GIR_OP_Pad, rd_mx_pad, 1, 1, 1, k_pad_mx },
    { "Pooling", GIR_OP_MaxPool, rd_mx_pool, 1, 1, 1, k_pool_mx },
    { "RNN", GIR_OP_LSTM, nn_rd_mx_rnn, 0, 3, 5, nn_k_rnn_mx },
    { "Reshape", GIR_OP_Reshape, rd_reshape, 1, 1, 1, k_reshape_mx },
    { "SliceChannel", GIR_OP_Split, rd_split, 0, 1, 1, k_split_mx },
    { "Softmax", GIR_OP_Softmax, rd_softmax_output, 1, 1, 2, k_softmax_out },
    { "SoftmaxActivation", GIR_OP_Softmax, rd_softmax_act, 1, 1, 1, k_softmax_act },
    { "SoftmaxOutput", GIR_OP_Softmax, rd_softmax_output, 1, 1, 2, k_softmax_out },
    { "UpSampling", GIR_OP_Resize, rd_upsampling, 1, 1, GIR_VARIADIC, k_upsampling },
    { "WarpCTC", GIR_OP_OPAQUE, rd_refused, 1, 0, GIR_VARIADIC, NULL },
    BINARY("_Div", Div),
    BINARY("_Minus", Sub),
    BINARY("_Mul", Mul),
    BINARY("_Plus", Add),
    BINARY("_add", Add),
    { "_cond", GIR_OP_OPAQUE, rd_refused, 0, 0, GIR_VARIADIC, NULL },
    { "_contrib_MultiBoxDetection", GIR_OP_OPAQUE, rd_refused, 1, 0, GIR_VARIADIC, NULL },
    { "_contrib_MultiBoxPrior", GIR_OP_OPAQUE, rd_multibox_prior, 1, 1, 1, k_multibox_prior },
    SIMPLE("_copy", Identity),
    BINARY("_div", Div),
    SCALAR("_div_scalar", Div, k_scalar_mx),
    { "_equal", GIR_OP_Equal, rd_compare, 1, 2, 2, NULL },
    { "_foreach", GIR_OP_OPAQUE, rd_refused, 0, 0, GIR_VARIADIC, NULL },
    { "_greater", GIR_OP_Greater, rd_compare, 1, 2, 2, NULL },
    { "_greater_equal", GIR_OP_GreaterOrEqual, rd_compare, 1, 2, 2, NULL },
    { "_lesser", GIR_OP_Less, rd_compare, 1, 2, 2, NULL },
    { "_lesser_equal", GIR_OP_LessOrEqual, rd_compare, 1, 2, 2, NULL },
    BINARY("_maximum", Max),
    SCALAR("_maximum_scalar", Max, k_scalar_mx),
    BINARY("_minimum", Min),
    SCALAR("_minimum_scalar", Min, k_scalar_mx),
    BINARY("_minus", Sub),
    SCALAR("_minus_scalar", Sub, k_scalar_mx),
    BINARY("_mul", Mul),
    SCALAR("_mul_scalar", Mul, k_scalar_mx),
    { "_not_equal", GIR_OP_Equal, rd_compare, 1, 2, 2, NULL },
    { "_ones", GIR_OP_OPAQUE, rd_fill, 1, 0, 0, k_fill },
    BINARY("_plus", Add),
    SCALAR("_plus_scalar", Add, k_scalar_mx),
    BINARY("_power", Pow),
    SCALAR("_power_scalar", Pow, k_scalar_mx),
    SCALAR("_rdiv_scalar", Div, k_scalar_mx),
    SCALAR("_rminus_scalar", Sub, k_scalar_mx),
    SCALAR("_rpower_scalar", Pow, k_scalar_mx),
    BINARY("_sub", Sub),
    { "_while_loop", GIR_OP_OPAQUE, rd_refused, 0, 0, GIR_VARIADIC, NULL },
    { "_zeros", GIR_OP_OPAQUE, rd_fill, 1, 0, 0, k_fill },
    SIMPLE("abs", Abs),
    { "add_n", GIR_OP_Sum, rd_variadic, 1, 1, GIR_VARIADIC, k_num_args },
    BINARY("broadcast_add", Add),
    { "broadcast_axes", GIR_OP_Expand, rd_bcast_to, 1, 1, 1, k_bcast_axis },
    { "broadcast_axis", GIR_OP_Expand, rd_bcast_to, 1, 1, 1, k_bcast_axis },
    BINARY("broadcast_div", Div),
    { "broadcast_equal", GIR_OP_Equal, rd_compare, 1, 2, 2, NULL },
    { "broadcast_greater", GIR_OP_Greater, rd_compare, 1, 2, 2, NULL },
    { "broadcast_greater_equal", GIR_OP_GreaterOrEqual, rd_compare, 1, 2, 2, NULL },
    { "broadcast_lesser", GIR_OP_Less, rd_compare, 1, 2, 2, NULL },
    { "broadcast_lesser_equal", GIR_OP_LessOrEqual, rd_compare, 1, 2, 2, NULL },
    { "broadcast_like", GIR_OP_Expand, rd_bcast_to, 1, 2, 2, k_bcast_like },
    BINARY("broadcast_maximum", Max),
    BINARY("broadcast_minimum", Min),
    BINARY("broadcast_minus", Sub),
    BINARY("broadcast_mul", Mul),
    { "broadcast_not_equal", GIR_OP_Equal, rd_compare, 1, 2, 2, NULL },
    BINARY("broadcast_plus", Add),
    BINARY("broadcast_power", Pow),
    BINARY("broadcast_sub", Sub),
    { "broadcast_to", GIR_OP_Expand, rd_bcast_to, 1, 1, 1, k_shape },
    { "cast", GIR_OP_Cast, rd_cast, 1, 1, 1, k_cast },
    SIMPLE("ceil", Ceil),
    { "clip", GIR_OP_Clip, rd_clip, 1, 1, 1, k_clip },
    { "concat", GIR_OP_Concat, rd_variadic, 1, 1, GIR_VARIADIC, k_concat_mx },
    SIMPLE("cos", Cos),
    BINARY("elemwise_add", Add),
    BINARY("elemwise_div", Div),
    BINARY("elemwise_mul", Mul),
    BINARY("elemwise_sub", Sub),
    SIMPLE("erf", Erf),
    SIMPLE("exp", Exp),
    { "expand_dims", GIR_OP_Unsqueeze, rd_expand_dims, 1, 1, 1, k_axis },
    { "flatten", GIR_OP_Flatten, rd_simple, 1, 1, 1, NULL },
    SIMPLE("floor", Floor),
    SIMPLE("identity", Identity),
    SIMPLE("log", Log),
    { "log_softmax", GIR_OP_LogSoftmax, rd_softmax, 1, 1, 2, k_softmax_mx },
    { "max", GIR_OP_ReduceMax, rd_reduce, 1, 1, 1, k_reduce },
    { "mean", GIR_OP_ReduceMean, rd_reduce, 1, 1, 1, k_reduce },
    { "min", GIR_OP_ReduceMin, rd_reduce, 1, 1, 1, k_reduce },
    SIMPLE("negative", Neg),
    { "ones_like", GIR_OP_OPAQUE, rd_fill, 1, 1, 1, NULL },
    { "prod", GIR_OP_ReduceProd, rd_reduce, 1, 1, 1, k_reduce },
    SIMPLE("reciprocal", Reciprocal),
    SIMPLE("relu", Relu),
    { "reshape", GIR_OP_Reshape, rd_reshape, 1, 1, 1, k_reshape_mx },
    SIMPLE("round", Round),
    SIMPLE("sigmoid", Sigmoid),
    SIMPLE("sign", Sign),
    SIMPLE("sin", Sin),
    { "slice", GIR_OP_Slice, rd_mx_slice, 1, 1, 1, k_mx_slice },
    { "slice_axis", GIR_OP_Slice, rd_slice_axis, 1, 1, 1, k_slice_axis },
    { "slice_like", GIR_OP_Slice, rd_slice_like, 1, 2, 2, k_axes },
    { "softmax", GIR_OP_Softmax, rd_softmax, 1, 1, 2, k_softmax_mx },
    SIMPLE("softsign", Softsign),
    { "split", GIR_OP_Split, rd_split, 0, 1, 1, k_split_mx },
    SIMPLE("sqrt", Sqrt),
    { "squeeze", GIR_OP_Squeeze, rd_squeeze, 1, 1, 1, k_axis },
    SIMPLE("stop_gradient", Identity),
    { "sum", GIR_OP_ReduceSum, rd_reduce, 1, 1, 1, k_reduce },
    SIMPLE("tanh", Tanh),
    { "transpose", GIR_OP_Transpose, rd_transpose, 1, 1, 1, k_axes },
    { "where", GIR_OP_Where, rd_where, 1, 3, 3, NULL },
    { "zeros_like", GIR_OP_OPAQUE, rd_fill, 1, 1, 1, NULL },
    { NULL, 0, NULL, 0, 0, 0, NULL },
};

static const nn_rdef nnvm_defs[] = {
    SCALAR("__add_scalar__", Add, k_scalar),
    SCALAR("__div_scalar__", Div, k_scalar),
    SCALAR("__mul_scalar__", Mul, k_scalar),
    SCALAR("__pow_scalar__", Pow, k_scalar),
    SCALAR("__rdiv_scalar__", Div, k_scalar),
    SCALAR("__rpow_scalar__", Pow, k_scalar),
    SCALAR("__rsub_scalar__", Sub, k_scalar),
    SCALAR("__sub_scalar__", Sub, k_scalar),
    SIMPLE("abs", Abs),
    { "avg_pool2d", GIR_OP_AveragePool, rd_nnvm_pool, 1, 1, 1, k_pool_nnvm },
    { "batch_norm", GIR_OP_BatchNormalization, rd_nnvm_bn, 3, 5, 5, k_bn_nnvm },
    SIMPLE("block_grad", Identity),
    BINARY("broadcast_add", Add),
    BINARY("broadcast_div", Div),
    BINARY("broadcast_max", Max),
    BINARY("broadcast_min", Min),
    BINARY("broadcast_mul", Mul),
    BINARY("broadcast_pow", Pow),
    BINARY("broadcast_sub", Sub),
    { "broadcast_to", GIR_OP_Expand, rd_bcast_to, 1, 1, 1, k_shape },
    { "cast", GIR_OP_Cast, rd_cast, 1, 1, 1, k_cast },
    SIMPLE("ceil", Ceil),
    { "clip", GIR_OP_Clip, rd_clip, 1, 1, 1, k_clip },
    { "concatenate", GIR_OP_Concat, rd_variadic, 1, 1, GIR_VARIADIC, k_concat_nnvm },
    { "conv2d", GIR_OP_Conv, rd_nnvm_conv, 1, 2, 3, k_conv_nnvm },
    { "conv2d_transpose", GIR_OP_ConvTranspose, rd_nnvm_conv, 1, 2, 3, k_deconv_nnvm },
    SIMPLE("copy", Identity),
    { "dense", GIR_OP_Gemm, rd_dense, 1, 2, 3, k_dense },
    { "dropout", GIR_OP_Dropout, rd_dropout, 2, 1, 1, k_rate },
    BINARY("elemwise_add", Add),
    BINARY("elemwise_div", Div),
    BINARY("elemwise_mul", Mul),
    BINARY("elemwise_pow", Pow),
    BINARY("elemwise_sub", Sub),
    { "elemwise_sum", GIR_OP_Sum, rd_variadic, 1, 1, GIR_VARIADIC, k_num_args },
    SIMPLE("exp", Exp),
    { "expand_dims", GIR_OP_Unsqueeze, rd_expand_dims, 1, 1, 1, k_expand_nnvm },
    { "flatten", GIR_OP_Flatten, rd_simple, 1, 1, 1, NULL },
    SIMPLE("floor", Floor),
    { "global_avg_pool2d", GIR_OP_GlobalAveragePool, rd_nnvm_pool, 1, 1, 1, k_layout },
    { "global_max_pool2d", GIR_OP_GlobalMaxPool, rd_nnvm_pool, 1, 1, 1, k_layout },
    { "leaky_relu", GIR_OP_LeakyRelu, rd_leaky_nnvm, 1, 1, 1, k_alpha },
    SIMPLE("log", Log),
    { "log_softmax", GIR_OP_LogSoftmax, rd_softmax, 1, 1, 1, k_axis },
    { "lrn", GIR_OP_LRN, rd_lrn, 1, 1, 1, k_lrn_nnvm },
    { "max", GIR_OP_ReduceMax, rd_reduce, 1, 1, 1, k_reduce },
    { "max_pool2d", GIR_OP_MaxPool, rd_nnvm_pool, 1, 1, 1, k_pool_nnvm },
    { "mean", GIR_OP_ReduceMean, rd_reduce, 1, 1, 1, k_reduce },
    { "min", GIR_OP_ReduceMin, rd_reduce, 1, 1, 1, k_reduce },
    SIMPLE("negative", Neg),
    { "prelu", GIR_OP_PRelu, rd_prelu_nnvm, 1, 2, 2, k_axis },
    { "prod", GIR_OP_ReduceProd, rd_reduce, 1, 1, 1, k_reduce },
    SIMPLE("relu", Relu),
    { "reshape", GIR_OP_Reshape, rd_reshape, 1, 1, 1, k_shape },
    SIMPLE("round", Round),
    SIMPLE("sigmoid", Sigmoid),
    { "softmax", GIR_OP_Softmax, rd_softmax, 1, 1, 1, k_axis },
    { "split", GIR_OP_Split, rd_split, 0, 1, 1, k_split_nnvm },
    SIMPLE("sqrt", Sqrt),
    { "squeeze", GIR_OP_Squeeze, rd_squeeze, 1, 1, 1, k_axis },
    { "strided_slice", GIR_OP_Slice, rd_strided_slice, 1, 1, 1, k_strided_slice },
    { "sum", GIR_OP_ReduceSum, rd_reduce, 1, 1, 1, k_reduce },
    SIMPLE("tanh", Tanh),
    { "transpose", GIR_OP_Transpose, rd_transpose, 1, 1, 1, k_axes },
    { "upsampling", GIR_OP_Resize, rd_upsampling_nnvm, 1, 1, 1, k_upsampling_nnvm },
    { NULL, 0, NULL, 0, 0, 0, NULL },
};

#define N_MX_DEFS (sizeof mx_defs / sizeof *mx_defs - 1)
#define N_NNVM_DEFS (sizeof nnvm_defs / sizeof *nnvm_defs - 1)

/* The tables are sorted by name (bytewise), checked by nn_rdef_sorted. */
const nn_rdef *nn_rdef_find(nn_flavour fl, const char *op)
{
    const nn_rdef *t = fl == NN_MXNET ? mx_defs : fl == NN_NNVM ? nnvm_defs : NULL;
    size_t lo = 0, hi = fl == NN_MXNET ? N_MX_DEFS : fl == NN_NNVM ? N_NNVM_DEFS : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        /* the first byte orders most pairs without a call */
        int c = t[mid].name[0] != op[0] ? (unsigned char)t[mid].name[0] - (unsigned char)op[0] : strcmp(t[mid].name, op);
        if (c == 0)
            return &t[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* d's place in fl's table (d from nn_rdef_find(fl, ...)). */
static size_t rdef_index(nn_flavour fl, const nn_rdef *d)
{
    return (size_t)(d - (fl == NN_MXNET ? mx_defs : nnvm_defs));
}

bool nn_rdef_sorted(void)
{
    for (size_t i = 1; i < N_MX_DEFS; i++)
        if (strcmp(mx_defs[i - 1].name, mx_defs[i].name) >= 0)
            return false;
    for (size_t i = 1; i < N_NNVM_DEFS; i++)
        if (strcmp(nnvm_defs[i - 1].name, nnvm_defs[i].name) >= 0)
            return false;
    return true;
}

bool nn_op_known(nn_flavour fl, const char *op)
{
    return nn_rdef_find(fl, op) != NULL;
}

/* nn_op_num_outputs for op's definition d (NULL: unknown op). */
static size_t def_num_outputs(const nn_rdef *d, nn_flavour fl, const char *op, const nn_node *n)
{
    if (!d)
        return 0;
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
    return def_num_outputs(nn_rdef_find(fl, op), fl, op, n);
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
        TRY(meta_pairs(g, &val->meta, nn_meta_key(r->fl, NN_MK_ATTRS), rn->attrs, rn->n_attrs, pairs_memo(r, idx),
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
    const nn_node *rn = RN(r, idx);
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
        char *name = gir_strdupf("%s_%s", RN(r, idx)->name, sfx[k]);
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
    const nn_node *rn = RN(r, idx);
    static const char *const req[] = { "func_name", "num_inputs", "num_outputs", "flatten_data" };
    for (size_t k = 0; k < 4; k++)
        if (!A(r, idx, req[k]))
            return bad_attr(r, idx, req[k], NULL, err);
    int64_t ni, no, fd;
    TRY(g_int(r, idx, "num_inputs", true, 0, &ni, err));
    TRY(g_int(r, idx, "num_outputs", true, 0, &no, err));
    TRY(g_int(r, idx, "flatten_data", true, 0, &fd, err));
    if (ni != (int64_t)rn->n_in) {
        char what[64];
        snprintf(what, sizeof what, "the number of inputs (%zu)", rn->n_in);
        return bad_attr(r, idx, "num_inputs", what, err);
    }
    if (no < 1 || no > 65535)
        return bad_attr(r, idx, "num_outputs", "a positive count", err);
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
    const nn_node *rn = RN(r, idx);
    if (rn->var)
        return 1;
    uint64_t n = rn->max_index ? rn->max_index : 1;
    if (r->fl == NN_TVM && strcmp(rn->op, "tvm_op") == 0) {
        /* The count is explicit; check_tvm_op refuses a bad one. */
        int64_t no;
        const char *s = A(r, idx, "num_outputs");
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
    const nn_node *rn = RN(r, idx);
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
        if (RN(r, src)->var && !r->var_made[src]) {
            st = nn_make_var(r, src, err);
            if (st)
                break;
        }
        in[j] = rn->in[j].index < r->n_outs[src] ? r->outs[src][rn->in[j].index] : -1;
        if (in[j] < 0) {
            gir_fail(err, GIR_E_UNSUPPORTED, "'%s' takes output %u of '%s' (%s), which has no counterpart here",
                     rn->name, rn->in[j].index, RN(r, src)->name, RN(r, src)->op);
            gir_json_err_at(err, r->raw->doc, gir_json_at(gir_json_get(rn->json, "inputs"), j),
                            "/nodes/%zu/inputs/%zu", idx, j);
            gir_err_node(err, rn->name);
            st = GIR_E_UNSUPPORTED;
        }
    }
    nn_rres res = NN_OPAQUE;
    if (!st && r->fl == NN_TVM && strcmp(rn->op, "tvm_op") == 0)
        st = check_tvm_op(r, idx, &n_out, err);
    const nn_rdef *d = r->fl == NN_TVM ? NULL : r->defs[idx];
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
    if (!st && d && d->read != rd_refused && !keys_known(r, idx, d, &unknown_key)) {
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
                const nn_node *src = RN(r, rn->in[j].node);
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
            st = mk(r, idx, GIR_OP_OPAQUE, n_in, n_out, &n, err);
        for (size_t j = 0; !st && j < n_in; j++)
            set_in(n, j, in[j]);
        if (!st && r->why && gir_attrs_set_string(r->g, &n->meta, NN_META_WHY, r->why, err))
            st = gir_nomem(err);
        for (uint32_t k = 0; !st && k < n_out; k++)
            st = mkout(r, n, k, &r->outs[idx][k], err);
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
        int64_t c = bn_channels(r, n->in);
        if (c > 0) {
            int32_t v;
            if (gamma) {
                TRY(gir_attrs_set_string(g, &n->meta, NN_META_IGNORED_GAMMA, V(r, n->in[1])->name, err) ? gir_nomem(err)
                                                                                                    : GIR_OK);
                TRY(const_fill(r, n->name, "ones", c, 1.0f, &v, err));
                n->in[1] = v;
            }
            if (beta) {
                TRY(gir_attrs_set_string(g, &n->meta, NN_META_IGNORED_BETA, V(r, n->in[2])->name, err) ? gir_nomem(err)
                                                                                                  : GIR_OK);
                TRY(const_fill(r, n->name, "zeros", c, 0.0f, &v, err));
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

/* ---- for the mappings kept in their own files (read_ops_rnn.c) ------------------------------- */

gir_status nn_rd_node(nn_reader *r, size_t idx, gir_op op, size_t n_in, size_t n_out, gir_node **out, gir_error *err)
{
    return mk(r, idx, op, n_in, n_out, out, err);
}

gir_status nn_rd_part(nn_reader *r, size_t idx, const char *suffix, gir_op op, size_t n_in, size_t n_out,
                      gir_node **out, gir_error *err)
{
    return mk_part(r, idx, suffix, op, n_in, n_out, out, err);
}

gir_status nn_rd_out(nn_reader *r, gir_node *n, size_t k, int32_t *vidx, gir_error *err)
{
    return mkout(r, n, k, vidx, err);
}

gir_status nn_rd_int(const nn_reader *r, size_t idx, const char *key, bool req, int64_t dflt, int64_t *out,
                     gir_error *err)
{
    return g_int(r, idx, key, req, dflt, out, err);
}

gir_status nn_rd_bool(const nn_reader *r, size_t idx, const char *key, bool dflt, bool *out, gir_error *err)
{
    return g_bool(r, idx, key, dflt, out, err);
}

const char *nn_rd_str(const nn_reader *r, size_t idx, const char *key, const char *dflt)
{
    return g_str(r, idx, key, dflt);
}

gir_status nn_rd_bad_attr(const nn_reader *r, size_t idx, const char *key, const char *what, gir_error *err)
{
    return bad_attr(r, idx, key, what, err);
}
