/* Robustness of the runtime: every canonical operator, with random operand
 * counts, dtypes, shapes (including empty and rank-0 tensors) and random
 * attributes drawn from its schema, is planned and run.  Any status is
 * acceptable; what is not is a crash, an out-of-bounds access or a leak
 * (the sanitizer build), or a success whose outputs do not have the sizes
 * their shapes say.  Deterministic: a fixed generator. */
#include "rtutil.h"

#include "runtime/rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ULL;
static FILE *devnull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t pick(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1));
}

static const gir_dtype dtypes[] = { GIR_DT_F32, GIR_DT_F32, GIR_DT_F32, GIR_DT_I64, GIR_DT_I32, GIR_DT_BOOL, GIR_DT_U8 };

static void random_shape(gir_shape *s, int rank)
{
    s->rank = rank;
    for (int i = 0; i < rank; i++)
        s->dims[i] = next() % 11 == 0 ? 0 : pick(1, 4);
}

static void random_attr(gir_graph *g, gir_node *n, const gir_attr_schema *a, int rank)
{
    int64_t iv[8];
    double fv[8];
    size_t len = (size_t)pick(0, 2) == 0 ? (size_t)pick(0, 8) : (size_t)(rank > 2 ? rank - 2 : 1);
    switch (a->type) {
    case GIR_ATTR_INT:
    case GIR_ATTR_BOOL:
        rt_attr_int(g, n, a->name, pick(-3, 5));
        break;
    case GIR_ATTR_FLOAT:
        rt_attr_float(g, n, a->name, (double)pick(-20, 20) / 4.0);
        break;
    case GIR_ATTR_STRING:
        if (a->choices && next() % 5 != 0) {
            size_t nc = 0;
            while (a->choices[nc])
                nc++;
            rt_attr_string(g, n, a->name, a->choices[next() % nc]);
        } else {
            rt_attr_string(g, n, a->name, next() % 2 ? "float32" : "bogus");
        }
        break;
    case GIR_ATTR_INTS:
        if (next() % 2)
            len *= 2; /* pads */
        if (len > 8)
            len = 8;
        for (size_t i = 0; i < len; i++)
            iv[i] = pick(-3, 4);
        rt_attr_ints(g, n, a->name, iv, len);
        break;
    case GIR_ATTR_FLOATS:
        for (size_t i = 0; i < len; i++)
            fv[i] = (double)pick(1, 12) / 4.0;
        rt_attr_floats(g, n, a->name, fv, len);
        break;
    default:
        break;
    }
}

static bool one_trial(gir_op op)
{
    const gir_op_info *info = gir_op_get(op);
    gir_graph *g = rt_graph();
    unsigned max_in = info->max_in == GIR_VARIADIC ? info->min_in + 3 : info->max_in;
    unsigned max_out = info->max_out == GIR_VARIADIC ? info->min_out + 3 : info->max_out;
    size_t n_in = (size_t)pick(info->min_in, max_in), n_out = (size_t)pick(info->min_out, max_out);
    int rank = (int)pick(0, 5);
    gir_dtype dt = dtypes[next() % (sizeof dtypes / sizeof dtypes[0])];
    gir_tensor *inputs[8];
    char ins[128] = "", outs[128] = "";
    size_t fed = 0;
    for (size_t i = 0; i < n_in; i++) {
        char name[32];
        snprintf(name, sizeof name, "i%zu", i);
        gir_shape s;
        /* mostly the same shape and type, sometimes not */
        random_shape(&s, next() % 4 == 0 ? (int)pick(0, 5) : rank);
        gir_dtype t = next() % 5 == 0 ? dtypes[next() % (sizeof dtypes / sizeof dtypes[0])] : dt;
        gir_tensor *x = rt_tensor_new(t, s.rank, s.dims, NULL);
        /* small non-zero values (indices in range more often than not) */
        size_t nb = (size_t)gir_tensor_nbytes(x);
        unsigned char *p = x->data;
        for (size_t b = 0; b < nb; b++)
            p[b] = (unsigned char)(next() % 3 == 0 ? next() : 1);
        if (next() % 3 == 0) {
            int32_t v;
            gir_error err = GIR_ERROR_INIT;
            TU_OK(gir_graph_add_const(g, name, x, &v, &err), &err);
            gir_tensor_unref(x);
        } else {
            rt_input(g, name, t, s.rank, s.dims);
            inputs[fed++] = x;
        }
        strcat(ins, i ? "," : "");
        strcat(ins, name);
    }
    for (size_t i = 0; i < n_out; i++) {
        char name[32];
        snprintf(name, sizeof name, "o%zu", i);
        strcat(outs, i ? "," : "");
        strcat(outs, name);
    }
    gir_node *n = rt_node(g, op, "node", ins, outs);
    for (const gir_attr_schema *a = info->attrs; a && a->name; a++)
        if (next() % 3 != 0 && strcmp(a->name, "file") != 0) /* Print would write files */
            random_attr(g, n, a, rank);
    for (size_t i = 0; i < n_out; i++) {
        char name[32];
        snprintf(name, sizeof name, "o%zu", i);
        rt_output(g, name);
    }
    gir_error err = GIR_ERROR_INIT;
    gir_session *s = NULL;
    gir_status st = gir_session_new(g, next() % 2 ? 1 : 2, &s, &err);
    if (st == GIR_OK)
        gir_session_set_print_stream(s, devnull);
    for (size_t i = 0; st == GIR_OK && i < fed; i++)
        st = gir_session_set_input(s, i, inputs[i], &err);
    if (st == GIR_OK)
        st = gir_session_run(s, &err);
    if (st == GIR_OK) {
        for (size_t i = 0; i < gir_session_output_count(s); i++) {
            gir_tensor *y = gir_session_output(s, i);
            uint64_t want;
            TU_OK(gir_tensor_size(gir_tensor_dtype(y), gir_tensor_shape(y), &want, NULL), NULL);
            assert_int_equal(want, gir_tensor_nbytes(y));
        }
    } else {
        /* failures are reported errors with a message */
        assert_true(st < GIR_STATUS_COUNT_);
        assert_non_null(err.message);
    }
    gir_session_free(s);
    gir_error_clear(&err);
    for (size_t i = 0; i < fed; i++)
        gir_tensor_unref(inputs[i]);
    gir_graph_free(g);
    return st == GIR_OK;
}

