/* ONNX: reading every opset form, writing at every opset, external data,
 * metadata, bad input, and the real models of ../shared. */
#include "testutil.h"

#include "formats/format.h"
#include "formats/onnx/onnx.h"
#include "passes/diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ==== building models ====================================================== */

typedef struct mb {
    gir_arena a;
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto os[4];
    Onnx__OperatorSetIdProto *osp[4];
    Onnx__NodeProto *nodes[64];
    Onnx__TensorProto *inits[32];
    Onnx__ValueInfoProto *ins[16], *outs[16], *vis[16];
} mb;

static char *S(mb *b, const char *s)
{
    return gir_arena_strdup(&b->a, s);
}

static void mb_start(mb *b, int64_t opset)
{
    memset(b, 0, sizeof *b);
    onnx__model_proto__init(&b->m);
    onnx__graph_proto__init(&b->g);
    b->m.has_ir_version = 1;
    b->m.ir_version = 8;
    b->m.producer_name = S(b, "test");
    b->m.graph = &b->g;
    b->g.name = S(b, "g");
    onnx__operator_set_id_proto__init(&b->os[0]);
    b->os[0].has_version = 1;
    b->os[0].version = opset;
    b->osp[0] = &b->os[0];
    b->m.opset_import = b->osp;
    b->m.n_opset_import = 1;
    b->g.node = b->nodes;
    b->g.initializer = b->inits;
    b->g.input = b->ins;
    b->g.output = b->outs;
    b->g.value_info = b->vis;
}

static void mb_import(mb *b, const char *domain, int64_t version)
{
    size_t i = b->m.n_opset_import++;
    onnx__operator_set_id_proto__init(&b->os[i]);
    b->os[i].domain = S(b, domain);
    b->os[i].has_version = 1;
    b->os[i].version = version;
    b->osp[i] = &b->os[i];
}

/* dims: "1,3,N,4" where a letter is a symbolic dimension; NULL: no shape. */
static Onnx__TensorShapeProto *shape_proto(mb *b, const char *dims)
{
    Onnx__TensorShapeProto *sp = gir_arena_alloc(&b->a, sizeof *sp);
    onnx__tensor_shape_proto__init(sp);
    sp->dim = gir_arena_alloc(&b->a, 8 * sizeof *sp->dim);
    for (const char *p = dims; *p;) {
        Onnx__TensorShapeProto__Dimension *d = gir_arena_alloc(&b->a, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end != p) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = v;
        } else {
            end = strchr(p, ',');
            if (!end)
                end = (char *)p + strlen(p);
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = gir_arena_strndup(&b->a, p, (size_t)(end - p));
        }
        sp->dim[sp->n_dim++] = d;
        p = *end ? end + 1 : end;
    }
    return sp;
}

static Onnx__ValueInfoProto *vi(mb *b, const char *name, int32_t elem, const char *dims)
{
    Onnx__ValueInfoProto *v = gir_arena_alloc(&b->a, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = S(b, name);
    if (elem) {
        Onnx__TypeProto *tp = gir_arena_alloc(&b->a, sizeof *tp);
        Onnx__TypeProto__Tensor *tt = gir_arena_alloc(&b->a, sizeof *tt);
        onnx__type_proto__init(tp);
        onnx__type_proto__tensor__init(tt);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp->tensor_type = tt;
        tt->has_elem_type = 1;
        tt->elem_type = elem;
        if (dims)
            tt->shape = shape_proto(b, dims);
        v->type = tp;
    }
    return v;
}

static void mb_in(mb *b, const char *name, int32_t elem, const char *dims)
{
    b->ins[b->g.n_input++] = vi(b, name, elem, dims);
}

static void mb_out(mb *b, const char *name, int32_t elem, const char *dims)
{
    b->outs[b->g.n_output++] = vi(b, name, elem, dims);
}

static void mb_vi(mb *b, const char *name, int32_t elem, const char *dims)
{
    b->vis[b->g.n_value_info++] = vi(b, name, elem, dims);
}

static Onnx__TensorProto *tensor(mb *b, const char *name, int32_t dt, const char *dims, const void *data, size_t n)
{
    Onnx__TensorProto *t = gir_arena_alloc(&b->a, sizeof *t);
    onnx__tensor_proto__init(t);
    if (name)
        t->name = S(b, name);
    t->has_data_type = 1;
    t->data_type = dt;
    t->dims = gir_arena_alloc(&b->a, 8 * sizeof *t->dims);
    for (const char *p = dims; *p;) {
        char *end;
        t->dims[t->n_dims++] = strtoll(p, &end, 10);
        p = *end ? end + 1 : end;
    }
    t->has_raw_data = 1;
    t->raw_data.len = n;
    t->raw_data.data = gir_arena_memdup(&b->a, data, n);
    return t;
}

static Onnx__TensorProto *mb_init(mb *b, const char *name, int32_t dt, const char *dims, const void *data, size_t n)
{
    return b->inits[b->g.n_initializer++] = tensor(b, name, dt, dims, data, n);
}

static Onnx__AttributeProto *attr(mb *b, const char *name, int type)
{
    Onnx__AttributeProto *a = gir_arena_alloc(&b->a, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = S(b, name);
    a->has_type = 1;
    a->type = type;
    return a;
}

static Onnx__AttributeProto *ai(mb *b, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
    return a;
}

static Onnx__AttributeProto *af(mb *b, const char *name, float v)
{
    Onnx__AttributeProto *a = attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
    return a;
}

static Onnx__AttributeProto *as(mb *b, const char *name, const char *v)
{
    Onnx__AttributeProto *a = attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)S(b, v);
    return a;
}

static Onnx__AttributeProto *aints(mb *b, const char *name, size_t n, const int64_t *v)
{
    Onnx__AttributeProto *a = attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = n;
    a->ints = gir_arena_memdup(&b->a, v, n * sizeof *v);
    return a;
}

static Onnx__AttributeProto *afloats(mb *b, const char *name, size_t n, const float *v)
{
    Onnx__AttributeProto *a = attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    a->n_floats = n;
    a->floats = gir_arena_memdup(&b->a, v, n * sizeof *v);
    return a;
}

static Onnx__AttributeProto *at(mb *b, const char *name, Onnx__TensorProto *t)
{
    Onnx__AttributeProto *a = attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    a->t = t;
    return a;
}

static size_t split_names(mb *b, const char *list, char ***out)
{
    *out = gir_arena_alloc(&b->a, 16 * sizeof **out);
    size_t n = 0;
    if (!list)
        return 0;
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        (*out)[n++] = gir_arena_strndup(&b->a, p, len);
        if (!e)
            break;
        p = e + 1;
    }
    return n;
}

/* A node; the attributes follow, NULL-terminated. */
static Onnx__NodeProto *mb_node(mb *b, const char *op, const char *name, const char *ins, const char *outs, ...)
{
    Onnx__NodeProto *np = gir_arena_alloc(&b->a, sizeof *np);
    onnx__node_proto__init(np);
    np->op_type = S(b, op);
    if (name)
        np->name = S(b, name);
    np->n_input = split_names(b, ins, &np->input);
    np->n_output = split_names(b, outs, &np->output);
    np->attribute = gir_arena_alloc(&b->a, 16 * sizeof *np->attribute);
    va_list ap;
    va_start(ap, outs);
    for (Onnx__AttributeProto *a; (a = va_arg(ap, Onnx__AttributeProto *));)
        np->attribute[np->n_attribute++] = a;
    va_end(ap);
    b->nodes[b->g.n_node++] = np;
    return np;
}

static char *mb_save(mb *b, const char *file)
{
    size_t n = onnx__model_proto__get_packed_size(&b->m);
    uint8_t *buf = malloc(n);
    onnx__model_proto__pack(&b->m, buf);
    char *path = tu_tmp(file);
    assert_true(tu_write(path, buf, n));
    free(buf);
    gir_arena_free(&b->a);
    return path;
}

/* ==== helpers ============================================================= */

enum { FLT = 1, U8 = 2, I8 = 3, U16 = 4, I16 = 5, I32 = 6, I64 = 7, STR = 8, BOOL_ = 9, F16 = 10, F64 = 11, U32 = 12,
       U64 = 13, BF16 = 16 };

static gir_graph *load(const char *path)
{
    return tu_load(path, "onnx", NULL);
}

static gir_status load_fails(const char *path, gir_error *err)
{
    gir_graph *g = NULL;
    gir_status st = gir_load(path, "onnx", NULL, &g, err);
    assert_null(g);
    return st;
}

static gir_options *opts_of(const char *kv[])
{
    gir_options *o = tu_options_kv((const char *const *)kv);
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "force", "1", &err), &err);
    return o;
}

static gir_status save(const gir_graph *g, const char *path, const char *kv[], gir_error *err)
{
    gir_options *o = opts_of(kv);
    gir_status st = gir_save(g, path, "onnx", o, err);
    gir_options_free(o);
    return st;
}

static size_t diff_count(const gir_graph *a, const gir_graph *b, bool names, bool meta)
{
    gir_diff_options o = { names, meta, true, 20 };
    gir_buf rep = GIR_BUF_INIT;
    size_t n = 0;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_diff(a, b, &o, &rep, &n, &err), &err);
    if (n)
        print_message("%s\n", rep.data ? rep.data : "");
    gir_buf_free(&rep);
    return n;
}

/* Writes g (with options), reads it back and checks it is the same graph. */
static gir_graph *roundtrip(const gir_graph *g, const char *file, const char *kv[], bool meta)
{
    char *path = tu_tmp(file);
    gir_error err = GIR_ERROR_INIT;
    TU_OK(save(g, path, kv, &err), &err);
    gir_graph *g2 = load(path);
    assert_int_equal(diff_count(g, g2, true, meta), 0);
    free(path);
    return g2;
}

static const gir_node *find_op(const gir_graph *g, const char *op)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (strcmp(gir_node_op(g->nodes[i]), op) == 0)
            return g->nodes[i];
    fail_msg("no %s node", op);
    return NULL;
}

static void assert_ints(const gir_node *n, const char *attr, size_t count, ...)
{
    const int64_t *v;
    ptrdiff_t got = gir_attrs_get_ints(&n->attrs, attr, &v);
    if (got != (ptrdiff_t)count)
        fail_msg("%s: attribute %s has %td values, want %zu", n->name, attr, got, count);
    va_list ap;
    va_start(ap, count);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(v[i], va_arg(ap, int));
    va_end(ap);
}

