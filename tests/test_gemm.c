/* The runtime's GEMM against a naive double-precision reference: every
 * kernel this CPU supports, transposes, alpha/beta, biases, clamping, packed
 * A, edge tiles, 1 and 2 threads (bit-identical), and the thread pool. */
#include "testutil.h"

#include "runtime/gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state;

static float frand(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((rng_state >> 40) & 0xFFFF) / 65536.0f - 0.5f;
}

typedef struct gcase {
    size_t m, n, k;
    bool ta, tb;
    float alpha, beta;
    bool bias_m, bias_n, clamp, packed;
} gcase;

/* Runs one case on one kernel and thread count; returns C (malloc'd). */
static float *run_case(const gcase *tc, gir_gemm_isa isa, int nthreads, const float *a, const float *b,
                       const float *c0, const float *bm, const float *bn)
{
    gir_error err = GIR_ERROR_INIT;
    gir_threads *th;
    TU_OK(gir_threads_new(nthreads, &th, &err), &err);
    /* Leading dimensions larger than the logical width catch stride bugs. */
    size_t lda = (tc->ta ? tc->m : tc->k) + 3, ldb = (tc->tb ? tc->k : tc->n) + 5, ldc = tc->n + 2;
    float *c = malloc(tc->m * ldc * sizeof(float));
    assert_non_null(c);
    memcpy(c, c0, tc->m * ldc * sizeof(float));
    gir_gemm_packed pk;
    if (tc->packed)
        TU_OK(gir_gemm_pack_a(isa, tc->ta, tc->m, tc->k, a, lda, &pk, &err), &err);
    gir_gemm_args g = { 0 };
    g.m = tc->m;
    g.n = tc->n;
    g.k = tc->k;
    g.alpha = tc->alpha;
    g.beta = tc->beta;
    g.a = tc->packed ? NULL : a;
    g.lda = lda;
    g.trans_a = tc->ta;
    g.packed_a = tc->packed ? &pk : NULL;
    g.b = b;
    g.ldb = ldb;
    g.trans_b = tc->tb;
    g.c = c;
    g.ldc = ldc;
    g.bias_m = tc->bias_m ? bm : NULL;
    g.bias_n = tc->bias_n ? bn : NULL;
    g.clamp = tc->clamp;
    g.lo = -0.25f;
    g.hi = 0.5f;
    g.isa = isa;
    gir_sgemm(&g, th);
    if (tc->packed)
        gir_gemm_packed_free(&pk);
    gir_threads_free(th);
    return c;
}

static void check_case(const gcase *tc)
{
    size_t lda = (tc->ta ? tc->m : tc->k) + 3, ldb = (tc->tb ? tc->k : tc->n) + 5, ldc = tc->n + 2;
    size_t arows = tc->ta ? tc->k : tc->m, brows = tc->tb ? tc->n : tc->k;
    float *a = malloc((arows * lda + 1) * sizeof(float));
    float *b = malloc((brows * ldb + 1) * sizeof(float));
    float *c0 = malloc((tc->m * ldc + 1) * sizeof(float));
    float *bm = malloc((tc->m + 1) * sizeof(float));
    float *bn = malloc((tc->n + 1) * sizeof(float));
    assert_true(a && b && c0 && bm && bn);
    for (size_t i = 0; i < arows * lda; i++)
        a[i] = frand();
    for (size_t i = 0; i < brows * ldb; i++)
        b[i] = frand();
    for (size_t i = 0; i < tc->m * ldc; i++)
        c0[i] = tc->beta == 0.0f ? NAN : frand(); /* beta 0 must not read C */
    for (size_t i = 0; i < tc->m; i++)
        bm[i] = frand();
    for (size_t i = 0; i < tc->n; i++)
        bn[i] = frand();

    for (int isa = GIR_GEMM_AUTO; isa < GIR_GEMM_ISA_COUNT_; isa++) {
        if (!gir_gemm_isa_supported((gir_gemm_isa)isa))
            continue;
        float *c1 = run_case(tc, (gir_gemm_isa)isa, 1, a, b, c0, bm, bn);
        float *c2 = run_case(tc, (gir_gemm_isa)isa, 2, a, b, c0, bm, bn);
        for (size_t i = 0; i < tc->m; i++) {
            for (size_t j = 0; j < tc->n; j++) {
                double s = 0, mag = 0;
                for (size_t p = 0; p < tc->k; p++) {
                    double x = tc->ta ? a[p * lda + i] : a[i * lda + p];
                    double y = tc->tb ? b[j * ldb + p] : b[p * ldb + j];
                    s += x * y;
                    mag += fabs(x * y);
                }
                double want = tc->alpha * s;
                if (tc->beta != 0.0f)
                    want += tc->beta * c0[i * ldc + j];
                if (tc->bias_m)
                    want += bm[i];
                if (tc->bias_n)
                    want += bn[j];
                if (tc->clamp)
                    want = want < -0.25 ? -0.25 : want > 0.5 ? 0.5 : want;
                double got = c1[i * ldc + j];
                double tol = 1e-7 * (double)(tc->k + 4) * (fabs(tc->alpha) * mag + 4.0);
                if (!(fabs(got - want) <= tol))
                    fail_msg("%s m=%zu n=%zu k=%zu ta=%d tb=%d packed=%d: C[%zu,%zu] = %.9g, expected %.9g",
                             gir_gemm_isa_name((gir_gemm_isa)isa), tc->m, tc->n, tc->k, tc->ta, tc->tb,
                             tc->packed, i, j, got, want);
            }
            /* Padding between rows is never written. */
            for (size_t j = tc->n; j < ldc; j++) {
                float want = c0[i * ldc + j];
                assert_memory_equal(&c1[i * ldc + j], &want, sizeof want);
            }
        }
        /* Threads split rows or columns but never the sums. */
        assert_memory_equal(c1, c2, tc->m * ldc * sizeof(float));
        free(c1);
        free(c2);
    }
    free(a);
    free(b);
    free(c0);
    free(bm);
    free(bn);
}

