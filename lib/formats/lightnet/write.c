/* Writing LightNet JSON IR that LightNet accepts: every op with exactly its
 * schema's tensors and params, in execution (topological) order, each
 * tensor written once, LightNet's conventions; weights to a companion .wts
 * file (or inline `data`).  The whole graph is checked first and everything
 * LightNet cannot express is reported at once. */
#include "lightnet.h"

#include "io/json.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- a set of strings (names taken in the output) -------------------------- */

typedef struct strset {
    char **slot;
    size_t cap, n;
} strset;

static uint64_t hash_s(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool ss_has(const strset *s, const char *k)
{
    if (!s->cap)
        return false;
    for (size_t i = hash_s(k) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slot[i])
            return false;
        if (strcmp(s->slot[i], k) == 0)
            return true;
    }
}

static bool ss_add(strset *s, const char *k)
{
    if (ss_has(s, k))
        return true;
    if ((s->n + 1) * 2 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        char **ns = calloc(nc, sizeof *ns);
        if (!ns)
            return false;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slot[i])
                continue;
            size_t j = hash_s(s->slot[i]) & (nc - 1);
            while (ns[j])
                j = (j + 1) & (nc - 1);
            ns[j] = s->slot[i];
        }
        free(s->slot);
        s->slot = ns;
        s->cap = nc;
    }
    char *c = gir_strdupf("%s", k);
    if (!c)
        return false;
    size_t j = hash_s(k) & (s->cap - 1);
    while (s->slot[j])
        j = (j + 1) & (s->cap - 1);
    s->slot[j] = c;
    s->n++;
    return true;
}

static void ss_free(strset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slot[i]);
    free(s->slot);
}

/* ---- the op being emitted ----------------------------------------------- */

typedef enum { WP_NUM, WP_INT, WP_STR, WP_BOOL, WP_INTS, WP_NUMS, WP_STRS, WP_BOOLS } wp_type;

typedef struct wpar {
    char *name;
    wp_type t;
    double d;
    int64_t i;
    char *s;
    size_t n;
    int64_t *iv;
    double *dv;
    char **sv;
} wpar;

typedef struct wop {
    char *name, *optype;
    char **in_arg, **in_name, **out_arg, **out_name;
    size_t n_in, n_out, cap_in, cap_out;
    wpar *p;
    size_t n_p, cap_p;
    bool failed;
} wop;

/* How a value without a producer is written. */
typedef enum {
    ST_NONE = 0,
    ST_INPUT,    /* create, from_file, no record: fed by the application */
    ST_NODATA,   /* a weight whose data graphconv does not have: from_file, no record */
    ST_WTS,      /* create, from_file, record in the .wts file */
    ST_INLINE,   /* create with inline data */
    ST_RAN,      /* create with ran (as read from LightNet) */
    ST_ZEROS,    /* zeros op */
    ST_ARANGE,   /* arange op */
} storage;

typedef struct fgroup {
    int32_t rmax, argmax, cast; /* node indices (rmax may be -1) */
    bool done;
} fgroup;

typedef struct wr {
    const gir_options *opts; /* for writer notes */
    const gir_graph *g;
    gir_error *err;
    gir_unsupported *u;
    bool emit;
    bool inline_all, keep_variants, allow_opaque;
    gir_buf buf;
    gir_json_writer jw;
    gir_outfile *out;
    wop op;
    strset opnames, tnames; /* names taken in the output */
    int32_t *order;         /* nodes in output order */
    int32_t *pos;           /* node -> position in order */
    int32_t *cons_start;    /* CSR: value -> consumer nodes */
    int32_t *cons;
    bool *is_output;
    int32_t *root;   /* value -> alias root in the output, -1 not written yet */
    bool *written;   /* value has been written (create emitted or produced) */
    storage *store;  /* value -> how it is written (no producer) */
    int32_t *group_of; /* node -> group index, -1 */
    fgroup *groups;
    size_t n_groups;
    ln_wts_item *wts;
    size_t n_wts, cap_wts;
    int32_t *wts_order; /* values in .wts order */
    int32_t cur;        /* node being written */
} wr;

static gir_status nomem(wr *w)
{
    return gir_nomem(w->err);
}

/* ---- refusals ------------------------------------------------------------ */

static void refuse(wr *w, gir_status code, const char *node, const char *fmt, ...) GIR_PRINTF(4, 5);
static void refuse(wr *w, gir_status code, const char *node, const char *fmt, ...)
{
    if (w->emit)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = gir_vstrdupf(fmt, ap);
    va_end(ap);
    if (s)
        gir_unsupported_add(w->u, code, s, node);
    else
        gir_unsupported_add(w->u, GIR_E_NOMEM, "out of memory", node);
    free(s);
}

/* ---- emitting --------------------------------------------------------- */

static void op_reset(wop *o)
{
    for (size_t i = 0; i < o->n_in; i++) {
        free(o->in_arg[i]);
        free(o->in_name[i]);
    }
    for (size_t i = 0; i < o->n_out; i++) {
        free(o->out_arg[i]);
        free(o->out_name[i]);
    }
    for (size_t i = 0; i < o->n_p; i++) {
        wpar *p = &o->p[i];
        free(p->name);
        free(p->s);
        free(p->iv);
        free(p->dv);
        for (size_t k = 0; p->sv && k < p->n; k++)
            free(p->sv[k]);
        free(p->sv);
    }
    free(o->name);
    free(o->optype);
    o->name = o->optype = NULL;
    o->n_in = o->n_out = o->n_p = 0;
    o->failed = false;
}

static void op_free(wop *o)
{
    op_reset(o);
    free(o->in_arg);
    free(o->in_name);
    free(o->out_arg);
    free(o->out_name);
    free(o->p);
}

static void begin_op(wr *w, const char *name, const char *optype)
{
    op_reset(&w->op);
    if (!w->emit)
        return;
    w->op.name = gir_strdupf("%s", name);
    w->op.optype = gir_strdupf("%s", optype);
    if (!w->op.name || !w->op.optype)
        w->op.failed = true;
}

static void add_t(wr *w, bool in, const char *arg, const char *name)
{
    if (!w->emit)
        return;
    wop *o = &w->op;
    size_t *n = in ? &o->n_in : &o->n_out, *cap = in ? &o->cap_in : &o->cap_out;
    char ***a = in ? &o->in_arg : &o->out_arg, ***nm = in ? &o->in_name : &o->out_name;
    size_t c1 = *cap, c2 = *cap;
    if (!GIR_GROW(*a, c1, *n + 1) || !GIR_GROW(*nm, c2, *n + 1)) {
        o->failed = true;
        return;
    }
    *cap = c1 < c2 ? c1 : c2;
    (*a)[*n] = gir_strdupf("%s", arg);
    (*nm)[*n] = gir_strdupf("%s", name);
    if (!(*a)[*n] || !(*nm)[*n])
        o->failed = true;
    (*n)++;
}

#define IN(arg, name) add_t(w, true, arg, name)
#define OUT(arg, name) add_t(w, false, arg, name)

static wpar *add_p(wr *w, const char *name, wp_type t)
{
    if (!w->emit)
        return NULL;
    wop *o = &w->op;
    if (!GIR_GROW(o->p, o->cap_p, o->n_p + 1)) {
        o->failed = true;
        return NULL;
    }
    wpar *p = &o->p[o->n_p++];
    memset(p, 0, sizeof *p);
    p->t = t;
    if (!(p->name = gir_strdupf("%s", name)))
        o->failed = true;
    return p;
}

static void P_num(wr *w, const char *name, double d)
{
    wpar *p = add_p(w, name, WP_NUM);
    if (p)
        p->d = d;
}

static void P_int(wr *w, const char *name, int64_t i)
{
    wpar *p = add_p(w, name, WP_INT);
    if (p)
        p->i = i;
}

static void P_str(wr *w, const char *name, const char *s)
{
    wpar *p = add_p(w, name, WP_STR);
    if (p && !(p->s = gir_strdupf("%s", s)))
        w->op.failed = true;
}

static void P_bool(wr *w, const char *name, bool b)
{
    wpar *p = add_p(w, name, WP_BOOL);
    if (p)
        p->i = b;
}

static void P_ints(wr *w, const char *name, const int64_t *v, size_t n)
{
    wpar *p = add_p(w, name, WP_INTS);
    if (!p)
        return;
    p->n = n;
    p->iv = malloc((n ? n : 1) * sizeof *p->iv);
    if (!p->iv) {
        w->op.failed = true;
        return;
    }
    memcpy(p->iv, v, n * sizeof *v);
}

static void P_nums(wr *w, const char *name, const double *v, size_t n)
{
    wpar *p = add_p(w, name, WP_NUMS);
    if (!p)
        return;
    p->n = n;
    p->dv = malloc((n ? n : 1) * sizeof *p->dv);
    if (!p->dv) {
        w->op.failed = true;
        return;
    }
    memcpy(p->dv, v, n * sizeof *v);
}

static void P_strs(wr *w, const char *name, const char *const *v, size_t n, bool bools, const int64_t *iv)
{
    wpar *p = add_p(w, name, bools ? WP_BOOLS : WP_STRS);
    if (!p)
        return;
    p->n = n;
    if (bools) {
        p->iv = malloc((n ? n : 1) * sizeof *p->iv);
        if (!p->iv)
            w->op.failed = true;
        else
            memcpy(p->iv, iv, n * sizeof *iv);
        return;
    }
    p->sv = calloc(n ? n : 1, sizeof *p->sv);
    if (!p->sv) {
        w->op.failed = true;
        return;
    }
    for (size_t k = 0; k < n; k++)
        if (!(p->sv[k] = gir_strdupf("%s", v[k])))
            w->op.failed = true;
}

static gir_status drain(wr *w)
{
    if (w->buf.failed)
        return nomem(w);
    gir_status st = gir_outfile_write(w->out, w->buf.data, w->buf.len, w->err);
    w->buf.len = 0;
    return st;
}

static gir_status end_op(wr *w)
{
    if (!w->emit)
        return GIR_OK;
    wop *o = &w->op;
    if (o->failed)
        return nomem(w);
    gir_json_writer *j = &w->jw;
    gir_jw_begin_object(j, true);
    gir_jw_key(j, "name");
    gir_jw_string(j, o->name);
    gir_jw_key(j, "optype");
    gir_jw_string(j, o->optype);
    for (int io = 0; io < 2; io++) {
        gir_jw_key(j, io ? "tensors_out" : "tensors_in");
        size_t n = io ? o->n_out : o->n_in;
        gir_jw_begin_array(j, n > 0);
        for (size_t k = 0; k < n; k++) {
            gir_jw_begin_object(j, false);
            gir_jw_key(j, "arg_name");
            gir_jw_string(j, io ? o->out_arg[k] : o->in_arg[k]);
            gir_jw_key(j, "name");
            gir_jw_string(j, io ? o->out_name[k] : o->in_name[k]);
            gir_jw_end_object(j);
        }
        gir_jw_end_array(j);
    }
    gir_jw_key(j, "params");
    gir_jw_begin_array(j, o->n_p > 0);
    for (size_t k = 0; k < o->n_p; k++) {
        wpar *p = &o->p[k];
        gir_jw_begin_object(j, false);
        gir_jw_key(j, "arg_name");
        gir_jw_string(j, p->name);
        gir_jw_key(j, "value");
        switch (p->t) {
        case WP_NUM: gir_jw_double(j, p->d); break;
        case WP_INT: gir_jw_int(j, p->i); break;
        case WP_STR: gir_jw_string(j, p->s); break;
        case WP_BOOL: gir_jw_bool(j, p->i != 0); break;
        case WP_INTS:
        case WP_NUMS:
        case WP_STRS:
        case WP_BOOLS:
            gir_jw_begin_array(j, false);
            for (size_t q = 0; q < p->n; q++) {
                if (p->t == WP_INTS)
                    gir_jw_int(j, p->iv[q]);
                else if (p->t == WP_NUMS)
                    gir_jw_double(j, p->dv[q]);
                else if (p->t == WP_STRS)
                    gir_jw_string(j, p->sv[q]);
                else
                    gir_jw_bool(j, p->iv[q] != 0);
            }
            gir_jw_end_array(j);
            break;
        }
        gir_jw_end_object(j);
    }
    gir_jw_end_array(j);
    gir_jw_end_object(j);
    if (w->buf.len >= 1 << 16)
        return drain(w);
    return GIR_OK;
}

