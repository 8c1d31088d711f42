/* NNabla functions -> canonical operators.
 *
 * A function maps onto one canonical node when the semantics agree for the
 * arguments and shapes at hand, onto a fixed small group of nodes for
 * Affine (Flatten + Gemm) and Split (Split + Squeeze per output), and onto
 * an opaque node (type and parameter message kept as text) otherwise.  The
 * decision is taken before anything is added to the graph. */
#include "read.h"
#include "core/elem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- parameter access --------------------------------------------------- */

const ProtobufCFieldDescriptor *nnb_param_field(const Nnabla__Function *f)
{
    if (f->parameter_case == NNABLA__FUNCTION__PARAMETER__NOT_SET)
        return NULL;
    return protobuf_c_message_descriptor_get_field(&nnabla__function__descriptor, (unsigned)f->parameter_case);
}

const ProtobufCMessage *nnbr_param_msg(const mctx *m)
{
    const ProtobufCFieldDescriptor *fd = nnb_param_field(m->f);
    return fd ? *(ProtobufCMessage *const *)(const void *)((const char *)m->f + fd->offset) : NULL;
}

/* A numeric field of the function's parameter message as *i and *f, 0
 * when the message or the field is absent. */
static void param_field(const mctx *m, const char *key, int64_t *i, double *f)
{
    const ProtobufCMessage *pm = nnbr_param_msg(m);
    *i = 0;
    *f = 0;
    if (pm)
        nnb_field_get(pm, key, i, f);
}

double nnbr_param_num(const mctx *m, const char *key)
{
    int64_t i;
    double f;
    param_field(m, key, &i, &f);
    return f;
}

int64_t nnbr_param_int(const mctx *m, const char *key)
{
    int64_t i;
    double f;
    param_field(m, key, &i, &f);
    return i;
}

/* A repeated int64 field of the function's parameter message (none when
 * the message is absent). */
static size_t param_ints(const mctx *m, const char *key, const int64_t **v)
{
    const ProtobufCMessage *pm = nnbr_param_msg(m);
    const ProtobufCFieldDescriptor *fd = pm ? protobuf_c_message_descriptor_get_field_by_name(pm->descriptor, key) : NULL;
    *v = NULL;
    if (!fd || fd->label != PROTOBUF_C_LABEL_REPEATED || fd->type != PROTOBUF_C_TYPE_INT64)
        return 0;
    *v = *(int64_t *const *)(const void *)((const char *)pm + fd->offset);
    return *(const size_t *)(const void *)((const char *)pm + fd->quantifier_offset);
}

const ProtobufCFieldDescriptor *nnb_param_field_of_type(const char *type)
{
    const ProtobufCMessageDescriptor *fn = &nnabla__function__descriptor;
    size_t tl = strlen(type);
    for (unsigned i = 0; i < fn->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &fn->fields[i];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE || !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        const char *mn = ((const ProtobufCMessageDescriptor *)fd->descriptor)->short_name;
        if (strncmp(mn, type, tl) == 0 && strcmp(mn + tl, "Parameter") == 0)
            return fd;
    }
    return NULL;
}

/* The place of field key of msg and its descriptor, or NULL. */
static void *field_at(const ProtobufCMessage *msg, const char *key, const ProtobufCFieldDescriptor **fd)
{
    *fd = protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, key);
    if (!*fd || (*fd)->label == PROTOBUF_C_LABEL_REPEATED)
        return NULL;
    return (char *)msg + (*fd)->offset;
}

bool nnb_field_get(const ProtobufCMessage *msg, const char *key, int64_t *i, double *f)
{
    const ProtobufCFieldDescriptor *fd;
    const void *p = field_at(msg, key, &fd);
    if (!p)
        return false;
    switch (fd->type) {
    case PROTOBUF_C_TYPE_BOOL: *i = *(const protobuf_c_boolean *)p != 0; break;
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: *i = *(const int32_t *)p; break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: *i = *(const int64_t *)p; break;
    case PROTOBUF_C_TYPE_FLOAT: *f = *(const float *)p; *i = gir_f64_to_i64(*f); return true;
    case PROTOBUF_C_TYPE_DOUBLE: *f = *(const double *)p; *i = gir_f64_to_i64(*f); return true;
    default: return false;
    }
    *f = (double)*i;
    return true;
}

bool nnb_field_set(ProtobufCMessage *msg, const char *key, int64_t i, double f)
{
    const ProtobufCFieldDescriptor *fd;
    void *p = field_at(msg, key, &fd);
    if (!p)
        return false;
    switch (fd->type) {
    case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)p = i != 0; break;
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: *(int32_t *)p = (int32_t)i; break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: *(int64_t *)p = i; break;
    case PROTOBUF_C_TYPE_FLOAT: *(float *)p = (float)f; break;
    case PROTOBUF_C_TYPE_DOUBLE: *(double *)p = f; break;
    default: return false;
    }
    return true;
}

const ProtobufCFieldDescriptor *nnb_param_field_by_name(const char *name)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(&nnabla__function__descriptor, name);
    return fd && (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ? fd : NULL;
}

void nnb_set_param(Nnabla__Function *f, const ProtobufCFieldDescriptor *fd, ProtobufCMessage *msg)
{
    const ProtobufCFieldDescriptor *old = nnb_param_field(f);
    if (old)
        gir_pb_free(*(ProtobufCMessage **)((char *)f + old->offset));
    f->parameter_case = (Nnabla__Function__ParameterCase)fd->id;
    *(ProtobufCMessage **)((char *)f + fd->offset) = msg;
}

bool nnb_is_loop_function(const char *type)
{
    static const char *const loops[] = { "RepeatStart", "RepeatEnd", "RecurrentInput", "RecurrentOutput", "Delay",
                                         NULL };
    for (size_t i = 0; loops[i]; i++)
        if (strcmp(type, loops[i]) == 0)
            return true;
    return false;
}

