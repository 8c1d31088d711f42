/* Models and tensors in memory and .npy files (graphir/memio.h).  The
 * readers and writers work on paths: memory goes through a private
 * temporary directory that is removed before returning. */
#include "api.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/format.h"
#include "io/npy.h"

static gir_status make_tmpdir(char **dir, gir_error *err)
{
    const char *base = getenv("TMPDIR");
    *dir = gir_strdupf("%s/graphir-mem-XXXXXX", base && *base ? base : "/tmp");
    if (!*dir)
        return gir_nomem(err);
    if (!mkdtemp(*dir)) {
        free(*dir);
        *dir = NULL;
        return gir_fail(err, GIR_E_IO, "cannot create a temporary directory in %s", base && *base ? base : "/tmp");
    }
    return GIR_OK;
}

/* Removes the files of the (flat) temporary directory and the directory. */
static void remove_tmpdir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = gir_path_join(dir, e->d_name);
        if (p)
            unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(dir);
}

static gir_status write_all(const char *path, const void *data, size_t size, gir_error *err)
{
    gir_outfile *f;
    TRY(gir_outfile_open(path, false, &f, err));
    gir_status st = gir_outfile_write(f, data, size, err);
    if (st) {
        gir_outfile_abort(f);
        return st;
    }
    return gir_outfile_commit(f, err);
}

/* The path of a format's model in dir: "model" and its first extension
 * ("model" when the format is to be detected). */
static char *model_path(const char *dir, const gir_format *f)
{
    const char *ext = f && f->extensions && f->extensions[0] ? f->extensions[0] : "";
    return gir_strdupf("%s/model%s", dir, ext);
}

GIR_API gir_status gir_load_memory(const void *data, size_t size, const void *params, size_t params_size,
                                   const char *format, const gir_options *opts, gir_graph **out, gir_error *err)
{
    *out = NULL;
    const gir_format *f = format ? gir_format_find(format) : NULL;
    if (format && !f)
        return gir_fail(err, GIR_E_ARGUMENT, "unknown format '%s' (see 'graphconv formats')", format);
    if (!data && size)
        return gir_fail(err, GIR_E_ARGUMENT, "no model bytes given");
    char *dir;
    TRY(make_tmpdir(&dir, err));
    char *mpath = model_path(dir, f);
    char *ppath = params ? gir_path_join(dir, "model.params") : NULL;
    gir_options *o = gir_options_dup(opts);
    gir_status st = GIR_OK;
    if (!mpath || (params && !ppath) || !o)
        st = gir_nomem(err);
    if (st == GIR_OK)
        st = write_all(mpath, data, size, err);
    if (st == GIR_OK && params)
        st = write_all(ppath, params, params_size, err);
    if (st == GIR_OK && params)
        st = gir_options_set(o, "params", ppath, err);
    if (st == GIR_OK)
        st = gir_load(mpath, format, o, out, err);
    if (st == GIR_OK && (st = gir_graph_own_tensors(*out, err)) != GIR_OK) {
        gir_graph_free(*out);
        *out = NULL;
    }
    /* Errors name the memory, not the temporary copy. */
    if (st && err && err->file) {
        bool is_params = ppath && strcmp(err->file, ppath) == 0;
        free(err->file);
        err->file = gir_strdupf("%s", is_params ? "(params in memory)" : "(model in memory)");
    }
    gir_options_free(o);
    free(mpath);
    free(ppath);
    remove_tmpdir(dir);
    return st;
}

GIR_API gir_status gir_save_memory(const gir_graph *g, const char *format, const gir_options *opts, void **data,
                                   size_t *size, void **params, size_t *params_size, gir_error *err)
{
    *data = NULL;
    *size = 0;
    if (params) {
        *params = NULL;
        *params_size = 0;
    }
    const gir_format *f = format ? gir_format_find(format) : NULL;
    if (!f)
        return gir_fail(err, GIR_E_ARGUMENT, "unknown format '%s' (see 'graphconv formats')", format ? format : "");
    char *dir;
    TRY(make_tmpdir(&dir, err));
    char *mpath = model_path(dir, f);
    char *ppath = gir_path_join(dir, "model.params");
    gir_options *o = gir_options_dup(opts);
    gir_status st = GIR_OK;
    if (!mpath || !ppath || !o)
        st = gir_nomem(err);
    if (st == GIR_OK)
        st = gir_options_set(o, "params", ppath, err);
    if (st == GIR_OK)
        st = gir_save(g, mpath, f->name, o, err);
    /* Exactly the model and at most the companion file. */
    size_t others = 0;
    DIR *d = st == GIR_OK ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && strcmp(e->d_name, gir_path_basename(mpath)) != 0 &&
            strcmp(e->d_name, "model.params") != 0)
            others++;
    if (d)
        closedir(d);
    bool has_params = st == GIR_OK && gir_path_exists(ppath);
    if (st == GIR_OK && others)
        st = gir_fail(err, GIR_E_UNSUPPORTED, "writing %s made %zu more file%s than a model and its weights", f->name,
                      others, others == 1 ? "" : "s");
    else if (st == GIR_OK && has_params && !params)
        st = gir_fail(err, GIR_E_ARGUMENT, "format %s writes a weights file: pass params to receive it", f->name);
    char *bytes = NULL;
    size_t len = 0;
    if (st == GIR_OK)
        st = gir_read_file(mpath, 0, &bytes, &len, err);
    if (st == GIR_OK && has_params) {
        char *pb = NULL;
        size_t pl = 0;
        st = gir_read_file(ppath, 0, &pb, &pl, err);
        if (st == GIR_OK) {
            *params = pb;
            *params_size = pl;
        }
    }
    if (st == GIR_OK) {
        *data = bytes;
        *size = len;
    } else {
        free(bytes);
        if (err && err->file) {
            free(err->file);
            err->file = gir_strdupf("(%s in memory)", f->name);
        }
    }
    gir_options_free(o);
    free(mpath);
    free(ppath);
    remove_tmpdir(dir);
    return st;
}

GIR_API gir_status gir_tensor_read_npy(const char *path, gir_tensor **out, gir_error *err)
{
    return gir_npy_read(path, out, err);
}

GIR_API gir_status gir_tensor_parse_npy(const void *data, size_t size, gir_tensor **out, gir_error *err)
{
    return gir_npy_parse(data, size, "(npy in memory)", out, err);
}

GIR_API gir_status gir_tensor_write_npy(const char *path, gir_tensor *t, bool overwrite, gir_error *err)
{
    return gir_npy_save(path, t, overwrite, err);
}