/* ---- names --------------------------------------------------------------- */

/* A fresh name: for an op (unique among the ops written and not the name
 * of another node; a node may use its own), or for a tensor graphconv adds
 * (taken by no value and no other added tensor). */
static const char *fresh(wr *w, bool op, const char *want, char *buf, size_t n)
{
    if (!w->emit)
        return want;
    strset *taken = op ? &w->opnames : &w->tnames;
    for (unsigned long k = 0;; k++) {
        if (k)
            snprintf(buf, n, "%.400s_%lu", want, k);
        else
            snprintf(buf, n, "%.400s", want);
        if (ss_has(taken, buf))
            continue;
        int32_t other = op ? gir_graph_node_index(w->g, buf) : gir_graph_value_index(w->g, buf);
        if (other < 0 || (op && other == w->cur))
            break;
    }
    if (!ss_add(taken, buf))
        w->op.failed = true;
    return buf;
}

static const char *op_name(wr *w, const char *want, char *buf, size_t n)
{
    return fresh(w, true, want, buf, n);
}

static const char *tensor_name(wr *w, const char *want, char *buf, size_t n)
{
    return fresh(w, false, want, buf, n);
}

/* ---- graph helpers -------------------------------------------------------- */

static gir_value *V(wr *w, int32_t v)
{
    return w->g->values[v];
}

static const gir_node *N(wr *w)
{
    return w->g->nodes[w->cur];
}

static gir_value *in_v(wr *w, size_t k)
{
    return gir_in(w->g, N(w), k);
}

static gir_value *out_v(wr *w, size_t k)
{
    return gir_out(w->g, N(w), k);
}

static size_t n_consumers(wr *w, int32_t v)
{
    return (size_t)(w->cons_start[v + 1] - w->cons_start[v]);
}

static int64_t a_int(const gir_node *n, const char *name, int64_t d)
{
    return gir_attrs_get_int(&n->attrs, name, d);
}

static ptrdiff_t a_ints(const gir_node *n, const char *name, const int64_t **v)
{
    return gir_attrs_get_ints(&n->attrs, name, v);
}

static const char *a_str(const gir_node *n, const char *name, const char *d)
{
    return gir_attrs_get_string(&n->attrs, name, d);
}

static bool shape_known(const gir_value *v)
{
    return v && v->shape.rank >= 0 && gir_shape_is_known(&v->shape);
}

/* Checks every input and output has a known shape of 1..8 axes and a
 * LightNet dtype. */
static bool check_io(wr *w)
{
    const gir_node *n = N(w);
    bool ok = true;
    for (size_t io = 0; io < 2; io++) {
        size_t cnt = io ? n->n_out : n->n_in;
        for (size_t k = 0; k < cnt; k++) {
            gir_value *v = io ? out_v(w, k) : in_v(w, k);
            if (!v)
                continue;
            if (!shape_known(v)) {
                refuse(w, GIR_E_UNSUPPORTED, n->name, "a tensor of unknown shape ('%s'; LightNet needs every shape "
                       "fixed)", v->name);
                ok = false;
            } else if (v->shape.rank < 1 || v->shape.rank > GIR_MAX_RANK) {
                refuse(w, GIR_E_UNSUPPORTED, n->name, "a %d-D tensor ('%s'; LightNet tensors have 1 to 8 dimensions)",
                       v->shape.rank, v->name);
                ok = false;
            }
            if (!ln_dtype_name(v->dtype)) {
                refuse(w, GIR_E_UNSUPPORTED, n->name, "dtype %s ('%s'; LightNet has no such type)",
                       gir_dtype_name(v->dtype), v->name);
                ok = false;
            }
        }
    }
    return ok;
}

static const char *generic_optype(wr *w, const char *optype, char *buf, size_t n)
{
    const gir_attr *m = gir_attrs_find(&N(w)->meta, "lightnet.optype");
    if (w->keep_variants && m && m->type == GIR_ATTR_STRING) {
        const char *variant;
        const ln_op_schema *s = ln_schema_resolve(m->u.s, &variant);
        if (s && strcmp(s->optype, optype) == 0) {
            snprintf(buf, n, "%s", m->u.s);
            return buf;
        }
    }
    return optype;
}

/* The op name for node output: the node's own name. */
static const char *node_opname(wr *w, char *buf, size_t n)
{
    return op_name(w, N(w)->name, buf, n);
}

/* ---- values without a producer: create / zeros / arange ------------------- */

/* Constants with more elements than this go to the .wts file. */
#define LN_INLINE_MAX 4096

static bool name_ok_for_wts(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 511)
        return false;
    for (const char *p = s; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f')
            return false;
    return true;
}

static const gir_attr *vmeta(const gir_value *v, const char *key)
{
    return gir_attrs_find(&v->meta, key);
}


/* Decides how a producer-less value is written; refuses what cannot be. */
static void classify_value(wr *w, int32_t vi)
{
    gir_value *v = V(w, vi);
    const char *node = v->name;
    if (w->is_output[vi] && v->kind != GIR_VALUE_INPUT) {
        refuse(w, GIR_E_UNSUPPORTED, node, "a graph output that no operator computes (LightNet's outputs are the "
               "results of its ops)");
        return;
    }
    if (!shape_known(v)) {
        refuse(w, GIR_E_UNSUPPORTED, node, "a graph input or weight of unknown shape (LightNet's create needs fixed "
               "dims; set them with --batch-size or input-shape)");
        return;
    }
    if (v->shape.rank < 1 || v->shape.rank > GIR_MAX_RANK) {
        refuse(w, GIR_E_UNSUPPORTED, node, "a %d-D graph input or weight (LightNet tensors have 1 to 8 dimensions)",
               v->shape.rank);
        return;
    }
    if (!ln_dtype_name(v->dtype)) {
        refuse(w, GIR_E_UNSUPPORTED, node, "dtype %s (LightNet has no such type)", gir_dtype_name(v->dtype));
        return;
    }
    if (gir_shape_numel(&v->shape) > INT32_MAX) {
        refuse(w, GIR_E_UNSUPPORTED, node, "a tensor of more than 2^31-1 elements (TensorLight counts them in an int)");
        return;
    }
    if (v->kind == GIR_VALUE_INPUT || v->kind == GIR_VALUE_INTERMEDIATE) {
        w->store[vi] = ST_INPUT;
        return;
    }
    gir_tensor *t = v->data;
    if (!t) {
        if (v->kind == GIR_VALUE_CONST)
            refuse(w, GIR_E_UNSUPPORTED, node, "a constant without data");
        w->store[vi] = ST_NODATA;
        return;
    }
    double lo, hi;
    const gir_attr *ot = vmeta(v, "lightnet.optype");
    if (ln_ran_info(t, &lo, &hi)) {
        w->store[vi] = ST_RAN;
        return;
    }
    if (ot && ot->type == GIR_ATTR_STRING && strncmp(ot->u.s, "zeros", 5) == 0) {
        w->store[vi] = ST_ZEROS; /* verified when written */
        return;
    }
    if (ot && ot->type == GIR_ATTR_STRING && strncmp(ot->u.s, "arange", 6) == 0 && vmeta(v, "lightnet.arange")) {
        w->store[vi] = ST_ARANGE;
        return;
    }
    bool wts_type = t->dtype == GIR_DT_F32 || t->dtype == GIR_DT_I8;
    /* Weights go to the .wts file; so do large constants (a legalization
     * that reshapes an FC weight makes one): inline they would be written
     * as JSON doubles, gigabytes of text for AlexNet's classifier. */
    bool large = v->kind == GIR_VALUE_CONST && gir_shape_numel(&t->shape) > LN_INLINE_MAX;
    if ((v->kind == GIR_VALUE_WEIGHT || large) && wts_type && !w->inline_all && name_ok_for_wts(v->name)) {
        w->store[vi] = ST_WTS;
        return;
    }
    /* inline data: every value must come through a JSON double exactly */
    const void *data;
    bool loaded = t->data != NULL;
    gir_error e2 = GIR_ERROR_INIT;
    if (gir_tensor_load(t, &data, &e2) != GIR_OK) {
        refuse(w, e2.code, node, "data that cannot be loaded (%s)", e2.message ? e2.message : "?");
        gir_error_clear(&e2);
        return;
    }
    bool finite = true, exact = true;
    uint64_t cnt = t->nbytes / gir_dtype_size(t->dtype);
    const unsigned char *p = data;
    for (uint64_t i = 0; i < cnt && finite && exact; i++) {
        if (t->dtype == GIR_DT_F32) {
            uint32_t u = gir_le32(p + 4 * i);
            float f;
            memcpy(&f, &u, 4);
            finite = isfinite(f);
        } else if (t->dtype == GIR_DT_F64) {
            uint64_t u = gir_le64(p + 8 * i);
            double d;
            memcpy(&d, &u, 8);
            finite = isfinite(d);
        } else if (t->dtype == GIR_DT_I64) {
            int64_t x = (int64_t)gir_le64(p + 8 * i);
            exact = x >= -(INT64_C(1) << 53) && x <= (INT64_C(1) << 53);
        } else if (t->dtype == GIR_DT_U64) {
            exact = gir_le64(p + 8 * i) <= (UINT64_C(1) << 53);
        }
    }
    if (!loaded)
        gir_tensor_unload(t);
    if (!exact) {
        refuse(w, GIR_E_UNSUPPORTED, node, "64-bit integer data beyond 2^53 (LightNet reads inline data as doubles "
               "and its .wts file holds only float32 and int8)");
        return;
    }
    if (!finite) {
        if (t->dtype == GIR_DT_F32 && name_ok_for_wts(v->name)) {
            w->store[vi] = ST_WTS; /* JSON has no NaN or infinity: bit patterns go to the .wts file */
            return;
        }
        refuse(w, GIR_E_UNSUPPORTED, node, "non-finite %s data (JSON numbers cannot hold NaN or infinity and the .wts "
               "file holds only float32 and int8)", gir_dtype_name(t->dtype));
        return;
    }
    w->store[vi] = ST_INLINE;
}

