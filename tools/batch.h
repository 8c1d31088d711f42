/* The per-model check of `graphconv batch --check` and `graphconv IN OUT --check`. */
#ifndef GRAPHCONV_BATCH_H
#define GRAPHCONV_BATCH_H

#include "cli.h"

/* Re-reads the written output and checks it against the source graph;
 * on success *metrics_json (malloc'd) describes what was compared.
 * Fails with GIR_E_CHECK_FAILED when they disagree. */
gir_status gc_batch_check(const gir_graph *src, const char *out_path, const char *out_format, double atol,
                          double rtol, char **metrics_json, gir_error *err);

/* gir_save, and with check: written into a staging directory beside the
 * output, checked with gc_batch_check, and moved into place only when the
 * check passes (a failed check leaves no output). */
gir_status gc_save_checked(const gir_graph *g, const char *out_path, const char *format, const gir_options *wopts,
                           bool check, double atol, double rtol, char **metrics_json, gir_error *err);

/* Removes a directory tree (for dry runs). */
void gc_rmtree(const char *dir);

#endif
