/* 3x3 stride-1 convolution by Winograd's minimal filtering, F(2x2, 3x3)
 * and F(4x4, 3x3).  In F(2x2, 3x3) each 2x2 output tile comes from a 4x4
 * input tile as
 *   Y = A^T [ (G g G^T) .* (B^T d B) ] A
 * with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5;
 * .5 -.5 .5; 0 0 1], A^T = [1 1 1 0; 0 1 -1 -1]: 16 multiplications per
 * tile and channel pair instead of 36.  Summed over input channels, the
 * 16 element-wise products are 16 matrix products U[xi] (M x C, the
 * transformed weights, packed once) times V[xi] (C x tiles, the transformed
 * input), done by gir_sgemm over chunks of tiles small enough to stay in
 * cache.  All transform coefficients are 0, +-1 and +-0.5 (exact in
 * float): the rounding differs from direct summation by a few ulp of the
 * partial sums, well inside the runtime's 1e-4 checks.
 *
 * F(4x4, 3x3) takes 4x4 output tiles from 6x6 input tiles (interpolation
 * points 0, +-1, +-2 and infinity): 36 products for 16 outputs, 2.25
 * multiplications an output instead of 4, and 36 instead of 64 transformed
 * values per 16 outputs to write and read back.  Its weight transform G
 * has the fractions 1/4, 1/6, 1/12 and 1/24 (computed in double, rounded
 * once), its input and output transforms integers up to 8: the rounding
 * is larger than F(2x2)'s (test_winograd_isas: at most 1.8e-6 of the sum
 * of the terms' sizes against 1.1e-7), still well inside the 1e-4
 * checks.  It pays on large maps (rt_wino_tile); small ones have too few
 * 4x4 tiles for the products' GEMM. */
#include "gemm.h"
#include "rt.h"

#include <stdlib.h>
#include <string.h>

void rt_wino_free(rt_wino *w)
{
    if (!w)
        return;
    for (int i = 0; i < 36; i++)
        gir_gemm_packed_free(&w->u[i]);
    free(w);
}

/* Tiles each worker needs to run whole chunks of its own: fewer, and the
 * products of a worker's chunk get too narrow for the GEMM's tiles.  96
 * 2x2 tiles; 24 4x4 tiles, the same outputs, so that each of two workers
 * takes a chunk of a 28x28 map's 49 (faster than every worker taking a
 * part of each step: WINO_F4_TILES). */
static size_t wino_tiles_per_worker(const rt_wino *w)
{
    return w->e == 4 ? 24 : 96;
}

/* 4x4 tiles from which F(4x4, 3x3) is used instead of F(2x2, 3x3): maps
 * of 25x25 and more.  The choice does not depend on the number of
 * workers, so that one and two threads give the same bits.  With one
 * thread, ResNet-18's 56x56 layers took 18% less time in 4x4 tiles than in
 * 2x2, its 28x28 ones (49 tiles) about the same, its 14x14 ones (16 tiles)
 * 70% more.  With two threads, each worker taking a chunk of 25 tiles,
 * the 28x28 ones took 15-20% less. */
#define WINO_F4_TILES 40

bool rt_wino_applies(size_t C, size_t M, size_t OH, size_t OW)
{
    size_t tiles = ((OH + 1) / 2) * ((OW + 1) / 2);
    /* small products run the GEMM below its register tile: im2col wins;
     * with fewer than 32 input channels each of the 16 products sums
     * too few terms to pay for the transforms (SqueezeNet's 3x3 over 16
     * channels at 54x54: 1.06 -> 0.80 ms through the pixel kernel); with
     * fewer than 64 output channels the input transform is shared by too
     * few of them (DenseNet-121's 3x3 convolutions, 128 -> 32: the whole
     * model 34.8 -> 33.8 ms with one thread through the pixel kernel, on
     * an AMD EPYC) */
    return C >= 32 && M >= 64 && tiles >= 40;
}

/* Tiles a pass with one worker: as few passes as hold at most about 2 MiB
 * of V and products each, of even size, in whole 32s (the products'
 * column tiles: 4 passes of 196 tiles ran each as 6 full tiles and one of
 * 4 columns).  Each tile's sums are the same whatever its pass. */
static size_t wino_split(const rt_wino *w)
{
    size_t tiles = w->th * w->tw, cap = ((size_t)1 << 19) / (w->nx * (w->C + w->M)) / 32 * 32;
    if (cap < 32)
        cap = 32;
    size_t passes = tiles > cap ? (tiles + cap - 1) / cap : 1, chunk = ((tiles + passes - 1) / passes + 31) / 32 * 32;
    return chunk < cap ? chunk : cap;
}

