/* Writing canonical nodes as MXNet and NNVM operators, attribute by
 * attribute.  Attribute text read from a file of the same flavour (node
 * meta "<flavour>.attr.<key>") is written back verbatim when it still
 * means the node's current value, so a same-format round trip reproduces
 * the file; otherwise values are printed in Python style ("(1, 1)",
 * "True", "0.001").  An attribute equal to the format's default is left out
 * unless the source had it. */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- format attributes ----------------------------------------------------- */

typedef enum fk { FK_INT, FK_FLOAT, FK_BOOL, FK_TUPLE, FK_STR } fk;

#define NOFILL INT64_MIN

typedef struct fa {
    const char *key;
    fk kind;
    int64_t i;
    double f;
    bool f32;          /* FLOAT: print as the shortest float32 text */
    bool b;
    int none_b;        /* BOOL: what "None" stands for (-1: nothing) */
    const char *s;
    int64_t t[NN_MAX_TUPLE];
    size_t tn;
    int64_t fill;      /* TUPLE: what each element of "()" stands for */
    bool emit;         /* write even without source text (not the default, or required) */
    bool drop;         /* never write it, not even the source's text (done by other nodes) */
} fa;

typedef struct falist {
    fa a[24];
    size_t n;
} falist;

static fa *fa_add(falist *l, const char *key, fk kind, bool emit)
{
    fa *x = &l->a[l->n < 24 ? l->n++ : 23];
    memset(x, 0, sizeof *x);
    x->key = key;
    x->kind = kind;
    x->emit = emit;
    x->none_b = -1;
    x->fill = NOFILL;
    return x;
}

static void fa_int(falist *l, const char *key, int64_t v, bool emit)
{
    fa_add(l, key, FK_INT, emit)->i = v;
}

static void fa_float(falist *l, const char *key, double v, bool emit)
{
    fa_add(l, key, FK_FLOAT, emit)->f = v;
}

static void fa_bool(falist *l, const char *key, bool v, int none_b, bool emit)
{
    fa *x = fa_add(l, key, FK_BOOL, emit);
    x->b = v;
    x->none_b = none_b;
}

static void fa_tuple(falist *l, const char *key, const int64_t *v, size_t n, int64_t fill, bool emit)
{
    fa *x = fa_add(l, key, FK_TUPLE, emit);
    x->tn = n < NN_MAX_TUPLE ? n : NN_MAX_TUPLE;
    memcpy(x->t, v, x->tn * sizeof *v);
    x->fill = fill;
}

static void fa_str(falist *l, const char *key, const char *s, bool emit)
{
    fa_add(l, key, FK_STR, emit)->s = s;
}

static bool all_eq(const int64_t *v, size_t n, int64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != x)
            return false;
    return true;
}

/* Whether reading raw gives the value x stands for. */
static bool equiv(const char *raw, const fa *x)
{
    switch (x->kind) {
    case FK_INT: {
        int64_t v;
        return nn_parse_int(raw, &v) && v == x->i;
    }
    case FK_FLOAT: {
        double v;
        if (!nn_parse_float(raw, &v))
            return false;
        return x->f32 ? (float)v == (float)x->f : v == x->f;
    }
    case FK_BOOL: {
        bool v;
        if (nn_is_none(raw))
            return x->none_b >= 0 && (bool)x->none_b == x->b;
        return nn_parse_bool(raw, &v) && v == x->b;
    }
    case FK_TUPLE: {
        int64_t v[NN_MAX_TUPLE];
        size_t n;
        if (nn_is_none(raw))
            n = 0;
        else if (!nn_parse_tuple(raw, v, &n))
            return false;
        if (n == 0)
            return x->tn == 0 || (x->fill != NOFILL && all_eq(x->t, x->tn, x->fill));
        return n == x->tn && memcmp(v, x->t, n * sizeof *v) == 0;
    }
    case FK_STR:
        return strcmp(raw, x->s) == 0;
    }
    return false;
}

static char *print_fa(gir_arena *a, const fa *x)
{
    char buf[64];
    switch (x->kind) {
    case FK_INT:
        gir_fmt_int(buf, x->i);
        return gir_arena_strdup(a, buf);
    case FK_FLOAT:
        if (x->f32)
            gir_fmt_float(buf, (float)x->f, true);
        else
            nn_fmt_float(buf, x->f);
        return gir_arena_strdup(a, buf);
    case FK_BOOL:
        return gir_arena_strdup(a, nn_fmt_bool(x->b));
    case FK_TUPLE: {
        gir_buf b = GIR_BUF_INIT;
        nn_fmt_tuple(&b, x->t, x->tn);
        char *s = b.failed ? NULL : gir_arena_strdup(a, b.data);
        gir_buf_free(&b);
        return s;
    }
    case FK_STR:
        return gir_arena_strdup(a, x->s);
    }
    return NULL;
}

static const char *meta_s(const gir_attrs *m, const char *key)
{
    const gir_attr *a = gir_attrs_find(m, key);
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}

/* The raw text node n had for key in this flavour, or NULL. */
static const char *raw_attr(const nn_writer *w, const gir_node *n, const char *key)
{
    return nn_meta_attr(&n->meta, nn_meta_key(w->fl, NN_MK_ATTRS), key);
}

static bool same_op(const nn_writer *w, const gir_node *n, const char *op)
{
    const char *m = meta_s(&n->meta, nn_meta_key(w->fl, NN_MK_OP));
    return m && strcmp(m, op) == 0;
}

/* Sets f's attributes from l (and, for a node of the same flavour and
 * operator, the source's other attributes verbatim). */
static gir_status finish_attrs(nn_writer *w, const gir_node *n, nn_fnode *f, const falist *l, gir_error *err)
{
    bool same = n && same_op(w, n, f->op);
    size_t np = 0;
    const char *const *pairs = same ? nn_meta_pairs(&n->meta, nn_meta_key(w->fl, NN_MK_ATTRS), &np) : NULL;
    size_t cap = l->n + np / 2;
    f->keys = gir_arena_alloc(&w->arena, (cap ? cap : 1) * sizeof *f->keys);
    f->vals = gir_arena_alloc(&w->arena, (cap ? cap : 1) * sizeof *f->vals);
    if (!f->keys || !f->vals)
        return gir_nomem(err);
    f->n_attrs = 0;
    for (size_t i = 0; i < l->n; i++) {
        const fa *x = &l->a[i];
        if (x->drop)
            continue;
        const char *raw = same ? raw_attr(w, n, x->key) : NULL;
        const char *text = NULL;
        if (raw && equiv(raw, x))
            text = raw;
        else if (raw || x->emit)
            text = print_fa(&w->arena, x);
        else
            continue;
        if (!text)
            return gir_nomem(err);
        f->keys[f->n_attrs] = x->key;
        f->vals[f->n_attrs++] = text;
    }
    for (size_t i = 0; i + 1 < np; i += 2) {
        bool listed = false;
        for (size_t k = 0; k < l->n && !listed; k++)
            listed = strcmp(l->a[k].key, pairs[i]) == 0;
        if (listed)
            continue;
        f->keys[f->n_attrs] = pairs[i];
        f->vals[f->n_attrs++] = pairs[i + 1];
    }
    return GIR_OK;
}

/* ---- failures ----------------------------------------------------------------------- */

static gir_status unsup_attr(gir_error *err, const gir_node *n, const char *fmt, ...) GIR_PRINTF(3, 4);
static gir_status unsup_attr(gir_error *err, const gir_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = gir_vstrdupf(fmt, ap);
    va_end(ap);
    gir_fail(err, GIR_E_UNSUPPORTED_ATTR, "%s", what ? what : gir_op_name(n->op));
    free(what);
    return GIR_E_UNSUPPORTED_ATTR;
}

