/* lib/io/json: the DOM over yajl and the emitter. */
#include "testutil.h"

#include "io/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gir_json_doc *parse_ok(const char *text, const gir_json_options *o)
{
    gir_json_doc *d = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_json_parse(text, strlen(text), o, &d, &err), &err);
    gir_error_clear(&err);
    return d;
}

static void test_dom(void **state)
{
    (void)state;
    const char *text = "{\n  \"a\": [1, -2, 3.5e2, true, false, null],\n  \"s\": \"x\\ty\\u00e9\\\"\",\n"
                       "  \"o\": {}, \"e\": [],\n  \"big\": 123456789012345678901234567890\n}";
    gir_json_doc *d = parse_ok(text, NULL);
    const gir_json *r = gir_json_root(d);
    assert_int_equal(r->type, GIR_JSON_OBJECT);
    assert_int_equal(r->len, 5);
    /* Keys in file order. */
    assert_string_equal(r->u.members[0].key, "a");
    assert_string_equal(r->u.members[1].key, "s");
    assert_string_equal(r->u.members[4].key, "big");
    const gir_json *a = gir_json_get(r, "a");
    assert_int_equal(a->type, GIR_JSON_ARRAY);
    assert_int_equal(a->len, 6);
    int64_t i;
    double f;
    assert_true(gir_json_get_i64(gir_json_at(a, 0), &i));
    assert_int_equal(i, 1);
    assert_true(gir_json_get_i64(gir_json_at(a, 1), &i));
    assert_int_equal(i, -2);
    uint64_t u;
    assert_false(gir_json_get_u64(gir_json_at(a, 1), &u));
    assert_true(gir_json_get_u64(gir_json_at(a, 0), &u));
    assert_int_equal(u, 1);
    /* 3.5e2 is a number but not an integer literal; raw text is kept. */
    assert_false(gir_json_get_i64(gir_json_at(a, 2), &i));
    assert_true(gir_json_get_double(gir_json_at(a, 2), &f));
    assert_true(f == 350.0);
    size_t nl;
    const char *nt = gir_json_number_text(gir_json_at(a, 2), &nl);
    assert_int_equal(nl, 5);
    assert_memory_equal(nt, "3.5e2", 5);
    assert_true(gir_json_at(a, 3)->type == GIR_JSON_BOOL && gir_json_at(a, 3)->b);
    assert_true(gir_json_at(a, 4)->type == GIR_JSON_BOOL && !gir_json_at(a, 4)->b);
    assert_int_equal(gir_json_at(a, 5)->type, GIR_JSON_NULL);
    assert_null(gir_json_at(a, 6));
    const gir_json *s = gir_json_get(r, "s");
    assert_string_equal(gir_json_get_cstr(s), "x\ty\xc3\xa9\"");
    assert_int_equal(s->len, 6);
    assert_int_equal(gir_json_get(r, "o")->len, 0);
    assert_int_equal(gir_json_get(r, "e")->type, GIR_JSON_ARRAY);
    assert_null(gir_json_get(r, "missing"));
    /* Out of int64 range: not an integer, but its text survives. */
    const gir_json *big = gir_json_get(r, "big");
    assert_false(gir_json_get_i64(big, &i));
    nt = gir_json_number_text(big, &nl);
    assert_int_equal(nl, 30);
    assert_memory_equal(nt, "123456789012345678901234567890", 30);
    /* Positions: "a"'s array starts at line 2 column 8; the string at 3:8. */
    unsigned line, col;
    gir_json_line_col(d, a->offset, &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 8);
    gir_json_line_col(d, gir_json_at(a, 2)->offset, &line, &col);
    assert_int_equal(col, 16);
    gir_json_line_col(d, s->offset, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 8);
    gir_json_line_col(d, r->u.members[4].key_offset, &line, &col);
    assert_int_equal(line, 5);
    assert_int_equal(col, 3);
    assert_int_equal(gir_json_value_count(d), 12);
    /* Error locations: JSON pointer plus line:column. */
    gir_error err = GIR_ERROR_INIT;
    gir_fail(&err, GIR_E_SCHEMA, "expected a string");
    gir_json_err_at(&err, d, gir_json_at(a, 3), "/a/%d", 3);
    assert_string_equal(err.location, "/a/3 (line 2:23)");
    gir_error_clear(&err);
    char desc[64];
    gir_json_describe(gir_json_at(a, 2), desc, sizeof desc);
    assert_string_equal(desc, "the number 3.5e2");
    gir_json_describe(s, desc, sizeof desc);
    assert_string_equal(desc, "the string \"x\ty\xc3\xa9\"\"");
    gir_json_doc_free(d);
}

