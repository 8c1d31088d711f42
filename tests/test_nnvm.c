/* The NNVM family formats (nnvm, mxnet, tvm): the real files, round trips
 * (same flavour and across), operator mapping cases, bad input. */
#include "testutil.h"

#include "formats/format.h"
#include "formats/nnvm/nnvm.h"
#include "passes/diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- helpers ---------------------------------------------------------------- */

/* Most files here come without their weights: they are accepted as
 * inputs (test_missing_weights checks the refusal without the option). */
static gir_graph *load_opts(const char *path, const char *format, gir_options *o)
{
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    gir_options *c = gir_options_dup(o);
    TU_OK(gir_options_set(c, "weights-as-inputs", "1", &err), &err);
    TU_OK(gir_load(path, format, c, &g, &err), &err);
    gir_options_free(c);
    gir_error_clear(&err);
    return g;
}

static gir_graph *load(const char *path)
{
    return load_opts(path, NULL, NULL);
}

static gir_graph *load_shared(const char *rel)
{
    char *p = tu_shared(rel);
    gir_graph *g = load(p);
    free(p);
    return g;
}

static size_t count_kind(const gir_graph *g, gir_value_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < gir_graph_value_count(g); i++)
        n += gir_value_get_kind(gir_graph_value(g, i)) == k;
    return n;
}

static const char *gmeta(const gir_graph *g, const char *key)
{
    const gir_attr *a = gir_attrs_find(&g->meta, key);
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}

static const gir_value *val(const gir_graph *g, const char *name)
{
    const gir_value *v = gir_graph_find_value(g, name);
    if (!v)
        fail_msg("no value '%s'", name);
    return v;
}

static void assert_shape(const gir_value *v, const char *want)
{
    char buf[128];
    gir_shape_str(gir_value_shape(v), buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("value '%s' has shape %s, expected %s", gir_value_name(v), buf, want);
}

static const gir_node *node(const gir_graph *g, const char *name)
{
    int32_t i = gir_graph_node_index(g, name);
    if (i < 0)
        fail_msg("no node '%s'", name);
    return g->nodes[i];
}

/* Asserts a and b are the same graph: structure, attributes and weights,
 * names (and meta when asked); what names them in a failure. */
static void assert_same_in(const char *what, const gir_graph *a, const gir_graph *b, bool names, bool meta)
{
    tu_assert_same(a, b, names, meta, what);
}

static void assert_same(const gir_graph *a, const gir_graph *b, bool names, bool meta)
{
    assert_same_in("read back", a, b, names, meta);
}

/* Loads path, writes it as fmt into dir/out, reloads, compares. */
static gir_graph *round_trip(const gir_graph *g, const char *fmt, const char *out)
{
    char *p = tu_tmp(out);
    tu_save(g, p, fmt, NULL);
    gir_graph *h = load_opts(p, fmt, NULL);
    free(p);
    return h;
}

static void expect_load_fails(const char *path, const char *format, gir_options *o, gir_status code, const char *m1,
                              const char *m2, const char *m3)
{
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    gir_status st = gir_load(path, format, o, &g, &err);
    TU_FAILS(st, &err, code, m1, m2 ? m2 : m1, m3 ? m3 : m1);
    assert_null(g);
    gir_error_clear(&err);
}

static char *write_tmp(const char *name, const char *text)
{
    char *p = tu_tmp(name);
    assert_true(tu_write(p, text, strlen(text)));
    return p;
}

/* ---- the real files ---------------------------------------------------------- */

/* Attribute text as the files spell it (text.c). */
static void test_attr_text(void **state)
{
    (void)state;
    int64_t v[NN_MAX_TUPLE], x;
    size_t n;
    static const struct {
        const char *s;
        bool ok;
        size_t n;
        int64_t v[4];
    } tuples[] = {
        { "(3, 3)", true, 2, { 3, 3 } },      { "(3,3)", true, 2, { 3, 3 } },
        { "[1L, 2l]", true, 2, { 1, 2 } },    { " ( -1 ,+2 ) \n", true, 2, { -1, 2 } },
        { "(3,)", true, 1, { 3 } },          { "()", true, 0, { 0 } },
        { "[ ]", true, 0, { 0 } },           { "7", true, 1, { 7 } },
        { " -7L ", true, 1, { -7 } },         { "(1, 2, 3, 4)", true, 4, { 1, 2, 3, 4 } },
        { "(123456789012345678, 2)", true, 2, { 123456789012345678, 2 } },
        { "(3, 3", false, 0, { 0 } },        { "(3 3)", false, 0, { 0 } },
        { "(,)", false, 0, { 0 } },          { "(3,,)", false, 0, { 0 } },
        { "(-, 3)", false, 0, { 0 } },       { "(- 3)", false, 0, { 0 } },
        { "(3, 3))", false, 0, { 0 } },      { "(3, 3] ", false, 0, { 0 } },
        { "(3.5,)", false, 0, { 0 } },       { "(99999999999999999999,)", false, 0, { 0 } },
        { "", false, 0, { 0 } },             { "None", false, 0, { 0 } },
        { "(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)", true, 16, { 1, 2, 3, 4 } },
        { "(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)", false, 0, { 0 } },
    };
    for (size_t i = 0; i < sizeof tuples / sizeof *tuples; i++) {
        bool ok = nn_parse_tuple(tuples[i].s, v, &n);
        if (ok != tuples[i].ok)
            fail_msg("nn_parse_tuple(\"%s\") gave %d", tuples[i].s, ok);
        if (!ok)
            continue;
        assert_int_equal(n, tuples[i].n);
        for (size_t k = 0; k < n && k < 4; k++)
            assert_int_equal(v[k], tuples[i].v[k]);
    }
    assert_true(nn_parse_int("-9223372036854775808", &x));
    assert_true(x == INT64_MIN);
    assert_true(nn_parse_int("  42L\t", &x) && x == 42);
    assert_true(nn_parse_int("+5", &x) && x == 5);
    assert_false(nn_parse_int("9223372036854775808", &x));
    assert_false(nn_parse_int("4 2", &x));
    assert_false(nn_parse_int("-", &x));
    assert_false(nn_parse_int("", &x));
    assert_false(nn_parse_int(NULL, &x));

    bool b;
    static const char *const yes[] = { "True", "true", "TRUE", " 1", "1 \v", "tRuE\f\n" };
    static const char *const no[] = { "False", "false", "0", " FALSE ", "0\r" };
    static const char *const neither[] = { "", "Truee", "Tru", "2", "10", "\vTrue", "True x", "yes", "None" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_true(nn_parse_bool(yes[i], &b) && b);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_true(nn_parse_bool(no[i], &b) && !b);
    for (size_t i = 0; i < sizeof neither / sizeof *neither; i++)
        if (nn_parse_bool(neither[i], &b))
            fail_msg("nn_parse_bool(\"%s\") took it", neither[i]);
    assert_true(nn_is_none("None"));
    assert_true(nn_is_none(" None \v"));
    assert_false(nn_is_none("none"));
    assert_false(nn_is_none("Non"));
    assert_false(nn_is_none("None1"));
    assert_false(nn_is_none("\fNone"));
    assert_false(nn_is_none(NULL));

    gir_shape sh;
    assert_true(nn_parse_shape_hint("(5, 0, 5, 5)", &sh));
    assert_int_equal(sh.rank, 4);
    assert_int_equal(sh.dims[1], -1);
    assert_int_equal(sh.dims[3], 5);
    assert_true(nn_parse_shape_hint("()", &sh) && sh.rank == 0);
    assert_false(nn_parse_shape_hint("(5, -1)", &sh));
    assert_false(nn_parse_shape_hint("(1, 1, 1, 1, 1, 1, 1, 1, 1)", &sh));
}

/* Nodes of one operator with the same attribute text share one block of
 * meta pairs (and variables with the same text theirs); others get their own. */
static void test_shared_pairs(void **state)
{
    (void)state;
    char *p = write_tmp("pairs-symbol.json",
        "{\"nodes\": ["
        "{\"op\": \"null\", \"name\": \"x\", \"attrs\": {\"__shape__\": \"(1, 2, 8, 8)\"}, \"inputs\": []},"
        "{\"op\": \"null\", \"name\": \"w0\", \"attrs\": {\"__shape__\": \"(2, 2, 3, 3)\"}, \"inputs\": []},"
        "{\"op\": \"Convolution\", \"name\": \"c0\", \"attrs\": {\"kernel\": \"(3, 3)\", \"no_bias\": \"True\","
        " \"num_filter\": \"2\", \"pad\": \"(1, 1)\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
        "{\"op\": \"Activation\", \"name\": \"r\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": [[2, 0, 0]]},"
        "{\"op\": \"null\", \"name\": \"w1\", \"attrs\": {\"__shape__\": \"(2, 2, 3, 3)\"}, \"inputs\": []},"
        "{\"op\": \"Convolution\", \"name\": \"c1\", \"attrs\": {\"pad\": \"(1, 1)\", \"num_filter\": \"2\","
        " \"no_bias\": \"True\", \"kernel\": \"(3, 3)\"}, \"inputs\": [[3, 0, 0], [4, 0, 0]]},"
        "{\"op\": \"null\", \"name\": \"w2\", \"attrs\": {\"__shape__\": \"(2, 2, 1, 1)\"}, \"inputs\": []},"
        "{\"op\": \"Convolution\", \"name\": \"c2\", \"attrs\": {\"kernel\": \"(1, 1)\", \"no_bias\": \"True\","
        " \"num_filter\": \"2\", \"pad\": \"(0, 0)\"}, \"inputs\": [[5, 0, 0], [6, 0, 0]]}"
        "], \"arg_nodes\": [0, 1, 4, 6], \"heads\": [[7, 0, 0]]}");
    gir_graph *g = load(p);
    size_t n0, n1, n2, nr;
    const char *const *p0 = nn_meta_pairs(&node(g, "c0")->meta, "mxnet.attrs", &n0);
    const char *const *p1 = nn_meta_pairs(&node(g, "c1")->meta, "mxnet.attrs", &n1);
    const char *const *p2 = nn_meta_pairs(&node(g, "c2")->meta, "mxnet.attrs", &n2);
    const char *const *pr = nn_meta_pairs(&node(g, "r")->meta, "mxnet.attrs", &nr);
    assert_int_equal(n0, 8);
    assert_ptr_equal(p0, p1); /* the same text (in another order) */
    assert_int_equal(n2, 8);
    assert_ptr_not_equal(p0, p2);
    static const char *const want0[] = { "kernel", "(3, 3)", "no_bias", "True", "num_filter", "2", "pad", "(1, 1)" };
    static const char *const want2[] = { "kernel", "(1, 1)", "no_bias", "True", "num_filter", "2", "pad", "(0, 0)" };
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(p0[i], want0[i]);
        assert_string_equal(p2[i], want2[i]);
    }
    assert_int_equal(nr, 2);
    assert_string_equal(pr[1], "relu");
    size_t nw;
    const char *const *w0 = nn_meta_pairs(&val(g, "w0")->meta, "mxnet.attrs", &nw);
    assert_ptr_equal(w0, nn_meta_pairs(&val(g, "w1")->meta, "mxnet.attrs", &nw));
    const char *const *w2 = nn_meta_pairs(&val(g, "w2")->meta, "mxnet.attrs", &nw);
    assert_ptr_not_equal(w0, w2);
    assert_string_equal(w2[1], "(2, 2, 1, 1)");
    /* Written back as read. */
    gir_graph *h = round_trip(g, "mxnet", "pairs2-symbol.json");
    assert_same(g, h, true, true);
    gir_graph_free(h);
    gir_graph_free(g);
    free(p);
}

