/* Graph construction and the public read-only accessors. */
#include "ir.h"
#include "limits.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- name index (open addressing over value/node indices) ---------------- */

/* Mixes eight bytes of text into h (multiply, then fold the high bits down). */
static uint64_t hash_mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* The hash of a name of n bytes, taken eight bytes at a time (names are
 * looked up and added by the hundred thousand; a byte-wise hash costs five
 * instructions a character). */
static uint64_t hash_mem(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = hash_mix(h, w);
    }
    w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    h = hash_mix(h, w);
    /* the table index takes the low bits: fold the high ones in (a murmur3
     * finaliser) to keep names like "node_123" from clustering */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_str(const char *s) { return hash_mem(s, strlen(s)); }

typedef const char *(*name_of_fn)(const gir_graph *g, int32_t i);

static const char *value_name_of(const gir_graph *g, int32_t i) { return g->values[i]->name; }
static const char *node_name_of(const gir_graph *g, int32_t i) { return g->nodes[i]->name; }

/* The value or node index a slot holds, -1 when empty. */
static int32_t slot_idx(const gir_name_slot *s) { return (int32_t)s->ref - 1; }

/* The slot holding name (hash h), or the empty slot where it would go.
 * Names are compared only when the stored hash matches. */
static gir_name_slot *index_slot(const gir_graph *g, gir_name_slot *tab, size_t cap, name_of_fn name_of,
                                 const char *name, uint32_t h)
{
    size_t mask = cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        gir_name_slot *s = &tab[i];
        if (!s->ref)
            return s;
        const char *other = s->hash == h ? name_of(g, slot_idx(s)) : NULL;
        if (other && (other == name || strcmp(other, name) == 0))
            return s;
    }
}

static int32_t index_find(const gir_graph *g, gir_name_slot *tab, size_t cap, name_of_fn name_of,
                          const char *name)
{
    if (!cap || !name)
        return -1;
    return slot_idx(index_slot(g, tab, cap, name_of, name, (uint32_t)hash_str(name)));
}

/* Adds a new name's entry (room reserved). */
static void index_put(gir_name_slot *tab, size_t cap, uint32_t h, int32_t idx)
{
    size_t mask = cap - 1, i = h & mask;
    while (tab[i].ref)
        i = (i + 1) & mask;
    tab[i] = (gir_name_slot){ (uint32_t)idx + 1, h };
}

/* Makes room for count entries (load factor <= 1/2) in a larger table. */
static bool index_grow(gir_name_slot **tab, size_t *cap, size_t count)
{
    size_t ncap = *cap ? *cap * 2 : 64;
    while (count * 2 >= ncap)
        ncap *= 2;
    gir_name_slot *nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return false;
    for (size_t i = 0; i < *cap; i++)
        if ((*tab)[i].ref)
            index_put(nt, ncap, (*tab)[i].hash, slot_idx(&(*tab)[i]));
    free(*tab);
    *tab = nt;
    *cap = ncap;
    return true;
}

/* Makes room for count entries, rehashing if needed. */
static inline bool index_reserve(gir_name_slot **tab, size_t *cap, size_t count)
{
    return count * 2 < *cap || index_grow(tab, cap, count);
}

/* Enters a new name (hash h) as idx.  at is the empty slot the failed lookup
 * ended on (NULL if there was no table), from a table of old_cap slots:
 * unless the table has grown since, the entry goes there without probing
 * again. */
static void index_add(gir_name_slot *tab, size_t cap, gir_name_slot *at, size_t old_cap, uint32_t h, int32_t idx)
{
    if (at && cap == old_cap)
        *at = (gir_name_slot){ (uint32_t)idx + 1, h };
    else
        index_put(tab, cap, h, idx);
}

/* ---- construction --------------------------------------------------------- */

gir_status gir_graph_new(gir_graph **out, gir_error *err)
{
    gir_graph *g = calloc(1, sizeof *g);
    if (!g)
        return gir_nomem(err);
    *out = g;
    return GIR_OK;
}

GIR_API void gir_graph_free(gir_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_values; i++) {
        gir_tensor_unref(g->values[i]->data);
        gir_attrs_free(&g->values[i]->meta);
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        gir_attrs_free(&g->nodes[i]->attrs);
        gir_attrs_free(&g->nodes[i]->meta);
    }
    gir_attrs_free(&g->meta);
    free(g->values);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->vindex);
    free(g->nindex);
    gir_arena_free(&g->arena);
    free(g);
}

