/* Blocked single-precision GEMM: driver, packing, portable kernel, dispatch. */
#include "gemm_impl.h"

#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- portable kernel: 4 x 8 with GCC vector extensions ---------------- */

typedef float v4f __attribute__((vector_size(16)));

#define GEN_MR 4
#define GEN_NR 8

static inline v4f v4f_load(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void kernel_generic(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t m, size_t n,
                           const gemm_ep *ep)
{
    v4f acc[GEN_MR][2];
    for (int r = 0; r < GEN_MR; r++)
        acc[r][0] = acc[r][1] = (v4f){ 0, 0, 0, 0 };
    for (size_t k = 0; k < kc; k++) {
        v4f b0 = v4f_load(b), b1 = v4f_load(b + 4);
        for (int r = 0; r < GEN_MR; r++) {
            v4f ar = { a[r], a[r], a[r], a[r] };
            acc[r][0] += ar * b0;
            acc[r][1] += ar * b1;
        }
        a += GEN_MR;
        b += GEN_NR;
    }
    float t[GEN_MR][GEN_NR];
    memcpy(t, acc, sizeof t);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float *p = &c[i * ldc + j];
            *p = gemm_ep_apply(ep, t[i][j], ep->beta != 0.0f ? *p : 0.0f, i, j);
        }
}

static void gemv_generic(size_t kc, const float *a, const float *x, size_t incx, float *acc)
{
    v4f s0 = v4f_load(acc), s1 = { 0, 0, 0, 0 };
    size_t k = 0;
    for (; k + 2 <= kc; k += 2, a += 2 * GEN_MR) {
        s0 += v4f_load(a) * x[k * incx];
        s1 += v4f_load(a + GEN_MR) * x[(k + 1) * incx];
    }
    for (; k < kc; k++, a += GEN_MR)
        s0 += v4f_load(a) * x[k * incx];
    s0 += s1;
    memcpy(acc, &s0, sizeof s0);
}

static const gemm_impl impl_generic = {
    GIR_GEMM_GENERIC, GEN_MR, GEN_NR, 128, 256, 1024, kernel_generic, NULL, NULL, gemv_generic,
};

/* ---- dispatch ---------------------------------------------------------- */

static bool cpu_has(gir_gemm_isa isa)
{
#ifdef GIR_GEMM_X86
    __builtin_cpu_init();
    switch (isa) {
    case GIR_GEMM_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case GIR_GEMM_AVX512:
        return __builtin_cpu_supports("avx512f");
    default:
        break;
    }
#endif
    return isa == GIR_GEMM_GENERIC || isa == GIR_GEMM_AUTO;
}

const char *gir_gemm_isa_name(gir_gemm_isa isa)
{
    switch (isa) {
    case GIR_GEMM_AUTO:
        return "auto";
    case GIR_GEMM_GENERIC:
        return "generic";
    case GIR_GEMM_AVX2:
        return "avx2";
    case GIR_GEMM_AVX512:
        return "avx512";
    default:
        return "?";
    }
}

bool gir_gemm_isa_supported(gir_gemm_isa isa)
{
    if ((unsigned)isa >= GIR_GEMM_ISA_COUNT_)
        return false;
    return cpu_has(isa);
}

gir_gemm_isa gir_gemm_isa_best(void)
{
    if (cpu_has(GIR_GEMM_AVX512))
        return GIR_GEMM_AVX512;
    if (cpu_has(GIR_GEMM_AVX2))
        return GIR_GEMM_AVX2;
    return GIR_GEMM_GENERIC;
}

gir_gemm_isa gir_gemm_isa_resolve(int isa)
{
    if (isa <= GIR_GEMM_AUTO || isa >= GIR_GEMM_ISA_COUNT_ || !cpu_has((gir_gemm_isa)isa))
        return gir_gemm_isa_best();
    return (gir_gemm_isa)isa;
}