void nnb_fmt_ints(char *out, size_t n, const int64_t *v, size_t k)
{
    size_t o = 0;
    o += (size_t)snprintf(out + o, n - o, "[");
    for (size_t i = 0; i < k && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (o < n)
        snprintf(out + o, n - o, "]");
}

/* The function carries the parameter message of another function. */
bool nnbr_foreign_param(const mctx *m, Nnabla__Function__ParameterCase expected)
{
    return m->f->parameter_case != NNABLA__FUNCTION__PARAMETER__NOT_SET && m->f->parameter_case != expected;
}

/* ---- graph helpers ------------------------------------------------------ */

gir_value *nnbr_val(const mctx *m, int32_t idx)
{
    return idx >= 0 ? m->g->values[idx] : NULL;
}

int nnbr_rank_of(const mctx *m, int32_t idx)
{
    const gir_value *v = nnbr_val(m, idx);
    return v ? v->shape.rank : -1;
}

int64_t nnbr_numel_of(const mctx *m, int32_t idx)
{
    const gir_value *v = nnbr_val(m, idx);
    return v ? gir_shape_numel(&v->shape) : -1;
}

/* Adds a node; its meta is filled by the caller for the function's node. */
gir_status nnbr_add_node(mctx *m, const char *name, gir_op op, size_t n_in, size_t n_out, gir_node **out)
{
    gir_status st = gir_graph_add_node(m->g, name, op, n_in, n_out, out, m->err);
    if (st)
        return st;
    if (!m->first)
        m->first = *out;
    return GIR_OK;
}

/* Runs the op's shape inference; shapes the file declares win. */
gir_status nnbr_infer(mctx *m, gir_node *n)
{
    const gir_op_info *info = gir_op_get(n->op);
    if (!info || !info->infer)
        return GIR_OK;
    gir_shape saved[16];
    const char *names[16][GIR_MAX_RANK];
    size_t k = n->n_out < 16 ? n->n_out : 16;
    for (size_t i = 0; i < k; i++) {
        gir_value *v = gir_out(m->g, n, i);
        saved[i] = v ? v->shape : (gir_shape){ -1, { 0 } };
        if (v)
            memcpy(names[i], v->dim_names, sizeof names[i]);
    }
    gir_error ierr = GIR_ERROR_INIT;
    gir_status st = info->infer(m->g, n, &ierr);
    /* Inference failures are reported by validation at the end of the
     * read; here they only leave shapes as declared. */
    gir_error_clear(&ierr);
    (void)st;
    for (size_t i = 0; i < k; i++) {
        gir_value *v = gir_out(m->g, n, i);
        if (v && saved[i].rank >= 0) {
            v->shape = saved[i];
            memcpy(v->dim_names, names[i], sizeof names[i]);
        }
    }
    return GIR_OK;
}

/* A float32 scalar constant "<function>/<suffix>" holding v (rounded to
 * float32, out-of-range values to infinity). */
gir_status nnbr_scalar_value(mctx *m, const char *suffix, double v, int32_t *ci)
{
    gir_shape s0 = { 0, { 0 } };
    float fv = (float)v;
    if (isfinite(v) && fabs(v) > 3.4028234663852886e38)
        fv = v > 0 ? INFINITY : -INFINITY;
    void *data = malloc(sizeof fv);
    if (!data)
        return gir_nomem(m->err);
    memcpy(data, &fv, sizeof fv);
    gir_tensor *t;
    TRY(gir_tensor_adopt(GIR_DT_F32, &s0, data, &t, m->err));
    return gir_graph_add_const_named(m->g, t, ci, m->err, "%s/%s", m->name, suffix);
}

static gir_status link_all(mctx *m, gir_node *n)
{
    for (size_t i = 0; i < m->n_in && i < n->n_in; i++)
        n->in[i] = m->in[i];
    for (size_t i = 0; i < m->n_out && i < n->n_out; i++) {
        gir_status st = gir_node_set_output(m->g, n, i, m->out[i], m->err);
        if (st)
            return st;
    }
    return GIR_OK;
}

/* One node with the function's own inputs and outputs. */
gir_status nnbr_simple(mctx *m, gir_op op, gir_node **out)
{
    gir_node *n;
    gir_status st = nnbr_add_node(m, m->name, op, m->n_in, m->n_out, &n);
    if (!st)
        st = link_all(m, n);
    if (st)
        return st;
    *out = n;
    return GIR_OK;
}

gir_status nnbr_map_to(mctx *m, bool *mapped, gir_op op, gir_node **out)
{
    *mapped = true;
    return nnbr_simple(m, op, out);
}

gir_status nnbr_map_int(mctx *m, bool *mapped, gir_op op, const char *key, int64_t v)
{
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, op, &n));
    TRY(nnbr_set_int(m, n, key, v));
    return nnbr_infer(m, n);
}

gir_status nnbr_map_ints(mctx *m, bool *mapped, gir_op op, const char *key, const int64_t *v, size_t k)
{
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, op, &n));
    TRY(nnbr_set_ints(m, n, key, v, k));
    return nnbr_infer(m, n);
}

gir_status nnbr_set_int(mctx *m, gir_node *n, const char *k, int64_t v)
{
    return gir_attrs_set_int(m->g, &n->attrs, k, v, m->err);
}

/* NNabla's arguments are float32: widened through their shortest text, so
 * eps 1e-05 equals the 1e-05 a text or double format gives. */
gir_status nnbr_set_float(mctx *m, gir_node *n, const char *k, double v)
{
    return gir_attrs_set_float(m->g, &n->attrs, k, gir_float_widen((float)v), m->err);
}

gir_status nnbr_set_ints(mctx *m, gir_node *n, const char *k, const int64_t *v, size_t c)
{
    return gir_attrs_set_ints(m->g, &n->attrs, k, v, c, m->err);
}

gir_status nnbr_set_string(mctx *m, gir_node *n, const char *k, const char *v)
{
    return gir_attrs_set_string(m->g, &n->attrs, k, v, m->err);
}

gir_status nnbr_meta_int(mctx *m, gir_node *n, const char *k, int64_t v)
{
    return gir_attrs_set_int(m->g, &n->meta, k, v, m->err);
}

bool nnbr_arity(const mctx *m, size_t min_in, size_t max_in, size_t min_out, size_t max_out)
{
    return m->n_in >= min_in && m->n_in <= max_in && m->n_out >= min_out && m->n_out <= max_out;
}

int nnbr_unary_rank(const mctx *m)
{
    return nnbr_arity(m, 1, 1, 1, 1) ? nnbr_rank_of(m, m->in[0]) : -1;
}

/* ---- opaque --------------------------------------------------------------- */

/* The function's own fields of a newer schema (kept as text), one a line. */
static gir_status unknown_text(mctx *m, const char **out)
{
    *out = NULL;
    const ProtobufCMessage *b = &m->f->base;
    gir_buf t = GIR_BUF_INIT;
    for (unsigned i = 0; i < b->n_unknown_fields; i++) {
        if (b->unknown_fields[i].tag != 0)
            continue;
        if (t.len)
            gir_buf_putc(&t, '\n');
        gir_buf_append(&t, b->unknown_fields[i].data, b->unknown_fields[i].len);
    }
    if (t.failed) {
        gir_buf_free(&t);
        return gir_nomem(m->err);
    }
    if (t.len) {
        *out = gir_arena_strndup(&m->g->arena, t.data, t.len);
        gir_buf_free(&t);
        if (!*out)
            return gir_nomem(m->err);
    }
    gir_buf_free(&t);
    return GIR_OK;
}

static void first_unknown(void *ctx, const ProtobufCMessage *msg, const char *text, size_t len)
{
    char *name = ctx;
    (void)msg;
    if (!name[0])
        gir_pbtext_field_name(text, len, name, 64);
}

static gir_status map_opaque(mctx *m)
{
    gir_node *n;
    TRY(nnbr_simple(m, GIR_OP_OPAQUE, &n));
    n->opaque_format = gir_arena_strdup(&m->g->arena, "nnabla");
    n->opaque_op = gir_arena_strdup(&m->g->arena, m->f->type);
    if (!n->opaque_format || !n->opaque_op)
        return gir_nomem(m->err);
    size_t unknown = gir_pbtext_unknown_count(&m->f->base);
    if (unknown) {
        const char *own;
        TRY(unknown_text(m, &own));
        if (own)
            TRY(nnbr_set_string(m, n, NNB_ATTR_UNKNOWN, own));
        char first[64] = "";
        TRY(gir_pbtext_each_unknown(&m->f->base, first_unknown, first, m->err));
        TRY(gir_graph_note(m->g, m->err,
                           "function '%s' (%s) has %zu field%s this nnabla schema does not know (first '%s'): "
                           "kept verbatim for nnabla; another format refuses it",
                           m->name, m->f->type, unknown, unknown == 1 ? "" : "s", first));
    }
    const ProtobufCFieldDescriptor *fd = nnb_param_field(m->f);
    if (fd) {
        const ProtobufCMessage *pm = *(ProtobufCMessage *const *)((const char *)m->f + fd->offset);
        gir_buf b = GIR_BUF_INIT;
        gir_status st = gir_pbtext_print(pm, &b, m->err);
        if (!st)
            st = nnbr_set_string(m, n, fd->name, b.data ? b.data : "");
        gir_buf_free(&b);
        if (st)
            return st;
    }
    return GIR_OK;
}

