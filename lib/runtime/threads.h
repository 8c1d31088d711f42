/* A small pool of worker threads for the runtime's kernels.
 *
 * The pool owns n-1 pthreads; the calling thread is worker 0 and takes part
 * in every job.  Results never depend on scheduling: gir_threads_run's
 * part w of n is always the same part of a job, and the kernels split
 * with gir_threads_chunks and gir_threads_shares compute each unit the
 * same way whoever takes it.  Part w is run by
 * pool thread w, or by the caller when that thread has not started it by
 * the time the caller's own part is done.  Each worker
 * owns a scratch area (GEMM packing buffers) allocated once at creation:
 * kernels never allocate. */
#ifndef GIR_RUNTIME_THREADS_H
#define GIR_RUNTIME_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "graphir/status.h"

/* The most workers a pool may have. */
#define GIR_MAX_THREADS 256

typedef struct gir_threads gir_threads;

/* Starts a pool of n workers (1 = no extra thread).  E_ARGUMENT when n is
 * outside 1..GIR_MAX_THREADS; E_NOMEM or E_INTERNAL when the system refuses. */
gir_status gir_threads_new(int n, gir_threads **out, gir_error *err);
/* Stops and joins the workers; NULL is allowed. */
void gir_threads_free(gir_threads *t);
int gir_threads_count(const gir_threads *t);

/* How long a waiting thread (a worker between jobs, the caller waiting for
 * the workers' parts) spins before it sleeps, in microseconds (0: after
 * 128 pauses, a few microseconds).  Spins under way end by the new time
 * too. */
#define GIR_THREADS_SPIN_DEFAULT_US 40000u
void gir_threads_set_spin(gir_threads *t, uint32_t us);

/* Runs fn(ctx, w, n) for every part w in 0..n-1 (n = the pool's size), each
 * exactly once, and returns when all have finished.  Parts may run one
 * after another on one thread, so fn must not wait for another part.  fn
 * must not call gir_threads_run. */
void gir_threads_run(gir_threads *t, void (*fn)(void *ctx, int worker, int nworkers), void *ctx);

/* Worker w's scratch area: 64-byte aligned, at least
 * gir_gemm_workspace_floats() floats. */
float *gir_threads_scratch(gir_threads *t, int worker);

/* Runs fn(ctx, u0, u1, worker) over [0, units) in pieces of `chunk` units
 * (the last may be shorter) handed out from a shared counter: each worker
 * takes the next piece when done with its last, so a worker slowed by
 * other load leaves its share to the others.  fn must compute each unit
 * the same way whatever piece it falls in.  Serially on one worker. */
void gir_threads_chunks(gir_threads *t, size_t units, size_t chunk,
                        void (*fn)(void *ctx, size_t u0, size_t u1, int worker), void *ctx);

/* Runs fn(ctx, u0, u1, worker) over [0, units): worker w starts on its
 * even share (gir_split_range's part w) in pieces of `piece` units from
 * its front, so it reads and writes the same part of every such job and
 * keeps it in its own core's caches; a worker done with its share takes
 * pieces from the back of the share with the most left, so a worker slowed
 * by other load, or on a slower core, leaves the rest to the others.  fn
 * must compute each unit the same way whatever piece it falls in.
 * Serially on one worker (in pieces, in order). */
void gir_threads_shares(gir_threads *t, size_t units, size_t piece,
                        void (*fn)(void *ctx, size_t u0, size_t u1, int worker), void *ctx);

/* Splits [0, total) into n nearly equal parts aligned to `align` (except at
 * the end) and gives part w as [*begin, *end). */
void gir_split_range(size_t total, size_t align, int w, int n, size_t *begin, size_t *end);

#endif