static void test_gemm_edges(void **state)
{
    (void)state;
    rng_state = 1;
    /* Every remainder of the register tiles (4x8, 6x16, 8x32) and cache
     * blocks (k crosses 256), all four transpose combinations. */
    static const size_t ms[] = { 1, 7, 8, 13, 33 };
    static const size_t ns[] = { 1, 16, 31, 33, 70 };
    static const size_t ks[] = { 1, 9, 300 };
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
                for (int t = 0; t < 4; t++) {
                    gcase tc = { ms[mi], ns[ni], ks[ki], t & 1, (t >> 1) & 1, 1.0f, 0.0f,
                                 false, false, false, false };
                    check_case(&tc);
                }
    /* Packed A with a short K: B read in place (AVX-512), every column
     * remainder, with the epilogue (beta, both biases, clamp). */
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
            for (int t = 0; t < 2; t++) {
                gcase tc = { ms[mi], ns[ni], t ? 9 : 128, false, false, 1.0f, t ? 1.0f : 0.0f, t == 1, t == 0, t == 1,
                             true };
                check_case(&tc);
            }
    /* ... over several cache blocks of rows (128) and columns (512), whose
     * tiles go row by row: a partial last block and tile each way */
    for (int t = 0; t < 2; t++) {
        gcase tc = { 203, 1100, 64, false, false, 1.0f, t ? 1.0f : 0.0f, t == 1, t == 0, t == 1, true };
        check_case(&tc);
    }
}

static void test_gemm_epilogue(void **state)
{
    (void)state;
    rng_state = 2;
    for (int v = 0; v < 32; v++) {
        gcase tc = { 19, 45, 270, v & 1, false, (v & 2) ? 0.5f : 1.0f, (v & 4) ? 1.0f : (v & 8) ? -2.0f : 0.0f,
                     (v & 16) != 0, (v & 8) != 0, (v & 2) != 0, (v & 1) != 0 };
        check_case(&tc);
    }
    /* Packed A with every transpose. */
    for (int t = 0; t < 4; t++) {
        gcase tc = { 45, 67, 600, t & 1, (t >> 1) & 1, 1.0f, 0.0f, true, false, true, true };
        check_case(&tc);
    }
}

/* One column of B with packed A (the squeeze-excitation 1x1 convolutions):
 * the matrix-vector path of every kernel, rows around every panel height
 * (4, 6, 8), k around the unroll by 4 and across the 256-deep blocks, B a
 * column or (transposed) a row, with every part of the epilogue. */
