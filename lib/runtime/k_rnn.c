/* LSTM, GRU and RNN (float32), with ONNX's semantics: directions, both
 * layouts, any of ONNX's activations with alpha/beta, clip, per-batch
 * sequence lengths (steps past a sequence's length give zeros in Y, and
 * the reverse direction starts at its last valid step), initial states,
 * peepholes, input_forget (the forget gate is 1 - the input gate, as in
 * ONNX Runtime) and GRU's linear_before_reset.
 *
 * Each gate's input is computed as ONNX's reference does, in float32 with
 * the same association: X W^T and H R^T (each a dot product accumulated in
 * double, then rounded), their sum, then the biases (LSTM and RNN add
 * Wb + Rb as one vector; GRU adds Wb, then Rb). */
#include "rt.h"

#include "ops/rnn.h"

#include <stdlib.h>

typedef struct rnn_dims {
    size_t T, B, I, H, G, nd;
} rnn_dims;

static gir_status rnn_want(const rt_call *c, size_t i, int rank, const size_t *dims, gir_error *err)
{
    const rt_tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t)
        return GIR_OK;
    if (t->dtype != (i == 4 ? GIR_DT_I32 : GIR_DT_F32))
        return rt_want_dtype(c, i, i == 4 ? GIR_DT_I32 : GIR_DT_F32, err);
    bool ok = t->shape.rank == rank;
    for (int k = 0; ok && k < rank; k++)
        ok = (size_t)t->shape.dims[k] == dims[k];
    if (ok)
        return GIR_OK;
    char nm[32], sb[96];
    return gir_fail(err, GIR_E_SHAPE, "%s input %zu (%s) has shape %s, which does not fit X and hidden_size",
                    gir_op_name(c->node->op), i, gir_op_operand_name(c->node->op, false, i, nm, sizeof nm),
                    gir_shape_str(&t->shape, sb, sizeof sb));
}

static gir_status rnn_read(const rt_call *c, gir_rnn_desc *d, rnn_dims *m, gir_error *err)
{
    TRY(gir_rnn_desc_read(c->node, d, err));
    const rt_tensor *x = c->in[0];
    if (x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank != 3)
        return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 3, found rank %d", gir_op_name(c->node->op),
                        x->shape.rank);
    m->T = (size_t)x->shape.dims[d->layout ? 1 : 0];
    m->B = (size_t)x->shape.dims[d->layout ? 0 : 1];
    m->I = (size_t)x->shape.dims[2];
    m->H = (size_t)d->hidden;
    m->G = (size_t)d->gates;
    m->nd = (size_t)d->dirs;
    size_t GH = m->G * m->H;
    if (!c->in[1] || !c->in[2])
        return gir_fail(err, GIR_E_ARGUMENT, "%s needs inputs W and R", gir_op_name(c->node->op));
    TRY(rnn_want(c, 1, 3, (size_t[]){ m->nd, GH, m->I }, err));
    TRY(rnn_want(c, 2, 3, (size_t[]){ m->nd, GH, m->H }, err));
    TRY(rnn_want(c, 3, 2, (size_t[]){ m->nd, 2 * GH }, err));
    TRY(rnn_want(c, 4, 1, (size_t[]){ m->B }, err));
    size_t st[3] = { m->nd, m->B, m->H };
    if (d->layout) {
        st[0] = m->B;
        st[1] = m->nd;
    }
    TRY(rnn_want(c, 5, 3, st, err));
    TRY(rnn_want(c, 6, 3, st, err));
    TRY(rnn_want(c, 7, 2, (size_t[]){ m->nd, 3 * m->H }, err));
    return GIR_OK;
}

