/* Legalization patterns of pat_unary.c: each activation form run before and
 * after the rewrite on inputs with edge values (zeros of both signs, +-1e30,
 * the smallest normal, NaN and infinities) and compared. */
#include "patutil.h"

#include "graphir/model.h"

/* One unary node op on x[8, 9] with an optional float attribute. */
static gir_graph *unary(gir_op op, const char *attr, double v)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(8, 9));
    gir_node *n = rt_node(g, op, "u", "x", "y");
    if (attr)
        rt_attr_float(g, n, attr, v);
    rt_output(g, "y");
    return g;
}

static void test_selu_elu(void **state)
{
    (void)state;
    gir_graph *r = pat_check(unary(GIR_OP_Selu, NULL, 0), "selu-as-elu", "u", PAT_EDGES | PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "Elu"), 1);
    assert_int_equal(tu_count_op(r, "Mul"), 1);
    gir_graph_free(r);
    /* other constants than the standard ones (what mxnet cannot write) */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(8, 9));
    gir_node *n = rt_node(g, GIR_OP_Selu, "u", "x", "y");
    rt_attr_float(g, n, "alpha", 0.75);
    rt_attr_float(g, n, "gamma", 2.5);
    rt_output(g, "y");
    gir_graph_free(pat_check(g, "selu-as-elu", "u", PAT_EDGES | PAT_NAN, 1e-6));
    /* not for integer tensors */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_I64, 1, DIMS(4));
    rt_node(g, GIR_OP_Selu, "u", "x", "y");
    rt_output(g, "y");
    pat_refuses(g, "selu-as-elu", "u", "int64");
}

static void test_elu_exp(void **state)
{
    (void)state;
    gir_graph *r = pat_check(unary(GIR_OP_Elu, "alpha", 0.4), "elu-as-exp", "u", PAT_EDGES | PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "Elu"), 0);
    assert_int_equal(tu_count_op(r, "Exp"), 1);
    assert_int_equal(tu_count_op(r, "Relu"), 1);
    gir_graph_free(r);
    gir_graph_free(pat_check(unary(GIR_OP_Elu, NULL, 0), "elu-as-exp", "u", PAT_EDGES | PAT_NAN, 1e-6));
}

/* Selu through Elu down to Relu/Exp: the chain a target without either takes. */
static void test_selu_chain(void **state)
{
    (void)state;
    gir_graph *g = unary(GIR_OP_Selu, NULL, 0);
    gir_graph *r = pat_check(g, "selu-as-elu", "u", PAT_EDGES | PAT_NAN, 1e-6);
    gir_error err = GIR_ERROR_INIT;
    int32_t elu = tu_find_op(r, "Elu");
    assert_true(elu >= 0);
    gir_tensor *before[1], *after[1];
    pat_run(r, PAT_EDGES | PAT_NAN, before);
    TU_OK(gir_pattern_apply(r, gir_pattern_find("elu-as-exp"), elu, &err), &err);
    assert_int_equal(tu_count_op(r, "Elu"), 0);
    pat_run(r, PAT_EDGES | PAT_NAN, after);
    pat_compare(before[0], after[0], 1e-6);
    gir_tensor_unref(before[0]);
    gir_tensor_unref(after[0]);
    gir_graph_free(r);
}

static void test_softplus_exp(void **state)
{
    (void)state;
    gir_graph *r = pat_check(unary(GIR_OP_Softplus, NULL, 0), "softplus-as-exp", "u", PAT_EDGES | PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "Softplus"), 0);
    assert_int_equal(tu_count_op(r, "Log"), 1);
    gir_graph_free(r);
    /* large inputs do not overflow: softplus(80) = 80, softplus(-80) ~ 0 */
    gir_graph *g = rt_graph();
    rt_const(g, "c", GIR_DT_F32, 1, DIMS(4), F32S(80.0f, -80.0f, 1e30f, -1e30f));
    rt_node(g, GIR_OP_Softplus, "u", "c", "y");
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    TU_OK(gir_pattern_apply(g, gir_pattern_find("softplus-as-exp"), gir_graph_node_index(g, "u"), &err), &err);
    gir_tensor *out;
    rt_run(g, 1, NULL, 0, &out, 1);
    rt_expect_f32(out, 1, DIMS(4), F32S(80.0f, 0.0f, 1e30f, 0.0f), 1e-30);
    gir_tensor_unref(out);
    gir_graph_free(g);
}

