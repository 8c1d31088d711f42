/* Elementwise, shape, normalisation, reduction and resize kernels: exact
 * expected values computed by hand. */
#include "rtutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One node of op on inputs "a", "b", ... given as tensors; returns its
 * outputs (n_out of them). */
typedef struct one {
    gir_graph *g;
    gir_node *n;
    gir_tensor *in[8];
    size_t n_in;
} one;

static void one_begin(one *o, gir_op op, size_t n_in, size_t n_out, const gir_tensor *const *ins)
{
    memset(o, 0, sizeof *o);
    o->g = rt_graph();
    char ins_s[64] = "", outs_s[64] = "";
    for (size_t i = 0; i < n_in; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "i%zu", i);
        rt_input(o->g, nm, gir_tensor_dtype(ins[i]), gir_tensor_shape(ins[i])->rank, gir_tensor_shape(ins[i])->dims);
        strcat(ins_s, i ? "," : "");
        strcat(ins_s, nm);
        o->in[i] = (gir_tensor *)ins[i];
    }
    for (size_t i = 0; i < n_out; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "o%zu", i);
        strcat(outs_s, i ? "," : "");
        strcat(outs_s, nm);
    }
    o->n_in = n_in;
    o->n = rt_node(o->g, op, "node", ins_s, outs_s);
    for (size_t i = 0; i < n_out; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "o%zu", i);
        rt_output(o->g, nm);
    }
}

static void one_run(one *o, gir_tensor **outs, size_t n_out)
{
    rt_run(o->g, 1, o->in, o->n_in, outs, n_out);
}

static void one_end(one *o)
{
    for (size_t i = 0; i < o->n_in; i++)
        gir_tensor_unref(o->in[i]);
    gir_graph_free(o->g);
}

#define T_F32(rank, dims, ...) rt_tensor_new(GIR_DT_F32, (rank), (dims), F32S(__VA_ARGS__))
#define T_I64(rank, dims, ...) rt_tensor_new(GIR_DT_I64, (rank), (dims), I64S(__VA_ARGS__))

/* Runs a single-input, single-output float op and checks the result. */
static gir_tensor *run1(gir_op op, gir_tensor *x, void (*attrs)(gir_graph *, gir_node *))
{
    one o;
    one_begin(&o, op, 1, 1, (const gir_tensor *const[]){ x });
    if (attrs)
        attrs(o.g, o.n);
    gir_tensor *y;
    one_run(&o, &y, 1);
    one_end(&o);
    return y;
}

static gir_tensor *run2(gir_op op, gir_tensor *a, gir_tensor *b)
{
    one o;
    one_begin(&o, op, 2, 1, (const gir_tensor *const[]){ a, b });
    gir_tensor *y;
    one_run(&o, &y, 1);
    one_end(&o);
    return y;
}

#define EXPECT_F32(t, rank, dims, tol, ...)                      \
    do {                                                         \
        gir_tensor *t_ = (t);                                    \
        rt_expect_f32(t_, (rank), (dims), F32S(__VA_ARGS__), (tol)); \
        gir_tensor_unref(t_);                                    \
    } while (0)

static void a_leaky(gir_graph *g, gir_node *n) { rt_attr_float(g, n, "alpha", 0.5); }
static void a_clip(gir_graph *g, gir_node *n)
{
    rt_attr_float(g, n, "min", -1.0);
    rt_attr_float(g, n, "max", 2.0);
}
static void a_hsig(gir_graph *g, gir_node *n)
{
    rt_attr_float(g, n, "alpha", 0.25);
    rt_attr_float(g, n, "beta", 0.5);
}

