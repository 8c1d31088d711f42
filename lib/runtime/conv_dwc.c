/* Depthwise convolution by channel blocks (conv_dwc.h).
 *
 * Work items are (image, block of 16 channels, band of output rows); a band
 * is as many output rows as keep its input tile and its results within
 * BAND_FLOATS (L1 and L2 sized).  The tile holds the band's padded input
 * rows, [row][column][16], transposed from the block's planes 16 columns at
 * a time (16x16 in registers), with zeros in the padding.  Each output pixel
 * is then kh x kw FMAs of full vectors: NP pixels of a row at once, the
 * weights of windows up to 5x5 held in registers.  The 16-lane sums go to a
 * result tile [pixel][16], the activation runs over it, and a second
 * transpose writes each channel's run of the band's rows (contiguous in
 * NCHW), adding to what is there for a fused residual. */
#include "conv_dwc.h"

#include "gemm.h"
#include "simd512.h"

#include <stdlib.h>

#define CB 16                      /* channels per block: the lanes */
#define BAND_FLOATS ((size_t)16384) /* input tile and results of one band: 64 KiB */

struct rt_dwc {
    rt_dwc_geo g;
    bool max;     /* max pooling (rt_dwc_new_max): no weights, -inf padding */
    size_t C, blocks, taps;
    size_t tw;    /* tile row: (ow - 1) sw + (kw - 1) dw + 1 pixels */
    size_t band;  /* output rows per item */
    size_t bands;
    size_t tfl;   /* tile floats: ((band - 1) sh + (kh - 1) dh + 1) tw 16 */
    size_t ofl;   /* result floats: band ow rounded up to 16 pixels, times 16 */
    float *w;     /* [block][tap][16], zero past C; NULL for max pooling */
};

