/* The NNabla writer's context, shared by write.c (planning, variables,
 * executor, the files), write_ops.c (message building, the layers and
 * arithmetic, the dispatch) and write_ops_shape.c (shape and array
 * functions, LRN, comparisons, casts, opaque functions).  Internal to
 * lib/formats/nnabla. */
#ifndef GIR_NNABLA_WRITE_H
#define GIR_NNABLA_WRITE_H

#include "nnabla.h"

/* A variable the writer adds (between two functions made from one node). */
typedef struct extra_var {
    char *name;
    gir_shape shape;
    const char *const *dim_names;
} extra_var;

typedef struct wctx {
    const gir_graph *g;
    gir_error *err;
    gir_unsupported *uns;
    Nnabla__Network *net;
    size_t fn_cap;
    int32_t *uses;        /* value -> consumer slots */
    uint8_t *is_output;   /* value -> graph output */
    uint8_t *needed;      /* value -> written as a variable */
    uint8_t *transpose;   /* value -> parameter written transposed */
    uint8_t *bn_stat;     /* value -> a BatchNormalization mean or variance */
    gir_shape *wshape;    /* value -> shape to declare (rank -2: the value's own) */
    uint8_t *node_done;   /* node -> emitted with another node */
    uint8_t *emitted;     /* node -> its functions are written */
    int32_t *fuse_src;    /* node -> the node it absorbs (Gemm: Flatten; BroadcastTo's Expand: Reshape), or -1 */
    int32_t *alias;       /* value -> the value whose variable stands for it (itself unless a Cast is folded) */
    size_t *use_at;       /* value v's consumers are use_node/use_slot[use_at[v] .. use_at[v + 1]) */
    int32_t *use_node;
    uint32_t *use_slot;
    gir_tensor **owned;   /* parameter data the writer converted (bool -> float32) */
    size_t n_owned, cap_owned;
    const gir_options *opts;
    extra_var *extras;
    size_t n_extras, cap_extras;
    const gir_node *cur; /* the node being written */
    bool failed_alloc;
} wctx;

/* Frees a string field unless it is protobuf-c's shared empty default. */
void nnbw_str_free(char *s);

char *nnbw_sdup(wctx *w, const char *s);

void *nnbw_pb_new(wctx *w, const ProtobufCMessageDescriptor *d);

int64_t *nnbw_dup_ints(wctx *w, const int64_t *v, size_t n);
/* A repeated int64 field: *field a copy of v, the count returned (0 when
 * out of memory, failed_alloc set). */
size_t nnbw_set_ints(wctx *w, int64_t **field, const int64_t *v, size_t n);

Nnabla__Shape *nnbw_shape_msg(wctx *w, const int64_t *d, size_t n);

/* The value whose variable stands for v: a folded Cast makes two values
 * one variable (aliases point one way, so the walk ends). */
int32_t nnbw_root(const wctx *w, int32_t v);

const gir_value *nnbw_V(const wctx *w, int32_t idx);

/* Starts a function of the given type; its name is the node's (or what the
 * file it came from said), or "<node>/<type>" for additional functions. */
Nnabla__Function *nnbw_fn_new(wctx *w, const gir_node *n, const char *type, bool primary);

/* Value v (none when negative) onto f's inputs / outputs. */
void nnbw_fn_in(wctx *w, Nnabla__Function *f, int32_t v);
void nnbw_fn_out(wctx *w, Nnabla__Function *f, int32_t v);
/* The variable name (one the writer added) onto f's inputs / outputs, or
 * value v where name is NULL. */
void nnbw_fn_in_name(wctx *w, Nnabla__Function *f, const char *name, int32_t v);
void nnbw_fn_out_name(wctx *w, Nnabla__Function *f, const char *name, int32_t v);

/* Sets f's parameter message (by oneof field name); frees msg if f is NULL. */
void nnbw_fn_param(wctx *w, Nnabla__Function *f, const char *field, void *msg);
/* The same with a new message whose one (integer or bool) field key is v,
 * the others 0. */
void nnbw_fn_param_int(wctx *w, Nnabla__Function *f, const char *field, const char *key, int64_t v);

/* A variable the writer adds; returns its (stable) name. */
const char *nnbw_extra_variable(wctx *w, const gir_node *n, const char *suffix, const gir_shape *shape,
                                const char *const *dim_names);

void nnbw_refuse(wctx *w, const gir_node *n, gir_status code, const char *fmt, ...) GIR_PRINTF(4, 5);

bool nnbw_single_use(const wctx *w, int32_t v);

/* A constant holding one number. */
bool nnbw_scalar_const(const wctx *w, int32_t v, double *out);

int nnbw_rank(const wctx *w, int32_t v);

