/* Protobuf text format (lib/io/pbtext): both dialects of nnabla files, exact
 * Python-style printing, every field kind of a generic schema, and errors
 * with line:column. */
#include "testutil.h"

#include "io/pbtext.h"
#include "io/zip.h"
#include "proto/nnabla.pb-c.h"
#include "tests/pbtext_test.pb-c.h"
#include "tests/pbtext_test2.pb-c.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads one member of a zip under the shared fixtures. */
static char *zip_member(const char *rel, const char *member, size_t *len)
{
    char *path = tu_shared(rel);
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z = NULL;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    ptrdiff_t i = gir_zip_find(z, member);
    assert_true(i >= 0);
    void *data = NULL;
    TU_OK(gir_zip_read(z, (size_t)i, &data, len, &err), &err);
    gir_zip_close(z);
    free(path);
    return data;
}

static char *print_msg(const ProtobufCMessage *m)
{
    gir_buf b = GIR_BUF_INIT;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_pbtext_print(m, &b, &err), &err);
    char *s = gir_buf_take(&b);
    return s ? s : calloc(1, 1);
}

static ProtobufCMessage *parse_ok(const ProtobufCMessageDescriptor *d, const char *text)
{
    gir_error err = GIR_ERROR_INIT;
    ProtobufCMessage *m = NULL;
    TU_OK(gir_pbtext_parse(d, text, strlen(text), &m, &err), &err);
    return m;
}

/* Parses text that must fail with code, location and message fragment. */
static void parse_fails(const ProtobufCMessageDescriptor *d, const char *text, gir_status code, const char *loc,
                        const char *what)
{
    gir_error err = GIR_ERROR_INIT;
    ProtobufCMessage *m = (ProtobufCMessage *)1;
    gir_status st = gir_pbtext_parse(d, text, strlen(text), &m, &err);
    if (st != code || !err.location || strcmp(err.location, loc) != 0 || !err.message ||
        !strstr(err.message, what)) {
        char *s = gir_error_format(&err);
        print_error("text <<%s>>: got status %d, error \"%s\"; want %d at %s with \"%s\"\n", text, st,
                    s ? s : "(null)", code, loc, what);
        free(s);
        fail();
    }
    assert_null(m);
    gir_error_clear(&err);
}

/* ---- real files --------------------------------------------------------- */

/* A network.nntxt written by nnabla, read and printed again, is the same
 * text byte for byte. */
static void roundtrip_member(const char *rel, const char *member)
{
    size_t len;
    char *text = zip_member(rel, member, &len);
    ProtobufCMessage *m = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_pbtext_parse(&nnabla__nnabla_proto_buf__descriptor, text, len, &m, &err), &err);
    char *out = print_msg(m);
    assert_int_equal(strlen(out), len);
    assert_memory_equal(out, text, len);
    free(out);
    gir_pb_free(m);
    free(text);
}

static void test_lenet_byte_for_byte(void **state)
{
    (void)state;
    roundtrip_member("realworld/nnp/lenet_010000.nnp", "network.nntxt");
    /* and the structure is what the text says */
    size_t len;
    char *text = zip_member("realworld/nnp/lenet_010000.nnp", "network.nntxt", &len);
    Nnabla__NNablaProtoBuf *pb =
        (Nnabla__NNablaProtoBuf *)parse_ok(&nnabla__nnabla_proto_buf__descriptor, text);
    assert_int_equal(pb->n_network, 1);
    assert_int_equal(pb->n_executor, 1);
    Nnabla__Network *net = pb->network[0];
    assert_string_equal(net->name, "runtime");
    assert_int_equal(net->batch_size, 128);
    assert_int_equal(net->n_variable, 19);
    assert_int_equal(net->n_function, 10);
    assert_int_equal(net->variable[0]->shape->n_dim, 4);
    assert_int_equal(net->variable[0]->shape->dim[0], -1);
    Nnabla__Function *ms = net->function[0];
    assert_int_equal(ms->parameter_case, NNABLA__FUNCTION__PARAMETER_MUL_SCALAR_PARAM);
    assert_true(ms->mul_scalar_param->val == 0.00392156862745098);
    Nnabla__Function *mp = net->function[2];
    assert_string_equal(mp->type, "MaxPooling");
    assert_true(mp->max_pooling_param->ignore_border);
    assert_int_equal(mp->max_pooling_param->kernel->n_dim, 2);
    assert_string_equal(pb->executor[0]->output_variable[0]->variable_name, "y");
    gir_pb_free(&pb->base);
    free(text);
}

