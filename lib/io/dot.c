/* Graphviz DOT text for any graph. */
#include "dot.h"

#include <stdlib.h>
#include <string.h>

const gir_dot_options gir_dot_defaults = { .attrs = true, .shapes = true, .max_attrs = 8, .max_attr_text = 40 };

/* Is a canonical node's attribute at its schema default (what the op
 * means without it)?  Kernel shapes taken from the weight count as such. */
static bool at_default(const gir_node *n, const gir_attr *a)
{
    const gir_attr_schema *sc = n->op == GIR_OP_OPAQUE ? NULL : gir_op_attr_schema(n->op, a->name);
    if (!sc || sc->presence != GIR_ATTR_DEFAULTED)
        return false;
    switch (a->type) {
    case GIR_ATTR_INT:
    case GIR_ATTR_BOOL: return sc->fill == GIR_FILL_NONE && a->u.i == sc->i;
    case GIR_ATTR_FLOAT: return sc->fill == GIR_FILL_NONE && a->u.f == sc->f;
    case GIR_ATTR_STRING: return sc->s && strcmp(a->u.s, sc->s) == 0;
    case GIR_ATTR_INTS:
        if (sc->fill == GIR_FILL_KERNEL)
            return true;
        if (sc->fill != GIR_FILL_SPATIAL && sc->fill != GIR_FILL_PADS)
            return false;
        for (size_t i = 0; i < a->u.ints.n; i++)
            if (a->u.ints.v[i] != sc->i)
                return false;
        return true;
    default: return false;
    }
}

/* At most this many weight lines in one box; the rest are counted. */
#define MAX_WEIGHT_LINES 6

/* Appends s to a DOT double-quoted string: quotes and backslashes escaped,
 * control characters replaced, at most max bytes (0 = all) then "...". */
static void put_escaped(gir_buf *b, const char *s, size_t max)
{
    size_t n = strlen(s);
    bool cut = max && n > max;
    if (cut)
        n = max;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            gir_buf_putc(b, '\\');
        gir_buf_putc(b, c < 0x20 || c == 0x7f ? '?' : (char)c);
    }
    if (cut)
        gir_buf_puts(b, "...");
}

static void put_shape(gir_buf *b, const gir_value *v)
{
    if (v->shape.rank < 0) {
        gir_buf_putc(b, '?');
        return;
    }
    gir_buf_putc(b, '[');
    for (int i = 0; i < v->shape.rank; i++) {
        if (i)
            gir_buf_putc(b, ',');
        if (v->dim_names[i])
            put_escaped(b, v->dim_names[i], 16);
        else if (v->shape.dims[i] < 0)
            gir_buf_putc(b, '?');
        else
            gir_buf_printf(b, "%lld", (long long)v->shape.dims[i]);
    }
    gir_buf_putc(b, ']');
}

/* "float32 [64,3,3,3]" */
static void put_type(gir_buf *b, const gir_value *v)
{
    gir_buf_puts(b, gir_dtype_name(v->dtype));
    gir_buf_putc(b, ' ');
    put_shape(b, v);
}

/* An attribute's value as short text (unescaped), into t. */
static void attr_text(gir_buf *t, const gir_attr *a)
{
    char num[48];
    switch (a->type) {
    case GIR_ATTR_INT: gir_buf_printf(t, "%lld", (long long)a->u.i); break;
    case GIR_ATTR_BOOL: gir_buf_puts(t, a->u.i ? "true" : "false"); break;
    case GIR_ATTR_FLOAT:
        gir_fmt_double(num, a->u.f, false);
        gir_buf_puts(t, num);
        break;
    case GIR_ATTR_STRING: gir_buf_puts(t, a->u.s); break;
    case GIR_ATTR_INTS:
        gir_buf_putc(t, '[');
        for (size_t i = 0; i < a->u.ints.n; i++)
            gir_buf_printf(t, "%s%lld", i ? "," : "", (long long)a->u.ints.v[i]);
        gir_buf_putc(t, ']');
        break;
    case GIR_ATTR_FLOATS:
        gir_buf_putc(t, '[');
        for (size_t i = 0; i < a->u.floats.n; i++) {
            gir_fmt_double(num, a->u.floats.v[i], false);
            gir_buf_printf(t, "%s%s", i ? "," : "", num);
        }
        gir_buf_putc(t, ']');
        break;
    case GIR_ATTR_STRINGS:
        gir_buf_putc(t, '[');
        for (size_t i = 0; i < a->u.strs.n; i++)
            gir_buf_printf(t, "%s%s", i ? "," : "", a->u.strs.v[i]);
        gir_buf_putc(t, ']');
        break;
    case GIR_ATTR_TENSOR: {
        char sh[96];
        gir_buf_printf(t, "tensor %s %s", gir_dtype_name(a->u.t->dtype), gir_shape_str(&a->u.t->shape, sh, sizeof sh));
        break;
    }
    }
}

