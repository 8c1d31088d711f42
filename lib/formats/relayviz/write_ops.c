/* Canonical operators -> Relay calls (writing RelayViz).
 *
 * rv_plan_node turns one canonical node into one or two Relay calls with
 * Relay's attribute names, every attribute written out (as Relay's Python
 * API fills them in).  Conv and Gemm with a bias become the call and an
 * nn.bias_add; BatchNormalization, Dropout and Split have tuple results
 * read through TupleGetItem; Concat takes a Tuple.  What Relay cannot
 * express is reported through gir_unsupported, naming the attribute. */
#include "relayviz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wr {
    const gir_graph *g;
    const gir_node *n;
    rv_wplan *p;
    gir_unsupported *u;
    bool ok;
} wr;

/* ---- plan building ---------------------------------------------------------- */

static rv_wcall *call(wr *w, const char *op)
{
    rv_wcall *c = &w->p->calls[w->p->n_calls++];
    memset(c, 0, sizeof *c);
    c->op = op;
    c->args = w->p->argbuf + w->p->n_argbuf;
    return c;
}

static rv_warg *arg(wr *w, rv_wcall *c)
{
    /* Arguments of the plan's calls are contiguous in argbuf (calls are
     * built one after the other), except for wide Tuples (see arg_tuple). */
    rv_warg *a = &w->p->argbuf[w->p->n_argbuf++];
    c->n_args++;
    memset(a, 0, sizeof *a);
    return a;
}

static void arg_input(wr *w, rv_wcall *c, int k)
{
    rv_warg *a = arg(w, c);
    a->kind = RV_ARG_INPUT;
    a->k = k;
}

static void arg_prev(wr *w, rv_wcall *c, int k)
{
    rv_warg *a = arg(w, c);
    a->kind = RV_ARG_PREV;
    a->k = k;
}

static rv_wattr *attr(rv_wcall *c, const char *key, rv_wattr_kind kind)
{
    rv_wattr *a = &c->attrs[c->n_attrs++];
    memset(a, 0, sizeof *a);
    a->key = key;
    a->kind = kind;
    return a;
}

static void a_int(rv_wcall *c, const char *key, int64_t v) { attr(c, key, RV_W_INT)->i = v; }
static void a_bool(rv_wcall *c, const char *key, bool v) { attr(c, key, RV_W_BOOL)->i = v; }
static void a_double(rv_wcall *c, const char *key, double v) { attr(c, key, RV_W_DOUBLE)->d = v; }
static void a_string(rv_wcall *c, const char *key, const char *v) { attr(c, key, RV_W_STRING)->s = v; }
static void a_null(rv_wcall *c, const char *key) { attr(c, key, RV_W_NULL); }

/* Copies v into the plan's storage and adds it as a list attribute. */
static void a_ints(wr *w, rv_wcall *c, const char *key, const int64_t *v, size_t n)
{
    rv_wattr *a = attr(c, key, RV_W_INTS);
    if (w->p->n_ibuf + n > sizeof w->p->ibuf / sizeof w->p->ibuf[0]) {
        a->kind = RV_W_NULL; /* cannot happen for ranks <= 8 */
        return;
    }
    int64_t *dst = w->p->ibuf + w->p->n_ibuf;
    memcpy(dst, v, n * sizeof *v);
    w->p->n_ibuf += n;
    a->iv = dst;
    a->n = n;
}

static bool refuse(wr *w, gir_status code, const char *fmt, ...) GIR_PRINTF(3, 4);
static bool refuse(wr *w, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_unsupported_vaddf(w->u, code, w->n->name, fmt, ap);
    va_end(ap);
    w->ok = false;
    return false;
}

static const char *opname(const gir_node *n)
{
    return gir_node_op(n);
}

/* ---- canonical attributes -------------------------------------------------------- */

static const gir_value *in(wr *w, size_t i)
{
    return gir_in(w->g, w->n, i);
}

static int in_rank(wr *w, size_t i)
{
    const gir_value *v = in(w, i);
    return v ? v->shape.rank : -1;
}

/* A list attribute with a default of n copies of dflt; false (refused)
 * when present with another length. */
static bool ints_attr(wr *w, const char *name, size_t n, int64_t dflt, int64_t *out)
{
    const int64_t *v;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, name, &v);
    if (k < 0) {
        for (size_t i = 0; i < n; i++)
            out[i] = dflt;
        return true;
    }
    if ((size_t)k != n)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "%s with %s of %td values (Relay's 2-D operator needs %zu)",
                      opname(w->n), name, k, n);
    memcpy(out, v, n * sizeof *v);
    return true;
}

