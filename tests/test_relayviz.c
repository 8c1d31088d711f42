/* RelayViz JSON: the seed's node examples, round trips (params companion
 * and embedded Consts), composites, refusals, malformed files, float bits,
 * and the Graphviz DOT emitter behind `graphconv draw`. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/format.h"
#include "formats/relayviz/relayviz.h"
#include "io/dot.h"
#include "passes/diff.h"
#include "passes/passes.h"

/* ---- helpers ------------------------------------------------------------------ */

static gir_graph *load_opts(const char *path, const gir_options *o)
{
    return tu_load(path, "relayviz", o);
}

static gir_graph *load(const char *path)
{
    return load_opts(path, NULL);
}

static gir_graph *load_testdata(const char *name)
{
    char *p = tu_testdata(name);
    gir_graph *g = load(p);
    free(p);
    return g;
}

/* Asserts a and b are the same graph with the same weights (names aside). */
static void assert_same(const gir_graph *a, const gir_graph *b)
{
    tu_assert_same(a, b, false, false, "read back");
}

static const gir_node *node_of(const gir_graph *g, gir_op op, size_t nth)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == op && nth-- == 0)
            return g->nodes[i];
    fail_msg("no %s node", gir_op_name(op));
    return NULL;
}

static void assert_ints(const gir_node *n, const char *name, size_t count, ...)
{
    const int64_t *v;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, name, &v);
    if (k != (ptrdiff_t)count)
        fail_msg("%s of %s has %td values, want %zu", name, n->name, k, count);
    va_list ap;
    va_start(ap, count);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(v[i], va_arg(ap, int));
    va_end(ap);
}

static const gir_value *in_of(const gir_graph *g, const gir_node *n, size_t i)
{
    return gir_in(g, n, i);
}

static void assert_shape(const gir_value *v, int rank, ...)
{
    assert_int_equal(v->shape.rank, rank);
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(v->shape.dims[i], va_arg(ap, int));
    va_end(ap);
}

/* Asserts two files are byte-identical, showing the first difference. */
static void assert_same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = tu_slurp(a, &la), *y = tu_slurp(b, &lb);
    assert_non_null(x);
    assert_non_null(y);
    if (la != lb || memcmp(x, y, la) != 0) {
        size_t i = 0, line = 1, start = 0;
        while (i < la && i < lb && x[i] == y[i]) {
            if (x[i] == '\n') {
                line++;
                start = i + 1;
            }
            i++;
        }
        print_error("%s and %s differ at line %zu:\n%.200s\n---\n%.200s\n", a, b, line, x + start, y + start);
        fail();
    }
    free(x);
    free(y);
}

/* Writes g (both ways), reads it back: the same graph, and writing the
 * result again gives the same bytes.  Returns the embedded file's text. */
static char *roundtrip(const gir_graph *g, const char *stem)
{
    char name[128];
    char *out = NULL;
    for (int embed = 0; embed < 2; embed++) {
        snprintf(name, sizeof name, "%s%s.relayviz.json", stem, embed ? "_embed" : "");
        char *p1 = tu_tmp(name);
        snprintf(name, sizeof name, "%s%s_again.relayviz.json", stem, embed ? "_embed" : "");
        char *p2 = tu_tmp(name);
        gir_options *o = tu_options("embed-weights", embed ? "1" : "0", "force", "1", NULL);
        tu_save(g, p1, "relayviz", o);
        gir_graph *back = load(p1);
        assert_same(g, back);
        tu_save(back, p2, "relayviz", o);
        assert_same_file(p1, p2);
        if (!embed) {
            /* The params companions are byte-identical too. */
            char *q1 = gir_relayviz_params_path(p1), *q2 = gir_relayviz_params_path(p2);
            assert_int_equal(gir_path_exists(q1), gir_path_exists(q2));
            if (gir_path_exists(q1))
                assert_true(tu_files_equal(q1, q2));
            free(q1);
            free(q2);
        } else {
            out = tu_slurp(p1, NULL);
        }
        gir_graph_free(back);
        gir_options_free(o);
        free(p1);
        free(p2);
    }
    return out;
}

/* ---- building canonical graphs -------------------------------------------------- */

typedef struct gb {
    gir_graph *g;
    unsigned seed;
} gb;

static gb gb_new(void)
{
    gb b = { NULL, 12345u };
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_new(&b.g, &err), &err);
    return b;
}

static int32_t gb_input(gb *b, const char *name, int rank, const int64_t *dims)
{
    int32_t v;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_add_value(b->g, name, GIR_VALUE_INPUT, &v, &err), &err);
    b->g->values[v]->dtype = GIR_DT_F32;
    b->g->values[v]->shape.rank = rank;
    memcpy(b->g->values[v]->shape.dims, dims, (size_t)rank * sizeof *dims);
    TU_OK(gir_graph_add_input(b->g, v, &err), &err);
    return v;
}

