/* Core: error registry, number text, arena, graph builder, attributes,
 * tensors, atomic outputs, options. */
#include "testutil.h"

#include "core/limits.h"
#include "formats/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_status_registry(void **state)
{
    (void)state;
    assert_string_equal(gir_status_name(GIR_OK), "ok");
    assert_string_equal(gir_status_name(GIR_E_SYNTAX), "syntax");
    assert_string_equal(gir_status_name(GIR_E_UNSUPPORTED_OP), "unsupported-op");
    assert_int_equal(gir_status_exit_code(GIR_E_SYNTAX), 2);
    assert_int_equal(gir_status_exit_code(GIR_E_UNSUPPORTED_ATTR), 3);
    assert_int_equal(gir_status_exit_code(GIR_E_CHECK_FAILED), 4);
    assert_int_equal(gir_status_exit_code(GIR_E_IO), 5);
    assert_int_equal(gir_status_exit_code(GIR_E_ARGUMENT), 1);
    assert_int_equal(gir_status_from_name("cycle"), GIR_E_CYCLE);
    assert_int_equal(gir_status_from_name("no-such-code"), GIR_STATUS_COUNT_);
    /* Every code has a distinct name and a description ending in a period. */
    for (int i = 0; i < GIR_STATUS_COUNT_; i++) {
        const char *d = gir_status_describe((gir_status)i);
        assert_true(strlen(d) > 3 && d[strlen(d) - 1] == '.');
        for (int j = 0; j < i; j++)
            assert_string_not_equal(gir_status_name((gir_status)i), gir_status_name((gir_status)j));
    }
}

static void test_error_format(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    assert_int_equal(gir_fail(&err, GIR_E_REFERENCE, "entry points at node %d of %d", 9, 4), GIR_E_REFERENCE);
    /* The first failure wins; later ones do not overwrite it. */
    gir_fail(&err, GIR_E_SYNTAX, "outer");
    gir_err_loc(&err, "/nodes/%d/inputs/0", 3);
    gir_err_loc(&err, "/ignored");
    gir_err_node(&err, "conv0");
    gir_err_file(&err, "model.json");
    char *s = gir_error_format(&err);
    assert_string_equal(s, "model.json: /nodes/3/inputs/0: node 'conv0': entry points at node 9 of 4 [reference]");
    free(s);
    gir_error_clear(&err);
    assert_int_equal(err.code, GIR_OK);
    assert_null(err.message);
    /* NULL errors are allowed everywhere. */
    assert_int_equal(gir_fail(NULL, GIR_E_IO, "x"), GIR_E_IO);
}

static void check_double(double v, bool point, const char *want)
{
    char out[48];
    gir_fmt_double(out, v, point);
    assert_string_equal(out, want);
}

/* The arena: alignment, zeroing, strings packed, blocks from 64 KiB up to
 * the large (mapped) ones, one-off blocks for big requests. */
/* A module's failure helper over gir_vfail, as json.c's and npy.c's. */
static gir_status fail_at(gir_error *err, int at, const char *fmt, ...) GIR_PRINTF(3, 4);
static gir_status fail_at(gir_error *err, int at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_status st = gir_vfail(err, GIR_E_SYNTAX, fmt, ap);
    va_end(ap);
    gir_err_loc(err, "byte %d", at);
    return st;
}

static void test_vfail(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    assert_int_equal(fail_at(&err, 7, "expected %s, found '%c'", "a digit", '\x01'), GIR_E_SYNTAX);
    char *m = gir_error_format(&err);
    assert_string_equal(m, "byte 7: expected a digit, found '\\x01' [syntax]");
    free(m);
    /* the innermost failure wins: a second one changes nothing */
    assert_int_equal(fail_at(&err, 9, "later"), GIR_E_SYNTAX);
    assert_string_equal(err.message, "expected a digit, found '\\x01'");
    assert_string_equal(err.location, "byte 7");
    gir_error_clear(&err);
    /* a limit's message ends with the limit in force and how to raise it */
    assert_int_equal(gir_limit_fail(&err, GIR_LIM_DEPTH, "nesting %d deep", 5), GIR_E_LIMIT);
    assert_non_null(strstr(err.message, "nesting 5 deep (limit max-depth="));
    assert_non_null(strstr(err.message, "; raise it with --max-depth=N or -I max-depth=N)"));
    gir_error_clear(&err);
}

