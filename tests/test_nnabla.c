/* The NNabla format: real archives read and written back unchanged, the
 * parameter formats, the function <-> operator mapping, the writer from
 * canonical graphs, options, and bad input refused with clear errors. */
#include "testutil.h"

#include "formats/nnabla/nnabla.h"
#include "io/h5.h"
#include "io/zip.h"
#include "passes/diff.h"
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

static gir_graph *load(const char *path, const gir_options *o)
{
    return tu_load(path, NULL, o);
}

static gir_graph *load_shared(const char *rel)
{
    char *p = tu_shared(rel);
    gir_graph *g = load(p, NULL);
    free(p);
    return g;
}

/* Asserts a and b are the same graph: structure, names, meta, weights. */
static void assert_same_opt(const gir_graph *a, const gir_graph *b, const char *what, bool names_meta)
{
    tu_assert_same(a, b, names_meta, names_meta, what);
}

static void assert_same(const gir_graph *a, const gir_graph *b, const char *what)
{
    assert_same_opt(a, b, what, true);
}

static char *member(const char *zip_path, const char *name, size_t *len)
{
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(zip_path, NULL, &z, &err), &err);
    ptrdiff_t i = gir_zip_find(z, name);
    if (i < 0) {
        gir_zip_close(z);
        return NULL;
    }
    void *data;
    TU_OK(gir_zip_read(z, (size_t)i, &data, len, &err), &err);
    gir_zip_close(z);
    return data;
}

/* Writes an .nnp holding one network.nntxt and optional parameter members. */
static void make_nnp(const char *path, const char *nntxt, const char *pname, const void *pdata, size_t plen)
{
    gir_error err = GIR_ERROR_INIT;
    gir_zipw *z;
    TU_OK(gir_zipw_open(path, &z, &err), &err);
    TU_OK(gir_zipw_add_buffer(z, "nnp_version.txt", "0.1\n", 4, false, &err), &err);
    TU_OK(gir_zipw_add_buffer(z, "network.nntxt", nntxt, strlen(nntxt), true, &err), &err);
    if (pname)
        TU_OK(gir_zipw_add_buffer(z, pname, pdata, plen, false, &err), &err);
    TU_OK(gir_zipw_close(z, &err), &err);
}

static const gir_node *node_named(const gir_graph *g, const char *name)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0)
            return g->nodes[i];
    print_error("no node named %s\n", name);
    fail();
    return NULL;
}

static void assert_ints(const gir_node *n, const char *attr, const int64_t *want, size_t k)
{
    const int64_t *v;
    ptrdiff_t got = gir_attrs_get_ints(&n->attrs, attr, &v);
    assert_int_equal(got, (ptrdiff_t)k);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(v[i], want[i]);
}

static gir_graph *load_text(const char *name, const char *text, const gir_options *o)
{
    char *p = tu_tmp(name);
    assert_true(tu_write(p, text, strlen(text)));
    gir_graph *g = load(p, o);
    remove(p);
    free(p);
    return g;
}

static void load_text_fails(const char *name, const char *text, gir_status code, const char *frag1,
                            const char *frag2)
{
    char *p = tu_tmp(name);
    assert_true(tu_write(p, text, strlen(text)));
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = (gir_graph *)1;
    TU_FAILS(gir_load(p, NULL, NULL, &g, &err), &err, code, frag1, frag2);
    assert_null(g);
    gir_error_clear(&err);
    remove(p);
    free(p);
}

static void load_fails(const char *path, const gir_options *o, gir_status code, const char *frag1,
                       const char *frag2)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = (gir_graph *)1;
    TU_FAILS(gir_load(path, NULL, o, &g, &err), &err, code, frag1, frag2);
    assert_null(g);
    assert_int_equal(gir_status_exit_code(code), 2);
    gir_error_clear(&err);
}

/* ---- real files ---------------------------------------------------------- */

static void roundtrip_dir(const char *rel, size_t *count)
{
    char *dir = tu_shared(rel);
    size_t n;
    char **names = tu_list_files(dir, NULL, ".nnp", &n);
    assert_non_null(names);
    for (size_t i = 0; i < n; i++) {
        char *in = tu_join(dir, names[i]);
        char *out = tu_tmp("roundtrip.nnp");
        gir_graph *a = load(in, NULL);
        assert_true(a->n_nodes > 0);
        gir_options *o = tu_options("force", "1", NULL);
        tu_save(a, out, "nnabla", o);
        gir_graph *b = load(out, NULL);
        assert_same(a, b, names[i]);
        /* and once more: the written file reproduces itself */
        char *out2 = tu_tmp("roundtrip2.nnp");
        tu_save(b, out2, "nnabla", o);
        assert_true(tu_files_equal(out, out2));
        gir_options_free(o);
        gir_graph_free(a);
        gir_graph_free(b);
        remove(out);
        remove(out2);
        free(out);
        free(out2);
        free(in);
        (*count)++;
    }
    tu_free_list(names, n);
    free(dir);
}

static void test_real_archives_round_trip(void **state)
{
    (void)state;
    size_t count = 0;
    roundtrip_dir("realworld/nnp", &count);
    assert_int_equal(count, 3);
    roundtrip_dir("realworld/nnp-onnx-pairs", &count);
    assert_int_equal(count, 3 + 37);
    assert_int_equal(tu_count_entries(tu_dir), 0); /* no temporary file left */
}

static void test_lenet(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/nnp/lenet_010000.nnp");
    assert_string_equal(g->name, "runtime");
    assert_int_equal(g->n_inputs, 1);
    const gir_value *x = g->values[g->inputs[0]];
    assert_string_equal(x->name, "x");
    assert_int_equal(x->shape.rank, 4);
    assert_int_equal(x->shape.dims[0], -1);
    assert_string_equal(x->dim_names[0], "batch");
    assert_int_equal(x->shape.dims[1], 1);
    /* MulScalar, 2 x (Conv, MaxPool, Relu), Flatten + Gemm, Relu, Gemm */
    assert_int_equal(g->n_nodes, 11);
    const gir_node *ms = node_named(g, "MulScalar");
    assert_int_equal(ms->op, GIR_OP_Mul);
    const gir_value *c = g->values[ms->in[1]];
    assert_int_equal(c->kind, GIR_VALUE_CONST);
    assert_string_equal(c->name, "MulScalar/val");
    assert_true(gir_attrs_get_float(&ms->meta, NNB_META_VAL, 0) == 0.00392156862745098);
    const gir_node *conv = node_named(g, "Convolution");
    assert_int_equal(conv->op, GIR_OP_Conv);
    assert_ints(conv, "kernel_shape", (int64_t[]){ 5, 5 }, 2);
    assert_ints(conv, "pads", (int64_t[]){ 0, 0, 0, 0 }, 4);
    assert_ints(conv, "strides", (int64_t[]){ 1, 1 }, 2);
    const gir_node *fl = node_named(g, "Affine/flatten");
    assert_int_equal(fl->op, GIR_OP_Flatten);
    const gir_node *fc = node_named(g, "Affine");
    assert_int_equal(fc->op, GIR_OP_Gemm);
    assert_int_equal(fc->in[0], fl->out[0]);
    /* the Affine weight (256 in x 50 out) is seen as Gemm's transposed B */
    assert_int_equal(gir_node_int(fc, "transB", 0), 1);
    const gir_value *w = g->values[fc->in[1]];
    assert_string_equal(w->name, "fc3/affine/W");
    assert_int_equal(w->shape.dims[0], 50);
    assert_int_equal(w->shape.dims[1], 256);
    assert_non_null(gir_attrs_find(&w->meta, NNB_META_TRANSPOSED));
    /* the first weight's bytes, as the file stores them */
    const float *wd;
    gir_error err = GIR_ERROR_INIT;
    const gir_value *w1 = g->values[conv->in[1]];
    TU_OK(gir_tensor_load(w1->data, (const void **)&wd, &err), &err);
    assert_true(isfinite(wd[0]) && wd[0] != 0.0f);
    /* nnp -> nnp: the network text is the same, byte for byte */
    char *out = tu_tmp("lenet.nnp");
    tu_save(g, out, "nnabla", NULL);
    size_t la, lb;
    char *pa = tu_shared("realworld/nnp/lenet_010000.nnp");
    char *ta = member(pa, "network.nntxt", &la);
    char *tb = member(out, "network.nntxt", &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ta, tb, la);
    char *ver = member(out, "nnp_version.txt", &lb);
    assert_int_equal(lb, 4);
    assert_memory_equal(ver, "0.1\n", 4);
    /* members in nnabla's order, stored, with fixed times */
    gir_zip *z;
    TU_OK(gir_zip_open(out, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_count(z), 3);
    assert_string_equal(gir_zip_name(z, 0), "nnp_version.txt");
    assert_string_equal(gir_zip_name(z, 1), "network.nntxt");
    assert_string_equal(gir_zip_name(z, 2), "parameter.h5");
    gir_zip_close(z);
    free(ver);
    free(ta);
    free(tb);
    free(pa);
    remove(out);
    free(out);
    gir_graph_free(g);
}

/* Parameter names in the order a parameter member lists them. */
static char *param_order(const char *nnp)
{
    size_t len;
    gir_buf b = GIR_BUF_INIT;
    char *h5 = member(nnp, "parameter.h5", &len);
    if (h5) {
        gir_h5_param *p;
        size_t n;
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_h5_list(h5, len, &p, &n, &err), &err);
        for (size_t i = 0; i < n; i++)
            gir_buf_printf(&b, "%s%s:%d:%lld", i ? " " : "", p[i].name, p[i].need_grad, (long long)p[i].index);
        gir_h5_params_free(p, n);
        free(h5);
        return gir_buf_take(&b);
    }
    char *pb = member(nnp, "parameter.protobuf", &len);
    assert_non_null(pb);
    Nnabla__NNablaProtoBuf *m =
        nnabla__nnabla_proto_buf__unpack(NULL, len, (const uint8_t *)pb);
    assert_non_null(m);
    for (size_t i = 0; i < m->n_parameter; i++)
        gir_buf_printf(&b, "%s%s:%d:%zu", i ? " " : "", m->parameter[i]->variable_name, m->parameter[i]->need_grad,
                       i);
    nnabla__nnabla_proto_buf__free_unpacked(m, NULL);
    free(pb);
    return gir_buf_take(&b);
}

