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

static gir_graph *load_opt(const char *path, const char *k, const char *v)
{
    gir_options *o = tu_options(k, v, NULL);
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    TU_OK(gir_load(path, NULL, o, &g, &err), &err);
    gir_options_free(o);
    return g;
}

static void save_as(const gir_graph *g, const char *path, const char *format)
{
    gir_options *o = tu_options("force", "1", NULL);
    tu_save(g, path, format, o);
    gir_options_free(o);
}

/* a and b the same: structure and weights, and unless `loose` also names
 * and format metadata (loose: what `graphconv diff` compares). */
static void assert_same_as(const gir_graph *a, const gir_graph *b, const char *what, bool loose)
{
    tu_assert_same(a, b, !loose, !loose, what);
}

static void assert_same(const gir_graph *a, const gir_graph *b, const char *what)
{
    assert_same_as(a, b, what, false);
}

static void assert_same_graph(const gir_graph *a, const gir_graph *b, const char *what)
{
    assert_same_as(a, b, what, true);
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
    gir_options *o = tu_options("force", "1", NULL);
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

/* ---- mapped functions against nnabla's semantics ---------------------------- */

/* A network "n" of `body` (variables and functions) whose executor feeds
 * x and reads the comma-separated outputs; `params` holds parameter
 * entries.  Loaded, run on x, and checked to survive .nnp -> .nnp and to
 * be writable as ONNX (every function mapped onto canonical operators). */
static void run_net_opt(const char *body, const char *outputs, const char *params, gir_tensor *x, gir_tensor **outs,
                        size_t n_out, bool onnx_too)
{
    gir_buf b = GIR_BUF_INIT;
    gir_buf_puts(&b, "network {\n  name: \"n\"\n  batch_size: 1\n");
    gir_buf_puts(&b, body);
    gir_buf_puts(&b, "}\nexecutor {\n  name: \"e\"\n  network_name: \"n\"\n"
                     "  data_variable { variable_name: \"x\" data_name: \"x\" }\n");
    char *list = gir_strdupf("%s", outputs);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
        gir_buf_printf(&b, "  output_variable { variable_name: \"%s\" data_name: \"%s\" }\n", tok, tok);
    free(list);
    /* the parameters, as nnabla lists them */
    for (const char *q = params; q && (q = strstr(q, "variable_name: \"")); ) {
        q += strlen("variable_name: \"");
        const char *e = strchr(q, '"');
        gir_buf_printf(&b, "  parameter_variable { variable_name: \"%.*s\" }\n", (int)(e - q), q);
        q = e;
    }
    gir_buf_puts(&b, "}\n");
    if (params)
        gir_buf_puts(&b, params);
    char *text = gir_buf_take(&b);
    char *in = tu_tmp("fn.nntxt"), *nnp = tu_tmp("fn.nnp"), *onnx = tu_tmp("fn.onnx");
    assert_true(tu_write(in, text, strlen(text)));
    free(text);
    gir_graph *g = load_opt(in, NULL, NULL);
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->op == GIR_OP_OPAQUE) {
            print_error("function %s was not mapped\n", g->nodes[i]->opaque_op);
            fail();
        }
    rt_run(g, 1, &x, 1, outs, n_out);
    save_as(g, nnp, "nnabla");
    gir_graph *g2 = load_opt(nnp, NULL, NULL);
    assert_same_graph(g, g2, body);
    gir_tensor *again[4] = { NULL };
    rt_run(g2, 1, &x, 1, again, n_out);
    for (size_t i = 0; i < n_out; i++) {
        assert_int_equal(gir_tensor_nbytes(again[i]), gir_tensor_nbytes(outs[i]));
        const void *a, *c;
        gir_error err = GIR_ERROR_INIT;
        TU_OK(gir_tensor_load(again[i], &a, &err), &err);
        TU_OK(gir_tensor_load(outs[i], &c, &err), &err);
        assert_memory_equal(a, c, gir_tensor_nbytes(outs[i]));
        gir_tensor_unref(again[i]);
    }
    if (onnx_too)
        save_as(g, onnx, "onnx");
    gir_graph_free(g);
    gir_graph_free(g2);
    free(in);
    free(nnp);
    free(onnx);
}

static void run_net(const char *body, const char *outputs, const char *params, gir_tensor *x, gir_tensor **outs,
                    size_t n_out)
{
    run_net_opt(body, outputs, params, x, outs, n_out, true);
}

