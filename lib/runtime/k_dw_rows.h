/* Body of the row-blocked depthwise kernels of k_dw.c, compiled once per
 * ISA with these defined (no include guard on purpose):
 *   DWR_NAME   the function's name      DWR_ATTR  its target attribute
 *   VF         the float vector type    VL        its lanes
 *   VMASK      a lane mask type         VMASK_N(n)  the first n lanes
 *   VMASK_RANGE(lo, hi)  the lanes in [lo, hi) (signed; may be empty)
 *   VLOAD(p), VMLOAD(m, p), VMSTORE(p, m, v), VSET1(x), VFMA(a, b, c),
 *   VADD(a, b), VCLAMP(v, lo, hi)
 *   DWD_NAME   the name of the unpadded stride-1 variant
 * Two output rows at a time: every input row loaded serves the taps of
 * both, the taps' weights are broadcast from memory (on AVX-512 as the
 * FMA's operand), and with the kernel size and strides constant (the
 * always_inline function called with literals) every loop unrolls.  The
 * parameters are undefined at the end. */

DWR_ATTR __attribute__((always_inline)) static inline void DWR_NAME(const rt_dwpad *a, const float *p, const float *w,
                                                                   float bias, float *y, const size_t KH,
                                                                   const size_t KW, const size_t SH, const size_t SW)
{
    const size_t OH = a->oh, OW = a->ow, ps = a->pstride, half = ps / 2;
    const VF vb = VSET1(bias);
    /* up to 5x5 the weights stay in registers (FMAs then load only the
     * input); wider windows broadcast them from memory */
    const bool hoist = KH * KW <= 25;
    VF wv[25];
    for (size_t i = 0; i < (hoist ? KH * KW : 0); i++)
        wv[i] = VSET1(w[i]);
    for (size_t oh = 0; oh < OH; oh += 2) {
        const float *pin = p + oh * SH * ps;
        float *y0 = y + oh * OW, *y1 = y0 + OW;
        bool two = oh + 1 < OH;
        for (size_t ow = 0; ow < OW; ow += VL) {
            size_t n = OW - ow < VL ? OW - ow : VL;
            VMASK m = VMASK_N(n);
            VF acc0 = vb, acc1 = vb;
            if (a->accumulate) {
                acc0 = VADD(acc0, VMLOAD(m, y0 + ow));
                if (two)
                    acc1 = VADD(acc1, VMLOAD(m, y1 + ow));
            }
#pragma GCC unroll 16
            for (size_t ir = 0; ir < SH + KH; ir++) {
                const float *pr = pin + ir * ps + ow;
#pragma GCC unroll 8
                for (size_t kw = 0; kw < KW; kw++) {
                    /* stride 2: column 2 ow + kw is in phase kw % 2 at ow + kw / 2 */
                    VF v = SW == 1 ? VLOAD(pr + kw) : VLOAD(pr + (kw & 1) * half + kw / 2);
                    if (ir < KH)
                        acc0 = VFMA(hoist ? wv[ir * KW + kw] : VSET1(w[ir * KW + kw]), v, acc0);
                    if (ir >= SH && ir - SH < KH)
                        acc1 = VFMA(hoist ? wv[(ir - SH) * KW + kw] : VSET1(w[(ir - SH) * KW + kw]), v, acc1);
                }
            }
            if (a->act) {
                acc0 = VCLAMP(acc0, a->lo, a->hi);
                acc1 = VCLAMP(acc1, a->lo, a->hi);
            }
            VMSTORE(y0 + ow, m, acc0);
            if (two)
                VMSTORE(y1 + ow, m, acc1);
        }
    }
}


/* Stride 1 straight from the unpadded plane x (h x w): rows above or below
 * it are skipped, and each tap's load is masked to the columns inside the
 * row (masked lanes are not read), so no padded copy is made.  KW <= 7. */
DWR_ATTR __attribute__((always_inline)) static inline void DWD_NAME(const rt_dwpad *a, const float *x, const float *w,
                                                                   float bias, float *y, const size_t KH,
                                                                   const size_t KW)
{
    const size_t H = a->h, W = a->w, OH = a->oh, OW = a->ow, ph = a->ph, pw = a->pw;
    const VF vb = VSET1(bias);
    /* up to 5x5 the weights stay in registers (FMAs then load only the
     * input); wider windows broadcast them from memory */
    const bool hoist = KH * KW <= 25;
    VF wv[25];
    for (size_t i = 0; i < (hoist ? KH * KW : 0); i++)
        wv[i] = VSET1(w[i]);
    for (size_t oh = 0; oh < OH; oh += 2) {
        float *y0 = y + oh * OW, *y1 = y0 + OW;
        bool two = oh + 1 < OH;
        for (size_t ow = 0; ow < OW; ow += VL) {
            size_t n = OW - ow < VL ? OW - ow : VL;
            VMASK m = VMASK_N(n), mk[7];
            /* tap kw reads columns ow + kw - pw + lane: lanes [pw - ow - kw, w + pw - ow - kw) are inside */
#pragma GCC unroll 8
            for (size_t kw = 0; kw < KW; kw++)
                mk[kw] = VMASK_RANGE((ptrdiff_t)(pw - kw) - (ptrdiff_t)ow, (ptrdiff_t)(W + pw - kw) - (ptrdiff_t)ow);
            VF acc0 = vb, acc1 = vb;
            if (a->accumulate) {
                acc0 = VADD(acc0, VMLOAD(m, y0 + ow));
                if (two)
                    acc1 = VADD(acc1, VMLOAD(m, y1 + ow));
            }
#pragma GCC unroll 16
            for (size_t ir = 0; ir < 1 + KH; ir++) {
                size_t ih = oh + ir - ph; /* wraps above the plane: then >= H */
                if (oh + ir < ph || ih >= H)
                    continue;
                /* the address of column ow - pw of row ih, formed without
                 * pointer arithmetic outside x (lanes there are masked) */
                uintptr_t row = (uintptr_t)(x + ih * W) + (uintptr_t)ow * sizeof(float) - pw * sizeof(float);
#pragma GCC unroll 8
                for (size_t kw = 0; kw < KW; kw++) {
                    VF v = VMLOAD(mk[kw], (const float *)(row + kw * sizeof(float)));
                    if (ir < KH)
                        acc0 = VFMA(hoist ? wv[ir * KW + kw] : VSET1(w[ir * KW + kw]), v, acc0);
                    if (ir >= 1)
                        acc1 = VFMA(hoist ? wv[(ir - 1) * KW + kw] : VSET1(w[(ir - 1) * KW + kw]), v, acc1);
                }
            }
            if (a->act) {
                acc0 = VCLAMP(acc0, a->lo, a->hi);
                acc1 = VCLAMP(acc1, a->lo, a->hi);
            }
            VMSTORE(y0 + ow, m, acc0);
            if (two)
                VMSTORE(y1 + ow, m, acc1);
        }
    }
}

#undef VF
#undef VL
#undef VMASK
#undef VMASK_N
#undef VLOAD
#undef VMLOAD
#undef VMSTORE
#undef VSET1
#undef VFMA
#undef VADD
#undef VCLAMP
#undef DWR_NAME
#undef DWR_ATTR
#undef DWD_NAME
#undef VMASK_RANGE