static float gb_rand(gb *b)
{
    b->seed = b->seed * 1103515245u + 12345u;
    return (float)((b->seed >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static int32_t gb_weight(gb *b, const char *name, int rank, const int64_t *dims)
{
    gir_shape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
    float *f = t->data;
    for (uint64_t i = 0; i < t->nbytes / 4; i++)
        f[i] = gb_rand(b);
    int32_t v;
    TU_OK(gir_graph_add_value(b->g, name, GIR_VALUE_WEIGHT, &v, &err), &err);
    gir_value_set_data(b->g->values[v], t);
    gir_tensor_unref(t);
    return v;
}

/* A node with the given inputs (-1 omitted) and n_out outputs named
 * name, name_1, ...; attributes are set by the caller, then gb_done. */
static gir_node *gb_node(gb *b, const char *name, gir_op op, size_t n_in, const int32_t *in, size_t n_out)
{
    gir_node *n;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_add_node(b->g, name, op, n_in, n_out, &n, &err), &err);
    for (size_t i = 0; i < n_in; i++)
        n->in[i] = in[i];
    for (size_t k = 0; k < n_out; k++) {
        char vn[96];
        if (k == 0)
            snprintf(vn, sizeof vn, "%s", name);
        else
            snprintf(vn, sizeof vn, "%s_%zu", name, k);
        TU_OK(gir_node_make_output(b->g, n, k, vn, &err), &err);
    }
    return n;
}

static int32_t gb_done(gb *b, gir_node *n)
{
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_op_infer(b->g, n, &err), &err);
    return n->out[0];
}

/* What every reader does last: defaults filled, checked, shapes inferred. */
static void gb_finish(gir_graph *g)
{
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
}

#define I64(...) ((const int64_t[]){ __VA_ARGS__ })
#define SET_INTS(b, n, name, ...) \
    gir_attrs_set_ints((b)->g, &(n)->attrs, name, I64(__VA_ARGS__), sizeof(I64(__VA_ARGS__)) / sizeof(int64_t), NULL)

/* ---- the seed's node examples ------------------------------------------------------ */

static void test_seed_function_var_call_op(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/function_call.relayviz.json");
    assert_int_equal(g->n_nodes, 2);
    assert_int_equal(g->n_inputs, 3); /* no params file: every Var param is an input */
    const gir_node *conv = node_of(g, GIR_OP_Conv, 0);
    assert_int_equal(conv->n_in, 3); /* nn.bias_add folded into the bias input */
    assert_string_equal(in_of(g, conv, 0)->name, "data");
    assert_string_equal(in_of(g, conv, 1)->name, "conv_weight");
    assert_string_equal(in_of(g, conv, 2)->name, "conv_bias");
    assert_ints(conv, "strides", 2, 2, 2);
    assert_ints(conv, "pads", 4, 1, 1, 1, 1); /* 2 values: top/bottom, left/right */
    assert_ints(conv, "kernel_shape", 2, 3, 3);
    assert_ints(conv, "dilations", 2, 1, 1);
    assert_int_equal(gir_node_int(conv, "group", 0), 1);
    const gir_node *relu = node_of(g, GIR_OP_Relu, 0);
    assert_int_equal(relu->in[0], conv->out[0]);
    assert_int_equal(g->n_outputs, 1);
    assert_int_equal(g->outputs[0], relu->out[0]);
    assert_shape(g->values[g->outputs[0]], 4, 1, 4, 4, 4);
    assert_string_equal(gir_attrs_get_string(&g->meta, "source.format", ""), "relayviz");
    gir_graph_free(g);
}

static void test_seed_call_op_string_batch_norm(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/batch_norm.relayviz.json");
    assert_int_equal(g->n_nodes, 1);
    const gir_node *bn = node_of(g, GIR_OP_BatchNormalization, 0);
    assert_int_equal(bn->n_in, 5);
    assert_int_equal(bn->n_out, 1);
    static const char *const names[] = { "x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var" };
    for (int i = 0; i < 5; i++)
        assert_string_equal(in_of(g, bn, (size_t)i)->name, names[i]);
    assert_true(gir_node_float(bn, "epsilon", 0) == 0.001);
    assert_int_equal(g->outputs[0], bn->out[0]);
    gir_graph_free(g);
}

static void test_seed_const_scalar_and_array(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/const.relayviz.json");
    assert_int_equal(g->n_inputs, 1);
    const gir_node *mul = node_of(g, GIR_OP_Mul, 0);
    const gir_value *scalar = in_of(g, mul, 1);
    assert_int_equal(scalar->kind, GIR_VALUE_CONST);
    assert_int_equal(scalar->shape.rank, 0);
    float f;
    memcpy(&f, scalar->data->data, 4);
    assert_true(f == 2.5f);
    const gir_node *add = node_of(g, GIR_OP_Add, 0);
    const gir_value *arr = in_of(g, add, 1);
    assert_shape(arr, 2, 2, 3);
    const float want[6] = { 0.1f, -2.0f, 3e-05f, 1e30f, -0.0f, 7.0f };
    assert_memory_equal(arr->data->data, want, sizeof want); /* bit for bit, -0.0 included */
    const gir_node *cast = node_of(g, GIR_OP_Cast, 0);
    assert_string_equal(gir_node_string(cast, "to", ""), "float32");
    const gir_value *iv = in_of(g, cast, 0);
    assert_int_equal(iv->dtype, GIR_DT_I64);
    const int64_t wi[3] = { 1, 0, -7 };
    assert_memory_equal(iv->data->data, wi, sizeof wi);
    const gir_node *sub = node_of(g, GIR_OP_Sub, 0);
    assert_int_equal(sub->in[0], add->out[0]);
    assert_int_equal(sub->in[1], cast->out[0]);
    gir_graph_free(g);
}

static void test_seed_bind(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/bind.relayviz.json");
    /* scale is bound by name, offset (node 2) as node_2: both are Consts. */
    assert_int_equal(g->n_inputs, 1);
    assert_string_equal(g->values[g->inputs[0]]->name, "x");
    const gir_node *mul = node_of(g, GIR_OP_Mul, 0), *add = node_of(g, GIR_OP_Add, 0);
    const float s[4] = { 1, 2, 3, 4 }, o[4] = { 0.5f, 0.5f, 0.5f, 0.5f };
    assert_int_equal(in_of(g, mul, 1)->kind, GIR_VALUE_CONST);
    assert_memory_equal(in_of(g, mul, 1)->data->data, s, sizeof s);
    assert_memory_equal(in_of(g, add, 1)->data->data, o, sizeof o);
    assert_int_equal(add->in[0], mul->out[0]);
    gir_graph_free(g);
}

static void test_seed_tuple_let_tuplegetitem(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/tuple_let.relayviz.json");
    assert_int_equal(g->n_nodes, 2);
    const gir_node *sig = node_of(g, GIR_OP_Sigmoid, 0), *cat = node_of(g, GIR_OP_Concat, 0);
    assert_int_equal(cat->n_in, 2);
    assert_int_equal(cat->in[0], sig->out[0]); /* the Let's variable is its value */
    assert_string_equal(in_of(g, cat, 1)->name, "b");
    assert_int_equal(gir_node_int(cat, "axis", 0), 1);
    assert_int_equal(g->outputs[0], cat->out[0]);
    assert_shape(g->values[g->outputs[0]], 2, 1, 5);
    gir_graph_free(g);
}

static void test_seed_if_constant(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/if_const.relayviz.json");
    /* true selects tanh, 0 selects log; the branches not taken are dropped. */
    assert_int_equal(g->n_nodes, 2);
    assert_int_equal(g->n_outputs, 2);
    assert_int_equal(g->nodes[g->values[g->outputs[0]]->producer]->op, GIR_OP_Tanh);
    assert_int_equal(g->nodes[g->values[g->outputs[1]]->producer]->op, GIR_OP_Log);
    gir_graph_free(g);
}

static void test_dead_tuple_field(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/dead_field.relayviz.json");
    /* TupleGetItem 1 of Tuple(log(exp(x)), tanh(x)): exp and log are dead. */
    assert_int_equal(g->n_nodes, 1);
    assert_int_equal(g->nodes[0]->op, GIR_OP_Tanh);
    gir_graph_free(g);
}

static void test_symbolic_dims_and_batch_size(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/symbolic_batch.relayviz.json");
    const gir_value *x = g->values[g->inputs[0]];
    assert_shape(x, 4, -1, 3, 4, 4);
    assert_string_equal(x->dim_names[0], "batch");
    assert_shape(g->values[g->outputs[0]], 2, -1, 3);
    assert_string_equal(g->values[g->outputs[0]]->dim_names[0], "batch");
    free(roundtrip(g, "symbolic"));
    gir_graph_free(g);
    char *p = tu_testdata("relayviz/symbolic_batch.relayviz.json");
    gir_options *o = tu_options("batch-size", "8", NULL);
    g = load_opts(p, o);
    assert_shape(g->values[g->inputs[0]], 4, 8, 3, 4, 4);
    assert_null(g->values[g->inputs[0]]->dim_names[0]);
    assert_shape(g->values[g->outputs[0]], 2, 8, 3);
    gir_graph_free(g);
    gir_options_set(o, "batch-size", "0", NULL);
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_load(p, "relayviz", o, &g, &err), &err, GIR_E_ARGUMENT, "batch-size=0 is not a positive integer");
    gir_error_clear(&err);
    gir_options_free(o);
    free(p);
}

static void test_unknown_types(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/unknown_types.relayviz.json");
    const gir_value *x = g->values[g->inputs[0]], *y = g->values[g->outputs[0]];
    assert_int_equal(x->dtype, GIR_DT_UNKNOWN);
    assert_int_equal(x->shape.rank, -1);
    /* The opaque result takes its type from the Function's ret_type. */
    assert_int_equal(y->dtype, GIR_DT_F32);
    assert_shape(y, 4, 1, -1, 7, 7);
    assert_string_equal(y->dim_names[1], "c");
    free(roundtrip(g, "unknown_types"));
    gir_graph_free(g);
}

static void test_seed_attribute_variants(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/attrs_variants.relayviz.json");
    const gir_node *p0 = node_of(g, GIR_OP_MaxPool, 0), *p1 = node_of(g, GIR_OP_MaxPool, 1);
    /* The Call's attrs win over the Op's, key by key; one value means all. */
    assert_ints(p0, "pads", 4, 1, 1, 1, 1);
    assert_ints(p0, "strides", 2, 2, 2);
    assert_ints(p0, "kernel_shape", 2, 3, 3);
    assert_ints(p1, "pads", 4, 0, 1, 0, 1);
    assert_ints(p1, "strides", 2, 1, 1);
    const gir_node *avg = node_of(g, GIR_OP_AveragePool, 0);
    assert_ints(avg, "kernel_shape", 2, 2, 2);
    assert_ints(avg, "pads", 4, 0, 1, 1, 0); /* top, left, bottom, right */
    assert_int_equal(gir_node_int(avg, "count_include_pad", 0), 1);
    assert_int_equal(gir_node_int(node_of(g, GIR_OP_Softmax, 0), "axis", 0), 1);
    assert_shape(g->values[g->outputs[0]], 4, 1, 2, 3, 5);
    gir_graph_free(g);
}

