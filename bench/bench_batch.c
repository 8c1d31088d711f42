/* Models per second of `graphconv batch`, for 1000 small generated models
 * and for the real zoo, with -j 1 and -j 2.
 *
 *   bench_batch GRAPHCONV [COUNT]
 *
 * The generated models are small convolutional networks of random depth and
 * width (seeded, so every run generates the same zoo), written as NNVM JSON
 * with TVM .params through libgraphir, then converted to NNabla .nnp.  The
 * real zoo is every model under $GIR_SHARED_DIR/realworld and
 * $GIR_SHARED_DIR/models converted to ONNX (models ONNX cannot express are
 * refused, as in real use, and counted).  Temporary files go under $TMPDIR. */
#include "core/ir.h"
#include "graphir/model.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static void die(const char *what, gir_error *err)
{
    char *m = err ? gir_error_format(err) : NULL;
    fprintf(stderr, "bench_batch: %s: %s\n", what, m ? m : "failed");
    free(m);
    exit(2);
}

static int32_t weight(gir_graph *g, const char *name, gir_shape s)
{
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t;
    int32_t v;
    if (gir_tensor_new(GIR_DT_F32, &s, &t, &err) || gir_graph_add_value(g, name, GIR_VALUE_WEIGHT, &v, &err))
        die("weight", &err);
    float *d = t->data;
    for (int64_t i = 0; i < gir_shape_numel(&s); i++)
        d[i] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
    gir_value_set_data(g->values[v], t);
    gir_tensor_unref(t);
    return v;
}

