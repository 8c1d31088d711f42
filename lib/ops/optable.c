/* The canonical operator table: for every row of ops.def its attribute
 * schema, operand names, one-line documentation and shape/dtype inference.
 *
 * Each op ID has a SPEC_ID macro below (schema, doc, infer, inputs,
 * outputs); the table is generated from ops.def, so a row added there
 * without its SPEC does not compile, and a SPEC without a doc line trips a
 * _Static_assert.  tests/test_ops.c walks the whole table as well.
 *
 * Semantics are ONNX opset 13 with our rule that constant operands are
 * attributes (see ops.def). */
#include "core/ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== attribute schema rows ============================================== */

#define A_END { .name = NULL }
#define INT_D(nm, d, rng, dc) \
    { .name = nm, .type = GIR_ATTR_INT, .presence = GIR_ATTR_DEFAULTED, .i = d, .range = rng, .doc = dc }
#define INT_R(nm, rng, dc) { .name = nm, .type = GIR_ATTR_INT, .presence = GIR_ATTR_REQUIRED, .range = rng, .doc = dc }
#define INT_O(nm, rng, dc) { .name = nm, .type = GIR_ATTR_INT, .presence = GIR_ATTR_OPTIONAL, .range = rng, .doc = dc }
#define FLT_D(nm, d, dc) { .name = nm, .type = GIR_ATTR_FLOAT, .presence = GIR_ATTR_DEFAULTED, .f = d, .doc = dc }
#define FLT_O(nm, dc) { .name = nm, .type = GIR_ATTR_FLOAT, .presence = GIR_ATTR_OPTIONAL, .doc = dc }
#define STR_D(nm, d, ch, dc) \
    { .name = nm, .type = GIR_ATTR_STRING, .presence = GIR_ATTR_DEFAULTED, .s = d, .choices = ch, .doc = dc }
#define STR_R(nm, ch, dc) \
    { .name = nm, .type = GIR_ATTR_STRING, .presence = GIR_ATTR_REQUIRED, .choices = ch, .doc = dc }
#define INTS_R(nm, rng, dc) \
    { .name = nm, .type = GIR_ATTR_INTS, .presence = GIR_ATTR_REQUIRED, .range = rng, .doc = dc }
#define INTS_O(nm, rng, dc) \
    { .name = nm, .type = GIR_ATTR_INTS, .presence = GIR_ATTR_OPTIONAL, .range = rng, .doc = dc }
#define INTS_F(nm, fl, v, rng, dc)                                                                            \
    {                                                                                                          \
        .name = nm, .type = GIR_ATTR_INTS, .presence = GIR_ATTR_DEFAULTED, .fill = fl, .i = v, .range = rng, \
        .doc = dc                                                                                              \
    }
#define FLTS_O(nm, dc) { .name = nm, .type = GIR_ATTR_FLOATS, .presence = GIR_ATTR_OPTIONAL, .doc = dc }

static const char *const ch_auto_pad[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", NULL };
static const char *const ch_pad_mode[] = { "constant", "reflect", "edge", NULL };
static const char *const ch_resize_mode[] = { "nearest", "linear", "cubic", NULL };
static const char *const ch_coord_mode[] = { "half_pixel",    "pytorch_half_pixel",   "align_corners",
                                             "asymmetric",    "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                             NULL };
static const char *const ch_nearest_mode[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL };
static const char *const ch_d2s_mode[] = { "DCR", "CRD", NULL };
static const char *const ch_dtype[] = { "float32", "float64", "float16", "bfloat16", "int8",   "int16", "int32",
                                        "int64",   "uint8",   "uint16",  "uint32",   "uint64", "bool",  NULL };

#define AUTO_PAD                                                                                \
    STR_D("auto_pad", "NOTSET", ch_auto_pad,                                                    \
          "NOTSET uses pads; SAME_UPPER/SAME_LOWER pad to output = ceil(input / stride), the odd " \
          "cell at the end/start; VALID pads nothing")
#define DILATIONS \
    INTS_F("dilations", GIR_FILL_SPATIAL, 1, GIR_RANGE_POSITIVE, "kernel dilation per spatial axis (default 1 each)")
#define STRIDES \
    INTS_F("strides", GIR_FILL_SPATIAL, 1, GIR_RANGE_POSITIVE, "stride per spatial axis (default 1 each)")
#define PADS                                                                                   \
    INTS_F("pads", GIR_FILL_PADS, 0, GIR_RANGE_NONNEG,                                         \
           "padding, all begins then all ends, e.g. [top, left, bottom, right] (default 0 each; " \
           "only with auto_pad NOTSET)")
#define CEIL_MODE \
    INT_D("ceil_mode", 0, GIR_RANGE_BOOL, "1 rounds the output size up, 0 down")

static const gir_attr_schema no_attrs[] = { A_END };

static const gir_attr_schema attrs_LeakyRelu[] = {
    FLT_D("alpha", 0.01, "slope for x < 0"),
    A_END,
};
static const gir_attr_schema attrs_Elu[] = {
    FLT_D("alpha", 1.0, "scale of exp(x) - 1 for x < 0"),
    A_END,
};
static const gir_attr_schema attrs_Selu[] = {
    FLT_D("alpha", 1.67326319217681884765625, "scale of exp(x) - 1 for x <= 0"),
    FLT_D("gamma", 1.05070102214813232421875, "overall scale"),
    A_END,
};
static const gir_attr_schema attrs_HardSigmoid[] = {
    FLT_D("alpha", 0.2, "slope of the linear part"),
    FLT_D("beta", 0.5, "offset of the linear part"),
    A_END,
};
static const gir_attr_schema attrs_Clip[] = {
    FLT_O("min", "lower bound; absent means unbounded below"),
    FLT_O("max", "upper bound; absent means unbounded above"),
    A_END,
};
static const gir_attr_schema attrs_Cast[] = {
    STR_R("to", ch_dtype, "element type of the output, by name (float32, int64, bool, ...)"),
    A_END,
};
static const gir_attr_schema attrs_Mod[] = {
    INT_D("fmod", 0, GIR_RANGE_BOOL,
          "1: C fmod, result has the sign of the dividend; 0: result has the sign of the divisor"),
    A_END,
};
static const gir_attr_schema attrs_Conv[] = {
    AUTO_PAD,
    DILATIONS,
    INT_D("group", 1, GIR_RANGE_POSITIVE, "number of channel groups; divides input and output channels"),
    INTS_F("kernel_shape", GIR_FILL_KERNEL, 0, GIR_RANGE_POSITIVE,
           "kernel size per spatial axis (default: the spatial dimensions of W)"),
    PADS,
    STRIDES,
    A_END,
};
static const gir_attr_schema attrs_ConvTranspose[] = {
    AUTO_PAD,
    DILATIONS,
    INT_D("group", 1, GIR_RANGE_POSITIVE, "number of channel groups; divides input channels"),
    INTS_F("kernel_shape", GIR_FILL_KERNEL, 0, GIR_RANGE_POSITIVE,
           "kernel size per spatial axis (default: the spatial dimensions of W)"),
    INTS_F("output_padding", GIR_FILL_SPATIAL, 0, GIR_RANGE_NONNEG,
           "extra cells added at the end of each spatial axis, less than the stride (default 0 each)"),
    INTS_O("output_shape", GIR_RANGE_NONNEG,
           "spatial output size; when present the padding is derived from it (absent: computed from pads)"),
    PADS,
    STRIDES,
    A_END,
};
static const gir_attr_schema attrs_Gemm[] = {
    FLT_D("alpha", 1.0, "scale of A * B"),
    FLT_D("beta", 1.0, "scale of C"),
    INT_D("transA", 0, GIR_RANGE_BOOL, "1 transposes A before the product"),
    INT_D("transB", 0, GIR_RANGE_BOOL, "1 transposes B before the product"),
    A_END,
};
static const gir_attr_schema attrs_BatchNormalization[] = {
    FLT_D("epsilon", 1e-5, "added to the variance before the square root"),
    FLT_D("momentum", 0.9, "running-average factor, used only in training"),
    A_END,
};
static const gir_attr_schema attrs_InstanceNormalization[] = {
    FLT_D("epsilon", 1e-5, "added to the variance before the square root"),
    A_END,
};
static const gir_attr_schema attrs_LRN[] = {
    FLT_D("alpha", 0.0001, "scale of the sum of squares"),
    FLT_D("beta", 0.75, "exponent of the normaliser"),
    FLT_D("bias", 1.0, "added to the scaled sum before the exponent"),
    INT_R("size", GIR_RANGE_POSITIVE, "number of channels summed over"),
    A_END,
};
static const gir_attr_schema attrs_MaxPool[] = {
    AUTO_PAD,
    CEIL_MODE,
    DILATIONS,
    INTS_R("kernel_shape", GIR_RANGE_POSITIVE, "window size per spatial axis"),
    PADS,
    INT_D("storage_order", 0, GIR_RANGE_BOOL, "layout of the Indices output: 0 row major, 1 column major"),
    STRIDES,
    A_END,
};
static const gir_attr_schema attrs_AveragePool[] = {
    AUTO_PAD,
    CEIL_MODE,
    INT_D("count_include_pad", 0, GIR_RANGE_BOOL,
          "1 counts padding cells in the divisor, 0 divides by the valid cells only"),
    INTS_R("kernel_shape", GIR_RANGE_POSITIVE, "window size per spatial axis"),
    PADS,
    STRIDES,
    A_END,
};
static const gir_attr_schema attrs_Softmax[] = {
    INT_D("axis", -1, GIR_RANGE_ANY, "axis the normalisation runs along; negative counts from the end"),
    A_END,
};
static const gir_attr_schema attrs_Dropout[] = {
    FLT_D("ratio", 0.5, "probability of dropping an element, in [0, 1)"),
    INT_O("seed", GIR_RANGE_ANY, "random seed; absent means an arbitrary seed"),
    INT_D("training_mode", 0, GIR_RANGE_BOOL, "1 drops and rescales; 0 (inference) is the identity"),
    A_END,
};
static const gir_attr_schema attrs_Reduce[] = {
    INTS_O("axes", GIR_RANGE_ANY, "axes to reduce, negative counts from the end; absent means all axes"),
    INT_D("keepdims", 1, GIR_RANGE_BOOL, "1 keeps reduced axes with size 1, 0 removes them"),
    A_END,
};
static const gir_attr_schema attrs_ReduceSum[] = {
    INTS_O("axes", GIR_RANGE_ANY, "axes to reduce, negative counts from the end; absent means all axes"),
    INT_D("keepdims", 1, GIR_RANGE_BOOL, "1 keeps reduced axes with size 1, 0 removes them"),
    INT_D("noop_with_empty_axes", 0, GIR_RANGE_BOOL,
          "1 makes absent or empty axes the identity instead of a full reduction"),
    A_END,
};
static const gir_attr_schema attrs_Arg[] = {
    INT_D("axis", 0, GIR_RANGE_ANY, "axis to search along; negative counts from the end"),
    INT_D("keepdims", 1, GIR_RANGE_BOOL, "1 keeps the axis with size 1, 0 removes it"),
    INT_D("select_last_index", 0, GIR_RANGE_BOOL, "1 returns the last index of ties, 0 the first"),
    A_END,
};
static const gir_attr_schema attrs_Reshape[] = {
    INTS_R("shape", GIR_RANGE_ANY,
           "target shape; 0 copies the input dimension (unless allowzero), one -1 takes the remaining size"),
    INT_D("allowzero", 0, GIR_RANGE_BOOL, "1 makes a 0 in shape a literal zero-size dimension"),
    A_END,
};
static const gir_attr_schema attrs_Flatten[] = {
    INT_D("axis", 1, GIR_RANGE_ANY,
          "axes before it form the first output dimension, the rest the second; negative counts from the end"),
    A_END,
};
static const gir_attr_schema attrs_Transpose[] = {
    INTS_O("perm", GIR_RANGE_NONNEG, "output axis i is input axis perm[i]; absent means the reversed axes"),
    A_END,
};
static const gir_attr_schema attrs_Squeeze[] = {
    INTS_O("axes", GIR_RANGE_ANY, "size-1 axes to remove, negative counts from the end; absent means every size-1 axis"),
    A_END,
};
static const gir_attr_schema attrs_Unsqueeze[] = {
    INTS_R("axes", GIR_RANGE_ANY, "positions of the inserted size-1 axes in the output; negative counts from the end"),
    A_END,
};
static const gir_attr_schema attrs_Concat[] = {
    INT_R("axis", GIR_RANGE_ANY, "axis to join along; negative counts from the end"),
    A_END,
};
static const gir_attr_schema attrs_Split[] = {
    INT_D("axis", 0, GIR_RANGE_ANY, "axis to split; negative counts from the end"),
    INTS_O("split", GIR_RANGE_NONNEG, "size of each output along axis; absent means equal parts, one per output"),
    A_END,
};
static const gir_attr_schema attrs_Slice[] = {
    INTS_R("starts", GIR_RANGE_ANY, "first index per sliced axis; negative counts from the end, clamped"),
    INTS_R("ends", GIR_RANGE_ANY, "end index (exclusive) per sliced axis; negative counts from the end, clamped"),
    INTS_O("axes", GIR_RANGE_ANY, "axes that starts and ends refer to; absent means the first axes in order"),
    INTS_O("steps", GIR_RANGE_ANY, "step per sliced axis, non-zero, negative walks backwards; absent means 1 each"),
    A_END,
};
static const gir_attr_schema attrs_Pad[] = {
    INTS_R("pads", GIR_RANGE_ANY, "cells added (negative: removed), all begins then all ends, two per axis"),
    STR_D("mode", "constant", ch_pad_mode,
          "constant fills with constant_value, reflect mirrors without the edge, edge repeats the edge"),
    FLT_D("constant_value", 0.0, "fill value of constant mode"),
    A_END,
};
static const gir_attr_schema attrs_Tile[] = {
    INTS_R("repeats", GIR_RANGE_NONNEG, "number of copies per axis"),
    A_END,
};
static const gir_attr_schema attrs_Expand[] = {
    INTS_R("shape", GIR_RANGE_NONNEG, "shape the input is broadcast with (numpy rules)"),
    A_END,
};
static const gir_attr_schema attrs_Gather[] = {
    INT_D("axis", 0, GIR_RANGE_ANY, "axis of data that indices select along; negative counts from the end"),
    A_END,
};
static const gir_attr_schema attrs_Resize[] = {
    FLTS_O("roi", "region of interest, starts then ends per axis, for tf_crop_and_resize; absent means the whole input"),
    FLTS_O("scales", "scale factor per axis, output = floor(input * scale); give scales or sizes"),
    INTS_O("sizes", GIR_RANGE_NONNEG, "output size per axis; give scales or sizes"),
    STR_D("mode", "nearest", ch_resize_mode, "interpolation: nearest, linear or cubic"),
    STR_D("coordinate_transformation_mode", "half_pixel", ch_coord_mode,
          "how output coordinates map to input coordinates"),
    STR_D("nearest_mode", "round_prefer_floor", ch_nearest_mode,
          "rounding of nearest mode"),
    FLT_D("cubic_coeff_a", -0.75, "the a of cubic interpolation"),
    INT_D("exclude_outside", 0, GIR_RANGE_BOOL,
          "1 gives weights of samples outside the input zero and renormalises"),
    FLT_D("extrapolation_value", 0.0, "value outside the input for tf_crop_and_resize"),
    A_END,
};
static const gir_attr_schema attrs_DepthToSpace[] = {
    INT_R("blocksize", GIR_RANGE_POSITIVE, "side of the square block moved from channels to space"),
    STR_D("mode", "DCR", ch_d2s_mode, "channel order: DCR depth-column-row, CRD column-row-depth"),
    A_END,
};
static const gir_attr_schema attrs_SpaceToDepth[] = {
    INT_R("blocksize", GIR_RANGE_POSITIVE, "side of the square block moved from space to channels"),
    A_END,
};

/* ==== inference helpers ================================================== */

/* Shape text for messages; the buffer lives until the end of the statement. */
#define SHP(s) gir_shape_str((s), (char[200]){ 0 }, 200)
#define OPN(n) gir_op_name((n)->op)

typedef long long ll;

/* A shape with the symbolic names of its dimensions. */
typedef struct ish {
    gir_shape s;
    const char *nm[GIR_MAX_RANK];
} ish;

static void ish_unknown(ish *o)
{
    memset(o, 0, sizeof *o);
    o->s.rank = -1;
}

static void ish_rank(ish *o, int r)
{
    memset(o, 0, sizeof *o);
    o->s.rank = r;
    for (int i = 0; i < r; i++)
        o->s.dims[i] = -1;
}

static void ish_of(const gir_value *v, ish *o)
{
    if (!v || v->shape.rank < 0 || v->shape.rank > GIR_MAX_RANK) {
        ish_unknown(o);
        return;
    }
    o->s = v->shape; /* each field written once: this runs for every input */
    for (int i = 0; i < GIR_MAX_RANK; i++) {
        bool axis = i < v->shape.rank;
        if (axis && o->s.dims[i] < 0)
            o->s.dims[i] = -1;
        o->nm[i] = axis ? v->dim_names[i] : NULL;
    }
}

/* Appends dimension d (named nm) to o. */
static void ish_push(ish *o, int64_t d, const char *nm)
{
    o->s.dims[o->s.rank] = d;
    o->nm[o->s.rank] = nm;
    o->s.rank++;
}

static gir_status rank_limit(const gir_node *n, ll r, gir_error *err)
{
    if (r > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "%s output would have rank %lld, more than the maximum %d", OPN(n), r,
                        GIR_MAX_RANK);
    return GIR_OK;
}

static bool mul_ok(int64_t a, int64_t b, int64_t *o) { return !__builtin_mul_overflow(a, b, o); }
static bool add_ok(int64_t a, int64_t b, int64_t *o) { return !__builtin_add_overflow(a, b, o); }

static gir_status too_large(const gir_node *n, gir_error *err)
{
    return gir_fail(err, GIR_E_LIMIT, "%s output dimension overflows a 64-bit integer", OPN(n));
}

/* Product of dims [from, to) of s: -1 when one is unknown, -2 on overflow. */
static int64_t dims_product(const gir_shape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) {
        if (s->dims[i] < 0)
            return -1;
        if (!mul_ok(p, s->dims[i], &p))
            return -2;
    }
    return p;
}

static gir_status input(const gir_graph *g, const gir_node *n, size_t i, const gir_value **v, gir_error *err)
{
    *v = gir_in(g, n, i);
    if (!*v) {
        char nm[32];
        return gir_fail(err, GIR_E_REFERENCE, "%s input %zu (%s) is missing", OPN(n), i,
                        gir_op_operand_name(n->op, false, i, nm, sizeof nm));
    }
    return GIR_OK;
}

/* Records the inferred dtype and shape of output k.  A dtype or shape the
 * value already has (set by a reader, or by an earlier run) must agree; the
 * result keeps every dimension either side knows. */
static gir_status set_out(gir_graph *g, gir_node *n, size_t k, gir_dtype dt, const ish *sh, gir_error *err)
{
    gir_value *v = gir_out(g, n, k);
    if (!v)
        return GIR_OK; /* an omitted optional output */
    if (dt != GIR_DT_UNKNOWN && v->dtype != GIR_DT_UNKNOWN && v->dtype != dt)
        return gir_fail(err, GIR_E_DTYPE, "%s output '%s' is declared %s but inferred %s", OPN(n), v->name,
                        gir_dtype_name(v->dtype), gir_dtype_name(dt));
    if (sh->s.rank >= 0 && v->shape.rank >= 0) {
        bool agree = sh->s.rank == v->shape.rank;
        for (int i = 0; agree && i < sh->s.rank; i++)
            if (sh->s.dims[i] >= 0 && v->shape.dims[i] >= 0 && sh->s.dims[i] != v->shape.dims[i])
                agree = false;
        if (!agree)
            return gir_fail(err, GIR_E_SHAPE, "%s output '%s' is declared %s but inferred %s", OPN(n), v->name,
                            SHP(&v->shape), SHP(&sh->s));
    }
    if (dt != GIR_DT_UNKNOWN)
        v->dtype = dt;
    if (sh->s.rank < 0)
        return GIR_OK;
    if (v->shape.rank < 0) {
        v->shape = sh->s;
        for (int i = 0; i < GIR_MAX_RANK; i++)
            v->dim_names[i] = i < sh->s.rank ? sh->nm[i] : NULL;
        return GIR_OK;
    }
    for (int i = 0; i < sh->s.rank; i++) {
        if (v->shape.dims[i] < 0)
            v->shape.dims[i] = sh->s.dims[i];
        if (!v->dim_names[i])
            v->dim_names[i] = sh->nm[i];
    }
    return GIR_OK;
}

/* The common dtype of inputs [from, to); they must agree where known. */
static gir_status same_dtype(const gir_graph *g, const gir_node *n, size_t from, size_t to, gir_dtype *dt,
                             gir_error *err)
{
    *dt = GIR_DT_UNKNOWN;
    size_t first = 0;
    for (size_t i = from; i < to; i++) {
        const gir_value *v = gir_in(g, n, i);
        if (!v || v->dtype == GIR_DT_UNKNOWN)
            continue;
        if (*dt == GIR_DT_UNKNOWN) {
            *dt = v->dtype;
            first = i;
        } else if (v->dtype != *dt) {
            return gir_fail(err, GIR_E_DTYPE, "%s inputs %zu and %zu have different types %s and %s", OPN(n), first,
                            i, gir_dtype_name(*dt), gir_dtype_name(v->dtype));
        }
    }
    return GIR_OK;
}

static gir_status need_dtype(const gir_node *n, const gir_value *v, size_t i, bool ok, const char *what,
                             gir_error *err)
{
    if (v->dtype == GIR_DT_UNKNOWN || ok)
        return GIR_OK;
    char nm[32];
    return gir_fail(err, GIR_E_DTYPE, "%s input %zu (%s) must be %s, found %s", OPN(n), i,
                    gir_op_operand_name(n->op, false, i, nm, sizeof nm), what, gir_dtype_name(v->dtype));
}

/* Numpy (multidirectional) broadcasting of a and b. */
static gir_status bcast(const gir_node *n, const ish *a, const ish *b, ish *o, gir_error *err)
{
    if (a->s.rank < 0 || b->s.rank < 0) {
        ish_unknown(o);
        return GIR_OK;
    }
    int r = a->s.rank > b->s.rank ? a->s.rank : b->s.rank;
    ish t;
    ish_rank(&t, r);
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->s.rank), ib = i - (r - b->s.rank);
        int64_t da = ia >= 0 ? a->s.dims[ia] : 1, db = ib >= 0 ? b->s.dims[ib] : 1;
        const char *na = ia >= 0 ? a->nm[ia] : NULL, *nb = ib >= 0 ? b->nm[ib] : NULL;
        if (ia < 0) {
            t.s.dims[i] = db;
            t.nm[i] = nb;
        } else if (ib < 0) {
            t.s.dims[i] = da;
            t.nm[i] = na;
        } else if (da == db) {
            t.s.dims[i] = da;
            if (da >= 0)
                t.nm[i] = na ? na : nb;
            else
                t.nm[i] = na && nb && strcmp(na, nb) == 0 ? na : NULL;
        } else if (da == 1) {
            t.s.dims[i] = db;
            t.nm[i] = nb;
        } else if (db == 1) {
            t.s.dims[i] = da;
            t.nm[i] = na;
        } else if (da < 0) {
            t.s.dims[i] = db;
            t.nm[i] = nb;
        } else if (db < 0) {
            t.s.dims[i] = da;
            t.nm[i] = na;
        } else {
            return gir_fail(err, GIR_E_SHAPE, "%s cannot broadcast shapes %s and %s", OPN(n), SHP(&a->s),
                            SHP(&b->s));
        }
    }
    *o = t;
    return GIR_OK;
}

