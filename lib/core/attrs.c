/* Ordered attribute lists (node attributes and metadata). */
#include "ir.h"
#include "limits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void attr_release(gir_attr *a)
{
    if (a->type == GIR_ATTR_TENSOR)
        gir_tensor_unref(a->u.t);
}

/* Gives a room for at least cap items.  The list lives in the graph's
 * arena: a full one moves to a bigger block (the old one stays until the
 * graph goes). */
static bool grow(gir_graph *g, gir_attrs *a, size_t cap)
{
    if (cap <= a->cap)
        return true;
    if (cap > SIZE_MAX / sizeof *a->items)
        return false;
    gir_attr *items = gir_arena_alloc_uninit(&g->arena, cap * sizeof *items);
    if (!items)
        return false;
    if (a->n)
        memcpy(items, a->items, a->n * sizeof *items);
    a->items = items;
    a->cap = cap;
    return true;
}

/* Finds or appends the slot for name; the slot's old value is released.
 * A new slot's name is copied into the arena when copy_name, else taken
 * as it is (gir_attrs_put). */
static gir_attr *slot(gir_graph *g, gir_attrs *a, const char *name, bool copy_name)
{
    for (size_t i = 0; i < a->n; i++) {
        if (gir_attr_name_eq(a->items[i].name, name)) {
            attr_release(&a->items[i]);
            return &a->items[i];
        }
    }
    if (gir_limit_attr(NULL) || (a->n == a->cap && !grow(g, a, a->cap ? a->cap * 2 : 4)))
        return NULL;
    const char *nm = copy_name ? gir_arena_strdup(&g->arena, name) : name;
    if (!nm)
        return NULL;
    gir_attr *s = &a->items[a->n++];
    memset(s, 0, sizeof *s);
    s->name = nm;
    return s;
}

gir_status gir_attrs_reserve(gir_graph *g, gir_attrs *a, size_t n, gir_error *err)
{
    if (n > SIZE_MAX - a->n)
        return gir_nomem(err);
    return grow(g, a, a->n + n) ? GIR_OK : gir_nomem(err);
}

/* Sets *src in its slot (a new slot's name copied when copy_name); a
 * tensor gains a reference. */
static gir_status put(gir_graph *g, gir_attrs *a, const gir_attr *src, bool copy_name, gir_error *err)
{
    if (src->type == GIR_ATTR_TENSOR)
        gir_tensor_ref(src->u.t); /* first: the slot may hold the same tensor */
    gir_attr *s = slot(g, a, src->name, copy_name);
    if (!s) {
        if (src->type == GIR_ATTR_TENSOR)
            gir_tensor_unref(src->u.t);
        return gir_nomem(err);
    }
    const char *name = s->name; /* an existing slot keeps its name */
    *s = *src;
    s->name = name;
    return GIR_OK;
}

gir_status gir_attrs_put(gir_graph *g, gir_attrs *a, const gir_attr *src, gir_error *err)
{
    return put(g, a, src, false, err);
}