static void test_mxnet_lenet(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/mxnet/lenet-symbol.json");
    assert_string_equal(gmeta(g, "source.format"), "mxnet");
    assert_string_equal(gmeta(g, "source.producer"), "MXNet 1.4.1");
    assert_int_equal(gir_attrs_get_int(&g->meta, "mxnet.version", 0), 10401);
    assert_int_equal(gir_graph_node_count(g), 12);
    assert_int_equal(tu_count_opaque(g), 0);
    assert_int_equal(tu_count_op(g, "Conv"), 2);
    assert_int_equal(tu_count_op(g, "Relu"), 3);
    assert_int_equal(tu_count_op(g, "MaxPool"), 2);
    assert_int_equal(tu_count_op(g, "Flatten"), 3); /* one explicit, one per FullyConnected(flatten=True) */
    assert_int_equal(tu_count_op(g, "Gemm"), 2);
    assert_int_equal(gir_graph_input_count(g), 1);
    assert_string_equal(gir_value_name(gir_graph_input(g, 0)), "data");
    assert_int_equal(gir_graph_output_count(g), 1);
    assert_string_equal(gir_value_name(gir_graph_output(g, 0)), "hybridsequential0_dense1_fwd");
    /* Weights come from lenet-0001.params, lazily. */
    assert_int_equal(count_kind(g, GIR_VALUE_WEIGHT), 8);
    const gir_value *w = val(g, "hybridsequential0_conv0_weight");
    assert_int_equal(gir_value_get_kind(w), GIR_VALUE_WEIGHT);
    assert_shape(w, "[5,1,5,5]");
    assert_int_equal(gir_value_dtype(w), GIR_DT_F32);
    gir_tensor *t = gir_value_tensor(w);
    assert_null(t->data);
    const void *data;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_load(t, &data, &err), &err);
    assert_true(*(const float *)data == 0.1603482961654663f);
    gir_tensor_unload(t);
    assert_shape(val(g, "hybridsequential0_dense0_weight"), "[32,80]");
    assert_shape(val(g, "hybridsequential0_dense1_bias"), "[10]");
    /* Variable attributes ride in meta; __shape__ agreed with the data. */
    assert_string_equal(nn_meta_attr(&w->meta, "mxnet.attrs", "__shape__"), "(5, 0, 5, 5)");
    size_t np;
    const char *const *pairs = nn_meta_pairs(&w->meta, "mxnet.attrs", &np);
    assert_int_equal(np, 10);
    assert_string_equal(pairs[0], "__dtype__");
    assert_string_equal(pairs[9], "1.0");
    assert_string_equal(gir_attrs_get_string(&w->meta, "mxnet.param_prefix", ""), "arg");
    /* Convolution attributes, explicit. */
    const gir_node *c = node(g, "hybridsequential0_conv0_fwd");
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&c->attrs, "kernel_shape", &v), 2);
    assert_true(v[0] == 5 && v[1] == 5);
    assert_int_equal(gir_attrs_get_ints(&c->attrs, "pads", &v), 4);
    assert_int_equal(gir_node_int(c, "group", 0), 1);
    /* MKLDNN's two-output Pooling: remembered for the round trip. */
    const gir_node *p = node(g, "hybridsequential0_pool0_fwd");
    assert_int_equal(gir_attrs_get_int(&p->meta, "mxnet.num_outputs", 0), 2);
    assert_int_equal(p->n_out, 1);
    /* FullyConnected(flatten=True) = Flatten(axis=1) + Gemm(transB=1). */
    const gir_node *fc = node(g, "hybridsequential0_dense0_fwd");
    assert_int_equal(fc->op, GIR_OP_Gemm);
    assert_int_equal(gir_node_int(fc, "transB", 0), 1);
    const gir_node *fl = g->nodes[g->values[fc->in[0]]->producer];
    assert_string_equal(fl->name, "hybridsequential0_dense0_fwd_flatten");
    assert_int_equal(gir_node_int(fl, "axis", 0), 1);
    gir_graph_free(g);
}

static const char *note(const gir_graph *g, size_t i)
{
    const gir_attr *a = gir_attrs_find(&g->meta, GIR_META_NOTES);
    return a && a->type == GIR_ATTR_STRINGS && i < a->u.strs.n ? a->u.strs.v[i] : "";
}

/* With the input's shape, every shape the file implies. */
static void test_inferred_shapes(void **state)
{
    (void)state;
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "input-shape", "data:1,1,28,28", &err), &err);
    char *p = tu_shared("realworld/mxnet/lenet-symbol.json");
    gir_graph *g = load_opts(p, NULL, o);
    assert_shape(val(g, "hybridsequential0_conv0_fwd"), "[1,5,24,24]");
    assert_shape(val(g, "hybridsequential0_pool0_fwd"), "[1,5,12,12]");
    assert_shape(val(g, "hybridsequential0_conv1_fwd"), "[1,5,8,8]");
    assert_shape(val(g, "hybridsequential0_pool1_fwd"), "[1,5,4,4]");
    assert_shape(val(g, "hybridsequential0_flatten0_flatten0"), "[1,80]");
    assert_shape(val(g, "hybridsequential0_dense0_fwd"), "[1,32]");
    assert_shape(gir_graph_output(g, 0), "[1,10]");
    assert_int_equal(gir_value_dtype(gir_graph_output(g, 0)), GIR_DT_F32);
    gir_graph_free(g);
    free(p);
    p = tu_shared("realworld/nnvm/lenet_nnvm_graph.json");
    g = load_opts(p, NULL, o);
    assert_shape(val(g, "conv2d0"), "[1,20,24,24]");
    assert_shape(val(g, "max_pool2d0"), "[1,20,12,12]");
    assert_shape(val(g, "conv2d1"), "[1,50,8,8]");
    assert_shape(val(g, "max_pool2d1"), "[1,50,4,4]");
    assert_shape(val(g, "flatten0"), "[1,800]");
    assert_shape(val(g, "dense0"), "[1,500]");
    assert_shape(gir_graph_output(g, 0), "[1,10]");
    /* With every shape known, the NNVM file records them (graph attributes
     * shape and dtype per entry, as after NNVM's InferShape). */
    char *out = tu_tmp("shaped_graph.json");
    tu_save(g, out, "nnvm", NULL);
    char *text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "\"shape\": [\"list_shape\", [\n        [1, 1, 28, 28], \n        [20, 1, 5, 5]"));
    assert_non_null(strstr(text, "\"dtype\": [\"list_int\", [\n        0, \n"));
    free(text);
    gir_graph *h = load(out);
    assert_shape(val(h, "data"), "[1,1,28,28]");
    assert_int_equal(gir_value_dtype(val(h, "data")), GIR_DT_F32);
    assert_shape(val(h, "max_pool2d1"), "[1,50,4,4]");
    assert_same(g, h, true, false);
    gir_graph_free(h);
    free(out);
    gir_graph_free(g);
    free(p);
    /* A name that is no input. */
    TU_OK(gir_options_set(o, "input-shape", "_param_1:1,2", &err), &err);
    p = tu_shared("realworld/nnvm/lenet_nnvm_graph.json");
    expect_load_fails(p, NULL, o, GIR_E_ARGUMENT, "input-shape names '_param_1', which is a parameter, not an input",
                      NULL, NULL);
    TU_OK(gir_options_set(o, "input-shape", "data=1,2", &err), &err);
    expect_load_fails(p, NULL, o, GIR_E_ARGUMENT, "input-shape=data=1,2: expected NAME:D1,D2,...", NULL, NULL);
    free(p);
    gir_options_free(o);
}

/* A fixed gamma whose channel count only shape inference finds. */
static void test_bn_pending(void **state)
{
    (void)state;
    const char *text = "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []}, "
                       "{\"op\": \"Pooling\", \"name\": \"p\", \"attrs\": {\"kernel\": \"(2, 2)\"}, "
                       "\"inputs\": [[0,0,0]]}, "
                       "{\"op\": \"null\", \"name\": \"g\", \"inputs\": []}, "
                       "{\"op\": \"null\", \"name\": \"b\", \"inputs\": []}, "
                       "{\"op\": \"null\", \"name\": \"m\", \"inputs\": []}, "
                       "{\"op\": \"null\", \"name\": \"v\", \"inputs\": []}, "
                       "{\"op\": \"BatchNorm\", \"name\": \"bn\", \"inputs\": [[1,0,0],[2,0,0],[3,0,0],[4,0,0],[5,0,0]]}]"
                       ", \"arg_nodes\": [0,2,3,4,5], \"heads\": [[6,0,0]], "
                       "\"attrs\": {\"mxnet_version\": [\"int\", 10500]}}";
    char *p = write_tmp("pend-symbol.json", text);
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "input-shape", "data:2,3,4,4", &err), &err);
    gir_graph *g = load_opts(p, NULL, o);
    const gir_node *bn = node(g, "bn");
    assert_int_equal(bn->op, GIR_OP_BatchNormalization);
    assert_shape(g->values[bn->in[1]], "[3]");
    assert_int_equal(g->values[bn->in[1]]->kind, GIR_VALUE_CONST);
    assert_string_equal(gir_attrs_get_string(&bn->meta, "nnvm.ignored_gamma", ""), "g");
    assert_null(gir_attrs_find(&bn->meta, "nnvm.pending"));
    assert_shape(gir_graph_output(g, 0), "[2,3,3,3]"); /* MXNet's default stride is 1 */
    /* Written back: fix_gamma is the default again, g the input. */
    char *out = tu_tmp("pend2-symbol.json");
    tu_save(g, out, "mxnet", NULL);
    gir_graph *h = load_opts(out, NULL, o);
    free(out);
    out = tu_tmp("pend3-symbol.json");
    assert_same(g, h, true, true);
    gir_graph_free(h);
    gir_graph_free(g);
    /* Without the shape: kept verbatim, with a note. */
    g = load(p);
    bn = node(g, "bn");
    assert_true(gir_node_is_opaque(bn));
    assert_string_equal(gir_node_op(bn), "BatchNorm");
    assert_string_equal(note(g, 0), "5 inputs without a recorded type (first 'data') taken as float32, the MXNet "
                                    "default");
    assert_string_equal(note(g, 1), "no weights file: 4 weights (first 'g') taken as graph inputs");
    assert_string_equal(note(g, 2), "kept 1 BatchNorm node verbatim (first 'bn'): a fixed gamma or beta needs the "
                                    "channel count; give the params or --input-shape");
    tu_save(g, out, "mxnet", NULL);
    char *written = tu_slurp(out, NULL);
    assert_non_null(strstr(written, "\"op\": \"BatchNorm\""));
    free(written);
    gir_graph_free(g);
    gir_options_free(o);
    free(out);
    free(p);
}

/* dense (NNVM) and FullyConnected with flatten=False (MXNet) on a matrix
 * whose rank only shape inference knows (a mean over the spatial axes,
 * as the writers write ONNX's ReduceMean + Gemm): read back as Gemm, not
 * kept verbatim (the check could not run the round trip before). */