/* ---- layers ---------------------------------------------------------------- */

static gir_status map_affine(mctx *m, bool *mapped)
{
    static const Nnabla__AffineParameter zero = NNABLA__AFFINE_PARAMETER__INIT;
    const Nnabla__AffineParameter *p = PARAM(m, AFFINE_PARAM, affine_param, zero);
    bool ok = nnbr_arity(m, 2, 3, 1, 1);
    int r = nnbr_rank_of(m, m->in[0]);
    int64_t b = p->base_axis;
    if (b < 0 && r >= 0)
        b += r;
    if (!ok || b != 1 || nnbr_rank_of(m, m->in[1]) != 2 || (r >= 0 && r < 1) ||
        (m->n_in == 3 && nnbr_rank_of(m, m->in[2]) != 1))
        return GIR_OK;
    *mapped = true;
    int32_t a = m->in[0];
    if (r != 2) {
        /* x is viewed as a matrix: Flatten(axis=1) then Gemm */
        gir_node *fl;
        const char *fname = gir_arena_printf(&m->g->arena, "%s/flatten", m->name);
        if (!fname)
            return gir_nomem(m->err);
        TRY(nnbr_add_node(m, gir_graph_unique_node_name(m->g, fname, m->err), GIR_OP_Flatten, 1, 1, &fl));
        fl->in[0] = m->in[0];
        TRY(nnbr_set_int(m, fl, "axis", 1));
        TRY(nnbr_meta_int(m, fl, NNB_META_FUSED, 1));
        TRY(gir_node_make_output(m->g, fl, 0, gir_graph_unique_value_name(m->g, fname, m->err), m->err));
        TRY(nnbr_infer(m, fl));
        a = fl->out[0];
    }
    /* A parameter used only as Affine weights is viewed as out x in, the
     * layout of ONNX Gemm(transB=1), MXNet FullyConnected and NNVM dense. */
    bool transposed = false;
    gir_value *wv = m->g->values[m->in[1]];
    if (wv->kind == GIR_VALUE_WEIGHT && m->r->affine_only && m->r->affine_only[m->in[1]]) {
        transposed = true;
        if (!gir_attrs_find(&wv->meta, NNB_META_TRANSPOSED)) {
            if (wv->data)
                TRY(nnb_transpose_view(wv->data, m->err));
            int64_t t = wv->shape.dims[0];
            wv->shape.dims[0] = wv->shape.dims[1];
            wv->shape.dims[1] = t;
            TRY(gir_attrs_set_int(m->g, &wv->meta, NNB_META_TRANSPOSED, 1, m->err));
        }
    }
    gir_node *n;
    TRY(gir_graph_add_node(m->g, m->name, GIR_OP_Gemm, m->n_in, 1, &n, m->err));
    n->in[0] = a;
    n->in[1] = m->in[1];
    if (m->n_in == 3)
        n->in[2] = m->in[2];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    TRY(nnbr_set_float(m, n, "alpha", 1.0));
    TRY(nnbr_set_float(m, n, "beta", 1.0));
    TRY(nnbr_set_int(m, n, "transA", 0));
    TRY(nnbr_set_int(m, n, "transB", transposed));
    m->first = n;
    return nnbr_infer(m, n);
}

/* ---- normalization ---------------------------------------------------------- */

/* A BN parameter input: a Parameter holding exactly C values laid out along
 * the channel axis, used by nothing but BatchNormalization. */
static bool bn_param_ok(const mctx *m, int32_t idx, int64_t c)
{
    const gir_value *v = nnbr_val(m, idx);
    if (!v || v->kind != GIR_VALUE_WEIGHT || v->shape.rank < 1)
        return false;
    int64_t nonone = -1;
    for (int i = 0; i < v->shape.rank; i++) {
        if (v->shape.dims[i] < 0)
            return false;
        if (v->shape.dims[i] != 1) {
            if (nonone >= 0)
                return false;
            nonone = v->shape.dims[i];
        }
    }
    int64_t ch = nonone < 0 ? 1 : nonone;
    if (c >= 0 && ch != c)
        return false;
    return m->r->bn_only && m->r->bn_only[idx];
}

/* Gives a BN parameter its canonical shape (C), remembering the declared one. */
static gir_status bn_param_reshape(mctx *m, int32_t idx)
{
    gir_value *v = m->g->values[idx];
    int64_t n = gir_shape_numel(&v->shape);
    if (v->shape.rank == 1)
        return GIR_OK;
    TRY(gir_attrs_set_ints(m->g, &v->meta, NNB_META_SHAPE, v->shape.dims, (size_t)v->shape.rank, m->err));
    v->shape.rank = 1;
    v->shape.dims[0] = n;
    memset(v->dim_names, 0, sizeof v->dim_names);
    if (v->data)
        v->data->shape = v->shape; /* the same bytes, viewed as (C) */
    return GIR_OK;
}

static gir_status map_batch_normalization(mctx *m, bool *mapped)
{
    static const Nnabla__BatchNormalizationParameter zero = NNABLA__BATCH_NORMALIZATION_PARAMETER__INIT;
    const Nnabla__BatchNormalizationParameter *p =
        PARAM(m, BATCH_NORMALIZATION_PARAM, batch_normalization_param, zero);
    if (!nnbr_arity(m, 5, 5, 1, 1) || p->batch_stat || p->no_scale || p->no_bias || p->n_axes != 1)
        return GIR_OK;
    int r = nnbr_rank_of(m, m->in[0]);
    int64_t axis = p->axes[0];
    if (axis < 0 && r >= 0)
        axis += r;
    if (axis != 1 || r == 0 || r == 1)
        return GIR_OK;
    int64_t c = -1;
    if (r >= 2)
        c = nnbr_val(m, m->in[0])->shape.dims[1];
    if (c < 0)
        c = nnbr_numel_of(m, m->in[3]);
    for (size_t i = 1; i < 5; i++)
        if (!bn_param_ok(m, m->in[i], c))
            return GIR_OK;
    *mapped = true;
    for (size_t i = 1; i < 5; i++)
        TRY(bn_param_reshape(m, m->in[i]));
    gir_node *n;
    TRY(nnbr_add_node(m, m->name, GIR_OP_BatchNormalization, 5, 1, &n));
    n->in[0] = m->in[0];
    n->in[1] = m->in[2]; /* scale = gamma */
    n->in[2] = m->in[1]; /* B = beta */
    n->in[3] = m->in[3];
    n->in[4] = m->in[4];
    TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    TRY(nnbr_set_float(m, n, "epsilon", p->eps));
    TRY(nnbr_set_float(m, n, "momentum", p->decay_rate));
    return nnbr_infer(m, n);
}