static const gemm_impl *impl_for(gir_gemm_isa isa)
{
    switch (gir_gemm_isa_resolve(isa)) {
#ifdef GIR_GEMM_X86
    case GIR_GEMM_AVX512:
        return &gir_gemm_impl_avx512;
    case GIR_GEMM_AVX2:
        return &gir_gemm_impl_avx2;
#endif
    default:
        return &impl_generic;
    }
}

static const gemm_impl *const all_impls[] = {
    &impl_generic,
#ifdef GIR_GEMM_X86
    &gir_gemm_impl_avx2,
    &gir_gemm_impl_avx512,
#endif
};

bool gir_gemm_b_rows_ok(gir_gemm_isa isa)
{
    return impl_for(isa)->kernel_ub != NULL;
}

size_t gir_gemm_workspace_floats(void)
{
    size_t most = 0;
    for (size_t i = 0; i < sizeof all_impls / sizeof all_impls[0]; i++) {
        const gemm_impl *im = all_impls[i];
        size_t need = im->mc * im->kc + im->kc * im->nc;
        if (need > most)
            most = need;
    }
    return most;
}

/* ---- packing ------------------------------------------------------------ */

/* Packs rows [i0, i0+mc) x columns [p0, p0+kc) of op(A) into panels of mr
 * rows (k-major), zero-padding the last panel. */
static void pack_a(bool trans, const float *a, size_t lda, size_t m, size_t i0, size_t mc, size_t p0, size_t kc,
                   size_t mr, float *dst)
{
    for (size_t ir = 0; ir < mc; ir += mr) {
        size_t rows = mc - ir < mr ? mc - ir : mr;
        size_t i = i0 + ir;
        if (i + rows > m)
            rows = m > i ? m - i : 0;
        if (trans) {
            /* op(A)[i][k] = a[k*lda + i]: mr contiguous floats per k */
            for (size_t k = 0; k < kc; k++) {
                const float *src = a + (p0 + k) * lda + i;
                size_t r = 0;
                for (; r < rows; r++)
                    dst[r] = src[r];
                for (; r < mr; r++)
                    dst[r] = 0.0f;
                dst += mr;
            }
        } else {
            const float *src = a + i * lda + p0;
            if (rows == mr) {
                for (size_t k = 0; k < kc; k++)
                    for (size_t r = 0; r < mr; r++)
                        dst[k * mr + r] = src[r * lda + k];
            } else {
                for (size_t k = 0; k < kc; k++) {
                    size_t r = 0;
                    for (; r < rows; r++)
                        dst[k * mr + r] = src[r * lda + k];
                    for (; r < mr; r++)
                        dst[k * mr + r] = 0.0f;
                }
            }
            dst += kc * mr;
        }
    }
}

/* Packs rows [p0, p0+kc) x columns [j0, j0+nc) of op(B) into panels of nr
 * columns (b[k*nr + c]), zero-padding the last panel. */
static void pack_b(bool trans, const float *b, size_t ldb, size_t p0, size_t kc, size_t j0, size_t nc, size_t nr,
                   float *dst)
{
    size_t full = nc / nr * nr, rest = nc - full;
    if (!trans) {
        /* Row by row: the source streams contiguously, each row of nc
         * floats lands in nc/nr panels at k*nr. */
        for (size_t k = 0; k < kc; k++) {
            const float *src = b + (p0 + k) * ldb + j0;
            float *d = dst + k * nr;
            for (size_t jr = 0; jr < full; jr += nr)
                memcpy(d + jr * kc, src + jr, nr * sizeof(float));
            if (rest) {
                memcpy(d + full * kc, src + full, rest * sizeof(float));
                memset(d + full * kc + rest, 0, (nr - rest) * sizeof(float));
            }
        }
        return;
    }
    /* op(B)[k][j] = b[j*ldb + k] */
    for (size_t jr = 0; jr < nc; jr += nr) {
        size_t cols = nc - jr < nr ? nc - jr : nr;
        const float *src = b + (j0 + jr) * ldb + p0;
        for (size_t c = 0; c < cols; c++)
            for (size_t k = 0; k < kc; k++)
                dst[k * nr + c] = src[c * ldb + k];
        for (size_t c = cols; c < nr; c++)
            for (size_t k = 0; k < kc; k++)
                dst[k * nr + c] = 0.0f;
        dst += kc * nr;
    }
}

