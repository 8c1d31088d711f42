/* Writing LightNet JSON IR that LightNet accepts: every op with exactly its
 * schema's tensors and params, in execution (topological) order, each
 * tensor written once, LightNet's conventions; weights to a companion .wts
 * file (or inline `data`).  The whole graph is checked first and everything
 * LightNet cannot express is reported at once. */
#include "write.h"
#include "core/elem.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- a set of strings (names taken in the output) -------------------------- */

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

static gir_status nomem(wr *w)
{
    return gir_nomem(w->err);
}

/* ---- refusals ------------------------------------------------------------ */

void lnw_refuse(wr *w, gir_status code, const char *node, const char *fmt, ...)
{
    if (w->emit)
        return;
    va_list ap;
    va_start(ap, fmt);
    gir_unsupported_vaddf(w->u, code, node, fmt, ap);
    va_end(ap);
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

void lnw_begin_op(wr *w, const char *name, const char *optype)
{
    op_reset(&w->op);
    if (!w->emit)
        return;
    w->op.name = gir_strdupf("%s", name);
    w->op.optype = gir_strdupf("%s", optype);
    if (!w->op.name || !w->op.optype)
        w->op.failed = true;
}

void lnw_add_t(wr *w, bool in, const char *arg, const char *name)
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

wpar *lnw_add_p(wr *w, const char *name, wp_type t)
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

void lnw_P_num(wr *w, const char *name, double d)
{
    wpar *p = lnw_add_p(w, name, WP_NUM);
    if (p)
        p->d = d;
}

void lnw_P_str(wr *w, const char *name, const char *s)
{
    wpar *p = lnw_add_p(w, name, WP_STR);
    if (p && !(p->s = gir_strdupf("%s", s)))
        w->op.failed = true;
}

void lnw_P_bool(wr *w, const char *name, bool b)
{
    wpar *p = lnw_add_p(w, name, WP_BOOL);
    if (p)
        p->i = b;
}

/* A copy of n elements of size bytes for a param (the op fails when out
 * of memory). */
static void *param_dup(wr *w, const void *v, size_t n, size_t size)
{
    void *d = malloc((n ? n : 1) * size);
    if (d)
        memcpy(d, v, n * size);
    else
        w->op.failed = true;
    return d;
}

void lnw_P_ints(wr *w, const char *name, const int64_t *v, size_t n)
{
    wpar *p = lnw_add_p(w, name, WP_INTS);
    if (p) {
        p->n = n;
        p->iv = param_dup(w, v, n, sizeof *v);
    }
}

void lnw_P_nums(wr *w, const char *name, const double *v, size_t n)
{
    wpar *p = lnw_add_p(w, name, WP_NUMS);
    if (p) {
        p->n = n;
        p->dv = param_dup(w, v, n, sizeof *v);
    }
}

static gir_status drain(wr *w)
{
    if (w->buf.failed)
        return nomem(w);
    gir_status st = gir_outfile_write(w->out, w->buf.data, w->buf.len, w->err);
    w->buf.len = 0;
    return st;
}

gir_status lnw_end_op(wr *w)
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

/* A lnw_fresh name: for an op (unique among the ops written and not the name
 * of another node; a node may use its own), or for a tensor graphconv adds
 * (taken by no value and no other added tensor). */
const char *lnw_fresh(wr *w, bool op, const char *want, char *buf, size_t n)
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

const char *lnw_op_name(wr *w, const char *want, char *buf, size_t n)
{
    return lnw_fresh(w, true, want, buf, n);
}

/* ---- graph helpers -------------------------------------------------------- */

gir_value *lnw_V(wr *w, int32_t v)
{
    return w->g->values[v];
}

size_t lnw_n_consumers(wr *w, int32_t v)
{
    return (size_t)(w->cons_start[v + 1] - w->cons_start[v]);
}

bool lnw_shape_known(const gir_value *v)
{
    return v && v->shape.rank >= 0 && gir_shape_is_known(&v->shape);
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
    gir_value *v = lnw_V(w, vi);
    const char *node = v->name;
    if (w->is_output[vi] && v->kind != GIR_VALUE_INPUT) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, node, "a graph output that no operator computes (LightNet's outputs are the "
               "results of its ops)");
        return;
    }
    if (!lnw_shape_known(v)) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, node, "a graph input or weight of unknown shape (LightNet's create needs fixed "
               "dims; set them with --batch-size or input-shape)");
        return;
    }
    if (v->shape.rank < 1 || v->shape.rank > GIR_MAX_RANK) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, node, "a %d-D graph input or weight (LightNet tensors have 1 to 8 dimensions)",
               v->shape.rank);
        return;
    }
    if (!ln_dtype_name(v->dtype)) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, node, "dtype %s (LightNet has no such type)", gir_dtype_name(v->dtype));
        return;
    }
    if (gir_shape_numel(&v->shape) > INT32_MAX) {
        lnw_refuse(w, GIR_E_UNSUPPORTED, node, "a tensor of more than 2^31-1 elements (TensorLight counts them in an int)");
        return;
    }
    if (v->kind == GIR_VALUE_INPUT || v->kind == GIR_VALUE_INTERMEDIATE) {
        w->store[vi] = ST_INPUT;
        return;
    }
    gir_tensor *t = v->data;
    if (!t) {
        if (v->kind == GIR_VALUE_CONST)
            lnw_refuse(w, GIR_E_UNSUPPORTED, node, "a constant without data");
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
        lnw_refuse(w, e2.code, node, "data that cannot be loaded (%s)", e2.message ? e2.message : "?");
        gir_error_clear(&e2);
        return;
    }
    bool finite = true, exact = true;
    uint64_t cnt = t->nbytes / gir_dtype_size(t->dtype);
    const unsigned char *p = data;
    for (uint64_t i = 0; i < cnt && finite && exact; i++) {
        if (t->dtype == GIR_DT_F32) {
            finite = isfinite(gir_f32_from_bits(gir_le32(p + 4 * i)));
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
        lnw_refuse(w, GIR_E_UNSUPPORTED, node, "64-bit integer data beyond 2^53 (LightNet reads inline data as doubles "
               "and its .wts file holds only float32 and int8)");
        return;
    }
    if (!finite) {
        if (t->dtype == GIR_DT_F32 && name_ok_for_wts(v->name)) {
            w->store[vi] = ST_WTS; /* JSON has no NaN or infinity: bit patterns go to the .wts file */
            return;
        }
        lnw_refuse(w, GIR_E_UNSUPPORTED, node, "non-finite %s data (JSON numbers cannot hold NaN or infinity and the .wts "
               "file holds only float32 and int8)", gir_dtype_name(t->dtype));
        return;
    }
    w->store[vi] = ST_INLINE;
}