static void test_unary(void **state)
{
    (void)state;
    const int64_t *d5 = DIMS(5);
#define X5() T_F32(1, d5, -2, -0.5f, 0, 1.5f, 3)
    EXPECT_F32(run1(GIR_OP_Relu, X5(), NULL), 1, d5, 0, 0, 0, 0, 1.5f, 3);
    EXPECT_F32(run1(GIR_OP_LeakyRelu, X5(), a_leaky), 1, d5, 0, -1, -0.25f, 0, 1.5f, 3);
    EXPECT_F32(run1(GIR_OP_Clip, X5(), a_clip), 1, d5, 0, -1, -0.5f, 0, 1.5f, 2);
    EXPECT_F32(run1(GIR_OP_HardSigmoid, X5(), a_hsig), 1, d5, 0, 0, 0.375f, 0.5f, 0.875f, 1);
    EXPECT_F32(run1(GIR_OP_Abs, X5(), NULL), 1, d5, 0, 2, 0.5f, 0, 1.5f, 3);
    EXPECT_F32(run1(GIR_OP_Neg, X5(), NULL), 1, d5, 0, 2, 0.5f, -0.0f, -1.5f, -3);
    EXPECT_F32(run1(GIR_OP_Floor, X5(), NULL), 1, d5, 0, -2, -1, 0, 1, 3);
    EXPECT_F32(run1(GIR_OP_Ceil, X5(), NULL), 1, d5, 0, -2, -0.0f, 0, 2, 3);
    EXPECT_F32(run1(GIR_OP_Round, T_F32(1, d5, -2.5f, -0.5f, 0.5f, 1.5f, 2.5f), NULL), 1, d5, 0, -2, -0.0f, 0, 2, 2);
    EXPECT_F32(run1(GIR_OP_Sign, X5(), NULL), 1, d5, 0, -1, -1, 0, 1, 1);
    EXPECT_F32(run1(GIR_OP_Reciprocal, X5(), NULL), 1, d5, 0, -0.5f, -2, INFINITY, 1 / 1.5f, 1 / 3.0f);
    EXPECT_F32(run1(GIR_OP_Softsign, X5(), NULL), 1, d5, 1e-7, -2 / 3.0f, -0.5f / 1.5f, 0, 1.5f / 2.5f, 0.75f);
    EXPECT_F32(run1(GIR_OP_Sigmoid, X5(), NULL), 1, d5, 1e-7, 1 / (1 + expf(2)), 1 / (1 + expf(0.5f)), 0.5f,
               1 / (1 + expf(-1.5f)), 1 / (1 + expf(-3)));
    EXPECT_F32(run1(GIR_OP_Tanh, X5(), NULL), 1, d5, 1e-7, tanhf(-2), tanhf(-0.5f), 0, tanhf(1.5f), tanhf(3));
    EXPECT_F32(run1(GIR_OP_Elu, X5(), NULL), 1, d5, 1e-7, expm1f(-2), expm1f(-0.5f), 0, 1.5f, 3);
    EXPECT_F32(run1(GIR_OP_Selu, X5(), NULL), 1, d5, 1e-6, 1.0507009873554805f * 1.6732632423543772f * expm1f(-2),
               1.0507009873554805f * 1.6732632423543772f * expm1f(-0.5f), 0, 1.0507009873554805f * 1.5f,
               1.0507009873554805f * 3);
    EXPECT_F32(run1(GIR_OP_Softplus, X5(), NULL), 1, d5, 1e-6, logf(1 + expf(-2)), logf(1 + expf(-0.5f)), logf(2),
               logf(1 + expf(1.5f)), logf(1 + expf(3)));
    EXPECT_F32(run1(GIR_OP_Exp, X5(), NULL), 1, d5, 1e-6, expf(-2), expf(-0.5f), 1, expf(1.5f), expf(3));
    EXPECT_F32(run1(GIR_OP_Erf, X5(), NULL), 1, d5, 1e-7, erff(-2), erff(-0.5f), 0, erff(1.5f), erff(3));
    EXPECT_F32(run1(GIR_OP_Sin, X5(), NULL), 1, d5, 1e-7, sinf(-2), sinf(-0.5f), 0, sinf(1.5f), sinf(3));
    EXPECT_F32(run1(GIR_OP_Cos, X5(), NULL), 1, d5, 1e-7, cosf(-2), cosf(-0.5f), 1, cosf(1.5f), cosf(3));
    EXPECT_F32(run1(GIR_OP_Log, T_F32(1, d5, 1, 2, 0, -1, 4), NULL), 1, d5, 1e-7, 0, logf(2), -INFINITY, NAN, logf(4));
    EXPECT_F32(run1(GIR_OP_Sqrt, T_F32(1, d5, 1, 2, 0, -1, 4), NULL), 1, d5, 1e-7, 1, sqrtf(2), 0, NAN, 2);
    /* NaN passes Relu and Clip */
    EXPECT_F32(run1(GIR_OP_Relu, T_F32(1, DIMS(2), NAN, -1), NULL), 1, DIMS(2), 1e-9, NAN, 0);
    /* integer Abs/Neg/Relu, including the most negative value */
    gir_tensor *y = run1(GIR_OP_Abs, T_I64(1, DIMS(3), -5, 7, INT64_MIN), NULL);
    rt_expect_i64(y, 1, DIMS(3), I64S(5, 7, INT64_MIN));
    gir_tensor_unref(y);
    y = run1(GIR_OP_Relu, rt_tensor_new(GIR_DT_I32, 1, DIMS(3), (const int32_t[]){ -5, 7, 0 }), NULL);
    rt_expect_bytes(y, GIR_DT_I32, 1, DIMS(3), (const int32_t[]){ 0, 7, 0 });
    gir_tensor_unref(y);
    y = run1(GIR_OP_Not, rt_tensor_new(GIR_DT_BOOL, 1, DIMS(2), (const uint8_t[]){ 1, 0 }), NULL);
    rt_expect_bytes(y, GIR_DT_BOOL, 1, DIMS(2), (const uint8_t[]){ 0, 1 });
    gir_tensor_unref(y);
#undef X5
}

static void a_cast_i32(gir_graph *g, gir_node *n) { rt_attr_string(g, n, "to", "int32"); }
static void a_cast_u8(gir_graph *g, gir_node *n) { rt_attr_string(g, n, "to", "uint8"); }
static void a_cast_f32(gir_graph *g, gir_node *n) { rt_attr_string(g, n, "to", "float32"); }
static void a_cast_bool(gir_graph *g, gir_node *n) { rt_attr_string(g, n, "to", "bool"); }

static void test_cast(void **state)
{
    (void)state;
    /* float to int: truncation toward zero, saturation, NaN gives 0 */
    gir_tensor *y = run1(GIR_OP_Cast, T_F32(1, DIMS(5), -2.7f, 2.7f, 3e10f, -3e10f, NAN), a_cast_i32);
    rt_expect_bytes(y, GIR_DT_I32, 1, DIMS(5), (const int32_t[]){ -2, 2, INT32_MAX, INT32_MIN, 0 });
    gir_tensor_unref(y);
    y = run1(GIR_OP_Cast, T_F32(1, DIMS(3), -1, 300, 7.9f), a_cast_u8);
    rt_expect_bytes(y, GIR_DT_U8, 1, DIMS(3), (const uint8_t[]){ 0, 255, 7 });
    gir_tensor_unref(y);
    /* int64 to float and to bool; large values stay exact through int paths */
    y = run1(GIR_OP_Cast, T_I64(1, DIMS(3), -3, 0, 1 << 24), a_cast_f32);
    rt_expect_f32(y, 1, DIMS(3), F32S(-3, 0, 16777216), 0);
    gir_tensor_unref(y);
    y = run1(GIR_OP_Cast, T_I64(1, DIMS(3), -3, 0, 1LL << 40), a_cast_bool);
    rt_expect_bytes(y, GIR_DT_BOOL, 1, DIMS(3), (const uint8_t[]){ 1, 0, 1 });
    gir_tensor_unref(y);
}

