/* The recurrent operators LSTM, GRU and RNN: ONNX's own test cases run
 * unrolled (lib/passes/unroll_rnn.c) against their expected outputs; the
 * kernel's layouts, directions and sequence lengths against each other;
 * PyTorch 0.3's opset-6 LSTM export against ONNX Runtime's outputs, written
 * back at opset 6, and unrolled; attribute checks. */
#include "rtutil.h"

#include "formats/format.h"
#include "formats/onnx/onnx.h"
#include "io/npy.h"
#include "ops/rnn.h"
#include "passes/passes.h"
#include "passes/unroll_rnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

static void expect_close(gir_tensor *got, gir_tensor *want, double atol, double rtol)
{
    assert_true(gir_shape_equal(gir_tensor_shape(got), gir_tensor_shape(want)));
    const float *a, *b;
    TU_OK(gir_tensor_load(got, (const void **)&a, NULL), NULL);
    TU_OK(gir_tensor_load(want, (const void **)&b, NULL), NULL);
    size_t n = (size_t)gir_shape_numel(gir_tensor_shape(got));
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)a[i] - (double)b[i]) <= atol + rtol * fabs((double)b[i])))
            fail_msg("element %zu is %.9g, expected %.9g", i, (double)a[i], (double)b[i]);
}

static bool has_recurrent(const gir_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == GIR_OP_LSTM || g->nodes[i]->op == GIR_OP_GRU || g->nodes[i]->op == GIR_OP_RNN)
            return true;
    return false;
}

/* ---- ONNX's test cases, unrolled -------------------------------------------- */

/* The KIND_N.pb tensors of a test's first data set. */
static size_t read_set(const char *dir, const char *kind, gir_tensor **ts, size_t max)
{
    size_t n = 0;
    for (; n < max; n++) {
        char f[512];
        snprintf(f, sizeof f, "%s/test_data_set_0/%s_%zu.pb", dir, kind, n);
        size_t len;
        char *bytes = tu_slurp(f, &len);
        if (!bytes)
            break;
        free(bytes);
        gir_error err = GIR_ERROR_INIT;
        TU_OK(onnx_read_tensor_file(f, &ts[n], NULL, &err), &err);
    }
    return n;
}

static void test_onnx_cases_unrolled(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "test_gru_batchwise", "test_gru_defaults", "test_gru_seq_length", "test_gru_with_initial_bias",
        "test_lstm_batchwise", "test_lstm_defaults", "test_lstm_with_initial_bias", "test_lstm_with_peepholes",
        "test_rnn_seq_length", "test_simple_rnn_batchwise", "test_simple_rnn_defaults",
        "test_simple_rnn_with_initial_bias",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *dir = tu_join(NODE_DIR, cases[c]);
        char *model = tu_join(dir, "model.onnx");
        gir_error err = GIR_ERROR_INIT;
        gir_graph *g;
        TU_OK(gir_load(model, "onnx", NULL, &g, &err), &err);
        assert_true(has_recurrent(g));
        size_t count = 0;
        if (strcmp(cases[c], "test_lstm_with_peepholes") == 0) {
            /* its sequence_lens is a graph input: a length only known at
             * run time has no unrolled form */
            TU_FAILS(gir_rnn_unroll_all(g, &count, &err), &err, GIR_E_UNSUPPORTED,
                     "LSTM cannot be unrolled: sequence_lens is not a constant");
            gir_error_clear(&err);
            gir_graph_free(g);
            free(model);
            free(dir);
            continue;
        }
        TU_OK(gir_rnn_unroll_all(g, &count, &err), &err);
        assert_int_equal(count, 1);
        assert_false(has_recurrent(g));
        gir_tensor *in[8] = { 0 }, *want[3] = { 0 }, *got[3] = { 0 };
        size_t ni = read_set(dir, "input", in, 8), no = read_set(dir, "output", want, 3);
        rt_run(g, 1, in, ni, got, no);
        for (size_t k = 0; k < no; k++) {
            print_message("%s output %zu (unrolled)\n", cases[c], k);
            expect_close(got[k], want[k], 1e-6, 1e-5);
        }
        for (size_t k = 0; k < 8; k++)
            gir_tensor_unref(in[k]);
        for (size_t k = 0; k < 3; k++) {
            gir_tensor_unref(want[k]);
            gir_tensor_unref(got[k]);
        }
        gir_graph_free(g);
        free(model);
        free(dir);
    }
}

/* ---- the kernel against itself: layouts, directions, lengths ---------------- */

/* An LSTM/GRU/RNN graph with inputs X, sequence_lens?, initial_h? (and
 * initial_c for LSTM) and constant weights from a seed. */
