/* graphconv draw MODEL OUT: a picture of any model's graph.
 *
 * OUT ending in .dot or .gv (or "-" for standard output) gets Graphviz DOT
 * text; .svg and .png are rendered by Graphviz's `dot` program, which is run
 * with the DOT text on its standard input and the (temporary) output file on
 * its standard output.  GRAPHCONV_DOT names another program to use. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/dot.h"

extern char **environ;

typedef enum { PIC_DOT, PIC_SVG, PIC_PNG } pic_kind;

static bool pic_from_name(const char *s, pic_kind *k)
{
    if (gir_str_ieq(s, "dot") || gir_str_ieq(s, "gv"))
        *k = PIC_DOT;
    else if (gir_str_ieq(s, "svg"))
        *k = PIC_SVG;
    else if (gir_str_ieq(s, "png"))
        *k = PIC_PNG;
    else
        return false;
    return true;
}

static bool pic_from_path(const char *path, pic_kind *k)
{
    if (strcmp(path, "-") == 0) {
        *k = PIC_DOT;
        return true;
    }
    const char *base = gir_path_basename(path);
    const char *dot = strrchr(base, '.');
    return dot && dot != base && pic_from_name(dot + 1, k);
}

/* The path of an executable: name itself when it has a slash, else the
 * first match along PATH.  NULL when there is none (malloc'd otherwise). */
static char *find_program(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? gir_strdupf("%s", name) : NULL;
    const char *path = getenv("PATH");
    if (!path || !*path)
        return NULL;
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *cand = gir_strdupf("%.*s/%s", (int)n, n ? p : ".", name);
        if (!cand)
            return NULL;
        if (access(cand, X_OK) == 0)
            return cand;
        free(cand);
        if (!end)
            return NULL;
        p = end + 1;
    }
}

/* Runs `prog -Tfmt` with text on stdin and out_fd as stdout. */
static int render(const char *prog, const char *fmt, const gir_buf *text, int out_fd, const char *outp)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        fprintf(stderr, "graphconv: cannot create a pipe: %s [io]\n", strerror(errno));
        return GC_EXIT_IO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, pipefd[1]);
    char targ[16];
    snprintf(targ, sizeof targ, "-T%s", fmt);
    char *argv[] = { (char *)prog, targ, NULL };
    pid_t pid;
    int rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[0]);
    if (rc != 0) {
        close(pipefd[1]);
        fprintf(stderr, "graphconv: %s: cannot run %s: %s [io]\n", outp, prog, strerror(rc));
        return GC_EXIT_IO;
    }
    /* The renderer may exit early: a broken pipe is an error, not a signal. */
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    size_t off = 0;
    bool write_failed = false;
    while (off < text->len) {
        ssize_t w = write(pipefd[1], text->data + off, text->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            write_failed = true;
            break;
        }
        off += (size_t)w;
    }
    close(pipefd[1]);
    sigaction(SIGPIPE, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "graphconv: %s: cannot wait for %s: %s [io]\n", outp, prog, strerror(errno));
            return GC_EXIT_IO;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || write_failed) {
        if (WIFEXITED(status))
            fprintf(stderr, "graphconv: %s: %s -T%s failed (exit status %d); nothing written [io]\n", outp, prog,
                    fmt, WEXITSTATUS(status));
        else
            fprintf(stderr, "graphconv: %s: %s -T%s failed; nothing written [io]\n", outp, prog, fmt);
        return GC_EXIT_IO;
    }
    return GC_EXIT_OK;
}

static void draw_usage(FILE *f)
{
    fputs("Usage: graphconv draw [OPTIONS] MODEL OUT\n"
          "Draws MODEL's graph: OUT.dot or OUT.gv (or - for standard output) gets Graphviz\n"
          "DOT text; OUT.svg and OUT.png are rendered with Graphviz's dot program.\n"
          "\n"
          "  --format dot|svg|png  picture type (default: from OUT's extension)\n"
          "  --from FORMAT         MODEL's format (default: detected)\n"
          "  --params FILE         MODEL's companion weights file\n"
          "  -I, --read-option KEY=VALUE  a reader option\n"
          "  --input-shape NAME:D0,D1,..[;NAME:..]  give inputs shapes (edges show the shapes inferred)\n"
          "  --batch-size N        set every input's first dimension\n"
          "  --no-attrs            do not list operator attributes\n"
          "  --all-attrs           list attributes at their default value too (hidden by default)\n"
          "  --collapse            draw a run of alike blocks (the same operators wired the same\n"
          "                        way, one after another) as its first block and one box\n"
          "  --no-shapes           do not label edges with shapes\n"
          "  -f, --force           overwrite OUT\n"
          "  -q, --quiet           print nothing but errors\n"
          "Environment: GRAPHCONV_DOT names the Graphviz program (default: dot on PATH).\n",
          f);
}

enum { OPT_FORMAT = 300, OPT_FROM, OPT_PARAMS, OPT_NO_ATTRS, OPT_NO_SHAPES, OPT_ALL_ATTRS, OPT_INPUT_SHAPE,
       OPT_BATCH, OPT_COLLAPSE };

