/* The canonical operator table (internal). */
#ifndef GIR_OPS_H
#define GIR_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "graphir/graph.h"

#define GIR_VARIADIC 255

typedef enum gir_op {
    GIR_OP_OPAQUE = 0, /* an operator kept verbatim from its source format */
#define GIR_OP(id, mi, ma, mo, mxo, cat) GIR_OP_##id,
#include "ops.def"
#undef GIR_OP
    GIR_OP_COUNT_
} gir_op;

typedef enum gir_attr_presence {
    GIR_ATTR_OPTIONAL = 0, /* may be absent; absence has a meaning (documented) */
    GIR_ATTR_REQUIRED,     /* must be present */
    GIR_ATTR_DEFAULTED     /* absent means the default below; normalised to present */
} gir_attr_presence;

typedef struct gir_attr_schema {
    const char *name;
    gir_attr_type type;
    gir_attr_presence presence;
    /* Default for DEFAULTED attributes: i for INT/BOOL, f for FLOAT, s for
     * STRING; a list default is written as text in `doc`. */
    int64_t i;
    double f;
    const char *s;
    const char *doc;       /* one line: meaning, range, list defaults */
} gir_attr_schema;

struct gir_graph;
struct gir_node;

typedef struct gir_op_info {
    const char *name;
    const char *category;
    unsigned min_in, max_in, min_out, max_out;
    const gir_attr_schema *attrs; /* terminated by a row with name NULL */
    const char *doc;              /* one line */
    /* Sets dtype and shape of every output from the inputs and attributes
     * (unknown dims propagate as -1); fails on inconsistent shapes. */
    gir_status (*infer)(struct gir_graph *g, struct gir_node *n, gir_error *err);
} gir_op_info;

const gir_op_info *gir_op_get(gir_op op);
/* GIR_OP_OPAQUE when the name is not a canonical op. */
gir_op gir_op_from_name(const char *name);
const char *gir_op_name(gir_op op);

#endif