static gir_graph *rnn_graph(gir_op op, const char *dir, int layout, int64_t T, int64_t B, int64_t I, int64_t H,
                            bool seq, bool init, bool peep)
{
    gir_graph *g = rt_graph();
    int64_t D = strcmp(dir, "bidirectional") == 0 ? 2 : 1, G = op == GIR_OP_LSTM ? 4 : op == GIR_OP_GRU ? 3 : 1;
    int64_t xd[3] = { T, B, I }, sd[3] = { D, B, H };
    if (layout) {
        xd[0] = B, xd[1] = T;
        sd[0] = B, sd[1] = D;
    }
    rt_input(g, "X", GIR_DT_F32, 3, xd);
    float *w = malloc((size_t)(D * G * H * (I + H + 2) + D * 3 * H) * sizeof *w);
    rt_fill(w, (size_t)(D * G * H * (I + H + 2) + D * 3 * H), 7);
    rt_const(g, "W", GIR_DT_F32, 3, DIMS(D, G * H, I), w);
    rt_const(g, "R", GIR_DT_F32, 3, DIMS(D, G * H, H), w + D * G * H * I);
    rt_const(g, "B", GIR_DT_F32, 2, DIMS(D, 2 * G * H), w + D * G * H * (I + H));
    if (peep)
        rt_const(g, "P", GIR_DT_F32, 2, DIMS(D, 3 * H), w + D * G * H * (I + H + 2));
    free(w);
    if (seq)
        rt_input(g, "L", GIR_DT_I32, 1, DIMS(B));
    if (init) {
        rt_input(g, "h0", GIR_DT_F32, 3, sd);
        if (op == GIR_OP_LSTM)
            rt_input(g, "c0", GIR_DT_F32, 3, sd);
    }
    char ins[96];
    snprintf(ins, sizeof ins, "X,W,R,B,%s,%s%s%s", seq ? "L" : "-", init ? "h0" : "-",
             op == GIR_OP_LSTM ? (init ? ",c0" : ",-") : "", op == GIR_OP_LSTM && peep ? ",P" : "");
    gir_node *n = rt_node(g, op, "rnn", ins, op == GIR_OP_LSTM ? "Y,Y_h,Y_c" : "Y,Y_h");
    rt_attr_int(g, n, "hidden_size", H);
    rt_attr_string(g, n, "direction", dir);
    rt_attr_int(g, n, "layout", layout);
    rt_output(g, "Y");
    rt_output(g, "Y_h");
    if (op == GIR_OP_LSTM)
        rt_output(g, "Y_c");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

/* t [d0, d1, d2(, d3)] with axes 0 and 1 swapped */
static gir_tensor *swap01(gir_tensor *t)
{
    const gir_shape *s = gir_tensor_shape(t);
    int64_t d[4] = { s->dims[1], s->dims[0], s->dims[2], s->rank > 3 ? s->dims[3] : 1 };
    size_t inner = (size_t)(d[2] * d[3]);
    const float *p;
    TU_OK(gir_tensor_load(t, (const void **)&p, NULL), NULL);
    float *q = malloc((size_t)gir_shape_numel(s) * sizeof *q);
    for (int64_t a = 0; a < s->dims[0]; a++)
        for (int64_t b = 0; b < s->dims[1]; b++)
            memcpy(q + ((size_t)b * (size_t)s->dims[0] + (size_t)a) * inner,
                   p + ((size_t)a * (size_t)s->dims[1] + (size_t)b) * inner, inner * sizeof *q);
    gir_tensor *r = rt_tensor_new(GIR_DT_F32, s->rank, d, q);
    free(q);
    return r;
}

static void test_layouts_agree(void **state)
{
    (void)state;
    const gir_op ops[] = { GIR_OP_LSTM, GIR_OP_GRU, GIR_OP_RNN };
    for (size_t o = 0; o < 3; o++) {
        gir_graph *g0 = rnn_graph(ops[o], "bidirectional", 0, 4, 2, 3, 5, false, true, ops[o] == GIR_OP_LSTM);
        gir_graph *g1 = rnn_graph(ops[o], "bidirectional", 1, 4, 2, 3, 5, false, true, ops[o] == GIR_OP_LSTM);
        float x[24], h[20], c[20];
        rt_fill(x, 24, 1);
        rt_fill(h, 20, 2);
        rt_fill(c, 20, 3);
        gir_tensor *in0[3] = { rt_tensor_new(GIR_DT_F32, 3, DIMS(4, 2, 3), x),
                               rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 2, 5), h),
                               rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 2, 5), c) };
        gir_tensor *in1[3] = { swap01(in0[0]), swap01(in0[1]), swap01(in0[2]) };
        size_t ni = ops[o] == GIR_OP_LSTM ? 3 : 2, no = ni;
        gir_tensor *out0[3] = { 0 }, *out1[3] = { 0 };
        rt_run(g0, 1, in0, ni, out0, no);
        rt_run(g1, 1, in1, ni, out1, no);
        /* Y: [T, D, B, H] vs [B, T, D, H]; states: [D, B, H] vs [B, D, H] */
        const float *y0, *y1;
        TU_OK(gir_tensor_load(out0[0], (const void **)&y0, NULL), NULL);
        TU_OK(gir_tensor_load(out1[0], (const void **)&y1, NULL), NULL);
        for (int t = 0; t < 4; t++)
            for (int dd = 0; dd < 2; dd++)
                for (int b = 0; b < 2; b++)
                    for (int k = 0; k < 5; k++)
                        assert_true(y0[((t * 2 + dd) * 2 + b) * 5 + k] == y1[((b * 4 + t) * 2 + dd) * 5 + k]);
        for (size_t k = 1; k < no; k++) {
            gir_tensor *s = swap01(out1[k]);
            expect_close(out0[k], s, 0, 0);
            gir_tensor_unref(s);
        }
        /* the unrolled graph computes the same in both layouts */
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_rnn_unroll_all(g1, NULL, &err), &err);
        gir_tensor *out2[3] = { 0 };
        rt_run(g1, 1, in1, ni, out2, no);
        for (size_t k = 0; k < no; k++) {
            expect_close(out2[k], out1[k], 1e-6, 1e-5);
            gir_tensor_unref(out0[k]);
            gir_tensor_unref(out1[k]);
            gir_tensor_unref(out2[k]);
        }
        for (size_t k = 0; k < 3; k++) {
            gir_tensor_unref(in0[k]);
            gir_tensor_unref(in1[k]);
        }
        gir_graph_free(g0);
        gir_graph_free(g1);
    }
}

