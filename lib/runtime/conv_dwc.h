/* Depthwise convolution by channel blocks (AVX-512F): 16 channels are the
 * vector lanes.  Per work item (image, block of 16 channels, band of output
 * rows) the block's input rows are transposed into a zero-padded tile
 * [row][column][16] in the worker's scratch, every output pixel is a sum of
 * full-vector FMAs (no lane is spent on a plane's edge, however small the
 * plane), the activation runs over the tile of results, and a transposing
 * epilogue writes the 16 channels' rows of the NCHW output.  An input in
 * channel blocks ([N][C/16][h][w][16]) is copied into the tile as it is, and
 * an output in channel blocks is the tile of results itself.  The plane
 * kernels of k_dw.c put a plane's columns in the lanes instead, which
 * leaves most of them idle on 7x7 or 14x14 planes and pays a padded copy
 * per plane.  Max pooling runs on the same tiles (rt_dwc_new_max): -inf in
 * the padding, and a maximum in place of the sum. */
#ifndef GIR_RUNTIME_CONV_DWC_H
#define GIR_RUNTIME_CONV_DWC_H

#include "rt.h"

typedef struct rt_dwc rt_dwc;

/* One 2-D depthwise window: plane h x w to oh x ow, kernel kh x kw, strides,
 * dilations and the leading pads (the trailing ones follow from the sizes). */
typedef struct rt_dwc_geo {
    size_t h, w, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
} rt_dwc_geo;

typedef struct rt_dwc_args {
    const float *x;    /* [N][C][h * w], or [N][ceil(C/16)][h * w][16] when x_blocked */
    size_t N;
    const float *bias; /* [C] or NULL */
    bool accumulate;   /* add the result to what y holds (a fused residual) */
    const rt_act *act; /* after the bias (and the residual) */
    float *y;          /* [N][C][oh * ow], or [N][ceil(C/16)][oh * ow][16] when y_blocked */
    float *scratch;    /* rt_dwc_scratch_floats() floats per worker, 64-byte aligned */
    bool x_blocked, y_blocked; /* in channel blocks (y_blocked: no accumulate) */
} rt_dwc_args;

/* Whether this build and CPU run the kernel. */
bool rt_dwc_available(void);
/* Whether a window fits its tiles: at most 1024 taps, padded rows below
 * 2^16 pixels and a window below 2^12 rows high (larger ones stay with
 * the plane kernels). */
bool rt_dwc_geo_ok(const rt_dwc_geo *g);
/* Packs the weights w ([C][kh * kw]) of C channels in blocks of 16 and plans
 * the bands of output rows for geometry g. */
gir_status rt_dwc_new(const float *w, size_t C, const rt_dwc_geo *g, rt_dwc **out, gir_error *err);
/* Plans max pooling of C channels for geometry g (no bias, activation or
 * accumulate in its rt_dwc_args).  A window's NaN is its result. */
gir_status rt_dwc_new_max(size_t C, const rt_dwc_geo *g, rt_dwc **out, gir_error *err);
void rt_dwc_free(rt_dwc *p);
/* Whether p was planned for geometry g. */
bool rt_dwc_fits(const rt_dwc *p, const rt_dwc_geo *g);
size_t rt_dwc_scratch_floats(const rt_dwc *p);
void rt_dwc_run(const rt_dwc *p, const rt_dwc_args *a, gir_threads *th);

#endif