static gir_status own_attrs(const gir_attrs *a, gir_error *err)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->items[i].type == GIR_ATTR_TENSOR)
            TRY(gir_tensor_own(a->items[i].u.t, err));
    return GIR_OK;
}

gir_status gir_graph_own_tensors(gir_graph *g, gir_error *err)
{
    for (size_t i = 0; i < g->n_values; i++) {
        if (g->values[i]->data)
            TRY(gir_tensor_own(g->values[i]->data, err));
        TRY(own_attrs(&g->values[i]->meta, err));
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        TRY(own_attrs(&g->nodes[i]->attrs, err));
        TRY(own_attrs(&g->nodes[i]->meta, err));
    }
    return own_attrs(&g->meta, err);
}

int32_t gir_graph_value_index(const gir_graph *g, const char *name)
{
    return index_find(g, g->vindex, g->vindex_cap, value_name_of, name);
}

int32_t gir_graph_node_index(const gir_graph *g, const char *name)
{
    return index_find(g, g->nindex, g->nindex_cap, node_name_of, name);
}

/* The length and hash of a new name and its place in an index (NULL
 * while the index is empty); an empty name, or one the index holds, fails
 * naming what the index names ("value", "node"). */
static inline gir_status name_place(const gir_graph *g, gir_name_slot *tab, size_t cap, name_of_fn name_of,
                                    const char *name, const char *what, size_t *len, uint32_t *h, gir_name_slot **at,
                                    gir_error *err)
{
    if (!name || !*name)
        return gir_fail(err, GIR_E_SCHEMA, "a %s has an empty name", what);
    *len = strlen(name);
    *h = (uint32_t)hash_mem(name, *len);
    *at = cap ? index_slot(g, tab, cap, name_of, name, *h) : NULL;
    if (*at && (*at)->ref)
        return gir_fail(err, GIR_E_DUPLICATE, "two %ss are named '%s'", what, name);
    return GIR_OK;
}

gir_status gir_graph_add_value(gir_graph *g, const char *name, gir_value_kind kind, int32_t *idx, gir_error *err)
{
    size_t len = 0, old_cap = g->vindex_cap;
    uint32_t h = 0;
    gir_name_slot *at = NULL; /* set by name_place (GCC cannot tell through its error paths) */
    TRY(name_place(g, g->vindex, old_cap, value_name_of, name, "value", &len, &h, &at, err));
    if (g->n_values >= INT32_MAX - 1)
        return gir_fail(err, GIR_E_LIMIT, "more than %d values", INT32_MAX - 1);
    if (!GIR_GROW(g->values, g->cap_values, g->n_values + 1) ||
        !index_reserve(&g->vindex, &g->vindex_cap, g->n_values + 1))
        return gir_nomem(err);
    gir_value *v = gir_arena_alloc_uninit(&g->arena, sizeof *v);
    const char *copy = v ? gir_arena_strndup(&g->arena, name, len) : NULL;
    if (!copy)
        return gir_nomem(err);
    *v = (gir_value){ .graph = g, .name = copy, .kind = kind, .dtype = GIR_DT_UNKNOWN, .shape.rank = -1,
                      .producer = -1, .producer_out = -1 };
    int32_t i = (int32_t)g->n_values++;
    g->values[i] = v;
    index_add(g->vindex, g->vindex_cap, at, old_cap, h, i);
    if (idx)
        *idx = i;
    return GIR_OK;
}

static const char *unique_name(gir_graph *g, const char *base, int32_t (*find)(const gir_graph *, const char *),
                               gir_error *err)
{
    if (!base) {
        gir_nomem(err); /* what a caller's failed formatting of base gives */
        return NULL;
    }
    const char *r = NULL;
    if (find(g, base) < 0) {
        r = gir_arena_strdup(&g->arena, base);
    } else {
        for (unsigned long k = 1;; k++) {
            char *s = gir_strdupf("%s_%lu", base, k);
            if (!s)
                break;
            if (find(g, s) < 0) {
                r = gir_arena_strdup(&g->arena, s);
                free(s);
                break;
            }
            free(s);
        }
    }
    if (!r)
        gir_nomem(err);
    return r;
}

const char *gir_graph_unique_value_name(gir_graph *g, const char *base, gir_error *err)
{
    return unique_name(g, base, gir_graph_value_index, err);
}

