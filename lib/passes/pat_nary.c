/* Legalization patterns for variadic elementwise ops: Sum, Max, Min and
 * Mean of n inputs as a left-to-right chain of binary Add/Max/Min (Mean:
 * then Div by n), which is the order the runtime folds them in.  Sum and
 * Mean of two inputs become Add (and Div), for targets without them. */
#include "patterns.h"

static gir_status nary_chain(gir_rw *rw, const gir_node *n, gir_error *err)
{
    if (n->n_in == 2 && (n->op == GIR_OP_Max || n->op == GIR_OP_Min))
        return gir_pat_skip(err, "%s of two inputs is already binary", gir_op_name(n->op));
    const gir_value *x = gir_pat_in(rw, n, 0);
    if (n->op == GIR_OP_Mean)
        TRY(gir_pat_float_dtype(x, err));
    gir_op bin = n->op == GIR_OP_Max ? GIR_OP_Max : n->op == GIR_OP_Min ? GIR_OP_Min : GIR_OP_Add;
    int32_t y = n->in[0];
    if (n->n_in == 1 && n->op != GIR_OP_Mean)
        return gir_rw_done(rw, &y, err);
    for (size_t i = 1; i < n->n_in; i++)
        TRY(gir_rw_binary(rw, bin, y, n->in[i], NULL, &y, err));
    if (n->op == GIR_OP_Mean) {
        int32_t k;
        TRY(gir_rw_scalar(rw, x->dtype, (double)n->n_in, &k, err));
        TRY(gir_rw_binary(rw, GIR_OP_Div, y, k, NULL, &y, err));
    }
    return gir_rw_done(rw, &y, err);
}

const gir_pattern gir_pat_sum_chain = { "sum-as-add", GIR_OP_Sum, "Sum of n inputs as a chain of Add", nary_chain };
const gir_pattern gir_pat_max_chain = { "max-as-binary", GIR_OP_Max, "Max of n inputs as a chain of binary Max",
                                        nary_chain };
const gir_pattern gir_pat_min_chain = { "min-as-binary", GIR_OP_Min, "Min of n inputs as a chain of binary Min",
                                        nary_chain };
const gir_pattern gir_pat_mean_chain = { "mean-as-add-div", GIR_OP_Mean, "Mean of n inputs as Add chain and Div",
                                         nary_chain };
