/* Graph passes: validation, topological order, shape inference over a
 * graph, normalisation, the reader pipeline. */
#include "gbuild.h"

#include "passes/diff.h"

#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* x -> conv -> relu -> y */
static gir_graph *small_graph(void)
{
    gir_graph *g = gb_graph();
    gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[N,3,8,8]");
    gb_value(g, "w", GIR_VALUE_WEIGHT, "float32", "[4,3,3,3]");
    gir_node *c = gb_node(g, "Conv", "conv", "x,w", "c");
    GB_INTS(c, "pads", 1, 1, 1, 1);
    gb_node(g, "Relu", "relu", "c", "y");
    assert_int_equal(gir_graph_add_output(g, gir_graph_value_index(g, "y"), NULL), GIR_OK);
    return g;
}

#define EXPECT_FAIL(call, code, ...)                              \
    do {                                                          \
        gir_error e_ = GIR_ERROR_INIT;                            \
        TU_FAILS((call)(g, &e_), &e_, (code), __VA_ARGS__);       \
        gir_error_clear(&e_);                                     \
    } while (0)

/* ---- validation ----------------------------------------------------------------- */

static void test_validate_ok(void **state)
{
    (void)state;
    gir_graph *g = small_graph();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_validate(g, &err), &err);
    TU_OK(gir_graph_finish(g, &err), &err);
    gb_expect(g, "y", "float32", "[N,4,8,8]");
    gir_graph_free(g);
}

static void test_validate_references(void **state)
{
    (void)state;
    gir_graph *g = small_graph();
    g->nodes[1]->in[0] = 999;
    EXPECT_FAIL(gir_validate, GIR_E_REFERENCE, "node 'relu': input 0 refers to value 999 of 4");
    EXPECT_FAIL(gir_infer_shapes, GIR_E_REFERENCE, "node 'relu': input 0 refers to value 999 of 4");
    gir_graph_free(g);

    g = small_graph();
    g->nodes[0]->out[0] = -7;
    EXPECT_FAIL(gir_validate, GIR_E_REFERENCE, "node 'conv': output 0 refers to value -7 of 4");
    gir_graph_free(g);

    /* two producers of one value */
    g = small_graph();
    gb_value(g, "x2", GIR_VALUE_INPUT, "float32", "[N,4,8,8]");
    gir_node *n = gb_node(g, "Relu", "relu2", "x2", "_");
    n->out[0] = gir_graph_value_index(g, "y");
    EXPECT_FAIL(gir_validate, GIR_E_DUPLICATE, "node 'relu2': value 'y' is produced by nodes 'relu' and 'relu2'");
    gir_graph_free(g);

    /* an intermediate nobody produces */
    g = small_graph();
    gb_value(g, "t", GIR_VALUE_INTERMEDIATE, "float32", "[1]");
    EXPECT_FAIL(gir_validate, GIR_E_REFERENCE, "node 't': value 't' is intermediate but no node produces it");
    gir_graph_free(g);

    /* a weight produced by a node */
    g = small_graph();
    g->values[gir_graph_value_index(g, "c")]->kind = GIR_VALUE_WEIGHT;
    EXPECT_FAIL(gir_validate, GIR_E_REFERENCE, "value 'c' is a weight but node 'conv' produces it");
    gir_graph_free(g);

    /* a node output the value does not know about */
    g = small_graph();
    g->values[gir_graph_value_index(g, "y")]->producer = -1;
    EXPECT_FAIL(gir_validate, GIR_E_REFERENCE, "value 'y' is output 0 of node 'relu' but records producer -1");
    gir_graph_free(g);

    /* graph inputs and outputs */
    g = small_graph();
    assert_int_equal(gir_graph_add_output(g, 42, NULL), GIR_OK);
    EXPECT_FAIL(gir_validate, GIR_E_REFERENCE, "graph output 1 refers to value 42 of 4");
    gir_graph_free(g);
    g = small_graph();
    assert_int_equal(gir_graph_add_input(g, gir_graph_value_index(g, "c"), NULL), GIR_OK);
    EXPECT_FAIL(gir_validate, GIR_E_REFERENCE, "node 'c': graph input 'c' is produced by node 'conv'");
    gir_graph_free(g);
    g = small_graph();
    assert_int_equal(gir_graph_add_input(g, 0, NULL), GIR_OK);
    EXPECT_FAIL(gir_validate, GIR_E_DUPLICATE, "value 'x' is listed twice among the graph inputs");
    gir_graph_free(g);
}

