/* graphconv batch: convert (and check) many models, one JSON report line
 * per model, deterministic sharding, worker threads. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "formats/format.h"
#include "batch.h"

typedef struct job {
    char *input;       /* path as given or walked */
    char *rel;         /* path relative to its root argument: names outputs and shards */
    char *output;      /* NULL until planned */
    const char *from;  /* NULL = detect */
    const char *to;
    gir_options *ropts, *wopts;
    bool check;
    /* results */
    const char *detected;
    gir_status code;
    char *message;
    const char *status; /* "ok", "failed", "dry-run" */
    double wall_ms;
    long peak_rss_kb;
    size_t nodes, opaque;
    char *ops_json;     /* {"Conv": 2, ...} */
    size_t params;
    uint64_t param_elems, param_bytes;
    char *check_json;   /* metrics, or NULL */
    gir_buf notes;      /* JSON array items: reader and writer notes */
} job;

typedef struct batch {
    job *jobs;
    size_t n, cap;
    const char *to;
    const char *outdir;
    gir_options *ropts, *wopts; /* from the command line, copied into each job */
    bool check, dry_run, fail_fast;
    gc_check_spec check_spec; /* --check=structure accepts structural checks */
    double atol, rtol;
    atomic_size_t next;
    atomic_size_t done, failed;
    atomic_bool stop;
    atomic_ullong bytes;
    bool progress;
    pthread_mutex_t progress_lock;
    /* every file put in place in this run, and the job's input that wrote
     * it: two conversions must not write one companion file */
    pthread_mutex_t claim_lock;
    struct claim {
        char *path;
        const char *by;
    } *claimed;
    size_t n_claimed, cap_claimed;
} batch;

typedef struct claim_ctx {
    batch *b;
    const job *j;
} claim_ctx;

/* Records that job j writes path; false (naming the other job's input)
 * when another job of this run wrote it. */
static bool claim_path(void *ctx, const char *path, const char **owner)
{
    claim_ctx *c = ctx;
    batch *b = c->b;
    bool ok = true;
    pthread_mutex_lock(&b->claim_lock);
    for (size_t i = 0; i < b->n_claimed; i++)
        if (strcmp(b->claimed[i].path, path) == 0 && b->claimed[i].by != c->j->input) {
            *owner = b->claimed[i].by;
            ok = false;
        }
    if (ok) {
        char *copy = gir_strdupf("%s", path);
        if (copy && GIR_GROW(b->claimed, b->cap_claimed, b->n_claimed + 1)) {
            b->claimed[b->n_claimed++] = (struct claim){ copy, c->j->input };
            copy = NULL;
        }
        free(copy);
    }
    pthread_mutex_unlock(&b->claim_lock);
    return ok;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static gir_options *options_copy(const gir_options *src)
{
    gir_options *o = gir_options_new();
    for (size_t i = 0; o && i < gir_options_count(src); i++) {
        const char *k = gir_options_key(src, i);
        if (gir_options_set(o, k, gir_options_get(src, k), NULL) != GIR_OK) {
            gir_options_free(o);
            return NULL;
        }
    }
    return o;
}

static job *add_job(batch *b, const char *input, const char *rel)
{
    if (!GIR_GROW(b->jobs, b->cap, b->n + 1))
        return NULL;
    job *j = &b->jobs[b->n];
    memset(j, 0, sizeof *j);
    j->input = gir_strdupf("%s", input);
    j->rel = gir_strdupf("%s", rel);
    j->ropts = options_copy(b->ropts);
    j->wopts = options_copy(b->wopts);
    j->to = b->to;
    j->check = b->check;
    if (!j->input || !j->rel || !j->ropts || !j->wopts)
        return NULL;
    b->n++;
    return j;
}

static void job_free(job *j)
{
    free(j->input);
    free(j->rel);
    free(j->output);
    free(j->message);
    free(j->ops_json);
    free(j->check_json);
    gir_buf_free(&j->notes);
    gir_options_free(j->ropts);
    gir_options_free(j->wopts);
}

/* Files in a directory walk that are models: their format is detected by
 * content, or their extension is a model extension. */
static bool looks_like_model(const char *path)
{
    unsigned char head[GIR_PROBE_BYTES];
    size_t n;
    if (gir_read_head(path, head, sizeof head, &n, NULL) != GIR_OK)
        return false;
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *f = gir_format_at(i);
        if (f->read && f->probe && f->probe(head, n, path) >= 50)
            return true;
    }
    return gir_format_for_extension(path) != NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks root iteratively (an explicit stack of directories), adding models
 * in sorted order so the job list is the same on every machine. */
static bool walk(batch *b, const char *root)
{
    char **stack = NULL;
    size_t ns = 0, cs = 0;
    bool ok = true;
    if (!GIR_GROW(stack, cs, 1))
        return false;
    stack[ns++] = gir_strdupf("%s", "");
    while (ns > 0 && ok) {
        char *rel = stack[--ns];
        char *dir = *rel ? gir_path_join(root, rel) : gir_strdupf("%s", root);
        DIR *d = dir ? opendir(dir) : NULL;
        if (!d) {
            fprintf(stderr, "graphconv: %s: cannot read directory: %s\n", dir ? dir : root, strerror(errno));
            ok = false;
        }
        char **names = NULL;
        size_t nn = 0, cn = 0;
        struct dirent *e;
        while (ok && d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue; /* hidden files, ., .., and our own temporaries */
            if (!GIR_GROW(names, cn, nn + 1) || !(names[nn] = gir_strdupf("%s", e->d_name))) {
                ok = false;
                break;
            }
            nn++;
        }
        if (d)
            closedir(d);
        qsort(names, nn, sizeof *names, cmp_str);
        /* Subdirectories are pushed in reverse so they pop in order. */
        size_t first_dir = ns;
        for (size_t i = 0; ok && i < nn; i++) {
            char *r = *rel ? gir_strdupf("%s/%s", rel, names[i]) : gir_strdupf("%s", names[i]);
            char *p = r ? gir_path_join(root, r) : NULL;
            struct stat st;
            if (!r || !p) {
                ok = false;
            } else if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
                if (GIR_GROW(stack, cs, ns + 1)) {
                    stack[ns++] = r;
                    r = NULL;
                } else {
                    ok = false;
                }
            } else if (S_ISREG(st.st_mode) && looks_like_model(p)) {
                ok = add_job(b, p, r) != NULL;
            }
            free(r);
            free(p);
        }
        for (size_t i = first_dir, k = ns; i + 1 < k; i++, k--) {
            char *t = stack[i];
            stack[i] = stack[k - 1];
            stack[k - 1] = t;
        }
        for (size_t i = 0; i < nn; i++)
            free(names[i]);
        free(names);
        free(dir);
        free(rel);
    }
    while (ns > 0)
        free(stack[--ns]);
    free(stack);
    return ok;
}

