/* graphconv run --profile: where the time of a run goes, per node and per
 * operator type, as tables or as JSON. */
#include "cli.h"

#include "graphir/runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct op_total {
    const char *op;
    size_t nodes;
    double ms;
} op_total;

static int by_ms_desc(const void *a, const void *b)
{
    const gir_profile_entry *x = a, *y = b;
    if (x->total_ms != y->total_ms)
        return x->total_ms < y->total_ms ? 1 : -1;
    return strcmp(x->node, y->node);
}

static int op_by_ms_desc(const void *a, const void *b)
{
    const op_total *x = a, *y = b;
    if (x->ms != y->ms)
        return x->ms < y->ms ? 1 : -1;
    return strcmp(x->op, y->op);
}

/* The entries in execution order and the per-op totals (an op is the
 * node's own op; fused ones are part of it), the profiled runs and
 * 1/runs.  NULL (said on stderr) when out of memory. */
static gir_profile_entry *collect(const gir_session *s, size_t *n, op_total **ops, size_t *n_ops, double *total,
                                  uint64_t *runs, double *per)
{
    *n = gir_session_profile_count(s);
    *n_ops = 0;
    *total = 0;
    gir_profile_entry *e = calloc(*n ? *n : 1, sizeof *e);
    *ops = calloc(*n ? *n : 1, sizeof **ops);
    if (!e || !*ops) {
        free(e);
        free(*ops);
        *ops = NULL;
        fputs("graphconv: out of memory\n", stderr);
        return NULL;
    }
    for (size_t i = 0; i < *n; i++) {
        gir_session_profile_entry(s, i, &e[i]);
        *total += e[i].total_ms;
        size_t k = 0;
        while (k < *n_ops && strcmp((*ops)[k].op, e[i].op) != 0)
            k++;
        if (k == *n_ops)
            (*ops)[(*n_ops)++] = (op_total){ e[i].op, 0, 0 };
        (*ops)[k].nodes++;
        (*ops)[k].ms += e[i].total_ms;
    }
    *runs = *n ? e[0].runs : 0;
    *per = *runs ? 1.0 / (double)*runs : 0;
    return e;
}

int gc_profile_print(const gir_session *s, FILE *f)
{
    size_t n, n_ops;
    op_total *ops;
    double total, per;
    uint64_t runs;
    gir_profile_entry *e = collect(s, &n, &ops, &n_ops, &total, &runs, &per);
    if (!e)
        return GC_EXIT_IO;
    fprintf(f, "profile over %llu run%s: %.3f ms per run in %zu executed nodes\n", (unsigned long long)runs,
            runs == 1 ? "" : "s", total * per, n);
    fprintf(f, "\nper operator type:\n%-24s %6s %12s %7s\n", "op", "nodes", "ms/run", "%");
    qsort(ops, n_ops, sizeof *ops, op_by_ms_desc);
    for (size_t i = 0; i < n_ops; i++)
        fprintf(f, "%-24s %6zu %12.3f %6.1f%%\n", ops[i].op, ops[i].nodes, ops[i].ms * per,
                total > 0 ? 100 * ops[i].ms / total : 0);
    fprintf(f, "\nper node (slowest first):\n%10s %7s %7s  %-28s %s\n", "ms/run", "%", "cum %", "op", "node");
    qsort(e, n, sizeof *e, by_ms_desc);
    double cum = 0;
    for (size_t i = 0; i < n; i++) {
        char op[192];
        snprintf(op, sizeof op, "%s%s%s", e[i].op, e[i].fused[0] ? "+" : "", e[i].fused);
        cum += e[i].total_ms;
        fprintf(f, "%10.3f %6.1f%% %6.1f%%  %-28s %s\n", e[i].total_ms * per, total > 0 ? 100 * e[i].total_ms / total : 0,
                total > 0 ? 100 * cum / total : 0, op, e[i].node);
    }
    free(e);
    free(ops);
    return GC_EXIT_OK;
}

int gc_profile_json(const gir_session *s, const char *model, int threads, FILE *f)
{
    size_t n, n_ops;
    op_total *ops;
    double total, per;
    uint64_t runs;
    gir_profile_entry *e = collect(s, &n, &ops, &n_ops, &total, &runs, &per);
    if (!e)
        return GC_EXIT_IO;
    fputs("{\"model\": ", f);
    gc_json_string(f, model);
    fprintf(f, ", \"threads\": %d, \"runs\": %llu, \"ms_per_run\": %.6f,\n \"nodes\": [", threads,
            (unsigned long long)runs, total * per);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        gc_json_string(f, e[i].node);
        fputs(", \"op\": ", f);
        gc_json_string(f, e[i].op);
        fputs(", \"fused\": [", f);
        for (const char *p = e[i].fused; *p;) {
            const char *q = strchr(p, '+');
            size_t len = q ? (size_t)(q - p) : strlen(p);
            char one[128];
            snprintf(one, sizeof one, "%.*s", (int)len, p);
            if (p != e[i].fused)
                fputs(", ", f);
            gc_json_string(f, one);
            p += len + (q ? 1 : 0);
        }
        fprintf(f, "], \"ms_per_run\": %.6f}", e[i].total_ms * per);
    }
    fputs("\n ],\n \"ops\": [", f);
    qsort(ops, n_ops, sizeof *ops, op_by_ms_desc);
    for (size_t i = 0; i < n_ops; i++) {
        fputs(i ? ",\n  {\"op\": " : "\n  {\"op\": ", f);
        gc_json_string(f, ops[i].op);
        fprintf(f, ", \"nodes\": %zu, \"ms_per_run\": %.6f}", ops[i].nodes, ops[i].ms * per);
    }
    fputs("\n ]}\n", f);
    free(e);
    free(ops);
    return GC_EXIT_OK;
}