/* A batch row of length L computes what the same row alone over L steps
 * does; Y is zero past L; the reverse direction starts at step L - 1. */
static void test_sequence_lens(void **state)
{
    (void)state;
    gir_graph *g = rnn_graph(GIR_OP_GRU, "bidirectional", 0, 4, 2, 3, 2, true, false, false);
    gir_graph *g1 = rnn_graph(GIR_OP_GRU, "bidirectional", 0, 2, 1, 3, 2, false, false, false);
    float x[24];
    rt_fill(x, 24, 5);
    int32_t lens[2] = { 4, 2 };
    gir_tensor *in[2] = { rt_tensor_new(GIR_DT_F32, 3, DIMS(4, 2, 3), x), rt_tensor_new(GIR_DT_I32, 1, DIMS(2), lens) };
    float x1[6]; /* row 1, steps 0 and 1 */
    for (int t = 0; t < 2; t++)
        memcpy(x1 + t * 3, x + (t * 2 + 1) * 3, 3 * sizeof(float));
    gir_tensor *in1[1] = { rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 1, 3), x1) };
    gir_tensor *out[2], *out1[2];
    rt_run(g, 1, in, 2, out, 2);
    rt_run(g1, 1, in1, 1, out1, 2);
    const float *y, *yr, *h, *hr;
    TU_OK(gir_tensor_load(out[0], (const void **)&y, NULL), NULL);
    TU_OK(gir_tensor_load(out1[0], (const void **)&yr, NULL), NULL);
    TU_OK(gir_tensor_load(out[1], (const void **)&h, NULL), NULL);
    TU_OK(gir_tensor_load(out1[1], (const void **)&hr, NULL), NULL);
    for (int t = 0; t < 4; t++)
        for (int dd = 0; dd < 2; dd++)
            for (int k = 0; k < 2; k++) {
                float v = y[((t * 2 + dd) * 2 + 1) * 2 + k];
                if (t < 2)
                    assert_true(v == yr[(t * 2 + dd) * 2 + k]);
                else
                    assert_true(v == 0.0f);
            }
    for (int dd = 0; dd < 2; dd++)
        for (int k = 0; k < 2; k++)
            assert_true(h[(dd * 2 + 1) * 2 + k] == hr[dd * 2 + k]);
    /* a length past the sequence is refused at run time */
    lens[1] = 5;
    gir_tensor_unref(in[1]);
    in[1] = rt_tensor_new(GIR_DT_I32, 1, DIMS(2), lens);
    rt_run_fails(g, in, 2, GIR_E_SHAPE, "GRU sequence_lens[1] is 5, expected 0 to 4", NULL);
    /* sequence lengths that are not constant are not unrolled */
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_rnn_unroll_all(g, NULL, &err), &err, GIR_E_UNSUPPORTED, "sequence_lens is not a constant");
    gir_error_clear(&err);
    for (int k = 0; k < 2; k++) {
        gir_tensor_unref(in[k]);
        gir_tensor_unref(out[k]);
        gir_tensor_unref(out1[k]);
    }
    gir_tensor_unref(in1[0]);
    gir_graph_free(g);
    gir_graph_free(g1);
}

/* Activations with parameters, clip, input_forget, linear_before_reset:
 * the kernel and the unrolled graph agree. */
