/* The RelayViz reader's context, shared by read.c (evaluation, the graph)
 * and read_parse.c (parsing and checking the node list: fields,
 * references, kinds, cycles, bindings).  Internal to lib/formats/relayviz. */
#ifndef GIR_RELAYVIZ_READ_H
#define GIR_RELAYVIZ_READ_H

#include "relayviz.h"

typedef enum kind { K_VAR, K_FUNCTION, K_CALL, K_OP, K_CONST, K_BIND, K_TUPLE, K_LET, K_IF, K_TGI, K_COUNT } kind;

typedef struct rnode {
    kind k;
    const gir_json *j;
    const char *name;          /* Var name, Op name, Call's op given as a string */
    gir_dtype dtype;           /* Var, Const */
    gir_shape shape;           /* Var */
    const char *dim_names[GIR_MAX_RANK];
    int32_t a, b, c;           /* body; op; variable/value/body; cond/then/else; tuple; expr */
    int64_t index;             /* TupleGetItem */
    int32_t *list;             /* params, args, fields, bind values */
    size_t n_list;
    const char **keys;         /* Bind keys */
    const gir_json *attrs;     /* Op's or Call's attrs object */
    gir_tensor *data;          /* Const */
    int32_t bound_to, bound_by;
    int32_t value;             /* Var: its graph value once it is a parameter */
} rnode;

typedef enum vkind { V_NONE = 0, V_TENSOR, V_TUPLE, V_CALL } vkind;

typedef struct rval {
    vkind k;
    int32_t t;                 /* tensor or call index */
    size_t n;
    const struct rval *items;  /* V_TUPLE */
} rval;

typedef struct rtensor {
    int32_t call, out;         /* produced by output out of call, or call -1 */
    int32_t leaf;              /* Var or Const node, or -1 */
    int32_t value;             /* graph value once built, or -1 */
    uint32_t uses;
} rtensor;

typedef struct rcall {
    int32_t id;
    const char *op;
    rv_attrs attrs;
    int32_t *args;
    size_t n_args;
    int32_t *arity;            /* per Relay argument: -1 a tensor, k a tuple of k */
    size_t n_relay;
    bool tuple_arg;
    bool returns_tuple;
    int64_t tuple_n;
    int32_t *outs;
    size_t n_outs, cap_outs;
    bool used_plain, used_tuple;
    int32_t bias_call;         /* nn.bias_add folded into this call, or -1 */
    int32_t fused_into;        /* this nn.bias_add was folded into that call, or -1 */
    int32_t trans[2];          /* nn.dense: transpose calls folded into arguments 0, 1 (-1: none) */
    int32_t absorbed_by;       /* this transpose was folded into that nn.dense, or -1 */
    bool dead;                 /* nothing uses its result */
} rcall;

struct rv_reader_s {
    gir_graph *g;
    const gir_json_doc *doc;
    gir_arena scratch;
    rnode *nodes;
    size_t n;
    int32_t root;
    bool function_root;
    rval *vals;
    rtensor *tensors;
    size_t n_tensors, cap_tensors;
    rcall *calls;
    size_t n_calls, cap_calls;
    const rv_params *params;
    int64_t batch;             /* option batch-size, or 0 */
    gir_error *err;
};

typedef struct rv_reader_s rv_reader;

/* Fails with a message about node id, located at v (or the node). */
gir_status rvr_node_fail(rv_reader *r, gir_status code, int32_t id, const gir_json *v, const char *field,
                         const char *fmt, ...) GIR_PRINTF(6, 7);

/* A shape: a list of dimensions, each a non-negative integer, -1 (unknown)
 * or a string (a symbolic dimension).  null: unknown rank. */
gir_status rvr_shape_value(rv_reader *r, int32_t id, const gir_json *v, const char *where, gir_shape *s,
                           const char **dim_names);

gir_status rvr_parse_node(rv_reader *r, int32_t id);

gir_status rvr_check_kinds(rv_reader *r);

gir_status rvr_check_cycles(rv_reader *r);

gir_status rvr_collect_bindings(rv_reader *r);

#endif
