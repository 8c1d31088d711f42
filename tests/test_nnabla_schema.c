/* NNabla's whole schema: a generated network using every parameterised
 * function with every argument set, fields of a newer schema, Neural
 * Network Console files whose training networks survive .nnp -> .nnp, and
 * the functions mapped onto canonical operators run against nnabla's
 * semantics. */
#include "testutil.h"
#include "rtutil.h"

#include "formats/nnabla/nnabla.h"
#include "io/zip.h"
#include "passes/diff.h"

#include <dirent.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static gir_options *opts1(const char *k, const char *v)
{
    gir_options *o = gir_options_new();
    gir_error err = GIR_ERROR_INIT;
    if (k)
        TU_OK(gir_options_set(o, k, v, &err), &err);
    return o;
}

static gir_graph *load_opt(const char *path, const char *k, const char *v)
{
    gir_options *o = opts1(k, v);
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    TU_OK(gir_load(path, NULL, o, &g, &err), &err);
    gir_options_free(o);
    return g;
}

static void save_as(const gir_graph *g, const char *path, const char *format)
{
    gir_options *o = opts1("force", "1");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_save(g, path, format, o, &err), &err);
    gir_options_free(o);
}

static void assert_same(const gir_graph *a, const gir_graph *b, const char *what)
{
    gir_diff_options o = { true, true, true, 0 };
    gir_buf rep = GIR_BUF_INIT;
    size_t count = 0;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_graph_diff(a, b, &o, &rep, &count, &err), &err);
    if (count) {
        print_error("%s: %zu differences:\n%s\n", what, count, rep.data ? rep.data : "");
        gir_buf_free(&rep);
        fail();
    }
    gir_buf_free(&rep);
}

/* The NNablaProtoBuf of every network text of an .nnp (or a .nntxt). */
static Nnabla__NNablaProtoBuf *read_proto(const char *path)
{
    Nnabla__NNablaProtoBuf *pb = (Nnabla__NNablaProtoBuf *)gir_pb_new(&nnabla__nnabla_proto_buf__descriptor);
    gir_error err = GIR_ERROR_INIT;
    if (gir_str_ends_with(path, ".nntxt")) {
        size_t len;
        char *text = tu_slurp(path, &len);
        TU_OK(gir_pbtext_merge(text, len, &pb->base, &err), &err);
        free(text);
        return pb;
    }
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    for (size_t i = 0; i < gir_zip_count(z); i++) {
        const char *name = gir_zip_name(z, i);
        if (!gir_str_ends_with(name, ".nntxt") && !gir_str_ends_with(name, ".prototxt"))
            continue;
        void *data;
        size_t len;
        TU_OK(gir_zip_read(z, i, &data, &len, &err), &err);
        TU_OK(gir_pbtext_merge(data, len, &pb->base, &err), &err);
        free(data);
    }
    gir_zip_close(z);
    return pb;
}

static char *print_text(const ProtobufCMessage *m)
{
    gir_buf b = GIR_BUF_INIT;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_pbtext_print(m, &b, &err), &err);
    return gir_buf_take(&b);
}

/* The printed text of the network named name. */
static char *network_text(const Nnabla__NNablaProtoBuf *pb, const char *name)
{
    for (size_t i = 0; i < pb->n_network; i++)
        if (strcmp(pb->network[i]->name, name) == 0)
            return print_text(&pb->network[i]->base);
    print_error("no network named %s\n", name);
    fail();
    return NULL;
}

/* Every network of a and b but skip prints the same, and so do the file's
 * other messages (datasets, optimizers, monitors, executors, configs). */
static void assert_same_proto(const char *a_path, const char *b_path, const char *skip)
{
    Nnabla__NNablaProtoBuf *a = read_proto(a_path), *b = read_proto(b_path);
    assert_int_equal(a->n_network, b->n_network);
    for (size_t i = 0; i < a->n_network; i++) {
        if (skip && strcmp(a->network[i]->name, skip) == 0)
            continue;
        char *ta = network_text(a, a->network[i]->name), *tb = network_text(b, a->network[i]->name);
        if (strcmp(ta, tb) != 0) {
            print_error("%s vs %s: network %s differs:\n%s\n----\n%s\n", a_path, b_path, a->network[i]->name, ta,
                        tb);
            fail();
        }
        free(ta);
        free(tb);
    }
    /* the rest, networks and parameters aside */
    size_t na = a->n_network, nb = b->n_network, pa = a->n_parameter, pb = b->n_parameter;
    a->n_network = b->n_network = 0;
    a->n_parameter = b->n_parameter = 0;
    char *ra = print_text(&a->base), *rb = print_text(&b->base);
    a->n_network = na;
    b->n_network = nb;
    a->n_parameter = pa;
    b->n_parameter = pb;
    assert_string_equal(ra, rb);
    free(ra);
    free(rb);
    gir_pb_free(&a->base);
    gir_pb_free(&b->base);
}

