/* Worker thread pool (pthreads): static parts (gir_threads_run), pieces
 * from a shared counter (gir_threads_chunks), and even shares whose
 * remainders go to whoever is done first (gir_threads_shares).
 *
 * A job is published by bumping `generation`; a worker that has just
 * finished one spins on that counter for a while before sleeping on the
 * condition variable, and the caller spins on `pending` before sleeping on
 * its own, because a model runs hundreds of short parallel jobs a second
 * and waking a sleeping thread costs tens of microseconds on a busy
 * machine, and up to milliseconds on a virtual one.  Sleeping and
 * publishing both go through the mutex (the sleeper counts itself and
 * checks the counter under it; the publisher looks for sleepers under it),
 * so no wake-up is lost.
 *
 * Part w of a job is run by whoever claims it first: worker w, or the
 * caller once its own part is done.  A worker that is slow to wake (a
 * virtual CPU left idle can take milliseconds to be scheduled again) so
 * delays no job: the caller runs the worker's part too, and the worker,
 * finding it claimed, waits for the next job.  Claims are
 * compare-and-swaps of `claims[w]` from the previous generation to this
 * one, so a late worker never touches a job that has ended.
 *
 * Linux can wake a worker on the caller's CPU (on a virtual machine, when
 * the other virtual CPU idled), where the two share one CPU for as long as
 * the load balancer takes to notice, often a whole run.  So a worker woken
 * there moves itself elsewhere (leave_cpu), does not spin there, and the
 * caller yields its CPU while waiting for a part that runs on it.  With
 * two threads and the benchmark's pause between runs, MobileNetV2 took
 * 8.3 and 5.1 ms a run without this, 4.6 and 4.7 ms with it (two runs of
 * each, alternating). */
#include "threads.h"

#include "core/internal.h"
#include "gemm.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* How long a thread spins on a counter before sleeping, by default
 * (gir_threads_set_spin).  It must outlast the serial stretches between
 * two parallel jobs of a run (a node's set-up, a small node run by one
 * thread), so that the workers stay awake through a run: with 50 us they
 * slept several times a run, and on a virtual machine a thread woken from
 * sleep can take milliseconds to run again (ResNet-18 with two threads took
 * 22.9 ms a run, against 12.7 ms with 5 ms).  It also spans a pause between
 * runs: a virtual CPU left idle for long is slow to come back, and the
 * longer it idled, the slower.  After a 50 ms pause RegNetX-400MF took
 * 6.5 ms a run with 40 ms of spinning against 6.9 ms with 5 ms, and
 * bench_ort's geometric mean with two threads was 1.040 against 1.089
 * (three runs of each, alternating); an hour later, when idle CPUs woke
 * fast, 1.061 against 1.065.  ONNX Runtime's pool spins about 30 ms after
 * a run. */
#define SPIN_DEFAULT_NS ((uint64_t)GIR_THREADS_SPIN_DEFAULT_US * 1000u)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct gir_threads {
    int n;
    pthread_t *tids;
    int started;            /* threads actually created */
    pthread_mutex_t mu;
    pthread_cond_t cv_start, cv_done;
    atomic_ulong generation; /* bumped for each job */
    atomic_int pending;      /* workers still running the current job */
    atomic_bool quit;
    int sleepers;            /* workers waiting on cv_start (under mu) */
    bool caller_sleeps;      /* the caller waits on cv_done (under mu) */
    void (*fn)(void *, int, int);
    void *ctx;
    float **scratch;
    struct worker_arg *args;
    struct claim *claims;    /* per part: its last claim, and where it runs */
    struct share *shares;    /* per part: what is left of its share (gir_threads_shares) */
    atomic_ullong spin_ns;   /* how long a waiting thread spins before it sleeps */
    atomic_int caller_cpu;   /* the CPU the caller published the current job from (-1: unknown) */
};

/* One cache line each: worker w and the caller are the only ones to touch
 * claim w. */
typedef struct claim {
    _Alignas(64) atomic_ulong gen;
    atomic_int cpu; /* where pool thread w runs its claimed part (-1: elsewhere or unknown) */
} claim;

/* The CPU this thread runs on, or -1. */
static int this_cpu(void)
{
#ifdef __linux__
    return sched_getcpu();
#else
    return -1;
#endif
}

/* Moves this thread off `cpu` to another of its allowed CPUs: taking cpu
 * out of its affinity moves it at once, and the mask is restored right
 * away, so the scheduler stays free to place it later. */
