/* Legalization patterns of pat_reduce.c (spatial reductions <-> global
 * pooling) and pat_nary.c (variadic Sum/Max/Min/Mean as binary chains),
 * each run before and after the rewrite and compared. */
#include "patutil.h"

/* op over x[2, 3, 5, 6] with axes (NULL: none) and keepdims. */
static gir_graph *reduce(gir_op op, const int64_t *axes, size_t na, int keepdims)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 5, 6));
    gir_node *n = rt_node(g, op, "r", "x", "y");
    if (axes)
        rt_attr_ints(g, n, "axes", axes, na);
    if (keepdims >= 0)
        rt_attr_int(g, n, "keepdims", keepdims);
    rt_output(g, "y");
    return g;
}

static void test_reduce_global(void **state)
{
    (void)state;
    /* the mean sums in another order in GlobalAveragePool's kernel: 1e-6,
     * on inputs without +-1e30 pairs that cancel; NaN and inf propagate */
    gir_graph *r = pat_check(reduce(GIR_OP_ReduceMean, (const int64_t[]){ 2, 3 }, 2, 1), "reducemean-as-globalpool",
                             "r", PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "GlobalAveragePool"), 1);
    assert_int_equal(tu_count_op(r, "Reshape"), 0);
    gir_graph_free(r);
    r = pat_check(reduce(GIR_OP_ReduceMean, (const int64_t[]){ -1, -2 }, 2, 0), "reducemean-as-globalpool", "r",
                  PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "Reshape"), 1);
    gir_graph_free(r);
    /* the maximum is the same comparison: bit-exact with every edge value */
    r = pat_check(reduce(GIR_OP_ReduceMax, (const int64_t[]){ 3, 2 }, 2, 0), "reducemax-as-globalpool", "r",
                  PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "GlobalMaxPool"), 1);
    gir_graph_free(r);
    pat_refuses(reduce(GIR_OP_ReduceMean, (const int64_t[]){ 1, 2, 3 }, 3, 1), "reducemean-as-globalpool", "r",
                "over 3 axes");
    pat_refuses(reduce(GIR_OP_ReduceMean, (const int64_t[]){ 1, 3 }, 2, 1), "reducemean-as-globalpool", "r",
                "over axis 1");
    pat_refuses(reduce(GIR_OP_ReduceMax, NULL, 0, 1), "reducemax-as-globalpool", "r", "over -1 axes");
}

static void test_global_reduce(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 5, 6));
    rt_node(g, GIR_OP_GlobalMaxPool, "p", "x", "y");
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "globalmaxpool-as-reducemax", "p", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "ReduceMax"), 1);
    gir_graph_free(r);
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(2, 3, 25));
    rt_node(g, GIR_OP_GlobalAveragePool, "p", "x", "y");
    rt_output(g, "y");
    r = pat_check(g, "globalavgpool-as-reducemean", "p", PAT_NAN, 1e-6);
    assert_int_equal(tu_count_op(r, "ReduceMean"), 1);
    gir_graph_free(r);
}

/* op of n inputs x0..x3 of broadcastable shapes. */
static gir_graph *nary(gir_op op, int n, gir_dtype dt)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x0", dt, 2, DIMS(6, 10));
    rt_input(g, "x1", dt, 1, DIMS(10));
    rt_input(g, "x2", dt, 2, DIMS(6, 1));
    rt_input(g, "x3", dt, 2, DIMS(6, 10));
    static const char *const ins[] = { "x0", "x0,x1", "x0,x1,x2", "x0,x1,x2,x3" };
    rt_node(g, op, "v", ins[n - 1], "y");
    rt_output(g, "y");
    return g;
}

