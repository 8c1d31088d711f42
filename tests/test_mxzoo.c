/* Operators of the MXNet model zoos (insightface, RetinaFace, MTCNN, SSD,
 * GluonCV): each read from a small symbol file, run on the reference
 * runtime against the values MXNet's documented semantics give, and run
 * again after writing it as MXNet and as ONNX.  Also the reader's bugs
 * fixed with them: weights files, ranks from consumers, NNVM dense after a
 * Reshape, TVM byte-for-byte round trips. */
#include "rtutil.h"

#include "formats/format.h"
#include "formats/nnvm/nnvm.h"
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------ */

typedef struct param {
    const char *name; /* without arg:/aux: */
    int rank;
    int64_t dims[4];
    const float *data;
} param;

/* Writes NAME-symbol.json from node texts (arg_nodes computed), and
 * NAME-0000.params from ps; returns the symbol's path. */
static char *write_model(const char *name, const char *const *nodes, const char *heads, const param *ps, size_t np)
{
    gir_buf b = GIR_BUF_INIT;
    gir_buf_printf(&b, "{\"nodes\": [");
    size_t n = 0;
    for (; nodes[n]; n++)
        gir_buf_printf(&b, "%s%s", n ? ", " : "", nodes[n]);
    gir_buf_printf(&b, "], \"arg_nodes\": [");
    bool first = true;
    for (size_t i = 0; i < n; i++)
        if (strstr(nodes[i], "\"op\": \"null\"")) {
            gir_buf_printf(&b, "%s%zu", first ? "" : ", ", i);
            first = false;
        }
    gir_buf_printf(&b, "], \"heads\": %s, \"attrs\": {\"mxnet_version\": [\"int\", 10600]}}", heads);
    char *fn = gir_strdupf("%s-symbol.json", name);
    char *path = tu_tmp(fn);
    free(fn);
    assert_true(tu_write(path, b.data, b.len));
    gir_buf_free(&b);
    if (np) {
        char *pn = gir_strdupf("%s-0000.params", name);
        char *pp = tu_tmp(pn);
        free(pn);
        gir_outfile *f;
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_outfile_open(pp, true, &f, &err), &err);
        gir_param_out items[8];
        gir_tensor *ts[8];
        char *names[8];
        for (size_t i = 0; i < np; i++) {
            ts[i] = rt_tensor_new(GIR_DT_F32, ps[i].rank, ps[i].dims, ps[i].data);
            names[i] = gir_strdupf("arg:%s", ps[i].name);
            items[i] = (gir_param_out){ names[i], ts[i] };
        }
        TU_OK(gir_params_write(f, GIR_PARAMS_MXNET, items, np, NULL, &err), &err);
        TU_OK(gir_outfile_commit(f, &err), &err);
        for (size_t i = 0; i < np; i++) {
            gir_tensor_unref(ts[i]);
            free(names[i]);
        }
        free(pp);
    }
    return path;
}

static gir_graph *load_with(const char *path, const char *format, const char *ishape)
{
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    if (ishape)
        TU_OK(gir_options_set(o, "input-shape", ishape, &err), &err);
    gir_graph *g = NULL;
    TU_OK(gir_load(path, format, o, &g, &err), &err);
    gir_options_free(o);
    return g;
}

/* Runs g on the inputs and checks output `which` (shape and values). */
static void expect_run(const gir_graph *g, gir_tensor **in, size_t n_in, size_t n_out, size_t which, int rank,
                       const int64_t *dims, const float *want, double tol)
{
    gir_tensor *outs[8] = { NULL };
    rt_run(g, 1, in, n_in, outs, n_out);
    rt_expect_f32(outs[which], rank, dims, want, tol);
    for (size_t i = 0; i < n_out; i++)
        gir_tensor_unref(outs[i]);
}

/* The model NAME (written by write_model): read with ishape, no opaque
 * node, run; then written as MXNet and as ONNX, read back and run again. */
static void check_op(const char *name, const char *ishape, gir_tensor **in, size_t n_in, size_t n_out, int rank,
                     const int64_t *dims, const float *want, double tol)
{
    char *fn = gir_strdupf("%s-symbol.json", name);
    char *path = tu_tmp(fn);
    free(fn);
    gir_graph *g = load_with(path, NULL, ishape);
    assert_int_equal(tu_count_opaque(g), 0);
    expect_run(g, in, n_in, n_out, 0, rank, dims, want, tol);
    static const char *const fmts[] = { "mxnet", "onnx" };
    for (size_t k = 0; k < 2; k++) {
        char *on = gir_strdupf("%s-rt%zu%s", name, k, k ? ".onnx" : "-symbol.json");
        char *op = tu_tmp(on);
        free(on);
        gir_error err = GIR_ERROR_INIT;
        gir_options *wo = gir_options_new();
        TU_OK(gir_options_set(wo, "force", "1", &err), &err);
        tu_save(g, op, fmts[k], wo);
        gir_options_free(wo);
        gir_graph *h = load_with(op, fmts[k], k ? NULL : ishape);
        assert_int_equal(tu_count_opaque(h), 0);
        expect_run(h, in, n_in, n_out, 0, rank, dims, want, tol);
        gir_graph_free(h);
        free(op);
    }
    gir_graph_free(g);
    free(path);
}