#define VAR(name, dims) "  variable { name: \"" name "\" type: \"Buffer\" shape: { " dims " } }\n"
#define PVAR(name, dims) "  variable { name: \"" name "\" type: \"Parameter\" shape: { " dims " } }\n"
#define FN(name, type, ins, outs, param) \
    "  function { name: \"" name "\" type: \"" type "\" " ins " " outs " " param " }\n"

static const float xs[6] = { -2.0f, -0.5f, 0.0f, 0.25f, 1.5f, 3.0f };

/* y = f(x) element by element on xs (shape 2 x 3) */
static void elementwise_case(const char *type, double (*f)(double))
{
    char body[1024];
    snprintf(body, sizeof body, VAR("x", "dim: 2 dim: 3") VAR("y", "dim: 2 dim: 3") "%s%s%s",
             "  function { name: \"f\" type: \"", type, "\" input: \"x\" output: \"y\" }\n");
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), xs), *y = NULL;
    run_net(body, "y", NULL, x, &y, 1);
    float want[6];
    for (int i = 0; i < 6; i++)
        want[i] = (float)f(xs[i]);
    rt_expect_f32(y, 2, DIMS(2, 3), want, 2e-6);
    gir_tensor_unref(x);
    gir_tensor_unref(y);
}

static double swish(double x) { return x / (1 + exp(-x)); }
static double gelu(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }
static double mish(double x) { return x * tanh(log1p(exp(x))); }
static double log_sigmoid(double x) { return log(1 / (1 + exp(-x))); }
static double tanh_shrink(double x) { return x - tanh(x); }

static void test_elementwise_functions(void **state)
{
    (void)state;
    elementwise_case("Swish", swish);
    elementwise_case("GELU", gelu);
    elementwise_case("Mish", mish);
    elementwise_case("LogSigmoid", log_sigmoid);
    elementwise_case("TanhShrink", tanh_shrink);
}

/* CReLU / CELU: f(x) and f(-x) concatenated along axis */
static void test_concatenated_activations(void **state)
{
    (void)state;
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), xs), *y = NULL;
    run_net(VAR("x", "dim: 2 dim: 3") VAR("y", "dim: 2 dim: 6")
                FN("f", "CReLU", "input: \"x\"", "output: \"y\"", "crelu_param { axis: 1 }"),
            "y", NULL, x, &y, 1);
    rt_expect_f32(y, 2, DIMS(2, 6), F32S(0, 0, 0, 2, 0.5f, 0, 0.25f, 1.5f, 3, 0, 0, 0), 1e-30);
    gir_tensor_unref(y);
    run_net(VAR("x", "dim: 2 dim: 3") VAR("y", "dim: 4 dim: 3")
                FN("f", "CELU", "input: \"x\"", "output: \"y\"", "celu_param { alpha: 0.5 axis: 0 }"),
            "y", NULL, x, &y, 1);
    float want[12];
    for (int i = 0; i < 6; i++) {
        double a = xs[i], b = -xs[i];
        want[i] = (float)(a > 0 ? a : 0.5 * (exp(a) - 1));
        want[6 + i] = (float)(b > 0 ? b : 0.5 * (exp(b) - 1));
    }
    rt_expect_f32(y, 2, DIMS(4, 3), want, 2e-6);
    gir_tensor_unref(y);
    /* Stack: a new axis */
    run_net_opt(VAR("x", "dim: 2 dim: 3") VAR("y", "dim: 2 dim: 2 dim: 3")
                    FN("f", "Stack", "input: \"x\" input: \"x\"", "output: \"y\"", "stack_param { axis: 1 }"),
                "y", NULL, x, &y, 1, false);
    rt_expect_f32(y, 3, DIMS(2, 2, 3), F32S(-2, -0.5f, 0, -2, -0.5f, 0, 0.25f, 1.5f, 3, 0.25f, 1.5f, 3), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
}

/* Max / Min with with_index and only_index: ArgMax / ArgMin, first index
 * of ties */