/* ---- reductions ---------------------------------------------------------------- */

static gir_status map_reduce(mctx *m, bool *mapped, gir_op op, const int64_t *axes, size_t n_axes, bool keep)
{
    if (!nnbr_arity(m, 1, 1, 1, 1))
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, op, &n));
    if (n_axes)
        TRY(nnbr_set_ints(m, n, "axes", axes, n_axes));
    TRY(nnbr_set_int(m, n, "keepdims", keep));
    return nnbr_infer(m, n);
}

/* Sum, Mean, Prod, Max, Min: axes and keep_dims (Max and Min with an
 * index: ArgMax, ArgMin). */
static gir_status map_reduce_fn(mctx *m, bool *mapped)
{
    const int64_t *axes;
    size_t n_axes = param_ints(m, "axes", &axes);
    bool keep = nnbr_param_int(m, "keep_dims") != 0;
    bool with_index = nnbr_param_int(m, "with_index") != 0, only_index = nnbr_param_int(m, "only_index") != 0;
    if (m->row->special != GIR_OP_OPAQUE && (with_index || only_index))
        return nnbr_map_arg(m, mapped, m->row->op, m->row->special, axes, n_axes, keep, with_index, only_index);
    return map_reduce(m, mapped, m->row->op, axes, n_axes, keep);
}

/* ReduceSum, ReduceMean: every axis, keepdims 0. */
static gir_status map_reduce_all(mctx *m, bool *mapped)
{
    if (m->f->parameter_case != NNABLA__FUNCTION__PARAMETER__NOT_SET)
        return GIR_OK;
    TRY(map_reduce(m, mapped, m->row->op, NULL, 0, false));
    if (*mapped)
        TRY(gir_attrs_set_string(m->g, &m->first->meta, NNB_META_TYPE, m->f->type, m->err));
    return GIR_OK;
}

/* ---- arithmetic ------------------------------------------------------------------ */

/* Add2, Sub2, ...: nnabla broadcasts only between equal ranks, a subset of
 * numpy's rules; the inplace argument is a memory hint kept as meta. */
static gir_status map_binary(mctx *m, bool *mapped)
{
    if (!nnbr_arity(m, 2, 2, 1, 1))
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, m->row->op, &n));
    if (nnbr_param_int(m, "inplace") != 0)
        TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, 1));
    if (strcmp(m->f->type, "BcAdd2") == 0)
        TRY(gir_attrs_set_string(m->g, &n->meta, NNB_META_TYPE, "BcAdd2", m->err));
    return nnbr_infer(m, n);
}

static gir_status map_add_n(mctx *m, bool *mapped)
{
    if (m->n_in < 1 || m->n_out != 1 || nnbr_foreign_param(m, NNABLA__FUNCTION__PARAMETER__NOT_SET))
        return GIR_OK;
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_Sum, &n));
    return nnbr_infer(m, n);
}

typedef enum scalar_form {
    SC_X_OP_C, /* op(x, c) */
    SC_C_OP_X, /* op(c, x) */
    SC_CLIP_MAX,
    SC_CLIP_MIN,
} scalar_form;

/* AddScalar etc.: a canonical binary op with a scalar constant operand
 * (named "<function>/val"); the exact double value rides in meta.  A few
 * values have a dedicated op: MulScalar(-1) is Neg, PowScalar(0.5) Sqrt,
 * RDivScalar(1) Reciprocal. */
static gir_status map_scalar(mctx *m, bool *mapped)
{
    gir_op op = m->row->op, special = m->row->special;
    scalar_form form = (scalar_form)m->row->form;
    double v = nnbr_param_num(m, "val"), special_val = m->row->special_val;
    bool inplace = nnbr_param_int(m, "inplace") != 0;
    if (!nnbr_arity(m, 1, 1, 1, 1))
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    if (special != GIR_OP_OPAQUE && v == special_val) {
        TRY(nnbr_simple(m, special, &n));
    } else if (form == SC_CLIP_MAX || form == SC_CLIP_MIN) {
        TRY(nnbr_simple(m, GIR_OP_Clip, &n));
        TRY(nnbr_set_float(m, n, form == SC_CLIP_MAX ? "max" : "min", (double)(float)v));
    } else {
        int32_t ci;
        TRY(nnbr_scalar_value(m, "val", v, &ci));
        TRY(nnbr_add_node(m, m->name, op, 2, 1, &n));
        n->in[form == SC_X_OP_C ? 0 : 1] = m->in[0];
        n->in[form == SC_X_OP_C ? 1 : 0] = ci;
        TRY(gir_node_set_output(m->g, n, 0, m->out[0], m->err));
    }
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    if (inplace)
        TRY(nnbr_meta_int(m, n, NNB_META_INPLACE, 1));
    return nnbr_infer(m, n);
}

static gir_status map_batch_matmul(mctx *m, bool *mapped)
{
    static const Nnabla__BatchMatmulParameter zero = NNABLA__BATCH_MATMUL_PARAMETER__INIT;
    const Nnabla__BatchMatmulParameter *p = PARAM(m, BATCH_MATMUL_PARAM, batch_matmul_param, zero);
    bool ok = nnbr_arity(m, 2, 2, 1, 1);
    int ra = nnbr_rank_of(m, m->in[0]), rb = nnbr_rank_of(m, m->in[1]);
    if (!ok || ra < 2 || ra != rb)
        return GIR_OK;
    if (p->transpose_a || p->transpose_b)
        return nnbr_map_batch_matmul_t(m, mapped, p->transpose_a, p->transpose_b);
    gir_node *n;
    TRY(nnbr_map_to(m, mapped, GIR_OP_MatMul, &n));
    return nnbr_infer(m, n);
}

/* ---- array manipulation -------------------------------------------------------- */

/* Concatenate, Stack: the inputs joined along axis (Stack: a new one). */
static gir_status map_join(mctx *m, bool *mapped)
{
    if (m->n_in < 1 || m->n_out != 1)
        return GIR_OK;
    return nnbr_map_int(m, mapped, m->row->op, "axis", nnbr_param_int(m, "axis"));
}

/* Split is an unstack: x.shape[axis] outputs, each without that axis.
 * Canonically: Split into parts of 1, then Squeeze(axis) per part. */