/* Node operand indices out of range are refused, inputs first. */
static void test_node_refs(void **state)
{
    (void)state;
    gir_graph *g;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_new(&g, &err), &err);
    gir_node *n;
    int32_t x;
    TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
    TU_OK(gir_graph_add_node(g, "r", GIR_OP_Relu, 1, 1, &n, &err), &err);
    n->in[0] = x;
    n->out[0] = -1;
    TU_OK(gir_node_check_refs(g, n, &err), &err);
    n->out[0] = 5;
    n->in[0] = -2;
    TU_FAILS(gir_node_check_refs(g, n, &err), &err, GIR_E_REFERENCE, "input 0 refers to value -2 of 1");
    gir_error_clear(&err);
    n->in[0] = x;
    TU_FAILS(gir_node_check_refs(g, n, &err), &err, GIR_E_REFERENCE, "output 0 refers to value 5 of 1");
    gir_error_clear(&err);
    gir_graph_free(g);
}

static void test_arena(void **state)
{
    (void)state;
    gir_arena a = { 0 };
    char *s = gir_arena_strdup(&a, "abc");
    assert_string_equal(s, "abc");
    char *t = gir_arena_strndup(&a, "defgh", 2);
    assert_string_equal(t, "de");
    assert_ptr_equal(t, s + 4); /* strings pack without padding */
    for (size_t i = 0; i < 20000; i++) {
        unsigned char *p = gir_arena_alloc(&a, 1 + i % 300);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (size_t k = 0; k < 1 + i % 300; k++)
            assert_int_equal(p[k], 0);
        memset(p, 0xAB, 1 + i % 300); /* fills it for the next check */
    }
    unsigned char *big = gir_arena_alloc(&a, 3u << 20);
    assert_non_null(big);
    assert_int_equal(big[0] | big[(3u << 20) - 1], 0);
    uint64_t *m = gir_arena_memdup(&a, (uint64_t[]){ 7, 8 }, 2 * sizeof *m);
    assert_int_equal(m[0] + m[1], 15);
    assert_true(a.used_total >= (3u << 20) + 20000);
    gir_arena_free(&a);
    assert_null(a.head);
    assert_int_equal(a.used_total, 0);
}

static void test_characters(void **state)
{
    (void)state;
    assert_int_equal(gir_hex_digit('0'), 0);
    assert_int_equal(gir_hex_digit('9'), 9);
    assert_int_equal(gir_hex_digit('a'), 10);
    assert_int_equal(gir_hex_digit('F'), 15);
    assert_int_equal(gir_hex_digit('g'), -1);
    assert_int_equal(gir_hex_digit('/'), -1);
    char u[4];
    assert_int_equal(gir_utf8_encode(0x41, u), 1);
    assert_memory_equal(u, "A", 1);
    assert_int_equal(gir_utf8_encode(0xE9, u), 2);
    assert_memory_equal(u, "\xc3\xa9", 2);
    assert_int_equal(gir_utf8_encode(0x20AC, u), 3);
    assert_memory_equal(u, "\xe2\x82\xac", 3);
    assert_int_equal(gir_utf8_encode(0x1F600, u), 4);
    assert_memory_equal(u, "\xf0\x9f\x98\x80", 4);
}

static void test_number_text(void **state)
{
    (void)state;
    /* Python repr of floats. */
    check_double(0.001, false, "0.001");
    check_double(1e-05, false, "1e-05");
    check_double(2e-05, true, "2e-05");
    check_double(0.0001, false, "0.0001");
    check_double(100.0, true, "100.0");
    check_double(100.0, false, "100");
    check_double(0.1, false, "0.1");
    check_double(1e16, true, "1e+16");
    check_double(123456789012345.0, true, "123456789012345.0");
    check_double(-2.5, false, "-2.5");
    check_double(0.0, true, "0.0");
    check_double(1.0 / 3.0, false, "0.3333333333333333");
    char out[48];
    gir_fmt_float(out, 0.1f, false);
    assert_string_equal(out, "0.1");
    gir_fmt_float(out, 1e-5f, false);
    assert_string_equal(out, "1e-05");
    /* The digit count is found by binary search except at powers of two,
     * where the gap below is half the gap above: the shortest text still. */
    check_double((double)0.1f, false, "0.10000000149011612");
    check_double(0x1p-1074, false, "5e-324");
    check_double(0x1p-1022, false, "2.2250738585072014e-308");
    check_double(0x1p60, false, "1.152921504606847e+18");
    check_double(-0x1p-20, false, "-9.5367431640625e-07");
    check_double(5e-324 * 3, false, "1.5e-323");
    gir_fmt_float(out, 0x1p-149f, false);
    assert_string_equal(out, "1e-45");
    gir_fmt_float(out, 0x1p100f, false);
    assert_string_equal(out, "1.2676506e+30");
    gir_fmt_float(out, 16777216.0f, false);
    assert_string_equal(out, "16777216");
    int64_t i;
    double d;
    assert_true(gir_parse_i64("-42", &i) && i == -42);
    assert_false(gir_parse_i64("42L", &i));
    assert_false(gir_parse_i64("", &i));
    assert_true(gir_parse_double("2e-05", &d) && d == 2e-05);
    assert_false(gir_parse_double("1.0x", &d));
}

