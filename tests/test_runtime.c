/* The executor (order, memory plan, fusion, errors, sessions) and the
 * convolution, pooling and matrix kernels against naive references. */
#include "rtutil.h"

#include "runtime/rt.h"
#include "runtime/gemm.h"
#include "runtime/conv_dwc.h"
#include "runtime/conv_px.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_I64_SCALAR(v) rt_tensor_new(GIR_DT_I64, 0, NULL, I64S(v))

/* ---- executor --------------------------------------------------------------- */

static void test_chain_and_reuse(void **state)
{
    (void)state;
    /* y = relu(x + c) * 2, z = y - x: exact values, run twice, by name */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(2, 3));
    rt_const(g, "c", GIR_DT_F32, 1, DIMS(3), F32S(1, -2, 0.5f));
    rt_const(g, "two", GIR_DT_F32, 0, NULL, F32S(2));
    rt_node(g, GIR_OP_Add, "add", "x,c", "s");
    rt_node(g, GIR_OP_Relu, "relu", "s", "r");
    rt_node(g, GIR_OP_Mul, "mul", "r,two", "y");
    rt_node(g, GIR_OP_Sub, "sub", "y,x", "z");
    rt_output(g, "y");
    rt_output(g, "z");
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), F32S(0, 1, 2, -3, 4, -5));
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    assert_int_equal(gir_session_input_count(s), 1);
    assert_string_equal(gir_value_name(gir_session_input(s, 0)), "x");
    for (int rep = 0; rep < 2; rep++) {
        TU_OK(gir_session_set_input_named(s, "x", x, &err), &err);
        TU_OK(gir_session_run(s, &err), &err);
        rt_expect_f32(gir_session_output(s, 0), 2, DIMS(2, 3), F32S(2, 0, 5, 0, 4, 0), 0);
        rt_expect_f32(gir_session_output(s, 1), 2, DIMS(2, 3), F32S(2, -1, 3, 3, 0, 5), 0);
    }
    /* graph inputs and outputs are readable by name; dead intermediates not */
    gir_tensor *v = gir_session_value(s, "x");
    rt_expect_f32(v, 2, DIMS(2, 3), F32S(0, 1, 2, -3, 4, -5), 0);
    gir_tensor_unref(v);
    assert_null(gir_session_value(s, "s"));
    assert_null(gir_session_value(s, "nope"));
    /* keep mode: every intermediate is kept */
    gir_session_keep_values(s, true);
    TU_OK(gir_session_run(s, &err), &err);
    v = gir_session_value(s, "s");
    rt_expect_f32(v, 2, DIMS(2, 3), F32S(1, -1, 2.5f, -2, 2, -4.5f), 0);
    gir_tensor_unref(v);
    /* input errors */
    gir_tensor *bad = rt_tensor_new(GIR_DT_F32, 2, DIMS(3, 2), NULL);
    TU_FAILS(gir_session_set_input(s, 0, bad, &err), &err, GIR_E_SHAPE, "input 'x' has shape [2,3], got [3,2]");
    gir_error_clear(&err);
    gir_tensor_unref(bad);
    bad = rt_tensor_new(GIR_DT_I64, 2, DIMS(2, 3), NULL);
    TU_FAILS(gir_session_set_input(s, 0, bad, &err), &err, GIR_E_DTYPE, "input 'x' is float32, got int64");
    gir_error_clear(&err);
    gir_tensor_unref(bad);
    TU_FAILS(gir_session_set_input(s, 1, x, &err), &err, GIR_E_ARGUMENT, "input 1 does not exist");
    gir_error_clear(&err);
    TU_FAILS(gir_session_set_input_named(s, "c", x, &err), &err, GIR_E_ARGUMENT, "no input named 'c'");
    gir_error_clear(&err);
    gir_session_free(s);
    gir_tensor_unref(x);
    gir_graph_free(g);
}

static void test_errors(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    /* an opaque op and a second unsupported one: one error names both and
     * the first node */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(4));
    gir_node *n = rt_node(g, GIR_OP_OPAQUE, "mystery", "x", "y");
    n->opaque_format = "tvm";
    n->opaque_op = "tvm_op";
    rt_node(g, GIR_OP_OPAQUE, "mystery2", "y", "z")->opaque_format = "tvm";
    g->nodes[1]->opaque_op = "tvm_op";
    rt_output(g, "z");
    gir_session *s;
    TU_FAILS(gir_session_new(g, 1, &s, &err), &err, GIR_E_NO_KERNEL, "node 'mystery'",
             "no kernel for tvm:tvm_op (2 nodes)");
    gir_error_clear(&err);
    gir_graph_free(g);

    /* a missing input at run time; a type the kernel lacks; a cycle */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_I64, 1, DIMS(4));
    rt_node(g, GIR_OP_Sigmoid, "sig", "x", "y");
    rt_output(g, "y");
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    TU_FAILS(gir_session_run(s, &err), &err, GIR_E_ARGUMENT, "input 'x' was not given");
    gir_error_clear(&err);
    gir_tensor *xi = rt_tensor_new(GIR_DT_I64, 1, DIMS(4), NULL);
    TU_OK(gir_session_set_input(s, 0, xi, &err), &err);
    TU_FAILS(gir_session_run(s, &err), &err, GIR_E_NO_KERNEL, "node 'sig'", "no kernel for Sigmoid on int64");
    gir_error_clear(&err);
    gir_session_free(s);
    gir_tensor_unref(xi);
    gir_graph_free(g);

    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(4));
    int32_t a, b;
    TU_OK(gir_graph_add_value(g, "a", GIR_VALUE_INTERMEDIATE, &a, &err), &err);
    TU_OK(gir_graph_add_value(g, "b", GIR_VALUE_INTERMEDIATE, &b, &err), &err);
    gir_node *n1 = rt_node(g, GIR_OP_Add, "n1", "x,b", "-");
    gir_node *n2 = rt_node(g, GIR_OP_Relu, "n2", "a", "-");
    TU_OK(gir_node_set_output(g, n1, 0, a, &err), &err);
    TU_OK(gir_node_set_output(g, n2, 0, b, &err), &err);
    rt_output(g, "b");
    TU_FAILS(gir_session_new(g, 1, &s, &err), &err, GIR_E_CYCLE, "the graph has a cycle: 'n1' -> 'n2' -> 'n1'");
    gir_error_clear(&err);
    gir_graph_free(g);

    /* a weight whose data was never read; a value nobody produces (the
     * graph validation); bad thread count */
    g = rt_graph();
    TU_OK(gir_graph_add_value(g, "w", GIR_VALUE_WEIGHT, &a, &err), &err);
    rt_node(g, GIR_OP_Relu, "r", "w", "y");
    rt_output(g, "y");
    TU_FAILS(gir_session_new(g, 1, &s, &err), &err, GIR_E_PARAMS, "node 'r'", "weight 'w' has no data");
    gir_error_clear(&err);
    TU_OK(gir_graph_add_value(g, "ghost", GIR_VALUE_INTERMEDIATE, &a, &err), &err);
    TU_FAILS(gir_session_new(g, 1, &s, &err), &err, GIR_E_REFERENCE, "value 'ghost' is intermediate but no node produces it");
    gir_error_clear(&err);
    TU_FAILS(gir_session_new(g, 0, &s, &err), &err, GIR_E_ARGUMENT, "thread count 0");
    gir_error_clear(&err);
    gir_graph_free(g);

    /* shape errors name the node */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(4));
    rt_input(g, "y", GIR_DT_F32, 1, DIMS(3));
    rt_node(g, GIR_OP_Add, "plus", "x,y", "z");
    rt_output(g, "z");
    gir_tensor *in[2] = { rt_tensor_new(GIR_DT_F32, 1, DIMS(4), NULL), rt_tensor_new(GIR_DT_F32, 1, DIMS(3), NULL) };
    rt_run_fails(g, in, 2, GIR_E_SHAPE, "node 'plus'", "shapes [4] and [3] do not broadcast");
    gir_tensor_unref(in[0]);
    gir_tensor_unref(in[1]);
    gir_graph_free(g);

    assert_true(gir_runtime_supports_op("Conv"));
    assert_false(gir_runtime_supports_op("NoSuchOp"));
}

/* Out of order nodes run in dependency order; unknown input dims follow
 * the fed tensor and a new shape re-plans. */
static void test_order_and_replan(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(-1, 2));
    gir_node *late = rt_node(g, GIR_OP_Neg, "late", "-", "y");
    rt_node(g, GIR_OP_Abs, "early", "x", "a");
    late->in[0] = gir_graph_value_index(g, "a");
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, 2, &s, &err), &err);
    gir_tensor *x1 = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, 2), F32S(-1, 2));
    gir_tensor *x2 = rt_tensor_new(GIR_DT_F32, 2, DIMS(3, 2), F32S(1, -2, 3, -4, 5, -6));
    TU_OK(gir_session_set_input(s, 0, x1, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    rt_expect_f32(gir_session_output(s, 0), 2, DIMS(1, 2), F32S(-1, -2), 0);
    TU_OK(gir_session_set_input(s, 0, x2, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    rt_expect_f32(gir_session_output(s, 0), 2, DIMS(3, 2), F32S(-1, -2, -3, -4, -5, -6), 0);
    gir_session_free(s);
    gir_tensor_unref(x1);
    gir_tensor_unref(x2);
    gir_graph_free(g);
}

/* A chain of 12 elementwise ops on 1 MiB runs in one buffer (in place), and
 * a ladder keeps at most the live tensors. */
static void test_memory_plan(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(1 << 18));
    char prev[16] = "x", cur[16], name[16];
    rt_node(g, GIR_OP_Abs, "first", "x", "v0");
    strcpy(prev, "v0");
    for (int i = 1; i < 12; i++) {
        snprintf(cur, sizeof cur, "v%d", i);
        snprintf(name, sizeof name, "n%d", i);
        rt_node(g, i % 2 ? GIR_OP_Neg : GIR_OP_Abs, name, prev, cur);
        strcpy(prev, cur);
    }
    rt_output(g, prev);
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    float *xd = malloc((1 << 18) * sizeof(float));
    rt_fill(xd, 1 << 18, 7);
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 1, DIMS(1 << 18), xd);
    TU_OK(gir_session_set_input(s, 0, x, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_rt_planned_bytes(s), (size_t)1 << 20);
    /* abs, then (neg, abs) x 5, then neg: -|x| */
    const float *y;
    TU_OK(gir_tensor_load(gir_session_output(s, 0), (const void **)&y, &err), &err);
    for (size_t i = 0; i < (1 << 18); i++)
        if (y[i] != -fabsf(xd[i]))
            fail_msg("element %zu: %g for |%g|", i, (double)y[i], (double)xd[i]);
    /* keep mode: one buffer per value */
    gir_session_keep_values(s, true);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_rt_planned_bytes(s), (size_t)12 << 20);
    gir_session_free(s);
    gir_tensor_unref(x);
    free(xd);
    gir_graph_free(g);
}

/* Concat in place: values read only by Concats are computed into their slot
 * of the Concat with most inputs, and a Concat of a prefix of its inputs is a
 * view of its buffer (DenseNet's blocks); a slot is not contiguous when a
 * dimension before the axis is not 1, and a value produced before the ones
 * ahead of it is copied as before.  Exact values either way. */
static gir_graph *dense_block(int64_t batch)
{
    /* a = -x; f1 = |concat(a)|; f2 = 2 concat(a, f1); y = concat(a, f1, f2) */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(batch, 2, 3));
    rt_const(g, "two", GIR_DT_F32, 0, NULL, F32S(2));
    rt_node(g, GIR_OP_Neg, "neg", "x", "a");
    rt_attr_int(g, rt_node(g, GIR_OP_Concat, "c1", "a", "c1"), "axis", 1);
    rt_node(g, GIR_OP_Abs, "abs", "c1", "f1");
    rt_attr_int(g, rt_node(g, GIR_OP_Concat, "c2", "a,f1", "c2"), "axis", -2);
    rt_node(g, GIR_OP_Mul, "mul", "c2,two", "f2");
    rt_attr_int(g, rt_node(g, GIR_OP_Concat, "c3", "a,f1,f2", "y"), "axis", 1);
    rt_output(g, "y");
    return g;
}

static void test_concat_in_place(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    for (int64_t batch = 1; batch <= 2; batch++) {
        gir_graph *g = dense_block(batch);
        float xd[12], want[48];
        for (int i = 0; i < 12; i++)
            xd[i] = (float)(i % 5) - 2.5f;
        /* per image: channels -x, |x|, -2x, 2|x| (2 each) */
        for (int n = 0; n < batch; n++)
            for (int i = 0; i < 6; i++) {
                float v = xd[n * 6 + i];
                float *o = want + n * 24;
                o[i] = -v;
                o[6 + i] = fabsf(v);
                o[12 + i] = -2 * v;
                o[18 + i] = 2 * fabsf(v);
            }
        gir_tensor *x = rt_tensor_new(GIR_DT_F32, 3, DIMS(batch, 2, 3), xd);
        gir_session *s;
        TU_OK(gir_session_new(g, 1, &s, &err), &err);
        TU_OK(gir_session_set_input(s, 0, x, &err), &err);
        for (int rep = 0; rep < 2; rep++) {
            TU_OK(gir_session_run(s, &err), &err);
            rt_expect_f32(gir_session_output(s, 0), 3, DIMS(batch, 8, 3), want, 0);
        }
        /* batch 1: the result's 96 bytes are all there is; batch 2 copies */
        if (batch == 1)
            assert_int_equal(gir_rt_planned_bytes(s), 96);
        else
            assert_true(gir_rt_planned_bytes(s) > 2 * 96);
        gir_session_free(s);
        gir_tensor_unref(x);
        gir_graph_free(g);
    }
    /* Conv+Relu (fused) into slot 0; the second branch is computed first, so
     * its slot's offset is unknown then and the Concat copies it; a graph
     * input in slot 2 is copied as well */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 2, 2, 2));
    rt_const(g, "w1", GIR_DT_F32, 4, DIMS(1, 2, 1, 1), F32S(1, -2));
    rt_const(g, "w2", GIR_DT_F32, 4, DIMS(1, 2, 1, 1), F32S(3, 1));
    gir_node *c2 = rt_node(g, GIR_OP_Conv, "conv2", "x,w2", "r2");
    gir_node *c1 = rt_node(g, GIR_OP_Conv, "conv1", "x,w1", "p1");
    rt_attr_ints(g, c1, "kernel_shape", I64S(1, 1), 2);
    rt_attr_ints(g, c2, "kernel_shape", I64S(1, 1), 2);
    rt_node(g, GIR_OP_Relu, "relu", "p1", "r1");
    rt_attr_int(g, rt_node(g, GIR_OP_Concat, "cat", "r1,r2,x", "y"), "axis", 1);
    rt_output(g, "y");
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 2, 2), F32S(1, 2, 3, 4, 0, 1, 2, 3));
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    TU_OK(gir_session_set_input(s, 0, x, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_rt_fused_count(s), 1);
    /* relu(x0 - 2 x1), 3 x0 + x1, x */
    rt_expect_f32(gir_session_output(s, 0), 4, DIMS(1, 4, 2, 2),
                  F32S(1, 0, 0, 0, 3, 7, 11, 15, 1, 2, 3, 4, 0, 1, 2, 3), 0);
    gir_session_free(s);
    gir_tensor_unref(x);
    gir_graph_free(g);
}

