/* Conv (1-D to 3-D, groups, dilations, padding modes) through im2col and
 * the GEMM, a direct depthwise kernel, and ConvTranspose through the GEMM
 * and col2im. */
#include "gemm.h"
#include "rt.h"
#include "conv_px.h"
#include "conv_dwc.h"

#include <stdlib.h>

/* ---- geometry ------------------------------------------------------------ */

/* Keeps every window computation far from overflow. */
#define GEOM_MAX ((int64_t)1 << 24)

gir_status rt_ints_n(const rt_call *c, const char *name, size_t n, int64_t min, int64_t dflt, int64_t *out,
                     gir_error *err)
{
    const int64_t *v;
    ptrdiff_t len = rt_ints(c, name, &v);
    if (len < 0) {
        for (size_t i = 0; i < n; i++)
            out[i] = dflt;
        return GIR_OK;
    }
    if ((size_t)len != n)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s has %td values, expected %zu", name, len, n);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < min || v[i] > GEOM_MAX)
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s[%zu] = %lld is outside %lld..%lld", name, i, (long long)v[i],
                            (long long)min, (long long)GEOM_MAX);
        out[i] = v[i];
    }
    return GIR_OK;
}

gir_status rt_set_window_out(rt_tensor *out, size_t n, size_t ch, int nsp, const size_t sp[3], gir_error *err)
{
    gir_shape os = { .rank = nsp + 2, .dims = { (int64_t)n, (int64_t)ch } };
    for (int i = 0; i < nsp; i++)
        os.dims[2 + i] = (int64_t)sp[3 - nsp + i];
    return rt_set_out(out, GIR_DT_F32, &os, err);
}

gir_status rt_geom_make(const rt_call *c, const gir_shape *x, const int64_t *k, int nsp, bool dilations,
                        bool ceil_mode, rt_geom *g, gir_error *err)
{
    gir_status st;
    int64_t s[3], d[3], p[6];
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    if ((st = rt_ints_n(c, "strides", (size_t)nsp, 1, 1, s, err)))
        return st;
    if (dilations) {
        if ((st = rt_ints_n(c, "dilations", (size_t)nsp, 1, 1, d, err)))
            return st;
    } else {
        for (int i = 0; i < nsp; i++)
            d[i] = 1;
    }
    if ((st = rt_ints_n(c, "pads", (size_t)nsp * 2, 0, 0, p, err)))
        return st;
    const char *ap = rt_string(c, "auto_pad", "NOTSET");
    int mode; /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
    if (strcmp(ap, "NOTSET") == 0)
        mode = 0;
    else if (strcmp(ap, "SAME_UPPER") == 0)
        mode = 1;
    else if (strcmp(ap, "SAME_LOWER") == 0)
        mode = 2;
    else if (strcmp(ap, "VALID") == 0)
        mode = 3;
    else
        return gir_fail(err, GIR_E_ATTRIBUTE, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
    int off = 3 - nsp;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->dims[x->rank - nsp + i];
        if (k[i] < 1 || k[i] > GEOM_MAX)
            return gir_fail(err, GIR_E_ATTRIBUTE, "kernel size %lld is outside 1..%lld", (long long)k[i],
                            (long long)GEOM_MAX);
        int64_t keff = (k[i] - 1) * d[i] + 1, pb = p[i], pe = p[i + nsp], out;
        if (mode == 1 || mode == 2) {
            out = (in + s[i] - 1) / s[i];
            int64_t total = (out - 1) * s[i] + keff - in;
            if (total < 0)
                total = 0;
            pb = mode == 1 ? total / 2 : total - total / 2;
            pe = total - pb;
        } else {
            if (mode == 3)
                pb = pe = 0;
            int64_t span = in + pb + pe - keff;
            if (span < 0)
                return gir_fail(err, GIR_E_SHAPE,
                                "window of %lld (dilated) is larger than the padded input of %lld along spatial axis %d",
                                (long long)keff, (long long)(in + pb + pe), i);
            if (ceil_mode) {
                out = (span + s[i] - 1) / s[i] + 1;
                /* the last window must start inside the input or the begin padding */
                if ((out - 1) * s[i] >= in + pb)
                    out--;
            } else {
                out = span / s[i] + 1;
            }
        }
        g->in[off + i] = (size_t)in;
        g->out[off + i] = (size_t)out;
        g->k[off + i] = (size_t)k[i];
        g->s[off + i] = (size_t)s[i];
        g->d[off + i] = (size_t)d[i];
        g->pb[off + i] = (size_t)pb;
        g->pe[off + i] = (size_t)pe;
    }
    return GIR_OK;
}

/* ---- im2col, straight into the GEMM's packed B panels ----------------------- */

/* Columns for output rows [r0, r1) (a row = one (od, oh) pair) of one
 * group's channels: B[(c,kd,kh,kw)][(row - r0)*OW + ow], written in the
 * layout of gir_gemm_blayout l. */
typedef struct im2col_job {
    const rt_geom *g;
    const float *x;  /* the group's first input channel */
    float *col;
    size_t r0, r1, K;
    gir_gemm_blayout l;
} im2col_job;

/* Output columns [*lo, *hi) whose input column for kernel column kw lies
 * inside the row (the rest read padding). */
static inline void kw_span(const rt_geom *g, size_t kw, size_t *lo, size_t *hi)
{
    size_t woff = kw * g->d[2], pw = g->pb[2], sw = g->s[2], W = g->in[2];
    size_t l = woff >= pw ? 0 : (pw - woff + sw - 1) / sw;
    size_t h = W - 1 + pw < woff ? 0 : (W - 1 + pw - woff) / sw + 1;
    if (h > g->out[2])
        h = g->out[2];
    *lo = l < h ? l : h;
    *hi = h;
}

/* Short copies and fills inline (library calls cost more than the work on
 * runs of at most a panel). */
static inline void copy_run(float *d, const float *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(d + i, src + i, 8 * sizeof(float));
    for (; i < n; i++)
        d[i] = src[i];
}

static inline void zero_run(float *d, size_t n)
{
    static const float zeros[8];
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(d + i, zeros, 8 * sizeof(float));
    for (; i < n; i++)
        d[i] = 0.0f;
}

/* One panel at a time (its kc x nr block is written sequentially), all k
 * rows of it: the panel's columns fall into at most a few output rows
 * ("segments"), each read as a strip of the input row. */
static void im2col_rows(void *ctx, size_t p0, size_t p1, int worker)
{
    (void)worker;
    const im2col_job *j = ctx;
    const rt_geom *g = j->g;
    const size_t KD = g->k[0], KH = g->k[1], KW = g->k[2], NR = j->l.nr, KC = j->l.kc, K = j->K;
    const size_t D = g->in[0], H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
    const size_t ncols = (j->r1 - j->r0) * OW, npad = (ncols + NR - 1) / NR * NR;
    const size_t sw = g->s[2], dw = g->d[2], pw = g->pb[2];
    enum { MAXSEG = 64 };
    struct seg {
        size_t r, ow, len, off;
    } segs[MAXSEG];
    for (size_t p = p0; p < p1; p++) {
        /* the panel's columns [p*NR, p*NR + NR) as runs within output rows */
        size_t nseg = 0, jcol = p * NR, end = jcol + NR < ncols ? jcol + NR : ncols;
        while (jcol < end && nseg < MAXSEG) {
            size_t r = jcol / OW, ow = jcol % OW, len = OW - ow < end - jcol ? OW - ow : end - jcol;
            segs[nseg++] = (struct seg){ j->r0 + r, ow, len, jcol - p * NR };
            jcol += len;
        }
        size_t filled = end - p * NR; /* columns past the end stay zero */
        size_t ch = 0, kd = 0, kh = 0, kw = 0;
        for (size_t k = 0; k < K; k++) {
            size_t pc = k / KC * KC, kcb = K - pc < KC ? K - pc : KC;
            float *dst = j->col + pc * npad + p * NR * kcb + (k - pc) * NR;
            const float *xc = j->x + ch * D * H * W;
            size_t woff = kw * dw, lo, hi;
            kw_span(g, kw, &lo, &hi);
            for (size_t q = 0; q < nseg; q++) {
                const struct seg *sg = &segs[q];
                float *d = dst + sg->off;
                size_t od = sg->r / OH, oh = sg->r % OH;
                size_t id = od * g->s[0] + kd * g->d[0], ih = oh * g->s[1] + kh * g->d[1];
                size_t a = lo > sg->ow ? lo : sg->ow, e = hi < sg->ow + sg->len ? hi : sg->ow + sg->len;
                if (id < g->pb[0] || id - g->pb[0] >= D || ih < g->pb[1] || ih - g->pb[1] >= H || a >= e) {
                    zero_run(d, sg->len);
                    continue;
                }
                const float *xs = xc + ((id - g->pb[0]) * H + (ih - g->pb[1])) * W + a * sw + woff - pw;
                zero_run(d, a - sg->ow);
                float *dd = d + (a - sg->ow);
                size_t m = e - a;
                if (sw == 1)
                    copy_run(dd, xs, m);
                else if (sw == 2)
                    for (size_t i = 0; i < m; i++)
                        dd[i] = xs[2 * i];
                else
                    for (size_t i = 0; i < m; i++)
                        dd[i] = xs[i * sw];
                zero_run(d + (e - sg->ow), sg->ow + sg->len - e);
            }
            if (filled < NR)
                zero_run(dst + filled, NR - filled);
            /* next (ch, kd, kh, kw) */
            if (++kw == KW) {
                kw = 0;
                if (++kh == KH) {
                    kh = 0;
                    if (++kd == KD) {
                        kd = 0;
                        ch++;
                    }
                }
            }
        }
    }
}