/* Unidirectional broadcasting: b must broadcast to target without changing it. */
static gir_status bcast_to(const gir_node *n, const ish *target, const ish *b, const char *what, gir_error *err)
{
    if (target->s.rank < 0 || b->s.rank < 0)
        return GIR_OK;
    bool ok = b->s.rank <= target->s.rank;
    for (int i = 0; ok && i < b->s.rank; i++) {
        int64_t db = b->s.dims[b->s.rank - 1 - i], dt = target->s.dims[target->s.rank - 1 - i];
        if (db >= 0 && db != 1 && dt >= 0 && db != dt)
            ok = false;
    }
    if (!ok)
        return gir_fail(err, GIR_E_SHAPE, "%s cannot broadcast %s %s to %s", OPN(n), what, SHP(&b->s),
                        SHP(&target->s));
    return GIR_OK;
}

/* Normalises axis a of a rank-r tensor ([-r, r-1], or [-r, r] when
 * inclusive) into *out. */
static gir_status norm_axis(const gir_node *n, const char *attr, int64_t a, int r, bool inclusive, int *out,
                            gir_error *err)
{
    int hi = inclusive ? r : r - 1;
    if (a < -(int64_t)r || a > hi)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s %s %lld is out of range for rank %d (expected %d to %d)",
                        OPN(n), attr, (ll)a, r, -r, hi);
    *out = (int)(a < 0 ? a + r : a);
    return GIR_OK;
}

/* Marks the axes of an axes list (normalised, no duplicates) in mark[]. */
static gir_status axes_mask(const gir_node *n, const char *attr, const int64_t *v, ptrdiff_t len, int r, bool *mark,
                            gir_error *err)
{
    for (int i = 0; i < GIR_MAX_RANK; i++)
        mark[i] = false;
    for (ptrdiff_t i = 0; i < len; i++) {
        int a = 0;
        TRY(norm_axis(n, attr, v[i], r, false, &a, err));
        if (mark[a])
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s %s repeats axis %d", OPN(n), attr, a);
        mark[a] = true;
    }
    return GIR_OK;
}

static gir_status list_len(const gir_node *n, const char *attr, ptrdiff_t len, ll want, const char *why,
                           gir_error *err)
{
    if (len != want)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has %td values, expected %lld (%s)", OPN(n), attr,
                        len, want, why);
    return GIR_OK;
}

static gir_status need_attr(const gir_node *n, const char *attr, bool present, gir_error *err)
{
    if (!present)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s needs attribute '%s'", OPN(n), attr);
    return GIR_OK;
}

/* Looks several attributes of n up in one walk over its list: at[k] is the
 * attribute called names[k] (the first, as gir_attrs_find), or NULL.  With
 * names in schema order, a normalised list matches each name at the first
 * or after a few misses: the search for the next name starts after the last
 * one found. */
static void find_attrs(const gir_node *n, const char *const *names, size_t count, const gir_attr **at)
{
    for (size_t k = 0; k < count; k++)
        at[k] = NULL;
    size_t next = 0;
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        for (size_t j = 0; j < count; j++) {
            size_t k = next + j < count ? next + j : next + j - count;
            if (gir_attr_name_eq(a->name, names[k])) {
                if (!at[k])
                    at[k] = a;
                next = k + 1;
                break;
            }
        }
    }
}

/* The typed getters' rules (gir_attrs_get_*) on an attribute found. */
static ptrdiff_t ints_of(const gir_attr *a, const int64_t **v)
{
    *v = NULL;
    if (!a || a->type != GIR_ATTR_INTS)
        return -1;
    *v = a->u.ints.v;
    return (ptrdiff_t)a->u.ints.n;
}

static int64_t int_of(const gir_attr *a, int64_t dflt)
{
    return a && (a->type == GIR_ATTR_INT || a->type == GIR_ATTR_BOOL) ? a->u.i : dflt;
}

static const char *string_of(const gir_attr *a, const char *dflt)
{
    return a && a->type == GIR_ATTR_STRING ? a->u.s : dflt;
}

/* Index of s in a NULL-terminated list of strings, or -1. */
static int choice_index(const char *const *choices, const char *s)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(choices[i], s) == 0)
            return i;
    return -1;
}

/* ==== elementwise ========================================================== */

static gir_status infer_same(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish s;
    ish_of(x, &s);
    return set_out(g, n, 0, x->dtype, &s, err);
}

static gir_status infer_Not(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    TRY(need_dtype(n, x, 0, x->dtype == GIR_DT_BOOL, "bool", err));
    ish s;
    ish_of(x, &s);
    return set_out(g, n, 0, GIR_DT_BOOL, &s, err);
}

static gir_status infer_Cast(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    const char *to = gir_node_string(n, "to", NULL);
    TRY(need_attr(n, "to", to != NULL, err));
    gir_dtype dt = gir_dtype_from_name(to);
    if (dt == GIR_DT_UNKNOWN)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Cast attribute 'to' is '%s', not a data type name", to);
    ish s;
    ish_of(x, &s);
    return set_out(g, n, 0, dt, &s, err);
}

static gir_status infer_PRelu(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x, *slope;
    TRY(input(g, n, 0, &x, err));
    TRY(input(g, n, 1, &slope, err));
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, 2, &dt, err));
    ish xs, ss;
    ish_of(x, &xs);
    ish_of(slope, &ss);
    TRY(bcast_to(n, &xs, &ss, "slope", err));
    return set_out(g, n, 0, dt, &xs, err);
}

/* Broadcasts every input; the output dtype is `out` or, when unknown, the
 * inputs' common dtype. */
