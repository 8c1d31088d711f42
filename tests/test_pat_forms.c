/* Legalization patterns written for the real-world corpus (print-as-output,
 * ...), and the parts of the check they rely on: printed tensors compared
 * with the outputs a target without print returns, shapes chosen for
 * inputs of no known dimension. */
#include "patutil.h"

#include "graphir/check.h"
#include "graphir/model.h"

/* x[2,3] -> Relu -> r, printed; a constant c printed; r printed twice. */
static gir_graph *printing(void)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(2, 3));
    static const float cv[4] = { 1, -2, 3, -4 };
    rt_const(g, "c", GIR_DT_F32, 1, DIMS(4), cv);
    rt_node(g, GIR_OP_Relu, "relu", "x", "r");
    gir_node *p = rt_node(g, GIR_OP_Print, "p1", "r", "");
    rt_attr_string(g, p, "message", "r:");
    rt_attr_string(g, rt_node(g, GIR_OP_Print, "p2", "c", ""), "message", "c:");
    rt_attr_string(g, rt_node(g, GIR_OP_Print, "p3", "r", ""), "message", "r again:");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

/* g with print-as-output applied to every Print node. */
static gir_graph *prints_as_outputs(const gir_graph *g)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *r = NULL;
    TU_OK(gir_graph_clone(g, &r, &err), &err);
    const gir_pattern *p = gir_pattern_find("print-as-output");
    assert_non_null(p);
    for (const char *const *nm = (const char *const[]){ "p1", "p2", "p3", NULL }; *nm; nm++)
        TU_OK(gir_pattern_apply(r, p, gir_graph_node_index(r, *nm), &err), &err);
    return r;
}

static void test_print_output(void **state)
{
    (void)state;
    gir_graph *g = printing();
    assert_int_equal(gir_graph_output_count(g), 0);
    gir_graph *r = prints_as_outputs(g);
    assert_int_equal(tu_count_op(r, "Print"), 0);
    /* r is an output under its own name (once: p3 prints it again), the
     * constant through an Identity named after its Print node */
    assert_int_equal(gir_graph_output_count(r), 2);
    assert_string_equal(gir_value_name(gir_graph_output(r, 0)), "r");
    assert_string_equal(gir_value_name(gir_graph_output(r, 1)), "p2");
    assert_int_equal(tu_count_op(r, "Identity"), 1);
    /* the outputs are the printed values */
    static const float xv[6] = { -1, 2, -0.0f, NAN, 5, -6 };
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), xv), *outs[2] = { 0 };
    rt_run(r, 1, &in, 1, outs, 2);
    static const float want_r[6] = { 0, 2, -0.0f, NAN, 5, 0 }, want_c[4] = { 1, -2, 3, -4 };
    rt_expect_f32(outs[0], 2, DIMS(2, 3), want_r, 0);
    rt_expect_f32(outs[1], 1, DIMS(4), want_c, 0);
    gir_tensor_unref(outs[0]);
    gir_tensor_unref(outs[1]);
    gir_tensor_unref(in);

    /* the check compares what A prints with what B returns */
    gir_check_result res;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_check_written(g, r, NULL, &res, &err), &err);
    assert_int_equal(res.method, GIR_CHECK_RUN);
    assert_true(res.passed);
    assert_non_null(strstr(res.verdict, "2 outputs agree"));
    assert_non_null(strstr(res.report, "output 'r' (printed by A)"));
    gir_check_result_clear(&res);
    /* and finds a difference there */
    gir_graph *bad = NULL;
    TU_OK(gir_graph_clone(r, &bad, &err), &err);
    bad->nodes[gir_graph_node_index(bad, "relu")]->op = GIR_OP_Sigmoid; /* seeded inputs are in [0, 1): Relu = Abs there */
    TU_OK(gir_graph_finish(bad, &err), &err);
    assert_int_equal(gir_check_written(g, bad, NULL, &res, &err), GIR_E_CHECK_FAILED);
    assert_non_null(strstr(err.message, "first: 'r'"));
    gir_error_clear(&err);
    gir_check_result_clear(&res);
    gir_graph_free(bad);
    /* B returning less than A prints is a difference of outputs */
    gir_graph *less = NULL;
    TU_OK(gir_graph_clone(r, &less, &err), &err);
    less->n_outputs = 1;
    assert_int_equal(gir_check_written(g, less, NULL, &res, &err), GIR_E_CHECK_FAILED);
    assert_non_null(strstr(err.message, "the models have 0 and 1 outputs"));
    gir_error_clear(&err);
    gir_check_result_clear(&res);
    gir_graph_free(less);
    gir_graph_free(r);
    gir_graph_free(g);
}

