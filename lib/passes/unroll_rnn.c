/* Unrolling LSTM, GRU and RNN nodes over a known sequence length into
 * Split, Squeeze, Gemm, Add, Sub, Mul, the activations, Clip, Unsqueeze and
 * Concat: the exact decomposition of ONNX's equations for targets without
 * recurrent operators.  Needs constant W, R (and B, P), a known sequence
 * length, and a known batch size when there is no initial state;
 * sequence_lens must be absent or a constant equal to the sequence length
 * for every batch row. */
#include "passes/unroll_rnn.h"

#include "ops/rnn.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ub {
    gir_graph *g;
    const gir_node *n;
    const char *base; /* node name, for new names */
    gir_error *err;
    gir_status st;
} ub;

/* A new node of op with n_in inputs; its output is value `to` when >= 0,
 * else a new intermediate value.  *out gets the output value.  NULL after
 * a failure (u->st set). */
static gir_node *mk(ub *u, gir_op op, size_t n_in, const int32_t *in, int32_t to, int32_t *out)
{
    if (u->st)
        return NULL;
    char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", u->base, gir_op_name(op));
    const char *name = gir_graph_unique_node_name(u->g, buf, u->err);
    gir_node *nd;
    if (!name)
        return u->st = GIR_E_NOMEM, NULL;
    if ((u->st = gir_graph_add_node(u->g, name, op, n_in, 1, &nd, u->err)))
        return NULL;
    memcpy(nd->in, in, n_in * sizeof *in);
    if (to >= 0) {
        u->st = gir_node_set_output(u->g, nd, 0, to, u->err);
    } else {
        const char *vn = gir_graph_unique_value_name(u->g, name, u->err);
        u->st = vn ? gir_node_make_output(u->g, nd, 0, vn, u->err) : GIR_E_NOMEM;
    }
    if (u->st)
        return NULL;
    *out = nd->out[0];
    return nd;
}

static int32_t op1(ub *u, gir_op op, int32_t a)
{
    int32_t o = -1;
    mk(u, op, 1, &a, -1, &o);
    return o;
}

static int32_t op2(ub *u, gir_op op, int32_t a, int32_t b)
{
    int32_t o = -1;
    mk(u, op, 2, (int32_t[]){ a, b }, -1, &o);
    return o;
}

static void set_ints(ub *u, gir_node *nd, const char *name, const int64_t *v, size_t k)
{
    if (!u->st && nd)
        u->st = gir_attrs_set_ints(u->g, &nd->attrs, name, v, k, u->err);
}

static void set_int(ub *u, gir_node *nd, const char *name, int64_t v)
{
    if (!u->st && nd)
        u->st = gir_attrs_set_int(u->g, &nd->attrs, name, v, u->err);
}

static void set_float(ub *u, gir_node *nd, const char *name, double v)
{
    if (!u->st && nd)
        u->st = gir_attrs_set_float(u->g, &nd->attrs, name, v, u->err);
}

/* A float32 constant of shape dims (copied). */
static int32_t cst(ub *u, const char *tag, int rank, const int64_t *dims, const float *data)
{
    if (u->st)
        return -1;
    gir_shape s = { rank, { 0 } };
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    gir_tensor *t;
    if ((u->st = gir_tensor_new(GIR_DT_F32, &s, &t, u->err)))
        return -1;
    if (t->nbytes)
        memcpy(t->data, data, (size_t)t->nbytes);
    int32_t idx = -1;
    u->st = gir_graph_add_const_named(u->g, t, &idx, u->err, "%s/%s", u->base, tag);
    return idx;
}