/* data [1,C,H,W] -> (Conv+Relu [+MaxPool]) x depth -> Flatten -> Gemm. */
static gir_graph *generate(int k)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    if (gir_graph_new(&g, &err))
        die("graph", &err);
    int64_t c = 1 + rnd() % 3, hw = 16 + 4 * (rnd() % 4);
    int depth = 1 + (int)(rnd() % 4);
    int32_t x;
    if (gir_graph_add_value(g, "data", GIR_VALUE_INPUT, &x, &err) || gir_graph_add_input(g, x, &err))
        die("input", &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = (gir_shape){ 4, { 1, c, hw, hw } };
    char name[64];
    for (int l = 0; l < depth; l++) {
        int64_t oc = 4 + 4 * (rnd() % 4);
        gir_node *n;
        snprintf(name, sizeof name, "conv%d", l);
        if (gir_graph_add_node(g, name, GIR_OP_Conv, 3, 1, &n, &err))
            die("node", &err);
        n->in[0] = x;
        snprintf(name, sizeof name, "conv%d_weight", l);
        n->in[1] = weight(g, name, (gir_shape){ 4, { oc, c, 3, 3 } });
        snprintf(name, sizeof name, "conv%d_bias", l);
        n->in[2] = weight(g, name, (gir_shape){ 1, { oc } });
        int64_t ks[] = { 3, 3 }, st[] = { 1, 1 }, pads[] = { 1, 1, 1, 1 }, dil[] = { 1, 1 };
        gir_attrs_set_ints(g, &n->attrs, "kernel_shape", ks, 2, &err);
        gir_attrs_set_ints(g, &n->attrs, "strides", st, 2, &err);
        gir_attrs_set_ints(g, &n->attrs, "pads", pads, 4, &err);
        gir_attrs_set_ints(g, &n->attrs, "dilations", dil, 2, &err);
        gir_attrs_set_int(g, &n->attrs, "group", 1, &err);
        snprintf(name, sizeof name, "conv%d_out", l);
        if (gir_node_make_output(g, n, 0, name, &err))
            die("output", &err);
        snprintf(name, sizeof name, "relu%d", l);
        gir_node *r;
        if (gir_graph_add_node(g, name, GIR_OP_Relu, 1, 1, &r, &err))
            die("node", &err);
        r->in[0] = n->out[0];
        snprintf(name, sizeof name, "relu%d_out", l);
        if (gir_node_make_output(g, r, 0, name, &err))
            die("output", &err);
        x = r->out[0];
        c = oc;
        if (hw >= 8 && rnd() % 2) {
            gir_node *p;
            snprintf(name, sizeof name, "pool%d", l);
            if (gir_graph_add_node(g, name, GIR_OP_MaxPool, 1, 1, &p, &err))
                die("node", &err);
            p->in[0] = x;
            int64_t k2[] = { 2, 2 }, s2[] = { 2, 2 }, p0[] = { 0, 0, 0, 0 };
            gir_attrs_set_ints(g, &p->attrs, "kernel_shape", k2, 2, &err);
            gir_attrs_set_ints(g, &p->attrs, "strides", s2, 2, &err);
            gir_attrs_set_ints(g, &p->attrs, "pads", p0, 4, &err);
            snprintf(name, sizeof name, "pool%d_out", l);
            if (gir_node_make_output(g, p, 0, name, &err))
                die("output", &err);
            x = p->out[0];
            hw /= 2;
        }
    }
    gir_node *f, *d;
    if (gir_graph_add_node(g, "flatten", GIR_OP_Flatten, 1, 1, &f, &err) ||
        gir_node_make_output(g, f, 0, "flat", &err))
        die("node", &err);
    f->in[0] = x;
    gir_attrs_set_int(g, &f->attrs, "axis", 1, &err);
    int64_t classes = 10;
    if (gir_graph_add_node(g, "fc", GIR_OP_Gemm, 3, 1, &d, &err) || gir_node_make_output(g, d, 0, "logits", &err))
        die("node", &err);
    d->in[0] = f->out[0];
    d->in[1] = weight(g, "fc_weight", (gir_shape){ 2, { classes, c * hw * hw } });
    d->in[2] = weight(g, "fc_bias", (gir_shape){ 1, { classes } });
    gir_attrs_set_int(g, &d->attrs, "transB", 1, &err);
    if (gir_graph_add_output(g, d->out[0], &err))
        die("output", &err);
    (void)k;
    if (gir_graph_finish(g, &err))
        die("finish", &err);
    return g;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs graphconv batch; returns the wall time. */
static double run_batch(const char *gc, char *const *inputs, int n_in, const char *to, const char *out, int jobs)
{
    char jarg[16];
    snprintf(jarg, sizeof jarg, "%d", jobs);
    char *argv[64];
    int a = 0;
    argv[a++] = (char *)gc;
    argv[a++] = "batch";
    for (int i = 0; i < n_in && a < 50; i++)
        argv[a++] = inputs[i];
    argv[a++] = "--to";
    argv[a++] = (char *)to;
    argv[a++] = "-o";
    argv[a++] = (char *)out;
    argv[a++] = "-j";
    argv[a++] = jarg;
    argv[a++] = "-q";
    argv[a++] = "-f";
    argv[a++] = "--report";
    argv[a++] = "/dev/null";
    argv[a] = NULL;
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        execv(gc, argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
        die("running graphconv batch", NULL);
    return now() - t0;
}

static int count_models(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.json' -o -name '*.nnp' -o -name '*.onnx' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = 0;
        pclose(p);
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_batch GRAPHCONV [COUNT]\n");
        return 1;
    }
    const char *gc = argv[1];
    int count = argc > 2 ? atoi(argv[2]) : 1000;
    const char *tmp = getenv("TMPDIR");
    char root[512];
    snprintf(root, sizeof root, "%s/graphconv-bench-batch-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(root))
        die("temporary directory", NULL);
    char zoo[600];
    snprintf(zoo, sizeof zoo, "%s/zoo", root);
    mkdir(zoo, 0777);
    double t0 = now();
    uint64_t bytes = 0;
    for (int k = 0; k < count; k++) {
        gir_graph *g = generate(k);
        char path[700];
        snprintf(path, sizeof path, "%s/m%04d.json", zoo, k);
        gir_error err = GIR_ERROR_INIT;
        if (gir_save(g, path, "nnvm", NULL, &err))
            die("save", &err);
        for (size_t i = 0; i < g->n_values; i++)
            if (g->values[i]->data)
                bytes += g->values[i]->data->nbytes;
        gir_graph_free(g);
    }
    printf("generated %d models (%.1f MB of weights) in %.2f s\n", count, (double)bytes / 1e6, now() - t0);
    printf("%-28s %6s %10s %10s\n", "batch", "models", "-j 1 m/s", "-j 2 m/s");
    char out[700];
    char *in1[] = { zoo };
    double t[2];
    for (int j = 1; j <= 2; j++) {
        snprintf(out, sizeof out, "%s/out%d", root, j);
        t[j - 1] = run_batch(gc, in1, 1, "nnabla", out, j);
    }
    printf("%-28s %6d %10.1f %10.1f\n", "generated -> nnabla", count, count / t[0], count / t[1]);
    const char *shared = getenv("GIR_SHARED_DIR");
    if (shared) {
        char rw[600], md[600];
        snprintf(rw, sizeof rw, "%s/realworld", shared);
        snprintf(md, sizeof md, "%s/models", shared);
        char *in2[] = { rw, md };
        int n = count_models(rw) + count_models(md);
        for (int j = 1; j <= 2; j++) {
            snprintf(out, sizeof out, "%s/real%d", root, j);
            t[j - 1] = run_batch(gc, in2, 2, "onnx", out, j);
        }
        printf("%-28s %6d %10.1f %10.1f\n", "real zoo -> onnx", n, n / t[0], n / t[1]);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_batch: could not remove %s\n", root);
    return 0;
}