static const char *json_str(yajl_val obj, const char *key)
{
    const char *path[] = { key, NULL };
    yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
    return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

static bool manifest_options(yajl_val obj, const char *key, gir_options *opts, const char *where)
{
    const char *path[] = { key, NULL };
    yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
    if (!v)
        return true;
    if (!YAJL_IS_OBJECT(v)) {
        fprintf(stderr, "graphconv: %s: \"%s\" must be an object of strings\n", where, key);
        return false;
    }
    for (size_t i = 0; i < v->u.object.len; i++) {
        yajl_val x = v->u.object.values[i];
        char buf[64];
        const char *s = YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : NULL;
        if (!s && YAJL_IS_INTEGER(x)) {
            snprintf(buf, sizeof buf, "%lld", YAJL_GET_INTEGER(x));
            s = buf;
        } else if (!s && YAJL_IS_TRUE(x)) {
            s = "1";
        } else if (!s && YAJL_IS_FALSE(x)) {
            s = "0";
        }
        if (!s) {
            fprintf(stderr, "graphconv: %s: \"%s\".\"%s\" must be a string, integer or boolean\n", where, key,
                    v->u.object.keys[i]);
            return false;
        }
        if (gir_options_set(opts, v->u.object.keys[i], s, NULL) != GIR_OK)
            return false;
    }
    return true;
}

/* JSON lines: {"input": P, "output": P?, "from": F?, "to": F?, "params": P?,
 * "read_options": {...}?, "write_options": {...}?, "check": bool?} */
static bool read_manifest(batch *b, const char *path)
{
    char *data;
    size_t len;
    gir_error err = GIR_ERROR_INIT;
    if (gir_read_file(path, (size_t)1 << 30, &data, &len, &err) != GIR_OK) {
        gc_report(&err);
        gir_error_clear(&err);
        return false;
    }
    char *dir = gir_path_dirname(path);
    bool ok = dir != NULL;
    size_t lineno = 0;
    for (char *line = data, *next; ok && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p)
            continue;
        char where[512], ebuf[256];
        snprintf(where, sizeof where, "%s:%zu", path, lineno);
        yajl_val obj = yajl_tree_parse(p, ebuf, sizeof ebuf);
        if (!obj || !YAJL_IS_OBJECT(obj)) {
            fprintf(stderr, "graphconv: %s: not a JSON object%s%s [syntax]\n", where, obj ? "" : ": ",
                    obj ? "" : ebuf);
            yajl_tree_free(obj);
            ok = false;
            break;
        }
        static const char *known[] = { "input", "output", "from", "to", "params", "read_options", "write_options", "check" };
        for (size_t i = 0; i < obj->u.object.len && ok; i++) {
            bool found = false;
            for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
                found |= strcmp(obj->u.object.keys[i], known[k]) == 0;
            if (!found) {
                fprintf(stderr, "graphconv: %s: unknown key \"%s\" [schema]\n", where, obj->u.object.keys[i]);
                ok = false;
            }
        }
        const char *in = json_str(obj, "input");
        if (ok && !in) {
            fprintf(stderr, "graphconv: %s: \"input\" (a string) is required [schema]\n", where);
            ok = false;
        }
        if (ok) {
            char *inpath = gir_path_join(dir, in);
            job *j = inpath ? add_job(b, inpath, in) : NULL;
            free(inpath);
            ok = j != NULL;
            const char *s;
            if (ok && (s = json_str(obj, "output")))
                ok = (j->output = gir_path_join(dir, s)) != NULL;
            if (ok && (s = json_str(obj, "from"))) {
                const gir_format *f = gir_format_find(s);
                if (!f) {
                    fprintf(stderr, "graphconv: %s: unknown format '%s'\n", where, s);
                    ok = false;
                } else {
                    j->from = f->name;
                }
            }
            if (ok && (s = json_str(obj, "to"))) {
                const gir_format *f = gir_format_find(s);
                if (!f) {
                    fprintf(stderr, "graphconv: %s: unknown format '%s'\n", where, s);
                    ok = false;
                } else {
                    j->to = f->name;
                }
            }
            if (ok && (s = json_str(obj, "params"))) {
                char *pp = gir_path_join(dir, s);
                ok = pp && gir_options_set(j->ropts, "params", pp, NULL) == GIR_OK;
                free(pp);
            }
            if (ok)
                ok = manifest_options(obj, "read_options", j->ropts, where) &&
                     manifest_options(obj, "write_options", j->wopts, where);
            const char *cp[] = { "check", NULL };
            yajl_val c = yajl_tree_get(obj, cp, yajl_t_any);
            if (ok && c)
                j->check = YAJL_IS_TRUE(c);
        }
        yajl_tree_free(obj);
    }
    free(dir);
    free(data);
    return ok;
}

