/* Reading ONNX: ModelProto -> gir_graph. */
#include "read.h"
#include "io/pbwire.h"
#include "passes/passes.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

bool onnxr_is_default_domain(const char *d)
{
    return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

/* ---- protobuf diagnostics ------------------------------------------------- */

static bool varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
    const uint8_t *q = p + *i;
    bool ok = gir_pb_get_varint(&q, p + n, v);
    *i = (size_t)(q - p);
    return ok;
}

/* Walks the fields of one message level and says where it breaks. */
static bool scan_level(const uint8_t *p, size_t n, size_t base, char *why, size_t whylen, size_t *sub_off,
                       size_t *sub_len, uint32_t want_field)
{
    size_t i = 0;
    *sub_len = 0;
    while (i < n) {
        size_t at = i;
        uint64_t key, v;
        if (!varint(p, n, &i, &key)) {
            snprintf(why, whylen, "truncated field key at byte %zu", base + at);
            return false;
        }
        uint32_t field = (uint32_t)(key >> 3), wt = key & 7;
        if (field == 0) {
            snprintf(why, whylen, "field number 0 at byte %zu", base + at);
            return false;
        }
        switch (wt) {
        case 0:
            if (!varint(p, n, &i, &v)) {
                snprintf(why, whylen, "truncated varint of field %u at byte %zu", field, base + at);
                return false;
            }
            break;
        case 1:
        case 5: {
            size_t w = wt == 1 ? 8 : 4;
            if (n - i < w) {
                snprintf(why, whylen, "truncated %zu-byte value of field %u at byte %zu", w, field, base + at);
                return false;
            }
            i += w;
            break;
        }
        case 2:
            if (!varint(p, n, &i, &v)) {
                snprintf(why, whylen, "truncated length of field %u at byte %zu", field, base + at);
                return false;
            }
            if (v > n - i) {
                snprintf(why, whylen, "field %u at byte %zu needs %llu bytes but only %zu remain (truncated file?)",
                         field, base + at, (unsigned long long)v, n - i);
                return false;
            }
            if (field == want_field) {
                *sub_off = i;
                *sub_len = (size_t)v;
            }
            i += (size_t)v;
            break;
        default:
            snprintf(why, whylen, "invalid wire type %u of field %u at byte %zu", wt, field, base + at);
            return false;
        }
    }
    return true;
}

static gir_status unpack_failed(const uint8_t *p, size_t n, gir_error *err)
{
    char why[200];
    size_t off, len;
    if (n == 0)
        return gir_fail(err, GIR_E_SYNTAX, "file is empty, not an ONNX model");
    if (!scan_level(p, n, 0, why, sizeof why, &off, &len, 7))
        return gir_fail(err, GIR_E_SYNTAX, "not a valid ONNX protobuf: %s", why);
    if (len && !scan_level(p + off, len, off, why, sizeof why, &off, &len, 0))
        return gir_fail(err, GIR_E_SYNTAX, "not a valid ONNX protobuf: in the graph, %s", why);
    return gir_fail(err, GIR_E_SYNTAX, "not a valid ONNX protobuf: a message does not match onnx.proto");
}

/* ---- metadata helpers ------------------------------------------------------ */

static gir_status set_blob(gir_graph *g, gir_attrs *a, const char *key, const ProtobufCMessage *msg, gir_error *err)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return gir_nomem(err);
    protobuf_c_message_pack(msg, buf);
    char *s = onnx_base64_encode(buf, n);
    free(buf);
    gir_status st = s ? gir_attrs_set_string(g, a, key, s, err) : GIR_E_NOMEM;
    free(s);
    return st ? gir_nomem(err) : GIR_OK;
}

gir_status onnxr_meta_str(gir_graph *g, gir_attrs *a, const char *key, const char *v, gir_error *err)
{
    if (!v)
        return GIR_OK;
    return gir_attrs_set_string(g, a, key, v, err) ? gir_nomem(err) : GIR_OK;
}

/* ---- types ----------------------------------------------------------------- */

/* Applies a TypeProto to a value: tensor types set dtype, shape and symbolic
 * dimension names; any other type (or element type the IR lacks) is kept
 * verbatim in the value's metadata. */
gir_status onnxr_apply_type(reader *r, gir_value *v, const Onnx__TypeProto *tp, bool merge, gir_error *err)
{
    if (!tp)
        return GIR_OK;
    const Onnx__TypeProto__Tensor *tt = tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL;
    gir_dtype dt = tt && tt->has_elem_type ? onnx_dtype_to_gir(tt->elem_type) : GIR_DT_UNKNOWN;
    if (!tt || (tt->has_elem_type && tt->elem_type != 0 && dt == GIR_DT_UNKNOWN)) {
        if (tt && tt->has_elem_type && !onnx_dtype_name(tt->elem_type))
            return gir_fail(err, GIR_E_DTYPE, "value '%s' has unknown element type %d", v->name, (int)tt->elem_type);
        return set_blob(r->g, &v->meta, ONNX_META_TYPE, &tp->base, err);
    }
    gir_shape s = { -1, { 0 } };
    const char *names[GIR_MAX_RANK] = { NULL };
    if (tt->shape) {
        if (tt->shape->n_dim > GIR_MAX_RANK)
            return gir_fail(err, GIR_E_LIMIT, "value '%s' has rank %zu, more than %d", v->name, tt->shape->n_dim,
                            GIR_MAX_RANK);
        s.rank = (int)tt->shape->n_dim;
        for (size_t i = 0; i < tt->shape->n_dim; i++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
            s.dims[i] = -1;
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
                /* Paddle2ONNX and some other exporters write an unknown
                 * dimension as -1 instead of leaving it without a value. */
                if (d->dim_value == -1)
                    r->n_neg1++;
                else if (d->dim_value < 0)
                    return gir_fail(err, GIR_E_SHAPE, "value '%s' has negative dimension %lld", v->name,
                                    (long long)d->dim_value);
                else
                    s.dims[i] = d->dim_value;
            } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
                       d->dim_param[0]) {
                if (!(names[i] = gir_arena_strdup(&r->g->arena, d->dim_param)))
                    return gir_nomem(err);
            }
        }
    }
    if (!merge) {
        v->dtype = dt;
        v->shape = s;
        memcpy(v->dim_names, names, sizeof names);
        return GIR_OK;
    }
    /* Declared and inferred must agree where both are known. */
    if (dt != GIR_DT_UNKNOWN) {
        if (v->dtype != GIR_DT_UNKNOWN && v->dtype != dt)
            return gir_fail(err, GIR_E_DTYPE, "value '%s' is declared %s but is %s", v->name, gir_dtype_name(dt),
                            gir_dtype_name(v->dtype));
        v->dtype = dt;
    }
    if (s.rank < 0)
        return GIR_OK;
    char a[128], b[128];
    if (v->shape.rank >= 0 && v->shape.rank != s.rank)
        return gir_fail(err, GIR_E_SHAPE, "value '%s' is declared with shape %s but has shape %s", v->name,
                        gir_shape_str(&s, a, sizeof a), gir_shape_str(&v->shape, b, sizeof b));
    if (v->shape.rank < 0) {
        v->shape = s;
        memcpy(v->dim_names, names, sizeof names);
        return GIR_OK;
    }
    for (int i = 0; i < s.rank; i++) {
        if (s.dims[i] >= 0 && v->shape.dims[i] >= 0 && s.dims[i] != v->shape.dims[i])
            return gir_fail(err, GIR_E_SHAPE, "value '%s' is declared with shape %s but has shape %s", v->name,
                            gir_shape_str(&s, a, sizeof a), gir_shape_str(&v->shape, b, sizeof b));
        if (v->shape.dims[i] < 0)
            v->shape.dims[i] = s.dims[i];
        if (names[i] && v->shape.dims[i] < 0)
            v->dim_names[i] = names[i];
    }
    return GIR_OK;
}

