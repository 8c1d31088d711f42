/* Legalization patterns for padding around convolutions and pools:
 *   - a constant Pad of the spatial axes merged into the pads of the
 *     Conv/AveragePool/MaxPool nodes that read it (targets without a Pad
 *     operator: NNVM, MXNet, LightNet);
 *   - the asymmetric part of a Conv's or pool's pads split out as a Pad
 *     (targets whose convolutions and pools pad both ends alike: nnabla);
 *   - ceil-mode pooling as floor-mode pooling with extra end padding
 *     (targets without ceil mode: LightNet, nnabla where its own rounding
 *     differs).
 * Each is exact: the windows see the same cells, a pool counts the same
 * ones.  Pads merged into a pool are cells a max ignores (-inf) or an
 * average counts (count_include_pad=1). */
#include "patterns.h"

#include <math.h>
#include <string.h>

/* The pads of a Conv or pool with ns spatial axes: explicit pads, or none
 * with auto_pad VALID; false with SAME_* (pads that depend on the shape)
 * or a malformed list. */
static bool node_pads(const gir_node *n, int ns, int64_t *pads)
{
    const char *ap = gir_node_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "VALID") == 0) {
        memset(pads, 0, 2 * (size_t)ns * sizeof *pads);
        return true;
    }
    if (strcmp(ap, "NOTSET") != 0)
        return false;
    const int64_t *p;
    ptrdiff_t np = gir_attrs_get_ints(&n->attrs, "pads", &p);
    if (np < 0) {
        memset(pads, 0, 2 * (size_t)ns * sizeof *pads);
        return true;
    }
    if (np != 2 * ns)
        return false;
    memcpy(pads, p, 2 * (size_t)ns * sizeof *pads);
    return true;
}

static bool all_ones(const gir_node *n, const char *attr)
{
    const int64_t *v;
    ptrdiff_t k = gir_attrs_get_ints(&n->attrs, attr, &v);
    for (ptrdiff_t i = 0; i < k; i++)
        if (v[i] != 1)
            return false;
    return true;
}

/* A MaxPool's Indices output is read (or is a graph output). */
static bool indices_used(const gir_graph *g, const gir_node *n)
{
    if (n->op != GIR_OP_MaxPool || n->n_out < 2 || n->out[1] < 0)
        return false;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == n->out[1])
            return true;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_in; k++)
            if (g->nodes[i]->in[k] == n->out[1])
                return true;
    return false;
}

/* Ends the rewrite of n by a copy of it reading data (its other inputs as
 * they are) with explicit pads (ns spatial axes), in floor mode when
 * floor. */
static gir_status copy_with_pads(gir_rw *rw, const gir_node *n, int32_t data, const int64_t *pads, int ns, bool floor,
                                 gir_error *err)
{
    gir_node *m;
    int32_t ins[3] = { data, n->n_in > 1 ? n->in[1] : -1, n->n_in > 2 ? n->in[2] : -1 };
    TRY(gir_rw_copy(rw, n, ins, n->n_in, 1, &m, err));
    TRY(gir_attrs_set_ints(rw->g, &m->attrs, "pads", pads, 2 * (size_t)ns, err));
    TRY(gir_attrs_set_string(rw->g, &m->attrs, "auto_pad", "NOTSET", err));
    if (floor)
        TRY(gir_attrs_set_int(rw->g, &m->attrs, "ceil_mode", 0, err));
    int32_t outs[2] = { m->out[0], -1 }; /* a MaxPool's Indices: nothing reads them */
    return gir_rw_done(rw, outs, err);
}

/* ---- Pad merged into the Conv/pools that read it ------------------------------------- */

/* Whether consumer c (reading the padded tensor as its data) can take the
 * spatial pads sp (begins then ends, ns axes) of a Pad of value cv whose
 * input is x; *why otherwise. */
