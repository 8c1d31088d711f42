/* Writing ONNX: gir_graph -> ModelProto at opset 6..18.
 *
 * The whole graph is checked first and every construct that cannot be
 * written is reported at once.  The model is then streamed: small messages
 * are packed by protobuf-c straight into the output, and each
 * initializer's bytes go from the (lazily loaded) tensor to the file one
 * tensor at a time, into the model or into the external data file. */
#include "write.h"
#include "io/pbwire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gir_config.h"

void *onnxw_aalloc(writer *w, size_t n)
{
    void *p = gir_arena_alloc(&w->a, n ? n : 1);
    if (!p)
        w->oom = true;
    return p;
}

char *onnxw_astr(writer *w, const char *s)
{
    char *p = gir_arena_strdup(&w->a, s ? s : "");
    if (!p)
        w->oom = true;
    return p;
}

const char *onnxw_meta_s(const gir_attrs *m, const char *key)
{
    const gir_attr *a = gir_attrs_find(m, key);
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}

void onnxw_unsupported(writer *w, const gir_node *n, gir_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_unsupported_vaddf(w->u, code, n ? n->name : "", fmt, ap);
    va_end(ap);
}

/* protobuf-c allocations in the writer's arena (freed with it). */
static void *arena_pb_alloc(void *data, size_t size)
{
    return gir_arena_alloc(data, size ? size : 1);
}

static void arena_pb_free(void *data, void *p)
{
    (void)data;
    (void)p;
}

/* Unpacks a base64 metadata blob into the arena. */
ProtobufCMessage *onnxw_unpack_blob(writer *w, const ProtobufCMessageDescriptor *desc, const char *blob)
{
    uint8_t *buf;
    size_t n;
    if (!onnx_base64_decode(blob, &buf, &n))
        return NULL;
    ProtobufCAllocator al = { arena_pb_alloc, arena_pb_free, &w->a };
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &al, n, buf);
    free(buf);
    return m;
}

/* ---- names and initializers ------------------------------------------------ */

bool onnxw_add_init(writer *w, const char *name, gir_tensor *t)
{
    if (!GIR_GROW(w->inits, w->cap_inits, w->n_inits + 1) ||
        !onnx_map_put(&w->names, name, (int32_t)w->n_inits + 1)) {
        w->oom = true;
        return false;
    }
    w->inits[w->n_inits++] = (winit){ name, gir_tensor_ref(t), false, 0 };
    return true;
}

/* ---- messages --------------------------------------------------------------- */

static Onnx__ValueInfoProto *value_info(writer *w, const gir_value *v)
{
    Onnx__ValueInfoProto *vi = onnxw_aalloc(w, sizeof *vi);
    if (!vi)
        return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = onnxw_astr(w, v->name);
    const char *doc = onnxw_meta_s(&v->meta, ONNX_META_DOC);
    if (doc)
        vi->doc_string = onnxw_astr(w, doc);
    const char *blob = onnxw_meta_s(&v->meta, ONNX_META_TYPE);
    if (blob) {
        vi->type = (Onnx__TypeProto *)onnxw_unpack_blob(w, &onnx__type_proto__descriptor, blob);
        if (!vi->type)
            w->bad_meta = v->name;
        return vi;
    }
    if (v->dtype == GIR_DT_UNKNOWN && v->shape.rank < 0)
        return vi;
    Onnx__TypeProto *tp = onnxw_aalloc(w, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = onnxw_aalloc(w, sizeof *tt);
    if (!tp || !tt)
        return NULL;
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    if (v->dtype != GIR_DT_UNKNOWN) {
        tt->has_elem_type = 1;
        tt->elem_type = onnx_dtype_from_gir(v->dtype);
    }
    if (v->shape.rank >= 0) {
        Onnx__TensorShapeProto *sp = onnxw_aalloc(w, sizeof *sp);
        if (!sp)
            return NULL;
        onnx__tensor_shape_proto__init(sp);
        sp->n_dim = (size_t)v->shape.rank;
        sp->dim = onnxw_aalloc(w, (size_t)(v->shape.rank ? v->shape.rank : 1) * sizeof *sp->dim);
        if (!sp->dim)
            return NULL;
        for (int i = 0; i < v->shape.rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = onnxw_aalloc(w, sizeof *d);
            if (!d)
                return NULL;
            onnx__tensor_shape_proto__dimension__init(d);
            if (v->shape.dims[i] >= 0) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = v->shape.dims[i];
            } else if (v->dim_names[i]) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = onnxw_astr(w, v->dim_names[i]);
            }
            sp->dim[i] = d;
        }
        tt->shape = sp;
    }
    vi->type = tp;
    return vi;
}

