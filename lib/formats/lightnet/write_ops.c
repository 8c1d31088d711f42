/* Canonical operators -> LightNet ops (writing): each node as one op or a
 * short chain with exactly its schema's tensors and params, or a refusal
 * naming what LightNet cannot express (write.c: lnw_refuse). */
#include "write.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IN(arg, name) lnw_add_t(w, true, arg, name)

static void P_int(wr *w, const char *name, int64_t i)
{
    wpar *p = lnw_add_p(w, name, WP_INT);
    if (p)
        p->i = i;
}

static void P_strs(wr *w, const char *name, const char *const *v, size_t n, bool bools, const int64_t *iv)
{
    wpar *p = lnw_add_p(w, name, bools ? WP_BOOLS : WP_STRS);
    if (!p)
        return;
    p->n = n;
    if (bools) {
        p->iv = malloc((n ? n : 1) * sizeof *p->iv);
        if (!p->iv)
            w->op.failed = true;
        else
            memcpy(p->iv, iv, n * sizeof *iv);
        return;
    }
    p->sv = calloc(n ? n : 1, sizeof *p->sv);
    if (!p->sv) {
        w->op.failed = true;
        return;
    }
    for (size_t k = 0; k < n; k++)
        if (!(p->sv[k] = gir_strdupf("%s", v[k])))
            w->op.failed = true;
}

static const char *tensor_name(wr *w, const char *want, char *buf, size_t n)
{
    return lnw_fresh(w, false, want, buf, n);
}

static const gir_node *N(wr *w)
{
    return w->g->nodes[w->cur];
}

static gir_value *in_v(wr *w, size_t k)
{
    return gir_in(w->g, N(w), k);
}

static gir_value *out_v(wr *w, size_t k)
{
    return gir_out(w->g, N(w), k);
}

static int64_t a_int(const gir_node *n, const char *name, int64_t d)
{
    return gir_attrs_get_int(&n->attrs, name, d);
}

static ptrdiff_t a_ints(const gir_node *n, const char *name, const int64_t **v)
{
    return gir_attrs_get_ints(&n->attrs, name, v);
}

static const char *a_str(const gir_node *n, const char *name, const char *d)
{
    return gir_attrs_get_string(&n->attrs, name, d);
}

/* Checks every input and output has a known shape of 1..8 axes and a
 * LightNet dtype. */
static bool check_io(wr *w)
{
    const gir_node *n = N(w);
    bool ok = true;
    for (size_t io = 0; io < 2; io++) {
        size_t cnt = io ? n->n_out : n->n_in;
        for (size_t k = 0; k < cnt; k++) {
            gir_value *v = io ? out_v(w, k) : in_v(w, k);
            if (!v)
                continue;
            if (!lnw_shape_known(v)) {
                lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "a tensor of unknown shape ('%s'; LightNet needs every shape "
                       "fixed)", v->name);
                ok = false;
            } else if (v->shape.rank < 1 || v->shape.rank > GIR_MAX_RANK) {
                lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "a %d-D tensor ('%s'; LightNet tensors have 1 to 8 dimensions)",
                       v->shape.rank, v->name);
                ok = false;
            }
            if (!ln_dtype_name(v->dtype)) {
                lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "dtype %s ('%s'; LightNet has no such type)",
                       gir_dtype_name(v->dtype), v->name);
                ok = false;
            }
        }
    }
    return ok;
}

static const char *generic_optype(wr *w, const char *optype, char *buf, size_t n)
{
    const gir_attr *m = gir_attrs_find(&N(w)->meta, "lightnet.optype");
    if (w->keep_variants && m && m->type == GIR_ATTR_STRING) {
        const char *variant;
        const ln_op_schema *s = ln_schema_resolve(m->u.s, &variant);
        if (s && strcmp(s->optype, optype) == 0) {
            snprintf(buf, n, "%s", m->u.s);
            return buf;
        }
    }
    return optype;
}

/* The op name for node output: the node's own name. */
static const char *node_opname(wr *w, char *buf, size_t n)
{
    return lnw_op_name(w, N(w)->name, buf, n);
}

/* Writes the creates of a node's producer-less inputs before the node. */
static gir_status emit_inputs(wr *w)
{
    const gir_node *n = N(w);
    for (size_t k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0 || lnw_V(w, n->in[k])->producer >= 0)
            continue;
        gir_status st = lnw_emit_create(w, n->in[k]);
        if (st)
            return st;
    }
    return GIR_OK;
}

static void mark(wr *w, int32_t v, int32_t root)
{
    w->written[v] = true;
    w->root[v] = root < 0 ? v : root;
}

static gir_status node_done(wr *w)
{
    const gir_node *n = N(w);
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !w->written[n->out[k]])
            mark(w, n->out[k], -1);
    return lnw_end_op(w);
}

/* Begins the node's own op, of optype (or of the backend variant of it
 * the node was read as). */
static void begin_node_op(wr *w, const char *optype)
{
    char nb[512], ob[64];
    lnw_begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, optype, ob, sizeof ob));
}

/* The same for an op from the node's first input to its output (src, dst). */
static void begin_unary_op(wr *w, const char *optype)
{
    begin_node_op(w, optype);
    IN("src", in_v(w, 0)->name);
    OUT("dst", out_v(w, 0)->name);
}

/* Begins op k (from 1) of the chain of optype ops a node is written as:
 * the first is the node's own op, op k is named "<node>_<k>". */
static void begin_chain_op(wr *w, size_t k, const char *optype)
{
    if (k == 1) {
        begin_node_op(w, optype);
        return;
    }
    char on[480], nb[512], ob[64];
    snprintf(on, sizeof on, "%.400s_%zu", N(w)->name, k);
    lnw_begin_op(w, lnw_op_name(w, on, nb, sizeof nb), generic_optype(w, optype, ob, sizeof ob));
}

/* The output of part i of a chain: the node's output for the last op,
 * else a new tensor "<output>_<what><i>" (into buf). */
static const char *chain_dst(wr *w, bool last, const char *what, size_t i, char *buf, size_t n)
{
    const char *y = out_v(w, 0)->name;
    if (last)
        return y;
    char want[480];
    snprintf(want, sizeof want, "%.400s_%s%zu", y, what, i);
    return tensor_name(w, want, buf, n);
}

/* Ends an op of a chain (the last ends the node); its output dst is the
 * next op's input prev. */
