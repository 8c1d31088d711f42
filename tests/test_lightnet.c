/* LightNet JSON IR and .wts weights: the real files, the dialect, every
 * refusal with its message and place, the op mapping, the writer, round
 * trips. */
#include "testutil.h"

#include "formats/format.h"
#include "graphir/check.h"
#include "passes/diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static char *tmp;

static int setup(void **state)
{
    (void)state;
    tmp = tu_tempdir();
    return tmp ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(tmp);
    free(tmp);
    return 0;
}

/* ---- helpers -------------------------------------------------------------- */

static gir_status load(const char *path, const gir_options *o, gir_graph **g, gir_error *err)
{
    return gir_load(path, NULL, o, g, err);
}

/* Writes text to TMP/name and returns the path (malloc'd). */
static char *put(const char *name, const char *text)
{
    char *p = tu_join(tmp, name);
    assert_true(tu_write(p, text, strlen(text)));
    return p;
}

/* Loads IR text (as lightnet) from a temporary file. */
static gir_status load_text(const char *text, gir_graph **g, gir_error *err)
{
    char *p = put("t.json", text);
    gir_status st = gir_load(p, "lightnet", NULL, g, err);
    free(p);
    return st;
}

static gir_graph *load_text_ok(const char *text)
{
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(load_text(text, &g, &err), &err);
    gir_error_clear(&err);
    return g;
}

/* Expects the IR text to be refused with code and every substring. */
#define REFUSED(text, code, ...)                                                                                  \
    do {                                                                                                         \
        gir_graph *g_ = NULL;                                                                                    \
        gir_error e_ = GIR_ERROR_INIT;                                                                           \
        gir_status s_ = load_text(text, &g_, &e_);                                                               \
        TU_FAILS(s_, &e_, code, __VA_ARGS__);                                                                    \
        assert_null(g_);                                                                                         \
        assert_int_equal(gir_status_exit_code(s_), code == GIR_E_UNSUPPORTED ? 3 : 2);                           \
        gir_error_clear(&e_);                                                                                    \
    } while (0)

static const gir_node *node(const gir_graph *g, const char *name)
{
    int32_t i = gir_graph_node_index(g, name);
    assert_true(i >= 0);
    return g->nodes[i];
}

static const gir_value *value(const gir_graph *g, const char *name)
{
    int32_t i = gir_graph_value_index(g, name);
    if (i < 0)
        fail_msg("no value '%s'", name);
    return g->values[i];
}

static void assert_shape(const gir_value *v, const char *want)
{
    char b[128];
    assert_string_equal(gir_shape_str(&v->shape, b, sizeof b), want);
}

static void assert_ints(const gir_node *n, const char *attr, const char *want)
{
    const gir_attr *a = gir_attrs_find(&n->attrs, attr);
    assert_non_null(a);
    assert_int_equal(a->type, GIR_ATTR_INTS);
    char b[256];
    size_t o = 0;
    b[0] = '\0';
    for (size_t i = 0; i < a->u.ints.n; i++)
        o += (size_t)snprintf(b + o, sizeof b - o, "%s%lld", i ? "," : "", (long long)a->u.ints.v[i]);
    assert_string_equal(b, want);
}

static const char *meta_str(const gir_attrs *m, const char *key)
{
    const gir_attr *a = gir_attrs_find(m, key);
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}

static bool notes_contain(const gir_graph *g, const char *s)
{
    const gir_attr *a = gir_attrs_find(&g->meta, GIR_META_NOTES);
    for (size_t i = 0; a && i < a->u.strs.n; i++)
        if (strstr(a->u.strs.v[i], s))
            return true;
    return false;
}

static float f32_at(gir_tensor *t, size_t i)
{
    const void *d;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_load(t, &d, &err), &err);
    uint32_t u = gir_le32((const unsigned char *)d + 4 * i);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t bits_at(gir_tensor *t, size_t i)
{
    const void *d;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_load(t, &d, &err), &err);
    return gir_le32((const unsigned char *)d + 4 * i);
}

/* Same graph: structure, attributes, metadata (if asked) and weights,
 * and names unless the graph went through a format that names values its
 * own way (NNVM names outputs after their nodes). */
static void assert_same_named(const gir_graph *a, const gir_graph *b, bool meta, bool names)
{
    tu_assert_same(a, b, names, meta, "read back");
}

static void assert_same(const gir_graph *a, const gir_graph *b, bool meta)
{
    assert_same_named(a, b, meta, true);
}

/* A one-op IR around `op` (JSON of the op object) fed by one create. */
static char *ir1(const char *creates, const char *op)
{
    return gir_strdupf("{\"ops\": [%s%s%s]}", creates, *creates ? ", " : "", op);
}

#define CREATE(name, dtype, dims)                                                                                \
    "{\"name\": \"c_" name "\", \"optype\": \"create\", \"tensors_in\": [], \"tensors_out\": [{\"arg_name\": "   \
    "\"dst\", \"name\": \"" name "\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": \"" dtype "\"}, "     \
    "{\"arg_name\": \"dims\", \"value\": " dims "}, {\"arg_name\": \"ran\", \"value\": [0, 0]}, {\"arg_name\": " \
    "\"data\", \"value\": [0]}, {\"arg_name\": \"from_file\", \"value\": true}]}"

/* ---- the real files ----------------------------------------------------- */

static void all_shapes_known(const gir_graph *g)
{
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (!gir_shape_is_known(&v->shape) || v->shape.rank < 1 || v->dtype == GIR_DT_UNKNOWN)
            fail_msg("value '%s' has no inferred shape or dtype", v->name);
    }
}

static gir_graph *load_real(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "realworld/lightnet/%s", name);
    char *p = tu_shared(rel);
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(load(p, NULL, &g, &err), &err); /* detected by content */
    free(p);
    all_shapes_known(g);
    assert_string_equal(meta_str(&g->meta, "source.format"), "lightnet");
    return g;
}

static void test_real_test_ops(void **state)
{
    (void)state;
    gir_graph *g = load_real("test_ops.json");
    assert_int_equal(g->n_nodes, 7);
    assert_int_equal(g->n_inputs, 0);
    assert_int_equal(g->n_outputs, 0); /* everything ends in a print */
    assert_int_equal(value(g, "create1")->kind, GIR_VALUE_CONST);
    assert_float_equal(f32_at(value(g, "create1")->data, 7), 8.0, 0);
    const gir_node *s = node(g, "slice1");
    assert_int_equal(s->op, GIR_OP_Slice);
    assert_ints(s, "starts", "1");
    assert_ints(s, "ends", "4");
    assert_ints(s, "axes", "1");
    assert_shape(value(g, "slice1"), "[2,3]");
    assert_ints(node(g, "reshape1"), "shape", "3,2");
    assert_int_equal(node(g, "maxreduce1")->op, GIR_OP_ReduceMax);
    assert_ints(node(g, "maxreduce1"), "axes", "0");
    assert_shape(value(g, "maxreduce1_dst"), "[1,2]");
    assert_int_equal(node(g, "elew1")->op, GIR_OP_Mul);
    assert_ints(node(g, "transpose1"), "perm", "1,0");
    assert_shape(value(g, "transpose1"), "[2,1]");
    assert_int_equal(value(g, "zeros1")->kind, GIR_VALUE_CONST);
    assert_string_equal(meta_str(&value(g, "zeros1")->meta, "lightnet.optype"), "zeros");
    const gir_node *p = node(g, "print2");
    assert_int_equal(p->op, GIR_OP_Print);
    assert_int_equal(p->n_out, 0);
    assert_string_equal(gir_attrs_get_string(&p->attrs, "message", NULL), "zeros1");
    assert_null(gir_attrs_find(&p->attrs, "file"));
    gir_graph_free(g);
}

static void test_real_cuda_test(void **state)
{
    (void)state;
    gir_graph *g = load_real("cuda_test.json");
    assert_int_equal(g->n_nodes, 12); /* 11 ops but maxreduce_arg is three nodes; create is a value */
    /* maxreduce_arg = ReduceMax + ArgMax + Cast(int32) */
    const gir_node *rm = node(g, "maxreduce_arg1"), *am = node(g, "maxreduce_arg1/argmax"),
                   *c = node(g, "maxreduce_arg1/cast");
    assert_int_equal(rm->op, GIR_OP_ReduceMax);
    assert_int_equal(am->op, GIR_OP_ArgMax);
    assert_int_equal(gir_attrs_get_int(&am->attrs, "axis", -1), 0);
    assert_int_equal(gir_attrs_get_int(&am->attrs, "keepdims", -1), 1);
    assert_int_equal(gir_attrs_get_int(&am->attrs, "select_last_index", -1), 0);
    assert_int_equal(c->op, GIR_OP_Cast);
    assert_string_equal(gir_attrs_get_string(&c->attrs, "to", ""), "int32");
    assert_int_equal(value(g, "maxreduce_arg1_arg")->dtype, GIR_DT_I32);
    assert_shape(value(g, "maxreduce_arg1_arg"), "[1,2]");
    assert_int_equal(value(g, "maxreduce_arg1_arg/int64")->dtype, GIR_DT_I64);
    /* ran [0, 10]: a reported, reproducible random fill in range */
    const gir_value *cr = value(g, "create1");
    assert_int_equal(cr->kind, GIR_VALUE_CONST);
    for (size_t i = 0; i < 8; i++) {
        float f = f32_at(cr->data, i);
        assert_true(f >= 0 && f <= 10);
    }
    assert_true(notes_contain(g, "uniform random values in [0, 10] from seed 20180101"));
    gir_graph *g2 = load_real("cuda_test.json");
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);
}

