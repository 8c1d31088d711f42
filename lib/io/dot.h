/* Graphviz DOT text for any graph (internal; `graphconv draw` uses it).
 *
 * One box per operator node (canonical op name, node name, its attributes,
 * and the weights and constants it reads, summarised as name, dtype and
 * shape), one ellipse per graph input and per graph output, and one edge per
 * data flow between them labelled with the value's shape.  Opaque operators
 * are drawn dashed and red, naming their source format.  The text depends
 * only on the graph: the same graph gives the same bytes. */
#ifndef GIR_IO_DOT_H
#define GIR_IO_DOT_H

#include "core/ir.h"

typedef struct gir_dot_options {
    bool attrs;           /* list each node's attributes in its box */
    bool shapes;          /* label edges with the value's dtype-less shape */
    size_t max_attrs;     /* at most this many attribute lines (0 = 8) */
    size_t max_attr_text; /* truncate an attribute's text to this (0 = 40) */
    bool all_attrs;       /* also attributes at their schema default (hidden otherwise) */
    bool collapse;        /* draw each run of alike consecutive blocks (in topological order: the
                           * same operators wired the same way) as its first block and one box */
} gir_dot_options;

/* The defaults: attributes (not at their default) and shapes shown, 8
 * attributes of 40 chars. */
extern const gir_dot_options gir_dot_defaults;

/* Appends the DOT text of g to out.  Fails only when memory runs out. */
gir_status gir_dot_write(const gir_graph *g, const gir_dot_options *opt, gir_buf *out, gir_error *err);

#endif
