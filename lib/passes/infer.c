/* Shape inference over the whole graph, and the pass pipeline readers end
 * with. */
#include "passes.h"

#include <stdlib.h>

gir_status gir_infer_shapes(gir_graph *g, gir_error *err)
{
    int32_t *order;
    gir_status st = gir_topo_order(g, &order, err);
    for (size_t i = 0; st == GIR_OK && i < g->n_nodes; i++)
        st = gir_op_infer(g, g->nodes[order[i]], err);
    free(order);
    return st;
}

gir_status gir_graph_finish(gir_graph *g, gir_error *err)
{
    gir_status st = gir_normalize(g, err);
    int32_t *order = NULL;
    if (st == GIR_OK)
        st = gir_validate_order(g, &order, err);
    /* Validation checked every node against the op table and found the
     * order: infer without checking each node again. */
    for (size_t i = 0; st == GIR_OK && i < g->n_nodes; i++)
        st = gir_op_infer_checked(g, g->nodes[order[i]], err);
    free(order);
    return st;
}
