/* Print (LightNet's print/fprint) for targets that have no print: the
 * printed tensor becomes a graph output, so what the model shows is what
 * the converted model returns. */
#include "patterns.h"

static bool is_graph_output(const gir_graph *g, int32_t v)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v)
            return true;
    return false;
}

/* The value printed becomes an output: an intermediate value as it is
 * (its name kept), a constant or graph input through an Identity whose
 * output is named after the Print node.  A value already an output is
 * observable as it is; the Print goes.  The message and file are lost
 * (the note says the Print became an output). */
static gir_status print_output(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x = gir_pat_in(rw, n, 0);
    if (!x)
        return gir_pat_skip(err, "Print without an input");
    int32_t v = n->in[0];
    gir_graph *g = rw->g;
    if (!is_graph_output(g, v)) {
        if (x->producer < 0) {
            gir_node *id;
            TRY(gir_rw_node(rw, GIR_OP_Identity, &v, 1, 1, &id, err));
            const char *name = gir_graph_unique_value_name(g, n->name, err);
            if (!name)
                return GIR_E_NOMEM;
            TRY(gir_graph_rename(g, false, id->out[0], name, err));
            v = id->out[0];
        }
        TRY(gir_graph_add_output(g, v, err));
    }
    int32_t none = -1;
    return gir_rw_done(rw, &none, err);
}

GIR_PATTERN(print_output, "print-as-output", GIR_OP_Print, "Print as a graph output (the target has no print)", print_output);
