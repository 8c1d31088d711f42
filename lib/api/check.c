/* Inputs for runs and the comparison of two models (graphir/check.h):
 * what graphconv's run, check and --check use. */
#include "api.h"
#include "core/elem.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/diff.h"
#include "passes/passes.h"

GIR_API void gir_check_options_init(gir_check_options *o)
{
    memset(o, 0, sizeof *o);
    o->atol = 1e-4;
    o->rtol = 1e-3;
    o->threads = 1;
}

GIR_API void gir_check_result_clear(gir_check_result *r)
{
    if (!r)
        return;
    free(r->verdict);
    free(r->report);
    free(r->json);
    free(r->why);
    memset(r, 0, sizeof *r);
}

/* splitmix64: a small generator with good output for any seed */
static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

GIR_API gir_status gir_seeded_input(const gir_value *v, uint64_t seed, size_t index, gir_tensor **out, gir_error *err)
{
    gir_shape s = v->shape;
    if (s.rank < 0)
        return gir_fail(err, GIR_E_SHAPE, "input '%s' has an unknown rank: its shape or its data must be given", v->name);
    bool none = s.rank > 1;
    for (int i = 0; i < s.rank; i++)
        none = none && s.dims[i] < 0;
    if (none) { /* a rank known from the consumers only: 1s would not fit */
        char text[96];
        return gir_fail(err, GIR_E_SHAPE, "input '%s' has no known dimension (shape %s): its shape or its data must "
                        "be given", v->name, gir_shape_str(&s, text, sizeof text));
    }
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
            return gir_fail(err, GIR_E_UNSUPPORTED, "cannot generate %s input '%s': its data must be given",
                            gir_dtype_name(dt), v->name);
        }
    }
    *out = t;
    return GIR_OK;
}

/* gir_session_feed; used[i] (when not NULL) receives input i's tensor (a new
 * reference) for reuse with another session. */
