/* MaxPool (with Indices), AveragePool, GlobalMaxPool, GlobalAveragePool:
 * 1 to 3 spatial dims, padding modes, ceil_mode, dilations. */
#include "conv_dwc.h"
#include "gemm.h"
#include "rt.h"

#include <stdlib.h>

typedef struct pool_state {
    rt_geom g;
    bool count_pad;
    bool row_major_idx; /* storage_order 0 */
    bool vec;           /* max pooling through the plane kernel (k_dw.c) */
    rt_dwpad pad;
    rt_dwc *dwc;          /* max pooling by channel blocks (conv_dwc.h) */
    bool blk_in, blk_out; /* its input, its output in channel blocks */
} pool_state;

static void pool_free(void *state)
{
    pool_state *s = state;
    if (s)
        rt_dwc_free(s->dwc);
    free(s);
}

/* Max pooling without indices over 2-D planes, on AVX-512: by channel
 * blocks, the depthwise convolution's tiles (conv_dwc.h) with a maximum for
 * the sum.  Whole vectors of 16 channels, however small the plane, and no
 * masked edges: GoogLeNet's poolings over 28x28 and 14x14 planes ran 4 to
 * 7 times slower on the plane kernel. */
static bool pool_dwc_geometry(const rt_call *c, const rt_geom *g, rt_dwc_geo *dg)
{
    if (c->node->op != GIR_OP_MaxPool || (c->node->n_out > 1 && c->node->out[1] >= 0) || c->n_in != 1 ||
        g->nsp != 2 || !rt_dwc_available())
        return false;
    memset(dg, 0, sizeof *dg);
    RT_WINDOW_FROM_GEOM(dg, g);
    dg->dh = g->d[1];
    dg->dw = g->d[2];
    return rt_dwc_geo_ok(dg);
}

/* The pooling window over an input of shape xs (rank 3 to 5): the one
 * geometry both pool_prepare and rt_maxpool_reads_blocks use, so that
 * they agree on which poolings read channel blocks. */
static gir_status pool_geom(const rt_call *c, const gir_shape *xs, rt_geom *g, gir_error *err)
{
    int nsp = xs->rank - 2;
    int64_t k[3];
    gir_status st = rt_ints_n(c, "kernel_shape", (size_t)nsp, 1, 1, k, err);
    return st ? st : rt_geom_make(c, xs, k, nsp, true, rt_int(c, "ceil_mode", 0) != 0, g, err);
}

/* Asked by the Conv that writes the input, before this node is prepared:
 * the window geometry comes from the shape that Conv would write. */
bool rt_maxpool_reads_blocks(const rt_call *c)
{
    const rt_tensor *x = c->in[0];
    rt_geom g;
    rt_dwc_geo dg;
    return x->dtype == GIR_DT_F32 && x->shape.rank == 4 && pool_geom(c, &x->shape, &g, NULL) == GIR_OK &&
           pool_dwc_geometry(c, &g, &dg);
}

/* Max pooling without indices, 2-D, no dilation, horizontal stride 1 or 2:
 * the plane kernel. */
static bool pool_vec_geometry(const rt_call *c, pool_state *s)
{
    const rt_geom *g = &s->g;
    if (c->node->op != GIR_OP_MaxPool || (c->n_out > 1 && c->out[1]) || g->in[0] != 1 || g->k[0] != 1 ||
        g->d[1] != 1 || g->d[2] != 1 || (g->s[2] != 1 && g->s[2] != 2) || g->out[1] == 0 || g->out[2] == 0 ||
        !rt_maxpool_select(GIR_GEMM_AUTO))
        return false;
    rt_dwpad *a = &s->pad;
    rt_dwpad_from_geom(a, g);
    a->pstride = ((a->ow - 1) * a->sw + a->kw + 32 + 15) / 16 * 16;
    return true;
}