static void test_parameter_formats(void **state)
{
    (void)state;
    char *src = tu_shared("realworld/nnp/model_simple.nnp");
    char *pb = tu_tmp("simple_pb.nnp"), *h5 = tu_tmp("simple_h5.nnp");
    static const char *want = "affine_1/affine/W:1:0 affine_1/affine/b:1:1 affine_2/affine/W:1:2 affine_2/affine/b:1:3";
    char *o0 = param_order(src);
    assert_string_equal(o0, want);
    gir_graph *a = load(src, NULL);
    gir_options *o = tu_options("param-format", "protobuf", NULL);
    tu_save(a, pb, "nnabla", o);
    gir_options_free(o);
    char *o1 = param_order(pb);
    assert_string_equal(o1, want);
    size_t len;
    char *nothing = member(pb, "parameter.h5", &len);
    assert_null(nothing);
    gir_graph *b = load(pb, NULL);
    assert_same(a, b, "h5 -> protobuf");
    tu_save(b, h5, "nnabla", NULL);
    char *o2 = param_order(h5);
    assert_string_equal(o2, want);
    gir_graph *c = load(h5, NULL);
    assert_same(a, c, "protobuf -> h5");
    /* the h5 of lenet (from parameter.protobuf): its order and need_grad */
    gir_graph *l = load_shared("realworld/nnp/lenet_010000.nnp");
    char *lh5 = tu_tmp("lenet_h5.nnp");
    tu_save(l, lh5, "nnabla", NULL);
    char *o3 = param_order(lh5);
    assert_string_equal(o3, "conv1/conv/W:1:0 conv1/conv/b:1:1 conv2/conv/W:1:2 conv2/conv/b:1:3 fc3/affine/W:1:4 "
                            "fc3/affine/b:1:5 fc4/affine/W:1:6 fc4/affine/b:1:7");
    gir_options *bad = tu_options("param-format", "npy", NULL);
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_save(l, tu_dir, "nnabla", bad, &err), &err, GIR_E_ARGUMENT, "param-format must be h5 or protobuf");
    gir_error_clear(&err);
    gir_options_free(bad);
    free(o0);
    free(o1);
    free(o2);
    free(o3);
    gir_graph_free(a);
    gir_graph_free(b);
    gir_graph_free(c);
    gir_graph_free(l);
    remove(pb);
    remove(h5);
    remove(lh5);
    free(lh5);
    free(pb);
    free(h5);
    free(src);
}

static char *run(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    gir_buf b = GIR_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        gir_buf_append(&b, chunk, n);
    int rc = pclose(p);
    *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    char *s = gir_buf_take(&b);
    return s ? s : calloc(1, 1);
}

/* The written parameter.h5 has nnabla's layout (facts section 3.1), seen
 * by h5dump; the archive passes unzip -t. */
static void test_h5dump_and_unzip(void **state)
{
    (void)state;
    if (!tu_have_program("h5dump") || !tu_have_program("unzip"))
        skip();
    gir_graph *g = load_shared("realworld/nnp/lenet_010000.nnp");
    char *out = tu_tmp("lenet_dump.nnp");
    tu_save(g, out, "nnabla", NULL);
    int status;
    char *cmd = gir_strdupf("unzip -t '%s'", out);
    char *txt = run(cmd, &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(txt, "No errors detected"));
    free(txt);
    free(cmd);
    size_t len;
    char *h5 = member(out, "parameter.h5", &len);
    char *h5path = tu_tmp("parameter.h5");
    assert_true(tu_write(h5path, h5, len));
    cmd = gir_strdupf("h5dump -p -A '%s'", h5path);
    txt = run(cmd, &status);
    assert_int_equal(status, 0);
    static const char *const want[] = {
        "GROUP \"conv1\" {",
        "GROUP \"conv\" {",
        "DATASET \"W\" {",
        "DATATYPE  H5T_IEEE_F32LE",
        "DATASPACE  SIMPLE { ( 16, 1, 5, 5 ) / ( 16, 1, 5, 5 ) }",
        "CONTIGUOUS",
        "ATTRIBUTE \"index\" {",
        "DATATYPE  H5T_STD_I64LE",
        "ATTRIBUTE \"need_grad\" {",
        "H5T_STD_I8LE;",
        "\"FALSE\"            0;",
        "\"TRUE\"             1;",
        "GROUP \"fc4\" {",
        "DATASPACE  SIMPLE { ( 50, 10 ) / ( 50, 10 ) }",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(txt, want[i])) {
            print_error("h5dump lacks <%s>:\n%s\n", want[i], txt);
            fail();
        }
    assert_null(strstr(txt, "FILTERS {\n         COMPRESSION"));
    free(txt);
    free(cmd);
    remove(h5path);
    remove(out);
    free(h5path);
    free(h5);
    free(out);
    gir_graph_free(g);
}

/* ---- options -------------------------------------------------------------- */

static void test_options(void **state)
{
    (void)state;
    char *nnc = tu_shared("realworld/nnp/nnc_result.nnp");
    gir_graph *g = load(nnc, NULL);
    assert_string_equal(g->name, "MainRuntime"); /* the executor's network */
    gir_graph_free(g);
    gir_options *o = tu_options("network", "Main", NULL);
    g = load(nnc, o);
    assert_string_equal(g->name, "Main");
    /* the training network's loss has no canonical operator */
    const gir_node *bce = node_named(g, "BinaryCrossEntropy");
    assert_int_equal(bce->op, GIR_OP_OPAQUE);
    assert_string_equal(bce->opaque_format, "nnabla");
    assert_string_equal(bce->opaque_op, "BinaryCrossEntropy");
    assert_int_equal(g->n_inputs, 2);
    /* Main -> nnp -> Main: every other network, the optimizer, ... stay */
    char *out = tu_tmp("main.nnp");
    tu_save(g, out, "nnabla", NULL);
    gir_graph *b = load(out, o);
    assert_same(g, b, "network=Main");
    gir_graph_free(b);
    b = load(out, NULL);
    assert_string_equal(b->name, "MainRuntime");
    gir_graph_free(b);
    size_t len;
    char *text = member(out, "network.nntxt", &len);
    assert_non_null(strstr(text, "  name: \"MainValidation\"\n"));
    assert_non_null(strstr(text, "optimizer {\n  name: \"Optimizer\"\n"));
    assert_non_null(strstr(text, "      alpha: 0.001\n"));
    assert_non_null(strstr(text, "monitor {\n  name: \"valid_error\"\n"));
    assert_non_null(strstr(text, "    data_name: \"y\\'\"\n"));
    free(text);
    remove(out);
    free(out);
    gir_options_free(o);
    gir_graph_free(g);

    o = tu_options("executor", "Executor", "network", "MainRuntime", NULL);
    g = load(nnc, o);
    assert_string_equal(g->name, "MainRuntime");
    gir_graph_free(g);
    gir_options_free(o);

    gir_error err = GIR_ERROR_INIT;
    o = tu_options("executor", "nope", NULL);
    TU_FAILS(gir_load(nnc, NULL, o, &g, &err), &err, GIR_E_ARGUMENT, "no executor named 'nope' (the file has 'Executor')");
    gir_error_clear(&err);
    gir_options_free(o);
    o = tu_options("executor", "Executor", "network", "Main", NULL);
    TU_FAILS(gir_load(nnc, NULL, o, &g, &err), &err, GIR_E_ARGUMENT, "executor 'Executor' runs network 'MainRuntime', not 'Main'");
    gir_error_clear(&err);
    gir_options_free(o);
    o = tu_options("network", "Other", NULL);
    TU_FAILS(gir_load(nnc, NULL, o, &g, &err), &err, GIR_E_ARGUMENT, "no network named 'Other'");
    gir_error_clear(&err);
    gir_options_free(o);
    o = tu_options("batch-size", "0", NULL);
    TU_FAILS(gir_load(nnc, NULL, o, &g, &err), &err, GIR_E_ARGUMENT, "batch-size must be a positive number");
    gir_error_clear(&err);
    gir_options_free(o);
    o = tu_options("nnabla-nonsense", "1", NULL);
    TU_FAILS(gir_load(nnc, NULL, o, &g, &err), &err, GIR_E_ARGUMENT, "nnabla-nonsense");
    gir_error_clear(&err);
    gir_options_free(o);

    /* --batch-size fixes the -1 placeholders */
    o = tu_options("batch-size", "4", NULL);
    g = load(nnc, o);
    const gir_value *in = g->values[g->inputs[0]];
    assert_int_equal(in->shape.dims[0], 4);
    assert_null(in->dim_names[0]);
    gir_graph_free(g);
    gir_options_free(o);
    free(nnc);
}

/* A standalone network.nntxt with its parameter file given separately. */
static void test_standalone_nntxt(void **state)
{
    (void)state;
    char *nnp = tu_shared("realworld/nnp/lenet_010000.nnp");
    size_t tl, pl;
    char *text = member(nnp, "network.nntxt", &tl);
    char *params = member(nnp, "parameter.protobuf", &pl);
    char *tp = tu_tmp("lenet.nntxt"), *pp = tu_tmp("lenet.protobuf");
    assert_true(tu_write(tp, text, tl));
    assert_true(tu_write(pp, params, pl));
    gir_options *o = tu_options("params", pp, NULL);
    gir_graph *a = load(tp, o);
    gir_graph *b = load(nnp, NULL);
    assert_same(a, b, "nntxt + params");
    /* without parameters: the structure, weights without data */
    gir_graph *c = load(tp, NULL);
    assert_int_equal(c->n_nodes, 11);
    assert_null(c->values[gir_graph_value_index(c, "conv1/conv/W")]->data);
    /* written as .nntxt: the text and a companion parameter file */
    char *out = tu_tmp("out.nntxt"), *outp = tu_tmp("out.h5");
    tu_save(a, out, "nnabla", NULL);
    gir_options *o2 = tu_options("params", outp, NULL);
    gir_graph *d = load(out, o2);
    assert_same(a, d, "written nntxt + h5");
    size_t ol;
    char *otext = tu_slurp(out, &ol);
    assert_int_equal(ol, tl);
    assert_memory_equal(otext, text, tl);
    free(otext);
    gir_graph_free(a);
    gir_graph_free(b);
    gir_graph_free(c);
    gir_graph_free(d);
    gir_options_free(o);
    gir_options_free(o2);
    remove(tp);
    remove(pp);
    remove(out);
    remove(outp);
    free(out);
    free(outp);
    free(tp);
    free(pp);
    free(text);
    free(params);
    free(nnp);
}

/* ---- mapping ------------------------------------------------------------------ */

#define VAR(name, type, shape) "  variable { name: \"" name "\" type: \"" type "\" shape: { " shape " } }\n"