static bool mergeable(const gir_graph *g, const gir_node *c, int32_t padded, int32_t x, const int64_t *sp, int ns,
                      double cv, const char **why)
{
    if (c->op != GIR_OP_Conv && c->op != GIR_OP_AveragePool && c->op != GIR_OP_MaxPool) {
        *why = "the padded tensor is read by other than Conv, AveragePool or MaxPool";
        return false;
    }
    for (size_t k = 1; k < c->n_in; k++)
        if (c->in[k] == padded) {
            *why = "the padded tensor is also a weight";
            return false;
        }
    int64_t own[2 * GIR_MAX_RANK];
    if (!node_pads(c, ns, own)) {
        *why = "its reader pads with auto_pad SAME";
        return false;
    }
    bool own_zero = true;
    for (int i = 0; i < 2 * ns; i++)
        own_zero &= own[i] == 0;
    if (c->op != GIR_OP_Conv && gir_node_int(c, "ceil_mode", 0)) {
        /* the last window may start in the end padding only when that is
         * the Pad's (explicit) cells: not if they become pads */
        for (int i = 0; i < ns; i++)
            if (sp[ns + i]) {
                *why = "a ceil-mode pool after padding at the end";
                return false;
            }
    }
    if (c->op == GIR_OP_Conv || c->op == GIR_OP_AveragePool) {
        if (cv != 0.0) {
            *why = "a pad value other than 0 before Conv or AveragePool";
            return false;
        }
        if (c->op == GIR_OP_AveragePool && !gir_node_int(c, "count_include_pad", 0) && !own_zero) {
            *why = "an AveragePool that excludes its own pads from the count";
            return false;
        }
        return true;
    }
    if (indices_used(g, c)) {
        *why = "a MaxPool whose Indices are read";
        return false;
    }
    if (isinf(cv) && cv < 0)
        return true;
    if (cv != 0.0 || !gir_pat_non_negative(g, x, false)) {
        *why = "a MaxPool after padding with other than -inf (or 0 of a tensor known not negative)";
        return false;
    }
    /* pads that are zeros now: every window must keep a cell of data */
    const int64_t *k;
    if (!all_ones(c, "dilations") || gir_attrs_get_ints(&c->attrs, "kernel_shape", &k) != ns) {
        *why = "a dilated MaxPool after zero padding";
        return false;
    }
    for (int i = 0; i < ns; i++)
        if (sp[i] + own[i] >= k[i] || sp[ns + i] + own[ns + i] >= k[i]) {
            *why = "a MaxPool after zero padding as wide as its window";
            return false;
        }
    return true;
}