static void leave_cpu(int cpu)
{
#ifdef __linux__
    cpu_set_t all, others;
    if (cpu < 0 || cpu >= CPU_SETSIZE || pthread_getaffinity_np(pthread_self(), sizeof all, &all) != 0)
        return;
    others = all;
    CPU_CLR(cpu, &others);
    if (CPU_COUNT(&others) == 0 || pthread_setaffinity_np(pthread_self(), sizeof others, &others) != 0)
        return;
    pthread_setaffinity_np(pthread_self(), sizeof all, &all);
#else
    (void)cpu;
#endif
}

/* What is left of part w's share in gir_threads_shares: [front, back) as
 * one word (front in the low half), so that the owner taking pieces from
 * the front and others taking them from the back never both get a unit. */
typedef struct share {
    _Alignas(64) atomic_ullong range;
} share;

typedef struct worker_arg {
    gir_threads *t;
    int w;
} worker_arg;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* A bounded spin: spin_more pauses once and says whether to go on, until
 * the pool's spin time has passed since its first call (the clock and the
 * spin time read every 64: a new spin time ends spins under way). */
typedef struct spin {
    unsigned n;
    uint64_t t0;
    const atomic_ullong *limit;
} spin;

static spin spin_start(const gir_threads *t)
{
    spin sp = { 0, 0, &t->spin_ns };
    return sp;
}

static bool spin_more(spin *sp)
{
    cpu_relax();
    if (++sp->n % 64 == 0) {
        uint64_t t = now_ns(), limit = atomic_load_explicit(sp->limit, memory_order_relaxed);
        if (sp->t0 == 0)
            sp->t0 = t;
        else if (t - sp->t0 > limit)
            return false;
    }
    return true;
}

/* Whether this thread claims part w of generation g (the first to try does). */
static bool claim_part(gir_threads *t, int w, unsigned long g)
{
    unsigned long prev = g - 1;
    return atomic_compare_exchange_strong_explicit(&t->claims[w].gen, &prev, g, memory_order_acq_rel,
                                                   memory_order_relaxed);
}

/* A claimed part of the current job is finished. */
static void part_done(gir_threads *t)
{
    if (atomic_fetch_sub_explicit(&t->pending, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&t->mu);
        if (t->caller_sleeps)
            pthread_cond_signal(&t->cv_done);
        pthread_mutex_unlock(&t->mu);
    }
}

/* A waiting worker goes on spinning (spin_more), but not on the caller's
 * CPU: there it would only take time from the caller. */
static bool worker_spins(gir_threads *t, spin *sp)
{
    if (!spin_more(sp))
        return false;
    int cpu = atomic_load_explicit(&t->caller_cpu, memory_order_relaxed);
    return sp->n % 64 != 0 || cpu < 0 || this_cpu() != cpu;
}

static void *worker_main(void *p)
{
    worker_arg *a = p;
    gir_threads *t = a->t;
    unsigned long seen = 0;
    for (;;) {
        unsigned long g;
        spin sp = spin_start(t);
        while ((g = atomic_load_explicit(&t->generation, memory_order_acquire)) == seen &&
               !atomic_load_explicit(&t->quit, memory_order_relaxed) && worker_spins(t, &sp))
            ;
        if (g == seen) {
            pthread_mutex_lock(&t->mu);
            t->sleepers++;
            while (!atomic_load(&t->quit) && (g = atomic_load(&t->generation)) == seen)
                pthread_cond_wait(&t->cv_start, &t->mu);
            t->sleepers--;
            pthread_mutex_unlock(&t->mu);
            int cpu = atomic_load_explicit(&t->caller_cpu, memory_order_relaxed);
            if (cpu >= 0 && this_cpu() == cpu)
                leave_cpu(cpu);
        }
        if (atomic_load(&t->quit))
            break;
        seen = g;
        if (claim_part(t, a->w, g)) {
            atomic_store_explicit(&t->claims[a->w].cpu, this_cpu(), memory_order_relaxed);
            t->fn(t->ctx, a->w, t->n);
            atomic_store_explicit(&t->claims[a->w].cpu, -1, memory_order_relaxed);
            part_done(t);
        }
    }
    return NULL;
}

void gir_threads_free(gir_threads *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->quit, true);
    pthread_cond_broadcast(&t->cv_start);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < t->started; i++)
        pthread_join(t->tids[i], NULL);
    pthread_cond_destroy(&t->cv_start);
    pthread_cond_destroy(&t->cv_done);
    pthread_mutex_destroy(&t->mu);
    if (t->scratch)
        for (int i = 0; i < t->n; i++)
            free(t->scratch[i]);
    free(t->scratch);
    free(t->tids);
    free(t->args);
    free(t->claims);
    free(t->shares);
    free(t);
}

