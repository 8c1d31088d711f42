/* Shape and data-movement kernels, for every element type (they move bytes):
 * Reshape, Flatten, Squeeze, Unsqueeze (views), Transpose, Concat, Split,
 * Slice, Pad, Tile, Expand, Gather, Resize, DepthToSpace, SpaceToDepth,
 * Shape. */
#include "rt.h"
#include "simd512.h"

#include <stdlib.h>

/* Element types whose bytes these kernels can move. */
static gir_status any_dtype(const rt_call *c, gir_dtype t, gir_error *err)
{
    if (t <= GIR_DT_UNKNOWN || t >= GIR_DT_COUNT_)
        return rt_no_kernel_dtype(c, t, err);
    return GIR_OK;
}

/* ---- views: Reshape, Flatten, Squeeze, Unsqueeze ---------------------------- */

static gir_status reshape_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    char sx[96];
    TRY(any_dtype(c, x->dtype, err));
    const int64_t *sv;
    ptrdiff_t n = rt_ints(c, "shape", &sv);
    if (n < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Reshape needs attribute shape");
    if (n > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "Reshape to rank %td is more than %d", n, GIR_MAX_RANK);
    bool allowzero = rt_int(c, "allowzero", 0) != 0;
    gir_shape os = { (int)n, { 0 } };
    int infer = -1;
    uint64_t known = 1;
    for (ptrdiff_t i = 0; i < n; i++) {
        int64_t d = sv[i];
        if (d == 0 && !allowzero) {
            if (i >= x->shape.rank)
                return gir_fail(err, GIR_E_ATTRIBUTE, "shape[%td] = 0 copies a dimension the input %s lacks", i,
                                gir_shape_str(&x->shape, sx, sizeof sx));
            d = x->shape.dims[i];
        }
        if (d == -1) {
            if (infer >= 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "shape has more than one -1");
            infer = (int)i;
            os.dims[i] = 1;
            continue;
        }
        if (d < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "shape[%td] = %lld is negative", i, (long long)d);
        os.dims[i] = d;
        if (!gir_mul_u64(known, (uint64_t)d, &known))
            return gir_fail(err, GIR_E_LIMIT, "Reshape target is too large");
    }
    if (infer >= 0) {
        if (known == 0 || x->numel % known != 0)
            return gir_fail(err, GIR_E_SHAPE, "cannot reshape %s (%zu elements) with -1 in the target",
                            gir_shape_str(&x->shape, sx, sizeof sx), x->numel);
        os.dims[infer] = (int64_t)(x->numel / known);
        known *= (uint64_t)os.dims[infer];
    }
    if (known != x->numel) {
        char so[96];
        return gir_fail(err, GIR_E_SHAPE, "cannot reshape %s (%zu elements) to %s",
                        gir_shape_str(&x->shape, sx, sizeof sx), x->numel, gir_shape_str(&os, so, sizeof so));
    }
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

static gir_status view_run(rt_call *c, gir_error *err)
{
    (void)c;
    (void)err;
    return GIR_OK;
}

const rt_kernel gir_k_reshape = { reshape_prepare, view_run, NULL, RT_VIEW };

static gir_status flatten_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    TRY(any_dtype(c, x->dtype, err));
    int64_t axis = rt_int(c, "axis", 1);
    int r = x->shape.rank;
    if (axis < -(int64_t)r || axis > r)
        return gir_fail(err, GIR_E_ATTRIBUTE, "axis %lld is outside [-%d, %d]", (long long)axis, r, r);
    if (axis < 0)
        axis += r;
    gir_shape os = { 2, { (int64_t)rt_dims_prod(&x->shape, 0, (int)axis), (int64_t)rt_dims_prod(&x->shape, (int)axis, r) } };
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

const rt_kernel gir_k_flatten = { flatten_prepare, view_run, NULL, RT_VIEW };

static gir_status squeeze_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    char sx[96];
    TRY(any_dtype(c, x->dtype, err));
    const int64_t *axes;
    ptrdiff_t na = rt_ints(c, "axes", &axes);
    bool drop[GIR_MAX_RANK] = { false };
    int r = x->shape.rank;
    if (na < 0) {
        for (int i = 0; i < r; i++)
            drop[i] = x->shape.dims[i] == 1;
    } else {
        for (ptrdiff_t i = 0; i < na; i++) {
            int a;
            TRY(rt_axis(c, "axes", axes[i], r, &a, err));
            if (x->shape.dims[a] != 1)
                return gir_fail(err, GIR_E_SHAPE, "cannot squeeze axis %d of %s: its size is not 1", a,
                                gir_shape_str(&x->shape, sx, sizeof sx));
            drop[a] = true;
        }
    }
    gir_shape os = { 0, { 0 } };
    for (int i = 0; i < r; i++)
        if (!drop[i])
            os.dims[os.rank++] = x->shape.dims[i];
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

const rt_kernel gir_k_squeeze = { squeeze_prepare, view_run, NULL, RT_VIEW };

static gir_status unsqueeze_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    TRY(any_dtype(c, x->dtype, err));
    const int64_t *axes;
    ptrdiff_t na = rt_ints(c, "axes", &axes);
    if (na < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Unsqueeze needs attribute axes");
    int r = x->shape.rank + (int)na;
    if (na > GIR_MAX_RANK || r > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "Unsqueeze to rank %td is more than %d", x->shape.rank + na, GIR_MAX_RANK);
    bool ins[GIR_MAX_RANK] = { false };
    for (ptrdiff_t i = 0; i < na; i++) {
        int a;
        TRY(rt_axis(c, "axes", axes[i], r, &a, err));
        if (ins[a])
            return gir_fail(err, GIR_E_ATTRIBUTE, "axes lists axis %d twice", a);
        ins[a] = true;
    }
    gir_shape os = { r, { 0 } };
    int k = 0;
    for (int i = 0; i < r; i++)
        os.dims[i] = ins[i] ? 1 : x->shape.dims[k++];
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

const rt_kernel gir_k_unsqueeze = { unsqueeze_prepare, view_run, NULL, RT_VIEW };

/* ---- strided copy: out[idx] = in[sum idx_i * st_i] over out's shape ----------- */

typedef struct strided {
    int rank;
    size_t dims[GIR_MAX_RANK];
    size_t st[GIR_MAX_RANK]; /* source strides in elements */
    size_t es;
} strided;

/* 4-byte elements whose source-contiguous axis a is not the innermost one
 * (a transpose): a 2-D tiled copy between axis a and the innermost axis
 * for each index of the other axes, so both sides move in cache lines. */
#if defined(__x86_64__) && defined(__GNUC__)
/* One full tile: 16 source rows (ss apart, contiguous along the
 * destination's rows) transposed in registers into 16 destination rows (ds
 * apart). */
__attribute__((target("avx512f"))) static void tile16_avx512(const float *src, size_t ss, float *dst, size_t ds)
{
    __m512 r[16];
    for (size_t j = 0; j < 16; j++)
        r[j] = _mm512_loadu_ps(src + j * ss);
    rt_tr16(r);
    for (size_t i = 0; i < 16; i++)
        _mm512_storeu_ps(dst + i * ds, r[i]);
}
#endif

typedef void (*tile16_fn)(const float *src, size_t ss, float *dst, size_t ds);

static void strided_copy_tiled(const strided *s, int a, const float *src, float *dst)
{
    enum { T = 16 };
    tile16_fn tile16 = RT_ISA_PICK(GIR_GEMM_AUTO, (tile16_fn)NULL, (tile16_fn)NULL, tile16_avx512);
    const int r = s->rank;
    const size_t A = s->dims[a], I = s->dims[r - 1], S = s->st[r - 1];
    size_t dst_st[GIR_MAX_RANK] = { 0 }, acc = 1;
    for (int d = r - 1; d >= 0; d--) {
        dst_st[d] = acc;
        acc *= s->dims[d];
    }
    const size_t DA = dst_st[a];
    size_t outer = 1;
    for (int d = 0; d < r - 1; d++)
        if (d != a)
            outer *= s->dims[d];
    size_t idx[GIR_MAX_RANK] = { 0 }, so = 0, dof = 0;
    for (size_t o = 0; o < outer; o++) {
        for (size_t i0 = 0; i0 < A; i0 += T) {
            size_t i1 = i0 + T < A ? i0 + T : A;
            for (size_t j0 = 0; j0 < I; j0 += T) {
                size_t j1 = j0 + T < I ? j0 + T : I;
                if (tile16 && i1 - i0 == T && j1 - j0 == T) {
                    tile16(src + so + i0 + j0 * S, S, dst + dof + i0 * DA + j0, DA);
                    continue;
                }
                for (size_t i = i0; i < i1; i++) {
                    const float *sp = src + so + i;
                    float *dp = dst + dof + i * DA;
                    for (size_t j = j0; j < j1; j++)
                        dp[j] = sp[j * S];
                }
            }
        }
        /* next index over the axes other than a and the innermost */
        for (int d = r - 2; d >= 0; d--) {
            if (d == a)
                continue;
            so += s->st[d];
            dof += dst_st[d];
            if (++idx[d] < s->dims[d])
                break;
            so -= s->st[d] * s->dims[d];
            dof -= dst_st[d] * s->dims[d];
            idx[d] = 0;
        }
    }
}

/* Copies with the source strides; the innermost dim with source stride 1
 * moves as a block. */
static void strided_copy(const strided *s, const char *src, char *dst)
{
    if (s->es == 4 && s->rank >= 2 && s->st[s->rank - 1] != 1 && s->dims[s->rank - 1] >= 4) {
        int a = -1;
        for (int d = 0; d < s->rank - 1; d++)
            if (s->st[d] == 1 && s->dims[d] > 1)
                a = d;
        if (a >= 0 && s->dims[a] >= 4) {
            strided_copy_tiled(s, a, (const float *)(const void *)src, (float *)(void *)dst);
            return;
        }
    }
    size_t total = 1;
    for (int i = 0; i < s->rank; i++)
        total *= s->dims[i];
    if (total == 0)
        return;
    int r = s->rank;
    size_t inner = r > 0 ? s->dims[r - 1] : 1, ist = r > 0 ? s->st[r - 1] : 1;
    size_t rows = r > 0 ? total / inner : 1;
    size_t idx[GIR_MAX_RANK] = { 0 };
    size_t off = 0;
    const size_t es = s->es;
    for (size_t row = 0; row < rows; row++) {
        const char *sp = src + off * es;
        if (ist == 1) {
            memcpy(dst, sp, inner * es);
        } else if (es == 4) {
            for (size_t i = 0; i < inner; i++)
                memcpy(dst + i * 4, sp + i * ist * 4, 4);
        } else {
            for (size_t i = 0; i < inner; i++)
                memcpy(dst + i * es, sp + i * ist * es, es);
        }
        dst += inner * es;
        /* advance the odometer over dims [0, r-1) */
        for (int d = r - 2; d >= 0; d--) {
            off += s->st[d];
            if (++idx[d] < s->dims[d])
                break;
            off -= s->st[d] * s->dims[d];
            idx[d] = 0;
        }
    }
}

/* ---- Transpose --------------------------------------------------------------- */

static gir_status transpose_perm(const rt_call *c, int r, int *perm, gir_error *err)
{
    const int64_t *pv;
    ptrdiff_t np = rt_ints(c, "perm", &pv);
    if (np < 0) {
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        return GIR_OK;
    }
    if (np != r)
        return gir_fail(err, GIR_E_ATTRIBUTE, "perm has %td values for rank %d", np, r);
    bool seen[GIR_MAX_RANK] = { false };
    for (int i = 0; i < r; i++) {
        if (pv[i] < 0 || pv[i] >= r || seen[pv[i]])
            return gir_fail(err, GIR_E_ATTRIBUTE, "perm is not a permutation of 0..%d", r - 1);
        seen[pv[i]] = true;
        perm[i] = (int)pv[i];
    }
    return GIR_OK;
}

static gir_status transpose_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    int perm[GIR_MAX_RANK];
    TRY(any_dtype(c, x->dtype, err));
    TRY(transpose_perm(c, x->shape.rank, perm, err));
    gir_shape os = { x->shape.rank, { 0 } };
    for (int i = 0; i < os.rank; i++)
        os.dims[i] = x->shape.dims[perm[i]];
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

typedef struct sc_job {
    const strided *s;
    int d; /* the axis split among the workers (those before it are 1) */
    const char *src;
    char *dst;
    size_t dst_step; /* bytes of the output per index of axis d */
} sc_job;

static void sc_part(void *ctx, size_t b, size_t e, int worker)
{
    (void)worker;
    const sc_job *j = ctx;
    strided sub = *j->s;
    sub.dims[j->d] = e - b;
    strided_copy(&sub, j->src + b * j->s->st[j->d] * j->s->es, j->dst + b * j->dst_step);
}

/* strided_copy with the workers, each taking a range of the first axis
 * longer than 1, when the copy is large enough to pay for the hand-off. */
static void strided_copy_par(gir_threads *th, const strided *s, const char *src, char *dst)
{
    size_t total = 1;
    for (int i = 0; i < s->rank; i++)
        total *= s->dims[i];
    int d = 0;
    while (d < s->rank - 1 && s->dims[d] == 1)
        d++;
    if (gir_threads_count(th) == 1 || s->rank == 0 || total < ((size_t)1 << 15) || s->dims[d] < 2) {
        strided_copy(s, src, dst);
        return;
    }
    sc_job j = { s, d, src, dst, s->es };
    for (int i = d + 1; i < s->rank; i++)
        j.dst_step *= s->dims[i];
    rt_parallel_for(th, s->dims[d], 1, 1, sc_part, &j);
}

static gir_status transpose_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    int perm[GIR_MAX_RANK];
    transpose_perm(c, x->shape.rank, perm, NULL);
    size_t xs[GIR_MAX_RANK];
    rt_strides(&x->shape, xs);
    strided s = { x->shape.rank, { 0 }, { 0 }, gir_dtype_size(x->dtype) };
    for (int i = 0; i < s.rank; i++) {
        s.dims[i] = (size_t)x->shape.dims[perm[i]];
        s.st[i] = xs[perm[i]];
    }
    strided_copy_par(c->th, &s, x->data, c->out[0]->data);
    return GIR_OK;
}

const rt_kernel gir_k_transpose = { transpose_prepare, transpose_run, NULL, 0 };

/* ---- Concat ------------------------------------------------------------------------ */

static gir_status concat_prepare(rt_call *c, gir_error *err)
{
    char s0[96], si[96];
    const rt_tensor *x0 = c->in[0];
    int axis;
    TRY(any_dtype(c, x0->dtype, err));
    if (!gir_attrs_find(&c->node->attrs, "axis"))
        return gir_fail(err, GIR_E_ATTRIBUTE, "Concat needs attribute axis");
    TRY(rt_axis(c, "axis", rt_int(c, "axis", 0), x0->shape.rank, &axis, err));
    gir_shape os = x0->shape;
    for (size_t i = 1; i < c->n_in; i++) {
        const rt_tensor *xi = c->in[i];
        if (!xi)
            return gir_fail(err, GIR_E_SCHEMA, "input %zu of Concat is missing", i);
        bool ok = xi->dtype == x0->dtype && xi->shape.rank == x0->shape.rank;
        for (int d = 0; ok && d < os.rank; d++)
            if (d != axis && xi->shape.dims[d] != x0->shape.dims[d])
                ok = false;
        if (!ok)
            return gir_fail(err, GIR_E_SHAPE, "Concat inputs %s %s and %s %s differ off axis %d",
                            gir_dtype_name(x0->dtype), gir_shape_str(&x0->shape, s0, sizeof s0),
                            gir_dtype_name(xi->dtype), gir_shape_str(&xi->shape, si, sizeof si), axis);
        os.dims[axis] += xi->shape.dims[axis];
    }
    return rt_set_out(c->out[0], x0->dtype, &os, err);
}

static gir_status concat_run(rt_call *c, gir_error *err)
{
    (void)err;
    rt_tensor *y = c->out[0];
    int axis;
    rt_axis(c, "axis", rt_int(c, "axis", 0), y->shape.rank, &axis, NULL);
    size_t es = gir_dtype_size(y->dtype);
    size_t outer = rt_dims_prod(&y->shape, 0, axis), inner = rt_dims_prod(&y->shape, axis + 1, y->shape.rank);
    size_t yrow = (size_t)y->shape.dims[axis] * inner * es, off = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        const rt_tensor *x = c->in[i];
        size_t xrow = (size_t)x->shape.dims[axis] * inner * es;
        for (size_t o = 0; o < outer; o++) {
            char *dst = (char *)y->data + o * yrow + off;
            const char *src = (const char *)x->data + o * xrow;
            if (dst != src) /* else computed in place by its producer (the executor's plan) */
                memcpy(dst, src, xrow);
        }
        off += xrow;
    }
    return GIR_OK;
}

