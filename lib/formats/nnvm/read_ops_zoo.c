/* Reading the operators of the MXNet model zoos (detection, faces):
 * UpSampling, Crop, slice_like, slice, comparisons, where, broadcast_*,
 * fills, MultiBoxPrior and the operators refused by name (the read
 * functions read_ops.c's tables point at). */
#include "ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tuple of numbers with None entries ("(None, 1, 2.5)"): present[i] is
 * false for None; float values. */
static bool parse_opt_ftuple(const char *s, double *v, bool *present, size_t *n)
{
    *n = 0;
    if (!s)
        return false;
    while (*s == ' ')
        s++;
    char close = *s == '(' ? ')' : *s == '[' ? ']' : 0;
    if (close)
        s++;
    for (;;) {
        while (*s == ' ')
            s++;
        if (close && *s == close)
            break;
        if (!close && !*s)
            break;
        if (*n >= NN_MAX_TUPLE)
            return false;
        const char *e = s;
        while (*e && *e != ',' && *e != close)
            e++;
        char item[64];
        size_t len = (size_t)(e - s);
        while (len && s[len - 1] == ' ')
            len--;
        if (len == 0 || len >= sizeof item)
            return false;
        memcpy(item, s, len);
        item[len] = '\0';
        if (nn_is_none(item)) {
            present[*n] = false;
            v[*n] = 0;
        } else {
            if (!nn_parse_float(item, &v[*n]))
                return false;
            present[*n] = true;
        }
        (*n)++;
        s = e;
        if (*s == ',')
            s++;
    }
    return true;
}

static gir_status g_ftuple(const nn_reader *r, size_t idx, const char *key, const double *dflt, size_t dn,
                           double *v, size_t *n, gir_error *err)
{
    const char *s = nn_rd_attr(r, idx, key);
    bool present[NN_MAX_TUPLE];
    if (!s || nn_is_none(s)) {
        memcpy(v, dflt, dn * sizeof *v);
        *n = dn;
        return GIR_OK;
    }
    if (!parse_opt_ftuple(s, v, present, n))
        return nn_rd_bad_attr(r, idx, key, "a tuple of numbers", err);
    for (size_t i = 0; i < *n; i++)
        if (!present[i])
            return nn_rd_bad_attr(r, idx, key, "a tuple of numbers", err);
    return GIR_OK;
}

static gir_status resize_nearest(nn_reader *r, size_t idx, const char *sfx, int32_t x, double scale, int32_t *out,
                                 gir_error *err)
{
    gir_node *n;
    TRY(nnr_node2(r, idx, sfx, GIR_OP_Resize, x, -1, &n, out, err));
    double sc[4] = { 1, 1, scale, scale };
    if (gir_attrs_set_floats(r->g, &n->attrs, "scales", sc, 4, err) ||
        gir_attrs_set_string(r->g, &n->attrs, "mode", "nearest", err) ||
        gir_attrs_set_string(r->g, &n->attrs, "coordinate_transformation_mode", "asymmetric", err) ||
        gir_attrs_set_string(r->g, &n->attrs, "nearest_mode", "floor", err))
        return gir_nomem(err);
    return GIR_OK;
}

/* UpSampling: nearest is a Resize (several inputs: each to the first's
 * output size, then concatenated or summed); bilinear is a depthwise
 * Deconvolution with the given weight, as MXNet computes it. */