static bool no_auto_pad(wr *w)
{
    const char *ap = gir_node_string(w->n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "%s with auto_pad=%s", opname(w->n), ap);
    return true;
}

/* kernel_shape, or the weight's spatial dims. */
static bool kernel2(wr *w, int64_t ks[2])
{
    const int64_t *v;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, "kernel_shape", &v);
    if (k >= 0) {
        if (k != 2)
            return refuse(w, GIR_E_UNSUPPORTED_OP, "%s with %td spatial dimensions (Relay's is 2-D)", opname(w->n),
                          k);
        ks[0] = v[0];
        ks[1] = v[1];
        return true;
    }
    const gir_value *wt = in(w, 1);
    if (wt && wt->shape.rank == 4 && wt->shape.dims[2] >= 0 && wt->shape.dims[3] >= 0) {
        ks[0] = wt->shape.dims[2];
        ks[1] = wt->shape.dims[3];
        return true;
    }
    if (wt && wt->shape.rank >= 0 && wt->shape.rank != 4)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "%s with %d spatial dimensions (Relay's is 2-D)", opname(w->n),
                      wt->shape.rank - 2);
    ks[0] = ks[1] = -1;
    return true;
}

/* Whether value vi is a graph output or an input of some node. */
static bool value_read(const gir_graph *g, int32_t vi)
{
    if (vi < 0)
        return false;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == vi)
            return true;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_in; k++)
            if (g->nodes[i]->in[k] == vi)
                return true;
    return false;
}

/* ---- operators -------------------------------------------------------------------- */

static bool wr_conv(wr *w, bool transpose)
{
    int64_t ks[2], strides[2], dil[2], pads[4], outpad[2];
    if (!no_auto_pad(w) || !kernel2(w, ks) || !ints_attr(w, "strides", 2, 1, strides) ||
        !ints_attr(w, "dilations", 2, 1, dil) || !ints_attr(w, "pads", 4, 0, pads))
        return false;
    if (transpose) {
        if (gir_attrs_find(&w->n->attrs, "output_shape"))
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "ConvTranspose with output_shape");
        if (!ints_attr(w, "output_padding", 2, 0, outpad))
            return false;
    }
    int64_t group = gir_node_int(w->n, "group", 1);
    const gir_value *wt = in(w, 1);
    int64_t channels = -1;
    if (wt && wt->shape.rank == 4)
        channels = transpose ? (wt->shape.dims[1] >= 0 ? wt->shape.dims[1] * group : -1) : wt->shape.dims[0];
    rv_wcall *c = call(w, transpose ? "nn.conv2d_transpose" : "nn.conv2d");
    arg_input(w, c, 0);
    arg_input(w, c, 1);
    a_ints(w, c, "strides", strides, 2);
    a_ints(w, c, "padding", pads, 4);
    if (transpose)
        a_ints(w, c, "output_padding", outpad, 2);
    a_ints(w, c, "dilation", dil, 2);
    a_int(c, "groups", group);
    if (channels >= 0)
        a_int(c, "channels", channels);
    else
        a_null(c, "channels");
    if (ks[0] >= 0)
        a_ints(w, c, "kernel_size", ks, 2);
    else
        a_null(c, "kernel_size");
    a_string(c, "data_layout", "NCHW");
    a_string(c, "kernel_layout", transpose ? "IOHW" : "OIHW");
    a_string(c, "out_layout", "");
    a_string(c, "out_dtype", "");
    if (in(w, 2)) {
        rv_wcall *b = call(w, "nn.bias_add");
        arg_prev(w, b, 0);
        arg_input(w, b, 2);
        a_int(b, "axis", 1);
    }
    return true;
}

/* Gemm: nn.dense(A, B) is A x B^T, so transB=0 (and transA=1) get a
 * transpose (axes null: the reverse of a 2-D tensor) in front, which the
 * reader folds back into the flags. */
