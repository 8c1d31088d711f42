/* Editing a graph in place, the one piece of code every rewrite goes
 * through (legalization patterns, constant folding): replace a node by a
 * small subgraph of canonical nodes, add constants, turn outputs into
 * constants, remove what became dead; then put the graph back in shape
 * (each replacement where its node was, topological order, unique names,
 * indices, normalised attributes, inferred shapes).
 *
 *   gir_edit *e;
 *   gir_edit_begin(g, &e, err);
 *   gir_rw rw;
 *   gir_edit_rewrite(e, node_index, &rw);          // replace one node
 *   int32_t k; gir_rw_scalar(&rw, GIR_DT_F32, 0.5, &k, err);
 *   gir_node *m; gir_rw_node(&rw, GIR_OP_Mul, (int32_t[]){ x, k }, 2, 1, &m, err);
 *   gir_rw_done(&rw, &m->out[0], err);              // m's output replaces the node's
 *   gir_edit_commit(e, err);                        // compacts, sorts, infers
 *
 * After any failure the graph is half edited: work on a copy
 * (gir_graph_clone) and throw it away. */
#ifndef GIR_EDIT_H
#define GIR_EDIT_H

#include "core/ir.h"

typedef struct gir_edit gir_edit;

/* One node being replaced. */
typedef struct gir_rw {
    gir_edit *e;
    gir_graph *g;
    int32_t node;       /* index of the node replaced */
    size_t first_new;   /* g->n_nodes when the rewrite began */
} gir_rw;

gir_status gir_edit_begin(gir_graph *g, gir_edit **out, gir_error *err);
/* Every value becomes a candidate for dead-code removal (simplify), not
 * only those the edits orphaned. */
void gir_edit_sweep_all(gir_edit *e);
/* Applies the edits (see the file comment) and frees e.  Nodes whose
 * outputs nobody reads are removed when a removal made them so (or always,
 * with gir_edit_sweep_all), except opaque and side-effect nodes. */
gir_status gir_edit_commit(gir_edit *e, gir_error *err);
void gir_edit_free(gir_edit *e);
/* Nodes the edit created and removed so far. */
size_t gir_edit_created(const gir_edit *e);
size_t gir_edit_removed(const gir_edit *e);

/* Starts replacing node `node` (not yet replaced). */
void gir_edit_rewrite(gir_edit *e, int32_t node, gir_rw *rw);
/* A new constant (data copied; NULL data: zeros), named after the node. */
gir_status gir_rw_const(gir_rw *rw, gir_dtype dt, const gir_shape *shape, const void *data, int32_t *out,
                        gir_error *err);
/* A rank-0 constant of dtype dt (float or integer types) holding v. */
gir_status gir_rw_scalar(gir_rw *rw, gir_dtype dt, double v, int32_t *out, gir_error *err);
/* A 1-D int64 constant (shapes, axes). */
gir_status gir_rw_ints(gir_rw *rw, const int64_t *v, size_t n, int32_t *out, gir_error *err);
/* A new canonical node reading in[0..n_in) (-1: omitted), with n_out new
 * intermediate outputs; attributes are set on (*out)->attrs by the caller. */
gir_status gir_rw_node(gir_rw *rw, gir_op op, const int32_t *in, size_t n_in, size_t n_out, gir_node **out,
                       gir_error *err);
/* A one-input, one-output node; its output value index in *out. */
gir_status gir_rw_unary(gir_rw *rw, gir_op op, int32_t in, gir_node **node, int32_t *out, gir_error *err);
/* A two-input, one-output node. */
gir_status gir_rw_binary(gir_rw *rw, gir_op op, int32_t a, int32_t b, gir_node **node, int32_t *out,
                         gir_error *err);
/* A Reshape of value v to the shape dims[0..rank) (its "shape" attribute). */
gir_status gir_rw_reshape(gir_rw *rw, int32_t v, const int64_t *dims, size_t rank, int32_t *out, gir_error *err);
/* A copy of node n (its operator and attributes, from any graph) reading
 * in[0..n_in), with n_out new outputs: for a rewrite that keeps the node
 * and changes its inputs or a few attributes. */
gir_status gir_rw_copy(gir_rw *rw, const gir_node *n, const int32_t *in, size_t n_in, size_t n_out, gir_node **out,
                       gir_error *err);
/* Ends the replacement: outs[k] (a value made by this rewrite, or any other
 * value) takes the place of the node's output k, which keeps its name.
 * The node is removed at commit. */
gir_status gir_rw_done(gir_rw *rw, const int32_t *outs, gir_error *err);

/* Replaces node `node` by constants: its output k becomes a constant
 * holding outs[k] (a reference is taken), keeping its name; kind WEIGHT
 * when as_weight, else CONST. */
gir_status gir_edit_fold(gir_edit *e, int32_t node, gir_tensor *const *outs, bool as_weight, gir_error *err);

#endif
