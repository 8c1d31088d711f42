/* Legalization: graph editing, the driver, and every pattern checked by
 * running the graph before and after the rewrite. */
#include "patutil.h"

#include "gbuild.h"
#include "passes/edit.h"
#include "passes/fold.h"

/* ---- editing ------------------------------------------------------------ */

static void test_edit_fold_and_sweep(void **state)
{
    (void)state;
    /* c0 -> Neg -> Relu -> (y = Add(x, relu)); folding Relu's value leaves Neg dead */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(2));
    rt_const(g, "c0", GIR_DT_F32, 1, DIMS(2), F32S(1.5f, -2.0f));
    rt_node(g, GIR_OP_Neg, "neg", "c0", "n1");
    rt_node(g, GIR_OP_Relu, "relu", "n1", "r1");
    rt_node(g, GIR_OP_Add, "add", "x,r1", "y");
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_edit *e;
    TU_OK(gir_edit_begin(g, &e, &err), &err);
    gir_tensor *t = rt_tensor_new(GIR_DT_F32, 1, DIMS(2), F32S(0.0f, 2.0f));
    TU_OK(gir_edit_fold(e, gir_graph_node_index(g, "relu"), &t, false, &err), &err);
    gir_tensor_unref(t);
    TU_OK(gir_edit_commit(e, &err), &err);
    assert_int_equal(gir_graph_node_count(g), 1);
    assert_string_equal(gir_node_name(gir_graph_node(g, 0)), "add");
    const gir_value *r1 = gir_graph_find_value(g, "r1");
    assert_non_null(r1);
    assert_int_equal(gir_value_get_kind(r1), GIR_VALUE_CONST);
    /* the orphaned constant and Neg's output went; nothing else */
    assert_null(gir_graph_find_value(g, "c0"));
    assert_null(gir_graph_find_value(g, "n1"));
    assert_int_equal(gir_graph_value_count(g), 3);
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 1, DIMS(2), F32S(1.0f, 1.0f)), *out;
    rt_run(g, 1, &in, 1, &out, 1);
    rt_expect_f32(out, 1, DIMS(2), F32S(1.0f, 3.0f), 0);
    gir_tensor_unref(in);
    gir_tensor_unref(out);
    gir_graph_free(g);
}

/* A replacement takes its node's place; a graph output keeps its name, also
 * when the replacement is a value that already existed. */
static void test_edit_replace_keeps_names(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(3));
    rt_node(g, GIR_OP_Relu, "a", "x", "ya");
    rt_node(g, GIR_OP_Clip, "b", "ya", "yb");
    rt_node(g, GIR_OP_Neg, "c", "yb", "yc");
    rt_output(g, "yb");
    rt_output(g, "yc");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_edit *e;
    TU_OK(gir_edit_begin(g, &e, &err), &err);
    gir_rw rw;
    gir_edit_rewrite(e, gir_graph_node_index(g, "b"), &rw);
    int32_t ya = gir_graph_value_index(g, "ya");
    TU_OK(gir_rw_done(&rw, &ya, &err), &err); /* Clip without bounds is x */
    TU_OK(gir_edit_commit(e, &err), &err);
    assert_int_equal(gir_graph_node_count(g), 3);
    assert_string_equal(gir_node_name(gir_graph_node(g, 0)), "a");
    assert_string_equal(gir_node_op(gir_graph_node(g, 1)), "Identity");
    assert_string_equal(gir_value_name(gir_node_output(gir_graph_node(g, 1), 0)), "yb");
    assert_string_equal(gir_node_name(gir_graph_node(g, 2)), "c");
    assert_string_equal(gir_value_name(gir_node_input(gir_graph_node(g, 2), 0)), "yb");
    gir_graph_free(g);
}

/* gir_rw_copy keeps the operator and every attribute of the node it
 * copies; gir_rw_reshape gives a Reshape with its shape: Clip(x) over [2, 3]
 * rewritten as Reshape to [3, 2], a copy of the Clip, Reshape back. */
