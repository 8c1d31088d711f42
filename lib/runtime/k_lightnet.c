/* Kernels of the operators that came from LightNet (semantics in
 * lib/ops/optable.c): Print, Sort, GatherBlocks, RangeFill,
 * SqueezeDetBoxDecode, YoloV3Decode, SubMean, DotProduct, Stack, Unstack. */
#include "rt.h"
#include "core/elem.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- element access by dtype ------------------------------------------------ */

static bool is_numeric(gir_dtype t)
{
    return t == GIR_DT_F32 || t == GIR_DT_F64 || gir_dtype_is_int(t);
}


/* Stores v converted as LightNet's tl_convert does: truncation toward zero
 * and saturation for integers (NaN gives 0). */
static void put_d(void *p, gir_dtype t, size_t i, double v)
{
#define SAT(T, LO, HI) ((T)(v != v ? 0 : v <= (double)(LO) ? (LO) : v >= (double)(HI) ? (HI) : (T)v))
    switch (t) {
    case GIR_DT_F32: ((float *)p)[i] = (float)v; break;
    case GIR_DT_F64: ((double *)p)[i] = v; break;
    case GIR_DT_I8: ((int8_t *)p)[i] = SAT(int8_t, INT8_MIN, INT8_MAX); break;
    case GIR_DT_I16: ((int16_t *)p)[i] = SAT(int16_t, INT16_MIN, INT16_MAX); break;
    case GIR_DT_I32: ((int32_t *)p)[i] = SAT(int32_t, INT32_MIN, INT32_MAX); break;
    case GIR_DT_I64:
        ((int64_t *)p)[i] = gir_f64_to_i64(v);
        break;
    case GIR_DT_U8: ((uint8_t *)p)[i] = SAT(uint8_t, 0, UINT8_MAX); break;
    case GIR_DT_U16: ((uint16_t *)p)[i] = SAT(uint16_t, 0, UINT16_MAX); break;
    case GIR_DT_U32: ((uint32_t *)p)[i] = SAT(uint32_t, 0, UINT32_MAX); break;
    case GIR_DT_U64:
        ((uint64_t *)p)[i] = gir_f64_to_u64(v);
        break;
    case GIR_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
#undef SAT
}

/* Signed integer value of element i of an integer tensor. */
static int64_t get_i(const void *p, gir_dtype t, size_t i)
{
    switch (t) {
    case GIR_DT_I64: return ((const int64_t *)p)[i];
    case GIR_DT_U64: {
        uint64_t u = ((const uint64_t *)p)[i];
        return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    default: return (int64_t)gir_elem_as_double(p, t, i);
    }
}

/* ---- Print ---------------------------------------------------------------------- */

static gir_status print_prepare(rt_call *c, gir_error *err)
{
    gir_dtype t = c->in[0]->dtype;
    if (!is_numeric(t) && t != GIR_DT_BOOL)
        return rt_no_kernel_dtype(c, t, err);
    return GIR_OK;
}

static void print_elem(FILE *f, const void *p, gir_dtype t, size_t i)
{
    switch (t) {
    case GIR_DT_F32: fprintf(f, "%.3f", (double)((const float *)p)[i]); break;
    case GIR_DT_F64: fprintf(f, "%.3f", ((const double *)p)[i]); break;
    case GIR_DT_I8: fprintf(f, "%d", ((const int8_t *)p)[i]); break;
    case GIR_DT_I16: fprintf(f, "%d", ((const int16_t *)p)[i]); break;
    case GIR_DT_I32: fprintf(f, "%d", (int)((const int32_t *)p)[i]); break;
    case GIR_DT_BOOL: fprintf(f, "%d", ((const uint8_t *)p)[i] != 0); break;
    case GIR_DT_U8: fprintf(f, "%u", ((const uint8_t *)p)[i]); break;
    case GIR_DT_U16: fprintf(f, "%u", ((const uint16_t *)p)[i]); break;
    case GIR_DT_U32: fprintf(f, "%u", (unsigned)((const uint32_t *)p)[i]); break;
    case GIR_DT_I64: fprintf(f, "%lld", (long long)((const int64_t *)p)[i]); break;
    case GIR_DT_U64: fprintf(f, "%llu", (unsigned long long)((const uint64_t *)p)[i]); break;
    default: break;
    }
}

/* TensorLight's layout: "]" for every block ending before an element, then
 * a newline and indentation, "[" for every block starting at it, or one
 * space between elements. */
static void print_tensor(FILE *f, const char *msg, const rt_tensor *x)
{
    fputs(msg, f);
    fputc('\n', f);
    int r = x->shape.rank;
    size_t st[GIR_MAX_RANK];
    rt_strides(&x->shape, st);
    for (size_t i = 0; i < x->numel; i++) {
        int closes = 0, opens = 0;
        if (i > 0)
            for (int a = r - 1; a >= 0; a--) {
                if (i % (st[a] * (size_t)x->shape.dims[a]) != 0)
                    break;
                closes++;
            }
        for (int k = 0; k < closes; k++)
            fputc(']', f);
        if (closes > 0) {
            fputc('\n', f);
            for (int k = 0; k < r - closes; k++)
                fputc(' ', f);
        }
        for (int a = 0; a < r; a++)
            if (i % (st[a] * (size_t)x->shape.dims[a]) == 0)
                opens++;
        /* blocks start outermost first: the last `opens` axes, but every
         * axis whose block starts here is counted from the outermost one */
        for (int k = 0; k < opens; k++)
            fputc('[', f);
        if (opens == 0)
            fputc(' ', f);
        print_elem(f, x->data, x->dtype, i);
    }
    for (int k = 0; k < r; k++)
        fputc(']', f);
    fputc('\n', f);
}

static gir_status print_run(rt_call *c, gir_error *err)
{
    (void)err;
    const char *msg = rt_string(c, "message", "");
    const char *file = rt_string(c, "file", NULL);
    if (file) {
        FILE *f = fopen(file, "w");
        if (!f) {
            rt_warn(c, "cannot open '%s' for writing: %s; nothing printed", file, strerror(errno));
            return GIR_OK;
        }
        print_tensor(f, msg, c->in[0]);
        if (fclose(f) != 0)
            rt_warn(c, "cannot write '%s': %s", file, strerror(errno));
        return GIR_OK;
    }
    FILE *out = c->stream ? c->stream : stdout;
    print_tensor(out, msg, c->in[0]);
    fflush(out);
    return GIR_OK;
}

const rt_kernel gir_k_print = { print_prepare, print_run, NULL, RT_SIDE_EFFECT };

/* ---- Sort --------------------------------------------------------------------------- */

/* a < b for keys, NaN after every number. */
static bool key_less(const void *p, gir_dtype t, size_t a, size_t b)
{
    if (t == GIR_DT_I64)
        return ((const int64_t *)p)[a] < ((const int64_t *)p)[b];
    if (t == GIR_DT_U64)
        return ((const uint64_t *)p)[a] < ((const uint64_t *)p)[b];
    double x = gir_elem_as_double(p, t, a), y = gir_elem_as_double(p, t, b);
    if (y != y)
        return x == x;
    return x < y;
}

/* Sort's keys and direction, for gir_sort_indices. */
typedef struct sort_keys {
    const void *p;
    gir_dtype t;
    bool desc;
} sort_keys;

static bool sort_before(const void *ctx, size_t x, size_t y)
{
    const sort_keys *k = ctx;
    return k->desc ? key_less(k->p, k->t, y, x) : key_less(k->p, k->t, x, y);
}

static gir_status sort_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *k = c->in[0], *v = c->n_in > 1 ? c->in[1] : NULL;
    gir_status st;
    char s1[96], s2[96];
    if (!is_numeric(k->dtype))
        return rt_no_kernel_dtype(c, k->dtype, err);
    if (k->shape.rank != 1 || (v && (v->shape.rank != 1 || v->shape.dims[0] != k->shape.dims[0])))
        return gir_fail(err, GIR_E_SHAPE, "Sort needs 1-D keys and values of the same length, found %s and %s",
                        gir_shape_str(&k->shape, s1, sizeof s1), v ? gir_shape_str(&v->shape, s2, sizeof s2) : "none");
    if (c->n_out != c->n_in)
        return gir_fail(err, GIR_E_SCHEMA, "Sort has %zu inputs but %zu outputs", c->n_in, c->n_out);
    uint64_t bytes;
    if (!gir_mul_u64(k->numel, 2 * sizeof(size_t), &bytes) || bytes > SIZE_MAX / 2)
        return gir_fail(err, GIR_E_LIMIT, "Sort input is too large");
    c->scratch_bytes = (size_t)bytes;
    for (size_t i = 0; i < c->n_out; i++)
        if (c->out[i] && (st = rt_set_out(c->out[i], c->in[i]->dtype, &c->in[i]->shape, err)))
            return st;
    return GIR_OK;
}

static gir_status sort_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *k = c->in[0];
    size_t n = k->numel;
    bool desc = rt_int(c, "descending", 0) != 0;
    size_t *idx = c->scratch;
    sort_keys keys = { k->data, k->dtype, desc };
    gir_sort_indices(idx, idx + n, n, sort_before, &keys);
    for (size_t q = 0; q < c->n_out; q++) {
        if (!c->out[q])
            continue;
        size_t es = gir_dtype_size(c->in[q]->dtype);
        for (size_t i = 0; i < n; i++)
            memcpy((char *)c->out[q]->data + i * es, (const char *)c->in[q]->data + idx[i] * es, es);
    }
    return GIR_OK;
}