static double elem_double(gir_dtype dt, const unsigned char *p)
{
    switch (dt) {
    case GIR_DT_F32: {
        uint32_t u = gir_le32(p);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case GIR_DT_F64: {
        uint64_t u = gir_le64(p);
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    case GIR_DT_I64: return (double)(int64_t)gir_le64(p);
    case GIR_DT_U64: return (double)gir_le64(p);
    case GIR_DT_I32: return (int32_t)gir_le32(p);
    case GIR_DT_U32: return gir_le32(p);
    case GIR_DT_I16: return (int16_t)(uint16_t)(p[0] | p[1] << 8);
    case GIR_DT_U16: return (uint16_t)(p[0] | p[1] << 8);
    case GIR_DT_I8: return (int8_t)p[0];
    case GIR_DT_U8: return p[0];
    case GIR_DT_BOOL: return p[0] != 0;
    default: return 0;
    }
}

static bool all_zero(const unsigned char *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static const char *create_optype(wr *w, const gir_value *v, const char *generic)
{
    const gir_attr *ot = vmeta(v, "lightnet.optype");
    if (w->keep_variants && ot && ot->type == GIR_ATTR_STRING) {
        const char *variant;
        const ln_op_schema *s = ln_schema_resolve(ot->u.s, &variant);
        if (s && strcmp(s->optype, generic) == 0)
            return ot->u.s;
    }
    return generic;
}

static gir_status emit_create(wr *w, int32_t vi)
{
    if (w->written[vi])
        return GIR_OK;
    w->written[vi] = true;
    w->root[vi] = vi;
    if (!w->emit)
        return GIR_OK;
    gir_value *v = V(w, vi);
    const gir_attr *mo = vmeta(v, "lightnet.op");
    char nb[512];
    char want[480];
    if (mo && mo->type == GIR_ATTR_STRING)
        snprintf(want, sizeof want, "%s", mo->u.s);
    else
        snprintf(want, sizeof want, "create_%.400s", v->name);
    int32_t saved = w->cur;
    w->cur = -1;
    const char *name = op_name(w, want, nb, sizeof nb);
    w->cur = saved;
    int64_t dims[GIR_MAX_RANK];
    for (int i = 0; i < v->shape.rank; i++)
        dims[i] = v->shape.dims[i];
    const char *dtn = ln_dtype_name(v->dtype);
    storage st = w->store[vi];
    gir_tensor *t = v->data;
    const void *data = NULL;
    bool loaded = t && t->data;
    gir_status s = GIR_OK;
    if (t && (st == ST_ZEROS || st == ST_ARANGE || st == ST_INLINE)) {
        s = gir_tensor_load(t, &data, w->err);
        if (s)
            return s;
    }
    uint64_t cnt = t ? t->nbytes / gir_dtype_size(t->dtype) : 0;
    size_t es = gir_dtype_size(v->dtype);
    if (st == ST_ZEROS && !all_zero(data, t->nbytes))
        st = ST_INLINE;
    if (st == ST_ARANGE) {
        const gir_attr *aa = vmeta(v, "lightnet.arange");
        bool same = aa->type == GIR_ATTR_FLOATS && aa->u.floats.n == 3 && v->shape.rank == 1;
        unsigned char tmp[8];
        for (uint64_t i = 0; same && i < cnt; i++) {
            ln_convert_from_double(tmp, v->dtype, aa->u.floats.v[0] + aa->u.floats.v[2] * (double)i);
            same = memcmp(tmp, (const unsigned char *)data + i * es, es) == 0;
        }
        if (same) {
            begin_op(w, name, create_optype(w, v, "arange"));
            OUT("dst", v->name);
            P_str(w, "dtype", dtn);
            P_num(w, "start", aa->u.floats.v[0]);
            P_num(w, "stop", aa->u.floats.v[1]);
            P_num(w, "step", aa->u.floats.v[2]);
            goto done;
        }
        st = ST_INLINE;
    }
    if (st == ST_ZEROS) {
        begin_op(w, name, create_optype(w, v, "zeros"));
        OUT("dst", v->name);
        P_str(w, "dtype", dtn);
        P_ints(w, "dims", dims, (size_t)v->shape.rank);
        goto done;
    }
    begin_op(w, name, create_optype(w, v, "create"));
    OUT("dst", v->name);
    P_str(w, "dtype", dtn);
    P_ints(w, "dims", dims, (size_t)v->shape.rank);
    double ran[2] = { 0, 0 };
    if (st == ST_RAN) {
        ln_ran_info(t, &ran[0], &ran[1]);
        P_nums(w, "ran", ran, 2);
        const gir_attr *md = vmeta(v, "lightnet.data");
        if (md && md->type == GIR_ATTR_FLOATS && md->u.floats.n)
            P_nums(w, "data", md->u.floats.v, md->u.floats.n);
        else
            P_nums(w, "data", (double[]){ 0 }, 1);
        P_bool(w, "from_file", false);
        goto done;
    }
    const gir_attr *mr = vmeta(v, "lightnet.ran");
    if (st != ST_INLINE && mr && mr->type == GIR_ATTR_FLOATS && mr->u.floats.n == 2 &&
        mr->u.floats.v[0] <= mr->u.floats.v[1])
        P_nums(w, "ran", mr->u.floats.v, 2); /* from_file: LightNet ignores ran */
    else
        P_nums(w, "ran", ran, 2);
    if (st == ST_INLINE) {
        if (all_zero(data, t->nbytes)) {
            P_nums(w, "data", (double[]){ 0 }, 1);
        } else {
            double *d = malloc((cnt ? cnt : 1) * sizeof *d);
            if (!d) {
                s = nomem(w);
                goto out;
            }
            for (uint64_t i = 0; i < cnt; i++)
                d[i] = elem_double(v->dtype, (const unsigned char *)data + i * es);
            P_nums(w, "data", d, (size_t)cnt);
            free(d);
        }
        P_bool(w, "from_file", false);
    } else {
        const gir_attr *md = vmeta(v, "lightnet.data");
        if (md && md->type == GIR_ATTR_FLOATS && md->u.floats.n)
            P_nums(w, "data", md->u.floats.v, md->u.floats.n);
        else
            P_nums(w, "data", (double[]){ 0 }, 1);
        P_bool(w, "from_file", true);
        if (st == ST_WTS) {
            if (!GIR_GROW(w->wts, w->cap_wts, w->n_wts + 1)) {
                s = nomem(w);
                goto out;
            }
            w->wts[w->n_wts++] = (ln_wts_item){ v->name, t };
        }
    }
done:
    s = end_op(w);
out:
    if (t && !loaded)
        gir_tensor_unload(t);
    return s;
}

/* Writes the creates of a node's producer-less inputs before the node. */
static gir_status emit_inputs(wr *w)
{
    const gir_node *n = N(w);
    for (size_t k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0 || V(w, n->in[k])->producer >= 0)
            continue;
        gir_status st = emit_create(w, n->in[k]);
        if (st)
            return st;
    }
    return GIR_OK;
}

/* ---- operators -------------------------------------------------------------- */

static void mark(wr *w, int32_t v, int32_t root)
{
    w->written[v] = true;
    w->root[v] = root < 0 ? v : root;
}

static gir_status node_done(wr *w)
{
    const gir_node *n = N(w);
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !w->written[n->out[k]])
            mark(w, n->out[k], -1);
    return end_op(w);
}

/* A zero bias of `len` elements for a conv without one. */
static const char *zero_bias(wr *w, gir_dtype dt, int64_t len, char *tb, size_t tn)
{
    char want[480], nb[512];
    snprintf(want, sizeof want, "%.400s_bias", N(w)->name);
    const char *tname = tensor_name(w, want, tb, tn);
    if (!w->emit)
        return tname;
    int32_t saved = w->cur;
    const char *oname = op_name(w, want, nb, sizeof nb);
    begin_op(w, oname, "create");
    OUT("dst", tname);
    P_str(w, "dtype", ln_dtype_name(dt));
    P_ints(w, "dims", &len, 1);
    P_nums(w, "ran", (double[]){ 0, 0 }, 2);
    P_nums(w, "data", (double[]){ 0 }, 1);
    P_bool(w, "from_file", false);
    w->cur = saved;
    if (end_op(w) != GIR_OK)
        w->op.failed = true;
    return tname;
}

static bool same_dtype_inputs(wr *w)
{
    const gir_node *n = N(w);
    gir_value *x = in_v(w, 0);
    for (size_t k = 1; k < n->n_in; k++) {
        gir_value *v = in_v(w, k);
        if (v && v->dtype != x->dtype) {
            refuse(w, GIR_E_UNSUPPORTED, n->name, "%s on inputs of different dtypes (%s and %s)", gir_op_name(n->op),
                   gir_dtype_name(x->dtype), gir_dtype_name(v->dtype));
            return false;
        }
    }
    return true;
}

/* Spatial attributes of a 2-D window op: kernel, strides, dilations, pads
 * (explicit, or from auto_pad the ONNX way). */
typedef struct win {
    int64_t k[2], s[2], d[2], p[4];
} win;

static bool get_win(wr *w, win *o, const int64_t *kdefault)
{
    const gir_node *n = N(w);
    const int64_t *v;
    ptrdiff_t c = a_ints(n, "kernel_shape", &v);
    if (c == 2) {
        o->k[0] = v[0];
        o->k[1] = v[1];
    } else if (c < 0 && kdefault) {
        o->k[0] = kdefault[0];
        o->k[1] = kdefault[1];
    } else {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with a %td-D kernel_shape (LightNet's window ops are 2-D)",
               gir_op_name(n->op), c);
        return false;
    }
    static const char *const keys[] = { "strides", "dilations" };
    for (int q = 0; q < 2; q++) {
        int64_t *dst = q ? o->d : o->s;
        c = a_ints(n, keys[q], &v);
        if (c == 2) {
            dst[0] = v[0];
            dst[1] = v[1];
        } else if (c < 0) {
            dst[0] = dst[1] = 1;
        } else {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with %td %s (LightNet's window ops are 2-D)",
                   gir_op_name(n->op), c, keys[q]);
            return false;
        }
    }
    c = a_ints(n, "pads", &v);
    if (c == 4) {
        memcpy(o->p, v, sizeof o->p);
    } else if (c < 0) {
        memset(o->p, 0, sizeof o->p);
    } else {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with %td pads", gir_op_name(n->op), c);
        return false;
    }
    const char *ap = a_str(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0) {
        if (strcmp(ap, "VALID") != 0 && strcmp(ap, "SAME_UPPER") != 0 && strcmp(ap, "SAME_LOWER") != 0) {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with auto_pad=%s", gir_op_name(n->op), ap);
            return false;
        }
        gir_value *x = in_v(w, 0);
        for (int ax = 0; ax < 2; ax++)
            ln_autopad_conv(ap, x->shape.dims[2 + ax], o->k[ax], o->s[ax], o->d[ax], &o->p[ax], &o->p[2 + ax]);
    }
    for (int i = 0; i < 4; i++)
        if (o->p[i] < 0 || (i < 2 && (o->k[i] < 1 || o->s[i] < 1 || o->d[i] < 1))) {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with a negative padding or a non-positive kernel, stride or "
                   "dilation", gir_op_name(n->op));
            return false;
        }
    return true;
}

/* The autopad/padding params: LightNet's own autopad when the node came
 * from LightNet with one and it still yields these pads, else NOTSET. */