static const gir_node *find_node(const gir_graph *g, const char *name)
{
    for (size_t i = 0; i < gir_graph_node_count(g); i++)
        if (strcmp(gir_node_name(gir_graph_node(g, i)), name) == 0)
            return gir_graph_node(g, i);
    fail_msg("no node '%s'", name);
    return NULL;
}

#define VAR(nm) "{\"op\": \"null\", \"name\": \"" nm "\", \"inputs\": []}"

/* ---- LeakyReLU ------------------------------------------------------------------ */

static void leaky_case(const char *name, const char *attrs, const float *x, const float *want, size_t n)
{
    char *node = gir_strdupf("{\"op\": \"LeakyReLU\", \"name\": \"act\", \"attrs\": {%s}, \"inputs\": [[0, 0, 0]]}",
                             attrs);
    const char *nodes[] = { VAR("data"), node, NULL };
    char *p = write_model(name, nodes, "[[1, 0, 0]]", NULL, 0);
    char shape[32];
    snprintf(shape, sizeof shape, "data:1,%zu", n);
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, (int64_t)n), x);
    check_op(name, shape, &in, 1, 1, 2, DIMS(1, (int64_t)n), want, 1e-6);
    gir_tensor_unref(in);
    free(p);
    free(node);
}

static void test_leaky_relu(void **state)
{
    (void)state;
    leaky_case("leaky", "\"act_type\": \"leaky\", \"slope\": \"0.1\"", F32S(-2, -1, 0, 3), F32S(-0.2f, -0.1f, 0, 3),
               4);
    leaky_case("elu", "\"act_type\": \"elu\", \"slope\": \"1.0\"", F32S(-1, 2), F32S(-0.63212056f, 2), 2);
    leaky_case("selu", "\"act_type\": \"selu\"", F32S(-1, 2), F32S(-1.1113307f, 2.101402f), 2);
    leaky_case("gelu", "\"act_type\": \"gelu\"", F32S(-1, 0.5f), F32S(-0.15865525f, 0.34573123f), 2);
    /* rrelu at inference: the slope is the middle of [lower, upper] */
    leaky_case("rrelu", "\"act_type\": \"rrelu\", \"lower_bound\": \"0.1\", \"upper_bound\": \"0.3\"", F32S(-2, 3),
               F32S(-0.4f, 3), 2);
}

/* prelu: one slope per channel (axis 1) of NCHW data, as MTCNN has it. */
static void test_prelu(void **state)
{
    (void)state;
    const char *nodes[] = { VAR("data"), VAR("act_gamma"),
                            "{\"op\": \"LeakyReLU\", \"name\": \"act\", \"attrs\": {\"act_type\": \"prelu\"}, "
                            "\"inputs\": [[0, 0, 0], [1, 0, 0]]}",
                            NULL };
    param ps[] = { { "act_gamma", 1, { 2 }, F32S(0.5f, 0.25f) } };
    free(write_model("prelu", nodes, "[[2, 0, 0]]", ps, 1));
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 1, 2), F32S(-1, 2, -3, 4));
    check_op("prelu", "data:1,2,1,2", &in, 1, 1, 4, DIMS(1, 2, 1, 2), F32S(-0.5f, 2, -0.75f, 4), 0);
    gir_tensor_unref(in);
    /* Written back as one LeakyReLU with the [C] gamma. */
    char *p = tu_tmp("prelu-rt0-symbol.json");
    char *text = tu_slurp(p, NULL);
    assert_non_null(strstr(text, "\"act_type\": \"prelu\""));
    assert_null(strstr(text, "expand_dims"));
    free(text);
    free(p);
    /* Without the data's rank it stays verbatim, and says why. */
    char *sym = tu_tmp("prelu-symbol.json");
    gir_graph *g = load_with(sym, NULL, NULL);
    const gir_node *n = find_node(g, "act");
    assert_true(gir_node_is_opaque(n));
    assert_string_equal(gir_node_opaque_why(n), "act_type=prelu on data of unknown rank (give --input-shape)");
    gir_error err = GIR_ERROR_INIT;
    char *o = tu_tmp("prelu-unknown.onnx");
    TU_FAILS(gir_save(g, o, "onnx", NULL, &err), &err, GIR_E_UNSUPPORTED,
             "LeakyReLU (an operator of mxnet kept verbatim: act_type=prelu on data of unknown rank",
             "graph input 'data' of unknown rank");
    gir_error_clear(&err);
    free(o);
    free(sym);
    gir_graph_free(g);
}