static void test_real_squeezedet(void **state)
{
    (void)state;
    gir_graph *g = load_real("squeezedet.json");
    assert_int_equal(g->n_nodes, 101);
    assert_int_equal(g->n_inputs, 1);
    const gir_value *in = g->values[g->inputs[0]];
    assert_string_equal(in->name, "input");
    assert_int_equal(in->kind, GIR_VALUE_INPUT);
    assert_shape(in, "[1,3,384,1248]");
    /* weights from_file without a weight file: weights without data */
    assert_int_equal(value(g, "conv1_conv_wts")->kind, GIR_VALUE_WEIGHT);
    assert_null(value(g, "conv1_conv_wts")->data);
    assert_int_equal(value(g, "anchors")->kind, GIR_VALUE_WEIGHT);
    const gir_node *c = node(g, "conv2d0");
    assert_int_equal(c->op, GIR_OP_Conv);
    assert_ints(c, "kernel_shape", "3,3");
    assert_ints(c, "strides", "2,2");
    assert_ints(c, "pads", "1,1,1,1");
    assert_ints(c, "dilations", "1,1");
    assert_shape(gir_out(g, c, 0), "[1,64,192,624]");
    assert_int_equal(node(g, "transform_bboxSQD0")->op, GIR_OP_SqueezeDetBoxDecode);
    assert_int_equal(gir_attrs_get_int(&node(g, "transform_bboxSQD0")->attrs, "x_shift", 0), -20);
    const gir_node *s = node(g, "sort1d_by_key0");
    assert_int_equal(s->op, GIR_OP_Sort);
    assert_int_equal(gir_attrs_get_int(&s->attrs, "descending", -1), 1);
    assert_int_equal(node(g, "rearange0")->op, GIR_OP_RangeFill);
    assert_int_equal(node(g, "pick1d2")->op, GIR_OP_GatherBlocks);
    assert_int_equal(gir_attrs_get_int(&node(g, "pick1d2")->attrs, "block_size", 0), 4);
    assert_int_equal(g->n_outputs, 4);
    assert_string_equal(g->values[g->outputs[0]]->name, "sort_conf1d");
    assert_shape(value(g, "final_bbox"), "[256]");
    assert_int_equal(value(g, "final_class")->dtype, GIR_DT_I32);
    assert_shape(value(g, "final_class"), "[64]");
    gir_graph_free(g);
}

static void test_real_shufflenetv2(void **state)
{
    (void)state;
    gir_graph *g = load_real("shufflenetv2.json");
    assert_int_equal(g->n_nodes, 243);
    assert_int_equal(g->n_inputs, 1);
    assert_int_equal(g->n_outputs, 1);
    assert_string_equal(g->values[g->outputs[0]]->name, "pred");
    assert_shape(value(g, "pred"), "[1001]");
    size_t bn = 0, conv = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        bn += g->nodes[i]->op == GIR_OP_BatchNormalization;
        conv += g->nodes[i]->op == GIR_OP_Conv;
    }
    assert_int_equal(bn, 56);
    assert_int_equal(conv, 57);
    gir_graph_free(g);
}

static void refused_real(const char *name, gir_status code, const char *a, const char *b, const char *c)
{
    char rel[128];
    snprintf(rel, sizeof rel, "realworld/lightnet/%s", name);
    char *p = tu_shared(rel);
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    gir_status st = load(p, NULL, &g, &err);
    TU_FAILS(st, &err, code, name, a, b, c);
    assert_int_equal(gir_status_exit_code(st), 2);
    assert_null(g);
    gir_error_clear(&err);
    free(p);
}

static void test_real_invalid(void **state)
{
    (void)state;
    refused_real("test.json", GIR_E_SCHEMA, "/ops/0/params (line 6:", "node 'create0'",
                 "create needs 5 params (dtype, dims, ran, data, from_file), but gets 3");
    refused_real("op_outdated.json", GIR_E_SCHEMA, "/ops/0/params (line 11:23)", "node 'create1'",
                 "create needs 5 params (dtype, dims, ran, data, from_file), but gets 3");
    refused_real("squeezedet_invalid.json", GIR_E_SYNTAX, "line 199:5", "malformed JSON", "[syntax]");
}


static int probe_file(const char *rel, bool shared)
{
    char *p = shared ? tu_shared(rel) : tu_testdata(rel);
    unsigned char head[GIR_PROBE_BYTES];
    size_t n = 0;
    TU_OK(gir_read_head(p, head, sizeof head, &n, NULL), NULL);
    int score = gir_format_find("lightnet")->probe(head, n, p);
    free(p);
    return score;
}

