/* Elementwise kernels: unary activations and math, Cast, numpy-broadcast
 * binary arithmetic, comparison and logic, Where, variadic Max/Min/Sum/Mean,
 * PRelu. */
#include "rt.h"
#include "core/elem.h"

#include <float.h>
#include <stdlib.h>
#include <limits.h>

/* ---- unary, float32 ------------------------------------------------------ */

typedef struct unary_params {
    float alpha, beta, gamma, lo, hi;
} unary_params;

typedef void (*unary_fn)(const float *x, float *y, size_t n, const unary_params *p);

#define UNARY(name, expr)                                                          \
    RT_CLONES static void name(const float *x, float *y, size_t n, const unary_params *p)    \
    {                                                                              \
        (void)p;                                                                   \
        for (size_t i = 0; i < n; i++) {                                           \
            float v = x[i];                                                        \
            y[i] = (expr);                                                         \
        }                                                                          \
    }

static inline float sigmoidf(float v)
{
    if (v >= 0.0f)
        return 1.0f / (1.0f + expf(-v));
    float e = expf(v);
    return e / (1.0f + e);
}

static inline float softplusf(float v)
{
    return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
}

static inline float signf(float v)
{
    return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v; /* keeps -0, 0 and NaN */
}

/* HardSigmoid's clamp of t = alpha x + beta to [0, 1]; NaN passes (ONNX
 * propagates it, as Clip does: fmaxf/fminf would make it 0 or 1). */
static inline float hardsigmoidf(float t)
{
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

/* NaN passes through Relu and Clip (as numpy's maximum/minimum do). */
UNARY(u_relu, v < 0.0f ? 0.0f : v)
UNARY(u_sigmoid, sigmoidf(v))
UNARY(u_tanh, tanhf(v))
UNARY(u_leaky, v < 0.0f ? p->alpha * v : v)
UNARY(u_elu, v < 0.0f ? p->alpha * expm1f(v) : v)
UNARY(u_selu, v > 0.0f ? p->gamma * v : p->gamma * (p->alpha * expf(v) - p->alpha))
UNARY(u_hardsigmoid, hardsigmoidf(p->alpha * v + p->beta))
UNARY(u_softplus, softplusf(v))
UNARY(u_softsign, v / (1.0f + fabsf(v)))
UNARY(u_clip, v < p->lo ? p->lo : (v > p->hi ? p->hi : v))
UNARY(u_exp, expf(v))
UNARY(u_log, logf(v))
UNARY(u_sqrt, sqrtf(v))
UNARY(u_abs, fabsf(v))
UNARY(u_neg, -v)
UNARY(u_floor, floorf(v))
UNARY(u_ceil, ceilf(v))
UNARY(u_round, rintf(v)) /* half to even in the default rounding mode */
UNARY(u_reciprocal, 1.0f / v)
UNARY(u_sign, signf(v))
UNARY(u_erf, erff(v))
UNARY(u_sin, sinf(v))
UNARY(u_cos, cosf(v))

static unary_fn unary_for(gir_op op)
{
    switch (op) {
    case GIR_OP_Relu: return u_relu;
    case GIR_OP_Sigmoid: return u_sigmoid;
    case GIR_OP_Tanh: return u_tanh;
    case GIR_OP_LeakyRelu: return u_leaky;
    case GIR_OP_Elu: return u_elu;
    case GIR_OP_Selu: return u_selu;
    case GIR_OP_HardSigmoid: return u_hardsigmoid;
    case GIR_OP_Softplus: return u_softplus;
    case GIR_OP_Softsign: return u_softsign;
    case GIR_OP_Clip: return u_clip;
    case GIR_OP_Exp: return u_exp;
    case GIR_OP_Log: return u_log;
    case GIR_OP_Sqrt: return u_sqrt;
    case GIR_OP_Abs: return u_abs;
    case GIR_OP_Neg: return u_neg;
    case GIR_OP_Floor: return u_floor;
    case GIR_OP_Ceil: return u_ceil;
    case GIR_OP_Round: return u_round;
    case GIR_OP_Reciprocal: return u_reciprocal;
    case GIR_OP_Sign: return u_sign;
    case GIR_OP_Erf: return u_erf;
    case GIR_OP_Sin: return u_sin;
    case GIR_OP_Cos: return u_cos;
    default: return NULL;
    }
}

typedef struct unary_state {
    unary_params p;
} unary_state;

/* Integer forms of the ops that have them. */
static bool unary_int_ok(gir_op op)
{
    return op == GIR_OP_Abs || op == GIR_OP_Neg || op == GIR_OP_Sign || op == GIR_OP_Relu || op == GIR_OP_Clip;
}

static gir_status unary_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    gir_op op = c->node->op;
    if (x->dtype != GIR_DT_F32 && !((x->dtype == GIR_DT_I32 || x->dtype == GIR_DT_I64) && unary_int_ok(op)))
        return rt_no_kernel_dtype(c, x->dtype, err);
    unary_state *st = rt_state(c, sizeof *st);
    if (!st)
        return gir_nomem(err);
    switch (op) {
    case GIR_OP_LeakyRelu:
        st->p.alpha = (float)rt_float(c, "alpha", 0.01);
        break;
    case GIR_OP_Elu:
        st->p.alpha = (float)rt_float(c, "alpha", 1.0);
        break;
    case GIR_OP_Selu:
        st->p.alpha = (float)rt_float(c, "alpha", 1.67326319217681884765625);
        st->p.gamma = (float)rt_float(c, "gamma", 1.05070102214813232421875);
        break;
    case GIR_OP_HardSigmoid:
        st->p.alpha = (float)rt_float(c, "alpha", 0.2);
        st->p.beta = (float)rt_float(c, "beta", 0.5);
        break;
    case GIR_OP_Clip:
        st->p.lo = (float)rt_float(c, "min", -INFINITY);
        st->p.hi = (float)rt_float(c, "max", INFINITY);
        break;
    default:
        break;
    }
    return rt_set_out(c->out[0], x->dtype, &x->shape, err);
}