/* ---- resampling ------------------------------------------------------------------- */

static void test_upsampling(void **state)
{
    (void)state;
    const char *nodes[] = { VAR("data"),
                            "{\"op\": \"UpSampling\", \"name\": \"up\", \"attrs\": {\"num_args\": \"1\", "
                            "\"sample_type\": \"nearest\", \"scale\": \"2\"}, \"inputs\": [[0, 0, 0]]}",
                            NULL };
    free(write_model("upn", nodes, "[[1, 0, 0]]", NULL, 0));
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 2, 2), F32S(1, 2, 3, 4));
    check_op("upn", "data:1,1,2,2", &in, 1, 1, 4, DIMS(1, 1, 4, 4),
             F32S(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4), 0);
    /* bilinear: a depthwise deconvolution (kernel 4, stride 2, pad 1) with
     * the given weight, here the usual bilinear kernel */
    const char *bl[] = { VAR("data"), VAR("up_weight"),
                         "{\"op\": \"UpSampling\", \"name\": \"up\", \"attrs\": {\"num_args\": \"2\", "
                         "\"num_filter\": \"1\", \"sample_type\": \"bilinear\", \"scale\": \"2\"}, "
                         "\"inputs\": [[0, 0, 0], [1, 0, 0]]}",
                         NULL };
    float k[4] = { 0.25f, 0.75f, 0.75f, 0.25f }, wt[16];
    for (int i = 0; i < 16; i++)
        wt[i] = k[i / 4] * k[i % 4];
    param ps[] = { { "up_weight", 4, { 1, 1, 4, 4 }, wt } };
    free(write_model("upb", bl, "[[2, 0, 0]]", ps, 1));
    check_op("upb", "data:1,1,2,2", &in, 1, 1, 4, DIMS(1, 1, 4, 4),
             F32S(0.5625f, 0.9375f, 1.3125f, 1.125f, 1.125f, 1.75f, 2.25f, 1.875f, 1.875f, 2.75f, 3.25f, 2.625f,
                  1.6875f, 2.4375f, 2.8125f, 2.25f),
             1e-6);
    gir_tensor_unref(in);
}

/* Deconvolution with target_shape: pads and adj derived as MXNet does
 * (total = stride*(in-1) + kernel - target; pad = ceil(total/2), adj =
 * total % 2). */
static void test_deconv_target_shape(void **state)
{
    (void)state;
    const char *nodes[] = { VAR("data"), VAR("d_weight"),
                            "{\"op\": \"Deconvolution\", \"name\": \"d\", \"attrs\": {\"kernel\": \"(3, 3)\", "
                            "\"stride\": \"(2, 2)\", \"num_filter\": \"1\", \"no_bias\": \"True\", \"target_shape\": "
                            "\"(4, 4)\", \"adj\": \"(0, 0)\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}",
                            NULL };
    float w[9];
    for (int i = 0; i < 9; i++)
        w[i] = (float)i;
    param ps[] = { { "d_weight", 4, { 1, 1, 3, 3 }, w } };
    free(write_model("deconv", nodes, "[[2, 0, 0]]", ps, 1));
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 2, 2), F32S(1, 1, 1, 1));
    check_op("deconv", "data:1,1,2,2", &in, 1, 1, 4, DIMS(1, 1, 4, 4),
             F32S(4, 8, 4, 5, 8, 16, 8, 10, 4, 8, 4, 5, 7, 14, 7, 8), 0);
    gir_tensor_unref(in);
}

/* Crop: offsets, center_crop, and the size of a crop_like input. */
static void test_crop(void **state)
{
    (void)state;
    float x[25];
    for (int i = 0; i < 25; i++)
        x[i] = (float)i;
    const char *off[] = { VAR("data"),
                          "{\"op\": \"Crop\", \"name\": \"c\", \"attrs\": {\"num_args\": \"1\", \"h_w\": \"(2, 2)\", "
                          "\"offset\": \"(1, 2)\"}, \"inputs\": [[0, 0, 0]]}",
                          NULL };
    free(write_model("crop1", off, "[[1, 0, 0]]", NULL, 0));
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 5, 5), x);
    check_op("crop1", "data:1,1,5,5", &in, 1, 1, 4, DIMS(1, 1, 2, 2), F32S(7, 8, 12, 13), 0);
    /* centre of 5x5 for a 2x2 crop: offset (5-2)/2 = 1 */
    const char *like[] = { VAR("data"), VAR("ref"),
                           "{\"op\": \"Crop\", \"name\": \"c\", \"attrs\": {\"num_args\": \"2\", \"center_crop\": "
                           "\"True\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}",
                           NULL };
    free(write_model("crop2", like, "[[2, 0, 0]]", NULL, 0));
    char *p = tu_tmp("crop2-symbol.json");
    gir_graph *g = load_with(p, NULL, "data:1,1,5,5;ref:1,1,2,2");
    assert_int_equal(tu_count_opaque(g), 0);
    gir_tensor *ins[2] = { in, rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 2, 2), NULL) };
    expect_run(g, ins, 2, 1, 0, 4, DIMS(1, 1, 2, 2), F32S(6, 7, 11, 12), 0);
    gir_tensor_unref(ins[1]);
    gir_graph_free(g);
    free(p);
    gir_tensor_unref(in);
}

