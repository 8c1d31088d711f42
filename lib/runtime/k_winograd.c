/* 3x3 stride-1 convolution by Winograd's minimal filtering F(2x2, 3x3):
 * each 2x2 output tile comes from a 4x4 input tile as
 *   Y = A^T [ (G g G^T) .* (B^T d B) ] A
 * with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5;
 * .5 -.5 .5; 0 0 1], A^T = [1 1 1 0; 0 1 -1 -1]: 16 multiplications per
 * tile and channel pair instead of 36.  Summed over input channels, the
 * 16 element-wise products are 16 matrix products U[xi] (M x C, the
 * transformed weights, packed once) times V[xi] (C x tiles, the transformed
 * input), done by gir_sgemm over chunks of tiles small enough to stay in
 * cache.  All transform coefficients are 0, +-1 and +-0.5 (exact in
 * float): the rounding differs from direct summation by a few ulp of the
 * partial sums, well inside the runtime's 1e-4 checks. */
#include "gemm.h"
#include "rt.h"

#include <stdlib.h>

void rt_wino_free(rt_wino *w)
{
    if (!w)
        return;
    for (int i = 0; i < 16; i++)
        gir_gemm_packed_free(&w->u[i]);
    free(w);
}

bool rt_wino_applies(size_t C, size_t M, size_t OH, size_t OW)
{
    size_t tiles = ((OH + 1) / 2) * ((OW + 1) / 2);
    /* small products run the GEMM below its register tile: im2col wins */
    return C >= 16 && M >= 16 && tiles >= 40;
}