/* Splits x along axis into k parts of the given sizes. */
static void split(ub *u, int32_t x, int axis, const int64_t *sizes, size_t k, int32_t *parts)
{
    if (u->st)
        return;
    char buf[256];
    snprintf(buf, sizeof buf, "%s/Split", u->base);
    const char *name = gir_graph_unique_node_name(u->g, buf, u->err);
    gir_node *sp;
    if (!name) {
        u->st = GIR_E_NOMEM;
        return;
    }
    if ((u->st = gir_graph_add_node(u->g, name, GIR_OP_Split, 1, k, &sp, u->err)))
        return;
    sp->in[0] = x;
    set_int(u, sp, "axis", axis);
    set_ints(u, sp, "split", sizes, k);
    for (size_t i = 0; i < k && !u->st; i++) {
        snprintf(buf, sizeof buf, "%s_%zu", name, i);
        const char *vn = gir_graph_unique_value_name(u->g, buf, u->err);
        u->st = vn ? gir_node_make_output(u->g, sp, i, vn, u->err) : GIR_E_NOMEM;
        if (!u->st)
            parts[i] = sp->out[i];
    }
}

/* Splits x along axis into k parts of size 1 each and squeezes the axis. */
static void unstack(ub *u, int32_t x, int axis, size_t k, int32_t *parts)
{
    if (u->st)
        return;
    int64_t *ones = malloc(k * sizeof *ones);
    int32_t *sp = malloc(k * sizeof *sp);
    if (!ones || !sp)
        u->st = gir_nomem(u->err);
    for (size_t i = 0; i < k && !u->st; i++)
        ones[i] = 1;
    split(u, x, axis, ones, k, sp);
    for (size_t i = 0; i < k && !u->st; i++) {
        gir_node *sq = mk(u, GIR_OP_Squeeze, 1, &sp[i], -1, &parts[i]);
        set_ints(u, sq, "axes", (const int64_t[]){ axis }, 1);
    }
    free(ones);
    free(sp);
}

/* Splits x [B, k*H] along axis 1 into k parts [B, H]. */
static void split_cols(ub *u, int32_t x, size_t k, int64_t H, int32_t *parts)
{
    split(u, x, 1, (const int64_t[]){ H, H, H, H }, k, parts);
}

/* act(clip(x)) */
static int32_t activate(ub *u, const gir_rnn_desc *d, const gir_rnn_fn *f, int32_t x, bool clip)
{
    if (clip && d->has_clip) {
        gir_node *c = mk(u, GIR_OP_Clip, 1, &x, -1, &x);
        set_float(u, c, "min", -(double)d->clip);
        set_float(u, c, "max", (double)d->clip);
    }
    gir_node *a;
    int32_t y = -1;
    switch (f->act) {
    case GIR_RNN_RELU: return op1(u, GIR_OP_Relu, x);
    case GIR_RNN_TANH: return op1(u, GIR_OP_Tanh, x);
    case GIR_RNN_SIGMOID: return op1(u, GIR_OP_Sigmoid, x);
    case GIR_RNN_SOFTSIGN: return op1(u, GIR_OP_Softsign, x);
    case GIR_RNN_SOFTPLUS: return op1(u, GIR_OP_Softplus, x);
    case GIR_RNN_LEAKYRELU:
        a = mk(u, GIR_OP_LeakyRelu, 1, &x, -1, &y);
        set_float(u, a, "alpha", f->alpha);
        return y;
    case GIR_RNN_ELU:
        a = mk(u, GIR_OP_Elu, 1, &x, -1, &y);
        set_float(u, a, "alpha", f->alpha);
        return y;
    case GIR_RNN_HARDSIGMOID:
        a = mk(u, GIR_OP_HardSigmoid, 1, &x, -1, &y);
        set_float(u, a, "alpha", f->alpha);
        set_float(u, a, "beta", f->beta);
        return y;
    case GIR_RNN_AFFINE:
        y = op2(u, GIR_OP_Mul, x, cst(u, "alpha", 1, (int64_t[]){ 1 }, &f->alpha));
        return op2(u, GIR_OP_Add, y, cst(u, "beta", 1, (int64_t[]){ 1 }, &f->beta));
    case GIR_RNN_SCALEDTANH:
        y = op2(u, GIR_OP_Mul, x, cst(u, "beta", 1, (int64_t[]){ 1 }, &f->beta));
        y = op1(u, GIR_OP_Tanh, y);
        return op2(u, GIR_OP_Mul, y, cst(u, "alpha", 1, (int64_t[]){ 1 }, &f->alpha));
    case GIR_RNN_THRESHOLDEDRELU: {
        /* x where x > alpha, else 0 */
        int32_t gt = op2(u, GIR_OP_Greater, x, cst(u, "alpha", 1, (int64_t[]){ 1 }, &f->alpha));
        float zero = 0.0f;
        int32_t o = -1;
        mk(u, GIR_OP_Where, 3, (int32_t[]){ gt, x, cst(u, "zero", 1, (int64_t[]){ 1 }, &zero) }, -1, &o);
        return o;
    }
    case GIR_RNN_ACT_COUNT_: break;
    }
    return x;
}