/* Output paths: -o DIR + the input's relative path with the target's
 * extension; manifest outputs as given.  When two inputs would get the
 * same output (abs.nnp and abs.onnx to ONNX), each of them keeps its own
 * extension in the name (abs.nnp.onnx, abs.onnx.onnx).  Planned over the
 * whole job list, before sharding, so every shard names outputs alike. */
static char *output_for(const batch *b, const job *j, bool keep_ext)
{
    const gir_format *f = gir_format_find(j->to);
    const char *ext = f->extensions && f->extensions[0] ? f->extensions[0] : "";
    char *rel = keep_ext ? gir_strdupf("%s%s", j->rel, ext) : gir_path_with_ext(j->rel, ext);
    char *out = rel ? gir_path_join(b->outdir, rel) : NULL;
    free(rel);
    return out;
}

static bool plan_outputs(batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        job *j = &b->jobs[i];
        if (j->output)
            continue;
        if (!j->to) {
            fprintf(stderr, "graphconv: %s: no target format (give --to, or \"to\" in the manifest)\n", j->input);
            return false;
        }
        if (!b->outdir) {
            fprintf(stderr, "graphconv: no output directory (give -o DIR, or \"output\" in the manifest)\n");
            return false;
        }
        if (!(j->output = output_for(b, j, false)))
            return false;
    }
    bool *clash = calloc(b->n + 1, sizeof *clash);
    if (!clash)
        return false;
    for (size_t i = 0; i < b->n; i++)
        for (size_t k = 0; k < i; k++)
            if (strcmp(b->jobs[i].output, b->jobs[k].output) == 0)
                clash[i] = clash[k] = true;
    bool ok = true;
    for (size_t i = 0; ok && i < b->n; i++) {
        if (!clash[i])
            continue;
        free(b->jobs[i].output);
        ok = (b->jobs[i].output = output_for(b, &b->jobs[i], true)) != NULL;
    }
    free(clash);
    return ok;
}