/* The pattern through legalization: a plan that refuses Print. */
static gir_status refuse_print(void *ctx, const gir_graph *g, gir_plan *p, gir_error *err)
{
    (void)ctx;
    p->n_nodes = g->n_nodes;
    p->why = calloc(g->n_nodes + 1, sizeof *p->why);
    if (!p->why)
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == GIR_OP_Print) {
            p->why[i] = gir_strdupf("Print");
            p->n_bad++;
        }
    return GIR_OK;
}

static void test_print_legalized(void **state)
{
    (void)state;
    gir_graph *g = printing();
    gir_error err = GIR_ERROR_INIT;
    gir_legal_report rep = { 0 };
    TU_OK(gir_legalize(&g, refuse_print, NULL, &rep, &err), &err);
    size_t k = 0;
    while (gir_pattern_at(k) && strcmp(gir_pattern_at(k)->name, "print-as-output") != 0)
        k++;
    assert_non_null(gir_pattern_at(k));
    assert_int_equal(rep.applied[k], 3);
    assert_int_equal(tu_count_op(g, "Print"), 0);
    assert_int_equal(gir_graph_output_count(g), 2);
    gir_legal_report_free(&rep);
    gir_graph_free(g);
}

/* x[?,?,?,?] -> Conv(W[2,3,3,3]) -> Flatten -> Gemm(B[5,features],
 * transB): with 32 features only a 6x6 image fits; 2*s*s = 31 never does. */
static gir_graph *lenet_like(int64_t features)
{
    gir_graph *g = rt_graph();
    rt_input(g, "data", GIR_DT_F32, 4, DIMS(-1, -1, -1, -1));
    float w[2 * 3 * 3 * 3], b[5 * 32];
    rt_fill(w, 54, 7);
    rt_fill(b, (size_t)(5 * features), 8);
    rt_const(g, "w", GIR_DT_F32, 4, DIMS(2, 3, 3, 3), w);
    rt_const(g, "b", GIR_DT_F32, 2, DIMS(5, features), b);
    gir_node *c = rt_node(g, GIR_OP_Conv, "conv", "data,w", "c");
    rt_attr_ints(g, c, "kernel_shape", DIMS(3, 3), 2);
    gir_node *f = rt_node(g, GIR_OP_Flatten, "flat", "c", "f");
    rt_attr_int(g, f, "axis", 1);
    gir_node *m = rt_node(g, GIR_OP_Gemm, "fc", "f,b", "y");
    rt_attr_int(g, m, "transB", 1);
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

static void test_check_chooses_shape(void **state)
{
    (void)state;
    gir_graph *a = lenet_like(32), *b = lenet_like(32);
    gir_check_result res;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_check_written(a, b, NULL, &res, &err), &err);
    assert_int_equal(res.method, GIR_CHECK_RUN);
    assert_true(res.passed);
    assert_non_null(strstr(res.verdict, "at input shapes the checker chose: data [1,3,6,6]"));
    assert_non_null(strstr(res.json, "\"chosen_input_shapes\": \"data [1,3,6,6]\""));
    gir_check_result_clear(&res);
    /* the sources are not changed */
    assert_int_equal(gir_graph_input(a, 0)->shape.dims[2], -1);
    /* a model computing something else still fails, at that shape */
    gir_graph *c = lenet_like(32);
    gir_node *cv = c->nodes[gir_graph_node_index(c, "conv")];
    float *wd = (float *)c->values[cv->in[1]]->data->data;
    wd[0] += 1.0f;
    assert_int_equal(gir_check_written(a, c, NULL, &res, &err), GIR_E_CHECK_FAILED);
    assert_non_null(strstr(res.verdict, "data [1,3,6,6]"));
    gir_error_clear(&err);
    gir_check_result_clear(&res);
    gir_graph_free(c);
    /* given inputs are used as they are */
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 3, 6, 6), NULL);
    const char *names[] = { "data" };
    gir_check_options o;
    gir_check_options_init(&o);
    o.n_feeds = 1;
    o.feed_names = names;
    o.feed_tensors = &in;
    TU_OK(gir_check_written(a, b, &o, &res, &err), &err);
    assert_null(strstr(res.verdict, "chose"));
    gir_check_result_clear(&res);
    gir_tensor_unref(in);
    gir_graph_free(a);
    gir_graph_free(b);
}