const Onnx__ValueInfoProto *onnxr_declared(reader *r, const char *name)
{
    int32_t i = onnx_map_get(&r->declared, name);
    return i >= 0 ? r->decl[i] : NULL;
}

/* ---- collecting names -------------------------------------------------------- */

static gir_status dup_value(const char *name, const char *what, gir_error *err)
{
    gir_fail(err, GIR_E_DUPLICATE, "value '%s' is defined twice (%s)", name, what);
    gir_err_node(err, name);
    return GIR_E_DUPLICATE;
}

/* The first declared type of a named value wins (value_info, then graph
 * outputs, then initializers that are also inputs). */
static gir_status declare(reader *r, Onnx__ValueInfoProto *vi, gir_error *err)
{
    const char *n = vi->name;
    if (!n || !*n || onnx_map_has(&r->declared, n))
        return GIR_OK;
    r->decl[r->ndecl] = vi;
    if (!onnx_map_put(&r->declared, n, (int32_t)r->ndecl++))
        return gir_nomem(err);
    return GIR_OK;
}

/* A value's name: an error naming entry i of the list `what` when it has none. */
static gir_status named(const char *n, const char *what, size_t i, gir_error *err)
{
    return n && *n ? GIR_OK : gir_fail(err, GIR_E_SCHEMA, "%s %zu has no name", what, i);
}

static gir_status collect(reader *r, gir_error *err)
{
    Onnx__GraphProto *gp = r->gp;
    if (gp->n_initializer > INT32_MAX / 2 || gp->n_node > INT32_MAX / 2 || gp->n_input > INT32_MAX / 2)
        return gir_fail(err, GIR_E_LIMIT, "graph has too many nodes, initializers or inputs");
    size_t nconst = gp->n_initializer;
    for (size_t i = 0; i < gp->n_node; i++)
        if (gp->node[i]->op_type && strcmp(gp->node[i]->op_type, "Constant") == 0)
            nconst++;
    r->k = calloc(nconst ? nconst : 1, sizeof *r->k);
    if (!r->k)
        return gir_nomem(err);

    /* Graph inputs. */
    for (size_t i = 0; i < gp->n_input; i++) {
        const char *n = gp->input[i]->name;
        TRY(named(n, "graph input", i, err));
        if (onnx_map_has(&r->input_by_name, n))
            return dup_value(n, "two graph inputs", err);
        if (!onnx_map_put(&r->input_by_name, n, (int32_t)i))
            return gir_nomem(err);
    }
    /* Initializers. */
    for (size_t i = 0; i < gp->n_initializer; i++) {
        Onnx__TensorProto *tp = gp->initializer[i];
        const char *n = tp->name;
        TRY(named(n, "initializer", i, err));
        if (onnx_map_has(&r->konst_by_name, n))
            return dup_value(n, "two initializers", err);
        konst *k = &r->k[r->nk];
        memset(k, 0, sizeof *k);
        k->name = n;
        k->value = -1;
        k->input_index = onnx_map_get(&r->input_by_name, n);
        gir_status st = onnx_tensor_read(tp, &r->src, &k->t, err);
        if (st) {
            gir_err_node(err, n);
            return st;
        }
        k->t0 = gir_tensor_ref(k->t);
        if (!onnx_map_put(&r->konst_by_name, n, (int32_t)r->nk++))
            return gir_nomem(err);
    }
    /* Node names, Constant nodes and producers. */
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        if (!np->op_type || !*np->op_type)
            return gir_fail(err, GIR_E_SCHEMA, "node %zu has no op_type", i);
        if (np->name && *np->name && !onnx_map_has(&r->node_names, np->name) &&
            !onnx_map_put(&r->node_names, np->name, (int32_t)i))
            return gir_nomem(err);
        for (size_t a = 0; a < np->n_attribute; a++) {
            int t = onnx_attr_type(np->attribute[a]);
            if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS)
                r->subgraphs = true;
        }
        bool is_const = false;
        if (onnxr_is_default_domain(np->domain) && strcmp(np->op_type, "Constant") == 0) {
            gir_tensor *t = NULL;
            const char *attr = NULL;
            gir_status st = onnxr_constant_tensor(r, np, &t, &attr, err);
            if (st) {
                gir_err_node(err, np->name && *np->name ? np->name : np->output && np->n_output ? np->output[0] : "");
                return st;
            }
            if (t) {
                const char *n = np->output[0];
                if (!n || !*n) {
                    gir_tensor_unref(t);
                    return gir_fail(err, GIR_E_SCHEMA, "a Constant node has an unnamed output");
                }
                if (onnx_map_has(&r->konst_by_name, n) || onnx_map_has(&r->producer, n) ||
                    onnx_map_has(&r->input_by_name, n)) {
                    gir_tensor_unref(t);
                    return dup_value(n, "a Constant node's output", err);
                }
                konst *k = &r->k[r->nk];
                memset(k, 0, sizeof *k);
                k->name = n;
                k->t = t;
                k->t0 = gir_tensor_ref(t);
                k->value = -1;
                k->node = np;
                k->attr = attr;
                k->input_index = -1;
                if (!onnx_map_put(&r->konst_by_name, n, (int32_t)r->nk++))
                    return gir_nomem(err);
                is_const = true;
            }
        }
        if (is_const)
            continue;
        for (size_t o = 0; o < np->n_output; o++) {
            const char *n = np->output[o];
            if (!n || !*n)
                continue;
            if (onnx_map_has(&r->producer, n) || onnx_map_has(&r->konst_by_name, n) ||
                onnx_map_has(&r->input_by_name, n))
                return dup_value(n, onnx_map_has(&r->input_by_name, n) ? "a graph input and a node output"
                                    : onnx_map_has(&r->konst_by_name, n) ? "an initializer and a node output"
                                                                          : "the outputs of two nodes",
                                 err);
            if (!onnx_map_put(&r->producer, n, (int32_t)i))
                return gir_nomem(err);
        }
    }
    /* Declared types: graph outputs and value_info (inputs are applied
     * directly). */
    size_t nd = gp->n_output + gp->n_value_info + gp->n_input;
    r->decl = calloc(nd ? nd : 1, sizeof *r->decl);
    if (!r->decl)
        return gir_nomem(err);
    for (size_t i = 0; i < gp->n_value_info; i++) {
        TRY(named(gp->value_info[i]->name, "value_info", i, err));
        TRY(declare(r, gp->value_info[i], err));
    }
    for (size_t i = 0; i < gp->n_output; i++)
        TRY(declare(r, gp->output[i], err));
    for (size_t i = 0; i < gp->n_input; i++)
        if (onnx_map_has(&r->konst_by_name, gp->input[i]->name))
            TRY(declare(r, gp->input[i], err));
    return GIR_OK;
}

