/* Graph comparison: pairs nodes backwards from the outputs. */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct differ {
    const gir_graph *a, *b;
    const gir_diff_options *opt;
    gir_buf *out;
    size_t count, limit;
    int32_t *node_pair;  /* a node -> b node, -1 = unpaired */
    int32_t *node_back;  /* b node -> a node */
    int32_t *value_pair; /* a value -> b value */
    int32_t *value_back;
    int32_t *queue;      /* pending a-node indices */
    size_t qn;
    gir_error *err;
    gir_status st;
} differ;

static void report(differ *d, const char *fmt, ...) GIR_PRINTF(2, 3);
static void report(differ *d, const char *fmt, ...)
{
    d->count++;
    if (d->count > d->limit)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = gir_vstrdupf(fmt, ap);
    va_end(ap);
    if (s) {
        gir_buf_puts(d->out, s);
        gir_buf_putc(d->out, '\n');
        free(s);
    }
}

static void attr_text(const gir_attr *a, char *buf, size_t n)
{
    gir_buf b = GIR_BUF_INIT;
    char num[48];
    switch (a->type) {
    case GIR_ATTR_INT: gir_buf_printf(&b, "%lld", (long long)a->u.i); break;
    case GIR_ATTR_BOOL: gir_buf_puts(&b, a->u.i ? "true" : "false"); break;
    case GIR_ATTR_FLOAT:
        gir_fmt_double(num, a->u.f, false);
        gir_buf_puts(&b, num);
        break;
    case GIR_ATTR_STRING: gir_buf_printf(&b, "\"%s\"", a->u.s); break;
    case GIR_ATTR_INTS:
        gir_buf_putc(&b, '[');
        for (size_t i = 0; i < a->u.ints.n; i++)
            gir_buf_printf(&b, "%s%lld", i ? "," : "", (long long)a->u.ints.v[i]);
        gir_buf_putc(&b, ']');
        break;
    case GIR_ATTR_FLOATS:
        gir_buf_putc(&b, '[');
        for (size_t i = 0; i < a->u.floats.n; i++) {
            gir_fmt_double(num, a->u.floats.v[i], false);
            gir_buf_printf(&b, "%s%s", i ? "," : "", num);
        }
        gir_buf_putc(&b, ']');
        break;
    case GIR_ATTR_STRINGS:
        gir_buf_putc(&b, '[');
        for (size_t i = 0; i < a->u.strs.n; i++)
            gir_buf_printf(&b, "%s\"%s\"", i ? "," : "", a->u.strs.v[i]);
        gir_buf_putc(&b, ']');
        break;
    case GIR_ATTR_TENSOR: {
        char sh[96];
        gir_buf_printf(&b, "tensor %s%s", gir_dtype_name(a->u.t->dtype), gir_shape_str(&a->u.t->shape, sh, sizeof sh));
        break;
    }
    }
    char *s = gir_buf_take(&b);
    snprintf(buf, n, "%s", s ? s : "?");
    if (s && strlen(s) >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
    free(s);
}

/* Metadata that says where a model was read from, not what it is. */
static bool about_the_reading(const char *name)
{
    return strcmp(name, "source.params") == 0;
}

static void diff_attrs(differ *d, const char *what, const char *aname, const gir_attrs *x, const gir_attrs *y)
{
    char tx[160], ty[160];
    for (size_t i = 0; i < x->n; i++) {
        const gir_attr *ax = &x->items[i];
        if (about_the_reading(ax->name))
            continue;
        const gir_attr *ay = gir_attrs_find(y, ax->name);
        attr_text(ax, tx, sizeof tx);
        if (!ay) {
            report(d, "%s '%s': %s %s=%s only in A", what, aname, "attribute", ax->name, tx);
        } else if (!gir_attr_equal(ax, ay)) {
            attr_text(ay, ty, sizeof ty);
            report(d, "%s '%s': attribute %s is %s in A, %s in B", what, aname, ax->name, tx, ty);
        }
    }
    for (size_t i = 0; i < y->n; i++) {
        if (!about_the_reading(y->items[i].name) && !gir_attrs_find(x, y->items[i].name)) {
            attr_text(&y->items[i], ty, sizeof ty);
            report(d, "%s '%s': attribute %s=%s only in B", what, aname, y->items[i].name, ty);
        }
    }
}

static void diff_tensor(differ *d, const char *vname, gir_tensor *x, gir_tensor *y)
{
    if (!x && !y)
        return;
    if (!x || !y) {
        report(d, "value '%s': has data only in %s", vname, x ? "A" : "B");
        return;
    }
    if (x->dtype != y->dtype || !gir_shape_equal(&x->shape, &y->shape)) {
        char sx[96], sy[96];
        report(d, "value '%s': data is %s%s in A, %s%s in B", vname, gir_dtype_name(x->dtype),
               gir_shape_str(&x->shape, sx, sizeof sx), gir_dtype_name(y->dtype),
               gir_shape_str(&y->shape, sy, sizeof sy));
        return;
    }
    bool xl = x->data != NULL, yl = y->data != NULL;
    const void *px, *py;
    gir_status st = gir_tensor_load(x, &px, d->err);
    if (st == GIR_OK)
        st = gir_tensor_load(y, &py, d->err);
    if (st) {
        d->st = st;
        return;
    }
    if (memcmp(px, py, (size_t)x->nbytes) != 0) {
        size_t esz = gir_dtype_size(x->dtype), n = esz ? (size_t)(x->nbytes / esz) : 0, differ_n = 0;
        double maxabs = 0;
        for (size_t i = 0; i < n; i++) {
            if (memcmp((const char *)px + i * esz, (const char *)py + i * esz, esz) != 0) {
                differ_n++;
                if (x->dtype == GIR_DT_F32) {
                    double e = fabs((double)((const float *)px)[i] - (double)((const float *)py)[i]);
                    if (e > maxabs)
                        maxabs = e;
                }
            }
        }
        if (x->dtype == GIR_DT_F32)
            report(d, "value '%s': data differs in %zu of %zu elements (max abs difference %g)", vname,
                   differ_n, n, maxabs);
        else
            report(d, "value '%s': data differs in %zu of %zu elements", vname, differ_n, n);
    }
    if (!xl)
        gir_tensor_unload(x);
    if (!yl)
        gir_tensor_unload(y);
}

static const char *kind_name(gir_value_kind k)
{
    switch (k) {
    case GIR_VALUE_INPUT: return "input";
    case GIR_VALUE_WEIGHT: return "weight";
    case GIR_VALUE_CONST: return "constant";
    case GIR_VALUE_INTERMEDIATE: return "intermediate";
    }
    return "?";
}

static void enqueue(differ *d, int32_t an)
{
    d->queue[d->qn++] = an;
}

/* Pairs value va of A with vb of B and compares them. */
static void pair_values(differ *d, int32_t va, int32_t vb)
{
    if (va < 0 || vb < 0)
        return;
    if (d->value_pair[va] >= 0 || d->value_back[vb] >= 0) {
        if (d->value_pair[va] != vb)
            report(d, "value '%s' of A is used where B uses '%s' (edges differ)", d->a->values[va]->name,
                   d->b->values[vb]->name);
        return;
    }
    d->value_pair[va] = vb;
    d->value_back[vb] = va;
    const gir_value *x = d->a->values[va], *y = d->b->values[vb];
    if (d->opt->names && strcmp(x->name, y->name) != 0)
        report(d, "value '%s' is named '%s' in B", x->name, y->name);
    if ((x->kind == GIR_VALUE_INTERMEDIATE) != (y->kind == GIR_VALUE_INTERMEDIATE) ||
        (x->kind != GIR_VALUE_INTERMEDIATE && x->kind != y->kind &&
         !(x->kind == GIR_VALUE_WEIGHT && y->kind == GIR_VALUE_CONST) &&
         !(x->kind == GIR_VALUE_CONST && y->kind == GIR_VALUE_WEIGHT)))
        report(d, "value '%s': %s in A, %s in B", x->name, kind_name(x->kind), kind_name(y->kind));
    if (x->dtype != y->dtype)
        report(d, "value '%s': dtype %s in A, %s in B", x->name, gir_dtype_name(x->dtype), gir_dtype_name(y->dtype));
    if (!gir_shape_equal(&x->shape, &y->shape)) {
        char sx[96], sy[96];
        report(d, "value '%s': shape %s in A, %s in B", x->name, gir_shape_str(&x->shape, sx, sizeof sx),
               gir_shape_str(&y->shape, sy, sizeof sy));
    }
    if (d->opt->weights)
        diff_tensor(d, x->name, x->data, y->data);
    if (d->opt->meta)
        diff_attrs(d, "value", x->name, &x->meta, &y->meta);
    if (x->producer >= 0 && y->producer >= 0) {
        if (x->producer_out != y->producer_out)
            report(d, "value '%s': output %d of its node in A, output %d in B", x->name, x->producer_out,
                   y->producer_out);
        int32_t an = x->producer, bn = y->producer;
        if (d->node_pair[an] < 0 && d->node_back[bn] < 0) {
            d->node_pair[an] = bn;
            d->node_back[bn] = an;
            enqueue(d, an);
        } else if (d->node_pair[an] != bn) {
            report(d, "value '%s': produced by node '%s' in A but '%s' in B (edges differ)", x->name,
                   d->a->nodes[an]->name, d->b->nodes[bn]->name);
        }
    } else if ((x->producer >= 0) != (y->producer >= 0)) {
        report(d, "value '%s': produced by a node in %s only", x->name, x->producer >= 0 ? "A" : "B");
    }
}

static void compare_node(differ *d, int32_t an)
{
    const gir_node *x = d->a->nodes[an], *y = d->b->nodes[d->node_pair[an]];
    if (x->op != y->op || (x->op == GIR_OP_OPAQUE && (strcmp(x->opaque_op ? x->opaque_op : "", y->opaque_op ? y->opaque_op : "") ||
                                                     strcmp(x->opaque_format ? x->opaque_format : "",
                                                            y->opaque_format ? y->opaque_format : "")))) {
        report(d, "node '%s': op %s in A, %s in B (node '%s')", x->name, gir_node_op(x), gir_node_op(y), y->name);
        return;
    }
    if (d->opt->names && strcmp(x->name, y->name) != 0)
        report(d, "node '%s' is named '%s' in B", x->name, y->name);
    diff_attrs(d, "node", x->name, &x->attrs, &y->attrs);
    if (d->opt->meta)
        diff_attrs(d, "node meta", x->name, &x->meta, &y->meta);
    if (x->n_in != y->n_in)
        report(d, "node '%s': %zu inputs in A, %zu in B", x->name, x->n_in, y->n_in);
    if (x->n_out != y->n_out)
        report(d, "node '%s': %zu outputs in A, %zu in B", x->name, x->n_out, y->n_out);
    size_t nin = x->n_in < y->n_in ? x->n_in : y->n_in;
    for (size_t i = 0; i < nin; i++) {
        if ((x->in[i] < 0) != (y->in[i] < 0))
            report(d, "node '%s': input %zu is omitted in %s only", x->name, i, x->in[i] < 0 ? "A" : "B");
        else
            pair_values(d, x->in[i], y->in[i]);
    }
    size_t nout = x->n_out < y->n_out ? x->n_out : y->n_out;
    for (size_t i = 0; i < nout; i++)
        if (x->out[i] >= 0 && y->out[i] >= 0 && d->value_pair[x->out[i]] < 0 && d->value_back[y->out[i]] < 0) {
            d->value_pair[x->out[i]] = y->out[i];
            d->value_back[y->out[i]] = x->out[i];
        }
}

static void drain(differ *d)
{
    while (d->qn > 0 && d->st == GIR_OK)
        compare_node(d, d->queue[--d->qn]);
}

gir_status gir_graph_diff(const gir_graph *a, const gir_graph *b, const gir_diff_options *opt, gir_buf *out,
                          size_t *count, gir_error *err)
{
    differ d = { .a = a, .b = b, .opt = opt, .out = out, .err = err, .st = GIR_OK };
    d.limit = opt->max_report ? opt->max_report : 100;
    d.node_pair = malloc((a->n_nodes + 1) * sizeof(int32_t));
    d.node_back = malloc((b->n_nodes + 1) * sizeof(int32_t));
    d.value_pair = malloc((a->n_values + 1) * sizeof(int32_t));
    d.value_back = malloc((b->n_values + 1) * sizeof(int32_t));
    d.queue = malloc((a->n_nodes + 1) * sizeof(int32_t));
    if (!d.node_pair || !d.node_back || !d.value_pair || !d.value_back || !d.queue) {
        d.st = gir_nomem(err);
        goto done;
    }
    memset(d.node_pair, 0xff, (a->n_nodes + 1) * sizeof(int32_t));
    memset(d.node_back, 0xff, (b->n_nodes + 1) * sizeof(int32_t));
    memset(d.value_pair, 0xff, (a->n_values + 1) * sizeof(int32_t));
    memset(d.value_back, 0xff, (b->n_values + 1) * sizeof(int32_t));

    if (a->n_inputs != b->n_inputs)
        report(&d, "graph: %zu inputs in A, %zu in B", a->n_inputs, b->n_inputs);
    if (a->n_outputs != b->n_outputs)
        report(&d, "graph: %zu outputs in A, %zu in B", a->n_outputs, b->n_outputs);
    if (a->n_nodes != b->n_nodes)
        report(&d, "graph: %zu nodes in A, %zu in B", a->n_nodes, b->n_nodes);
    for (size_t i = 0; i < a->n_inputs && i < b->n_inputs; i++)
        pair_values(&d, a->inputs[i], b->inputs[i]);
    for (size_t i = 0; i < a->n_outputs && i < b->n_outputs; i++) {
        pair_values(&d, a->outputs[i], b->outputs[i]);
        drain(&d);
    }
    /* Nodes no output depends on: pair by name. */
    for (size_t i = 0; i < a->n_nodes && d.st == GIR_OK; i++) {
        if (d.node_pair[i] >= 0)
            continue;
        int32_t j = gir_graph_node_index(b, a->nodes[i]->name);
        if (j >= 0 && d.node_back[j] < 0) {
            d.node_pair[i] = j;
            d.node_back[j] = (int32_t)i;
            enqueue(&d, (int32_t)i);
            drain(&d);
        } else {
            report(&d, "node '%s' (%s): only in A", a->nodes[i]->name, gir_node_op(a->nodes[i]));
        }
    }
    for (size_t j = 0; j < b->n_nodes; j++)
        if (d.node_back[j] < 0)
            report(&d, "node '%s' (%s): only in B", b->nodes[j]->name, gir_node_op(b->nodes[j]));
    if (opt->meta)
        diff_attrs(&d, "graph", "meta", &a->meta, &b->meta);
    if (d.count > d.limit)
        gir_buf_printf(out, "... and %zu more differences\n", d.count - d.limit);
done:
    free(d.node_pair);
    free(d.node_back);
    free(d.value_pair);
    free(d.value_back);
    free(d.queue);
    *count = d.count;
    return d.st;
}
