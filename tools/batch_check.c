/* Checking a written model against its source. */
#include "batch.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "formats/format.h"

bool gc_parse_check_arg(const char *arg, gc_check_spec *c)
{
    c->on = true;
    if (!arg || strcmp(arg, "run") == 0)
        c->structural_ok = false;
    else if (strcmp(arg, "structure") == 0)
        c->structural_ok = true;
    else
        return false;
    return true;
}

gir_status gc_batch_check(const gir_graph *src, const char *out_path, const char *out_format, const gc_check_spec *c,
                          char **metrics_json, char **verdict, gir_error *err)
{
    *metrics_json = NULL;
    *verdict = NULL;
    gir_graph *back = NULL;
    gir_status st = gir_load(out_path, out_format, gc_limits, &back, err);
    if (st)
        return st;
    gir_check_options o;
    gir_check_options_init(&o);
    o.atol = c->atol;
    o.rtol = c->rtol;
    o.allow_structural = c->structural_ok;
    o.max_run_elements = gc_max_run_elements;
    gir_check_result res;
    st = gir_check_written(src, back, &o, &res, err);
    if (st && res.method == GIR_CHECK_STRUCTURAL && err && err->message &&
        strstr(err->message, "structural check was not accepted"))
        gir_err_replace_message(err, "%s (accept one with --check=structure)", err->message);
    *metrics_json = res.json;
    *verdict = res.verdict;
    res.json = res.verdict = NULL;
    gir_check_result_clear(&res);
    gir_graph_free(back);
    return st;
}

/* Moves every file of stage into place: the file named like the requested
 * companion (params_dest) goes there, the others beside out_path.  Checks
 * first that nothing would be overwritten (unless force), so either every
 * file moves or none does. */
/* Nothing there, or a regular file: only those are replaced (never a
 * FIFO, a device, a directory or a symbolic link). */
static bool replaceable(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) != 0 || S_ISREG(sb.st_mode);
}

/* With the output directory's lock (fd lock) held: the journal of moving
 * every file of stage into dir (or params_dest), when there are several
 * and all go into dir (*journal stays NULL otherwise). */
static gir_status journal_stage(int lock, const char *stage, const char *dir, const char *params_dest,
                                char **journal, gir_error *err)
{
    *journal = NULL;
    DIR *d = lock >= 0 ? opendir(stage) : NULL;
    if (!d)
        return GIR_OK;
    char **t = NULL;
    size_t n = 0, cap = 0;
    bool same_dir = true;
    gir_status st = GIR_OK;
    struct dirent *e;
    while (st == GIR_OK && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bool params = params_dest && strcmp(e->d_name, gir_path_basename(params_dest)) == 0;
        char *pdir = params ? gir_path_dirname(params_dest) : NULL;
        same_dir = same_dir && (!params || (pdir && strcmp(pdir, dir) == 0));
        free(pdir);
        if (!GIR_GROW(t, cap, 2 * n + 2)) {
            st = gir_nomem(err);
            break;
        }
        t[2 * n] = gir_strdupf("%s/%s", gir_path_basename(stage), e->d_name);
        t[2 * n + 1] = gir_strdupf("%s", params ? gir_path_basename(params_dest) : e->d_name);
        n++;
        if (!t[2 * n - 2] || !t[2 * n - 1])
            st = gir_nomem(err);
    }
    closedir(d);
    if (st == GIR_OK && n > 1 && same_dir) {
        const char **temps = calloc(n, sizeof *temps), **targets = calloc(n, sizeof *targets);
        if (!temps || !targets)
            st = gir_nomem(err);
        for (size_t i = 0; st == GIR_OK && i < n; i++) {
            temps[i] = t[2 * i];
            targets[i] = t[2 * i + 1];
        }
        if (st == GIR_OK)
            st = gir_outdir_journal(lock, n, temps, targets, journal, err);
        free(temps);
        free(targets);
    }
    for (size_t i = 0; i < 2 * n; i++)
        free(t[i]);
    free(t);
    return st;
}

