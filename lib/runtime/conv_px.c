/* Direct convolution by output pixels (conv_px.h).
 *
 * Work items are (chunk of pixels, block of 64 output channels).  Within
 * an item, the sum over the K taps runs in blocks of KB taps (whose
 * weights, KB x 64 floats, stay in L1), each over every tile of PX
 * pixels: 24 accumulators, per tap 4 weight loads and PX broadcasts of
 * input values for 24 FMAs.  The partial sums live in the worker's
 * scratch as [pixel][64] and are carried from one block of taps to the
 * next, so each lane sums its taps in order, one FMA after another.  The
 * epilogue transposes 16 pixels x 16 channels at a time in registers, adds
 * the bias (and the residual), clamps, and stores each channel's 16
 * pixels in its row of the output. */
#include "conv_px.h"

#include "gemm.h"
#include "simd512.h"

#include <stdlib.h>

#define PX 6       /* pixels per tile */
#define NB 64      /* output channels per block (4 vectors) */
#define KB 128     /* taps per block */
#define CHUNK 240  /* pixels per work item, at most (a multiple of PX and of 16) */

struct rt_convpx {
    size_t M, K, blocks;
    float *w; /* [block][K][NB]: the weights transposed, zero past M */
};

void rt_convpx_free(rt_convpx *p)
{
    if (!p)
        return;
    free(p->w);
    free(p);
}

gir_status rt_convpx_new(const float *w, size_t M, size_t K, rt_convpx **out, gir_error *err)
{
    *out = NULL;
    rt_convpx *p = calloc(1, sizeof *p);
    if (!p)
        return gir_nomem(err);
    p->M = M;
    p->K = K;
    p->blocks = (M + NB - 1) / NB;
    uint64_t n;
    if (!gir_mul_u64((uint64_t)p->blocks * NB, K ? K : 1, &n) || n > SIZE_MAX / 2 / sizeof(float) ||
        posix_memalign((void **)&p->w, 64, (size_t)n * sizeof(float)) != 0) {
        free(p);
        return gir_nomem(err);
    }
    for (size_t b = 0; b < p->blocks; b++)
        for (size_t k = 0; k < K; k++) {
            float *d = p->w + (b * K + k) * NB;
            for (size_t j = 0; j < NB; j++) {
                size_t m = b * NB + j;
                d[j] = m < M ? w[m * K + k] : 0.0f;
            }
        }
    *out = p;
    return GIR_OK;
}

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define TGT __attribute__((target("avx512f")))

bool rt_convpx_available(void)
{
    return gir_gemm_isa_resolve(GIR_GEMM_AUTO) == GIR_GEMM_AVX512;
}

/* One tile: kc taps of PX pixels (input bases px[i]) into nv vectors of
 * channels; the sums start at zero or at what yt holds. */
TGT static inline __attribute__((always_inline)) void tile(size_t kc, const float *w, const float *const *px,
                                                           const ptrdiff_t *koff, float *yt, bool carry,
                                                           const float *pf, size_t npf, int nv)
{
    __m512 acc[PX][4];
    for (int i = 0; i < PX; i++)
        for (int j = 0; j < nv; j++)
            acc[i][j] = carry ? _mm512_load_ps(yt + i * NB + j * 16) : _mm512_setzero_ps();
    const float *pp[PX];
    for (int i = 0; i < PX; i++)
        pp[i] = px[i];
    for (size_t k = 0; k < kc; k++, w += NB) {
        ptrdiff_t o = koff[k];
        __m512 wv[4];
        for (int j = 0; j < nv; j++)
            wv[j] = _mm512_load_ps(w + j * 16);
        if (k < npf) /* the next weights, into L2, while these are summed */
            for (int j = 0; j < 4; j++)
                _mm_prefetch((const char *)(pf + k * NB + j * 16), _MM_HINT_T1);
        /* one broadcast live at a time: 24 sums, 4 weights and 1 input
         * value fit the 32 registers (six broadcasts first spilled two
         * sums to the stack, a store and a load per tap) */
#pragma GCC unroll 6
        for (int i = 0; i < PX; i++) {
            __m512 x = _mm512_set1_ps(pp[i][o]);
            for (int j = 0; j < nv; j++)
                acc[i][j] = _mm512_fmadd_ps(x, wv[j], acc[i][j]);
        }
    }
    for (int i = 0; i < PX; i++)
        for (int j = 0; j < nv; j++)
            _mm512_store_ps(yt + i * NB + j * 16, acc[i][j]);
}

