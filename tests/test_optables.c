/* Every format's operator table (format.h, gir_op_map): the one table its
 * reader and writer run and `graphconv ops --format F` prints.  Its rows
 * are checked against the canonical op table, and every plain row is run
 * both ways: a one-node graph of the row's operator, written by the format
 * and read back, holds that operator and computes the same numbers.  Run
 * over the registry, so a new format is held to it without a line here. */
#include "rtutil.h"

#include "formats/format.h"
#include "formats/nnvm/ops.h"
#include "graphir/check.h"
#include "graphir/model.h"
#include "ops/ops.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Is the attribute named by some canonical operator? */
static bool known_anywhere(const char *name)
{
    for (int op = 0; op < GIR_OP_COUNT_; op++)
        if (gir_op_attr_schema((gir_op)op, name))
            return true;
    return false;
}

/* A canonical attribute name of a row is one identifier; notes such as
 * "kernel_shape, strides" or "(inputs)" are prose. */
static bool is_identifier(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static void check_row(const gir_format *f, const gir_op_map *m)
{
    const char *where = f->name;
    assert_non_null(m->format_op);
    assert_true(m->format_op[0] != '\0');
    assert_true(m->op == GIR_OP_OPAQUE || (int)m->op < GIR_OP_COUNT_);
    assert_true(m->dir & (GIR_MAP_READ | GIR_MAP_WRITE));
    /* plain only in the row's own directions */
    if (m->plain & ~m->dir & (GIR_MAP_READ | GIR_MAP_WRITE))
        print_error("%s %s: plain in a direction the row does not map\n", where, m->format_op);
    assert_int_equal(m->plain & ~m->dir & (GIR_MAP_READ | GIR_MAP_WRITE), 0);
    assert_int_equal(m->plain & ~(unsigned)(GIR_MAP_READ | GIR_MAP_WRITE), 0);
    if (m->plain) {
        /* the engine gives the op n_in inputs, one output and the
         * attributes the rows convert: each of the op's, of its type,
         * the required ones among them */
        assert_true(m->op != GIR_OP_OPAQUE);
        const gir_op_info *info = gir_op_get(m->op);
        if (m->n_in < info->min_in || m->n_in > info->max_in || info->min_out > 1)
            print_error("%s %s: %u inputs, one output do not fit %s\n", where, m->format_op, m->n_in, info->name);
        assert_true(m->n_in >= 1 && m->n_in >= info->min_in && m->n_in <= info->max_in && info->min_out <= 1);
        for (const gir_attr_map *a = m->attrs; a && (a->format_attr || a->canonical_attr); a++) {
            const gir_attr_schema *sc = a->canonical_attr ? gir_op_attr_schema(m->op, a->canonical_attr) : NULL;
            bool ok = a->format_attr && sc &&
                      ((a->conv == GIR_CONV_INT && sc->type == GIR_ATTR_INT) ||
                       (a->conv == GIR_CONV_FLOAT && sc->type == GIR_ATTR_FLOAT));
            if (!ok)
                print_error("%s %s: attribute %s is not one the engine can convert to %s's\n", where, m->format_op,
                            a->format_attr ? a->format_attr : "-", info->name);
            assert_true(ok);
        }
        for (const gir_attr_schema *a = info->attrs; a && a->name; a++) {
            bool given = false;
            for (const gir_attr_map *r = m->attrs; r && (r->format_attr || r->canonical_attr); r++)
                given = given || (r->canonical_attr && strcmp(r->canonical_attr, a->name) == 0);
            if (a->presence == GIR_ATTR_REQUIRED && !given)
                print_error("%s %s: plain, but %s requires %s\n", where, m->format_op, info->name, a->name);
            assert_true(a->presence != GIR_ATTR_REQUIRED || given);
        }
        assert_null(m->impl);
    } else {
        assert_int_equal(m->n_in, 0);
    }
    for (const gir_attr_map *a = m->attrs; a && (a->format_attr || a->canonical_attr); a++) {
        /* an opaque node keeps its attributes verbatim: no schema names them */
        if (m->op == GIR_OP_OPAQUE || !a->canonical_attr || !is_identifier(a->canonical_attr))
            continue;
        bool ok = gir_op_attr_schema(m->op, a->canonical_attr) || known_anywhere(a->canonical_attr);
        if (!ok)
            print_error("%s %s: canonical attribute %s is not in the op table\n", where, m->format_op,
                        a->canonical_attr);
        assert_true(ok);
    }
}

static void test_rows_agree_with_op_table(void **state)
{
    (void)state;
    size_t formats = 0, rows = 0, plain = 0;
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *f = gir_format_at(i);
        if (!f->ops)
            continue;
        formats++;
        for (const gir_op_map *m = f->ops; m->format_op; m++) {
            check_row(f, m);
            rows++;
            plain += m->plain != 0;
            /* one preferred writer per canonical op at most */
            if (!(m->dir & GIR_MAP_PREFER))
                continue;
            assert_true(m->dir & GIR_MAP_WRITE);
            for (const gir_op_map *o = m + 1; o->format_op; o++)
                if (o->op == m->op && (o->dir & GIR_MAP_PREFER)) {
                    print_error("%s: %s and %s both preferred for %s\n", f->name, m->format_op, o->format_op,
                                gir_op_name(m->op));
                    fail();
                }
        }
    }
    /* nnvm, mxnet, tvm, nnabla, lightnet, relayviz, onnx */
    assert_true(formats >= 7);
    assert_true(rows > 300);
    assert_true(plain > 80);
    /* the NNVM family's reader searches its tables by name */
    assert_true(nn_rows_sorted(NN_MXNET));
    assert_true(nn_rows_sorted(NN_NNVM));
}