static bool defined(reader *r, const char *n)
{
    return onnx_map_has(&r->producer, n) || onnx_map_has(&r->konst_by_name, n) || onnx_map_has(&r->input_by_name, n);
}

static const char *node_label(const Onnx__NodeProto *np)
{
    if (np->name && *np->name)
        return np->name;
    return np->n_output && np->output[0] && *np->output[0] ? np->output[0] : np->op_type;
}

/* The node producing input j of np, or -1 (an initializer, a graph input,
 * an omitted optional input). */
static int32_t input_producer(reader *r, const Onnx__NodeProto *np, size_t j)
{
    return np->input[j] && *np->input[j] ? onnx_map_get(&r->producer, np->input[j]) : -1;
}

/* Every reference resolves; nodes are put in topological order (file order
 * wherever the file allows). */
static gir_status check_and_sort(reader *r, gir_error *err)
{
    Onnx__GraphProto *gp = r->gp;
    size_t n = gp->n_node;
    for (size_t i = 0; i < n; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t j = 0; j < np->n_input; j++) {
            const char *in = np->input[j];
            if (in && *in && !defined(r, in)) {
                gir_fail(err, GIR_E_REFERENCE,
                         "input '%s' of %s is not a graph input, an initializer or the output of a node", in,
                         np->op_type);
                gir_err_node(err, node_label(np));
                return GIR_E_REFERENCE;
            }
        }
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *o = gp->output[i]->name;
        TRY(named(o, "graph output", i, err));
        if (!defined(r, o)) {
            gir_fail(err, GIR_E_REFERENCE, "graph output '%s' is not produced by any node", o);
            gir_err_node(err, o);
            return GIR_E_REFERENCE;
        }
    }
    /* Kahn's algorithm with a min-heap on file position. */
    int32_t *pending = calloc(n ? n : 1, sizeof *pending);
    int32_t *heap = malloc((n ? n : 1) * sizeof *heap);
    r->order = malloc((n ? n : 1) * sizeof *r->order);
    /* consumers: CSR of node -> nodes consuming its outputs */
    size_t nedges = 0;
    for (size_t i = 0; i < n; i++)
        nedges += gp->node[i]->n_input;
    int32_t *start = calloc(n + 1, sizeof *start), *edges = malloc((nedges ? nedges : 1) * sizeof *edges);
    int32_t *fill = calloc(n + 1, sizeof *fill);
    gir_status st = GIR_OK;
    if (!pending || !heap || !r->order || !start || !edges || !fill) {
        st = gir_nomem(err);
        goto out;
    }
    /* the edges twice: counted (and the start of each node's consumers
     * summed up), then filled in */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            const Onnx__NodeProto *np = gp->node[i];
            for (size_t j = 0; j < np->n_input; j++) {
                int32_t p = input_producer(r, np, j);
                if (p >= 0 && pass == 0) {
                    start[p + 1]++;
                    pending[i]++;
                } else if (p >= 0) {
                    edges[start[p] + fill[p]++] = (int32_t)i;
                }
            }
        }
        for (size_t i = 0; pass == 0 && i < n; i++)
            start[i + 1] += start[i];
    }
    size_t hn = 0, done = 0;
    for (size_t i = 0; i < n; i++)
        if (!pending[i])
            gir_heap_push(heap, &hn, (int32_t)i);
    while (hn) {
        int32_t top = gir_heap_pop(heap, &hn);
        r->order[done++] = top;
        for (int32_t e = start[top]; e < start[top + 1]; e++)
            if (--pending[edges[e]] == 0)
                gir_heap_push(heap, &hn, edges[e]);
    }
    if (done != n) {
        for (size_t i = 0; i < n; i++) {
            if (pending[i]) {
                gir_fail(err, GIR_E_CYCLE, "the graph has a cycle through %s", gp->node[i]->op_type);
                gir_err_node(err, node_label(gp->node[i]));
                break;
            }
        }
        st = GIR_E_CYCLE;
    }
