/* Legalization patterns of pat_math.c and pat_window.c: Erf as a rational
 * function (checked against libm's double erf on a dense grid), Sqrt as
 * Pow where the input is shown non-negative, LRN as a convolution over
 * channels, ReduceProd as Slices multiplied; each run before and after
 * the rewrite, and written to the targets that lack the operator; and the
 * fold-constants pattern (pat_fold.c) on a node's constant cone; ArgMax and
 * ArgMin through the index type MXNet's and NNVM's argmax give. */
#include "patutil.h"

#include "graphir/model.h"

static gir_graph *unary(gir_op op, int rank, const int64_t *dims)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, rank, dims);
    rt_node(g, op, "u", "x", "y");
    rt_output(g, "y");
    return g;
}

/* Runs g (one input, one output) on the n floats of x; returns the output. */
static float *run_on(const gir_graph *g, const float *x, size_t n)
{
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 1, DIMS((int64_t)n), x), *out = NULL;
    rt_run(g, 1, &in, 1, &out, 1);
    const void *p;
    assert_int_equal(gir_tensor_load(out, &p, NULL), GIR_OK);
    float *y = malloc(n * sizeof *y);
    assert_non_null(y);
    memcpy(y, p, n * sizeof *y);
    gir_tensor_unref(in);
    gir_tensor_unref(out);
    return y;
}

/* The rational form against erf in double: within 4.2e-7 relative (the
 * figure the pattern's note states) on a dense grid over [-5, 5], on tiny
 * magnitudes down to 1e-38, and exact at 0, +-inf and NaN. */
static void test_erf_accuracy(void **state)
{
    (void)state;
    enum { GRID = 400001, TINY = 400, N = GRID + TINY + 6 };
    float *x = malloc(N * sizeof *x);
    assert_non_null(x);
    for (int i = 0; i < GRID; i++)
        x[i] = -5.0f + 10.0f * (float)i / (float)(GRID - 1);
    for (int i = 0; i < TINY; i++)
        x[GRID + i] = (i % 2 ? -1.0f : 1.0f) * powf(10.0f, -38.0f + 35.0f * (float)i / TINY);
    const float special[6] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3.925f };
    memcpy(x + GRID + TINY, special, sizeof special);

    gir_graph *r = pat_check(unary(GIR_OP_Erf, 1, DIMS(N)), "erf-as-rational", "u", PAT_EDGES | PAT_NAN, 1e-6);
    float *y = run_on(r, x, N);
    double worst = 0;
    for (int i = 0; i < GRID + TINY; i++) {
        double want = erf((double)x[i]);
        if (want == 0)
            continue;
        double rel = fabs((double)y[i] - want) / fabs(want);
        if (rel > worst)
            worst = rel;
        if (fabsf(y[i]) > 1.0f)
            fail_msg("erf(%.9g) = %.9g is beyond 1", (double)x[i], (double)y[i]);
    }
    if (worst > 4.2e-7)
        fail_msg("the rational erf is %.3g relative from erf, more than 4.2e-7", worst);
    const float *s = y + GRID + TINY;
    assert_true(s[0] == 0.0f && s[1] == 0.0f);
    assert_true(s[2] == 1.0f && s[3] == -1.0f);
    assert_true(isnan(s[4]));
    assert_true(s[5] == 1.0f);
    free(y);
    free(x);
    assert_int_equal(tu_count_op(r, "Erf"), 0);
    gir_graph_free(r);
}

static void test_erf_refuses_double(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F64, 1, DIMS(4));
    rt_node(g, GIR_OP_Erf, "u", "x", "y");
    rt_output(g, "y");
    pat_refuses(g, "erf-as-rational", "u", "float32 only");
}

/* GELU as PyTorch exports it, written to NNVM (no erf) and LightNet (no
 * erf, no broadcasting), read back and run: the same numbers. */