gir_gemm_blayout gir_gemm_b_layout(gir_gemm_isa isa)
{
    const gemm_impl *im = impl_for(isa);
    gir_gemm_blayout l = { im->isa, im->nr, im->kc };
    return l;
}

size_t gir_gemm_packed_b_floats(const gir_gemm_blayout *l, size_t k, size_t n)
{
    uint64_t npad = (n + l->nr - 1) / l->nr * l->nr, total;
    if (!gir_mul_u64(npad, k, &total) || total > SIZE_MAX / 8)
        return 0;
    return (size_t)total;
}

void gir_gemm_pack_b(const gir_gemm_blayout *l, bool trans_b, size_t k, size_t n, const float *b, size_t ldb,
                     float *dst)
{
    size_t npad = (n + l->nr - 1) / l->nr * l->nr;
    for (size_t pc = 0; pc < k; pc += l->kc) {
        size_t kc = k - pc < l->kc ? k - pc : l->kc;
        pack_b(trans_b, b, ldb, pc, kc, 0, n, l->nr, dst + pc * npad);
    }
}

gir_status gir_gemm_pack_a(gir_gemm_isa isa, bool trans_a, size_t m, size_t k, const float *a, size_t lda,
                           gir_gemm_packed *out, gir_error *err)
{
    memset(out, 0, sizeof *out);
    const gemm_impl *im = impl_for(isa);
    size_t mpad = (m + im->mr - 1) / im->mr * im->mr;
    uint64_t n;
    if (!gir_mul_u64(mpad, k ? k : 1, &n) || !gir_mul_u64(n, sizeof(float), &n) || n > SIZE_MAX / 2)
        return gir_fail(err, GIR_E_LIMIT, "matrix of %zu x %zu is too large to pack", m, k);
    float *data;
    if (posix_memalign((void **)&data, 64, (size_t)n) != 0)
        return gir_nomem(err);
    /* Block pc holds all mpad rows of columns [pc, pc+kc) as mr-row panels. */
    for (size_t pc = 0; pc < k; pc += im->kc) {
        size_t kc = k - pc < im->kc ? k - pc : im->kc;
        pack_a(trans_a, a, lda, m, 0, mpad, pc, kc, im->mr, data + pc * mpad);
    }
    out->isa = im->isa;
    out->m = m;
    out->k = k;
    out->data = data;
    return GIR_OK;
}

void gir_gemm_packed_free(gir_gemm_packed *p)
{
    if (p) {
        free(p->data);
        p->data = NULL;
    }
}

/* ---- driver --------------------------------------------------------------- */

typedef struct gemm_job {
    const gir_gemm_args *g;
    const gemm_impl *im;
    gir_threads *th;
    bool split_n;
} gemm_job;