static void test_max_min_index(void **state)
{
    (void)state;
    static const float v[6] = { 1, 5, 5, 7, -1, 7 };
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), v), *o[2] = { NULL, NULL };
    run_net(VAR("x", "dim: 2 dim: 3") VAR("i", "dim: 2")
                FN("f", "Max", "input: \"x\"", "output: \"i\"", "max_param { axes: 1 only_index: true }"),
            "i", NULL, x, o, 1);
    rt_expect_i64(o[0], 1, DIMS(2), I64S(1, 0));
    gir_tensor_unref(o[0]);
    run_net(VAR("x", "dim: 2 dim: 3") VAR("m", "dim: 1 dim: 3") VAR("i", "dim: 1 dim: 3")
                FN("f", "Min", "input: \"x\"", "output: \"m\" output: \"i\"",
                   "min_param { axes: 0 keep_dims: true with_index: true }"),
            "m,i", NULL, x, o, 2);
    rt_expect_f32(o[0], 2, DIMS(1, 3), F32S(1, -1, 5), 0);
    rt_expect_i64(o[1], 2, DIMS(1, 3), I64S(0, 1, 0));
    gir_tensor_unref(o[0]);
    gir_tensor_unref(o[1]);
    gir_tensor_unref(x);
}

/* PReLU with a slope per channel of base_axis */
static void test_prelu_per_channel(void **state)
{
    (void)state;
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 2, 3), xs), *y = NULL;
    run_net(VAR("x", "dim: 1 dim: 2 dim: 3") PVAR("slope", "dim: 2") VAR("y", "dim: 1 dim: 2 dim: 3")
                FN("f", "PReLU", "input: \"x\" input: \"slope\"", "output: \"y\"", "prelu_param { base_axis: 1 }"),
            "y", "parameter { variable_name: \"slope\" shape: { dim: 2 } data: 0.5 data: -3 }\n", x, &y, 1);
    rt_expect_f32(y, 3, DIMS(1, 2, 3), F32S(-1, -0.25f, 0, 0.25f, 1.5f, 3), 0);
    gir_tensor_unref(y);
    /* base_axis 2: one slope per element of the last axis */
    run_net(VAR("x", "dim: 1 dim: 2 dim: 3") PVAR("slope", "dim: 3") VAR("y", "dim: 1 dim: 2 dim: 3")
                FN("f", "PReLU", "input: \"x\" input: \"slope\"", "output: \"y\"", "prelu_param { base_axis: 2 }"),
            "y", "parameter { variable_name: \"slope\" shape: { dim: 3 } data: 0.5 data: 2 data: 4 }\n", x, &y, 1);
    rt_expect_f32(y, 3, DIMS(1, 2, 3), F32S(-1, -1, 0, 0.25f, 1.5f, 3), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
}

/* DepthwiseConvolution (multiplier 2) and DepthwiseDeconvolution against
 * direct loops over nnabla's definitions */