static void test_binary(void **state)
{
    (void)state;
    /* broadcasting [2,3] with [3], [2,1], [] and [1,1,3] */
    const int64_t *d23 = DIMS(2, 3);
#define A23() T_F32(2, d23, 1, 2, 3, 4, 5, 6)
    EXPECT_F32(run2(GIR_OP_Add, A23(), T_F32(1, DIMS(3), 10, 20, 30)), 2, d23, 0, 11, 22, 33, 14, 25, 36);
    EXPECT_F32(run2(GIR_OP_Sub, A23(), T_F32(2, DIMS(2, 1), 1, 2)), 2, d23, 0, 0, 1, 2, 2, 3, 4);
    EXPECT_F32(run2(GIR_OP_Mul, T_F32(0, NULL, 2), A23()), 2, d23, 0, 2, 4, 6, 8, 10, 12);
    EXPECT_F32(run2(GIR_OP_Div, A23(), T_F32(3, DIMS(1, 1, 3), 1, 2, 4)), 3, DIMS(1, 2, 3), 0, 1, 1, 0.75f, 4, 2.5f,
               1.5f);
    EXPECT_F32(run2(GIR_OP_Pow, A23(), T_F32(1, DIMS(1), 2)), 2, d23, 0, 1, 4, 9, 16, 25, 36);
    /* outer product by broadcasting [3,1] x [1,4] */
    EXPECT_F32(run2(GIR_OP_Mul, T_F32(2, DIMS(3, 1), 1, 2, 3), T_F32(2, DIMS(1, 4), 1, 10, 100, 1000)), 2,
               DIMS(3, 4), 0, 1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000);
    /* Mod: float fmod=0 takes the divisor's sign */
    EXPECT_F32(run2(GIR_OP_Mod, T_F32(1, DIMS(4), 5, -5, 5, -5), T_F32(1, DIMS(4), 3, 3, -3, -3)), 1, DIMS(4), 0, 2,
               1, -1, -2);
    /* integer arithmetic: division truncates, by zero gives 0; Mod like Python */
    gir_tensor *y = run2(GIR_OP_Div, T_I64(1, DIMS(4), 7, -7, 5, INT64_MIN), T_I64(1, DIMS(4), 2, 2, 0, -1));
    rt_expect_i64(y, 1, DIMS(4), I64S(3, -3, 0, INT64_MIN));
    gir_tensor_unref(y);
    y = run2(GIR_OP_Mod, T_I64(1, DIMS(4), 5, -5, 5, -5), T_I64(1, DIMS(4), 3, 3, -3, -3));
    rt_expect_i64(y, 1, DIMS(4), I64S(2, 1, -1, -2));
    gir_tensor_unref(y);
    y = run2(GIR_OP_Pow, T_I64(1, DIMS(3), 3, -2, 2), T_I64(1, DIMS(3), 4, 3, -1));
    rt_expect_i64(y, 1, DIMS(3), I64S(81, -8, 0));
    gir_tensor_unref(y);
    /* comparisons and logic give bool */
    y = run2(GIR_OP_Greater, A23(), T_F32(1, DIMS(3), 2, 2, 2));
    rt_expect_bytes(y, GIR_DT_BOOL, 2, d23, (const uint8_t[]){ 0, 0, 1, 1, 1, 1 });
    gir_tensor_unref(y);
    y = run2(GIR_OP_LessOrEqual, T_I64(1, DIMS(3), 1, 5, 9), T_I64(0, NULL, 5));
    rt_expect_bytes(y, GIR_DT_BOOL, 1, DIMS(3), (const uint8_t[]){ 1, 1, 0 });
    gir_tensor_unref(y);
    y = run2(GIR_OP_Equal, T_F32(1, DIMS(2), NAN, 1), T_F32(1, DIMS(2), NAN, 1));
    rt_expect_bytes(y, GIR_DT_BOOL, 1, DIMS(2), (const uint8_t[]){ 0, 1 });
    gir_tensor_unref(y);
    const uint8_t tf[4] = { 1, 1, 0, 0 }, ft[4] = { 1, 0, 1, 0 };
    y = run2(GIR_OP_Xor, rt_tensor_new(GIR_DT_BOOL, 1, DIMS(4), tf), rt_tensor_new(GIR_DT_BOOL, 1, DIMS(4), ft));
    rt_expect_bytes(y, GIR_DT_BOOL, 1, DIMS(4), (const uint8_t[]){ 0, 1, 1, 0 });
    gir_tensor_unref(y);
    y = run2(GIR_OP_And, rt_tensor_new(GIR_DT_BOOL, 1, DIMS(4), tf), rt_tensor_new(GIR_DT_BOOL, 1, DIMS(4), ft));
    rt_expect_bytes(y, GIR_DT_BOOL, 1, DIMS(4), (const uint8_t[]){ 1, 0, 0, 0 });
    gir_tensor_unref(y);
    /* PRelu with a per-channel slope [2,1] on [2,3] */
    EXPECT_F32(run2(GIR_OP_PRelu, T_F32(2, d23, -1, 2, -3, -4, 5, -6), T_F32(2, DIMS(2, 1), 0.5f, 0.25f)), 2, d23, 0,
               -0.5f, 2, -1.5f, -1, 5, -1.5f);
    /* mixed types are refused */
    one o;
    one_begin(&o, GIR_OP_Add, 2, 1, (const gir_tensor *const[]){ A23(), T_I64(1, DIMS(1), 1) });
    rt_run_fails(o.g, o.in, 2, GIR_E_DTYPE, "Add operands are float32 and int64", NULL);
    one_end(&o);
#undef A23
}