static gir_status pool_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    bool is_max = c->node->op == GIR_OP_MaxPool;
    if (x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank < 3 || x->shape.rank > 5)
        return gir_fail(err, GIR_E_SHAPE, "%s input has rank %d, expected 3 to 5", gir_op_name(c->node->op),
                        x->shape.rank);
    int nsp = x->shape.rank - 2;
    const int64_t *kv;
    if (rt_ints(c, "kernel_shape", &kv) < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s needs kernel_shape", gir_op_name(c->node->op));
    pool_state *s = rt_state(c, sizeof *s);
    if (!s)
        return gir_nomem(err);
    TRY(pool_geom(c, &x->shape, &s->g, err));
    s->count_pad = rt_int(c, "count_include_pad", 0) != 0;
    int64_t so = rt_int(c, "storage_order", 0);
    if (so != 0 && so != 1)
        return gir_fail(err, GIR_E_ATTRIBUTE, "storage_order %lld is not 0 or 1", (long long)so);
    s->row_major_idx = so == 0;
    size_t N = (size_t)x->shape.dims[0], C = (size_t)x->shape.dims[1];
    TRY(rt_set_window_out(c->out[0], N, C, nsp, s->g.out, err));
    s->blk_in = x->blocked;
    s->blk_out = false;
    rt_dwc_geo dg;
    if (pool_dwc_geometry(c, &s->g, &dg)) {
        if (s->dwc && !rt_dwc_fits(s->dwc, &dg)) {
            rt_dwc_free(s->dwc);
            s->dwc = NULL;
        }
        if (!s->dwc)
            TRY(rt_dwc_new_max(C, &dg, &s->dwc, err));
        s->vec = false;
        s->blk_out = s->blk_in && rt_reader_takes_blocks(c, N, C, s->g.out[1], s->g.out[2]);
        c->out[0]->blocked = s->blk_out;
        uint64_t bytes;
        if (!gir_mul_u64(rt_dwc_scratch_floats(s->dwc), sizeof(float) * (uint64_t)gir_threads_count(c->th),
                         &bytes) ||
            bytes > SIZE_MAX / 2)
            return gir_fail(err, GIR_E_LIMIT, "pooling tiles are too large");
        c->scratch_bytes = (size_t)bytes;
        return GIR_OK;
    }
    rt_dwc_free(s->dwc);
    s->dwc = NULL;
    if (s->blk_in) /* (rt_maxpool_reads_blocks said it would take the path above) */
        return gir_fail(err, GIR_E_INTERNAL, "%s input is in channel blocks, which it cannot read",
                        gir_op_name(c->node->op));
    s->vec = pool_vec_geometry(c, s);
    if (s->vec) {
        uint64_t bytes;
        if (!gir_mul_u64(s->pad.pstride, sizeof(float) * (uint64_t)gir_threads_count(c->th), &bytes) ||
            bytes > SIZE_MAX / 2)
            return gir_fail(err, GIR_E_LIMIT, "pooling planes are too large");
        c->scratch_bytes = (size_t)bytes;
    }
    if (c->n_out > 1 && c->out[1]) {
        if (!is_max)
            return gir_fail(err, GIR_E_SCHEMA, "%s has one output", gir_op_name(c->node->op));
        TRY(rt_set_out(c->out[1], GIR_DT_I64, &c->out[0]->shape, err));
    }
    return GIR_OK;
}

typedef struct pool_job {
    const rt_call *c;
    const pool_state *s;
    bool is_max;
} pool_job;

/* 2-D planes without indices: row-wise, vectorisable inner loops.  Same
 * order of operations as the general loop below (rows, then columns). */