/* ---- every parameterised function ---------------------------------------- */

/* Sets every field of parameter message m to a value that is not its
 * default (k: the field's position, so values differ between fields). */
static void fill_message(ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned k = 0; k < d->n_fields; k++) {
        const ProtobufCFieldDescriptor *f = &d->fields[k];
        char *base = (char *)m + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t *count = (size_t *)((char *)m + f->quantifier_offset);
            if (f->type == PROTOBUF_C_TYPE_INT64) {
                int64_t *v = malloc(3 * sizeof *v);
                v[0] = 1;
                v[1] = 2 + k;
                v[2] = -1;
                *(int64_t **)base = v;
                *count = 3;
            } else if (f->type == PROTOBUF_C_TYPE_FLOAT) {
                float *v = malloc(2 * sizeof *v);
                v[0] = 0.25f;
                v[1] = 0.75f + (float)k;
                *(float **)base = v;
                *count = 2;
            } else {
                fail_msg("repeated field %s of %s has an unexpected type", f->name, d->name);
            }
            continue;
        }
        switch (f->type) {
        case PROTOBUF_C_TYPE_INT64: *(int64_t *)base = 2 + (int64_t)k; break;
        case PROTOBUF_C_TYPE_FLOAT: *(float *)base = 0.5f + (float)k; break;
        case PROTOBUF_C_TYPE_DOUBLE: *(double *)base = 1.25 + k; break;
        case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)base = 1; break;
        case PROTOBUF_C_TYPE_STRING: *(char **)base = gir_strdupf("v%u", k); break;
        case PROTOBUF_C_TYPE_MESSAGE: {
            ProtobufCMessage *sub = gir_pb_new(f->descriptor);
            if (f->descriptor == &nnabla__shape__descriptor) {
                Nnabla__Shape *s = (Nnabla__Shape *)sub;
                s->n_dim = 2;
                s->dim = malloc(2 * sizeof *s->dim);
                s->dim[0] = 2;
                s->dim[1] = 3 + k;
            }
            *(ProtobufCMessage **)base = sub;
            break;
        }
        default: fail_msg("field %s of %s has an unexpected type", f->name, d->name);
        }
    }
}

static char **strs(size_t n, ...)
{
    char **v = malloc(n * sizeof *v);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        v[i] = gir_strdupf("%s", va_arg(ap, const char *));
    va_end(ap);
    return v;
}

static Nnabla__Variable *variable(const char *name, const char *type, int64_t d0, int64_t d1)
{
    Nnabla__Variable *v = (Nnabla__Variable *)gir_pb_new(&nnabla__variable__descriptor);
    v->name = gir_strdupf("%s", name);
    v->type = gir_strdupf("%s", type);
    v->shape = (Nnabla__Shape *)gir_pb_new(&nnabla__shape__descriptor);
    v->shape->n_dim = d1 ? 2 : 1;
    v->shape->dim = malloc(2 * sizeof(int64_t));
    v->shape->dim[0] = d0;
    v->shape->dim[1] = d1;
    return v;
}

static Nnabla__Function *function(const char *name, const char *type, char **in, size_t n_in, char **out,
                                  size_t n_out)
{
    Nnabla__Function *f = (Nnabla__Function *)gir_pb_new(&nnabla__function__descriptor);
    f->name = gir_strdupf("%s", name);
    f->type = gir_strdupf("%s", type);
    f->input = in;
    f->n_input = n_in;
    f->output = out;
    f->n_output = n_out;
    return f;
}

/* A network "Main" of one function per parameter message (156), every
 * argument set, and an executor running "Runtime": Affine, ReLU, Softmax. */