static gir_status end_chain_op(wr *w, bool last, const char *dst, char *prev, size_t n)
{
    gir_status st = last ? node_done(w) : lnw_end_op(w);
    snprintf(prev, n, "%s", dst);
    return st;
}

/* The node as a forward of its first input into its output. */
static gir_status emit_forward(wr *w)
{
    const gir_node *n = N(w);
    char nb[512];
    lnw_begin_op(w, node_opname(w, nb, sizeof nb), "forward");
    IN("src", in_v(w, 0)->name);
    OUT("dst", out_v(w, 0)->name);
    mark(w, n->out[0], w->root[n->in[0]]);
    return node_done(w);
}

/* A zero bias of `len` elements for a conv without one. */
static const char *zero_bias(wr *w, gir_dtype dt, int64_t len, char *tb, size_t tn)
{
    char want[480], nb[512];
    snprintf(want, sizeof want, "%.400s_bias", N(w)->name);
    const char *tname = tensor_name(w, want, tb, tn);
    if (!w->emit)
        return tname;
    int32_t saved = w->cur;
    const char *oname = lnw_op_name(w, want, nb, sizeof nb);
    lnw_begin_op(w, oname, "create");
    OUT("dst", tname);
    lnw_P_str(w, "dtype", ln_dtype_name(dt));
    lnw_P_ints(w, "dims", &len, 1);
    lnw_P_nums(w, "ran", (double[]){ 0, 0 }, 2);
    lnw_P_nums(w, "data", (double[]){ 0 }, 1);
    lnw_P_bool(w, "from_file", false);
    w->cur = saved;
    if (lnw_end_op(w) != GIR_OK)
        w->op.failed = true;
    return tname;
}

static bool same_dtype_inputs(wr *w)
{
    const gir_node *n = N(w);
    gir_value *x = in_v(w, 0);
    for (size_t k = 1; k < n->n_in; k++) {
        gir_value *v = in_v(w, k);
        if (v && v->dtype != x->dtype) {
            lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "%s on inputs of different dtypes (%s and %s)", gir_op_name(n->op),
                   gir_dtype_name(x->dtype), gir_dtype_name(v->dtype));
            return false;
        }
    }
    return true;
}

/* Spatial attributes of a 2-D window op: kernel, strides, dilations, pads
 * (explicit, or from auto_pad the ONNX way). */
typedef struct win {
    int64_t k[2], s[2], d[2], p[4];
} win;

static bool get_win(wr *w, win *o, const int64_t *kdefault)
{
    const gir_node *n = N(w);
    const int64_t *v;
    ptrdiff_t c = a_ints(n, "kernel_shape", &v);
    if (c == 2) {
        o->k[0] = v[0];
        o->k[1] = v[1];
    } else if (c < 0 && kdefault) {
        o->k[0] = kdefault[0];
        o->k[1] = kdefault[1];
    } else {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with a %td-D kernel_shape (LightNet's window ops are 2-D)",
               gir_op_name(n->op), c);
        return false;
    }
    static const char *const keys[] = { "strides", "dilations" };
    for (int q = 0; q < 2; q++) {
        int64_t *dst = q ? o->d : o->s;
        c = a_ints(n, keys[q], &v);
        if (c == 2) {
            dst[0] = v[0];
            dst[1] = v[1];
        } else if (c < 0) {
            dst[0] = dst[1] = 1;
        } else {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with %td %s (LightNet's window ops are 2-D)",
                   gir_op_name(n->op), c, keys[q]);
            return false;
        }
    }
    c = a_ints(n, "pads", &v);
    if (c == 4) {
        memcpy(o->p, v, sizeof o->p);
    } else if (c < 0) {
        memset(o->p, 0, sizeof o->p);
    } else {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with %td pads", gir_op_name(n->op), c);
        return false;
    }
    const char *ap = a_str(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0) {
        if (strcmp(ap, "VALID") != 0 && strcmp(ap, "SAME_UPPER") != 0 && strcmp(ap, "SAME_LOWER") != 0) {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with auto_pad=%s", gir_op_name(n->op), ap);
            return false;
        }
        gir_value *x = in_v(w, 0);
        for (int ax = 0; ax < 2; ax++)
            ln_autopad_conv(ap, x->shape.dims[2 + ax], o->k[ax], o->s[ax], o->d[ax], &o->p[ax], &o->p[2 + ax]);
    }
    for (int i = 0; i < 4; i++)
        if (o->p[i] < 0 || (i < 2 && (o->k[i] < 1 || o->s[i] < 1 || o->d[i] < 1))) {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with a negative padding or a non-positive kernel, stride or "
                   "dilation", gir_op_name(n->op));
            return false;
        }
    return true;
}

/* The autopad/padding params: LightNet's own autopad when the node came
 * from LightNet with one and it still yields these pads, else NOTSET. */
static void pad_params(wr *w, const win *o, bool pool)
{
    const gir_node *n = N(w);
    const gir_attr *ma = gir_attrs_find(&n->meta, "lightnet.autopad");
    const gir_attr *mp = gir_attrs_find(&n->meta, "lightnet.padding");
    if (ma && ma->type == GIR_ATTR_STRING && (strcmp(ma->u.s, "VALID") == 0 || strcmp(ma->u.s, "SAME_UPPER") == 0 ||
                                              strcmp(ma->u.s, "SAME_LOWER") == 0) &&
        mp && mp->type == GIR_ATTR_INTS && mp->u.ints.n == 4 && n->op != GIR_OP_ConvTranspose) {
        gir_value *x = in_v(w, 0);
        int64_t p[4];
        for (int ax = 0; ax < 2; ax++)
            ln_autopad_conv(ma->u.s, pool ? x->shape.dims[ax] : x->shape.dims[2 + ax], o->k[ax], o->s[ax], o->d[ax],
                            &p[ax], &p[2 + ax]);
        if (memcmp(p, o->p, sizeof p) == 0) {
            lnw_P_ints(w, "padding", mp->u.ints.v, 4);
            lnw_P_str(w, "autopad", ma->u.s);
            return;
        }
    }
    lnw_P_ints(w, "padding", o->p, 4);
    lnw_P_str(w, "autopad", ma && ma->type == GIR_ATTR_STRING && strcmp(ma->u.s, "NOTSET") != 0 &&
                                strcmp(ma->u.s, "VALID") != 0 && strncmp(ma->u.s, "SAME_", 5) != 0
                            ? ma->u.s
                            : "NOTSET");
}

