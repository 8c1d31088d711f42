/* Private helpers shared by every module of libgraphir: error setting,
 * growable buffers, a bump arena, checked arithmetic.  Not installed. */
#ifndef GIR_INTERNAL_H
#define GIR_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graphir/status.h"

#if defined(__GNUC__)
#define GIR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GIR_PRINTF(a, b)
#endif

/* ---- errors ---------------------------------------------------------- */

/* Records code and message unless an error is already recorded (the
 * innermost failure wins); returns code so callers can `return gir_fail()`. */
gir_status gir_fail(gir_error *err, gir_status code, const char *fmt, ...) GIR_PRINTF(3, 4);
/* gir_fail with the arguments in ap, for the failure helpers of a module
 * (which add a location after it); when the message cannot be formatted it
 * records GIR_E_NOMEM and returns that instead of code. */
gir_status gir_vfail(gir_error *err, gir_status code, const char *fmt, va_list ap) GIR_PRINTF(3, 0);
/* Records out of memory (no message: formatting one would need memory);
 * inline, so the compiler sees that it never returns GIR_OK. */
static inline gir_status gir_nomem(gir_error *err)
{
    if (err && err->code == GIR_OK)
        err->code = GIR_E_NOMEM;
    return GIR_E_NOMEM;
}
/* Fill the where-fields of an already failed error, if still empty. */
void gir_err_file(gir_error *err, const char *path);
void gir_err_node(gir_error *err, const char *name);
/* st, with the node called name recorded where st is a failure
 * (gir_err_node): TRY(gir_err_in_node(call(..., err), err, n->name)). */
gir_status gir_err_in_node(gir_status st, gir_error *err, const char *name);
/* The same with the file path (gir_err_file):
 * return gir_err_in_file(gir_fail(err, ...), err, path). */
gir_status gir_err_in_file(gir_status st, gir_error *err, const char *path);
/* gir_fail, then the file path (gir_err_file). */
gir_status gir_fail_file(gir_error *err, const char *path, gir_status code, const char *fmt, ...) GIR_PRINTF(4, 5);
void gir_err_loc(gir_error *err, const char *fmt, ...) GIR_PRINTF(2, 3);
void gir_err_replace_message(gir_error *err, const char *fmt, ...) GIR_PRINTF(2, 3);

char *gir_strdupf(const char *fmt, ...) GIR_PRINTF(1, 2);
char *gir_vstrdupf(const char *fmt, va_list ap) GIR_PRINTF(1, 0);

/* TRY(call): returns the status of a call that failed (internal code that
 * has nothing to clean up on the way out). */
#define TRY(e)                   \
    do {                         \
        gir_status st_ = (e);    \
        if (st_ != GIR_OK)       \
            return st_;          \
    } while (0)

/* ---- growable byte buffer ------------------------------------------- */

typedef struct gir_buf {
    char *data;  /* always NUL-terminated when len > 0 or after any append */
    size_t len;
    size_t cap;
    bool failed; /* an allocation failed; contents are incomplete */
} gir_buf;
#define GIR_BUF_INIT { NULL, 0, 0, false }

bool gir_buf_reserve(gir_buf *b, size_t extra);
/* Appends with the room check inline: emitters call these for every few
 * bytes (the out-of-line part grows the buffer). */
void gir_buf_append_grow(gir_buf *b, const void *p, size_t n);
static inline void gir_buf_append(gir_buf *b, const void *p, size_t n)
{
    if (!b->failed && n < b->cap - b->len) { /* room for n bytes and the terminator */
        if (n)
            memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
    } else {
        gir_buf_append_grow(b, p, n);
    }
}
static inline void gir_buf_putc(gir_buf *b, char c)
{
    gir_buf_append(b, &c, 1);
}
void gir_buf_puts(gir_buf *b, const char *s);
/* Decimal text of v ("-12"). */
void gir_buf_put_int(gir_buf *b, int64_t v);
void gir_buf_put_uint(gir_buf *b, uint64_t v);
void gir_buf_printf(gir_buf *b, const char *fmt, ...) GIR_PRINTF(2, 3);
/* Returns the string (caller frees) and resets the buffer; NULL if failed. */
char *gir_buf_take(gir_buf *b);
void gir_buf_free(gir_buf *b);