/* ---- the graph ------------------------------------------------------------ */

static int64_t ir_for_opset(int64_t opset)
{
    static const int64_t ir[] = { 3, 3, 3, 4, 5, 6, 7, 7, 7, 8, 8, 8, 8 }; /* opsets 6..18 */
    return opset >= 6 && opset <= 18 ? ir[opset - 6] : 8;
}

static int64_t source_opset(const gir_graph *g)
{
    const char *src = onnxw_meta_s(&g->meta, "source.format");
    const gir_attr *d = gir_attrs_find(&g->meta, ONNX_META_OPSET_DOMAINS);
    const gir_attr *v = gir_attrs_find(&g->meta, ONNX_META_OPSET_VERSIONS);
    if (!src || strcmp(src, "onnx") != 0 || !d || !v || d->type != GIR_ATTR_STRINGS || v->type != GIR_ATTR_INTS ||
        d->u.strs.n != v->u.ints.n)
        return 0;
    for (size_t i = 0; i < d->u.strs.n; i++)
        if (!*d->u.strs.v[i] || strcmp(d->u.strs.v[i], "ai.onnx") == 0)
            return v->u.ints.v[i];
    return 0;
}

static gir_status setup(writer *w, gir_error *err)
{
    const gir_graph *g = w->g;
    int64_t src = source_opset(g);
    int64_t dflt = src >= ONNX_WRITE_OPSET_MIN && src <= ONNX_WRITE_OPSET_MAX ? src : ONNX_DEFAULT_OPSET;
    if (w->fallback_opset)
        dflt = w->fallback_opset;
    gir_status st = gir_options_int(w->opts, "opset", dflt, &w->opset, err);
    if (st)
        return st;
    if (w->opset < ONNX_WRITE_OPSET_MIN || w->opset > ONNX_WRITE_OPSET_MAX)
        return gir_fail(err, GIR_E_ARGUMENT, "option opset=%lld is outside the opsets graphconv writes (%d..%d)",
                        (long long)w->opset, ONNX_WRITE_OPSET_MIN, ONNX_WRITE_OPSET_MAX);
    w->ir_version = ir_for_opset(w->opset);
    if (src == w->opset) {
        int64_t iv = gir_attrs_get_int(&g->meta, ONNX_META_IR_VERSION, 0);
        if (iv >= 3)
            w->ir_version = iv;
    }
    w->allow_opaque = gir_options_flag(w->opts, "allow-opaque");
    if (!w->u)
        w->u = gir_unsupported_new();
    w->const_done = calloc(g->n_values ? g->n_values : 1, sizeof *w->const_done);
    if (!w->u || !w->const_done)
        return gir_nomem(err);
    for (size_t i = 0; i < g->n_values; i++)
        if (!onnx_map_put(&w->names, g->values[i]->name, 0))
            return gir_nomem(err);
    return GIR_OK;
}

