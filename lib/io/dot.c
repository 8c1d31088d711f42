/* Graphviz DOT text for any graph. */
#include "dot.h"

#include "passes/passes.h"

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
static void put_source(gir_buf *b, const gir_graph *g, int32_t vi, const int32_t *input_slot, const int32_t *group)
{
    const gir_value *v = g->values[vi];
    if (v->producer >= 0 && group && group[v->producer] >= 0)
        gir_buf_printf(b, "c%d", group[v->producer]);
    else if (v->producer >= 0)
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

/* ---- collapsing repeated blocks ---------------------------------------------------- */

/* A run of k blocks of L nodes each, at position p of the topological
 * order, alike in operators and wiring: the first is drawn, the k - 1
 * others become one box. */
typedef struct dot_group {
    size_t len, hidden;    /* nodes per block, blocks drawn as this box */
    int32_t *nodes;        /* the hidden nodes in order (len * hidden), malloc'd */
} dot_group;

static void groups_free(dot_group *gr, size_t n)
{
    for (size_t i = 0; gr && i < n; i++)
        free(gr[i].nodes);
    free(gr);
}

/* Are the blocks of len nodes at positions p and q of order alike: the same
 * operators, operand counts, kinds of inputs, and inputs from inside the
 * block at the same offsets (from outside: outside too)? */
static bool blocks_alike(const gir_graph *g, const int32_t *order, const size_t *pos, size_t p, size_t q, size_t len)
{
    for (size_t j = 0; j < len; j++) {
        const gir_node *a = g->nodes[order[p + j]], *b = g->nodes[order[q + j]];
        if (a->op != b->op || a->n_in != b->n_in || a->n_out != b->n_out || strcmp(gir_node_op(a), gir_node_op(b)))
            return false;
        for (size_t k = 0; k < a->n_in; k++) {
            int32_t va = a->in[k], vb = b->in[k];
            if ((va < 0) != (vb < 0))
                return false;
            if (va < 0)
                continue;
            int32_t pa = g->values[va]->producer, pb = g->values[vb]->producer;
            bool ia = pa >= 0 && pos[pa] >= p && pos[pa] < p + len, ib = pb >= 0 && pos[pb] >= q && pos[pb] < q + len;
            if (ia != ib || (ia && pos[pa] - p != pos[pb] - q) || is_data(g->values[va]) != is_data(g->values[vb]))
                return false;
        }
    }
    return true;
}

#define DOT_MAX_BLOCK 48

/* Finds the runs of alike consecutive blocks in topological order (at each
 * position the run that hides the most nodes) and sets group[node] for the
 * nodes of every block after a run's first, which are drawn as one box. */
static gir_status find_groups(const gir_graph *g, int32_t *group, dot_group **groups, size_t *n_groups, gir_error *err)
{
    *groups = NULL;
    *n_groups = 0;
    int32_t *order;
    TRY(gir_topo_order(g, &order, err));
    size_t n = g->n_nodes, cap = 0;
    size_t *pos = malloc((n ? n : 1) * sizeof *pos);
    gir_status st = pos ? GIR_OK : gir_nomem(err);
    for (size_t i = 0; pos && i < n; i++)
        pos[order[i]] = i;
    for (size_t p = 0; p < n && st == GIR_OK;) {
        size_t best_len = 0, best_k = 1;
        for (size_t len = 1; len <= DOT_MAX_BLOCK && p + 2 * len <= n; len++) {
            size_t k = 1;
            while (p + (k + 1) * len <= n && blocks_alike(g, order, pos, p, p + k * len, len))
                k++;
            if (k >= 2 && len * (k - 1) > best_len * (best_k - 1)) {
                best_len = len;
                best_k = k;
            }
        }
        if (best_len * (best_k - 1) < 2) {
            p++;
            continue;
        }
        size_t hidden = best_len * (best_k - 1);
        int32_t *nodes = malloc(hidden * sizeof *nodes);
        if (!nodes || !GIR_GROW(*groups, cap, *n_groups + 1)) {
            free(nodes);
            st = gir_nomem(err);
            break;
        }
        for (size_t j = 0; j < hidden; j++) {
            nodes[j] = order[p + best_len + j];
            group[nodes[j]] = (int32_t)*n_groups;
        }
        (*groups)[(*n_groups)++] = (dot_group){ best_len, best_k - 1, nodes };
        p += best_len * best_k;
    }
    if (st) {
        groups_free(*groups, *n_groups);
        *groups = NULL;
        *n_groups = 0;
    }
    free(pos);
    free(order);
    return st;
}

/* The box of a group: how many blocks it stands for, their operators and
 * the first and last node hidden. */
static void group_box(gir_buf *b, const gir_graph *g, size_t i, const dot_group *gr)
{
    gir_buf_printf(b, "  c%zu [shape=box3d, style=filled, fillcolor=\"#fef9c3\", color=\"#a16207\", label=\"", i);
    gir_buf_printf(b, "%zu more block%s like the one above\\n", gr->hidden, gr->hidden == 1 ? "" : "s");
    for (size_t j = 0; j < gr->len && j < 8; j++) {
        if (j)
            gir_buf_puts(b, ", ");
        put_escaped(b, gir_node_op(g->nodes[gr->nodes[j]]), 24);
    }
    if (gr->len > 8)
        gir_buf_printf(b, ", ... (%zu nodes each)", gr->len);
    gir_buf_puts(b, "\\n");
    put_escaped(b, g->nodes[gr->nodes[0]]->name, 40);
    gir_buf_puts(b, " .. ");
    put_escaped(b, g->nodes[gr->nodes[gr->len * gr->hidden - 1]]->name, 40);
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
    int32_t *group = NULL;
    dot_group *groups = NULL;
    size_t n_groups = 0;
    if (opt->collapse) {
        group = malloc((g->n_nodes + 1) * sizeof *group);
        gir_status st = group ? GIR_OK : gir_nomem(err);
        if (group)
            memset(group, 0xff, (g->n_nodes + 1) * sizeof *group);
        if (st == GIR_OK)
            st = find_groups(g, group, &groups, &n_groups, err);
        if (st) {
            free(group);
            free(input_slot);
            free(loose);
            return st;
        }
    }

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
        if (!group || group[i] < 0)
            node_box(b, g, i, opt);
    for (size_t i = 0; i < n_groups; i++)
        group_box(b, g, i, &groups[i]);

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
            int32_t from = g->values[vi]->producer >= 0 && group ? group[g->values[vi]->producer] : -1;
            int32_t to = group ? group[i] : -1;
            if (to >= 0 || from >= 0) {
                /* an edge of a group's box: once, unlabelled */
                if (to >= 0 && from == to)
                    continue;
                gir_buf e = GIR_BUF_INIT;
                gir_buf_puts(&e, "  ");
                put_source(&e, g, vi, input_slot, group);
                if (to >= 0)
                    gir_buf_printf(&e, " -> c%d;\n", to);
                else
                    gir_buf_printf(&e, " -> n%zu;\n", i);
                if (e.failed)
                    b->failed = true;
                else if (!b->data || !strstr(b->data, e.data))
                    gir_buf_puts(b, e.data);
                gir_buf_free(&e);
                continue;
            }
            gir_buf_puts(b, "  ");
            put_source(b, g, vi, input_slot, group);
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
        put_source(b, g, g->outputs[i], input_slot, group);
        gir_buf_printf(b, " -> out%zu", i);
        edge_label(b, g, g->outputs[i], opt);
    }
    gir_buf_puts(b, "}\n");
    free(group);
    groups_free(groups, n_groups);
    free(input_slot);
    free(loose);
    if (b->failed)
        return gir_nomem(err);
    return GIR_OK;
}
