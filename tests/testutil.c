#include "testutil.h"
#include "passes/diff.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *env_path(const char *var, const char *fallback, const char *rel)
{
    const char *base = getenv(var);
    if (!base)
        base = fallback;
    return gir_strdupf("%s/%s", base, rel);
}

char *tu_shared(const char *rel)
{
    return env_path("GIR_SHARED_DIR", "../shared", rel);
}

char *tu_testdata(const char *rel)
{
    return env_path("GIR_TESTDATA_DIR", "testdata", rel);
}

char *tu_tempdir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *tmpl = gir_strdupf("%s/graphconv-test-XXXXXX", tmp ? tmp : "/tmp");
    if (!tmpl || !mkdtemp(tmpl)) {
        free(tmpl);
        fail_msg("cannot create a temporary directory");
        return NULL;
    }
    return tmpl;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tu_list_files(const char *dir, const char *prefix, const char *suffix, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        if (nm[0] == '.' || (prefix && strncmp(nm, prefix, strlen(prefix)) != 0) ||
            (suffix && !gir_str_ends_with(nm, suffix)))
            continue;
        assert_true(GIR_GROW(names, cap, *n + 1));
        names[(*n)++] = strdup(nm);
    }
    closedir(d);
    if (*n)
        qsort(names, *n, sizeof *names, cmp_names);
    else
        names = calloc(1, sizeof *names); /* an empty list, not "cannot open" */
    return names;
}

void tu_free_list(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

size_t tu_list_dir(const char *dir, char **names, size_t max)
{
    size_t n;
    char **all = tu_list_files(dir, NULL, NULL, &n);
    assert_true(n <= max);
    for (size_t i = 0; i < n; i++)
        names[i] = all[i];
    free(all);
    return n;
}

void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = tu_join(dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            tu_rmtree(p);
        else
            unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

char *tu_join(const char *dir, const char *name)
{
    return gir_strdupf("%s/%s", dir, name);
}

char *tu_slurp(const char *path, size_t *len)
{
    char *data = NULL;
    size_t n = 0;
    if (gir_read_file(path, 0, &data, &n, NULL) != GIR_OK)
        return NULL;
    if (len)
        *len = n;
    return data;
}

bool tu_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

bool tu_files_equal(const char *a, const char *b)
{
    size_t na, nb;
    char *da = tu_slurp(a, &na), *db = tu_slurp(b, &nb);
    bool eq = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return eq;
}

int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

void tu_assert_ok(gir_status st, gir_error *err, const char *file, int line)
{
    if (st == GIR_OK)
        return;
    char *msg = gir_error_format(err);
    print_error("%s:%d: expected success, got %s\n", file, line, msg ? msg : gir_status_name(st));
    free(msg);
    _fail(file, line);
}

void tu_assert_fails(gir_status st, gir_error *err, gir_status code, const char *file, int line, ...)
{
    char *msg = gir_error_format(err);
    if (st != code || !err || err->code != code) {
        print_error("%s:%d: expected [%s], got status %s: %s\n", file, line, gir_status_name(code),
                    gir_status_name(st), msg ? msg : "(no message)");
        free(msg);
        _fail(file, line);
        return;
    }
    va_list ap;
    va_start(ap, line);
    const char *want;
    while ((want = va_arg(ap, const char *))) {
        if (!msg || !strstr(msg, want)) {
            print_error("%s:%d: error message lacks \"%s\": %s\n", file, line, want, msg ? msg : "(none)");
            va_end(ap);
            free(msg);
            _fail(file, line);
            return;
        }
    }
    va_end(ap);
    free(msg);
}

char *tu_dir;

int tu_setup_tempdir(void **state)
{
    (void)state;
    tu_dir = tu_tempdir();
    return tu_dir ? 0 : -1;
}

int tu_teardown_tempdir(void **state)
{
    (void)state;
    tu_rmtree(tu_dir);
    free(tu_dir);
    tu_dir = NULL;
    return 0;
}

char *tu_tmp(const char *name)
{
    return tu_join(tu_dir, name);
}

bool tu_have_program(const char *name)
{
    char *cmd = gir_strdupf("command -v '%s' >/dev/null 2>&1", name);
    bool ok = cmd && system(cmd) == 0;
    free(cmd);
    return ok;
}

gir_graph *tu_load(const char *path, const char *format, const gir_options *o)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    TU_OK(gir_load(path, format, o, &g, &err), &err);
    return g;
}

void tu_save(const gir_graph *g, const char *path, const char *format, const gir_options *o)
{
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_save(g, path, format, o, &err), &err);
}

static void option(gir_options *o, const char *key, const char *value)
{
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, key, value, &err), &err);
}

gir_options *tu_options(const char *key, ...)
{
    gir_options *o = gir_options_new();
    assert_non_null(o);
    va_list ap;
    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *))
        option(o, k, va_arg(ap, const char *));
    va_end(ap);
    return o;
}

gir_options *tu_options_kv(const char *const *kv)
{
    gir_options *o = gir_options_new();
    assert_non_null(o);
    for (size_t i = 0; kv && kv[i]; i += 2)
        option(o, kv[i], kv[i + 1]);
    return o;
}

size_t tu_count_op(const gir_graph *g, const char *op)
{
    size_t n = 0;
    for (size_t i = 0; i < gir_graph_node_count(g); i++)
        n += strcmp(gir_node_op(gir_graph_node(g, i)), op) == 0;
    return n;
}

int32_t tu_find_op(const gir_graph *g, const char *op)
{
    int32_t last = -1;
    for (size_t i = 0; i < gir_graph_node_count(g); i++)
        if (!strcmp(gir_node_op(gir_graph_node(g, i)), op))
            last = (int32_t)i;
    return last;
}

size_t tu_count_opaque(const gir_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < gir_graph_node_count(g); i++)
        n += gir_node_is_opaque(gir_graph_node(g, i));
    return n;
}

void tu_assert_same(const gir_graph *a, const gir_graph *b, bool names, bool meta, const char *what)
{
    gir_diff_options o = { .names = names, .meta = meta, .weights = true, .max_report = 20 };
    gir_buf rep = GIR_BUF_INIT;
    size_t count = 0;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_diff(a, b, &o, &rep, &count, &err), &err);
    if (count) {
        print_error("%s: %zu differences:\n%s\n", what, count, rep.data ? rep.data : "");
        gir_buf_free(&rep);
        fail();
    }
    gir_buf_free(&rep);
}
