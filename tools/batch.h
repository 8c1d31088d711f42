/* The per-model check of `graphconv batch --check` and `graphconv IN OUT --check`. */
#ifndef GRAPHCONV_BATCH_H
#define GRAPHCONV_BATCH_H

#include "cli.h"

/* Re-reads the written output and checks it against the source graph;
 * on success *metrics_json (malloc'd) describes what was compared.
 * Fails with GIR_E_CHECK_FAILED when they disagree. */
gir_status gc_batch_check(const gir_graph *src, const char *out_path, const char *out_format, double atol,
                          double rtol, char **metrics_json, gir_error *err);

/* Removes a directory tree (for dry runs). */
void gc_rmtree(const char *dir);

#endif