static void test_validate_names_and_values(void **state)
{
    (void)state;
    /* The builder refuses duplicates; names changed behind its back are caught. */
    gir_graph *g = small_graph();
    g->values[3]->name = "c";
    EXPECT_FAIL(gir_validate, GIR_E_DUPLICATE, "node 'c': two values are named 'c' (values 2 and 3)");
    gir_graph_free(g);
    g = small_graph();
    g->nodes[1]->name = "conv";
    EXPECT_FAIL(gir_validate, GIR_E_DUPLICATE, "two nodes are named 'conv' (nodes 0 and 1)");
    gir_graph_free(g);
    g = small_graph();
    g->values[1]->shape.rank = 9;
    EXPECT_FAIL(gir_validate, GIR_E_SHAPE, "value 'w' has rank 9; ranks are 0 to 8, or -1 for unknown");
    gir_graph_free(g);
    g = small_graph();
    g->values[1]->shape.dims[2] = -3;
    EXPECT_FAIL(gir_validate, GIR_E_SHAPE, "value 'w' has dimension -3 on axis 2");
    gir_graph_free(g);
}

static void test_validate_ops(void **state)
{
    (void)state;
    gir_graph *g = small_graph();
    gb_node(g, "Add", "add", "y", "z");
    EXPECT_FAIL(gir_validate, GIR_E_SCHEMA, "node 'add': Add takes 2 inputs, found 1");
    gir_graph_free(g);
    g = small_graph();
    gir_node *n = gb_node(g, "Relu", "r2", "y", "z");
    GB_INT(n, "inplace", 1);
    EXPECT_FAIL(gir_validate, GIR_E_ATTRIBUTE, "node 'r2': Relu has no attribute 'inplace'");
    gir_graph_free(g);
    g = small_graph();
    n = gb_node(g, "Concat", "cat", "y,y", "z");
    EXPECT_FAIL(gir_validate, GIR_E_ATTRIBUTE, "node 'cat': Concat needs attribute 'axis'");
    GB_STR(n, "axis", "1");
    EXPECT_FAIL(gir_validate, GIR_E_ATTRIBUTE, "node 'cat': Concat attribute 'axis' has type string, expected int");
    gir_graph_free(g);
    /* opaque nodes may have any operands and attributes, but need an op name */
    g = small_graph();
    n = gb_node(g, "opaque", "op", "x,w,y,c,x", "z1,z2,z3");
    GB_STR(n, "anything", "goes");
    GB_INTS(n, "axis", 1, 2);
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_validate(g, &err), &err);
    TU_OK(gir_graph_finish(g, &err), &err);
    gb_expect(g, "z1", "unknown", "*");
    n->opaque_op = NULL;
    EXPECT_FAIL(gir_validate, GIR_E_SCHEMA, "node 'op': opaque node 'op' has no operator name");
    gir_graph_free(g);
}

/* ---- cycles and order -------------------------------------------------------------- */