gir_status nn_rd_upsampling(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                            gir_error *err)
{
    int64_t scale, nargs, nf;
    TRY(nn_rd_int(r, idx, "scale", true, 0, &scale, err));
    if (scale < 1)
        return nn_rd_bad_attr(r, idx, "scale", "a positive integer", err);
    const char *type;
    TRY(nnr_g_text(r, idx, "sample_type", &type, err));
    TRY(nn_rd_int(r, idx, "num_args", true, 0, &nargs, err));
    TRY(nn_rd_int(r, idx, "num_filter", false, 0, &nf, err));
    const nn_node *rn = nn_rd_raw(r, idx);
    if (strcmp(type, "bilinear") == 0) {
        TRY(nnr_want_inputs(r, idx, 2, "sample_type=bilinear (data and weight)", err));
        if (nf < 1)
            return nn_rd_bad_attr(r, idx, "num_filter", "a positive integer (the channel count)", err);
        convp c = { .rank = 2, .channels = nf, .group = nf, .bias = false };
        for (size_t i = 0; i < 2; i++) {
            c.kernel[i] = 2 * scale - scale % 2;
            c.strides[i] = scale;
            c.dil[i] = 1;
            c.pads[i] = c.pads[i + 2] = scale / 2; /* ceil((scale - 1) / 2) */
        }
        return nnr_conv_common(r, idx, in, out, &c, true, err);
    }
    if (strcmp(type, "nearest") != 0)
        return nn_rd_bad_attr(r, idx, "sample_type", "nearest or bilinear", err);
    if (nargs != (int64_t)rn->n_in) {
        char what[64];
        snprintf(what, sizeof what, "the input count (%zu)", rn->n_in);
        return nn_rd_bad_attr(r, idx, "num_args", what, err);
    }
    if (nargs == 1)
        return resize_nearest(r, idx, NULL, in[0], (double)scale, &out[0], err);
    const char *mode = nn_rd_str(r, idx, "multi_input_mode", "concat");
    bool sum = strcmp(mode, "sum") == 0;
    if (!sum && strcmp(mode, "concat") != 0)
        return nn_rd_bad_attr(r, idx, "multi_input_mode", "concat or sum", err);
    const gir_shape *s0 = nnr_full_shape(r, in[0]);
    if (!s0 || s0->rank != 4)
        return nnr_keep(r, res, err, "num_args=%lld needs the inputs' shapes (give --input-shape)", (long long)nargs);
    int64_t oh = s0->dims[2] * scale;
    int32_t *ups = malloc(rn->n_in * sizeof *ups);
    if (!ups)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    for (size_t i = 0; i < rn->n_in && !st; i++) {
        const gir_shape *si = nnr_full_shape(r, in[i]);
        if (!si || si->rank != 4 || oh % si->dims[2]) {
            st = nnr_keep(r, res, err, "input %zu's size does not divide the output size (or is unknown)", i);
            break;
        }
        char sfx[32];
        snprintf(sfx, sizeof sfx, "up%zu", i);
        st = resize_nearest(r, idx, sfx, in[i], (double)(oh / si->dims[2]), &ups[i], err);
    }
    gir_node *n = NULL;
    if (!st && *res != NN_OPAQUE)
        st = nn_rd_node(r, idx, sum ? GIR_OP_Sum : GIR_OP_Concat, rn->n_in, 1, &n, err);
    if (!st && n) {
        for (size_t i = 0; i < rn->n_in; i++)
            nnr_set_in(n, i, ups[i]);
        if (!sum && gir_attrs_set_int(r->g, &n->attrs, "axis", 1, err))
            st = gir_nomem(err);
        if (!st)
            st = nn_rd_out(r, n, 0, &out[0], err);
    }
    free(ups);
    return st;
}

/* Crop: a Slice of axes 2 and 3; the size comes from h_w or the second
 * input's shape, the offset from offset or (center_crop) the middle. */
