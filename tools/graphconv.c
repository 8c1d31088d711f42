/* graphconv: convert, inspect and check neural-network models. */
#include "cli.h"

#include <getopt.h>
#include <signal.h>
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

int gc_bad_option(char **argv)
{
    /* argv[0] is the subcommand ("graphconv" itself for a bare convert);
     * getopt left the offending word before optind. */
    const char *cmd = argv[0] && strcmp(gir_path_basename(argv[0]), "graphconv") != 0 ? argv[0] : NULL;
    const char *word = optind > 0 ? argv[optind - 1] : "?";
    char shortopt[3] = { '-', (char)optopt, '\0' };
    bool needs_value = optopt != 0;
    if (optopt > 0 && optopt < 128 && strncmp(word, "--", 2) != 0)
        word = shortopt;
    if (needs_value && strchr(word, '=') == NULL && strncmp(word, "--", 2) == 0)
        fprintf(stderr, "graphconv: %s%soption '%s' needs a value\n", cmd ? cmd : "", cmd ? ": " : "", word);
    else if (optopt > 0 && optopt < 128 && word == shortopt)
        fprintf(stderr, "graphconv: %s%sunknown option '%s' or it needs a value\n", cmd ? cmd : "",
                cmd ? ": " : "", word);
    else
        fprintf(stderr, "graphconv: %s%sunknown option '%s'\n", cmd ? cmd : "", cmd ? ": " : "", word);
    fprintf(stderr, "Try 'graphconv %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
    return GC_EXIT_USAGE;
}

void gc_shape_hint(const gir_graph *g, const gir_error *err)
{
    if (!g || gc_verbosity < 1 ||
        !(err->code == GIR_E_SHAPE || err->code == GIR_E_UNSUPPORTED_ATTR || err->code == GIR_E_UNSUPPORTED))
        return;
    gir_buf b = GIR_BUF_INIT;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const gir_value *v = g->values[g->inputs[i]];
        if (v->data || gir_shape_is_known(&v->shape))
            continue;
        gir_buf_printf(&b, "%s%s:", b.len ? ";" : "", v->name);
        if (v->shape.rank < 0)
            gir_buf_puts(&b, "D0,D1,...");
        for (int d = 0; d < v->shape.rank; d++)
            gir_buf_printf(&b, d ? ",%s" : "%s", v->shape.dims[d] >= 0 ? "" : "N");
        for (int d = 0; d < v->shape.rank; d++)
            if (v->shape.dims[d] >= 0) {
                /* print the known dimensions as they are */
                b.len = 0;
                break;
            }
    }
    if (b.len && !b.failed)
        fprintf(stderr, "graphconv: hint: the model's input shapes are not known; give them with --input-shape "
                        "%.*s\n", (int)b.len, b.data);
    else if (!b.failed) {
        for (size_t i = 0; i < g->n_inputs; i++) {
            const gir_value *v = g->values[g->inputs[i]];
            if (!v->data && !gir_shape_is_known(&v->shape)) {
                char sh[96];
                fprintf(stderr, "graphconv: hint: input '%s' is %s; give its shape with --input-shape %s:D0,D1,... "
                                "or the batch with --batch-size N\n",
                        v->name, gir_shape_str(&v->shape, sh, sizeof sh), v->name);
                break;
            }
        }
    }
    gir_buf_free(&b);
}

int gc_report(const gir_error *err)
{
    char *msg = gir_error_format(err);
    fprintf(stderr, "graphconv: %s\n", msg ? msg : gir_status_name(err->code));
    free(msg);
    return gir_status_exit_code(err->code);
}

uint64_t gc_max_run_elements;
gir_options *gc_limits;

/* The resource limits, which every command reading a model takes as
 * flags: --max-nodes=N (or --max-nodes N) is -I max-nodes=N. */
static const char *const limit_flags[] = {
    "max-bytes", "max-depth", "max-nodes", "max-tensors", "max-attrs",
    "max-weight-bytes", "max-unzip-bytes", "max-run-elements",
};
#define N_LIMIT_FLAGS (sizeof limit_flags / sizeof limit_flags[0])

bool gc_parse_kv(gir_options *opts, const char *arg, const char *flag)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        gc_usage_error("%s takes KEY=VALUE, not '%s'", flag, arg);
        return false;
    }
    if ((size_t)(eq - arg) == strlen("max-run-elements") && strncmp(arg, "max-run-elements", (size_t)(eq - arg)) == 0) {
        int64_t v;
        if (!gir_parse_i64(eq + 1, &v) || v < 1) {
            gc_usage_error("option max-run-elements=%s must be a positive integer", eq + 1);
            return false;
        }
        gc_max_run_elements = (uint64_t)v;
    }
    char *key = gir_strdupf("%.*s", (int)(eq - arg), arg);
    gir_status st = key ? gir_options_set(opts, key, eq + 1, NULL) : GIR_E_NOMEM;
    for (size_t k = 0; !st && k < N_LIMIT_FLAGS; k++)
        if (strcmp(key, limit_flags[k]) == 0 && !(gc_limits = gc_limits ? gc_limits : gir_options_new()))
            st = GIR_E_NOMEM;
        else if (strcmp(key, limit_flags[k]) == 0)
            st = gir_options_set(gc_limits, key, eq + 1, NULL);
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

