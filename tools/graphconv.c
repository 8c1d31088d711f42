/* graphconv: convert, inspect and check neural-network models. */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "formats/format.h"
#include "gir_config.h"

int gc_verbosity = 1;

int gc_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("graphconv: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'graphconv --help'.\n", stderr);
    va_end(ap);
    return GC_EXIT_USAGE;
}

int gc_report(const gir_error *err)
{
    char *msg = gir_error_format(err);
    fprintf(stderr, "graphconv: %s\n", msg ? msg : gir_status_name(err->code));
    free(msg);
    return gir_status_exit_code(err->code);
}

bool gc_parse_kv(gir_options *opts, const char *arg, const char *flag)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        gc_usage_error("%s takes KEY=VALUE, not '%s'", flag, arg);
        return false;
    }
    char *key = gir_strdupf("%.*s", (int)(eq - arg), arg);
    gir_status st = key ? gir_options_set(opts, key, eq + 1, NULL) : GIR_E_NOMEM;
    free(key);
    if (st) {
        fputs("graphconv: out of memory\n", stderr);
        return false;
    }
    return true;
}

gir_status gc_load_detect(const char *path, const char *format, const gir_options *opts, gir_graph **g,
                          const char **fmt, const char **reason, gir_error *err)
{
    const char *given = path;
    if (strcmp(path, "-") == 0)
        path = "/dev/stdin";
    *fmt = format;
    *reason = "--from";
    /* A pipe reads once: gir_load copies it whole and detects the format
     * from the copy; the graph then says what it was. */
    bool stream = gir_path_is_stream(path);
    if (!format && !stream) {
        TRY(gir_detect(path, fmt, reason, err));
        if (gc_verbosity >= 2)
            fprintf(stderr, "graphconv: %s: format %s (by %s)\n", path, *fmt, *reason);
    }
    TRY(gir_load(path, format ? format : *fmt, opts, g, err));
    if (!*fmt) {
        *fmt = gir_attrs_get_string(&(*g)->meta, "source.format", "?");
        *reason = "content";
        if (gc_verbosity >= 2)
            fprintf(stderr, "graphconv: %s: read whole from a pipe, format %s (by content)\n", given, *fmt);
    }
    return GIR_OK;
}

gir_status gc_load(const char *path, const char *format, const gir_options *opts, gir_graph **g, gir_error *err)
{
    const char *fmt, *reason;
    return gc_load_detect(path, format, opts, g, &fmt, &reason, err);
}

static void print_note(void *ctx, const char *note)
{
    (void)ctx;
    if (gc_verbosity >= 1)
        fprintf(stderr, "graphconv: note: %s\n", note);
}

void gc_print_graph_notes(const gir_graph *g)
{
    const gir_attr *a = gir_attrs_find(&g->meta, GIR_META_NOTES);
    for (size_t i = 0; a && a->type == GIR_ATTR_STRINGS && i < a->u.strs.n; i++)
        print_note(NULL, a->u.strs.v[i]);
}

void gc_note_to_stderr(gir_options *wopts)
{
    gir_options_set_note_handler(wopts, print_note, NULL);
}

/* Progress of writing the weights: on a terminal, one line redrawn for
 * outputs with 64 MiB of tensors or more; with --progress for any size and
 * any stderr (a line per 10% when it is not a terminal).  -q silences it. */
typedef struct progress_view {
    const char *path;
    bool forced, tty;
    int last;
} progress_view;

static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
    progress_view *p = ctx;
    if (gc_verbosity < 1 || total == 0 || (!p->forced && (!p->tty || total < (uint64_t)64 << 20)))
        return;
    int pct = (int)(done * 100 / total);
    if (pct == p->last || (!p->tty && done != total && done != 0 && pct / 10 == p->last / 10))
        return;
    p->last = pct;
    fprintf(stderr, "%sgraphconv: writing %s: %3d%% (%.1f of %.1f MiB)%s", p->tty ? "\r" : "", p->path, pct,
            (double)done / 1048576.0, (double)total / 1048576.0, p->tty && done != total ? "" : "\n");
    fflush(stderr);
}

