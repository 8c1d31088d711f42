/* MXNet's fused RNN operator, read into the canonical recurrent operators.
 *
 * RNN(data [T, N, I], parameters (one flat vector), state [L*D, N, H],
 * state_cell [L*D, N, H] for lstm) -> out [T, N, D*H], and with
 * state_outputs: hy [L*D, N, H], cy (lstm).  mode is rnn_relu, rnn_tanh,
 * lstm or gru; num_layers L; bidirectional gives D = 2; state_size H.
 *
 * The parameter vector holds, for each layer and then each direction, the
 * input weights [G*H, in] and the recurrent weights [G*H, H] (in = I for
 * the first layer, D*H after), then for each layer and direction the input
 * bias [G*H] and the recurrent bias [G*H].  Gates are cuDNN's: lstm i, f,
 * g, o; gru r, z, n, the reset applied after the recurrent product (ONNX's
 * linear_before_reset).  The input size I follows from the vector's length.
 *
 * Each layer becomes one LSTM/GRU/RNN node with its weights unpacked into
 * ONNX's gate order; between layers and for out, Y [T, D, N, H] becomes
 * [T, N, D*H] (Squeeze for one direction, Transpose and Reshape for two);
 * a layer's initial states are a Slice of state.  Kept verbatim: a
 * projection (projection_size), cell clipping (lstm_state_clip_*),
 * sequence lengths (use_sequence_length), parameters that are not
 * constants (no weights file). */
#include "ops.h"

#include "ops/rnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const nn_k_rnn_mx[] = { "state_size",          "num_layers",          "bidirectional",
                                    "mode",                "p",                   "state_outputs",
                                    "projection_size",     "lstm_state_clip_min", "lstm_state_clip_max",
                                    "lstm_state_clip_nan", "use_sequence_length", NULL };

size_t nn_mx_rnn_outputs(const nn_node *n)
{
    const char *so = nn_node_attr(n, "state_outputs");
    const char *mode = nn_node_attr(n, "mode");
    bool states = false;
    if (so && !nn_is_none(so) && !nn_parse_bool(so, &states))
        states = false;
    if (!states)
        return 1;
    return mode && strcmp(mode, "lstm") == 0 ? 3 : 2;
}

typedef struct rnn_mode {
    const char *name;
    gir_op op;
    int gates;
    int perm[4]; /* ONNX gate k is MXNet gate perm[k] */
} rnn_mode;

static const rnn_mode modes[] = {
    { "lstm", GIR_OP_LSTM, 4, { 0, 3, 1, 2 } }, /* i, o, f, c <- i, f, g, o */
    { "gru", GIR_OP_GRU, 3, { 1, 0, 2, 0 } },   /* z, r, h <- r, z, n */
    { "rnn_tanh", GIR_OP_RNN, 1, { 0 } },
    { "rnn_relu", GIR_OP_RNN, 1, { 0 } },
};

/* A float32 constant "<node>_<tag>" of the given shape, taking data. */
static gir_status add_const(nn_reader *r, size_t idx, const char *tag, int rank, const int64_t *dims, float *data,
                            int32_t *v, gir_error *err)
{
    gir_shape s = { rank, { 0 } };
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    gir_tensor *t;
    gir_status st = gir_tensor_adopt(GIR_DT_F32, &s, data, &t, err);
    if (st) {
        free(data);
        return st;
    }
    return gir_graph_add_const_named(r->g, t, v, err, "%s_%s", r->raw->nodes[idx].name, tag);
}