static void test_depthwise(void **state)
{
    (void)state;
    float xv[18], wv[8], bv[4];
    for (int i = 0; i < 18; i++)
        xv[i] = (float)((i * 7) % 5) - 2.0f;
    for (int i = 0; i < 8; i++)
        wv[i] = (float)(i % 3) - 0.5f;
    for (int i = 0; i < 4; i++)
        bv[i] = 0.25f * (float)i;
    gir_buf p = GIR_BUF_INIT;
    gir_buf_puts(&p, "parameter { variable_name: \"W\" shape: { dim: 4 dim: 1 dim: 2 }");
    for (int i = 0; i < 8; i++)
        gir_buf_printf(&p, " data: %g", (double)wv[i]);
    gir_buf_puts(&p, " }\nparameter { variable_name: \"b\" shape: { dim: 4 }");
    for (int i = 0; i < 4; i++)
        gir_buf_printf(&p, " data: %g", (double)bv[i]);
    gir_buf_puts(&p, " }\n");
    char *params = gir_buf_take(&p);
    /* x (1, 2, 3, 3), weight (4, 1, 2): output channel o reads input channel
     * o / 2; pad (1, 0), stride (2, 1) */
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 2, 3, 3), xv), *y = NULL;
    run_net(VAR("x", "dim: 1 dim: 2 dim: 3 dim: 3") PVAR("W", "dim: 4 dim: 1 dim: 2") PVAR("b", "dim: 4")
                VAR("y", "dim: 1 dim: 4 dim: 3 dim: 2")
                FN("f", "DepthwiseConvolution", "input: \"x\" input: \"W\" input: \"b\"", "output: \"y\"",
                   "depthwise_convolution_param { base_axis: 1 pad { dim: 1 dim: 0 } stride { dim: 2 dim: 1 } "
                   "dilation { dim: 1 dim: 1 } multiplier: 2 }"),
            "y", params, x, &y, 1);
    float want[24];
    for (int o = 0; o < 4; o++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                double acc = bv[o];
                for (int ki = 0; ki < 1; ki++)
                    for (int kj = 0; kj < 2; kj++) {
                        int yi = i * 2 - 1 + ki, xj = j + kj;
                        if (yi >= 0 && yi < 3)
                            acc += xv[(o / 2) * 9 + yi * 3 + xj] * wv[o * 2 + ki * 2 + kj];
                    }
                want[o * 4 + i * 2 + j] = (float)acc;
            }
    /* the declared output shape (1,4,3,2) is wrong on purpose? no: H' =
     * (3 + 2 - 1) / 2 + 1 = 3, W' = 3 - 2 + 1 = 2 */
    float want3[24];
    for (int o = 0; o < 4; o++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++) {
                double acc = bv[o];
                for (int kj = 0; kj < 2; kj++) {
                    int yi = i * 2 - 1, xj = j + kj;
                    if (yi >= 0 && yi < 3)
                        acc += xv[(o / 2) * 9 + yi * 3 + xj] * wv[o * 2 + kj];
                }
                want3[o * 6 + i * 2 + j] = (float)acc;
            }
    (void)want;
    rt_expect_f32(y, 4, DIMS(1, 4, 3, 2), want3, 1e-5);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
    free(params);

    /* DepthwiseDeconvolution (divisor 1): x (1, 2, 2), weight (2, 3) */
    static const float dx[4] = { 1, 2, -1, 3 }, dw[6] = { 1, 0.5f, -1, 2, 0, 1 };
    x = rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 2, 2), dx);
    run_net(VAR("x", "dim: 1 dim: 2 dim: 2") PVAR("W", "dim: 2 dim: 3") VAR("y", "dim: 1 dim: 2 dim: 4")
                FN("f", "DepthwiseDeconvolution", "input: \"x\" input: \"W\"", "output: \"y\"",
                   "depthwise_deconvolution_param { base_axis: 1 pad { dim: 0 } stride { dim: 1 } dilation { dim: 1 } "
                   "divisor: 1 }"),
            "y", "parameter { variable_name: \"W\" shape: { dim: 2 dim: 3 } data: 1 data: 0.5 data: -1 data: 2 "
                 "data: 0 data: 1 }\n",
            x, &y, 1);
    /* y[c, i + k] += x[c, i] * w[c, k] */
    float dwant[8] = { 0 };
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 3; k++)
                dwant[c * 4 + i + k] += dx[c * 2 + i] * dw[c * 3 + k];
    rt_expect_f32(y, 3, DIMS(1, 2, 4), dwant, 1e-6);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
}

/* Normalisation over groups of elements: out[i] = (x[i] - mean) / sqrt(var
 * + eps) * g[gi[i]] + b[gi[i]], statistics per group id grp[i]. */
static void normalize_ref(const float *x, size_t n, const int *grp, const float *g, const float *b, const int *gi,
                          float eps, float *out)
{
    for (size_t i = 0; i < n; i++) {
        double sum = 0, sq = 0;
        size_t cnt = 0;
        for (size_t j = 0; j < n; j++)
            if (grp[j] == grp[i]) {
                sum += x[j];
                cnt++;
            }
        double mean = sum / (double)cnt;
        for (size_t j = 0; j < n; j++)
            if (grp[j] == grp[i])
                sq += (x[j] - mean) * (x[j] - mean);
        double y = (x[i] - mean) / sqrt(sq / (double)cnt + eps);
        out[i] = (float)(y * (g ? g[gi[i]] : 1.0) + (b ? b[gi[i]] : 0.0));
    }
}

