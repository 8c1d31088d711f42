/* Shared pieces of the graphconv command-line tool. */
#ifndef GRAPHCONV_CLI_H
#define GRAPHCONV_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "core/ir.h"
#include "graphir/model.h"

/* Exit statuses (documented in graphconv(1)). */
enum {
    GC_EXIT_OK = 0,
    GC_EXIT_USAGE = 1,
    GC_EXIT_INPUT = 2,
    GC_EXIT_UNSUPPORTED = 3,
    GC_EXIT_CHECK = 4,
    GC_EXIT_IO = 5,
};

extern int gc_verbosity; /* 0 quiet, 1 normal, 2+ verbose */

/* Prints "graphconv: MESSAGE" to stderr and returns GC_EXIT_USAGE. */
int gc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* After getopt_long returned '?' (opterr is 0): names the unknown option,
 * or the option that needs a value, with "graphconv: " and a hint of the
 * subcommand's --help; returns GC_EXIT_USAGE.  argv[0] is the subcommand. */
int gc_bad_option(char **argv);
/* After an error about shapes: a hint naming the inputs of g whose shapes
 * are not known and the --input-shape that gives them. */
void gc_shape_hint(const gir_graph *g, const gir_error *err);
/* Prints the error and returns its exit status. */
int gc_report(const gir_error *err);
/* Parses "KEY=VALUE" into opts; false (after printing) when malformed. */
bool gc_parse_kv(gir_options *opts, const char *arg, const char *flag);
/* The max-run-elements limit of the runs of run, check and --check (from
 * -I max-run-elements=N or --max-run-elements=N); 0: the library's default. */
extern uint64_t gc_max_run_elements;
/* Every resource limit given (-I max-...=N or --max-...=N), as reader
 * options for the models graphconv reads back itself (--check); NULL when
 * none was given. */
extern gir_options *gc_limits;

/* Reads a model (path "-" is standard input; a pipe is read whole),
 * saying in verbose mode which rule chose the format.  format NULL:
 * detected. */
gir_status gc_load(const char *path, const char *format, const gir_options *opts, gir_graph **g, gir_error *err);
/* The same, saying which format it was and which rule chose it. */
gir_status gc_load_detect(const char *path, const char *format, const gir_options *opts, gir_graph **g,
                          const char **fmt, const char **reason, gir_error *err);

/* Prints a graph's reader notes ("graphconv: note: ...") unless quiet. */
void gc_print_graph_notes(const gir_graph *g);
/* Makes a writer's notes print the same way (gathered: gc_flush_notes
 * prints them). */
void gc_note_to_stderr(gir_options *wopts);
/* Prints the notes gathered, alike ones once with a count (each with -v). */
void gc_flush_notes(void);

/* Writes s as a JSON string literal (with quotes), to a stream or a buffer. */
void gc_json_string(FILE *f, const char *s);
void gc_json_escape(gir_buf *b, const char *s);

/* The operator histogram: most used first (ties by name), or by name. */
typedef struct gc_op_count {
    const char *name;
    size_t count;
} gc_op_count;
gc_op_count *gc_histogram(const gir_graph *g, bool most_used_first, size_t *n, size_t *opaque);

/* Weights and constants, counted from their shapes (nothing is loaded). */
typedef struct gc_param_stats {
    size_t tensors, unknown; /* unknown: shape or dtype not known */
    uint64_t elements, bytes;
} gc_param_stats;
gc_param_stats gc_parameters(const gir_graph *g);

/* graphconv run --profile: the session's profile (gir_session_set_profiling)
 * as tables per operator type and per node, or as JSON. */
struct gir_session;
int gc_profile_print(const struct gir_session *s, FILE *f);
int gc_profile_json(const struct gir_session *s, const char *model, int threads, FILE *f);

/* Subcommands: argv[0] is the subcommand name. */
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_draw(int argc, char **argv);
int cmd_errors(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_simplify(int argc, char **argv);

#endif