static gir_status broadcast_all(gir_graph *g, gir_node *n, bool same_type, gir_dtype out, gir_error *err)
{
    if (n->n_in == 0)
        return gir_fail(err, GIR_E_REFERENCE, "%s has no inputs", OPN(n));
    gir_dtype dt = GIR_DT_UNKNOWN;
    if (same_type)
        TRY(same_dtype(g, n, 0, n->n_in, &dt, err));
    ish acc;
    for (size_t i = 0; i < n->n_in; i++) {
        const gir_value *v;
        TRY(input(g, n, i, &v, err));
        ish s;
        ish_of(v, &s);
        if (i == 0)
            acc = s;
        else
            TRY(bcast(n, &acc, &s, &acc, err));
    }
    if (out == GIR_DT_UNKNOWN)
        out = same_type ? dt : gir_in(g, n, 0)->dtype;
    return set_out(g, n, 0, out, &acc, err);
}

static gir_status infer_broadcast(gir_graph *g, gir_node *n, gir_error *err)
{
    return broadcast_all(g, n, true, GIR_DT_UNKNOWN, err);
}

/* Pow: base and exponent may differ in type; the result has the base's. */
static gir_status infer_Pow(gir_graph *g, gir_node *n, gir_error *err)
{
    return broadcast_all(g, n, false, GIR_DT_UNKNOWN, err);
}

static gir_status infer_compare(gir_graph *g, gir_node *n, gir_error *err)
{
    return broadcast_all(g, n, true, GIR_DT_BOOL, err);
}

static gir_status infer_logic(gir_graph *g, gir_node *n, gir_error *err)
{
    for (size_t i = 0; i < n->n_in; i++) {
        const gir_value *v;
        TRY(input(g, n, i, &v, err));
        TRY(need_dtype(n, v, i, v->dtype == GIR_DT_BOOL, "bool", err));
    }
    return broadcast_all(g, n, true, GIR_DT_BOOL, err);
}

static gir_status infer_Where(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *c, *x, *y;
    TRY(input(g, n, 0, &c, err));
    TRY(input(g, n, 1, &x, err));
    TRY(input(g, n, 2, &y, err));
    TRY(need_dtype(n, c, 0, c->dtype == GIR_DT_BOOL, "bool", err));
    gir_dtype dt;
    TRY(same_dtype(g, n, 1, 3, &dt, err));
    ish cs, xs, ys, o;
    ish_of(c, &cs);
    ish_of(x, &xs);
    ish_of(y, &ys);
    TRY(bcast(n, &cs, &xs, &o, err));
    TRY(bcast(n, &o, &ys, &o, err));
    return set_out(g, n, 0, dt, &o, err);
}

/* ==== convolution and pooling ============================================ */

/* The attributes convolution and pooling read, found in one walk over the
 * node's list (a typed getter per name would walk it once each). */
enum {
    WA_AUTO_PAD,
    WA_CEIL_MODE,
    WA_DILATIONS,
    WA_GROUP,
    WA_KERNEL_SHAPE,
    WA_OUTPUT_PADDING,
    WA_OUTPUT_SHAPE,
    WA_PADS,
    WA_STRIDES,
    WA_COUNT_
};
static const char *const window_attr_names[WA_COUNT_] = {
    [WA_AUTO_PAD] = "auto_pad",         [WA_CEIL_MODE] = "ceil_mode",         [WA_DILATIONS] = "dilations",
    [WA_GROUP] = "group",               [WA_KERNEL_SHAPE] = "kernel_shape",   [WA_OUTPUT_PADDING] = "output_padding",
    [WA_OUTPUT_SHAPE] = "output_shape", [WA_PADS] = "pads",                   [WA_STRIDES] = "strides",
};

/* auto_pad, in the order of ch_auto_pad. */
typedef enum pad_mode { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } pad_mode;

/* The window parameters of a convolution or pooling node. */
typedef struct window {
    const gir_attr *at[WA_COUNT_]; /* by WA_*, NULL when absent */
    int r; /* spatial rank */
    int64_t k[GIR_MAX_RANK], s[GIR_MAX_RANK], d[GIR_MAX_RANK], pb[GIR_MAX_RANK], pe[GIR_MAX_RANK];
    pad_mode pad;
    bool ceil_mode;
} window;

static void window_attrs(const gir_node *n, window *w)
{
    find_attrs(n, window_attr_names, WA_COUNT_, w->at);
}

/* Reads INTS attribute `attr` (w->at[which]) with `want` values, each >=
 * minv, into out; absent gives dflt everywhere. */
static inline gir_status window_list(const gir_node *n, const window *w, int which, int want, const char *why,
                                     int64_t minv, int64_t dflt, int64_t *out, gir_error *err)
{
    const char *attr = window_attr_names[which];
    const int64_t *v;
    ptrdiff_t len = ints_of(w->at[which], &v);
    if (len < 0) {
        for (int i = 0; i < want; i++)
            out[i] = dflt;
        return GIR_OK;
    }
    TRY(list_len(n, attr, len, want, why, err));
    for (int i = 0; i < want; i++) {
        if (v[i] < minv)
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has value %lld, expected %lld or more", OPN(n),
                            attr, (ll)v[i], (ll)minv);
        out[i] = v[i];
    }
    return GIR_OK;
}

/* Reads strides, dilations (when the op has them), pads, auto_pad and
 * ceil_mode for r spatial axes (window_attrs found them).  Kernel sizes are
 * the caller's. */
static gir_status window_read(const gir_node *n, int r, bool has_dilations, window *w, gir_error *err)
{
    int64_t pads[2 * GIR_MAX_RANK];
    w->r = r;
    TRY(window_list(n, w, WA_STRIDES, r, "one per spatial axis", 1, 1, w->s, err));
    if (has_dilations)
        TRY(window_list(n, w, WA_DILATIONS, r, "one per spatial axis", 1, 1, w->d, err));
    else
        for (int i = 0; i < r; i++)
            w->d[i] = 1;
    TRY(window_list(n, w, WA_PADS, 2 * r, "begins then ends of each spatial axis", 0, 0, pads, err));
    for (int i = 0; i < r; i++) {
        w->pb[i] = pads[i];
        w->pe[i] = pads[r + i];
    }
    const char *auto_pad = string_of(w->at[WA_AUTO_PAD], "NOTSET");
    int mode = choice_index(ch_auto_pad, auto_pad);
    if (mode < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'auto_pad' is '%s', expected NOTSET, SAME_UPPER, "
                        "SAME_LOWER or VALID", OPN(n), auto_pad);
    w->pad = (pad_mode)mode;
    if (w->pad == PAD_VALID)
        for (int i = 0; i < r; i++)
            w->pb[i] = w->pe[i] = 0;
    w->ceil_mode = int_of(w->at[WA_CEIL_MODE], 0) != 0;
    return GIR_OK;
}

static bool is_same_pad(const window *w) { return w->pad == PAD_SAME_UPPER || w->pad == PAD_SAME_LOWER; }

/* Output extent of a sliding window along spatial axis i (-1 when unknown). */
static gir_status window_out(const gir_node *n, const window *w, int i, int64_t in, int64_t *out, gir_error *err)
{
    *out = -1;
    if (in < 0)
        return GIR_OK;
    int64_t s = w->s[i];
    if (is_same_pad(w)) {
        *out = in / s + (in % s != 0);
        return GIR_OK;
    }
    if (w->k[i] < 0)
        return GIR_OK;
    int64_t ek, padded;
    if (!mul_ok(w->k[i] - 1, w->d[i], &ek) || !add_ok(ek, 1, &ek) || !add_ok(in, w->pb[i], &padded) ||
        !add_ok(padded, w->pe[i], &padded))
        return too_large(n, err);
    if (padded < ek)
        return gir_fail(err, GIR_E_ATTRIBUTE,
                        "%s kernel extent %lld on spatial axis %d is larger than the padded input extent %lld",
                        OPN(n), (ll)ek, i, (ll)padded);
    int64_t span = padded - ek, o = span / s + 1;
    if (w->ceil_mode && span % s != 0) {
        o++;
        /* The last window must start inside the input or its begin padding. */
        int64_t lim = in + w->pb[i]; /* (o - 1) * s >= lim, without overflow */
        if (lim == 0 || o - 1 > (lim - 1) / s)
            o--;
    }
    *out = o;
    return GIR_OK;
}

/* Spatial rank from the ranks of X and W and the length of kernel_shape. */
static gir_status conv_rank(const gir_node *n, const ish *xs, const ish *ws, ptrdiff_t nk, int *r, gir_error *err)
{
    *r = -1;
    if (xs->s.rank >= 0) {
        if (xs->s.rank < 3)
            return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 3 or more (batch, channels, spatial axes), "
                            "found %s", OPN(n), SHP(&xs->s));
        *r = xs->s.rank - 2;
    }
    if (ws && ws->s.rank >= 0) {
        if (ws->s.rank < 3 || (*r >= 0 && ws->s.rank - 2 != *r))
            return gir_fail(err, GIR_E_SHAPE, "%s weight W %s does not match input X %s (expected rank %d)",
                            OPN(n), SHP(&ws->s), SHP(&xs->s), *r >= 0 ? *r + 2 : 3);
        *r = ws->s.rank - 2;
    }
    if (nk >= 0) {
        if (nk > GIR_MAX_RANK - 2)
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'kernel_shape' has %td values, more than the %d "
                            "spatial axes a tensor can have", OPN(n), nk, GIR_MAX_RANK - 2);
        if (nk == 0 || (*r >= 0 && nk != *r))
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'kernel_shape' has %td values, expected %d (one per "
                            "spatial axis)", OPN(n), nk, *r >= 0 ? *r : 1);
        *r = (int)nk;
    }
    return GIR_OK;
}

/* Kernel sizes: kernel_shape if present (it must agree with W), else W's. */
static gir_status conv_kernel(const gir_node *n, const ish *ws, window *w, gir_error *err)
{
    const int64_t *ks;
    ptrdiff_t nk = ints_of(w->at[WA_KERNEL_SHAPE], &ks);
    for (int i = 0; i < w->r; i++) {
        int64_t wd = ws->s.rank == w->r + 2 ? ws->s.dims[2 + i] : -1;
        if (nk < 0) {
            w->k[i] = wd;
            continue;
        }
        if (ks[i] < 1)
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'kernel_shape' has value %lld, expected 1 or more",
                            OPN(n), (ll)ks[i]);
        if (wd >= 0 && wd != ks[i]) {
            gir_shape k = { .rank = (int)nk };
            memcpy(k.dims, ks, (size_t)nk * sizeof *ks);
            return gir_fail(err, GIR_E_SHAPE, "%s kernel_shape %s disagrees with weight W %s", OPN(n), SHP(&k),
                            SHP(&ws->s));
        }
        w->k[i] = ks[i];
    }
    return GIR_OK;
}

static gir_status group_of(const gir_node *n, const window *w, int64_t *group, gir_error *err)
{
    *group = int_of(w->at[WA_GROUP], 1);
    if (*group < 1)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'group' is %lld, expected 1 or more", OPN(n),
                        (ll)*group);
    return GIR_OK;
}

static gir_status divides(const gir_node *n, int64_t group, int64_t ch, const char *what, gir_error *err)
{
    if (ch >= 0 && ch % group != 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s group %lld does not divide the %lld %s channels", OPN(n),
                        (ll)group, (ll)ch, what);
    return GIR_OK;
}

/* A bias B of shape [m] (optional input 2). */
static gir_status check_bias(const gir_graph *g, const gir_node *n, int64_t m, gir_error *err)
{
    const gir_value *b = gir_in(g, n, 2);
    if (!b || b->shape.rank < 0)
        return GIR_OK;
    if (b->shape.rank != 1 || (m >= 0 && b->shape.dims[0] >= 0 && b->shape.dims[0] != m))
        return gir_fail(err, GIR_E_SHAPE, "%s bias B has shape %s, expected [%lld] (one value per output channel)",
                        OPN(n), SHP(&b->shape), (ll)m);
    return GIR_OK;
}

static gir_status infer_Conv(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x, *wv;
    TRY(input(g, n, 0, &x, err));
    TRY(input(g, n, 1, &wv, err));
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, n->n_in, &dt, err));
    ish xs, ws, o;
    ish_of(x, &xs);
    ish_of(wv, &ws);
    const int64_t *ks;
    window w;
    window_attrs(n, &w);
    TRY(conv_rank(n, &xs, &ws, ints_of(w.at[WA_KERNEL_SHAPE], &ks), &w.r, err));
    if (w.r < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, dt, &o, err);
    }
    int64_t group;
    TRY(group_of(n, &w, &group, err));
    TRY(window_read(n, w.r, true, &w, err));
    TRY(conv_kernel(n, &ws, &w, err));
    int64_t c = xs.s.rank >= 0 ? xs.s.dims[1] : -1;
    int64_t m = ws.s.rank >= 0 ? ws.s.dims[0] : -1, wc = ws.s.rank >= 0 ? ws.s.dims[1] : -1, need;
    TRY(divides(n, group, c, "input", err));
    TRY(divides(n, group, m, "output", err));
    if (c >= 0 && wc >= 0 && (!mul_ok(wc, group, &need) || need != c))
        return gir_fail(err, GIR_E_SHAPE, "%s input X %s has %lld channels but weight W %s expects %lld x group %lld",
                        OPN(n), SHP(&xs.s), (ll)c, SHP(&ws.s), (ll)wc, (ll)group);
    TRY(check_bias(g, n, m, err));
    ish_rank(&o, 0);
    ish_push(&o, xs.s.rank >= 0 ? xs.s.dims[0] : -1, xs.s.rank >= 0 ? xs.nm[0] : NULL);
    ish_push(&o, m, NULL);
    for (int i = 0; i < w.r; i++) {
        int64_t d;
        TRY(window_out(n, &w, i, xs.s.rank >= 0 ? xs.s.dims[2 + i] : -1, &d, err));
        ish_push(&o, d, NULL);
    }
    return set_out(g, n, 0, dt, &o, err);
}