/* C's rows [i0, i1) x columns [j0, j1) on one worker. */
static void gemm_block(const gir_gemm_args *g, const gemm_impl *im, size_t i0, size_t i1, size_t j0, size_t j1,
                       float *ws)
{
    const size_t MR = im->mr, NR = im->nr, MC = im->mc, KC = im->kc, NC = im->nc;
    const size_t K = g->k;
    float *pa = ws, *pb_ws = ws + MC * KC;
    const float *pb;
    size_t mpad = 0, npad = (g->n + NR - 1) / NR * NR;
    if (g->packed_a)
        mpad = (g->m + MR - 1) / MR * MR;
    /* A row-major and unpacked: the kernel reads it in place */
    bool direct_a = !g->packed_a && !g->trans_a && im->kernel_ua;
    /* A packed (weights), B row-major and short (K <= 128, M <= 256: each B
     * panel serves few rows, so packing it costs about as much as the
     * product, as in pointwise convolutions): B read in place.  Longer or
     * wider products keep the packed panels, whose sequential reads win. */
    bool direct_b = g->packed_a && !g->packed_b && !g->trans_b && im->kernel_ub &&
                    ((K <= 128 && g->m <= 256) || g->b_rows);
    for (size_t jc = j0; jc < j1; jc += NC) {
        size_t nc = j1 - jc < NC ? j1 - jc : NC;
        for (size_t pc = 0; pc < K; pc += KC) {
            size_t kc = K - pc < KC ? K - pc : KC;
            bool first = pc == 0, last = pc + kc == K;
            if (g->packed_b) {
                pb = g->packed_b + pc * npad + jc * kc; /* jc is a multiple of NR */
            } else if (direct_b) {
                pb = NULL;
            } else {
                pack_b(g->trans_b, g->b, g->ldb, pc, kc, jc, nc, NR, pb_ws);
                pb = pb_ws;
            }
            gemm_ep ep = { g->alpha, first ? g->beta : 1.0f, NULL, NULL, last && g->clamp, g->lo, g->hi,
                           g->c_wide, g->c_keep, 0 };
            for (size_t ic = i0; ic < i1; ic += MC) {
                size_t mc = i1 - ic < MC ? i1 - ic : MC;
                const float *ablk;
                if (g->packed_a) {
                    ablk = g->packed_a->data + pc * mpad + ic * kc;
                } else if (direct_a) {
                    ablk = NULL;
                } else {
                    pack_a(g->trans_a, g->a, g->lda, g->m, ic, mc, pc, kc, MR, pa);
                    ablk = pa;
                }
                /* The register tiles down each column strip (B's strip
                 * stays in L1 for all mc rows), or, with B read in place
                 * (pointwise convolutions), MR rows at a time along the
                 * columns: C (added to, or written) is then read and
                 * written along a few rows at once, which the hardware
                 * prefetches, rather than 128 bytes in each of mc rows */
                bool by_rows = direct_b && !g->b_rows && !g->c_wide;
                size_t tm = (mc + MR - 1) / MR, tn = (nc + NR - 1) / NR;
                for (size_t o = 0; o < (by_rows ? tm : tn); o++)
                    for (size_t i = 0; i < (by_rows ? tn : tm); i++) {
                        size_t ir = (by_rows ? o : i) * MR, jr = (by_rows ? i : o) * NR;
                        size_t m = mc - ir < MR ? mc - ir : MR, n = nc - jr < NR ? nc - jr : NR;
                        const float *bp = !direct_b ? pb + jr * kc
                                          : g->b_rows ? g->b + jc + jr
                                                      : g->b + pc * g->ldb + jc + jr;
                        ep.bias_n = last && g->bias_n ? g->bias_n + jc + jr : NULL;
                        ep.bias_m = last && g->bias_m ? g->bias_m + ic + ir : NULL;
                        float *ct = g->c + (ic + ir) * g->ldc + (g->c_wide ? 0 : jc + jr);
                        ep.q0 = jc + jr;
                        if (direct_b)
                            im->kernel_ub(kc, ablk + ir * kc, bp, g->ldb, g->b_rows ? g->b_rows + pc : NULL, ct,
                                          g->ldc, m, n, &ep);
                        else if (direct_a)
                            im->kernel_ua(kc, g->a + (ic + ir) * g->lda + pc, g->lda, bp, ct, g->ldc, m, n, &ep);
                        else
                            im->kernel(kc, ablk + ir * kc, bp, ct, g->ldc, m, n, &ep);
                    }
            }
        }
    }
}

/* Register tiles [u0, u1) along the split dimension, handed out by
 * gir_threads_chunks (rows) or gir_threads_shares (columns): each
 * element of C sums over k in the same order whichever piece it falls in. */