static char *all_functions_text(size_t *n_param_functions)
{
    Nnabla__NNablaProtoBuf *pb = (Nnabla__NNablaProtoBuf *)gir_pb_new(&nnabla__nnabla_proto_buf__descriptor);
    const ProtobufCMessageDescriptor *fd = &nnabla__function__descriptor;
    pb->network = calloc(2, sizeof *pb->network);
    pb->n_network = 2;
    Nnabla__Network *main = pb->network[0] = (Nnabla__Network *)gir_pb_new(&nnabla__network__descriptor);
    main->name = gir_strdupf("Main");
    main->batch_size = 8;
    main->function = calloc(fd->n_fields, sizeof *main->function);
    main->variable = calloc(fd->n_fields + 1, sizeof *main->variable);
    main->variable[main->n_variable++] = variable("x", "Buffer", -1, 4);
    size_t n = 0;
    for (unsigned k = 0; k < fd->n_fields; k++) {
        const ProtobufCFieldDescriptor *f = &fd->fields[k];
        if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
            continue;
        const char *mname = ((const ProtobufCMessageDescriptor *)f->descriptor)->short_name;
        size_t tl = strlen(mname) - strlen("Parameter");
        assert_string_equal(mname + tl, "Parameter");
        char type[64];
        snprintf(type, sizeof type, "%.*s", (int)tl, mname);
        char fname[80], oname[96];
        snprintf(fname, sizeof fname, "%s_%u", type, f->id);
        snprintf(oname, sizeof oname, "%s_out", fname);
        Nnabla__Function *fn = function(fname, type, strs(1, "x"), 1, strs(1, oname), 1);
        ProtobufCMessage *pm = gir_pb_new(f->descriptor);
        fill_message(pm);
        nnb_set_param(fn, f, pm);
        main->function[main->n_function++] = fn;
        main->variable[main->n_variable++] = variable(oname, "Buffer", -1, 4);
        n++;
    }
    *n_param_functions = n;

    Nnabla__Network *rt = pb->network[1] = (Nnabla__Network *)gir_pb_new(&nnabla__network__descriptor);
    rt->name = gir_strdupf("Runtime");
    rt->batch_size = 1;
    rt->variable = calloc(6, sizeof *rt->variable);
    rt->variable[rt->n_variable++] = variable("x", "Buffer", -1, 4);
    rt->variable[rt->n_variable++] = variable("fc/W", "Parameter", 4, 3);
    rt->variable[rt->n_variable++] = variable("fc/b", "Parameter", 3, 0);
    rt->variable[rt->n_variable++] = variable("h", "Buffer", -1, 3);
    rt->variable[rt->n_variable++] = variable("r", "Buffer", -1, 3);
    rt->variable[rt->n_variable++] = variable("y", "Buffer", -1, 3);
    rt->function = calloc(3, sizeof *rt->function);
    Nnabla__Function *af = function("fc", "Affine", strs(3, "x", "fc/W", "fc/b"), 3, strs(1, "h"), 1);
    Nnabla__AffineParameter *ap = (Nnabla__AffineParameter *)gir_pb_new(&nnabla__affine_parameter__descriptor);
    ap->base_axis = 1;
    nnb_set_param(af, nnb_param_field_by_name("affine_param"), &ap->base);
    rt->function[rt->n_function++] = af;
    Nnabla__Function *rf = function("relu", "ReLU", strs(1, "h"), 1, strs(1, "r"), 1);
    nnb_set_param(rf, nnb_param_field_by_name("relu_param"), gir_pb_new(&nnabla__re_luparameter__descriptor));
    rt->function[rt->n_function++] = rf;
    Nnabla__Function *sf = function("softmax", "Softmax", strs(1, "r"), 1, strs(1, "y"), 1);
    Nnabla__SoftmaxParameter *sp = (Nnabla__SoftmaxParameter *)gir_pb_new(&nnabla__softmax_parameter__descriptor);
    sp->axis = 1;
    nnb_set_param(sf, nnb_param_field_by_name("softmax_param"), &sp->base);
    rt->function[rt->n_function++] = sf;

    pb->parameter = calloc(2, sizeof *pb->parameter);
    static const float w[12] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1 };
    static const float b[3] = { 0.5f, -0.5f, 0 };
    const char *pnames[2] = { "fc/W", "fc/b" };
    for (int i = 0; i < 2; i++) {
        Nnabla__Parameter *p = (Nnabla__Parameter *)gir_pb_new(&nnabla__parameter__descriptor);
        p->variable_name = gir_strdupf("%s", pnames[i]);
        p->shape = (Nnabla__Shape *)gir_pb_new(&nnabla__shape__descriptor);
        p->shape->n_dim = i ? 1 : 2;
        p->shape->dim = malloc(2 * sizeof(int64_t));
        p->shape->dim[0] = i ? 3 : 4;
        p->shape->dim[1] = 3;
        p->n_data = i ? 3 : 12;
        p->data = malloc(p->n_data * sizeof(float));
        memcpy(p->data, i ? b : w, p->n_data * sizeof(float));
        p->need_grad = 1;
        pb->parameter[pb->n_parameter++] = p;
    }

    pb->executor = calloc(1, sizeof *pb->executor);
    pb->n_executor = 1;
    Nnabla__Executor *e = pb->executor[0] = (Nnabla__Executor *)gir_pb_new(&nnabla__executor__descriptor);
    e->name = gir_strdupf("runtime");
    e->network_name = gir_strdupf("Runtime");
    e->data_variable = calloc(1, sizeof *e->data_variable);
    e->data_variable[0] = (Nnabla__DataVariable *)gir_pb_new(&nnabla__data_variable__descriptor);
    e->data_variable[0]->variable_name = gir_strdupf("x");
    e->data_variable[0]->data_name = gir_strdupf("x");
    e->n_data_variable = 1;
    e->output_variable = calloc(1, sizeof *e->output_variable);
    e->output_variable[0] = (Nnabla__OutputVariable *)gir_pb_new(&nnabla__output_variable__descriptor);
    e->output_variable[0]->variable_name = gir_strdupf("y");
    e->output_variable[0]->data_name = gir_strdupf("y");
    e->n_output_variable = 1;
    e->parameter_variable = calloc(2, sizeof *e->parameter_variable);
    for (int i = 0; i < 2; i++) {
        e->parameter_variable[i] = (Nnabla__ParameterVariable *)gir_pb_new(&nnabla__parameter_variable__descriptor);
        e->parameter_variable[i]->variable_name = gir_strdupf("%s", pnames[i]);
    }
    e->n_parameter_variable = 2;
    char *text = print_text(&pb->base);
    gir_pb_free(&pb->base);
    return text;
}