const rt_kernel gir_k_concat = { concat_prepare, concat_run, NULL, 0 };

/* ---- Split ------------------------------------------------------------------------- */

static gir_status split_sizes(const rt_call *c, const gir_shape *xs, int *axis, int64_t *sizes, gir_error *err)
{
    TRY(rt_axis(c, "axis", rt_int(c, "axis", 0), xs->rank, axis, err));
    int64_t dim = xs->dims[*axis];
    size_t n = c->n_out;
    const int64_t *sv;
    ptrdiff_t ns = rt_ints(c, "split", &sv);
    if (ns >= 0) {
        if ((size_t)ns != n)
            return gir_fail(err, GIR_E_ATTRIBUTE, "split has %td sizes for %zu outputs", ns, n);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (sv[i] < 0 || sv[i] > dim)
                return gir_fail(err, GIR_E_ATTRIBUTE, "split[%zu] = %lld is outside 0..%lld", i, (long long)sv[i],
                                (long long)dim);
            sizes[i] = sv[i];
            sum += sv[i];
        }
        if (sum != dim)
            return gir_fail(err, GIR_E_ATTRIBUTE, "split sizes add up to %lld, axis %d has %lld", (long long)sum, *axis,
                            (long long)dim);
        return GIR_OK;
    }
    /* equal parts; the last one smaller when the size does not divide */
    int64_t part = (dim + (int64_t)n - 1) / (int64_t)n, left = dim;
    for (size_t i = 0; i < n; i++) {
        sizes[i] = left < part ? left : part;
        left -= sizes[i];
    }
    return GIR_OK;
}

