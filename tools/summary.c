/* What info and batch report about a graph: the operator histogram, the
 * parameter counts, and JSON string escaping. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static int by_count(const void *x, const void *y)
{
    const gc_op_count *a = x, *b = y;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const gc_op_count *)x)->name, ((const gc_op_count *)y)->name);
}

gc_op_count *gc_histogram(const gir_graph *g, bool most_used_first, size_t *n, size_t *opaque)
{
    gc_op_count *h = calloc(g->n_nodes + 1, sizeof *h);
    *n = 0;
    if (opaque)
        *opaque = 0;
    if (!h)
        return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const char *name = gir_node_op(g->nodes[i]);
        if (opaque)
            *opaque += g->nodes[i]->op == GIR_OP_OPAQUE;
        size_t j = 0;
        while (j < *n && strcmp(h[j].name, name) != 0)
            j++;
        if (j == *n)
            h[(*n)++] = (gc_op_count){ name, 0 };
        h[j].count++;
    }
    qsort(h, *n, sizeof *h, most_used_first ? by_count : by_name);
    return h;
}

gc_param_stats gc_parameters(const gir_graph *g)
{
    gc_param_stats s = { 0, 0, 0, 0 };
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (v->kind != GIR_VALUE_WEIGHT && v->kind != GIR_VALUE_CONST)
            continue;
        s.tensors++;
        int64_t n = gir_shape_numel(&v->shape);
        if (n < 0 || v->dtype == GIR_DT_UNKNOWN) {
            s.unknown++;
            continue;
        }
        s.elements += (uint64_t)n;
        s.bytes += (uint64_t)n * gir_dtype_size(v->dtype);
    }
    return s;
}

void gc_json_escape(gir_buf *b, const char *s)
{
    gir_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': gir_buf_puts(b, "\\\""); break;
        case '\\': gir_buf_puts(b, "\\\\"); break;
        case '\n': gir_buf_puts(b, "\\n"); break;
        case '\r': gir_buf_puts(b, "\\r"); break;
        case '\t': gir_buf_puts(b, "\\t"); break;
        default:
            if (*p < 0x20)
                gir_buf_printf(b, "\\u%04x", *p);
            else
                gir_buf_putc(b, (char)*p);
        }
    }
    gir_buf_putc(b, '"');
}

void gc_json_string(FILE *f, const char *s)
{
    gir_buf b = GIR_BUF_INIT;
    gc_json_escape(&b, s);
    if (b.data)
        fputs(b.data, f);
    gir_buf_free(&b);
}
