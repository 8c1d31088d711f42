/* Fusion decisions: which nodes after a Conv, Gemm or MatMul its kernel
 * computes too (a bias Add, a residual Add into a dying buffer, Relu/Clip,
 * Sigmoid, SiLU, HardSwish, GELU), made before the node is planned. */
#include "session.h"

#include <math.h>

/* Relu, or Clip with float bounds: the activation it is. */
static bool node_act(const gir_node *n, rt_act *act)
{
    if (n->op == GIR_OP_Relu) {
        act->on = true;
        act->lo = 0.0f;
        act->hi = INFINITY;
        return true;
    }
    if (n->op == GIR_OP_Clip) {
        const gir_attr *lo = gir_attrs_find(&n->attrs, "min"), *hi = gir_attrs_find(&n->attrs, "max");
        if ((lo && lo->type != GIR_ATTR_FLOAT && lo->type != GIR_ATTR_INT) ||
            (hi && hi->type != GIR_ATTR_FLOAT && hi->type != GIR_ATTR_INT))
            return false;
        act->on = true;
        act->lo = lo ? (float)gir_attrs_get_float(&n->attrs, "min", 0) : -INFINITY;
        act->hi = hi ? (float)gir_attrs_get_float(&n->attrs, "max", 0) : INFINITY;
        return true;
    }
    return false;
}

static void mark_fused(gir_session *s, int32_t q, const rt_node *host)
{
    s->nodes[q].skip = true;
    s->nodes[q].host = (int32_t)(host - s->nodes);
}

/* Up to max consumers of value vi, one per input slot that reads it. */
static size_t consumers_of(const gir_session *s, int32_t vi, int32_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->g->n_nodes; i++) {
        const gir_node *nd = s->g->nodes[i];
        for (size_t j = 0; j < nd->n_in; j++)
            if (nd->in[j] == vi) {
                if (n < max)
                    out[n] = (int32_t)i;
                n++;
            }
    }
    return n;
}

/* Value x (not a graph output) is read by exactly two nodes, once each. */
static bool two_consumers(const gir_session *s, int32_t x, int32_t cs[2])
{
    const rt_value *v = &s->vals[x];
    int32_t c3[3];
    if (v->uses != 2 || v->is_output || consumers_of(s, x, c3, 3) != 2 || c3[0] == c3[1])
        return false;
    cs[0] = c3[0];
    cs[1] = c3[1];
    return true;
}

/* x read by exactly a Sigmoid or HardSigmoid and a Mul of x by that gate:
 * SiLU or HardSwish.  Sets the activation and the two nodes. */
static bool gated_act(const gir_session *s, int32_t x, rt_act *act, int32_t *gate, int32_t *mul)
{
    const gir_graph *g = s->g;
    int32_t cs[2];
    if (!two_consumers(s, x, cs))
        return false;
    for (int k = 0; k < 2; k++) {
        const gir_node *gn = g->nodes[cs[k]], *mn = g->nodes[cs[1 - k]];
        if ((gn->op != GIR_OP_Sigmoid && gn->op != GIR_OP_HardSigmoid) || gn->n_in != 1 || gn->n_out != 1 ||
            gn->out[0] < 0)
            continue;
        int32_t gv = gn->out[0];
        if (sole_consumer(s, gv) != cs[1 - k] || mn->op != GIR_OP_Mul || mn->n_in != 2 || mn->n_out != 1 ||
            mn->out[0] < 0 || !((mn->in[0] == x && mn->in[1] == gv) || (mn->in[1] == x && mn->in[0] == gv)))
            continue;
        memset(act, 0, sizeof *act);
        act->on = true;
        if (gn->op == GIR_OP_Sigmoid) {
            act->kind = RT_ACT_SILU;
        } else {
            const gir_attr *a = gir_attrs_find(&gn->attrs, "alpha"), *b = gir_attrs_find(&gn->attrs, "beta");
            if ((a && a->type != GIR_ATTR_FLOAT && a->type != GIR_ATTR_INT) ||
                (b && b->type != GIR_ATTR_FLOAT && b->type != GIR_ATTR_INT))
                return false;
            act->kind = RT_ACT_HSWISH;
            act->alpha = (float)gir_attrs_get_float(&gn->attrs, "alpha", 0.2);
            act->beta = (float)gir_attrs_get_float(&gn->attrs, "beta", 0.5);
        }
        *gate = cs[k];
        *mul = cs[1 - k];
        return true;
    }
    return false;
}

