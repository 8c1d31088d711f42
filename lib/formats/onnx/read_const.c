/* Reading ONNX constants: Constant nodes and initializers as values, and
 * the folding of constant operand chains (Shape, Gather, Concat, Cast, ...)
 * whose results operators take as attributes; the read_ops.c context's
 * constant callbacks. */
#include "read.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

static reader *R(onnx_read_ctx *c)
{
    return (reader *)c;
}

gir_status onnxr_materialise(reader *r, konst *k, int32_t *out, gir_error *err)
{
    if (k->value >= 0) {
        *out = k->value;
        return GIR_OK;
    }
    gir_graph *g = r->g;
    int32_t idx;
    gir_status st;
    if (k->node) {
        st = gir_graph_add_const(g, k->name, k->t, &idx, err);
    } else {
        st = gir_graph_add_value(g, k->name, GIR_VALUE_WEIGHT, &idx, err);
        if (!st)
            gir_value_set_data(g->values[idx], k->t);
    }
    if (st)
        return st;
    gir_value *v = g->values[idx];
    if (k->node) {
        if (onnxr_meta_str(g, &v->meta, ONNX_META_CONSTANT, k->node->name ? k->node->name : "", err) ||
            onnxr_meta_str(g, &v->meta, ONNX_META_CONSTANT_ATTR, k->attr, err))
            return GIR_E_NOMEM;
    } else if (k->input_index >= 0 && gir_attrs_set_int(g, &v->meta, ONNX_META_INPUT_INDEX, k->input_index, err)) {
        return gir_nomem(err);
    }
    const Onnx__ValueInfoProto *d = onnxr_declared(r, k->name);
    if (d && d->doc_string && onnxr_meta_str(g, &v->meta, ONNX_META_DOC, d->doc_string, err))
        return GIR_E_NOMEM;
    if (d && (st = onnxr_apply_type(r, v, d->type, true, err))) {
        gir_err_node(err, k->name);
        return st;
    }
    k->value = idx;
    *out = idx;
    return GIR_OK;
}

/* Operands computed from shapes (Shape -> Gather -> Unsqueeze -> Concat and
 * the like, as exporters write them) are evaluated here, on small integer
 * vectors, when the shapes they read are known.  The nodes that only feed
 * such operands are left out of the graph (a second pass). */
#define FOLD_MAX 64

#define FOLD_DEPTH 24

typedef struct fval {
    int rank; /* 0 or 1 */
    size_t n;
    int64_t v[FOLD_MAX];
} fval;

static bool fold_eval(reader *r, const char *name, fval *out, int depth);

static bool fold_attr_ints(const Onnx__NodeProto *np, const char *name, fval *out)
{
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (!a->name || strcmp(a->name, name) != 0)
            continue;
        if (onnx_attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints > FOLD_MAX)
            return false;
        out->rank = 1;
        out->n = a->n_ints;
        memcpy(out->v, a->ints, a->n_ints * sizeof *a->ints);
        return true;
    }
    return false;
}

static int64_t fold_attr_int(const Onnx__NodeProto *np, const char *name, int64_t dflt)
{
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (a->name && strcmp(a->name, name) == 0 && onnx_attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
            return a->i;
    }
    return dflt;
}

/* Input i of np as a folded value. */
static bool fold_in(reader *r, const Onnx__NodeProto *np, size_t i, fval *out, int depth)
{
    return i < np->n_input && np->input[i] && *np->input[i] && fold_eval(r, np->input[i], out, depth + 1);
}

