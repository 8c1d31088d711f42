/* graphconv run MODEL: run a model on given or seeded inputs, write the
 * outputs as .npy, time repeated runs. */
#include "check.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "io/npy.h"

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

/* A file name for an output: characters outside [A-Za-z0-9._-] become
 * '_'; names that collide after that get "_1", "_2", ... */
static char *output_file(const char *dir, const char *name, char **used, size_t n_used)
{
    size_t len = strlen(name);
    char *base = malloc(len + 1);
    if (!base)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                  ch == '_' || ch == '-';
        base[i] = ok ? ch : '_';
    }
    base[len] = '\0';
    if (len == 0 || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        free(base);
        base = gir_strdupf("output");
        if (!base)
            return NULL;
    }
    for (unsigned k = 0;; k++) {
        char *file = k == 0 ? gir_strdupf("%s.npy", base) : gir_strdupf("%s_%u.npy", base, k);
        if (!file) {
            free(base);
            return NULL;
        }
        bool taken = false;
        for (size_t i = 0; i < n_used; i++)
            if (used[i] && strcmp(used[i], file) == 0)
                taken = true;
        if (!taken) {
            free(base);
            char *path = gir_path_join(dir, file);
            free(file);
            return path;
        }
        free(file);
    }
}

/* One line per output when no directory is given: type, shape and a few
 * statistics. */
static void print_summary(const char *name, gir_tensor *t)
{
    char shape[128];
    gir_shape_str(gir_tensor_shape(t), shape, sizeof shape);
    printf("%s: %s %s", name, gir_dtype_name(gir_tensor_dtype(t)), shape);
    const void *p;
    size_t n = (size_t)gir_shape_numel(gir_tensor_shape(t));
    if (gir_tensor_load(t, &p, NULL) == GIR_OK && n > 0 && gir_tensor_dtype(t) == GIR_DT_F32) {
        const float *f = p;
        double lo = INFINITY, hi = -INFINITY, sum = 0;
        size_t arg = 0, nan = 0;
        for (size_t i = 0; i < n; i++) {
            if (isnan(f[i])) {
                nan++;
                continue;
            }
            if (f[i] < lo)
                lo = f[i];
            if (f[i] > hi) {
                hi = f[i];
                arg = i;
            }
            sum += f[i];
        }
        printf(" min %.6g max %.6g (at %zu) mean %.6g", lo, hi, arg, n > nan ? sum / (double)(n - nan) : NAN);
        if (nan)
            printf(" nan %zu", nan);
    } else if (gir_tensor_load(t, &p, NULL) == GIR_OK && n > 0 && !gir_dtype_is_float(gir_tensor_dtype(t))) {
        printf(" first");
        for (size_t i = 0; i < n && i < 8; i++) {
            switch (gir_tensor_dtype(t)) {
            case GIR_DT_I64: printf(" %lld", (long long)((const int64_t *)p)[i]); break;
            case GIR_DT_I32: printf(" %d", ((const int32_t *)p)[i]); break;
            case GIR_DT_BOOL: case GIR_DT_U8: printf(" %u", ((const uint8_t *)p)[i]); break;
            default: break;
            }
        }
    }
    putchar('\n');
}

/* --profile-json FILE ("-": standard output), written atomically. */
static int write_profile_json(const gir_session *s, const char *model, int threads, const char *path, bool force)
{
    if (strcmp(path, "-") == 0)
        return gc_profile_json(s, model, threads, stdout);
    gir_error err = GIR_ERROR_INIT;
    gir_outfile *of = NULL;
    if (gir_outfile_open(path, force, &of, &err) != GIR_OK) {
        int rc = gc_report(&err);
        gir_error_clear(&err);
        return rc;
    }
    int rc = gc_profile_json(s, model, threads, gir_outfile_stream(of));
    if (rc != GC_EXIT_OK) {
        gir_outfile_abort(of);
        return rc;
    }
    if (gir_outfile_commit(of, &err) != GIR_OK) {
        rc = gc_report(&err);
        gir_error_clear(&err);
    }
    return rc;
}

