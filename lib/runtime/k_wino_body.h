/* Body of the Winograd row transforms, compiled once per ISA by
 * k_winograd.c with WINO_SUFFIX and WINO_ATTR defined (no include guard on
 * purpose).  The inner loops have no branches and restrict-qualified
 * operands, so the compiler vectorises them for the ISA the functions are
 * compiled for (WINO_NO_OUT_ROW: the caller writes its own output row);
 * every value is the same sum of the same terms in the same
 * order on every ISA (additions and subtractions only), so all copies give
 * bit-identical results. */

#define WINO_CAT2(a, b) a##_##b
#define WINO_CAT(a, b) WINO_CAT2(a, b)

/* V[xi][c][t] for the chunk's tiles of channel c, one run of tiles of a tile
 * row at a time: the four input rows of the run are first copied into
 * zero-padded strips (padding and rows outside the input read as 0), then
 * the row transform B^T d runs on even and odd columns, then the column
 * transform, all along contiguous arrays. */
WINO_ATTR static void WINO_CAT(input_rows, WINO_SUFFIX)(const wino_job *j, size_t c)
{
    const rt_wino *w = j->w;
    const size_t H = w->H, W = w->W, nt = j->nt, plane = w->C * nt;
    const float *xc = j->x + c * H * W;
    float *vc = j->v + c * nt;
    float strip[4][2 * (ROW_TILES + 1)];
    float ev[4][ROW_TILES + 1], od[4][ROW_TILES + 1];
    for (size_t t = j->t0; t < j->t0 + nt;) {
        size_t ty, a, n = wino_run(j, t, &ty, &a), len = 2 * (n + 1), k0 = t - j->t0;
        /* strip[i][u] = x[2ty - ph + i][2a - pw + u] (0 outside the input) */
        wino_strips(xc, H, W, (ptrdiff_t)(2 * ty) - (ptrdiff_t)w->ph, (ptrdiff_t)(2 * a) - (ptrdiff_t)w->pw, 4, len,
                    strip[0], sizeof strip[0] / sizeof strip[0][0]);
        {
            const float *restrict s0 = strip[0], *restrict s1 = strip[1], *restrict s2 = strip[2],
                                  *restrict s3 = strip[3];
            float *restrict e0 = ev[0], *restrict e1 = ev[1], *restrict e2 = ev[2], *restrict e3 = ev[3];
            float *restrict o0 = od[0], *restrict o1 = od[1], *restrict o2 = od[2], *restrict o3 = od[3];
            for (size_t q = 0; q <= n; q++) {
                e0[q] = s0[2 * q] - s2[2 * q];
                e1[q] = s1[2 * q] + s2[2 * q];
                e2[q] = s2[2 * q] - s1[2 * q];
                e3[q] = s1[2 * q] - s3[2 * q];
                o0[q] = s0[2 * q + 1] - s2[2 * q + 1];
                o1[q] = s1[2 * q + 1] + s2[2 * q + 1];
                o2[q] = s2[2 * q + 1] - s1[2 * q + 1];
                o3[q] = s1[2 * q + 1] - s3[2 * q + 1];
            }
        }
        for (int i = 0; i < 4; i++) {
            float *restrict v0 = vc + k0 + (size_t)(i * 4) * plane, *restrict v1 = v0 + plane,
                            *restrict v2 = v1 + plane, *restrict v3 = v2 + plane;
            const float *restrict e = ev[i], *restrict o = od[i];
            for (size_t q = 0; q < n; q++) {
                v0[q] = e[q] - e[q + 1];
                v1[q] = o[q] + e[q + 1];
                v2[q] = e[q + 1] - o[q];
                v3[q] = o[q] - o[q + 1];
            }
        }
        t += n;
    }
}

#ifndef WINO_NO_OUT_ROW
/* One output row of n tiles: yr[2q], yr[2q + 1] from the 12 product rows
 * s[0..12) of output row i of the tiles (row 0 of A^T: s0 + (s4 + s8), row
 * 1: s4 - (s8 + s12)); column 2q + 1 of the last tile only when
 * full_last (the output has it).  With accumulate the stored
 * values are added; with clamp the results are clamped to [lo, hi] last. */
