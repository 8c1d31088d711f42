/* Shape and dtype inference: elementwise operators, convolution and
 * pooling, the other neural-network layers and the recurrent layers. */
#include "opinfer.h"
#include "rnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== elementwise ========================================================== */

gir_status infer_same(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    ish s;
    TRY(oi_input_shape(g, n, 0, &x, &s, err));
    return oi_set_out(g, n, 0, x->dtype, &s, err);
}

gir_status infer_Not(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    TRY(oi_need_dtype(n, x, 0, x->dtype == GIR_DT_BOOL, "bool", err));
    ish s;
    oi_ish_of(x, &s);
    return oi_set_out(g, n, 0, GIR_DT_BOOL, &s, err);
}

gir_status infer_Cast(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    const char *to = gir_node_string(n, "to", NULL);
    TRY(oi_need_attr(n, "to", to != NULL, err));
    gir_dtype dt = gir_dtype_from_name(to);
    if (dt == GIR_DT_UNKNOWN)
        return gir_fail(err, GIR_E_ATTRIBUTE, "Cast attribute 'to' is '%s', not a data type name", to);
    ish s;
    oi_ish_of(x, &s);
    return oi_set_out(g, n, 0, dt, &s, err);
}

gir_status infer_PRelu(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x, *slope;
    gir_dtype dt;
    ish xs, ss;
    TRY(oi_two_inputs(g, n, &x, &slope, &dt, &xs, &ss, err));
    TRY(oi_bcast_to(n, &xs, &ss, "slope", err));
    return oi_set_out(g, n, 0, dt, &xs, err);
}

/* Broadcasts every input; the output dtype is `out` or, when unknown, the
 * inputs' common dtype. */
static gir_status broadcast_all(gir_graph *g, gir_node *n, bool same_type, gir_dtype out, gir_error *err)
{
    if (n->n_in == 0)
        return gir_fail(err, GIR_E_REFERENCE, "%s has no inputs", OPN(n));
    gir_dtype dt = GIR_DT_UNKNOWN;
    if (same_type)
        TRY(oi_same_dtype(g, n, 0, n->n_in, &dt, err));
    ish acc;
    for (size_t i = 0; i < n->n_in; i++) {
        const gir_value *v;
        TRY(oi_input(g, n, i, &v, err));
        ish s;
        oi_ish_of(v, &s);
        if (i == 0)
            acc = s;
        else
            TRY(oi_bcast(n, &acc, &s, &acc, err));
    }
    if (out == GIR_DT_UNKNOWN)
        out = same_type ? dt : gir_in(g, n, 0)->dtype;
    return oi_set_out(g, n, 0, out, &acc, err);
}

gir_status infer_broadcast(gir_graph *g, gir_node *n, gir_error *err)
{
    return broadcast_all(g, n, true, GIR_DT_UNKNOWN, err);
}

/* Pow: base and exponent may differ in type; the result has the base's. */
gir_status infer_Pow(gir_graph *g, gir_node *n, gir_error *err)
{
    return broadcast_all(g, n, false, GIR_DT_UNKNOWN, err);
}

gir_status infer_compare(gir_graph *g, gir_node *n, gir_error *err)
{
    return broadcast_all(g, n, true, GIR_DT_BOOL, err);
}

gir_status infer_logic(gir_graph *g, gir_node *n, gir_error *err)
{
    for (size_t i = 0; i < n->n_in; i++) {
        const gir_value *v;
        TRY(oi_input(g, n, i, &v, err));
        TRY(oi_need_dtype(n, v, i, v->dtype == GIR_DT_BOOL, "bool", err));
    }
    return broadcast_all(g, n, true, GIR_DT_BOOL, err);
}

gir_status infer_Where(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *c, *x, *y;
    TRY(oi_input(g, n, 0, &c, err));
    TRY(oi_input(g, n, 1, &x, err));
    TRY(oi_input(g, n, 2, &y, err));
    TRY(oi_need_dtype(n, c, 0, c->dtype == GIR_DT_BOOL, "bool", err));
    gir_dtype dt;
    TRY(oi_same_dtype(g, n, 1, 3, &dt, err));
    ish cs, xs, ys, o;
    oi_ish_of(c, &cs);
    oi_ish_of(x, &xs);
    oi_ish_of(y, &ys);
    TRY(oi_bcast(n, &cs, &xs, &o, err));
    TRY(oi_bcast(n, &o, &ys, &o, err));
    return oi_set_out(g, n, 0, dt, &o, err);
}