out:
    free(pending);
    free(heap);
    free(start);
    free(edges);
    free(fill);
    return st;
}

/* Marks how each constant is used: as data (it must be a value) or only as
 * an operand folded into attributes. */
static void mark_uses(reader *r)
{
    Onnx__GraphProto *gp = r->gp;
    for (size_t i = 0; i < r->nk; i++) {
        konst *k = &r->k[i];
        k->value = -1;
        k->data_use = k->operand_use = false;
        k->uses = 0;
        if (k->t != k->t0) { /* a reshaped copy from the previous pass */
            gir_tensor_unref(k->t);
            k->t = gir_tensor_ref(k->t0);
        }
    }
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        bool canon = onnxr_is_default_domain(np->domain) && onnx_canonical_op(np->op_type) != GIR_OP_OPAQUE;
        if (r->skip && r->skip[i]) {
            /* a node left out feeds only folded operands */
            for (size_t j = 0; j < np->n_input; j++) {
                int32_t ki = np->input[j] && *np->input[j] ? onnx_map_get(&r->konst_by_name, np->input[j]) : -1;
                if (ki >= 0)
                    r->k[ki].operand_use = true;
            }
            continue;
        }
        for (size_t j = 0; j < np->n_input; j++) {
            int32_t ki = np->input[j] && *np->input[j] ? onnx_map_get(&r->konst_by_name, np->input[j]) : -1;
            if (ki < 0)
                continue;
            r->k[ki].uses++;
            if (canon && onnx_is_operand_input(np->op_type, r->opset, j))
                r->k[ki].operand_use = true;
            else
                r->k[ki].data_use = true;
        }
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        int32_t ki = onnx_map_get(&r->konst_by_name, gp->output[i]->name);
        if (ki >= 0) {
            r->k[ki].data_use = true;
            r->k[ki].uses++;
        }
    }
    for (size_t i = 0; i < r->nk; i++)
        if (r->subgraphs || r->k[i].input_index >= 0)
            r->k[i].data_use = true;
}

/* ---- nodes ------------------------------------------------------------------- */

static gir_status resolve(reader *r, const char *name, int32_t *out, gir_error *err)
{
    int32_t vi = gir_graph_value_index(r->g, name);
    if (vi >= 0) {
        *out = vi;
        return GIR_OK;
    }
    int32_t ki = onnx_map_get(&r->konst_by_name, name);
    if (ki >= 0)
        return onnxr_materialise(r, &r->k[ki], out, err);
    return gir_fail(err, GIR_E_INTERNAL, "value '%s' used before it is produced", name);
}

static bool non_tensor(reader *r, const char *name)
{
    const Onnx__ValueInfoProto *d = name && *name ? onnxr_declared(r, name) : NULL;
    if (!d) {
        int32_t ii = name && *name ? onnx_map_get(&r->input_by_name, name) : -1;
        d = ii >= 0 ? r->gp->input[ii] : NULL;
    }
    if (!d || !d->type)
        return false;
    const Onnx__TypeProto *tp = d->type;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return true;
    return tp->tensor_type->has_elem_type && tp->tensor_type->elem_type != 0 &&
           onnx_dtype_to_gir(tp->tensor_type->elem_type) == GIR_DT_UNKNOWN;
}

static int64_t domain_version(reader *r, const char *domain)
{
    if (onnxr_is_default_domain(domain))
        return r->opset;
    for (size_t i = 0; i < r->m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = r->m->opset_import[i];
        if (o->domain && strcmp(o->domain, domain) == 0)
            return o->has_version ? o->version : 0;
    }
    return -1;
}

/* Keeps a node verbatim: attributes the IR can hold as attributes, the rest
 * (graphs, sparse tensors, type protos, string tensors) in metadata. */
static gir_status opaque_attrs(reader *r, gir_node *n, const Onnx__NodeProto *np, gir_error *err)
{
    Onnx__NodeProto extra = ONNX__NODE_PROTO__INIT;
    Onnx__AttributeProto **kept = calloc(np->n_attribute ? np->n_attribute : 1, sizeof *kept);
    if (!kept)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    for (size_t i = 0; i < np->n_attribute; i++) {
        Onnx__AttributeProto *a = np->attribute[i];
        const char *name = a->name ? a->name : "";
        if (!*name) {
            st = gir_fail(err, GIR_E_SCHEMA, "an attribute of %s has no name", np->op_type);
            break;
        }
        bool verbatim = (a->ref_attr_name && *a->ref_attr_name) || (a->doc_string && *a->doc_string);
        if (!verbatim) {
            st = onnx_attr_to_ir(r->g, &n->attrs, name, a, err);
            if (st == GIR_E_UNSUPPORTED) {
                gir_error_clear(err);
                verbatim = true;
                st = GIR_OK;
            }
            if (st)
                break;
        }
        if (verbatim)
            kept[extra.n_attribute++] = a;
    }
    if (!st && extra.n_attribute) {
        extra.attribute = kept;
        st = set_blob(r->g, &n->meta, ONNX_META_EXTRA, &extra.base, err);
    }
    free(kept);
    return st;
}

static gir_status infer_node(reader *r, gir_node *n, gir_error *err)
{
    return n->op == GIR_OP_OPAQUE ? GIR_OK : gir_op_infer(r->g, n, err);
}