gir_status gir_attrs_put_list(gir_graph *g, gir_attrs *a, const gir_attr *src, size_t n, gir_error *err)
{
    if (a->n) {
        /* names may repeat the list's: one by one */
        for (size_t i = 0; i < n; i++)
            TRY(gir_attrs_put(g, a, &src[i], err));
        return GIR_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (gir_limit_attr(err))
            return GIR_E_LIMIT;
    if (!grow(g, a, n))
        return gir_nomem(err);
    if (n)
        memcpy(a->items, src, n * sizeof *src);
    a->n = n;
    for (size_t i = 0; i < n; i++)
        if (src[i].type == GIR_ATTR_TENSOR)
            gir_tensor_ref(src[i].u.t);
    return GIR_OK;
}

const char **gir_arena_strings(gir_arena *arena, const char *const *v, size_t n)
{
    /* the pointers and the texts in one block */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(v[i] ? v[i] : "") + 1;
    size_t ptrs = (n ? n : 1) * sizeof(const char *);
    if (n > SIZE_MAX / sizeof(const char *) || total > SIZE_MAX - ptrs)
        return NULL;
    const char **copy = gir_arena_alloc_uninit(arena, ptrs + total);
    if (!copy)
        return NULL;
    char *text = (char *)copy + ptrs;
    for (size_t i = 0; i < n; i++) {
        copy[i] = text;
        text = stpcpy(text, v[i] ? v[i] : "") + 1;
    }
    return copy;
}

/* Sets attribute name to v, or fails for the copy of its data that is
 * NULL (an arena copy that failed). */
static gir_status set_copy(gir_graph *g, gir_attrs *a, const void *copy, gir_attr v, gir_error *err)
{
    return copy ? put(g, a, &v, true, err) : gir_nomem(err);
}

gir_status gir_attrs_set_int(gir_graph *g, gir_attrs *a, const char *name, int64_t v, gir_error *err)
{
    return put(g, a, &(gir_attr){ .name = name, .type = GIR_ATTR_INT, .u.i = v }, true, err);
}

gir_status gir_attrs_set_bool(gir_graph *g, gir_attrs *a, const char *name, bool v, gir_error *err)
{
    return put(g, a, &(gir_attr){ .name = name, .type = GIR_ATTR_BOOL, .u.i = v }, true, err);
}

gir_status gir_attrs_set_float(gir_graph *g, gir_attrs *a, const char *name, double v, gir_error *err)
{
    return put(g, a, &(gir_attr){ .name = name, .type = GIR_ATTR_FLOAT, .u.f = v }, true, err);
}

gir_status gir_attrs_set_string(gir_graph *g, gir_attrs *a, const char *name, const char *v, gir_error *err)
{
    const char *copy = gir_arena_strdup(&g->arena, v ? v : "");
    return set_copy(g, a, copy, (gir_attr){ .name = name, .type = GIR_ATTR_STRING, .u.s = copy }, err);
}

gir_status gir_attrs_set_ints(gir_graph *g, gir_attrs *a, const char *name, const int64_t *v, size_t n, gir_error *err)
{
    int64_t *copy = n > SIZE_MAX / sizeof *v ? NULL : gir_arena_memdup(&g->arena, v, n * sizeof *v);
    return set_copy(g, a, copy, (gir_attr){ .name = name, .type = GIR_ATTR_INTS, .u.ints = { n, copy } }, err);
}

gir_status gir_attrs_set_floats(gir_graph *g, gir_attrs *a, const char *name, const double *v, size_t n, gir_error *err)
{
    double *copy = n > SIZE_MAX / sizeof *v ? NULL : gir_arena_memdup(&g->arena, v, n * sizeof *v);
    return set_copy(g, a, copy, (gir_attr){ .name = name, .type = GIR_ATTR_FLOATS, .u.floats = { n, copy } }, err);
}

gir_status gir_attrs_set_strings(gir_graph *g, gir_attrs *a, const char *name, const char *const *v, size_t n, gir_error *err)
{
    const char **copy = gir_arena_strings(&g->arena, v, n);
    return set_copy(g, a, copy, (gir_attr){ .name = name, .type = GIR_ATTR_STRINGS, .u.strs = { n, copy } }, err);
}

gir_status gir_attrs_set_tensor(gir_graph *g, gir_attrs *a, const char *name, gir_tensor *t, gir_error *err)
{
    return put(g, a, &(gir_attr){ .name = name, .type = GIR_ATTR_TENSOR, .u.t = t }, true, err);
}

gir_status gir_attrs_copy_attr(gir_graph *g, gir_attrs *a, const gir_attr *src, gir_error *err)
{
    switch (src->type) {
    case GIR_ATTR_INT: return gir_attrs_set_int(g, a, src->name, src->u.i, err);
    case GIR_ATTR_BOOL: return gir_attrs_set_bool(g, a, src->name, src->u.i != 0, err);
    case GIR_ATTR_FLOAT: return gir_attrs_set_float(g, a, src->name, src->u.f, err);
    case GIR_ATTR_STRING: return gir_attrs_set_string(g, a, src->name, src->u.s, err);
    case GIR_ATTR_INTS: return gir_attrs_set_ints(g, a, src->name, src->u.ints.v, src->u.ints.n, err);
    case GIR_ATTR_FLOATS: return gir_attrs_set_floats(g, a, src->name, src->u.floats.v, src->u.floats.n, err);
    case GIR_ATTR_STRINGS:
        return gir_attrs_set_strings(g, a, src->name, (const char *const *)src->u.strs.v, src->u.strs.n, err);
    case GIR_ATTR_TENSOR: return gir_attrs_set_tensor(g, a, src->name, src->u.t, err);
    }
    return gir_fail(err, GIR_E_INTERNAL, "attribute '%s' of unknown type %d", src->name, (int)src->type);
}

gir_status gir_attrs_copy(gir_graph *g, gir_attrs *dst, const gir_attrs *src, gir_error *err)
{
    if (src->n)
        TRY(gir_attrs_reserve(g, dst, src->n, err));
    for (size_t i = 0; i < src->n; i++)
        TRY(gir_attrs_copy_attr(g, dst, &src->items[i], err));
    return GIR_OK;
}

bool gir_attrs_remove(gir_attrs *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++) {
        if (gir_attr_name_eq(a->items[i].name, name)) {
            attr_release(&a->items[i]);
            memmove(&a->items[i], &a->items[i + 1], (a->n - i - 1) * sizeof *a->items);
            a->n--;
            return true;
        }
    }
    return false;
}

const gir_attr *gir_attrs_find(const gir_attrs *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (gir_attr_name_eq(a->items[i].name, name))
            return &a->items[i];
    return NULL;
}

void gir_attrs_free(gir_attrs *a)
{
    for (size_t i = 0; i < a->n; i++)
        attr_release(&a->items[i]);
    a->items = NULL; /* in the graph's arena */
    a->n = a->cap = 0;
}