static void test_attr_lists(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    /* gir_attrs_put takes name and data as they are; reserve sizes at once. */
    gir_graph *g = NULL;
    TU_OK(gir_graph_new(&g, &err), &err);
    gir_node *p;
    TU_OK(gir_graph_add_node(g, "p", GIR_OP_Identity, 1, 1, &p, &err), &err);
    TU_OK(gir_attrs_reserve(g, &p->attrs, 3, &err), &err);
    assert_int_equal(p->attrs.cap, 3);
    const gir_attr *items = p->attrs.items;
    static const int64_t dims[] = { 3, 3 };
    const gir_attr a1 = { .name = "kernel_shape", .type = GIR_ATTR_INTS, .u.ints = { 2, (int64_t *)dims } };
    const gir_attr a2 = { .name = "group", .type = GIR_ATTR_INT, .u.i = 2 };
    const gir_attr a3 = { .name = "auto_pad", .type = GIR_ATTR_STRING, .u.s = "NOTSET" };
    TU_OK(gir_attrs_put(g, &p->attrs, &a1, &err), &err);
    TU_OK(gir_attrs_put(g, &p->attrs, &a2, &err), &err);
    TU_OK(gir_attrs_put(g, &p->attrs, &a3, &err), &err);
    assert_ptr_equal(p->attrs.items, items); /* no growing */
    assert_ptr_equal(p->attrs.items[0].name, a1.name);
    assert_ptr_equal(p->attrs.items[0].u.ints.v, dims);
    assert_ptr_equal(p->attrs.items[2].u.s, a3.u.s);
    const gir_attr a4 = { .name = "group", .type = GIR_ATTR_INT, .u.i = 5 };
    TU_OK(gir_attrs_put(g, &p->attrs, &a4, &err), &err); /* replaces */
    assert_int_equal(p->attrs.n, 3);
    assert_int_equal(gir_node_int(p, "group", 0), 5);
    TU_OK(gir_attrs_put(g, &p->attrs, &(gir_attr){ .name = "x", .type = GIR_ATTR_FLOAT, .u.f = 0.5 }, &err), &err);
    assert_int_equal(p->attrs.n, 4); /* grew past the reserve */
    assert_true(p->attrs.cap >= 4);
    assert_string_equal(gir_node_string(p, "auto_pad", ""), "NOTSET");
    assert_true(gir_node_float(p, "x", 0) == 0.5);
    TU_OK(gir_attrs_reserve(g, &p->attrs, 0, &err), &err);
    /* Failures are recorded in err, not only returned (a caller's TRY then
     * reports them). */
    assert_int_equal(gir_attrs_reserve(g, &p->attrs, SIZE_MAX, &err), GIR_E_NOMEM);
    assert_int_equal(err.code, GIR_E_NOMEM);
    gir_error_clear(&err);
    assert_int_equal(gir_attrs_set_ints(g, &p->attrs, "huge", dims, SIZE_MAX / 4, &err), GIR_E_NOMEM);
    assert_int_equal(err.code, GIR_E_NOMEM);
    gir_error_clear(&err);
    assert_int_equal(gir_attrs_set_floats(g, &p->attrs, "huge", (const double[]){ 1 }, SIZE_MAX / 2, &err),
                     GIR_E_NOMEM);
    assert_int_equal(err.code, GIR_E_NOMEM);
    gir_error_clear(&err);
    assert_null(gir_attrs_find(&p->attrs, "huge"));

    /* gir_attrs_put_list: into an empty list at once, else one by one. */
    const int64_t *pv;
    gir_node *q;
    TU_OK(gir_graph_add_node(g, "q", GIR_OP_Identity, 1, 1, &q, &err), &err);
    const gir_attr two[] = { a1, a3 };
    TU_OK(gir_attrs_put_list(g, &q->attrs, two, 2, &err), &err);
    assert_int_equal(q->attrs.n, 2);
    assert_int_equal(q->attrs.cap, 2);
    assert_ptr_equal(q->attrs.items[1].u.s, a3.u.s);
    const gir_attr more[] = { a4, { .name = "auto_pad", .type = GIR_ATTR_STRING, .u.s = "VALID" } };
    TU_OK(gir_attrs_put_list(g, &q->attrs, more, 2, &err), &err);
    assert_int_equal(q->attrs.n, 3); /* auto_pad replaced */
    assert_string_equal(gir_node_string(q, "auto_pad", ""), "VALID");
    assert_int_equal(gir_node_int(q, "group", 0), 5);
    assert_int_equal(gir_attrs_get_ints(&q->attrs, "kernel_shape", &pv), 2);

    /* gir_arena_strings: pointers and texts in one block, NULL as "". */
    const char *in[] = { "ab", NULL, "", "xyz" };
    const char **sv = gir_arena_strings(&g->arena, in, 4);
    assert_non_null(sv);
    assert_string_equal(sv[0], "ab");
    assert_string_equal(sv[1], "");
    assert_string_equal(sv[2], "");
    assert_string_equal(sv[3], "xyz");
    assert_ptr_equal(sv[0], (const char *)(sv + 4));
    assert_ptr_equal(sv[3], sv[0] + 5);
    assert_non_null(gir_arena_strings(&g->arena, NULL, 0));

    /* A tensor set again on the slot that holds its only reference stays
     * alive (the slot's old value is released after the new reference is
     * taken; ASan sees a use after free otherwise). */
    gir_shape s2 = { 1, { 2 } };
    gir_tensor *t;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s2, &t, &err), &err);
    ((float *)t->data)[1] = 2.5f;
    TU_OK(gir_attrs_set_tensor(g, &q->attrs, "value", t, &err), &err);
    gir_tensor_unref(t);
    const gir_attr *va = gir_attrs_find(&q->attrs, "value");
    assert_non_null(va);
    TU_OK(gir_attrs_set_tensor(g, &q->attrs, "value", va->u.t, &err), &err);
    va = gir_attrs_find(&q->attrs, "value");
    assert_true(((const float *)va->u.t->data)[1] == 2.5f);

    gir_graph_free(g);
}