/* Plain columns for narrow outputs (a panel would span many short output
 * rows): B[k][(row - r0)*OW + ow] row-major, one k row per (c, kd, kh, kw),
 * each output row a strided copy between zero margins; the GEMM packs it. */
static void im2col_plain(void *ctx, size_t k0, size_t k1, int worker)
{
    (void)worker;
    const im2col_job *j = ctx;
    const rt_geom *g = j->g;
    const size_t KD = g->k[0], KH = g->k[1], KW = g->k[2];
    const size_t D = g->in[0], H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
    const size_t ncols = (j->r1 - j->r0) * OW, sw = g->s[2], pw = g->pb[2];
    for (size_t k = k0; k < k1; k++) {
        size_t kw = k % KW, kh = k / KW % KH, kd = k / (KW * KH) % KD, ch = k / (KW * KH * KD);
        const float *xc = j->x + ch * D * H * W;
        size_t woff = kw * g->d[2], lo, hi;
        kw_span(g, kw, &lo, &hi);
        float *dst = j->col + k * ncols;
        for (size_t r = j->r0; r < j->r1; r++, dst += OW) {
            size_t od = r / OH, oh = r % OH;
            size_t id = od * g->s[0] + kd * g->d[0], ih = oh * g->s[1] + kh * g->d[1];
            if (id < g->pb[0] || id - g->pb[0] >= D || ih < g->pb[1] || ih - g->pb[1] >= H || lo >= hi) {
                zero_run(dst, OW);
                continue;
            }
            const float *xs = xc + ((id - g->pb[0]) * H + (ih - g->pb[1])) * W + woff - pw;
            zero_run(dst, lo);
            if (sw == 1)
                copy_run(dst + lo, xs + lo, hi - lo);
            else
                for (size_t i = lo; i < hi; i++)
                    dst[i] = xs[i * sw];
            zero_run(dst + hi, OW - hi);
        }
    }
}

/* ---- depthwise plane kernels -------------------------------------------------- */

#define DW_NAME dw_plane_generic
#define DW_ATTR
#define DW_FMA(a, b, c) ((a) * (b) + (c))
#include "k_dw_body.h"
#undef DW_NAME
#undef DW_ATTR
#undef DW_FMA

#if defined(__x86_64__) && defined(__GNUC__)
#define DW_NAME dw_plane_avx2
#define DW_ATTR __attribute__((target("avx2,fma")))
#define DW_FMA(a, b, c) fmaf((a), (b), (c))
#include "k_dw_body.h"
#undef DW_NAME
#undef DW_ATTR
#undef DW_FMA
#define DW_NAME dw_plane_avx512
#ifdef __clang__
/* clang has no prefer-vector-width target feature (it would ignore the
 * whole attribute): its min_vector_width says the same */
#define DW_ATTR __attribute__((target("avx512f"), min_vector_width(512)))
#else
#define DW_ATTR __attribute__((target("avx512f,prefer-vector-width=512")))
#endif
#define DW_FMA(a, b, c) fmaf((a), (b), (c))
#include "k_dw_body.h"
#undef DW_NAME
#undef DW_ATTR
#undef DW_FMA
#endif

rt_dwplane_fn rt_dwplane_select(int isa)
{
    return RT_ISA_PICK(isa, dw_plane_generic, dw_plane_avx2, dw_plane_avx512);
}

/* ---- Conv ---------------------------------------------------------------------- */

typedef struct conv_geo conv_geo;
typedef struct convt_geo convt_geo;

typedef struct conv_state {
    gir_gemm_packed *packed; /* per group, when W is constant */
    size_t n_packed;
    size_t *ow_lo;           /* depthwise: per kw */
    size_t cap_kw;
    void *geo; /* conv_geo or convt_geo of the current plan */
    rt_wino *wino; /* 3x3 stride 1: Winograd form of the weights (instead of packed) */
    ptrdiff_t *koff; /* direct: where row k of B starts in a group's planes */
    size_t cap_koff;
    rt_convpx *px; /* direct, one group, AVX-512: the weights for the pixel kernel (instead of packed) */
    rt_dwc *dwc;   /* depthwise by channel blocks (AVX-512): its weights and plan */
} conv_state;

/* Frees the GEMM's packed weights (a plan that takes another form). */
static void drop_packed(conv_state *s)
{
    for (size_t i = 0; i < s->n_packed; i++)
        gir_gemm_packed_free(&s->packed[i]);
    free(s->packed);
    s->packed = NULL;
    s->n_packed = 0;
}

static void conv_release(void *p)
{
    conv_state *s = p;
    if (!s)
        return;
    drop_packed(s);
    free(s->ow_lo);
    free(s->koff);
    free(s->geo);
    rt_wino_free(s->wino);
    rt_convpx_free(s->px);
    rt_dwc_free(s->dwc);
    free(s);
}

static gir_status state_geo(conv_state *s, const void *geo, size_t size, gir_error *err)
{
    if (!s->geo && !(s->geo = malloc(size)))
        return gir_nomem(err);
    memcpy(s->geo, geo, size);
    return GIR_OK;
}

/* What both prepares begin with: the output's shape, the node's state and
 * a copy of the plan's geometry in it. */
static gir_status conv_begin(rt_call *c, size_t n, size_t m, int nsp, const size_t sp[3], const void *geo, size_t size,
                             conv_state **out, gir_error *err)
{
    gir_status st = rt_set_window_out(c->out[0], n, m, nsp, sp, err);
    if (st)
        return st;
    if (!(*out = rt_state(c, sizeof **out)))
        return gir_nomem(err);
    return state_geo(*out, geo, size, err);
}

/* Packs each group's weights once as the GEMM's A: rows x k, group g's
 * block of rows * k floats at w + g * rows * k, transposed (k x rows in
 * memory) when trans.  The state keeps them as long as the weights. */
static gir_status pack_groups(conv_state *s, size_t G, bool trans, size_t rows, size_t k, const float *w,
                              gir_error *err)
{
    if (!(s->packed = calloc(G, sizeof *s->packed)))
        return gir_nomem(err);
    for (size_t gi = 0; gi < G; gi++) {
        gir_status st = gir_gemm_pack_a(GIR_GEMM_AUTO, trans, rows, k, w + gi * rows * k, trans ? rows : k,
                                        &s->packed[gi], err);
        if (st)
            return st;
        s->n_packed++;
    }
    return GIR_OK;
}

struct conv_geo {
    rt_geom g;
    size_t N, C, M, G, Cg, Mg, Kg, P, insp;
    bool depthwise, pointwise;
    size_t chunk_rows; /* output rows per im2col chunk */
    /* direct: no im2col; the GEMM reads B rows from padded planes of the
     * input, one per (channel, stride phase): plane (c, a, b) holds
     * xpad[s*i + a][s*j + b] at i*dPW + j, so output (oh, ow) and kernel
     * tap (kh, kw) read plane (c, kh%s, kw%s) at (oh + kh/s)*dPW + ow + kw/s:
     * every B row is contiguous in q = oh*dPW + ow.  The dPW - OW extra
     * columns per row are computed and dropped.  The pixel kernel, which
     * reads a pixel's taps wherever they are, takes one padded plane per
     * channel instead (ds 1, dPH x dPW the padded input it reads), at the
     * convolution's stride dstride: a copy of rows, where the phases pick
     * every s-th value. */
    bool direct;
    size_t ds, dPH, dPW, dplane, drows, dstride;
    bool pwpx; /* pointwise through the pixel kernel, reading the input itself */
    bool pw_strided; /* a 1x1 window at stride 2 or more without pads (ResNet's downsampling), 2-D */
    bool in_blk, out_blk; /* input, output in channel blocks (rt_tensor.blocked) */
};