WINO_ATTR static void WINO_CAT(out_row, WINO_SUFFIX)(const float *const *s, bool minus, size_t n, bool full_last,
                                                    float bias, bool accumulate, bool clamp, float lo, float hi,
                                                    float *restrict yr)
{
    enum { BLK = 256 };
    float t0[BLK], t1[BLK];
    for (size_t q0 = 0; q0 < n; q0 += BLK) {
        size_t m = n - q0 < BLK ? n - q0 : BLK;
        const float *restrict a0 = s[0] + q0, *restrict a1 = s[1] + q0, *restrict a2 = s[2] + q0,
                              *restrict a3 = s[3] + q0;
        const float *restrict b0 = s[4] + q0, *restrict b1 = s[5] + q0, *restrict b2 = s[6] + q0,
                              *restrict b3 = s[7] + q0;
        const float *restrict c0 = s[8] + q0, *restrict c1 = s[9] + q0, *restrict c2 = s[10] + q0,
                              *restrict c3 = s[11] + q0;
        float *restrict u0 = t0, *restrict u1 = t1;
        if (minus) {
            for (size_t q = 0; q < m; q++) {
                float r0 = a0[q] - (b0[q] + c0[q]), r1 = a1[q] - (b1[q] + c1[q]);
                float r2 = a2[q] - (b2[q] + c2[q]), r3 = a3[q] - (b3[q] + c3[q]);
                u0[q] = r0 + r1 + r2 + bias;
                u1[q] = r1 - r2 - r3 + bias;
            }
        } else {
            for (size_t q = 0; q < m; q++) {
                float r0 = a0[q] + (b0[q] + c0[q]), r1 = a1[q] + (b1[q] + c1[q]);
                float r2 = a2[q] + (b2[q] + c2[q]), r3 = a3[q] + (b3[q] + c3[q]);
                u0[q] = r0 + r1 + r2 + bias;
                u1[q] = r1 - r2 - r3 + bias;
            }
        }
        float *restrict y = yr + 2 * q0;
        /* tiles whose second column exists */
        size_t mf = q0 + m == n && !full_last ? m - 1 : m;
        if (accumulate) {
            for (size_t q = 0; q < mf; q++) {
                u0[q] += y[2 * q];
                u1[q] += y[2 * q + 1];
            }
            if (mf < m)
                u0[mf] += y[2 * mf];
        }
        if (clamp) {
            for (size_t q = 0; q < m; q++) {
                u0[q] = u0[q] < lo ? lo : (u0[q] > hi ? hi : u0[q]);
                u1[q] = u1[q] < lo ? lo : (u1[q] > hi ? hi : u1[q]);
            }
        }
        for (size_t q = 0; q < mf; q++) {
            y[2 * q] = u0[q];
            y[2 * q + 1] = u1[q];
        }
        if (mf < m)
            y[2 * mf] = u0[mf];
    }
}

#endif

/* F(4x4, 3x3): V[xi][c][t] for the chunk's tiles of channel c, a run of at
 * most ROW_TILES4 tiles of a tile row at a time.  The six input rows of the
 * run go into zero-padded strips, the column transform B^T d runs along
 * them, then the row transform on every fourth column.  B^T's rows are
 *   4 0 -5 0 1 0 | 0 -4 -4 1 1 0 | 0 4 -4 -1 1 0 | 0 -2 -1 2 1 0 |
 *   0 2 -1 -2 1 0 | 0 4 0 -5 0 1,
 * written with multiplications by 2 and 4 only (exact, so a fused
 * multiply-add gives the same result as the two operations) and 5a as
 * 4a + a: every ISA's copy gives the same bits. */
WINO_ATTR static void WINO_CAT(input_rows4, WINO_SUFFIX)(const wino_job *j, size_t c)
{
    const rt_wino *w = j->w;
    const size_t H = w->H, W = w->W, nt = j->nt, plane = w->C * nt;
    const float *xc = j->x + c * H * W;
    float *vc = j->v + c * nt;
    float strip[6][4 * ROW_TILES4 + 2], e[6][4 * ROW_TILES4 + 2];
    for (size_t t = j->t0; t < j->t0 + nt;) {
        size_t ty, a, n = wino_run(j, t, &ty, &a);
        n = n < ROW_TILES4 ? n : ROW_TILES4;
        size_t len = 4 * n + 2, k0 = t - j->t0;
        /* strip[i][u] = x[4ty - ph + i][4a - pw + u] (0 outside the input) */
        wino_strips(xc, H, W, (ptrdiff_t)(4 * ty) - (ptrdiff_t)w->ph, (ptrdiff_t)(4 * a) - (ptrdiff_t)w->pw, 6, len,
                    strip[0], sizeof strip[0] / sizeof strip[0][0]);
        {
            const float *restrict s0 = strip[0], *restrict s1 = strip[1], *restrict s2 = strip[2],
                                  *restrict s3 = strip[3], *restrict s4 = strip[4], *restrict s5 = strip[5];
            float *restrict e0 = e[0], *restrict e1 = e[1], *restrict e2 = e[2], *restrict e3 = e[3],
                            *restrict e4 = e[4], *restrict e5 = e[5];
            for (size_t u = 0; u < len; u++) {
                float t1 = s4[u] - 4.0f * s2[u], t2 = s3[u] - 4.0f * s1[u];
                float t3 = s4[u] - s2[u], t4 = 2.0f * (s3[u] - s1[u]);
                e0[u] = (4.0f * (s0[u] - s2[u]) - s2[u]) + s4[u];
                e1[u] = t1 + t2;
                e2[u] = t1 - t2;
                e3[u] = t3 + t4;
                e4[u] = t3 - t4;
                e5[u] = (4.0f * (s1[u] - s3[u]) - s3[u]) + s5[u];
            }
        }
        for (int i = 0; i < 6; i++) {
            float *v = vc + k0 + (size_t)(i * 6) * plane;
#ifdef WINO_HROW4
            WINO_HROW4(e[i], n, v, plane);
#else
            wino_hrow4(e[i], 0, n, v, plane);
#endif
        }
        t += n;
    }
}