size_t rt_wino_tile(size_t OH, size_t OW)
{
    return ((OH + 3) / 4) * ((OW + 3) / 4) >= WINO_F4_TILES ? 4 : 2;
}

/* U[xi][m][c] = (G g G^T)[xi] for F(2x2, 3x3) (G's entries 0, 1 and 0.5:
 * exact in float). */
static void wino_weights2(const float *wt, size_t M, size_t C, float *u)
{
    for (size_t m = 0; m < M; m++)
        for (size_t c = 0; c < C; c++) {
            const float *g = wt + (m * C + c) * 9;
            float t[4][3]; /* G g */
            for (int j = 0; j < 3; j++) {
                float g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
                t[0][j] = g0;
                t[1][j] = 0.5f * (g0 + g1 + g2);
                t[2][j] = 0.5f * (g0 - g1 + g2);
                t[3][j] = g2;
            }
            for (int i = 0; i < 4; i++) {
                float a0 = t[i][0], a1 = t[i][1], a2 = t[i][2];
                float r[4] = { a0, 0.5f * (a0 + a1 + a2), 0.5f * (a0 - a1 + a2), a2 };
                for (int j = 0; j < 4; j++)
                    u[((size_t)(i * 4 + j) * M + m) * C + c] = r[j];
            }
        }
}

/* U[xi][m][c] = (G g G^T)[xi] for F(4x4, 3x3), G's rows 1/4 0 0 |
 * -1/6 -1/6 -1/6 | -1/6 1/6 -1/6 | 1/24 1/12 1/6 | 1/24 -1/12 1/6 | 0 0 1,
 * in double. */
static void wino_weights4(const float *wt, size_t M, size_t C, float *u)
{
    static const double G[6][3] = { { 0.25, 0, 0 },
                                    { -1.0 / 6, -1.0 / 6, -1.0 / 6 },
                                    { -1.0 / 6, 1.0 / 6, -1.0 / 6 },
                                    { 1.0 / 24, 1.0 / 12, 1.0 / 6 },
                                    { 1.0 / 24, -1.0 / 12, 1.0 / 6 },
                                    { 0, 0, 1 } };
    for (size_t m = 0; m < M; m++)
        for (size_t c = 0; c < C; c++) {
            const float *g = wt + (m * C + c) * 9;
            double t[6][3]; /* G g */
            for (int i = 0; i < 6; i++)
                for (int k = 0; k < 3; k++)
                    t[i][k] = G[i][0] * g[k] + G[i][1] * g[3 + k] + G[i][2] * g[6 + k];
            for (int i = 0; i < 6; i++)
                for (int jj = 0; jj < 6; jj++)
                    u[((size_t)(i * 6 + jj) * M + m) * C + c] =
                        (float)(t[i][0] * G[jj][0] + t[i][1] * G[jj][1] + t[i][2] * G[jj][2]);
        }
}

gir_status rt_wino_new(const float *wt, size_t M, size_t C, size_t H, size_t W, size_t OH, size_t OW, size_t ph,
                       size_t pw, size_t e, rt_wino **out, gir_error *err)
{
    *out = NULL;
    rt_wino *w = calloc(1, sizeof *w);
    float *u = NULL;
    uint64_t n;
    int nx = e == 4 ? 36 : 16;
    if (!w || !gir_mul_u64((uint64_t)M * (uint64_t)nx, C, &n) || n > SIZE_MAX / sizeof(float) ||
        !(u = malloc((size_t)n * sizeof *u))) {
        free(w);
        return gir_nomem(err);
    }
    w->C = C;
    w->M = M;
    w->H = H;
    w->W = W;
    w->OH = OH;
    w->OW = OW;
    w->ph = ph;
    w->pw = pw;
    w->isa = GIR_GEMM_AUTO;
    w->e = e == 4 ? 4 : 2;
    w->nx = nx;
    w->th = (OH + w->e - 1) / w->e;
    w->tw = (OW + w->e - 1) / w->e;
    w->chunk = wino_split(w);
    if (w->e == 4)
        wino_weights4(wt, M, C, u);
    else
        wino_weights2(wt, M, C, u);
    gir_status st = GIR_OK;
    for (int xi = 0; xi < nx && !st; xi++)
        st = gir_gemm_pack_a(GIR_GEMM_AUTO, false, M, C, u + (size_t)xi * M * C, C, &w->u[xi], err);
    free(u);
    if (st) {
        rt_wino_free(w);
        return st;
    }
    *out = w;
    return GIR_OK;
}

