/* graphconv check A B: run two models on the same inputs and compare. */
#include "check.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"

/* ---- inputs ------------------------------------------------------------------ */

gir_status gc_feed_add(gc_feed *f, const char *arg, gir_error *err)
{
    const char *eq = strchr(arg, '=');
    const char *path = eq ? eq + 1 : arg;
    if (eq == arg || !*path)
        return gir_fail(err, GIR_E_ARGUMENT, "--input takes NAME=FILE.npy or FILE.npy, not '%s'", arg);
    gir_tensor *t;
    gir_status st = gir_npy_read(path, &t, err);
    if (st)
        return st;
    char *name = eq ? gir_strdupf("%.*s", (int)(eq - arg), arg) : NULL;
    char **nn = realloc(f->names, (f->n + 1) * sizeof *nn);
    if (nn)
        f->names = nn;
    gir_tensor **nt = realloc(f->tensors, (f->n + 1) * sizeof *nt);
    if (nt)
        f->tensors = nt;
    if (!nn || !nt || (eq && !name)) {
        free(name);
        gir_tensor_unref(t);
        return gir_nomem(err);
    }
    f->names[f->n] = name;
    f->tensors[f->n] = t;
    f->n++;
    return GIR_OK;
}

void gc_feed_free(gc_feed *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->names[i]);
        gir_tensor_unref(f->tensors[i]);
    }
    free(f->names);
    free(f->tensors);
    memset(f, 0, sizeof *f);
}

gir_status gc_feed_session(gir_session *s, const gc_feed *f, uint64_t seed, gir_error *err)
{
    return gir_session_feed(s, f ? f->n : 0, f ? (const char *const *)f->names : NULL, f ? f->tensors : NULL, seed,
                            err);
}

int gc_check_graphs(const gir_graph *a, const gir_graph *b, const gc_check_opts *o)
{
    gir_error err = GIR_ERROR_INIT;
    gir_check_options co;
    gir_check_options_init(&co);
    co.atol = o->atol;
    co.rtol = o->rtol;
    co.seed = o->seed;
    co.threads = o->threads;
    co.per_node = o->per_node;
    co.max_run_elements = gc_max_run_elements;
    if (o->feed) {
        co.n_feeds = o->feed->n;
        co.feed_names = (const char *const *)o->feed->names;
        co.feed_tensors = o->feed->tensors;
    }
    gir_check_result res;
    gir_status st = gir_check_models(a, b, &co, &res, &err);
    int rc = GC_EXIT_OK;
    if (o->json) {
        /* One JSON object on stdout whatever the outcome. */
        fprintf(stdout, "{\"passed\": %s, \"exit\": %d", st == GIR_OK ? "true" : "false",
                st ? gir_status_exit_code(st) : 0);
        if (st) {
            char *msg = gir_error_format(&err);
            fputs(", \"error\": ", stdout);
            gc_json_string(stdout, msg ? msg : gir_status_name(st));
            free(msg);
        }
        if (res.json)
            fprintf(stdout, ", \"metrics\": %s", res.json);
        fputs("}\n", stdout);
        rc = st ? gir_status_exit_code(st) : GC_EXIT_OK;
    } else {
        if (o->out && res.report)
            fputs(res.report, o->out);
        if (st)
            rc = gc_report(&err);
        else if (o->out)
            fprintf(o->out, "check passed: %zu output%s agree (atol %g, rtol %g)\n", a->n_outputs,
                    a->n_outputs == 1 ? "" : "s", o->atol, o->rtol);
    }
    gir_check_result_clear(&res);
    gir_error_clear(&err);
    return rc;
}

/* ---- the command ------------------------------------------------------------------ */

/* Strict number parsing for options. */
static bool parse_double_opt(const char *s, const char *flag, double *out)
{
    if (!gir_parse_double(s, out) || !(*out >= 0) || isinf(*out)) {
        gc_usage_error("%s takes a non-negative number, not '%s'", flag, s);
        return false;
    }
    return true;
}

static bool parse_int_opt(const char *s, const char *flag, int64_t lo, int64_t hi, int64_t *out)
{
    if (!gir_parse_i64(s, out) || *out < lo || *out > hi) {
        gc_usage_error("%s takes an integer in %lld..%lld, not '%s'", flag, (long long)lo, (long long)hi, s);
        return false;
    }
    return true;
}

