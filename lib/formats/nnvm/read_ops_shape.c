/* Reading the shape operators of MXNet and NNVM graphs: Reshape with
 * MXNet's codes, transpose, pad, clip, expand_dims, squeeze, split, the
 * slices, LRN, reductions, Cast (the read functions read_ops.c's tables
 * point at). */
#include "ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MXNet's Reshape codes against a known input shape: k a dimension, 0
 * copies the input's, -1 the remaining size, -2 copies all remaining
 * input dimensions, -3 merges two, -4 splits one into the next two codes
 * (one may be -1).  False when the codes do not fit the shape. */
bool nn_mx_reshape_dims(const int64_t *code, size_t n, const gir_shape *in, int64_t *out, int *rank)
{
    size_t i = 0;
    int k = 0, inf = -1;
    int64_t total = gir_shape_numel(in), known = 1;
    for (size_t c = 0; c < n; c++) {
        int64_t d = code[c];
        if (k >= GIR_MAX_RANK)
            return false;
        if (d > 0) {
            out[k++] = d;
            i++;
        } else if (d == 0) {
            if (i >= (size_t)in->rank)
                return false;
            out[k++] = in->dims[i++];
        } else if (d == -1) {
            if (inf >= 0)
                return false;
            inf = k;
            out[k++] = 1;
            i++;
        } else if (d == -2) {
            for (; i < (size_t)in->rank; i++) {
                if (k >= GIR_MAX_RANK)
                    return false;
                out[k++] = in->dims[i];
            }
        } else if (d == -3) {
            if (i + 1 >= (size_t)in->rank)
                return false;
            out[k++] = in->dims[i] * in->dims[i + 1];
            i += 2;
        } else if (d == -4) {
            if (c + 2 >= n || i >= (size_t)in->rank || k + 2 > GIR_MAX_RANK)
                return false;
            int64_t d0 = in->dims[i++], a = code[c + 1], b = code[c + 2];
            if ((a == -1 && b == -1) || a < -1 || b < -1 || a == 0 || b == 0)
                return false;
            if (a == -1)
                a = b > 0 && d0 % b == 0 ? d0 / b : -1;
            if (b == -1)
                b = a > 0 && d0 % a == 0 ? d0 / a : -1;
            if (a < 1 || b < 1 || a * b != d0)
                return false;
            out[k++] = a;
            out[k++] = b;
            c += 2;
        } else {
            return false;
        }
    }
    for (int j = 0; j < k; j++)
        if (j != inf)
            known *= out[j];
    if (inf >= 0) {
        if (known <= 0 || total % known)
            return false;
        out[inf] = total / known;
    } else if (known != total) {
        return false;
    }
    *rank = k;
    return true;
}

gir_status nn_rd_reshape(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                         gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(nnr_g_tuple(r, idx, "shape", true, t, &n, err));
    bool reverse = false, keep_hi = false;
    int64_t ts[NN_MAX_TUPLE];
    size_t tn = 0;
    if (r->fl == NN_MXNET) {
        TRY(nn_rd_bool(r, idx, "reverse", false, &reverse, err));
        TRY(nn_rd_bool(r, idx, "keep_highest", false, &keep_hi, err));
        TRY(nnr_g_tuple(r, idx, "target_shape", false, ts, &tn, err));
    }
    if (tn || keep_hi)
        return nnr_keep(r, res, err, "the legacy target_shape/keep_highest form");
    if (n == 0)
        return nnr_keep(r, res, err, "an empty shape");
    bool special = reverse;
    int minus1 = 0;
    for (size_t i = 0; i < n; i++) {
        special = special || t[i] < -1;
        minus1 += t[i] == -1;
    }
    int64_t dims[GIR_MAX_RANK];
    int rank = (int)n;
    if (special || minus1 > 1) {
        const gir_shape *s = nnr_full_shape(r, in[0]);
        if (!s)
            return nnr_keep(r, res, err, "shape=%s needs the input's shape (give --input-shape)", nn_rd_attr(r, idx, "shape"));
        gir_shape rs = *s;
        int64_t rt[NN_MAX_TUPLE];
        if (reverse) {
            for (size_t i = 0; i < n; i++) {
                if (t[i] == -4)
                    return nnr_keep(r, res, err, "reverse=True with a -4 code");
                rt[i] = t[n - 1 - i];
            }
            for (int i = 0; i < s->rank; i++)
                rs.dims[i] = s->dims[s->rank - 1 - i];
        }
        if (!nn_mx_reshape_dims(reverse ? rt : t, n, &rs, dims, &rank)) {
            char what[160], sb[96];
            snprintf(what, sizeof what, "a valid reshape of %s", gir_shape_str(s, sb, sizeof sb));
            return nn_rd_bad_attr(r, idx, "shape", what, err);
        }
        if (reverse)
            for (int i = 0; i < rank / 2; i++) {
                int64_t x = dims[i];
                dims[i] = dims[rank - 1 - i];
                dims[rank - 1 - i] = x;
            }
    } else {
        memcpy(dims, t, n * sizeof *t);
    }
    return nnr_ints_node(r, idx, GIR_OP_Reshape, in[0], "shape", dims, (size_t)rank, &out[0], err);
}

