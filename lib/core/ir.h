/* The graph IR's internal definitions: what readers, writers, passes and the
 * runtime build and walk.  Not installed; the public view is graphir/graph.h. */
#ifndef GIR_IR_H
#define GIR_IR_H

#include "graphir/graph.h"
#include "internal.h"
#include "ops/ops.h"

/* ---- attributes -------------------------------------------------------- */

struct gir_attr {
    const char *name;     /* arena, or static: gir_normalize names canonical
                           * attributes with their schema row's text */
    gir_attr_type type;
    union {
        int64_t i;        /* INT, BOOL */
        double f;         /* FLOAT */
        const char *s;    /* STRING (arena, or static) */
        struct {
            size_t n;
            int64_t *v;   /* INTS (arena) */
        } ints;
        struct {
            size_t n;
            double *v;    /* FLOATS (arena) */
        } floats;
        struct {
            size_t n;
            const char **v; /* STRINGS (arena) */
        } strs;
        gir_tensor *t;    /* TENSOR (a reference) */
    } u;
};

/* An ordered list of attributes: node attributes, and metadata of nodes,
 * values and the graph.  Storage lives in the owning graph's arena, except
 * the items array itself. */
typedef struct gir_attrs {
    gir_attr *items;
    size_t n, cap;
} gir_attrs;

/* ---- tensors ----------------------------------------------------------- */

/* How a lazily loaded tensor gets its bytes. */
typedef struct gir_loader {
    /* Fills dst with exactly nbytes (little-endian, row-major). */
    gir_status (*load)(void *ctx, void *dst, uint64_t nbytes, gir_error *err);
    /* Frees ctx; called once when the tensor dies. */
    void (*release)(void *ctx);
} gir_loader;

struct gir_tensor {
    _Atomic int refs;      /* tensors may be shared by graphs on several threads */
    gir_dtype dtype;
    gir_shape shape;
    uint64_t nbytes;
    void *data;             /* loaded bytes, or NULL */
    bool data_mapped;       /* data is gir_tensor_load's own mapping (munmap, not free) */
    const gir_loader *loader; /* NULL: data is owned and permanent */
    void *loader_ctx;
};

/* A new tensor with zeroed, owned data.  Shape must be known. */
gir_status gir_tensor_new(gir_dtype dt, const gir_shape *shape, gir_tensor **out, gir_error *err);
/* A new tensor taking ownership of malloc'd data of the right size. */
gir_status gir_tensor_adopt(gir_dtype dt, const gir_shape *shape, void *data, gir_tensor **out, gir_error *err);
/* A lazily loaded tensor; takes ownership of ctx (released even on failure). */
gir_status gir_tensor_lazy(gir_dtype dt, const gir_shape *shape, const gir_loader *loader, void *ctx,
                           gir_tensor **out, gir_error *err);
/* Loads a lazily loaded tensor for good and lets go of its loader (and the
 * file behind it): the data becomes owned and permanent. */
gir_status gir_tensor_own(gir_tensor *t, gir_error *err);
/* Gives an owned tensor (no loader) new malloc'd data of the same size,
 * freeing the old whichever way it was allocated. */
void gir_tensor_replace_data(gir_tensor *t, void *data);
/* Byte-wise equality of two tensors' dtype, shape and data (loads both). */
gir_status gir_tensor_equal(gir_tensor *a, gir_tensor *b, bool *equal, gir_error *err);
/* A new tensor of type to (float32 or float64) holding 1 where the bool
 * tensor t is true and 0 elsewhere: a bool as formats without bool hold it. */
gir_status gir_tensor_bool_as_float(gir_tensor *t, gir_dtype to, gir_tensor **out, gir_error *err);
/* Bytes for dtype x shape, with overflow and limit checks. */
gir_status gir_tensor_size(gir_dtype dt, const gir_shape *shape, uint64_t *nbytes, gir_error *err);

/* ---- values and nodes ---------------------------------------------------- */

struct gir_value {
    struct gir_graph *graph;       /* owner */
    const char *name;              /* arena, unique in the graph */
    gir_value_kind kind;
    gir_dtype dtype;
    gir_shape shape;
    const char *dim_names[GIR_MAX_RANK]; /* symbolic dims (arena) or NULL */
    gir_tensor *data;              /* WEIGHT/CONST data (a reference), or NULL */
    int32_t producer;              /* node index, or -1 */
    int32_t producer_out;          /* which output of producer */
    gir_attrs meta;                /* format extras (variable attributes...) */
};

struct gir_node {
    struct gir_graph *graph;       /* owner */
    const char *name;              /* arena, unique among nodes */
    gir_op op;
    const char *opaque_format;     /* for GIR_OP_OPAQUE: source format name */
    const char *opaque_op;         /* for GIR_OP_OPAQUE: source operator name */
    size_t n_in, n_out;
    int32_t *in;                   /* value indices; -1 = omitted optional input */
    int32_t *out;                  /* value indices */
    gir_attrs attrs;               /* canonical attributes (opaque: verbatim) */
    gir_attrs meta;                /* format extras, not semantics */
};

