/* Weights loaded lazily after the model was read: a side file (ONNX
 * external data, MXNet/NNVM .params, LightNet .wts) that another process
 * replaced (a commit renames a new file over it) or rewrote in the
 * meantime is refused by name, never read into the graph that was read
 * with the old one. */
#include "rtutil.h"

#include "core/ir.h"
#include "passes/passes.h"
#include "graphir/model.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* y = x + w, with w of 512 floats all equal to v: large enough to go to
 * every format's side file. */
static gir_graph *model(float v)
{
    gir_graph *g = rt_graph();
    rt_input(g, "x", GIR_DT_F32, 2, DIMS(1, 512));
    float w[512];
    for (int i = 0; i < 512; i++)
        w[i] = v;
    int32_t wi = rt_const(g, "w", GIR_DT_F32, 2, DIMS(1, 512), w);
    g->values[wi]->kind = GIR_VALUE_WEIGHT;
    rt_node(g, GIR_OP_Add, "add", "x,w", "y");
    rt_output(g, "y");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

static const struct {
    const char *fmt, *a, *b, *side_a, *side_b, *what;
    const char *opt[3];
} cases[] = {
    { "onnx", "a.onnx", "b.onnx", "a.onnx.data", "b.onnx.data", "external data", { "external-data", "1", NULL } },
    { "nnvm", "a.json", "b.json", "a.params", "b.params", "the parameters file", { NULL } },
    { "lightnet", "a.json", "b.json", "a.wts", "b.wts", "the weight file", { NULL } },
};

static void save(const gir_graph *g, const char *path, const char *fmt, const char *const *kv)
{
    gir_options *o = tu_options_kv(kv);
    tu_save(g, path, fmt, o);
    gir_options_free(o);
}

/* Saves the model with weights 1 as A and with weights 2 as B (each in its
 * own folder), reads A; then change(side of A, side of B) runs; the
 * weight of what was read is loaded and must fail with the words given. */
static void stale(size_t c, void (*change)(const char *, const char *), const char *how)
{
    char na[64], nb[64];
    snprintf(na, sizeof na, "%s-%s-a", cases[c].fmt, how + 4);
    snprintf(nb, sizeof nb, "%s-%s-b", cases[c].fmt, how + 4);
    char *da = tu_tmp(na), *db = tu_tmp(nb);
    assert_int_equal(mkdir(da, 0755), 0);
    assert_int_equal(mkdir(db, 0755), 0);
    char *pa = gir_path_join(da, cases[c].a), *pb = gir_path_join(db, cases[c].a);
    char *sa = gir_path_join(da, cases[c].side_a), *sb = gir_path_join(db, cases[c].side_a);
    gir_graph *g1 = model(1.0f), *g2 = model(2.0f);
    save(g1, pa, cases[c].fmt, cases[c].opt);
    save(g2, pb, cases[c].fmt, cases[c].opt);
    struct stat st;
    assert_int_equal(stat(sa, &st), 0);
    assert_int_equal(stat(sb, &st), 0);

    gir_error err = GIR_ERROR_INIT;
    gir_graph *back = NULL;
    TU_OK(gir_load(pa, cases[c].fmt, NULL, &back, &err), &err);
    const gir_value *w = gir_graph_find_value(back, "w");
    assert_non_null(w);
    assert_non_null(w->data);
    assert_non_null(w->data->loader); /* not read yet */
    change(sa, sb);
    const void *d;
    TU_FAILS(gir_tensor_load(w->data, &d, &err), &err, GIR_E_IO, cases[c].what, how, "after the model was read",
             cases[c].side_a);
    gir_error_clear(&err);

    /* read again, the graph takes the new weights */
    gir_graph_free(back);
    back = NULL;
    TU_OK(gir_load(pa, cases[c].fmt, NULL, &back, &err), &err);
    w = gir_graph_find_value(back, "w");
    TU_OK(gir_tensor_load(w->data, &d, &err), &err);
    assert_true(((const float *)d)[0] == 2.0f && ((const float *)d)[511] == 2.0f);

    gir_graph_free(back);
    gir_graph_free(g1);
    gir_graph_free(g2);
    free(pa);
    free(pb);
    free(sa);
    free(sb);
    free(da);
    free(db);
}

/* What a commit does: the new file renamed over the old one. */
static void replace(const char *side_a, const char *side_b)
{
    assert_int_equal(rename(side_b, side_a), 0);
}

/* The same file written again in place (another inode is not needed): the
 * other model's bytes, and a modification time that differs (set, as two
 * writes within one clock tick could share it). */
static void rewrite(const char *side_a, const char *side_b)
{
    char *data;
    size_t len;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_read_file(side_b, 0, &data, &len, &err), &err);
    int fd = open(side_a, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_true(gir_pwrite_full(fd, data, len, 0));
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    struct timespec t[2] = { st.st_atim, st.st_mtim };
    t[1].tv_sec += 2;
    assert_int_equal(futimens(fd, t), 0);
    close(fd);
    free(data);
}

static void test_replaced(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        stale(c, replace, "was replaced");
}

static void test_rewritten(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        stale(c, rewrite, "was rewritten");
}

/* Untouched, the lazy load reads what was written. */
static void test_untouched(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%s", cases[c].fmt, cases[c].a);
        char *p = tu_tmp(name);
        gir_graph *g = model(3.0f);
        save(g, p, cases[c].fmt, cases[c].opt);
        gir_error err = GIR_ERROR_INIT;
        gir_graph *back = NULL;
        TU_OK(gir_load(p, cases[c].fmt, NULL, &back, &err), &err);
        const gir_value *w = gir_graph_find_value(back, "w");
        const void *d;
        TU_OK(gir_tensor_load(w->data, &d, &err), &err);
        assert_true(((const float *)d)[0] == 3.0f && ((const float *)d)[511] == 3.0f);
        gir_graph_free(back);
        gir_graph_free(g);
        free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_untouched, tu_setup_tempdir, tu_teardown_tempdir),
        cmocka_unit_test_setup_teardown(test_replaced, tu_setup_tempdir, tu_teardown_tempdir),
        cmocka_unit_test_setup_teardown(test_rewritten, tu_setup_tempdir, tu_teardown_tempdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