gir_status nn_rd_axes_list(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                           gir_error *err)
{
    gir_op op = nnr_cur_def(r, idx)->op;
    bool tr = op == GIR_OP_Transpose;
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(nnr_g_tuple(r, idx, tr ? "axes" : "axis", false, t, &n, err));
    for (size_t i = 0; tr && i < n; i++)
        if (t[i] < 0)
            return nnr_opaque(res);
    return nnr_ints_node(r, idx, op, in[0], tr ? "perm" : "axes", n ? t : NULL, n, &out[0], err);
}

/* MXNet Pad: pad_width is (before, after) per axis; constant (with
 * constant_value), edge or reflect. */
gir_status nn_rd_mx_pad(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    double cv;
    TRY(nnr_g_tuple(r, idx, "pad_width", true, t, &n, err));
    if (n < 2 || n % 2 || n / 2 > GIR_MAX_RANK)
        return nn_rd_bad_attr(r, idx, "pad_width", "a (before, after) pair per axis", err);
    const char *mode = nn_rd_str(r, idx, "mode", "constant");
    if (strcmp(mode, "constant") != 0 && strcmp(mode, "edge") != 0 && strcmp(mode, "reflect") != 0)
        return nn_rd_bad_attr(r, idx, "mode", "constant, edge or reflect", err);
    TRY(nnr_g_float(r, idx, "constant_value", false, 0.0, &cv, err));
    size_t k = n / 2;
    int64_t pads[2 * GIR_MAX_RANK];
    for (size_t i = 0; i < k; i++) {
        if (t[2 * i] < 0 || t[2 * i + 1] < 0)
            return nn_rd_bad_attr(r, idx, "pad_width", "non-negative pads", err);
        pads[i] = t[2 * i];
        pads[k + i] = t[2 * i + 1];
    }
    gir_node *nd;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Pad, in[0], -1, &nd, &out[0], err));
    (void)res;
    if (gir_attrs_set_ints(r->g, &nd->attrs, "pads", pads, 2 * k, err) ||
        gir_attrs_set_string(r->g, &nd->attrs, "mode", mode, err) ||
        gir_attrs_set_float(r->g, &nd->attrs, "constant_value", cv, err))
        return gir_nomem(err);
    return GIR_OK;
}

gir_status nn_rd_clip(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    double lo, hi;
    TRY(nnr_g_float(r, idx, "a_min", true, 0, &lo, err));
    TRY(nnr_g_float(r, idx, "a_max", true, 0, &hi, err));
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Clip, in[0], -1, &n, &out[0], err));
    (void)res;
    if (gir_attrs_set_float(r->g, &n->attrs, "min", lo, err) || gir_attrs_set_float(r->g, &n->attrs, "max", hi, err))
        return gir_nomem(err);
    return GIR_OK;
}

gir_status nn_rd_expand_dims(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                             gir_error *err)
{
    int64_t axis, k = 1;
    TRY(nn_rd_int(r, idx, "axis", true, 0, &axis, err));
    if (r->fl == NN_NNVM)
        TRY(nn_rd_int(r, idx, "num_newaxis", false, 1, &k, err));
    if (k < 1 || k > GIR_MAX_RANK)
        return nn_rd_bad_attr(r, idx, "num_newaxis", "a count from 1 to 8", err);
    if (axis < 0) {
        /* counts from the end of the output (MXNet: axis + ndim + 1) */
        int rank = nnr_rank_of(r, in[0]);
        if (rank < 0)
            return nnr_keep(r, res, err, "axis=%lld on data of unknown rank (give --input-shape)", (long long)axis);
        axis += rank + 1;
        if (axis < 0)
            return nn_rd_bad_attr(r, idx, "axis", "an axis of the output", err);
    }
    int64_t axes[GIR_MAX_RANK];
    for (int64_t i = 0; i < k; i++)
        axes[i] = axis + i;
    return nnr_ints_node(r, idx, GIR_OP_Unsqueeze, in[0], "axes", axes, (size_t)k, &out[0], err);
}