static void test_seed_opaque_operator(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/opaque.relayviz.json");
    const gir_node *op = NULL;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == GIR_OP_OPAQUE)
            op = g->nodes[i];
    assert_non_null(op);
    assert_string_equal(op->opaque_format, "relayviz");
    assert_string_equal(op->opaque_op, "my.fancy_op");
    assert_int_equal(op->n_in, 3); /* the Tuple argument is spread */
    assert_string_equal(in_of(g, op, 0)->name, "x");
    assert_string_equal(in_of(g, op, 1)->name, "y");
    assert_string_equal(in_of(g, op, 2)->name, "x");
    assert_int_equal(op->n_out, 2); /* item 1 is used */
    assert_string_equal(gir_node_string(op, "mode", ""), "\"wild\"");
    assert_string_equal(gir_node_string(op, "levels", ""), "[1,2.5,null]");
    assert_string_equal(gir_node_string(op, "nested", ""), "{\"k\":true}");
    const int64_t *ar;
    assert_int_equal(gir_attrs_get_ints(&op->meta, RV_META_ARGS, &ar), 2);
    assert_int_equal(ar[0], 2);
    assert_int_equal(ar[1], -1);
    assert_int_equal(gir_attrs_get_int(&op->meta, RV_META_TUPLE, 0), 1);
    assert_int_equal(node_of(g, GIR_OP_Relu, 0)->in[0], op->out[1]);
    gir_graph_free(g);
}

/* relayviz -> relayviz: every example reads back as the same graph, and
 * writing is deterministic (second write byte-identical to the first). */
static void test_relayviz_roundtrip_exact(void **state)
{
    (void)state;
    static const char *const files[] = {
        "function_call", "batch_norm", "const", "bind", "tuple_let", "if_const", "attrs_variants", "opaque",
        "dead_field",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "relayviz/%s.relayviz.json", files[i]);
        gir_graph *g = load_testdata(rel);
        free(roundtrip(g, files[i]));
        gir_graph_free(g);
    }
}

/* The writer follows the seed: post order, root Function last, Op nodes
 * with Relay's attributes, Var params for the weights. */
static void test_writer_layout(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/function_call.relayviz.json");
    char *p = tu_tmp("layout.relayviz.json");
    gir_options *o = tu_options("force", "1", NULL);
    tu_save(g, p, "relayviz", o);
    char *text = tu_slurp(p, NULL);
    assert_string_equal(
        text,
        "{\n"
        "  \"format\": \"relayviz\",\n"
        "  \"version\": [1, 0],\n"
        "  \"nodes\": [\n"
        "    {\"node_kind\": \"Var\", \"name\": \"data\", \"dtype\": \"float32\", \"shape\": [1, 3, 8, 8]},\n"
        "    {\"node_kind\": \"Var\", \"name\": \"conv_weight\", \"dtype\": \"float32\", \"shape\": [4, 3, 3, 3]},\n"
        "    {\"node_kind\": \"Var\", \"name\": \"conv_bias\", \"dtype\": \"float32\", \"shape\": [4]},\n"
        "    {\"node_kind\": \"Op\", \"name\": \"nn.conv2d\", \"attrs\": {\"strides\": [2, 2], \"padding\": [1, 1, 1, "
        "1], \"dilation\": [1, 1], \"groups\": 1, \"channels\": 4, \"kernel_size\": [3, 3], \"data_layout\": "
        "\"NCHW\", \"kernel_layout\": \"OIHW\", \"out_layout\": \"\", \"out_dtype\": \"\"}},\n"
        "    {\"node_kind\": \"Call\", \"op\": 3, \"args\": [0, 1]},\n"
        "    {\"node_kind\": \"Op\", \"name\": \"nn.bias_add\", \"attrs\": {\"axis\": 1}},\n"
        "    {\"node_kind\": \"Call\", \"op\": 5, \"args\": [4, 2]},\n"
        "    {\"node_kind\": \"Op\", \"name\": \"nn.relu\", \"attrs\": {}},\n"
        "    {\"node_kind\": \"Call\", \"op\": 7, \"args\": [6]},\n"
        "    {\"node_kind\": \"Function\", \"body\": 8, \"params\": [0, 1, 2], \"ret_type\": {\"dtype\": "
        "\"float32\", \"shape\": [1, 4, 4, 4]}}\n"
        "  ]\n"
        "}\n");
    free(text);
    gir_options_free(o);
    free(p);
    gir_graph_free(g);
}

/* ---- weights: a TVM .params companion, or embedded Consts ------------------------------ */

/* conv(+bias) -> relu -> maxpool -> flatten -> dense(+bias) -> softmax,
 * with float32 weights. */
static gir_graph *small_cnn(void)
{
    gb b = gb_new();
    int32_t x = gb_input(&b, "data", 4, I64(1, 3, 8, 8));
    int32_t w = gb_weight(&b, "conv0_weight", 4, I64(4, 3, 3, 3)), bias = gb_weight(&b, "conv0_bias", 1, I64(4));
    gir_node *n = gb_node(&b, "conv0", GIR_OP_Conv, 3, (int32_t[]){ x, w, bias }, 1);
    SET_INTS(&b, n, "kernel_shape", 3, 3);
    SET_INTS(&b, n, "pads", 1, 1, 1, 1);
    SET_INTS(&b, n, "strides", 1, 1);
    SET_INTS(&b, n, "dilations", 1, 1);
    gir_attrs_set_int(b.g, &n->attrs, "group", 1, NULL);
    int32_t c = gb_done(&b, n);
    int32_t r = gb_done(&b, gb_node(&b, "relu0", GIR_OP_Relu, 1, &c, 1));
    n = gb_node(&b, "pool0", GIR_OP_MaxPool, 1, &r, 1);
    SET_INTS(&b, n, "kernel_shape", 2, 2);
    SET_INTS(&b, n, "pads", 0, 0, 0, 0);
    SET_INTS(&b, n, "strides", 2, 2);
    SET_INTS(&b, n, "dilations", 1, 1);
    gir_attrs_set_int(b.g, &n->attrs, "ceil_mode", 0, NULL);
    int32_t p = gb_done(&b, n);
    n = gb_node(&b, "flat0", GIR_OP_Flatten, 1, &p, 1);
    gir_attrs_set_int(b.g, &n->attrs, "axis", 1, NULL);
    int32_t f = gb_done(&b, n);
    int32_t fw = gb_weight(&b, "fc0_weight", 2, I64(10, 64)), fb = gb_weight(&b, "fc0_bias", 1, I64(10));
    n = gb_node(&b, "fc0", GIR_OP_Gemm, 3, (int32_t[]){ f, fw, fb }, 1);
    gir_attrs_set_float(b.g, &n->attrs, "alpha", 1.0, NULL);
    gir_attrs_set_float(b.g, &n->attrs, "beta", 1.0, NULL);
    gir_attrs_set_int(b.g, &n->attrs, "transA", 0, NULL);
    gir_attrs_set_int(b.g, &n->attrs, "transB", 1, NULL);
    int32_t d = gb_done(&b, n);
    n = gb_node(&b, "prob", GIR_OP_Softmax, 1, &d, 1);
    gir_attrs_set_int(b.g, &n->attrs, "axis", -1, NULL);
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_add_output(b.g, gb_done(&b, n), &err), &err);
    gb_finish(b.g);
    return b.g;
}