static void test_fuzz_ops(void **state)
{
    (void)state;
    devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    const char *env = getenv("GIR_FUZZ_TRIALS");
    int trials = env ? atoi(env) : 60;
    size_t ran = 0, total = 0, ops_run = 0;
    for (int op = 1; op < GIR_OP_COUNT_; op++) {
        size_t ok = 0;
        for (int t = 0; t < trials; t++)
            ok += one_trial((gir_op)op);
        ran += ok;
        total += (size_t)trials;
        ops_run += ok > 0;
    }
    fclose(devnull);
    print_message("%zu of %zu random nodes ran; %zu of %d ops ran at least once\n", ran, total, ops_run,
                  GIR_OP_COUNT_ - 1);
    /* the generator reaches the kernels, not only the validation */
    assert_true(ops_run >= (size_t)(GIR_OP_COUNT_ - 1) / 2);
}

/* Random DAGs of same-shaped tensors (elementwise ops, convolutions with
 * fusable Relu/Clip and residual Adds, view chains, several outputs): the
 * planned run (buffer reuse, in place, fusion) matches the plain one of
 * keep mode, and 1 and 2 threads give the same bytes. */
static size_t fused_total;

static void run_outputs(const gir_graph *g, gir_tensor *x, int threads, bool keep, gir_tensor **outs)
{
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, threads, &s, &err), &err);
    gir_session_keep_values(s, keep);
    TU_OK(gir_session_set_input(s, 0, x, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    fused_total += gir_rt_fused_count(s);
    for (size_t i = 0; i < gir_session_output_count(s); i++)
        outs[i] = gir_tensor_ref(gir_session_output(s, i));
    gir_session_free(s);
}

static void test_fuzz_dags(void **state)
{
    (void)state;
    const int64_t dims[4] = { 1, 4, 6, 6 };
    float w[4 * 4 * 9], dw[4 * 9], b[4], xd[144];
    rt_fill(w, sizeof w / sizeof w[0], 61);
    rt_fill(dw, sizeof dw / sizeof dw[0], 62);
    rt_fill(b, 4, 63);
    rt_fill(xd, 144, 64);
    const char *env = getenv("GIR_FUZZ_TRIALS");
    int trials = env ? atoi(env) : 60;
    fused_total = 0;
    for (int trial = 0; trial < trials; trial++) {
        gir_graph *g = rt_graph();
        rt_input(g, "v0", GIR_DT_F32, 4, dims);
        rt_const(g, "w", GIR_DT_F32, 4, DIMS(4, 4, 3, 3), w);
        rt_const(g, "dw", GIR_DT_F32, 4, DIMS(4, 1, 3, 3), dw);
        rt_const(g, "b", GIR_DT_F32, 1, DIMS(4), b);
        int nv = 1, steps = (int)pick(3, 14);
        for (int i = 0; i < steps; i++) {
            char a[16], c[16], out[16], nm[16], mid[16];
            /* operands: mostly recent values */
            snprintf(a, sizeof a, "v%d", nv - 1 - (int)(next() % (uint64_t)(nv < 3 ? nv : 3)));
            snprintf(c, sizeof c, "v%d", (int)(next() % (uint64_t)nv));
            snprintf(out, sizeof out, "v%d", nv);
            snprintf(nm, sizeof nm, "n%d", i);
            char ins[40];
            switch (next() % 9) {
            case 0: rt_node(g, GIR_OP_Relu, nm, a, out); break;
            case 1: rt_node(g, GIR_OP_Neg, nm, a, out); break;
            case 2:
                snprintf(ins, sizeof ins, "%s,%s", a, c);
                rt_node(g, GIR_OP_Add, nm, ins, out);
                break;
            case 3:
                snprintf(ins, sizeof ins, "%s,%s", c, a);
                rt_node(g, GIR_OP_Mul, nm, ins, out);
                break;
            case 4: {
                snprintf(ins, sizeof ins, "%s,w,b", a);
                gir_node *n = rt_node(g, GIR_OP_Conv, nm, ins, out);
                RT_INTS(g, n, "pads", 1, 1, 1, 1);
                break;
            }
            case 5: {
                snprintf(ins, sizeof ins, "%s,dw", a);
                gir_node *n = rt_node(g, GIR_OP_Conv, nm, ins, out);
                RT_INTS(g, n, "pads", 1, 1, 1, 1);
                rt_attr_int(g, n, "group", 4);
                break;
            }
            case 6: {
                gir_node *n = rt_node(g, GIR_OP_Clip, nm, a, out);
                rt_attr_float(g, n, "min", -0.5);
                rt_attr_float(g, n, "max", 0.5);
                break;
            }
            case 7: {
                snprintf(mid, sizeof mid, "r%d", i);
                gir_node *n = rt_node(g, GIR_OP_Reshape, nm, a, mid);
                RT_INTS(g, n, "shape", 1, 4, 36);
                snprintf(nm, sizeof nm, "m%d", i);
                n = rt_node(g, GIR_OP_Reshape, nm, mid, out);
                RT_INTS(g, n, "shape", 1, 4, 6, 6);
                break;
            }
            default: rt_node(g, GIR_OP_Sigmoid, nm, a, out); break;
            }
            nv++;
        }
        /* the last value and a few random others are outputs */
        char last[16];
        snprintf(last, sizeof last, "v%d", nv - 1);
        rt_output(g, last);
        size_t n_out = 1;
        for (int v = 1; v < nv - 1; v++)
            if (next() % 4 == 0) {
                char nm[16];
                snprintf(nm, sizeof nm, "v%d", v);
                rt_output(g, nm);
                n_out++;
            }
        gir_tensor *x = rt_tensor_new(GIR_DT_F32, 4, dims, xd);
        gir_tensor *o1[32], *o2[32], *ok[32];
        run_outputs(g, x, 1, false, o1);
        run_outputs(g, x, 2, false, o2);
        run_outputs(g, x, 1, true, ok);
        for (size_t i = 0; i < n_out; i++) {
            const float *p1, *p2, *pk;
            TU_OK(gir_tensor_load(o1[i], (const void **)&p1, NULL), NULL);
            TU_OK(gir_tensor_load(o2[i], (const void **)&p2, NULL), NULL);
            TU_OK(gir_tensor_load(ok[i], (const void **)&pk, NULL), NULL);
            assert_memory_equal(p1, p2, 144 * sizeof(float));
            for (size_t e = 0; e < 144; e++)
                if (!(fabsf(p1[e] - pk[e]) <= 1e-4f * (1 + fabsf(pk[e]))) && !(p1[e] != p1[e] && pk[e] != pk[e]))
                    fail_msg("trial %d output %zu element %zu: %g planned, %g plain", trial, i, e, (double)p1[e],
                             (double)pk[e]);
            gir_tensor_unref(o1[i]);
            gir_tensor_unref(o2[i]);
            gir_tensor_unref(ok[i]);
        }
        gir_tensor_unref(x);
        gir_graph_free(g);
    }
    print_message("%zu nodes fused over the planned runs\n", fused_total);
    assert_true(fused_total > 0); /* the fusions were exercised */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_ops),
        cmocka_unit_test(test_fuzz_dags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