static void test_graph_builder(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    TU_OK(gir_graph_new(&g, &err), &err);
    int32_t x, w;
    TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
    TU_OK(gir_graph_add_value(g, "w", GIR_VALUE_WEIGHT, &w, &err), &err);
    TU_FAILS(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, NULL, &err), &err, GIR_E_DUPLICATE, "two values are named 'x'");
    gir_error_clear(&err);
    gir_node *n;
    TU_OK(gir_graph_add_node(g, "mm", GIR_OP_MatMul, 2, 1, &n, &err), &err);
    n->in[0] = x;
    n->in[1] = w;
    TU_OK(gir_node_make_output(g, n, 0, "y", &err), &err);
    TU_OK(gir_graph_add_input(g, x, &err), &err);
    TU_OK(gir_graph_add_output(g, n->out[0], &err), &err);
    TU_OK(gir_attrs_set_int(g, &n->attrs, "k", 3, &err), &err);
    TU_OK(gir_attrs_set_int(g, &n->attrs, "k", 4, &err), &err); /* replaces */
    int64_t pads[] = { 1, 2, 3, 4 };
    TU_OK(gir_attrs_set_ints(g, &n->attrs, "pads", pads, 4, &err), &err);
    assert_int_equal(n->attrs.n, 2);
    assert_int_equal(gir_node_int(n, "k", 0), 4);
    const int64_t *pv;
    assert_int_equal(gir_attrs_get_ints(&n->attrs, "pads", &pv), 4);
    assert_int_equal(pv[3], 4);
    assert_int_equal(gir_attrs_get_ints(&n->attrs, "k", &pv), -1);

    /* Public view. */
    assert_int_equal(gir_graph_node_count(g), 1);
    const gir_node *pn = gir_graph_node(g, 0);
    assert_string_equal(gir_node_op(pn), "MatMul");
    assert_string_equal(gir_value_name(gir_node_input(pn, 1)), "w");
    assert_string_equal(gir_value_name(gir_node_output(pn, 0)), "y");
    assert_ptr_equal(gir_graph_find_value(g, "y"), gir_graph_output(g, 0));
    assert_int_equal(gir_value_get_kind(gir_graph_find_value(g, "y")), GIR_VALUE_INTERMEDIATE);
    assert_null(gir_graph_find_value(g, "nope"));

    /* A value produced twice is refused. */
    gir_node *n2;
    TU_OK(gir_graph_add_node(g, "mm2", GIR_OP_Identity, 1, 1, &n2, &err), &err);
    TU_FAILS(gir_node_set_output(g, n2, 0, n->out[0], &err), &err, GIR_E_DUPLICATE, "produced by two nodes",
             "node 'mm2'");
    gir_error_clear(&err);
    assert_string_equal(gir_graph_unique_value_name(g, "y", &err), "y_1");
    assert_string_equal(gir_graph_unique_value_name(g, "z", &err), "z");
    assert_string_equal(gir_graph_unique_node_name(g, "mm2", &err), "mm2_1");
    assert_int_equal(err.code, GIR_OK);
    /* a base its caller could not make (NULL from a failed format) is out of memory, recorded */
    assert_null(gir_graph_unique_node_name(g, NULL, &err));
    assert_int_equal(err.code, GIR_E_NOMEM);
    gir_error_clear(&err);

    /* Many values: the name index grows and still finds everything. */
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "v%d", i);
        TU_OK(gir_graph_add_value(g, name, GIR_VALUE_INPUT, NULL, &err), &err);
    }
    assert_int_equal(gir_graph_value_index(g, "v4999"), 5002);
    assert_int_equal(gir_graph_value_index(g, "v0"), 3);
    gir_graph_free(g);
}