static gir_status unsup_op(nn_writer *w, gir_error *err, const gir_node *n)
{
    const char *why = gir_node_opaque_why(n);
    if (n->op == GIR_OP_OPAQUE)
        return gir_fail(err, GIR_E_UNSUPPORTED_OP, "%s (a %s operator kept verbatim%s%s)", n->opaque_op,
                        n->opaque_format ? n->opaque_format : "foreign", why ? ": " : "", why ? why : "");
    /* Operators the flavour lacks (float32 Erf is legalized as a rational
     * function before the writer sees it). */
    if (w->fl == NN_NNVM && n->op == GIR_OP_Erf)
        return gir_fail(err, GIR_E_UNSUPPORTED_OP, "Erf (NNVM has no erf operator; its rational form is for float32 "
                        "only)");
    return gir_fail(err, GIR_E_UNSUPPORTED_OP, "%s", gir_op_name(n->op));
}

/* ---- helpers -------------------------------------------------------------------------- */

static gir_status set_inputs(nn_writer *w, nn_fnode *f, const int32_t *v, size_t n, gir_error *err)
{
    f->in = gir_arena_alloc(&w->arena, (n ? n : 1) * sizeof *f->in);
    if (!f->in)
        return gir_nomem(err);
    for (size_t i = 0; i < n; i++) {
        f->in[i].value = v[i];
        f->in[i].xvar = -1;
    }
    f->n_in = n;
    return GIR_OK;
}

/* The node's inputs without omitted optional ones (-1). */
static gir_status node_inputs(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    int32_t tmp[64] = { 0 };
    int32_t *v = n->n_in <= 64 ? tmp : malloc(n->n_in * sizeof *v);
    if (!v)
        return gir_nomem(err);
    size_t k = 0;
    for (size_t i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0)
            v[k++] = n->in[i];
    gir_status st = set_inputs(w, f, v, k, err);
    if (v != tmp)
        free(v);
    return st;
}

static const gir_value *VAL(const nn_writer *w, int32_t v)
{
    return v >= 0 ? w->g->values[v] : NULL;
}

static const gir_attr *AT(const gir_node *n, const char *name)
{
    return gir_attrs_find(&n->attrs, name);
}

static int64_t ai(const gir_node *n, const char *name, int64_t d)
{
    return gir_attrs_get_int(&n->attrs, name, d);
}

static double af(const gir_node *n, const char *name, double d)
{
    return gir_attrs_get_float(&n->attrs, name, d);
}

/* An INTS attribute, or n = -1. */
static ptrdiff_t aints(const gir_node *n, const char *name, const int64_t **v)
{
    return gir_attrs_get_ints(&n->attrs, name, v);
}

static gir_status auto_pad_ok(const gir_node *n, gir_error *err)
{
    const char *ap = gir_attrs_get_string(&n->attrs, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0)
        return unsup_attr(err, n, "%s with auto_pad=%s", gir_op_name(n->op), ap);
    return GIR_OK;
}

/* Spatial parameters of Conv, ConvTranspose and the pools. */
typedef struct spat {
    size_t rank;
    int64_t kernel[8], strides[8], dil[8], pad[8], outpad[8];
    int64_t pads[16]; /* begins then ends, with allow_asym */
    bool asym;        /* some axis pads its ends differently */
} spat;

static gir_status spatial_of(const gir_node *n, const gir_value *w, spat *s, bool has_dil, bool has_outpad,
                             bool allow_asym, gir_error *err)
{
    const int64_t *k;
    ptrdiff_t nk = aints(n, "kernel_shape", &k);
    memset(s, 0, sizeof *s);
    if (nk < 0 && w && w->shape.rank >= 3) {
        s->rank = (size_t)w->shape.rank - 2;
        for (size_t i = 0; i < s->rank; i++)
            s->kernel[i] = w->shape.dims[i + 2];
        for (size_t i = 0; i < s->rank; i++)
            if (s->kernel[i] < 1)
                return unsup_attr(err, n, "%s without kernel_shape and a weight of unknown shape",
                                  gir_op_name(n->op));
    } else if (nk >= 1 && nk <= 3) {
        s->rank = (size_t)nk;
        memcpy(s->kernel, k, s->rank * sizeof *k);
    } else {
        return unsup_attr(err, n, "%s with %td spatial dimensions", gir_op_name(n->op), nk < 0 ? (ptrdiff_t)0 : nk);
    }
    const int64_t *v;
    ptrdiff_t nv = aints(n, "strides", &v);
    for (size_t i = 0; i < s->rank; i++)
        s->strides[i] = nv == (ptrdiff_t)s->rank ? v[i] : 1;
    nv = aints(n, "dilations", &v);
    for (size_t i = 0; i < s->rank; i++)
        s->dil[i] = nv == (ptrdiff_t)s->rank ? v[i] : 1;
    if (!has_dil && !all_eq(s->dil, s->rank, 1))
        return unsup_attr(err, n, "%s with dilations other than 1", gir_op_name(n->op));
    nv = aints(n, "pads", &v);
    for (size_t i = 0; i < s->rank; i++) {
        int64_t b = nv == (ptrdiff_t)(2 * s->rank) ? v[i] : 0, e = nv == (ptrdiff_t)(2 * s->rank) ? v[i + s->rank] : 0;
        s->pads[i] = b;
        s->pads[i + s->rank] = e;
        s->asym |= b != e;
        if (b != e && !allow_asym) {
            char txt[128] = "[";
            for (ptrdiff_t j = 0; j < nv; j++)
                snprintf(txt + strlen(txt), sizeof txt - strlen(txt), "%s%lld", j ? "," : "", (long long)v[j]);
            strncat(txt, "]", sizeof txt - strlen(txt) - 1);
            return unsup_attr(err, n, "%s with asymmetric pads=%s", gir_op_name(n->op), txt);
        }
        s->pad[i] = b;
    }
    nv = aints(n, "output_padding", &v);
    for (size_t i = 0; i < s->rank; i++)
        s->outpad[i] = nv == (ptrdiff_t)s->rank ? v[i] : 0;
    if (!has_outpad && !all_eq(s->outpad, s->rank, 0))
        return unsup_attr(err, n, "%s with output_padding", gir_op_name(n->op));
    return auto_pad_ok(n, err);
}

/* Output channels / units: from the weight's shape, else the source text. */
static gir_status count_of(const nn_writer *w, const gir_node *n, int32_t wv, int dim, const char *raw_key,
                           const char *what, int64_t *out, gir_error *err)
{
    const gir_value *v = VAL(w, wv);
    if (v && v->shape.rank > dim && v->shape.dims[dim] > 0) {
        *out = v->shape.dims[dim];
        return GIR_OK;
    }
    const char *raw = raw_attr(w, n, raw_key);
    if (raw && nn_parse_int(raw, out) && *out > 0)
        return GIR_OK;
    return unsup_attr(err, n, "%s whose weight has an unknown shape (%s needs it)", gir_op_name(n->op), what);
}

static bool is_mx(const nn_writer *w)
{
    return w->fl == NN_MXNET;
}

/* ---- operators ----------------------------------------------------------------------------- */