/* ==== convolution and pooling ============================================ */

/* The attributes convolution and pooling read, found in one walk over the
 * node's list (a typed getter per name would walk it once each). */
enum {
    WA_AUTO_PAD,
    WA_CEIL_MODE,
    WA_DILATIONS,
    WA_GROUP,
    WA_KERNEL_SHAPE,
    WA_OUTPUT_PADDING,
    WA_OUTPUT_SHAPE,
    WA_PADS,
    WA_STRIDES,
    WA_COUNT_
};
static const char *const window_attr_names[WA_COUNT_] = {
    [WA_AUTO_PAD] = "auto_pad",         [WA_CEIL_MODE] = "ceil_mode",         [WA_DILATIONS] = "dilations",
    [WA_GROUP] = "group",               [WA_KERNEL_SHAPE] = "kernel_shape",   [WA_OUTPUT_PADDING] = "output_padding",
    [WA_OUTPUT_SHAPE] = "output_shape", [WA_PADS] = "pads",                   [WA_STRIDES] = "strides",
};

/* auto_pad, in the order of oi_ch_auto_pad. */
typedef enum pad_mode { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } pad_mode;

/* The window parameters of a convolution or pooling node. */
typedef struct window {
    const gir_attr *at[WA_COUNT_]; /* by WA_*, NULL when absent */
    int r; /* spatial rank */
    int64_t k[GIR_MAX_RANK], s[GIR_MAX_RANK], d[GIR_MAX_RANK], pb[GIR_MAX_RANK], pe[GIR_MAX_RANK];
    pad_mode pad;
    bool ceil_mode;
} window;

static void window_attrs(const gir_node *n, window *w)
{
    oi_find_attrs(n, window_attr_names, WA_COUNT_, w->at);
}

/* Reads INTS attribute `attr` (w->at[which]) with `want` values, each >=
 * minv, into out; absent gives dflt everywhere. */
static inline gir_status window_list(const gir_node *n, const window *w, int which, int want, const char *why,
                                     int64_t minv, int64_t dflt, int64_t *out, gir_error *err)
{
    const char *attr = window_attr_names[which];
    const int64_t *v;
    ptrdiff_t len = ints_of(w->at[which], &v);
    if (len < 0) {
        for (int i = 0; i < want; i++)
            out[i] = dflt;
        return GIR_OK;
    }
    TRY(oi_list_len(n, attr, len, want, why, err));
    for (int i = 0; i < want; i++) {
        if (v[i] < minv)
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute '%s' has value %lld, expected %lld or more", OPN(n),
                            attr, (ll)v[i], (ll)minv);
        out[i] = v[i];
    }
    return GIR_OK;
}

/* Reads strides, dilations (when the op has them), pads, auto_pad and
 * ceil_mode for r spatial axes (window_attrs found them).  Kernel sizes are
 * the caller's. */
static gir_status window_read(const gir_node *n, int r, bool has_dilations, window *w, gir_error *err)
{
    int64_t pads[2 * GIR_MAX_RANK];
    w->r = r;
    TRY(window_list(n, w, WA_STRIDES, r, "one per spatial axis", 1, 1, w->s, err));
    if (has_dilations)
        TRY(window_list(n, w, WA_DILATIONS, r, "one per spatial axis", 1, 1, w->d, err));
    else
        for (int i = 0; i < r; i++)
            w->d[i] = 1;
    TRY(window_list(n, w, WA_PADS, 2 * r, "begins then ends of each spatial axis", 0, 0, pads, err));
    for (int i = 0; i < r; i++) {
        w->pb[i] = pads[i];
        w->pe[i] = pads[r + i];
    }
    const char *auto_pad = string_of(w->at[WA_AUTO_PAD], "NOTSET");
    int mode = oi_choice_index(oi_ch_auto_pad, auto_pad);
    if (mode < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'auto_pad' is '%s', expected NOTSET, SAME_UPPER, "
                        "SAME_LOWER or VALID", OPN(n), auto_pad);
    w->pad = (pad_mode)mode;
    if (w->pad == PAD_VALID)
        for (int i = 0; i < r; i++)
            w->pb[i] = w->pe[i] = 0;
    w->ceil_mode = int_of(w->at[WA_CEIL_MODE], 0) != 0;
    return GIR_OK;
}