#ifndef WINO_NO_OUT_ROW
/* F(4x4, 3x3): output rows [4ty, 4ty + rows) and columns [0, cols) of a
 * run of n tiles from the 36 products pm[xi * plane + q] of output channel
 * m (y0: row 4ty, column 4a of the run).  A^T's rows are
 * 1 1 1 1 1 0 | 0 1 -1 2 -2 0 | 0 1 1 4 4 0 | 0 1 -1 8 -8 1 (powers of
 * two only).  Bias, then the stored value with accumulate, then the clamp,
 * as the F(2x2) rows. */
WINO_ATTR static void WINO_CAT(out_rows4, WINO_SUFFIX)(const float *restrict pm, size_t plane, size_t n, size_t rows,
                                                      size_t cols, size_t OW, float bias, bool accumulate,
                                                      bool clamp, float lo, float hi, float *restrict y0)
{
    enum { BLK = 64 };
    float t[16][BLK], r[4][6][BLK];
    for (size_t q0 = 0; q0 < n; q0 += BLK) {
        size_t m = n - q0 < BLK ? n - q0 : BLK;
        for (int k = 0; k < 6; k++) { /* A^T down column k of the tiles */
            const float *restrict s0 = pm + (size_t)k * plane + q0, *restrict s1 = s0 + 6 * plane,
                                  *restrict s2 = s0 + 12 * plane, *restrict s3 = s0 + 18 * plane,
                                  *restrict s4 = s0 + 24 * plane, *restrict s5 = s0 + 30 * plane;
            float *restrict r0 = r[0][k], *restrict r1 = r[1][k], *restrict r2 = r[2][k], *restrict r3 = r[3][k];
            for (size_t q = 0; q < m; q++) {
                float a = s1[q] + s2[q], b = s1[q] - s2[q], cc = s3[q] + s4[q], d = s3[q] - s4[q];
                r0[q] = (s0[q] + a) + cc;
                r1[q] = b + 2.0f * d;
                r2[q] = a + 4.0f * cc;
                r3[q] = (b + 8.0f * d) + s5[q];
            }
        }
        for (int i = 0; i < 4; i++) { /* then A^T along row i */
            const float *restrict c0 = r[i][0], *restrict c1 = r[i][1], *restrict c2 = r[i][2], *restrict c3 = r[i][3],
                                  *restrict c4 = r[i][4], *restrict c5 = r[i][5];
            float *restrict o0 = t[4 * i], *restrict o1 = t[4 * i + 1], *restrict o2 = t[4 * i + 2],
                            *restrict o3 = t[4 * i + 3];
            for (size_t q = 0; q < m; q++) {
                float a = c1[q] + c2[q], b = c1[q] - c2[q], cc = c3[q] + c4[q], d = c3[q] - c4[q];
                o0[q] = ((c0[q] + a) + cc) + bias;
                o1[q] = (b + 2.0f * d) + bias;
                o2[q] = (a + 4.0f * cc) + bias;
                o3[q] = ((b + 8.0f * d) + c5[q]) + bias;
            }
        }
        size_t left = cols - 4 * q0, mf = left / 4 < m ? left / 4 : m; /* tiles with all 4 columns */
        for (size_t i = 0; i < rows; i++) {
            float *restrict y = y0 + i * OW + 4 * q0;
            float *restrict u0 = t[4 * i], *restrict u1 = t[4 * i + 1], *restrict u2 = t[4 * i + 2],
                            *restrict u3 = t[4 * i + 3];
            if (accumulate)
                for (size_t q = 0; q < mf; q++) {
                    u0[q] += y[4 * q];
                    u1[q] += y[4 * q + 1];
                    u2[q] += y[4 * q + 2];
                    u3[q] += y[4 * q + 3];
                }
            if (clamp)
                for (size_t q = 0; q < mf; q++) {
                    u0[q] = u0[q] < lo ? lo : (u0[q] > hi ? hi : u0[q]);
                    u1[q] = u1[q] < lo ? lo : (u1[q] > hi ? hi : u1[q]);
                    u2[q] = u2[q] < lo ? lo : (u2[q] > hi ? hi : u2[q]);
                    u3[q] = u3[q] < lo ? lo : (u3[q] > hi ? hi : u3[q]);
                }
            for (size_t q = 0; q < mf; q++) {
                y[4 * q] = u0[q];
                y[4 * q + 1] = u1[q];
                y[4 * q + 2] = u2[q];
                y[4 * q + 3] = u3[q];
            }
            if (mf < m) /* the last tile of the output row, partial */
                for (size_t k = 0; k < left - 4 * mf; k++) {
                    float v = t[4 * i + k][mf];
                    if (accumulate)
                        v += y[4 * mf + k];
                    if (clamp)
                        v = v < lo ? lo : (v > hi ? hi : v);
                    y[4 * mf + k] = v;
                }
        }
    }
}
#endif

#undef WINO_CAT
#undef WINO_CAT2
