/* Shape and dtype inference of the canonical operators (internal to
 * lib/ops): the helpers every op family's inference uses (opinfer.c) and
 * the inference function of each row of the operator table, by family:
 * infer_nn.c (elementwise, convolution and pooling, other network layers,
 * recurrent), infer_shape.c (reductions, shape and data movement),
 * infer_lightnet.c (the operators that come from LightNet).  The runtime
 * kernels compute their output shapes in their own prepare step;
 * tests/test_shapes.c runs both on every model of the test corpus and
 * checks that they agree. */
#ifndef GIR_OPS_OPINFER_H
#define GIR_OPS_OPINFER_H

#include "core/ir.h"

#include <string.h>

/* Shape text for messages; the buffer lives until the end of the statement. */
#define SHP(s) gir_shape_str((s), (char[200]){ 0 }, 200)
#define OPN(n) gir_op_name((n)->op)

typedef long long ll;

/* A shape with the symbolic names of its dimensions. */
typedef struct ish {
    gir_shape s;
    const char *nm[GIR_MAX_RANK];
} ish;

static inline void ish_unknown(ish *o)
{
    memset(o, 0, sizeof *o);
    o->s.rank = -1;
}

static inline void ish_rank(ish *o, int r)
{
    memset(o, 0, sizeof *o);
    o->s.rank = r;
    for (int i = 0; i < r; i++)
        o->s.dims[i] = -1;
}

/* Appends dimension d (named nm) to o. */
static inline void ish_push(ish *o, int64_t d, const char *nm)
{
    o->s.dims[o->s.rank] = d;
    o->nm[o->s.rank] = nm;
    o->s.rank++;
}

static inline bool mul_ok(int64_t a, int64_t b, int64_t *o) { return !__builtin_mul_overflow(a, b, o); }
static inline bool add_ok(int64_t a, int64_t b, int64_t *o) { return !__builtin_add_overflow(a, b, o); }

/* The typed getters' rules (gir_attrs_get_*) on an attribute found. */
static inline ptrdiff_t ints_of(const gir_attr *a, const int64_t **v)
{
    *v = NULL;
    if (!a || a->type != GIR_ATTR_INTS)
        return -1;
    *v = a->u.ints.v;
    return (ptrdiff_t)a->u.ints.n;
}

static inline int64_t int_of(const gir_attr *a, int64_t dflt)
{
    return a && (a->type == GIR_ATTR_INT || a->type == GIR_ATTR_BOOL) ? a->u.i : dflt;
}

static inline const char *string_of(const gir_attr *a, const char *dflt)
{
    return a && a->type == GIR_ATTR_STRING ? a->u.s : dflt;
}

void oi_ish_of(const gir_value *v, ish *o);
/* Input i (oi_input) and its shape (oi_ish_of). */
gir_status oi_input_shape(const gir_graph *g, const gir_node *n, size_t i, const gir_value **v, ish *s,
                          gir_error *err);
/* Inputs 0 and 1 (oi_input), their common dtype (oi_same_dtype) and
 * their shapes: the start of every two-operand inference. */
gir_status oi_two_inputs(const gir_graph *g, const gir_node *n, const gir_value **a, const gir_value **b, gir_dtype *dt,
                         ish *as, ish *bs, gir_error *err);
/* Output k has type dt (or what it has) and a shape of unknown rank (oi_set_out). */
gir_status oi_set_unknown(gir_graph *g, gir_node *n, size_t k, gir_dtype dt, gir_error *err);
gir_status oi_rank_limit(const gir_node *n, ll r, gir_error *err);
gir_status oi_too_large(const gir_node *n, gir_error *err);
/* Product of dims [from, to) of s: -1 when one is unknown, -2 on overflow. */
int64_t oi_dims_product(const gir_shape *s, int from, int to);
gir_status oi_input(const gir_graph *g, const gir_node *n, size_t i, const gir_value **v, gir_error *err);
/* Records the inferred dtype and shape of output k.  A dtype or shape the
 * value already has (set by a reader, or by an earlier run) must agree; the
 * result keeps every dimension either side knows. */
gir_status oi_set_out(gir_graph *g, gir_node *n, size_t k, gir_dtype dt, const ish *sh, gir_error *err);
/* The common dtype of inputs [from, to); they must agree where known. */
gir_status oi_same_dtype(const gir_graph *g, const gir_node *n, size_t from, size_t to, gir_dtype *dt,
                         gir_error *err);
gir_status oi_need_dtype(const gir_node *n, const gir_value *v, size_t i, bool ok, const char *what,
                         gir_error *err);
/* Numpy (multidirectional) broadcasting of a and b. */
gir_status oi_bcast(const gir_node *n, const ish *a, const ish *b, ish *o, gir_error *err);
/* Unidirectional broadcasting: b must broadcast to target without changing it. */
gir_status oi_bcast_to(const gir_node *n, const ish *target, const ish *b, const char *what, gir_error *err);
/* Normalises axis a of a rank-r tensor ([-r, r-1], or [-r, r] when
 * inclusive) into *out. */
gir_status oi_norm_axis(const gir_node *n, const char *attr, int64_t a, int r, bool inclusive, int *out,
                        gir_error *err);
/* Marks the axes of an axes list (normalised, no duplicates) in mark[]. */
gir_status oi_axes_mask(const gir_node *n, const char *attr, const int64_t *v, ptrdiff_t len, int r, bool *mark,
                        gir_error *err);
gir_status oi_list_len(const gir_node *n, const char *attr, ptrdiff_t len, ll want, const char *why,
                       gir_error *err);
gir_status oi_need_attr(const gir_node *n, const char *attr, bool present, gir_error *err);
/* The INTS attribute attr, which n must have: *len values at *v. */
gir_status oi_need_ints(const gir_node *n, const char *attr, const int64_t **v, ptrdiff_t *len, gir_error *err);
/* Looks several attributes of n up in one walk over its list: at[k] is the
 * attribute called names[k] (the first, as gir_attrs_find), or NULL.  With
 * names in schema order, a normalised list matches each name at the first
 * or after a few misses: the search for the next name starts after the last
 * one found. */
void oi_find_attrs(const gir_node *n, const char *const *names, size_t count, const gir_attr **at);
/* Index of s in a NULL-terminated list of strings, or -1. */
int oi_choice_index(const char *const *choices, const char *s);

/* The values of auto_pad (optable.c), in the order of the padding modes. */
extern const char *const oi_ch_auto_pad[];

/* The inference of the rows of the operator table (gir_op_info.infer). */
gir_status infer_same(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Not(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Cast(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_PRelu(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_broadcast(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Pow(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_compare(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_logic(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Where(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Conv(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_ConvTranspose(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_pool(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_global_pool(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Gemm(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_MatMul(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_norm(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_softmax(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Dropout(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_reduce(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_arg(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Reshape(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Flatten(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Transpose(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Squeeze(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Unsqueeze(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Concat(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Split(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Slice(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Pad(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Tile(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Expand(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Gather(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Resize(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_space_depth(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Shape(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Print(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Sort(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_GatherBlocks(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_RangeFill(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_SqueezeDetBoxDecode(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_YoloV3Decode(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_SubMean(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_DotProduct(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Stack(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_Unstack(gir_graph *g, gir_node *n, gir_error *err);
gir_status infer_rnn(gir_graph *g, gir_node *n, gir_error *err);

#endif