static gir_status wr_conv(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    bool tr = n->op == GIR_OP_ConvTranspose;
    spat s;
    TRY(spatial_of(n, VAL(w, n->n_in > 1 ? n->in[1] : -1), &s, true, tr, false, err));
    if (tr && AT(n, "output_shape"))
        return unsup_attr(err, n, "ConvTranspose with output_shape");
    int64_t group = ai(n, "group", 1);
    bool bias = n->n_in > 2 && n->in[2] >= 0;
    int64_t ch;
    falist l = { .n = 0 };
    if (!is_mx(w) && s.rank != 2)
        return unsup_attr(err, n, "%s with %zu spatial dimensions (NNVM has 2-d only)", gir_op_name(n->op), s.rank);
    /* the weight is [out, in/group, k...], transposed [in, out/group, k...] */
    const char *ch_key = is_mx(w) ? "num_filter" : "channels";
    TRY(count_of(w, n, n->in[1], tr ? 1 : 0, ch_key, ch_key, &ch, err));
    if (tr)
        ch *= group;
    if (is_mx(w)) {
        f->op = tr ? "Deconvolution" : "Convolution";
        fa_tuple(&l, "kernel", s.kernel, s.rank, NOFILL, true);
        fa_tuple(&l, "stride", s.strides, s.rank, 1, !all_eq(s.strides, s.rank, 1));
        fa_tuple(&l, "dilate", s.dil, s.rank, 1, !all_eq(s.dil, s.rank, 1));
        fa_tuple(&l, "pad", s.pad, s.rank, 0, !all_eq(s.pad, s.rank, 0));
        if (tr)
            fa_tuple(&l, "adj", s.outpad, s.rank, 0, !all_eq(s.outpad, s.rank, 0));
        fa_int(&l, "num_filter", ch, true);
        fa_int(&l, "num_group", group, group != 1);
        fa_bool(&l, "no_bias", !bias, -1, tr ? bias : !bias);
    } else {
        f->op = tr ? "conv2d_transpose" : "conv2d";
        fa_int(&l, "channels", ch, true);
        fa_tuple(&l, "kernel_size", s.kernel, 2, NOFILL, true);
        fa_tuple(&l, "strides", s.strides, 2, 1, !all_eq(s.strides, 2, 1));
        fa_tuple(&l, "padding", s.pad, 2, 0, !all_eq(s.pad, 2, 0));
        if (tr)
            fa_tuple(&l, "output_padding", s.outpad, 2, 0, !all_eq(s.outpad, 2, 0));
        fa_tuple(&l, "dilation", s.dil, 2, 1, !all_eq(s.dil, 2, 1));
        fa_int(&l, "groups", group, group != 1);
        fa_bool(&l, "use_bias", bias, -1, !bias);
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_gemm(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    bool bias = n->n_in > 2 && n->in[2] >= 0;
    if (ai(n, "transA", 0) != 0 || ai(n, "transB", 0) != 1)
        return unsup_attr(err, n, "Gemm with transA=%lld, transB=%lld (dense needs 0, 1)",
                          (long long)ai(n, "transA", 0), (long long)ai(n, "transB", 0));
    if (af(n, "alpha", 1.0) != 1.0 || (bias && af(n, "beta", 1.0) != 1.0))
        return unsup_attr(err, n, "Gemm with alpha or beta other than 1");
    int64_t units;
    falist l = { .n = 0 };
    int32_t in[3] = { n->in[0], n->in[1], bias ? n->in[2] : -1 };
    if (is_mx(w)) {
        f->op = "FullyConnected";
        TRY(count_of(w, n, n->in[1], 0, "num_hidden", "num_hidden", &units, err));
        int32_t fl = nn_fc_flatten_of(w, n);
        if (fl >= 0)
            in[0] = w->g->nodes[fl]->in[0];
        fa_int(&l, "num_hidden", units, true);
        fa_bool(&l, "no_bias", !bias, -1, !bias);
        fa_bool(&l, "flatten", fl >= 0, -1, fl < 0);
    } else {
        f->op = "dense";
        TRY(count_of(w, n, n->in[1], 0, "units", "units", &units, err));
        fa_int(&l, "units", units, true);
        fa_bool(&l, "use_bias", bias, -1, !bias);
    }
    TRY(set_inputs(w, f, in, bias ? 3 : 2, err));
    return finish_attrs(w, n, f, &l, err);
}

/* Whether value v is a constant whose every element is x. */
static bool const_all(const gir_value *v, float x)
{
    if (!v || v->kind != GIR_VALUE_CONST || !v->data || v->data->dtype != GIR_DT_F32)
        return false;
    const void *p;
    bool loaded = v->data->data != NULL;
    if (gir_tensor_load(v->data, &p, NULL))
        return false;
    const float *d = p;
    size_t n = (size_t)(v->data->nbytes / 4);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        ok = d[i] == x;
    if (!loaded)
        gir_tensor_unload(v->data);
    return ok;
}

/* The variable a BN's constant scale (ones) or bias (zeros) stands for. */
static int32_t ignored_var(const nn_writer *w, const gir_node *n, const char *meta, int32_t in, float x)
{
    const char *name = meta_s(&n->meta, meta);
    if (!name || !const_all(VAL(w, in), x))
        return -1;
    int32_t v = gir_graph_value_index(w->g, name);
    return v >= 0 && w->g->values[v]->producer < 0 ? v : -1;
}

static gir_status wr_bn(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (n->n_out != 1)
        return unsup_attr(err, n, "BatchNormalization with running statistics outputs");
    int32_t in[5];
    for (size_t i = 0; i < 5; i++)
        in[i] = i < n->n_in ? n->in[i] : -1;
    int32_t g = ignored_var(w, n, NN_META_IGNORED_GAMMA, in[1], 1.0f);
    int32_t b = ignored_var(w, n, NN_META_IGNORED_BETA, in[2], 0.0f);
    double eps = af(n, "epsilon", 1e-5), mom = af(n, "momentum", 0.9);
    falist l = { .n = 0 };
    size_t nin = 5;
    if (g >= 0)
        in[1] = g;
    if (is_mx(w)) {
        f->op = "BatchNorm";
        fa_float(&l, "eps", eps, eps != 1e-3);
        fa_float(&l, "momentum", mom, mom != 0.9);
        fa_bool(&l, "fix_gamma", g >= 0, 1, g < 0);
        /* An MXNet 0.8 file had no auxiliary inputs; the loader makes them. */
        const gir_attr *ver = gir_attrs_find(&w->g->meta, "mxnet.version");
        const char *src = meta_s(&w->g->meta, "source.format");
        if (!ver && src && strcmp(src, "mxnet") == 0 && meta_s(&w->g->values[in[3]]->meta, "mxnet.synthesized") &&
            meta_s(&w->g->values[in[4]]->meta, "mxnet.synthesized"))
            nin = 3;
    } else {
        f->op = "batch_norm";
        if (b >= 0)
            in[2] = b;
        fa_float(&l, "epsilon", eps, eps != 1e-5);
        fa_float(&l, "momentum", mom, mom != 0.9);
        fa_bool(&l, "center", b < 0, -1, b >= 0);
        fa_bool(&l, "scale", g < 0, -1, g >= 0);
    }
    TRY(set_inputs(w, f, in, nin, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_pool(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    bool global = n->op == GIR_OP_GlobalMaxPool || n->op == GIR_OP_GlobalAveragePool;
    bool is_max = n->op == GIR_OP_MaxPool || n->op == GIR_OP_GlobalMaxPool;
    if (n->n_out != 1)
        return unsup_attr(err, n, "MaxPool with an Indices output");
    falist l = { .n = 0 };
    spat s = { 0 };
    if (!global) {
        /* NNVM's pools take (top, left, bottom, right) padding */
        TRY(spatial_of(n, NULL, &s, n->op == GIR_OP_MaxPool, false, !is_mx(w), err));
        if (ai(n, "storage_order", 0) != 0)
            return unsup_attr(err, n, "MaxPool with storage_order=1");
    }
    bool ceil = ai(n, "ceil_mode", 0) != 0;
    bool cip = ai(n, "count_include_pad", 0) != 0;
    if (is_mx(w)) {
        f->op = "Pooling";
        if (global) {
            fa_bool(&l, "global_pool", true, -1, true);
        } else {
            fa_tuple(&l, "kernel", s.kernel, s.rank, NOFILL, true);
            fa_tuple(&l, "stride", s.strides, s.rank, 1, !all_eq(s.strides, s.rank, 1));
            fa_tuple(&l, "pad", s.pad, s.rank, 0, !all_eq(s.pad, s.rank, 0));
            fa_str(&l, "pooling_convention", ceil ? "full" : "valid", ceil);
            fa_bool(&l, "global_pool", false, -1, false);
            if (!is_max)
                fa_bool(&l, "count_include_pad", cip, 1, !cip);
        }
        fa_str(&l, "pool_type", is_max ? "max" : "avg", !is_max);
    } else {
        if (global) {
            f->op = is_max ? "global_max_pool2d" : "global_avg_pool2d";
        } else {
            if (s.rank != 2)
                return unsup_attr(err, n, "%s with %zu spatial dimensions (NNVM has 2-d only)", gir_op_name(n->op),
                                  s.rank);
            f->op = is_max ? "max_pool2d" : "avg_pool2d";
            fa_tuple(&l, "pool_size", s.kernel, 2, NOFILL, true);
            fa_tuple(&l, "strides", s.strides, 2, 1, !all_eq(s.strides, 2, 1));
            if (s.asym)
                fa_tuple(&l, "padding", s.pads, 4, NOFILL, true);
            else
                fa_tuple(&l, "padding", s.pad, 2, 0, !all_eq(s.pad, 2, 0));
            fa_bool(&l, "ceil_mode", ceil, -1, ceil);
            if (!is_max)
                fa_bool(&l, "count_include_pad", cip, -1, cip);
        }
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

/* The operator name to write: the source's if it is one of the names, else
 * the first. NULL when the flavour has none. */
static const char *pick(const nn_writer *w, const gir_node *n, const char *const *names)
{
    const char *m = meta_s(&n->meta, nn_meta_key(w->fl, NN_MK_OP));
    for (size_t i = 0; m && names[i]; i++)
        if (strcmp(names[i], m) == 0)
            return names[i];
    return names[0];
}

/* The name the flavour's operator table gives n's op: the source's
 * spelling when the table has it, else the preferred one (NULL: none). */
static const gir_op_map *alias_row(const nn_writer *w, const gir_node *n)
{
    return gir_map_write_name(is_mx(w) ? nn_mxnet_ops : nn_nnvm_ops, n->op,
                              meta_s(&n->meta, nn_meta_key(w->fl, NN_MK_OP)));
}

static const char *pick_alias(const nn_writer *w, const gir_node *n)
{
    const gir_op_map *row = alias_row(w, n);
    return row ? row->format_op : NULL;
}

/* The engine's access to the attributes written (gir_attr_io): NNVM and
 * MXNet leave a format default out unless the source wrote it. */
static gir_status attr_put(void *ctx, const char *key, gir_attr_conv conv, int64_t i, double f, bool is_default,
                           gir_error *err)
{
    (void)err;
    if (conv == GIR_CONV_INT)
        fa_int(ctx, key, i, !is_default);
    else
        fa_float(ctx, key, f, !is_default);
    return GIR_OK;
}

static gir_status wr_unary(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    /* the plain rows, MXNet's Activation and Flatten */
    const gir_op_map *row = alias_row(w, n);
    const char *op = row ? row->format_op : NULL;
    if (!row || (!(row->plain & GIR_MAP_WRITE) && n->op != GIR_OP_Flatten && strcmp(op, "Activation") != 0))
        return unsup_op(w, err, n);
    falist l = { .n = 0 };
    f->op = op;
    if (strcmp(op, "Activation") == 0) {
        const char *t = n->op == GIR_OP_Relu      ? "relu"
                      : n->op == GIR_OP_Sigmoid   ? "sigmoid"
                      : n->op == GIR_OP_Tanh      ? "tanh"
                      : n->op == GIR_OP_Softplus  ? "softrelu"
                                                  : "softsign";
        fa_str(&l, "act_type", t, true);
    }
    if (n->op == GIR_OP_Flatten && ai(n, "axis", 1) != 1)
        return unsup_attr(err, n, "Flatten with axis=%lld", (long long)ai(n, "axis", 1));
    if (row->plain & GIR_MAP_WRITE) {
        gir_attr_io io = { &l, NULL, attr_put };
        TRY(gir_map_write_attrs(row, &io, n, err));
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_leaky(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    falist l = { .n = 0 };
    double alpha = af(n, "alpha", n->op == GIR_OP_LeakyRelu ? 0.01 : 1.0);
    if (is_mx(w)) {
        f->op = "LeakyReLU";
        const char *t = n->op == GIR_OP_LeakyRelu ? "leaky" : n->op == GIR_OP_Elu ? "elu" : "selu";
        if (n->op == GIR_OP_Selu) {
            const gir_attr *a = AT(n, "alpha"), *g = AT(n, "gamma");
            if ((a && fabs(a->u.f - 1.6732632423543772) > 1e-6) || (g && fabs(g->u.f - 1.0507009873554805) > 1e-6))
                return unsup_attr(err, n, "Selu with alpha or gamma other than the standard constants");
        }
        fa_str(&l, "act_type", t, n->op != GIR_OP_LeakyRelu);
        if (n->op != GIR_OP_Selu)
            fa_float(&l, "slope", alpha, alpha != 0.25);
    } else {
        /* NNVM's leaky_relu is a plain row; Elu and Selu have none */
        return wr_unary(w, n, f, err);
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_prelu(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    int32_t u = nn_prelu_slope_of(w, n);
    int32_t in[2] = { n->in[0], u >= 0 ? w->g->nodes[u]->in[0] : n->in[1] };
    const gir_value *x = VAL(w, n->in[0]), *s = VAL(w, in[1]);
    /* A slope per channel (axis 1) or a single one. */
    bool ok = u >= 0 || (s && x && s->shape.rank == 1 && (x->shape.rank == 2 || s->shape.dims[0] == 1));
    if (!ok) {
        char sh[96];
        return unsup_attr(err, n, "PRelu with a slope of shape %s (%s takes one slope per channel of axis 1, "
                          "as [C] or an Unsqueeze of it to [C,1,..])",
                          s ? gir_shape_str(&s->shape, sh, sizeof sh) : "?", is_mx(w) ? "LeakyReLU" : "prelu");
    }
    falist l = { .n = 0 };
    if (is_mx(w)) {
        f->op = "LeakyReLU";
        fa_str(&l, "act_type", "prelu", true);
    } else {
        f->op = "prelu";
        fa_int(&l, "axis", 1, false);
    }
    TRY(set_inputs(w, f, in, 2, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_softmax(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    int64_t axis = ai(n, "axis", -1);
    falist l = { .n = 0 };
    bool log = n->op == GIR_OP_LogSoftmax;
    if (is_mx(w)) {
        static const char *const so[] = { "SoftmaxOutput", "Softmax", NULL };
        const char *p = log ? NULL : pick(w, n, so);
        bool was_so = p && same_op(w, n, p);
        const char *mode = nn_meta_attr(&n->meta, "mxnet.attrs", "multi_output");
        bool multi = false;
        if (mode)
            nn_parse_bool(mode, &multi);
        if (was_so && (axis == 1 || axis == -1)) {
            f->op = p;
            fa_bool(&l, "preserve_shape", axis == -1, 0, axis == -1);
            if (axis == -1)
                fa_bool(&l, "multi_output", false, 0, false);
            /* The label input goes back in. */
            const char *label = meta_s(&n->meta, "mxnet.label");
            TRY(node_inputs(w, n, f, err));
            if (label) {
                nn_fref *in = gir_arena_alloc(&w->arena, 2 * sizeof *in);
                if (!in)
                    return gir_nomem(err);
                in[0] = f->in[0];
                int32_t v = gir_graph_value_index(w->g, label);
                in[1].value = v >= 0 && w->g->values[v]->producer < 0 ? v : -1;
                in[1].xvar = -1;
                if (in[1].value < 0) {
                    if (!GIR_GROW(w->xv, w->cap_xv, w->n_xv + 1))
                        return gir_nomem(err);
                    nn_xvar *x = &w->xv[w->n_xv];
                    memset(x, 0, sizeof *x);
                    x->name = label;
                    size_t cnt;
                    const char *const *pairs = nn_meta_pairs(&n->meta, "mxnet.label.attrs", &cnt);
                    x->keys = gir_arena_alloc(&w->arena, (cnt ? cnt : 1) * sizeof *x->keys);
                    x->vals = gir_arena_alloc(&w->arena, (cnt ? cnt : 1) * sizeof *x->vals);
                    if (!x->keys || !x->vals)
                        return gir_nomem(err);
                    for (size_t i = 0; i + 1 < cnt; i += 2) {
                        x->keys[x->n_attrs] = pairs[i];
                        x->vals[x->n_attrs++] = pairs[i + 1];
                    }
                    in[1].xvar = (int32_t)w->n_xv++;
                }
                f->in = in;
                f->n_in = 2;
            }
            return finish_attrs(w, n, f, &l, err);
        }
        f->op = log ? "log_softmax" : "softmax";
        fa_add(&l, "temperature", FK_STR, false)->drop = true; /* a Div node of its own now */
    } else {
        f->op = log ? "log_softmax" : "softmax";
    }
    fa_int(&l, "axis", axis, axis != -1);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_concat(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    falist l = { .n = 0 };
    int64_t axis = ai(n, "axis", 1);
    size_t k = 0;
    for (size_t i = 0; i < n->n_in; i++)
        k += n->in[i] >= 0;
    f->op = pick_alias(w, n);
    if (n->op == GIR_OP_Concat) {
        if (is_mx(w)) {
            fa_int(&l, "dim", axis, axis != 1);
            fa_int(&l, "num_args", (int64_t)k, true);
        } else {
            fa_int(&l, "axis", axis, axis != 1);
        }
    } else {
        fa_int(&l, "num_args", (int64_t)k, true);
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

/* A rank-0 float constant's value. */
static bool scalar_const(const nn_writer *w, int32_t v, double *x, bool *f32)
{
    const gir_value *val = VAL(w, v);
    if (!val || val->kind != GIR_VALUE_CONST || !val->data || val->data->shape.rank != 0 ||
        (val->data->dtype != GIR_DT_F32 && val->data->dtype != GIR_DT_F64))
        return false;
    const void *p;
    bool loaded = val->data->data != NULL;
    if (gir_tensor_load(val->data, &p, NULL))
        return false;
    *f32 = val->data->dtype == GIR_DT_F32;
    *x = *f32 ? (double)*(const float *)p : *(const double *)p;
    if (!loaded)
        gir_tensor_unload(val->data);
    return isfinite(*x);
}

typedef struct binop {
    gir_op op;
    const char *mx_elem, *mx_bcast, *mx_scalar, *mx_rscalar;
    const char *nv_elem, *nv_bcast, *nv_scalar, *nv_rscalar;
    const char *const mx_alias[4];
} binop;

static const binop binops[] = {
    { GIR_OP_Add, "elemwise_add", "broadcast_add", "_plus_scalar", NULL, "elemwise_add", "broadcast_add",
      "__add_scalar__", NULL, { "_plus", "_Plus", "_add", "broadcast_plus" } },
    { GIR_OP_Sub, "elemwise_sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar", "elemwise_sub",
      "broadcast_sub", "__sub_scalar__", "__rsub_scalar__", { "_minus", "_Minus", "_sub", "broadcast_minus" } },
    { GIR_OP_Mul, "elemwise_mul", "broadcast_mul", "_mul_scalar", NULL, "elemwise_mul", "broadcast_mul",
      "__mul_scalar__", NULL, { "_mul", "_Mul", NULL } },
    { GIR_OP_Div, "elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar", "elemwise_div", "broadcast_div",
      "__div_scalar__", "__rdiv_scalar__", { "_div", "_Div", NULL } },
    { GIR_OP_Pow, "_power", "broadcast_power", "_power_scalar", "_rpower_scalar", "elemwise_pow", "broadcast_pow",
      "__pow_scalar__", "__rpow_scalar__", { NULL } },
    { GIR_OP_Max, "_maximum", "broadcast_maximum", "_maximum_scalar", NULL, NULL, "broadcast_max", NULL, NULL,
      { NULL } },
    { GIR_OP_Min, "_minimum", "broadcast_minimum", "_minimum_scalar", NULL, NULL, "broadcast_min", NULL, NULL,
      { NULL } },
};

static gir_status wr_binary(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    const binop *b = NULL;
    for (size_t i = 0; i < sizeof binops / sizeof *binops; i++)
        if (binops[i].op == n->op)
            b = &binops[i];
    if (!b || n->n_in != 2 || n->in[0] < 0 || n->in[1] < 0)
        return unsup_attr(err, n, "%s with %zu inputs", gir_op_name(n->op), n->n_in);
    bool mx = is_mx(w);
    falist l = { .n = 0 };
    double x;
    bool f32;
    const char *sc = mx ? b->mx_scalar : b->nv_scalar, *rsc = mx ? b->mx_rscalar : b->nv_rscalar;
    int32_t data = -1;
    if (sc && scalar_const(w, n->in[1], &x, &f32) && !scalar_const(w, n->in[0], &(double){ 0 }, &(bool){ 0 })) {
        f->op = sc;
        data = n->in[0];
    } else if (rsc && scalar_const(w, n->in[0], &x, &f32) && !scalar_const(w, n->in[1], &(double){ 0 }, &(bool){ 0 })) {
        f->op = rsc;
        data = n->in[1];
    }
    if (data >= 0) {
        fa *s = fa_add(&l, "scalar", FK_FLOAT, true);
        s->f = x;
        s->f32 = f32;
        TRY(set_inputs(w, f, &data, 1, err));
        return finish_attrs(w, n, f, &l, err);
    }
    const char *elem = mx ? b->mx_elem : b->nv_elem, *bc = mx ? b->mx_bcast : b->nv_bcast;
    const char *names[8] = { NULL };
    size_t k = 0;
    const gir_value *a0 = VAL(w, n->in[0]), *a1 = VAL(w, n->in[1]);
    bool same = a0->shape.rank >= 0 && gir_shape_is_known(&a0->shape) && gir_shape_equal(&a0->shape, &a1->shape);
    if (elem && same)
        names[k++] = elem;
    names[k++] = bc;
    if (elem && !same)
        names[k++] = elem;
    for (size_t i = 0; mx && i < 4 && b->mx_alias[i]; i++)
        names[k++] = b->mx_alias[i];
    f->op = pick(w, n, names);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_dropout(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (n->n_out != 1 || ai(n, "training_mode", 0) != 0)
        return unsup_attr(err, n, "Dropout in training mode or with a mask output");
    double p = af(n, "ratio", 0.5);
    falist l = { .n = 0 };
    f->op = is_mx(w) ? "Dropout" : "dropout";
    fa_float(&l, is_mx(w) ? "p" : "rate", p, p != 0.5);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_reshape(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    const int64_t *s;
    ptrdiff_t k = aints(n, "shape", &s);
    if (k < 1 || k > NN_MAX_TUPLE)
        return unsup_attr(err, n, "Reshape without a static shape");
    if (ai(n, "allowzero", 0) != 0)
        return unsup_attr(err, n, "Reshape with allowzero=1");
    falist l = { .n = 0 };
    f->op = pick_alias(w, n);
    /* The source's special codes, while they still give this shape. */
    const char *raw = same_op(w, n, f->op) ? raw_attr(w, n, "shape") : NULL;
    const char *rev = raw_attr(w, n, "reverse");
    const gir_value *x = VAL(w, n->in[0]);
    int64_t code[NN_MAX_TUPLE], dims[GIR_MAX_RANK];
    size_t nc;
    int rank;
    bool r = false;
    if (raw && (!rev || (nn_parse_bool(rev, &r) && !r)) && nn_parse_tuple(raw, code, &nc) && x &&
        gir_shape_is_known(&x->shape) && nn_mx_reshape_dims(code, nc, &x->shape, dims, &rank) && rank == k &&
        memcmp(dims, s, (size_t)k * sizeof *s) == 0)
        fa_str(&l, "shape", raw, true);
    else
        fa_tuple(&l, "shape", s, (size_t)k, NOFILL, true);
    if (is_mx(w))
        fa_bool(&l, "reverse", false, 0, false);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

/* Transpose (perm) as transpose(axes), Squeeze (axes) as squeeze(axis):
 * an optional list of at most 16 axes. */
static gir_status wr_axes_list(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    bool tr = n->op == GIR_OP_Transpose;
    const int64_t *a;
    ptrdiff_t k = aints(n, tr ? "perm" : "axes", &a);
    falist l = { .n = 0 };
    f->op = tr ? "transpose" : "squeeze";
    if (k > NN_MAX_TUPLE)
        return unsup_attr(err, n, "%s of more than 16 axes", tr ? "Transpose" : "Squeeze");
    if (k > 0)
        fa_tuple(&l, tr ? "axes" : "axis", a, (size_t)k, NOFILL, true);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

/* MXNet Pad: a 4-d or 5-d input padded on its spatial axes (pad_width is
 * (before, after) per axis, N and C zero), constant, edge or reflect.  NNVM
 * has no mapping here (its pad is constant only, with nested tuples). */
static gir_status wr_pad(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (!is_mx(w))
        return unsup_op(w, err, n);
    const gir_value *x = VAL(w, n->in[0]);
    int r = x ? x->shape.rank : -1;
    const int64_t *p;
    ptrdiff_t np = aints(n, "pads", &p);
    if ((r != 4 && r != 5) || np != 2 * r)
        return unsup_attr(err, n, "Pad of a rank-%d tensor (MXNet pads 4-d and 5-d ones)", r);
    int64_t pw[2 * 5];
    for (int i = 0; i < r; i++) {
        if (p[i] < 0 || p[r + i] < 0)
            return unsup_attr(err, n, "Pad with negative pads");
        pw[2 * i] = p[i];
        pw[2 * i + 1] = p[r + i];
    }
    if (pw[0] || pw[1] || pw[2] || pw[3])
        return unsup_attr(err, n, "Pad of the batch or channel axis (MXNet pads the spatial axes)");
    const char *mode = gir_attrs_get_string(&n->attrs, "mode", "constant");
    double cv = af(n, "constant_value", 0.0);
    bool constant = strcmp(mode, "constant") == 0;
    if (!constant && strcmp(mode, "edge") != 0 && strcmp(mode, "reflect") != 0)
        return unsup_attr(err, n, "Pad in mode %s", mode);
    if (constant && !isfinite(cv))
        return unsup_attr(err, n, "Pad with constant_value %g (MXNet's parameter parser is not known to read it)",
                          cv);
    falist l = { .n = 0 };
    f->op = "Pad";
    fa_str(&l, "mode", mode, true);
    fa_tuple(&l, "pad_width", pw, 2 * (size_t)r, NOFILL, true);
    fa_float(&l, "constant_value", cv, constant && cv != 0.0);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_clip(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    const gir_attr *lo = AT(n, "min"), *hi = AT(n, "max");
    if (!lo || !hi)
        return unsup_attr(err, n, "Clip without both min and max");
    falist l = { .n = 0 };
    f->op = "clip";
    fa_float(&l, "a_min", gir_attrs_get_float(&n->attrs, "min", 0), true);
    fa_float(&l, "a_max", gir_attrs_get_float(&n->attrs, "max", 0), true);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_unsqueeze(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    const int64_t *a;
    ptrdiff_t k = aints(n, "axes", &a);
    bool consecutive = k >= 1 && a[0] >= 0;
    for (ptrdiff_t i = 1; consecutive && i < k; i++)
        consecutive = a[i] == a[0] + i;
    if (!consecutive || (is_mx(w) && k != 1))
        return unsup_attr(err, n, "Unsqueeze with axes other than %s", is_mx(w) ? "one non-negative axis"
                                                                               : "consecutive non-negative axes");
    falist l = { .n = 0 };
    f->op = "expand_dims";
    fa_int(&l, "axis", a[0], true);
    if (!is_mx(w))
        fa_int(&l, "num_newaxis", k, k != 1);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_split(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (AT(n, "split"))
        return unsup_attr(err, n, "Split with unequal parts (split sizes)");
    int64_t axis = ai(n, "axis", 0);
    falist l = { .n = 0 };
    f->op = pick_alias(w, n);
    if (is_mx(w)) {
        fa_int(&l, "num_outputs", (int64_t)n->n_out, true);
        fa_int(&l, "axis", axis, axis != 1);
        fa_bool(&l, "squeeze_axis", false, 0, false); /* squeezing is the Squeeze nodes' */
    } else {
        fa_int(&l, "indices_or_sections", (int64_t)n->n_out, true);
        fa_int(&l, "axis", axis, axis != 1);
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

#define NN_SLICE_END INT32_MAX

/* Slice -> strided_slice (NNVM: begin/end/stride over axes 0..k, untouched
 * axes 0:INT32_MAX:1) or slice_axis (MXNet: one axis, step 1). */
static gir_status wr_slice(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    ptrdiff_t k = aints(n, "starts", &st), ke = aints(n, "ends", &en);
    ptrdiff_t ka = aints(n, "axes", &ax), ks = aints(n, "steps", &sp);
    if (k < 1 || ke != k || (ka >= 0 && ka != k) || (ks >= 0 && ks != k) || k > NN_MAX_TUPLE)
        return unsup_attr(err, n, "Slice with starts, ends, axes and steps of different lengths");
    const gir_value *x = VAL(w, n->in[0]);
    int rank = x ? x->shape.rank : -1;
    int64_t axes[NN_MAX_TUPLE], steps[NN_MAX_TUPLE];
    int64_t max_axis = -1;
    for (ptrdiff_t i = 0; i < k; i++) {
        axes[i] = ka >= 0 ? ax[i] : i;
        steps[i] = ks >= 0 ? sp[i] : 1;
        if (axes[i] < 0 && rank > 0)
            axes[i] += rank;
        if (axes[i] < 0 || axes[i] >= NN_MAX_TUPLE)
            return unsup_attr(err, n, "Slice with a negative axis on an input of unknown rank");
        for (ptrdiff_t j = 0; j < i; j++)
            if (axes[j] == axes[i])
                return unsup_attr(err, n, "Slice with a repeated axis");
        if (axes[i] > max_axis)
            max_axis = axes[i];
    }
    falist l = { .n = 0 };
    if (is_mx(w) && (k != 1 || steps[0] != 1 || same_op(w, n, "slice"))) {
        /* slice(begin, end, step) over axes 0..max, None for the whole axis */
        gir_buf bb = GIR_BUF_INIT, eb = GIR_BUF_INIT, sb = GIR_BUF_INIT;
        bool any_step = false;
        for (int64_t a = 0; a <= max_axis; a++) {
            ptrdiff_t j = -1;
            for (ptrdiff_t i = 0; i < k; i++)
                if (axes[i] == a)
                    j = i;
            const char *sep = a ? ", " : "";
            if (j < 0) {
                gir_buf_printf(&bb, "%sNone", sep);
                gir_buf_printf(&eb, "%sNone", sep);
                gir_buf_printf(&sb, "%sNone", sep);
                continue;
            }
            gir_buf_printf(&bb, "%s%lld", sep, (long long)st[j]);
            if (en[j] >= NN_SLICE_END && steps[j] > 0)
                gir_buf_printf(&eb, "%sNone", sep);
            else
                gir_buf_printf(&eb, "%s%lld", sep, (long long)en[j]);
            gir_buf_printf(&sb, "%s%lld", sep, (long long)steps[j]);
            any_step = any_step || steps[j] != 1;
        }
        char *bt = bb.failed ? NULL : gir_arena_printf(&w->arena, "(%s%s)", bb.data, max_axis == 0 ? "," : "");
        char *et = eb.failed ? NULL : gir_arena_printf(&w->arena, "(%s%s)", eb.data, max_axis == 0 ? "," : "");
        char *stt = sb.failed ? NULL : gir_arena_printf(&w->arena, "(%s%s)", sb.data, max_axis == 0 ? "," : "");
        gir_buf_free(&bb);
        gir_buf_free(&eb);
        gir_buf_free(&sb);
        if (!bt || !et || !stt)
            return gir_nomem(err);
        for (ptrdiff_t i = 0; i < k; i++)
            if (steps[i] < 0 && (st[i] >= NN_SLICE_END || en[i] < -NN_SLICE_END))
                return unsup_attr(err, n, "Slice with a negative step over a whole axis");
        f->op = "slice";
        fa_str(&l, "begin", bt, true);
        fa_str(&l, "end", et, true);
        if (any_step)
            fa_str(&l, "step", stt, true);
    } else if (is_mx(w)) {
        f->op = "slice_axis";
        fa_int(&l, "axis", axes[0], true);
        fa_int(&l, "begin", st[0], true);
        if (en[0] >= NN_SLICE_END)
            fa_str(&l, "end", "None", true);
        else
            fa_int(&l, "end", en[0], true);
    } else {
        int64_t b[NN_MAX_TUPLE], e[NN_MAX_TUPLE], s[NN_MAX_TUPLE];
        bool any_step = false;
        for (int64_t i = 0; i <= max_axis; i++) {
            b[i] = 0;
            e[i] = NN_SLICE_END;
            s[i] = 1;
        }
        for (ptrdiff_t i = 0; i < k; i++) {
            b[axes[i]] = st[i];
            e[axes[i]] = en[i] > NN_SLICE_END ? NN_SLICE_END : en[i];
            s[axes[i]] = steps[i];
            any_step = any_step || steps[i] != 1;
        }
        f->op = "strided_slice";
        fa_tuple(&l, "begin", b, (size_t)max_axis + 1, NOFILL, true);
        fa_tuple(&l, "end", e, (size_t)max_axis + 1, NOFILL, true);
        if (any_step)
            fa_tuple(&l, "stride", s, (size_t)max_axis + 1, NOFILL, true);
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_lrn(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    double alpha = af(n, "alpha", 1e-4), beta = af(n, "beta", 0.75), bias = af(n, "bias", 1.0);
    int64_t size = ai(n, "size", 0);
    falist l = { .n = 0 };
    if (is_mx(w)) {
        f->op = "LRN";
        fa_float(&l, "alpha", alpha, alpha != 1e-4);
        fa_float(&l, "beta", beta, beta != 0.75);
        fa_float(&l, "knorm", bias, bias != 2.0);
        fa_int(&l, "nsize", size, true);
    } else {
        f->op = "lrn";
        fa_int(&l, "size", size, true);
        fa_int(&l, "axis", 1, true);
        fa_float(&l, "alpha", alpha, true);
        fa_float(&l, "beta", beta, true);
        fa_float(&l, "bias", bias, true);
    }
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_reduce(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (ai(n, "noop_with_empty_axes", 0) != 0)
        return unsup_attr(err, n, "%s with noop_with_empty_axes=1", gir_op_name(n->op));
    const int64_t *a;
    ptrdiff_t k = aints(n, "axes", &a);
    bool keep = ai(n, "keepdims", 1) != 0;
    falist l = { .n = 0 };
    f->op = n->op == GIR_OP_ReduceSum    ? "sum"
          : n->op == GIR_OP_ReduceMean   ? "mean"
          : n->op == GIR_OP_ReduceMax    ? "max"
          : n->op == GIR_OP_ReduceMin    ? "min"
                                         : "prod";
    if (k > NN_MAX_TUPLE)
        return unsup_attr(err, n, "%s over more than 16 axes", gir_op_name(n->op));
    if (k > 0)
        fa_tuple(&l, "axis", a, (size_t)k, NOFILL, true);
    fa_bool(&l, "keepdims", keep, -1, keep);
    fa_bool(&l, "exclude", false, -1, false);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

/* ArgMax/ArgMin + Cast to the index type = argmax/argmin (first extremum;
 * MXNet's float32 indices are exact below 2^24). */
static gir_status wr_argmax(nn_writer *w, const gir_node *n, const gir_node *a, nn_fnode *f, gir_error *err)
{
    if (ai(a, "select_last_index", 0) != 0)
        return unsup_attr(err, a, "%s with select_last_index=1 (argmax/argmin give the first index)",
                          gir_op_name(a->op));
    const gir_value *x = VAL(w, a->in[0]);
    int64_t axis = ai(a, "axis", 0);
    if (axis < 0 && x && x->shape.rank > 0)
        axis += x->shape.rank;
    if (axis < 0)
        return unsup_attr(err, a, "%s over a negative axis of a tensor of unknown rank", gir_op_name(a->op));
    if (is_mx(w) && (!x || x->shape.rank <= axis || x->shape.dims[axis] < 0 || x->shape.dims[axis] > (1 << 24)))
        return unsup_attr(err, a, "%s over an axis of unknown length or longer than 2^24 (MXNet's indices are "
                                  "float32)", gir_op_name(a->op));
    falist l = { .n = 0 };
    f->op = a->op == GIR_OP_ArgMax ? "argmax" : "argmin";
    fa_int(&l, "axis", axis, true);
    fa_bool(&l, "keepdims", ai(a, "keepdims", 1) != 0, -1, true);
    TRY(set_inputs(w, f, &a->in[0], 1, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_cast(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    int32_t am = nn_argmax_of(w, n);
    if (am >= 0)
        return wr_argmax(w, n, w->g->nodes[am], f, err);
    const char *to = gir_attrs_get_string(&n->attrs, "to", NULL);
    gir_dtype t = to ? gir_dtype_from_name(to) : GIR_DT_UNKNOWN;
    const char *name = gir_dltype_name(t);
    if (!name)
        return unsup_attr(err, n, "Cast to %s", to ? to : "an unnamed type");
    falist l = { .n = 0 };
    f->op = pick_alias(w, n);
    fa_str(&l, "dtype", name, true);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

/* Resize that repeats each pixel an integer number of times in H and W:
 * UpSampling (MXNet) / upsampling (NNVM), nearest. */
static gir_status wr_resize(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    const char *mode = gir_node_string(n, "mode", "nearest");
    const char *ct = gir_node_string(n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = gir_node_string(n, "nearest_mode", "round_prefer_floor");
    const gir_value *x = VAL(w, n->in[0]);
    if (strcmp(mode, "nearest") != 0)
        return unsup_attr(err, n, "Resize with mode=%s (%s repeats pixels only)", mode,
                          is_mx(w) ? "UpSampling" : "upsampling");
    /* For an integer scale these all pick input pixel floor(y / scale). */
    bool floor_like = (strcmp(ct, "asymmetric") == 0 && strcmp(nm, "floor") == 0) ||
                      ((strcmp(ct, "half_pixel") == 0 || strcmp(ct, "pytorch_half_pixel") == 0) &&
                       strncmp(nm, "round_prefer_", 13) == 0);
    if (!floor_like)
        return unsup_attr(err, n, "Resize nearest with coordinate_transformation_mode=%s, nearest_mode=%s", ct, nm);
    const double *sc;
    const int64_t *sz;
    ptrdiff_t ns = gir_attrs_get_floats(&n->attrs, "scales", &sc), nz = aints(n, "sizes", &sz);
    double scale[4] = { 0 };
    if (ns == 4) {
        memcpy(scale, sc, sizeof scale);
    } else if (nz == 4 && x && x->shape.rank == 4 && gir_shape_is_known(&x->shape)) {
        for (int i = 0; i < 4; i++)
            scale[i] = sz[i] % x->shape.dims[i] ? 0.5 : (double)(sz[i] / x->shape.dims[i]);
    } else {
        return unsup_attr(err, n, "Resize without 4 scales (or sizes of a known 4-d input)");
    }
    if (scale[0] != 1 || scale[1] != 1 || scale[2] != scale[3] || scale[2] < 1 || scale[2] != floor(scale[2]) ||
        scale[2] > 1e6)
        return unsup_attr(err, n, "Resize by scales other than (1, 1, s, s) with a whole s");
    falist l = { .n = 0 };
    if (is_mx(w)) {
        f->op = "UpSampling";
        fa_int(&l, "scale", (int64_t)scale[2], true);
        fa_str(&l, "sample_type", "nearest", true);
        fa_int(&l, "num_args", 1, true);
    } else {
        f->op = "upsampling";
        fa_int(&l, "scale", (int64_t)scale[2], true);
    }
    int32_t in = n->in[0];
    TRY(set_inputs(w, f, &in, 1, err));
    return finish_attrs(w, n, f, &l, err);
}

/* Expand -> broadcast_to of the same rank, 0 keeping a dimension. */
static gir_status wr_expand(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    const int64_t *s;
    ptrdiff_t k = aints(n, "shape", &s);
    const gir_value *x = VAL(w, n->in[0]);
    if (k < 1 || k > NN_MAX_TUPLE || !x || x->shape.rank != k)
        return unsup_attr(err, n, "Expand to a rank other than the input's (broadcast_to keeps the rank)");
    int64_t t[NN_MAX_TUPLE];
    for (ptrdiff_t i = 0; i < k; i++)
        t[i] = s[i] == 1 ? 0 : s[i];
    falist l = { .n = 0 };
    f->op = "broadcast_to";
    fa_tuple(&l, "shape", t, (size_t)k, NOFILL, true);
    TRY(node_inputs(w, n, f, err));
    return finish_attrs(w, n, f, &l, err);
}

static gir_status wr_where(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (!is_mx(w))
        return unsup_op(w, err, n);
    int32_t cast = nn_where_cast_of(w, n);
    if (cast < 0)
        return unsup_attr(err, n, "Where with a boolean condition not cast from numbers (MXNet's where takes a "
                                  "numeric condition)");
    int32_t in[3] = { w->g->nodes[cast]->in[0], n->in[1], n->in[2] };
    const gir_value *c = VAL(w, in[0]), *x = VAL(w, in[1]), *y = VAL(w, in[2]);
    if (!c || !x || !y || !gir_shape_is_known(&x->shape) || !gir_shape_equal(&c->shape, &x->shape) ||
        !gir_shape_equal(&x->shape, &y->shape))
        return unsup_attr(err, n, "Where of operands of different or unknown shapes (MXNet's where does not "
                                  "broadcast)");
    falist l = { .n = 0 };
    f->op = "where";
    TRY(set_inputs(w, f, in, 3, err));
    return finish_attrs(w, n, f, &l, err);
}

/* An operator kept verbatim: its attributes as text. */
static gir_status wr_opaque(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err)
{
    if (gir_opaque_policy(n, w->pfx, w->allow_opaque) == GIR_OPAQUE_REFUSE)
        return unsup_op(w, err, n);
    f->op = n->opaque_op ? n->opaque_op : "opaque";
    f->keys = gir_arena_alloc(&w->arena, (n->attrs.n ? n->attrs.n : 1) * sizeof *f->keys);
    f->vals = gir_arena_alloc(&w->arena, (n->attrs.n ? n->attrs.n : 1) * sizeof *f->vals);
    if (!f->keys || !f->vals)
        return gir_nomem(err);
    for (size_t i = 0; i < n->attrs.n; i++) {
        const gir_attr *a = &n->attrs.items[i];
        char buf[64];
        const char *text = NULL;
        gir_buf b = GIR_BUF_INIT;
        switch (a->type) {
        case GIR_ATTR_STRING: text = a->u.s; break;
        case GIR_ATTR_INT: gir_fmt_int(buf, a->u.i); text = buf; break;
        case GIR_ATTR_BOOL: text = nn_fmt_bool(a->u.i != 0); break;
        case GIR_ATTR_FLOAT: nn_fmt_float(buf, a->u.f); text = buf; break;
        case GIR_ATTR_INTS: nn_fmt_tuple(&b, a->u.ints.v, a->u.ints.n); text = b.data ? b.data : "()"; break;
        default:
            return unsup_attr(err, n, "%s with attribute %s of a type NNVM-family files cannot hold", f->op, a->name);
        }
        f->keys[i] = a->name;
        f->vals[i] = gir_arena_strdup(&w->arena, text);
        gir_buf_free(&b);
        if (!f->vals[i])
            return gir_nomem(err);
    }
    f->n_attrs = n->attrs.n;
    f->keep_order = w->fl == NN_TVM && meta_s(&w->g->meta, "tvm.layout") != NULL;
    return node_inputs(w, n, f, err);
}

static nn_write_fn writer_for(gir_op op)
{
    switch (op) {
    case GIR_OP_Conv: case GIR_OP_ConvTranspose: return wr_conv;
    case GIR_OP_Gemm: return wr_gemm;
    case GIR_OP_BatchNormalization: return wr_bn;
    case GIR_OP_MaxPool: case GIR_OP_AveragePool: case GIR_OP_GlobalMaxPool: case GIR_OP_GlobalAveragePool:
        return wr_pool;
    case GIR_OP_LeakyRelu: case GIR_OP_Elu: case GIR_OP_Selu: return wr_leaky;
    case GIR_OP_PRelu: return wr_prelu;
    case GIR_OP_Softmax: case GIR_OP_LogSoftmax: return wr_softmax;
    case GIR_OP_Concat: case GIR_OP_Sum: return wr_concat;
    case GIR_OP_Add: case GIR_OP_Sub: case GIR_OP_Mul: case GIR_OP_Div: case GIR_OP_Pow: case GIR_OP_Max:
    case GIR_OP_Min:
        return wr_binary;
    case GIR_OP_Dropout: return wr_dropout;
    case GIR_OP_Reshape: return wr_reshape;
    case GIR_OP_Transpose: case GIR_OP_Squeeze: return wr_axes_list;
    case GIR_OP_Clip: return wr_clip;
    case GIR_OP_Pad: return wr_pad;
    case GIR_OP_Unsqueeze: return wr_unsqueeze;
    case GIR_OP_Split: return wr_split;
    case GIR_OP_LRN: return wr_lrn;
    case GIR_OP_Slice: return wr_slice;
    case GIR_OP_ReduceSum: case GIR_OP_ReduceMean: case GIR_OP_ReduceMax: case GIR_OP_ReduceMin:
    case GIR_OP_ReduceProd:
        return wr_reduce;
    case GIR_OP_Cast: return wr_cast;
    case GIR_OP_Resize: return wr_resize;
    case GIR_OP_Expand: return wr_expand;
    case GIR_OP_Where: return wr_where;
    case GIR_OP_LSTM: case GIR_OP_GRU: case GIR_OP_RNN: return nn_wr_rnn;
    case GIR_OP_OPAQUE: return wr_opaque;
    default: return wr_unary;
    }
}

gir_status nn_lower_node(nn_writer *w, size_t i, gir_error *err)
{
    const gir_node *n = w->g->nodes[i];
    if (w->absorbed[i])
        return GIR_OK;
    if (w->fl == NN_TVM && n->op != GIR_OP_OPAQUE)
        return gir_fail(err, GIR_E_UNSUPPORTED_OP, "%s (not a compiled tvm_op function; write nnvm or mxnet)",
                        gir_op_name(n->op));
    if (!GIR_GROW(w->fn, w->cap_fn, w->n_fn + 1))
        return gir_nomem(err);
    nn_fnode *f = &w->fn[w->n_fn];
    memset(f, 0, sizeof *f);
    f->node = (int32_t)i;
    f->name = n->name;
    const char *orig = meta_s(&n->meta, nn_meta_key(w->fl, NN_MK_NAME));
    if (orig)
        f->name = orig;
    TRY(writer_for(n->op)(w, n, f, err));
    /* Outputs: the node's, plus hidden ones the operator has. */
    f->n_out = n->n_out ? n->n_out : 1;
    const char *op = f->op;
    nn_node probe = { .op = op };
    if (w->fl != NN_TVM) {
        nn_kv kv[4];
        size_t nk = 0;
        for (size_t a = 0; a < f->n_attrs && nk < 4; a++)
            if (!strcmp(f->keys[a], "num_outputs") || !strcmp(f->keys[a], "act_type") ||
                !strcmp(f->keys[a], "indices_or_sections") || !strcmp(f->keys[a], "state_outputs") ||
                !strcmp(f->keys[a], "mode"))
                kv[nk++] = (nn_kv){ f->keys[a], f->vals[a], NULL, NULL };
        probe.attrs = kv;
        probe.n_attrs = nk;
        size_t own = nn_op_num_outputs(w->fl, op, &probe);
        if (own > f->n_out)
            f->n_out = own;
    }
    int64_t meta_out = gir_attrs_get_int(&n->meta, nn_meta_key(w->fl, NN_MK_NUM_OUTPUTS), 0);
    if (meta_out > (int64_t)f->n_out && meta_out <= 65535 && same_op(w, n, op))
        f->n_out = (size_t)meta_out;
    const int64_t *ver;
    ptrdiff_t nv = gir_attrs_get_ints(&n->meta, nn_meta_key(w->fl, NN_MK_VERSIONS), &ver);
    if (nv == (ptrdiff_t)f->n_in)
        f->versions = ver;
    w->node_fn[i] = (int32_t)w->n_fn;
    for (size_t k = 0; k < n->n_out; k++) {
        if (n->out[k] >= 0) {
            w->vprod[n->out[k]] = (int32_t)w->n_fn;
            w->vidx[n->out[k]] = (uint32_t)k;
        }
    }
    w->n_fn++;
    return GIR_OK;
}
