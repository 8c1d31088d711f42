/* Key/value options for readers and writers. */
#include "format.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct gir_options {
    char **keys;
    char **values;
    size_t n, cap;
    gir_note_fn note_fn;
    void *note_ctx;
    gir_progress_fn progress_fn;
    void *progress_ctx;
};

/* The save running on this thread, for gir_progress_add. */
typedef struct progress_state {
    gir_progress_fn fn;
    void *ctx;
    uint64_t done, total;
} progress_state;
static _Thread_local progress_state progress;

const gir_option_doc gir_common_options[] = {
    { "params", "companion weights file: read it from / write it to this path" },
    { "batch-size", "set the first dimension of every input to this size when reading (the shapes are inferred "
                    "again; a model whose constants pin the batch is refused)" },
    { "input-shape", "give inputs these shapes when reading, NAME:D1,D2,...;NAME:... (-1: unknown); the shapes "
                     "are inferred again" },
    { "allow-opaque", "write operators the target cannot map verbatim, as opaque nodes (1/0)" },
    { "force", "overwrite existing output files (1/0)" },
    { "max-bytes", "refuse inputs (or decompressed members) larger than this many bytes" },
    { "max-depth", "refuse JSON or protobuf text nested deeper than this (default 256; protobuf text stops at 100)" },
    { "max-nodes", "refuse graphs of more nodes than this (default 1000000)" },
    { "max-tensors", "refuse models making more tensors than this while read (default 1000000)" },
    { "max-attrs", "refuse models of more operator attributes than this in all (default 10000000)" },
    { "max-weight-bytes", "refuse models whose tensors take more bytes than this when read (default 4294967296)" },
    { "max-unzip-bytes", "refuse archives whose members decompress to more bytes than this (default 4294967296)" },
    { "max-run-elements", "refuse runs of the reference runtime (--check, run) computing more tensor elements "
                          "than this in all (default 4000000000)" },
    { "legalize", "0: write the graph as it is, without rewriting what the target cannot express into forms it "
                  "can (default 1)" },
    { NULL, NULL },
};

GIR_API gir_options *gir_options_new(void)
{
    return calloc(1, sizeof(gir_options));
}

GIR_API gir_options *gir_options_dup(const gir_options *o)
{
    gir_options *c = gir_options_new();
    if (!c || !o)
        return c;
    for (size_t i = 0; i < o->n; i++)
        if (gir_options_set(c, o->keys[i], o->values[i], NULL) != GIR_OK) {
            gir_options_free(c);
            return NULL;
        }
    c->note_fn = o->note_fn;
    c->note_ctx = o->note_ctx;
    c->progress_fn = o->progress_fn;
    c->progress_ctx = o->progress_ctx;
    return c;
}

GIR_API void gir_options_free(gir_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->keys[i]);
        free(o->values[i]);
    }
    free(o->keys);
    free(o->values);
    free(o);
}

GIR_API gir_status gir_options_set(gir_options *o, const char *key, const char *value, gir_error *err)
{
    if (!o || !key || !value)
        return gir_fail(err, GIR_E_ARGUMENT, "option key and value must not be NULL");
    char *v = gir_strdupf("%s", value);
    if (!v)
        return gir_nomem(err);
    for (size_t i = 0; i < o->n; i++) {
        if (strcmp(o->keys[i], key) == 0) {
            free(o->values[i]);
            o->values[i] = v;
            return GIR_OK;
        }
    }
    size_t cap = o->cap;
    char *k = gir_strdupf("%s", key);
    if (!k || !GIR_GROW(o->keys, cap, o->n + 1)) {
        free(k);
        free(v);
        return gir_nomem(err);
    }
    cap = o->cap;
    if (!GIR_GROW(o->values, cap, o->n + 1)) {
        free(k);
        free(v);
        return gir_nomem(err);
    }
    o->cap = cap;
    o->keys[o->n] = k;
    o->values[o->n] = v;
    o->n++;
    return GIR_OK;
}

