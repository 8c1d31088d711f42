#ifndef GRAPHIR_EDIT_H
#define GRAPHIR_EDIT_H

/* Building and editing graphs.
 *
 *   gir_graph *g;
 *   gir_graph_create("tiny", &g, &err);
 *   gir_shape s = { 2, { 1, 4 } };
 *   gir_graph_add_input_value(g, "x", GIR_DT_F32, &s, &err);
 *   gir_graph_add_weight(g, "w", w_tensor, &err);      // takes a reference
 *   const char *in[] = { "x", "w" }, *out[] = { "y" };
 *   gir_node *n;
 *   gir_graph_add_op(g, "MatMul", "mm", in, 2, out, 1, &n, &err);
 *   gir_graph_mark_output(g, "y", &err);
 *   gir_graph_finalize(g, &err);                      // validate + infer shapes
 *
 * Values are named by the caller; the names of values and of nodes are each
 * unique in the graph.  Every gir_node * or gir_value * handed out belongs
 * to the graph and stays valid until gir_graph_free.  Strings and arrays
 * given to these functions are copied: the caller keeps its own.  After
 * edits, gir_graph_finalize checks the graph and infers its shapes again;
 * running or saving a graph that was not finalized since its last edit
 * gives what the unchecked graph says. */

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new empty graph named name (may be NULL); the caller frees it with
 * gir_graph_free. */
GIR_API gir_status gir_graph_create(const char *name, gir_graph **out, gir_error *err);
/* Renames the graph. */
GIR_API gir_status gir_graph_set_name(gir_graph *g, const char *name, gir_error *err);

/* Adds a graph input fed at run time: its dtype and shape (NULL: rank
 * unknown; -1 dimensions are unknown).  GIR_E_DUPLICATE when the name is
 * taken. */
GIR_API gir_status gir_graph_add_input_value(gir_graph *g, const char *name, gir_dtype dtype,
                                             const gir_shape *shape, gir_error *err);
/* Adds a weight holding t (the graph takes its own reference: the caller
 * still owns and unrefs t).  Its dtype and shape are t's. */
GIR_API gir_status gir_graph_add_weight(gir_graph *g, const char *name, gir_tensor *t, gir_error *err);
/* Adds a node applying the canonical operator op (see `graphconv ops`) to
 * the values named in inputs (a NULL entry: an omitted optional input) and
 * producing new values named in outputs.  Inputs must exist already.  *out
 * (may be NULL) is the node, owned by the graph.  Attributes are set with
 * gir_node_set_* afterwards; defaults are filled in by gir_graph_finalize. */
GIR_API gir_status gir_graph_add_op(gir_graph *g, const char *op, const char *name, const char *const *inputs,
                                    size_t n_inputs, const char *const *outputs, size_t n_outputs, gir_node **out,
                                    gir_error *err);
/* Makes an existing value a graph output (appended to the outputs). */
GIR_API gir_status gir_graph_mark_output(gir_graph *g, const char *name, gir_error *err);

/* The node named name as an editable handle (owned by the graph), or NULL. */
GIR_API gir_node *gir_graph_find_node_edit(gir_graph *g, const char *name);

/* Attributes of a node (replacing one of the same name).  Lists are
 * copied. */
GIR_API gir_status gir_node_set_int(gir_node *n, const char *attr, int64_t v, gir_error *err);
GIR_API gir_status gir_node_set_float(gir_node *n, const char *attr, double v, gir_error *err);
GIR_API gir_status gir_node_set_string(gir_node *n, const char *attr, const char *v, gir_error *err);
GIR_API gir_status gir_node_set_ints(gir_node *n, const char *attr, const int64_t *v, size_t len, gir_error *err);
GIR_API gir_status gir_node_set_floats(gir_node *n, const char *attr, const double *v, size_t len,
                                       gir_error *err);

/* Renames a value or a node; GIR_E_DUPLICATE when the new name is taken,
 * GIR_E_ARGUMENT when there is nothing of the old name. */
GIR_API gir_status gir_graph_rename_value(gir_graph *g, const char *old_name, const char *new_name, gir_error *err);
GIR_API gir_status gir_graph_rename_node(gir_graph *g, const char *old_name, const char *new_name, gir_error *err);
/* Sets the declared dtype and shape of a value (GIR_DT_UNKNOWN keeps the
 * dtype).  For a graph input, prefer gir_graph_set_input_shape, which
 * infers the rest of the graph again. */
GIR_API gir_status gir_graph_set_value_shape(gir_graph *g, const char *name, gir_dtype dtype, const gir_shape *shape,
                                             gir_error *err);

/* Checks the graph (operands, attributes, no cycle, unique names), fills
 * defaulted attributes and infers every shape and dtype it can.  The
 * first problem found is reported naming its node. */
GIR_API gir_status gir_graph_finalize(gir_graph *g, gir_error *err);

/* Gives graph input name the shape s and infers every shape again from
 * the inputs.  What a reader records of intermediate shapes is recomputed;
 * outputs of opaque operators become unknown. */
GIR_API gir_status gir_graph_set_input_shape(gir_graph *g, const char *name, const gir_shape *s, gir_error *err);
/* Sets the first dimension of every graph input of rank >= 1 (fed at run
 * time) to n and infers again.  A model whose constants pin the batch (a
 * Reshape to a fixed first dimension, ...) is refused with GIR_E_SHAPE
 * naming the node where the batch is lost; g is then unchanged. */
GIR_API gir_status gir_graph_set_batch_size(gir_graph *g, int64_t n, gir_error *err);
/* Applies "NAME:D0,D1,...[;NAME:...]" (the --input-shape syntax; -1 for an
 * unknown dimension) with gir_graph_set_input_shape.  g is unchanged on
 * failure. */
GIR_API gir_status gir_graph_apply_input_shapes(gir_graph *g, const char *spec, gir_error *err);

#ifdef __cplusplus
}
#endif
#endif