static void test_dense_after_mean(void **state)
{
    (void)state;
    static const char *const texts[2] = {
        "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(2, 4, 3, 3)\"}, "
        "\"inputs\": []}, "
        "{\"op\": \"mean\", \"name\": \"m\", \"attrs\": {\"axis\": \"(2, 3)\"}, \"inputs\": [[0,0,0]]}, "
        "{\"op\": \"null\", \"name\": \"w\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"b\", \"inputs\": []}, "
        "{\"op\": \"dense\", \"name\": \"fc\", \"attrs\": {\"units\": \"5\"}, "
        "\"inputs\": [[1,0,0],[2,0,0],[3,0,0]]}], \"arg_nodes\": [0,2,3], \"heads\": [[4,0,0]]}",
        "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(2, 4, 3, 3)\"}, "
        "\"inputs\": []}, "
        "{\"op\": \"mean\", \"name\": \"m\", \"attrs\": {\"axis\": \"(2, 3)\"}, \"inputs\": [[0,0,0]]}, "
        "{\"op\": \"null\", \"name\": \"w\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"b\", \"inputs\": []}, "
        "{\"op\": \"FullyConnected\", \"name\": \"fc\", \"attrs\": {\"num_hidden\": \"5\", \"flatten\": \"False\"}, "
        "\"inputs\": [[1,0,0],[2,0,0],[3,0,0]]}], \"arg_nodes\": [0,2,3], \"heads\": [[4,0,0]], "
        "\"attrs\": {\"mxnet_version\": [\"int\", 10901]}}",
    };
    static const char *const names[2] = { "dense_graph.json", "fcnf-symbol.json" };
    for (size_t i = 0; i < 2; i++) {
        char *p = write_tmp(names[i], texts[i]);
        gir_graph *g = load(p);
        const gir_node *fc = node(g, "fc");
        assert_int_equal(fc->op, GIR_OP_Gemm);
        assert_int_equal(gir_node_int(fc, "transB", 0), 1);
        assert_int_equal(tu_count_opaque(g), 0);
        assert_shape(val(g, "w"), "[5,4]");
        assert_shape(gir_graph_output(g, 0), "[2,5]");
        gir_graph_free(g);
        free(p);
    }
}

/* MXNet has erf, NNVM does not: a float32 Erf is written as its rational
 * form (NNVM's clip, arithmetic and division), and refused by name when
 * rewrites are off. */
static void test_erf_nnvm(void **state)
{
    (void)state;
    char *p = write_tmp("erf-symbol.json",
                        "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(2, 3)\"}, "
                        "\"inputs\": []}, {\"op\": \"erf\", \"name\": \"e\", \"inputs\": [[0,0,0]]}], "
                        "\"arg_nodes\": [0], \"heads\": [[1,0,0]], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}");
    gir_graph *g = load(p);
    assert_int_equal(node(g, "e")->op, GIR_OP_Erf);
    char *out = tu_tmp("erf2-symbol.json");
    tu_save(g, out, "mxnet", NULL);
    gir_graph *h = load(out);
    assert_same(g, h, true, true);
    gir_graph_free(h);
    char *nv = tu_tmp("erf_graph.json");
    gir_error err = GIR_ERROR_INIT;
    tu_save(g, nv, "nnvm", NULL);
    gir_graph *back = load(nv);
    size_t erf = 0, div = 0;
    for (size_t i = 0; i < back->n_nodes; i++) {
        erf += back->nodes[i]->op == GIR_OP_Erf;
        div += back->nodes[i]->op == GIR_OP_Div;
    }
    assert_int_equal(erf, 0);
    assert_int_equal(div, 1);
    gir_graph_free(back);
    char *raw = tu_tmp("erf_raw_graph.json");
    gir_options *o = gir_options_new();
    TU_OK(gir_options_set(o, "legalize", "0", &err), &err);
    TU_FAILS(gir_save(g, raw, "nnvm", o, &err), &err, GIR_E_UNSUPPORTED_OP,
             "cannot write as nnvm: Erf (NNVM has no erf operator; its rational form is for float32 only) "
             "(1 node, first 'e')");
    gir_error_clear(&err);
    gir_options_free(o);
    assert_false(gir_path_exists(raw));
    free(raw);
    free(nv);
    free(out);
    gir_graph_free(g);
    free(p);
}

/* MXNet's Pad: (before, after) per axis <-> ONNX's begins then ends, the
 * three modes, written back as read; NNVM has no such mapping. */
static void test_mxnet_pad(void **state)
{
    (void)state;
    char *p = write_tmp("pad-symbol.json",
                        "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": "
                        "\"(1, 2, 5, 6)\"}, \"inputs\": []}, "
                        "{\"op\": \"Pad\", \"name\": \"p1\", \"attrs\": {\"mode\": \"reflect\", \"pad_width\": "
                        "\"(0, 0, 0, 0, 1, 2, 3, 0)\"}, \"inputs\": [[0,0,0]]}, "
                        "{\"op\": \"Pad\", \"name\": \"p2\", \"attrs\": {\"mode\": \"constant\", \"pad_width\": "
                        "\"(0, 0, 0, 0, 0, 1, 1, 0)\", \"constant_value\": \"-2.5\"}, \"inputs\": [[1,0,0]]}], "
                        "\"arg_nodes\": [0], \"heads\": [[2,0,0]], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}");
    gir_graph *g = load(p);
    const gir_node *p1 = node(g, "p1"), *p2 = node(g, "p2");
    assert_int_equal(p1->op, GIR_OP_Pad);
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&p1->attrs, "pads", &v), 8);
    static const int64_t want[8] = { 0, 0, 1, 3, 0, 0, 2, 0 };
    assert_memory_equal(v, want, sizeof want);
    assert_string_equal(gir_attrs_get_string(&p1->attrs, "mode", ""), "reflect");
    assert_true(gir_node_float(p2, "constant_value", 0) == -2.5);
    assert_shape(gir_graph_output(g, 0), "[1,2,9,10]");
    char *out = tu_tmp("pad2-symbol.json");
    tu_save(g, out, "mxnet", NULL);
    char *text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "\"pad_width\": \"(0, 0, 0, 0, 1, 2, 3, 0)\""));
    assert_non_null(strstr(text, "\"constant_value\": \"-2.5\""));
    free(text);
    gir_graph *h = load(out);
    assert_same(g, h, true, true);
    gir_graph_free(h);
    char *nv = tu_tmp("pad_graph.json");
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_save(g, nv, "nnvm", NULL, &err), &err, GIR_E_UNSUPPORTED_OP, "cannot write as nnvm: Pad (2 nodes");
    gir_error_clear(&err);
    /* what MXNet's Pad cannot express */
    gir_node *q = (gir_node *)p2;
    gir_attrs_set_float(g, &q->attrs, "constant_value", -INFINITY, &err);
    TU_FAILS(gir_save(g, out, "mxnet", NULL, &err), &err, GIR_E_UNSUPPORTED_ATTR, "Pad with constant_value -inf");
    gir_error_clear(&err);
    gir_attrs_set_ints(g, &q->attrs, "pads", (const int64_t[]){ 0, 1, 0, 0, 0, 0, 0, 0 }, 8, &err);
    gir_attrs_set_float(g, &q->attrs, "constant_value", 0.0, &err);
    TU_FAILS(gir_save(g, out, "mxnet", NULL, &err), &err, GIR_E_UNSUPPORTED_ATTR, "Pad of the batch or channel axis");
    gir_error_clear(&err);
    free(nv);
    free(out);
    gir_graph_free(g);
    free(p);
}

/* NNVM's pools pad (top, left, bottom, right): asymmetric pads are written
 * as 4 values (2 when symmetric) and read back the same; MXNet's Pooling
 * pads both ends alike, so it refuses them. */
static void test_nnvm_pool_asymmetric(void **state)
{
    (void)state;
    char *p = write_tmp("apool_graph.json",
                        "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": "
                        "\"(1, 2, 7, 8)\"}, \"inputs\": []}, "
                        "{\"op\": \"max_pool2d\", \"name\": \"mp\", \"attrs\": {\"pool_size\": \"(3, 3)\", "
                        "\"strides\": \"(2, 2)\", \"padding\": \"(1, 0, 0, 1)\"}, \"inputs\": [[0,0,0]]}, "
                        "{\"op\": \"avg_pool2d\", \"name\": \"ap\", \"attrs\": {\"pool_size\": \"(2, 2)\", "
                        "\"padding\": \"(1, 1)\"}, \"inputs\": [[1,0,0]]}], "
                        "\"arg_nodes\": [0], \"heads\": [[2,0,0]]}");
    gir_graph *g = load(p);
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&node(g, "mp")->attrs, "pads", &v), 4);
    assert_true(v[0] == 1 && v[1] == 0 && v[2] == 0 && v[3] == 1);
    assert_shape(val(g, "mp"), "[1,2,3,4]");
    char *out = tu_tmp("apool2_graph.json");
    tu_save(g, out, "nnvm", NULL);
    char *text = tu_slurp(out, NULL);
    assert_non_null(strstr(text, "\"padding\": \"(1, 0, 0, 1)\""));
    assert_non_null(strstr(text, "\"padding\": \"(1, 1)\""));
    free(text);
    gir_graph *h = load(out);
    assert_same(g, h, true, false);
    gir_graph_free(h);
    gir_error err = GIR_ERROR_INIT;
    char *mx = tu_tmp("apool-symbol.json");
    TU_FAILS(gir_save(g, mx, "mxnet", NULL, &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "MaxPool with asymmetric pads=[1,0,0,1]");
    gir_error_clear(&err);
    free(mx);
    free(out);
    gir_graph_free(g);
    free(p);
}

static void test_mxnet_legacy(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/mxnet/save_000800.json");
    assert_string_equal(gmeta(g, "source.format"), "mxnet");
    assert_string_equal(gmeta(g, "source.producer"), "MXNet 0.8 or older");
    assert_null(gir_attrs_find(&g->meta, "mxnet.version"));
    assert_int_equal(gir_graph_node_count(g), 10);
    assert_int_equal(tu_count_opaque(g), 0);
    assert_int_equal(tu_count_op(g, "Gemm"), 3);
    assert_int_equal(tu_count_op(g, "Flatten"), 3);
    assert_int_equal(tu_count_op(g, "Relu"), 2);
    assert_int_equal(tu_count_op(g, "BatchNormalization"), 1);
    assert_int_equal(tu_count_op(g, "Softmax"), 1);
    /* The upgrader's auxiliary states; the label is dropped. */
    const gir_value *mm = val(g, "batchnorm0_moving_mean");
    assert_string_equal(gir_attrs_get_string(&mm->meta, "mxnet.synthesized", ""), "1");
    assert_non_null(gir_graph_find_value(g, "batchnorm0_moving_var"));
    assert_null(gir_graph_find_value(g, "softmax_label"));
    assert_int_equal(gir_graph_input_count(g), 11);
    const gir_node *bn = node(g, "batchnorm0");
    assert_int_equal(bn->n_in, 5);
    assert_true(gir_node_float(bn, "epsilon", 0) == 0.001);
    /* fix_gamma=True: the scale is ones, gamma kept aside by name. */
    const gir_value *scale = g->values[bn->in[1]];
    assert_int_equal(scale->kind, GIR_VALUE_CONST);
    assert_shape(scale, "[10]");
    assert_string_equal(gir_attrs_get_string(&bn->meta, "nnvm.ignored_gamma", ""), "batchnorm0_gamma");
    const gir_node *sm = node(g, "softmax");
    assert_int_equal(gir_node_int(sm, "axis", 0), 1);
    assert_int_equal(sm->n_in, 1);
    assert_string_equal(gir_attrs_get_string(&sm->meta, "mxnet.label", ""), "softmax_label");
    assert_string_equal(nn_meta_attr(&sm->meta, "mxnet.label.attrs", "ctx_group"), "stage2");
    /* The legacy "attr" keys ride along. */
    assert_string_equal(nn_meta_attr(&node(g, "fc1")->meta, "mxnet.attrs", "wd_mult"), "0.3");
    assert_string_equal(nn_meta_attr(&node(g, "fc1")->meta, "mxnet.attrs", "num_hidden"), "128");
    assert_shape(val(g, "fc1_weight"), "[128,?]");
    assert_string_equal(note(g, 0), "MXNet 0.8 file: gave 1 BatchNorm node the auxiliary inputs <name>_moving_mean "
                                    "and <name>_moving_var, as MXNet's loader does");
    assert_string_equal(note(g, 1), "dropped the label input of 1 output layer (SoftmaxOutput and the like: "
                                    "inference does not read it; an MXNet writer puts a label variable back)");
    gir_graph_free(g);
}