static void test_cycle(void **state)
{
    (void)state;
    gir_graph *g = gb_graph();
    gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[2]");
    gb_value(g, "ya", GIR_VALUE_INTERMEDIATE, "float32", "*");
    gb_value(g, "yb", GIR_VALUE_INTERMEDIATE, "float32", "*");
    gb_value(g, "yc", GIR_VALUE_INTERMEDIATE, "float32", "*");
    gb_node(g, "Relu", "free", "x", "f");
    gb_node(g, "Add", "a", "x,yc", "ya");
    gb_node(g, "Relu", "b", "ya", "yb");
    gb_node(g, "Relu", "c", "yb", "yc");
    gb_node(g, "Relu", "after", "yc", "z");
    int32_t *order = (int32_t *)1;
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_topo_order(g, &order, &err), &err, GIR_E_CYCLE,
             "node 'a': the graph has a cycle: 'a' -> 'b' -> 'c' -> 'a' [cycle]");
    assert_null(order);
    gir_error_clear(&err);
    EXPECT_FAIL(gir_validate, GIR_E_CYCLE, "'a' -> 'b' -> 'c' -> 'a'");
    EXPECT_FAIL(gir_infer_shapes, GIR_E_CYCLE, "'a' -> 'b' -> 'c' -> 'a'");
    EXPECT_FAIL(gir_graph_finish, GIR_E_CYCLE, "'a' -> 'b' -> 'c' -> 'a'");
    gir_graph_free(g);

    /* a node feeding itself */
    g = gb_graph();
    gb_value(g, "s", GIR_VALUE_INTERMEDIATE, "float32", "*");
    gb_node(g, "Relu", "self", "s", "s");
    EXPECT_FAIL(gir_validate, GIR_E_CYCLE, "node 'self': the graph has a cycle: 'self' -> 'self'");
    gir_graph_free(g);
}

static void test_long_cycle(void **state)
{
    (void)state;
    /* A ring of 100000 nodes: found without recursion, message shortened. */
    enum { N = 100000 };
    gir_graph *g = gb_graph();
    char a[32], b[32], nm[32];
    for (int i = 0; i < N; i++) {
        snprintf(a, sizeof a, "v%d", i);
        gb_value(g, a, GIR_VALUE_INTERMEDIATE, "float32", "[1]");
    }
    for (int i = 0; i < N; i++) {
        snprintf(a, sizeof a, "v%d", i);
        snprintf(b, sizeof b, "v%d", (i + 1) % N);
        snprintf(nm, sizeof nm, "n%d", i);
        gb_node(g, "Relu", nm, a, b);
    }
    EXPECT_FAIL(gir_validate, GIR_E_CYCLE,
                "the graph has a cycle: 'n0' -> 'n1' -> 'n2' -> 'n3' -> 'n4' -> 'n5' -> 'n6' -> 'n7' -> 'n8' -> "
                "'n9' -> 'n10' -> 'n11' -> 'n12' -> ... (100000 nodes in the cycle) [cycle]");
    gir_graph_free(g);
}

static void test_topo_order(void **state)
{
    (void)state;
    /* Nodes listed consumers first; among ready nodes the lowest index goes first. */
    gir_graph *g = gb_graph();
    gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[2]");
    gb_value(g, "ya", GIR_VALUE_INTERMEDIATE, "float32", "*");
    gb_value(g, "yb", GIR_VALUE_INTERMEDIATE, "float32", "*");
    gb_node(g, "Add", "c", "ya,yb", "yc");
    gb_node(g, "Relu", "b", "x", "yb");
    gb_node(g, "Relu", "a", "x", "ya");
    gb_node(g, "Relu", "d", "x", "yd");
    gb_node(g, "Neg", "e", "yc", "ye");
    int32_t *order = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_topo_order(g, &order, &err), &err);
    static const int32_t want[] = { 1, 2, 0, 3, 4 };
    assert_memory_equal(order, want, sizeof want);
    free(order);
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "ye", "float32", "[2]");
    gir_graph_free(g);

    /* producers listed first: the nodes' own order */
    g = gb_graph();
    gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[2]");
    gb_node(g, "Relu", "a", "x", "ya");
    gb_node(g, "Relu", "b", "x", "yb");
    gb_node(g, "Add", "c", "ya,yb", "yc");
    gb_node(g, "Neg", "d", "x", "yd");
    TU_OK(gir_topo_order(g, &order, &err), &err);
    static const int32_t same[] = { 0, 1, 2, 3 };
    assert_memory_equal(order, same, sizeof same);
    free(order);
    gir_graph_free(g);

    /* an empty graph has an empty order */
    g = gb_graph();
    TU_OK(gir_topo_order(g, &order, &err), &err);
    assert_non_null(order);
    free(order);
    TU_OK(gir_graph_finish(g, &err), &err);
    gir_graph_free(g);
}

