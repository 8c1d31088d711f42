/* Running models on given or seeded inputs and comparing two models'
 * outputs: `graphconv run`, `graphconv check` and `graphconv IN OUT --check`. */
#ifndef GRAPHCONV_CHECK_H
#define GRAPHCONV_CHECK_H

#include <stdint.h>

#include "cli.h"
#include "graphir/runtime.h"

#define GC_MAX_THREADS 256

/* Input tensors given on the command line: "NAME=FILE.npy" (by name) or
 * "FILE.npy" (by position among the graph's inputs). */
typedef struct gc_feed {
    char **names;         /* NULL for a positional one */
    gir_tensor **tensors;
    size_t n;
} gc_feed;

/* Reads the .npy file of one --input argument. */
gir_status gc_feed_add(gc_feed *f, const char *arg, gir_error *err);
void gc_feed_free(gc_feed *f);

/* The tensor fed to a graph input that was not given: float types uniform
 * in [0, 1), integers uniform in [0, 4), bool 0 or 1, from a generator
 * seeded by (seed, index); unknown dimensions are 1.  The same (value
 * shape, dtype, seed, index) always gives the same bytes. */
gir_status gc_seeded_tensor(const gir_value *v, uint64_t seed, size_t index, gir_tensor **out, gir_error *err);

/* Feeds every input of s: given tensors by name, then positional ones in
 * order to the inputs left, then seeded tensors.  A given name the graph
 * lacks is an error.  When used is not NULL, used[i] receives input i's
 * tensor (a new reference) for reuse with another session. */
gir_status gc_feed_session(gir_session *s, const gc_feed *f, uint64_t seed, gir_tensor **used, gir_error *err);

typedef struct gc_check_opts {
    double atol, rtol;  /* a mismatch: |b - a| > atol + rtol * |a| (a = reference) */
    uint64_t seed;
    int threads;
    const gc_feed *feed; /* may be NULL */
    bool per_node;       /* name the first node whose outputs diverge */
    FILE *out;           /* the report; NULL prints nothing */
} gc_check_opts;

/* Runs a (the reference) and b on the same inputs, matched by name when
 * every input of b has a namesake in a, else by position, and compares the
 * outputs the same way: max abs error, max relative error, cosine
 * similarity, mismatch fraction, NaN/Inf agreement per output.
 * GIR_E_CHECK_FAILED when any output disagrees; *metrics_json (optional,
 * malloc'd) summarises the comparison either way. */
gir_status gc_check_compare(const gir_graph *a, const gir_graph *b, const gc_check_opts *o, char **metrics_json,
                            gir_error *err);

/* gc_check_compare printing its report and any error to stdout/stderr;
 * returns the exit status (0 agree, 4 disagree, else the error's). */
int gc_check_graphs(const gir_graph *a, const gir_graph *b, const gc_check_opts *o);

#endif