static bool check_out_shape(wr *w, const int64_t *want)
{
    gir_value *y = out_v(w, 0);
    for (int i = 0; i < 4; i++)
        if (y->shape.dims[i] != want[i]) {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, N(w)->name, "%s whose output shape LightNet computes differently "
                   "(dimension %d: %lld, LightNet %lld)", gir_op_name(N(w)->op), i, (long long)y->shape.dims[i],
                   (long long)want[i]);
            return false;
        }
    return true;
}

static int64_t lw_out(int64_t in, int64_t pad, int64_t k, int64_t s, int64_t d)
{
    int64_t span = (k - 1) * d + 1;
    return in + pad < span ? 0 : (in + pad - span) / s + 1;
}

static gir_status w_conv(wr *w)
{
    const gir_node *n = N(w);
    bool tr = n->op == GIR_OP_ConvTranspose;
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *wt = in_v(w, 1), *b = in_v(w, 2), *y = out_v(w, 0);
    if (x->shape.rank != 4 || wt->shape.rank != 4) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s on %d-D data (LightNet's %s is 2-D, NCHW)", gir_op_name(n->op),
               x->shape.rank, tr ? "deconv2d" : "conv2d");
        return GIR_OK;
    }
    win o;
    if (!get_win(w, &o, &wt->shape.dims[2]))
        return GIR_OK;
    int64_t group = a_int(n, "group", 1);
    int64_t opad[2] = { 0, 0 };
    const int64_t *v;
    if (tr && a_ints(n, "output_padding", &v) == 2) {
        opad[0] = v[0];
        opad[1] = v[1];
    }
    int64_t want[4];
    if (tr) {
        if (a_ints(n, "output_shape", &v) >= 0 && strcmp(a_str(n, "auto_pad", "NOTSET"), "NOTSET") == 0) {
            /* pads follow from output_shape (ONNX): take them from the output */
        }
        if (strcmp(a_str(n, "auto_pad", "NOTSET"), "NOTSET") != 0 || a_ints(n, "output_shape", &v) >= 0) {
            /* derive the pads from the output shape, SAME_UPPER split */
            for (int ax = 0; ax < 2; ax++) {
                int64_t total = o.s[ax] * (x->shape.dims[2 + ax] - 1) + opad[ax] + (o.k[ax] - 1) * o.d[ax] + 1 -
                                y->shape.dims[2 + ax];
                if (total < 0) {
                    lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "ConvTranspose whose output_shape needs negative padding");
                    return GIR_OK;
                }
                bool lower = strcmp(a_str(n, "auto_pad", "NOTSET"), "SAME_LOWER") == 0;
                o.p[ax] = lower ? total - total / 2 : total / 2;
                o.p[2 + ax] = total - o.p[ax];
            }
        }
        want[0] = x->shape.dims[0];
        want[1] = wt->shape.dims[1] * group;
        for (int ax = 0; ax < 2; ax++)
            want[2 + ax] = o.s[ax] * (x->shape.dims[2 + ax] - 1) + opad[ax] + (o.k[ax] - 1) * o.d[ax] + 1 -
                           (o.p[ax] + o.p[2 + ax]);
    } else {
        want[0] = x->shape.dims[0];
        want[1] = wt->shape.dims[0];
        for (int ax = 0; ax < 2; ax++)
            want[2 + ax] = lw_out(x->shape.dims[2 + ax], o.p[ax] + o.p[2 + ax], o.k[ax], o.s[ax], o.d[ax]);
    }
    if (!check_out_shape(w, want))
        return GIR_OK;
    if (b && (b->shape.rank != 1 || b->shape.dims[0] != want[1])) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "%s with a bias that is not 1-D of the output channels",
               gir_op_name(n->op));
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char tb[512];
    const char *bias = b ? b->name : zero_bias(w, x->dtype, want[1], tb, sizeof tb);
    begin_node_op(w, tr ? "deconv2d" : "conv2d");
    IN("src", x->name);
    IN("weight", wt->name);
    IN("bias", bias);
    OUT("dst", y->name);
    P_int(w, "group", group);
    lnw_P_ints(w, "size", o.k, 2);
    lnw_P_ints(w, "stride", o.s, 2);
    if (tr) {
        const gir_attr *od = gir_attrs_find(&n->meta, "lightnet.output_dims");
        int64_t zero[4] = { 0, 0, 0, 0 };
        bool od_ok = od && od->type == GIR_ATTR_INTS && od->u.ints.n == 4;
        if (od_ok)
            for (int i = 0; i < 4; i++)
                if (od->u.ints.v[i] > 0 && od->u.ints.v[i] != want[i])
                    od_ok = false;
        lnw_P_ints(w, "output_dims", od_ok ? od->u.ints.v : zero, 4);
        lnw_P_ints(w, "padding", o.p, 4);
        lnw_P_ints(w, "output_padding", opad, 2);
        lnw_P_ints(w, "dilation", o.d, 2);
        lnw_P_str(w, "autopad", "NOTSET");
    } else {
        lnw_P_ints(w, "dilation", o.d, 2);
        pad_params(w, &o, false);
    }
    return node_done(w);
}

static gir_status w_pool(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    bool global = n->op == GIR_OP_GlobalMaxPool || n->op == GIR_OP_GlobalAveragePool;
    bool maxp = n->op == GIR_OP_MaxPool || n->op == GIR_OP_GlobalMaxPool;
    if (x->shape.rank != 4) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s on %d-D data (LightNet's pooling is 2-D, NCHW)",
               gir_op_name(n->op), x->shape.rank);
        return GIR_OK;
    }
    if (n->n_out > 1 && n->out[1] >= 0 && (lnw_n_consumers(w, n->out[1]) || w->is_output[n->out[1]])) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "MaxPool with its Indices output used");
        return GIR_OK;
    }
    win o;
    if (global) {
        o = (win){ { x->shape.dims[2], x->shape.dims[3] }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } };
    } else {
        if (!get_win(w, &o, NULL))
            return GIR_OK;
        if (o.d[0] != 1 || o.d[1] != 1) {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "MaxPool with dilations other than 1");
            return GIR_OK;
        }
        if (!maxp && a_int(n, "count_include_pad", 0) && (o.p[0] || o.p[1] || o.p[2] || o.p[3])) {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "AveragePool with count_include_pad=1 and padding (LightNet's "
                   "average excludes the padding)");
            return GIR_OK;
        }
    }
    int64_t want[4] = { x->shape.dims[0], x->shape.dims[1], 0, 0 };
    for (int ax = 0; ax < 2; ax++)
        want[2 + ax] = lw_out(x->shape.dims[2 + ax], o.p[ax] + o.p[2 + ax], o.k[ax], o.s[ax], 1);
    if (!check_out_shape(w, want))
        return GIR_OK; /* e.g. ceil_mode=1 where it matters */
    if (!w->emit)
        return GIR_OK;
    begin_unary_op(w, maxp ? "maxpool2d" : "avgpool2d");
    lnw_P_ints(w, "size", o.k, 2);
    lnw_P_ints(w, "stride", o.s, 2);
    pad_params(w, &o, true);
    return node_done(w);
}

