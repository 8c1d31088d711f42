/* Testing legalization patterns: run a graph before and after a pattern on
 * the reference runtime and compare (header-only; included by one test
 * program each).
 *
 *   gir_graph *g = rt_graph();
 *   rt_input(g, "x", GIR_DT_F32, 2, DIMS(4, 8));
 *   gir_node *n = rt_node(g, GIR_OP_HardSigmoid, "hs", "x", "y");
 *   rt_output(g, "y");
 *   pat_check(g, "hardsigmoid-as-clip", "hs", PAT_EDGES, 0);   // bit-exact
 *
 * Float inputs are random in [-4, 4) with edge values spliced in: 0, -0,
 * +-1, +-0.5, +-3, +-6, +-1e30, the smallest normal and, with PAT_NAN, NaN
 * and +-infinity.  Integer inputs count up from -3. */
#ifndef GIR_TESTS_PATUTIL_H
#define GIR_TESTS_PATUTIL_H

#include "rtutil.h"

#include "graphir/model.h"
#include "passes/legalize.h"
#include "passes/passes.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAT_EDGES = 1, PAT_NAN = 2, PAT_POSITIVE = 4 };

static inline gir_tensor *pat_input(const gir_value *v, unsigned flags, uint64_t seed)
{
    static const float edges[] = { 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 3.0f, -3.0f, 6.0f, -6.0f, 1e30f, -1e30f,
                                   FLT_MIN, -FLT_MIN, 2.5f, -2.5f };
    static const float nans[] = { NAN, INFINITY, -INFINITY };
    size_t n = (size_t)gir_shape_numel(&v->shape);
    gir_tensor *t = rt_tensor_new(v->dtype, v->shape.rank, v->shape.dims, NULL);
    void *d = NULL;
    assert_int_equal(gir_tensor_load(t, (const void **)&d, NULL), GIR_OK);
    if (v->dtype == GIR_DT_F32) {
        float *p = d;
        rt_fill(p, n, seed);
        for (size_t i = 0; i < n; i++)
            p[i] *= 4.0f;
        size_t k = 0;
        if (flags & PAT_EDGES)
            for (size_t i = 0; i < sizeof edges / sizeof *edges && k < n; i++, k += 3)
                p[k] = edges[i];
        if (flags & PAT_NAN)
            for (size_t i = 0; i < 3 && k < n; i++, k += 3)
                p[k] = nans[i];
        if (flags & PAT_POSITIVE)
            for (size_t i = 0; i < n; i++)
                p[i] = fabsf(p[i]);
    } else if (v->dtype == GIR_DT_I64) {
        for (size_t i = 0; i < n; i++)
            ((int64_t *)d)[i] = (int64_t)i - 3;
    } else if (v->dtype == GIR_DT_BOOL) {
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)d)[i] = (uint8_t)((i * 7 + seed) % 3 == 0);
    }
    return t;
}

/* Runs g on seeded inputs; outs get new references. */
static inline void pat_run(const gir_graph *g, unsigned flags, gir_tensor **outs)
{
    gir_tensor *ins[8] = { 0 };
    size_t n = gir_graph_input_count(g);
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++)
        ins[i] = pat_input(gir_graph_input(g, i), flags, 1234 + i);
    rt_run(g, 1, ins, n, outs, gir_graph_output_count(g));
    for (size_t i = 0; i < n; i++)
        gir_tensor_unref(ins[i]);
}

/* Compares two float tensors: tol 0 bitwise (NaN equal to NaN), else
 * |a - b| <= tol * max(1, |a|). */
static inline void pat_compare(gir_tensor *a, gir_tensor *b, double tol)
{
    assert_int_equal(gir_tensor_dtype(a), gir_tensor_dtype(b));
    const gir_shape *sa = gir_tensor_shape(a), *sb = gir_tensor_shape(b);
    assert_int_equal(sa->rank, sb->rank);
    for (int i = 0; i < sa->rank; i++)
        assert_int_equal(sa->dims[i], sb->dims[i]);
    const void *pa, *pb;
    assert_int_equal(gir_tensor_load(a, &pa, NULL), GIR_OK);
    assert_int_equal(gir_tensor_load(b, &pb, NULL), GIR_OK);
    if (gir_tensor_dtype(a) != GIR_DT_F32 || tol == 0) {
        if (gir_tensor_dtype(a) == GIR_DT_F32) {
            size_t n = (size_t)gir_shape_numel(sa);
            for (size_t i = 0; i < n; i++) {
                float x = ((const float *)pa)[i], y = ((const float *)pb)[i];
                if (!(isnan(x) && isnan(y)) && memcmp(&x, &y, 4) != 0)
                    fail_msg("element %zu: %.9g before, %.9g after the rewrite", i, (double)x, (double)y);
            }
            return;
        }
        assert_memory_equal(pa, pb, gir_tensor_nbytes(a));
        return;
    }
    size_t n = (size_t)gir_shape_numel(sa);
    for (size_t i = 0; i < n; i++) {
        double x = ((const float *)pa)[i], y = ((const float *)pb)[i];
        if (isnan(x) || isnan(y)) {
            if (!(isnan(x) && isnan(y)))
                fail_msg("element %zu: %.9g before, %.9g after the rewrite", i, x, y);
            continue;
        }
        if (x == y)
            continue;
        if (fabs(x - y) > tol * fmax(1.0, fabs(x)))
            fail_msg("element %zu: %.9g before, %.9g after the rewrite", i, x, y);
    }
}