static void test_weights_params_companion(void **state)
{
    (void)state;
    gir_graph *g = small_cnn();
    char *p = tu_tmp("cnn.relayviz.json"), *pp = tu_tmp("cnn.params");
    gir_options *o = tu_options("force", "1", NULL);
    tu_save(g, p, "relayviz", o);
    assert_true(gir_path_exists(pp));
    /* Params: the input, then the weights in order of first use. */
    char *text = tu_slurp(p, NULL);
    assert_non_null(strstr(text, "\"params\": [0, 1, 2, 3, 4]"));
    assert_non_null(strstr(text, "{\"node_kind\": \"Var\", \"name\": \"conv0_bias\", \"dtype\": \"float32\", "
                                 "\"shape\": [4]}"));
    assert_null(strstr(text, "Const"));
    free(text);
    /* Read back: the companion is found by name; its arrays are weights. */
    gir_graph *back = load(p);
    assert_int_equal(back->n_inputs, 1);
    assert_int_equal(back->values[gir_graph_value_index(back, "fc0_weight")]->kind, GIR_VALUE_WEIGHT);
    assert_same(g, back);
    gir_graph_free(back);
    /* Without the companion, the weights are inputs (a relay.build without params). */
    char *moved = tu_tmp("elsewhere.params");
    assert_int_equal(rename(pp, moved), 0);
    back = load(p);
    assert_int_equal(back->n_inputs, 5);
    gir_graph_free(back);
    /* ... and with params= they are weights again. */
    gir_options *po = tu_options("params", moved, NULL);
    back = load_opts(p, po);
    assert_int_equal(back->n_inputs, 1);
    assert_same(g, back);
    gir_graph_free(back);
    gir_options_free(po);
    free(moved);
    gir_options_free(o);
    free(p);
    free(pp);
    gir_graph_free(g);
}

static void test_weights_embedded(void **state)
{
    (void)state;
    gir_graph *g = small_cnn();
    char *p = tu_tmp("cnn_embed.relayviz.json"), *pp = tu_tmp("cnn_embed.params");
    gir_options *o = tu_options("force", "1", "embed-weights", "1", NULL);
    tu_save(g, p, "relayviz", o);
    assert_false(gir_path_exists(pp));
    char *text = tu_slurp(p, NULL);
    assert_non_null(strstr(text, "\"params\": [0]"));
    assert_non_null(strstr(text, "\"array_shape\": [4, 3, 3, 3]}, \"dtype\": \"float32\"}"));
    free(text);
    gir_graph *back = load(p);
    assert_int_equal(back->n_inputs, 1);
    assert_same(g, back); /* weights are Consts now, bit for bit the same */
    gir_graph_free(back);
    gir_options_free(o);
    free(p);
    free(pp);
    gir_graph_free(g);
}

static void test_params_mismatch(void **state)
{
    (void)state;
    gir_graph *g = small_cnn();
    char *p = tu_tmp("mm.relayviz.json");
    gir_options *o = tu_options("force", "1", NULL);
    tu_save(g, p, "relayviz", o);
    /* Edit the Var's declared shape: it no longer matches the array. */
    size_t len;
    char *text = tu_slurp(p, &len);
    char *at = strstr(text, "\"conv0_bias\", \"dtype\": \"float32\", \"shape\": [4]");
    assert_non_null(at);
    at[strlen("\"conv0_bias\", \"dtype\": \"float32\", \"shape\": [")] = '5';
    assert_true(tu_write(p, text, len));
    gir_error err = GIR_ERROR_INIT;
    gir_graph *back = NULL;
    TU_FAILS(gir_load(p, NULL, NULL, &back, &err), &err, GIR_E_SHAPE, "/nodes/2/shape", "node '2'",
             "Var 'conv0_bias' has shape [5] but its array in the params file has [4]");
    assert_null(back);
    gir_error_clear(&err);
    free(text);
    gir_options_free(o);
    free(p);
    gir_graph_free(g);
}

/* float32 values written inline read back to the same bits. */
static void test_float_bits(void **state)
{
    (void)state;
    gb b = gb_new();
    int32_t x = gb_input(&b, "x", 1, I64(4096));
    gir_shape s = { .rank = 1, .dims = { 4096 } };
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
    uint32_t *u = t->data;
    uint32_t r = 7;
    const uint32_t special[] = { 0x00000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0x80000000, 0x3dcccccd,
                                 0x3f800001, 0x4b7fffff, 0x33d6bf95, 0xff7fffff, 0x00000000, 0x1 };
    for (size_t i = 0; i < 4096; i++) {
        r = r * 1664525u + 1013904223u;
        uint32_t bits = i < sizeof special / sizeof special[0] ? special[i] : r;
        if ((bits & 0x7f800000u) == 0x7f800000u) /* no NaN/inf here */
            bits &= 0xbfffffffu;
        u[i] = bits;
    }
    int32_t c;
    TU_OK(gir_graph_add_const(b.g, "k", t, &c, &err), &err);
    gir_tensor_unref(t);
    int32_t y = gb_done(&b, gb_node(&b, "sum", GIR_OP_Add, 2, (int32_t[]){ x, c }, 1));
    TU_OK(gir_graph_add_output(b.g, y, &err), &err);
    char *text = roundtrip(b.g, "floats");
    assert_non_null(strstr(text, "1e-45")); /* the shortest text of the smallest subnormal */
    assert_non_null(strstr(text, "3.4028235e+38"));
    free(text);
    gir_graph_free(b.g);
}

static void test_nonfinite(void **state)
{
    (void)state;
    gb b = gb_new();
    int32_t x = gb_input(&b, "x", 1, I64(3));
    gir_shape s = { .rank = 1, .dims = { 3 } };
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
    float *f = t->data;
    f[0] = NAN;
    f[1] = INFINITY;
    f[2] = -INFINITY;
    int32_t c;
    TU_OK(gir_graph_add_const(b.g, "bad", t, &c, &err), &err);
    gir_tensor_unref(t);
    int32_t y = gb_done(&b, gb_node(&b, "m", GIR_OP_Mul, 2, (int32_t[]){ x, c }, 1));
    TU_OK(gir_graph_add_output(b.g, y, &err), &err);
    char *p = tu_tmp("nonfinite.relayviz.json");
    TU_FAILS(gir_save(b.g, p, NULL, NULL, &err), &err, GIR_E_UNSUPPORTED, "NaN or infinity", "nonfinite=string",
             "first 'bad'");
    gir_error_clear(&err);
    assert_false(gir_path_exists(p));
    gir_options *o = tu_options("nonfinite", "string", NULL);
    tu_save(b.g, p, "relayviz", o);
    char *text = tu_slurp(p, NULL);
    assert_non_null(strstr(text, "\"array_value\": [\"NaN\", \"Infinity\", \"-Infinity\"]"));
    free(text);
    gir_graph *back = load(p);
    const float *bf = in_of(back, back->nodes[0], 1)->data->data;
    assert_true(isnan(bf[0]) && bf[1] == INFINITY && bf[2] == -INFINITY);
    gir_graph_free(back);
    gir_options_free(o);
    free(p);
    gir_graph_free(b.g);
}

/* ---- composites and every mapped operator ----------------------------------------------- */

