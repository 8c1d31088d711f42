/* The contract every registered format keeps, run over the registry so a
 * new format is held to it without a line here: a graph written by the
 * format is detected as that format from its bytes, read back to the same
 * canonical operators with the same weights, computes the same numbers,
 * and written again gives byte-identical files (writing is deterministic
 * and a fixed point of reading). */
#include "rtutil.h"

#include "formats/format.h"
#include "graphir/check.h"
#include "graphir/model.h"
#include "ops/ops.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A Conv (square kernel k, stride 1, padding pad) and a 2x2 MaxPool after
 * it: ins are the conv's inputs, out the pool's output. */
static void conv_pool(gir_graph *g, const char *name, const char *ins, int64_t k, int64_t pad, const char *out)
{
    char conv_out[64], pool[64];
    snprintf(conv_out, sizeof conv_out, "%s_out", name);
    snprintf(pool, sizeof pool, "%s_pool", name);
    gir_node *c = rt_node(g, GIR_OP_Conv, name, ins, conv_out);
    RT_INTS(g, c, "kernel_shape", k, k);
    RT_INTS(g, c, "pads", pad, pad, pad, pad);
    RT_INTS(g, c, "strides", 1, 1);
    RT_INTS(g, c, "dilations", 1, 1);
    rt_attr_int(g, c, "group", 1);
    const char *pool_in = conv_out;
    char relu_out[64];
    if (pad) { /* the 3x3 branch has a Relu between conv and pool */
        snprintf(relu_out, sizeof relu_out, "%s_relu", name);
        rt_node(g, GIR_OP_Relu, relu_out, conv_out, relu_out);
        pool_in = relu_out;
    }
    gir_node *p = rt_node(g, GIR_OP_MaxPool, pool, pool_in, out);
    RT_INTS(g, p, "kernel_shape", 2, 2);
    RT_INTS(g, p, "strides", 2, 2);
    RT_INTS(g, p, "pads", 0, 0, 0, 0);
}

/* conv(3->4, 3x3, pad 1) + relu + maxpool 2x2, and a second branch
 * conv(3->4, 1x1) + maxpool, added and concatenated: operators every
 * format has (LightNet included), with fixed shapes. */
static gir_graph *contract_graph(void)
{
    gir_graph *g = rt_graph();
    rt_input(g, "data", GIR_DT_F32, 4, DIMS(1, 3, 8, 8));
    float w1[4 * 3 * 3 * 3], b1[4], w2[4 * 3], b2[4];
    rt_fill(w1, 4 * 3 * 3 * 3, 11);
    rt_fill(b1, 4, 12);
    rt_fill(w2, 4 * 3, 13);
    rt_fill(b2, 4, 14);
    rt_const(g, "conv1_weight", GIR_DT_F32, 4, DIMS(4, 3, 3, 3), w1);
    rt_const(g, "conv1_bias", GIR_DT_F32, 1, DIMS(4), b1);
    rt_const(g, "conv2_weight", GIR_DT_F32, 4, DIMS(4, 3, 1, 1), w2);
    rt_const(g, "conv2_bias", GIR_DT_F32, 1, DIMS(4), b2);
    conv_pool(g, "conv1", "data,conv1_weight,conv1_bias", 3, 1, "pool1_out");
    conv_pool(g, "conv2", "data,conv2_weight,conv2_bias", 1, 0, "pool2_out");
    rt_node(g, GIR_OP_Add, "add1", "pool1_out,pool2_out", "add1_out");
    gir_node *cat = rt_node(g, GIR_OP_Concat, "concat1", "add1_out,pool2_out", "out");
    rt_attr_int(g, cat, "axis", 1);
    rt_output(g, "out");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_finish(g, &err), &err);
    return g;
}

