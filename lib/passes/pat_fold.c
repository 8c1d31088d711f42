/* Legalization by constant folding: what the target refuses because an
 * operand is computed from constants (a BatchNormalization scale read
 * through an Identity of an initializer, a shape through a Shape chain),
 * or a node that computes only from constants, becomes a constant. */
#include "patterns.h"

#include <stdlib.h>

#include "fold.h"
#include "passes.h"

/* Folds node rw->node and every node of its input cone that computes from
 * constants alone, in topological order. */
static gir_status fold_cone(gir_rw *rw, const gir_node *n, gir_error *err)
{
    gir_graph *g = rw->g;
    bool *in_cone = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *in_cone);
    int32_t *stack = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *stack), *order = NULL;
    if (!in_cone || !stack) {
        free(in_cone);
        free(stack);
        return gir_nomem(err);
    }
    size_t sp = 0;
    in_cone[rw->node] = true;
    stack[sp++] = rw->node;
    while (sp) {
        const gir_node *m = g->nodes[stack[--sp]];
        for (size_t k = 0; k < m->n_in; k++) {
            const gir_value *v = gir_in(g, m, k);
            if (v && v->producer >= 0 && !in_cone[v->producer]) {
                in_cone[v->producer] = true;
                stack[sp++] = v->producer;
            }
        }
    }
    gir_status st = gir_topo_order(g, &order, err);
    size_t folded = 0;
    for (size_t i = 0; !st && i < g->n_nodes; i++) {
        bool f = false;
        if (in_cone[order[i]])
            st = gir_fold_node(rw->e, g, order[i], GIR_FOLD_LIMIT, &f, err);
        folded += f;
    }
    free(in_cone);
    free(stack);
    free(order);
    (void)n;
    if (!st && !folded)
        return gir_pat_skip(err, "no constant operands to fold");
    return st;
}

GIR_PATTERN(fold_constants, "fold-constants", GIR_OP_COUNT_, "constant operands folded", fold_cone);