/* {"Conv": 2, ...} by operator name, so reports are deterministic. */
static char *histogram_json(const gir_graph *g, size_t *opaque)
{
    size_t n;
    gc_op_count *h = gc_histogram(g, false, &n, opaque);
    if (!h)
        return NULL;
    gir_buf out = GIR_BUF_INIT;
    gir_buf_putc(&out, '{');
    for (size_t k = 0; k < n; k++) {
        if (k)
            gir_buf_puts(&out, ", ");
        gc_json_escape(&out, h[k].name);
        gir_buf_printf(&out, ": %zu", h[k].count);
    }
    gir_buf_putc(&out, '}');
    free(h);
    return gir_buf_take(&out);
}

static void show_progress(batch *b)
{
    if (!b->progress)
        return;
    pthread_mutex_lock(&b->progress_lock);
    fprintf(stderr, "\r[%zu/%zu] failed %zu, %.1f MB read ", atomic_load(&b->done), b->n,
            atomic_load(&b->failed), (double)atomic_load(&b->bytes) / 1e6);
    pthread_mutex_unlock(&b->progress_lock);
}

static void add_note(void *ctx, const char *note)
{
    job *j = ctx;
    if (j->notes.len)
        gir_buf_puts(&j->notes, ", ");
    gc_json_escape(&j->notes, note);
}

static void run_job(batch *b, job *j)
{
    gir_options_set_note_handler(j->wopts, add_note, j);
    double t0 = now_ms();
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL, *h = NULL;
    gir_status st = GIR_OK;
    const char *fmt = j->from;
    struct stat sst;
    if (stat(j->input, &sst) == 0)
        atomic_fetch_add(&b->bytes, (unsigned long long)sst.st_size);
    if (!fmt)
        st = gir_detect(j->input, &fmt, NULL, &err);
    j->detected = fmt;
    if (st == GIR_OK)
        st = gir_load(j->input, fmt, j->ropts, &g, &err);
    if (st == GIR_OK) {
        const gir_attr *notes = gir_attrs_find(&g->meta, GIR_META_NOTES);
        for (size_t i = 0; notes && notes->type == GIR_ATTR_STRINGS && i < notes->u.strs.n; i++)
            add_note(j, notes->u.strs.v[i]);
        j->nodes = g->n_nodes;
        j->ops_json = histogram_json(g, &j->opaque);
        gc_param_stats ps = gc_parameters(g);
        j->params = ps.tensors;
        j->param_elems = ps.elements;
        j->param_bytes = ps.bytes;
    }
    if (st == GIR_OK && b->dry_run) {
        /* A dry run converts into a private temporary directory and throws
         * the result away: exactly the checks of a real run, no output. */
        char tmpl[] = "/tmp/graphconv-dry-XXXXXX";
        char *out = mkdtemp(tmpl) ? gir_path_join(tmpl, gir_path_basename(j->output)) : NULL;
        if (!out)
            st = gir_fail(&err, GIR_E_IO, "cannot create a temporary directory for the dry run");
        else
            st = gir_save(g, out, j->to, j->wopts, &err);
        if (out)
            gc_rmtree(tmpl);
        free(out);
        if (st == GIR_OK)
            j->status = "dry-run";
    } else if (st == GIR_OK) {
        char *dir = gir_path_dirname(j->output);
        /* Create the output's directories (mkdir -p). */
        for (char *p = dir ? dir + 1 : NULL; p && *p; p++) {
            if (*p == '/') {
                *p = '\0';
                mkdir(dir, 0777);
                *p = '/';
            }
        }
        if (dir)
            mkdir(dir, 0777);
        free(dir);
        gc_check_spec cs = b->check_spec;
        cs.on = j->check;
        cs.atol = b->atol;
        cs.rtol = b->rtol;
        char *verdict = NULL;
        claim_ctx cc = { b, j };
        gc_written w = { .claim = claim_path, .claim_ctx = &cc };
        st = gc_save_checked(g, j->output, j->to, j->wopts, &cs, &w, &j->check_json, &verdict, &err);
        free(verdict);
        gc_written_free(&w);
    }
    if (st != GIR_OK) {
        j->status = "failed";
        j->code = st;
        j->message = gir_error_format(&err);
        atomic_fetch_add(&b->failed, 1);
        if (b->fail_fast)
            atomic_store(&b->stop, true);
    } else if (!j->status) {
        j->status = "ok";
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    j->peak_rss_kb = ru.ru_maxrss;
    j->wall_ms = now_ms() - t0;
    gir_error_clear(&err);
    gir_graph_free(g);
    gir_graph_free(h);
    atomic_fetch_add(&b->done, 1);
    show_progress(b);
}

static void *worker(void *arg)
{
    batch *b = arg;
    for (;;) {
        if (atomic_load(&b->stop))
            break;
        size_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->n)
            break;
        run_job(b, &b->jobs[i]);
    }
    return NULL;
}