static void test_attributes_unrolled(void **state)
{
    (void)state;
    struct {
        gir_op op;
        const char *dir;
        const char *acts[6];
        size_t n_acts;
        double alpha[3], beta[3];
        size_t na, nb;
        double clip;
        int lbr, input_forget;
    } cases[] = {
        { GIR_OP_LSTM, "reverse", { "HardSigmoid", "LeakyRelu", "Softsign" }, 3, { 0.3, 0.05 }, { 0.4 }, 2, 1, 0.8, 0, 1 },
        { GIR_OP_GRU, "forward", { "Sigmoid", "ScaledTanh" }, 2, { 0.9 }, { 1.1 }, 1, 1, 0, 1, 0 },
        { GIR_OP_GRU, "bidirectional", { "Sigmoid", "Elu", "HardSigmoid", "Affine" }, 4, { 0.7, 0.2, 0.5 }, { 0.6, 0.1 }, 3, 2, 1.5, 0, 0 },
        { GIR_OP_RNN, "bidirectional", { "Relu", "ThresholdedRelu" }, 2, { 0.1 }, { 0 }, 1, 0, 0, 0, 0 },
        { GIR_OP_RNN, "forward", { "Softplus" }, 1, { 0 }, { 0 }, 0, 0, 0.5, 0, 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gir_graph *g = rnn_graph(cases[c].op, cases[c].dir, 0, 3, 2, 4, 3, false, false, cases[c].op == GIR_OP_LSTM);
        gir_node *n = g->nodes[0];
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_attrs_set_strings(g, &n->attrs, "activations", cases[c].acts, cases[c].n_acts, &err), &err);
        if (cases[c].na)
            rt_attr_floats(g, n, "activation_alpha", cases[c].alpha, cases[c].na);
        if (cases[c].nb)
            rt_attr_floats(g, n, "activation_beta", cases[c].beta, cases[c].nb);
        if (cases[c].clip > 0)
            rt_attr_float(g, n, "clip", cases[c].clip);
        if (cases[c].op == GIR_OP_GRU)
            rt_attr_int(g, n, "linear_before_reset", cases[c].lbr);
        if (cases[c].op == GIR_OP_LSTM)
            rt_attr_int(g, n, "input_forget", cases[c].input_forget);
        TU_OK(gir_graph_finish(g, &err), &err);
        float x[24];
        rt_fill(x, 24, 11 + c);
        gir_tensor *in[1] = { rt_tensor_new(GIR_DT_F32, 3, DIMS(3, 2, 4), x) };
        size_t no = cases[c].op == GIR_OP_LSTM ? 3 : 2;
        gir_tensor *a[3] = { 0 }, *b[3] = { 0 };
        rt_run(g, 1, in, 1, a, no);
        TU_OK(gir_rnn_unroll_all(g, NULL, &err), &err);
        assert_false(has_recurrent(g));
        rt_run(g, 1, in, 1, b, no);
        for (size_t k = 0; k < no; k++) {
            print_message("case %zu output %zu\n", c, k);
            expect_close(b[k], a[k], 1e-6, 1e-5);
            gir_tensor_unref(a[k]);
            gir_tensor_unref(b[k]);
        }
        gir_tensor_unref(in[0]);
        gir_graph_free(g);
    }
}

/* ONNX forms per opset: layout needs opset 14, linear_before_reset 3;
 * opset 6 writes output_sequence=1 when Y is used. */