static gir_status rnn_prepare(rt_call *c, gir_error *err)
{
    gir_rnn_desc d;
    rnn_dims m;
    TRY(rnn_read(c, &d, &m, err));
    gir_shape y = { 4, { 0 } }, s = { 3, { 0 } };
    if (d.layout) {
        y.dims[0] = (int64_t)m.B, y.dims[1] = (int64_t)m.T, y.dims[2] = (int64_t)m.nd, y.dims[3] = (int64_t)m.H;
        s.dims[0] = (int64_t)m.B, s.dims[1] = (int64_t)m.nd, s.dims[2] = (int64_t)m.H;
    } else {
        y.dims[0] = (int64_t)m.T, y.dims[1] = (int64_t)m.nd, y.dims[2] = (int64_t)m.B, y.dims[3] = (int64_t)m.H;
        s.dims[0] = (int64_t)m.nd, s.dims[1] = (int64_t)m.B, s.dims[2] = (int64_t)m.H;
    }
    for (size_t k = 0; k < c->n_out; k++)
        if (c->out[k])
            TRY(rt_set_out(c->out[k], GIR_DT_F32, k ? &s : &y, err));
    /* gates (G*H), the hidden and cell states of every batch row (2*B*H),
     * and r (.) H for GRU (H) */
    uint64_t floats;
    if (!gir_mul_u64(m.B, m.H, &floats) || !gir_mul_u64(floats, 2, &floats) ||
        !gir_add_u64(floats, (uint64_t)(m.G + 1) * m.H, &floats) || !gir_mul_u64(floats, 4, &floats) ||
        floats > SIZE_MAX)
        return gir_fail(err, GIR_E_LIMIT, "%s state is too large", gir_op_name(c->node->op));
    c->scratch_bytes = (size_t)floats;
    return GIR_OK;
}

static inline float clipf(const gir_rnn_desc *d, float v)
{
    if (!d->has_clip)
        return v;
    return v < -d->clip ? -d->clip : v > d->clip ? d->clip : v;
}

/* Row k of w (n columns) times vector v, accumulated in double. */
static inline float dot(const float *w, const float *v, size_t n)
{
    double acc = 0.0;
    for (size_t i = 0; i < n; i++)
        acc += (double)w[i] * (double)v[i];
    return (float)acc;
}

typedef struct rnn_run_ctx {
    const gir_rnn_desc *d;
    rnn_dims m;
    const float *x, *W, *R, *Bias, *P, *h0, *c0;
    const int32_t *len;
    float *y, *yh, *yc;
    float *gates, *h, *cs, *tmp;
} rnn_run_ctx;

static inline size_t x_at(const rnn_run_ctx *r, size_t t, size_t b)
{
    return (r->d->layout ? b * r->m.T + t : t * r->m.B + b) * r->m.I;
}
static inline size_t y_at(const rnn_run_ctx *r, size_t t, size_t dr, size_t b)
{
    const rnn_dims *m = &r->m;
    return (r->d->layout ? (b * m->T + t) * m->nd + dr : (t * m->nd + dr) * m->B + b) * m->H;
}
static inline size_t s_at(const rnn_run_ctx *r, size_t dr, size_t b)
{
    return (r->d->layout ? b * r->m.nd + dr : dr * r->m.B + b) * r->m.H;
}

/* One step of direction dr for batch row b at time t: h (and c) updated. */
static void rnn_step(const rnn_run_ctx *r, size_t dr, const float *xt, float *h, float *cst)
{
    const gir_rnn_desc *d = r->d;
    const rnn_dims *m = &r->m;
    size_t H = m->H, GH = m->G * H;
    const float *W = r->W + dr * GH * m->I, *R = r->R + dr * GH * H;
    const float *wb = r->Bias ? r->Bias + dr * 2 * GH : NULL, *rb = wb ? wb + GH : NULL;
    const gir_rnn_fn *fn = d->fn[dr];
    float *g = r->gates;
    if (d->op == GIR_OP_GRU) {
        /* z and r over the full H; h below */
        for (size_t k = 0; k < 2 * H; k++) {
            float v = dot(W + k * m->I, xt, m->I) + dot(R + k * H, h, H);
            if (wb)
                v = (v + wb[k]) + rb[k];
            g[k] = gir_rnn_apply(&fn[0], clipf(d, v));
        }
        const float *z = g, *rg = g + H;
        float *hh = g + 2 * H;
        if (d->linear_before_reset) {
            for (size_t j = 0; j < H; j++) {
                float hr = dot(R + (2 * H + j) * H, h, H);
                if (rb)
                    hr += rb[2 * H + j];
                float v = dot(W + (2 * H + j) * m->I, xt, m->I) + rg[j] * hr;
                if (wb)
                    v += wb[2 * H + j];
                hh[j] = gir_rnn_apply(&fn[1], clipf(d, v));
            }
        } else {
            float *rh = r->tmp;
            for (size_t j = 0; j < H; j++)
                rh[j] = rg[j] * h[j];
            for (size_t j = 0; j < H; j++) {
                float v = dot(W + (2 * H + j) * m->I, xt, m->I) + dot(R + (2 * H + j) * H, rh, H);
                if (wb)
                    v = (v + wb[2 * H + j]) + rb[2 * H + j];
                hh[j] = gir_rnn_apply(&fn[1], clipf(d, v));
            }
        }
        for (size_t j = 0; j < H; j++)
            h[j] = (1.0f - z[j]) * hh[j] + z[j] * h[j];
        return;
    }
    for (size_t k = 0; k < GH; k++) {
        float v = dot(W + k * m->I, xt, m->I) + dot(R + k * H, h, H);
        if (wb)
            v += wb[k] + rb[k];
        g[k] = v;
    }
    if (d->op == GIR_OP_RNN) {
        for (size_t j = 0; j < H; j++)
            h[j] = gir_rnn_apply(&fn[0], clipf(d, g[j]));
        return;
    }
    /* LSTM: gates i, o, f, c */
    const float *p = r->P ? r->P + dr * 3 * H : NULL;
    float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
    for (size_t j = 0; j < H; j++) {
        float f = gf[j], i = gi[j];
        if (p) {
            i += p[j] * cst[j];
            f += p[2 * H + j] * cst[j];
        }
        i = gir_rnn_apply(&fn[0], clipf(d, i));
        f = d->input_forget ? 1.0f - i : gir_rnn_apply(&fn[0], clipf(d, f));
        float cc = gir_rnn_apply(&fn[1], clipf(d, gc[j]));
        cst[j] = f * cst[j] + i * cc;
        float o = go[j];
        if (p)
            o += p[H + j] * cst[j];
        o = gir_rnn_apply(&fn[0], clipf(d, o));
        h[j] = o * gir_rnn_apply(&fn[2], cst[j]);
    }
}