static bool fold_node(reader *r, const Onnx__NodeProto *np, fval *out, int depth)
{
    const char *op = np->op_type;
    int64_t v = r->opset;
    fval a, b;
    if (strcmp(op, "Identity") == 0)
        return fold_in(r, np, 0, out, depth);
    if (strcmp(op, "Cast") == 0) {
        int64_t to = fold_attr_int(np, "to", 0);
        return (to == 6 || to == 7) && fold_in(r, np, 0, out, depth);
    }
    if (strcmp(op, "Shape") == 0) {
        gir_dtype dt;
        gir_shape s;
        r->ctx.shape_of(&r->ctx, np->n_input ? np->input[0] : NULL, &dt, &s);
        if (!gir_shape_is_known(&s))
            return false;
        int64_t start = fold_attr_int(np, "start", 0), end = fold_attr_int(np, "end", s.rank);
        start = start < 0 ? start + s.rank : start;
        end = end < 0 ? end + s.rank : end;
        start = start < 0 ? 0 : start > s.rank ? s.rank : start;
        end = end < start ? start : end > s.rank ? s.rank : end;
        out->rank = 1;
        out->n = (size_t)(end - start);
        for (int64_t i = start; i < end; i++)
            out->v[i - start] = s.dims[i];
        return true;
    }
    if (strcmp(op, "Gather") == 0) {
        int64_t axis = fold_attr_int(np, "axis", 0);
        if (!fold_in(r, np, 0, &a, depth) || !fold_in(r, np, 1, &b, depth) || a.rank != 1 || (axis != 0 && axis != -1))
            return false;
        out->rank = b.rank;
        out->n = b.n;
        for (size_t i = 0; i < b.n; i++) {
            int64_t k = b.v[i] < 0 ? b.v[i] + (int64_t)a.n : b.v[i];
            if (k < 0 || k >= (int64_t)a.n)
                return false;
            out->v[i] = a.v[k];
        }
        return true;
    }
    if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0) {
        bool un = op[0] == 'U';
        if (!fold_in(r, np, 0, out, depth))
            return false;
        if (v >= 13) {
            if (np->n_input > 1 && np->input[1] && *np->input[1] && (!fold_in(r, np, 1, &b, depth) || b.n != 1 ||
                                                                     (b.v[0] != 0 && b.v[0] != -1)))
                return false;
        } else if (fold_attr_ints(np, "axes", &b) && (b.n != 1 || (b.v[0] != 0 && b.v[0] != -1))) {
            return false;
        }
        if (un ? out->rank != 0 : (out->rank != 1 || out->n != 1))
            return false;
        out->rank = un ? 1 : 0;
        return true;
    }
    if (strcmp(op, "Concat") == 0) {
        if (fold_attr_int(np, "axis", 0) != 0 && fold_attr_int(np, "axis", 0) != -1)
            return false;
        out->rank = 1;
        out->n = 0;
        for (size_t i = 0; i < np->n_input; i++) {
            if (!fold_in(r, np, i, &a, depth) || a.rank != 1 || out->n + a.n > FOLD_MAX)
                return false;
            memcpy(out->v + out->n, a.v, a.n * sizeof *a.v);
            out->n += a.n;
        }
        return true;
    }
    if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0) {
        if (v < 7 || !fold_in(r, np, 0, &a, depth) || !fold_in(r, np, 1, &b, depth))
            return false;
        if (a.n != b.n && a.n != 1 && b.n != 1)
            return false;
        out->rank = a.rank > b.rank ? a.rank : b.rank;
        out->n = a.n > b.n ? a.n : b.n;
        for (size_t i = 0; i < out->n; i++) {
            int64_t x = a.v[a.n == 1 ? 0 : i], y = b.v[b.n == 1 ? 0 : i], z;
            bool ok = true;
            switch (op[0]) {
            case 'A': ok = !__builtin_add_overflow(x, y, &z); break;
            case 'S': ok = !__builtin_sub_overflow(x, y, &z); break;
            case 'M': ok = !__builtin_mul_overflow(x, y, &z); break;
            default:
                ok = y != 0 && !(x == INT64_MIN && y == -1);
                z = ok ? x / y : 0;
            }
            if (!ok)
                return false;
            out->v[i] = z;
        }
        return true;
    }
    if (strcmp(op, "Slice") == 0) {
        fval st, en, ax = { 1, 1, { 0 } }, sp = { 1, 1, { 1 } };
        if (!fold_in(r, np, 0, &a, depth) || a.rank != 1)
            return false;
        if (v < 10) {
            if (!fold_attr_ints(np, "starts", &st) || !fold_attr_ints(np, "ends", &en))
                return false;
            if (!fold_attr_ints(np, "axes", &ax))
                ax = (fval){ 1, 1, { 0 } };
        } else {
            if (!fold_in(r, np, 1, &st, depth) || !fold_in(r, np, 2, &en, depth))
                return false;
            if (np->n_input > 3 && *np->input[3] && !fold_in(r, np, 3, &ax, depth))
                return false;
            if (np->n_input > 4 && *np->input[4] && !fold_in(r, np, 4, &sp, depth))
                return false;
        }
        if (st.n != 1 || en.n != 1 || ax.n != 1 || sp.n != 1 || (ax.v[0] != 0 && ax.v[0] != -1) || sp.v[0] != 1)
            return false;
        int64_t n = (int64_t)a.n, s0 = st.v[0], e0 = en.v[0];
        s0 = s0 < 0 ? s0 + n : s0;
        e0 = e0 < 0 ? e0 + n : e0;
        s0 = s0 < 0 ? 0 : s0 > n ? n : s0;
        e0 = e0 < s0 ? s0 : e0 > n ? n : e0;
        out->rank = 1;
        out->n = (size_t)(e0 - s0);
        memmove(out->v, a.v + s0, out->n * sizeof *out->v);
        return true;
    }
    return false;
}