static void test_probe(void **state)
{
    (void)state;
    assert_int_equal(probe_file("realworld/lightnet/squeezedet.json", true), 95);
    assert_int_equal(probe_file("realworld/lightnet/test_ops.json", true), 95);
    assert_int_equal(probe_file("realworld/lightnet/squeezedet_invalid.json", true), 95); /* then refused */
    assert_int_equal(probe_file("lightnet/tiny.json", false), 95);                          /* after a comment */
    static const char *const others[] = {
        "realworld/mxnet/lenet-symbol.json", "realworld/mxnet/save_000800.json",
        "realworld/mxnet/vgg_dnnl_model1.json", "realworld/tvm/wrn_fc.json",
        "realworld/tvm/relay_deploy_graph.json", "realworld/nnvm/lenet_nnvm_graph.json",
        "realworld/nnp/lenet_010000.nnp",
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (probe_file(others[i], true) != 0)
            fail_msg("the lightnet probe claims %s", others[i]);
}

/* ---- round trips -------------------------------------------------------- */

static gir_graph *roundtrip(const gir_graph *g, const char *name, const gir_options *wo)
{
    char *p = tu_join(tmp, name);
    gir_error err = GIR_ERROR_INIT;
    tu_save(g, p, "lightnet", wo);
    gir_graph *g2 = NULL;
    TU_OK(gir_load(p, NULL, NULL, &g2, &err), &err);
    free(p);
    return g2;
}

static void test_roundtrip_real(void **state)
{
    (void)state;
    static const char *const files[] = { "test_ops.json", "cuda_test.json", "squeezedet.json", "shufflenetv2.json" };
    for (size_t i = 0; i < 4; i++) {
        gir_graph *g = load_real(files[i]);
        char name[64];
        snprintf(name, sizeof name, "rt_%zu.json", i);
        gir_graph *g2 = roundtrip(g, name, NULL);
        assert_same(g, g2, true);
        /* writing is deterministic and a fixed point */
        snprintf(name, sizeof name, "rt2_%zu.json", i);
        gir_graph *g3 = roundtrip(g2, name, NULL);
        char *a = gir_strdupf("%s/rt_%zu.json", tmp, i), *b = gir_strdupf("%s/rt2_%zu.json", tmp, i);
        assert_true(tu_files_equal(a, b));
        free(a);
        free(b);
        gir_graph_free(g3);
        gir_graph_free(g2);
        gir_graph_free(g);
    }
}

static void test_wts_roundtrip(void **state)
{
    (void)state;
    char *json = tu_testdata("lightnet/tiny.json"), *wts = tu_testdata("lightnet/tiny.wts");
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(load(json, NULL, &g, &err), &err); /* tiny.wts found by its stem */
    const gir_value *w = value(g, "conv_w"), *q = value(g, "q"), *in = value(g, "input");
    assert_int_equal(w->kind, GIR_VALUE_WEIGHT);
    assert_int_equal(in->kind, GIR_VALUE_INPUT);
    assert_int_equal(q->kind, GIR_VALUE_WEIGHT); /* read as data by print, but the .wts has it */
    assert_int_equal(bits_at(w->data, 2), 0x3f99999au);
    assert_int_equal(bits_at(w->data, 6), 0x80000000u); /* -0.0 kept */
    assert_float_equal(f32_at(w->data, 1), -1.25, 0);
    const void *d;
    TU_OK(gir_tensor_load(q->data, &d, &err), &err);
    assert_int_equal(((const int8_t *)d)[0], -1);
    assert_int_equal(((const int8_t *)d)[2], -128);
    assert_int_equal(((const int8_t *)d)[3], 127);
    /* written back: the .wts is byte for byte the same */
    char *out = tu_join(tmp, "tiny_out.json"), *out_wts = tu_join(tmp, "tiny_out.wts");
    tu_save(g, out, "lightnet", NULL);
    assert_true(tu_files_equal(out_wts, wts));
    gir_graph *g2 = NULL;
    TU_OK(load(out, NULL, &g2, &err), &err);
    assert_same(g, g2, true);
    /* --params names the weight file on both sides */
    gir_options *o = gir_options_new();
    char *other = tu_join(tmp, "weights.txt");
    TU_OK(gir_options_set(o, "params", other, &err), &err);
    char *out3 = tu_join(tmp, "tiny3.json");
    tu_save(g, out3, "lightnet", o);
    assert_true(tu_files_equal(other, wts));
    gir_graph *g3 = NULL;
    TU_OK(load(out3, o, &g3, &err), &err);
    assert_same(g, g3, true);
    /* inline-weights: no .wts, data inline, same graph values */
    gir_options *o2 = gir_options_new();
    TU_OK(gir_options_set(o2, "inline-weights", "1", &err), &err);
    char *out4 = tu_join(tmp, "tiny4.json"), *out4w = tu_join(tmp, "tiny4.wts");
    tu_save(g, out4, "lightnet", o2);
    assert_false(gir_path_exists(out4w));
    gir_graph *g4 = NULL;
    TU_OK(load(out4, NULL, &g4, &err), &err);
    bool eq = false;
    TU_OK(gir_tensor_equal(value(g4, "conv_w")->data, w->data, &eq, &err), &err);
    assert_true(eq);
    assert_int_equal(value(g4, "conv_w")->kind, GIR_VALUE_CONST);
    gir_graph_free(g4);
    gir_graph_free(g3);
    gir_graph_free(g2);
    gir_graph_free(g);
    gir_options_free(o);
    gir_options_free(o2);
    free(out4);
    free(out4w);
    free(out3);
    free(other);
    free(out);
    free(out_wts);
    free(json);
    free(wts);
}

/* A copy of tiny.json in TMP with the given .wts text beside it. */
static gir_status load_with_wts(const char *wts_text, gir_graph **g, gir_error *err)
{
    char *src = tu_testdata("lightnet/tiny.json");
    size_t len;
    char *text = tu_slurp(src, &len);
    char *p = put("w.json", text), *wp = put("w.wts", wts_text);
    gir_status st = gir_load(p, NULL, NULL, g, err);
    free(p);
    free(wp);
    free(text);
    free(src);
    return st;
}

#define WTS_REFUSED(text, ...)                                                                                    \
    do {                                                                                                         \
        gir_graph *g_ = NULL;                                                                                    \
        gir_error e_ = GIR_ERROR_INIT;                                                                           \
        gir_status s_ = load_with_wts(text, &g_, &e_);                                                           \
        TU_FAILS(s_, &e_, GIR_E_PARAMS, "w.wts: ", __VA_ARGS__);                                                 \
        assert_int_equal(gir_status_exit_code(s_), 2);                                                           \
        assert_null(g_);                                                                                         \
        gir_error_clear(&e_);                                                                                    \
    } while (0)

static void test_wts_errors(void **state)
{
    (void)state;
    WTS_REFUSED("", "the file must start with the record count, found nothing");
    WTS_REFUSED("x\n", "line 1", "the file must start with the record count");
    WTS_REFUSED("-1\n", "negative record count -1");
    WTS_REFUSED("2\nconv_b 0 2 3dcccccd be4ccccd\n", "line 3", "the count says 2 records but the file holds 1");
    WTS_REFUSED("1\nconv_b 0 3 3dcccccd be4ccccd 0\n", "line 2", "node 'create_b'",
                "weight 'conv_b': length 3 does not match the tensor's 2 elements");
    WTS_REFUSED("1\nconv_b 0 2 3dcccccd zz\n", "line 2", "node 'create_b'", "weight 'conv_b': value 2 of 2 is 'zz', not a float32 hex value");
    WTS_REFUSED("1\nconv_b 0 2 3dcccccd 1234567890\n", "value 2 of 2 is '1234567890'");
    WTS_REFUSED("1\nconv_b 0 2 3dcccccd\n", "weight 'conv_b': the file ends after 1 of its 2 values");
    WTS_REFUSED("1\nconv_b 1 2 0 0\n", "weight 'conv_b': type 1 is not supported (half");
    WTS_REFUSED("1\nconv_b 2 2 00 01\n", "weight 'conv_b': int8 values (type 2) for a TL_FLOAT tensor");
    WTS_REFUSED("1\nq 2 4 ff 01 80 100\n", "weight 'q': value 4 of 4 is '100', not a int8 hex value");
    WTS_REFUSED("1\nconv_b x 2\n", "weight 'conv_b': its type and length must follow its name");
    WTS_REFUSED("1\nconv_b 0 -2\n", "weight 'conv_b': negative length -2");
    /* records naming no tensor are skipped to the end of the line, as in
     * LightNet, and reported; extra records after COUNT are ignored */
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(load_with_wts("2\nunused 0 1 00000000\nconv_b 0 2 0x3dcccccd BE4CCCCD\nconv_w junk\n", &g, &err), &err);
    assert_int_equal(bits_at(value(g, "conv_b")->data, 1), 0xbe4ccccdu);
    assert_true(notes_contain(g, "1 record names no tensor of the model and is skipped like LightNet does (first: "
                                 "unused)"));
    assert_null(value(g, "conv_w")->data); /* no record: a weight without data */
    assert_int_equal(value(g, "conv_w")->kind, GIR_VALUE_WEIGHT);
    gir_graph_free(g);
    /* the tensor is loaded lazily: a file changed since is caught then */
    char *src = tu_testdata("lightnet/tiny.json");
    gir_graph *g2 = NULL;
    TU_OK(load_with_wts("1\nconv_b 0 2 3dcccccd be4ccccd\n", &g2, &err), &err);
    char *wp = tu_join(tmp, "w.wts");
    struct stat before;
    assert_int_equal(stat(wp, &before), 0);
    free(put("w.wts", "1\nconv_b 0 2 3dcccccd beXccccd\n"));
    const void *d;
    TU_FAILS(gir_tensor_load(value(g2, "conv_b")->data, &d, &err), &err, GIR_E_IO,
             "the weight file was rewritten after the model was read");
    gir_error_clear(&err);
    /* rewritten with the same size and modification time (within one clock
     * tick, say): the record itself no longer parses, and says so */
    struct timespec times[2] = { before.st_atim, before.st_mtim };
    assert_int_equal(utimensat(AT_FDCWD, wp, times, 0), 0);
    TU_FAILS(gir_tensor_load(value(g2, "conv_b")->data, &d, &err), &err, GIR_E_PARAMS,
             "weight 'conv_b' changed since the file was first read");
    gir_error_clear(&err);
    gir_graph_free(g2);
    free(wp);
    free(src);
}

/* ---- the JSON dialect -------------------------------------------------------- */

static const char *const slice_ir =
    "{\"ops\": [" CREATE("x", "TL_FLOAT", "[2, 4]") ", {\"name\": \"s\", \"optype\": \"slice\", \"tensors_in\": "
    "[{\"arg_name\": \"src\", \"name\": \"x\"}], \"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], "
    "\"params\": [{\"arg_name\": \"axis\", \"value\": 1}, {\"arg_name\": \"start\", \"value\": 1}, "
    "{\"arg_name\": \"len\", \"value\": 2.9}]}]}";

static void test_dialect(void **state)
{
    (void)state;
    gir_graph *g = load_text_ok(slice_ir);
    assert_ints(node(g, "s"), "ends", "3"); /* 2.9 truncates to 2, like LightNet's int slot */
    gir_graph_free(g);
    /* comments, case-insensitive keys, first duplicate wins, trailing text, BOM */
    g = load_text_ok("\xef\xbb\xbf// leading comment\n{\"OPS\": /* block\n comment */ [{\"NAME\": \"c\", \"OpType\": "
                     "\"zeros\", \"Tensors_In\": [], \"tensors_out\": [{\"Arg_Name\": \"dst\", \"name\": \"z\", "
                     "\"name\": \"ignored\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": \"TL_INT32\"}, "
                     "{\"arg_name\": \"dims\", \"value\": [3], \"VALUE\": [4]}]}], \"extra\": 1} trailing garbage");
    assert_shape(value(g, "z"), "[3]");
    assert_int_equal(value(g, "z")->dtype, GIR_DT_I32);
    gir_graph_free(g);
    /* enum strings stay case-sensitive */
    REFUSED("{\"ops\": [{\"name\": \"c\", \"optype\": \"zeros\", \"tensors_in\": [], \"tensors_out\": [{\"arg_name\": "
            "\"dst\", \"name\": \"z\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": \"tl_int32\"}, "
            "{\"arg_name\": \"dims\", \"value\": [3]}]}]}",
            GIR_E_DTYPE, "/ops/0/params/0/value", "param `dtype` is \"tl_int32\", not a TensorLight dtype");
    /* a trailing comma is an error, as in cJSON */
    REFUSED("{\"ops\": [],}", GIR_E_SYNTAX, "line 1:12", "malformed JSON");
    REFUSED("{\"ops\": [] /* never closed", GIR_E_SYNTAX, "line 1:12", "unterminated comment");
    REFUSED("", GIR_E_SYNTAX, "the file is empty");
    /* LightNet's comment pre-pass ignores backslashes: after \" a later //
     * inside a string is taken for a comment (an error in LightNet too) */
    REFUSED("{\"ops\": [{\"name\": \"a\\\"b // c\", \"optype\": \"x\"}]}", GIR_E_SYNTAX,
            "JSON text ends early");
    /* an empty ops list is a valid, empty model */
    g = load_text_ok("{\"ops\": []}");
    assert_int_equal(g->n_nodes, 0);
    gir_graph_free(g);
    /* memory-planned IR reads as plain IR */
    g = load_text_ok("{\"mem_sizes_h\": [0, 0], \"mem_sizes_l\": [0, 64], \"ops\": [{\"name\": \"c\", \"optype\": "
                     "\"zeros_cpu\", \"tensors_in\": [], \"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"z\", "
                     "\"dims\": [3], \"offset_h\": 0, \"offset_l\": 1}], \"params\": [{\"arg_name\": \"dtype\", "
                     "\"value\": \"TL_FLOAT\"}, {\"arg_name\": \"dims\", \"value\": [3]}]}]}");
    assert_true(notes_contain(g, "the memory plan (mem_sizes_h/_l, tensor offsets) is ignored"));
    assert_string_equal(meta_str(&value(g, "z")->meta, "lightnet.optype"), "zeros_cpu");
    gir_graph_free(g);
    REFUSED("{\"mem_sizes_h\": [0, 0, 0], \"mem_sizes_l\": [0, 0], \"ops\": []}", GIR_E_SCHEMA, "/mem_sizes_h",
            "the length of 'mem_sizes_h' (3) is not equal to that of 'mem_sizes_l' (2)");
    REFUSED("{\"mem_sizes_h\": [0, 0], \"ops\": []}", GIR_E_SCHEMA, "'mem_sizes_h' and 'mem_sizes_l' should both be arrays");
}

/* ---- parse and pre_run refusals --------------------------------------------- */

static void test_parse_errors(void **state)
{
    (void)state;
    REFUSED("[1]", GIR_E_SCHEMA, "the top level should be an object with an \"ops\" item");
    REFUSED("{\"ops\": {}}", GIR_E_SCHEMA, "/ops (line 1:9)", "item \"ops\" has to be an array, not an object");
    REFUSED("{\"ops\": [1]}", GIR_E_SCHEMA, "/ops/0 (line 1:10)", "ops[0] has no \"name\" key (it is not an object)");
    REFUSED("{\"ops\": [{\"name\": 3}]}", GIR_E_SCHEMA, "/ops/0", "ops[0]'s \"name\" is not a string");
    REFUSED("{\"ops\": [{\"name\": \"a\"}]}", GIR_E_SCHEMA, "node 'a'", "op a has no \"optype\" key");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [], \"tensors_out\": []}]}",
            GIR_E_SCHEMA, "op a has no \"params\" key");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": {}, \"tensors_out\": [], "
            "\"params\": []}]}",
            GIR_E_SCHEMA, "/ops/0/tensors_in", "op a's \"tensors_in\" is not an array");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [{\"name\": \"x\"}], "
            "\"tensors_out\": [], \"params\": []}]}",
            GIR_E_SCHEMA, "/ops/0/tensors_in/0", "one of op a's input tensors has no \"arg_name\" key (tensor index 0)");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [], \"tensors_out\": "
            "[{\"arg_name\": \"dst\"}], \"params\": []}]}",
            GIR_E_SCHEMA, "/ops/0/tensors_out/0", "op a's tensor `dst` has no \"name\" key");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [], \"tensors_out\": [], "
            "\"params\": [{\"arg_name\": \"p\"}]}]}",
            GIR_E_SCHEMA, "/ops/0/params/0", "op a's param `p` has no \"value\" key");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [], \"tensors_out\": [], "
            "\"params\": [{\"arg_name\": \"p\", \"value\": {}}]}]}",
            GIR_E_SCHEMA, "/ops/0/params/0/value (line 1:", "param `p`'s value is an object");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [], \"tensors_out\": [], "
            "\"params\": [{\"arg_name\": \"p\", \"value\": []}]}]}",
            GIR_E_SCHEMA, "param `p`'s value is an empty array");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [], \"tensors_out\": [], "
            "\"params\": [{\"arg_name\": \"p\", \"value\": [1, \"x\"]}]}]}",
            GIR_E_SCHEMA, "param `p`'s value mixes JSON types: element index 1 is a string, element 0 a number");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"relu\", \"tensors_in\": [], \"tensors_out\": [], "
            "\"params\": [{\"arg_name\": \"p\", \"value\": [null]}]}]}",
            GIR_E_SCHEMA, "param `p`'s value holds null at element index 0");
    REFUSED("{\"ops\": [{\"name\": \"a\", \"optype\": \"tanh\", \"tensors_in\": [], \"tensors_out\": [], "
            "\"params\": []}]}",
            GIR_E_SCHEMA, "/ops/0/optype", "op a's optype tanh is not registered in LightNet");
    /* pre_run: counts, names, types, single assignment, order */
    char *t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]"),
                  "{\"name\": \"r\", \"optype\": \"relu\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"y\"}], "
                  "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"z\"}], \"params\": []}");
    REFUSED(t, GIR_E_REFERENCE, "/ops/1/tensors_in/0/name", "node 'r'",
            "input `src` reads tensor 'y', which no earlier op writes (ops must be in execution order)");
    free(t);
    t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]"),
            "{\"name\": \"r\", \"optype\": \"relu\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"x\"}], \"params\": []}");
    REFUSED(t, GIR_E_DUPLICATE, "/ops/1/tensors_out/0/name", "output `dst` writes tensor 'x', which op 'c_x' already "
            "writes");
    free(t);
    t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]"),
            "{\"name\": \"c_x\", \"optype\": \"relu\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": []}");
    REFUSED(t, GIR_E_DUPLICATE, "/ops/1/name", "two ops are named 'c_x' (ops 0 and 1; LightNet aborts on this)");
    free(t);
    t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]"),
            "{\"name\": \"r\", \"optype\": \"relu\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"p\", "
            "\"value\": 1}]}");
    REFUSED(t, GIR_E_SCHEMA, "/ops/1/params", "relu needs 0 params, but gets 1");
    free(t);
    t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]"),
            "{\"name\": \"r\", \"optype\": \"relu\", \"tensors_in\": [{\"arg_name\": \"input\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": []}");
    REFUSED(t, GIR_E_SCHEMA, "relu needs a `src` input tensor");
    free(t);
    t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]"),
            "{\"name\": \"s\", \"optype\": \"slice\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"axis\", "
            "\"value\": \"1\"}, {\"arg_name\": \"start\", \"value\": 0}, {\"arg_name\": \"len\", \"value\": 1}]}");
    REFUSED(t, GIR_E_ATTRIBUTE, "/ops/1/params/0/value", "param `axis` should be a number, but is a string");
    free(t);
    t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]"),
            "{\"name\": \"s\", \"optype\": \"slice\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"axis\", "
            "\"value\": 1}, {\"arg_name\": \"start\", \"value\": 2}, {\"arg_name\": \"len\", \"value\": 2}]}");
    REFUSED(t, GIR_E_ATTRIBUTE, "/ops/1/params/2/value", "param `len` should be > 0 and start + len <= 3");
    free(t);
    t = ir1(CREATE("x", "TL_FLOAT", "[2, 3]") ", " CREATE("y", "TL_FLOAT", "[3, 2]"),
            "{\"name\": \"e\", \"optype\": \"elew\", \"tensors_in\": [{\"arg_name\": \"src1\", \"name\": \"x\"}, "
            "{\"arg_name\": \"src2\", \"name\": \"y\"}], \"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"z\"}], "
            "\"params\": [{\"arg_name\": \"elew_op\", \"value\": \"TL_ADD\"}]}");
    REFUSED(t, GIR_E_SHAPE, "tensor `src1`([2,3]) and tensor `src2`([3,2]) should have the same shape");
    free(t);
    REFUSED("{\"ops\": [{\"name\": \"c\", \"optype\": \"create\", \"tensors_in\": [], \"tensors_out\": "
            "[{\"arg_name\": \"dst\", \"name\": \"x\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": "
            "\"TL_FLOAT\"}, {\"arg_name\": \"dims\", \"value\": [2, 0]}, {\"arg_name\": \"ran\", \"value\": [0, 0]}, "
            "{\"arg_name\": \"data\", \"value\": [0]}, {\"arg_name\": \"from_file\", \"value\": false}]}]}",
            GIR_E_ATTRIBUTE, "/ops/0/params/1/value", "param `dims`[1] should be >= 1, but gets 0");
    REFUSED("{\"ops\": [{\"name\": \"c\", \"optype\": \"create\", \"tensors_in\": [], \"tensors_out\": "
            "[{\"arg_name\": \"dst\", \"name\": \"x\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": "
            "\"TL_FLOAT\"}, {\"arg_name\": \"dims\", \"value\": [2]}, {\"arg_name\": \"ran\", \"value\": [0, 0]}, "
            "{\"arg_name\": \"data\", \"value\": [1, 2, 3]}, {\"arg_name\": \"from_file\", \"value\": false}]}]}",
            GIR_E_ATTRIBUTE, "param `data` has 3 values but the tensor has only 2 elements");
    REFUSED("{\"ops\": [{\"name\": \"c\", \"optype\": \"create\", \"tensors_in\": [], \"tensors_out\": "
            "[{\"arg_name\": \"dst\", \"name\": \"x\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": "
            "\"TL_FLOAT\"}, {\"arg_name\": \"dims\", \"value\": [2]}, {\"arg_name\": \"ran\", \"value\": [3, 1]}, "
            "{\"arg_name\": \"data\", \"value\": [0]}, {\"arg_name\": \"from_file\", \"value\": false}]}]}",
            GIR_E_ATTRIBUTE, "param `ran` should satisfy ran[0] <= ran[1], but is [3, 1]");
    /* in-place aliasing that value semantics cannot express */
    t = ir1(CREATE("k", "TL_FLOAT", "[5]"),
            "{\"name\": \"s\", \"optype\": \"sort1d\", \"tensors_in\": [{\"arg_name\": \"src_key\", \"name\": \"k\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst_key\", \"name\": \"ks\"}], \"params\": [{\"arg_name\": \"dir\", "
            "\"value\": \"TL_SORT_DIR_ASCENDING\"}]}, {\"name\": \"p\", \"optype\": \"print\", \"tensors_in\": "
            "[{\"arg_name\": \"src\", \"name\": \"k\"}], \"tensors_out\": [], \"params\": [{\"arg_name\": \"msg\", "
            "\"value\": \"k\"}]}");
    REFUSED(t, GIR_E_UNSUPPORTED, "node 'p'", "reads tensor 'k' after op 's' (sort1d) overwrote its memory in place");
    free(t);
}