static bool is_same_pad(const window *w) { return w->pad == PAD_SAME_UPPER || w->pad == PAD_SAME_LOWER; }

/* Output extent of a sliding window along spatial axis i (-1 when unknown). */
static gir_status window_out(const gir_node *n, const window *w, int i, int64_t in, int64_t *out, gir_error *err)
{
    *out = -1;
    if (in < 0)
        return GIR_OK;
    int64_t s = w->s[i];
    if (is_same_pad(w)) {
        *out = in / s + (in % s != 0);
        return GIR_OK;
    }
    if (w->k[i] < 0)
        return GIR_OK;
    int64_t ek, padded;
    if (!mul_ok(w->k[i] - 1, w->d[i], &ek) || !add_ok(ek, 1, &ek) || !add_ok(in, w->pb[i], &padded) ||
        !add_ok(padded, w->pe[i], &padded))
        return oi_too_large(n, err);
    if (padded < ek)
        return gir_fail(err, GIR_E_ATTRIBUTE,
                        "%s kernel extent %lld on spatial axis %d is larger than the padded input extent %lld",
                        OPN(n), (ll)ek, i, (ll)padded);
    int64_t span = padded - ek, o = span / s + 1;
    if (w->ceil_mode && span % s != 0) {
        o++;
        /* The last window must start inside the input or its begin padding. */
        int64_t lim = in + w->pb[i]; /* (o - 1) * s >= lim, without overflow */
        if (lim == 0 || o - 1 > (lim - 1) / s)
            o--;
    }
    *out = o;
    return GIR_OK;
}

/* Spatial rank from the ranks of X and W and the length of kernel_shape. */
static gir_status conv_rank(const gir_node *n, const ish *xs, const ish *ws, ptrdiff_t nk, int *r, gir_error *err)
{
    *r = -1;
    if (xs->s.rank >= 0) {
        if (xs->s.rank < 3)
            return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 3 or more (batch, channels, spatial axes), "
                            "found %s", OPN(n), SHP(&xs->s));
        *r = xs->s.rank - 2;
    }
    if (ws && ws->s.rank >= 0) {
        if (ws->s.rank < 3 || (*r >= 0 && ws->s.rank - 2 != *r))
            return gir_fail(err, GIR_E_SHAPE, "%s weight W %s does not match input X %s (expected rank %d)",
                            OPN(n), SHP(&ws->s), SHP(&xs->s), *r >= 0 ? *r + 2 : 3);
        *r = ws->s.rank - 2;
    }
    if (nk >= 0) {
        if (nk > GIR_MAX_RANK - 2)
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'kernel_shape' has %td values, more than the %d "
                            "spatial axes a tensor can have", OPN(n), nk, GIR_MAX_RANK - 2);
        if (nk == 0 || (*r >= 0 && nk != *r))
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'kernel_shape' has %td values, expected %d (one per "
                            "spatial axis)", OPN(n), nk, *r >= 0 ? *r : 1);
        *r = (int)nk;
    }
    return GIR_OK;
}

/* Kernel sizes: kernel_shape if present (it must agree with W), else W's. */
static gir_status conv_kernel(const gir_node *n, const ish *ws, window *w, gir_error *err)
{
    const int64_t *ks;
    ptrdiff_t nk = ints_of(w->at[WA_KERNEL_SHAPE], &ks);
    for (int i = 0; i < w->r; i++) {
        int64_t wd = ws->s.rank == w->r + 2 ? ws->s.dims[2 + i] : -1;
        if (nk < 0) {
            w->k[i] = wd;
            continue;
        }
        if (ks[i] < 1)
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'kernel_shape' has value %lld, expected 1 or more",
                            OPN(n), (ll)ks[i]);
        if (wd >= 0 && wd != ks[i]) {
            gir_shape k = { .rank = (int)nk };
            memcpy(k.dims, ks, (size_t)nk * sizeof *ks);
            return gir_fail(err, GIR_E_SHAPE, "%s kernel_shape %s disagrees with weight W %s", OPN(n), SHP(&k),
                            SHP(&ws->s));
        }
        w->k[i] = ks[i];
    }
    return GIR_OK;
}

static gir_status group_of(const gir_node *n, const window *w, int64_t *group, gir_error *err)
{
    *group = int_of(w->at[WA_GROUP], 1);
    if (*group < 1)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'group' is %lld, expected 1 or more", OPN(n),
                        (ll)*group);
    return GIR_OK;
}