GIR_API const char *gir_options_get(const gir_options *o, const char *key)
{
    for (size_t i = 0; o && i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return o->values[i];
    return NULL;
}

GIR_API size_t gir_options_count(const gir_options *o) { return o ? o->n : 0; }
GIR_API const char *gir_options_key(const gir_options *o, size_t i) { return o && i < o->n ? o->keys[i] : NULL; }

static bool listed(const gir_option_doc *docs, const char *key)
{
    for (; docs && docs->key; docs++)
        if (strcmp(docs->key, key) == 0)
            return true;
    return false;
}

gir_status gir_options_check(const gir_options *opts, const gir_format *fmt, unsigned dir, gir_error *err)
{
    for (size_t i = 0; opts && i < opts->n; i++) {
        const char *k = opts->keys[i];
        if (listed(gir_common_options, k))
            continue;
        if ((dir & GIR_MAP_READ) && listed(fmt->read_options, k))
            continue;
        if ((dir & GIR_MAP_WRITE) && listed(fmt->write_options, k))
            continue;
        return gir_fail(err, GIR_E_ARGUMENT, "option '%s' is not understood when %s %s", k,
                        dir == GIR_MAP_READ ? "reading" : "writing", fmt->name);
    }
    return GIR_OK;
}

bool gir_options_flag(const gir_options *opts, const char *key)
{
    const char *v = gir_options_get(opts, key);
    return v && strcmp(v, "0") != 0 && strcmp(v, "false") != 0 && strcmp(v, "no") != 0;
}

gir_status gir_options_int(const gir_options *opts, const char *key, int64_t dflt, int64_t *out, gir_error *err)
{
    const char *v = gir_options_get(opts, key);
    if (!v) {
        *out = dflt;
        return GIR_OK;
    }
    if (!gir_parse_i64(v, out))
        return gir_fail(err, GIR_E_ARGUMENT, "option %s=%s is not an integer", key, v);
    return GIR_OK;
}

GIR_API void gir_options_set_note_handler(gir_options *o, gir_note_fn fn, void *ctx)
{
    if (o) {
        o->note_fn = fn;
        o->note_ctx = ctx;
    }
}

GIR_API void gir_options_set_progress_handler(gir_options *o, gir_progress_fn fn, void *ctx)
{
    if (o) {
        o->progress_fn = fn;
        o->progress_ctx = ctx;
    }
}

void gir_progress_begin(const gir_options *opts, uint64_t total)
{
    progress = (progress_state){ opts ? opts->progress_fn : NULL, opts ? opts->progress_ctx : NULL, 0, total };
    if (progress.fn)
        progress.fn(progress.ctx, 0, total);
}

void gir_progress_add(uint64_t bytes)
{
    if (!progress.fn)
        return;
    progress.done = bytes > progress.total - progress.done ? progress.total : progress.done + bytes;
    progress.fn(progress.ctx, progress.done, progress.total);
}

void gir_progress_end(bool complete)
{
    if (progress.fn && complete && progress.done != progress.total)
        progress.fn(progress.ctx, progress.total, progress.total);
    progress = (progress_state){ NULL, NULL, 0, 0 };
}

void gir_write_note(const gir_options *opts, const char *fmt, ...)
{
    if (!opts || !opts->note_fn)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = gir_vstrdupf(fmt, ap);
    va_end(ap);
    if (s)
        opts->note_fn(opts->note_ctx, s);
    free(s);
}

gir_status gir_limits_from_options(const gir_options *opts, gir_limits *l, gir_error *err)
{
    gir_limits_default(l);
    for (int i = 0; i < GIR_LIM_COUNT_; i++) {
        const char *key = gir_limit_name((gir_limit_id)i);
        int64_t v;
        TRY(gir_options_int(opts, key, (int64_t)gir_limit_default((gir_limit_id)i), &v, err));
        if (v < 1)
            return gir_fail(err, GIR_E_ARGUMENT, "option %s=%s must be a positive integer", key,
                            gir_options_get(opts, key));
        l->v[i] = (uint64_t)v;
    }
    return GIR_OK;
}

gir_status gir_input_shapes_parse(const char *spec, gir_arena *arena, gir_input_shape **out, size_t *n,
                                  gir_error *err)
{
    char *copy = gir_strdupf("%s", spec);
    if (!copy)
        return gir_nomem(err);
    size_t cap = 0;
    gir_status st = GIR_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ";", &save); item && !st; item = strtok_r(NULL, ";", &save)) {
        char *colon = strrchr(item, ':');
        if (!colon || colon == item) {
            st = gir_fail(err, GIR_E_ARGUMENT, "input-shape=%s: expected NAME:D1,D2,... (e.g. data:1,3,224,224)",
                          spec);
            break;
        }
        *colon = '\0';
        gir_shape s = { .rank = 0 };
        char *save2 = NULL;
        for (char *d = strtok_r(colon + 1, ",", &save2); d; d = strtok_r(NULL, ",", &save2)) {
            int64_t v;
            if (s.rank >= GIR_MAX_RANK || !gir_parse_i64(d, &v) || v < -1 || v == 0) {
                st = gir_fail(err, GIR_E_ARGUMENT,
                              "input-shape=%s: dimensions of '%s' must be positive integers (-1 for unknown), "
                              "at most %d of them", spec, item, GIR_MAX_RANK);
                break;
            }
            s.dims[s.rank++] = v;
        }
        if (st)
            break;
        if (!GIR_GROW((*out), cap, (*n) + 1)) {
            st = gir_nomem(err);
            break;
        }
        (*out)[(*n)].name = gir_arena_strdup(arena, item);
        (*out)[(*n)].shape = s;
        (*out)[(*n)].used = false;
        if (!(*out)[(*n)].name) {
            st = gir_nomem(err);
            break;
        }
        (*n)++;
    }
    free(copy);
    return st;
}
