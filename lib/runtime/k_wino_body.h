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
    const size_t H = w->H, W = w->W, nt = j->nt, plane = w->C * nt, tw = w->tw;
    const float *xc = j->x + c * H * W;
    float *vc = j->v + c * nt;
    float strip[4][2 * (ROW_TILES + 1)];
    float ev[4][ROW_TILES + 1], od[4][ROW_TILES + 1];
    for (size_t t = j->t0; t < j->t0 + nt;) {
        size_t ty = t / tw, a = t % tw, b = tw - a < j->t0 + nt - t ? tw : a + (j->t0 + nt - t);
        size_t n = b - a, len = 2 * (n + 1), k0 = t - j->t0;
        /* strip[i][u] = x[2ty - ph + i][2a - pw + u] (0 outside the input) */
        ptrdiff_t col0 = (ptrdiff_t)(2 * a) - (ptrdiff_t)w->pw;
        size_t ulo = col0 < 0 ? (size_t)-col0 : 0, uhi = (ptrdiff_t)W - col0 < (ptrdiff_t)len ? (size_t)((ptrdiff_t)W - col0) : len;
        if (uhi < ulo)
            uhi = ulo;
        for (int i = 0; i < 4; i++) {
            ptrdiff_t r = (ptrdiff_t)(2 * ty) - (ptrdiff_t)w->ph + i;
            float *s = strip[i];
            if (r < 0 || (size_t)r >= H || ulo == uhi) {
                memset(s, 0, len * sizeof *s);
                continue;
            }
            memset(s, 0, ulo * sizeof *s);
            memcpy(s + ulo, xc + (size_t)r * W + (size_t)(col0 + (ptrdiff_t)ulo), (uhi - ulo) * sizeof *s);
            memset(s + uhi, 0, (len - uhi) * sizeof *s);
        }
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

#undef WINO_CAT
#undef WINO_CAT2
