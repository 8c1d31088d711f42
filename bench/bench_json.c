/* Throughput and peak memory of the NNVM-family reader and writer.
 *
 *   bench_json [--quick]
 *
 * Each measurement runs in a forked child, so its peak RSS (getrusage
 * ru_maxrss) is its own.  Measured:
 *   - the largest real files in $GIR_SHARED_DIR/realworld/{mxnet,nnvm,tvm}
 *     (read and write, repeated until 0.3 s have passed);
 *   - generated graphs of 100 000 nodes in each flavour: MXNet and NNVM
 *     (50 000 convolutions and their weights), a TVM executor graph
 *     (99 999 tvm_op calls with its shape, dltype and storage_id lists);
 *     write, then read, each five times in a fresh process, the median run
 *     reported with the range;
 *   - 1 GiB of weights in 256 tensors of 4 MiB: streamed out of a generator
 *     (write), read back lazily and streamed into a second file (copy), and
 *     every tensor loaded once (read);
 * against the targets: graph JSON >= 100 MB/s, weights >= 500 MB/s, peak
 * RSS <= largest tensor + 64 MiB.  Throughput is printed per wall-clock and
 * per CPU second (user + system of the measured part); the targets are
 * judged on CPU time, which a busy machine does not distort.  Generated files go into a temporary
 * directory under $TMPDIR (default /tmp), removed at the end.  The exit
 * status is 0 when every target is met, 1 otherwise. */
#include "core/ir.h"
#include "graphir/model.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void die(const char *what, gir_error *err)
{
    char *m = err ? gir_error_format(err) : NULL;
    fprintf(stderr, "bench_json: %s: %s\n", what, m ? m : "failed");
    free(m);
    _exit(2);
}

/* ---- measurements in a child process -------------------------------------------- */

typedef struct result {
    double seconds;
    double cpu;    /* user + system seconds of the measured part */
    double bytes;  /* processed per run x runs */
    long maxrss_kb;
    int ok;
} result;

typedef void (*job_fn)(void *ctx, result *r);

static result run_child(job_fn fn, void *ctx)
{
    int fds[2];
    result r = { 0 };
    if (pipe(fds) != 0)
        return r;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        result c = { 0 };
        fn(ctx, &c);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        c.maxrss_kb = ru.ru_maxrss;
        c.ok = 1;
        if (write(fds[1], &c, sizeof c) != (ssize_t)sizeof c)
            _exit(3);
        _exit(0);
    }
    close(fds[1]);
    if (pid > 0) {
        if (read(fds[0], &r, sizeof r) != (ssize_t)sizeof r)
            r.ok = 0;
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            r.ok = 0;
    }
    close(fds[0]);
    return r;
}

/* Runs fn `runs` times, each in a fresh child, and returns the run with the
 * median CPU time; *lo and *hi get the slowest and fastest CPU throughput
 * (one run on a shared machine says little). */
static result run_median(job_fn fn, void *ctx, int runs, double *lo, double *hi)
{
    result rs[9];
    if (runs > 9)
        runs = 9;
    *lo = *hi = 0;
    for (int i = 0; i < runs; i++) {
        rs[i] = run_child(fn, ctx);
        if (!rs[i].ok)
            return rs[i];
        double mbs = rs[i].bytes / 1e6 / rs[i].cpu;
        if (i == 0 || mbs < *lo)
            *lo = mbs;
        if (i == 0 || mbs > *hi)
            *hi = mbs;
    }
    for (int i = 1; i < runs; i++) /* insertion sort by CPU time */
        for (int j = i; j > 0 && rs[j - 1].cpu > rs[j].cpu; j--) {
            result t = rs[j];
            rs[j] = rs[j - 1];
            rs[j - 1] = t;
        }
    return rs[runs / 2];
}

static int failures;

