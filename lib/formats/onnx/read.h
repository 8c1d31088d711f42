/* The ONNX reader's context, shared by read.c (names, order, nodes, the
 * model) and read_const.c (constants: Constant nodes, initializers, and the
 * folding of constant operand chains that operators read as attributes).
 * Internal to lib/formats/onnx. */
#ifndef GIR_ONNX_READ_H
#define GIR_ONNX_READ_H

#include "onnx.h"

/* A constant known by name: an initializer or a Constant node's output. */
typedef struct konst {
    const char *name;
    gir_tensor *t;          /* owned reference */
    gir_tensor *t0;         /* the tensor as read (t may be a reshaped copy) */
    int32_t value;          /* IR value once materialised, else -1 */
    const Onnx__NodeProto *node; /* Constant node, or NULL for an initializer */
    const char *attr;       /* Constant's attribute (value, value_ints, ...) */
    bool data_use, operand_use;
    size_t uses;            /* node inputs and graph outputs naming it */
    int32_t input_index;    /* position among the graph inputs, or -1 */
} konst;

typedef struct reader {
    onnx_read_ctx ctx;
    const char *path;
    const gir_options *opts;
    onnx_source src;
    Onnx__ModelProto *m;
    Onnx__GraphProto *gp;
    gir_graph *g;
    int64_t opset;          /* of the default domain, 0 if not imported */
    konst *k;
    size_t nk;
    onnx_map konst_by_name;
    onnx_map producer;      /* output name -> node index */
    onnx_map input_by_name; /* graph input name -> index */
    onnx_map declared;      /* value name -> ValueInfoProto (index into decl) */
    const Onnx__ValueInfoProto **decl;
    size_t ndecl;
    onnx_map node_names;    /* explicit node names */
    bool subgraphs;         /* some attribute holds a graph */
    int32_t *order;         /* topological order of nodes */
    /* constant folding of operand chains (Shape -> Gather -> Concat ...) */
    onnx_map folded_by_name;
    gir_tensor **folded;
    size_t n_folded, cap_folded;
    bool *fold_used; /* per node: a folded operand was computed through it */
    bool *canon;     /* per node: it became a canonical node in this pass */
    bool *skip;      /* per node: only feeds folded operands; not built */
    size_t n_neg1;   /* dimensions written as dim_value -1 (Paddle2ONNX), taken as unknown */
} reader;

bool onnxr_is_default_domain(const char *d);

gir_status onnxr_meta_str(gir_graph *g, gir_attrs *a, const char *key, const char *v, gir_error *err);

/* Applies a TypeProto to a value: tensor types set dtype, shape and symbolic
 * dimension names; any other type (or element type the IR lacks) is kept
 * verbatim in the value's metadata. */
gir_status onnxr_apply_type(reader *r, gir_value *v, const Onnx__TypeProto *tp, bool merge, gir_error *err);

const Onnx__ValueInfoProto *onnxr_declared(reader *r, const char *name);

gir_status onnxr_materialise(reader *r, konst *k, int32_t *out, gir_error *err);

gir_status onnxr_ctx_constant(onnx_read_ctx *c, const char *name, gir_tensor **t, gir_error *err);

void onnxr_ctx_shape_of(onnx_read_ctx *c, const char *name, gir_dtype *dt, gir_shape *shape);

bool onnxr_ctx_replace_constant(onnx_read_ctx *c, const char *name, gir_tensor *t);

const char *onnxr_ctx_fresh_name(onnx_read_ctx *c, const char *base);

/* A Constant node's tensor, from whichever value attribute it has. */
gir_status onnxr_constant_tensor(reader *r, const Onnx__NodeProto *np, gir_tensor **out, const char **attr,
                                 gir_error *err);

#endif
