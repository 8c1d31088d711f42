/* Checking a written model against its source. */
#include "batch.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "passes/diff.h"

gir_status gc_batch_check(const gir_graph *src, const char *out_path, const char *out_format, double atol,
                          double rtol, char **metrics_json, gir_error *err)
{
    (void)atol;
    (void)rtol;
    *metrics_json = NULL;
    gir_graph *back = NULL;
    gir_status st = gir_load(out_path, out_format, NULL, &back, err);
    if (st)
        return st;
    gir_diff_options dopt = { .names = false, .meta = false, .weights = true, .max_report = 5 };
    gir_buf report = GIR_BUF_INIT;
    size_t count = 0;
    st = gir_graph_diff(src, back, &dopt, &report, &count, err);
    if (st == GIR_OK && count > 0) {
        char *first = report.data ? strtok(report.data, "\n") : NULL;
        st = gir_fail(err, GIR_E_CHECK_FAILED, "the written model differs from the source in %zu place%s; first: %s",
                      count, count == 1 ? "" : "s", first ? first : "?");
    }
    if (st == GIR_OK)
        *metrics_json = gir_strdupf("{\"method\": \"reread\", \"differences\": 0, \"nodes\": %zu}", back->n_nodes);
    gir_buf_free(&report);
    gir_graph_free(back);
    return st;
}

void gc_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = gir_path_join(dir, e->d_name);
        struct stat st;
        if (p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            gc_rmtree(p);
        else if (p)
            unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}