/* ---- operator mapping --------------------------------------------------------- */

static void test_op_mapping(void **state)
{
    (void)state;
    /* conv2d with SAME_UPPER autopad: explicit pads, the original kept */
    char *t = ir1(CREATE("x", "TL_FLOAT", "[1, 2, 5, 5]") ", " CREATE("w", "TL_FLOAT", "[4, 1, 3, 3]") ", " CREATE(
                      "b", "TL_FLOAT", "[4]"),
                  "{\"name\": \"conv\", \"optype\": \"conv2d_cuda\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": "
                  "\"x\"}, {\"arg_name\": \"weight\", \"name\": \"w\"}, {\"arg_name\": \"bias\", \"name\": \"b\"}], "
                  "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"group\", "
                  "\"value\": 2}, {\"arg_name\": \"size\", \"value\": [3, 3]}, {\"arg_name\": \"stride\", \"value\": "
                  "[2, 2]}, {\"arg_name\": \"dilation\", \"value\": [1, 1]}, {\"arg_name\": \"padding\", \"value\": "
                  "[0, 0, 0, 0]}, {\"arg_name\": \"autopad\", \"value\": \"SAME_UPPER\"}]}");
    gir_graph *g = load_text_ok(t);
    free(t);
    const gir_node *c = node(g, "conv");
    assert_int_equal(c->op, GIR_OP_Conv);
    assert_ints(c, "pads", "1,1,1,1");
    assert_int_equal(gir_attrs_get_int(&c->attrs, "group", 0), 2);
    assert_shape(value(g, "y"), "[1,4,3,3]");
    assert_string_equal(meta_str(&c->meta, "lightnet.variant"), "cuda");
    assert_string_equal(meta_str(&c->meta, "lightnet.autopad"), "SAME_UPPER");
    /* the inputs are from_file: x is read as data (an input), w and b through weight args */
    assert_int_equal(value(g, "x")->kind, GIR_VALUE_INPUT);
    assert_int_equal(value(g, "w")->kind, GIR_VALUE_WEIGHT);
    gir_graph *g2 = roundtrip(g, "conv.json", NULL);
    assert_same(g, g2, false);
    assert_string_equal(meta_str(&node(g2, "conv")->meta, "lightnet.optype"), "conv2d");
    gir_graph_free(g2);
    gir_options *o = gir_options_new();
    TU_OK(gir_options_set(o, "keep-variants", "1", NULL), NULL);
    g2 = roundtrip(g, "conv_v.json", o);
    assert_same(g, g2, true);
    gir_options_free(o);
    gir_graph_free(g2);
    gir_graph_free(g);

    /* pooling SAME_UPPER uses the N and C dims, like LightNet */
    t = ir1(CREATE("x", "TL_FLOAT", "[1, 4, 6, 6]"),
            "{\"name\": \"p\", \"optype\": \"maxpool2d\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"size\", "
            "\"value\": [3, 3]}, {\"arg_name\": \"stride\", \"value\": [1, 1]}, {\"arg_name\": \"padding\", "
            "\"value\": [0, 0, 0, 0]}, {\"arg_name\": \"autopad\", \"value\": \"SAME_UPPER\"}]}");
    g = load_text_ok(t);
    free(t);
    assert_ints(node(g, "p"), "pads", "1,1,1,1"); /* from in = 1 and 4, not 6 */
    assert_ints(node(g, "p"), "dilations", "1,1");
    assert_shape(value(g, "y"), "[1,4,6,6]");
    g2 = roundtrip(g, "pool.json", NULL);
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);

    /* lrelu negslope through the float slot: negative becomes FLT_MIN */
    t = ir1(CREATE("x", "TL_FLOAT", "[3]"),
            "{\"name\": \"l\", \"optype\": \"lrelu\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"negslope\", "
            "\"value\": -0.5}]}");
    g = load_text_ok(t);
    free(t);
    assert_int_equal(node(g, "l")->op, GIR_OP_LeakyRelu);
    assert_true(gir_attrs_get_float(&node(g, "l")->attrs, "alpha", 0) == (double)1.17549435e-38f);
    assert_true(notes_contain(g, "`negslope` -0.5 is read by LightNet as the float 1.17549435e-38"));
    g2 = roundtrip(g, "lrelu.json", NULL);
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);

    /* upsample: sizes = floorf(scale * dim); resize; TL_LINEAR refused */
    t = ir1(CREATE("x", "TL_FLOAT", "[1, 2, 3, 3]"),
            "{\"name\": \"u\", \"optype\": \"upsample\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"mode\", "
            "\"value\": \"TL_NEAREST\"}, {\"arg_name\": \"scales\", \"value\": [1, 1, 1.5, 2]}]}");
    g = load_text_ok(t);
    const gir_node *u = node(g, "u");
    assert_int_equal(u->op, GIR_OP_Resize);
    assert_ints(u, "sizes", "1,2,4,6");
    assert_string_equal(gir_attrs_get_string(&u->attrs, "coordinate_transformation_mode", ""), "half_pixel");
    assert_string_equal(gir_attrs_get_string(&u->attrs, "nearest_mode", ""), "round_prefer_ceil");
    g2 = roundtrip(g, "up.json", NULL);
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    char *lin = strstr(t, "TL_NEAREST");
    memcpy(lin, "TL_LINEAR\" ", 11);
    REFUSED(t, GIR_E_UNSUPPORTED, "/ops/1/params/0/value", "mode TL_LINEAR passes LightNet's checks but TensorLight has "
            "no linear resize");
    free(t);

    /* concat needs equal dims off the axis */
    t = ir1(CREATE("a", "TL_FLOAT", "[1, 2, 3]") ", " CREATE("b", "TL_FLOAT", "[1, 5, 3]"),
            "{\"name\": \"k\", \"optype\": \"concat\", \"tensors_in\": [{\"arg_name\": \"src1\", \"name\": \"a\"}, "
            "{\"arg_name\": \"src2\", \"name\": \"b\"}], \"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"y\"}], "
            "\"params\": [{\"arg_name\": \"axis\", \"value\": 1}]}");
    g = load_text_ok(t);
    assert_shape(value(g, "y"), "[1,7,3]");
    gir_graph_free(g);
    free(t);

    /* deconv2d: ONNX ConvTranspose layout and output size */
    t = ir1(CREATE("x", "TL_FLOAT", "[1, 2, 4, 4]") ", " CREATE("w", "TL_FLOAT", "[2, 3, 3, 3]") ", " CREATE(
                "b", "TL_FLOAT", "[3]"),
            "{\"name\": \"d\", \"optype\": \"deconv2d\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"x\"}, "
            "{\"arg_name\": \"weight\", \"name\": \"w\"}, {\"arg_name\": \"bias\", \"name\": \"b\"}], \"tensors_out\": "
            "[{\"arg_name\": \"dst\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"group\", \"value\": 1}, "
            "{\"arg_name\": \"size\", \"value\": [3, 3]}, {\"arg_name\": \"stride\", \"value\": [2, 2]}, "
            "{\"arg_name\": \"output_dims\", \"value\": [0, 0, 0, 0]}, {\"arg_name\": \"padding\", \"value\": "
            "[1, 1, 1, 1]}, {\"arg_name\": \"output_padding\", \"value\": [1, 1]}, {\"arg_name\": \"dilation\", "
            "\"value\": [1, 1]}, {\"arg_name\": \"autopad\", \"value\": \"NOTSET\"}]}");
    g = load_text_ok(t);
    free(t);
    assert_int_equal(node(g, "d")->op, GIR_OP_ConvTranspose);
    assert_shape(value(g, "y"), "[1,3,8,8]");
    assert_ints(node(g, "d"), "output_padding", "1,1");
    g2 = roundtrip(g, "deconv.json", NULL);
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);

    /* arange, submean, dot_product, gather, scatter, batchnorm */
    t = ir1("{\"name\": \"ar\", \"optype\": \"arange\", \"tensors_in\": [], \"tensors_out\": [{\"arg_name\": \"dst\", "
            "\"name\": \"r\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": \"TL_INT32\"}, {\"arg_name\": "
            "\"start\", \"value\": 1}, {\"arg_name\": \"stop\", \"value\": 2.6}, {\"arg_name\": \"step\", \"value\": "
            "0.5}]}, " CREATE("img", "TL_UINT8", "[4, 5, 3]"),
            "{\"name\": \"sm\", \"optype\": \"submean\", \"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"img\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"chw\"}], \"params\": [{\"arg_name\": \"mean\", "
            "\"value\": [1, 2, 3.5]}, {\"arg_name\": \"dtype\", \"value\": \"TL_FLOAT\"}]}, {\"name\": \"dp\", "
            "\"optype\": \"dot_product\", \"tensors_in\": [{\"arg_name\": \"src1\", \"name\": \"r\"}, {\"arg_name\": "
            "\"src2\", \"name\": \"r\"}], \"tensors_out\": [{\"arg_name\": \"dst\", \"name\": \"dot\"}], \"params\": []}, "
            "{\"name\": \"ga\", \"optype\": \"gather\", \"tensors_in\": [{\"arg_name\": \"src1\", \"name\": \"chw\"}, "
            "{\"arg_name\": \"src2\", \"name\": \"chw\"}], \"tensors_out\": [{\"arg_name\": \"dst\", \"name\": "
            "\"st\"}], \"params\": []}, {\"name\": \"sc\", \"optype\": \"scatter\", \"tensors_in\": [{\"arg_name\": "
            "\"src\", \"name\": \"st\"}], \"tensors_out\": [{\"arg_name\": \"dst1\", \"name\": \"u1\"}, "
            "{\"arg_name\": \"dst2\", \"name\": \"u2\"}], \"params\": []}");
    g = load_text_ok(t);
    free(t);
    const gir_value *r = value(g, "r");
    assert_shape(r, "[4]");
    const void *d;
    TU_OK(gir_tensor_load(r->data, &d, NULL), NULL);
    assert_int_equal(((const int32_t *)d)[3], 2); /* 2.5 truncates */
    assert_shape(value(g, "chw"), "[3,4,5]");
    assert_int_equal(value(g, "chw")->dtype, GIR_DT_F32);
    assert_int_equal(node(g, "sm")->op, GIR_OP_SubMean);
    assert_string_equal(gir_attrs_get_string(&node(g, "sm")->attrs, "to", ""), "float32");
    assert_shape(value(g, "dot"), "[1]");
    assert_shape(value(g, "st"), "[2,3,4,5]");
    assert_int_equal(node(g, "sc")->op, GIR_OP_Unstack);
    assert_shape(value(g, "u2"), "[3,4,5]");
    g2 = roundtrip(g, "misc.json", NULL);
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);

    /* tensorrt stays opaque, shapes from its params, written back verbatim */
    t = ir1(CREATE("x", "TL_FLOAT", "[1, 3, 8, 8]") ", " CREATE("tw", "TL_FLOAT", "[3]"),
            "{\"name\": \"trt\", \"optype\": \"tensorrt\", \"tensors_in\": [{\"arg_name\": \"src0\", \"name\": \"x\"}, "
            "{\"arg_name\": \"weight0\", \"name\": \"tw\"}], "
            "\"tensors_out\": [{\"arg_name\": \"dst0\", \"name\": \"y\"}], \"params\": [{\"arg_name\": \"batch_size\", "
            "\"value\": 1}, {\"arg_name\": \"dst0_shape\", \"value\": [1, 3, 8, 8]}, {\"arg_name\": \"dst0_dtype\", "
            "\"value\": \"TL_FLOAT\"}, {\"arg_name\": \"op0\", \"value\": \"activation\"}, {\"arg_name\": \"op0_src\", "
            "\"value\": \"x\"}, {\"arg_name\": \"op0_dst\", \"value\": \"y\"}, {\"arg_name\": "
            "\"op0_activation_type\", \"value\": \"kTANH\"}, {\"arg_name\": \"flags\", \"value\": [true, false]}]}");
    g = load_text_ok(t);
    free(t);
    const gir_node *trt = node(g, "trt");
    assert_int_equal(trt->op, GIR_OP_OPAQUE);
    assert_string_equal(trt->opaque_format, "lightnet");
    assert_string_equal(trt->opaque_op, "tensorrt");
    assert_shape(value(g, "y"), "[1,3,8,8]");
    assert_int_equal(value(g, "x")->kind, GIR_VALUE_INPUT);
    assert_int_equal(value(g, "tw")->kind, GIR_VALUE_WEIGHT);
    assert_true(gir_attrs_get_int(&trt->attrs, "batch_size", 0) == 0); /* numbers are kept as floats */
    assert_true(gir_attrs_get_float(&trt->attrs, "batch_size", 0) == 1.0);
    g2 = roundtrip(g, "trt.json", NULL);
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);
}