static void test_gemm_one_column(void **state)
{
    (void)state;
    rng_state = 5;
    static const size_t ms[] = { 1, 5, 6, 7, 8, 13, 33, 130 };
    static const size_t ks[] = { 1, 3, 4, 5, 255, 256, 257, 600 };
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int v = 0; v < 4; v++) {
                gcase tc = { ms[mi], 1, ks[ki], false, v & 1, v & 2 ? 0.5f : 1.0f, v == 1 ? 1.0f : v == 3 ? -2.0f : 0.0f,
                             v != 0, v >= 2, v & 1, true };
                check_case(&tc);
            }
}

static void test_gemm_large(void **state)
{
    (void)state;
    rng_state = 3;
    /* Several cache blocks in each dimension, and conv-like shapes. */
    gcase big = { 140, 2100, 300, false, false, 1.0f, 0.0f, true, false, false, true };
    check_case(&big);
    gcase convlike = { 64, 3136 / 4, 147, false, false, 1.0f, 0.0f, true, false, true, true };
    check_case(&convlike);
    gcase tall = { 1000, 3, 64, false, true, 1.0f, 1.0f, false, true, false, false };
    check_case(&tall);
}

static void test_gemm_no_k(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_threads *th;
    TU_OK(gir_threads_new(1, &th, &err), &err);
    float c[6] = { 1, 2, 3, 4, 5, 6 };
    float bm[2] = { 10, 20 };
    gir_gemm_args g = { 0 };
    g.m = 2;
    g.n = 3;
    g.alpha = 1.0f;
    g.beta = 2.0f;
    g.c = c;
    g.ldc = 3;
    g.bias_m = bm;
    gir_sgemm(&g, th);
    float want[6] = { 12, 14, 16, 28, 30, 32 };
    assert_memory_equal(c, want, sizeof want);
    gir_threads_free(th);
}

/* B packed by the caller following gir_gemm_blayout gives the same bytes
 * as B packed by the GEMM. */
static void test_gemm_packed_b(void **state)
{
    (void)state;
    rng_state = 4;
    static const size_t shapes[][3] = { { 13, 70, 300 }, { 64, 33, 9 }, { 8, 1, 600 } };
    for (int isa = GIR_GEMM_GENERIC; isa < GIR_GEMM_ISA_COUNT_; isa++) {
        if (!gir_gemm_isa_supported((gir_gemm_isa)isa))
            continue;
        for (size_t si = 0; si < 3; si++) {
            size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
            float *a = malloc(m * k * sizeof(float)), *b = malloc(k * n * sizeof(float));
            float *c1 = malloc(m * n * sizeof(float)), *c2 = malloc(m * n * sizeof(float));
            for (size_t i = 0; i < m * k; i++)
                a[i] = frand();
            for (size_t i = 0; i < k * n; i++)
                b[i] = frand();
            gir_gemm_blayout l = gir_gemm_b_layout((gir_gemm_isa)isa);
            assert_int_equal(l.isa, isa);
            size_t npad = (n + l.nr - 1) / l.nr * l.nr;
            assert_int_equal(gir_gemm_packed_b_floats(&l, k, n), npad * k);
            float *pb = calloc(npad * k, sizeof(float));
            for (size_t kk = 0; kk < k; kk++)
                for (size_t j = 0; j < n; j++) {
                    size_t pc = kk / l.kc * l.kc, kcb = k - pc < l.kc ? k - pc : l.kc;
                    pb[pc * npad + (j / l.nr) * l.nr * kcb + (kk - pc) * l.nr + j % l.nr] = b[kk * n + j];
                }
            gir_error err = GIR_ERROR_INIT;
            gir_threads *th;
            TU_OK(gir_threads_new(2, &th, &err), &err);
            gir_gemm_args g = { 0 };
            g.m = m;
            g.n = n;
            g.k = k;
            g.alpha = 1.0f;
            g.a = a;
            g.lda = k;
            g.b = b;
            g.ldb = n;
            g.c = c1;
            g.ldc = n;
            g.isa = (gir_gemm_isa)isa;
            gir_sgemm(&g, th);
            g.b = NULL;
            g.packed_b = pb;
            g.c = c2;
            gir_sgemm(&g, th);
            assert_memory_equal(c1, c2, m * n * sizeof(float));
            gir_threads_free(th);
            free(a);
            free(b);
            free(c1);
            free(c2);
            free(pb);
        }
    }
}

static void count_worker(void *ctx, int w, int n)
{
    int *hits = ctx;
    hits[w] += n;
}

typedef struct chunk_seen {
    size_t chunk; /* the piece expected (a chunk of 0 is taken as 1) */
    int hits[101];
    int bad;      /* pieces not at a multiple of the chunk, of another length
                   * (but the last), or from no worker of the pool */
} chunk_seen;

