/* graphconv diff A B: structural and weight differences of two models. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>

#include "passes/diff.h"

int cmd_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "names", no_argument, NULL, 'n' },
        { "meta", no_argument, NULL, 'm' },
        { "no-weights", no_argument, NULL, 'w' },
        { "params-a", required_argument, NULL, 'a' },
        { "params-b", required_argument, NULL, 'b' },
        { "from-a", required_argument, NULL, 'A' },
        { "from-b", required_argument, NULL, 'B' },
        { "input-shape-a", required_argument, NULL, 'S' },
        { "input-shape-b", required_argument, NULL, 'T' },
        { "batch-size-a", required_argument, NULL, 'x' },
        { "batch-size-b", required_argument, NULL, 'y' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    gir_diff_options dopt = { .names = false, .meta = false, .weights = true, .max_report = 100 };
    const char *from[2] = { NULL, NULL };
    gir_options *opts[2] = { gir_options_new(), gir_options_new() };
    int rc = GC_EXIT_OK, c;
    gir_graph *g[2] = { NULL, NULL };
    gir_error err = GIR_ERROR_INIT;
    if (!opts[0] || !opts[1]) {
        rc = GC_EXIT_IO;
        goto out;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': dopt.names = true; break;
        case 'm': dopt.meta = true; break;
        case 'w': dopt.weights = false; break;
        case 'a': gir_options_set(opts[0], "params", optarg, NULL); break;
        case 'b': gir_options_set(opts[1], "params", optarg, NULL); break;
        case 'A': from[0] = optarg; break;
        case 'B': from[1] = optarg; break;
        case 'S': gir_options_set(opts[0], "input-shape", optarg, NULL); break;
        case 'T': gir_options_set(opts[1], "input-shape", optarg, NULL); break;
        case 'x': gir_options_set(opts[0], "batch-size", optarg, NULL); break;
        case 'y': gir_options_set(opts[1], "batch-size", optarg, NULL); break;
        case 'q': gc_verbosity = 0; break;
        case 'h':
            printf("Usage: graphconv diff [OPTIONS] A B\n"
                   "Compares two models' graphs and weights: nodes are paired by walking back from the\n"
                   "outputs, so renamed models still compare.  One line per difference (at most 100).\n"
                   "Exit status 0 when they are the same, 4 when they differ.\n"
                   "  --names                also compare node and value names\n"
                   "  --meta                 also compare format metadata (graph, node, value)\n"
                   "  --no-weights           do not compare weight and constant data\n"
                   "  --from-a/--from-b FORMAT    each model's format (default: detected)\n"
                   "  --params-a/--params-b FILE  each model's companion weights file\n"
                   "  --input-shape-a/--input-shape-b NAME:D0,D1,..  give each model's inputs shapes\n"
                   "  --batch-size-a/--batch-size-b N               set each model's batch\n"
                   "  -q, --quiet            print nothing, only the exit status\n"
                   "  -h, --help             this help\n");
            goto out;
        default: rc = gc_bad_option(argv); goto out;
        }
    }
    if (argc - optind != 2) {
        rc = gc_usage_error("diff needs exactly two model files");
        goto out;
    }
    for (int i = 0; i < 2; i++) {
        if (gc_load(argv[optind + i], from[i], opts[i], &g[i], &err) != GIR_OK) {
            rc = gc_report(&err);
            goto out;
        }
    }
    gir_buf report = GIR_BUF_INIT;
    size_t count = 0;
    if (gir_graph_diff(g[0], g[1], &dopt, &report, &count, &err) != GIR_OK) {
        gir_buf_free(&report);
        rc = gc_report(&err);
        goto out;
    }
    if (count == 0) {
        if (gc_verbosity >= 1)
            printf("same graph: %zu nodes%s\n", g[0]->n_nodes, dopt.weights ? ", identical weights" : "");
    } else {
        if (gc_verbosity >= 1) {
            fputs(report.data ? report.data : "", stdout);
            printf("%zu difference%s\n", count, count == 1 ? "" : "s");
        }
        rc = GC_EXIT_CHECK;
    }
    gir_buf_free(&report);
out:
    gir_error_clear(&err);
    gir_graph_free(g[0]);
    gir_graph_free(g[1]);
    gir_options_free(opts[0]);
    gir_options_free(opts[1]);
    return rc;
}