/* ---- softmax family and output layers ------------------------------------------------ */

static void test_softmax(void **state)
{
    (void)state;
    /* instance mode over all but the first axis of NCHW data */
    const char *inst[] = { VAR("data"),
                           "{\"op\": \"SoftmaxActivation\", \"name\": \"s\", \"inputs\": [[0, 0, 0]]}", NULL };
    free(write_model("smi", inst, "[[1, 0, 0]]", NULL, 0));
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 1, 2), F32S(1, 2, 3, 4));
    check_op("smi", "data:1,2,1,2", &in, 1, 1, 4, DIMS(1, 2, 1, 2),
             F32S(0.032058603f, 0.087144319f, 0.23688282f, 0.64391426f), 1e-6);
    /* channel mode: over axis 1 */
    const char *ch[] = { VAR("data"),
                         "{\"op\": \"SoftmaxActivation\", \"name\": \"s\", \"attrs\": {\"mode\": \"channel\"}, "
                         "\"inputs\": [[0, 0, 0]]}",
                         NULL };
    free(write_model("smc", ch, "[[1, 0, 0]]", NULL, 0));
    check_op("smc", "data:1,2,1,2", &in, 1, 1, 4, DIMS(1, 2, 1, 2),
             F32S(0.11920292f, 0.11920292f, 0.88079708f, 0.88079708f), 1e-6);
    gir_tensor_unref(in);
    /* softmax with a temperature: softmax(x / T) */
    const char *t[] = { VAR("data"),
                        "{\"op\": \"softmax\", \"name\": \"s\", \"attrs\": {\"axis\": \"-1\", \"temperature\": "
                        "\"2\"}, \"inputs\": [[0, 0, 0]]}",
                        NULL };
    free(write_model("smt", t, "[[1, 0, 0]]", NULL, 0));
    in = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, 2), F32S(1, 2));
    check_op("smt", "data:1,2", &in, 1, 1, 2, DIMS(1, 2), F32S(0.37754067f, 0.62245933f), 1e-6);
    gir_tensor_unref(in);
}

/* Output layers at inference; a label computed by operators (a Reshape of
 * the label variable) is dropped with them, with notes. */
static void test_output_layers(void **state)
{
    (void)state;
    const char *nodes[] = {
        VAR("data"), VAR("lab"),
        "{\"op\": \"Reshape\", \"name\": \"lab_r\", \"attrs\": {\"shape\": \"(-1, 2)\"}, \"inputs\": [[1, 0, 0]]}",
        "{\"op\": \"LogisticRegressionOutput\", \"name\": \"lr\", \"inputs\": [[0, 0, 0], [2, 0, 0]]}",
        "{\"op\": \"LinearRegressionOutput\", \"name\": \"lin\", \"attrs\": {\"grad_scale\": \"2\"}, "
        "\"inputs\": [[0, 0, 0], [1, 0, 0]]}",
        "{\"op\": \"MakeLoss\", \"name\": \"ml\", \"inputs\": [[0, 0, 0]]}",
        NULL
    };
    free(write_model("outl", nodes, "[[3, 0, 0], [4, 0, 0], [5, 0, 0]]", NULL, 0));
    char *p = tu_tmp("outl-symbol.json");
    gir_graph *g = load_with(p, NULL, "data:1,2");
    assert_int_equal(gir_graph_input_count(g), 1);
    assert_int_equal(tu_count_opaque(g), 0);
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, 2), F32S(0, 1));
    expect_run(g, &in, 1, 3, 0, 2, DIMS(1, 2), F32S(0.5f, 0.73105858f), 1e-6);
    expect_run(g, &in, 1, 3, 1, 2, DIMS(1, 2), F32S(0, 1), 0);
    expect_run(g, &in, 1, 3, 2, 2, DIMS(1, 2), F32S(0, 1), 0);
    bool labels = false, ops = false;
    const gir_attr *notes = gir_attrs_find(&g->meta, GIR_META_NOTES);
    for (size_t i = 0; notes && i < notes->u.strs.n; i++) {
        const char *nt = notes->u.strs.v[i];
        labels = labels || strstr(nt, "dropped the label input of 2 output layers") != NULL;
        ops = ops || strcmp(nt, "dropped 1 operator that only computed labels of output layers") == 0;
    }
    assert_true(labels && ops);
    gir_tensor_unref(in);
    gir_graph_free(g);
    free(p);
}

