#ifndef GRAPHIR_MEMIO_H
#define GRAPHIR_MEMIO_H

/* Models and tensors in memory and in .npy files. */

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a model from bytes in memory.  format is a registry name (see
 * gir_format_name) or NULL to detect it from the content.  params/params_size:
 * the companion weights file's bytes for formats that keep weights beside
 * the model (NNVM/MXNet/TVM .params, LightNet, RelayViz), or NULL.  The
 * bytes are copied (into a private temporary directory in $TMPDIR, else
 * /tmp, removed before returning): the caller keeps its buffers and the
 * graph needs nothing afterwards.  *out is a new graph the caller frees
 * with gir_graph_free. */
GIR_API gir_status gir_load_memory(const void *data, size_t size, const void *params, size_t params_size,
                                   const char *format, const gir_options *opts, gir_graph **out, gir_error *err);

/* Writes g in format (a registry name, required) to memory: *data and
 * *size receive the model's bytes, *params and *params_size the companion
 * weights file's (NULL and 0 when the format writes none; params may be
 * NULL when the caller wants none and the format writes none).  The
 * buffers are malloc'd and the caller frees them with free().  A writer
 * that would make more files (ONNX external-data) fails with
 * GIR_E_UNSUPPORTED. */
GIR_API gir_status gir_save_memory(const gir_graph *g, const char *format, const gir_options *opts, void **data,
                                   size_t *size, void **params, size_t *params_size, gir_error *err);

/* Reads a NumPy .npy file into a new tensor (owned data, little-endian,
 * row-major) that the caller unrefs.  Versions 1.0-3.0; fortran_order is
 * refused. */
GIR_API gir_status gir_tensor_read_npy(const char *path, gir_tensor **out, gir_error *err);
/* The same from bytes in memory (copied). */
GIR_API gir_status gir_tensor_parse_npy(const void *data, size_t size, gir_tensor **out, gir_error *err);
/* Writes t (loading it if needed) as .npy, atomically; an existing file is
 * replaced only with overwrite (else GIR_E_EXISTS).  The caller keeps t. */
GIR_API gir_status gir_tensor_write_npy(const char *path, gir_tensor *t, bool overwrite, gir_error *err);

#ifdef __cplusplus
}
#endif
#endif