Nnabla__Function *nnbw_simple_fn(wctx *w, const gir_node *n, const char *type);
/* The function of node n from its first input to its first output (its
 * other operands are in the parameter message). */
Nnabla__Function *nnbw_unary_fn(wctx *w, const gir_node *n, const char *type);

/* The parameter message of nnabla's *Scalar function `type` (AddScalar,
 * RSubScalar, EqualScalar, ...): its val, and its inplace where the message
 * has one; *field is the message's field of Function.  NULL when out of
 * memory (failed_alloc set) or when `type` has no such message. */
ProtobufCMessage *nnbw_scalar_msg(wctx *w, const char *type, double val, bool inplace, const char **field);

/* The emitters of nodes: each writes node n as nnabla functions, or
 * refuses it (nnbw_refuse). */
#define NNBW_EMIT_FN(name) void name(wctx *w, const gir_node *n)

/* A *Scalar function of input x with val v (the exact double the file had,
 * when it had one); inplace as the node had it where inplace_ok. */
void nnbw_emit_scalar(wctx *w, const gir_node *n, const char *type, int32_t x, double v, bool inplace_ok);

NNBW_EMIT_FN(nnbw_emit_concat);

/* PRelu: one shared slope, or a slope (C, 1, ..., 1) per channel of axis
 * rank(x) - rank(slope), which nnabla takes as (C,) with that base_axis
 * (a Reshape of the slope first). */
NNBW_EMIT_FN(nnbw_emit_prelu);

/* ArgMax / ArgMin: Max / Min with only_index over the one axis (nnabla
 * keeps the first of equal extremes, as select_last_index=0 does). */
NNBW_EMIT_FN(nnbw_emit_arg);
NNBW_EMIT_FN(nnbw_emit_stack);
NNBW_EMIT_FN(nnbw_emit_split);
NNBW_EMIT_FN(nnbw_emit_slice);
NNBW_EMIT_FN(nnbw_emit_pad);
NNBW_EMIT_FN(nnbw_emit_tile);

void nnbw_emit_node(wctx *w, size_t ni);

void nnbw_emit_expand(wctx *w, const gir_node *n, size_t ni);

NNBW_EMIT_FN(nnbw_emit_gather);
NNBW_EMIT_FN(nnbw_emit_dropout);
NNBW_EMIT_FN(nnbw_emit_resize);
NNBW_EMIT_FN(nnbw_emit_matmul);
NNBW_EMIT_FN(nnbw_emit_opaque);

/* LRN over the channels of (N, C, H, W), spelled as nnabla's own converter
 * does: x / (bias + alpha / size * sum of x^2 over the size channels around
 * each)^beta, the sum a SumPooling over (W, C) of the channel-last square.
 * nnabla pads symmetrically, so size must be odd (ONNX pads an even size
 * one more at the end). */
NNBW_EMIT_FN(nnbw_emit_lrn);

/* A comparison; with a float32 scalar constant as its second operand, the
 * *Scalar function (val: the exact double the file had, when it had one). */
void nnbw_emit_compare(wctx *w, const gir_node *n, const char *type);

/* nnabla has no bool: a bool value is a float variable holding 0/1, so a
 * Cast between bool and float32 is the identity (folded into a neighbour
 * by plan(), else an Identity function), and a Cast of floats to bool is
 * NotEqualScalar(0). */
NNBW_EMIT_FN(nnbw_emit_cast);

/* ---- helpers and emitters shared by write.c, write_ops.c, write_ops_shape.c --- */

/* Appends p to a repeated field array (size_t *n, T **arr). */
bool nnbw_push_ptr(void ***arr, size_t *n, void *p);

bool nnbw_push_str(wctx *w, char ***arr, size_t *n, const char *s);

/* The field called name of message m (its address). */
void *nnbw_pb_field(ProtobufCMessage *m, const char *name);

/* The message of type d that meta key holds as text; NULL when it holds
 * none, or text that does not parse. */
ProtobufCMessage *nnbw_meta_msg(const gir_attrs *meta, const char *key, const ProtobufCMessageDescriptor *d);

/* The repeat ids meta records (NNB_META_REPEAT_ID), onto list. */
void nnbw_meta_repeat_ids(wctx *w, const gir_attrs *meta, char ***list, size_t *n);

const char *nnbw_vname(const wctx *w, int32_t idx);

/* Gemm -> Affine (weight in x out); a Flatten feeding only this Gemm is
 * absorbed as Affine's base_axis. */
bool nnbw_gemm_fusable_flatten(const wctx *w, const gir_node *gemm, int32_t *flatten_node, int64_t *axis);

bool nnbw_gemm_check(wctx *w, const gir_node *n, bool report);

#endif