static void test_gelu_targets(void **state)
{
    (void)state;
    static const char *const targets[] = { "nnvm", "lightnet" };
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 2, DIMS(6, 7));
        rt_const(g, "rt2", GIR_DT_F32, 0, NULL, F32S(1.41421353816986083984375f));
        rt_const(g, "one", GIR_DT_F32, 0, NULL, F32S(1.0f));
        rt_const(g, "half", GIR_DT_F32, 0, NULL, F32S(0.5f));
        rt_node(g, GIR_OP_Div, "div", "x,rt2", "d");
        rt_node(g, GIR_OP_Erf, "erf", "d", "e");
        rt_node(g, GIR_OP_Add, "add", "e,one", "a");
        rt_node(g, GIR_OP_Mul, "mul", "x,a", "m");
        rt_node(g, GIR_OP_Mul, "mul2", "m,half", "y");
        rt_output(g, "y");
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_graph_finish(g, &err), &err);
        char name[32];
        snprintf(name, sizeof name, "gelu.%s", targets[t]);
        gir_graph *back = pat_through(g, targets[t], name, PAT_EDGES, 1e-6);
        assert_int_equal(tu_count_op(back, "Erf"), 0);
        gir_graph_free(back);
        gir_graph_free(g);
    }
}

/* LayerNorm's root: Sqrt(ReduceMean((x - m)^2) + eps) becomes Pow(., 0.5),
 * within an ulp; NaN and infinities pass the same way. */
static void test_sqrt_pow(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(5, 16));
    rt_input(g, "m", GIR_DT_F32, 2, DIMS(5, 1));
    rt_const(g, "two", GIR_DT_F32, 0, NULL, F32S(2.0f));
    rt_const(g, "eps", GIR_DT_F32, 0, NULL, F32S(1e-6f));
    rt_node(g, GIR_OP_Sub, "sub", "x,m", "d");
    rt_node(g, GIR_OP_Pow, "pow", "d,two", "p");
    gir_node *rm = rt_node(g, GIR_OP_ReduceMean, "mean", "p", "v");
    rt_attr_ints(g, rm, "axes", (const int64_t[]){ 1 }, 1);
    rt_node(g, GIR_OP_Add, "add", "v,eps", "a");
    rt_node(g, GIR_OP_Sqrt, "u", "a", "y");
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "sqrt-as-pow", "u", PAT_EDGES | PAT_NAN, 2.4e-7);
    assert_int_equal(tu_count_op(r, "Sqrt"), 0);
    gir_graph_free(r);

    /* squares, absolute values and exponentials are >= +0 too */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(64));
    rt_node(g, GIR_OP_Mul, "sq", "x,x", "s");
    rt_node(g, GIR_OP_Abs, "abs", "x", "b");
    rt_node(g, GIR_OP_Add, "add", "s,b", "a");
    rt_node(g, GIR_OP_Sqrt, "u", "a", "y");
    rt_output(g, "y");
    gir_graph_free(pat_check(g, "sqrt-as-pow", "u", PAT_EDGES | PAT_NAN, 2.4e-7));
}

/* Where the input may be negative or -0 (Relu keeps -0; a plain input),
 * Sqrt stays: Pow would give +0 for -0 and +inf for -inf. */
static void test_sqrt_refuses(void **state)
{
    (void)state;
    pat_refuses(unary(GIR_OP_Sqrt, 1, DIMS(8)), "sqrt-as-pow", "u", "not shown to be >= +0");
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(8));
    rt_node(g, GIR_OP_Relu, "relu", "x", "r");
    rt_node(g, GIR_OP_Sqrt, "u", "r", "y");
    rt_output(g, "y");
    pat_refuses(g, "sqrt-as-pow", "u", "not shown to be >= +0");
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(8));
    rt_const(g, "k", GIR_DT_F32, 1, DIMS(8), F32S(1.0f, -0.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f));
    rt_node(g, GIR_OP_Exp, "exp", "x", "e");
    rt_node(g, GIR_OP_Div, "div", "e,k", "q"); /* e / -0 is -inf */
    rt_node(g, GIR_OP_Sqrt, "u", "q", "y");
    rt_output(g, "y");
    pat_refuses(g, "sqrt-as-pow", "u", "not shown to be >= +0");
}

static gir_graph *lrn(int64_t c, int64_t size, double alpha, double beta, double bias)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, c, 3, 5));
    gir_node *n = rt_node(g, GIR_OP_LRN, "u", "x", "y");
    rt_attr_int(g, n, "size", size);
    rt_attr_float(g, n, "alpha", alpha);
    rt_attr_float(g, n, "beta", beta);
    rt_attr_float(g, n, "bias", bias);
    rt_output(g, "y");
    return g;
}