gir_status nn_rd_crop(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    int64_t nargs, t[NN_MAX_TUPLE];
    size_t n;
    bool center;
    TRY(nn_rd_int(r, idx, "num_args", true, 0, &nargs, err));
    if (nargs < 1 || nargs > 2 || nargs != (int64_t)nn_rd_raw(r, idx)->n_in)
        return nn_rd_bad_attr(r, idx, "num_args", "1 or 2, the input count", err);
    TRY(nn_rd_bool(r, idx, "center_crop", false, &center, err));
    int64_t off[2] = { 0, 0 }, hw[2] = { 0, 0 };
    TRY(nnr_g_tuple(r, idx, "offset", false, t, &n, err));
    if (n && n != 2)
        return nn_rd_bad_attr(r, idx, "offset", "a pair", err);
    if (n)
        off[0] = t[0], off[1] = t[1];
    TRY(nnr_g_tuple(r, idx, "h_w", false, t, &n, err));
    if (n && n != 2)
        return nn_rd_bad_attr(r, idx, "h_w", "a pair", err);
    if (n)
        hw[0] = t[0], hw[1] = t[1];
    if (nargs == 2) {
        const gir_shape *like = nnr_full_shape(r, in[1]);
        if (!like || like->rank != 4)
            return nnr_keep(r, res, err, "num_args=2 needs the shape of the crop_like input (give --input-shape)");
        hw[0] = like->dims[2];
        hw[1] = like->dims[3];
    } else if (hw[0] < 1 || hw[1] < 1) {
        return nn_rd_bad_attr(r, idx, "h_w", "a pair of positive sizes (num_args=1)", err);
    }
    if (center) {
        const gir_shape *xs = nnr_full_shape(r, in[0]);
        if (!xs || xs->rank != 4)
            return nnr_keep(r, res, err, "center_crop=True needs the data's shape (give --input-shape)");
        off[0] = (xs->dims[2] - hw[0]) / 2;
        off[1] = (xs->dims[3] - hw[1]) / 2;
    }
    int64_t st[2] = { off[0], off[1] }, en[2] = { off[0] + hw[0], off[1] + hw[1] }, ax[2] = { 2, 3 }, sp[2] = { 1, 1 };
    return nnr_slice_node(r, idx, in[0], st, en, ax, sp, 2, out, err);
}

/* slice_like: data sliced from 0 to the other input's size on the axes
 * given (all when none). */
gir_status nn_rd_slice_like(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                            gir_error *err)
{
    int64_t t[NN_MAX_TUPLE];
    size_t n;
    TRY(nnr_g_tuple(r, idx, "axes", false, t, &n, err));
    const gir_shape *like = nnr_full_shape(r, in[1]);
    int rank = nnr_rank_of(r, in[0]);
    if (!like || rank < 0)
        return nnr_keep(r, res, err, "the shapes of both inputs are needed (give --input-shape)");
    int64_t st[NN_MAX_TUPLE], en[NN_MAX_TUPLE], ax[NN_MAX_TUPLE], sp[NN_MAX_TUPLE];
    size_t k = 0;
    for (size_t i = 0; i < (n ? n : (size_t)rank) && i < NN_MAX_TUPLE; i++) {
        int64_t a = n ? t[i] : (int64_t)i;
        if (a < 0)
            a += rank;
        if (a < 0 || a >= rank || a >= like->rank)
            return nn_rd_bad_attr(r, idx, "axes", "axes of both inputs", err);
        st[k] = 0;
        en[k] = like->dims[a];
        ax[k] = a;
        sp[k++] = 1;
    }
    return nnr_slice_node(r, idx, in[0], st, en, ax, sp, k, out, err);
}

/* MXNet slice(begin, end, step): None is the whole axis in the direction
 * of the step. */
gir_status nn_rd_mx_slice(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                          gir_error *err)
{
    double b[NN_MAX_TUPLE], e[NN_MAX_TUPLE], s[NN_MAX_TUPLE];
    bool bp[NN_MAX_TUPLE], ep[NN_MAX_TUPLE], sp_[NN_MAX_TUPLE];
    size_t nb, ne, ns = 0;
    if (!parse_opt_ftuple(nn_rd_attr(r, idx, "begin"), b, bp, &nb))
        return nn_rd_bad_attr(r, idx, "begin", "a tuple of integers or None", err);
    if (!parse_opt_ftuple(nn_rd_attr(r, idx, "end"), e, ep, &ne) || ne != nb)
        return nn_rd_bad_attr(r, idx, "end", "a tuple of integers or None as long as begin", err);
    const char *stxt = nn_rd_attr(r, idx, "step");
    if (stxt && !nn_is_none(stxt) && (!parse_opt_ftuple(stxt, s, sp_, &ns) || (ns && ns != nb)))
        return nn_rd_bad_attr(r, idx, "step", "a tuple as long as begin", err);
    int64_t st[NN_MAX_TUPLE], en[NN_MAX_TUPLE], ax[NN_MAX_TUPLE], sp[NN_MAX_TUPLE];
    size_t k = 0;
    for (size_t i = 0; i < nb; i++) {
        int64_t step = i < ns && sp_[i] ? (int64_t)s[i] : 1;
        if (step == 0)
            return nn_rd_bad_attr(r, idx, "step", "a tuple of non-zero steps", err);
        if (!bp[i] && !ep[i] && step == 1)
            continue;
        if (step < 0 && (!bp[i] || !ep[i]))
            return nnr_keep(r, res, err, "a negative step with a None bound");
        st[k] = bp[i] ? (int64_t)b[i] : 0;
        en[k] = ep[i] ? (int64_t)e[i] : INT64_MAX;
        ax[k] = (int64_t)i;
        sp[k++] = step;
    }
    if (k == 0)
        return nnr_node2(r, idx, NULL, GIR_OP_Identity, in[0], -1, NULL, out, err);
    return nnr_slice_node(r, idx, in[0], st, en, ax, sp, k, out, err);
}