static void gemm_tiles(void *ctx, size_t u0, size_t u1, int w)
{
    const gemm_job *job = ctx;
    const gir_gemm_args *g = job->g;
    size_t tile = job->split_n ? job->im->nr : job->im->mr, len = job->split_n ? g->n : g->m;
    size_t b = u0 * tile, e = u1 * tile < len ? u1 * tile : len;
    float *ws = gir_threads_scratch(job->th, w);
    if (job->split_n)
        gemm_block(g, job->im, 0, g->m, b, e, ws);
    else
        gemm_block(g, job->im, b, e, 0, g->n, ws);
}

/* ---- one row of C (batch-1 dense layers): memory bound, no packing ------- */

static float dot_v4(const float *x, const float *y, size_t n)
{
    v4f s0 = { 0, 0, 0, 0 }, s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 += v4f_load(x + i) * v4f_load(y + i);
        s1 += v4f_load(x + i + 4) * v4f_load(y + i + 4);
        s2 += v4f_load(x + i + 8) * v4f_load(y + i + 8);
        s3 += v4f_load(x + i + 12) * v4f_load(y + i + 12);
    }
    v4f s = (s0 + s1) + (s2 + s3);
    float r = (s[0] + s[1]) + (s[2] + s[3]);
    for (; i < n; i++)
        r += x[i] * y[i];
    return r;
}

/* Four dot products of x with rows y, y + ldy, y + 2 ldy, y + 3 ldy: x is
 * loaded once for the four (the weights stream from memory four rows at a
 * time, which keeps more of the memory bus busy than one row). */
static void dot4_v4(const float *x, const float *y, size_t ldy, size_t n, float *out)
{
    v4f s0 = { 0, 0, 0, 0 }, s1 = s0, s2 = s0, s3 = s0;
    const float *y1 = y + ldy, *y2 = y1 + ldy, *y3 = y2 + ldy;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f xv = v4f_load(x + i);
        s0 += xv * v4f_load(y + i);
        s1 += xv * v4f_load(y1 + i);
        s2 += xv * v4f_load(y2 + i);
        s3 += xv * v4f_load(y3 + i);
    }
    float r[4] = { (s0[0] + s0[1]) + (s0[2] + s0[3]), (s1[0] + s1[1]) + (s1[2] + s1[3]),
                   (s2[0] + s2[1]) + (s2[2] + s2[3]), (s3[0] + s3[1]) + (s3[2] + s3[3]) };
    for (; i < n; i++) {
        r[0] += x[i] * y[i];
        r[1] += x[i] * y1[i];
        r[2] += x[i] * y2[i];
        r[3] += x[i] * y3[i];
    }
    memcpy(out, r, sizeof r);
}

/* y = a row times op(B) (m == 1), columns [j0, j1): compiled portable and,
 * on x86-64, for AVX-512 with 16-lane dot products. */