/* Convolutions with fewer taps (Cg x KH x KW) keep the row-wise product
 * in the direct form (see conv_prepare).  27 is a 3x3 window over 3
 * channels: the stems of MobileNet, EfficientNet, RegNet and ShuffleNet.
 * Measured in one process, alternating, with the pixel kernel reading one
 * padded plane per channel at the stride (conv_geo.dstride): a 3x3
 * stride-2 stem into NCHW 0.300 -> 0.294 ms, RegNetX-400MF and ShuffleNet
 * 1.7% faster, RegNetY 1.1%, ConvNeXt-T's 4x4 stride-4 patches (48 taps)
 * 1.3%.  (When the pixel kernel read the stride-phase planes, whose
 * scalar gather cost as much as the sums, 3x3 stems were 1.3x faster with
 * the row-wise product and the threshold was 144.) */
#define PX_MIN_TAPS 27

/* The direct form's largest stride: s x s phase planes of the input (AlexNet's
 * 11x11 stride-4 stem through the pixel kernel: 2.5-3.6 -> 1.5-2.1 ms). */
#define DIRECT_MAX_STRIDE 4

/* Outputs narrower than this take the plain im2col (im2col_plain). */
#define NARROW_OW 16

#define IM2COL_MAX_FLOATS ((size_t)1 << 18) /* 1 MiB of packed columns at a time: they stay in L2 */

/* Conv and ConvTranspose take float32 data and weights
 * (rt_want_f32_pair), and a bias of [M] when given (checked after their
 * shapes, so each error keeps its place). */
static gir_status conv_bias_ok(const rt_call *c, const char *op, size_t M, gir_error *err)
{
    const rt_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    char sb[96];
    gir_status st;
    if (!b)
        return GIR_OK;
    if ((st = rt_want_dtype(c, 2, GIR_DT_F32, err)))
        return st;
    if (b->shape.rank != 1 || (size_t)b->shape.dims[0] != M)
        return gir_fail(err, GIR_E_SHAPE, "%s bias %s is not [%zu]", op, gir_shape_str(&b->shape, sb, sizeof sb), M);
    return GIR_OK;
}

static gir_status conv_geometry(const rt_call *c, conv_geo *cg, gir_error *err)
{
    const rt_tensor *x = c->in[0], *w = c->in[1];
    gir_status st;
    char sx[96], sw[96];
    *cg = (conv_geo){ 0 };
    if ((st = rt_want_f32_pair(c, err)))
        return st;
    if (x->shape.rank < 3 || x->shape.rank > 5)
        return gir_fail(err, GIR_E_SHAPE, "Conv input has rank %d, expected 3 to 5 (N, C, 1 to 3 spatial dims)",
                        x->shape.rank);
    int nsp = x->shape.rank - 2;
    if (w->shape.rank != x->shape.rank)
        return gir_fail(err, GIR_E_SHAPE, "Conv weight %s and input %s have different ranks",
                        gir_shape_str(&w->shape, sw, sizeof sw), gir_shape_str(&x->shape, sx, sizeof sx));
    int64_t group = rt_int(c, "group", 1);
    size_t C = (size_t)x->shape.dims[1], M = (size_t)w->shape.dims[0];
    if (group < 1 || (uint64_t)group > C || C % (size_t)group != 0 || M % (size_t)group != 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "group %lld does not divide %zu input and %zu output channels",
                        (long long)group, C, M);
    size_t G = (size_t)group;
    if ((size_t)w->shape.dims[1] * G != C)
        return gir_fail(err, GIR_E_SHAPE, "Conv weight %s expects %lld x %zu input channels, input %s has %zu",
                        gir_shape_str(&w->shape, sw, sizeof sw), (long long)w->shape.dims[1], G,
                        gir_shape_str(&x->shape, sx, sizeof sx), C);
    int64_t k[3], ks[3];
    for (int i = 0; i < nsp; i++)
        k[i] = w->shape.dims[2 + i];
    if ((st = rt_ints_n(c, "kernel_shape", (size_t)nsp, 1, -1, ks, err)))
        return st;
    for (int i = 0; i < nsp; i++)
        if (ks[i] != -1 && ks[i] != k[i])
            return gir_fail(err, GIR_E_ATTRIBUTE, "kernel_shape[%d] = %lld disagrees with the weight %s", i,
                            (long long)ks[i], gir_shape_str(&w->shape, sw, sizeof sw));
    if ((st = conv_bias_ok(c, "Conv", M, err)))
        return st;
    if ((st = rt_geom_make(c, &x->shape, k, nsp, true, false, &cg->g, err)))
        return st;
    const rt_geom *g = &cg->g;
    cg->N = (size_t)x->shape.dims[0];
    cg->C = C;
    cg->M = M;
    cg->G = G;
    cg->Cg = C / G;
    cg->Mg = M / G;
    cg->Kg = cg->Cg * g->k[0] * g->k[1] * g->k[2];
    cg->P = g->out[0] * g->out[1] * g->out[2];
    cg->insp = g->in[0] * g->in[1] * g->in[2];
    cg->depthwise = cg->Cg == 1 && G > 1 && nsp <= 2;
    cg->pointwise = true;
    cg->pw_strided = nsp == 2;
    cg->direct = false;
    cg->pwpx = false;
    for (int i = 0; i < 3; i++) {
        if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] || g->pe[i])
            cg->pointwise = false;
        if (g->k[i] != 1 || g->pb[i] || g->pe[i])
            cg->pw_strided = false;
    }
    cg->pw_strided = cg->pw_strided && !cg->pointwise;
    size_t rows = g->out[0] * g->out[1];
    size_t per_row = cg->Kg * g->out[2];
    cg->chunk_rows = per_row ? IM2COL_MAX_FLOATS / per_row : rows;
    if (cg->chunk_rows < 1)
        cg->chunk_rows = 1;
    if (cg->chunk_rows > rows)
        cg->chunk_rows = rows;
    return GIR_OK;
}

/* Whether the padded-plane kernels apply, and their geometry. */
static bool dw_pad_geometry(const conv_geo *cg, rt_dwpad *a)
{
    const rt_geom *g = &cg->g;
    if (g->d[1] != 1 || g->d[2] != 1 || (g->s[2] != 1 && g->s[2] != 2) || g->out[1] == 0 || g->out[2] == 0)
        return false;
    rt_dwpad_from_geom(a, g);
    if (a->sw == 2) { /* two phases of (ow + kw/2) columns rounded up to 8 */
        a->split = true;
        a->pstride = 2 * ((a->ow + a->kw / 2 + 7) / 8 * 8);
    } else {
        a->pstride = ((a->ow - 1) + a->kw + 15) / 16 * 16;
    }
    return true;
}

/* Whether the direct form's planes (ds x ds of dPH x dPW per channel) stay
 * a reasonable size. */
static bool direct_planes_fit(const conv_geo *cg)
{
    return cg->dPH <= GEOM_MAX && cg->dPW <= GEOM_MAX &&
           cg->dPH * cg->dPW <= ((size_t)1 << 28) / (cg->ds * cg->ds) / cg->C;
}

/* Whether the direct form applies (2-D, the same stride 1 to 4 both ways, no
 * dilation, a window larger than 1x1), and its geometry; false also when
 * its planes would be unreasonably large. */
static bool direct_geometry(conv_geo *cg)
{
    const rt_geom *g = &cg->g;
    size_t s = g->s[2];
    if (g->nsp != 2 || g->d[1] != 1 || g->d[2] != 1 || g->s[1] != s || s < 1 || s > DIRECT_MAX_STRIDE ||
        g->k[1] * g->k[2] < 2 || g->out[2] < 4 || cg->depthwise || cg->pointwise || cg->C == 0 || cg->Kg == 0 ||
        cg->Mg == 0)
        return false;
    cg->ds = s;
    cg->dstride = 1;
    cg->dPH = g->out[1] + (g->k[1] - 1) / s;
    cg->dPW = g->out[2] + (g->k[2] - 1) / s;
    if (!direct_planes_fit(cg))
        return false;
    cg->dplane = (cg->dPH * cg->dPW + (g->k[2] - 1) / s + 1 + 15) / 16 * 16;
    cg->drows = ((size_t)1 << 16) / (cg->Mg * cg->dPW);
    if (cg->drows < 1)
        cg->drows = 1;
    if (cg->drows > g->out[1])
        cg->drows = g->out[1];
    return true;
}

/* The plan's geometry into the state, and room for koff (one offset per
 * tap), for the forms that read taps at offsets: the direct form and the
 * pixel kernel. */
static gir_status koff_plan(conv_state *s, const conv_geo *cg, gir_error *err)
{
    gir_status st;
    if ((st = state_geo(s, cg, sizeof *cg, err)))
        return st;
    if (s->cap_koff < cg->Kg) {
        free(s->koff);
        if (!(s->koff = malloc(cg->Kg * sizeof *s->koff)))
            return gir_nomem(err);
        s->cap_koff = cg->Kg;
    }
    return GIR_OK;
}