static int loads;
static gir_status fill_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    (void)err;
    loads++;
    memset(dst, *(int *)ctx, (size_t)nbytes);
    return GIR_OK;
}
static void fill_release(void *ctx) { free(ctx); }
static const gir_loader fill_loader = { fill_load, fill_release };

static void test_tensors(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_shape s = { 2, { 3, 4 } };
    int *ctx = malloc(sizeof *ctx);
    *ctx = 7;
    gir_tensor *t;
    loads = 0;
    TU_OK(gir_tensor_lazy(GIR_DT_F32, &s, &fill_loader, ctx, &t, &err), &err);
    assert_int_equal(gir_tensor_nbytes(t), 48);
    assert_int_equal(loads, 0); /* nothing loaded yet */
    const void *p;
    TU_OK(gir_tensor_load(t, &p, &err), &err);
    assert_int_equal(((const unsigned char *)p)[47], 7);
    TU_OK(gir_tensor_load(t, &p, &err), &err);
    assert_int_equal(loads, 1);
    gir_tensor_unload(t);
    TU_OK(gir_tensor_load(t, &p, &err), &err);
    assert_int_equal(loads, 2);

    gir_tensor *u;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &u, &err), &err);
    bool eq;
    TU_OK(gir_tensor_equal(t, u, &eq, &err), &err);
    assert_false(eq);
    memset(u->data, 7, 48);
    TU_OK(gir_tensor_equal(t, u, &eq, &err), &err);
    assert_true(eq);
    assert_false(t->data_mapped); /* small: from malloc */
    gir_tensor_unref(t);
    gir_tensor_unref(u);

    /* Large lazily loaded data is a mapping of its own: unloading it
     * unmaps it, owning it keeps it, and replacing or dropping an owned
     * mapping unmaps it (ASan reports a free() of it). */
    gir_shape big = { 2, { 256, 256 } };
    int *bctx = malloc(sizeof *bctx);
    *bctx = 3;
    TU_OK(gir_tensor_lazy(GIR_DT_F32, &big, &fill_loader, bctx, &t, &err), &err);
    TU_OK(gir_tensor_load(t, &p, &err), &err);
    assert_true(t->data_mapped);
    assert_int_equal(((const unsigned char *)p)[256 * 256 * 4 - 1], 3);
    gir_tensor_unload(t);
    assert_null(t->data);
    assert_false(t->data_mapped);
    TU_OK(gir_tensor_own(t, &err), &err);
    assert_true(t->data_mapped);
    assert_null(t->loader);
    gir_tensor_unref(t);
    bctx = malloc(sizeof *bctx);
    *bctx = 5;
    TU_OK(gir_tensor_lazy(GIR_DT_F32, &big, &fill_loader, bctx, &t, &err), &err);
    TU_OK(gir_tensor_own(t, &err), &err);
    unsigned char *fresh = calloc(256 * 256, 4);
    assert_non_null(fresh);
    gir_tensor_replace_data(t, fresh);
    assert_false(t->data_mapped);
    assert_ptr_equal(t->data, fresh);
    gir_tensor_unref(t);

    gir_shape huge = { 3, { 1 << 20, 1 << 20, 1 << 20 } };
    TU_FAILS(gir_tensor_new(GIR_DT_F32, &huge, &u, &err), &err, GIR_E_LIMIT, "larger than");
    gir_error_clear(&err);
    gir_shape unknown = { 2, { -1, 4 } };
    TU_FAILS(gir_tensor_new(GIR_DT_F32, &unknown, &u, &err), &err, GIR_E_SHAPE, "dimension 0 is unknown");
    gir_error_clear(&err);
    char buf[64];
    assert_string_equal(gir_shape_str(&unknown, buf, sizeof buf), "[?,4]");
    assert_int_equal(gir_shape_numel(&s), 12);
    assert_int_equal(gir_shape_numel(&unknown), -1);
    assert_int_equal(gir_dtype_from_name("float"), GIR_DT_F32);
    assert_int_equal(gir_dtype_from_name("INT64"), GIR_DT_I64);
    assert_int_equal(gir_dtype_from_name("quux"), GIR_DT_UNKNOWN);
}