static void test_embedded_nul(void **state)
{
    (void)state;
    gir_json_doc *d = parse_ok("[\"a\\u0000b\"]", NULL);
    const gir_json *s = gir_json_at(gir_json_root(d), 0);
    assert_int_equal(s->len, 3);
    assert_null(gir_json_get_cstr(s));
    gir_json_doc_free(d);
}

static void expect_error(const char *text, const gir_json_options *o, gir_status code, const char *msg,
                         const char *loc)
{
    gir_json_doc *d = (gir_json_doc *)1;
    gir_error err = GIR_ERROR_INIT;
    gir_status st = gir_json_parse(text, strlen(text), o, &d, &err);
    TU_FAILS(st, &err, code, msg);
    assert_null(d);
    if (loc)
        assert_string_equal(err.location, loc);
    gir_error_clear(&err);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", NULL, GIR_E_SYNTAX, "empty file, expected a JSON value", "line 1:1");
    expect_error("{\"nodes\": [\n  {\"op\": \"null\"", NULL, GIR_E_SYNTAX,
                 "JSON text ends early (truncated file?): 3 containers still open", "line 2:16");
    expect_error("{\"a\": 1,}", NULL, GIR_E_SYNTAX, "malformed JSON: ", "line 1:9");
    expect_error("[1, 2] x", NULL, GIR_E_SYNTAX, "malformed JSON: ", NULL);
    expect_error("{\"a\": tru}", NULL, GIR_E_SYNTAX, "malformed JSON: ", NULL);
    expect_error("{\"a\": 1,\n \"b\": 2,\n \"a\": 3}", NULL, GIR_E_DUPLICATE,
                 "duplicate key \"a\" in a JSON object", "line 3:2");
    /* Many keys take the sorted path; the later duplicate is reported. */
    gir_buf b = GIR_BUF_INIT;
    gir_buf_putc(&b, '{');
    for (int k = 0; k < 40; k++)
        gir_buf_printf(&b, "\"k%d\": %d, ", k, k);
    gir_buf_puts(&b, "\"k7\": 0}");
    expect_error(b.data, NULL, GIR_E_DUPLICATE, "duplicate key \"k7\"", NULL);
    gir_json_options allow = { .allow_duplicate_keys = true };
    gir_json_doc *d = parse_ok(b.data, &allow);
    int64_t v;
    assert_true(gir_json_get_i64(gir_json_get(gir_json_root(d), "k7"), &v));
    assert_int_equal(v, 7); /* first match */
    gir_json_doc_free(d);
    gir_buf_free(&b);
    gir_json_options shallow = { .max_depth = 3 };
    expect_error("[[[[1]]]]", &shallow, GIR_E_LIMIT, "JSON nesting is deeper than 3 levels", NULL);
    d = parse_ok("[[[1]]]", &shallow);
    gir_json_doc_free(d);
    /* Invalid UTF-8 is refused unless asked otherwise. */
    expect_error("[\"\xff\"]", NULL, GIR_E_SYNTAX, "malformed JSON", NULL);
    gir_json_options raw = { .no_utf8_check = true };
    d = parse_ok("[\"\xff\"]", &raw);
    assert_int_equal(gir_json_at(gir_json_root(d), 0)->u.str[0], '\xff');
    gir_json_doc_free(d);
    expect_error("/* c */ [1]", NULL, GIR_E_SYNTAX, "malformed JSON", NULL);
    gir_json_options comments = { .allow_comments = true };
    d = parse_ok("/* c */ [1]", &comments);
    gir_json_doc_free(d);
}

/* Deep nesting: the default cap refuses it without recursing, and a large
 * explicit cap builds it with the explicit stack. */