static const char *meta_str(const gir_attrs *m, const char *key)
{
    const gir_attr *a = gir_attrs_find(m, key);
    return a && a->type == GIR_ATTR_STRING ? a->u.s : NULL;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ==== the real models ====================================================== */

static void check_model(const char *name, size_t nodes, size_t weights, uint64_t bytes)
{
    char rel[128];
    snprintf(rel, sizeof rel, "models/%s.onnx", name);
    char *path = tu_shared(rel);
    gir_graph *g = load(path);
    assert_int_equal(g->n_nodes, nodes);
    size_t nw = 0;
    uint64_t nb = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        const gir_value *v = g->values[i];
        /* `info` prints a dtype and a full shape for every value */
        assert_int_equal(v->dtype, GIR_DT_F32);
        assert_true(gir_shape_is_known(&v->shape));
        if (v->data) {
            nw++;
            nb += v->data->nbytes;
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        assert_false(gir_node_is_opaque(g->nodes[i]));
    assert_int_equal(nw, weights);
    assert_int_equal(nb, bytes);
    assert_int_equal(g->n_inputs, 1);
    const gir_value *in = gir_graph_input(g, 0), *out = gir_graph_output(g, 0);
    char s[64];
    assert_string_equal(in->name, "data");
    assert_string_equal(gir_shape_str(&in->shape, s, sizeof s), "[1,3,224,224]");
    assert_string_equal(out->name, "logits");
    assert_string_equal(gir_shape_str(&out->shape, s, sizeof s), "[1,1000]");
    assert_string_equal(meta_str(&g->meta, "source.producer"), "pytorch 1.13.0");

    /* onnx -> onnx: same graph, names, metadata, bit-identical weights, and
     * the same bytes when written twice */
    snprintf(rel, sizeof rel, "%s.onnx", name);
    gir_graph *g2 = roundtrip(g, rel, NULL, true);
    char *p1 = tu_tmp(rel), *p2 = tu_tmp("again.onnx");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(save(g2, p2, NULL, &err), &err);
    assert_true(tu_files_equal(p1, p2));
    free(p1);
    free(p2);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(path);
}

static void test_models(void **state)
{
    (void)state;
    check_model("resnet18", 49, 42, 46738848);
    check_model("mobilenet_v2", 100, 106, 13951264);
    check_model("squeezenet1_0", 82, 35, 4985120);
}

static void test_model_details(void **state)
{
    (void)state;
    char *path = tu_shared("models/resnet18.onnx");
    gir_graph *g = load(path);
    const gir_node *conv = g->nodes[0];
    assert_string_equal(conv->name, "/conv1/Conv");
    assert_int_equal(conv->op, GIR_OP_Conv);
    assert_ints(conv, "kernel_shape", 2, 7, 7);
    assert_ints(conv, "strides", 2, 2, 2);
    assert_ints(conv, "pads", 4, 3, 3, 3, 3);
    assert_ints(conv, "dilations", 2, 1, 1);
    assert_int_equal(gir_node_int(conv, "group", 0), 1);
    char s[64];
    assert_string_equal(gir_shape_str(&gir_in(g, conv, 1)->shape, s, sizeof s), "[64,3,7,7]");
    assert_int_equal(gir_in(g, conv, 1)->kind, GIR_VALUE_WEIGHT);
    assert_string_equal(gir_shape_str(&gir_out(g, conv, 0)->shape, s, sizeof s), "[1,64,112,112]");
    const gir_node *gemm = find_op(g, "Gemm");
    assert_int_equal(gir_node_int(gemm, "transB", 0), 1);
    gir_graph_free(g);
    free(path);

    /* MobileNetV2: Clip's min/max come from Constant nodes and become
     * attributes; the constants are not values of the graph */
    path = tu_shared("models/mobilenet_v2.onnx");
    g = load(path);
    const gir_node *clip = find_op(g, "Clip");
    assert_float_equal(gir_node_float(clip, "min", -1), 0.0, 0);
    assert_float_equal(gir_node_float(clip, "max", -1), 6.0, 0);
    assert_int_equal(clip->n_in, 1);
    assert_string_equal(meta_str(&clip->meta, "onnx.operand.min"), "/features/features.0/features.0.2/Constant_output_0");
    assert_int_equal(gir_graph_value_index(g, "/features/features.0/features.0.2/Constant_output_0"), -1);
    gir_graph_free(g);
    free(path);

    /* SqueezeNet: Identity of shared biases */
    path = tu_shared("models/squeezenet1_0.onnx");
    g = load(path);
    size_t ids = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        ids += g->nodes[i]->op == GIR_OP_Identity;
    assert_int_equal(ids, 17);
    const gir_node *id0 = find_op(g, "Identity");
    assert_string_equal(id0->name, "Identity_0");
    assert_string_equal(gir_in(g, id0, 0)->name, "features.10.expand1x1.bias");
    gir_graph_free(g);
    free(path);
}

/* onnx -> nnvm -> onnx: the graph (with every shape and type, which NNVM
 * records in its graph attributes), node and weight names and bit-identical
 * weights stay. */
static void test_via_nnvm(void **state)
{
    (void)state;
    static const char *const models[] = { "resnet18", "mobilenet_v2", "squeezenet1_0" };
    for (size_t i = 0; i < 3; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "models/%s.onnx", models[i]);
        char *path = tu_shared(rel);
        gir_graph *g = load(path);
        char *json = tu_tmp("via.json"), *back = tu_tmp("via.onnx");
        gir_error err = GIR_ERROR_INIT;
        gir_options *o = opts_of(NULL);
        tu_save(g, json, "nnvm", o);
        gir_graph *n = NULL;
        TU_OK(gir_load(json, "nnvm", NULL, &n, &err), &err);
        tu_save(n, back, "onnx", o);
        gir_graph *g2 = load(back);
        /* NNVM names a node's outputs after the node: value names of
         * intermediate results change, node and weight names stay */
        assert_int_equal(diff_count(g, g2, false, false), 0);
        for (size_t k = 0; k < g->n_nodes; k++)
            assert_true(gir_graph_node_index(g2, g->nodes[k]->name) >= 0);
        for (size_t k = 0; k < g->n_values; k++)
            if (g->values[k]->kind != GIR_VALUE_INTERMEDIATE)
                assert_true(gir_graph_value_index(g2, g->values[k]->name) >= 0);
        /* written at opset 13 like the original */
        assert_int_equal(gir_attrs_find(&g2->meta, ONNX_META_OPSET_VERSIONS)->u.ints.v[0], 13);
        gir_graph_free(g2);
        gir_graph_free(n);
        gir_graph_free(g);
        gir_options_free(o);
        free(path);
        free(json);
        free(back);
    }
}

/* ==== nnabla's ONNX importer references (opsets 2 and 6) =================== */

static void test_nnp_pairs(void **state)
{
    (void)state;
    char *dir = tu_shared("realworld/nnp-onnx-pairs");
    size_t n, count = 0;
    char **names = tu_list_files(dir, NULL, ".onnx", &n);
    assert_non_null(names);
    for (size_t f = 0; f < n; f++) {
        char *path = tu_join(dir, names[f]);
        gir_graph *g = load(path);
        for (size_t i = 0; i < g->n_nodes; i++)
            if (gir_node_is_opaque(g->nodes[i]))
                fail_msg("%s: %s is opaque", names[f], gir_node_op(g->nodes[i]));
        /* written back at their opset 6, or at 13 when opset 6 cannot
         * express them (the opset-2 ones, legacy broadcasting along an
         * axis): same graph and weights */
        gir_graph *g2 = roundtrip(g, "pair.onnx", NULL, false);
        gir_graph_free(g2);
        gir_graph_free(g);
        free(path);
        count++;
    }
    tu_free_list(names, n);
    assert_int_equal(count, 37);

    /* What each old form becomes. */
    char *p = tu_join(dir, "equal_broadcast_axis1_bool.onnx");
    gir_graph *g = load(p);
    const gir_value *b = gir_graph_find_value(g, "bias_0");
    char s[64];
    /* broadcast=1 axis=1 of a [2,4] B against [1,2,4,3]: B gets a trailing 1 */
    assert_string_equal(gir_shape_str(&b->shape, s, sizeof s), "[2,4,1]");
    assert_int_equal(b->kind, GIR_VALUE_WEIGHT);
    assert_int_equal(gir_attrs_get_int(&b->meta, ONNX_META_INPUT_INDEX, -1), 1);
    assert_null(gir_attrs_find(&find_op(g, "Equal")->attrs, "broadcast"));
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "softmax.onnx");
    g = load(p);
    assert_int_equal(gir_node_int(find_op(g, "Softmax"), "axis", 0), 1);
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "log_softmax.onnx"); /* CNTK, opset 2: a Constant node feeds it */
    g = load(p);
    const gir_node *ls = find_op(g, "LogSoftmax");
    assert_int_equal(gir_node_int(ls, "axis", 0), 1);
    const gir_value *c = gir_in(g, ls, 0);
    assert_int_equal(c->kind, GIR_VALUE_CONST);
    assert_string_equal(meta_str(&c->meta, ONNX_META_CONSTANT), "Constant3");
    assert_string_equal(ls->name, "Block17");
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "batch_norm.onnx");
    g = load(p);
    const gir_node *bn = find_op(g, "BatchNormalization");
    assert_float_equal(gir_node_float(bn, "epsilon", 0), 1e-5, 0); /* float32 widened through its shortest text */
    assert_int_equal(bn->n_in, 5);
    assert_null(gir_attrs_find(&bn->attrs, "is_test"));
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "gemm.onnx");
    g = load(p);
    const gir_node *gm = find_op(g, "Gemm");
    assert_int_equal(gir_node_int(gm, "transB", 0), 1);
    assert_null(gir_attrs_find(&gm->attrs, "broadcast"));
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "clip_max1.0_minNone.onnx");
    g = load(p);
    const gir_node *cl = find_op(g, "Clip");
    assert_float_equal(gir_node_float(cl, "max", 0), 1.0, 0);
    assert_null(gir_attrs_find(&cl->attrs, "min"));
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "dropout_test.onnx");
    g = load(p);
    const gir_node *dr = find_op(g, "Dropout");
    assert_float_equal(gir_node_float(dr, "ratio", 0), 0.5, 0);
    assert_int_equal(gir_node_int(dr, "training_mode", 9), 0);
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "reduce_prod.onnx");
    g = load(p);
    assert_ints(find_op(g, "ReduceProd"), "axes", 1, 1);
    gir_graph_free(g);
    free(p);

    p = tu_join(dir, "conv.onnx");
    g = load(p);
    const gir_node *cv = find_op(g, "Conv");
    assert_ints(cv, "pads", 4, 2, 2, 2, 2);
    assert_ints(cv, "dilations", 2, 1, 1);
    assert_string_equal(gir_shape_str(&gir_out(g, cv, 0)->shape, s, sizeof s), "[1,1,4,4]");
    gir_graph_free(g);
    free(p);
    free(dir);
}

/* ==== through NNabla's .nnp ================================================ */

/* Every line of a diff report (structure, attributes, weights; names are
 * checked apart) must carry one of the allowed patterns. */
static void only_allowed_differences(const char *what, const gir_graph *a, const gir_graph *b,
                                     const char *const *allowed)
{
    gir_diff_options o = { false, false, true, 200 };
    gir_buf rep = GIR_BUF_INIT;
    size_t n = 0;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_diff(a, b, &o, &rep, &n, &err), &err);
    for (char *line = rep.data; n && line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = 0;
        bool ok = false;
        for (const char *const *p = allowed; p && *p && !ok; p++)
            ok = strstr(line, *p) != NULL;
        if (!ok)
            fail_msg("%s: undocumented difference: %s", what, line);
        line = end ? end + 1 : NULL;
    }
    gir_buf_free(&rep);
}

/* onnx -> nnp -> onnx: the graph and the weights stay, with the differences
 * NNabla's function set imposes, each named here. */
static void test_via_nnp(void **state)
{
    (void)state;
    if (!gir_format_find("nnabla"))
        skip();
    static const struct {
        const char *model;
        const char *allowed[4];
    } models[] = {
        { "resnet18", { NULL } },
        { "mobilenet_v2", { NULL } },
        /* two MaxPools have ceil_mode=1 where no window is partial, so
         * floor mode gives the same cells: nnabla's ignore_border=True, and
         * ignore_border=False would count one more cell */
        { "squeezenet1_0",
          { "attribute ceil_mode is 1 in A, 0 in B", NULL } },
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "models/%s.onnx", models[i].model);
        char *path = tu_shared(rel), *nnp = tu_tmp("via.nnp"), *back = tu_tmp("via_nnp.onnx");
        gir_graph *g = load(path), *n = NULL;
        gir_error err = GIR_ERROR_INIT;
        gir_options *o = opts_of(NULL);
        tu_save(g, nnp, "nnabla", o);
        TU_OK(gir_load(nnp, "nnabla", NULL, &n, &err), &err);
        tu_save(n, back, "onnx", o);
        gir_graph *g2 = load(back);
        only_allowed_differences(models[i].model, g, g2, models[i].allowed);
        /* node and weight names stay */
        for (size_t k = 0; k < g->n_nodes; k++)
            if (gir_graph_node_index(g2, g->nodes[k]->name) < 0)
                fail_msg("%s: node %s lost its name", models[i].model, g->nodes[k]->name);
        for (size_t k = 0; k < g->n_values; k++)
            if (g->values[k]->kind != GIR_VALUE_INTERMEDIATE && gir_graph_value_index(g2, g->values[k]->name) < 0)
                fail_msg("%s: value %s lost its name", models[i].model, g->values[k]->name);
        gir_graph_free(g2);
        gir_graph_free(n);
        gir_graph_free(g);
        gir_options_free(o);
        free(path);
        free(nnp);
        free(back);
    }
}