static size_t tile_rows(const rt_dwc_geo *g, size_t rows)
{
    return (rows - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

static size_t band_floats(const rt_dwc_geo *g, size_t tw, size_t rows)
{
    return tile_rows(g, rows) * tw * CB + (rows * g->ow + CB - 1) / CB * CB * CB;
}

void rt_dwc_free(rt_dwc *p)
{
    if (!p)
        return;
    free(p->w);
    free(p);
}

bool rt_dwc_fits(const rt_dwc *p, const rt_dwc_geo *g)
{
    return p && memcmp(&p->g, g, sizeof *g) == 0;
}

size_t rt_dwc_scratch_floats(const rt_dwc *p)
{
    return p->tfl + p->ofl;
}

bool rt_dwc_geo_ok(const rt_dwc_geo *g)
{
    return g->oh > 0 && g->ow > 0 && g->kh > 0 && g->kw > 0 && g->kh * g->kw <= 1024 &&
           (g->ow - 1) * g->sw + (g->kw - 1) * g->dw < ((size_t)1 << 16) && (g->kh - 1) * g->dh < ((size_t)1 << 12);
}

/* The plan every use shares: the tile row and the bands. */
static gir_status dwc_plan(size_t C, const rt_dwc_geo *g, bool max, rt_dwc **out, gir_error *err)
{
    *out = NULL;
    if (!rt_dwc_geo_ok(g))
        return gir_fail(err, GIR_E_LIMIT, "window is too large for the channel-block kernel");
    rt_dwc *p = calloc(1, sizeof *p);
    if (!p)
        return gir_nomem(err);
    p->g = *g;
    p->max = max;
    p->C = C;
    p->blocks = (C + CB - 1) / CB;
    p->taps = g->kh * g->kw;
    p->tw = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    size_t band = 1;
    while (band < g->oh && band_floats(g, p->tw, band + 1) <= BAND_FLOATS)
        band++;
    p->band = band;
    p->bands = (g->oh + band - 1) / band;
    p->tfl = tile_rows(g, band) * p->tw * CB;
    p->ofl = band_floats(g, p->tw, band) - p->tfl;
    *out = p;
    return GIR_OK;
}

gir_status rt_dwc_new(const float *w, size_t C, const rt_dwc_geo *g, rt_dwc **out, gir_error *err)
{
    rt_dwc *p;
    TRY(dwc_plan(C, g, false, &p, err));
    uint64_t n;
    if (!gir_mul_u64((uint64_t)p->blocks * CB, p->taps, &n) || n > SIZE_MAX / 2 / sizeof(float) ||
        posix_memalign((void **)&p->w, 64, (size_t)n * sizeof(float)) != 0) {
        free(p);
        return gir_nomem(err);
    }
    for (size_t b = 0; b < p->blocks; b++)
        for (size_t t = 0; t < p->taps; t++)
            for (size_t j = 0; j < CB; j++) {
                size_t c = b * CB + j;
                p->w[(b * p->taps + t) * CB + j] = c < C ? w[c * p->taps + t] : 0.0f;
            }
    *out = p;
    return GIR_OK;
}

gir_status rt_dwc_new_max(size_t C, const rt_dwc_geo *g, rt_dwc **out, gir_error *err)
{
    return dwc_plan(C, g, true, out, err);
}

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define TGT __attribute__((target("avx512f")))

bool rt_dwc_available(void)
{
    return gir_gemm_isa_resolve(GIR_GEMM_AUTO) == GIR_GEMM_AVX512;
}

/* Columns [0, nw) of one input row of channels 0..nc (x: channel 0's row,
 * planes hw apart) into the tile row at d: pixel j at d + 16 j.  With nan,
 * the lanes of any NaN read are added to *nan. */
TGT static void row_in(const float *x, size_t hw, size_t nc, size_t nw, float *d, __mmask16 *nan)
{
    for (size_t j0 = 0; j0 < nw; j0 += 16) {
        size_t m = nw - j0 < 16 ? nw - j0 : 16;
        __mmask16 mk = rt_mask16(m);
        __m512 r[16];
        for (size_t c = 0; c < 16; c++)
            r[c] = c < nc ? _mm512_maskz_loadu_ps(mk, x + c * hw + j0) : _mm512_setzero_ps();
        if (nan)
            for (size_t c = 0; c < nc; c++)
                *nan |= _mm512_cmp_ps_mask(r[c], r[c], _CMP_UNORD_Q);
        rt_tr16(r);
        for (size_t j = 0; j < m; j++)
            _mm512_store_ps(d + (j0 + j) * CB, r[j]);
    }
}

/* n pixels of a block's row, already [pixel][16], into the tile row at d;
 * with nan, the lanes of any NaN are added to *nan. */
TGT static void row_copy(const float *x, size_t n, float *d, __mmask16 *nan)
{
    if (!nan) {
        memcpy(d, x, n * CB * sizeof(float));
        return;
    }
    __mmask16 m = 0;
    for (size_t j = 0; j < n; j++) {
        __m512 v = _mm512_loadu_ps(x + j * CB);
        m |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        _mm512_store_ps(d + j * CB, v);
    }
    *nan |= m;
}

static void fill(float *p, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = v;
}

/* Output row: ow pixels from tile row t (the window's top row), into o.
 * NP pixels at a time; weights in registers when HOIST. */
TGT static inline __attribute__((always_inline)) void row_out(const float *t, const float *w, __m512 bias, float *o,
                                                               size_t ow, size_t tw, const size_t KH, const size_t KW,
                                                               const size_t SW, const size_t DH, const size_t DW,
                                                               const size_t NP, const bool HOIST)
{
    __m512 wv[25];
    if (HOIST)
        for (size_t i = 0; i < KH * KW; i++)
            wv[i] = _mm512_load_ps(w + i * CB);
    size_t x = 0;
    for (; x + NP <= ow; x += NP) {
        __m512 acc[8];
        for (size_t p = 0; p < NP; p++)
            acc[p] = bias;
        for (size_t kh = 0; kh < KH; kh++) {
            const float *tr = t + (kh * DH * tw + x * SW) * CB;
            for (size_t kw = 0; kw < KW; kw++) {
                __m512 wk = HOIST ? wv[kh * KW + kw] : _mm512_load_ps(w + (kh * KW + kw) * CB);
                for (size_t p = 0; p < NP; p++)
                    acc[p] = _mm512_fmadd_ps(_mm512_load_ps(tr + (p * SW + kw * DW) * CB), wk, acc[p]);
            }
        }
        for (size_t p = 0; p < NP; p++)
            _mm512_store_ps(o + (x + p) * CB, acc[p]);
    }
    for (; x < ow; x++) {
        __m512 acc = bias;
        for (size_t kh = 0; kh < KH; kh++) {
            const float *tr = t + (kh * DH * tw + x * SW) * CB;
            for (size_t kw = 0; kw < KW; kw++) {
                __m512 wk = HOIST ? wv[kh * KW + kw] : _mm512_load_ps(w + (kh * KW + kw) * CB);
                acc = _mm512_fmadd_ps(_mm512_load_ps(tr + kw * DW * CB), wk, acc);
            }
        }
        _mm512_store_ps(o + x * CB, acc);
    }
}

/* rows [0, nr) of the band's results: the common windows with their sizes
 * as constants (every loop unrolls), the rest through the general loops */
TGT static void band_out(const rt_dwc *p, const float *t, const float *w, __m512 bias, float *o, size_t nr)
{
    const rt_dwc_geo *g = &p->g;
    const size_t ow = g->ow, tw = p->tw, rs = g->sh * tw * CB;
    bool plain = g->kh == g->kw && g->sh == g->sw && g->dh == 1 && g->dw == 1 && g->sw <= 2;
    int key = plain ? (int)(g->kh * 10 + g->sw) : 0;
    for (size_t r = 0; r < nr; r++, t += rs, o += ow * CB) {
        switch (key) {
        case 31: row_out(t, w, bias, o, ow, tw, 3, 3, 1, 1, 1, 8, true); break;
        case 32: row_out(t, w, bias, o, ow, tw, 3, 3, 2, 1, 1, 8, true); break;
        case 51: row_out(t, w, bias, o, ow, tw, 5, 5, 1, 1, 1, 4, true); break;
        case 52: row_out(t, w, bias, o, ow, tw, 5, 5, 2, 1, 1, 4, true); break;
        case 71: row_out(t, w, bias, o, ow, tw, 7, 7, 1, 1, 1, 8, false); break;
        case 72: row_out(t, w, bias, o, ow, tw, 7, 7, 2, 1, 1, 8, false); break;
        default: row_out(t, w, bias, o, ow, tw, g->kh, g->kw, g->sw, g->dh, g->dw, 4, false); break;
        }
    }
}

/* Max pooling: output row of ow pixels from tile row t, each the maximum
 * of its window taken in row-major order as max(v, acc), which keeps acc
 * on ties (the first of equal values wins, as the scalar loops do).  NaN
 * is not handled here: the band takes row_max_nan when its tile has one. */
TGT static inline __attribute__((always_inline)) void row_max(const float *t, float *o, size_t ow, size_t tw,
                                                               const size_t KH, const size_t KW, const size_t SW,
                                                               const size_t DH, const size_t DW, const size_t NP)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    size_t x = 0;
    for (; x + NP <= ow; x += NP) {
        __m512 acc[8];
        for (size_t p = 0; p < NP; p++)
            acc[p] = ninf;
        for (size_t kh = 0; kh < KH; kh++) {
            const float *tr = t + (kh * DH * tw + x * SW) * CB;
            for (size_t kw = 0; kw < KW; kw++)
                for (size_t p = 0; p < NP; p++)
                    acc[p] = _mm512_max_ps(_mm512_load_ps(tr + (p * SW + kw * DW) * CB), acc[p]);
        }
        for (size_t p = 0; p < NP; p++)
            _mm512_store_ps(o + (x + p) * CB, acc[p]);
    }
    for (; x < ow; x++) {
        __m512 acc = ninf;
        for (size_t kh = 0; kh < KH; kh++) {
            const float *tr = t + (kh * DH * tw + x * SW) * CB;
            for (size_t kw = 0; kw < KW; kw++)
                acc = _mm512_max_ps(_mm512_load_ps(tr + kw * DW * CB), acc);
        }
        _mm512_store_ps(o + x * CB, acc);
    }
}

/* The same where the tile holds a NaN: a value replaces the maximum when
 * it is greater or NaN, and a NaN maximum stays, so the window's first
 * NaN is the result (as the scalar loops give). */
TGT static void row_max_nan(const float *t, float *o, const rt_dwc_geo *g, size_t tw)
{
    for (size_t x = 0; x < g->ow; x++) {
        __m512 acc = _mm512_set1_ps(-INFINITY);
        for (size_t kh = 0; kh < g->kh; kh++) {
            const float *tr = t + (kh * g->dh * tw + x * g->sw) * CB;
            for (size_t kw = 0; kw < g->kw; kw++) {
                __m512 v = _mm512_load_ps(tr + kw * g->dw * CB);
                __mmask16 m = _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ) |
                              (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) & _mm512_cmp_ps_mask(acc, acc, _CMP_ORD_Q));
                acc = _mm512_mask_blend_ps(m, acc, v);
            }
        }
        _mm512_store_ps(o + x * CB, acc);
    }
}

