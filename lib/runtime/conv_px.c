/* Direct convolution by output pixels (conv_px.h).
 *
 * The output channels are split into blocks of at most 4 vectors (64
 * channels), as even as they come (144 channels: 3 blocks of 3 vectors,
 * not 4 + 4 + 1).  Work items are (chunk of pixels, block).  Within an
 * item, the sum over the K taps runs in blocks of taps whose weights (at
 * most 40 KiB: 160 taps of 64 channels, 640 of 16) stay in L1, each over
 * every tile of pixels:
 * 24 accumulators (6 pixels x 4 vectors, 8 x 3, 12 x 2 or 12 x 1), per tap
 * a weight load per vector and a broadcast of an input value per pixel.
 * The partial sums live in the worker's scratch as [pixel][channels of the
 * block] and are carried from one block of taps to the next, so each lane
 * sums its taps in order, one FMA after another.  The epilogue transposes
 * 16 pixels x 16 channels at a time in registers, adds the bias (and the
 * residual), clamps, and stores each channel's 16 pixels in its row of the
 * output; or, for an output in channel blocks, stores each pixel's vectors
 * as they are. */
#include "conv_px.h"

#include "gemm.h"
#include "simd512.h"

#include <stdlib.h>

#define NVMAX 4    /* vectors of 16 channels per block, at most */
/* A block of taps' weights, at most (40 KiB; L1 holds 48).  Blocks of 128
 * taps whatever the channels split ResNet's 7x7 stem (147 taps) and
 * RegNet's 16-channel groups (144) into 128 + 19 and 128 + 16, each tile's
 * sums stored and loaded again for the short rest, and kept the tiles
 * from storing into channel blocks themselves: in one block, the
 * ResNet-18 stem with its pooling takes 0.87 of the time with one thread,
 * 0.90 with two. */
#define KB_FLOATS 10240
#define CHUNK 240  /* pixels per work item, at most (a multiple of every tile's pixels and of 16) */
#define TILE_LCM 24 /* of the tiles' pixel counts */

struct rt_convpx {
    size_t G, M, K, V, blocks; /* M output channels per group, of V vectors */
    float *w; /* per group, per block b: [K][nv(b) x 16], the weights transposed, zero past M */
};

/* Block b's vectors: V / blocks each, one more for the first V % blocks. */
static size_t block_nv(const rt_convpx *p, size_t b)
{
    return p->V / p->blocks + (b < p->V % p->blocks);
}

/* The vectors before block b. */
static size_t block_v0(const rt_convpx *p, size_t b)
{
    size_t r = p->V % p->blocks;
    return b * (p->V / p->blocks) + (b < r ? b : r);
}

void rt_convpx_free(rt_convpx *p)
{
    if (!p)
        return;
    free(p->w);
    free(p);
}

