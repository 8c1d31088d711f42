/* RelayViz JSON (internal to lib/formats/relayviz). */
#ifndef GIR_RELAYVIZ_H
#define GIR_RELAYVIZ_H

#include "formats/format.h"
#include "io/json.h"

extern const gir_format gir_format_relayviz;
extern const gir_op_map gir_relayviz_ops[];

gir_status gir_relayviz_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err);
gir_status gir_relayviz_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err);
/* gir_relayviz_write's checks alone, every refusal into u (see gir_format.plan). */
gir_status gir_relayviz_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err);

/* The companion .params path of a model path: "m.relayviz.json" and
 * "m.json" both give "m.params" (malloc'd). */
char *gir_relayviz_params_path(const char *path);

/* The companion .params file (TVM list format, via the NNVM plugin). */
typedef struct rv_params rv_params;
gir_status rv_params_open(const char *path, rv_params **out, gir_error *err);
/* A new reference to the tensor stored under name, or *t NULL. */
gir_status rv_params_get(const rv_params *p, const char *name, gir_tensor **t, gir_error *err);
void rv_params_free(rv_params *p);
gir_status rv_params_write(gir_outfile *f, const char *const *names, gir_tensor *const *tensors, size_t n,
                           gir_error *err);

/* A parsed JSON value through a writer (opaque attributes keep theirs),
 * and its compact text. */
void rv_json_emit(gir_json_writer *w, const gir_json *v);
gir_status rv_json_text(const gir_json *v, gir_buf *out);

/* Node and value metadata keys. */
#define RV_META_OP "relayviz.op"           /* node: the Relay op an Add came from (nn.bias_add) */
#define RV_META_ARGS "relayviz.args"       /* opaque node: inputs per Relay argument (-1: a tensor) */
#define RV_META_TUPLE "relayviz.tuple"     /* opaque node: its result is a tuple (1) */

/* ---- reading: one Relay call, mapped to canonical nodes ---------------- */

/* The attributes of a call: the Call's own "attrs" object wins over its
 * Op node's, key by key.  Either may be NULL. */
typedef struct rv_attrs {
    const gir_json *call, *op;
    int32_t call_node, op_node; /* node ids, for messages (op_node -1: none) */
    const gir_json_doc *doc;
} rv_attrs;

/* What the mapping knows of one argument tensor. */
typedef struct rv_arginfo {
    gir_dtype dtype;
    gir_shape shape;        /* rank -1: unknown */
    bool is_scalar_const;   /* a Const with one element */
    double scalar;
} rv_arginfo;

/* One Relay call as the mapping sees it. */
typedef struct rv_call_view {
    const char *op;         /* Relay operator name */
    rv_attrs attrs;
    size_t n_args;          /* tensors, after Tuple arguments are spread */
    const rv_arginfo *args;
    bool tuple_arg;         /* the call's only Relay argument was a Tuple */
    size_t n_out;           /* outputs the program uses (tuple results: index+1 of the last used) */
    int32_t bias_arg;       /* a fused nn.bias_add's bias is argument bias_arg (-1: none) */
    bool trans[2];          /* nn.dense: argument k was a transpose folded in */
} rv_call_view;

/* What a Relay call becomes: one canonical node (op, attrs, inputs as
 * argument indices or -1, n_out outputs), or nothing but an opaque node
 * when why_opaque is set (a layout, mode or attribute the canonical op
 * cannot express).  expand_in >= 0 asks for an Unsqueeze(axes [1..expand_n])
 * in front of that input (per-channel operands broadcast along axis 1). */
typedef struct rv_mapped {
    gir_op op;
    gir_attrs attrs;
    int32_t in[8];
    size_t n_in;            /* SIZE_MAX: every argument in order */
    size_t n_out;
    int32_t expand_in;
    int64_t expand_n;
    const char *meta_op;    /* RV_META_OP for the node, or NULL */
    const char *why_opaque;
} rv_mapped;

/* Fills m (m->attrs uses g's arena) or fails: GIR_E_ATTRIBUTE or
 * GIR_E_SCHEMA for malformed attributes and argument counts, with the
 * location and node id.  Unknown operators get why_opaque set. */
gir_status rv_map_call(gir_graph *g, const rv_call_view *c, rv_mapped *m, gir_error *err);
/* For operators whose result is a tuple: true, with the tuple's length in
 * *n (split's depends on its attributes: -1 when they are malformed). */
