/* The runtime next to ONNX Runtime, side by side in one run: for each model
 * and thread count, one worker process runs our runtime and one runs ONNX
 * Runtime (onnxruntime-node, bench/ort_worker.js); both load the model, warm
 * up and write their first output, then this program asks them for single
 * timed runs in turn (ours then ORT, ORT then ours, ...), so both see the
 * same machine load, with a pause before each run (--gap MS, default 50)
 * so that the other process's threads, which may spin for a while after
 * its run (ONNX Runtime's pool does), have gone to sleep.  It prints both medians, their ratio, each process's
 * peak RSS (getrusage of the child), the bound 1.25 x file + 80 MiB, and the
 * largest difference of the outputs (a mismatch is |ours - ort| > 1e-4 *
 * max(1, |ort|)), then the geometric mean of the ratios per thread count.
 *
 * Models: ../shared/models (resnet18, mobilenet_v2, squeezenet1_0) and the
 * torchvision exports of scripts/torchvision_export.py, made in the cache
 * folder (--tv-dir, $GIR_TV_DIR, default $XDG_CACHE_HOME or
 * ~/.cache /graphconv-torchvision) when missing.
 * ONNX Runtime: $ORT_DIR (or --ort-dir) is a folder where
 * `npm install --ignore-scripts onnxruntime-node` was run.
 *
 * Usage: bench_ort [--runs N] [--warmup N] [--threads LIST] [--only NAMES]
 *                  [--gap MS] [--spin US] [--ort-dir DIR] [--tv-dir DIR] [--source-root DIR]
 * --spin sets how long our worker threads wait busy after a job
 * (gir_session_set_spin; the library's default when not given).
 * Exit status 1 when an output differs, a model fails to run, or setup
 * fails; figures never change the exit status. */
#include "core/ir.h"
#include "formats/format.h"
#include "graphir/runtime.h"
#include "io/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* CPU time of the whole process (every thread), user and system. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void report_error(const char *what, gir_error *err)
{
    char *m = gir_error_format(err);
    fprintf(stderr, "bench_ort: %s: %s\n", what, m ? m : "?");
    free(m);
    gir_error_clear(err);
}

/* ---- the worker that runs our runtime (bench_ort --worker ...) ---------- */

static int worker(char **argv)
{
    const char *model = argv[0], *input = argv[1], *out = argv[4];
    int threads = atoi(argv[2]), warmup = atoi(argv[3]);
    long spin = atol(argv[5]); /* --spin, or -1: the library's default */
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    gir_session *s = NULL;
    gir_tensor *x = NULL;
    int rc = 1;
    if (gir_load(model, NULL, NULL, &g, &err) || gir_npy_read(input, &x, &err) ||
        gir_session_new(g, threads, &s, &err) || gir_session_set_input(s, 0, x, &err)) {
        report_error(model, &err);
        goto done;
    }
    if (spin >= 0)
        gir_session_set_spin(s, (uint32_t)spin);
    for (int i = 0; i < (warmup < 1 ? 1 : warmup); i++)
        if (gir_session_run(s, &err)) {
            report_error(model, &err);
            goto done;
        }
    if (gir_npy_save(out, gir_session_output(s, 0), true, &err)) {
        report_error(out, &err);
        goto done;
    }
    printf("ready\n");
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "run", 3) != 0)
            continue;
        double t0 = now_ms(), c0 = cpu_ms();
        if (gir_session_run(s, &err)) {
            report_error(model, &err);
            goto done;
        }
        printf("%.4f %.4f\n", now_ms() - t0, cpu_ms() - c0);
        fflush(stdout);
    }
    rc = 0;
done:
    gir_session_free(s);
    gir_tensor_unref(x);
    gir_graph_free(g);
    return rc;
}

/* ---- driving the two workers ------------------------------------------- */

typedef struct proc {
    pid_t pid;
    int to;    /* its stdin */
    FILE *from; /* its stdout */
    long maxrss_kib;
    bool ok;
} proc;