gir_status rt_convpx_new(const float *w, size_t G, size_t M, size_t K, rt_convpx **out, gir_error *err)
{
    *out = NULL;
    rt_convpx *p = calloc(1, sizeof *p);
    if (!p)
        return gir_nomem(err);
    p->G = G;
    p->M = M;
    p->K = K;
    p->V = (M + 15) / 16;
    p->blocks = (p->V + NVMAX - 1) / NVMAX;
    uint64_t n;
    if (!gir_mul_u64((uint64_t)p->V * 16 * G, K ? K : 1, &n) || n > SIZE_MAX / 2 / sizeof(float) ||
        posix_memalign((void **)&p->w, 64, (size_t)n * sizeof(float)) != 0) {
        free(p);
        return gir_nomem(err);
    }
    for (size_t g = 0; g < G; g++)
        for (size_t b = 0; b < p->blocks; b++) {
            size_t nb = block_nv(p, b) * 16, m0 = block_v0(p, b) * 16;
            float *wb = p->w + (g * p->V * 16 + m0) * K;
            const float *wg = w + g * M * K;
            for (size_t k = 0; k < K; k++)
                for (size_t j = 0; j < nb; j++)
                    wb[k * nb + j] = m0 + j < M ? wg[(m0 + j) * K + k] : 0.0f;
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

/* Pixels per tile for nv vectors of channels: 24 sums. */
#define TILE_PX(NV) ((NV) == 4 ? 6 : (NV) == 3 ? 8 : 12)

/* Where a tile's finished sums go straight into an output in channel
 * blocks (instead of the scratch): vector j of pixel i at y + j vs + 16 i,
 * after the bias and the clamp. */
typedef struct tile_out {
    float *y;
    size_t vs;
    const float *bias; /* the block's, 16 per vector, or NULL */
    bool clamp;
    float lo, hi;
} tile_out;

/* One tile: kc taps of TILE_PX(NV) pixels into NV vectors of channels
 * (weights [tap][NV x 16]); the sums start at zero or at what yt ([pixel]
 * [NV x 16]) holds, and end there, or in out when given.  Pixel i's taps
 * start at px[i] (LIN 0), or at px[0] + i LIN (LIN 1 or 16: pixels one
 * after another in the planes, or in channel blocks).  The first npf lines
 * after w's taps are fetched into L2 on the way. */
TGT static inline __attribute__((always_inline)) void tile(size_t kc, const float *w, const float *const *px,
                                                           const ptrdiff_t *koff, float *yt, bool carry,
                                                           const float *pf, size_t npf, const tile_out *out,
                                                           const int NV, const int LIN)
{
    const int NP = TILE_PX(NV);
    __m512 acc[12][NVMAX];
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < NV; j++)
            acc[i][j] = carry ? _mm512_load_ps(yt + (i * NV + j) * 16) : _mm512_setzero_ps();
    const float *pp[12];
    for (int i = 0; i < NP; i++)
        pp[i] = LIN ? px[0] + i * LIN : px[i];
    for (size_t k = 0; k < kc; k++, w += NV * 16) {
        ptrdiff_t o = koff[k];
        __m512 wv[NVMAX];
        for (int j = 0; j < NV; j++)
            wv[j] = _mm512_load_ps(w + j * 16);
        if (k * NV < npf) /* the next weights, into L2, while these are summed */
            for (int j = 0; j < NV; j++)
                _mm_prefetch((const char *)(pf + (k * NV + j) * 16), _MM_HINT_T1);
        /* one broadcast live at a time: 24 sums, the weights and 1 input
         * value fit the 32 registers (six broadcasts at once first spilled
         * two sums to the stack, a store and a load per tap) */
#pragma GCC unroll 12
        for (int i = 0; i < NP; i++) {
            __m512 x = _mm512_set1_ps(LIN ? px[0][o + i * LIN] : pp[i][o]);
            for (int j = 0; j < NV; j++)
                acc[i][j] = _mm512_fmadd_ps(x, wv[j], acc[i][j]);
        }
    }
    if (out) { /* the bias after the sums, then the clamp, as the epilogue does */
        __m512 lo = _mm512_set1_ps(out->lo), hi = _mm512_set1_ps(out->hi);
        for (int j = 0; j < NV; j++) {
            __m512 b = out->bias ? _mm512_loadu_ps(out->bias + j * 16) : _mm512_setzero_ps();
            for (int i = 0; i < NP; i++) {
                __m512 r = _mm512_add_ps(acc[i][j], b);
                if (out->clamp) /* max/min return the second operand on NaN: NaN stays */
                    r = _mm512_min_ps(hi, _mm512_max_ps(lo, r));
                _mm512_storeu_ps(out->y + j * out->vs + i * 16, r);
            }
        }
        return;
    }
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < NV; j++)
            _mm512_store_ps(yt + (i * NV + j) * 16, acc[i][j]);
}

typedef void (*tile_fn)(size_t, const float *, const float *const *, const ptrdiff_t *, float *, bool, const float *,
                        size_t, const tile_out *);