static void push_vi(writer *w, Onnx__ValueInfoProto ***arr, size_t *n, Onnx__ValueInfoProto *vi)
{
    if (!vi) {
        w->oom = true;
        return;
    }
    Onnx__ValueInfoProto **na = onnxw_aalloc(w, (*n + 1) * sizeof *na);
    if (!na)
        return;
    if (*n)
        memcpy(na, *arr, *n * sizeof *na);
    na[(*n)++] = vi;
    *arr = na;
}

static bool is_initializer(const gir_value *v)
{
    return (v->kind == GIR_VALUE_WEIGHT || v->kind == GIR_VALUE_CONST) && v->data && !onnxw_is_constant_node_value(v);
}

static void build_graph(writer *w, gir_error *err)
{
    const gir_graph *g = w->g;
    /* Initializers from weights and constants, in value order. */
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (!is_initializer(v))
            continue;
        if (!onnx_dtype_from_gir(v->data->dtype)) {
            gir_unsupported_add_value(w->u, GIR_E_UNSUPPORTED, "a weight of unknown element type", v->name);
            continue;
        }
        onnxw_add_init(w, v->name, v->data);
    }
    w->n_value_inits = w->n_inits;
    /* Graph inputs: the graph's, then weights the file listed as inputs at
     * their places, and weights without data (the caller must feed them). */
    bool *listed = calloc(g->n_values ? g->n_values : 1, sizeof *listed);
    if (!listed) {
        w->oom = true;
        return;
    }
    size_t n_extra = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (gir_attrs_find(&v->meta, ONNX_META_INPUT_INDEX) || (w->ir_version < 4 && is_initializer(v)) ||
            (v->kind == GIR_VALUE_WEIGHT && !v->data))
            n_extra++;
    }
    size_t total = g->n_inputs + n_extra;
    const gir_value **slots = calloc(total ? total : 1, sizeof *slots);
    if (!slots) {
        free(listed);
        w->oom = true;
        return;
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        listed[g->inputs[i]] = true;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        int64_t at = gir_attrs_get_int(&v->meta, ONNX_META_INPUT_INDEX, -1);
        if (!listed[i] && at >= 0 && (size_t)at < total && !slots[at]) {
            slots[at] = v;
            listed[i] = true;
        }
    }
    size_t next = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        while (slots[next])
            next++;
        slots[next] = g->values[g->inputs[i]];
    }
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (listed[i] || !(gir_attrs_find(&v->meta, ONNX_META_INPUT_INDEX) || (w->ir_version < 4 && is_initializer(v)) ||
                           (v->kind == GIR_VALUE_WEIGHT && !v->data)))
            continue;
        while (next < total && slots[next])
            next++;
        if (next < total)
            slots[next] = v;
        listed[i] = true;
    }
    for (size_t i = 0; i < total; i++) {
        if (!slots[i])
            continue;
        /* onnx.checker requires a shape on every graph input */
        if (slots[i]->shape.rank < 0 && !slots[i]->data && !onnxw_meta_s(&slots[i]->meta, ONNX_META_TYPE))
            onnxw_unsupported(w, NULL, GIR_E_UNSUPPORTED, "graph input '%s' of unknown rank (an ONNX graph input needs a "
                              "shape; give its shape with --input-shape)", slots[i]->name);
        push_vi(w, &w->inputs, &w->n_inputs, value_info(w, slots[i]));
    }
    free(slots);
    free(listed);
    /* Nodes, with Constant nodes just before their first consumer. */
    for (size_t i = 0; i < g->n_nodes; i++)
        onnxw_write_node(w, g->nodes[i], err);
    for (size_t i = 0; i < g->n_values; i++)
        if (!w->const_done[i] && onnxw_is_constant_node_value(g->values[i]))
            onnxw_constant_node(w, (int32_t)i, err);
    /* Outputs and the types of intermediate values. */
    bool *is_out = calloc(g->n_values ? g->n_values : 1, sizeof *is_out);
    if (!is_out) {
        w->oom = true;
        return;
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        push_vi(w, &w->outputs, &w->n_outputs, value_info(w, g->values[g->outputs[i]]));
        is_out[g->outputs[i]] = true;
    }
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        if (v->kind == GIR_VALUE_INTERMEDIATE && !is_out[i] &&
            (v->dtype != GIR_DT_UNKNOWN || gir_attrs_find(&v->meta, ONNX_META_TYPE)))
            push_vi(w, &w->vinfo, &w->n_vinfo, value_info(w, v));
    }
    free(is_out);
}