static void test_nary_chain(void **state)
{
    (void)state;
    /* the runtime folds left to right, as the chain does: bit-exact */
    gir_graph *r = pat_check(nary(GIR_OP_Sum, 4, GIR_DT_F32), "sum-as-add", "v", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Add"), 3);
    assert_int_equal(tu_count_op(r, "Sum"), 0);
    gir_graph_free(r);
    r = pat_check(nary(GIR_OP_Max, 3, GIR_DT_F32), "max-as-binary", "v", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Max"), 2);
    gir_graph_free(r);
    r = pat_check(nary(GIR_OP_Min, 4, GIR_DT_F32), "min-as-binary", "v", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Min"), 3);
    gir_graph_free(r);
    r = pat_check(nary(GIR_OP_Mean, 3, GIR_DT_F32), "mean-as-add-div", "v", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Add"), 2);
    assert_int_equal(tu_count_op(r, "Div"), 1);
    gir_graph_free(r);
    gir_graph_free(pat_check(nary(GIR_OP_Mean, 1, GIR_DT_F32), "mean-as-add-div", "v", PAT_EDGES | PAT_NAN, 0));
    /* integers: Sum chains, Mean does not (its kernel is float) */
    gir_graph_free(pat_check(nary(GIR_OP_Sum, 3, GIR_DT_I64), "sum-as-add", "v", 0, 0));
    /* one input is the input itself */
    r = pat_check(nary(GIR_OP_Max, 1, GIR_DT_F32), "max-as-binary", "v", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Max"), 0);
    gir_graph_free(r);
    r = pat_check(nary(GIR_OP_Sum, 2, GIR_DT_F32), "sum-as-add", "v", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Add"), 1);
    gir_graph_free(r);
    pat_refuses(nary(GIR_OP_Min, 2, GIR_DT_F32), "min-as-binary", "v", "already binary");
    pat_refuses(nary(GIR_OP_Mean, 2, GIR_DT_I64), "mean-as-add-div", "v", "int64");
}

/* Split of x[4, 7, 3] along axis into outputs y0..y{n-1}. */
static gir_graph *split(int64_t axis, const int64_t *sizes, int n)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(4, 7, 3));
    static const char *const outs[] = { "y0", "y0,y1", "y0,y1,y2" };
    gir_node *s = rt_node(g, GIR_OP_Split, "s", "x", outs[n - 1]);
    rt_attr_int(g, s, "axis", axis);
    if (sizes)
        rt_attr_ints(g, s, "split", sizes, (size_t)n);
    for (int k = 0; k < n; k++)
        rt_output(g, (const char *[]){ "y0", "y1", "y2" }[k]);
    return g;
}

static void test_split_slices(void **state)
{
    (void)state;
    gir_graph *r = pat_check(split(1, (const int64_t[]){ 2, 0, 5 }, 3), "split-as-slices", "s", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Slice"), 3);
    assert_int_equal(tu_count_op(r, "Split"), 0);
    gir_graph_free(r);
    /* equal parts, negative axis */
    r = pat_check(split(-3, NULL, 2), "split-as-slices", "s", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Slice"), 2);
    gir_graph_free(r);
    gir_graph_free(pat_check(split(2, NULL, 1), "split-as-slices", "s", PAT_EDGES | PAT_NAN, 0));
}

/* Boolean logic: every combination of a[2, 3, 4] and b[3, 1] (pat_input
 * fills bool inputs with a seeded pattern of true and false). */
static void test_logic_arith(void **state)
{
    (void)state;
    static const struct {
        gir_op op;
        const char *pattern;
    } cases[] = { { GIR_OP_And, "and-as-mul" }, { GIR_OP_Or, "or-as-add" }, { GIR_OP_Xor, "xor-as-sub" },
                  { GIR_OP_Equal, "equal-bool-as-arith" }, { GIR_OP_Not, "not-as-sub" } };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gir_graph *g = rt_graph();
        rt_input(g, "a", GIR_DT_BOOL, 3, DIMS(2, 3, 4));
        rt_input(g, "b", GIR_DT_BOOL, 2, DIMS(3, 1));
        rt_node(g, cases[i].op, "l", cases[i].op == GIR_OP_Not ? "a" : "a,b", "y");
        rt_output(g, "y");
        gir_graph *r = pat_check(g, cases[i].pattern, "l", 0, 0);
        assert_int_equal(tu_count_op(r, "Cast"), cases[i].op == GIR_OP_Not ? 2 : 3);
        assert_int_equal(tu_count_op(r, gir_op_name(cases[i].op)), 0);
        gir_graph_free(r);
    }
    /* Equal of floats is not rewritten (NaN, inf - inf) */
    gir_graph *g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 1, DIMS(4));
    rt_input(g, "b", GIR_DT_F32, 1, DIMS(4));
    rt_node(g, GIR_OP_Equal, "l", "a,b", "y");
    rt_output(g, "y");
    pat_refuses(g, "equal-bool-as-arith", "l", "float32 operands");
}

/* One shape op on x of the given shape, with an int or ints attribute. */
static gir_graph *shape_op(gir_op op, int rank, const int64_t *dims, const char *attr, const int64_t *v, size_t nv)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, rank, dims);
    gir_node *n = rt_node(g, op, "s", "x", "y");
    if (nv == 1 && op == GIR_OP_Flatten)
        rt_attr_int(g, n, attr, v[0]);
    else if (nv)
        rt_attr_ints(g, n, attr, v, nv);
    rt_output(g, "y");
    return g;
}

/* The shape attribute of the one Reshape of r. */
static void expect_reshape(gir_graph *r, const int64_t *want, size_t n)
{
    assert_int_equal(tu_count_op(r, "Reshape"), 1);
    for (size_t i = 0; i < gir_graph_node_count(r); i++) {
        const gir_node *nd = gir_graph_node(r, i);
        if (strcmp(gir_node_op(nd), "Reshape"))
            continue;
        const int64_t *v;
        assert_int_equal(gir_attrs_get_ints(&nd->attrs, "shape", &v), (ptrdiff_t)n);
        assert_memory_equal(v, want, n * sizeof *want);
    }
}

static void test_shape_as_reshape(void **state)
{
    (void)state;
    gir_graph *r = pat_check(shape_op(GIR_OP_Flatten, 4, DIMS(2, 3, 4, 5), "axis", (const int64_t[]){ 2 }, 1),
                             "flatten-as-reshape", "s", PAT_EDGES | PAT_NAN, 0);
    expect_reshape(r, (const int64_t[]){ 6, 20 }, 2);
    gir_graph_free(r);
    r = pat_check(shape_op(GIR_OP_Squeeze, 4, DIMS(2, 1, 4, 1), "axes", (const int64_t[]){ 1, -1 }, 2),
                  "squeeze-as-reshape", "s", PAT_EDGES | PAT_NAN, 0);
    expect_reshape(r, (const int64_t[]){ 2, 4 }, 2);
    gir_graph_free(r);
    r = pat_check(shape_op(GIR_OP_Unsqueeze, 2, DIMS(3, 4), "axes", (const int64_t[]){ 0, -1 }, 2),
                  "unsqueeze-as-reshape", "s", PAT_EDGES | PAT_NAN, 0);
    expect_reshape(r, (const int64_t[]){ 1, 3, 4, 1 }, 4);
    gir_graph_free(r);
    /* an unknown batch: copied where it stays in place, else inferred */
    static const struct {
        gir_op op;
        const char *pattern, *attr;
        int rank;
        int64_t dims[4], v[2];
        size_t nv;
        int64_t want[4];
        size_t nw;
    } u[] = {
        { GIR_OP_Flatten, "flatten-as-reshape", "axis", 3, { -1, 3, 4 }, { 1 }, 1, { 0, 12 }, 2 },
        { GIR_OP_Flatten, "flatten-as-reshape", "axis", 3, { -1, 3, 4 }, { 2 }, 1, { -1, 4 }, 2 },
        { GIR_OP_Flatten, "flatten-as-reshape", "axis", 2, { -1, 3 }, { 0 }, 1, { 1, -1 }, 2 },
        { GIR_OP_Squeeze, "squeeze-as-reshape", "axes", 4, { -1, 5, 1, 1 }, { 2, 3 }, 2, { 0, 5 }, 2 },
        { GIR_OP_Unsqueeze, "unsqueeze-as-reshape", "axes", 2, { 7, -1 }, { 0 }, 1, { 1, 7, -1 }, 3 },
    };
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        gir_graph *g = shape_op(u[i].op, u[i].rank, u[i].dims, u[i].attr, u[i].v, u[i].nv);
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_graph_finish(g, &err), &err);
        TU_OK(gir_pattern_apply(g, gir_pattern_find(u[i].pattern), 0, &err), &err);
        expect_reshape(g, u[i].want, u[i].nw);
        gir_graph_free(g);
    }
    /* two unknown dimensions that move */
    pat_refuses(shape_op(GIR_OP_Flatten, 3, DIMS(2, -1, -1), "axis", (const int64_t[]){ 2 }, 1), "flatten-as-reshape",
                "s", "more than one unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_global),
        cmocka_unit_test(test_global_reduce),
        cmocka_unit_test(test_nary_chain),
        cmocka_unit_test(test_split_slices),
        cmocka_unit_test(test_logic_arith),
        cmocka_unit_test(test_shape_as_reshape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