static void test_model_simple_byte_for_byte(void **state)
{
    (void)state;
    /* graph_def output: "relu_param {" / "}" for an all-default message */
    roundtrip_member("realworld/nnp/model_simple.nnp", "network.nntxt");
}

/* Neural Network Console's prototxt: inline messages, True/False, ints in
 * float fields, field order not by number, an apostrophe in a string. */
static void test_nnc_prototxt(void **state)
{
    (void)state;
    size_t len;
    char *text = zip_member("realworld/nnp/nnc_result.nnp", "network.prototxt", &len);
    ProtobufCMessage *m = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_pbtext_parse(&nnabla__nnabla_proto_buf__descriptor, text, len, &m, &err), &err);
    Nnabla__NNablaProtoBuf *pb = (Nnabla__NNablaProtoBuf *)m;
    assert_int_equal(pb->n_network, 3);
    assert_string_equal(pb->network[2]->name, "MainRuntime");
    assert_int_equal(pb->network[0]->variable[0]->shape->dim[0], -1);
    assert_int_equal(pb->network[0]->variable[0]->shape->dim[3], 28);
    assert_true(pb->dataset[0]->create_cache_explicitly);
    assert_false(pb->dataset[0]->overwrite_cache);
    assert_true(pb->optimizer[0]->solver->lr_decay == 1.0f);
    assert_int_equal(pb->optimizer[0]->solver->parameter_case, NNABLA__SOLVER__PARAMETER_ADAM_PARAM);
    assert_true(pb->optimizer[0]->solver->adam_param->eps == 1e-08f);
    assert_string_equal(pb->executor[0]->output_variable[0]->data_name, "y'");
    assert_string_equal(pb->global_config->default_context->backend, "cpu|cuda");
    /* printed the Python way, then read again: the same message */
    char *out = print_msg(m);
    assert_non_null(strstr(out, "    shape {\n      dim: -1\n      dim: 1\n      dim: 28\n"));
    assert_non_null(strstr(out, "data_name: \"y\\'\"\n"));
    assert_non_null(strstr(out, "      multiplier: 1.0\n"));
    ProtobufCMessage *m2 = parse_ok(&nnabla__nnabla_proto_buf__descriptor, out);
    char *out2 = print_msg(m2);
    assert_string_equal(out, out2);
    /* the same bytes on the wire too */
    size_t n1 = protobuf_c_message_get_packed_size(m), n2 = protobuf_c_message_get_packed_size(m2);
    assert_int_equal(n1, n2);
    uint8_t *w1 = malloc(n1), *w2 = malloc(n2);
    protobuf_c_message_pack(m, w1);
    protobuf_c_message_pack(m2, w2);
    assert_memory_equal(w1, w2, n1);
    free(w1);
    free(w2);
    free(out);
    free(out2);
    gir_pb_free(m);
    gir_pb_free(m2);
    free(text);
}

/* Several nntxt files merge into one message: repeated fields append,
 * singular messages merge. */