static void pad_params(wr *w, const win *o, bool pool)
{
    const gir_node *n = N(w);
    const gir_attr *ma = gir_attrs_find(&n->meta, "lightnet.autopad");
    const gir_attr *mp = gir_attrs_find(&n->meta, "lightnet.padding");
    if (ma && ma->type == GIR_ATTR_STRING && (strcmp(ma->u.s, "VALID") == 0 || strcmp(ma->u.s, "SAME_UPPER") == 0 ||
                                              strcmp(ma->u.s, "SAME_LOWER") == 0) &&
        mp && mp->type == GIR_ATTR_INTS && mp->u.ints.n == 4 && n->op != GIR_OP_ConvTranspose) {
        gir_value *x = in_v(w, 0);
        int64_t p[4];
        for (int ax = 0; ax < 2; ax++)
            ln_autopad_conv(ma->u.s, pool ? x->shape.dims[ax] : x->shape.dims[2 + ax], o->k[ax], o->s[ax], o->d[ax],
                            &p[ax], &p[2 + ax]);
        if (memcmp(p, o->p, sizeof p) == 0) {
            P_ints(w, "padding", mp->u.ints.v, 4);
            P_str(w, "autopad", ma->u.s);
            return;
        }
    }
    P_ints(w, "padding", o->p, 4);
    P_str(w, "autopad", ma && ma->type == GIR_ATTR_STRING && strcmp(ma->u.s, "NOTSET") != 0 &&
                                strcmp(ma->u.s, "VALID") != 0 && strncmp(ma->u.s, "SAME_", 5) != 0
                            ? ma->u.s
                            : "NOTSET");
}

static bool check_out_shape(wr *w, const int64_t *want)
{
    gir_value *y = out_v(w, 0);
    for (int i = 0; i < 4; i++)
        if (y->shape.dims[i] != want[i]) {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, N(w)->name, "%s whose output shape LightNet computes differently "
                   "(dimension %d: %lld, LightNet %lld)", gir_op_name(N(w)->op), i, (long long)y->shape.dims[i],
                   (long long)want[i]);
            return false;
        }
    return true;
}

static int64_t lw_out(int64_t in, int64_t pad, int64_t k, int64_t s, int64_t d)
{
    int64_t span = (k - 1) * d + 1;
    return in + pad < span ? 0 : (in + pad - span) / s + 1;
}

static gir_status w_conv(wr *w)
{
    const gir_node *n = N(w);
    bool tr = n->op == GIR_OP_ConvTranspose;
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *wt = in_v(w, 1), *b = in_v(w, 2), *y = out_v(w, 0);
    if (x->shape.rank != 4 || wt->shape.rank != 4) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s on %d-D data (LightNet's %s is 2-D, NCHW)", gir_op_name(n->op),
               x->shape.rank, tr ? "deconv2d" : "conv2d");
        return GIR_OK;
    }
    win o;
    if (!get_win(w, &o, &wt->shape.dims[2]))
        return GIR_OK;
    int64_t group = a_int(n, "group", 1);
    int64_t opad[2] = { 0, 0 };
    const int64_t *v;
    if (tr && a_ints(n, "output_padding", &v) == 2) {
        opad[0] = v[0];
        opad[1] = v[1];
    }
    int64_t want[4];
    if (tr) {
        if (a_ints(n, "output_shape", &v) >= 0 && strcmp(a_str(n, "auto_pad", "NOTSET"), "NOTSET") == 0) {
            /* pads follow from output_shape (ONNX): take them from the output */
        }
        if (strcmp(a_str(n, "auto_pad", "NOTSET"), "NOTSET") != 0 || a_ints(n, "output_shape", &v) >= 0) {
            /* derive the pads from the output shape, SAME_UPPER split */
            for (int ax = 0; ax < 2; ax++) {
                int64_t total = o.s[ax] * (x->shape.dims[2 + ax] - 1) + opad[ax] + (o.k[ax] - 1) * o.d[ax] + 1 -
                                y->shape.dims[2 + ax];
                if (total < 0) {
                    refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "ConvTranspose whose output_shape needs negative padding");
                    return GIR_OK;
                }
                bool lower = strcmp(a_str(n, "auto_pad", "NOTSET"), "SAME_LOWER") == 0;
                o.p[ax] = lower ? total - total / 2 : total / 2;
                o.p[2 + ax] = total - o.p[ax];
            }
        }
        want[0] = x->shape.dims[0];
        want[1] = wt->shape.dims[1] * group;
        for (int ax = 0; ax < 2; ax++)
            want[2 + ax] = o.s[ax] * (x->shape.dims[2 + ax] - 1) + opad[ax] + (o.k[ax] - 1) * o.d[ax] + 1 -
                           (o.p[ax] + o.p[2 + ax]);
    } else {
        want[0] = x->shape.dims[0];
        want[1] = wt->shape.dims[0];
        for (int ax = 0; ax < 2; ax++)
            want[2 + ax] = lw_out(x->shape.dims[2 + ax], o.p[ax] + o.p[2 + ax], o.k[ax], o.s[ax], o.d[ax]);
    }
    if (!check_out_shape(w, want))
        return GIR_OK;
    if (b && (b->shape.rank != 1 || b->shape.dims[0] != want[1])) {
        refuse(w, GIR_E_UNSUPPORTED, n->name, "%s with a bias that is not 1-D of the output channels",
               gir_op_name(n->op));
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char tb[512], nb[512], ob[64];
    const char *bias = b ? b->name : zero_bias(w, x->dtype, want[1], tb, sizeof tb);
    begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, tr ? "deconv2d" : "conv2d", ob, sizeof ob));
    IN("src", x->name);
    IN("weight", wt->name);
    IN("bias", bias);
    OUT("dst", y->name);
    P_int(w, "group", group);
    P_ints(w, "size", o.k, 2);
    P_ints(w, "stride", o.s, 2);
    if (tr) {
        const gir_attr *od = gir_attrs_find(&n->meta, "lightnet.output_dims");
        int64_t zero[4] = { 0, 0, 0, 0 };
        bool od_ok = od && od->type == GIR_ATTR_INTS && od->u.ints.n == 4;
        if (od_ok)
            for (int i = 0; i < 4; i++)
                if (od->u.ints.v[i] > 0 && od->u.ints.v[i] != want[i])
                    od_ok = false;
        P_ints(w, "output_dims", od_ok ? od->u.ints.v : zero, 4);
        P_ints(w, "padding", o.p, 4);
        P_ints(w, "output_padding", opad, 2);
        P_ints(w, "dilation", o.d, 2);
        P_str(w, "autopad", "NOTSET");
    } else {
        P_ints(w, "dilation", o.d, 2);
        pad_params(w, &o, false);
    }
    return node_done(w);
}

static gir_status w_pool(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    bool global = n->op == GIR_OP_GlobalMaxPool || n->op == GIR_OP_GlobalAveragePool;
    bool maxp = n->op == GIR_OP_MaxPool || n->op == GIR_OP_GlobalMaxPool;
    if (x->shape.rank != 4) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s on %d-D data (LightNet's pooling is 2-D, NCHW)",
               gir_op_name(n->op), x->shape.rank);
        return GIR_OK;
    }
    if (n->n_out > 1 && n->out[1] >= 0 && (n_consumers(w, n->out[1]) || w->is_output[n->out[1]])) {
        refuse(w, GIR_E_UNSUPPORTED, n->name, "MaxPool with its Indices output used");
        return GIR_OK;
    }
    win o;
    if (global) {
        o = (win){ { x->shape.dims[2], x->shape.dims[3] }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 } };
    } else {
        if (!get_win(w, &o, NULL))
            return GIR_OK;
        if (o.d[0] != 1 || o.d[1] != 1) {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "MaxPool with dilations other than 1");
            return GIR_OK;
        }
        if (!maxp && a_int(n, "count_include_pad", 0) && (o.p[0] || o.p[1] || o.p[2] || o.p[3])) {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "AveragePool with count_include_pad=1 and padding (LightNet's "
                   "average excludes the padding)");
            return GIR_OK;
        }
    }
    int64_t want[4] = { x->shape.dims[0], x->shape.dims[1], 0, 0 };
    for (int ax = 0; ax < 2; ax++)
        want[2 + ax] = lw_out(x->shape.dims[2 + ax], o.p[ax] + o.p[2 + ax], o.k[ax], o.s[ax], 1);
    if (!check_out_shape(w, want))
        return GIR_OK; /* e.g. ceil_mode=1 where it matters */
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64];
    begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, maxp ? "maxpool2d" : "avgpool2d", ob, sizeof ob));
    IN("src", x->name);
    OUT("dst", y->name);
    P_ints(w, "size", o.k, 2);
    P_ints(w, "stride", o.s, 2);
    pad_params(w, &o, true);
    return node_done(w);
}

/* One-input one-output ops without params (relu, sigmoid, forward). */
static gir_status w_plain(wr *w, const char *optype, bool alias)
{
    if (!check_io(w))
        return GIR_OK;
    const gir_node *n = N(w);
    if (n->op == GIR_OP_Dropout && a_int(n, "training_mode", 0)) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Dropout with training_mode=1");
        return GIR_OK;
    }
    if (n->n_out > 1)
        for (size_t k = 1; k < n->n_out; k++)
            if (n->out[k] >= 0 && (n_consumers(w, n->out[k]) || w->is_output[n->out[k]])) {
                refuse(w, GIR_E_UNSUPPORTED, n->name, "%s with its second output used", gir_op_name(n->op));
                return GIR_OK;
            }
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64];
    begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, optype, ob, sizeof ob));
    IN("src", in_v(w, 0)->name);
    OUT("dst", out_v(w, 0)->name);
    if (alias)
        mark(w, n->out[0], w->root[n->in[0]]);
    return node_done(w);
}

/* A float param read through LightNet's float slot: the value read from
 * LightNet when it still maps to `canon`, else canon itself. */
static bool float_param(wr *w, const char *pname, double canon, const char *meta)
{
    const gir_node *n = N(w);
    if (!(canon >= FLT_MIN) || !(canon <= FLT_MAX)) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with %s=%g (LightNet reads its `%s` as a float clamped to "
               "[1.18e-38, 3.4e38])", gir_op_name(n->op), n->op == GIR_OP_LeakyRelu ? "alpha" : "epsilon", canon,
               pname);
        return false;
    }
    const gir_attr *m = gir_attrs_find(&n->meta, meta);
    double v = canon;
    if (m && m->type == GIR_ATTR_FLOAT && ln_float_slot(m->u.f) == (float)canon)
        v = m->u.f;
    P_num(w, pname, v);
    return true;
}

static gir_status w_lrelu(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    double alpha = gir_attrs_get_float(&N(w)->attrs, "alpha", 0.01);
    char nb[512], ob[64];
    begin_op(w, w->emit ? node_opname(w, nb, sizeof nb) : "", generic_optype(w, "lrelu", ob, sizeof ob));
    IN("src", in_v(w, 0)->name);
    OUT("dst", out_v(w, 0)->name);
    if (!float_param(w, "negslope", alpha, "lightnet.negslope"))
        return GIR_OK;
    return node_done(w);
}

static int64_t norm_axis(int64_t axis, int rank)
{
    return axis < 0 ? axis + rank : axis;
}