/* The generated file reads (the executor's network runs), and .nnp ->
 * .nnp keeps the training network's 156 functions with every argument. */
static void test_every_parameterised_function(void **state)
{
    (void)state;
    size_t n;
    char *text = all_functions_text(&n);
    assert_int_equal(n, 156);
    /* every argument made it into the text: a spot check of a few */
    assert_non_null(strstr(text, "image_augmentation_param {\n      shape {\n        dim: 2\n        dim: 3\n"));
    assert_non_null(strstr(text, "  comm {\n"));
    assert_non_null(strstr(text, "einsum_param {\n      equation: \"v0\"\n"));
    assert_non_null(strstr(text, "selu_param {\n      scale: 1.25\n      alpha: 2.25\n"));
    char *in = tu_tmp("all_functions.nntxt"), *out = tu_tmp("all_functions.nnp"), *out2 = tu_tmp("again.nnp");
    assert_true(tu_write(in, text, strlen(text)));
    gir_graph *g = load_opt(in, NULL, NULL);
    assert_string_equal(g->name, "Runtime");
    assert_int_equal(g->n_nodes, 3);
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 2, DIMS(1, 4), F32S(1, 2, 3, 4));
    gir_tensor *y = NULL;
    rt_run(g, 1, &x, 1, &y, 1);
    /* h = x W + b = (5.5, 5.5, 7); softmax of (5.5, 5.5, 7) */
    double e0 = exp(5.5 - 7.0), sum = 2 * e0 + 1;
    rt_expect_f32(y, 2, DIMS(1, 3), F32S((float)(e0 / sum), (float)(e0 / sum), (float)(1 / sum)), 1e-6);
    gir_tensor_unref(x);
    gir_tensor_unref(y);
    save_as(g, out, "nnabla");
    assert_same_proto(in, out, "Runtime");
    gir_graph *g2 = load_opt(out, NULL, NULL);
    assert_same(g, g2, "all functions: Runtime");
    save_as(g2, out2, "nnabla");
    assert_true(tu_files_equal(out, out2));
    gir_graph_free(g);
    gir_graph_free(g2);
    free(text);
    free(in);
    free(out);
    free(out2);
}

/* ---- fields and functions of a newer nnabla --------------------------- */