static void test_edit_copy_and_reshape(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(2, 3));
    gir_node *c = rt_node(g, GIR_OP_Clip, "clip", "x", "y");
    rt_attr_float(g, c, "min", -1.0);
    rt_attr_float(g, c, "max", 2.0);
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_edit *e;
    TU_OK(gir_edit_begin(g, &e, &err), &err);
    gir_rw rw;
    gir_edit_rewrite(e, gir_graph_node_index(g, "clip"), &rw);
    int32_t r, y;
    gir_node *m;
    TU_OK(gir_rw_reshape(&rw, gir_graph_value_index(g, "x"), (const int64_t[]){ 3, 2 }, 2, &r, &err), &err);
    TU_OK(gir_rw_copy(&rw, g->nodes[rw.node], &r, 1, 1, &m, &err), &err);
    TU_OK(gir_rw_reshape(&rw, m->out[0], (const int64_t[]){ 2, 3 }, 2, &y, &err), &err);
    TU_OK(gir_rw_done(&rw, &y, &err), &err);
    TU_OK(gir_edit_commit(e, &err), &err);
    assert_int_equal(gir_graph_node_count(g), 3);
    const char *ops[] = { "Reshape", "Clip", "Reshape" };
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(gir_node_op(gir_graph_node(g, i)), ops[i]);
    const gir_node *clip = g->nodes[1];
    assert_int_equal(clip->attrs.n, 2);
    assert_true(gir_node_float(clip, "min", 0) == -1.0);
    assert_true(gir_node_float(clip, "max", 0) == 2.0);
    const int64_t *shape;
    assert_int_equal(gir_attrs_get_ints(&g->nodes[0]->attrs, "shape", &shape), 2);
    assert_int_equal(shape[0], 3);
    assert_int_equal(shape[1], 2);
    assert_int_equal(gir_attrs_get_ints(&g->nodes[2]->attrs, "shape", &shape), 2);
    assert_int_equal(shape[0], 2);
    assert_int_equal(shape[1], 3);
    assert_string_equal(gir_value_name(gir_node_output(gir_graph_node(g, 2), 0)), "y");
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), F32S(-3.0f, -1.0f, 0.5f, 1.0f, 2.0f, 7.0f)), *out;
    rt_run(g, 1, &in, 1, &out, 1);
    rt_expect_f32(out, 2, DIMS(2, 3), F32S(-1.0f, -1.0f, 0.5f, 1.0f, 2.0f, 2.0f), 0);
    gir_tensor_unref(in);
    gir_tensor_unref(out);
    gir_graph_free(g);
}

/* Identity of a weight folds to a weight of the same name; Shape of a known
 * shape to its dims, and the Mul reading only constants after it; what
 * reads a graph input stays; a big result is not made. */
static void test_fold_constants(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(2, 3));
    int32_t w = rt_const(g, "w", GIR_DT_F32, 1, DIMS(3), F32S(1.0f, -2.0f, 0.5f));
    g->values[w]->kind = GIR_VALUE_WEIGHT;
    rt_node(g, GIR_OP_Identity, "id", "w", "w_copy");
    rt_node(g, GIR_OP_Add, "add", "x,w_copy", "y");
    rt_node(g, GIR_OP_Shape, "shape", "x", "s");
    rt_const(g, "two", GIR_DT_I64, 0, NULL, I64S(2));
    rt_node(g, GIR_OP_Mul, "mul", "s,two", "s2");
    rt_node(g, GIR_OP_Identity, "out_s", "s2", "s3");
    rt_const(g, "one", GIR_DT_F32, 0, NULL, F32S(1.0f));
    gir_node *e = rt_node(g, GIR_OP_Expand, "big", "one", "ones");
    RT_INTS(g, e, "shape", 64, 1024);
    rt_output(g, "y");
    rt_output(g, "s3");
    rt_output(g, "ones");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_tensor *before[3], *after[3];
    pat_run(g, PAT_EDGES, before);
    size_t folded;
    TU_OK(gir_fold_constants(g, GIR_FOLD_LIMIT, &folded, &err), &err);
    assert_int_equal(folded, 4);
    assert_int_equal(gir_graph_node_count(g), 2); /* add and big */
    assert_int_equal(gir_value_get_kind(gir_graph_find_value(g, "w_copy")), GIR_VALUE_WEIGHT);
    assert_int_equal(gir_value_get_kind(gir_graph_find_value(g, "s3")), GIR_VALUE_CONST);
    assert_null(gir_graph_find_value(g, "s")); /* dead now */
    assert_null(gir_graph_find_value(g, "s2"));
    assert_null(gir_graph_find_value(g, "w"));
    pat_run(g, PAT_EDGES, after);
    for (int i = 0; i < 3; i++) {
        pat_compare(before[i], after[i], 0);
        gir_tensor_unref(before[i]);
        gir_tensor_unref(after[i]);
    }
    rt_expect_i64(gir_value_tensor(gir_graph_find_value(g, "s3")), 1, DIMS(2), I64S(4, 6));
    gir_graph_free(g);
}

