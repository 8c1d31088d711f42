/* Safe zip reading and deterministic zip writing (over libzip).
 *
 * Reading: gir_zip_open validates the whole central directory before any
 * member is touched (unsafe names, duplicates, declared sizes against the
 * limits), and gir_zip_read checks that every member decompresses to exactly
 * its declared size with a correct CRC.  A gir_zip is reference counted and
 * safe to read from several threads (reads are serialised internally), so
 * lazily loaded tensors can each hold a reference.
 *
 * Writing (our own code, not libzip): members are stored in the order
 * added, with a fixed time stamp (1980-01-01 00:00), fixed attributes and
 * no extra fields (except zip64 where sizes need it and the padding of a
 * member stored in place), so the same members give byte-identical
 * archives.  Large members can be streamed or written in place, so their
 * bytes are written once.
 */
#ifndef GIR_IO_ZIP_H
#define GIR_IO_ZIP_H

#include <pthread.h>
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

/* CRC-32 (the zip / zlib one) of data continuing crc (0 to start). */
uint32_t gir_crc32(uint32_t crc, const void *data, size_t len);
/* The CRC-32 of A followed by B from crc1 = CRC(A), crc2 = CRC(B) and
 * len2 = length of B. */
uint32_t gir_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* A CRC-32 computed on another thread while the caller writes the same
 * bytes (large buffers only; small ones, or when no thread can be
 * started, are done in gir_crc32_start itself).  data must stay valid and
 * unchanged until gir_crc32_finish, which must always be called. */
typedef struct gir_crc_job {
    pthread_t thread;
    bool threaded;
    const void *data;
    size_t len;
    uint32_t crc;
} gir_crc_job;
void gir_crc32_start(gir_crc_job *job, uint32_t crc, const void *data, size_t len);
uint32_t gir_crc32_finish(gir_crc_job *job);

/* Starts an archive written straight into path (created, or truncated if it
 * exists).  Members are laid out in the order added; the central directory
 * lists them in that order too.  Callers wanting atomic outputs pass the
 * temporary path of a gir_outfile and commit or abort it themselves: a
 * failed or discarded archive leaves a partial file at a path that existed
 * (a file the writer created is removed). */
gir_status gir_zipw_open(const char *path, gir_zipw **out, gir_error *err);
/* Adds a member from memory (DEFLATE when deflate, else STORED).  Names are
 * checked like on reading (GIR_E_ARGUMENT) and must be unique
 * (GIR_E_DUPLICATE). */
gir_status gir_zipw_add_buffer(gir_zipw *w, const char *name, const void *data, size_t len, bool deflate,
                               gir_error *err);
/* Adds a member read from src_path now (its size is taken when it is
 * opened; a file that shrinks meanwhile fails with GIR_E_IO). */
gir_status gir_zipw_add_file(gir_zipw *w, const char *name, const char *src_path, bool deflate,
                             gir_error *err);

/* Streams a STORED member of exactly size bytes: gir_zipw_begin, then
 * gir_zipw_write any number of times (bytes are written from the caller's
 * buffer as they come, CRC computed on the way), then gir_zipw_end, which
 * fills in the CRC.  More or fewer bytes than declared fail with
 * GIR_E_INTERNAL and spoil the archive (close fails).  No other member may
 * be added in between. */
gir_status gir_zipw_begin(gir_zipw *w, const char *name, uint64_t size, gir_error *err);
gir_status gir_zipw_write(gir_zipw *w, const void *data, size_t len, gir_error *err);
gir_status gir_zipw_end(gir_zipw *w, gir_error *err);

/* A member stored in place: someone else (HDF5 with a user block of head
 * bytes, say) has already written the member's bytes into path from byte
 * head to its end, leaving [0, head) free.  gir_zipw_open_inplace opens
 * that file without truncating it; members added go after its end.
 * gir_zipw_add_inplace(name, ...) makes bytes [head, size of the file at
 * open) the STORED member name, writing its local header at 0, padded
 * with an extra field (id 0x4743) so its data starts at head.
 * head must be exactly 30 + strlen(name) (+ 20 when the member reaches
 * 4 GiB) or leave 4 to 65535 bytes for the padding field.  known[0..n)
 * are extents of the member, in order and disjoint, whose CRC the caller
 * already has (offsets in the file); the rest is read back to compute the
 * member's CRC.  The member takes its place in the central directory in the
 * order gir_zipw_add_inplace is called relative to the other members. */
typedef struct gir_zip_extent {
    uint64_t offset, len;
    uint32_t crc;
} gir_zip_extent;
gir_status gir_zipw_open_inplace(const char *path, uint64_t head, gir_zipw **out, gir_error *err);
gir_status gir_zipw_add_inplace(gir_zipw *w, const char *name, const gir_zip_extent *known, size_t n_known,
                                gir_error *err);

/* Writes the central directory and frees w, also on failure.  An archive
 * without members is a bare end-of-central-directory record. */
gir_status gir_zipw_close(gir_zipw *w, gir_error *err);
/* Frees w; a file the writer created is removed. */
void gir_zipw_discard(gir_zipw *w);

#endif