/* A network whose second function is `type` with parameter text `param`. */
static char *newer_net(const char *type, const char *param)
{
    gir_buf b = GIR_BUF_INIT;
    gir_buf_puts(&b, "global_config { default_context { backends: \"cpu:float\" future_ctx: 1 } }\n"
                     "network {\n"
                     "  name: \"net\"\n"
                     "  batch_size: 1\n"
                     "  future_network_field: \"x\"\n"
                     "  variable { name: \"x\" type: \"Buffer\" shape: { dim: 1 dim: 4 } }\n"
                     "  variable { name: \"h\" type: \"Buffer\" shape: { dim: 1 dim: 4 } }\n"
                     "  variable { name: \"y\" type: \"Buffer\" shape: { dim: 1 dim: 4 } }\n"
                     "  function { name: \"r\" type: \"ReLU\" input: \"x\" output: \"h\" relu_param { inplace: true } }\n"
                     "  function { name: \"f\" type: \"");
    gir_buf_puts(&b, type);
    gir_buf_puts(&b, "\" input: \"h\" output: \"y\" ");
    gir_buf_puts(&b, param);
    gir_buf_puts(&b, " }\n}\n"
                     "executor { name: \"e\" network_name: \"net\" data_variable { variable_name: \"x\" data_name: \"x\" }\n"
                     "  output_variable { variable_name: \"y\" data_name: \"y\" } }\n");
    return gir_buf_take(&b);
}

static bool has_note(const gir_graph *g, const char *frag)
{
    const gir_attr *a = gir_attrs_find(&g->meta, GIR_META_NOTES);
    if (!a || a->type != GIR_ATTR_STRINGS)
        return false;
    const char *const *v = gir_attr_strings(a);
    for (size_t i = 0; i < a->u.strs.n; i++)
        if (strstr(v[i], frag))
            return true;
    return false;
}

/* A function (or an argument) this schema does not know: the file reads
 * with notes, .nnp -> .nnp keeps the text as it was, and writing ONNX (or
 * running) refuses the function by name. */
static void newer_case(const char *type, const char *param, const char *note, const char *kept)
{
    char *text = newer_net(type, param);
    char *in = tu_tmp("newer.nntxt"), *out = tu_tmp("newer.nnp"), *onnx = tu_tmp("newer.onnx");
    assert_true(tu_write(in, text, strlen(text)));
    free(text);
    gir_graph *g = load_opt(in, NULL, NULL);
    assert_true(has_note(g, "this nnabla schema does not know"));
    assert_true(has_note(g, note));
    const gir_node *f = g->nodes[1];
    assert_int_equal(f->op, GIR_OP_OPAQUE);
    assert_string_equal(f->opaque_op, type);
    save_as(g, out, "nnabla");
    Nnabla__NNablaProtoBuf *pb = read_proto(out);
    char *printed = print_text(&pb->base);
    if (!strstr(printed, kept) || !strstr(printed, "future_network_field: \"x\"") ||
        !strstr(printed, "future_ctx: 1")) {
        print_error("written file lacks \"%s\":\n%s\n", kept, printed);
        fail();
    }
    free(printed);
    gir_pb_free(&pb->base);
    gir_graph *g2 = load_opt(out, NULL, NULL);
    assert_same(g, g2, type);
    gir_options *o = opts1("force", "1");
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_save(g, onnx, "onnx", o, &err), &err, GIR_E_UNSUPPORTED_OP, type, NULL);
    gir_error_clear(&err);
    gir_options_free(o);
    gir_graph_free(g);
    gir_graph_free(g2);
    free(in);
    free(out);
    free(onnx);
}

static void test_newer_schema(void **state)
{
    (void)state;
    /* a function nnabla does not have yet, with its parameter message */
    newer_case("FutureAct", "future_act_param { gamma: 0.5 modes: [1, 2] }", "function 'f' (FutureAct) has 1 field",
               "    future_act_param { gamma: 0.5 modes: [1, 2] }\n");
    /* a known function with an argument added after this schema */
    newer_case("LeakyReLU", "leaky_relu_param { alpha: 0.25 approximate: true }",
               "function 'f' (LeakyReLU) has 1 field this nnabla schema does not know (first 'approximate')",
               "    leaky_relu_param {\n      alpha: 0.25\n      approximate: true\n    }\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_parameterised_function),
        cmocka_unit_test(test_newer_schema),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
