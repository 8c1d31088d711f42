/* gir_load / gir_save: format detection and dispatch to the plugins. */
#include "format.h"
#include "passes/legalize.h"

#include "api/api.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const gir_format *by_extension(const char *path)
{
    const gir_format *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *f = gir_format_at(i);
        for (const char *const *e = f->extensions; e && *e; e++) {
            size_t len = strlen(*e);
            if (gir_str_ends_with(path, *e) && len > best_len) {
                best = f;
                best_len = len;
            }
        }
    }
    return best;
}

GIR_API const char *gir_format_for_extension(const char *path)
{
    const gir_format *f = by_extension(path);
    return f ? f->name : NULL;
}

GIR_API gir_status gir_detect(const char *path, const char **name, const char **reason, gir_error *err)
{
    unsigned char head[GIR_PROBE_BYTES];
    size_t n;
    *name = NULL;
    if (reason)
        *reason = NULL;
    gir_status st = gir_read_head(path, head, sizeof head, &n, err);
    if (st)
        return st;
    const gir_format *best = NULL;
    int best_score = 0;
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *f = gir_format_at(i);
        if (!f->probe || !f->read)
            continue;
        int s = f->probe(head, n, path);
        if (s > best_score) {
            best_score = s;
            best = f;
        }
    }
    if (best && best_score >= 50) {
        *name = best->name;
        if (reason)
            *reason = "content";
        return GIR_OK;
    }
    const gir_format *ext = by_extension(path);
    if (ext && ext->read) {
        *name = ext->name;
        if (reason)
            *reason = "extension";
        return GIR_OK;
    }
    if (best) {
        *name = best->name;
        if (reason)
            *reason = "content (weak match)";
        return GIR_OK;
    }
    if (n == 0)
        gir_fail(err, GIR_E_UNKNOWN_FORMAT, "file is empty");
    else
        gir_fail(err, GIR_E_UNKNOWN_FORMAT, "not a model format graphconv knows (see 'graphconv formats')");
    gir_err_file(err, path);
    return GIR_E_UNKNOWN_FORMAT;
}

static gir_status load_file(const char *path, const char *format, const gir_options *opts, gir_graph **out,
                            gir_error *err)
{
    const gir_format *f;
    if (format) {
        f = gir_format_find(format);
        if (!f)
            return gir_fail(err, GIR_E_ARGUMENT, "unknown format '%s' (see 'graphconv formats')", format);
    } else {
        const char *name;
        gir_status st = gir_detect(path, &name, NULL, err);
        if (st)
            return st;
        f = gir_format_find(name);
    }
    if (!f->read)
        return gir_fail(err, GIR_E_ARGUMENT, "format %s cannot be read", f->name);
    gir_status st = gir_options_check(opts, f, GIR_MAP_READ, err);
    if (st)
        return st;
    /* Every count, depth and size of this read against the limits. */
    gir_limits lim;
    if ((st = gir_limits_from_options(opts, &lim, err)))
        return st;
    /* No commit moves files in the model's (and its weights') directory
     * while they are read, and one a dead writer left half done is
     * finished first: never a new graph beside old weights. */
    int lk[2] = { -1, -1 };
    const char *pp = gir_options_get(opts, "params");
    char *d0 = pp ? gir_path_dirname(path) : NULL, *d1 = pp ? gir_path_dirname(pp) : NULL;
    bool other_dir = d0 && d1 && strcmp(d0, d1) != 0;
    free(d0);
    free(d1);
    if ((st = gir_indir_lock(path, &lk[0], err)) || (other_dir && (st = gir_indir_lock(pp, &lk[1], err)))) {
        gir_indir_unlock(lk[0]);
        return st;
    }
    gir_limit_scope scope;
    gir_limits_enter(&scope, &lim);
    st = f->read(path, opts, out, err);
    if (st)
        gir_limit_explain(err);
    gir_indir_unlock(lk[1]);
    gir_indir_unlock(lk[0]);
    /* input-shape (for readers that do not take it themselves) and
     * batch-size, for every format: applied and the shapes inferred again. */
    bool took = false;
    for (const gir_option_doc *d = f->read_options; d && d->key; d++)
        took = took || strcmp(d->key, "input-shape") == 0;
    if (st == GIR_OK)
        st = gir_apply_shape_options(*out, opts, took, err);
    /* Which format the graph came from, where the reader did not say more
     * precisely (the NNVM family names its flavour). */
    if (st == GIR_OK && !gir_attrs_find(&(*out)->meta, "source.format") &&
        gir_attrs_set_string(*out, &(*out)->meta, "source.format", f->name, err))
        st = gir_nomem(err);
    gir_limits_leave(&scope);
    if (st) {
        gir_err_file(err, path);
        gir_graph_free(*out);
        *out = NULL;
    }
    return st;
}

/* A pipe (or another file that reads only once) cannot be sniffed and then
 * read, nor its tensors loaded later: it is copied whole to a temporary
 * file, read from there with every tensor loaded, and the copy removed.
 * Errors name the path given, not the copy. */
static gir_status load_stream(const char *path, const char *format, const gir_options *opts, gir_graph **out,
                              gir_error *err)
{
    char *tmp;
    int keep_fd;
    TRY(gir_spool(path, &tmp, &keep_fd, err));
    gir_status st = load_file(tmp, format, opts, out, err);
    if (st == GIR_OK && (st = gir_graph_own_tensors(*out, err)) != GIR_OK) {
        gir_graph_free(*out);
        *out = NULL;
    }
    if (keep_fd >= 0)
        close(keep_fd);
    else
        unlink(tmp);
    if (st && err && err->file && strcmp(err->file, tmp) == 0) {
        free(err->file);
        err->file = NULL;
        gir_err_file(err, path);
    }
    free(tmp);
    return st;
}