/* The direct form's plan: where each tap's row starts in a group's planes,
 * and room for the planes. */
static gir_status direct_setup(rt_call *c, conv_state *s, conv_geo *cg, gir_error *err)
{
    gir_status st;
    cg->direct = true;
    if (s->px && cg->ds > 1) { /* the pixel kernel: one padded plane per channel, read at the stride */
        const rt_geom *g = &cg->g;
        cg->dstride = cg->ds;
        cg->ds = 1;
        cg->dPH = (g->out[1] - 1) * cg->dstride + g->k[1];
        cg->dPW = (g->out[2] - 1) * cg->dstride + g->k[2];
        if (!direct_planes_fit(cg))
            return gir_fail(err, GIR_E_LIMIT, "convolution planes are too large");
        cg->dplane = (cg->dPH * cg->dPW + 15) / 16 * 16;
    }
    if ((st = koff_plan(s, cg, err)))
        return st;
    size_t KH = cg->g.k[1], KW = cg->g.k[2], sd = cg->ds, k = 0;
    /* planes in channel blocks: block ch/16's, then lane ch%16 of 16 per pixel */
    size_t L = cg->in_blk ? 16 : 1;
    for (size_t ch = 0; ch < cg->Cg; ch++)
        for (size_t kh = 0; kh < KH; kh++)
            for (size_t kw = 0; kw < KW; kw++)
                s->koff[k++] = (ptrdiff_t)(((((ch / L) * sd + kh % sd) * sd + kw % sd) * cg->dplane +
                                            (kh / sd) * cg->dPW + kw / sd) * L + ch % L);
    c->scratch_bytes = RT_BLOCKED_CH(cg->C, cg->in_blk) * sd * sd * cg->dplane * sizeof(float);
    return GIR_OK;
}

/* Whether the channel-block depthwise kernel takes this convolution (2-D,
 * one channel per group, constant weights, AVX-512), and its geometry.
 * Unless any_width (channel blocks in or out, which the plane kernels do
 * not read or write), planes 48 or more wide at stride 1 with 3x3 or 5x5
 * windows stay with the plane kernel that reads them in place: their rows
 * fill its lanes, and it has no transposes to pay (3x3 over 56x56 and
 * 112x112 planes: 10-25% faster there); everything else is faster by
 * channel blocks (28x28 planes: 8-17%; 7x7 planes and strided windows:
 * 2-5x). */
static bool dwc_geometry(const rt_call *c, const conv_geo *cg, rt_dwc_geo *dg, bool any_width)
{
    const rt_geom *g = &cg->g;
    if (g->nsp != 2 || cg->Mg != 1 || !c->in_const[1] || !rt_dwc_available() || g->out[1] == 0 || g->out[2] == 0)
        return false;
    rt_dwpad pad;
    if (!any_width && g->out[2] >= 48 && dw_pad_geometry(cg, &pad) && rt_dwdirect_select(GIR_GEMM_AUTO, &pad))
        return false;
    memset(dg, 0, sizeof *dg);
    RT_WINDOW_FROM_GEOM(dg, g);
    dg->dh = g->d[1];
    dg->dw = g->d[2];
    return rt_dwc_geo_ok(dg); /* huge rows or windows stay with the plane kernels */
}

/* Pointwise convolutions over few pixels and many input channels take the
 * pixel kernel: its tiles are 64 channels x 6 pixels, so a 7x7 or 14x14
 * map wastes no lanes (the GEMM's 32-column tiles compute 64 columns for
 * 49 pixels), and each weight block is read once per tile in L1.  Shapes
 * measured in one process, alternating (1x1 over 7x7: 400 -> 400 0.137 ->
 * 0.126 ms, 1152 -> 192 0.199 -> 0.167; over 14x14: 672 -> 112 0.246 ->
 * 0.198, 1024 -> 256 0.81 -> 0.76); at 28x28 and above, or with fewer than
 * 256 input channels, the GEMM is faster (up to 1.7x with 16 to 64). */
static bool pwpx_wanted(const conv_geo *cg)
{
    return cg->P <= 256 && cg->Kg >= 256 && rt_convpx_available();
}

/* Pointwise through the pixel kernel: the input is its own plane, channel
 * k at k * insp. */
static gir_status pwpx_setup(conv_state *s, conv_geo *cg, gir_error *err)
{
    gir_status st;
    cg->pwpx = true;
    if ((st = koff_plan(s, cg, err)))
        return st;
    for (size_t k = 0; k < cg->Kg; k++) /* in channel blocks: k's block, then its lane */
        s->koff[k] = (ptrdiff_t)(cg->in_blk ? k / 16 * cg->insp * 16 + k % 16 : k * cg->insp);
    return GIR_OK;
}

/* ---- channel blocks between convolutions ----------------------------------
 *
 * A Conv whose result only a Conv or a MaxPool reads (rt_call.reader), in
 * a form that reads them, hands it over in channel blocks,
 * [N][ceil(C/16)][H][W][16]: the layout the pixel kernel and the
 * channel-block depthwise kernel compute in.  Neither then transposes (the
 * pixel kernel's epilogue, the depthwise kernel's two), and the pointwise
 * convolutions over large maps with few input channels, which the GEMM
 * took, take the pixel kernel too.  Both sides decide with blk_form on the
 * same geometry, so the reader always takes a form that reads blocks. */

/* Whether a 3x3 stride-1 convolution takes Winograd (constant weights,
 * one group, the sizes rt_wino_applies). */
static bool wino_wanted(const rt_call *c, const conv_geo *cg)
{
    const rt_geom *g = &cg->g;
    return c->in_const[1] && cg->G == 1 && g->nsp == 2 && g->k[1] == 3 && g->k[2] == 3 && g->s[1] == 1 &&
           g->s[2] == 1 && g->d[1] == 1 && g->d[2] == 1 && rt_wino_applies(cg->C, cg->M, g->out[1], g->out[2]);
}

/* The forms that read and write channel blocks (constant weights, 2-D,
 * AVX-512): the channel-block depthwise kernel, and the pixel kernel for a
 * pointwise convolution of one group, for a convolution of one group in
 * the direct form that does not take Winograd, and for groups of whole
 * blocks in the direct form (RegNet's 16-channel groups: each output block
 * reads one input block). */
static bool blk_form(const rt_call *c, const conv_geo *cg)
{
    rt_dwc_geo dg;
    conv_geo dc = *cg;
    if (cg->g.nsp != 2 || !c->in_const[1] || cg->N == 0 || cg->P == 0 || cg->C == 0)
        return false;
    if (cg->depthwise)
        return dwc_geometry(c, cg, &dg, true);
    if (!rt_convpx_available())
        return false;
    if (cg->pointwise || cg->pw_strided)
        return cg->G == 1;
    if (cg->G > 1 && (cg->Cg % 16 || cg->Mg % 16))
        return false;
    return !wino_wanted(c, cg) && direct_geometry(&dc);
}

/* The forms that write channel blocks: those of blk_form, save a
 * depthwise convolution that would read NCHW input with the plane kernel
 * (wide rows at stride 1: the channel-block kernel's transposes in cost
 * more than the plane kernel's own way), and groups of blocks reading NCHW
 * (the GEMM's form is faster there). */
static bool blk_writer(const rt_call *c, const conv_geo *cg)
{
    rt_dwc_geo dg;
    if (!blk_form(c, cg))
        return false;
    if (cg->depthwise)
        return cg->in_blk || dwc_geometry(c, cg, &dg, false);
    return cg->G == 1 || cg->in_blk;
}

bool rt_reader_takes_blocks(const rt_call *c, size_t n, size_t ch, size_t h, size_t w)
{
    if (!c->reader)
        return false;
    rt_tensor x = { .dtype = GIR_DT_F32, .shape = { .rank = 4 } };
    x.shape.dims[0] = (int64_t)n;
    x.shape.dims[1] = (int64_t)ch;
    x.shape.dims[2] = (int64_t)h;
    x.shape.dims[3] = (int64_t)w;
    x.numel = n * ch * h * w;
    rt_tensor *in[2] = { &x, (rt_tensor *)c->reader_w };
    bool cst[2] = { false, true }, done[2] = { false, false };
    rt_call q = { .g = c->g, .node = c->reader, .n_in = c->reader_w ? 2 : 1, .in = in, .in_const = cst,
                  .in_done = done, .th = c->th };
    if (c->reader->op == GIR_OP_MaxPool)
        return rt_maxpool_reads_blocks(&q);
    conv_geo cg;
    return c->reader->op == GIR_OP_Conv && c->reader_w && conv_geometry(&q, &cg, NULL) == GIR_OK && blk_form(&q, &cg);
}