const rt_kernel gir_k_sort = { sort_prepare, sort_run, NULL, 0 };

/* ---- GatherBlocks ------------------------------------------------------------------ */

static gir_status gblocks_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *d = c->in[0], *ix = c->in[1];
    int64_t count = rt_int(c, "count", 0), bs = rt_int(c, "block_size", 1);
    if (d->shape.rank != 1 || ix->shape.rank != 1 || !gir_dtype_is_int(ix->dtype))
        return gir_fail(err, GIR_E_SHAPE, "GatherBlocks needs 1-D data and 1-D integer indices");
    if (d->dtype <= GIR_DT_UNKNOWN || d->dtype >= GIR_DT_COUNT_)
        return rt_no_kernel_dtype(c, d->dtype, err);
    if (count < 1 || (uint64_t)count > ix->numel || bs < 1)
        return gir_fail(err, GIR_E_ATTRIBUTE, "GatherBlocks count %lld and block_size %lld do not fit %zu indices",
                        (long long)count, (long long)bs, ix->numel);
    uint64_t len;
    if (!gir_mul_u64((uint64_t)count, (uint64_t)bs, &len) || len > ((uint64_t)1 << 40))
        return gir_fail(err, GIR_E_LIMIT, "GatherBlocks output is too large");
    gir_shape os = { 1, { (int64_t)len } };
    return rt_set_out(c->out[0], d->dtype, &os, err);
}