static void test_variadic_where(void **state)
{
    (void)state;
    one o;
    gir_tensor *y;
    one_begin(&o, GIR_OP_Max, 3, 1,
              (const gir_tensor *const[]){ T_F32(1, DIMS(3), 1, 5, 2), T_F32(2, DIMS(2, 1), 3, 0),
                                           T_F32(0, NULL, 2.5f) });
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 3), F32S(3, 5, 3, 2.5f, 5, 2.5f), 0);
    gir_tensor_unref(y);
    one_end(&o);
    one_begin(&o, GIR_OP_Mean, 2, 1, (const gir_tensor *const[]){ T_F32(1, DIMS(2), 1, 2), T_F32(1, DIMS(2), 4, 8) });
    one_run(&o, &y, 1);
    rt_expect_f32(y, 1, DIMS(2), F32S(2.5f, 5), 0);
    gir_tensor_unref(y);
    one_end(&o);
    one_begin(&o, GIR_OP_Sum, 1, 1, (const gir_tensor *const[]){ T_I64(1, DIMS(2), 4, 5) });
    one_run(&o, &y, 1);
    rt_expect_i64(y, 1, DIMS(2), I64S(4, 5));
    gir_tensor_unref(y);
    one_end(&o);
    one_begin(&o, GIR_OP_Where, 3, 1,
              (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_BOOL, 2, DIMS(2, 1), (const uint8_t[]){ 1, 0 }),
                                           T_I64(1, DIMS(3), 1, 2, 3), T_I64(0, NULL, -1) });
    one_run(&o, &y, 1);
    rt_expect_i64(y, 2, DIMS(2, 3), I64S(1, 2, 3, -1, -1, -1));
    gir_tensor_unref(y);
    one_end(&o);
}

static void test_views_and_copies(void **state)
{
    (void)state;
    one o;
    gir_tensor *y, *ys[3];
    const float x24[24] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23 };
    /* Reshape with 0 and -1 */
    one_begin(&o, GIR_OP_Reshape, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 3, 4), x24) });
    RT_INTS(o.g, o.n, "shape", 0, -1, 2);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 3, DIMS(2, 6, 2), x24, 0);
    gir_tensor_unref(y);
    RT_INTS(o.g, o.n, "shape", 5, -1);
    rt_run_fails(o.g, o.in, 1, GIR_E_SHAPE, "cannot reshape [2,3,4] (24 elements) with -1 in the target", NULL);
    one_end(&o);
    /* Flatten axis -1, Squeeze, Unsqueeze */
    one_begin(&o, GIR_OP_Flatten, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 3, 4), x24) });
    rt_attr_int(o.g, o.n, "axis", -1);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(6, 4), x24, 0);
    gir_tensor_unref(y);
    one_end(&o);
    one_begin(&o, GIR_OP_Unsqueeze, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), x24) });
    RT_INTS(o.g, o.n, "axes", -1, 0);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 4, DIMS(1, 2, 3, 1), x24, 0);
    gir_tensor_unref(y);
    one_end(&o);
    one_begin(&o, GIR_OP_Squeeze, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 1, 3), x24) });
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 3), x24, 0);
    gir_tensor_unref(y);
    RT_INTS(o.g, o.n, "axes", 1);
    rt_run_fails(o.g, o.in, 1, GIR_E_SHAPE, "cannot squeeze axis 1 of [1,2,1,3]: its size is not 1", NULL);
    one_end(&o);
    /* Transpose [2,3,4] by (2,0,1) */
    one_begin(&o, GIR_OP_Transpose, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 3, 4), x24) });
    RT_INTS(o.g, o.n, "perm", 2, 0, 1);
    one_run(&o, &y, 1);
    float want[24];
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 3; b++)
                want[(c * 2 + a) * 3 + b] = x24[(a * 3 + b) * 4 + c];
    rt_expect_f32(y, 3, DIMS(4, 2, 3), want, 0);
    gir_tensor_unref(y);
    one_end(&o);
    /* Concat on axis 1 of int64 */
    one_begin(&o, GIR_OP_Concat, 2, 1,
              (const gir_tensor *const[]){ T_I64(2, DIMS(2, 1), 1, 2), T_I64(2, DIMS(2, 2), 3, 4, 5, 6) });
    rt_attr_int(o.g, o.n, "axis", -1);
    one_run(&o, &y, 1);
    rt_expect_i64(y, 2, DIMS(2, 3), I64S(1, 3, 4, 2, 5, 6));
    gir_tensor_unref(y);
    one_end(&o);
    /* Split with sizes, and into equal parts with a smaller last one */
    one_begin(&o, GIR_OP_Split, 1, 3, (const gir_tensor *const[]){ T_F32(1, DIMS(7), 0, 1, 2, 3, 4, 5, 6) });
    one_run(&o, ys, 3);
    rt_expect_f32(ys[0], 1, DIMS(3), F32S(0, 1, 2), 0);
    rt_expect_f32(ys[1], 1, DIMS(3), F32S(3, 4, 5), 0);
    rt_expect_f32(ys[2], 1, DIMS(1), F32S(6), 0);
    for (int i = 0; i < 3; i++)
        gir_tensor_unref(ys[i]);
    RT_INTS(o.g, o.n, "split", 1, 4, 2);
    one_run(&o, ys, 3);
    rt_expect_f32(ys[0], 1, DIMS(1), F32S(0), 0);
    rt_expect_f32(ys[1], 1, DIMS(4), F32S(1, 2, 3, 4), 0);
    rt_expect_f32(ys[2], 1, DIMS(2), F32S(5, 6), 0);
    for (int i = 0; i < 3; i++)
        gir_tensor_unref(ys[i]);
    one_end(&o);
    /* Slice: negative step, clamped ends, axes */
    one_begin(&o, GIR_OP_Slice, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 2, DIMS(4, 6), x24) });
    RT_INTS(o.g, o.n, "starts", -1, 1);
    RT_INTS(o.g, o.n, "ends", -100, 1000);
    RT_INTS(o.g, o.n, "axes", 1, 0);
    RT_INTS(o.g, o.n, "steps", -2, 2);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 3), F32S(11, 9, 7, 23, 21, 19), 0);
    gir_tensor_unref(y);
    RT_INTS(o.g, o.n, "starts", 1, 0);
    RT_INTS(o.g, o.n, "ends", 5, 2);
    RT_INTS(o.g, o.n, "steps", 2, 1);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 2), F32S(1, 3, 7, 9), 0);
    gir_tensor_unref(y);
    one_end(&o);
}

