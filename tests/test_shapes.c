/* Shape inference exists twice: the op table infers every value's shape
 * when a graph is finished, and each kernel computes its output shapes
 * when it runs.  This test proves they agree: every model of the test
 * corpus that runs is run with every intermediate value kept, and each
 * value's dtype, rank and every dimension the inference knows are
 * compared with the tensor the kernel produced.  GIR_TV_DIR=DIR adds the
 * torchvision exports of scripts/torchvision_export.py DIR. */
#include "rtutil.h"

#include "graphir/check.h"
#include "graphir/model.h"
#include "graphir/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct tally {
    size_t models, values, dims, skipped;
} tally;

/* The mismatches of one model, counted and the first few printed. */
static size_t compare_model(const gir_graph *g, gir_session *s, const char *path, tally *t)
{
    size_t bad = 0;
    for (size_t i = 0; i < gir_graph_node_count(g); i++) {
        const gir_node *n = gir_graph_node(g, i);
        for (size_t k = 0; k < gir_node_output_count(n); k++) {
            const gir_value *v = gir_node_output(n, k);
            if (!v)
                continue;
            gir_tensor *rt = gir_session_value(s, gir_value_name(v));
            if (!rt)
                continue; /* an omitted optional output */
            const gir_shape *inf = gir_value_shape(v);
            char a[128], b[128];
            bool same = true;
            if (gir_value_dtype(v) != GIR_DT_UNKNOWN && gir_value_dtype(v) != rt->dtype)
                same = false;
            if (inf->rank >= 0) {
                if (inf->rank != rt->shape.rank)
                    same = false;
                else
                    for (int d = 0; d < inf->rank; d++) {
                        if (inf->dims[d] >= 0 && inf->dims[d] != rt->shape.dims[d])
                            same = false;
                        t->dims += inf->dims[d] >= 0;
                    }
            }
            t->values++;
            if (!same) {
                if (bad < 5)
                    print_error("%s: node '%s' (%s) output '%s': inferred %s %s, kernel made %s %s\n", path,
                                gir_node_name(n), gir_node_op(n), gir_value_name(v),
                                gir_dtype_name(gir_value_dtype(v)), gir_shape_str(inf, a, sizeof a),
                                gir_dtype_name(rt->dtype), gir_shape_str(&rt->shape, b, sizeof b));
                bad++;
            }
            gir_tensor_unref(rt);
        }
    }
    return bad;
}

/* Loads and runs one file; returns its mismatches (0 when it does not
 * load or run: such files are counted as skipped). */
static FILE *devnull;

static size_t check_file(const char *path, tally *t)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    gir_session *s = NULL;
    size_t bad = 0;
    if (gir_load(path, NULL, NULL, &g, &err) != GIR_OK || gir_session_new(g, 1, &s, &err) != GIR_OK) {
        t->skipped++;
        goto done;
    }
    gir_session_keep_values(s, true);
    gir_session_set_print_stream(s, devnull); /* LightNet's print ops */
    if (gir_session_feed(s, 0, NULL, NULL, 7, &err) != GIR_OK || gir_session_run(s, &err) != GIR_OK) {
        t->skipped++;
        goto done;
    }
    t->models++;
    size_t before = t->values;
    bad = compare_model(g, s, path, t);
    if (getenv("SHAPES_VERBOSE"))
        print_message("%s: %zu nodes, %zu values\n", path, gir_graph_node_count(g), t->values - before);
done:
    gir_error_clear(&err);
    gir_session_free(s);
    gir_graph_free(g);
    return bad;
}

static size_t walk(const char *dir, tally *t)
{
    char *names[512];
    size_t n = tu_list_dir(dir, names, 512), bad = 0;
    for (size_t i = 0; i < n; i++) {
        char *p = tu_join(dir, names[i]);
        struct stat sb;
        if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            bad += walk(p, t);
        } else {
            const char *dot = strrchr(names[i], '.');
            /* Model files, not their companions or the expected outputs. */
            if (dot && (!strcmp(dot, ".json") || !strcmp(dot, ".onnx") || !strcmp(dot, ".nnp") ||
                        !strcmp(dot, ".nntxt")))
                bad += check_file(p, t);
        }
        free(p);
        free(names[i]);
    }
    return bad;
}

static void test_inference_matches_kernels(void **state)
{
    (void)state;
    tally t = { 0 };
    size_t bad = 0;
    devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    const char *dirs[] = { "realworld", "models", "incoming" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char *d = tu_shared(dirs[i]);
        bad += walk(d, &t);
        free(d);
    }
    char *d = tu_testdata("");
    bad += walk(d, &t);
    free(d);
    /* Torchvision exports (scripts/torchvision_export.py), when given. */
    if (getenv("GIR_TV_DIR"))
        bad += walk(getenv("GIR_TV_DIR"), &t);
    print_message("%zu models ran, %zu values and %zu known dimensions compared, %zu files skipped, "
                  "%zu mismatches\n", t.models, t.values, t.dims, t.skipped, bad);
    fclose(devnull);
    assert_true(t.models >= 50);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inference_matches_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
