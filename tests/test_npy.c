/* lib/io/npy: .npy reading (versions 1-3, all element types, big-endian),
 * numpy-identical writing, strict header errors. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"

/* A version 1.0 file image: header dict text (unpadded), then data. */
static unsigned char *npy_image(unsigned major, const char *dict, const void *data, size_t dlen, size_t *len)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t hl = strlen(dict) + 1;
    *len = pre + hl + dlen;
    unsigned char *b = malloc(*len);
    assert_non_null(b);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    if (major == 1) {
        b[8] = (unsigned char)hl;
        b[9] = (unsigned char)(hl >> 8);
    } else {
        gir_put_le32(b + 8, (uint32_t)hl);
    }
    memcpy(b + pre, dict, hl - 1);
    b[pre + hl - 1] = '\n';
    if (dlen)
        memcpy(b + pre + hl, data, dlen);
    return b;
}

static gir_tensor *parse_ok(unsigned major, const char *dict, const void *data, size_t dlen)
{
    size_t len;
    unsigned char *img = npy_image(major, dict, data, dlen, &len);
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t = NULL;
    TU_OK(gir_npy_parse(img, len, "mem.npy", &t, &err), &err);
    free(img);
    return t;
}

static void expect_parse_fails(const char *dict, const void *data, size_t dlen, gir_status code, const char *m1,
                               const char *loc)
{
    size_t len;
    unsigned char *img = npy_image(1, dict, data, dlen, &len);
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t = (gir_tensor *)1;
    TU_FAILS(gir_npy_parse(img, len, "bad.npy", &t, &err), &err, code, m1, "bad.npy: ");
    assert_null(t);
    if (loc) {
        assert_non_null(err.location);
        assert_string_equal(err.location, loc);
    }
    gir_error_clear(&err);
    free(img);
}

/* ---- the shared fixtures ------------------------------------------------------ */

static void check_fixture(const char *rel, const gir_shape *want, bool unit_range)
{
    char *path = tu_shared(rel);
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t;
    TU_OK(gir_npy_read(path, &t, &err), &err);
    assert_int_equal(gir_tensor_dtype(t), GIR_DT_F32);
    assert_true(gir_shape_equal(gir_tensor_shape(t), want));
    uint64_t n = (uint64_t)gir_shape_numel(want);
    assert_int_equal(gir_tensor_nbytes(t), n * 4);
    const void *pd;
    TU_OK(gir_tensor_load(t, &pd, &err), &err);
    const float *v = pd;
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        assert_true(isfinite(v[i]));
        if (unit_range)
            assert_true(v[i] >= 0.0f && v[i] < 1.0f);
        sum += v[i];
    }
    if (unit_range) /* uniform [0,1): the mean is close to 0.5 */
        assert_true(fabs(sum / (double)n - 0.5) < 0.01);
    else
        assert_true(sum != 0);

    /* writing it back gives numpy's exact bytes */
    char *out = tu_tmp("again.npy");
    TU_OK(gir_npy_write(out, t, &err), &err);
    assert_true(tu_files_equal(path, out));
    gir_tensor_unref(t);
    free(out);
    free(path);
}

static void test_shared_fixtures(void **state)
{
    (void)state;
    gir_shape in = { 4, { 1, 3, 224, 224 } }, logits = { 2, { 1, 1000 } };
    check_fixture("models/input_1x3x224x224.npy", &in, true);
    check_fixture("models/resnet18.ort_out.npy", &logits, false);
    check_fixture("models/mobilenet_v2.ort_out.npy", &logits, false);
    check_fixture("models/squeezenet1_0.ort_out.npy", &logits, false);
}

/* ---- round trips --------------------------------------------------------------- */