static bool wr_gemm(wr *w)
{
    bool ta = gir_node_int(w->n, "transA", 0) != 0, tb = gir_node_int(w->n, "transB", 0) != 0;
    if (gir_node_float(w->n, "alpha", 1.0) != 1.0)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Gemm with alpha other than 1");
    if (in(w, 2) && gir_node_float(w->n, "beta", 1.0) != 1.0)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Gemm with beta other than 1");
    const gir_value *wt = in(w, 1);
    int64_t units = wt && wt->shape.rank == 2 ? wt->shape.dims[tb ? 0 : 1] : -1;
    int prev = 0;
    if (ta) {
        rv_wcall *t = call(w, "transpose");
        arg_input(w, t, 0);
        a_null(t, "axes");
        prev++;
    }
    if (!tb) {
        rv_wcall *t = call(w, "transpose");
        arg_input(w, t, 1);
        a_null(t, "axes");
        prev++;
    }
    rv_wcall *c = call(w, "nn.dense");
    if (ta)
        arg_prev(w, c, 0);
    else
        arg_input(w, c, 0);
    if (!tb)
        arg_prev(w, c, prev - 1);
    else
        arg_input(w, c, 1);
    if (units >= 0)
        a_int(c, "units", units);
    else
        a_null(c, "units");
    a_string(c, "out_dtype", "");
    const gir_value *b = in(w, 2);
    if (b) {
        bool vector = b->shape.rank == 1 && units >= 0 && b->shape.dims[0] == units;
        rv_wcall *bc = call(w, vector ? "nn.bias_add" : "add");
        arg_prev(w, bc, prev);
        arg_input(w, bc, 2);
        if (vector)
            a_int(bc, "axis", -1);
    }
    return true;
}

static bool wr_batch_norm(wr *w)
{
    if (gir_node_int(w->n, "training_mode", 0) != 0)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "BatchNormalization with training_mode=1");
    for (size_t i = 0; i < 5; i++)
        if (!in(w, i))
            return refuse(w, GIR_E_UNSUPPORTED_OP, "BatchNormalization without all five inputs");
    rv_wcall *c = call(w, "nn.batch_norm");
    for (int i = 0; i < 5; i++)
        arg_input(w, c, i);
    a_int(c, "axis", 1);
    a_double(c, "epsilon", gir_node_float(w->n, "epsilon", 1e-5));
    a_bool(c, "center", true);
    a_bool(c, "scale", true);
    /* Relay has no momentum (training only): graphconv's own attribute,
     * written only when it is not the default. */
    double momentum = gir_node_float(w->n, "momentum", 0.9);
    if (momentum != 0.9)
        a_double(c, "momentum", momentum);
    c->tuple_result = true;
    return true;
}

static bool wr_pool(wr *w, bool avg)
{
    int64_t ks[2], strides[2], dil[2], pads[4];
    if (!avg && w->n->n_out > 1 && value_read(w->g, w->n->out[1]))
        return refuse(w, GIR_E_UNSUPPORTED_OP, "MaxPool with its Indices output used");
    const int64_t *v;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, "kernel_shape", &v);
    if (k != 2)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "%s with %td spatial dimensions (Relay's is 2-D)", opname(w->n),
                      k < 0 ? (ptrdiff_t)0 : k);
    ks[0] = v[0];
    ks[1] = v[1];
    if (!no_auto_pad(w) || !ints_attr(w, "strides", 2, 1, strides) || !ints_attr(w, "dilations", 2, 1, dil) ||
        !ints_attr(w, "pads", 4, 0, pads))
        return false;
    if (avg && (dil[0] != 1 || dil[1] != 1))
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "AveragePool with dilations");
    rv_wcall *c = call(w, avg ? "nn.avg_pool2d" : "nn.max_pool2d");
    arg_input(w, c, 0);
    a_ints(w, c, "pool_size", ks, 2);
    a_ints(w, c, "strides", strides, 2);
    a_ints(w, c, "dilation", dil, 2);
    a_ints(w, c, "padding", pads, 4);
    a_string(c, "layout", "NCHW");
    a_string(c, "out_layout", "");
    a_bool(c, "ceil_mode", gir_node_int(w->n, "ceil_mode", 0) != 0);
    if (avg)
        a_bool(c, "count_include_pad", gir_node_int(w->n, "count_include_pad", 0) != 0);
    return true;
}

static bool wr_global_pool(wr *w, bool avg)
{
    int rank = in_rank(w, 0);
    if (rank >= 0 && rank != 4)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "%s of a %d-D tensor (Relay's is 2-D)", opname(w->n), rank);
    rv_wcall *c = call(w, avg ? "nn.global_avg_pool2d" : "nn.global_max_pool2d");
    arg_input(w, c, 0);
    a_string(c, "layout", "NCHW");
    a_string(c, "out_layout", "");
    return true;
}

/* The producer of input k when it is an Unsqueeze(axes [1..e]) of a 1-D
 * tensor used only here: *e is its axis count, else 0. */