static gir_status divides(const gir_node *n, int64_t group, int64_t ch, const char *what, gir_error *err)
{
    if (ch >= 0 && ch % group != 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s group %lld does not divide the %lld %s channels", OPN(n),
                        (ll)group, (ll)ch, what);
    return GIR_OK;
}

/* A bias B of shape [m] (optional input 2). */
static gir_status check_bias(const gir_graph *g, const gir_node *n, int64_t m, gir_error *err)
{
    const gir_value *b = gir_in(g, n, 2);
    if (!b || b->shape.rank < 0)
        return GIR_OK;
    if (b->shape.rank != 1 || (m >= 0 && b->shape.dims[0] >= 0 && b->shape.dims[0] != m))
        return gir_fail(err, GIR_E_SHAPE, "%s bias B has shape %s, expected [%lld] (one value per output channel)",
                        OPN(n), SHP(&b->shape), (ll)m);
    return GIR_OK;
}

/* What Conv and ConvTranspose read alike: X and W with their common dtype,
 * the window attributes, the spatial rank, group, strides, dilations, pads
 * and kernel. */
typedef struct conv_in {
    gir_dtype dt;
    ish xs, ws;
    window w;
    int64_t group;
} conv_in;

/* Reads c; when the spatial rank is unknown, sets the output unknown and
 * *done. */
static gir_status conv_begin(gir_graph *g, gir_node *n, conv_in *c, bool *done, gir_error *err)
{
    const gir_value *x, *wv;
    *done = false;
    TRY(oi_input(g, n, 0, &x, err));
    TRY(oi_input(g, n, 1, &wv, err));
    TRY(oi_same_dtype(g, n, 0, n->n_in, &c->dt, err));
    oi_ish_of(x, &c->xs);
    oi_ish_of(wv, &c->ws);
    const int64_t *ks;
    window_attrs(n, &c->w);
    TRY(conv_rank(n, &c->xs, &c->ws, ints_of(c->w.at[WA_KERNEL_SHAPE], &ks), &c->w.r, err));
    if (c->w.r < 0) {
        *done = true;
        return oi_set_unknown(g, n, 0, c->dt, err);
    }
    TRY(group_of(n, &c->w, &c->group, err));
    TRY(window_read(n, c->w.r, true, &c->w, err));
    return conv_kernel(n, &c->ws, &c->w, err);
}

/* Dimension i of s, or -1 where its rank is unknown. */
static int64_t known_dim(const ish *s, int i)
{
    return s->s.rank >= 0 ? s->s.dims[i] : -1;
}

/* What sets Conv and ConvTranspose apart: from what conv_begin read, the
 * output channels *m (after the bias is checked against them) and the
 * spatial output dimensions d. */
typedef gir_status (*conv_dims_fn)(const gir_graph *g, const gir_node *n, const conv_in *cv, int64_t *m, int64_t *d,
                                   gir_error *err);

/* Output 0 of a convolution: X's batch axis (with its name), m channels,
 * the spatial dimensions f gives. */
static gir_status infer_conv_with(gir_graph *g, gir_node *n, conv_dims_fn f, gir_error *err)
{
    conv_in cv;
    bool done;
    TRY(conv_begin(g, n, &cv, &done, err));
    if (done)
        return GIR_OK;
    int64_t m, d[GIR_MAX_RANK];
    TRY(f(g, n, &cv, &m, d, err));
    ish o;
    ish_rank(&o, 0);
    ish_push(&o, known_dim(&cv.xs, 0), cv.xs.s.rank >= 0 ? cv.xs.nm[0] : NULL);
    ish_push(&o, m, NULL);
    for (int i = 0; i < cv.w.r; i++)
        ish_push(&o, d[i], NULL);
    return oi_set_out(g, n, 0, cv.dt, &o, err);
}

