/* The canonical operator table. */
#include "core/ir.h"

#include <string.h>

static const gir_attr_schema no_attrs[] = { { NULL, 0, 0, 0, 0, NULL, NULL } };

static const gir_op_info table[GIR_OP_COUNT_] = {
    [GIR_OP_OPAQUE] = { "opaque", "opaque", 0, GIR_VARIADIC, 0, GIR_VARIADIC, no_attrs,
                        "an operator kept verbatim from its source format", NULL },
#define GIR_OP(id, mi, ma, mo, mxo, cat) \
    [GIR_OP_##id] = { #id, cat, mi, ma, mo, mxo, no_attrs, NULL, NULL },
#include "ops.def"
#undef GIR_OP
};

const gir_op_info *gir_op_get(gir_op op)
{
    return (unsigned)op < GIR_OP_COUNT_ ? &table[op] : NULL;
}

const char *gir_op_name(gir_op op)
{
    return (unsigned)op < GIR_OP_COUNT_ ? table[op].name : "?";
}

gir_op gir_op_from_name(const char *name)
{
    for (int i = 1; i < GIR_OP_COUNT_; i++)
        if (strcmp(table[i].name, name) == 0)
            return (gir_op)i;
    return GIR_OP_OPAQUE;
}