static void test_clone_is_deep(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(2, 2));
    gir_node *n = rt_node(g, GIR_OP_LeakyRelu, "lr", "x", "y");
    rt_attr_float(g, n, "alpha", 0.25);
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_graph *c;
    TU_OK(gir_graph_clone(g, &c, &err), &err);
    gir_graph_free(g);
    assert_int_equal(gir_graph_node_count(c), 1);
    const gir_node *m = gir_graph_node(c, 0);
    assert_string_equal(gir_node_name(m), "lr");
    assert_true(gir_attr_float(gir_node_find_attr(m, "alpha")) == 0.25);
    assert_non_null(gir_graph_find_value(c, "y"));
    assert_string_equal(gir_value_name(gir_graph_output(c, 0)), "y");
    gir_graph_free(c);
}

/* ---- the driver ------------------------------------------------------------ */

/* A target that refuses the ops listed in ctx (NULL-terminated names), and
 * Clip unless it has both bounds. */
static gir_status fake_plan(void *ctx, const gir_graph *g, gir_plan *p, gir_error *err)
{
    const char *const *refused = ctx;
    p->n_nodes = g->n_nodes;
    p->why = calloc(g->n_nodes + 1, sizeof *p->why);
    if (!p->why)
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        const char *why = NULL;
        for (const char *const *r = refused; *r; r++)
            if (strcmp(*r, gir_node_op(n)) == 0)
                why = "refused op";
        if (n->op == GIR_OP_Clip && (!gir_attrs_find(&n->attrs, "min") || !gir_attrs_find(&n->attrs, "max")))
            why = "Clip without both bounds";
        if (why) {
            p->why[i] = gir_strdupf("%s %s", gir_node_op(n), why);
            p->n_bad++;
        }
    }
    return GIR_OK;
}

static size_t pattern_index(const char *name)
{
    for (size_t i = 0; gir_pattern_at(i); i++)
        if (!strcmp(gir_pattern_at(i)->name, name))
            return i;
    fail_msg("no pattern %s", name);
    return 0;
}

static gir_graph *two_activations(void)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(4, 8));
    gir_node *h = rt_node(g, GIR_OP_HardSigmoid, "hs", "x", "h");
    rt_attr_float(g, h, "alpha", 1.0 / 6.0);
    gir_node *c = rt_node(g, GIR_OP_Clip, "relu_ish", "h", "c");
    rt_attr_float(g, c, "min", 0.25);
    rt_node(g, GIR_OP_HardSigmoid, "hs2", "c", "y");
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