static void test_map_batchnorm_proto3(void **state)
{
    (void)state;
    /* no eps: proto3 zero, not nnabla's 1e-05 default */
    gir_graph *g = load_text("bn.nntxt",
                             "network { name: \"n\"\n" VAR("x", "Buffer", "dim:-1 dim:3 dim:4 dim:4")
                                 VAR("beta", "Parameter", "dim:1 dim:3 dim:1 dim:1")
                                     VAR("gamma", "Parameter", "dim:1 dim:3 dim:1 dim:1")
                                         VAR("mean", "Parameter", "dim:1 dim:3 dim:1 dim:1")
                                             VAR("var", "Parameter", "dim:1 dim:3 dim:1 dim:1")
                                                 VAR("y", "Buffer", "dim:-1 dim:3 dim:4 dim:4")
                             "  function { name: \"bn\" type: \"BatchNormalization\" input: [\"x\", \"beta\", "
                             "\"gamma\", \"mean\", \"var\"] output: \"y\"\n"
                             "    batch_normalization_param { axes: 1 decay_rate: 0.9 } }\n}\n",
                             NULL);
    const gir_node *bn = node_named(g, "bn");
    assert_int_equal(bn->op, GIR_OP_BatchNormalization);
    assert_true(gir_node_float(bn, "epsilon", 1) == 0.0);
    assert_true((float)gir_node_float(bn, "momentum", 0) == 0.9f);
    /* canonical order: X, scale (gamma), B (beta), mean, var; shapes (C) */
    assert_string_equal(g->values[bn->in[1]]->name, "gamma");
    assert_string_equal(g->values[bn->in[2]]->name, "beta");
    const gir_value *m = g->values[bn->in[3]];
    assert_int_equal(m->shape.rank, 1);
    assert_int_equal(m->shape.dims[0], 3);
    const int64_t *decl;
    assert_int_equal(gir_attrs_get_ints(&m->meta, NNB_META_SHAPE, &decl), 4);
    assert_int_equal(decl[1], 3);
    /* batch_stat: true is training: kept opaque */
    gir_graph_free(g);
    g = load_text("bn2.nntxt",
                  "network { name: \"n\"\n" VAR("x", "Buffer", "dim:-1 dim:3 dim:4 dim:4")
                      VAR("beta", "Parameter", "dim:1 dim:3 dim:1 dim:1") VAR("gamma", "Parameter", "dim:1 dim:3 dim:1 dim:1")
                          VAR("mean", "Parameter", "dim:1 dim:3 dim:1 dim:1") VAR("var", "Parameter", "dim:1 dim:3 dim:1 dim:1")
                              VAR("y", "Buffer", "dim:-1 dim:3 dim:4 dim:4")
                  "  function { name: \"bn\" type: \"BatchNormalization\" input: [\"x\", \"beta\", \"gamma\", \"mean\", "
                  "\"var\"] output: \"y\"\n    batch_normalization_param { axes: 1 batch_stat: True } }\n}\n",
                  NULL);
    bn = node_named(g, "bn");
    assert_int_equal(bn->op, GIR_OP_OPAQUE);
    const char *p = gir_node_string(bn, "batch_normalization_param", "");
    assert_string_equal(p, "axes: 1\nbatch_stat: true\n");
    assert_int_equal(g->values[bn->in[3]]->shape.rank, 4); /* untouched */
    gir_graph_free(g);
}

