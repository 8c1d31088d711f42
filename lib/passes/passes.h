/* Graph passes every reader runs last, and the runtime and writers rely on:
 * normalisation, validation, topological order, shape inference. */
#ifndef GIR_PASSES_H
#define GIR_PASSES_H

#include "core/ir.h"

/* Checks the graph's structure: value indices in range, every value
 * produced by at most one node and intermediate values by exactly one,
 * graph inputs and outputs that exist, unique names, no cycle (the message
 * lists the nodes on one), operand counts and attributes against the op
 * table (opaque nodes are exempt from the latter).  The first problem found
 * is reported, naming its node (or value). */
gir_status gir_validate(const gir_graph *g, gir_error *err);
/* gir_validate that also hands out the topological order it found (as
 * gir_topo_order does; *order is NULL on failure). */
gir_status gir_validate_order(const gir_graph *g, int32_t **order, gir_error *err);

/* A topological order of the nodes: *order (malloc'd, g->n_nodes entries,
 * the caller frees it) lists node indices so that every node comes after
 * the producers of its inputs.  Deterministic: among ready nodes the lowest
 * index goes first, so an already sorted graph keeps its order.  Iterative.
 * GIR_E_CYCLE names the nodes of a cycle; *order is NULL on failure. */
gir_status gir_topo_order(const gir_graph *g, int32_t **order, gir_error *err);
/* gir_topo_order of a graph whose value indices are known to be in range,
 * given each value's producer node (-1 for none) as validation found them. */
gir_status gir_topo_order_prod(const gir_graph *g, const int32_t *prod, int32_t **order, gir_error *err);

/* Runs every canonical node's shape and dtype inference in topological
 * order.  Opaque nodes leave their outputs as the reader set them.  A shape
 * or dtype already set on an output must agree with the inferred one
 * (GIR_E_SHAPE / GIR_E_DTYPE naming the node and both shapes); known
 * dimensions from either side are kept. */
gir_status gir_infer_shapes(gir_graph *g, gir_error *err);

/* Makes equivalent graphs equal: fills every absent DEFAULTED attribute of
 * a canonical node with its default (spatial lists from the kernel rank,
 * Conv kernel_shape from W), widens attribute types losslessly where the
 * schema wants another (bool to int, int to float, ints to floats),
 * spells Cast's 'to' canonically, and orders attributes as the schema
 * does (unknown ones after, as they were). */
gir_status gir_normalize(gir_graph *g, gir_error *err);

/* gir_normalize, gir_validate, gir_infer_shapes: what every reader calls
 * last. */
gir_status gir_graph_finish(gir_graph *g, gir_error *err);

#endif