static gir_status gblocks_run(rt_call *c, gir_error *err)
{
    const rt_tensor *d = c->in[0], *ix = c->in[1];
    size_t count = (size_t)rt_int(c, "count", 0), bs = (size_t)rt_int(c, "block_size", 1);
    size_t es = gir_dtype_size(d->dtype), blocks = d->numel / bs;
    for (size_t i = 0; i < count; i++) {
        int64_t v = get_i(ix->data, ix->dtype, i);
        if (v < 0 || (uint64_t)v >= blocks)
            return gir_fail(err, GIR_E_ARGUMENT, "GatherBlocks index %lld is outside the %zu blocks of the data",
                            (long long)v, blocks);
        memcpy((char *)c->out[0]->data + i * bs * es, (const char *)d->data + (size_t)v * bs * es, bs * es);
    }
    return GIR_OK;
}

const rt_kernel gir_k_gather_blocks = { gblocks_prepare, gblocks_run, NULL, 0 };

/* ---- RangeFill ------------------------------------------------------------------------ */

static gir_status range_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    if (!is_numeric(x->dtype))
        return rt_no_kernel_dtype(c, x->dtype, err);
    double start = rt_float(c, "start", 0), limit = rt_float(c, "limit", 0), delta = rt_float(c, "delta", 0);
    if (delta == 0 || x->shape.rank != 1 || ceil((limit - start) / delta) != (double)x->numel)
        return gir_fail(err, GIR_E_SHAPE, "RangeFill from %g to %g by %g does not have the input's %zu values", start,
                        limit, delta, x->numel);
    return rt_set_out(c->out[0], x->dtype, &x->shape, err);
}

