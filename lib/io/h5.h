/* HDF5 parameter files in NNabla's layout (parameter.h5).
 *
 * One dataset per parameter at its hierarchical name ("conv1/conv/W" is
 * dataset W in group /conv1/conv), with scalar attributes need_grad (h5py's
 * bool: an enum over int8 {FALSE=0, TRUE=1}; any integer is accepted on
 * reading) and index (any integer width) restoring the parameter order.
 *
 * Reading works on a file image in memory (the .h5 usually sits inside a
 * zip) with graphconv's own code, not libhdf5 (h5read.c): a parameter file
 * comes from anywhere, and libhdf5 has memory errors on crafted files.  It
 * reads the part of the format nnabla and h5py write by default (superblock
 * 0 or 1, version 1 object headers, symbol-table groups, compact or
 * contiguous datasets of integer, IEEE float or h5py-bool elements) and
 * refuses everything else by name (GIR_E_UNSUPPORTED), corrupt structure
 * with GIR_E_PARAMS.  The whole structure is checked when the image is
 * opened.  Values are read in the element type they are stored in (either
 * byte order).
 *
 * Writing goes through libhdf5 (it writes our own data only), streams one
 * parameter at a time and is deterministic (no time stamps, fixed creation
 * properties).  The library never lets HDF5 print; HDF5 error stacks become
 * gir_error messages.  Every HDF5 call is serialised through one mutex (the
 * system HDF5 is not thread-safe).  All of these functions may be called
 * from any thread.
 */
#ifndef GIR_IO_H5_H
#define GIR_IO_H5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphir/status.h"
#include "graphir/types.h"
#include "io/zip.h"

typedef struct gir_h5_param {
    char *name;        /* full path without the leading '/' (malloc'd) */
    gir_dtype dtype;   /* the dataset's element type */
    gir_shape shape;   /* the dataspace (rank 0 for a scalar dataset) */
    bool need_grad;    /* false when the attribute is absent */
    int64_t index;     /* the index attribute, or -1 when absent */
    bool has_index;    /* whether the index attribute was present */
} gir_h5_param;

/* Lists every dataset of the image, sorted by index (datasets without an
 * index and ties: by name, after those with one).  Refuses (GIR_E_PARAMS /
 * GIR_E_DTYPE / GIR_E_LIMIT / GIR_E_UNSUPPORTED) unsupported element types,
 * rank above GIR_MAX_RANK, element counts or byte sizes that overflow, group
 * nesting deeper than 64, more than 1,000,000 objects, soft links and an
 * object reached by two links.  *params is malloc'd
 * (free with gir_h5_params_free); *n may be 0. */
gir_status gir_h5_list(const void *image, size_t len, gir_h5_param **params, size_t *n, gir_error *err);

/* Reads dataset name (with or without a leading '/') into dst as
 * little-endian values of dtype, which must be the stored element type
 * (GIR_E_DTYPE otherwise: no conversions).  nbytes must be exactly the
 * element count times the size of dtype (GIR_E_SHAPE otherwise). */
gir_status gir_h5_read(const void *image, size_t len, const char *name, void *dst, uint64_t nbytes,
                       gir_dtype dtype, gir_error *err);

void gir_h5_params_free(gir_h5_param *params, size_t n);

/* An image opened once for many reads (avoids reopening a large image for
 * every parameter).  The image is not copied: it must stay valid and
 * unchanged until the last reference is closed.  Reference counted. */
typedef struct gir_h5 gir_h5;
gir_status gir_h5_open(const void *image, size_t len, gir_h5 **out, gir_error *err);
gir_status gir_h5_list_open(gir_h5 *h, gir_h5_param **params, size_t *n, gir_error *err);
gir_status gir_h5_read_open(gir_h5 *h, const char *name, void *dst, uint64_t nbytes, gir_dtype dtype,
                            gir_error *err);
/* Where the values of dataset name lie in the image when they can be read
 * as raw bytes: a non-empty dataset stored in exactly the little-endian
 * layout of dtype (not bool).  *found is false otherwise (read it with
 * gir_h5_read_open).
 * Lets a caller holding the image's bytes elsewhere (a stored zip member)
 * read a large dataset straight from there. */
gir_status gir_h5_raw_extent_open(gir_h5 *h, const char *name, gir_dtype dtype, uint64_t *offset, uint64_t *nbytes,
                                  bool *found, gir_error *err);
gir_h5 *gir_h5_ref(gir_h5 *h);
void gir_h5_close(gir_h5 *h);

/* Whether name can be a dataset path as gir_h5_write wants it: not empty,
 * and no component (between '/') empty, "." or "..". */
bool gir_h5_name_ok(const char *name);

/* Writes params[0..n) to path (created or truncated; callers pass a
 * gir_outfile's temporary path for atomic output).  For each parameter in
 * order: groups for every '/' component of name (names must be non-empty,
 * without empty components, "." or ".."; GIR_E_ARGUMENT), a contiguous
 * little-endian dataset of params[i].dtype and shape, attribute need_grad
 * (enum int8 FALSE/TRUE, like h5py) and attribute index (int64, the value of
 * params[i].index).  get_data(ctx, i, &data, err) supplies the parameter's
 * bytes (little-endian, row-major, element count x dtype size); put_data
 * (may be NULL) is called after they are written so the caller can unload
 * the tensor.  A name that is a prefix group of another dataset, or a
 * duplicate, fails with GIR_E_DUPLICATE. */
gir_status gir_h5_write(const char *path, const gir_h5_param *params, size_t n,
                        gir_status (*get_data)(void *ctx, size_t i, const void **data, gir_error *err),
                        void (*put_data)(void *ctx, size_t i), void *ctx, gir_error *err);

/* gir_h5_write into a file whose first userblock bytes (0, or a power of
 * two from 512) are left free for someone else (zip headers): the HDF5 file
 * is written from byte userblock on, and its superblock is then made that
 * of a file on its own, so bytes [userblock, end) are exactly the file
 * gir_h5_write makes.  With extents non-NULL, *extents gets (malloc'd,
 * sorted by offset) where each non-empty dataset's bytes lie in path and
 * their CRC-32, computed from the buffers as they are written. */
gir_status gir_h5_write_inplace(const char *path, uint64_t userblock, const gir_h5_param *params, size_t n,
                                gir_status (*get_data)(void *ctx, size_t i, const void **data, gir_error *err),
                                void (*put_data)(void *ctx, size_t i), void *ctx, gir_zip_extent **extents,
                                size_t *n_extents, gir_error *err);

#endif