/* The output promise: only regular files are replaced; the umask decides
 * the mode (and is not changed); stale temporary files of dead processes
 * go; a model and its companions commit as one unit, and a commit cut
 * short by a crash is finished by the next output in that directory. */
static void test_outfile_promise(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    char *dir = tu_tempdir();
    char *fifo = tu_join(dir, "fifo"), *a = tu_join(dir, "a.json"), *b = tu_join(dir, "a.params");
    gir_outfile *f, *g;

    assert_int_equal(mkfifo(fifo, 0600), 0);
    TU_FAILS(gir_outfile_open(fifo, true, &f, &err), &err, GIR_E_IO,
             "output is a FIFO; graphconv replaces only regular files");
    gir_error_clear(&err);
    char *link_path = tu_join(dir, "link");
    assert_int_equal(symlink("a.json", link_path), 0);
    TU_FAILS(gir_outfile_open(link_path, true, &f, &err), &err, GIR_E_IO, "output is a symbolic link");
    gir_error_clear(&err);
    unlink(link_path);
    free(link_path);

    /* the mode is 0666 less the umask, which stays as it was */
    mode_t old = umask(027);
    TU_OK(gir_outfile_open(a, false, &f, &err), &err);
    TU_OK(gir_outfile_commit(f, &err), &err);
    assert_int_equal(umask(old), 027);
    struct stat st;
    assert_int_equal(stat(a, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    unlink(a);

    /* a dead process's temporary file goes at the next output */
    char *stale = tu_join(dir, ".a.json.graphconv-999999999-abcdef.tmp");
    FILE *sf = fopen(stale, "w");
    assert_non_null(sf);
    fclose(sf);
    TU_OK(gir_outfile_open(a, false, &f, &err), &err);
    assert_false(gir_path_exists(stale));
    gir_outfile_abort(f);

    /* two files as one unit */
    TU_OK(gir_outfile_open(b, false, &f, &err), &err);
    TU_OK(gir_outfile_open(a, false, &g, &err), &err);
    TU_OK(gir_outfile_write(f, "P1", 2, &err), &err);
    TU_OK(gir_outfile_write(g, "G1", 2, &err), &err);
    gir_outfile *both[2] = { f, g };
    TU_OK(gir_outfile_commit_all(both, 2, &err), &err);
    assert_int_equal(tu_count_entries(dir), 3); /* fifo, a.json, a.params */
    /* without overwrite, one existing target fails the whole unit and the
     * other is not published */
    unlink(b);
    TU_OK(gir_outfile_open(b, false, &f, &err), &err);
    char *c = tu_join(dir, "c.json");
    TU_OK(gir_outfile_open(c, false, &g, &err), &err);
    FILE *cf = fopen(c, "w"); /* appears while we write */
    fclose(cf);
    gir_outfile *both2[2] = { f, g };
    TU_FAILS(gir_outfile_commit_all(both2, 2, &err), &err, GIR_E_EXISTS, "--force");
    gir_error_clear(&err);
    assert_false(gir_path_exists(b));
    assert_int_equal(tu_count_entries(dir), 3); /* fifo, a.json, c.json */

    /* a journal left by a writer that died between its renames: the next
     * output in the directory finishes the commit */
    char *t1 = tu_join(dir, ".a.params.graphconv-999999999-000001.tmp");
    char *t2 = tu_join(dir, ".a.json.graphconv-999999999-000002.tmp");
    char *jn = tu_join(dir, ".a.params.graphconv-commit");
    FILE *x = fopen(t2, "w");
    fputs("G2", x);
    fclose(x);
    x = fopen(jn, "w");
    fputs("graphconv-commit 1 999999999\n.a.params.graphconv-999999999-000001.tmp\ta.params\n"
          ".a.json.graphconv-999999999-000002.tmp\ta.json\n",
          x);
    fclose(x);
    /* (the params were renamed already: t1 is gone) */
    TU_OK(gir_outfile_open(c, true, &f, &err), &err);
    gir_outfile_abort(f);
    assert_false(gir_path_exists(jn));
    assert_false(gir_path_exists(t1));
    assert_false(gir_path_exists(t2));
    size_t n;
    char *data = tu_slurp(a, &n);
    assert_int_equal(n, 2);
    assert_memory_equal(data, "G2", 2);
    free(data);
    free(t1);
    free(t2);
    free(jn);
    free(c);
    free(stale);
    free(fifo);
    free(a);
    free(b);
    tu_rmtree(dir);
    free(dir);
}

/* Control bytes from files never reach a terminal through messages. */
static void test_error_escapes(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_fail(&err, GIR_E_SCHEMA, "node '%s' is odd", "a\x1b[31mred\n\x7f");
    gir_err_node(&err, "n\r1");
    gir_err_file(&err, "f\x07.json");
    char *s = gir_error_format(&err);
    assert_string_equal(s, "f\\x07.json: node 'n\\x0d1': node 'a\\x1b[31mred\\x0a\\x7f' is odd [schema]");
    free(s);
    gir_error_clear(&err);
}

static void test_outfile(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    char *dir = tu_tempdir();
    char *path = tu_join(dir, "out.bin");
    gir_outfile *f;

    /* Aborted: nothing is left behind. */
    TU_OK(gir_outfile_open(path, false, &f, &err), &err);
    TU_OK(gir_outfile_write(f, "abc", 3, &err), &err);
    gir_outfile_abort(f);
    assert_int_equal(tu_count_entries(dir), 0);

    /* Committed: exactly the output exists. */
    TU_OK(gir_outfile_open(path, false, &f, &err), &err);
    TU_OK(gir_outfile_write(f, "abc", 3, &err), &err);
    assert_int_equal(tu_count_entries(dir), 1); /* the temporary file only */
    assert_false(gir_path_exists(path));
    TU_OK(gir_outfile_commit(f, &err), &err);
    assert_int_equal(tu_count_entries(dir), 1);
    size_t n;
    char *data = tu_slurp(path, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(data, "abc", 3);
    free(data);

    /* Existing output: refused without overwrite, replaced with it. */
    TU_FAILS(gir_outfile_open(path, false, &f, &err), &err, GIR_E_EXISTS, "--force");
    gir_error_clear(&err);
    TU_OK(gir_outfile_open(path, true, &f, &err), &err);
    TU_OK(gir_outfile_write(f, "xy", 2, &err), &err);
    TU_OK(gir_outfile_commit(f, &err), &err);
    data = tu_slurp(path, &n);
    assert_int_equal(n, 2);
    free(data);
    assert_int_equal(tu_count_entries(dir), 1);

    TU_FAILS(gir_outfile_open(dir, true, &f, &err), &err, GIR_E_IO, "is a directory");
    gir_error_clear(&err);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void test_paths_and_files(void **state)
{
    (void)state;
    char *s = gir_path_with_ext("dir.v1/model", ".params");
    assert_string_equal(s, "dir.v1/model.params");
    free(s);
    s = gir_path_with_ext("a/b.json", ".params");
    assert_string_equal(s, "a/b.params");
    free(s);
    s = gir_path_dirname("model.json");
    assert_string_equal(s, ".");
    free(s);
    assert_string_equal(gir_path_basename("/x/y/z.nnp"), "z.nnp");
    gir_error err = GIR_ERROR_INIT;
    char *data;
    size_t n;
    TU_FAILS(gir_read_file("/nonexistent/graphconv", 0, &data, &n, &err), &err, GIR_E_IO, "cannot open",
             "/nonexistent/graphconv");
    gir_error_clear(&err);
}

static void test_options_and_unsupported(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_options *o = gir_options_new();
    TU_OK(gir_options_set(o, "params", "a.params", &err), &err);
    TU_OK(gir_options_set(o, "params", "b.params", &err), &err);
    assert_int_equal(gir_options_count(o), 1);
    assert_string_equal(gir_options_get(o, "params"), "b.params");
    TU_OK(gir_options_set(o, "batch-size", "x", &err), &err);
    int64_t v;
    TU_FAILS(gir_options_int(o, "batch-size", 1, &v, &err), &err, GIR_E_ARGUMENT, "batch-size=x");
    gir_error_clear(&err);
    gir_options_free(o);

    gir_unsupported *u = gir_unsupported_new();
    gir_unsupported_add(u, GIR_E_UNSUPPORTED_OP, "Erf", "e0");
    gir_unsupported_add(u, GIR_E_UNSUPPORTED_ATTR, "LRN with bias=2", "lrn3");
    gir_unsupported_addf(u, GIR_E_UNSUPPORTED_OP, "e1", "%s", "Erf");
    assert_int_equal(gir_unsupported_count(u), 2);
    TU_FAILS(gir_unsupported_fail(u, "lightnet", &err), &err, GIR_E_UNSUPPORTED_OP,
             "cannot write as lightnet: Erf (2 nodes, first 'e0'); LRN with bias=2 (1 node, first 'lrn3')");
    gir_error_clear(&err);
    /* formatted: the same item when the text is the same */
    gir_unsupported_reset(u);
    gir_unsupported_addf(u, GIR_E_UNSUPPORTED_ATTR, "p1", "Pad mode=%s", "wrap");
    gir_unsupported_addf(u, GIR_E_UNSUPPORTED_ATTR, "p2", "Pad mode=%s", "wrap");
    assert_int_equal(gir_unsupported_count(u), 1);
    assert_false(gir_unsupported_failed(u));
    TU_FAILS(gir_unsupported_fail(u, "onnx", &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "cannot write as onnx: Pad mode=wrap (2 nodes, first 'p1')");
    gir_error_clear(&err);
    gir_unsupported_free(u);

    /* the writers' opaque-node policy */
    gir_node n = { 0 };
    n.op = GIR_OP_OPAQUE;
    n.opaque_format = "mxnet";
    assert_int_equal(gir_opaque_policy(&n, "mxnet", false), GIR_OPAQUE_OURS);
    assert_int_equal(gir_opaque_policy(&n, "mxnet", true), GIR_OPAQUE_OURS);
    assert_int_equal(gir_opaque_policy(&n, "onnx", false), GIR_OPAQUE_REFUSE);
    assert_int_equal(gir_opaque_policy(&n, "onnx", true), GIR_OPAQUE_FOREIGN);
    n.opaque_format = NULL;
    assert_int_equal(gir_opaque_policy(&n, "nnvm", false), GIR_OPAQUE_REFUSE);
    assert_int_equal(gir_opaque_policy(&n, "nnvm", true), GIR_OPAQUE_FOREIGN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_registry), cmocka_unit_test(test_error_format),
        cmocka_unit_test(test_number_text),     cmocka_unit_test(test_graph_builder),
        cmocka_unit_test(test_attr_lists),      cmocka_unit_test(test_vfail),
        cmocka_unit_test(test_node_refs),
        cmocka_unit_test(test_arena),           cmocka_unit_test(test_characters),
        cmocka_unit_test(test_tensors),         cmocka_unit_test(test_outfile),
        cmocka_unit_test(test_paths_and_files), cmocka_unit_test(test_options_and_unsupported),
        cmocka_unit_test(test_outfile_promise), cmocka_unit_test(test_error_escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