/* Applies pattern `pattern` to node `node` of g (finished here), checks the
 * node is gone and the outputs agree (tol as pat_compare) on inputs made
 * with flags.  Returns the rewritten graph for further checks (the caller
 * frees it); g is freed. */
static inline gir_graph *pat_check(gir_graph *g, const char *pattern, const char *node, unsigned flags, double tol)
{
    gir_error err = GIR_ERROR_INIT;
    assert_int_equal(gir_graph_finish(g, &err), GIR_OK);
    const gir_pattern *p = gir_pattern_find(pattern);
    assert_non_null(p);
    gir_tensor *before[8] = { 0 }, *after[8] = { 0 };
    size_t no = gir_graph_output_count(g);
    assert_true(no <= 8);
    pat_run(g, flags, before);
    gir_graph *r = NULL;
    assert_int_equal(gir_graph_clone(g, &r, &err), GIR_OK);
    int32_t idx = gir_graph_node_index(r, node);
    assert_true(idx >= 0);
    gir_status st = gir_pattern_apply(r, p, idx, &err);
    if (st)
        fail_msg("pattern %s on '%s': %s", pattern, node, err.message ? err.message : gir_status_name(st));
    assert_true(gir_graph_node_index(r, node) < 0);
    assert_int_equal(gir_graph_output_count(r), no);
    for (size_t i = 0; i < no; i++)
        assert_string_equal(gir_value_name(gir_graph_output(r, i)), gir_value_name(gir_graph_output(g, i)));
    pat_run(r, flags, after);
    for (size_t i = 0; i < no; i++) {
        pat_compare(before[i], after[i], tol);
        gir_tensor_unref(before[i]);
        gir_tensor_unref(after[i]);
    }
    gir_graph_free(g);
    return r;
}

/* Asserts the pattern does not apply to the node, with a reason containing frag. */
static inline void pat_refuses(gir_graph *g, const char *pattern, const char *node, const char *frag)
{
    gir_error err = GIR_ERROR_INIT;
    assert_int_equal(gir_graph_finish(g, &err), GIR_OK);
    const gir_pattern *p = gir_pattern_find(pattern);
    assert_non_null(p);
    gir_graph *r = NULL;
    assert_int_equal(gir_graph_clone(g, &r, &err), GIR_OK);
    assert_int_equal(gir_pattern_apply(r, p, gir_graph_node_index(r, node), &err), GIR_E_UNSUPPORTED);
    assert_non_null(err.message);
    if (!strstr(err.message, frag))
        fail_msg("'%s' does not contain '%s'", err.message, frag);
    gir_error_clear(&err);
    gir_graph_free(r);
    gir_graph_free(g);
}

/* Writes g (finished) as target to file (in the test's temporary folder),
 * reads it back, runs both on inputs made with flags and compares their
 * first output (tol as pat_compare).  Returns the graph read back (the
 * caller frees it). */
static inline gir_graph *pat_through(const gir_graph *g, const char *target, const char *file, unsigned flags,
                                     double tol)
{
    gir_error err = GIR_ERROR_INIT;
    char *path = tu_tmp(file);
    TU_OK(gir_save(g, path, target, NULL, &err), &err);
    gir_graph *back = NULL;
    TU_OK(gir_load(path, target, NULL, &back, &err), &err);
    free(path);
    gir_tensor *before[8] = { 0 }, *after[8] = { 0 };
    pat_run(g, flags, before);
    pat_run(back, flags, after);
    pat_compare(before[0], after[0], tol);
    for (int i = 0; i < 8; i++) {
        gir_tensor_unref(before[i]);
        gir_tensor_unref(after[i]);
    }
    return back;
}

/* Counts the nodes of op in g. */
#endif