int cmd_check(int argc, char **argv)
{
    enum { O_ATOL = 256, O_RTOL, O_SEED, O_INPUT, O_PER_NODE, O_THREADS, O_FROM_A, O_FROM_B, O_PARAMS_A, O_PARAMS_B,
           O_INPUT_SHAPE, O_BATCH, O_INPUT_SHAPE_B, O_BATCH_B, O_READ_B };
    static const struct option longopts[] = {
        { "atol", required_argument, NULL, O_ATOL },
        { "rtol", required_argument, NULL, O_RTOL },
        { "seed", required_argument, NULL, O_SEED },
        { "input", required_argument, NULL, O_INPUT },
        { "per-node", no_argument, NULL, O_PER_NODE },
        { "threads", required_argument, NULL, O_THREADS },
        { "from-a", required_argument, NULL, O_FROM_A },
        { "from-b", required_argument, NULL, O_FROM_B },
        { "params-a", required_argument, NULL, O_PARAMS_A },
        { "params-b", required_argument, NULL, O_PARAMS_B },
        { "input-shape", required_argument, NULL, O_INPUT_SHAPE },
        { "batch-size", required_argument, NULL, O_BATCH },
        { "read-option", required_argument, NULL, 'I' },
        { "input-shape-b", required_argument, NULL, O_INPUT_SHAPE_B },
        { "batch-size-b", required_argument, NULL, O_BATCH_B },
        { "read-option-b", required_argument, NULL, O_READ_B },
        { "quiet", no_argument, NULL, 'q' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    gc_check_opts o = { 1e-4, 1e-3, 0, 1, NULL, false, stdout, false };
    gc_feed feed = { 0 };
    const char *from[2] = { NULL, NULL };
    gir_options *opts[2] = { gir_options_new(), gir_options_new() };
    gir_graph *g[2] = { NULL, NULL };
    gir_error err = GIR_ERROR_INIT;
    int rc = GC_EXIT_OK, c;
    int64_t v;
    if (!opts[0] || !opts[1]) {
        fputs("graphconv: out of memory\n", stderr);
        rc = GC_EXIT_IO;
        goto out;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_ATOL:
            if (!parse_double_opt(optarg, "--atol", &o.atol))
                rc = GC_EXIT_USAGE;
            break;
        case O_RTOL:
            if (!parse_double_opt(optarg, "--rtol", &o.rtol))
                rc = GC_EXIT_USAGE;
            break;
        case O_SEED:
            if (parse_int_opt(optarg, "--seed", 0, INT64_MAX, &v))
                o.seed = (uint64_t)v;
            else
                rc = GC_EXIT_USAGE;
            break;
        case O_THREADS:
            if (parse_int_opt(optarg, "--threads", 1, GC_MAX_THREADS, &v))
                o.threads = (int)v;
            else
                rc = GC_EXIT_USAGE;
            break;
        case O_INPUT:
            if (gc_feed_add(&feed, optarg, &err)) {
                rc = gc_report(&err);
                goto out;
            }
            break;
        case O_PER_NODE: o.per_node = true; break;
        case O_FROM_A: from[0] = optarg; break;
        case O_FROM_B: from[1] = optarg; break;
        case O_PARAMS_A: gir_options_set(opts[0], "params", optarg, NULL); break;
        case O_PARAMS_B: gir_options_set(opts[1], "params", optarg, NULL); break;
        case O_INPUT_SHAPE: gir_options_set(opts[0], "input-shape", optarg, NULL); break;
        case O_BATCH: gir_options_set(opts[0], "batch-size", optarg, NULL); break;
        case O_INPUT_SHAPE_B: gir_options_set(opts[1], "input-shape", optarg, NULL); break;
        case O_BATCH_B: gir_options_set(opts[1], "batch-size", optarg, NULL); break;
        case 'I':
        case O_READ_B:
            if (!gc_parse_kv(opts[c == 'I' ? 0 : 1], optarg, c == 'I' ? "--read-option" : "--read-option-b")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'q': gc_verbosity = 0; break;
        case 'j': o.json = true; break;
        case 'h':
            printf("Usage: graphconv check [OPTIONS] A B\n"
                   "Runs both models on the same inputs and compares their outputs (A is the reference).\n"
                   "  --input [NAME=]FILE.npy  an input (by name, or by position); others are seeded\n"
                   "  --seed N                 seed of generated inputs (default 0)\n"
                   "  --atol X, --rtol Y       a mismatch is |b - a| > X + Y * |a| (default 1e-4, 1e-3)\n"
                   "  --per-node               name the first node whose outputs diverge (shared value names)\n"
                   "  --threads N              worker threads (default 1)\n"
                   "  --from-a/--from-b FMT, --params-a/--params-b FILE   per-model format and weights\n"
                   "  --input-shape NAME:D0,.., --batch-size N, -I/--read-option KEY=VALUE   reader\n"
                   "                           options for A; --input-shape-b, --batch-size-b,\n"
                   "                           --read-option-b the same for B\n"
                   "  --json                   one JSON object on stdout: {\"passed\", \"exit\", \"error\"?,\n"
                   "                           \"metrics\": {\"method\", \"outputs\": [...], ...}}\n"
                   "  -q, --quiet              print only errors\n"
                   "Exit status: 0 outputs agree, 4 they differ, 1 usage, 2/3/5 as for conversion.\n");
            goto out;
        default: rc = gc_bad_option(argv); goto out;
        }
        if (rc)
            goto out;
    }
    if (argc - optind != 2) {
        rc = gc_usage_error("check needs exactly two model files");
        goto out;
    }
    for (int i = 0; i < 2; i++) {
        if (gc_load(argv[optind + i], from[i], opts[i], &g[i], &err) != GIR_OK) {
            rc = gc_report(&err);
            goto out;
        }
    }
    o.feed = &feed;
    if (gc_verbosity == 0)
        o.out = NULL;
    rc = gc_check_graphs(g[0], g[1], &o);
out:
    gir_error_clear(&err);
    gc_feed_free(&feed);
    for (int i = 0; i < 2; i++) {
        gir_graph_free(g[i]);
        gir_options_free(opts[i]);
    }
    return rc;
}
