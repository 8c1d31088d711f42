/* The helpers of shape and dtype inference (opinfer.h). */
#include "opinfer.h"

#include <stdio.h>
#include <string.h>

void oi_ish_of(const gir_value *v, ish *o)
{
    if (!v || v->shape.rank < 0 || v->shape.rank > GIR_MAX_RANK) {
        ish_unknown(o);
        return;
    }
    o->s = v->shape; /* each field written once: this runs for every input */
    for (int i = 0; i < GIR_MAX_RANK; i++) {
        bool axis = i < v->shape.rank;
        if (axis && o->s.dims[i] < 0)
            o->s.dims[i] = -1;
        o->nm[i] = axis ? v->dim_names[i] : NULL;
    }
}

gir_status oi_input_shape(const gir_graph *g, const gir_node *n, size_t i, const gir_value **v, ish *s,
                          gir_error *err)
{
    TRY(oi_input(g, n, i, v, err));
    oi_ish_of(*v, s);
    return GIR_OK;
}

gir_status oi_two_inputs(const gir_graph *g, const gir_node *n, const gir_value **a, const gir_value **b, gir_dtype *dt,
                         ish *as, ish *bs, gir_error *err)
{
    TRY(oi_input(g, n, 0, a, err));
    TRY(oi_input(g, n, 1, b, err));
    TRY(oi_same_dtype(g, n, 0, 2, dt, err));
    oi_ish_of(*a, as);
    oi_ish_of(*b, bs);
    return GIR_OK;
}

gir_status oi_set_unknown(gir_graph *g, gir_node *n, size_t k, gir_dtype dt, gir_error *err)
{
    ish o;
    ish_unknown(&o);
    return oi_set_out(g, n, k, dt, &o, err);
}

gir_status oi_rank_limit(const gir_node *n, ll r, gir_error *err)
{
    if (r > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "%s output would have rank %lld, more than the maximum %d", OPN(n), r,
                        GIR_MAX_RANK);
    return GIR_OK;
}

gir_status oi_too_large(const gir_node *n, gir_error *err)
{
    return gir_fail(err, GIR_E_LIMIT, "%s output dimension overflows a 64-bit integer", OPN(n));
}

/* Product of dims [from, to) of s: -1 when one is unknown, -2 on overflow. */
int64_t oi_dims_product(const gir_shape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) {
        if (s->dims[i] < 0)
            return -1;
        if (!mul_ok(p, s->dims[i], &p))
            return -2;
    }
    return p;
}

gir_status oi_input(const gir_graph *g, const gir_node *n, size_t i, const gir_value **v, gir_error *err)
{
    *v = gir_in(g, n, i);
    if (!*v) {
        char nm[32];
        return gir_fail(err, GIR_E_REFERENCE, "%s input %zu (%s) is missing", OPN(n), i,
                        gir_op_operand_name(n->op, false, i, nm, sizeof nm));
    }
    return GIR_OK;
}

/* Records the inferred dtype and shape of output k.  A dtype or shape the
 * value already has (set by a reader, or by an earlier run) must agree; the
 * result keeps every dimension either side knows. */