/* One worker's V and products for a chunk (a multiple of 16 floats: each
 * worker's part starts 64-byte aligned). */
static size_t wino_part_floats(const rt_wino *w, size_t chunk)
{
    return (size_t)w->nx * (w->C + w->M) * chunk + 16;
}

/* Tiles a pass with this many workers.  One: w->chunk.  Several: an even
 * number of passes of equal size (but the last), so that two workers
 * each start on half of them (in whole 32s, 196 tiles were a pass of 128
 * and one of 68).  More passes, for a worker done first to take some
 * from a slower one, were slower: ResNet-18 with two threads 1-4% alone,
 * 10% beside another process's busy thread (the transformed weights,
 * read again for each pass). */
static size_t wino_chunk(const rt_wino *w, int workers)
{
    size_t tiles = w->th * w->tw;
    if (workers <= 1 || tiles < 2 * wino_tiles_per_worker(w))
        return w->chunk;
    size_t passes = (tiles + w->chunk - 1) / w->chunk;
    passes += passes % 2;
    return (tiles + passes - 1) / passes;
}

/* Each worker runs whole chunks of its own when it gets this many tiles
 * and at least one chunk. */
static bool wino_by_tiles(const rt_wino *w, int workers)
{
    size_t tiles = w->th * w->tw, chunk = wino_chunk(w, workers);
    return workers > 1 && tiles >= (size_t)workers * wino_tiles_per_worker(w) &&
           (tiles + chunk - 1) / chunk >= (size_t)workers;
}

size_t rt_wino_scratch_floats(const rt_wino *w, int workers)
{
    size_t most = 0;
    for (int k = 1; k <= workers; k++) { /* enough for every count up to workers */
        size_t n = wino_part_floats(w, wino_chunk(w, k)) * (size_t)(wino_by_tiles(w, k) ? k : 1);
        most = n > most ? n : most;
    }
    return most;
}

typedef struct wino_job {
    const rt_wino *w;
    const float *x;
    float *y;
    const float *bias;
    float *v, *p; /* the chunk's transformed input and products */
    size_t t0, nt;
    size_t chunk; /* tiles a pass (wino_chunk) */
    bool accumulate, clamp;
    float lo, hi;
    /* the transforms of the ISA in use (k_wino_body.h) */
    void (*rows)(const struct wino_job *j, size_t c); /* the input rows of channel c, in tiles of e */
    void (*out)(const float *const *s, bool minus, size_t n, bool full_last, float bias, bool accumulate, bool clamp,
                float lo, float hi, float *restrict yr);
    void (*out4)(const float *restrict pm, size_t plane, size_t n, size_t rows, size_t cols, size_t OW, float bias,
                 bool accumulate, bool clamp, float lo, float hi, float *restrict y0);
    gir_threads *th; /* the pool whose workers run the products */
} wino_job;

/* Tiles per tile row the row-at-a-time transforms handle (wider rows take
 * the tile-at-a-time path). */
#define ROW_TILES 512
/* Tiles per run of the F(4x4) input transform (longer runs are split). */
#define ROW_TILES4 256

/* The run of tiles from tile t of the chunk to the end of its tile row or
 * of the chunk: its tile row *ty and first tile column *a; returns its
 * length. */
static inline size_t wino_run(const wino_job *j, size_t t, size_t *ty, size_t *a)
{
    size_t tw = j->w->tw, left = j->t0 + j->nt - t;
    *ty = t / tw;
    *a = t % tw;
    return tw - *a < left ? tw - *a : left;
}

/* rows strips of len floats (stride floats apart from strip):
 * strip[i][u] = x[row0 + i][col0 + u] of the H x W plane xc, 0 outside it. */
