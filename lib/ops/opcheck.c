/* The checker of canonical nodes against the operator table, and the
 * entry points of inference (gir_op_infer). */
#include "opinfer.h"

#include <stdio.h>
#include <string.h>

/* "2", "2 to 3", "1 or more" */
static const char *count_text(unsigned lo, unsigned hi, char *buf, size_t n)
{
    if (hi == GIR_VARIADIC)
        snprintf(buf, n, "%u or more", lo);
    else if (lo == hi)
        snprintf(buf, n, "%u", lo);
    else
        snprintf(buf, n, "%u to %u", lo, hi);
    return buf;
}

/* What range r asks for when v is outside it, else NULL. */
static const char *range_miss(gir_attr_range r, int64_t v)
{
    switch (r) {
    case GIR_RANGE_ANY: return NULL;
    case GIR_RANGE_BOOL: return v == 0 || v == 1 ? NULL : "0 or 1";
    case GIR_RANGE_POSITIVE: return v >= 1 ? NULL : "1 or more";
    case GIR_RANGE_NONNEG: return v >= 0 ? NULL : "0 or more";
    }
    return NULL;
}

static gir_status check_range(const gir_node *n, const gir_attr_schema *s, int64_t v, size_t at, bool list,
                              gir_error *err)
{
    const char *want = range_miss(s->range, v);
    if (!want)
        return GIR_OK;
    if (list)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has value %lld at position %zu, expected %s",
                        OPN(n), s->name, (ll)v, at, want);
    return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' is %lld, expected %s", OPN(n), s->name, (ll)v, want);
}

/* a against its schema s (NULL: the operator has no such attribute). */
static gir_status check_attr(const gir_node *n, const gir_attr *a, const gir_attr_schema *s, gir_error *err)
{
    if (!s)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s has no attribute '%s'", OPN(n), a->name);
    if (a->type != s->type)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has type %s, expected %s", OPN(n), a->name,
                        gir_attr_type_name(a->type), gir_attr_type_name(s->type));
    if (s->type == GIR_ATTR_INT)
        return check_range(n, s, a->u.i, 0, false, err);
    if (s->type == GIR_ATTR_INTS) {
        for (size_t i = 0; s->range != GIR_RANGE_ANY && i < a->u.ints.n; i++)
            if (range_miss(s->range, a->u.ints.v[i]))
                return check_range(n, s, a->u.ints.v[i], i, true, err);
        return GIR_OK;
    }
    /* float attributes may be infinite or NaN: a Pad of -inf before a max
     * pooling, a Clip without a bound, ... are legitimate computations */
    if (s->type == GIR_ATTR_STRING && s->choices) {
        if (oi_choice_index(s->choices, a->u.s) >= 0)
            return GIR_OK;
        gir_buf b = GIR_BUF_INIT;
        for (const char *const *c = s->choices; *c; c++)
            gir_buf_printf(&b, "%s%s", c == s->choices ? "" : ", ", *c);
        gir_status st = gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' is '%s', expected one of %s", OPN(n),
                                 a->name, a->u.s, b.data ? b.data : "?");
        gir_buf_free(&b);
        return st;
    }
    return GIR_OK;
}

gir_status gir_op_check_node(const gir_graph *g, const gir_node *n, gir_error *err)
{
    if ((unsigned)n->op >= GIR_OP_COUNT_)
        return gir_fail(err, GIR_E_INTERNAL, "operator id %d is outside the operator table", (int)n->op);
    TRY(gir_node_check_refs(g, n, err));
    if (n->op == GIR_OP_OPAQUE)
        return GIR_OK;
    const gir_op_info *op = gir_op_get(n->op);
    char cnt[32], nm[32];
    if (n->n_in < op->min_in || (op->max_in != GIR_VARIADIC && n->n_in > op->max_in))
        return gir_fail(err, GIR_E_SCHEMA, "%s takes %s inputs, found %zu", op->name,
                        count_text(op->min_in, op->max_in, cnt, sizeof cnt), n->n_in);
    if (n->n_out < op->min_out || (op->max_out != GIR_VARIADIC && n->n_out > op->max_out))
        return gir_fail(err, GIR_E_SCHEMA, "%s has %s outputs, found %zu", op->name,
                        count_text(op->min_out, op->max_out, cnt, sizeof cnt), n->n_out);
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i] < 0 && (i < op->min_in || op->max_in == GIR_VARIADIC))
            return gir_fail(err, GIR_E_REFERENCE, "%s input %zu (%s) is required but omitted", op->name, i,
                            gir_op_operand_name(n->op, false, i, nm, sizeof nm));
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i] < 0 && (i < op->min_out || op->max_out == GIR_VARIADIC))
            return gir_fail(err, GIR_E_REFERENCE, "%s output %zu (%s) is not connected", op->name, i,
                            gir_op_operand_name(n->op, true, i, nm, sizeof nm));
    /* normalised nodes keep their attributes in schema order: each search
     * starts after the row found last */
    const gir_attr_schema *next = op->attrs;
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        const gir_attr_schema *s = gir_attr_schema_find(op->attrs, next, a->name);
        if (s)
            next = s + 1;
        TRY(check_attr(n, a, s, err));
    }
    for (const gir_attr_schema *s = op->attrs; s->name; s++)
        if (s->presence == GIR_ATTR_REQUIRED && !gir_attrs_find(&n->attrs, s->name))
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s needs attribute '%s'", op->name, s->name);
    return GIR_OK;
}

gir_status gir_op_infer(gir_graph *g, gir_node *n, gir_error *err)
{
    if (n->op == GIR_OP_OPAQUE)
        return GIR_OK;
    TRY(gir_err_in_node(gir_op_check_node(g, n, err), err, n->name));
    return gir_op_infer_checked(g, n, err);
}

gir_status gir_op_infer_checked(gir_graph *g, gir_node *n, gir_error *err)
{
    if (n->op == GIR_OP_OPAQUE)
        return GIR_OK;
    return gir_err_in_node(gir_op_get(n->op)->infer(g, n, err), err, n->name);
}