static void test_chain_100k(void **state)
{
    (void)state;
    /* A chain of 100000 nodes listed last-first: order, validation and
     * inference must be iterative (and fast). */
    enum { N = 100000 };
    gir_graph *g = gb_graph();
    char a[32], b[32], nm[32];
    gb_value(g, "v0", GIR_VALUE_INPUT, "float32", "[batch,16]");
    for (int i = 1; i <= N; i++) {
        snprintf(a, sizeof a, "v%d", i);
        gb_value(g, a, GIR_VALUE_INTERMEDIATE, "?", "*");
    }
    for (int i = 0; i < N; i++) { /* node i computes v[N-i] from v[N-i-1] */
        snprintf(a, sizeof a, "v%d", N - i - 1);
        snprintf(b, sizeof b, "v%d", N - i);
        snprintf(nm, sizeof nm, "n%d", i);
        gb_node(g, i % 2 ? "Relu" : "Sigmoid", nm, a, b);
    }
    snprintf(b, sizeof b, "v%d", N);
    assert_int_equal(gir_graph_add_output(g, gir_graph_value_index(g, b), NULL), GIR_OK);

    gir_error err = GIR_ERROR_INIT;
    double t0 = now_ms();
    int32_t *order = NULL;
    TU_OK(gir_topo_order(g, &order, &err), &err);
    double t1 = now_ms();
    for (int i = 0; i < N; i++)
        assert_int_equal(order[i], N - 1 - i);
    free(order);
    TU_OK(gir_graph_finish(g, &err), &err);
    double t2 = now_ms();
    gb_expect(g, b, "float32", "[batch,16]");
    printf("# 100000-node chain: topological order %.1f ms, normalize+validate+infer %.1f ms\n", t1 - t0, t2 - t1);
    gir_graph_free(g);
}

/* ---- shapes over a graph ------------------------------------------------------------- */

static void test_infer_graph(void **state)
{
    (void)state;
    /* An opaque node whose output shape the reader declared feeds a Relu. */
    gir_graph *g = gb_graph();
    gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[1,3]");
    gir_node *op = gb_node(g, "opaque", "tvm_op", "x", "t");
    gb_node(g, "Relu", "relu", "t", "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "y", "unknown", "*");
    gir_value *t = g->values[op->out[0]];
    t->dtype = GIR_DT_F32;
    gb_shape(t, "[1,8]");
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "y", "float32", "[1,8]");
    /* a declared shape downstream must agree */
    gir_graph_free(g);

    g = small_graph();
    gb_shape(g->values[gir_graph_value_index(g, "y")], "[N,4,9,8]");
    EXPECT_FAIL(gir_infer_shapes, GIR_E_SHAPE, "node 'relu': Relu output 'y' is declared [?,4,9,8] but inferred "
                "[?,4,8,8]");
    gir_graph_free(g);
    g = small_graph();
    gb_shape(g->values[gir_graph_value_index(g, "c")], "[N,4,9,8]");
    EXPECT_FAIL(gir_graph_finish, GIR_E_SHAPE, "node 'conv': Conv output 'c' is declared [?,4,9,8] but inferred "
                "[?,4,8,8]");
    gir_graph_free(g);
    /* a contradiction in a graph names its node */
    g = small_graph();
    gb_value(g, "b", GIR_VALUE_WEIGHT, "float32", "[5]");
    gb_node(g, "Add", "add", "y,b", "z");
    EXPECT_FAIL(gir_graph_finish, GIR_E_SHAPE, "node 'add': Add cannot broadcast shapes [?,4,8,8] and [5]");
    gir_graph_free(g);
}

/* ---- normalisation -------------------------------------------------------------------- */

static void expect_attr_order(const gir_node *n, const char *names)
{
    char buf[512] = "";
    for (size_t i = 0; i < n->attrs.n; i++) {
        if (i)
            strcat(buf, ",");
        strcat(buf, n->attrs.items[i].name);
    }
    assert_string_equal(buf, names);
}

static void expect_ints(const gir_node *n, const char *name, const int64_t *want, size_t len)
{
    const int64_t *v;
    ptrdiff_t got = gir_attrs_get_ints(&n->attrs, name, &v);
    assert_int_equal(got, (ptrdiff_t)len);
    assert_memory_equal(v, want, len * sizeof *want);
}
#define EXPECT_INTS(n, name, ...)                                  \
    expect_ints((n), (name), (const int64_t[]){ __VA_ARGS__ },     \
                sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))

