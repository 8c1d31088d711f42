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
#include "map.h"

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
    char *base = gir_strdupf("%s_%s", r->raw->nodes[idx].name, tag);
    const char *name = base ? gir_graph_unique_value_name(r->g, base) : NULL;
    free(base);
    st = name ? gir_graph_add_const(r->g, name, t, v, err) : gir_nomem(err);
    gir_tensor_unref(t);
    return st;
}

/* Slice [from, to) of axis 0 of v. */
static gir_status slice0(nn_reader *r, size_t idx, const char *tag, int32_t v, int64_t from, int64_t to, int32_t *out,
                         gir_error *err)
{
    gir_node *n;
    TRY(nn_rd_part(r, idx, tag, GIR_OP_Slice, 1, 1, &n, err));
    n->in[0] = v;
    if (gir_attrs_set_ints(r->g, &n->attrs, "starts", &from, 1) || gir_attrs_set_ints(r->g, &n->attrs, "ends", &to, 1) ||
        gir_attrs_set_ints(r->g, &n->attrs, "axes", (const int64_t[]){ 0 }, 1))
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
        if (gir_attrs_set_ints(r->g, &n->attrs, "axes", (const int64_t[]){ 1 }, 1))
            return gir_nomem(err);
        return nn_rd_out(r, n, 0, out, err);
    }
    int32_t tr;
    snprintf(t, sizeof t, "%s_transpose", tag);
    TRY(nn_rd_part(r, idx, t, GIR_OP_Transpose, 1, 1, &n, err));
    n->in[0] = y;
    if (gir_attrs_set_ints(r->g, &n->attrs, "perm", (const int64_t[]){ 0, 2, 1, 3 }, 4))
        return gir_nomem(err);
    TRY(nn_rd_out(r, n, 0, &tr, err));
    snprintf(t, sizeof t, "%s_reshape", tag);
    TRY(nn_rd_part(r, idx, t, GIR_OP_Reshape, 1, 1, &n, err));
    n->in[0] = tr;
    if (gir_attrs_set_ints(r->g, &n->attrs, "shape", (const int64_t[]){ 0, 0, -1 }, 3))
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
        rn->n_in != want_in) {
        *res = NN_OPAQUE; /* projection, cell clipping, sequence lengths: no canonical form */
        return GIR_OK;
    }
    const gir_value *pv = in[1] >= 0 ? r->g->values[in[1]] : NULL;
    if (!pv || !pv->data || pv->dtype != GIR_DT_F32) {
        *res = NN_OPAQUE; /* the weights are not known: nothing to unpack */
        return GIR_OK;
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
        if (gir_attrs_set_int(r->g, &n->attrs, "hidden_size", H) ||
            gir_attrs_set_string(r->g, &n->attrs, "direction", dir) ||
            (m->op == GIR_OP_GRU && gir_attrs_set_int(r->g, &n->attrs, "linear_before_reset", 1)))
            return gir_nomem(err);
        if (strcmp(m->name, "rnn_relu") == 0) {
            const char *acts[2] = { "Relu", "Relu" };
            if (gir_attrs_set_strings(r->g, &n->attrs, "activations", acts, (size_t)D))
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
        if (gir_attrs_set_int(r->g, &n->attrs, "axis", 0))
            return gir_nomem(err);
        TRY(nn_rd_out(r, n, 0, &out[k], err));
    }
    *res = NN_MAPPED;
    return GIR_OK;
}