/* Comparisons give 1 or 0 in the data's type in MXNet: compare, Cast. */
gir_status nn_rd_compare(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                         gir_error *err)
{
    (void)res;
    const char *op = nn_rd_raw(r, idx)->op;
    const char *base = strncmp(op, "broadcast_", 10) == 0 ? op + 10 : op[0] == '_' ? op + 1 : op;
    bool ne = strcmp(base, "not_equal") == 0;
    gir_op c = ne || strcmp(base, "equal") == 0 ? GIR_OP_Equal
             : strcmp(base, "greater") == 0     ? GIR_OP_Greater
             : strcmp(base, "greater_equal") == 0 ? GIR_OP_GreaterOrEqual
             : strcmp(base, "lesser") == 0      ? GIR_OP_Less
                                                : GIR_OP_LessOrEqual;
    int32_t b, t;
    TRY(nnr_node2(r, idx, "cmp", c, in[0], in[1], NULL, &b, err));
    if (ne)
        TRY(nnr_node2(r, idx, "not", GIR_OP_Not, b, -1, NULL, &b, err));
    gir_node *n;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Cast, b, -1, &n, &t, err));
    const gir_value *x = nn_rd_value(r, in[0]);
    gir_dtype dt = x && x->dtype != GIR_DT_UNKNOWN ? x->dtype : GIR_DT_F32;
    if (gir_attrs_set_string(r->g, &n->attrs, "to", gir_dtype_name(dt), err))
        return gir_nomem(err);
    out[0] = t;
    return GIR_OK;
}

/* where(condition, x, y): a non-zero condition picks x; a 1-D condition
 * picks rows (axis 0), so it gets trailing unit axes. */
gir_status nn_rd_where(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                       gir_error *err)
{
    int rc = nnr_rank_of(r, in[0]), rx = nnr_rank_of(r, in[1]);
    if (rc < 0 || rx < 0)
        return nnr_keep(r, res, err, "the ranks of condition and x are needed (give --input-shape)");
    int32_t c;
    gir_node *n;
    TRY(nnr_node2(r, idx, "cond", GIR_OP_Cast, in[0], -1, &n, &c, err));
    if (gir_attrs_set_string(r->g, &n->attrs, "to", "bool", err))
        return gir_nomem(err);
    if (rc == 1 && rx > 1) {
        int64_t axes[GIR_MAX_RANK];
        for (int i = 0; i < rx - 1; i++)
            axes[i] = i + 1;
        TRY(nnr_node2(r, idx, "rows", GIR_OP_Unsqueeze, c, -1, &n, &c, err));
        if (gir_attrs_set_ints(r->g, &n->attrs, "axes", axes, (size_t)rx - 1, err))
            return gir_nomem(err);
    } else if (rc != rx) {
        return nn_rd_bad_attr(r, idx, "condition", "of x's shape or 1-D", err);
    }
    TRY(nn_rd_node(r, idx, GIR_OP_Where, 3, 1, &n, err));
    nnr_set_in(n, 0, c);
    nnr_set_in(n, 1, in[1]);
    nnr_set_in(n, 2, in[2]);
    return nn_rd_out(r, n, 0, &out[0], err);
}