static void test_softsign_div(void **state)
{
    (void)state;
    /* the same arithmetic: bit-exact */
    gir_graph *r = pat_check(unary(GIR_OP_Softsign, NULL, 0), "softsign-as-div", "u", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Div"), 1);
    assert_int_equal(tu_count_op(r, "Abs"), 1);
    gir_graph_free(r);
}

static void test_reciprocal_div(void **state)
{
    (void)state;
    gir_graph *r = pat_check(unary(GIR_OP_Reciprocal, NULL, 0), "reciprocal-as-div", "u", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Div"), 1);
    assert_int_equal(tu_count_op(r, "Reciprocal"), 0);
    gir_graph_free(r);
}

/* PRelu x[2, 3, 4, 3] with a slope of the given shape and values. */
static gir_graph *prelu(int rank, const int64_t *dims, const float *slope)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 4, 3));
    rt_const(g, "s", GIR_DT_F32, rank, dims, slope);
    rt_node(g, GIR_OP_PRelu, "p", "x,s", "y");
    rt_output(g, "y");
    return g;
}

static void test_prelu_leaky(void **state)
{
    (void)state;
    /* one slope, and a per-channel slope whose values are all the same */
    gir_graph *r = pat_check(prelu(1, DIMS(1), F32S(0.25f)), "prelu-as-leakyrelu", "p", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "LeakyRelu"), 1);
    gir_graph_free(r);
    r = pat_check(prelu(3, DIMS(3, 1, 1), F32S(-0.5f, -0.5f, -0.5f)), "prelu-as-leakyrelu", "p",
                  PAT_EDGES | PAT_NAN, 0);
    gir_graph_free(r);
    pat_refuses(prelu(3, DIMS(3, 1, 1), F32S(0.1f, 0.2f, 0.3f)), "prelu-as-leakyrelu", "p", "slopes that differ");
    /* a computed slope */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(3));
    rt_input(g, "s", GIR_DT_F32, 1, DIMS(1));
    rt_node(g, GIR_OP_PRelu, "p", "x,s", "y");
    rt_output(g, "y");
    pat_refuses(g, "prelu-as-leakyrelu", "p", "computed slope");
}

static void test_prelu_relu(void **state)
{
    (void)state;
    gir_graph *r = pat_check(prelu(3, DIMS(3, 1, 1), F32S(0.1f, -2.0f, 0.0f)), "prelu-as-relu", "p",
                             PAT_EDGES | PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "PRelu"), 0);
    assert_int_equal(tu_count_op(r, "Relu"), 1);
    assert_int_equal(tu_count_op(r, "Min"), 1);
    gir_graph_free(r);
    /* a computed slope */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(30, 3));
    rt_input(g, "s", GIR_DT_F32, 1, DIMS(3));
    rt_node(g, GIR_OP_PRelu, "p", "x,s", "y");
    rt_output(g, "y");
    gir_graph_free(pat_check(g, "prelu-as-relu", "p", PAT_EDGES | PAT_NAN, 1e-6));
}

/* A target that refuses the ops named in ctx (NULL-terminated). */
static gir_status refuse_ops(void *ctx, const gir_graph *g, gir_plan *p, gir_error *err)
{
    (void)err;
    const char *const *ops = ctx;
    p->n_nodes = gir_graph_node_count(g);
    p->why = calloc(p->n_nodes ? p->n_nodes : 1, sizeof *p->why);
    assert_non_null(p->why);
    for (size_t i = 0; i < p->n_nodes; i++)
        for (size_t k = 0; ops[k]; k++)
            if (!strcmp(gir_node_op(gir_graph_node(g, i)), ops[k])) {
                p->why[i] = gir_strdupf("%s refused", ops[k]);
                p->n_bad++;
            }
    return GIR_OK;
}

static size_t applied(const gir_legal_report *rep, const char *name)
{
    for (size_t i = 0; gir_pattern_at(i); i++)
        if (!strcmp(gir_pattern_at(i)->name, name))
            return rep->applied[i];
    fail_msg("no pattern %s", name);
    return 0;
}