static gir_status w_softmax(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    int64_t axis = norm_axis(a_int(N(w), "axis", -1), x->shape.rank);
    if (axis < 0 || axis >= x->shape.rank) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, N(w)->name, "Softmax with an axis out of range");
        return GIR_OK;
    }
    char nb[512], ob[64];
    begin_op(w, w->emit ? node_opname(w, nb, sizeof nb) : "", generic_optype(w, "softmax", ob, sizeof ob));
    IN("src", x->name);
    OUT("dst", out_v(w, 0)->name);
    P_int(w, "axis", axis);
    return node_done(w);
}

static gir_status w_batchnorm(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    if (x->shape.rank != 4) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "BatchNormalization on %d-D data (LightNet's batchnorm takes NCHW)",
               x->shape.rank);
        return GIR_OK;
    }
    if (a_int(n, "training_mode", 0)) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "BatchNormalization with training_mode=1");
        return GIR_OK;
    }
    for (size_t k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0 && (n_consumers(w, n->out[k]) || w->is_output[n->out[k]])) {
            refuse(w, GIR_E_UNSUPPORTED, n->name, "BatchNormalization with its running statistics outputs used");
            return GIR_OK;
        }
    double eps = gir_attrs_get_float(&n->attrs, "epsilon", 1e-5);
    char nb[512], ob[64];
    begin_op(w, w->emit ? node_opname(w, nb, sizeof nb) : "", generic_optype(w, "batchnorm", ob, sizeof ob));
    static const char *const args[] = { "src", "scale", "offset", "mean", "var" };
    for (size_t k = 0; k < 5; k++)
        IN(args[k], in_v(w, k)->name);
    OUT("dst", out_v(w, 0)->name);
    if (!float_param(w, "epsilon", eps, "lightnet.epsilon"))
        return GIR_OK;
    return node_done(w);
}

/* A left-deep chain of two-input ops over the node's inputs (LightNet's
 * elew and concat take exactly two): t1 = op(x0, x1), t2 = op(t1, x2), ...,
 * the last writing the node's output; one input is a forward.  The param is
 * the string pstr when given, else the integer pint. */
static gir_status emit_chain(wr *w, const char *optype, const char *pname, const char *pstr, int64_t pint)
{
    const gir_node *n = N(w);
    gir_value *y = out_v(w, 0);
    char nb[512], ob[64], tb[512], prev[512];
    if (n->n_in > 2)
        gir_write_note(w->opts, "node %s: %s of %zu inputs written as a chain of %zu two-input %s ops", n->name,
                       gir_node_op(n), n->n_in, n->n_in - 1, optype);
    if (n->n_in == 1) {
        begin_op(w, node_opname(w, nb, sizeof nb), "forward");
        IN("src", in_v(w, 0)->name);
        OUT("dst", y->name);
        mark(w, n->out[0], w->root[n->in[0]]);
        return node_done(w);
    }
    snprintf(prev, sizeof prev, "%s", in_v(w, 0)->name);
    for (size_t k = 1; k < n->n_in; k++) {
        bool last = k + 1 == n->n_in;
        char want[480];
        snprintf(want, sizeof want, "%.400s_part%zu", y->name, k);
        const char *dst = last ? y->name : tensor_name(w, want, tb, sizeof tb);
        if (k == 1) {
            begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, optype, ob, sizeof ob));
        } else {
            char on[480];
            snprintf(on, sizeof on, "%.400s_%zu", n->name, k);
            begin_op(w, op_name(w, on, nb, sizeof nb), generic_optype(w, optype, ob, sizeof ob));
        }
        IN("src1", prev);
        IN("src2", in_v(w, k)->name);
        OUT("dst", dst);
        if (pstr)
            P_str(w, pname, pstr);
        else
            P_int(w, pname, pint);
        gir_status st = last ? node_done(w) : end_op(w);
        if (st)
            return st;
        snprintf(prev, sizeof prev, "%s", dst);
    }
    return GIR_OK;
}

/* elew on equal shapes; N-ary Max/Min/Sum become a chain. */
static gir_status w_elew(wr *w, const char *elew_op)
{
    const gir_node *n = N(w);
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *y = out_v(w, 0);
    for (size_t k = 0; k < n->n_in; k++) {
        gir_value *v = in_v(w, k);
        if (!v || !gir_shape_equal(&v->shape, &y->shape)) {
            char b1[128], b2[128];
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s with broadcasting (%s to %s; LightNet's elew needs equal "
                   "shapes)", gir_op_name(n->op), v ? gir_shape_str(&v->shape, b1, sizeof b1) : "?",
                   gir_shape_str(&y->shape, b2, sizeof b2));
            return GIR_OK;
        }
    }
    if (!w->emit)
        return GIR_OK;
    return emit_chain(w, "elew", "elew_op", elew_op, 0);
}

/* Reshape, Flatten, Squeeze, Unsqueeze: reshape to the output shape. */
static gir_status w_reshape(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    if (gir_shape_numel(&x->shape) != gir_shape_numel(&y->shape)) {
        refuse(w, GIR_E_UNSUPPORTED, N(w)->name, "%s that changes the element count", gir_op_name(N(w)->op));
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64];
    begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, "reshape", ob, sizeof ob));
    IN("src", x->name);
    OUT("dst", y->name);
    P_ints(w, "dims", y->shape.dims, (size_t)y->shape.rank);
    mark(w, N(w)->out[0], w->root[N(w)->in[0]]);
    return node_done(w);
}

static gir_status w_transpose(wr *w)
{
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    int64_t perm[GIR_MAX_RANK];
    const int64_t *v;
    ptrdiff_t c = a_ints(N(w), "perm", &v);
    int r = x->shape.rank;
    if (c < 0) {
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    } else if (c != r) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, N(w)->name, "Transpose with a perm of the wrong length");
        return GIR_OK;
    } else {
        for (int i = 0; i < r; i++)
            perm[i] = norm_axis(v[i], r);
    }
    char nb[512], ob[64];
    begin_op(w, w->emit ? node_opname(w, nb, sizeof nb) : "", generic_optype(w, "transpose", ob, sizeof ob));
    IN("src", x->name);
    OUT("dst", out_v(w, 0)->name);
    P_ints(w, "axes", perm, (size_t)r);
    return node_done(w);
}

static gir_status w_concat(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w) || !same_dtype_inputs(w))
        return GIR_OK;
    gir_value *y = out_v(w, 0);
    int64_t axis = norm_axis(a_int(n, "axis", 0), y->shape.rank);
    if (axis < 0 || axis >= y->shape.rank) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Concat with an axis out of range");
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    /* LightNet concatenates exactly two tensors: more become a chain. */
    return emit_chain(w, "concat", "axis", NULL, axis);
}

/* Slice with step 1: one LightNet slice per sliced axis. */
static gir_status w_slice(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    int r = x->shape.rank;
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    ptrdiff_t ns = a_ints(n, "starts", &st), ne = a_ints(n, "ends", &en);
    ptrdiff_t na = a_ints(n, "axes", &ax), np = a_ints(n, "steps", &sp);
    if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (np >= 0 && np != ns)) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Slice without matching starts/ends/axes/steps");
        return GIR_OK;
    }
    int64_t start[GIR_MAX_RANK], len[GIR_MAX_RANK];
    bool cut[GIR_MAX_RANK] = { false };
    for (int i = 0; i < r; i++) {
        start[i] = 0;
        len[i] = x->shape.dims[i];
    }
    for (ptrdiff_t k = 0; k < ns; k++) {
        int64_t a = norm_axis(na >= 0 ? ax[k] : k, r);
        if (a < 0 || a >= r || cut[a]) {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Slice with an axis out of range or repeated");
            return GIR_OK;
        }
        if (np >= 0 && sp[k] != 1) {
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Slice with steps=%lld (LightNet's slice takes a contiguous "
                   "range)", (long long)sp[k]);
            return GIR_OK;
        }
        int64_t d = x->shape.dims[a];
        int64_t s0 = st[k] < 0 ? st[k] + d : st[k], e0 = en[k] < 0 ? en[k] + d : en[k];
        s0 = s0 < 0 ? 0 : s0 > d ? d : s0;
        e0 = e0 < 0 ? 0 : e0 > d ? d : e0;
        if (e0 - s0 < 1) {
            refuse(w, GIR_E_UNSUPPORTED, n->name, "Slice giving an empty tensor (LightNet dimensions are > 0)");
            return GIR_OK;
        }
        start[a] = s0;
        len[a] = e0 - s0;
        cut[a] = len[a] != d;
    }
    for (int i = 0; i < r; i++)
        if ((cut[i] ? len[i] : x->shape.dims[i]) != y->shape.dims[i]) {
            refuse(w, GIR_E_UNSUPPORTED, n->name, "Slice whose output shape disagrees with its attributes");
            return GIR_OK;
        }
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64], tb[512], prev[512];
    int n_cut = 0, done = 0;
    for (int i = 0; i < r; i++)
        n_cut += cut[i];
    snprintf(prev, sizeof prev, "%s", x->name);
    if (n_cut == 0) {
        begin_op(w, node_opname(w, nb, sizeof nb), "forward");
        IN("src", x->name);
        OUT("dst", y->name);
        mark(w, n->out[0], w->root[n->in[0]]);
        return node_done(w);
    }
    for (int i = 0; i < r; i++) {
        if (!cut[i])
            continue;
        done++;
        bool last = done == n_cut;
        char want[480];
        snprintf(want, sizeof want, "%.400s_axis%d", y->name, i);
        const char *dst = last ? y->name : tensor_name(w, want, tb, sizeof tb);
        if (done == 1) {
            begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, "slice", ob, sizeof ob));
        } else {
            char on[480];
            snprintf(on, sizeof on, "%.400s_%d", n->name, done);
            begin_op(w, op_name(w, on, nb, sizeof nb), generic_optype(w, "slice", ob, sizeof ob));
        }
        IN("src", prev);
        OUT("dst", dst);
        P_int(w, "axis", i);
        P_int(w, "start", start[i]);
        P_int(w, "len", len[i]);
        gir_status s = last ? node_done(w) : end_op(w);
        if (s)
            return s;
        snprintf(prev, sizeof prev, "%s", dst);
    }
    return GIR_OK;
}

/* ReduceMax: one maxreduce per axis, then a reshape without keepdims. */
static gir_status w_reducemax(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    int r = x->shape.rank;
    bool axes[GIR_MAX_RANK] = { false };
    const int64_t *ax;
    ptrdiff_t na = a_ints(n, "axes", &ax);
    if (na <= 0) {
        for (int i = 0; i < r; i++)
            axes[i] = true;
    } else {
        for (ptrdiff_t k = 0; k < na; k++) {
            int64_t a = norm_axis(ax[k], r);
            if (a < 0 || a >= r) {
                refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "ReduceMax with an axis out of range");
                return GIR_OK;
            }
            axes[a] = true;
        }
    }
    bool keep = a_int(n, "keepdims", 1) != 0;
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64], tb[512], prev[512];
    int total = 0, done = 0;
    for (int i = 0; i < r; i++)
        total += axes[i];
    snprintf(prev, sizeof prev, "%s", x->name);
    for (int i = 0; i < r; i++) {
        if (!axes[i])
            continue;
        done++;
        bool last = done == total && keep;
        char want[480];
        snprintf(want, sizeof want, "%.400s_max%d", y->name, i);
        const char *dst = last ? y->name : tensor_name(w, want, tb, sizeof tb);
        if (done == 1) {
            begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, "maxreduce", ob, sizeof ob));
        } else {
            char on[480];
            snprintf(on, sizeof on, "%.400s_%d", n->name, done);
            begin_op(w, op_name(w, on, nb, sizeof nb), generic_optype(w, "maxreduce", ob, sizeof ob));
        }
        IN("src", prev);
        OUT("dst", dst);
        P_int(w, "axis", i);
        gir_status s = last ? node_done(w) : end_op(w);
        if (s)
            return s;
        snprintf(prev, sizeof prev, "%s", dst);
    }
    if (!keep) {
        char on[480];
        snprintf(on, sizeof on, "%.400s_reshape", n->name);
        begin_op(w, op_name(w, on, nb, sizeof nb), "reshape");
        IN("src", prev);
        OUT("dst", y->name);
        P_ints(w, "dims", y->shape.dims, (size_t)y->shape.rank);
        return node_done(w);
    }
    return GIR_OK;
}