static void wino_strips(const float *xc, size_t H, size_t W, ptrdiff_t row0, ptrdiff_t col0, int rows, size_t len,
                        float *strip, size_t stride)
{
    size_t ulo = col0 < 0 ? (size_t)-col0 : 0;
    size_t uhi = (ptrdiff_t)W - col0 < (ptrdiff_t)len ? (size_t)((ptrdiff_t)W - col0) : len;
    if (uhi < ulo)
        uhi = ulo;
    for (int i = 0; i < rows; i++) {
        ptrdiff_t r = row0 + i;
        float *s = strip + (size_t)i * stride;
        if (r < 0 || (size_t)r >= H || ulo == uhi) {
            memset(s, 0, len * sizeof *s);
            continue;
        }
        memset(s, 0, ulo * sizeof *s);
        memcpy(s + ulo, xc + (size_t)r * W + (size_t)(col0 + (ptrdiff_t)ulo), (uhi - ulo) * sizeof *s);
        memset(s + uhi, 0, (len - uhi) * sizeof *s);
    }
}

/* F(4x4, 3x3)'s row transform of one row of the column-transformed strip,
 * tiles [q, n) (d[4q .. 4q + 5] for tile q) into v[j * plane + q], j < 6.
 * Inlined into each ISA's input rows (k_wino_body.h), which vectorise it,
 * and into the AVX-512 one's tail. */
static inline void wino_hrow4(const float *restrict d, size_t q, size_t n, float *restrict v, size_t plane)
{
    float *restrict v0 = v, *restrict v1 = v + plane, *restrict v2 = v + 2 * plane, *restrict v3 = v + 3 * plane,
                    *restrict v4 = v + 4 * plane, *restrict v5 = v + 5 * plane;
    for (; q < n; q++) {
        float d0 = d[4 * q], d1 = d[4 * q + 1], d2 = d[4 * q + 2], d3 = d[4 * q + 3];
        float d4 = d[4 * q + 4], d5 = d[4 * q + 5];
        float t1 = d4 - 4.0f * d2, t2 = d3 - 4.0f * d1, t3 = d4 - d2, t4 = 2.0f * (d3 - d1);
        v0[q] = (4.0f * (d0 - d2) - d2) + d4;
        v1[q] = t1 + t2;
        v2[q] = t1 - t2;
        v3[q] = t3 + t4;
        v4[q] = t3 - t4;
        v5[q] = (4.0f * (d1 - d3) - d3) + d5;
    }
}

#define WINO_SUFFIX generic
#define WINO_ATTR
#include "k_wino_body.h"
#undef WINO_SUFFIX
#undef WINO_ATTR

#if defined(__x86_64__) && defined(__GNUC__)
#define WINO_X86 1
#define WINO_SUFFIX avx2
#define WINO_ATTR __attribute__((target("avx2")))
#include "k_wino_body.h"
#undef WINO_SUFFIX
#undef WINO_ATTR
#include <immintrin.h>

/* F(4x4, 3x3)'s row transform of one row e of the column-transformed strip
 * (n tiles, e[4q .. 4q + 5] for tile q) into v[j * plane + q], j < 6, with
 * AVX-512: 16 tiles at a time, the values of each tile column picked out of
 * four vectors by permutations; the rest through wino_hrow4.  The same
 * operations in the same order as wino_hrow4. */
__attribute__((target("avx512f"))) static void hrow4_avx512(const float *d, size_t n, float *v, size_t plane)
{
    const __m512 four = _mm512_set1_ps(4.0f), two = _mm512_set1_ps(2.0f);
    const __m512i pick[4] = { _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28),
                              _mm512_setr_epi32(1, 5, 9, 13, 17, 21, 25, 29, 1, 5, 9, 13, 17, 21, 25, 29),
                              _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30),
                              _mm512_setr_epi32(3, 7, 11, 15, 19, 23, 27, 31, 3, 7, 11, 15, 19, 23, 27, 31) };
    const __m512i next0 = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    const __m512i next1 = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17);
    size_t q = 0;
    for (; q + 16 <= n; q += 16) {
        const float *e = d + 4 * q;
        __m512 e0 = _mm512_loadu_ps(e), e1 = _mm512_loadu_ps(e + 16), e2 = _mm512_loadu_ps(e + 32),
               e3 = _mm512_loadu_ps(e + 48), e4 = _mm512_maskz_loadu_ps(0x3, e + 64);
        __m512 x[6];
        for (int k = 0; k < 4; k++)
            x[k] = _mm512_shuffle_f32x4(_mm512_permutex2var_ps(e0, pick[k], e1),
                                        _mm512_permutex2var_ps(e2, pick[k], e3), 0x44);
        x[4] = _mm512_permutex2var_ps(x[0], next0, e4); /* e[4q + 4]: the next tile's first */
        x[5] = _mm512_permutex2var_ps(x[1], next1, e4);
        __m512 t1 = _mm512_sub_ps(x[4], _mm512_mul_ps(four, x[2])), t2 = _mm512_sub_ps(x[3], _mm512_mul_ps(four, x[1]));
        __m512 t3 = _mm512_sub_ps(x[4], x[2]), t4 = _mm512_mul_ps(two, _mm512_sub_ps(x[3], x[1]));
        _mm512_storeu_ps(v + q, _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(four, _mm512_sub_ps(x[0], x[2])), x[2]), x[4]));
        _mm512_storeu_ps(v + plane + q, _mm512_add_ps(t1, t2));
        _mm512_storeu_ps(v + 2 * plane + q, _mm512_sub_ps(t1, t2));
        _mm512_storeu_ps(v + 3 * plane + q, _mm512_add_ps(t3, t4));
        _mm512_storeu_ps(v + 4 * plane + q, _mm512_sub_ps(t3, t4));
        _mm512_storeu_ps(v + 5 * plane + q, _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(four, _mm512_sub_ps(x[1], x[3])), x[3]), x[5]));
    }
    wino_hrow4(d, q, n, v, plane);
}