/* One-input one-output ops without params (relu, sigmoid, forward). */
static gir_status w_plain(wr *w, const char *optype, bool alias)
{
    if (!check_io(w))
        return GIR_OK;
    const gir_node *n = N(w);
    if (n->op == GIR_OP_Dropout && a_int(n, "training_mode", 0)) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Dropout with training_mode=1");
        return GIR_OK;
    }
    if (n->n_out > 1)
        for (size_t k = 1; k < n->n_out; k++)
            if (n->out[k] >= 0 && (lnw_n_consumers(w, n->out[k]) || w->is_output[n->out[k]])) {
                lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "%s with its second output used", gir_op_name(n->op));
                return GIR_OK;
            }
    if (!w->emit)
        return GIR_OK;
    begin_unary_op(w, optype);
    if (alias)
        mark(w, n->out[0], w->root[n->in[0]]);
    return node_done(w);
}

/* A float param read through LightNet's float slot: the value read from
 * LightNet when it still maps to `canon`, else canon itself. */
static bool float_param(wr *w, const char *pname, double canon, const char *meta)
{
    const gir_node *n = N(w);
    if (!(canon >= FLT_MIN) || !(canon <= FLT_MAX)) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with %s=%g (LightNet reads its `%s` as a float clamped to "
               "[1.18e-38, 3.4e38])", gir_op_name(n->op), n->op == GIR_OP_LeakyRelu ? "alpha" : "epsilon", canon,
               pname);
        return false;
    }
    const gir_attr *m = gir_attrs_find(&n->meta, meta);
    double v = canon;
    if (m && m->type == GIR_ATTR_FLOAT && ln_float_slot(m->u.f) == (float)canon)
        v = m->u.f;
    lnw_P_num(w, pname, v);
    return true;
}

static gir_status w_lrelu(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    double alpha = gir_attrs_get_float(&N(w)->attrs, "alpha", 0.01);
    begin_unary_op(w, "lrelu");
    if (!float_param(w, "negslope", alpha, "lightnet.negslope"))
        return GIR_OK;
    return node_done(w);
}

int64_t lnw_norm_axis(int64_t axis, int rank)
{
    return axis < 0 ? axis + rank : axis;
}

static gir_status w_softmax(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    int64_t axis = lnw_norm_axis(a_int(N(w), "axis", -1), x->shape.rank);
    if (axis < 0 || axis >= x->shape.rank) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, N(w)->name, "Softmax with an axis out of range");
        return GIR_OK;
    }
    begin_unary_op(w, "softmax");
    P_int(w, "axis", axis);
    return node_done(w);
}

static gir_status w_batchnorm(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    if (x->shape.rank != 4) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "BatchNormalization on %d-D data (LightNet's batchnorm takes NCHW)",
               x->shape.rank);
        return GIR_OK;
    }
    if (a_int(n, "training_mode", 0)) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "BatchNormalization with training_mode=1");
        return GIR_OK;
    }
    for (size_t k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0 && (lnw_n_consumers(w, n->out[k]) || w->is_output[n->out[k]])) {
            lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "BatchNormalization with its running statistics outputs used");
            return GIR_OK;
        }
    double eps = gir_attrs_get_float(&n->attrs, "epsilon", 1e-5);
    begin_node_op(w, "batchnorm");
    static const char *const args[] = { "src", "scale", "offset", "mean", "var" };
    for (size_t k = 0; k < 5; k++)
        IN(args[k], in_v(w, k)->name);
    OUT("dst", out_v(w, 0)->name);
    if (!float_param(w, "epsilon", eps, "lightnet.epsilon"))
        return GIR_OK;
    return node_done(w);
}

/* A left-deep chain of two-input ops over the node's inputs (LightNet's
 * elew and concat take exactly two): t1 = op(x0, x1), t2 = op(t1, x2), ...,
 * the last writing the node's output; one input is a forward.  The param is
 * the string pstr when given, else the integer pint. */
static gir_status emit_chain(wr *w, const char *optype, const char *pname, const char *pstr, int64_t pint)
{
    const gir_node *n = N(w);
    char tb[512], prev[512];
    if (n->n_in > 2)
        gir_write_note(w->opts, "node %s: %s of %zu inputs written as a chain of %zu two-input %s ops", n->name,
                       gir_node_op(n), n->n_in, n->n_in - 1, optype);
    if (n->n_in == 1)
        return emit_forward(w);
    snprintf(prev, sizeof prev, "%s", in_v(w, 0)->name);
    for (size_t k = 1; k < n->n_in; k++) {
        bool last = k + 1 == n->n_in;
        const char *dst = chain_dst(w, last, "part", k, tb, sizeof tb);
        begin_chain_op(w, k, optype);
        IN("src1", prev);
        IN("src2", in_v(w, k)->name);
        OUT("dst", dst);
        if (pstr)
            lnw_P_str(w, pname, pstr);
        else
            P_int(w, pname, pint);
        TRY(end_chain_op(w, last, dst, prev, sizeof prev));
    }
    return GIR_OK;
}

/* elew on equal shapes; N-ary Max/Min/Sum become a chain. */
static gir_status w_elew(wr *w, const char *elew_op)
{
    const gir_node *n = N(w);
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *y = out_v(w, 0);
    for (size_t k = 0; k < n->n_in; k++) {
        gir_value *v = in_v(w, k);
        if (!v || !gir_shape_equal(&v->shape, &y->shape)) {
            char b1[128], b2[128];
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with broadcasting (%s to %s; LightNet's elew needs equal "
                   "shapes)", gir_op_name(n->op), v ? gir_shape_str(&v->shape, b1, sizeof b1) : "?",
                   gir_shape_str(&y->shape, b2, sizeof b2));
            return GIR_OK;
        }
    }
    if (!w->emit)
        return GIR_OK;
    return emit_chain(w, "elew", "elew_op", elew_op, 0);
}