static gir_status convert_node(reader *r, int32_t index, gir_error *err)
{
    const Onnx__NodeProto *np = r->gp->node[index];
    gir_graph *g = r->g;
    const char *domain = np->domain ? np->domain : "";
    int64_t version = domain_version(r, domain);
    if (version < 0) {
        gir_fail(err, GIR_E_SCHEMA, "operator %s uses domain '%s', which the model does not import", np->op_type,
                 domain);
        gir_err_node(err, node_label(np));
        return GIR_E_SCHEMA;
    }
    onnx_conv cv;
    memset(&cv, 0, sizeof cv);
    cv.op = GIR_OP_OPAQUE;
    bool touches_non_tensor = false;
    for (size_t i = 0; i < np->n_input && !touches_non_tensor; i++)
        touches_non_tensor = non_tensor(r, np->input[i]);
    for (size_t i = 0; i < np->n_output && !touches_non_tensor; i++)
        touches_non_tensor = non_tensor(r, np->output[i]);
    gir_status st = GIR_OK;
    if (onnxr_is_default_domain(domain)) {
        st = onnx_convert_node(&r->ctx, np, version, &cv, err);
        if (st) {
            onnx_conv_clear(&cv);
            gir_err_node(err, node_label(np));
            return st;
        }
        if (touches_non_tensor && cv.op != GIR_OP_OPAQUE) {
            onnx_conv_clear(&cv);
            cv.op = GIR_OP_OPAQUE;
            cv.why = "it takes or makes sequences, optionals or tensors of a type graphconv cannot hold";
        }
    }
    /* Node name: the file's, or a fresh one (the file's is kept in meta). */
    const char *name = np->name && *np->name ? np->name : NULL;
    bool renamed = false;
    if (!name || gir_graph_node_index(g, name) >= 0) {
        const char *base = name ? name : np->op_type;
        char *tmp = NULL;
        for (unsigned long k = name ? 1 : 0;; k++) {
            free(tmp);
            tmp = k ? gir_strdupf("%s_%lu", base, k) : gir_strdupf("%s", base);
            if (!tmp) {
                onnx_conv_clear(&cv);
                return gir_nomem(err);
            }
            if (!onnx_map_has(&r->node_names, tmp) && gir_graph_node_index(g, tmp) < 0)
                break;
        }
        name = gir_arena_strdup(&g->arena, tmp);
        free(tmp);
        renamed = true;
        if (!name) {
            onnx_conv_clear(&cv);
            return gir_nomem(err);
        }
    }
    gir_node *n;
    bool canon = cv.op != GIR_OP_OPAQUE;
    size_t n_in = canon ? cv.n_in : np->n_input;
    size_t n_out = canon ? cv.n_out : np->n_output;
    if (canon) {
        const gir_op_info *info = gir_op_get(cv.op);
        if (n_in < info->min_in || (info->max_in != GIR_VARIADIC && n_in > info->max_in) || n_out < info->min_out ||
            (info->max_out != GIR_VARIADIC && n_out > info->max_out)) {
            onnx_conv_clear(&cv);
            gir_fail(err, GIR_E_SCHEMA, "%s takes %u..%u inputs and %u..%u outputs, but the node has %zu and %zu",
                     np->op_type, info->min_in, info->max_in, info->min_out, info->max_out, n_in, n_out);
            gir_err_node(err, name);
            return GIR_E_SCHEMA;
        }
    }
    if ((st = gir_graph_add_node(g, name, cv.op, n_in, n_out, &n, err))) {
        onnx_conv_clear(&cv);
        return st;
    }
    r->canon[index] = canon;
    if (canon) {
        n->attrs = cv.attrs;
        n->meta = cv.meta;
        memset(&cv.attrs, 0, sizeof cv.attrs);
        memset(&cv.meta, 0, sizeof cv.meta);
    } else {
        n->opaque_format = "onnx";
        if (!(n->opaque_op = gir_arena_strdup(&g->arena, np->op_type))) {
            onnx_conv_clear(&cv);
            return gir_nomem(err);
        }
        if ((st = opaque_attrs(r, n, np, err)) ||
            (gir_attrs_set_int(g, &n->meta, ONNX_META_OPSET, version, err) && (st = gir_nomem(err))) ||
            (cv.why && (st = onnxr_meta_str(g, &n->meta, "onnx.why", cv.why, err)))) {
            onnx_conv_clear(&cv);
            gir_err_node(err, name);
            return st;
        }
    }
    if (renamed && (st = onnxr_meta_str(g, &n->meta, "onnx.name", np->name ? np->name : "", err)))
        goto fail;
    if (np->domain && *np->domain && (st = onnxr_meta_str(g, &n->meta, ONNX_META_DOMAIN, np->domain, err)))
        goto fail;
    /* classical machine learning (trees, linear models, encoders): nothing
     * canonical computes these; other writers refuse them by name */
    if (!canon && np->domain && strcmp(np->domain, "ai.onnx.ml") == 0 &&
        (st = onnxr_meta_str(g, &n->meta, GIR_META_OPAQUE_WHY, "an ai.onnx.ml operator, which no other format has", err)))
        goto fail;
    if (np->doc_string && (st = onnxr_meta_str(g, &n->meta, ONNX_META_DOC, np->doc_string, err)))
        goto fail;
    /* Inputs. */
    for (size_t i = 0; i < n_in; i++) {
        int32_t src = canon ? cv.in[i] : (np->input[i] && *np->input[i] ? (int32_t)i : -1);
        int32_t vi = -1;
        if (src >= 0) {
            if ((st = resolve(r, np->input[src], &vi, err)))
                goto fail;
        } else if (src <= -2) {
            size_t k = (size_t)(-2 - src);
            if ((st = gir_graph_add_const(g, cv.new_const_name[k], cv.new_const[k], &vi, err)))
                goto fail;
        }
        n->in[i] = vi;
    }
    /* Outputs. */
    for (size_t o = 0; o < n_out; o++) {
        const char *on = np->output[o];
        if (!on || !*on)
            continue;
        if ((st = gir_node_make_output(g, n, o, on, err)))
            goto fail;
    }
    if ((st = infer_node(r, n, err)))
        goto fail;
    for (size_t o = 0; o < n_out; o++) {
        gir_value *v = gir_out(g, n, o);
        const Onnx__ValueInfoProto *d = v ? onnxr_declared(r, v->name) : NULL;
        if (!d)
            continue;
        if (d->doc_string && (st = onnxr_meta_str(g, &v->meta, ONNX_META_DOC, d->doc_string, err)))
            goto fail;
        if ((st = onnxr_apply_type(r, v, d->type, true, err)))
            goto fail;
    }
    onnx_conv_clear(&cv);
    return GIR_OK;
fail:
    onnx_conv_clear(&cv);
    gir_err_node(err, name);
    return st;
}