/* ArgMax -> Cast(int32) [+ ReduceMax on the same axis] = maxreduce_arg. */
static gir_status w_group(wr *w, fgroup *gp)
{
    if (gp->done)
        return GIR_OK;
    int32_t saved = w->cur;
    const gir_node *am = w->g->nodes[gp->argmax], *cast = w->g->nodes[gp->cast];
    const gir_node *rm = gp->rmax >= 0 ? w->g->nodes[gp->rmax] : NULL;
    w->cur = gp->argmax;
    if (!check_io(w)) {
        w->cur = saved;
        return GIR_OK;
    }
    w->cur = saved;
    if (!w->emit)
        return GIR_OK;
    gp->done = true;
    gir_value *x = gir_in(w->g, am, 0);
    int64_t axis = norm_axis(gir_attrs_get_int(&am->attrs, "axis", 0), x->shape.rank);
    char nb[512], ob[64], tb[512];
    const char *dst;
    if (rm) {
        dst = gir_out(w->g, rm, 0)->name;
    } else {
        char want[480];
        snprintf(want, sizeof want, "%.400s_max", gir_out(w->g, cast, 0)->name);
        dst = tensor_name(w, want, tb, sizeof tb);
    }
    const gir_attr *mo = gir_attrs_find(&am->meta, "lightnet.op");
    const char *want_name = mo && mo->type == GIR_ATTR_STRING ? mo->u.s : rm ? rm->name : am->name;
    w->cur = rm ? gp->rmax : gp->argmax;
    begin_op(w, op_name(w, want_name, nb, sizeof nb), generic_optype(w, "maxreduce_arg", ob, sizeof ob));
    IN("src", x->name);
    OUT("dst", dst);
    OUT("arg", gir_out(w->g, cast, 0)->name);
    P_int(w, "axis", axis);
    gir_status st = end_op(w);
    mark(w, cast->out[0], -1);
    if (rm)
        mark(w, rm->out[0], -1);
    mark(w, am->out[0], -1);
    w->cur = saved;
    return st;
}

/* Resize (nearest) -> resize, or upsample when read from one. */
static gir_status w_resize(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0), *y = out_v(w, 0);
    const char *mode = a_str(n, "mode", "nearest");
    const char *ctm = a_str(n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = a_str(n, "nearest_mode", "round_prefer_floor");
    if (strcmp(mode, "nearest") != 0) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Resize with mode=%s (TensorLight resizes nearest only)", mode);
        return GIR_OK;
    }
    if (y->shape.rank != x->shape.rank) {
        refuse(w, GIR_E_UNSUPPORTED, n->name, "Resize changing the rank");
        return GIR_OK;
    }
    /* TensorLight: src = round_half_away(((dst + 0.5) * in/out) - 0.5). */
    bool ok = true;
    for (int i = 0; i < x->shape.rank && ok; i++) {
        int64_t in = x->shape.dims[i], out = y->shape.dims[i];
        if (strcmp(ctm, "half_pixel") == 0) {
            if (strcmp(nm, "round_prefer_ceil") == 0)
                continue;
            if (strcmp(nm, "round_prefer_floor") == 0) {
                /* identical unless some source coordinate is exactly k + 0.5 */
                for (int64_t d = 0; d < out && ok; d++) {
                    int64_t t = (2 * d + 1) * in - out;
                    if (t >= 0 && t % (2 * out) == out)
                        ok = false;
                }
                continue;
            }
            ok = false;
        } else if (strcmp(ctm, "asymmetric") == 0 && strcmp(nm, "floor") == 0) {
            ok = out % in == 0; /* integer upscaling: floor(d / s) is the same index */
        } else {
            ok = false;
        }
    }
    if (!ok) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "Resize with coordinate_transformation_mode=%s, nearest_mode=%s "
               "for these sizes (TensorLight maps with half_pixel and rounds halves away from zero)", ctm, nm);
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64];
    const gir_attr *ms = gir_attrs_find(&n->meta, "lightnet.scales");
    bool up = ms && ms->type == GIR_ATTR_FLOATS && ms->u.floats.n == (size_t)x->shape.rank;
    for (int i = 0; up && i < x->shape.rank; i++)
        up = (int64_t)floorf(ln_float_slot(ms->u.floats.v[i]) * (float)x->shape.dims[i]) == y->shape.dims[i];
    begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, up ? "upsample" : "resize", ob, sizeof ob));
    IN("src", x->name);
    OUT("dst", y->name);
    P_str(w, "mode", "TL_NEAREST");
    if (up)
        P_nums(w, "scales", ms->u.floats.v, ms->u.floats.n);
    else
        P_ints(w, "dims", y->shape.dims, (size_t)y->shape.rank);
    return node_done(w);
}

static gir_status w_print(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    const char *file = a_str(n, "file", NULL);
    char nb[512], ob[64];
    begin_op(w, w->emit ? node_opname(w, nb, sizeof nb) : "", generic_optype(w, file ? "fprint" : "print", ob, sizeof ob));
    IN("src", in_v(w, 0)->name);
    P_str(w, "msg", a_str(n, "message", ""));
    if (file)
        P_str(w, "file", file);
    return node_done(w);
}

/* In-place ops (sort, rearange) overwrite their input's memory: when
 * anything sharing it is read later, or is a graph output, the op reads a
 * copy (a full-range slice) instead. */
static const char *inplace_input(wr *w, size_t k, char *buf, size_t n)
{
    const gir_node *node = N(w);
    int32_t x = node->in[k];
    int32_t root = w->root[x];
    bool hazard = false;
    for (size_t v = 0; v < w->g->n_values && !hazard; v++) {
        if (w->root[v] != root || !w->written[v])
            continue;
        if (w->is_output[v])
            hazard = true;
        for (int32_t c = w->cons_start[v]; c < w->cons_start[v + 1] && !hazard; c++)
            if (w->cons[c] != w->cur && w->pos[w->cons[c]] > w->pos[w->cur])
                hazard = true;
    }
    if (!hazard)
        return V(w, x)->name;
    char want[480], nb[512];
    snprintf(want, sizeof want, "%.400s_copy", V(w, x)->name);
    const char *t = tensor_name(w, want, buf, n);
    if (t != buf) { /* never hand back the local `want` */
        snprintf(buf, n, "%s", t);
        t = buf;
    }
    snprintf(want, sizeof want, "%.400s_copy", node->name);
    begin_op(w, op_name(w, want, nb, sizeof nb), "slice");
    IN("src", V(w, x)->name);
    OUT("dst", t);
    P_int(w, "axis", 0);
    P_int(w, "start", 0);
    P_int(w, "len", V(w, x)->shape.dims[0]);
    if (end_op(w) != GIR_OK)
        w->op.failed = true;
    return t;
}

static gir_status w_sort(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *k0 = in_v(w, 0);
    if (k0->shape.rank != 1) {
        refuse(w, GIR_E_UNSUPPORTED, n->name, "Sort of a %d-D tensor (LightNet sorts 1-D tensors)", k0->shape.rank);
        return GIR_OK;
    }
    if (n->n_in == 2 && in_v(w, 1)->dtype != GIR_DT_I32) {
        refuse(w, GIR_E_UNSUPPORTED, n->name, "Sort of %s values (LightNet's sort1d_by_key moves int32 values)",
               gir_dtype_name(in_v(w, 1)->dtype));
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64], b0[512], b1[512];
    const char *src_key = inplace_input(w, 0, b0, sizeof b0);
    const char *src_val = n->n_in == 2 ? inplace_input(w, 1, b1, sizeof b1) : NULL;
    begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, n->n_in == 2 ? "sort1d_by_key" : "sort1d", ob, sizeof ob));
    IN("src_key", src_key);
    if (src_val)
        IN("src_val", src_val);
    OUT("dst_key", out_v(w, 0)->name);
    if (src_val)
        OUT("dst_val", out_v(w, 1)->name);
    P_str(w, "dir", a_int(n, "descending", 0) ? "TL_SORT_DIR_DESCENDING" : "TL_SORT_DIR_ASCENDING");
    mark(w, n->out[0], gir_graph_value_index(w->g, src_key) >= 0 ? w->root[n->in[0]] : -1);
    if (src_val)
        mark(w, n->out[1], gir_graph_value_index(w->g, src_val) >= 0 ? w->root[n->in[1]] : -1);
    return node_done(w);
}

static gir_status w_rangefill(wr *w)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    gir_value *x = in_v(w, 0);
    double start = gir_attrs_get_float(&n->attrs, "start", 0), limit = gir_attrs_get_float(&n->attrs, "limit", 0),
           delta = gir_attrs_get_float(&n->attrs, "delta", 1);
    if (x->shape.rank != 1 || delta == 0 || ceil((limit - start) / delta) != (double)x->shape.dims[0]) {
        refuse(w, GIR_E_UNSUPPORTED, n->name, "RangeFill whose range does not cover its 1-D input");
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char nb[512], ob[64], b0[512];
    const char *src = inplace_input(w, 0, b0, sizeof b0);
    begin_op(w, node_opname(w, nb, sizeof nb), generic_optype(w, "rearange", ob, sizeof ob));
    IN("src", src);
    OUT("dst", out_v(w, 0)->name);
    P_num(w, "start", start);
    P_num(w, "stop", limit);
    P_num(w, "step", delta);
    mark(w, n->out[0], gir_graph_value_index(w->g, src) >= 0 ? w->root[n->in[0]] : -1);
    return node_done(w);
}

