/* GEMM throughput: GFLOP/s of gir_sgemm for square and convolution-like
 * shapes, per kernel the CPU supports, with 1 and 2 threads.
 * Usage: bench_gemm [--quick] [--best] [--cpu] [--isa NAME] [--match TEXT]
 * Figures are the median over repeated runs (--best: the fastest run, which
 * is steadier on a shared machine; --cpu: per second of the process's CPU
 * time instead of wall time, which other load disturbs much less). */
#include "runtime/gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void)
{
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct shape {
    const char *what;
    size_t m, n, k;
    bool packed;
} shape;

static const shape shapes[] = {
    { "square 256", 256, 256, 256, false },
    { "square 512", 512, 512, 512, false },
    { "square 1024", 1024, 1024, 1024, false },
    { "resnet conv1 7x7 (packed A)", 64, 12544, 147, true },
    { "resnet 3x3 64ch 56x56 (packed A)", 64, 3136, 576, true },
    { "resnet 3x3 128ch 28x28 (packed A)", 128, 784, 1152, true },
    { "resnet 3x3 256ch 14x14 (packed A)", 256, 196, 2304, true },
    { "resnet 3x3 512ch 7x7 (packed A)", 512, 49, 4608, true },
    { "resnet50 1x1 256->64 56x56 (packed A)", 64, 3136, 256, true },
    { "resnet50 1x1 64->256 56x56 (packed A)", 256, 3136, 64, true },
    { "resnet50 1x1 512->128 28x28 (packed A)", 128, 784, 512, true },
    { "resnet50 1x1 256->1024 14x14 (packed A)", 1024, 196, 256, true },
    { "resnet50 1x1 2048->512 7x7 (packed A)", 512, 49, 2048, true },
    { "mobilenet 1x1 16->96 112x112 (packed A)", 96, 12544, 16, true },
    { "mobilenet 1x1 96->24 56x56 (packed A)", 24, 3136, 96, true },
    { "mobilenet 1x1 320->1280 7x7 (packed A)", 1280, 49, 320, true },
    { "fc 512->1000 batch 1", 1, 1000, 512, false },
    { "squeeze-excitation 1x1 960->240 (packed A)", 240, 1, 960, true },
    { "squeezenet 1x1 512->1000 13x13 (packed A)", 1000, 169, 512, true },
    { "regnet 1x1 32->32 112x112 (packed A)", 32, 12544, 32, true },
    { "convnext MLP 96->384 56x56 tokens", 3136, 384, 96, false },
    { "convnext MLP 384->96 56x56 tokens", 3136, 96, 384, false },
    { "convnext MLP 384->1536 14x14 tokens", 196, 1536, 384, false },
    { "convnext MLP 3072->768 7x7 tokens", 49, 768, 3072, false },
};

int main(int argc, char **argv)
{
    bool quick = false, best = false;
    const char *match = NULL;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--best") == 0)
            best = true;
        else if (strcmp(argv[i], "--cpu") == 0)
            clock_id = CLOCK_PROCESS_CPUTIME_ID;
        else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--match") == 0 && i + 1 < argc)
            match = argv[++i];
        else {
            fprintf(stderr, "usage: bench_gemm [--quick] [--best] [--cpu] [--isa NAME] [--match TEXT]\n");
            return 1;
        }
    }
    double budget = quick ? 0.05 : 0.4;
    printf("GFLOP/s (%s of runs, %s time)\n", best ? "fastest" : "median",
           clock_id == CLOCK_MONOTONIC ? "wall" : "CPU");
    printf("%-42s %-8s %8s %8s\n", "shape (M x N x K)", "kernel", "1 thr", "2 thr");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const shape *sh = &shapes[s];
        if (match && !strstr(sh->what, match))
            continue;
        float *a = malloc(sh->m * sh->k * sizeof(float));
        float *b = malloc(sh->k * sh->n * sizeof(float));
        float *c = malloc(sh->m * sh->n * sizeof(float));
        if (!a || !b || !c)
            return 5;
        srand(1);
        for (size_t i = 0; i < sh->m * sh->k; i++)
            a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        for (size_t i = 0; i < sh->k * sh->n; i++)
            b[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        for (int isa = GIR_GEMM_GENERIC; isa < GIR_GEMM_ISA_COUNT_; isa++) {
            if (!gir_gemm_isa_supported((gir_gemm_isa)isa))
                continue;
            if (only && strcmp(only, gir_gemm_isa_name((gir_gemm_isa)isa)) != 0)
                continue;
            char label[64];
            snprintf(label, sizeof label, "%s %zux%zux%zu", sh->what, sh->m, sh->n, sh->k);
            printf("%-42s %-8s", label, gir_gemm_isa_name((gir_gemm_isa)isa));
            for (int nt = 1; nt <= 2; nt++) {
                gir_threads *th;
                gir_error err = GIR_ERROR_INIT;
                if (gir_threads_new(nt, &th, &err))
                    return 5;
                gir_gemm_packed pk;
                if (sh->packed && gir_gemm_pack_a((gir_gemm_isa)isa, false, sh->m, sh->k, a, sh->k, &pk, &err))
                    return 5;
                gir_gemm_args g = { 0 };
                g.m = sh->m;
                g.n = sh->n;
                g.k = sh->k;
                g.alpha = 1.0f;
                g.a = a;
                g.lda = sh->k;
                g.packed_a = sh->packed ? &pk : NULL;
                g.b = b;
                g.ldb = sh->n;
                g.c = c;
                g.ldc = sh->n;
                g.isa = (gir_gemm_isa)isa;
                gir_sgemm(&g, th); /* warm-up */
                double t[64];
                int runs = 0;
                double start = now();
                while (runs < 64 && (runs < 5 || now() - start < budget)) {
                    double t0 = now();
                    gir_sgemm(&g, th);
                    t[runs++] = now() - t0;
                }
                qsort(t, (size_t)runs, sizeof t[0], cmp_double);
                double flops = 2.0 * (double)sh->m * (double)sh->n * (double)sh->k;
                printf(" %8.1f", flops / t[best ? 0 : runs / 2] * 1e-9);
                fflush(stdout);
                if (sh->packed)
                    gir_gemm_packed_free(&pk);
                gir_threads_free(th);
            }
            printf("\n");
        }
        free(a);
        free(b);
        free(c);
    }
    return 0;
}