static void test_merge_concatenates(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    ProtobufCMessage *m = gir_pb_new(&nnabla__nnabla_proto_buf__descriptor);
    const char *a = "network { name: \"a\" }\nglobal_config { default_context { array_class: \"X\" } }\n";
    const char *b = "network { name: \"b\" }\nglobal_config { default_context { device_id: \"0\" } }\n"
                    "executor { network_name: \"b\" }\n";
    TU_OK(gir_pbtext_merge(a, strlen(a), m, &err), &err);
    TU_OK(gir_pbtext_merge(b, strlen(b), m, &err), &err);
    char *out = print_msg(m);
    assert_string_equal(out, "global_config {\n"
                             "  default_context {\n"
                             "    array_class: \"X\"\n"
                             "    device_id: \"0\"\n"
                             "  }\n"
                             "}\n"
                             "network {\n"
                             "  name: \"a\"\n"
                             "}\n"
                             "network {\n"
                             "  name: \"b\"\n"
                             "}\n"
                             "executor {\n"
                             "  network_name: \"b\"\n"
                             "}\n");
    free(out);
    gir_pb_free(m);
}

/* ---- the dialects ------------------------------------------------------- */

static void test_dialects(void **state)
{
    (void)state;
    const char *text =
        "# a comment line\n"
        "network {\n"
        "  batch_size: 0x10  # hex\n"
        "  name: 'n' \"et\"\n"
        "  variable: { name: \"C:\\\\tmp\\\\x.csv\" shape: { dim:-1 dim: 3 }, type: \"Buffer\"; }\n"
        "  variable < name: \"v2\" shape { dim: [1, 2, 3] } >\n"
        "  variable [ { name: \"v3\" }, { name: \"v4\" } ]\n"
        "  variable []\n"
        "  function {\n"
        "    batch_normalization_param { eps: 1 decay_rate: 9e-1f batch_stat: True no_scale: t axes: [] }\n"
        "    type: \"BatchNormalization\"\n"
        "    input: [\"x\", 'y']\n"
        "  }\n"
        "  function { relu_param: { inplace: False } }\n"
        "  function { mul_scalar_param { val: -inf } }\n"
        "  function { add_scalar_param { val: 012 } }\n"
        "}\n";
    Nnabla__NNablaProtoBuf *pb =
        (Nnabla__NNablaProtoBuf *)parse_ok(&nnabla__nnabla_proto_buf__descriptor, text);
    Nnabla__Network *net = pb->network[0];
    assert_string_equal(net->name, "net");
    assert_int_equal(net->batch_size, 16);
    assert_int_equal(net->n_variable, 4);
    assert_string_equal(net->variable[0]->name, "C:\\tmp\\x.csv");
    assert_string_equal(net->variable[0]->type, "Buffer");
    assert_int_equal(net->variable[0]->shape->n_dim, 2);
    assert_int_equal(net->variable[0]->shape->dim[0], -1);
    assert_int_equal(net->variable[1]->shape->n_dim, 3);
    assert_int_equal(net->variable[1]->shape->dim[2], 3);
    assert_string_equal(net->variable[3]->name, "v4");
    Nnabla__BatchNormalizationParameter *bn = net->function[0]->batch_normalization_param;
    assert_true(bn->eps == 1.0f);
    assert_true(bn->decay_rate == 0.9f);
    assert_true(bn->batch_stat);
    assert_true(bn->no_scale);
    assert_int_equal(bn->n_axes, 0);
    assert_int_equal(net->function[0]->n_input, 2);
    assert_string_equal(net->function[0]->input[1], "y");
    assert_int_equal(net->function[1]->parameter_case, NNABLA__FUNCTION__PARAMETER_RELU_PARAM);
    assert_false(net->function[1]->relu_param->inplace);
    assert_true(isinf(net->function[2]->mul_scalar_param->val) && net->function[2]->mul_scalar_param->val < 0);
    assert_true(net->function[3]->add_scalar_param->val == 12.0); /* an integer in a double field */

    char *out = print_msg(&pb->base);
    assert_string_equal(out, "network {\n"
                             "  name: \"net\"\n"
                             "  batch_size: 16\n"
                             "  variable {\n"
                             "    name: \"C:\\\\tmp\\\\x.csv\"\n"
                             "    type: \"Buffer\"\n"
                             "    shape {\n"
                             "      dim: -1\n"
                             "      dim: 3\n"
                             "    }\n"
                             "  }\n"
                             "  variable {\n"
                             "    name: \"v2\"\n"
                             "    shape {\n"
                             "      dim: 1\n"
                             "      dim: 2\n"
                             "      dim: 3\n"
                             "    }\n"
                             "  }\n"
                             "  variable {\n"
                             "    name: \"v3\"\n"
                             "  }\n"
                             "  variable {\n"
                             "    name: \"v4\"\n"
                             "  }\n"
                             "  function {\n"
                             "    type: \"BatchNormalization\"\n"
                             "    input: \"x\"\n"
                             "    input: \"y\"\n"
                             "    batch_normalization_param {\n"
                             "      decay_rate: 0.9\n"
                             "      eps: 1.0\n"
                             "      batch_stat: true\n"
                             "      no_scale: true\n"
                             "    }\n"
                             "  }\n"
                             "  function {\n"
                             "    relu_param {\n"
                             "    }\n"
                             "  }\n"
                             "  function {\n"
                             "    mul_scalar_param {\n"
                             "      val: -inf\n"
                             "    }\n"
                             "  }\n"
                             "  function {\n"
                             "    add_scalar_param {\n"
                             "      val: 12.0\n"
                             "    }\n"
                             "  }\n"
                             "}\n");
    free(out);
    gir_pb_free(&pb->base);
}