gir_status nn_rd_split(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t parts, axis;
    bool squeeze = false;
    if (r->fl == NN_MXNET) {
        TRY(nn_rd_int(r, idx, "num_outputs", true, 0, &parts, err));
        TRY(nn_rd_bool(r, idx, "squeeze_axis", false, &squeeze, err));
    } else {
        int64_t t[NN_MAX_TUPLE];
        size_t n;
        TRY(nnr_g_tuple(r, idx, "indices_or_sections", true, t, &n, err));
        const char *s = nn_rd_attr(r, idx, "indices_or_sections");
        /* One bare number means that many equal sections; a list means
         * split indices, which need the dimension's size. */
        if (n != 1 || strchr(s, '(') || strchr(s, '['))
            return nnr_opaque(res);
        parts = t[0];
    }
    TRY(nn_rd_int(r, idx, "axis", false, 1, &axis, err));
    if (parts < 1 || parts > 65535)
        return nn_rd_bad_attr(r, idx, r->fl == NN_MXNET ? "num_outputs" : "indices_or_sections", "a positive count", err);
    gir_node *n;
    TRY(nn_rd_node(r, idx, GIR_OP_Split, 1, (size_t)parts, &n, err));
    nnr_set_in(n, 0, in[0]);
    if (gir_attrs_set_int(r->g, &n->attrs, "axis", axis, err))
        return gir_nomem(err);
    for (int64_t k = 0; k < parts; k++)
        TRY(nn_rd_out(r, n, (size_t)k, &out[k], err));
    /* squeeze_axis: each part loses the split axis (of size 1 then). */
    for (int64_t k = 0; squeeze && k < parts; k++) {
        char sfx[32];
        snprintf(sfx, sizeof sfx, "squeeze%lld", (long long)k);
        gir_node *q;
        TRY(nnr_node2(r, idx, sfx, GIR_OP_Squeeze, out[k], -1, &q, &out[k], err));
        if (gir_attrs_set_ints(r->g, &q->attrs, "axes", &axis, 1, err))
            return gir_nomem(err);
    }
    return GIR_OK;
}

/* "To the end of the axis" in strided_slice / slice_axis. */
#define NN_SLICE_END INT32_MAX

gir_status nnr_slice_node(nn_reader *r, size_t idx, int32_t x, const int64_t *st, const int64_t *en,
                          const int64_t *ax, const int64_t *sp, size_t n, int32_t *out, gir_error *err)
{
    gir_node *nd;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Slice, x, -1, &nd, &out[0], err));
    if (gir_attrs_set_ints(r->g, &nd->attrs, "starts", st, n, err) || gir_attrs_set_ints(r->g, &nd->attrs, "ends", en, n, err) ||
        gir_attrs_set_ints(r->g, &nd->attrs, "axes", ax, n, err) || gir_attrs_set_ints(r->g, &nd->attrs, "steps", sp, n, err))
        return gir_nomem(err);
    return GIR_OK;
}

/* NNVM strided_slice(begin, end, stride): axes 0..n-1; an axis taken
 * whole (0, INT32_MAX or more, step 1) is not listed. */
gir_status nn_rd_strided_slice(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                               gir_error *err)
{
    int64_t b[NN_MAX_TUPLE], e[NN_MAX_TUPLE], s[NN_MAX_TUPLE];
    size_t nb, ne, ns;
    TRY(nnr_g_tuple(r, idx, "begin", true, b, &nb, err));
    TRY(nnr_g_tuple(r, idx, "end", true, e, &ne, err));
    TRY(nnr_g_tuple(r, idx, "stride", false, s, &ns, err));
    if (ne != nb)
        return nn_rd_bad_attr(r, idx, "end", "a tuple as long as begin", err);
    if (ns && ns != nb)
        return nn_rd_bad_attr(r, idx, "stride", "a tuple as long as begin", err);
    int64_t st[NN_MAX_TUPLE], en[NN_MAX_TUPLE], ax[NN_MAX_TUPLE], sp[NN_MAX_TUPLE];
    size_t n = 0;
    for (size_t i = 0; i < nb; i++) {
        int64_t step = ns ? s[i] : 1;
        if (step == 0)
            return nn_rd_bad_attr(r, idx, "stride", "a tuple of non-zero steps", err);
        if (b[i] == 0 && e[i] >= NN_SLICE_END && step == 1)
            continue;
        st[n] = b[i];
        en[n] = e[i] >= NN_SLICE_END ? INT64_MAX : e[i];
        ax[n] = (int64_t)i;
        sp[n++] = step;
    }
    if (n == 0)
        return nnr_opaque(res);
    return nnr_slice_node(r, idx, in[0], st, en, ax, sp, n, out, err);
}