/* ---- streaming output -------------------------------------------------------- */

typedef struct sink {
    ProtobufCBuffer base;
    gir_outfile *f;
    gir_error *err;
    gir_status st;
    uint64_t written;
} sink;

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    sink *s = (sink *)b;
    if (s->st == GIR_OK)
        s->st = gir_outfile_write(s->f, data, len, s->err);
    s->written += len;
}

static void put(sink *s, const void *p, size_t n)
{
    sink_append(&s->base, n, p);
}

static void put_varint(sink *s, uint64_t v)
{
    uint8_t b[GIR_PB_VARINT_MAX];
    put(s, b, gir_pb_put_varint(b, v));
}

static void put_tag(sink *s, uint32_t field, uint32_t wt)
{
    put_varint(s, (uint64_t)field << 3 | wt);
}

static size_t tag_len(uint32_t field)
{
    return gir_pb_varint_len((uint64_t)field << 3);
}

static size_t bytes_field_len(uint32_t field, uint64_t n)
{
    return tag_len(field) + gir_pb_varint_len(n) + (size_t)n;
}

typedef struct ext_layout {
    const char *location;
    char offset[24], length[24];
} ext_layout;

static void ext_layout_of(const winit *in, const char *location, ext_layout *x)
{
    x->location = location;
    snprintf(x->offset, sizeof x->offset, "%llu", (unsigned long long)in->offset);
    snprintf(x->length, sizeof x->length, "%llu", (unsigned long long)in->t->nbytes);
}

static size_t entry_len(const char *k, const char *v)
{
    return bytes_field_len(1, strlen(k)) + bytes_field_len(2, strlen(v));
}

/* Size of a TensorProto for an initializer: dims, data_type, name, then
 * raw_data or the external data entries. */
static uint64_t init_len(const winit *in, const char *location)
{
    uint64_t n = 0;
    for (int i = 0; i < in->t->shape.rank; i++)
        n += tag_len(1) + gir_pb_varint_len((uint64_t)in->t->shape.dims[i]);
    n += tag_len(2) + gir_pb_varint_len((uint64_t)onnx_dtype_from_gir(in->t->dtype));
    n += bytes_field_len(8, strlen(in->name));
    if (in->external) {
        ext_layout x;
        ext_layout_of(in, location, &x);
        n += bytes_field_len(13, entry_len("location", x.location));
        n += bytes_field_len(13, entry_len("offset", x.offset));
        n += bytes_field_len(13, entry_len("length", x.length));
        n += tag_len(14) + 1;
    } else {
        n += tag_len(9) + gir_pb_varint_len(in->t->nbytes) + in->t->nbytes;
    }
    return n;
}

static void put_bytes_field(sink *s, uint32_t field, const char *p, size_t n)
{
    put_tag(s, field, 2);
    put_varint(s, n);
    put(s, p, n);
}

static void put_entry(sink *s, const char *k, const char *v)
{
    put_tag(s, 13, 2);
    put_varint(s, entry_len(k, v));
    put_bytes_field(s, 1, k, strlen(k));
    put_bytes_field(s, 2, v, strlen(v));
}

/* Streams one tensor's bytes, loading it only for the copy. */
static gir_status put_tensor_data(sink *s, gir_tensor *t, gir_error *err)
{
    bool loaded = t->data != NULL;
    const void *d;
    gir_status st = gir_tensor_load(t, &d, err);
    if (st)
        return st;
    put(s, d, (size_t)t->nbytes);
    if (!loaded)
        gir_tensor_unload(t);
    if (!s->st)
        gir_progress_add(t->nbytes);
    return s->st;
}