static gir_status split_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    gir_status st;
    int axis;
    TRY(any_dtype(c, x->dtype, err));
    if (x->shape.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "Split needs rank 1 or more");
    int64_t *sizes = malloc(c->n_out * sizeof *sizes);
    if (!sizes)
        return gir_nomem(err);
    st = split_sizes(c, &x->shape, &axis, sizes, err);
    for (size_t i = 0; st == GIR_OK && i < c->n_out; i++) {
        if (!c->out[i])
            continue;
        gir_shape os = x->shape;
        os.dims[axis] = sizes[i];
        st = rt_set_out(c->out[i], x->dtype, &os, err);
    }
    free(sizes);
    return st;
}

static gir_status split_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    size_t outer, inner, es = gir_dtype_size(x->dtype);
    int axis = rt_run_axis(c, 0, &outer, &inner);
    size_t xrow = (size_t)x->shape.dims[axis] * inner * es, off = 0;
    for (size_t i = 0; i < c->n_out; i++) {
        /* an omitted output still occupies its part: sizes come from the plan */
        int64_t *sizes = NULL;
        size_t part;
        if (c->out[i]) {
            part = (size_t)c->out[i]->shape.dims[axis] * inner * es;
        } else {
            sizes = malloc(c->n_out * sizeof *sizes);
            if (!sizes)
                return gir_nomem(err);
            int ax;
            split_sizes(c, &x->shape, &ax, sizes, NULL);
            part = (size_t)sizes[i] * inner * es;
            free(sizes);
        }
        if (c->out[i])
            rt_copy_parts(c->out[i]->data, x->data, outer, xrow, off, part);
        off += part;
    }
    return GIR_OK;
}