/* Slice [from, to) of axis 0 of v. */
static gir_status slice0(nn_reader *r, size_t idx, const char *tag, int32_t v, int64_t from, int64_t to, int32_t *out,
                         gir_error *err)
{
    gir_node *n;
    TRY(nn_rd_part(r, idx, tag, GIR_OP_Slice, 1, 1, &n, err));
    n->in[0] = v;
    if (gir_attrs_set_ints(r->g, &n->attrs, "starts", &from, 1, err) || gir_attrs_set_ints(r->g, &n->attrs, "ends", &to, 1, err) ||
        gir_attrs_set_ints(r->g, &n->attrs, "axes", (const int64_t[]){ 0 }, 1, err))
        return gir_nomem(err);
    return nn_rd_out(r, n, 0, out, err);
}

/* Y [T, D, N, H] as [T, N, D*H]. */
static gir_status merge_dirs(nn_reader *r, size_t idx, const char *tag, int32_t y, int dirs, int32_t *out,
                             gir_error *err)
{
    gir_node *n;
    char t[48];
    if (dirs == 1) {
        snprintf(t, sizeof t, "%s_squeeze", tag);
        TRY(nn_rd_part(r, idx, t, GIR_OP_Squeeze, 1, 1, &n, err));
        n->in[0] = y;
        if (gir_attrs_set_ints(r->g, &n->attrs, "axes", (const int64_t[]){ 1 }, 1, err))
            return gir_nomem(err);
        return nn_rd_out(r, n, 0, out, err);
    }
    int32_t tr;
    snprintf(t, sizeof t, "%s_transpose", tag);
    TRY(nn_rd_part(r, idx, t, GIR_OP_Transpose, 1, 1, &n, err));
    n->in[0] = y;
    if (gir_attrs_set_ints(r->g, &n->attrs, "perm", (const int64_t[]){ 0, 2, 1, 3 }, 4, err))
        return gir_nomem(err);
    TRY(nn_rd_out(r, n, 0, &tr, err));
    snprintf(t, sizeof t, "%s_reshape", tag);
    TRY(nn_rd_part(r, idx, t, GIR_OP_Reshape, 1, 1, &n, err));
    n->in[0] = tr;
    if (gir_attrs_set_ints(r->g, &n->attrs, "shape", (const int64_t[]){ 0, 0, -1 }, 3, err))
        return gir_nomem(err);
    return nn_rd_out(r, n, 0, out, err);
}