/* ---- growable arrays -------------------------------------------------- */

/* Grows *items (element size sz) to hold at least need elements.
 * Returns false on overflow or allocation failure. */
bool gir_grow(void **items, size_t *cap, size_t need, size_t sz);
#define GIR_GROW(arr, cap, need) gir_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

/* ---- shared objects ---------------------------------------------------- */

/* Defines SC T *REF(T *x), another reference to x (NULL allowed), and SC
 * void DROP(T *x), which drops one and frees x with FREE(x) after the last:
 * for an object shared by reference count (an atomic int x->refs that
 * starts at 1; <stdatomic.h> where this is used).  SC: static, or
 * nothing. */
#define GIR_REFCOUNTED(SC, T, REF, DROP, FREE)                   \
    SC T *REF(T *x)                                            \
    {                                                          \
        if (x)                                                 \
            atomic_fetch_add(&x->refs, 1);                     \
        return x;                                              \
    }                                                          \
    SC void DROP(T *x)                                         \
    {                                                          \
        if (x && atomic_fetch_sub(&x->refs, 1) == 1)           \
            FREE(x);                                           \
    }

/* ---- sorting ------------------------------------------------------------ */

/* Sets idx[0..n) to the indices 0..n-1 in the order before(ctx, x, y)
 * (whether index x goes strictly before index y) gives them, stably: a
 * bottom-up merge sort, without recursion, through tmp (n more).  Inline,
 * so that a constant before is inlined into the loop. */
static inline void gir_sort_indices(size_t *idx, size_t *tmp, size_t n,
                                    bool (*before)(const void *ctx, size_t x, size_t y), const void *ctx)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = before(ctx, idx[b], idx[a]) ? idx[b++] : idx[a++];
            while (a < mid)
                tmp[o++] = idx[a++];
            while (b < hi)
                tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
}

/* ---- arena: many small allocations freed at once --------------------- */

typedef struct gir_arena_block gir_arena_block;
typedef struct gir_arena {
    gir_arena_block *head;
    /* The head block's free bytes: `left` bytes from `cur` (NULL, 0 when
     * there is no block yet).  Allocations that fit are taken inline. */
    unsigned char *cur;
    size_t left;
    size_t used_total;
} gir_arena;

/* n bytes (16-byte aligned) from a new block: what the inline allocators
 * call when the head block has no room. */
void *gir_arena_take_new(gir_arena *a, size_t n);

/* 16-byte aligned, not zeroed. */
static inline void *gir_arena_alloc_uninit(gir_arena *a, size_t n)
{
    size_t pad = (size_t)(0u - (uintptr_t)a->cur) & 15u;
    if (a->cur && a->left >= pad && a->left - pad >= n) {
        unsigned char *p = a->cur + pad;
        a->cur = p + n;
        a->left -= pad + n;
        a->used_total += pad + n;
        return p;
    }
    return gir_arena_take_new(a, n);
}