#define WINO_SUFFIX avx512
#define WINO_HROW4 hrow4_avx512
#define WINO_NO_OUT_ROW 1 /* out_row_avx512_x and out_rows4_avx512_x below */
#ifdef __clang__
#define WINO_ATTR __attribute__((target("avx512f"), min_vector_width(512)))
#else
#define WINO_ATTR __attribute__((target("avx512f,prefer-vector-width=512")))
#endif
#include "k_wino_body.h"
#undef WINO_SUFFIX
#undef WINO_ATTR
#undef WINO_NO_OUT_ROW
#undef WINO_HROW4
#endif

#ifdef WINO_X86

/* The output row with AVX-512 intrinsics: 16 tiles at a time, the tail
 * under a mask (runs are short: 28 tiles at 55 columns), the two columns
 * interleaved by a permutation.  The same operations in the same order as
 * k_wino_body.h's loops, clamping as the GEMM's epilogue does. */
__attribute__((target("avx512f"))) static void out_row_avx512_x(const float *const *s, bool minus, size_t n,
                                                                bool full_last, float bias, bool accumulate,
                                                                bool clamp, float lo, float hi, float *restrict yr)
{
    const __m512i ilo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i ihi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    size_t cols = 2 * n - (full_last ? 0 : 1); /* output columns of the run */
    for (size_t q = 0; q < n; q += 16) {
        __mmask16 mk = n - q >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - q)) - 1u);
        __m512 r[4];
        for (int k = 0; k < 4; k++) {
            __m512 a = _mm512_maskz_loadu_ps(mk, s[k] + q), b = _mm512_maskz_loadu_ps(mk, s[4 + k] + q),
                   c = _mm512_maskz_loadu_ps(mk, s[8 + k] + q);
            r[k] = minus ? _mm512_sub_ps(a, _mm512_add_ps(b, c)) : _mm512_add_ps(a, _mm512_add_ps(b, c));
        }
        __m512 u0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(r[0], r[1]), r[2]), vb);
        __m512 u1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(r[1], r[2]), r[3]), vb);
        __m512 y0 = _mm512_permutex2var_ps(u0, ilo, u1), y1 = _mm512_permutex2var_ps(u0, ihi, u1);
        size_t c0 = 2 * q, left = cols - c0;
        __mmask16 m0 = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        __mmask16 m1 = left >= 32 ? (__mmask16)0xFFFF : left > 16 ? (__mmask16)((1u << (left - 16)) - 1u) : 0;
        if (accumulate) {
            y0 = _mm512_add_ps(y0, _mm512_maskz_loadu_ps(m0, yr + c0));
            y1 = _mm512_add_ps(y1, _mm512_maskz_loadu_ps(m1, yr + c0 + 16));
        }
        if (clamp) { /* max/min return the second operand on NaN: NaN stays */
            y0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, y0));
            y1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, y1));
        }
        _mm512_mask_storeu_ps(yr + c0, m0, y0);
        _mm512_mask_storeu_ps(yr + c0 + 16, m1, y1);
    }
}

/* F(4x4, 3x3)'s output rows (k_wino_body.h's out_rows4) with AVX-512: 16
 * tiles at a time, A^T down the columns into 24 vectors, then along each
 * row, the four columns of the tiles interleaved by permutations and
 * stored under masks past cols.  The same operations in the same order. */
