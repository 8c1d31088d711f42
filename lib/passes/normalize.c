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
    return gir_attrs_set_ints(g, &n->attrs, name, vals, (size_t)count, err);
}

/* Fills an absent DEFAULTED attribute. */
static gir_status fill_default(gir_graph *g, gir_node *n, const gir_attr_schema *s, gir_error *err)
{
    gir_status st = GIR_OK;
    int r;
    switch (s->fill) {
    case GIR_FILL_NONE: {
        /* The schema's name and text are static: put as they are. */
        gir_attr at = { .name = s->name, .type = s->type };
        if (s->type == GIR_ATTR_INT)
            at.u.i = s->i;
        else if (s->type == GIR_ATTR_FLOAT)
            at.u.f = s->f;
        else if (s->type == GIR_ATTR_STRING)
            at.u.s = s->s;
        else
            return GIR_OK;
        st = gir_attrs_put(g, &n->attrs, &at, err);
        return st == GIR_OK ? GIR_OK : gir_nomem(err);
    }
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
        return gir_attrs_set_ints(g, &n->attrs, s->name, w->shape.dims + 2, (size_t)w->shape.rank - 2, err);
    }
    }
    return GIR_OK;
}

/* Widens a present attribute to the schema's type when that loses nothing;
 * spells Cast's 'to' canonically. */
static gir_status coerce(gir_graph *g, gir_node *n, const gir_attr_schema *s, const gir_attr *a, gir_error *err)
{
    if (a->type == s->type && n->op != GIR_OP_Cast)
        return GIR_OK; /* the usual case: nothing to widen or respell */
    gir_status st = GIR_OK;
    if (s->type == GIR_ATTR_INT && a->type == GIR_ATTR_BOOL) {
        st = gir_attrs_set_int(g, &n->attrs, s->name, a->u.i, err);
    } else if (s->type == GIR_ATTR_FLOAT && (a->type == GIR_ATTR_INT || a->type == GIR_ATTR_BOOL)) {
        st = gir_attrs_set_float(g, &n->attrs, s->name, (double)a->u.i, err);
    } else if (s->type == GIR_ATTR_FLOATS && a->type == GIR_ATTR_INTS) {
        size_t len = a->u.ints.n;
        double *v = malloc((len ? len : 1) * sizeof *v);
        if (!v)
            return gir_nomem(err);
        for (size_t i = 0; i < len; i++)
            v[i] = (double)a->u.ints.v[i];
        st = gir_attrs_set_floats(g, &n->attrs, s->name, v, len, err);
        free(v);
    } else if (n->op == GIR_OP_Cast && strcmp(s->name, "to") == 0 && a->type == GIR_ATTR_STRING) {
        gir_dtype dt = gir_dtype_from_name(a->u.s);
        if (dt != GIR_DT_UNKNOWN && strcmp(gir_dtype_name(dt), a->u.s) != 0)
            st = gir_attrs_set_string(g, &n->attrs, s->name, gir_dtype_name(dt), err);
    }
    return st == GIR_OK ? GIR_OK : gir_nomem(err);
}

/* Puts the attributes in schema order, unknown ones after in their order.
 * pos[k] is the index of schema row k's attribute, -1 if absent (names in
 * an attribute list are unique). */
static gir_status schema_order(gir_node *n, const ptrdiff_t *pos, size_t rows, gir_error *err)
{
    size_t cnt = n->attrs.n, k = 0;
    bool sorted = true;
    for (size_t r = 0; r < rows && sorted; r++)
        if (pos[r] >= 0)
            sorted = pos[r] == (ptrdiff_t)k++;
    if (sorted)
        return GIR_OK;
    gir_attr small[16];
    unsigned char small_taken[16] = { 0 };
    gir_attr *tmp = cnt <= 16 ? small : malloc(cnt * sizeof *tmp);
    unsigned char *taken = cnt <= 16 ? small_taken : calloc(cnt, 1);
    if (!tmp || !taken) {
        if (tmp != small)
            free(tmp);
        if (taken != small_taken)
            free(taken);
        return gir_nomem(err);
    }
    k = 0;
    for (size_t r = 0; r < rows; r++) {
        if (pos[r] >= 0) {
            tmp[k++] = n->attrs.items[pos[r]];
            taken[pos[r]] = 1;
        }
    }
    for (size_t i = 0; i < cnt; i++)
        if (!taken[i])
            tmp[k++] = n->attrs.items[i];
    memcpy(n->attrs.items, tmp, cnt * sizeof *tmp);
    if (tmp != small)
        free(tmp);
    if (taken != small_taken)
        free(taken);
    return GIR_OK;
}

/* Finds the schema row of each attribute of n in one walk over the list:
 * pos[k] is the index of row k's attribute, -1 if absent (the first, should
 * a name repeat).  The attributes found are renamed to their row's name
 * text (the same text; the schema's copy), so that later lookups with the
 * schema's names (validation, inference) match by pointer. */
static void find_rows(gir_node *n, const gir_attr_schema *schema, size_t rows, ptrdiff_t *pos)
{
    for (size_t r = 0; r < rows; r++)
        pos[r] = -1;
    const gir_attr_schema *next = schema;
    for (size_t i = 0; i < n->attrs.n; i++) {
        gir_attr *a = &n->attrs.items[i];
        const gir_attr_schema *s = gir_attr_schema_find(schema, next, a->name);
        if (!s)
            continue;
        next = s + 1;
        if (pos[s - schema] < 0) {
            pos[s - schema] = (ptrdiff_t)i;
            a->name = s->name;
        }
    }
}

/* Coerces present and fills absent attributes of one node, then orders
 * them; pos has a slot per schema row. */
static gir_status normalize_node(gir_graph *g, gir_node *n, const gir_attr_schema *schema, size_t rows,
                                 ptrdiff_t *pos, gir_error *err)
{
    /* Coercing replaces an attribute in place and filling appends one, so
     * the indices found stay valid. */
    find_rows(n, schema, rows, pos);
    for (size_t r = 0; r < rows; r++) {
        const gir_attr_schema *s = &schema[r];
        ptrdiff_t i = pos[r];
        size_t before = n->attrs.n;
        gir_status st = GIR_OK;
        if (i >= 0)
            st = coerce(g, n, s, &n->attrs.items[i], err); /* replaces in place */
        else if (s->presence == GIR_ATTR_DEFAULTED)
            st = fill_default(g, n, s, err); /* appends, if anything */
        TRY(gir_err_in_node(st, err, n->name));
        if (i < 0 && n->attrs.n > before) {
            pos[r] = (ptrdiff_t)n->attrs.n - 1;
            n->attrs.items[pos[r]].name = s->name;
        }
    }
    return schema_order(n, pos, rows, err);
}

gir_status gir_normalize(gir_graph *g, gir_error *err)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        gir_node *n = g->nodes[i];
        const gir_op_info *op = gir_op_get(n->op);
        if (!op || n->op == GIR_OP_OPAQUE)
            continue;
        size_t rows = op->n_attrs;
        ptrdiff_t small[32];
        ptrdiff_t *pos = rows <= 32 ? small : malloc(rows * sizeof *pos);
        if (!pos)
            return gir_nomem(err);
        gir_status st = normalize_node(g, n, op->attrs, rows, pos, err);
        if (pos != small)
            free(pos);
        if (st != GIR_OK)
            return st;
    }
    return GIR_OK;
}