/* Operators whose LightNet op has the same arguments and params by name. */
static gir_status w_direct(wr *w, const char *optype)
{
    const gir_node *n = N(w);
    if (!check_io(w))
        return GIR_OK;
    const ln_op_schema *s = ln_schema_find(optype);
    char nb[512], ob[64];
    if (n->op == GIR_OP_GatherBlocks && in_v(w, 1)->dtype != GIR_DT_I32) {
        refuse(w, GIR_E_UNSUPPORTED, n->name, "GatherBlocks with %s indices (LightNet's pick1d takes int32)",
               gir_dtype_name(in_v(w, 1)->dtype));
        return GIR_OK;
    }
    if ((n->op == GIR_OP_Stack || n->op == GIR_OP_Unstack) && a_int(n, "axis", 0) != 0) {
        refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "%s along axis %lld (LightNet's %s works on axis 0)",
               gir_op_name(n->op), (long long)a_int(n, "axis", 0), optype);
        return GIR_OK;
    }
    begin_op(w, w->emit ? node_opname(w, nb, sizeof nb) : "", generic_optype(w, optype, ob, sizeof ob));
    const gir_attr *mi = gir_attrs_find(&n->meta, "lightnet.ins"), *mo = gir_attrs_find(&n->meta, "lightnet.outs");
    for (size_t k = 0; k < n->n_in; k++) {
        char a[32];
        const char *arg = s->ins[0] ? s->ins[k] : a;
        if (!s->ins[0]) {
            if (mi && mi->type == GIR_ATTR_STRINGS && mi->u.strs.n == n->n_in)
                arg = mi->u.strs.v[k];
            else
                snprintf(a, sizeof a, "src%zu", k + 1);
        }
        IN(arg, in_v(w, k)->name);
    }
    for (size_t k = 0; k < n->n_out; k++) {
        char a[32];
        const char *arg = s->outs[0] ? s->outs[k] : a;
        if (!s->outs[0]) {
            if (mo && mo->type == GIR_ATTR_STRINGS && mo->u.strs.n == n->n_out)
                arg = mo->u.strs.v[k];
            else
                snprintf(a, sizeof a, "dst%zu", k + 1);
        }
        OUT(arg, out_v(w, k)->name);
    }
    switch (n->op) {
    case GIR_OP_GatherBlocks:
        P_int(w, "len", a_int(n, "count", 1));
        P_int(w, "stride", a_int(n, "block_size", 1));
        break;
    case GIR_OP_SqueezeDetBoxDecode: {
        static const char *const k6[] = { "width", "height", "img_width", "img_height", "x_shift", "y_shift" };
        for (int i = 0; i < 6; i++)
            P_int(w, k6[i], a_int(n, k6[i], 0));
        break;
    }
    case GIR_OP_YoloV3Decode:
        P_int(w, "img_width", a_int(n, "img_width", 1));
        P_int(w, "img_height", a_int(n, "img_height", 1));
        break;
    case GIR_OP_SubMean: {
        const double *m;
        ptrdiff_t c = gir_attrs_get_floats(&n->attrs, "mean", &m);
        if (c == 3)
            P_nums(w, "mean", m, 3);
        else
            refuse(w, GIR_E_UNSUPPORTED_ATTR, n->name, "SubMean without 3 means");
        P_str(w, "dtype", ln_dtype_name(out_v(w, 0)->dtype));
        break;
    }
    default: break;
    }
    return node_done(w);
}

/* Opaque nodes kept from LightNet (tensorrt, ldmr, ...) are written back
 * verbatim; others only with allow-opaque. */
static gir_status w_opaque(wr *w)
{
    const gir_node *n = N(w);
    bool ours = n->opaque_format && strcmp(n->opaque_format, "lightnet") == 0;
    if (!ours && !w->allow_opaque) {
        refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "%s operator %s (opaque)", n->opaque_format ? n->opaque_format : "?",
               n->opaque_op ? n->opaque_op : "?");
        return GIR_OK;
    }
    if (!w->emit)
        return GIR_OK;
    char nb[512];
    begin_op(w, node_opname(w, nb, sizeof nb), n->opaque_op ? n->opaque_op : "opaque");
    const gir_attr *mi = gir_attrs_find(&n->meta, "lightnet.ins"), *mo = gir_attrs_find(&n->meta, "lightnet.outs");
    const gir_attr *mb = gir_attrs_find(&n->meta, "lightnet.bools");
    for (size_t k = 0; k < n->n_in; k++) {
        char a[32];
        snprintf(a, sizeof a, "src%zu", k);
        IN(mi && mi->type == GIR_ATTR_STRINGS && k < mi->u.strs.n ? mi->u.strs.v[k] : a,
           in_v(w, k) ? in_v(w, k)->name : "");
    }
    for (size_t k = 0; k < n->n_out; k++) {
        char a[32];
        snprintf(a, sizeof a, "dst%zu", k);
        OUT(mo && mo->type == GIR_ATTR_STRINGS && k < mo->u.strs.n ? mo->u.strs.v[k] : a, out_v(w, k)->name);
    }
    for (size_t k = 0; k < n->attrs.n; k++) {
        const gir_attr *a = &n->attrs.items[k];
        bool is_bool = false;
        for (size_t q = 0; mb && mb->type == GIR_ATTR_STRINGS && q < mb->u.strs.n; q++)
            if (strcmp(mb->u.strs.v[q], a->name) == 0)
                is_bool = true;
        switch (a->type) {
        case GIR_ATTR_INT:
        case GIR_ATTR_BOOL:
            if (is_bool || a->type == GIR_ATTR_BOOL)
                P_bool(w, a->name, a->u.i != 0);
            else
                P_int(w, a->name, a->u.i);
            break;
        case GIR_ATTR_FLOAT: P_num(w, a->name, a->u.f); break;
        case GIR_ATTR_STRING: P_str(w, a->name, a->u.s); break;
        case GIR_ATTR_INTS:
            if (is_bool)
                P_strs(w, a->name, NULL, a->u.ints.n, true, a->u.ints.v);
            else
                P_ints(w, a->name, a->u.ints.v, a->u.ints.n);
            break;
        case GIR_ATTR_FLOATS: P_nums(w, a->name, a->u.floats.v, a->u.floats.n); break;
        case GIR_ATTR_STRINGS: P_strs(w, a->name, a->u.strs.v, a->u.strs.n, false, NULL); break;
        case GIR_ATTR_TENSOR: break;
        }
    }
    return node_done(w);
}

static gir_status write_node(wr *w, int32_t ni)
{
    w->cur = ni;
    const gir_node *n = N(w);
    if (w->group_of[ni] >= 0) {
        fgroup *gp = &w->groups[w->group_of[ni]];
        /* the creates of the shared input first */
        w->cur = gp->argmax;
        gir_status st = emit_inputs(w);
        w->cur = ni;
        if (st)
            return st;
        return w_group(w, gp);
    }
    gir_status st = emit_inputs(w);
    if (st)
        return st;
    switch (n->op) {
    case GIR_OP_Conv:
    case GIR_OP_ConvTranspose: return w_conv(w);
    case GIR_OP_MaxPool:
    case GIR_OP_AveragePool:
    case GIR_OP_GlobalMaxPool:
    case GIR_OP_GlobalAveragePool: return w_pool(w);
    case GIR_OP_Relu: return w_plain(w, "relu", false);
    case GIR_OP_Sigmoid: return w_plain(w, "sigmoid", false);
    case GIR_OP_Identity:
    case GIR_OP_Dropout: return w_plain(w, "forward", true);
    case GIR_OP_LeakyRelu: return w_lrelu(w);
    case GIR_OP_Softmax: return w_softmax(w);
    case GIR_OP_BatchNormalization: return w_batchnorm(w);
    case GIR_OP_Add: return w_elew(w, "TL_SUM");
    case GIR_OP_Sum: return w_elew(w, "TL_SUM");
    case GIR_OP_Sub: return w_elew(w, "TL_SUB");
    case GIR_OP_Mul: return w_elew(w, "TL_MUL");
    case GIR_OP_Div: return w_elew(w, "TL_DIV");
    case GIR_OP_Pow: return w_elew(w, "TL_POW");
    case GIR_OP_Max: return w_elew(w, "TL_MAX");
    case GIR_OP_Min: return w_elew(w, "TL_MIN");
    case GIR_OP_Reshape:
    case GIR_OP_Flatten:
    case GIR_OP_Squeeze:
    case GIR_OP_Unsqueeze: return w_reshape(w);
    case GIR_OP_Transpose: return w_transpose(w);
    case GIR_OP_Concat: return w_concat(w);
    case GIR_OP_Slice: return w_slice(w);
    case GIR_OP_ReduceMax: return w_reducemax(w);
    case GIR_OP_Resize: return w_resize(w);
    case GIR_OP_Print: return w_print(w);
    case GIR_OP_Sort: return w_sort(w);
    case GIR_OP_RangeFill: return w_rangefill(w);
    case GIR_OP_GatherBlocks: return w_direct(w, "pick1d");
    case GIR_OP_SqueezeDetBoxDecode: return w_direct(w, "transform_bboxSQD");
    case GIR_OP_YoloV3Decode: return w_direct(w, "detect_yolov3");
    case GIR_OP_SubMean: return w_direct(w, "submean");
    case GIR_OP_DotProduct: return w_direct(w, "dot_product");
    case GIR_OP_Stack: return w_direct(w, "gather");
    case GIR_OP_Unstack: return w_direct(w, "scatter");
    case GIR_OP_OPAQUE: return w_opaque(w);
    case GIR_OP_ArgMax:
        refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "ArgMax not followed by a Cast to int32 alone (LightNet's "
               "maxreduce_arg gives int32 indices, keepdims=1, first maximum)");
        return GIR_OK;
    case GIR_OP_Tanh:
        refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "Tanh (LightNet has no tanh op)");
        return GIR_OK;
    default:
        refuse(w, GIR_E_UNSUPPORTED_OP, n->name, "%s", gir_op_name(n->op));
        return GIR_OK;
    }
}

/* ---- order, consumers, groups ----------------------------------------------- */

static gir_status build_consumers(wr *w)
{
    const gir_graph *g = w->g;
    w->cons_start = calloc(g->n_values + 2, sizeof *w->cons_start);
    if (!w->cons_start)
        return nomem(w);
    size_t total = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_in; k++)
            if (g->nodes[i]->in[k] >= 0) {
                w->cons_start[g->nodes[i]->in[k] + 1]++;
                total++;
            }
    for (size_t v = 0; v < g->n_values; v++)
        w->cons_start[v + 1] += w->cons_start[v];
    w->cons = calloc(total + 1, sizeof *w->cons);
    int32_t *fill = calloc(g->n_values + 1, sizeof *fill);
    if (!w->cons || !fill) {
        free(fill);
        return nomem(w);
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i]->n_in; k++) {
            int32_t v = g->nodes[i]->in[k];
            if (v >= 0)
                w->cons[w->cons_start[v] + fill[v]++] = (int32_t)i;
        }
    free(fill);
    return GIR_OK;
}