/* Each .onnx of nnabla's importer references becomes an .nnp with the
 * functions and weights of the .nnp nnabla made from it, except where the
 * two converters map differently; every such difference is listed. */
static void test_nnp_pairs_match_nnabla(void **state)
{
    (void)state;
    if (!gir_format_find("nnabla"))
        skip();
    /* nnabla's references were made from other random data than the .onnx
     * files beside them hold (abs.onnx and abs.nnp agree, these do not) */
    static const char *const other_data[] = { "data differs in", NULL };
    static const struct {
        const char *pair;
        const char *const *generic[2];
        const char *allowed[9];
    } docs[] = {
        { "add_no_broadcast", { other_data }, { NULL } },
        { "mul_no_broadcast", { other_data }, { NULL } },
        { "conv", { other_data }, { NULL } },
        { "relu", { other_data }, { NULL } },
        { "softmax", { other_data }, { NULL } },
        { "and_no_broadcast", { NULL }, { NULL } },
        { "or_no_broadcast", { NULL }, { NULL } },
        { "not", { NULL }, { NULL } },
        { "equal_no_broadcast_bool", { NULL }, { NULL } },
        /* nnabla's converter leaves epsilon and momentum out of the .nnp,
         * which proto3 reads as 0; ONNX's default epsilon is 1e-5 */
        { "batch_norm", { other_data },
          { "attribute epsilon is 0 in A, 1e-05 in B", "attribute momentum is 0 in A", NULL } },
        /* nnabla's converter turns inference Dropout into Identity */
        { "dropout_test", { NULL }, { "op Identity in A, Dropout in B", NULL } },
        /* legacy broadcasting: nnabla inserts BroadcastTo (read as Reshape
         * + Expand), graphconv reshapes the constant ([2,4] -> [2,4,1]) */
        { "equal_broadcast_axis1_bool", { NULL },
          { "graph: 4 nodes in A, 2 in B", "'bias_0_broadcasted'", "(Reshape): only in A", "(Expand): only in A",
            NULL } },
        { "xor_broadcast_axis1", { NULL },
          { "graph: 6 nodes in A, 4 in B", "'bias_0_broadcasted'", "x1_bool': shape [1,2,4,3] in A, [2,4,1] in B",
            "(Reshape): only in A", "(Expand): only in A", NULL } },
        { "pow_broadcast_axis1", { NULL },
          { "graph: 3 nodes in A, 2 in B", "'bias_0_broadcasted'", "op Expand in A, Reshape", "(Reshape): only in A",
            NULL } },
        /* Gemm(transB=1): nnabla adds a Transpose function, graphconv
         * stores the weight transposed */
        { "gemm", { other_data },
          { "graph: 2 nodes in A, 1 in B", "'out_data_w_0_transposed'", "(Transpose): only in A",
            "attribute transB is 0 in A, 1 in B", NULL } },
        /* nnabla spells LogSoftmax and Softsign with elementary functions */
        { "log_softmax", { NULL },
          { "graph: 4 nodes in A, 1 in B", "op Sub in A, LogSoftmax in B", "(Exp): only in A",
            "(ReduceSum): only in A", "(Log): only in A", NULL } },
        { "softsign", { NULL },
          { "graph: 3 nodes in A, 1 in B", "op Div in A, Softsign in B", "(Abs): only in A", "(Add): only in A",
            NULL } },
    };
    char *dir = tu_shared("realworld/nnp-onnx-pairs");
    size_t n, count = 0, exact = 0;
    char **files = tu_list_files(dir, NULL, ".onnx", &n);
    assert_non_null(files);
    for (size_t f = 0; f < n; f++) {
        char *name = gir_strdupf("%.*s", (int)(strlen(files[f]) - 5), files[f]);
        char *onnx = tu_join(dir, files[f]), *ref = gir_strdupf("%s/%s.nnp", dir, name), *ours = tu_tmp("pair.nnp");
        gir_graph *g = load(onnx), *a = NULL, *b = NULL;
        gir_error err = GIR_ERROR_INIT;
        gir_options *o = opts_of(NULL);
        if (gir_save(g, ours, "nnabla", o, &err) != GIR_OK) {
            char *msg = gir_error_format(&err);
            fail_msg("%s does not convert to .nnp: %s", files[f], msg);
        }
        TU_OK(gir_load(ref, "nnabla", NULL, &a, &err), &err);
        TU_OK(gir_load(ours, "nnabla", NULL, &b, &err), &err);
        const char *allowed[24] = { NULL };
        size_t k = 0;
        for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
            if (strcmp(docs[i].pair, name) != 0)
                continue;
            for (size_t j = 0; j < 2; j++)
                for (const char *const *p = docs[i].generic[j]; p && *p; p++)
                    allowed[k++] = *p;
            for (const char *const *p = docs[i].allowed; *p; p++)
                allowed[k++] = *p;
        }
        if (diff_count(a, b, false, false) == 0)
            exact++;
        else
            only_allowed_differences(name, a, b, allowed);
        /* the same parameters by name (function names differ: nnabla's
         * converter makes "net/Op_0", graphconv keeps the ONNX node's) */
        for (size_t i = 0; i < a->n_values; i++)
            if (a->values[i]->kind == GIR_VALUE_WEIGHT && !strstr(a->values[i]->name, "_broadcasted") &&
                !strstr(a->values[i]->name, "_transposed"))
                if (gir_graph_value_index(b, a->values[i]->name) < 0)
                    fail_msg("%s: parameter %s of nnabla's .nnp is missing", name, a->values[i]->name);
        gir_graph_free(a);
        gir_graph_free(b);
        gir_graph_free(g);
        gir_options_free(o);
        free(name);
        free(onnx);
        free(ref);
        free(ours);
        count++;
    }
    tu_free_list(files, n);
    free(dir);
    assert_int_equal(count, 37);
    print_message("nnp-onnx-pairs: %zu of %zu .nnp equal nnabla's own exactly, the rest differ only as documented\n",
                  exact, count);
}

/* ==== operators of every opset ============================================== */

static const float f6[6] = { 1, 2, 3, 4, 5, 6 };

static void test_reshape_forms(void **state)
{
    (void)state;
    mb b;
    /* opset 1: the shape is an attribute */
    mb_start(&b, 1);
    b.m.ir_version = 3;
    mb_in(&b, "x", FLT, "2,3");
    mb_out(&b, "y", FLT, NULL);
    int64_t shp[2] = { 3, -1 };
    mb_node(&b, "Reshape", "r", "x", "y", aints(&b, "shape", 2, shp), NULL);
    char *p = mb_save(&b, "reshape1.onnx");
    gir_graph *g = load(p);
    assert_ints(find_op(g, "Reshape"), "shape", 2, 3, -1);
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[3,2]");
    gir_graph_free(g);
    free(p);

    /* opset 13: a constant input, which does not stay a value */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2,3");
    mb_out(&b, "y", FLT, NULL);
    mb_init(&b, "s", I64, "2", shp, sizeof shp);
    mb_node(&b, "Reshape", "r", "x,s", "y", NULL);
    p = mb_save(&b, "reshape13.onnx");
    g = load(p);
    const gir_node *r = find_op(g, "Reshape");
    assert_ints(r, "shape", 2, 3, -1);
    assert_int_equal(r->n_in, 1);
    assert_int_equal(gir_graph_value_index(g, "s"), -1);
    assert_string_equal(meta_str(&r->meta, "onnx.operand.shape"), "s");
    /* written back: the same initializer name */
    gir_graph *g2 = roundtrip(g, "reshape13b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);

    /* a shape that is not a constant: kept as an ONNX operator */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2,3");
    mb_in(&b, "s", I64, "2");
    mb_out(&b, "y", FLT, NULL);
    mb_node(&b, "Reshape", "r", "x,s", "y", NULL);
    p = mb_save(&b, "reshape_dyn.onnx");
    g = load(p);
    r = find_op(g, "Reshape");
    assert_true(gir_node_is_opaque(r));
    assert_string_equal(gir_node_opaque_format(r), "onnx");
    assert_string_equal(meta_str(&r->meta, "onnx.why"), "its 'shape' input is not a constant");
    g2 = roundtrip(g, "reshape_dynb.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);
}

/* Exporters compute operands from shapes: Shape -> Gather -> Unsqueeze ->
 * Concat -> Reshape.  With the shape known the chain folds into the
 * attribute and its nodes leave the graph; with a symbolic dimension it
 * cannot, and the Reshape stays an ONNX operator. */
static char *flatten_model(const char *file, const char *xdims)
{
    mb b;
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, xdims);
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "n", I64, NULL);
    mb_init(&b, "zero", I64, "", (int64_t[]){ 0 }, 8);
    mb_init(&b, "axes", I64, "1", (int64_t[]){ 0 }, 8);
    mb_init(&b, "minus1", I64, "1", (int64_t[]){ -1 }, 8);
    mb_init(&b, "one", I64, "", (int64_t[]){ 1 }, 8);
    mb_node(&b, "Shape", "shape", "x", "s", NULL);
    mb_node(&b, "Gather", "gather", "s,zero", "b", ai(&b, "axis", 0), NULL);
    mb_node(&b, "Unsqueeze", "unsq", "b,axes", "b1", NULL);
    mb_node(&b, "Concat", "cat", "b1,minus1", "shp", ai(&b, "axis", 0), NULL);
    mb_node(&b, "Reshape", "flat", "x,shp", "y", NULL);
    mb_node(&b, "Mul", "mul", "b,one", "n", NULL); /* b is also used as data */
    return mb_save(&b, file);
}