/* ---- shapes ----------------------------------------------------------------------------- */

static void test_reshape_codes(void **state)
{
    (void)state;
    /* (2,3,4) by (-4, 1, -1, -3): 2 -> (1, 2), then 3*4 */
    const char *nodes[] = { VAR("data"),
                            "{\"op\": \"Reshape\", \"name\": \"r\", \"attrs\": {\"shape\": \"(-4, 1, -1, -3)\"}, "
                            "\"inputs\": [[0, 0, 0]]}",
                            "{\"op\": \"Reshape\", \"name\": \"r2\", \"attrs\": {\"shape\": \"(0, -2)\"}, "
                            "\"inputs\": [[1, 0, 0]]}",
                            "{\"op\": \"Reshape\", \"name\": \"r3\", \"attrs\": {\"shape\": \"(-1, 6)\", \"reverse\": "
                            "\"True\"}, \"inputs\": [[2, 0, 0]]}",
                            NULL };
    free(write_model("rsh", nodes, "[[3, 0, 0]]", NULL, 0));
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)i;
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 3, 4), x);
    check_op("rsh", "data:2,3,4", &in, 1, 1, 2, DIMS(4, 6), x, 0);
    char *p = tu_tmp("rsh-symbol.json");
    gir_graph *g = load_with(p, NULL, "data:2,3,4");
    const int64_t *v;
    assert_int_equal(gir_attrs_get_ints(&find_node(g, "r")->attrs, "shape", &v), 3);
    assert_true(v[0] == 1 && v[1] == 2 && v[2] == 12);
    gir_graph_free(g);
    /* The MXNet round trip writes the codes back. */
    char *rt = tu_tmp("rsh-rt0-symbol.json");
    char *text = tu_slurp(rt, NULL);
    assert_non_null(strstr(text, "\"shape\": \"(-4, 1, -1, -3)\""));
    free(text);
    free(rt);
    free(p);
    gir_tensor_unref(in);
}

static void test_slices(void **state)
{
    (void)state;
    float x[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i;
    /* slice_like on axes 1, 2 of a (1, 2, 2) reference */
    const char *nodes[] = { VAR("data"), VAR("ref"),
                            "{\"op\": \"slice_like\", \"name\": \"s\", \"attrs\": {\"axes\": \"(1, 2)\"}, "
                            "\"inputs\": [[0, 0, 0], [1, 0, 0]]}",
                            "{\"op\": \"slice\", \"name\": \"s2\", \"attrs\": {\"begin\": \"(None, 1)\", \"end\": "
                            "\"(None, None)\"}, \"inputs\": [[2, 0, 0]]}",
                            NULL };
    free(write_model("slc", nodes, "[[3, 0, 0]]", NULL, 0));
    char *p = tu_tmp("slc-symbol.json");
    gir_graph *g = load_with(p, NULL, "data:1,3,4;ref:1,2,2");
    assert_int_equal(tu_count_opaque(g), 0);
    gir_tensor *ins[2] = { rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 3, 4), x),
                           rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 2, 2), NULL) };
    expect_run(g, ins, 2, 1, 0, 3, DIMS(1, 1, 2), F32S(4, 5), 0);
    gir_graph_free(g);
    free(p);
    /* SliceChannel with squeeze_axis: each part loses the axis */
    const char *sc[] = { VAR("data"),
                         "{\"op\": \"SliceChannel\", \"name\": \"sc\", \"attrs\": {\"num_outputs\": \"3\", \"axis\": "
                         "\"1\", \"squeeze_axis\": \"True\"}, \"inputs\": [[0, 0, 0]]}",
                         NULL };
    free(write_model("sch", sc, "[[1, 2, 0]]", NULL, 0));
    check_op("sch", "data:1,3,4", ins, 1, 1, 2, DIMS(1, 4), F32S(8, 9, 10, 11), 0);
    /* expand_dims with a negative axis counts from the end of the output */
    const char *ed[] = { VAR("data"),
                         "{\"op\": \"expand_dims\", \"name\": \"e\", \"attrs\": {\"axis\": \"-1\"}, "
                         "\"inputs\": [[0, 0, 0]]}",
                         NULL };
    free(write_model("edm", ed, "[[1, 0, 0]]", NULL, 0));
    check_op("edm", "data:1,3,4", ins, 1, 1, 4, DIMS(1, 3, 4, 1), x, 0);
    gir_tensor_unref(ins[0]);
    gir_tensor_unref(ins[1]);
}

/* ---- element-wise, reductions, constants ------------------------------------------------------ */