static void heap_push(int32_t *h, size_t *n, int32_t x)
{
    size_t i = (*n)++;
    h[i] = x;
    while (i && h[(i - 1) / 2] > h[i]) {
        int32_t t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static int32_t heap_pop(int32_t *h, size_t *n)
{
    int32_t top = h[0];
    h[0] = h[--(*n)];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && h[l] < h[m])
            m = l;
        if (r < *n && h[r] < h[m])
            m = r;
        if (m == i)
            break;
        int32_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

/* Execution order: topological, ties broken by node index, so a graph
 * already in order (every graph read from LightNet) keeps it. */
static gir_status build_order(wr *w)
{
    const gir_graph *g = w->g;
    size_t n = g->n_nodes;
    int32_t *indeg = calloc(n + 1, sizeof *indeg), *heap = calloc(n + 1, sizeof *heap);
    w->order = calloc(n + 1, sizeof *w->order);
    w->pos = calloc(n + 1, sizeof *w->pos);
    gir_status st = GIR_OK;
    if (!indeg || !heap || !w->order || !w->pos) {
        st = nomem(w);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < g->nodes[i]->n_in; k++) {
            int32_t v = g->nodes[i]->in[k];
            if (v >= 0 && g->values[v]->producer >= 0)
                indeg[i]++;
        }
    size_t hn = 0, done = 0;
    for (size_t i = 0; i < n; i++)
        if (!indeg[i])
            heap_push(heap, &hn, (int32_t)i);
    while (hn) {
        int32_t i = heap_pop(heap, &hn);
        w->pos[i] = (int32_t)done;
        w->order[done++] = i;
        const gir_node *nd = g->nodes[i];
        for (size_t k = 0; k < nd->n_out; k++) {
            int32_t v = nd->out[k];
            if (v < 0)
                continue;
            for (int32_t c = w->cons_start[v]; c < w->cons_start[v + 1]; c++)
                if (--indeg[w->cons[c]] == 0)
                    heap_push(heap, &hn, w->cons[c]);
        }
    }
    if (done < n) {
        for (size_t i = 0; i < n; i++)
            if (indeg[i]) {
                st = gir_fail(w->err, GIR_E_CYCLE, "the graph has a cycle; LightNet runs ops in one list order");
                gir_err_node(w->err, g->nodes[i]->name);
                break;
            }
    }
out:
    free(indeg);
    free(heap);
    return st;
}


static bool axes_is(const gir_node *n, int64_t axis, int rank)
{
    const int64_t *v;
    ptrdiff_t c = gir_attrs_get_ints(&n->attrs, "axes", &v);
    if (c < 0)
        return rank == 1 && axis == 0;
    return c == 1 && norm_axis(v[0], rank) == axis;
}

static gir_status build_groups(wr *w)
{
    const gir_graph *g = w->g;
    w->group_of = malloc((g->n_nodes + 1) * sizeof *w->group_of);
    w->groups = calloc(g->n_nodes + 1, sizeof *w->groups);
    if (!w->group_of || !w->groups)
        return nomem(w);
    for (size_t i = 0; i < g->n_nodes; i++)
        w->group_of[i] = -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *a = g->nodes[i];
        if (a->op != GIR_OP_ArgMax || a->n_out != 1 || a->out[0] < 0 || a->in[0] < 0)
            continue;
        if (gir_attrs_get_int(&a->attrs, "keepdims", 1) != 1 || gir_attrs_get_int(&a->attrs, "select_last_index", 0))
            continue;
        int32_t av = a->out[0];
        if (w->is_output[av] || n_consumers(w, av) != 1)
            continue;
        const gir_node *c = g->nodes[w->cons[w->cons_start[av]]];
        if (c->op != GIR_OP_Cast || gir_dtype_from_name(gir_attrs_get_string(&c->attrs, "to", "")) != GIR_DT_I32 ||
            w->group_of[w->cons[w->cons_start[av]]] >= 0)
            continue;
        int32_t x = a->in[0];
        int rank = g->values[x]->shape.rank;
        if (rank < 1)
            continue;
        int64_t axis = norm_axis(gir_attrs_get_int(&a->attrs, "axis", 0), rank);
        const gir_attr *am = gir_attrs_find(&a->meta, "lightnet.op");
        int32_t rm = -1;
        for (int32_t k = w->cons_start[x]; k < w->cons_start[x + 1]; k++) {
            int32_t ci = w->cons[k];
            const gir_node *r = g->nodes[ci];
            if (r->op != GIR_OP_ReduceMax || w->group_of[ci] >= 0 || r->n_out != 1 ||
                gir_attrs_get_int(&r->attrs, "keepdims", 1) != 1 || !axes_is(r, axis, rank))
                continue;
            const gir_attr *rmeta = gir_attrs_find(&r->meta, "lightnet.op");
            bool same = am && rmeta && am->type == GIR_ATTR_STRING && rmeta->type == GIR_ATTR_STRING &&
                        strcmp(am->u.s, rmeta->u.s) == 0;
            if (rm < 0 || same)
                rm = ci;
            if (same)
                break;
        }
        fgroup *gp = &w->groups[w->n_groups];
        gp->argmax = (int32_t)i;
        gp->cast = w->cons[w->cons_start[av]];
        gp->rmax = rm;
        w->group_of[i] = w->group_of[gp->cast] = (int32_t)w->n_groups;
        if (rm >= 0)
            w->group_of[rm] = (int32_t)w->n_groups;
        w->n_groups++;
    }
    return GIR_OK;
}

static void reset_state(wr *w)
{
    for (size_t v = 0; v < w->g->n_values; v++) {
        w->written[v] = false;
        w->root[v] = -1;
    }
    for (size_t k = 0; k < w->n_groups; k++)
        w->groups[k].done = false;
    ss_free(&w->opnames);
    ss_free(&w->tnames);
    memset(&w->opnames, 0, sizeof w->opnames);
    memset(&w->tnames, 0, sizeof w->tnames);
}

static gir_status walk(wr *w)
{
    for (size_t i = 0; i < w->g->n_nodes; i++) {
        gir_status st = write_node(w, w->order[i]);
        if (st)
            return st;
    }
    /* graph inputs, weights and constants no op reads */
    w->cur = -1;
    for (size_t v = 0; v < w->g->n_values; v++) {
        if (w->g->values[v]->producer >= 0 || w->written[v])
            continue;
        gir_status st = emit_create(w, (int32_t)v);
        if (st)
            return st;
    }
    return GIR_OK;
}

static int cmp_wts(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The .wts records in the order of the file they were read from (when the
 * values carry it), then in the order the creates were written. */
static gir_status order_wts(wr *w)
{
    int64_t (*key)[3] = malloc((w->n_wts + 1) * sizeof *key);
    ln_wts_item *tmp = malloc((w->n_wts + 1) * sizeof *tmp);
    if (!key || !tmp) {
        free(key);
        free(tmp);
        return nomem(w);
    }
    for (size_t i = 0; i < w->n_wts; i++) {
        const gir_value *v = w->g->values[gir_graph_value_index(w->g, w->wts[i].name)];
        const gir_attr *m = gir_attrs_find(&v->meta, "lightnet.wts_index");
        key[i][0] = m && m->type == GIR_ATTR_INT ? m->u.i : INT64_MAX;
        key[i][1] = (int64_t)i;
        key[i][2] = (int64_t)i;
    }
    qsort(key, w->n_wts, sizeof *key, cmp_wts);
    for (size_t i = 0; i < w->n_wts; i++)
        tmp[i] = w->wts[key[i][2]];
    memcpy(w->wts, tmp, w->n_wts * sizeof *tmp);
    free(key);
    free(tmp);
    return GIR_OK;
}

/* Sets up the writer for g and checks everything, collecting what cannot
 * be written into w->u (made here unless the caller gave one): what both
 * ln_plan and ln_write do. */
static gir_status prepare(wr *w, const gir_graph *g, const gir_options *opts, gir_error *err)
{
    w->g = g;
    w->opts = opts;
    w->err = err;
    w->cur = -1;
    w->inline_all = gir_options_flag(opts, "inline-weights");
    w->keep_variants = gir_options_flag(opts, "keep-variants");
    w->allow_opaque = gir_options_flag(opts, "allow-opaque");
    size_t nv = g->n_values + 1;
    w->is_output = calloc(nv, sizeof *w->is_output);
    w->root = malloc(nv * sizeof *w->root);
    w->written = calloc(nv, sizeof *w->written);
    w->store = calloc(nv, sizeof *w->store);
    if (!w->u)
        w->u = gir_unsupported_new();
    if (!w->is_output || !w->root || !w->written || !w->store || !w->u)
        return nomem(w);
    for (size_t i = 0; i < g->n_outputs; i++)
        w->is_output[g->outputs[i]] = true;
    gir_status st;
    if ((st = build_consumers(w)) || (st = build_order(w)) || (st = build_groups(w)))
        return st;
    for (size_t v = 0; v < g->n_values; v++)
        if (g->values[v]->producer < 0)
            classify_value(w, (int32_t)v);
    for (size_t v = 0; v < g->n_values; v++) {
        if (strchr(g->values[v]->name, '"'))
            refuse(w, GIR_E_UNSUPPORTED, g->values[v]->name, "a name containing '\"' (LightNet's comment pre-pass "
                   "does not understand escaped quotes)");
    }
    reset_state(w);
    return walk(w);
}

static void wr_free(wr *w)
{
    gir_jw_free(&w->jw);
    gir_buf_free(&w->buf);
    op_free(&w->op);
    ss_free(&w->opnames);
    ss_free(&w->tnames);
    free(w->is_output);
    free(w->root);
    free(w->written);
    free(w->store);
    free(w->order);
    free(w->pos);
    free(w->cons_start);
    free(w->cons);
    free(w->group_of);
    free(w->groups);
    free(w->wts);
}

gir_status ln_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    wr w;
    memset(&w, 0, sizeof w);
    w.u = u;
    gir_status st = prepare(&w, g, opts, err);
    wr_free(&w);
    return st;
}

gir_status ln_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err)
{
    wr w;
    memset(&w, 0, sizeof w);
    bool force = gir_options_flag(opts, "force");
    gir_outfile *wts_out = NULL;
    char *wts_path = NULL;
    gir_status st = prepare(&w, g, opts, err);
    if (st)
        goto out;
    if (gir_unsupported_count(w.u)) {
        st = gir_unsupported_fail(w.u, "lightnet", err);
        goto out;
    }
    /* then write */
    bool need_wts = false;
    for (size_t v = 0; v < g->n_values; v++)
        if (w.store[v] == ST_WTS)
            need_wts = true;
    if (need_wts) {
        const char *p = gir_options_get(opts, "params");
        wts_path = p ? gir_strdupf("%s", p) : gir_path_with_ext(path, ".wts");
        if (!wts_path) {
            st = nomem(&w);
            goto out;
        }
    }
    st = gir_outfile_open(path, force, &w.out, err);
    if (!st && need_wts)
        st = gir_outfile_open(wts_path, force, &wts_out, err);
    if (st)
        goto out;
    reset_state(&w);
    w.emit = true;
    gir_jw_init(&w.jw, &w.buf, GIR_JSON_PRETTY);
    gir_jw_begin_object(&w.jw, true);
    gir_jw_key(&w.jw, "ops");
    gir_jw_begin_array(&w.jw, true);
    st = walk(&w);
    if (st)
        goto out;
    gir_jw_end_array(&w.jw);
    gir_jw_end_object(&w.jw);
    gir_buf_putc(&w.buf, '\n');
    if (!gir_jw_ok(&w.jw)) {
        st = gir_fail(err, GIR_E_INTERNAL, "the JSON writer was misused");
        goto out;
    }
    st = drain(&w);
    if (!st && need_wts)
        st = order_wts(&w);
    if (!st && need_wts)
        st = ln_wts_write(wts_out, w.wts, w.n_wts, err);
    if (!st) {
        /* the weights, then the graph, as one unit */
        gir_outfile *both[2] = { wts_out, w.out };
        st = need_wts ? gir_outfile_commit_all(both, 2, err) : gir_outfile_commit(w.out, err);
        if (need_wts)
            wts_out = NULL;
        w.out = NULL;
    }
out:
    if (w.out)
        gir_outfile_abort(w.out);
    if (wts_out)
        gir_outfile_abort(wts_out);
    gir_unsupported_free(w.u);
    wr_free(&w);
    free(wts_path);
    return st;
}