/* Corner cases of the plan: an input that is an output, a constant output,
 * a value read twice by one node, an output that later nodes also read
 * (never overwritten in place), empty tensors. */
static void test_plan_corners(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 1, DIMS(3));
    rt_const(g, "k", GIR_DT_F32, 1, DIMS(2), F32S(7, 8));
    rt_node(g, GIR_OP_Abs, "abs", "x", "a");
    rt_node(g, GIR_OP_Add, "twice", "a,a", "b");  /* reads a twice */
    rt_node(g, GIR_OP_Neg, "neg", "b", "c");      /* b is an output too */
    rt_node(g, GIR_OP_Relu, "relu", "c", "d");
    rt_output(g, "x");
    rt_output(g, "k");
    rt_output(g, "b");
    rt_output(g, "d");
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 1, DIMS(3), F32S(-1, 2, -3));
    gir_tensor *o[4];
    rt_run(g, 1, &x, 1, o, 4);
    rt_expect_f32(o[0], 1, DIMS(3), F32S(-1, 2, -3), 0);
    rt_expect_f32(o[1], 1, DIMS(2), F32S(7, 8), 0);
    rt_expect_f32(o[2], 1, DIMS(3), F32S(2, 4, 6), 0);
    rt_expect_f32(o[3], 1, DIMS(3), F32S(0, 0, 0), 0);
    for (int i = 0; i < 4; i++)
        gir_tensor_unref(o[i]);
    gir_tensor_unref(x);
    gir_graph_free(g);

    /* empty tensors flow through elementwise, Concat and Conv */
    g = rt_graph();
    rt_input(g, "e", GIR_DT_F32, 4, DIMS(0, 2, 3, 3));
    rt_const(g, "w", GIR_DT_F32, 4, DIMS(4, 2, 1, 1), F32S(1, 2, 3, 4, 5, 6, 7, 8));
    rt_node(g, GIR_OP_Relu, "r", "e", "re");
    gir_node *cat = rt_node(g, GIR_OP_Concat, "cat", "re,e", "ce");
    rt_attr_int(g, cat, "axis", 0);
    rt_node(g, GIR_OP_Conv, "conv", "ce,w", "y");
    rt_output(g, "y");
    x = rt_tensor_new(GIR_DT_F32, 4, DIMS(0, 2, 3, 3), NULL);
    rt_run(g, 2, &x, 1, o, 1);
    rt_expect_f32(o[0], 4, DIMS(0, 4, 3, 3), NULL, 0);
    gir_tensor_unref(o[0]);
    gir_tensor_unref(x);
    gir_graph_free(g);

    /* a graph without nodes */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_I64, 0, NULL);
    rt_output(g, "x");
    x = T_I64_SCALAR(5);
    rt_run(g, 1, &x, 1, o, 1);
    rt_expect_i64(o[0], 0, NULL, I64S(5));
    gir_tensor_unref(o[0]);
    gir_tensor_unref(x);
    gir_graph_free(g);
}

/* A lazily loaded weight that a Conv packs is unloaded after planning (the
 * model's weights are not held twice) and loaded again only by a new plan. */
typedef struct lazy_src {
    const float *data;
    size_t bytes;
    int loads;
} lazy_src;

static gir_status lazy_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    lazy_src *l = ctx;
    (void)err;
    assert_int_equal(nbytes, l->bytes);
    memcpy(dst, l->data, l->bytes);
    l->loads++;
    return GIR_OK;
}

static void lazy_release(void *ctx)
{
    (void)ctx;
}

static void test_packed_weights_dropped(void **state)
{
    (void)state;
    static const gir_loader loader = { lazy_load, lazy_release };
    float w[8 * 3 * 3 * 3], x[3 * 6 * 6];
    rt_fill(w, sizeof w / sizeof w[0], 51);
    rt_fill(x, sizeof x / sizeof x[0], 52);
    lazy_src src = { w, sizeof w, 0 };
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 3, 6, 6));
    gir_tensor *wt;
    gir_shape ws = { 4, { 8, 3, 3, 3 } };
    TU_OK(gir_tensor_lazy(GIR_DT_F32, &ws, &loader, &src, &wt, &err), &err);
    int32_t wv;
    TU_OK(gir_graph_add_value(g, "w", GIR_VALUE_WEIGHT, &wv, &err), &err);
    gir_value_set_data(g->values[wv], wt);
    gir_tensor_unref(wt);
    rt_node(g, GIR_OP_Conv, "conv", "x,w", "y");
    rt_output(g, "y");
    gir_tensor *xt = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 3, 6, 6), x);
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    TU_OK(gir_session_set_input(s, 0, xt, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(src.loads, 1);
    assert_null(g->values[wv]->data->data);
    gir_tensor *y1 = gir_tensor_ref(gir_session_output(s, 0));
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(src.loads, 1);
    /* keep mode plans again: the weight comes back (and stays: no drop in keep mode) */
    gir_session_keep_values(s, true);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(src.loads, 2);
    assert_non_null(g->values[wv]->data->data);
    const void *p1, *p2;
    TU_OK(gir_tensor_load(y1, &p1, &err), &err);
    TU_OK(gir_tensor_load(gir_session_output(s, 0), &p2, &err), &err);
    assert_memory_equal(p1, p2, 8 * 4 * 4 * sizeof(float));
    gir_session_free(s);
    /* the session unloads what it loaded */
    assert_null(g->values[wv]->data->data);
    gir_tensor_unref(y1);
    gir_tensor_unref(xt);
    gir_graph_free(g);
}

/* ---- convolution ------------------------------------------------------------- */

typedef struct convspec {
    int nsp;
    int64_t n, c, m, group;
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
    bool bias;
    const char *auto_pad;
} convspec;

static int64_t conv_out(const convspec *cs, int i)
{
    int64_t keff = (cs->k[i] - 1) * cs->d[i] + 1;
    if (cs->auto_pad && strncmp(cs->auto_pad, "SAME", 4) == 0)
        return (cs->in[i] + cs->s[i] - 1) / cs->s[i];
    return (cs->in[i] + cs->pb[i] + cs->pe[i] - keff) / cs->s[i] + 1;
}

/* Naive convolution in double over 1 to 3 spatial dims. */
static void conv_ref(const convspec *cs, const float *x, const float *w, const float *b, float *y)
{
    int64_t in[3] = { 1, 1, 1 }, k[3] = { 1, 1, 1 }, s[3] = { 1, 1, 1 }, d[3] = { 1, 1, 1 }, p[3] = { 0, 0, 0 },
            o[3] = { 1, 1, 1 };
    int off = 3 - cs->nsp;
    for (int i = 0; i < cs->nsp; i++) {
        in[off + i] = cs->in[i];
        k[off + i] = cs->k[i];
        s[off + i] = cs->s[i];
        d[off + i] = cs->d[i];
        o[off + i] = conv_out(cs, i);
        int64_t pb = cs->pb[i];
        if (cs->auto_pad && strncmp(cs->auto_pad, "SAME", 4) == 0) {
            int64_t total = (o[off + i] - 1) * s[off + i] + (k[off + i] - 1) * d[off + i] + 1 - in[off + i];
            if (total < 0)
                total = 0;
            pb = strcmp(cs->auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
        }
        p[off + i] = pb;
    }
    int64_t cg = cs->c / cs->group, mg = cs->m / cs->group;
    for (int64_t n = 0; n < cs->n; n++)
        for (int64_t m = 0; m < cs->m; m++)
            for (int64_t od = 0; od < o[0]; od++)
                for (int64_t oh = 0; oh < o[1]; oh++)
                    for (int64_t ow = 0; ow < o[2]; ow++) {
                        double acc = b ? b[m] : 0;
                        int64_t gi = m / mg;
                        for (int64_t ci = 0; ci < cg; ci++)
                            for (int64_t kd = 0; kd < k[0]; kd++)
                                for (int64_t kh = 0; kh < k[1]; kh++)
                                    for (int64_t kw = 0; kw < k[2]; kw++) {
                                        int64_t id = od * s[0] - p[0] + kd * d[0], ih = oh * s[1] - p[1] + kh * d[1],
                                                iw = ow * s[2] - p[2] + kw * d[2];
                                        if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2])
                                            continue;
                                        double xv = x[(((n * cs->c + gi * cg + ci) * in[0] + id) * in[1] + ih) * in[2] + iw];
                                        double wv = w[(((m * cg + ci) * k[0] + kd) * k[1] + kh) * k[2] + kw];
                                        acc += xv * wv;
                                    }
                        y[(((n * cs->m + m) * o[0] + od) * o[1] + oh) * o[2] + ow] = (float)acc;
                    }
}

static void set_window_attrs(gir_graph *g, gir_node *nd, const convspec *cs, bool dil)
{
    int64_t v[6];
    for (int i = 0; i < cs->nsp; i++)
        v[i] = cs->s[i];
    rt_attr_ints(g, nd, "strides", v, (size_t)cs->nsp);
    if (dil) {
        for (int i = 0; i < cs->nsp; i++)
            v[i] = cs->d[i];
        rt_attr_ints(g, nd, "dilations", v, (size_t)cs->nsp);
    }
    for (int i = 0; i < cs->nsp; i++) {
        v[i] = cs->pb[i];
        v[i + cs->nsp] = cs->pe[i];
    }
    rt_attr_ints(g, nd, "pads", v, 2 * (size_t)cs->nsp);
    if (cs->auto_pad)
        rt_attr_string(g, nd, "auto_pad", cs->auto_pad);
}

/* Runs one convolution spec (optionally followed by a fused Relu or a
 * residual Add + Relu) with 1 and 2 threads and compares. */