static gir_status conv_dims(const gir_graph *g, const gir_node *n, const conv_in *cv, int64_t *m, int64_t *d,
                            gir_error *err)
{
    int64_t c = known_dim(&cv->xs, 1), wc = known_dim(&cv->ws, 1), need;
    *m = known_dim(&cv->ws, 0);
    TRY(divides(n, cv->group, c, "input", err));
    TRY(divides(n, cv->group, *m, "output", err));
    if (c >= 0 && wc >= 0 && (!mul_ok(wc, cv->group, &need) || need != c))
        return gir_fail(err, GIR_E_SHAPE, "%s input X %s has %lld channels but weight W %s expects %lld x group %lld",
                        OPN(n), SHP(&cv->xs.s), (ll)c, SHP(&cv->ws.s), (ll)wc, (ll)cv->group);
    TRY(check_bias(g, n, *m, err));
    for (int i = 0; i < cv->w.r; i++)
        TRY(window_out(n, &cv->w, i, known_dim(&cv->xs, 2 + i), &d[i], err));
    return GIR_OK;
}

static gir_status conv_transpose_dims(const gir_graph *g, const gir_node *n, const conv_in *cv, int64_t *m,
                                      int64_t *dims, gir_error *err)
{
    int64_t outpad[GIR_MAX_RANK];
    TRY(window_list(n, &cv->w, WA_OUTPUT_PADDING, cv->w.r, "one per spatial axis", 0, 0, outpad, err));
    for (int i = 0; i < cv->w.r; i++)
        if (outpad[i] >= cv->w.s[i] && outpad[i] >= cv->w.d[i])
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s output_padding %lld on spatial axis %d is not less than the "
                            "stride %lld or the dilation %lld", OPN(n), (ll)outpad[i], i, (ll)cv->w.s[i],
                            (ll)cv->w.d[i]);
    const int64_t *os;
    ptrdiff_t nos = ints_of(cv->w.at[WA_OUTPUT_SHAPE], &os);
    if (nos >= 0)
        TRY(oi_list_len(n, "output_shape", nos, cv->w.r, "one per spatial axis", err));
    /* X is [N, C, ...], W is [C, M / group, k...]. */
    int64_t c = known_dim(&cv->xs, 1), wc = known_dim(&cv->ws, 0), mg = known_dim(&cv->ws, 1);
    *m = -1;
    TRY(divides(n, cv->group, c, "input", err));
    if (c >= 0 && wc >= 0 && c != wc)
        return gir_fail(err, GIR_E_SHAPE, "%s input X %s has %lld channels but weight W %s expects %lld", OPN(n),
                        SHP(&cv->xs.s), (ll)c, SHP(&cv->ws.s), (ll)wc);
    if (mg >= 0 && !mul_ok(mg, cv->group, m))
        return oi_too_large(n, err);
    TRY(check_bias(g, n, *m, err));
    const window *w = &cv->w;
    for (int i = 0; i < w->r; i++) {
        int64_t in = known_dim(&cv->xs, 2 + i), d = -1, t;
        if (nos >= 0) {
            d = os[i];
        } else if (in >= 0 && is_same_pad(w)) {
            if (!mul_ok(in, w->s[i], &d))
                return oi_too_large(n, err);
        } else if (in >= 0 && w->k[i] >= 0) {
            /* stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads */
            if (in < 1 || !mul_ok(w->s[i], in - 1, &d) || !add_ok(d, outpad[i], &d) ||
                !mul_ok(w->k[i] - 1, w->d[i], &t) || !add_ok(t, 1, &t) || !add_ok(d, t, &d) ||
                !add_ok(w->pb[i], w->pe[i], &t))
                return in < 1 ? gir_fail(err, GIR_E_SHAPE, "%s input X %s has an empty spatial axis", OPN(n),
                                         SHP(&cv->xs.s))
                              : oi_too_large(n, err);
            if (d - t < 1)
                return gir_fail(err, GIR_E_ATTRIBUTE, "%s pads %lld + %lld on spatial axis %d leave no output "
                                "(unpadded extent %lld)", OPN(n), (ll)w->pb[i], (ll)w->pe[i], i, (ll)d);
            d -= t;
        }
        dims[i] = d;
    }
    return GIR_OK;
}

gir_status infer_Conv(gir_graph *g, gir_node *n, gir_error *err)
{
    return infer_conv_with(g, n, conv_dims, err);
}

gir_status infer_ConvTranspose(gir_graph *g, gir_node *n, gir_error *err)
{
    return infer_conv_with(g, n, conv_transpose_dims, err);
}