#define GEMV_BODY(NAME, ATTR, DOT, DOT4)                                                                                     \
    ATTR static void NAME(const gir_gemm_args *g, size_t j0, size_t j1)                                             \
{                                                                                                                   \
    gemm_ep ep = { g->alpha, g->beta, g->bias_m, NULL, g->clamp, g->lo, g->hi };                                    \
    const float *a = g->a; /* one row of op(A): contiguous unless transposed */                                     \
    size_t sa = g->trans_a ? g->lda : 1;                                                                            \
    if (g->trans_b) {                                                                                               \
        /* op(B)[k][j] = b[j*ldb + k]: one dot product per column, four at a                                      \
         * time while four remain (which columns go four at a time does not                                          \
         * depend on the split: parts start at multiples of 16) */                                                  \
        float acc4[4];                                                                                              \
        for (size_t j = j0; j < j1; j++) {                                                                          \
            float acc;                                                                                              \
            if (sa == 1 && (j - j0) % 4 == 0 && j + 4 <= j1)                                                        \
                DOT4(a, g->b + j * g->ldb, g->ldb, g->k, acc4);                                                     \
            if (sa == 1 && j + 4 - (j - j0) % 4 <= j1) {                                                            \
                acc = acc4[(j - j0) % 4];                                                                           \
            } else if (sa == 1) {                                                                                   \
                acc = DOT(a, g->b + j * g->ldb, g->k);                                                           \
            } else {                                                                                                \
                acc = 0.0f;                                                                                         \
                for (size_t k = 0; k < g->k; k++)                                                                   \
                    acc += a[k * sa] * g->b[j * g->ldb + k];                                                        \
            }                                                                                                       \
            gemm_ep e = ep;                                                                                         \
            e.bias_n = g->bias_n ? g->bias_n + j : NULL;                                                            \
            float *p = &g->c[j];                                                                                    \
            *p = gemm_ep_apply(&e, acc, g->beta != 0.0f ? *p : 0.0f, 0, 0);                                         \
        }                                                                                                           \
        return;                                                                                                     \
    }                                                                                                               \
    /* op(B) rows are contiguous: accumulate a[k] * B[k, j0..j1) in blocks */                                       \
    enum { BLK = 512 };                                                                                             \
    float acc[BLK];                                                                                                 \
    for (size_t jb = j0; jb < j1; jb += BLK) {                                                                      \
        size_t nb = j1 - jb < BLK ? j1 - jb : BLK;                                                                  \
        for (size_t j = 0; j < nb; j++)                                                                             \
            acc[j] = 0.0f;                                                                                          \
        for (size_t k = 0; k < g->k; k++) {                                                                         \
            const float av = a[k * sa];                                                                             \
            const float *br = g->b + k * g->ldb + jb;                                                               \
            for (size_t j = 0; j < nb; j++)                                                                         \
                acc[j] += av * br[j];                                                                               \
        }                                                                                                           \
        gemm_ep e2 = ep;                                                                                            \
        e2.bias_n = g->bias_n ? g->bias_n + jb : NULL;                                                              \
        for (size_t j = 0; j < nb; j++) {                                                                           \
            float *p = &g->c[jb + j];                                                                               \
            *p = gemm_ep_apply(&e2, acc[j], g->beta != 0.0f ? *p : 0.0f, 0, j);                                     \
        }                                                                                                           \
    }                                                                                                               \
}

GEMV_BODY(gemv_cols, , dot_v4, dot4_v4)

#ifdef GIR_GEMM_X86
#include <immintrin.h>

typedef float v16f __attribute__((vector_size(64)));

__attribute__((target("avx512f"))) static float dot_avx512(const float *x, const float *y, size_t n)
{
    v16f s0 = { 0 }, s1 = s0, s2 = s0, s3 = s0, a, b;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        for (int u = 0; u < 4; u++) {
            memcpy(&a, x + i + 16 * u, sizeof a);
            memcpy(&b, y + i + 16 * u, sizeof b);
            if (u == 0)
                s0 += a * b;
            else if (u == 1)
                s1 += a * b;
            else if (u == 2)
                s2 += a * b;
            else
                s3 += a * b;
        }
    }
    for (; i + 16 <= n; i += 16) {
        memcpy(&a, x + i, sizeof a);
        memcpy(&b, y + i, sizeof b);
        s0 += a * b;
    }
    v16f s = (s0 + s1) + (s2 + s3);
    float r = 0.0f;
    for (int l = 0; l < 16; l++)
        r += s[l];
    for (; i < n; i++)
        r += x[i] * y[i];
    return r;
}