static void test_mxnet_vgg(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/mxnet/vgg_dnnl_model1.json");
    assert_string_equal(gmeta(g, "source.producer"), "MXNet 1.2.0");
    assert_int_equal(gir_graph_node_count(g), 39);
    assert_int_equal(tu_count_opaque(g), 0);
    assert_int_equal(tu_count_op(g, "Conv"), 16);
    assert_int_equal(tu_count_op(g, "Relu"), 15);
    assert_int_equal(tu_count_op(g, "MaxPool"), 5);
    assert_int_equal(tu_count_op(g, "GlobalAveragePool"), 1);
    assert_int_equal(tu_count_op(g, "Flatten"), 1);
    assert_int_equal(tu_count_op(g, "Softmax"), 1);
    /* No params: every variable is an input; num_filter shapes the weights. */
    assert_int_equal(gir_graph_input_count(g), 33);
    /* weights taken as inputs: their input channels come from the data */
    assert_shape(val(g, "conv5_3_weight"), "[512,512,3,3]");
    assert_shape(val(g, "conv5_3_bias"), "[512]");
    assert_int_equal(gir_node_int(node(g, "pool3"), "ceil_mode", 0), 1);
    assert_int_equal(gir_node_int(node(g, "pool1"), "ceil_mode", 1), 0);
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&node(g, "pool5")->attrs, "pads", &v), 4);
    assert_true(v[0] == 1 && v[3] == 1);
    gir_graph_free(g);
}

static void test_nnvm_lenet(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/nnvm/lenet_nnvm_graph.json");
    assert_string_equal(gmeta(g, "source.format"), "nnvm");
    assert_int_equal(gir_graph_node_count(g), 11);
    assert_int_equal(tu_count_opaque(g), 0);
    assert_int_equal(tu_count_op(g, "Conv"), 2);
    assert_int_equal(tu_count_op(g, "MaxPool"), 2);
    assert_int_equal(tu_count_op(g, "Flatten"), 3);
    assert_int_equal(tu_count_op(g, "Gemm"), 2);
    assert_int_equal(tu_count_op(g, "Relu"), 1);
    assert_int_equal(tu_count_op(g, "Softmax"), 1);
    assert_int_equal(count_kind(g, GIR_VALUE_WEIGHT), 8);
    assert_shape(val(g, "_param_1"), "[20,1,5,5]");
    assert_shape(val(g, "_param_5"), "[500,800]");
    assert_shape(val(g, "_param_8"), "[10]");
    /* "[1L, 1L]" and "True" parsed. */
    const gir_node *p = node(g, "max_pool2d0");
    assert_int_equal(gir_node_int(p, "ceil_mode", 0), 1);
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&p->attrs, "strides", &v), 2);
    assert_true(v[0] == 2 && v[1] == 2);
    assert_int_equal(gir_node_int(node(g, "softmax0"), "axis", 0), -1);
    gir_graph_free(g);
}

static void test_tvm_wrn(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/tvm/wrn_fc.json");
    assert_string_equal(gmeta(g, "source.format"), "tvm");
    assert_string_equal(gmeta(g, "source.producer"), "TVM (NNVM compiler)");
    assert_int_equal(gir_graph_node_count(g), 4);
    assert_int_equal(tu_count_opaque(g), 4);
    assert_int_equal(tu_count_op(g, "tvm_op"), 4);
    const gir_node *n = node(g, "_contrib_conv2d_nchwc0");
    assert_string_equal(gir_node_opaque_format(n), "tvm");
    assert_string_equal(gir_node_string(n, "func_name", ""), "fuse__contrib_conv2d_NCHWc");
    /* Every entry's shape and type from the graph attributes. */
    assert_int_equal(gir_graph_input_count(g), 1);
    assert_shape(val(g, "0"), "[1,80,8,8]");
    assert_shape(val(g, "8_OIHW8i8o"), "[10,10,8,8,8,8]");
    assert_shape(val(g, "relu0_NCHW8c"), "[1,10,8,8,8]");
    assert_shape(val(g, "__mul_scalar__0"), "[1,80]");
    assert_shape(val(g, "dense0"), "[1,10]");
    assert_int_equal(gir_value_dtype(val(g, "dense0")), GIR_DT_F32);
    assert_int_equal(gir_attrs_get_int(&val(g, "0")->meta, "tvm.storage_id", -1), 3);
    assert_int_equal(gir_attrs_get_int(&val(g, "dense0")->meta, "tvm.storage_id", -1), 1);
    assert_int_equal(count_kind(g, GIR_VALUE_WEIGHT), 5);
    assert_shape(val(g, "1"), "[10,80]");
    gir_graph_free(g);
}

static void test_tvm_relay(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/tvm/relay_deploy_graph.json");
    assert_string_equal(gmeta(g, "source.producer"), "TVM (Relay graph executor)");
    assert_string_equal(gmeta(g, "tvm.layout"), "relay");
    assert_int_equal(gir_graph_node_count(g), 32);
    assert_int_equal(tu_count_opaque(g), 32);
    assert_int_equal(gir_graph_input_count(g), 57); /* no params file: all inputs */
    assert_shape(val(g, "data"), "[1,3,112,112]");
    assert_shape(gir_graph_output(g, 0), "[1,1000]");
    assert_int_equal(gir_attrs_get_int(&gir_graph_output(g, 0)->meta, "tvm.storage_id", -1), 58);
    gir_graph_free(g);
}

static void test_tvm_seed003(void **state)
{
    (void)state;
    char *p = tu_testdata("tvm/seed003_graph.json");
    gir_graph *g = load(p);
    free(p);
    assert_string_equal(gmeta(g, "source.format"), "tvm");
    assert_int_equal(gir_graph_node_count(g), 5);
    assert_int_equal(tu_count_op(g, "tvm_op"), 5);
    assert_int_equal(gir_graph_input_count(g), 9);
    assert_shape(val(g, "1"), "[1,1,224,224]");
    assert_shape(val(g, "8"), "[9,32,3,3]");
    assert_shape(val(g, "tvmgen_default_fused_nn_conv2d_expand_dims_add_nn_relu"), "[1,64,224,224]");
    assert_shape(val(g, "tvmgen_default_fused_nn_conv2d_expand_dims_add"), "[1,9,224,224]");
    const gir_value *out = gir_graph_output(g, 0);
    assert_string_equal(gir_value_name(out), "tvmgen_default_fused_reshape_transpose_reshape");
    assert_shape(out, "[1,1,672,672]");
    assert_int_equal(gir_attrs_get_int(&out->meta, "tvm.storage_id", -1), 9);
    assert_int_equal(gir_attrs_get_int(&out->meta, "tvm.device_index", -1), 1);
    /* Attributes verbatim, in file order. */
    const gir_node *n = node(g, "tvmgen_default_fused_nn_conv2d_expand_dims_add_nn_relu_1");
    assert_int_equal(n->attrs.n, 8);
    assert_string_equal(n->attrs.items[0].name, "num_outputs");
    assert_string_equal(n->attrs.items[7].name, "hash");
    assert_string_equal(n->attrs.items[7].u.s, "34d471bc283884cc");
    gir_graph_free(g);
}

/* ---- round trips ----------------------------------------------------------------- */

typedef struct rt_case {
    const char *rel;    /* under shared/ or testdata/ */
    bool testdata;
    const char *fmt;
    const char *out;    /* file name written */
    bool identical;     /* the written graph JSON equals the source byte for byte */
} rt_case;

static const rt_case rt_cases[] = {
    { "realworld/mxnet/lenet-symbol.json", false, "mxnet", "lenet-symbol.json", true },
    { "realworld/mxnet/save_000800.json", false, "mxnet", "save-symbol.json", false },
    { "realworld/mxnet/vgg_dnnl_model1.json", false, "mxnet", "vgg-symbol.json", false },
    { "realworld/nnvm/lenet_nnvm_graph.json", false, "nnvm", "lenet_nnvm_graph.json", true },
    { "realworld/tvm/wrn_fc.json", false, "tvm", "wrn_fc.json", true },
    { "realworld/tvm/relay_deploy_graph.json", false, "tvm", "relay_deploy_graph.json", true },
    { "tvm/seed003_graph.json", true, "tvm", "seed003_graph.json", false },
};

static void test_same_flavour_round_trips(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rt_cases / sizeof *rt_cases; i++) {
        const rt_case *c = &rt_cases[i];
        char *src = c->testdata ? tu_testdata(c->rel) : tu_shared(c->rel);
        gir_graph *a = load(src);
        char *dir = tu_tempdir();
        char *out = tu_join(dir, c->out);
        tu_save(a, out, c->fmt, NULL);
        gir_graph *b = load_opts(out, c->fmt, NULL);
        /* Same ops, attributes, edges, names, format meta and weights. */
        assert_same(a, b, true, true);
        if (c->identical && !tu_files_equal(src, out))
            fail_msg("%s: written graph differs from the source", c->rel);
        /* Writing twice gives the same bytes, params included. */
        char *dir2 = tu_tempdir();
        char *out2 = tu_join(dir2, c->out);
        tu_save(a, out2, c->fmt, NULL);
        assert_true(tu_files_equal(out, out2));
        assert_int_equal(tu_count_entries(dir), tu_count_entries(dir2));
        char *pp = nn_params_path_for(out, strcmp(c->fmt, "mxnet") == 0 ? NN_MXNET : NN_NNVM);
        char *pp2 = nn_params_path_for(out2, strcmp(c->fmt, "mxnet") == 0 ? NN_MXNET : NN_NNVM);
        if (gir_path_exists(pp))
            assert_true(tu_files_equal(pp, pp2));
        free(pp);
        free(pp2);
        gir_graph_free(a);
        gir_graph_free(b);
        tu_rmtree(dir);
        tu_rmtree(dir2);
        free(out);
        free(out2);
        free(dir);
        free(dir2);
        free(src);
    }
}

/* The MXNet writer reproduces MXNet's own params file exactly (V2 arrays,
 * arg: names, the file's order). */
static void test_mxnet_params_identical(void **state)
{
    (void)state;
    gir_graph *a = load_shared("realworld/mxnet/lenet-symbol.json");
    char *out = tu_tmp("ident-symbol.json");
    tu_save(a, out, "mxnet", NULL);
    char *pp = tu_tmp("ident-0000.params");
    char *src = tu_shared("realworld/mxnet/lenet-0001.params");
    assert_true(tu_files_equal(src, pp));
    free(src);
    free(pp);
    free(out);
    gir_graph_free(a);
}

static void test_cross_lenet(void **state)
{
    (void)state;
    /* MXNet -> NNVM -> MXNet */
    gir_graph *a = load_shared("realworld/mxnet/lenet-symbol.json");
    gir_graph *b = round_trip(a, "nnvm", "x_graph.json");
    assert_string_equal(gmeta(b, "source.format"), "nnvm");
    assert_same(a, b, true, false);
    gir_graph *c = round_trip(b, "mxnet", "x-symbol.json");
    assert_same(a, c, true, false);
    assert_int_equal(tu_count_op(c, "Flatten"), 3);
    /* NNVM -> MXNet -> NNVM */
    gir_graph *d = load_shared("realworld/nnvm/lenet_nnvm_graph.json");
    gir_graph *e = round_trip(d, "mxnet", "y-symbol.json");
    assert_same(d, e, true, false);
    gir_graph *f = round_trip(e, "nnvm", "y_graph.json");
    assert_same(d, f, true, false);
    /* The NNVM file came back byte for byte except attribute spelling. */
    gir_graph_free(a);
    gir_graph_free(b);
    gir_graph_free(c);
    gir_graph_free(d);
    gir_graph_free(e);
    gir_graph_free(f);
}