static void test_composites(void **state)
{
    (void)state;
    gir_graph *g = small_cnn();
    gb b = { g, 99 };
    /* BatchNormalization on the dense output, as nn.batch_norm + TupleGetItem 0. */
    int32_t prob = g->outputs[0];
    int32_t bnw[4];
    static const char *const bn_names[] = { "bn_gamma", "bn_beta", "bn_mean", "bn_var" };
    for (int i = 0; i < 4; i++)
        bnw[i] = gb_weight(&b, bn_names[i], 1, I64(10));
    float *var = g->values[bnw[3]]->data->data;
    for (int i = 0; i < 10; i++)
        var[i] = fabsf(var[i]) + 0.5f;
    gir_node *n = gb_node(&b, "bn0", GIR_OP_BatchNormalization, 5,
                          (int32_t[]){ prob, bnw[0], bnw[1], bnw[2], bnw[3] }, 1);
    gir_attrs_set_float(g, &n->attrs, "epsilon", (double)1e-5f, NULL);
    gir_attrs_set_float(g, &n->attrs, "momentum", 0.5, NULL);
    int32_t bn = gb_done(&b, n);
    /* Gemm with B as [in, out] (NNabla's Affine): a transpose in front. */
    int32_t w2 = gb_weight(&b, "fc1_weight", 2, I64(10, 5)), b2 = gb_weight(&b, "fc1_bias", 1, I64(5));
    n = gb_node(&b, "fc1", GIR_OP_Gemm, 3, (int32_t[]){ bn, w2, b2 }, 1);
    gir_attrs_set_int(g, &n->attrs, "transB", 0, NULL);
    int32_t fc1 = gb_done(&b, n);
    /* and with A transposed: [5, 1]^T x [5, 3]^T^T */
    int32_t w3 = gb_weight(&b, "fc2_weight", 2, I64(3, 1));
    n = gb_node(&b, "fc2", GIR_OP_Gemm, 2, (int32_t[]){ fc1, w3 }, 1);
    gir_attrs_set_int(g, &n->attrs, "transA", 1, NULL);
    gir_attrs_set_int(g, &n->attrs, "transB", 1, NULL);
    g->outputs[0] = gb_done(&b, n);
    gb_finish(g);
    assert_shape(g->values[g->outputs[0]], 2, 5, 3);
    char *text = roundtrip(g, "composites");
    assert_non_null(strstr(text, "\"epsilon\": 9.999999747378752e-06, \"center\": true, \"scale\": true, "
                                 "\"momentum\": 0.5}"));
    assert_non_null(strstr(text, "\"name\": \"transpose\", \"attrs\": {\"axes\": null}"));
    assert_non_null(strstr(text, "\"name\": \"nn.dense\", \"attrs\": {\"units\": 5, \"out_dtype\": \"\"}"));
    assert_non_null(strstr(text, "\"name\": \"nn.dense\", \"attrs\": {\"units\": 3, \"out_dtype\": \"\"}"));
    assert_non_null(strstr(text, "\"name\": \"nn.bias_add\", \"attrs\": {\"axis\": 1}"));
    assert_non_null(strstr(text, "\"name\": \"nn.bias_add\", \"attrs\": {\"axis\": -1}"));
    assert_non_null(strstr(text, "\"name\": \"nn.dense\", \"attrs\": {\"units\": 10, \"out_dtype\": \"\"}"));
    assert_non_null(strstr(text, "\"node_kind\": \"TupleGetItem\""));
    free(text);
    gir_graph_free(g);
}

/* One graph with every operator the mapping covers, written and read back. */
static void test_every_mapped_op(void **state)
{
    (void)state;
    gb b = gb_new();
    gir_graph *g = b.g;
    gir_error err = GIR_ERROR_INIT;
    int32_t x = gb_input(&b, "x", 4, I64(1, 4, 6, 6));
    /* ConvTranspose with bias and output_padding. */
    int32_t tw = gb_weight(&b, "tw", 4, I64(4, 2, 3, 3)), tb = gb_weight(&b, "tb", 1, I64(2));
    gir_node *n = gb_node(&b, "deconv", GIR_OP_ConvTranspose, 3, (int32_t[]){ x, tw, tb }, 1);
    SET_INTS(&b, n, "kernel_shape", 3, 3);
    SET_INTS(&b, n, "pads", 1, 1, 1, 1);
    SET_INTS(&b, n, "strides", 2, 2);
    SET_INTS(&b, n, "dilations", 1, 1);
    SET_INTS(&b, n, "output_padding", 1, 1);
    gir_attrs_set_int(g, &n->attrs, "group", 1, &err);
    int32_t v = gb_done(&b, n); /* [1,2,12,12] */
    n = gb_node(&b, "lrelu", GIR_OP_LeakyRelu, 1, &v, 1);
    gir_attrs_set_float(g, &n->attrs, "alpha", 0.1, &err);
    v = gb_done(&b, n);
    /* PRelu per channel: an Unsqueeze of a [C] slope. */
    int32_t slope = gb_weight(&b, "slope", 1, I64(2));
    n = gb_node(&b, "slope_u", GIR_OP_Unsqueeze, 1, &slope, 1);
    SET_INTS(&b, n, "axes", 1, 2);
    int32_t su = gb_done(&b, n);
    v = gb_done(&b, gb_node(&b, "prelu", GIR_OP_PRelu, 2, (int32_t[]){ v, su }, 1));
    n = gb_node(&b, "pad", GIR_OP_Pad, 1, &v, 1);
    SET_INTS(&b, n, "pads", 0, 0, 1, 2, 0, 0, 1, 0);
    gir_attrs_set_string(g, &n->attrs, "mode", "constant", &err);
    gir_attrs_set_float(g, &n->attrs, "constant_value", 0.25, &err);
    v = gb_done(&b, n); /* [1,2,14,14] */
    n = gb_node(&b, "avg", GIR_OP_AveragePool, 1, &v, 1);
    SET_INTS(&b, n, "kernel_shape", 2, 2);
    SET_INTS(&b, n, "pads", 0, 0, 0, 0);
    SET_INTS(&b, n, "strides", 2, 2);
    gir_attrs_set_int(g, &n->attrs, "ceil_mode", 1, &err);
    gir_attrs_set_int(g, &n->attrs, "count_include_pad", 1, &err);
    v = gb_done(&b, n); /* [1,2,7,7] */
    n = gb_node(&b, "lrn", GIR_OP_LRN, 1, &v, 1);
    gir_attrs_set_float(g, &n->attrs, "alpha", 2e-4, &err);
    gir_attrs_set_float(g, &n->attrs, "beta", 0.5, &err);
    gir_attrs_set_float(g, &n->attrs, "bias", 1.5, &err);
    gir_attrs_set_int(g, &n->attrs, "size", 3, &err);
    v = gb_done(&b, n);
    n = gb_node(&b, "up", GIR_OP_Resize, 1, &v, 1);
    gir_attrs_set_floats(g, &n->attrs, "scales", (const double[]){ 1, 1, 2, 2 }, 4, &err);
    gir_attrs_set_string(g, &n->attrs, "mode", "nearest", &err);
    gir_attrs_set_string(g, &n->attrs, "coordinate_transformation_mode", "asymmetric", &err);
    gir_attrs_set_string(g, &n->attrs, "nearest_mode", "floor", &err);
    v = gb_done(&b, n); /* [1,2,14,14] */
    n = gb_node(&b, "split", GIR_OP_Split, 1, &v, 2);
    gir_attrs_set_int(g, &n->attrs, "axis", 2, &err);
    SET_INTS(&b, n, "split", 4, 10);
    gb_done(&b, n);
    int32_t s0 = n->out[0], s1 = n->out[1];
    n = gb_node(&b, "slice", GIR_OP_Slice, 1, &s1, 1);
    SET_INTS(&b, n, "starts", 0, 1);
    SET_INTS(&b, n, "ends", 4, 100);
    SET_INTS(&b, n, "axes", 2, 3);
    SET_INTS(&b, n, "steps", 1, 3);
    int32_t sl = gb_done(&b, n); /* [1,2,4,5] */
    n = gb_node(&b, "slice2", GIR_OP_Slice, 1, &s0, 1);
    SET_INTS(&b, n, "starts", 0, 0, 0, 0);
    SET_INTS(&b, n, "ends", 1, 2, 4, 5);
    int32_t sl2 = gb_done(&b, n);
    n = gb_node(&b, "cat", GIR_OP_Concat, 2, (int32_t[]){ sl, sl2 }, 1);
    gir_attrs_set_int(g, &n->attrs, "axis", 1, &err);
    v = gb_done(&b, n); /* [1,4,4,5] */
    n = gb_node(&b, "tr", GIR_OP_Transpose, 1, &v, 1);
    SET_INTS(&b, n, "perm", 0, 2, 3, 1);
    v = gb_done(&b, n); /* [1,4,5,4] */
    n = gb_node(&b, "rs", GIR_OP_Reshape, 1, &v, 1);
    SET_INTS(&b, n, "shape", 0, -1, 4);
    gir_attrs_set_int(g, &n->attrs, "allowzero", 0, &err);
    v = gb_done(&b, n); /* [1,20,4] */
    n = gb_node(&b, "us", GIR_OP_Unsqueeze, 1, &v, 1);
    SET_INTS(&b, n, "axes", 3);
    v = gb_done(&b, n);
    n = gb_node(&b, "sq", GIR_OP_Squeeze, 1, &v, 1);
    SET_INTS(&b, n, "axes", 3);
    v = gb_done(&b, n);
    n = gb_node(&b, "clip", GIR_OP_Clip, 1, &v, 1);
    gir_attrs_set_float(g, &n->attrs, "min", -0.5, &err);
    gir_attrs_set_float(g, &n->attrs, "max", 6.0, &err);
    v = gb_done(&b, n);
    n = gb_node(&b, "drop", GIR_OP_Dropout, 1, &v, 1);
    gir_attrs_set_float(g, &n->attrs, "ratio", 0.3, &err);
    v = gb_done(&b, n);
    int32_t e = gb_done(&b, gb_node(&b, "exp", GIR_OP_Exp, 1, &v, 1));
    int32_t q = gb_done(&b, gb_node(&b, "sqrt", GIR_OP_Sqrt, 1, &e, 1));
    int32_t l = gb_done(&b, gb_node(&b, "log", GIR_OP_Log, 1, &q, 1));
    int32_t dv = gb_done(&b, gb_node(&b, "div", GIR_OP_Div, 2, (int32_t[]){ l, e }, 1));
    int32_t sb = gb_done(&b, gb_node(&b, "sub", GIR_OP_Sub, 2, (int32_t[]){ dv, v }, 1));
    int32_t th = gb_done(&b, gb_node(&b, "tanh", GIR_OP_Tanh, 1, &sb, 1));
    n = gb_node(&b, "mean", GIR_OP_ReduceMean, 1, &th, 1);
    SET_INTS(&b, n, "axes", 2);
    gir_attrs_set_int(g, &n->attrs, "keepdims", 0, &err);
    int32_t mn = gb_done(&b, n); /* [1,20] */
    n = gb_node(&b, "amax", GIR_OP_ArgMax, 1, &mn, 1);
    gir_attrs_set_int(g, &n->attrs, "axis", 1, &err);
    gir_attrs_set_int(g, &n->attrs, "keepdims", 1, &err);
    gir_attrs_set_int(g, &n->attrs, "select_last_index", 0, &err);
    int32_t am = gb_done(&b, n);
    n = gb_node(&b, "lsm", GIR_OP_LogSoftmax, 1, &mn, 1);
    gir_attrs_set_int(g, &n->attrs, "axis", 1, &err);
    int32_t ls = gb_done(&b, n);
    n = gb_node(&b, "bcast", GIR_OP_Expand, 1, &mn, 1);
    SET_INTS(&b, n, "shape", 3, 20); /* [1,20] -> [3,20] (a 1 in shape would be written as the result's size) */
    int32_t bc = gb_done(&b, n);
    TU_OK(gir_graph_add_output(g, ls, &err), &err);
    TU_OK(gir_graph_add_output(g, am, &err), &err);
    TU_OK(gir_graph_add_output(g, bc, &err), &err);
    gb_finish(g);
    char *text = roundtrip(g, "every_op");
    static const char *const ops[] = { "nn.conv2d_transpose", "nn.leaky_relu", "nn.prelu", "nn.pad",
                                       "nn.avg_pool2d", "nn.lrn", "nn.upsampling", "split", "strided_slice",
                                       "concatenate", "transpose", "reshape", "expand_dims", "squeeze", "clip",
                                       "nn.dropout", "mean", "argmax", "nn.log_softmax", "broadcast_to" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char pat[64];
        snprintf(pat, sizeof pat, "\"name\": \"%s\"", ops[i]);
        if (!strstr(text, pat))
            fail_msg("%s was not written", ops[i]);
    }
    /* The slope's Unsqueeze is folded into nn.prelu's axis. */
    assert_non_null(strstr(text, "\"name\": \"nn.prelu\", \"attrs\": {\"axis\": 1}"));
    assert_null(strstr(text, "\"name\": \"expand_dims\", \"attrs\": {\"axis\": 1, \"num_newaxis\": 2}"));
    assert_non_null(strstr(text, "\"pad_width\": [[0, 0], [0, 0], [1, 1], [2, 0]]"));
    assert_non_null(strstr(text, "{\"node_kind\": \"Const\", \"value\": 0.25, \"dtype\": \"float32\"}"));
    assert_non_null(strstr(text, "\"indices_or_sections\": [4], \"axis\": 2"));
    /* broadcast_to names the result's shape */
    assert_non_null(strstr(text, "\"name\": \"broadcast_to\", \"attrs\": {\"shape\": [3, 20]}"));
    free(text);
    gir_graph_free(g);
}