static void test_map_affine_split_pool(void **state)
{
    (void)state;
    gir_graph *g = load_text(
        "map.nntxt",
        "network { name: \"n\"\n" VAR("x", "Buffer", "dim:-1 dim:3 dim:5 dim:5") VAR("p", "Buffer", "dim:-1 dim:3 dim:3 dim:3")
            VAR("w", "Parameter", "dim:27 dim:6") VAR("a", "Buffer", "dim:-1 dim:6") VAR("w2", "Parameter", "dim:6 dim:3")
                VAR("b", "Buffer", "dim:-1 dim:3") VAR("s0", "Buffer", "dim:-1") VAR("s1", "Buffer", "dim:-1")
                    VAR("s2", "Buffer", "dim:-1") VAR("r", "Buffer", "dim:-1 dim:9 dim:3") VAR("w3", "Parameter", "dim:3 dim:2")
                        VAR("c", "Buffer", "dim:-1 dim:9 dim:2")
        "  function { name: \"pool\" type: \"MaxPooling\" input: \"x\" output: \"p\"\n"
        "    max_pooling_param { kernel: { dim: 3 dim: 3 } stride: { dim: 2 dim: 2 } ignore_border: false pad: { dim: 0 dim: 0 } } }\n"
        "  function { name: \"fc\" type: \"Affine\" input: [\"p\", \"w\"] output: \"a\" affine_param { base_axis: 1 } }\n"
        "  function { name: \"fc2\" type: \"Affine\" input: [\"a\", \"w2\"] output: \"b\" affine_param { base_axis: 1 } }\n"
        "  function { name: \"split\" type: \"Split\" input: \"b\" output: [\"s0\", \"s1\", \"s2\"] split_param { axis: 1 } }\n"
        "  function { name: \"rs\" type: \"Reshape\" input: \"p\" output: \"r\" reshape_param { shape: { dim: -1 dim: 9 dim: 3 } } }\n"
        "  function { name: \"fc3\" type: \"Affine\" input: [\"r\", \"w3\"] output: \"c\" affine_param { base_axis: 2 } }\n"
        "}\n",
        NULL);
    /* ignore_border=false: floor((5 + 0 - 1) / 2) + 1 = 3 cells, as floor mode with 2 more cells of end padding */
    const gir_node *pool = node_named(g, "pool");
    assert_int_equal(pool->op, GIR_OP_MaxPool);
    assert_ints(pool, "pads", (int64_t[]){ 0, 0, 2, 2 }, 4);
    assert_ints(pool, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
    /* 4-D input: Flatten + Gemm; 2-D input: Gemm alone */
    assert_int_equal(node_named(g, "fc/flatten")->op, GIR_OP_Flatten);
    assert_int_equal(node_named(g, "fc")->op, GIR_OP_Gemm);
    const gir_node *fc2 = node_named(g, "fc2");
    assert_int_equal(fc2->op, GIR_OP_Gemm);
    assert_string_equal(g->values[fc2->in[0]]->name, "a");
    /* Split is an unstack: Split into ones, a Squeeze per output */
    const gir_node *sp = node_named(g, "split");
    assert_int_equal(sp->op, GIR_OP_Split);
    assert_int_equal(sp->n_out, 3);
    assert_ints(sp, "split", (int64_t[]){ 1, 1, 1 }, 3);
    const gir_node *sq = node_named(g, "split/squeeze_1");
    assert_int_equal(sq->op, GIR_OP_Squeeze);
    assert_ints(sq, "axes", (int64_t[]){ 1 }, 1);
    assert_string_equal(g->values[sq->out[0]]->name, "s1");
    assert_int_equal(sq->in[0], sp->out[1]);
    /* Reshape keeps its -1 */
    const gir_node *rs = node_named(g, "rs");
    assert_int_equal(rs->op, GIR_OP_Reshape);
    assert_ints(rs, "shape", (int64_t[]){ -1, 9, 3 }, 3);
    /* base_axis 2 keeps a leading axis: no canonical equivalent */
    const gir_node *fc3 = node_named(g, "fc3");
    assert_int_equal(fc3->op, GIR_OP_OPAQUE);
    assert_string_equal(gir_node_string(fc3, "affine_param", ""), "base_axis: 2\n");
    /* written back: the same functions again */
    char *out = tu_tmp("map.nntxt.out.nnp");
    tu_save(g, out, "nnabla", NULL);
    size_t len;
    char *text = member(out, "network.nntxt", &len);
    assert_non_null(strstr(text, "    type: \"Split\"\n    input: \"b\"\n    output: \"s0\"\n    output: \"s1\"\n"
                                 "    output: \"s2\"\n    split_param {\n      axis: 1\n    }\n"));
    assert_non_null(strstr(text, "    name: \"fc\"\n    type: \"Affine\"\n    input: \"p\"\n    input: \"w\"\n"));
    assert_non_null(strstr(text, "    max_pooling_param {\n      kernel {\n"));
    assert_null(strstr(text, "ignore_border: true")); /* false: not printed (proto3) */
    assert_null(strstr(text, "squeeze"));
    assert_null(strstr(text, "flatten"));
    gir_graph *b = load(out, NULL);
    assert_same(g, b, "mapped functions");
    gir_graph_free(b);
    free(text);
    remove(out);
    free(out);
    gir_graph_free(g);
}

static void test_map_scalars_and_opaque(void **state)
{
    (void)state;
    gir_graph *g = load_text(
        "scal.nntxt",
        "network { name: \"n\"\n" VAR("x", "Buffer", "dim:2 dim:3") VAR("a", "Buffer", "dim:2 dim:3") VAR("b", "Buffer", "dim:2 dim:3")
            VAR("c", "Buffer", "dim:2 dim:3") VAR("d", "Buffer", "dim:2 dim:3") VAR("e", "Buffer", "dim:2 dim:3")
                VAR("f", "Buffer", "dim:2") VAR("h", "Buffer", "dim:2 dim:3") VAR("i", "Buffer", "dim:2 dim:3")
                    VAR("j", "Buffer", "dim:2 dim:3") VAR("k", "Buffer", "dim:2 dim:3")
        "  function { name: \"gs\" type: \"GreaterScalar\" input: \"x\" output: \"i\" greater_scalar_param { val: 0.3 } }\n"
        "  function { name: \"nz\" type: \"NotEqualScalar\" input: \"i\" output: \"j\" }\n"
        "  function { name: \"neg\" type: \"MulScalar\" input: \"x\" output: \"a\" mul_scalar_param { val: -1 } }\n"
        "  function { name: \"sqrt\" type: \"PowScalar\" input: \"a\" output: \"b\" pow_scalar_param { val: 0.5 } }\n"
        "  function { name: \"rsub\" type: \"RSubScalar\" input: \"b\" output: \"c\" r_sub_scalar_param { val: 0.1 } }\n"
        "  function { name: \"clip\" type: \"MinimumScalar\" input: \"c\" output: \"d\" minimum_scalar_param { val: 6 } }\n"
        "  function { name: \"sp\" type: \"SumPooling\" input: \"d\" output: \"e\" }\n"
        "  function { name: \"sum\" type: \"Sum\" input: \"e\" output: \"f\" sum_param { axes: 1 } }\n"
        "  function { type: \"Softmax\" input: \"e\" output: \"h\" }\n"
        "  function { type: \"ELU\" input: \"e\" output: \"k\" }\n"
        "}\n",
        NULL);
    /* comparisons give bools, cast to nnabla's 0/1 floats */
    const gir_node *gs = node_named(g, "gs");
    assert_int_equal(gs->op, GIR_OP_Greater);
    assert_true(*(const float *)g->values[gs->in[1]]->data->data == 0.3f);
    assert_int_equal(g->values[gs->out[0]]->dtype, GIR_DT_BOOL);
    const gir_node *gcast = node_named(g, "gs/float");
    assert_int_equal(gcast->op, GIR_OP_Cast);
    assert_string_equal(g->values[gcast->out[0]]->name, "i");
    assert_int_equal(node_named(g, "nz")->op, GIR_OP_Cast); /* NotEqualScalar(0): x != 0 */
    assert_int_equal(node_named(g, "neg")->op, GIR_OP_Neg);
    assert_int_equal(node_named(g, "sqrt")->op, GIR_OP_Sqrt);
    const gir_node *rsub = node_named(g, "rsub");
    assert_int_equal(rsub->op, GIR_OP_Sub);
    const gir_value *c = g->values[rsub->in[0]];
    assert_int_equal(c->kind, GIR_VALUE_CONST);
    assert_int_equal(c->shape.rank, 0);
    assert_true(*(const float *)c->data->data == 0.1f);
    const gir_node *clip = node_named(g, "clip");
    assert_int_equal(clip->op, GIR_OP_Clip);
    assert_true(gir_node_float(clip, "max", 0) == 6.0);
    assert_null(gir_attrs_find(&clip->attrs, "min"));
    const gir_node *sp = node_named(g, "sp");
    assert_int_equal(sp->op, GIR_OP_OPAQUE);
    assert_int_equal(sp->attrs.n, 0);
    const gir_node *sum = node_named(g, "sum");
    assert_int_equal(sum->op, GIR_OP_ReduceSum);
    assert_int_equal(gir_node_int(sum, "keepdims", 1), 0); /* proto3: absent keep_dims is false */
    /* an unnamed function without its parameter message: softmax axis 0 */
    const gir_node *sm = node_named(g, "Softmax");
    assert_int_equal(sm->op, GIR_OP_Softmax);
    assert_int_equal(gir_node_int(sm, "axis", -1), 0);
    assert_non_null(gir_attrs_find(&sm->meta, NNB_META_NO_NAME));
    assert_non_null(gir_attrs_find(&sm->meta, NNB_META_NO_PARAM));
    /* a plain row with attributes (ELU's alpha) also keeps the message absent */
    const gir_node *elu = node_named(g, "ELU");
    assert_int_equal(elu->op, GIR_OP_Elu);
    assert_true(gir_node_float(elu, "alpha", -1) == 0.0);
    assert_non_null(gir_attrs_find(&elu->meta, NNB_META_NO_PARAM));
    char *out = tu_tmp("scal.nnp");
    tu_save(g, out, "nnabla", NULL);
    size_t len;
    char *text = member(out, "network.nntxt", &len);
    assert_non_null(strstr(text, "    type: \"MulScalar\"\n    input: \"x\"\n    output: \"a\"\n    mul_scalar_param {\n"
                                 "      val: -1.0\n"));
    assert_non_null(strstr(text, "    r_sub_scalar_param {\n      val: 0.1\n"));
    assert_non_null(strstr(text, "    type: \"GreaterScalar\"\n    input: \"x\"\n    output: \"i\"\n"
                                 "    greater_scalar_param {\n      val: 0.3\n"));
    assert_non_null(strstr(text, "    type: \"NotEqualScalar\"\n    input: \"i\"\n    output: \"j\"\n  }\n"));
    assert_null(strstr(text, "Cast"));
    assert_non_null(strstr(text, "  function {\n    type: \"Softmax\"\n    input: \"e\"\n    output: \"h\"\n  }\n"));
    assert_non_null(strstr(text, "  function {\n    type: \"ELU\"\n    input: \"e\"\n    output: \"k\"\n  }\n"));
    assert_null(strstr(text, "rsub/val"));
    gir_graph *b = load(out, NULL);
    assert_same(g, b, "scalars");
    gir_graph_free(b);
    free(text);
    remove(out);
    free(out);
    gir_graph_free(g);
}

static void test_loops_refused(void **state)
{
    (void)state;
    load_text_fails("loop.nntxt",
                    "network { name: \"rnn\"\n" VAR("x", "Buffer", "dim:1") VAR("y", "Buffer", "dim:1")
                        VAR("z", "Buffer", "dim:1")
                    "  function { name: \"RepeatStart\" type: \"RepeatStart\" input: \"x\" output: \"y\" "
                    "repeat_param { repeat_id: \"r\" times: 3 } }\n"
                    "  function { name: \"d\" type: \"Delay\" input: \"y\" output: \"z\" }\n}\n",
                    GIR_E_UNSUPPORTED, "network 'rnn' uses the loop pseudo-functions RepeatStart, Delay (2 functions)",
                    "node 'RepeatStart'");
}

/* ---- the writer from canonical graphs ------------------------------------------ */

static int32_t add_weight(gir_graph *g, const char *name, int rank, const int64_t *dims)
{
    gir_shape s = { rank, { 0 } };
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
    float *d = t->data;
    for (int64_t i = 0; i < gir_shape_numel(&s); i++)
        d[i] = (float)i * 0.5f - 1.0f;
    int32_t idx;
    TU_OK(gir_graph_add_value(g, name, GIR_VALUE_WEIGHT, &idx, &err), &err);
    gir_value_set_data(g->values[idx], t);
    gir_tensor_unref(t);
    return idx;
}

/* Input [1,3,8,8] -> Conv -> Relu -> Flatten -> Gemm(transB=1) -> Softmax,
 * as an MXNet-like reader would make it. */
static gir_graph *canonical_net(bool with_lrn)
{
    gir_graph *g;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_new(&g, &err), &err);
    g->name = gir_arena_strdup(&g->arena, "canon");
    int32_t x;
    TU_OK(gir_graph_add_value(g, "data", GIR_VALUE_INPUT, &x, &err), &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = (gir_shape){ 4, { 1, 3, 8, 8 } };
    TU_OK(gir_graph_add_input(g, x, &err), &err);
    int32_t w = add_weight(g, "conv_weight", 4, (int64_t[]){ 4, 3, 3, 3 });
    int32_t b = add_weight(g, "conv_bias", 1, (int64_t[]){ 4 });
    gir_node *n;
    TU_OK(gir_graph_add_node(g, "conv", GIR_OP_Conv, 3, 1, &n, &err), &err);
    n->in[0] = x, n->in[1] = w, n->in[2] = b;
    gir_attrs_set_ints(g, &n->attrs, "kernel_shape", (int64_t[]){ 3, 3 }, 2, &err);
    gir_attrs_set_ints(g, &n->attrs, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4, &err);
    TU_OK(gir_node_make_output(g, n, 0, "conv_out", &err), &err);
    int32_t prev = n->out[0];
    if (with_lrn) {
        TU_OK(gir_graph_add_node(g, "lrn", GIR_OP_LRN, 1, 1, &n, &err), &err);
        n->in[0] = prev;
        gir_attrs_set_int(g, &n->attrs, "size", 4, &err);
        TU_OK(gir_node_make_output(g, n, 0, "lrn_out", &err), &err);
        prev = n->out[0];
        TU_OK(gir_graph_add_node(g, "custom", GIR_OP_OPAQUE, 1, 1, &n, &err), &err);
        n->opaque_format = "tvm";
        n->opaque_op = "tvm_op";
        n->in[0] = prev;
        TU_OK(gir_node_make_output(g, n, 0, "custom_out", &err), &err);
        prev = n->out[0];
    }
    TU_OK(gir_graph_add_node(g, "relu", GIR_OP_Relu, 1, 1, &n, &err), &err);
    n->in[0] = prev;
    TU_OK(gir_node_make_output(g, n, 0, "relu_out", &err), &err);
    prev = n->out[0];
    TU_OK(gir_graph_add_node(g, "flatten", GIR_OP_Flatten, 1, 1, &n, &err), &err);
    n->in[0] = prev;
    gir_attrs_set_int(g, &n->attrs, "axis", 1, &err);
    TU_OK(gir_node_make_output(g, n, 0, "flatten_out", &err), &err);
    prev = n->out[0];
    int32_t fw = add_weight(g, "fc_weight", 2, (int64_t[]){ 10, 256 });
    int32_t fb = add_weight(g, "fc_bias", 1, (int64_t[]){ 10 });
    TU_OK(gir_graph_add_node(g, "fc", GIR_OP_Gemm, 3, 1, &n, &err), &err);
    n->in[0] = prev, n->in[1] = fw, n->in[2] = fb;
    gir_attrs_set_int(g, &n->attrs, "transB", 1, &err);
    TU_OK(gir_node_make_output(g, n, 0, "fc_out", &err), &err);
    prev = n->out[0];
    TU_OK(gir_graph_add_node(g, "softmax", GIR_OP_Softmax, 1, 1, &n, &err), &err);
    n->in[0] = prev;
    gir_attrs_set_int(g, &n->attrs, "axis", 1, &err);
    TU_OK(gir_node_make_output(g, n, 0, "softmax_out", &err), &err);
    TU_OK(gir_graph_add_output(g, n->out[0], &err), &err);
    if (!with_lrn)
        TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

static void test_write_canonical(void **state)
{
    (void)state;
    gir_graph *g = canonical_net(false);
    char *out = tu_tmp("canon.nnp");
    tu_save(g, out, "nnabla", NULL);
    size_t len;
    char *text = member(out, "network.nntxt", &len);
    /* the weight of Gemm(transB=1) is written in x out, transposed */
    assert_non_null(strstr(text, "    name: \"fc_weight\"\n    type: \"Parameter\"\n    shape {\n      dim: 256\n"
                                 "      dim: 10\n    }\n"));
    /* a Flatten of its own is a Reshape; only the Flatten an Affine implies is absorbed */
    assert_non_null(strstr(text, "    name: \"flatten\"\n    type: \"Reshape\"\n    input: \"relu_out\"\n"
                                 "    output: \"flatten_out\"\n    reshape_param {\n      shape {\n        dim: 1\n"
                                 "        dim: 256\n      }\n      inplace: true\n"));
    assert_non_null(strstr(text, "    name: \"fc\"\n    type: \"Affine\"\n    input: \"flatten_out\"\n"));
    assert_non_null(strstr(text, "    convolution_param {\n      base_axis: 1\n      pad {\n        dim: 1\n"));
    assert_non_null(strstr(text, "executor {\n  name: \"runtime\"\n  network_name: \"canon\"\n  data_variable {\n"
                                 "    variable_name: \"data\"\n    data_name: \"data\"\n  }\n"));
    /* the file's bytes are the transpose of the original */
    char *pbuf = member(out, "parameter.h5", &len);
    gir_h5 *h5;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_h5_open(pbuf, len, &h5, &err), &err);
    float *raw = malloc(256 * 10 * 4);
    TU_OK(gir_h5_read_open(h5, "fc_weight", raw, 256 * 10 * 4, GIR_DT_F32, &err), &err);
    for (int i = 0; i < 256; i += 37)
        for (int j = 0; j < 10; j += 3)
            assert_true(raw[i * 10 + j] == (float)(j * 256 + i) * 0.5f - 1.0f);
    free(raw);
    gir_h5_close(h5);
    free(pbuf);
    /* read back: Gemm(transB=1) over the original (10, 256) values */
    gir_graph *b = load(out, NULL);
    const gir_node *fc = node_named(b, "fc");
    assert_int_equal(fc->op, GIR_OP_Gemm);
    assert_int_equal(gir_node_int(fc, "transB", 0), 1);
    const gir_value *w = b->values[fc->in[1]];
    assert_int_equal(w->shape.dims[0], 10);
    assert_int_equal(w->shape.dims[1], 256);
    assert_same_opt(g, b, "canonical -> nnp", false);
    /* and written again: the same archive */
    char *out2 = tu_tmp("canon2.nnp");
    tu_save(b, out2, "nnabla", NULL);
    gir_graph *c = load(out2, NULL);
    assert_same(b, c, "canonical -> nnp -> nnp");
    gir_graph_free(c);
    remove(out2);
    free(out2);
    gir_graph_free(b);
    free(text);
    remove(out);
    free(out);
    gir_graph_free(g);
}

static void test_writer_refuses(void **state)
{
    (void)state;
    gir_graph *g = canonical_net(true);
    char *dir = tu_tmp("refuse");
    assert_int_equal(mkdir(dir, 0700), 0);
    char *out = tu_join(dir, "x.nnp");
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_save(g, out, "nnabla", NULL, &err), &err, GIR_E_UNSUPPORTED_ATTR, "cannot write as nnabla",
             "LRN with an even size (4): nnabla pads symmetrically", "tvm_op (an operator of format tvm)");
    gir_error_clear(&err);
    assert_int_equal(tu_count_entries(dir), 0);
    /* an existing output is not replaced without force */
    gir_graph *l = load_shared("realworld/nnp/model_simple.nnp");
    assert_true(tu_write(out, "old", 3));
    TU_FAILS(gir_save(l, out, "nnabla", NULL, &err), &err, GIR_E_EXISTS, "output exists");
    gir_error_clear(&err);
    assert_int_equal(tu_count_entries(dir), 1);
    size_t len;
    char *old = tu_slurp(out, &len);
    assert_int_equal(len, 3);
    free(old);
    remove(out);
    rmdir(dir);
    free(out);
    free(dir);
    gir_graph_free(l);
    gir_graph_free(g);
}