static void test_normalize_defaults(void **state)
{
    (void)state;
    gir_graph *g = gb_graph();
    gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[1,3,8,8]");
    gb_value(g, "w", GIR_VALUE_WEIGHT, "float32", "[4,3,3,5]");
    gb_value(g, "wu", GIR_VALUE_WEIGHT, "float32", "*");
    gir_node *conv = gb_node(g, "Conv", "conv", "x,w", "c");
    gir_node *same = gb_node(g, "Conv", "same", "x,w", "s");
    GB_STR(same, "auto_pad", "SAME_UPPER");
    gir_node *unk = gb_node(g, "Conv", "unk", "c,wu", "u");
    gir_node *xk = gb_node(g, "Conv", "xk", "x,wu", "xo");
    gir_node *pool = gb_node(g, "MaxPool", "pool", "x", "p");
    GB_INTS(pool, "kernel_shape", 2, 2);
    gir_node *opq = gb_node(g, "opaque", "opq", "x", "o");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_normalize(g, &err), &err);

    expect_attr_order(conv, "auto_pad,dilations,group,kernel_shape,pads,strides");
    assert_string_equal(gir_node_string(conv, "auto_pad", ""), "NOTSET");
    assert_int_equal(gir_attrs_find(&conv->attrs, "group")->type, GIR_ATTR_INT);
    assert_int_equal(gir_node_int(conv, "group", 0), 1);
    EXPECT_INTS(conv, "kernel_shape", 3, 5);
    EXPECT_INTS(conv, "dilations", 1, 1);
    EXPECT_INTS(conv, "pads", 0, 0, 0, 0);
    EXPECT_INTS(conv, "strides", 1, 1);
    /* with auto_pad SAME_* there are no pads to fill */
    expect_attr_order(same, "auto_pad,dilations,group,kernel_shape,strides");
    /* the kernel rank comes from X when W's shape is unknown (kernel_shape
     * cannot be filled then); with neither known nothing spatial is filled */
    expect_attr_order(xk, "auto_pad,dilations,group,pads,strides");
    EXPECT_INTS(xk, "strides", 1, 1);
    assert_int_equal(g->values[unk->in[0]]->shape.rank, -1);
    expect_attr_order(unk, "auto_pad,group");
    expect_attr_order(pool, "auto_pad,ceil_mode,dilations,kernel_shape,pads,storage_order,strides");
    EXPECT_INTS(pool, "pads", 0, 0, 0, 0);
    assert_int_equal(opq->attrs.n, 0);
    /* idempotent */
    TU_OK(gir_normalize(g, &err), &err);
    expect_attr_order(conv, "auto_pad,dilations,group,kernel_shape,pads,strides");
    gir_graph_free(g);
}

/* Two readers that differ only in writing defaults out produce equal graphs. */
static void test_normalize_equal_graphs(void **state)
{
    (void)state;
    gir_graph *ga = gb_graph(), *gb = gb_graph();
    gir_graph *gs[2] = { ga, gb };
    for (int k = 0; k < 2; k++) {
        gir_graph *g = gs[k];
        gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[1,3,8,8]");
        gb_value(g, "w", GIR_VALUE_WEIGHT, "float32", "[4,3,3,3]");
        gir_node *n = gb_node(g, "Conv", "conv", "x,w", "c");
        gir_node *r = gb_node(g, "ReduceMean", "mean", "c", "m");
        gir_node *l = gb_node(g, "LeakyRelu", "lrelu", "m", "y");
        gir_node *s = gb_node(g, "Softmax", "sm", "y", "z");
        if (k == 0) {
            GB_INTS(n, "strides", 1, 1);
            GB_INT(n, "group", 1);
            GB_INTS(n, "pads", 0, 0, 0, 0);
            GB_INTS(n, "kernel_shape", 3, 3);
            GB_STR(n, "auto_pad", "NOTSET");
            GB_INTS(n, "dilations", 1, 1);
            GB_INT(r, "keepdims", 1);
            GB_FLOAT(l, "alpha", 0.01);
            GB_INT(s, "axis", -1);
        }
        assert_int_equal(gir_graph_add_output(g, gir_graph_value_index(g, "z"), NULL), GIR_OK);
    }
    gir_diff_options opt = { .names = true, .meta = true, .weights = false };
    gir_buf report = GIR_BUF_INIT;
    size_t count = 0;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_diff(ga, gb, &opt, &report, &count, &err), &err);
    assert_true(count > 0); /* before: the defaults differ */
    gir_buf_free(&report);
    TU_OK(gir_graph_finish(ga, &err), &err);
    TU_OK(gir_graph_finish(gb, &err), &err);
    TU_OK(gir_graph_diff(ga, gb, &opt, &report, &count, &err), &err);
    if (count)
        fprintf(stderr, "%s\n", report.data);
    assert_int_equal(count, 0);
    gir_buf_free(&report);
    expect_attr_order(ga->nodes[0], "auto_pad,dilations,group,kernel_shape,pads,strides");
    expect_attr_order(gb->nodes[0], "auto_pad,dilations,group,kernel_shape,pads,strides");
    gb_expect(ga, "z", "float32", "[1,1,1,1]");
    gir_graph_free(ga);
    gir_graph_free(gb);
}