/* ---- refusals ------------------------------------------------------------------------ */

static void test_unsupported_listed_at_once(void **state)
{
    (void)state;
    gb b = gb_new();
    gir_graph *g = b.g;
    gir_error err = GIR_ERROR_INIT;
    int32_t x = gb_input(&b, "x", 2, I64(2, 3));
    int32_t w = gb_weight(&b, "w", 2, I64(3, 4));
    gir_node *n = gb_node(&b, "mm", GIR_OP_Gemm, 2, (int32_t[]){ x, w }, 1);
    gir_attrs_set_float(g, &n->attrs, "alpha", 2.0, &err);
    int32_t v = gb_done(&b, n);
    int32_t h1 = gb_done(&b, gb_node(&b, "h1", GIR_OP_HardSigmoid, 1, &v, 1));
    int32_t h2 = gb_done(&b, gb_node(&b, "h2", GIR_OP_HardSigmoid, 1, &h1, 1));
    n = gb_node(&b, "c", GIR_OP_Clip, 1, &h2, 1);
    gir_attrs_set_float(g, &n->attrs, "max", 1.0, &err);
    TU_OK(gir_graph_add_output(g, gb_done(&b, n), &err), &err);
    char *p = tu_tmp("refused.relayviz.json");
    gir_options *o = tu_options("legalize", "0", NULL);
    TU_FAILS(gir_save(g, p, NULL, o, &err), &err, GIR_E_UNSUPPORTED_ATTR, "cannot write as relayviz",
             "Gemm with alpha other than 1 (1 node, first 'mm')",
             "HardSigmoid (2 nodes, first 'h1')", "Clip without min (Relay's clip needs both bounds) (1 node, first 'c')");
    gir_error_clear(&err);
    gir_options_free(o);
    assert_false(gir_path_exists(p));
    char *pp = tu_tmp("refused.params");
    assert_false(gir_path_exists(pp));
    /* legalized: Gemm, HardSigmoid and Clip are written in other forms */
    tu_save(g, p, NULL, NULL);
    assert_true(gir_path_exists(p) && gir_path_exists(pp));
    unlink(p);
    unlink(pp);
    free(pp);
    free(p);
    gir_graph_free(g);
}

static void test_existing_outputs(void **state)
{
    (void)state;
    gir_graph *g = small_cnn();
    char *p = tu_tmp("exists.relayviz.json"), *pp = tu_tmp("exists.params");
    assert_true(tu_write(pp, "precious", 8));
    gir_error err = GIR_ERROR_INIT;
    /* The companion exists: nothing is written, the old file is kept. */
    TU_FAILS(gir_save(g, p, "relayviz", NULL, &err), &err, GIR_E_EXISTS, "exists.params", "--force");
    gir_error_clear(&err);
    assert_false(gir_path_exists(p));
    size_t len;
    char *old = tu_slurp(pp, &len);
    assert_int_equal(len, 8);
    free(old);
    gir_options *o = tu_options("force", "1", NULL);
    tu_save(g, p, "relayviz", o);
    old = tu_slurp(pp, &len);
    assert_true(len > 8);
    free(old);
    gir_options_free(o);
    free(p);
    free(pp);
    gir_graph_free(g);
}

/* ---- malformed files -------------------------------------------------------------------- */

static void bad(const char *file, gir_status code, const char *m1, const char *m2, const char *m3)
{
    char rel[128];
    snprintf(rel, sizeof rel, "relayviz/bad/%s", file);
    char *p = tu_testdata(rel);
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    gir_status st = gir_load(p, "relayviz", NULL, &g, &err);
    if (m3)
        TU_FAILS(st, &err, code, file, m1, m2, m3);
    else if (m2)
        TU_FAILS(st, &err, code, file, m1, m2);
    else
        TU_FAILS(st, &err, code, file, m1);
    assert_null(g);
    gir_error_clear(&err);
    free(p);
}