/* A NUL-terminated copy of s[0..n) (NULL in, NULL out). */
static inline char *gir_arena_strndup(gir_arena *a, const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *p;
    if (a->left > n) { /* room for the NUL too */
        p = (char *)a->cur;
        a->cur += n + 1;
        a->left -= n + 1;
        a->used_total += n + 1;
    } else if (n == SIZE_MAX || !(p = gir_arena_take_new(a, n + 1))) {
        return NULL;
    }
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void *gir_arena_alloc(gir_arena *a, size_t n);           /* 16-byte aligned, zeroed */
char *gir_arena_strdup(gir_arena *a, const char *s);      /* NULL in, NULL out */
char *gir_arena_printf(gir_arena *a, const char *fmt, ...) GIR_PRINTF(2, 3);
/* A 16-byte aligned copy of n bytes (n 0: a 1-byte block). */
void *gir_arena_memdup(gir_arena *a, const void *p, size_t n);
void gir_arena_free(gir_arena *a);

/* ---- checked arithmetic ---------------------------------------------- */

static inline bool gir_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool gir_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* ---- little-endian byte access --------------------------------------- */

static inline uint32_t gir_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t gir_le64(const unsigned char *p)
{
    return (uint64_t)gir_le32(p) | (uint64_t)gir_le32(p + 4) << 32;
}
static inline void gir_put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static inline void gir_put_le64(unsigned char *p, uint64_t v)
{
    gir_put_le32(p, (uint32_t)v);
    gir_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* ---- characters ----------------------------------------------------- */

/* The value of hexadecimal digit c, or -1. */
int gir_hex_digit(int c);
/* Code point cp (at most U+10FFFF) in UTF-8 into out; returns its length. */
size_t gir_utf8_encode(uint32_t cp, char out[4]);

/* ---- numbers as text ------------------------------------------------- */

/* Decimal text of v ("-12"), NUL-terminated; returns its length. */
size_t gir_fmt_int(char out[24], int64_t v);

/* Shortest decimal text that reads back to exactly the same double
 * (Python repr style: "0.001", "1e-05", "3.0" when force_point). */
void gir_fmt_double(char out[48], double v, bool force_point);
/* Same for a float32 value (shortest text that round-trips as float). */
void gir_fmt_float(char out[48], float v, bool force_point);
/* A float32 attribute as the double its shortest text names (0.001f ->
 * 0.001), so a value stored as float32 by one format equals the same value
 * stored as text or double by another. */
double gir_float_widen(float v);
/* Strict whole-string parsers; false when s is not exactly a number. */
bool gir_parse_i64(const char *s, int64_t *out);
bool gir_parse_double(const char *s, double *out);

/* ---- files ------------------------------------------------------------ */

/* Reads a whole file (max_bytes caps it; 0 means no cap). */
gir_status gir_read_file(const char *path, size_t max_bytes, char **data, size_t *len, gir_error *err);
/* Reads the first n bytes (fewer if the file is shorter). */
gir_status gir_read_head(const char *path, unsigned char *buf, size_t n, size_t *got, gir_error *err);

/* Reads exactly n bytes at offset off of fd, retrying interrupted and
 * short reads; returns how many it read: n, or fewer when the file ended
 * (errno is then 0) or a read failed (errno says why). */
uint64_t gir_pread_full(int fd, void *buf, uint64_t n, uint64_t off);
/* Writes exactly n bytes at offset off of fd, retrying interrupted and
 * short writes; false when it cannot (errno says why: ENOSPC when the
 * system wrote nothing). */
bool gir_pwrite_full(int fd, const void *buf, uint64_t n, uint64_t off);

/* What identifies a file's contents as a reader saw them: its device,
 * inode, size and modification time.  Readers take it under the directory's
 * read lock; tensors loaded lazily later open the file again with
 * gir_open_same, which refuses a file that another process has replaced
 * (a commit renames a new file over it) or rewritten since, so a graph is
 * never completed with weights it was not read with. */
typedef struct gir_file_id {
    uint64_t dev, ino, size;
    int64_t mtime_s, mtime_ns;
} gir_file_id;

/* The identity of the file st describes (from stat or fstat). */
void gir_file_id_from_stat(const struct stat *st, gir_file_id *id);
/* Opens path read-only and checks it is the file id describes: GIR_E_IO
 * naming what (e.g. "the parameters file") when it cannot be opened, is
 * another file now, or was rewritten.  Close *fd when done. */
gir_status gir_open_same(const char *path, const gir_file_id *id, const char *what, int *fd, gir_error *err);

/* Whether path names a pipe, terminal, socket or other file that can be
 * read only once (not a regular file, not a directory). */
bool gir_path_is_stream(const char *path);
/* Copies such a file whole into a new temporary file (in $TMPDIR, else
 * /tmp); *tmp is its malloc'd path.  With *keep_fd >= 0 the copy has no
 * name left (*tmp is /proc/self/fd/N): close *keep_fd when done; else
 * unlink *tmp.  Free *tmp either way. */
gir_status gir_spool(const char *path, char **tmp, int *keep_fd, gir_error *err);

/* Atomic output: data is written to a temporary file in the target's
 * directory, and renamed over the target only on gir_outfile_commit.  Only
 * regular files are replaced (GIR_E_IO for a FIFO, device, directory or
 * symbolic link), and without overwrite never any existing file. */
typedef struct gir_outfile gir_outfile;
gir_status gir_outfile_open(const char *path, bool overwrite, gir_outfile **out, gir_error *err);
gir_status gir_outfile_write(gir_outfile *f, const void *p, size_t n, gir_error *err);
/* The stdio stream of the temporary file (for libraries that want one). */
void *gir_outfile_stream(gir_outfile *f);
const char *gir_outfile_temp_path(const gir_outfile *f);
gir_status gir_outfile_commit(gir_outfile *f, gir_error *err); /* frees f */
/* Commits a model and its companion files as one unit (frees them all):
 * under an exclusive lock of fs[0]'s directory, with a journal that the
 * next output opened there rolls forward if this process dies between the
 * renames.  On failure nothing new is left (files published by this call
 * where nothing was replaced are removed again). */
gir_status gir_outfile_commit_all(gir_outfile **fs, size_t n, gir_error *err);
/* The lock gir_outfile_commit_all takes on path's directory (and its
 * recovery of an interrupted commit there), for code that moves finished
 * files into that directory itself: an fd for gir_outdir_unlock, or -1
 * when the directory cannot be locked. */
int gir_outdir_lock(const char *path);
void gir_outdir_unlock(int fd);
/* A new staging directory beside path, named like a temporary output
 * (.NAME.graphconv-PID-RANDOM.tmp: the next output opened in that
 * directory removes it once this process is gone); *stage is malloc'd. */
gir_status gir_outdir_stage(const char *path, char **stage, gir_error *err);
/* Frees a stage's path once its directory is gone (until then a signal
 * handler's gir_outfile_remove_temps removes it). */
void gir_outdir_unstage(char *stage);
/* With the directory lock (fd dfd) held: writes the journal of a commit of
 * n files, temps[i] (names relative to dfd: a temporary file, or
 * STAGE/NAME in a staging directory) moving onto targets[i] (names in
 * dfd), which the next lock of the directory rolls forward should this
 * process die between the renames; *name (malloc'd) for
 * gir_outdir_journal_done, which removes it once every rename is done. */
gir_status gir_outdir_journal(int dfd, size_t n, const char *const *temps, const char *const *targets, char **name,
                              gir_error *err);
void gir_outdir_journal_done(int dfd, char *name);
/* For a reader of path: a shared lock of its directory, so that no commit
 * moves files there while the model and its companions are read; a commit
 * a dead writer left unfinished there (its journal) is rolled forward
 * first.  *fd (-1: the directory cannot be locked, read as it is) for
 * gir_indir_unlock.  GIR_E_IO when a journal stays that cannot be rolled
 * forward. */
gir_status gir_indir_lock(const char *path, int *fd, gir_error *err);
void gir_indir_unlock(int fd);
void gir_outfile_abort(gir_outfile *f);                        /* removes temp, frees f */
/* Removes every temporary output file this process has open; only
 * async-signal-safe calls: for the CLI's SIGINT/SIGTERM/SIGHUP handler. */
void gir_outfile_remove_temps(void);

/* Path helpers (results are malloc'd). */
char *gir_path_dirname(const char *path);
const char *gir_path_basename(const char *path);
char *gir_path_join(const char *dir, const char *name);
/* Replaces the extension of path's last component (ext includes the dot). */
char *gir_path_with_ext(const char *path, const char *ext);
bool gir_path_exists(const char *path);
bool gir_str_ends_with(const char *s, const char *suffix);
bool gir_str_ieq(const char *a, const char *b);

#endif