static void test_normalizations(void **state)
{
    (void)state;
    static const float v[8] = { 1, -2, 3, 0.5f, 4, 4.5f, -1, 2 };
    static const float gam[4] = { 2, 0.5f, -1, 1 }, bet[4] = { 0.25f, -0.5f, 1, 0 };
    float want[8];
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 4, 2), v), *y = NULL;
    const char *gb = "parameter { variable_name: \"beta\" shape: { dim: 1 dim: 4 dim: 1 } data: 0.25 data: -0.5 "
                     "data: 1 data: 0 }\n"
                     "parameter { variable_name: \"gamma\" shape: { dim: 1 dim: 4 dim: 1 } data: 2 data: 0.5 "
                     "data: -1 data: 1 }\n";
    static const int chan[8] = { 0, 0, 1, 1, 2, 2, 3, 3 }, all[8] = { 0 };
    /* LayerNormalization: statistics over all but the batch axis */
    run_net(VAR("x", "dim: 1 dim: 4 dim: 2") PVAR("beta", "dim: 1 dim: 4 dim: 1") PVAR("gamma", "dim: 1 dim: 4 dim: 1")
                VAR("y", "dim: 1 dim: 4 dim: 2")
                FN("f", "LayerNormalization", "input: \"x\" input: \"beta\" input: \"gamma\"", "output: \"y\"",
                   "layer_normalization_param { batch_axis: 0 eps: 1e-05 }"),
            "y", gb, x, &y, 1);
    normalize_ref(v, 8, all, gam, bet, chan, 1e-5f, want);
    rt_expect_f32(y, 3, DIMS(1, 4, 2), want, 2e-5);
    gir_tensor_unref(y);
    /* InstanceNormalization: per (batch, channel), no scale or bias */
    run_net(VAR("x", "dim: 1 dim: 4 dim: 2") VAR("y", "dim: 1 dim: 4 dim: 2")
                FN("f", "InstanceNormalization", "input: \"x\"", "output: \"y\"",
                   "instance_normalization_param { channel_axis: 1 batch_axis: 0 eps: 0.01 no_scale: true "
                   "no_bias: true }"),
            "y", NULL, x, &y, 1);
    normalize_ref(v, 8, chan, NULL, NULL, chan, 0.01f, want);
    rt_expect_f32(y, 3, DIMS(1, 4, 2), want, 2e-5);
    gir_tensor_unref(y);
    /* GroupNormalization: 2 groups of 2 channels, gamma only */
    static const int grp2[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
    run_net(VAR("x", "dim: 1 dim: 4 dim: 2") PVAR("gamma", "dim: 1 dim: 4 dim: 1") VAR("y", "dim: 1 dim: 4 dim: 2")
                FN("f", "GroupNormalization", "input: \"x\" input: \"gamma\"", "output: \"y\"",
                   "group_normalization_param { num_groups: 2 channel_axis: 1 batch_axis: 0 eps: 1e-05 "
                   "no_bias: true }"),
            "y", strstr(gb, "parameter { variable_name: \"gamma\""), x, &y, 1);
    normalize_ref(v, 8, grp2, gam, NULL, chan, 1e-5f, want);
    rt_expect_f32(y, 3, DIMS(1, 4, 2), want, 2e-5);
    gir_tensor_unref(y);
    /* TensorNormalization: statistics kept per the listed axes */
    run_net(VAR("x", "dim: 1 dim: 4 dim: 2") VAR("y", "dim: 1 dim: 4 dim: 2")
                FN("f", "TensorNormalization", "input: \"x\"", "output: \"y\"",
                   "tensor_normalization_param { axes: 0 axes: 1 eps: 1e-05 no_scale: true no_bias: true }"),
            "y", NULL, x, &y, 1);
    normalize_ref(v, 8, chan, NULL, NULL, chan, 1e-5f, want);
    rt_expect_f32(y, 3, DIMS(1, 4, 2), want, 2e-5);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
}

/* nnabla's 1-D interpolation of src (iw cells) into ow cells */
static void interp_ref(const float *src, int iw, int ow, bool linear, bool ac, bool hp, bool hpnn, float *dst)
{
    float scale = ow <= 1 ? 0.0f : ac ? (float)(iw - 1) / (float)(ow - 1) : (float)iw / (float)ow;
    if (!linear && hpnn)
        scale = (float)iw / (float)ow;
    for (int o = 0; o < ow; o++) {
        float fx = hp ? fmaxf(0.0f, scale * ((float)o + 0.5f) - 0.5f) : scale * (float)o;
        if (!linear) {
            if (hpnn)
                fx = scale * ((float)o + 0.5f);
            int ix = (int)fx < iw - 1 ? (int)fx : iw - 1;
            dst[o] = src[ix];
            continue;
        }
        int x1 = (int)fx, x2 = x1 + 1 < iw - 1 ? x1 + 1 : iw - 1;
        float l1 = fx - (float)x1;
        dst[o] = (1 - l1) * src[x1] + l1 * src[x2];
    }
}

static void interp_case(const char *mode, bool ac, bool hp, bool hpnn, int ow)
{
    static const float v[5] = { 1, -2, 4, 0.5f, 3 };
    char body[1024];
    snprintf(body, sizeof body,
             VAR("x", "dim: 1 dim: 1 dim: 5") "  variable { name: \"y\" type: \"Buffer\" shape: { dim: 1 dim: 1 dim: %d } }\n"
             "  function { name: \"f\" type: \"Interpolate\" input: \"x\" output: \"y\" interpolate_param { "
             "output_size: %d mode: \"%s\" align_corners: %s half_pixel: %s half_pixel_for_nn: %s } }\n",
             ow, ow, mode, ac ? "true" : "false", hp ? "true" : "false", hpnn ? "true" : "false");
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 3, DIMS(1, 1, 5), v), *y = NULL;
    run_net(body, "y", NULL, x, &y, 1);
    float want[16];
    interp_ref(v, 5, ow, strcmp(mode, "linear") == 0, ac, hp, hpnn, want);
    rt_expect_f32(y, 3, DIMS(1, 1, ow), want, 1e-6);
    gir_tensor_unref(x);
    gir_tensor_unref(y);
}

