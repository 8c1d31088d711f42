/* Resource limits on what one input may make the library do: nesting
 * depth, counts, the bytes of tensors made while reading, decompressed
 * sizes and the elements a run computes.  Each has a default that no real
 * model reaches and an option (a common reader option and a graphconv flag
 * of the same name) that raises it.
 *
 * A read runs inside a scope (gir_limits_enter/leave, gir_load does it):
 * the core functions that make nodes, attributes and tensors count what
 * they make on this thread against the scope's limits, and the parsers
 * take their depth and sizes from it.  Outside a scope the defaults hold
 * for depth and sizes and nothing is counted. */
#ifndef GIR_LIMITS_H
#define GIR_LIMITS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

typedef enum gir_limit_id {
    GIR_LIM_DEPTH,        /* max-depth: nesting of JSON and protobuf text */
    GIR_LIM_NODES,        /* max-nodes: nodes of one graph */
    GIR_LIM_TENSORS,      /* max-tensors: tensors made while reading */
    GIR_LIM_ATTRS,        /* max-attrs: attributes set while reading */
    GIR_LIM_WEIGHT_BYTES, /* max-weight-bytes: bytes of the tensors made while reading */
    GIR_LIM_UNZIP_BYTES,  /* max-unzip-bytes: decompressed bytes of an archive */
    GIR_LIM_RUN_ELEMENTS, /* max-run-elements: elements one run of the runtime computes */
    GIR_LIM_COUNT_
} gir_limit_id;

typedef struct gir_limits {
    uint64_t v[GIR_LIM_COUNT_];
} gir_limits;

/* A scope's limits and what it has counted so far. */
typedef struct gir_limit_scope {
    gir_limits lim;
    uint64_t tensors, weight_bytes, attrs;
    bool attrs_over; /* an attribute was refused (its setter can only say "out of memory") */
    struct gir_limit_scope *prev;
} gir_limit_scope;

/* The option name ("max-nodes") and the default of a limit. */
const char *gir_limit_name(gir_limit_id id);
uint64_t gir_limit_default(gir_limit_id id);
void gir_limits_default(gir_limits *l);
/* The limit in force on this thread: the innermost scope's, else the default. */
uint64_t gir_limit(gir_limit_id id);

void gir_limits_enter(gir_limit_scope *s, const gir_limits *l);
void gir_limits_leave(gir_limit_scope *s);

/* The end of a message about limit id: "(limit max-depth=256; raise it
 * with --max-depth=N or -I max-depth=N)"; GIR_LIMIT_HINT_ARGS(id) are its
 * printf arguments. */
#define GIR_LIMIT_HINT "(limit %s=%" PRIu64 "; raise it with --%s=N or -I %s=N)"
#define GIR_LIMIT_HINT_ARGS(id) gir_limit_name(id), gir_limit(id), gir_limit_name(id), gir_limit_name(id)

/* Fails with GIR_E_LIMIT: the message fmt... followed by the limit in
 * force and how to raise it. */
gir_status gir_limit_fail(gir_error *err, gir_limit_id id, const char *fmt, ...) GIR_PRINTF(3, 4);

/* Counting, inside a scope (no-ops outside): a graph reaching n nodes, a
 * new attribute, a new tensor of nbytes. */
gir_status gir_limit_nodes(uint64_t n, gir_error *err);
gir_status gir_limit_attr(gir_error *err);
/* After a failed read: when the failure was an attribute over the limit,
 * err says so (the setters report it as out of memory). */
void gir_limit_explain(gir_error *err);
gir_status gir_limit_tensor(uint64_t nbytes, gir_error *err);

#endif