/* The canonical operators of g, as "Op:count" lines sorted by op name. */
static void op_census(const gir_graph *g, char *buf, size_t cap)
{
    size_t counts[GIR_OP_COUNT_] = { 0 };
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op < GIR_OP_COUNT_)
            counts[g->nodes[i]->op]++;
    size_t len = 0;
    buf[0] = '\0';
    for (int op = 0; op < GIR_OP_COUNT_; op++)
        if (counts[op] && len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s:%zu ", gir_op_name((gir_op)op), counts[op]);
}

/* Every file under dir, concatenated as "name\0bytes" in name order, into
 * one malloc'd buffer (for comparing whole outputs, companions included). */
static char *dir_image(const char *dir, size_t *len)
{
    char *names[16];
    size_t n = tu_list_dir(dir, names, 16);
    assert_true(n > 0);
    char *img = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        char *p = tu_join(dir, names[i]);
        size_t flen;
        char *data = tu_slurp(p, &flen);
        assert_non_null(data);
        size_t nlen = strlen(names[i]) + 1;
        img = realloc(img, *len + nlen + flen);
        assert_non_null(img);
        memcpy(img + *len, names[i], nlen);
        memcpy(img + *len + nlen, data, flen);
        *len += nlen + flen;
        free(data);
        free(p);
        free(names[i]);
    }
    return img;
}

/* Writes g as fmt into a fresh folder tu_dir/<tag>; returns the folder
 * and sets *path to the model's path there (both malloc'd). */
static char *write_into(const gir_graph *g, const gir_format *fmt, const char *tag, char **path)
{
    gir_error err = GIR_ERROR_INIT;
    char *d = tu_tmp(tag);
    assert_int_equal(mkdir(d, 0700), 0);
    char file[64];
    snprintf(file, sizeof file, "model%s", fmt->extensions && fmt->extensions[0] ? fmt->extensions[0] : "");
    *path = tu_join(d, file);
    gir_status st = gir_save(g, *path, fmt->name, NULL, &err);
    if (st != GIR_OK)
        print_error("format %s (%s): write\n", fmt->name, tag);
    TU_OK(st, &err);
    return d;
}

/* The contract for one graph g of format fmt (src: where g came from, for
 * messages): written, detected as fmt, read back to the same operators,
 * written again byte for byte.  run: also compare the numbers. */
static void contract(const gir_graph *g, const gir_format *fmt, const char *src, bool run)
{
    gir_error err = GIR_ERROR_INIT;
    static unsigned serial;
    char tag1[64], tag2[64];
    snprintf(tag1, sizeof tag1, "c%u-%s-1", serial, fmt->name);
    snprintf(tag2, sizeof tag2, "c%u-%s-2", serial, fmt->name);
    serial++;
    char *p1, *p2;
    char *d1 = write_into(g, fmt, tag1, &p1);

    /* Detected from its own bytes as itself. */
    const char *name = NULL, *reason = NULL;
    TU_OK(gir_detect(p1, &name, &reason, &err), &err);
    if (strcmp(name, fmt->name) != 0)
        print_error("%s as %s: detected as %s (%s)\n", src, fmt->name, name, reason ? reason : "");
    assert_string_equal(name, fmt->name);

    /* Read back: the same canonical operators. */
    gir_graph *b = NULL;
    gir_status st = gir_load(p1, NULL, NULL, &b, &err);
    if (st != GIR_OK)
        print_error("%s as %s: read back\n", src, fmt->name);
    TU_OK(st, &err);
    char ca[1024], cb[1024];
    op_census(g, ca, sizeof ca);
    op_census(b, cb, sizeof cb);
    if (strcmp(ca, cb) != 0)
        print_error("%s as %s: operators %s written, %s read back\n", src, fmt->name, ca, cb);
    assert_string_equal(ca, cb);

    /* The same numbers. */
    if (run) {
        gir_check_options o;
        gir_check_options_init(&o);
        o.atol = 1e-6;
        o.rtol = 1e-6;
        gir_check_result res = { 0 };
        st = gir_check_written(g, b, &o, &res, &err);
        if (st != GIR_OK || res.method != GIR_CHECK_RUN)
            print_error("%s as %s: check: %s\n", src, fmt->name, res.verdict ? res.verdict : "(none)");
        TU_OK(st, &err);
        assert_int_equal(res.method, GIR_CHECK_RUN);
        assert_true(res.passed);
        gir_check_result_clear(&res);
    }

    /* Written again from what was read: byte-identical files. */
    char *d2 = write_into(b, fmt, tag2, &p2);
    size_t l1, l2;
    char *i1 = dir_image(d1, &l1), *i2 = dir_image(d2, &l2);
    if (l1 != l2 || memcmp(i1, i2, l1) != 0)
        print_error("%s as %s: a second write of the read-back graph differs from the first\n", src, fmt->name);
    assert_int_equal(l1, l2);
    assert_memory_equal(i1, i2, l1);

    free(i1);
    free(i2);
    gir_graph_free(b);
    free(p1);
    free(p2);
    tu_rmtree(d1);
    tu_rmtree(d2);
    free(d1);
    free(d2);
}