static void test_onnx_opsets(void **state)
{
    (void)state;
    gir_graph *g = rnn_graph(GIR_OP_GRU, "forward", 1, 2, 1, 2, 2, false, false, false);
    gir_error err = GIR_ERROR_INIT;
    gir_options *o = gir_options_new();
    TU_OK(gir_options_set(o, "opset", "13", &err), &err);
    char *out = tu_tmp("gru13.onnx");
    /* legalization unrolls what the opset cannot carry ... */
    char *unrolled = tu_tmp("gru13_unrolled.onnx");
    tu_save(g, unrolled, "onnx", o);
    gir_graph *back = NULL;
    TU_OK(gir_load(unrolled, "onnx", NULL, &back, &err), &err);
    free(unrolled);
    for (size_t i = 0; i < back->n_nodes; i++)
        assert_int_not_equal(back->nodes[i]->op, GIR_OP_GRU);
    gir_graph_free(back);
    /* ... which the writer itself refuses, naming the attribute */
    TU_OK(gir_options_set(o, "legalize", "0", &err), &err);
    TU_FAILS(gir_save(g, out, "onnx", o, &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "GRU attribute layout needs opset 14 (writing opset 13)");
    gir_error_clear(&err);
    gir_graph_free(g);
    g = rnn_graph(GIR_OP_GRU, "forward", 0, 2, 1, 2, 2, false, false, false);
    rt_attr_int(g, g->nodes[0], "linear_before_reset", 1);
    TU_OK(gir_graph_finish(g, &err), &err);
    TU_OK(gir_options_set(o, "opset", "1", &err), &err);
    TU_FAILS(gir_save(g, out, "onnx", o, &err), &err, GIR_E_ARGUMENT, "opset=1 is outside");
    gir_error_clear(&err);
    TU_OK(gir_options_set(o, "opset", "6", &err), &err);
    tu_save(g, out, "onnx", o);
    gir_graph *g2;
    TU_OK(gir_load(out, "onnx", NULL, &g2, &err), &err);
    const gir_node *n = NULL;
    for (size_t i = 0; i < g2->n_nodes; i++)
        if (g2->nodes[i]->op == GIR_OP_GRU)
            n = g2->nodes[i];
    assert_non_null(n);
    assert_int_equal(gir_node_int(n, "linear_before_reset", 0), 1);
    assert_null(gir_attrs_find(&n->attrs, "output_sequence")); /* read as Y being there */
    size_t len;
    char *bytes = tu_slurp(out, &len);
    bool has = false;
    for (size_t i = 0; bytes && i + 15 <= len && !has; i++)
        has = memcmp(bytes + i, "output_sequence", 15) == 0;
    assert_true(has);
    free(bytes);
    gir_graph_free(g2);
    gir_graph_free(g);
    /* opset 6's binary operators broadcast B over A's trailing dimensions
     * when told (broadcast=1); other broadcasting has no opset-6 form */
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(2, 3));
    rt_input(g, "b", GIR_DT_F32, 1, DIMS(3));
    rt_input(g, "c", GIR_DT_F32, 2, DIMS(2, 1));
    rt_node(g, GIR_OP_Add, "add", "a,b", "s");
    rt_node(g, GIR_OP_Mul, "mul", "s,c", "p");
    rt_output(g, "p");
    TU_OK(gir_graph_finish(g, &err), &err);
    TU_FAILS(gir_save(g, out, "onnx", o, &err), &err, GIR_E_UNSUPPORTED_OP,
             "Mul of [2,3] and [2,1] at opset 6 (before opset 7 only B broadcasts, over A's trailing dimensions)");
    gir_error_clear(&err);
    gir_graph_free(g);
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(2, 3));
    rt_input(g, "b", GIR_DT_F32, 1, DIMS(3));
    rt_node(g, GIR_OP_Add, "add", "a,b", "s");
    rt_output(g, "s");
    TU_OK(gir_graph_finish(g, &err), &err);
    remove(out);
    tu_save(g, out, "onnx", o);
    bytes = tu_slurp(out, &len);
    has = false;
    for (size_t i = 0; bytes && i + 9 <= len && !has; i++)
        has = memcmp(bytes + i, "broadcast", 9) == 0;
    assert_true(has);
    free(bytes);
    TU_OK(gir_load(out, "onnx", NULL, &g2, &err), &err);
    float av[6] = { 1, 2, 3, 4, 5, 6 }, bvv[3] = { 10, 20, 30 };
    gir_tensor *in[2] = { rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), av), rt_tensor_new(GIR_DT_F32, 1, DIMS(3), bvv) };
    gir_tensor *res[1];
    rt_run(g2, 1, in, 2, res, 1);
    rt_expect_f32(res[0], 2, DIMS(2, 3), F32S(11, 22, 33, 14, 25, 36), 0);
    gir_tensor_unref(res[0]);
    gir_tensor_unref(in[0]);
    gir_tensor_unref(in[1]);
    gir_graph_free(g2);
    gir_graph_free(g);
    gir_options_free(o);
    free(out);
}

static void test_attribute_checks(void **state)
{
    (void)state;
    gir_graph *g = rnn_graph(GIR_OP_LSTM, "forward", 0, 2, 1, 2, 2, false, false, false);
    gir_node *n = g->nodes[0];
    gir_rnn_desc d;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_rnn_desc_read(n, &d, &err), &err);
    assert_int_equal(d.gates, 4);
    assert_true(d.default_fns);
    assert_int_equal(d.fn[0][0].act, GIR_RNN_SIGMOID);
    const char *bad[] = { "Sigmoid", "Tanh", "Swish" };
    TU_OK(gir_attrs_set_strings(g, &n->attrs, "activations", bad, 3, &err), &err);
    TU_FAILS(gir_rnn_desc_read(n, &d, &err), &err, GIR_E_ATTRIBUTE, "LSTM activation 'Swish' is not one of");
    gir_error_clear(&err);
    const char *two[] = { "Sigmoid", "Tanh" };
    TU_OK(gir_attrs_set_strings(g, &n->attrs, "activations", two, 2, &err), &err);
    TU_FAILS(gir_rnn_desc_read(n, &d, &err), &err, GIR_E_ATTRIBUTE, "'activations' has 2 names, expected 3");
    gir_error_clear(&err);
    const char *lk[] = { "LeakyRelu", "Tanh", "tanh" };
    TU_OK(gir_attrs_set_strings(g, &n->attrs, "activations", lk, 3, &err), &err);
    rt_attr_floats(g, n, "activation_alpha", (const double[]){ 0.1, 0.2 }, 2);
    TU_FAILS(gir_rnn_desc_read(n, &d, &err), &err, GIR_E_ATTRIBUTE,
             "LSTM has 2 activation_alpha and 0 activation_beta values, but its activations take 1 and 0");
    gir_error_clear(&err);
    rt_attr_floats(g, n, "activation_alpha", (const double[]){ 0.1 }, 1);
    TU_OK(gir_rnn_desc_read(n, &d, &err), &err);
    assert_true(d.fn[0][0].alpha == 0.1f);
    assert_int_equal(d.fn[0][2].act, GIR_RNN_TANH); /* names are case-insensitive */
    /* shapes: W of the wrong size */
    gir_value *w = g->values[gir_graph_value_index(g, "W")];
    w->shape.dims[1] = 7;
    TU_FAILS(gir_op_infer(g, n, &err), &err, GIR_E_SHAPE, "LSTM input 1 (W) has shape [1,7,2], expected [1, 8, 2]");
    gir_error_clear(&err);
    gir_graph_free(g);
}