const rt_kernel gir_k_split = { split_prepare, split_run, NULL, 0 };

/* ---- Slice --------------------------------------------------------------------------- */

typedef struct slice_plan {
    int64_t start[GIR_MAX_RANK], step[GIR_MAX_RANK];
    gir_shape out;
} slice_plan;

static gir_status slice_make(const rt_call *c, const gir_shape *xs, slice_plan *p, gir_error *err)
{
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    ptrdiff_t ns = rt_ints(c, "starts", &starts), ne = rt_ints(c, "ends", &ends);
    if (ns < 0 || ne < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Slice needs attributes starts and ends");
    if (ns != ne)
        return gir_fail(err, GIR_E_ATTRIBUTE, "starts has %td values and ends %td", ns, ne);
    ptrdiff_t na = rt_ints(c, "axes", &axes), nst = rt_ints(c, "steps", &steps);
    if ((na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return gir_fail(err, GIR_E_ATTRIBUTE, "starts, ends, axes and steps have different lengths");
    int r = xs->rank;
    p->out = *xs;
    bool seen[GIR_MAX_RANK] = { false };
    for (int i = 0; i < r; i++) {
        p->start[i] = 0;
        p->step[i] = 1;
    }
    for (ptrdiff_t i = 0; i < ns; i++) {
        int a;
        if (na >= 0) {
            TRY(rt_axis(c, "axes", axes[i], r, &a, err));
        } else if (i < r) {
            a = (int)i;
        } else {
            return gir_fail(err, GIR_E_ATTRIBUTE, "starts has %td values for rank %d", ns, r);
        }
        if (seen[a])
            return gir_fail(err, GIR_E_ATTRIBUTE, "axes lists axis %d twice", a);
        seen[a] = true;
        int64_t dim = xs->dims[a], step = nst >= 0 ? steps[i] : 1;
        if (step == 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "steps[%td] is 0", i);
        if (step == INT64_MIN)
            step = -INT64_MAX;
        int64_t s = starts[i], e = ends[i];
        /* ONNX clamping: negative counts from the end, then clamp */
        if (s < 0)
            s = s < -dim ? 0 : s + dim;
        if (e < 0)
            e = e < -dim ? -1 : e + dim;
        int64_t len;
        if (step > 0) {
            if (s > dim)
                s = dim;
            if (e > dim)
                e = dim;
            if (e < 0)
                e = 0;
            len = e > s ? (e - s + step - 1) / step : 0;
        } else {
            if (s > dim - 1)
                s = dim - 1;
            if (e > dim - 1)
                e = dim - 1;
            len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
        }
        p->start[a] = len > 0 ? s : 0;
        p->step[a] = step;
        p->out.dims[a] = len;
    }
    return GIR_OK;
}

static gir_status slice_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    slice_plan p;
    TRY(any_dtype(c, x->dtype, err));
    TRY(slice_make(c, &x->shape, &p, err));
    return rt_set_out(c->out[0], x->dtype, &p.out, err);
}

static gir_status slice_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    slice_plan p;
    slice_make(c, &x->shape, &p, NULL);
    size_t xs[GIR_MAX_RANK];
    rt_strides(&x->shape, xs);
    size_t es = gir_dtype_size(x->dtype);
    if (c->out[0]->numel == 0)
        return GIR_OK;
    /* negative steps go through signed strides: walk the odometer here */
    int r = x->shape.rank;
    int64_t base = 0;
    for (int i = 0; i < r; i++)
        base += p.start[i] * (int64_t)xs[i];
    bool positive = true;
    for (int i = 0; i < r; i++)
        if (p.step[i] < 0)
            positive = false;
    if (positive) {
        strided s = { r, { 0 }, { 0 }, es };
        for (int i = 0; i < r; i++) {
            s.dims[i] = (size_t)p.out.dims[i];
            s.st[i] = (size_t)p.step[i] * xs[i];
        }
        strided_copy(&s, (const char *)x->data + (size_t)base * es, c->out[0]->data);
        return GIR_OK;
    }
    char *dst = c->out[0]->data;
    size_t n = c->out[0]->numel;
    for (size_t o = 0; o < n; o++) {
        size_t t = o;
        int64_t off = base;
        for (int i = r - 1; i >= 0; i--) {
            size_t idx = t % (size_t)p.out.dims[i];
            t /= (size_t)p.out.dims[i];
            off += (int64_t)idx * p.step[i] * (int64_t)xs[i];
        }
        memcpy(dst + o * es, (const char *)x->data + (size_t)off * es, es);
    }
    return GIR_OK;
}

const rt_kernel gir_k_slice = { slice_prepare, slice_run, NULL, 0 };

/* ---- Pad ----------------------------------------------------------------------------- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_plan {
    int64_t begin[GIR_MAX_RANK];
    int mode;
    gir_shape out;
} pad_plan;

static gir_status pad_make(const rt_call *c, const gir_shape *xs, pad_plan *p, gir_error *err)
{
    gir_status st;
    char sx[96];
    /* in the order of PAD_CONSTANT, ... */
    static const char *const modes[] = { "constant", "reflect", "edge", "wrap" };
    const char *mode = rt_string(c, "mode", "constant");
    p->mode = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(mode, modes[i]) == 0)
            p->mode = i;
    if (p->mode < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Pad mode '%s' is not constant, reflect, edge or wrap", mode);
    const int64_t *pads, *axes;
    ptrdiff_t np = rt_ints(c, "pads", &pads), na = rt_ints(c, "axes", &axes);
    int r = xs->rank;
    int64_t pb[GIR_MAX_RANK] = { 0 }, pe[GIR_MAX_RANK] = { 0 };
    if (np < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Pad needs attribute pads");
    ptrdiff_t nax = na >= 0 ? na : r;
    if (np != 2 * nax)
        return gir_fail(err, GIR_E_ATTRIBUTE, "pads has %td values, expected %td", np, 2 * nax);
    for (ptrdiff_t i = 0; i < nax; i++) {
        int a = (int)i;
        if (na >= 0 && (st = rt_axis(c, "axes", axes[i], r, &a, err)))
            return st;
        if (pads[i] < -(1LL << 40) || pads[i] > (1LL << 40) || pads[i + nax] < -(1LL << 40) ||
            pads[i + nax] > (1LL << 40))
            return gir_fail(err, GIR_E_ATTRIBUTE, "pads are out of range");
        pb[a] = pads[i];
        pe[a] = pads[i + nax];
    }
    p->out = *xs;
    for (int i = 0; i < r; i++) {
        int64_t d = xs->dims[i] + pb[i] + pe[i];
        if (d < 0)
            return gir_fail(err, GIR_E_SHAPE, "pads remove more than axis %d of %s holds", i,
                            gir_shape_str(xs, sx, sizeof sx));
        if (p->mode != PAD_CONSTANT && xs->dims[i] == 0 && d > 0)
            return gir_fail(err, GIR_E_SHAPE, "%s padding of an empty axis %d", mode, i);
        if (p->mode == PAD_REFLECT && (pb[i] >= xs->dims[i] || pe[i] >= xs->dims[i]) && (pb[i] > 0 || pe[i] > 0) &&
            xs->dims[i] > 1)
            return gir_fail(err, GIR_E_ATTRIBUTE, "reflect pads of axis %d must be smaller than its size %lld", i,
                            (long long)xs->dims[i]);
        p->out.dims[i] = d;
        p->begin[i] = pb[i];
    }
    return GIR_OK;
}

static gir_status pad_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    pad_plan p;
    TRY(any_dtype(c, x->dtype, err));
    TRY(pad_make(c, &x->shape, &p, err));
    return rt_set_out(c->out[0], x->dtype, &p.out, err);
}