/* Value vi is a float32 constant holding the one number want (within
 * 1e-6 relative). */
static bool const_near(const gir_session *s, int32_t vi, double want)
{
    if (vi < 0)
        return false;
    const rt_value *v = &s->vals[vi];
    if (v->kind != RV_CONST || v->fed || v->t.dtype != GIR_DT_F32 || v->t.numel != 1 || !v->t.data)
        return false;
    double f = *(const float *)v->t.data;
    return fabs(f - want) <= 1e-6 * fabs(want);
}

/* The other operand of a two-input node that reads vi once, or -2. */
static int32_t other_operand(const gir_node *n, int32_t vi)
{
    if (n->n_in != 2 || n->n_out != 1 || n->out[0] < 0)
        return -2;
    if (n->in[0] == vi && n->in[1] != vi)
        return n->in[1];
    if (n->in[1] == vi && n->in[0] != vi)
        return n->in[0];
    return -2;
}

/* GELU as PyTorch exports it: x read by Div(x, sqrt 2) -> Erf -> Add(1)
 * and by Mul(x, that), then Mul(0.5).  Sets the activation and the five
 * nodes. */
static bool gelu_act(const gir_session *s, int32_t x, rt_act *act, int32_t nodes[5])
{
    const gir_graph *g = s->g;
    int32_t cs[2];
    if (!two_consumers(s, x, cs))
        return false;
    for (int k = 0; k < 2; k++) {
        const gir_node *dn = g->nodes[cs[k]], *mn = g->nodes[cs[1 - k]];
        if (dn->op != GIR_OP_Div || mn->op != GIR_OP_Mul || dn->n_in != 2 || dn->in[0] != x ||
            !const_near(s, dn->in[1], 1.4142135623730951) || dn->n_out != 1 || dn->out[0] < 0)
            continue;
        int32_t q = sole_consumer(s, dn->out[0]);
        if (q < 0 || g->nodes[q]->op != GIR_OP_Erf || g->nodes[q]->n_out != 1 || g->nodes[q]->out[0] < 0)
            continue;
        int32_t erf = q;
        q = sole_consumer(s, g->nodes[erf]->out[0]);
        if (q < 0 || g->nodes[q]->op != GIR_OP_Add || !const_near(s, other_operand(g->nodes[q], g->nodes[erf]->out[0]), 1.0))
            continue;
        int32_t add = q;
        if (sole_consumer(s, g->nodes[add]->out[0]) != cs[1 - k] || other_operand(mn, x) != g->nodes[add]->out[0])
            continue;
        q = sole_consumer(s, mn->out[0]);
        if (q < 0 || g->nodes[q]->op != GIR_OP_Mul || !const_near(s, other_operand(g->nodes[q], mn->out[0]), 0.5))
            continue;
        memset(act, 0, sizeof *act);
        act->on = true;
        act->kind = RT_ACT_GELU;
        nodes[0] = cs[k];
        nodes[1] = erf;
        nodes[2] = add;
        nodes[3] = cs[1 - k];
        nodes[4] = q;
        return true;
    }
    return false;
}

/* Decides fusions for node ni (Conv/Gemm) before it is planned: a following
 * Add whose other operand's buffer can take the result, then Relu/Clip (or,
 * for RT_FUSE_ACTX kernels, Sigmoid, SiLU or HardSwish). */