static void test_normalize_coercion(void **state)
{
    (void)state;
    gir_graph *g = gb_graph();
    gb_value(g, "x", GIR_VALUE_INPUT, "float32", "[1,3,4,4]");
    gir_node *r = gb_node(g, "ReduceMean", "mean", "x", "m");
    assert_int_equal(gir_attrs_set_bool(g, &r->attrs, "keepdims", false, NULL), GIR_OK);
    gir_node *l = gb_node(g, "LeakyRelu", "lrelu", "x", "l");
    GB_INT(l, "alpha", 0);
    gir_node *z = gb_node(g, "Resize", "resize", "x", "z");
    GB_INTS(z, "scales", 1, 1, 2, 2);
    gir_node *c = gb_node(g, "Cast", "cast", "x", "c");
    GB_STR(c, "to", "float");
    gir_node *c2 = gb_node(g, "Cast", "cast2", "x", "c2");
    GB_STR(c2, "to", "int");
    gir_error err = GIR_ERROR_INIT;
    /* before normalisation the types are wrong for the schema */
    EXPECT_FAIL(gir_validate, GIR_E_ATTRIBUTE, "node 'mean': ReduceMean attribute 'keepdims' has type bool, "
                "expected int");
    TU_OK(gir_graph_finish(g, &err), &err);
    assert_int_equal(gir_attrs_find(&r->attrs, "keepdims")->type, GIR_ATTR_INT);
    assert_int_equal(gir_node_int(r, "keepdims", 1), 0);
    assert_int_equal(gir_attrs_find(&l->attrs, "alpha")->type, GIR_ATTR_FLOAT);
    const double *sc;
    assert_int_equal(gir_attrs_get_floats(&z->attrs, "scales", &sc), 4);
    assert_true(sc[2] == 2.0);
    assert_string_equal(gir_node_string(c, "to", ""), "float32");
    assert_string_equal(gir_node_string(c2, "to", ""), "int32");
    gb_expect(g, "m", "float32", "[]");
    gb_expect(g, "z", "float32", "[1,3,8,8]");
    gb_expect(g, "c2", "int32", "[1,3,4,4]");
    /* what cannot be widened losslessly stays and fails validation */
    GB_STR(l, "alpha", "0.1");
    EXPECT_FAIL(gir_graph_finish, GIR_E_ATTRIBUTE, "LeakyRelu attribute 'alpha' has type string, expected float");
    gir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_ok),
        cmocka_unit_test(test_validate_references),
        cmocka_unit_test(test_validate_names_and_values),
        cmocka_unit_test(test_validate_ops),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_long_cycle),
        cmocka_unit_test(test_topo_order),
        cmocka_unit_test(test_chain_100k),
        cmocka_unit_test(test_infer_graph),
        cmocka_unit_test(test_normalize_defaults),
        cmocka_unit_test(test_normalize_equal_graphs),
        cmocka_unit_test(test_normalize_coercion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