gir_status nn_rd_mx_rnn(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
{
    const nn_node *rn = &r->raw->nodes[idx];
    const char *mode_s = nn_rd_str(r, idx, "mode", NULL);
    const rnn_mode *m = NULL;
    for (size_t i = 0; mode_s && i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, mode_s) == 0)
            m = &modes[i];
    if (!m)
        return nn_rd_bad_attr(r, idx, "mode", "one of rnn_relu, rnn_tanh, lstm, gru", err);
    int64_t H, L;
    bool bidir, seq;
    TRY(nn_rd_int(r, idx, "state_size", true, 0, &H, err));
    TRY(nn_rd_int(r, idx, "num_layers", true, 0, &L, err));
    TRY(nn_rd_bool(r, idx, "bidirectional", false, &bidir, err));
    TRY(nn_rd_bool(r, idx, "use_sequence_length", false, &seq, err));
    if (H < 1 || H > (1 << 20))
        return nn_rd_bad_attr(r, idx, "state_size", "a size from 1 to 2^20", err);
    if (L < 1 || L > 1024)
        return nn_rd_bad_attr(r, idx, "num_layers", "a count from 1 to 1024", err);
    const char *proj = nn_rd_str(r, idx, "projection_size", NULL);
    const char *cmin = nn_rd_str(r, idx, "lstm_state_clip_min", NULL);
    const char *cmax = nn_rd_str(r, idx, "lstm_state_clip_max", NULL);
    size_t want_in = m->op == GIR_OP_LSTM ? 4 : 3;
    if ((proj && !nn_is_none(proj)) || (cmin && !nn_is_none(cmin)) || (cmax && !nn_is_none(cmax)) || seq ||
        rn->n_in != want_in)
        return nnr_opaque(res); /* projection, cell clipping, sequence lengths: no canonical form */
    const gir_value *pv = in[1] >= 0 ? r->g->values[in[1]] : NULL;
    if (!pv || !pv->data || pv->dtype != GIR_DT_F32)
        return nnr_opaque(res); /* the weights are not known: nothing to unpack */
    /* data [T, N, I] and the states [L*D, N, H] are 3-d: graph inputs of
     * unknown rank that feed them take that rank (formats that declare
     * every input's rank can then be written) */
    for (size_t k = 0; k < want_in; k++) {
        gir_value *v = k != 1 && in[k] >= 0 ? r->g->values[in[k]] : NULL;
        if (v && v->kind == GIR_VALUE_INPUT && v->shape.rank < 0) {
            v->shape.rank = 3;
            for (int d = 0; d < 3; d++)
                v->shape.dims[d] = -1;
        }
    }
    int64_t D = bidir ? 2 : 1, G = m->gates, GH = G * H;
    /* the vector's length: D * GH * (I + H) + 2 * D * GH for the first
     * layer, D * GH * (D*H + H) + 2 * D * GH for each other */
    uint64_t total = (uint64_t)gir_shape_numel(&pv->data->shape);
    uint64_t rest = (uint64_t)((L - 1) * D * (GH * (D * H + H) + 2 * GH) + D * 2 * GH + D * GH * H);
    if (total <= rest || (total - rest) % (uint64_t)(D * GH) != 0) {
        gir_fail(err, GIR_E_PARAMS, "RNN parameters '%s' have %llu elements, which fits no input size for mode=%s "
                 "num_layers=%lld state_size=%lld%s", pv->name, (unsigned long long)total, m->name, (long long)L,
                 (long long)H, bidir ? " bidirectional" : "");
        gir_err_node(err, rn->name);
        return GIR_E_PARAMS;
    }
    int64_t I = (int64_t)((total - rest) / (uint64_t)(D * GH));
    const gir_value *xv = in[0] >= 0 ? r->g->values[in[0]] : NULL;
    if (xv && xv->shape.rank == 3 && xv->shape.dims[2] >= 0 && xv->shape.dims[2] != I) {
        gir_fail(err, GIR_E_SHAPE, "RNN parameters '%s' are for input size %lld, but data has %lld features",
                 pv->name, (long long)I, (long long)xv->shape.dims[2]);
        gir_err_node(err, rn->name);
        return GIR_E_SHAPE;
    }
    const float *p;
    TRY(gir_tensor_load(pv->data, (const void **)&p, err));
    const float *bias = p;
    for (int64_t l = 0; l < L; l++)
        bias += D * GH * ((l ? D * H : I) + H);

    size_t n_out = nn_mx_rnn_outputs(rn);
    int32_t x = in[0], hs[1024], cs[1024];
    gir_status st = GIR_OK;
    const float *wp = p;
    for (int64_t l = 0; l < L && !st; l++) {
        int64_t in_l = l ? D * H : I;
        float *W = malloc((size_t)(D * GH * in_l) * sizeof *W), *R = malloc((size_t)(D * GH * H) * sizeof *R);
        float *B = malloc((size_t)(D * 2 * GH) * sizeof *B);
        if (!W || !R || !B) {
            free(W);
            free(R);
            free(B);
            return gir_nomem(err);
        }
        for (int64_t d = 0; d < D; d++) {
            const float *wi = wp, *wh = wp + GH * in_l;
            const float *bi = bias + (l * D + d) * 2 * GH, *bh = bi + GH;
            for (int64_t k = 0; k < G; k++) {
                int64_t s = m->perm[k];
                memcpy(W + (d * GH + k * H) * in_l, wi + s * H * in_l, (size_t)(H * in_l) * sizeof *W);
                memcpy(R + (d * GH + k * H) * H, wh + s * H * H, (size_t)(H * H) * sizeof *R);
                memcpy(B + d * 2 * GH + k * H, bi + s * H, (size_t)H * sizeof *B);
                memcpy(B + d * 2 * GH + GH + k * H, bh + s * H, (size_t)H * sizeof *B);
            }
            wp += GH * (in_l + H);
        }
        char tag[32];
        int32_t wv, rv, bv, h0 = in[2], c0 = m->op == GIR_OP_LSTM ? in[3] : -1;
        snprintf(tag, sizeof tag, "l%lld_W", (long long)l);
        st = add_const(r, idx, tag, 3, (int64_t[]){ D, GH, in_l }, W, &wv, err);
        snprintf(tag, sizeof tag, "l%lld_R", (long long)l);
        if (!st)
            st = add_const(r, idx, tag, 3, (int64_t[]){ D, GH, H }, R, &rv, err);
        else
            free(R);
        snprintf(tag, sizeof tag, "l%lld_B", (long long)l);
        if (!st)
            st = add_const(r, idx, tag, 2, (int64_t[]){ D, 2 * GH }, B, &bv, err);
        else
            free(B);
        if (!st && L > 1) {
            snprintf(tag, sizeof tag, "l%lld_h0", (long long)l);
            st = slice0(r, idx, tag, in[2], l * D, (l + 1) * D, &h0, err);
            snprintf(tag, sizeof tag, "l%lld_c0", (long long)l);
            if (!st && c0 >= 0)
                st = slice0(r, idx, tag, in[3], l * D, (l + 1) * D, &c0, err);
        }
        if (st)
            break;
        gir_node *n;
        snprintf(tag, sizeof tag, "l%lld", (long long)l);
        size_t nin = m->op == GIR_OP_LSTM ? 7 : 6, nout = m->op == GIR_OP_LSTM ? 3 : 2;
        st = l == 0 ? nn_rd_node(r, idx, m->op, nin, nout, &n, err) : nn_rd_part(r, idx, tag, m->op, nin, nout, &n, err);
        if (st)
            break;
        n->in[0] = x;
        n->in[1] = wv;
        n->in[2] = rv;
        n->in[3] = bv;
        n->in[5] = h0;
        if (m->op == GIR_OP_LSTM)
            n->in[6] = c0;
        const char *dir = bidir ? "bidirectional" : "forward";
        if (gir_attrs_set_int(r->g, &n->attrs, "hidden_size", H, err) ||
            gir_attrs_set_string(r->g, &n->attrs, "direction", dir, err) ||
            (m->op == GIR_OP_GRU && gir_attrs_set_int(r->g, &n->attrs, "linear_before_reset", 1, err)))
            return gir_nomem(err);
        if (L == 1 && gir_attrs_set_string(r->g, &n->meta, "mxnet.rnn_parameters", pv->name, err))
            return gir_nomem(err);
        if (strcmp(m->name, "rnn_relu") == 0) {
            const char *acts[2] = { "Relu", "Relu" };
            if (gir_attrs_set_strings(r->g, &n->attrs, "activations", acts, (size_t)D, err))
                return gir_nomem(err);
        }
        int32_t y;
        st = nn_rd_out(r, n, 0, &y, err);
        if (!st)
            st = nn_rd_out(r, n, 1, &hs[l], err);
        if (!st && m->op == GIR_OP_LSTM)
            st = nn_rd_out(r, n, 2, &cs[l], err);
        snprintf(tag, sizeof tag, "l%lld", (long long)l);
        if (!st)
            st = merge_dirs(r, idx, tag, y, (int)D, &x, err);
    }
    if (st)
        return st;
    out[0] = x;
    for (size_t k = 1; k < n_out; k++) {
        int32_t *src = k == 1 ? hs : cs;
        if (L == 1) {
            out[k] = src[0];
            continue;
        }
        gir_node *n;
        TRY(nn_rd_part(r, idx, k == 1 ? "hy" : "cy", GIR_OP_Concat, (size_t)L, 1, &n, err));
        memcpy(n->in, src, (size_t)L * sizeof *src);
        if (gir_attrs_set_int(r->g, &n->attrs, "axis", 0, err))
            return gir_nomem(err);
        TRY(nn_rd_out(r, n, 0, &out[k], err));
    }
    *res = NN_MAPPED;
    return GIR_OK;
}

