/* A program that uses libgraphir as an installed library (public headers
 * only; built by tests/cli/test_library.sh with pkg-config, shared and
 * static): it builds a small graph from nothing, saves it in every format
 * that can be written, loads each back from memory and runs it to the
 * expected numbers; then edits, reshapes and checks.  One "ok - " or
 * "FAIL - " line per case; exit status 1 when any failed. */
#include <graphir/graphir.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed, passed;

static void result(bool ok, const char *what, const gir_error *err)
{
    if (ok) {
        passed++;
        printf("ok - %s\n", what);
        return;
    }
    failed++;
    char *msg = err && err->code ? gir_error_format(err) : NULL;
    printf("FAIL - %s%s%s\n", what, msg ? ": " : "", msg ? msg : "");
    free(msg);
}

/* y = Relu(Conv(x, W) + b) with x [2,3,1,1], W [4,3,1,1], b [4]: a 1x1
 * convolution, which every format that writes canonical operators has. */
static gir_status build(gir_graph **out, gir_error *err)
{
    static const float w[12] = { 1, 0, -1, 0.5f, 0.5f, 0.5f, -2, 1, 0, 0, 0, 1 };
    static const float b[4] = { 0.25f, -1, 0, 0.5f };
    gir_graph *g;
    gir_tensor *tw = NULL, *tb = NULL;
    gir_shape xs = { 4, { 2, 3, 1, 1 } }, ws = { 4, { 4, 3, 1, 1 } }, bs = { 1, { 4 } };
    const char *gin[] = { "x", "W", "b" }, *gout[] = { "h" }, *rin[] = { "h" }, *rout[] = { "y" };
    gir_node *n;
    gir_status st = gir_graph_create("tiny", &g, err);
    if (st)
        return st;
    if ((st = gir_tensor_create(GIR_DT_F32, &ws, w, sizeof w, &tw, err)) ||
        (st = gir_tensor_create(GIR_DT_F32, &bs, b, sizeof b, &tb, err)) ||
        (st = gir_graph_add_input_value(g, "x", GIR_DT_F32, &xs, err)) ||
        (st = gir_graph_add_weight(g, "W", tw, err)) || (st = gir_graph_add_weight(g, "b", tb, err)) ||
        (st = gir_graph_add_op(g, "Conv", "fc", gin, 3, gout, 1, &n, err)) ||
        (st = gir_node_set_ints(n, "kernel_shape", (const int64_t[]){ 1, 1 }, 2, err)) ||
        (st = gir_graph_add_op(g, "Relu", "act", rin, 1, rout, 1, NULL, err)) ||
        (st = gir_graph_mark_output(g, "y", err)) || (st = gir_graph_finalize(g, err))) {
        gir_graph_free(g);
        g = NULL;
    }
    gir_tensor_unref(tw); /* the graph holds its own references */
    gir_tensor_unref(tb);
    *out = g;
    return st;
}

static const float X[6] = { 1, 2, 3, -1, 0.5f, 2 };
/* Relu(x W^T + b), computed by hand */
static const float WANT[8] = { 0, 2, 0, 3.5f, 0, 0, 2.5f, 2.5f };

static bool run_expect(const gir_graph *g, gir_error *err)
{
    gir_session *s = NULL;
    gir_tensor *x = NULL;
    gir_shape xs = { 4, { 2, 3, 1, 1 } };
    bool ok = false;
    if (gir_session_new(g, 1, &s, err) || gir_tensor_create(GIR_DT_F32, &xs, X, sizeof X, &x, err) ||
        gir_session_set_input(s, 0, x, err) || gir_session_run(s, err))
        goto out;
    gir_tensor *y = gir_session_output(s, 0);
    const void *data;
    if (gir_tensor_load(y, &data, err))
        goto out;
    const gir_shape *ys = gir_tensor_shape(y);
    ok = gir_tensor_dtype(y) == GIR_DT_F32 && ys->rank == 4 && ys->dims[0] == 2 && ys->dims[1] == 4 &&
         ys->dims[2] == 1 && ys->dims[3] == 1;
    for (int i = 0; ok && i < 8; i++)
        ok = fabsf(((const float *)data)[i] - WANT[i]) < 1e-6f;
out:
    gir_tensor_unref(x);
    gir_session_free(s);
    return ok;
}