/* Reshape, Flatten, Squeeze, Unsqueeze: reshape to the output shape. */
static gir_status w_reshape(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    if (gir_shape_numel(&x->shape) != gir_shape_numel(&y->shape)) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, N(w)->name, "%s that changes the element count", gir_op_name(N(w)->op));
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    begin_unary_op(w, "reshape");
    lnw_P_ints(w, "dims", y->shape.dims, (size_t)y->shape.rank);
    mark(w, N(w)->out[0], w->root[N(w)->in[0]]);
    return node_done(w);
}

static gir_status w_transpose(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    int64_t perm[GIR_MAX_RANK];
    const int64_t *v;
    ptrdiff_t c = a_ints(N(w), "perm", &v);
    int r = x->shape.rank;
    if (c < 0) {
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    } else if (c != r) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, N(w)->name, "Transpose with a perm of the wrong length");
        return GIR_OK;
    } else {
        for (int i = 0; i < r; i++)
            perm[i] = lnw_norm_axis(v[i], r);
    }
    begin_unary_op(w, "transpose");
    lnw_P_ints(w, "axes", perm, (size_t)r);
    return node_done(w);
}

static gir_status w_concat(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *y = out_v(w, 0);
    int64_t axis = lnw_norm_axis(a_int(n, "axis", 0), y->shape.rank);
    if (axis < 0 || axis >= y->shape.rank) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Concat with an axis out of range");
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    /* LightNet concatenates exactly two tensors: more become a chain. */
    return emit_chain(w, "concat", "axis", NULL, axis);
}

/* Slice with step 1: one LightNet slice per sliced axis. */
static gir_status w_slice(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    int r = x->shape.rank;
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    ptrdiff_t ns = a_ints(n, "starts", &st), ne = a_ints(n, "ends", &en);
    ptrdiff_t na = a_ints(n, "axes", &ax), np = a_ints(n, "steps", &sp);
    if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (np >= 0 && np != ns)) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Slice without matching starts/ends/axes/steps");
        return GIR_OK;
    }
    int64_t start[GIR_MAX_RANK], len[GIR_MAX_RANK];
    bool cut[GIR_MAX_RANK] = { false };
    for (int i = 0; i < r; i++) {
        start[i] = 0;
        len[i] = x->shape.dims[i];
    }
    for (ptrdiff_t k = 0; k < ns; k++) {
        int64_t a = lnw_norm_axis(na >= 0 ? ax[k] : k, r);
        if (a < 0 || a >= r || cut[a]) {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Slice with an axis out of range or repeated");
            return GIR_OK;
        }
        if (np >= 0 && sp[k] != 1) {
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Slice with steps=%lld (LightNet's slice takes a contiguous "
                   "range)", (long long)sp[k]);
            return GIR_OK;
        }
        int64_t d = x->shape.dims[a];
        int64_t s0 = st[k] < 0 ? st[k] + d : st[k], e0 = en[k] < 0 ? en[k] + d : en[k];
        s0 = s0 < 0 ? 0 : s0 > d ? d : s0;
        e0 = e0 < 0 ? 0 : e0 > d ? d : e0;
        if (e0 - s0 < 1) {
            lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "Slice giving an empty tensor (LightNet dimensions are > 0)");
            return GIR_OK;
        }
        start[a] = s0;
        len[a] = e0 - s0;
        cut[a] = len[a] != d;
    }
    for (int i = 0; i < r; i++)
        if ((cut[i] ? len[i] : x->shape.dims[i]) != y->shape.dims[i]) {
            lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "Slice whose output shape disagrees with its attributes");
            return GIR_OK;
        }
    if (!w->emit)
        return GIR_OK;
    char tb[512], prev[512];
    int n_cut = 0, done = 0;
    for (int i = 0; i < r; i++)
        n_cut += cut[i];
    snprintf(prev, sizeof prev, "%s", x->name);
    if (n_cut == 0)
        return emit_forward(w);
    for (int i = 0; i < r; i++) {
        if (!cut[i])
            continue;
        done++;
        bool last = done == n_cut;
        const char *dst = chain_dst(w, last, "axis", (size_t)i, tb, sizeof tb);
        begin_chain_op(w, (size_t)done, "slice");
        IN("src", prev);
        OUT("dst", dst);
        P_int(w, "axis", i);
        P_int(w, "start", start[i]);
        P_int(w, "len", len[i]);
        TRY(end_chain_op(w, last, dst, prev, sizeof prev));
    }
    return GIR_OK;
}

/* ReduceMax: one maxreduce per axis, then a reshape without keepdims. */
static gir_status w_reducemax(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    int r = x->shape.rank;
    bool axes[GIR_MAX_RANK] = { false };
    const int64_t *ax;
    ptrdiff_t na = a_ints(n, "axes", &ax);
    if (na <= 0) {
        for (int i = 0; i < r; i++)
            axes[i] = true;
    } else {
        for (ptrdiff_t k = 0; k < na; k++) {
            int64_t a = lnw_norm_axis(ax[k], r);
            if (a < 0 || a >= r) {
                lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "ReduceMax with an axis out of range");
                return GIR_OK;
            }
            axes[a] = true;
        }
    }
    bool keep = a_int(n, "keepdims", 1) != 0;
    if (!w->emit)
        return GIR_OK;
    char nb[512], tb[512], prev[512];
    int total = 0, done = 0;
    for (int i = 0; i < r; i++)
        total += axes[i];
    snprintf(prev, sizeof prev, "%s", x->name);
    for (int i = 0; i < r; i++) {
        if (!axes[i])
            continue;
        done++;
        bool last = done == total && keep;
        const char *dst = chain_dst(w, last, "max", (size_t)i, tb, sizeof tb);
        begin_chain_op(w, (size_t)done, "maxreduce");
        IN("src", prev);
        OUT("dst", dst);
        P_int(w, "axis", i);
        TRY(end_chain_op(w, last, dst, prev, sizeof prev));
    }
    if (!keep) {
        char on[480];
        snprintf(on, sizeof on, "%.400s_reshape", n->name);
        lnw_begin_op(w, lnw_op_name(w, on, nb, sizeof nb), "reshape");
        IN("src", prev);
        OUT("dst", y->name);
        lnw_P_ints(w, "dims", y->shape.dims, (size_t)y->shape.rank);
        return node_done(w);
    }
    return GIR_OK;
}