static void report(const char *what, const result *r, double min_mbs, double max_rss_mb)
{
    if (!r->ok) {
        printf("%-44s FAILED\n", what);
        failures++;
        return;
    }
    double mbs = r->bytes / 1e6 / r->seconds;
    double cpu_mbs = r->cpu > 0 ? r->bytes / 1e6 / r->cpu : mbs;
    double rss = (double)r->maxrss_kb / 1024.0;
    /* The target is judged on CPU time: on a shared machine the wall clock
     * measures the neighbours. */
    bool fast = min_mbs <= 0 || cpu_mbs >= min_mbs, small = max_rss_mb <= 0 || rss <= max_rss_mb;
    printf("%-40s %8.1f MB/s wall %8.1f MB/s cpu %7.1f MiB RSS", what, mbs, cpu_mbs, rss);
    if (min_mbs > 0)
        printf("  [%s >= %.0f MB/s]", fast ? "ok" : "SLOW", min_mbs);
    if (max_rss_mb > 0)
        printf("  [%s <= %.0f MiB]", small ? "ok" : "TOO BIG", max_rss_mb);
    printf("\n");
    if (!fast || !small)
        failures++;
}

/* ---- real files ------------------------------------------------------------------- */

typedef struct file_job {
    const char *path;
    const char *fmt;
    const char *tmpdir;
    bool write;
} file_job;

static void job_file(void *ctx, result *r)
{
    file_job *j = ctx;
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    if (gir_load(j->path, j->fmt, NULL, &g, &err))
        die(j->path, &err);
    char *out = gir_path_join(j->tmpdir, "real_out.json");
    gir_options *o = gir_options_new();
    gir_options_set(o, "force", "1", &err);
    double size = (double)file_size(j->path), t0 = now(), c0 = cpu_now(), t;
    size_t runs = 0;
    do {
        if (j->write) {
            if (gir_save(g, out, j->fmt, o, &err))
                die(out, &err);
        } else {
            gir_graph *h;
            if (gir_load(j->path, j->fmt, NULL, &h, &err))
                die(j->path, &err);
            gir_graph_free(h);
        }
        runs++;
        t = now() - t0;
    } while (t < 0.3);
    if (j->write) {
        char *pp = gir_path_join(j->tmpdir, "real_out.params");
        size = (double)file_size(out) + (double)file_size(pp);
        free(pp);
    }
    r->seconds = t;
    r->cpu = cpu_now() - c0;
    r->bytes = size * (double)runs;
    gir_options_free(o);
    free(out);
    gir_graph_free(g);
}

/* ---- a generated 100 000-node graph ------------------------------------------------ */

typedef struct big_job {
    const char *path; /* the file written, or read */
    const char *fmt;  /* "mxnet", "nnvm" or "tvm" */
    const char *src;  /* tvm: the generated executor graph a write starts from */
    size_t nodes;     /* operator nodes the file holds */
    bool write;
} big_job;

/* data -> 50 000 x (weight variable, Convolution 3x3 pad 1): 100 001 nodes. */
static gir_graph *make_big(void)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    if (gir_graph_new(&g, &err))
        die("graph", &err);
    int32_t x;
    if (gir_graph_add_value(g, "data", GIR_VALUE_INPUT, &x, &err) || gir_graph_add_input(g, x, &err))
        die("graph", &err);
    g->values[x]->shape = (gir_shape){ .rank = 4, .dims = { 1, 8, 32, 32 } };
    int64_t k[2] = { 3, 3 }, one[2] = { 1, 1 }, pads[4] = { 1, 1, 1, 1 };
    char name[64];
    for (int i = 0; i < 50000; i++) {
        snprintf(name, sizeof name, "conv%d_weight", i);
        int32_t w;
        if (gir_graph_add_value(g, name, GIR_VALUE_INPUT, &w, &err) || gir_graph_add_input(g, w, &err))
            die("graph", &err);
        g->values[w]->shape = (gir_shape){ .rank = 4, .dims = { 8, 8, 3, 3 } };
        snprintf(name, sizeof name, "conv%d", i);
        gir_node *n;
        if (gir_graph_add_node(g, name, GIR_OP_Conv, 2, 1, &n, &err))
            die("graph", &err);
        n->in[0] = x;
        n->in[1] = w;
        if (gir_attrs_set_ints(g, &n->attrs, "kernel_shape", k, 2, &err) ||
            gir_attrs_set_ints(g, &n->attrs, "strides", one, 2, &err) ||
            gir_attrs_set_ints(g, &n->attrs, "dilations", one, 2, &err) || gir_attrs_set_ints(g, &n->attrs, "pads", pads, 4, &err) ||
            gir_attrs_set_int(g, &n->attrs, "group", 1, &err))
            die("attrs", NULL);
        if (gir_node_make_output(g, n, 0, name, &err))
            die("graph", &err);
        x = n->out[0];
    }
    if (gir_graph_add_output(g, x, &err))
        die("graph", &err);
    return g;
}

