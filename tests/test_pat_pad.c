/* Legalization patterns of pat_pad.c: a Pad merged into the Conv/pools
 * that read it, asymmetric pads split out as a Pad, ceil-mode pooling as
 * floor mode with end padding; each run before and after the rewrite on
 * inputs with edge values (and NaN/inf) and compared. */
#include "patutil.h"

/* x[2, 3, 7, 8] (through Relu when relu) -> Pad(pads, value) -> op (k 3x3,
 * stride 2 unless conv) -> y. */
static gir_graph *pad_then(gir_op op, const int64_t *pads, double value, bool relu, gir_node **consumer)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 7, 8));
    const char *src = "x";
    if (relu) {
        rt_node(g, GIR_OP_Relu, "relu", "x", "r");
        src = "r";
    }
    gir_node *p = rt_node(g, GIR_OP_Pad, "pad", src, "p");
    rt_attr_ints(g, p, "pads", pads, 8);
    rt_attr_float(g, p, "constant_value", value);
    gir_node *c;
    if (op == GIR_OP_Conv) {
        float w[4 * 3 * 3 * 3];
        rt_fill(w, 4 * 3 * 3 * 3, 7);
        rt_const(g, "w", GIR_DT_F32, 4, DIMS(4, 3, 3, 3), w);
        c = rt_node(g, op, "c", "p,w", "y");
    } else {
        c = rt_node(g, op, "c", "p", "y");
        RT_INTS(g, c, "strides", 2, 2);
    }
    RT_INTS(g, c, "kernel_shape", 3, 3);
    rt_output(g, "y");
    if (consumer)
        *consumer = c;
    return g;
}

static const int64_t *ints_of(const gir_graph *g, const char *node, const char *attr, ptrdiff_t want)
{
    int32_t i = gir_graph_node_index(g, node);
    assert_true(i >= 0);
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&g->nodes[i]->attrs, attr, &v), want);
    return v;
}

static int64_t int_of(const gir_graph *g, const char *node, const char *attr)
{
    int32_t i = gir_graph_node_index(g, node);
    assert_true(i >= 0);
    return gir_node_int(g->nodes[i], attr, -7);
}