static gir_status put_init(sink *s, sink *data, const winit *in, const char *location, gir_error *err)
{
    put_tag(s, 5, 2);
    put_varint(s, init_len(in, location));
    for (int i = 0; i < in->t->shape.rank; i++) {
        put_tag(s, 1, 0);
        put_varint(s, (uint64_t)in->t->shape.dims[i]);
    }
    put_tag(s, 2, 0);
    put_varint(s, (uint64_t)onnx_dtype_from_gir(in->t->dtype));
    put_bytes_field(s, 8, in->name, strlen(in->name));
    if (in->external) {
        ext_layout x;
        ext_layout_of(in, location, &x);
        put_entry(s, "location", x.location);
        put_entry(s, "offset", x.offset);
        put_entry(s, "length", x.length);
        put_tag(s, 14, 0);
        put_varint(s, 1);
        return put_tensor_data(data, in->t, err);
    }
    put_tag(s, 9, 2);
    put_varint(s, in->t->nbytes);
    return put_tensor_data(s, in->t, err);
}

/* The default domain is imported unless a model read from ONNX did not
 * import it and has no node of it. */
static bool needs_default_domain(const writer *w, const gir_attr *src_domains)
{
    if (!src_domains)
        return true;
    for (size_t i = 0; i < src_domains->u.strs.n; i++)
        if (!*src_domains->u.strs.v[i] || strcmp(src_domains->u.strs.v[i], "ai.onnx") == 0)
            return true;
    for (size_t i = 0; i < w->n_nodes; i++) {
        const char *d = w->nodes[i]->domain;
        if (!d || !*d || strcmp(d, "ai.onnx") == 0)
            return true;
    }
    return false;
}

/* The model in three parts around the graph, the graph in three parts
 * around the initializers, so that fields come in field-number order. */
typedef struct parts {
    Onnx__ModelProto m1, m2;
    Onnx__GraphProto g1, g2;
} parts;