gir_status infer_pool(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    ish xs, o;
    TRY(oi_input_shape(g, n, 0, &x, &xs, err));
    window w;
    window_attrs(n, &w);
    const int64_t *ks;
    ptrdiff_t nk = ints_of(w.at[WA_KERNEL_SHAPE], &ks);
    TRY(oi_need_attr(n, "kernel_shape", nk >= 0, err));
    TRY(conv_rank(n, &xs, NULL, nk, &w.r, err));
    TRY(window_read(n, w.r, n->op == GIR_OP_MaxPool, &w, err));
    TRY(window_list(n, &w, WA_KERNEL_SHAPE, w.r, "one per spatial axis", 1, 1, w.k, err));
    if (xs.s.rank < 0) {
        ish_unknown(&o);
    } else {
        ish_rank(&o, 0);
        ish_push(&o, xs.s.dims[0], xs.nm[0]);
        ish_push(&o, xs.s.dims[1], xs.nm[1]);
        for (int i = 0; i < w.r; i++) {
            int64_t d;
            TRY(window_out(n, &w, i, xs.s.dims[2 + i], &d, err));
            ish_push(&o, d, NULL);
        }
    }
    TRY(oi_set_out(g, n, 0, x->dtype, &o, err));
    return oi_set_out(g, n, 1, GIR_DT_I64, &o, err); /* MaxPool's Indices */
}

gir_status infer_global_pool(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    ish xs;
    TRY(oi_input_shape(g, n, 0, &x, &xs, err));
    if (xs.s.rank >= 0) {
        if (xs.s.rank < 3)
            return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 3 or more (batch, channels, spatial axes), "
                            "found %s", OPN(n), SHP(&xs.s));
        for (int i = 2; i < xs.s.rank; i++) {
            xs.s.dims[i] = 1;
            xs.nm[i] = NULL;
        }
    }
    return oi_set_out(g, n, 0, x->dtype, &xs, err);
}

/* ==== other neural-network ops ============================================ */

gir_status infer_Gemm(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *a, *b, *c = gir_in(g, n, 2);
    TRY(oi_input(g, n, 0, &a, err));
    TRY(oi_input(g, n, 1, &b, err));
    gir_dtype dt;
    TRY(oi_same_dtype(g, n, 0, n->n_in, &dt, err));
    ish as, bs, cs, o;
    oi_ish_of(a, &as);
    oi_ish_of(b, &bs);
    if (as.s.rank >= 0 && as.s.rank != 2)
        return gir_fail(err, GIR_E_SHAPE, "Gemm input A must be a matrix, found %s", SHP(&as.s));
    if (bs.s.rank >= 0 && bs.s.rank != 2)
        return gir_fail(err, GIR_E_SHAPE, "Gemm input B must be a matrix, found %s", SHP(&bs.s));
    bool ta = gir_node_int(n, "transA", 0) != 0, tb = gir_node_int(n, "transB", 0) != 0;
    int64_t m = -1, k1 = -1, k2 = -1, nn = -1;
    const char *mname = NULL, *nname = NULL;
    if (as.s.rank == 2) {
        m = as.s.dims[ta ? 1 : 0];
        mname = as.nm[ta ? 1 : 0];
        k1 = as.s.dims[ta ? 0 : 1];
    }
    if (bs.s.rank == 2) {
        k2 = bs.s.dims[tb ? 1 : 0];
        nn = bs.s.dims[tb ? 0 : 1];
        nname = bs.nm[tb ? 0 : 1];
    }
    if (k1 >= 0 && k2 >= 0 && k1 != k2)
        return gir_fail(err, GIR_E_SHAPE, "Gemm inner dimensions differ: A %s%s and B %s%s", SHP(&as.s),
                        ta ? " (transposed)" : "", SHP(&bs.s), tb ? " (transposed)" : "");
    ish_rank(&o, 0);
    ish_push(&o, m, mname);
    ish_push(&o, nn, nname);
    if (c) {
        oi_ish_of(c, &cs);
        TRY(oi_bcast_to(n, &o, &cs, "C", err));
    }
    return oi_set_out(g, n, 0, dt, &o, err);
}