static void report_line(FILE *f, const job *j)
{
    fprintf(f, "{\"input\": ");
    gc_json_string(f, j->input);
    fprintf(f, ", \"output\": ");
    if (j->output)
        gc_json_string(f, j->output);
    else
        fputs("null", f);
    fprintf(f, ", \"from\": ");
    if (j->detected)
        gc_json_string(f, j->detected);
    else
        fputs("null", f);
    fprintf(f, ", \"to\": ");
    gc_json_string(f, j->to ? j->to : "");
    fprintf(f, ", \"status\": \"%s\"", j->status ? j->status : "not-run");
    if (j->status && strcmp(j->status, "failed") == 0) {
        fprintf(f, ", \"code\": \"%s\", \"exit\": %d, \"message\": ", gir_status_name(j->code),
                gir_status_exit_code(j->code));
        gc_json_string(f, j->message ? j->message : "");
    }
    if (j->ops_json)
        fprintf(f, ", \"nodes\": %zu, \"opaque_nodes\": %zu, \"ops\": %s", j->nodes, j->opaque, j->ops_json);
    if (j->ops_json)
        fprintf(f, ", \"parameters\": %zu, \"parameter_elements\": %llu, \"parameter_bytes\": %llu", j->params,
                (unsigned long long)j->param_elems, (unsigned long long)j->param_bytes);
    if (j->check_json)
        fprintf(f, ", \"check\": %s", j->check_json);
    if (j->notes.len)
        fprintf(f, ", \"notes\": [%s]", j->notes.data);
    fprintf(f, ", \"wall_ms\": %.1f, \"peak_rss_kb\": %ld}\n", j->wall_ms, j->peak_rss_kb);
}

/* Removes the temporary files and staging directories killed runs left
 * in dir and finishes their interrupted commits (the library's recovery,
 * which leaves live processes' files alone). */
static void clean_stale(const char *dir)
{
    char *p = gir_path_join(dir, "x");
    if (p)
        gir_outdir_unlock(gir_outdir_lock(p));
    free(p);
}

static int severity(int exit_code)
{
    /* I/O and system errors first, then bad input, unsupported, check. */
    static const int rank[] = { 0, 1, 4, 3, 2, 5 };
    return exit_code >= 0 && exit_code <= 5 ? rank[exit_code] : 6;
}

/* A whole positive... or non-negative number from the environment. */
static bool env_long(const char *name, long *out)
{
    const char *v = getenv(name);
    int64_t x;
    if (!v || !*v || !gir_parse_i64(v, &x) || x < 0 || x > 1000000000)
        return false;
    *out = (long)x;
    return true;
}

/* --shard auto[/N]: this job's shard from the job-array variables of GitLab
 * CI (CI_NODE_INDEX 1..CI_NODE_TOTAL, `parallel: N`), Slurm
 * (SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN by SLURM_ARRAY_TASK_STEP,
 * SLURM_ARRAY_TASK_COUNT tasks) or a Kubernetes indexed Job
 * (JOB_COMPLETION_INDEX 0..N-1; Kubernetes does not export the count: N is
 * given as auto/N).  An N given overrides the environment's count. */