static gir_status feed_session(gir_session *s, size_t nf, const char *const *names, gir_tensor *const *tensors,
                               uint64_t seed, gir_tensor **used, gir_error *err)
{
    size_t n = gir_session_input_count(s);
    gir_tensor **chosen = calloc(n ? n : 1, sizeof *chosen);
    if (!chosen)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    size_t next = 0;
    for (size_t k = 0; st == GIR_OK && k < nf; k++) {
        size_t i = 0;
        if (names && names[k]) {
            for (i = 0; i < n; i++)
                if (strcmp(gir_value_name(gir_session_input(s, i)), names[k]) == 0)
                    break;
            if (i == n)
                st = gir_fail(err, GIR_E_ARGUMENT, "the model has no input named '%s'", names[k]);
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
                chosen[i] = gir_tensor_ref(tensors[k]);
        }
    }
    for (size_t i = 0; st == GIR_OK && i < n; i++)
        if (!chosen[i])
            st = gir_seeded_input(gir_session_input(s, i), seed, i, &chosen[i], err);
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


/* Can outputs of these types be compared?  The same type, a bool and a
 * float holding 0/1 (formats without bool, such as nnabla, give those), or
 * integers of two widths (nnabla has no integer types: an index read back
 * is int64 where the source said int32), compared exactly by value. */
static bool comparable(gir_dtype a, gir_dtype b)
{
    if (a == b || (gir_dtype_is_int(a) && gir_dtype_is_int(b)))
        return true;
    bool fa = a == GIR_DT_F32 || a == GIR_DT_F64, fb = b == GIR_DT_F32 || b == GIR_DT_F64;
    return (a == GIR_DT_BOOL && fb) || (b == GIR_DT_BOOL && fa);
}

/* Compares b against the reference a (same shape, comparable dtypes; a bool
 * against a float is exact: the float must be 0 or 1 where the bool is). */
static gir_status compare_tensors(gir_tensor *a, gir_tensor *b, const gir_check_options *o, cmp_stats *cs,
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
        double x = gir_elem_as_double(pa, t, i), y = gir_elem_as_double(pb, tb, i);
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

static void print_stats(gir_buf *f, const char *what, gir_tensor *t, gir_tensor *tb, const cmp_stats *cs)
{
    char shape[128], types[64];
    gir_shape_str(gir_tensor_shape(t), shape, sizeof shape);
    if (gir_tensor_dtype(t) == gir_tensor_dtype(tb))
        snprintf(types, sizeof types, "%s", gir_dtype_name(gir_tensor_dtype(t)));
    else
        snprintf(types, sizeof types, "%s (%s in B)", gir_dtype_name(gir_tensor_dtype(t)),
                 gir_dtype_name(gir_tensor_dtype(tb)));
    gir_buf_printf(f, "%s %s %s: max abs %.3g, max rel %.3g, cosine %.6f, mismatches %zu/%zu (%.4g%%), nan/inf %s",
            what, types, shape, cs->max_abs, cs->max_rel, cs->cosine, cs->mismatches,
            cs->n, cs->n ? 100.0 * (double)cs->mismatches / (double)cs->n : 0.0,
            cs->nan_inf_disagree ? "disagree" : "agree");
    if (cs->nan_inf_disagree)
        gir_buf_printf(f, " at %zu", cs->nan_inf_disagree);
    gir_buf_putc(f, '\n');
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

/* What A shows: its outputs, then (when B has more outputs than A) the
 * tensors A's Print nodes print that are not outputs already, in graph
 * order: a target without print returns those as outputs (legalization's
 * print-as-output), under the printed value's name or, for a printed
 * constant or input, the Print node's. */
typedef struct observed {
    size_t n;
    int32_t *value;      /* value index in a */
    const char **alias;  /* the Print node's name, or NULL */
} observed;

static gir_status observe(const gir_graph *a, const gir_graph *b, observed *ob, gir_error *err)
{
    ob->n = 0;
    ob->value = malloc((a->n_outputs + a->n_nodes + 1) * sizeof *ob->value);
    ob->alias = calloc(a->n_outputs + a->n_nodes + 1, sizeof *ob->alias);
    if (!ob->value || !ob->alias)
        return gir_nomem(err);
    for (size_t i = 0; i < a->n_outputs; i++)
        ob->value[ob->n++] = a->outputs[i];
    if (b->n_outputs <= a->n_outputs)
        return GIR_OK;
    for (size_t i = 0; i < a->n_nodes; i++) {
        const gir_node *n = a->nodes[i];
        if (n->op != GIR_OP_Print || n->n_in < 1 || n->in[0] < 0)
            continue;
        bool seen = false;
        for (size_t k = 0; k < ob->n && !seen; k++)
            seen = ob->value[k] == n->in[0];
        if (seen)
            continue;
        ob->alias[ob->n] = n->name;
        ob->value[ob->n++] = n->in[0];
    }
    return GIR_OK;
}

static void observed_free(observed *ob)
{
    free(ob->value);
    free(ob->alias);
}

/* The output of b that shows observable i of a, by name; -1 if none. */
static ptrdiff_t output_named(const gir_graph *a, const gir_graph *b, const observed *ob, size_t i)
{
    const char *nm = a->values[ob->value[i]]->name;
    for (size_t j = 0; j < b->n_outputs; j++) {
        const char *bn = b->values[b->outputs[j]]->name;
        if (strcmp(bn, nm) == 0 || (ob->alias[i] && strcmp(bn, ob->alias[i]) == 0))
            return (ptrdiff_t)j;
    }
    return -1;
}

/* Pairs b's outputs with a's: by name when every name of a is in b. */
static bool outputs_by_name(const gir_graph *a, const gir_graph *b, const observed *ob)
{
    for (size_t i = 0; i < ob->n; i++)
        if (output_named(a, b, ob, i) < 0)
            return false;
    return true;
}

/* --per-node: the first node of a (in topological order) with an output
 * that b also has under the same name and that disagrees. */
static gir_status first_divergence(const gir_graph *a, gir_session *sa, gir_session *sb, const gir_graph *b,
                                   const gir_check_options *o, gir_buf *rep, gir_error *err)
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
                    gir_buf_printf(rep, "first divergence: node '%s' (%s) output '%s' is %s %s in A, %s %s in B\n",
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
                        char what[512];
                        snprintf(what, sizeof what, "first divergence: node '%s' (%s) output '%s'", n->name,
                                 gir_node_op(n), name);
                        print_stats(rep, what, ta, tb, &cs);
                    }
                }
            }
            gir_tensor_unref(ta);
            gir_tensor_unref(tb);
        }
    }
    free(order);
    if (st == GIR_OK && !found) {
        if (shared == 0)
            gir_buf_printf(rep, "per-node: the models share no intermediate value names\n");
        else
            gir_buf_printf(rep, "per-node: none of the %zu shared values diverges\n", shared);
    }
    return st;
}