/* ---- the model ------------------------------------------------------------- */

static gir_status read_model_meta(reader *r, gir_error *err)
{
    Onnx__ModelProto *m = r->m;
    gir_graph *g = r->g;
    gir_attrs *gm = &g->meta;
    if (onnxr_meta_str(g, gm, "source.format", "onnx", err))
        return GIR_E_NOMEM;
    if (m->producer_name && *m->producer_name) {
        char *p = gir_strdupf("%s%s%s", m->producer_name, m->producer_version && *m->producer_version ? " " : "",
                              m->producer_version ? m->producer_version : "");
        gir_status st = p ? onnxr_meta_str(g, gm, "source.producer", p, err) : gir_nomem(err);
        free(p);
        if (st)
            return st;
    }
    if (gir_attrs_set_int(g, gm, ONNX_META_IR_VERSION, m->ir_version, err))
        return gir_nomem(err);
    size_t no = m->n_opset_import;
    const char **doms = gir_arena_alloc(&g->arena, (no ? no : 1) * sizeof *doms);
    int64_t *vers = gir_arena_alloc(&g->arena, (no ? no : 1) * sizeof *vers);
    if (!doms || !vers)
        return gir_nomem(err);
    for (size_t i = 0; i < no; i++) {
        doms[i] = m->opset_import[i]->domain ? m->opset_import[i]->domain : "";
        vers[i] = m->opset_import[i]->version;
    }
    if (gir_attrs_set_strings(g, gm, ONNX_META_OPSET_DOMAINS, doms, no, err) ||
        gir_attrs_set_ints(g, gm, ONNX_META_OPSET_VERSIONS, vers, no, err))
        return gir_nomem(err);
    if (onnxr_meta_str(g, gm, ONNX_META_PRODUCER_NAME, m->producer_name, err) ||
        onnxr_meta_str(g, gm, ONNX_META_PRODUCER_VERSION, m->producer_version, err) ||
        onnxr_meta_str(g, gm, ONNX_META_DOMAIN, m->domain, err) || onnxr_meta_str(g, gm, ONNX_META_DOC, m->doc_string, err) ||
        onnxr_meta_str(g, gm, ONNX_META_GRAPH_DOC, r->gp->doc_string, err))
        return GIR_E_NOMEM;
    if (m->has_model_version && gir_attrs_set_int(g, gm, ONNX_META_MODEL_VERSION, m->model_version, err))
        return gir_nomem(err);
    if (m->n_metadata_props) {
        size_t np = m->n_metadata_props;
        const char **ks = gir_arena_alloc(&g->arena, np * sizeof *ks), **vs = gir_arena_alloc(&g->arena, np * sizeof *vs);
        if (!ks || !vs)
            return gir_nomem(err);
        for (size_t i = 0; i < np; i++) {
            ks[i] = m->metadata_props[i]->key ? m->metadata_props[i]->key : "";
            vs[i] = m->metadata_props[i]->value ? m->metadata_props[i]->value : "";
        }
        if (gir_attrs_set_strings(g, gm, ONNX_META_PROPS_KEYS, ks, np, err) ||
            gir_attrs_set_strings(g, gm, ONNX_META_PROPS_VALUES, vs, np, err))
            return gir_nomem(err);
    }
    /* What the IR cannot hold rides verbatim: training info, local
     * functions, sparse initializers, quantization annotations. */
    Onnx__GraphProto *gp = r->gp;
    if (m->n_training_info || m->n_functions || gp->n_sparse_initializer || gp->n_quantization_annotation) {
        Onnx__ModelProto extra = ONNX__MODEL_PROTO__INIT;
        Onnx__GraphProto eg = ONNX__GRAPH_PROTO__INIT;
        extra.n_training_info = m->n_training_info;
        extra.training_info = m->training_info;
        extra.n_functions = m->n_functions;
        extra.functions = m->functions;
        if (gp->n_sparse_initializer || gp->n_quantization_annotation) {
            eg.n_sparse_initializer = gp->n_sparse_initializer;
            eg.sparse_initializer = gp->sparse_initializer;
            eg.n_quantization_annotation = gp->n_quantization_annotation;
            eg.quantization_annotation = gp->quantization_annotation;
            extra.graph = &eg;
        }
        gir_status st = set_blob(g, gm, ONNX_META_EXTRA, &extra.base, err);
        if (st)
            return st;
    }
    if (gp->name && !(g->name = gir_arena_strdup(&g->arena, gp->name)))
        return gir_nomem(err);
    return GIR_OK;
}

static gir_status find_opset(reader *r, gir_error *err)
{
    Onnx__ModelProto *m = r->m;
    r->opset = 0;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (!o->has_version || o->version < 1)
            return gir_fail(err, GIR_E_SCHEMA, "opset_import %zu ('%s') has no valid version", i,
                            o->domain ? o->domain : "");
        if (!onnxr_is_default_domain(o->domain))
            continue;
        if (r->opset && r->opset != o->version)
            return gir_fail(err, GIR_E_SCHEMA, "the default domain is imported twice, at opsets %lld and %lld",
                            (long long)r->opset, (long long)o->version);
        r->opset = o->version;
    }
    if (!r->opset && m->n_opset_import == 0 && m->ir_version < 3)
        r->opset = 1; /* IR 1 and 2 files predate opset_import */
    if (r->opset > ONNX_READ_OPSET_MAX)
        return gir_fail(err, GIR_E_UNSUPPORTED, "the model uses opset %lld of the default domain; graphconv reads "
                        "opsets 1 to %d",
                        (long long)r->opset, ONNX_READ_OPSET_MAX);
    for (size_t i = 0; i < r->gp->n_node && !r->opset; i++)
        if (onnxr_is_default_domain(r->gp->node[i]->domain))
            return gir_fail(err, GIR_E_SCHEMA, "the model has ONNX operators but does not import the default domain");
    return GIR_OK;
}