static gir_status map_split(mctx *m, bool *mapped)
{
    static const Nnabla__SplitParameter zero = NNABLA__SPLIT_PARAMETER__INIT;
    const Nnabla__SplitParameter *p = PARAM(m, SPLIT_PARAM, split_param, zero);
    int r = nnbr_rank_of(m, m->in[0]);
    int64_t axis = p->axis;
    if (axis < 0 && r >= 0)
        axis += r;
    if (m->n_in != 1 || m->n_out < 1 || axis < 0 || (r >= 0 && axis >= r))
        return GIR_OK;
    if (r >= 0) {
        int64_t d = nnbr_val(m, m->in[0])->shape.dims[axis];
        if (d >= 0 && (size_t)d != m->n_out)
            return GIR_OK;
    }
    *mapped = true;
    gir_node *sp;
    TRY(nnbr_add_node(m, m->name, GIR_OP_Split, 1, m->n_out, &sp));
    sp->in[0] = m->in[0];
    TRY(nnbr_set_int(m, sp, "axis", axis));
    int64_t *ones = gir_arena_alloc(&m->g->arena, m->n_out * sizeof *ones);
    if (!ones)
        return gir_nomem(m->err);
    for (size_t i = 0; i < m->n_out; i++)
        ones[i] = 1;
    TRY(nnbr_set_ints(m, sp, "split", ones, m->n_out));
    for (size_t i = 0; i < m->n_out; i++) {
        const char *base = gir_arena_printf(&m->g->arena, "%s/part_%zu", m->name, i);
        if (!base)
            return gir_nomem(m->err);
        TRY(gir_node_make_output(m->g, sp, i, gir_graph_unique_value_name(m->g, base, m->err), m->err));
    }
    TRY(nnbr_infer(m, sp));
    for (size_t i = 0; i < m->n_out; i++) {
        const char *base = gir_arena_printf(&m->g->arena, "%s/squeeze_%zu", m->name, i);
        if (!base)
            return gir_nomem(m->err);
        gir_node *sq;
        TRY(gir_graph_add_node(m->g, gir_graph_unique_node_name(m->g, base, m->err), GIR_OP_Squeeze, 1, 1, &sq, m->err));
        sq->in[0] = sp->out[i];
        TRY(nnbr_set_ints(m, sq, "axes", &axis, 1));
        TRY(gir_node_set_output(m->g, sq, 0, m->out[i], m->err));
        TRY(nnbr_infer(m, sq));
    }
    return GIR_OK;
}

/* ---- decompositions into canonical operators ------------------------------------ */

/* One step of a decomposition: a node "<function>/<suffix>" (or the
 * function's own name for its last step, out >= 0) of op reading ins,
 * writing out or a new value; *made is the value written. */
gir_status nnbr_step(mctx *m, const char *suffix, gir_op op, const int32_t *ins, size_t n_in, int32_t out,
                     gir_node **node, int32_t *made)
{
    const char *nm = out >= 0 ? m->name : gir_arena_printf(&m->g->arena, "%s/%s", m->name, suffix ? suffix : "");
    if (!nm)
        return gir_nomem(m->err);
    if (out < 0)
        nm = gir_graph_unique_node_name(m->g, nm, m->err);
    gir_node *n;
    TRY(nnbr_add_node(m, nm, op, n_in, 1, &n));
    for (size_t i = 0; i < n_in; i++)
        n->in[i] = ins[i];
    if (out >= 0)
        TRY(gir_node_set_output(m->g, n, 0, out, m->err));
    else
        TRY(gir_node_make_output(m->g, n, 0, gir_graph_unique_value_name(m->g, nm, m->err), m->err));
    if (node)
        *node = n;
    if (made)
        *made = n->out[0];
    return GIR_OK;
}

/* A unary op nnabla writes as a *Scalar function of v (Neg: MulScalar -1,
 * Sqrt: PowScalar 0.5), with the nnabla.val that function reads back. */
gir_status nnbr_step_val(mctx *m, const char *suffix, gir_op op, int32_t a, double v, int32_t out, int32_t *made)
{
    gir_node *n;
    TRY(nnbr_step(m, suffix, op, &a, 1, out, &n, made));
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    return nnbr_infer(m, n);
}

/* The same with the node's shape inferred (its attributes set by then). */
gir_status nnbr_step1(mctx *m, const char *suffix, gir_op op, int32_t a, int32_t out, int32_t *made)
{
    gir_node *n;
    TRY(nnbr_step(m, suffix, op, &a, 1, out, &n, made));
    return nnbr_infer(m, n);
}

gir_status nnbr_step2(mctx *m, const char *suffix, gir_op op, int32_t a, int32_t b, int32_t out, int32_t *made)
{
    gir_node *n;
    int32_t ins[2] = { a, b };
    TRY(nnbr_step(m, suffix, op, ins, 2, out, &n, made));
    return nnbr_infer(m, n);
}

/* op(x, scalar v), named as the *Scalar function nnabla writes for it
 * reads back (the constant "<node>/val", the node's nnabla.val) */
gir_status nnbr_step_scalar(mctx *m, const char *suffix, gir_op op, int32_t a, double v, int32_t out,
                            int32_t *made)
{
    int32_t ins[2] = { a, -1 };
    gir_node *n;
    TRY(nnbr_step(m, suffix, op, ins, 2, out, &n, made));
    const char *saved = m->name;
    m->name = n->name;
    gir_status st = nnbr_scalar_value(m, "val", v, &n->in[1]);
    m->name = saved;
    TRY(st);
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    return nnbr_infer(m, n);
}

gir_status nnbr_step_neg(mctx *m, const char *suffix, int32_t a, int32_t out, int32_t *made)
{
    return nnbr_step_val(m, suffix, GIR_OP_Neg, a, -1.0, out, made);
}

bool nnbr_unary(const mctx *m)
{
    return m->n_in == 1 && m->n_out == 1 && m->f->parameter_case == NNABLA__FUNCTION__PARAMETER__NOT_SET;
}

/* ---- more functions with an exact canonical form ----------------------------------- */

/* Unlink, ClipGradByValue, ClipGradByNorm: the identity on the forward pass
 * (they only act on gradients) */
static gir_status map_forward_identity(mctx *m, bool *mapped)
{
    if (m->n_in < 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    return nnbr_step1(m, NULL, GIR_OP_Identity, m->in[0], m->out[0], NULL);
}

/* MulN: a chain of Mul */
static gir_status map_mul_n(mctx *m, bool *mapped)
{
    if (m->n_in < 2 || m->n_out != 1 || nnbr_foreign_param(m, NNABLA__FUNCTION__PARAMETER__NOT_SET))
        return GIR_OK;
    *mapped = true;
    int32_t acc = m->in[0];
    for (size_t i = 1; i < m->n_in; i++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, "mul_%zu", i);
        bool last = i + 1 == m->n_in;
        TRY(nnbr_step2(m, last ? NULL : suffix, GIR_OP_Mul, acc, m->in[i], last ? m->out[0] : -1, &acc));
    }
    return GIR_OK;
}

/* Tan = sin / cos; Sinh, Cosh = (exp(x) -/+ exp(-x)) / 2 */
static gir_status map_tan(mctx *m, bool *mapped)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t sn, cs;
    TRY(nnbr_step1(m, "sin", GIR_OP_Sin, m->in[0], -1, &sn));
    TRY(nnbr_step1(m, "cos", GIR_OP_Cos, m->in[0], -1, &cs));
    return nnbr_step2(m, NULL, GIR_OP_Div, sn, cs, m->out[0], NULL);
}

static gir_status map_hyperbolic(mctx *m, bool *mapped, gir_op combine)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t e, nx, en, c;
    TRY(nnbr_step1(m, "exp", GIR_OP_Exp, m->in[0], -1, &e));
    TRY(nnbr_step_neg(m, "neg", m->in[0], -1, &nx));
    TRY(nnbr_step1(m, "exp_neg", GIR_OP_Exp, nx, -1, &en));
    TRY(nnbr_step2(m, "combined", combine, e, en, -1, &c));
    return nnbr_step_scalar(m, NULL, GIR_OP_Mul, c, 0.5, m->out[0], NULL);
}

static gir_status map_sinh(mctx *m, bool *mapped)
{
    return map_hyperbolic(m, mapped, GIR_OP_Sub);
}