/* Even and odd windows, windows wider than the channels, a window of one.
 * Inputs in [-4, 4): beyond 1.8e19 a square overflows float, and the form
 * (like any float LRN) gives 0 where the runtime's double sum still gives
 * x / (alpha / size * sum)^beta. */
static void test_lrn_conv(void **state)
{
    (void)state;
    static const struct {
        int64_t c, size;
        double alpha, beta, bias;
    } cases[] = {
        { 4, 3, 1e-4, 0.75, 1.0 }, { 7, 4, 2e-3, 0.6, 2.0 }, { 5, 9, 0.5, 1.0, 1.0 }, { 3, 1, 1.0, 0.5, 0.5 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gir_graph *r = pat_check(lrn(cases[i].c, cases[i].size, cases[i].alpha, cases[i].beta, cases[i].bias),
                                 "lrn-as-conv", "u", 0, 1e-6);
        assert_int_equal(tu_count_op(r, "LRN"), 0);
        assert_int_equal(tu_count_op(r, "Conv"), 1);
        gir_graph_free(r);
    }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, (const int64_t[]){ -1, 4, 3, 3 });
    gir_node *n = rt_node(g, GIR_OP_LRN, "u", "x", "y");
    rt_attr_int(g, n, "size", 3);
    rt_output(g, "y");
    pat_refuses(g, "lrn-as-conv", "u", "unknown shape");
}

static gir_graph *reduceprod(const int64_t *axes, size_t na, int keepdims)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(3, 4, 5));
    gir_node *n = rt_node(g, GIR_OP_ReduceProd, "u", "x", "y");
    if (axes)
        rt_attr_ints(g, n, "axes", axes, na);
    rt_attr_int(g, n, "keepdims", keepdims);
    rt_output(g, "y");
    return g;
}

/* One axis (bit-exact: the same factors in the same order, and products
 * of three to five floats of [-4, 4) are exact in double and float alike
 * only up to rounding, so 1e-6), two axes, every axis, keepdims 0. */
static void test_reduceprod_mul(void **state)
{
    (void)state;
    gir_graph *r = pat_check(reduceprod((const int64_t[]){ 1 }, 1, 1), "reduceprod-as-mul", "u", PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "Slice"), 4);
    assert_int_equal(tu_count_op(r, "Mul"), 3);
    gir_graph_free(r);
    gir_graph_free(
        pat_check(reduceprod((const int64_t[]){ 0, -1 }, 2, 0), "reduceprod-as-mul", "u", PAT_NAN, 1e-6));
    r = pat_check(reduceprod(NULL, 0, 1), "reduceprod-as-mul", "u", PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "Slice"), 12);
    gir_graph_free(r);
    gir_graph_free(pat_check(reduceprod(NULL, 0, 0), "reduceprod-as-mul", "u", PAT_NAN, 1e-6));

    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(2, 300));
    gir_node *n = rt_node(g, GIR_OP_ReduceProd, "u", "x", "y");
    rt_attr_ints(g, n, "axes", (const int64_t[]){ 1 }, 1);
    rt_output(g, "y");
    pat_refuses(g, "reduceprod-as-mul", "u", "at most 256");
}

/* Written to LightNet (no LRN, no ReduceProd), read back and run. */
static void test_window_lightnet(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 6, 4, 4));
    gir_node *n = rt_node(g, GIR_OP_LRN, "lrn", "x", "l");
    rt_attr_int(g, n, "size", 5);
    rt_attr_float(g, n, "alpha", 1e-2);
    rt_attr_float(g, n, "beta", 0.75);
    rt_attr_float(g, n, "bias", 2.0);
    n = rt_node(g, GIR_OP_ReduceProd, "prod", "l", "y");
    rt_attr_ints(g, n, "axes", (const int64_t[]){ 1 }, 1);
    rt_attr_int(g, n, "keepdims", 1);
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_graph *back = pat_through(g, "lightnet", "window.json", 0, 1e-6);
    assert_int_equal(tu_count_op(back, "LRN") + tu_count_op(back, "ReduceProd"), 0);
    gir_graph_free(back);
    gir_graph_free(g);
}