static bool proc_start(proc *p, char *const argv[])
{
    int in[2], out[2];
    memset(p, 0, sizeof *p);
    p->pid = -1;
    if (pipe2(in, O_CLOEXEC) != 0)
        return false;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return false;
    }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execvp(argv[0], argv);
        fprintf(stderr, "bench_ort: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    p->pid = pid;
    p->to = in[1];
    p->from = fdopen(out[0], "r");
    if (!p->from) {
        close(out[0]);
        return false;
    }
    char line[64];
    p->ok = fgets(line, sizeof line, p->from) && strncmp(line, "ready", 5) == 0;
    return p->ok;
}

static int gap_ms = 50;
static long spin_us = -1; /* --spin: -1 leaves the library's default */

/* One timed run, after the pause: the latency the worker measured (and its
 * CPU time in *cpu), or -1. */
static double proc_run(proc *p, double *cpu)
{
    char line[96], *end;
    struct timespec gap = { gap_ms / 1000, (long)(gap_ms % 1000) * 1000000L };
    while (nanosleep(&gap, &gap) != 0 && errno == EINTR)
        ;
    if (!p->ok || write(p->to, "run\n", 4) != 4 || !fgets(line, sizeof line, p->from)) {
        p->ok = false;
        return -1;
    }
    double ms = strtod(line, &end);
    *cpu = strtod(end, NULL);
    return ms;
}

static void proc_finish(proc *p)
{
    if (p->to > 0)
        close(p->to);
    if (p->from)
        fclose(p->from);
    if (p->pid > 0) {
        int status;
        struct rusage ru;
        if (wait4(p->pid, &status, 0, &ru) == p->pid) {
            p->maxrss_kib = ru.ru_maxrss;
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                p->ok = false;
        }
    }
    p->to = 0;
    p->from = NULL;
    p->pid = -1;
}

/* The largest |a - b| / max(1, |b|) and |a - b| over two .npy files (b =
 * ONNX Runtime's), or -1 when they cannot be compared. */
static double compare_outputs(const char *ours, const char *ort, double *max_abs, double *max_ref)
{
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *a = NULL, *b = NULL;
    double worst = -1;
    *max_abs = -1;
    *max_ref = 0;
    const void *pa, *pb;
    if (gir_npy_read(ours, &a, &err) || gir_npy_read(ort, &b, &err) || gir_tensor_load(a, &pa, &err) ||
        gir_tensor_load(b, &pb, &err)) {
        report_error("comparing outputs", &err);
        goto done;
    }
    if (gir_tensor_dtype(a) != GIR_DT_F32 || gir_tensor_dtype(b) != GIR_DT_F32 ||
        !gir_shape_equal(gir_tensor_shape(a), gir_tensor_shape(b))) {
        fprintf(stderr, "bench_ort: outputs differ in type or shape\n");
        goto done;
    }
    size_t n = (size_t)(gir_tensor_nbytes(a) / 4);
    const float *x = pa, *y = pb;
    worst = 0;
    *max_abs = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - (double)y[i]);
        if (isnan(d) && !(isnan(x[i]) && isnan(y[i])))
            d = INFINITY;
        if (isnan(d))
            continue;
        double r = d / fmax(1.0, fabs((double)y[i]));
        if (fabs((double)y[i]) > *max_ref)
            *max_ref = fabs((double)y[i]);
        if (d > *max_abs)
            *max_abs = d;
        if (r > worst)
            worst = r;
    }
done:
    gir_tensor_unref(a);
    gir_tensor_unref(b);
    return worst;
}

typedef struct model {
    const char *name;
    char *path, *input;
} model;

static const char *const tv_names[] = {
    "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0", "convnext_tiny", "densenet121",
    "regnet_x_400mf", "regnet_y_400mf", "shufflenet_v2_x1_0", "mnasnet0_5", "googlenet",
    "vgg11_bn", "resnext50_32x4d", "resnet50", "alexnet",
};
static const char *const shared_names[] = { "resnet18", "mobilenet_v2", "squeezenet1_0" };

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static double file_mib(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (double)st.st_size / (1024.0 * 1024.0) : 0;
}