gir_status rt_wino_new(const float *wt, size_t M, size_t C, size_t H, size_t W, size_t OH, size_t OW, size_t ph,
                       size_t pw, rt_wino **out, gir_error *err)
{
    *out = NULL;
    rt_wino *w = calloc(1, sizeof *w);
    float *u = NULL;
    uint64_t n;
    if (!w || !gir_mul_u64((uint64_t)M * 16, C, &n) || n > SIZE_MAX / sizeof(float) ||
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
    w->th = (OH + 1) / 2;
    w->tw = (OW + 1) / 2;
    size_t tiles = w->th * w->tw, per = 16 * (C + M);
    size_t chunk = ((size_t)1 << 19) / per; /* V and the products of a chunk: ~2 MiB */
    chunk = chunk / 16 * 16;
    if (chunk < 32)
        chunk = 32;
    w->chunk = chunk < tiles ? chunk : tiles;
    /* U[xi][m][c] = (G g G^T)[xi] */
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
    gir_status st = GIR_OK;
    for (int xi = 0; xi < 16 && !st; xi++)
        st = gir_gemm_pack_a(GIR_GEMM_AUTO, false, M, C, u + (size_t)xi * M * C, C, &w->u[xi], err);
    free(u);
    if (st) {
        rt_wino_free(w);
        return st;
    }
    *out = w;
    return GIR_OK;
}

size_t rt_wino_scratch_floats(const rt_wino *w)
{
    return 16 * (w->C + w->M) * w->chunk + 16;
}

typedef struct wino_job {
    const rt_wino *w;
    const float *x;
    float *y;
    const float *bias;
    float *v, *p; /* the chunk's transformed input and products */
    size_t t0, nt;
    bool accumulate, clamp;
    float lo, hi;
} wino_job;

/* Tiles per tile row the row-at-a-time transforms handle (wider rows take
 * the tile-at-a-time path). */
#define ROW_TILES 512

/* V[xi][c][t] for tiles [t0, t0 + nt) of channel c, one tile row at a time:
 * the row transform B^T d runs along whole input rows, the column transform
 * on even/odd de-interleaved columns, so both read and write contiguously. */
static void input_rows(const wino_job *j, size_t c)
{
    const rt_wino *w = j->w;
    const size_t H = w->H, W = w->W, nt = j->nt, plane = w->C * nt, tw = w->tw;
    const float *xc = j->x + c * H * W;
    float *vc = j->v + c * nt;
    float ev[4][ROW_TILES + 1], od[4][ROW_TILES + 1];
    for (size_t t = j->t0; t < j->t0 + nt;) {
        size_t ty = t / tw, a = t % tw, b = tw - a < j->t0 + nt - t ? tw : a + (j->t0 + nt - t);
        /* rows 2ty - ph + i, columns 2a - pw .. 2b + 1 - pw */
        const float *rows[4];
        for (int i = 0; i < 4; i++) {
            ptrdiff_t r = (ptrdiff_t)(2 * ty) - (ptrdiff_t)w->ph + i;
            rows[i] = r >= 0 && (size_t)r < H ? xc + (size_t)r * W : NULL;
        }
        for (size_t q2 = a; q2 <= b; q2++) {
            for (int par = 0; par < 2; par++) {
                ptrdiff_t col = (ptrdiff_t)(2 * q2 + (size_t)par) - (ptrdiff_t)w->pw;
                bool in = col >= 0 && (size_t)col < W;
                float d0 = in && rows[0] ? rows[0][col] : 0.0f, d1 = in && rows[1] ? rows[1][col] : 0.0f;
                float d2 = in && rows[2] ? rows[2][col] : 0.0f, d3 = in && rows[3] ? rows[3][col] : 0.0f;
                float(*dst)[ROW_TILES + 1] = par ? od : ev;
                dst[0][q2 - a] = d0 - d2;
                dst[1][q2 - a] = d1 + d2;
                dst[2][q2 - a] = d2 - d1;
                dst[3][q2 - a] = d1 - d3;
            }
        }
        size_t n = b - a, k0 = t - j->t0;
        for (int i = 0; i < 4; i++) {
            float *o0 = vc + k0 + (size_t)(i * 4) * plane, *o1 = o0 + plane, *o2 = o1 + plane, *o3 = o2 + plane;
            const float *e = ev[i], *o = od[i];
            for (size_t q = 0; q < n; q++) {
                o0[q] = e[q] - e[q + 1];
                o1[q] = o[q] + e[q + 1];
                o2[q] = e[q + 1] - o[q];
                o3[q] = o[q] - o[q + 1];
            }
        }
        t += n;
    }
}

/* V[xi][c][t] for channels [c0, c1) of the chunk. */
static void wino_input(void *ctx, size_t c0, size_t c1, int worker)
{
    (void)worker;
    const wino_job *j = ctx;
    const rt_wino *w = j->w;
    const size_t H = w->H, W = w->W, C = w->C, nt = j->nt, plane = C * nt;
    for (size_t c = c0; c < c1; c++) {
        if (w->tw <= ROW_TILES) {
            input_rows(j, c);
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
    const size_t M = w->M, OH = w->OH, OW = w->OW, nt = j->nt, plane = M * nt, tw = w->tw;
    for (size_t m = m0; m < m1; m++) {
        const float *pm = j->p + m * nt;
        float *ym = j->y + m * OH * OW, bias = j->bias ? j->bias[m] : 0.0f;
        for (size_t t = j->t0; t < j->t0 + nt;) {
            size_t ty = t / tw, a = t % tw, b = tw - a < j->t0 + nt - t ? tw : a + (j->t0 + nt - t);
            size_t n = b - a, k0 = t - j->t0, oy = 2 * ty;
            const float *s[16];
            for (int xi = 0; xi < 16; xi++)
                s[xi] = pm + k0 + (size_t)xi * plane;
            for (int i = 0; i < 2 && oy + (size_t)i < OH; i++) {
                float *yr = ym + (oy + (size_t)i) * OW;
                /* row 0 of A^T: s0 + (s4 + s8); row 1: s4 - (s8 + s12) */
                const float *const *A = s + 4 * i, *const *B = s + 4 * i + 4, *const *Cc = s + 4 * i + 8;
                const float sg = i ? -1.0f : 1.0f;
                for (size_t q = 0; q < n; q++) {
                    float r0 = A[0][q] + sg * (B[0][q] + Cc[0][q]), r1 = A[1][q] + sg * (B[1][q] + Cc[1][q]);
                    float r2 = A[2][q] + sg * (B[2][q] + Cc[2][q]), r3 = A[3][q] + sg * (B[3][q] + Cc[3][q]);
                    size_t ox = 2 * (a + q);
                    float o0 = r0 + r1 + r2 + bias, o1 = r1 - r2 - r3 + bias;
                    if (j->accumulate) {
                        o0 += yr[ox];
                        if (ox + 1 < OW)
                            o1 += yr[ox + 1];
                    }
                    if (j->clamp) {
                        o0 = o0 < j->lo ? j->lo : (o0 > j->hi ? j->hi : o0);
                        o1 = o1 < j->lo ? j->lo : (o1 > j->hi ? j->hi : o1);
                    }
                    yr[ox] = o0;
                    if (ox + 1 < OW)
                        yr[ox + 1] = o1;
                }
            }
            t += n;
        }
    }
}

void rt_wino_run(const rt_wino *w, const float *x, const float *bias, float *y, const rt_act *act, bool accumulate,
                 float *scratch, gir_threads *th)
{
    size_t tiles = w->th * w->tw;
    wino_job j = { w, x, y, bias, scratch, scratch + 16 * w->C * w->chunk, 0, 0, accumulate,
                   act->on && act->kind == RT_ACT_CLAMP, act->lo, act->hi };
    for (size_t t0 = 0; t0 < tiles; t0 += w->chunk) {
        j.t0 = t0;
        j.nt = tiles - t0 < w->chunk ? tiles - t0 : w->chunk;
        rt_parallel_for(th, w->C, 1, 4, wino_input, &j);
        for (int xi = 0; xi < 16; xi++) {
            gir_gemm_args a = { 0 };
            a.m = w->M;
            a.n = j.nt;
            a.k = w->C;
            a.alpha = 1.0f;
            a.packed_a = &w->u[xi];
            a.b = j.v + (size_t)xi * w->C * j.nt;
            a.ldb = j.nt;
            a.c = j.p + (size_t)xi * w->M * j.nt;
            a.ldc = j.nt;
            gir_sgemm(&a, th);
        }
        rt_parallel_for(th, w->M, 1, 4, wino_output, &j);
    }
    if (act->on && act->kind != RT_ACT_CLAMP)
        rt_act_apply_rows(act, th, y, w->M, w->OH * w->OW, w->OH * w->OW);
}