static gir_status infer_ConvTranspose(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x, *wv;
    TRY(input(g, n, 0, &x, err));
    TRY(input(g, n, 1, &wv, err));
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, n->n_in, &dt, err));
    ish xs, ws, o;
    ish_of(x, &xs);
    ish_of(wv, &ws);
    const int64_t *ks;
    window w;
    window_attrs(n, &w);
    TRY(conv_rank(n, &xs, &ws, ints_of(w.at[WA_KERNEL_SHAPE], &ks), &w.r, err));
    if (w.r < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, dt, &o, err);
    }
    int64_t group, outpad[GIR_MAX_RANK];
    TRY(group_of(n, &w, &group, err));
    TRY(window_read(n, w.r, true, &w, err));
    TRY(conv_kernel(n, &ws, &w, err));
    TRY(window_list(n, &w, WA_OUTPUT_PADDING, w.r, "one per spatial axis", 0, 0, outpad, err));
    for (int i = 0; i < w.r; i++)
        if (outpad[i] >= w.s[i] && outpad[i] >= w.d[i])
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s output_padding %lld on spatial axis %d is not less than the "
                            "stride %lld or the dilation %lld", OPN(n), (ll)outpad[i], i, (ll)w.s[i], (ll)w.d[i]);
    const int64_t *os;
    ptrdiff_t nos = ints_of(w.at[WA_OUTPUT_SHAPE], &os);
    if (nos >= 0)
        TRY(list_len(n, "output_shape", nos, w.r, "one per spatial axis", err));
    /* X is [N, C, ...], W is [C, M / group, k...]. */
    int64_t c = xs.s.rank >= 0 ? xs.s.dims[1] : -1, wc = ws.s.rank >= 0 ? ws.s.dims[0] : -1;
    int64_t mg = ws.s.rank >= 0 ? ws.s.dims[1] : -1, m = -1;
    TRY(divides(n, group, c, "input", err));
    if (c >= 0 && wc >= 0 && c != wc)
        return gir_fail(err, GIR_E_SHAPE, "%s input X %s has %lld channels but weight W %s expects %lld", OPN(n),
                        SHP(&xs.s), (ll)c, SHP(&ws.s), (ll)wc);
    if (mg >= 0 && !mul_ok(mg, group, &m))
        return too_large(n, err);
    TRY(check_bias(g, n, m, err));
    ish_rank(&o, 0);
    ish_push(&o, xs.s.rank >= 0 ? xs.s.dims[0] : -1, xs.s.rank >= 0 ? xs.nm[0] : NULL);
    ish_push(&o, m, NULL);
    for (int i = 0; i < w.r; i++) {
        int64_t in = xs.s.rank >= 0 ? xs.s.dims[2 + i] : -1, d = -1, t;
        if (nos >= 0) {
            d = os[i];
        } else if (in >= 0 && is_same_pad(&w)) {
            if (!mul_ok(in, w.s[i], &d))
                return too_large(n, err);
        } else if (in >= 0 && w.k[i] >= 0) {
            /* stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads */
            if (in < 1 || !mul_ok(w.s[i], in - 1, &d) || !add_ok(d, outpad[i], &d) ||
                !mul_ok(w.k[i] - 1, w.d[i], &t) || !add_ok(t, 1, &t) || !add_ok(d, t, &d) ||
                !add_ok(w.pb[i], w.pe[i], &t))
                return in < 1 ? gir_fail(err, GIR_E_SHAPE, "%s input X %s has an empty spatial axis", OPN(n),
                                         SHP(&xs.s))
                              : too_large(n, err);
            if (d - t < 1)
                return gir_fail(err, GIR_E_ATTRIBUTE, "%s pads %lld + %lld on spatial axis %d leave no output "
                                "(unpadded extent %lld)", OPN(n), (ll)w.pb[i], (ll)w.pe[i], i, (ll)d);
            d -= t;
        }
        ish_push(&o, d, NULL);
    }
    return set_out(g, n, 0, dt, &o, err);
}

static gir_status infer_pool(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    window w;
    window_attrs(n, &w);
    const int64_t *ks;
    ptrdiff_t nk = ints_of(w.at[WA_KERNEL_SHAPE], &ks);
    TRY(need_attr(n, "kernel_shape", nk >= 0, err));
    TRY(conv_rank(n, &xs, NULL, nk, &w.r, err));
    TRY(window_read(n, w.r, n->op == GIR_OP_MaxPool, &w, err));
    TRY(window_list(n, &w, WA_KERNEL_SHAPE, w.r, "one per spatial axis", 1, 1, w.k, err));
    if (xs.s.rank < 0) {
        ish_unknown(&o);
    } else {
        ish_rank(&o, 0);
        ish_push(&o, xs.s.dims[0], xs.nm[0]);
        ish_push(&o, xs.s.dims[1], xs.nm[1]);
        for (int i = 0; i < w.r; i++) {
            int64_t d;
            TRY(window_out(n, &w, i, xs.s.dims[2 + i], &d, err));
            ish_push(&o, d, NULL);
        }
    }
    TRY(set_out(g, n, 0, x->dtype, &o, err));
    return set_out(g, n, 1, GIR_DT_I64, &o, err); /* MaxPool's Indices */
}

static gir_status infer_global_pool(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs;
    ish_of(x, &xs);
    if (xs.s.rank >= 0) {
        if (xs.s.rank < 3)
            return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 3 or more (batch, channels, spatial axes), "
                            "found %s", OPN(n), SHP(&xs.s));
        for (int i = 2; i < xs.s.rank; i++) {
            xs.s.dims[i] = 1;
            xs.nm[i] = NULL;
        }
    }
    return set_out(g, n, 0, x->dtype, &xs, err);
}

/* ==== other neural-network ops ============================================ */

static gir_status infer_Gemm(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *a, *b, *c = gir_in(g, n, 2);
    TRY(input(g, n, 0, &a, err));
    TRY(input(g, n, 1, &b, err));
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, n->n_in, &dt, err));
    ish as, bs, cs, o;
    ish_of(a, &as);
    ish_of(b, &bs);
    if (as.s.rank >= 0 && as.s.rank != 2)
        return gir_fail(err, GIR_E_SHAPE, "Gemm input A must be a matrix, found %s", SHP(&as.s));
    if (bs.s.rank >= 0 && bs.s.rank != 2)
        return gir_fail(err, GIR_E_SHAPE, "Gemm input B must be a matrix, found %s", SHP(&bs.s));
    bool ta = gir_node_int(n, "transA", 0) != 0, tb = gir_node_int(n, "transB", 0) != 0;
    int64_t m = -1, k1 = -1, k2 = -1, nn = -1;
    const char *mname = NULL, *nname = NULL;
    if (as.s.rank == 2) {
        m = as.s.dims[ta ? 1 : 0];
        mname = as.nm[ta ? 1 : 0];
        k1 = as.s.dims[ta ? 0 : 1];
    }
    if (bs.s.rank == 2) {
        k2 = bs.s.dims[tb ? 1 : 0];
        nn = bs.s.dims[tb ? 0 : 1];
        nname = bs.nm[tb ? 0 : 1];
    }
    if (k1 >= 0 && k2 >= 0 && k1 != k2)
        return gir_fail(err, GIR_E_SHAPE, "Gemm inner dimensions differ: A %s%s and B %s%s", SHP(&as.s),
                        ta ? " (transposed)" : "", SHP(&bs.s), tb ? " (transposed)" : "");
    ish_rank(&o, 0);
    ish_push(&o, m, mname);
    ish_push(&o, nn, nname);
    if (c) {
        ish_of(c, &cs);
        TRY(bcast_to(n, &o, &cs, "C", err));
    }
    return set_out(g, n, 0, dt, &o, err);
}

static gir_status infer_MatMul(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *a, *b;
    TRY(input(g, n, 0, &a, err));
    TRY(input(g, n, 1, &b, err));
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, 2, &dt, err));
    ish as, bs, o;
    ish_of(a, &as);
    ish_of(b, &bs);
    if (as.s.rank == 0 || bs.s.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "MatMul inputs must have rank 1 or more, found %s and %s", SHP(&as.s),
                        SHP(&bs.s));
    if (as.s.rank < 0 || bs.s.rank < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, dt, &o, err);
    }
    int ra = as.s.rank, rb = bs.s.rank;
    int64_t ka = as.s.dims[ra - 1], kb = bs.s.dims[rb == 1 ? 0 : rb - 2];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return gir_fail(err, GIR_E_SHAPE, "MatMul inner dimensions differ: %s and %s", SHP(&as.s), SHP(&bs.s));
    /* Batch dimensions broadcast. */
    ish ba, bb;
    ish_rank(&ba, ra > 2 ? ra - 2 : 0);
    ish_rank(&bb, rb > 2 ? rb - 2 : 0);
    for (int i = 0; i < ba.s.rank; i++) {
        ba.s.dims[i] = as.s.dims[i];
        ba.nm[i] = as.nm[i];
    }
    for (int i = 0; i < bb.s.rank; i++) {
        bb.s.dims[i] = bs.s.dims[i];
        bb.nm[i] = bs.nm[i];
    }
    if (bcast(n, &ba, &bb, &o, NULL) != GIR_OK)
        return gir_fail(err, GIR_E_SHAPE, "MatMul cannot broadcast the batch dimensions of %s and %s", SHP(&as.s),
                        SHP(&bs.s));
    if (ra >= 2)
        ish_push(&o, as.s.dims[ra - 2], as.nm[ra - 2]);
    if (rb >= 2)
        ish_push(&o, bs.s.dims[rb - 1], bs.nm[rb - 1]);
    return set_out(g, n, 0, dt, &o, err);
}

/* Inputs [from, to) must be vectors of one value per channel of X. */
static gir_status per_channel(const gir_graph *g, const gir_node *n, const ish *xs, size_t from, size_t to,
                              gir_error *err)
{
    if (xs->s.rank >= 0 && xs->s.rank < 2)
        return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 2 or more (batch, channels, ...), found %s",
                        OPN(n), SHP(&xs->s));
    int64_t c = xs->s.rank >= 2 ? xs->s.dims[1] : -1;
    for (size_t i = from; i < to; i++) {
        const gir_value *v;
        TRY(input(g, n, i, &v, err));
        if (v->shape.rank < 0)
            continue;
        if (v->shape.rank != 1 || (c >= 0 && v->shape.dims[0] >= 0 && v->shape.dims[0] != c)) {
            char nm[32];
            return gir_fail(err, GIR_E_SHAPE, "%s input %s has shape %s, expected [%lld] (one value per channel of "
                            "X %s)", OPN(n), gir_op_operand_name(n->op, false, i, nm, sizeof nm), SHP(&v->shape),
                            (ll)c, SHP(&xs->s));
        }
    }
    return GIR_OK;
}

static gir_status infer_norm(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs;
    ish_of(x, &xs);
    TRY(per_channel(g, n, &xs, 1, n->n_in, err));
    return set_out(g, n, 0, x->dtype, &xs, err);
}

static gir_status infer_softmax(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    if (x->shape.rank >= 0) {
        int a = 0;
        TRY(norm_axis(n, "axis", gir_node_int(n, "axis", -1), x->shape.rank, false, &a, err));
    }
    return infer_same(g, n, err);
}

static gir_status infer_Dropout(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    double ratio = gir_node_float(n, "ratio", 0.5);
    if (!(ratio >= 0.0 && ratio < 1.0))
        return gir_fail(err, GIR_E_ATTRIBUTE, "Dropout ratio %g is outside [0, 1)", ratio);
    ish xs;
    ish_of(x, &xs);
    TRY(set_out(g, n, 0, x->dtype, &xs, err));
    return set_out(g, n, 1, GIR_DT_BOOL, &xs, err);
}

/* ==== reductions ============================================================ */