/* MXNet slice_axis(axis, begin, end): end None means to the end. */
gir_status nn_rd_slice_axis(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                            gir_error *err)
{
    int64_t axis, begin, end = INT64_MAX;
    TRY(nn_rd_int(r, idx, "axis", true, 0, &axis, err));
    TRY(nn_rd_int(r, idx, "begin", true, 0, &begin, err));
    const char *es;
    TRY(nnr_g_text(r, idx, "end", &es, err));
    if (!nn_is_none(es))
        TRY(nn_rd_int(r, idx, "end", true, 0, &end, err));
    int64_t one = 1;
    (void)res;
    return nnr_slice_node(r, idx, in[0], &begin, &end, &axis, &one, 1, out, err);
}

gir_status nn_rd_lrn(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    double alpha, beta, bias;
    int64_t size, axis = 1;
    bool mx = r->fl == NN_MXNET;
    TRY(nnr_g_float(r, idx, "alpha", !mx, 1e-4, &alpha, err));
    TRY(nnr_g_float(r, idx, "beta", !mx, 0.75, &beta, err));
    TRY(nnr_g_float(r, idx, mx ? "knorm" : "bias", !mx, 2.0, &bias, err));
    TRY(nn_rd_int(r, idx, mx ? "nsize" : "size", true, 0, &size, err));
    if (!mx)
        TRY(nn_rd_int(r, idx, "axis", true, 1, &axis, err));
    if (size < 1)
        return nn_rd_bad_attr(r, idx, mx ? "nsize" : "size", "a positive integer", err);
    if (axis != 1)
        return nnr_opaque(res);
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_LRN, in[0], -1, &n, &out[0], err));
    if (gir_attrs_set_float(r->g, &n->attrs, "alpha", alpha, err) || gir_attrs_set_float(r->g, &n->attrs, "beta", beta, err) ||
        gir_attrs_set_float(r->g, &n->attrs, "bias", bias, err) || gir_attrs_set_int(r->g, &n->attrs, "size", size, err))
        return gir_nomem(err);
    return GIR_OK;
}

gir_status nnr_reduce_attrs(nn_reader *r, size_t idx, nn_reduce_args *a, gir_error *err)
{
    TRY(nnr_g_tuple(r, idx, "axis", false, a->axes, &a->n, err));
    TRY(nn_rd_bool(r, idx, "keepdims", false, &a->keepdims, err));
    return nn_rd_bool(r, idx, "exclude", false, &a->exclude, err);
}

gir_status nn_rd_reduce(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                        gir_error *err)
{
    const gir_op_map *d = nnr_cur_def(r, idx);
    nn_reduce_args ra;
    TRY(nnr_reduce_attrs(r, idx, &ra, err));
    int64_t *t = ra.axes;
    size_t n = ra.n;
    if (ra.exclude && n) {
        /* the axes not listed */
        int rank = nnr_rank_of(r, in[0]);
        if (rank < 0)
            return nnr_keep(r, res, err, "exclude=True on data of unknown rank (give --input-shape)");
        int64_t rest[NN_MAX_TUPLE];
        size_t m = 0;
        for (int a = 0; a < rank; a++) {
            bool listed = false;
            for (size_t i = 0; i < n; i++)
                listed = listed || t[i] == a || t[i] + rank == a;
            if (!listed)
                rest[m++] = a;
        }
        if (m == 0)
            return nnr_keep(r, res, err, "exclude=True excluding every axis (no reduction)");
        memcpy(t, rest, m * sizeof *t);
        n = m;
    }
    gir_node *nd;
    TRY(nnr_node2(r, idx, NULL, d->op, in[0], -1, &nd, &out[0], err));
    if ((n && gir_attrs_set_ints(r->g, &nd->attrs, "axes", t, n, err)) ||
        gir_attrs_set_int(r->g, &nd->attrs, "keepdims", ra.keepdims, err))
        return gir_nomem(err);
    return GIR_OK;
}

gir_status nn_rd_cast(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const char *dt;
    TRY(nnr_g_text(r, idx, "dtype", &dt, err));
    gir_dtype t = gir_dltype(dt);
    if (t == GIR_DT_UNKNOWN)
        return nnr_opaque(res);
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Cast, in[0], -1, &n, &out[0], err));
    return gir_attrs_set_string(r->g, &n->attrs, "to", gir_dtype_name(t), err) ? gir_nomem(err) : GIR_OK;
}