/* The pixel kernel's packed weights, made once (they stand in for the
 * constant weights, which the session may then drop). */
static gir_status px_weights(rt_call *c, conv_state *s, const conv_geo *cg, gir_error *err)
{
    gir_status st;
    if (!s->px && (st = rt_convpx_new(c->in[1]->data, cg->G, cg->Mg, cg->Kg, &s->px, err)))
        return st;
    c->in_done[1] = true;
    return GIR_OK;
}

static gir_status conv_prepare(rt_call *c, gir_error *err)
{
    conv_geo cg;
    conv_state *s;
    gir_status st = conv_geometry(c, &cg, err);
    if (st)
        return st;
    cg.in_blk = c->in[0]->blocked;
    if (cg.in_blk && !blk_form(c, &cg))
        return gir_fail(err, GIR_E_INTERNAL, "Conv input is in channel blocks, which this convolution cannot read");
    cg.out_blk = !c->accumulate && blk_writer(c, &cg) &&
                 rt_reader_takes_blocks(c, cg.N, cg.M, cg.g.out[1], cg.g.out[2]);
    if ((st = conv_begin(c, cg.N, cg.M, cg.g.nsp, cg.g.out, &cg, sizeof cg, &s, err)))
        return st;
    c->out[0]->blocked = cg.out_blk;
    if (cg.depthwise) {
        rt_dwc_geo dg;
        if (dwc_geometry(c, &cg, &dg, cg.in_blk || cg.out_blk)) {
            if (s->dwc && !rt_dwc_fits(s->dwc, &dg)) {
                rt_dwc_free(s->dwc);
                s->dwc = NULL;
            }
            if (!s->dwc && (st = rt_dwc_new(c->in[1]->data, cg.M, &dg, &s->dwc, err)))
                return st;
            uint64_t bytes;
            if (!gir_mul_u64(rt_dwc_scratch_floats(s->dwc), sizeof(float) * (uint64_t)gir_threads_count(c->th),
                             &bytes) ||
                bytes > SIZE_MAX / 2)
                return gir_fail(err, GIR_E_LIMIT, "depthwise tiles are too large");
            c->scratch_bytes = (size_t)bytes;
            return GIR_OK;
        }
        rt_dwc_free(s->dwc);
        s->dwc = NULL;
        rt_dwpad pad;
        if (dw_pad_geometry(&cg, &pad) && rt_dwpad_select(GIR_GEMM_AUTO) && !rt_dwdirect_select(GIR_GEMM_AUTO, &pad)) {
            uint64_t bytes;
            if (!gir_mul_u64(rt_dwpad_floats(&pad), sizeof(float) * (uint64_t)gir_threads_count(c->th), &bytes) ||
                bytes > SIZE_MAX / 2)
                return gir_fail(err, GIR_E_LIMIT, "depthwise planes are too large");
            c->scratch_bytes = (size_t)bytes;
        }
        if (s->cap_kw < cg.g.k[2]) {
            free(s->ow_lo);
            s->ow_lo = malloc(2 * cg.g.k[2] * sizeof *s->ow_lo);
            if (!s->ow_lo)
                return gir_nomem(err);
            s->cap_kw = cg.g.k[2];
        }
        return GIR_OK;
    }
    if (cg.in_blk || cg.out_blk) { /* one group (blk_form, blk_writer): the pixel kernel */
        drop_packed(s);
        if ((st = px_weights(c, s, &cg, err)))
            return st;
        return cg.pointwise || cg.pw_strided ? pwpx_setup(s, &cg, err)
                                             : (direct_geometry(&cg), direct_setup(c, s, &cg, err));
    }
    const rt_tensor *w = c->in[1];
    const rt_geom *gg = &cg.g;
    if (s->wino && (s->wino->H != gg->in[1] || s->wino->W != gg->in[2] || s->wino->ph != gg->pb[1] ||
                    s->wino->pw != gg->pb[2])) {
        rt_wino_free(s->wino); /* another input size: the weights are loaded again for a new plan */
        s->wino = NULL;
    }
    if (!s->packed && (s->wino || wino_wanted(c, &cg))) {
        if (!s->wino && (st = rt_wino_new(w->data, cg.M, cg.C, gg->in[1], gg->in[2], gg->out[1], gg->out[2],
                                          gg->pb[1], gg->pb[2], rt_wino_tile(gg->out[1], gg->out[2]),
                                          &s->wino, err)))
            return st;
        c->in_done[1] = true;
        c->scratch_bytes = rt_wino_scratch_floats(s->wino, c->th ? gir_threads_count(c->th) : 1) * sizeof(float);
        return GIR_OK;
    }
    /* One group with constant weights in the direct form and at least
     * PX_MIN_TAPS taps: the pixel kernel where the CPU has it (its weights
     * are packed once, as below).  Fewer taps (a 3x3 window over one or
     * two channels) stay with the row-wise product: each tile's setup and
     * the transposing epilogue would weigh more than the short sum. */
    if (!s->packed && (s->px || (c->in_const[1] && cg.G == 1 && cg.Kg >= PX_MIN_TAPS && rt_convpx_available())) &&
        direct_geometry(&cg))
        return (st = px_weights(c, s, &cg, err)) ? st : direct_setup(c, s, &cg, err);
    if (!s->packed && cg.pointwise && cg.G == 1 && (s->px || (c->in_const[1] && pwpx_wanted(&cg))))
        return (st = px_weights(c, s, &cg, err)) ? st : pwpx_setup(s, &cg, err);
    /* A 1x1 window at a stride (ResNet's and RegNet's downsampling): the
     * pixel kernel reading every s-th pixel in place, where im2col would
     * copy them first. */
    if (!s->packed && cg.pw_strided && cg.G == 1 && (s->px || (c->in_const[1] && rt_convpx_available())))
        return (st = px_weights(c, s, &cg, err)) ? st : pwpx_setup(s, &cg, err);
    /* Pack the constant weights once (A = W_g, Mg x Kg, row-major). */
    /* (the state lives as long as the weights: overridden constants free it) */
    if (c->in_const[1] && !s->packed && (st = pack_groups(s, cg.G, false, cg.Mg, cg.Kg, w->data, err)))
        return st;
    c->in_done[1] = s->packed != NULL;
    if (s->packed && gir_gemm_b_rows_ok(s->packed[0].isa) && direct_geometry(&cg))
        return direct_setup(c, s, &cg, err);
    if (!cg.pointwise) {
        gir_gemm_blayout l = gir_gemm_b_layout(s->packed ? s->packed[0].isa : GIR_GEMM_AUTO);
        size_t floats = gir_gemm_packed_b_floats(&l, cg.Kg, cg.chunk_rows * cg.g.out[2]);
        if (floats == 0 && cg.Kg > 0)
            return gir_fail(err, GIR_E_LIMIT, "convolution columns are too large");
        c->scratch_bytes = floats * sizeof(float);
    }
    return GIR_OK;
}

typedef struct dw_job {
    const conv_geo *cg;
    const rt_call *c;
    rt_dwplane plane;
    rt_dwplane_fn fn;
    rt_dwpad pad;
    rt_dwpad_fn padfn; /* the padded-plane kernel, or NULL */
    rt_dwpad_fn directfn; /* the kernel reading the plane itself, or NULL */
} dw_job;


static void dw_planes(void *ctx, size_t p0, size_t p1, int worker)
{
    (void)worker;
    const dw_job *j = ctx;
    const conv_geo *cg = j->cg;
    const float *x = j->c->in[0]->data, *w = j->c->in[1]->data;
    const float *b = j->c->n_in > 2 && j->c->in[2] ? j->c->in[2]->data : NULL;
    float *y = j->c->out[0]->data;
    size_t mult = cg->Mg; /* output channels per input channel */
    float *padded = j->padfn ? (float *)j->c->scratch + (size_t)worker * rt_dwpad_floats(&j->pad) : NULL;
    size_t filled = SIZE_MAX;
    for (size_t p = p0; p < p1; p++) {
        size_t n = p / cg->M, m = p % cg->M, ci = m / mult;
        const float *xp = x + (n * cg->C + ci) * cg->insp, *wp = w + m * cg->g.k[1] * cg->g.k[2];
        if (j->directfn) {
            j->directfn(&j->pad, xp, wp, b ? b[m] : 0.0f, y + p * cg->P);
        } else if (padded) {
            size_t plane = n * cg->C + ci;
            if (plane != filled) /* channel multipliers reuse the plane */
                rt_dwpad_fill(&j->pad, xp, padded, 0.0f);
            filled = plane;
            j->padfn(&j->pad, padded, wp, b ? b[m] : 0.0f, y + p * cg->P);
        } else {
            j->fn(&j->plane, xp, wp, b ? b[m] : 0.0f, y + p * cg->P);
        }
        if (j->c->act.on && j->c->act.kind != RT_ACT_CLAMP)
            rt_act_map(&j->c->act, y + p * cg->P, y + p * cg->P, cg->P);
    }
}