/* broadcast_to(shape; 0 keeps a dimension), broadcast_axis(axis, size),
 * broadcast_like(lhs, rhs): an Expand (a 1 keeps the input's dimension
 * there, as MXNet's 0 does). */
gir_status nn_rd_bcast_to(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                          gir_error *err)
{
    const char *op = nn_rd_raw(r, idx)->op;
    int64_t dims[NN_MAX_TUPLE];
    size_t n = 0;
    if (strcmp(op, "broadcast_to") == 0) {
        TRY(nnr_g_tuple(r, idx, "shape", true, dims, &n, err));
        for (size_t i = 0; i < n; i++)
            if (dims[i] == 0)
                dims[i] = 1;
            else if (dims[i] < 0)
                return nn_rd_bad_attr(r, idx, "shape", "a tuple of sizes (0 keeps one)", err);
    } else if (strcmp(op, "broadcast_like") == 0) {
        const char *la = nn_rd_attr(r, idx, "lhs_axes"), *ra = nn_rd_attr(r, idx, "rhs_axes");
        if ((la && !nn_is_none(la) && strcmp(la, "()")) || (ra && !nn_is_none(ra) && strcmp(ra, "()")))
            return nnr_keep(r, res, err, "lhs_axes/rhs_axes");
        const gir_shape *like = nnr_full_shape(r, in[1]);
        if (!like)
            return nnr_keep(r, res, err, "the shape of rhs is needed (give --input-shape)");
        n = (size_t)like->rank;
        memcpy(dims, like->dims, n * sizeof *dims);
    } else {
        int64_t ax[NN_MAX_TUPLE], sz[NN_MAX_TUPLE];
        size_t na, ns;
        TRY(nnr_g_tuple(r, idx, "axis", false, ax, &na, err));
        TRY(nnr_g_tuple(r, idx, "size", false, sz, &ns, err));
        if (na != ns)
            return nn_rd_bad_attr(r, idx, "size", "a tuple as long as axis", err);
        int rank = nnr_rank_of(r, in[0]);
        if (rank < 0)
            return nnr_keep(r, res, err, "data of unknown rank (give --input-shape)");
        n = (size_t)rank;
        for (size_t i = 0; i < n; i++)
            dims[i] = 1;
        for (size_t i = 0; i < na; i++) {
            int64_t a = ax[i] < 0 ? ax[i] + rank : ax[i];
            if (a < 0 || a >= rank || sz[i] < 1)
                return nn_rd_bad_attr(r, idx, "axis", "axes of the data with positive sizes", err);
            dims[a] = sz[i];
        }
    }
    gir_node *nd;
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Expand, in[0], -1, &nd, out, err));
    if (gir_attrs_set_ints(r->g, &nd->attrs, "shape", dims, n, err))
        return gir_nomem(err);
    return GIR_OK;
}

/* A raw node that is a constant once shapes are known: its value gets the
 * node's name. */
static gir_status named_const(nn_reader *r, size_t idx, const gir_shape *s, float v, const float *data, int32_t *out,
                              gir_error *err)
{
    gir_tensor *t;
    TRY(gir_tensor_new(GIR_DT_F32, s, &t, err));
    float *p = t->data;
    size_t n = (size_t)(t->nbytes / 4);
    for (size_t i = 0; i < n; i++)
        p[i] = data ? data[i] : v;
    return gir_graph_add_const_named(r->g, t, out, err, "%s", nn_rd_raw(r, idx)->name);
}