/* The tile for 4, 3, 2 or 1 vectors of channels. */
#define TILE_NV(NV)                                                                                            \
    TGT static void tile##NV(size_t kc, const float *w, const float *const *px, const ptrdiff_t *koff, float *yt, \
                             bool carry, const float *pf, size_t npf)                                         \
    {                                                                                                          \
        tile(kc, w, px, koff, yt, carry, pf, npf, NV);                                                         \
    }
TILE_NV(4)
TILE_NV(3)
TILE_NV(2)
TILE_NV(1)
#undef TILE_NV

typedef void (*tile_fn)(size_t, const float *, const float *const *, const ptrdiff_t *, float *, bool, const float *,
                        size_t);

typedef struct px_job {
    const rt_convpx *p;
    const rt_convpx_args *a;
    gir_threads *th;
    size_t P, chunks, cq; /* cq: pixels per chunk, at most CHUNK */
} px_job;

/* Channels [m0, m0 + nm) of pixels [q0, q0 + nq) from yt ([pixel][NB])
 * into y, with the bias, the residual and the clamp: blocks of 16 pixels x
 * 16 channels transposed in registers, each channel's 16 pixels stored as
 * one row piece. */
TGT static void epilogue(const rt_convpx_args *a, size_t P, float *yt, size_t m0, size_t nm, size_t q0,
                         size_t nq)
{
    bool clamp = a->act && a->act->on && a->act->kind == RT_ACT_CLAMP;
    bool post = a->act && a->act->on && !clamp;
    bool tiled = post && !a->accumulate; /* the activation over the whole tile, before the transposes */
    if (tiled) {
        __m512 bv[NB / 16];
        for (size_t v = 0; v < NB / 16; v++) {
            size_t m = m0 + v * 16, n = m < m0 + nm ? m0 + nm - m : 0;
            bv[v] = a->bias ? _mm512_maskz_loadu_ps(rt_mask16(n), a->bias + m)
                            : _mm512_setzero_ps();
        }
        for (size_t q = 0; q < nq; q++)
            for (size_t v = 0; v < NB / 16; v++)
                _mm512_store_ps(yt + q * NB + v * 16, _mm512_add_ps(_mm512_load_ps(yt + q * NB + v * 16), bv[v]));
        rt_act_map(a->act, yt, yt, nq * NB);
    }
    __m512 lo = _mm512_set1_ps(clamp ? a->act->lo : 0.0f), hi = _mm512_set1_ps(clamp ? a->act->hi : 0.0f);
    for (size_t q = 0; q < nq; q += 16) {
        size_t n = nq - q < 16 ? nq - q : 16;
        __mmask16 mk = rt_mask16(n);
        for (size_t jb = 0; jb < nm; jb += 16) {
            size_t nc = nm - jb < 16 ? nm - jb : 16;
            __m512 r[16];
            for (size_t i = 0; i < 16; i++)
                r[i] = i < n ? _mm512_load_ps(yt + (q + i) * NB + jb) : _mm512_setzero_ps();
            rt_tr16(r); /* r[c]: channel m0 + jb + c at the 16 pixels */
            for (size_t c = 0; c < nc; c++) {
                float *yr = a->y + (m0 + jb + c) * P + q0 + q;
                __m512 v = r[c];
                if (a->bias && !tiled)
                    v = _mm512_add_ps(v, _mm512_set1_ps(a->bias[m0 + jb + c]));
                if (a->accumulate)
                    v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, yr));
                if (clamp) /* max/min return the second operand on NaN: NaN stays */
                    v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
                _mm512_mask_storeu_ps(yr, mk, v);
            }
        }
    }
    if (post && !tiled)
        for (size_t j = 0; j < nm; j++) {
            float *yr = a->y + (m0 + j) * P + q0;
            rt_act_map(a->act, yr, yr, nq);
        }
}