/* A slot of a graph's name index: 1 + the index of a value or node (0:
 * empty, so that a new table is calloc's zeroed memory) and the hash of its
 * name, so probing rarely has to look at names. */
typedef struct gir_name_slot {
    uint32_t ref;
    uint32_t hash;
} gir_name_slot;

struct gir_graph {
    gir_arena arena;
    const char *name;
    gir_value **values;
    size_t n_values, cap_values;
    gir_node **nodes;
    size_t n_nodes, cap_nodes;
    int32_t *inputs;               /* graph inputs, in order */
    size_t n_inputs, cap_inputs;
    int32_t *outputs;              /* graph outputs, in order */
    size_t n_outputs, cap_outputs;
    gir_attrs meta;
    /* name -> value index (open addressing, see graph.c) */
    gir_name_slot *vindex;
    size_t vindex_cap;
    /* node name -> node index */
    gir_name_slot *nindex;
    size_t nindex_cap;
};

gir_status gir_graph_new(gir_graph **out, gir_error *err);
/* A deep copy of src: values, nodes, attributes and metadata copied, tensor
 * data shared (references). */
gir_status gir_graph_clone(const gir_graph *src, gir_graph **out, gir_error *err);
/* Rebuilds the name indices after values or nodes were removed or moved
 * (E_DUPLICATE when two share a name). */
gir_status gir_graph_reindex(gir_graph *g, gir_error *err);
/* Makes every tensor of g (values' data, tensor attributes and metadata)
 * owned (gir_tensor_own): the graph no longer needs the files it was read
 * from. */
gir_status gir_graph_own_tensors(gir_graph *g, gir_error *err);

/* Adds a value; E_DUPLICATE if the name exists.  Returns its index in *idx. */
gir_status gir_graph_add_value(gir_graph *g, const char *name, gir_value_kind kind, int32_t *idx,
                               gir_error *err);
int32_t gir_graph_value_index(const gir_graph *g, const char *name);
/* A fresh name derived from base not used by any value ("base", "base_1",
 * ...), in g's arena; NULL with GIR_E_NOMEM in err when out of memory (or
 * when base is NULL: a caller's name that could not be made). */
const char *gir_graph_unique_value_name(gir_graph *g, const char *base, gir_error *err);
/* The same among node names. */
const char *gir_graph_unique_node_name(gir_graph *g, const char *base, gir_error *err);

/* Adds a node with n_in inputs (all -1) and n_out output slots (all -1).
 * E_DUPLICATE if a node of that name exists. */
gir_status gir_graph_add_node(gir_graph *g, const char *name, gir_op op, size_t n_in, size_t n_out,
                              gir_node **out, gir_error *err);
int32_t gir_graph_node_index(const gir_graph *g, const char *name);
/* Creates an INTERMEDIATE value named name for output k of node and links it. */
gir_status gir_node_make_output(gir_graph *g, gir_node *n, size_t k, const char *name, gir_error *err);
/* Links an existing value as output k of node (sets its producer). */
gir_status gir_node_set_output(gir_graph *g, gir_node *n, size_t k, int32_t value, gir_error *err);
/* Every input and output index of n is -1 (omitted) or names a value of g
 * (inputs checked first); does not name the node in err (callers do). */
gir_status gir_node_check_refs(const gir_graph *g, const gir_node *n, gir_error *err);
gir_status gir_graph_add_input(gir_graph *g, int32_t value, gir_error *err);
gir_status gir_graph_add_output(gir_graph *g, int32_t value, gir_error *err);
/* Resizes a node's input array (new slots are -1). */
gir_status gir_node_resize_inputs(gir_graph *g, gir_node *n, size_t n_in, gir_error *err);

/* Renames value (is_node false) or node idx; E_DUPLICATE when the name is
 * taken by another. */
gir_status gir_graph_rename(gir_graph *g, bool is_node, int32_t idx, const char *name, gir_error *err);

/* Makes a constant value holding t (takes a reference). */
gir_status gir_graph_add_const(gir_graph *g, const char *name, gir_tensor *t, int32_t *idx, gir_error *err);
/* gir_graph_add_const under the name fmt makes, or that name with a number
 * when it is taken (gir_graph_unique_value_name); drops the caller's
 * reference to t whatever happens. */
gir_status gir_graph_add_const_named(gir_graph *g, gir_tensor *t, int32_t *idx, gir_error *err, const char *fmt, ...)
    GIR_PRINTF(5, 6);
/* Sets a value's data (takes a reference), dtype and shape from the tensor. */
void gir_value_set_data(gir_value *v, gir_tensor *t);

/* Notes: what a reader changed in form but not in meaning, or had to
 * decide (a random fill seeded, a memory plan ignored).  Appended to the
 * graph metadata "notes" (STRINGS); graphconv prints them. */