static void test_pad_tile_expand_gather(void **state)
{
    (void)state;
    one o;
    gir_tensor *y;
    const float x6[6] = { 1, 2, 3, 4, 5, 6 };
    static const char *const modes[] = { "constant", "edge", "reflect" };
    const float want[3][4 * 5] = {
        { 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9, 9, 9, 9, 9 },
        { 1, 1, 2, 3, 3, 1, 1, 2, 3, 3, 4, 4, 5, 6, 6, 4, 4, 5, 6, 6 },
        { 5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5, 2, 1, 2, 3, 2 },
    };
    for (int m = 0; m < 3; m++) {
        one_begin(&o, GIR_OP_Pad, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), x6) });
        RT_INTS(o.g, o.n, "pads", 1, 1, 1, 1);
        rt_attr_string(o.g, o.n, "mode", modes[m]);
        rt_attr_float(o.g, o.n, "constant_value", 9.0);
        one_run(&o, &y, 1);
        rt_expect_f32(y, 2, DIMS(4, 5), want[m], 0);
        gir_tensor_unref(y);
        one_end(&o);
    }
    /* negative pads crop */
    one_begin(&o, GIR_OP_Pad, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), x6) });
    RT_INTS(o.g, o.n, "pads", 0, -1, 0, 1);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 3), F32S(2, 3, 0, 5, 6, 0), 0);
    gir_tensor_unref(y);
    one_end(&o);
    one_begin(&o, GIR_OP_Tile, 1, 1, (const gir_tensor *const[]){ T_I64(2, DIMS(1, 2), 7, 8) });
    RT_INTS(o.g, o.n, "repeats", 2, 2);
    one_run(&o, &y, 1);
    rt_expect_i64(y, 2, DIMS(2, 4), I64S(7, 8, 7, 8, 7, 8, 7, 8));
    gir_tensor_unref(y);
    one_end(&o);
    one_begin(&o, GIR_OP_Expand, 1, 1, (const gir_tensor *const[]){ T_F32(2, DIMS(3, 1), 1, 2, 3) });
    RT_INTS(o.g, o.n, "shape", 2, 1, 2);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 3, DIMS(2, 3, 2), F32S(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3), 0);
    gir_tensor_unref(y);
    one_end(&o);
    /* Gather axis 1 with [2,2] indices, negative allowed; out of range fails */
    one_begin(&o, GIR_OP_Gather, 2, 1,
              (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), x6), T_I64(2, DIMS(2, 2), 0, -1, 1, 1) });
    rt_attr_int(o.g, o.n, "axis", 1);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 3, DIMS(2, 2, 2), F32S(1, 3, 2, 2, 4, 6, 5, 5), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(o.in[1]);
    o.in[1] = T_I64(2, DIMS(2, 2), 0, 3, 1, 1);
    rt_run_fails(o.g, o.in, 2, GIR_E_ARGUMENT, "Gather index 3 is outside [-3, 3)", NULL);
    one_end(&o);
    /* Shape */
    one_begin(&o, GIR_OP_Shape, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 2, 3), x6) });
    one_run(&o, &y, 1);
    rt_expect_i64(y, 1, DIMS(3), I64S(1, 2, 3));
    gir_tensor_unref(y);
    one_end(&o);
}

static void test_depth_space(void **state)
{
    (void)state;
    one o;
    gir_tensor *y;
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i;
    /* [1,4,2,2] blocksize 2 */
    one_begin(&o, GIR_OP_DepthToSpace, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 4, 2, 2), x) });
    rt_attr_int(o.g, o.n, "blocksize", 2);
    one_run(&o, &y, 1);
    /* DCR: out[h*2+i][w*2+j] = x[(i*2+j)][h][w] */
    rt_expect_f32(y, 4, DIMS(1, 1, 4, 4), F32S(0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15), 0);
    gir_tensor_unref(y);
    rt_attr_string(o.g, o.n, "mode", "CRD");
    one_run(&o, &y, 1);
    rt_expect_f32(y, 4, DIMS(1, 1, 4, 4), F32S(0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15), 0);
    gir_tensor_unref(y);
    one_end(&o);
    /* SpaceToDepth inverts DCR DepthToSpace */
    const float sp[16] = { 0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15 };
    one_begin(&o, GIR_OP_SpaceToDepth, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 4, 4), sp) });
    rt_attr_int(o.g, o.n, "blocksize", 2);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 4, DIMS(1, 4, 2, 2), x, 0);
    gir_tensor_unref(y);
    one_end(&o);
}