static gir_status map_cosh(mctx *m, bool *mapped)
{
    return map_hyperbolic(m, mapped, GIR_OP_Add);
}

/* A bool result as nnabla carries it between functions (0/1 floats), and
 * back to bool for the function reading it: the form these decompositions
 * take again when the written functions are read back. */
static gir_status via_float(mctx *m, const char *suffix, int32_t b, int32_t *out)
{
    char s1[64];
    snprintf(s1, sizeof s1, "%s_float", suffix);
    int32_t f;
    TRY(nnbr_cast_to(m, s1, b, "float32", -1, &f));
    snprintf(s1, sizeof s1, "%s_bool", suffix);
    return nnbr_cast_to(m, s1, f, "bool", -1, out);
}

/* x == x is false only for NaN; |x| == inf only for infinities (bool) */
static gir_status nan_test(mctx *m, int32_t *isnan_bool)
{
    int32_t eq;
    TRY(nnbr_step2(m, "equal_self", GIR_OP_Equal, m->in[0], m->in[0], -1, &eq));
    TRY(via_float(m, "equal_self", eq, &eq));
    return nnbr_step1(m, "nan", GIR_OP_Not, eq, -1, isnan_bool);
}

static gir_status inf_test(mctx *m, int32_t *isinf_bool)
{
    int32_t a, inf;
    TRY(nnbr_step1(m, "abs", GIR_OP_Abs, m->in[0], -1, &a));
    TRY(nnbr_scalar_value(m, "inf", INFINITY, &inf));
    return nnbr_step2(m, "inf_test", GIR_OP_Equal, a, inf, -1, isinf_bool);
}

/* IsNaN / IsInf: 0/1 floats, as nnabla gives */
static gir_status map_is_special(mctx *m, bool *mapped, bool nan)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t b, y;
    TRY(nan ? nan_test(m, &b) : inf_test(m, &b));
    return nnbr_cast_to(m, "float", b, "float32", m->out[0], &y);
}

static gir_status map_is_nan(mctx *m, bool *mapped)
{
    return map_is_special(m, mapped, true);
}

static gir_status map_is_inf(mctx *m, bool *mapped)
{
    return map_is_special(m, mapped, false);
}

/* ResetNaN / ResetInf: Where(test, val, x) */
static gir_status map_reset_special(mctx *m, bool *mapped, bool nan, double v)
{
    if (m->n_in != 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t b, c;
    TRY(nan ? nan_test(m, &b) : inf_test(m, &b));
    TRY(via_float(m, "test", b, &b));
    TRY(nnbr_scalar_value(m, "val", v, &c));
    int32_t ins[3] = { b, c, m->in[0] };
    gir_node *n;
    TRY(nnbr_step(m, NULL, GIR_OP_Where, ins, 3, m->out[0], &n, NULL));
    return nnbr_infer(m, n);
}

static gir_status map_reset_nan(mctx *m, bool *mapped)
{
    static const Nnabla__ResetNaNParameter zero = NNABLA__RESET_NA_NPARAMETER__INIT;
    const Nnabla__ResetNaNParameter *p = PARAM(m, RESET_NAN_PARAM, reset_nan_param, zero);
    return map_reset_special(m, mapped, true, p->val);
}

static gir_status map_reset_inf(mctx *m, bool *mapped)
{
    static const Nnabla__ResetInfParameter zero = NNABLA__RESET_INF_PARAMETER__INIT;
    const Nnabla__ResetInfParameter *p = PARAM(m, RESET_INF_PARAM, reset_inf_param, zero);
    return map_reset_special(m, mapped, false, p->val);
}

/* Sinc: 1 at 0, sin(x) / x elsewhere */
static gir_status map_sinc(mctx *m, bool *mapped)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t z, is0, sn, q, one;
    TRY(nnbr_scalar_value(m, "zero", 0.0, &z));
    TRY(nnbr_step2(m, "is_zero", GIR_OP_Equal, m->in[0], z, -1, &is0));
    TRY(via_float(m, "is_zero", is0, &is0));
    TRY(nnbr_step1(m, "sin", GIR_OP_Sin, m->in[0], -1, &sn));
    TRY(nnbr_step2(m, "ratio", GIR_OP_Div, sn, m->in[0], -1, &q));
    TRY(nnbr_scalar_value(m, "one", 1.0, &one));
    int32_t ins[3] = { is0, one, q };
    gir_node *n;
    TRY(nnbr_step(m, NULL, GIR_OP_Where, ins, 3, m->out[0], &n, NULL));
    return nnbr_infer(m, n);
}

/* BinarySigmoid: x > 0 ? 1 : 0; BinaryTanh: x > 0 ? 1 : -1 */
static gir_status map_binary_act(mctx *m, bool *mapped, double low)
{
    if (!nnbr_unary(m))
        return GIR_OK;
    *mapped = true;
    int32_t z, gt, hi, lo;
    TRY(nnbr_scalar_value(m, "zero", 0.0, &z));
    TRY(nnbr_step2(m, "positive", GIR_OP_Greater, m->in[0], z, -1, &gt));
    TRY(via_float(m, "positive", gt, &gt));
    TRY(nnbr_scalar_value(m, "high", 1.0, &hi));
    TRY(nnbr_scalar_value(m, "low", low, &lo));
    int32_t ins[3] = { gt, hi, lo };
    gir_node *n;
    TRY(nnbr_step(m, NULL, GIR_OP_Where, ins, 3, m->out[0], &n, NULL));
    return nnbr_infer(m, n);
}

static gir_status map_binary_sigmoid(mctx *m, bool *mapped)
{
    return map_binary_act(m, mapped, 0.0);
}

static gir_status map_binary_tanh(mctx *m, bool *mapped)
{
    return map_binary_act(m, mapped, -1.0);
}

/* Round: halves away from zero (std::round), exactly:
 * sign(x) * (t + (|x| - t >= 0.5)), t = floor(|x|) (|x| - t is exact) */
static gir_status map_round(mctx *m, bool *mapped)
{
    if (m->n_in != 1 || m->n_out != 1 ||
        (m->f->parameter_case != NNABLA__FUNCTION__PARAMETER__NOT_SET &&
         m->f->parameter_case != NNABLA__FUNCTION__PARAMETER_ROUND_PARAM))
        return GIR_OK;
    *mapped = true;
    int32_t a, t, fr, half, ge, t1, r, sg;
    TRY(nnbr_step1(m, "abs", GIR_OP_Abs, m->in[0], -1, &a));
    TRY(nnbr_step1(m, "floor", GIR_OP_Floor, a, -1, &t));
    TRY(nnbr_step2(m, "fraction", GIR_OP_Sub, a, t, -1, &fr));
    TRY(nnbr_scalar_value(m, "half", 0.5, &half));
    TRY(nnbr_step2(m, "round_up", GIR_OP_GreaterOrEqual, fr, half, -1, &ge));
    TRY(via_float(m, "round_up", ge, &ge));
    TRY(nnbr_step_scalar(m, "up", GIR_OP_Add, t, 1.0, -1, &t1));
    int32_t ins[3] = { ge, t1, t };
    gir_node *n;
    TRY(nnbr_step(m, "magnitude", GIR_OP_Where, ins, 3, -1, &n, &r));
    TRY(nnbr_infer(m, n));
    TRY(nnbr_step1(m, "sign", GIR_OP_Sign, m->in[0], -1, &sg));
    return nnbr_step2(m, NULL, GIR_OP_Mul, sg, r, m->out[0], NULL);
}