/* No size fits (the Gemm wants 31 features: no square gives 2*s*s = 31):
 * the check says the models could not be run, as before. */
static void test_check_no_shape_fits(void **state)
{
    (void)state;
    gir_graph *g = lenet_like(31);
    gir_error err = GIR_ERROR_INIT;
    gir_graph *b2 = NULL;
    TU_OK(gir_graph_clone(g, &b2, &err), &err);
    gir_check_result res;
    assert_int_equal(gir_check_written(g, b2, NULL, &res, &err), GIR_E_CHECK_FAILED);
    assert_int_equal(res.method, GIR_CHECK_STRUCTURAL);
    assert_non_null(strstr(err.message, "no known dimension"));
    gir_error_clear(&err);
    gir_check_result_clear(&res);
    gir_graph_free(b2);
    gir_graph_free(g);
}

/* Integer outputs of two widths (nnabla reads an index back as int64)
 * compare by value. */
static void test_check_int_widths(void **state)
{
    (void)state;
    gir_graph *a = rt_graph();
    rt_input(a, "x", GIR_DT_F32, 2, DIMS(3, 4));
    gir_node *n = rt_node(a, GIR_OP_ArgMax, "am", "x", "i");
    rt_attr_int(a, n, "axis", 1);
    n = rt_node(a, GIR_OP_Cast, "cast", "i", "y");
    rt_attr_string(a, n, "to", "int32");
    rt_output(a, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(a, &err), &err);
    gir_graph *b = rt_graph();
    rt_input(b, "x", GIR_DT_F32, 2, DIMS(3, 4));
    n = rt_node(b, GIR_OP_ArgMax, "am", "x", "y");
    rt_attr_int(b, n, "axis", 1);
    rt_output(b, "y");
    TU_OK(gir_graph_finish(b, &err), &err);
    gir_check_result res;
    TU_OK(gir_check_written(a, b, NULL, &res, &err), &err);
    assert_non_null(strstr(res.report, "int32 (int64 in B)"));
    gir_check_result_clear(&res);
    /* another index is a mismatch */
    b->nodes[0]->op = GIR_OP_ArgMin;
    TU_OK(gir_graph_finish(b, &err), &err);
    assert_int_equal(gir_check_written(a, b, NULL, &res, &err), GIR_E_CHECK_FAILED);
    gir_error_clear(&err);
    gir_check_result_clear(&res);
    gir_graph_free(a);
    gir_graph_free(b);
}

/* Gemm as a 1x1 Conv: B both ways round, C of M elements, of one, none. */
static void test_gemm_conv(void **state)
{
    (void)state;
    for (int tb = 0; tb < 2; tb++)
        for (int cm = 0; cm < 3; cm++) {
            gir_graph *g = rt_graph();
            rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 16));
            float b[16 * 5], c[5];
            rt_fill(b, 80, 3 + (uint64_t)tb);
            rt_fill(c, 5, 4);
            rt_const(g, "b", GIR_DT_F32, 2, tb ? DIMS(5, 16) : DIMS(16, 5), b);
            if (cm == 1)
                rt_const(g, "c", GIR_DT_F32, 1, DIMS(5), c);
            if (cm == 2)
                rt_const(g, "c", GIR_DT_F32, 2, DIMS(1, 1), c);
            gir_node *n = rt_node(g, GIR_OP_Gemm, "fc", cm ? "a,b,c" : "a,b", "y");
            rt_attr_int(g, n, "transB", tb);
            rt_output(g, "y");
            gir_graph *r = pat_check(g, "gemm-as-conv", "fc", PAT_EDGES | PAT_NAN, 1e-6);
            assert_int_equal(tu_count_op(r, "Conv"), 1);
            assert_int_equal(tu_count_op(r, "Reshape"), 2);
            assert_int_equal(tu_count_op(r, "Gemm"), 0);
            gir_graph_free(r);
        }
    /* what it does not take */
    gir_graph *g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 16));
    rt_input(g, "b", GIR_DT_F32, 2, DIMS(5, 16));
    gir_node *n = rt_node(g, GIR_OP_Gemm, "fc", "a,b", "y");
    rt_attr_int(g, n, "transB", 1);
    rt_output(g, "y");
    pat_refuses(g, "gemm-as-conv", "fc", "B is not a float32 constant");
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 16));
    float b[80] = { 0 }, c[30] = { 0 };
    rt_const(g, "b", GIR_DT_F32, 2, DIMS(16, 5), b);
    rt_const(g, "c", GIR_DT_F32, 2, DIMS(6, 5), c);
    rt_node(g, GIR_OP_Gemm, "fc", "a,b,c", "y");
    rt_output(g, "y");
    pat_refuses(g, "gemm-as-conv", "fc", "a bias");
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 16));
    rt_const(g, "b", GIR_DT_F32, 2, DIMS(16, 5), b);
    n = rt_node(g, GIR_OP_Gemm, "fc", "a,b", "y");
    rt_attr_float(g, n, "alpha", 2.0);
    rt_output(g, "y");
    pat_refuses(g, "gemm-as-conv", "fc", "alpha");
}