static gir_status batch_size(reader *r, gir_error *err)
{
    int64_t bs;
    gir_status st = gir_options_int(r->opts, "batch-size", 0, &bs, err);
    if (st)
        return st;
    if (!gir_options_get(r->opts, "batch-size"))
        return GIR_OK;
    if (bs < 1)
        return gir_fail(err, GIR_E_ARGUMENT, "option batch-size=%lld is not a positive integer", (long long)bs);
    for (size_t i = 0; i < r->g->n_inputs; i++) {
        gir_value *v = r->g->values[r->g->inputs[i]];
        if (v->kind == GIR_VALUE_INPUT && v->shape.rank >= 1 && v->shape.dims[0] < 0) {
            v->shape.dims[0] = bs;
            v->dim_names[0] = NULL;
        }
    }
    return GIR_OK;
}

/* ONNX attributes are float32: defaults the normalisation filled in are
 * rounded the same way (and widened as every float32 attribute is, through
 * its shortest text), so that a graph written and read back is equal.
 * Operand attributes (from tensors of the input's type) keep their value. */
static void float_attrs(gir_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        gir_node *n = g->nodes[i];
        if (n->op == GIR_OP_OPAQUE)
            continue;
        const onnx_rule *r = onnx_rule_for(n->op);
        for (size_t k = 0; k < n->attrs.n; k++) {
            gir_attr *a = &n->attrs.items[k];
            bool operand = false;
            for (size_t o = 0; r && o < 4 && r->operands[o].attr; o++)
                operand |= strcmp(r->operands[o].attr, a->name) == 0;
            if (operand)
                continue;
            if (a->type == GIR_ATTR_FLOAT)
                a->u.f = gir_float_widen((float)a->u.f);
            else if (a->type == GIR_ATTR_FLOATS)
                for (size_t j = 0; j < a->u.floats.n; j++)
                    a->u.floats.v[j] = gir_float_widen((float)a->u.floats.v[j]);
        }
    }
}

/* After a pass: the nodes computed through by folding whose outputs no
 * node of the graph uses as data (only as folded operands) and that are not
 * graph outputs.  Walks the nodes backwards in topological order, so every
 * consumer is decided before its producers. */
static bool find_dead(reader *r, gir_error *err, gir_status *st)
{
    Onnx__GraphProto *gp = r->gp;
    size_t n = gp->n_node;
    bool any = false;
    *st = GIR_OK;
    for (size_t i = 0; i < n && !any; i++)
        any = r->fold_used[i];
    if (!any)
        return false;
    onnx_map live; /* names used as data by a live node or as graph outputs */
    memset(&live, 0, sizeof live);
    for (size_t i = 0; i < gp->n_output; i++)
        if (!onnx_map_put(&live, gp->output[i]->name, 1)) {
            *st = gir_nomem(err);
            onnx_map_free(&live);
            return false;
        }
    r->skip = calloc(n ? n : 1, sizeof *r->skip);
    if (!r->skip) {
        *st = gir_nomem(err);
        onnx_map_free(&live);
        return false;
    }
    any = false;
    for (size_t k = n; k-- > 0;) {
        int32_t i = r->order[k];
        const Onnx__NodeProto *np = gp->node[i];
        bool used = false;
        for (size_t o = 0; o < np->n_output && !used; o++)
            used = np->output[o] && *np->output[o] && onnx_map_has(&live, np->output[o]);
        if (r->fold_used[i] && !used) {
            r->skip[i] = true;
            any = true;
            continue;
        }
        for (size_t j = 0; j < np->n_input; j++) {
            if (!np->input[j] || !*np->input[j])
                continue;
            if (r->canon[i] && onnx_is_operand_input(np->op_type, r->opset, j))
                continue;
            if (!onnx_map_put(&live, np->input[j], 1)) {
                *st = gir_nomem(err);
                break;
            }
        }
    }
    onnx_map_free(&live);
    return any && !*st;
}

static gir_status read_graph(reader *r, gir_error *err)
{
    gir_graph *g = r->g;
    Onnx__GraphProto *gp = r->gp;
    gir_status st;
    memset(r->canon, 0, (gp->n_node ? gp->n_node : 1) * sizeof *r->canon);
    if ((st = read_model_meta(r, err)))
        return st;
    mark_uses(r);
    /* Graph inputs that are not initializers. */
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (onnx_map_has(&r->konst_by_name, vi->name))
            continue;
        int32_t idx;
        if ((st = gir_graph_add_value(g, vi->name, GIR_VALUE_INPUT, &idx, err)) ||
            (st = gir_graph_add_input(g, idx, err)))
            return st;
        gir_value *v = g->values[idx];
        if ((st = onnxr_apply_type(r, v, vi->type, false, err))) {
            gir_err_node(err, vi->name);
            return st;
        }
        if (vi->doc_string && (st = onnxr_meta_str(g, &v->meta, ONNX_META_DOC, vi->doc_string, err)))
            return st;
    }
    if ((st = batch_size(r, err)))
        return st;
    /* Initializers used as data, or not at all (kept as they are). */
    for (size_t i = 0; i < r->nk; i++) {
        konst *k = &r->k[i];
        int32_t idx;
        if (!k->node && (k->data_use || !k->operand_use) && (st = onnxr_materialise(r, k, &idx, err)))
            return st;
    }
    /* Nodes in topological order. */
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[r->order[i]];
        int32_t ki = np->n_output == 1 ? onnx_map_get(&r->konst_by_name, np->output[0]) : -1;
        if (ki >= 0 && r->k[ki].node == np) {
            int32_t idx;
            if ((r->k[ki].data_use || !r->k[ki].operand_use) && (st = onnxr_materialise(r, &r->k[ki], &idx, err)))
                return st;
            continue;
        }
        if (r->skip && r->skip[r->order[i]])
            continue;
        if ((st = convert_node(r, r->order[i], err)))
            return st;
    }
    /* Graph outputs. */
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        int32_t idx;
        if ((st = resolve(r, vi->name, &idx, err)) || (st = gir_graph_add_output(g, idx, err)))
            return st;
        gir_value *v = g->values[idx];
        if ((st = onnxr_apply_type(r, v, vi->type, true, err))) {
            gir_err_node(err, vi->name);
            return st;
        }
        if (vi->doc_string && !gir_attrs_find(&v->meta, ONNX_META_DOC) &&
            (st = onnxr_meta_str(g, &v->meta, ONNX_META_DOC, vi->doc_string, err)))
            return st;
    }
    if (r->n_neg1 && gir_graph_note(g, err, "took %zu dimension%s written as dim_value -1 (as Paddle2ONNX writes them) as "
                                       "unknown", r->n_neg1, r->n_neg1 == 1 ? "" : "s"))
        return gir_nomem(err);
    if ((st = gir_graph_finish(g, err)))
        return st;
    float_attrs(g);
    return GIR_OK;
}