static void check_conv(const convspec *cs, int tail)
{
    gir_graph *g = rt_graph();
    int64_t xd[5] = { cs->n, cs->c }, wd[5] = { cs->m, cs->c / cs->group }, yd[5] = { cs->n, cs->m };
    size_t xn = (size_t)(cs->n * cs->c), wn = (size_t)(cs->m * (cs->c / cs->group)), yn = (size_t)(cs->n * cs->m);
    for (int i = 0; i < cs->nsp; i++) {
        xd[2 + i] = cs->in[i];
        wd[2 + i] = cs->k[i];
        yd[2 + i] = conv_out(cs, i);
        xn *= (size_t)cs->in[i];
        wn *= (size_t)cs->k[i];
        yn *= (size_t)yd[2 + i];
    }
    float *x = malloc(xn * sizeof(float)), *w = malloc(wn * sizeof(float)), *b = malloc((size_t)cs->m * sizeof(float));
    float *want = malloc(yn * sizeof(float)), *skip = malloc(yn * sizeof(float));
    rt_fill(x, xn, 1);
    rt_fill(w, wn, 2);
    rt_fill(b, (size_t)cs->m, 3);
    rt_fill(skip, yn, 4);
    conv_ref(cs, x, w, cs->bias ? b : NULL, want);
    rt_input(g, "x", GIR_DT_F32, 2 + cs->nsp, xd);
    rt_const(g, "w", GIR_DT_F32, 2 + cs->nsp, wd, w);
    rt_const(g, "b", GIR_DT_F32, 1, &cs->m, b);
    size_t n_in = 1;
    if (tail == 2) {
        /* skip = Neg(s), computed before the conv: an intermediate whose
         * buffer the conv can accumulate into */
        rt_input(g, "s", GIR_DT_F32, 2 + cs->nsp, yd);
        rt_node(g, GIR_OP_Neg, "neg", "s", "ns");
        n_in = 2;
    }
    gir_node *nd = rt_node(g, GIR_OP_Conv, "conv", cs->bias ? "x,w,b" : "x,w", "y");
    set_window_attrs(g, nd, cs, true);
    if (cs->group != 1)
        rt_attr_int(g, nd, "group", cs->group);
    rt_attr_ints(g, nd, "kernel_shape", cs->k, (size_t)cs->nsp);
    if (tail == 0) {
        rt_output(g, "y");
    } else if (tail == 1) {
        rt_node(g, GIR_OP_Relu, "relu", "y", "r");
        rt_output(g, "r");
        for (size_t i = 0; i < yn; i++)
            want[i] = want[i] < 0 ? 0 : want[i];
    } else {
        rt_node(g, GIR_OP_Add, "add", "y,ns", "sum");
        gir_node *clip = rt_node(g, GIR_OP_Clip, "clip", "sum", "r");
        rt_attr_float(g, clip, "min", 0.0);
        rt_attr_float(g, clip, "max", 6.0);
        rt_output(g, "r");
        for (size_t i = 0; i < yn; i++) {
            float v = want[i] + -skip[i];
            want[i] = v < 0 ? 0 : v > 6 ? 6 : v;
        }
    }
    gir_tensor *in[2] = { rt_tensor_new(GIR_DT_F32, 2 + cs->nsp, xd, x), rt_tensor_new(GIR_DT_F32, 2 + cs->nsp, yd, skip) };
    gir_tensor *o1, *o2;
    /* the Relu, or the Add and the Clip, run inside the convolution */
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    for (size_t i = 0; i < n_in; i++)
        TU_OK(gir_session_set_input(s, i, in[i], &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_rt_fused_count(s), (size_t)tail);
    gir_session_free(s);
    rt_run(g, 1, in, n_in, &o1, 1);
    rt_run(g, 2, in, n_in, &o2, 1);
    rt_expect_f32(o1, 2 + cs->nsp, yd, want, 2e-5 * (double)(wn / (size_t)cs->m + 1));
    const void *p1, *p2;
    TU_OK(gir_tensor_load(o1, &p1, NULL), NULL);
    TU_OK(gir_tensor_load(o2, &p2, NULL), NULL);
    assert_memory_equal(p1, p2, yn * sizeof(float));
    gir_tensor_unref(o1);
    gir_tensor_unref(o2);
    gir_tensor_unref(in[0]);
    gir_tensor_unref(in[1]);
    free(x);
    free(w);
    free(b);
    free(want);
    free(skip);
    gir_graph_free(g);
}

static void test_conv(void **state)
{
    (void)state;
    static const convspec specs[] = {
        /* 2-D: plain, padded, strided, dilated, asymmetric pads, 1x1 */
        { 2, 1, 3, 8, 1, { 9, 11 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 2, 5, 7, 1, { 10, 9 }, { 3, 2 }, { 2, 1 }, { 1, 2 }, { 0, 1 }, { 2, 0 }, false, NULL },
        { 2, 1, 16, 40, 1, { 6, 6 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, NULL },
        { 2, 1, 16, 24, 1, { 7, 7 }, { 1, 1 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, NULL },
        { 2, 1, 3, 16, 1, { 23, 23 }, { 7, 7 }, { 2, 2 }, { 1, 1 }, { 3, 3 }, { 3, 3 }, true, NULL },
        /* groups, depthwise (multiplier 1 and 2), depthwise strided/dilated */
        { 2, 1, 8, 12, 4, { 7, 8 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 2, 6, 6, 6, { 9, 10 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 1, 5, 10, 5, { 11, 12 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 1, 4, 4, 4, { 13, 14 }, { 5, 3 }, { 3, 2 }, { 2, 3 }, { 2, 0 }, { 1, 4 }, false, NULL },
        /* auto_pad */
        { 2, 1, 3, 5, 1, { 8, 7 }, { 3, 4 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, "SAME_UPPER" },
        { 2, 1, 3, 5, 1, { 8, 7 }, { 3, 4 }, { 2, 3 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, "SAME_LOWER" },
        { 2, 1, 3, 6, 3, { 8, 7 }, { 3, 4 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, "SAME_UPPER" },
        /* 1-D and 3-D, and depthwise 1-D */
        { 1, 2, 3, 4, 1, { 17 }, { 5 }, { 2 }, { 2 }, { 3 }, { 1 }, true, NULL },
        { 1, 1, 4, 4, 4, { 17 }, { 3 }, { 1 }, { 1 }, { 1 }, { 1 }, true, NULL },
        { 3, 1, 2, 3, 1, { 5, 6, 7 }, { 3, 2, 3 }, { 1, 2, 1 }, { 1, 1, 2 }, { 1, 0, 1 }, { 1, 1, 0 }, true, NULL },
        { 3, 1, 4, 4, 2, { 4, 5, 6 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, false, NULL },
        /* outputs 16 or more wide: im2col straight into GEMM panels (narrower
         * ones above take the plain im2col) */
        { 2, 1, 3, 8, 1, { 20, 37 }, { 3, 3 }, { 2, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 1, 8, 8, 2, { 9, 40 }, { 3, 3 }, { 1, 1 }, { 1, 2 }, { 1, 2 }, { 1, 2 }, true, NULL },
        /* Winograd F(2x2,3x3): odd sizes (partial tiles), batch 2, asymmetric
         * pads, and rows wider than the row-at-a-time transforms take */
        { 2, 2, 32, 24, 1, { 15, 17 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 1, 40, 16, 1, { 16, 16 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 2, 2 }, false, NULL },
        { 2, 1, 32, 16, 1, { 3, 1100 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        /* 3x3 over 16 channels (144 taps): the pixel kernel, not Winograd */
        { 2, 1, 16, 24, 1, { 15, 17 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        /* the direct form (AVX-512: B rows read from padded stride-phase
         * planes): stride 2 with groups and asymmetric pads, 5x5, and rows
         * so wide that the output goes in several row blocks */
        { 2, 2, 12, 18, 3, { 21, 26 }, { 5, 5 }, { 2, 2 }, { 1, 1 }, { 2, 1 }, { 1, 2 }, true, NULL },
        { 2, 1, 2, 64, 1, { 9, 300 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 1, 3, 9, 1, { 10, 8 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 1, 1 }, false, NULL },
        /* ... with K (32 x 3 x 3) longer than one GEMM pass: the output rows'
         * columns are stored, and added to, more than once */
        { 2, 1, 32, 20, 1, { 11, 40 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        /* one group, 27 taps or more, on AVX-512: the pixel kernel
         * (conv_px.c), channel blocks of at most 4 vectors: 72 channels (5
         * vectors: blocks of 3 and 2, tiles of 8 and 12 pixels) over 575
         * pixels (three chunks of 240, the last tile partial); 100 channels
         * (blocks of 4 and 3) over 7x7 with 216 taps (the sums carried
         * over a second block of taps: 160 + 56 for 4 vectors, 213 + 3 for
         * 3); batch 2, stride 2, 20 channels
         * (one block of 2 vectors) */
        { 2, 1, 8, 72, 1, { 23, 25 }, { 5, 5 }, { 1, 1 }, { 1, 1 }, { 2, 2 }, { 2, 2 }, true, NULL },
        { 2, 1, 24, 100, 1, { 7, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 2, 24, 20, 1, { 14, 15 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 0 }, { 1, 1 }, false, NULL },
        /* the pixel kernel from 27 taps: a 3x3 stride-2 stem over 3
         * channels, reading one padded plane per channel at the stride (odd
         * sizes: the last window's row and column inside the padding) */
        { 2, 2, 3, 32, 1, { 23, 24 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        /* strides 3 and 4 in the direct form (9 and 16 phase planes):
         * AlexNet's 11x11 stride-4 stem and a 4x4 stride-4 patch embedding
         * (48 taps) through the pixel kernel, a grouped stride 3 through
         * the GEMM */
        { 2, 1, 3, 20, 1, { 30, 31 }, { 11, 11 }, { 4, 4 }, { 1, 1 }, { 2, 2 }, { 1, 2 }, true, NULL },
        { 2, 1, 3, 12, 1, { 17, 19 }, { 4, 4 }, { 4, 4 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, NULL },
        { 2, 2, 6, 9, 3, { 13, 14 }, { 3, 3 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0, 1 }, true, NULL },
        /* depthwise by channel blocks (AVX-512, conv_dwc.c): 20 channels
         * (blocks of 16 and 4) of batch 2 over 60 rows (three bands); 7x7
         * stride 2 with asymmetric pads over 35 channels; 3x5 windows with
         * strides (1, 2), dilations (2, 1) and pads cropped on the right (the
         * general loops); 5x5 on a 9x9 plane; and a 3x3 at stride 1 over
         * rows 50 wide, which stays with the plane kernel */
        { 2, 2, 20, 20, 20, { 60, 20 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        { 2, 1, 35, 35, 35, { 30, 29 }, { 7, 7 }, { 2, 2 }, { 1, 1 }, { 3, 2 }, { 2, 3 }, false, NULL },
        { 2, 1, 17, 17, 17, { 11, 13 }, { 3, 5 }, { 1, 2 }, { 2, 1 }, { 2, 1 }, { 0, 3 }, true, NULL },
        { 2, 1, 16, 16, 16, { 9, 9 }, { 5, 5 }, { 1, 1 }, { 1, 1 }, { 2, 2 }, { 2, 2 }, true, NULL },
        { 2, 1, 8, 8, 8, { 6, 50 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, true, NULL },
        /* 1x1 windows at strides (2, 2) and (2, 3) without pads (ResNet's
         * downsampling): the pixel kernel reading every s-th pixel (AVX-512),
         * odd sizes, batch 2, 24 channels (a partial vector) */
        { 2, 2, 16, 24, 1, { 13, 11 }, { 1, 1 }, { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, NULL },
        { 2, 1, 40, 20, 1, { 9, 14 }, { 1, 1 }, { 2, 3 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, false, NULL },
        /* rows too wide for its tiles (70000 columns): the plane kernels */
        { 2, 1, 2, 2, 2, { 1, 70000 }, { 1, 3 }, { 1, 1 }, { 1, 1 }, { 0, 1 }, { 0, 1 }, true, NULL },
        /* pointwise over few pixels and 256+ channels: the pixel kernel
         * reading the input itself (AVX-512): 260 taps, 70 channels
         * (blocks of 3 vectors, whose sums are carried from 213 taps to the
         * other 47, and of 2, the last partial, in one block of taps),
         * batch 2 */
        { 2, 2, 260, 70, 1, { 9, 11 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, NULL },
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        for (int tail = 0; tail < 3; tail++)
            check_conv(&specs[i], tail);
}

/* An inverted residual block, as MobileNetV2 and EfficientNet have: a
 * pointwise expansion, a depthwise window (or groups of gw channels) and a
 * pointwise projection, each
 * with an activation (0 Relu, 1 Clip 0..6, 2 SiLU), the last plus a
 * residual when asked.  On AVX-512, the two values between them are handed
 * over in channel blocks (rt_tensor.blocked): not a value that is also a
 * graph output (expose: the first), nor any when the session keeps its
 * values.  The numbers are the reference convolutions', and the same with
 * 1 and 2 threads. */
typedef struct chainspec {
    int64_t n, c, e, o, h, w, k, s;
    int act;
    bool residual, expose, keep;
    int64_t gw; /* the middle convolution's channels per group: 0 for 1 (depthwise) */
} chainspec;

static void chain_ref_act(int act, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = y[i];
        y[i] = (float)(act == 0 ? fmax(v, 0.0) : act == 1 ? fmin(fmax(v, 0.0), 6.0) : v / (1.0 + exp(-v)));
    }
}

static void chain_act(gir_graph *g, int act, const char *in, const char *name, const char *out)
{
    char gate[32], ins[64];
    if (act == 0) {
        rt_node(g, GIR_OP_Relu, name, in, out);
    } else if (act == 1) {
        gir_node *c = rt_node(g, GIR_OP_Clip, name, in, out);
        rt_attr_float(g, c, "min", 0.0);
        rt_attr_float(g, c, "max", 6.0);
    } else {
        snprintf(gate, sizeof gate, "%s_g", name);
        snprintf(ins, sizeof ins, "%s,%s", in, gate);
        rt_node(g, GIR_OP_Sigmoid, gate, in, gate);
        rt_node(g, GIR_OP_Mul, name, ins, out);
    }
}

static void check_chain(const chainspec *ch)
{
    int64_t H = ch->h, W = ch->w, k = ch->k, p = k / 2, gw = ch->gw ? ch->gw : 1;
    convspec c1 = { 2, ch->n, ch->c, ch->e, 1, { H, W }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, NULL };
    convspec c2 = { 2, ch->n, ch->e, ch->e, ch->e / gw, { H, W }, { k, k }, { ch->s, ch->s }, { 1, 1 }, { p, p },
                    { p, p }, true, NULL };
    int64_t OH = conv_out(&c2, 0), OW = conv_out(&c2, 1);
    convspec c3 = { 2, ch->n, ch->e, ch->o, 1, { OH, OW }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, true, NULL };
    int64_t xd[4] = { ch->n, ch->c, H, W }, w1d[4] = { ch->e, ch->c, 1, 1 }, w2d[4] = { ch->e, gw, k, k };
    int64_t w3d[4] = { ch->o, ch->e, 1, 1 }, yd[4] = { ch->n, ch->o, OH, OW };
    size_t xn = (size_t)(ch->n * ch->c * H * W), an = (size_t)(ch->n * ch->e * H * W);
    size_t bn = (size_t)(ch->n * ch->e * OH * OW), yn = (size_t)(ch->n * ch->o * OH * OW);
    size_t w1n = (size_t)(ch->e * ch->c), w2n = (size_t)(ch->e * gw * k * k), w3n = (size_t)(ch->o * ch->e);
    float *x = malloc(xn * sizeof(float)), *w1 = malloc(w1n * sizeof(float)), *w2 = malloc(w2n * sizeof(float));
    float *w3 = malloc(w3n * sizeof(float)), *b1 = malloc((size_t)ch->e * sizeof(float));
    float *b2 = malloc((size_t)ch->e * sizeof(float)), *b3 = malloc((size_t)ch->o * sizeof(float));
    float *a = malloc(an * sizeof(float)), *bv = malloc(bn * sizeof(float)), *want = malloc(yn * sizeof(float));
    float *res = malloc(yn * sizeof(float));
    rt_fill(x, xn, 21);
    rt_fill(w1, w1n, 22);
    rt_fill(w2, w2n, 23);
    rt_fill(w3, w3n, 24);
    rt_fill(b1, (size_t)ch->e, 25);
    rt_fill(b2, (size_t)ch->e, 26);
    rt_fill(b3, (size_t)ch->o, 27);
    rt_fill(res, yn, 28);
    conv_ref(&c1, x, w1, b1, a);
    chain_ref_act(ch->act, a, an);
    conv_ref(&c2, a, w2, b2, bv);
    chain_ref_act(ch->act, bv, bn);
    conv_ref(&c3, bv, w3, b3, want);
    double big = 0;
    for (size_t i = 0; i < yn; i++) {
        if (ch->residual)
            want[i] += -res[i];
        big = fmax(big, fabs(want[i]));
    }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, xd);
    if (ch->residual) {
        rt_input(g, "r", GIR_DT_F32, 4, yd);
        rt_node(g, GIR_OP_Neg, "neg", "r", "nr");
    }
    rt_const(g, "w1", GIR_DT_F32, 4, w1d, w1);
    rt_const(g, "w2", GIR_DT_F32, 4, w2d, w2);
    rt_const(g, "w3", GIR_DT_F32, 4, w3d, w3);
    rt_const(g, "b1", GIR_DT_F32, 1, &ch->e, b1);
    rt_const(g, "b2", GIR_DT_F32, 1, &ch->e, b2);
    rt_const(g, "b3", GIR_DT_F32, 1, &ch->o, b3);
    gir_node *n1 = rt_node(g, GIR_OP_Conv, "expand", "x,w1,b1", "y1");
    set_window_attrs(g, n1, &c1, false);
    chain_act(g, ch->act, "y1", "act1", "a1");
    gir_node *n2 = rt_node(g, GIR_OP_Conv, "depthwise", "a1,w2,b2", "y2");
    set_window_attrs(g, n2, &c2, false);
    if (ch->e / gw != 1)
        rt_attr_int(g, n2, "group", ch->e / gw);
    chain_act(g, ch->act, "y2", "act2", "a2");
    gir_node *n3 = rt_node(g, GIR_OP_Conv, "project", "a2,w3,b3", ch->residual ? "y3" : "y");
    set_window_attrs(g, n3, &c3, false);
    if (ch->residual)
        rt_node(g, GIR_OP_Add, "add", "y3,nr", "y");
    rt_output(g, "y");
    if (ch->expose)
        rt_output(g, "a1");
    gir_tensor *in[2] = { rt_tensor_new(GIR_DT_F32, 4, xd, x), rt_tensor_new(GIR_DT_F32, 4, yd, res) };
    size_t n_in = ch->residual ? 2 : 1, n_out = ch->expose ? 2 : 1;
    bool blocks = rt_convpx_available() && rt_dwc_available() && !ch->keep;
    gir_tensor *o[2][2];
    for (int t = 0; t < 2; t++) {
        gir_error err = GIR_ERROR_INIT;
        gir_session *s;
        TU_OK(gir_session_new(g, t + 1, &s, &err), &err);
        gir_session_keep_values(s, ch->keep);
        for (size_t i = 0; i < n_in; i++)
            TU_OK(gir_session_set_input(s, i, in[i], &err), &err);
        TU_OK(gir_session_run(s, &err), &err);
        assert_int_equal(gir_rt_blocked_count(s), blocks ? (ch->expose ? 1 : 2) : 0);
        for (size_t i = 0; i < n_out; i++)
            o[t][i] = gir_tensor_ref(gir_session_output(s, i));
        gir_session_free(s);
    }
    int64_t ad[4] = { ch->n, ch->e, H, W };
    rt_expect_f32(o[0][0], 4, yd, want, 1e-5 * (big + 1));
    if (ch->expose)
        rt_expect_f32(o[0][1], 4, ad, a, 1e-5 * (double)(ch->c + 1));
    for (size_t i = 0; i < n_out; i++) { /* two threads: the same bits */
        const float *p1;
        TU_OK(gir_tensor_load(o[0][i], (const void **)&p1, NULL), NULL);
        rt_expect_f32(o[1][i], 4, i ? ad : yd, p1, 0);
        gir_tensor_unref(o[0][i]);
        gir_tensor_unref(o[1][i]);
    }
    gir_tensor_unref(in[0]);
    gir_tensor_unref(in[1]);
    free(x);
    free(w1);
    free(w2);
    free(w3);
    free(b1);
    free(b2);
    free(b3);
    free(a);
    free(bv);
    free(want);
    free(res);
    gir_graph_free(g);
}

static void test_conv_blocks(void **state)
{
    (void)state;
    static const chainspec specs[] = {
        /* batch 2 over 9x11 (partial tiles), Clip */
        { 2, 8, 32, 24, 9, 11, 3, 1, 1, false, false, false },
        /* 50-wide rows the depthwise plane kernel would take, with a residual */
        { 1, 16, 48, 16, 20, 50, 3, 1, 0, true, false, false },
        /* SiLU, 5x5 stride 2, odd sizes */
        { 1, 24, 64, 40, 15, 13, 5, 2, 2, false, false, false },
        /* 160 channels: blocks of 4, 3 and 3 vectors out of the expansion,
         * and the projection's sums carried over two blocks of taps */
        { 1, 8, 160, 16, 7, 7, 3, 1, 0, false, false, false },
        /* 24 and 58 channels: partial last blocks (batch 2: an image's
         * blocks take whole blocks of room) */
        { 2, 8, 24, 8, 9, 9, 3, 1, 0, false, false, false },
        { 2, 58, 58, 58, 12, 10, 3, 2, 1, true, false, false },
        /* the expansion's result is a graph output too; a session keeping
         * its values */
        { 2, 8, 32, 24, 9, 11, 3, 1, 1, false, true, false },
        { 2, 8, 32, 24, 9, 11, 3, 1, 2, true, false, true },
        /* RegNet's block: groups of 16 channels (each output block reads
         * one input block), stride 2 and 1, from padded phase planes in
         * channel blocks */
        { 2, 16, 48, 24, 14, 13, 3, 2, 0, true, false, false, 16 },
        { 1, 8, 32, 32, 9, 9, 3, 1, 1, false, false, false, 16 },
        /* one group of 24 channels (too few for Winograd): the direct
         * form's pixel kernel over planes in channel blocks, with a
         * partial block */
        { 1, 8, 24, 16, 10, 12, 3, 2, 0, false, false, false, 24 },
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        check_chain(&specs[i]);
}

/* The same chain in one session fed rows of 70000, 40 and 70000 columns:
 * the depthwise kernel by channel blocks takes no rows that wide, so the
 * first plan hands nothing over in blocks (the GEMM packs the pointwise
 * weights), the second does (the pixel kernel replaces the packed
 * weights), and the third reads NCHW again with the pixel kernel's
 * weights; every run matches the reference convolutions. */
static void test_conv_blocks_replan(void **state)
{
    (void)state;
    enum { C = 8, E = 16, O = 8 };
    const int64_t widths[3] = { 70000, 40, 70000 };
    float w1[E * C], w2[E * 9], w3[O * E];
    rt_fill(w1, E * C, 41);
    rt_fill(w2, E * 9, 42);
    rt_fill(w3, O * E, 43);
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, C, 1, -1));
    rt_const(g, "w1", GIR_DT_F32, 4, DIMS(E, C, 1, 1), w1);
    rt_const(g, "w2", GIR_DT_F32, 4, DIMS(E, 1, 3, 3), w2);
    rt_const(g, "w3", GIR_DT_F32, 4, DIMS(O, E, 1, 1), w3);
    rt_node(g, GIR_OP_Conv, "expand", "x,w1", "y1");
    rt_node(g, GIR_OP_Relu, "act1", "y1", "a1");
    gir_node *dw = rt_node(g, GIR_OP_Conv, "depthwise", "a1,w2", "y2");
    rt_attr_int(g, dw, "group", E);
    rt_attr_ints(g, dw, "pads", DIMS(1, 1, 1, 1), 4);
    rt_node(g, GIR_OP_Conv, "project", "y2,w3", "y");
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, 2, &s, &err), &err);
    bool blocks = rt_convpx_available() && rt_dwc_available();
    for (int r = 0; r < 3; r++) {
        int64_t W = widths[r];
        convspec c1 = { 2, 1, C, E, 1, { 1, W }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, false, NULL };
        convspec c2 = { 2, 1, E, E, E, { 1, W }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, false, NULL };
        convspec c3 = { 2, 1, E, O, 1, { 1, W }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, false, NULL };
        size_t n = (size_t)W;
        float *x = malloc(C * n * sizeof(float)), *a = malloc(E * n * sizeof(float));
        float *b = malloc(E * n * sizeof(float)), *want = malloc(O * n * sizeof(float));
        rt_fill(x, C * n, 44 + (uint64_t)r);
        conv_ref(&c1, x, w1, NULL, a);
        chain_ref_act(0, a, E * n);
        conv_ref(&c2, a, w2, NULL, b);
        conv_ref(&c3, b, w3, NULL, want);
        gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, C, 1, W), x);
        TU_OK(gir_session_set_input(s, 0, in, &err), &err);
        TU_OK(gir_session_run(s, &err), &err);
        assert_int_equal(gir_rt_blocked_count(s), blocks && r == 1 ? 2 : 0);
        rt_expect_f32(gir_session_output(s, 0), 4, DIMS(1, O, 1, W), want, 1e-4);
        gir_tensor_unref(in);
        free(x);
        free(a);
        free(b);
        free(want);
    }
    gir_session_free(s);
    gir_graph_free(g);
}

/* A stem as ResNet and SqueezeNet have: Conv (c -> m, k x k, stride 2) +
 * Relu, then MaxPool 3x3 stride 2 (pads p, ceil_mode), then a pointwise
 * Conv (m -> o) or nothing.  On AVX-512 the stem's result goes to the
 * MaxPool in channel blocks, and the MaxPool's to the pointwise Conv. */
static void check_stem_pool(int64_t n, int64_t c, int64_t m, int64_t o, int64_t H, int64_t k, int64_t p, bool ceil,
                            bool pw)
{
    convspec c1 = { 2, n, c, m, 1, { H, H }, { k, k }, { 2, 2 }, { 1, 1 }, { k / 2, k / 2 }, { k / 2, k / 2 }, true,
                    NULL };
    int64_t S = conv_out(&c1, 0);
    int64_t P = ceil ? (S + 2 * p - 3 + 1) / 2 + 1 : (S + 2 * p - 3) / 2 + 1;
    if (ceil && (P - 1) * 2 >= S + p) /* the last window must start inside the input or its leading pad */
        P--;
    convspec c2 = { 2, n, m, o, 1, { P, P }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, false, NULL };
    int64_t xd[4] = { n, c, H, H }, w1d[4] = { m, c, k, k }, w2d[4] = { o, m, 1, 1 };
    int64_t yd[4] = { n, pw ? o : m, P, P };
    size_t xn = (size_t)(n * c * H * H), sn = (size_t)(n * m * S * S), pn = (size_t)(n * m * P * P);
    size_t w1n = (size_t)(m * c * k * k), w2n = (size_t)(o * m), yn = (size_t)(n * yd[1] * P * P);
    float *x = malloc(xn * sizeof(float)), *w1 = malloc(w1n * sizeof(float)), *b1 = malloc((size_t)m * sizeof(float));
    float *w2 = malloc(w2n * sizeof(float)), *st = malloc(sn * sizeof(float)), *pool = malloc(pn * sizeof(float));
    float *want = malloc(yn * sizeof(float));
    rt_fill(x, xn, 31);
    rt_fill(w1, w1n, 32);
    rt_fill(b1, (size_t)m, 33);
    rt_fill(w2, w2n, 34);
    conv_ref(&c1, x, w1, b1, st);
    for (size_t i = 0; i < sn; i++)
        st[i] = st[i] < 0 ? 0 : st[i];
    for (int64_t pl = 0; pl < n * m; pl++)
        for (int64_t oh = 0; oh < P; oh++)
            for (int64_t ow = 0; ow < P; ow++) {
                float best = -INFINITY;
                for (int64_t kh = 0; kh < 3; kh++)
                    for (int64_t kw = 0; kw < 3; kw++) {
                        int64_t ih = oh * 2 - p + kh, iw = ow * 2 - p + kw;
                        if (ih >= 0 && ih < S && iw >= 0 && iw < S && st[(pl * S + ih) * S + iw] > best)
                            best = st[(pl * S + ih) * S + iw];
                    }
                pool[(pl * P + oh) * P + ow] = best;
            }
    if (pw)
        conv_ref(&c2, pool, w2, NULL, want);
    else
        memcpy(want, pool, yn * sizeof(float));
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, xd);
    rt_const(g, "w1", GIR_DT_F32, 4, w1d, w1);
    rt_const(g, "b1", GIR_DT_F32, 1, &m, b1);
    rt_const(g, "w2", GIR_DT_F32, 4, w2d, w2);
    gir_node *n1 = rt_node(g, GIR_OP_Conv, "stem", "x,w1,b1", "s");
    set_window_attrs(g, n1, &c1, false);
    rt_node(g, GIR_OP_Relu, "relu", "s", "r");
    gir_node *mp = rt_node(g, GIR_OP_MaxPool, "pool", "r", pw ? "q" : "y");
    int64_t k3[2] = { 3, 3 }, s2[2] = { 2, 2 }, pads[4] = { p, p, p, p };
    rt_attr_ints(g, mp, "kernel_shape", k3, 2);
    rt_attr_ints(g, mp, "strides", s2, 2);
    rt_attr_ints(g, mp, "pads", pads, 4);
    if (ceil)
        rt_attr_int(g, mp, "ceil_mode", 1);
    if (pw) {
        gir_node *n2 = rt_node(g, GIR_OP_Conv, "pw", "q,w2", "y");
        set_window_attrs(g, n2, &c2, false);
    }
    rt_output(g, "y");
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, xd, x), *out[2];
    bool blocks = rt_convpx_available() && rt_dwc_available();
    for (int t = 0; t < 2; t++) {
        gir_error err = GIR_ERROR_INIT;
        gir_session *ss;
        TU_OK(gir_session_new(g, t + 1, &ss, &err), &err);
        TU_OK(gir_session_set_input(ss, 0, in, &err), &err);
        TU_OK(gir_session_run(ss, &err), &err);
        assert_int_equal(gir_rt_blocked_count(ss), blocks ? (pw ? 2 : 1) : 0);
        out[t] = gir_tensor_ref(gir_session_output(ss, 0));
        gir_session_free(ss);
    }
    rt_expect_f32(out[0], 4, yd, want, 1e-5 * (double)(c * k * k + m));
    const float *p1; /* two threads: the same bits */
    TU_OK(gir_tensor_load(out[0], (const void **)&p1, NULL), NULL);
    rt_expect_f32(out[1], 4, yd, p1, 0);
    gir_tensor_unref(out[0]);
    gir_tensor_unref(out[1]);
    gir_tensor_unref(in);
    free(x);
    free(w1);
    free(b1);
    free(w2);
    free(st);
    free(pool);
    free(want);
    gir_graph_free(g);
}

static void test_pool_blocks(void **state)
{
    (void)state;
    check_stem_pool(2, 3, 24, 0, 29, 7, 1, false, false); /* ResNet's: into NCHW, a partial block */
    check_stem_pool(1, 3, 40, 16, 31, 7, 0, true, true);  /* SqueezeNet's (ceil_mode), into a pointwise Conv */
    check_stem_pool(1, 3, 32, 8, 20, 3, 1, false, true);
}

/* Conv followed by Sigmoid and Mul (SiLU) or HardSigmoid and Mul
 * (HardSwish), the Mul's operands in either order, on the GEMM path, the
 * depthwise path and Winograd: both nodes run inside the convolution, and the
 * values are the reference convolution's through the activation. */
static void check_gated(int64_t c, int64_t m, int64_t group, int64_t k, bool hard, bool swap, int64_t H, int64_t W)
{
    convspec cs = { 2, 1, c, m, group, { H, W }, { k, k }, { 1, 1 }, { 1, 1 }, { k / 2, k / 2 }, { k / 2, k / 2 }, true,
                    NULL };
    int64_t xd[4] = { 1, c, H, W }, wd[4] = { m, c / group, k, k }, yd[4] = { 1, m, conv_out(&cs, 0), conv_out(&cs, 1) };
    size_t xn = (size_t)(c * H * W), wn = (size_t)(m * (c / group) * k * k), yn = (size_t)(m * yd[2] * yd[3]);
    float *x = malloc(xn * sizeof(float)), *w = malloc(wn * sizeof(float)), *b = malloc((size_t)m * sizeof(float));
    float *want = malloc(yn * sizeof(float));
    rt_fill(x, xn, 11);
    rt_fill(w, wn, 12);
    rt_fill(b, (size_t)m, 13);
    for (size_t i = 0; i < wn; i++)
        w[i] *= 3.0f; /* results spread over the activations' curved parts */
    conv_ref(&cs, x, w, b, want);
    for (size_t i = 0; i < yn; i++) {
        double v = want[i];
        want[i] = (float)(hard ? v * fmin(1.0, fmax(0.0, v / 6.0 + 0.5)) : v / (1.0 + exp(-v)));
    }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, xd);
    rt_const(g, "w", GIR_DT_F32, 4, wd, w);
    rt_const(g, "b", GIR_DT_F32, 1, &m, b);
    gir_node *nd = rt_node(g, GIR_OP_Conv, "conv", "x,w,b", "y");
    set_window_attrs(g, nd, &cs, false);
    if (group != 1)
        rt_attr_int(g, nd, "group", group);
    gir_node *gate = rt_node(g, hard ? GIR_OP_HardSigmoid : GIR_OP_Sigmoid, "gate", "y", "s");
    if (hard)
        rt_attr_float(g, gate, "alpha", 1.0 / 6.0);
    rt_node(g, GIR_OP_Mul, "mul", swap ? "s,y" : "y,s", "z");
    rt_output(g, "z");
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, xd, x);
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    TU_OK(gir_session_set_input(s, 0, in, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_rt_fused_count(s), 2);
    gir_session_free(s);
    gir_tensor *o1, *o2;
    rt_run(g, 1, &in, 1, &o1, 1);
    rt_run(g, 2, &in, 1, &o2, 1);
    rt_expect_f32(o1, 4, yd, want, 2e-5 * (double)(wn / (size_t)m + 1));
    const void *p1, *p2;
    TU_OK(gir_tensor_load(o1, &p1, NULL), NULL);
    TU_OK(gir_tensor_load(o2, &p2, NULL), NULL);
    assert_memory_equal(p1, p2, yn * sizeof(float));
    gir_tensor_unref(o1);
    gir_tensor_unref(o2);
    gir_tensor_unref(in);
    free(x);
    free(w);
    free(b);
    free(want);
    gir_graph_free(g);
}

static void test_fused_gated(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        bool hard = v & 1, swap = v & 2;
        check_gated(5, 7, 1, 3, hard, swap, 12, 11);    /* im2col + GEMM (AVX-512: the direct form) */
        check_gated(24, 20, 1, 3, hard, swap, 7, 6);    /* the pixel kernel (AVX-512) */
        check_gated(8, 12, 1, 1, hard, swap, 12, 11);   /* pointwise */
        check_gated(8, 256, 1, 1, hard, swap, 40, 37);  /* pointwise by column blocks */
        check_gated(256, 20, 1, 1, hard, swap, 7, 6);   /* pointwise, the pixel kernel (AVX-512) */
        check_gated(8, 40, 1, 1, hard, swap, 1, 1);     /* a 1x1 map (squeeze-excitation): one run */
        check_gated(6, 6, 6, 3, hard, swap, 12, 11);    /* depthwise */
        check_gated(32, 16, 1, 3, hard, swap, 12, 11);  /* Winograd */
    }
    /* a Sigmoid alone after a Conv runs in it too */
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 2, 3, 3));
    float w[2 * 2];
    rt_fill(w, 4, 21);
    rt_const(g, "w", GIR_DT_F32, 4, DIMS(2, 2, 1, 1), w);
    rt_node(g, GIR_OP_Conv, "conv", "x,w", "y");
    rt_node(g, GIR_OP_Sigmoid, "sig", "y", "z");
    rt_output(g, "z");
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    float x[18];
    rt_fill(x, 18, 22);
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 3, 3), x);
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    TU_OK(gir_session_set_input(s, 0, in, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_rt_fused_count(s), 1);
    const void *p;
    TU_OK(gir_tensor_load(gir_session_output(s, 0), &p, &err), &err);
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < 9; i++) {
            double v = (double)w[o * 2] * x[i] + (double)w[o * 2 + 1] * x[9 + i];
            assert_float_equal(((const float *)p)[o * 9 + i], 1.0 / (1.0 + exp(-v)), 2e-7);
        }
    gir_session_free(s);
    gir_tensor_unref(in);
    gir_graph_free(g);
}

/* PyTorch's GELU of value x into "y": Div by sqrt 2, Erf, Add 1, Mul by x,
 * Mul by 0.5 (the constants first or second in their nodes). */
static void gelu_chain(gir_graph *g, const char *x, bool consts_first)
{
    char ins[64];
    rt_const(g, "sqrt2", GIR_DT_F32, 0, NULL, F32S(1.41421353816986083984375f));
    rt_const(g, "one", GIR_DT_F32, 0, NULL, F32S(1.0f));
    rt_const(g, "half", GIR_DT_F32, 0, NULL, F32S(0.5f));
    snprintf(ins, sizeof ins, "%s,sqrt2", x);
    rt_node(g, GIR_OP_Div, "div", ins, "d");
    rt_node(g, GIR_OP_Erf, "erf", "d", "e");
    rt_node(g, GIR_OP_Add, "add1", consts_first ? "one,e" : "e,one", "p");
    snprintf(ins, sizeof ins, "%s,p", x);
    rt_node(g, GIR_OP_Mul, "mul", ins, "q");
    rt_node(g, GIR_OP_Mul, "mulhalf", consts_first ? "half,q" : "q,half", "y");
}

/* An elementwise Add takes a following activation: PyTorch's GELU chain
 * (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5: five nodes) and Relu;
 * an integer Add keeps its Relu apart (activations are float kernels). */
/* BatchNormalization followed by Relu or Clip: the activation runs in the
 * BatchNormalization's pass (one node fused), out of place (the graph's
 * input) and in place (an intermediate the executor reuses), on planes of
 * an odd size; the values are the formula's through the activation. */
static void test_fused_batchnorm(void **state)
{
    (void)state;
    enum { N = 2, C = 3, H = 5, W = 7, NX = N * C * H * W };
    float x[NX], want[NX];
    const float scale[C] = { 1.5f, -0.75f, 0.5f }, bias[C] = { 0.1f, -0.2f, 0.05f };
    const float mean[C] = { 0.3f, 0.6f, -0.1f }, var[C] = { 0.5f, 2.0f, 0.25f };
    rt_fill(x, NX, 51);
    for (int clip = 0; clip < 2; clip++)
        for (int inplace = 0; inplace < 2; inplace++) {
            float lo = clip ? -0.2f : 0.0f, hi = clip ? 0.3f : INFINITY;
            for (int i = 0; i < NX; i++) {
                int c = i / (H * W) % C;
                double xv = inplace ? -(double)x[i] : (double)x[i];
                double v = (xv - mean[c]) / sqrt((double)var[c] + 1e-5) * scale[c] + bias[c];
                want[i] = (float)(v < lo ? lo : (v > hi ? hi : v));
            }
            gir_graph *g = rt_graph();
            rt_input(g, "x", GIR_DT_F32, 4, DIMS(N, C, H, W));
            rt_const(g, "s", GIR_DT_F32, 1, DIMS(C), scale);
            rt_const(g, "b", GIR_DT_F32, 1, DIMS(C), bias);
            rt_const(g, "m", GIR_DT_F32, 1, DIMS(C), mean);
            rt_const(g, "v", GIR_DT_F32, 1, DIMS(C), var);
            if (inplace)
                rt_node(g, GIR_OP_Neg, "neg", "x", "xn");
            rt_node(g, GIR_OP_BatchNormalization, "bn", inplace ? "xn,s,b,m,v" : "x,s,b,m,v", "t");
            gir_node *a = rt_node(g, clip ? GIR_OP_Clip : GIR_OP_Relu, "act", "t", "y");
            if (clip) {
                rt_attr_float(g, a, "min", lo);
                rt_attr_float(g, a, "max", hi);
            }
            rt_output(g, "y");
            gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, DIMS(N, C, H, W), x);
            gir_error err = GIR_ERROR_INIT;
            gir_session *s;
            TU_OK(gir_session_new(g, 1, &s, &err), &err);
            TU_OK(gir_session_set_input(s, 0, in, &err), &err);
            TU_OK(gir_session_run(s, &err), &err);
            assert_int_equal(gir_rt_fused_count(s), 1);
            rt_expect_f32(gir_session_output(s, 0), 4, DIMS(N, C, H, W), want, 1e-6);
            gir_session_free(s);
            gir_graph_free(g);
            gir_tensor_unref(in);
        }
}

static void test_fused_elementwise(void **state)
{
    (void)state;
    enum { N = 1000 };
    float a[N], b[N], want[N];
    rt_fill(a, N, 41);
    rt_fill(b, N, 42);
    for (int i = 0; i < N; i++) {
        a[i] *= 4.0f;
        double v = (double)(a[i] + b[i]);
        want[i] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
    }
    gir_graph *g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(10, 100));
    rt_input(g, "b", GIR_DT_F32, 2, DIMS(10, 100));
    rt_node(g, GIR_OP_Add, "add", "a,b", "x");
    gelu_chain(g, "x", true);
    rt_output(g, "y");
    gir_tensor *in[2] = { rt_tensor_new(GIR_DT_F32, 2, DIMS(10, 100), a), rt_tensor_new(GIR_DT_F32, 2, DIMS(10, 100), b) };
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    TU_OK(gir_session_set_input(s, 0, in[0], &err), &err);
    TU_OK(gir_session_set_input(s, 1, in[1], &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_rt_fused_count(s), 5);
    rt_expect_f32(gir_session_output(s, 0), 2, DIMS(10, 100), want, 1e-6);
    gir_session_free(s);
    gir_graph_free(g);
    gir_tensor_unref(in[0]);
    gir_tensor_unref(in[1]);

    for (int ints = 0; ints < 2; ints++) {
        g = rt_graph();
        gir_dtype dt = ints ? GIR_DT_I64 : GIR_DT_F32;
        rt_input(g, "a", dt, 1, DIMS(4));
        rt_input(g, "b", dt, 1, DIMS(4));
        rt_node(g, GIR_OP_Add, "add", "a,b", "x");
        rt_node(g, GIR_OP_Relu, "relu", "x", "y");
        rt_output(g, "y");
        gir_tensor *ta = ints ? rt_tensor_new(dt, 1, DIMS(4), I64S(-5, 2, 3, -1))
                              : rt_tensor_new(dt, 1, DIMS(4), F32S(-5, 2, 3, -1));
        gir_tensor *tb = ints ? rt_tensor_new(dt, 1, DIMS(4), I64S(1, 1, -7, 4))
                              : rt_tensor_new(dt, 1, DIMS(4), F32S(1, 1, -7, 4));
        TU_OK(gir_session_new(g, 1, &s, &err), &err);
        TU_OK(gir_session_set_input(s, 0, ta, &err), &err);
        TU_OK(gir_session_set_input(s, 1, tb, &err), &err);
        TU_OK(gir_session_run(s, &err), &err);
        assert_int_equal(gir_rt_fused_count(s), ints ? 0 : 1);
        if (ints)
            rt_expect_i64(gir_session_output(s, 0), 1, DIMS(4), I64S(0, 3, 0, 3));
        else
            rt_expect_f32(gir_session_output(s, 0), 1, DIMS(4), F32S(0, 3, 0, 3), 0);
        gir_session_free(s);
        gir_tensor_unref(ta);
        gir_tensor_unref(tb);
        gir_graph_free(g);
    }
}

/* A Linear layer as ONNX exports it: the weight transposed in the graph (a
 * constant Transpose, folded while planning: not run), MatMul, the bias
 * Add and GELU fused into the MatMul; B as a vector takes a bias along M;
 * a bias that does not span the last axis stays a separate Add. */
static void test_matmul_bias_folded(void **state)
{
    (void)state;
    enum { B0 = 2, R = 15, K = 8, N = 6 };
    float x[B0 * R * K], w[N * K], bias[N], want[B0 * R * N];
    rt_fill(x, B0 * R * K, 71);
    rt_fill(w, N * K, 72);
    rt_fill(bias, N, 73);
    for (int r = 0; r < B0 * R; r++)
        for (int j = 0; j < N; j++) {
            double v = bias[j];
            for (int k = 0; k < K; k++)
                v += (double)x[r * K + k] * w[j * K + k];
            want[r * N + j] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
        }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(B0, R, K));
    rt_const(g, "w", GIR_DT_F32, 2, DIMS(N, K), w);
    rt_const(g, "bias", GIR_DT_F32, 1, DIMS(N), bias);
    gir_node *t = rt_node(g, GIR_OP_Transpose, "wt", "w", "wT");
    RT_INTS(g, t, "perm", 1, 0);
    rt_node(g, GIR_OP_MatMul, "mm", "x,wT", "m");
    rt_node(g, GIR_OP_Add, "add", "bias,m", "z");
    gelu_chain(g, "z", false);
    rt_output(g, "y");
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 3, DIMS(B0, R, K), x);
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    for (int threads = 1; threads <= 2; threads++) {
        TU_OK(gir_session_new(g, threads, &s, &err), &err);
        TU_OK(gir_session_set_input(s, 0, in, &err), &err);
        TU_OK(gir_session_run(s, &err), &err);
        assert_int_equal(gir_rt_fused_count(s), 6);
        assert_int_equal(gir_session_profile_count(s), 1); /* the MatMul alone runs */
        rt_expect_f32(gir_session_output(s, 0), 3, DIMS(B0, R, N), want, 2e-6);
        TU_OK(gir_session_run(s, &err), &err); /* again, from the folded weight */
        rt_expect_f32(gir_session_output(s, 0), 3, DIMS(B0, R, N), want, 2e-6);
        gir_session_free(s);
    }
    gir_graph_free(g);
    gir_tensor_unref(in);

    /* B a vector: the result is [R]; a bias of R along it, then Relu */
    float v[K], bm[R], wantv[R];
    rt_fill(v, K, 74);
    rt_fill(bm, R, 75);
    for (int r = 0; r < R; r++) {
        double acc = bm[r];
        for (int k = 0; k < K; k++)
            acc += (double)x[r * K + k] * v[k];
        wantv[r] = acc > 0 ? (float)acc : 0.0f;
    }
    for (int scalar = 0; scalar < 2; scalar++) {
        g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 2, DIMS(R, K));
        rt_const(g, "v", GIR_DT_F32, 1, DIMS(K), v);
        /* a one-element bias broadcasts over the whole result: not a fused bias */
        rt_const(g, "b", GIR_DT_F32, 1, DIMS(scalar ? 1 : R), bm);
        rt_node(g, GIR_OP_MatMul, "mm", "x,v", "m");
        rt_node(g, GIR_OP_Add, "add", "m,b", "z");
        rt_node(g, GIR_OP_Relu, "relu", "z", "y");
        rt_output(g, "y");
        in = rt_tensor_new(GIR_DT_F32, 2, DIMS(R, K), x);
        TU_OK(gir_session_new(g, 1, &s, &err), &err);
        TU_OK(gir_session_set_input(s, 0, in, &err), &err);
        TU_OK(gir_session_run(s, &err), &err);
        if (scalar) {
            /* the Add computes it; Relu fuses into the Add */
            float ws[R];
            for (int r = 0; r < R; r++) {
                double acc = bm[0];
                for (int k = 0; k < K; k++)
                    acc += (double)x[r * K + k] * v[k];
                ws[r] = acc > 0 ? (float)acc : 0.0f;
            }
            assert_int_equal(gir_rt_fused_count(s), 1);
            rt_expect_f32(gir_session_output(s, 0), 1, DIMS(R), ws, 2e-6);
        } else {
            assert_int_equal(gir_rt_fused_count(s), 2);
            rt_expect_f32(gir_session_output(s, 0), 1, DIMS(R), wantv, 2e-6);
        }
        gir_session_free(s);
        gir_tensor_unref(in);
        gir_graph_free(g);
    }
}

/* Transposes that move the contiguous axis (the tiled copy), against the
 * index formula: NCHW <-> NHWC and a full reversal, sizes not multiples of
 * the tile. */
static void test_transpose_tiled(void **state)
{
    (void)state;
    /* large enough (43845 elements) for two workers to split the copy */
    const int64_t d[4] = { 3, 5, 37, 79 };
    const int64_t perms[3][4] = { { 0, 2, 3, 1 }, { 0, 3, 1, 2 }, { 3, 2, 1, 0 } };
    size_t n = 3 * 5 * 37 * 79;
    float *x = malloc(n * sizeof(float)), *want = malloc(n * sizeof(float));
    rt_fill(x, n, 61);
    for (int p = 0; p < 3; p++) {
        const int64_t *pm = perms[p];
        int64_t od[4];
        for (int i = 0; i < 4; i++)
            od[i] = d[pm[i]];
        size_t o = 0;
        int64_t idx[4];
        for (idx[0] = 0; idx[0] < od[0]; idx[0]++)
            for (idx[1] = 0; idx[1] < od[1]; idx[1]++)
                for (idx[2] = 0; idx[2] < od[2]; idx[2]++)
                    for (idx[3] = 0; idx[3] < od[3]; idx[3]++) {
                        int64_t src[4];
                        for (int i = 0; i < 4; i++)
                            src[pm[i]] = idx[i];
                        want[o++] = x[((src[0] * d[1] + src[1]) * d[2] + src[2]) * d[3] + src[3]];
                    }
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 4, d);
        gir_node *t = rt_node(g, GIR_OP_Transpose, "t", "x", "y");
        rt_attr_ints(g, t, "perm", pm, 4);
        rt_output(g, "y");
        gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, d, x), *out;
        for (int threads = 1; threads <= 2; threads++) {
            rt_run(g, threads, &in, 1, &out, 1);
            rt_expect_f32(out, 4, od, want, 0);
            gir_tensor_unref(out);
        }
        gir_tensor_unref(in);
        gir_graph_free(g);
    }
    free(x);
    free(want);
}

/* GlobalAveragePool and a ReduceMean over the last axis, large enough for
 * two workers to split (64 planes of 1353, 2112 rows of 41): the same bits as one, within 1e-6 of a double sum. */
static void test_reductions_threads(void **state)
{
    (void)state;
    const int64_t d[4] = { 2, 32, 33, 41 };
    size_t n = 2 * 32 * 33 * 41, planes = 2 * 32, inner = 33 * 41;
    float *x = malloc(n * sizeof(float)), gap[64], *rm = malloc(n / 41 * sizeof(float));
    rt_fill(x, n, 71);
    for (size_t p = 0; p < planes; p++) {
        double acc = 0;
        for (size_t i = 0; i < inner; i++)
            acc += x[p * inner + i];
        gap[p] = (float)(acc / (double)inner);
    }
    for (size_t r = 0; r < n / 41; r++) {
        double acc = 0;
        for (size_t i = 0; i < 41; i++)
            acc += x[r * 41 + i];
        rm[r] = (float)(acc / 41.0);
    }
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, d);
    rt_node(g, GIR_OP_GlobalAveragePool, "gap", "x", "g");
    gir_node *r = rt_node(g, GIR_OP_ReduceMean, "mean", "x", "m");
    rt_attr_ints(g, r, "axes", I64S(-1), 1);
    rt_output(g, "g");
    rt_output(g, "m");
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, d, x), *o1[2], *o2[2];
    rt_run(g, 1, &in, 1, o1, 2);
    rt_run(g, 2, &in, 1, o2, 2);
    rt_expect_f32(o1[0], 4, DIMS(2, 32, 1, 1), gap, 1e-6);
    rt_expect_f32(o1[1], 4, DIMS(2, 32, 33, 1), rm, 1e-6);
    for (int k = 0; k < 2; k++) {
        const void *p1, *p2;
        TU_OK(gir_tensor_load(o1[k], &p1, NULL), NULL);
        TU_OK(gir_tensor_load(o2[k], &p2, NULL), NULL);
        assert_memory_equal(p1, p2, (k ? n / 41 : planes) * sizeof(float));
        gir_tensor_unref(o1[k]);
        gir_tensor_unref(o2[k]);
    }
    gir_tensor_unref(in);
    gir_graph_free(g);
    free(x);
    free(rm);
}

/* The vectorised Sigmoid and Erf against double precision over a sweep
 * (and the special values): Sigmoid within 3 ulp of its result, Erf within
 * 2.5e-7 absolute; NaN stays NaN, the infinities give the limits. */
static void test_vector_math(void **state)
{
    (void)state;
    enum { N = 20011 };
    float *x = malloc(N * sizeof(float));
    for (int i = 0; i < N - 5; i++)
        x[i] = -100.0f + 200.0f * (float)i / (float)(N - 6);
    x[N - 5] = NAN;
    x[N - 4] = INFINITY;
    x[N - 3] = -INFINITY;
    x[N - 2] = 0.0f;
    x[N - 1] = 1e-30f;
    for (int op = 0; op < 2; op++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 1, DIMS(N));
        rt_node(g, op ? GIR_OP_Erf : GIR_OP_Sigmoid, "f", "x", "y");
        rt_output(g, "y");
        gir_tensor *in = rt_tensor_new(GIR_DT_F32, 1, DIMS(N), x), *out;
        rt_run(g, 1, &in, 1, &out, 1);
        const void *p;
        TU_OK(gir_tensor_load(out, &p, NULL), NULL);
        const float *y = p;
        for (int i = 0; i < N; i++) {
            double v = x[i], want = op ? erf(v) : 1.0 / (1.0 + exp(-v));
            if (isnan(v)) {
                assert_true(isnan(y[i]));
                continue;
            }
            float wf = (float)want;
            double ulp = (double)nextafterf(wf, INFINITY) - (double)wf;
            double tol = op ? 2.5e-7 : fmax(3.0 * ulp, (double)FLT_MIN); /* below FLT_MIN: 0 */
            if (fabs(y[i] - want) > tol)
                fail_msg("%s(%.9g) = %.9g, want %.9g", op ? "Erf" : "Sigmoid", v, (double)y[i], want);
        }
        gir_tensor_unref(out);
        gir_tensor_unref(in);
        gir_graph_free(g);
    }
    free(x);
}

/* Each activation the kernels fuse, computed by the code of every ISA
 * this CPU runs (rt_act_map_isa) against double precision: a sweep, the
 * special values and the edges of the range reductions, in pieces of 1 to
 * 37 floats so every vector tail is taken.  Sigmoid within 3 ulp, SiLU 4,
 * Erf 2.5e-7, GELU 2.5e-7 |x|, HardSwish eps |x| (its float alpha x + beta),
 * the clamp exact; NaN in
 * gives NaN out, the infinities give their limits (NaN for -inf x 0). */
static double act_ref(int kind, double v)
{
    switch (kind) {
    case RT_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case RT_ACT_SILU: return v * (1.0 / (1.0 + exp(-v)));
    case RT_ACT_HSWISH: return v * fmin(fmax(v / 6.0 + 0.5, 0.0), 1.0);
    case RT_ACT_GELU: return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    case RT_ACT_ERF: return erf(v);
    default: return isnan(v) ? v : fmin(fmax(v, -1.5), 6.0);
    }
}

static void test_act_isas(void **state)
{
    (void)state;
    static const float special[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f, FLT_MAX, -FLT_MAX,
                                     1e-40f, -87.33654f, -87.4f, -88.0f, -103.0f, -104.0f, -119.0f, -121.0f,
                                     88.72283f, 88.8f, 0.4999f, 0.5f, 0.5001f, -0.5f, 3.0f, -3.0f, 16.0f, 33.0f,
                                     -6.0f, 6.0f, 1.5f };
    enum { NS = sizeof special / sizeof special[0], N = 20011 + NS };
    static const int kinds[] = { RT_ACT_SIGMOID, RT_ACT_SILU, RT_ACT_HSWISH, RT_ACT_GELU, RT_ACT_ERF, RT_ACT_CLAMP };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
    for (int i = 0; i < N - NS; i++)
        x[i] = -100.0f + 200.0f * (float)i / (float)(N - NS - 1);
    memcpy(x + N - NS, special, sizeof special);
    for (int isa = GIR_GEMM_GENERIC; isa < GIR_GEMM_ISA_COUNT_; isa++) {
        if (!gir_gemm_isa_supported((gir_gemm_isa)isa))
            continue;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            rt_act a = { .on = true, .kind = kinds[k], .lo = -1.5f, .hi = 6.0f, .alpha = 1.0f / 6.0f, .beta = 0.5f };
            for (size_t i = 0, len = 1; i < N; i += len, len = len % 37 + 1)
                rt_act_map_isa(isa, &a, x + i, y + i, i + len <= N ? len : N - i);
            for (int i = 0; i < N; i++) {
                double v = x[i], want = act_ref(a.kind, v), got = y[i];
                if (isnan(want) || isinf(want)) {
                    if (isnan(want) ? !isnan(got) : got != want)
                        fail_msg("%s: kind %d (%.9g) = %.9g, want %.9g", gir_gemm_isa_name((gir_gemm_isa)isa),
                                 a.kind, v, got, want);
                    continue;
                }
                float wf = (float)want;
                double ulp = (double)nextafterf(fabsf(wf), INFINITY) - fabs((double)wf), tol;
                switch (a.kind) {
                case RT_ACT_SIGMOID: tol = fmax(3.0 * ulp, (double)FLT_MIN); break;
                case RT_ACT_SILU: tol = fmax(4.0 * ulp, fabs(v) * FLT_MIN); break;
                case RT_ACT_ERF: tol = 2.5e-7; break;
                case RT_ACT_GELU: tol = fmax(2.5e-7 * fabs(v), 2.0 * ulp); break;
                /* alpha x + beta rounds in float: cancels near x = -3 */
                case RT_ACT_HSWISH: tol = fabs(v) * FLT_EPSILON + 2.0 * ulp; break;
                default: tol = 2.0 * ulp; break;
                }
                if (!(fabs(got - want) <= tol))
                    fail_msg("%s: kind %d (%.9g) = %.9g, want %.9g", gir_gemm_isa_name((gir_gemm_isa)isa), a.kind,
                             v, got, want);
            }
        }
    }
    free(x);
    free(y);
}

static void test_conv_errors(void **state)
{
    (void)state;
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 3, 4, 4));
    float w[2 * 2 * 5 * 5] = { 0 };
    rt_const(g, "w", GIR_DT_F32, 4, DIMS(2, 2, 5, 5), w);
    rt_node(g, GIR_OP_Conv, "c1", "x,w", "y");
    rt_output(g, "y");
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 3, 4, 4), NULL);
    rt_run_fails(g, &x, 1, GIR_E_SHAPE, "node 'c1'", "expects 2 x 1 input channels, input [1,3,4,4] has 3");
    rt_attr_int(g, g->nodes[0], "group", 2);
    rt_run_fails(g, &x, 1, GIR_E_ATTRIBUTE, "group 2 does not divide 3 input and 2 output channels", NULL);
    gir_tensor_unref(x);
    gir_graph_free(g);

    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 2, 4, 4));
    rt_const(g, "w", GIR_DT_F32, 4, DIMS(2, 2, 5, 5), w);
    gir_node *n = rt_node(g, GIR_OP_Conv, "c2", "x,w", "y");
    rt_output(g, "y");
    x = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 4, 4), NULL);
    rt_run_fails(g, &x, 1, GIR_E_SHAPE, "window of 5 (dilated) is larger than the padded input of 4", NULL);
    RT_INTS(g, n, "strides", 1, 0);
    rt_run_fails(g, &x, 1, GIR_E_ATTRIBUTE, "Conv attribute 'strides' has value 0 at position 1, expected 1 or more", NULL);
    RT_INTS(g, n, "strides", 1);
    rt_run_fails(g, &x, 1, GIR_E_ATTRIBUTE, "strides has 1 values, expected 2", NULL);
    gir_attrs_remove(&n->attrs, "strides");
    rt_attr_string(g, n, "auto_pad", "SAME");
    rt_run_fails(g, &x, 1, GIR_E_ATTRIBUTE, "Conv attribute 'auto_pad' is 'SAME', expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", NULL);
    gir_tensor_unref(x);
    gir_graph_free(g);
}