/* Broadcasting as Reshape + Resize(nearest): every binary operator, a
 * scalar constant, a lower-rank operand, both operands broadcast. */
static void test_broadcast_resize(void **state)
{
    (void)state;
    static const gir_op ops[] = { GIR_OP_Add, GIR_OP_Sub, GIR_OP_Mul, GIR_OP_Div, GIR_OP_Max, GIR_OP_Min };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 4, 5));
        rt_input(g, "s", GIR_DT_F32, 2, DIMS(4, 1));
        rt_node(g, ops[i], "op", "x,s", "y");
        rt_output(g, "y");
        gir_graph *r = pat_check(g, "broadcast-as-resize", "op", PAT_EDGES | PAT_NAN, 0);
        assert_int_equal(tu_count_op(r, "Resize"), 1);
        assert_int_equal(tu_count_op(r, "Reshape"), 1);
        gir_graph_free(r);
    }
    /* a scalar constant becomes a constant of the output's rank */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(2, 3, 4));
    static const float six = 6.0f;
    rt_const(g, "k", GIR_DT_F32, 0, NULL, &six);
    rt_node(g, GIR_OP_Min, "op", "x,k", "y");
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "broadcast-as-resize", "op", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Resize"), 1);
    assert_int_equal(tu_count_op(r, "Reshape"), 0);
    gir_graph_free(r);
    /* both sides broadcast: [3,1] with [1,4] */
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(3, 1));
    rt_input(g, "b", GIR_DT_F32, 2, DIMS(1, 4));
    rt_node(g, GIR_OP_Pow, "op", "a,b", "y");
    rt_output(g, "y");
    r = pat_check(g, "broadcast-as-resize", "op", PAT_EDGES | PAT_POSITIVE, 0);
    assert_int_equal(tu_count_op(r, "Resize"), 2);
    gir_graph_free(r);
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(3, 4));
    rt_input(g, "b", GIR_DT_F32, 2, DIMS(3, 4));
    rt_node(g, GIR_OP_Add, "op", "a,b", "y");
    rt_output(g, "y");
    pat_refuses(g, "broadcast-as-resize", "op", "no broadcasting");
}

/* Clip with both bounds: Max and Min, or Relu and Min. */
static void test_clip_max_min(void **state)
{
    (void)state;
    static const double bounds[][2] = { { 0.0, 6.0 }, { -1.0, 1.0 }, { -0.5, 3.0 } };
    for (size_t i = 0; i < 3; i++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 2, DIMS(8, 9));
        gir_node *n = rt_node(g, GIR_OP_Clip, "clip", "x", "y");
        rt_attr_float(g, n, "min", bounds[i][0]);
        rt_attr_float(g, n, "max", bounds[i][1]);
        rt_output(g, "y");
        /* numerically exact; -0 may come out +0 where Max picks the bound */
        gir_graph *r = pat_check(g, "clip-as-max-min", "clip", PAT_EDGES | PAT_NAN, 1e-300);
        assert_int_equal(tu_count_op(r, "Relu"), i == 0);
        assert_int_equal(tu_count_op(r, "Max"), i != 0);
        assert_int_equal(tu_count_op(r, "Min"), 1);
        gir_graph_free(r);
    }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(8, 9));
    rt_attr_float(g, rt_node(g, GIR_OP_Clip, "clip", "x", "y"), "max", 1.0);
    rt_output(g, "y");
    pat_refuses(g, "clip-as-max-min", "clip", "without both bounds");
}