static void test_interpolate(void **state)
{
    (void)state;
    for (int ow = 3; ow <= 11; ow += 4) {
        interp_case("nearest", false, false, false, ow);
        interp_case("nearest", true, false, false, ow);
        interp_case("nearest", false, true, false, ow);
        interp_case("nearest", false, false, true, ow);
        interp_case("linear", true, false, false, ow);
        interp_case("linear", false, false, false, ow);
        interp_case("linear", false, true, false, ow);
    }
}

/* Generators known at read time, OneHot, BatchMatmul with transposes and
 * the weight reparameterisations */
static void test_more_functions(void **state)
{
    (void)state;
    static const float v[6] = { 2, 0, 1, 0, 2, 2 };
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 2, DIMS(6, 1), v), *y = NULL;
    /* OneHot of class indices */
    run_net(VAR("x", "dim: 6 dim: 1") VAR("y", "dim: 6 dim: 3")
                FN("f", "OneHot", "input: \"x\"", "output: \"y\"", "one_hot_param { shape { dim: 3 } }"),
            "y", NULL, x, &y, 1);
    rt_expect_f32(y, 2, DIMS(6, 3), F32S(0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
    /* Arange and Constant added to x */
    x = rt_tensor_new(GIR_DT_F32, 1, DIMS(6), v);
    run_net(VAR("x", "dim: 6") VAR("a", "dim: 6") VAR("c", "dim: 6") VAR("t", "dim: 6") VAR("y", "dim: 6")
                FN("ar", "Arange", "", "output: \"a\"", "arange_param { start: -1 stop: 2 step: 0.5 }")
                    FN("co", "Constant", "", "output: \"c\"", "constant_param { val: 0.25 shape { dim: 6 } }")
                        FN("s1", "Add2", "input: \"x\" input: \"a\"", "output: \"t\"", "")
                            FN("s2", "Add2", "input: \"t\" input: \"c\"", "output: \"y\"", ""),
            "y", NULL, x, &y, 1);
    float want[6];
    for (int i = 0; i < 6; i++)
        want[i] = v[i] + (-1.0f + 0.5f * (float)i) + 0.25f;
    rt_expect_f32(y, 1, DIMS(6), want, 0);
    gir_tensor_unref(y);
    gir_tensor_unref(x);

    /* BatchMatmul(a^T, b^T) */
    static const float a[12] = { 1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 0.5f, -2 };
    x = rt_tensor_new(GIR_DT_F32, 3, DIMS(2, 3, 2), a);
    run_net(VAR("x", "dim: 2 dim: 3 dim: 2") VAR("y", "dim: 2 dim: 2 dim: 2")
                FN("f", "BatchMatmul", "input: \"x\" input: \"x\"", "output: \"y\"",
                   "batch_matmul_param { transpose_a: true transpose_b: false }"),
            "y", NULL, x, &y, 1);
    float mm[8];
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                double acc = 0;
                for (int k = 0; k < 3; k++)
                    acc += a[b * 6 + k * 2 + i] * a[b * 6 + k * 2 + j];
                mm[b * 4 + i * 2 + j] = (float)acc;
            }
    rt_expect_f32(y, 3, DIMS(2, 2, 2), mm, 1e-6);
    gir_tensor_unref(y);

    /* WeightStandardization (channel_axis 0) and WeightNormalization (dim
     * 1, g per column) of x seen as a weight */
    run_net(VAR("x", "dim: 2 dim: 3 dim: 2") VAR("y", "dim: 2 dim: 3 dim: 2")
                FN("f", "WeightStandardization", "input: \"x\"", "output: \"y\"",
                   "weight_standardization_param { channel_axis: 0 eps: 1e-05 }"),
            "y", NULL, x, &y, 1);
    static const int ch[12] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1 };
    float ws[12];
    normalize_ref(a, 12, ch, NULL, NULL, ch, 1e-5f, ws);
    rt_expect_f32(y, 3, DIMS(2, 3, 2), ws, 2e-5);
    gir_tensor_unref(y);
    run_net(VAR("x", "dim: 2 dim: 3 dim: 2") PVAR("g", "dim: 3") VAR("y", "dim: 2 dim: 3 dim: 2")
                FN("f", "WeightNormalization", "input: \"x\" input: \"g\"", "output: \"y\"",
                   "weight_normalization_param { dim: 1 eps: 1e-12 }"),
            "y", "parameter { variable_name: \"g\" shape: { dim: 3 } data: 2 data: -1 data: 0.5 }\n", x, &y, 1);
    static const float gv[3] = { 2, -1, 0.5f };
    float wn[12];
    for (int j = 0; j < 3; j++) {
        double sq = 0;
        for (int b = 0; b < 2; b++)
            for (int k = 0; k < 2; k++)
                sq += a[b * 6 + j * 2 + k] * a[b * 6 + j * 2 + k];
        for (int b = 0; b < 2; b++)
            for (int k = 0; k < 2; k++)
                wn[b * 6 + j * 2 + k] = (float)(gv[j] * a[b * 6 + j * 2 + k] / sqrt(sq + 1e-12));
    }
    rt_expect_f32(y, 3, DIMS(2, 3, 2), wn, 1e-6);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
}