static bool shard_from_env(const char *arg, long *index, long *total)
{
    long given = 0, id, n, lo, step;
    if (arg[4] == '/') {
        char *end;
        given = strtol(arg + 5, &end, 10);
        if (*end || given < 1) {
            gc_usage_error("--shard auto/N takes a shard count N >= 1, not '%s'", arg + 5);
            return false;
        }
    } else if (arg[4]) {
        gc_usage_error("--shard takes I/N, auto or auto/N, not '%s'", arg);
        return false;
    }
    const char *src;
    if (env_long("CI_NODE_INDEX", &id) && env_long("CI_NODE_TOTAL", &n)) {
        src = "CI_NODE_INDEX/CI_NODE_TOTAL";
        *index = id;
        *total = n;
    } else if (env_long("SLURM_ARRAY_TASK_ID", &id) && env_long("SLURM_ARRAY_TASK_COUNT", &n)) {
        src = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT";
        if (!env_long("SLURM_ARRAY_TASK_MIN", &lo))
            lo = 0;
        if (!env_long("SLURM_ARRAY_TASK_STEP", &step) || step < 1)
            step = 1;
        if (id < lo || (id - lo) % step) {
            gc_usage_error("--shard auto: SLURM_ARRAY_TASK_ID=%ld is not in the array from %ld by %ld", id, lo, step);
            return false;
        }
        *index = (id - lo) / step + 1;
        *total = n;
    } else if (env_long("JOB_COMPLETION_INDEX", &id)) {
        src = "JOB_COMPLETION_INDEX";
        if (!given) {
            gc_usage_error("--shard auto: JOB_COMPLETION_INDEX is set but Kubernetes exports no shard count; "
                           "give it as --shard auto/N (N = the Job's completions)");
            return false;
        }
        *index = id + 1;
        *total = given;
    } else {
        gc_usage_error("--shard auto: none of CI_NODE_INDEX/CI_NODE_TOTAL (GitLab), "
                       "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (Slurm) or JOB_COMPLETION_INDEX (Kubernetes, "
                       "with auto/N) is set");
        return false;
    }
    if (given)
        *total = given;
    if (*total < 1 || *index < 1 || *index > *total) {
        gc_usage_error("--shard auto: %s gives shard %ld of %ld", src, *index, *total);
        return false;
    }
    if (gc_verbosity >= 2)
        fprintf(stderr, "graphconv: batch: shard %ld of %ld (from %s)\n", *index, *total, src);
    return true;
}

enum { OPT_SHARD = 256, OPT_DRY, OPT_KEEP, OPT_FAILFAST, OPT_REPORT, OPT_MANIFEST, OPT_ATOL, OPT_RTOL, OPT_CHECK };