static void test_norms(void **state)
{
    (void)state;
    one o;
    gir_tensor *y;
    /* BatchNormalization [1,2,2]: (x - mean) / sqrt(var + eps) * scale + bias */
    one_begin(&o, GIR_OP_BatchNormalization, 5, 1,
              (const gir_tensor *const[]){ T_F32(3, DIMS(1, 2, 2), 1, 2, 3, 4), T_F32(1, DIMS(2), 2, 1),
                                           T_F32(1, DIMS(2), 0.5f, -1), T_F32(1, DIMS(2), 1, 3),
                                           T_F32(1, DIMS(2), 4, 0.25f) });
    rt_attr_float(o.g, o.n, "epsilon", 0.0);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 3, DIMS(1, 2, 2), F32S(0.5f, 1.5f, -1, 1), 1e-6);
    gir_tensor_unref(y);
    one_end(&o);
    /* InstanceNormalization: per plane mean 2.5, var 1.25 */
    one_begin(&o, GIR_OP_InstanceNormalization, 3, 1,
              (const gir_tensor *const[]){ T_F32(3, DIMS(1, 1, 4), 1, 2, 3, 4), T_F32(1, DIMS(1), 2),
                                           T_F32(1, DIMS(1), 1) });
    rt_attr_float(o.g, o.n, "epsilon", 0.0);
    one_run(&o, &y, 1);
    float s = 1 / sqrtf(1.25f);
    rt_expect_f32(y, 3, DIMS(1, 1, 4), F32S(1 - 3 * s, 1 - s, 1 + s, 1 + 3 * s), 1e-6);
    gir_tensor_unref(y);
    one_end(&o);
    /* LRN size 3 over 3 channels of one pixel */
    one_begin(&o, GIR_OP_LRN, 1, 1, (const gir_tensor *const[]){ T_F32(4, DIMS(1, 3, 1, 1), 1, 2, 3) });
    rt_attr_int(o.g, o.n, "size", 3);
    rt_attr_float(o.g, o.n, "alpha", 3.0);
    rt_attr_float(o.g, o.n, "beta", 1.0);
    rt_attr_float(o.g, o.n, "bias", 1.0);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 4, DIMS(1, 3, 1, 1), F32S(1 / 6.0f, 2 / 15.0f, 3 / 14.0f), 1e-6);
    gir_tensor_unref(y);
    one_end(&o);
    /* Softmax / LogSoftmax on axis 0 of [2,2] */
    one_begin(&o, GIR_OP_Softmax, 1, 1, (const gir_tensor *const[]){ T_F32(2, DIMS(2, 2), 0, 1, logf(3), 1) });
    rt_attr_int(o.g, o.n, "axis", 0);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 2), F32S(0.25f, 0.5f, 0.75f, 0.5f), 1e-7);
    gir_tensor_unref(y);
    o.n->op = GIR_OP_LogSoftmax;
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 2), F32S(logf(0.25f), logf(0.5f), logf(0.75f), logf(0.5f)), 1e-6);
    gir_tensor_unref(y);
    one_end(&o);
    /* Dropout (inference) is the identity with an all-true mask */
    gir_tensor *ys[2];
    one_begin(&o, GIR_OP_Dropout, 1, 2, (const gir_tensor *const[]){ T_F32(1, DIMS(3), 1, 2, 3) });
    one_run(&o, ys, 2);
    rt_expect_f32(ys[0], 1, DIMS(3), F32S(1, 2, 3), 0);
    rt_expect_bytes(ys[1], GIR_DT_BOOL, 1, DIMS(3), (const uint8_t[]){ 1, 1, 1 });
    gir_tensor_unref(ys[0]);
    gir_tensor_unref(ys[1]);
    rt_attr_int(o.g, o.n, "training_mode", 1);
    rt_run_fails(o.g, o.in, 1, GIR_E_UNSUPPORTED, "Dropout in training mode is not supported", NULL);
    one_end(&o);
}

static void test_reductions(void **state)
{
    (void)state;
    one o;
    gir_tensor *y;
    const float x[12] = { 1, 5, 2, 8, 3, 7, 4, 6, 9, 0, 11, 10 }; /* [2,3,2] */
    one_begin(&o, GIR_OP_ReduceSum, 1, 1, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 3, 2), x) });
    RT_INTS(o.g, o.n, "axes", 0, -1);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 3, DIMS(1, 3, 1), F32S(1 + 5 + 4 + 6, 2 + 8 + 9 + 0, 3 + 7 + 11 + 10), 0);
    gir_tensor_unref(y);
    rt_attr_int(o.g, o.n, "keepdims", 0);
    o.n->op = GIR_OP_ReduceMax;
    one_run(&o, &y, 1);
    rt_expect_f32(y, 1, DIMS(3), F32S(6, 9, 11), 0);
    gir_tensor_unref(y);
    o.n->op = GIR_OP_ReduceMean;
    gir_attrs_remove(&o.n->attrs, "axes");
    one_run(&o, &y, 1);
    rt_expect_f32(y, 0, NULL, F32S(5.5f), 0);
    gir_tensor_unref(y);
    o.n->op = GIR_OP_ReduceProd;
    RT_INTS(o.g, o.n, "axes", 1);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 2), F32S(6, 280, 396, 0), 0);
    gir_tensor_unref(y);
    o.n->op = GIR_OP_ReduceMin;
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 2), F32S(1, 5, 4, 0), 0);
    gir_tensor_unref(y);
    one_end(&o);
    /* ArgMax / ArgMin with ties: first or last index */
    one_begin(&o, GIR_OP_ArgMax, 1, 1, (const gir_tensor *const[]){ T_F32(2, DIMS(2, 3), 1, 3, 3, 2, 2, 0) });
    rt_attr_int(o.g, o.n, "axis", 1);
    one_run(&o, &y, 1);
    rt_expect_i64(y, 2, DIMS(2, 1), I64S(1, 0));
    gir_tensor_unref(y);
    rt_attr_int(o.g, o.n, "select_last_index", 1);
    rt_attr_int(o.g, o.n, "keepdims", 0);
    one_run(&o, &y, 1);
    rt_expect_i64(y, 1, DIMS(2), I64S(2, 1));
    gir_tensor_unref(y);
    o.n->op = GIR_OP_ArgMin;
    one_run(&o, &y, 1);
    rt_expect_i64(y, 1, DIMS(2), I64S(0, 2));
    gir_tensor_unref(y);
    one_end(&o);
}