/* rows [0, nr) of the band's maxima, as band_out */
TGT static void band_max(const rt_dwc *p, const float *t, float *o, size_t nr, bool nan)
{
    const rt_dwc_geo *g = &p->g;
    const size_t ow = g->ow, tw = p->tw, rs = g->sh * tw * CB;
    bool plain = g->kh == g->kw && g->sh == g->sw && g->dh == 1 && g->dw == 1 && g->sw <= 2;
    int key = nan ? -1 : plain ? (int)(g->kh * 10 + g->sw) : 0;
    for (size_t r = 0; r < nr; r++, t += rs, o += ow * CB) {
        switch (key) {
        case -1: row_max_nan(t, o, g, tw); break;
        case 21: row_max(t, o, ow, tw, 2, 2, 1, 1, 1, 8); break;
        case 22: row_max(t, o, ow, tw, 2, 2, 2, 1, 1, 8); break;
        case 31: row_max(t, o, ow, tw, 3, 3, 1, 1, 1, 8); break;
        case 32: row_max(t, o, ow, tw, 3, 3, 2, 1, 1, 8); break;
        default: row_max(t, o, ow, tw, g->kh, g->kw, g->sw, g->dh, g->dw, 4); break;
        }
    }
}

typedef struct dwc_job {
    const rt_dwc *p;
    const rt_dwc_args *a;
    size_t floats; /* scratch per worker */
} dwc_job;

