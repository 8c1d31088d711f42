/* NumPy .npy files (format versions 1.0, 2.0 and 3.0).
 *
 * Element types: '<f4' '<f8' '<f2' '|i1' '<i2' '<i4' '<i8' '|u1' '<u2' '<u4'
 * '<u8' '|b1' and their big-endian ('>') forms, which are converted to
 * little-endian ('=' means the machine order, '|' or '<' for one-byte types;
 * 'b1'/'?' is bool).  fortran_order True is refused (GIR_E_UNSUPPORTED).  A
 * shape () is a rank-0 tensor of one element.  The header is parsed strictly
 * (a Python dict literal with exactly the keys descr, fortran_order and
 * shape); errors name the file and the byte offset.
 */
#ifndef GIR_IO_NPY_H
#define GIR_IO_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "graphir/graph.h"

/* Reads path into a new tensor (owned data, little-endian, row-major). */
gir_status gir_npy_read(const char *path, gir_tensor **out, gir_error *err);
/* The same from bytes in memory; name is used as the error's file. */
gir_status gir_npy_parse(const void *data, size_t len, const char *name, gir_tensor **out, gir_error *err);

/* Writes t (loading it if needed) as a version 1.0 file ('<' descr, C
 * order); version 2.0 only when the header needs it.  Atomic (gir_outfile):
 * an existing file at path is replaced. */
gir_status gir_npy_write(const char *path, gir_tensor *t, gir_error *err);
/* The same with the overwrite choice: with overwrite false an existing file
 * fails with GIR_E_EXISTS. */
gir_status gir_npy_save(const char *path, gir_tensor *t, bool overwrite, gir_error *err);

#endif