static void test_resize(void **state)
{
    (void)state;
    one o;
    gir_tensor *y;
    /* nearest, asymmetric, scale 2 on the last axis */
    one_begin(&o, GIR_OP_Resize, 1, 1, (const gir_tensor *const[]){ T_F32(2, DIMS(1, 3), 1, 2, 3) });
    RT_FLOATS(o.g, o.n, "scales", 1.0, 2.0);
    rt_attr_string(o.g, o.n, "coordinate_transformation_mode", "asymmetric");
    rt_attr_string(o.g, o.n, "nearest_mode", "floor");
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(1, 6), F32S(1, 1, 2, 2, 3, 3), 0);
    gir_tensor_unref(y);
    /* linear, half_pixel: x_in = (x + 0.5)/2 - 0.5, clamped to [0, 2] */
    rt_attr_string(o.g, o.n, "mode", "linear");
    rt_attr_string(o.g, o.n, "coordinate_transformation_mode", "half_pixel");
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(1, 6), F32S(1, 1.25f, 1.75f, 2.25f, 2.75f, 3), 1e-6);
    gir_tensor_unref(y);
    /* align_corners with sizes: 3 -> 5 */
    gir_attrs_remove(&o.n->attrs, "scales");
    RT_INTS(o.g, o.n, "sizes", 1, 5);
    rt_attr_string(o.g, o.n, "coordinate_transformation_mode", "align_corners");
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(1, 5), F32S(1, 1.5f, 2, 2.5f, 3), 1e-6);
    gir_tensor_unref(y);
    one_end(&o);
    /* 2-D bilinear upsampling [1,1,2,2] x2 (separable), asymmetric */
    one_begin(&o, GIR_OP_Resize, 1, 1, (const gir_tensor *const[]){ T_F32(4, DIMS(1, 1, 2, 2), 0, 4, 8, 12) });
    RT_FLOATS(o.g, o.n, "scales", 1.0, 1.0, 2.0, 2.0);
    rt_attr_string(o.g, o.n, "mode", "linear");
    rt_attr_string(o.g, o.n, "coordinate_transformation_mode", "asymmetric");
    one_run(&o, &y, 1);
    rt_expect_f32(y, 4, DIMS(1, 1, 4, 4), F32S(0, 2, 4, 4, 4, 6, 8, 8, 8, 10, 12, 12, 8, 10, 12, 12), 1e-6);
    gir_tensor_unref(y);
    one_end(&o);
}

/* Print writes TensorLight's layout to the session's stream; with a file
 * attribute to that file, and a file that cannot be opened is a warning. */