gir_status oi_set_out(gir_graph *g, gir_node *n, size_t k, gir_dtype dt, const ish *sh, gir_error *err)
{
    gir_value *v = gir_out(g, n, k);
    if (!v)
        return GIR_OK; /* an omitted optional output */
    if (dt != GIR_DT_UNKNOWN && v->dtype != GIR_DT_UNKNOWN && v->dtype != dt)
        return gir_fail(err, GIR_E_DTYPE, "%s output '%s' is declared %s but inferred %s", OPN(n), v->name,
                        gir_dtype_name(v->dtype), gir_dtype_name(dt));
    if (sh->s.rank >= 0 && v->shape.rank >= 0) {
        bool agree = sh->s.rank == v->shape.rank;
        for (int i = 0; agree && i < sh->s.rank; i++)
            if (sh->s.dims[i] >= 0 && v->shape.dims[i] >= 0 && sh->s.dims[i] != v->shape.dims[i])
                agree = false;
        if (!agree)
            return gir_fail(err, GIR_E_SHAPE, "%s output '%s' is declared %s but inferred %s", OPN(n), v->name,
                            SHP(&v->shape), SHP(&sh->s));
    }
    if (dt != GIR_DT_UNKNOWN)
        v->dtype = dt;
    if (sh->s.rank < 0)
        return GIR_OK;
    if (v->shape.rank < 0) {
        v->shape = sh->s;
        for (int i = 0; i < GIR_MAX_RANK; i++)
            v->dim_names[i] = i < sh->s.rank ? sh->nm[i] : NULL;
        return GIR_OK;
    }
    for (int i = 0; i < sh->s.rank; i++) {
        if (v->shape.dims[i] < 0)
            v->shape.dims[i] = sh->s.dims[i];
        if (!v->dim_names[i])
            v->dim_names[i] = sh->nm[i];
    }
    return GIR_OK;
}

/* The common dtype of inputs [from, to); they must agree where known. */
gir_status oi_same_dtype(const gir_graph *g, const gir_node *n, size_t from, size_t to, gir_dtype *dt,
                         gir_error *err)
{
    *dt = GIR_DT_UNKNOWN;
    size_t first = 0;
    for (size_t i = from; i < to; i++) {
        const gir_value *v = gir_in(g, n, i);
        if (!v || v->dtype == GIR_DT_UNKNOWN)
            continue;
        if (*dt == GIR_DT_UNKNOWN) {
            *dt = v->dtype;
            first = i;
        } else if (v->dtype != *dt) {
            return gir_fail(err, GIR_E_DTYPE, "%s inputs %zu and %zu have different types %s and %s", OPN(n), first,
                            i, gir_dtype_name(*dt), gir_dtype_name(v->dtype));
        }
    }
    return GIR_OK;
}

gir_status oi_need_dtype(const gir_node *n, const gir_value *v, size_t i, bool ok, const char *what,
                         gir_error *err)
{
    if (v->dtype == GIR_DT_UNKNOWN || ok)
        return GIR_OK;
    char nm[32];
    return gir_fail(err, GIR_E_DTYPE, "%s input %zu (%s) must be %s, found %s", OPN(n), i,
                    gir_op_operand_name(n->op, false, i, nm, sizeof nm), what, gir_dtype_name(v->dtype));
}

/* Numpy (multidirectional) broadcasting of a and b. */
gir_status oi_bcast(const gir_node *n, const ish *a, const ish *b, ish *o, gir_error *err)
{
    if (a->s.rank < 0 || b->s.rank < 0) {
        ish_unknown(o);
        return GIR_OK;
    }
    int r = a->s.rank > b->s.rank ? a->s.rank : b->s.rank;
    ish t;
    ish_rank(&t, r);
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->s.rank), ib = i - (r - b->s.rank);
        int64_t da = ia >= 0 ? a->s.dims[ia] : 1, db = ib >= 0 ? b->s.dims[ib] : 1;
        const char *na = ia >= 0 ? a->nm[ia] : NULL, *nb = ib >= 0 ? b->nm[ib] : NULL;
        if (ia < 0) {
            t.s.dims[i] = db;
            t.nm[i] = nb;
        } else if (ib < 0) {
            t.s.dims[i] = da;
            t.nm[i] = na;
        } else if (da == db) {
            t.s.dims[i] = da;
            if (da >= 0)
                t.nm[i] = na ? na : nb;
            else
                t.nm[i] = na && nb && strcmp(na, nb) == 0 ? na : NULL;
        } else if (da == 1) {
            t.s.dims[i] = db;
            t.nm[i] = nb;
        } else if (db == 1) {
            t.s.dims[i] = da;
            t.nm[i] = na;
        } else if (da < 0) {
            t.s.dims[i] = db;
            t.nm[i] = nb;
        } else if (db < 0) {
            t.s.dims[i] = da;
            t.nm[i] = na;
        } else {
            return gir_fail(err, GIR_E_SHAPE, "%s cannot broadcast shapes %s and %s", OPN(n), SHP(&a->s),
                            SHP(&b->s));
        }
    }
    *o = t;
    return GIR_OK;
}