static void test_folded_operands(void **state)
{
    (void)state;
    char *p = flatten_model("fold.onnx", "2,3,4,5");
    gir_graph *g = load(p);
    const gir_node *r = find_op(g, "Reshape");
    assert_false(gir_node_is_opaque(r));
    assert_ints(r, "shape", 2, 2, -1);
    assert_string_equal(meta_str(&r->meta, "onnx.operand.shape"), "shp");
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[2,60]");
    /* Unsqueeze and Concat fed only the operand: gone; Shape and Gather
     * still compute 'b' for Mul */
    assert_int_equal(g->n_nodes, 4);
    assert_int_equal(gir_graph_node_index(g, "unsq"), -1);
    assert_int_equal(gir_graph_node_index(g, "cat"), -1);
    assert_true(gir_graph_node_index(g, "shape") >= 0);
    assert_int_equal(gir_graph_value_index(g, "minus1"), -1);
    gir_graph *g2 = roundtrip(g, "fold_b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);

    /* a symbolic batch: nothing folds, and the batch-size option helps */
    p = flatten_model("nofold.onnx", "N,3,4,5");
    g = load(p);
    r = find_op(g, "Reshape");
    assert_true(gir_node_is_opaque(r));
    assert_string_equal(meta_str(&r->meta, "onnx.why"), "its 'shape' input is not a constant");
    assert_int_equal(g->n_nodes, 6);
    g2 = roundtrip(g, "nofold_b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "batch-size", "8", &err), &err);
    TU_OK(gir_load(p, "onnx", o, &g, &err), &err);
    assert_ints(find_op(g, "Reshape"), "shape", 2, 8, -1);
    gir_graph_free(g);
    gir_options_free(o);
    free(p);
}

static void test_slice_pad_clip_forms(void **state)
{
    (void)state;
    mb b;
    int64_t st[1] = { 1 }, en[1] = { 3 }, ax[1] = { 1 }, stp[1] = { 2 };
    /* Slice-1 attributes, Pad-2 with 'value', Clip-6 attributes */
    mb_start(&b, 9);
    mb_in(&b, "x", FLT, "2,4");
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "z", FLT, NULL);
    mb_out(&b, "w", FLT, NULL);
    mb_node(&b, "Slice", "s", "x", "y", aints(&b, "starts", 1, st), aints(&b, "ends", 1, en), aints(&b, "axes", 1, ax),
            NULL);
    int64_t pads[4] = { 0, 1, 0, 2 };
    mb_node(&b, "Pad", "p", "x", "z", aints(&b, "pads", 4, pads), af(&b, "value", 1.5f), as(&b, "mode", "constant"),
            NULL);
    mb_node(&b, "Clip", "c", "x", "w", af(&b, "min", -1.0f), af(&b, "max", 2.0f), NULL);
    char *p = mb_save(&b, "old_forms.onnx");
    gir_graph *g = load(p);
    const gir_node *sl = find_op(g, "Slice"), *pd = find_op(g, "Pad"), *cl = find_op(g, "Clip");
    assert_ints(sl, "starts", 1, 1);
    assert_ints(sl, "ends", 1, 3);
    assert_ints(sl, "axes", 1, 1);
    assert_ints(pd, "pads", 4, 0, 1, 0, 2);
    assert_float_equal(gir_node_float(pd, "constant_value", 0), 1.5, 0);
    assert_float_equal(gir_node_float(cl, "min", 0), -1.0, 0);
    assert_float_equal(gir_node_float(cl, "max", 0), 2.0, 0);
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 1)->shape, s, sizeof s), "[2,7]");
    gir_graph *g2 = roundtrip(g, "old_forms_b.onnx", NULL, true); /* written at its own opset 9 */
    gir_graph_free(g2);
    const char *o13[] = { "opset", "13", NULL };
    g2 = roundtrip(g, "old_forms_13.onnx", o13, false); /* and at 13, as inputs */
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);

    /* the same at opset 13: inputs (Slice with steps, Clip through
     * Constant nodes, Pad's constant_value of the input's type) */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2,4");
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "z", FLT, NULL);
    mb_out(&b, "w", FLT, NULL);
    mb_init(&b, "st", I64, "1", st, 8);
    mb_init(&b, "en", I32, "1", (int32_t[]){ 4 }, 4);
    mb_init(&b, "ax", I64, "1", ax, 8);
    mb_init(&b, "sp", I64, "1", stp, 8);
    mb_init(&b, "pads", I64, "4", pads, 32);
    float cv = 1.5f, lo = -1, hi = 2;
    mb_init(&b, "cv", FLT, "", &cv, 4);
    mb_node(&b, "Constant", "k1", NULL, "lo", at(&b, "value", tensor(&b, NULL, FLT, "", &lo, 4)), NULL);
    mb_node(&b, "Constant", "k2", NULL, "hi", af(&b, "value_float", hi), NULL);
    mb_node(&b, "Slice", "s", "x,st,en,ax,sp", "y", NULL);
    mb_node(&b, "Pad", "p", "x,pads,cv", "z", NULL);
    mb_node(&b, "Clip", "c", "x,lo,hi", "w", NULL);
    p = mb_save(&b, "new_forms.onnx");
    g = load(p);
    sl = find_op(g, "Slice");
    assert_ints(sl, "ends", 1, 4);
    assert_ints(sl, "steps", 1, 2);
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[2,2]");
    assert_float_equal(gir_node_float(find_op(g, "Pad"), "constant_value", 0), 1.5, 0);
    cl = find_op(g, "Clip");
    assert_float_equal(gir_node_float(cl, "max", 0), 2.0, 0);
    assert_string_equal(meta_str(&cl->meta, "onnx.operand.max"), "hi");
    assert_int_equal(g->n_values, 4); /* x, y, z, w: every operand became an attribute */
    g2 = roundtrip(g, "new_forms_b.onnx", NULL, true);
    gir_graph_free(g2);
    /* steps other than 1 have no form before opset 10 */
    char *q = tu_tmp("new_forms_9.onnx");
    gir_error err = GIR_ERROR_INIT;
    const char *o9[] = { "opset", "9", NULL };
    TU_FAILS(save(g, q, o9, &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "cannot write as onnx: Slice with steps other than 1 needs opset 10 (writing opset 9) (1 node, first 's')");
    assert_false(exists(q));
    gir_error_clear(&err);
    free(q);
    gir_graph_free(g);
    free(p);
}

static void test_split_squeeze_reduce_forms(void **state)
{
    (void)state;
    mb b;
    int64_t sp[2] = { 1, 3 }, ax[1] = { 1 };
    mb_start(&b, 11);
    mb_in(&b, "x", FLT, "2,4,1");
    mb_out(&b, "a", FLT, NULL);
    mb_out(&b, "b", FLT, NULL);
    mb_out(&b, "c", FLT, NULL);
    mb_out(&b, "d", FLT, NULL);
    mb_node(&b, "Split", "s", "x", "a,b", ai(&b, "axis", 1), aints(&b, "split", 2, sp), NULL);
    mb_node(&b, "Squeeze", "q", "x", "c", aints(&b, "axes", 1, (int64_t[]){ -1 }), NULL);
    mb_node(&b, "ReduceMean", "m", "x", "d", aints(&b, "axes", 1, ax), ai(&b, "keepdims", 0), NULL);
    char *p = mb_save(&b, "split11.onnx");
    gir_graph *g = load(p);
    assert_ints(find_op(g, "Split"), "split", 2, 1, 3);
    assert_ints(find_op(g, "Squeeze"), "axes", 1, -1);
    assert_ints(find_op(g, "ReduceMean"), "axes", 1, 1);
    const char *o13[] = { "opset", "13", NULL }, *o18[] = { "opset", "18", NULL }, *o7[] = { "opset", "7", NULL };
    gir_graph *g2 = roundtrip(g, "split_13.onnx", o13, false);
    gir_graph_free(g2);
    g2 = roundtrip(g, "split_18.onnx", o18, false);
    gir_graph_free(g2);
    /* at opset 7 the negative axis becomes 2 */
    char *q7 = tu_tmp("split_7.onnx");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(save(g, q7, o7, &err), &err);
    g2 = load(q7);
    assert_ints(find_op(g2, "Squeeze"), "axes", 1, 2);
    assert_ints(find_op(g2, "Split"), "split", 2, 1, 3);
    gir_graph_free(g2);
    free(q7);
    gir_graph_free(g);
    free(p);

    /* opset 18: Split's num_outputs, ReduceMean's axes input */
    mb_start(&b, 18);
    mb_in(&b, "x", FLT, "7,8");
    mb_out(&b, "a", FLT, NULL);
    mb_out(&b, "b", FLT, NULL);
    mb_out(&b, "c", FLT, NULL);
    mb_out(&b, "d", FLT, NULL);
    mb_out(&b, "e", FLT, NULL);
    mb_out(&b, "m", FLT, NULL);
    mb_init(&b, "axes", I64, "1", (int64_t[]){ 0 }, 8);
    mb_node(&b, "Split", "s3", "x", "a,b,c", ai(&b, "num_outputs", 3), NULL);
    mb_node(&b, "Split", "s2", "x", "d,e", ai(&b, "axis", 1), ai(&b, "num_outputs", 2), NULL);
    mb_node(&b, "ReduceMean", "rm", "x,axes", "m", NULL);
    p = mb_save(&b, "split18.onnx");
    g = load(p);
    assert_ints(g->nodes[0], "split", 3, 3, 3, 1); /* 7 in 3 parts: 3, 3, 1 */
    assert_null(gir_attrs_find(&g->nodes[1]->attrs, "split"));
    assert_ints(find_op(g, "ReduceMean"), "axes", 1, 0);
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 2)->shape, s, sizeof s), "[1,8]");
    g2 = roundtrip(g, "split18b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);
}

static void test_resize_forms(void **state)
{
    (void)state;
    mb b;
    float sc[4] = { 1, 1, 2, 2 };
    /* Upsample-7 (attribute), Upsample-9 and Resize-10 (input) */
    for (int v = 7; v <= 10; v++) {
        if (v == 8)
            continue;
        mb_start(&b, v);
        mb_in(&b, "x", FLT, "1,1,2,2");
        mb_out(&b, "y", FLT, NULL);
        if (v == 7) {
            mb_node(&b, "Upsample", "u", "x", "y", afloats(&b, "scales", 4, sc), as(&b, "mode", "bilinear"), NULL);
        } else {
            mb_init(&b, "sc", FLT, "4", sc, sizeof sc);
            mb_node(&b, v == 9 ? "Upsample" : "Resize", "u", "x,sc", "y", as(&b, "mode", "nearest"), NULL);
        }
        char *p = mb_save(&b, "up.onnx");
        gir_graph *g = load(p);
        const gir_node *r = find_op(g, "Resize");
        assert_string_equal(gir_node_string(r, "mode", ""), v == 7 ? "linear" : "nearest");
        assert_string_equal(gir_node_string(r, "coordinate_transformation_mode", ""), "asymmetric");
        if (v != 7)
            assert_string_equal(gir_node_string(r, "nearest_mode", ""), "floor");
        const double *scales;
        assert_int_equal(gir_attrs_get_floats(&r->attrs, "scales", &scales), 4);
        assert_float_equal(scales[3], 2.0, 0);
        char s[32];
        assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[1,1,4,4]");
        gir_graph *g2 = roundtrip(g, "up_b.onnx", NULL, true); /* at its own opset: Upsample again */
        gir_graph_free(g2);
        const char *o13[] = { "opset", "13", NULL };
        g2 = roundtrip(g, "up_13.onnx", o13, false);
        gir_graph_free(g2);
        gir_graph_free(g);
        free(p);
    }
    /* Resize-13 half_pixel has no form at opset 10 */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "1,1,2,2");
    mb_out(&b, "y", FLT, NULL);
    mb_init(&b, "sc", FLT, "4", sc, sizeof sc);
    mb_node(&b, "Resize", "u", "x,,sc", "y", as(&b, "mode", "linear"), NULL);
    char *p = mb_save(&b, "resize13.onnx");
    gir_graph *g = load(p);
    gir_graph *g2 = roundtrip(g, "resize13b.onnx", NULL, true);
    gir_graph_free(g2);
    const char *o11[] = { "opset", "11", NULL };
    g2 = roundtrip(g, "resize11.onnx", o11, false); /* empty roi input at 11 */
    gir_graph_free(g2);
    char *q = tu_tmp("resize10.onnx");
    gir_error err = GIR_ERROR_INIT;
    const char *o10[] = { "opset", "10", NULL };
    TU_FAILS(save(g, q, o10, &err), &err, GIR_E_UNSUPPORTED_ATTR, "Resize with coordinate_transformation_mode at "
             "opset 10");
    gir_error_clear(&err);
    free(q);
    gir_graph_free(g);
    free(p);
}