static void test_print(void **state)
{
    (void)state;
    one o;
    const float x[6] = { 2, 3, 4, 6, 7, 8 };
    one_begin(&o, GIR_OP_Print, 1, 0, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), x) });
    rt_attr_string(o.g, o.n, "message", "tensor2:");
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(o.g, 1, &s, &err), &err);
    char *dir = tu_tempdir(), *path = tu_join(dir, "out.txt");
    FILE *f = fopen(path, "w+");
    assert_non_null(f);
    gir_session_set_print_stream(s, f);
    TU_OK(gir_session_set_input(s, 0, o.in[0], &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    fclose(f);
    size_t len;
    char *text = tu_slurp(path, &len);
    assert_string_equal(text, "tensor2:\n[[2.000 3.000 4.000]\n [6.000 7.000 8.000]]\n"
                              "tensor2:\n[[2.000 3.000 4.000]\n [6.000 7.000 8.000]]\n");
    free(text);
    gir_session_free(s);
    one_end(&o);

    /* 3-D int32 to a file (fprint), then an unopenable file */
    int32_t xi[8] = { 1, -2, 3, 4, 5, 6, 7, 8 };
    one_begin(&o, GIR_OP_Print, 1, 0, (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_I32, 3, DIMS(2, 2, 2), xi) });
    rt_attr_string(o.g, o.n, "message", "m");
    char *file = tu_join(dir, "fprint.txt");
    rt_attr_string(o.g, o.n, "file", file);
    TU_OK(gir_session_new(o.g, 1, &s, &err), &err);
    TU_OK(gir_session_set_input(s, 0, o.in[0], &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_session_warning_count(s), 0);
    text = tu_slurp(file, &len);
    assert_string_equal(text, "m\n[[[1 -2]\n  [3 4]]\n [[5 6]\n  [7 8]]]\n");
    free(text);
    gir_session_free(s);
    char *bad = tu_join(dir, "no/such/dir.txt");
    rt_attr_string(o.g, o.n, "file", bad);
    TU_OK(gir_session_new(o.g, 1, &s, &err), &err);
    TU_OK(gir_session_set_input(s, 0, o.in[0], &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_session_warning_count(s), 1);
    assert_non_null(strstr(gir_session_warning(s, 0), "node 'node': cannot open '"));
    assert_non_null(strstr(gir_session_warning(s, 0), "no/such/dir.txt' for writing: No such file or directory"));
    gir_session_free(s);
    one_end(&o);
    free(bad);
    free(file);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void test_lightnet_ops(void **state)
{
    (void)state;
    one o;
    gir_tensor *y, *ys[5];
    /* Sort: stable, values follow their keys; descending */
    one_begin(&o, GIR_OP_Sort, 2, 2,
              (const gir_tensor *const[]){ T_F32(1, DIMS(5), 3, 1, 2, 1, NAN),
                                           rt_tensor_new(GIR_DT_I32, 1, DIMS(5), (const int32_t[]){ 0, 1, 2, 3, 4 }) });
    one_run(&o, ys, 2);
    rt_expect_f32(ys[0], 1, DIMS(5), F32S(1, 1, 2, 3, NAN), 1e-9);
    rt_expect_bytes(ys[1], GIR_DT_I32, 1, DIMS(5), (const int32_t[]){ 1, 3, 2, 0, 4 });
    gir_tensor_unref(ys[0]);
    gir_tensor_unref(ys[1]);
    rt_attr_int(o.g, o.n, "descending", 1);
    one_run(&o, ys, 2);
    rt_expect_bytes(ys[1], GIR_DT_I32, 1, DIMS(5), (const int32_t[]){ 4, 0, 2, 1, 3 });
    gir_tensor_unref(ys[0]);
    gir_tensor_unref(ys[1]);
    one_end(&o);
    /* GatherBlocks: blocks of 2 at indices 2, 0 */
    one_begin(&o, GIR_OP_GatherBlocks, 2, 1,
              (const gir_tensor *const[]){ T_F32(1, DIMS(6), 0, 1, 2, 3, 4, 5), T_I64(1, DIMS(3), 2, 0, 1) });
    rt_attr_int(o.g, o.n, "count", 2);
    rt_attr_int(o.g, o.n, "block_size", 2);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 1, DIMS(4), F32S(4, 5, 0, 1), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(o.in[1]);
    o.in[1] = T_I64(1, DIMS(3), 3, 0, 1);
    rt_run_fails(o.g, o.in, 2, GIR_E_ARGUMENT, "GatherBlocks index 3 is outside the 3 blocks of the data", NULL);
    one_end(&o);
    /* RangeFill into int32: truncation toward zero */
    one_begin(&o, GIR_OP_RangeFill, 1, 1,
              (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_I32, 1, DIMS(4), NULL) });
    rt_attr_float(o.g, o.n, "start", -1.5);
    rt_attr_float(o.g, o.n, "limit", 2.5);
    rt_attr_float(o.g, o.n, "delta", 1.0);
    one_run(&o, &y, 1);
    rt_expect_bytes(y, GIR_DT_I32, 1, DIMS(4), (const int32_t[]){ -1, 0, 0, 1 }); /* -1.5 -0.5 0.5 1.5 */
    gir_tensor_unref(y);
    one_end(&o);
    /* SubMean: HWC uint8 to CHW float */
    one_begin(&o, GIR_OP_SubMean, 1, 1,
              (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_U8, 3, DIMS(1, 2, 3), (const uint8_t[]){ 10, 20, 30, 40, 50, 60 }) });
    RT_FLOATS(o.g, o.n, "mean", 1.0, 2.0, 3.5);
    rt_attr_string(o.g, o.n, "to", "float32");
    one_run(&o, &y, 1);
    rt_expect_f32(y, 3, DIMS(3, 1, 2), F32S(9, 39, 18, 48, 26.5f, 56.5f), 0);
    gir_tensor_unref(y);
    one_end(&o);
    /* DotProduct in the input type */
    one_begin(&o, GIR_OP_DotProduct, 2, 1, (const gir_tensor *const[]){ T_I64(2, DIMS(1, 3), 1, 2, 3), T_I64(2, DIMS(1, 3), 4, 5, 6) });
    one_run(&o, &y, 1);
    rt_expect_i64(y, 1, DIMS(1), I64S(32));
    gir_tensor_unref(y);
    one_end(&o);
    /* Stack on axis 1, Unstack back */
    one_begin(&o, GIR_OP_Stack, 2, 1, (const gir_tensor *const[]){ T_F32(1, DIMS(2), 1, 2), T_F32(1, DIMS(2), 3, 4) });
    rt_attr_int(o.g, o.n, "axis", -1);
    one_run(&o, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 2), F32S(1, 3, 2, 4), 0);
    one_end(&o);
    one_begin(&o, GIR_OP_Unstack, 1, 2, (const gir_tensor *const[]){ y });
    rt_attr_int(o.g, o.n, "axis", 1);
    one_run(&o, ys, 2);
    rt_expect_f32(ys[0], 1, DIMS(2), F32S(1, 2), 0);
    rt_expect_f32(ys[1], 1, DIMS(2), F32S(3, 4), 0);
    gir_tensor_unref(ys[0]);
    gir_tensor_unref(ys[1]);
    one_end(&o);
    /* SqueezeDetBoxDecode: one box, zero deltas: the anchor scaled and clipped */
    one_begin(&o, GIR_OP_SqueezeDetBoxDecode, 2, 1,
              (const gir_tensor *const[]){ T_F32(2, DIMS(1, 4), 0, 0, 0, 0), T_F32(1, DIMS(4), 10, 20, 8, 100) });
    rt_attr_int(o.g, o.n, "width", 100);
    rt_attr_int(o.g, o.n, "height", 100);
    rt_attr_int(o.g, o.n, "img_width", 200);
    rt_attr_int(o.g, o.n, "img_height", 100);
    one_run(&o, &y, 1);
    /* cx 20, cy 20, w 16, h 100: [12, max(-30,0), 28, min(70, 99)] */
    rt_expect_f32(y, 2, DIMS(1, 4), F32S(12, 0, 28, 70), 1e-5);
    gir_tensor_unref(y);
    one_end(&o);
    /* YoloV3Decode: one anchor, one class, a 1x2 grid of zeros */
    one_begin(&o, GIR_OP_YoloV3Decode, 2, 5,
              (const gir_tensor *const[]){ rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 6, 1, 2), NULL), T_F32(2, DIMS(1, 2), 3, 4) });
    rt_attr_int(o.g, o.n, "img_width", 8);
    rt_attr_int(o.g, o.n, "img_height", 4);
    one_run(&o, ys, 5);
    rt_expect_f32(ys[0], 5, DIMS(1, 1, 2, 1, 2), F32S(2, 6, 2, 2), 1e-6);       /* (0.5 + x) * 8/2, (0.5 + 0) * 4 */
    rt_expect_f32(ys[1], 5, DIMS(1, 1, 2, 1, 2), F32S(3, 3, 4, 4), 1e-6);
    rt_expect_f32(ys[2], 5, DIMS(1, 1, 4, 1, 2), F32S(0.5f, 4.5f, 0, 0, 3.5f, 7.5f, 4, 4), 1e-6);
    rt_expect_f32(ys[3], 5, DIMS(1, 1, 1, 1, 2), F32S(0.5f, 0.5f), 1e-6);
    rt_expect_f32(ys[4], 5, DIMS(1, 1, 1, 1, 2), F32S(0.5f, 0.5f), 1e-6);
    for (int i = 0; i < 5; i++)
        gir_tensor_unref(ys[i]);
    one_end(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),          cmocka_unit_test(test_cast),
        cmocka_unit_test(test_binary),         cmocka_unit_test(test_variadic_where),
        cmocka_unit_test(test_views_and_copies), cmocka_unit_test(test_pad_tile_expand_gather),
        cmocka_unit_test(test_depth_space),    cmocka_unit_test(test_norms),
        cmocka_unit_test(test_reductions),     cmocka_unit_test(test_resize),
        cmocka_unit_test(test_print),          cmocka_unit_test(test_lightnet_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