/* ---- numbers as Python prints them -------------------------------------- */

static void check_float(float v, const char *want)
{
    char out[48];
    gir_pbtext_fmt_float(out, v);
    assert_string_equal(out, want);
}

static void check_double(double v, const char *want)
{
    char out[48];
    gir_pbtext_fmt_double(out, v);
    assert_string_equal(out, want);
}

static void test_number_text(void **state)
{
    (void)state;
    check_float(1.0f, "1.0");
    check_float(0.0f, "0.0");
    check_float(-0.0f, "-0.0");
    check_float(0.1f, "0.1");
    check_float(1e-05f, "1e-05");
    check_float(0.9f, "0.9");
    check_float(0.001f, "0.001");
    check_float(3.3333333e-05f, "3.3333334e-05");
    check_float(1.0f / 3.0f, "0.33333334");
    check_float(16777216.0f, "16777216.0");
    check_float(123456789.0f, "123456790.0");
    check_float(1e20f, "1e+20");
    check_float(3.4028235e38f, "3.4028235e+38");
    check_float(1e-45f, "1.4013e-45");
    check_float(INFINITY, "inf");
    check_float(-INFINITY, "-inf");
    check_float(NAN, "nan");
    check_double(0.00392156862745098, "0.00392156862745098");
    check_double(1e-05, "1e-05");
    check_double(1.0, "1.0");
    check_double(2.0, "2.0");
    check_double(0.1, "0.1");
    check_double(3.33333324912625e-05, "3.33333324912625e-05");
    check_double(1e16, "1e+16");
    check_double(1234567890123456.0, "1234567890123456.0");
    check_double(0.0001, "0.0001");
    check_double(1.100000023841858, "1.100000023841858");
}

/* ---- a generic schema: every field kind ------------------------------- */

