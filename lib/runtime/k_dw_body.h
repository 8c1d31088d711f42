/* Body of the depthwise-convolution plane kernel, compiled once per ISA by
 * k_conv.c with DW_NAME, DW_ATTR and DW_FMA defined (no include guard on
 * purpose).  The loops are written so the compiler vectorises the inner
 * one for the ISA the function is compiled for. */

DW_ATTR static void DW_NAME(const rt_dwplane *a, const float *restrict x, const float *restrict w, float bias,
                            float *restrict y)
{
    const size_t H = a->h, W = a->w, OH = a->oh, OW = a->ow, KH = a->kh, KW = a->kw;
    const size_t sh = a->sh, sw = a->sw, dh = a->dh, dw = a->dw, ph = a->ph, pw = a->pw;
    for (size_t oh = 0; oh < OH; oh++) {
        float *restrict yr = y + oh * OW;
        if (a->accumulate) {
            for (size_t ow = 0; ow < OW; ow++)
                yr[ow] += bias;
        } else {
            for (size_t ow = 0; ow < OW; ow++)
                yr[ow] = bias;
        }
        for (size_t kh = 0; kh < KH; kh++) {
            /* ih = oh*sh - ph + kh*dh, skipped when outside the input */
            size_t top = oh * sh + kh * dh;
            if (top < ph || top - ph >= H)
                continue;
            const float *restrict xr = x + (top - ph) * W;
            for (size_t kw = 0; kw < KW; kw++) {
                const float wv = w[kh * KW + kw];
                size_t lo = a->ow_lo[kw], hi = a->ow_hi[kw];
                if (lo >= hi)
                    continue;
                /* iw = ow*sw + kw*dw - pw >= 0 for ow >= lo */
                const float *restrict xs = xr + (lo * sw + kw * dw - pw);
                float *restrict yd = yr + lo;
                size_t n = hi - lo;
                if (sw == 1) {
                    for (size_t i = 0; i < n; i++)
                        yd[i] = DW_FMA(wv, xs[i], yd[i]);
                } else if (sw == 2) {
                    for (size_t i = 0; i < n; i++)
                        yd[i] = DW_FMA(wv, xs[2 * i], yd[i]);
                } else {
                    for (size_t i = 0; i < n; i++)
                        yd[i] = DW_FMA(wv, xs[i * sw], yd[i]);
                }
            }
        }
        if (a->act) {
            const float lo = a->lo, hi = a->hi;
            for (size_t ow = 0; ow < OW; ow++) {
                float v = yr[ow];
                yr[ow] = v < lo ? lo : (v > hi ? hi : v);
            }
        }
    }
}
