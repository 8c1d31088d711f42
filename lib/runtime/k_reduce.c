/* Reductions over a set of axes (ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ReduceProd) and ArgMax/ArgMin along one axis. */
#include "rt.h"

#include <stdlib.h>

typedef struct red_state {
    bool reduced[GIR_MAX_RANK];
    bool identity; /* noop_with_empty_axes with no axes */
} red_state;

static gir_status reduce_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    gir_op op = c->node->op;
    bool is_float = x->dtype == GIR_DT_F32;
    bool is_int = x->dtype == GIR_DT_I32 || x->dtype == GIR_DT_I64;
    if (!is_float && !(is_int && op != GIR_OP_ReduceMean))
        return rt_no_kernel_dtype(c, x->dtype, err);
    red_state *s = rt_state(c, sizeof *s);
    if (!s)
        return gir_nomem(err);
    memset(s, 0, sizeof *s);
    const int64_t *axes;
    ptrdiff_t na = rt_ints(c, "axes", &axes);
    int r = x->shape.rank;
    if (na <= 0) {
        if (rt_int(c, "noop_with_empty_axes", 0) != 0)
            s->identity = true;
        for (int i = 0; i < r; i++)
            s->reduced[i] = !s->identity;
    } else {
        for (ptrdiff_t i = 0; i < na; i++) {
            int a;
            TRY(rt_axis(c, "axes", axes[i], r, &a, err));
            if (s->reduced[a])
                return gir_fail(err, GIR_E_ATTRIBUTE, "axes lists axis %d twice", a);
            s->reduced[a] = true;
        }
    }
    bool keep = rt_int(c, "keepdims", 1) != 0;
    gir_shape os = { 0, { 0 } };
    for (int i = 0; i < r; i++) {
        if (!s->reduced[i])
            os.dims[os.rank++] = x->shape.dims[i];
        else if (keep)
            os.dims[os.rank++] = 1;
        if (s->reduced[i] && x->shape.dims[i] == 0 && (op == GIR_OP_ReduceMax || op == GIR_OP_ReduceMin))
            return gir_fail(err, GIR_E_SHAPE, "%s over an empty axis has no value", gir_op_name(op));
    }
    return rt_set_out(c->out[0], x->dtype, &os, err);
}

/* The sum of n floats in double: eight running sums (sum i takes elements
 * i, i + 8, ...: independent chains of additions, which vectorise), then
 * added pairwise; the same order on every CPU and with any threads. */
RT_CLONES static double sum_f64(const float *p, size_t n)
{
    double s[8] = { 0 };
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        for (int i = 0; i < 8; i++)
            s[i] += (double)p[k + i];
    for (int i = 0; k < n; k++, i++)
        s[i] += (double)p[k];
    return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

static void trail_part(void *ctx, size_t o0, size_t o1, int worker)
{
    (void)worker;
    const rt_rows_job *j = ctx; /* flag: the mean, not the sum */
    for (size_t o = o0; o < o1; o++) {
        double acc = sum_f64(j->x + o * j->n, j->n);
        j->y[o] = (float)(j->flag ? acc / (double)j->n : acc);
    }
}

static gir_status reduce_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    rt_tensor *y = c->out[0];
    const red_state *s = c->state;
    gir_op op = c->node->op;
    if (s->identity) {
        memmove(y->data, x->data, x->numel * gir_dtype_size(x->dtype));
        return GIR_OK;
    }
    int r = x->shape.rank;
    size_t st[GIR_MAX_RANK];
    rt_strides(&x->shape, st);
    /* kept dims (odometer over outputs) and reduced dims (inner odometer) */
    size_t kd[GIR_MAX_RANK], ks[GIR_MAX_RANK], rd[GIR_MAX_RANK], rs[GIR_MAX_RANK];
    int nk = 0, nr = 0;
    size_t count = 1;
    for (int i = 0; i < r; i++) {
        if (s->reduced[i]) {
            rd[nr] = (size_t)x->shape.dims[i];
            rs[nr++] = st[i];
            count *= (size_t)x->shape.dims[i];
        } else {
            kd[nk] = (size_t)x->shape.dims[i];
            ks[nk++] = st[i];
        }
    }
    /* float Sum/Mean over trailing axes (global pooling, LayerNorm's means):
     * each output is one contiguous run, summed in the same order as below */
    bool trailing = nr > 0 && x->dtype == GIR_DT_F32 && (op == GIR_OP_ReduceSum || op == GIR_OP_ReduceMean);
    for (int i = 0; trailing && i < r; i++)
        if (s->reduced[i] != (i >= r - nr))
            trailing = false;
    if (trailing) {
        rt_rows_job j = { x->data, y->data, count, op == GIR_OP_ReduceMean };
        rt_parallel_rows(c->th, y->numel, trail_part, &j);
        return GIR_OK;
    }
    /* innermost reduced dim contiguous: a straight loop */
    for (size_t o = 0; o < y->numel; o++) {
        size_t base = 0, t = o;
        for (int i = nk - 1; i >= 0; i--) {
            base += (t % kd[i]) * ks[i];
            t /= kd[i];
        }
        double acc_d = op == GIR_OP_ReduceProd ? 1.0 : 0.0;
        int64_t acc_i = op == GIR_OP_ReduceProd ? 1 : 0;
        float acc_f = 0;
        bool first = true;
        for (size_t k = 0; k < count; k++) {
            size_t off = base, t2 = k;
            for (int i = nr - 1; i >= 0; i--) {
                off += (t2 % rd[i]) * rs[i];
                t2 /= rd[i];
            }
            if (x->dtype == GIR_DT_F32) {
                float v = ((const float *)x->data)[off];
                switch (op) {
                case GIR_OP_ReduceSum: case GIR_OP_ReduceMean: acc_d += v; break;
                case GIR_OP_ReduceProd: acc_d *= v; break;
                case GIR_OP_ReduceMax:
                    if (first || v > acc_f || (v != v && acc_f == acc_f))
                        acc_f = v;
                    break;
                default:
                    if (first || v < acc_f || (v != v && acc_f == acc_f))
                        acc_f = v;
                    break;
                }
            } else {
                int64_t v = x->dtype == GIR_DT_I32 ? ((const int32_t *)x->data)[off] : ((const int64_t *)x->data)[off];
                switch (op) {
                case GIR_OP_ReduceSum: acc_i = (int64_t)((uint64_t)acc_i + (uint64_t)v); break;
                case GIR_OP_ReduceProd: acc_i = (int64_t)((uint64_t)acc_i * (uint64_t)v); break;
                case GIR_OP_ReduceMax: if (first || v > acc_i) acc_i = v; break;
                default: if (first || v < acc_i) acc_i = v; break;
                }
            }
            first = false;
        }
        if (x->dtype == GIR_DT_F32) {
            float res = op == GIR_OP_ReduceMax || op == GIR_OP_ReduceMin ? acc_f
                        : op == GIR_OP_ReduceMean ? (float)(count ? acc_d / (double)count : NAN)
                                                  : (float)acc_d;
            ((float *)y->data)[o] = res;
        } else if (x->dtype == GIR_DT_I32) {
            ((int32_t *)y->data)[o] = (int32_t)acc_i;
        } else {
            ((int64_t *)y->data)[o] = acc_i;
        }
    }
    return GIR_OK;
}

