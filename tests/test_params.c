/* .params files of the NNVM family: the TVM list and the MXNet NDArray list
 * in every array layout; lazy reading, streamed writing, bad files. */
#include "testutil.h"

#include "formats/format.h"
#include "io/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

/* ---- building files byte by byte ---------------------------------------------- */

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void u64(bytes *b, uint64_t v)
{
    unsigned char t[8];
    gir_put_le64(t, v);
    put(b, t, 8);
}

static void u32(bytes *b, uint32_t v)
{
    unsigned char t[4];
    gir_put_le32(t, v);
    put(b, t, 4);
}

static void name(bytes *b, const char *s)
{
    u64(b, strlen(s));
    put(b, s, strlen(s));
}

static void f32s(bytes *b, size_t n, float base)
{
    for (size_t i = 0; i < n; i++) {
        float f = base + (float)i;
        uint32_t x;
        memcpy(&x, &f, 4);
        u32(b, x);
    }
}

static char *save_bytes(const char *file, const bytes *b)
{
    char *p = tu_tmp(file);
    assert_true(tu_write(p, b->p, b->n));
    return p;
}

static void expect_open_fails(const char *path, gir_status code, const char *m1, const char *m2)
{
    gir_params p;
    gir_error err = GIR_ERROR_INIT;
    gir_status st = gir_params_open(path, &p, &err);
    TU_FAILS(st, &err, code, m1, m2 ? m2 : m1);
    gir_error_clear(&err);
    gir_params_free(&p);
}

static void open_ok(const char *path, gir_params *p)
{
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_params_open(path, p, &err), &err);
}

static float first_float(const gir_params *p, size_t i)
{
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_params_tensor(p, i, &t, &err), &err);
    assert_null(t->data); /* lazy */
    const void *d;
    TU_OK(gir_tensor_load(t, &d, &err), &err);
    float f = *(const float *)d;
    gir_tensor_unref(t);
    return f;
}

/* ---- the real files ----------------------------------------------------------- */

static void test_tvm_real(void **state)
{
    (void)state;
    char *path = tu_shared("realworld/tvm/wrn_fc.params");
    gir_params p;
    open_ok(path, &p);
    assert_int_equal(p.kind, GIR_PARAMS_TVM);
    assert_int_equal(p.n, 5);
    static const char *const names[] = { "1", "batch_norm0_gamma_mul_div_expand", "8_OIHW8i8o",
                                         "batch_norm0_add_beta_expand", "__mul_scalar__1" };
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(p.items[i].name, names[i]);
        assert_string_equal(p.items[i].key, names[i]);
        assert_int_equal(p.items[i].dtype, GIR_DT_F32);
    }
    char s[64];
    assert_string_equal(gir_shape_str(&p.items[2].shape, s, sizeof s), "[10,10,8,8,8,8]");
    assert_int_equal(p.items[0].offset, 213);
    assert_int_equal(p.items[0].nbytes, 3200);
    assert_int_equal(p.items[4].offset, 1642717);
    assert_true(first_float(&p, 0) == -0.17851202189922333f);
    assert_true(first_float(&p, 1) == 51.252323150634766f);
    assert_true(first_float(&p, 4) == 0.0064744423143565655f);
    gir_params_free(&p);
    free(path);
    path = tu_shared("realworld/nnvm/lenet_nnvm_param.params");
    open_ok(path, &p);
    assert_int_equal(p.n, 8);
    assert_string_equal(p.items[0].name, "_param_7");
    assert_string_equal(gir_shape_str(&p.items[2].shape, s, sizeof s), "[500,800]");
    assert_true(first_float(&p, 6) == 0.1560177505016327f);
    gir_params_free(&p);
    free(path);
}