/* A TVM executor graph: data -> 99 999 tvm_op calls in a chain (100 000
 * nodes), with the shape, dltype and storage_id lists of a compiled graph,
 * in the dmlc layout.  The tvm flavour writes compiled graphs only, so its
 * benchmark starts from this text. */
static void make_exec(const char *path)
{
    enum { N = 100000 };
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_json: cannot write %s\n", path);
        exit(2);
    }
    fprintf(f, "{\n  \"nodes\": [\n    {\n      \"op\": \"null\", \n      \"name\": \"data\", \n"
               "      \"inputs\": []\n    }");
    for (int i = 1; i < N; i++)
        fprintf(f, ", \n    {\n      \"op\": \"tvm_op\", \n      \"name\": \"fused_nn_relu_%d\", \n      \"attrs\": {\n"
                   "        \"flatten_data\": \"0\", \n        \"func_name\": \"fused_nn_relu_%d\", \n"
                   "        \"num_inputs\": \"1\", \n        \"num_outputs\": \"1\"\n      }, \n"
                   "      \"inputs\": [[%d, 0, 0]]\n    }",
                i, i, i - 1);
    fprintf(f, "\n  ], \n  \"arg_nodes\": [0], \n  \"heads\": [[%d, 0, 0]], \n  \"attrs\": {\n"
               "    \"dltype\": [\n      \"list_str\", \n      [",
            N - 1);
    for (int i = 0; i < N; i++)
        fprintf(f, "%s\"float32\"", i ? ", " : "");
    fprintf(f, "]\n    ], \n    \"shape\": [\n      \"list_shape\", \n      [");
    for (int i = 0; i < N; i++)
        fprintf(f, "%s[1, 64, 56, 56]", i ? ", " : "");
    fprintf(f, "]\n    ], \n    \"storage_id\": [\n      \"list_int\", \n      [");
    for (int i = 0; i < N; i++)
        fprintf(f, "%s%d", i ? ", " : "", i % 2);
    fprintf(f, "]\n    ]\n  }, \n  \"node_row_ptr\": [");
    for (int i = 0; i <= N; i++)
        fprintf(f, "%s%d", i ? ", " : "", i);
    fprintf(f, "]\n}");
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_json: cannot write %s\n", path);
        exit(2);
    }
}

static void job_big(void *ctx, result *r)
{
    big_job *j = ctx;
    gir_error err = GIR_ERROR_INIT;
    if (j->write) {
        gir_graph *g;
        if (j->src) {
            if (gir_load(j->src, j->fmt, NULL, &g, &err))
                die(j->src, &err);
        } else {
            g = make_big();
        }
        gir_options *o = gir_options_new();
        gir_options_set(o, "force", "1", &err);
        double t0 = now(), c0 = cpu_now();
        if (gir_save(g, j->path, j->fmt, o, &err))
            die(j->path, &err);
        r->seconds = now() - t0;
        r->cpu = cpu_now() - c0;
        r->bytes = (double)file_size(j->path);
        gir_options_free(o);
        gir_graph_free(g);
    } else {
        double t0 = now(), c0 = cpu_now();
        gir_graph *g;
        if (gir_load(j->path, j->fmt, NULL, &g, &err))
            die(j->path, &err);
        r->seconds = now() - t0;
        r->cpu = cpu_now() - c0;
        r->bytes = (double)file_size(j->path);
        if (gir_graph_node_count(g) != j->nodes)
            die("the 100k-node graph read back with the wrong node count", NULL);
        gir_graph_free(g);
    }
}

/* ---- 1 GiB of weights ------------------------------------------------------------------- */

#define N_TENSORS 256
#define TENSOR_FLOATS (1u << 20) /* 4 MiB */

static gir_status gen_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    (void)err;
    uint32_t seed = (uint32_t)(uintptr_t)ctx;
    uint32_t *p = dst;
    for (uint64_t i = 0; i < nbytes / 4; i++)
        p[i] = seed * 2654435761u + (uint32_t)i;
    return GIR_OK;
}

static const gir_loader gen_loader = { gen_load, NULL };