/* The engine picks rows by name and by op as format.h says. */
static void test_engine_lookup(void **state)
{
    (void)state;
    const gir_format *mx = gir_format_find("mxnet"), *rv = gir_format_find("relayviz");
    assert_non_null(mx);
    assert_non_null(rv);
    /* reading: plain rows only */
    const gir_op_map *r = gir_map_read_row(rv->ops, "logical_xor");
    assert_non_null(r);
    assert_int_equal(r->op, GIR_OP_Xor);
    assert_int_equal(r->n_in, 2);
    assert_null(gir_map_read_row(rv->ops, "nn.conv2d"));  /* a composite */
    assert_null(gir_map_read_row(rv->ops, "(any other)"));
    assert_null(gir_map_read_row(rv->ops, "no_such_op"));
    /* writing: the source's spelling, else the preferred row, else the first */
    assert_string_equal(gir_map_write_name(mx->ops, GIR_OP_Identity, "BlockGrad")->format_op, "BlockGrad");
    assert_string_equal(gir_map_write_name(mx->ops, GIR_OP_Identity, NULL)->format_op, "_copy");
    assert_string_equal(gir_map_write_name(mx->ops, GIR_OP_Identity, "Convolution")->format_op, "_copy");
    assert_string_equal(gir_map_write_name(mx->ops, GIR_OP_Relu, NULL)->format_op, "Activation");
    assert_string_equal(gir_map_write_name(mx->ops, GIR_OP_Relu, "relu")->format_op, "relu");
    assert_string_equal(gir_map_write_name(mx->ops, GIR_OP_Sum, NULL)->format_op, "add_n");
    /* plain writers only: Activation is a composite */
    assert_string_equal(gir_map_write_row(mx->ops, GIR_OP_Relu, NULL)->format_op, "relu");
    assert_null(gir_map_write_row(mx->ops, GIR_OP_Conv, NULL));
    assert_null(gir_map_write_name(mx->ops, GIR_OP_InstanceNormalization, NULL));
    /* the NNVM reader finds composites and plain rows, not prose rows */
    assert_non_null(nn_row_find(NN_MXNET, "Activation"));
    assert_non_null(nn_row_find(NN_MXNET, "broadcast_add"));
    assert_null(nn_row_find(NN_MXNET, "(any other)"));
    assert_null(nn_row_find(NN_NNVM, "Convolution"));
    assert_int_equal(nn_row_rdef(nn_row_find(NN_MXNET, "broadcast_add"))->min_in, 2);
}

/* A graph of row's op alone over n_in inputs of shape [1, 3, 4, 4]:
 * logical operators take bool, Where a bool condition, the others
 * float32; the attributes the row converts get values other than the
 * defaults (integers 1, numbers 0.375), so that a lost one shows in the
 * numbers. */