static void test_mxnet_real(void **state)
{
    (void)state;
    char *path = tu_shared("realworld/mxnet/lenet-0001.params");
    gir_params p;
    open_ok(path, &p);
    assert_int_equal(p.kind, GIR_PARAMS_MXNET);
    assert_int_equal(p.n, 8);
    assert_string_equal(p.items[0].name, "arg:hybridsequential0_conv0_weight");
    assert_string_equal(p.items[0].key, "hybridsequential0_conv0_weight");
    assert_string_equal(p.items[0].prefix, "arg");
    char s[64];
    assert_string_equal(gir_shape_str(&p.items[4].shape, s, sizeof s), "[32,80]");
    assert_int_equal(p.items[0].offset, 80);
    assert_int_equal(p.items[7].offset, 15032);
    assert_true(first_float(&p, 0) == 0.1603482961654663f);
    assert_true(first_float(&p, 7) == -0.005922750104218721f);
    gir_params_free(&p);
    free(path);
    /* The oldest layout: rank word, u32 dims, no names. */
    path = tu_shared("realworld/mxnet/legacy_ndarray.v0");
    open_ok(path, &p);
    assert_int_equal(p.n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_null(p.items[i].name);
        assert_string_equal(gir_shape_str(&p.items[i].shape, s, sizeof s), "[128]");
        assert_int_equal(p.items[i].dtype, GIR_DT_F32);
    }
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_params_tensor(&p, 5, &t, &err), &err);
    const void *d;
    TU_OK(gir_tensor_load(t, &d, &err), &err);
    const float *f = d;
    for (int i = 0; i < 128; i++)
        assert_true(f[i] == (float)i);
    gir_tensor_unref(t);
    gir_params_free(&p);
    free(path);
}

/* ---- every MXNet array layout, made here ---------------------------------------- */

static void test_mxnet_layouts(void **state)
{
    (void)state;
    bytes b = { 0 };
    u64(&b, 0x112);
    u64(&b, 0);
    u64(&b, 7);
    /* V1: i32 rank + i64 dims, context, type flag, data */
    u32(&b, 0xF993FAC8u);
    u32(&b, 2);
    u64(&b, 2);
    u64(&b, 3);
    u32(&b, 1);
    u32(&b, 0);
    u32(&b, 0);
    f32s(&b, 6, 10);
    /* V2 dense int64 [2] */
    u32(&b, 0xF993FAC9u);
    u32(&b, 0);
    u32(&b, 1);
    u64(&b, 2);
    u32(&b, 2); /* gpu: data is still a CPU copy */
    u32(&b, 1);
    u32(&b, 6);
    u64(&b, 7);
    u64(&b, (uint64_t)-8);
    /* V2 empty (rank 0) */
    u32(&b, 0xF993FAC9u);
    u32(&b, 0);
    u32(&b, 0);
    /* V3 scalar (rank 0 = one element), float16 */
    u32(&b, 0xF993FACAu);
    u32(&b, 0);
    u32(&b, 0);
    u32(&b, 1);
    u32(&b, 0);
    u32(&b, 2);
    put(&b, "\x00\x3c", 2);
    /* V3 unknown (rank -1) */
    u32(&b, 0xF993FACAu);
    u32(&b, 0);
    u32(&b, (uint32_t)-1);
    /* legacy bool [3] */
    u32(&b, 1);
    u32(&b, 3);
    u32(&b, 1);
    u32(&b, 0);
    u32(&b, 7);
    put(&b, "\x01\x00\x01", 3);
    /* legacy empty */
    u32(&b, 0);
    u64(&b, 7);
    const char *nm[] = { "arg:a", "aux:b", "c", "arg:d", "arg:e", "aux:f", "g" };
    for (size_t i = 0; i < 7; i++)
        name(&b, nm[i]);
    char *path = save_bytes("layouts.params", &b);
    gir_params p;
    open_ok(path, &p);
    assert_int_equal(p.n, 7);
    char s[64];
    assert_string_equal(gir_shape_str(&p.items[0].shape, s, sizeof s), "[2,3]");
    assert_true(first_float(&p, 0) == 10.0f);
    assert_int_equal(p.items[1].dtype, GIR_DT_I64);
    assert_string_equal(p.items[1].prefix, "aux");
    assert_string_equal(p.items[1].key, "b");
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_params_tensor(&p, 1, &t, &err), &err);
    const void *d;
    TU_OK(gir_tensor_load(t, &d, &err), &err);
    assert_int_equal(((const int64_t *)d)[1], -8);
    gir_tensor_unref(t);
    assert_true(p.items[2].empty);
    assert_string_equal(p.items[2].prefix, "");
    assert_false(p.items[3].empty);
    assert_int_equal(p.items[3].shape.rank, 0);
    assert_int_equal(p.items[3].dtype, GIR_DT_F16);
    assert_int_equal(p.items[3].nbytes, 2);
    assert_true(p.items[4].empty);
    assert_int_equal(p.items[5].dtype, GIR_DT_BOOL);
    assert_int_equal(p.items[5].nbytes, 3);
    assert_true(p.items[6].empty);
    gir_params_free(&p);
    free(path);
    free(b.p);
}