int main(void)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    char what[160];
    result(build(&g, &err) == GIR_OK, "a graph built from nothing finalizes", &err);
    if (!g)
        return 1;
    gir_error_clear(&err);
    result(run_expect(g, &err), "it runs to the numbers computed by hand", &err);
    gir_error_clear(&err);

    /* every writable format, through memory and back */
    for (size_t i = 0; i < gir_format_count(); i++) {
        if (!gir_format_can_write(i) || !gir_format_can_read(i))
            continue;
        const char *f = gir_format_name(i);
        void *data = NULL, *params = NULL;
        size_t size = 0, psize = 0;
        gir_graph *back = NULL;
        gir_status sst = gir_save_memory(g, f, NULL, &data, &size, &params, &psize, &err);
        if (strcmp(f, "tvm") == 0) {
            /* a TVM graph-executor file holds compiled functions only */
            result(sst == GIR_E_UNSUPPORTED_OP, "tvm: refuses canonical operators (compiled functions only)",
                   sst == GIR_E_UNSUPPORTED_OP ? NULL : &err);
            gir_error_clear(&err);
            free(data);
            free(params);
            continue;
        }
        snprintf(what, sizeof what, "%s: saved to memory", f);
        bool ok = sst == GIR_OK && size > 0;
        result(ok, what, &err);
        gir_error_clear(&err);
        if (ok) {
            snprintf(what, sizeof what, "%s: loaded back from memory (%zu + %zu bytes)", f, size, psize);
            ok = gir_load_memory(data, size, params, psize, f, NULL, &back, &err) == GIR_OK;
            result(ok, what, &err);
            gir_error_clear(&err);
        }
        if (ok) {
            snprintf(what, sizeof what, "%s: runs to the expected numbers", f);
            result(run_expect(back, &err), what, &err);
            gir_error_clear(&err);
            gir_check_options o;
            gir_check_options_init(&o);
            gir_check_result r;
            snprintf(what, sizeof what, "%s: gir_check_models runs both and agrees", f);
            gir_status st = gir_check_models(g, back, &o, &r, &err);
            result(st == GIR_OK && r.method == GIR_CHECK_RUN && r.passed && r.verdict &&
                       strstr(r.verdict, "ran both models"),
                   what, &err);
            gir_check_result_clear(&r);
            gir_error_clear(&err);
        }
        gir_graph_free(back);
        free(data);
        free(params);
    }

    /* editing: names and shapes */
    result(gir_graph_rename_value(g, "y", "out", &err) == GIR_OK && gir_graph_find_value(g, "out") &&
               !gir_graph_find_value(g, "y") && strcmp(gir_value_name(gir_graph_output(g, 0)), "out") == 0,
           "a value is renamed and found by its new name", &err);
    gir_error_clear(&err);
    result(gir_graph_rename_node(g, "act", "fc", &err) == GIR_E_DUPLICATE,
           "renaming a node to a name taken fails with duplicate", NULL);
    gir_error_clear(&err);
    result(gir_graph_set_batch_size(g, 5, &err) == GIR_OK &&
               gir_value_shape(gir_graph_output(g, 0))->dims[0] == 5,
           "gir_graph_set_batch_size infers the output's batch again", &err);
    gir_error_clear(&err);
    gir_shape bad = { 3, { 1, 2, 3 } };
    result(gir_graph_set_input_shape(g, "x", &bad, &err) == GIR_E_SHAPE &&
               gir_value_shape(gir_graph_input(g, 0))->dims[0] == 5,
           "a shape of another rank is refused and the graph is unchanged", NULL);
    gir_error_clear(&err);
    gir_graph_free(g);

    /* a Reshape to a fixed [1, 6] pins the batch */
    gir_graph *r = NULL;
    gir_shape xs = { 2, { 1, 6 } };
    static const int64_t shape[2] = { 1, 6 };
    const char *in[] = { "x" }, *out[] = { "y" };
    gir_node *rn = NULL;
    bool built = gir_graph_create("pinned", &r, &err) == GIR_OK &&
                 gir_graph_add_input_value(r, "x", GIR_DT_F32, &xs, &err) == GIR_OK &&
                 gir_graph_add_op(r, "Reshape", "flat", in, 1, out, 1, &rn, &err) == GIR_OK &&
                 gir_node_set_ints(rn, "shape", shape, 2, &err) == GIR_OK &&
                 gir_graph_mark_output(r, "y", &err) == GIR_OK && gir_graph_finalize(r, &err) == GIR_OK;
    result(built, "a graph with a Reshape to [1,6] builds", &err);
    gir_error_clear(&err);
    gir_status st = built ? gir_graph_set_batch_size(r, 3, &err) : GIR_E_INTERNAL;
    result(st == GIR_E_SHAPE && err.node && strcmp(err.node, "flat") == 0 &&
               gir_value_shape(gir_graph_input(r, 0))->dims[0] == 1,
           "--batch-size on it is refused naming the Reshape, the graph unchanged", NULL);
    if (st == GIR_E_SHAPE) {
        char *msg = gir_error_format(&err);
        printf("  (%s)\n", msg ? msg : "");
        free(msg);
    }
    gir_error_clear(&err);
    /* [1, -1] infers, but to [1, 18]: the batch is lost in the Reshape */
    static const int64_t shape2[2] = { 1, -1 };
    st = built ? gir_node_set_ints(rn, "shape", shape2, 2, &err) : GIR_E_INTERNAL;
    if (st == GIR_OK)
        st = gir_graph_set_batch_size(r, 3, &err);
    result(st == GIR_E_SHAPE && err.node && strcmp(err.node, "flat") == 0 && err.message &&
               strstr(err.message, "pin the batch"),
           "a Reshape to [1,-1] is named as pinning the batch", NULL);
    gir_error_clear(&err);
    gir_graph_free(r);

    /* .npy from memory */
    /* a version 1.0 header padded to 128 bytes, then 1.0f and 2.0f */
    unsigned char npy[136];
    static const char head[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    memcpy(npy, "\x93NUMPY\x01\x00\x76\x00", 10);
    memset(npy + 10, ' ', 118);
    memcpy(npy + 10, head, sizeof head - 1);
    npy[127] = '\n';
    static const float two[2] = { 1.0f, 2.0f };
    memcpy(npy + 128, two, sizeof two);
    gir_tensor *t = NULL;
    const void *d = NULL;
    bool npy_ok = gir_tensor_parse_npy(npy, sizeof npy, &t, &err) == GIR_OK &&
                  gir_tensor_load(t, &d, &err) == GIR_OK && ((const float *)d)[0] == 1.0f &&
                  ((const float *)d)[1] == 2.0f;
    result(npy_ok, ".npy bytes in memory parse to [1, 2]", &err);
    gir_error_clear(&err);
    gir_tensor_unref(t);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
