/* The format plugin interface (internal).  A format is one constant
 * gir_format in lib/formats/<name>/ and one line in registry.c. */
#ifndef GIR_FORMAT_H
#define GIR_FORMAT_H

#include <stdarg.h>

#include "core/ir.h"
#include "core/limits.h"
#include "graphir/model.h"

/* How the mapping engine converts an attribute of a plain row. */
typedef enum gir_attr_conv {
    GIR_CONV_CODE = 0, /* not by the engine: the row's code does, the note says how */
    GIR_CONV_INT,      /* an integer, renamed; the format's value dflt when absent */
    GIR_CONV_FLOAT,    /* a number, renamed; the format's value dflt when absent */
} gir_attr_conv;

/* One attribute of a mapped operator: format name <-> canonical name. */
typedef struct gir_attr_map {
    const char *format_attr;    /* name in the format, or NULL (canonical only) */
    const char *canonical_attr; /* canonical attribute, or NULL (format only) */
    const char *note;           /* conversion, default, refused values */
    gir_attr_conv conv;         /* plain rows: how the engine converts it */
    double dflt;                /* the format's value when the attribute is absent */
} gir_attr_map;

/* A list of gir_attr_map rows with its terminator: GIR_ATTR_LIST
 * initialises an array, GIR_ATTRS is one in place (a table row's attrs). */
#define GIR_ATTR_LIST(...) { __VA_ARGS__, { NULL, NULL, NULL } }
#define GIR_ATTRS(...) ((const gir_attr_map[])GIR_ATTR_LIST(__VA_ARGS__))

/* How the engine reaches one node's attributes in a format: get reads
 * format attribute key of the node being read (dflt when absent; an
 * error naming the attribute when malformed), put sets it on the node
 * being written (is_default: the value is the format's default, for
 * formats that leave those out).  ctx is the format's. */
typedef struct gir_attr_io {
    void *ctx;
    gir_status (*get)(void *ctx, const char *key, gir_attr_conv conv, double dflt, int64_t *i, double *f,
                      gir_error *err);
    gir_status (*put)(void *ctx, const char *key, gir_attr_conv conv, int64_t i, double f, bool is_default,
                      gir_error *err);
} gir_attr_io;

/* Directions of a row; GIR_MAP_PREFER marks the row a writer picks for
 * its canonical op when the node does not come from another of the op's
 * rows (see gir_map_write_name). */
enum { GIR_MAP_READ = 1, GIR_MAP_WRITE = 2, GIR_MAP_PREFER = 4 };

/* One row of a format's operator mapping: the one table type of every
 * format, which `graphconv ops --format F` prints.  Tables end with a row
 * whose format_op is NULL.
 *
 * A row is plain in the directions `plain` names: there the format
 * operator with exactly n_in inputs, taken in order, and one output is the
 * canonical operator, its attributes renamed and converted as the attrs
 * rows say (gir_attr_conv), and the mapping engine (gir_map_*) runs the
 * row: a reader finds it by the format's operator name, a writer
 * by the canonical op (after the cases its code writes otherwise, such as
 * a fused form), and neither keeps a table of its own for them.  In the
 * other directions the format's code maps the operator (the row's attrs
 * and note say how). */
typedef struct gir_op_map {
    const char *format_op;
    gir_op op;                  /* canonical op (GIR_OP_OPAQUE: kept opaque) */
    unsigned dir;               /* GIR_MAP_READ | GIR_MAP_WRITE */
    const gir_attr_map *attrs;  /* terminated by {NULL, NULL, NULL}; may be NULL */
    const char *note;
    unsigned plain;             /* directions the engine runs (0: code only) */
    unsigned n_in;              /* the input count where plain */
    const void *impl;           /* the format's own data for a composite row (its reader's function, ...) */
} gir_op_map;

/* A row of a format operator of one input and no attributes that is the
 * canonical GIR_OP_<op>, plain both ways. */
