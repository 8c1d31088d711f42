/* ONNX's operator tests (Debian's libonnx-testdata) run on the reference
 * runtime: every node test whose model reads into canonical operators is
 * run on each of its data sets and its outputs compared with the expected
 * ones (float: |got - want| <= 1e-5 + 1e-3 |want|, NaN where NaN; other
 * types exactly).  A test is unsupported when the reader keeps an operator
 * opaque, when a kernel lacks the dtype (no-kernel) or the content is
 * declared unsupported.  Prints passed / failed / unsupported counts and
 * per-op results; fails when any test of an op the runtime claims fails. */
#include "rtutil.h"

#include "formats/format.h"
#include "formats/onnx/onnx.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

typedef enum { R_PASS, R_FAIL, R_UNSUPPORTED } result;

typedef struct opstat {
    char name[64];
    size_t pass, fail, unsupported;
} opstat;

static opstat ops[512];
static size_t n_ops;

static opstat *op_entry(const char *name)
{
    for (size_t i = 0; i < n_ops; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    assert_true(n_ops < sizeof ops / sizeof ops[0]);
    snprintf(ops[n_ops].name, sizeof ops[n_ops].name, "%s", name);
    return &ops[n_ops++];
}

static double elem(const void *p, gir_dtype t, size_t i)
{
    switch (t) {
    case GIR_DT_F32: return ((const float *)p)[i];
    case GIR_DT_F64: return ((const double *)p)[i];
    case GIR_DT_I8: return ((const int8_t *)p)[i];
    case GIR_DT_I16: return ((const int16_t *)p)[i];
    case GIR_DT_I32: return ((const int32_t *)p)[i];
    case GIR_DT_I64: return (double)((const int64_t *)p)[i];
    case GIR_DT_U8: case GIR_DT_BOOL: return ((const uint8_t *)p)[i];
    case GIR_DT_U16: return ((const uint16_t *)p)[i];
    case GIR_DT_U32: return ((const uint32_t *)p)[i];
    case GIR_DT_U64: return (double)((const uint64_t *)p)[i];
    default: return NAN;
    }
}

/* Float tolerance |got - want| <= atol + rtol |want|; the recurrent
 * operators' tests (LSTM, GRU, RNN) are held to 1e-6 relative. */
static double tol_abs = 1e-5, tol_rel = 1e-3;

static bool recurrent_test(const char *name)
{
    return strncmp(name, "test_lstm_", 10) == 0 || strncmp(name, "test_gru_", 9) == 0 ||
           strncmp(name, "test_rnn_", 9) == 0 || strncmp(name, "test_simple_rnn_", 16) == 0;
}

/* NULL when got matches want, else a description (static buffer). */
static const char *mismatch(gir_tensor *got, gir_tensor *want)
{
    static char why[256];
    char s1[96], s2[96];
    if (gir_tensor_dtype(got) != gir_tensor_dtype(want)) {
        snprintf(why, sizeof why, "dtype %s, expected %s", gir_dtype_name(gir_tensor_dtype(got)),
                 gir_dtype_name(gir_tensor_dtype(want)));
        return why;
    }
    if (!gir_shape_equal(gir_tensor_shape(got), gir_tensor_shape(want))) {
        snprintf(why, sizeof why, "shape %s, expected %s", gir_shape_str(gir_tensor_shape(got), s1, sizeof s1),
                 gir_shape_str(gir_tensor_shape(want), s2, sizeof s2));
        return why;
    }
    const void *pg, *pw;
    if (gir_tensor_load(got, &pg, NULL) || gir_tensor_load(want, &pw, NULL))
        return "cannot load";
    gir_dtype t = gir_tensor_dtype(got);
    size_t n = (size_t)gir_shape_numel(gir_tensor_shape(got));
    if (t == GIR_DT_F16 || t == GIR_DT_BF16 || t == GIR_DT_I64 || t == GIR_DT_U64) {
        /* compared bit for bit (64-bit integers do not fit a double) */
        if (memcmp(pg, pw, (size_t)gir_tensor_nbytes(got)) != 0) {
            snprintf(why, sizeof why, "%s values differ", gir_dtype_name(t));
            return why;
        }
        return NULL;
    }
    bool fl = gir_dtype_is_float(t);
    for (size_t i = 0; i < n; i++) {
        double a = elem(pg, t, i), b = elem(pw, t, i);
        bool ok = fl ? ((isnan(a) && isnan(b)) || a == b || fabs(a - b) <= tol_abs + tol_rel * fabs(b)) : a == b;
        if (!ok) {
            snprintf(why, sizeof why, "element %zu is %.9g, expected %.9g", i, a, b);
            return why;
        }
    }
    return NULL;
}

/* ONNX 1.12's test data stores bfloat16 tensors as their uint16 bits:
 * give them their declared type back. */
static void fix_bf16(gir_tensor **t, gir_dtype declared)
{
    if (declared != GIR_DT_BF16 || gir_tensor_dtype(*t) != GIR_DT_U16)
        return;
    const void *p;
    TU_OK(gir_tensor_load(*t, &p, NULL), NULL);
    gir_tensor *n;
    TU_OK(gir_tensor_create(GIR_DT_BF16, gir_tensor_shape(*t), p, (size_t)gir_tensor_nbytes(*t), &n, NULL), NULL);
    gir_tensor_unref(*t);
    *t = n;
}

/* Tensors of a data set: input_N.pb or output_N.pb in order. */
static size_t read_set(const char *set, const char *kind, gir_tensor **ts, char **names, size_t max)
{
    size_t n = 0;
    for (; n < max; n++) {
        char file[64];
        snprintf(file, sizeof file, "%s_%zu.pb", kind, n);
        char *p = tu_join(set, file);
        size_t len;
        char *bytes = tu_slurp(p, &len);
        free(bytes);
        if (!bytes) {
            free(p);
            break;
        }
        gir_error err = GIR_ERROR_INIT;
        if (onnx_read_tensor_file(p, &ts[n], &names[n], &err) != GIR_OK) {
            gir_error_clear(&err);
            ts[n] = NULL;
            names[n] = NULL;
        }
        free(p);
    }
    return n;
}

static bool unsupported_code(gir_status st)
{
    return st == GIR_E_NO_KERNEL || st == GIR_E_UNSUPPORTED || st == GIR_E_UNSUPPORTED_OP ||
           st == GIR_E_UNSUPPORTED_ATTR;
}

/* Runs one node test directory; *why says what failed. */
static result node_run(const char *dir, const gir_graph *g, char *why, size_t why_len)
{
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    gir_status st = gir_session_new(g, 1, &s, &err);
    if (st) {
        char *m = gir_error_format(&err);
        snprintf(why, why_len, "%s", m ? m : "?");
        free(m);
        gir_error_clear(&err);
        return unsupported_code(st) ? R_UNSUPPORTED : R_FAIL;
    }
    result res = R_PASS;
    for (int k = 0; res == R_PASS; k++) {
        char sub[64];
        snprintf(sub, sizeof sub, "test_data_set_%d", k);
        char *set = tu_join(dir, sub);
        DIR *d = opendir(set);
        if (!d) {
            free(set);
            break;
        }
        closedir(d);
        gir_tensor *in[32] = { 0 }, *out[32] = { 0 };
        char *in_names[32] = { 0 }, *out_names[32] = { 0 };
        size_t ni = read_set(set, "input", in, in_names, 32), no = read_set(set, "output", out, out_names, 32);
        free(set);
        for (size_t i = 0; i < ni && res == R_PASS; i++) {
            if (!in[i]) {
                snprintf(why, why_len, "input %zu is not a tensor the IR holds", i);
                res = R_UNSUPPORTED;
                break;
            }
            /* by name when the session has that input, else by position */
            size_t j = i;
            for (size_t q = 0; in_names[i] && in_names[i][0] && q < gir_session_input_count(s); q++)
                if (strcmp(gir_value_name(gir_session_input(s, q)), in_names[i]) == 0)
                    j = q;
            if (j < gir_session_input_count(s)) {
                fix_bf16(&in[i], gir_value_dtype(gir_session_input(s, j)));
                st = gir_session_set_input(s, j, in[i], &err);
            } else {
                st = gir_fail(&err, GIR_E_ARGUMENT, "extra input %zu", i);
            }
            if (st) {
                char *m = gir_error_format(&err);
                snprintf(why, why_len, "input %zu: %s", i, m ? m : "?");
                free(m);
                gir_error_clear(&err);
                /* data contradicting the model's declared input shape (the
                 * CastLike tests give 'like' as one element) is the test's
                 * problem, not the runtime's */
                res = unsupported_code(st) || st == GIR_E_SHAPE ? R_UNSUPPORTED : R_FAIL;
            }
        }
        if (res == R_PASS && (st = gir_session_run(s, &err))) {
            char *m = gir_error_format(&err);
            snprintf(why, why_len, "%s", m ? m : "?");
            free(m);
            gir_error_clear(&err);
            res = unsupported_code(st) ? R_UNSUPPORTED : R_FAIL;
        }
        for (size_t i = 0; res == R_PASS && i < no; i++) {
            if (!out[i]) {
                snprintf(why, why_len, "output %zu is not a tensor the IR holds", i);
                res = R_UNSUPPORTED;
                break;
            }
            size_t j = i;
            for (size_t q = 0; out_names[i] && out_names[i][0] && q < g->n_outputs; q++)
                if (strcmp(g->values[g->outputs[q]]->name, out_names[i]) == 0)
                    j = q;
            gir_tensor *got = gir_session_output(s, j);
            if (got)
                fix_bf16(&out[i], gir_tensor_dtype(got));
            const char *m = got ? mismatch(got, out[i]) : "missing output";
            if (m) {
                snprintf(why, why_len, "data set %d output %zu: %s", k, i, m);
                res = R_FAIL;
            }
        }
        for (size_t i = 0; i < 32; i++) {
            gir_tensor_unref(in[i]);
            gir_tensor_unref(out[i]);
            free(in_names[i]);
            free(out_names[i]);
        }
    }
    gir_session_free(s);
    return res;
}

static void test_node_tests(void **state)
{
    (void)state;
    if (!gir_format_find("onnx"))
        skip();
    size_t n;
    char **names = tu_list_files(NODE_DIR, "test_", NULL, &n);
    if (!names) {
        print_message("%s is missing (Debian package libonnx-testdata)\n", NODE_DIR);
        fail();
    }
    size_t totals[3] = { 0, 0, 0 }, n_rec = 0, n_rec_pass = 0;
    for (size_t i = 0; i < n; i++) {
        char *dir = tu_join(NODE_DIR, names[i]);
        char *model = tu_join(dir, "model.onnx");
        gir_error err = GIR_ERROR_INIT;
        gir_graph *g = NULL;
        char why[512] = "";
        result r;
        bool rec = recurrent_test(names[i]);
        tol_abs = rec ? 1e-7 : 1e-5;
        tol_rel = rec ? 1e-6 : 1e-3;
        if (gir_load(model, "onnx", NULL, &g, &err) != GIR_OK) {
            char *m = gir_error_format(&err);
            snprintf(why, sizeof why, "read: %s", m ? m : "?");
            free(m);
            r = R_UNSUPPORTED;
        } else {
            r = node_run(dir, g, why, sizeof why);
        }
        gir_error_clear(&err);
        totals[r]++;
        /* attribute the result to every operator of the graph */
        if (g && g->n_nodes > 0) {
            for (size_t k = 0; k < g->n_nodes; k++) {
                const char *op = gir_node_op(g->nodes[k]);
                bool seen = false;
                for (size_t q = 0; q < k; q++)
                    if (strcmp(gir_node_op(g->nodes[q]), op) == 0)
                        seen = true;
                if (seen)
                    continue;
                opstat *os = op_entry(g->nodes[k]->op == GIR_OP_OPAQUE ? "(opaque)" : op);
                if (r == R_PASS)
                    os->pass++;
                else if (r == R_FAIL)
                    os->fail++;
                else
                    os->unsupported++;
            }
        }
        if (rec) {
            n_rec++;
            n_rec_pass += r == R_PASS;
            if (r != R_PASS)
                print_message("recurrent test %s did not pass: %s\n", names[i], why);
        }
        if (r == R_FAIL)
            print_message("FAIL %s: %s\n", names[i], why);
        else if (r == R_UNSUPPORTED && getenv("GIR_VERBOSE"))
            print_message("unsupported %s: %s\n", names[i], why);
        gir_graph_free(g);
        free(model);
        free(dir);
    }
    tu_free_list(names, n);
    print_message("onnx node tests: %zu passed, %zu failed, %zu unsupported (of %zu)\n", totals[R_PASS],
                  totals[R_FAIL], totals[R_UNSUPPORTED], n);
    size_t claimed_failing = 0;
    for (size_t i = 0; i < n_ops; i++) {
        const opstat *os = &ops[i];
        bool claimed = gir_runtime_supports_op(os->name);
        if (getenv("GIR_VERBOSE") || os->fail)
            print_message("  %-24s %s passed %zu, failed %zu, unsupported %zu\n", os->name,
                          claimed ? "supported  " : "unsupported", os->pass, os->fail, os->unsupported);
        if (claimed && os->fail)
            claimed_failing++;
    }
    /* every op the runtime has a kernel for passes all its runnable tests */
    assert_int_equal(claimed_failing, 0);
    assert_true(totals[R_PASS] >= 380); /* 388 when written: a drop is a regression */
    /* every LSTM, GRU and RNN test of ONNX 1.12 (12) passes within 1e-6 */
    print_message("recurrent tests: %zu of %zu passed within 1e-6 relative\n", n_rec_pass, n_rec);
    assert_int_equal(n_rec, 12);
    assert_int_equal(n_rec_pass, n_rec);
}

/* A model of 16 MiB or more: its large initializer is read in place (an
 * external-data reference into the model file itself, loaded when needed),
 * small ones are read as usual; the weights and the results are the same. */
static void test_large_model_in_place(void **state)
{
    (void)state;
    enum { K = 2048, N = 2176 }; /* 17 MiB of weights */
    float *w = malloc((size_t)K * N * sizeof(float)), x[K], b[N];
    assert_non_null(w);
    rt_fill(w, (size_t)K * N, 31);
    rt_fill(x, K, 32);
    rt_fill(b, N, 33);
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(1, K));
    rt_const(g, "w", GIR_DT_F32, 2, DIMS(K, N), w);
    rt_const(g, "b", GIR_DT_F32, 1, DIMS(N), b);
    rt_node(g, GIR_OP_Gemm, "fc", "x,w,b", "y");
    rt_output(g, "y");
    char *path = tu_tmp("large.onnx");
    gir_error err = GIR_ERROR_INIT;
    tu_save(g, path, "onnx", NULL);
    gir_graph_free(g);
    gir_graph *r;
    TU_OK(gir_load(path, NULL, NULL, &r, &err), &err);
    const gir_value *wv = r->values[gir_graph_value_index(r, "w")], *bv = r->values[gir_graph_value_index(r, "b")];
    assert_null(wv->data->data);     /* still in the file */
    assert_non_null(bv->data->data); /* 8.5 KiB: read with the model */
    const void *p;
    TU_OK(gir_tensor_load(wv->data, &p, &err), &err);
    assert_memory_equal(p, w, (size_t)K * N * sizeof(float));
    gir_tensor_unload(wv->data);
    float *want = malloc(N * sizeof(float));
    assert_non_null(want);
    for (int j = 0; j < N; j++) {
        double acc = b[j];
        for (int k = 0; k < K; k++)
            acc += (double)x[k] * w[(size_t)k * N + j];
        want[j] = (float)acc;
    }
    gir_tensor *in = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, K), x), *out;
    rt_run(r, 1, &in, 1, &out, 1);
    rt_expect_f32(out, 2, DIMS(1, N), want, 1e-4);
    gir_tensor_unref(out);
    gir_tensor_unref(in);
    gir_graph_free(r);
    free(want);
    free(w);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_tests),
        cmocka_unit_test(test_large_model_in_place),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