static void test_legalize_rewrites_what_is_refused(void **state)
{
    (void)state;
    gir_graph *g = two_activations();
    gir_tensor *before, *after;
    pat_run(g, PAT_EDGES, &before);
    const char *refused[] = { "HardSigmoid", NULL };
    gir_legal_report rep = { 0 };
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_legalize(&g, fake_plan, (void *)refused, &rep, &err), &err);
    assert_int_equal(tu_count_op(g, "HardSigmoid"), 0);
    assert_int_equal(tu_count_op(g, "Clip"), 2);
    assert_int_equal(tu_count_op(g, "Max"), 1);
    assert_int_equal(rep.applied[pattern_index("hardsigmoid-as-clip")], 2);
    assert_int_equal(rep.applied[pattern_index("clip-one-bound")], 1);
    assert_null(rep.tried);
    pat_run(g, PAT_EDGES, &after);
    pat_compare(before, after, 0);
    gir_tensor_unref(before);
    gir_tensor_unref(after);
    gir_legal_report_free(&rep);
    gir_graph_free(g);
}

/* A rewrite that leaves the target refusing as much is not kept, and the
 * report says what it left. */
static void test_legalize_keeps_only_what_helps(void **state)
{
    (void)state;
    gir_graph *g = two_activations();
    const char *refused[] = { "HardSigmoid", "Mul", NULL };
    gir_legal_report rep = { 0 };
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_legalize(&g, fake_plan, (void *)refused, &rep, &err), &err);
    assert_int_equal(tu_count_op(g, "HardSigmoid"), 2);
    assert_int_equal(tu_count_op(g, "Mul"), 0);
    assert_int_equal(rep.applied[pattern_index("hardsigmoid-as-clip")], 0);
    assert_int_equal(rep.applied[pattern_index("clip-one-bound")], 1);
    assert_non_null(rep.tried);
    assert_string_equal(rep.tried, "HardSigmoid: hardsigmoid-as-clip (Mul refused op)");
    gir_legal_report_free(&rep);
    gir_graph_free(g);
}

/* ---- patterns ---------------------------------------------------------------- */

static void test_pat_hardsigmoid(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(2, 5, 7));
    gir_node *n = rt_node(g, GIR_OP_HardSigmoid, "hs", "x", "y");
    rt_attr_float(g, n, "alpha", 1.0 / 6.0);
    rt_attr_float(g, n, "beta", 0.5);
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "hardsigmoid-as-clip", "hs", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Clip"), 1);
    gir_graph_free(r);
    /* defaults */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(64));
    rt_node(g, GIR_OP_HardSigmoid, "hs", "x", "y");
    rt_output(g, "y");
    gir_graph_free(pat_check(g, "hardsigmoid-as-clip", "hs", PAT_EDGES, 0));
}

static void test_pat_clip_one_bound(void **state)
{
    (void)state;
    static const char *const which[] = { "min", "max", NULL };
    for (int k = 0; k < 3; k++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 2, DIMS(6, 9));
        gir_node *n = rt_node(g, GIR_OP_Clip, "c", "x", "y");
        if (which[k])
            rt_attr_float(g, n, which[k], k ? 6.0 : -0.5);
        rt_output(g, "y");
        gir_graph_free(pat_check(g, "clip-one-bound", "c", PAT_EDGES | PAT_NAN, 0));
    }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(3));
    gir_node *n = rt_node(g, GIR_OP_Clip, "c", "x", "y");
    rt_attr_float(g, n, "min", 0);
    rt_attr_float(g, n, "max", 6);
    rt_output(g, "y");
    pat_refuses(g, "clip-one-bound", "c", "both bounds");
}

/* A weight of shape dims filled with seeded values in [-1, 1). */
static void weight(gir_graph *g, const char *name, int rank, const int64_t *dims, uint64_t seed)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    float *d = malloc(n * sizeof *d);
    rt_fill(d, n, seed);
    int32_t v = rt_const(g, name, GIR_DT_F32, rank, dims, d);
    g->values[v]->kind = GIR_VALUE_WEIGHT;
    free(d);
}