/* ---- PyTorch 0.3's LSTM at opset 6 -------------------------------------------- */

/* Inputs (numpy RandomState(1).randn) and ONNX Runtime 1.x's outputs for
 * the model written at opset 7 (ONNX Runtime has no LSTM-1 kernel). */
static const float pt_x[15] = { 1.62434542f, -0.611756384f, -0.528171778f, -1.0729686f, 0.865407646f, -2.30153871f, 1.74481177f, -0.761206925f, 0.319039106f, -0.249370381f, 1.4621079f, -2.06014061f, -0.3224172f, -0.384054363f, 1.13376939f };
static const float pt_h[3] = { -1.0998913f, -0.172428206f, -0.8778584f };
static const float pt_c[3] = { 0.0422137454f, 0.58281523f, -1.1006192f };
static const float pt_y[15] = { -0.0553566404f, 0.11043179f, -0.327424556f, -0.022742033f, 0.0691541508f, -0.470449477f, 0.10779348f, -0.138814226f, -0.204156309f, 0.033761777f, -0.0534935035f, -0.278792769f, -0.144253045f, -0.124281652f, -0.235893101f };
static const float pt_yh[3] = { -0.144253045f, -0.124281652f, -0.235893101f };
static const float pt_yc[3] = { -0.258269906f, -0.262720168f, -0.624821305f };

static void run_pt(const gir_graph *g)
{
    gir_tensor *in[3] = { rt_tensor_new(GIR_DT_F32, 3, DIMS(5, 1, 3), pt_x), rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 1, 3), pt_h),
                          rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 1, 3), pt_c) };
    gir_tensor *out[3];
    rt_run(g, 1, in, 3, out, 3);
    gir_tensor *want[3] = { rt_tensor_new(GIR_DT_F32, 3, DIMS(5, 1, 3), pt_y), rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 1, 3), pt_yh),
                            rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 1, 3), pt_yc) };
    for (int k = 0; k < 3; k++) {
        expect_close(out[k], want[k], 2e-7, 1e-6);
        gir_tensor_unref(in[k]);
        gir_tensor_unref(out[k]);
        gir_tensor_unref(want[k]);
    }
}

static void test_pytorch03_lstm(void **state)
{
    (void)state;
    char *path = tu_shared("incoming/onnx/pytorch03_lstm_opset6.onnx");
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    TU_OK(gir_load(path, "onnx", NULL, &g, &err), &err);
    size_t lstm = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        assert_false(gir_node_is_opaque(g->nodes[i]));
        lstm += g->nodes[i]->op == GIR_OP_LSTM;
    }
    assert_int_equal(lstm, 1);
    run_pt(g);
    /* written back at opset 6, read back the same */
    char *out = tu_tmp("pt_back.onnx");
    tu_save(g, out, "onnx", NULL);
    gir_graph *g2;
    TU_OK(gir_load(out, "onnx", NULL, &g2, &err), &err);
    const gir_attr *ov = gir_attrs_find(&g2->meta, ONNX_META_OPSET_VERSIONS);
    assert_non_null(ov);
    assert_int_equal(ov->u.ints.v[0], 6);
    run_pt(g2);
    /* and unrolled, for targets without LSTM */
    TU_OK(gir_rnn_unroll_all(g2, NULL, &err), &err);
    assert_false(has_recurrent(g2));
    run_pt(g2);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(out);
    free(path);
}

/* ---- against ONNX Runtime --------------------------------------------------------- */

/* Reads testdata/DIR/NAME SUFFIX as format. */
static gir_graph *load_fixture(const char *dir, const char *name, const char *suffix, const char *format)
{
    char rel[128];
    snprintf(rel, sizeof rel, "%s/%s%s", dir, name, suffix);
    char *path = tu_testdata(rel);
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    TU_OK(gir_load(path, format, NULL, &g, &err), &err);
    free(path);
    return g;
}

/* What ONNX's test data leaves out (bidirectional with clip, peepholes and
 * sequence_lens; reverse with input_forget; activations with alpha/beta;
 * linear_before_reset), against ONNX Runtime's outputs
 * (testdata/onnx_rnn, scripts/onnx_rnn_ort_fixtures.*); and unrolled where
 * the lengths are constants equal to the sequence length. */