/* ---- mapping cases ------------------------------------------------------------------ */

static const char *mx_misc =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"attrs\": {\"__shape__\": \"(0, 3, 8, 8)\"}, \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"w\", \"inputs\": []},"
    "{\"op\": \"Convolution\", \"name\": \"c\", \"attrs\": {\"kernel\": \"(3,3)\", \"num_filter\": \"4\", "
    "\"no_bias\": \"True\", \"stride\": \"()\", \"pad\": \"[1,1]\", \"workspace\": \"512\"}, \"inputs\": [[0,0,0],[1,0,0]]},"
    "{\"op\": \"LeakyReLU\", \"name\": \"l\", \"inputs\": [[2,0,0]]},"
    "{\"op\": \"_plus_scalar\", \"name\": \"s\", \"attrs\": {\"scalar\": \"1\"}, \"inputs\": [[3,0,0]]},"
    "{\"op\": \"_rminus_scalar\", \"name\": \"r\", \"attrs\": {\"scalar\": \"0.5\"}, \"inputs\": [[4,0,0]]},"
    "{\"op\": \"Concat\", \"name\": \"cat\", \"attrs\": {\"num_args\": \"2\"}, \"inputs\": [[5,0,0],[4,0,0]]},"
    "{\"op\": \"Pooling\", \"name\": \"gp\", \"attrs\": {\"global_pool\": \"True\", \"kernel\": \"(7, 7)\", "
    "\"pool_type\": \"avg\"}, \"inputs\": [[6,0,0]]},"
    "{\"op\": \"Pooling\", \"name\": \"ap\", \"attrs\": {\"kernel\": \"(2, 2)\", \"pool_type\": \"avg\", "
    "\"pooling_convention\": \"full\"}, \"inputs\": [[6,0,0]]},"
    "{\"op\": \"Pooling\", \"name\": \"lp\", \"attrs\": {\"kernel\": \"(2, 2)\", \"pool_type\": \"lp\"}, "
    "\"inputs\": [[6,0,0]]},"
    "{\"op\": \"Reshape\", \"name\": \"rs\", \"attrs\": {\"shape\": \"(0, -3, -2)\"}, \"inputs\": [[8,0,0]]},"
    "{\"op\": \"Dropout\", \"name\": \"d\", \"attrs\": {\"p\": \"0.3\"}, \"inputs\": [[7,0,0]]}"
    "], \"arg_nodes\": [0, 1], \"heads\": [[11,0,0], [9,0,0], [10,0,0]], "
    "\"attrs\": {\"mxnet_version\": [\"int\", 10600], \"is_np_shape\": [\"int\", 0]}}";

static void test_mxnet_mapping(void **state)
{
    (void)state;
    char *p = write_tmp("misc-symbol.json", mx_misc);
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "input-shape", "data:2,3,8,8", &err), &err);
    gir_graph *g = load_opts(p, NULL, o);
    /* input-shape wins over the __shape__ hint (0 = unknown). */
    assert_shape(val(g, "data"), "[2,3,8,8]");
    assert_shape(val(g, "w"), "[4,3,3,3]"); /* completed from the data (weights as inputs) */
    const gir_node *c = node(g, "c");
    assert_int_equal(c->n_in, 2);
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&c->attrs, "strides", &v), 2); /* "()" = 1 each */
    assert_true(v[0] == 1 && v[1] == 1);
    assert_int_equal(gir_attrs_get_ints(&c->attrs, "pads", &v), 4);
    assert_true(v[0] == 1 && v[1] == 1 && v[2] == 1 && v[3] == 1);
    /* LeakyReLU's MXNet default slope, written explicitly. */
    assert_int_equal(node(g, "l")->op, GIR_OP_LeakyRelu);
    assert_true(gir_node_float(node(g, "l"), "alpha", 0) == 0.25);
    /* Scalar operators: a rank-0 constant operand, reversed for _r*. */
    const gir_node *s = node(g, "s");
    assert_int_equal(s->op, GIR_OP_Add);
    const gir_value *k = g->values[s->in[1]];
    assert_int_equal(k->kind, GIR_VALUE_CONST);
    assert_shape(k, "[]");
    assert_true(*(const float *)k->data->data == 1.0f);
    const gir_node *r = node(g, "r");
    assert_int_equal(r->op, GIR_OP_Sub);
    assert_int_equal(g->values[r->in[0]]->kind, GIR_VALUE_CONST);
    /* Concat's default dim is 1. */
    assert_int_equal(gir_node_int(node(g, "cat"), "axis", -7), 1);
    assert_int_equal(node(g, "gp")->op, GIR_OP_GlobalAveragePool);
    const gir_node *ap = node(g, "ap");
    assert_int_equal(ap->op, GIR_OP_AveragePool);
    assert_int_equal(gir_node_int(ap, "ceil_mode", 0), 1);
    assert_int_equal(gir_node_int(ap, "count_include_pad", 0), 1); /* MXNet: None means True */
    /* No exact canonical form: kept verbatim. */
    assert_true(gir_node_is_opaque(node(g, "lp")));
    assert_string_equal(gir_node_op(node(g, "lp")), "Pooling");
    /* Reshape's special codes, resolved from the shape: (2,8,7,7) by
     * (0, -3, -2) is (2, 56, 7). */
    const gir_node *rs = node(g, "rs");
    assert_int_equal(rs->op, GIR_OP_Reshape);
    assert_int_equal(gir_attrs_get_ints(&rs->attrs, "shape", &v), 3);
    assert_true(v[0] == 2 && v[1] == 56 && v[2] == 7);
    assert_true(gir_node_float(node(g, "d"), "ratio", 0) == 0.3);
    /* The round trip writes the source's text back. */
    char *out = tu_tmp("misc2-symbol.json");
    tu_save(g, out, "mxnet", NULL);
    size_t len;
    char *text = tu_slurp(out, &len);
    assert_non_null(strstr(text, "\"scalar\": \"1\""));
    assert_non_null(strstr(text, "\"stride\": \"()\""));
    assert_non_null(strstr(text, "\"pad\": \"[1,1]\""));
    assert_non_null(strstr(text, "\"workspace\": \"512\""));
    assert_non_null(strstr(text, "\"is_np_shape\": [\"int\", 0]"));
    assert_non_null(strstr(text, "\"mxnet_version\": [\"int\", 10600]"));
    assert_null(strstr(text, "\"slope\""));
    free(text);
    gir_graph *h = load_opts(out, NULL, o);
    assert_same(g, h, true, true);
    /* As NNVM: the scalar becomes __add_scalar__; lp pooling cannot go. */
    char *nv = tu_tmp("misc_graph.json");
    TU_FAILS(gir_save(g, nv, "nnvm", NULL, &err), &err, GIR_E_UNSUPPORTED_OP, "cannot write as nnvm: ",
             "Pooling (a mxnet operator kept verbatim) (1 node, first 'lp')");
    gir_error_clear(&err);
    assert_false(gir_path_exists(nv));
    free(nv);
    free(out);
    gir_graph_free(h);
    gir_graph_free(g);
    gir_options_free(o);
    free(p);
}

/* BatchNorm's fix_gamma and eps, the SoftmaxOutput label, FullyConnected
 * with and without flatten, through params. */
static const char *mx_bn =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"fc_weight\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"fc_bias\", \"inputs\": []},"
    "{\"op\": \"FullyConnected\", \"name\": \"fc\", \"attrs\": {\"num_hidden\": \"3\"}, "
    "\"inputs\": [[0,0,0],[1,0,0],[2,0,0]]},"
    "{\"op\": \"null\", \"name\": \"bn_gamma\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"bn_beta\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"bn_moving_mean\", \"inputs\": []},"
    "{\"op\": \"null\", \"name\": \"bn_moving_var\", \"inputs\": []},"
    "{\"op\": \"BatchNorm\", \"name\": \"bn\", \"inputs\": [[3,0,0],[4,0,0],[5,0,0],[6,0,1],[7,0,1]]},"
    "{\"op\": \"null\", \"name\": \"fc2_weight\", \"inputs\": []},"
    "{\"op\": \"FullyConnected\", \"name\": \"fc2\", \"attrs\": {\"num_hidden\": \"2\", \"no_bias\": \"True\", "
    "\"flatten\": \"False\"}, \"inputs\": [[8,0,0],[9,0,0]]},"
    "{\"op\": \"null\", \"name\": \"label\", \"attrs\": {\"__init__\": \"zeros\"}, \"inputs\": []},"
    "{\"op\": \"SoftmaxOutput\", \"name\": \"out\", \"attrs\": {\"grad_scale\": \"2\"}, "
    "\"inputs\": [[10,0,0],[11,0,0]]}"
    "], \"arg_nodes\": [0,1,2,4,5,6,7,9,11], \"heads\": [[12,0,0]], "
    "\"attrs\": {\"mxnet_version\": [\"int\", 10901]}}";

static gir_tensor *f32_tensor(const int64_t *dims, int rank, float base)
{
    gir_shape s = { .rank = rank };
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
    float *p = t->data;
    for (uint64_t i = 0; i < t->nbytes / 4; i++)
        p[i] = base + (float)i * 0.25f;
    return t;
}

static void write_mx_params(const char *path, const char *const *names, gir_tensor **ts, size_t n)
{
    gir_outfile *f;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_outfile_open(path, true, &f, &err), &err);
    gir_param_out *items = calloc(n, sizeof *items);
    for (size_t i = 0; i < n; i++)
        items[i] = (gir_param_out){ names[i], ts[i] };
    TU_OK(gir_params_write(f, GIR_PARAMS_MXNET, items, n, NULL, &err), &err);
    TU_OK(gir_outfile_commit(f, &err), &err);
    free(items);
}