/* The tiles for 1 to 4 vectors, per pixel addressing. */
#define TILE_FN(NV, LIN)                                                                                       \
    TGT static void tile_##NV##_##LIN(size_t kc, const float *w, const float *const *px, const ptrdiff_t *koff, \
                                      float *yt, bool carry, const float *pf, size_t npf, const tile_out *out) \
    {                                                                                                          \
        tile(kc, w, px, koff, yt, carry, pf, npf, out, NV, LIN);                                               \
    }
#define TILE_FNS(NV) TILE_FN(NV, 0) TILE_FN(NV, 1) TILE_FN(NV, 2) TILE_FN(NV, 4) TILE_FN(NV, 16) TILE_FN(NV, 32)
TILE_FNS(1)
TILE_FNS(2)
TILE_FNS(3)
TILE_FNS(4)
#undef TILE_FNS
#undef TILE_FN

/* By the floats from one pixel of a row to the next (a stride of 1, 2 or
 * 4 in planes, 1 or 2 in channel blocks); [0]: a pointer per pixel. */
static const tile_fn tiles[6][NVMAX] = {
    { tile_1_0, tile_2_0, tile_3_0, tile_4_0 },     { tile_1_1, tile_2_1, tile_3_1, tile_4_1 },
    { tile_1_2, tile_2_2, tile_3_2, tile_4_2 },     { tile_1_4, tile_2_4, tile_3_4, tile_4_4 },
    { tile_1_16, tile_2_16, tile_3_16, tile_4_16 }, { tile_1_32, tile_2_32, tile_3_32, tile_4_32 },
};

/* The row of tiles for pixels step floats apart, or 0: a pointer each. */
static int tile_row(size_t step)
{
    return step == 1 ? 1 : step == 2 ? 2 : step == 4 ? 3 : step == 16 ? 4 : step == 32 ? 5 : 0;
}

typedef struct px_job {
    const rt_convpx *p;
    const rt_convpx_args *a;
    gir_threads *th;
    size_t P, chunks, cq; /* cq: pixels per chunk but the last (which has the rest), at most CHUNK */
    size_t qb, qe;        /* the pixels the items cover (chunks of them) */
    size_t nw, per;       /* px_ranges: the workers, and the items of each one's pixels */
} px_job;

/* Channels [m0, m0 + nm) of pixels [q0, q0 + nq) from yt ([pixel][nb])
 * into y (a group's channels; bias its biases), with the bias, the
 * residual and the clamp: blocks of 16 pixels x 16 channels transposed in
 * registers, each channel's 16 pixels stored as one row piece; or, into
 * channel blocks, each pixel's vectors. */