/* Source index for output index o along an axis of size n, or -1 (constant). */
static int64_t pad_src(int mode, int64_t o, int64_t begin, int64_t n)
{
    int64_t i = o - begin;
    if (i >= 0 && i < n)
        return i;
    switch (mode) {
    case PAD_EDGE:
        return i < 0 ? 0 : n - 1;
    case PAD_WRAP:
        return ((i % n) + n) % n;
    case PAD_REFLECT: {
        if (n == 1)
            return 0;
        int64_t period = 2 * (n - 1);
        int64_t m = ((i % period) + period) % period;
        return m < n ? m : period - m;
    }
    default:
        return -1;
    }
}

static void store_constant(void *dst, gir_dtype t, double v)
{
    switch (t) {
    case GIR_DT_F32: { float f = (float)v; memcpy(dst, &f, 4); break; }
    case GIR_DT_F64: memcpy(dst, &v, 8); break;
    case GIR_DT_I8: { int8_t q = (int8_t)v; memcpy(dst, &q, 1); break; }
    case GIR_DT_I16: { int16_t q = (int16_t)v; memcpy(dst, &q, 2); break; }
    case GIR_DT_I32: { int32_t q = (int32_t)v; memcpy(dst, &q, 4); break; }
    case GIR_DT_I64: { int64_t q = (int64_t)v; memcpy(dst, &q, 8); break; }
    case GIR_DT_U8: case GIR_DT_BOOL: { uint8_t q = (uint8_t)v; memcpy(dst, &q, 1); break; }
    case GIR_DT_U16: { uint16_t q = (uint16_t)v; memcpy(dst, &q, 2); break; }
    case GIR_DT_U32: { uint32_t q = (uint32_t)v; memcpy(dst, &q, 4); break; }
    case GIR_DT_U64: { uint64_t q = (uint64_t)v; memcpy(dst, &q, 8); break; }
    default: memset(dst, 0, gir_dtype_size(t)); break; /* f16/bf16: only 0 is exact */
    }
}

