/* The body every fuzz target shares: put the input where the reader of its
 * kind expects files, load it, and when that succeeds write the graph to
 * every format that can be written and run it on the reference runtime
 * with small seeded inputs.  Failures are expected (hostile input); crashes,
 * leaks, sanitizer reports, hangs and huge allocations are the findings.
 *
 * Inputs with a companion file (a graph beside its .params, an .nntxt
 * beside its parameter.h5, ...) are one byte string: the graph, the line
 * FUZZ_SPLIT, then the companion's bytes (fuzz/seeds.sh builds such seeds
 * from real files). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#include "core/ir.h"
#include "graphir/graphir.h"
#include "graphir/runtime.h"
#include "io/npy.h"

/* Limits of one run: what a 100 kB file may make the harness do. */
#define FUZZ_MAX_RUN_ELEMS 65536       /* per value, to run the model */
#define FUZZ_MAX_RUN_NODES 256
#define FUZZ_MAX_WEIGHT_BYTES (16u << 20)
#define FUZZ_MAX_WRITE_NODES 2000
#define FUZZ_MAX_WRITE_BYTES (1u << 20)

static char dir[64];

static void write_file(const char *name, const uint8_t *p, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (n && fwrite(p, 1, n, f) != n)
        abort();
    fclose(f);
}

/* Empties the scratch directory (outputs of the last run). */
static void clean_dir(void)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

/* The scratch directory goes when the fuzzer exits (libFuzzer's -runs and
 * -max_total_time end with exit()); a crash leaves it for the report. */
static void remove_dir(void)
{
    clean_dir();
    rmdir(dir);
}

static void ensure_dir(void)
{
    if (dir[0])
        return;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/girfuzz-XXXXXX", t && *t && strlen(t) < 30 ? t : "/tmp");
    if (!mkdtemp(dir))
        abort();
    atexit(remove_dir);
}

static uint64_t weight_bytes(const gir_graph *g)
{
    uint64_t total = 0;
    for (size_t i = 0; i < gir_graph_value_count(g); i++) {
        gir_tensor *t = gir_value_tensor(gir_graph_value(g, i));
        if (t && !gir_add_u64(total, gir_tensor_nbytes(t), &total))
            return UINT64_MAX;
    }
    return total;
}

/* Writes to every format that can be written (a graph too large for
 * that to take well under the time limit under the sanitizers is only
 * read). */
static void write_all(const gir_graph *g)
{
    if (gir_graph_node_count(g) > FUZZ_MAX_WRITE_NODES || weight_bytes(g) > FUZZ_MAX_WRITE_BYTES)
        return;
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    gir_options_set(o, "force", "1", &err);
    gir_options_set(o, "max-bytes", "16777216", &err);
    gir_error_clear(&err);
    for (size_t i = 0; i < gir_format_count(); i++) {
        if (!gir_format_can_write(i))
            continue;
        const char *name = gir_format_name(i);
        char path[160];
        const char *ext = strcmp(name, "nnabla") == 0 ? "nnp" : strcmp(name, "onnx") == 0 ? "onnx" : "json";
        snprintf(path, sizeof path, "%s/out-%s.%s", dir, name, ext);
        gir_save(g, path, name, o, &err);
        gir_error_clear(&err);
    }
    gir_options_free(o);
}

/* Runs g with seeded inputs when every value is small. */
static void run(const gir_graph *g)
{
    if (gir_graph_node_count(g) > FUZZ_MAX_RUN_NODES || weight_bytes(g) > FUZZ_MAX_WEIGHT_BYTES)
        return;
    for (size_t i = 0; i < gir_graph_value_count(g); i++) {
        const gir_shape *s = gir_value_shape(gir_graph_value(g, i));
        int64_t n = gir_shape_numel(s);
        if (n < 0 || n > FUZZ_MAX_RUN_ELEMS)
            return;
    }
    gir_error err = GIR_ERROR_INIT;
    gir_session *s;
    if (gir_session_new(g, 1, &s, &err) != GIR_OK) {
        gir_error_clear(&err);
        return;
    }
    gir_status st = GIR_OK;
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; st == GIR_OK && i < gir_session_input_count(s); i++) {
        const gir_value *v = gir_session_input(s, i);
        gir_tensor *t;
        st = gir_tensor_new(gir_value_dtype(v), gir_value_shape(v), &t, &err);
        if (st)
            break;
        unsigned char *b = t->data;
        for (uint64_t k = 0; k < t->nbytes; k++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            b[k] = (unsigned char)(seed >> 56);
        }
        if (gir_value_dtype(v) == GIR_DT_F32)
            for (uint64_t k = 0; k + 4 <= t->nbytes; k += 4)
                b[k + 3] = (b[k + 3] & 0x80) | 0x3e; /* finite values of modest size */
        st = gir_session_set_input(s, i, t, &err);
        gir_tensor_unref(t);
    }
    if (st == GIR_OK)
        gir_session_run(s, &err);
    gir_error_clear(&err);
    gir_session_free(s);
}

static const uint8_t SPLIT[] = FUZZ_SPLIT;

int gir_fuzz_one(const uint8_t *data, size_t size, const gir_fuzz_kind *k)
{
    ensure_dir();
    clean_dir();
    const uint8_t *second = NULL;
    size_t n1 = size, n2 = 0;
    if (k->companion) {
        /* the split line is required: without it the input is all graph */
        for (size_t i = 0; i + sizeof SPLIT - 1 <= size; i++)
            if (memcmp(data + i, SPLIT, sizeof SPLIT - 1) == 0) {
                n1 = i;
                second = data + i + sizeof SPLIT - 1;
                n2 = size - n1 - (sizeof SPLIT - 1);
                break;
            }
    }
    write_file(k->file, data, n1);
    if (k->companion)
        write_file(k->companion, second ? second : (const uint8_t *)"", n2);
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, k->file);

    gir_error err = GIR_ERROR_INIT;
    if (k->npy) {
        gir_tensor *t;
        if (gir_npy_read(path, &t, &err) == GIR_OK) {
            char out[160];
            snprintf(out, sizeof out, "%s/out.npy", dir);
            gir_npy_save(out, t, true, &err);
            gir_tensor_unref(t);
        }
        gir_error_clear(&err);
        return 0;
    }
    gir_options *o = gir_options_new();
    gir_options_set(o, "max-bytes", "16777216", &err);
    if (k->companion && k->params_option) {
        char cpath[160];
        snprintf(cpath, sizeof cpath, "%s/%s", dir, k->companion);
        gir_options_set(o, "params", cpath, &err);
    }
    gir_error_clear(&err);
    gir_graph *g = NULL;
    if (gir_load(path, k->format, o, &g, &err) == GIR_OK) {
        /* load every tensor, as a conversion does */
        for (size_t i = 0; i < gir_graph_value_count(g); i++) {
            gir_tensor *t = gir_value_tensor(gir_graph_value(g, i));
            const void *d;
            if (t && gir_tensor_nbytes(t) <= FUZZ_MAX_WEIGHT_BYTES && gir_tensor_load(t, &d, &err) == GIR_OK)
                gir_tensor_unload(t);
            gir_error_clear(&err);
        }
        write_all(g);
        run(g);
        gir_graph_free(g);
    }
    gir_error_clear(&err);
    gir_options_free(o);
    clean_dir();
    return 0;
}