__attribute__((target("avx512f"))) static void out_rows4_avx512_x(const float *restrict pm, size_t plane, size_t n,
                                                                  size_t rows, size_t cols, size_t OW, float bias,
                                                                  bool accumulate, bool clamp, float lo, float hi,
                                                                  float *restrict y0)
{
    const __m512i pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i pair_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const __m512i quad_lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), quad_hi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512 two = _mm512_set1_ps(2.0f), four = _mm512_set1_ps(4.0f), eight = _mm512_set1_ps(8.0f);
    for (size_t q = 0; q < n; q += 16) {
        __mmask16 mk = n - q >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - q)) - 1u);
        __m512 r[4][6];
        for (int k = 0; k < 6; k++) {
            const float *p = pm + (size_t)k * plane + q;
            __m512 s0 = _mm512_maskz_loadu_ps(mk, p), s1 = _mm512_maskz_loadu_ps(mk, p + 6 * plane),
                   s2 = _mm512_maskz_loadu_ps(mk, p + 12 * plane), s3 = _mm512_maskz_loadu_ps(mk, p + 18 * plane),
                   s4 = _mm512_maskz_loadu_ps(mk, p + 24 * plane), s5 = _mm512_maskz_loadu_ps(mk, p + 30 * plane);
            __m512 a = _mm512_add_ps(s1, s2), b = _mm512_sub_ps(s1, s2), c = _mm512_add_ps(s3, s4),
                   d = _mm512_sub_ps(s3, s4);
            r[0][k] = _mm512_add_ps(_mm512_add_ps(s0, a), c);
            r[1][k] = _mm512_add_ps(b, _mm512_mul_ps(two, d));
            r[2][k] = _mm512_add_ps(a, _mm512_mul_ps(four, c));
            r[3][k] = _mm512_add_ps(_mm512_add_ps(b, _mm512_mul_ps(eight, d)), s5);
        }
        size_t c0 = 4 * q, left = cols - c0;
        for (size_t i = 0; i < rows; i++) {
            __m512 a = _mm512_add_ps(r[i][1], r[i][2]), b = _mm512_sub_ps(r[i][1], r[i][2]),
                   c = _mm512_add_ps(r[i][3], r[i][4]), d = _mm512_sub_ps(r[i][3], r[i][4]);
            __m512 o0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(r[i][0], a), c), vb);
            __m512 o1 = _mm512_add_ps(_mm512_add_ps(b, _mm512_mul_ps(two, d)), vb);
            __m512 o2 = _mm512_add_ps(_mm512_add_ps(a, _mm512_mul_ps(four, c)), vb);
            __m512 o3 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(b, _mm512_mul_ps(eight, d)), r[i][5]), vb);
            /* (o0, o1) and (o2, o3) in pairs, then the pairs in fours: tile t's four columns at 4t */
            __m512d p01l = _mm512_castps_pd(_mm512_permutex2var_ps(o0, pair_lo, o1));
            __m512d p01h = _mm512_castps_pd(_mm512_permutex2var_ps(o0, pair_hi, o1));
            __m512d p23l = _mm512_castps_pd(_mm512_permutex2var_ps(o2, pair_lo, o3));
            __m512d p23h = _mm512_castps_pd(_mm512_permutex2var_ps(o2, pair_hi, o3));
            __m512 yv[4] = { _mm512_castpd_ps(_mm512_permutex2var_pd(p01l, quad_lo, p23l)),
                             _mm512_castpd_ps(_mm512_permutex2var_pd(p01l, quad_hi, p23l)),
                             _mm512_castpd_ps(_mm512_permutex2var_pd(p01h, quad_lo, p23h)),
                             _mm512_castpd_ps(_mm512_permutex2var_pd(p01h, quad_hi, p23h)) };
            float *y = y0 + i * OW + c0;
            for (size_t g = 0; g < 4 && 16 * g < left; g++) {
                size_t l = left - 16 * g;
                __mmask16 m = l >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << l) - 1u);
                __m512 u = yv[g];
                if (accumulate)
                    u = _mm512_add_ps(u, _mm512_maskz_loadu_ps(m, y + 16 * g));
                if (clamp) /* max/min return the second operand on NaN: NaN stays */
                    u = _mm512_min_ps(vhi, _mm512_max_ps(vlo, u));
                _mm512_mask_storeu_ps(y + 16 * g, m, u);
            }
        }
    }
}
#endif

