/* .nnp throughput and peak memory with about 1 GB of parameters.
 *
 *   bench_nnp [MEGABYTES] [DIR]
 *
 * A chain of Gemm layers whose weights total MEGABYTES (default 1024) is
 * generated alone (the weights come from an LCG in their loader: the cost
 * that both write phases include, shown on its own), written as .nnp
 * (parameter.h5), read back with every weight streamed through (loaded,
 * summed, unloaded), converted .nnp -> .nnp, and written with
 * parameter.protobuf; every write creates a new file.  Each phase runs in its own child process so its
 * peak resident size is its own.  Targets: weights streamed at >= 500 MB/s,
 * peak RSS <= largest tensor + 64 MB. */
#include "core/ir.h"
#include "graphir/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIDE 4096 /* each weight is SIDE x SIDE float32 = 64 MiB */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, gir_error *err)
{
    char *s = gir_error_format(err);
    fprintf(stderr, "bench_nnp: %s: %s\n", what, s ? s : "?");
    free(s);
    exit(1);
}

/* Weights are generated on load, so building the graph costs no memory. */
typedef struct gen {
    uint32_t seed;
} gen;

static gir_status gen_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    (void)err;
    uint32_t s = ((gen *)ctx)->seed;
    float *f = dst;
    for (uint64_t i = 0; i < nbytes / 4; i++) {
        s = s * 1664525u + 1013904223u;
        f[i] = (float)(s >> 8) * (1.0f / 16777216.0f) - 0.5f;
    }
    return GIR_OK;
}

static void gen_release(void *ctx)
{
    free(ctx);
}

static const gir_loader gen_loader = { gen_load, gen_release };

static int32_t weight(gir_graph *g, const char *name, int rank, int64_t d0, int64_t d1, uint32_t seed)
{
    gir_error err = GIR_ERROR_INIT;
    gir_shape s = { rank, { d0, d1 } };
    gen *c = malloc(sizeof *c);
    c->seed = seed;
    gir_tensor *t;
    if (gir_tensor_lazy(GIR_DT_F32, &s, &gen_loader, c, &t, &err))
        die("tensor", &err);
    int32_t idx;
    if (gir_graph_add_value(g, name, GIR_VALUE_WEIGHT, &idx, &err))
        die("value", &err);
    gir_value_set_data(g->values[idx], t);
    gir_tensor_unref(t);
    return idx;
}

static gir_graph *build(int layers)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    if (gir_graph_new(&g, &err))
        die("graph", &err);
    g->name = "bench";
    int32_t x;
    gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = (gir_shape){ 2, { 1, SIDE } };
    gir_graph_add_input(g, x, &err);
    int32_t prev = x;
    for (int i = 0; i < layers; i++) {
        char name[64];
        snprintf(name, sizeof name, "fc%d/affine/W", i);
        int32_t w = weight(g, name, 2, SIDE, SIDE, (uint32_t)i * 7919u + 1);
        snprintf(name, sizeof name, "fc%d/affine/b", i);
        int32_t b = weight(g, name, 1, SIDE, 0, (uint32_t)i * 104729u + 3);
        gir_node *n;
        snprintf(name, sizeof name, "fc%d", i);
        if (gir_graph_add_node(g, name, GIR_OP_Gemm, 3, 1, &n, &err))
            die("node", &err);
        n->in[0] = prev;
        n->in[1] = w;
        n->in[2] = b;
        snprintf(name, sizeof name, "fc%d_out", i);
        if (gir_node_make_output(g, n, 0, name, &err))
            die("output", &err);
        prev = n->out[0];
    }
    gir_graph_add_output(g, prev, &err);
    return g;
}

static gir_options *force_opts(const char *pf)
{
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    gir_options_set(o, "force", "1", &err);
    if (pf)
        gir_options_set(o, "param-format", pf, &err);
    return o;
}

/* Loads every weight once, summing it, and drops it again. */
static double stream(gir_graph *g, uint64_t *bytes)
{
    gir_error err = GIR_ERROR_INIT;
    double sum = 0;
    *bytes = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        gir_value *v = g->values[i];
        if (v->kind != GIR_VALUE_WEIGHT || !v->data)
            continue;
        const float *d;
        if (gir_tensor_load(v->data, (const void **)&d, &err))
            die("load", &err);
        for (uint64_t k = 0; k < v->data->nbytes / 4; k += 1024)
            sum += d[k];
        *bytes += v->data->nbytes;
        gir_tensor_unload(v->data);
    }
    return sum;
}