/* _zeros, _ones (shape attribute), zeros_like, ones_like (an input's). */
gir_status nn_rd_fill(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const char *op = nn_rd_raw(r, idx)->op;
    float v = strstr(op, "ones") ? 1.0f : 0.0f;
    gir_shape s = { .rank = 0 };
    if (strstr(op, "_like")) {
        const gir_shape *xs = nnr_full_shape(r, in[0]);
        if (!xs)
            return nnr_keep(r, res, err, "the input's shape is needed (give --input-shape)");
        const gir_value *x = nn_rd_value(r, in[0]);
        if (x->dtype != GIR_DT_F32 && x->dtype != GIR_DT_UNKNOWN)
            return nnr_keep(r, res, err, "an input of type %s", gir_dtype_name(x->dtype));
        s = *xs;
    } else {
        int64_t t[NN_MAX_TUPLE];
        size_t n;
        TRY(nnr_g_tuple(r, idx, "shape", false, t, &n, err));
        const char *dt = nn_rd_attr(r, idx, "dtype");
        if (dt && strcmp(dt, "float32") != 0)
            return nnr_keep(r, res, err, "dtype=%s", dt);
        if (n > GIR_MAX_RANK)
            return nn_rd_bad_attr(r, idx, "shape", "a shape of at most 8 dimensions", err);
        for (size_t i = 0; i < n; i++) {
            if (t[i] < 1)
                return nnr_keep(r, res, err, "shape=%s with unknown (0) dimensions", nn_rd_attr(r, idx, "shape"));
            s.dims[i] = t[i];
        }
        s.rank = (int)n;
    }
    return named_const(r, idx, &s, v, NULL, out, err);
}

/* _contrib_MultiBoxPrior: anchor boxes (xmin, ymin, xmax, ymax) for every
 * cell of the input's feature map, a constant once its size is known. */
gir_status nn_rd_multibox_prior(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                gir_error *err)
{
    static const double one[] = { 1.0 }, steps_d[] = { -1.0, -1.0 }, offs_d[] = { 0.5, 0.5 };
    double sizes[NN_MAX_TUPLE], ratios[NN_MAX_TUPLE], steps[NN_MAX_TUPLE], offs[NN_MAX_TUPLE];
    size_t ns, nr, nst, no;
    bool clip;
    TRY(g_ftuple(r, idx, "sizes", one, 1, sizes, &ns, err));
    TRY(g_ftuple(r, idx, "ratios", one, 1, ratios, &nr, err));
    TRY(g_ftuple(r, idx, "steps", steps_d, 2, steps, &nst, err));
    TRY(g_ftuple(r, idx, "offsets", offs_d, 2, offs, &no, err));
    TRY(nn_rd_bool(r, idx, "clip", false, &clip, err));
    if (ns < 1)
        return nn_rd_bad_attr(r, idx, "sizes", "a non-empty tuple", err);
    if (nr < 1)
        return nn_rd_bad_attr(r, idx, "ratios", "a non-empty tuple", err);
    if (nst != 2)
        return nn_rd_bad_attr(r, idx, "steps", "a pair (y, x)", err);
    if (no != 2)
        return nn_rd_bad_attr(r, idx, "offsets", "a pair (y, x)", err);
    for (size_t i = 0; i < nr; i++)
        if (!(ratios[i] > 0))
            return nn_rd_bad_attr(r, idx, "ratios", "a tuple of positive ratios", err);
    const gir_shape *xs = nnr_full_shape(r, in[0]);
    if (!xs || xs->rank != 4)
        return nnr_keep(r, res, err, "the input's shape is needed (give --input-shape)");
    int64_t h = xs->dims[2], w = xs->dims[3], per = (int64_t)(ns + nr - 1);
    if (h * w * per > (int64_t)1 << 26)
        return nnr_keep(r, res, err, "%lld anchors is too many to hold as a constant", (long long)(h * w * per));
    gir_shape s = { .rank = 3, .dims = { 1, h * w * per, 4 } };
    float *box = malloc((size_t)(h * w * per * 4) * sizeof *box);
    if (!box)
        return gir_nomem(err);
    float sy = steps[0] > 0 ? (float)steps[0] : 1.0f / (float)h, sx = steps[1] > 0 ? (float)steps[1] : 1.0f / (float)w;
    float *p = box;
    for (int64_t y = 0; y < h; y++) {
        float cy = ((float)y + (float)offs[0]) * sy;
        for (int64_t x = 0; x < w; x++) {
            float cx = ((float)x + (float)offs[1]) * sx;
            for (size_t k = 0; k < ns + nr - 1; k++) {
                float size = (float)sizes[k < ns ? k : 0];
                float ratio = k < ns ? 1.0f : sqrtf((float)ratios[k - ns + 1]);
                float bw = size * (float)h / (float)w * ratio / 2, bh = size / ratio / 2;
                p[0] = cx - bw;
                p[1] = cy - bh;
                p[2] = cx + bw;
                p[3] = cy + bh;
                for (int j = 0; clip && j < 4; j++)
                    p[j] = p[j] < 0 ? 0 : p[j] > 1 ? 1 : p[j];
                p += 4;
            }
        }
    }
    gir_status st = named_const(r, idx, &s, 0, box, out, err);
    free(box);
    return st;
}