/* Flip: a Slice walking the flipped axes backwards */
static gir_status map_flip(mctx *m, bool *mapped)
{
    static const Nnabla__FlipParameter zero = NNABLA__FLIP_PARAMETER__INIT;
    const Nnabla__FlipParameter *p = PARAM(m, FLIP_PARAM, flip_param, zero);
    int r = nnbr_unary_rank(m);
    if (r < 1 || p->n_axes > (size_t)r)
        return GIR_OK;
    int64_t starts[GIR_MAX_RANK], ends[GIR_MAX_RANK], axes[GIR_MAX_RANK], steps[GIR_MAX_RANK];
    bool seen[GIR_MAX_RANK] = { false };
    size_t k = p->n_axes;
    for (size_t i = 0; i < k; i++) {
        int64_t a = p->axes[i] < 0 ? p->axes[i] + r : p->axes[i];
        if (a < 0 || a >= r || seen[a])
            return GIR_OK;
        seen[a] = true;
        starts[i] = -1;
        ends[i] = INT64_MIN;
        axes[i] = a;
        steps[i] = -1;
    }
    if (k == 0) { /* absent axes: proto3 gives an empty list, nothing flipped */
        *mapped = true;
        return nnbr_step1(m, NULL, GIR_OP_Identity, m->in[0], m->out[0], NULL);
    }
    return nnbr_slice(m, mapped, starts, ends, axes, steps, k);
}

/* ---- comparison and logic ----------------------------------------------------- */

/* The node of a logical function: op under the function's name, reading
 * ins (its attributes, if any, are the caller's to set). */
static gir_status logic_node(mctx *m, gir_op op, const int32_t *ins, size_t n_in, gir_node **out)
{
    TRY(gir_graph_add_node(m->g, m->name, op, n_in, 1, out, m->err));
    for (size_t i = 0; i < n_in; i++)
        (*out)->in[i] = ins[i];
    m->first = *out;
    return GIR_OK;
}

/* Gives logical node n a bool result "<function>/bool" and casts it to
 * float32 into the function's own output, nnabla's 0/1. */
static gir_status logic_result(mctx *m, gir_node *n)
{
    const char *bname = gir_arena_printf(&m->g->arena, "%s/bool", m->name);
    if (!bname)
        return gir_nomem(m->err);
    TRY(gir_node_make_output(m->g, n, 0, gir_graph_unique_value_name(m->g, bname, m->err), m->err));
    TRY(nnbr_infer(m, n));
    int32_t y;
    return nnbr_cast_to(m, "float", n->out[0], "float32", m->out[0], &y);
}

/* NNabla has no bool type: Equal, Greater, Less, LogicalAnd/Or/Xor/Not take
 * float arrays (nonzero is true) and give 0/1 floats.  The canonical ops
 * take and give bools, so the function becomes a Cast(to=bool) of each
 * operand (logical functions only), the canonical op under the function's
 * name, and a Cast(to=float32) into the function's own output.  The writer
 * folds the casts back into the one function. */
