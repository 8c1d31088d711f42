#include "rtutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gir_graph *rt_graph(void)
{
    gir_graph *g;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_new(&g, &err), &err);
    return g;
}

static void set_shape(gir_value *v, gir_dtype dt, int rank, const int64_t *dims)
{
    v->dtype = dt;
    v->shape.rank = rank;
    for (int i = 0; i < rank; i++)
        v->shape.dims[i] = dims[i];
}

int32_t rt_input(gir_graph *g, const char *name, gir_dtype dt, int rank, const int64_t *dims)
{
    gir_error err = GIR_ERROR_INIT;
    int32_t v;
    TU_OK(gir_graph_add_value(g, name, GIR_VALUE_INPUT, &v, &err), &err);
    set_shape(g->values[v], dt, rank, dims);
    TU_OK(gir_graph_add_input(g, v, &err), &err);
    return v;
}

gir_tensor *rt_tensor_new(gir_dtype dt, int rank, const int64_t *dims, const void *data)
{
    gir_error err = GIR_ERROR_INIT;
    gir_shape s = { rank, { 0 } };
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    uint64_t nbytes;
    TU_OK(gir_tensor_size(dt, &s, &nbytes, &err), &err);
    gir_tensor *t;
    TU_OK(gir_tensor_create(dt, &s, data, (size_t)nbytes, &t, &err), &err);
    return t;
}

int32_t rt_const(gir_graph *g, const char *name, gir_dtype dt, int rank, const int64_t *dims, const void *data)
{
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t = rt_tensor_new(dt, rank, dims, data);
    int32_t v;
    TU_OK(gir_graph_add_const(g, name, t, &v, &err), &err);
    gir_tensor_unref(t);
    return v;
}

/* Splits "a,b,,c" into names (empty allowed). */
static size_t split_names(const char *s, char names[][64], size_t max)
{
    size_t n = 0;
    if (!*s)
        return 0;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        assert_true(n < max && len < 64);
        memcpy(names[n], p, len);
        names[n][len] = '\0';
        n++;
        if (!e)
            break;
        p = e + 1;
    }
    return n;
}

gir_node *rt_node(gir_graph *g, gir_op op, const char *name, const char *ins, const char *outs)
{
    gir_error err = GIR_ERROR_INIT;
    char in_names[16][64], out_names[16][64];
    size_t ni = split_names(ins, in_names, 16), no = split_names(outs, out_names, 16);
    gir_node *n;
    TU_OK(gir_graph_add_node(g, name, op, ni, no, &n, &err), &err);
    for (size_t i = 0; i < ni; i++) {
        if (strcmp(in_names[i], "-") == 0)
            continue;
        int32_t v = gir_graph_value_index(g, in_names[i]);
        if (v < 0)
            fail_msg("no value named %s", in_names[i]);
        n->in[i] = v;
    }
    for (size_t i = 0; i < no; i++)
        if (strcmp(out_names[i], "-") != 0)
            TU_OK(gir_node_make_output(g, n, i, out_names[i], &err), &err);
    return n;
}

void rt_output(gir_graph *g, const char *name)
{
    gir_error err = GIR_ERROR_INIT;
    int32_t v = gir_graph_value_index(g, name);
    assert_true(v >= 0);
    TU_OK(gir_graph_add_output(g, v, &err), &err);
}

void rt_attr_int(gir_graph *g, gir_node *n, const char *name, int64_t v)
{
    assert_int_equal(gir_attrs_set_int(g, &n->attrs, name, v, NULL), GIR_OK);
}

void rt_attr_float(gir_graph *g, gir_node *n, const char *name, double v)
{
    assert_int_equal(gir_attrs_set_float(g, &n->attrs, name, v, NULL), GIR_OK);
}

void rt_attr_string(gir_graph *g, gir_node *n, const char *name, const char *v)
{
    assert_int_equal(gir_attrs_set_string(g, &n->attrs, name, v, NULL), GIR_OK);
}

void rt_attr_ints(gir_graph *g, gir_node *n, const char *name, const int64_t *v, size_t count)
{
    assert_int_equal(gir_attrs_set_ints(g, &n->attrs, name, v, count, NULL), GIR_OK);
}

void rt_attr_floats(gir_graph *g, gir_node *n, const char *name, const double *v, size_t count)
{
    assert_int_equal(gir_attrs_set_floats(g, &n->attrs, name, v, count, NULL), GIR_OK);
}

void rt_fill(float *p, size_t n, uint64_t seed)
{
    uint64_t s = seed * 2654435761u + 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        p[i] = (float)((s >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
    }
}

void rt_run(const gir_graph *g, int threads, gir_tensor **inputs, size_t n_in, gir_tensor **outs, size_t n_out)
{
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    TU_OK(gir_session_new(g, threads, &s, &err), &err);
    assert_int_equal(gir_session_input_count(s), n_in);
    for (size_t i = 0; i < n_in; i++)
        TU_OK(gir_session_set_input(s, i, inputs[i], &err), &err);
    TU_OK(gir_session_run(s, &err), &err);
    assert_int_equal(gir_session_output_count(s), n_out);
    for (size_t i = 0; i < n_out; i++)
        outs[i] = gir_tensor_ref(gir_session_output(s, i));
    gir_session_free(s);
}

void rt_run_fails(const gir_graph *g, gir_tensor **inputs, size_t n_in, gir_status code, const char *frag1,
                  const char *frag2)
{
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    gir_status st = gir_session_new(g, 1, &s, &err);
    if (st == GIR_OK) {
        for (size_t i = 0; st == GIR_OK && i < n_in; i++)
            st = gir_session_set_input(s, i, inputs[i], &err);
        if (st == GIR_OK)
            st = gir_session_run(s, &err);
        gir_session_free(s);
    }
    if (frag2)
        TU_FAILS(st, &err, code, frag1, frag2);
    else
        TU_FAILS(st, &err, code, frag1);
    gir_error_clear(&err);
}

static void expect_shape(gir_tensor *t, gir_dtype dt, int rank, const int64_t *dims)
{
    assert_non_null(t);
    assert_int_equal(gir_tensor_dtype(t), dt);
    const gir_shape *s = gir_tensor_shape(t);
    assert_int_equal(s->rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(s->dims[i], dims[i]);
}

void rt_expect_f32(gir_tensor *t, int rank, const int64_t *dims, const float *want, double tol)
{
    expect_shape(t, GIR_DT_F32, rank, dims);
    const float *p;
    TU_OK(gir_tensor_load(t, (const void **)&p, NULL), NULL);
    size_t n = (size_t)gir_shape_numel(gir_tensor_shape(t));
    for (size_t i = 0; i < n; i++) {
        bool ok = tol == 0 ? memcmp(&p[i], &want[i], sizeof(float)) == 0
                           : (isnan(want[i]) ? isnan(p[i])
                                             : p[i] == want[i] || fabs((double)p[i] - (double)want[i]) <= tol);
        if (!ok)
            fail_msg("element %zu is %.9g, expected %.9g", i, (double)p[i], (double)want[i]);
    }
}

void rt_expect_i64(gir_tensor *t, int rank, const int64_t *dims, const int64_t *want)
{
    rt_expect_bytes(t, GIR_DT_I64, rank, dims, want);
}

void rt_expect_bytes(gir_tensor *t, gir_dtype dt, int rank, const int64_t *dims, const void *want)
{
    expect_shape(t, dt, rank, dims);
    const void *p;
    TU_OK(gir_tensor_load(t, &p, NULL), NULL);
    assert_memory_equal(p, want, (size_t)gir_tensor_nbytes(t));
}