GIR_API gir_status gir_load(const char *path, const char *format, const gir_options *opts, gir_graph **out,
                            gir_error *err)
{
    *out = NULL;
    return gir_path_is_stream(path) ? load_stream(path, format, opts, out, err)
                                    : load_file(path, format, opts, out, err);
}

/* ---- planning and legalization ------------------------------------------- */

typedef struct plan_ctx {
    const gir_format *f;
    const gir_options *opts; /* the caller's, without a note handler: planning says nothing */
} plan_ctx;

/* The format's plan of g as per-node reasons. */
static gir_status plan_graph(void *ctx, const gir_graph *g, gir_plan *p, gir_error *err)
{
    const plan_ctx *c = ctx;
    gir_unsupported *u = gir_unsupported_new();
    p->n_nodes = g->n_nodes;
    p->why = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *p->why);
    if (!u || !p->why) {
        gir_unsupported_free(u);
        return gir_nomem(err);
    }
    gir_status st = c->f->plan(g, c->opts, u, err);
    if (!st && gir_unsupported_failed(u))
        st = gir_nomem(err);
    for (size_t i = 0; !st && i < gir_unsupported_event_count(u); i++) {
        const char *node;
        const char *what = gir_unsupported_event(u, i, &node);
        int32_t k = node ? gir_graph_node_index(g, node) : -1;
        if (k < 0) {
            p->n_other++;
        } else if (!p->why[k]) {
            if (!(p->why[k] = gir_strdupf("%s", what)))
                st = gir_nomem(err);
            p->n_bad++;
        }
    }
    gir_unsupported_free(u);
    return st;
}

/* Legalizes a copy of g for f when f refuses part of it and patterns
 * help: *out is the rewritten copy (NULL: write g as it is); each pattern
 * used is a note with its count.  *tried says what did not help. */
static gir_status legalize_for(const gir_format *f, const gir_graph *g, const gir_options *opts, gir_graph **out,
                               char **tried, gir_error *err)
{
    *out = NULL;
    *tried = NULL;
    const char *lg = gir_options_get(opts, "legalize");
    if (!f->plan || (lg && strcmp(lg, "0") == 0))
        return GIR_OK;
    gir_options *quiet = opts ? gir_options_dup(opts) : gir_options_new();
    if (!quiet)
        return gir_nomem(err);
    gir_options_set_note_handler(quiet, NULL, NULL);
    plan_ctx c = { f, quiet };
    gir_plan p = { 0 };
    gir_status st = plan_graph(&c, g, &p, err);
    size_t bad = p.n_bad;
    gir_plan_free(&p);
    gir_graph *copy = NULL;
    if (st || !bad || (st = gir_graph_clone(g, &copy, err))) {
        gir_options_free(quiet);
        return st;
    }
    gir_legal_report rep = { 0 };
    st = gir_legalize(&copy, plan_graph, &c, &rep, err);
    size_t used = 0;
    for (size_t i = 0; !st && i < gir_pattern_count(); i++) {
        if (!rep.applied[i])
            continue;
        used++;
        gir_write_note(opts, "rewritten for %s: %s (%zu node%s)", f->name, gir_pattern_at(i)->note, rep.applied[i],
                       rep.applied[i] == 1 ? "" : "s");
    }
    if (!st && used)
        *out = copy;
    else
        gir_graph_free(copy);
    *tried = rep.tried;
    rep.tried = NULL;
    gir_legal_report_free(&rep);
    gir_options_free(quiet);
    return st;
}

GIR_API gir_status gir_save(const gir_graph *g, const char *path, const char *format, const gir_options *opts,
                            gir_error *err)
{
    const gir_format *f = format ? gir_format_find(format) : by_extension(path);
    if (!f) {
        if (format)
            return gir_fail(err, GIR_E_ARGUMENT, "unknown format '%s' (see 'graphconv formats')", format);
        gir_fail(err, GIR_E_ARGUMENT, "cannot tell the output format from the file name; use --to");
        gir_err_file(err, path);
        return GIR_E_ARGUMENT;
    }
    if (!f->write)
        return gir_fail(err, GIR_E_ARGUMENT, "format %s cannot be written", f->name);
    gir_status st = gir_options_check(opts, f, GIR_MAP_WRITE, err);
    if (st)
        return st;
    gir_graph *legal = NULL;
    char *tried = NULL;
    if ((st = legalize_for(f, g, opts, &legal, &tried, err)))
        return st;
    if (legal)
        g = legal;
    uint64_t total = 0;
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i]->data)
            total += g->values[i]->data->nbytes;
    gir_progress_begin(opts, total);
    st = f->write(g, path, opts, err);
    gir_progress_end(st == GIR_OK);
    if (st && tried && err && err->message &&
        (st == GIR_E_UNSUPPORTED || st == GIR_E_UNSUPPORTED_OP || st == GIR_E_UNSUPPORTED_ATTR))
        gir_err_replace_message(err, "%s; rewrites tried: %s", err->message, tried);
    if (st)
        gir_err_file(err, path);
    free(tried);
    gir_graph_free(legal);
    return st;
}

gir_opaque_use gir_opaque_policy(const gir_node *n, const char *format, bool allow_foreign)
{
    if (n->opaque_format && strcmp(n->opaque_format, format) == 0)
        return GIR_OPAQUE_OURS;
    return allow_foreign ? GIR_OPAQUE_FOREIGN : GIR_OPAQUE_REFUSE;
}
