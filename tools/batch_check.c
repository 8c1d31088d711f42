/* Checking a written model against its source. */
#include "batch.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "passes/diff.h"

/* The structural comparison, for models the runtime cannot run. */
static gir_status structural_check(const gir_graph *src, const gir_graph *back, const char *why,
                                   char **metrics_json, gir_error *err)
{
    gir_diff_options dopt = { .names = false, .meta = false, .weights = true, .max_report = 5 };
    gir_buf report = GIR_BUF_INIT;
    size_t count = 0;
    gir_status st = gir_graph_diff(src, back, &dopt, &report, &count, err);
    if (st == GIR_OK && count > 0) {
        char *first = report.data ? strtok(report.data, "\n") : NULL;
        st = gir_fail(err, GIR_E_CHECK_FAILED,
                      "the written model differs from the source in %zu place%s (%s, so compared structurally); "
                      "first: %s",
                      count, count == 1 ? "" : "s", why, first ? first : "?");
    }
    if (st == GIR_OK) {
        gir_buf m = GIR_BUF_INIT;
        gir_buf_printf(&m, "{\"method\": \"structural\", \"why\": ");
        gc_json_escape(&m, why);
        gir_buf_printf(&m, ", \"differences\": 0, \"nodes\": %zu}", back->n_nodes);
        *metrics_json = gir_buf_take(&m);
    }
    gir_buf_free(&report);
    return st;
}

gir_status gc_batch_check(const gir_graph *src, const char *out_path, const char *out_format, double atol,
                          double rtol, char **metrics_json, gir_error *err)
{
    *metrics_json = NULL;
    gir_graph *back = NULL;
    gir_status st = gir_load(out_path, out_format, NULL, &back, err);
    if (st)
        return st;
    /* Numbers first: both models run on the same seeded inputs. */
    gc_check_opts o = { .atol = atol, .rtol = rtol, .seed = 0, .threads = 1, .feed = NULL, .per_node = false,
                        .out = NULL };
    gir_error cerr = GIR_ERROR_INIT;
    st = gc_check_compare(src, back, &o, metrics_json, &cerr);
    if (st == GIR_E_NO_KERNEL || st == GIR_E_UNSUPPORTED) {
        /* The runtime cannot run it (an opaque operator, say): compare the
         * graphs and weights instead, and say so in the metrics. */
        char *why = gir_error_format(&cerr);
        free(*metrics_json);
        *metrics_json = NULL;
        st = structural_check(src, back, why ? why : "the runtime cannot run it", metrics_json, err);
        free(why);
    } else if (st != GIR_OK) {
        /* Carry the check's error over as is. */
        if (err && err->code == GIR_OK) {
            *err = cerr;
            gir_error_init(&cerr);
        }
    }
    gir_error_clear(&cerr);
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
