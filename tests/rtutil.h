/* Graph-building and running helpers for the runtime tests. */
#ifndef GIR_TEST_RTUTIL_H
#define GIR_TEST_RTUTIL_H

#include "testutil.h"

#include "graphir/runtime.h"

gir_graph *rt_graph(void);
/* A graph input of dtype and shape (rank, dims). */
int32_t rt_input(gir_graph *g, const char *name, gir_dtype dt, int rank, const int64_t *dims);
/* A constant value holding a copy of data. */
int32_t rt_const(gir_graph *g, const char *name, gir_dtype dt, int rank, const int64_t *dims, const void *data);
/* A node: ins and outs are comma-separated value names ("-" = an omitted
 * slot, left -1); outputs are new intermediate values. */
gir_node *rt_node(gir_graph *g, gir_op op, const char *name, const char *ins, const char *outs);
void rt_output(gir_graph *g, const char *name);

void rt_attr_int(gir_graph *g, gir_node *n, const char *name, int64_t v);
void rt_attr_float(gir_graph *g, gir_node *n, const char *name, double v);
void rt_attr_string(gir_graph *g, gir_node *n, const char *name, const char *v);
void rt_attr_ints(gir_graph *g, gir_node *n, const char *name, const int64_t *v, size_t count);
void rt_attr_floats(gir_graph *g, gir_node *n, const char *name, const double *v, size_t count);
#define RT_INTS(g, n, name, ...)                                                     \
    rt_attr_ints((g), (n), (name), (const int64_t[]){ __VA_ARGS__ },                 \
                 sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
#define RT_FLOATS(g, n, name, ...)                                                   \
    rt_attr_floats((g), (n), (name), (const double[]){ __VA_ARGS__ },                \
                   sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double))

/* A tensor with a copy of data (NULL: zeros). */
gir_tensor *rt_tensor_new(gir_dtype dt, int rank, const int64_t *dims, const void *data);
/* Pseudo-random floats in [-1, 1) from a seed. */
void rt_fill(float *p, size_t n, uint64_t seed);

/* Runs g with `threads` workers on the inputs (graph-input order) and
 * returns new references to all outputs in outs[]. */
void rt_run(const gir_graph *g, int threads, gir_tensor **inputs, size_t n_in, gir_tensor **outs, size_t n_out);
/* Same, expecting failure with code and message fragments. */
void rt_run_fails(const gir_graph *g, gir_tensor **inputs, size_t n_in, gir_status code, const char *frag1,
                  const char *frag2);

/* Asserts a float32 tensor's shape and values within tol (0: bitwise). */
void rt_expect_f32(gir_tensor *t, int rank, const int64_t *dims, const float *want, double tol);
void rt_expect_i64(gir_tensor *t, int rank, const int64_t *dims, const int64_t *want);
void rt_expect_bytes(gir_tensor *t, gir_dtype dt, int rank, const int64_t *dims, const void *want);

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define F32S(...) ((const float[]){ __VA_ARGS__ })
#define I64S(...) ((const int64_t[]){ __VA_ARGS__ })

#endif