static void test_pad_into_avgpool(void **state)
{
    (void)state;
    /* DenseNet's form (zero padding before an AveragePool that excludes
     * pads): the padded cells are counted, so the pool counts its pads.
     * The same cells are summed in the same order: bit-exact. */
    gir_graph *r = pat_check(pad_then(GIR_OP_AveragePool, (const int64_t[]){ 0, 0, 1, 2, 0, 0, 2, 1 }, 0.0, false,
                                      NULL),
                             "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Pad"), 0);
    const int64_t *p = ints_of(r, "c", "pads", 4);
    assert_true(p[0] == 1 && p[1] == 2 && p[2] == 2 && p[3] == 1);
    assert_int_equal(int_of(r, "c", "count_include_pad"), 1);
    gir_graph_free(r);
    /* an AveragePool that counts its own pads takes more */
    gir_node *c;
    gir_graph *g = pad_then(GIR_OP_AveragePool, (const int64_t[]){ 0, 0, 1, 0, 0, 0, 0, 1 }, 0.0, false, &c);
    RT_INTS(g, c, "pads", 1, 1, 1, 1);
    rt_attr_int(g, c, "count_include_pad", 1);
    r = pat_check(g, "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 0);
    p = ints_of(r, "c", "pads", 4);
    assert_true(p[0] == 2 && p[1] == 1 && p[2] == 1 && p[3] == 2);
    gir_graph_free(r);
    /* ceil mode: padding at the begin only (the last window's start rule
     * reads the end) */
    g = pad_then(GIR_OP_AveragePool, (const int64_t[]){ 0, 0, 1, 2, 0, 0, 0, 0 }, 0.0, false, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    gir_graph_free(pat_check(g, "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 0));
    g = pad_then(GIR_OP_AveragePool, (const int64_t[]){ 0, 0, 1, 0, 0, 0, 1, 0 }, 0.0, false, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    pat_refuses(g, "pad-into-window", "pad", "a ceil-mode pool after padding at the end");
    /* own pads excluded from the count: the merged ones would not be */
    g = pad_then(GIR_OP_AveragePool, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, &c);
    RT_INTS(g, c, "pads", 1, 0, 1, 0);
    pat_refuses(g, "pad-into-window", "pad", "excludes its own pads from the count");
    pat_refuses(pad_then(GIR_OP_AveragePool, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.5, false, NULL),
                "pad-into-window", "pad", "a pad value other than 0");
}

static void test_pad_into_conv(void **state)
{
    (void)state;
    gir_node *c;
    gir_graph *g = pad_then(GIR_OP_Conv, (const int64_t[]){ 0, 0, 1, 0, 0, 0, 2, 1 }, 0.0, false, &c);
    RT_INTS(g, c, "pads", 1, 1, 0, 0);
    gir_graph *r = pat_check(g, "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(tu_count_op(r, "Pad"), 0);
    const int64_t *p = ints_of(r, "c", "pads", 4);
    assert_true(p[0] == 2 && p[1] == 1 && p[2] == 2 && p[3] == 1);
    gir_graph_free(r);
    /* auto_pad VALID is pads of 0 */
    g = pad_then(GIR_OP_Conv, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, &c);
    rt_attr_string(g, c, "auto_pad", "VALID");
    r = pat_check(g, "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 0);
    assert_string_equal(gir_node_string(r->nodes[gir_graph_node_index(r, "c")], "auto_pad", "?"), "NOTSET");
    gir_graph_free(r);
    g = pad_then(GIR_OP_Conv, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, &c);
    rt_attr_string(g, c, "auto_pad", "SAME_UPPER");
    pat_refuses(g, "pad-into-window", "pad", "auto_pad SAME");
    pat_refuses(pad_then(GIR_OP_Conv, (const int64_t[]){ 1, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, NULL),
                "pad-into-window", "pad", "Pad of the batch or channel axis");
    pat_refuses(pad_then(GIR_OP_Conv, (const int64_t[]){ 0, 0, -1, 1, 0, 0, 1, 1 }, 0.0, false, NULL),
                "pad-into-window", "pad", "crops");
    /* every reader must take it; a graph output cannot go */
    g = pad_then(GIR_OP_Conv, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, NULL);
    rt_node(g, GIR_OP_Relu, "other", "p", "z");
    rt_output(g, "z");
    pat_refuses(g, "pad-into-window", "pad", "read by other than Conv, AveragePool or MaxPool");
    g = pad_then(GIR_OP_Conv, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, NULL);
    rt_output(g, "p");
    pat_refuses(g, "pad-into-window", "pad", "graph output");
    /* edge and reflect padding have no pads of a window */
    g = pad_then(GIR_OP_Conv, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, NULL);
    rt_attr_string(g, g->nodes[gir_graph_node_index(g, "pad")], "mode", "reflect");
    pat_refuses(g, "pad-into-window", "pad", "Pad in mode reflect");
}

static void test_pad_into_maxpool(void **state)
{
    (void)state;
    /* -inf cells are what a max ignores: bit-exact, NaN included */
    gir_graph *r = pat_check(pad_then(GIR_OP_MaxPool, (const int64_t[]){ 0, 0, 2, 0, 0, 0, 1, 2 }, -INFINITY,
                                      false, NULL),
                             "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 0);
    const int64_t *p = ints_of(r, "c", "pads", 4);
    assert_true(p[0] == 2 && p[1] == 0 && p[2] == 1 && p[3] == 2);
    gir_graph_free(r);
    /* zeros before a max of what Relu made (no negative value, NaN passes
     * through both): the same values; only a zero's sign may differ
     * (Relu keeps -0, a padded +0 may win over it), so compared by value */
    r = pat_check(pad_then(GIR_OP_MaxPool, (const int64_t[]){ 0, 0, 1, 2, 0, 0, 2, 1 }, 0.0, true, NULL),
                  "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 1e-300);
    assert_int_equal(tu_count_op(r, "Pad"), 0);
    gir_graph_free(r);
    pat_refuses(pad_then(GIR_OP_MaxPool, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, false, NULL),
                "pad-into-window", "pad", "a MaxPool after padding with other than -inf");
    /* as wide as the window: a window of only zeros would become empty */
    pat_refuses(pad_then(GIR_OP_MaxPool, (const int64_t[]){ 0, 0, 3, 1, 0, 0, 1, 1 }, 0.0, true, NULL),
                "pad-into-window", "pad", "as wide as its window");
    gir_node *c;
    gir_graph *g = pad_then(GIR_OP_MaxPool, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 0.0, true, &c);
    RT_INTS(g, c, "dilations", 2, 1);
    pat_refuses(g, "pad-into-window", "pad", "a dilated MaxPool");
}

/* A Pad of nothing goes, whatever its mode. */
static void test_pad_nothing(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(2, 3, 4));
    gir_node *p = rt_node(g, GIR_OP_Pad, "pad", "x", "p");
    RT_INTS(g, p, "pads", 0, 0, 0, 0, 0, 0);
    rt_attr_string(g, p, "mode", "edge");
    rt_node(g, GIR_OP_Relu, "relu", "p", "y");
    rt_output(g, "y");
    gir_graph *r = pat_check(g, "pad-into-window", "pad", PAT_EDGES | PAT_NAN, 0);
    assert_int_equal(gir_graph_node_count(r), 1);
    gir_graph_free(r);
}

/* x[2, 3, 7, 8] -> op(pads) -> y (k 3x3, stride 2 for pools). */
static gir_graph *windowed(gir_op op, const int64_t *pads, gir_node **node)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(2, 3, 7, 8));
    gir_node *c;
    if (op == GIR_OP_Conv) {
        float w[4 * 3 * 3 * 3], b[4] = { 0.5f, -1.0f, 0.0f, 2.0f };
        rt_fill(w, 4 * 3 * 3 * 3, 9);
        rt_const(g, "w", GIR_DT_F32, 4, DIMS(4, 3, 3, 3), w);
        rt_const(g, "b", GIR_DT_F32, 1, DIMS(4), b);
        c = rt_node(g, op, "c", "x,w,b", "y");
    } else {
        c = rt_node(g, op, "c", "x", "y");
        RT_INTS(g, c, "strides", 2, 2);
    }
    RT_INTS(g, c, "kernel_shape", 3, 3);
    if (pads)
        rt_attr_ints(g, c, "pads", pads, 4);
    rt_output(g, "y");
    if (node)
        *node = c;
    return g;
}

static const int64_t *pad_of(const gir_graph *r)
{
    for (size_t i = 0; i < r->n_nodes; i++)
        if (r->nodes[i]->op == GIR_OP_Pad) {
            const int64_t *v;
            assert_int_equal(gir_attrs_get_ints(&r->nodes[i]->attrs, "pads", &v), 8);
            return v;
        }
    fail_msg("no Pad");
    return NULL;
}

static double pad_value(const gir_graph *r)
{
    for (size_t i = 0; i < r->n_nodes; i++)
        if (r->nodes[i]->op == GIR_OP_Pad)
            return gir_node_float(r->nodes[i], "constant_value", 7.0);
    return 7.0;
}

static void test_pads_split(void **state)
{
    (void)state;
    gir_graph *r = pat_check(windowed(GIR_OP_Conv, (const int64_t[]){ 0, 2, 1, 1 }, NULL), "conv-pads-as-pad", "c",
                             PAT_EDGES | PAT_NAN, 0);
    const int64_t *p = pad_of(r);
    static const int64_t want[8] = { 0, 0, 0, 1, 0, 0, 1, 0 };
    assert_memory_equal(p, want, sizeof want);
    assert_true(pad_value(r) == 0.0);
    assert_int_equal(tu_count_op(r, "Conv"), 1);
    gir_graph_free(r);
    /* MaxPool: the split-out cells are -inf */
    r = pat_check(windowed(GIR_OP_MaxPool, (const int64_t[]){ 1, 0, 2, 1 }, NULL), "maxpool-pads-as-pad", "c",
                  PAT_EDGES | PAT_NAN, 0);
    static const int64_t want2[8] = { 0, 0, 0, 0, 0, 0, 1, 1 };
    assert_memory_equal(pad_of(r), want2, sizeof want2);
    assert_true(isinf(pad_value(r)) && pad_value(r) < 0);
    gir_graph_free(r);
    /* AveragePool that counts its pads: zeros */
    gir_node *c;
    gir_graph *g = windowed(GIR_OP_AveragePool, (const int64_t[]){ 0, 1, 1, 0 }, &c);
    rt_attr_int(g, c, "count_include_pad", 1);
    r = pat_check(g, "avgpool-pads-as-pad", "c", PAT_EDGES | PAT_NAN, 0);
    assert_true(pad_value(r) == 0.0);
    gir_graph_free(r);
    pat_refuses(windowed(GIR_OP_AveragePool, (const int64_t[]){ 0, 1, 1, 0 }, NULL), "avgpool-pads-as-pad", "c",
                "excludes its pads from the count");
    pat_refuses(windowed(GIR_OP_Conv, (const int64_t[]){ 1, 2, 1, 2 }, NULL), "conv-pads-as-pad", "c",
                "symmetric pads");
    g = windowed(GIR_OP_MaxPool, (const int64_t[]){ 0, 0, 1, 1 }, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    pat_refuses(g, "maxpool-pads-as-pad", "c", "more padding at the end");
    /* ceil mode with the extra at the begin keeps its windows */
    g = windowed(GIR_OP_MaxPool, (const int64_t[]){ 1, 1, 0, 0 }, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    gir_graph_free(pat_check(g, "maxpool-pads-as-pad", "c", PAT_EDGES | PAT_NAN, 0));
}

static void test_ceil_as_pads(void **state)
{
    (void)state;
    /* 7 rows, window 3, stride 2: ceil gives 3 (floor 3), 8 columns: ceil
     * 4 (floor 3): one more column of padding */
    gir_node *c;
    gir_graph *g = windowed(GIR_OP_MaxPool, NULL, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    gir_graph *r = pat_check(g, "maxpool-ceil-as-pads", "c", PAT_EDGES | PAT_NAN, 0);
    int32_t i = gir_graph_node_index(r, "c_MaxPool");
    assert_true(i >= 0);
    assert_int_equal(gir_node_int(r->nodes[i], "ceil_mode", 1), 0);
    const int64_t *p;
    assert_int_equal(gir_attrs_get_ints(&r->nodes[i]->attrs, "pads", &p), 4);
    assert_true(p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 1);
    gir_graph_free(r);
    /* an average that excludes pads does not count them either */
    g = windowed(GIR_OP_AveragePool, (const int64_t[]){ 1, 0, 1, 0 }, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    gir_graph_free(pat_check(g, "avgpool-ceil-as-pads", "c", PAT_EDGES | PAT_NAN, 0));
    /* one that counts them would count the extra: refused unless no
     * window runs over */
    g = windowed(GIR_OP_AveragePool, NULL, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    rt_attr_int(g, c, "count_include_pad", 1);
    pat_refuses(g, "avgpool-ceil-as-pads", "c", "runs over");
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 2, 9, 9));
    c = rt_node(g, GIR_OP_AveragePool, "c", "x", "y");
    RT_INTS(g, c, "kernel_shape", 3, 3);
    RT_INTS(g, c, "strides", 2, 2);
    rt_attr_int(g, c, "ceil_mode", 1);
    rt_attr_int(g, c, "count_include_pad", 1);
    rt_output(g, "y");
    gir_graph_free(pat_check(g, "avgpool-ceil-as-pads", "c", PAT_EDGES | PAT_NAN, 0));
    /* the last window may not start in the end padding: 5 + 1 + 1 cells,
     * window 2, stride 2 is 3 windows in ceil mode as in floor mode */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 2, 5, 5));
    c = rt_node(g, GIR_OP_MaxPool, "c", "x", "y");
    RT_INTS(g, c, "kernel_shape", 2, 2);
    RT_INTS(g, c, "strides", 2, 2);
    RT_INTS(g, c, "pads", 1, 1, 1, 1);
    rt_attr_int(g, c, "ceil_mode", 1);
    rt_output(g, "y");
    r = pat_check(g, "maxpool-ceil-as-pads", "c", PAT_EDGES | PAT_NAN, 0);
    i = gir_graph_node_index(r, "c_MaxPool");
    assert_int_equal(gir_attrs_get_ints(&r->nodes[i]->attrs, "pads", &p), 4);
    assert_true(p[0] == 1 && p[1] == 1 && p[2] == 1 && p[3] == 1);
    gir_graph_free(r);
    pat_refuses(windowed(GIR_OP_MaxPool, NULL, NULL), "maxpool-ceil-as-pads", "c", "floor mode already");
    /* dilated windows */
    g = windowed(GIR_OP_MaxPool, NULL, &c);
    rt_attr_int(g, c, "ceil_mode", 1);
    RT_INTS(g, c, "dilations", 2, 1);
    gir_graph_free(pat_check(g, "maxpool-ceil-as-pads", "c", PAT_EDGES | PAT_NAN, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pad_into_avgpool), cmocka_unit_test(test_pad_into_conv),
        cmocka_unit_test(test_pad_into_maxpool), cmocka_unit_test(test_pad_nothing),
        cmocka_unit_test(test_pads_split),       cmocka_unit_test(test_ceil_as_pads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