static double elem_double(gir_dtype dt, const unsigned char *p)
{
    switch (dt) {
    case GIR_DT_F32: return gir_f32_from_bits(gir_le32(p));
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

/* The data param of a create op whose data is elsewhere: the one it was
 * read from LightNet with (meta lightnet.data), else [0]. */
static void P_data_as_read(wr *w, const gir_value *v)
{
    const gir_attr *md = vmeta(v, "lightnet.data");
    if (md && md->type == GIR_ATTR_FLOATS && md->u.floats.n)
        lnw_P_nums(w, "data", md->u.floats.v, md->u.floats.n);
    else
        lnw_P_nums(w, "data", (double[]){ 0 }, 1);
}

gir_status lnw_emit_create(wr *w, int32_t vi)
{
    if (w->written[vi])
        return GIR_OK;
    w->written[vi] = true;
    w->root[vi] = vi;
    if (!w->emit)
        return GIR_OK;
    gir_value *v = lnw_V(w, vi);
    const gir_attr *mo = vmeta(v, "lightnet.op");
    char nb[512];
    char want[480];
    if (mo && mo->type == GIR_ATTR_STRING)
        snprintf(want, sizeof want, "%s", mo->u.s);
    else
        snprintf(want, sizeof want, "create_%.400s", v->name);
    int32_t saved = w->cur;
    w->cur = -1;
    const char *name = lnw_op_name(w, want, nb, sizeof nb);
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
            lnw_begin_op(w, name, create_optype(w, v, "arange"));
            OUT("dst", v->name);
            lnw_P_str(w, "dtype", dtn);
            lnw_P_num(w, "start", aa->u.floats.v[0]);
            lnw_P_num(w, "stop", aa->u.floats.v[1]);
            lnw_P_num(w, "step", aa->u.floats.v[2]);
            goto done;
        }
        st = ST_INLINE;
    }
    if (st == ST_ZEROS) {
        lnw_begin_op(w, name, create_optype(w, v, "zeros"));
        OUT("dst", v->name);
        lnw_P_str(w, "dtype", dtn);
        lnw_P_ints(w, "dims", dims, (size_t)v->shape.rank);
        goto done;
    }
    lnw_begin_op(w, name, create_optype(w, v, "create"));
    OUT("dst", v->name);
    lnw_P_str(w, "dtype", dtn);
    lnw_P_ints(w, "dims", dims, (size_t)v->shape.rank);
    double ran[2] = { 0, 0 };
    if (st == ST_RAN) {
        ln_ran_info(t, &ran[0], &ran[1]);
        lnw_P_nums(w, "ran", ran, 2);
        P_data_as_read(w, v);
        lnw_P_bool(w, "from_file", false);
        goto done;
    }
    const gir_attr *mr = vmeta(v, "lightnet.ran");
    if (st != ST_INLINE && mr && mr->type == GIR_ATTR_FLOATS && mr->u.floats.n == 2 &&
        mr->u.floats.v[0] <= mr->u.floats.v[1])
        lnw_P_nums(w, "ran", mr->u.floats.v, 2); /* from_file: LightNet ignores ran */
    else
        lnw_P_nums(w, "ran", ran, 2);
    if (st == ST_INLINE) {
        if (all_zero(data, t->nbytes)) {
            lnw_P_nums(w, "data", (double[]){ 0 }, 1);
        } else {
            double *d = malloc((cnt ? cnt : 1) * sizeof *d);
            if (!d) {
                s = nomem(w);
                goto out;
            }
            for (uint64_t i = 0; i < cnt; i++)
                d[i] = elem_double(v->dtype, (const unsigned char *)data + i * es);
            lnw_P_nums(w, "data", d, (size_t)cnt);
            free(d);
        }
        lnw_P_bool(w, "from_file", false);
    } else {
        P_data_as_read(w, v);
        lnw_P_bool(w, "from_file", true);
        if (st == ST_WTS) {
            if (!GIR_GROW(w->wts, w->cap_wts, w->n_wts + 1)) {
                s = nomem(w);
                goto out;
            }
            w->wts[w->n_wts++] = (ln_wts_item){ v->name, t };
        }
    }
done:
    s = lnw_end_op(w);
out:
    if (t && !loaded)
        gir_tensor_unload(t);
    return s;
}