/* Notes are gathered and printed together (gc_flush_notes), so that
 * notes alike (the same text after "SUBJECT: ") print once with a count.
 * -v prints each. */
static char **notes;
static size_t n_notes, cap_notes;

static void collect_note(void *ctx, const char *note)
{
    (void)ctx;
    char *copy = gir_strdupf("%s", note);
    if (copy && GIR_GROW(notes, cap_notes, n_notes + 1))
        notes[n_notes++] = copy;
    else
        free(copy);
}

/* What notes alike share: the text after the first ": " (a note without
 * one is alike only to itself). */
static const char *note_key(const char *note)
{
    const char *c = strstr(note, ": ");
    return c ? c + 2 : note;
}

void gc_flush_notes(void)
{
    bool *done = calloc(n_notes ? n_notes : 1, sizeof *done);
    for (size_t i = 0; i < n_notes; i++) {
        if (gc_verbosity < 1 || (done && done[i]))
            continue;
        size_t alike = 1;
        for (size_t k = i + 1; gc_verbosity < 2 && done && k < n_notes; k++)
            if (strcmp(note_key(notes[k]), note_key(notes[i])) == 0 &&
                (note_key(notes[i]) != notes[i] || strcmp(notes[k], notes[i]) == 0)) {
                alike++;
                done[k] = true;
            }
        if (alike < 3) {
            /* two alike are shorter printed as they are */
            fprintf(stderr, "graphconv: note: %s\n", notes[i]);
            for (size_t k = i + 1; alike == 2 && k < n_notes; k++)
                if (done[k] && strcmp(note_key(notes[k]), note_key(notes[i])) == 0) {
                    fprintf(stderr, "graphconv: note: %s\n", notes[k]);
                    break;
                }
            continue;
        }
        const char *key = note_key(notes[i]);
        if (key == notes[i])
            fprintf(stderr, "graphconv: note (%zu times): %s\n", alike, key);
        else
            fprintf(stderr, "graphconv: note (%zu alike, first %.*s; -v lists each): %s\n", alike,
                    (int)(key - 2 - notes[i]), notes[i], key);
    }
    free(done);
    for (size_t i = 0; i < n_notes; i++)
        free(notes[i]);
    free(notes);
    notes = NULL;
    n_notes = cap_notes = 0;
}

void gc_print_graph_notes(const gir_graph *g)
{
    const gir_attr *a = gir_attrs_find(&g->meta, GIR_META_NOTES);
    for (size_t i = 0; a && a->type == GIR_ATTR_STRINGS && i < a->u.strs.n; i++)
        collect_note(NULL, a->u.strs.v[i]);
    gc_flush_notes();
}

