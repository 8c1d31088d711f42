/* Resize: nearest (any element type), linear and cubic (float32), every
 * coordinate transformation mode but tf_crop_and_resize, applied one axis at
 * a time (the interpolations are separable). */
#include "rt.h"

#include <stdlib.h>

enum { RZ_NEAREST, RZ_LINEAR, RZ_CUBIC };
enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC, CT_TF_HALF_PIXEL_NN };
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL };

typedef struct rz_axis {
    int axis;
    size_t in, out;
    size_t *idx;  /* out x 4 source indices */
    double *w;    /* out x 4 weights */
    int taps;     /* 1 nearest, 2 linear, 4 cubic */
} rz_axis;

typedef struct rz_state {
    int mode, ct, nm;
    double a;
    bool exclude_outside;
    double scale[GIR_MAX_RANK];
    gir_shape out;
    rz_axis ax[GIR_MAX_RANK];
    int nax;
} rz_state;

static void rz_free_axes(rz_state *s)
{
    for (int i = 0; i < s->nax; i++) {
        free(s->ax[i].idx);
        free(s->ax[i].w);
    }
    s->nax = 0;
}

static void rz_release(void *p)
{
    rz_state *s = p;
    if (s)
        rz_free_axes(s);
    free(s);
}

static int pick(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

static double rz_coord(const rz_state *s, double x, size_t in, size_t out, double scale)
{
    switch (s->ct) {
    case CT_HALF_PIXEL:
        return (x + 0.5) / scale - 0.5;
    case CT_HALF_PIXEL_SYM: {
        double adj = (double)out / (scale * (double)in), center = (double)in / 2.0;
        return center * (1.0 - adj) + (x + 0.5) / scale - 0.5;
    }
    case CT_PYTORCH_HALF_PIXEL:
        return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CT_ALIGN_CORNERS:
        return out == 1 ? 0.0 : x * (double)(in - 1) / (double)(out - 1);
    case CT_ASYMMETRIC:
        return x / scale;
    default: /* tf_half_pixel_for_nn */
        return (x + 0.5) / scale;
    }
}

static size_t clampi(int64_t v, size_t n)
{
    return v < 0 ? 0 : (size_t)v >= n ? n - 1 : (size_t)v;
}

static void cubic_weights(double t, double a, double *w)
{
    double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
    w[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
    w[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
    w[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
    w[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

static gir_status rz_axis_tables(const rz_state *s, rz_axis *ax, double scale, gir_error *err)
{
    size_t out = ax->out, in = ax->in;
    ax->taps = s->mode == RZ_NEAREST ? 1 : s->mode == RZ_LINEAR ? 2 : 4;
    ax->idx = calloc(out ? out * 4 : 1, sizeof *ax->idx);
    ax->w = calloc(out ? out * 4 : 1, sizeof *ax->w);
    if (!ax->idx || !ax->w)
        return gir_nomem(err);
    for (size_t o = 0; o < out; o++) {
        double x = rz_coord(s, (double)o, in, out, scale);
        size_t *id = ax->idx + o * 4;
        double *w = ax->w + o * 4;
        if (s->mode == RZ_NEAREST) {
            double f = floor(x), fr = x - f;
            double r;
            switch (s->nm) {
            case NM_ROUND_PREFER_FLOOR: r = fr == 0.5 ? f : round(x); break;
            case NM_ROUND_PREFER_CEIL: r = fr == 0.5 ? f + 1 : round(x); break;
            case NM_FLOOR: r = f; break;
            default: r = ceil(x); break;
            }
            id[0] = clampi(r < -1e18 ? -1 : r > 1e18 ? (int64_t)1 << 62 : (int64_t)r, in);
            w[0] = 1.0;
        } else if (s->mode == RZ_LINEAR) {
            if (x < 0)
                x = 0;
            if (x > (double)(in - 1))
                x = (double)(in - 1);
            double f = floor(x);
            id[0] = clampi((int64_t)f, in);
            id[1] = clampi((int64_t)f + 1, in);
            w[1] = x - f;
            w[0] = 1.0 - w[1];
        } else {
            double f = floor(x);
            if (f < -1e9)
                f = -1e9;
            if (f > 1e9)
                f = 1e9;
            cubic_weights(x - f, s->a, w);
            double sum = 0;
            for (int t = 0; t < 4; t++) {
                int64_t i = (int64_t)f - 1 + t;
                if (s->exclude_outside && (i < 0 || i >= (int64_t)in))
                    w[t] = 0;
                sum += w[t];
                id[t] = clampi(i, in);
            }
            if (s->exclude_outside && sum != 0)
                for (int t = 0; t < 4; t++)
                    w[t] /= sum;
        }
    }
    return GIR_OK;
}

static gir_status rz_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    static const char *const modes[] = { "nearest", "linear", "cubic" };
    static const char *const cts[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn" };
    static const char *const nms[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil" };
    rz_state *s = rt_state(c, sizeof *s);
    if (!s)
        return gir_nomem(err);
    rz_free_axes(s);
    const char *v;
    if ((s->mode = pick(v = rt_string(c, "mode", "nearest"), modes, 3)) < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Resize mode '%s' is not nearest, linear or cubic", v);
    v = rt_string(c, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(v, "tf_crop_and_resize") == 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "Resize with tf_crop_and_resize is not supported");
    if ((s->ct = pick(v, cts, 6)) < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "coordinate_transformation_mode '%s' is unknown", v);
    if ((s->nm = pick(v = rt_string(c, "nearest_mode", "round_prefer_floor"), nms, 4)) < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "nearest_mode '%s' is unknown", v);
    if (rt_int(c, "antialias", 0) != 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "Resize with antialias is not supported");
    s->a = rt_float(c, "cubic_coeff_a", -0.75);
    s->exclude_outside = rt_int(c, "exclude_outside", 0) != 0;
    if (s->mode != RZ_NEAREST && x->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->dtype <= GIR_DT_UNKNOWN || x->dtype >= GIR_DT_COUNT_)
        return rt_no_kernel_dtype(c, x->dtype, err);
    int r = x->shape.rank;
    const int64_t *axes, *sizes;
    const double *scales;
    ptrdiff_t na = rt_ints(c, "axes", &axes), nsz = rt_ints(c, "sizes", &sizes),
              nsc = gir_attrs_get_floats(&c->node->attrs, "scales", &scales);
    int ax[GIR_MAX_RANK];
    ptrdiff_t n = na >= 0 ? na : r;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (na >= 0) {
            TRY(rt_axis(c, "axes", axes[i], r, &ax[i], err));
        } else {
            ax[i] = (int)i;
        }
    }
    if ((nsz >= 0) == (nsc >= 0) && !(nsc == 0 && nsz > 0) && !(nsz == 0 && nsc > 0))
        return gir_fail(err, GIR_E_ATTRIBUTE, "Resize needs exactly one of scales and sizes");
    bool use_sizes = nsz > 0;
    if ((use_sizes ? nsz : nsc) != n)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s has %td values, expected %td", use_sizes ? "sizes" : "scales",
                        use_sizes ? nsz : nsc, n);
    s->out = x->shape;
    for (int i = 0; i < r; i++)
        s->scale[i] = 1.0;
    if (use_sizes) {
        const char *pol = rt_string(c, "keep_aspect_ratio_policy", "stretch");
        int policy = strcmp(pol, "stretch") == 0 ? 0 : strcmp(pol, "not_larger") == 0 ? 1
                                                  : strcmp(pol, "not_smaller") == 0 ? 2 : -1;
        if (policy < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "keep_aspect_ratio_policy '%s' is unknown", pol);
        double common = policy == 1 ? INFINITY : 0.0;
        for (ptrdiff_t i = 0; i < n; i++) {
            if (sizes[i] < 0 || sizes[i] > (1LL << 32))
                return gir_fail(err, GIR_E_ATTRIBUTE, "sizes[%td] = %lld is out of range", i, (long long)sizes[i]);
            double sc = x->shape.dims[ax[i]] ? (double)sizes[i] / (double)x->shape.dims[ax[i]] : 1.0;
            if (policy == 1 && sc < common)
                common = sc;
            if (policy == 2 && sc > common)
                common = sc;
        }
        for (ptrdiff_t i = 0; i < n; i++) {
            int a = ax[i];
            if (policy == 0) {
                s->out.dims[a] = sizes[i];
                s->scale[a] = x->shape.dims[a] ? (double)sizes[i] / (double)x->shape.dims[a] : 1.0;
            } else {
                s->scale[a] = common;
                s->out.dims[a] = (int64_t)floor(common * (double)x->shape.dims[a] + 0.5);
            }
        }
    } else {
        for (ptrdiff_t i = 0; i < n; i++) {
            int a = ax[i];
            if (!(scales[i] > 0) || scales[i] > 1e6)
                return gir_fail(err, GIR_E_ATTRIBUTE, "scales[%td] = %g is not a positive factor", i, scales[i]);
            double d = floor((double)x->shape.dims[a] * scales[i]);
            if (d > (double)(1LL << 32))
                return gir_fail(err, GIR_E_LIMIT, "Resize output is too large");
            s->out.dims[a] = (int64_t)d;
            s->scale[a] = scales[i];
        }
    }
    /* axes that change, last first; intermediate sizes decide the scratch */
    gir_shape cur = x->shape;
    size_t most = 0;
    for (int a = r - 1; a >= 0; a--) {
        if (s->out.dims[a] == x->shape.dims[a] && s->scale[a] == 1.0)
            continue;
        if (x->shape.dims[a] == 0 && s->out.dims[a] > 0)
            return gir_fail(err, GIR_E_SHAPE, "cannot resize an empty axis %d", a);
        rz_axis *ra = &s->ax[s->nax++];
        ra->axis = a;
        ra->in = (size_t)x->shape.dims[a];
        ra->out = (size_t)s->out.dims[a];
        TRY(rz_axis_tables(s, ra, s->scale[a], err));
        cur.dims[a] = s->out.dims[a];
        uint64_t bytes;
        TRY(gir_tensor_size(x->dtype, &cur, &bytes, err));
        if (bytes > most)
            most = (size_t)bytes;
    }
    c->scratch_bytes = s->nax > 1 ? 2 * ((most + 63) / 64 * 64) : 0;
    return rt_set_out(c->out[0], x->dtype, &s->out, err);
}

static void rz_apply(const rz_axis *ax, const gir_shape *shape, size_t es, bool f32, const char *src, char *dst)
{
    int a = ax->axis;
    size_t outer = rt_dims_prod(shape, 0, a), inner = rt_dims_prod(shape, a + 1, shape->rank);
    for (size_t o = 0; o < outer; o++) {
        const char *xs = src + o * ax->in * inner * es;
        char *ys = dst + o * ax->out * inner * es;
        for (size_t j = 0; j < ax->out; j++) {
            const size_t *id = ax->idx + j * 4;
            const double *w = ax->w + j * 4;
            char *yr = ys + j * inner * es;
            if (!f32 || ax->taps == 1) {
                memcpy(yr, xs + id[0] * inner * es, inner * es);
                continue;
            }
            float *y = (float *)yr;
            const float *x = (const float *)xs;
            for (size_t i = 0; i < inner; i++) {
                double acc = 0;
                for (int t = 0; t < ax->taps; t++)
                    acc += w[t] * (double)x[id[t] * inner + i];
                y[i] = (float)acc;
            }
        }
    }
}

static gir_status rz_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    const rz_state *s = c->state;
    size_t es = gir_dtype_size(x->dtype);
    if (s->nax == 0) {
        memmove(y->data, x->data, x->numel * es);
        return GIR_OK;
    }
    if (y->numel == 0)
        return GIR_OK;
    gir_shape cur = x->shape;
    const char *src = x->data;
    size_t half = 0;
    if (s->nax > 1)
        half = c->scratch_bytes / 2;
    for (int i = 0; i < s->nax; i++) {
        char *dst = i == s->nax - 1 ? y->data : (char *)c->scratch + (size_t)(i % 2) * half;
        rz_apply(&s->ax[i], &cur, es, x->dtype == GIR_DT_F32, src, dst);
        cur.dims[s->ax[i].axis] = (int64_t)s->ax[i].out;
        src = dst;
    }
    return GIR_OK;
}

const rt_kernel gir_k_resize = { rz_prepare, rz_run, rz_release, 0 };