bool rv_op_returns_tuple(const char *op, const rv_attrs *a, int64_t *n);
/* Whether nn.bias_add(producer, b, axis) can be folded into the producer's
 * bias input: producer_op's output has rank 4 (conv) or 2 (dense). */
bool rv_bias_fuses(const char *producer_op, int64_t axis);
/* An attribute of a call (the Call's first, then its Op's); JSON null
 * counts as absent. */
const gir_json *rv_attr(const rv_attrs *a, const char *key);
/* Reads the integer attribute "axis" of a call (dflt when absent). */
bool rv_attr_axis(const rv_attrs *a, int64_t dflt, int64_t *axis);
/* A boolean as Relay writes one: true or false, or the integers 0 and 1. */
bool rv_json_bool(const gir_json *v, bool *out);

/* ---- an iterative depth-first walk (read_parse.c): the reader's
 * evaluation order and cycle check, the writer's node order ---------------- */

#define RV_DFS_SKIP (-2)
typedef struct rv_dfs {
    /* Successor k of node id in *to: negative when there are no more,
     * but RV_DFS_SKIP when there is none at k and there may be after it. */
    gir_status (*succ)(void *ctx, int32_t id, size_t k, int32_t *to);
    /* Called once all of id's successors are done (post order), or NULL. */
    gir_status (*done)(void *ctx, int32_t id);
    /* A successor already on the path, which is path[0..depth). */
    gir_status (*cycle)(void *ctx, const int32_t *path, size_t depth, int32_t to);
    void *ctx;
    unsigned char *state; /* per node: 0 not reached, 1 on the path, 2 done */
    int32_t *stack;
    size_t *next;
} rv_dfs;
/* Sizes the walk for n nodes (false: out of memory); rv_dfs_free frees. */
bool rv_dfs_init(rv_dfs *d, size_t n);
void rv_dfs_free(rv_dfs *d);
/* Walks from start (nothing when an earlier walk reached it); stops at the
 * first failure of a callback. */
gir_status rv_dfs_walk(rv_dfs *d, int32_t start);

/* ---- writing: one canonical node as Relay calls ------------------------ */

typedef enum rv_wattr_kind {
    RV_W_INT, RV_W_BOOL, RV_W_DOUBLE, RV_W_STRING, RV_W_NULL,
    RV_W_INTS,   /* iv[0..n) */
    RV_W_PAIRS,  /* [[iv[0], iv[1]], [iv[2], iv[3]], ...] (n pairs) */
    RV_W_JSON,   /* s is JSON text, written as is (opaque attributes) */
} rv_wattr_kind;

typedef struct rv_wattr {
    const char *key;
    rv_wattr_kind kind;
    int64_t i;
    double d;
    const char *s;
    const int64_t *iv;
    size_t n;
} rv_wattr;

typedef enum rv_warg_kind {
    RV_ARG_INPUT,       /* the node's input k */
    RV_ARG_PREV,        /* the (tensor) result of call k of this plan */
    RV_ARG_TUPLE,       /* a Tuple of the node's inputs k .. k+n-1 */
    RV_ARG_SCALAR,      /* a scalar Const d of the dtype of input 0 */
    RV_ARG_PRODUCER_IN, /* input 0 of the node producing the node's input k */
} rv_warg_kind;

typedef struct rv_warg {
    rv_warg_kind kind;
    int k;
    int n;
    double d;
} rv_warg;

#define RV_MAX_WATTRS 12

typedef struct rv_wcall {
    const char *op;
    rv_wattr attrs[RV_MAX_WATTRS];
    size_t n_attrs;
    rv_warg *args;      /* n_args arguments (points into the plan) */
    size_t n_args;
    bool tuple_result;  /* node outputs are TupleGetItem k of the result */
} rv_wcall;

typedef struct rv_wplan {
    rv_wcall calls[4];
    size_t n_calls;
    rv_warg argbuf[16];
    size_t n_argbuf;
    rv_warg *bigargs;   /* malloc'd when a node has more arguments (free it) */
    int64_t ibuf[48];   /* storage for computed integer lists */
    size_t n_ibuf;
} rv_wplan;

/* Plans the Relay calls for node n: the last call's result is the node's
 * output (or its outputs, as a tuple).  What cannot be written is added to
 * u and false returned.  allow_opaque: write other formats' opaque nodes
 * as calls of their op names. */
bool rv_plan_node(const gir_graph *g, const gir_node *n, bool allow_opaque, rv_wplan *p, gir_unsupported *u);
void rv_plan_free(rv_wplan *p);

#endif