/* ---- writer ------------------------------------------------------------------ */

static gir_graph *new_graph(void)
{
    gir_graph *g = NULL;
    TU_OK(gir_graph_new(&g, NULL), NULL);
    return g;
}

static int32_t add_input(gir_graph *g, const char *name, const char *shape_text)
{
    int32_t v;
    TU_OK(gir_graph_add_value(g, name, GIR_VALUE_INPUT, &v, NULL), NULL);
    gir_value *gv = g->values[v];
    gv->dtype = GIR_DT_F32;
    gv->shape.rank = 0;
    for (const char *p = shape_text; *p;) {
        gv->shape.dims[gv->shape.rank++] = strtoll(p, (char **)&p, 10);
        if (*p == ',')
            p++;
    }
    TU_OK(gir_graph_add_input(g, v, NULL), NULL);
    return v;
}

static gir_node *add_op(gir_graph *g, const char *name, gir_op op, int32_t a, int32_t b, const char *out,
                        const gir_value *like)
{
    gir_node *n;
    TU_OK(gir_graph_add_node(g, name, op, b >= 0 ? 2 : 1, 1, &n, NULL), NULL);
    n->in[0] = a;
    if (b >= 0)
        n->in[1] = b;
    TU_OK(gir_node_make_output(g, n, 0, out, NULL), NULL);
    gir_value *o = g->values[n->out[0]];
    o->dtype = like->dtype;
    o->shape = like->shape;
    return n;
}