/* A recurrent layer x[3,2,4] with constant weights (hidden 3), all outputs. */
static gir_graph *recurrent(gir_op op, int dirs)
{
    int64_t G = op == GIR_OP_LSTM ? 4 : op == GIR_OP_GRU ? 3 : 1, H = 3, I = 4;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(3, 2, I));
    float w[2 * 4 * 3 * 4], r[2 * 4 * 3 * 3], b[2 * 8 * 3];
    rt_fill(w, sizeof w / sizeof *w, 11);
    rt_fill(r, sizeof r / sizeof *r, 12);
    rt_fill(b, sizeof b / sizeof *b, 13);
    rt_const(g, "w", GIR_DT_F32, 3, DIMS(dirs, G * H, I), w);
    rt_const(g, "r", GIR_DT_F32, 3, DIMS(dirs, G * H, H), r);
    rt_const(g, "b", GIR_DT_F32, 2, DIMS(dirs, 2 * G * H), b);
    gir_node *n = rt_node(g, op, "rec", "x,w,r,b", op == GIR_OP_LSTM ? "y,yh,yc" : "y,yh");
    rt_attr_int(g, n, "hidden_size", H);
    if (dirs == 2)
        rt_attr_string(g, n, "direction", "bidirectional");
    rt_output(g, "y");
    rt_output(g, "yh");
    if (op == GIR_OP_LSTM)
        rt_output(g, "yc");
    return g;
}

static void test_rnn_unrolled(void **state)
{
    (void)state;
    static const struct {
        gir_op op;
        const char *pattern;
    } cases[] = { { GIR_OP_LSTM, "lstm-unrolled" }, { GIR_OP_GRU, "gru-unrolled" }, { GIR_OP_RNN, "rnn-unrolled" } };
    for (size_t i = 0; i < 3; i++)
        for (int dirs = 1; dirs <= 2; dirs++) {
            gir_graph *r = pat_check(recurrent(cases[i].op, dirs), cases[i].pattern, "rec", PAT_EDGES | PAT_NAN, 1e-6);
            assert_int_equal(tu_count_op(r, gir_op_name(cases[i].op)), 0);
            assert_true(tu_count_op(r, "Gemm") >= 3);
            gir_graph_free(r);
        }
    /* a sequence of unknown length: refused, saying why */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(-1, 2, 4));
    rt_input(g, "w", GIR_DT_F32, 3, DIMS(1, 3, 4));
    rt_input(g, "r", GIR_DT_F32, 3, DIMS(1, 3, 3));
    gir_node *n = rt_node(g, GIR_OP_RNN, "rec", "x,w,r", "y");
    rt_attr_int(g, n, "hidden_size", 3);
    rt_output(g, "y");
    pat_refuses(g, "rnn-unrolled", "rec", "the sequence length of X is not known");
}

/* Gemm's C after the product: a matrix C, a row, a scalar. */
static void test_gemm_bias_add(void **state)
{
    (void)state;
    static const int64_t cshape[][2] = { { 6, 5 }, { 1, 5 }, { 1, 1 } };
    for (size_t i = 0; i < 3; i++) {
        gir_graph *g = rt_graph();
        rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 16));
        rt_input(g, "b", GIR_DT_F32, 2, DIMS(5, 16));
        rt_input(g, "c", GIR_DT_F32, 2, cshape[i]);
        gir_node *n = rt_node(g, GIR_OP_Gemm, "fc", "a,b,c", "y");
        rt_attr_int(g, n, "transB", 1);
        rt_output(g, "y");
        gir_graph *r = pat_check(g, "gemm-bias-as-add", "fc", PAT_EDGES | PAT_NAN, 1e-6);
        assert_int_equal(tu_count_op(r, "Gemm"), 1);
        assert_int_equal(tu_count_op(r, "Add"), 1);
        gir_graph_free(r);
    }
    gir_graph *g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 16));
    rt_input(g, "b", GIR_DT_F32, 2, DIMS(16, 5));
    rt_node(g, GIR_OP_Gemm, "fc", "a,b", "y");
    rt_output(g, "y");
    pat_refuses(g, "gemm-bias-as-add", "fc", "without C");
}