void rt_plan_fusion(gir_session *s, rt_node *rn)
{
    const gir_graph *g = s->g;
    memset(&rn->call.act, 0, sizeof rn->call.act);
    rn->call.accumulate = false;
    rn->call.bias = NULL;
    if (s->keep || !(rn->k->flags & (RT_FUSE_ACT | RT_FUSE_ADD | RT_FUSE_BIAS)) || rn->n->n_out < 1 ||
        rn->n->out[0] < 0)
        return;
    int32_t cur = rn->n->out[0];
    int32_t q = sole_consumer(s, cur);
    if (q >= 0 && (rn->k->flags & RT_FUSE_BIAS) && g->nodes[q]->op == GIR_OP_Add) {
        /* a bias: a constant float vector (leading dims 1); its length is
         * checked against the result after prepare */
        int32_t other = other_operand(g->nodes[q], cur);
        const rt_value *bv = other >= 0 ? &s->vals[other] : NULL;
        bool vec = bv && value_const(s, other) && bv->t.dtype == GIR_DT_F32 && bv->t.data && bv->t.shape.rank >= 1;
        for (int d = 0; vec && d + 1 < bv->t.shape.rank; d++)
            vec = bv->t.shape.dims[d] == 1;
        if (vec) {
            rn->call.bias = &s->vals[other].t;
            mark_fused(s, q, rn);
            cur = g->nodes[q]->out[0];
            q = sole_consumer(s, cur);
        }
    }
    if (q >= 0 && (rn->k->flags & RT_FUSE_ADD)) {
        const gir_node *qn = g->nodes[q];
        if (qn->op == GIR_OP_Add && qn->n_in == 2 && qn->n_out == 1 && qn->out[0] >= 0) {
            int32_t other = qn->in[0] == cur ? qn->in[1] : qn->in[0];
            rt_value *ov = other >= 0 ? &s->vals[other] : NULL;
            /* the residual: an intermediate float tensor of the same shape, in
             * its own buffer, whose last remaining use is this Add */
            if (ov && other != cur && ov->kind == RV_INTER && ov->buf >= 0 && ov->alias < 0 && !ov->is_output &&
                ov->remaining == 1 && s->bufs[ov->buf].refs == 1 && ov->t.dtype == GIR_DT_F32 && ov->produced) {
                rn->call.accumulate = true; /* shape checked after prepare */
                mark_fused(s, q, rn);
                cur = qn->out[0];
                q = sole_consumer(s, cur);
            } else {
                return;
            }
        }
    }
    if (!(rn->k->flags & RT_FUSE_ACT))
        return;
    int32_t gate, mul;
    if ((rn->k->flags & RT_FUSE_ACTX) && gated_act(s, cur, &rn->call.act, &gate, &mul)) {
        mark_fused(s, gate, rn);
        mark_fused(s, mul, rn);
        return;
    }
    int32_t gelu[5];
    if ((rn->k->flags & RT_FUSE_ACTX) && gelu_act(s, cur, &rn->call.act, gelu)) {
        for (int i = 0; i < 5; i++)
            mark_fused(s, gelu[i], rn);
        return;
    }
    if (q < 0)
        return;
    const gir_node *qn = g->nodes[q];
    if (qn->n_in < 1 || qn->in[0] != cur || qn->n_out != 1 || qn->out[0] < 0)
        return;
    if (node_act(qn, &rn->call.act)) {
        mark_fused(s, q, rn);
    } else if ((rn->k->flags & RT_FUSE_ACTX) && qn->op == GIR_OP_Sigmoid) {
        rn->call.act.on = true;
        rn->call.act.kind = RT_ACT_SIGMOID;
        mark_fused(s, q, rn);
    }
}

/* The residual value of a fused Add following node rn. */
int32_t rt_fused_residual(const gir_session *s, const rt_node *rn, int32_t *add_node)
{
    int32_t cur = rn->n->out[0];
    int32_t q = sole_consumer(s, cur);
    const gir_node *qn = s->g->nodes[q];
    *add_node = q;
    return qn->in[0] == cur ? qn->in[1] : qn->in[0];
}

void rt_undo_fusion(gir_session *s, rt_node *rn)
{
    int32_t self = (int32_t)(rn - s->nodes);
    for (size_t i = 0; i < s->g->n_nodes; i++)
        if (s->nodes[i].skip && s->nodes[i].host == self)
            s->nodes[i].skip = false;
    rn->call.accumulate = false;
    rn->call.bias = NULL;
    memset(&rn->call.act, 0, sizeof rn->call.act);
}