static void collect_note(void *ctx, const char *note)
{
    gir_buf *b = ctx;
    gir_buf_printf(b, "%s\n", note);
}

static int32_t add_node1(gir_graph *g, const char *name, gir_op op, int32_t a, int32_t b, const char *to)
{
    gir_error err = GIR_ERROR_INIT;
    gir_node *n;
    TU_OK(gir_graph_add_node(g, name, op, b >= 0 ? 2 : 1, 1, &n, &err), &err);
    n->in[0] = a;
    if (b >= 0)
        n->in[1] = b;
    if (to)
        TU_OK(gir_attrs_set_string(g, &n->attrs, "to", to, &err), NULL);
    char out[64];
    snprintf(out, sizeof out, "%s_out", name);
    TU_OK(gir_node_make_output(g, n, 0, out, &err), &err);
    return n->out[0];
}

/* Parameter names nnabla's parameter.h5 cannot hold as scope paths
 * (PyTorch's "/block/Constant_output_0", "." and ".." components) are
 * renamed, uniquely and always the same way, with a note; the data goes
 * with the new names and the network reads them. */
static void test_write_param_paths(void **state)
{
    (void)state;
    gir_graph *g;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_new(&g, &err), &err);
    int32_t x;
    TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = (gir_shape){ 2, { 2, 3 } };
    TU_OK(gir_graph_add_input(g, x, &err), &err);
    static const char *const names[] = { "blk/Constant_output_0", "/blk/Constant_output_0", "a/./b//", "../up" };
    int32_t y = x;
    for (size_t i = 0; i < 4; i++) {
        int32_t w = add_weight(g, names[i], 2, (int64_t[]){ 2, 3 });
        char nm[16];
        snprintf(nm, sizeof nm, "add%zu", i);
        y = add_node1(g, nm, GIR_OP_Add, y, w, NULL);
    }
    TU_OK(gir_graph_add_output(g, y, &err), &err);
    TU_OK(gir_graph_finish(g, &err), &err);
    char *out = tu_tmp("paths.nnp");
    gir_buf notes = GIR_BUF_INIT;
    gir_options *o = gir_options_new();
    gir_options_set_note_handler(o, collect_note, &notes);
    tu_save(g, out, "nnabla", o);
    assert_string_equal(notes.data, "3 parameter names with empty, '.' or '..' components (nnabla stores scope "
                                    "paths) renamed, first '/blk/Constant_output_0' as 'blk/Constant_output_0_1'\n");
    size_t len;
    char *h5 = member(out, "parameter.h5", &len);
    gir_h5 *h;
    TU_OK(gir_h5_open(h5, len, &h, &err), &err);
    static const char *const stored[] = { "blk/Constant_output_0", "blk/Constant_output_0_1", "a/_/b", "__/up" };
    for (size_t i = 0; i < 4; i++) {
        float v[6];
        TU_OK(gir_h5_read_open(h, stored[i], v, sizeof v, GIR_DT_F32, &err), &err);
        for (int k = 0; k < 6; k++)
            assert_true(v[k] == (float)k * 0.5f - 1.0f);
    }
    gir_h5_close(h);
    free(h5);
    gir_graph *b = load(out, NULL);
    for (size_t i = 0; i < 4; i++) {
        const gir_node *a = node_named(b, (const char *[]){ "add0", "add1", "add2", "add3" }[i]);
        assert_string_equal(b->values[a->in[1]]->name, stored[i]);
        assert_int_equal(b->values[a->in[1]]->kind, GIR_VALUE_WEIGHT);
    }
    /* the same names every time */
    char *out2 = tu_tmp("paths2.nnp");
    tu_save(g, out2, "nnabla", NULL);
    char *t1 = member(out, "network.nntxt", &len), *t2 = member(out2, "network.nntxt", &len);
    assert_string_equal(t1, t2);
    free(t1);
    free(t2);
    remove(out2);
    free(out2);
    gir_graph_free(b);
    gir_options_free(o);
    gir_buf_free(&notes);
    remove(out);
    free(out);
    gir_graph_free(g);
}

/* nnabla has no bool: comparisons and logic give 0/1 floats.  Canonical
 * bool graphs are written with the casts folded into the functions, a cast
 * of floats to bool as NotEqualScalar(0), bool parameters as float32, and
 * bool inputs and outputs noted; other casts are refused. */
static void test_write_bool_graphs(void **state)
{
    (void)state;
    gir_graph *g;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_new(&g, &err), &err);
    int32_t x, flag;
    TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = (gir_shape){ 2, { 2, 3 } };
    TU_OK(gir_graph_add_input(g, x, &err), &err);
    TU_OK(gir_graph_add_value(g, "flag", GIR_VALUE_INPUT, &flag, &err), &err);
    g->values[flag]->dtype = GIR_DT_BOOL;
    g->values[flag]->shape = (gir_shape){ 2, { 2, 3 } };
    TU_OK(gir_graph_add_input(g, flag, &err), &err);
    gir_tensor *mt;
    TU_OK(gir_tensor_new(GIR_DT_BOOL, &(gir_shape){ 2, { 2, 3 } }, &mt, &err), &err);
    ((uint8_t *)mt->data)[1] = ((uint8_t *)mt->data)[4] = 1;
    int32_t mask;
    TU_OK(gir_graph_add_value(g, "mask", GIR_VALUE_WEIGHT, &mask, &err), &err);
    gir_value_set_data(g->values[mask], mt);
    gir_tensor_unref(mt);
    int32_t thr = add_weight(g, "thr", 2, (int64_t[]){ 2, 3 });
    int32_t gt = add_node1(g, "gt", GIR_OP_Greater, x, thr, NULL);
    int32_t masked = add_node1(g, "masked", GIR_OP_And, gt, mask, NULL);
    int32_t both = add_node1(g, "both", GIR_OP_And, masked, flag, NULL); /* read by the cast only */
    int32_t as_f = add_node1(g, "as_float", GIR_OP_Cast, both, -1, "float32");
    int32_t nz = add_node1(g, "nonzero", GIR_OP_Cast, x, -1, "bool"); /* read by Add via a cast: NotEqualScalar */
    int32_t nzf = add_node1(g, "nonzero_f", GIR_OP_Cast, nz, -1, "float32");
    int32_t sum = add_node1(g, "sum", GIR_OP_Add, as_f, nzf, NULL);
    int32_t neg = add_node1(g, "neg", GIR_OP_Not, masked, -1, NULL); /* a bool graph output */
    TU_OK(gir_graph_add_output(g, sum, &err), &err);
    TU_OK(gir_graph_add_output(g, neg, &err), &err);
    TU_OK(gir_graph_finish(g, &err), &err);
    char *out = tu_tmp("bools.nnp");
    gir_buf notes = GIR_BUF_INIT;
    gir_options *o = gir_options_new();
    gir_options_set_note_handler(o, collect_note, &notes);
    tu_save(g, out, "nnabla", o);
    assert_string_equal(notes.data, "input 'flag' is bool: written as float32 0/1, nnabla has no bool\n"
                                    "parameter 'mask' is bool: written as float32 0/1, nnabla has no bool\n"
                                    "output 'neg_out' is bool: written as float32 0/1, nnabla has no bool\n");
    size_t len;
    char *text = member(out, "network.nntxt", &len);
    /* one function per canonical node but the folded casts */
    const char *want[] = { "type: \"Greater\"", "type: \"LogicalAnd\"", "type: \"LogicalAnd\"",
                           "type: \"NotEqualScalar\"", "type: \"Add2\"", "type: \"LogicalNot\"" };
    const char *at = text;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *hit = strstr(at, want[i]);
        if (!hit)
            fail_msg("function %s missing or out of order in:\n%s", want[i], text);
        at = hit + 1;
    }
    assert_null(strstr(text, "type: \"Cast\""));
    /* the second And writes the float variable the cast had */
    assert_non_null(strstr(text, "input: \"masked_out\"\n    input: \"flag\"\n    output: \"as_float_out\""));
    assert_null(strstr(text, "both_out"));
    assert_non_null(strstr(text, "input: \"x\"\n    output: \"nonzero_f_out\"\n    not_equal_scalar_param {"));
    assert_null(strstr(text, "Identity"));
    free(text);
    /* the parameter is float32 0/1 */
    char *h5 = member(out, "parameter.h5", &len);
    gir_h5 *h;
    TU_OK(gir_h5_open(h5, len, &h, &err), &err);
    float mv[6];
    TU_OK(gir_h5_read_open(h, "mask", mv, sizeof mv, GIR_DT_F32, &err), &err);
    for (int i = 0; i < 6; i++)
        assert_true(mv[i] == (i == 1 || i == 4 ? 1.0f : 0.0f));
    gir_h5_close(h);
    free(h5);
    /* read back: the same canonical ops, with nnabla's float edges */
    gir_graph *b = load(out, NULL);
    assert_int_equal(node_named(b, "gt")->op, GIR_OP_Greater);
    assert_int_equal(node_named(b, "both")->op, GIR_OP_And);
    assert_int_equal(node_named(b, "nonzero")->op, GIR_OP_Cast); /* NotEqualScalar(0) is read as x != 0 */
    assert_int_equal(b->values[b->outputs[1]]->dtype, GIR_DT_F32);
    /* and written again: the same network */
    char *out2 = tu_tmp("bools2.nnp");
    tu_save(b, out2, "nnabla", NULL);
    gir_graph *c = load(out2, NULL);
    assert_same(b, c, "bool graph -> nnp -> nnp");
    gir_graph_free(c);
    gir_graph_free(b);
    remove(out2);
    free(out2);
    /* a cast nnabla's float32 cannot hold */
    int32_t to_int = add_node1(g, "to_int", GIR_OP_Cast, x, -1, "int64");
    TU_OK(gir_graph_add_output(g, to_int, &err), &err);
    TU_OK(gir_graph_finish(g, &err), &err);
    remove(out);
    TU_FAILS(gir_save(g, out, "nnabla", NULL, &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "Cast from float32 to int64 (nnabla computes in float32) (1 node, first 'to_int')");
    gir_error_clear(&err);
    assert_int_equal(access(out, F_OK), -1);
    gir_options_free(o);
    gir_buf_free(&notes);
    free(out);
    gir_graph_free(g);
}

