/* Small graph-building helpers for the op-table and pass tests
 * (header-only: static functions, included by one test program each). */
#ifndef GIR_TESTS_GBUILD_H
#define GIR_TESTS_GBUILD_H

#include "testutil.h"

#include "passes/passes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets v's shape from "[1,3,?,batch]": numbers, ? for an unknown
 * dimension, a name for a symbolic one; "*" is an unknown rank. */
static inline void gb_shape(gir_value *v, const char *spec)
{
    for (int i = 0; i < GIR_MAX_RANK; i++)
        v->dim_names[i] = NULL;
    if (strcmp(spec, "*") == 0) {
        v->shape.rank = -1;
        return;
    }
    assert_true(spec[0] == '[');
    const char *p = spec + 1;
    int r = 0;
    while (*p && *p != ']') {
        char tok[64];
        size_t len = strcspn(p, ",]");
        assert_true(len > 0 && len < sizeof tok && r < GIR_MAX_RANK);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (strcmp(tok, "?") == 0) {
            v->shape.dims[r] = -1;
        } else if (isdigit((unsigned char)tok[0])) {
            v->shape.dims[r] = strtoll(tok, NULL, 10);
        } else {
            v->shape.dims[r] = -1;
            v->dim_names[r] = gir_arena_strdup(&v->graph->arena, tok);
        }
        r++;
        p += len;
        if (*p == ',')
            p++;
    }
    v->shape.rank = r;
}

/* The inverse of gb_shape: "[N,3,?,224]". */
static inline const char *gb_text(const gir_value *v, char *buf, size_t n)
{
    if (v->shape.rank < 0) {
        snprintf(buf, n, "*");
        return buf;
    }
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < v->shape.rank && used < n; i++) {
        const char *sep = i ? "," : "";
        if (v->dim_names[i] && v->shape.dims[i] < 0)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, v->dim_names[i]);
        else if (v->shape.dims[i] < 0)
            used += (size_t)snprintf(buf + used, n - used, "%s?", sep);
        else
            used += (size_t)snprintf(buf + used, n - used, "%s%lld", sep, (long long)v->shape.dims[i]);
    }
    if (used < n)
        snprintf(buf + used, n - used, "]");
    return buf;
}

static inline gir_graph *gb_graph(void)
{
    gir_graph *g = NULL;
    assert_int_equal(gir_graph_new(&g, NULL), GIR_OK);
    return g;
}

/* Adds a value of the given kind ("float32", "[2,3]"); inputs are also
 * listed as graph inputs. */
static inline int32_t gb_value(gir_graph *g, const char *name, gir_value_kind kind, const char *dtype,
                               const char *shape)
{
    int32_t idx;
    assert_int_equal(gir_graph_add_value(g, name, kind, &idx, NULL), GIR_OK);
    g->values[idx]->dtype = strcmp(dtype, "?") ? gir_dtype_from_name(dtype) : GIR_DT_UNKNOWN;
    gb_shape(g->values[idx], shape);
    if (kind == GIR_VALUE_INPUT)
        assert_int_equal(gir_graph_add_input(g, idx, NULL), GIR_OK);
    return idx;
}

/* A node: ins are comma-separated value names ("_" = omitted input), outs
 * names of its outputs (created as intermediates unless they exist; "_" =
 * an unconnected output slot).  op "opaque" makes an opaque node. */
static inline gir_node *gb_node(gir_graph *g, const char *op, const char *name, const char *ins, const char *outs)
{
    const char *lists[2] = { ins, outs };
    char items[2][16][64];
    size_t count[2] = { 0, 0 };
    for (int l = 0; l < 2; l++) {
        const char *p = lists[l];
        while (*p) {
            size_t len = strcspn(p, ",");
            assert_true(len < 64 && count[l] < 16);
            memcpy(items[l][count[l]], p, len);
            items[l][count[l]++][len] = '\0';
            p += len;
            if (*p == ',')
                p++;
        }
    }
    bool opaque = strcmp(op, "opaque") == 0;
    gir_op o = opaque ? GIR_OP_OPAQUE : gir_op_from_name(op);
    assert_true(opaque || o != GIR_OP_OPAQUE);
    gir_node *n = NULL;
    assert_int_equal(gir_graph_add_node(g, name, o, count[0], count[1], &n, NULL), GIR_OK);
    if (opaque) {
        n->opaque_format = "test";
        n->opaque_op = "mystery";
    }
    for (size_t i = 0; i < count[0]; i++) {
        if (strcmp(items[0][i], "_") == 0)
            continue;
        n->in[i] = gir_graph_value_index(g, items[0][i]);
        assert_true(n->in[i] >= 0);
    }
    for (size_t k = 0; k < count[1]; k++) {
        if (strcmp(items[1][k], "_") == 0)
            continue;
        int32_t v = gir_graph_value_index(g, items[1][k]);
        if (v >= 0)
            assert_int_equal(gir_node_set_output(g, n, k, v, NULL), GIR_OK);
        else
            assert_int_equal(gir_node_make_output(g, n, k, items[1][k], NULL), GIR_OK);
    }
    return n;
}

#define GB_INT(n, name, v) assert_int_equal(gir_attrs_set_int((n)->graph, &(n)->attrs, (name), (v), NULL), GIR_OK)
#define GB_FLOAT(n, name, v) assert_int_equal(gir_attrs_set_float((n)->graph, &(n)->attrs, (name), (v), NULL), GIR_OK)
#define GB_STR(n, name, v) assert_int_equal(gir_attrs_set_string((n)->graph, &(n)->attrs, (name), (v), NULL), GIR_OK)
#define GB_INTS(n, name, ...)                                                                           \
    assert_int_equal(gir_attrs_set_ints((n)->graph, &(n)->attrs, (name), (const int64_t[]){ __VA_ARGS__ }, \
                                        sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), NULL),       \
                     GIR_OK)
#define GB_FLOATS(n, name, ...)                                                                          \
    assert_int_equal(gir_attrs_set_floats((n)->graph, &(n)->attrs, (name), (const double[]){ __VA_ARGS__ }, \
                                          sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double), NULL),       \
                     GIR_OK)

/* Asserts value's dtype and shape text. */
static inline void gb_expect(const gir_graph *g, const char *value, const char *dtype, const char *shape)
{
    const gir_value *v = gir_graph_find_value(g, value);
    assert_non_null(v);
    char buf[256];
    assert_string_equal(gb_text(v, buf, sizeof buf), shape);
    assert_string_equal(gir_dtype_name(v->dtype), dtype);
}

#endif