static gir_status range_run(rt_call *c, gir_error *err)
{
    (void)err;
    double start = rt_float(c, "start", 0), delta = rt_float(c, "delta", 0);
    for (size_t i = 0; i < c->out[0]->numel; i++)
        put_d(c->out[0]->data, c->out[0]->dtype, i, start + (double)i * delta);
    return GIR_OK;
}

const rt_kernel gir_k_range_fill = { range_prepare, range_run, NULL, RT_INPLACE };

/* ---- SqueezeDetBoxDecode ------------------------------------------------------------------ */

static gir_status sqz_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *d = c->in[0], *a = c->in[1];
    char s1[96];
    if (d->dtype != GIR_DT_F32 || a->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, d->dtype != GIR_DT_F32 ? d->dtype : a->dtype, err);
    if (d->shape.rank < 1 || d->shape.dims[d->shape.rank - 1] != 4)
        return gir_fail(err, GIR_E_SHAPE, "SqueezeDetBoxDecode deltas %s must end in 4",
                        gir_shape_str(&d->shape, s1, sizeof s1));
    gir_shape s;
    TRY(rt_broadcast_shape(c, &d->shape, &a->shape, &s, err));
    if (!gir_shape_equal(&s, &d->shape))
        return gir_fail(err, GIR_E_SHAPE, "SqueezeDetBoxDecode anchors do not broadcast to the deltas");
    return rt_set_out(c->out[0], GIR_DT_F32, &d->shape, err);
}

static gir_status sqz_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *d = c->in[0], *an = c->in[1];
    const float *pd = d->data, *pa = an->data;
    float *o = c->out[0]->data;
    float xs = (float)rt_int(c, "img_width", 1) / (float)rt_int(c, "width", 1);
    float ys = (float)rt_int(c, "img_height", 1) / (float)rt_int(c, "height", 1);
    float iw = (float)rt_int(c, "img_width", 1), ih = (float)rt_int(c, "img_height", 1);
    float xsh = (float)rt_int(c, "x_shift", 0), ysh = (float)rt_int(c, "y_shift", 0);
    const float E = 2.718281828f;
    int r = d->shape.rank;
    size_t ast[GIR_MAX_RANK]; /* anchor strides over the deltas' axes (0 = broadcast) */
    size_t acc = 1;
    for (int i = r - 1; i >= 0; i--) {
        int si = i - (r - an->shape.rank);
        size_t dim = si >= 0 ? (size_t)an->shape.dims[si] : 1;
        ast[i] = dim == 1 ? 0 : acc;
        acc *= dim;
    }
    for (size_t e = 0; e < d->numel; e += 4) {
        /* the anchor element for delta element e, then its 4 values */
        size_t t = e, aoff = 0;
        for (int i = r - 1; i >= 0; i--) {
            aoff += (t % (size_t)d->shape.dims[i]) * ast[i];
            t /= (size_t)d->shape.dims[i];
        }
        size_t s3 = ast[r - 1];
        float a0 = pa[aoff], a1 = pa[aoff + s3], a2 = pa[aoff + 2 * s3], a3 = pa[aoff + 3 * s3];
        float d0 = pd[e], d1 = pd[e + 1], d2 = pd[e + 2], d3 = pd[e + 3];
        float cx = (a0 + d0 * a2) * xs + xsh, cy = (a1 + d1 * a3) * ys + ysh;
        float w = a2 * (d2 < 1 ? expf(d2) : d2 * E) * xs, h = a3 * (d3 < 1 ? expf(d3) : d3 * E) * ys;
        o[e] = fminf(fmaxf(cx - w / 2, 0.0f), iw - 1);
        o[e + 1] = fminf(fmaxf(cy - h / 2, 0.0f), ih - 1);
        o[e + 2] = fmaxf(fminf(cx + w / 2, iw - 1), 0.0f);
        o[e + 3] = fmaxf(fminf(cy + h / 2, ih - 1), 0.0f);
    }
    return GIR_OK;
}

