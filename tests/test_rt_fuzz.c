/* Robustness of the runtime: every canonical operator, with random operand
 * counts, dtypes, shapes (including empty and rank-0 tensors) and random
 * attributes drawn from its schema, is planned and run.  Any status is
 * acceptable; what is not is a crash, an out-of-bounds access or a leak
 * (the sanitizer build), or a success whose outputs do not have the sizes
 * their shapes say.  Deterministic: a fixed generator. */
#include "rtutil.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
