/* Normalisation: equivalent graphs become equal graphs. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* Input i of n if it refers to a valid value (the graph is not validated yet). */
static const gir_value *safe_in(const gir_graph *g, const gir_node *n, size_t i)
{
    if (i >= n->n_in || n->in[i] < 0 || (size_t)n->in[i] >= g->n_values)
        return NULL;
    return g->values[n->in[i]];
}

/* Number of spatial axes of a convolution or pooling node: the length of
 * kernel_shape, else from the rank of W (Conv, ConvTranspose) or X; -1 when
 * none is known. */
static int spatial_rank(const gir_graph *g, const gir_node *n)
{
    const int64_t *k;
    ptrdiff_t nk = gir_attrs_get_ints(&n->attrs, "kernel_shape", &k);
    if (nk > 0 && nk <= GIR_MAX_RANK)
        return (int)nk;
    if (nk >= 0)
        return -1;
    const gir_value *w = n->op == GIR_OP_Conv || n->op == GIR_OP_ConvTranspose ? safe_in(g, n, 1) : NULL;
    if (w && w->shape.rank >= 3 && w->shape.rank <= GIR_MAX_RANK)
        return w->shape.rank - 2;
    const gir_value *x = safe_in(g, n, 0);
    if (x && x->shape.rank >= 3 && x->shape.rank <= GIR_MAX_RANK)
        return x->shape.rank - 2;
    return -1;
}

static gir_status set_repeated(gir_graph *g, gir_node *n, const char *name, int64_t v, int count, gir_error *err)
{
    int64_t vals[2 * GIR_MAX_RANK];
    for (int i = 0; i < count; i++)
        vals[i] = v;
    if (gir_attrs_set_ints(g, &n->attrs, name, vals, (size_t)count) != GIR_OK)
        return gir_nomem(err);
    return GIR_OK;
}

/* Fills an absent DEFAULTED attribute. */
static gir_status fill_default(gir_graph *g, gir_node *n, const gir_attr_schema *s, gir_error *err)
{
    gir_status st = GIR_OK;
    int r;
    switch (s->fill) {
    case GIR_FILL_NONE:
        if (s->type == GIR_ATTR_INT)
            st = gir_attrs_set_int(g, &n->attrs, s->name, s->i);
        else if (s->type == GIR_ATTR_FLOAT)
            st = gir_attrs_set_float(g, &n->attrs, s->name, s->f);
        else if (s->type == GIR_ATTR_STRING)
            st = gir_attrs_set_string(g, &n->attrs, s->name, s->s);
        return st == GIR_OK ? GIR_OK : gir_nomem(err);
    case GIR_FILL_SPATIAL:
        r = spatial_rank(g, n);
        return r > 0 ? set_repeated(g, n, s->name, s->i, r, err) : GIR_OK;
    case GIR_FILL_PADS:
        r = spatial_rank(g, n);
        if (r <= 0 || strcmp(gir_node_string(n, "auto_pad", "NOTSET"), "NOTSET") != 0)
            return GIR_OK;
        return set_repeated(g, n, s->name, s->i, 2 * r, err);
    case GIR_FILL_KERNEL: {
        const gir_value *w = safe_in(g, n, 1);
        if (!w || w->shape.rank < 3 || w->shape.rank > GIR_MAX_RANK)
            return GIR_OK;
        for (int i = 2; i < w->shape.rank; i++)
            if (w->shape.dims[i] < 1)
                return GIR_OK;
        if (gir_attrs_set_ints(g, &n->attrs, s->name, w->shape.dims + 2, (size_t)w->shape.rank - 2) != GIR_OK)
            return gir_nomem(err);
        return GIR_OK;
    }
    }
    return GIR_OK;
}

/* Widens a present attribute to the schema's type when that loses nothing;
 * spells Cast's 'to' canonically. */
static gir_status coerce(gir_graph *g, gir_node *n, const gir_attr_schema *s, const gir_attr *a, gir_error *err)
{
    gir_status st = GIR_OK;
    if (s->type == GIR_ATTR_INT && a->type == GIR_ATTR_BOOL) {
        st = gir_attrs_set_int(g, &n->attrs, s->name, a->u.i);
    } else if (s->type == GIR_ATTR_FLOAT && (a->type == GIR_ATTR_INT || a->type == GIR_ATTR_BOOL)) {
        st = gir_attrs_set_float(g, &n->attrs, s->name, (double)a->u.i);
    } else if (s->type == GIR_ATTR_FLOATS && a->type == GIR_ATTR_INTS) {
        size_t len = a->u.ints.n;
        double *v = malloc((len ? len : 1) * sizeof *v);
        if (!v)
            return gir_nomem(err);
        for (size_t i = 0; i < len; i++)
            v[i] = (double)a->u.ints.v[i];
        st = gir_attrs_set_floats(g, &n->attrs, s->name, v, len);
        free(v);
    } else if (n->op == GIR_OP_Cast && strcmp(s->name, "to") == 0 && a->type == GIR_ATTR_STRING) {
        gir_dtype dt = gir_dtype_from_name(a->u.s);
        if (dt != GIR_DT_UNKNOWN && strcmp(gir_dtype_name(dt), a->u.s) != 0)
            st = gir_attrs_set_string(g, &n->attrs, s->name, gir_dtype_name(dt));
    }
    return st == GIR_OK ? GIR_OK : gir_nomem(err);
}

/* Puts the attributes in schema order, unknown ones after in their order. */
static gir_status schema_order(gir_node *n, const gir_attr_schema *schema, gir_error *err)
{
    size_t cnt = n->attrs.n, k = 0;
    if (cnt < 2)
        return GIR_OK;
    gir_attr *tmp = malloc(cnt * sizeof *tmp);
    unsigned char *taken = calloc(cnt, 1);
    if (!tmp || !taken) {
        free(tmp);
        free(taken);
        return gir_nomem(err);
    }
    for (const gir_attr_schema *s = schema; s->name; s++) {
        for (size_t i = 0; i < cnt; i++) {
            if (!taken[i] && strcmp(n->attrs.items[i].name, s->name) == 0) {
                tmp[k++] = n->attrs.items[i];
                taken[i] = 1;
                break;
            }
        }
    }
    for (size_t i = 0; i < cnt; i++)
        if (!taken[i])
            tmp[k++] = n->attrs.items[i];
    memcpy(n->attrs.items, tmp, cnt * sizeof *tmp);
    free(tmp);
    free(taken);
    return GIR_OK;
}

gir_status gir_normalize(gir_graph *g, gir_error *err)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        gir_node *n = g->nodes[i];
        const gir_op_info *op = gir_op_get(n->op);
        if (!op || n->op == GIR_OP_OPAQUE)
            continue;
        for (const gir_attr_schema *s = op->attrs; s->name; s++) {
            const gir_attr *a = gir_attrs_find(&n->attrs, s->name);
            gir_status st = a ? coerce(g, n, s, a, err)
                              : s->presence == GIR_ATTR_DEFAULTED ? fill_default(g, n, s, err) : GIR_OK;
            if (st != GIR_OK) {
                gir_err_node(err, n->name);
                return st;
            }
        }
        gir_status st = schema_order(n, op->attrs, err);
        if (st != GIR_OK)
            return st;
    }
    return GIR_OK;
}