static void test_every_field_kind(void **state)
{
    (void)state;
    const char *text = "i32: -2147483648 i64: -9223372036854775808 u32: 4294967295 u64: 18446744073709551615\n"
                       "s32: -5 s64: 077 f32: 7 f64: 8 sf32: -9 sf64: -10\n"
                       "fl: 2.5 db: 1e300 b: 1 str: \"caf\\303\\251 \\u00e9\\x41\\'\" by: \"\\000\\377\\n\"\n"
                       "color: BLUE inner { a: 1 children { a: 2 children { s: \"deep\" } } }\n"
                       "ri: 3 ri: -4 rf: [1, inf, nan] rs: \"a\" rs: \"\" rc: [GREEN, 5, 0]\n"
                       "rm { a: 1 } rm {}\n"
                       "smap { key: \"z\" value: 26 } smap { key: \"a\" value: 1 } smap { key: \"m\" }\n"
                       "imap { key: 10 value { a: 1 } } imap { key: -3 }\n"
                       "c_msg { s: \"one\" }\n";
    Pbtest__All *m = (Pbtest__All *)parse_ok(&pbtest__all__descriptor, text);
    assert_int_equal(m->i32, INT32_MIN);
    assert_true(m->i64 == INT64_MIN);
    assert_int_equal(m->u32, UINT32_MAX);
    assert_true(m->u64 == UINT64_MAX);
    assert_int_equal(m->s64, 63);
    assert_true(m->fl == 2.5f);
    assert_true(m->db == 1e300);
    assert_true(m->b);
    assert_string_equal(m->str, "caf\xc3\xa9 \xc3\xa9" "A'");
    assert_int_equal(m->by.len, 3);
    assert_memory_equal(m->by.data, "\0\377\n", 3);
    assert_int_equal(m->color, PBTEST__COLOR__BLUE);
    assert_string_equal(m->inner->children[0]->children[0]->s, "deep");
    assert_int_equal(m->n_rf, 3);
    assert_true(isinf(m->rf[1]) && isnan(m->rf[2]));
    assert_int_equal(m->n_rc, 3);
    assert_int_equal(m->rc[1], PBTEST__COLOR__BLUE);
    assert_int_equal(m->n_smap, 3);
    assert_int_equal(m->choice_case, PBTEST__ALL__CHOICE_C_MSG);
    char *out = print_msg(&m->base);
    assert_string_equal(out, "i32: -2147483648\n"
                             "i64: -9223372036854775808\n"
                             "u32: 4294967295\n"
                             "u64: 18446744073709551615\n"
                             "s32: -5\n"
                             "s64: 63\n"
                             "f32: 7\n"
                             "f64: 8\n"
                             "sf32: -9\n"
                             "sf64: -10\n"
                             "fl: 2.5\n"
                             "db: 1e+300\n"
                             "b: true\n"
                             "str: \"caf\\303\\251 \\303\\251A\\'\"\n"
                             "by: \"\\000\\377\\n\"\n"
                             "color: BLUE\n"
                             "inner {\n"
                             "  a: 1\n"
                             "  children {\n"
                             "    a: 2\n"
                             "    children {\n"
                             "      s: \"deep\"\n"
                             "    }\n"
                             "  }\n"
                             "}\n"
                             "ri: 3\n"
                             "ri: -4\n"
                             "rf: 1.0\n"
                             "rf: inf\n"
                             "rf: nan\n"
                             "rs: \"a\"\n"
                             "rs: \"\"\n"
                             "rc: GREEN\n"
                             "rc: BLUE\n"
                             "rc: RED\n"
                             "rm {\n"
                             "  a: 1\n"
                             "}\n"
                             "rm {\n"
                             "}\n"
                             "smap {\n"
                             "  key: \"a\"\n"
                             "  value: 1\n"
                             "}\n"
                             "smap {\n"
                             "  key: \"m\"\n"
                             "  value: 0\n"
                             "}\n"
                             "smap {\n"
                             "  key: \"z\"\n"
                             "  value: 26\n"
                             "}\n"
                             "imap {\n"
                             "  key: -3\n"
                             "  value {\n"
                             "  }\n"
                             "}\n"
                             "imap {\n"
                             "  key: 10\n"
                             "  value {\n"
                             "    a: 1\n"
                             "  }\n"
                             "}\n"
                             "c_msg {\n"
                             "  s: \"one\"\n"
                             "}\n");
    /* read back: the same text again */
    Pbtest__All *m2 = (Pbtest__All *)parse_ok(&pbtest__all__descriptor, out);
    char *out2 = print_msg(&m2->base);
    assert_string_equal(out, out2);
    free(out);
    free(out2);
    gir_pb_free(&m->base);
    gir_pb_free(&m2->base);

    /* a oneof member set to zero is printed; unset proto3 scalars are not */
    m = (Pbtest__All *)parse_ok(&pbtest__all__descriptor, "c_int: 0 i32: 0 str: \"\"");
    out = print_msg(&m->base);
    assert_string_equal(out, "c_int: 0\n");
    free(out);
    gir_pb_free(&m->base);
}