/* Ceil-mode pooling over axes of unknown size: nnabla's ignore_border=False
 * counts floor((L + p - 1) / s) + 1 cells, ONNX's ceil mode
 * ceil((L + 2p - k) / s) + 1: the same for every L when p = k - s. */
static void test_ceil_pool_unknown_size(void **state)
{
    (void)state;
    for (int k = 2; k <= 3; k++) {
        gir_graph *g;
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_graph_new(&g, &err), &err);
        int32_t x;
        TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
        g->values[x]->dtype = GIR_DT_F32;
        g->values[x]->shape = (gir_shape){ 4, { -1, 3, -1, -1 } };
        TU_OK(gir_graph_add_input(g, x, &err), &err);
        gir_node *n;
        TU_OK(gir_graph_add_node(g, "pool", GIR_OP_MaxPool, 1, 1, &n, &err), &err);
        n->in[0] = x;
        gir_attrs_set_ints(g, &n->attrs, "kernel_shape", (int64_t[]){ k, k }, 2, &err);
        gir_attrs_set_ints(g, &n->attrs, "strides", (int64_t[]){ 2, 2 }, 2, &err);
        gir_attrs_set_ints(g, &n->attrs, "pads", (int64_t[]){ 0, 0, 0, 0 }, 4, &err);
        gir_attrs_set_int(g, &n->attrs, "ceil_mode", 1, &err);
        TU_OK(gir_node_make_output(g, n, 0, "y", &err), &err);
        TU_OK(gir_graph_add_output(g, n->out[0], &err), &err);
        TU_OK(gir_graph_finish(g, &err), &err);
        char *out = tu_tmp("ceil.nnp");
        if (k == 3) {
            /* k - s = 1 is not the padding: the cells depend on L */
            TU_FAILS(gir_save(g, out, "nnabla", NULL, &err), &err, GIR_E_UNSUPPORTED_ATTR,
                     "MaxPool whose padding and rounding nnabla cannot reproduce (1 node, first 'pool')");
            gir_error_clear(&err);
        } else {
            tu_save(g, out, "nnabla", NULL);
            size_t len;
            char *text = member(out, "network.nntxt", &len);
            assert_non_null(strstr(text, "type: \"MaxPooling\""));
            assert_null(strstr(text, "ignore_border: true"));
            free(text);
            gir_graph *b = load(out, NULL);
            const gir_node *p = node_named(b, "pool");
            assert_int_equal(p->op, GIR_OP_MaxPool);
            assert_int_equal(gir_node_int(p, "ceil_mode", 0), 1);
            const int64_t *pads;
            assert_int_equal(gir_attrs_get_ints(&p->attrs, "pads", &pads), 4);
            for (int i = 0; i < 4; i++)
                assert_int_equal(pads[i], 0);
            gir_graph_free(b);
            remove(out);
        }
        free(out);
        gir_graph_free(g);
    }
}

/* ---- bad input ------------------------------------------------------------------ */

static char *file_bytes(const char *path, size_t *len)
{
    char *d = tu_slurp(path, len);
    assert_non_null(d);
    return d;
}

/* Replaces every occurrence of from with to (same length) in a file. */
static void patch_file(const char *path, const char *from, const char *to)
{
    size_t len, n = strlen(from), hits = 0;
    assert_int_equal(strlen(to), n);
    char *d = file_bytes(path, &len);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(d + i, from, n) == 0) {
            memcpy(d + i, to, n);
            hits++;
        }
    assert_true(hits >= 2); /* local header and central directory */
    assert_true(tu_write(path, d, len));
    free(d);
}

static const char small_net[] =
    "network { name: \"n\"\n" VAR("x", "Buffer", "dim:-1 dim:4") VAR("w", "Parameter", "dim:4 dim:2")
        VAR("y", "Buffer", "dim:-1 dim:2")
    "  function { name: \"fc\" type: \"Affine\" input: [\"x\", \"w\"] output: \"y\" affine_param { base_axis: 1 } }\n}\n"
    "executor { name: \"e\" network_name: \"n\" data_variable { variable_name: \"x\" data_name: \"x\" }\n"
    "  output_variable { variable_name: \"y\" data_name: \"y\" } parameter_variable { variable_name: \"w\" } }\n";

/* parameter.protobuf bytes for w with the given shape and count. */
static uint8_t *pb_param(const int64_t *dims, size_t rank, size_t count, size_t *len)
{
    Nnabla__NNablaProtoBuf pb = NNABLA__NNABLA_PROTO_BUF__INIT;
    Nnabla__Parameter p = NNABLA__PARAMETER__INIT;
    Nnabla__Shape s = NNABLA__SHAPE__INIT;
    Nnabla__Parameter *pp = &p;
    float data[64] = { 0 };
    s.n_dim = rank;
    s.dim = (int64_t *)dims;
    p.variable_name = "w";
    p.shape = &s;
    p.n_data = count;
    p.data = data;
    pb.n_parameter = 1;
    pb.parameter = &pp;
    *len = nnabla__nnabla_proto_buf__get_packed_size(&pb);
    uint8_t *b = malloc(*len);
    nnabla__nnabla_proto_buf__pack(&pb, b);
    return b;
}

static gir_status h5_zero(void *ctx, size_t i, const void **data, gir_error *err)
{
    (void)i;
    (void)err;
    *data = ctx;
    return GIR_OK;
}

