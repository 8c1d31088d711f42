#include "testutil.h"

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

size_t tu_list_dir(const char *dir, char **names, size_t max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            assert_true(n < max);
            names[n++] = strdup(e->d_name);
        }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
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
