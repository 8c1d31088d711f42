/* Normalisations and softmax: BatchNormalization (inference),
 * InstanceNormalization, LRN, Softmax, LogSoftmax, Dropout (inference). */
#include "rt.h"

#include <stdlib.h>

/* ---- BatchNormalization -------------------------------------------------- */

typedef struct bn_state {
    float *ab; /* per channel: scale a, then shift b (2*C) */
    size_t cap;
    bool fixed; /* computed from constant parameters (kept across plans) */
} bn_state;

RT_RELEASE_FREEING(bn_release, bn_state, ab)

static void bn_coeffs(const rt_call *c, float *ab, size_t C, double eps)
{
    const float *scale = c->in[1]->data, *bias = c->in[2]->data, *mean = c->in[3]->data, *var = c->in[4]->data;
    for (size_t i = 0; i < C; i++) {
        double a = (double)scale[i] / sqrt((double)var[i] + eps);
        ab[i] = (float)a;
        ab[C + i] = (float)((double)bias[i] - (double)mean[i] * a);
    }
}

static gir_status bn_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    char sx[96], sp[96];
    if (x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank < 2)
        return gir_fail(err, GIR_E_SHAPE, "BatchNormalization input %s has no channel axis",
                        gir_shape_str(&x->shape, sx, sizeof sx));
    if (rt_int(c, "training_mode", 0) != 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "BatchNormalization in training mode is not supported");
    size_t C = (size_t)x->shape.dims[1];
    static const char *const names[] = { "scale", "bias", "mean", "var" };
    for (size_t i = 1; i < 5; i++) {
        TRY(rt_want_dtype(c, i, GIR_DT_F32, err));
        if (c->in[i]->shape.rank != 1 || (size_t)c->in[i]->shape.dims[0] != C)
            return gir_fail(err, GIR_E_SHAPE, "BatchNormalization %s %s is not [%zu]", names[i - 1],
                            gir_shape_str(&c->in[i]->shape, sp, sizeof sp), C);
    }
    bn_state *s = rt_state(c, sizeof *s);
    if (!s)
        return gir_nomem(err);
    bool all_const = c->in_const[1] && c->in_const[2] && c->in_const[3] && c->in_const[4];
    if (s->fixed && s->cap == C && all_const) {
        for (int i = 1; i <= 4; i++)
            c->in_done[i] = true;
        return rt_set_out(c->out[0], GIR_DT_F32, &x->shape, err);
    }
    s->fixed = false;
    if (s->cap < C) {
        free(s->ab);
        s->ab = malloc(2 * (C ? C : 1) * sizeof *s->ab);
        if (!s->ab) {
            s->cap = 0;
            return gir_nomem(err);
        }
        s->cap = C;
    }
    if (all_const) {
        bn_coeffs(c, s->ab, C, rt_float(c, "epsilon", 1e-5));
        s->fixed = true;
        for (int i = 1; i <= 4; i++)
            c->in_done[i] = true;
    }
    return rt_set_out(c->out[0], GIR_DT_F32, &x->shape, err);
}

typedef struct bn_job {
    const float *x, *ab;
    float *y;
    size_t C, inner;
    bool clamp; /* a fused Relu or Clip */
    float lo, hi;
} bn_job;

