/* Resource limits of one input (see limits.h). */
#include "limits.h"

#include <inttypes.h>
#include <stdlib.h>

static const struct {
    const char *name;
    uint64_t dflt;
} table[GIR_LIM_COUNT_] = {
    [GIR_LIM_DEPTH] = { "max-depth", 256 },
    [GIR_LIM_NODES] = { "max-nodes", 1000000 },
    [GIR_LIM_TENSORS] = { "max-tensors", 1000000 },
    [GIR_LIM_ATTRS] = { "max-attrs", 10000000 },
    [GIR_LIM_WEIGHT_BYTES] = { "max-weight-bytes", UINT64_C(4) << 30 },
    [GIR_LIM_UNZIP_BYTES] = { "max-unzip-bytes", UINT64_C(4) << 30 },
    [GIR_LIM_RUN_ELEMENTS] = { "max-run-elements", UINT64_C(4000000000) },
};

static _Thread_local gir_limit_scope *current;

const char *gir_limit_name(gir_limit_id id) { return table[id].name; }
uint64_t gir_limit_default(gir_limit_id id) { return table[id].dflt; }

void gir_limits_default(gir_limits *l)
{
    for (int i = 0; i < GIR_LIM_COUNT_; i++)
        l->v[i] = table[i].dflt;
}

uint64_t gir_limit(gir_limit_id id) { return current ? current->lim.v[id] : table[id].dflt; }

void gir_limits_enter(gir_limit_scope *s, const gir_limits *l)
{
    *s = (gir_limit_scope){ .lim = *l, .prev = current };
    current = s;
}

void gir_limits_leave(gir_limit_scope *s)
{
    if (current == s)
        current = s->prev;
}

gir_status gir_limit_fail(gir_error *err, gir_limit_id id, const char *fmt, ...)
{
    if (!err || err->code != GIR_OK)
        return GIR_E_LIMIT;
    va_list ap;
    va_start(ap, fmt);
    gir_status st = gir_vfail(err, GIR_E_LIMIT, fmt, ap);
    va_end(ap);
    if (st == GIR_E_LIMIT) /* the message, then the limit and how to raise it */
        gir_err_replace_message(err, "%s " GIR_LIMIT_HINT, err->message, GIR_LIMIT_HINT_ARGS(id));
    return st;
}

gir_status gir_limit_nodes(uint64_t n, gir_error *err)
{
    if (current && n > current->lim.v[GIR_LIM_NODES])
        return gir_limit_fail(err, GIR_LIM_NODES, "the graph has more than %" PRIu64 " nodes",
                              current->lim.v[GIR_LIM_NODES]);
    return GIR_OK;
}

gir_status gir_limit_attr(gir_error *err)
{
    if (current && ++current->attrs > current->lim.v[GIR_LIM_ATTRS]) {
        current->attrs_over = true;
        return gir_limit_fail(err, GIR_LIM_ATTRS, "the model has more than %" PRIu64 " attributes",
                              current->lim.v[GIR_LIM_ATTRS]);
    }
    return GIR_OK;
}

void gir_limit_explain(gir_error *err)
{
    if (!current || !current->attrs_over || !err)
        return;
    gir_error_clear(err);
    gir_limit_fail(err, GIR_LIM_ATTRS, "the model has more than %" PRIu64 " attributes", current->lim.v[GIR_LIM_ATTRS]);
}

gir_status gir_limit_tensor(uint64_t nbytes, gir_error *err)
{
    if (!current)
        return GIR_OK;
    if (++current->tensors > current->lim.v[GIR_LIM_TENSORS])
        return gir_limit_fail(err, GIR_LIM_TENSORS, "the model has more than %" PRIu64 " tensors",
                              current->lim.v[GIR_LIM_TENSORS]);
    if (!gir_add_u64(current->weight_bytes, nbytes, &current->weight_bytes) ||
        current->weight_bytes > current->lim.v[GIR_LIM_WEIGHT_BYTES])
        return gir_limit_fail(err, GIR_LIM_WEIGHT_BYTES,
                              "the model's tensors take more than %" PRIu64 " bytes",
                              current->lim.v[GIR_LIM_WEIGHT_BYTES]);
    return GIR_OK;
}