/* data -> 256 x Add(weight_i): each weight a lazily generated 4 MiB tensor. */
static gir_graph *make_weights(void)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    if (gir_graph_new(&g, &err))
        die("graph", &err);
    int32_t x;
    if (gir_graph_add_value(g, "data", GIR_VALUE_INPUT, &x, &err) || gir_graph_add_input(g, x, &err))
        die("graph", &err);
    gir_shape s = { .rank = 2, .dims = { 1024, TENSOR_FLOATS / 1024 } };
    g->values[x]->shape = s;
    char name[64];
    for (uintptr_t i = 0; i < N_TENSORS; i++) {
        snprintf(name, sizeof name, "w%u", (unsigned)i);
        int32_t w;
        gir_tensor *t;
        if (gir_graph_add_value(g, name, GIR_VALUE_WEIGHT, &w, &err) ||
            gir_tensor_lazy(GIR_DT_F32, &s, &gen_loader, (void *)(i + 1), &t, &err))
            die("weights", &err);
        gir_value_set_data(g->values[w], t);
        gir_tensor_unref(t);
        snprintf(name, sizeof name, "add%u", (unsigned)i);
        gir_node *n;
        if (gir_graph_add_node(g, name, GIR_OP_Add, 2, 1, &n, &err))
            die("graph", &err);
        n->in[0] = x;
        n->in[1] = w;
        if (gir_node_make_output(g, n, 0, name, &err))
            die("graph", &err);
        x = n->out[0];
    }
    if (gir_graph_add_output(g, x, &err))
        die("graph", &err);
    return g;
}

typedef struct weights_job {
    const char *json, *params, *copy_json, *copy_params;
    const char *fmt;
    int mode; /* 0 write from the generator, 1 read + stream into a copy, 2 load every tensor */
} weights_job;

static void job_weights(void *ctx, result *r)
{
    weights_job *j = ctx;
    gir_error err = GIR_ERROR_INIT;
    gir_options *o = gir_options_new();
    gir_options_set(o, "force", "1", &err);
    double t0 = now(), c0 = cpu_now();
    if (j->mode == 0) {
        gir_graph *g = make_weights();
        gir_options_set(o, "params", j->params, &err);
        t0 = now();
        c0 = cpu_now();
        if (gir_save(g, j->json, j->fmt, o, &err))
            die(j->json, &err);
        gir_graph_free(g);
        r->bytes = (double)file_size(j->params);
    } else {
        gir_options *ro = gir_options_new();
        gir_options_set(ro, "params", j->params, &err);
        gir_graph *g;
        if (gir_load(j->json, j->fmt, ro, &g, &err))
            die(j->json, &err);
        if (j->mode == 1) {
            gir_options_set(o, "params", j->copy_params, &err);
            if (gir_save(g, j->copy_json, j->fmt, o, &err))
                die(j->copy_json, &err);
        } else {
            for (size_t i = 0; i < g->n_values; i++) {
                gir_tensor *t = g->values[i]->data;
                if (!t)
                    continue;
                if (gir_tensor_load(t, NULL, &err))
                    die("load", &err);
                gir_tensor_unload(t);
            }
        }
        gir_graph_free(g);
        gir_options_free(ro);
        r->bytes = (double)file_size(j->params);
    }
    r->seconds = now() - t0;
    r->cpu = cpu_now() - c0;
    gir_options_free(o);
}

/* ---- main -------------------------------------------------------------------------------- */