static int64_t unit_axes_producer(wr *w, size_t k)
{
    const gir_value *v = in(w, k);
    if (!v || v->producer < 0)
        return 0;
    const gir_node *p = w->g->nodes[v->producer];
    if (p->op != GIR_OP_Unsqueeze || p->n_in != 1 || !gir_in(w->g, p, 0) || gir_in(w->g, p, 0)->shape.rank != 1)
        return 0;
    const int64_t *ax;
    ptrdiff_t n = gir_attrs_get_ints(&p->attrs, "axes", &ax);
    for (ptrdiff_t i = 0; i < n; i++)
        if (ax[i] != i + 1)
            return 0;
    /* The value must have no other consumer and not be a graph output. */
    int32_t vi = w->n->in[k];
    for (size_t i = 0; i < w->g->n_outputs; i++)
        if (w->g->outputs[i] == vi)
            return 0;
    for (size_t i = 0; i < w->g->n_nodes; i++) {
        const gir_node *m = w->g->nodes[i];
        for (size_t j = 0; j < m->n_in; j++)
            if (m->in[j] == vi && (m != w->n || j != k))
                return 0;
    }
    return n > 0 ? n : 0;
}

/* PRelu and a bias-add style Add: an operand of one value per channel,
 * given as [C] on the last axis or as [C] unsqueezed to [C,1,..,1].  Plans
 * op(x, c, axis) and returns true, or returns false having planned nothing. */
static bool per_channel(wr *w, const char *op)
{
    int rank = in_rank(w, 0);
    const gir_value *x = in(w, 0), *s = in(w, 1);
    if (rank < 1 || !s)
        return false;
    int64_t e = unit_axes_producer(w, 1);
    if (e > 0 && rank - 1 - e >= 0) {
        rv_wcall *c = call(w, op);
        arg_input(w, c, 0);
        rv_warg *a = arg(w, c);
        a->kind = RV_ARG_PRODUCER_IN;
        a->k = 1;
        a_int(c, "axis", rank - 1 - e);
        return true;
    }
    int64_t last = x->shape.dims[rank - 1];
    if (s->shape.rank == 1 && s->shape.dims[0] >= 0 && last >= 0 && s->shape.dims[0] == last) {
        rv_wcall *c = call(w, op);
        arg_input(w, c, 0);
        arg_input(w, c, 1);
        a_int(c, "axis", rank - 1);
        return true;
    }
    return false;
}

static bool wr_prelu(wr *w)
{
    if (per_channel(w, "nn.prelu"))
        return true;
    const gir_value *s = in(w, 1);
    char sh[96];
    return refuse(w, GIR_E_UNSUPPORTED_ATTR,
                  "PRelu with a slope of shape %s (Relay's nn.prelu takes one slope per channel, as [C] or an "
                  "Unsqueeze of it)",
                  s ? gir_shape_str(&s->shape, sh, sizeof sh) : "?");
}

static bool wr_pad(wr *w)
{
    const char *mode = gir_node_string(w->n, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "edge") && strcmp(mode, "reflect"))
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Pad with mode=%s", mode);
    const int64_t *pads;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, "pads", &pads);
    if (k < 0 || k % 2 || k > 2 * GIR_MAX_RANK)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Pad without a pads list of begins and ends");
    for (ptrdiff_t i = 0; i < k; i++)
        if (pads[i] < 0)
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Pad with negative pads (cropping)");
    if (gir_attrs_find(&w->n->attrs, "axes"))
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Pad with axes");
    double value = gir_node_float(w->n, "constant_value", 0.0);
    if (!isfinite(value))
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Pad with a non-finite constant_value");
    const gir_value *x = in(w, 0);
    if (x && gir_dtype_is_int(x->dtype) && value != floor(value))
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Pad of an integer tensor with a fractional constant_value");
    rv_wcall *c = call(w, "nn.pad");
    arg_input(w, c, 0);
    rv_warg *a = arg(w, c);
    a->kind = RV_ARG_SCALAR;
    a->d = value;
    size_t rank = (size_t)k / 2;
    int64_t pw[2 * GIR_MAX_RANK];
    for (size_t i = 0; i < rank; i++) {
        pw[2 * i] = pads[i];
        pw[2 * i + 1] = pads[rank + i];
    }
    rv_wattr *pa = attr(c, "pad_width", RV_W_PAIRS);
    int64_t *dst = w->p->ibuf + w->p->n_ibuf;
    memcpy(dst, pw, 2 * rank * sizeof *pw);
    w->p->n_ibuf += 2 * rank;
    pa->iv = dst;
    pa->n = rank;
    a_string(c, "pad_mode", mode);
    return true;
}