TGT static void epilogue(const rt_convpx_args *a, float *y, const float *bias, size_t P, float *yt, size_t nb,
                         size_t m0, size_t nm, size_t q0, size_t nq)
{
    bool clamp = a->act && a->act->on && a->act->kind == RT_ACT_CLAMP;
    bool post = a->act && a->act->on && !clamp;
    bool tiled = post && !a->accumulate; /* the activation over the whole tile, before the transposes */
    if (tiled) {
        __m512 bv[NVMAX];
        for (size_t v = 0; v < nb / 16; v++) {
            size_t m = m0 + v * 16, n = m < m0 + nm ? m0 + nm - m : 0;
            bv[v] = bias ? _mm512_maskz_loadu_ps(rt_mask16(n), bias + m) : _mm512_setzero_ps();
        }
        for (size_t q = 0; q < nq; q++)
            for (size_t v = 0; v < nb / 16; v++)
                _mm512_store_ps(yt + q * nb + v * 16, _mm512_add_ps(_mm512_load_ps(yt + q * nb + v * 16), bv[v]));
        rt_act_map(a->act, yt, yt, nq * nb);
    }
    __m512 lo = _mm512_set1_ps(clamp ? a->act->lo : 0.0f), hi = _mm512_set1_ps(clamp ? a->act->hi : 0.0f);
    if (a->y_blocked) { /* each pixel's 16-channel vectors as they are (a partial last one whole) */
        for (size_t v = 0; v < (nm + 15) / 16; v++) {
            __m512 b = bias && !tiled ? _mm512_maskz_loadu_ps(rt_mask16(nm - v * 16), bias + m0 + v * 16)
                                         : _mm512_setzero_ps();
            float *yb = y + ((m0 / 16 + v) * P + q0) * 16;
            for (size_t q = 0; q < nq; q++) {
                __m512 r = _mm512_add_ps(_mm512_load_ps(yt + q * nb + v * 16), b);
                if (clamp)
                    r = _mm512_min_ps(hi, _mm512_max_ps(lo, r));
                _mm512_storeu_ps(yb + q * 16, r);
            }
        }
        return;
    }
    for (size_t q = 0; q < nq; q += 16) {
        size_t n = nq - q < 16 ? nq - q : 16;
        __mmask16 mk = rt_mask16(n);
        for (size_t jb = 0; jb < nm; jb += 16) {
            size_t nc = nm - jb < 16 ? nm - jb : 16;
            __m512 r[16];
            for (size_t i = 0; i < 16; i++)
                r[i] = i < n ? _mm512_load_ps(yt + (q + i) * nb + jb) : _mm512_setzero_ps();
            rt_tr16(r); /* r[c]: channel m0 + jb + c at the 16 pixels */
            for (size_t c = 0; c < nc; c++) {
                float *yr = y + (m0 + jb + c) * P + q0 + q;
                __m512 v = r[c];
                if (bias && !tiled)
                    v = _mm512_add_ps(v, _mm512_set1_ps(bias[m0 + jb + c]));
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
            float *yr = y + (m0 + j) * P + q0;
            rt_act_map(a->act, yr, yr, nq);
        }
}

TGT static void px_items(void *ctx, size_t i0, size_t i1, int worker)
{
    const px_job *j = ctx;
    const rt_convpx *p = j->p;
    const rt_convpx_args *a = j->a;
    float *yt = gir_threads_scratch(j->th, worker);
    float to_bias[NVMAX * 16];
    /* pointwise, the pixels one after another in the planes (in channel
     * blocks or not); the direct form's tiles within one output row, too,
     * at a stride of 1, 2 or 4 (planes) or 1 or 2 (channel blocks) */
    size_t csw = a->csw;
    bool pointwise = a->dPW == a->OW && csw == 1;
    int lin = tile_row(csw * a->pxs);
    size_t per_group = p->blocks * j->chunks, wfl = p->G * p->V * 16 * p->K; /* all the weights, in floats */
    for (size_t it = i0; it < i1; it++) {
        size_t grp = it / per_group, blk = it % per_group / j->chunks, ch = it % j->chunks;
        size_t q0 = j->qb + ch * j->cq, nq = ch + 1 == j->chunks ? j->qe - q0 : j->cq;
        size_t nv = block_nv(p, blk), nb = nv * 16, m0 = block_v0(p, blk) * 16;
        size_t nm = p->M - m0 < nb ? p->M - m0 : nb, np = TILE_PX(nv);
        const float *wb = p->w + (grp * p->V * 16 + m0) * p->K, *planes = a->planes + grp * a->gplanes;
        /* where each pixel's taps start in the planes, once for all blocks
         * of taps; past the end of a partial tile: the last pixel again */
        const float *base[CHUNK + TILE_LCM];
        size_t oh = q0 / a->OW, ow = q0 % a->OW; /* (a division per pixel weighed on short sums) */
        for (size_t t = 0; t < nq; t++) {
            base[t] = planes + (oh * a->dPW + ow * csw) * a->pxs;
            if (++ow == a->OW) {
                ow = 0;
                oh++;
            }
        }
        for (size_t t = nq; t < (nq + np - 1) / np * np; t++)
            base[t] = base[nq - 1];
        float *y = a->y + grp * p->M * j->P;
        const float *bias = a->bias ? a->bias + grp * p->M : NULL;
        /* one block of taps into channel blocks: each whole tile's sums go
         * straight to the output, the partial last one through the scratch */
        size_t kb = KB_FLOATS / nb; /* taps a block: 160 for 64 channels, 640 for 16 */
        size_t whole = a->y_blocked && p->K <= kb ? nq / np * np : 0;
        tile_out to = { .vs = j->P * 16, .clamp = a->act && a->act->on && a->act->kind == RT_ACT_CLAMP };
        if (whole) {
            to.lo = to.clamp ? a->act->lo : 0.0f;
            to.hi = to.clamp ? a->act->hi : 0.0f;
            to.bias = bias ? bias + m0 : NULL;
            if (bias && nm < nb) { /* a partial last vector: its biases padded with zeros */
                memset(to_bias, 0, sizeof to_bias);
                memcpy(to_bias, bias + m0, nm * sizeof(float));
                to.bias = to_bias;
            }
        }
        for (size_t k0 = 0; k0 < p->K; k0 += kb) {
            size_t kc = p->K - k0 < kb ? p->K - k0 : kb;
            /* the first tile fetches the next kc taps' weights (the next
             * block's when this one ends: they follow in memory), which
             * come from memory in a model, not from cache */
            const float *pf = wb + (k0 + kc) * nb;
            size_t left = (size_t)(p->w + wfl - pf) / 16, npf = left < kc * nv ? left : kc * nv;
            const float *wk = wb + k0 * nb;
            for (size_t t = 0; t < nq; t += np) {
                size_t qa = q0 + t, qb = qa + np - 1;
                bool l = lin && t + np <= nq && (pointwise || qa / a->OW == qb / a->OW);
                if (t < whole)
                    to.y = y + (m0 / 16 * j->P + qa) * 16;
                tiles[l ? lin : 0][nv - 1](kc, wk, base + t, a->koff + k0, yt + t * nb, k0 > 0, pf, t == 0 ? npf : 0,
                                           t < whole ? &to : NULL);
            }
        }
        if (whole && a->act && a->act->on && !to.clamp) /* the other activations over what the tiles stored */
            for (size_t v = 0; v < nv; v++) {
                float *yv = y + ((m0 / 16 + v) * j->P + q0) * 16;
                rt_act_map(a->act, yv, yv, whole * 16);
            }
        if (whole < nq)
            epilogue(a, y, bias, j->P, yt + whole * nb, nb, m0, nm, q0 + whole, nq - whole);
    }
}

/* Pixels [u0 * TILE_LCM, u1 * TILE_LCM) (whole tiles, but at the end),
 * all channel blocks of them. */
TGT static void px_pixels(void *ctx, size_t u0, size_t u1, int w)
{
    px_job j = *(const px_job *)ctx;
    j.qb = u0 * TILE_LCM;
    j.qe = u1 * TILE_LCM < j.P ? u1 * TILE_LCM : j.P;
    j.chunks = (j.qe - j.qb + j.cq - 1) / j.cq;
    px_items(&j, 0, j.p->G * j.p->blocks * j.chunks, w);
}

/* Where worker r's pixels start of P among nw: near P r / nw, at a whole
 * multiple of 24. */
static size_t range_start(size_t P, size_t r, size_t nw)
{
    if (r >= nw)
        return P;
    size_t q = (r * P / nw + TILE_LCM / 2) / TILE_LCM * TILE_LCM;
    return q < P ? q : P;
}

/* Items u of job j's ranges: range u / per (a worker's pixels), item u %
 * per within it (group, channel block, chunk), as px_items numbers them. */
TGT static void px_ranges(void *ctx, size_t u0, size_t u1, int w)
{
    px_job j = *(const px_job *)ctx;
    size_t per = j.per, nw = j.nw;
    while (u0 < u1) {
        size_t r = u0 / per, it0 = u0 % per, it1 = u1 - r * per < per ? u1 - r * per : per;
        j.qb = range_start(j.P, r, nw);
        j.qe = range_start(j.P, r + 1, nw);
        j.chunks = (j.qe - j.qb + j.cq - 1) / j.cq;
        size_t n = j.p->G * j.p->blocks * j.chunks;
        if (it0 < n)
            px_items(&j, it0, it1 < n ? it1 : n, w);
        u0 = (r + 1) * per < u1 ? (r + 1) * per : u1;
    }
}

void rt_convpx_run(const rt_convpx *p, const rt_convpx_args *a, gir_threads *th)
{
    px_job j = { p, a, th, a->OH * a->OW, 0, CHUNK, 0, a->OH * a->OW, 1, 0 };
    j.chunks = (j.P + CHUNK - 1) / CHUNK;
    size_t nw = th ? (size_t)gir_threads_count(th) : 1;
    /* With several workers and enough pixels, each starts on its share of
     * the pixels for every channel block: it reads only its part of the
     * input, and writes the part of the output that its share of the next
     * convolution will read, so both stay in its own core's caches (on a
     * machine whose cores share no cache, reading what another core wrote
     * costs several times more than reading one's own).  From 96 pixels a
     * worker on (4 tiles of 24), not 480: MobileNetV2, RegNetX and
     * MobileNetV3-L 3-4% faster with two threads, their 28x28 maps too.
     * Pieces of at least 96 pixels: each piece reads all the weights again. */
    if (nw > 1 && j.P >= nw * 4 * TILE_LCM) {
        size_t units = (j.P + TILE_LCM - 1) / TILE_LCM, piece = units / (4 * nw);
        if (piece >= 4) {
            gir_threads_shares(th, units, piece, px_pixels, &j);
            return;
        }
        /* Under 16 tiles of 24 a worker (14x14 maps), pieces of 96 pixels
         * were a worker's half: a slower CPU (on a virtual machine, one
         * whose sibling is busy) could not hand any of its share over.
         * Instead each worker's share is its pixels, about P / nw, in
         * items of one channel block: a faster worker takes blocks from
         * the back of a slower one's share. */
        size_t most = 0;
        for (size_t r = 0; r < nw; r++) {
            size_t n = range_start(j.P, r + 1, nw) - range_start(j.P, r, nw);
            most = n > most ? n : most;
        }
        j.nw = nw;
        j.per = p->G * p->blocks * ((most + CHUNK - 1) / CHUNK);
        gir_threads_shares(th, nw * j.per, 1, px_ranges, &j);
        return;
    }
    /* Fewer pixels (7x7 maps): the items (group, channel block, chunk of
     * pixels) in shares.  Under 4 blocks a worker the pixels go in chunks
     * of whole multiples of 24 pixels, the last one taking the rest: every
     * chunk but the last is whole tiles of each size, so chunking adds no
     * partial tiles (49 pixels as 17 + 17 + 15 ran 9 8-pixel tiles for 7;
     * as 24 + 25 they run 3 + 4, as one chunk does; RegNetX-400MF's 7x7
     * stage with two threads 4-7% faster).  From 4 blocks a worker, not
     * 8, whole blocks: each chunk reads its block's weights again, which
     * for a 3x3 over 512 channels (1.2 MB a block) come from memory each
     * time (six such convolutions at 7x7 with two threads 0.878 of the
     * time, ResNet-18 0.977).  A worker's share is a run of blocks: it reads
     * their weights only, and all of the small input.  (At 14x14, blocks
     * to each worker had every worker read all of a larger input:
     * EfficientNet's 672 -> 112 was slower with two threads than with
     * one.)  Each pixel's sums are the same whatever the chunk. */
    if (nw == 1) {
        px_items(&j, 0, p->G * p->blocks * j.chunks, 0);
        return;
    }
    size_t want = 4 * nw;
    if (j.chunks * p->blocks * p->G < want) {
        size_t chunks = (want + p->blocks * p->G - 1) / (p->blocks * p->G), cq = (j.P + chunks - 1) / chunks;
        cq = cq < TILE_LCM ? TILE_LCM : cq / TILE_LCM * TILE_LCM;
        j.cq = cq > CHUNK ? CHUNK : cq;
        j.chunks = j.P / j.cq ? j.P / j.cq : 1;
        if (j.P - (j.chunks - 1) * j.cq > CHUNK)
            j.chunks++;
    }
    gir_threads_shares(th, p->G * p->blocks * j.chunks, 1, px_items, &j);
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
