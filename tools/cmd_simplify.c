/* graphconv simplify IN OUT: constant folding and dead-node removal, as
 * onnxsim does for ONNX, for any format graphconv reads and writes. */
#include "check.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "formats/format.h"
#include "passes/fold.h"

static void simplify_usage(FILE *f)
{
    fputs("Usage: graphconv simplify [OPTIONS] IN OUT\n"
          "Folds every node that computes from constants only (Identity of a weight, Shape of a known\n"
          "shape and what follows from them) into a constant, evaluated by the reference runtime, and\n"
          "removes every node and value nothing reads.  A folded result is never larger than the\n"
          "constants it came from (or 16 KiB), so the model does not grow.  OUT is written in IN's\n"
          "format unless --to or OUT's extension says otherwise.\n"
          "\n"
          "  --from FORMAT, --to FORMAT   formats (default: detected; IN's format)\n"
          "  -I, --read-option KEY=VALUE  a reader option\n"
          "  -O, --write-option KEY=VALUE a writer option\n"
          "  --check              run IN and the written OUT on the same seeded inputs and compare\n"
          "  -f, --force          overwrite OUT\n"
          "  -q, --quiet          print nothing but errors\n"
          "  -h, --help           this help\n",
          f);
}

enum { OPT_FROM = 256, OPT_TO, OPT_CHECK };

int cmd_simplify(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "from", required_argument, NULL, OPT_FROM },
        { "to", required_argument, NULL, OPT_TO },
        { "read-option", required_argument, NULL, 'I' },
        { "write-option", required_argument, NULL, 'O' },
        { "check", no_argument, NULL, OPT_CHECK },
        { "force", no_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *from = NULL, *to = NULL;
    bool check = false;
    gir_options *ropts = gir_options_new(), *wopts = gir_options_new();
    int rc = GC_EXIT_OK, c;
    gir_graph *g = NULL, *orig = NULL, *back = NULL;
    gir_error err = GIR_ERROR_INIT;
    if (!ropts || !wopts) {
        fputs("graphconv: out of memory\n", stderr);
        rc = GC_EXIT_IO;
        goto out;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:O:fqh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_FROM: from = optarg; break;
        case OPT_TO: to = optarg; break;
        case OPT_CHECK: check = true; break;
        case 'I':
        case 'O':
            if (!gc_parse_kv(c == 'I' ? ropts : wopts, optarg, c == 'I' ? "--read-option" : "--write-option")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'f': gir_options_set(wopts, "force", "1", NULL); break;
        case 'q': gc_verbosity = 0; break;
        case 'h': simplify_usage(stdout); goto out;
        default: rc = GC_EXIT_USAGE; goto out;
        }
    }
    if (argc - optind != 2) {
        rc = gc_usage_error("simplify needs exactly an input and an output file");
        goto out;
    }
    const char *in = argv[optind], *outp = argv[optind + 1];
    if (!gir_options_flag(wopts, "force") && gir_path_exists(outp)) {
        fprintf(stderr, "graphconv: %s: output exists; use --force to overwrite it [output-exists]\n", outp);
        rc = gir_status_exit_code(GIR_E_EXISTS);
        goto out;
    }
    const char *fmt, *reason;
    gir_status st = gc_load_detect(in, from, ropts, &g, &fmt, &reason, &err);
    if (!st && !to)
        to = gir_format_for_extension(outp) ? gir_format_for_extension(outp) : fmt;
    if (!st && check)
        st = gir_graph_clone(g, &orig, &err);
    size_t nodes_before = g ? g->n_nodes : 0, folded = 0;
    if (!st)
        st = gir_fold_constants(g, GIR_FOLD_LIMIT, &folded, &err);
    if (!st) {
        gc_note_to_stderr(wopts);
        st = gir_save(g, outp, to, wopts, &err);
    }
    if (!st && gc_verbosity >= 1)
        fprintf(stderr, "graphconv: %s -> %s (%s): %zu nodes folded, %zu -> %zu nodes\n", in, outp, to, folded,
                nodes_before, g->n_nodes);
    if (!st && check) {
        st = gir_load(outp, to, NULL, &back, &err);
        if (!st) {
            gir_check_options o;
            gir_check_options_init(&o);
            gir_check_result res = { 0 };
            st = gir_check_models(orig, back, &o, &res, &err);
            if (!st && gc_verbosity >= 1)
                fprintf(stderr, "graphconv: check passed: %s\n", res.verdict ? res.verdict : "");
            gir_check_result_clear(&res);
        }
    }
    if (st)
        rc = gc_report(&err);
out:
    gir_error_clear(&err);
    gir_graph_free(g);
    gir_graph_free(orig);
    gir_graph_free(back);
    gir_options_free(ropts);
    gir_options_free(wopts);
    return rc;
}