static void model_parts(writer *w, parts *p)
{
    const gir_graph *g = w->g;
    onnx__model_proto__init(&p->m1);
    onnx__model_proto__init(&p->m2);
    onnx__graph_proto__init(&p->g1);
    onnx__graph_proto__init(&p->g2);
    Onnx__ModelProto *extra = NULL;
    const char *blob = onnxw_meta_s(&g->meta, ONNX_META_EXTRA);
    if (blob && !(extra = (Onnx__ModelProto *)onnxw_unpack_blob(w, &onnx__model_proto__descriptor, blob)))
        w->bad_meta = "(graph)";
    /* m1: ir_version .. doc_string */
    p->m1.has_ir_version = 1;
    p->m1.ir_version = w->ir_version;
    const char *pn = onnxw_meta_s(&g->meta, ONNX_META_PRODUCER_NAME), *pv = onnxw_meta_s(&g->meta, ONNX_META_PRODUCER_VERSION);
    p->m1.producer_name = onnxw_astr(w, pn ? pn : "graphconv");
    if (pn ? pv != NULL : true)
        p->m1.producer_version = onnxw_astr(w, pn ? pv : GIR_VERSION);
    const char *dom = onnxw_meta_s(&g->meta, ONNX_META_DOMAIN), *doc = onnxw_meta_s(&g->meta, ONNX_META_DOC);
    if (dom)
        p->m1.domain = onnxw_astr(w, dom);
    const gir_attr *mv = gir_attrs_find(&g->meta, ONNX_META_MODEL_VERSION);
    if (mv && mv->type == GIR_ATTR_INT) {
        p->m1.has_model_version = 1;
        p->m1.model_version = mv->u.i;
    }
    if (doc)
        p->m1.doc_string = onnxw_astr(w, doc);
    /* g1: nodes, name; g2: doc, inputs, outputs, value_info, extras */
    p->g1.n_node = w->n_nodes;
    p->g1.node = w->nodes;
    p->g1.name = onnxw_astr(w, g->name && *g->name ? g->name : "graphconv");
    const char *gdoc = onnxw_meta_s(&g->meta, ONNX_META_GRAPH_DOC);
    if (gdoc)
        p->g2.doc_string = onnxw_astr(w, gdoc);
    p->g2.n_input = w->n_inputs;
    p->g2.input = w->inputs;
    p->g2.n_output = w->n_outputs;
    p->g2.output = w->outputs;
    p->g2.n_value_info = w->n_vinfo;
    p->g2.value_info = w->vinfo;
    if (extra && extra->graph) {
        p->g2.n_sparse_initializer = extra->graph->n_sparse_initializer;
        p->g2.sparse_initializer = extra->graph->sparse_initializer;
        p->g2.n_quantization_annotation = extra->graph->n_quantization_annotation;
        p->g2.quantization_annotation = extra->graph->quantization_annotation;
    }
    /* m2: opset_import, metadata_props, training_info, functions */
    const gir_attr *doms = gir_attrs_find(&g->meta, ONNX_META_OPSET_DOMAINS);
    const gir_attr *vers = gir_attrs_find(&g->meta, ONNX_META_OPSET_VERSIONS);
    bool src_onnx = doms && vers && doms->type == GIR_ATTR_STRINGS && vers->type == GIR_ATTR_INTS &&
                    doms->u.strs.n == vers->u.ints.n;
    size_t nsrc = src_onnx ? doms->u.strs.n : 0;
    size_t cap = 1 + nsrc + w->n_xdom;
    p->m2.opset_import = onnxw_aalloc(w, cap * sizeof *p->m2.opset_import);
    if (!p->m2.opset_import)
        return;
    Onnx__OperatorSetIdProto *os = onnxw_aalloc(w, cap * sizeof *os);
    if (!os)
        return;
    size_t no = 0;
    if (needs_default_domain(w, src_onnx ? doms : NULL)) {
        onnx__operator_set_id_proto__init(&os[no]);
        os[no].domain = NULL;
        os[no].has_version = 1;
        os[no].version = w->opset;
        /* keep the source's spelling of the default domain */
        for (size_t i = 0; i < nsrc; i++)
            if (strcmp(doms->u.strs.v[i], "ai.onnx") == 0 && w->opset == vers->u.ints.v[i])
                os[no].domain = (char *)"ai.onnx";
        p->m2.opset_import[no] = &os[no];
        no++;
    }
    for (size_t i = 0; i < nsrc; i++) {
        const char *d = doms->u.strs.v[i];
        if (!*d || strcmp(d, "ai.onnx") == 0)
            continue;
        onnx__operator_set_id_proto__init(&os[no]);
        os[no].domain = onnxw_astr(w, d);
        os[no].has_version = 1;
        os[no].version = vers->u.ints.v[i];
        p->m2.opset_import[no] = &os[no];
        no++;
    }
    for (size_t i = 0; i < w->n_xdom; i++) {
        bool seen = false;
        for (size_t k = 0; k < no; k++)
            seen |= os[k].domain && strcmp(os[k].domain, w->xdom[i]) == 0;
        if (seen)
            continue;
        onnx__operator_set_id_proto__init(&os[no]);
        os[no].domain = (char *)w->xdom[i];
        os[no].has_version = 1;
        os[no].version = w->xver[i];
        p->m2.opset_import[no] = &os[no];
        no++;
    }
    p->m2.n_opset_import = no;
    const gir_attr *ks = gir_attrs_find(&g->meta, ONNX_META_PROPS_KEYS);
    const gir_attr *vs = gir_attrs_find(&g->meta, ONNX_META_PROPS_VALUES);
    if (ks && vs && ks->type == GIR_ATTR_STRINGS && vs->type == GIR_ATTR_STRINGS && ks->u.strs.n == vs->u.strs.n &&
        ks->u.strs.n) {
        size_t n = ks->u.strs.n;
        p->m2.metadata_props = onnxw_aalloc(w, n * sizeof *p->m2.metadata_props);
        Onnx__StringStringEntryProto *e = onnxw_aalloc(w, n * sizeof *e);
        if (!p->m2.metadata_props || !e)
            return;
        for (size_t i = 0; i < n; i++) {
            onnx__string_string_entry_proto__init(&e[i]);
            e[i].key = (char *)ks->u.strs.v[i];
            e[i].value = (char *)vs->u.strs.v[i];
            p->m2.metadata_props[i] = &e[i];
        }
        p->m2.n_metadata_props = n;
    }
    if (extra) {
        p->m2.n_training_info = extra->n_training_info;
        p->m2.training_info = extra->training_info;
        p->m2.n_functions = extra->n_functions;
        p->m2.functions = extra->functions;
    }
}