/* The Winograd transforms of every ISA against the generic ones, bit for
 * bit, and the generic ones against a direct convolution: odd output widths
 * (a last tile with one column), odd heights, pads 0 and 1, runs of tiles
 * longer than a vector and passes of few tiles (runs that end inside a tile
 * row), with and without residual accumulation and clamping. */
static void test_winograd_isas(void **state)
{
    (void)state;
    static const size_t shapes[][6] = { /* C, M, H, W, ph, pw */
                                        { 16, 16, 9, 13, 1, 1 }, { 16, 24, 10, 8, 0, 0 }, { 17, 16, 7, 35, 1, 1 },
                                        { 16, 16, 5, 70, 1, 0 }, { 20, 16, 12, 67, 0, 1 },
                                        { 32, 16, 29, 31, 1, 1 }, /* 240 tiles: two workers take 120 each */
                                        { 16, 16, 58, 59, 1, 1 }, /* 225 4x4 tiles: the same with F(4x4) */
                                        { 16, 16, 3, 1100, 1, 1 } }; /* runs longer than ROW_TILES4 */
    gir_threads *th, *th2;
    gir_error err;
    double worst[2] = { 0, 0 };
    assert_int_equal(gir_threads_new(1, &th, &err), GIR_OK);
    assert_int_equal(gir_threads_new(2, &th2, &err), GIR_OK);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int small = 0; small < 2; small++)
            for (int mode = 0; mode < 8; mode++) {
                size_t e = mode & 4 ? 4 : 2;
                size_t C = shapes[si][0], M = shapes[si][1], H = shapes[si][2], W = shapes[si][3];
                size_t ph = shapes[si][4], pw = shapes[si][5], OH = H + 2 * ph - 2, OW = W + 2 * pw - 2;
                float *x = malloc(C * H * W * sizeof(float)), *wt = malloc(M * C * 9 * sizeof(float));
                float *b = malloc(M * sizeof(float)), *y0 = malloc(M * OH * OW * sizeof(float));
                float *y1 = malloc(M * OH * OW * sizeof(float)), *init = malloc(M * OH * OW * sizeof(float));
                rt_fill(x, C * H * W, 41 + si);
                rt_fill(wt, M * C * 9, 42 + si);
                rt_fill(b, M, 43);
                rt_fill(init, M * OH * OW, 44);
                rt_wino *w;
                assert_int_equal(rt_wino_new(wt, M, C, H, W, OH, OW, ph, pw, e, &w, &err), GIR_OK);
                if (small)
                    w->chunk = 7; /* passes end inside tile rows */
                float *scratch = malloc(rt_wino_scratch_floats(w, 2) * sizeof(float));
                bool acc = mode & 1;
                rt_act act = { .on = (mode & 2) != 0, .kind = RT_ACT_CLAMP, .lo = -0.3f, .hi = 0.4f };
                memcpy(y0, init, M * OH * OW * sizeof(float));
                w->isa = GIR_GEMM_GENERIC;
                rt_wino_run(w, x, b, y0, &act, acc, scratch, th);
                /* the generic transforms against the direct sum */
                for (size_t m = 0; m < M; m++)
                    for (size_t oy = 0; oy < OH; oy++)
                        for (size_t ox = 0; ox < OW; ox++) {
                            double s = b[m], mag = fabs(b[m]); /* mag: the sum of the terms' sizes */
                            for (size_t c = 0; c < C; c++)
                                for (size_t i = 0; i < 3; i++)
                                    for (size_t j = 0; j < 3; j++) {
                                        ptrdiff_t r = (ptrdiff_t)(oy + i) - (ptrdiff_t)ph;
                                        ptrdiff_t q = (ptrdiff_t)(ox + j) - (ptrdiff_t)pw;
                                        if (r >= 0 && q >= 0 && (size_t)r < H && (size_t)q < W) {
                                            double t = (double)x[(c * H + (size_t)r) * W + (size_t)q] *
                                                       wt[((m * C + c) * 3 + i) * 3 + j];
                                            s += t;
                                            mag += fabs(t);
                                        }
                                    }
                            size_t o = (m * OH + oy) * OW + ox;
                            if (acc) {
                                s += init[o];
                                mag += fabs(init[o]);
                            }
                            if (act.on)
                                s = s < act.lo ? act.lo : (s > act.hi ? act.hi : s);
                            if (fabs(s - y0[o]) > 1e-5 * mag)
                                fail_msg("shape %zu mode %d: y[%zu] = %.9g, want %.9g (terms' sizes sum to %g)", si, mode,
                                         o, y0[o], s, mag);
                            if (fabs(s - y0[o]) / mag > worst[e == 4])
                                worst[e == 4] = fabs(s - y0[o]) / mag;
                        }
                for (int isa = GIR_GEMM_AVX2; isa < GIR_GEMM_ISA_COUNT_; isa++) {
                    if (!gir_gemm_isa_supported((gir_gemm_isa)isa))
                        continue;
                    memcpy(y1, init, M * OH * OW * sizeof(float));
                    w->isa = isa;
                    rt_wino_run(w, x, b, y1, &act, acc, scratch, th);
                    if (memcmp(y0, y1, M * OH * OW * sizeof(float)) != 0)
                        fail_msg("%s: shape %zu mode %d small %d differs from generic",
                                 gir_gemm_isa_name((gir_gemm_isa)isa), si, mode, small);
                }
                /* two workers (each its own tiles, when there are enough),
                 * bit for bit as one */
                memcpy(y1, init, M * OH * OW * sizeof(float));
                w->isa = GIR_GEMM_GENERIC;
                rt_wino_run(w, x, b, y1, &act, acc, scratch, th2);
                if (memcmp(y0, y1, M * OH * OW * sizeof(float)) != 0)
                    fail_msg("two workers: shape %zu mode %d small %d differs from one", si, mode, small);
                rt_wino_free(w);
                free(scratch);
                free(x);
                free(wt);
                free(b);
                free(y0);
                free(y1);
                free(init);
            }
    gir_threads_free(th);
    gir_threads_free(th2);
    print_message("worst error over the terms' sizes: F(2x2) %.3g, F(4x4) %.3g\n", worst[0], worst[1]);
}