static void test_elementwise(void **state)
{
    (void)state;
    /* MXNet comparisons give 1/0 in the data's type; where picks by a
     * non-zero condition; broadcast_to with 0 keeping a dimension;
     * mean with exclude reduces the axes not listed; clip, _copy. */
    const char *nodes[] = {
        VAR("a"), VAR("b"),
        "{\"op\": \"broadcast_greater\", \"name\": \"gt\", \"inputs\": [[0, 0, 0], [1, 0, 0]]}",
        "{\"op\": \"where\", \"name\": \"w\", \"inputs\": [[2, 0, 0], [0, 0, 0], [1, 0, 0]]}",
        "{\"op\": \"broadcast_to\", \"name\": \"bt\", \"attrs\": {\"shape\": \"(2, 0)\"}, \"inputs\": [[3, 0, 0]]}",
        "{\"op\": \"mean\", \"name\": \"m\", \"attrs\": {\"axis\": \"0\", \"exclude\": \"True\"}, "
        "\"inputs\": [[4, 0, 0]]}",
        "{\"op\": \"clip\", \"name\": \"c\", \"attrs\": {\"a_min\": \"0\", \"a_max\": \"2.5\"}, \"inputs\": [[5, 0, 0]]}",
        "{\"op\": \"_copy\", \"name\": \"cp\", \"inputs\": [[6, 0, 0]]}",
        NULL
    };
    free(write_model("ew", nodes, "[[7, 0, 0], [2, 0, 0]]", NULL, 0));
    char *p = tu_tmp("ew-symbol.json");
    gir_graph *g = load_with(p, NULL, "a:1,4;b:1,4");
    assert_int_equal(tu_count_opaque(g), 0);
    gir_tensor *ins[2] = { rt_tensor_new(GIR_DT_F32, 2, DIMS(1, 4), F32S(1, 5, 2, 8)),
                           rt_tensor_new(GIR_DT_F32, 2, DIMS(1, 4), F32S(3, 3, 3, 3)) };
    /* max(a, b) per element = (3, 5, 3, 8), mean over axis 1 = 4.75, clipped 2.5 */
    expect_run(g, ins, 2, 2, 0, 1, DIMS(2), F32S(2.5f, 2.5f), 0);
    expect_run(g, ins, 2, 2, 1, 2, DIMS(1, 4), F32S(0, 1, 0, 1), 0);
    gir_graph_free(g);
    /* As ONNX and back.  (The MXNet writer has no form yet for a
     * comparison followed by its Cast: it refuses Greater.) */
    char *o = tu_tmp("ew-rt.onnx");
    g = load_with(p, NULL, "a:1,4;b:1,4");
    tu_save(g, o, "onnx", NULL);
    gir_graph *h = load_with(o, NULL, NULL);
    expect_run(h, ins, 2, 2, 0, 1, DIMS(2), F32S(2.5f, 2.5f), 0);
    gir_graph_free(h);
    gir_graph_free(g);
    free(o);
    free(p);
    gir_tensor_unref(ins[0]);
    gir_tensor_unref(ins[1]);
}

static void test_constants(void **state)
{
    (void)state;
    const char *nodes[] = {
        VAR("data"),
        "{\"op\": \"_ones\", \"name\": \"one\", \"attrs\": {\"shape\": \"(1, 2)\"}, \"inputs\": []}",
        "{\"op\": \"elemwise_add\", \"name\": \"add\", \"inputs\": [[0, 0, 0], [1, 0, 0]]}",
        "{\"op\": \"zeros_like\", \"name\": \"z\", \"inputs\": [[2, 0, 0]]}",
        "{\"op\": \"elemwise_add\", \"name\": \"add2\", \"inputs\": [[2, 0, 0], [3, 0, 0]]}",
        NULL
    };
    free(write_model("cst", nodes, "[[4, 0, 0]]", NULL, 0));
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, 2), F32S(1, 2));
    check_op("cst", "data:1,2", &in, 1, 1, 2, DIMS(1, 2), F32S(2, 3), 0);
    gir_tensor_unref(in);
    /* MultiBoxPrior: anchors per cell of a 2x2 map, sizes (0.5), ratios
     * (1, 2): (cx -+ s*h/w*sqrt(r)/2, cy -+ s/sqrt(r)/2) */
    const char *mb[] = { VAR("data"),
                         "{\"op\": \"_contrib_MultiBoxPrior\", \"name\": \"anchors\", \"attrs\": {\"sizes\": "
                         "\"(0.5,)\", \"ratios\": \"(1, 2)\"}, \"inputs\": [[0, 0, 0]]}",
                         NULL };
    free(write_model("mbp", mb, "[[1, 0, 0]]", NULL, 0));
    char *p = tu_tmp("mbp-symbol.json");
    gir_graph *g = load_with(p, NULL, "data:1,1,2,2");
    gir_tensor *out[1];
    in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 2, 2), NULL);
    /* the output is a constant; the data is not read */
    rt_run(g, 1, &in, 1, out, 1);
    const float *d = out[0]->data;
    assert_int_equal(out[0]->shape.rank, 3);
    assert_true(out[0]->shape.dims[1] == 8 && out[0]->shape.dims[2] == 4);
    float want[8] = { 0, 0, 0.5f, 0.5f, -0.10355339f, 0.07322330f, 0.60355339f, 0.42677670f };
    for (int i = 0; i < 8; i++)
        assert_true(fabsf(d[i] - want[i]) < 1e-6f);
    gir_tensor_unref(out[0]);
    gir_tensor_unref(in);
    gir_graph_free(g);
    free(p);
}