int cmd_draw(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, OPT_FORMAT },
        { "from", required_argument, NULL, OPT_FROM },
        { "params", required_argument, NULL, OPT_PARAMS },
        { "read-option", required_argument, NULL, 'I' },
        { "no-attrs", no_argument, NULL, OPT_NO_ATTRS },
        { "no-shapes", no_argument, NULL, OPT_NO_SHAPES },
        { "all-attrs", no_argument, NULL, OPT_ALL_ATTRS },
        { "collapse", no_argument, NULL, OPT_COLLAPSE },
        { "input-shape", required_argument, NULL, OPT_INPUT_SHAPE },
        { "batch-size", required_argument, NULL, OPT_BATCH },
        { "force", no_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    gir_dot_options dopt = gir_dot_defaults;
    const char *from = NULL, *format = NULL;
    bool force = false;
    gir_options *ropts = gir_options_new();
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    gir_buf text = GIR_BUF_INIT;
    char *prog = NULL;
    int rc = GC_EXIT_OK, c;
    if (!ropts) {
        fputs("graphconv: out of memory\n", stderr);
        return GC_EXIT_IO;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:fqh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_FORMAT: format = optarg; break;
        case OPT_FROM: from = optarg; break;
        case OPT_PARAMS: gir_options_set(ropts, "params", optarg, NULL); break;
        case OPT_NO_ATTRS: dopt.attrs = false; break;
        case OPT_NO_SHAPES: dopt.shapes = false; break;
        case OPT_ALL_ATTRS: dopt.all_attrs = true; break;
        case OPT_COLLAPSE: dopt.collapse = true; break;
        case OPT_INPUT_SHAPE: gir_options_set(ropts, "input-shape", optarg, NULL); break;
        case OPT_BATCH: gir_options_set(ropts, "batch-size", optarg, NULL); break;
        case 'I':
            if (!gc_parse_kv(ropts, optarg, "--read-option")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'f': force = true; break;
        case 'q': gc_verbosity = 0; break;
        case 'h':
            draw_usage(stdout);
            goto out;
        default: rc = gc_bad_option(argv); goto out;
        }
    }
    if (argc - optind != 2) {
        rc = gc_usage_error("draw needs exactly a model file and an output file");
        goto out;
    }
    const char *in = argv[optind], *outp = argv[optind + 1];
    pic_kind kind;
    if (format ? !pic_from_name(format, &kind) : !pic_from_path(outp, &kind)) {
        rc = format ? gc_usage_error("unknown picture format '%s' (dot, svg or png)", format)
                    : gc_usage_error("cannot tell the picture format from '%s'; name it .dot, .svg or .png "
                                     "or use --format",
                                     outp);
        goto out;
    }
    bool to_stdout = strcmp(outp, "-") == 0;
    if (to_stdout && kind != PIC_DOT) {
        rc = gc_usage_error("only DOT text can go to standard output");
        goto out;
    }
    if (kind != PIC_DOT) {
        const char *want = getenv("GRAPHCONV_DOT");
        prog = find_program(want && *want ? want : "dot");
        if (!prog) {
            fprintf(stderr,
                    "graphconv: %s: cannot render %s: the Graphviz program '%s' is not installed (Debian "
                    "package graphviz); write a .dot file instead [io]\n",
                    outp, kind == PIC_SVG ? "SVG" : "PNG", want && *want ? want : "dot");
            rc = GC_EXIT_IO;
            goto out;
        }
    }
    if (!to_stdout && !force && gir_path_exists(outp)) {
        fprintf(stderr, "graphconv: %s: output exists; use --force to overwrite it [output-exists]\n", outp);
        rc = gir_status_exit_code(GIR_E_EXISTS);
        goto out;
    }
    if (gc_load(in, from, ropts, &g, &err) != GIR_OK || gir_dot_write(g, &dopt, &text, &err) != GIR_OK) {
        rc = gc_report(&err);
        goto out;
    }
    if (to_stdout) {
        if (fwrite(text.data, 1, text.len, stdout) != text.len || fflush(stdout) != 0) {
            fprintf(stderr, "graphconv: cannot write to standard output: %s [io]\n", strerror(errno));
            rc = GC_EXIT_IO;
        }
        goto out;
    }
    gir_outfile *of = NULL;
    if (gir_outfile_open(outp, force, &of, &err) != GIR_OK) {
        rc = gc_report(&err);
        goto out;
    }
    if (kind == PIC_DOT) {
        if (gir_outfile_write(of, text.data, text.len, &err) != GIR_OK) {
            gir_outfile_abort(of);
            rc = gc_report(&err);
            goto out;
        }
    } else {
        FILE *f = gir_outfile_stream(of);
        fflush(f);
        rc = render(prog, kind == PIC_SVG ? "svg" : "png", &text, fileno(f), outp);
        if (rc != GC_EXIT_OK) {
            gir_outfile_abort(of);
            goto out;
        }
    }
    if (gir_outfile_commit(of, &err) != GIR_OK) {
        rc = gc_report(&err);
        goto out;
    }
    if (gc_verbosity >= 1)
        fprintf(stderr, "graphconv: %s -> %s: %zu nodes drawn\n", in, outp, g->n_nodes);
out:
    free(prog);
    gir_buf_free(&text);
    gir_error_clear(&err);
    gir_graph_free(g);
    gir_options_free(ropts);
    return rc;
}