static gir_status pad_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    pad_plan p;
    pad_make(c, &x->shape, &p, NULL);
    size_t es = gir_dtype_size(x->dtype);
    int r = x->shape.rank;
    double cv = rt_float(c, "constant_value", 0.0);
    unsigned char cbytes[16];
    double cvv = (cv != cv) ? 0.0 : cv;
    store_constant(cbytes, x->dtype, x->dtype == GIR_DT_F32 || x->dtype == GIR_DT_F64 ? cv : cvv);
    char *dst = y->data;
    if (y->numel == 0)
        return GIR_OK;
    if (r == 0) {
        memcpy(dst, x->data, es);
        return GIR_OK;
    }
    size_t xs[GIR_MAX_RANK];
    rt_strides(&x->shape, xs);
    size_t inner = (size_t)p.out.dims[r - 1], rows = y->numel / inner;
    int64_t nin = x->shape.dims[r - 1];
    for (size_t row = 0; row < rows; row++) {
        /* source row, or none when an outer index falls in constant padding */
        size_t t = row;
        int64_t off = 0;
        bool constant_row = false;
        for (int d = r - 2; d >= 0; d--) {
            int64_t o = (int64_t)(t % (size_t)p.out.dims[d]);
            t /= (size_t)p.out.dims[d];
            int64_t si = pad_src(p.mode, o, p.begin[d], x->shape.dims[d]);
            if (si < 0)
                constant_row = true;
            else
                off += si * (int64_t)xs[d];
        }
        char *drow = dst + row * inner * es;
        const char *srow = (const char *)x->data + (size_t)off * es;
        /* the columns inside the input, [lo, hi), are one copy; the padding
         * around them, [0, lo) and [hi, inner), is filled element by element
         * (all of the row when lo == hi) */
        int64_t b0 = p.begin[r - 1];
        size_t lo = 0, hi = 0;
        if (!constant_row) {
            lo = b0 > 0 ? (size_t)b0 : 0;
            hi = b0 + nin < (int64_t)inner ? (size_t)(b0 + nin > 0 ? b0 + nin : 0) : inner;
            if (lo > hi)
                lo = hi;
            if (hi > lo)
                memcpy(drow + lo * es, srow + (size_t)((int64_t)lo - b0) * es, (hi - lo) * es);
        }
        const size_t part_lo[2] = { 0, hi }, part_hi[2] = { lo, inner };
        for (int part = 0; part < 2; part++)
            for (size_t o = part_lo[part]; o < part_hi[part]; o++) {
                int64_t si = constant_row ? -1 : pad_src(p.mode, (int64_t)o, b0, nin);
                if (si < 0)
                    memcpy(drow + o * es, cbytes, es);
                else
                    memcpy(drow + o * es, srow + (size_t)si * es, es);
            }
    }
    return GIR_OK;
}

