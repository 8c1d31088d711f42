/* Safe zip reading and deterministic zip writing (over libzip).
 *
 * Reading: gir_zip_open validates the whole central directory before any
 * member is touched (unsafe names, duplicates, declared sizes against the
 * limits), and gir_zip_read checks that every member decompresses to exactly
 * its declared size with a correct CRC.  A gir_zip is reference counted and
 * safe to read from several threads (reads are serialised internally), so
 * lazily loaded tensors can each hold a reference.
 *
 * Writing: members are stored in the order added, with a fixed time stamp
 * (1980-01-01 00:00), fixed attributes and no extra fields, so the same
 * members give byte-identical archives.
 */
#ifndef GIR_IO_ZIP_H
#define GIR_IO_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphir/status.h"

typedef struct gir_zip_limits {
    uint64_t max_total;   /* sum of the members' uncompressed sizes */
    uint64_t max_member;  /* uncompressed size of one member */
    uint32_t max_members; /* number of central-directory entries */
    uint32_t max_ratio;   /* uncompressed / compressed, for members above 1 MiB;
                             0 disables the ratio check */
} gir_zip_limits;

/* 4 GiB total, 4 GiB per member, 65536 members, ratio 1000. */
void gir_zip_limits_default(gir_zip_limits *lim);

/* ---- reading ------------------------------------------------------------ */

typedef struct gir_zip gir_zip;

/* Opens and validates an archive.  lim NULL means the defaults.  Refuses
 * with GIR_E_ARCHIVE (message naming the member): empty names, NUL bytes,
 * backslashes, absolute paths ("/x", "C:x"), ".." components, duplicate
 * names, more members than allowed, declared sizes or ratios above the
 * limits, corrupt or truncated archives (libzip's reason).  Encrypted
 * members and compression methods libzip cannot decode give
 * GIR_E_UNSUPPORTED.  Errors carry path as their file.  Directory entries
 * ("dir/") are kept and listed. */
gir_status gir_zip_open(const char *path, const gir_zip_limits *lim, gir_zip **out, gir_error *err);
/* The same over an archive image in memory; the bytes are copied, so the
 * caller may free them.  name is used as the error's file (may be NULL). */
gir_status gir_zip_open_memory(const void *data, size_t len, const char *name, const gir_zip_limits *lim,
                               gir_zip **out, gir_error *err);

size_t gir_zip_count(const gir_zip *z);
/* Member name as stored (valid until the last reference is dropped). */
const char *gir_zip_name(const gir_zip *z, size_t i);
/* Declared uncompressed size. */
uint64_t gir_zip_size(const gir_zip *z, size_t i);
/* True for a directory entry (name ending in '/'). */
bool gir_zip_is_dir(const gir_zip *z, size_t i);
/* Index of the member with exactly this name, or -1. */
ptrdiff_t gir_zip_find(const gir_zip *z, const char *name);

/* Reads member i whole into malloc'd memory (*data gets one extra NUL byte
 * past *len, so text members can be used as C strings).  GIR_E_ARCHIVE when
 * the member decompresses to a different size than declared ("member X:
 * declared N bytes, got M"), on CRC mismatch, or corrupt data. */
gir_status gir_zip_read(gir_zip *z, size_t i, void **data, size_t *len, gir_error *err);

/* For a member stored without compression or encryption in an archive
 * opened from a file: the absolute offset of its bytes in that file (the
 * central directory and local header are checked: signature, method,
 * sizes), so that large members can be read or mapped in place.
 * GIR_E_UNSUPPORTED for compressed or encrypted members and for archives
 * opened from memory; GIR_E_ARCHIVE when the headers disagree. */
gir_status gir_zip_stored_offset(gir_zip *z, size_t i, uint64_t *offset, gir_error *err);

/* Another reference; every reference is dropped with gir_zip_close. */
gir_zip *gir_zip_ref(gir_zip *z);
void gir_zip_close(gir_zip *z);

/* ---- writing ------------------------------------------------------------ */

typedef struct gir_zipw gir_zipw;

/* Starts an archive that gir_zipw_close writes to exactly path (an existing
 * file there is replaced).  Callers wanting atomic outputs pass the
 * temporary path of a gir_outfile and commit it themselves. */
gir_status gir_zipw_open(const char *path, gir_zipw **out, gir_error *err);
/* Adds a member from memory; the bytes are copied (the caller keeps data).
 * deflate chooses DEFLATE over STORED.  Names are checked like on reading
 * (GIR_E_ARGUMENT) and must be unique (GIR_E_DUPLICATE). */
gir_status gir_zipw_add_buffer(gir_zipw *w, const char *name, const void *data, size_t len, bool deflate,
                               gir_error *err);
/* Adds a member streamed from src_path when the archive is written: the
 * file must exist and stay unchanged until gir_zipw_close returns. */
gir_status gir_zipw_add_file(gir_zipw *w, const char *name, const char *src_path, bool deflate,
                             gir_error *err);
/* Writes the archive and frees w, also on failure (libzip writes through
 * its own temporary file, so a failure leaves path as it was).  An archive
 * without members is written as a bare end-of-central-directory record. */
gir_status gir_zipw_close(gir_zipw *w, gir_error *err);
/* Frees w without writing anything. */
void gir_zipw_discard(gir_zipw *w);

#endif