/* Operators with no inference form are refused by name when written
 * elsewhere, and the reason names the attribute that decides. */
static void test_refusals(void **state)
{
    (void)state;
    const char *nodes[] = {
        VAR("data"),
        "{\"op\": \"LeakyReLU\", \"name\": \"rr\", \"attrs\": {\"act_type\": \"rrelu\"}, \"inputs\": [[0, 0, 0]]}",
        "{\"op\": \"WarpCTC\", \"name\": \"ctc\", \"attrs\": {\"label_length\": \"4\", \"input_length\": \"8\"}, "
        "\"inputs\": [[0, 0, 0]]}",
        "{\"op\": \"LeakyReLU\", \"name\": \"odd\", \"attrs\": {\"act_type\": \"swish\"}, \"inputs\": [[0, 0, 0]]}",
        NULL
    };
    /* rrelu's mask (output 1) read by a head: a training output */
    free(write_model("refuse", nodes, "[[1, 1, 0], [2, 0, 0], [3, 0, 0]]", NULL, 0));
    char *p = tu_tmp("refuse-symbol.json");
    gir_graph *g = load_with(p, NULL, "data:1,4");
    char *o = tu_tmp("refuse.onnx");
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_save(g, o, "onnx", NULL, &err), &err, GIR_E_UNSUPPORTED_OP,
             "LeakyReLU (an operator of mxnet kept verbatim: act_type=rrelu with its mask output read",
             "WarpCTC (an operator of mxnet kept verbatim: a training loss (CTC) with no inference form)",
             "LeakyReLU (an operator of mxnet kept verbatim: act_type=swish)");
    gir_error_clear(&err);
    assert_false(gir_path_exists(o));
    /* the MXNet writer writes them back */
    char *m = tu_tmp("refuse-rt-symbol.json");
    tu_save(g, m, "mxnet", NULL);
    free(m);
    free(o);
    free(p);
    gir_graph_free(g);
}

/* ---- reader bugs ------------------------------------------------------------------------------- */

/* A symbol whose weights file is missing is refused by default, naming the
 * files looked for and the option; with the option, the weights are
 * inputs with shapes completed from the data's. */
static void test_missing_weights(void **state)
{
    (void)state;
    const char *nodes[] = { VAR("data"), VAR("fc_weight"), VAR("fc_bias"),
                            "{\"op\": \"FullyConnected\", \"name\": \"fc\", \"attrs\": {\"num_hidden\": \"3\"}, "
                            "\"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}",
                            NULL };
    char *p = write_model("noweights", nodes, "[[3, 0, 0]]", NULL, 0);
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "input-shape", "data:2,5", &err), &err);
    gir_graph *g = NULL;
    TU_FAILS(gir_load(p, NULL, o, &g, &err), &err, GIR_E_PARAMS,
             "no weights file found beside the graph (looked for noweights-NNNN.params or noweights-symbol.params)",
             "its 2 weights (first 'fc_weight') would become graph inputs",
             "--weights-as-inputs (reader option weights-as-inputs=1)");
    gir_error_clear(&err);
    assert_null(g);
    TU_OK(gir_options_set(o, "weights-as-inputs", "1", &err), &err);
    TU_OK(gir_load(p, NULL, o, &g, &err), &err);
    assert_int_equal(gir_graph_input_count(g), 3);
    const gir_value *w = g->values[gir_graph_value_index(g, "fc_weight")];
    assert_int_equal(w->shape.rank, 2);
    assert_true(w->shape.dims[0] == 3 && w->shape.dims[1] == 5);
    gir_graph_free(g);
    gir_options_free(o);
    free(p);
    /* A TVM graph whose params file is named otherwise: refused too, not
     * read with no parameters. */
    char *src = tu_shared("realworld/tvm/wrn_fc.json");
    char *dst = tu_tmp("deploy_graph.json");
    size_t len;
    char *text = tu_slurp(src, &len);
    assert_true(tu_write(dst, text, len));
    free(text);
    TU_FAILS(gir_load(dst, NULL, NULL, &g, &err), &err, GIR_E_PARAMS, "looked for deploy_param.params");
    gir_error_clear(&err);
    free(dst);
    free(src);
}