static bool wr_resize(wr *w)
{
    const double *sc;
    ptrdiff_t k = gir_attrs_get_floats(&w->n->attrs, "scales", &sc);
    const char *mode = gir_node_string(w->n, "mode", "nearest");
    const char *ctm = gir_node_string(w->n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = gir_node_string(w->n, "nearest_mode", "round_prefer_floor");
    if (gir_attrs_find(&w->n->attrs, "sizes") || k != 4 || sc[0] != 1.0 || sc[1] != 1.0)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Resize other than by scales [1, 1, h, w]");
    if (strcmp(mode, "nearest") != 0)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Resize with mode=%s", mode);
    bool integral = sc[2] >= 1 && sc[3] >= 1 && sc[2] == floor(sc[2]) && sc[3] == floor(sc[3]);
    /* Relay's nearest upsampling reads input floor(i / scale): the same as
     * asymmetric + floor, and for whole scales as half_pixel with either
     * rounding to nearest (the sample point never falls on .5). */
    bool same = (!strcmp(ctm, "asymmetric") && !strcmp(nm, "floor")) ||
                (integral && !strcmp(ctm, "half_pixel") &&
                 (!strcmp(nm, "round_prefer_floor") || !strcmp(nm, "round_prefer_ceil")));
    if (!same)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Resize with coordinate_transformation_mode=%s and nearest_mode=%s",
                      ctm, nm);
    rv_wcall *c = call(w, "nn.upsampling");
    arg_input(w, c, 0);
    a_double(c, "scale_h", sc[2]);
    a_double(c, "scale_w", sc[3]);
    a_string(c, "layout", "NCHW");
    a_string(c, "method", "nearest_neighbor");
    a_bool(c, "align_corners", false);
    return true;
}

static bool wr_split(wr *w)
{
    const int64_t *sizes;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, "split", &sizes);
    if (w->n->n_out > sizeof w->p->ibuf / sizeof w->p->ibuf[0] - 8)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "Split into more than 40 parts");
    rv_wcall *c = call(w, "split");
    arg_input(w, c, 0);
    if (k >= 0) {
        if ((size_t)k != w->n->n_out || k < 1) {
            w->p->n_calls--;
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Split whose split list does not match its outputs");
        }
        int64_t idx[48], at = 0;
        for (ptrdiff_t i = 0; i + 1 < k; i++) {
            at += sizes[i];
            idx[i] = at;
        }
        a_ints(w, c, "indices_or_sections", idx, (size_t)k - 1);
    } else {
        a_int(c, "indices_or_sections", (int64_t)w->n->n_out);
    }
    a_int(c, "axis", gir_node_int(w->n, "axis", 0));
    c->tuple_result = true;
    return true;
}

/* Unsqueeze's axes must be consecutive once normalised: expand_dims. */
static bool wr_unsqueeze(wr *w)
{
    const int64_t *ax;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, "axes", &ax);
    if (k < 1 || k > GIR_MAX_RANK)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Unsqueeze without axes");
    int64_t axis = ax[0];
    if (k > 1) {
        int rank = in_rank(w, 0);
        int64_t norm[GIR_MAX_RANK];
        for (ptrdiff_t i = 0; i < k; i++) {
            if (ax[i] < 0 && rank < 0)
                return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Unsqueeze of negative axes of a tensor of unknown rank");
            norm[i] = ax[i] < 0 ? ax[i] + rank + k : ax[i];
        }
        for (ptrdiff_t i = 1; i < k; i++) /* insertion sort */
            for (ptrdiff_t j = i; j > 0 && norm[j - 1] > norm[j]; j--) {
                int64_t t = norm[j];
                norm[j] = norm[j - 1];
                norm[j - 1] = t;
            }
        for (ptrdiff_t i = 1; i < k; i++)
            if (norm[i] != norm[0] + i)
                return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Unsqueeze of axes that are not consecutive");
        axis = norm[0];
    }
    rv_wcall *c = call(w, "expand_dims");
    arg_input(w, c, 0);
    a_int(c, "axis", axis);
    a_int(c, "num_newaxis", k);
    return true;
}