const rt_kernel gir_k_pad = { pad_prepare, pad_run, NULL, 0 };

/* ---- Tile and Expand: copies with broadcast-like source strides ------------------ */

static gir_status tile_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    TRY(any_dtype(c, x->dtype, err));
    const int64_t *rep;
    ptrdiff_t n = rt_ints(c, "repeats", &rep);
    if (n != x->shape.rank)
        return gir_fail(err, GIR_E_ATTRIBUTE, "repeats has %td values for rank %d", n, x->shape.rank);
    gir_shape os = x->shape;
    for (int i = 0; i < os.rank; i++) {
        uint64_t d;
        if (rep[i] < 0 || !gir_mul_u64((uint64_t)x->shape.dims[i], (uint64_t)rep[i], &d) || d > (1ULL << 40))
            return gir_fail(err, GIR_E_ATTRIBUTE, "repeats[%d] = %lld is out of range", i, (long long)rep[i]);
        os.dims[i] = (int64_t)d;
    }
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

static gir_status tile_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    size_t es = gir_dtype_size(x->dtype);
    int r = x->shape.rank;
    if (y->numel == 0)
        return GIR_OK;
    size_t xs[GIR_MAX_RANK];
    rt_strides(&x->shape, xs);
    char *dst = y->data;
    for (size_t o = 0; o < y->numel; o++) {
        size_t t = o, off = 0;
        for (int d = r - 1; d >= 0; d--) {
            size_t idx = t % (size_t)y->shape.dims[d];
            t /= (size_t)y->shape.dims[d];
            off += (idx % (size_t)x->shape.dims[d]) * xs[d];
        }
        memcpy(dst + o * es, (const char *)x->data + off * es, es);
    }
    return GIR_OK;
}

const rt_kernel gir_k_tile = { tile_prepare, tile_run, NULL, 0 };

static gir_status expand_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    TRY(any_dtype(c, x->dtype, err));
    const int64_t *sv;
    ptrdiff_t n = rt_ints(c, "shape", &sv);
    if (n < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Expand needs attribute shape");
    if (n > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "Expand to rank %td is more than %d", n, GIR_MAX_RANK);
    gir_shape ts = { (int)n, { 0 } }, os;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (sv[i] < 0)
            return gir_fail(err, GIR_E_ATTRIBUTE, "shape[%td] = %lld is negative", i, (long long)sv[i]);
        ts.dims[i] = sv[i];
    }
    TRY(rt_broadcast_shape(c, &x->shape, &ts, &os, err));
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

static gir_status expand_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    int r = y->shape.rank;
    strided s = { r, { 0 }, { 0 }, gir_dtype_size(x->dtype) };
    size_t xs[GIR_MAX_RANK];
    rt_strides(&x->shape, xs);
    for (int i = 0; i < r; i++) {
        int si = i - (r - x->shape.rank);
        s.dims[i] = (size_t)y->shape.dims[i];
        s.st[i] = si >= 0 && x->shape.dims[si] != 1 ? xs[si] : 0;
    }
    strided_copy(&s, x->data, y->data);
    return GIR_OK;
}

const rt_kernel gir_k_expand = { expand_prepare, expand_run, NULL, 0 };

/* ---- Gather ---------------------------------------------------------------------------- */

static gir_status gather_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0], *ind = c->in[1];
    int axis;
    TRY(any_dtype(c, x->dtype, err));
    if (ind->dtype != GIR_DT_I32 && ind->dtype != GIR_DT_I64)
        return gir_fail(err, GIR_E_DTYPE, "Gather indices are %s, expected int32 or int64", gir_dtype_name(ind->dtype));
    if (x->shape.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "Gather needs data of rank 1 or more");
    TRY(rt_axis(c, "axis", rt_int(c, "axis", 0), x->shape.rank, &axis, err));
    int r = x->shape.rank - 1 + ind->shape.rank;
    if (r > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "Gather result of rank %d is more than %d", r, GIR_MAX_RANK);
    gir_shape os = { r, { 0 } };
    int k = 0;
    for (int i = 0; i < axis; i++)
        os.dims[k++] = x->shape.dims[i];
    for (int i = 0; i < ind->shape.rank; i++)
        os.dims[k++] = ind->shape.dims[i];
    for (int i = axis + 1; i < x->shape.rank; i++)
        os.dims[k++] = x->shape.dims[i];
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

static gir_status gather_run(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0], *ind = c->in[1];
    size_t outer, inner, es = gir_dtype_size(x->dtype);
    int axis = rt_run_axis(c, 0, &outer, &inner);
    int64_t dim = x->shape.dims[axis];
    size_t ni = ind->numel;
    char *dst = c->out[0]->data;
    for (size_t i = 0; i < ni; i++) {
        int64_t v = ind->dtype == GIR_DT_I64 ? ((const int64_t *)ind->data)[i] : ((const int32_t *)ind->data)[i];
        if (v < -dim || v >= dim)
            return gir_fail(err, GIR_E_ARGUMENT, "Gather index %lld is outside [-%lld, %lld)", (long long)v,
                            (long long)dim, (long long)dim);
    }
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < ni; i++) {
            int64_t v = ind->dtype == GIR_DT_I64 ? ((const int64_t *)ind->data)[i] : ((const int32_t *)ind->data)[i];
            if (v < 0)
                v += dim;
            memcpy(dst + (o * ni + i) * inner * es, (const char *)x->data + (o * (size_t)dim + (size_t)v) * inner * es,
                   inner * es);
        }
    return GIR_OK;
}