static void test_deep(void **state)
{
    (void)state;
    size_t depth = 200000;
    char *text = malloc(depth * 2 + 1);
    memset(text, '[', depth);
    memset(text + depth, ']', depth);
    text[depth * 2] = '\0';
    expect_error(text, NULL, GIR_E_LIMIT, "JSON nesting is deeper than 256 levels", "line 1:257");
    gir_json_options deep = { .max_depth = 300000 };
    gir_json_doc *d = parse_ok(text, &deep);
    const gir_json *v = gir_json_root(d);
    size_t n = 0;
    while (v && v->type == GIR_JSON_ARRAY && v->len) {
        v = gir_json_at(v, 0);
        n++;
    }
    assert_int_equal(n, depth - 1);
    gir_json_doc_free(d);
    free(text);
}

/* ---- the fast path agrees with yajl ------------------------------------------ */

/* Two DOMs are identical: types, values, texts, offsets, keys (walked with
 * an explicit stack). */
static void assert_same_dom(const gir_json *a, const gir_json *b)
{
    const gir_json **sa = NULL, **sb = NULL;
    size_t n = 0, cap_a = 0, cap_b = 0;
    assert_true(GIR_GROW(sa, cap_a, 1) && GIR_GROW(sb, cap_b, 1));
    sa[n] = a;
    sb[n++] = b;
    while (n) {
        a = sa[--n];
        b = sb[n];
        assert_int_equal(a->type, b->type);
        assert_int_equal(a->offset, b->offset);
        assert_int_equal(a->len, b->len);
        assert_int_equal(a->b, b->b);
        if (a->type == GIR_JSON_STRING) {
            assert_memory_equal(a->u.str, b->u.str, a->len + 1);
        } else if (a->type == GIR_JSON_NUMBER) {
            assert_memory_equal(a->u.num, b->u.num, a->len);
        } else if (a->type == GIR_JSON_ARRAY || a->type == GIR_JSON_OBJECT) {
            assert_true(GIR_GROW(sa, cap_a, n + a->len) && GIR_GROW(sb, cap_b, n + a->len));
            for (size_t i = 0; i < a->len; i++) {
                if (a->type == GIR_JSON_OBJECT) {
                    const gir_json_member *ma = &a->u.members[i], *mb = &b->u.members[i];
                    assert_int_equal(ma->key_len, mb->key_len);
                    assert_memory_equal(ma->key, mb->key, ma->key_len + 1);
                    assert_int_equal(ma->key_offset, mb->key_offset);
                    sa[n] = &ma->value;
                    sb[n++] = &mb->value;
                } else {
                    sa[n] = &a->u.items[i];
                    sb[n++] = &b->u.items[i];
                }
            }
        }
    }
    free(sa);
    free(sb);
}

/* Parses text with and without the fast path: the same outcome, error
 * (code, message, location) or DOM.  Returns whether it parsed. */
static bool same_both_ways(const char *text, size_t len, const gir_json_options *o)
{
    gir_json_options fast = o ? *o : (gir_json_options){ 0 }, ref = fast;
    ref.reference_parser = true;
    gir_json_doc *df = NULL, *dr = NULL;
    gir_error ef = GIR_ERROR_INIT, er = GIR_ERROR_INIT;
    gir_status sf = gir_json_parse(text, len, &fast, &df, &ef);
    gir_status sr = gir_json_parse(text, len, &ref, &dr, &er);
    if (sf != sr)
        print_error("differs: %.*s\n", (int)(len > 200 ? 200 : len), text);
    assert_int_equal(sf, sr);
    if (sf) {
        char *mf = gir_error_format(&ef), *mr = gir_error_format(&er);
        assert_string_equal(mf, mr);
        free(mf);
        free(mr);
    } else {
        assert_same_dom(gir_json_root(df), gir_json_root(dr));
        assert_int_equal(gir_json_value_count(df), gir_json_value_count(dr));
    }
    gir_json_doc_free(df);
    gir_json_doc_free(dr);
    gir_error_clear(&ef);
    gir_error_clear(&er);
    return sf == GIR_OK;
}