/* The depthwise plane kernel of every ISA against the generic one. */
static void test_depthwise_isas(void **state)
{
    (void)state;
    float x[20 * 23], w[9], y0[20 * 23], y1[20 * 23];
    rt_fill(x, 20 * 23, 5);
    rt_fill(w, 9, 6);
    for (size_t stride = 1; stride <= 3; stride++) {
        size_t oh = (20 + 2 - 3) / stride + 1, ow = (23 + 2 - 3) / stride + 1;
        size_t lo[3], hi[3];
        for (size_t kw = 0; kw < 3; kw++) {
            lo[kw] = kw >= 1 ? 0 : (1 - kw + stride - 1) / stride;
            hi[kw] = (23 - 1 + 1 - kw) / stride + 1;
            if (hi[kw] > ow)
                hi[kw] = ow;
        }
        rt_dwplane a = { 20, 23, oh, ow, 3, 3, stride, stride, 1, 1, 1, 1, lo, hi, false, true, -0.5f, 0.5f };
        rt_dwplane_select(GIR_GEMM_GENERIC)(&a, x, w, 0.25f, y0);
        for (int isa = GIR_GEMM_GENERIC; isa < GIR_GEMM_ISA_COUNT_; isa++) {
            if (!gir_gemm_isa_supported((gir_gemm_isa)isa))
                continue;
            rt_dwplane_select(isa)(&a, x, w, 0.25f, y1);
            for (size_t i = 0; i < oh * ow; i++)
                assert_true(fabsf(y0[i] - y1[i]) <= 1e-6f);
        }
    }
}