static void usage(FILE *f)
{
    fputs("Usage: graphconv [OPTIONS] IN OUT          convert a model\n"
          "       graphconv COMMAND [ARGS]\n"
          "\n"
          "Commands:\n"
          "  convert IN OUT     convert (the default command)\n"
          "  info MODEL         formats, inputs/outputs, op histogram, parameters\n"
          "  diff A B           structural and weight differences (exit 0 same, 4 different)\n"
          "  draw MODEL OUT     a picture of the graph: OUT.dot, OUT.svg or OUT.png\n"
          "  formats            the formats this build reads and writes, with their options\n"
          "  ops [--format F]   canonical operators, or a format's mapping attribute by attribute\n"
          "  errors             the error codes and exit statuses\n"
          "  batch INPUT...     convert many models (files, directories, --manifest) with a JSON report\n"
          "  run MODEL          run a model on the CPU runtime (inputs/outputs as .npy, --repeat timing)\n"
          "  check A B          run two models on the same inputs and compare their outputs\n"
          "  simplify IN OUT    fold constant subgraphs (Identity of weights, shape chains), drop dead nodes\n"
          "\n"
          "Conversion options:\n"
          "  --from FORMAT        input format (default: detected from content, then extension)\n"
          "  --to FORMAT          output format (default: from the output's extension)\n"
          "  --params FILE        the input's companion weights file\n"
          "  --out-params FILE    where to write the output's companion weights file\n"
          "  --batch-size N       fix symbolic (-1) batch dimensions on read\n"
          "  --input-shape N:D,.. give an input's shape (formats without shapes)\n"
          "  -I, --read-option KEY=VALUE   a reader option (see 'graphconv formats')\n"
          "  -O, --write-option KEY=VALUE  a writer option (see 'graphconv formats')\n"
          "  --allow-opaque       keep operators the target cannot map, verbatim\n"
          "  --opset N            ONNX opset to write (-O opset=N)\n"
          "  --external-data      ONNX: large tensors in MODEL.data beside the model\n"
          "  --check              after writing, run input and output on the same seeded inputs and compare\n"
          "  --atol X, --rtol Y   tolerances of --check (default 1e-4, 1e-3)\n"
          "  --progress           show the progress of writing the weights (default: on a terminal,\n"
          "                       for 64 MiB of tensors or more)\n"
          "  -f, --force          overwrite existing output files\n"
          "  -q, --quiet          print nothing but errors\n"
          "  -v, --verbose        say more (which rule chose a format, ...)\n"
          "  -h, --help           this help\n"
          "  -V, --version        versions of graphconv and its libraries\n"
          "\n"
          "An input named - is standard input (a pipe is read whole first).\n"
          "Exit status: 0 ok, 1 usage, 2 bad input, 3 unsupported content,\n"
          "4 check failed or models differ, 5 I/O or system error.\n"
          "See graphconv(1) and graphconv-formats(5).\n",
          f);
}

static void version(void)
{
    printf("graphconv %s\n", GIR_VERSION);
    printf("libraries: yajl %s, protobuf-c %s, libzip %s, hdf5 %s\n", GIR_YAJL_VERSION, GIR_PROTOBUFC_VERSION,
           GIR_LIBZIP_VERSION, GIR_HDF5_VERSION);
}

enum {
    OPT_FROM = 256,
    OPT_TO,
    OPT_PARAMS,
    OPT_OUT_PARAMS,
    OPT_BATCH,
    OPT_INPUT_SHAPE,
    OPT_ALLOW_OPAQUE,
    OPT_OPSET,
    OPT_EXTERNAL_DATA,
    OPT_CHECK,
    OPT_ATOL,
    OPT_RTOL,
    OPT_PROGRESS,
};