const rt_kernel gir_k_gather = { gather_prepare, gather_run, NULL, 0 };

/* ---- DepthToSpace / SpaceToDepth ------------------------------------------------------- */

static gir_status d2s_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    char sx[96];
    bool d2s = c->node->op == GIR_OP_DepthToSpace;
    TRY(any_dtype(c, x->dtype, err));
    int64_t b = rt_int(c, "blocksize", 0);
    if (b < 1 || b > (1 << 16))
        return gir_fail(err, GIR_E_ATTRIBUTE, "blocksize %lld is outside 1..%d", (long long)b, 1 << 16);
    if (x->shape.rank != 4)
        return gir_fail(err, GIR_E_SHAPE, "%s input %s is not 4-D", gir_op_name(c->node->op),
                        gir_shape_str(&x->shape, sx, sizeof sx));
    const char *mode = rt_string(c, "mode", "DCR");
    if (d2s && strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "mode '%s' is not DCR or CRD", mode);
    gir_shape os = x->shape;
    if (d2s) {
        if (x->shape.dims[1] % (b * b) != 0)
            return gir_fail(err, GIR_E_SHAPE, "%lld channels do not divide by blocksize^2 = %lld",
                            (long long)x->shape.dims[1], (long long)(b * b));
        os.dims[1] /= b * b;
        os.dims[2] *= b;
        os.dims[3] *= b;
    } else {
        if (x->shape.dims[2] % b != 0 || x->shape.dims[3] % b != 0)
            return gir_fail(err, GIR_E_SHAPE, "spatial dims of %s do not divide by blocksize %lld",
                            gir_shape_str(&x->shape, sx, sizeof sx), (long long)b);
        os.dims[1] *= b * b;
        os.dims[2] /= b;
        os.dims[3] /= b;
    }
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

/* Both ops are a 6-D transpose between reshapes: done as a strided copy. */
static gir_status d2s_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    size_t b = (size_t)rt_int(c, "blocksize", 1);
    size_t N = (size_t)x->shape.dims[0], C = (size_t)x->shape.dims[1], H = (size_t)x->shape.dims[2],
           W = (size_t)x->shape.dims[3];
    strided s = { 6, { 0 }, { 0 }, gir_dtype_size(x->dtype) };
    size_t d6[6], st6[6], perm[6];
    if (c->node->op == GIR_OP_DepthToSpace) {
        size_t Co = C / (b * b);
        bool crd = strcmp(rt_string(c, "mode", "DCR"), "CRD") == 0;
        if (crd) { /* [N, Co, b, b, H, W] -> [N, Co, H, b, W, b] */
            size_t in[6] = { N, Co, b, b, H, W };
            size_t p[6] = { 0, 1, 4, 2, 5, 3 };
            memcpy(d6, in, sizeof d6);
            memcpy(perm, p, sizeof perm);
        } else { /* [N, b, b, Co, H, W] -> [N, Co, H, b, W, b] */
            size_t in[6] = { N, b, b, Co, H, W };
            size_t p[6] = { 0, 3, 4, 1, 5, 2 };
            memcpy(d6, in, sizeof d6);
            memcpy(perm, p, sizeof perm);
        }
    } else { /* [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b] */
        size_t in[6] = { N, C, H / b, b, W / b, b };
        size_t p[6] = { 0, 3, 5, 1, 2, 4 };
        memcpy(d6, in, sizeof d6);
        memcpy(perm, p, sizeof perm);
    }
    size_t acc = 1;
    for (int i = 5; i >= 0; i--) {
        st6[i] = acc;
        acc *= d6[i];
    }
    for (int i = 0; i < 6; i++) {
        s.dims[i] = d6[perm[i]];
        s.st[i] = st6[perm[i]];
    }
    strided_copy(&s, x->data, c->out[0]->data);
    return GIR_OK;
}

const rt_kernel gir_k_depth_to_space = { d2s_prepare, d2s_run, NULL, 0 };
const rt_kernel gir_k_space_to_depth = { d2s_prepare, d2s_run, NULL, 0 };

/* ---- Shape ------------------------------------------------------------------------------- */

static void shape_range(const rt_call *c, int r, int *b, int *e)
{
    int64_t s = rt_int(c, "start", 0), t = rt_int(c, "end", r);
    if (s < 0)
        s += r;
    if (t < 0)
        t += r;
    s = s < 0 ? 0 : s > r ? r : s;
    t = t < 0 ? 0 : t > r ? r : t;
    *b = (int)s;
    *e = (int)(t > s ? t : s);
}

static gir_status shape_prepare(rt_call *c, gir_error *err)
{
    int b, e;
    shape_range(c, c->in[0]->shape.rank, &b, &e);
    gir_shape os = { 1, { e - b } };
    return rt_set_out(c->out[0], GIR_DT_I64, &os, err);
}

static gir_status shape_run(rt_call *c, gir_error *err)
{
    (void)err;
    int b, e;
    shape_range(c, c->in[0]->shape.rank, &b, &e);
    int64_t *y = c->out[0]->data;
    for (int i = b; i < e; i++)
        y[i - b] = c->in[0]->shape.dims[i];
    return GIR_OK;
}

const rt_kernel gir_k_shape = { shape_prepare, shape_run, NULL, 0 };