const rt_kernel gir_k_squeezedet_box_decode = { sqz_prepare, sqz_run, NULL, 0 };

/* ---- YoloV3Decode ---------------------------------------------------------------------------- */

static gir_status yolo_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *f = c->in[0], *a = c->in[1];
    gir_status st;
    if (f->dtype != GIR_DT_F32 || a->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, f->dtype != GIR_DT_F32 ? f->dtype : a->dtype, err);
    if (f->shape.rank != 4 || f->shape.dims[0] != 1 || a->shape.rank != 2 || a->shape.dims[1] != 2)
        return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode needs a [1, C, H, W] feature and [anchors, 2] anchors");
    int64_t A = a->shape.dims[0], C = f->shape.dims[1];
    if (A < 1 || C % A != 0 || C / A < 6)
        return gir_fail(err, GIR_E_SHAPE, "YoloV3Decode feature has %lld channels, not %lld anchors times (5 + classes)",
                        (long long)C, (long long)A);
    int64_t third[5] = { 2, 2, 4, 1, C / A - 5 };
    for (size_t k = 0; k < 5; k++) {
        gir_shape os = { 5, { 1, A, third[k], f->shape.dims[2], f->shape.dims[3] } };
        if (c->out[k] && (st = rt_set_out(c->out[k], GIR_DT_F32, &os, err)))
            return st;
    }
    return GIR_OK;
}

static inline float sig(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

static gir_status yolo_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *f = c->in[0];
    const float *pf = f->data, *pa = c->in[1]->data;
    size_t A = (size_t)c->in[1]->shape.dims[0], C = (size_t)f->shape.dims[1], H = (size_t)f->shape.dims[2],
           W = (size_t)f->shape.dims[3], K = C / A, classes = K - 5, HW = H * W;
    float iw = (float)rt_int(c, "img_width", 1), ih = (float)rt_int(c, "img_height", 1);
    float *out[5];
    for (int k = 0; k < 5; k++)
        out[k] = c->out[k] ? c->out[k]->data : NULL;
    for (size_t a = 0; a < A; a++) {
        const float *fa = pf + a * K * HW;
        for (size_t y = 0; y < H; y++)
            for (size_t x = 0; x < W; x++) {
                size_t cell = y * W + x;
                float cx = (sig(fa[cell]) + (float)x) * iw / (float)W;
                float cy = (sig(fa[HW + cell]) + (float)y) * ih / (float)H;
                float w = pa[a * 2] * fminf(fmaxf(expf(fa[2 * HW + cell]), 1e-9f), 50.0f);
                float h = pa[a * 2 + 1] * fminf(fmaxf(expf(fa[3 * HW + cell]), 1e-9f), 50.0f);
                if (out[0]) {
                    out[0][(a * 2) * HW + cell] = cx;
                    out[0][(a * 2 + 1) * HW + cell] = cy;
                }
                if (out[1]) {
                    out[1][(a * 2) * HW + cell] = w;
                    out[1][(a * 2 + 1) * HW + cell] = h;
                }
                if (out[2]) {
                    out[2][(a * 4) * HW + cell] = cx - w / 2;
                    out[2][(a * 4 + 1) * HW + cell] = cy - h / 2;
                    out[2][(a * 4 + 2) * HW + cell] = cx + w / 2;
                    out[2][(a * 4 + 3) * HW + cell] = cy + h / 2;
                }
                if (out[3])
                    out[3][a * HW + cell] = sig(fa[4 * HW + cell]);
                if (out[4])
                    for (size_t k = 0; k < classes; k++)
                        out[4][(a * classes + k) * HW + cell] = sig(fa[(5 + k) * HW + cell]);
            }
    }
    return GIR_OK;
}