static void test_fast_path(void **state)
{
    (void)state;
    /* Accepted by both (the fast path reads these itself) ... */
    static const char *const ok[] = {
        "{}", "[]", " [ ] ", "{ }", "\n\t{\"a\" :\r\n1 }\n", "[0, -0, 1.5, -2e10, 3E+2, 4e-3, 12345678901234567890]",
        "[true, false, null, \"\", {}, [], [[]], {\"\": {}}]",
        "{\"s\": \"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\"}", "[\"\\u0041\\u00e9\\u20ac\\u0000x\", \"\\uFFFF\"]",
        "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]", "{\"a\": [1, {\"b\": [2, 3]}], \"c\": {\"d\": null}}",
        /* ... or left to yajl, which accepts them. */
        "\"top\"", "42", " true ", "[1]\v", "[\"\\ud83d\\ude00\"]", "[\"\\udc00\"]", "[\"\xc0\x80\"]",
        "[\"\xed\xa0\x80\"]",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        assert_true(same_both_ways(ok[i], strlen(ok[i]), NULL));
    /* Refused by both, with the same message and place. */
    static const char *const bad[] = {
        "", " ", "{", "[", "[1,]", "{\"a\":1,}", "{,}", "[,1]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{1: 2}",
        "[01]", "[1.]", "[.5]", "[1e]", "[-]", "[+1]", "[1x]", "[tru]", "[truex]", "[nul]", "[True]",
        "[\"a]", "[\"\\x\"]", "[\"\\u12\"]", "[\"\\u12g4\"]", "[\"a\tb\"]", "[\"\xff\"]", "[\"\xc3\"]",
        "[1] x", "[1] [2]", "{\"a\": 1, \"a\": 2}", "]", "}", "[}", "{]", "[1}", "{\"a\":1]", "/* c */ [1]",
        "[1] // c",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(same_both_ways(bad[i], strlen(bad[i]), NULL));
    /* Embedded NUL bytes in the text. */
    assert_false(same_both_ways("[\"a\0b\"]", 7, NULL));
    assert_false(same_both_ways("[1]\0", 4, NULL));
    /* Options. */
    gir_json_options o = { .max_depth = 3 };
    assert_true(same_both_ways("[[[1]]]", 7, &o));
    assert_false(same_both_ways("[[[[1]]]]", 9, &o));
    o = (gir_json_options){ .allow_duplicate_keys = true };
    assert_true(same_both_ways("{\"a\": 1, \"a\": 2}", 16, &o));
    o = (gir_json_options){ .no_utf8_check = true };
    assert_true(same_both_ways("[\"\xff\xc3\"]", 6, &o));
    o = (gir_json_options){ .allow_comments = true };
    assert_true(same_both_ways("/* c */ [1] // d\n", 17, &o));
    o = (gir_json_options){ .allow_trailing_garbage = true };
    assert_true(same_both_ways("[1] x", 5, &o));
    /* Every prefix of a document: truncations of every kind. */
    const char *doc = "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\\u00e9\", \"inputs\": []}, "
                      "{\"n\": -1.5e3, \"t\": true, \"f\": false, \"z\": null}], \"heads\": [[0, 0, 0]]}";
    for (size_t k = 0; k < strlen(doc); k++)
        assert_false(same_both_ways(doc, k, NULL));
    assert_true(same_both_ways(doc, strlen(doc), NULL));
    /* The real files. */
    static const char *const real[] = {
        "realworld/mxnet/lenet-symbol.json", "realworld/mxnet/vgg_dnnl_model1.json",
        "realworld/mxnet/save_000800.json",  "realworld/nnvm/lenet_nnvm_graph.json",
        "realworld/tvm/relay_deploy_graph.json", "realworld/lightnet/squeezedet.json",
        "realworld/lightnet/squeezedet_invalid.json",
    };
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        char *p = tu_shared(real[i]);
        size_t len;
        if (!p)
            continue; /* no GIR_SHARED_DIR */
        char *text = tu_slurp(p, &len);
        assert_non_null(text);
        /* All are valid JSON but the invalid squeezedet. */
        assert_true(same_both_ways(text, len, NULL) == (strstr(real[i], "invalid") == NULL));
        free(text);
        free(p);
    }
}

static void test_parse_file(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    char *p = tu_join(dir, "x.json");
    assert_true(tu_write(p, "{\"a\": [1,", 9));
    gir_json_doc *d = NULL;
    gir_error err = GIR_ERROR_INIT;
    TU_FAILS(gir_json_parse_file(p, 0, NULL, &d, &err), &err, GIR_E_SYNTAX, "x.json: line 1:10: ",
             "ends early");
    gir_error_clear(&err);
    assert_true(tu_write(p, "{\"a\": [1, 2]}", 13));
    TU_FAILS(gir_json_parse_file(p, 5, NULL, &d, &err), &err, GIR_E_LIMIT, "13 bytes");
    gir_error_clear(&err);
    TU_OK(gir_json_parse_file(p, 0, NULL, &d, &err), &err);
    size_t len;
    assert_string_equal(gir_json_text(d, &len), "{\"a\": [1, 2]}");
    assert_int_equal(len, 13);
    gir_json_doc_free(d);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

/* The dmlc layout, checked against the text of a real MXNet file. */
static void test_emit_dmlc(void **state)
{
    (void)state;
    gir_buf b = GIR_BUF_INIT;
    gir_json_writer w;
    gir_jw_init(&w, &b, GIR_JSON_DMLC);
    gir_jw_begin_object(&w, true);
    gir_jw_key(&w, "nodes");
    gir_jw_begin_array(&w, true);
    gir_jw_begin_object(&w, true);
    gir_jw_key(&w, "op");
    gir_jw_string(&w, "null");
    gir_jw_key(&w, "name");
    gir_jw_string(&w, "data");
    gir_jw_key(&w, "inputs");
    gir_jw_begin_array(&w, false);
    gir_jw_end_array(&w);
    gir_jw_end_object(&w);
    gir_jw_begin_object(&w, true);
    gir_jw_key(&w, "op");
    gir_jw_string(&w, "Activation");
    gir_jw_key(&w, "attrs");
    gir_jw_begin_object(&w, false);
    gir_jw_key(&w, "act_type");
    gir_jw_string(&w, "relu");
    gir_jw_end_object(&w);
    gir_jw_key(&w, "inputs");
    gir_jw_begin_array(&w, false);
    gir_jw_begin_array(&w, false);
    gir_jw_int(&w, 0);
    gir_jw_int(&w, 0);
    gir_jw_int(&w, 0);
    gir_jw_end_array(&w);
    gir_jw_end_array(&w);
    gir_jw_end_object(&w);
    gir_jw_end_array(&w);
    gir_jw_key(&w, "node_row_ptr");
    gir_jw_begin_array(&w, true);
    gir_jw_int(&w, 0);
    gir_jw_int(&w, 1);
    gir_jw_end_array(&w);
    gir_jw_key(&w, "attrs");
    gir_jw_begin_object(&w, true);
    gir_jw_key(&w, "shape");
    gir_jw_begin_array(&w, false);
    gir_jw_string(&w, "list_shape");
    gir_jw_begin_array(&w, true);
    gir_jw_begin_array(&w, false);
    gir_jw_int(&w, 1);
    gir_jw_int(&w, 80);
    gir_jw_end_array(&w);
    gir_jw_begin_array(&w, false);
    gir_jw_end_array(&w);
    gir_jw_end_array(&w);
    gir_jw_end_array(&w);
    gir_jw_key(&w, "s");
    gir_jw_string(&w, "a\"b\\c\nd\re\tf\x01g\xc3\xa9/");
    gir_jw_end_object(&w);
    gir_jw_end_object(&w);
    assert_true(gir_jw_ok(&w));
    gir_jw_free(&w);
    const char *want = "{\n"
                       "  \"nodes\": [\n"
                       "    {\n"
                       "      \"op\": \"null\", \n"
                       "      \"name\": \"data\", \n"
                       "      \"inputs\": []\n"
                       "    }, \n"
                       "    {\n"
                       "      \"op\": \"Activation\", \n"
                       "      \"attrs\": {\"act_type\": \"relu\"}, \n"
                       "      \"inputs\": [[0, 0, 0]]\n"
                       "    }\n"
                       "  ], \n"
                       "  \"node_row_ptr\": [\n"
                       "    0, \n"
                       "    1\n"
                       "  ], \n"
                       "  \"attrs\": {\n"
                       "    \"shape\": [\"list_shape\", [\n"
                       "        [1, 80], \n"
                       "        []]], \n"
                       "    \"s\": \"a\\\"b\\\\c\\nd\\re\\tf\x01g\xc3\xa9/\"\n"
                       "  }\n"
                       "}";
    assert_string_equal(b.data, want);
    gir_buf_free(&b);
}

static void emit_sample(gir_json_writer *w)
{
    gir_jw_begin_object(w, true);
    gir_jw_key(w, "a");
    gir_jw_begin_array(w, false);
    gir_jw_int(w, -1);
    gir_jw_uint(w, 18446744073709551615ull);
    gir_jw_double(w, 0.001);
    gir_jw_double(w, 1.0 / 0.0);
    gir_jw_bool(w, true);
    gir_jw_null(w);
    gir_jw_number_raw(w, "1e5", 3);
    gir_jw_end_array(w);
    gir_jw_key(w, "b");
    gir_jw_begin_object(w, true);
    gir_jw_key(w, "c\x01");
    gir_jw_string(w, "\b\f\x1f");
    gir_jw_end_object(w);
    gir_jw_key(w, "e");
    gir_jw_begin_object(w, true);
    gir_jw_end_object(w);
    gir_jw_end_object(w);
}

static void test_emit_styles(void **state)
{
    (void)state;
    gir_buf b = GIR_BUF_INIT;
    gir_json_writer w;
    gir_jw_init(&w, &b, GIR_JSON_PRETTY);
    emit_sample(&w);
    assert_true(gir_jw_ok(&w));
    gir_jw_free(&w);
    assert_string_equal(b.data, "{\n  \"a\": [-1, 18446744073709551615, 0.001, null, true, null, 1e5],\n"
                                "  \"b\": {\n    \"c\\u0001\": \"\\b\\f\\u001f\"\n  },\n  \"e\": {}\n}");
    /* The pretty output parses back. */
    gir_json_doc *d = parse_ok(b.data, NULL);
    assert_string_equal(gir_json_get_cstr(gir_json_get(gir_json_get(gir_json_root(d), "b"), "c\x01")),
                        "\b\f\x1f");
    gir_json_doc_free(d);
    b.len = 0;
    gir_jw_init(&w, &b, GIR_JSON_COMPACT);
    emit_sample(&w);
    assert_true(gir_jw_ok(&w));
    gir_jw_free(&w);
    assert_string_equal(b.data, "{\"a\":[-1,18446744073709551615,0.001,null,true,null,1e5],"
                                "\"b\":{\"c\\u0001\":\"\\b\\f\\u001f\"},\"e\":{}}");
    /* Misuse is reported, not written silently. */
    b.len = 0;
    gir_jw_init(&w, &b, GIR_JSON_COMPACT);
    gir_jw_begin_object(&w, false);
    gir_jw_int(&w, 1); /* a value without a key */
    gir_jw_end_object(&w);
    assert_false(gir_jw_ok(&w));
    gir_jw_free(&w);
    gir_jw_init(&w, &b, GIR_JSON_COMPACT);
    gir_jw_begin_array(&w, false);
    gir_jw_end_object(&w);
    assert_false(gir_jw_ok(&w));
    gir_jw_free(&w);
    gir_jw_init(&w, &b, GIR_JSON_COMPACT);
    gir_jw_begin_array(&w, false);
    assert_false(gir_jw_ok(&w)); /* still open */
    gir_jw_end_array(&w);
    assert_true(gir_jw_ok(&w));
    gir_jw_free(&w);
    gir_buf_free(&b);
}

/* Offsets are 32-bit: a text of 4 GiB or more is refused before anything
 * of it is read (so a short buffer with a huge length is safe here). */
static void test_size_limit(void **state)
{
    (void)state;
    static const char text[] = "{}";
    gir_json_doc *d = (gir_json_doc *)1;
    gir_error err = GIR_ERROR_INIT;
    assert_int_equal(gir_json_parse(text, (size_t)UINT32_MAX + 1, NULL, &d, &err), GIR_E_LIMIT);
    assert_null(d);
    assert_string_equal(err.message, "JSON text of 4294967296 bytes is larger than the 4 GiB this reader takes");
    gir_error_clear(&err);
    TU_OK(gir_json_parse(text, 2, NULL, &d, &err), &err);
    gir_json_doc_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dom),
        cmocka_unit_test(test_embedded_nul),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_deep),
        cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_parse_file),
        cmocka_unit_test(test_emit_dmlc),
        cmocka_unit_test(test_emit_styles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