/* The padded-plane kernels (AVX2, AVX-512) against the generic plane
 * kernel: strides 1 and 2, windows 3x3, 5x3, 5x5 and 7x7 (the unrolled
 * copies and the general loops), odd and even numbers of rows, widths
 * around the vector sizes, rows laid out as the convolution does and with
 * wide slack, with residual accumulation and clamping; at stride 1 also the
 * kernels that read the unpadded plane (from a buffer of its exact size). */
static void test_depthwise_padded(void **state)
{
    (void)state;
    static const size_t widths[] = { 1, 7, 8, 13, 16, 17, 33 };
    static const size_t wins[][2] = { { 3, 3 }, { 5, 3 }, { 5, 5 }, { 7, 7 } };
    float x[10 * 40], w[49], y0[10 * 40], y1[10 * 40], *pad = malloc(4096 * sizeof(float));
    rt_fill(x, 10 * 40, 31);
    rt_fill(w, 49, 32);
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t s = 1; s <= 2; s++)
            for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++)
                for (int mode = 0; mode < 4; mode++) {
                    size_t H = mode & 2 ? 10 : 9, W = widths[wi], KH = wins[k][0], KW = wins[k][1];
                    size_t ph = KH / 2, pw = KW / 2;
                    size_t OH = (H + 2 * ph - KH) / s + 1, OW = (W + 2 * pw - KW) / s + 1;
                    size_t lo[7], hi[7];
                    for (size_t kw = 0; kw < KW; kw++) {
                        lo[kw] = kw >= pw ? 0 : (pw - kw + s - 1) / s;
                        hi[kw] = W - 1 + pw < kw ? 0 : (W - 1 + pw - kw) / s + 1;
                        if (hi[kw] > OW)
                            hi[kw] = OW;
                        if (lo[kw] > hi[kw])
                            lo[kw] = hi[kw];
                    }
                    bool acc = mode & 1;
                    rt_dwplane a = { H, W, OH, OW, KH, KW, s, s, 1, 1, ph, pw, lo, hi, acc, acc, -0.3f, 0.4f };
                    rt_fill(y0, OH * OW, 33);
                    memcpy(y1, y0, sizeof y1);
                    rt_dwplane_select(GIR_GEMM_GENERIC)(&a, x, w, 0.125f, y0);
                    /* the convolution's tight rows (k_conv.c), or wide ones */
                    size_t tight = s == 2 ? 2 * ((OW + KW / 2 + 7) / 8 * 8) : (OW - 1 + KW + 15) / 16 * 16;
                    rt_dwpad p = { H, W, OH, OW, KH, KW, s, s, ph, pw, (OH - 1) * s + KH,
                                   mode & 2 ? tight : ((OW - 1) * s + KW + 32 + 15) / 16 * 16,
                                   acc, acc, -0.3f, 0.4f, s == 2 };
                    assert_true(rt_dwpad_floats(&p) <= 4096);
                    for (int isa = GIR_GEMM_AVX2; isa < GIR_GEMM_ISA_COUNT_; isa++) {
                        rt_dwpad_fn fn = rt_dwpad_select(isa);
                        if (!gir_gemm_isa_supported((gir_gemm_isa)isa) || !fn)
                            continue;
                        float yk[10 * 40];
                        memcpy(yk, y1, sizeof yk);
                        rt_dwpad_fill(&p, x, pad, 0.0f);
                        fn(&p, pad, w, 0.125f, yk);
                        for (size_t i = 0; i < OH * OW; i++)
                            if (fabsf(yk[i] - y0[i]) > 1e-5f)
                                fail_msg("isa %d W %zu s %zu k %zux%zu mode %d: [%zu] %g vs %g", isa, W, s, KH, KW,
                                         mode, i, (double)yk[i], (double)y0[i]);
                        for (size_t i = OH * OW; i < 10 * 40; i++) /* nothing past the plane */
                            assert_true(memcmp(&yk[i], &y1[i], sizeof(float)) == 0);
                        /* stride 1, 3x3 and 5x5: the kernel reading x itself */
                        rt_dwpad_fn dfn = rt_dwdirect_select(isa, &p);
                        assert_true((dfn != NULL) == (s == 1 && KH == KW && KH <= 5));
                        if (!dfn)
                            continue;
                        float *xe = malloc(H * W * sizeof(float)); /* exact size: ASan sees any stray read */
                        memcpy(xe, x, H * W * sizeof(float));
                        memcpy(yk, y1, sizeof yk);
                        dfn(&p, xe, w, 0.125f, yk);
                        free(xe);
                        for (size_t i = 0; i < OH * OW; i++)
                            if (fabsf(yk[i] - y0[i]) > 1e-5f)
                                fail_msg("direct isa %d W %zu k %zu mode %d: [%zu] %g vs %g", isa, W, KH, mode, i,
                                         (double)yk[i], (double)y0[i]);
                        for (size_t i = OH * OW; i < 10 * 40; i++)
                            assert_true(memcmp(&yk[i], &y1[i], sizeof(float)) == 0);
                    }
                }
    free(pad);
}