int64_t gir_attrs_get_int(const gir_attrs *a, const char *name, int64_t dflt)
{
    const gir_attr *x = gir_attrs_find(a, name);
    if (!x)
        return dflt;
    if (x->type == GIR_ATTR_INT || x->type == GIR_ATTR_BOOL)
        return x->u.i;
    return dflt;
}

double gir_attrs_get_float(const gir_attrs *a, const char *name, double dflt)
{
    const gir_attr *x = gir_attrs_find(a, name);
    if (!x)
        return dflt;
    if (x->type == GIR_ATTR_FLOAT)
        return x->u.f;
    if (x->type == GIR_ATTR_INT)
        return (double)x->u.i;
    return dflt;
}

const char *gir_attrs_get_string(const gir_attrs *a, const char *name, const char *dflt)
{
    const gir_attr *x = gir_attrs_find(a, name);
    return x && x->type == GIR_ATTR_STRING ? x->u.s : dflt;
}

ptrdiff_t gir_attrs_get_ints(const gir_attrs *a, const char *name, const int64_t **v)
{
    const gir_attr *x = gir_attrs_find(a, name);
    if (!x || x->type != GIR_ATTR_INTS)
        return -1;
    *v = x->u.ints.v;
    return (ptrdiff_t)x->u.ints.n;
}

ptrdiff_t gir_attrs_get_floats(const gir_attrs *a, const char *name, const double **v)
{
    const gir_attr *x = gir_attrs_find(a, name);
    if (!x || x->type != GIR_ATTR_FLOATS)
        return -1;
    *v = x->u.floats.v;
    return (ptrdiff_t)x->u.floats.n;
}

static bool double_same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

bool gir_attr_equal(const gir_attr *x, const gir_attr *y)
{
    if (x->type != y->type || strcmp(x->name, y->name) != 0)
        return false;
    switch (x->type) {
    case GIR_ATTR_INT:
    case GIR_ATTR_BOOL: return x->u.i == y->u.i;
    case GIR_ATTR_FLOAT: return double_same(x->u.f, y->u.f);
    case GIR_ATTR_STRING: return strcmp(x->u.s, y->u.s) == 0;
    case GIR_ATTR_INTS:
        return x->u.ints.n == y->u.ints.n &&
               (x->u.ints.n == 0 || memcmp(x->u.ints.v, y->u.ints.v, x->u.ints.n * sizeof(int64_t)) == 0);
    case GIR_ATTR_FLOATS:
        if (x->u.floats.n != y->u.floats.n)
            return false;
        for (size_t i = 0; i < x->u.floats.n; i++)
            if (!double_same(x->u.floats.v[i], y->u.floats.v[i]))
                return false;
        return true;
    case GIR_ATTR_STRINGS:
        if (x->u.strs.n != y->u.strs.n)
            return false;
        for (size_t i = 0; i < x->u.strs.n; i++)
            if (strcmp(x->u.strs.v[i], y->u.strs.v[i]) != 0)
                return false;
        return true;
    case GIR_ATTR_TENSOR: {
        bool eq = false;
        return gir_tensor_equal(x->u.t, y->u.t, &eq, NULL) == GIR_OK && eq;
    }
    }
    return false;
}

/* ---- public accessors ---------------------------------------------------- */

GIR_API const char *gir_attr_name(const gir_attr *a) { return a->name; }
GIR_API gir_attr_type gir_attr_get_type(const gir_attr *a) { return a->type; }
GIR_API int64_t gir_attr_int(const gir_attr *a)
{
    return a->type == GIR_ATTR_INT || a->type == GIR_ATTR_BOOL ? a->u.i : 0;
}
GIR_API double gir_attr_float(const gir_attr *a) { return a->type == GIR_ATTR_FLOAT ? a->u.f : 0.0; }
GIR_API const char *gir_attr_string(const gir_attr *a) { return a->type == GIR_ATTR_STRING ? a->u.s : NULL; }
GIR_API size_t gir_attr_list_len(const gir_attr *a)
{
    switch (a->type) {
    case GIR_ATTR_INTS: return a->u.ints.n;
    case GIR_ATTR_FLOATS: return a->u.floats.n;
    case GIR_ATTR_STRINGS: return a->u.strs.n;
    default: return 0;
    }
}
GIR_API const int64_t *gir_attr_ints(const gir_attr *a) { return a->type == GIR_ATTR_INTS ? a->u.ints.v : NULL; }
GIR_API const double *gir_attr_floats(const gir_attr *a)
{
    return a->type == GIR_ATTR_FLOATS ? a->u.floats.v : NULL;
}
GIR_API const char *const *gir_attr_strings(const gir_attr *a)
{
    return a->type == GIR_ATTR_STRINGS ? (const char *const *)a->u.strs.v : NULL;
}
GIR_API gir_tensor *gir_attr_tensor(const gir_attr *a) { return a->type == GIR_ATTR_TENSOR ? a->u.t : NULL; }