static void test_proto2_labels(void **state)
{
    (void)state;
    Pbtest2__Legacy *m = (Pbtest2__Legacy *)parse_ok(&pbtest2__legacy__descriptor, "name: \"n\"");
    assert_false(m->has_count);
    assert_int_equal(m->count, 7);
    char *out = print_msg(&m->base);
    assert_string_equal(out, "name: \"n\"\n");
    free(out);
    gir_pb_free(&m->base);
    m = (Pbtest2__Legacy *)parse_ok(&pbtest2__legacy__descriptor,
                                    "label: \"x\" count: 0 flag: false name: \"n\" label: \"y\" values: [1,2]");
    assert_true(m->has_count);
    assert_true(m->has_flag);
    out = print_msg(&m->base);
    assert_string_equal(out, "name: \"n\"\ncount: 0\nlabel: \"y\"\nflag: false\nvalues: 1\nvalues: 2\n");
    free(out);
    gir_pb_free(&m->base);
}

/* ---- fields of a newer schema -------------------------------------------- */

typedef struct seen {
    char names[8][32];
    const char *types[8];
    size_t n;
} seen;

static void note_unknown(void *ctx, const ProtobufCMessage *m, const char *text, size_t len)
{
    seen *s = ctx;
    if (s->n < 8) {
        gir_pbtext_field_name(text, len, s->names[s->n], sizeof s->names[s->n]);
        s->types[s->n++] = m->descriptor->name;
    }
}

/* Unknown fields of every shape are skipped, kept as text (whitespace and
 * comments outside strings collapsed) and printed back after the known
 * fields; printing again gives the same text. */
static void test_unknown_fields_kept(void **state)
{
    (void)state;
    const char *text = "network {\n"
                       "  name: \"n\"\n"
                       "  future_scalar: 3\n"
                       "  future_string: \"a  b\" 'c'\n"
                       "  function {\n"
                       "    name: \"f\"\n"
                       "    type: \"NewFunc\"\n"
                       "    new_func_param {\n"
                       "      k: [1, 2]  # a comment\n"
                       "      inner: { x: -inf }\n"
                       "    }\n"
                       "    output: \"y\"\n"
                       "  }\n"
                       "  future_list: [ {a: 1}, {a: 2} ];\n"
                       "  batch_size: 4\n"
                       "}\n"
                       "future_top < t: 1 >\n";
    ProtobufCMessage *m = parse_ok(&nnabla__nnabla_proto_buf__descriptor, text);
    Nnabla__NNablaProtoBuf *pb = (Nnabla__NNablaProtoBuf *)m;
    assert_int_equal(pb->n_network, 1);
    assert_int_equal(pb->network[0]->batch_size, 4);
    assert_int_equal(pb->network[0]->n_function, 1);
    assert_string_equal(pb->network[0]->function[0]->output[0], "y");
    assert_int_equal(gir_pbtext_unknown_count(m), 5);
    seen sn = { 0 };
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_pbtext_each_unknown(m, note_unknown, &sn, &err), &err);
    assert_int_equal(sn.n, 5);
    assert_string_equal(sn.names[0], "future_top");
    assert_string_equal(sn.types[0], "nnabla.NNablaProtoBuf");
    assert_string_equal(sn.names[1], "future_scalar");
    assert_string_equal(sn.names[3], "future_list");
    assert_string_equal(sn.names[4], "new_func_param");
    assert_string_equal(sn.types[4], "nnabla.Function");
    char *out = print_msg(m);
    const char *want = "network {\n"
                       "  name: \"n\"\n"
                       "  batch_size: 4\n"
                       "  function {\n"
                       "    name: \"f\"\n"
                       "    type: \"NewFunc\"\n"
                       "    output: \"y\"\n"
                       "    new_func_param { k: [1, 2] inner: { x: -inf } }\n"
                       "  }\n"
                       "  future_scalar: 3\n"
                       "  future_string: \"a  b\" 'c'\n"
                       "  future_list: [ {a: 1}, {a: 2} ]\n"
                       "}\n"
                       "future_top < t: 1 >\n";
    assert_string_equal(out, want);
    ProtobufCMessage *m2 = parse_ok(&nnabla__nnabla_proto_buf__descriptor, out);
    char *out2 = print_msg(m2);
    assert_string_equal(out2, want);
    free(out);
    free(out2);
    gir_pb_free(m2);
    gir_pb_free(m);
}