/* ---- writing --------------------------------------------------------------------- */

static gir_tensor *tensor(gir_dtype dt, int rank, const int64_t *dims)
{
    gir_shape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_new(dt, &s, &t, &err), &err);
    unsigned char *p = t->data;
    for (uint64_t i = 0; i < t->nbytes; i++)
        p[i] = dt == GIR_DT_BOOL ? (unsigned char)(i % 2) : (unsigned char)(i * 7 + 3);
    return t;
}

static void check_written(gir_params_kind kind)
{
    static const gir_dtype types[] = { GIR_DT_F32, GIR_DT_F64, GIR_DT_F16, GIR_DT_BF16, GIR_DT_I8,
                                       GIR_DT_I16, GIR_DT_I32, GIR_DT_I64, GIR_DT_U8,   GIR_DT_U16,
                                       GIR_DT_U32, GIR_DT_U64, GIR_DT_BOOL };
    size_t n = sizeof types / sizeof *types + 2;
    gir_param_out *items = calloc(n, sizeof *items);
    char names[16][16];
    for (size_t i = 0; i < n - 2; i++) {
        int64_t dims[3] = { 2, (int64_t)i + 1, 3 };
        snprintf(names[i], sizeof names[i], "t%zu", i);
        items[i] = (gir_param_out){ names[i], tensor(types[i], 3, dims) };
    }
    int64_t zero[2] = { 0, 4 };
    items[n - 2] = (gir_param_out){ "empty", tensor(GIR_DT_F32, 2, zero) };
    items[n - 1] = (gir_param_out){ "scalar", tensor(GIR_DT_F32, 0, zero) };
    char *path = tu_tmp(kind == GIR_PARAMS_TVM ? "w.tvm.params" : "w.mx.params");
    gir_outfile *f;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_outfile_open(path, true, &f, &err), &err);
    TU_OK(gir_params_write(f, kind, items, n, NULL, &err), &err);
    TU_OK(gir_outfile_commit(f, &err), &err);
    gir_params p;
    open_ok(path, &p);
    assert_int_equal(p.kind, kind);
    assert_int_equal(p.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(p.items[i].name, items[i].name);
        gir_tensor *t;
        TU_OK(gir_params_tensor(&p, i, &t, &err), &err);
        bool eq;
        TU_OK(gir_tensor_equal(t, items[i].t, &eq, &err), &err);
        assert_true(eq);
        gir_tensor_unref(t);
        gir_tensor_unref(items[i].t);
    }
    gir_params_free(&p);
    free(items);
    free(path);
}

static void test_write_read(void **state)
{
    (void)state;
    check_written(GIR_PARAMS_TVM);
    check_written(GIR_PARAMS_MXNET);
}