static gir_status rnn_run(rt_call *c, gir_error *err)
{
    gir_rnn_desc d;
    rnn_run_ctx r = { .d = &d };
    TRY(rnn_read(c, &d, &r.m, err));
    const rnn_dims *m = &r.m;
    size_t H = m->H;
#define IN(i) (c->n_in > (i) && c->in[i] ? c->in[i]->data : NULL)
    r.x = IN(0);
    r.W = IN(1);
    r.R = IN(2);
    r.Bias = IN(3);
    r.len = IN(4);
    r.h0 = IN(5);
    r.c0 = d.op == GIR_OP_LSTM ? IN(6) : NULL;
    r.P = d.op == GIR_OP_LSTM ? IN(7) : NULL;
#undef IN
    for (size_t b = 0; r.len && b < m->B; b++)
        if (r.len[b] < 0 || (size_t)r.len[b] > m->T)
            return gir_fail(err, GIR_E_SHAPE, "%s sequence_lens[%zu] is %d, expected 0 to %zu (the sequence length)",
                            gir_op_name(d.op), b, (int)r.len[b], m->T);
    r.y = c->n_out > 0 && c->out[0] ? c->out[0]->data : NULL;
    r.yh = c->n_out > 1 && c->out[1] ? c->out[1]->data : NULL;
    r.yc = c->n_out > 2 && c->out[2] ? c->out[2]->data : NULL;
    r.gates = c->scratch;
    r.h = r.gates + m->G * H;
    r.cs = r.h + m->B * H;
    r.tmp = r.cs + m->B * H;
    if (r.y)
        memset(r.y, 0, c->out[0]->numel * sizeof(float));
    for (size_t dr = 0; dr < m->nd; dr++) {
        bool rev = d.direction == GIR_RNN_REVERSE || dr == 1;
        for (size_t b = 0; b < m->B; b++) {
            float *h = r.h + b * H, *cst = r.cs + b * H;
            for (size_t j = 0; j < H; j++) {
                h[j] = r.h0 ? r.h0[s_at(&r, dr, b) + j] : 0.0f;
                cst[j] = r.c0 ? r.c0[s_at(&r, dr, b) + j] : 0.0f;
            }
            size_t len = r.len ? (size_t)r.len[b] : m->T;
            for (size_t s = 0; s < len; s++) {
                size_t t = rev ? len - 1 - s : s;
                rnn_step(&r, dr, r.x + x_at(&r, t, b), h, cst);
                if (r.y)
                    memcpy(r.y + y_at(&r, t, dr, b), h, H * sizeof(float));
            }
            if (r.yh)
                memcpy(r.yh + s_at(&r, dr, b), h, H * sizeof(float));
            if (r.yc)
                memcpy(r.yc + s_at(&r, dr, b), cst, H * sizeof(float));
        }
    }
    return GIR_OK;
}

const rt_kernel gir_k_rnn = { rnn_prepare, rnn_run, NULL, 0 };