static bool fold_eval(reader *r, const char *name, fval *out, int depth)
{
    if (depth > FOLD_DEPTH)
        return false;
    int32_t ki = onnx_map_get(&r->konst_by_name, name);
    if (ki >= 0) {
        gir_tensor *t = r->k[ki].t;
        int64_t n = gir_shape_numel(&t->shape);
        const void *d;
        if ((t->dtype != GIR_DT_I64 && t->dtype != GIR_DT_I32) || t->shape.rank > 1 || n < 0 || n > FOLD_MAX ||
            gir_tensor_load(t, &d, NULL))
            return false;
        out->rank = t->shape.rank;
        out->n = (size_t)n;
        for (int64_t i = 0; i < n; i++)
            out->v[i] = t->dtype == GIR_DT_I64 ? (int64_t)gir_le64((const unsigned char *)d + 8 * i)
                                               : (int32_t)gir_le32((const unsigned char *)d + 4 * i);
        return true;
    }
    int32_t p = onnx_map_get(&r->producer, name);
    if (p < 0)
        return false;
    const Onnx__NodeProto *np = r->gp->node[p];
    if (!onnxr_is_default_domain(np->domain) || np->n_output < 1 || strcmp(np->output[0], name) != 0 ||
        !fold_node(r, np, out, depth))
        return false;
    r->fold_used[p] = true;
    return true;
}

gir_status onnxr_ctx_constant(onnx_read_ctx *c, const char *name, gir_tensor **t, gir_error *err)
{
    reader *r = R(c);
    *t = NULL;
    int32_t i = onnx_map_get(&r->konst_by_name, name);
    if (i >= 0) {
        *t = r->k[i].t;
        return GIR_OK;
    }
    i = onnx_map_get(&r->folded_by_name, name);
    if (i >= 0) {
        *t = r->folded[i];
        return GIR_OK;
    }
    fval fv;
    if (!fold_eval(r, name, &fv, 0))
        return GIR_OK;
    gir_shape s = { fv.rank, { (int64_t)fv.n } };
    gir_tensor *nt;
    gir_status st = gir_tensor_new(GIR_DT_I64, &s, &nt, err);
    if (st)
        return st;
    for (size_t k = 0; k < fv.n; k++)
        gir_put_le64((unsigned char *)nt->data + 8 * k, (uint64_t)fv.v[k]);
    if (!GIR_GROW(r->folded, r->cap_folded, r->n_folded + 1) ||
        !onnx_map_put(&r->folded_by_name, name, (int32_t)r->n_folded)) {
        gir_tensor_unref(nt);
        return gir_nomem(err);
    }
    r->folded[r->n_folded++] = nt;
    *t = nt;
    return GIR_OK;
}

void onnxr_ctx_shape_of(onnx_read_ctx *c, const char *name, gir_dtype *dt, gir_shape *shape)
{
    reader *r = R(c);
    *dt = GIR_DT_UNKNOWN;
    shape->rank = -1;
    if (!name)
        return;
    int32_t vi = gir_graph_value_index(r->g, name);
    if (vi >= 0) {
        *dt = r->g->values[vi]->dtype;
        *shape = r->g->values[vi]->shape;
        return;
    }
    int32_t ki = onnx_map_get(&r->konst_by_name, name);
    if (ki >= 0) {
        *dt = r->k[ki].t->dtype;
        *shape = r->k[ki].t->shape;
    }
}

