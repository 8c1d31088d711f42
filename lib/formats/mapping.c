/* The mapping engine: finds the plain rows of a format's operator table
 * (format.h, gir_op_map) that readers and writers run instead of tables
 * of their own. */
#include <stdbool.h>
#include <string.h>

#include "format.h"

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
