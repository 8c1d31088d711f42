#ifndef GRAPHIR_CHECK_H
#define GRAPHIR_CHECK_H

/* Inputs for a run and checking one model against another: what
 * `graphconv run`, `graphconv check` and `graphconv IN OUT --check` do.
 *
 *   gir_check_options o;
 *   gir_check_options_init(&o);                      // atol 1e-4, rtol 1e-3, seed 0
 *   gir_check_result r;
 *   gir_status st = gir_check_models(a, b, &o, &r, &err);
 *   puts(r.verdict);                                 // "ran both models: ..."
 *   gir_check_result_clear(&r);
 */

#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor for graph input v that the caller did not give: float types
 * uniform in [0, 1), integers uniform in [0, 4), bool 0 or 1, from a
 * generator seeded by (seed, index); unknown dimensions are 1, an unknown
 * type is float32.  The same (shape, dtype, seed, index) always gives the
 * same bytes.  *out is a new tensor the caller unrefs.  GIR_E_SHAPE when v's
 * rank is unknown. */
GIR_API gir_status gir_seeded_input(const gir_value *v, uint64_t seed, size_t index, gir_tensor **out,
                                    gir_error *err);

/* Feeds every input of s: tensors[k] goes to the input named names[k], or
 * when names is NULL or names[k] is NULL, to the next input not yet given
 * (in order); inputs left get gir_seeded_input(seed, their index).  A name
 * the model lacks, an input given twice or more tensors than inputs is
 * GIR_E_ARGUMENT.  The session takes its own references; the caller keeps
 * its tensors. */
GIR_API gir_status gir_session_feed(gir_session *s, size_t n, const char *const *names, gir_tensor *const *tensors,
                                    uint64_t seed, gir_error *err);

typedef struct gir_check_options {
    double atol, rtol;   /* a mismatch: |b - a| > atol + rtol * |a| (a: the reference) */
    uint64_t seed;       /* of the inputs not given */
    int threads;         /* of each session, 1..256 */
    bool per_node;       /* on a mismatch, name the first node whose outputs diverge */
    /* Inputs given (as gir_session_feed takes them); NULL/0 for none. */
    size_t n_feeds;
    const char *const *feed_names;
    gir_tensor *const *feed_tensors;
    /* gir_check_written only: when the runtime cannot run both models,
     * accept a comparison of their structure and weights as a pass. */
    bool allow_structural;
    /* Bounds the tensor elements each run computes (gir_session_set_max_elements);
     * 0: the default. */
    uint64_t max_run_elements;
} gir_check_options;

/* atol 1e-4, rtol 1e-3, seed 0, 1 thread, nothing else. */
GIR_API void gir_check_options_init(gir_check_options *o);

typedef enum gir_check_method {
    GIR_CHECK_NONE = 0,      /* nothing was compared (an error before) */
    GIR_CHECK_RUN,           /* both models ran on the same inputs */
    GIR_CHECK_STRUCTURAL     /* they could not both run: graphs and weights compared */
} gir_check_method;

/* What a check found.  The strings are malloc'd and belong to the result:
 * gir_check_result_clear frees them. */
typedef struct gir_check_result {
    gir_check_method method;
    bool passed;
    char *verdict;  /* one line: "ran both models: 2 outputs agree (max abs 3e-07)", or NULL */
    char *report;   /* one line per output compared (and the first divergence), or NULL */
    char *json;     /* the same as a JSON object ({"method": "run", "outputs": [...], ...}), or NULL */
    char *why;      /* GIR_CHECK_STRUCTURAL: why the models could not both run; else NULL */
} gir_check_result;

/* Frees the result's strings and zeroes it (NULL is allowed). */
GIR_API void gir_check_result_clear(gir_check_result *r);

/* Runs a (the reference) and b on the same inputs, matched by name when
 * every input of b has a namesake in a, else by position, and compares the
 * outputs the same way: max abs and relative error, cosine similarity,
 * mismatch count, NaN/Inf agreement.  GIR_E_CHECK_FAILED (message naming
 * the first output) when any output disagrees; res is filled either way
 * (method GIR_CHECK_NONE when a model could not be run: the error says
 * which, "model A: ..."). */
GIR_API gir_status gir_check_models(const gir_graph *a, const gir_graph *b, const gir_check_options *o,
                                    gir_check_result *res, gir_error *err);

/* Checks b, a model written from src and read back, against src: by
 * running both (gir_check_models); when the runtime cannot run them (an
 * operator without a kernel, an input of unknown shape, weights without
 * data), by comparing structure and weights, with src's input shapes
 * given to b first.  A structural comparison passes only with
 * o->allow_structural; otherwise it fails with GIR_E_CHECK_FAILED saying
 * that the models were not run.  Inputs of src with no known dimension
 * (nothing fed for them) are given the first shape for which shape
 * inference of both models succeeds (batch 1, channels from a convolution
 * reading the input, other dimensions one size searched from 1 to 128 and
 * common image sizes up to 512); the verdict and JSON name it.  When b
 * has more outputs than src and src prints (Print nodes), the printed
 * tensors are compared with b's extra outputs, by name. */
GIR_API gir_status gir_check_written(const gir_graph *src, gir_graph *b, const gir_check_options *o,
                                     gir_check_result *res, gir_error *err);

#ifdef __cplusplus
}
#endif
#endif