/* Writing streams: a lazily loaded tensor is loaded for its write only. */
static void test_streaming(void **state)
{
    (void)state;
    char *src = tu_shared("realworld/nnvm/lenet_nnvm_param.params");
    gir_params p;
    open_ok(src, &p);
    gir_param_out items[8];
    gir_error err = GIR_ERROR_INIT;
    for (size_t i = 0; i < p.n; i++) {
        items[i].name = p.items[i].name;
        TU_OK(gir_params_tensor(&p, i, &items[i].t, &err), &err);
    }
    char *out = tu_tmp("stream.params");
    gir_outfile *f;
    TU_OK(gir_outfile_open(out, true, &f, &err), &err);
    TU_OK(gir_params_write(f, GIR_PARAMS_TVM, items, p.n, NULL, &err), &err);
    TU_OK(gir_outfile_commit(f, &err), &err);
    for (size_t i = 0; i < p.n; i++) {
        assert_null(items[i].t->data);
        gir_tensor_unref(items[i].t);
    }
    /* Same names, order and data: the very same bytes. */
    assert_true(tu_files_equal(src, out));
    gir_params_free(&p);
    free(out);
    free(src);
}

/* gir_save reports the weights it writes: (0, total) first, then growing
 * counts, and (total, total) once the output is complete. */
typedef struct progress_log {
    uint64_t done[64], total[64];
    size_t n;
} progress_log;

static void log_progress(void *ctx, uint64_t done, uint64_t total)
{
    progress_log *l = ctx;
    if (l->n < 64) {
        l->done[l->n] = done;
        l->total[l->n++] = total;
    }
}

static void test_save_progress(void **state)
{
    (void)state;
    char *json = tu_shared("realworld/nnvm/lenet_nnvm_graph.json");
    char *params = tu_shared("realworld/nnvm/lenet_nnvm_param.params");
    gir_error err = GIR_ERROR_INIT;
    gir_options *ro = gir_options_new();
    TU_OK(gir_options_set(ro, "params", params, &err), &err);
    gir_graph *g;
    TU_OK(gir_load(json, "nnvm", ro, &g, &err), &err);
    uint64_t nbytes = 0;
    size_t tensors = 0;
    for (size_t i = 0; i < g->n_values; i++)
        if (g->values[i]->data) {
            nbytes += g->values[i]->data->nbytes;
            tensors++;
        }
    assert_true(tensors >= 4);
    progress_log log = { { 0 }, { 0 }, 0 };
    gir_options *wo = gir_options_new();
    gir_options_set_progress_handler(wo, log_progress, &log);
    char *out = tu_tmp("progress.json");
    tu_save(g, out, "nnvm", wo);
    /* begin, one call per tensor written, end */
    assert_int_equal(log.n, tensors + 1);
    assert_true(log.done[0] == 0);
    for (size_t i = 0; i < log.n; i++) {
        assert_true(log.total[i] == nbytes);
        if (i)
            assert_true(log.done[i] > log.done[i - 1]);
    }
    assert_true(log.done[log.n - 1] == nbytes);
    /* a copy of the options keeps the handler; a failed save ends short */
    gir_options *copy = gir_options_dup(wo);
    log.n = 0;
    TU_FAILS(gir_save(g, out, "nnvm", copy, &err), &err, GIR_E_EXISTS, "output exists");
    gir_error_clear(&err);
    assert_int_equal(log.n, 1);
    assert_true(log.done[0] == 0 && log.total[0] == nbytes);
    gir_options_free(copy);
    gir_options_free(wo);
    gir_options_free(ro);
    gir_graph_free(g);
    remove(out);
    char *side = gir_strdupf("%.*s.params", (int)(strlen(out) - 5), out);
    remove(side);
    free(side);
    free(out);
    free(params);
    free(json);
}

static void test_write_refusals(void **state)
{
    (void)state;
    gir_shape s = { .rank = 1, .dims = { 3 } };
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
    t->dtype = GIR_DT_UNKNOWN;
    gir_param_out it = { "odd", t };
    char *out = tu_tmp("refuse.params");
    gir_outfile *f;
    TU_OK(gir_outfile_open(out, true, &f, &err), &err);
    TU_FAILS(gir_params_write(f, GIR_PARAMS_TVM, &it, 1, NULL, &err), &err, GIR_E_UNSUPPORTED,
             "parameter 'odd' has type unknown, which TVM parameters cannot store");
    gir_error_clear(&err);
    gir_outfile_abort(f);
    assert_false(gir_path_exists(out));
    t->dtype = GIR_DT_F32;
    gir_tensor_unref(t);
    free(out);
}

