/* Real architectures from ../shared/models (ResNet-18, MobileNetV2,
 * SqueezeNet 1.0, ONNX opset 13) on the shared input: the outputs match
 * ONNX Runtime's within 1e-4 absolute, and 1 and 2 threads give the same
 * bytes.  Needs the ONNX reader: skipped in builds without it. */
#include "rtutil.h"

#include "formats/format.h"
#include "io/npy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gir_tensor *run_model(const gir_graph *g, gir_tensor *x, int threads)
{
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, threads, &s, &err), &err);
    assert_int_equal(gir_session_input_count(s), 1);
    assert_string_equal(gir_value_name(gir_session_input(s, 0)), "data");
    TU_OK(gir_session_set_input(s, 0, x, &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_session_output_count(s), 1);
    gir_tensor *y = gir_tensor_ref(gir_session_output(s, 0));
    gir_session_free(s);
    return y;
}

static void check_model(const char *name)
{
    if (!gir_format_find("onnx"))
        skip();
    gir_error err = GIR_ERROR_INIT;
    char rel[128];
    snprintf(rel, sizeof rel, "models/%s.onnx", name);
    char *path = tu_shared(rel);
    gir_graph *g;
    TU_OK(gir_load(path, "onnx", NULL, &g, &err), &err);
    free(path);
    path = tu_shared("models/input_1x3x224x224.npy");
    gir_tensor *x, *want;
    TU_OK(gir_npy_read(path, &x, &err), &err);
    free(path);
    snprintf(rel, sizeof rel, "models/%s.ort_out.npy", name);
    path = tu_shared(rel);
    TU_OK(gir_npy_read(path, &want, &err), &err);
    free(path);

    gir_tensor *y1 = run_model(g, x, 1), *y2 = run_model(g, x, 2);
    const float *p1, *p2, *pw;
    TU_OK(gir_tensor_load(y1, (const void **)&p1, &err), &err);
    TU_OK(gir_tensor_load(y2, (const void **)&p2, &err), &err);
    TU_OK(gir_tensor_load(want, (const void **)&pw, &err), &err);
    assert_true(gir_shape_equal(gir_tensor_shape(y1), gir_tensor_shape(want)));
    double worst = 0;
    for (size_t i = 0; i < 1000; i++)
        worst = fmax(worst, fabs((double)p1[i] - (double)pw[i]));
    print_message("%s: max abs difference to ONNX Runtime %.3g\n", name, worst);
    assert_true(worst <= 1e-4);
    assert_memory_equal(p1, p2, 1000 * sizeof(float));
    gir_tensor_unref(y1);
    gir_tensor_unref(y2);
    gir_tensor_unref(x);
    gir_tensor_unref(want);
    gir_graph_free(g);
}

static void test_resnet18(void **state)
{
    (void)state;
    check_model("resnet18");
}

static void test_mobilenet_v2(void **state)
{
    (void)state;
    check_model("mobilenet_v2");
}

static void test_squeezenet(void **state)
{
    (void)state;
    check_model("squeezenet1_0");
}

/* The LightNet documentation's create/slice/print example (seed 001): the
 * IR after "Example" and what `lightnet example.json` prints, both taken
 * from the seed text; our run prints the same. */
static void test_lightnet_seed_example(void **state)
{
    (void)state;
    if (!gir_format_find("lightnet"))
        skip();
    char *seed = tu_shared("seeds/001_94c518433e874cad.txt");
    size_t len;
    char *text = tu_slurp(seed, &len);
    assert_non_null(text);
    free(seed);
    /* the IR: from the first line "{" after "Example" to the next line "}" */
    char *ex = strstr(text, "\nExample\n");
    assert_non_null(ex);
    char *open = strstr(ex, "\n{\n"), *close = open ? strstr(open, "\n}\n") : NULL;
    assert_true(open && close);
    /* the expected output: the lines after the command, before "info:" */
    char *cmd = strstr(close, "$ lightnet example.json\n"), *info = cmd ? strstr(cmd, "info: run time") : NULL;
    assert_true(cmd && info);
    cmd += strlen("$ lightnet example.json\n");
    char *want = gir_strdupf("%.*s", (int)(info - cmd), cmd);
    char *dir = tu_tempdir(), *model = tu_join(dir, "example.json"), *out = tu_join(dir, "stdout.txt");
    assert_true(tu_write(model, open + 1, (size_t)(close + 2 - (open + 1)) + 1));

    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    TU_OK(gir_load(model, NULL, NULL, &g, &err), &err);
    gir_session *s;
    TU_OK(gir_session_new(g, 1, &s, &err), &err);
    assert_int_equal(gir_session_input_count(s), 0);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    gir_session_set_print_stream(s, f);
    TU_OK(gir_session_run(s, &err), &err);
    fclose(f);
    char *got = tu_slurp(out, &len);
    assert_string_equal(got, want);
    assert_string_equal(got, "tensor2:\n[[2.000 3.000 4.000]\n [6.000 7.000 8.000]]\n");
    free(got);
    gir_session_free(s);
    gir_graph_free(g);
    tu_rmtree(dir);
    free(dir);
    free(model);
    free(out);
    free(want);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lightnet_seed_example),
        cmocka_unit_test(test_resnet18),
        cmocka_unit_test(test_mobilenet_v2),
        cmocka_unit_test(test_squeezenet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