static void test_against_onnxruntime(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *ins[3];
        size_t n_in, n_out;
    } cases[] = {
        { "lstm_bi_clip_seq", { "X", "h0", "c0" }, 3, 3 }, { "lstm_rev_if", { "X", "h0", "c0" }, 3, 3 },
        { "lstm_acts", { "X" }, 1, 3 },                    { "gru_bi_seq", { "X", "h0" }, 2, 2 },
        { "gru_lbr_acts", { "X", "h0" }, 2, 2 },           { "rnn_bi_relu", { "X", "h0" }, 2, 2 },
        { "rnn_rev", { "X" }, 1, 2 },
    };
    static const char *const outs[] = { "Y", "Y_h", "Y_c" };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char rel[128];
        gir_error err = GIR_ERROR_INIT;
        gir_graph *g = load_fixture("onnx_rnn", cases[c].name, ".onnx", "onnx");
        gir_tensor *in[3] = { 0 }, *got[3] = { 0 }, *want[3] = { 0 };
        for (size_t i = 0; i < cases[c].n_in; i++) {
            snprintf(rel, sizeof rel, "onnx_rnn/%s.%s.npy", cases[c].name, cases[c].ins[i]);
            char *p = tu_testdata(rel);
            TU_OK(gir_npy_read(p, &in[i], &err), &err);
            free(p);
        }
        for (size_t k = 0; k < cases[c].n_out; k++) {
            snprintf(rel, sizeof rel, "onnx_rnn/%s.ort.%s.npy", cases[c].name, outs[k]);
            char *p = tu_testdata(rel);
            TU_OK(gir_npy_read(p, &want[k], &err), &err);
            free(p);
        }
        rt_run(g, 1, in, cases[c].n_in, got, cases[c].n_out);
        for (size_t k = 0; k < cases[c].n_out; k++) {
            print_message("%s %s vs onnxruntime\n", cases[c].name, outs[k]);
            expect_close(got[k], want[k], 1e-7, 4e-6);
            gir_tensor_unref(got[k]);
            got[k] = NULL;
        }
        size_t count = 0;
        if (gir_rnn_unroll_all(g, &count, &err) == GIR_OK) {
            rt_run(g, 1, in, cases[c].n_in, got, cases[c].n_out);
            for (size_t k = 0; k < cases[c].n_out; k++) {
                print_message("%s %s unrolled vs onnxruntime\n", cases[c].name, outs[k]);
                expect_close(got[k], want[k], 1e-6, 1e-5);
            }
        } else {
            /* only the cases with per-row lengths cannot be unrolled */
            assert_int_equal(err.code, GIR_E_UNSUPPORTED);
            assert_non_null(strstr(err.message, "sequence_lens["));
            gir_error_clear(&err);
        }
        for (size_t k = 0; k < 3; k++) {
            gir_tensor_unref(in[k]);
            gir_tensor_unref(got[k]);
            gir_tensor_unref(want[k]);
        }
        gir_graph_free(g);
    }
}

/* ---- MXNet's fused RNN ---------------------------------------------------------- */

static gir_tensor *npy(const char *name, const char *what)
{
    char rel[128];
    snprintf(rel, sizeof rel, "mxnet_rnn/%s.%s.npy", name, what);
    char *p = tu_testdata(rel);
    size_t len;
    char *bytes = tu_slurp(p, &len);
    gir_tensor *t = NULL;
    if (bytes) {
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_npy_read(p, &t, &err), &err);
    }
    free(bytes);
    free(p);
    return t;
}

/* Runs g on the case's inputs and compares its outputs with PyTorch's. */
static void mx_expect(const gir_graph *g, const char *name, size_t n_out)
{
    gir_tensor *in[3] = { npy(name, "data"), npy(name, "state"), npy(name, "state_cell") };
    size_t ni = in[2] ? 3 : 2;
    gir_tensor *got[3] = { 0 };
    rt_run(g, 1, in, ni, got, n_out);
    static const char *const outs[] = { "out", "hy", "cy" };
    for (size_t k = 0; k < n_out; k++) {
        gir_tensor *want = npy(name, outs[k]);
        print_message("%s %s\n", name, outs[k]);
        expect_close(got[k], want, 3e-7, 1e-6);
        gir_tensor_unref(want);
        gir_tensor_unref(got[k]);
    }
    for (size_t k = 0; k < 3; k++)
        gir_tensor_unref(in[k]);
}