static void test_misc_forms(void **state)
{
    (void)state;
    mb b;
    /* Softmax-11 over the last axis maps; over axis 1 of a rank-3 input it
     * does not (it normalises over axes 1 and 2) */
    mb_start(&b, 11);
    mb_in(&b, "x", FLT, "2,3");
    mb_in(&b, "x3", FLT, "2,3,4");
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "y3", FLT, NULL);
    mb_node(&b, "Softmax", "sm", "x", "y", NULL);
    mb_node(&b, "LogSoftmax", "lsm", "x3", "y3", ai(&b, "axis", 1), NULL);
    char *p = mb_save(&b, "softmax11.onnx");
    gir_graph *g = load(p);
    assert_int_equal(gir_node_int(find_op(g, "Softmax"), "axis", 0), 1);
    const gir_node *l = find_op(g, "LogSoftmax");
    assert_true(gir_node_is_opaque(l));
    assert_string_equal(meta_str(&l->meta, "onnx.why"), "before opset 13 it normalises over all axes from 'axis' "
                        "on, and those are more than one axis");
    gir_graph *g2 = roundtrip(g, "softmax11b.onnx", NULL, true);
    gir_graph_free(g2);
    char *q = tu_tmp("softmax13.onnx");
    gir_error err = GIR_ERROR_INIT;
    const char *o13[] = { "opset", "13", NULL };
    TU_FAILS(save(g, q, o13, &err), &err, GIR_E_UNSUPPORTED_OP,
             "LogSoftmax (kept verbatim from opset 11: before opset 13 it normalises over all axes from 'axis' on, "
             "and those are more than one axis) at opset 13");
    assert_false(exists(q));
    gir_error_clear(&err);
    free(q);
    gir_graph_free(g);
    free(p);

    /* Cast-1 names the type; Dropout-6 is_test=0 is training; Concat-1
     * defaults to axis 1 */
    mb_start(&b, 1);
    b.m.ir_version = 3;
    mb_in(&b, "x", FLT, "2,3");
    mb_out(&b, "y", I64, NULL);
    mb_out(&b, "z", FLT, NULL);
    mb_out(&b, "c", FLT, NULL);
    mb_node(&b, "Cast", "cast", "x", "y", as(&b, "to", "INT64"), NULL);
    mb_node(&b, "Dropout", "d", "x", "z", ai(&b, "is_test", 0), af(&b, "ratio", 0.25f), NULL);
    mb_node(&b, "Concat", "cat", "x,x", "c", NULL);
    p = mb_save(&b, "opset1.onnx");
    g = load(p);
    assert_string_equal(gir_node_string(find_op(g, "Cast"), "to", ""), "int64");
    assert_int_equal(gir_node_int(find_op(g, "Dropout"), "training_mode", 0), 1);
    assert_float_equal(gir_node_float(find_op(g, "Dropout"), "ratio", 0), 0.25, 0);
    assert_int_equal(gir_node_int(find_op(g, "Concat"), "axis", 0), 1);
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 2)->shape, s, sizeof s), "[2,6]");
    g2 = roundtrip(g, "opset1b.onnx", NULL, false); /* written at 13: training_mode as an input */
    gir_graph_free(g2);
    q = tu_tmp("opset1_11.onnx");
    const char *o11[] = { "opset", "11", NULL };
    TU_FAILS(save(g, q, o11, &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "Dropout attribute training_mode needs opset 12 (writing opset 11)");
    gir_error_clear(&err);
    free(q);
    gir_graph_free(g);
    free(p);

    /* Dropout-12 constant inputs, BatchNormalization-15 training mode,
     * Cast-13 codes */
    mb_start(&b, 15);
    mb_in(&b, "x", FLT, "2,3");
    mb_out(&b, "z", FLT, NULL);
    mb_out(&b, "bn", FLT, NULL);
    mb_out(&b, "y", F16, NULL);
    float ratio = 0.125f;
    uint8_t no = 0;
    mb_init(&b, "ratio", FLT, "", &ratio, 4);
    mb_init(&b, "tm", BOOL_, "", &no, 1);
    float ones[3] = { 1, 1, 1 };
    mb_init(&b, "one", FLT, "3", ones, 12);
    mb_node(&b, "Dropout", "d", "x,ratio,tm", "z", ai(&b, "seed", 7), NULL);
    mb_node(&b, "BatchNormalization", "b", "x,one,one,one,one", "bn", ai(&b, "training_mode", 1), NULL);
    mb_node(&b, "Cast", "c", "x", "y", ai(&b, "to", F16), NULL);
    p = mb_save(&b, "opset15.onnx");
    g = load(p);
    const gir_node *dr = find_op(g, "Dropout");
    assert_float_equal(gir_node_float(dr, "ratio", 0), 0.125, 0);
    assert_int_equal(gir_node_int(dr, "training_mode", 9), 0);
    assert_int_equal(gir_node_int(dr, "seed", 0), 7);
    assert_true(gir_node_is_opaque(find_op(g, "BatchNormalization")));
    assert_string_equal(gir_node_string(find_op(g, "Cast"), "to", ""), "float16");
    g2 = roundtrip(g, "opset15b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);
}

static void test_legacy_broadcast(void **state)
{
    (void)state;
    mb b;
    mb_start(&b, 6);
    b.m.ir_version = 3;
    mb_in(&b, "x", FLT, "1,3,2,2");
    mb_in(&b, "v", FLT, "3");
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "z", FLT, NULL);
    mb_out(&b, "u", FLT, NULL);
    mb_out(&b, "t", FLT, NULL);
    float bias[3] = { 1, 2, 3 };
    mb_init(&b, "bias", FLT, "3", bias, sizeof bias);
    mb_init(&b, "shared", FLT, "3", bias, sizeof bias);
    mb_node(&b, "Add", "a1", "x,bias", "y", ai(&b, "broadcast", 1), ai(&b, "axis", 1), NULL);
    mb_node(&b, "Mul", "m1", "x,shared", "z", ai(&b, "broadcast", 1), ai(&b, "axis", 1), NULL);
    mb_node(&b, "Sub", "s1", "x,shared", "u", ai(&b, "broadcast", 1), ai(&b, "axis", 1), NULL);
    mb_node(&b, "Div", "d1", "x,v", "t", ai(&b, "broadcast", 1), ai(&b, "axis", 1), NULL);
    char *p = mb_save(&b, "bcast6.onnx");
    gir_graph *g = load(p);
    char s[32];
    /* a constant used once is reshaped in place */
    assert_string_equal(gir_shape_str(&gir_graph_find_value(g, "bias")->shape, s, sizeof s), "[3,1,1]");
    /* a shared one gets a reshaped copy per use */
    const gir_node *m = find_op(g, "Mul");
    assert_string_equal(gir_in(g, m, 1)->name, "shared_bcast");
    assert_string_equal(gir_shape_str(&gir_in(g, m, 1)->shape, s, sizeof s), "[3,1,1]");
    assert_string_equal(gir_in(g, find_op(g, "Sub"), 1)->name, "shared_bcast_1");
    assert_string_equal(gir_shape_str(&gir_graph_find_value(g, "shared")->shape, s, sizeof s), "[3]");
    /* a graph input cannot be reshaped: the node stays an opset-6 operator */
    const gir_node *d = find_op(g, "Div");
    assert_true(gir_node_is_opaque(d));
    assert_string_equal(meta_str(&d->meta, "onnx.why"),
                        "legacy broadcasting along 'axis' of an input that is not a constant");
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[1,3,2,2]");
    gir_graph_free(g);
    free(p);
}

static void test_conv_padding(void **state)
{
    (void)state;
    mb b;
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "1,1,5,5");
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "p", FLT, NULL);
    float w[9] = { 0 };
    mb_init(&b, "w", FLT, "1,1,3,3", w, sizeof w);
    int64_t two[2] = { 2, 2 };
    mb_node(&b, "Conv", "c", "x,w", "y", as(&b, "auto_pad", "SAME_UPPER"), aints(&b, "strides", 2, two), NULL);
    mb_node(&b, "MaxPool", "m", "x", "p", as(&b, "auto_pad", "SAME_LOWER"), aints(&b, "kernel_shape", 2, two), NULL);
    char *p = mb_save(&b, "conv.onnx");
    gir_graph *g = load(p);
    const gir_node *c = find_op(g, "Conv"), *m = find_op(g, "MaxPool");
    assert_ints(c, "kernel_shape", 2, 3, 3); /* from the weight */
    assert_ints(c, "pads", 4, 1, 1, 1, 1);
    assert_string_equal(gir_node_string(c, "auto_pad", ""), "NOTSET");
    assert_ints(m, "pads", 4, 1, 1, 0, 0); /* SAME_LOWER: the odd cell at the start */
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[1,1,3,3]");
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 1)->shape, s, sizeof s), "[1,1,5,5]");
    gir_graph *g2 = roundtrip(g, "conv_b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);
}

/* ==== writing at every opset ================================================= */

static char *canonical_model(void)
{
    mb b;
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "1,2,4,4");
    mb_out(&b, "y", FLT, NULL);
    float w[2 * 2 * 1 * 1] = { 1, 2, 3, 4 }, bias[2] = { 0.5f, -0.5f }, sc[4] = { 1, 1, 2, 2 };
    mb_init(&b, "w", FLT, "2,2,1,1", w, sizeof w);
    mb_init(&b, "b", FLT, "2", bias, sizeof bias);
    mb_init(&b, "shape", I64, "2", (int64_t[]){ 1, -1 }, 16);
    mb_init(&b, "axes", I64, "1", (int64_t[]){ 0 }, 8);
    mb_init(&b, "pads", I64, "8", (int64_t[]){ 0, 0, 1, 1, 0, 0, 1, 1 }, 64);
    mb_init(&b, "st", I64, "2", (int64_t[]){ 1, 1 }, 16);
    mb_init(&b, "en", I64, "2", (int64_t[]){ 3, 3 }, 16);
    mb_init(&b, "sax", I64, "2", (int64_t[]){ 2, 3 }, 16);
    mb_init(&b, "sc", FLT, "4", sc, sizeof sc);
    mb_init(&b, "gw", FLT, "2,4", (float[8]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 32);
    mb_init(&b, "gb", FLT, "2", bias, sizeof bias);
    float lo = 0, hi = 6;
    mb_init(&b, "lo", FLT, "", &lo, 4);
    mb_init(&b, "hi", FLT, "", &hi, 4);
    mb_node(&b, "Conv", "conv", "x,w,b", "c", NULL);
    mb_node(&b, "Clip", "clip", "c,lo,hi", "r", NULL);
    mb_node(&b, "Pad", "pad", "r,pads", "p", as(&b, "mode", "reflect"), NULL);
    mb_node(&b, "Slice", "slice", "p,st,en,sax", "sl", NULL);
    mb_node(&b, "Resize", "up", "sl,,sc", "u", as(&b, "mode", "nearest"),
            as(&b, "coordinate_transformation_mode", "asymmetric"), as(&b, "nearest_mode", "floor"), NULL);
    mb_node(&b, "MaxPool", "pool", "u", "mp", aints(&b, "kernel_shape", 2, (int64_t[]){ 2, 2 }),
            aints(&b, "strides", 2, (int64_t[]){ 2, 2 }), NULL);
    mb_node(&b, "ReduceMean", "mean", "mp", "rm", aints(&b, "axes", 1, (int64_t[]){ 3 }), NULL);
    mb_node(&b, "Squeeze", "sq", "rm,axes", "sqz", NULL);
    mb_node(&b, "Unsqueeze", "usq", "sqz,axes", "usqz", NULL);
    mb_node(&b, "Reshape", "flat", "usqz,shape", "f", NULL);
    mb_node(&b, "Split", "split", "f", "f1,f2", ai(&b, "axis", 1), NULL);
    mb_node(&b, "Concat", "cat", "f1,f2", "cc", ai(&b, "axis", 1), NULL);
    mb_node(&b, "Gemm", "fc", "cc,gw,gb", "g", ai(&b, "transB", 1), NULL);
    mb_node(&b, "Dropout", "drop", "g", "dr", NULL);
    mb_node(&b, "Softmax", "sm", "dr", "y", ai(&b, "axis", 1), NULL);
    return mb_save(&b, "canonical13.onnx");
}