/* a * b^T + c */
static int32_t gemm(ub *u, int32_t a, int32_t b, int32_t c)
{
    int32_t o = -1;
    gir_node *gm = mk(u, GIR_OP_Gemm, 3, (int32_t[]){ a, b, c }, -1, &o);
    set_int(u, gm, "transB", 1);
    return o;
}

gir_status gir_rnn_unroll(gir_graph *g, gir_node *n, gir_error *err)
{
    gir_rnn_desc d;
    TRY(gir_rnn_desc_read(n, &d, err));
    const char *op = gir_op_name(n->op);
    const gir_value *x = gir_in(g, n, 0);
    if (!x || x->shape.rank != 3 || x->shape.dims[d.layout ? 1 : 0] < 1 || x->shape.dims[2] < 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "%s cannot be unrolled: the sequence length of X is not known", op);
    if (x->dtype != GIR_DT_F32)
        return gir_fail(err, GIR_E_UNSUPPORTED, "%s of %s cannot be unrolled (float32 only)", op,
                        gir_dtype_name(x->dtype));
    size_t T = (size_t)x->shape.dims[d.layout ? 1 : 0], I = (size_t)x->shape.dims[2];
    int64_t Bd = x->shape.dims[d.layout ? 0 : 1];
    size_t H = (size_t)d.hidden, G = (size_t)d.gates, GH = G * H, D = (size_t)d.dirs;
    if (T > 4096)
        return gir_fail(err, GIR_E_LIMIT, "%s over %zu steps is too long to unroll (at most 4096)", op, T);
    const gir_value *wv = gir_in(g, n, 1), *rv = gir_in(g, n, 2);
    if (!wv || !rv || wv->shape.rank != 3 || wv->shape.dims[0] != (int64_t)D || wv->shape.dims[1] != (int64_t)GH ||
        wv->shape.dims[2] != (int64_t)I || rv->shape.rank != 3 || rv->shape.dims[2] != (int64_t)H)
        return gir_fail(err, GIR_E_SHAPE, "%s weights do not fit X and hidden_size", op);
    const gir_value *sl = gir_in(g, n, 4);
    if (sl) {
        const void *p = NULL;
        if (!sl->data || sl->dtype != GIR_DT_I32)
            return gir_fail(err, GIR_E_UNSUPPORTED, "%s cannot be unrolled: sequence_lens is not a constant", op);
        TRY(gir_tensor_load(sl->data, &p, err));
        for (size_t b = 0; b < (size_t)gir_shape_numel(&sl->shape); b++)
            if (((const int32_t *)p)[b] != (int32_t)T)
                return gir_fail(err, GIR_E_UNSUPPORTED, "%s cannot be unrolled: sequence_lens[%zu] is %d, not the "
                                "sequence length %zu", op, b, ((const int32_t *)p)[b], T);
    }
    int32_t h0v = n->n_in > 5 ? n->in[5] : -1, c0v = n->op == GIR_OP_LSTM && n->n_in > 6 ? n->in[6] : -1;
    if ((h0v < 0 || (n->op == GIR_OP_LSTM && c0v < 0)) && Bd < 1)
        return gir_fail(err, GIR_E_UNSUPPORTED, "%s cannot be unrolled: no initial state and the batch size is not "
                        "known", op);
    size_t n_live = 0;
    for (size_t k = 0; k < n->n_out; k++)
        n_live += n->out[k] >= 0;
    if (!n_live)
        return gir_fail(err, GIR_E_UNSUPPORTED, "%s has no output in use", op);

    ub u = { g, n, n->name, err, GIR_OK };
    int step_axis = d.layout ? 1 : 0, dir_axis = d.layout ? 1 : 0;
    int32_t *xs = calloc(T, sizeof *xs), *ys = calloc(T * D, sizeof *ys);
    int32_t h0[2] = { -1, -1 }, c0[2] = { -1, -1 }, hT[2] = { -1, -1 }, cT[2] = { -1, -1 };
    if (!xs || !ys) {
        free(xs);
        free(ys);
        return gir_nomem(err);
    }
    unstack(&u, n->in[0], step_axis, T, xs);
    if (h0v >= 0)
        unstack(&u, h0v, dir_axis, D, h0);
    if (c0v >= 0)
        unstack(&u, c0v, dir_axis, D, c0);
    int32_t Ws[2] = { -1, -1 }, Rs[2] = { -1, -1 }, Bv[2] = { -1, -1 }, Pv[2] = { -1, -1 };
    unstack(&u, n->in[1], 0, D, Ws);
    unstack(&u, n->in[2], 0, D, Rs);
    if (n->n_in > 3 && n->in[3] >= 0)
        unstack(&u, n->in[3], 0, D, Bv);
    if (n->op == GIR_OP_LSTM && n->n_in > 7 && n->in[7] >= 0)
        unstack(&u, n->in[7], 0, D, Pv);
    float *zeros = calloc((size_t)(Bd > 0 ? Bd : 1) * H + 2 * GH, sizeof *zeros);
    if (!zeros)
        u.st = gir_nomem(err);
    const float one = 1.0f;
    int32_t onev = cst(&u, "one", 1, (int64_t[]){ 1 }, &one);
    for (size_t dr = 0; dr < D && !u.st; dr++) {
        bool rev = d.direction == GIR_RNN_REVERSE || dr == 1;
        const gir_rnn_fn *fn = d.fn[dr];
        int32_t h = h0[dr], c = c0[dr];
        if (h < 0)
            h = cst(&u, "h0", 2, (int64_t[]){ Bd, (int64_t)H }, zeros);
        if (n->op == GIR_OP_LSTM && c < 0)
            c = cst(&u, "c0", 2, (int64_t[]){ Bd, (int64_t)H }, zeros);
        /* the biases: Wb and Rb */
        int32_t wb = -1, rb = -1, Wt = Ws[dr], Rt = Rs[dr], Rzr = -1, Rh = -1, bx = -1, bzr = -1, bh = -1;
        if (Bv[dr] >= 0) {
            int32_t wr[2] = { -1, -1 };
            split(&u, Bv[dr], 0, (const int64_t[]){ (int64_t)GH, (int64_t)GH }, 2, wr);
            wb = wr[0];
            rb = wr[1];
        } else {
            wb = rb = cst(&u, "B", 1, (int64_t[]){ (int64_t)GH }, zeros);
        }
        if (n->op == GIR_OP_GRU) {
            int32_t rp[2] = { -1, -1 }, bp[2] = { -1, -1 };
            split(&u, Rt, 0, (const int64_t[]){ 2 * (int64_t)H, (int64_t)H }, 2, rp);
            split(&u, rb, 0, (const int64_t[]){ 2 * (int64_t)H, (int64_t)H }, 2, bp);
            Rzr = rp[0];
            Rh = rp[1];
            bzr = bp[0];
            bh = bp[1];
            bx = wb;
        } else {
            bx = op2(&u, GIR_OP_Add, wb, rb);
        }
        int32_t pio[3] = { -1, -1, -1 }, pi = -1, po = -1, pf = -1;
        bool P = Pv[dr] >= 0;
        if (P) {
            split(&u, Pv[dr], 0, (const int64_t[]){ (int64_t)H, (int64_t)H, (int64_t)H }, 3, pio);
            pi = pio[0];
            po = pio[1];
            pf = pio[2];
        }
        for (size_t s = 0; s < T && !u.st; s++) {
            size_t t = rev ? T - 1 - s : s;
            int32_t xt = xs[t];
            if (n->op == GIR_OP_RNN) {
                int32_t a = gemm(&u, h, Rt, gemm(&u, xt, Wt, bx));
                h = activate(&u, &d, &fn[0], a, true);
            } else if (n->op == GIR_OP_LSTM) {
                int32_t a = gemm(&u, h, Rt, gemm(&u, xt, Wt, bx)), gt[4] = { -1, -1, -1, -1 };
                split_cols(&u, a, 4, (int64_t)H, gt);
                int32_t gi = gt[0], go = gt[1], gf = gt[2], gc = gt[3];
                if (P) {
                    gi = op2(&u, GIR_OP_Add, gi, op2(&u, GIR_OP_Mul, pi, c));
                    gf = op2(&u, GIR_OP_Add, gf, op2(&u, GIR_OP_Mul, pf, c));
                }
                int32_t i = activate(&u, &d, &fn[0], gi, true);
                int32_t f = d.input_forget ? op2(&u, GIR_OP_Sub, onev, i) : activate(&u, &d, &fn[0], gf, true);
                int32_t cc = activate(&u, &d, &fn[1], gc, true);
                c = op2(&u, GIR_OP_Add, op2(&u, GIR_OP_Mul, f, c), op2(&u, GIR_OP_Mul, i, cc));
                if (P)
                    go = op2(&u, GIR_OP_Add, go, op2(&u, GIR_OP_Mul, po, c));
                int32_t o = activate(&u, &d, &fn[0], go, true);
                h = op2(&u, GIR_OP_Mul, o, activate(&u, &d, &fn[2], c, false));
            } else {
                int32_t gx[3] = { -1, -1, -1 }, gr[2] = { -1, -1 };
                split_cols(&u, gemm(&u, xt, Wt, bx), 3, (int64_t)H, gx);
                split_cols(&u, gemm(&u, h, Rzr, bzr), 2, (int64_t)H, gr);
                int32_t z = activate(&u, &d, &fn[0], op2(&u, GIR_OP_Add, gx[0], gr[0]), true);
                int32_t r = activate(&u, &d, &fn[0], op2(&u, GIR_OP_Add, gx[1], gr[1]), true);
                int32_t pre;
                if (d.linear_before_reset)
                    pre = op2(&u, GIR_OP_Add, gx[2], op2(&u, GIR_OP_Mul, r, gemm(&u, h, Rh, bh)));
                else
                    pre = op2(&u, GIR_OP_Add, gx[2], gemm(&u, op2(&u, GIR_OP_Mul, r, h), Rh, bh));
                int32_t ht = activate(&u, &d, &fn[1], pre, true);
                h = op2(&u, GIR_OP_Add, op2(&u, GIR_OP_Mul, op2(&u, GIR_OP_Sub, onev, z), ht),
                        op2(&u, GIR_OP_Mul, z, h));
            }
            if (n->out[0] >= 0) {
                gir_node *us = mk(&u, GIR_OP_Unsqueeze, 1, &h, -1, &ys[dr * T + t]);
                if (d.layout)
                    set_ints(&u, us, "axes", (const int64_t[]){ 1, 2 }, 2);
                else
                    set_ints(&u, us, "axes", (const int64_t[]){ 0, 1 }, 2);
            }
        }
        hT[dr] = h;
        cT[dr] = c;
    }
    free(zeros);
    /* the outputs: Y by Concat over time (and directions), Y_h / Y_c by
     * Unsqueeze and Concat over directions; the last one made takes the
     * place of the recurrent node */
    int32_t finals[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
    size_t n_fin[3] = { 0, 0, 0 };
    for (size_t k = 0; k < n->n_out && !u.st; k++) {
        if (n->out[k] < 0)
            continue;
        for (size_t dr = 0; dr < D; dr++) {
            if (k == 0) {
                if (D == 1) {
                    finals[0][0] = -1; /* concatenated below, straight into Y */
                    break;
                }
                gir_node *cc = mk(&u, GIR_OP_Concat, T, ys + dr * T, -1, &finals[0][dr]);
                set_int(&u, cc, "axis", d.layout ? 1 : 0);
            } else {
                gir_node *us = mk(&u, GIR_OP_Unsqueeze, 1, k == 1 ? &hT[dr] : &cT[dr], -1, &finals[k][dr]);
                set_ints(&u, us, "axes", (const int64_t[]){ d.layout ? 1 : 0 }, 1);
            }
        }
        n_fin[k] = k == 0 && D == 1 ? T : D;
    }
    free(xs);
    if (u.st) {
        free(ys);
        return u.st;
    }
    /* final nodes: every live output but the last gets a new Concat; the
     * recurrent node itself becomes the last one's Concat */
    size_t last = n->n_out;
    while (last > 0 && n->out[last - 1] < 0)
        last--;
    last--;
    int32_t outs[3] = { -1, -1, -1 };
    for (size_t k = 0; k < n->n_out && k < 3; k++) {
        outs[k] = n->out[k];
        n->out[k] = -1; /* the values move to their new producers */
        if (outs[k] >= 0)
            g->values[outs[k]]->producer = -1;
    }
    for (size_t k = 0; k < 3 && !u.st; k++) {
        if (outs[k] < 0)
            continue;
        const int32_t *ins = k == 0 && D == 1 ? ys : finals[k];
        int64_t axis = k == 0 ? (D == 1 ? (d.layout ? 1 : 0) : (d.layout ? 2 : 1)) : (d.layout ? 1 : 0);
        if (k != last) {
            int32_t o = -1;
            gir_node *cc = mk(&u, GIR_OP_Concat, n_fin[k], ins, outs[k], &o);
            set_int(&u, cc, "axis", axis);
            continue;
        }
        int32_t keep = outs[k];
        gir_attrs_free(&n->attrs);
        memset(&n->attrs, 0, sizeof n->attrs);
        gir_attrs_free(&n->meta);
        memset(&n->meta, 0, sizeof n->meta);
        n->op = GIR_OP_Concat;
        if ((u.st = gir_node_resize_inputs(g, n, n_fin[k], err)))
            break;
        memcpy(n->in, ins, n_fin[k] * sizeof *ins);
        n->n_out = 1;
        if ((u.st = gir_node_set_output(g, n, 0, keep, err)))
            break;
        set_int(&u, n, "axis", axis);
    }
    free(ys);
    return u.st;
}

gir_status gir_rnn_unroll_all(gir_graph *g, size_t *count, gir_error *err)
{
    size_t done = 0;
    size_t n0 = g->n_nodes;
    for (size_t i = 0; i < n0; i++) {
        gir_node *n = g->nodes[i];
        if (n->op != GIR_OP_LSTM && n->op != GIR_OP_GRU && n->op != GIR_OP_RNN)
            continue;
        TRY(gir_err_in_node(gir_rnn_unroll(g, n, err), err, n->name));
        done++;
    }
    if (count)
        *count = done;
    return done ? gir_graph_finish(g, err) : GIR_OK;
}