static void conv_depthwise(const rt_call *c, const conv_geo *cg)
{
    conv_state *s = c->state;
    const rt_geom *g = &cg->g;
    dw_job j;
    j.cg = cg;
    j.c = c;
    j.fn = rt_dwplane_select(GIR_GEMM_AUTO);
    rt_dwplane *a = &j.plane;
    RT_WINDOW_FROM_GEOM(a, g);
    a->dh = g->d[1];
    a->dw = g->d[2];
    size_t *lo = s->ow_lo, *hi = s->ow_lo + g->k[2];
    for (size_t kw = 0; kw < g->k[2]; kw++)
        kw_span(g, kw, &lo[kw], &hi[kw]);
    a->ow_lo = lo;
    a->ow_hi = hi;
    a->accumulate = c->accumulate;
    a->act = c->act.on && c->act.kind == RT_ACT_CLAMP; /* others: after the plane */
    a->lo = c->act.lo;
    a->hi = c->act.hi;
    j.padfn = j.directfn = NULL;
    if (dw_pad_geometry(cg, &j.pad) && (j.directfn = rt_dwdirect_select(GIR_GEMM_AUTO, &j.pad)) == NULL && c->scratch)
        j.padfn = rt_dwpad_select(GIR_GEMM_AUTO);
    if (j.padfn || j.directfn) {
        j.pad.accumulate = a->accumulate;
        j.pad.act = a->act;
        j.pad.lo = a->lo;
        j.pad.hi = a->hi;
    }
    rt_parallel_for(c->th, cg->N * cg->M, 1, 4, dw_planes, &j);
}

typedef struct plane_job {
    const conv_geo *cg;
    const float *x; /* the image's first channel */
    float *planes;
} plane_job;

/* Rows of a plane filled as one unit of work: a stem's three planes (an
 * image's channels) in 16-row bands are 45 units for two workers, not 3
 * for one. */
#define FILL_ROWS 16

static size_t fill_bands(const conv_geo *cg)
{
    return cg->dPH > FILL_ROWS ? (cg->dPH + FILL_ROWS - 1) / FILL_ROWS : 1;
}

/* Units [p0, p1) of the direct form's planes: unit u is band u % bands
 * (FILL_ROWS rows; the last band also zeroes the slack after the rows) of
 * plane u / bands (p = channel * s*s + phase). */
static void fill_planes(void *ctx, size_t p0, size_t p1, int worker)
{
    (void)worker;
    const plane_job *j = ctx;
    const conv_geo *cg = j->cg;
    const rt_geom *g = &cg->g;
    const size_t s = cg->ds, H = g->in[1], W = g->in[2], pt = g->pb[1], pl = g->pb[2];
    const size_t L = cg->in_blk ? 16 : 1; /* floats per pixel: channel blocks' 16 lanes */
    const size_t bands = fill_bands(cg);
    for (size_t u = p0; u < p1; u++) {
        size_t p = u / bands, i0 = u % bands * FILL_ROWS, i1 = i0 + FILL_ROWS < cg->dPH ? i0 + FILL_ROWS : cg->dPH;
        size_t ch = p / (s * s), a = p / s % s, b = p % s; /* ch: a channel, or a block */
        const float *xc = j->x + ch * cg->insp * L;
        float *d = j->planes + (p * cg->dplane + i0 * cg->dPW) * L;
        /* columns j whose input column s*j + b - pl lies inside [0, W) */
        size_t jlo = pl > b ? (pl - b + s - 1) / s : 0, jhi = (W + pl - b + s - 1) / s;
        if (jhi > cg->dPW)
            jhi = cg->dPW;
        if (jlo > jhi)
            jlo = jhi;
        for (size_t i = i0; i < i1; i++, d += cg->dPW * L) {
            size_t r = s * i + a;
            if (r < pt || r - pt >= H) {
                memset(d, 0, cg->dPW * L * sizeof *d);
                continue;
            }
            const float *xr = xc + (r - pt) * W * L;
            memset(d, 0, jlo * L * sizeof *d);
            if (s == 1)
                memcpy(d + jlo * L, xr + (jlo - pl) * L, (jhi - jlo) * L * sizeof *d);
            else if (L == 1)
                for (size_t jj = jlo; jj < jhi; jj++)
                    d[jj] = xr[s * jj + b - pl];
            else
                for (size_t jj = jlo; jj < jhi; jj++)
                    memcpy(d + jj * L, xr + (s * jj + b - pl) * L, L * sizeof *d);
            memset(d + jhi * L, 0, (cg->dPW - jhi) * L * sizeof *d);
        }
        if (i1 == cg->dPH) /* the slack read by the last columns */
            memset(d, 0, (cg->dplane - cg->dPH * cg->dPW) * L * sizeof *d);
    }
}

/* Group gi of one image through the direct form: blocks of output rows
 * multiplied straight into the output, the GEMM storing each row's OW real
 * columns of dPW (gir_gemm_args.c_wide); the residual added there when
 * accumulating.  With th NULL, on the calling thread in workspace ws. */
static void direct_group(const rt_call *c, const conv_state *s, const conv_geo *cg, const float *planes,
                         const float *bias, float *y, size_t gi, gir_threads *th, float *ws)
{
    const rt_geom *g = &cg->g;
    const size_t ss = cg->ds * cg->ds, OH = g->out[1], OW = g->out[2], dPW = cg->dPW;
    bool clamp = c->act.on && c->act.kind == RT_ACT_CLAMP, post_act = c->act.on && !clamp;
    float *yg = y + gi * cg->Mg * cg->P;
    gir_gemm_args a = { 0 };
    a.m = cg->Mg;
    a.k = cg->Kg;
    a.alpha = 1.0f;
    a.beta = c->accumulate ? 1.0f : 0.0f;
    a.packed_a = &s->packed[gi];
    a.b_rows = s->koff;
    a.bias_m = bias ? bias + gi * cg->Mg : NULL;
    a.clamp = clamp;
    a.lo = c->act.lo;
    a.hi = c->act.hi;
    a.ldc = cg->P;
    a.c_wide = dPW;
    a.c_keep = OW;
    for (size_t r0 = 0; r0 < OH; r0 += cg->drows) {
        size_t nr = OH - r0 < cg->drows ? OH - r0 : cg->drows;
        a.n = nr * dPW;
        a.b = planes + gi * cg->Cg * ss * cg->dplane + r0 * dPW;
        a.c = yg + r0 * OW;
        if (th)
            gir_sgemm(&a, th);
        else
            gir_sgemm_serial(&a, ws);
        if (post_act)
            rt_act_apply_rows(&c->act, th, yg + r0 * OW, cg->Mg, nr * OW, cg->P);
    }
}

typedef struct direct_job {
    const rt_call *c;
    const conv_state *s;
    const conv_geo *cg;
    const float *planes, *bias;
    float *y;
} direct_job;

static void direct_groups(void *ctx, size_t g0, size_t g1, int worker)
{
    const direct_job *j = ctx;
    for (size_t gi = g0; gi < g1; gi++)
        direct_group(j->c, j->s, j->cg, j->planes, j->bias, j->y, gi, NULL, gir_threads_scratch(j->c->th, worker));
}

/* One image through the direct form: the planes, then every group (whole
 * groups to each worker when there are several: one barrier for all). */
static void conv_direct(const rt_call *c, const conv_state *s, const conv_geo *cg, const float *x, const float *bias,
                        float *y)
{
    float *planes = c->scratch;
    plane_job pj = { cg, x, planes };
    size_t chans = cg->in_blk ? (cg->C + 15) / 16 : cg->C; /* channels, or blocks */
    rt_parallel_for(c->th, chans * cg->ds * cg->ds * fill_bands(cg), 1, 2, fill_planes, &pj);
    if (s->px) {
        /* a group's planes: Cg channels' (whole blocks when in blocks) */
        rt_convpx_args a = { .planes = planes, .gplanes = cg->Cg * cg->ds * cg->ds * cg->dplane, .koff = s->koff,
                             .OH = cg->g.out[1], .OW = cg->g.out[2], .dPW = cg->dPW * cg->dstride,
                             .csw = cg->dstride,
                             .pxs = cg->in_blk ? 16 : 1, .bias = bias, .accumulate = c->accumulate,
                             .act = &c->act, .y = y,
                             .y_blocked = cg->out_blk };
        rt_convpx_run(s->px, &a, c->th);
        return;
    }
    if (cg->G >= 2 && gir_threads_count(c->th) > 1) {
        direct_job j = { c, s, cg, planes, bias, y };
        rt_parallel_for(c->th, cg->G, 1, 1, direct_groups, &j);
        return;
    }
    for (size_t gi = 0; gi < cg->G; gi++)
        direct_group(c, s, cg, planes, bias, y, gi, c->th, NULL);
}