static bool is_data(const gir_value *v)
{
    return v->producer < 0 && (v->kind == GIR_VALUE_WEIGHT || v->kind == GIR_VALUE_CONST);
}

static void node_box(gir_buf *b, const gir_graph *g, size_t idx, const gir_dot_options *opt)
{
    const gir_node *n = g->nodes[idx];
    bool opaque = n->op == GIR_OP_OPAQUE;
    gir_buf_printf(b, "  n%zu [shape=box, style=\"%s\", fillcolor=\"%s\", color=\"%s\", label=\"", idx,
                   opaque ? "rounded,filled,dashed" : "rounded,filled", opaque ? "#fee2e2" : "#f3f4f6",
                   opaque ? "#b91c1c" : "#6b7280");
    if (opaque) {
        gir_buf_puts(b, "opaque ");
        put_escaped(b, n->opaque_format ? n->opaque_format : "?", 0);
        gir_buf_putc(b, ':');
    }
    put_escaped(b, gir_node_op(n), 0);
    gir_buf_puts(b, "\\n");
    put_escaped(b, n->name, 48);
    if (opt->attrs) {
        size_t max = opt->max_attrs ? opt->max_attrs : 8;
        size_t len = opt->max_attr_text ? opt->max_attr_text : 40;
        size_t listed = 0, more = 0;
        for (size_t i = 0; i < n->attrs.n; i++) {
            if (!opt->all_attrs && at_default(n, &n->attrs.items[i]))
                continue;
            if (listed++ >= max) {
                more++;
                continue;
            }
            gir_buf t = GIR_BUF_INIT;
            gir_buf_printf(&t, "%s=", n->attrs.items[i].name);
            attr_text(&t, &n->attrs.items[i]);
            if (t.failed)
                b->failed = true;
            gir_buf_puts(b, "\\n");
            put_escaped(b, t.data ? t.data : "", len);
            gir_buf_free(&t);
        }
        if (more)
            gir_buf_printf(b, "\\n(+%zu more attributes)", more);
    }
    size_t shown = 0, hidden = 0;
    for (size_t i = 0; i < n->n_in; i++) {
        const gir_value *v = gir_in(g, n, i);
        if (!v || !is_data(v))
            continue;
        if (shown == MAX_WEIGHT_LINES) {
            hidden++;
            continue;
        }
        gir_buf_puts(b, v->kind == GIR_VALUE_WEIGHT ? "\\nweight " : "\\nconst ");
        put_escaped(b, v->name, 32);
        gir_buf_putc(b, ' ');
        put_type(b, v);
        shown++;
    }
    if (hidden)
        gir_buf_printf(b, "\\n(+%zu more weights)", hidden);
    gir_buf_puts(b, "\"];\n");
}

/* The DOT id of the place a value comes from: its producer, the graph
 * input it is, or a free-standing value box. */
static void put_source(gir_buf *b, const gir_graph *g, int32_t vi, const int32_t *input_slot)
{
    const gir_value *v = g->values[vi];
    if (v->producer >= 0)
        gir_buf_printf(b, "n%d", v->producer);
    else if (input_slot[vi] >= 0)
        gir_buf_printf(b, "in%d", input_slot[vi]);
    else
        gir_buf_printf(b, "v%d", vi);
}

static void edge_label(gir_buf *b, const gir_graph *g, int32_t vi, const gir_dot_options *opt)
{
    const gir_value *v = g->values[vi];
    bool multi = v->producer >= 0 && g->nodes[v->producer]->n_out > 1;
    if (!opt->shapes && !multi) {
        gir_buf_puts(b, ";\n");
        return;
    }
    gir_buf_puts(b, " [label=\"");
    if (multi)
        gir_buf_printf(b, "#%d ", v->producer_out);
    if (opt->shapes)
        put_shape(b, v);
    gir_buf_puts(b, "\"];\n");
}