#define GIR_MAP_UNARY(name, op)                                                                             \
    { name, GIR_OP_##op, GIR_MAP_READ | GIR_MAP_WRITE, NULL, NULL, GIR_MAP_READ | GIR_MAP_WRITE, 1 }

/* The plain row of tab that reads format operator name, or NULL. */
const gir_op_map *gir_map_read_row(const gir_op_map *tab, const char *format_op);
/* The plain row of tab that writes op: the one named source (the
 * operator the node was read from, may be NULL) when there is one, else
 * the first; NULL when tab writes op by code or not at all. */
const gir_op_map *gir_map_write_row(const gir_op_map *tab, gir_op op, const char *source);
/* The canonical attributes of a plain row's operator, into dst (an
 * arena list of g), from the format attributes io->get reads. */
gir_status gir_map_read_attrs(const gir_op_map *row, const gir_attr_io *io, gir_graph *g, gir_attrs *dst,
                              gir_error *err);
/* The format attributes of a plain row written from node n (its canonical
 * attributes, the op table's defaults for those absent) through io->put. */
gir_status gir_map_write_attrs(const gir_op_map *row, const gir_attr_io *io, const gir_node *n, gir_error *err);
/* The format attribute names of a row's attrs, NULL-terminated, into keys
 * (room for max, the terminator included); false when they do not fit. */
bool gir_map_keys(const gir_op_map *row, const char **keys, size_t max);

/* The name a writer gives op among all its rows that write it, plain or
 * not: the row named source when there is one (a round trip keeps the
 * spelling), else the row marked GIR_MAP_PREFER, else the first; NULL
 * when no row writes op. */
const gir_op_map *gir_map_write_name(const gir_op_map *tab, gir_op op, const char *source);

typedef struct gir_option_doc {
    const char *key;
    const char *doc;
} gir_option_doc;

struct gir_unsupported;

typedef struct gir_format {
    const char *name;              /* "nnvm", "mxnet", "tvm", "nnabla", ... */
    const char *description;
    const char *const *extensions; /* NULL-terminated, with the dot */
    /* Score 0..100 that the file is this format, from its first bytes (up to
     * GIR_PROBE_BYTES; n may be smaller) and its path. 0 = certainly not. */
    int (*probe)(const unsigned char *head, size_t n, const char *path);
    gir_status (*read)(const char *path, const gir_options *opts, gir_graph **out, gir_error *err);
    gir_status (*write)(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err);
    /* Planning: the writer's own checks without writing anything.  Every
     * node (gir_unsupported_add with its name) or value
     * (gir_unsupported_add_value) the format cannot express as it is goes
     * to u, with the reason; the return is an error that is not such a
     * refusal (options, memory).  write refuses exactly what plan lists.
     * NULL: the format says nothing ahead (no legalization for it). */
    gir_status (*plan)(const gir_graph *g, const gir_options *opts, struct gir_unsupported *u, gir_error *err);
    const gir_op_map *ops;
    const gir_option_doc *read_options;  /* NULL-key terminated, may be NULL */
    const gir_option_doc *write_options;
} gir_format;

#define GIR_PROBE_BYTES 4096

/* The record of a format whose plugin.c defines the static extensions,
 * probe, read_options and write_options, and whose folder exports
 * PREFIX_read, PREFIX_write, PREFIX_plan and the table PREFIX_ops. */
#define GIR_FORMAT_PLUGIN(nm, desc, prefix)                                                                   \
    { .name = nm, .description = desc, .extensions = extensions, .probe = probe, .read = prefix##_read,      \
      .write = prefix##_write, .plan = prefix##_plan, .ops = prefix##_ops, .read_options = read_options,   \
      .write_options = write_options }

/* A binary min-heap of int32 (h with room for every entry, *n of them in
 * it): Kahn's algorithm with the lowest ready index first, by which the
 * ONNX reader and the LightNet writer order nodes. */
static inline void gir_heap_push(int32_t *h, size_t *n, int32_t x)
{
    size_t i = (*n)++;
    for (; i && h[(i - 1) / 2] > x; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = x;
}

static inline int32_t gir_heap_pop(int32_t *h, size_t *n)
{
    int32_t top = h[0], x = h[--*n];
    size_t i = 0;
    for (size_t c; (c = 2 * i + 1) < *n; i = c) {
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (x <= h[c])
            break;
        h[i] = h[c];
    }
    h[i] = x;
    return top;
}

const gir_format *gir_format_find(const char *name);
const gir_format *gir_format_at(size_t i);

/* Options common to every format (params, batch-size, allow-opaque, force,
 * max-bytes). */
extern const gir_option_doc gir_common_options[];
/* Checks that every key in opts is a common one or one of fmt's for that
 * direction (GIR_MAP_READ / GIR_MAP_WRITE); GIR_E_ARGUMENT otherwise. */
gir_status gir_options_check(const gir_options *opts, const gir_format *fmt, unsigned dir, gir_error *err);
bool gir_options_flag(const gir_options *opts, const char *key);
/* Parses an integer option; GIR_E_ARGUMENT when malformed. */
gir_status gir_options_int(const gir_options *opts, const char *key, int64_t dflt, int64_t *out, gir_error *err);
/* The resource limits (core/limits.h) the options max-depth, max-nodes, ...
 * set, the defaults for the others; GIR_E_ARGUMENT for a value that is
 * not a positive integer. */
gir_status gir_limits_from_options(const gir_options *opts, gir_limits *l, gir_error *err);

/* The input-shape reader option: NAME:D1,D2,...[;NAME:...], -1 for an
 * unknown dimension.  Names are copied into arena; *out is malloc'd. */
typedef struct gir_input_shape {
    const char *name;
    gir_shape shape;
    bool used;
} gir_input_shape;
gir_status gir_input_shapes_parse(const char *spec, gir_arena *arena, gir_input_shape **out, size_t *n,
                                  gir_error *err);

/* A writer's note (see gir_options_set_note_handler). */
void gir_write_note(const gir_options *opts, const char *fmt, ...) GIR_PRINTF(2, 3);
/* Progress of the save on this thread (gir_save calls begin and end):
 * writers report each tensor's bytes as they are written. */
void gir_progress_begin(const gir_options *opts, uint64_t total);
void gir_progress_add(uint64_t bytes);
void gir_progress_end(bool complete);

/* ---- the writer skeleton: opaque nodes ----------------------------------- */

/* The opaque-node policy every writer follows (model.c): a node kept
 * verbatim from this format is written back as it was read (OURS); one from
 * another format is written as a foreign operator only when the writer
 * allows it (the allow-opaque option, where the format has such a form:
 * FOREIGN); otherwise the writer refuses it, naming it (REFUSE). */
typedef enum gir_opaque_use { GIR_OPAQUE_REFUSE = 0, GIR_OPAQUE_OURS, GIR_OPAQUE_FOREIGN } gir_opaque_use;
gir_opaque_use gir_opaque_policy(const gir_node *n, const char *format, bool allow_foreign);

/* ---- collecting everything a writer cannot express ---------------------- */

/* A writer checks the whole graph first and reports every problem at once:
 * "cannot write as X: Erf (2 nodes, first 'e0'); LRN with bias=2 ..." */
typedef struct gir_unsupported gir_unsupported;
gir_unsupported *gir_unsupported_new(void);
/* what: the operator (and attribute detail) that cannot be written; node:
 * the name of the node it is about. */
void gir_unsupported_add(gir_unsupported *u, gir_status code, const char *what, const char *node);
/* The same with what formatted (printf); a failed allocation marks the
 * collector failed (gir_unsupported_failed), as any other while collecting. */
void gir_unsupported_addf(gir_unsupported *u, gir_status code, const char *node, const char *fmt, ...)
    GIR_PRINTF(4, 5);
void gir_unsupported_vaddf(gir_unsupported *u, gir_status code, const char *node, const char *fmt, va_list ap)
    GIR_PRINTF(4, 0);
/* The same about a value (a weight, an input) rather than a node. */
void gir_unsupported_add_value(gir_unsupported *u, gir_status code, const char *what, const char *value);
/* Every occurrence added, in order: its what, and *node the node's name
 * (NULL when it is about a value or nothing in particular). */
size_t gir_unsupported_event_count(const gir_unsupported *u);
const char *gir_unsupported_event(const gir_unsupported *u, size_t i, const char **node);
/* An allocation failed while collecting (the list is incomplete). */
bool gir_unsupported_failed(const gir_unsupported *u);
size_t gir_unsupported_count(const gir_unsupported *u);
/* Fails err with every collected item (code: the first item's), or OK. */
gir_status gir_unsupported_fail(gir_unsupported *u, const char *format, gir_error *err);
/* Forgets everything collected (the collector is empty again). */
void gir_unsupported_reset(gir_unsupported *u);
void gir_unsupported_free(gir_unsupported *u);

#endif
