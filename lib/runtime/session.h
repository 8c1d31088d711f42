/* The executor's session, shared by exec.c (sessions, the memory plan,
 * running) and fuse.c (which following nodes a kernel computes too).
 * Private to lib/runtime. */
#ifndef GIR_RUNTIME_SESSION_H
#define GIR_RUNTIME_SESSION_H

#include "graphir/runtime.h"
#include "rt.h"

enum { RV_CONST, RV_INPUT, RV_INTER };

typedef struct rt_value {
    rt_tensor t;
    int kind;
    int uses;       /* consumer occurrences, +1 for a graph output */
    int remaining;  /* plan-time countdown of uses */
    int buf;        /* intermediate: buffer index (-1 before planning) */
    size_t off;     /* byte offset of its data in the buffer (a Concat slot) */
    int alias;      /* value whose data this one is (views of constants/inputs), or -1 */
    int32_t consumer; /* a node reading it (the only one when uses == 1), or -1 */
    bool is_output;
    bool produced;  /* plan-time: has a producer run (or is a const/input) */
    gir_tensor *fed; /* RV_INPUT: the tensor of the next run (a reference) */
    gir_tensor *src; /* RV_CONST: the graph's tensor (a reference) */
    bool we_loaded; /* the session loaded src's data (unloaded on free) */
    bool dropped;   /* unloaded while planning: every reader packed it */
    bool needed;    /* plan-time: a reader reads its data at run time */
    int pending;    /* plan-time: reader slots not yet prepared */
    void *folded;   /* computed once while planning (its producer is folded) */
    int32_t cat_node; /* every reader is a Concat: the one it may be computed into, or -1 */
    int32_t cat_idx;  /* its input slot there */
    bool placed;      /* plan-time: computed into that slot */
} rt_value;

typedef struct rt_node {
    const gir_node *n;
    const rt_kernel *k;
    rt_call call;
    bool skip; /* fused into an earlier node */
    int32_t host; /* skip: the node whose kernel computes it */
    bool folded; /* every input constant: run once while planning, not at run */
    uint64_t prof_ns; /* profiling: summed run time */
    int grp_buf; /* Concat: plan-time buffer its inputs are computed into, or -1 */
} rt_node;

typedef struct rt_buffer {
    size_t cap;
    void *p;
    int refs; /* plan-time: live values in it */
} rt_buffer;

struct gir_session {
    const gir_graph *g;
    gir_threads *th;
    rt_value *vals;
    rt_node *nodes;   /* indexed like g->nodes */
    int32_t *order;   /* topological order of node indices */
    size_t n_order;
    int32_t *inputs;  /* values to feed, in order */
    size_t n_inputs;
    rt_buffer *bufs;
    size_t n_bufs, cap_bufs;
    int *free_bufs;
    size_t n_free;
    void *scratch;
    size_t scratch_bytes;
    bool planned;
    bool keep;
    bool consts_fed; /* a constant was overridden since the last plan */
    gir_shape *planned_shapes; /* per value: shapes the plan was made for (inputs) */
    gir_tensor **results;
    size_t n_results;
    void *stream;
    char **warnings; /* of the last run */
    size_t n_warnings, cap_warnings;
    bool profiling;
    uint64_t max_elements; /* the max-run-elements limit */
    uint64_t prof_runs;
};

/* The value whose storage v uses (following views of constants/inputs). */
static inline int32_t storage_of(const gir_session *s, int32_t vi)
{
    while (s->vals[vi].alias >= 0)
        vi = s->vals[vi].alias;
    return vi;
}

/* Value vi holds constant data while planning: a weight, a folded value,
 * or a view of one. */
static inline bool value_const(const gir_session *s, int32_t vi)
{
    const rt_value *v = &s->vals[storage_of(s, vi)];
    return (v->kind == RV_CONST && !v->fed) || v->folded;
}

/* The only consumer of value vi (read through one input slot), or -1. */
static inline int32_t sole_consumer(const gir_session *s, int32_t vi)
{
    const rt_value *v = &s->vals[vi];
    return v->uses == 1 && !v->is_output ? v->consumer : -1;
}

/* Decides fusions for node rn before it is planned (fuse.c). */
void rt_plan_fusion(gir_session *s, rt_node *rn);
/* The residual value of the Add fused into rn; *add_node is that Add. */
int32_t rt_fused_residual(const gir_session *s, const rt_node *rn, int32_t *add_node);
/* Gives back the nodes fused into rn and clears its epilogue. */
void rt_undo_fusion(gir_session *s, rt_node *rn);

#endif