RT_CLONES static void pool2d_fast(const pool_job *j, const float *xp, float *yp)
{
    const rt_geom *g = &j->s->g;
    const size_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
    const size_t KH = g->k[1], KW = g->k[2], sh = g->s[1], sw = g->s[2], dh = g->d[1], dw = g->d[2];
    const size_t ph = g->pb[1], pw = g->pb[2];
    if (!j->is_max && KH == 2 && KW == 2 && sh == 2 && sw == 2 && dh == 1 && dw == 1 && ph == 0 && pw == 0 &&
        2 * OH <= H && 2 * OW <= W) {
        /* 2x2 windows at stride 2 inside the plane (DenseNet's transitions):
         * one pass per row, the same additions in the same order */
        for (size_t oh = 0; oh < OH; oh++) {
            const float *r0 = xp + 2 * oh * W, *r1 = r0 + W;
            float *yr = yp + oh * OW;
            for (size_t ow = 0; ow < OW; ow++)
                yr[ow] = ((((0.0f + r0[2 * ow]) + r0[2 * ow + 1]) + r1[2 * ow]) + r1[2 * ow + 1]) / 4.0f;
        }
        return;
    }
    for (size_t oh = 0; oh < OH; oh++) {
        float *yr = yp + oh * OW;
        float init = j->is_max ? -INFINITY : 0.0f;
        for (size_t ow = 0; ow < OW; ow++)
            yr[ow] = init;
        size_t rows = 0, prows = 0;
        for (size_t kh = 0; kh < KH; kh++) {
            size_t r = oh * sh + kh * dh;
            if (r < ph + H + g->pe[1])
                prows++;
            if (r < ph || r - ph >= H)
                continue;
            rows++;
            const float *xr = xp + (r - ph) * W;
            for (size_t kw = 0; kw < KW; kw++) {
                size_t woff = kw * dw;
                size_t lo = woff >= pw ? 0 : (pw - woff + sw - 1) / sw;
                size_t hi = W - 1 + pw < woff ? 0 : (W - 1 + pw - woff) / sw + 1;
                if (hi > OW)
                    hi = OW;
                if (lo >= hi)
                    continue;
                const float *xs = xr + lo * sw + woff - pw;
                float *yd = yr + lo;
                size_t n = hi - lo;
                if (j->is_max) { /* the first NaN stays, as in the general loop */
                    for (size_t i = 0; i < n; i++) {
                        float v = xs[i * sw];
                        yd[i] = (v > yd[i] || (v != v && yd[i] == yd[i])) ? v : yd[i];
                    }
                } else {
                    for (size_t i = 0; i < n; i++)
                        yd[i] += xs[i * sw];
                }
            }
        }
        if (j->is_max)
            continue;
        size_t hcount = j->s->count_pad ? prows : rows;
        for (size_t o0 = 0; o0 < OW; o0 += 256) {
            size_t on = OW - o0 < 256 ? OW - o0 : 256;
            float cnt[256];
            for (size_t i = 0; i < on; i++) {
                /* windows inside the plane (and its counted padding) count
                 * KW columns: only those at the edges are counted one by one */
                size_t c0 = (o0 + i) * sw, last = c0 + (KW - 1) * dw, cols = KW;
                if (j->s->count_pad ? last >= pw + W + g->pe[2] : (c0 < pw || last - pw >= W)) {
                    cols = 0;
                    for (size_t kw = 0; kw < KW; kw++) {
                        size_t c = c0 + kw * dw;
                        if (j->s->count_pad ? c < pw + W + g->pe[2] : (c >= pw && c - pw < W))
                            cols++;
                    }
                }
                cnt[i] = (float)(hcount * cols);
            }
            float *yo = yr + o0;
            for (size_t i = 0; i < on; i++) /* the divisions, vectorised */
                yo[i] = cnt[i] != 0.0f ? yo[i] / cnt[i] : 0.0f;
        }
    }
}

static void pool_planes(void *ctx, size_t p0, size_t p1, int worker)
{
    (void)worker;
    const pool_job *j = ctx;
    const rt_geom *g = &j->s->g;
    const float *x = j->c->in[0]->data;
    float *y = j->c->out[0]->data;
    int64_t *idx = j->c->n_out > 1 && j->c->out[1] ? j->c->out[1]->data : NULL;
    const size_t D = g->in[0], H = g->in[1], W = g->in[2];
    const size_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
    const size_t insp = D * H * W, outsp = OD * OH * OW;
    rt_maxpool_fn fn = j->s->vec && j->c->scratch ? rt_maxpool_select(GIR_GEMM_AUTO) : NULL;
    float *row = fn ? (float *)j->c->scratch + (size_t)worker * j->s->pad.pstride : NULL;
    for (size_t p = p0; p < p1; p++) {
        const float *xp = x + p * insp;
        float *yp = y + p * outsp;
        if (fn) {
            fn(&j->s->pad, xp, row, yp);
            continue;
        }
        if (D == 1 && OD == 1 && g->k[0] == 1 && !idx) {
            pool2d_fast(j, xp, yp);
            continue;
        }
        for (size_t od = 0; od < OD; od++)
            for (size_t oh = 0; oh < OH; oh++)
                for (size_t ow = 0; ow < OW; ow++) {
                    float best = -INFINITY;
                    size_t best_at = 0;
                    bool any = false;
                    float sum = 0;
                    size_t count = 0;
                    for (size_t kd = 0; kd < g->k[0]; kd++) {
                        /* positions in padded coordinates: in + pb */
                        size_t pd = od * g->s[0] + kd * g->d[0];
                        bool din = pd >= g->pb[0] && pd - g->pb[0] < D;
                        bool dpad = pd < g->pb[0] + D + g->pe[0];
                        for (size_t kh = 0; kh < g->k[1]; kh++) {
                            size_t ph = oh * g->s[1] + kh * g->d[1];
                            bool hin = ph >= g->pb[1] && ph - g->pb[1] < H;
                            bool hpad = ph < g->pb[1] + H + g->pe[1];
                            for (size_t kw = 0; kw < g->k[2]; kw++) {
                                size_t pw = ow * g->s[2] + kw * g->d[2];
                                bool win = pw >= g->pb[2] && pw - g->pb[2] < W;
                                bool wpad = pw < g->pb[2] + W + g->pe[2];
                                if (din && hin && win) {
                                    size_t at = ((pd - g->pb[0]) * H + (ph - g->pb[1])) * W + (pw - g->pb[2]);
                                    float v = xp[at];
                                    if (j->is_max) {
                                        /* NaN wins, like numpy's max */
                                        if (!any || v > best || (v != v && best == best)) {
                                            best = v;
                                            best_at = at;
                                        }
                                        any = true;
                                    } else {
                                        sum += v;
                                        count++;
                                    }
                                } else if (!j->is_max && j->s->count_pad && dpad && hpad && wpad) {
                                    count++;
                                }
                            }
                        }
                    }
                    size_t o = (od * OH + oh) * OW + ow;
                    if (j->is_max) {
                        yp[o] = best;
                        if (idx) {
                            size_t d0 = best_at / (H * W), h0 = best_at / W % H, w0 = best_at % W;
                            size_t flat = j->s->row_major_idx ? p * insp + best_at
                                                              : p * insp + (w0 * H + h0) * D + d0;
                            idx[p * outsp + o] = (int64_t)flat;
                        }
                    } else {
                        yp[o] = count ? sum / (float)count : 0.0f;
                    }
                }
    }
}