static bool selected(const char *only, const char *name)
{
    if (!only)
        return true;
    size_t L = strlen(name);
    for (const char *p = only; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == L && strncmp(p, name, L) == 0)
            return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

/* Exports the missing torchvision models into dir with the repository's
 * script; false when that fails. */
static bool export_tv(const char *dir, const char *root, const char *only)
{
    enum { NTV = sizeof tv_names / sizeof *tv_names };
    char *argv[NTV + 4] = { "/usr/bin/python3", NULL, (char *)dir };
    int argc = 3;
    for (size_t i = 0; i < NTV; i++) {
        if (!selected(only, tv_names[i]))
            continue;
        char *p = gir_strdupf("%s/%s.onnx", dir, tv_names[i]);
        char *q = gir_strdupf("%s/%s.input.npy", dir, tv_names[i]);
        if (!p || !q || !exists(p) || !exists(q))
            argv[argc++] = (char *)tv_names[i];
        free(p);
        free(q);
    }
    if (argc == 3)
        return true;
    argv[argc] = NULL;
    char *script = gir_strdupf("%s/scripts/torchvision_export.py", root);
    if (!script)
        return false;
    argv[1] = script;
    fprintf(stderr, "bench_ort: exporting %d torchvision model%s into %s (once; needs python3-torchvision)\n",
            argc - 3, argc == 4 ? "" : "s", dir);
    mkdir(dir, 0777);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    bool ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    free(script);
    if (!ok)
        fprintf(stderr, "bench_ort: scripts/torchvision_export.py failed\n");
    return ok;
}

int main(int argc, char **argv)
{
    if (argc == 8 && strcmp(argv[1], "--worker") == 0)
        return worker(argv + 2);
    signal(SIGPIPE, SIG_IGN);
    int runs = 20, warmup = 3, procs = 1;
    const char *threads_list = "1,2", *only = NULL;
    const char *ort_dir = getenv("ORT_DIR"), *tv_dir = getenv("GIR_TV_DIR");
    const char *shared = getenv("GIR_SHARED_DIR"), *root = ".";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--runs") == 0 && v)
            runs = atoi(v), i++;
        else if (strcmp(a, "--warmup") == 0 && v)
            warmup = atoi(v), i++;
        else if (strcmp(a, "--threads") == 0 && v)
            threads_list = v, i++;
        else if (strcmp(a, "--only") == 0 && v)
            only = v, i++;
        else if (strcmp(a, "--procs") == 0 && v)
            procs = atoi(v), i++;
        else if (strcmp(a, "--gap") == 0 && v)
            gap_ms = atoi(v), i++;
        else if (strcmp(a, "--spin") == 0 && v)
            spin_us = atol(v), i++;
        else if (strcmp(a, "--ort-dir") == 0 && v)
            ort_dir = v, i++;
        else if (strcmp(a, "--tv-dir") == 0 && v)
            tv_dir = v, i++;
        else if (strcmp(a, "--source-root") == 0 && v)
            root = v, i++;
        else {
            fprintf(stderr, "usage: bench_ort [--runs N] [--warmup N] [--threads 1,2] [--only NAME,...]\n"
                            "                 [--procs N] [--gap MS] [--spin US] [--ort-dir DIR] [--tv-dir DIR]\n"
                            "                 [--source-root DIR]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 100000)
        runs = 20;
    if (procs < 1 || procs > 100)
        procs = 1;
    if (gap_ms < 0 || gap_ms > 10000)
        gap_ms = 50;
    if (spin_us < -1 || spin_us > 60000000)
        spin_us = -1;
    if (!ort_dir) {
        fprintf(stderr, "bench_ort: set ORT_DIR (or --ort-dir) to a folder where\n"
                        "  npm install --ignore-scripts onnxruntime-node\nwas run\n");
        return 1;
    }
    setenv("ORT_DIR", ort_dir, 1);
    if (!shared)
        shared = "../shared";
    char *tv_default = NULL;
    if (!tv_dir) {
        /* a cache outside the repository: $XDG_CACHE_HOME or ~/.cache */
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        char *base = xdg && *xdg ? gir_strdupf("%s", xdg) : gir_strdupf("%s/.cache", home && *home ? home : "/tmp");
        if (base) {
            mkdir(base, 0777);
            tv_default = gir_strdupf("%s/graphconv-torchvision", base);
        }
        free(base);
        tv_dir = tv_default ? tv_default : "tv-models";
    }
    char *ort_js = gir_strdupf("%s/bench/ort_worker.js", root);
    char tmpl[] = "/tmp/bench_ort.XXXXXX";
    if (!ort_js || !mkdtemp(tmpl)) {
        fprintf(stderr, "bench_ort: cannot make a temporary folder\n");
        return 1;
    }
    if (!exists(ort_js)) {
        fprintf(stderr, "bench_ort: %s not found (pass --source-root)\n", ort_js);
        return 1;
    }
    bool tv_ok = export_tv(tv_dir, root, only);

    model models[32];
    size_t nm = 0;
    for (size_t i = 0; i < sizeof shared_names / sizeof *shared_names; i++)
        if (selected(only, shared_names[i]))
            models[nm++] = (model){ shared_names[i], gir_strdupf("%s/models/%s.onnx", shared, shared_names[i]),
                                    gir_strdupf("%s/models/input_1x3x224x224.npy", shared) };
    for (size_t i = 0; tv_ok && i < sizeof tv_names / sizeof *tv_names; i++)
        if (selected(only, tv_names[i]))
            models[nm++] = (model){ tv_names[i], gir_strdupf("%s/%s.onnx", tv_dir, tv_names[i]),
                                    gir_strdupf("%s/%s.input.npy", tv_dir, tv_names[i]) };

    int thread_counts[8], nt = 0;
    for (const char *p = threads_list; *p && nt < 8;) {
        int t = atoi(p);
        if (t >= 1 && t <= 64)
            thread_counts[nt++] = t;
        const char *e = strchr(p, ',');
        if (!e)
            break;
        p = e + 1;
    }

    printf("runtime vs ONNX Runtime, side by side: median of %d interleaved runs after %d warm-up runs", runs * procs,
           warmup);
    if (procs > 1) /* one process's speed is not the next one's: several pairs of processes, runs each */
        printf(" (%d pairs of worker processes, %d runs each)", procs, runs);
    printf("\n");
    printf("ms: median wall time of a run; cpu: median CPU time of the worker process during a run (all its\n");
    printf("threads: robust to other load at 1 thread); ratio = ours / ORT (below 1: we are faster); MiB = peak\n");
    printf("resident set of each worker process (ORT's includes node's own ~40 MiB); bound = 1.25 x file + 80 MiB;\n");
    printf("file = model file MiB; diff = max |ours - ort|; scale = diff / max |ort| (for outputs far below 1,\n");
    printf("which untrained torchvision weights give, diff alone says little)\n\n");
    int failures = 0;
    size_t samples = (size_t)runs * (size_t)procs;
    double *t_ours = calloc(samples, sizeof *t_ours), *t_ort = calloc(samples, sizeof *t_ort);
    double *c_ours = calloc(samples, sizeof *c_ours), *c_ort = calloc(samples, sizeof *c_ort);
    if (!t_ours || !t_ort || !c_ours || !c_ort)
        return 1;
    for (int ti = 0; ti < nt; ti++) {
        int th = thread_counts[ti];
        double log_sum = 0, log_cpu = 0;
        int n_ratio = 0, over_13 = 0, over_rss = 0;
        char ths[16], wus[16];
        snprintf(ths, sizeof ths, "%d", th);
        snprintf(wus, sizeof wus, "%d", warmup);
        printf("%d thread%s\n", th, th == 1 ? "" : "s");
        printf("%-20s %9s %9s %6s %9s %9s %6s %8s %8s %6s %7s  %-8s %s\n", "model", "ours ms", "ort ms", "ratio",
               "ours cpu", "ort cpu", "ratio", "ours MiB", "ort MiB", "bound", "file", "diff", "scale");
        fflush(stdout);
        for (size_t mi = 0; mi < nm; mi++) {
            model *m = &models[mi];
            char *out_ours = gir_strdupf("%s/%s.ours.npy", tmpl, m->name);
            char *out_ort = gir_strdupf("%s/%s.ort.npy", tmpl, m->name);
            char spins[24];
            snprintf(spins, sizeof spins, "%ld", spin_us);
            char *ours_argv[] = { "/proc/self/exe", "--worker", m->path, m->input, ths, wus, out_ours, spins, NULL };
            char *ort_argv[] = { "node", ort_js, m->path, m->input, ths, wus, out_ort, NULL };
            proc a = { .pid = -1 }, b = { .pid = -1 };
            bool ok_a = true, ok_b = true;
            long rss_ours = 0, rss_ort = 0;
            for (int pi = 0; ok_a && ok_b && pi < procs; pi++) {
                ok_a = proc_start(&a, ours_argv);
                ok_b = ok_a && proc_start(&b, ort_argv);
                for (int r = 0; ok_a && ok_b && r < runs; r++) {
                    size_t k = (size_t)pi * (size_t)runs + (size_t)r;
                    if (r % 2 == 0) {
                        t_ours[k] = proc_run(&a, &c_ours[k]);
                        t_ort[k] = proc_run(&b, &c_ort[k]);
                    } else {
                        t_ort[k] = proc_run(&b, &c_ort[k]);
                        t_ours[k] = proc_run(&a, &c_ours[k]);
                    }
                    if (t_ours[k] < 0 || t_ort[k] < 0)
                        ok_a = ok_b = false;
                }
                proc_finish(&a);
                proc_finish(&b);
                ok_a = ok_a && a.ok;
                ok_b = ok_b && b.ok;
                rss_ours = a.maxrss_kib > rss_ours ? a.maxrss_kib : rss_ours;
                rss_ort = b.maxrss_kib > rss_ort ? b.maxrss_kib : rss_ort;
            }
            if (!ok_a || !ok_b) {
                printf("%-20s failed (%s)\n", m->name, !ok_a ? "our runtime" : "ONNX Runtime");
                failures++;
            } else {
                double mo = median(t_ours, (int)samples), mr = median(t_ort, (int)samples), ratio = mo / mr;
                double co = median(c_ours, (int)samples), cr = median(c_ort, (int)samples), cratio = cr > 0 ? co / cr : 0;
                double fm = file_mib(m->path), bound = 1.25 * fm + 80;
                double rss_a = (double)rss_ours / 1024, rss_b = (double)rss_ort / 1024;
                double max_abs, max_ref;
                double rel = compare_outputs(out_ours, out_ort, &max_abs, &max_ref);
                bool match = rel >= 0 && rel <= 1e-4;
                printf("%-20s %9.2f %9.2f %6.2f %9.2f %9.2f %6.2f %8.0f %8.0f %6.0f %7.1f  %.2e %.1e%s%s%s\n", m->name,
                       mo, mr, ratio, co, cr, cratio, rss_a, rss_b, bound, fm, max_abs,
                       max_ref > 0 ? max_abs / max_ref : max_abs, match ? "" : " MISMATCH",
                       ratio > 1.3 ? " slow" : "", rss_a > bound ? " rss-over" : "");
                log_sum += log(ratio);
                log_cpu += cratio > 0 ? log(cratio) : 0;
                n_ratio++;
                over_13 += ratio > 1.3;
                over_rss += rss_a > bound;
                if (!match)
                    failures++;
            }
            fflush(stdout);
            unlink(out_ours);
            unlink(out_ort);
            free(out_ours);
            free(out_ort);
        }
        if (n_ratio)
            printf("geometric mean of %d ratios (%d thread%s): latency %.3f, CPU time %.3f; latency above 1.3: %d; "
                   "RSS above bound: %d\n\n",
                   n_ratio, th, th == 1 ? "" : "s", exp(log_sum / n_ratio), exp(log_cpu / n_ratio), over_13, over_rss);
    }
    rmdir(tmpl);
    for (size_t i = 0; i < nm; i++) {
        free(models[i].path);
        free(models[i].input);
    }
    free(t_ours);
    free(t_ort);
    free(c_ours);
    free(c_ort);
    free(ort_js);
    free(tv_default);
    if (failures)
        printf("%d failure%s (outputs differ or a model did not run)\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
