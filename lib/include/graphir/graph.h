#ifndef GRAPHIR_GRAPH_H
#define GRAPHIR_GRAPH_H

/* The graph IR, read-only view for library users.
 *
 * A graph holds values (tensors on edges: graph inputs, weights, constants
 * and intermediate results) and nodes (an operator applied to input values,
 * producing output values).  Handles are owned by the graph: they stay valid
 * until gir_graph_free.
 */

#include "status.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gir_graph gir_graph;
typedef struct gir_node gir_node;
typedef struct gir_value gir_value;
typedef struct gir_tensor gir_tensor;
typedef struct gir_attr gir_attr;

typedef enum gir_value_kind {
    GIR_VALUE_INPUT = 0,    /* fed by the caller at run time */
    GIR_VALUE_WEIGHT,       /* a named parameter (has data once params are read) */
    GIR_VALUE_CONST,        /* constant data that belongs to the graph itself */
    GIR_VALUE_INTERMEDIATE  /* produced by a node */
} gir_value_kind;

typedef enum gir_attr_type {
    GIR_ATTR_INT = 0,
    GIR_ATTR_FLOAT,
    GIR_ATTR_BOOL,
    GIR_ATTR_STRING,
    GIR_ATTR_INTS,
    GIR_ATTR_FLOATS,
    GIR_ATTR_STRINGS,
    GIR_ATTR_TENSOR
} gir_attr_type;

/* Frees a graph and everything it owns (drops its tensor references); NULL
 * is allowed.  Handles obtained from it become invalid. */
GIR_API void gir_graph_free(gir_graph *g);

/* The graph's name ("" when it has none). */
GIR_API const char *gir_graph_name(const gir_graph *g);
/* The number of nodes, and node i (0 <= i < count, in the graph's order;
 * NULL out of range). */
GIR_API size_t gir_graph_node_count(const gir_graph *g);
GIR_API const gir_node *gir_graph_node(const gir_graph *g, size_t i);
/* The number of values (inputs, weights, constants, intermediates), value i
 * (NULL out of range), and the value of a name (NULL when none). */
GIR_API size_t gir_graph_value_count(const gir_graph *g);
GIR_API const gir_value *gir_graph_value(const gir_graph *g, size_t i);
GIR_API const gir_value *gir_graph_find_value(const gir_graph *g, const char *name);
/* The graph's inputs and outputs in order: counts, and input or output i
 * (NULL out of range).  Inputs may include weights that a format lists as
 * inputs (they have data). */
GIR_API size_t gir_graph_input_count(const gir_graph *g);
GIR_API const gir_value *gir_graph_input(const gir_graph *g, size_t i);
GIR_API size_t gir_graph_output_count(const gir_graph *g);
GIR_API const gir_value *gir_graph_output(const gir_graph *g, size_t i);
/* Graph metadata ("source.format", "producer", format extras). */
GIR_API size_t gir_graph_meta_count(const gir_graph *g);
GIR_API const gir_attr *gir_graph_meta(const gir_graph *g, size_t i);

/* The node's name, unique among the graph's nodes. */
GIR_API const char *gir_node_name(const gir_node *n);
/* Canonical operator name ("Conv"), or for an opaque node the name it has
 * in its source format ("tvm_op"). */
GIR_API const char *gir_node_op(const gir_node *n);
GIR_API bool gir_node_is_opaque(const gir_node *n);
/* For an opaque node, the format it came from ("tvm"); NULL otherwise. */
GIR_API const char *gir_node_opaque_format(const gir_node *n);
GIR_API size_t gir_node_input_count(const gir_node *n);
/* NULL for an omitted optional input. */
GIR_API const gir_value *gir_node_input(const gir_node *n, size_t i);
GIR_API size_t gir_node_output_count(const gir_node *n);
GIR_API const gir_value *gir_node_output(const gir_node *n, size_t i);
GIR_API size_t gir_node_attr_count(const gir_node *n);
GIR_API const gir_attr *gir_node_attr(const gir_node *n, size_t i);
GIR_API const gir_attr *gir_node_find_attr(const gir_node *n, const char *name);

/* A value's name (unique among the graph's values), kind, element type
 * (GIR_DT_UNKNOWN when the model does not say) and shape (rank -1 or
 * dimensions -1 when unknown). */
GIR_API const char *gir_value_name(const gir_value *v);
GIR_API gir_value_kind gir_value_get_kind(const gir_value *v);
GIR_API gir_dtype gir_value_dtype(const gir_value *v);
GIR_API const gir_shape *gir_value_shape(const gir_value *v);
/* Name of a symbolic dimension ("batch"), or NULL. */
GIR_API const char *gir_value_dim_name(const gir_value *v, int axis);
/* The data of a weight or constant, or NULL: a borrowed reference that the
 * graph holds (gir_tensor_ref to keep it beyond the graph). */
GIR_API gir_tensor *gir_value_tensor(const gir_value *v);

/* An attribute's name and type; the getters below read its value (a getter
 * of another type gives 0, NULL or an empty list). */
GIR_API const char *gir_attr_name(const gir_attr *a);
GIR_API gir_attr_type gir_attr_get_type(const gir_attr *a);
GIR_API int64_t gir_attr_int(const gir_attr *a);          /* INT and BOOL */
GIR_API double gir_attr_float(const gir_attr *a);
GIR_API const char *gir_attr_string(const gir_attr *a);
GIR_API size_t gir_attr_list_len(const gir_attr *a);       /* INTS/FLOATS/STRINGS */
GIR_API const int64_t *gir_attr_ints(const gir_attr *a);
GIR_API const double *gir_attr_floats(const gir_attr *a);
GIR_API const char *const *gir_attr_strings(const gir_attr *a);
GIR_API gir_tensor *gir_attr_tensor(const gir_attr *a);

/* Tensors: reference counted; data is loaded lazily from the file it was
 * read from, so inspecting a graph never touches the weights. */
GIR_API gir_dtype gir_tensor_dtype(const gir_tensor *t);
GIR_API const gir_shape *gir_tensor_shape(const gir_tensor *t);
GIR_API uint64_t gir_tensor_nbytes(const gir_tensor *t);
/* Loads the data if needed; it stays valid until gir_tensor_unload or the
 * last reference is dropped.  Little-endian, row-major. */
GIR_API gir_status gir_tensor_load(gir_tensor *t, const void **data, gir_error *err);
/* Frees loaded data of a lazily loaded tensor (it reloads on demand). */
GIR_API void gir_tensor_unload(gir_tensor *t);
GIR_API gir_tensor *gir_tensor_ref(gir_tensor *t);
GIR_API void gir_tensor_unref(gir_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
