/* Round trips stay consistent: every model of ../shared/realworld and
 * ../shared/models that graphconv reads is written to every format that
 * can write it, and read back by that format's own reader; what comes back
 * has no opaque node that was not opaque in the source (a writer writes
 * nothing its reader cannot map to canonical operators).  Counts per
 * target are printed. */
#include "testutil.h"

#include "graphir/model.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct target {
    const char *format, *suffix;
    size_t written, refused;
} target;

static target targets[] = {
    { "onnx", ".onnx", 0, 0 },         { "nnabla", ".nnp", 0, 0 },
    { "mxnet", "-symbol.json", 0, 0 }, { "nnvm", ".json", 0, 0 },
    { "relayviz", ".relayviz.json", 0, 0 }, { "lightnet", ".json", 0, 0 },
};
enum { N_TARGETS = sizeof targets / sizeof *targets };

static size_t n_sources, n_failures;

/* The opaque nodes of g: how many, and the first's op for messages. */
static size_t opaque_nodes(const gir_graph *g, const char **first)
{
    size_t c = 0;
    *first = NULL;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == GIR_OP_OPAQUE) {
            if (!c)
                *first = gir_node_op(g->nodes[i]);
            c++;
        }
    return c;
}

static void one_model(const char *path, const char *tmp)
{
    gir_graph *g = NULL;
    gir_error err = GIR_ERROR_INIT;
    if (gir_load(path, NULL, NULL, &g, &err)) {
        /* not a model graphconv reads (a companion file, a file its
         * format rejects): the matrix counts it as failed, nothing to
         * round-trip */
        gir_error_clear(&err);
        return;
    }
    n_sources++;
    const char *first;
    size_t before = opaque_nodes(g, &first);
    for (size_t t = 0; t < N_TARGETS; t++) {
        target *T = &targets[t];
        char name[64];
        snprintf(name, sizeof name, "m%zu_%s%s", n_sources, T->format, T->suffix);
        char *out = tu_join(tmp, name);
        if (gir_save(g, out, T->format, NULL, &err)) {
            T->refused++;
            gir_error_clear(&err);
            free(out);
            continue;
        }
        T->written++;
        gir_graph *back = NULL;
        if (gir_load(out, T->format, NULL, &back, &err)) {
            print_error("%s -> %s: its own reader cannot read it back: %s\n", path, T->format,
                        err.message ? err.message : "?");
            n_failures++;
            gir_error_clear(&err);
        } else {
            const char *op;
            size_t after = opaque_nodes(back, &op);
            if (after > before) {
                print_error("%s -> %s: %zu opaque node(s) read back (first: %s), %zu in the source\n", path,
                            T->format, after, op ? op : "?", before);
                n_failures++;
            }
            gir_graph_free(back);
        }
        free(out);
    }
    gir_graph_free(g);
}

/* Every regular file under dir, in name order. */
static void walk(const char *dir, const char *tmp)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort);
    if (n < 0)
        return;
    for (int i = 0; i < n; i++) {
        const char *nm = list[i]->d_name;
        if (nm[0] != '.') {
            char *p = tu_join(dir, nm);
            struct stat st;
            if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
                walk(p, tmp);
            else if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
                one_model(p, tmp);
            free(p);
        }
        free(list[i]);
    }
    free(list);
}

static void test_corpus_round_trips(void **state)
{
    (void)state;
    char *rw = tu_shared("realworld"), *models = tu_shared("models");
    struct stat st;
    if (stat(rw, &st) != 0) {
        free(rw);
        free(models);
        print_message("no shared corpus at GIR_SHARED_DIR: skipped\n");
        skip();
    }
    char *tmp = tu_tempdir();
    walk(rw, tmp);
    walk(models, tmp);
    print_message("%zu models read\n", n_sources);
    for (size_t t = 0; t < N_TARGETS; t++)
        print_message("  -> %-9s %3zu written and read back, %3zu refused\n", targets[t].format,
                      targets[t].written, targets[t].refused);
    tu_rmtree(tmp);
    free(tmp);
    free(rw);
    free(models);
    /* the corpus is there: most models must have been written */
    assert_true(n_sources >= 80);
    assert_true(targets[0].written >= 80);
    assert_int_equal(n_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