static gir_status pad_merge(gir_rw *rw, const gir_node *n, gir_error *err)
{
    gir_graph *g = rw->g;
    const gir_value *x = gir_pat_in(rw, n, 0);
    int r = x ? x->shape.rank : -1;
    const int64_t *pads;
    ptrdiff_t np = gir_attrs_get_ints(&n->attrs, "pads", &pads);
    if (r < 0 || np != 2 * r)
        return gir_pat_skip(err, "Pad of a tensor of unknown rank");
    bool zero = true;
    for (int i = 0; i < 2 * r; i++) {
        if (pads[i] < 0)
            return gir_pat_skip(err, "Pad that crops (negative pads)");
        zero &= pads[i] == 0;
    }
    int32_t padded = n->out[0], in = n->in[0];
    if (zero)
        return gir_rw_done(rw, &in, err); /* pads nothing, in any mode */
    if (strcmp(gir_node_string(n, "mode", "constant"), "constant") != 0)
        return gir_pat_skip(err, "Pad in mode %s", gir_node_string(n, "mode", "constant"));
    if (r < 3 || pads[0] || pads[1] || pads[r] || pads[r + 1])
        return gir_pat_skip(err, "Pad of the batch or channel axis");
    int ns = r - 2;
    int64_t sp[2 * GIR_MAX_RANK];
    for (int i = 0; i < ns; i++) {
        sp[i] = pads[2 + i];
        sp[ns + i] = pads[r + 2 + i];
    }
    double cv = gir_node_float(n, "constant_value", 0.0);
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == padded)
            return gir_pat_skip(err, "the padded tensor is a graph output");
    size_t readers = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *c = g->nodes[i];
        if (c->n_in == 0 || c->in[0] != padded)
            continue;
        const char *why = NULL;
        if (!mergeable(g, c, padded, in, sp, ns, cv, &why))
            return gir_pat_skip(err, "%s", why);
        readers++;
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 1; k < g->nodes[i]->n_in; k++)
            if (g->nodes[i]->in[k] == padded)
                return gir_pat_skip(err, "the padded tensor is read as other than data");
    if (!readers)
        return gir_pat_skip(err, "nothing reads the padded tensor");
    /* the readers take the pads (in place: their names and outputs stay) */
    for (size_t i = 0; i < g->n_nodes; i++) {
        gir_node *c = g->nodes[i];
        if (c->n_in == 0 || c->in[0] != padded)
            continue;
        int64_t own[2 * GIR_MAX_RANK];
        (void)node_pads(c, ns, own);
        for (int k = 0; k < 2 * ns; k++)
            own[k] += sp[k];
        TRY(gir_attrs_set_ints(g, &c->attrs, "pads", own, 2 * (size_t)ns, err));
        TRY(gir_attrs_set_string(g, &c->attrs, "auto_pad", "NOTSET", err));
        if (c->op == GIR_OP_AveragePool)
            TRY(gir_attrs_set_int(g, &c->attrs, "count_include_pad", 1, err));
    }
    return gir_rw_done(rw, &in, err);
}

GIR_PATTERN(pad_merge, "pad-into-window", GIR_OP_Pad, "Pad merged into the pads of the Conv/pool that reads it", pad_merge);

/* ---- asymmetric pads split out as a Pad ------------------------------------------------ */

static gir_status pads_split(gir_rw *rw, const gir_node *n, gir_error *err)
{
    const gir_value *x;
    TRY(gir_pat_spatial_in(rw, n, &x, err));
    int r = x->shape.rank, ns = r - 2;
    int64_t own[2 * GIR_MAX_RANK];
    if (!node_pads(n, ns, own))
        return gir_pat_skip(err, "%s with auto_pad SAME", gir_op_name(n->op));
    bool asym = false, end_extra = false;
    for (int i = 0; i < ns; i++) {
        asym |= own[i] != own[ns + i];
        end_extra |= own[ns + i] > own[i];
    }
    if (!asym)
        return gir_pat_skip(err, "%s with symmetric pads", gir_op_name(n->op));
    double cv = 0.0;
    if (n->op == GIR_OP_MaxPool) {
        if (indices_used(rw->g, n))
            return gir_pat_skip(err, "MaxPool whose Indices are read");
        cv = -INFINITY;
    } else if (n->op == GIR_OP_AveragePool && !gir_node_int(n, "count_include_pad", 0)) {
        return gir_pat_skip(err, "AveragePool that excludes its pads from the count");
    }
    if (n->op != GIR_OP_Conv && gir_node_int(n, "ceil_mode", 0) && end_extra)
        return gir_pat_skip(err, "ceil-mode %s with more padding at the end", gir_op_name(n->op));
    int64_t pp[2 * GIR_MAX_RANK] = { 0 }, keep[2 * GIR_MAX_RANK];
    for (int i = 0; i < ns; i++) {
        int64_t m = own[i] < own[ns + i] ? own[i] : own[ns + i];
        keep[i] = keep[ns + i] = m;
        pp[2 + i] = own[i] - m;
        pp[r + 2 + i] = own[ns + i] - m;
    }
    gir_node *pad;
    int32_t y;
    TRY(gir_rw_unary(rw, GIR_OP_Pad, n->in[0], &pad, &y, err));
    TRY(gir_attrs_set_ints(rw->g, &pad->attrs, "pads", pp, 2 * (size_t)r, err));
    TRY(gir_attrs_set_string(rw->g, &pad->attrs, "mode", "constant", err));
    TRY(gir_attrs_set_float(rw->g, &pad->attrs, "constant_value", cv, err));
    return copy_with_pads(rw, n, y, keep, ns, false, err);
}