/* ---- writing ------------------------------------------------------------------------------ */

static bool is_output(const gir_graph *g, int32_t v)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v)
            return true;
    return false;
}

/* The one node reading v (v read once, not a graph output), or NULL. */
static const gir_node *sole_reader(const nn_writer *w, int32_t v)
{
    if (v < 0 || w->uses[v] != 1 || is_output(w->g, v))
        return NULL;
    for (size_t i = 0; i < w->g->n_nodes; i++) {
        const gir_node *c = w->g->nodes[i];
        for (size_t k = 0; k < c->n_in; k++)
            if (c->in[k] == v)
                return c;
    }
    return NULL;
}

static bool ints_are(const gir_node *n, const char *name, const int64_t *want, size_t k)
{
    const int64_t *v;
    ptrdiff_t nv = gir_attrs_get_ints(&n->attrs, name, &v);
    return nv == (ptrdiff_t)k && memcmp(v, want, k * sizeof *v) == 0;
}

/* The nodes that turn recurrent node n's Y [T, D, N, H] into [T, N, D*H]
 * (Squeeze(axes=[1]) for one direction, Transpose(0, 2, 1, 3) then
 * Reshape(0, 0, -1) for two): their count (0 when Y is unused, -1 when Y
 * is used otherwise), the nodes and the value they end in. */