/* TVM graph-executor JSON holds compiled functions (tvm_op) only: no
 * canonical operator can be written to it, so its contract is kept on the
 * real TVM files alone. */
static bool writes_canonical_ops(const gir_format *fmt)
{
    return strcmp(fmt->name, "tvm") != 0;
}

static void test_canonical_graph(void **state)
{
    (void)state;
    size_t n = 0;
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *fmt = gir_format_at(i);
        if (!fmt->read || !fmt->write || !writes_canonical_ops(fmt))
            continue;
        gir_graph *g = contract_graph();
        contract(g, fmt, "the contract graph", true);
        gir_graph_free(g);
        n++;
    }
    /* nnvm, mxnet, nnabla, lightnet, relayviz, onnx */
    assert_true(n >= 6);
}

/* Every real file under dir (recursively) that loads: written back in its
 * own format, it keeps the contract.  *seen counts them per format. */
static void real_files(const char *dir, size_t *seen)
{
    char *names[256];
    size_t n = tu_list_dir(dir, names, 256);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        char *p = tu_join(dir, names[i]);
        struct stat sb;
        assert_int_equal(stat(p, &sb), 0);
        if (S_ISDIR(sb.st_mode)) {
            real_files(p, seen);
        } else {
            gir_error err = GIR_ERROR_INIT;
            const char *name = NULL, *reason = NULL;
            gir_graph *g = NULL;
            if (gir_detect(p, &name, &reason, &err) == GIR_OK && gir_load(p, name, NULL, &g, &err) == GIR_OK) {
                const gir_format *fmt = gir_format_find(name);
                assert_non_null(fmt);
                if (fmt->write) {
                    contract(g, fmt, p, false);
                    for (size_t k = 0; gir_format_at(k); k++)
                        if (gir_format_at(k) == fmt)
                            seen[k]++;
                }
            }
            gir_error_clear(&err);
            gir_graph_free(g);
        }
        free(p);
        free(names[i]);
    }
}

static void test_real_files(void **state)
{
    (void)state;
    size_t seen[32] = { 0 };
    char *dir = tu_shared("realworld");
    real_files(dir, seen);
    free(dir);
    /* RelayViz has no real file in the shared corpus: testdata/ has the
     * project's own (and the other formats' fixtures, held to it too). */
    dir = tu_testdata("");
    real_files(dir, seen);
    free(dir);
    /* Every readable and writable format has files that kept it. */
    for (size_t k = 0; gir_format_at(k); k++) {
        const gir_format *fmt = gir_format_at(k);
        if (fmt->read && fmt->write)
            print_message("%s: %zu files kept the contract\n", fmt->name, seen[k]);
        if (fmt->read && fmt->write && seen[k] == 0)
            print_error("no real %s file kept the contract\n", fmt->name);
        if (fmt->read && fmt->write)
            assert_true(seen[k] > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_graph),
        cmocka_unit_test(test_real_files),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
