/* Legalization for a target format: rewrite what the target cannot express
 * with patterns written once in canonical operators, so one pattern serves
 * every format that lacks the primitive.
 *
 * The target says what it can express through a plan function (a writer's
 * own checks, run without writing).  For every node it refuses, the
 * patterns registered for the node's op are tried in registry order, each
 * on a copy of the graph; nodes a rewrite makes that the target refuses in
 * turn are legalized the same way (a pattern is not used twice down one
 * chain, and chains are at most GIR_LEGAL_DEPTH deep, so patterns cannot
 * undo each other).  A rewrite is kept only when the target then refuses
 * less than before.  What no pattern fixes stays as it was: the writer
 * refuses it as it always did. */
#ifndef GIR_LEGALIZE_H
#define GIR_LEGALIZE_H

#include "edit.h"

#define GIR_LEGAL_DEPTH 4

/* What a target can express of a graph. */
typedef struct gir_plan {
    size_t n_nodes;
    char **why;     /* per node: NULL when expressible as it is, else the reason (malloc'd) */
    size_t n_bad;   /* nodes with a reason */
    size_t n_other; /* refusals about values or the whole graph */
} gir_plan;

void gir_plan_free(gir_plan *p);
/* Fills p (zeroed by the caller) for g; an error only when planning itself
 * fails (the writer's options, memory). */
typedef gir_status (*gir_plan_fn)(void *ctx, const gir_graph *g, gir_plan *p, gir_error *err);

/* A rewrite of one canonical op form into other canonical ops. */
typedef struct gir_pattern {
    const char *name; /* "hardsigmoid-as-clip" */
    gir_op op;        /* the op it rewrites; GIR_OP_COUNT_: any canonical op */
    const char *note; /* what users read: "HardSigmoid as Mul+Add+Clip" */
    /* Rewrites node rw->node of rw->g (n) through rw (ending with
     * gir_rw_done or gir_edit_fold).  GIR_E_UNSUPPORTED, with nothing
     * edited, when the pattern does not apply to this node (attribute
     * values, unknown shapes); err then says why.  The rewrite must compute
     * exactly what n computes. */
    gir_status (*apply)(gir_rw *rw, const gir_node *n, gir_error *err);
} gir_pattern;

/* The registry (patterns.c): NULL past the end. */
const gir_pattern *gir_pattern_at(size_t i);
size_t gir_pattern_count(void);
/* Applies pattern p to node `node` of g alone, committing the edit: for
 * tests and tools. */
gir_status gir_pattern_apply(gir_graph *g, const gir_pattern *p, int32_t node, gir_error *err);
const gir_pattern *gir_pattern_find(const char *name);

typedef struct gir_legal_report {
    size_t *applied;  /* per registry pattern: nodes rewritten by it (gir_pattern_count entries) */
    char *tried;      /* "Op: pattern (what it left); ..." for refused nodes where a pattern was
                       * tried and did not help, or NULL */
} gir_legal_report;

void gir_legal_report_free(gir_legal_report *r);

/* Legalizes *g in place for the target planned by plan(ctx): *g may be
 * replaced by a rewritten graph (the old one freed).  rep (zeroed by the
 * caller) says what was done. */
gir_status gir_legalize(gir_graph **g, gir_plan_fn plan, void *ctx, gir_legal_report *rep, gir_error *err);

#endif