const char *gir_graph_unique_node_name(gir_graph *g, const char *base, gir_error *err)
{
    return unique_name(g, base, gir_graph_node_index, err);
}

gir_status gir_graph_add_node(gir_graph *g, const char *name, gir_op op, size_t n_in, size_t n_out,
                              gir_node **out, gir_error *err)
{
    size_t len = 0, old_cap = g->nindex_cap;
    uint32_t h = 0;
    gir_name_slot *at = NULL; /* set by name_place (GCC cannot tell through its error paths) */
    TRY(name_place(g, g->nindex, old_cap, node_name_of, name, "node", &len, &h, &at, err));
    if (n_in > 65535 || n_out > 65535)
        return gir_fail(err, GIR_E_LIMIT, "node '%s' has more than 65535 inputs or outputs", name);
    TRY(gir_limit_nodes(g->n_nodes + 1, err));
    if (g->n_nodes >= INT32_MAX - 1)
        return gir_fail(err, GIR_E_LIMIT, "more than %d nodes", INT32_MAX - 1);
    if (!GIR_GROW(g->nodes, g->cap_nodes, g->n_nodes + 1) ||
        !index_reserve(&g->nindex, &g->nindex_cap, g->n_nodes + 1))
        return gir_nomem(err);
    /* The node and its input and output lists in one allocation. */
    size_t in_cap = n_in ? n_in : 1, out_cap = n_out ? n_out : 1;
    gir_node *n = gir_arena_alloc_uninit(&g->arena, sizeof *n + (in_cap + out_cap) * sizeof(int32_t));
    const char *copy = n ? gir_arena_strndup(&g->arena, name, len) : NULL;
    if (!copy)
        return gir_nomem(err);
    *n = (gir_node){ .graph = g, .name = copy, .op = op, .n_in = n_in, .n_out = n_out, .in = (int32_t *)(n + 1) };
    n->out = n->in + in_cap;
    for (size_t i = 0; i < n_in; i++)
        n->in[i] = -1;
    for (size_t i = 0; i < n_out; i++)
        n->out[i] = -1;
    int32_t i = (int32_t)g->n_nodes++;
    g->nodes[i] = n;
    index_add(g->nindex, g->nindex_cap, at, old_cap, h, i);
    if (out)
        *out = n;
    return GIR_OK;
}

gir_status gir_node_resize_inputs(gir_graph *g, gir_node *n, size_t n_in, gir_error *err)
{
    if (n_in > 65535)
        return gir_fail(err, GIR_E_LIMIT, "node '%s' has more than 65535 inputs", n->name);
    if (n_in <= n->n_in) {
        n->n_in = n_in;
        return GIR_OK;
    }
    int32_t *in = gir_arena_alloc(&g->arena, n_in * sizeof *in);
    if (!in)
        return gir_nomem(err);
    for (size_t i = 0; i < n_in; i++)
        in[i] = i < n->n_in ? n->in[i] : -1;
    n->in = in;
    n->n_in = n_in;
    return GIR_OK;
}

static int32_t node_index_of(const gir_graph *g, const gir_node *n)
{
    /* Usually the node just added. */
    if (g->n_nodes && g->nodes[g->n_nodes - 1] == n)
        return (int32_t)g->n_nodes - 1;
    return gir_graph_node_index(g, n->name);
}

gir_status gir_node_set_output(gir_graph *g, gir_node *n, size_t k, int32_t value, gir_error *err)
{
    if (k >= n->n_out || value < 0 || (size_t)value >= g->n_values)
        return gir_fail(err, GIR_E_INTERNAL, "output %zu of node '%s' out of range", k, n->name);
    gir_value *v = g->values[value];
    if (v->producer >= 0) {
        gir_fail(err, GIR_E_DUPLICATE, "value '%s' is produced by two nodes", v->name);
        gir_err_node(err, n->name);
        return GIR_E_DUPLICATE;
    }
    v->producer = node_index_of(g, n);
    v->producer_out = (int32_t)k;
    v->kind = GIR_VALUE_INTERMEDIATE;
    n->out[k] = value;
    return GIR_OK;
}