static void test_write_every_opset(void **state)
{
    (void)state;
    char *p = canonical_model();
    gir_graph *g = load(p);
    for (size_t i = 0; i < g->n_nodes; i++)
        assert_false(gir_node_is_opaque(g->nodes[i]));
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[1,2]");
    for (int v = 7; v <= ONNX_WRITE_OPSET_MAX; v++) {
        char num[8], file[32];
        snprintf(num, sizeof num, "%d", v);
        snprintf(file, sizeof file, "every_%d.onnx", v);
        const char *o[] = { "opset", num, NULL };
        gir_graph *g2 = roundtrip(g, file, o, false);
        const gir_attr *ov = gir_attrs_find(&g2->meta, ONNX_META_OPSET_VERSIONS);
        assert_int_equal(ov->u.ints.v[0], v);
        gir_graph_free(g2);
    }
    /* opsets graphconv does not write */
    gir_error err = GIR_ERROR_INIT;
    char *q = tu_tmp("bad_opset.onnx");
    const char *o5[] = { "opset", "5", NULL }, *o19[] = { "opset", "19", NULL }, *ox[] = { "opset", "x", NULL };
    TU_FAILS(save(g, q, o5, &err), &err, GIR_E_ARGUMENT, "option opset=5 is outside the opsets graphconv writes (6..18)");
    gir_error_clear(&err);
    /* opset 6 (the form of PyTorch 0.3's exports) has no Resize/Upsample */
    const char *o6[] = { "opset", "6", NULL };
    TU_FAILS(save(g, q, o6, &err), &err, GIR_E_UNSUPPORTED_OP, "Resize needs opset 7 or later (writing opset 6)");
    gir_error_clear(&err);
    TU_FAILS(save(g, q, o19, &err), &err, GIR_E_ARGUMENT, "opset=19");
    gir_error_clear(&err);
    TU_FAILS(save(g, q, ox, &err), &err, GIR_E_ARGUMENT, "option opset=x is not an integer");
    gir_error_clear(&err);
    assert_false(exists(q));
    free(q);
    gir_graph_free(g);
    free(p);
}

static void test_write_refusals(void **state)
{
    (void)state;
    mb b;
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2,3,4");
    mb_in(&b, "i", I64, "2,3,4");
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "m", I64, NULL);
    mb_out(&b, "m2", I64, NULL);
    mb_out(&b, "g", FLT, NULL);
    mb_out(&b, "s", FLT, NULL);
    mb_init(&b, "gw", FLT, "4,4", (float[16]){ 0 }, 64);
    mb_node(&b, "Softmax", "sm", "x", "y", ai(&b, "axis", 1), NULL);
    mb_node(&b, "Mod", "mod1", "i,i", "m", NULL);
    mb_node(&b, "Mod", "mod2", "i,i", "m2", NULL);
    mb_node(&b, "MatMul", "mm", "x,gw", "g", NULL);
    mb_node(&b, "Erf", "erf", "x", "s", NULL);
    char *p = mb_save(&b, "refuse.onnx");
    gir_graph *g = load(p);
    char *q = tu_tmp("refused.onnx");
    gir_error err = GIR_ERROR_INIT;
    const char *o8[] = { "opset", "8", NULL }, *o8raw[] = { "opset", "8", "legalize", "0", NULL };
    /* the Softmax is rewritten over its axis moved last, Erf as a rational
     * function; Mod has no form before its opset */
    TU_FAILS(save(g, q, o8, &err), &err, GIR_E_UNSUPPORTED_OP,
             "cannot write as onnx: Mod needs opset 10 or later (writing opset 8) (2 nodes, first 'mod1')");
    assert_null(strstr(err.message, "Softmax"));
    assert_null(strstr(err.message, "Erf"));
    assert_false(exists(q));
    gir_error_clear(&err);
    /* the writer itself: every problem at once, with counts and first
     * nodes; nothing written */
    TU_FAILS(save(g, q, o8raw, &err), &err, GIR_E_UNSUPPORTED_ATTR,
             "cannot write as onnx: Softmax over axis 1 of a rank-3 input needs opset 13 (writing opset 8) (1 node, "
             "first 'sm'); Mod needs opset 10 or later (writing opset 8) (2 nodes, first 'mod1'); Erf needs opset 9 "
             "or later (writing opset 8) (1 node, first 'erf')");
    assert_false(exists(q));
    gir_error_clear(&err);
    free(q);
    gir_graph_free(g);
    free(p);

    /* an operator of another format: refused, or kept under its own domain
     * with allow-opaque */
    gir_graph *h;
    TU_OK(gir_graph_new(&h, &err), &err);
    int32_t x;
    TU_OK(gir_graph_add_value(h, "x", GIR_VALUE_INPUT, &x, &err), &err);
    TU_OK(gir_graph_add_input(h, x, &err), &err);
    h->values[x]->dtype = GIR_DT_F32;
    h->values[x]->shape = (gir_shape){ 1, { -1 } }; /* an input of unknown rank is refused on its own */
    gir_node *n;
    TU_OK(gir_graph_add_node(h, "op0", GIR_OP_OPAQUE, 1, 1, &n, &err), &err);
    n->opaque_format = "nnvm";
    n->opaque_op = "tvm_op";
    n->in[0] = x;
    TU_OK(gir_node_make_output(h, n, 0, "y", &err), &err);
    TU_OK(gir_attrs_set_string(h, &n->attrs, "func_name", "fused_add", &err), NULL);
    TU_OK(gir_graph_add_output(h, n->out[0], &err), &err);
    gir_node *st;
    TU_OK(gir_graph_add_node(h, "stack0", GIR_OP_Stack, 1, 1, &st, &err), &err);
    st->in[0] = x;
    TU_OK(gir_node_make_output(h, st, 0, "z", &err), &err);
    TU_OK(gir_graph_add_output(h, st->out[0], &err), &err);
    q = tu_tmp("opaque.onnx");
    TU_FAILS(save(h, q, NULL, &err), &err, GIR_E_UNSUPPORTED_OP,
             "cannot write as onnx: tvm_op (an operator of nnvm kept verbatim) (1 node, first 'op0'); Stack (no ONNX "
             "operator computes it) (1 node, first 'stack0')");
    gir_error_clear(&err);
    assert_false(exists(q));
    const char *allow[] = { "allow-opaque", "1", NULL };
    TU_OK(save(h, q, allow, &err), &err);
    gir_graph *h2 = load(q);
    const gir_node *n2 = find_op(h2, "tvm_op");
    assert_string_equal(meta_str(&n2->meta, ONNX_META_DOMAIN), "ai.graphconv.nnvm");
    assert_string_equal(meta_str(&find_op(h2, "Stack")->meta, ONNX_META_DOMAIN), "ai.graphconv");
    assert_string_equal(gir_node_string(n2, "func_name", ""), "fused_add");
    gir_graph_free(h2);
    gir_graph_free(h);
    free(q);
}

/* A weight far beyond protobuf's 2 GiB: refused before anything is read or
 * written, unless it goes to external data. */
static gir_status never_load(void *ctx, void *dst, uint64_t n, gir_error *err)
{
    (void)ctx;
    (void)dst;
    (void)n;
    fail_msg("the writer loaded a tensor it should not have");
    return gir_fail(err, GIR_E_INTERNAL, "unreachable");
}
static const gir_loader never_loader = { never_load, NULL };

static void test_2gb_limit(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g;
    TU_OK(gir_graph_new(&g, &err), &err);
    gir_shape big = { 1, { 600000000 } };
    gir_tensor *t;
    TU_OK(gir_tensor_lazy(GIR_DT_F32, &big, &never_loader, NULL, &t, &err), &err);
    int32_t x, w;
    TU_OK(gir_graph_add_value(g, "x", GIR_VALUE_INPUT, &x, &err), &err);
    g->values[x]->dtype = GIR_DT_F32;
    g->values[x]->shape = big;
    TU_OK(gir_graph_add_input(g, x, &err), &err);
    TU_OK(gir_graph_add_value(g, "w", GIR_VALUE_WEIGHT, &w, &err), &err);
    gir_value_set_data(g->values[w], t);
    gir_tensor_unref(t);
    gir_node *n;
    TU_OK(gir_graph_add_node(g, "add", GIR_OP_Add, 2, 1, &n, &err), &err);
    n->in[0] = x;
    n->in[1] = w;
    TU_OK(gir_node_make_output(g, n, 0, "y", &err), &err);
    TU_OK(gir_graph_add_output(g, n->out[0], &err), &err);
    char *q = tu_tmp("big.onnx");
    TU_FAILS(save(g, q, NULL, &err), &err, GIR_E_LIMIT, "the model would be 2400000", "more than protobuf's 2 GiB "
             "limit; write the weights as external data");
    assert_false(exists(q));
    gir_error_clear(&err);
    free(q);
    gir_graph_free(g);
}

/* ==== external data ========================================================= */

static void test_external_data(void **state)
{
    (void)state;
    char *path = tu_shared("models/squeezenet1_0.onnx");
    gir_graph *g = load(path);
    char *q = tu_tmp("ext.onnx"), *qd = tu_tmp("ext.onnx.data");
    gir_error err = GIR_ERROR_INIT;
    const char *ext[] = { "external-data", "1", NULL };
    TU_OK(save(g, q, ext, &err), &err);
    struct stat st, sd;
    assert_int_equal(stat(q, &st), 0);
    assert_int_equal(stat(qd, &sd), 0);
    assert_true(st.st_size < 40000);
    assert_true(sd.st_size > 4900000);
    gir_graph *g2 = load(q);
    /* the weights are not read until needed */
    const gir_value *w = gir_graph_find_value(g2, "features.0.weight");
    assert_null(w->data->data);
    assert_non_null(w->data->loader);
    assert_int_equal(diff_count(g, g2, true, true), 0);
    assert_null(w->data->data); /* the comparison unloads what it loaded */
    /* the same bytes again, from the lazily read model */
    char *r = tu_tmp("ext2.onnx"), *rd = tu_tmp("ext2.onnx.data");
    TU_OK(save(g2, r, ext, &err), &err);
    assert_true(tu_files_equal(qd, rd));
    /* without the side file, a loaded tensor reports it */
    assert_int_equal(unlink(qd), 0);
    const void *d;
    TU_FAILS(gir_tensor_load(w->data, &d, &err), &err, GIR_E_IO, "cannot open external data again", "ext.onnx.data");
    gir_error_clear(&err);
    TU_FAILS(load_fails(q, &err), &err, GIR_E_IO, "cannot open external data 'ext.onnx.data' of tensor");
    gir_error_clear(&err);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(path);
    free(q);
    free(qd);
    free(r);
    free(rd);
}