/* One plane, out of place (x and y do not overlap) ... */
RT_CLONES static void bn_plane(const float *restrict x, float *restrict y, size_t n, float a, float b, const bn_job *j)
{
    if (j->clamp) {
        const float lo = j->lo, hi = j->hi;
        for (size_t i = 0; i < n; i++) {
            float v = x[i] * a + b; /* NaN passes, as through Relu and Clip */
            y[i] = v < lo ? lo : (v > hi ? hi : v);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            y[i] = x[i] * a + b;
    }
}

/* ... or in place: the same arithmetic. */
RT_CLONES static void bn_plane_inplace(float *restrict y, size_t n, float a, float b, const bn_job *j)
{
    if (j->clamp) {
        const float lo = j->lo, hi = j->hi;
        for (size_t i = 0; i < n; i++) {
            float v = y[i] * a + b;
            y[i] = v < lo ? lo : (v > hi ? hi : v);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            y[i] = y[i] * a + b;
    }
}

static void bn_planes(void *ctx, size_t p0, size_t p1, int worker)
{
    (void)worker;
    const bn_job *j = ctx;
    const size_t inner = j->inner;
    for (size_t p = p0; p < p1; p++) {
        size_t ch = p % j->C;
        const float a = j->ab[ch], b = j->ab[j->C + ch];
        const float *x = j->x + p * inner;
        float *y = j->y + p * inner;
        if (x == y)
            bn_plane_inplace(y, inner, a, b, j);
        else
            bn_plane(x, y, inner, a, b, j);
    }
}

static gir_status bn_run(rt_call *c, gir_error *err)
{
    (void)err;
    bn_state *s = c->state;
    const rt_tensor *x = c->in[0];
    size_t C = (size_t)x->shape.dims[1];
    if (!s->fixed)
        bn_coeffs(c, s->ab, C, rt_float(c, "epsilon", 1e-5));
    bn_job j = { x->data, s->ab, c->out[0]->data, C, rt_dims_prod(&x->shape, 2, x->shape.rank),
                 c->act.on, c->act.lo, c->act.hi };
    rt_parallel_for(c->th, rt_dims_prod(&x->shape, 0, 2), 1, (1 << 15) / (j.inner + 1) + 1, bn_planes, &j);
    return GIR_OK;
}

/* A following Relu or Clip is applied in the same pass (pre-activation
 * blocks: BatchNormalization, Relu, Conv). */
const rt_kernel gir_k_batchnorm = { bn_prepare, bn_run, bn_release, RT_INPLACE | RT_FUSE_ACT };

/* ---- InstanceNormalization --------------------------------------------------- */

static gir_status in_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    char sp[96];
    if (x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank < 3)
        return gir_fail(err, GIR_E_SHAPE, "InstanceNormalization input needs rank 3 or more, has %d", x->shape.rank);
    size_t C = (size_t)x->shape.dims[1];
    for (size_t i = 1; i < 3; i++) {
        TRY(rt_want_dtype(c, i, GIR_DT_F32, err));
        if (c->in[i]->shape.rank != 1 || (size_t)c->in[i]->shape.dims[0] != C)
            return gir_fail(err, GIR_E_SHAPE, "InstanceNormalization %s %s is not [%zu]", i == 1 ? "scale" : "bias",
                            gir_shape_str(&c->in[i]->shape, sp, sizeof sp), C);
    }
    return rt_set_out(c->out[0], GIR_DT_F32, &x->shape, err);
}

static gir_status in_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    const float *scale = c->in[1]->data, *bias = c->in[2]->data, *px = x->data;
    float *py = c->out[0]->data;
    size_t C = (size_t)x->shape.dims[1], inner = rt_dims_prod(&x->shape, 2, x->shape.rank);
    size_t planes = rt_dims_prod(&x->shape, 0, 2);
    double eps = rt_float(c, "epsilon", 1e-5);
    for (size_t p = 0; p < planes; p++) {
        const float *xp = px + p * inner;
        float *yp = py + p * inner;
        double sum = 0, sq = 0;
        for (size_t i = 0; i < inner; i++)
            sum += xp[i];
        double mean = inner ? sum / (double)inner : 0;
        for (size_t i = 0; i < inner; i++)
            sq += ((double)xp[i] - mean) * ((double)xp[i] - mean);
        double var = inner ? sq / (double)inner : 0;
        double a = (double)scale[p % C] / sqrt(var + eps), b = (double)bias[p % C] - mean * a;
        for (size_t i = 0; i < inner; i++)
            yp[i] = (float)((double)xp[i] * a + b);
    }
    return GIR_OK;
}

const rt_kernel gir_k_instancenorm = { in_prepare, in_run, NULL, RT_INPLACE };

/* ---- LRN ---------------------------------------------------------------------- */

static gir_status lrn_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    if (x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank < 3)
        return gir_fail(err, GIR_E_SHAPE, "LRN input needs rank 3 or more, has %d", x->shape.rank);
    int64_t size = rt_int(c, "size", 0);
    if (size < 1 || size > (1 << 20))
        return gir_fail(err, GIR_E_ATTRIBUTE, "LRN size %lld is outside 1..%d", (long long)size, 1 << 20);
    return rt_set_out(c->out[0], GIR_DT_F32, &x->shape, err);
}