static bool wr_slice(wr *w)
{
    const int64_t *st, *en, *ax, *sp;
    ptrdiff_t ns = gir_attrs_get_ints(&w->n->attrs, "starts", &st), ne = gir_attrs_get_ints(&w->n->attrs, "ends", &en);
    ptrdiff_t na = gir_attrs_get_ints(&w->n->attrs, "axes", &ax), np = gir_attrs_get_ints(&w->n->attrs, "steps", &sp);
    if (ns < 1 || ne != ns || (na >= 0 && na != ns) || (np >= 0 && np != ns) || ns > GIR_MAX_RANK)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Slice without matching starts, ends, axes and steps");
    rv_wcall *c = call(w, "strided_slice");
    arg_input(w, c, 0);
    a_ints(w, c, "begin", st, (size_t)ns);
    a_ints(w, c, "end", en, (size_t)ne);
    if (np >= 0)
        a_ints(w, c, "strides", sp, (size_t)np);
    else
        a_null(c, "strides");
    a_string(c, "slice_mode", "end");
    if (na >= 0)
        a_ints(w, c, "axes", ax, (size_t)na);
    else
        a_null(c, "axes");
    return true;
}

static bool wr_reduce(wr *w, const char *op)
{
    if (gir_node_int(w->n, "noop_with_empty_axes", 0) != 0)
        return refuse(w, GIR_E_UNSUPPORTED_ATTR, "%s with noop_with_empty_axes=1", opname(w->n));
    const int64_t *ax;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, "axes", &ax);
    rv_wcall *c = call(w, op);
    arg_input(w, c, 0);
    if (k > 0 && k <= GIR_MAX_RANK)
        a_ints(w, c, "axis", ax, (size_t)k);
    else
        a_null(c, "axis");
    a_bool(c, "keepdims", gir_node_int(w->n, "keepdims", 1) != 0);
    a_bool(c, "exclude", false);
    return true;
}

static bool wr_argreduce(wr *w, const char *op)
{
    int64_t axis = gir_node_int(w->n, "axis", 0);
    rv_wcall *c = call(w, op);
    arg_input(w, c, 0);
    a_ints(w, c, "axis", &axis, 1);
    a_bool(c, "keepdims", gir_node_int(w->n, "keepdims", 1) != 0);
    a_bool(c, "exclude", false);
    a_bool(c, "select_last_index", gir_node_int(w->n, "select_last_index", 0) != 0);
    return true;
}

/* A list attribute that may be absent (written as null). */
static bool wr_optional_list(wr *w, const char *op, const char *canon, const char *key)
{
    const int64_t *v;
    ptrdiff_t k = gir_attrs_get_ints(&w->n->attrs, canon, &v);
    rv_wcall *c = call(w, op);
    arg_input(w, c, 0);
    if (k >= 0 && k <= GIR_MAX_RANK)
        a_ints(w, c, key, v, (size_t)k);
    else
        a_null(c, key);
    return true;
}

/* An opaque node: its op name and attributes as they are. */
static bool wr_opaque(wr *w, bool allow_opaque)
{
    const gir_node *n = w->n;
    gir_opaque_use use = gir_opaque_policy(n, "relayviz", allow_opaque);
    bool ours = use == GIR_OPAQUE_OURS;
    if (use == GIR_OPAQUE_REFUSE)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "%s operator %s (kept opaque; --allow-opaque writes it as a Call)",
                      n->opaque_format ? n->opaque_format : "unknown", n->opaque_op ? n->opaque_op : "?");
    if (n->attrs.n > RV_MAX_WATTRS)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "operator %s with more than %d attributes",
                      n->opaque_op ? n->opaque_op : "?", RV_MAX_WATTRS);
    rv_wcall *c = call(w, n->opaque_op ? n->opaque_op : "?");
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        if (a->type != GIR_ATTR_STRING) {
            w->p->n_calls--;
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "opaque operator %s with a non-text attribute %s",
                          n->opaque_op ? n->opaque_op : "?", a->name);
        }
        rv_wattr *x = attr(c, a->name, ours ? RV_W_JSON : RV_W_STRING);
        x->s = a->u.s;
    }
    const int64_t *ar;
    ptrdiff_t na = ours ? gir_attrs_get_ints(&n->meta, RV_META_ARGS, &ar) : -1;
    size_t total = 0;
    if (na >= 0) {
        for (ptrdiff_t i = 0; i < na; i++)
            total += ar[i] < 0 ? 1 : (size_t)ar[i];
        if (total != n->n_in) {
            w->p->n_calls--;
            return refuse(w, GIR_E_UNSUPPORTED_OP, "opaque operator %s whose inputs disagree with %s",
                          n->opaque_op ? n->opaque_op : "?", RV_META_ARGS);
        }
    }
    size_t n_args = na >= 0 ? (size_t)na : n->n_in;
    if (n_args > sizeof w->p->argbuf / sizeof w->p->argbuf[0]) {
        w->p->bigargs = calloc(n_args, sizeof *w->p->bigargs);
        if (!w->p->bigargs) {
            w->p->n_calls--;
            return refuse(w, GIR_E_UNSUPPORTED_OP, "operator %s (out of memory)", n->opaque_op ? n->opaque_op : "?");
        }
        c->args = w->p->bigargs;
    }
    for (size_t i = 0, k = 0; i < n_args; i++) {
        rv_warg *a = w->p->bigargs ? &w->p->bigargs[c->n_args++] : arg(w, c);
        memset(a, 0, sizeof *a);
        if (na >= 0 && ar[i] >= 0) {
            a->kind = RV_ARG_TUPLE;
            a->k = (int)k;
            a->n = (int)ar[i];
            k += (size_t)ar[i];
        } else {
            if (n->in[k] < 0) {
                w->p->n_calls--;
                return refuse(w, GIR_E_UNSUPPORTED_OP, "opaque operator %s with an omitted input",
                              n->opaque_op ? n->opaque_op : "?");
            }
            a->kind = RV_ARG_INPUT;
            a->k = (int)k++;
        }
    }
    c->tuple_result = n->n_out > 1 || gir_attrs_get_int(&n->meta, RV_META_TUPLE, 0) != 0;
    return true;
}

