/* nnabla's ONNX importer references (../shared/realworld/nnp-onnx-pairs):
 * each .nnp runs on the runtime and matches the run of its .onnx (the
 * inputs are parameters inside the files).  Differences that come from
 * the files themselves are shown and explained:
 *   - several pairs hold different random data in the two files (nnabla
 *     regenerated the tensors when it wrote the .nnp): the .nnp is then also
 *     run with the .onnx file's tensors, and must agree;
 *   - batch_norm.nnp's BatchNormalization has no eps field, which proto3
 *     reads as 0, where the .onnx has 1e-5: the outputs agree within 1e-4,
 *     and within 1e-5 once the .nnp gets the .onnx's eps.
 *   - nnabla has no bool: where the .onnx gives a bool output (Equal, And,
 *     Not, ...) the .nnp gives float32 0/1, which must match exactly.
 * Every pair runs and agrees (LRN, which nnabla spells with SumPooling,
 * BroadcastTo and the logical functions included). */
#include "testutil.h"

#include "formats/format.h"
#include "graphir/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATOL 1e-4
#define RTOL 1e-3

/* Runs g; NULL output with *st set when the session cannot be made. */
static gir_tensor *run_graph(const gir_graph *g, gir_status *st, char *why, size_t why_len)
{
    gir_error err = GIR_ERROR_INIT;
    gir_session *s = NULL;
    *st = gir_session_new(g, 1, &s, &err);
    if (*st == GIR_OK)
        *st = gir_session_run(s, &err);
    gir_tensor *y = NULL;
    if (*st) {
        char *m = gir_error_format(&err);
        snprintf(why, why_len, "%s", m ? m : "?");
        free(m);
    } else {
        assert_int_equal(gir_session_output_count(s), 1);
        y = gir_tensor_ref(gir_session_output(s, 0));
    }
    gir_error_clear(&err);
    gir_session_free(s);
    return y;
}

/* Largest |a - b|, or -1 when they do not agree within ATOL + RTOL |a|; a
 * bool output of a must be matched exactly by b's float32 0/1. */
static double compare(gir_tensor *a, gir_tensor *b, double *worst)
{
    bool as_bool = gir_tensor_dtype(a) == GIR_DT_BOOL;
    assert_int_equal(gir_tensor_dtype(a), as_bool ? GIR_DT_BOOL : GIR_DT_F32);
    assert_int_equal(gir_tensor_dtype(b), GIR_DT_F32);
    assert_true(gir_shape_equal(gir_tensor_shape(a), gir_tensor_shape(b)));
    const void *va;
    const float *pb;
    TU_OK(gir_tensor_load(a, &va, NULL), NULL);
    TU_OK(gir_tensor_load(b, (const void **)&pb, NULL), NULL);
    size_t n = (size_t)gir_shape_numel(gir_tensor_shape(a));
    bool ok = true;
    *worst = 0;
    for (size_t i = 0; i < n; i++) {
        double x = as_bool ? (double)((const uint8_t *)va)[i] : (double)((const float *)va)[i];
        double d = fabs(x - (double)pb[i]);
        if (as_bool && pb[i] != 0.0f && pb[i] != 1.0f)
            ok = false;
        if (d > *worst)
            *worst = d;
        if (!(d <= (as_bool ? 0 : ATOL + RTOL * fabs(x))))
            ok = false;
    }
    return ok ? *worst : -1;
}

/* Gives b the data of every constant of a with the same name, dtype and
 * shape whose bytes differ; the names go to *list. */
static size_t adopt_constants(const gir_graph *a, gir_graph *b, char *list, size_t len)
{
    size_t n = 0;
    list[0] = '\0';
    for (size_t i = 0; i < b->n_values; i++) {
        gir_value *vb = b->values[i];
        int32_t ia = gir_graph_value_index(a, vb->name);
        if (!vb->data || ia < 0 || !a->values[ia]->data)
            continue;
        gir_tensor *ta = a->values[ia]->data;
        bool equal;
        TU_OK(gir_tensor_equal(ta, vb->data, &equal, NULL), NULL);
        if (equal || ta->dtype != vb->data->dtype || !gir_shape_equal(&ta->shape, &vb->data->shape))
            continue;
        gir_value_set_data(vb, ta);
        size_t used = strlen(list);
        snprintf(list + used, len - used, "%s%s", n ? ", " : "", vb->name);
        n++;
    }
    return n;
}