static double tan_(double x) { return tan(x); }
static double sinh_(double x) { return sinh(x); }
static double cosh_(double x) { return cosh(x); }
static double sinc(double x) { return x == 0 ? 1 : sin(x) / x; }
static double bsig(double x) { return x > 0 ? 1 : 0; }
static double btanh(double x) { return x > 0 ? 1 : -1; }

/* y = f(x) on special values too */
static void special_case(const char *fn, const char *param, const float *in, const float *want)
{
    char body[1024];
    snprintf(body, sizeof body,
             VAR("x", "dim: 6") VAR("y", "dim: 6") "  function { name: \"f\" type: \"%s\" input: \"x\" output: "
                                                 "\"y\" %s }\n",
             fn, param);
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 1, DIMS(6), in), *y = NULL;
    run_net(body, "y", NULL, x, &y, 1);
    rt_expect_f32(y, 1, DIMS(6), want, 0);
    gir_tensor_unref(x);
    gir_tensor_unref(y);
}

static void test_math_and_special_values(void **state)
{
    (void)state;
    elementwise_case("Tan", tan_);
    elementwise_case("Sinh", sinh_);
    elementwise_case("Cosh", cosh_);
    elementwise_case("Sinc", sinc);
    elementwise_case("BinarySigmoid", bsig);
    elementwise_case("BinaryTanh", btanh);
    static const float halves[6] = { -2.5f, -0.5f, 0.49999997f, 0.5f, 1.5f, 2.5f };
    special_case("Round", "round_param { }", halves, F32S(-3, -1, 0, 1, 2, 3));
    static const float sp[6] = { NAN, INFINITY, -INFINITY, 0.0f, -1.5f, 2.0f };
    special_case("IsNaN", "", sp, F32S(1, 0, 0, 0, 0, 0));
    special_case("IsInf", "", sp, F32S(0, 1, 1, 0, 0, 0));
    special_case("ResetNaN", "reset_nan_param { val: 7 }", sp, F32S(7, INFINITY, -INFINITY, 0, -1.5f, 2));
    special_case("ResetInf", "reset_inf_param { val: -3 }", sp, F32S(NAN, -3, -3, 0, -1.5f, 2));
    static const float fin[6] = { 0.0f, -1.5f, 2.0f, 4.0f, -7.0f, 1e30f };
    special_case("Unlink", "", fin, fin);
    special_case("ClipGradByNorm", "clip_grad_by_norm_param { clip_norm: 2 axes: 0 }", fin, fin);
    /* MulN of three inputs; ClipGradByValue is x on the forward pass */
    gir_tensor *mx = rt_tensor_new(GIR_DT_F32, 1, DIMS(6), fin), *my = NULL;
    run_net(VAR("x", "dim: 6") VAR("y", "dim: 6")
                FN("f", "MulN", "input: \"x\" input: \"x\" input: \"x\"", "output: \"y\"", ""),
            "y", NULL, mx, &my, 1);
    float cube[6];
    for (int i = 0; i < 6; i++)
        cube[i] = fin[i] * fin[i] * fin[i];
    rt_expect_f32(my, 1, DIMS(6), cube, 0);
    gir_tensor_unref(my);
    run_net(VAR("x", "dim: 6") VAR("y", "dim: 6")
                FN("f", "ClipGradByValue", "input: \"x\" input: \"x\" input: \"x\"", "output: \"y\"", ""),
            "y", NULL, mx, &my, 1);
    rt_expect_f32(my, 1, DIMS(6), fin, 0);
    gir_tensor_unref(my);
    gir_tensor_unref(mx);
    /* Flip of both axes */
    static const float grid[6] = { 1, 2, 3, 4, 5, 6 };
    gir_tensor *gx = rt_tensor_new(GIR_DT_F32, 2, DIMS(2, 3), grid), *gy = NULL;
    run_net(VAR("x", "dim: 2 dim: 3") VAR("y", "dim: 2 dim: 3")
                FN("f", "Flip", "input: \"x\"", "output: \"y\"", "flip_param { axes: 0 axes: -1 }"),
            "y", NULL, gx, &gy, 1);
    rt_expect_f32(gy, 2, DIMS(2, 3), F32S(6, 5, 4, 3, 2, 1), 0);
    gir_tensor_unref(gy);
    gir_tensor_unref(gx);
    /* Mod2: numpy's sign (the divisor's), or C fmod's (the dividend's) */
    static const float num[6] = { 7, -7, 7, -7, 5.5f, -5.5f };
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 1, DIMS(6), num), *y = NULL;
    const char *div = "parameter { variable_name: \"d\" shape: { dim: 6 } data: 3 data: 3 data: -3 data: -3 "
                      "data: 2 data: 2 }\n";
    run_net(VAR("x", "dim: 6") PVAR("d", "dim: 6") VAR("y", "dim: 6")
                FN("f", "Mod2", "input: \"x\" input: \"d\"", "output: \"y\"", "mod2_param { fmod: false }"),
            "y", div, x, &y, 1);
    rt_expect_f32(y, 1, DIMS(6), F32S(1, 2, -2, -1, 1.5f, 0.5f), 0);
    gir_tensor_unref(y);
    run_net(VAR("x", "dim: 6") PVAR("d", "dim: 6") VAR("y", "dim: 6")
                FN("f", "Mod2", "input: \"x\" input: \"d\"", "output: \"y\"", "mod2_param { fmod: true }"),
            "y", div, x, &y, 1);
    rt_expect_f32(y, 1, DIMS(6), F32S(1, -1, 1, -1, 1.5f, -1.5f), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
}