gir_status gir_node_check_refs(const gir_graph *g, const gir_node *n, gir_error *err)
{
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i] < -1 || (n->in[i] >= 0 && (size_t)n->in[i] >= g->n_values))
            return gir_fail(err, GIR_E_REFERENCE, "input %zu refers to value %d of %zu", i, (int)n->in[i],
                            g->n_values);
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i] < -1 || (n->out[i] >= 0 && (size_t)n->out[i] >= g->n_values))
            return gir_fail(err, GIR_E_REFERENCE, "output %zu refers to value %d of %zu", i, (int)n->out[i],
                            g->n_values);
    return GIR_OK;
}

gir_status gir_node_make_output(gir_graph *g, gir_node *n, size_t k, const char *name, gir_error *err)
{
    int32_t idx;
    TRY(gir_err_in_node(gir_graph_add_value(g, name, GIR_VALUE_INTERMEDIATE, &idx, err), err, n->name));
    return gir_node_set_output(g, n, k, idx, err);
}

static gir_status add_index(int32_t **arr, size_t *n, size_t *cap, int32_t v, gir_error *err)
{
    if (!GIR_GROW(*arr, *cap, *n + 1))
        return gir_nomem(err);
    (*arr)[(*n)++] = v;
    return GIR_OK;
}

gir_status gir_graph_add_input(gir_graph *g, int32_t value, gir_error *err)
{
    return add_index(&g->inputs, &g->n_inputs, &g->cap_inputs, value, err);
}

gir_status gir_graph_add_output(gir_graph *g, int32_t value, gir_error *err)
{
    return add_index(&g->outputs, &g->n_outputs, &g->cap_outputs, value, err);
}

void gir_value_set_data(gir_value *v, gir_tensor *t)
{
    gir_tensor_ref(t);
    gir_tensor_unref(v->data);
    v->data = t;
    if (t) {
        v->dtype = t->dtype;
        v->shape = t->shape;
    }
}

gir_status gir_graph_add_const(gir_graph *g, const char *name, gir_tensor *t, int32_t *idx, gir_error *err)
{
    int32_t i;
    gir_status st = gir_graph_add_value(g, name, GIR_VALUE_CONST, &i, err);
    if (st)
        return st;
    gir_value_set_data(g->values[i], t);
    if (idx)
        *idx = i;
    return GIR_OK;
}

gir_status gir_graph_add_const_named(gir_graph *g, gir_tensor *t, int32_t *idx, gir_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *base = gir_vstrdupf(fmt, ap);
    va_end(ap);
    const char *name = base ? gir_graph_unique_value_name(g, base, err) : NULL;
    free(base);
    gir_status st = name ? gir_graph_add_const(g, name, t, idx, err) : gir_nomem(err);
    gir_tensor_unref(t);
    return st;
}

gir_status gir_graph_vnote(gir_graph *g, gir_error *err, const char *fmt, va_list ap)
{
    char *s = gir_vstrdupf(fmt, ap);
    if (!s)
        return gir_nomem(err);
    const gir_attr *old = gir_attrs_find(&g->meta, GIR_META_NOTES);
    size_t n = old && old->type == GIR_ATTR_STRINGS ? old->u.strs.n : 0;
    const char **v = malloc((n + 1) * sizeof *v);
    if (!v) {
        free(s);
        return gir_nomem(err);
    }
    for (size_t i = 0; i < n; i++)
        v[i] = old->u.strs.v[i];
    v[n] = s;
    gir_status st = gir_attrs_set_strings(g, &g->meta, GIR_META_NOTES, v, n + 1, err);
    free(v);
    free(s);
    return st;
}

gir_status gir_graph_note(gir_graph *g, gir_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = gir_graph_vnote(g, err, fmt, ap);
    va_end(ap);
    return st;
}

/* Gives value (is_node false) or node idx a new name and rebuilds that
 * index: O(values) per rename, for the editing API. */