static const gir_node *find_op(const gir_graph *g, gir_op op)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == op)
            return g->nodes[i];
    return NULL;
}

static void test_pairs(void **state)
{
    (void)state;
    if (!gir_format_find("onnx") || !gir_format_find("nnabla"))
        skip();
    char *dir = tu_shared("realworld/nnp-onnx-pairs");
    size_t n;
    char **names = tu_list_files(dir, NULL, ".nnp", &n);
    assert_non_null(names);
    for (size_t i = 0; i < n; i++)
        names[i][strlen(names[i]) - 4] = '\0'; /* the pair's name */
    size_t agreed = 0, regenerated = 0;
    for (size_t i = 0; i < n; i++) {
        char *pa = gir_strdupf("%s/%s.onnx", dir, names[i]), *pb = gir_strdupf("%s/%s.nnp", dir, names[i]);
        gir_error err = GIR_ERROR_INIT;
        gir_graph *a, *b;
        TU_OK(gir_load(pa, "onnx", NULL, &a, &err), &err);
        TU_OK(gir_load(pb, "nnabla", NULL, &b, &err), &err);
        char why[512], list[512];
        gir_status st;
        gir_tensor *ya = run_graph(a, &st, why, sizeof why);
        if (!ya)
            fail_msg("%s.onnx does not run: %s", names[i], why);
        gir_tensor *yb = run_graph(b, &st, why, sizeof why);
        if (!yb) {
            fail_msg("%s.nnp does not run: %s", names[i], why);
        } else {
            double worst, r = compare(ya, yb, &worst);
            size_t changed = adopt_constants(a, b, list, sizeof list);
            if (changed == 0) {
                if (r < 0)
                    fail_msg("%s: outputs differ (max abs %g)", names[i], worst);
                print_message("%-28s agrees, max abs %.3g\n", names[i], worst);
            } else {
                /* the files hold different data: run the .nnp on the .onnx's */
                gir_tensor_unref(yb);
                yb = run_graph(b, &st, why, sizeof why);
                assert_non_null(yb);
                r = compare(ya, yb, &worst);
                if (r < 0)
                    fail_msg("%s: outputs differ with the same data (max abs %g)", names[i], worst);
                print_message("%-28s agrees, max abs %.3g, with the .onnx's data for %s (the files differ)\n",
                              names[i], worst, list);
                regenerated++;
            }
            if (strcmp(names[i], "batch_norm") == 0) {
                /* proto3's missing eps is 0; the explanation of the difference */
                gir_node *bn = (gir_node *)find_op(b, GIR_OP_BatchNormalization);
                const gir_node *bo = find_op(a, GIR_OP_BatchNormalization);
                assert_non_null(bn);
                assert_non_null(bo);
                assert_true(gir_node_float(bn, "epsilon", -1) == 0.0);
                double eps = gir_node_float(bo, "epsilon", -1);
                assert_true(fabs(eps - 1e-5) < 1e-12);
                assert_true(worst > 1e-5);
                assert_int_equal(gir_attrs_set_float(b, &bn->attrs, "epsilon", eps, &err), GIR_OK);
                gir_tensor_unref(yb);
                yb = run_graph(b, &st, why, sizeof why);
                assert_non_null(yb);
                compare(ya, yb, &worst);
                print_message("%-28s with the .onnx's eps: max abs %.3g\n", names[i], worst);
                assert_true(worst <= 1e-5);
            }
            agreed++;
        }
        gir_tensor_unref(ya);
        gir_tensor_unref(yb);
        gir_graph_free(a);
        gir_graph_free(b);
        free(pa);
        free(pb);
    }
    print_message("nnp-onnx pairs: %zu agree (%zu after aligning the files' data), of %zu\n", agreed, regenerated,
                  n);
    assert_int_equal(agreed, n);
    assert_int_equal(n, 37);
    tu_free_list(names, n);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
