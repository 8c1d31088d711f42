/* gir_load / gir_save: format detection and dispatch to the plugins. */
#include "format.h"

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
    st = f->read(path, opts, out, err);
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
        gir_attrs_set_string(*out, &(*out)->meta, "source.format", f->name))
        st = gir_nomem(err);
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
    uint64_t total = 0;
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i]->data)
            total += g->values[i]->data->nbytes;
    gir_progress_begin(opts, total);
    st = f->write(g, path, opts, err);
    gir_progress_end(st == GIR_OK);
    if (st)
        gir_err_file(err, path);
    return st;
}