const rt_kernel gir_k_yolov3_decode = { yolo_prepare, yolo_run, NULL, 0 };

/* ---- SubMean ---------------------------------------------------------------------------------- */

static gir_status submean_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    char s1[96];
    const double *m;
    if (gir_attrs_get_floats(&c->node->attrs, "mean", &m) != 3)
        return gir_fail(err, GIR_E_ATTRIBUTE, "SubMean needs 3 means");
    gir_dtype to = gir_dtype_from_name(rt_string(c, "to", ""));
    if (!is_numeric(to))
        return gir_fail(err, GIR_E_NO_KERNEL, "no kernel for SubMean to %s", gir_dtype_name(to));
    if (!is_numeric(x->dtype))
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank != 3 || x->shape.dims[2] != 3)
        return gir_fail(err, GIR_E_SHAPE, "SubMean image %s is not [H, W, 3]", gir_shape_str(&x->shape, s1, sizeof s1));
    gir_shape os = { 3, { 3, x->shape.dims[0], x->shape.dims[1] } };
    return rt_set_out(c->out[0], to, &os, err);
}

static gir_status submean_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    const double *m;
    gir_attrs_get_floats(&c->node->attrs, "mean", &m);
    size_t HW = (size_t)x->shape.dims[0] * (size_t)x->shape.dims[1];
    for (size_t ch = 0; ch < 3; ch++)
        for (size_t p = 0; p < HW; p++)
            put_d(y->data, y->dtype, ch * HW + p, gir_elem_as_double(x->data, x->dtype, p * 3 + ch) - m[ch]);
    return GIR_OK;
}

const rt_kernel gir_k_submean = { submean_prepare, submean_run, NULL, 0 };

/* ---- DotProduct ----------------------------------------------------------------------------------- */

static gir_status dot_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *a = c->in[0], *b = c->in[1];
    char s1[96], s2[96];
    if (a->dtype != b->dtype)
        return gir_fail(err, GIR_E_DTYPE, "DotProduct inputs are %s and %s", gir_dtype_name(a->dtype),
                        gir_dtype_name(b->dtype));
    if (!is_numeric(a->dtype))
        return rt_no_kernel_dtype(c, a->dtype, err);
    if (!gir_shape_equal(&a->shape, &b->shape))
        return gir_fail(err, GIR_E_SHAPE, "DotProduct inputs %s and %s differ in shape",
                        gir_shape_str(&a->shape, s1, sizeof s1), gir_shape_str(&b->shape, s2, sizeof s2));
    gir_shape os = { 1, { 1 } };
    return rt_set_out(c->out[0], a->dtype, &os, err);
}

#define DOT_LOOP(T, ACC)                                           \
    {                                                              \
        const T *x = a->data, *y = b->data;                        \
        ACC s = 0;                                                 \
        for (size_t i = 0; i < a->numel; i++)                      \
            s = (ACC)(s + (ACC)x[i] * (ACC)y[i]);                  \
        *(T *)c->out[0]->data = (T)s;                              \
    }

static gir_status dot_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *a = c->in[0], *b = c->in[1];
    switch (a->dtype) {
    /* accumulated in the input type, in element order */
    case GIR_DT_F32: DOT_LOOP(float, float) break;
    case GIR_DT_F64: DOT_LOOP(double, double) break;
    /* integers wrap as unsigned arithmetic does */
    case GIR_DT_I8: DOT_LOOP(int8_t, uint8_t) break;
    case GIR_DT_I16: DOT_LOOP(int16_t, uint16_t) break;
    case GIR_DT_I32: DOT_LOOP(int32_t, uint32_t) break;
    case GIR_DT_I64: DOT_LOOP(int64_t, uint64_t) break;
    case GIR_DT_U8: DOT_LOOP(uint8_t, uint8_t) break;
    case GIR_DT_U16: DOT_LOOP(uint16_t, uint32_t) break;
    case GIR_DT_U32: DOT_LOOP(uint32_t, uint32_t) break;
    case GIR_DT_U64: DOT_LOOP(uint64_t, uint64_t) break;
    default: break;
    }
    return GIR_OK;
}