gir_status gir_threads_new(int n, gir_threads **out, gir_error *err)
{
    *out = NULL;
    if (n < 1 || n > GIR_MAX_THREADS)
        return gir_fail(err, GIR_E_ARGUMENT, "thread count %d is outside 1..%d", n, GIR_MAX_THREADS);
    gir_threads *t = calloc(1, sizeof *t);
    if (!t)
        return gir_nomem(err);
    t->n = n;
    atomic_init(&t->generation, 0);
    atomic_init(&t->pending, 0);
    atomic_init(&t->quit, false);
    atomic_init(&t->caller_cpu, -1);
    atomic_init(&t->spin_ns, SPIN_DEFAULT_NS);
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t);
        return gir_fail(err, GIR_E_INTERNAL, "cannot create a mutex");
    }
    if (pthread_cond_init(&t->cv_start, NULL) != 0) {
        pthread_mutex_destroy(&t->mu);
        free(t);
        return gir_fail(err, GIR_E_INTERNAL, "cannot create a condition variable");
    }
    if (pthread_cond_init(&t->cv_done, NULL) != 0) {
        pthread_cond_destroy(&t->cv_start);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return gir_fail(err, GIR_E_INTERNAL, "cannot create a condition variable");
    }
    t->tids = calloc((size_t)n, sizeof *t->tids);
    t->args = calloc((size_t)n, sizeof *t->args);
    t->scratch = calloc((size_t)n, sizeof *t->scratch);
    t->claims = aligned_alloc(_Alignof(claim), (size_t)n * sizeof *t->claims);
    if (t->claims)
        for (int i = 0; i < n; i++) {
            atomic_init(&t->claims[i].gen, 0);
            atomic_init(&t->claims[i].cpu, -1);
        }
    t->shares = aligned_alloc(_Alignof(share), (size_t)n * sizeof *t->shares);
    if (t->shares)
        for (int i = 0; i < n; i++)
            atomic_init(&t->shares[i].range, 0);
    if (!t->tids || !t->args || !t->scratch || !t->claims || !t->shares) {
        gir_threads_free(t);
        return gir_nomem(err);
    }
    size_t bytes = gir_gemm_workspace_floats() * sizeof(float);
    for (int i = 0; i < n; i++) {
        if (posix_memalign((void **)&t->scratch[i], 64, bytes) != 0) {
            t->scratch[i] = NULL;
            gir_threads_free(t);
            return gir_nomem(err);
        }
    }
    for (int i = 1; i < n; i++) {
        worker_arg *a = &t->args[i];
        a->t = t;
        a->w = i;
        if (pthread_create(&t->tids[t->started], NULL, worker_main, a) != 0) {
            gir_threads_free(t);
            return gir_fail(err, GIR_E_INTERNAL, "cannot start worker thread %d of %d", i, n);
        }
        t->started++;
    }
    *out = t;
    return GIR_OK;
}

void gir_threads_set_spin(gir_threads *t, uint32_t us)
{
    atomic_store_explicit(&t->spin_ns, (uint64_t)us * 1000u, memory_order_relaxed);
}

int gir_threads_count(const gir_threads *t)
{
    return t->n;
}

float *gir_threads_scratch(gir_threads *t, int worker)
{
    return t->scratch[worker];
}

void gir_threads_run(gir_threads *t, void (*fn)(void *ctx, int worker, int nworkers), void *ctx)
{
    if (t->n == 1) {
        fn(ctx, 0, 1);
        return;
    }
    /* fn, ctx and pending are published by the release of the new generation */
    t->fn = fn;
    t->ctx = ctx;
    atomic_store_explicit(&t->pending, t->n - 1, memory_order_relaxed);
    int cpu = this_cpu();
    atomic_store_explicit(&t->caller_cpu, cpu, memory_order_relaxed);
    unsigned long g = atomic_fetch_add_explicit(&t->generation, 1, memory_order_release) + 1;
    pthread_mutex_lock(&t->mu);
    if (t->sleepers > 0)
        pthread_cond_broadcast(&t->cv_start);
    pthread_mutex_unlock(&t->mu);
    fn(ctx, 0, t->n);
    for (int w = 1; w < t->n; w++) /* the parts no worker has started */
        if (claim_part(t, w, g)) {
            fn(ctx, w, t->n);
            part_done(t);
        }
    spin sp = spin_start(t);
    while (atomic_load_explicit(&t->pending, memory_order_acquire) > 0 && spin_more(&sp))
        if (sp.n % 64 == 0 && cpu >= 0)
            for (int w = 1; w < t->n; w++) /* a part running on this CPU needs it */
                if (atomic_load_explicit(&t->claims[w].cpu, memory_order_relaxed) == cpu) {
                    sched_yield();
                    break;
                }
    if (atomic_load_explicit(&t->pending, memory_order_acquire) > 0) {
        pthread_mutex_lock(&t->mu);
        t->caller_sleeps = true;
        while (atomic_load(&t->pending) > 0)
            pthread_cond_wait(&t->cv_done, &t->mu);
        t->caller_sleeps = false;
        pthread_mutex_unlock(&t->mu);
    }
}