gir_status infer_MatMul(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *a, *b;
    gir_dtype dt;
    ish as, bs, o;
    TRY(oi_two_inputs(g, n, &a, &b, &dt, &as, &bs, err));
    if (as.s.rank == 0 || bs.s.rank == 0)
        return gir_fail(err, GIR_E_SHAPE, "MatMul inputs must have rank 1 or more, found %s and %s", SHP(&as.s),
                        SHP(&bs.s));
    if (as.s.rank < 0 || bs.s.rank < 0)
        return oi_set_unknown(g, n, 0, dt, err);
    int ra = as.s.rank, rb = bs.s.rank;
    int64_t ka = as.s.dims[ra - 1], kb = bs.s.dims[rb == 1 ? 0 : rb - 2];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return gir_fail(err, GIR_E_SHAPE, "MatMul inner dimensions differ: %s and %s", SHP(&as.s), SHP(&bs.s));
    /* Batch dimensions broadcast. */
    ish ba, bb;
    ish_rank(&ba, ra > 2 ? ra - 2 : 0);
    ish_rank(&bb, rb > 2 ? rb - 2 : 0);
    for (int i = 0; i < ba.s.rank; i++) {
        ba.s.dims[i] = as.s.dims[i];
        ba.nm[i] = as.nm[i];
    }
    for (int i = 0; i < bb.s.rank; i++) {
        bb.s.dims[i] = bs.s.dims[i];
        bb.nm[i] = bs.nm[i];
    }
    if (oi_bcast(n, &ba, &bb, &o, NULL) != GIR_OK)
        return gir_fail(err, GIR_E_SHAPE, "MatMul cannot broadcast the batch dimensions of %s and %s", SHP(&as.s),
                        SHP(&bs.s));
    if (ra >= 2)
        ish_push(&o, as.s.dims[ra - 2], as.nm[ra - 2]);
    if (rb >= 2)
        ish_push(&o, bs.s.dims[rb - 1], bs.nm[rb - 1]);
    return oi_set_out(g, n, 0, dt, &o, err);
}

/* Inputs [from, to) must be vectors of one value per channel of X. */
static gir_status per_channel(const gir_graph *g, const gir_node *n, const ish *xs, size_t from, size_t to,
                              gir_error *err)
{
    if (xs->s.rank >= 0 && xs->s.rank < 2)
        return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 2 or more (batch, channels, ...), found %s",
                        OPN(n), SHP(&xs->s));
    int64_t c = xs->s.rank >= 2 ? xs->s.dims[1] : -1;
    for (size_t i = from; i < to; i++) {
        const gir_value *v;
        TRY(oi_input(g, n, i, &v, err));
        if (v->shape.rank < 0)
            continue;
        if (v->shape.rank != 1 || (c >= 0 && v->shape.dims[0] >= 0 && v->shape.dims[0] != c)) {
            char nm[32];
            return gir_fail(err, GIR_E_SHAPE, "%s input %s has shape %s, expected [%lld] (one value per channel of "
                            "X %s)", OPN(n), gir_op_operand_name(n->op, false, i, nm, sizeof nm), SHP(&v->shape),
                            (ll)c, SHP(&xs->s));
        }
    }
    return GIR_OK;
}

gir_status infer_norm(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    ish xs;
    TRY(oi_input_shape(g, n, 0, &x, &xs, err));
    TRY(per_channel(g, n, &xs, 1, n->n_in, err));
    return oi_set_out(g, n, 0, x->dtype, &xs, err);
}

gir_status infer_softmax(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    if (x->shape.rank >= 0) {
        int a = 0;
        TRY(oi_norm_axis(n, "axis", gir_node_int(n, "axis", -1), x->shape.rank, false, &a, err));
    }
    return infer_same(g, n, err);
}

gir_status infer_Dropout(gir_graph *g, gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    double ratio = gir_node_float(n, "ratio", 0.5);
    if (!(ratio >= 0.0 && ratio < 1.0))
        return gir_fail(err, GIR_E_ATTRIBUTE, "Dropout ratio %g is outside [0, 1)", ratio);
    ish xs;
    oi_ish_of(x, &xs);
    TRY(oi_set_out(g, n, 0, x->dtype, &xs, err));
    return oi_set_out(g, n, 1, GIR_DT_BOOL, &xs, err);
}

/* ==== recurrent ============================================================= */

/* Input i of a recurrent node has rank r and, where known, the dims in
 * want (-1: any). */