/* Runs both and compares; the report lines go to rep, the metrics to
 * *metrics_json (when not failed for another reason than a mismatch). */
static gir_status run_both(const gir_graph *a, const gir_graph *b, const gir_check_options *o, gir_buf *rep,
                           char **metrics_json, size_t *compared, double *worst_abs, bool *ran, gir_error *err)
{
    *metrics_json = NULL;
    *compared = 0;
    *worst_abs = 0;
    *ran = false;
    gir_session *sa = NULL, *sb = NULL;
    FILE *devnull = NULL;
    gir_tensor **fed = NULL;
    size_t *map = NULL;
    gir_buf js = GIR_BUF_INIT;
    observed ob = { 0 };
    gir_tensor *printed = NULL;
    gir_status st = gir_session_new(a, o->threads, &sa, err);
    if (st) {
        gir_err_replace_message(err, "model A: %s", err && err->message ? err->message : "");
        goto out;
    }
    if ((st = gir_session_new(b, o->threads, &sb, err))) {
        gir_err_replace_message(err, "model B: %s", err && err->message ? err->message : "");
        goto out;
    }
    gir_session_set_max_elements(sa, o->max_run_elements);
    gir_session_set_max_elements(sb, o->max_run_elements);
    /* printed values of A are read after the run (see observe) */
    bool prints = false;
    for (size_t i = 0; i < a->n_nodes && !prints; i++)
        prints = a->nodes[i]->op == GIR_OP_Print;
    gir_session_keep_values(sa, o->per_node || (prints && b->n_outputs > a->n_outputs));
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
    if ((st = feed_session(sa, o->n_feeds, o->feed_names, o->feed_tensors, o->seed, fed, err)) || (st = match_inputs(sa, sb, map, err)))
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
    gir_session_set_spin(sa, 0); /* A's workers sleep while B runs */
    if ((st = gir_session_run(sb, err))) {
        gir_err_replace_message(err, "model B: %s", err && err->message ? err->message : "");
        goto out;
    }
    *ran = true;
    if ((st = observe(a, b, &ob, err)))
        goto out;
    if (ob.n != b->n_outputs) {
        st = gir_fail(err, GIR_E_CHECK_FAILED, "the models have %zu and %zu outputs", a->n_outputs, b->n_outputs);
        goto out;
    }
    bool by_name = outputs_by_name(a, b, &ob);
    size_t bad = 0, first_bad = SIZE_MAX;
    gir_buf_puts(&js, "{\"method\": \"run\", \"outputs\": [");
    for (size_t i = 0; st == GIR_OK && i < ob.n; i++) {
        const char *name = a->values[ob.value[i]]->name;
        size_t j = by_name ? (size_t)output_named(a, b, &ob, i) : i;
        gir_tensor_unref(printed);
        printed = i < a->n_outputs ? NULL : gir_session_value(sa, name);
        gir_tensor *ta = i < a->n_outputs ? gir_session_output(sa, i) : printed, *tb = gir_session_output(sb, j);
        if (!ta) {
            st = gir_fail(err, GIR_E_INTERNAL, "the value '%s' model A prints was not kept by its run", name);
            break;
        }
        char what[300];
        snprintf(what, sizeof what, i < a->n_outputs ? "output '%s'" : "output '%s' (printed by A)", name);
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
        print_stats(rep, what, ta, tb, &cs);
        (*compared)++;
        if (cs.max_abs > *worst_abs)
            *worst_abs = cs.max_abs;
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
        st = first_divergence(a, sa, sb, b, o, rep, err);
    if (st == GIR_OK && bad > 0)
        st = gir_fail(err, GIR_E_CHECK_FAILED, "%zu of %zu outputs differ beyond atol %g + rtol %g (first: '%s')", bad,
                      ob.n, o->atol, o->rtol, a->values[ob.value[first_bad]]->name);
    if ((st == GIR_OK || bad > 0) && !js.failed)
        *metrics_json = gir_buf_take(&js);
out:
    gir_buf_free(&js);
    gir_tensor_unref(printed);
    observed_free(&ob);
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


GIR_API gir_status gir_session_feed(gir_session *s, size_t n, const char *const *names, gir_tensor *const *tensors,
                                    uint64_t seed, gir_error *err)
{
    return feed_session(s, n, names, tensors, seed, NULL, err);
}

GIR_API gir_status gir_check_models(const gir_graph *a, const gir_graph *b, const gir_check_options *o,
                                    gir_check_result *res, gir_error *err)
{
    memset(res, 0, sizeof *res);
    gir_check_options dflt;
    if (!o) {
        gir_check_options_init(&dflt);
        o = &dflt;
    }
    gir_buf rep = GIR_BUF_INIT;
    size_t compared;
    double worst;
    bool ran;
    gir_status st = run_both(a, b, o, &rep, &res->json, &compared, &worst, &ran, err);
    res->method = ran ? GIR_CHECK_RUN : GIR_CHECK_NONE;
    res->passed = st == GIR_OK;
    if (ran && st == GIR_OK)
        res->verdict = gir_strdupf("ran both models: %zu output%s agree%s (max abs %.3g; atol %g, rtol %g)",
                                   compared, compared == 1 ? "" : "s", compared == 1 ? "s" : "", worst, o->atol,
                                   o->rtol);
    else if (ran)
        res->verdict = gir_strdupf("ran both models: %s", err && err->message ? err->message : "they differ");
    if (rep.len && !rep.failed)
        res->report = gir_buf_take(&rep);
    gir_buf_free(&rep);
    return st;
}

/* Can an error of running a model mean only that the runtime cannot run it
 * (so that comparing structure is the best left)? */
static bool cannot_run(gir_status st)
{
    return st == GIR_E_NO_KERNEL || st == GIR_E_UNSUPPORTED || st == GIR_E_SHAPE || st == GIR_E_PARAMS;
}

/* Gives b's inputs the shapes src's namesakes have where b's are less
 * known (a format that records no shapes read back; the reader of src was
 * given --input-shape). */
static gir_status align_input_shapes(const gir_graph *src, gir_graph *b, gir_error *err)
{
    for (size_t k = 0; k < b->n_inputs; k++) {
        const gir_value *v = b->values[b->inputs[k]];
        const gir_value *s = gir_graph_find_value(src, v->name);
        if (!s || s->kind != GIR_VALUE_INPUT || s->data || v->data || s->shape.rank < 0 ||
            gir_shape_equal(&s->shape, &v->shape))
            continue;
        bool less_known = v->shape.rank < 0;
        for (int d = 0; !less_known && d < v->shape.rank && v->shape.rank == s->shape.rank; d++)
            if (v->shape.dims[d] < 0 && s->shape.dims[d] >= 0)
                less_known = true;
        if (less_known)
            TRY(gir_graph_set_input_shape(b, v->name, &s->shape, err));
    }
    return GIR_OK;
}

/* The verdict and JSON of a check run at shapes the checker chose (the
 * source's inputs had no known dimension) say which. */
static void say_chosen_shapes(gir_check_result *res, const char *chosen)
{
    if (res->verdict) {
        char *v = gir_strdupf("%s; at input shapes the checker chose: %s", res->verdict, chosen);
        if (v) {
            free(res->verdict);
            res->verdict = v;
        }
    }
    size_t len = res->json ? strlen(res->json) : 0;
    if (len > 2 && res->json[len - 1] == '}') {
        char *j = gir_strdupf("%.*s, \"chosen_input_shapes\": \"%s\"}", (int)(len - 1), res->json, chosen);
        if (j) {
            free(res->json);
            res->json = j;
        }
    }
}

GIR_API gir_status gir_check_written(const gir_graph *src, gir_graph *b, const gir_check_options *o,
                                     gir_check_result *res, gir_error *err)
{
    gir_check_options dflt;
    if (!o) {
        gir_check_options_init(&dflt);
        o = &dflt;
    }
    gir_error cerr = GIR_ERROR_INIT;
    gir_graph *a2 = NULL, *b2 = NULL;
    char *chosen = NULL;
    gir_status st = align_input_shapes(src, b, &cerr);
    if (st == GIR_OK)
        st = gir_check_choose_shapes(src, b, o, &a2, &b2, &chosen, &cerr);
    if (st == GIR_OK)
        st = gir_check_models(a2 ? a2 : src, b2 ? b2 : b, o, res, &cerr);
    else
        memset(res, 0, sizeof *res);
    if (chosen)
        say_chosen_shapes(res, chosen);
    free(chosen);
    gir_graph_free(a2);
    gir_graph_free(b2);
    if (res->method == GIR_CHECK_RUN || !cannot_run(st)) {
        if (st && err && err->code == GIR_OK) {
            *err = cerr;
            gir_error_init(&cerr);
        }
        gir_error_clear(&cerr);
        return st;
    }
    /* The runtime cannot run them: compare graphs and weights instead. */
    gir_check_result_clear(res);
    res->method = GIR_CHECK_STRUCTURAL;
    res->why = gir_error_format(&cerr);
    gir_error_clear(&cerr);
    const char *why = res->why ? res->why : "the runtime cannot run them";
    gir_diff_options dopt = { .names = false, .meta = false, .weights = true, .max_report = 5 };
    gir_buf report = GIR_BUF_INIT, m = GIR_BUF_INIT;
    size_t count = 0;
    st = gir_graph_diff(src, b, &dopt, &report, &count, err);
    if (st == GIR_OK && count > 0) {
        char *first = report.data ? strtok(report.data, "\n") : NULL;
        res->verdict = gir_strdupf("structure only (the models were not run): %zu difference%s", count,
                                   count == 1 ? "" : "s");
        st = gir_fail(err, GIR_E_CHECK_FAILED,
                      "the written model differs from the source in %zu place%s (compared structurally: %s); "
                      "first: %s",
                      count, count == 1 ? "" : "s", why, first ? first : "?");
    } else if (st == GIR_OK) {
        res->verdict = gir_strdupf("structure only (the models were not run): graphs and weights match, %zu nodes",
                                   b->n_nodes);
        res->passed = o->allow_structural;
        if (!o->allow_structural)
            st = gir_fail(err, GIR_E_CHECK_FAILED,
                          "the models were not run (%s); their structure and weights match, but a structural "
                          "check was not accepted",
                          why);
    }
    gir_buf_printf(&m, "{\"method\": \"structural\", \"passed\": %s, \"why\": \"", res->passed ? "true" : "false");
    for (const char *p = why; *p; p++)
        gir_buf_putc(&m, (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) ? '_' : *p);
    gir_buf_printf(&m, "\", \"differences\": %zu, \"nodes\": %zu}", count, b->n_nodes);
    if (!m.failed)
        res->json = gir_buf_take(&m);
    gir_buf_free(&m);
    gir_buf_free(&report);
    return st;
}