static gir_graph *one_node(const gir_op_map *row)
{
    gir_op op = row->op;
    unsigned n_in = row->n_in;
    gir_graph *g = rt_graph();
    char ins[64] = "";
    for (unsigned k = 0; k < n_in; k++) {
        char name[16];
        snprintf(name, sizeof name, "x%u", k);
        bool logical = op == GIR_OP_And || op == GIR_OP_Or || op == GIR_OP_Xor || op == GIR_OP_Not ||
                       (op == GIR_OP_Where && k == 0);
        rt_input(g, name, logical ? GIR_DT_BOOL : GIR_DT_F32, 4, DIMS(1, 3, 4, 4));
        strcat(ins, k ? "," : "");
        strcat(ins, name);
    }
    gir_node *n = rt_node(g, op, "y", ins, "out");
    for (const gir_attr_map *a = row->attrs; a && (a->format_attr || a->canonical_attr); a++) {
        if (a->conv == GIR_CONV_INT)
            rt_attr_int(g, n, a->canonical_attr, 1);
        else if (a->conv == GIR_CONV_FLOAT)
            rt_attr_float(g, n, a->canonical_attr, 0.375);
    }
    rt_output(g, "out");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

/* Writes the one-node graph of row's op as f, reads it back and checks
 * that it holds the op and computes the same numbers. */
static void round_trip(const gir_format *f, const gir_op_map *row)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = one_node(row);
    char dirname[96];
    snprintf(dirname, sizeof dirname, "%s-%s", f->name, gir_op_name(row->op));
    char *d = tu_tmp(dirname);
    assert_int_equal(mkdir(d, 0700), 0);
    char file[64];
    snprintf(file, sizeof file, "model%s", f->extensions && f->extensions[0] ? f->extensions[0] : "");
    char *path = tu_join(d, file);
    gir_status st = gir_save(g, path, f->name, NULL, &err);
    if (st != GIR_OK)
        print_error("%s: writing %s (row %s)\n", f->name, gir_op_name(row->op), row->format_op);
    TU_OK(st, &err);
    gir_graph *b = NULL;
    st = gir_load(path, f->name, NULL, &b, &err);
    if (st != GIR_OK)
        print_error("%s: reading %s back (row %s)\n", f->name, gir_op_name(row->op), row->format_op);
    TU_OK(st, &err);
    bool found = false;
    for (size_t i = 0; i < b->n_nodes; i++)
        found = found || b->nodes[i]->op == row->op;
    if (!found)
        print_error("%s: %s (row %s) not read back\n", f->name, gir_op_name(row->op), row->format_op);
    assert_true(found);
    /* float inputs in [-1, 1) (the seeded ones are >= 0, where LeakyRelu's
     * slope, say, would not show), the others seeded */
    const char *names[3];
    gir_tensor *feeds[3];
    size_t n_feeds = 0;
    for (size_t k = 0; k < g->n_inputs; k++) {
        const gir_value *v = g->values[g->inputs[k]];
        if (v->dtype != GIR_DT_F32)
            continue;
        float x[48];
        rt_fill(x, 48, 7 + k);
        names[n_feeds] = v->name;
        feeds[n_feeds++] = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 3, 4, 4), x);
    }
    gir_check_options o;
    gir_check_options_init(&o);
    o.atol = 0;
    o.rtol = 0;
    o.n_feeds = n_feeds;
    o.feed_names = names;
    o.feed_tensors = feeds;
    gir_check_result res = { 0 };
    st = gir_check_written(g, b, &o, &res, &err);
    if (st != GIR_OK || res.method != GIR_CHECK_RUN)
        print_error("%s: %s: %s\n", f->name, gir_op_name(row->op), res.verdict ? res.verdict : "(no verdict)");
    TU_OK(st, &err);
    assert_int_equal(res.method, GIR_CHECK_RUN);
    assert_true(res.passed);
    gir_check_result_clear(&res);
    for (size_t k = 0; k < n_feeds; k++)
        gir_tensor_unref(feeds[k]);
    gir_graph_free(b);
    gir_graph_free(g);
    tu_rmtree(d);
    free(path);
    free(d);
}

static void test_plain_rows_run_both_ways(void **state)
{
    (void)state;
    size_t n = 0;
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *f = gir_format_at(i);
        if (!f->ops || !f->read || !f->write)
            continue;
        for (const gir_op_map *m = f->ops; m->format_op; m++) {
            /* each op once, by the row its writer picks */
            if (!(m->plain & GIR_MAP_WRITE) || gir_map_write_row(f->ops, m->op, NULL) != m)
                continue;
            round_trip(f, m);
            n++;
        }
    }
    assert_true(n > 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_agree_with_op_table),
        cmocka_unit_test(test_engine_lookup),
        cmocka_unit_test(test_plain_rows_run_both_ways),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