GIR_PATTERN(conv_pads_split, "conv-pads-as-pad", GIR_OP_Conv, "Conv's asymmetric pads as a Pad before it", pads_split);
GIR_PATTERN(maxpool_pads_split, "maxpool-pads-as-pad", GIR_OP_MaxPool, "MaxPool's asymmetric pads as a Pad of -inf before it", pads_split);
GIR_PATTERN(avgpool_pads_split, "avgpool-pads-as-pad", GIR_OP_AveragePool, "AveragePool's asymmetric counted pads as a Pad of 0 before it", pads_split);

/* ---- ceil mode as explicit end padding ------------------------------------------------- */

/* A ceil-mode pool with known input and output extents as a floor-mode
 * pool whose end pads grow by what the last window runs over: those cells
 * are not data, and neither a max nor an average that excludes pads sees
 * them (one that counts pads does not count these: only when no window
 * runs over). */
static gir_status ceil_pads(gir_rw *rw, const gir_node *n, gir_error *err)
{
    if (!gir_node_int(n, "ceil_mode", 0))
        return gir_pat_skip(err, "%s in floor mode already", gir_op_name(n->op));
    if (indices_used(rw->g, n))
        return gir_pat_skip(err, "MaxPool whose Indices are read");
    const gir_value *x = gir_pat_in(rw, n, 0), *y = rw->g->values[n->out[0]];
    int r = x ? x->shape.rank : -1;
    if (r < 3 || y->shape.rank != r)
        return gir_pat_skip(err, "%s of unknown rank", gir_op_name(n->op));
    int ns = r - 2;
    int64_t pads[2 * GIR_MAX_RANK];
    const int64_t *k, *s, *d;
    if (!node_pads(n, ns, pads) || gir_attrs_get_ints(&n->attrs, "kernel_shape", &k) != ns)
        return gir_pat_skip(err, "%s with auto_pad SAME", gir_op_name(n->op));
    ptrdiff_t nst = gir_attrs_get_ints(&n->attrs, "strides", &s), nd = gir_attrs_get_ints(&n->attrs, "dilations", &d);
    bool counted = n->op == GIR_OP_AveragePool && gir_node_int(n, "count_include_pad", 0);
    for (int i = 0; i < ns; i++) {
        int64_t L = x->shape.dims[2 + i], out = y->shape.dims[2 + i];
        int64_t st = nst == ns ? s[i] : 1, ek = (k[i] - 1) * (nd == ns ? d[i] : 1) + 1;
        if (L < 0 || out < 1)
            return gir_pat_skip(err, "%s of unknown spatial extent", gir_op_name(n->op));
        int64_t total = L + pads[i] + pads[ns + i], extra = (out - 1) * st + ek - total;
        if (extra < 0)
            extra = 0;
        if ((total + extra - ek) / st + 1 != out)
            return gir_pat_skip(err, "%s whose floor-mode extent differs", gir_op_name(n->op));
        if (extra && counted)
            return gir_pat_skip(err, "ceil-mode AveragePool counting pads, whose last window runs over");
        pads[ns + i] += extra;
    }
    return copy_with_pads(rw, n, n->in[0], pads, ns, true, err);
}

GIR_PATTERN(maxpool_ceil_pads, "maxpool-ceil-as-pads", GIR_OP_MaxPool, "ceil-mode MaxPool as floor mode with end padding", ceil_pads);
GIR_PATTERN(avgpool_ceil_pads, "avgpool-ceil-as-pads", GIR_OP_AveragePool, "ceil-mode AveragePool as floor mode with end padding", ceil_pads);
