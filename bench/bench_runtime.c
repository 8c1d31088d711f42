/* Inference latency of the reference runtime on ResNet-18, MobileNetV2 and
 * SqueezeNet 1.0 (../shared/models, batch 1), next to the ONNX Runtime
 * figures of ../shared/models/README.md: the median of 10 runs after a
 * warm-up, loading and planning excluded, with 1 and 2 threads.
 * Usage: bench_runtime [--runs N] [MODEL.onnx ...] */
#include "core/ir.h"
#include "formats/format.h"
#include "graphir/runtime.h"
#include "io/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *shared_dir(void)
{
    const char *d = getenv("GIR_SHARED_DIR");
    return d ? d : "../shared";
}

/* The ONNX Runtime single-thread figure for a model from the README table
 * ("| resnet18 | 42 ms | ..."), or -1. */
static double ort_ms(const char *model)
{
    char *path = gir_path_join(shared_dir(), "models/README.md");
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (!f)
        return -1;
    char line[512], key[128];
    snprintf(key, sizeof key, "| %s |", model);
    double ms = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) {
            ms = strtod(line + strlen(key), NULL);
            break;
        }
    fclose(f);
    return ms;
}

static int bench_one(const char *path, const char *label, gir_tensor *x, int runs)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    if (gir_load(path, NULL, NULL, &g, &err)) {
        char *m = gir_error_format(&err);
        printf("%-16s cannot load: %s\n", label, m ? m : "?");
        free(m);
        gir_error_clear(&err);
        return 1;
    }
    double med[2] = { 0, 0 }, lo[2] = { 0, 0 };
    for (int t = 0; t < 2; t++) {
        gir_session *s;
        if (gir_session_new(g, t + 1, &s, &err) || gir_session_set_input(s, 0, x, &err) ||
            gir_session_run(s, &err)) {
            char *m = gir_error_format(&err);
            printf("%-16s cannot run: %s\n", label, m ? m : "?");
            free(m);
            gir_error_clear(&err);
            gir_graph_free(g);
            return 1;
        }
        double *ts = malloc((size_t)runs * sizeof *ts);
        if (!ts)
            return 1;
        for (int r = 0; r < runs; r++) {
            double t0 = now_ms();
            gir_session_run(s, &err);
            ts[r] = now_ms() - t0;
        }
        qsort(ts, (size_t)runs, sizeof *ts, cmp_double);
        med[t] = runs % 2 ? ts[runs / 2] : (ts[runs / 2 - 1] + ts[runs / 2]) / 2;
        lo[t] = ts[0];
        free(ts);
        gir_session_free(s);
    }
    double ort = ort_ms(label);
    printf("%-16s %9.2f %9.2f %9.2f %9.2f", label, med[0], lo[0], med[1], lo[1]);
    if (ort > 0)
        printf(" %9.0f %8.2fx\n", ort, med[0] / ort);
    else
        printf(" %9s %9s\n", "n/a", "n/a");
    gir_graph_free(g);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 10, first = 1;
    if (argc > 2 && strcmp(argv[1], "--runs") == 0) {
        runs = atoi(argv[2]);
        if (runs < 1 || runs > 10000) {
            fprintf(stderr, "usage: bench_runtime [--runs N] [MODEL.onnx ...]\n");
            return 1;
        }
        first = 3;
    }
    if (!gir_format_find("onnx")) {
        printf("bench_runtime: this build has no ONNX reader; nothing to measure\n");
        return 0;
    }
    gir_error err = GIR_ERROR_INIT;
    char *inpath = gir_path_join(shared_dir(), "models/input_1x3x224x224.npy");
    gir_tensor *x = NULL;
    if (!inpath || gir_npy_read(inpath, &x, &err)) {
        char *m = gir_error_format(&err);
        fprintf(stderr, "bench_runtime: %s\n", m ? m : "out of memory");
        free(m);
        free(inpath);
        return 5;
    }
    free(inpath);
    printf("latency in ms, median of %d runs after a warm-up (batch 1, input [1,3,224,224])\n", runs);
    printf("%-16s %9s %9s %9s %9s %9s %9s\n", "model", "1 thr", "1 thr min", "2 thr", "2 thr min", "ORT 1 thr",
           "vs ORT");
    int rc = 0;
    if (first < argc) {
        for (int i = first; i < argc; i++) {
            /* the label is the file name without its extension */
            char label[64];
            snprintf(label, sizeof label, "%s", gir_path_basename(argv[i]));
            char *dot = strrchr(label, '.');
            if (dot && dot != label)
                *dot = '\0';
            rc |= bench_one(argv[i], label, x, runs);
        }
    } else {
        static const char *const models[] = { "resnet18", "mobilenet_v2", "squeezenet1_0" };
        for (size_t i = 0; i < 3; i++) {
            char rel[64];
            snprintf(rel, sizeof rel, "models/%s.onnx", models[i]);
            char *p = gir_path_join(shared_dir(), rel);
            rc |= bench_one(p, models[i], x, runs);
            free(p);
        }
    }
    gir_tensor_unref(x);
    return rc;
}
