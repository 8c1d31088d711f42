/* graphconv check A B: run two models on the same inputs and compare. */
#include "check.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "passes/passes.h"

/* ---- inputs ------------------------------------------------------------------ */

gir_status gc_feed_add(gc_feed *f, const char *arg, gir_error *err)
{
    const char *eq = strchr(arg, '=');
    const char *path = eq ? eq + 1 : arg;
    if (eq == arg || !*path)
        return gir_fail(err, GIR_E_ARGUMENT, "--input takes NAME=FILE.npy or FILE.npy, not '%s'", arg);
    gir_tensor *t;
    gir_status st = gir_npy_read(path, &t, err);
    if (st)
        return st;
    char *name = eq ? gir_strdupf("%.*s", (int)(eq - arg), arg) : NULL;
    char **nn = realloc(f->names, (f->n + 1) * sizeof *nn);
    if (nn)
        f->names = nn;
    gir_tensor **nt = realloc(f->tensors, (f->n + 1) * sizeof *nt);
    if (nt)
        f->tensors = nt;
    if (!nn || !nt || (eq && !name)) {
        free(name);
        gir_tensor_unref(t);
        return gir_nomem(err);
    }
    f->names[f->n] = name;
    f->tensors[f->n] = t;
    f->n++;
    return GIR_OK;
}

void gc_feed_free(gc_feed *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->names[i]);
        gir_tensor_unref(f->tensors[i]);
    }
    free(f->names);
    free(f->tensors);
    memset(f, 0, sizeof *f);
}

/* splitmix64: a small generator with good output for any seed */
static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

gir_status gc_seeded_tensor(const gir_value *v, uint64_t seed, size_t index, gir_tensor **out, gir_error *err)
{
    gir_shape s = v->shape;
    if (s.rank < 0)
        return gir_fail(err, GIR_E_SHAPE, "input '%s' has an unknown rank; give it with --input", v->name);
    bool none = s.rank > 1;
    for (int i = 0; i < s.rank; i++)
        none = none && s.dims[i] < 0;
    if (none) /* a rank known from the consumers only: 1s would not fit */
        return gir_fail(err, GIR_E_SHAPE, "input '%s' has no known dimension (shape %s); give it with --input-shape "
                        "or --input", v->name, gir_shape_str(&s, (char[96]){ 0 }, 96));
    for (int i = 0; i < s.rank; i++)
        if (s.dims[i] < 0)
            s.dims[i] = 1;
    gir_dtype dt = v->dtype;
    if (dt == GIR_DT_UNKNOWN)
        dt = GIR_DT_F32; /* formats that store no input type (MXNet, NNVM) mean float32 */
    gir_tensor *t;
    gir_status st = gir_tensor_create(dt, &s, NULL, 0, &t, err);
    if (st)
        return st;
    unsigned char *p = t->data; /* owned, zero-filled */
    size_t n = (size_t)gir_shape_numel(&s);
    uint64_t state = seed * 0x100000001B3ULL ^ (index + 1) * 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = mix64(&state);
        double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
        int64_t k = (int64_t)(r >> 62);                            /* 0..3 */
        switch (dt) {
        case GIR_DT_F32: ((float *)p)[i] = (float)u; break;
        case GIR_DT_F64: ((double *)p)[i] = u; break;
        case GIR_DT_I8: ((int8_t *)p)[i] = (int8_t)k; break;
        case GIR_DT_I16: ((int16_t *)p)[i] = (int16_t)k; break;
        case GIR_DT_I32: ((int32_t *)p)[i] = (int32_t)k; break;
        case GIR_DT_I64: ((int64_t *)p)[i] = k; break;
        case GIR_DT_U8: ((uint8_t *)p)[i] = (uint8_t)k; break;
        case GIR_DT_U16: ((uint16_t *)p)[i] = (uint16_t)k; break;
        case GIR_DT_U32: ((uint32_t *)p)[i] = (uint32_t)k; break;
        case GIR_DT_U64: ((uint64_t *)p)[i] = (uint64_t)k; break;
        case GIR_DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)(r >> 63); break;
        default:
            gir_tensor_unref(t);
            return gir_fail(err, GIR_E_UNSUPPORTED, "cannot generate %s input '%s'; give it with --input",
                            gir_dtype_name(dt), v->name);
        }
    }
    *out = t;
    return GIR_OK;
}