static gir_status move_staged(const char *stage, const char *out_path, const char *params_dest, bool force,
                              gc_written *w, gir_error *err)
{
    char *dir = gir_path_dirname(out_path);
    if (!dir)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    const char *owner = NULL;
    /* Under the library's commit lock of the output directory: concurrent
     * writers of one model and its companions never interleave their moves. */
    int lock = gir_outdir_lock(out_path);
    char *journal = NULL;
    for (int pass = 0; pass < 2 && st == GIR_OK; pass++) {
        /* a kill between the moves: the next lock of dir finishes them */
        if (pass == 1 && (st = journal_stage(lock, stage, dir, params_dest, &journal, err)))
            break;
        DIR *d = opendir(stage);
        if (!d) {
            st = gir_fail(err, GIR_E_IO, "cannot read the staging directory %s", stage);
            break;
        }
        struct dirent *e;
        while (st == GIR_OK && (e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *from = gir_path_join(stage, e->d_name);
            char *to = params_dest && strcmp(e->d_name, gir_path_basename(params_dest)) == 0
                           ? gir_strdupf("%s", params_dest)
                           : gir_path_join(dir, e->d_name);
            if (!from || !to) {
                st = gir_nomem(err);
            } else if (pass == 0 && !force && gir_path_exists(to)) {
                if (strcmp(to, out_path) == 0)
                    st = gir_fail(err, GIR_E_EXISTS, "output exists; use --force to overwrite it");
                else
                    st = gir_fail(err, GIR_E_EXISTS,
                                  "this conversion's companion file exists (another model's?); name it with "
                                  "--out-params FILE, or use --force to overwrite it");
                gir_err_file(err, to);
            } else if (pass == 0 && w && w->claim && !w->claim(w->claim_ctx, to, &owner)) {
                st = gir_fail(err, GIR_E_EXISTS, "this conversion's companion file is also written by %s", owner);
                gir_err_file(err, to);
            } else if (pass == 0 && w && gir_path_exists(to)) {
                w->replaced++;
            } else if (pass == 0 && !replaceable(to)) {
                st = gir_fail(err, GIR_E_IO, "not a regular file: only regular files are replaced");
                gir_err_file(err, to);
            } else if (pass == 1 && rename(from, to) != 0) {
                st = gir_fail(err, GIR_E_IO, "cannot move the written output into place");
                gir_err_file(err, to);
            } else if (pass == 1 && w) {
                char **np = realloc(w->paths, (w->n + 1) * sizeof *np);
                if (np) {
                    w->paths = np;
                    w->paths[w->n++] = to;
                    to = NULL;
                }
            }
            free(from);
            free(to);
        }
        closedir(d);
    }
    gir_outdir_journal_done(lock, journal);
    gir_outdir_unlock(lock);
    free(dir);
    return st;
}

void gc_written_free(gc_written *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++)
        free(w->paths[i]);
    free(w->paths);
    memset(w, 0, sizeof *w);
}

/* Sorts the written paths so that the model comes first. */
static void model_first(gc_written *w, const char *out_path)
{
    for (size_t i = 1; i < w->n; i++)
        if (strcmp(w->paths[i], out_path) == 0) {
            char *t = w->paths[0];
            w->paths[0] = w->paths[i];
            w->paths[i] = t;
        }
}

gir_status gc_save_checked(const gir_graph *g, const char *out_path, const char *format, const gir_options *wopts,
                           const gc_check_spec *check, gc_written *w, char **metrics_json, char **verdict,
                           gir_error *err)
{
    *metrics_json = NULL;
    *verdict = NULL;
    if (gir_path_is_stream(out_path))
        return gir_save(g, out_path, format, wopts, err);
    /* Written into a private directory beside the output (checked there
     * with --check) and moved into place only when everything is written
     * (and the check passes): a model that fails its check is never left
     * where the output goes, and every file written is known by name. */
    char *stage;
    gir_status st = gir_outdir_stage(out_path, &stage, err);
    if (st)
        return st;
    gir_options *o = gir_options_dup(wopts);
    char *staged = gir_path_join(stage, gir_path_basename(out_path));
    const char *params_dest = gir_options_get(wopts, "params");
    char *staged_params = params_dest ? gir_path_join(stage, gir_path_basename(params_dest)) : NULL;
    if (!o || !staged || (params_dest && !staged_params))
        st = gir_nomem(err);
    if (st == GIR_OK && params_dest)
        st = gir_options_set(o, "params", staged_params, err);
    if (st == GIR_OK)
        st = gir_save(g, staged, format, o, err);
    if (st == GIR_OK && check && check->on)
        st = gc_batch_check(g, staged, format, check, metrics_json, verdict, err);
    if (st == GIR_OK)
        st = move_staged(stage, out_path, params_dest, gir_options_flag(wopts, "force"), w, err);
    if (w)
        model_first(w, out_path);
    if (st != GIR_OK) {
        /* Name the output, not the staging path, in the error. */
        if (err && err->file && strncmp(err->file, stage, strlen(stage)) == 0) {
            free(err->file);
            err->file = gir_strdupf("%s", out_path);
        }
    }
    gc_rmtree(stage);
    gir_outdir_unstage(stage);
    free(staged);
    free(staged_params);
    gir_options_free(o);
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