static void reader_free(reader *r)
{
    for (size_t i = 0; i < r->nk; i++) {
        gir_tensor_unref(r->k[i].t);
        gir_tensor_unref(r->k[i].t0);
    }
    free(r->k);
    for (size_t i = 0; i < r->n_folded; i++)
        gir_tensor_unref(r->folded[i]);
    free(r->folded);
    onnx_map_free(&r->folded_by_name);
    free(r->fold_used);
    free(r->canon);
    free(r->skip);
    onnx_map_free(&r->konst_by_name);
    onnx_map_free(&r->producer);
    onnx_map_free(&r->input_by_name);
    onnx_map_free(&r->declared);
    onnx_map_free(&r->node_names);
    free(r->decl);
    free(r->order);
    free(r->src.dir);
    free(r->src.dir_real);
    if (r->m)
        onnx__model_proto__free_unpacked(r->m, NULL);
}

/* Models from this size on keep initializers of at least ONNX_STRIP_MIN_TENSOR
 * bytes in the file until they are needed. */
#define ONNX_STRIP_MIN_FILE ((size_t)16 << 20)
#define ONNX_STRIP_MIN_TENSOR ((size_t)64 << 10)

gir_status onnx_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err)
{
    *out = NULL;
    reader r;
    memset(&r, 0, sizeof r);
    r.ctx.self = &r;
    r.ctx.constant = onnxr_ctx_constant;
    r.ctx.shape_of = onnxr_ctx_shape_of;
    r.ctx.fresh_name = onnxr_ctx_fresh_name;
    r.ctx.replace_constant = onnxr_ctx_replace_constant;
    r.path = path;
    r.opts = opts;
    int64_t max_bytes;
    gir_status st = gir_options_int(opts, "max-bytes", 0, &max_bytes, err);
    if (st)
        return st;
    if (max_bytes < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "option max-bytes must not be negative");
    char *data;
    size_t len;
    if ((st = gir_read_file(path, (size_t)max_bytes, &data, &len, err)))
        return st;
    struct stat fst;
    if (len >= ONNX_STRIP_MIN_FILE && stat(path, &fst) == 0 && S_ISREG(fst.st_mode) && (uint64_t)fst.st_size == len) {
        /* large weights stay in the file, read when needed (read_strip.c) */
        char *small;
        size_t small_len;
        if ((st = onnx_strip_raw_data((const uint8_t *)data, len, gir_path_basename(path), ONNX_STRIP_MIN_TENSOR,
                                      &small, &small_len, err))) {
            free(data);
            return st;
        }
        if (small) {
            free(data);
            data = small;
            len = small_len;
        }
    }
    r.m = len ? onnx__model_proto__unpack(NULL, len, (const uint8_t *)data) : NULL;
    if (!r.m) {
        st = unpack_failed((const uint8_t *)data, len, err);
        free(data);
        return st;
    }
    free(data);
    r.src.dir = gir_path_dirname(path);
    if (!r.src.dir) {
        reader_free(&r);
        return gir_nomem(err);
    }
    r.src.dir_real = realpath(r.src.dir, NULL);
    if (!r.src.dir_real) {
        st = gir_fail(err, GIR_E_IO, "cannot resolve the model's directory: %s", strerror(errno));
        reader_free(&r);
        return st;
    }
    if (!r.m->graph && !r.m->has_ir_version) {
        reader_free(&r);
        return gir_fail(err, GIR_E_SYNTAX, "not an ONNX model: no ir_version and no graph");
    }
    if (!r.m->graph) {
        reader_free(&r);
        return gir_fail(err, GIR_E_SCHEMA, "the model has no graph");
    }
    if (!r.m->has_ir_version || r.m->ir_version < 1) {
        reader_free(&r);
        return gir_fail(err, GIR_E_SCHEMA, "the model has no ir_version");
    }
    r.gp = r.m->graph;
    if ((st = find_opset(&r, err)) || (st = gir_graph_new(&r.g, err))) {
        reader_free(&r);
        return st;
    }
    r.ctx.g = r.g;
    size_t nn = r.gp->n_node ? r.gp->n_node : 1;
    if (!(r.fold_used = calloc(nn, sizeof *r.fold_used)) || !(r.canon = calloc(nn, sizeof *r.canon))) {
        gir_graph_free(r.g);
        reader_free(&r);
        return gir_nomem(err);
    }
    if (!(st = collect(&r, err)) && !(st = check_and_sort(&r, err)))
        st = read_graph(&r, err);
    if (!st && find_dead(&r, err, &st)) {
        /* again, without the nodes that only computed folded operands */
        gir_graph_free(r.g);
        r.g = NULL;
        if (!(st = gir_graph_new(&r.g, err))) {
            r.ctx.g = r.g;
            st = read_graph(&r, err);
        }
    }
    if (st) {
        gir_graph_free(r.g);
        reader_free(&r);
        return st;
    }
    *out = r.g;
    reader_free(&r);
    return GIR_OK;
}