__attribute__((target("avx512f"))) static void dot4_avx512(const float *x, const float *y, size_t ldy, size_t n,
                                                           float *out)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float *y1 = y + ldy, *y2 = y1 + ldy, *y3 = y2 + ldy;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
        s0 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, y + i), s0);
        s1 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, y1 + i), s1);
        s2 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, y2 + i), s2);
        s3 = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(m, y3 + i), s3);
    }
    out[0] = _mm512_reduce_add_ps(s0);
    out[1] = _mm512_reduce_add_ps(s1);
    out[2] = _mm512_reduce_add_ps(s2);
    out[3] = _mm512_reduce_add_ps(s3);
}

GEMV_BODY(gemv_cols_avx512, __attribute__((target("avx512f"))), dot_avx512, dot4_avx512)

__attribute__((target("avx2,fma"))) static void dot4_avx2(const float *x, const float *y, size_t ldy, size_t n,
                                                          float *out)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float *y1 = y + ldy, *y2 = y1 + ldy, *y3 = y2 + ldy;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i);
        s0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y + i), s0);
        s1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y1 + i), s1);
        s2 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y2 + i), s2);
        s3 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(y3 + i), s3);
    }
    float r[4][8];
    _mm256_storeu_ps(r[0], s0);
    _mm256_storeu_ps(r[1], s1);
    _mm256_storeu_ps(r[2], s2);
    _mm256_storeu_ps(r[3], s3);
    for (int c = 0; c < 4; c++) {
        const float *yc = y + (size_t)c * ldy;
        float t = ((r[c][0] + r[c][1]) + (r[c][2] + r[c][3])) + ((r[c][4] + r[c][5]) + (r[c][6] + r[c][7]));
        for (size_t k = i; k < n; k++)
            t += x[k] * yc[k];
        out[c] = t;
    }
}

GEMV_BODY(gemv_cols_avx2, __attribute__((target("avx2,fma"))), dot_v4, dot4_avx2)
#endif

typedef struct gemv_job {
    const gir_gemm_args *g;
    void (*fn)(const gir_gemm_args *g, size_t j0, size_t j1);
} gemv_job;

static void gemv_worker(void *ctx, int w, int nw)
{
    const gemv_job *j = ctx;
    size_t b, e;
    gir_split_range(j->g->n, 16, w, nw, &b, &e);
    if (b < e)
        j->fn(j->g, b, e);
}

typedef struct gemv_packed_job {
    const gir_gemm_args *g;
    const gemm_impl *im;
} gemv_packed_job;

/* One column of C (n == 1) from packed A, row panels [p0, p1): each row's
 * sum runs over k in the same order whoever computes it. */
static void gemv_packed_panels(const gir_gemm_args *g, const gemm_impl *im, size_t p0, size_t p1)
{
    const size_t MR = im->mr, K = g->k, mpad = (g->m + MR - 1) / MR * MR;
    const size_t incx = g->trans_b ? 1 : g->ldb;
    const gemm_ep ep = { g->alpha, g->beta, g->bias_m, g->bias_n, g->clamp, g->lo, g->hi };
    for (size_t p = p0; p < p1; p++) {
        float acc[16] = { 0 };
        for (size_t pc = 0; pc < K; pc += im->kc) {
            size_t kc = K - pc < im->kc ? K - pc : im->kc;
            im->gemv(kc, g->packed_a->data + pc * mpad + p * MR * kc, g->b + pc * incx, incx, acc);
        }
        for (size_t r = 0; r < MR && p * MR + r < g->m; r++) {
            size_t i = p * MR + r;
            float *c = &g->c[i * g->ldc];
            *c = gemm_ep_apply(&ep, acc[r], g->beta != 0.0f ? *c : 0.0f, i, 0);
        }
    }
}

/* Panels [p0, p1), pieces from a shared counter (gir_threads_chunks): a
 * worker on a slower CPU takes fewer of them. */
static void gemv_packed_pieces(void *ctx, size_t p0, size_t p1, int worker)
{
    (void)worker;
    const gemv_packed_job *j = ctx;
    gemv_packed_panels(j->g, j->im, p0, p1);
}

