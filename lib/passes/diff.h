/* Structural and weight comparison of two graphs (internal; the CLI's
 * `diff` and the round-trip tests use it). */
#ifndef GIR_DIFF_H
#define GIR_DIFF_H

#include "core/ir.h"

typedef struct gir_diff_options {
    bool names;   /* also compare node and value names */
    bool meta;    /* also compare format metadata (graph, node, value) */
    bool weights; /* compare weight and constant data byte for byte */
    size_t max_report; /* stop listing after this many differences (0 = 100) */
} gir_diff_options;

/* Compares a and b.  Nodes are paired by walking back from the graph
 * outputs (pairing by position), so renamed graphs still compare; nodes not
 * reachable from an output are paired by name.  Each difference is one line
 * appended to report; *count is the number of differences (0 = same). */
gir_status gir_graph_diff(const gir_graph *a, const gir_graph *b, const gir_diff_options *opt, gir_buf *report,
                          size_t *count, gir_error *err);

#endif