static gir_status pool_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    pool_job j = { c, c->state, c->node->op == GIR_OP_MaxPool };
    if (j.s->dwc) {
        rt_dwc_args a = { x->data, (size_t)x->shape.dims[0], NULL, false, NULL, c->out[0]->data, c->scratch,
                          j.s->blk_in, j.s->blk_out };
        rt_dwc_run(j.s->dwc, &a, c->th);
        return GIR_OK;
    }
    size_t planes = rt_dims_prod(&x->shape, 0, 2);
    rt_parallel_for(c->th, planes, 1, 4, pool_planes, &j);
    return GIR_OK;
}

const rt_kernel gir_k_maxpool = { pool_prepare, pool_run, pool_free, 0 };
const rt_kernel gir_k_avgpool = { pool_prepare, pool_run, pool_free, 0 };

/* ---- global pooling ----------------------------------------------------------- */

static gir_status gpool_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    if (x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank < 2)
        return gir_fail(err, GIR_E_SHAPE, "%s input needs rank 2 or more, has %d", gir_op_name(c->node->op),
                        x->shape.rank);
    gir_shape os = x->shape;
    for (int i = 2; i < os.rank; i++)
        os.dims[i] = 1;
    return rt_set_out(c->out[0], GIR_DT_F32, &os, err);
}

RT_CLONES static void gpool_planes(void *ctx, size_t p0, size_t p1, int worker)
{
    (void)worker;
    const rt_rows_job *j = ctx; /* flag: GlobalMaxPool */
    const float *px = j->x;
    float *py = j->y;
    size_t inner = j->n;
    bool is_max = j->flag;
    for (size_t p = p0; p < p1; p++) {
        const float *xp = px + p * inner;
        if (is_max) {
            float m = inner ? xp[0] : -INFINITY;
            for (size_t i = 1; i < inner; i++)
                if (xp[i] > m || (xp[i] != xp[i] && m == m))
                    m = xp[i];
            py[p] = m;
        } else {
            /* 32 partial sums in float (vectorised into several independent
             * registers, not one chain of adds), added pairwise: deterministic */
            float s[32] = { 0 };
            size_t i = 0;
            for (; i + 32 <= inner; i += 32)
                for (int k = 0; k < 32; k++)
                    s[k] += xp[i + k];
            for (int w = 16; w >= 1; w /= 2)
                for (int k = 0; k < w; k++)
                    s[k] += s[k + w];
            float t = s[0];
            for (; i < inner; i++)
                t += xp[i];
            py[p] = inner ? t / (float)inner : 0.0f;
        }
    }
}

static gir_status gpool_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    size_t planes = rt_dims_prod(&x->shape, 0, 2), inner = rt_dims_prod(&x->shape, 2, x->shape.rank);
    rt_rows_job j = { x->data, c->out[0]->data, inner, c->node->op == GIR_OP_GlobalMaxPool };
    rt_parallel_rows(c->th, planes, gpool_planes, &j);
    return GIR_OK;
}

const rt_kernel gir_k_globalpool = { gpool_prepare, gpool_run, NULL, 0 };