static void test_writer_refusals(void **state)
{
    (void)state;
    gir_graph *g = new_graph();
    int32_t x = add_input(g, "x", "1,4"), b = add_input(g, "b", "4");
    gir_node *t1 = add_op(g, "t1", GIR_OP_Tanh, x, -1, "y1", g->values[x]);
    add_op(g, "t2", GIR_OP_Tanh, t1->out[0], -1, "y2", g->values[x]);
    add_op(g, "add", GIR_OP_Add, x, b, "y3", g->values[x]);
    gir_node *lr = add_op(g, "lr", GIR_OP_LeakyRelu, x, -1, "y4", g->values[x]);
    TU_OK(gir_attrs_set_float(g, &lr->attrs, "alpha", 0, NULL), NULL);
    gir_node *rs = add_op(g, "rs", GIR_OP_Resize, x, -1, "y5", g->values[x]);
    TU_OK(gir_attrs_set_string(g, &rs->attrs, "mode", "linear", NULL), NULL);
    for (size_t i = 0; i < g->n_nodes; i++)
        TU_OK(gir_graph_add_output(g, g->nodes[i]->out[0], NULL), NULL);
    char *dir = tu_join(tmp, "refused");
    assert_int_equal(system(NULL) >= 0, 1);
    char *cmd = gir_strdupf("mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    char *p = tu_join(dir, "out.json");
    gir_error err = GIR_ERROR_INIT;
    gir_status st = gir_save(g, p, "lightnet", NULL, &err);
    TU_FAILS(st, &err, GIR_E_UNSUPPORTED_OP, "cannot write as lightnet: ", "Tanh (LightNet has no tanh op) (2 nodes, first 't1')",
             "Add with broadcasting ([4] to [1,4]; LightNet's elew needs equal shapes) (1 node, first 'add')",
             "LeakyRelu with alpha=0 (LightNet reads its `negslope` as a float clamped to [1.18e-38, 3.4e38]) (1 node, "
             "first 'lr')",
             "Resize with mode=linear (TensorLight resizes nearest only) (1 node, first 'rs')");
    assert_int_equal(gir_status_exit_code(st), 3);
    assert_int_equal(tu_count_entries(dir), 0); /* nothing written */
    gir_error_clear(&err);
    gir_graph_free(g);
    free(p);
    free(cmd);
    free(dir);
}

static void test_writer_chains(void **state)
{
    (void)state;
    /* Concat of three becomes two concats; Conv without bias gets a zero
     * bias; Sort whose input is read later gets a copy. */
    gir_graph *g = new_graph();
    int32_t a = add_input(g, "a", "1,2"), b = add_input(g, "b", "1,3"), c = add_input(g, "c", "1,4");
    gir_node *cat;
    TU_OK(gir_graph_add_node(g, "cat", GIR_OP_Concat, 3, 1, &cat, NULL), NULL);
    cat->in[0] = a;
    cat->in[1] = b;
    cat->in[2] = c;
    TU_OK(gir_attrs_set_int(g, &cat->attrs, "axis", -1, NULL), NULL);
    TU_OK(gir_node_make_output(g, cat, 0, "y", NULL), NULL);
    g->values[cat->out[0]]->dtype = GIR_DT_F32;
    g->values[cat->out[0]]->shape = (gir_shape){ 2, { 1, 9 } };
    TU_OK(gir_graph_add_output(g, cat->out[0], NULL), NULL);
    int32_t k = add_input(g, "k", "6");
    gir_node *s = add_op(g, "sort", GIR_OP_Sort, k, -1, "ks", g->values[k]);
    TU_OK(gir_attrs_set_int(g, &s->attrs, "descending", 1, NULL), NULL);
    gir_node *rl = add_op(g, "after", GIR_OP_Relu, k, -1, "kr", g->values[k]);
    TU_OK(gir_graph_add_output(g, s->out[0], NULL), NULL);
    TU_OK(gir_graph_add_output(g, rl->out[0], NULL), NULL);
    char *p = tu_join(tmp, "chain.json");
    gir_error err = GIR_ERROR_INIT;
    tu_save(g, p, "lightnet", NULL);
    size_t len;
    char *text = tu_slurp(p, &len);
    assert_non_null(strstr(text, "\"name\": \"cat_2\""));
    assert_non_null(strstr(text, "{\"arg_name\": \"dst\", \"name\": \"y_part1\"}"));
    assert_non_null(strstr(text, "{\"arg_name\": \"src1\", \"name\": \"y_part1\"}"));
    assert_non_null(strstr(text, "{\"arg_name\": \"axis\", \"value\": 1}"));
    assert_non_null(strstr(text, "\"name\": \"sort_copy\""));
    assert_non_null(strstr(text, "{\"arg_name\": \"src_key\", \"name\": \"k_copy\"}"));
    free(text);
    gir_graph *g2 = NULL;
    TU_OK(gir_load(p, NULL, NULL, &g2, &err), &err);
    assert_shape(value(g2, "y"), "[1,9]");
    assert_int_equal(node(g2, "cat_2")->op, GIR_OP_Concat);
    assert_int_equal(value(g2, "k")->kind, GIR_VALUE_INPUT);
    gir_graph_free(g2);
    /* existing output: refused unless force */
    gir_status st = gir_save(g, p, "lightnet", NULL, &err);
    TU_FAILS(st, &err, GIR_E_EXISTS, "chain.json", "output exists");
    gir_error_clear(&err);
    gir_graph_free(g);
    free(p);
}


/* A large constant (a legalization makes one from an FC weight) goes to
 * the .wts file like the weights; a small one stays inline. */
static void test_writer_large_const(void **state)
{
    (void)state;
    gir_graph *g = new_graph();
    int32_t x = add_input(g, "x", "1,5000");
    gir_error err = GIR_ERROR_INIT;
    gir_shape big = { 2, { 1, 5000 } }, small = { 2, { 1, 4 } };
    float *d = calloc(5000, sizeof *d);
    for (int i = 0; i < 5000; i++)
        d[i] = (float)i * 0.25f;
    gir_tensor *t1, *t2;
    TU_OK(gir_tensor_create(GIR_DT_F32, &big, d, 5000 * sizeof *d, &t1, &err), &err);
    TU_OK(gir_tensor_create(GIR_DT_F32, &small, d, 4 * sizeof *d, &t2, &err), &err);
    free(d);
    int32_t cb, cs;
    TU_OK(gir_graph_add_const(g, "bigc", t1, &cb, &err), &err);
    TU_OK(gir_graph_add_const(g, "smallc", t2, &cs, &err), &err);
    gir_tensor_unref(t1);
    gir_tensor_unref(t2);
    gir_node *n = add_op(g, "add", GIR_OP_Add, x, cb, "y", g->values[x]);
    TU_OK(gir_graph_add_output(g, n->out[0], NULL), NULL);
    int32_t y2 = add_input(g, "x2", "1,4");
    gir_node *m = add_op(g, "add2", GIR_OP_Add, y2, cs, "z", g->values[y2]);
    TU_OK(gir_graph_add_output(g, m->out[0], NULL), NULL);
    char *p = tu_join(tmp, "bigconst.json"), *w = tu_join(tmp, "bigconst.wts");
    tu_save(g, p, "lightnet", NULL);
    size_t len, wlen;
    char *text = tu_slurp(p, &len), *wts = tu_slurp(w, &wlen);
    assert_non_null(wts);
    assert_non_null(strstr(wts, "bigc "));
    assert_null(strstr(wts, "smallc"));
    assert_true(len < 20000); /* 5000 numbers are not inline */
    assert_non_null(strstr(text, "\"smallc\""));
    free(text);
    free(wts);
    gir_graph *g2 = NULL;
    TU_OK(gir_load(p, NULL, NULL, &g2, &err), &err);
    const void *data = NULL;
    TU_OK(gir_tensor_load(gir_value_tensor(value(g2, "bigc")), &data, &err), &err);
    assert_true(((const float *)data)[4999] == 4999 * 0.25f);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);
    free(w);
}