gir_status gc_feed_session(gir_session *s, const gc_feed *f, uint64_t seed, gir_tensor **used, gir_error *err)
{
    size_t n = gir_session_input_count(s);
    gir_tensor **chosen = calloc(n ? n : 1, sizeof *chosen);
    if (!chosen)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    size_t next = 0;
    for (size_t k = 0; f && st == GIR_OK && k < f->n; k++) {
        size_t i = 0;
        if (f->names[k]) {
            for (i = 0; i < n; i++)
                if (strcmp(gir_value_name(gir_session_input(s, i)), f->names[k]) == 0)
                    break;
            if (i == n)
                st = gir_fail(err, GIR_E_ARGUMENT, "the model has no input named '%s'", f->names[k]);
        } else {
            while (next < n && chosen[next])
                next++;
            if (next == n)
                st = gir_fail(err, GIR_E_ARGUMENT, "more inputs given than the model takes (%zu)", n);
            i = next;
        }
        if (st == GIR_OK) {
            if (chosen[i])
                st = gir_fail(err, GIR_E_ARGUMENT, "input '%s' is given twice",
                              gir_value_name(gir_session_input(s, i)));
            else
                chosen[i] = gir_tensor_ref(f->tensors[k]);
        }
    }
    for (size_t i = 0; st == GIR_OK && i < n; i++)
        if (!chosen[i])
            st = gc_seeded_tensor(gir_session_input(s, i), seed, i, &chosen[i], err);
    for (size_t i = 0; st == GIR_OK && i < n; i++) {
        st = gir_session_set_input(s, i, chosen[i], err);
        if (st)
            gir_err_node(err, gir_value_name(gir_session_input(s, i)));
    }
    for (size_t i = 0; i < n; i++) {
        if (used && st == GIR_OK)
            used[i] = chosen[i];
        else
            gir_tensor_unref(chosen[i]);
    }
    free(chosen);
    return st;
}

/* ---- comparison ------------------------------------------------------------------ */

typedef struct cmp_stats {
    size_t n, mismatches, nan_inf_disagree;
    double max_abs, max_rel, cosine;
} cmp_stats;

static double elem(const void *p, gir_dtype t, size_t i)
{
    switch (t) {
    case GIR_DT_F32: return ((const float *)p)[i];
    case GIR_DT_F64: return ((const double *)p)[i];
    case GIR_DT_I8: return ((const int8_t *)p)[i];
    case GIR_DT_I16: return ((const int16_t *)p)[i];
    case GIR_DT_I32: return ((const int32_t *)p)[i];
    case GIR_DT_I64: return (double)((const int64_t *)p)[i];
    case GIR_DT_U8: case GIR_DT_BOOL: return ((const uint8_t *)p)[i];
    case GIR_DT_U16: return ((const uint16_t *)p)[i];
    case GIR_DT_U32: return ((const uint32_t *)p)[i];
    case GIR_DT_U64: return (double)((const uint64_t *)p)[i];
    default: return 0;
    }
}

/* Can outputs of these types be compared?  The same type, or a bool and
 * a float holding 0/1 (formats without bool, such as nnabla, give those). */
static bool comparable(gir_dtype a, gir_dtype b)
{
    if (a == b)
        return true;
    bool fa = a == GIR_DT_F32 || a == GIR_DT_F64, fb = b == GIR_DT_F32 || b == GIR_DT_F64;
    return (a == GIR_DT_BOOL && fb) || (b == GIR_DT_BOOL && fa);
}

/* Compares b against the reference a (same shape, comparable dtypes; a bool
 * against a float is exact: the float must be 0 or 1 where the bool is). */