/* ---- bad files ------------------------------------------------------------------------ */

static bytes tvm_header(uint64_t n_names)
{
    bytes b = { 0 };
    u64(&b, 0xF7E58D4F05049CB7ull);
    u64(&b, 0);
    u64(&b, n_names);
    return b;
}

static void tvm_tensor_header(bytes *b, uint64_t magic, int32_t dev, int32_t ndim, unsigned char code,
                              unsigned char bits, uint16_t lanes)
{
    u64(b, magic);
    u64(b, 0);
    u32(b, (uint32_t)dev);
    u32(b, 0);
    u32(b, (uint32_t)ndim);
    unsigned char dt[4] = { code, bits, (unsigned char)lanes, (unsigned char)(lanes >> 8) };
    put(b, dt, 4);
}

static void test_bad_files(void **state)
{
    (void)state;
    bytes b = { 0 };
    put(&b, "abc", 3);
    char *p = save_bytes("short.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "short.params: byte 0: the parameters file is too short (3 bytes) for a header",
                      NULL);
    free(p);
    free(b.p);
    b = (bytes){ 0 };
    put(&b, "<html>this is not it</html>", 27);
    p = save_bytes("html.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "html.params: byte 0: not a parameters file: the first 8 bytes are neither",
                      NULL);
    free(p);
    free(b.p);
    /* TVM: counts larger than the file. */
    b = tvm_header(1000000);
    p = save_bytes("count.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "byte 16: name count 1000000 is more than the 0 bytes left can hold", NULL);
    free(p);
    free(b.p);
    b = tvm_header(1);
    u64(&b, 1000);
    p = save_bytes("namelen.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "byte 24: name length 1000 is larger than the 0 bytes left", NULL);
    free(p);
    free(b.p);
    b = tvm_header(1);
    name(&b, "w");
    u64(&b, 2);
    p = save_bytes("mismatch.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "byte 33: the file lists 1 names but 2 arrays", NULL);
    free(p);
    free(b.p);
    /* TVM tensor headers. */
    struct {
        uint64_t magic;
        int32_t dev, ndim;
        unsigned char code, bits;
        uint16_t lanes;
        gir_status st;
        const char *msg;
    } hdrs[] = {
        { 0x1234, 1, 1, 2, 32, 1, GIR_E_PARAMS,
          "byte 41: array 0 ('w') has magic 0x0000000000001234, expected 0xDD5E40F096B4A13F" },
        { 0xDD5E40F096B4A13Full, 2, 1, 2, 32, 1, GIR_E_PARAMS,
          "array 0 ('w') has device type 2; only CPU (1) tensors are stored" },
        { 0xDD5E40F096B4A13Full, 1, 9, 2, 32, 1, GIR_E_LIMIT, "array 0 ('w') has rank 9 (0..8 supported)" },
        { 0xDD5E40F096B4A13Full, 1, -1, 2, 32, 1, GIR_E_PARAMS, "array 0 ('w') has rank -1" },
        { 0xDD5E40F096B4A13Full, 1, 1, 3, 64, 1, GIR_E_DTYPE,
          "array 0 ('w') has DLPack type code 3, 64 bits, 1 lanes, which is not supported" },
        { 0xDD5E40F096B4A13Full, 1, 1, 2, 32, 4, GIR_E_DTYPE, "2, 32 bits, 4 lanes" },
    };
    for (size_t i = 0; i < sizeof hdrs / sizeof *hdrs; i++) {
        b = tvm_header(1);
        name(&b, "w");
        u64(&b, 1);
        tvm_tensor_header(&b, hdrs[i].magic, hdrs[i].dev, hdrs[i].ndim, hdrs[i].code, hdrs[i].bits, hdrs[i].lanes);
        u64(&b, 4);
        u64(&b, 16);
        f32s(&b, 4, 0);
        p = save_bytes("hdr.params", &b);
        expect_open_fails(p, hdrs[i].st, hdrs[i].msg, NULL);
        free(p);
        free(b.p);
    }
    /* Declared size disagrees; data cut short. */
    b = tvm_header(1);
    name(&b, "w");
    u64(&b, 1);
    tvm_tensor_header(&b, 0xDD5E40F096B4A13Full, 1, 1, 2, 32, 1);
    u64(&b, 4);
    u64(&b, 12);
    f32s(&b, 3, 0);
    p = save_bytes("size.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "byte 81: array 0 ('w') declares 12 data bytes, but its shape and type need 16",
                      NULL);
    free(p);
    free(b.p);
    b = tvm_header(1);
    name(&b, "w");
    u64(&b, 1);
    tvm_tensor_header(&b, 0xDD5E40F096B4A13Full, 1, 1, 2, 32, 1);
    u64(&b, 4);
    u64(&b, 16);
    f32s(&b, 3, 0);
    p = save_bytes("cut.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "byte 89: file ends inside the data of array 0 ('w'): 16 bytes needed, 12 left",
                      NULL);
    free(p);
    free(b.p);
    /* Overflowing shapes. */
    b = tvm_header(1);
    name(&b, "w");
    u64(&b, 1);
    tvm_tensor_header(&b, 0xDD5E40F096B4A13Full, 1, 2, 2, 32, 1);
    u64(&b, (uint64_t)1 << 40);
    u64(&b, (uint64_t)1 << 40);
    u64(&b, 0);
    p = save_bytes("huge.params", &b);
    expect_open_fails(p, GIR_E_LIMIT, "tensor of float32 is larger than", NULL);
    free(p);
    free(b.p);
    /* MXNet. */
    b = (bytes){ 0 };
    u64(&b, 0x112);
    u64(&b, 0);
    u64(&b, 1);
    u32(&b, 0xF993FAC9u);
    u32(&b, 1);
    p = save_bytes("sparse.params", &b);
    expect_open_fails(p, GIR_E_UNSUPPORTED,
                      "byte 28: array 0 has storage type 1 (row_sparse); only dense arrays are supported", NULL);
    free(p);
    free(b.p);
    b = (bytes){ 0 };
    u64(&b, 0x112);
    u64(&b, 0);
    u64(&b, 1);
    u32(&b, 0x12345678u);
    p = save_bytes("weird.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "byte 24: array 0 starts with 0x12345678, which is neither an NDArray magic",
                      NULL);
    free(p);
    free(b.p);
    b = (bytes){ 0 };
    u64(&b, 0x112);
    u64(&b, 0);
    u64(&b, 1);
    u32(&b, 1);
    u32(&b, 2);
    u32(&b, 1);
    u32(&b, 0);
    u32(&b, 99);
    p = save_bytes("flag.params", &b);
    expect_open_fails(p, GIR_E_DTYPE, "byte 40: array 0 has MXNet type flag 99, which is not a known type", NULL);
    free(p);
    free(b.p);
    b = (bytes){ 0 };
    u64(&b, 0x112);
    u64(&b, 0);
    u64(&b, 1);
    u32(&b, 0);
    u64(&b, 2);
    p = save_bytes("names.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "byte 28: the file has 1 arrays but 2 names", NULL);
    free(p);
    free(b.p);
    b = (bytes){ 0 };
    u64(&b, 0x112);
    u64(&b, 0);
    u64(&b, (uint64_t)1 << 60);
    p = save_bytes("many.params", &b);
    expect_open_fails(p, GIR_E_PARAMS, "array count 1152921504606846976 is more than the 0 bytes left can hold", NULL);
    free(p);
    free(b.p);
    /* MXNet 2.x NumPy archives. */
    b = (bytes){ 0 };
    put(&b, "PK\x03\x04rest of a zip", 18);
    p = save_bytes("np.params", &b);
    expect_open_fails(p, GIR_E_UNSUPPORTED, "MXNet 2.x NumPy-format parameters (.npz/.npy) are not supported", NULL);
    free(p);
    free(b.p);
}

/* A file that changes under a lazy tensor fails when the data is read. */
static void test_lazy_shrunk(void **state)
{
    (void)state;
    bytes b = tvm_header(1);
    name(&b, "w");
    u64(&b, 1);
    tvm_tensor_header(&b, 0xDD5E40F096B4A13Full, 1, 1, 2, 32, 1);
    u64(&b, 4);
    u64(&b, 16);
    f32s(&b, 4, 0);
    char *p = save_bytes("shrink.params", &b);
    gir_params ps;
    open_ok(p, &ps);
    gir_tensor *t;
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_params_tensor(&ps, 0, &t, &err), &err);
    gir_params_free(&ps); /* the tensor keeps what it needs */
    struct stat before;
    assert_int_equal(stat(p, &before), 0);
    assert_true(tu_write(p, b.p, b.n - 8));
    TU_FAILS(gir_tensor_load(t, NULL, &err), &err, GIR_E_IO, "shrink.params: ",
             "the parameters file was rewritten after the model was read");
    gir_error_clear(&err);
    /* the same bytes, inode and modification time again: the file the
     * tensor was read from, so it loads */
    assert_true(tu_write(p, b.p, b.n));
    struct timespec times[2] = { before.st_atim, before.st_mtim };
    assert_int_equal(utimensat(AT_FDCWD, p, times, 0), 0);
    const void *d;
    TU_OK(gir_tensor_load(t, &d, &err), &err);
    assert_true(((const float *)d)[3] == 3.0f);
    gir_tensor_unref(t);
    free(p);
    free(b.p);
}

static void test_sniff_and_dtypes(void **state)
{
    (void)state;
    bool npz;
    assert_int_equal(gir_params_sniff((const unsigned char *)"\xb7\x9c\x04\x05\x4f\x8d\xe5\xf7", 8, &npz),
                     GIR_PARAMS_TVM);
    assert_false(npz);
    assert_int_equal(gir_params_sniff((const unsigned char *)"\x12\x01\0\0\0\0\0\0", 8, &npz), GIR_PARAMS_MXNET);
    assert_int_equal(gir_params_sniff((const unsigned char *)"\x93NUMPY\x01\x00", 8, &npz), GIR_PARAMS_MXNET);
    assert_true(npz);
    assert_int_equal(gir_params_sniff((const unsigned char *)"{\"nodes\"", 8, &npz), 0);
    assert_int_equal(gir_mxnet_dtype(0), GIR_DT_F32);
    assert_int_equal(gir_mxnet_dtype(7), GIR_DT_BOOL);
    assert_int_equal(gir_mxnet_dtype(12), GIR_DT_BF16);
    assert_int_equal(gir_mxnet_dtype(13), GIR_DT_UNKNOWN);
    assert_int_equal(gir_mxnet_flag(GIR_DT_I16), 8);
    assert_int_equal(gir_nnvm_dtype_code(GIR_DT_I16), 7);
    assert_int_equal(gir_nnvm_dtype_code(GIR_DT_BOOL), -1);
    assert_int_equal(gir_dltype("bfloat16"), GIR_DT_BF16);
    assert_int_equal(gir_dltype("float32x4"), GIR_DT_UNKNOWN);
    assert_string_equal(gir_dltype_name(GIR_DT_U16), "uint16");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tvm_real),
        cmocka_unit_test(test_mxnet_real),
        cmocka_unit_test(test_mxnet_layouts),
        cmocka_unit_test(test_write_read),
        cmocka_unit_test(test_streaming),
        cmocka_unit_test(test_save_progress),
        cmocka_unit_test(test_write_refusals),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_lazy_shrunk),
        cmocka_unit_test(test_sniff_and_dtypes),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