/* Pointwise convolution with an activation after the product, by column
 * blocks that stay in cache between the two. */
typedef struct pw_job {
    const rt_call *c;
    const gir_gemm_args *a; /* all but the block's columns */
    const float *x;
    float *y;
    size_t P, cols, rows;
} pw_job;

static void pw_blocks(void *ctx, size_t b0, size_t b1, int worker)
{
    const pw_job *j = ctx;
    for (size_t b = b0; b < b1; b++) {
        size_t c0 = b * j->cols;
        gir_gemm_args a = *j->a;
        a.n = j->P - c0 < j->cols ? j->P - c0 : j->cols;
        a.b = j->x + c0;
        a.ldb = j->P;
        a.c = j->y + c0;
        gir_sgemm_serial(&a, gir_threads_scratch(j->c->th, worker));
        rt_act_apply_rows(&j->c->act, NULL, j->y + c0, j->rows, a.n, j->P);
    }
}

static gir_status conv_run(rt_call *c, gir_error *err)
{
    conv_state *s = c->state;
    const conv_geo cg = *(const conv_geo *)s->geo;
    if (cg.P == 0 || cg.N == 0 || cg.M == 0)
        return GIR_OK;
    const float *x = c->in[0]->data, *w = c->in[1]->data;
    const float *bias = c->n_in > 2 && c->in[2] ? c->in[2]->data : NULL;
    float *y = c->out[0]->data;
    if (cg.depthwise) {
        if (s->dwc) {
            rt_dwc_args a = { x, cg.N, bias, c->accumulate, &c->act, y, c->scratch, cg.in_blk, cg.out_blk };
            rt_dwc_run(s->dwc, &a, c->th);
        } else {
            conv_depthwise(c, &cg);
        }
        return GIR_OK;
    }
    if (s->wino) {
        for (size_t n = 0; n < cg.N; n++)
            rt_wino_run(s->wino, x + n * cg.C * cg.insp, bias, y + n * cg.M * cg.P, &c->act, c->accumulate,
                        c->scratch, c->th);
        return GIR_OK;
    }
    if (cg.pwpx) {
        for (size_t n = 0; n < cg.N; n++) {
            /* output pixel (oh, ow) reads input pixel (s oh, s ow): rows of
             * s W, columns s apart (stride 1: the output's own rows) */
            rt_convpx_args a = { .planes = x + n * RT_BLOCKED_CH(cg.C, cg.in_blk) * cg.insp,
                                 .koff = s->koff,
                                 .OH = cg.g.out[1],
                                 .OW = cg.g.out[2],
                                 .dPW = cg.g.s[1] * cg.g.in[2],
                                 .csw = cg.g.s[2],
                                 .pxs = cg.in_blk ? 16 : 1,
                                 .bias = bias,
                                 .accumulate = c->accumulate,
                                 .act = &c->act,
                                 .y = y + n * RT_BLOCKED_CH(cg.M, cg.out_blk) * cg.P,
                                 .y_blocked = cg.out_blk };
            rt_convpx_run(s->px, &a, c->th);
        }
        return GIR_OK;
    }
    if (cg.direct) {
        for (size_t n = 0; n < cg.N; n++)
            conv_direct(c, s, &cg, x + n * RT_BLOCKED_CH(cg.C, cg.in_blk) * cg.insp, bias,
                        y + n * RT_BLOCKED_CH(cg.M, cg.out_blk) * cg.P);
        return GIR_OK;
    }
    const size_t OW = cg.g.out[2], rows = cg.g.out[0] * cg.g.out[1];
    for (size_t n = 0; n < cg.N; n++) {
        for (size_t gi = 0; gi < cg.G; gi++) {
            /* an empty input (no channels, or padding around nothing) has no
             * data pointer: form no address from it (GEMM reads none) */
            const float *xg = x ? x + (n * cg.C + gi * cg.Cg) * cg.insp : x;
            float *yg = y + (n * cg.M + gi * cg.Mg) * cg.P;
            gir_gemm_args a = { 0 };
            a.m = cg.Mg;
            a.k = cg.Kg;
            a.alpha = 1.0f;
            a.beta = c->accumulate ? 1.0f : 0.0f;
            a.a = w ? w + gi * cg.Mg * cg.Kg : w; /* empty weights (Kg 0): no data pointer */
            a.lda = cg.Kg;
            a.packed_a = s->packed ? &s->packed[gi] : NULL;
            a.ldc = cg.P;
            a.bias_m = bias ? bias + gi * cg.Mg : NULL;
            a.clamp = c->act.on && c->act.kind == RT_ACT_CLAMP;
            a.lo = c->act.lo;
            a.hi = c->act.hi;
            bool post_act = c->act.on && !a.clamp; /* applied to each block while it is in cache */
            if (cg.pointwise) {
                size_t cols = cg.P;
                if (post_act) {
                    cols = ((size_t)1 << 16) / (cg.Mg ? cg.Mg : 1) / 64 * 64;
                    if (cols < 256)
                        cols = 256;
                }
                size_t blocks = (cg.P + cols - 1) / cols;
                if (post_act && blocks >= 2 * (size_t)gir_threads_count(c->th) && gir_threads_count(c->th) > 1) {
                    /* whole column blocks (product, then activation) to each
                     * worker: one barrier instead of two per block */
                    pw_job j = { c, &a, xg, yg, cg.P, cols, cg.Mg };
                    rt_parallel_for(c->th, blocks, 1, 1, pw_blocks, &j);
                    continue;
                }
                for (size_t c0 = 0; c0 < cg.P; c0 += cols) {
                    a.n = cg.P - c0 < cols ? cg.P - c0 : cols;
                    a.b = xg + c0;
                    a.ldb = cg.P;
                    a.c = yg + c0;
                    gir_sgemm(&a, c->th);
                    if (post_act)
                        rt_act_apply_rows(&c->act, c->th, yg + c0, cg.Mg, a.n, cg.P);
                }
                continue;
            }
            gir_gemm_blayout l = gir_gemm_b_layout(s->packed ? s->packed[gi].isa : GIR_GEMM_AUTO);
            for (size_t r0 = 0; r0 < rows; r0 += cg.chunk_rows) {
                size_t r1 = r0 + cg.chunk_rows < rows ? r0 + cg.chunk_rows : rows;
                im2col_job j = { &cg.g, xg, c->scratch, r0, r1, cg.Kg, l };
                a.n = (r1 - r0) * OW;
                if (OW < NARROW_OW) {
                    rt_parallel_for(c->th, cg.Kg, 1, 16, im2col_plain, &j);
                    a.b = c->scratch;
                    a.ldb = a.n;
                    a.packed_b = NULL;
                } else {
                    size_t panels = ((r1 - r0) * OW + l.nr - 1) / l.nr;
                    rt_parallel_for(c->th, panels, 1, 4, im2col_rows, &j);
                    a.packed_b = c->scratch;
                }
                a.c = yg + r0 * OW;
                gir_sgemm(&a, c->th);
                if (post_act)
                    rt_act_apply_rows(&c->act, c->th, a.c, cg.Mg, a.n, cg.P);
            }
        }
    }
    (void)err;
    return GIR_OK;
}

const rt_kernel gir_k_conv = { conv_prepare, conv_run, conv_release, RT_FUSE_ACT | RT_FUSE_ACTX | RT_FUSE_ADD };

/* ---- ConvTranspose --------------------------------------------------------------- */

struct convt_geo {
    int nsp;
    size_t N, C, M, G, Cg, Mg, KK, insp, outsp;
    size_t in[3], out[3], k[3], s[3], d[3];
    int64_t pb[3]; /* may be negative: output_shape larger than the full result */
};