/* BatchNormalization with epsilon 0 and variances >= 2^-60: FLT_MIN gives
 * the same values; a variance of 0 makes epsilon matter. */
static void test_bn_epsilon_min(void **state)
{
    (void)state;
    static const float scale[3] = { 1, -2, 0.5f }, bias[3] = { 0, 1, -1 }, mean[3] = { 0.25f, -1, 3 };
    static const float var[3] = { 1, 0x1p-60f, 1e10f }, var0[3] = { 1, 0, 2 };
    for (int k = 0; k < 2; k++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 4, 5));
        rt_const(g, "s", GIR_DT_F32, 1, DIMS(3), scale);
        rt_const(g, "b", GIR_DT_F32, 1, DIMS(3), bias);
        rt_const(g, "m", GIR_DT_F32, 1, DIMS(3), mean);
        rt_const(g, "v", GIR_DT_F32, 1, DIMS(3), k ? var0 : var);
        gir_node *n = rt_node(g, GIR_OP_BatchNormalization, "bn", "x,s,b,m,v", "y");
        rt_attr_float(g, n, "epsilon", 0.0);
        rt_output(g, "y");
        if (k) {
            pat_refuses(g, "batchnorm-epsilon-min", "bn", "epsilon 0 matters");
            continue;
        }
        gir_graph *r = pat_check(g, "batchnorm-epsilon-min", "bn", PAT_EDGES | PAT_NAN, 0);
        const gir_node *m = gir_graph_node(r, 0);
        assert_true(gir_node_float(m, "epsilon", 0) == FLT_MIN);
        gir_graph_free(r);
    }
}

/* Abs as Max(x, 0 - x): bit-exact, -0, infinities and NaN included. */
static void test_abs_max(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(8, 9));
    rt_node(g, GIR_OP_Abs, "abs", "x", "y");
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "abs-as-max", "abs", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Max"), 1);
    assert_int_equal(tu_count_op(r, "Sub"), 1);
    gir_graph_free(r);
}

/* Expand as Reshape + Resize(nearest): a lower rank, a same-rank broadcast,
 * a shape that changes nothing. */
static void test_expand_resize(void **state)
{
    (void)state;
    static const struct {
        int rank_in;
        int64_t in[3];
        int n_shape;
        int64_t shape[4];
        const char *op;
    } cases[] = {
        { 2, { 3, 1 }, 4, { 2, 2, 3, 5 }, "Resize" },
        { 3, { 1, 4, 1 }, 3, { 2, 4, 3 }, "Resize" },
        { 2, { 3, 4 }, 2, { 3, 4 }, "Identity" },
        { 2, { 3, 4 }, 1, { 1 }, "Identity" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, cases[i].rank_in, cases[i].in);
        gir_node *n = rt_node(g, GIR_OP_Expand, "ex", "x", "y");
        rt_attr_ints(g, n, "shape", cases[i].shape, (size_t)cases[i].n_shape);
        rt_output(g, "y");
        gir_graph *r = pat_check(g, "expand-as-resize", "ex", PAT_EDGES | PAT_NAN, 0);
        assert_int_equal(tu_count_op(r, cases[i].op), 1);
        assert_int_equal(tu_count_op(r, "Expand"), 0);
        gir_graph_free(r);
    }
}

/* Softmax and LogSoftmax over a middle axis as the same over the last
 * axis between Transposes. */