static void test_bad_input(void **state)
{
    (void)state;
    int entries = tu_count_entries(tu_dir);
    char *path = tu_tmp("bad.nnp");
    size_t plen;
    /* a good one first */
    uint8_t *good = pb_param((int64_t[]){ 4, 2 }, 2, 8, &plen);
    make_nnp(path, small_net, "parameter.protobuf", good, plen);
    gir_graph *g = load(path, NULL);
    assert_int_equal(g->n_nodes, 1);
    gir_graph_free(g);

    /* corrupt: truncated in the middle */
    size_t len;
    char *bytes = file_bytes(path, &len);
    assert_true(tu_write(path, bytes, len / 2));
    load_fails(path, NULL, GIR_E_ARCHIVE, "bad.nnp", NULL);
    free(bytes);
    /* corrupt: a flipped byte inside the deflated network text */
    make_nnp(path, small_net, NULL, NULL, 0);
    bytes = file_bytes(path, &len);
    bytes[len / 2] ^= 0x55;
    assert_true(tu_write(path, bytes, len));
    load_fails(path, NULL, GIR_E_ARCHIVE, "bad.nnp", NULL);
    free(bytes);

    /* zip slip */
    make_nnp(path, small_net, "xx/parameter.protobuf", good, plen);
    patch_file(path, "xx/parameter.protobuf", "../parameter.protobuf");
    load_fails(path, NULL, GIR_E_ARCHIVE, "member '../parameter.protobuf' has a '..' component", NULL);
    make_nnp(path, small_net, "xetc/parameter.protobuf", good, plen);
    patch_file(path, "xetc/parameter.protobuf", "/etc/parameter.protobuf");
    load_fails(path, NULL, GIR_E_ARCHIVE, "absolute path", NULL);

    /* zip bomb: a member expanding more than 1000 times, and a size cap */
    size_t big = 8u << 20;
    char *zeros = calloc(1, big);
    gir_error err = GIR_ERROR_INIT;
    gir_zipw *z;
    TU_OK(gir_zipw_open(path, &z, &err), &err);
    TU_OK(gir_zipw_add_buffer(z, "network.nntxt", small_net, strlen(small_net), false, &err), &err);
    TU_OK(gir_zipw_add_buffer(z, "parameter.h5", zeros, big, true, &err), &err);
    TU_OK(gir_zipw_close(z, &err), &err);
    free(zeros);
    load_fails(path, NULL, GIR_E_ARCHIVE, "parameter.h5", NULL);
    make_nnp(path, small_net, "parameter.protobuf", good, plen);
    gir_options *o = tu_options("max-bytes", "100", NULL);
    load_fails(path, o, GIR_E_ARCHIVE, "network.nntxt", NULL);
    gir_options_free(o);

    /* nntxt syntax errors, with line:column (unknown fields are kept:
     * test_nnabla_schema.c) */
    make_nnp(path, "network {\n  name: \"n\"\n  variable { name \"x\" }\n}\n", NULL, NULL, 0);
    load_fails(path, NULL, GIR_E_SYNTAX, "bad.nnp:network.nntxt: line 3:19: expected \":\" after field \"name\"", NULL);
    make_nnp(path, "network {\n  name: \"n\"\n  functoin { a: 1\n", NULL, NULL, 0);
    load_fails(path, NULL, GIR_E_SYNTAX, "line 4:1: unterminated value of field \"functoin\"", NULL);

    /* parameters that disagree with the variables */
    uint8_t *wrong = pb_param((int64_t[]){ 2, 3 }, 2, 6, &plen);
    make_nnp(path, small_net, "parameter.protobuf", wrong, plen);
    load_fails(path, NULL, GIR_E_SHAPE, "parameter 'w' holds 6 values of shape [2,3] but the variable is declared [4,2]",
               NULL);
    free(wrong);
    wrong = pb_param((int64_t[]){ 4, 2 }, 2, 7, &plen);
    make_nnp(path, small_net, "parameter.protobuf", wrong, plen);
    load_fails(path, NULL, GIR_E_PARAMS, "parameter 'w' has 7 values but its shape [4,2] holds 8", NULL);
    free(wrong);
    /* an h5 dataset of the wrong shape */
    char *h5p = tu_tmp("w.h5");
    float zero6[6] = { 0 };
    gir_h5_param hp = { "w", GIR_DT_F32, { 2, { 3, 2 } }, true, 0, true };
    TU_OK(gir_h5_write(h5p, &hp, 1, h5_zero, NULL, zero6, &err), &err);
    char *h5 = file_bytes(h5p, &len);
    make_nnp(path, small_net, "parameter.h5", h5, len);
    load_fails(path, NULL, GIR_E_SHAPE, "parameter 'w' holds 6 values of shape [3,2]", NULL);
    free(h5);
    remove(h5p);
    free(h5p);
    /* a parameter missing from the file */
    make_nnp(path, small_net, "parameter.protobuf", "", 0);
    load_fails(path, NULL, GIR_E_PARAMS, "parameter 'w' of network 'n' is not in the parameter file", NULL);
    /* a malformed parameter.protobuf */
    make_nnp(path, small_net, "parameter.protobuf", "\xc2\x0c\x7f", 3);
    load_fails(path, NULL, GIR_E_PARAMS, "parameter 0 is truncated", NULL);
    /* no network at all */
    TU_OK(gir_zipw_open(path, &z, &err), &err);
    TU_OK(gir_zipw_add_buffer(z, "readme.txt", "hi", 2, false, &err), &err);
    TU_OK(gir_zipw_close(z, &err), &err);
    load_fails(path, NULL, GIR_E_SCHEMA, "the archive has no network", NULL);
    /* a function reading an undeclared variable */
    make_nnp(path, "network { name: \"n\" function { name: \"f\" type: \"ReLU\" input: \"a\" output: \"b\" } }", NULL,
             NULL, 0);
    load_fails(path, NULL, GIR_E_REFERENCE, "function 'f' reads 'a', which network 'n' does not declare", NULL);
    free(good);
    remove(path);
    free(path);
    assert_int_equal(tu_count_entries(tu_dir), entries);
}

/* ---- other formats -------------------------------------------------------------- */

/* Reads a model of another format with its parameters and input shape,
 * completing shapes (the NNVM/MXNet reader leaves inference to callers). */
static gir_graph *load_other(const char *path, const char *format, const char *params, const char *shape)
{
    gir_error err = GIR_ERROR_INIT;
    gir_options *o = tu_options("params", params, "input-shape", shape, NULL);
    gir_graph *g;
    TU_OK(gir_load(path, format, o, &g, &err), &err);
    TU_OK(gir_infer_shapes(g, &err), &err);
    gir_options_free(o);
    return g;
}

static void save_other(const gir_graph *g, const char *path, const char *format, const char *params)
{
    gir_options *o = tu_options("params", params, "force", "1", NULL);
    tu_save(g, path, format, o);
    gir_options_free(o);
}

/* MXNet and NNVM models -> .nnp -> their own format: the same graph. */
static void test_mxnet_nnvm_via_nnp(void **state)
{
    (void)state;
    static const struct {
        const char *graph, *params, *format, *shape;
    } cases[] = {
        { "realworld/nnvm/lenet_nnvm_graph.json", "realworld/nnvm/lenet_nnvm_param.params", "nnvm", "data:1,1,28,28" },
        { "realworld/mxnet/lenet-symbol.json", "realworld/mxnet/lenet-0001.params", "mxnet", "data:1,1,28,28" },
    };
    char *nnp = tu_tmp("other.nnp"), *back = tu_tmp("back.json"), *backp = tu_tmp("back.params");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *gp = tu_shared(cases[i].graph), *pp = tu_shared(cases[i].params);
        gir_graph *a = load_other(gp, cases[i].format, pp, cases[i].shape);
        gir_options *f = tu_options("force", "1", NULL);
        tu_save(a, nnp, "nnabla", f);
        gir_options_free(f);
        gir_graph *n = load(nnp, NULL);
        save_other(n, back, cases[i].format, backp);
        gir_graph *b = load_other(back, cases[i].format, backp, cases[i].shape);
        assert_same_opt(a, b, cases[i].format, false);
        gir_diff_options o = { true, false, true, 0 };
        size_t count;
        gir_buf rep = GIR_BUF_INIT;
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_graph_diff(a, b, &o, &rep, &count, &err), &err);
        assert_int_equal(count, 0); /* names too */
        gir_buf_free(&rep);
        gir_graph_free(a);
        gir_graph_free(n);
        gir_graph_free(b);
        free(gp);
        free(pp);
    }
    remove(nnp);
    remove(back);
    remove(backp);
    free(nnp);
    free(back);
    free(backp);
}

/* .nnp -> NNVM / MXNet -> .nnp: the same graph (those formats name a
 * node's output after the node, so value names differ). */
static void test_nnp_via_mxnet_nnvm(void **state)
{
    (void)state;
    static const struct {
        const char *nnp, *shape;
    } cases[] = {
        { "realworld/nnp/lenet_010000.nnp", "x:1,1,28,28" },
        { "realworld/nnp/model_simple.nnp", "x0:1,10" },
        { "realworld/nnp/nnc_result.nnp", "Input:1,1,28,28" },
    };
    static const char *const formats[] = { "nnvm", "mxnet" };
    char *mid = tu_tmp("mid.json"), *midp = tu_tmp("mid.params"), *back = tu_tmp("back.nnp");
    gir_options *b1 = tu_options("batch-size", "1", NULL);
    gir_options *f = tu_options("force", "1", NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t k = 0; k < 2; k++) {
            char *p = tu_shared(cases[i].nnp);
            gir_graph *a = load(p, b1);
            save_other(a, mid, formats[k], midp);
            gir_graph *m = load_other(mid, formats[k], midp, cases[i].shape);
            tu_save(m, back, "nnabla", f);
            gir_graph *b = load(back, NULL);
            assert_same_opt(a, b, cases[i].nnp, false);
            gir_graph_free(a);
            gir_graph_free(m);
            gir_graph_free(b);
            free(p);
        }
    gir_options_free(b1);
    gir_options_free(f);
    remove(mid);
    remove(midp);
    remove(back);
    free(mid);
    free(midp);
    free(back);
}

/* The Affine weight is seen transposed whichever way its bytes arrive:
 * stored or deflated, protobuf or HDF5, or written into the text. */
static void test_affine_weight_sources(void **state)
{
    (void)state;
    float w[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }; /* (4 in, 2 out) */
    static const float want[8] = { 1, 3, 5, 7, 2, 4, 6, 8 };
    char *path = tu_tmp("aff.nnp"), *h5p = tu_tmp("aff.h5");
    gir_error err = GIR_ERROR_INIT;
    /* parameter.protobuf */
    Nnabla__NNablaProtoBuf pb = NNABLA__NNABLA_PROTO_BUF__INIT;
    Nnabla__Parameter p = NNABLA__PARAMETER__INIT;
    Nnabla__Shape sh = NNABLA__SHAPE__INIT;
    Nnabla__Parameter *pp = &p;
    int64_t dims[2] = { 4, 2 };
    sh.n_dim = 2;
    sh.dim = dims;
    p.variable_name = "w";
    p.shape = &sh;
    p.n_data = 8;
    p.data = w;
    p.need_grad = 1;
    pb.n_parameter = 1;
    pb.parameter = &pp;
    size_t plen = nnabla__nnabla_proto_buf__get_packed_size(&pb);
    uint8_t *pbytes = malloc(plen);
    nnabla__nnabla_proto_buf__pack(&pb, pbytes);
    /* parameter.h5 */
    gir_h5_param hp = { "w", GIR_DT_F32, { 2, { 4, 2 } }, true, 0, true };
    TU_OK(gir_h5_write(h5p, &hp, 1, h5_zero, NULL, w, &err), &err);
    size_t hlen;
    char *hbytes = file_bytes(h5p, &hlen);
    for (int variant = 0; variant < 5; variant++) {
        gir_zipw *z;
        TU_OK(gir_zipw_open(path, &z, &err), &err);
        if (variant == 4) {
            /* the parameter inside the text */
            gir_buf t = GIR_BUF_INIT;
            gir_buf_puts(&t, small_net);
            gir_buf_puts(&t, "parameter { variable_name: \"w\" shape { dim: 4 dim: 2 } data: [1, 2, 3, 4, 5, 6, 7, 8] "
                             "need_grad: true }\n");
            TU_OK(gir_zipw_add_buffer(z, "network.nntxt", t.data, t.len, false, &err), &err);
            gir_buf_free(&t);
        } else {
            TU_OK(gir_zipw_add_buffer(z, "network.nntxt", small_net, strlen(small_net), false, &err), &err);
            bool h5 = variant >= 2, deflate = variant % 2;
            TU_OK(gir_zipw_add_buffer(z, h5 ? "parameter.h5" : "parameter.protobuf", h5 ? (void *)hbytes : pbytes,
                                      h5 ? hlen : plen, deflate, &err),
                  &err);
        }
        TU_OK(gir_zipw_close(z, &err), &err);
        gir_graph *g = load(path, NULL);
        const gir_node *fc = node_named(g, "fc");
        assert_int_equal(fc->op, GIR_OP_Gemm);
        assert_int_equal(gir_node_int(fc, "transB", 0), 1);
        const gir_value *v = g->values[fc->in[1]];
        assert_int_equal(v->shape.dims[0], 2);
        assert_int_equal(v->shape.dims[1], 4);
        const float *d;
        TU_OK(gir_tensor_load(v->data, (const void **)&d, &err), &err);
        assert_memory_equal(d, want, sizeof want);
        /* and written back: the original bytes */
        char *out = tu_tmp("aff_out.nnp");
        gir_options *o = tu_options("param-format", "protobuf", "force", "1", NULL);
        tu_save(g, out, "nnabla", o);
        gir_options_free(o);
        size_t len;
        char *ob = member(out, "parameter.protobuf", &len);
        Nnabla__NNablaProtoBuf *m = nnabla__nnabla_proto_buf__unpack(NULL, len, (const uint8_t *)ob);
        assert_non_null(m);
        assert_int_equal(m->parameter[0]->shape->dim[0], 4);
        assert_memory_equal(m->parameter[0]->data, w, sizeof w);
        assert_true(m->parameter[0]->need_grad);
        nnabla__nnabla_proto_buf__free_unpacked(m, NULL);
        free(ob);
        remove(out);
        free(out);
        gir_graph_free(g);
    }
    free(pbytes);
    free(hbytes);
    remove(h5p);
    remove(path);
    free(h5p);
    free(path);
}