static gir_status lrn_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    const float *px = x->data;
    float *py = c->out[0]->data;
    size_t N = (size_t)x->shape.dims[0], C = (size_t)x->shape.dims[1];
    size_t inner = rt_dims_prod(&x->shape, 2, x->shape.rank);
    int64_t size = rt_int(c, "size", 1);
    double alpha = rt_float(c, "alpha", 1e-4), beta = rt_float(c, "beta", 0.75), bias = rt_float(c, "bias", 1.0);
    size_t before = (size_t)(size - 1) / 2, after = (size_t)(size - 1) - before;
    for (size_t n = 0; n < N; n++)
        for (size_t ch = 0; ch < C; ch++) {
            size_t c0 = ch >= before ? ch - before : 0, c1 = ch + after < C ? ch + after : C - 1;
            for (size_t i = 0; i < inner; i++) {
                double sq = 0;
                for (size_t k = c0; k <= c1; k++) {
                    double v = px[(n * C + k) * inner + i];
                    sq += v * v;
                }
                double v = px[(n * C + ch) * inner + i];
                py[(n * C + ch) * inner + i] = (float)(v / pow(bias + alpha / (double)size * sq, beta));
            }
        }
    return GIR_OK;
}

const rt_kernel gir_k_lrn = { lrn_prepare, lrn_run, NULL, 0 };

/* ---- Softmax / LogSoftmax (along one axis, opset 13) --------------------------- */

static gir_status softmax_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    int axis;
    if (x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "%s needs rank 1 or more", gir_op_name(c->node->op));
    TRY(rt_axis(c, "axis", rt_int(c, "axis", -1), x->shape.rank, &axis, err));
    return rt_set_out(c->out[0], GIR_DT_F32, &x->shape, err);
}

typedef struct softmax_job {
    const float *x;
    float *y;
    size_t len, inner;
    bool log;
} softmax_job;

static void softmax_rows(void *ctx, size_t r0, size_t r1, int worker)
{
    (void)worker;
    const softmax_job *j = ctx;
    const size_t L = j->len, I = j->inner;
    for (size_t r = r0; r < r1; r++) {
        size_t o = r / I, in = r % I;
        const float *x = j->x + o * L * I + in;
        float *y = j->y + o * L * I + in;
        float mx = -INFINITY;
        for (size_t k = 0; k < L; k++)
            if (x[k * I] > mx)
                mx = x[k * I];
        if (mx == -INFINITY)
            mx = 0.0f; /* all -inf: avoid inf - inf */
        double sum = 0;
        if (j->log) {
            for (size_t k = 0; k < L; k++)
                sum += exp((double)(x[k * I] - mx));
            float ls = (float)log(sum);
            for (size_t k = 0; k < L; k++)
                y[k * I] = x[k * I] - mx - ls;
        } else {
            for (size_t k = 0; k < L; k++) {
                float e = expf(x[k * I] - mx);
                y[k * I] = e;
                sum += e;
            }
            float inv = (float)(1.0 / sum);
            for (size_t k = 0; k < L; k++)
                y[k * I] *= inv;
        }
    }
}

static gir_status softmax_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    int axis;
    rt_axis(c, "axis", rt_int(c, "axis", -1), x->shape.rank, &axis, NULL);
    softmax_job j = { x->data, c->out[0]->data, (size_t)x->shape.dims[axis],
                      rt_dims_prod(&x->shape, axis + 1, x->shape.rank), c->node->op == GIR_OP_LogSoftmax };
    size_t rows = rt_dims_prod(&x->shape, 0, axis) * j.inner;
    rt_parallel_for(c->th, rows, 1, (1 << 14) / (j.len + 1) + 1, softmax_rows, &j);
    return GIR_OK;
}

const rt_kernel gir_k_softmax = { softmax_prepare, softmax_run, NULL, RT_INPLACE };

/* ---- Dropout (inference: identity, mask all true) --------------------------------- */

static gir_status dropout_prepare(rt_call *c, gir_error *err)
{
    if (rt_int(c, "training_mode", 0) != 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "Dropout in training mode is not supported (it is random)");
    TRY(rt_set_out(c->out[0], c->in[0]->dtype, &c->in[0]->shape, err));
    if (c->n_out > 1 && c->out[1])
        return rt_set_out(c->out[1], GIR_DT_BOOL, &c->in[0]->shape, err);
    return GIR_OK;
}

static gir_status dropout_run(rt_call *c, gir_error *err)
{
    (void)err;
    if (c->n_out > 1 && c->out[1])
        memset(c->out[1]->data, 1, c->out[1]->numel);
    return GIR_OK;
}

const rt_kernel gir_k_dropout = { dropout_prepare, dropout_run, NULL, RT_VIEW };
