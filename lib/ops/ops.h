/* The canonical operator table (internal). */
#ifndef GIR_OPS_H
#define GIR_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* How gir_normalize fills an absent DEFAULTED list attribute. */
typedef enum gir_attr_fill {
    GIR_FILL_NONE = 0, /* a scalar default (i, f or s) */
    GIR_FILL_SPATIAL,  /* INTS: the value i once per spatial axis (strides, dilations) */
    GIR_FILL_PADS,     /* INTS: the value i twice per spatial axis, only when auto_pad is NOTSET */
    GIR_FILL_KERNEL    /* INTS: the spatial dimensions of the weight W (Conv kernel_shape) */
} gir_attr_fill;

/* Value constraint of an INT attribute, or of every element of INTS. */
typedef enum gir_attr_range {
    GIR_RANGE_ANY = 0,
    GIR_RANGE_BOOL,     /* 0 or 1 */
    GIR_RANGE_POSITIVE, /* >= 1 */
    GIR_RANGE_NONNEG    /* >= 0 */
} gir_attr_range;

typedef struct gir_attr_schema {
    const char *name;
    gir_attr_type type;
    gir_attr_presence presence;
    /* Default for DEFAULTED attributes: i for INT/BOOL, f for FLOAT, s for
     * STRING; a list default is described by `fill` (and i) and written as
     * text in `doc`. */
    int64_t i;
    double f;
    const char *s;
    const char *doc;       /* one line: meaning, range, list defaults */
    gir_attr_fill fill;
    gir_attr_range range;
    const char *const *choices; /* STRING: the allowed values (NULL-terminated), or NULL */
} gir_attr_schema;

struct gir_graph;
struct gir_node;

typedef struct gir_op_info {
    const char *name;
    const char *category;
    unsigned min_in, max_in, min_out, max_out;
    const gir_attr_schema *attrs; /* terminated by a row with name NULL */
    size_t n_attrs;               /* rows of attrs before the terminator */
    const char *doc;              /* one line */
    /* Sets dtype and shape of every output from the inputs and attributes
     * (unknown dims propagate as -1); fails on inconsistent shapes.  Call it
     * through gir_op_infer, which checks arity and attributes first. */
    gir_status (*infer)(struct gir_graph *g, struct gir_node *n, gir_error *err);
    /* Input and output names in order, comma-separated: "X, W, B?"; a '?'
     * suffix marks an optional operand, "..." a variadic one. */
    const char *inputs;
    const char *outputs;
} gir_op_info;

const gir_op_info *gir_op_get(gir_op op);
/* GIR_OP_OPAQUE when the name is not a canonical op. */
gir_op gir_op_from_name(const char *name);
const char *gir_op_name(gir_op op);
/* The schema row of an op's attribute, or NULL. */
const gir_attr_schema *gir_op_attr_schema(gir_op op, const char *name);

/* Attribute names are equal.  They are compared often: gir_normalize
 * names canonical attributes with their schema row's text, so against
 * schema names the pointers usually decide, and the first two bytes rule
 * most other pairs out without a call (many names share the first one:
 * num_filter, num_group, no_bias). */
static inline bool gir_attr_name_eq(const char *a, const char *b)
{
    return a == b || (a[0] == b[0] && (!a[0] || (a[1] == b[1] && (!a[1] || strcmp(a + 2, b + 2) == 0))));
}

/* The row of schema rows (an op's attrs) named name, or NULL: searched from
 * row from to the end, then from the first row.  Walking an attribute list
 * in schema order, pass the row after the one found last, and each search
 * ends at its first row. */
static inline const gir_attr_schema *gir_attr_schema_find(const gir_attr_schema *rows, const gir_attr_schema *from,
                                                          const char *name)
{
    for (const gir_attr_schema *a = from; a->name; a++)
        if (gir_attr_name_eq(a->name, name))
            return a;
    for (const gir_attr_schema *a = rows; a != from; a++)
        if (gir_attr_name_eq(a->name, name))
            return a;
    return NULL;
}
/* Name of input (or output) i of op ("W"; "inputs" for a variadic list)
 * into buf; "?" when op has no such operand. */
const char *gir_op_operand_name(gir_op op, bool output, size_t i, char *buf, size_t n);
/* "int", "floats", ... */
const char *gir_attr_type_name(gir_attr_type t);

/* Checks a canonical node against its table row: input and output counts,
 * required operands present, attributes known, of the schema's type, within
 * range and among the allowed strings, required ones present.  Opaque nodes
 * pass.  Does not name the node in err (callers do). */
gir_status gir_op_check_node(const struct gir_graph *g, const struct gir_node *n, gir_error *err);
/* gir_op_check_node, then the op's inference; on failure err names the node.
 * Opaque nodes are left alone. */
gir_status gir_op_infer(struct gir_graph *g, struct gir_node *n, gir_error *err);
/* The op's inference alone, for a node gir_op_check_node has passed (as
 * validation does for every node); on failure err names the node. */
gir_status gir_op_infer_checked(struct gir_graph *g, struct gir_node *n, gir_error *err);

#endif