static void test_more_ops(void **state)
{
    (void)state;
    char *t = ir1(CREATE("f", "TL_FLOAT", "[1, 21, 4, 5]") ", " CREATE("an", "TL_FLOAT", "[3, 2]") ", " CREATE(
                      "k", "TL_FLOAT", "[6]"),
                  "{\"name\": \"yolo\", \"optype\": \"detect_yolov3\", \"tensors_in\": [{\"arg_name\": \"feature\", "
                  "\"name\": \"f\"}, {\"arg_name\": \"anchors\", \"name\": \"an\"}], \"tensors_out\": [{\"arg_name\": "
                  "\"box_centers\", \"name\": \"bc\"}, {\"arg_name\": \"box_sizes\", \"name\": \"bs\"}, {\"arg_name\": "
                  "\"boxes\", \"name\": \"bx\"}, {\"arg_name\": \"confs\", \"name\": \"cf\"}, {\"arg_name\": \"probs\", "
                  "\"name\": \"pr\"}], \"params\": [{\"arg_name\": \"img_width\", \"value\": 416}, {\"arg_name\": "
                  "\"img_height\", \"value\": 320}]}, {\"name\": \"fp\", \"optype\": \"fprint\", \"tensors_in\": "
                  "[{\"arg_name\": \"src\", \"name\": \"cf\"}], \"tensors_out\": [], \"params\": [{\"arg_name\": "
                  "\"msg\", \"value\": \"confs\"}, {\"arg_name\": \"file\", \"value\": \"confs.txt\"}]}, {\"name\": "
                  "\"so\", \"optype\": \"sort1d\", \"tensors_in\": [{\"arg_name\": \"src_key\", \"name\": \"k\"}], "
                  "\"tensors_out\": [{\"arg_name\": \"dst_key\", \"name\": \"ks\"}], \"params\": [{\"arg_name\": "
                  "\"dir\", \"value\": \"TL_SORT_DIR_ASCENDING\"}]}, {\"name\": \"rs\", \"optype\": \"resize\", "
                  "\"tensors_in\": [{\"arg_name\": \"src\", \"name\": \"bx\"}], \"tensors_out\": [{\"arg_name\": "
                  "\"dst\", \"name\": \"bxr\"}], \"params\": [{\"arg_name\": \"mode\", \"value\": \"TL_NEAREST\"}, "
                  "{\"arg_name\": \"dims\", \"value\": [1, 3, 4, 2, 10]}]}");
    gir_graph *g = load_text_ok(t);
    free(t);
    assert_int_equal(node(g, "yolo")->op, GIR_OP_YoloV3Decode);
    assert_shape(value(g, "bc"), "[1,3,2,4,5]");
    assert_shape(value(g, "bx"), "[1,3,4,4,5]");
    assert_shape(value(g, "cf"), "[1,3,1,4,5]");
    assert_shape(value(g, "pr"), "[1,3,2,4,5]");
    assert_string_equal(gir_attrs_get_string(&node(g, "fp")->attrs, "file", ""), "confs.txt");
    assert_int_equal(node(g, "so")->n_in, 1);
    assert_int_equal(gir_attrs_get_int(&node(g, "so")->attrs, "descending", -1), 0);
    assert_ints(node(g, "rs"), "sizes", "1,3,4,2,10");
    assert_int_equal(value(g, "an")->kind, GIR_VALUE_WEIGHT); /* anchors: a parameter argument */
    gir_graph *g2 = roundtrip(g, "more.json", NULL);
    assert_same(g, g2, true);
    gir_graph_free(g2);
    gir_graph_free(g);

    /* the ran fill follows the seed option */
    const char *ran = "{\"ops\": [{\"name\": \"c\", \"optype\": \"create\", \"tensors_in\": [], \"tensors_out\": "
                      "[{\"arg_name\": \"dst\", \"name\": \"r\"}], \"params\": [{\"arg_name\": \"dtype\", \"value\": "
                      "\"TL_INT32\"}, {\"arg_name\": \"dims\", \"value\": [64]}, {\"arg_name\": \"ran\", \"value\": "
                      "[-3, 3]}, {\"arg_name\": \"data\", \"value\": [0]}, {\"arg_name\": \"from_file\", \"value\": "
                      "false}]}]}";
    char *p = put("ran.json", ran);
    gir_options *o = gir_options_new();
    TU_OK(gir_options_set(o, "seed", "7", NULL), NULL);
    gir_graph *a = NULL, *b = NULL, *c = NULL;
    TU_OK(gir_load(p, NULL, NULL, &a, NULL), NULL);
    TU_OK(gir_load(p, NULL, o, &b, NULL), NULL);
    TU_OK(gir_load(p, NULL, o, &c, NULL), NULL);
    bool eq = true;
    TU_OK(gir_tensor_equal(value(a, "r")->data, value(b, "r")->data, &eq, NULL), NULL);
    assert_false(eq);
    TU_OK(gir_tensor_equal(value(c, "r")->data, value(b, "r")->data, &eq, NULL), NULL);
    assert_true(eq);
    assert_true(notes_contain(b, "from seed 7"));
    const void *d;
    TU_OK(gir_tensor_load(value(b, "r")->data, &d, NULL), NULL);
    bool neg = false, pos = false;
    for (int i = 0; i < 64; i++) {
        int32_t v = ((const int32_t *)d)[i];
        assert_true(v >= -3 && v <= 3);
        neg |= v < 0;
        pos |= v > 0;
    }
    assert_true(neg && pos);
    gir_graph_free(a);
    gir_graph_free(b);
    gir_graph_free(c);
    TU_OK(gir_options_set(o, "seed", "x", NULL), NULL);
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_load(p, NULL, o, &a, &err), &err, GIR_E_ARGUMENT, "option seed=x is not an integer");
    gir_error_clear(&err);
    gir_options_free(o);
    free(p);
}