static gir_status infer_reduce(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    bool keep = gir_node_int(n, "keepdims", 1) != 0;
    bool noop = n->op == GIR_OP_ReduceSum && gir_node_int(n, "noop_with_empty_axes", 0) != 0;
    if (na <= 0 && noop)
        return set_out(g, n, 0, x->dtype, &xs, err);
    if (xs.s.rank < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, x->dtype, &o, err);
    }
    bool mark[GIR_MAX_RANK];
    if (na <= 0)
        for (int i = 0; i < GIR_MAX_RANK; i++)
            mark[i] = true;
    else
        TRY(axes_mask(n, "axes", axes, na, xs.s.rank, mark, err));
    ish_rank(&o, 0);
    for (int i = 0; i < xs.s.rank; i++) {
        if (!mark[i])
            ish_push(&o, xs.s.dims[i], xs.nm[i]);
        else if (keep)
            ish_push(&o, 1, NULL);
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_arg(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    if (xs.s.rank < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, GIR_DT_I64, &o, err);
    }
    int a = 0;
    TRY(norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    bool keep = gir_node_int(n, "keepdims", 1) != 0;
    ish_rank(&o, 0);
    for (int i = 0; i < xs.s.rank; i++) {
        if (i != a)
            ish_push(&o, xs.s.dims[i], xs.nm[i]);
        else if (keep)
            ish_push(&o, 1, NULL);
    }
    return set_out(g, n, 0, GIR_DT_I64, &o, err);
}

/* ==== shape and data movement =============================================== */

static gir_status infer_Reshape(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    const int64_t *v;
    ptrdiff_t len = gir_attrs_get_ints(&n->attrs, "shape", &v);
    TRY(need_attr(n, "shape", len >= 0, err));
    TRY(rank_limit(n, len, err));
    bool allowzero = gir_node_int(n, "allowzero", 0) != 0, has_zero = false;
    int neg = -1;
    for (int i = 0; i < (int)len; i++) {
        if (v[i] == -1) {
            if (neg >= 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape has more than one -1");
            neg = i;
        } else if (v[i] < -1) {
            return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape has value %lld; dimensions are -1, 0 or positive",
                            (ll)v[i]);
        } else if (v[i] == 0) {
            has_zero = true;
        }
    }
    if (allowzero && has_zero && neg >= 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape has both 0 and -1 while allowzero is 1");
    ish xs, o;
    ish_of(x, &xs);
    ish_rank(&o, (int)len);
    for (int i = 0; i < (int)len; i++) {
        if (v[i] == 0 && !allowzero) {
            if (xs.s.rank >= 0 && i >= xs.s.rank)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape shape[%d] is 0 (copy the input dimension) but input %s "
                                "has rank %d", i, SHP(&xs.s), xs.s.rank);
            if (xs.s.rank >= 0) {
                o.s.dims[i] = xs.s.dims[i];
                o.nm[i] = xs.nm[i];
            }
        } else if (v[i] >= 0) {
            o.s.dims[i] = v[i];
        }
    }
    /* Element counts with the copied dimensions cancelled out on both sides. */
    bool copied[GIR_MAX_RANK] = { false }, in_ok = xs.s.rank >= 0, out_ok = true;
    for (int i = 0; i < (int)len && i < xs.s.rank; i++)
        copied[i] = v[i] == 0 && !allowzero;
    int64_t in_k = 1, out_k = 1;
    int unknown = 0, unknown_at = -1;
    for (int j = 0; in_ok && j < xs.s.rank; j++) {
        if (copied[j])
            continue;
        if (xs.s.dims[j] < 0) {
            unknown++;
            unknown_at = j;
        } else if (!mul_ok(in_k, xs.s.dims[j], &in_k)) {
            in_ok = false;
        }
    }
    for (int i = 0; i < (int)len; i++)
        if (i != neg && !(i < GIR_MAX_RANK && copied[i]) && !mul_ok(out_k, v[i], &out_k))
            out_ok = false;
    if (in_ok && out_ok && unknown == 0 && neg < 0 && in_k != out_k) {
        int64_t in_n = dims_product(&xs.s, 0, xs.s.rank), out_n = dims_product(&o.s, 0, o.s.rank);
        if (in_n >= 0 && out_n >= 0)
            return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s (%lld elements) to %s (%lld elements)",
                            SHP(&xs.s), (ll)in_n, SHP(&o.s), (ll)out_n);
        return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s to %s", SHP(&xs.s), SHP(&o.s));
    }
    if (in_ok && out_ok && unknown == 0 && neg >= 0) {
        if (out_k == 0 || in_k % out_k != 0) {
            int64_t in_n = dims_product(&xs.s, 0, xs.s.rank);
            if (in_n >= 0)
                return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s (%lld elements) to %s", SHP(&xs.s),
                                (ll)in_n, SHP(&o.s));
            return gir_fail(err, GIR_E_SHAPE, "Reshape cannot reshape %s to %s", SHP(&xs.s), SHP(&o.s));
        }
        o.s.dims[neg] = in_k / out_k;
    } else if (in_ok && out_ok && unknown == 1 && neg >= 0 && out_k > 0 && in_k == out_k) {
        /* The -1 is the one unknown input dimension: it passes through with its name. */
        o.nm[neg] = xs.nm[unknown_at];
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

/* The product of dims [from, to) as one dimension; a single dimension keeps its name. */
static gir_status merged_dim(const gir_node *n, const ish *xs, int from, int to, ish *o, gir_error *err)
{
    int64_t p = dims_product(&xs->s, from, to);
    if (p == -2)
        return too_large(n, err);
    ish_push(o, p, to - from == 1 ? xs->nm[from] : NULL);
    return GIR_OK;
}

static gir_status infer_Flatten(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    ish_rank(&o, 2);
    if (xs.s.rank >= 0) {
        int a = 0;
        TRY(norm_axis(n, "axis", gir_node_int(n, "axis", 1), xs.s.rank, true, &a, err));
        ish_rank(&o, 0);
        TRY(merged_dim(n, &xs, 0, a, &o, err));
        TRY(merged_dim(n, &xs, a, xs.s.rank, &o, err));
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Transpose(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    const int64_t *perm;
    ptrdiff_t len = gir_attrs_get_ints(&n->attrs, "perm", &perm);
    int r = xs.s.rank;
    if (len < 0) {
        if (r < 0) {
            ish_unknown(&o);
        } else {
            ish_rank(&o, 0);
            for (int i = r - 1; i >= 0; i--)
                ish_push(&o, xs.s.dims[i], xs.nm[i]);
        }
        return set_out(g, n, 0, x->dtype, &o, err);
    }
    if (r >= 0)
        TRY(list_len(n, "perm", len, r, "one per input axis", err));
    TRY(rank_limit(n, len, err));
    bool seen[GIR_MAX_RANK] = { false };
    for (ptrdiff_t i = 0; i < len; i++) {
        if (perm[i] < 0 || perm[i] >= len || seen[perm[i]])
            return gir_fail(err, GIR_E_ATTRIBUTE, "Transpose perm is not a permutation of 0..%td (value %lld at %td)",
                            len - 1, (ll)perm[i], i);
        seen[perm[i]] = true;
    }
    ish_rank(&o, (int)len);
    if (r >= 0)
        for (int i = 0; i < r; i++) {
            o.s.dims[i] = xs.s.dims[perm[i]];
            o.nm[i] = xs.nm[perm[i]];
        }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Squeeze(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    if (xs.s.rank < 0 || (na < 0 && !gir_shape_is_known(&xs.s))) {
        ish_unknown(&o); /* which axes go depends on unknown sizes */
        return set_out(g, n, 0, x->dtype, &o, err);
    }
    bool mark[GIR_MAX_RANK];
    if (na < 0) {
        for (int i = 0; i < xs.s.rank; i++)
            mark[i] = xs.s.dims[i] == 1;
    } else {
        TRY(axes_mask(n, "axes", axes, na, xs.s.rank, mark, err));
        for (int i = 0; i < xs.s.rank; i++)
            if (mark[i] && xs.s.dims[i] >= 0 && xs.s.dims[i] != 1)
                return gir_fail(err, GIR_E_SHAPE, "Squeeze axis %d of %s has size %lld, not 1", i, SHP(&xs.s),
                                (ll)xs.s.dims[i]);
    }
    ish_rank(&o, 0);
    for (int i = 0; i < xs.s.rank; i++)
        if (!mark[i])
            ish_push(&o, xs.s.dims[i], xs.nm[i]);
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Unsqueeze(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    const int64_t *axes;
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    TRY(need_attr(n, "axes", na >= 0, err));
    if (xs.s.rank < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, x->dtype, &o, err);
    }
    TRY(rank_limit(n, (ll)xs.s.rank + na, err));
    int r = xs.s.rank + (int)na;
    bool mark[GIR_MAX_RANK];
    TRY(axes_mask(n, "axes", axes, na, r, mark, err));
    ish_rank(&o, 0);
    for (int i = 0, j = 0; i < r; i++) {
        if (mark[i]) {
            ish_push(&o, 1, NULL);
        } else {
            ish_push(&o, xs.s.dims[j], xs.nm[j]);
            j++;
        }
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Concat(gir_graph *g, gir_node *n, gir_error *err)
{
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, n->n_in, &dt, err));
    ish o;
    int r = -1;
    for (size_t i = 0; i < n->n_in; i++) {
        const gir_value *v;
        TRY(input(g, n, i, &v, err));
        if (r < 0 && v->shape.rank >= 0) {
            ish_of(v, &o);
            r = o.s.rank;
        }
    }
    if (r < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, dt, &o, err);
    }
    int a = 0;
    TRY(norm_axis(n, "axis", gir_node_int(n, "axis", 0), r, false, &a, err));
    int64_t sum = 0;
    for (size_t i = 0; i < n->n_in; i++) {
        ish s;
        ish_of(gir_in(g, n, i), &s);
        if (s.s.rank < 0) {
            sum = -1;
            continue;
        }
        if (s.s.rank != r)
            return gir_fail(err, GIR_E_SHAPE, "Concat inputs have different ranks: %s and %s", SHP(&o.s), SHP(&s.s));
        for (int k = 0; k < r; k++) {
            if (k == a)
                continue;
            if (o.s.dims[k] >= 0 && s.s.dims[k] >= 0 && o.s.dims[k] != s.s.dims[k])
                return gir_fail(err, GIR_E_SHAPE, "Concat input %zu %s differs from %s outside axis %d", i,
                                SHP(&s.s), SHP(&o.s), a);
            if (o.s.dims[k] < 0 && s.s.dims[k] >= 0)
                o.s.dims[k] = s.s.dims[k];
            if (!o.nm[k])
                o.nm[k] = s.nm[k];
        }
        if (sum >= 0 && (s.s.dims[a] < 0 || !add_ok(sum, s.s.dims[a], &sum)))
            sum = s.s.dims[a] < 0 ? -1 : -2;
    }
    if (sum == -2)
        return too_large(n, err);
    o.s.dims[a] = sum;
    if (n->n_in > 1)
        o.nm[a] = NULL;
    return set_out(g, n, 0, dt, &o, err);
}

static gir_status infer_Split(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs;
    ish_of(x, &xs);
    const int64_t *split;
    ptrdiff_t ns = gir_attrs_get_ints(&n->attrs, "split", &split);
    if (ns >= 0)
        TRY(list_len(n, "split", ns, (ll)n->n_out, "one per output", err));
    if (n->n_out == 0)
        return gir_fail(err, GIR_E_REFERENCE, "Split has no outputs");
    if (xs.s.rank < 0) {
        for (size_t k = 0; k < n->n_out; k++)
            TRY(set_out(g, n, k, x->dtype, &xs, err));
        return GIR_OK;
    }
    int a = 0;
    TRY(norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    int64_t dim = xs.s.dims[a];
    if (ns >= 0) {
        int64_t sum = 0;
        for (ptrdiff_t k = 0; k < ns; k++) {
            if (split[k] < 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Split size %lld is negative", (ll)split[k]);
            if (!add_ok(sum, split[k], &sum))
                return too_large(n, err);
        }
        if (dim >= 0 && sum != dim)
            return gir_fail(err, GIR_E_SHAPE, "Split sizes sum to %lld but axis %d of %s has %lld", (ll)sum, a,
                            SHP(&xs.s), (ll)dim);
    } else if (dim >= 0 && dim % (int64_t)n->n_out != 0) {
        return gir_fail(err, GIR_E_SHAPE, "Split cannot divide axis %d of %s (%lld) into %zu equal parts", a,
                        SHP(&xs.s), (ll)dim, n->n_out);
    }
    for (size_t k = 0; k < n->n_out; k++) {
        ish o = xs;
        o.s.dims[a] = ns >= 0 ? split[k] : dim >= 0 ? dim / (int64_t)n->n_out : -1;
        if (n->n_out > 1)
            o.nm[a] = NULL;
        TRY(set_out(g, n, k, x->dtype, &o, err));
    }
    return GIR_OK;
}

/* Extent of a slice of an axis of size dim (ONNX clamping rules). */
static int64_t slice_len(int64_t dim, int64_t start, int64_t end, int64_t step)
{
    if (dim == 0)
        return 0;
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        return end > start ? (end - start - 1) / step + 1 : 0;
    }
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    if (start <= end)
        return 0;
    return step == INT64_MIN ? 1 : (start - end - 1) / -step + 1;
}

static gir_status infer_Slice(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    ptrdiff_t ns = gir_attrs_get_ints(&n->attrs, "starts", &starts);
    ptrdiff_t ne = gir_attrs_get_ints(&n->attrs, "ends", &ends);
    TRY(need_attr(n, "starts", ns >= 0, err));
    TRY(need_attr(n, "ends", ne >= 0, err));
    TRY(list_len(n, "ends", ne, ns, "one per start", err));
    ptrdiff_t na = gir_attrs_get_ints(&n->attrs, "axes", &axes);
    ptrdiff_t nt = gir_attrs_get_ints(&n->attrs, "steps", &steps);
    if (na >= 0)
        TRY(list_len(n, "axes", na, ns, "one per start", err));
    if (nt >= 0)
        TRY(list_len(n, "steps", nt, ns, "one per start", err));
    for (ptrdiff_t i = 0; i < nt; i++)
        if (steps[i] == 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Slice steps[%td] is 0, expected a non-zero step", i);
    ish xs;
    ish_of(x, &xs);
    if (xs.s.rank < 0)
        return set_out(g, n, 0, x->dtype, &xs, err);
    if (na < 0 && ns > xs.s.rank)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Slice has %td starts for input %s of rank %d", ns, SHP(&xs.s),
                        xs.s.rank);
    int64_t ax[GIR_MAX_RANK];
    bool mark[GIR_MAX_RANK];
    if (na < 0)
        for (int i = 0; i < (int)ns; i++)
            ax[i] = i;
    TRY(axes_mask(n, "axes", na >= 0 ? axes : ax, ns, xs.s.rank, mark, err));
    ish o = xs;
    for (ptrdiff_t i = 0; i < ns; i++) {
        int64_t axv = na >= 0 ? axes[i] : ax[i];
        int a = (int)(axv < 0 ? axv + xs.s.rank : axv);
        int64_t step = nt >= 0 ? steps[i] : 1, dim = xs.s.dims[a];
        /* 0:INT32_MAX or more (exporters' "to the end") keeps an unknown dimension whole */
        bool whole = step == 1 && starts[i] == 0 && ends[i] >= INT32_MAX;
        if (dim < 0) {
            o.s.dims[a] = -1;
            if (!whole)
                o.nm[a] = NULL;
            continue;
        }
        o.s.dims[a] = slice_len(dim, starts[i], ends[i], step);
        if (o.s.dims[a] != dim)
            o.nm[a] = NULL;
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Pad(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    const int64_t *pads;
    ptrdiff_t np = gir_attrs_get_ints(&n->attrs, "pads", &pads);
    TRY(need_attr(n, "pads", np >= 0, err));
    ish xs, o;
    ish_of(x, &xs);
    if (xs.s.rank < 0) {
        if (np % 2 != 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Pad attribute 'pads' has %td values, expected an even number "
                            "(begins then ends of each axis)", np);
        TRY(rank_limit(n, np / 2, err));
        ish_rank(&o, (int)(np / 2));
        return set_out(g, n, 0, x->dtype, &o, err);
    }
    int r = xs.s.rank;
    TRY(list_len(n, "pads", np, 2 * (ll)r, "begins then ends of each axis", err));
    o = xs;
    for (int i = 0; i < r; i++) {
        int64_t d = xs.s.dims[i], pb = pads[i], pe = pads[r + i];
        if (pb || pe)
            o.nm[i] = NULL;
        if (d < 0)
            continue;
        if (!add_ok(d, pb, &d) || !add_ok(d, pe, &d))
            return too_large(n, err);
        if (d < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Pad pads %lld and %lld remove more than the %lld cells of axis %d "
                            "of %s", (ll)pb, (ll)pe, (ll)xs.s.dims[i], i, SHP(&xs.s));
        o.s.dims[i] = d;
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Tile(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    const int64_t *rep;
    ptrdiff_t nr = gir_attrs_get_ints(&n->attrs, "repeats", &rep);
    TRY(need_attr(n, "repeats", nr >= 0, err));
    ish xs, o;
    ish_of(x, &xs);
    if (xs.s.rank >= 0)
        TRY(list_len(n, "repeats", nr, xs.s.rank, "one per input axis", err));
    TRY(rank_limit(n, nr, err));
    ish_rank(&o, (int)nr);
    for (int i = 0; i < (int)nr; i++) {
        if (rep[i] < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Tile repeats has negative value %lld", (ll)rep[i]);
        if (xs.s.rank < 0)
            continue;
        if (rep[i] == 1) {
            o.s.dims[i] = xs.s.dims[i];
            o.nm[i] = xs.nm[i];
        } else if (xs.s.dims[i] >= 0 && !mul_ok(xs.s.dims[i], rep[i], &o.s.dims[i])) {
            return too_large(n, err);
        } else if (rep[i] == 0) {
            o.s.dims[i] = 0;
        }
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Expand(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    const int64_t *v;
    ptrdiff_t len = gir_attrs_get_ints(&n->attrs, "shape", &v);
    TRY(need_attr(n, "shape", len >= 0, err));
    TRY(rank_limit(n, len, err));
    ish xs, ss, o;
    ish_of(x, &xs);
    ish_rank(&ss, (int)len);
    for (int i = 0; i < (int)len; i++) {
        if (v[i] < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "Expand shape has negative value %lld", (ll)v[i]);
        ss.s.dims[i] = v[i];
    }
    TRY(bcast(n, &xs, &ss, &o, err));
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Gather(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x, *idx;
    TRY(input(g, n, 0, &x, err));
    TRY(input(g, n, 1, &idx, err));
    TRY(need_dtype(n, idx, 1, idx->dtype == GIR_DT_I32 || idx->dtype == GIR_DT_I64, "int32 or int64", err));
    ish xs, is, o;
    ish_of(x, &xs);
    ish_of(idx, &is);
    if (xs.s.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "Gather input data must have rank 1 or more, found %s", SHP(&xs.s));
    if (xs.s.rank < 0 || is.s.rank < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, x->dtype, &o, err);
    }
    int a = 0;
    TRY(norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    TRY(rank_limit(n, (ll)xs.s.rank + is.s.rank - 1, err));
    ish_rank(&o, 0);
    for (int i = 0; i < a; i++)
        ish_push(&o, xs.s.dims[i], xs.nm[i]);
    for (int i = 0; i < is.s.rank; i++)
        ish_push(&o, is.s.dims[i], is.nm[i]);
    for (int i = a + 1; i < xs.s.rank; i++)
        ish_push(&o, xs.s.dims[i], xs.nm[i]);
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Resize(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    const double *scales, *roi;
    const int64_t *sizes;
    ptrdiff_t nsc = gir_attrs_get_floats(&n->attrs, "scales", &scales);
    ptrdiff_t nsz = gir_attrs_get_ints(&n->attrs, "sizes", &sizes);
    ptrdiff_t nroi = gir_attrs_get_floats(&n->attrs, "roi", &roi);
    if (nsc <= 0 && nsz <= 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Resize needs attribute 'scales' or 'sizes'");
    if (nsc > 0 && nsz > 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Resize takes attribute 'scales' or 'sizes', not both");
    ptrdiff_t len = nsc > 0 ? nsc : nsz;
    ish xs, o;
    ish_of(x, &xs);
    if (xs.s.rank >= 0)
        TRY(list_len(n, nsc > 0 ? "scales" : "sizes", len, xs.s.rank, "one per input axis", err));
    TRY(rank_limit(n, len, err));
    if (nroi > 0)
        TRY(list_len(n, "roi", nroi, 2 * (ll)len, "starts then ends of each axis", err));
    ish_rank(&o, (int)len);
    for (int i = 0; i < (int)len; i++) {
        if (nsz > 0) {
            if (sizes[i] < 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "Resize sizes has negative value %lld", (ll)sizes[i]);
            o.s.dims[i] = sizes[i];
            if (xs.s.rank >= 0 && sizes[i] == xs.s.dims[i])
                o.nm[i] = xs.nm[i];
            continue;
        }
        if (!(scales[i] > 0.0) || !isfinite(scales[i]))
            return gir_fail(err, GIR_E_ATTRIBUTE, "Resize scale %g on axis %d is not a positive number", scales[i], i);
        if (xs.s.rank < 0)
            continue;
        if (scales[i] == 1.0) {
            o.s.dims[i] = xs.s.dims[i];
            o.nm[i] = xs.nm[i];
        } else if (xs.s.dims[i] >= 0) {
            /* float32 arithmetic, as ONNX scales are float32 */
            float d = floorf((float)xs.s.dims[i] * (float)scales[i]);
            if (!(d < 9.0e18f))
                return too_large(n, err);
            o.s.dims[i] = (int64_t)d;
        }
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_space_depth(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    int64_t b = gir_node_int(n, "blocksize", 0), bb;
    if (b < 1)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'blocksize' is %lld, expected 1 or more", OPN(n), (ll)b);
    if (!mul_ok(b, b, &bb))
        return too_large(n, err);
    ish xs, o;
    ish_of(x, &xs);
    if (xs.s.rank < 0) {
        ish_rank(&o, 4);
        return set_out(g, n, 0, x->dtype, &o, err);
    }
    if (xs.s.rank != 4)
        return gir_fail(err, GIR_E_SHAPE, "%s input must have rank 4 (N, C, H, W), found %s", OPN(n), SHP(&xs.s));
    ish_rank(&o, 4);
    o.s.dims[0] = xs.s.dims[0];
    o.nm[0] = xs.nm[0];
    int64_t c = xs.s.dims[1], h = xs.s.dims[2], w = xs.s.dims[3];
    if (n->op == GIR_OP_DepthToSpace) {
        if (c >= 0 && c % bb != 0)
            return gir_fail(err, GIR_E_SHAPE, "DepthToSpace input %s has %lld channels, not a multiple of "
                            "blocksize^2 = %lld", SHP(&xs.s), (ll)c, (ll)bb);
        o.s.dims[1] = c >= 0 ? c / bb : -1;
        if ((h >= 0 && !mul_ok(h, b, &o.s.dims[2])) || (w >= 0 && !mul_ok(w, b, &o.s.dims[3])))
            return too_large(n, err);
    } else {
        if ((h >= 0 && h % b != 0) || (w >= 0 && w % b != 0))
            return gir_fail(err, GIR_E_SHAPE, "SpaceToDepth input %s has height or width not a multiple of "
                            "blocksize %lld", SHP(&xs.s), (ll)b);
        if (c >= 0 && !mul_ok(c, bb, &o.s.dims[1]))
            return too_large(n, err);
        o.s.dims[2] = h >= 0 ? h / b : -1;
        o.s.dims[3] = w >= 0 ? w / b : -1;
    }
    return set_out(g, n, 0, x->dtype, &o, err);
}

static gir_status infer_Shape(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish o;
    ish_rank(&o, 1);
    o.s.dims[0] = x->shape.rank; /* -1 when unknown */
    return set_out(g, n, 0, GIR_DT_I64, &o, err);
}

/* ==== operators from LightNet ============================================== */

/* Semantics (the runtime implements these; graphconv-formats(5) LIGHTNET):
 *
 * Print(input; message, file?): writes `message` and "\n", then the tensor
 *   the way TensorLight's tl_tensor_fprint does: for each element in
 *   row-major order it first writes "]" once for every axis whose block
 *   ends just before this element (innermost first), then if any "]" was
 *   written a "\n" and (rank - number of "]") spaces; then "[" once for
 *   every axis whose block starts at this element (outermost first), or a
 *   single " " if none starts; then the element: "%.3f" for float32/64,
 *   "%d" for int8/16/32 and bool (0/1), "%u" for uint8/16/32, "%lld" /
 *   "%llu" for 64-bit integers; after the last element rank times "]" and
 *   "\n".  A [2,3] tensor prints "[[2.000 3.000 4.000]\n [6.000 7.000 8.000]]\n".
 *   Without `file` to standard output; with it the file is truncated and
 *   written (a file that cannot be opened is skipped with a warning).  No
 *   outputs; runs in graph order among other Print nodes.
 * Sort(keys, values?; descending): stable sort of the 1-D keys ascending (or
 *   descending); values (1-D, same length) are reordered by the same
 *   permutation.  Outputs: sorted keys[, reordered values].
 * GatherBlocks(data, indices; count, block_size): 1-D data, 1-D integer
 *   indices; output[i*block_size + j] = data[indices[i]*block_size + j] for
 *   i < count, j < block_size.  An index outside the data is an error.
 * RangeFill(input; start, limit, delta): output[i] = start + i * delta
 *   computed in double and converted to the input's dtype (integers:
 *   truncation toward zero, saturated); the input only gives the dtype and
 *   the length, which must be ceil((limit - start) / delta).
 * SqueezeDetBoxDecode(deltas, anchors; width, height, img_width,
 *   img_height, x_shift, y_shift): float32 [..., 4] each; per box, in
 *   float32, with d = deltas, a = anchors, xs = img_width / width,
 *   ys = img_height / height, E = 2.718281828:
 *   cx = (a0 + d0*a2)*xs + x_shift, cy = (a1 + d1*a3)*ys + y_shift,
 *   w = a2 * (d2 < 1 ? exp(d2) : d2*E) * xs, h = a3 * (d3 < 1 ? exp(d3) : d3*E) * ys,
 *   out = [min(max(cx - w/2, 0), img_width - 1), min(max(cy - h/2, 0), img_height - 1),
 *          max(min(cx + w/2, img_width - 1), 0), max(min(cy + h/2, img_height - 1), 0)].
 * YoloV3Decode(feature [1, A*(5+C), H, W], anchors [A, 2]; img_width,
 *   img_height): per anchor a and cell (y, x), with f_k the k-th channel of
 *   anchor a and s(v) = 1/(1+exp(-v)): box_centers[0,a,:,y,x] =
 *   ((s(f0) + x) * img_width / W, (s(f1) + y) * img_height / H);
 *   box_sizes[0,a,:,y,x] = (anchors[a,0], anchors[a,1]) * clamp(exp(f2|f3),
 *   1e-9, 50); boxes = (cx - w/2, cy - h/2, cx + w/2, cy + h/2);
 *   confs[0,a,0,y,x] = s(f4); probs[0,a,c,y,x] = s(f_{5+c}).
 * SubMean(image [H, W, 3]; mean[3], to): output[c, h, w] =
 *   convert_to(double(image[h, w, c]) - mean[c]).
 * DotProduct(A, B): equal shapes; output [1] = sum of A*B, accumulated in
 *   the input type in element order.
 * Stack(inputs...; axis): equal shapes and dtypes; a new axis of size N.
 * Unstack(input; axis): one output per index of `axis`, that axis removed.
 */

#define FLT_R(nm, dc) { .name = nm, .type = GIR_ATTR_FLOAT, .presence = GIR_ATTR_REQUIRED, .doc = dc }
#define STR_O(nm, dc) { .name = nm, .type = GIR_ATTR_STRING, .presence = GIR_ATTR_OPTIONAL, .doc = dc }
#define FLTS_R(nm, dc) { .name = nm, .type = GIR_ATTR_FLOATS, .presence = GIR_ATTR_REQUIRED, .doc = dc }

static const gir_attr_schema attrs_Print[] = {
    STR_R("message", NULL, "written on its own line before the tensor"),
    STR_O("file", "write to this file (truncated) instead of standard output"),
    A_END,
};
static const gir_attr_schema attrs_Sort[] = {
    INT_D("descending", 0, GIR_RANGE_BOOL, "1 sorts from largest to smallest, 0 from smallest"),
    A_END,
};
static const gir_attr_schema attrs_GatherBlocks[] = {
    INT_R("count", GIR_RANGE_POSITIVE, "number of indices used, at most the length of indices"),
    INT_D("block_size", 1, GIR_RANGE_POSITIVE, "elements copied per index"),
    A_END,
};
static const gir_attr_schema attrs_RangeFill[] = {
    FLT_R("start", "first value"),
    FLT_R("limit", "exclusive end: the input has ceil((limit - start) / delta) elements"),
    FLT_R("delta", "step between values, not 0"),
    A_END,
};
static const gir_attr_schema attrs_SqueezeDetBoxDecode[] = {
    INT_R("width", GIR_RANGE_POSITIVE, "network input width"),
    INT_R("height", GIR_RANGE_POSITIVE, "network input height"),
    INT_R("img_width", GIR_RANGE_POSITIVE, "image width the boxes are scaled and clipped to"),
    INT_R("img_height", GIR_RANGE_POSITIVE, "image height the boxes are scaled and clipped to"),
    INT_D("x_shift", 0, GIR_RANGE_ANY, "added to every box centre x"),
    INT_D("y_shift", 0, GIR_RANGE_ANY, "added to every box centre y"),
    A_END,
};
static const gir_attr_schema attrs_YoloV3Decode[] = {
    INT_R("img_width", GIR_RANGE_POSITIVE, "image width the centres are scaled to"),
    INT_R("img_height", GIR_RANGE_POSITIVE, "image height the centres are scaled to"),
    A_END,
};
static const gir_attr_schema attrs_SubMean[] = {
    FLTS_R("mean", "the mean of each of the 3 channels"),
    STR_R("to", ch_dtype, "element type of the output, by name"),
    A_END,
};
static const gir_attr_schema attrs_Stack[] = {
    INT_D("axis", 0, GIR_RANGE_ANY, "position of the new axis; negative counts from the end of the output"),
    A_END,
};
static const gir_attr_schema attrs_Unstack[] = {
    INT_D("axis", 0, GIR_RANGE_ANY, "axis split into the outputs; negative counts from the end"),
    A_END,
};

static gir_status need_rank(const gir_node *n, const gir_value *v, size_t i, int r, gir_error *err)
{
    if (v->shape.rank < 0 || v->shape.rank == r)
        return GIR_OK;
    char nm[32];
    return gir_fail(err, GIR_E_SHAPE, "%s input %zu (%s) must be %d-D, found %s", OPN(n), i,
                    gir_op_operand_name(n->op, false, i, nm, sizeof nm), r, SHP(&v->shape));
}

static gir_status infer_Print(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    return input(g, n, 0, &x, err);
}

static gir_status infer_Sort(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *k, *v = NULL;
    TRY(input(g, n, 0, &k, err));
    TRY(need_rank(n, k, 0, 1, err));
    if (n->n_out != n->n_in)
        return gir_fail(err, GIR_E_SCHEMA, "Sort has %zu inputs but %zu outputs (one per input)", n->n_in, n->n_out);
    if (n->n_in > 1) {
        TRY(input(g, n, 1, &v, err));
        TRY(need_rank(n, v, 1, 1, err));
        if (k->shape.rank == 1 && v->shape.rank == 1 && k->shape.dims[0] >= 0 && v->shape.dims[0] >= 0 &&
            k->shape.dims[0] != v->shape.dims[0])
            return gir_fail(err, GIR_E_SHAPE, "Sort values %s and keys %s differ in length", SHP(&v->shape),
                            SHP(&k->shape));
    }
    ish s;
    ish_of(k, &s);
    TRY(set_out(g, n, 0, k->dtype, &s, err));
    if (v) {
        ish_of(v, &s);
        TRY(set_out(g, n, 1, v->dtype, &s, err));
    }
    return GIR_OK;
}

static gir_status infer_GatherBlocks(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *d, *ix;
    TRY(input(g, n, 0, &d, err));
    TRY(input(g, n, 1, &ix, err));
    TRY(need_rank(n, d, 0, 1, err));
    TRY(need_rank(n, ix, 1, 1, err));
    TRY(need_dtype(n, ix, 1, gir_dtype_is_int(ix->dtype), "an integer type", err));
    int64_t count = gir_node_int(n, "count", 0), bs = gir_node_int(n, "block_size", 1), len;
    if (ix->shape.rank == 1 && ix->shape.dims[0] >= 0 && count > ix->shape.dims[0])
        return gir_fail(err, GIR_E_ATTRIBUTE, "GatherBlocks count %lld is more than the %lld indices", (ll)count,
                        (ll)ix->shape.dims[0]);
    if (!mul_ok(count, bs, &len))
        return too_large(n, err);
    ish o;
    ish_rank(&o, 1);
    o.s.dims[0] = len;
    return set_out(g, n, 0, d->dtype, &o, err);
}

static gir_status infer_RangeFill(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    TRY(need_rank(n, x, 0, 1, err));
    double start = gir_node_float(n, "start", 0), limit = gir_node_float(n, "limit", 0),
           delta = gir_node_float(n, "delta", 0);
    if (delta == 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "RangeFill delta is 0");
    double len = ceil((limit - start) / delta);
    if (x->shape.rank == 1 && x->shape.dims[0] >= 0 && len != (double)x->shape.dims[0])
        return gir_fail(err, GIR_E_SHAPE, "RangeFill from %g to %g by %g has %g values but the input %s", start, limit,
                        delta, len, SHP(&x->shape));
    return infer_same(g, n, err);
}

static gir_status infer_SqueezeDetBoxDecode(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *d, *a;
    TRY(input(g, n, 0, &d, err));
    TRY(input(g, n, 1, &a, err));
    TRY(need_dtype(n, d, 0, d->dtype == GIR_DT_F32, "float32", err));
    TRY(need_dtype(n, a, 1, a->dtype == GIR_DT_F32, "float32", err));
    if (d->shape.rank >= 1 && d->shape.dims[d->shape.rank - 1] >= 0 && d->shape.dims[d->shape.rank - 1] != 4)
        return gir_fail(err, GIR_E_SHAPE, "SqueezeDetBoxDecode deltas %s must end in 4 (dx, dy, dw, dh)",
                        SHP(&d->shape));
    ish ds, as;
    ish_of(d, &ds);
    ish_of(a, &as);
    TRY(bcast_to(n, &ds, &as, "anchors", err));
    return set_out(g, n, 0, GIR_DT_F32, &ds, err);
}

static gir_status infer_YoloV3Decode(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *f, *a;
    TRY(input(g, n, 0, &f, err));
    TRY(input(g, n, 1, &a, err));
    TRY(need_rank(n, f, 0, 4, err));
    TRY(need_rank(n, a, 1, 2, err));
    TRY(need_dtype(n, f, 0, f->dtype == GIR_DT_F32, "float32", err));
    TRY(need_dtype(n, a, 1, a->dtype == GIR_DT_F32, "float32", err));
    int64_t A = a->shape.rank == 2 ? a->shape.dims[0] : -1, C = f->shape.rank == 4 ? f->shape.dims[1] : -1;
    if (a->shape.rank == 2 && a->shape.dims[1] >= 0 && a->shape.dims[1] != 2)
        return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode anchors %s must be [anchors, 2]", SHP(&a->shape));
    if (f->shape.rank == 4 && f->shape.dims[0] >= 0 && f->shape.dims[0] != 1)
        return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode feature %s must have batch 1", SHP(&f->shape));
    int64_t classes = -1;
    if (A > 0 && C >= 0) {
        if (C % A != 0 || C / A < 6)
            return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode feature has %lld channels, not %lld anchors times "
                            "(5 + classes)", (ll)C, (ll)A);
        classes = C / A - 5;
    }
    int64_t third[5] = { 2, 2, 4, 1, classes };
    for (size_t k = 0; k < 5; k++) {
        ish o;
        ish_rank(&o, 5);
        o.s.dims[0] = 1;
        o.s.dims[1] = A;
        o.s.dims[2] = third[k];
        o.s.dims[3] = f->shape.rank == 4 ? f->shape.dims[2] : -1;
        o.s.dims[4] = f->shape.rank == 4 ? f->shape.dims[3] : -1;
        TRY(set_out(g, n, k, GIR_DT_F32, &o, err));
    }
    return GIR_OK;
}

static gir_status infer_SubMean(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    TRY(need_rank(n, x, 0, 3, err));
    const double *m;
    ptrdiff_t nm = gir_attrs_get_floats(&n->attrs, "mean", &m);
    TRY(list_len(n, "mean", nm, 3, "one per channel", err));
    if (x->shape.rank == 3 && x->shape.dims[2] >= 0 && x->shape.dims[2] != 3)
        return gir_fail(err, GIR_E_SHAPE, "SubMean image %s must have 3 channels (HWC)", SHP(&x->shape));
    const char *to = gir_node_string(n, "to", NULL);
    gir_dtype dt = to ? gir_dtype_from_name(to) : GIR_DT_UNKNOWN;
    if (dt == GIR_DT_UNKNOWN || dt == GIR_DT_BOOL)
        return gir_fail(err, GIR_E_ATTRIBUTE, "SubMean attribute 'to' is '%s', not a numeric type name", to ? to : "");
    ish o;
    ish_rank(&o, 3);
    if (x->shape.rank == 3) {
        o.s.dims[0] = x->shape.dims[2];
        o.s.dims[1] = x->shape.dims[0];
        o.s.dims[2] = x->shape.dims[1];
    }
    return set_out(g, n, 0, dt, &o, err);
}

static gir_status infer_DotProduct(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *a, *b;
    TRY(input(g, n, 0, &a, err));
    TRY(input(g, n, 1, &b, err));
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, 2, &dt, err));
    if (a->shape.rank >= 0 && b->shape.rank >= 0 && gir_shape_is_known(&a->shape) &&
        gir_shape_is_known(&b->shape) && !gir_shape_equal(&a->shape, &b->shape))
        return gir_fail(err, GIR_E_SHAPE, "DotProduct inputs %s and %s differ in shape", SHP(&a->shape),
                        SHP(&b->shape));
    ish o;
    ish_rank(&o, 1);
    o.s.dims[0] = 1;
    return set_out(g, n, 0, dt, &o, err);
}

static gir_status infer_Stack(gir_graph *g, gir_node *n, gir_error *err)
{
    gir_dtype dt;
    TRY(same_dtype(g, n, 0, n->n_in, &dt, err));
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    for (size_t i = 1; i < n->n_in; i++) {
        const gir_value *v;
        TRY(input(g, n, i, &v, err));
        if (gir_shape_is_known(&x->shape) && gir_shape_is_known(&v->shape) && !gir_shape_equal(&x->shape, &v->shape))
            return gir_fail(err, GIR_E_SHAPE, "Stack inputs 0 %s and %zu %s differ in shape", SHP(&x->shape), i,
                            SHP(&v->shape));
    }
    ish xs, o;
    ish_of(x, &xs);
    if (xs.s.rank < 0) {
        ish_unknown(&o);
        return set_out(g, n, 0, dt, &o, err);
    }
    TRY(rank_limit(n, (ll)xs.s.rank + 1, err));
    int a = 0;
    TRY(norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank + 1, false, &a, err));
    ish_rank(&o, 0);
    for (int i = 0; i <= xs.s.rank; i++) {
        if (i == a)
            ish_push(&o, (int64_t)n->n_in, NULL);
        if (i < xs.s.rank)
            ish_push(&o, xs.s.dims[i], xs.nm[i]);
    }
    return set_out(g, n, 0, dt, &o, err);
}

static gir_status infer_Unstack(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(input(g, n, 0, &x, err));
    ish xs, o;
    ish_of(x, &xs);
    if (xs.s.rank < 0) {
        ish_unknown(&o);
        for (size_t k = 0; k < n->n_out; k++)
            TRY(set_out(g, n, k, x->dtype, &o, err));
        return GIR_OK;
    }
    int a = 0;
    TRY(norm_axis(n, "axis", gir_node_int(n, "axis", 0), xs.s.rank, false, &a, err));
    if (xs.s.dims[a] >= 0 && (size_t)xs.s.dims[a] != n->n_out)
        return gir_fail(err, GIR_E_SCHEMA, "Unstack of %s along axis %d needs %lld outputs, found %zu", SHP(&xs.s), a,
                        (ll)xs.s.dims[a], n->n_out);
    ish_rank(&o, 0);
    for (int i = 0; i < xs.s.rank; i++)
        if (i != a)
            ish_push(&o, xs.s.dims[i], xs.nm[i]);
    for (size_t k = 0; k < n->n_out; k++)
        TRY(set_out(g, n, k, x->dtype, &o, err));
    return GIR_OK;
}

/* ==== the table ============================================================= */

/* SPEC(attribute schema, inference, inputs, outputs, one-line doc) */
#define SPEC(attrs, infer, in, out, doc) attrs, sizeof attrs / sizeof attrs[0] - 1, doc, infer, in, out

#define UNARY(infer, in, out, doc) SPEC(no_attrs, infer, in, out, doc)
#define SPEC_Identity UNARY(infer_same, "input", "output", "copies the input unchanged")
#define SPEC_Relu UNARY(infer_same, "X", "Y", "rectified linear unit: max(x, 0)")
#define SPEC_Sigmoid UNARY(infer_same, "X", "Y", "logistic function 1 / (1 + exp(-x))")
#define SPEC_Tanh UNARY(infer_same, "input", "output", "hyperbolic tangent")
#define SPEC_LeakyRelu SPEC(attrs_LeakyRelu, infer_same, "X", "Y", "x for x >= 0, alpha * x below")
#define SPEC_Elu SPEC(attrs_Elu, infer_same, "X", "Y", "exponential linear unit: x for x >= 0, alpha * (exp(x) - 1) below")
#define SPEC_Selu \
    SPEC(attrs_Selu, infer_same, "X", "Y", "scaled exponential linear unit: gamma * (x > 0 ? x : alpha * (exp(x) - 1))")
#define SPEC_HardSigmoid SPEC(attrs_HardSigmoid, infer_same, "X", "Y", "max(0, min(1, alpha * x + beta))")
#define SPEC_Softplus UNARY(infer_same, "X", "Y", "log(1 + exp(x))")
#define SPEC_Softsign UNARY(infer_same, "input", "output", "x / (1 + |x|)")
#define SPEC_PRelu \
    SPEC(no_attrs, infer_PRelu, "X, slope", "Y", "x for x >= 0, slope * x below; slope broadcasts to the shape of x")
#define SPEC_Clip SPEC(attrs_Clip, infer_same, "input", "output", "limits every element to [min, max]")
#define SPEC_Exp UNARY(infer_same, "input", "output", "e raised to each element")
#define SPEC_Log UNARY(infer_same, "input", "output", "natural logarithm of each element")
#define SPEC_Sqrt UNARY(infer_same, "X", "Y", "square root of each element")
#define SPEC_Abs UNARY(infer_same, "X", "Y", "absolute value of each element")
#define SPEC_Neg UNARY(infer_same, "X", "Y", "negation of each element")
#define SPEC_Floor UNARY(infer_same, "X", "Y", "rounds each element down to an integer")
#define SPEC_Ceil UNARY(infer_same, "X", "Y", "rounds each element up to an integer")
#define SPEC_Round UNARY(infer_same, "X", "Y", "rounds each element to the nearest integer, halves to even")
#define SPEC_Reciprocal UNARY(infer_same, "X", "Y", "1 / x for each element")
#define SPEC_Sign UNARY(infer_same, "input", "output", "-1, 0 or 1 by the sign of each element")
#define SPEC_Erf UNARY(infer_same, "input", "output", "Gauss error function of each element")
#define SPEC_Sin UNARY(infer_same, "input", "output", "sine of each element")
#define SPEC_Cos UNARY(infer_same, "input", "output", "cosine of each element")
#define SPEC_Not UNARY(infer_Not, "X", "Y", "logical negation of a bool tensor")
#define SPEC_Cast SPEC(attrs_Cast, infer_Cast, "input", "output", "converts each element to the type named by 'to'")

#define BINARY(infer, doc) SPEC(no_attrs, infer, "A, B", "C", doc)
#define SPEC_Add BINARY(infer_broadcast, "elementwise sum a + b (numpy broadcasting)")
#define SPEC_Sub BINARY(infer_broadcast, "elementwise difference a - b (numpy broadcasting)")
#define SPEC_Mul BINARY(infer_broadcast, "elementwise product a * b (numpy broadcasting)")
#define SPEC_Div BINARY(infer_broadcast, "elementwise quotient a / b, truncated for integers (numpy broadcasting)")
#define SPEC_Pow \
    SPEC(no_attrs, infer_Pow, "X, Y", "Z", "x raised to the power y, elementwise; the result has the type of x (broadcasting)")
#define SPEC_Mod SPEC(attrs_Mod, infer_broadcast, "A, B", "C", "remainder of a / b, elementwise (numpy broadcasting)")
#define SPEC_Max SPEC(no_attrs, infer_broadcast, "data_0...", "max", "elementwise maximum of one or more tensors (broadcasting)")
#define SPEC_Min SPEC(no_attrs, infer_broadcast, "data_0...", "min", "elementwise minimum of one or more tensors (broadcasting)")
#define SPEC_Sum SPEC(no_attrs, infer_broadcast, "data_0...", "sum", "elementwise sum of one or more tensors (broadcasting)")
#define SPEC_Mean SPEC(no_attrs, infer_broadcast, "data_0...", "mean", "elementwise mean of one or more tensors (broadcasting)")
#define SPEC_Equal BINARY(infer_compare, "a == b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_Greater BINARY(infer_compare, "a > b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_Less BINARY(infer_compare, "a < b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_GreaterOrEqual BINARY(infer_compare, "a >= b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_LessOrEqual BINARY(infer_compare, "a <= b elementwise, a bool tensor (numpy broadcasting)")
#define SPEC_And BINARY(infer_logic, "logical and of two bool tensors (numpy broadcasting)")
#define SPEC_Or BINARY(infer_logic, "logical or of two bool tensors (numpy broadcasting)")
#define SPEC_Xor BINARY(infer_logic, "logical exclusive or of two bool tensors (numpy broadcasting)")
#define SPEC_Where \
    SPEC(no_attrs, infer_Where, "condition, X, Y", "output", "x where condition is true, y elsewhere (numpy broadcasting)")

#define SPEC_Conv                                           \
    SPEC(attrs_Conv, infer_Conv, "X, W, B?", "Y",           \
         "convolution of X [N, C, spatial...] with W [M, C / group, kernel...], plus bias B [M]")
#define SPEC_ConvTranspose                                          \
    SPEC(attrs_ConvTranspose, infer_ConvTranspose, "X, W, B?", "Y", \
         "transposed convolution (the gradient of Conv) of X with W [C, M / group, kernel...], plus bias B [M]")
#define SPEC_Gemm \
    SPEC(attrs_Gemm, infer_Gemm, "A, B, C?", "Y", "alpha * A' B' + beta * C for matrices, A' and B' optionally transposed")
#define SPEC_MatMul \
    SPEC(no_attrs, infer_MatMul, "A, B", "Y", "matrix product, numpy semantics: batch axes broadcast, vectors promoted")
#define SPEC_BatchNormalization                                                      \
    SPEC(attrs_BatchNormalization, infer_norm, "X, scale, B, mean, var", "Y",        \
         "per-channel (x - mean) / sqrt(var + epsilon) * scale + B with stored statistics")
#define SPEC_InstanceNormalization                                        \
    SPEC(attrs_InstanceNormalization, infer_norm, "input, scale, B", "output", \
         "normalises each channel of each sample over its spatial axes, then scales and shifts")
#define SPEC_LRN SPEC(attrs_LRN, infer_same, "X", "Y", "local response normalisation across neighbouring channels")
#define SPEC_MaxPool                                            \
    SPEC(attrs_MaxPool, infer_pool, "X", "Y, Indices?",         \
         "maximum over sliding windows of the spatial axes, with optional int64 indices of the maxima")
#define SPEC_AveragePool SPEC(attrs_AveragePool, infer_pool, "X", "Y", "mean over sliding windows of the spatial axes")
#define SPEC_GlobalMaxPool \
    SPEC(no_attrs, infer_global_pool, "X", "Y", "maximum over all spatial axes, which stay with size 1")
#define SPEC_GlobalAveragePool \
    SPEC(no_attrs, infer_global_pool, "X", "Y", "mean over all spatial axes, which stay with size 1")
#define SPEC_Softmax SPEC(attrs_Softmax, infer_softmax, "input", "output", "exp(x) / sum(exp(x)) along axis")
#define SPEC_LogSoftmax SPEC(attrs_Softmax, infer_softmax, "input", "output", "log of Softmax along axis")
#define SPEC_Dropout                                            \
    SPEC(attrs_Dropout, infer_Dropout, "data", "output, mask?", \
         "identity in inference; in training zeroes elements with probability ratio (optional bool mask)")

#define REDUCE(doc) SPEC(attrs_Reduce, infer_reduce, "data", "reduced", doc)
#define SPEC_ReduceSum SPEC(attrs_ReduceSum, infer_reduce, "data", "reduced", "sum over the given axes")
#define SPEC_ReduceMean REDUCE("mean over the given axes")
#define SPEC_ReduceMax REDUCE("maximum over the given axes")
#define SPEC_ReduceMin REDUCE("minimum over the given axes")
#define SPEC_ReduceProd REDUCE("product over the given axes")
#define SPEC_ArgMax SPEC(attrs_Arg, infer_arg, "data", "reduced", "int64 index of the maximum along axis")
#define SPEC_ArgMin SPEC(attrs_Arg, infer_arg, "data", "reduced", "int64 index of the minimum along axis")

#define SPEC_Reshape \
    SPEC(attrs_Reshape, infer_Reshape, "data", "reshaped", "the same elements in a new shape (0 copies a dimension, -1 infers one)")
#define SPEC_Flatten                                                   \
    SPEC(attrs_Flatten, infer_Flatten, "input", "output",              \
         "reshapes to a matrix: the axes before axis, then the rest")
#define SPEC_Transpose SPEC(attrs_Transpose, infer_Transpose, "data", "transposed", "permutes the axes")
#define SPEC_Squeeze SPEC(attrs_Squeeze, infer_Squeeze, "data", "squeezed", "removes axes of size 1")
#define SPEC_Unsqueeze SPEC(attrs_Unsqueeze, infer_Unsqueeze, "data", "expanded", "inserts axes of size 1")
#define SPEC_Concat SPEC(attrs_Concat, infer_Concat, "inputs...", "concat_result", "joins tensors along axis")
#define SPEC_Split SPEC(attrs_Split, infer_Split, "input", "outputs...", "cuts a tensor along axis into several outputs")
#define SPEC_Slice SPEC(attrs_Slice, infer_Slice, "data", "output", "takes starts:ends:steps along the chosen axes")
#define SPEC_Pad SPEC(attrs_Pad, infer_Pad, "data", "output", "pads each axis (or crops it, with negative pads)")
#define SPEC_Tile SPEC(attrs_Tile, infer_Tile, "input", "output", "repeats the tensor along each axis")
#define SPEC_Expand SPEC(attrs_Expand, infer_Expand, "input", "output", "broadcasts the input with shape (numpy rules)")
#define SPEC_Gather \
    SPEC(attrs_Gather, infer_Gather, "data, indices", "output", "entries of data along axis picked by integer indices")
#define SPEC_Resize                                                 \
    SPEC(attrs_Resize, infer_Resize, "X", "Y",                      \
         "resizes axes by scales or to sizes with nearest, linear or cubic interpolation")
#define SPEC_DepthToSpace                                                 \
    SPEC(attrs_DepthToSpace, infer_space_depth, "input", "output",        \
         "moves channel blocks into space: [N, C, H, W] to [N, C / b^2, H * b, W * b]")
#define SPEC_SpaceToDepth                                                 \
    SPEC(attrs_SpaceToDepth, infer_space_depth, "input", "output",        \
         "moves spatial blocks into channels: [N, C, H, W] to [N, C * b^2, H / b, W / b]")
#define SPEC_Shape SPEC(no_attrs, infer_Shape, "data", "shape", "the input's dimensions as an int64 vector")

#define SPEC_Print                                                                                   \
    SPEC(attrs_Print, infer_Print, "input", "",                                                      \
         "writes message, then the tensor in nested brackets (%.3f floats, %d/%u integers) to stdout " \
         "or to file")
#define SPEC_Sort \
    SPEC(attrs_Sort, infer_Sort, "keys, values?", "sorted_keys, sorted_values?", "stable sort of a 1-D tensor; values follow their keys")
#define SPEC_GatherBlocks                                          \
    SPEC(attrs_GatherBlocks, infer_GatherBlocks, "data, indices", "output", \
         "copies block_size-element blocks of 1-D data at the first count indices")
#define SPEC_RangeFill                                                     \
    SPEC(attrs_RangeFill, infer_RangeFill, "input", "output",               \
         "start, start + delta, ... in the input's type and length (its values are not read)")
#define SPEC_SqueezeDetBoxDecode                                                   \
    SPEC(attrs_SqueezeDetBoxDecode, infer_SqueezeDetBoxDecode, "deltas, anchors", "boxes", \
         "SqueezeDet box decoding: deltas and anchors [..., 4] to clipped [x1, y1, x2, y2] image boxes")
#define SPEC_YoloV3Decode                                                                              \
    SPEC(attrs_YoloV3Decode, infer_YoloV3Decode, "feature, anchors", "box_centers, box_sizes, boxes, confs, probs", \
         "YOLOv3 head decoding of one feature map [1, A*(5+C), H, W]")
#define SPEC_SubMean \
    SPEC(attrs_SubMean, infer_SubMean, "image", "output", "HWC image minus the per-channel mean, as CHW of type 'to'")
#define SPEC_DotProduct \
    SPEC(no_attrs, infer_DotProduct, "A, B", "dot", "sum of the elementwise products of two equal-shaped tensors, shape [1]")
#define SPEC_Stack SPEC(attrs_Stack, infer_Stack, "inputs...", "stacked", "joins equal-shaped tensors along a new axis")
#define SPEC_Unstack SPEC(attrs_Unstack, infer_Unstack, "input", "outputs...", "splits a tensor into its slices along axis, the axis removed")

/* Every row of ops.def has a SPEC (else SPEC_<op> is undeclared) whose doc
 * is a real sentence. */
#define SPEC_DOC_(attrs, n_attrs, doc, ...) doc
#define SPEC_DOC(...) SPEC_DOC_(__VA_ARGS__)
#define GIR_OP(id, mi, ma, mo, mxo, cat) \
    _Static_assert(sizeof(SPEC_DOC(SPEC_##id)) > 10, "ops.def row " #id " needs a one-line doc in its SPEC");
#include "ops.def"
#undef GIR_OP

static const gir_op_info table[] = {
    [GIR_OP_OPAQUE] = { "opaque", "opaque", 0, GIR_VARIADIC, 0, GIR_VARIADIC, no_attrs, 0,
                        "an operator kept verbatim from its source format", NULL, "inputs...", "outputs..." },
#define GIR_OP(id, mi, ma, mo, mxo, cat) [GIR_OP_##id] = { #id, cat, mi, ma, mo, mxo, SPEC_##id },
#include "ops.def"
#undef GIR_OP
};

_Static_assert(sizeof table / sizeof table[0] == GIR_OP_COUNT_, "one table row per ops.def row");

const gir_op_info *gir_op_get(gir_op op)
{
    return (unsigned)op < GIR_OP_COUNT_ ? &table[op] : NULL;
}

const char *gir_op_name(gir_op op)
{
    return (unsigned)op < GIR_OP_COUNT_ ? table[op].name : "?";
}

gir_op gir_op_from_name(const char *name)
{
    for (int i = 1; name && i < GIR_OP_COUNT_; i++)
        if (strcmp(table[i].name, name) == 0)
            return (gir_op)i;
    return GIR_OP_OPAQUE;
}

const gir_attr_schema *gir_op_attr_schema(gir_op op, const char *name)
{
    if ((unsigned)op >= GIR_OP_COUNT_ || !name)
        return NULL;
    return gir_attr_schema_find(table[op].attrs, table[op].attrs, name);
}

const char *gir_op_operand_name(gir_op op, bool output, size_t i, char *buf, size_t n)
{
    if (!n)
        return buf;
    snprintf(buf, n, "?");
    if ((unsigned)op >= GIR_OP_COUNT_)
        return buf;
    const char *p = output ? table[op].outputs : table[op].inputs;
    for (size_t k = 0; p && *p; k++) {
        size_t len = strcspn(p, ",");
        size_t name_len = strcspn(p, ",?.");
        bool variadic = len >= 3 && strncmp(p + len - 3, "...", 3) == 0;
        if (k == i || variadic) {
            snprintf(buf, n, "%.*s", (int)name_len, p);
            return buf;
        }
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return buf;
}

const char *gir_attr_type_name(gir_attr_type t)
{
    static const char *const names[] = { "int", "float", "bool", "string", "ints", "floats", "strings", "tensor" };
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* "2", "2 to 3", "1 or more" */
static const char *count_text(unsigned lo, unsigned hi, char *buf, size_t n)
{
    if (hi == GIR_VARIADIC)
        snprintf(buf, n, "%u or more", lo);
    else if (lo == hi)
        snprintf(buf, n, "%u", lo);
    else
        snprintf(buf, n, "%u to %u", lo, hi);
    return buf;
}

/* What range r asks for when v is outside it, else NULL. */
static const char *range_miss(gir_attr_range r, int64_t v)
{
    switch (r) {
    case GIR_RANGE_ANY: return NULL;
    case GIR_RANGE_BOOL: return v == 0 || v == 1 ? NULL : "0 or 1";
    case GIR_RANGE_POSITIVE: return v >= 1 ? NULL : "1 or more";
    case GIR_RANGE_NONNEG: return v >= 0 ? NULL : "0 or more";
    }
    return NULL;
}

static gir_status check_range(const gir_node *n, const gir_attr_schema *s, int64_t v, size_t at, bool list,
                              gir_error *err)
{
    const char *want = range_miss(s->range, v);
    if (!want)
        return GIR_OK;
    if (list)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has value %lld at position %zu, expected %s",
                        OPN(n), s->name, (ll)v, at, want);
    return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' is %lld, expected %s", OPN(n), s->name, (ll)v, want);
}

/* a against its schema s (NULL: the operator has no such attribute). */
static gir_status check_attr(const gir_node *n, const gir_attr *a, const gir_attr_schema *s, gir_error *err)
{
    if (!s)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s has no attribute '%s'", OPN(n), a->name);
    if (a->type != s->type)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has type %s, expected %s", OPN(n), a->name,
                        gir_attr_type_name(a->type), gir_attr_type_name(s->type));
    if (s->type == GIR_ATTR_INT)
        return check_range(n, s, a->u.i, 0, false, err);
    if (s->type == GIR_ATTR_INTS) {
        for (size_t i = 0; s->range != GIR_RANGE_ANY && i < a->u.ints.n; i++)
            if (range_miss(s->range, a->u.ints.v[i]))
                return check_range(n, s, a->u.ints.v[i], i, true, err);
        return GIR_OK;
    }
    /* float attributes may be infinite or NaN: a Pad of -inf before a max
     * pooling, a Clip without a bound, ... are legitimate computations */
    if (s->type == GIR_ATTR_STRING && s->choices) {
        if (choice_index(s->choices, a->u.s) >= 0)
            return GIR_OK;
        gir_buf b = GIR_BUF_INIT;
        for (const char *const *c = s->choices; *c; c++)
            gir_buf_printf(&b, "%s%s", c == s->choices ? "" : ", ", *c);
        gir_status st = gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' is '%s', expected one of %s", OPN(n),
                                 a->name, a->u.s, b.data ? b.data : "?");
        gir_buf_free(&b);
        return st;
    }
    return GIR_OK;
}

gir_status gir_op_check_node(const gir_graph *g, const gir_node *n, gir_error *err)
{
    if ((unsigned)n->op >= GIR_OP_COUNT_)
        return gir_fail(err, GIR_E_INTERNAL, "operator id %d is outside the operator table", (int)n->op);
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i] < -1 || (n->in[i] >= 0 && (size_t)n->in[i] >= g->n_values))
            return gir_fail(err, GIR_E_REFERENCE, "input %zu refers to value %d of %zu", i, (int)n->in[i],
                            g->n_values);
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i] < -1 || (n->out[i] >= 0 && (size_t)n->out[i] >= g->n_values))
            return gir_fail(err, GIR_E_REFERENCE, "output %zu refers to value %d of %zu", i, (int)n->out[i],
                            g->n_values);
    if (n->op == GIR_OP_OPAQUE)
        return GIR_OK;
    const gir_op_info *op = &table[n->op];
    char cnt[32], nm[32];
    if (n->n_in < op->min_in || (op->max_in != GIR_VARIADIC && n->n_in > op->max_in))
        return gir_fail(err, GIR_E_SCHEMA, "%s takes %s inputs, found %zu", op->name,
                        count_text(op->min_in, op->max_in, cnt, sizeof cnt), n->n_in);
    if (n->n_out < op->min_out || (op->max_out != GIR_VARIADIC && n->n_out > op->max_out))
        return gir_fail(err, GIR_E_SCHEMA, "%s has %s outputs, found %zu", op->name,
                        count_text(op->min_out, op->max_out, cnt, sizeof cnt), n->n_out);
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i] < 0 && (i < op->min_in || op->max_in == GIR_VARIADIC))
            return gir_fail(err, GIR_E_REFERENCE, "%s input %zu (%s) is required but omitted", op->name, i,
                            gir_op_operand_name(n->op, false, i, nm, sizeof nm));
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i] < 0 && (i < op->min_out || op->max_out == GIR_VARIADIC))
            return gir_fail(err, GIR_E_REFERENCE, "%s output %zu (%s) is not connected", op->name, i,
                            gir_op_operand_name(n->op, true, i, nm, sizeof nm));
    /* normalised nodes keep their attributes in schema order: each search
     * starts after the row found last */
    const gir_attr_schema *next = op->attrs;
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        const gir_attr_schema *s = gir_attr_schema_find(op->attrs, next, a->name);
        if (s)
            next = s + 1;
        TRY(check_attr(n, a, s, err));
    }
    for (const gir_attr_schema *s = op->attrs; s->name; s++)
        if (s->presence == GIR_ATTR_REQUIRED && !gir_attrs_find(&n->attrs, s->name))
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s needs attribute '%s'", op->name, s->name);
    return GIR_OK;
}

gir_status gir_op_infer(gir_graph *g, gir_node *n, gir_error *err)
{
    if (n->op == GIR_OP_OPAQUE)
        return GIR_OK;
    gir_status st = gir_op_check_node(g, n, err);
    if (st != GIR_OK) {
        gir_err_node(err, n->name);
        return st;
    }
    return gir_op_infer_checked(g, n, err);
}

gir_status gir_op_infer_checked(gir_graph *g, gir_node *n, gir_error *err)
{
    if (n->op == GIR_OP_OPAQUE)
        return GIR_OK;
    gir_status st = table[n->op].infer(g, n, err);
    if (st != GIR_OK)
        gir_err_node(err, n->name);
    return st;
}