void gc_note_to_stderr(gir_options *wopts)
{
    gir_options_set_note_handler(wopts, collect_note, NULL);
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
          "  --batch-size N       set every input's first dimension (shapes inferred again; a model\n"
          "                       whose constants pin the batch is refused, naming the node)\n"
          "  --input-shape NAME:D0,D1,..[;NAME:..]  give inputs shapes, any format (-1: unknown)\n"
          "  --weights-as-inputs  MXNet/NNVM/TVM graph without its weights file: take the weights\n"
          "                       as graph inputs (refused otherwise)\n"
          "  -I, --read-option KEY=VALUE   a reader option (see 'graphconv formats')\n"
          "  -O, --write-option KEY=VALUE  a writer option (see 'graphconv formats')\n"
          "  --allow-opaque       keep operators the target cannot map, verbatim\n"
          "  --opset N            ONNX opset to write (-O opset=N)\n"
          "  --external-data      ONNX: large tensors in MODEL.data beside the model\n"
          "  --check[=run|structure]  after writing, run input and output on the same seeded inputs and\n"
          "                       compare; when they cannot both run, =structure accepts a comparison of\n"
          "                       graphs and weights (plain --check then fails, saying so)\n"
          "  --atol X, --rtol Y   tolerances of --check (default 1e-4, 1e-3)\n"
          "  --progress           show the progress of writing the weights (default: on a terminal,\n"
          "                       for 64 MiB of tensors or more)\n"
          "  -f, --force          overwrite existing output files\n"
          "  -q, --quiet          print nothing but errors\n"
          "  -v, --verbose        say more (which rule chose a format, ...)\n"
          "  -h, --help           this help\n"
          "  -V, --version        versions of graphconv and its libraries\n"
          "\n"
          "'graphconv COMMAND --help' explains each command's options.\n"
          "An input named - is standard input (a pipe is read whole first).\n"
          "\n"
          "Limits (every command that reads a model; also -I KEY=N; exit 2 when an input exceeds one):\n"
          "  --max-bytes=N          input files and decompressed members (default: none)\n"
          "  --max-depth=N          JSON / protobuf text nesting (256)\n"
          "  --max-nodes=N          nodes of a graph (1000000)\n"
          "  --max-tensors=N        tensors made while reading (1000000)\n"
          "  --max-attrs=N          operator attributes in all (10000000)\n"
          "  --max-weight-bytes=N   bytes of the tensors made while reading (4294967296)\n"
          "  --max-unzip-bytes=N    decompressed bytes of an archive (4294967296)\n"
          "  --max-run-elements=N   tensor elements one run computes: run, check, --check (4000000000)\n"
          "\n"
          "Inputs may be hostile: only regular files are replaced; a model and its companion files\n"
          "are committed together, and read only when no commit is half done.\n"
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

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

/* Says which format an output is written in when its extension leaves a
 * choice (several formats take .json), and warns when --to contradicts
 * the extension. */
static void explain_output_format(const char *outp, const char *to, bool to_given)
{
    const char *ext_fmt = gir_format_for_extension(outp);
    if (to_given) {
        bool takes = false;
        const gir_format *f = gir_format_find(to);
        for (const char *const *e = f->extensions; e && *e; e++)
            takes = takes || gir_str_ends_with(outp, *e);
        if (!takes && ext_fmt && gc_verbosity >= 1)
            fprintf(stderr, "graphconv: warning: %s is written as %s, but its extension is %s's\n", outp, to,
                    ext_fmt);
        return;
    }
    /* The formats that take the extension chosen, with it as long. */
    size_t n = 0, best = 0;
    gir_buf others = GIR_BUF_INIT;
    for (size_t i = 0; gir_format_at(i); i++)
        for (const char *const *e = gir_format_at(i)->extensions; e && *e; e++)
            if (gir_str_ends_with(outp, *e) && strlen(*e) > best)
                best = strlen(*e);
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *f = gir_format_at(i);
        for (const char *const *e = f->extensions; e && *e; e++)
            if (gir_format_at(i)->write && gir_str_ends_with(outp, *e) && strlen(*e) == best) {
                if (strcmp(f->name, to) != 0)
                    gir_buf_printf(&others, "%s%s", others.len ? ", " : "", f->name);
                n++;
                break;
            }
    }
    if (n > 1 && gc_verbosity >= 1 && others.data)
        fprintf(stderr, "graphconv: note: %s: writing %s (%s take the extension too; choose with --to)\n", outp,
                to, others.data);
    gir_buf_free(&others);
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
    OPT_WEIGHTS_AS_INPUTS,
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
        { "check", optional_argument, NULL, OPT_CHECK },
        { "atol", required_argument, NULL, OPT_ATOL },
        { "rtol", required_argument, NULL, OPT_RTOL },
        { "progress", no_argument, NULL, OPT_PROGRESS },
        { "weights-as-inputs", no_argument, NULL, OPT_WEIGHTS_AS_INPUTS },
        { "force", no_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *from = NULL, *to = NULL;
    gc_check_spec check = { false, false, 1e-4, 1e-3 };
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
        case OPT_CHECK:
            if (!gc_parse_check_arg(optarg, &check)) {
                rc = gc_usage_error("--check takes 'run' (the default) or 'structure', not '%s'", optarg);
                goto out;
            }
            break;
        case OPT_ATOL: atol = strtod(optarg, NULL); break;
        case OPT_RTOL: rtol = strtod(optarg, NULL); break;
        case OPT_PROGRESS: pv.forced = true; break;
        case OPT_WEIGHTS_AS_INPUTS: gir_options_set(ropts, "weights-as-inputs", "1", NULL); break;
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
        default: rc = gc_bad_option(argv); goto out;
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
    bool to_given = to != NULL;
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
    to = gir_format_find(to)->name;
    explain_output_format(outp, to, to_given);
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
    char *metrics = NULL, *verdict = NULL;
    check.atol = atol;
    check.rtol = rtol;
    gc_written written = { 0 };
    if (st == GIR_OK)
        st = gc_save_checked(g, outp, to, wopts, &check, &written, &metrics, &verdict, &err);
    gc_flush_notes();
    if (check.on && verdict && gc_verbosity >= 1)
        fprintf(stderr, "graphconv: check %s: %s\n", st == GIR_OK ? "passed" : "failed", verdict);
    free(metrics);
    free(verdict);
    if (st) {
        rc = gc_report(&err);
        gc_shape_hint(g, &err);
    } else if (gc_verbosity >= 1) {
        const gir_attr *src = gir_attrs_find(&g->meta, "source.format");
        fprintf(stderr, "graphconv: %s (%s) -> %s (%s): %zu node%s, %zu input%s, %zu output%s", in,
                src && src->type == GIR_ATTR_STRING ? src->u.s : "?", outp, to, g->n_nodes, plural(g->n_nodes),
                g->n_inputs, plural(g->n_inputs), g->n_outputs, plural(g->n_outputs));
        for (size_t i = 0; i < written.n; i++)
            fprintf(stderr, "%s%s", i ? ", " : "; wrote ", written.paths[i]);
        if (written.replaced)
            fprintf(stderr, " (%zu replaced)", written.replaced);
        fputc('\n', stderr);
    }
    gc_written_free(&written);
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

/* Interrupted or terminated: no temporary output stays behind (the
 * signal is then taken as it would have been). */
static void on_signal(int sig)
{
    gir_outfile_remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Levenshtein distance of two short words (command names). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return SIZE_MAX;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* argv with each limit flag (before "--") rewritten as -I KEY=VALUE; the
 * texts it makes are in made[] (free_args). */
static char **made[2];
static char **limit_flags_as_read_options(int argc, char **argv, int *n_out)
{
    char **out = calloc((size_t)argc * 2 + 1, sizeof *out);
    made[0] = out;
    made[1] = calloc((size_t)argc + 1, sizeof *out);
    if (!out || !made[1])
        return NULL;
    size_t n_made = 0;
    int n = 0;
    bool opts_done = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        size_t k = N_LIMIT_FLAGS;
        if (!opts_done && i > 0 && strcmp(a, "--") == 0)
            opts_done = true;
        else if (!opts_done && i > 0 && strncmp(a, "--max-", 6) == 0)
            for (k = 0; k < N_LIMIT_FLAGS; k++) {
                size_t len = strlen(limit_flags[k]);
                if (strncmp(a + 2, limit_flags[k], len) == 0 && (a[2 + len] == '=' || a[2 + len] == '\0'))
                    break;
            }
        if (k == N_LIMIT_FLAGS) {
            out[n++] = argv[i];
            continue;
        }
        const char *value = strchr(a, '=');
        if (value)
            value++;
        else if (i + 1 < argc)
            value = argv[++i];
        else
            value = ""; /* the reader says it is not a number */
        out[n++] = "-I";
        if (!(out[n++] = made[1][n_made++] = gir_strdupf("%s=%s", limit_flags[k], value)))
            return NULL;
    }
    *n_out = n;
    return out;
}

static void free_args(void)
{
    for (size_t i = 0; made[1] && made[1][i]; i++)
        free(made[1][i]);
    free(made[0]);
    free(made[1]);
    gir_options_free(gc_limits);
}

int main(int argc, char **argv)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa = { .sa_handler = on_signal };
        sigemptyset(&sa.sa_mask);
        struct sigaction old;
        /* a signal ignored by whoever started us stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
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
    opterr = 0; /* gc_bad_option words the messages */
    atexit(free_args);
    char **args = limit_flags_as_read_options(argc, argv, &argc);
    if (!args) {
        fputs("graphconv: out of memory\n", stderr);
        return GC_EXIT_IO;
    }
    argv = args;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    /* A word that is neither a command nor a file given alone, or before
     * no file: a mistyped command. */
    if (argv[1][0] != '-' && !gir_path_exists(argv[1]) && !strchr(argv[1], '/') && !strchr(argv[1], '.') &&
        strcmp(argv[1], "-") != 0) {
        fprintf(stderr, "graphconv: '%s' is not a graphconv command (nor a model file)\n", argv[1]);
        size_t best = SIZE_MAX, bi = 0;
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
            size_t d = edit_distance(argv[1], commands[i].name);
            if (d < best) {
                best = d;
                bi = i;
            }
        }
        if (best <= 2 || (strlen(argv[1]) >= 3 && strncmp(argv[1], commands[bi].name, 3) == 0))
            fprintf(stderr, "Did you mean 'graphconv %s'?\n", commands[bi].name);
        fputs("Commands: convert, info, diff, draw, formats, ops, errors, batch, run, check; see 'graphconv "
              "--help'.\n",
              stderr);
        return GC_EXIT_USAGE;
    }
    /* No command word: `graphconv [OPTIONS] IN OUT` converts. */
    return cmd_convert(argc, argv);
}