/* ArgMax -> Cast(int32) [+ ReduceMax on the same axis] = maxreduce_arg. */
static gir_status w_group(wr *w, fgroup *gp)
{
    if (gp->done)
        return GIR_OK;
    int32_t saved = w->cur;
    const gir_node *am = w->g->nodes[gp->argmax], *cast = w->g->nodes[gp->cast];
    const gir_node *rm = gp->rmax >= 0 ? w->g->nodes[gp->rmax] : NULL;
    w->cur = gp->argmax;
    if (!check_io(w)) {
        w->cur = saved;
        return GIR_OK;
    }
    w->cur = saved;
    if (!w->emit)
        return GIR_OK;
    gp->done = true;
    gir_value *x = gir_in(w->g, am, 0);
    int64_t axis = lnw_norm_axis(gir_attrs_get_int(&am->attrs, "axis", 0), x->shape.rank);
    char nb[512], ob[64], tb[512];
    const char *dst;
    if (rm) {
        dst = gir_out(w->g, rm, 0)->name;
    } else {
        char want[480];
        snprintf(want, sizeof want, "%.400s_max", gir_out(w->g, cast, 0)->name);
        dst = tensor_name(w, want, tb, sizeof tb);
    }
    const gir_attr *mo = gir_attrs_find(&am->meta, "lightnet.op");
    const char *want_name = mo && mo->type == GIR_ATTR_STRING ? mo->u.s : rm ? rm->name : am->name;
    w->cur = rm ? gp->rmax : gp->argmax;
    lnw_begin_op(w, lnw_op_name(w, want_name, nb, sizeof nb), generic_optype(w, "maxreduce_arg", ob, sizeof ob));
    IN("src", x->name);
    OUT("dst", dst);
    OUT("arg", gir_out(w->g, cast, 0)->name);
    P_int(w, "axis", axis);
    gir_status st = lnw_end_op(w);
    mark(w, cast->out[0], -1);
    if (rm)
        mark(w, rm->out[0], -1);
    mark(w, am->out[0], -1);
    w->cur = saved;
    return st;
}

/* Resize (nearest) -> resize, or upsample when read from one. */
static gir_status w_resize(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    const char *mode = a_str(n, "mode", "nearest");
    const char *ctm = a_str(n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = a_str(n, "nearest_mode", "round_prefer_floor");
    if (strcmp(mode, "nearest") != 0) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Resize with mode=%s (TensorLight resizes nearest only)", mode);
        return GIR_OK;
    }
    if (y->shape.rank != x->shape.rank) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "Resize changing the rank");
        return GIR_OK;
    }
    /* TensorLight: src = round_half_away(((dst + 0.5) * in/out) - 0.5). */
    bool ok = true;
    for (int i = 0; i < x->shape.rank && ok; i++) {
        int64_t in = x->shape.dims[i], out = y->shape.dims[i];
        if (strcmp(ctm, "half_pixel") == 0) {
            if (strcmp(nm, "round_prefer_ceil") == 0)
                continue;
            if (strcmp(nm, "round_prefer_floor") == 0) {
                /* identical unless some source coordinate is exactly k + 0.5 */
                for (int64_t d = 0; d < out && ok; d++) {
                    int64_t t = (2 * d + 1) * in - out;
                    if (t >= 0 && t % (2 * out) == out)
                        ok = false;
                }
                continue;
            }
            ok = false;
        } else if (strcmp(ctm, "asymmetric") == 0 && strcmp(nm, "floor") == 0) {
            ok = out % in == 0; /* integer upscaling: floor(d / s) is the same index */
        } else {
            ok = false;
        }
    }
    if (!ok) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Resize with coordinate_transformation_mode=%s, nearest_mode=%s "
               "for these sizes (TensorLight maps with half_pixel and rounds halves away from zero)", ctm, nm);
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    const gir_attr *ms = gir_attrs_find(&n->meta, "lightnet.scales");
    bool up = ms && ms->type == GIR_ATTR_FLOATS && ms->u.floats.n == (size_t)x->shape.rank;
    for (int i = 0; up && i < x->shape.rank; i++)
        up = (int64_t)floorf(ln_float_slot(ms->u.floats.v[i]) * (float)x->shape.dims[i]) == y->shape.dims[i];
    begin_unary_op(w, up ? "upsample" : "resize");
    lnw_P_str(w, "mode", "TL_NEAREST");
    if (up)
        lnw_P_nums(w, "scales", ms->u.floats.v, ms->u.floats.n);
    else
        lnw_P_ints(w, "dims", y->shape.dims, (size_t)y->shape.rank);
    return node_done(w);
}

static gir_status w_print(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    const char *file = a_str(n, "file", NULL);
    begin_node_op(w, file ? "fprint" : "print");
    IN("src", in_v(w, 0)->name);
    lnw_P_str(w, "msg", a_str(n, "message", ""));
    if (file)
        lnw_P_str(w, "file", file);
    return node_done(w);
}

/* In-place ops (sort, rearange) overwrite their input's memory: when
 * anything sharing it is read later, or is a graph output, the op reads a
 * copy (a full-range slice) instead. */
static const char *inplace_input(wr *w, size_t k, char *buf, size_t n)
{
    const gir_node *node = N(w);
    int32_t x = node->in[k];
    int32_t root = w->root[x];
    bool hazard = false;
    for (size_t v = 0; v < w->g->n_values && !hazard; v++) {
        if (w->root[v] != root || !w->written[v])
            continue;
        if (w->is_output[v])
            hazard = true;
        for (int32_t c = w->cons_start[v]; c < w->cons_start[v + 1] && !hazard; c++)
            if (w->cons[c] != w->cur && w->pos[w->cons[c]] > w->pos[w->cur])
                hazard = true;
    }
    if (!hazard)
        return lnw_V(w, x)->name;
    char want[480], nb[512];
    snprintf(want, sizeof want, "%.400s_copy", lnw_V(w, x)->name);
    const char *t = tensor_name(w, want, buf, n);
    if (t != buf) { /* never hand back the local `want` */
        snprintf(buf, n, "%s", t);
        t = buf;
    }
    snprintf(want, sizeof want, "%.400s_copy", node->name);
    lnw_begin_op(w, lnw_op_name(w, want, nb, sizeof nb), "slice");
    IN("src", lnw_V(w, x)->name);
    OUT("dst", t);
    P_int(w, "axis", 0);
    P_int(w, "start", 0);
    P_int(w, "len", lnw_V(w, x)->shape.dims[0]);
    if (lnw_end_op(w) != GIR_OK)
        w->op.failed = true;
    return t;
}