static gir_status stream(writer *w, const char *path, gir_error *err)
{
    bool force = gir_options_flag(w->opts, "force");
    bool external = gir_options_flag(w->opts, "external-data");
    int64_t threshold;
    gir_status st = gir_options_int(w->opts, "external-threshold", 1024, &threshold, err);
    if (st)
        return st;
    if (threshold < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "option external-threshold must not be negative");
    parts p;
    model_parts(w, &p);
    if (w->oom)
        return gir_nomem(err);
    if (w->bad_meta)
        return gir_fail(err, GIR_E_SCHEMA, "the onnx metadata of '%s' is corrupt", w->bad_meta);
    /* Layout: which tensors go to the side file, and the sizes. */
    char *data_path = NULL;
    const char *location = NULL;
    uint64_t off = 0;
    if (external) {
        data_path = gir_strdupf("%s.data", path);
        if (!data_path)
            return gir_nomem(err);
        location = gir_path_basename(data_path);
    }
    for (size_t i = 0; i < w->n_inits; i++) {
        winit *in = &w->inits[i];
        in->external = external && in->t->nbytes >= (uint64_t)threshold;
        if (in->external) {
            in->offset = off;
            off += in->t->nbytes;
        }
    }
    uint64_t glen = protobuf_c_message_get_packed_size(&p.g1.base) + protobuf_c_message_get_packed_size(&p.g2.base);
    for (size_t i = 0; i < w->n_inits; i++) {
        uint64_t l = init_len(&w->inits[i], location);
        glen += tag_len(5) + gir_pb_varint_len(l) + l;
    }
    uint64_t total = protobuf_c_message_get_packed_size(&p.m1.base) + tag_len(7) + gir_pb_varint_len(glen) + glen +
                     protobuf_c_message_get_packed_size(&p.m2.base);
    if (total > (uint64_t)INT32_MAX) {
        free(data_path);
        return gir_fail(err, GIR_E_LIMIT,
                        "the model would be %llu bytes, more than protobuf's 2 GiB limit; write the weights as "
                        "external data (--external-data, or -O external-data=1)",
                        (unsigned long long)total);
    }
    gir_outfile *mf = NULL, *df = NULL;
    if ((st = gir_outfile_open(path, force, &mf, err))) {
        free(data_path);
        return st;
    }
    if (external && (st = gir_outfile_open(data_path, force, &df, err))) {
        gir_outfile_abort(mf);
        free(data_path);
        return st;
    }
    sink s = { { sink_append }, mf, err, GIR_OK, 0 };
    sink ds = { { sink_append }, df, err, GIR_OK, 0 };
    protobuf_c_message_pack_to_buffer(&p.m1.base, &s.base);
    put_tag(&s, 7, 2);
    put_varint(&s, glen);
    protobuf_c_message_pack_to_buffer(&p.g1.base, &s.base);
    for (size_t i = 0; i < w->n_inits && !st && !s.st && !ds.st; i++)
        st = put_init(&s, &ds, &w->inits[i], location, err);
    protobuf_c_message_pack_to_buffer(&p.g2.base, &s.base);
    protobuf_c_message_pack_to_buffer(&p.m2.base, &s.base);
    if (!st)
        st = s.st ? s.st : ds.st;
    if (!st && s.written != total)
        st = gir_fail(err, GIR_E_INTERNAL, "wrote %llu bytes of a %llu-byte model", (unsigned long long)s.written,
                      (unsigned long long)total);
    if (st) {
        gir_outfile_abort(mf);
        gir_outfile_abort(df);
        free(data_path);
        return st;
    }
    /* the external data, then the model, as one unit */
    gir_outfile *both[2] = { df, mf };
    st = df ? gir_outfile_commit_all(both, 2, err) : gir_outfile_commit(mf, err);
    free(data_path);
    return st;
}