/* Sets j's transforms for kernel isa (AUTO or unsupported: the best). */
static void wino_fns(int isa, wino_job *j)
{
    j->rows = j->w->e == 4 ? RT_ISA_PICK(isa, input_rows4_generic, input_rows4_avx2, input_rows4_avx512)
                           : RT_ISA_PICK(isa, input_rows_generic, input_rows_avx2, input_rows_avx512);
    j->out = RT_ISA_PICK(isa, out_row_generic, out_row_avx2, out_row_avx512_x);
    j->out4 = RT_ISA_PICK(isa, out_rows4_generic, out_rows4_avx2, out_rows4_avx512_x);
}

/* V[xi][c][t] for channels [c0, c1) of the chunk. */
static void wino_input(void *ctx, size_t c0, size_t c1, int worker)
{
    (void)worker;
    const wino_job *j = ctx;
    const rt_wino *w = j->w;
    const size_t H = w->H, W = w->W, C = w->C, nt = j->nt, plane = C * nt;
    for (size_t c = c0; c < c1; c++) {
        if (w->e == 4 || w->tw <= ROW_TILES) { /* F(4x4)'s rows split longer runs themselves */
            j->rows(j, c);
            continue;
        }
        const float *xc = j->x + c * H * W;
        float *vc = j->v + c * nt;
        for (size_t k = 0; k < nt; k++) {
            size_t t = j->t0 + k, ty = t / w->tw, tx = t % w->tw;
            ptrdiff_t r0 = (ptrdiff_t)(2 * ty) - (ptrdiff_t)w->ph, q0 = (ptrdiff_t)(2 * tx) - (ptrdiff_t)w->pw;
            float d[4][4];
            for (int i = 0; i < 4; i++)
                for (int jj = 0; jj < 4; jj++) {
                    ptrdiff_t r = r0 + i, q = q0 + jj;
                    d[i][jj] = r >= 0 && q >= 0 && (size_t)r < H && (size_t)q < W ? xc[(size_t)r * W + (size_t)q] : 0.0f;
                }
            float e[4][4]; /* B^T d */
            for (int jj = 0; jj < 4; jj++) {
                e[0][jj] = d[0][jj] - d[2][jj];
                e[1][jj] = d[1][jj] + d[2][jj];
                e[2][jj] = d[2][jj] - d[1][jj];
                e[3][jj] = d[1][jj] - d[3][jj];
            }
            for (int i = 0; i < 4; i++) { /* (B^T d) B */
                float *o = vc + k + (size_t)(i * 4) * plane;
                o[0] = e[i][0] - e[i][2];
                o[plane] = e[i][1] + e[i][2];
                o[2 * plane] = e[i][2] - e[i][1];
                o[3 * plane] = e[i][1] - e[i][3];
            }
        }
    }
}

/* Output tiles of the chunk for output channels [m0, m1), a run of tiles of
 * one tile row at a time (contiguous reads of the 16 products). */
static void wino_output(void *ctx, size_t m0, size_t m1, int worker)
{
    (void)worker;
    const wino_job *j = ctx;
    const rt_wino *w = j->w;
    const size_t M = w->M, OH = w->OH, OW = w->OW, nt = j->nt, plane = M * nt;
    if (w->e == 4) {
        for (size_t m = m0; m < m1; m++) {
            const float *pm = j->p + m * nt;
            float *ym = j->y + m * OH * OW, bias = j->bias ? j->bias[m] : 0.0f;
            for (size_t t = j->t0; t < j->t0 + nt;) {
                size_t ty, a, n = wino_run(j, t, &ty, &a), oy = 4 * ty;
                size_t rows = OH - oy < 4 ? OH - oy : 4, cols = OW - 4 * a < 4 * n ? OW - 4 * a : 4 * n;
                j->out4(pm + (t - j->t0), plane, n, rows, cols, OW, bias, j->accumulate, j->clamp, j->lo, j->hi,
                        ym + oy * OW + 4 * a);
                t += n;
            }
        }
        return;
    }
    for (size_t m = m0; m < m1; m++) {
        const float *pm = j->p + m * nt;
        float *ym = j->y + m * OH * OW, bias = j->bias ? j->bias[m] : 0.0f;
        for (size_t t = j->t0; t < j->t0 + nt;) {
            size_t ty, a, n = wino_run(j, t, &ty, &a), b = a + n, k0 = t - j->t0, oy = 2 * ty;
            const float *s[16];
            for (int xi = 0; xi < 16; xi++)
                s[xi] = pm + k0 + (size_t)xi * plane;
            for (int i = 0; i < 2 && oy + (size_t)i < OH; i++)
                j->out(s + 4 * i, i == 1, n, 2 * b <= OW, bias, j->accumulate, j->clamp, j->lo, j->hi,
                       ym + (oy + (size_t)i) * OW + 2 * a);
            t += n;
        }
    }
}