/* The engine's access to a call's attributes (gir_attr_io): Relay writes
 * every attribute, defaults included. */
static gir_status attr_put(void *ctx, const char *key, gir_attr_conv conv, int64_t i, double f, bool is_default,
                           gir_error *err)
{
    (void)is_default;
    (void)err;
    if (conv == GIR_CONV_INT)
        a_int(ctx, key, i);
    else
        a_double(ctx, key, f);
    return GIR_OK;
}

/* A plain row of the operator table (gir_relayviz_ops). */
static bool wr_plain(wr *w)
{
    const gir_node *n = w->n;
    const gir_op_map *s = gir_map_write_row(gir_relayviz_ops, n->op, NULL);
    if (!s)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "%s", opname(n));
    if (n->n_in != s->n_in)
        return refuse(w, GIR_E_UNSUPPORTED_OP, "%s with %zu inputs", opname(n), n->n_in);
    rv_wcall *c = call(w, s->format_op);
    for (unsigned i = 0; i < s->n_in; i++)
        arg_input(w, c, (int)i);
    gir_attr_io io = { c, NULL, attr_put };
    return gir_map_write_attrs(s, &io, n, NULL) == GIR_OK;
}

static bool plan(wr *w, bool allow_opaque)
{
    const gir_node *n = w->n;
    switch (n->op) {
    case GIR_OP_OPAQUE: return wr_opaque(w, allow_opaque);
    case GIR_OP_Conv: return wr_conv(w, false);
    case GIR_OP_ConvTranspose: return wr_conv(w, true);
    case GIR_OP_Gemm: return wr_gemm(w);
    case GIR_OP_BatchNormalization: return wr_batch_norm(w);
    case GIR_OP_Dropout: {
        rv_wcall *c = call(w, "nn.dropout");
        arg_input(w, c, 0);
        a_double(c, "rate", gir_node_float(n, "ratio", 0.5));
        c->tuple_result = true;
        return true;
    }
    case GIR_OP_MaxPool: return wr_pool(w, false);
    case GIR_OP_AveragePool: return wr_pool(w, true);
    case GIR_OP_GlobalAveragePool: return wr_global_pool(w, true);
    case GIR_OP_GlobalMaxPool: return wr_global_pool(w, false);
    case GIR_OP_PRelu: return wr_prelu(w);
    case GIR_OP_Add: {
        const char *m = gir_attrs_get_string(&n->meta, RV_META_OP, NULL);
        if (m && !strcmp(m, "nn.bias_add") && per_channel(w, "nn.bias_add"))
            return true;
        return wr_plain(w);
    }
    case GIR_OP_Flatten: {
        int64_t axis = gir_node_int(n, "axis", 1);
        if (axis != 1)
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Flatten with axis=%lld (nn.batch_flatten keeps axis 0 only)",
                          (long long)axis);
        arg_input(w, call(w, "nn.batch_flatten"), 0);
        return true;
    }
    case GIR_OP_Pad: return wr_pad(w);
    case GIR_OP_LRN: {
        rv_wcall *c = call(w, "nn.lrn");
        arg_input(w, c, 0);
        a_int(c, "size", gir_node_int(n, "size", 1));
        a_int(c, "axis", 1);
        a_double(c, "bias", gir_node_float(n, "bias", 1.0));
        a_double(c, "alpha", gir_node_float(n, "alpha", 1e-4));
        a_double(c, "beta", gir_node_float(n, "beta", 0.75));
        return true;
    }
    case GIR_OP_Resize: return wr_resize(w);
    case GIR_OP_Concat: {
        if (!gir_attrs_find(&n->attrs, "axis"))
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Concat without axis");
        for (size_t i = 0; i < n->n_in; i++)
            if (n->in[i] < 0)
                return refuse(w, GIR_E_UNSUPPORTED_OP, "Concat with an omitted input");
        rv_wcall *c = call(w, "concatenate");
        rv_warg *a = arg(w, c);
        a->kind = RV_ARG_TUPLE;
        a->k = 0;
        a->n = (int)n->n_in;
        a_int(c, "axis", gir_node_int(n, "axis", 0));
        return true;
    }
    case GIR_OP_Split: return wr_split(w);
    case GIR_OP_Reshape: {
        const int64_t *s;
        ptrdiff_t k = gir_attrs_get_ints(&n->attrs, "shape", &s);
        if (k < 0 || k > GIR_MAX_RANK)
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Reshape without a shape attribute");
        rv_wcall *c = call(w, "reshape");
        arg_input(w, c, 0);
        a_ints(w, c, "newshape", s, (size_t)k);
        a_bool(c, "allowzero", gir_node_int(n, "allowzero", 0) != 0);
        return true;
    }
    case GIR_OP_Transpose: return wr_optional_list(w, "transpose", "perm", "axes");
    case GIR_OP_Squeeze: return wr_optional_list(w, "squeeze", "axes", "axis");
    case GIR_OP_Unsqueeze: return wr_unsqueeze(w);
    case GIR_OP_Clip: {
        const gir_attr *lo = gir_attrs_find(&n->attrs, "min"), *hi = gir_attrs_find(&n->attrs, "max");
        if (!lo || !hi)
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Clip without %s (Relay's clip needs both bounds)",
                          !lo ? "min" : "max");
        double a_min = gir_node_float(n, "min", 0), a_max = gir_node_float(n, "max", 0);
        if (!isfinite(a_min) || !isfinite(a_max))
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Clip with an infinite bound");
        rv_wcall *c = call(w, "clip");
        arg_input(w, c, 0);
        a_double(c, "a_min", a_min);
        a_double(c, "a_max", a_max);
        return true;
    }
    case GIR_OP_Expand: {
        /* Relay's broadcast_to is numpy's: its shape is the result's */
        const gir_value *y = w->n->out[0] >= 0 ? w->g->values[w->n->out[0]] : NULL;
        if (!y || y->shape.rank < 0 || !gir_shape_is_known(&y->shape))
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Expand to a shape that is not known");
        rv_wcall *c = call(w, "broadcast_to");
        arg_input(w, c, 0);
        a_ints(w, c, "shape", y->shape.dims, (size_t)y->shape.rank);
        return true;
    }
    case GIR_OP_Slice: return wr_slice(w);
    case GIR_OP_Cast: {
        gir_dtype dt = gir_dtype_from_name(gir_node_string(n, "to", ""));
        if (dt == GIR_DT_UNKNOWN)
            return refuse(w, GIR_E_UNSUPPORTED_ATTR, "Cast without a known to");
        rv_wcall *c = call(w, "cast");
        arg_input(w, c, 0);
        a_string(c, "dtype", gir_dtype_name(dt));
        return true;
    }
    case GIR_OP_ReduceSum: return wr_reduce(w, "sum");
    case GIR_OP_ReduceMean: return wr_reduce(w, "mean");
    case GIR_OP_ReduceMax: return wr_reduce(w, "max");
    case GIR_OP_ReduceMin: return wr_reduce(w, "min");
    case GIR_OP_ReduceProd: return wr_reduce(w, "prod");
    case GIR_OP_ArgMax: return wr_argreduce(w, "argmax");
    case GIR_OP_ArgMin: return wr_argreduce(w, "argmin");
    default: break;
    }
    return wr_plain(w);
}

bool rv_plan_node(const gir_graph *g, const gir_node *n, bool allow_opaque, rv_wplan *p, gir_unsupported *u)
{
    memset(p, 0, sizeof *p);
    wr w = { g, n, p, u, true };
    bool ok = plan(&w, allow_opaque) && w.ok;
    if (!ok)
        rv_plan_free(p);
    return ok;
}

void rv_plan_free(rv_wplan *p)
{
    free(p->bigargs);
    p->bigargs = NULL;
}