/* Builds every node's protobuf message and collects what cannot be
 * written into w->u: the planning both onnx_plan and onnx_write do.
 * fallback: the opset when no option asks for one (0: the source's). */
static gir_status prepare(writer *w, int64_t fallback, gir_error *err)
{
    w->fallback_opset = fallback;
    gir_status st = setup(w, err);
    if (st)
        return st;
    build_graph(w, err);
    if (err && err->code)
        return err->code;
    return w->oom ? gir_nomem(err) : GIR_OK;
}

static void writer_free(writer *w, bool own_u)
{
    for (size_t i = 0; i < w->n_inits; i++)
        gir_tensor_unref(w->inits[i].t);
    free(w->inits);
    free(w->nodes);
    free(w->const_done);
    onnx_map_free(&w->names);
    if (own_u)
        gir_unsupported_free(w->u);
    gir_arena_free(&w->a);
}

/* A model read at an opset before 7 is written back at that opset; when
 * that old opset cannot express the graph and no opset was asked for, the
 * default opset is used instead. */
static bool may_fall_back(const writer *w, const gir_options *opts)
{
    return w->opset < 7 && gir_unsupported_count(w->u) && !gir_options_get(opts, "opset");
}

gir_status onnx_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    w.u = u;
    gir_status st = prepare(&w, 0, err);
    bool again = st == GIR_OK && may_fall_back(&w, opts);
    writer_free(&w, false);
    if (!again)
        return st;
    gir_unsupported_reset(u);
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    w.u = u;
    st = prepare(&w, ONNX_DEFAULT_OPSET, err);
    writer_free(&w, false);
    return st;
}

/* One attempt at opset `fallback` (0: the option's or the source's). */
static gir_status write_once(const gir_graph *g, const char *path, const gir_options *opts, int64_t fallback,
                             bool *fall_back, int64_t *opset, gir_error *err)
{
    writer w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.opts = opts;
    gir_status st = prepare(&w, fallback, err);
    *opset = w.opset;
    *fall_back = st == GIR_OK && fallback == 0 && may_fall_back(&w, opts);
    if (!st && !*fall_back) {
        if (gir_unsupported_count(w.u))
            st = gir_unsupported_fail(w.u, "onnx", err);
        else
            st = stream(&w, path, err);
    }
    writer_free(&w, true);
    return st;
}

gir_status onnx_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err)
{
    int64_t opset = 0;
    bool fall_back = false;
    gir_status st = write_once(g, path, opts, 0, &fall_back, &opset, err);
    if (st || !fall_back)
        return st;
    int64_t old = opset;
    st = write_once(g, path, opts, ONNX_DEFAULT_OPSET, &fall_back, &opset, err);
    if (!st)
        gir_write_note(opts, "written at opset %lld: the source's opset %lld cannot express it",
                       (long long)opset, (long long)old);
    return st;
}