typedef struct chunks_job {
    void (*fn)(void *ctx, size_t u0, size_t u1, int worker);
    void *ctx;
    size_t units, chunk;
    atomic_size_t next;
} chunks_job;

static void chunks_worker(void *ctx, int w, int n)
{
    (void)n;
    chunks_job *j = ctx;
    for (;;) {
        size_t u = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
        if (u >= j->units)
            break;
        j->fn(j->ctx, u, j->units - u < j->chunk ? j->units : u + j->chunk, w);
    }
}

void gir_threads_chunks(gir_threads *t, size_t units, size_t chunk,
                        void (*fn)(void *ctx, size_t u0, size_t u1, int worker), void *ctx)
{
    if (units == 0)
        return;
    if (t->n == 1) {
        fn(ctx, 0, units, 0);
        return;
    }
    chunks_job j = { fn, ctx, units, chunk ? chunk : 1, 0 };
    atomic_init(&j.next, 0);
    gir_threads_run(t, chunks_worker, &j);
}

typedef struct shares_job {
    void (*fn)(void *ctx, size_t u0, size_t u1, int worker);
    void *ctx;
    share *shares;
    uint64_t piece;
} shares_job;

/* Up to `piece` units from the front of share s (from_back: its back) into
 * [*u0, *u1); false when it is empty. */
static bool share_take(share *s, uint64_t piece, bool from_back, size_t *u0, size_t *u1)
{
    unsigned long long r = atomic_load_explicit(&s->range, memory_order_relaxed);
    for (;;) {
        uint64_t f = r & 0xffffffffu, b = r >> 32;
        if (f >= b)
            return false;
        uint64_t n = b - f < piece ? b - f : piece;
        uint64_t nf = from_back ? f : f + n, nb = from_back ? b - n : b;
        if (atomic_compare_exchange_weak_explicit(&s->range, &r, (unsigned long long)(nb << 32 | nf),
                                                  memory_order_relaxed, memory_order_relaxed)) {
            *u0 = (size_t)(from_back ? nb : f);
            *u1 = (size_t)(from_back ? b : nf);
            return true;
        }
    }
}

/* Part w: its own share from the front, then pieces from the back of
 * whichever share has the most left. */
static void shares_worker(void *ctx, int w, int n)
{
    const shares_job *j = ctx;
    size_t u0, u1;
    while (share_take(&j->shares[w], j->piece, false, &u0, &u1))
        j->fn(j->ctx, u0, u1, w);
    for (;;) {
        int victim = -1;
        uint64_t most = 0;
        for (int v = 0; v < n; v++) {
            unsigned long long r = atomic_load_explicit(&j->shares[v].range, memory_order_relaxed);
            uint64_t f = r & 0xffffffffu, b = r >> 32;
            if (v != w && b > f && b - f > most) {
                most = b - f;
                victim = v;
            }
        }
        if (victim < 0)
            break;
        if (share_take(&j->shares[victim], j->piece, true, &u0, &u1))
            j->fn(j->ctx, u0, u1, w);
    }
}

void gir_threads_shares(gir_threads *t, size_t units, size_t piece,
                        void (*fn)(void *ctx, size_t u0, size_t u1, int worker), void *ctx)
{
    if (units == 0)
        return;
    if (piece == 0)
        piece = 1;
    if (t->n == 1) {
        for (size_t u = 0; u < units; u += piece)
            fn(ctx, u, units - u < piece ? units : u + piece, 0);
        return;
    }
    if (units > 0xffffffffu) { /* beyond what a share's word holds */
        gir_threads_chunks(t, units, piece, fn, ctx);
        return;
    }
    for (int w = 0; w < t->n; w++) {
        size_t b, e;
        gir_split_range(units, 1, w, t->n, &b, &e);
        atomic_store_explicit(&t->shares[w].range, (unsigned long long)e << 32 | b, memory_order_relaxed);
    }
    shares_job j = { fn, ctx, t->shares, piece };
    gir_threads_run(t, shares_worker, &j); /* publishes the shares */
}

void gir_split_range(size_t total, size_t align, int w, int n, size_t *begin, size_t *end)
{
    if (align == 0)
        align = 1;
    size_t units = (total + align - 1) / align;
    size_t per = units / (size_t)n, extra = units % (size_t)n;
    size_t ub = (size_t)w * per + ((size_t)w < extra ? (size_t)w : extra);
    size_t ue = ub + per + ((size_t)w < extra ? 1 : 0);
    size_t b = ub * align, e = ue * align;
    *begin = b < total ? b : total;
    *end = e < total ? e : total;
}