static void test_writer_more(void **state)
{
    (void)state;
    gir_graph *g = new_graph();
    int32_t x = add_input(g, "x", "1,3,4,4");
    /* ArgMax -> Cast(int32), no ReduceMax: a maxreduce_arg with a spare dst */
    gir_node *am = add_op(g, "am", GIR_OP_ArgMax, x, -1, "idx64", g->values[x]);
    TU_OK(gir_attrs_set_int(g, &am->attrs, "axis", 1, NULL), NULL);
    g->values[am->out[0]]->dtype = GIR_DT_I64;
    g->values[am->out[0]]->shape = (gir_shape){ 4, { 1, 1, 4, 4 } };
    gir_node *cs = add_op(g, "cast", GIR_OP_Cast, am->out[0], -1, "idx", g->values[am->out[0]]);
    TU_OK(gir_attrs_set_string(g, &cs->attrs, "to", "int32", NULL), NULL);
    g->values[cs->out[0]]->dtype = GIR_DT_I32;
    /* ReduceMax without keepdims: maxreduce + reshape */
    gir_node *rm = add_op(g, "rm", GIR_OP_ReduceMax, x, -1, "mx", g->values[x]);
    TU_OK(gir_attrs_set_ints(g, &rm->attrs, "axes", (int64_t[]){ 2, 3 }, 2, NULL), NULL);
    TU_OK(gir_attrs_set_int(g, &rm->attrs, "keepdims", 0, NULL), NULL);
    g->values[rm->out[0]]->shape = (gir_shape){ 2, { 1, 3 } };
    /* GlobalAveragePool */
    gir_node *gp = add_op(g, "gap", GIR_OP_GlobalAveragePool, x, -1, "avg", g->values[x]);
    g->values[gp->out[0]]->shape = (gir_shape){ 4, { 1, 3, 1, 1 } };
    /* Slice on two axes */
    gir_node *sl = add_op(g, "sl", GIR_OP_Slice, x, -1, "part", g->values[x]);
    TU_OK(gir_attrs_set_ints(g, &sl->attrs, "starts", (int64_t[]){ 1, -3 }, 2, NULL), NULL);
    TU_OK(gir_attrs_set_ints(g, &sl->attrs, "ends", (int64_t[]){ 3, 100 }, 2, NULL), NULL);
    TU_OK(gir_attrs_set_ints(g, &sl->attrs, "axes", (int64_t[]){ 1, 3 }, 2, NULL), NULL);
    g->values[sl->out[0]]->shape = (gir_shape){ 4, { 1, 2, 4, 3 } };
    /* Conv without bias */
    int32_t w;
    gir_tensor *wt;
    gir_shape ws = { 4, { 2, 3, 1, 1 } };
    TU_OK(gir_tensor_new(GIR_DT_F32, &ws, &wt, NULL), NULL);
    ((float *)wt->data)[0] = 1.5f;
    TU_OK(gir_graph_add_value(g, "w", GIR_VALUE_WEIGHT, &w, NULL), NULL);
    gir_value_set_data(g->values[w], wt);
    gir_tensor_unref(wt);
    gir_node *cv = add_op(g, "cv", GIR_OP_Conv, x, w, "conv", g->values[x]);
    g->values[cv->out[0]]->shape = (gir_shape){ 4, { 1, 2, 4, 4 } };
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] != am)
            TU_OK(gir_graph_add_output(g, g->nodes[i]->out[0], NULL), NULL);
    char *p = tu_join(tmp, "more_w.json");
    gir_error err = GIR_ERROR_INIT;
    tu_save(g, p, "lightnet", NULL);
    size_t len;
    char *text = tu_slurp(p, &len);
    assert_non_null(strstr(text, "\"optype\": \"maxreduce_arg\""));
    assert_non_null(strstr(text, "{\"arg_name\": \"dst\", \"name\": \"idx_max\"}"));
    assert_non_null(strstr(text, "\"name\": \"rm_reshape\""));
    assert_non_null(strstr(text, "{\"arg_name\": \"size\", \"value\": [4, 4]}"));
    assert_non_null(strstr(text, "\"name\": \"sl_2\""));
    assert_non_null(strstr(text, "{\"arg_name\": \"bias\", \"name\": \"cv_bias\"}"));
    free(text);
    gir_graph *g2 = NULL;
    TU_OK(gir_load(p, NULL, NULL, &g2, &err), &err);
    assert_shape(value(g2, "mx"), "[1,3]");
    assert_shape(value(g2, "part"), "[1,2,4,3]");
    assert_int_equal(value(g2, "idx")->dtype, GIR_DT_I32);
    assert_int_equal(node(g2, "cv")->n_in, 3);
    bool eq = false;
    TU_OK(gir_tensor_equal(value(g2, "w")->data, g->values[w]->data, &eq, &err), &err);
    assert_true(eq);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);

    /* refusals of values and opaque nodes; allow-opaque writes them */
    g = new_graph();
    int32_t h = add_input(g, "h\"q", "2");
    g->values[h]->dtype = GIR_DT_F16;
    gir_node *op;
    TU_OK(gir_graph_add_node(g, "op", GIR_OP_OPAQUE, 1, 1, &op, NULL), NULL);
    op->opaque_format = "tvm";
    op->opaque_op = "tvm_op";
    op->in[0] = add_input(g, "y", "2");
    TU_OK(gir_node_make_output(g, op, 0, "z", NULL), NULL);
    g->values[op->out[0]]->dtype = GIR_DT_F32;
    g->values[op->out[0]]->shape = (gir_shape){ 1, { 2 } };
    TU_OK(gir_attrs_set_string(g, &op->attrs, "func_name", "fused", &err), NULL);
    gir_node *ca = add_op(g, "lonely_cast", GIR_OP_Cast, op->out[0], -1, "zc", g->values[op->out[0]]);
    TU_OK(gir_attrs_set_string(g, &ca->attrs, "to", "int32", &err), NULL);
    p = tu_join(tmp, "refused2.json");
    TU_FAILS(gir_save(g, p, "lightnet", NULL, &err), &err, GIR_E_UNSUPPORTED,
             "dtype float16 (LightNet has no such type) (1 node, first 'h\"q')",
             "a name containing '\"' (LightNet's comment pre-pass does not understand escaped quotes)",
             "tvm operator tvm_op (opaque) (1 node, first 'op')", "Cast (1 node, first 'lonely_cast')");
    gir_error_clear(&err);
    assert_false(gir_path_exists(p));
    gir_graph_free(g);
    free(p);
}

/* ---- through other formats --------------------------------------------------- */

static void via_format(const char *fmt, const char *ext)
{
    if (!gir_format_find(fmt) || !gir_format_find(fmt)->write) {
        print_message("format %s is not in this build: skipped\n", fmt);
        skip();
    }
    /* shufflenetv2 (no weight file) and convnet (weights in convnet.wts)
     * use only ops every format shares; squeezedet does not */
    char *conv = tu_testdata("lightnet/convnet.json");
    gir_graph *gc = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(load(conv, NULL, &gc, &err), &err);
    free(conv);
    gir_graph *models[2] = { load_real("shufflenetv2.json"), gc };
    char *p = NULL;
    for (int m = 0; m < 2; m++) {
        char name[64];
        snprintf(name, sizeof name, "via%d%s", m, ext);
        free(p);
        p = tu_join(tmp, name);
        tu_save(models[m], p, fmt, NULL);
        gir_graph *g2 = NULL;
        TU_OK(gir_load(p, fmt, NULL, &g2, &err), &err);
        snprintf(name, sizeof name, "via%d_%s_back.json", m, fmt);
        gir_graph *g3 = roundtrip(g2, name, NULL);
        assert_same_named(models[m], g3, false, false);
        gir_graph_free(g3);
        gir_graph_free(g2);
    }
    gir_graph_free(models[1]);
    gir_graph *g = models[0];
    gir_graph *s = load_real("squeezedet.json");
    char *p2 = tu_join(tmp, "sq_via");
    /* (its maxreduce_arg, ArgMax and a Cast of the indices to int32, is
     * NNVM's argmax; nnabla writes the ArgMax as Max with only_index and
     * the Cast as an Identity: nnabla holds integers in float32 variables) */
    TU_FAILS(gir_save(s, p2, fmt, NULL, &err), &err, GIR_E_UNSUPPORTED_OP, "SqueezeDetBoxDecode", "Sort",
             "GatherBlocks");
    assert_null(strstr(err.message, "ArgMax"));
    assert_null(strstr(err.message, "Cast"));
    gir_error_clear(&err);
    assert_false(gir_path_exists(p2));
    gir_graph_free(s);
    /* print becomes an output: what the model prints, the converted
     * model returns (legalization's print-as-output) */
    s = load_real("test_ops.json");
    free(p2);
    char oname[64];
    snprintf(oname, sizeof oname, "ops_via%s", ext);
    p2 = tu_join(tmp, oname);
    tu_save(s, p2, fmt, NULL);
    gir_graph *back = NULL;
    TU_OK(gir_load(p2, fmt, NULL, &back, &err), &err);
    assert_int_equal(gir_graph_output_count(back), 2);
    assert_string_equal(gir_value_name(gir_graph_output(back, 0)), "transpose1");
    gir_check_result res;
    TU_OK(gir_check_written(s, back, NULL, &res, &err), &err);
    assert_int_equal(res.method, GIR_CHECK_RUN);
    gir_check_result_clear(&res);
    gir_graph_free(back);
    gir_graph_free(s);
    free(p2);
    free(p);
    gir_graph_free(g);
}

static void test_via_nnvm(void **state)
{
    (void)state;
    via_format("nnvm", ".json");
}

static void test_via_nnp(void **state)
{
    (void)state;
    via_format("nnabla", ".nnp");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_test_ops),   cmocka_unit_test(test_real_cuda_test),
        cmocka_unit_test(test_real_squeezedet), cmocka_unit_test(test_real_shufflenetv2),
        cmocka_unit_test(test_real_invalid),    cmocka_unit_test(test_probe),
        cmocka_unit_test(test_roundtrip_real),
        cmocka_unit_test(test_wts_roundtrip),   cmocka_unit_test(test_wts_errors),
        cmocka_unit_test(test_dialect),         cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_op_mapping),      cmocka_unit_test(test_writer_refusals),
        cmocka_unit_test(test_writer_chains), cmocka_unit_test(test_writer_large_const),   cmocka_unit_test(test_more_ops),
        cmocka_unit_test(test_writer_more),     cmocka_unit_test(test_via_nnvm),
        cmocka_unit_test(test_via_nnp),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