static void test_roundtrip_all_types(void **state)
{
    (void)state;
    static const gir_dtype types[] = { GIR_DT_F16, GIR_DT_F32, GIR_DT_F64, GIR_DT_I8,  GIR_DT_I16, GIR_DT_I32,
                                       GIR_DT_I64, GIR_DT_U8,  GIR_DT_U16, GIR_DT_U32, GIR_DT_U64, GIR_DT_BOOL };
    static const gir_shape shapes[] = { { 0, { 0 } }, { 1, { 5 } }, { 2, { 2, 3 } }, { 3, { 2, 0, 4 } },
                                        { 8, { 1, 2, 1, 2, 1, 2, 1, 2 } } };
    char *path = tu_tmp("rt.npy");
    gir_error err = GIR_ERROR_INIT;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            gir_tensor *t;
            TU_OK(gir_tensor_new(types[i], &shapes[s], &t, &err), &err);
            unsigned char *d = t->data;
            for (uint64_t k = 0; k < t->nbytes; k++)
                d[k] = types[i] == GIR_DT_BOOL ? (unsigned char)(k % 3 == 0) : (unsigned char)(k * 37 + i);
            TU_OK(gir_npy_write(path, t, &err), &err);
            /* numpy's alignment: the data starts at a multiple of 64 */
            size_t flen;
            char *f = tu_slurp(path, &flen);
            assert_int_equal((flen - t->nbytes) % 64, 0);
            assert_int_equal(f[flen - t->nbytes - 1], '\n');
            free(f);
            gir_tensor *r;
            TU_OK(gir_npy_read(path, &r, &err), &err);
            bool eq = false;
            TU_OK(gir_tensor_equal(t, r, &eq, &err), &err);
            assert_true(eq);
            gir_tensor_unref(r);
            gir_tensor_unref(t);
        }
    }
    free(path);
}