/* Product xi of the chunk: U[xi] (M x C) times V[xi] (C x nt). */
static gir_gemm_args wino_product(const wino_job *j, size_t xi)
{
    const rt_wino *w = j->w;
    gir_gemm_args a = { 0 };
    a.m = w->M;
    a.n = j->nt;
    a.k = w->C;
    a.alpha = 1.0f;
    a.packed_a = &w->u[xi];
    a.b = j->v + xi * w->C * j->nt;
    a.ldb = j->nt;
    a.c = j->p + xi * w->M * j->nt;
    a.ldc = j->nt;
    return a;
}

static void wino_products(void *ctx, size_t x0, size_t x1, int worker)
{
    const wino_job *j = ctx;
    for (size_t xi = x0; xi < x1; xi++) {
        gir_gemm_args a = wino_product(j, xi);
        gir_sgemm_serial(&a, gir_threads_scratch(j->th, worker));
    }
}

/* Chunks [c0, c1) of tiles, each through all three steps in worker w's
 * own part of the scratch: no step waits for another worker.  Split in
 * shares (gir_threads_shares), what a worker transforms stays in its own
 * core's caches, and so does the part of the output it writes.
 * (Splitting each step among the workers instead had every step read
 * what the others wrote: on a machine whose two cores share no cache, a
 * 64-channel 3x3 convolution at 56x56 took as long with two threads as
 * with one.) */
static void wino_chunks(void *ctx, size_t c0, size_t c1, int w)
{
    const wino_job *base = ctx;
    wino_job j = *base;
    const rt_wino *wn = base->w;
    size_t tiles = wn->th * wn->tw;
    j.v = base->v + (size_t)w * wino_part_floats(wn, j.chunk);
    j.p = j.v + (size_t)wn->nx * wn->C * j.chunk;
    for (size_t c = c0; c < c1; c++) {
        j.t0 = c * j.chunk;
        j.nt = tiles - j.t0 < j.chunk ? tiles - j.t0 : j.chunk;
        wino_input(&j, 0, wn->C, w);
        wino_products(&j, 0, (size_t)wn->nx, w);
        wino_output(&j, 0, wn->M, w);
    }
}

void rt_wino_run(const rt_wino *w, const float *x, const float *bias, float *y, const rt_act *act, bool accumulate,
                 float *scratch, gir_threads *th)
{
    size_t tiles = w->th * w->tw, chunk = wino_chunk(w, gir_threads_count(th));
    wino_job j = { w, x, y, bias, scratch, scratch + (size_t)w->nx * w->C * chunk, 0, 0, chunk, accumulate,
                   act->on && act->kind == RT_ACT_CLAMP, act->lo, act->hi, NULL, NULL, NULL, th };
    wino_fns(w->isa, &j);
    if (wino_by_tiles(w, gir_threads_count(th))) { /* each worker its own chunks */
        gir_threads_shares(th, (tiles + chunk - 1) / chunk, 1, wino_chunks, &j);
    } else { /* every worker a part of each step */
        for (size_t t0 = 0; t0 < tiles; t0 += chunk) {
            j.t0 = t0;
            j.nt = tiles - t0 < chunk ? tiles - t0 : chunk;
            rt_parallel_for(th, w->C, 1, 4, wino_input, &j);
            if (gir_threads_count(th) > w->nx) {
                for (size_t xi = 0; xi < (size_t)w->nx; xi++) {
                    gir_gemm_args a = wino_product(&j, xi);
                    gir_sgemm(&a, th);
                }
            } else {
                /* the 16 products are independent: each worker takes whole
                 * ones (one barrier instead of one per product) */
                rt_parallel_for(th, (size_t)w->nx, 1, 1, wino_products, &j);
            }
            rt_parallel_for(th, w->M, 1, 4, wino_output, &j);
        }
    }
    if (act->on && act->kind != RT_ACT_CLAMP)
        rt_act_apply_rows(act, th, y, w->M, w->OH * w->OW, w->OH * w->OW);
}
