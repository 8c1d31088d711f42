/* The mapping engine: finds the plain rows of a format's operator table
 * (format.h, gir_op_map) that readers and writers run instead of tables
 * of their own. */
#include <stdbool.h>
#include <string.h>

#include "format.h"
#include "ops/ops.h"

const gir_op_map *gir_map_read_row(const gir_op_map *tab, const char *format_op)
{
    for (const gir_op_map *m = tab; m && m->format_op; m++)
        if ((m->plain & GIR_MAP_READ) && strcmp(m->format_op, format_op) == 0)
            return m;
    return NULL;
}

/* The row writing op named source, else the preferred, else the first,
 * among the rows that write op (plain_only: plainly). */
static const gir_op_map *write_row(const gir_op_map *tab, gir_op op, const char *source, bool plain_only)
{
    const gir_op_map *first = NULL, *preferred = NULL;
    for (const gir_op_map *m = tab; m && m->format_op; m++) {
        if (!((plain_only ? m->plain : m->dir) & GIR_MAP_WRITE) || m->op != op)
            continue;
        if (source && strcmp(m->format_op, source) == 0)
            return m;
        if (!preferred && (m->dir & GIR_MAP_PREFER))
            preferred = m;
        if (!first)
            first = m;
    }
    return preferred ? preferred : first;
}

const gir_op_map *gir_map_write_row(const gir_op_map *tab, gir_op op, const char *source)
{
    return write_row(tab, op, source, true);
}

const gir_op_map *gir_map_write_name(const gir_op_map *tab, gir_op op, const char *source)
{
    return write_row(tab, op, source, false);
}

gir_status gir_map_read_attrs(const gir_op_map *row, const gir_attr_io *io, gir_graph *g, gir_attrs *dst,
                              gir_error *err)
{
    for (const gir_attr_map *a = row->attrs; a && (a->format_attr || a->canonical_attr); a++) {
        if (a->conv == GIR_CONV_CODE)
            continue;
        int64_t i = 0;
        double f = 0;
        gir_status st = io->get(io->ctx, a->format_attr, a->conv, a->dflt, &i, &f, err);
        if (!st)
            st = a->conv == GIR_CONV_INT ? gir_attrs_set_int(g, dst, a->canonical_attr, i, err)
                                         : gir_attrs_set_float(g, dst, a->canonical_attr, f, err);
        if (st)
            return st;
    }
    return GIR_OK;
}

gir_status gir_map_write_attrs(const gir_op_map *row, const gir_attr_io *io, const gir_node *n, gir_error *err)
{
    for (const gir_attr_map *a = row->attrs; a && (a->format_attr || a->canonical_attr); a++) {
        if (a->conv == GIR_CONV_CODE)
            continue;
        const gir_attr_schema *s = gir_op_attr_schema(n->op, a->canonical_attr);
        int64_t i = 0;
        double f = 0;
        bool is_default;
        if (a->conv == GIR_CONV_INT) {
            i = gir_attrs_get_int(&n->attrs, a->canonical_attr, s ? s->i : 0);
            is_default = (double)i == a->dflt;
        } else {
            f = gir_attrs_get_float(&n->attrs, a->canonical_attr, s ? s->f : 0);
            is_default = f == a->dflt;
        }
        gir_status st = io->put(io->ctx, a->format_attr, a->conv, i, f, is_default, err);
        if (st)
            return st;
    }
    return GIR_OK;
}

bool gir_map_keys(const gir_op_map *row, const char **keys, size_t max)
{
    size_t k = 0;
    for (const gir_attr_map *a = row->attrs; a && (a->format_attr || a->canonical_attr); a++) {
        if (!a->format_attr)
            continue;
        if (k + 1 >= max)
            return false;
        keys[k++] = a->format_attr;
    }
    if (k >= max)
        return false;
    keys[k] = NULL;
    return true;
}