static void test_write_header_text(void **state)
{
    (void)state;
    char *path = tu_tmp("h.npy");
    gir_error err = GIR_ERROR_INIT;
    static const struct {
        gir_dtype dt;
        gir_shape shape;
        const char *dict;
    } cases[] = {
        { GIR_DT_F32, { 0, { 0 } }, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }" },
        { GIR_DT_BOOL, { 1, { 3 } }, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }" },
        { GIR_DT_I64, { 2, { 10, 2 } }, "{'descr': '<i8', 'fortran_order': False, 'shape': (10, 2), }" },
        { GIR_DT_U8, { 1, { 0 } }, "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gir_tensor *t;
        TU_OK(gir_tensor_new(cases[i].dt, &cases[i].shape, &t, &err), &err);
        TU_OK(gir_npy_write(path, t, &err), &err);
        size_t len;
        char *f = tu_slurp(path, &len);
        size_t dl = strlen(cases[i].dict);
        assert_memory_equal(f, "\x93NUMPY\x01\x00", 8);
        assert_memory_equal(f + 10, cases[i].dict, dl);
        size_t hl = (size_t)(unsigned char)f[8] | (size_t)(unsigned char)f[9] << 8;
        assert_int_equal(len, 10 + hl + t->nbytes);
        assert_int_equal((10 + hl) % 64, 0);
        /* padding: 21 - digits of the first axis, then spaces to the 64 boundary */
        for (size_t k = 10 + dl; k < 10 + hl - 1; k++)
            assert_int_equal(f[k], ' ');
        if (cases[i].shape.rank > 0)
            assert_true(hl - 1 - dl >= 21 - 1);
        free(f);
        gir_tensor_unref(t);
    }
    /* bfloat16 has no numpy type */
    gir_tensor *t;
    gir_shape s1 = { 1, { 2 } };
    TU_OK(gir_tensor_new(GIR_DT_BF16, &s1, &t, &err), &err);
    char *p2 = tu_tmp("bf.npy");
    TU_FAILS(gir_npy_write(p2, t, &err), &err, GIR_E_UNSUPPORTED, "bfloat16 has no .npy element type", "bf.npy");
    gir_error_clear(&err);
    assert_false(gir_path_exists(p2));
    gir_tensor_unref(t);
    free(p2);
    free(path);
}

static void test_write_overwrite_and_io(void **state)
{
    (void)state;
    char *sub = tu_tmp("sub");
    assert_int_equal(mkdir(sub, 0700), 0);
    char *path = tu_join(sub, "keep.npy");
    assert_true(tu_write(path, "old", 3));
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t;
    gir_shape s = { 1, { 4 } };
    TU_OK(gir_tensor_new(GIR_DT_F32, &s, &t, &err), &err);
    TU_FAILS(gir_npy_save(path, t, false, &err), &err, GIR_E_EXISTS, "keep.npy");
    gir_error_clear(&err);
    size_t len;
    char *f = tu_slurp(path, &len);
    assert_int_equal(len, 3);
    free(f);
    TU_OK(gir_npy_save(path, t, true, &err), &err);
    f = tu_slurp(path, &len);
    assert_int_equal(len, 128 + 16);
    free(f);
    assert_int_equal(tu_count_entries(sub), 1); /* no temporary left behind */
    char *nodir = tu_tmp("no/such/dir/x.npy");
    TU_FAILS(gir_npy_write(nodir, t, &err), &err, GIR_E_IO, "x.npy");
    gir_error_clear(&err);
    free(nodir);
    gir_tensor_unref(t);
    unlink(path);
    rmdir(sub);
    free(path);
    free(sub);
}

/* A lazily loaded tensor is loaded for writing and unloaded afterwards. */
static gir_status lazy_load(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    (void)err;
    int *loads = ctx;
    (*loads)++;
    memset(dst, 0x3f, (size_t)nbytes);
    return GIR_OK;
}

static gir_status lazy_fail(void *ctx, void *dst, uint64_t nbytes, gir_error *err)
{
    (void)ctx, (void)dst, (void)nbytes;
    return gir_fail(err, GIR_E_IO, "the weights file vanished");
}

static void test_write_lazy(void **state)
{
    (void)state;
    static const gir_loader ok = { lazy_load, NULL }, bad = { lazy_fail, NULL };
    int loads = 0;
    gir_shape s = { 2, { 2, 2 } };
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t;
    TU_OK(gir_tensor_lazy(GIR_DT_F32, &s, &ok, &loads, &t, &err), &err);
    char *path = tu_tmp("lazy.npy");
    TU_OK(gir_npy_write(path, t, &err), &err);
    assert_int_equal(loads, 1);
    assert_null(t->data);
    gir_tensor *r;
    TU_OK(gir_npy_read(path, &r, &err), &err);
    const void *d;
    TU_OK(gir_tensor_load(r, &d, &err), &err);
    assert_int_equal(((const unsigned char *)d)[15], 0x3f);
    gir_tensor_unref(r);
    gir_tensor_unref(t);
    unlink(path);

    TU_OK(gir_tensor_lazy(GIR_DT_F32, &s, &bad, NULL, &t, &err), &err);
    TU_FAILS(gir_npy_write(path, t, &err), &err, GIR_E_IO, "the weights file vanished", "lazy.npy");
    gir_error_clear(&err);
    assert_false(gir_path_exists(path));
    gir_tensor_unref(t);
    free(path);
}

/* ---- reading variants ---------------------------------------------------------- */

static void test_read_variants(void **state)
{
    (void)state;
    /* big-endian float32 and int16, native-order int32, uint64 */
    unsigned char bef[8] = { 0x3f, 0xc0, 0, 0, 0xc1, 0x20, 0, 0 }; /* 1.5, -10.0 */
    gir_tensor *t = parse_ok(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", bef, 8);
    const float *f = t->data;
    assert_true(f[0] == 1.5f && f[1] == -10.0f);
    gir_tensor_unref(t);
    unsigned char bei[4] = { 0xff, 0xfe, 0x01, 0x02 }; /* -2, 258 */
    t = parse_ok(1, "{'descr':'>i2','fortran_order':False,'shape':(1,2)}", bei, 4);
    const int16_t *s16 = t->data;
    assert_int_equal(t->shape.rank, 2);
    assert_true(s16[0] == -2 && s16[1] == 258);
    gir_tensor_unref(t);
    unsigned char beu[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    t = parse_ok(1, "{\"shape\": (1L,), \"fortran_order\": False, \"descr\": \">u8\"}", beu, 8);
    uint64_t u64;
    memcpy(&u64, t->data, 8);
    assert_true(u64 == UINT64_C(0x0102030405060708));
    assert_int_equal(t->dtype, GIR_DT_U64);
    gir_tensor_unref(t);
    unsigned char beh[2] = { 0x3c, 0x00 }; /* float16 1.0, big-endian */
    t = parse_ok(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (), }", beh, 2);
    assert_int_equal(t->shape.rank, 0);
    assert_int_equal(((uint16_t *)t->data)[0], 0x3c00);
    gir_tensor_unref(t);
    int32_t ni[2] = { 7, -7 };
    t = parse_ok(1, "{'descr': '=i4', 'fortran_order': False, 'shape': (2,), }", ni, 8);
    assert_memory_equal(t->data, ni, 8);
    gir_tensor_unref(t);
    /* bool bytes other than 0/1 are normalised; '>' on one-byte types is harmless */
    unsigned char bl[3] = { 0, 2, 255 };
    t = parse_ok(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bl, 3);
    assert_int_equal(t->dtype, GIR_DT_BOOL);
    assert_memory_equal(t->data, "\0\1\1", 3);
    gir_tensor_unref(t);
    signed char i8[2] = { -1, 5 };
    t = parse_ok(1, "{'descr': '>i1', 'fortran_order': False, 'shape': (2,), }", i8, 2);
    assert_memory_equal(t->data, i8, 2);
    gir_tensor_unref(t);
    /* versions 2.0 and 3.0 use a 4-byte header length */
    double dv[2] = { 0.25, -1e300 };
    t = parse_ok(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", dv, 16);
    assert_memory_equal(t->data, dv, 16);
    gir_tensor_unref(t);
    t = parse_ok(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", dv, 16);
    assert_memory_equal(t->data, dv, 16);
    gir_tensor_unref(t);
    /* zero elements */
    t = parse_ok(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", NULL, 0);
    assert_int_equal(t->nbytes, 0);
    gir_tensor_unref(t);
}

static void test_read_errors(void **state)
{
    (void)state;
    float four[4] = { 0 };
    const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
    expect_parse_fails("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four, 16, GIR_E_UNSUPPORTED,
                       "fortran_order True (column-major data) is not supported", "byte 10");
    expect_parse_fails("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", four, 16,
                       GIR_E_UNSUPPORTED, "structured arrays (a descr list) are not supported", "byte 20");
    expect_parse_fails("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", four, 16, GIR_E_DTYPE,
                       "descr '<c8' is not a supported element type", "byte 21");
    expect_parse_fails("{'descr': '|f4', 'fortran_order': False, 'shape': (4,), }", four, 16, GIR_E_DTYPE,
                       "descr '|f4' is not a supported element type", NULL);
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}", four, 16,
                       GIR_E_SYNTAX, "unknown header key 'extra'", "byte 66");
    expect_parse_fails("{'descr': '<f4', 'descr': '<f4', 'shape': (4,), }", four, 16, GIR_E_SYNTAX,
                       "header key 'descr' appears twice", "byte 27");
    expect_parse_fails("{'descr': '<f4', 'shape': (4,), }", four, 16, GIR_E_SYNTAX,
                       "the header has no 'fortran_order' key", NULL);
    expect_parse_fails("{'descr': '<f4', 'fortran_order': false, 'shape': (4,), }", four, 16, GIR_E_SYNTAX,
                       "expected True or False for fortran_order, found 'f'", "byte 44");
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (4), }", four, 16, GIR_E_SYNTAX,
                       "a one-dimensional shape needs a trailing comma, found ')'", "byte 62");
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': [4], }", four, 16, GIR_E_SYNTAX,
                       "expected '(' to start the shape, found '['", "byte 60");
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", four, 16, GIR_E_SYNTAX,
                       "expected a dimension or ')' in the shape, found '-'", NULL);
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,4), }", four, 16,
                       GIR_E_LIMIT, "the shape has more than 8 dimensions", NULL);
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", four, 16,
                       GIR_E_LIMIT, "dimension 0 of the shape is too large", "byte 61");
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", four, 16,
                       GIR_E_LIMIT, "tensor of float32 is larger than", NULL);
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } x", four, 16, GIR_E_SYNTAX,
                       "unexpected 'x' after the header dict", "byte 68");
    expect_parse_fails("{'descr': '<f4, 'fortran_order': False, 'shape': (4,), }", four, 16, GIR_E_DTYPE,
                       "descr '<f4, ' is not a supported element type", "byte 21");
    expect_parse_fails("{'descr' '<f4', 'fortran_order': False, 'shape': (4,), }", four, 16, GIR_E_SYNTAX,
                       "expected ':' after a header key, found byte 0x27", "byte 19");
    expect_parse_fails("{'descr': 'a\\b', 'fortran_order': False, 'shape': (4,), }", four, 16, GIR_E_SYNTAX,
                       "unexpected '\\' inside a string", NULL);
    expect_parse_fails("{'descr': '<f4' 'fortran_order': False, 'shape': (4,), }", four, 16, GIR_E_SYNTAX,
                       "expected '}' or ',' after a header value, found byte 0x27", NULL);
    expect_parse_fails("'descr': '<f4'", four, 16, GIR_E_SYNTAX, "expected '{' to start the header, found byte 0x27",
                       "byte 10");
    expect_parse_fails("{'descr': '<f4', 'fortran_order': False, 'shape': (4,", four, 16, GIR_E_SYNTAX,
                       "expected a dimension or ')' in the shape, found the end of the header", NULL);
    /* data size */
    expect_parse_fails(ok, four, 12, GIR_E_PARAMS, "float32 [4] needs 16 data bytes, the file has 12", "byte 68");
    expect_parse_fails(ok, four, 16 - 16, GIR_E_PARAMS, "needs 16 data bytes, the file has 0", NULL);
    unsigned char more[20] = { 0 };
    expect_parse_fails(ok, more, 20, GIR_E_PARAMS, "needs 16 data bytes, the file has 20", NULL);

    /* magic, version, header length */
    gir_error err = GIR_ERROR_INIT;
    gir_tensor *t;
    TU_FAILS(gir_npy_parse("PK\3\4 not npy", 12, "x.npy", &t, &err), &err, GIR_E_SYNTAX,
             "x.npy: byte 0: not a .npy file: the \\x93NUMPY magic string is missing");
    gir_error_clear(&err);
    TU_FAILS(gir_npy_parse("\x93NUMPY\x04\x00\x10\x00", 10, "x.npy", &t, &err), &err, GIR_E_UNSUPPORTED,
             "x.npy: byte 6: .npy format version 4.0 is not supported");
    gir_error_clear(&err);
    TU_FAILS(gir_npy_parse("\x93NUMPY\x01\x00\xff\x00{}", 12, "x.npy", &t, &err), &err, GIR_E_SYNTAX,
             "x.npy: byte 8: header declares 255 bytes but the file has only 2 after byte 10");
    gir_error_clear(&err);
    TU_FAILS(gir_npy_parse("\x93NUMPY\x02\x00\x00\x00\x00\x10", 12, "x.npy", &t, &err), &err, GIR_E_LIMIT,
             "header of 268435456 bytes is larger than the 1048576 allowed");
    gir_error_clear(&err);
    TU_FAILS(gir_npy_parse("\x93NUMPY\x02\x00\x05", 9, "x.npy", &t, &err), &err, GIR_E_SYNTAX,
             "the file ends inside the header length");
    gir_error_clear(&err);
    char *missing = tu_tmp("missing.npy");
    TU_FAILS(gir_npy_read(missing, &t, &err), &err, GIR_E_IO, "missing.npy: cannot open");
    gir_error_clear(&err);
    free(missing);
    /* a file on disk carries its path */
    char *bad = tu_tmp("short.npy");
    size_t len;
    unsigned char *img = npy_image(1, ok, four, 8, &len);
    assert_true(tu_write(bad, img, len));
    free(img);
    TU_FAILS(gir_npy_read(bad, &t, &err), &err, GIR_E_PARAMS, "short.npy: byte 68: float32 [4] needs 16 data bytes");
    gir_error_clear(&err);
    unlink(bad);
    free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_fixtures),
        cmocka_unit_test(test_roundtrip_all_types),
        cmocka_unit_test(test_write_header_text),
        cmocka_unit_test(test_write_overwrite_and_io),
        cmocka_unit_test(test_write_lazy),
        cmocka_unit_test(test_read_variants),
        cmocka_unit_test(test_read_errors),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
