/* Worker thread pool (pthreads) with static work splitting. */
#include "threads.h"

#include "core/internal.h"
#include "gemm.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct gir_threads {
    int n;
    pthread_t *tids;
    int started;            /* threads actually created */
    pthread_mutex_t mu;
    pthread_cond_t cv_start, cv_done;
    unsigned long generation; /* bumped for each job */
    int pending;              /* workers still running the current job */
    bool quit;
    void (*fn)(void *, int, int);
    void *ctx;
    float **scratch;
    struct worker_arg *args;
};

typedef struct worker_arg {
    gir_threads *t;
    int w;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg *a = p;
    gir_threads *t = a->t;
    unsigned long seen = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->quit && t->generation == seen)
            pthread_cond_wait(&t->cv_start, &t->mu);
        if (t->quit)
            break;
        seen = t->generation;
        void (*fn)(void *, int, int) = t->fn;
        void *ctx = t->ctx;
        pthread_mutex_unlock(&t->mu);
        fn(ctx, a->w, t->n);
        pthread_mutex_lock(&t->mu);
        if (--t->pending == 0)
            pthread_cond_signal(&t->cv_done);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

void gir_threads_free(gir_threads *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->quit = true;
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
    if (!t->tids || !t->args || !t->scratch) {
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
    pthread_mutex_lock(&t->mu);
    t->fn = fn;
    t->ctx = ctx;
    t->pending = t->n - 1;
    t->generation++;
    pthread_cond_broadcast(&t->cv_start);
    pthread_mutex_unlock(&t->mu);
    fn(ctx, 0, t->n);
    pthread_mutex_lock(&t->mu);
    while (t->pending > 0)
        pthread_cond_wait(&t->cv_done, &t->mu);
    pthread_mutex_unlock(&t->mu);
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