static void test_mxnet_fused_rnn(void **state)
{
    (void)state;
    static const struct {
        const char *name, *op;
        size_t layers, outs;
    } cases[] = {
        { "lstm2bi", "LSTM", 2, 3 }, { "gru1", "GRU", 1, 2 }, { "gru2bi", "GRU", 2, 2 },
        { "rnntanh2", "RNN", 2, 2 }, { "rnnrelu1bi", "RNN", 1, 2 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char rel[128];
        gir_error err = GIR_ERROR_INIT;
        gir_graph *g = load_fixture("mxnet_rnn", cases[c].name, "-symbol.json", "mxnet");
        size_t layers = 0;
        for (size_t i = 0; i < g->n_nodes; i++) {
            assert_false(gir_node_is_opaque(g->nodes[i]));
            layers += strcmp(gir_node_op(g->nodes[i]), cases[c].op) == 0;
        }
        assert_int_equal(layers, cases[c].layers);
        mx_expect(g, cases[c].name, cases[c].outs);
        /* to ONNX and back */
        snprintf(rel, sizeof rel, "%s.onnx", cases[c].name);
        char *onnx = tu_tmp(rel);
        tu_save(g, onnx, "onnx", NULL);
        gir_graph *g2;
        TU_OK(gir_load(onnx, "onnx", NULL, &g2, &err), &err);
        mx_expect(g2, cases[c].name, cases[c].outs);
        /* to MXNet (one fused RNN per layer) and back */
        snprintf(rel, sizeof rel, "%s-symbol.json", cases[c].name);
        char *mx = tu_tmp(rel);
        tu_save(g, mx, "mxnet", NULL);
        gir_graph *g3;
        TU_OK(gir_load(mx, "mxnet", NULL, &g3, &err), &err);
        size_t layers3 = 0;
        for (size_t i = 0; i < g3->n_nodes; i++)
            layers3 += strcmp(gir_node_op(g3->nodes[i]), cases[c].op) == 0;
        assert_int_equal(layers3, cases[c].layers);
        mx_expect(g3, cases[c].name, cases[c].outs);
        gir_graph_free(g3);
        free(mx);
        gir_graph_free(g2);
        free(onnx);
        gir_graph_free(g);
    }
}

static void test_mxnet_rnn_refusals(void **state)
{
    (void)state;
    /* what MXNet's RNN cannot compute is refused by name on writing */
    static const struct {
        const char *dir, *attr, *why;
    } w[] = {
        { "reverse", NULL, "LSTM direction=reverse (MXNet's RNN runs forward or both ways)" },
        { "forward", "clip", "LSTM with clip (MXNet's RNN has no gate clipping)" },
        { "forward", "input_forget", "LSTM input_forget=1 (MXNet's RNN has no coupled gates)" },
        { "forward", "layout", "LSTM layout=1 (MXNet's RNN takes [T, N, I])" },
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        bool l1 = w[i].attr && strcmp(w[i].attr, "layout") == 0;
        gir_graph *g = rnn_graph(GIR_OP_LSTM, w[i].dir, l1, 2, 1, 2, 2, false, true, false);
        gir_node *n = g->nodes[0];
        if (w[i].attr && strcmp(w[i].attr, "clip") == 0)
            rt_attr_float(g, n, "clip", 1.0);
        if (w[i].attr && strcmp(w[i].attr, "input_forget") == 0)
            rt_attr_int(g, n, "input_forget", 1);
        gir_error err = GIR_ERROR_INIT;
        char *out = tu_tmp("refused-symbol.json");
        /* (without legalization, which would unroll the layer) */
        gir_options *o = gir_options_new();
        TU_OK(gir_options_set(o, "legalize", "0", &err), &err);
        TU_FAILS(gir_save(g, out, "mxnet", o, &err), &err, GIR_E_UNSUPPORTED_ATTR, w[i].why);
        gir_error_clear(&err);
        gir_options_free(o);
        free(out);
        gir_graph_free(g);
    }

    char *dir = tu_tempdir();
    char *sym = tu_join(dir, "bad-symbol.json");
    FILE *f = fopen(sym, "w");
    assert_non_null(f);
    fputs("{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []},"
          " {\"op\": \"null\", \"name\": \"p\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"s\", \"inputs\": []},"
          " {\"op\": \"RNN\", \"name\": \"rnn\", \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],"
          " \"attrs\": {\"mode\": \"gru\", \"num_layers\": \"1\", \"state_size\": \"3\", \"projection_size\": \"2\"}}],"
          " \"arg_nodes\": [0, 1, 2], \"heads\": [[3, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}\n", f);
    fclose(f);
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    /* a projection has no canonical form: kept verbatim, and without
     * weights there is nothing to unpack either */
    TU_OK(gir_load(sym, "mxnet", NULL, &g, &err), &err);
    assert_int_equal(g->n_nodes, 1);
    assert_true(gir_node_is_opaque(g->nodes[0]));
    gir_graph_free(g);
    free(sym);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_onnx_cases_unrolled),
        cmocka_unit_test(test_layouts_agree),
        cmocka_unit_test(test_sequence_lens),
        cmocka_unit_test(test_attributes_unrolled),
        cmocka_unit_test(test_attribute_checks),
        cmocka_unit_test(test_onnx_opsets),
        cmocka_unit_test(test_pytorch03_lstm),
        cmocka_unit_test(test_against_onnxruntime),
        cmocka_unit_test(test_mxnet_fused_rnn),
        cmocka_unit_test(test_mxnet_rnn_refusals),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