/* Operators with no inference form or no canonical counterpart, refused by
 * name when written elsewhere (kept verbatim for MXNet). */
gir_status nn_rd_refused(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                         gir_error *err)
{
    (void)in;
    (void)out;
    const char *op = nn_rd_raw(r, idx)->op;
    const char *why = strcmp(op, "_foreach") == 0 || strcmp(op, "_while_loop") == 0 || strcmp(op, "_cond") == 0
                          ? "a control-flow operator with a subgraph"
                      : strcmp(op, "WarpCTC") == 0 ? "a training loss (CTC) with no inference form"
                      : strcmp(op, "_contrib_MultiBoxDetection") == 0
                          ? "box decoding with non-maximum suppression, which no canonical operator computes"
                          : "no canonical counterpart";
    return nnr_keep(r, res, err, "%s", why);
}

/* NNVM upsampling(scale, layout, method): nearest neighbour in NCHW. */
gir_status nn_rd_upsampling_nnvm(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                                 gir_error *err)
{
    int64_t scale;
    TRY(nn_rd_int(r, idx, "scale", true, 0, &scale, err));
    if (scale < 1)
        return nn_rd_bad_attr(r, idx, "scale", "a positive integer", err);
    const char *layout = nn_rd_str(r, idx, "layout", "NCHW"), *method = nn_rd_str(r, idx, "method", "NEAREST_NEIGHBOR");
    if (strcmp(layout, "NCHW") != 0)
        return nnr_keep(r, res, err, "layout=%s", layout);
    if (strcmp(method, "NEAREST_NEIGHBOR") != 0 && strcmp(method, "nearest_neighbor") != 0)
        return nnr_keep(r, res, err, "method=%s", method);
    return resize_nearest(r, idx, NULL, in[0], (double)scale, &out[0], err);
}

gir_status nn_rd_argmax(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res,
                        gir_error *err)
{
    const gir_op_map *d = nnr_cur_def(r, idx);
    nn_reduce_args ra;
    TRY(nnr_reduce_attrs(r, idx, &ra, err));
    const int64_t *t = ra.axes;
    if (ra.n != 1 || ra.exclude)
        return nnr_keep(r, res, err, "an index over every axis, several axes or the axes not listed");
    if (r->fl == NN_MXNET && r->mx_version > 0 && r->mx_version < 904 && t[0] == -1)
        return nnr_keep(r, res, err, "axis=-1 before MXNet 0.9.4 (the index over every axis)");
    gir_dtype it = GIR_DT_F32; /* MXNet's indices are float32 */
    if (r->fl != NN_MXNET) {
        const char *dt = nn_rd_attr(r, idx, "dtype");
        it = dt ? gir_dltype(dt) : GIR_DT_I32;
        if (it == GIR_DT_UNKNOWN)
            return nnr_keep(r, res, err, "indices of an unknown dtype");
    }
    gir_node *am, *c;
    int32_t a;
    TRY(nnr_node2(r, idx, "index", d->op, in[0], -1, &am, &a, err));
    if (gir_attrs_set_int(r->g, &am->attrs, "axis", t[0], err) ||
        gir_attrs_set_int(r->g, &am->attrs, "keepdims", ra.keepdims, err))
        return gir_nomem(err);
    TRY(nnr_node2(r, idx, NULL, GIR_OP_Cast, a, -1, &c, &out[0], err));
    if (gir_attrs_set_string(r->g, &c->attrs, "to", gir_dtype_name(it), err))
        return gir_nomem(err);
    return GIR_OK;
}
