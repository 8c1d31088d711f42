/* Constant folding on the reference runtime: a node whose inputs are all
 * constants (weights or constants the graph holds, not graph inputs) is
 * evaluated and its outputs become constants of the same names (weights
 * when it read a weight); Shape of a value whose shape is known becomes
 * its dimensions.  A result is never larger than the constants it was
 * computed from, or than a small limit (GIR_FOLD_LIMIT bytes): folding
 * never inflates a model.  Side-effect, generator and opaque nodes stay. */
#ifndef GIR_FOLD_H
#define GIR_FOLD_H

#include "edit.h"

#define GIR_FOLD_LIMIT (16u << 10)
#define GIR_FOLD_MAX_OUTPUTS 8

/* Folds node `node` of g through edit e if it can (*folded says whether). */
gir_status gir_fold_node(gir_edit *e, gir_graph *g, int32_t node, uint64_t limit, bool *folded, gir_error *err);
/* Folds every foldable node of g (in topological order, so chains fold
 * whole) and removes every node and value nothing reads any more. */
gir_status gir_fold_constants(gir_graph *g, uint64_t limit, size_t *n_folded, gir_error *err);

#endif
