/* Legalization patterns for logic on booleans where a target has no
 * boolean operators: the operands cast to float32 (0 or 1), arithmetic
 * that is exact on 0 and 1, and a Cast of the result back to bool
 * (non-zero is true):
 *   And(a, b)   = Cast(a' * b')          Or(a, b) = Cast(a' + b')
 *   Xor(a, b)   = Cast(a' - b')          Not(a)   = Cast(1 - a')
 *   Equal(a, b) = Cast(1 - (a' - b')^2)  (boolean operands only)
 * Bit-exact: every intermediate is a small integer. */
#include "patterns.h"

static gir_status cast_to(gir_rw *rw, int32_t x, const char *to, int32_t *out, gir_error *err)
{
    gir_node *c;
    TRY(gir_rw_unary(rw, GIR_OP_Cast, x, &c, out, err));
    TRY(gir_attrs_set_string(rw->g, &c->attrs, "to", to, err));
    return GIR_OK;
}

static gir_status bool_arith(gir_rw *rw, const gir_node *n, gir_error *err)
{
    int32_t f[2] = { -1, -1 };
    size_t nin = n->op == GIR_OP_Not ? 1 : 2;
    for (size_t i = 0; i < nin; i++) {
        const gir_value *v = gir_pat_in(rw, n, i);
        if (!v || v->dtype != GIR_DT_BOOL)
            return gir_pat_skip(err, "%s of %s operands (bool only)", gir_op_name(n->op),
                                v ? gir_dtype_name(v->dtype) : "?");
    }
    for (size_t i = 0; i < nin; i++)
        TRY(cast_to(rw, n->in[i], "float32", &f[i], err));
    int32_t y, k;
    switch (n->op) {
    case GIR_OP_And: TRY(gir_rw_binary(rw, GIR_OP_Mul, f[0], f[1], NULL, &y, err)); break;
    case GIR_OP_Or: TRY(gir_rw_binary(rw, GIR_OP_Add, f[0], f[1], NULL, &y, err)); break;
    case GIR_OP_Xor: TRY(gir_rw_binary(rw, GIR_OP_Sub, f[0], f[1], NULL, &y, err)); break;
    case GIR_OP_Not:
        TRY(gir_rw_scalar(rw, GIR_DT_F32, 1.0, &k, err));
        TRY(gir_rw_binary(rw, GIR_OP_Sub, k, f[0], NULL, &y, err));
        break;
    default: { /* Equal */
        int32_t d, sq;
        TRY(gir_rw_binary(rw, GIR_OP_Sub, f[0], f[1], NULL, &d, err));
        TRY(gir_rw_binary(rw, GIR_OP_Mul, d, d, NULL, &sq, err));
        TRY(gir_rw_scalar(rw, GIR_DT_F32, 1.0, &k, err));
        TRY(gir_rw_binary(rw, GIR_OP_Sub, k, sq, NULL, &y, err));
        break;
    }
    }
    TRY(cast_to(rw, y, "bool", &y, err));
    return gir_rw_done(rw, &y, err);
}

const gir_pattern gir_pat_and_arith = { "and-as-mul", GIR_OP_And, "And as Cast+Mul+Cast", bool_arith };
const gir_pattern gir_pat_or_arith = { "or-as-add", GIR_OP_Or, "Or as Cast+Add+Cast", bool_arith };
const gir_pattern gir_pat_xor_arith = { "xor-as-sub", GIR_OP_Xor, "Xor as Cast+Sub+Cast", bool_arith };
const gir_pattern gir_pat_not_arith = { "not-as-sub", GIR_OP_Not, "Not as Cast+Sub+Cast", bool_arith };
GIR_PATTERN(equal_bool_arith, "equal-bool-as-arith", GIR_OP_Equal, "Equal of booleans as Cast+Sub+Mul+Sub+Cast", bool_arith);