static gir_status w_sort(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *k0 = in_v(w, 0);
    if (k0->shape.rank != 1) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "Sort of a %d-D tensor (LightNet sorts 1-D tensors)", k0->shape.rank);
        return GIR_OK;
    }
    if (n->n_in == 2 && in_v(w, 1)->dtype != GIR_DT_I32) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "Sort of %s values (LightNet's sort1d_by_key moves int32 values)",
               gir_dtype_name(in_v(w, 1)->dtype));
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char b0[512], b1[512];
    const char *src_key = inplace_input(w, 0, b0, sizeof b0);
    const char *src_val = n->n_in == 2 ? inplace_input(w, 1, b1, sizeof b1) : NULL;
    begin_node_op(w, n->n_in == 2 ? "sort1d_by_key" : "sort1d");
    IN("src_key", src_key);
    if (src_val)
        IN("src_val", src_val);
    OUT("dst_key", out_v(w, 0)->name);
    if (src_val)
        OUT("dst_val", out_v(w, 1)->name);
    lnw_P_str(w, "dir", a_int(n, "descending", 0) ? "TL_SORT_DIR_DESCENDING" : "TL_SORT_DIR_ASCENDING");
    mark(w, n->out[0], gir_graph_value_index(w->g, src_key) >= 0 ? w->root[n->in[0]] : -1);
    if (src_val)
        mark(w, n->out[1], gir_graph_value_index(w->g, src_val) >= 0 ? w->root[n->in[1]] : -1);
    return node_done(w);
}

static gir_status w_rangefill(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    double start = gir_attrs_get_float(&n->attrs, "start", 0), limit = gir_attrs_get_float(&n->attrs, "limit", 0),
           delta = gir_attrs_get_float(&n->attrs, "delta", 1);
    if (x->shape.rank != 1 || delta == 0 || ceil((limit - start) / delta) != (double)x->shape.dims[0]) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "RangeFill whose range does not cover its 1-D input");
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char b0[512];
    const char *src = inplace_input(w, 0, b0, sizeof b0);
    begin_node_op(w, "rearange");
    IN("src", src);
    OUT("dst", out_v(w, 0)->name);
    lnw_P_num(w, "start", start);
    lnw_P_num(w, "stop", limit);
    lnw_P_num(w, "step", delta);
    mark(w, n->out[0], gir_graph_value_index(w->g, src) >= 0 ? w->root[n->in[0]] : -1);
    return node_done(w);
}

/* The argument name of input k (out: output k) of an op of schema s
 * written from node n: the schema's, else the one the node was read with
 * (meta lightnet.ins / lightnet.outs), else srcK / dstK (into buf). */
static const char *io_arg(const ln_op_schema *s, const gir_node *n, bool out, size_t k, char *buf, size_t len)
{
    const char *const *names = out ? s->outs : s->ins;
    if (names[0])
        return names[k];
    const gir_attr *m = gir_attrs_find(&n->meta, out ? "lightnet.outs" : "lightnet.ins");
    if (m && m->type == GIR_ATTR_STRINGS && m->u.strs.n == (out ? n->n_out : n->n_in))
        return m->u.strs.v[k];
    snprintf(buf, len, "%s%zu", out ? "dst" : "src", k + 1);
    return buf;
}

/* Operators whose LightNet op has the same arguments and params by name. */
static gir_status w_direct(wr *w, const char *optype)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    const ln_op_schema *s = ln_schema_find(optype);
    if (n->op == GIR_OP_GatherBlocks && in_v(w, 1)->dtype != GIR_DT_I32) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, n->name, "GatherBlocks with %s indices (LightNet's pick1d takes int32)",
               gir_dtype_name(in_v(w, 1)->dtype));
        return GIR_OK;
    }
    if ((n->op == GIR_OP_Stack || n->op == GIR_OP_Unstack) && a_int(n, "axis", 0) != 0) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s along axis %lld (LightNet's %s works on axis 0)",
               gir_op_name(n->op), (long long)a_int(n, "axis", 0), optype);
        return GIR_OK;
    }
    begin_node_op(w, optype);
    char a[32];
    for (size_t k = 0; k < n->n_in; k++)
        IN(io_arg(s, n, false, k, a, sizeof a), in_v(w, k)->name);
    for (size_t k = 0; k < n->n_out; k++)
        OUT(io_arg(s, n, true, k, a, sizeof a), out_v(w, k)->name);
    switch (n->op) {
    case GIR_OP_GatherBlocks:
        P_int(w, "len", a_int(n, "count", 1));
        P_int(w, "stride", a_int(n, "block_size", 1));
        break;
    case GIR_OP_SqueezeDetBoxDecode: {
        static const char *const k6[] = { "width", "height", "img_width", "img_height", "x_shift", "y_shift" };
        for (int i = 0; i < 6; i++)
            P_int(w, k6[i], a_int(n, k6[i], 0));
        break;
    }
    case GIR_OP_YoloV3Decode:
        P_int(w, "img_width", a_int(n, "img_width", 1));
        P_int(w, "img_height", a_int(n, "img_height", 1));
        break;
    case GIR_OP_SubMean: {
        const double *m;
        ptrdiff_t c = gir_attrs_get_floats(&n->attrs, "mean", &m);
        if (c == 3)
            lnw_P_nums(w, "mean", m, 3);
        else
            lnw_refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "SubMean without 3 means");
        lnw_P_str(w, "dtype", ln_dtype_name(out_v(w, 0)->dtype));
        break;
    }
    default: break;
    }
    return node_done(w);
}

/* Opaque nodes kept from LightNet (tensorrt, ldmr, ...) are written back
 * verbatim; others only with allow-opaque. */