/* ---- errors ------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *nn = &nnabla__nnabla_proto_buf__descriptor;
    parse_fails(nn, "network {\n  nmae \"b\"\n}\n", GIR_E_SYNTAX, "line 2:8",
                "expected a value for field \"nmae\", found \"b\"");
    parse_fails(nn, "network {\n  later { a: [1, {b: 2}\n", GIR_E_SYNTAX, "line 3:1",
                "unterminated value of field \"later\" before the end of the input");
    parse_fails(nn, "network {\n  name \"a\"\n}\n", GIR_E_SYNTAX, "line 2:8",
                "expected \":\" after field \"name\", found \"a\"");
    parse_fails(nn, "network {\n  name: \"a\"\n", GIR_E_SYNTAX, "line 3:1",
                "expected \"}\" before the end of the input");
    parse_fails(nn, "network { name: \"a }", GIR_E_SYNTAX, "line 1:17", "unterminated string");
    parse_fails(nn, "network { batch_size: 1.5 }", GIR_E_SCHEMA, "line 1:23",
                "expected an integer for int64 field \"batch_size\", found \"1.5\"");
    parse_fails(nn, "network { batch_size: 9223372036854775808 }", GIR_E_SCHEMA, "line 1:23",
                "out of range for int64 field \"batch_size\"");
    parse_fails(nn, "network { function { relu_param { inplace: yes } } }", GIR_E_SCHEMA, "line 1:44",
                "expected true or false for bool field \"inplace\", found \"yes\"");
    parse_fails(nn, "network { function { relu_param { } affine_param { } } }", GIR_E_SCHEMA, "line 1:37",
                "field \"affine_param\" cannot be set: field \"relu_param\" of the same oneof is already set");
    parse_fails(nn, "network { name: [\"a\"] }", GIR_E_SCHEMA, "line 1:17",
                "field \"name\" is not repeated and cannot take a list");
    parse_fails(nn, "network { name: \"a\\q\" }", GIR_E_SYNTAX, "line 1:19", "invalid escape sequence \"\\q\"");
    parse_fails(nn, "network { name: \"\\377\" }", GIR_E_SCHEMA, "line 1:17",
                "string for field \"name\" is not valid UTF-8");
    parse_fails(nn, "network { name: \"a\\0b\" }", GIR_E_SCHEMA, "line 1:17",
                "string for field \"name\" contains a NUL byte");
    parse_fails(nn, "network { name: \"a\" } }", GIR_E_SYNTAX, "line 1:23", "expected a field name, found \"}\"");
    parse_fails(nn, "network { variable { shape > } }", GIR_E_SYNTAX, "line 1:28",
                "expected \"{\" after message field \"shape\", found \">\"");
    parse_fails(nn, "network { variable < name: \"a\" } }", GIR_E_SYNTAX, "line 1:32",
                "expected a field name or \">\", found \"}\"");
    parse_fails(nn, "network [ { }, name ]", GIR_E_SYNTAX, "line 1:16",
                "expected \"{\" to start an element of field \"network\", found \"name\"");
    parse_fails(nn, "network { variable { shape { dim: [1 2] } } }", GIR_E_SYNTAX, "line 1:38",
                "expected \",\" or \"]\" in the list of field \"dim\", found \"2\"");
    parse_fails(nn, "network { function { mul_scalar_param { val: abc } } }", GIR_E_SCHEMA, "line 1:46",
                "expected a number for double field \"val\", found \"abc\"");
    parse_fails(nn, "[ext.field]: 1", GIR_E_SCHEMA, "line 1:1", "extension and Any fields");
    parse_fails(nn, "network { name: 3 }", GIR_E_SCHEMA, "line 1:17",
                "expected a quoted string for string field \"name\", found \"3\"");
    parse_fails(&pbtest__all__descriptor, "color: PURPLE", GIR_E_SCHEMA, "line 1:8",
                "enum pbtest.Color has no value named \"PURPLE\"");
    parse_fails(&pbtest__all__descriptor, "u32: -1", GIR_E_SCHEMA, "line 1:6", "out of range for uint32");
    parse_fails(&pbtest__all__descriptor, "i32: 2147483648", GIR_E_SCHEMA, "line 1:6", "out of range for int32");
    parse_fails(&pbtest__all__descriptor, "str: \"\\u12\"", GIR_E_SYNTAX, "line 1:7",
                "invalid escape \"\\u\": expected 4 hex digits");
    parse_fails(&pbtest__all__descriptor, "i32: 08", GIR_E_SCHEMA, "line 1:6", "expected an integer");
    parse_fails(&pbtest__all__descriptor, "c_int: 1\nc_str: \"x\"", GIR_E_SCHEMA, "line 2:1",
                "field \"c_str\" cannot be set: field \"c_int\" of the same oneof is already set");
    parse_fails(&pbtest__all__descriptor, "i32: 1 $", GIR_E_SYNTAX, "line 1:8", "expected a field name, found \"$\"");
    parse_fails(&pbtest__all__descriptor, "str: \"a\0b\"", GIR_E_SYNTAX, "line 1:6", "unterminated string");

    /* nesting deeper than the limit: refused, no deep recursion */
    gir_buf b = GIR_BUF_INIT;
    gir_buf_puts(&b, "inner {");
    for (int i = 0; i < 5000; i++)
        gir_buf_puts(&b, "children {");
    /* the 100th "{" (at column 7 + 99 * 10) is one too many */
    parse_fails(&pbtest__all__descriptor, b.data, GIR_E_LIMIT, "line 1:997",
                "messages are nested deeper than 100 levels");
    gir_buf_free(&b);

    /* an error inside a merge leaves a message that frees cleanly */
    gir_error err = GIR_ERROR_INIT;
    ProtobufCMessage *m = gir_pb_new(nn);
    const char *bad = "network { name: \"a\" variable { name: \"v\" } function { input: \"x\" input: 5 } }";
    TU_FAILS(gir_pbtext_merge(bad, strlen(bad), m, &err), &err, GIR_E_SCHEMA, "line 1:73");
    gir_error_clear(&err);
    gir_pb_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lenet_byte_for_byte),
        cmocka_unit_test(test_model_simple_byte_for_byte),
        cmocka_unit_test(test_nnc_prototxt),
        cmocka_unit_test(test_merge_concatenates),
        cmocka_unit_test(test_dialects),
        cmocka_unit_test(test_number_text),
        cmocka_unit_test(test_every_field_kind),
        cmocka_unit_test(test_proto2_labels),
        cmocka_unit_test(test_unknown_fields_kept),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