static Onnx__TensorProto *ext_tensor(mb *b, const char *loc, const char *offset, const char *length)
{
    Onnx__TensorProto *t = mb_init(b, "w", FLT, "2,2", NULL, 0);
    t->has_raw_data = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->external_data = gir_arena_alloc(&b->a, 3 * sizeof *t->external_data);
    const char *kv[6] = { "location", loc, "offset", offset, "length", length };
    for (int i = 0; i < 6; i += 2) {
        if (!kv[i + 1])
            continue;
        Onnx__StringStringEntryProto *e = gir_arena_alloc(&b->a, sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = S(b, kv[i]);
        e->value = S(b, kv[i + 1]);
        t->external_data[t->n_external_data++] = e;
    }
    return t;
}

static char *ext_model(const char *file, const char *loc, const char *offset, const char *length)
{
    mb b;
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2,2");
    mb_out(&b, "y", FLT, NULL);
    ext_tensor(&b, loc, offset, length);
    mb_node(&b, "Add", "a", "x,w", "y", NULL);
    return mb_save(&b, file);
}

static void test_external_data_checks(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    char *bin = tu_tmp("w.bin");
    float data[6] = { 9, 1, 2, 3, 4, 8 };
    assert_true(tu_write(bin, data, sizeof data));
    /* offset 4, 16 bytes: 1, 2, 3, 4 */
    char *p = ext_model("ext_ok.onnx", "w.bin", "4", "16");
    gir_graph *g = load(p);
    const void *d;
    const gir_value *w = gir_graph_find_value(g, "w");
    TU_OK(gir_tensor_load(w->data, &d, &err), &err);
    assert_memory_equal(d, data + 1, 16);
    gir_graph_free(g);
    free(p);

    p = ext_model("ext_esc.onnx", "../w.bin", NULL, NULL);
    TU_FAILS(load_fails(p, &err), &err, GIR_E_PARAMS,
             "external data location '../w.bin' of tensor 'w' is not a relative path inside the model's directory");
    gir_error_clear(&err);
    free(p);
    p = ext_model("ext_abs.onnx", "/etc/passwd", NULL, NULL);
    TU_FAILS(load_fails(p, &err), &err, GIR_E_PARAMS, "location '/etc/passwd'", "not a relative path");
    gir_error_clear(&err);
    free(p);
    /* a symbolic link that leads out of the directory */
    char *outside = tu_tempdir();
    char *target = tu_join(outside, "w.bin"), *link_ = tu_tmp("escape.bin");
    assert_true(tu_write(target, data, sizeof data));
    assert_int_equal(symlink(target, link_), 0);
    p = ext_model("ext_link.onnx", "escape.bin", NULL, NULL);
    TU_FAILS(load_fails(p, &err), &err, GIR_E_PARAMS, "external data location 'escape.bin' of tensor 'w' escapes the "
             "model's directory");
    gir_error_clear(&err);
    free(p);
    tu_rmtree(outside);
    free(outside);
    free(target);
    free(link_);
    /* too short for the tensor */
    p = ext_model("ext_short.onnx", "w.bin", "16", NULL);
    TU_FAILS(load_fails(p, &err), &err, GIR_E_PARAMS,
             "external data 'w.bin' is short: tensor 'w' needs bytes 16..32 but the file has 24");
    gir_error_clear(&err);
    free(p);
    p = ext_model("ext_len.onnx", "w.bin", NULL, "12");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_PARAMS, "external data of tensor 'w' has length 12");
    gir_error_clear(&err);
    free(p);
    p = ext_model("ext_neg.onnx", "w.bin", "-4", NULL);
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SCHEMA, "external data offset '-4' of tensor 'w' is not a "
             "non-negative integer");
    gir_error_clear(&err);
    free(p);
    p = ext_model("ext_missing.onnx", "nothere.bin", NULL, NULL);
    TU_FAILS(load_fails(p, &err), &err, GIR_E_IO, "cannot open external data 'nothere.bin' of tensor 'w'");
    gir_error_clear(&err);
    free(p);
    /* the file shrinks after the model was read: the load says so */
    p = ext_model("ext_shrink.onnx", "w.bin", "4", "16");
    g = load(p);
    assert_true(tu_write(bin, data, 8));
    w = gir_graph_find_value(g, "w");
    TU_FAILS(gir_tensor_load(w->data, &d, &err), &err, GIR_E_IO, "external data was rewritten after the model was "
             "read", "w.bin");
    gir_error_clear(&err);
    gir_graph_free(g);
    free(p);
    free(bin);
}

/* ==== metadata, names, types =============================================== */

static void test_metadata(void **state)
{
    (void)state;
    mb b;
    mb_start(&b, 13);
    b.m.producer_version = S(&b, "1.0");
    b.m.domain = S(&b, "org.example");
    b.m.has_model_version = 1;
    b.m.model_version = 42;
    b.m.doc_string = S(&b, "a model");
    b.g.doc_string = S(&b, "a graph");
    Onnx__StringStringEntryProto props[2], *pp[2] = { &props[0], &props[1] };
    for (int i = 0; i < 2; i++)
        onnx__string_string_entry_proto__init(&props[i]);
    props[0].key = S(&b, "author");
    props[0].value = S(&b, "me");
    props[1].key = S(&b, "license");
    props[1].value = S(&b, "MIT");
    b.m.metadata_props = pp;
    b.m.n_metadata_props = 2;
    mb_in(&b, "x", FLT, "batch,3");
    b.ins[0]->doc_string = S(&b, "the input");
    mb_out(&b, "y", FLT, "batch,3");
    mb_vi(&b, "h", FLT, "batch,3");
    Onnx__NodeProto *n1 = mb_node(&b, "Relu", NULL, "x", "h", NULL);
    n1->doc_string = S(&b, "first");
    Onnx__NodeProto *n2 = mb_node(&b, "Relu", "Relu", "h", "y", NULL);
    n2->domain = S(&b, "ai.onnx");
    char *p = mb_save(&b, "meta.onnx");
    gir_graph *g = load(p);
    assert_string_equal(g->name, "g");
    assert_string_equal(meta_str(&g->meta, "source.format"), "onnx");
    assert_string_equal(meta_str(&g->meta, "source.producer"), "test 1.0");
    assert_string_equal(meta_str(&g->meta, ONNX_META_DOMAIN), "org.example");
    assert_int_equal(gir_attrs_get_int(&g->meta, ONNX_META_MODEL_VERSION, 0), 42);
    assert_string_equal(meta_str(&g->meta, ONNX_META_DOC), "a model");
    assert_string_equal(meta_str(&g->meta, ONNX_META_GRAPH_DOC), "a graph");
    const gir_attr *ks = gir_attrs_find(&g->meta, ONNX_META_PROPS_KEYS);
    assert_int_equal(ks->u.strs.n, 2);
    assert_string_equal(ks->u.strs.v[1], "license");
    const gir_value *x = gir_graph_input(g, 0);
    assert_string_equal(gir_value_dim_name(x, 0), "batch");
    assert_int_equal(x->shape.dims[0], -1);
    assert_string_equal(meta_str(&x->meta, ONNX_META_DOC), "the input");
    assert_string_equal(gir_value_dim_name(gir_graph_find_value(g, "h"), 0), "batch");
    /* the unnamed node gets a name that clashes with nothing; the file's
     * (empty) name is written back */
    assert_string_equal(g->nodes[0]->name, "Relu_1");
    assert_string_equal(meta_str(&g->nodes[0]->meta, "onnx.name"), "");
    assert_string_equal(meta_str(&g->nodes[0]->meta, ONNX_META_DOC), "first");
    assert_string_equal(g->nodes[1]->name, "Relu");
    assert_string_equal(meta_str(&g->nodes[1]->meta, ONNX_META_DOMAIN), "ai.onnx");
    gir_graph *g2 = roundtrip(g, "meta_b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);

    /* batch-size fixes the symbolic batch of the inputs */
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_options_set(o, "batch-size", "4", &err), &err);
    TU_OK(gir_load(p, "onnx", o, &g, &err), &err);
    char s[32];
    assert_string_equal(gir_shape_str(&gir_graph_input(g, 0)->shape, s, sizeof s), "[4,3]");
    assert_null(gir_value_dim_name(gir_graph_input(g, 0), 0));
    assert_string_equal(gir_shape_str(&gir_graph_output(g, 0)->shape, s, sizeof s), "[4,3]");
    gir_graph_free(g);
    TU_OK(gir_options_set(o, "batch-size", "0", &err), &err);
    TU_FAILS(gir_load(p, "onnx", o, &g, &err), &err, GIR_E_ARGUMENT, "option batch-size=0 is not a positive integer");
    gir_error_clear(&err);
    gir_options_free(o);
    free(p);
}