int cmd_batch(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "to", required_argument, NULL, 't' },
        { "output-dir", required_argument, NULL, 'o' },
        { "jobs", required_argument, NULL, 'j' },
        { "shard", required_argument, NULL, OPT_SHARD },
        { "dry-run", no_argument, NULL, OPT_DRY },
        { "keep-going", no_argument, NULL, OPT_KEEP },
        { "fail-fast", no_argument, NULL, OPT_FAILFAST },
        { "report", required_argument, NULL, OPT_REPORT },
        { "manifest", required_argument, NULL, OPT_MANIFEST },
        { "check", optional_argument, NULL, OPT_CHECK },
        { "atol", required_argument, NULL, OPT_ATOL },
        { "rtol", required_argument, NULL, OPT_RTOL },
        { "read-option", required_argument, NULL, 'I' },
        { "write-option", required_argument, NULL, 'O' },
        { "force", no_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    batch b;
    memset(&b, 0, sizeof b);
    b.atol = 1e-4;
    b.rtol = 1e-3;
    pthread_mutex_init(&b.progress_lock, NULL);
    pthread_mutex_init(&b.claim_lock, NULL);
    b.ropts = gir_options_new();
    b.wopts = gir_options_new();
    const char *report = NULL, *manifest = NULL;
    long jobs = 1, shard_i = 0, shard_n = 0;
    int rc = GC_EXIT_OK, c;
    if (!b.ropts || !b.wopts) {
        rc = GC_EXIT_IO;
        goto out;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:o:j:I:O:fqh", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!gir_format_find(optarg)) {
                rc = gc_usage_error("unknown format '%s' (see 'graphconv formats')", optarg);
                goto out;
            }
            b.to = gir_format_find(optarg)->name;
            break;
        case 'o': b.outdir = optarg; break;
        case 'j': {
            char *end;
            jobs = strtol(optarg, &end, 10);
            if (*end || jobs < 1 || jobs > 256) {
                rc = gc_usage_error("-j takes a number of workers from 1 to 256, not '%s'", optarg);
                goto out;
            }
            break;
        }
        case OPT_SHARD:
            if (strncmp(optarg, "auto", 4) == 0) {
                if (!shard_from_env(optarg, &shard_i, &shard_n)) {
                    rc = GC_EXIT_USAGE;
                    goto out;
                }
            } else if (sscanf(optarg, "%ld/%ld", &shard_i, &shard_n) != 2 || shard_n < 1 || shard_i < 1 ||
                       shard_i > shard_n) {
                rc = gc_usage_error("--shard takes I/N with 1 <= I <= N, or auto[/N], not '%s'", optarg);
                goto out;
            }
            break;
        case OPT_DRY: b.dry_run = true; break;
        case OPT_KEEP: b.fail_fast = false; break;
        case OPT_FAILFAST: b.fail_fast = true; break;
        case OPT_REPORT: report = optarg; break;
        case OPT_MANIFEST: manifest = optarg; break;
        case OPT_CHECK:
            if (!gc_parse_check_arg(optarg, &b.check_spec)) {
                rc = gc_usage_error("--check takes 'run' (the default) or 'structure', not '%s'", optarg);
                goto out;
            }
            b.check = true;
            break;
        case OPT_ATOL: b.atol = strtod(optarg, NULL); break;
        case OPT_RTOL: b.rtol = strtod(optarg, NULL); break;
        case 'I':
            if (!gc_parse_kv(b.ropts, optarg, "--read-option")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'O':
            if (!gc_parse_kv(b.wopts, optarg, "--write-option")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'f': gir_options_set(b.wopts, "force", "1", NULL); break;
        case 'q': gc_verbosity = 0; break;
        case 'h':
            printf("Usage: graphconv batch [OPTIONS] [INPUT...]\n"
                   "Converts many models: files, directories (walked for model files) and the entries of a\n"
                   "manifest.  Prints one JSON line per model (input, output, formats, status, error code\n"
                   "and message, op histogram, parameters, check metrics, notes, time, memory) and a\n"
                   "summary on stderr.  Exit status: the worst of the models' (0 when all converted).\n"
                   "  -t, --to FORMAT        output format (required unless the manifest names one)\n"
                   "  -o, --output-dir DIR   where outputs go (mirroring the inputs' folders; default: beside)\n"
                   "  --manifest FILE        JSON lines, one model each: {\"input\", \"output\"?, \"from\"?,\n"
                   "                         \"to\"?, \"params\"?, \"read_options\"?, \"write_options\"?, \"check\"?}\n"
                   "  -j, --jobs N           convert N models at a time (1..256, default 1)\n"
                   "  --check[=run|structure]  check each output against its source by running both;\n"
                   "                         =structure also accepts a comparison of graphs and weights\n"
                   "                         when they cannot be run (the report says which was done)\n"
                   "  --atol X, --rtol Y     tolerances of --check (default 1e-4, 1e-3)\n"
                   "  --shard I/N            convert only shard I of N (models split by a hash of their path)\n"
                   "  --shard auto[/N]       the shard from the job-array environment:\n"
                   "                           GitLab CI (parallel: 4): CI_NODE_INDEX of CI_NODE_TOTAL\n"
                   "                             graphconv batch --shard auto -t onnx -o out zoo/\n"
                   "                           Slurm (sbatch --array=0-7): SLURM_ARRAY_TASK_ID minus\n"
                   "                             SLURM_ARRAY_TASK_MIN (by _STEP) of SLURM_ARRAY_TASK_COUNT\n"
                   "                             srun graphconv batch --shard auto -t onnx -o out zoo/\n"
                   "                           Kubernetes indexed Job (completions: 8): JOB_COMPLETION_INDEX,\n"
                   "                             the count given as N: graphconv batch --shard auto/8 ...\n"
                   "  --dry-run              convert into a temporary place and throw the result away\n"
                   "  --keep-going           convert every model whatever fails (the default)\n"
                   "  --fail-fast            stop starting models after the first failure\n"
                   "  --report FILE          write the JSON lines to FILE instead of stdout\n"
                   "  -I, --read-option KEY=VALUE, -O, --write-option KEY=VALUE  as for conversion\n"
                   "  -f, --force            overwrite existing outputs\n"
                   "  -q, --quiet            no summary, no progress\n"
                   "  -h, --help             this help\n");
            goto out;
        default: rc = gc_bad_option(argv); goto out;
        }
    }
    if (optind >= argc && !manifest) {
        rc = gc_usage_error("batch needs input files or directories, or --manifest FILE");
        goto out;
    }
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (!walk(&b, argv[i])) {
                rc = GC_EXIT_IO;
                goto out;
            }
        } else if (!add_job(&b, argv[i], gir_path_basename(argv[i]))) {
            rc = GC_EXIT_IO;
            goto out;
        }
    }
    if (manifest && !read_manifest(&b, manifest)) {
        rc = GC_EXIT_INPUT;
        goto out;
    }
    if (!plan_outputs(&b)) {
        rc = GC_EXIT_USAGE;
        goto out;
    }
    if (shard_n > 0) {
        size_t kept = 0;
        for (size_t i = 0; i < b.n; i++) {
            if (fnv1a(b.jobs[i].rel) % (uint64_t)shard_n == (uint64_t)(shard_i - 1))
                b.jobs[kept++] = b.jobs[i];
            else
                job_free(&b.jobs[i]);
        }
        b.n = kept;
    }
    /* Two jobs writing one output would race: refuse before starting. */
    for (size_t i = 0; i < b.n; i++)
        for (size_t k = 0; k < i; k++)
            if (strcmp(b.jobs[i].output, b.jobs[k].output) == 0) {
                rc = gc_usage_error("%s and %s would both be written to %s", b.jobs[k].input, b.jobs[i].input,
                                    b.jobs[i].output);
                goto out;
            }
    if (b.outdir && !b.dry_run) {
        mkdir(b.outdir, 0777);
        clean_stale(b.outdir);
    }
    b.progress = gc_verbosity >= 1 && isatty(STDERR_FILENO);
    double t0 = now_ms();
    if (jobs > (long)b.n)
        jobs = b.n ? (long)b.n : 1;
    pthread_t *threads = calloc((size_t)jobs, sizeof *threads);
    long started = 0;
    for (; threads && started < jobs - 1; started++)
        if (pthread_create(&threads[started], NULL, worker, &b) != 0)
            break;
    worker(&b);
    for (long i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    if (b.progress)
        fputs("\r\033[K", stderr);

    FILE *rf = stdout;
    if (report && !(rf = fopen(report, "w"))) {
        fprintf(stderr, "graphconv: %s: cannot write the report: %s\n", report, strerror(errno));
        rc = GC_EXIT_IO;
        goto out;
    }
    size_t ok = 0, failed = 0, notrun = 0;
    int worst = 0;
    size_t by_code[GIR_STATUS_COUNT_] = { 0 };
    for (size_t i = 0; i < b.n; i++) {
        const job *j = &b.jobs[i];
        if (!j->status) {
            notrun++;
            continue;
        }
        report_line(rf, j);
        if (strcmp(j->status, "failed") == 0) {
            failed++;
            by_code[j->code]++;
            int e = gir_status_exit_code(j->code);
            if (severity(e) > severity(worst))
                worst = e;
        } else {
            ok++;
        }
    }
    if (rf != stdout && fclose(rf) != 0) {
        fprintf(stderr, "graphconv: %s: cannot write the report\n", report);
        worst = GC_EXIT_IO;
    }
    if (gc_verbosity >= 1) {
        fprintf(stderr, "batch: %zu model%s: %zu %s, %zu failed", b.n, b.n == 1 ? "" : "s", ok,
                b.dry_run ? "would convert" : "converted", failed);
        if (failed) {
            fputs(" (", stderr);
            bool first = true;
            for (int k = 0; k < GIR_STATUS_COUNT_; k++)
                if (by_code[k]) {
                    fprintf(stderr, "%s%s %zu", first ? "" : ", ", gir_status_name((gir_status)k), by_code[k]);
                    first = false;
                }
            fputs(")", stderr);
        }
        if (notrun)
            fprintf(stderr, ", %zu not run (--fail-fast)", notrun);
        fprintf(stderr, " in %.2f s\n", (now_ms() - t0) / 1e3);
    }
    rc = worst;
out:
    for (size_t i = 0; i < b.n; i++)
        job_free(&b.jobs[i]);
    free(b.jobs);
    gir_options_free(b.ropts);
    gir_options_free(b.wopts);
    pthread_mutex_destroy(&b.progress_lock);
    pthread_mutex_destroy(&b.claim_lock);
    for (size_t i = 0; i < b.n_claimed; i++)
        free(b.claimed[i].path);
    free(b.claimed);
    return rc;
}