static gir_status w_opaque(wr *w)
{
    const gir_node *n = N(w);
    if (gir_opaque_policy(n, "lightnet", w->allow_opaque) == GIR_OPAQUE_REFUSE) {
        lnw_refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "%s operator %s (opaque)", n->opaque_format ? n->opaque_format : "?",
               n->opaque_op ? n->opaque_op : "?");
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char nb[512];
    lnw_begin_op(w, node_opname(w, nb, sizeof nb), n->opaque_op ? n->opaque_op : "opaque");
    const gir_attr *mi = gir_attrs_find(&n->meta, "lightnet.ins"), *mo = gir_attrs_find(&n->meta, "lightnet.outs");
    const gir_attr *mb = gir_attrs_find(&n->meta, "lightnet.bools");
    for (size_t k = 0; k < n->n_in; k++) {
        char a[32];
        snprintf(a, sizeof a, "src%zu", k);
        IN(mi && mi->type == GIR_ATTR_STRINGS && k < mi->u.strs.n ? mi->u.strs.v[k] : a,
           in_v(w, k) ? in_v(w, k)->name : "");
    }
    for (size_t k = 0; k < n->n_out; k++) {
        char a[32];
        snprintf(a, sizeof a, "dst%zu", k);
        OUT(mo && mo->type == GIR_ATTR_STRINGS && k < mo->u.strs.n ? mo->u.strs.v[k] : a, out_v(w, k)->name);
    }
    for (size_t k = 0; k < n->attrs.n; k++) {
        const gir_attr *a = &n->attrs.items[k];
        bool is_bool = false;
        for (size_t q = 0; mb && mb->type == GIR_ATTR_STRINGS && q < mb->u.strs.n; q++)
            if (strcmp(mb->u.strs.v[q], a->name) == 0)
                is_bool = true;
        switch (a->type) {
        case GIR_ATTR_INT:
        case GIR_ATTR_BOOL:
            if (is_bool || a->type == GIR_ATTR_BOOL)
                lnw_P_bool(w, a->name, a->u.i != 0);
            else
                P_int(w, a->name, a->u.i);
            break;
        case GIR_ATTR_FLOAT: lnw_P_num(w, a->name, a->u.f); break;
        case GIR_ATTR_STRING: lnw_P_str(w, a->name, a->u.s); break;
        case GIR_ATTR_INTS:
            if (is_bool)
                P_strs(w, a->name, NULL, a->u.ints.n, true, a->u.ints.v);
            else
                lnw_P_ints(w, a->name, a->u.ints.v, a->u.ints.n);
            break;
        case GIR_ATTR_FLOATS: lnw_P_nums(w, a->name, a->u.floats.v, a->u.floats.n); break;
        case GIR_ATTR_STRINGS: P_strs(w, a->name, a->u.strs.v, a->u.strs.n, false, NULL); break;
        case GIR_ATTR_TENSOR: break;
        }
    }
    return node_done(w);
}

gir_status lnw_write_node(wr *w, int32_t ni)
{
    w->cur = ni;
    const gir_node *n = N(w);
    if (w->group_of[ni] >= 0) {
        fgroup *gp = &w->groups[w->group_of[ni]];
        /* the creates of the shared input first */
        w->cur = gp->argmax;
        gir_status st = emit_inputs(w);
        w->cur = ni;
        if (st)
            return st;
        return w_group(w, gp);
    }
    gir_status st = emit_inputs(w);
    if (st)
        return st;
    switch (n->op) {
    case GIR_OP_Conv:
    case GIR_OP_ConvTranspose: return w_conv(w);
    case GIR_OP_MaxPool:
    case GIR_OP_AveragePool:
    case GIR_OP_GlobalMaxPool:
    case GIR_OP_GlobalAveragePool: return w_pool(w);
    case GIR_OP_Identity:
    case GIR_OP_Dropout: return w_plain(w, "forward", true);
    case GIR_OP_LeakyRelu: return w_lrelu(w);
    case GIR_OP_Softmax: return w_softmax(w);
    case GIR_OP_BatchNormalization: return w_batchnorm(w);
    case GIR_OP_Add: return w_elew(w, "TL_SUM");
    case GIR_OP_Sum: return w_elew(w, "TL_SUM");
    case GIR_OP_Sub: return w_elew(w, "TL_SUB");
    case GIR_OP_Mul: return w_elew(w, "TL_MUL");
    case GIR_OP_Div: return w_elew(w, "TL_DIV");
    case GIR_OP_Pow: return w_elew(w, "TL_POW");
    case GIR_OP_Max: return w_elew(w, "TL_MAX");
    case GIR_OP_Min: return w_elew(w, "TL_MIN");
    case GIR_OP_Reshape:
    case GIR_OP_Flatten:
    case GIR_OP_Squeeze:
    case GIR_OP_Unsqueeze: return w_reshape(w);
    case GIR_OP_Transpose: return w_transpose(w);
    case GIR_OP_Concat: return w_concat(w);
    case GIR_OP_Slice: return w_slice(w);
    case GIR_OP_ReduceMax: return w_reducemax(w);
    case GIR_OP_Resize: return w_resize(w);
    case GIR_OP_Print: return w_print(w);
    case GIR_OP_Sort: return w_sort(w);
    case GIR_OP_RangeFill: return w_rangefill(w);
    case GIR_OP_GatherBlocks: return w_direct(w, "pick1d");
    case GIR_OP_SqueezeDetBoxDecode: return w_direct(w, "transform_bboxSQD");
    case GIR_OP_YoloV3Decode: return w_direct(w, "detect_yolov3");
    case GIR_OP_SubMean: return w_direct(w, "submean");
    case GIR_OP_DotProduct: return w_direct(w, "dot_product");
    case GIR_OP_Stack: return w_direct(w, "gather");
    case GIR_OP_Unstack: return w_direct(w, "scatter");
    case GIR_OP_OPAQUE: return w_opaque(w);
    case GIR_OP_ArgMax:
        lnw_refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "ArgMax not followed by a Cast to int32 alone (LightNet's "
               "maxreduce_arg gives int32 indices, keepdims=1, first maximum)");
        return GIR_OK;
    case GIR_OP_Tanh:
        lnw_refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "Tanh (LightNet has no tanh op)");
        return GIR_OK;
    default: {
        const gir_op_map *plain = gir_map_write_row(ln_ops, n->op, NULL);
        if (plain && plain->n_in == n->n_in)
            return w_plain(w, plain->format_op, false);
        lnw_refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "%s", gir_op_name(n->op));
        return GIR_OK;
    }
    }
}