/* Failed writes leave nothing behind. */
static void test_failed_writes_leave_nothing(void **state)
{
    (void)state;
    char *dir = tu_tmp("wfail");
    assert_int_equal(mkdir(dir, 0700), 0);
    char *out = tu_join(dir, "x.nnp");
    /* an int64 weight cannot go into parameter.protobuf */
    gir_graph *g;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_new(&g, &err), &err);
    int32_t x, w;
    TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = (gir_shape){ 1, { 3 } };
    TU_OK(gir_graph_add_input(g, x, &err), &err);
    gir_tensor *t;
    gir_shape s3 = { 1, { 3 } };
    TU_OK(gir_tensor_new(GIR_DT_I64, &s3, &t, &err), &err);
    TU_OK(gir_graph_add_value(g, "w", GIR_VALUE_WEIGHT, &w, &err), &err);
    gir_value_set_data(g->values[w], t);
    gir_tensor_unref(t);
    gir_node *n;
    TU_OK(gir_graph_add_node(g, "gather", GIR_OP_Gather, 2, 1, &n, &err), &err);
    n->in[0] = x;
    n->in[1] = w;
    TU_OK(gir_node_make_output(g, n, 0, "y", &err), &err);
    TU_OK(gir_graph_add_output(g, n->out[0], &err), &err);
    gir_options *o = tu_options("param-format", "protobuf", NULL);
    TU_FAILS(gir_save(g, out, "nnabla", o, &err), &err, GIR_E_UNSUPPORTED, "parameter 'w' is int64");
    gir_error_clear(&err);
    assert_int_equal(tu_count_entries(dir), 0);
    /* in h5 it goes, with its type */
    tu_save(g, out, "nnabla", NULL);
    gir_graph *b = load(out, NULL);
    assert_int_equal(b->values[gir_graph_value_index(b, "w")]->dtype, GIR_DT_I64);
    gir_graph_free(b);
    remove(out);
    /* a directory that does not exist */
    char *nodir = tu_join(dir, "missing/x.nnp");
    TU_FAILS(gir_save(g, nodir, "nnabla", NULL, &err), &err, GIR_E_IO, "missing");
    gir_error_clear(&err);
    assert_int_equal(tu_count_entries(dir), 0);
    rmdir(dir);
    free(nodir);
    free(out);
    free(dir);
    gir_options_free(o);
    gir_graph_free(g);
}

/* A weight whose loader fails: the writer stops in the middle of the
 * parameters (after the first weight's bytes are written). */
static gir_status failing_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    (void)ctx;
    (void)dst;
    (void)nbytes;
    return gir_fail(err, GIR_E_IO, "the weight source broke");
}

static void no_release(void *ctx)
{
    (void)ctx;
}

static const gir_loader failing_loader = { failing_load, no_release };

/* Two Gemm weights of 64 KiB: the first written, the second failing. */
static gir_graph *graph_failing_second_weight(void)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    TU_OK(gir_graph_new(&g, &err), &err);
    int32_t x;
    TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = (gir_shape){ 2, { 1, 128 } };
    TU_OK(gir_graph_add_input(g, x, &err), &err);
    int32_t prev = x;
    for (int i = 0; i < 2; i++) {
        gir_shape s = { 2, { 128, 128 } };
        gir_tensor *t;
        if (i == 0)
            TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
        else
            TU_OK(gir_tensor_lazy(GIR_DT_F32, &s, &failing_loader, NULL, &t, &err), &err);
        char name[32];
        snprintf(name, sizeof name, "fc%d/affine/W", i);
        int32_t w;
        TU_OK(gir_graph_add_value(g, name, GIR_VALUE_WEIGHT, &w, &err), &err);
        gir_value_set_data(g->values[w], t);
        gir_tensor_unref(t);
        gir_node *n;
        snprintf(name, sizeof name, "fc%d", i);
        TU_OK(gir_graph_add_node(g, name, GIR_OP_Gemm, 2, 1, &n, &err), &err);
        n->in[0] = prev;
        n->in[1] = w;
        snprintf(name, sizeof name, "fc%d_out", i);
        TU_OK(gir_node_make_output(g, n, 0, name, &err), &err);
        prev = n->out[0];
    }
    TU_OK(gir_graph_add_output(g, prev, &err), &err);
    return g;
}

static void test_failed_write_mid_parameters(void **state)
{
    (void)state;
    char *dir = tu_tmp("wmid");
    assert_int_equal(mkdir(dir, 0700), 0);
    char *out = tu_join(dir, "x.nnp");
    gir_graph *g = graph_failing_second_weight();
    static const char *const formats[] = { "h5", "protobuf" };
    for (int f = 0; f < 2; f++) {
        gir_error err = GIR_ERROR_INIT;
        gir_options *o = tu_options("param-format", formats[f], NULL);
        /* a new output: nothing at all is left */
        TU_FAILS(gir_save(g, out, "nnabla", o, &err), &err, GIR_E_IO, "the weight source broke");
        gir_error_clear(&err);
        assert_int_equal(tu_count_entries(dir), 0);
        /* an existing output (overwrite allowed) keeps its bytes */
        assert_true(tu_write(out, "previous", 8));
        gir_options_set(o, "force", "1", &err);
        TU_FAILS(gir_save(g, out, "nnabla", o, &err), &err, GIR_E_IO, "the weight source broke");
        gir_error_clear(&err);
        assert_int_equal(tu_count_entries(dir), 1);
        size_t len;
        char *d = tu_slurp(out, &len);
        assert_int_equal(len, 8);
        assert_memory_equal(d, "previous", 8);
        free(d);
        remove(out);
        gir_options_free(o);
    }
    gir_graph_free(g);
    rmdir(dir);
    free(out);
    free(dir);
}

/* parameter.h5 is written by HDF5 in place inside the archive: the member
 * is byte for byte the file written on its own, starts at 512, and the
 * archive is byte-identical run to run. */
static void test_h5_member_in_place(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/nnp/lenet_010000.nnp");
    char *a = tu_tmp("inplace_a.nnp"), *b = tu_tmp("inplace_b.nnp");
    char *txt = tu_tmp("inplace.nntxt"), *h5 = tu_tmp("inplace.h5");
    tu_save(g, a, "nnabla", NULL);
    tu_save(g, b, "nnabla", NULL);
    assert_true(tu_files_equal(a, b));
    tu_save(g, txt, "nnabla", NULL); /* the companion inplace.h5, written on its own */
    size_t ml, fl;
    char *m = member(a, "parameter.h5", &ml);
    char *f = tu_slurp(h5, &fl);
    assert_int_equal(ml, fl);
    assert_memory_equal(m, f, fl);
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(a, NULL, &z, &err), &err);
    assert_string_equal(gir_zip_name(z, 2), "parameter.h5");
    uint64_t off;
    TU_OK(gir_zip_stored_offset(z, 2, &off, &err), &err);
    assert_int_equal(off, 512);
    gir_zip_close(z);
    /* the protobuf member streamed into the archive equals the file too */
    gir_options *o = tu_options("param-format", "protobuf", "force", "1", NULL);
    char *pb = tu_tmp("inplace.protobuf");
    tu_save(g, a, "nnabla", o);
    tu_save(g, txt, "nnabla", o);
    char *pm = member(a, "parameter.protobuf", &ml);
    char *pf = tu_slurp(pb, &fl);
    assert_int_equal(ml, fl);
    assert_memory_equal(pm, pf, fl);
    gir_options_free(o);
    free(pm);
    free(pf);
    free(m);
    free(f);
    remove(a);
    remove(b);
    remove(txt);
    remove(h5);
    remove(pb);
    free(pb);
    free(a);
    free(b);
    free(txt);
    free(h5);
    gir_graph_free(g);
}

static void test_deterministic(void **state)
{
    (void)state;
    gir_graph *g = load_shared("realworld/nnp/nnc_result.nnp");
    char *a = tu_tmp("det_a.nnp"), *b = tu_tmp("det_b.nnp");
    tu_save(g, a, "nnabla", NULL);
    tu_save(g, b, "nnabla", NULL);
    assert_true(tu_files_equal(a, b));
    gir_options *o = tu_options("param-format", "protobuf", NULL);
    remove(a);
    remove(b);
    tu_save(g, a, "nnabla", o);
    tu_save(g, b, "nnabla", o);
    assert_true(tu_files_equal(a, b));
    gir_options_free(o);
    remove(a);
    remove(b);
    free(a);
    free(b);
    gir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_archives_round_trip),
        cmocka_unit_test(test_lenet),
        cmocka_unit_test(test_parameter_formats),
        cmocka_unit_test(test_h5dump_and_unzip),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_standalone_nntxt),
        cmocka_unit_test(test_map_batchnorm_proto3),
        cmocka_unit_test(test_map_affine_split_pool),
        cmocka_unit_test(test_map_scalars_and_opaque),
        cmocka_unit_test(test_loops_refused),
        cmocka_unit_test(test_write_canonical),
        cmocka_unit_test(test_writer_refuses),
        cmocka_unit_test(test_write_bool_graphs),
        cmocka_unit_test(test_write_param_paths),
        cmocka_unit_test(test_ceil_pool_unknown_size),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_mxnet_nnvm_via_nnp),
        cmocka_unit_test(test_nnp_via_mxnet_nnvm),
        cmocka_unit_test(test_affine_weight_sources),
        cmocka_unit_test(test_failed_writes_leave_nothing),
        cmocka_unit_test(test_failed_write_mid_parameters),
        cmocka_unit_test(test_h5_member_in_place),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