/* Max pooling on -inf padded planes (the AVX2 plane kernel, which every
 * ISA from AVX2 on selects: AVX-512 pools by channel blocks where the
 * tiles fit, test_maxpool_windows) against a naive window maximum; a NaN
 * in a window gives NaN. */
static void test_maxpool_padded(void **state)
{
    (void)state;
    static const size_t widths[] = { 1, 7, 8, 13, 16, 17, 33 };
    float x[9 * 40], y[9 * 40], *pad = malloc(4096 * sizeof(float));
    rt_fill(x, 9 * 40, 41);
    x[17] = NAN;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t s = 1; s <= 2; s++)
            for (size_t ceil_extra = 0; ceil_extra < 4; ceil_extra++) {
                size_t H = 9, W = widths[wi], K = 3, ph = ceil_extra / 2, pw = ceil_extra / 2;
                if (W + 2 * pw < K)
                    continue;
                /* odd ceil_extra: one more output row and column whose windows run past the end */
                size_t OH = (H + 2 * ph - K) / s + 1 + (s == 2 ? ceil_extra % 2 : 0),
                       OW = (W + 2 * pw - K) / s + 1 + (s == 2 ? ceil_extra % 2 : 0);
                rt_dwpad p = { H, W, OH, OW, K, K, s, s, ph, pw, (OH - 1) * s + K, ((OW - 1) * s + K + 32 + 15) / 16 * 16,
                               false, false, 0, 0 };
                assert_true(rt_dwpad_floats(&p) <= 4096);
                for (int isa = GIR_GEMM_AVX2; isa < GIR_GEMM_ISA_COUNT_; isa++) {
                    rt_maxpool_fn fn = rt_maxpool_select(isa);
                    if (!gir_gemm_isa_supported((gir_gemm_isa)isa) || !fn)
                        continue;
                    /* the work row is the kernel's own: garbage in it must not matter */
                    for (size_t i = 0; i < 4096; i++)
                        pad[i] = i % 3 ? NAN : 1e30f;
                    fn(&p, x, pad, y);
                    for (size_t oh = 0; oh < OH; oh++)
                        for (size_t ow = 0; ow < OW; ow++) {
                            float m = -INFINITY;
                            bool nan = false;
                            for (size_t kh = 0; kh < K; kh++)
                                for (size_t kw = 0; kw < K; kw++) {
                                    long ih = (long)(oh * s + kh) - (long)ph, iw = (long)(ow * s + kw) - (long)pw;
                                    if (ih < 0 || ih >= (long)H || iw < 0 || iw >= (long)W)
                                        continue;
                                    float v = x[ih * (long)W + iw];
                                    if (v != v)
                                        nan = true;
                                    else if (v > m)
                                        m = v;
                                }
                            float got = y[oh * OW + ow];
                            if (nan ? got == got : got != m)
                                fail_msg("isa %d W %zu s %zu: [%zu,%zu] %g vs %g", isa, W, s, oh, ow, (double)got,
                                         nan ? (double)NAN : (double)m);
                        }
                }
            }
    free(pad);
}

/* One MaxPool (no indices) over [n, c, h, w] against a naive window
 * maximum in row-major order, the first NaN winning: values exactly, and on
 * AVX-512 (channel blocks) every bit, NaN payloads and signed zeros too;
 * two threads give the same bits as one. */
typedef struct mpcase {
    int64_t n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
    bool ceil;
} mpcase;

static void check_maxpool(const mpcase *m)
{
    int64_t eh = (m->kh - 1) * m->dh + 1, ew = (m->kw - 1) * m->dw + 1;
    int64_t sph = m->h + m->pt + m->pb - eh, spw = m->w + m->pl + m->pr - ew;
    int64_t oh = (m->ceil ? (sph + m->sh - 1) / m->sh : sph / m->sh) + 1;
    int64_t ow = (m->ceil ? (spw + m->sw - 1) / m->sw : spw / m->sw) + 1;
    if (m->ceil && (oh - 1) * m->sh >= m->h + m->pt) /* the last window starts inside */
        oh--;
    if (m->ceil && (ow - 1) * m->sw >= m->w + m->pl)
        ow--;
    size_t xn = (size_t)(m->n * m->c * m->h * m->w), yn = (size_t)(m->n * m->c * oh * ow);
    float *x = malloc(xn * sizeof(float)), *want = malloc(yn * sizeof(float));
    rt_fill(x, xn, 77);
    for (size_t i = 0; i < xn; i++) { /* ties of signed zeros, -inf, NaNs of two payloads */
        if (i % 5) /* most values below the zeros, so that windows' maxima are ties of them */
            x[i] = -fabsf(x[i]);
        if (i % 13 == 5 || i % 13 == 6)
            x[i] = i % 13 == 5 ? -0.0f : 0.0f;
        if (i % 31 == 7)
            x[i] = -INFINITY;
        if (i == 40 || i == 41 || i == xn - 3) { /* a few: other tiles take the path without NaNs */
            uint32_t u = i == 41 ? 0xffc00002u : 0x7fc00001u;
            memcpy(&x[i], &u, 4);
        }
    }
    for (int64_t pl = 0; pl < m->n * m->c; pl++)
        for (int64_t r = 0; r < oh; r++)
            for (int64_t q = 0; q < ow; q++) {
                float best = -INFINITY;
                bool nan = false;
                for (int64_t a = 0; a < m->kh; a++)
                    for (int64_t b = 0; b < m->kw; b++) {
                        int64_t ih = r * m->sh - m->pt + a * m->dh, iw = q * m->sw - m->pl + b * m->dw;
                        if (nan || ih < 0 || ih >= m->h || iw < 0 || iw >= m->w)
                            continue;
                        float v = x[(pl * m->h + ih) * m->w + iw];
                        if (v != v || v > best) {
                            best = v;
                            nan = v != v;
                        }
                    }
                want[(pl * oh + r) * ow + q] = best;
            }
    int64_t xd[4] = { m->n, m->c, m->h, m->w }, yd[4] = { m->n, m->c, oh, ow };
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, xd);
    gir_node *mp = rt_node(g, GIR_OP_MaxPool, "mp", "x", "y");
    RT_INTS(g, mp, "kernel_shape", m->kh, m->kw);
    RT_INTS(g, mp, "strides", m->sh, m->sw);
    RT_INTS(g, mp, "pads", m->pt, m->pl, m->pb, m->pr);
    RT_INTS(g, mp, "dilations", m->dh, m->dw);
    if (m->ceil)
        rt_attr_int(g, mp, "ceil_mode", 1);
    rt_output(g, "y");
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 4, xd, x), *out[2];
    rt_run(g, 1, &in, 1, &out[0], 1);
    rt_run(g, 2, &in, 1, &out[1], 1);
    /* 1e-300: equal values (a NaN for a NaN) where the bits may differ */
    rt_expect_f32(out[0], 4, yd, want, rt_dwc_available() ? 0 : 1e-300);
    const float *y;
    TU_OK(gir_tensor_load(out[0], (const void **)&y, NULL), NULL);
    rt_expect_f32(out[1], 4, yd, y, 0);
    gir_tensor_unref(out[0]);
    gir_tensor_unref(out[1]);
    gir_tensor_unref(in);
    free(x);
    free(want);
    gir_graph_free(g);
}