static void test_malformed(void **state)
{
    (void)state;
    bad("format.json", GIR_E_SCHEMA, "/format", "\"format\" must be \"relayviz\", not the string \"relayviz2\"", NULL);
    bad("version.json", GIR_E_SCHEMA, "/version", "RelayViz version 2.1 is not supported (only 1.x)", NULL);
    bad("root_array.json", GIR_E_SCHEMA, "the document must be an object", NULL, NULL);
    bad("root_op.json", GIR_E_SCHEMA, "node '1'", "the last node is the program's root and must be a Function or an expression, not an Op", NULL);
    bad("node_kind.json", GIR_E_SCHEMA, "/nodes/1/node_kind (line 3:17)", "node '1'", "unknown node_kind \"Loop\"");
    bad("id_range.json", GIR_E_REFERENCE, "/nodes/1/args/1 (line 3:", "node '1'",
        "args/1 refers to node 7, but the ids go from 0 to 2");
    bad("cycle.json", GIR_E_CYCLE, "node '1'", "part of a cycle: 1 -> 2 -> 1", NULL);
    bad("let_cycle.json", GIR_E_CYCLE, "node '1'", "part of a cycle through a binding", NULL);
    bad("if_dynamic.json", GIR_E_DYNAMIC, "/nodes/3/cond", "node '3'",
        "its condition (node 1) is not a constant, so the program is not a static graph");
    bad("call_op_var.json", GIR_E_SCHEMA, "/nodes/1/op", "node '1'", "op refers to node 0, a Var, which is not an Op");
    bad("param_not_var.json", GIR_E_SCHEMA, "/nodes/2/params/1", "node '2'",
        "params/1 refers to node 1, a Call, which is not a Var");
    bad("free_var.json", GIR_E_REFERENCE, "node '1'",
        "Var 'stray' is neither a parameter of the Function nor bound by a Let or Bind", NULL);
    bad("tgi_range.json", GIR_E_SCHEMA, "/nodes/2/index", "node '2'", "index 2 is out of range for a tuple of 2");
    bad("const_shape.json", GIR_E_SHAPE, "/nodes/0/value/array_value", "node '0'",
        "array_value has 5 numbers but array_shape [2,3] needs 6");
    bad("syntax.json", GIR_E_SYNTAX, "line 3:40", NULL, NULL);
    bad("conv_attr.json", GIR_E_ATTRIBUTE, "/nodes/2/attrs/padding", "node '3'",
        "attribute padding of nn.conv2d must be 1, 2 or 4 integers, not an array of 3");
}

static void test_detect(void **state)
{
    (void)state;
    char *p = tu_testdata("relayviz/const.relayviz.json");
    const char *name, *reason;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_detect(p, &name, &reason, &err), &err);
    assert_string_equal(name, "relayviz");
    assert_string_equal(reason, "content");
    assert_string_equal(gir_format_for_extension("out.relayviz.json"), "relayviz");
    free(p);
    char *c = gir_relayviz_params_path("dir/m.relayviz.json");
    assert_string_equal(c, "dir/m.params");
    free(c);
    c = gir_relayviz_params_path("m.json");
    assert_string_equal(c, "m.params");
    free(c);
}

/* ---- DOT ----------------------------------------------------------------------------------- */

static void test_dot(void **state)
{
    (void)state;
    gir_graph *g = load_testdata("relayviz/opaque.relayviz.json");
    gir_buf a = GIR_BUF_INIT, b = GIR_BUF_INIT;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_dot_write(g, NULL, &a, &err), &err);
    TU_OK(gir_dot_write(g, NULL, &b, &err), &err);
    assert_string_equal(a.data, b.data); /* deterministic */
    assert_string_equal(
        a.data,
        "digraph \"opaque\" {\n"
        "  graph [rankdir=TB, ranksep=0.25, nodesep=0.2, fontname=\"Helvetica\", labelloc=t, "
        "label=\"opaque\\n2 nodes, 0 weight "
        "tensors, 0 elements\"];\n"
        "  node [fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#4b5563\"];\n"
        "  in0 [shape=ellipse, style=filled, fillcolor=\"#dbeafe\", label=\"input x\\nfloat32 [2,2]\"];\n"
        "  in1 [shape=ellipse, style=filled, fillcolor=\"#dbeafe\", label=\"input y\\nfloat32 [2,2]\"];\n"
        "  n0 [shape=box, style=\"rounded,filled,dashed\", fillcolor=\"#fee2e2\", color=\"#b91c1c\", "
        "label=\"opaque relayviz:my.fancy_op\\nmy.fancy_op_4\\nmode=\\\"wild\\\"\\nlevels=[1,2.5,null]\\nnested={\\\"k\\\":true}\"];\n"
        "  n1 [shape=box, style=\"rounded,filled\", fillcolor=\"#f3f4f6\", color=\"#6b7280\", "
        "label=\"Relu\\nrelu_6\"];\n"
        "  in0 -> n0 [label=\"[2,2]\"];\n"
        "  in1 -> n0 [label=\"[2,2]\"];\n"
        "  in0 -> n0 [label=\"[2,2]\"];\n"
        "  n0 -> n1 [label=\"#1 ?\"];\n"
        "  out0 [shape=ellipse, style=filled, fillcolor=\"#dcfce7\", label=\"output relu_6\\nfloat32 [2,2]\"];\n"
        "  n1 -> out0 [label=\"[2,2]\"];\n"
        "}\n");
    gir_buf_free(&a);
    gir_buf_free(&b);
    gir_graph_free(g);

    /* Weights are summarised in the box that reads them, not drawn apart. */
    g = small_cnn();
    TU_OK(gir_dot_write(g, NULL, &a, &err), &err);
    /* attributes at their default are hidden (pads are not the default) */
    assert_non_null(strstr(a.data, "label=\"Conv\\nconv0\\npads=[1,1,1,1]"
                                   "\\nweight conv0_weight float32 [4,3,3,3]"
                                   "\\nweight conv0_bias float32 [4]\"]"));
    gir_dot_options all = gir_dot_defaults;
    all.all_attrs = true;
    TU_OK(gir_dot_write(g, &all, &b, &err), &err);
    assert_non_null(strstr(b.data, "label=\"Conv\\nconv0\\nauto_pad=NOTSET\\ndilations=[1,1]\\ngroup=1"
                                   "\\nkernel_shape=[3,3]\\npads=[1,1,1,1]\\nstrides=[1,1]"
                                   "\\nweight conv0_weight float32 [4,3,3,3]"
                                   "\\nweight conv0_bias float32 [4]\"]"));
    gir_buf_free(&b);
    assert_non_null(strstr(a.data, "4 weight tensors, 762 elements"));
    assert_null(strstr(a.data, "-> n0 [label=\"[4,3,3,3]\"]"));
    assert_non_null(strstr(a.data, "  n0 -> n1 [label=\"[1,4,8,8]\"];\n"));
    if (tu_have_program("dot")) {
        char *dp = tu_tmp("cnn.dot"), *sp = tu_tmp("cnn.svg");
        assert_true(tu_write(dp, a.data, a.len));
        char *cmd = gir_strdupf("dot -Tsvg '%s' -o '%s'", dp, sp);
        assert_int_equal(system(cmd), 0);
        size_t len;
        char *svg = tu_slurp(sp, &len);
        assert_non_null(svg);
        assert_non_null(strstr(svg, "<svg"));
        assert_non_null(strstr(svg, "conv0_weight"));
        free(svg);
        free(cmd);
        free(dp);
        free(sp);
    } else {
        print_message("skip: Graphviz dot is not installed; the DOT text is not rendered\n");
    }
    gir_buf_free(&a);
    gir_graph_free(g);
}

/* ---- real models ----------------------------------------------------------------------------- */

/* Models of ../shared/realworld that Relay can express: they must convert
 * (when their format is in this build). */