/* Legalization for a target without Selu, Elu and PRelu (as nnvm): Selu
 * goes down to Relu/Exp through Elu, a shared-slope PRelu becomes LeakyRelu,
 * and the graph computes the same. */
static void test_legalize_chain(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 4, 3));
    rt_node(g, GIR_OP_Selu, "selu", "x", "s");
    rt_const(g, "slope", GIR_DT_F32, 1, DIMS(1), F32S(0.25f));
    rt_node(g, GIR_OP_PRelu, "prelu", "s,slope", "y");
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_tensor *before, *after;
    pat_run(g, PAT_EDGES | PAT_NAN, &before);
    static const char *const refused[] = { "Selu", "Elu", "PRelu", NULL };
    gir_legal_report rep = { 0 };
    TU_OK(gir_legalize(&g, refuse_ops, (void *)refused, &rep, &err), &err);
    assert_int_equal(tu_count_op(g, "Selu") + tu_count_op(g, "Elu") + tu_count_op(g, "PRelu"), 0);
    assert_int_equal(tu_count_op(g, "LeakyRelu"), 1);
    assert_int_equal(tu_count_op(g, "Exp"), 1);
    assert_int_equal(applied(&rep, "selu-as-elu"), 1);
    assert_int_equal(applied(&rep, "elu-as-exp"), 1);
    assert_int_equal(applied(&rep, "prelu-as-leakyrelu"), 1);
    assert_int_equal(applied(&rep, "prelu-as-relu"), 0);
    pat_run(g, PAT_EDGES | PAT_NAN, &after);
    pat_compare(before, after, 1e-6);
    gir_tensor_unref(before);
    gir_tensor_unref(after);
    gir_legal_report_free(&rep);
    gir_graph_free(g);
}

/* Written by gir_save to targets without this Selu, Softsign or Reciprocal,
 * or a PRelu of one shared slope, read back and run: the same outputs. */
static void test_save_targets(void **state)
{
    (void)state;
    static const char *const targets[] = { "nnvm", "mxnet", "relayviz" };
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 4, 3));
        gir_node *n = rt_node(g, GIR_OP_Selu, "selu", "x", "s");
        rt_attr_float(g, n, "alpha", 1.5);
        rt_attr_float(g, n, "gamma", 1.1);
        rt_const(g, "slope", GIR_DT_F32, 1, DIMS(1), F32S(0.25f));
        rt_node(g, GIR_OP_PRelu, "prelu", "s,slope", "p");
        rt_node(g, GIR_OP_Softsign, "softsign", "p", "y");
        rt_node(g, GIR_OP_Reciprocal, "recip", "x", "r");
        rt_output(g, "y");
        rt_output(g, "r");
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_graph_finish(g, &err), &err);
        char name[32];
        snprintf(name, sizeof name, "acts.%s", targets[t]);
        char *path = tu_tmp(name);
        tu_save(g, path, targets[t], NULL);
        gir_graph *back = NULL;
        TU_OK(gir_load(path, targets[t], NULL, &back, &err), &err);
        free(path);
        /* mxnet has softsign and reciprocal; none has this Selu (PRelu of
         * one slope is native where the writers map it, rewritten elsewhere) */
        assert_int_equal(tu_count_op(back, "Selu"), 0);
        if (t != 1)
            assert_int_equal(tu_count_op(back, "Softsign") + tu_count_op(back, "Reciprocal"), 0);
        gir_tensor *before[2], *after[2];
        pat_run(g, PAT_EDGES, before);
        pat_run(back, PAT_EDGES, after);
        for (int k = 0; k < 2; k++) {
            pat_compare(before[k], after[k], 1e-6);
            gir_tensor_unref(before[k]);
            gir_tensor_unref(after[k]);
        }
        gir_graph_free(back);
        gir_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selu_elu),     cmocka_unit_test(test_elu_exp),
        cmocka_unit_test(test_selu_chain),   cmocka_unit_test(test_softplus_exp),
        cmocka_unit_test(test_softsign_div), cmocka_unit_test(test_reciprocal_div),
        cmocka_unit_test(test_prelu_leaky),  cmocka_unit_test(test_prelu_relu),
        cmocka_unit_test(test_legalize_chain), cmocka_unit_test(test_save_targets),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