bool onnxr_ctx_replace_constant(onnx_read_ctx *c, const char *name, gir_tensor *t)
{
    reader *r = R(c);
    int32_t ki = onnx_map_get(&r->konst_by_name, name);
    if (ki < 0 || r->k[ki].uses != 1 || r->subgraphs)
        return false;
    konst *k = &r->k[ki];
    gir_tensor_ref(t);
    gir_tensor_unref(k->t);
    k->t = t;
    if (k->value >= 0)
        gir_value_set_data(r->g->values[k->value], t);
    return true;
}

static bool name_taken(reader *r, const char *n)
{
    return onnx_map_has(&r->producer, n) || onnx_map_has(&r->konst_by_name, n) || onnx_map_has(&r->input_by_name, n) ||
           gir_graph_value_index(r->g, n) >= 0;
}

const char *onnxr_ctx_fresh_name(onnx_read_ctx *c, const char *base)
{
    reader *r = R(c);
    if (!name_taken(r, base))
        return gir_arena_strdup(&r->g->arena, base);
    for (unsigned long k = 1;; k++) {
        char *s = gir_strdupf("%s_%lu", base, k);
        if (!s)
            return NULL;
        if (!name_taken(r, s)) {
            const char *out = gir_arena_strdup(&r->g->arena, s);
            free(s);
            return out;
        }
        free(s);
    }
}

/* A Constant node's tensor, from whichever value attribute it has. */
gir_status onnxr_constant_tensor(reader *r, const Onnx__NodeProto *np, gir_tensor **out, const char **attr,
                                 gir_error *err)
{
    *out = NULL;
    if (np->n_attribute != 1 || np->n_output != 1 || np->n_input != 0)
        return GIR_OK; /* malformed or unusual: kept as an opaque node */
    Onnx__AttributeProto *a = np->attribute[0];
    const char *an = a->name ? a->name : "";
    int type = onnx_attr_type(a);
    gir_shape scalar = { 0, { 0 } }, list = { 1, { 0 } };
    *attr = an;
    if (strcmp(an, "value") == 0 && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t) {
        int32_t odt = a->t->has_data_type ? a->t->data_type : 0;
        if (onnx_dtype_to_gir(odt) == GIR_DT_UNKNOWN && onnx_dtype_name(odt))
            return GIR_OK; /* strings, complex: kept as an opaque node */
        if (a->t->has_data_location && a->t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
            return onnx_tensor_read(a->t, &r->src, out, err);
        static const onnx_source none = { NULL, NULL };
        return onnx_tensor_read(a->t, &none, out, err);
    }
    if (strcmp(an, "value_float") == 0 && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
        gir_status st = gir_tensor_new(GIR_DT_F32, &scalar, out, err);
        if (!st)
            memcpy((*out)->data, &a->f, 4);
        return st;
    }
    if (strcmp(an, "value_int") == 0 && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
        gir_status st = gir_tensor_new(GIR_DT_I64, &scalar, out, err);
        if (!st)
            gir_put_le64((*out)->data, (uint64_t)a->i);
        return st;
    }
    if (strcmp(an, "value_floats") == 0 && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) {
        list.dims[0] = (int64_t)a->n_floats;
        gir_status st = gir_tensor_new(GIR_DT_F32, &list, out, err);
        if (!st && a->n_floats)
            memcpy((*out)->data, a->floats, 4 * a->n_floats);
        return st;
    }
    if (strcmp(an, "value_ints") == 0 && type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) {
        list.dims[0] = (int64_t)a->n_ints;
        gir_status st = gir_tensor_new(GIR_DT_I64, &list, out, err);
        for (size_t i = 0; !st && i < a->n_ints; i++)
            gir_put_le64((unsigned char *)(*out)->data + 8 * i, (uint64_t)a->ints[i]);
        return st;
    }
    return GIR_OK; /* value_string(s), sparse_value: kept as an opaque node */
}