const rt_kernel gir_k_reduce = { reduce_prepare, reduce_run, free, 0 };

/* ---- ArgMax / ArgMin ------------------------------------------------------------- */

static gir_status arg_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *x = c->in[0];
    int axis;
    if (x->dtype != GIR_DT_F32 && x->dtype != GIR_DT_I32 && x->dtype != GIR_DT_I64)
        return rt_no_kernel_dtype(c, x->dtype, err);
    if (x->shape.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "%s needs rank 1 or more", gir_op_name(c->node->op));
    TRY(rt_axis(c, "axis", rt_int(c, "axis", 0), x->shape.rank, &axis, err));
    if (x->shape.dims[axis] == 0)
        return gir_fail(err, GIR_E_SHAPE, "%s over an empty axis has no value", gir_op_name(c->node->op));
    gir_shape os = { 0, { 0 } };
    bool keep = rt_int(c, "keepdims", 1) != 0;
    for (int i = 0; i < x->shape.rank; i++)
        if (i != axis)
            os.dims[os.rank++] = x->shape.dims[i];
        else if (keep)
            os.dims[os.rank++] = 1;
    return rt_set_out(c->out[0], GIR_DT_I64, &os, err);
}

static gir_status arg_run(rt_call *c, gir_error *err)
{
    (void)err;
    const rt_tensor *x = c->in[0];
    size_t outer, inner;
    size_t L = (size_t)x->shape.dims[rt_run_axis(c, 0, &outer, &inner)];
    bool is_max = c->node->op == GIR_OP_ArgMax, last = rt_int(c, "select_last_index", 0) != 0;
    int64_t *y = c->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            size_t best = 0;
            for (size_t k = 1; k < L; k++) {
                size_t at = (o * L + k) * inner + i, bat = (o * L + best) * inner + i;
                /* compared in the element type: int64 does not fit a double */
                int cmp;
                if (x->dtype == GIR_DT_F32) {
                    float v = ((const float *)x->data)[at], b = ((const float *)x->data)[bat];
                    cmp = (v > b) - (v < b);
                } else if (x->dtype == GIR_DT_I32) {
                    int32_t v = ((const int32_t *)x->data)[at], b = ((const int32_t *)x->data)[bat];
                    cmp = (v > b) - (v < b);
                } else {
                    int64_t v = ((const int64_t *)x->data)[at], b = ((const int64_t *)x->data)[bat];
                    cmp = (v > b) - (v < b);
                }
                if ((is_max ? cmp > 0 : cmp < 0) || (last && cmp == 0))
                    best = k;
            }
            y[o * inner + i] = (int64_t)best;
        }
    return GIR_OK;
}

const rt_kernel gir_k_argminmax = { arg_prepare, arg_run, NULL, 0 };