static void rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = gir_path_join(dir, e->d_name);
        if (p)
            unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const char *shared = getenv("GIR_SHARED_DIR");
    const char *tmp = getenv("TMPDIR");
    char *dir = gir_strdupf("%s/bench_json-XXXXXX", tmp ? tmp : "/tmp");
    if (!dir || !mkdtemp(dir)) {
        fprintf(stderr, "bench_json: cannot make a temporary directory\n");
        return 2;
    }
    printf("NNVM-family JSON and params (%s)\n", quick ? "quick" : "full");
    static const struct {
        const char *rel, *fmt;
    } real[] = {
        { "realworld/tvm/relay_deploy_graph.json", "tvm" },
        { "realworld/mxnet/vgg_dnnl_model1.json", "mxnet" },
        { "realworld/mxnet/lenet-symbol.json", "mxnet" },
        { "realworld/nnvm/lenet_nnvm_graph.json", "nnvm" },
    };
    for (size_t i = 0; shared && i < sizeof real / sizeof *real; i++) {
        char *p = gir_strdupf("%s/%s", shared, real[i].rel);
        if (!gir_path_exists(p)) {
            free(p);
            continue;
        }
        char what[96];
        for (int w = 0; w < 2; w++) {
            file_job j = { p, real[i].fmt, dir, w == 1 };
            snprintf(what, sizeof what, "%s %s", w ? "write" : "read", gir_path_basename(p));
            result r = run_child(job_file, &j);
            report(what, &r, 0, 0);
        }
        free(p);
    }
    /* The generated 100k-node graphs: written and read in each flavour
     * (the mxnet and nnvm files from one graph of convolutions, the tvm
     * one from a generated executor graph), five runs each, judged by the
     * median. */
    static const struct {
        const char *fmt, *file, *label;
    } flavours[] = {
        { "mxnet", "big-symbol.json", "MXNet" },
        { "nnvm", "big_nnvm.json", "NNVM" },
        { "tvm", "big_graph.json", "TVM" },
    };
    char *exec = gir_path_join(dir, "exec_graph.json");
    make_exec(exec);
    const int runs = 5;
    for (size_t i = 0; i < sizeof flavours / sizeof *flavours; i++) {
        bool tvm = strcmp(flavours[i].fmt, "tvm") == 0;
        char *big = gir_path_join(dir, flavours[i].file);
        big_job bw = { big, flavours[i].fmt, tvm ? exec : NULL, 0, true };
        big_job br = { big, flavours[i].fmt, NULL, tvm ? 99999 : 50000, false };
        double lo, hi;
        char what[96];
        result r = run_median(job_big, &bw, runs, &lo, &hi);
        snprintf(what, sizeof what, "write 100k-node %s graph (%.1f MB)", flavours[i].label,
                 (double)file_size(big) / 1e6);
        report(what, &r, 100, 0);
        printf("    median of %d runs; cpu %.1f to %.1f MB/s\n", runs, lo, hi);
        r = run_median(job_big, &br, runs, &lo, &hi);
        snprintf(what, sizeof what, "read 100k-node %s graph", flavours[i].label);
        report(what, &r, 100, 0);
        printf("    median of %d runs; cpu %.1f to %.1f MB/s\n", runs, lo, hi);
        if (!getenv("BENCH_KEEP"))
            unlink(big);
        free(big);
    }
    if (!getenv("BENCH_KEEP"))
        unlink(exec);
    free(exec);
    if (!quick) {
        double limit = (double)TENSOR_FLOATS * 4 / 1048576.0 + 64;
        static const char *const fmts[] = { "tvm", "mxnet" };
        for (size_t f = 0; f < 2; f++) {
            const char *fmt = fmts[f];
            bool mx = strcmp(fmt, "mxnet") == 0;
            char *json = gir_path_join(dir, mx ? "w-symbol.json" : "w_graph.json");
            char *params = gir_path_join(dir, "w.params");
            char *cjson = gir_path_join(dir, mx ? "c-symbol.json" : "c_graph.json");
            char *cparams = gir_path_join(dir, "c.params");
            /* The tvm flavour writes compiled graphs only: weights go as nnvm. */
            const char *wfmt = mx ? "mxnet" : "nnvm";
            weights_job j = { json, params, cjson, cparams, wfmt, 0 };
            char what[96];
            result r = run_child(job_weights, &j);
            snprintf(what, sizeof what, "write 1 GiB of %s params (generated)", mx ? "MXNet" : "TVM");
            report(what, &r, 500, limit);
            j.mode = 1;
            r = run_child(job_weights, &j);
            snprintf(what, sizeof what, "stream 1 GiB of %s params into a copy", mx ? "MXNet" : "TVM");
            report(what, &r, 500, limit);
            j.mode = 2;
            r = run_child(job_weights, &j);
            snprintf(what, sizeof what, "load 1 GiB of %s params tensor by tensor", mx ? "MXNet" : "TVM");
            report(what, &r, 500, limit);
            unlink(json);
            unlink(params);
            unlink(cjson);
            unlink(cparams);
            free(json);
            free(params);
            free(cjson);
            free(cparams);
        }
    }
    if (!getenv("BENCH_KEEP"))
        rmtree(dir);
    free(dir);
    printf("%s\n", failures ? "some targets were missed" : "all targets met");
    return failures ? 1 : 0;
}