typedef struct unary_job {
    unary_fn fn;
    const float *x;
    float *y;
    const unary_params *p;
} unary_job;

static void unary_part(void *ctx, size_t b, size_t e, int worker)
{
    (void)worker;
    unary_job *j = ctx;
    j->fn(j->x + b, j->y + b, e - b, j->p);
}

typedef struct act_job {
    rt_act act;
    const float *x;
    float *y;
} act_job;

static void act_part(void *ctx, size_t b, size_t e, int worker)
{
    (void)worker;
    act_job *j = ctx;
    rt_act_map(&j->act, j->x + b, j->y + b, e - b);
}

#define INT_UNARY(T, TMIN, TMAX)                                                                    \
    static void int_unary_##T(gir_op op, const T *x, T *y, size_t n, const unary_params *p)         \
    {                                                                                               \
        for (size_t i = 0; i < n; i++) {                                                            \
            T v = x[i];                                                                             \
            switch (op) {                                                                           \
            case GIR_OP_Abs: y[i] = v < 0 ? (T)(0 - (u##T)v) : v; break;                           \
            case GIR_OP_Neg: y[i] = (T)(0 - (u##T)v); break;                                        \
            case GIR_OP_Sign: y[i] = (T)((v > 0) - (v < 0)); break;                                 \
            case GIR_OP_Relu: y[i] = v < 0 ? 0 : v; break;                                          \
            default: {                                                                              \
                double lo = p->lo, hi = p->hi;                                                      \
                T l = lo <= (double)TMIN ? TMIN : lo >= (double)TMAX ? TMAX : (T)lo;                \
                T h = hi <= (double)TMIN ? TMIN : hi >= (double)TMAX ? TMAX : (T)hi;                \
                y[i] = v < l ? l : v > h ? h : v;                                                   \
            }                                                                                       \
            }                                                                                       \
        }                                                                                           \
    }
INT_UNARY(int32_t, INT32_MIN, INT32_MAX)
INT_UNARY(int64_t, INT64_MIN, INT64_MAX)

static gir_status unary_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    unary_state *st = c->state;
    if (x->dtype == GIR_DT_I32) {
        int_unary_int32_t(c->node->op, x->data, y->data, x->numel, &st->p);
        return GIR_OK;
    }
    if (x->dtype == GIR_DT_I64) {
        int_unary_int64_t(c->node->op, x->data, y->data, x->numel, &st->p);
        return GIR_OK;
    }
    if (c->node->op == GIR_OP_Sigmoid || c->node->op == GIR_OP_Erf) {
        /* the vectorised forms of k_act.c */
        act_job aj = { { true, 0, 0, c->node->op == GIR_OP_Sigmoid ? RT_ACT_SIGMOID : RT_ACT_ERF, 0, 0 }, x->data,
                       y->data };
        rt_parallel_for(c->th, x->numel, 64, 1 << 15, act_part, &aj);
        return GIR_OK;
    }
    unary_job j = { unary_for(c->node->op), x->data, y->data, &st->p };
    rt_parallel_for(c->th, x->numel, 64, 1 << 15, unary_part, &j);
    return GIR_OK;
}

const rt_kernel gir_k_unary = { unary_prepare, unary_run, free, RT_INPLACE };

/* ---- Not ---------------------------------------------------------------- */

static gir_status not_prepare(rt_call *c, gir_error *err)
{
    if (c->in[0]->dtype != GIR_DT_BOOL)
        return rt_no_kernel_dtype(c, c->in[0]->dtype, err);
    return rt_set_out(c->out[0], GIR_DT_BOOL, &c->in[0]->shape, err);
}

static gir_status not_run(rt_call *c, gir_error *err)
{
    (void)err;
    const uint8_t *x = c->in[0]->data;
    uint8_t *y = c->out[0]->data;
    for (size_t i = 0; i < c->in[0]->numel; i++)
        y[i] = !x[i];
    return GIR_OK;
}

const rt_kernel gir_k_not = { not_prepare, not_run, NULL, RT_INPLACE };

/* ---- Identity (a view) ----------------------------------------------------- */

static gir_status identity_prepare(rt_call *c, gir_error *err)
{
    for (size_t i = 0; i < c->n_out; i++)
        if (c->out[i] && i > 0)
            return gir_fail(err, GIR_E_SCHEMA, "Identity has one output");
    return rt_set_out(c->out[0], c->in[0]->dtype, &c->in[0]->shape, err);
}

static gir_status view_run(rt_call *c, gir_error *err)
{
    (void)c;
    (void)err;
    return GIR_OK; /* the output is the input's storage */
}

const rt_kernel gir_k_identity = { identity_prepare, view_run, NULL, RT_VIEW };

/* ---- Cast ------------------------------------------------------------------- */

/* The target type: a dtype name ("float32") or an ONNX TensorProto code. */
static gir_dtype cast_target(const rt_call *c)
{
    const gir_attr *a = gir_attrs_find(&c->node->attrs, "to");
    if (!a)
        return GIR_DT_UNKNOWN;
    if (a->type == GIR_ATTR_STRING)
        return gir_dtype_from_name(a->u.s);
    if (a->type != GIR_ATTR_INT)
        return GIR_DT_UNKNOWN;
    switch (a->u.i) {
    case 1: return GIR_DT_F32;
    case 2: return GIR_DT_U8;
    case 3: return GIR_DT_I8;
    case 4: return GIR_DT_U16;
    case 5: return GIR_DT_I16;
    case 6: return GIR_DT_I32;
    case 7: return GIR_DT_I64;
    case 9: return GIR_DT_BOOL;
    case 10: return GIR_DT_F16;
    case 11: return GIR_DT_F64;
    case 12: return GIR_DT_U32;
    case 13: return GIR_DT_U64;
    case 16: return GIR_DT_BF16;
    default: return GIR_DT_UNKNOWN;
    }
}

static bool cast_type_ok(gir_dtype t)
{
    return t > GIR_DT_UNKNOWN && t < GIR_DT_COUNT_;
}

static gir_status cast_prepare(rt_call *c, gir_error *err)
{
    gir_dtype to = cast_target(c);
    if (to == GIR_DT_UNKNOWN)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Cast needs a known target type in attribute to");
    if (!cast_type_ok(c->in[0]->dtype))
        return rt_no_kernel_dtype(c, c->in[0]->dtype, err);
    if (!cast_type_ok(to))
        return gir_fail(err, GIR_E_NO_KERNEL, "no kernel for Cast to %s", gir_dtype_name(to));
    return rt_set_out(c->out[0], to, &c->in[0]->shape, err);
}


/* Float to integer: truncation toward zero, saturating at the type's range
 * (NaN gives 0): defined behaviour for every input. */
static int64_t sat_i64(double v, double lo, double hi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

static uint64_t sat_u64(double v, double hi)
{
    if (v != v || v <= 0)
        return 0;
    if (v >= hi)
        return (uint64_t)hi;
    return (uint64_t)v;
}

static gir_status cast_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    gir_dtype from = x->dtype, to = y->dtype;
    size_t n = x->numel;
    if (from == to) {
        memmove(y->data, x->data, n * gir_dtype_size(to));
        return GIR_OK;
    }
    bool from_int64 = from == GIR_DT_I64 || from == GIR_DT_U64;
    for (size_t i = 0; i < n; i++) {
        /* 64-bit integers go through integers so large values stay exact */
        if (from_int64 && !gir_dtype_is_float(to)) {
            int64_t sv = from == GIR_DT_I64 ? ((const int64_t *)x->data)[i] : 0;
            uint64_t uv = from == GIR_DT_U64 ? ((const uint64_t *)x->data)[i] : 0;
            bool neg = from == GIR_DT_I64 && sv < 0;
            uint64_t bits = from == GIR_DT_I64 ? (uint64_t)sv : uv;
            switch (to) {
            case GIR_DT_BOOL: ((uint8_t *)y->data)[i] = bits != 0; break;
            case GIR_DT_I8: ((int8_t *)y->data)[i] = (int8_t)bits; break; /* wraps, as C casts of two's complement */
            case GIR_DT_I16: ((int16_t *)y->data)[i] = (int16_t)bits; break;
            case GIR_DT_I32: ((int32_t *)y->data)[i] = (int32_t)bits; break;
            case GIR_DT_I64: ((int64_t *)y->data)[i] = (int64_t)bits; break;
            case GIR_DT_U8: ((uint8_t *)y->data)[i] = (uint8_t)bits; break;
            case GIR_DT_U16: ((uint16_t *)y->data)[i] = (uint16_t)bits; break;
            case GIR_DT_U32: ((uint32_t *)y->data)[i] = (uint32_t)bits; break;
            case GIR_DT_U64: ((uint64_t *)y->data)[i] = bits; break;
            default: break;
            }
            (void)neg;
            continue;
        }
        double v = from == GIR_DT_I64 ? (double)((const int64_t *)x->data)[i]
                 : from == GIR_DT_U64 ? (double)((const uint64_t *)x->data)[i]
                                      : gir_elem_as_double(x->data, from, i);
        bool from_int = !gir_dtype_is_float(from);
        switch (to) {
        case GIR_DT_F32: ((float *)y->data)[i] = (float)v; break;
        case GIR_DT_F64: ((double *)y->data)[i] = v; break;
        case GIR_DT_F16: ((uint16_t *)y->data)[i] = gir_float_to_half((float)v); break;
        case GIR_DT_BF16: ((uint16_t *)y->data)[i] = gir_float_to_bf16((float)v); break;
        case GIR_DT_BOOL: ((uint8_t *)y->data)[i] = v != 0; break; /* NaN is true */
        case GIR_DT_I8: ((int8_t *)y->data)[i] = from_int ? (int8_t)(int64_t)v : (int8_t)sat_i64(v, INT8_MIN, INT8_MAX); break;
        case GIR_DT_I16: ((int16_t *)y->data)[i] = from_int ? (int16_t)(int64_t)v : (int16_t)sat_i64(v, INT16_MIN, INT16_MAX); break;
        case GIR_DT_I32: ((int32_t *)y->data)[i] = from_int ? (int32_t)(int64_t)v : (int32_t)sat_i64(v, INT32_MIN, INT32_MAX); break;
        case GIR_DT_I64: ((int64_t *)y->data)[i] = from_int ? (int64_t)v : sat_i64(v, -9223372036854775808.0, 9223372036854774784.0); break;
        case GIR_DT_U8: ((uint8_t *)y->data)[i] = from_int ? (uint8_t)(int64_t)v : (uint8_t)sat_u64(v, UINT8_MAX); break;
        case GIR_DT_U16: ((uint16_t *)y->data)[i] = from_int ? (uint16_t)(int64_t)v : (uint16_t)sat_u64(v, UINT16_MAX); break;
        case GIR_DT_U32: ((uint32_t *)y->data)[i] = from_int ? (uint32_t)(int64_t)v : (uint32_t)sat_u64(v, UINT32_MAX); break;
        case GIR_DT_U64: ((uint64_t *)y->data)[i] = from_int ? (uint64_t)(int64_t)v : sat_u64(v, 18446744073709549568.0); break;
        default: break;
        }
    }
    return GIR_OK;
}

const rt_kernel gir_k_cast = { cast_prepare, cast_run, NULL, 0 };

/* ---- broadcasting iteration ------------------------------------------------ */

#define BC_MAX 3 /* operands */

/* A broadcast loop nest reduced to as few dimensions as possible:
 * out[r][i] over rows r (odometer over dims[0..rank-1)) and inner i. */
typedef struct bcast {
    int rank;
    size_t dims[GIR_MAX_RANK];
    size_t st[BC_MAX][GIR_MAX_RANK]; /* element strides per operand (0 = broadcast) */
    int nops;
    size_t rows, inner;
} bcast;

static void bcast_init(bcast *b, const gir_shape *out, const gir_shape *const *ins, int nops)
{
    int r = out->rank;
    b->nops = nops;
    size_t st[BC_MAX][GIR_MAX_RANK];
    for (int k = 0; k < nops; k++) {
        size_t acc = 1;
        const gir_shape *s = ins[k];
        for (int i = r - 1; i >= 0; i--) {
            int si = i - (r - s->rank);
            size_t d = si >= 0 ? (size_t)s->dims[si] : 1;
            st[k][i] = d == 1 ? 0 : acc;
            acc *= d;
        }
    }
    /* drop size-1 dims, merge contiguous neighbours */
    int n = 0;
    for (int i = 0; i < r; i++) {
        size_t d = (size_t)out->dims[i];
        if (d == 1)
            continue;
        if (n > 0) {
            bool merge = true;
            for (int k = 0; k < nops; k++)
                if (b->st[k][n - 1] != st[k][i] * d)
                    merge = false;
            if (merge) {
                b->dims[n - 1] *= d;
                for (int k = 0; k < nops; k++)
                    b->st[k][n - 1] = st[k][i];
                continue;
            }
        }
        b->dims[n] = d;
        for (int k = 0; k < nops; k++)
            b->st[k][n] = st[k][i];
        n++;
    }
    if (n == 0) {
        b->dims[0] = 1;
        for (int k = 0; k < nops; k++)
            b->st[k][0] = 0;
        n = 1;
    }
    b->rank = n;
    b->inner = b->dims[n - 1];
    b->rows = 1;
    for (int i = 0; i < n - 1; i++)
        b->rows *= b->dims[i];
}

/* Element offsets of each operand at the start of row r. */
static void bcast_row(const bcast *b, size_t r, size_t *off)
{
    for (int k = 0; k < b->nops; k++)
        off[k] = 0;
    for (int i = b->rank - 2; i >= 0; i--) {
        size_t idx = r % b->dims[i];
        r /= b->dims[i];
        for (int k = 0; k < b->nops; k++)
            off[k] += idx * b->st[k][i];
    }
}

/* ---- binary ops ---------------------------------------------------------- */

/* An inner loop: o[i] = f(a[i*sa], b[i*sb]) with sa, sb in {0, 1}. */
typedef void (*bin_fn)(const void *a, size_t sa, const void *b, size_t sb, void *o, size_t n);

/* One loop of BIN_LOOP: x and y are X and Y at each i. */
#define BIN_EACH(TA, X, Y, expr)          \
    for (size_t i = 0; i < n; i++) {      \
        TA x = (X), y = (Y);              \
        o[i] = (expr);                    \
    }

#define BIN_LOOP(name, TA, TO, expr)                                                         \
    RT_CLONES static void name(const void *pa, size_t sa, const void *pb, size_t sb, void *po, size_t n) \
    {                                                                                        \
        const TA *a = pa, *b = pb;                                                           \
        TO *o = po;                                                                          \
        if (sa && sb) {                                                                      \
            BIN_EACH(TA, a[i], b[i], expr)                                                   \
        } else if (sa) {                                                                     \
            TA b0 = b[0];                                                                    \
            BIN_EACH(TA, a[i], b0, expr)                                                     \
        } else if (sb) {                                                                     \
            TA a0 = a[0];                                                                    \
            BIN_EACH(TA, a0, b[i], expr)                                                     \
        } else {                                                                             \
            TA x = a[0], y = b[0];                                                           \
            TO v = (expr);                                                                   \
            for (size_t i = 0; i < n; i++)                                                   \
                o[i] = v;                                                                    \
        }                                                                                    \
    }

/* b^e by squaring, modulo 2^64: its low bits are the power in any narrower
 * integer type. */
static inline uint64_t pow_wrap(uint64_t b, uint64_t e)
{
    uint64_t r = 1;
    for (; e > 0; e >>= 1) {
        if (e & 1)
            r *= b;
        b *= b;
    }
    return r;
}

/* Integer helpers with defined results for every input. */
#define INT_HELPERS(T, UT, TMIN)                                                     \
    static inline T T##_add(T x, T y) { return (T)((UT)x + (UT)y); }                 \
    static inline T T##_sub(T x, T y) { return (T)((UT)x - (UT)y); }                 \
    static inline T T##_mul(T x, T y) { return (T)((UT)x * (UT)y); }                 \
    static inline T T##_div(T x, T y)                                                \
    {                                                                                \
        if (y == 0)                                                                  \
            return 0;                                                                \
        if (y == -1)                                                                 \
            return (T)(0 - (UT)x);                                                   \
        return x / y;                                                                \
    }                                                                                \
    static inline T T##_mod(T x, T y) /* sign of the divisor, like Python */         \
    {                                                                                \
        if (y == 0 || y == -1)                                                       \
            return 0;                                                                \
        T r = x % y;                                                                 \
        return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;                    \
    }                                                                                \
    static inline T T##_fmod(T x, T y) /* sign of the dividend, like C */           \
    {                                                                                \
        if (y == 0 || y == -1)                                                       \
            return 0;                                                                \
        return x % y;                                                                \
    }                                                                                \
    static inline T T##_pow(T x, T y)                                                \
    {                                                                                \
        if (y < 0)                                                                   \
            return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;                    \
        return (T)(UT)pow_wrap((UT)x, (uint64_t)y);                                   \
    }
INT_HELPERS(int32_t, uint32_t, INT32_MIN)
INT_HELPERS(int64_t, uint64_t, INT64_MIN)
INT_HELPERS(int8_t, uint8_t, INT8_MIN)
INT_HELPERS(int16_t, uint16_t, INT16_MIN)

/* Unsigned: wrap-around arithmetic, division by zero gives 0. */
#define UINT_HELPERS(T)                                                              \
    static inline T T##_add(T x, T y) { return (T)(x + y); }                         \
    static inline T T##_sub(T x, T y) { return (T)(x - y); }                         \
    static inline T T##_mul(T x, T y) { return (T)((uint64_t)x * (uint64_t)y); }     \
    static inline T T##_div(T x, T y) { return y == 0 ? 0 : (T)(x / y); }            \
    static inline T T##_mod(T x, T y) { return y == 0 ? 0 : (T)(x % y); }            \
    static inline T T##_fmod(T x, T y) { return y == 0 ? 0 : (T)(x % y); }           \
    static inline T T##_pow(T x, T y) { return (T)pow_wrap(x, y); }
UINT_HELPERS(uint8_t)
UINT_HELPERS(uint16_t)
UINT_HELPERS(uint32_t)
UINT_HELPERS(uint64_t)

/* The comparisons of one element type (P##eq, ...: 0/1 bytes). */
#define CMP_LOOPS(P, T)                                                                                         \
    BIN_LOOP(P##eq, T, uint8_t, x == y)                                                                         \
    BIN_LOOP(P##gt, T, uint8_t, x > y)                                                                          \
    BIN_LOOP(P##lt, T, uint8_t, x < y)                                                                          \
    BIN_LOOP(P##ge, T, uint8_t, x >= y)                                                                         \
    BIN_LOOP(P##le, T, uint8_t, x <= y)

/* The loops of a floating type T with its libm POW and FMOD: Mod (fmod=0)
 * takes the sign of the divisor; Max and Min propagate NaN (numpy
 * maximum/minimum). */
#define FLOAT_BIN(P, T, POW, FMOD)                                                                              \
    static inline T P##mod_div(T x, T y)                                                                        \
    {                                                                                                           \
        T r = FMOD(x, y);                                                                                       \
        return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;                                                    \
    }                                                                                                           \
    static inline T P##max_nan(T x, T y) { return x != x ? x : (y != y ? y : (x > y ? x : y)); }                \
    static inline T P##min_nan(T x, T y) { return x != x ? x : (y != y ? y : (x < y ? x : y)); }                \
    BIN_LOOP(P##add, T, T, x + y)                                                                               \
    BIN_LOOP(P##sub, T, T, x - y)                                                                               \
    BIN_LOOP(P##mul, T, T, x * y)                                                                               \
    BIN_LOOP(P##div, T, T, x / y)                                                                               \
    BIN_LOOP(P##pow, T, T, POW(x, y))                                                                           \
    BIN_LOOP(P##fmod, T, T, FMOD(x, y))                                                                         \
    BIN_LOOP(P##mod, T, T, P##mod_div(x, y))                                                                    \
    BIN_LOOP(P##max, T, T, P##max_nan(x, y))                                                                    \
    BIN_LOOP(P##min, T, T, P##min_nan(x, y))                                                                    \
    CMP_LOOPS(P, T)
FLOAT_BIN(f32_, float, powf, fmodf)
FLOAT_BIN(f64_, double, pow, fmod)
BIN_LOOP(f32_prelu, float, float, x < 0.0f ? x * y : x)

#define INT_BIN(T)                                          \
    BIN_LOOP(T##_vadd, T, T, T##_add(x, y))                 \
    BIN_LOOP(T##_vsub, T, T, T##_sub(x, y))                 \
    BIN_LOOP(T##_vmul, T, T, T##_mul(x, y))                 \
    BIN_LOOP(T##_vdiv, T, T, T##_div(x, y))                 \
    BIN_LOOP(T##_vpow, T, T, T##_pow(x, y))                 \
    BIN_LOOP(T##_vmod, T, T, T##_mod(x, y))                 \
    BIN_LOOP(T##_vfmod, T, T, T##_fmod(x, y))               \
    BIN_LOOP(T##_vmax, T, T, x > y ? x : y)                 \
    BIN_LOOP(T##_vmin, T, T, x < y ? x : y)                 \
    CMP_LOOPS(T##_v, T)
INT_BIN(int32_t)
INT_BIN(int64_t)
INT_BIN(int8_t)
INT_BIN(int16_t)
INT_BIN(uint8_t)
INT_BIN(uint16_t)
INT_BIN(uint32_t)
INT_BIN(uint64_t)

BIN_LOOP(b_and, uint8_t, uint8_t, (uint8_t)(x && y))
BIN_LOOP(b_or, uint8_t, uint8_t, (uint8_t)(x || y))
BIN_LOOP(b_xor, uint8_t, uint8_t, (uint8_t)((!x) != (!y)))
BIN_LOOP(b_eq, uint8_t, uint8_t, (uint8_t)((!x) == (!y)))

/* The loop for op on dtype, and the output dtype. */
static bin_fn bin_for(gir_op op, gir_dtype t, bool fmod_attr, gir_dtype *out)
{
    *out = t;
    bool cmp = op == GIR_OP_Equal || op == GIR_OP_Greater || op == GIR_OP_Less || op == GIR_OP_GreaterOrEqual ||
               op == GIR_OP_LessOrEqual;
    if (cmp)
        *out = GIR_DT_BOOL;
/* The loops P##add ... P##le; MEAN and PRELU where the type has them. */
#define BIN_CASES(P, MEAN, PRELU)                                                        \
    switch (op) {                                                                        \
    case GIR_OP_Add: case GIR_OP_Sum: return P##add;                                     \
    case GIR_OP_Mean: return MEAN;                                                       \
    case GIR_OP_Sub: return P##sub;                                                      \
    case GIR_OP_Mul: return P##mul;                                                      \
    case GIR_OP_Div: return P##div;                                                      \
    case GIR_OP_Pow: return P##pow;                                                      \
    case GIR_OP_Mod: return fmod_attr ? P##fmod : P##mod;                                \
    case GIR_OP_Max: return P##max;                                                      \
    case GIR_OP_Min: return P##min;                                                      \
    case GIR_OP_PRelu: return PRELU;                                                     \
    case GIR_OP_Equal: return P##eq;                                                     \
    case GIR_OP_Greater: return P##gt;                                                   \
    case GIR_OP_Less: return P##lt;                                                      \
    case GIR_OP_GreaterOrEqual: return P##ge;                                            \
    case GIR_OP_LessOrEqual: return P##le;                                               \
    default: return NULL;                                                                \
    }
    switch (t) { /* each BIN_CASES returns */
    case GIR_DT_F32: BIN_CASES(f32_, f32_add, f32_prelu)
    case GIR_DT_F64: BIN_CASES(f64_, f64_add, NULL)
    case GIR_DT_I8: BIN_CASES(int8_t_v, NULL, NULL)
    case GIR_DT_I16: BIN_CASES(int16_t_v, NULL, NULL)
    case GIR_DT_I32: BIN_CASES(int32_t_v, NULL, NULL)
    case GIR_DT_I64: BIN_CASES(int64_t_v, NULL, NULL)
    case GIR_DT_U8: BIN_CASES(uint8_t_v, NULL, NULL)
    case GIR_DT_U16: BIN_CASES(uint16_t_v, NULL, NULL)
    case GIR_DT_U32: BIN_CASES(uint32_t_v, NULL, NULL)
    case GIR_DT_U64: BIN_CASES(uint64_t_v, NULL, NULL)
    default: break;
    }
    if (t == GIR_DT_BOOL) {
        switch (op) {
        case GIR_OP_And: return b_and;
        case GIR_OP_Or: return b_or;
        case GIR_OP_Xor: return b_xor;
        case GIR_OP_Equal: return b_eq;
        default: return NULL;
        }
    }
    return NULL;
}

typedef struct bin_job {
    bcast b;
    bin_fn fn;
    const char *pa, *pb;
    char *po;
    size_t ea, eb, eo; /* element sizes */
} bin_job;

static void bin_rows(void *ctx, size_t r0, size_t r1, int worker)
{
    (void)worker;
    bin_job *j = ctx;
    const bcast *b = &j->b;
    size_t sa = b->st[0][b->rank - 1], sb = b->st[1][b->rank - 1];
    for (size_t r = r0; r < r1; r++) {
        size_t off[BC_MAX];
        bcast_row(b, r, off);
        j->fn(j->pa + off[0] * j->ea, sa, j->pb + off[1] * j->eb, sb, j->po + r * b->inner * j->eo, b->inner);
    }
}

static void bin_flat(void *ctx, size_t i0, size_t i1, int worker)
{
    (void)worker;
    bin_job *j = ctx;
    size_t sa = j->b.st[0][0], sb = j->b.st[1][0];
    j->fn(j->pa + i0 * sa * j->ea, sa, j->pb + i0 * sb * j->eb, sb, j->po + i0 * j->eo, i1 - i0);
}

/* out = fn(a, b) with broadcasting (out has the broadcast shape). */
static void bin_apply(gir_threads *th, bin_fn fn, const rt_tensor *a, const rt_tensor *b, rt_tensor *out)
{
    bin_job j;
    const gir_shape *ins[2] = { &a->shape, &b->shape };
    bcast_init(&j.b, &out->shape, ins, 2);
    j.fn = fn;
    j.pa = a->data;
    j.pb = b->data;
    j.po = out->data;
    j.ea = gir_dtype_size(a->dtype);
    j.eb = gir_dtype_size(b->dtype);
    j.eo = gir_dtype_size(out->dtype);
    if (out->numel == 0)
        return;
    if (j.b.rows == 1)
        rt_parallel_for(th, j.b.inner, 64, 1 << 15, bin_flat, &j);
    else
        rt_parallel_for(th, j.b.rows, 1, (1 << 15) / j.b.inner + 1, bin_rows, &j);
}

/* Pow takes an exponent of another type than the base (ONNX's T1): the
 * result has the base's type, computed in double as numpy does. */
static bool pow_mixed(const rt_call *c)
{
    const rt_tensor *a = c->in[0], *b = c->in[1];
    return c->node->op == GIR_OP_Pow && a->dtype != b->dtype;
}

static bool pow_type_ok(gir_dtype base, gir_dtype e)
{
    bool base_ok = base == GIR_DT_F32 || base == GIR_DT_I32 || base == GIR_DT_I64;
    bool e_ok = e == GIR_DT_F32 || e == GIR_DT_F64 || gir_dtype_is_int(e);
    return base_ok && e_ok;
}

static double load_num(const void *p, gir_dtype t, size_t i)
{
    if (t == GIR_DT_I64)
        return (double)((const int64_t *)p)[i];
    if (t == GIR_DT_U64)
        return (double)((const uint64_t *)p)[i];
    return gir_elem_as_double(p, t, i);
}

static void pow_mixed_run(const rt_call *c)
{
    const rt_tensor *a = c->in[0], *b = c->in[1];
    rt_tensor *o = c->out[0];
    bcast bc;
    const gir_shape *ins[2] = { &a->shape, &b->shape };
    bcast_init(&bc, &o->shape, ins, 2);
    if (o->numel == 0)
        return;
    size_t sa = bc.st[0][bc.rank - 1], sb = bc.st[1][bc.rank - 1];
    for (size_t r = 0; r < bc.rows; r++) {
        size_t off[BC_MAX];
        bcast_row(&bc, r, off);
        for (size_t i = 0; i < bc.inner; i++) {
            double v = pow(load_num(a->data, a->dtype, off[0] + i * sa), load_num(b->data, b->dtype, off[1] + i * sb));
            size_t at = r * bc.inner + i;
            if (o->dtype == GIR_DT_F32)
                ((float *)o->data)[at] = (float)v;
            else if (o->dtype == GIR_DT_I32)
                ((int32_t *)o->data)[at] = (int32_t)sat_i64(v, INT32_MIN, INT32_MAX);
            else
                ((int64_t *)o->data)[at] = sat_i64(v, -9223372036854775808.0, 9223372036854774784.0);
        }
    }
}

static gir_status binary_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *a = c->in[0], *b = c->in[1];
    gir_status st;
    if (pow_mixed(c)) {
        gir_shape s;
        if (!pow_type_ok(a->dtype, b->dtype))
            return gir_fail(err, GIR_E_NO_KERNEL, "no kernel for Pow of %s to %s", gir_dtype_name(a->dtype),
                            gir_dtype_name(b->dtype));
        TRY(rt_broadcast_shape(c, &a->shape, &b->shape, &s, err));
        return rt_set_out(c->out[0], a->dtype, &s, err);
    }
    if (a->dtype != b->dtype)
        return gir_fail(err, GIR_E_DTYPE, "%s operands are %s and %s", gir_op_name(c->node->op),
                        gir_dtype_name(a->dtype), gir_dtype_name(b->dtype));
    gir_dtype ot;
    bool fm = rt_int(c, "fmod", 0) != 0;
    if (!bin_for(c->node->op, a->dtype, fm, &ot))
        return rt_no_kernel_dtype(c, a->dtype, err);
    gir_shape s;
    if (c->node->op == GIR_OP_PRelu) {
        /* the slope broadcasts to X: the output is X's shape */
        TRY(rt_broadcast_shape(c, &a->shape, &b->shape, &s, err));
        if (!gir_shape_equal(&s, &a->shape)) {
            char sa[96], sb[96];
            return gir_fail(err, GIR_E_SHAPE, "slope of shape %s does not broadcast to input %s",
                            gir_shape_str(&b->shape, sb, sizeof sb), gir_shape_str(&a->shape, sa, sizeof sa));
        }
    } else if ((st = rt_broadcast_shape(c, &a->shape, &b->shape, &s, err))) {
        return st;
    }
    return rt_set_out(c->out[0], ot, &s, err);
}

static void binary_compute(rt_call *c)
{
    if (pow_mixed(c)) {
        pow_mixed_run(c);
        return;
    }
    gir_dtype ot;
    const rt_tensor *a = c->in[0], *b = c->in[1];
    if (c->node->op == GIR_OP_Pow && a->dtype == GIR_DT_F32 && b->numel == 1 && b->shape.rank <= a->shape.rank &&
        *(const float *)b->data == 2.0f) {
        /* x^2 (LayerNorm's variance): x*x is the correctly rounded square powf gives */
        bin_apply(c->th, f32_mul, a, a, c->out[0]);
        return;
    }
    bin_fn fn = bin_for(c->node->op, a->dtype, rt_int(c, "fmod", 0) != 0, &ot);
    bin_apply(c->th, fn, a, b, c->out[0]);
}

static gir_status binary_run(rt_call *c, gir_error *err)
{
    (void)err;
    binary_compute(c);
    if (c->act.on) { /* a fused activation (float results only: the executor checks) */
        act_job aj = { c->act, c->out[0]->data, c->out[0]->data };
        rt_parallel_for(c->th, c->out[0]->numel, 64, 1 << 15, act_part, &aj);
    }
    return GIR_OK;
}

/* In place only when out has in[0]'s shape: the executor checks sizes. */
const rt_kernel gir_k_binary = { binary_prepare, binary_run, NULL, RT_INPLACE | RT_FUSE_ACT | RT_FUSE_ACTX };
const rt_kernel gir_k_prelu = { binary_prepare, binary_run, NULL, RT_INPLACE };

/* ---- variadic Max / Min / Sum / Mean --------------------------------------- */

static gir_status variadic_prepare(rt_call *c, gir_error *err)
{
    gir_status st;
    gir_shape s = c->in[0]->shape;
    gir_dtype t = c->in[0]->dtype;
    for (size_t i = 0; i < c->n_in; i++) {
        if (!c->in[i])
            return gir_fail(err, GIR_E_SCHEMA, "input %zu of %s is missing", i, gir_op_name(c->node->op));
        if (c->in[i]->dtype != t)
            return gir_fail(err, GIR_E_DTYPE, "%s inputs are %s and %s", gir_op_name(c->node->op), gir_dtype_name(t),
                            gir_dtype_name(c->in[i]->dtype));
        if (i > 0 && (st = rt_broadcast_shape(c, &s, &c->in[i]->shape, &s, err)))
            return st;
    }
    gir_dtype ot;
    if (!bin_for(c->node->op, t, false, &ot) || (c->node->op == GIR_OP_Mean && t != GIR_DT_F32))
        return rt_no_kernel_dtype(c, t, err);
    return rt_set_out(c->out[0], t, &s, err);
}

BIN_LOOP(copy_b1, uint8_t, uint8_t, ((void)y, x))
BIN_LOOP(copy_b2, uint16_t, uint16_t, ((void)y, x))
BIN_LOOP(copy_b4, uint32_t, uint32_t, ((void)y, x))
BIN_LOOP(copy_b8, uint64_t, uint64_t, ((void)y, x))

static gir_status variadic_run(rt_call *c, gir_error *err)
{
    (void)err;
    rt_tensor *o = c->out[0];
    gir_dtype ot;
    bin_fn fn = bin_for(c->node->op, o->dtype, false, &ot);
    /* o = broadcast(in0); then o = fn(o, in_k).  o may share in0's
     * storage only when shapes are equal, which the copy then leaves intact. */
    size_t es = gir_dtype_size(o->dtype);
    bin_fn copy = es == 1 ? copy_b1 : es == 2 ? copy_b2 : es == 4 ? copy_b4 : copy_b8;
    if (c->in[0]->data != o->data)
        bin_apply(c->th, copy, c->in[0], c->in[0], o);
    for (size_t i = 1; i < c->n_in; i++)
        bin_apply(c->th, fn, o, c->in[i], o);
    if (c->node->op == GIR_OP_Mean) {
        float *p = o->data, inv = (float)c->n_in;
        for (size_t i = 0; i < o->numel; i++)
            p[i] /= inv;
    }
    return GIR_OK;
}

const rt_kernel gir_k_variadic = { variadic_prepare, variadic_run, NULL, RT_INPLACE };

/* ---- Where ------------------------------------------------------------------ */

static gir_status where_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *cond = c->in[0], *x = c->in[1], *y = c->in[2];
    if (cond->dtype != GIR_DT_BOOL)
        return gir_fail(err, GIR_E_DTYPE, "Where condition is %s, expected bool", gir_dtype_name(cond->dtype));
    if (x->dtype != y->dtype)
        return gir_fail(err, GIR_E_DTYPE, "Where operands are %s and %s", gir_dtype_name(x->dtype),
                        gir_dtype_name(y->dtype));
    size_t es = gir_dtype_size(x->dtype);
    if (es != 1 && es != 2 && es != 4 && es != 8)
        return rt_no_kernel_dtype(c, x->dtype, err);
    gir_shape s;
    TRY(rt_broadcast_shape(c, &cond->shape, &x->shape, &s, err));
    TRY(rt_broadcast_shape(c, &s, &y->shape, &s, err));
    return rt_set_out(c->out[0], x->dtype, &s, err);
}

static gir_status where_run(rt_call *c, gir_error *err)
{
    (void)err;
    rt_tensor *o = c->out[0];
    bcast b;
    const gir_shape *ins[3] = { &c->in[0]->shape, &c->in[1]->shape, &c->in[2]->shape };
    bcast_init(&b, &o->shape, ins, 3);
    size_t es = gir_dtype_size(o->dtype);
    const uint8_t *pc = c->in[0]->data;
    const char *px = c->in[1]->data, *py = c->in[2]->data;
    char *po = o->data;
    if (o->numel == 0)
        return GIR_OK;
    size_t s0 = b.st[0][b.rank - 1], s1 = b.st[1][b.rank - 1], s2 = b.st[2][b.rank - 1];
    for (size_t r = 0; r < b.rows; r++) {
        size_t off[BC_MAX];
        bcast_row(&b, r, off);
        char *dst = po + r * b.inner * es;
        for (size_t i = 0; i < b.inner; i++) {
            const char *src = pc[off[0] + i * s0] ? px + (off[1] + i * s1) * es : py + (off[2] + i * s2) * es;
            memcpy(dst + i * es, src, es);
        }
    }
    return GIR_OK;
}

const rt_kernel gir_k_where = { where_prepare, where_run, NULL, 0 };