static gir_status convt_geometry(const rt_call *c, convt_geo *t, gir_error *err)
{
    const rt_tensor *x = c->in[0], *w = c->in[1];
    gir_status st;
    char sx[96], sw[96];
    if ((st = rt_want_f32_pair(c, err)))
        return st;
    if (x->shape.rank < 3 || x->shape.rank > 5 || w->shape.rank != x->shape.rank)
        return gir_fail(err, GIR_E_SHAPE, "ConvTranspose input %s and weight %s need equal ranks 3 to 5",
                        gir_shape_str(&x->shape, sx, sizeof sx), gir_shape_str(&w->shape, sw, sizeof sw));
    int nsp = x->shape.rank - 2;
    int64_t group = rt_int(c, "group", 1);
    size_t C = (size_t)x->shape.dims[1];
    if (group < 1 || (uint64_t)group > C || C % (size_t)group != 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "group %lld does not divide %zu input channels", (long long)group, C);
    if ((size_t)w->shape.dims[0] != C)
        return gir_fail(err, GIR_E_SHAPE, "ConvTranspose weight %s does not start with the %zu input channels",
                        gir_shape_str(&w->shape, sw, sizeof sw), C);
    t->nsp = nsp;
    t->N = (size_t)x->shape.dims[0];
    t->C = C;
    t->G = (size_t)group;
    t->Cg = C / t->G;
    t->Mg = (size_t)w->shape.dims[1];
    t->M = t->Mg * t->G;
    if ((st = conv_bias_ok(c, "ConvTranspose", t->M, err)))
        return st;
    int64_t s[3], d[3], p[6], op[3], ks[3], oshape[3];
    if ((st = rt_ints_n(c, "strides", (size_t)nsp, 1, 1, s, err)) ||
        (st = rt_ints_n(c, "dilations", (size_t)nsp, 1, 1, d, err)) ||
        (st = rt_ints_n(c, "pads", (size_t)nsp * 2, 0, 0, p, err)) ||
        (st = rt_ints_n(c, "output_padding", (size_t)nsp, 0, 0, op, err)) ||
        (st = rt_ints_n(c, "kernel_shape", (size_t)nsp, 1, -1, ks, err)))
        return st;
    const int64_t *osv;
    ptrdiff_t osn = rt_ints(c, "output_shape", &osv);
    if (osn >= 0) {
        /* spatial dims, or the full shape */
        if (osn == nsp + 2)
            osv += 2;
        else if (osn != nsp)
            return gir_fail(err, GIR_E_ATTRIBUTE, "output_shape has %td values, expected %d", osn, nsp);
        for (int i = 0; i < nsp; i++) {
            if (osv[i] < 1 || osv[i] > GEOM_MAX)
                return gir_fail(err, GIR_E_ATTRIBUTE, "output_shape[%d] = %lld is out of range", i, (long long)osv[i]);
            oshape[i] = osv[i];
        }
    }
    const char *ap = rt_string(c, "auto_pad", "NOTSET");
    bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
    bool upper = strcmp(ap, "SAME_UPPER") == 0;
    if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
    for (int i = 0; i < 3; i++) {
        t->in[i] = t->out[i] = t->k[i] = t->s[i] = t->d[i] = 1;
        t->pb[i] = 0;
    }
    int off = 3 - nsp;
    t->KK = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape.dims[2 + i], k = w->shape.dims[2 + i];
        if (ks[i] != -1 && ks[i] != k)
            return gir_fail(err, GIR_E_ATTRIBUTE, "kernel_shape[%d] = %lld disagrees with the weight %s", i,
                            (long long)ks[i], gir_shape_str(&w->shape, sw, sizeof sw));
        if (k < 1 || k > GEOM_MAX)
            return gir_fail(err, GIR_E_SHAPE, "kernel size %lld is outside 1..%lld", (long long)k,
                            (long long)GEOM_MAX);
        if (op[i] >= s[i] && op[i] >= d[i])
            return gir_fail(err, GIR_E_ATTRIBUTE, "output_padding[%d] = %lld must be less than the stride or dilation",
                            i, (long long)op[i]);
        int64_t keff = (k - 1) * d[i] + 1;
        int64_t full = s[i] * (in - 1) + op[i] + keff; /* before padding is removed */
        int64_t pb, out;
        if (osn >= 0 || same) {
            /* the padding follows from the output size; a negative total
             * (a larger output) leaves cells that hold only the bias */
            out = osn >= 0 ? oshape[i] : in * s[i];
            int64_t total = full - out;
            int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor(total / 2) */
            pb = upper ? half : total - half;
        } else {
            pb = strcmp(ap, "VALID") == 0 ? 0 : p[i];
            int64_t pe = strcmp(ap, "VALID") == 0 ? 0 : p[i + nsp];
            out = full - pb - pe;
            if (out < 1)
                return gir_fail(err, GIR_E_SHAPE, "ConvTranspose output size %lld along spatial axis %d is not positive",
                                (long long)out, i);
        }
        t->in[off + i] = (size_t)in;
        t->out[off + i] = (size_t)out;
        t->k[off + i] = (size_t)k;
        t->s[off + i] = (size_t)s[i];
        t->d[off + i] = (size_t)d[i];
        t->pb[off + i] = pb;
        t->KK *= (size_t)k;
    }
    t->insp = t->in[0] * t->in[1] * t->in[2];
    t->outsp = t->out[0] * t->out[1] * t->out[2];
    return GIR_OK;
}

static gir_status convt_prepare(rt_call *c, gir_error *err)
{
    convt_geo t;
    conv_state *s;
    gir_status st = convt_geometry(c, &t, err);
    if (st || (st = conv_begin(c, t.N, t.M, t.nsp, t.out, &t, sizeof t, &s, err)))
        return st;
    const rt_tensor *w = c->in[1];
    size_t rows = t.Mg * t.KK;
    /* A = W_g^T: W_g is Cg x (Mg*KK) */
    if (c->in_const[1] && !s->packed && (st = pack_groups(s, t.G, true, rows, t.Cg, w->data, err)))
        return st;
    c->in_done[1] = s->packed != NULL;
    uint64_t bytes;
    if (!gir_mul_u64(rows, t.insp, &bytes) || !gir_mul_u64(bytes, sizeof(float), &bytes) || bytes > SIZE_MAX / 2)
        return gir_fail(err, GIR_E_LIMIT, "ConvTranspose columns are too large");
    c->scratch_bytes = (size_t)bytes;
    return GIR_OK;
}

static gir_status convt_run(rt_call *c, gir_error *err)
{
    conv_state *s = c->state;
    const convt_geo t = *(const convt_geo *)s->geo;
    const float *x = c->in[0]->data, *w = c->in[1]->data;
    const float *bias = c->n_in > 2 && c->in[2] ? c->in[2]->data : NULL;
    float *y = c->out[0]->data, *col = c->scratch;
    size_t rows = t.Mg * t.KK;
    for (size_t n = 0; n < t.N; n++) {
        for (size_t m = 0; m < t.M; m++) {
            float *ym = y + (n * t.M + m) * t.outsp;
            float bv = bias ? bias[m] : 0.0f;
            for (size_t i = 0; i < t.outsp; i++)
                ym[i] = bv;
        }
        for (size_t gi = 0; gi < t.G; gi++) {
            if (rows == 0 || t.insp == 0)
                continue;
            gir_gemm_args a = { 0 };
            a.m = rows;
            a.n = t.insp;
            a.k = t.Cg;
            a.alpha = 1.0f;
            a.a = w + gi * t.Cg * rows;
            a.lda = rows;
            a.trans_a = true;
            a.packed_a = s->packed ? &s->packed[gi] : NULL;
            a.b = x + (n * t.C + gi * t.Cg) * t.insp;
            a.ldb = t.insp;
            a.c = col;
            a.ldc = t.insp;
            gir_sgemm(&a, c->th);
            /* col2im: scatter-add each column into the output */
            for (size_t r = 0; r < rows; r++) {
                size_t kw = r % t.k[2], q = r / t.k[2], kh = q % t.k[1];
                q /= t.k[1];
                size_t kd = q % t.k[0], m = q / t.k[0];
                float *ym = y + (n * t.M + gi * t.Mg + m) * t.outsp;
                const float *cr = col + r * t.insp;
                for (size_t id = 0; id < t.in[0]; id++) {
                    int64_t od = (int64_t)(id * t.s[0] + kd * t.d[0]) - t.pb[0];
                    if (od < 0 || od >= (int64_t)t.out[0])
                        continue;
                    for (size_t ih = 0; ih < t.in[1]; ih++) {
                        int64_t oh = (int64_t)(ih * t.s[1] + kh * t.d[1]) - t.pb[1];
                        if (oh < 0 || oh >= (int64_t)t.out[1])
                            continue;
                        float *yr = ym + ((size_t)od * t.out[1] + (size_t)oh) * t.out[2];
                        const float *cc = cr + (id * t.in[1] + ih) * t.in[2];
                        for (size_t iw = 0; iw < t.in[2]; iw++) {
                            int64_t ow = (int64_t)(iw * t.s[2] + kw * t.d[2]) - t.pb[2];
                            if (ow < 0 || ow >= (int64_t)t.out[2])
                                continue;
                            yr[ow] += cc[iw];
                        }
                    }
                }
            }
        }
    }
    (void)err;
    return GIR_OK;
}

const rt_kernel gir_k_conv_transpose = { convt_prepare, convt_run, conv_release, 0 };