typedef enum phase { P_GEN, P_WRITE, P_READ, P_CONVERT, P_WRITE_PB } phase;

static void child(phase p, int layers, const char *dir)
{
    gir_error err = GIR_ERROR_INIT;
    char a[4096], b[4096], c[4096];
    snprintf(a, sizeof a, "%s/bench_a.nnp", dir);
    snprintf(b, sizeof b, "%s/bench_b.nnp", dir);
    snprintf(c, sizeof c, "%s/bench_c.nnp", dir); /* every write creates a new file */
    double t0 = now();
    uint64_t bytes = (uint64_t)layers * ((uint64_t)SIDE * SIDE + SIDE) * 4;
    const char *what = "";
    if (p == P_GEN) {
        /* What the writers pay before writing a byte: every weight is
         * generated (malloc, page faults, the LCG) and dropped again. */
        gir_graph *g = build(layers);
        t0 = now();
        double sum = stream(g, &bytes);
        what = "generate weights only (in writes)";
        if (sum == 12345.678)
            puts("");
        gir_graph_free(g);
    } else if (p == P_WRITE || p == P_WRITE_PB) {
        gir_graph *g = build(layers);
        gir_options *o = force_opts(p == P_WRITE_PB ? "protobuf" : NULL);
        t0 = now();
        if (gir_save(g, p == P_WRITE_PB ? c : a, "nnabla", o, &err))
            die("write", &err);
        what = p == P_WRITE_PB ? "write .nnp (parameter.protobuf)" : "write .nnp (parameter.h5)";
        gir_options_free(o);
        gir_graph_free(g);
    } else if (p == P_READ) {
        gir_graph *g;
        if (gir_load(a, NULL, NULL, &g, &err))
            die("read", &err);
        double sum = stream(g, &bytes);
        what = "read .nnp, stream every weight";
        if (sum == 12345.678)
            puts("");
        gir_graph_free(g);
    } else {
        gir_graph *g;
        if (gir_load(a, NULL, NULL, &g, &err))
            die("read", &err);
        gir_options *o = force_opts(NULL);
        if (gir_save(g, b, "nnabla", o, &err))
            die("convert", &err);
        what = "convert .nnp -> .nnp";
        gir_options_free(o);
        gir_graph_free(g);
    }
    double dt = now() - t0;
    printf("%-36s %8.2f s  %8.1f MB/s", what, dt, (double)bytes / 1e6 / dt);
    fflush(stdout);
    _exit(0);
}

int main(int argc, char **argv)
{
    long mb = argc > 1 ? strtol(argv[1], NULL, 10) : 1024;
    const char *dir = argc > 2 ? argv[2] : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int layers = (int)(mb / 64);
    if (layers < 1)
        layers = 1;
    double largest = (double)SIDE * SIDE * 4 / 1048576.0;
    printf("bench_nnp: %d weights of %d x %d float32 (%.0f MiB each, %.0f MiB in all) in %s\n", layers, SIDE, SIDE,
           largest, largest * layers, dir);
    printf("targets: >= 500 MB/s, peak RSS <= %.0f MiB (largest tensor + 64 MiB)\n", largest + 64);
    /* leftovers of an interrupted run would make the writes replace files */
    const char *names[] = { "bench_a.nnp", "bench_b.nnp", "bench_c.nnp" };
    for (size_t i = 0; i < 3; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    int fails = 0;
    static const phase phases[] = { P_GEN, P_WRITE, P_READ, P_CONVERT, P_WRITE_PB };
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            child(phases[i], layers, dir);
        int status;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
            printf("  phase failed\n");
            return 1;
        }
        double rss = (double)ru.ru_maxrss / 1024.0;
        printf("  peak RSS %7.1f MiB%s\n", rss, rss <= largest + 64 ? "" : "  (above target)");
        fails += rss > largest + 64;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_a.nnp", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/bench_b.nnp", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/bench_c.nnp", dir);
    unlink(path);
    return 0;
}