static int y_tail(const nn_writer *w, const gir_node *n, const gir_node **tail, int32_t *final)
{
    *final = -1;
    if (n->n_out == 0 || n->out[0] < 0)
        return 0;
    const char *dir = gir_node_string(n, "direction", "forward");
    bool bi = strcmp(dir, "bidirectional") == 0;
    const gir_node *c = sole_reader(w, n->out[0]);
    if (!c || c->n_out != 1)
        return -1;
    if (!bi) {
        if (c->op != GIR_OP_Squeeze || !(ints_are(c, "axes", (const int64_t[]){ 1 }, 1) ||
                                         ints_are(c, "axes", (const int64_t[]){ -3 }, 1)))
            return -1;
        tail[0] = c;
        *final = c->out[0];
        return 1;
    }
    if (c->op != GIR_OP_Transpose || !ints_are(c, "perm", (const int64_t[]){ 0, 2, 1, 3 }, 4))
        return -1;
    const gir_node *r = sole_reader(w, c->out[0]);
    if (!r || r->op != GIR_OP_Reshape || r->n_out != 1 || !ints_are(r, "shape", (const int64_t[]){ 0, 0, -1 }, 3))
        return -1;
    tail[0] = c;
    tail[1] = r;
    *final = r->out[0];
    return 2;
}

void nn_rnn_absorb(nn_writer *w)
{
    for (size_t i = 0; i < w->g->n_nodes; i++) {
        const gir_node *n = w->g->nodes[i];
        if (n->op != GIR_OP_LSTM && n->op != GIR_OP_GRU && n->op != GIR_OP_RNN)
            continue;
        const gir_node *tail[2];
        int32_t final;
        int k = y_tail(w, n, tail, &final);
        for (int j = 0; j < k; j++) {
            int32_t ix = gir_graph_node_index(w->g, tail[j]->name);
            if (ix >= 0)
                w->absorbed[ix] = true;
        }
    }
}

static gir_status refuse(const gir_node *n, const char *why, gir_error *err)
{
    return gir_fail(err, GIR_E_UNSUPPORTED_ATTR, "%s %s", gir_op_name(n->op), why);
}