static gir_status rnn_operand(const gir_graph *g, const gir_node *n, size_t i, int r, const int64_t *want,
                              gir_error *err)
{
    const gir_value *v = gir_in(g, n, i);
    if (!v || v->shape.rank < 0)
        return GIR_OK;
    bool ok = v->shape.rank == r;
    for (int k = 0; ok && k < r; k++)
        if (want[k] >= 0 && v->shape.dims[k] >= 0 && v->shape.dims[k] != want[k])
            ok = false;
    if (ok)
        return GIR_OK;
    char nm[32], wb[200];
    size_t o = 0;
    o += (size_t)snprintf(wb + o, sizeof wb - o, "[");
    for (int k = 0; k < r && o < sizeof wb; k++)
        o += want[k] >= 0 ? (size_t)snprintf(wb + o, sizeof wb - o, "%s%lld", k ? ", " : "", (ll)want[k])
                          : (size_t)snprintf(wb + o, sizeof wb - o, "%s?", k ? ", " : "");
    if (o < sizeof wb)
        snprintf(wb + o, sizeof wb - o, "]");
    return gir_fail(err, GIR_E_SHAPE, "%s input %zu (%s) has shape %s, expected %s", OPN(n), i,
                    gir_op_operand_name(n->op, false, i, nm, sizeof nm), SHP(&v->shape), wb);
}

gir_status infer_rnn(gir_graph *g, gir_node *n, gir_error *err)
{
    gir_rnn_desc d;
    TRY(gir_rnn_desc_read(n, &d, err));
    const gir_value *x;
    TRY(oi_input(g, n, 0, &x, err));
    gir_dtype dt;
    TRY(oi_same_dtype(g, n, 0, 4, &dt, err));
    for (size_t i = 5; i < n->n_in; i++) {
        const gir_value *v = gir_in(g, n, i);
        if (v && dt != GIR_DT_UNKNOWN && v->dtype != GIR_DT_UNKNOWN && v->dtype != dt)
            return gir_fail(err, GIR_E_DTYPE, "%s inputs 0 and %zu have different types %s and %s", OPN(n), i,
                            gir_dtype_name(dt), gir_dtype_name(v->dtype));
    }
    const gir_value *sl = gir_in(g, n, 4);
    if (sl)
        TRY(oi_need_dtype(n, sl, 4, sl->dtype == GIR_DT_I32, "int32", err));
    ish xs;
    oi_ish_of(x, &xs);
    if (xs.s.rank >= 0 && xs.s.rank != 3)
        return gir_fail(err, GIR_E_SHAPE, "%s input X must have rank 3, found %s", OPN(n), SHP(&xs.s));
    int64_t seq = -1, batch = -1, in = -1, H = d.hidden, GH = d.gates * d.hidden, nd = d.dirs;
    const char *seq_nm = NULL, *batch_nm = NULL;
    if (xs.s.rank == 3) {
        int sa = d.layout ? 1 : 0, ba = d.layout ? 0 : 1;
        seq = xs.s.dims[sa];
        batch = xs.s.dims[ba];
        seq_nm = xs.nm[sa];
        batch_nm = xs.nm[ba];
        in = xs.s.dims[2];
    }
    TRY(rnn_operand(g, n, 1, 3, (int64_t[]){ nd, GH, in }, err));
    TRY(rnn_operand(g, n, 2, 3, (int64_t[]){ nd, GH, H }, err));
    TRY(rnn_operand(g, n, 3, 2, (int64_t[]){ nd, 2 * GH }, err));
    TRY(rnn_operand(g, n, 4, 1, (int64_t[]){ batch }, err));
    const int64_t st_dims[2][3] = { { nd, batch, H }, { batch, nd, H } };
    TRY(rnn_operand(g, n, 5, 3, st_dims[d.layout], err));
    if (n->op == GIR_OP_LSTM) {
        TRY(rnn_operand(g, n, 6, 3, st_dims[d.layout], err));
        TRY(rnn_operand(g, n, 7, 2, (int64_t[]){ nd, 3 * H }, err));
    }
    /* the states are st_dims; Y has the sequence axis before their first
     * (layout 0) or second (layout 1) */
    ish y, s;
    ish_rank(&y, 0);
    ish_rank(&s, 0);
    for (int i = 0; i < 3; i++)
        ish_push(&s, st_dims[d.layout][i], i == (d.layout ? 0 : 1) ? batch_nm : NULL);
    for (int i = 0; i < 3; i++) {
        if (i == d.layout)
            ish_push(&y, seq, seq_nm);
        ish_push(&y, s.s.dims[i], s.nm[i]);
    }
    TRY(oi_set_out(g, n, 0, dt, &y, err));
    for (size_t k = 1; k < n->n_out; k++)
        TRY(oi_set_out(g, n, k, dt, &s, err));
    return GIR_OK;
}