static gir_status compare_tensors(gir_tensor *a, gir_tensor *b, const gc_check_opts *o, cmp_stats *cs,
                                  gir_error *err)
{
    memset(cs, 0, sizeof *cs);
    const void *pa, *pb;
    gir_status st = gir_tensor_load(a, &pa, err);
    if (st || (st = gir_tensor_load(b, &pb, err)))
        return st;
    gir_dtype t = gir_tensor_dtype(a), tb = gir_tensor_dtype(b);
    bool exact = !gir_dtype_is_float(t) || !gir_dtype_is_float(tb);
    if (t == GIR_DT_F16 || t == GIR_DT_BF16 || !comparable(t, tb))
        return gir_fail(err, GIR_E_UNSUPPORTED, "comparing %s outputs with %s is not supported", gir_dtype_name(t),
                        gir_dtype_name(tb));
    size_t n = (size_t)gir_shape_numel(gir_tensor_shape(a));
    double dot = 0, na = 0, nb = 0;
    cs->n = n;
    for (size_t i = 0; i < n; i++) {
        double x = elem(pa, t, i), y = elem(pb, tb, i);
        bool xs = isnan(x) || isinf(x), ys = isnan(y) || isinf(y);
        if (xs || ys) {
            /* special values agree when both are NaN, or the same infinity */
            bool same = (isnan(x) && isnan(y)) || (isinf(x) && isinf(y) && (x > 0) == (y > 0));
            if (!same) {
                cs->nan_inf_disagree++;
                cs->mismatches++;
                cs->max_abs = INFINITY;
                cs->max_rel = INFINITY;
            }
            continue;
        }
        double d = fabs(x - y), m = fmax(fabs(x), fabs(y));
        if (d > cs->max_abs)
            cs->max_abs = d;
        if (m > 0 && d / m > cs->max_rel)
            cs->max_rel = d / m;
        if (exact ? d != 0 : d > o->atol + o->rtol * fabs(x))
            cs->mismatches++;
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    cs->cosine = na > 0 && nb > 0 ? dot / (sqrt(na) * sqrt(nb)) : (na == nb ? 1.0 : 0.0);
    return GIR_OK;
}

static void print_stats(FILE *f, const char *what, gir_tensor *t, gir_tensor *tb, const cmp_stats *cs)
{
    char shape[128], types[64];
    gir_shape_str(gir_tensor_shape(t), shape, sizeof shape);
    if (gir_tensor_dtype(t) == gir_tensor_dtype(tb))
        snprintf(types, sizeof types, "%s", gir_dtype_name(gir_tensor_dtype(t)));
    else
        snprintf(types, sizeof types, "%s (%s in B)", gir_dtype_name(gir_tensor_dtype(t)),
                 gir_dtype_name(gir_tensor_dtype(tb)));
    fprintf(f, "%s %s %s: max abs %.3g, max rel %.3g, cosine %.6f, mismatches %zu/%zu (%.4g%%), nan/inf %s",
            what, types, shape, cs->max_abs, cs->max_rel, cs->cosine, cs->mismatches,
            cs->n, cs->n ? 100.0 * (double)cs->mismatches / (double)cs->n : 0.0,
            cs->nan_inf_disagree ? "disagree" : "agree");
    if (cs->nan_inf_disagree)
        fprintf(f, " at %zu", cs->nan_inf_disagree);
    fputc('\n', f);
}

/* Index in b of each of a's session inputs (by name when b's all have
 * namesakes in a, else by position). */
static gir_status match_inputs(gir_session *sa, gir_session *sb, size_t *map, gir_error *err)
{
    size_t na = gir_session_input_count(sa), nb = gir_session_input_count(sb);
    bool by_name = true;
    for (size_t j = 0; j < nb; j++) {
        size_t i;
        for (i = 0; i < na; i++)
            if (strcmp(gir_value_name(gir_session_input(sb, j)), gir_value_name(gir_session_input(sa, i))) == 0)
                break;
        if (i == na)
            by_name = false;
    }
    if (!by_name && na != nb)
        return gir_fail(err, GIR_E_CHECK_FAILED, "the models take %zu and %zu inputs with different names", na, nb);
    for (size_t j = 0; j < nb; j++) {
        size_t i = j;
        if (by_name)
            for (i = 0; i < na; i++)
                if (strcmp(gir_value_name(gir_session_input(sb, j)), gir_value_name(gir_session_input(sa, i))) == 0)
                    break;
        map[j] = i;
    }
    return GIR_OK;
}

/* Pairs b's outputs with a's: by name when every name of a is in b. */
static bool outputs_by_name(const gir_graph *a, const gir_graph *b)
{
    for (size_t i = 0; i < a->n_outputs; i++) {
        const char *nm = a->values[a->outputs[i]]->name;
        size_t j;
        for (j = 0; j < b->n_outputs; j++)
            if (strcmp(b->values[b->outputs[j]]->name, nm) == 0)
                break;
        if (j == b->n_outputs)
            return false;
    }
    return true;
}

/* --per-node: the first node of a (in topological order) with an output
 * that b also has under the same name and that disagrees. */
static gir_status first_divergence(const gir_graph *a, gir_session *sa, gir_session *sb, const gir_graph *b,
                                   const gc_check_opts *o, gir_error *err)
{
    int32_t *order = NULL;
    gir_status st = gir_topo_order(a, &order, err);
    if (st)
        return st;
    size_t shared = 0;
    bool found = false;
    for (size_t oi = 0; st == GIR_OK && !found && oi < a->n_nodes; oi++) {
        const gir_node *n = a->nodes[order[oi]];
        for (size_t k = 0; !found && k < n->n_out; k++) {
            if (n->out[k] < 0)
                continue;
            const char *name = a->values[n->out[k]]->name;
            if (gir_graph_value_index(b, name) < 0)
                continue;
            gir_tensor *ta = gir_session_value(sa, name), *tb = gir_session_value(sb, name);
            if (ta && tb) {
                shared++;
                if (!comparable(gir_tensor_dtype(ta), gir_tensor_dtype(tb)) ||
                    !gir_shape_equal(gir_tensor_shape(ta), gir_tensor_shape(tb))) {
                    char s1[96], s2[96];
                    if (o->out)
                        fprintf(o->out, "first divergence: node '%s' (%s) output '%s' is %s %s in A, %s %s in B\n",
                                n->name, gir_node_op(n), name, gir_dtype_name(gir_tensor_dtype(ta)),
                                gir_shape_str(gir_tensor_shape(ta), s1, sizeof s1),
                                gir_dtype_name(gir_tensor_dtype(tb)),
                                gir_shape_str(gir_tensor_shape(tb), s2, sizeof s2));
                    found = true;
                } else {
                    cmp_stats cs;
                    st = compare_tensors(ta, tb, o, &cs, err);
                    if (st == GIR_OK && cs.mismatches > 0) {
                        found = true;
                        if (o->out) {
                            char what[512];
                            snprintf(what, sizeof what, "first divergence: node '%s' (%s) output '%s'", n->name,
                                     gir_node_op(n), name);
                            print_stats(o->out, what, ta, tb, &cs);
                        }
                    }
                }
            }
            gir_tensor_unref(ta);
            gir_tensor_unref(tb);
        }
    }
    free(order);
    if (st == GIR_OK && !found && o->out) {
        if (shared == 0)
            fprintf(o->out, "per-node: the models share no intermediate value names\n");
        else
            fprintf(o->out, "per-node: none of the %zu shared values diverges\n", shared);
    }
    return st;
}

gir_status gc_check_compare(const gir_graph *a, const gir_graph *b, const gc_check_opts *o, char **metrics_json,
                            gir_error *err)
{
    if (metrics_json)
        *metrics_json = NULL;
    gir_session *sa = NULL, *sb = NULL;
    FILE *devnull = NULL;
    gir_tensor **fed = NULL;
    size_t *map = NULL;
    gir_buf js = GIR_BUF_INIT;
    gir_status st = gir_session_new(a, o->threads, &sa, err);
    if (st) {
        gir_err_replace_message(err, "model A: %s", err && err->message ? err->message : "");
        goto out;
    }
    if ((st = gir_session_new(b, o->threads, &sb, err))) {
        gir_err_replace_message(err, "model B: %s", err && err->message ? err->message : "");
        goto out;
    }
    gir_session_keep_values(sa, o->per_node);
    gir_session_keep_values(sb, o->per_node);
    /* what the models print (LightNet's print) would only interleave with
     * the report: it goes nowhere */
    devnull = fopen("/dev/null", "w");
    if (devnull) {
        gir_session_set_print_stream(sa, devnull);
        gir_session_set_print_stream(sb, devnull);
    }
    size_t na = gir_session_input_count(sa), nb = gir_session_input_count(sb);
    fed = calloc(na ? na : 1, sizeof *fed);
    map = calloc(nb ? nb : 1, sizeof *map);
    if (!fed || !map) {
        st = gir_nomem(err);
        goto out;
    }
    if ((st = gc_feed_session(sa, o->feed, o->seed, fed, err)) || (st = match_inputs(sa, sb, map, err)))
        goto out;
    for (size_t j = 0; j < nb; j++) {
        gir_tensor *in = fed[map[j]], *conv = NULL;
        /* a bool input of A is a 0/1 float input in formats without bool */
        gir_dtype want = gir_session_input(sb, j)->dtype;
        if (gir_tensor_dtype(in) == GIR_DT_BOOL && (want == GIR_DT_F32 || want == GIR_DT_F64)) {
            if ((st = gir_tensor_bool_as_float(in, want, &conv, err)))
                goto out;
            in = conv;
        }
        st = gir_session_set_input(sb, j, in, err);
        gir_tensor_unref(conv);
        if (st) {
            gir_err_replace_message(err, "model B: %s", err && err->message ? err->message : "");
            goto out;
        }
    }
    if ((st = gir_session_run(sa, err))) {
        gir_err_replace_message(err, "model A: %s", err && err->message ? err->message : "");
        goto out;
    }
    if ((st = gir_session_run(sb, err))) {
        gir_err_replace_message(err, "model B: %s", err && err->message ? err->message : "");
        goto out;
    }
    if (a->n_outputs != b->n_outputs) {
        st = gir_fail(err, GIR_E_CHECK_FAILED, "the models have %zu and %zu outputs", a->n_outputs, b->n_outputs);
        goto out;
    }
    bool by_name = outputs_by_name(a, b);
    size_t bad = 0, first_bad = SIZE_MAX;
    gir_buf_puts(&js, "{\"method\": \"run\", \"outputs\": [");
    for (size_t i = 0; st == GIR_OK && i < a->n_outputs; i++) {
        const char *name = a->values[a->outputs[i]]->name;
        size_t j = i;
        if (by_name)
            for (j = 0; j < b->n_outputs; j++)
                if (strcmp(b->values[b->outputs[j]]->name, name) == 0)
                    break;
        gir_tensor *ta = gir_session_output(sa, i), *tb = gir_session_output(sb, j);
        char what[300];
        snprintf(what, sizeof what, "output '%s'", name);
        if (!comparable(gir_tensor_dtype(ta), gir_tensor_dtype(tb)) || !gir_shape_equal(gir_tensor_shape(ta), gir_tensor_shape(tb))) {
            char s1[96], s2[96];
            st = gir_fail(err, GIR_E_CHECK_FAILED, "output '%s' is %s %s in A and %s %s in B", name,
                          gir_dtype_name(gir_tensor_dtype(ta)), gir_shape_str(gir_tensor_shape(ta), s1, sizeof s1),
                          gir_dtype_name(gir_tensor_dtype(tb)), gir_shape_str(gir_tensor_shape(tb), s2, sizeof s2));
            break;
        }
        cmp_stats cs;
        if ((st = compare_tensors(ta, tb, o, &cs, err)))
            break;
        if (o->out)
            print_stats(o->out, what, ta, tb, &cs);
        if (cs.mismatches > 0) {
            bad++;
            if (first_bad == SIZE_MAX)
                first_bad = i;
        }
        gir_buf_printf(&js, "%s{\"name\": ", i ? ", " : "");
        /* names are escaped by the JSON writer of the caller's choice: keep
         * them plain here, replacing characters JSON would need escaped */
        gir_buf_putc(&js, '"');
        for (const char *p = name; *p; p++)
            gir_buf_putc(&js, (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) ? '_' : *p);
        gir_buf_putc(&js, '"');
        gir_buf_printf(&js,
                       ", \"elements\": %zu, \"max_abs\": %.6g, \"max_rel\": %.6g, \"cosine\": %.9f, "
                       "\"mismatches\": %zu, \"nan_inf_disagree\": %zu}",
                       cs.n, isinf(cs.max_abs) ? 1e308 : cs.max_abs, isinf(cs.max_rel) ? 1e308 : cs.max_rel,
                       cs.cosine, cs.mismatches, cs.nan_inf_disagree);
    }
    gir_buf_printf(&js, "], \"atol\": %g, \"rtol\": %g, \"seed\": %llu}", o->atol, o->rtol,
                   (unsigned long long)o->seed);
    if (st == GIR_OK && o->per_node && bad > 0)
        st = first_divergence(a, sa, sb, b, o, err);
    if (st == GIR_OK && bad > 0)
        st = gir_fail(err, GIR_E_CHECK_FAILED, "%zu of %zu outputs differ beyond atol %g + rtol %g (first: '%s')", bad,
                      a->n_outputs, o->atol, o->rtol, a->values[a->outputs[first_bad]]->name);
    if (metrics_json && !js.failed)
        *metrics_json = gir_buf_take(&js);
out:
    gir_buf_free(&js);
    if (fed)
        for (size_t i = 0; i < na; i++)
            gir_tensor_unref(fed[i]);
    free(fed);
    free(map);
    gir_session_free(sa);
    gir_session_free(sb);
    if (devnull)
        fclose(devnull);
    return st;
}

int gc_check_graphs(const gir_graph *a, const gir_graph *b, const gc_check_opts *o)
{
    gir_error err = GIR_ERROR_INIT;
    gir_status st = gc_check_compare(a, b, o, NULL, &err);
    int rc = GC_EXIT_OK;
    if (st) {
        rc = gc_report(&err);
    } else if (o->out) {
        fprintf(o->out, "check passed: %zu output%s agree (atol %g, rtol %g)\n", a->n_outputs,
                a->n_outputs == 1 ? "" : "s", o->atol, o->rtol);
    }
    gir_error_clear(&err);
    return rc;
}

/* ---- the command ------------------------------------------------------------------ */

/* Strict number parsing for options. */
static bool parse_double_opt(const char *s, const char *flag, double *out)
{
    if (!gir_parse_double(s, out) || !(*out >= 0) || isinf(*out)) {
        gc_usage_error("%s takes a non-negative number, not '%s'", flag, s);
        return false;
    }
    return true;
}

static bool parse_int_opt(const char *s, const char *flag, int64_t lo, int64_t hi, int64_t *out)
{
    if (!gir_parse_i64(s, out) || *out < lo || *out > hi) {
        gc_usage_error("%s takes an integer in %lld..%lld, not '%s'", flag, (long long)lo, (long long)hi, s);
        return false;
    }
    return true;
}

int cmd_check(int argc, char **argv)
{
    enum { O_ATOL = 256, O_RTOL, O_SEED, O_INPUT, O_PER_NODE, O_THREADS, O_FROM_A, O_FROM_B, O_PARAMS_A, O_PARAMS_B,
           O_INPUT_SHAPE, O_BATCH, O_INPUT_SHAPE_B, O_BATCH_B, O_READ_B };
    static const struct option longopts[] = {
        { "atol", required_argument, NULL, O_ATOL },
        { "rtol", required_argument, NULL, O_RTOL },
        { "seed", required_argument, NULL, O_SEED },
        { "input", required_argument, NULL, O_INPUT },
        { "per-node", no_argument, NULL, O_PER_NODE },
        { "threads", required_argument, NULL, O_THREADS },
        { "from-a", required_argument, NULL, O_FROM_A },
        { "from-b", required_argument, NULL, O_FROM_B },
        { "params-a", required_argument, NULL, O_PARAMS_A },
        { "params-b", required_argument, NULL, O_PARAMS_B },
        { "input-shape", required_argument, NULL, O_INPUT_SHAPE },
        { "batch-size", required_argument, NULL, O_BATCH },
        { "read-option", required_argument, NULL, 'I' },
        { "input-shape-b", required_argument, NULL, O_INPUT_SHAPE_B },
        { "batch-size-b", required_argument, NULL, O_BATCH_B },
        { "read-option-b", required_argument, NULL, O_READ_B },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    gc_check_opts o = { 1e-4, 1e-3, 0, 1, NULL, false, stdout };
    gc_feed feed = { 0 };
    const char *from[2] = { NULL, NULL };
    gir_options *opts[2] = { gir_options_new(), gir_options_new() };
    gir_graph *g[2] = { NULL, NULL };
    gir_error err = GIR_ERROR_INIT;
    int rc = GC_EXIT_OK, c;
    int64_t v;
    if (!opts[0] || !opts[1]) {
        fputs("graphconv: out of memory\n", stderr);
        rc = GC_EXIT_IO;
        goto out;
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:qh", longopts, NULL)) != -1) {
        switch (c) {
        case O_ATOL:
            if (!parse_double_opt(optarg, "--atol", &o.atol))
                rc = GC_EXIT_USAGE;
            break;
        case O_RTOL:
            if (!parse_double_opt(optarg, "--rtol", &o.rtol))
                rc = GC_EXIT_USAGE;
            break;
        case O_SEED:
            if (parse_int_opt(optarg, "--seed", 0, INT64_MAX, &v))
                o.seed = (uint64_t)v;
            else
                rc = GC_EXIT_USAGE;
            break;
        case O_THREADS:
            if (parse_int_opt(optarg, "--threads", 1, GC_MAX_THREADS, &v))
                o.threads = (int)v;
            else
                rc = GC_EXIT_USAGE;
            break;
        case O_INPUT:
            if (gc_feed_add(&feed, optarg, &err)) {
                rc = gc_report(&err);
                goto out;
            }
            break;
        case O_PER_NODE: o.per_node = true; break;
        case O_FROM_A: from[0] = optarg; break;
        case O_FROM_B: from[1] = optarg; break;
        case O_PARAMS_A: gir_options_set(opts[0], "params", optarg, NULL); break;
        case O_PARAMS_B: gir_options_set(opts[1], "params", optarg, NULL); break;
        case O_INPUT_SHAPE: gir_options_set(opts[0], "input-shape", optarg, NULL); break;
        case O_BATCH: gir_options_set(opts[0], "batch-size", optarg, NULL); break;
        case O_INPUT_SHAPE_B: gir_options_set(opts[1], "input-shape", optarg, NULL); break;
        case O_BATCH_B: gir_options_set(opts[1], "batch-size", optarg, NULL); break;
        case 'I':
        case O_READ_B:
            if (!gc_parse_kv(opts[c == 'I' ? 0 : 1], optarg, c == 'I' ? "--read-option" : "--read-option-b")) {
                rc = GC_EXIT_USAGE;
                goto out;
            }
            break;
        case 'q': gc_verbosity = 0; break;
        case 'h':
            printf("Usage: graphconv check [OPTIONS] A B\n"
                   "Runs both models on the same inputs and compares their outputs (A is the reference).\n"
                   "  --input [NAME=]FILE.npy  an input (by name, or by position); others are seeded\n"
                   "  --seed N                 seed of generated inputs (default 0)\n"
                   "  --atol X, --rtol Y       a mismatch is |b - a| > X + Y * |a| (default 1e-4, 1e-3)\n"
                   "  --per-node               name the first node whose outputs diverge (shared value names)\n"
                   "  --threads N              worker threads (default 1)\n"
                   "  --from-a/--from-b FMT, --params-a/--params-b FILE   per-model format and weights\n"
                   "  --input-shape NAME:D0,.., --batch-size N, -I/--read-option KEY=VALUE   reader\n"
                   "                           options for A; --input-shape-b, --batch-size-b,\n"
                   "                           --read-option-b the same for B\n"
                   "  -q, --quiet              print only errors\n"
                   "Exit status: 0 outputs agree, 4 they differ, 1 usage, 2/3/5 as for conversion.\n");
            goto out;
        default: rc = GC_EXIT_USAGE; goto out;
        }
        if (rc)
            goto out;
    }
    if (argc - optind != 2) {
        rc = gc_usage_error("check needs exactly two model files");
        goto out;
    }
    for (int i = 0; i < 2; i++) {
        if (gc_load(argv[optind + i], from[i], opts[i], &g[i], &err) != GIR_OK) {
            rc = gc_report(&err);
            goto out;
        }
    }
    o.feed = &feed;
    if (gc_verbosity == 0)
        o.out = NULL;
    rc = gc_check_graphs(g[0], g[1], &o);
out:
    gir_error_clear(&err);
    gc_feed_free(&feed);
    for (int i = 0; i < 2; i++) {
        gir_graph_free(g[i]);
        gir_options_free(opts[i]);
    }
    return rc;
}