TGT static void px_items(void *ctx, size_t i0, size_t i1, int worker)
{
    const px_job *j = ctx;
    const rt_convpx *p = j->p;
    const rt_convpx_args *a = j->a;
    float *yt = gir_threads_scratch(j->th, worker);
    for (size_t it = i0; it < i1; it++) {
        size_t blk = it / j->chunks, ch = it % j->chunks;
        size_t q0 = ch * j->cq, nq = j->P - q0 < j->cq ? j->P - q0 : j->cq;
        size_t m0 = blk * NB, nm = p->M - m0 < NB ? p->M - m0 : NB;
        tile_fn fn = nm > 48 ? tile4 : nm > 32 ? tile3 : nm > 16 ? tile2 : tile1;
        const float *wb = p->w + blk * p->K * NB;
        /* where each pixel's taps start in the planes, once for all blocks
         * of taps; past the end of a partial tile: the last pixel again */
        const float *base[CHUNK];
        for (size_t t = 0; t < (nq + PX - 1) / PX * PX; t++) {
            size_t q = q0 + (t < nq ? t : nq - 1);
            base[t] = a->planes + q / a->OW * a->dPW + q % a->OW;
        }
        for (size_t k0 = 0; k0 < p->K; k0 += KB) {
            size_t kc = p->K - k0 < KB ? p->K - k0 : KB;
            /* the first tile fetches the next kc taps' weights (the next
             * block's when this one ends: they follow in memory), which
             * come from memory in a model, not from cache */
            size_t after = (p->blocks - blk) * p->K - k0 - kc, npf = after < kc ? after : kc;
            const float *pf = npf ? wb + (k0 + kc) * NB : wb;
            for (size_t t = 0; t < nq; t += PX)
                fn(kc, wb + k0 * NB, base + t, a->koff + k0, yt + t * NB, k0 > 0, pf, t == 0 ? npf : 0);
        }
        epilogue(a, j->P, yt, m0, nm, q0, nq);
    }
}

void rt_convpx_run(const rt_convpx *p, const rt_convpx_args *a, gir_threads *th)
{
    px_job j = { p, a, th, a->OH * a->OW, 0, CHUNK };
    j.chunks = (j.P + CHUNK - 1) / CHUNK;
    /* With several workers and few items (7x7 and 14x14 maps), smaller
     * chunks of pixels: splitting the channel blocks instead had every
     * worker read all of the input (EfficientNet's 672 -> 112 at 14x14:
     * slower with two threads than with one).  Each pixel's sums are the
     * same whatever the chunk. */
    size_t nt = th ? (size_t)gir_threads_count(th) : 1, want = 4 * nt;
    if (nt > 1 && j.chunks * p->blocks < want) {
        size_t chunks = (want + p->blocks - 1) / p->blocks, cq = (j.P + chunks - 1) / chunks;
        cq = (cq + PX - 1) / PX * PX;
        j.cq = cq < 4 * PX ? 4 * PX : cq > CHUNK ? CHUNK : cq;
        j.chunks = (j.P + j.cq - 1) / j.cq;
    }
    rt_parallel_for(th, j.chunks * p->blocks, 1, 1, px_items, &j);
}

#else

bool rt_convpx_available(void)
{
    return false;
}

void rt_convpx_run(const rt_convpx *p, const rt_convpx_args *a, gir_threads *th)
{
    (void)p;
    (void)a;
    (void)th;
}

#endif