const rt_kernel gir_k_dot_product = { dot_prepare, dot_run, NULL, 0 };

/* ---- Stack / Unstack ---------------------------------------------------------------------------------- */

static gir_status stack_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    char s1[96], s2[96];
    if (x->dtype <= GIR_DT_UNKNOWN || x->dtype >= GIR_DT_COUNT_)
        return rt_no_kernel_dtype(c, x->dtype, err);
    for (size_t i = 1; i < c->n_in; i++)
        if (!c->in[i] || c->in[i]->dtype != x->dtype || !gir_shape_equal(&c->in[i]->shape, &x->shape))
            return gir_fail(err, GIR_E_SHAPE, "Stack inputs 0 %s and %zu %s differ",
                            gir_shape_str(&x->shape, s1, sizeof s1), i,
                            c->in[i] ? gir_shape_str(&c->in[i]->shape, s2, sizeof s2) : "(missing)");
    if (x->shape.rank + 1 > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "Stack result of rank %d is more than %d", x->shape.rank + 1, GIR_MAX_RANK);
    int axis;
    TRY(rt_axis(c, "axis", rt_int(c, "axis", 0), x->shape.rank + 1, &axis, err));
    gir_shape os = { x->shape.rank + 1, { 0 } };
    for (int i = 0, k = 0; i < os.rank; i++)
        os.dims[i] = i == axis ? (int64_t)c->n_in : x->shape.dims[k++];
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

static gir_status stack_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    int axis;
    rt_axis(c, "axis", rt_int(c, "axis", 0), x->shape.rank + 1, &axis, NULL);
    size_t es = gir_dtype_size(x->dtype);
    size_t outer = rt_dims_prod(&x->shape, 0, axis), inner = rt_dims_prod(&x->shape, axis, x->shape.rank) * es;
    char *y = c->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < c->n_in; i++)
            memcpy(y + (o * c->n_in + i) * inner, (const char *)c->in[i]->data + o * inner, inner);
    return GIR_OK;
}

const rt_kernel gir_k_stack = { stack_prepare, stack_run, NULL, 0 };

static gir_status unstack_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    gir_status st;
    char s1[96];
    int axis;
    if (x->dtype <= GIR_DT_UNKNOWN || x->dtype >= GIR_DT_COUNT_)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "Unstack needs rank 1 or more");
    TRY(rt_axis(c, "axis", rt_int(c, "axis", 0), x->shape.rank, &axis, err));
    if ((size_t)x->shape.dims[axis] != c->n_out)
        return gir_fail(err, GIR_E_SCHEMA, "Unstack of %s along axis %d needs %lld outputs, found %zu",
                        gir_shape_str(&x->shape, s1, sizeof s1), axis, (long long)x->shape.dims[axis], c->n_out);
    gir_shape os = { 0, { 0 } };
    for (int i = 0; i < x->shape.rank; i++)
        if (i != axis)
            os.dims[os.rank++] = x->shape.dims[i];
    for (size_t k = 0; k < c->n_out; k++)
        if (c->out[k] && (st = rt_set_out(c->out[k], x->dtype, &os, err)))
            return st;
    return GIR_OK;
}

static gir_status unstack_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    size_t outer, inner, n = c->n_out;
    rt_run_axis(c, 0, &outer, &inner);
    inner *= gir_dtype_size(x->dtype);
    for (size_t k = 0; k < n; k++)
        if (c->out[k])
            rt_copy_parts(c->out[k]->data, x->data, outer, n * inner, k * inner, inner);
    return GIR_OK;
}

const rt_kernel gir_k_unstack = { unstack_prepare, unstack_run, NULL, 0 };