int cmd_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "from", required_argument, NULL, OPT_FROM },
        { "to", required_argument, NULL, OPT_TO },
        { "params", required_argument, NULL, OPT_PARAMS },
        { "out-params", required_argument, NULL, OPT_OUT_PARAMS },
        { "batch-size", required_argument, NULL, OPT_BATCH },
        { "input-shape", required_argument, NULL, OPT_INPUT_SHAPE },
        { "read-option", required_argument, NULL, 'I' },
        { "write-option", required_argument, NULL, 'O' },
        { "allow-opaque", no_argument, NULL, OPT_ALLOW_OPAQUE },
        { "opset", required_argument, NULL, OPT_OPSET },
        { "external-data", no_argument, NULL, OPT_EXTERNAL_DATA },
        { "check", no_argument, NULL, OPT_CHECK },
        { "atol", required_argument, NULL, OPT_ATOL },
        { "rtol", required_argument, NULL, OPT_RTOL },
        { "progress", no_argument, NULL, OPT_PROGRESS },
        { "force", no_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *from = NULL, *to = NULL;
    bool check = false;
    progress_view pv = { NULL, false, isatty(STDERR_FILENO) != 0, -1 };
    double atol = 1e-4, rtol = 1e-3;
    gir_options *ropts = gir_options_new(), *wopts = gir_options_new();
    int rc = GC_EXIT_OK, c;
    if (!ropts || !wopts) {
        fputs("graphconv: out of memory\n", stderr);
        rc = GC_EXIT_IO;
        goto out;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:O:fqvh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_FROM: from = optarg; break;
        case OPT_TO: to = optarg; break;
        case OPT_PARAMS: gir_options_set(ropts, "params", optarg, NULL); break;
        case OPT_OUT_PARAMS: gir_options_set(wopts, "params", optarg, NULL); break;
        case OPT_BATCH: gir_options_set(ropts, "batch-size", optarg, NULL); break;
        case OPT_INPUT_SHAPE: gir_options_set(ropts, "input-shape", optarg, NULL); break;
        case OPT_ALLOW_OPAQUE: gir_options_set(wopts, "allow-opaque", "1", NULL); break;
        case OPT_OPSET: gir_options_set(wopts, "opset", optarg, NULL); break;
        case OPT_EXTERNAL_DATA: gir_options_set(wopts, "external-data", "1", NULL); break;
        case OPT_CHECK: check = true; break;
        case OPT_ATOL: atol = strtod(optarg, NULL); break;
        case OPT_RTOL: rtol = strtod(optarg, NULL); break;
        case OPT_PROGRESS: pv.forced = true; break;
        case 'I':
            if (!gc_parse_kv(ropts, optarg, "--read-option")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'O':
            if (!gc_parse_kv(wopts, optarg, "--write-option")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'f': gir_options_set(wopts, "force", "1", NULL); break;
        case 'q': gc_verbosity = 0; break;
        case 'v': gc_verbosity++; break;
        case 'h':
            usage(stdout);
            goto out;
        default: rc = GC_EXIT_USAGE; goto out;
        }
    }
    if (argc - optind != 2) {
        rc = gc_usage_error("convert needs exactly an input and an output file");
        goto out;
    }
    const char *in = argv[optind], *outp = argv[optind + 1];
    if (from && !gir_format_find(from)) {
        rc = gc_usage_error("unknown input format '%s' (see 'graphconv formats')", from);
        goto out;
    }
    if (!to)
        to = gir_format_for_extension(outp);
    if (!to) {
        rc = gc_usage_error("cannot tell the output format from '%s'; use --to (see 'graphconv formats')", outp);
        goto out;
    }
    if (!gir_format_find(to)) {
        rc = gc_usage_error("unknown output format '%s' (see 'graphconv formats')", to);
        goto out;
    }
    /* Fail before reading anything if the output exists. */
    if (!gir_options_flag(wopts, "force") && gir_path_exists(outp)) {
        fprintf(stderr, "graphconv: %s: output exists; use --force to overwrite it [output-exists]\n", outp);
        rc = gir_status_exit_code(GIR_E_EXISTS);
        goto out;
    }
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    gir_status st = gc_load(in, from, ropts, &g, &err);
    if (st == GIR_OK) {
        gc_print_graph_notes(g);
        gc_note_to_stderr(wopts);
        pv.path = outp;
        gir_options_set_progress_handler(wopts, show_progress, &pv);
    }
    char *metrics = NULL;
    if (st == GIR_OK)
        st = gc_save_checked(g, outp, to, wopts, check, atol, rtol, &metrics, &err);
    if (st == GIR_OK && check && gc_verbosity >= 1)
        fprintf(stderr, "graphconv: check passed: %s\n", metrics ? metrics : "");
    free(metrics);
    if (st) {
        rc = gc_report(&err);
    } else if (gc_verbosity >= 1) {
        const gir_attr *src = gir_attrs_find(&g->meta, "source.format");
        fprintf(stderr, "graphconv: %s (%s) -> %s (%s): %zu nodes, %zu inputs, %zu outputs\n", in,
                src && src->type == GIR_ATTR_STRING ? src->u.s : "?", outp, to, g->n_nodes, g->n_inputs,
                g->n_outputs);
    }
    gir_error_clear(&err);
    gir_graph_free(g);
out:
    gir_options_free(ropts);
    gir_options_free(wopts);
    return rc;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
    { "convert", cmd_convert }, { "info", cmd_info },     { "diff", cmd_diff },
    { "draw", cmd_draw },
    { "formats", cmd_formats }, { "ops", cmd_ops },       { "errors", cmd_errors },
    { "batch", cmd_batch },     { "run", cmd_run },       { "check", cmd_check },
    { "simplify", cmd_simplify },
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GC_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return GC_EXIT_OK;
    }
    if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
        version();
        return GC_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    /* No command word: `graphconv [OPTIONS] IN OUT` converts. */
    return cmd_convert(argc, argv);
}