static void test_mxnet_bn_softmax(void **state)
{
    (void)state;
    char *p = write_tmp("bn-symbol.json", mx_bn);
    char *pp = tu_tmp("bn-0007.params");
    static const char *const names[] = { "arg:fc_weight", "arg:fc_bias", "arg:bn_gamma", "arg:bn_beta",
                                         "aux:bn_moving_mean", "aux:bn_moving_var", "arg:fc2_weight" };
    int64_t d_fc[2] = { 3, 4 }, d3[1] = { 3 }, d_fc2[2] = { 2, 3 };
    gir_tensor *ts[7] = { f32_tensor(d_fc, 2, 0), f32_tensor(d3, 1, 1), f32_tensor(d3, 1, 2), f32_tensor(d3, 1, 3),
                          f32_tensor(d3, 1, 4), f32_tensor(d3, 1, 5), f32_tensor(d_fc2, 2, 6) };
    write_mx_params(pp, names, ts, 7);
    for (size_t i = 0; i < 7; i++)
        gir_tensor_unref(ts[i]);
    gir_graph *g = load(p);
    assert_int_equal(tu_count_opaque(g), 0);
    const gir_node *bn = node(g, "bn");
    assert_true(gir_node_float(bn, "epsilon", 0) == 0.001); /* MXNet default, explicit */
    const gir_value *scale = g->values[bn->in[1]];
    assert_int_equal(scale->kind, GIR_VALUE_CONST);
    assert_string_equal(scale->name, "bn_ones");
    const float *ones = scale->data->data;
    assert_true(ones[0] == 1.0f && ones[2] == 1.0f);
    /* The gamma parameter is kept (its data goes back to the file). */
    assert_int_equal(val(g, "bn_gamma")->kind, GIR_VALUE_WEIGHT);
    assert_string_equal(gir_attrs_get_string(&val(g, "bn_moving_var")->meta, "mxnet.param_prefix", ""), "aux");
    /* flatten=False on a matrix: Gemm without Flatten. */
    const gir_node *fc2 = node(g, "fc2");
    assert_int_equal(fc2->op, GIR_OP_Gemm);
    assert_int_equal(fc2->n_in, 2);
    assert_string_equal(g->values[fc2->in[0]]->name, "bn");
    assert_int_equal(tu_count_op(g, "Flatten"), 1);
    assert_null(gir_graph_find_value(g, "label"));
    assert_int_equal(gir_graph_input_count(g), 1);
    /* Same flavour: fix_gamma, the label, flatten=False and versions back. */
    char *out = tu_tmp("bn2-symbol.json");
    tu_save(g, out, "mxnet", NULL);
    size_t len;
    char *text = tu_slurp(out, &len);
    assert_non_null(strstr(text, "\"name\": \"label\", \n      \"attrs\": {\"__init__\": \"zeros\"}"));
    assert_non_null(strstr(text, "\"inputs\": [[3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 1], [7, 0, 1]]"));
    assert_non_null(strstr(text, "\"flatten\": \"False\""));
    assert_null(strstr(text, "fix_gamma"));
    assert_null(strstr(text, "bn_ones"));
    free(text);
    gir_graph *h = load(out);
    assert_same(g, h, true, true);
    char *pp2 = tu_tmp("bn2-0000.params");
    assert_true(tu_files_equal(pp, pp2));
    /* Through NNVM and back: scale=False carries fix_gamma. */
    gir_graph *nv = round_trip(g, "nnvm", "bn_graph.json");
    char *nvtext = tu_tmp("bn_graph.json");
    text = tu_slurp(nvtext, &len);
    assert_non_null(strstr(text, "\"scale\": \"False\""));
    assert_non_null(strstr(text, "\"epsilon\": \"0.001\""));
    assert_non_null(strstr(text, "\"op\": \"softmax\", \n      \"name\": \"out\", \n      \"attrs\": {\"axis\": \"1\"}"));
    free(text);
    free(nvtext);
    assert_same(g, nv, true, false);
    gir_graph_free(nv);
    gir_graph_free(h);
    gir_graph_free(g);
    free(pp2);
    free(out);
    free(pp);
    free(p);
}

static void test_detect(void **state)
{
    (void)state;
    static const struct {
        const char *rel, *fmt;
    } cases[] = {
        { "realworld/mxnet/lenet-symbol.json", "mxnet" },
        { "realworld/mxnet/save_000800.json", "mxnet" },
        { "realworld/mxnet/vgg_dnnl_model1.json", "mxnet" },
        { "realworld/nnvm/lenet_nnvm_graph.json", "nnvm" },
        { "realworld/tvm/wrn_fc.json", "tvm" },
        { "realworld/tvm/relay_deploy_graph.json", "tvm" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = tu_shared(cases[i].rel);
        const char *name, *reason;
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_detect(p, &name, &reason, &err), &err);
        assert_string_equal(name, cases[i].fmt);
        assert_string_equal(reason, "content");
        free(p);
    }
    /* A params file is not claimed as a model. */
    unsigned char head[64];
    size_t n;
    char *p = tu_shared("realworld/tvm/wrn_fc.params");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_read_head(p, head, sizeof head, &n, &err), &err);
    for (size_t i = 0; gir_format_at(i); i++)
        if (gir_format_at(i)->probe)
            assert_true(gir_format_at(i)->probe(head, n, p) < 50);
    free(p);
    nn_flavour fl;
    assert_int_equal(nn_probe((const unsigned char *)"[1, 2]", 6, &fl), 0);
    assert_int_equal(nn_probe((const unsigned char *)"{\"nodes\": [{\"op\": \"conv2d\"", 26, &fl), 90);
    assert_int_equal(fl, NN_NNVM);
    assert_int_equal(nn_probe((const unsigned char *)"{\"nodes\": [{\"op\": \"null\"", 24, &fl), 60);
}

/* ---- bad input ------------------------------------------------------------------------ */

static void expect_json_fails(const char *text, gir_status code, const char *m1, const char *m2, const char *m3)
{
    char *p = write_tmp("bad.json", text);
    expect_load_fails(p, "nnvm", NULL, code, "bad.json", m1, m2 ? m2 : m1);
    (void)m3;
    free(p);
}

static void test_bad_json(void **state)
{
    (void)state;
    expect_json_fails("", GIR_E_UNKNOWN_FORMAT, "file is empty", NULL, NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": [", GIR_E_SYNTAX,
                      "JSON text ends early (truncated file?): 4 containers still open", "line 1:51", NULL);
    expect_json_fails("{\"nodes\": {}, \"arg_nodes\": [], \"heads\": []}", GIR_E_SCHEMA,
                      "\"nodes\" must be an array of nodes, found an object", "/nodes (line 1:11)", NULL);
    expect_json_fails("[1]", GIR_E_SCHEMA, "expected a graph object with nodes, arg_nodes and heads, found an array",
                      NULL, NULL);
    expect_json_fails("{\"nodes\": [], \"heads\": []}", GIR_E_SCHEMA, "the graph has no \"arg_nodes\"", NULL, NULL);
    expect_json_fails("{\"nodes\": [], \"arg_nodes\": [], \"heads\": [], \"extra\": 1}", GIR_E_SCHEMA,
                      "unknown key \"extra\" (a graph has nodes, arg_nodes, node_row_ptr, heads and attrs)",
                      "/extra", NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"Activation\", \"name\": \"a\", \"attrs\": {\"act_type\": 3}, \"inputs\": [[0,0,0]]}],"
                      " \"arg_nodes\": [0], \"heads\": [[1,0,0]]}",
                      GIR_E_SCHEMA, "attribute \"act_type\" must be a string, found the number 3",
                      "/nodes/1/attrs/act_type (line 1:", NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[9,0,0]]}],"
                      " \"arg_nodes\": [0], \"heads\": [[1,0,0]]}",
                      GIR_E_REFERENCE, "entry points at node 9, but the graph has 2 nodes (0..1)", "/nodes/1/inputs/0",
                      NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0,1,0]]}],"
                      " \"arg_nodes\": [0], \"heads\": [[1,0,0]]}",
                      GIR_E_REFERENCE, "entry takes output 1 of variable 'x', which has only output 0",
                      "/nodes/1/inputs/0", NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0,0,0,0]]}],"
                      " \"arg_nodes\": [0], \"heads\": [[1,0,0]]}",
                      GIR_E_SCHEMA, "an entry must be [node, index] or [node, index, version], found an array of 4",
                      NULL, NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0,-1,0]]}],"
                      " \"arg_nodes\": [0], \"heads\": [[1,0,0]]}",
                      GIR_E_SCHEMA, "entry output index must be a non-negative integer, found the number -1",
                      "/nodes/1/inputs/0/1", NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"elemwise_add\", \"name\": \"a\", \"inputs\": [[0,0,0], [2,0,0]]}, "
                      "{\"op\": \"relu\", \"name\": \"b\", \"inputs\": [[1,0,0]]}],"
                      " \"arg_nodes\": [0], \"heads\": [[2,0,0]]}",
                      GIR_E_CYCLE, "the graph has a cycle", "node 'b'", NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"name\": \"y\", \"inputs\": []}],"
                      " \"arg_nodes\": [0], \"heads\": [[0,0,0]]}",
                      GIR_E_DUPLICATE, "duplicate key \"name\" in a JSON object", "line 1:", NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"relu\", \"name\": \"x\", \"inputs\": []}],"
                      " \"arg_nodes\": [0], \"heads\": [[0,0,0]]}",
                      GIR_E_REFERENCE, "arg_nodes lists node 0 ('x'), which is not a variable (op \"relu\")", NULL,
                      NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"conv2d\", \"name\": \"c\", \"attrs\": {\"channels\": \"4\", \"kernel_size\": \"(a, b)\"}, "
                      "\"inputs\": [[0,0,0], [0,0,0]]}], \"arg_nodes\": [0], \"heads\": [[1,0,0]]}",
                      GIR_E_ATTRIBUTE, "conv2d attribute kernel_size=\"(a, b)\" is not an integer tuple",
                      "node 'c'", NULL);
    expect_json_fails("{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                      "{\"op\": \"elemwise_add\", \"name\": \"a\", \"inputs\": [[0,0,0], [1,0,0]]}], "
                      "\"arg_nodes\": [0, 1], \"heads\": [[2,0,0]]}",
                      GIR_E_DUPLICATE, "two variables are named 'x'", "/nodes/1/name", NULL);
}

