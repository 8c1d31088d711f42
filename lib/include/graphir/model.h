#ifndef GRAPHIR_MODEL_H
#define GRAPHIR_MODEL_H

/* Reading and writing models, format detection, options. */

#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options: string key/value pairs, so formats can take their own options
 * without ABI changes.  Keys the library understands:
 *   params=PATH        companion weights file (read) or where to write it
 *   batch-size=N       set every input's first dimension on read (any format)
 *   input-shape=NAME:D0,D1,..[;NAME:..]  give inputs shapes on read (any format)
 *   allow-opaque=1     let a writer keep operators it cannot map, verbatim
 *   force=1            overwrite an existing output
 *   max-bytes=N        cap on decompressed/read sizes
 * and per-format keys listed by `graphconv formats` (e.g. nnabla's
 * executor=NAME, param-format=protobuf; onnx's opset=N).  A key no reader or
 * writer in play understands is reported as an error. */
typedef struct gir_options gir_options;

/* A new empty set of options, and freeing one (NULL is allowed). */
GIR_API gir_options *gir_options_new(void);
GIR_API void gir_options_free(gir_options *o);
/* A copy: every key/value and the note and progress handlers; NULL when
 * out of memory. */
GIR_API gir_options *gir_options_dup(const gir_options *o);
/* Replaces an existing key. GIR_E_NOMEM only. */
GIR_API gir_status gir_options_set(gir_options *o, const char *key, const char *value, gir_error *err);
GIR_API const char *gir_options_get(const gir_options *o, const char *key);
GIR_API size_t gir_options_count(const gir_options *o);
GIR_API const char *gir_options_key(const gir_options *o, size_t i);
/* Notes from a writer: what it wrote in another form without changing the
 * meaning (a three-way concat written as a chain...).  Without a handler
 * they are dropped.  (A reader's notes are in the graph's "notes"
 * metadata.) */
typedef void (*gir_note_fn)(void *ctx, const char *note);
/* Sets the function that receives a writer's notes (fn NULL: dropped); ctx
 * is passed to it. */
GIR_API void gir_options_set_note_handler(gir_options *o, gir_note_fn fn, void *ctx);
/* Progress of gir_save: called with (0, total) before anything is written,
 * then as the writer streams tensor data (done counts bytes of tensors
 * written, never more than total), and with (total, total) when the output
 * is complete.  total is the bytes of every tensor the graph holds. */
typedef void (*gir_progress_fn)(void *ctx, uint64_t done, uint64_t total);
/* Sets the function that receives gir_save's progress, on the saving
 * thread (fn NULL: none); ctx is passed to it. */
GIR_API void gir_options_set_progress_handler(gir_options *o, gir_progress_fn fn, void *ctx);

/* Formats known to this build, in registry order. */
GIR_API size_t gir_format_count(void);
GIR_API const char *gir_format_name(size_t i);
GIR_API const char *gir_format_description(size_t i);
GIR_API bool gir_format_can_read(size_t i);
GIR_API bool gir_format_can_write(size_t i);
/* Option k (0, 1, ...) of format i for reading (for_writing false) or
 * writing: *key ("executor") and *doc (one sentence) are static strings.
 * Returns false past the last one. */
GIR_API bool gir_format_option(size_t i, bool for_writing, size_t k, const char **key, const char **doc);
/* Option k of every format (params, batch-size, force, ...), as above. */
GIR_API bool gir_common_option(size_t k, const char **key, const char **doc);

/* Detects the format of a file: by content first, then by extension.
 * *name is a registry name; *reason says which rule decided.  It reads the
 * first bytes, which a pipe then no longer has (gir_load detects too). */
GIR_API gir_status gir_detect(const char *path, const char **name, const char **reason, gir_error *err);
/* The format a path's extension suggests for writing, or NULL. */
GIR_API const char *gir_format_for_extension(const char *path);

/* Reads a model.  format NULL = detect.  Weights are loaded lazily, except
 * from a pipe (any path that is not a regular file or a directory): that is
 * copied whole to a temporary file in $TMPDIR (else /tmp), read with every
 * tensor loaded, and the copy removed. */
GIR_API gir_status gir_load(const char *path, const char *format, const gir_options *opts, gir_graph **out,
                            gir_error *err);
/* Writes a model atomically (temporary file + rename; companion files too).
 * format NULL = from the extension. */
GIR_API gir_status gir_save(const gir_graph *g, const char *path, const char *format, const gir_options *opts,
                            gir_error *err);

#ifdef __cplusplus
}
#endif
#endif