static void chunk_worker(void *ctx, size_t u0, size_t u1, int worker)
{
    chunk_seen *s = ctx;
    if (worker < 0 || worker > 2 || u0 % s->chunk != 0 || (u1 - u0 != s->chunk && !(u1 == 101 && u1 - u0 < s->chunk)))
        __atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED);
    for (size_t u = u0; u < u1; u++)
        __atomic_fetch_add(&s->hits[u], 1, __ATOMIC_RELAXED);
}

/* gir_threads_shares over 101 units among 3 workers: shares [0, 34),
 * [34, 68), [68, 101). */
typedef struct share_seen {
    size_t piece;
    int by[101];  /* the worker that took each unit, +1 (0: none yet) */
    int hits[101];
    int bad;      /* pieces longer than the piece, across two shares, or from no worker of the pool */
    bool slow2;   /* worker 2 sleeps 2 ms in each of its pieces */
} share_seen;

static void share_worker(void *ctx, size_t u0, size_t u1, int worker)
{
    share_seen *s = ctx;
    size_t share_end = u0 < 34 ? 34 : u0 < 68 ? 68 : 101;
    if (worker < 0 || worker > 2 || u1 <= u0 || u1 - u0 > s->piece || u1 > share_end)
        __atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED);
    for (size_t u = u0; u < u1 && u < 101; u++) {
        __atomic_fetch_add(&s->hits[u], 1, __ATOMIC_RELAXED);
        s->by[u] = worker + 1;
    }
    if (s->slow2 && worker == 2)
        nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
}

typedef struct parts_seen {
    int job;
    int hits[200][3];
} parts_seen;

static void part_worker(void *ctx, int w, int n)
{
    parts_seen *s = ctx;
    if (n == 3 && w >= 0 && w < 3)
        __atomic_fetch_add(&s->hits[s->job][w], 1, __ATOMIC_RELAXED);
}

/* The CPU time the process takes (all its threads) while this one sleeps
 * for ms milliseconds. */