static void test_tensor_types(void **state)
{
    (void)state;
    mb b;
    mb_start(&b, 13);
    mb_out(&b, "f", FLT, NULL);
    /* typed fields rather than raw_data */
    struct {
        const char *name;
        int32_t dt;
        gir_dtype gdt;
    } types[] = { { "i8", I8, GIR_DT_I8 },   { "u8", U8, GIR_DT_U8 },     { "i16", I16, GIR_DT_I16 },
                  { "u16", U16, GIR_DT_U16 }, { "b", BOOL_, GIR_DT_BOOL }, { "h", F16, GIR_DT_F16 },
                  { "bf", BF16, GIR_DT_BF16 }, { "i32", I32, GIR_DT_I32 } };
    int32_t i32v[2] = { -2, 0x3c00 };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        Onnx__TensorProto *t = mb_init(&b, types[i].name, types[i].dt, "2", NULL, 0);
        t->has_raw_data = 0;
        t->n_int32_data = 2;
        t->int32_data = i32v;
    }
    Onnx__TensorProto *t = mb_init(&b, "f", FLT, "2", NULL, 0);
    t->has_raw_data = 0;
    t->n_float_data = 2;
    t->float_data = (float[]){ 1.5f, -2 };
    t = mb_init(&b, "i64", I64, "2", NULL, 0);
    t->has_raw_data = 0;
    t->n_int64_data = 2;
    t->int64_data = (int64_t[]){ -5, 1LL << 40 };
    t = mb_init(&b, "d", F64, "", NULL, 0);
    t->has_raw_data = 0;
    t->n_double_data = 1;
    t->double_data = (double[]){ 0.1 };
    t = mb_init(&b, "u32", U32, "2", NULL, 0);
    t->has_raw_data = 0;
    t->n_uint64_data = 2;
    t->uint64_data = (uint64_t[]){ 7, 4000000000u };
    t = mb_init(&b, "u64", U64, "1", NULL, 0);
    t->has_raw_data = 0;
    t->n_uint64_data = 1;
    t->uint64_data = (uint64_t[]){ 1ULL << 63 };
    char *p = mb_save(&b, "types.onnx");
    gir_graph *g = load(p);
    gir_error err = GIR_ERROR_INIT;
    const void *d;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const gir_value *v = gir_graph_find_value(g, types[i].name);
        assert_int_equal(v->dtype, types[i].gdt);
        TU_OK(gir_tensor_load(v->data, &d, &err), &err);
        const unsigned char *u = d;
        size_t es = gir_dtype_size(types[i].gdt);
        assert_int_equal(u[0], 0xfe); /* -2, little-endian, truncated to the element */
        if (es >= 2)
            assert_int_equal(u[1], 0xff);
        assert_int_equal(u[es], 0x00);
    }
    const gir_value *u32 = gir_graph_find_value(g, "u32");
    TU_OK(gir_tensor_load(u32->data, &d, &err), &err);
    assert_int_equal(gir_le32((const unsigned char *)d + 4), 4000000000u);
    const gir_value *dv = gir_graph_find_value(g, "d");
    assert_int_equal(dv->shape.rank, 0);
    TU_OK(gir_tensor_load(dv->data, &d, &err), &err);
    assert_memory_equal(d, &(double){ 0.1 }, 8);
    /* written back as raw_data: the same tensors */
    gir_graph *g2 = roundtrip(g, "types_b.onnx", NULL, true);
    gir_graph_free(g2);
    gir_graph_free(g);
    free(p);

    /* element counts that disagree with the shape, and types the IR lacks */
    mb_start(&b, 13);
    mb_out(&b, "w", FLT, NULL);
    mb_init(&b, "w", FLT, "2,2", f6, 12);
    p = mb_save(&b, "short_raw.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_PARAMS, "tensor 'w' has 12 bytes of raw_data, but float32 data needs 16");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_out(&b, "w", FLT, NULL);
    t = mb_init(&b, "w", FLT, "3", NULL, 0);
    t->has_raw_data = 0;
    t->n_float_data = 2;
    t->float_data = (float[]){ 1, 2 };
    p = mb_save(&b, "short_typed.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_PARAMS, "tensor 'w' has 2 elements in float_data, but its shape needs 3");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_out(&b, "w", FLT, NULL);
    t = mb_init(&b, "w", FLT, "1", NULL, 0);
    t->has_raw_data = 0;
    t->n_int64_data = 1;
    t->int64_data = (int64_t[]){ 1 };
    p = mb_save(&b, "wrong_field.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SCHEMA, "tensor 'w' of type FLOAT has data in a field other than "
             "float_data");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_out(&b, "s", STR, NULL);
    t = mb_init(&b, "s", STR, "1", NULL, 0);
    t->has_raw_data = 0;
    p = mb_save(&b, "strings.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_UNSUPPORTED, "tensor 's' has element type STRING, which graphconv "
             "cannot hold");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_out(&b, "w", FLT, NULL);
    mb_init(&b, "w", 99, "1", f6, 4);
    p = mb_save(&b, "dtype99.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_DTYPE, "tensor 'w' has unknown element type 99");
    gir_error_clear(&err);
    free(p);
}

/* ==== operators kept verbatim ============================================== */

static void test_opaque(void **state)
{
    (void)state;
    mb b;
    mb_start(&b, 13);
    mb_import(&b, "com.example", 3);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "y", FLT, NULL);
    mb_out(&b, "z", FLT, NULL);
    /* a subgraph attribute and a typed list survive verbatim */
    Onnx__GraphProto *sub = gir_arena_alloc(&b.a, sizeof *sub);
    onnx__graph_proto__init(sub);
    sub->name = S(&b, "body");
    Onnx__AttributeProto *ga = attr(&b, "body", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    ga->g = sub;
    Onnx__NodeProto *n = mb_node(&b, "Foo", "foo", "x,,x", "y", ga, ai(&b, "k", 3),
                                 afloats(&b, "fs", 2, (float[]){ 0.5f, 2 }), as(&b, "mode", "m"), NULL);
    n->domain = S(&b, "com.example");
    mb_node(&b, "Acos", "acos", "x", "z", NULL);
    char *p = mb_save(&b, "opaque.onnx");
    gir_graph *g = load(p);
    const gir_node *foo = find_op(g, "Foo");
    assert_true(gir_node_is_opaque(foo));
    assert_int_equal(foo->n_in, 3);
    assert_int_equal(foo->in[1], -1);
    assert_int_equal(gir_node_int(foo, "k", 0), 3);
    assert_string_equal(meta_str(&foo->meta, ONNX_META_DOMAIN), "com.example");
    assert_int_equal(gir_attrs_get_int(&foo->meta, ONNX_META_OPSET, 0), 3);
    assert_non_null(meta_str(&foo->meta, ONNX_META_EXTRA)); /* the graph attribute */
    assert_true(gir_node_is_opaque(find_op(g, "Acos")));
    gir_graph *g2 = roundtrip(g, "opaque_b.onnx", NULL, true);
    gir_graph_free(g2);
    /* an ONNX operator kept verbatim is written only at its own opset */
    char *q = tu_tmp("opaque_12.onnx");
    gir_error err = GIR_ERROR_INIT;
    const char *o12[] = { "opset", "12", NULL };
    TU_FAILS(save(g, q, o12, &err), &err, GIR_E_UNSUPPORTED_OP,
             "cannot write as onnx: Acos (kept verbatim from opset 13) at opset 12 (1 node, first 'acos')");
    gir_error_clear(&err);
    free(q);
    gir_graph_free(g);
    free(p);
}

/* ==== bad input ============================================================ */

static void test_bad_input(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    /* truncated: the graph field runs past the end of the file */
    char *src = tu_shared("models/squeezenet1_0.onnx");
    size_t len;
    char *bytes = tu_slurp(src, &len);
    assert_non_null(bytes);
    char *p = tu_tmp("trunc.onnx");
    assert_true(tu_write(p, bytes, len / 2));
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SYNTAX, "trunc.onnx: not a valid ONNX protobuf: field 7 at byte 19 "
             "needs 5001987 bytes but only 2500983 remain (truncated file?) [syntax]");
    gir_error_clear(&err);
    assert_true(tu_write(p, bytes, 7));
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SYNTAX,
             "not a valid ONNX protobuf: field 2 at byte 2 needs 7 bytes but only 3 remain (truncated file?)");
    gir_error_clear(&err);
    assert_true(tu_write(p, bytes, 11)); /* ends between two fields, before the graph */
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SCHEMA, "the model has no graph");
    gir_error_clear(&err);
    free(bytes);
    free(src);
    assert_true(tu_write(p, "", 0));
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SYNTAX, "file is empty, not an ONNX model");
    gir_error_clear(&err);
    assert_true(tu_write(p, "{\"nodes\": []}\n", 14));
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SYNTAX,
             "not a valid ONNX protobuf: invalid wire type 3 of field 15 at byte 0");
    gir_error_clear(&err);
    free(p);

    mb b;
    /* a reference to nothing */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "y", FLT, NULL);
    mb_node(&b, "Add", "add", "x,ghost", "y", NULL);
    p = mb_save(&b, "dangling.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_REFERENCE,
             "node 'add': input 'ghost' of Add is not a graph input, an initializer or the output of a node");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "nowhere", FLT, NULL);
    mb_node(&b, "Relu", "r", "x", "y", NULL);
    p = mb_save(&b, "dangling_out.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_REFERENCE, "graph output 'nowhere' is not produced by any node");
    gir_error_clear(&err);
    free(p);
    /* a cycle, and two producers */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "b", FLT, NULL);
    mb_node(&b, "Add", "n1", "x,b", "a", NULL);
    mb_node(&b, "Relu", "n2", "a", "b", NULL);
    p = mb_save(&b, "cycle.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_CYCLE, "node 'n1': the graph has a cycle through Add");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "a", FLT, NULL);
    mb_node(&b, "Relu", "n1", "x", "a", NULL);
    mb_node(&b, "Neg", "n2", "x", "a", NULL);
    p = mb_save(&b, "twice.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_DUPLICATE, "value 'a' is defined twice (the outputs of two nodes)");
    gir_error_clear(&err);
    free(p);
    /* declared types that disagree with what the graph computes */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2,3");
    mb_out(&b, "y", FLT, NULL);
    mb_vi(&b, "h", I64, NULL);
    mb_node(&b, "Relu", "r", "x", "h", NULL);
    mb_node(&b, "Neg", "n", "h", "y", NULL);
    p = mb_save(&b, "wrong_dtype.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_DTYPE, "node 'r': value 'h' is declared int64 but is float32");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2,3");
    mb_out(&b, "y", FLT, "3,2");
    mb_node(&b, "Relu", "r", "x", "y", NULL);
    p = mb_save(&b, "wrong_shape.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SHAPE, "value 'y' is declared with shape [3,2] but has shape [2,3]");
    gir_error_clear(&err);
    free(p);
    /* attributes of the wrong type */
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "1,1,4,4");
    mb_out(&b, "y", FLT, NULL);
    mb_node(&b, "MaxPool", "mp", "x", "y", aints(&b, "kernel_shape", 2, (int64_t[]){ 2, 2 }), af(&b, "strides", 2),
            NULL);
    p = mb_save(&b, "wrong_attr.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_ATTRIBUTE, "node 'mp': attribute 'strides' of MaxPool must be a list of "
             "integers");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "y", FLT, NULL);
    mb_node(&b, "Cast", "c", "x", "y", as(&b, "to", "float"), NULL);
    p = mb_save(&b, "wrong_cast.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_ATTRIBUTE, "node 'c': attribute 'to' of Cast must be a type code");
    gir_error_clear(&err);
    free(p);
    /* an operator the opset does not have, an opset graphconv does not read,
     * a domain not imported */
    mb_start(&b, 8);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "y", FLT, NULL);
    mb_node(&b, "Erf", "e", "x", "y", NULL);
    p = mb_save(&b, "erf8.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SCHEMA, "node 'e': operator Erf does not exist in opset 8 (it appeared "
             "in opset 9)");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 19);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "y", FLT, NULL);
    mb_node(&b, "Relu", "r", "x", "y", NULL);
    p = mb_save(&b, "opset19.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_UNSUPPORTED, "the model uses opset 19 of the default domain; graphconv "
             "reads opsets 1 to 18");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    mb_in(&b, "x", FLT, "2");
    mb_out(&b, "y", FLT, NULL);
    mb_node(&b, "Foo", "f", "x", "y", NULL)->domain = S(&b, "com.nowhere");
    p = mb_save(&b, "domain.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SCHEMA, "node 'f': operator Foo uses domain 'com.nowhere', which the "
             "model does not import");
    gir_error_clear(&err);
    free(p);
    mb_start(&b, 13);
    b.m.graph = NULL;
    p = mb_save(&b, "nograph.onnx");
    TU_FAILS(load_fails(p, &err), &err, GIR_E_SCHEMA, "the model has no graph");
    gir_error_clear(&err);
    free(p);
}

/* ==== the plugin record ====================================================== */

static void test_probe_and_map(void **state)
{
    (void)state;
    const gir_format *f = gir_format_find("onnx");
    assert_non_null(f);
    char *model = tu_shared("models/resnet18.onnx");
    unsigned char head[GIR_PROBE_BYTES];
    size_t n;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_read_head(model, head, sizeof head, &n, &err), &err);
    assert_int_equal(f->probe(head, n, "model.onnx"), 95);
    assert_int_equal(f->probe(head, n, "model.bin"), 80);
    const char *name, *reason;
    TU_OK(gir_detect(model, &name, &reason, &err), &err);
    assert_string_equal(name, "onnx");
    assert_string_equal(reason, "content");
    free(model);
    assert_int_equal(f->probe((const unsigned char *)"{\"nodes\": []}", 13, "x.json"), 0);
    assert_int_equal(f->probe((const unsigned char *)"PK\x03\x04", 4, "x.nnp"), 0);
    /* every canonical operator has its row in `graphconv ops --format onnx`,
     * except the LightNet ones ONNX has no operator for */
    static const char *const no_form[] = { "Print", "Sort", "GatherBlocks", "RangeFill", "SqueezeDetBoxDecode",
                                           "YoloV3Decode", "SubMean", "DotProduct", "Stack", "Unstack", NULL };
    for (int op = 1; op < GIR_OP_COUNT_; op++) {
        bool found = false, exempt = false;
        for (const gir_op_map *m = f->ops; m->format_op; m++)
            found |= m->op == (gir_op)op && m->dir == (GIR_MAP_READ | GIR_MAP_WRITE) &&
                     strcmp(m->format_op, gir_op_name((gir_op)op)) == 0;
        for (const char *const *e = no_form; *e; e++)
            exempt |= strcmp(*e, gir_op_name((gir_op)op)) == 0;
        if (found == exempt)
            fail_msg("%s: %s", gir_op_name((gir_op)op), found ? "listed as without ONNX form but mapped"
                                                              : "no onnx mapping row");
        assert_int_equal(onnx_op_has_form((gir_op)op), found);
    }
    assert_int_equal(onnx_canonical_op("Upsample"), GIR_OP_Resize);
    assert_int_equal(onnx_canonical_op("Sort"), GIR_OP_OPAQUE);
    assert_int_equal(onnx_canonical_op("Constant"), GIR_OP_OPAQUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_models),
        cmocka_unit_test(test_model_details),
        cmocka_unit_test(test_via_nnvm),
        cmocka_unit_test(test_nnp_pairs),
        cmocka_unit_test(test_via_nnp),
        cmocka_unit_test(test_nnp_pairs_match_nnabla),
        cmocka_unit_test(test_reshape_forms),
        cmocka_unit_test(test_folded_operands),
        cmocka_unit_test(test_slice_pad_clip_forms),
        cmocka_unit_test(test_split_squeeze_reduce_forms),
        cmocka_unit_test(test_resize_forms),
        cmocka_unit_test(test_misc_forms),
        cmocka_unit_test(test_legacy_broadcast),
        cmocka_unit_test(test_conv_padding),
        cmocka_unit_test(test_write_every_opset),
        cmocka_unit_test(test_write_refusals),
        cmocka_unit_test(test_2gb_limit),
        cmocka_unit_test(test_external_data),
        cmocka_unit_test(test_external_data_checks),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_tensor_types),
        cmocka_unit_test(test_opaque),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_probe_and_map),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