static void test_maxpool_windows(void **state)
{
    (void)state;
    static const mpcase cases[] = {
        { 2, 5, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false },    /* ResNet's, a partial block, two images */
        { 1, 37, 13, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true },    /* GoogLeNet's branch pooling */
        { 1, 21, 27, 27, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true },   /* SqueezeNet's, ceil_mode */
        { 1, 16, 120, 121, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true }, /* many bands: split across two threads */
        { 1, 20, 10, 10, 2, 3, 1, 2, 0, 1, 1, 0, 2, 1, false },  /* uneven pads, dilated rows */
        { 1, 3, 6, 6, 5, 5, 3, 3, 2, 2, 2, 2, 1, 1, true },      /* windows mostly in the padding */
        { 1, 17, 8, 8, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, false },    /* 1x1 at stride 2 */
        { 1, 32, 4, 4, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, false },    /* 2x2 at stride 2 */
        { 1, 8, 5, 40, 2, 2, 1, 1, 0, 0, 1, 1, 1, 1, false },    /* 2x2 at stride 1, trailing pads */
        { 1, 2, 36, 36, 33, 33, 1, 3, 0, 0, 0, 0, 1, 1, false }, /* 1089 taps at column stride 3: the row loops */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_maxpool(&cases[i]);
}

/* ---- ConvTranspose ---------------------------------------------------------- */

static void test_conv_transpose(void **state)
{
    (void)state;
    /* x [1,2,3,3], w [2,3,3,3] (C=2, M=3), stride 2, pads 1, output_padding 1 */
    int64_t C = 2, M = 3, H = 3, W = 3, K = 3, S = 2, P = 1, OP = 1;
    int64_t OH = S * (H - 1) + OP + K - 2 * P, OW = OH;
    float x[2 * 3 * 3], w[2 * 3 * 3 * 3], b[3];
    rt_fill(x, 18, 11);
    rt_fill(w, 54, 12);
    rt_fill(b, 3, 13);
    float *want = calloc((size_t)(M * OH * OW), sizeof(float));
    for (int64_t m = 0; m < M; m++)
        for (int64_t i = 0; i < OH * OW; i++)
            want[m * OH * OW + i] = b[m];
    for (int64_t c = 0; c < C; c++)
        for (int64_t ih = 0; ih < H; ih++)
            for (int64_t iw = 0; iw < W; iw++)
                for (int64_t m = 0; m < M; m++)
                    for (int64_t kh = 0; kh < K; kh++)
                        for (int64_t kw = 0; kw < K; kw++) {
                            int64_t oh = ih * S - P + kh, ow = iw * S - P + kw;
                            if (oh < 0 || oh >= OH || ow < 0 || ow >= OW)
                                continue;
                            want[(m * OH + oh) * OW + ow] +=
                                x[(c * H + ih) * W + iw] * w[((c * M + m) * K + kh) * K + kw];
                        }
    for (int variant = 0; variant < 2; variant++) {
        gir_graph *g = rt_graph();
        rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, C, H, W));
        if (variant == 0)
            rt_const(g, "w", GIR_DT_F32, 4, DIMS(C, M, K, K), w);
        else
            rt_input(g, "w", GIR_DT_F32, 4, DIMS(C, M, K, K)); /* unpacked weights */
        rt_const(g, "b", GIR_DT_F32, 1, DIMS(M), b);
        gir_node *n = rt_node(g, GIR_OP_ConvTranspose, "ct", "x,w,b", "y");
        RT_INTS(g, n, "strides", S, S);
        RT_INTS(g, n, "pads", P, P, P, P);
        RT_INTS(g, n, "output_padding", OP, OP);
        rt_output(g, "y");
        gir_tensor *in[2] = { rt_tensor_new(GIR_DT_F32, 4, DIMS(1, C, H, W), x),
                              rt_tensor_new(GIR_DT_F32, 4, DIMS(C, M, K, K), w) };
        gir_tensor *y;
        rt_run(g, 1, in, variant == 0 ? 1 : 2, &y, 1);
        rt_expect_f32(y, 4, DIMS(1, M, OH, OW), want, 1e-5);
        gir_tensor_unref(y);
        /* output_shape gives the same result with pads derived */
        gir_attrs_remove(&n->attrs, "pads");
        gir_attrs_remove(&n->attrs, "output_padding");
        RT_INTS(g, n, "output_shape", OH, OW);
        rt_run(g, 2, in, variant == 0 ? 1 : 2, &y, 1);
        gir_tensor_unref(y);
        gir_tensor_unref(in[0]);
        gir_tensor_unref(in[1]);
        gir_graph_free(g);
    }
    free(want);
}

/* ---- pooling ------------------------------------------------------------------ */

static void test_pooling(void **state)
{
    (void)state;
    /* 1x1x4x5 input, exact expectations */
    const float xv[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 4, 5), xv);
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 1, 4, 5));
    gir_node *mp = rt_node(g, GIR_OP_MaxPool, "mp", "x", "m,idx");
    RT_INTS(g, mp, "kernel_shape", 2, 2);
    RT_INTS(g, mp, "strides", 2, 2);
    rt_attr_int(g, mp, "ceil_mode", 1);
    gir_node *ap = rt_node(g, GIR_OP_AveragePool, "ap", "x", "a");
    RT_INTS(g, ap, "kernel_shape", 3, 3);
    RT_INTS(g, ap, "pads", 1, 1, 1, 1);
    RT_INTS(g, ap, "strides", 2, 2);
    gir_node *ap2 = rt_node(g, GIR_OP_AveragePool, "ap2", "x", "a2");
    RT_INTS(g, ap2, "kernel_shape", 3, 3);
    RT_INTS(g, ap2, "pads", 1, 1, 1, 1);
    RT_INTS(g, ap2, "strides", 2, 2);
    rt_attr_int(g, ap2, "count_include_pad", 1);
    rt_node(g, GIR_OP_GlobalAveragePool, "gap", "x", "ga");
    rt_node(g, GIR_OP_GlobalMaxPool, "gmp", "x", "gm");
    gir_node *mp3 = rt_node(g, GIR_OP_MaxPool, "mp3", "x", "m3");
    RT_INTS(g, mp3, "kernel_shape", 2, 3);
    RT_INTS(g, mp3, "dilations", 2, 1);
    RT_INTS(g, mp3, "pads", 0, 1, 0, 1);
    rt_output(g, "m");
    rt_output(g, "idx");
    rt_output(g, "a");
    rt_output(g, "a2");
    rt_output(g, "ga");
    rt_output(g, "gm");
    rt_output(g, "m3");
    gir_tensor *o[7];
    rt_run(g, 1, &x, 1, o, 7);
    /* ceil_mode: 2x3 windows, the last column window holds one column */
    rt_expect_f32(o[0], 4, DIMS(1, 1, 2, 3), F32S(7, 9, 10, 17, 19, 20), 0);
    rt_expect_i64(o[1], 4, DIMS(1, 1, 2, 3), I64S(6, 8, 9, 16, 18, 19));
    /* pads excluded: windows of 4, 6, 4 / 6, 9, 6 valid cells */
    rt_expect_f32(o[2], 4, DIMS(1, 1, 2, 3),
                  F32S((1 + 2 + 6 + 7) / 4.0f, (2 + 3 + 4 + 7 + 8 + 9) / 6.0f, (4 + 5 + 9 + 10) / 4.0f,
                       (6 + 7 + 11 + 12 + 16 + 17) / 6.0f, (7 + 8 + 9 + 12 + 13 + 14 + 17 + 18 + 19) / 9.0f,
                       (9 + 10 + 14 + 15 + 19 + 20) / 6.0f),
                  1e-6);
    rt_expect_f32(o[3], 4, DIMS(1, 1, 2, 3),
                  F32S((1 + 2 + 6 + 7) / 9.0f, (2 + 3 + 4 + 7 + 8 + 9) / 9.0f, (4 + 5 + 9 + 10) / 9.0f,
                       (6 + 7 + 11 + 12 + 16 + 17) / 9.0f, (7 + 8 + 9 + 12 + 13 + 14 + 17 + 18 + 19) / 9.0f,
                       (9 + 10 + 14 + 15 + 19 + 20) / 9.0f),
                  1e-6);
    rt_expect_f32(o[4], 4, DIMS(1, 1, 1, 1), F32S(10.5f), 1e-6);
    rt_expect_f32(o[5], 4, DIMS(1, 1, 1, 1), F32S(20), 0);
    /* dilated rows 0,2 and 1,3; width padded by one each side */
    rt_expect_f32(o[6], 4, DIMS(1, 1, 2, 5), F32S(12, 13, 14, 15, 15, 17, 18, 19, 20, 20), 0);
    for (int i = 0; i < 7; i++)
        gir_tensor_unref(o[i]);
    gir_tensor_unref(x);
    gir_graph_free(g);

    /* NaN wins max pooling on both paths (with and without indices) */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 3, DIMS(1, 1, 4));
    gir_node *p1 = rt_node(g, GIR_OP_MaxPool, "p1", "x", "y1");
    RT_INTS(g, p1, "kernel_shape", 2);
    gir_node *p2 = rt_node(g, GIR_OP_MaxPool, "p2", "x", "y2,i2");
    RT_INTS(g, p2, "kernel_shape", 2);
    rt_output(g, "y1");
    rt_output(g, "y2");
    x = rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 1, 4), F32S(1, NAN, 3, 2));
    rt_run(g, 1, &x, 1, o, 2);
    rt_expect_f32(o[0], 3, DIMS(1, 1, 3), F32S(NAN, NAN, 3), 1e-9);
    rt_expect_f32(o[1], 3, DIMS(1, 1, 3), F32S(NAN, NAN, 3), 1e-9);
    gir_tensor_unref(o[0]);
    gir_tensor_unref(o[1]);
    gir_tensor_unref(x);
    gir_graph_free(g);

    /* 2x2 average at stride 2 inside the plane (its own pass); the odd last
     * column is left out */
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 4, DIMS(1, 1, 4, 5));
    gir_node *a22 = rt_node(g, GIR_OP_AveragePool, "a22", "x", "y");
    RT_INTS(g, a22, "kernel_shape", 2, 2);
    RT_INTS(g, a22, "strides", 2, 2);
    rt_output(g, "y");
    x = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 4, 5), xv);
    rt_run(g, 1, &x, 1, o, 1);
    rt_expect_f32(o[0], 4, DIMS(1, 1, 2, 2), F32S(4, 6, 14, 16), 0);
    gir_tensor_unref(o[0]);
    gir_tensor_unref(x);
    gir_graph_free(g);
}

/* ---- Gemm / MatMul ------------------------------------------------------------- */

static void test_gemm_matmul(void **state)
{
    (void)state;
    /* Gemm: A^T (3x2 -> 2x3) B (3x4) alpha 0.5 + beta 2 * C[4] */
    const float a[6] = { 1, 2, 3, 4, 5, 6 };       /* [3,2] */
    const float b[12] = { 1, 0, 2, -1, 0, 1, 1, 1, 2, 2, 0, 1 };
    const float cv[4] = { 1, 2, 3, 4 };
    gir_graph *g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 2, DIMS(3, 2));
    rt_const(g, "b", GIR_DT_F32, 2, DIMS(3, 4), b);
    rt_const(g, "c", GIR_DT_F32, 1, DIMS(4), cv);
    gir_node *n = rt_node(g, GIR_OP_Gemm, "gemm", "a,b,c", "y");
    rt_attr_int(g, n, "transA", 1);
    rt_attr_float(g, n, "alpha", 0.5);
    rt_attr_float(g, n, "beta", 2.0);
    rt_output(g, "y");
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 2, DIMS(3, 2), a);
    gir_tensor *y;
    rt_run(g, 1, &x, 1, &y, 1);
    /* A^T = [[1,3,5],[2,4,6]]; A^T B = [[11,13,5,7],[14,16,8,8]] */
    rt_expect_f32(y, 2, DIMS(2, 4), F32S(7.5f, 10.5f, 8.5f, 11.5f, 9, 12, 10, 12), 0);
    gir_tensor_unref(y);
    /* beta 1 and C of [1,4]: the bias path; with Relu fused */
    n->attrs.items[2].u.f = 1.0;
    rt_node(g, GIR_OP_Relu, "relu", "y", "r");
    g->outputs[0] = gir_graph_value_index(g, "r");
    rt_run(g, 1, &x, 1, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 4), F32S(6.5f, 8.5f, 5.5f, 7.5f, 8, 10, 7, 8), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
    gir_graph_free(g);

    /* batch-1 dense layer (the one-row path) against a reference, transB */
    enum { K = 300, N = 70 };
    float *xa = malloc(K * sizeof(float)), *wb = malloc(N * K * sizeof(float)), *bias = malloc(N * sizeof(float));
    float want[N];
    rt_fill(xa, K, 21);
    rt_fill(wb, N * K, 22);
    rt_fill(bias, N, 23);
    for (int j = 0; j < N; j++) {
        double s = bias[j];
        for (int k = 0; k < K; k++)
            s += (double)xa[k] * wb[j * K + k];
        want[j] = (float)s;
    }
    g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(1, K));
    rt_const(g, "w", GIR_DT_F32, 2, DIMS(N, K), wb);
    rt_const(g, "b", GIR_DT_F32, 1, DIMS(N), bias);
    n = rt_node(g, GIR_OP_Gemm, "fc", "x,w,b", "y");
    rt_attr_int(g, n, "transB", 1);
    rt_output(g, "y");
    x = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, K), xa);
    rt_run(g, 2, &x, 1, &y, 1);
    rt_expect_f32(y, 2, DIMS(1, N), want, 1e-4);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
    gir_graph_free(g);
    free(xa);
    free(wb);
    free(bias);

    /* MatMul with batch broadcasting [2,1,2,3] x [3,3,2] -> [2,3,2,2], and
     * vector promotions */
    float ma[12], mb[18];
    for (int i = 0; i < 12; i++)
        ma[i] = (float)(i - 5);
    for (int i = 0; i < 18; i++)
        mb[i] = (float)((i * 7) % 5 - 2);
    g = rt_graph();
    rt_input(g, "a", GIR_DT_F32, 4, DIMS(2, 1, 2, 3));
    rt_const(g, "b", GIR_DT_F32, 3, DIMS(3, 3, 2), mb);
    rt_const(g, "v", GIR_DT_F32, 1, DIMS(3), F32S(1, 2, 3));
    rt_node(g, GIR_OP_MatMul, "mm", "a,b", "y");
    rt_node(g, GIR_OP_MatMul, "mv", "a,v", "z");
    rt_node(g, GIR_OP_MatMul, "vm", "v,b", "u");
    rt_output(g, "y");
    rt_output(g, "z");
    rt_output(g, "u");
    x = rt_tensor_new(GIR_DT_F32, 4, DIMS(2, 1, 2, 3), ma);
    gir_tensor *o[3];
    rt_run(g, 1, &x, 1, o, 3);
    float wy[24], wz[4], wu[6];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int r = 0; r < 2; r++)
                for (int cc = 0; cc < 2; cc++) {
                    float s = 0;
                    for (int k = 0; k < 3; k++)
                        s += ma[(i * 2 + r) * 3 + k] * mb[(j * 3 + k) * 2 + cc];
                    wy[((i * 3 + j) * 2 + r) * 2 + cc] = s;
                }
    for (int i = 0; i < 4; i++)
        wz[i] = ma[i * 3] * 1 + ma[i * 3 + 1] * 2 + ma[i * 3 + 2] * 3;
    for (int j = 0; j < 3; j++)
        for (int cc = 0; cc < 2; cc++)
            wu[j * 2 + cc] = mb[(j * 3) * 2 + cc] + 2 * mb[(j * 3 + 1) * 2 + cc] + 3 * mb[(j * 3 + 2) * 2 + cc];
    rt_expect_f32(o[0], 4, DIMS(2, 3, 2, 2), wy, 0);
    rt_expect_f32(o[1], 3, DIMS(2, 1, 2), wz, 0);
    rt_expect_f32(o[2], 2, DIMS(3, 2), wu, 0);
    for (int i = 0; i < 3; i++)
        gir_tensor_unref(o[i]);
    gir_tensor_unref(x);
    gir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_and_reuse), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_order_and_replan), cmocka_unit_test(test_memory_plan), cmocka_unit_test(test_concat_in_place),
        cmocka_unit_test(test_packed_weights_dropped), cmocka_unit_test(test_plan_corners),
        cmocka_unit_test(test_conv),            cmocka_unit_test(test_conv_errors),
        cmocka_unit_test(test_fused_gated), cmocka_unit_test(test_conv_blocks), cmocka_unit_test(test_pool_blocks), cmocka_unit_test(test_maxpool_windows),
        cmocka_unit_test(test_conv_blocks_replan), cmocka_unit_test(test_fused_batchnorm),     cmocka_unit_test(test_vector_math), cmocka_unit_test(test_act_isas),
        cmocka_unit_test(test_fused_elementwise), cmocka_unit_test(test_transpose_tiled), cmocka_unit_test(test_reductions_threads),
        cmocka_unit_test(test_matmul_bias_folded),
        cmocka_unit_test(test_depthwise_isas), cmocka_unit_test(test_winograd_isas),  cmocka_unit_test(test_depthwise_padded),
        cmocka_unit_test(test_maxpool_padded),
        cmocka_unit_test(test_conv_transpose),
        cmocka_unit_test(test_pooling),         cmocka_unit_test(test_gemm_matmul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