static void test_bad_tvm(void **state)
{
    (void)state;
#define TVM_BASE(rest)                                                                                          \
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "                                               \
    "{\"op\": \"tvm_op\", \"name\": \"f\", \"attrs\": {\"func_name\": \"f\", \"num_inputs\": \"1\", "                     \
    "\"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0,0,0]]}], "                                       \
    "\"arg_nodes\": [0], \"heads\": [[1,0,0]], " rest "}"
    const char *buf;
    buf = TVM_BASE(
             "\"node_row_ptr\": [0, 1, 3], \"attrs\": {\"dltype\": [\"list_str\", [\"float32\", \"float32\"]], "
             "\"storage_id\": [\"list_int\", [0, 1]], \"shape\": [\"list_shape\", [[1], [1]]]}");
    expect_json_fails(buf, GIR_E_SCHEMA, "node 1 ('f') has 1 output, but node_row_ptr gives it 2",
                      "/node_row_ptr/2", NULL);
    buf = TVM_BASE(
             "\"node_row_ptr\": [0, 1, 2], \"attrs\": {\"dltype\": [\"list_str\", [\"float32\", \"float32\"]], "
             "\"storage_id\": [\"list_int\", [0, 1]]}");
    expect_json_fails(buf, GIR_E_SCHEMA, "a TVM executor graph needs the graph attribute \"shape\" (list_shape)",
                      "/attrs", NULL);
    buf = TVM_BASE(
             "\"node_row_ptr\": [0, 1, 2], \"attrs\": {\"dltype\": [\"list_str\", [\"float32\", \"float32\"]], "
             "\"storage_id\": [\"list_int\", [0, 1]], \"shape\": [\"list_shape\", [[1], [1], [2]]]}");
    expect_json_fails(buf, GIR_E_SCHEMA,
                      "graph attribute \"shape\" must list 2 entries (one per node output), found an array of 3",
                      "/attrs/shape/1", NULL);
    buf = TVM_BASE(
             "\"node_row_ptr\": [0, 1, 2], \"attrs\": {\"dltype\": [\"list_str\", [\"float32\", \"float32\"]], "
             "\"storage_id\": [\"list_int\", [0, 1]], \"shape\": [\"list_shape\", [[1], [-1]]]}");
    expect_json_fails(buf, GIR_E_SHAPE, "shape entries must be shapes of non-negative integers", "/attrs/shape/1/1",
                      NULL);
    const char *bad_op = "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, "
                         "{\"op\": \"tvm_op\", \"name\": \"f\", \"attrs\": {\"func_name\": \"f\", \"num_inputs\": \"2\", "
                         "\"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0,0,0]]}], "
                         "\"arg_nodes\": [0], \"heads\": [[1,0,0]], \"node_row_ptr\": [0, 1, 2]}";
    expect_json_fails(bad_op, GIR_E_ATTRIBUTE, "tvm_op attribute num_inputs=\"2\" is not the number of inputs (1)",
                      "node 'f'", NULL);
}

static void test_bad_params(void **state)
{
    (void)state;
    char *graph = tu_shared("realworld/mxnet/lenet-symbol.json");
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    /* Bad magic. */
    char *bad = write_tmp("bad.params", "this is not a parameters file at all");
    TU_OK(gir_options_set(o, "params", bad, &err), &err);
    expect_load_fails(graph, NULL, o, GIR_E_PARAMS, "bad.params: byte 0: not a parameters file", NULL, NULL);
    /* Short data: the real file cut inside its last array. */
    char *src = tu_shared("realworld/mxnet/lenet-0001.params");
    size_t len;
    char *data = tu_slurp(src, &len);
    char *cut = tu_tmp("cut.params");
    assert_true(tu_write(cut, data, 15050));
    TU_OK(gir_options_set(o, "params", cut, &err), &err);
    expect_load_fails(graph, NULL, o, GIR_E_PARAMS,
                      "cut.params: byte 15032: file ends inside the data of array 7: 40 bytes needed, 18 left",
                      NULL, NULL);
    free(data);
    free(cut);
    free(src);
    /* A parameter that matches no variable. */
    char *extra = tu_tmp("extra.params");
    static const char *const names[] = { "arg:hybridsequential0_conv0_bias", "arg:nothing_like_it" };
    int64_t d5[1] = { 5 };
    gir_tensor *ts[2] = { f32_tensor(d5, 1, 0), f32_tensor(d5, 1, 0) };
    write_mx_params(extra, names, ts, 2);
    gir_tensor_unref(ts[0]);
    gir_tensor_unref(ts[1]);
    TU_OK(gir_options_set(o, "params", extra, &err), &err);
    expect_load_fails(graph, NULL, o, GIR_E_PARAMS, "extra.params: byte ",
                      "parameter 'arg:nothing_like_it' matches no variable of the graph", NULL);
    free(extra);
    /* Shapes that disagree with the graph's __shape__. */
    char *wrong = tu_tmp("wrong.params");
    static const char *const names2[] = { "arg:hybridsequential0_conv0_bias" };
    int64_t d6[1] = { 6 };
    gir_tensor *t6 = f32_tensor(d6, 1, 0);
    write_mx_params(wrong, names2, &t6, 1);
    gir_tensor_unref(t6);
    TU_OK(gir_options_set(o, "params", wrong, &err), &err);
    expect_load_fails(graph, NULL, o, GIR_E_SHAPE,
                      "parameter 'arg:hybridsequential0_conv0_bias' has shape [6], but the graph declares [5]", NULL,
                      NULL);
    free(wrong);
    /* An unnamed list cannot be matched. */
    char *legacy = tu_shared("realworld/mxnet/legacy_ndarray.v0");
    TU_OK(gir_options_set(o, "params", legacy, &err), &err);
    expect_load_fails(graph, NULL, o, GIR_E_PARAMS, "the parameters file has no names", NULL, NULL);
    /* A params file given as the model. */
    expect_load_fails(legacy, NULL, NULL, GIR_E_SYNTAX,
                      "this is an MXNet parameters file, not a graph JSON; give the graph JSON and pass the params "
                      "with --params",
                      NULL, NULL);
    char *tvmp = tu_shared("realworld/tvm/wrn_fc.params");
    expect_load_fails(tvmp, "tvm", NULL, GIR_E_SYNTAX, "this is a TVM parameters file, not a graph JSON", NULL, NULL);
    free(tvmp);
    free(legacy);
    free(bad);
    free(graph);
    gir_options_free(o);
}

static void test_companions(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    char *src = tu_shared("realworld/mxnet/lenet-symbol.json");
    size_t len;
    char *text = tu_slurp(src, &len);
    char *g = tu_join(dir, "m-symbol.json");
    assert_true(tu_write(g, text, len));
    char *p1 = tu_join(dir, "m-0001.params"), *p2 = tu_join(dir, "m-0012.params");
    char *psrc = tu_shared("realworld/mxnet/lenet-0001.params");
    size_t plen;
    char *pdata = tu_slurp(psrc, &plen);
    assert_true(tu_write(p1, pdata, plen));
    gir_graph *gr = load(g);
    assert_int_equal(count_kind(gr, GIR_VALUE_WEIGHT), 8);
    gir_graph_free(gr);
    assert_true(tu_write(p2, pdata, plen));
    expect_load_fails(g, NULL, NULL, GIR_E_ARGUMENT,
                      "2 parameter files match the graph (m-0001.params, m-0012.params); choose one with --params", NULL,
                      NULL);
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "params", p2, &err), &err);
    gr = load_opts(g, NULL, o);
    assert_int_equal(count_kind(gr, GIR_VALUE_WEIGHT), 8);
    gir_graph_free(gr);
    gir_options_free(o);
    /* Naming rules. */
    char *s;
    TU_OK(nn_find_params("/nonexistent/x_graph.json", &s, &err), &err);
    assert_null(s);
    char *w1 = nn_params_path_for("/a/deploy_graph.json", NN_TVM);
    assert_string_equal(w1, "/a/deploy_param.params");
    char *w2 = nn_params_path_for("/a/m-symbol.json", NN_MXNET);
    assert_string_equal(w2, "/a/m-0000.params");
    char *w3 = nn_params_path_for("/a/m.json", NN_NNVM);
    assert_string_equal(w3, "/a/m.params");
    char *w4 = nn_params_path_for("/a/m.graph", NN_TVM);
    assert_string_equal(w4, "/a/m.params");
    free(w1);
    free(w2);
    free(w3);
    free(w4);
    free(pdata);
    free(psrc);
    free(p1);
    free(p2);
    free(g);
    free(text);
    free(src);
    tu_rmtree(dir);
    free(dir);
}

/* An executor graph is an NNVM graph: written as nnvm it stays one. */
static void test_executor_as_nnvm(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/tvm/wrn_fc.json");
    char *out = tu_tmp("exec_graph.json");
    tu_save(g, out, "nnvm", NULL);
    char *src = tu_shared("realworld/tvm/wrn_fc.json");
    assert_true(tu_files_equal(src, out));
    gir_graph *h = load(out);
    assert_same(g, h, true, true);
    gir_graph_free(h);
    gir_graph_free(g);
    free(src);
    free(out);
}

static void test_writer_refusals(void **state)
{
    (void)state;
    /* The executor flavour runs only compiled functions. */
    gir_graph *g = load_shared("realworld/mxnet/lenet-symbol.json");
    char *dir = tu_tempdir();
    char *out = tu_join(dir, "x_graph.json");
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_save(g, out, "tvm", NULL, &err), &err, GIR_E_UNSUPPORTED_OP, "cannot write as tvm: Conv (not a "
             "compiled tvm_op function; write nnvm or mxnet) (2 nodes, first 'hybridsequential0_conv0_fwd')",
             "Gemm (");
    gir_error_clear(&err);
    assert_int_equal(tu_count_entries(dir), 0);
    /* An existing output stays unless force=1. */
    assert_true(tu_write(out, "keep", 4));
    TU_FAILS(gir_save(g, out, "nnvm", NULL, &err), &err, GIR_E_EXISTS, "output exists");
    gir_error_clear(&err);
    size_t len;
    char *text = tu_slurp(out, &len);
    assert_int_equal(len, 4);
    free(text);
    assert_int_equal(tu_count_entries(dir), 1);
    gir_options *o = gir_options_new();
    TU_OK(gir_options_set(o, "force", "1", &err), &err);
    tu_save(g, out, "nnvm", o);
    assert_int_equal(tu_count_entries(dir), 2); /* x_graph.json, x_param.params */
    gir_options_free(o);
    /* Every construct NNVM cannot express, at once. */
    gir_node *c = (gir_node *)node(g, "hybridsequential0_conv1_fwd");
    int64_t pads[4] = { 0, 0, 1, 1 };
    gir_attrs_set_ints(g, &c->attrs, "pads", pads, 4, &err);
    gir_node *fl = (gir_node *)node(g, "hybridsequential0_flatten0_flatten0");
    gir_attrs_set_int(g, &fl->attrs, "axis", 2, &err);
    gir_node *r = (gir_node *)node(g, "hybridsequential0_dense0_relu_fwd");
    r->op = GIR_OP_Erf;
    char *out2 = tu_join(dir, "y_graph.json");
    TU_FAILS(gir_save(g, out2, "nnvm", NULL, &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "cannot write as nnvm: Conv with asymmetric pads=[0,0,1,1] (1 node, first 'hybridsequential0_conv1_fwd'); "
             "Flatten with axis=2 (1 node, first 'hybridsequential0_flatten0_flatten0'); rewrites tried");
    assert_null(strstr(err.message, "Erf")); /* rewritten as its rational form */
    gir_error_clear(&err);
    assert_int_equal(tu_count_entries(dir), 2);
    free(out2);
    free(out);
    tu_rmtree(dir);
    free(dir);
    gir_graph_free(g);
}

/* ---- the fast path (read_raw_fast.c) against the DOM path -------------------------------- */

/* Reads path both ways (the fast path when it takes the file, the DOM
 * path alone): the same status and error, or graphs without a difference
 * that write the same bytes.  Returns whether the fast path read it. */
static bool same_both_ways(const char *path, nn_flavour hint)
{
    gir_graph *gf = NULL, *gr = NULL;
    gir_error ef = GIR_ERROR_INIT, er = GIR_ERROR_INIT;
    bool fast = false;
    gir_status sf = nn_read_ex(path, NULL, hint, NN_READ_AUTO, &fast, &gf, &ef);
    gir_status sr = nn_read_ex(path, NULL, hint, NN_READ_REFERENCE, NULL, &gr, &er);
    char *mf = sf ? gir_error_format(&ef) : NULL, *mr = sr ? gir_error_format(&er) : NULL;
    if (sf != sr || (sf && strcmp(mf, mr) != 0))
        fail_msg("%s: fast path %d '%s', DOM path %d '%s'", path, sf, mf ? mf : "", sr, mr ? mr : "");
    if (!sf) {
        assert_same_in(path, gf, gr, true, true);
        gir_error e = GIR_ERROR_INIT;
        char *of = tu_tmp("fast_out.json"), *orr = tu_tmp("ref_out.json");
        const char *fmt = hint == NN_TVM ? "tvm" : hint == NN_MXNET ? "mxnet" : "nnvm";
        gir_options *wo = gir_options_new();
        TU_OK(gir_options_set(wo, "force", "1", &e), &e);
        /* Written the same (or refused the same: some graphs have no
         * counterpart in the flavour). */
        gir_error wef = GIR_ERROR_INIT, wer = GIR_ERROR_INIT;
        gir_status wf = gir_save(gf, of, fmt, wo, &wef);
        gir_status wr = gir_save(gr, orr, fmt, wo, &wer);
        assert_int_equal(wf, wr);
        if (wf) {
            assert_string_equal(wef.message, wer.message);
        } else {
            assert_true(tu_files_equal(of, orr));
        }
        gir_error_clear(&wef);
        gir_error_clear(&wer);
        gir_options_free(wo);
        free(of);
        free(orr);
    }
    free(mf);
    free(mr);
    gir_error_clear(&ef);
    gir_error_clear(&er);
    gir_graph_free(gf);
    gir_graph_free(gr);
    return fast;
}

static void test_fast_real_files(void **state)
{
    (void)state;
    static const struct {
        const char *rel;
        nn_flavour hint;
        bool testdata;
    } files[] = {
        { "realworld/mxnet/lenet-symbol.json", NN_MXNET, false },
        { "realworld/mxnet/save_000800.json", NN_MXNET, false },
        { "realworld/mxnet/vgg_dnnl_model1.json", NN_MXNET, false },
        { "realworld/nnvm/lenet_nnvm_graph.json", NN_NNVM, false },
        { "realworld/tvm/relay_deploy_graph.json", NN_TVM, false },
        { "realworld/tvm/wrn_fc.json", NN_TVM, false },
        { "tvm/seed003_graph.json", NN_TVM, true },
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *p = files[i].testdata ? tu_testdata(files[i].rel) : tu_shared(files[i].rel);
        /* Every real file is ordinary: the fast path reads each. */
        if (!same_both_ways(p, files[i].hint))
            fail_msg("%s: the fast path gave up", p);
        free(p);
    }
}