#define GIR_META_NOTES "notes"
gir_status gir_graph_note(gir_graph *g, gir_error *err, const char *fmt, ...) GIR_PRINTF(3, 4);
/* Node meta a reader sets on a node it keeps verbatim: why it has no
 * canonical form ("act_type=rrelu with its mask output read"); writers
 * that refuse the node quote it. */
#define GIR_META_OPAQUE_WHY "opaque.why"
/* That reason, or NULL. */
const char *gir_node_opaque_why(const gir_node *n);
gir_status gir_graph_vnote(gir_graph *g, gir_error *err, const char *fmt, va_list ap);

/* ---- attribute lists ------------------------------------------------------ */

/* Setters replace an attribute of the same name.  Strings and arrays are
 * copied into the graph's arena.  Like every fallible function here, they
 * record what failed in err (out of memory, naming the attribute). */
gir_status gir_attrs_set_int(gir_graph *g, gir_attrs *a, const char *name, int64_t v, gir_error *err);
gir_status gir_attrs_set_bool(gir_graph *g, gir_attrs *a, const char *name, bool v, gir_error *err);
gir_status gir_attrs_set_float(gir_graph *g, gir_attrs *a, const char *name, double v, gir_error *err);
gir_status gir_attrs_set_string(gir_graph *g, gir_attrs *a, const char *name, const char *v, gir_error *err);
gir_status gir_attrs_set_ints(gir_graph *g, gir_attrs *a, const char *name, const int64_t *v, size_t n, gir_error *err);
gir_status gir_attrs_set_floats(gir_graph *g, gir_attrs *a, const char *name, const double *v, size_t n, gir_error *err);
gir_status gir_attrs_set_strings(gir_graph *g, gir_attrs *a, const char *name, const char *const *v, size_t n, gir_error *err);
gir_status gir_attrs_set_tensor(gir_graph *g, gir_attrs *a, const char *name, gir_tensor *t, gir_error *err);
/* Sets *src as it is, nothing copied: its name and any text or array it
 * points to must live as long as the graph (string literals, static
 * tables, g's arena).  For readers that make many attributes with fixed
 * names.  A tensor gains a reference. */
gir_status gir_attrs_put(gir_graph *g, gir_attrs *a, const gir_attr *src, gir_error *err);
/* gir_attrs_put of n attributes with distinct names; into an empty list in
 * one step (a block of n items). */
gir_status gir_attrs_put_list(gir_graph *g, gir_attrs *a, const gir_attr *src, size_t n, gir_error *err);
/* Makes room for n more attributes at once (one block, no growing). */
gir_status gir_attrs_reserve(gir_graph *g, gir_attrs *a, size_t n, gir_error *err);
/* n strings as a STRINGS attribute stores them: the pointers and the texts
 * in one block of arena (NULL entries become ""); NULL when out of memory. */
const char **gir_arena_strings(gir_arena *arena, const char *const *v, size_t n);
/* Copies one attribute (from any graph) into a. */
gir_status gir_attrs_copy_attr(gir_graph *g, gir_attrs *a, const gir_attr *src, gir_error *err);
/* Copies every attribute of src (from any graph) into dst, in order. */
gir_status gir_attrs_copy(gir_graph *g, gir_attrs *dst, const gir_attrs *src, gir_error *err);
bool gir_attrs_remove(gir_attrs *a, const char *name);
const gir_attr *gir_attrs_find(const gir_attrs *a, const char *name);
void gir_attrs_free(gir_attrs *a); /* drops tensor references; the array is the arena's */

/* Typed getters with a default when absent; the "ok" flag, when given, is
 * cleared if present with the wrong type. */
int64_t gir_attrs_get_int(const gir_attrs *a, const char *name, int64_t dflt);
double gir_attrs_get_float(const gir_attrs *a, const char *name, double dflt);
const char *gir_attrs_get_string(const gir_attrs *a, const char *name, const char *dflt);
/* Returns the list length, or -1 when absent or not INTS. */
ptrdiff_t gir_attrs_get_ints(const gir_attrs *a, const char *name, const int64_t **v);
ptrdiff_t gir_attrs_get_floats(const gir_attrs *a, const char *name, const double **v);
bool gir_attr_equal(const gir_attr *x, const gir_attr *y);

/* Shorthands on a node's attributes. */
#define gir_node_int(n, name, d) gir_attrs_get_int(&(n)->attrs, (name), (d))
#define gir_node_float(n, name, d) gir_attrs_get_float(&(n)->attrs, (name), (d))
#define gir_node_string(n, name, d) gir_attrs_get_string(&(n)->attrs, (name), (d))

static inline gir_value *gir_in(const gir_graph *g, const gir_node *n, size_t i)
{
    return (i < n->n_in && n->in[i] >= 0) ? g->values[n->in[i]] : NULL;
}
static inline gir_value *gir_out(const gir_graph *g, const gir_node *n, size_t i)
{
    return (i < n->n_out && n->out[i] >= 0) ? g->values[n->out[i]] : NULL;
}

#endif