gir_status gir_graph_rename(gir_graph *g, bool is_node, int32_t idx, const char *name, gir_error *err)
{
    if (!name || !*name)
        return gir_fail(err, GIR_E_ARGUMENT, "a new name must not be empty");
    int32_t other = is_node ? gir_graph_node_index(g, name) : gir_graph_value_index(g, name);
    if (other >= 0 && other != idx)
        return gir_fail(err, GIR_E_DUPLICATE, "a %s is already named '%s'", is_node ? "node" : "value", name);
    const char *copy = gir_arena_strndup(&g->arena, name, strlen(name));
    size_t n = is_node ? g->n_nodes : g->n_values;
    gir_name_slot *tab = NULL;
    size_t cap = 0;
    if (!copy || !index_grow(&tab, &cap, n))
        return gir_nomem(err);
    if (is_node)
        g->nodes[idx]->name = copy;
    else
        g->values[idx]->name = copy;
    for (size_t i = 0; i < n; i++)
        index_put(tab, cap, (uint32_t)hash_str(is_node ? g->nodes[i]->name : g->values[i]->name), (int32_t)i);
    free(is_node ? g->nindex : g->vindex);
    if (is_node) {
        g->nindex = tab;
        g->nindex_cap = cap;
    } else {
        g->vindex = tab;
        g->vindex_cap = cap;
    }
    return GIR_OK;
}

/* ---- public accessors ------------------------------------------------------ */

GIR_API const char *gir_graph_name(const gir_graph *g) { return g->name ? g->name : ""; }
GIR_API size_t gir_graph_node_count(const gir_graph *g) { return g->n_nodes; }
GIR_API const gir_node *gir_graph_node(const gir_graph *g, size_t i) { return i < g->n_nodes ? g->nodes[i] : NULL; }
GIR_API size_t gir_graph_value_count(const gir_graph *g) { return g->n_values; }
GIR_API const gir_value *gir_graph_value(const gir_graph *g, size_t i)
{
    return i < g->n_values ? g->values[i] : NULL;
}
GIR_API const gir_value *gir_graph_find_value(const gir_graph *g, const char *name)
{
    int32_t i = gir_graph_value_index(g, name);
    return i >= 0 ? g->values[i] : NULL;
}
GIR_API size_t gir_graph_input_count(const gir_graph *g) { return g->n_inputs; }
GIR_API const gir_value *gir_graph_input(const gir_graph *g, size_t i)
{
    return i < g->n_inputs ? g->values[g->inputs[i]] : NULL;
}
GIR_API size_t gir_graph_output_count(const gir_graph *g) { return g->n_outputs; }
GIR_API const gir_value *gir_graph_output(const gir_graph *g, size_t i)
{
    return i < g->n_outputs ? g->values[g->outputs[i]] : NULL;
}
GIR_API size_t gir_graph_meta_count(const gir_graph *g) { return g->meta.n; }
GIR_API const gir_attr *gir_graph_meta(const gir_graph *g, size_t i) { return i < g->meta.n ? &g->meta.items[i] : NULL; }

GIR_API const char *gir_node_name(const gir_node *n) { return n->name; }
GIR_API const char *gir_node_op(const gir_node *n)
{
    return n->op == GIR_OP_OPAQUE ? (n->opaque_op ? n->opaque_op : "?") : gir_op_name(n->op);
}
GIR_API bool gir_node_is_opaque(const gir_node *n) { return n->op == GIR_OP_OPAQUE; }

const char *gir_node_opaque_why(const gir_node *n)
{
    const gir_attr *a = n->op == GIR_OP_OPAQUE ? gir_attrs_find(&n->meta, GIR_META_OPAQUE_WHY) : NULL;
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}
GIR_API const char *gir_node_opaque_format(const gir_node *n)
{
    return n->op == GIR_OP_OPAQUE ? n->opaque_format : NULL;
}
GIR_API size_t gir_node_input_count(const gir_node *n) { return n->n_in; }
GIR_API size_t gir_node_output_count(const gir_node *n) { return n->n_out; }
GIR_API const gir_value *gir_node_input(const gir_node *n, size_t i) { return gir_in(n->graph, n, i); }
GIR_API const gir_value *gir_node_output(const gir_node *n, size_t i) { return gir_out(n->graph, n, i); }
GIR_API size_t gir_node_attr_count(const gir_node *n) { return n->attrs.n; }
GIR_API const gir_attr *gir_node_attr(const gir_node *n, size_t i)
{
    return i < n->attrs.n ? &n->attrs.items[i] : NULL;
}
GIR_API const gir_attr *gir_node_find_attr(const gir_node *n, const char *name)
{
    return gir_attrs_find(&n->attrs, name);
}

