/* Direct convolution by output pixels (AVX-512F): the output channels are
 * the vector lanes and the input values the broadcasts, so a tile of
 * pixels x up to 64 channels wastes no lane on the columns a row-wise
 * product computes and drops (small maps: 7x7 outputs in 9-wide padded
 * rows) and reads each weight vector once per tile.  It reads the direct
 * form's padded planes (k_conv.c: pixel (oh, ow), tap k at (oh*dPW + ow)
 * pxs + koff[k]; pxs 16 for planes in channel blocks) or a pointwise
 * convolution's input itself, each group's apart, and writes NCHW through
 * a transposing epilogue, or channel blocks, whose [pixel][16] rows are
 * its sums as they are. */
#ifndef GIR_RUNTIME_CONV_PX_H
#define GIR_RUNTIME_CONV_PX_H

#include "rt.h"

typedef struct rt_convpx rt_convpx;

typedef struct rt_convpx_args {
    const float *planes;    /* the direct form's padded planes of one image */
    size_t gplanes;         /* floats from one group's planes to the next */
    const ptrdiff_t *koff;  /* [K]: where tap k starts in the planes */
    size_t OH, OW, dPW;     /* output size; row stride of the planes */
    size_t csw;             /* pixels from one output column's to the next in the planes */
    size_t pxs;             /* floats from one pixel to the next in the planes:
                             * 1, or 16 for an input in channel blocks */
    const float *bias;      /* [G x M] or NULL */
    bool accumulate;        /* add the result to what y holds (a fused residual) */
    const rt_act *act;      /* clamps inside the epilogue, others after it */
    float *y;               /* [G x M][OH * OW], or [ceil(G x M/16)][OH * OW][16] when y_blocked */
    bool y_blocked;         /* (no accumulate; M a multiple of 16 with groups) */
} rt_convpx_args;

/* Whether this build and CPU run the pixel kernel. */
bool rt_convpx_available(void);
/* Packs weights w ([G x M][K], row-major: G groups of M output channels)
 * into blocks of up to 64 channels. */
gir_status rt_convpx_new(const float *w, size_t G, size_t M, size_t K, rt_convpx **out, gir_error *err);
void rt_convpx_free(rt_convpx *p);
/* One image; each worker uses its gir_threads_scratch area. */
void rt_convpx_run(const rt_convpx *p, const rt_convpx_args *a, gir_threads *th);

#endif