/* ---- operators -------------------------------------------------------------- */

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
            gir_heap_push(heap, &hn, (int32_t)i);
    while (hn) {
        int32_t i = gir_heap_pop(heap, &hn);
        w->pos[i] = (int32_t)done;
        w->order[done++] = i;
        const gir_node *nd = g->nodes[i];
        for (size_t k = 0; k < nd->n_out; k++) {
            int32_t v = nd->out[k];
            if (v < 0)
                continue;
            for (int32_t c = w->cons_start[v]; c < w->cons_start[v + 1]; c++)
                if (--indeg[w->cons[c]] == 0)
                    gir_heap_push(heap, &hn, w->cons[c]);
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
    return c == 1 && lnw_norm_axis(v[0], rank) == axis;
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
        if (w->is_output[av] || lnw_n_consumers(w, av) != 1)
            continue;
        const gir_node *c = g->nodes[w->cons[w->cons_start[av]]];
        if (c->op != GIR_OP_Cast || gir_dtype_from_name(gir_attrs_get_string(&c->attrs, "to", "")) != GIR_DT_I32 ||
            w->group_of[w->cons[w->cons_start[av]]] >= 0)
            continue;
        int32_t x = a->in[0];
        int rank = g->values[x]->shape.rank;
        if (rank < 1)
            continue;
        int64_t axis = lnw_norm_axis(gir_attrs_get_int(&a->attrs, "axis", 0), rank);
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
        gir_status st = lnw_write_node(w, w->order[i]);
        if (st)
            return st;
    }
    /* graph inputs, weights and constants no op reads */
    w->cur = -1;
    for (size_t v = 0; v < w->g->n_values; v++) {
        if (w->g->values[v]->producer >= 0 || w->written[v])
            continue;
        gir_status st = lnw_emit_create(w, (int32_t)v);
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
            lnw_refuse(w, GIR_E_UNSUPPORTED, g->values[v]->name, "a name containing '\"' (LightNet's comment pre-pass "
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