static const struct {
    const char *rel, *format;
} must_convert[] = {
    { "realworld/nnp/lenet_010000.nnp", "nnabla" },
    { "realworld/nnp/model_simple.nnp", "nnabla" },
    { "realworld/nnp/nnc_result.nnp", "nnabla" },
    { "realworld/lightnet/shufflenetv2.json", "lightnet" },
    { "realworld/mxnet/lenet-symbol.json", "mxnet" },
    { "realworld/nnvm/lenet_nnvm_graph.json", "nnvm" },
    { "realworld/nnp-onnx-pairs/conv.onnx", "onnx" },
    { "realworld/nnp-onnx-pairs/batch_norm.onnx", "onnx" },
    { "realworld/nnp-onnx-pairs/gemm.onnx", "onnx" },
    { "realworld/nnp-onnx-pairs/gemm.nnp", "nnabla" },
    { "realworld/nnp-onnx-pairs/lrn_c4_s3.onnx", "onnx" },
    { "realworld/nnp-onnx-pairs/maxpool_p0_s2_k2.onnx", "onnx" },
    { "realworld/nnp-onnx-pairs/dropout_test.onnx", "onnx" },
    { "realworld/nnp-onnx-pairs/log_softmax.onnx", "onnx" },
    { "realworld/nnp-onnx-pairs/reduce_mean.onnx", "onnx" },
};

/* The DOT text of a real model, rendered by Graphviz when installed. */
static void draw_and_render(const gir_graph *g, const char *base)
{
    gir_buf dot = GIR_BUF_INIT;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_dot_write(g, NULL, &dot, &err), &err);
    assert_non_null(strstr(dot.data, "digraph "));
    for (size_t i = 0; i < g->n_nodes; i++) {
        char box[64];
        snprintf(box, sizeof box, "  n%zu [shape=box", i);
        assert_non_null(strstr(dot.data, box)); /* every node drawn */
    }
    if (!tu_have_program("dot")) {
        print_message("skip: Graphviz dot is not installed; %s's DOT is not rendered\n", base);
        gir_buf_free(&dot);
        return;
    }
    char name[256];
    snprintf(name, sizeof name, "draw_%s.dot", base);
    char *dp = tu_tmp(name);
    snprintf(name, sizeof name, "draw_%s.svg", base);
    char *sp = tu_tmp(name);
    assert_true(tu_write(dp, dot.data, dot.len));
    char *cmd = gir_strdupf("dot -Tsvg '%s' -o '%s'", dp, sp);
    assert_int_equal(system(cmd), 0);
    char *svg = tu_slurp(sp, NULL);
    assert_non_null(svg);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, g->nodes[0]->name));
    free(svg);
    free(cmd);
    free(dp);
    free(sp);
    gir_buf_free(&dot);
}

/* Converts one model to RelayViz (params companion, then embedded) and
 * back to its own format: the same graph with the same weight bits each
 * time.  Returns 1 converted, 0 refused (an unsupported-construct error,
 * nothing written), -1 not readable in this build. */
static int realworld_one(const char *path, const char *base)
{
    const char *fmt, *reason;
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    if (gir_detect(path, &fmt, &reason, &err) != GIR_OK || gir_load(path, fmt, NULL, &g, &err) != GIR_OK) {
        print_message("skip %s: not readable in this build (%s)\n", base, err.message ? err.message : "?");
        gir_error_clear(&err);
        return -1;
    }
    int result = 1;
    if (!strcmp(base, "lenet_010000.nnp") || !strcmp(base, "lenet-symbol.json"))
        draw_and_render(g, base);
    for (int embed = 0; embed < 2; embed++) {
        char name[256];
        snprintf(name, sizeof name, "rw_%s%s.relayviz.json", base, embed ? "_embed" : "");
        char *rv = tu_tmp(name);
        gir_options *o = tu_options("force", "1", "embed-weights", embed ? "1" : "0", NULL);
        /* the graph as it is: structure compared below (rewrites are checked by running, in the matrix) */
        gir_options_set(o, "legalize", "0", NULL);
        gir_status st = gir_save(g, rv, "relayviz", o, &err);
        if (st != GIR_OK) {
            if (st != GIR_E_UNSUPPORTED_OP && st != GIR_E_UNSUPPORTED_ATTR && st != GIR_E_UNSUPPORTED)
                fail_msg("%s: writing RelayViz failed with %s: %s", base, gir_status_name(st), err.message);
            assert_false(gir_path_exists(rv));
            gir_error_clear(&err);
            gir_options_free(o);
            free(rv);
            result = 0;
            break;
        }
        /* (Compared after the way back: a reader that infers less, such as
         * MXNet's without input shapes, leaves types unknown that RelayViz
         * Vars and inference fill in.) */
        gir_graph *r = load(rv);
        assert_int_equal(r->n_nodes, g->n_nodes);
        snprintf(name, sizeof name, "rw_back%s_%s", embed ? "_embed" : "", base);
        char *back = tu_tmp(name);
        gir_options *fo = tu_options("force", "1", NULL);
        tu_save(r, back, fmt, fo);
        gir_options_free(fo);
        gir_graph *b = NULL;
        TU_OK(gir_load(back, fmt, NULL, &b, &err), &err);
        assert_same(g, b);
        gir_graph_free(b);
        gir_graph_free(r);
        gir_options_free(o);
        free(back);
        free(rv);
    }
    gir_graph_free(g);
    return result;
}

static void test_realworld_roundtrips(void **state)
{
    (void)state;
    static const char *const dirs[] = { "realworld/lightnet", "realworld/mxnet", "realworld/nnp",
                                        "realworld/nnp-onnx-pairs", "realworld/nnvm", "realworld/tvm" };
    size_t converted = 0, refused = 0, skipped = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char *dir = tu_shared(dirs[d]);
        size_t n;
        char **names = tu_list_files(dir, NULL, NULL, &n);
        if (!names) {
            print_message("skip %s: not found\n", dir);
            free(dir);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const char *nm = names[i];
            if (gir_str_ends_with(nm, ".params") || gir_str_ends_with(nm, ".md") || gir_str_ends_with(nm, ".v0") ||
                gir_str_ends_with(nm, ".wts"))
                continue; /* read through the model file beside it, or not a model */
            char *path = tu_join(dir, names[i]);
            int r = realworld_one(path, names[i]);
            converted += r == 1;
            refused += r == 0;
            skipped += r < 0;
            for (size_t k = 0; k < sizeof must_convert / sizeof must_convert[0]; k++) {
                char *want = tu_shared(must_convert[k].rel);
                if (!strcmp(want, path) && gir_format_find(must_convert[k].format) && r != 1)
                    fail_msg("%s must convert to RelayViz and back", must_convert[k].rel);
                free(want);
            }
            free(path);
        }
        tu_free_list(names, n);
        free(dir);
    }
    print_message("real models: %zu converted and back exactly, %zu refused (constructs Relay cannot express), "
                  "%zu not readable in this build\n",
                  converted, refused, skipped);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_function_var_call_op),
        cmocka_unit_test(test_seed_call_op_string_batch_norm),
        cmocka_unit_test(test_seed_const_scalar_and_array),
        cmocka_unit_test(test_seed_bind),
        cmocka_unit_test(test_seed_tuple_let_tuplegetitem),
        cmocka_unit_test(test_seed_if_constant),
        cmocka_unit_test(test_dead_tuple_field),
        cmocka_unit_test(test_symbolic_dims_and_batch_size),
        cmocka_unit_test(test_unknown_types),
        cmocka_unit_test(test_seed_attribute_variants),
        cmocka_unit_test(test_seed_opaque_operator),
        cmocka_unit_test(test_relayviz_roundtrip_exact),
        cmocka_unit_test(test_writer_layout),
        cmocka_unit_test(test_weights_params_companion),
        cmocka_unit_test(test_weights_embedded),
        cmocka_unit_test(test_params_mismatch),
        cmocka_unit_test(test_float_bits),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_composites),
        cmocka_unit_test(test_every_mapped_op),
        cmocka_unit_test(test_unsupported_listed_at_once),
        cmocka_unit_test(test_existing_outputs),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_dot),
        cmocka_unit_test(test_realworld_roundtrips),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