/* The data of constant input i (float32), or NULL. */
static const float *const_data(const nn_writer *w, const gir_node *n, size_t i, gir_error *err, gir_status *st)
{
    *st = GIR_OK;
    if (i >= n->n_in || n->in[i] < 0)
        return NULL;
    const gir_value *v = w->g->values[n->in[i]];
    if (!v->data || v->dtype != GIR_DT_F32)
        return NULL;
    const void *d = NULL;
    *st = gir_tensor_load(v->data, &d, err);
    return d;
}

gir_status nn_wr_rnn(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (w->fl != NN_MXNET)
        return gir_fail(err, GIR_E_UNSUPPORTED_OP, "%s (nnvm has no recurrent operator)", gir_op_name(n->op));
    gir_rnn_desc d;
    TRY(gir_rnn_desc_read(n, &d, err));
    const rnn_mode *m = &modes[n->op == GIR_OP_LSTM ? 0 : n->op == GIR_OP_GRU ? 1 : 2];
    bool relu = false;
    if (n->op == GIR_OP_RNN) {
        relu = d.fn[0][0].act == GIR_RNN_RELU;
        for (int dr = 0; dr < d.dirs; dr++)
            if (d.fn[dr][0].act != (relu ? GIR_RNN_RELU : GIR_RNN_TANH))
                return refuse(n, "with activations other than all Tanh or all Relu (MXNet's rnn_tanh, rnn_relu)", err);
        if (relu)
            m = &modes[3];
    } else if (!d.default_fns) {
        return refuse(n, "with activations other than the default ones (MXNet's RNN has no others)", err);
    }
    if (d.direction == GIR_RNN_REVERSE)
        return refuse(n, "direction=reverse (MXNet's RNN runs forward or both ways)", err);
    if (d.layout)
        return refuse(n, "layout=1 (MXNet's RNN takes [T, N, I])", err);
    if (d.has_clip)
        return refuse(n, "with clip (MXNet's RNN has no gate clipping)", err);
    if (d.input_forget)
        return refuse(n, "input_forget=1 (MXNet's RNN has no coupled gates)", err);
    if (n->op == GIR_OP_GRU && !d.linear_before_reset)
        return refuse(n, "linear_before_reset=0 (MXNet's GRU applies the reset after the recurrent product)", err);
    if (n->n_in > 4 && n->in[4] >= 0)
        return refuse(n, "with sequence_lens", err);
    if (n->op == GIR_OP_LSTM && n->n_in > 7 && n->in[7] >= 0)
        return refuse(n, "with peepholes (P)", err);
    if (n->n_in <= 5 || n->in[5] < 0 || (n->op == GIR_OP_LSTM && (n->n_in <= 6 || n->in[6] < 0)))
        return refuse(n, "without initial states (MXNet's RNN takes them as inputs)", err);
    const gir_node *tail[2];
    int32_t final;
    if (y_tail(w, n, tail, &final) < 0)
        return refuse(n, "output Y used other than through Squeeze(axes=[1]) (one direction) or Transpose(0, 2, 1, 3) "
                      "and Reshape(0, 0, -1) (two): MXNet's RNN gives [T, N, D*H]", err);
    gir_status st;
    const float *W = const_data(w, n, 1, err, &st), *R = W ? const_data(w, n, 2, err, &st) : NULL;
    const float *Bv = R ? const_data(w, n, 3, err, &st) : NULL;
    if (st)
        return st;
    if (!W || !R || (n->in[3] >= 0 && !Bv))
        return refuse(n, "with weights that are not float32 constants (MXNet's RNN packs them into one vector)", err);
    const gir_value *wv = w->g->values[n->in[1]];
    if (wv->shape.rank != 3)
        return refuse(n, "with weights of unknown shape", err);
    int64_t D = d.dirs, H = d.hidden, G = d.gates, GH = G * H, I = wv->shape.dims[2];
    uint64_t total = (uint64_t)(D * GH * (I + H) + 2 * D * GH);
    gir_shape ps = { 1, { (int64_t)total } };
    gir_tensor *t;
    TRY(gir_tensor_new(GIR_DT_F32, &ps, &t, err));
    float *p = t->data, *b = p + D * GH * (I + H);
    for (int64_t dr = 0; dr < D; dr++) {
        float *wi = p + dr * GH * (I + H), *wh = wi + GH * I;
        const float *bw = Bv ? Bv + dr * 2 * GH : NULL, *br = bw ? bw + GH : NULL;
        for (int64_t k = 0; k < G; k++) {
            int64_t s = m->perm[k]; /* MXNet gate s holds ONNX gate k */
            memcpy(wi + s * H * I, W + (dr * GH + k * H) * I, (size_t)(H * I) * sizeof *p);
            memcpy(wh + s * H * H, R + (dr * GH + k * H) * H, (size_t)(H * H) * sizeof *p);
            for (int64_t j = 0; j < H; j++) {
                b[dr * 2 * GH + s * H + j] = bw ? bw[k * H + j] : 0.0f;
                b[dr * 2 * GH + GH + s * H + j] = br ? br[k * H + j] : 0.0f;
            }
        }
    }
    /* the packed vector: a new variable with its data */
    /* its name: the one it was read from (when that value is left
     * unused), else "<node>_parameters" */
    const char *name = gir_attrs_get_string(&n->meta, "mxnet.rnn_parameters", NULL);
    int32_t old = name ? gir_graph_value_index(w->g, name) : -1;
    if (!name || (old >= 0 && (w->uses[old] || is_output(w->g, old))))
        name = gir_arena_printf(&w->arena, "%s_parameters", n->name);
    for (int k = 1; name && gir_graph_value_index(w->g, name) >= 0 &&
                    (w->uses[gir_graph_value_index(w->g, name)] || is_output(w->g, gir_graph_value_index(w->g, name)));
         k++)
        name = gir_arena_printf(&w->arena, "%s_parameters%d", n->name, k);
    if (!name || !GIR_GROW(w->xv, w->cap_xv, w->n_xv + 1)) {
        gir_tensor_unref(t);
        return gir_nomem(err);
    }
    nn_xvar *x = &w->xv[w->n_xv];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->t = t;
    int32_t xi = (int32_t)w->n_xv++;
    size_t nin = n->op == GIR_OP_LSTM ? 4 : 3;
    f->in = gir_arena_alloc(&w->arena, nin * sizeof *f->in);
    f->keys = gir_arena_alloc(&w->arena, 5 * sizeof *f->keys);
    f->vals = gir_arena_alloc(&w->arena, 5 * sizeof *f->vals);
    const char *hs = gir_arena_printf(&w->arena, "%lld", (long long)H);
    if (!f->in || !f->keys || !f->vals || !hs)
        return gir_nomem(err);
    f->in[0] = (nn_fref){ n->in[0], -1 };
    f->in[1] = (nn_fref){ -1, xi };
    f->in[2] = (nn_fref){ n->in[5], -1 };
    if (n->op == GIR_OP_LSTM)
        f->in[3] = (nn_fref){ n->in[6], -1 };
    f->n_in = nin;
    f->op = "RNN";
    static const char *const keys[] = { "bidirectional", "mode", "num_layers", "state_outputs", "state_size" };
    const char *vals[] = { D == 2 ? "True" : "False", m->name, "1", n->n_out > 1 ? "True" : "False", hs };
    for (size_t k = 0; k < 5; k++) {
        f->keys[k] = keys[k];
        f->vals[k] = vals[k];
    }
    f->n_attrs = 5;
    f->keep_order = true;
    if (final >= 0) {
        /* the folded Squeeze / Reshape's value is RNN's output 0 */
        w->vprod[final] = (int32_t)w->n_fn;
        w->vidx[final] = 0;
    }
    return GIR_OK;
}