/* nnabla's ONNX exporter's asymmetric max pooling: Pad with -inf, then
 * MaxPooling; -inf is read, run and written (nnabla and ONNX). */
static void test_pad_minus_inf(void **state)
{
    (void)state;
    static const float v[8] = { -5, -4, -3, -2, -9, -8, -7, -6 };
    gir_tensor *x = rt_tensor_new(GIR_DT_F32, 4, DIMS(1, 1, 2, 4), v), *y = NULL;
    run_net(VAR("x", "dim: 1 dim: 1 dim: 2 dim: 4") VAR("p", "dim: 1 dim: 1 dim: 3 dim: 5")
                VAR("y", "dim: 1 dim: 1 dim: 1 dim: 2")
                FN("pad", "Pad", "input: \"x\"", "output: \"p\"",
                   "pad_param { pad_width: 0 pad_width: 1 pad_width: 0 pad_width: 1 mode: \"constant\" "
                   "constant_value: -inf }")
                    FN("pool", "MaxPooling", "input: \"p\"", "output: \"y\"",
                       "max_pooling_param { kernel { dim: 2 dim: 2 } stride { dim: 2 dim: 2 } ignore_border: true "
                       "pad { dim: 0 dim: 0 } }"),
            "y", NULL, x, &y, 1);
    rt_expect_f32(y, 4, DIMS(1, 1, 1, 2), F32S(-4, -2), 0);
    gir_tensor_unref(y);
    gir_tensor_unref(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_parameterised_function),
        cmocka_unit_test(test_newer_schema),
        cmocka_unit_test(test_elementwise_functions),
        cmocka_unit_test(test_concatenated_activations),
        cmocka_unit_test(test_max_min_index),
        cmocka_unit_test(test_prelu_per_channel),
        cmocka_unit_test(test_depthwise),
        cmocka_unit_test(test_normalizations),
        cmocka_unit_test(test_interpolate),
        cmocka_unit_test(test_more_functions),
        cmocka_unit_test(test_math_and_special_values),
        cmocka_unit_test(test_pad_minus_inf),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