/* An input of unknown rank takes the rank its consumers imply, so the ONNX
 * written without --input-shape declares a shape (onnx.checker requires
 * one); an input whose rank nothing implies is refused by the ONNX writer. */
static void test_rank_from_consumers(void **state)
{
    (void)state;
    char *p = tu_shared("realworld/mxnet/lenet-symbol.json");
    gir_graph *g = load_with(p, NULL, NULL);
    const gir_value *d = g->values[gir_graph_value_index(g, "data")];
    assert_int_equal(d->shape.rank, 4);
    gir_graph_free(g);
    free(p);
    const char *nodes[] = { VAR("data"), "{\"op\": \"relu\", \"name\": \"r\", \"inputs\": [[0, 0, 0]]}", NULL };
    p = write_model("norank", nodes, "[[1, 0, 0]]", NULL, 0);
    g = load_with(p, NULL, NULL);
    char *o = tu_tmp("norank.onnx");
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_save(g, o, "onnx", NULL, &err), &err, GIR_E_UNSUPPORTED,
             "graph input 'data' of unknown rank (an ONNX graph input needs a shape; give its shape with "
             "--input-shape)");
    gir_error_clear(&err);
    free(o);
    gir_graph_free(g);
    free(p);
}

/* NNVM dense after a Reshape: the Reshape's shape gives the rank, so the
 * NNVM reader maps its own writer's output (it kept it verbatim). */
static void test_nnvm_dense_after_reshape(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 2, 2, 2));
    float w[24];
    for (int i = 0; i < 24; i++)
        w[i] = (float)i / 8;
    rt_const(g, "w", GIR_DT_F32, 2, DIMS(3, 8), w);
    gir_node *r = rt_node(g, GIR_OP_Reshape, "rs", "x", "flat");
    RT_INTS(g, r, "shape", 1, 8);
    gir_node *gm = rt_node(g, GIR_OP_Gemm, "fc", "flat,w", "y");
    rt_attr_int(g, gm, "transB", 1);
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    char *p = tu_tmp("dense_graph.json");
    tu_save(g, p, "nnvm", NULL);
    gir_graph *h = load_with(p, "nnvm", NULL);
    assert_int_equal(tu_count_opaque(h), 0);
    assert_int_equal(find_node(h, "fc")->op, GIR_OP_Gemm);
    float x[8] = { 1, 0, 0, 0, 0, 0, 0, 1 };
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 2, 2), x);
    expect_run(h, &in, 1, 1, 0, 2, DIMS(1, 3), F32S(0.875f, 2.875f, 4.875f), 0);
    gir_tensor_unref(in);
    gir_graph_free(h);
    gir_graph_free(g);
    free(p);
}

/* A TVM graph-executor file and its params come back byte for byte: the
 * params in the file's order, a final newline kept. */
static void test_tvm_bytes(void **state)
{
    (void)state;
    static const char *const names[] = { "wrn_fc", "wrn_nl" };
    for (size_t k = 0; k < 2; k++) {
        char *sj = tu_shared("realworld/tvm/wrn_fc.json"), *sp = tu_shared("realworld/tvm/wrn_fc.params");
        char *fj = gir_strdupf("%s.json", names[k]), *fp = gir_strdupf("%s.params", names[k]);
        char *dj = tu_tmp(fj), *dp = tu_tmp(fp);
        size_t lj, lp;
        char *tj = tu_slurp(sj, &lj), *tp = tu_slurp(sp, &lp);
        assert_true(tu_write(dj, tj, lj));
        if (k == 1) { /* the same with a final newline */
            FILE *f = fopen(dj, "ab");
            assert_non_null(f);
            fputc('\n', f);
            fclose(f);
        }
        assert_true(tu_write(dp, tp, lp));
        gir_graph *g = load_with(dj, NULL, NULL);
        char *oj = gir_strdupf("%s/out_%s.json", tu_dir, names[k]), *op = gir_strdupf("%s/out_%s.params", tu_dir,
                                                                                          names[k]);
        tu_save(g, oj, "tvm", NULL);
        assert_true(tu_files_equal(dj, oj));
        assert_true(tu_files_equal(dp, op));
        gir_graph_free(g);
        free(tj);
        free(tp);
        free(sj);
        free(sp);
        free(fj);
        free(fp);
        free(dj);
        free(dp);
        free(oj);
        free(op);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaky_relu),
        cmocka_unit_test(test_prelu),
        cmocka_unit_test(test_upsampling),
        cmocka_unit_test(test_deconv_target_shape),
        cmocka_unit_test(test_crop),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_output_layers),
        cmocka_unit_test(test_reshape_codes),
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_missing_weights),
        cmocka_unit_test(test_rank_from_consumers),
        cmocka_unit_test(test_nnvm_dense_after_reshape),
        cmocka_unit_test(test_tvm_bytes),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
