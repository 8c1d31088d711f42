/* Reading the attributes of the recurrent operators (see rnn.h). */
#include "rnn.h"

#include "core/ir.h"
#include "opinfer.h"

#include <strings.h>

static const struct {
    const char *name;
    bool alpha, beta;
    float da, db;
} acts[GIR_RNN_ACT_COUNT_] = {
    [GIR_RNN_RELU] = { "Relu", false, false, 0, 0 },
    [GIR_RNN_TANH] = { "Tanh", false, false, 0, 0 },
    [GIR_RNN_SIGMOID] = { "Sigmoid", false, false, 0, 0 },
    [GIR_RNN_AFFINE] = { "Affine", true, true, 1.0f, 0.0f },
    [GIR_RNN_LEAKYRELU] = { "LeakyRelu", true, false, 0.01f, 0 },
    [GIR_RNN_THRESHOLDEDRELU] = { "ThresholdedRelu", true, false, 1.0f, 0 },
    [GIR_RNN_SCALEDTANH] = { "ScaledTanh", true, true, 1.0f, 1.0f },
    [GIR_RNN_HARDSIGMOID] = { "HardSigmoid", true, true, 0.2f, 0.5f },
    [GIR_RNN_ELU] = { "Elu", true, false, 1.0f, 0 },
    [GIR_RNN_SOFTSIGN] = { "Softsign", false, false, 0, 0 },
    [GIR_RNN_SOFTPLUS] = { "Softplus", false, false, 0, 0 },
};

const char *gir_rnn_act_name(gir_rnn_act a)
{
    return (unsigned)a < GIR_RNN_ACT_COUNT_ ? acts[a].name : "?";
}

int gir_rnn_act_from_name(const char *name)
{
    for (int i = 0; name && i < GIR_RNN_ACT_COUNT_; i++)
        if (strcasecmp(acts[i].name, name) == 0)
            return i;
    return -1;
}

bool gir_rnn_act_has_alpha(gir_rnn_act a, float *dflt)
{
    if ((unsigned)a >= GIR_RNN_ACT_COUNT_ || !acts[a].alpha)
        return false;
    if (dflt)
        *dflt = acts[a].da;
    return true;
}

bool gir_rnn_act_has_beta(gir_rnn_act a, float *dflt)
{
    if ((unsigned)a >= GIR_RNN_ACT_COUNT_ || !acts[a].beta)
        return false;
    if (dflt)
        *dflt = acts[a].db;
    return true;
}

gir_status gir_rnn_desc_read(const gir_node *n, gir_rnn_desc *d, gir_error *err)
{
    const char *op = gir_op_name(n->op);
    memset(d, 0, sizeof *d);
    d->op = n->op;
    switch (n->op) {
    case GIR_OP_LSTM: d->gates = 4; d->n_fn = 3; break;
    case GIR_OP_GRU: d->gates = 3; d->n_fn = 2; break;
    case GIR_OP_RNN: d->gates = 1; d->n_fn = 1; break;
    default: return gir_fail(err, GIR_E_INTERNAL, "%s is not a recurrent operator", op);
    }
    /* in the order of GIR_RNN_FORWARD, ... */
    static const char *const directions[] = { "forward", "reverse", "bidirectional", NULL };
    const char *dir = gir_node_string(n, "direction", "forward");
    d->direction = oi_choice_index(directions, dir);
    if (d->direction < 0)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'direction' is '%s', expected forward, reverse or "
                        "bidirectional", op, dir);
    d->dirs = d->direction == GIR_RNN_BIDIRECTIONAL ? 2 : 1;
    d->hidden = gir_node_int(n, "hidden_size", -1);
    if (d->hidden < 1)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'hidden_size' is %lld, expected 1 or more", op,
                        (long long)d->hidden);
    d->layout = (int)gir_node_int(n, "layout", 0);
    d->linear_before_reset = gir_node_int(n, "linear_before_reset", 0) != 0;
    d->input_forget = gir_node_int(n, "input_forget", 0) != 0;
    const gir_attr *clip = gir_attrs_find(&n->attrs, "clip");
    if (clip) {
        if (clip->type != GIR_ATTR_FLOAT || !(clip->u.f > 0.0))
            return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'clip' must be a positive number", op);
        d->has_clip = true;
        d->clip = (float)clip->u.f;
    }
    /* activations: defaults f = Sigmoid, g = h = Tanh (RNN: Tanh) */
    static const gir_rnn_act dflt[3][3] = {
        { GIR_RNN_SIGMOID, GIR_RNN_TANH, GIR_RNN_TANH }, /* LSTM */
        { GIR_RNN_SIGMOID, GIR_RNN_TANH, GIR_RNN_TANH }, /* GRU */
        { GIR_RNN_TANH, GIR_RNN_TANH, GIR_RNN_TANH },    /* RNN */
    };
    int kind = n->op == GIR_OP_LSTM ? 0 : n->op == GIR_OP_GRU ? 1 : 2;
    const gir_attr *an = gir_attrs_find(&n->attrs, "activations");
    const double *al = NULL, *be = NULL;
    ptrdiff_t nal = gir_attrs_get_floats(&n->attrs, "activation_alpha", &al);
    ptrdiff_t nbe = gir_attrs_get_floats(&n->attrs, "activation_beta", &be);
    if (nal < 0)
        nal = 0;
    if (nbe < 0)
        nbe = 0;
    size_t count = an && an->type == GIR_ATTR_STRINGS ? an->u.strs.n : 0;
    if (an && an->type != GIR_ATTR_STRINGS)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'activations' must be a list of strings", op);
    if (an && count != (size_t)d->n_fn && count != (size_t)(d->n_fn * d->dirs))
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s attribute 'activations' has %zu names, expected %d%s", op, count,
                        d->n_fn * d->dirs, d->dirs == 2 ? " (or one set of 3 for both directions)" : "");
    d->default_fns = true;
    ptrdiff_t ia = 0, ib = 0;
    for (int dr = 0; dr < d->dirs; dr++)
        for (int k = 0; k < d->n_fn; k++) {
            gir_rnn_fn *f = &d->fn[dr][k];
            if (!an || (dr == 1 && count == (size_t)d->n_fn)) {
                *f = an ? d->fn[0][k] : (gir_rnn_fn){ dflt[kind][k], 0, 0 };
                continue;
            }
            const char *nm = an->u.strs.v[(size_t)dr * (size_t)d->n_fn + (size_t)k];
            int a = gir_rnn_act_from_name(nm);
            if (a < 0)
                return gir_fail(err, GIR_E_ATTRIBUTE, "%s activation '%s' is not one of ONNX's recurrent "
                                "activations (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                                "HardSigmoid, Elu, Softsign, Softplus)", op, nm);
            f->act = (gir_rnn_act)a;
            float v;
            if (gir_rnn_act_has_alpha(f->act, &v)) {
                f->alpha = ia < nal ? (float)al[ia] : v;
                ia++;
            }
            if (gir_rnn_act_has_beta(f->act, &v)) {
                f->beta = ib < nbe ? (float)be[ib] : v;
                ib++;
            }
            if (f->act != dflt[kind][k])
                d->default_fns = false;
        }
    if (ia < nal || ib < nbe)
        return gir_fail(err, GIR_E_ATTRIBUTE, "%s has %lld activation_alpha and %lld activation_beta values, but "
                        "its activations take %lld and %lld", op, (long long)nal, (long long)nbe, (long long)ia,
                        (long long)ib);
    return GIR_OK;
}