/* k == 0: C = beta*C + biases, clamped. */
static void gemm_no_k(const gir_gemm_args *g)
{
    gemm_ep ep = { g->alpha, g->beta, g->bias_m, g->bias_n, g->clamp, g->lo, g->hi, 0, 0, 0 };
    for (size_t i = 0; i < g->m; i++)
        for (size_t j = 0; j < g->n; j++) {
            float *p = &g->c[i * g->ldc + j];
            *p = gemm_ep_apply(&ep, 0.0f, g->beta != 0.0f ? *p : 0.0f, i, j);
        }
}

/* th NULL: serially, in ws. */
static void sgemm(const gir_gemm_args *g, gir_threads *th, float *ws)
{
    if (g->m == 0 || g->n == 0)
        return;
    if (g->k == 0) {
        gemm_no_k(g);
        return;
    }
    if (g->m == 1 && !g->packed_a && !g->packed_b) {
        gemv_job gj = { g, gemv_cols };
#ifdef GIR_GEMM_X86
        gir_gemm_isa isa = gir_gemm_isa_resolve(g->isa);
        if (isa == GIR_GEMM_AVX512)
            gj.fn = gemv_cols_avx512;
        else if (isa == GIR_GEMM_AVX2)
            gj.fn = gemv_cols_avx2;
#endif
        if (th && gir_threads_count(th) > 1 && (double)g->n * (double)g->k >= 65536.0)
            gir_threads_run(th, gemv_worker, &gj);
        else
            gj.fn(g, 0, g->n);
        return;
    }
    const gemm_impl *im = g->packed_a ? impl_for(g->packed_a->isa) : impl_for(g->isa);
    if (g->n == 1 && g->packed_a && !g->packed_b && !g->b_rows && im->gemv && im->mr <= 16) {
        gemv_packed_job gj = { g, im };
        size_t panels = (g->m + im->mr - 1) / im->mr;
        if (th && gir_threads_count(th) > 1 && (double)g->m * (double)g->k >= 65536.0)
            gir_threads_chunks(th, panels, panels / (8 * (size_t)gir_threads_count(th)), gemv_packed_pieces, &gj);
        else
            gemv_packed_panels(g, im, 0, panels);
        return;
    }
    gemm_job job = { g, im, th, false };
    int nw = th ? gir_threads_count(th) : 1;
    double work = (double)g->m * (double)g->n * (double)g->k;
    if (nw == 1 || work < 65536.0) {
        gemm_block(g, im, 0, g->m, 0, g->n, th ? gir_threads_scratch(th, 0) : ws);
        return;
    }
    /* Split the dimension that gives each worker whole, full tiles. */
    size_t units_n = (g->n + im->nr - 1) / im->nr, units_m = (g->m + im->mr - 1) / im->mr;
    job.split_n = units_n >= (size_t)nw * 4 || units_n >= units_m;
    size_t units = job.split_n ? units_n : units_m;
    /* pieces of a quarter of a worker's share; half when split by rows,
     * where each piece packs all of B again */
    size_t piece = units / ((job.split_n ? 4 : 2) * (size_t)nw);
    if (job.split_n) {
        /* columns (a convolution's pixels) in shares: each worker starts
         * on the columns it packed and writes the same pixels in every
         * convolution, rather than whichever pieces the shared counter
         * hands it (ResNet-50 with two threads, bench_ort twice each way:
         * 34.8 / 30.0 ms from the counter, 30.6 / 29.1 in shares), and
         * a worker done first takes what a slower one has not reached */
        gir_threads_shares(th, units, piece, gemm_tiles, &job);
        return;
    }
    gir_threads_chunks(th, units, piece, gemm_tiles, &job);
}

void gir_sgemm(const gir_gemm_args *g, gir_threads *th)
{
    sgemm(g, th, NULL);
}

void gir_sgemm_serial(const gir_gemm_args *g, float *workspace)
{
    sgemm(g, NULL, workspace);
}