static void test_pat_gemm_plain(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        gir_graph *g = rt_graph();
        rt_input(g, "a", GIR_DT_F32, 2, (c & 1) ? DIMS(7, 3) : DIMS(3, 7));
        weight(g, "b", 2, (c & 2) ? DIMS(5, 7) : DIMS(7, 5), 11);
        weight(g, "c", 1, DIMS(5), 12);
        gir_node *n = rt_node(g, GIR_OP_Gemm, "gemm", c == 3 ? "a,b" : "a,b,c", "y");
        rt_attr_float(g, n, "alpha", c == 2 ? 1.0 : 0.375);
        rt_attr_float(g, n, "beta", 2.5);
        rt_attr_int(g, n, "transA", c & 1);
        rt_attr_int(g, n, "transB", (c & 2) >> 1);
        rt_output(g, "y");
        gir_graph *r = pat_check(g, "gemm-plain", "gemm", PAT_EDGES, 1e-6);
        int32_t gemm = tu_find_op(r, "Gemm");
        assert_true(gemm >= 0);
        const gir_node *m = gir_graph_node(r, (size_t)gemm);
        assert_true(gir_attr_float(gir_node_find_attr(m, "alpha")) == 1.0);
        assert_true(gir_attr_float(gir_node_find_attr(m, "beta")) == 1.0);
        assert_int_equal(gir_attr_int(gir_node_find_attr(m, "transA")), 0);
        gir_graph_free(r);
    }
}

static void test_pat_gemm_transb(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 8));
    weight(g, "b", 2, DIMS(8, 5), 31);
    weight(g, "c", 1, DIMS(5), 32);
    gir_node *n = rt_node(g, GIR_OP_Gemm, "gemm", "a,b,c", "y");
    rt_attr_float(g, n, "alpha", 0.5);
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "gemm-transb", "gemm", PAT_EDGES, 1e-6);
    assert_int_equal(tu_count_op(r, "Transpose"), 1);
    const gir_node *m = gir_graph_node(r, 1);
    assert_string_equal(gir_node_op(m), "Gemm");
    assert_int_equal(gir_attr_int(gir_node_find_attr(m, "transB")), 1);
    assert_true(gir_attr_float(gir_node_find_attr(m, "alpha")) == 0.5);
    gir_graph_free(r);
}

static void test_pat_matmul_gemm(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 4, DIMS(2, 3, 4, 8));
    weight(g, "b", 2, DIMS(8, 5), 21);
    rt_node(g, GIR_OP_MatMul, "mm", "a,b", "y");
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "matmul-as-gemm", "mm", PAT_EDGES, 1e-6);
    assert_int_equal(tu_count_op(r, "Reshape"), 2);
    assert_int_equal(tu_count_op(r, "Gemm"), 1);
    char buf[64];
    assert_string_equal(gb_text(gir_graph_output(r, 0), buf, sizeof buf), "[2,3,4,5]");
    gir_graph_free(r);
    /* 2-D: Gemm alone */
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(6, 8));
    weight(g, "b", 2, DIMS(8, 3), 22);
    rt_node(g, GIR_OP_MatMul, "mm", "a,b", "y");
    rt_output(g, "y");
    r = pat_check(g, "matmul-as-gemm", "mm", PAT_EDGES, 1e-6);
    assert_int_equal(gir_graph_node_count(r), 1);
    gir_graph_free(r);
    /* batched B: not this pattern */
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 3, DIMS(2, 6, 8));
    weight(g, "b", 3, DIMS(2, 8, 3), 23);
    rt_node(g, GIR_OP_MatMul, "mm", "a,b", "y");
    rt_output(g, "y");
    pat_refuses(g, "matmul-as-gemm", "mm", "ranks 3 and 3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edit_fold_and_sweep),
        cmocka_unit_test(test_edit_replace_keeps_names),
        cmocka_unit_test(test_edit_copy_and_reshape),
        cmocka_unit_test(test_clone_is_deep),
        cmocka_unit_test(test_fold_constants),
        cmocka_unit_test(test_legalize_rewrites_what_is_refused),
        cmocka_unit_test(test_legalize_keeps_only_what_helps),
        cmocka_unit_test(test_pat_hardsigmoid),
        cmocka_unit_test(test_pat_clip_one_bound),
        cmocka_unit_test(test_pat_gemm_plain),
        cmocka_unit_test(test_pat_matmul_gemm),
        cmocka_unit_test(test_pat_gemm_transb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