gir_status gir_dot_write(const gir_graph *g, const gir_dot_options *opt, gir_buf *out, gir_error *err)
{
    if (!opt)
        opt = &gir_dot_defaults;
    int32_t *input_slot = malloc((g->n_values + 1) * sizeof *input_slot);
    bool *loose = calloc(g->n_values + 1, sizeof *loose);
    if (!input_slot || !loose) {
        free(input_slot);
        free(loose);
        return gir_nomem(err);
    }
    memset(input_slot, 0xff, (g->n_values + 1) * sizeof *input_slot);
    for (size_t i = g->n_inputs; i-- > 0;)
        input_slot[g->inputs[i]] = (int32_t)i;

    uint64_t elements = 0;
    size_t tensors = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (v->kind != GIR_VALUE_WEIGHT && v->kind != GIR_VALUE_CONST)
            continue;
        tensors++;
        int64_t k = gir_shape_numel(&v->shape);
        if (k > 0 && !gir_add_u64(elements, (uint64_t)k, &elements))
            elements = UINT64_MAX;
    }

    gir_buf *b = out;
    gir_buf_puts(b, "digraph \"");
    put_escaped(b, g->name && *g->name ? g->name : "graph", 0);
    gir_buf_puts(b, "\" {\n  graph [rankdir=TB, ranksep=0.25, nodesep=0.2, fontname=\"Helvetica\", labelloc=t, label=\"");
    put_escaped(b, g->name && *g->name ? g->name : "graph", 0);
    gir_buf_printf(b, "\\n%zu nodes, %zu weight tensors, %llu elements\"];\n", g->n_nodes, tensors,
                   (unsigned long long)elements);
    gir_buf_puts(b, "  node [fontname=\"Helvetica\", fontsize=10];\n"
                    "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#4b5563\"];\n");

    for (size_t i = 0; i < g->n_inputs; i++) {
        const gir_value *v = g->values[g->inputs[i]];
        if (input_slot[g->inputs[i]] != (int32_t)i)
            continue; /* listed twice: drawn once */
        gir_buf_printf(b, "  in%zu [shape=ellipse, style=filled, fillcolor=\"#dbeafe\", label=\"input ", i);
        put_escaped(b, v->name, 48);
        gir_buf_puts(b, "\\n");
        put_type(b, v);
        gir_buf_puts(b, "\"];\n");
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        node_box(b, g, i, opt);

    /* Values that come from neither a node nor a graph input and are not
     * summarised in a box: dangling names and data read as graph outputs. */
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++) {
            int32_t vi = n->in[k];
            if (vi >= 0 && g->values[vi]->producer < 0 && input_slot[vi] < 0 && !is_data(g->values[vi]))
                loose[vi] = true;
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        int32_t vi = g->outputs[i];
        if (g->values[vi]->producer < 0 && input_slot[vi] < 0)
            loose[vi] = true;
    }
    for (size_t i = 0; i < g->n_values; i++) {
        if (!loose[i])
            continue;
        const gir_value *v = g->values[i];
        gir_buf_printf(b, "  v%zu [shape=ellipse, style=\"filled,dashed\", fillcolor=\"#f9fafb\", label=\"", i);
        put_escaped(b, v->kind == GIR_VALUE_WEIGHT ? "weight " : v->kind == GIR_VALUE_CONST ? "const " : "", 0);
        put_escaped(b, v->name, 48);
        gir_buf_puts(b, "\\n");
        put_type(b, v);
        gir_buf_puts(b, "\"];\n");
    }

    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++) {
            int32_t vi = n->in[k];
            if (vi < 0 || (is_data(g->values[vi]) && !loose[vi]))
                continue;
            gir_buf_puts(b, "  ");
            put_source(b, g, vi, input_slot);
            gir_buf_printf(b, " -> n%zu", i);
            edge_label(b, g, vi, opt);
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        const gir_value *v = g->values[g->outputs[i]];
        gir_buf_printf(b, "  out%zu [shape=ellipse, style=filled, fillcolor=\"#dcfce7\", label=\"output ", i);
        put_escaped(b, v->name, 48);
        gir_buf_puts(b, "\\n");
        put_type(b, v);
        gir_buf_puts(b, "\"];\n  ");
        put_source(b, g, g->outputs[i], input_slot);
        gir_buf_printf(b, " -> out%zu", i);
        edge_label(b, g, g->outputs[i], opt);
    }
    gir_buf_puts(b, "}\n");
    free(input_slot);
    free(loose);
    if (b->failed)
        return gir_nomem(err);
    return GIR_OK;
}