static void test_softmax_last_axis(void **state)
{
    (void)state;
    static const gir_op ops[] = { GIR_OP_Softmax, GIR_OP_LogSoftmax };
    static const char *const names[] = { "softmax-last-axis", "logsoftmax-last-axis" };
    for (int i = 0; i < 2; i++)
        for (int64_t axis = -4; axis < 3; axis++) {
            if (axis == -1)
                continue;
            gir_graph *g = rt_graph();
            rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 4, 5));
            rt_attr_int(g, rt_node(g, ops[i], "sm", "x", "y"), "axis", axis);
            rt_output(g, "y");
            gir_graph *r = pat_check(g, names[i], "sm", PAT_EDGES | PAT_NAN, 1e-6);
            assert_int_equal(tu_count_op(r, "Transpose"), 2);
            gir_graph_free(r);
        }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(2, 3));
    rt_attr_int(g, rt_node(g, GIR_OP_Softmax, "sm", "x", "y"), "axis", 1);
    rt_output(g, "y");
    pat_refuses(g, "softmax-last-axis", "sm", "last axis already");
    /* through ONNX at opset 11, whose Softmax(axis=1) of [2,3,4] would
     * normalise over 12 elements: written with Transposes, and checks */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(2, 3, 4));
    rt_attr_int(g, rt_node(g, GIR_OP_Softmax, "sm", "x", "y"), "axis", 1);
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_options *o = gir_options_new();
    TU_OK(gir_options_set(o, "opset", "11", &err), &err);
    char *dir = tu_tempdir(), *out = tu_join(dir, "sm11.onnx");
    tu_save(g, out, "onnx", o);
    gir_graph *back = NULL;
    TU_OK(gir_load(out, "onnx", NULL, &back, &err), &err);
    assert_int_equal(tu_count_op(back, "Transpose"), 2);
    gir_check_result res;
    TU_OK(gir_check_written(g, back, NULL, &res, &err), &err);
    assert_int_equal(res.method, GIR_CHECK_RUN);
    gir_check_result_clear(&res);
    gir_graph_free(back);
    gir_options_free(o);
    tu_rmtree(dir);
    free(out);
    free(dir);
    gir_graph_free(g);
}

/* ReduceMean/ReduceMax over any axes as global pooling between a
 * Transpose and Reshapes: middle axes, the last axes, all axes, keepdims 0. */
static void test_reduce_pool(void **state)
{
    (void)state;
    static const struct {
        int n_axes;
        int64_t axes[3];
        int keepdims;
        bool transpose;
    } cases[] = {
        { 2, { 1, 3 }, 1, true }, { 2, { 2, 3 }, 0, false }, { 1, { 0 }, 1, true },
        { 0, { 0 }, 0, false },   { 3, { -1, 0, 2 }, 1, true },
    };
    static const gir_op ops[] = { GIR_OP_ReduceMean, GIR_OP_ReduceMax };
    static const char *const names[] = { "reducemean-as-pool", "reducemax-as-pool" };
    for (int o = 0; o < 2; o++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            gir_graph *g = rt_graph();
            rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 4, 5));
            gir_node *n = rt_node(g, ops[o], "red", "x", "y");
            if (cases[i].n_axes)
                rt_attr_ints(g, n, "axes", cases[i].axes, (size_t)cases[i].n_axes);
            rt_attr_int(g, n, "keepdims", cases[i].keepdims);
            rt_output(g, "y");
            /* (a mean summed in another order: +-1e30 edge values would
             * cancel differently, so the mean runs on random values, NaN
             * and infinities) */
            gir_graph *r = pat_check(g, names[o], "red", o ? PAT_EDGES | PAT_NAN : PAT_NAN, o ? 0 : 1e-6);
            assert_int_equal(tu_count_op(r, o ? "GlobalMaxPool" : "GlobalAveragePool"), 1);
            assert_int_equal(tu_count_op(r, "Transpose"), cases[i].transpose);
            gir_graph_free(r);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print_output),
        cmocka_unit_test(test_print_legalized),
        cmocka_unit_test(test_check_chooses_shape),
        cmocka_unit_test(test_check_no_shape_fits),
        cmocka_unit_test(test_check_int_widths),
        cmocka_unit_test(test_gemm_conv),
        cmocka_unit_test(test_broadcast_resize),
        cmocka_unit_test(test_clip_max_min),
        cmocka_unit_test(test_rnn_unrolled),
        cmocka_unit_test(test_gemm_bias_add),
        cmocka_unit_test(test_bn_epsilon_min),
        cmocka_unit_test(test_abs_max),
        cmocka_unit_test(test_expand_resize),
        cmocka_unit_test(test_softmax_last_axis),
        cmocka_unit_test(test_reduce_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