static double process_ms_over_pause(long ms)
{
    struct timespec c0, c1, pause = { ms / 1000, (ms % 1000) * 1000000L };
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    nanosleep(&pause, NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    return (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-6;
}

static void test_threads(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_threads *th;
    TU_FAILS(gir_threads_new(0, &th, &err), &err, GIR_E_ARGUMENT, "thread count 0 is outside 1..256");
    gir_error_clear(&err);
    TU_OK(gir_threads_new(3, &th, &err), &err);
    assert_int_equal(gir_threads_count(th), 3);
    int hits[3] = { 0, 0, 0 };
    for (int r = 0; r < 100; r++)
        gir_threads_run(th, count_worker, hits);
    assert_int_equal(hits[0], 300);
    assert_int_equal(hits[1], 300);
    assert_int_equal(hits[2], 300);
    assert_true(((uintptr_t)gir_threads_scratch(th, 2) & 63) == 0);

    /* Every part exactly once per job, also when the workers have gone to
     * sleep (a pause longer than their 2 ms spin before each tenth job),
     * where the caller runs the parts of workers that wake late, and when
     * every thread sleeps as soon as it waits (spin 0). */
    parts_seen *ps = calloc(1, sizeof *ps);
    assert_non_null(ps);
    for (int pass = 0; pass < 2; pass++) {
        gir_threads_set_spin(th, pass ? 0 : 2000);
        memset(ps, 0, sizeof *ps);
        for (ps->job = 0; ps->job < 200; ps->job++) {
            if (ps->job % 10 == 0)
                nanosleep(&(struct timespec){ 0, 8000000 }, NULL);
            gir_threads_run(th, part_worker, ps);
        }
        for (int j = 0; j < 200; j++)
            for (int w = 0; w < 3; w++)
                assert_int_equal(ps->hits[j][w], 1);
    }
    free(ps);
    gir_threads_set_spin(th, GIR_THREADS_SPIN_DEFAULT_US);

    /* Pieces from a shared counter: every unit exactly once, in pieces of
     * the chunk (the last one shorter), by workers of the pool. */
    for (size_t chunk = 0; chunk <= 8; chunk += 4) {
        chunk_seen seen = { chunk ? chunk : 1, { 0 }, 0 };
        gir_threads_chunks(th, 101, chunk, chunk_worker, &seen);
        for (int i = 0; i < 101; i++)
            assert_int_equal(seen.hits[i], 1);
        assert_int_equal(seen.bad, 0);
    }

    /* Shares: every unit exactly once, in pieces of at most the piece
     * within one worker's share; when worker 2 is slow, the others take
     * its share from the back, the last unit first (it sleeps 2 ms a piece:
     * its 33 units would take 66 ms alone). */
    for (int slow = 0; slow < 2; slow++) {
        share_seen *ss = calloc(1, sizeof *ss);
        assert_non_null(ss);
        ss->piece = slow ? 1 : 4;
        ss->slow2 = slow;
        gir_threads_shares(th, 101, ss->piece, share_worker, ss);
        for (int i = 0; i < 101; i++)
            assert_int_equal(ss->hits[i], 1);
        assert_int_equal(ss->bad, 0);
        if (slow) {
            int taken = 0;
            for (int i = 68; i < 101; i++)
                taken += ss->by[i] != 3;
            assert_true(taken > 0);
            assert_int_not_equal(ss->by[100], 3); /* the last is taken first */
        }
        free(ss);
    }
    gir_threads_free(th);

    /* One worker: every unit once, by worker 0. */
    TU_OK(gir_threads_new(1, &th, &err), &err);
    share_seen *one = calloc(1, sizeof *one);
    assert_non_null(one);
    one->piece = 8;
    gir_threads_shares(th, 101, 8, share_worker, one);
    for (int i = 0; i < 101; i++) {
        assert_int_equal(one->hits[i], 1);
        assert_int_equal(one->by[i], 1);
    }
    free(one);
    gir_threads_free(th);

    /* A worker in the middle of a long spin (an hour here) stops when the
     * spin time is set to 0: the process then takes (almost) no CPU time
     * over a pause, where the spinning worker took most of a CPU.  (A
     * worker does not spin on the caller's CPU: the jobs run until a pause
     * shows it spinning, which needs two CPUs.)  And freeing the pool stops
     * a spinning worker as fast as a sleeping one. */
    TU_OK(gir_threads_new(2, &th, &err), &err);
    gir_threads_set_spin(th, 3600u * 1000000u);
    bool spun = false;
    for (int i = 0; i < 20 && !spun; i++) {
        gir_threads_run(th, count_worker, hits);
        spun = process_ms_over_pause(100) > 50;
    }
    if (spun) {
        gir_threads_set_spin(th, 0);
        double cpu_ms = process_ms_over_pause(300);
        if (cpu_ms > 100)
            fail_msg("CPU time over a 300 ms pause after the spin was set to 0: %.1f ms", cpu_ms);
    } else {
        print_message("no spinning worker seen (one CPU?): its stop is not tested\n");
    }
    gir_threads_set_spin(th, 3600u * 1000000u);
    gir_threads_run(th, count_worker, hits);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gir_threads_free(th);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 5);

    /* Ranges: aligned parts covering [0, total) exactly once. */
    size_t b, e;
    gir_split_range(100, 8, 0, 3, &b, &e);
    assert_int_equal(b, 0);
    assert_int_equal(e, 40);
    gir_split_range(100, 8, 1, 3, &b, &e);
    assert_int_equal(b, 40);
    assert_int_equal(e, 72);
    gir_split_range(100, 8, 2, 3, &b, &e);
    assert_int_equal(b, 72);
    assert_int_equal(e, 100);
    gir_split_range(5, 8, 1, 2, &b, &e);
    assert_int_equal(b, 5);
    assert_int_equal(e, 5);
}

static void test_isa_names(void **state)
{
    (void)state;
    assert_string_equal(gir_gemm_isa_name(GIR_GEMM_GENERIC), "generic");
    assert_string_equal(gir_gemm_isa_name(GIR_GEMM_AVX512), "avx512");
    assert_true(gir_gemm_isa_supported(GIR_GEMM_GENERIC));
    assert_true(gir_gemm_isa_supported(gir_gemm_isa_best()));
    assert_false(gir_gemm_isa_supported(GIR_GEMM_ISA_COUNT_));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_edges),  cmocka_unit_test(test_gemm_epilogue), cmocka_unit_test(test_gemm_one_column), cmocka_unit_test(test_gemm_large),
        cmocka_unit_test(test_gemm_no_k),   cmocka_unit_test(test_threads),       cmocka_unit_test(test_isa_names),
        cmocka_unit_test(test_gemm_packed_b),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