TGT static void dwc_items(void *ctx, size_t i0, size_t i1, int worker)
{
    const dwc_job *j = ctx;
    const rt_dwc *p = j->p;
    const rt_dwc_args *a = j->a;
    const rt_dwc_geo *g = &p->g;
    const size_t H = g->h, W = g->w, hw = H * W, P = g->oh * g->ow, tw = p->tw;
    const float padv = p->max ? -INFINITY : 0.0f;
    float *t = a->scratch + (size_t)worker * j->floats, *o = t + p->tfl;
    bool post = !p->max && a->act && a->act->on;
    /* the input columns that land in the tile: [0, nw) at tile column pw */
    size_t lead = g->pw < tw ? g->pw : tw, nw = tw - lead < W ? tw - lead : W;
    for (size_t it = i0; it < i1; it++) {
        size_t band = it % p->bands, blk = it / p->bands % p->blocks, n = it / p->bands / p->blocks;
        size_t c0 = blk * CB, nc = p->C - c0 < CB ? p->C - c0 : CB;
        size_t oh0 = band * p->band, nr = g->oh - oh0 < p->band ? g->oh - oh0 : p->band;
        const float *x = a->x + (n * RT_BLOCKED_CH(p->C, a->x_blocked) + c0) * hw; /* c0's plane, or its block */
        /* the tile: rows from padded row oh0 sh on (max pooling: with the
         * lanes that read a NaN) */
        __mmask16 nan = 0, *pn = p->max ? &nan : NULL;
        size_t rows = tile_rows(g, nr);
        for (size_t r = 0; r < rows; r++) {
            float *d = t + r * tw * CB;
            size_t pr = oh0 * g->sh + r; /* padded row; input row pr - ph */
            if (pr < g->ph || pr - g->ph >= H) {
                fill(d, tw * CB, padv);
                continue;
            }
            fill(d, lead * CB, padv);
            if (a->x_blocked)
                row_copy(x + (pr - g->ph) * W * CB, nw, d + lead * CB, pn);
            else
                row_in(x + (pr - g->ph) * W, hw, nc, nw, d + lead * CB, pn);
            fill(d + (lead + nw) * CB, (tw - lead - nw) * CB, padv);
        }
        __m512 bias = a->bias ? _mm512_maskz_loadu_ps(rt_mask16(nc), a->bias + c0) : _mm512_setzero_ps();
        size_t q = nr * g->ow; /* the band's pixels */
        /* the results: in place when the output is in blocks ([pixel][16]
         * is the block's layout), else in the scratch for the transpose */
        float *res = a->y_blocked ? a->y + (n * RT_BLOCKED_CH(p->C, true) + c0) * P + oh0 * g->ow * CB : o;
        if (p->max)
            band_max(p, t, res, nr, nan != 0);
        else
            band_out(p, t, p->w + blk * p->taps * CB, bias, res, nr);
        if (a->y_blocked) {
            if (post)
                rt_act_map(a->act, res, res, q * CB);
            continue;
        }
        if (post && !a->accumulate)
            rt_act_map(a->act, o, o, q * CB);
        float *y = a->y + (n * p->C + c0) * P + oh0 * g->ow;
        rt_tile_to_rows(o, q, y, P, nc, a->accumulate);
        if (post && a->accumulate)
            for (size_t c = 0; c < nc; c++)
                rt_act_map(a->act, y + c * P, y + c * P, q);
    }
}

/* Bands [b0, b1) in every channel block.  Split in shares
 * (gir_threads_shares), the rows of the output a worker writes are those
 * its share of the next convolution reads. */
TGT static void dwc_bands(void *ctx, size_t b0, size_t b1, int w)
{
    const dwc_job *j = ctx;
    for (size_t i = 0; i < j->a->N * j->p->blocks; i++)
        dwc_items(ctx, i * j->p->bands + b0, i * j->p->bands + b1, w);
}

void rt_dwc_run(const rt_dwc *p, const rt_dwc_args *a, gir_threads *th)
{
    dwc_job j = { p, a, rt_dwc_scratch_floats(p) };
    size_t nw = th ? (size_t)gir_threads_count(th) : 1;
    if (nw > 1 && p->bands >= 2 * nw) {
        gir_threads_shares(th, p->bands, p->bands / (4 * nw), dwc_bands, &j);
        return;
    }
    rt_parallel_for(th, a->N * p->blocks * p->bands, 1, 1, dwc_items, &j);
}

#else

bool rt_dwc_available(void)
{
    return false;
}

void rt_dwc_run(const rt_dwc *p, const rt_dwc_args *a, gir_threads *th)
{
    (void)p;
    (void)a;
    (void)th;
}

#endif