/* A node computing from constants alone (Neg of an Identity of a weight)
 * and its cone become one constant: bit-exact, NaN and infinities kept. */
static void test_fold_constants_pattern(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(6));
    rt_const(g, "w", GIR_DT_F32, 1, DIMS(6), F32S(1.5f, -0.0f, 3e38f, NAN, -INFINITY, 2.0f));
    rt_node(g, GIR_OP_Identity, "id", "w", "wi");
    rt_node(g, GIR_OP_Neg, "u", "wi", "c");
    rt_node(g, GIR_OP_Mul, "mul", "x,c", "y");
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "fold-constants", "u", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Neg") + tu_count_op(r, "Identity"), 0);
    assert_int_equal(gir_graph_node_count(r), 1);
    gir_graph_free(r);
}

static gir_graph *argx(gir_op op, int64_t axis, int keepdims)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(3, 7, 4));
    gir_node *n = rt_node(g, op, "u", "x", "y");
    rt_attr_int(g, n, "axis", axis);
    rt_attr_int(g, n, "keepdims", keepdims);
    rt_output(g, "y");
    return g;
}

/* ArgMax/ArgMin through float32 or int32 indices: the same int64 indices
 * (ties and -0/+0 give the first index either way, NaN is skipped alike). */
static void test_argmax_indices(void **state)
{
    (void)state;
    static const char *const pats[] = { "argmax-float-indices", "argmax-int32-indices", "argmin-float-indices",
                                        "argmin-int32-indices" };
    for (int i = 0; i < 4; i++) {
        gir_op op = i < 2 ? GIR_OP_ArgMax : GIR_OP_ArgMin;
        gir_graph *r = pat_check(argx(op, i % 2 ? -2 : 1, i % 2), pats[i], "u", PAT_EDGES | PAT_NAN, 0);
        assert_int_equal(tu_count_op(r, "Cast"), 2);
        /* applied again to what it made, it refuses: the indices are cast already */
        int32_t idx = tu_find_op(r, i < 2 ? "ArgMax" : "ArgMin");
        assert_true(idx >= 0);
        gir_error err = GIR_ERROR_INIT;
        assert_int_equal(gir_pattern_apply(r, gir_pattern_find(pats[i]), idx, &err), GIR_E_UNSUPPORTED);
        assert_non_null(strstr(err.message, "cast already"));
        gir_error_clear(&err);
        gir_graph_free(r);
    }
}

/* Written to MXNet (float32 indices) and NNVM (int32): one argmax/argmin
 * and one cast each, read back, the same indices. */
static void test_argmax_targets(void **state)
{
    (void)state;
    static const char *const targets[] = { "mxnet", "nnvm" };
    for (size_t t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++) {
            gir_graph *g = argx(k ? GIR_OP_ArgMin : GIR_OP_ArgMax, 2, k);
            gir_error err = GIR_ERROR_INIT;
            TU_OK(gir_graph_finish(g, &err), &err);
            char name[32];
            snprintf(name, sizeof name, "arg%d-%s.json", k, targets[t]);
            gir_graph *back = pat_through(g, targets[t], name, PAT_EDGES | PAT_NAN, 0);
            assert_int_equal(tu_count_op(back, k ? "ArgMin" : "ArgMax"), 1);
            assert_int_equal(gir_graph_node_count(back), 3); /* the index, its cast, the cast to int64 */
            gir_graph_free(back);
            gir_graph_free(g);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_erf_accuracy),   cmocka_unit_test(test_erf_refuses_double),
        cmocka_unit_test(test_gelu_targets),   cmocka_unit_test(test_sqrt_pow),
        cmocka_unit_test(test_sqrt_refuses),   cmocka_unit_test(test_lrn_conv),
        cmocka_unit_test(test_reduceprod_mul), cmocka_unit_test(test_window_lightnet),
        cmocka_unit_test(test_fold_constants_pattern), cmocka_unit_test(test_argmax_indices),
        cmocka_unit_test(test_argmax_targets),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
