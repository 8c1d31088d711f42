#ifndef GRAPHIR_RUNTIME_H
#define GRAPHIR_RUNTIME_H

/* The reference CPU runtime: executes a graph's canonical operators.
 *
 *   gir_session *s;
 *   gir_session_new(graph, 1, &s, &err);          // checks kernels, loads weights
 *   gir_session_set_input(s, 0, tensor, &err);     // or _set_input_named
 *   gir_session_run(s, &err);
 *   gir_tensor *y = gir_session_output(s, 0);      // owned by the session
 *   gir_session_free(s);
 *
 * Nodes run in topological order.  Intermediate buffers are planned once
 * per set of input shapes and reused after their last consumer, so memory
 * stays near the largest set of simultaneously live tensors.  Results are
 * deterministic: the same inputs give the same bytes whatever the thread
 * count.  The graph must outlive the session.
 *
 * Every op has float32 kernels; comparison, logic, indexing and shape ops
 * also take the integer and bool types they need.  An op or dtype without a
 * kernel fails with GIR_E_NO_KERNEL naming the op and the node.
 */

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gir_session gir_session;

/* Creates a session running g with `threads` worker threads (1..256;
 * 1 = the calling thread only).  g is validated here (gir_validate) and must
 * outlive the session unchanged. */
GIR_API gir_status gir_session_new(const gir_graph *g, int threads, gir_session **out, gir_error *err);
GIR_API void gir_session_free(gir_session *s);

/* Bounds the tensor elements one run computes (the outputs of every node,
 * added up; checked when the run is planned, before any buffer is
 * allocated): a run over n fails with GIR_E_LIMIT naming the node that
 * crosses it.  0 sets the default, 4000000000 (the max-run-elements
 * option of graphconv's run, check and --check). */
GIR_API void gir_session_set_max_elements(gir_session *s, uint64_t n);

/* Sets the worker threads' busy wait, in microseconds.  That is how long
 * the session's idle worker threads wait busy for their next job before
 * they sleep (default 40000; nothing changes with one thread).  A run is hundreds of parallel jobs a few microseconds
 * apart, and on a virtual machine a thread woken from sleep can take
 * milliseconds to run again, the more the longer its CPU idled: the
 * default spans the gaps within a run and a short pause before the next
 * one (ONNX Runtime's pool waits about 30 ms the same way).  A smaller
 * value gives the CPUs back sooner between runs that come seldom; under
 * about 5000 the workers may sleep inside a run, and with 0 they sleep
 * after a few microseconds.  Waits under way end by the new time too: a
 * program that runs two sessions in turn sets 0 on the one it leaves, so
 * that its workers do not take CPUs from the other's. */
GIR_API void gir_session_set_spin(gir_session *s, uint32_t microseconds);

/* Keep every intermediate value after a run (no buffer reuse, no fusion),
 * so gir_session_value can read any of them.  Off by default. */
GIR_API void gir_session_keep_values(gir_session *s, bool keep);

/* The inputs a run needs: the graph's inputs without constant data, in
 * graph-input order. */
GIR_API size_t gir_session_input_count(const gir_session *s);
GIR_API const gir_value *gir_session_input(const gir_session *s, size_t i);
/* Feeds input i (takes a reference).  The dtype must match; each known
 * dimension of the declared shape must match (unknown ones are free).
 * Graph inputs that have constant data may be overridden by name. */
GIR_API gir_status gir_session_set_input(gir_session *s, size_t i, gir_tensor *t, gir_error *err);
GIR_API gir_status gir_session_set_input_named(gir_session *s, const char *name, gir_tensor *t,
                                               gir_error *err);

/* Runs the graph on the inputs set last. */
GIR_API gir_status gir_session_run(gir_session *s, gir_error *err);

/* Outputs of the last successful run, in graph-output order; the tensors
 * belong to the session and stay valid until the next run or free (take a
 * reference to keep one). */
GIR_API size_t gir_session_output_count(const gir_session *s);
GIR_API gir_tensor *gir_session_output(const gir_session *s, size_t i);
/* Any value of the last run by name (keep_values mode, or graph inputs,
 * constants and outputs otherwise): a new tensor the caller unrefs, or NULL
 * when there is no such value or it was not kept. */
GIR_API gir_tensor *gir_session_value(const gir_session *s, const char *name);

/* Where side-effect operators (Print, from LightNet's print) write; stdout
 * when never set.  The stream must stay open for the session's runs.  Print
 * with a file attribute writes that file, as LightNet's fprint does. */
GIR_API void gir_session_set_print_stream(gir_session *s, void *stdio_file);

/* Warnings of the last run ("node 'p1': cannot open 'x.txt' ..."): what
 * LightNet prints as warnings and goes on (a Print file that cannot be
 * opened).  Valid until the next run. */
GIR_API size_t gir_session_warning_count(const gir_session *s);
GIR_API const char *gir_session_warning(const gir_session *s, size_t i);

/* Profiling: while on, every run adds each executed node's wall time to
 * that node's total (turning it on clears the totals).  Off by default;
 * when off, runs take no timings.  Nodes fused into the node before them
 * (an Add, Relu, BatchNormalization... that node's kernel computes) are
 * not listed on their own: their producer's entry names them in `fused`. */
GIR_API void gir_session_set_profiling(gir_session *s, bool on);

typedef struct gir_profile_entry {
    const char *node;  /* the node's name (owned by the graph) */
    const char *op;    /* its canonical op ("Conv") */
    char fused[128];   /* "+"-joined ops computed with it ("BatchNormalization+Relu"), or "" */
    double total_ms;   /* summed over the profiled runs */
    uint64_t runs;     /* profiled runs */
} gir_profile_entry;

/* The nodes the current plan executes, in execution order (0 before the
 * first run). */
GIR_API size_t gir_session_profile_count(const gir_session *s);
/* Entry i of that list; false when i is out of range. */
GIR_API bool gir_session_profile_entry(const gir_session *s, size_t i, gir_profile_entry *e);

/* Whether the runtime has a kernel for a canonical op name ("Conv"). */
GIR_API bool gir_runtime_supports_op(const char *op);

/* A new tensor owning a copy of data (nbytes must equal what dtype x shape
 * needs; NULL data means zeros). */
GIR_API gir_status gir_tensor_create(gir_dtype dtype, const gir_shape *shape, const void *data, size_t nbytes,
                                     gir_tensor **out, gir_error *err);

#ifdef __cplusplus
}
#endif
#endif