int cmd_run(int argc, char **argv)
{
    enum { O_INPUT = 256, O_SEED, O_REPEAT, O_THREADS, O_FROM, O_PARAMS, O_INPUT_SHAPE, O_BATCH, O_PROFILE,
           O_PROFILE_JSON };
    static const struct option longopts[] = {
        { "input", required_argument, NULL, O_INPUT },
        { "output-dir", required_argument, NULL, 'o' },
        { "seed", required_argument, NULL, O_SEED },
        { "repeat", required_argument, NULL, O_REPEAT },
        { "threads", required_argument, NULL, O_THREADS },
        { "from", required_argument, NULL, O_FROM },
        { "params", required_argument, NULL, O_PARAMS },
        { "input-shape", required_argument, NULL, O_INPUT_SHAPE },
        { "batch-size", required_argument, NULL, O_BATCH },
        { "read-option", required_argument, NULL, 'I' },
        { "profile", no_argument, NULL, O_PROFILE },
        { "profile-json", required_argument, NULL, O_PROFILE_JSON },
        { "force", no_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    gc_feed feed = { 0 };
    const char *outdir = NULL, *from = NULL, *profile_json = NULL;
    bool profile = false;
    uint64_t seed = 0;
    int64_t repeat = 0, threads = 1, v;
    bool force = false;
    gir_options *opts = gir_options_new();
    gir_graph *g = NULL;
    gir_session *s = NULL;
    gir_error err = GIR_ERROR_INIT;
    double *times = NULL;
    char **written = NULL;
    int rc = GC_EXIT_OK, c;
    if (!opts) {
        fputs("graphconv: out of memory\n", stderr);
        return GC_EXIT_IO;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:I:fqh", longopts, NULL)) != -1) {
        switch (c) {
        case O_INPUT:
            if (gc_feed_add(&feed, optarg, &err)) {
                rc = gc_report(&err);
                goto out;
            }
            break;
        case 'o': outdir = optarg; break;
        case O_SEED:
            if (!gir_parse_i64(optarg, &v) || v < 0) {
                rc = gc_usage_error("--seed takes a non-negative integer, not '%s'", optarg);
                goto out;
            }
            seed = (uint64_t)v;
            break;
        case O_REPEAT:
            if (!gir_parse_i64(optarg, &repeat) || repeat < 1 || repeat > 1000000) {
                rc = gc_usage_error("--repeat takes an integer in 1..1000000, not '%s'", optarg);
                goto out;
            }
            break;
        case O_THREADS:
            if (!gir_parse_i64(optarg, &threads) || threads < 1 || threads > GC_MAX_THREADS) {
                rc = gc_usage_error("--threads takes an integer in 1..%d, not '%s'", GC_MAX_THREADS, optarg);
                goto out;
            }
            break;
        case O_FROM: from = optarg; break;
        case O_PARAMS: gir_options_set(opts, "params", optarg, NULL); break;
        case O_INPUT_SHAPE: gir_options_set(opts, "input-shape", optarg, NULL); break;
        case O_BATCH: gir_options_set(opts, "batch-size", optarg, NULL); break;
        case 'I':
            if (!gc_parse_kv(opts, optarg, "--read-option")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case O_PROFILE: profile = true; break;
        case O_PROFILE_JSON: profile_json = optarg; break;
        case 'f': force = true; break;
        case 'q': gc_verbosity = 0; break;
        case 'h':
            printf("Usage: graphconv run [OPTIONS] MODEL\n"
                   "Runs the model on the reference CPU runtime.\n"
                   "  --input [NAME=]FILE.npy  an input (by name, or by position); others are generated\n"
                   "  --seed N                 seed of generated inputs (default 0): floats uniform in\n"
                   "                           [0, 1), integers in [0, 4), unknown dimensions 1\n"
                   "  -o, --output-dir DIR     write each output as DIR/NAME.npy\n"
                   "  -f, --force              overwrite existing .npy files in DIR\n"
                   "  --repeat N               after one warm-up run, time N runs and print the median,\n"
                   "                           minimum and maximum latency (loading excluded)\n"
                   "  --threads N              worker threads (default 1)\n"
                   "  --profile                time every node over the --repeat runs (10 when not\n"
                   "                           given) and print the time per operator type and per\n"
                   "                           node, slowest first (fused nodes: with their producer)\n"
                   "  --profile-json FILE      the same figures as JSON (FILE '-': standard output,\n"
                   "                           alone there; an existing FILE is replaced only with -f)\n"
                   "  --from FORMAT, --params FILE   the model's format and weights file\n"
                   "  --input-shape NAME:D0,D1,..  an input's shape (formats without shapes)\n"
                   "  --batch-size N, -I KEY=VALUE  reader options, as for conversion\n"
                   "  -q, --quiet              print only errors (and what the model prints)\n");
            goto out;
        default: rc = gc_bad_option(argv); goto out;
        }
    }
    if (argc - optind != 1) {
        rc = gc_usage_error("run needs exactly one model file");
        goto out;
    }
    if ((profile || profile_json) && repeat == 0)
        repeat = 10;
    /* JSON on standard output stands alone there */
    bool json_stdout = profile_json && strcmp(profile_json, "-") == 0 && !profile;
    if (gc_load(argv[optind], from, opts, &g, &err) || gir_session_new(g, (int)threads, &s, &err) ||
        (gir_session_set_max_elements(s, gc_max_run_elements), gc_feed_session(s, &feed, seed, &err)) ||
        gir_session_run(s, &err)) {
        rc = gc_report(&err);
        gc_shape_hint(g, &err);
        goto out;
    }
    /* what LightNet would warn about and go on (a Print file that cannot be opened) */
    for (size_t i = 0; i < gir_session_warning_count(s); i++)
        fprintf(stderr, "graphconv: warning: %s\n", gir_session_warning(s, i));
    if (profile || profile_json)
        gir_session_set_profiling(s, true);
    if (repeat > 0) {
        times = malloc((size_t)repeat * sizeof *times);
        if (!times) {
            rc = GC_EXIT_IO;
            goto out;
        }
        for (int64_t r = 0; r < repeat; r++) {
            double t0 = now_ms();
            if (gir_session_run(s, &err)) {
                rc = gc_report(&err);
                goto out;
            }
            times[r] = now_ms() - t0;
        }
        qsort(times, (size_t)repeat, sizeof *times, cmp_double);
        double med = repeat % 2 ? times[repeat / 2] : (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
        if (gc_verbosity >= 1 && !json_stdout)
            printf("latency over %lld runs (%lld thread%s): median %.3f ms, min %.3f ms, max %.3f ms\n",
                   (long long)repeat, (long long)threads, threads == 1 ? "" : "s", med, times[0],
                   times[repeat - 1]);
    }
    if (profile && (rc = gc_profile_print(s, stdout)) != GC_EXIT_OK)
        goto out;
    if (profile_json && (rc = write_profile_json(s, argv[optind], (int)threads, profile_json, force)) != GC_EXIT_OK)
        goto out;
    size_t nout = gir_session_output_count(s);
    if (outdir) {
        if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "graphconv: %s: cannot create the directory: %s [io]\n", outdir, strerror(errno));
            rc = GC_EXIT_IO;
            goto out;
        }
        written = calloc(nout ? nout : 1, sizeof *written);
        if (!written) {
            rc = GC_EXIT_IO;
            goto out;
        }
        for (size_t i = 0; i < nout; i++) {
            const char *name = g->values[g->outputs[i]]->name;
            char *path = output_file(outdir, name, written, i);
            if (!path) {
                rc = GC_EXIT_IO;
                goto out;
            }
            written[i] = gir_strdupf("%s", gir_path_basename(path));
            gir_status st = gir_npy_save(path, gir_session_output(s, i), force, &err);
            if (st) {
                free(path);
                rc = gc_report(&err);
                goto out;
            }
            if (gc_verbosity >= 2)
                fprintf(stderr, "graphconv: wrote %s\n", path);
            free(path);
        }
    } else if (gc_verbosity >= 1 && !json_stdout) {
        for (size_t i = 0; i < nout; i++)
            print_summary(g->values[g->outputs[i]]->name, gir_session_output(s, i));
    }
out:
    if (written)
        for (size_t i = 0; i < gir_session_output_count(s); i++)
            free(written[i]);
    free(written);
    free(times);
    gir_error_clear(&err);
    gc_feed_free(&feed);
    gir_session_free(s);
    gir_graph_free(g);
    gir_options_free(opts);
    return rc;
}