/* A real file cut at many places: the same error both ways. */
static void test_fast_truncated(void **state)
{
    (void)state;
    const char *rels[] = { "realworld/mxnet/lenet-symbol.json", "realworld/tvm/wrn_fc.json" };
    for (size_t r = 0; r < 2; r++) {
        char *src = tu_shared(rels[r]);
        size_t len;
        char *text = tu_slurp(src, &len);
        assert_non_null(text);
        char *cut = tu_tmp("cut.json");
        size_t step = len / 150 + 1;
        for (size_t n = 1; n < len; n += (n < 64 || len - n < 64) ? 1 : step) {
            assert_true(tu_write(cut, text, n));
            assert_false(same_both_ways(cut, NN_MXNET));
        }
        free(cut);
        free(text);
        free(src);
    }
}

/* Real files with small random edits (a byte replaced by, or a byte
 * inserted from, the bytes that matter to JSON and to the readers; a byte
 * deleted; a short span repeated), from a fixed seed: the same outcome
 * both ways, whichever path reads them. */
static void test_fast_mutants(void **state)
{
    (void)state;
    static const char bytes[] = ",[]{}\":0123456789-+.eE \n\t\\u/xa";
    const char *rels[] = { "realworld/mxnet/lenet-symbol.json", "realworld/mxnet/save_000800.json",
                           "realworld/tvm/wrn_fc.json" };
    uint64_t x = 0x9E3779B97F4A7C15u; /* xorshift64 state */
    size_t fast = 0, total = 0;
    for (size_t r = 0; r < sizeof rels / sizeof *rels; r++) {
        char *src = tu_shared(rels[r]);
        size_t len;
        char *text = tu_slurp(src, &len);
        assert_non_null(text);
        char *buf = malloc(len + 32);
        assert_non_null(buf);
        char *path = tu_tmp("mutant.json");
        for (int m = 0; m < 250; m++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t at = (size_t)(x >> 8) % len, n = len;
            char b = bytes[(x >> 40) % (sizeof bytes - 1)];
            memcpy(buf, text, len);
            switch (x % 4) {
            case 0: buf[at] = b; break;
            case 1:
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = b;
                n++;
                break;
            case 2:
                memmove(buf + at, buf + at + 1, len - at - 1);
                n--;
                break;
            default: {
                size_t span = 1 + (x >> 20) % 16;
                if (span > len - at)
                    span = len - at;
                memmove(buf + at + span, buf + at, len - at);
                n += span;
                break;
            }
            }
            assert_true(tu_write(path, buf, n));
            fast += same_both_ways(path, r == 2 ? NN_TVM : NN_MXNET);
            total++;
        }
        free(path);
        free(buf);
        free(text);
        free(src);
    }
    /* Some edits leave a file the fast path reads (a digit for a digit,
     * a space more); most it gives up on. */
    print_message("fast path read %zu of %zu mutants\n", fast, total);
    assert_true(fast > 0 && fast < total);
}

/* Malformed and unusual texts: the same outcome both ways.  fast: whether
 * the fast path reads the structure (then fails later, or succeeds). */
static void test_fast_variants(void **state)
{
    (void)state;
#define X "{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}"
#define TAIL "], \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}"
    static const struct {
        const char *text;
        bool fast;
    } cases[] = {
        /* read by the fast path */
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, true },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0]]}" TAIL, true },
        { "{\"heads\": [[1, 0, 0]], \"arg_nodes\": [0], \"nodes\": [" X
          ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}]}", true },
        { "{\"nodes\": [" X ", {\"op\": \"Activation\", \"name\": \"a\", \"param\": {\"act_type\": \"relu\"}, "
          "\"attr\": {\"act_type\": \"tanh\", \"ctx\": \"cpu\"}, \"inputs\": [[0, 0]], \"backward_source_id\": -1}" TAIL,
          true },
        { "{\"nodes\": [" X ", {\"op\": \"re\\u006cu\", \"name\": \"a\\\"b\", \"inputs\": [[0, 0, 0]], "
          "\"control_deps\": [], \"subgraphs\": []}" TAIL, true },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"node_row_ptr\": [0, 1, 2], \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}",
          true },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"node_row_ptr\": [0, 1], \"heads\": [[1, 0, 0]]}", true },
        { "{\"nodes\": [" X " , {\"op\" :\"relu\"\t,\r\n\"name\": \"a\", \"attrs\": { }, \"inputs\": [ [ 0 , 0 , 0 ] ] } ], "
          "\"arg_nodes\": [ 0 ], \"heads\": [ [1,0,0] ] , \"node_row_ptr\": [ 0,1 , 2 ] }", true },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"backward_source_id\": -0}" TAIL, true },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 4294967295]]}" TAIL, true },
        /* read by the fast path, failing later (mapping, options, attributes) */
        { "{\"nodes\": [" X ", {\"op\": \"Activation\", \"name\": \"a\", \"attrs\": {\"act_type\": \"nope\"}, "
          "\"inputs\": [[0, 0, 0]]}" TAIL, true },
        { "{\"nodes\": [" X ", {\"op\": \"Convolution\", \"name\": \"c\", \"attrs\": {\"kernel\": \"(a, b)\", "
          "\"num_filter\": \"4\"}, \"inputs\": [[0, 0, 0]]}" TAIL, true },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", \"x\"]}}", true },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 3, 0]]}", true },
        { "{\"nodes\": [" X ", {\"op\": \"no_such_op\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, true },
        /* given to the DOM path */
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL " x", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], \"op\": \"relu\"}" TAIL,
          false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], \"extra\": 1}" TAIL,
          false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL ", \"x\": 1}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"nodes\": [], "
          "\"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}", false },
        { "{\"nodes\": [" X ", {\"op\": 3, \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\\u0000b\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"attrs\": {\"k\\u0000\": \"v\"}}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"attrs\": {\"k\": \"v\", \"k\": \"w\"}}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"attr\": {\"k\": \"v\"}, "
          "\"param\": {\"k\": \"w\", \"k\": \"u\"}, \"inputs\": [[0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"attrs\": {\"k\": 1}}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[2, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 1, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 1.0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 65535, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 4294967296]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[1, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": {}}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\"}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"control_deps\": [0]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"subgraphs\": [{}]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"backward_source_id\": 1.5}" TAIL, false },
        { "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": [[0, 0, 0]]}, "
          "{\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [1], "
          "\"heads\": [[1, 0, 0]]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"node_row_ptr\": [0, \"1\", 2]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"attrs\": {\"a\": [\"int\", 1], \"a\": [\"int\", 2]}}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"attrs\": {\"a\": 1}}", false },
        { "{\"nodes\": [" X ", {\"op\": \"add\", \"name\": \"a\", \"inputs\": [[0, 0, 0], [2, 0, 0]]}, "
          "{\"op\": \"relu\", \"name\": \"b\", \"inputs\": [[1, 0, 0]]}], \"arg_nodes\": [0], \"heads\": [[2, 0, 0]]}",
          false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]} // c\n" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"\\ud800\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL "\f", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0,]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[00, 0, 0]]}" TAIL, false },
        /* a separator missing at each place the fast path expects one */
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\" \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\" \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X " {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"attrs\": {\"k\": \"v\" \"j\": \"w\"}}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"attrs\": {\"k\" \"v\"}}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0 0], "
          "\"heads\": [[1, 0, 0]]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0 0]]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"node_row_ptr\": [0 1, 2]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 01]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 1e0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0] [0, 0, 0]]}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]],}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]},]"
          ", \"arg_nodes\": [0], \"heads\": [[1, 0, 0]]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"attrs\": {\"k\": \"v\",}}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]], "
          "\"backward_source_id\": -}" TAIL, false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"node_row_ptr\": [0, 1, 99999999999999999999]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]], \"node_row_ptr\": [0, -1, 2]}", false },
        { "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], "
          "\"heads\": [[1, 0, 0]]", false },
        { "[]", false },
        { "{}", false },
    };
    char *path = tu_tmp("variant.json");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_true(tu_write(path, cases[i].text, strlen(cases[i].text)));
        /* As NNVM too: the legacy MXNet layout decides the flavour then. */
        if (same_both_ways(path, NN_MXNET) != cases[i].fast || same_both_ways(path, NN_NNVM) != cases[i].fast)
            fail_msg("case %zu: expected the fast path %s: %s", i, cases[i].fast ? "to read it" : "to give up",
                     cases[i].text);
    }
    /* Non-UTF-8 bytes (the reader does not check strings' UTF-8), deep
     * nesting in an attribute and in the graph attributes. */
    static const char bad8[] = "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\xff\xfe\", \"inputs\": [[0, 0, 0]]}" TAIL;
    assert_true(tu_write(path, bad8, strlen(bad8)));
    assert_true(same_both_ways(path, NN_MXNET));
    for (int where = 0; where < 2; where++) {
        gir_buf b = GIR_BUF_INIT;
        gir_buf_puts(&b, "{\"nodes\": [" X ", {\"op\": \"relu\", \"name\": \"a\", \"inputs\": [[0, 0, 0]]");
        if (where == 0)
            gir_buf_puts(&b, ", \"attrs\": {\"k\": ");
        else
            gir_buf_puts(&b, "}], \"arg_nodes\": [0], \"heads\": [[1, 0, 0]], \"attrs\": {\"k\": [\"x\", ");
        for (int d = 0; d < 300; d++)
            gir_buf_putc(&b, '[');
        for (int d = 0; d < 300; d++)
            gir_buf_putc(&b, ']');
        gir_buf_puts(&b, where == 0 ? "}}" TAIL : "]}}");
        assert_true(tu_write(path, b.data, b.len));
        assert_false(same_both_ways(path, NN_MXNET));
        gir_buf_free(&b);
    }
    free(path);
#undef X
#undef TAIL
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mxnet_lenet),
        cmocka_unit_test(test_mxnet_legacy),
        cmocka_unit_test(test_inferred_shapes),
        cmocka_unit_test(test_bn_pending),
        cmocka_unit_test(test_dense_after_mean),
        cmocka_unit_test(test_erf_nnvm),
        cmocka_unit_test(test_mxnet_pad),
        cmocka_unit_test(test_nnvm_pool_asymmetric),
        cmocka_unit_test(test_mxnet_vgg),
        cmocka_unit_test(test_nnvm_lenet),
        cmocka_unit_test(test_tvm_wrn),
        cmocka_unit_test(test_tvm_relay),
        cmocka_unit_test(test_tvm_seed003),
        cmocka_unit_test(test_same_flavour_round_trips),
        cmocka_unit_test(test_mxnet_params_identical),
        cmocka_unit_test(test_cross_lenet),
        cmocka_unit_test(test_mxnet_mapping),
        cmocka_unit_test(test_mxnet_bn_softmax),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_bad_json),
        cmocka_unit_test(test_bad_tvm),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_companions),
        cmocka_unit_test(test_executor_as_nnvm),
        cmocka_unit_test(test_writer_refusals),
        cmocka_unit_test(test_fast_real_files),
        cmocka_unit_test(test_fast_truncated),
        cmocka_unit_test(test_fast_mutants),
        cmocka_unit_test(test_fast_variants),
        cmocka_unit_test(test_attr_text),
        cmocka_unit_test(test_shared_pairs),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