static gir_status map_logic(mctx *m, bool *mapped)
{
    gir_op op = m->row->op;
    size_t arity = (size_t)m->row->form;
    bool bool_operands = op == GIR_OP_And || op == GIR_OP_Or || op == GIR_OP_Xor || op == GIR_OP_Not;
    if (m->n_in != arity || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t ins[2] = { m->in[0], arity > 1 ? m->in[1] : -1 };
    for (size_t i = 0; bool_operands && i < arity; i++) {
        char suffix[16];
        snprintf(suffix, sizeof suffix, arity == 1 ? "x_bool" : "x%zu_bool", i);
        TRY(nnbr_cast_to(m, suffix, m->in[i], "bool", -1, &ins[i]));
    }
    gir_node *n;
    TRY(logic_node(m, op, ins, arity, &n));
    return logic_result(m, n);
}

/* EqualScalar, GreaterScalar ...: the comparison with a scalar constant
 * ("<function>/val"; the exact double rides in meta), as map_logic. */
static gir_status map_compare_scalar(mctx *m, bool *mapped)
{
    double v = nnbr_param_num(m, "val");
    if (m->n_in != 1 || m->n_out != 1)
        return GIR_OK;
    *mapped = true;
    int32_t ins[2] = { m->in[0], -1 };
    TRY(nnbr_scalar_value(m, "val", v, &ins[1]));
    gir_node *n;
    TRY(logic_node(m, m->row->op, ins, 2, &n));
    TRY(gir_attrs_set_float(m->g, &n->meta, NNB_META_VAL, v, m->err));
    return logic_result(m, n);
}

/* NotEqualScalar(0) is x != 0: Cast(to=bool) then Cast(to=float32); other
 * values stay opaque. */
static gir_status map_not_equal_scalar(mctx *m, bool *mapped)
{
    static const Nnabla__NotEqualScalarParameter zero = NNABLA__NOT_EQUAL_SCALAR_PARAMETER__INIT;
    const Nnabla__NotEqualScalarParameter *p = PARAM(m, NOT_EQUAL_SCALAR_PARAM, not_equal_scalar_param, zero);
    if (m->n_in != 1 || m->n_out != 1 || p->val != 0.0)
        return GIR_OK;
    *mapped = true;
    gir_node *n;
    TRY(logic_node(m, GIR_OP_Cast, m->in, 1, &n));
    TRY(nnbr_set_string(m, n, "to", "bool"));
    return logic_result(m, n);
}

/* ---- the table: every function mapped by code, with its map function ---- */

static const fn_map fns[] = {
    { "Affine", map_affine },
    { "Convolution", nnbr_map_convolution },
    { "Deconvolution", nnbr_map_deconvolution },
    { "DepthwiseConvolution", nnbr_map_depthwise_convolution },
    { "DepthwiseDeconvolution", nnbr_map_depthwise_deconvolution },
    { "MaxPooling", nnbr_map_max_pooling },
    { "AveragePooling", nnbr_map_average_pooling },
    { "SumPooling", nnbr_map_sum_pooling },
    { "GlobalAveragePooling", nnbr_map_global_average_pooling },
    { "Unpooling", nnbr_map_unpooling },
    { "Embed", nnbr_map_embed },
    { "Swish", nnbr_map_swish },
    { "GELU", nnbr_map_gelu },
    { "Mish", nnbr_map_mish },
    { "LogSigmoid", nnbr_map_log_sigmoid },
    { "TanhShrink", nnbr_map_tanh_shrink },
    { "CReLU", nnbr_map_crelu },
    { "CELU", nnbr_map_celu },
    { "Stack", map_join, .op = GIR_OP_Stack },
    { "Unlink", map_forward_identity },
    { "ClipGradByValue", map_forward_identity },
    { "ClipGradByNorm", map_forward_identity },
    { "MulN", map_mul_n },
    { "Tan", map_tan },
    { "Sinh", map_sinh },
    { "Cosh", map_cosh },
    { "Sinc", map_sinc },
    { "IsNaN", map_is_nan },
    { "IsInf", map_is_inf },
    { "ResetNaN", map_reset_nan },
    { "ResetInf", map_reset_inf },
    { "BinarySigmoid", map_binary_sigmoid },
    { "BinaryTanh", map_binary_tanh },
    { "Round", map_round },
    { "Flip", map_flip },
    { "Arange", nnbr_map_arange },
    { "Constant", nnbr_map_constant },
    { "OneHot", nnbr_map_one_hot },
    { "WeightStandardization", nnbr_map_weight_standardization },
    { "WeightNormalization", nnbr_map_weight_normalization },
    { "Interpolate", nnbr_map_interpolate },
    { "LayerNormalization", nnbr_map_layer_normalization },
    { "TensorNormalization", nnbr_map_tensor_normalization },
    { "InstanceNormalization", nnbr_map_instance_normalization },
    { "GroupNormalization", nnbr_map_group_normalization },
    { "PReLU", nnbr_map_prelu },
    { "SoftPlus", nnbr_map_softplus },
    { "HardSigmoid", nnbr_map_hard_sigmoid },
    { "HardTanh", nnbr_map_hard_tanh },
    { "ReLU6", nnbr_map_relu6 },
    { "BatchNormalization", map_batch_normalization },
    { "Sum", map_reduce_fn, .op = GIR_OP_ReduceSum },
    { "Mean", map_reduce_fn, .op = GIR_OP_ReduceMean },
    { "Prod", map_reduce_fn, .op = GIR_OP_ReduceProd },
    { "Max", map_reduce_fn, .op = GIR_OP_ReduceMax, .special = GIR_OP_ArgMax },
    { "Min", map_reduce_fn, .op = GIR_OP_ReduceMin, .special = GIR_OP_ArgMin },
    { "ReduceSum", map_reduce_all, .op = GIR_OP_ReduceSum },
    { "ReduceMean", map_reduce_all, .op = GIR_OP_ReduceMean },
    { "Add2", map_binary, .op = GIR_OP_Add },
    { "BcAdd2", map_binary, .op = GIR_OP_Add },
    { "Sub2", map_binary, .op = GIR_OP_Sub },
    { "Mul2", map_binary, .op = GIR_OP_Mul },
    { "Div2", map_binary, .op = GIR_OP_Div },
    { "Pow2", map_binary, .op = GIR_OP_Pow },
    { "AddN", map_add_n },
    { "AddScalar", map_scalar, .op = GIR_OP_Add, .form = SC_X_OP_C },
    { "MulScalar", map_scalar, .op = GIR_OP_Mul, .form = SC_X_OP_C, .special = GIR_OP_Neg, .special_val = -1.0 },
    { "PowScalar", map_scalar, .op = GIR_OP_Pow, .form = SC_X_OP_C, .special = GIR_OP_Sqrt, .special_val = 0.5 },
    { "RSubScalar", map_scalar, .op = GIR_OP_Sub, .form = SC_C_OP_X },
    { "RDivScalar", map_scalar, .op = GIR_OP_Div, .form = SC_C_OP_X, .special = GIR_OP_Reciprocal, .special_val = 1.0 },
    { "RPowScalar", map_scalar, .op = GIR_OP_Pow, .form = SC_C_OP_X },
    { "MinimumScalar", map_scalar, .op = GIR_OP_Clip, .form = SC_CLIP_MAX },
    { "MaximumScalar", map_scalar, .op = GIR_OP_Clip, .form = SC_CLIP_MIN },
    { "Sign", nnbr_map_sign },
    { "BatchMatmul", map_batch_matmul },
    { "Concatenate", map_join, .op = GIR_OP_Concat },
    { "Split", map_split },
    { "Slice", nnbr_map_slice },
    { "Pad", nnbr_map_pad },
    { "Transpose", nnbr_map_transpose },
    { "Reshape", nnbr_map_reshape },
    { "Broadcast", nnbr_map_broadcast },
    { "BroadcastTo", nnbr_map_broadcast_to },
    { "Tile", nnbr_map_tile },
    { "Gather", nnbr_map_gather },
    { "Dropout", nnbr_map_dropout },
    { "Equal", map_logic, .op = GIR_OP_Equal, .form = 2 },
    { "Greater", map_logic, .op = GIR_OP_Greater, .form = 2 },
    { "GreaterEqual", map_logic, .op = GIR_OP_GreaterOrEqual, .form = 2 },
    { "Less", map_logic, .op = GIR_OP_Less, .form = 2 },
    { "LessEqual", map_logic, .op = GIR_OP_LessOrEqual, .form = 2 },
    { "LogicalAnd", map_logic, .op = GIR_OP_And, .form = 2 },
    { "LogicalOr", map_logic, .op = GIR_OP_Or, .form = 2 },
    { "LogicalXor", map_logic, .op = GIR_OP_Xor, .form = 2 },
    { "LogicalNot", map_logic, .op = GIR_OP_Not, .form = 1 },
    { "Where", nnbr_map_where },
    { "NotEqualScalar", map_not_equal_scalar },
    { "EqualScalar", map_compare_scalar, .op = GIR_OP_Equal },
    { "GreaterScalar", map_compare_scalar, .op = GIR_OP_Greater },
    { "GreaterEqualScalar", map_compare_scalar, .op = GIR_OP_GreaterOrEqual },
    { "LessScalar", map_compare_scalar, .op = GIR_OP_Less },
    { "LessEqualScalar", map_compare_scalar, .op = GIR_OP_LessOrEqual },
    { NULL, NULL },
};

gir_status nnb_map_function(nnb_reader *r, const Nnabla__Function *f, const char *node_name, const int32_t *in,
                            size_t n_in, const int32_t *out, size_t n_out, gir_node **first, gir_error *err)
{
    mctx m = { r, r->g, f, node_name, in, n_in, out, n_out, err, NULL, NULL };
    bool mapped = false;
    gir_status st = GIR_OK;
    /* a function with fields of a newer schema is kept as it is: mapping
     * it would drop what those fields say */
    bool newer = gir_pbtext_unknown_count(&f->base) > 0;
    for (const fn_map *e = fns; e->type && !newer; e++) {
        if (strcmp(e->type, f->type) != 0)
            continue;
        /* a parameter message, when set, must be the function's own */
        const ProtobufCFieldDescriptor *own = nnb_param_field_of_type(f->type);
        m.row = e;
        if (!nnbr_foreign_param(&m, own ? (Nnabla__Function__ParameterCase)own->id : NNABLA__FUNCTION__PARAMETER__NOT_SET))
            st = e->fn(&m, &mapped);
        break;
    }
    const gir_op_map *pm = newer || mapped || st ? NULL : gir_map_read_row(nnb_ops, f->type);
    if (pm)
        st = nnbr_map_plain(&m, &mapped, pm);
    if (!st && !mapped) {
        m.first = NULL;
        st = map_opaque(&m);
    }
    if (st)
        return st;
    if (!mapped && m.first == NULL)
        return gir_fail(err, GIR_E_INTERNAL, "function '%s' made no node", node_name);
    /* the function's parameter message was absent: remember it for the writer */
    if (mapped && f->parameter_case == NNABLA__FUNCTION__PARAMETER__NOT_SET) {
        if (nnb_param_field_of_type(f->type))
            TRY(gir_attrs_set_int(r->g, &m.first->meta, NNB_META_NO_PARAM, 1, err));
    }
    *first = m.first;
    return GIR_OK;
}