GIR_API const char *gir_value_name(const gir_value *v) { return v->name; }
GIR_API gir_value_kind gir_value_get_kind(const gir_value *v) { return v->kind; }
GIR_API gir_dtype gir_value_dtype(const gir_value *v) { return v->dtype; }
GIR_API const gir_shape *gir_value_shape(const gir_value *v) { return &v->shape; }
GIR_API const char *gir_value_dim_name(const gir_value *v, int axis)
{
    return axis >= 0 && axis < GIR_MAX_RANK ? v->dim_names[axis] : NULL;
}
GIR_API gir_tensor *gir_value_tensor(const gir_value *v) { return v->data; }

/* ---- whole-graph copies and rebuilt indices ------------------------------- */

gir_status gir_graph_reindex(gir_graph *g, gir_error *err)
{
    free(g->vindex);
    free(g->nindex);
    g->vindex = g->nindex = NULL;
    g->vindex_cap = g->nindex_cap = 0;
    if (!index_reserve(&g->vindex, &g->vindex_cap, g->n_values + 1) ||
        !index_reserve(&g->nindex, &g->nindex_cap, g->n_nodes + 1))
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_values; i++) {
        const char *nm = g->values[i]->name;
        gir_name_slot *at = index_slot(g, g->vindex, g->vindex_cap, value_name_of, nm, (uint32_t)hash_str(nm));
        if (at->ref)
            return gir_fail(err, GIR_E_DUPLICATE, "two values are named '%s'", nm);
        *at = (gir_name_slot){ (uint32_t)i + 1, (uint32_t)hash_str(nm) };
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const char *nm = g->nodes[i]->name;
        gir_name_slot *at = index_slot(g, g->nindex, g->nindex_cap, node_name_of, nm, (uint32_t)hash_str(nm));
        if (at->ref)
            return gir_fail(err, GIR_E_DUPLICATE, "two nodes are named '%s'", nm);
        *at = (gir_name_slot){ (uint32_t)i + 1, (uint32_t)hash_str(nm) };
    }
    return GIR_OK;
}

gir_status gir_graph_clone(const gir_graph *src, gir_graph **out, gir_error *err)
{
    gir_graph *g = NULL;
    *out = NULL;
    TRY(gir_graph_new(&g, err));
    gir_status st = GIR_OK;
    if (src->name && !(g->name = gir_arena_strdup(&g->arena, src->name)))
        st = gir_nomem(err);
    for (size_t i = 0; !st && i < src->n_values; i++) {
        const gir_value *s = src->values[i];
        int32_t idx;
        if ((st = gir_graph_add_value(g, s->name, s->kind, &idx, err)))
            break;
        gir_value *v = g->values[idx];
        v->dtype = s->dtype;
        v->shape = s->shape;
        v->data = s->data ? gir_tensor_ref(s->data) : NULL;
        v->producer = s->producer;
        v->producer_out = s->producer_out;
        for (int k = 0; k < GIR_MAX_RANK; k++)
            if (s->dim_names[k] && !(v->dim_names[k] = gir_arena_strdup(&g->arena, s->dim_names[k])))
                st = gir_nomem(err);
        if (!st)
            st = gir_attrs_copy(g, &v->meta, &s->meta, err);
    }
    for (size_t i = 0; !st && i < src->n_nodes; i++) {
        const gir_node *s = src->nodes[i];
        gir_node *n;
        if ((st = gir_graph_add_node(g, s->name, s->op, s->n_in, s->n_out, &n, err)))
            break;
        memcpy(n->in, s->in, s->n_in * sizeof *n->in);
        memcpy(n->out, s->out, s->n_out * sizeof *n->out);
        if ((s->opaque_format && !(n->opaque_format = gir_arena_strdup(&g->arena, s->opaque_format))) ||
            (s->opaque_op && !(n->opaque_op = gir_arena_strdup(&g->arena, s->opaque_op))))
            st = gir_nomem(err);
        if (!st)
            st = gir_attrs_copy(g, &n->attrs, &s->attrs, err);
        if (!st)
            st = gir_attrs_copy(g, &n->meta, &s->meta, err);
    }
    for (size_t i = 0; !st && i < src->n_inputs; i++)
        st = gir_graph_add_input(g, src->inputs[i], err);
    for (size_t i = 0; !st && i < src->n_outputs; i++)
        st = gir_graph_add_output(g, src->outputs[i], err);
    if (!st)
        st = gir_attrs_copy(g, &g->meta, &src->meta, err);
    if (st) {
        if (st == GIR_E_NOMEM)
            gir_nomem(err);
        gir_graph_free(g);
        return st;
    }
    *out = g;
    return GIR_OK;
}