/* Unidirectional broadcasting: b must broadcast to target without changing it. */
gir_status oi_bcast_to(const gir_node *n, const ish *target, const ish *b, const char *what, gir_error *err)
{
    if (target->s.rank < 0 || b->s.rank < 0)
        return GIR_OK;
    bool ok = b->s.rank <= target->s.rank;
    for (int i = 0; ok && i < b->s.rank; i++) {
        int64_t db = b->s.dims[b->s.rank - 1 - i], dt = target->s.dims[target->s.rank - 1 - i];
        if (db >= 0 && db != 1 && dt >= 0 && db != dt)
            ok = false;
    }
    if (!ok)
        return gir_fail(err, GIR_E_SHAPE, "%s cannot broadcast %s %s to %s", OPN(n), what, SHP(&b->s),
                        SHP(&target->s));
    return GIR_OK;
}

/* Normalises axis a of a rank-r tensor ([-r, r-1], or [-r, r] when
 * inclusive) into *out. */
gir_status oi_norm_axis(const gir_node *n, const char *attr, int64_t a, int r, bool inclusive, int *out,
                        gir_error *err)
{
    int hi = inclusive ? r : r - 1;
    if (a < -(int64_t)r || a > hi)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s %s %lld is out of range for rank %d (expected %d to %d)",
                        OPN(n), attr, (ll)a, r, -r, hi);
    *out = (int)(a < 0 ? a + r : a);
    return GIR_OK;
}

/* Marks the axes of an axes list (normalised, no duplicates) in mark[]. */
gir_status oi_axes_mask(const gir_node *n, const char *attr, const int64_t *v, ptrdiff_t len, int r, bool *mark,
                        gir_error *err)
{
    for (int i = 0; i < GIR_MAX_RANK; i++)
        mark[i] = false;
    for (ptrdiff_t i = 0; i < len; i++) {
        int a = 0;
        TRY(oi_norm_axis(n, attr, v[i], r, false, &a, err));
        if (mark[a])
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s %s repeats axis %d", OPN(n), attr, a);
        mark[a] = true;
    }
    return GIR_OK;
}

gir_status oi_list_len(const gir_node *n, const char *attr, ptrdiff_t len, ll want, const char *why,
                       gir_error *err)
{
    if (len != want)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has %td values, expected %lld (%s)", OPN(n), attr,
                        len, want, why);
    return GIR_OK;
}

gir_status oi_need_attr(const gir_node *n, const char *attr, bool present, gir_error *err)
{
    if (!present)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s needs attribute '%s'", OPN(n), attr);
    return GIR_OK;
}

gir_status oi_need_ints(const gir_node *n, const char *attr, const int64_t **v, ptrdiff_t *len, gir_error *err)
{
    *len = gir_attrs_get_ints(&n->attrs, attr, v);
    return oi_need_attr(n, attr, *len >= 0, err);
}

/* Looks several attributes of n up in one walk over its list: at[k] is the
 * attribute called names[k] (the first, as gir_attrs_find), or NULL.  With
 * names in schema order, a normalised list matches each name at the first
 * or after a few misses: the search for the next name starts after the last
 * one found. */
void oi_find_attrs(const gir_node *n, const char *const *names, size_t count, const gir_attr **at)
{
    for (size_t k = 0; k < count; k++)
        at[k] = NULL;
    size_t next = 0;
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        for (size_t j = 0; j < count; j++) {
            size_t k = next + j < count ? next + j : next + j - count;
            if (gir_attr_name_eq(a->name, names[k])) {
                if (!at[k])
                    at[k] = a;
                next = k + 1;
                break;
            }
        }
    }
}

/* Index of s in a NULL-terminated list of strings, or -1. */
int oi_choice_index(const char *const *choices, const char *s)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(choices[i], s) == 0)
            return i;
    return -1;
}
