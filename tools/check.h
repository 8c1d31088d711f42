/* Running models on given or seeded inputs and comparing two models'
 * outputs: `graphconv run`, `graphconv check` and `graphconv IN OUT --check`. */
#ifndef GRAPHCONV_CHECK_H
#define GRAPHCONV_CHECK_H

#include <stdint.h>

#include "cli.h"
#include "graphir/check.h"

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

/* Feeds every input of s with gir_session_feed (given tensors by name,
 * then in order, then seeded ones). */
gir_status gc_feed_session(gir_session *s, const gc_feed *f, uint64_t seed, gir_error *err);

typedef struct gc_check_opts {
    double atol, rtol;  /* a mismatch: |b - a| > atol + rtol * |a| (a = reference) */
    uint64_t seed;
    int threads;
    const gc_feed *feed; /* may be NULL */
    bool per_node;       /* name the first node whose outputs diverge */
    FILE *out;           /* the report; NULL prints nothing */
    bool json;           /* one JSON object on stdout instead of the report */
} gc_check_opts;

/* gir_check_models printing its report and any error to stdout/stderr;
 * returns the exit status (0 agree, 4 disagree, else the error's). */
int gc_check_graphs(const gir_graph *a, const gir_graph *b, const gc_check_opts *o);

#endif
