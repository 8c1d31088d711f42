/* The per-model check of `graphconv batch --check` and `graphconv IN OUT --check`. */
#ifndef GRAPHCONV_BATCH_H
#define GRAPHCONV_BATCH_H

#include "cli.h"

/* What --check asks: on, whether a structural comparison (when the models
 * cannot both run) is accepted, the tolerances. */
typedef struct gc_check_spec {
    bool on, structural_ok;
    double atol, rtol;
} gc_check_spec;

/* Parses the argument of --check[=run|structure] into c (on). */
bool gc_parse_check_arg(const char *arg, gc_check_spec *c);

/* Re-reads the written output and checks it against the source graph with
 * gir_check_written; *metrics_json and *verdict (malloc'd, may stay NULL)
 * say what was compared, on failure too.  Fails with GIR_E_CHECK_FAILED
 * when they disagree or could only be compared structurally without
 * c->structural_ok. */
gir_status gc_batch_check(const gir_graph *src, const char *out_path, const char *out_format, const gc_check_spec *c,
                          char **metrics_json, char **verdict, gir_error *err);

/* The files a save put in place (malloc'd paths, the model first), and how
 * many of them replaced an existing file (--force). */
typedef struct gc_written {
    char **paths;
    size_t n, replaced;
    /* Optional: called for each file before anything moves; returning
     * false (with *owner: who has it, static or owned by the callee) stops
     * the save with GIR_E_EXISTS.  batch claims each path for one job. */
    bool (*claim)(void *ctx, const char *path, const char **owner);
    void *claim_ctx;
} gc_written;
void gc_written_free(gc_written *w);

/* gir_save, recording every file written in w (may be NULL), and with check->on: written into a staging directory beside
 * the output, checked with gc_batch_check, and moved into place only when
 * the check passes (a failed check leaves no output). */
gir_status gc_save_checked(const gir_graph *g, const char *out_path, const char *format, const gir_options *wopts,
                           const gc_check_spec *check, gc_written *w, char **metrics_json, char **verdict,
                           gir_error *err);

/* Removes a directory tree (for dry runs). */
void gc_rmtree(const char *dir);

#endif
