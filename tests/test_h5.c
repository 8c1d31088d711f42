/* lib/io/h5: NNabla-style parameter.h5 listing, reading and deterministic
 * writing; refusals of files the reader must not trust. */
#include "testutil.h"

#include <hdf5.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/h5.h"
#include "io/zip.h"

static int setup(void **state)
{
    /* The tests build odd files with HDF5 directly: keep it quiet too. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return tu_setup_tempdir(state);
}

/* ---- writing through the library ----------------------------------------- */

typedef struct wctx {
    const void **data;
    size_t gets, puts;
    size_t fail_at; /* get_data fails for this index (SIZE_MAX: never) */
    size_t loaded;  /* currently "loaded" tensors: must stay <= 1 */
    size_t max_loaded;
} wctx;

static gir_status get_data(void *ctx, size_t i, const void **data, gir_error *err)
{
    wctx *c = ctx;
    c->gets++;
    if (i == c->fail_at)
        return gir_fail(err, GIR_E_IO, "tensor %zu cannot be loaded", i);
    *data = c->data[i];
    c->loaded++;
    if (c->loaded > c->max_loaded)
        c->max_loaded = c->loaded;
    return GIR_OK;
}

static void put_data(void *ctx, size_t i)
{
    (void)i;
    wctx *c = ctx;
    c->puts++;
    c->loaded--;
}

static const float W1[2][3] = { { 1.5f, -2.0f, 3.25f }, { 0.0f, -0.0f, 1e-30f } };
static const float B1[3] = { 0.5f, 0.25f, -8.0f };
static const double D1[2] = { 1e300, -3.0 };
static const int32_t I1[4] = { -7, 0, 7, 2147483647 };
static const uint8_t BL[3] = { 1, 0, 1 };
static const uint16_t H1[2] = { 0x3c00, 0xc000 }; /* 1.0, -2.0 as float16 */
static const float S1 = 42.0f;

#define NPARAMS 7
static gir_h5_param sample_params[NPARAMS] = {
    { "conv1/conv/W", GIR_DT_F32, { 2, { 2, 3 } }, true, 0, true },
    { "conv1/conv/b", GIR_DT_F32, { 1, { 3 } }, true, 1, true },
    { "bn/mean", GIR_DT_F64, { 1, { 2 } }, false, 2, true },
    { "ints", GIR_DT_I32, { 2, { 2, 2 } }, false, 3, true },
    { "flags", GIR_DT_BOOL, { 1, { 3 } }, false, 4, true },
    { "a/b/c/d/half", GIR_DT_F16, { 1, { 2 } }, true, 5, true },
    { "scalar", GIR_DT_F32, { 0, { 0 } }, true, 6, true },
};
static const void *sample_data[NPARAMS] = { W1, B1, D1, I1, BL, H1, &S1 };

static void write_sample(const char *path)
{
    gir_error err = GIR_ERROR_INIT;
    wctx c = { sample_data, 0, 0, SIZE_MAX, 0, 0 };
    TU_OK(gir_h5_write(path, sample_params, NPARAMS, get_data, put_data, &c, &err), &err);
    assert_int_equal(c.gets, NPARAMS);
    assert_int_equal(c.puts, NPARAMS);
    assert_int_equal(c.max_loaded, 1); /* one parameter at a time */
}

static void test_write_list_read(void **state)
{
    (void)state;
    char *path = tu_tmp("p.h5");
    write_sample(path);
    size_t len;
    char *img = tu_slurp(path, &len);
    assert_non_null(img);

    gir_error err = GIR_ERROR_INIT;
    gir_h5_param *ps;
    size_t n;
    TU_OK(gir_h5_list(img, len, &ps, &n, &err), &err);
    assert_int_equal(n, NPARAMS);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ps[i].name, sample_params[i].name);
        assert_int_equal(ps[i].dtype, sample_params[i].dtype);
        assert_true(gir_shape_equal(&ps[i].shape, &sample_params[i].shape));
        assert_int_equal(ps[i].need_grad, sample_params[i].need_grad);
        assert_true(ps[i].has_index);
        assert_int_equal(ps[i].index, (int64_t)i);
    }
    gir_h5_params_free(ps, n);

    float w[6];
    TU_OK(gir_h5_read(img, len, "conv1/conv/W", w, sizeof w, GIR_DT_F32, &err), &err);
    assert_memory_equal(w, W1, sizeof w);
    TU_OK(gir_h5_read(img, len, "/conv1/conv/b", w, 12, GIR_DT_F32, &err), &err);
    assert_memory_equal(w, B1, 12);
    /* values are read in their stored type: no conversions */
    double dw[6];
    TU_FAILS(gir_h5_read(img, len, "conv1/conv/W", dw, sizeof dw, GIR_DT_F64, &err), &err, GIR_E_DTYPE,
             "dataset 'conv1/conv/W' holds float32, which cannot be read as float64");
    gir_error_clear(&err);
    int32_t i32[4];
    TU_OK(gir_h5_read(img, len, "ints", i32, sizeof i32, GIR_DT_I32, &err), &err);
    assert_memory_equal(i32, I1, sizeof i32);
    uint16_t hh[2];
    TU_OK(gir_h5_read(img, len, "a/b/c/d/half", hh, sizeof hh, GIR_DT_F16, &err), &err);
    assert_memory_equal(hh, H1, sizeof hh);
    double md[2];
    TU_OK(gir_h5_read(img, len, "bn/mean", md, sizeof md, GIR_DT_F64, &err), &err);
    assert_memory_equal(md, D1, sizeof md);
    uint8_t bl[3];
    TU_OK(gir_h5_read(img, len, "flags", bl, sizeof bl, GIR_DT_BOOL, &err), &err);
    assert_memory_equal(bl, BL, 3);
    float s;
    TU_OK(gir_h5_read(img, len, "scalar", &s, sizeof s, GIR_DT_F32, &err), &err);
    assert_true(s == 42.0f);

    /* wrong sizes, names and types */
    TU_FAILS(gir_h5_read(img, len, "conv1/conv/W", w, 20, GIR_DT_F32, &err), &err, GIR_E_SHAPE,
             "dataset 'conv1/conv/W' of shape [2,3] holds 24 bytes as float32, not 20");
    gir_error_clear(&err);
    TU_FAILS(gir_h5_read(img, len, "conv1/conv/W", w, 20, GIR_DT_F32, &err), &err, GIR_E_SHAPE,
             "holds 24 bytes as float32, not 20");
    gir_error_clear(&err);
    TU_FAILS(gir_h5_read(img, len, "conv1/conv/X", w, 24, GIR_DT_F32, &err), &err, GIR_E_REFERENCE,
             "cannot open dataset 'conv1/conv/X'");
    gir_error_clear(&err);
    TU_FAILS(gir_h5_read(img, len, "nope/W", w, 24, GIR_DT_F32, &err), &err, GIR_E_REFERENCE,
             "cannot open dataset 'nope/W'");
    gir_error_clear(&err);
    TU_FAILS(gir_h5_read(img, len, "conv1/conv", w, 24, GIR_DT_F32, &err), &err, GIR_E_REFERENCE,
             "cannot open dataset 'conv1/conv'");
    gir_error_clear(&err);
    TU_FAILS(gir_h5_read(img, len, "/", w, 24, GIR_DT_F32, &err), &err, GIR_E_ARGUMENT, "empty dataset name");
    gir_error_clear(&err);
    TU_FAILS(gir_h5_read(img, len, "flags", w, 12, GIR_DT_F32, &err), &err, GIR_E_DTYPE,
             "dataset 'flags' holds bool, which cannot be read as float32");
    gir_error_clear(&err);

    /* the open-once handle gives the same answers */
    gir_h5 *h;
    TU_OK(gir_h5_open(img, len, &h, &err), &err);
    gir_h5 *h2 = gir_h5_ref(h);
    gir_h5_close(h);
    TU_OK(gir_h5_list_open(h2, &ps, &n, &err), &err);
    assert_int_equal(n, NPARAMS);
    gir_h5_params_free(ps, n);
    TU_OK(gir_h5_read_open(h2, "conv1/conv/W", w, 24, GIR_DT_F32, &err), &err);
    assert_memory_equal(w, W1, 24);
    gir_h5_close(h2);
    free(img);
    free(path);
}

static void test_write_deterministic(void **state)
{
    (void)state;
    char *a = tu_tmp("d1.h5"), *b = tu_tmp("d2.h5");
    write_sample(a);
    sleep(1); /* time stamps, if any were written, would now differ */
    write_sample(b);
    assert_true(tu_files_equal(a, b));
    free(a);
    free(b);
}

static char *run_capture(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    gir_buf b = GIR_BUF_INIT;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
        gir_buf_append(&b, chunk, got);
    int rc = pclose(p);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
    char *s = gir_buf_take(&b);
    assert_non_null(s);
    return s;
}

static void test_layout_h5dump(void **state)
{
    (void)state;
    if (!tu_have_program("h5dump")) {
        print_message("h5dump is not installed: skipping the layout check\n");
        skip();
    }
    char *path = tu_tmp("layout.h5");
    write_sample(path);
    char *cmd = gir_strdupf("h5dump -p -A -g /conv1 '%s'", path);
    char *out = run_capture(cmd);
    static const char expect[] =
        "GROUP \"/conv1\" {\n"
        "   GROUP \"conv\" {\n"
        "      DATASET \"W\" {\n"
        "         DATATYPE  H5T_IEEE_F32LE\n"
        "         DATASPACE  SIMPLE { ( 2, 3 ) / ( 2, 3 ) }\n"
        "         STORAGE_LAYOUT {\n"
        "            CONTIGUOUS\n"
        "            SIZE 24\n";
    assert_non_null(strstr(out, expect));
    static const char expect_attrs[] =
        "         ATTRIBUTE \"index\" {\n"
        "            DATATYPE  H5T_STD_I64LE\n"
        "            DATASPACE  SCALAR\n"
        "            DATA {\n"
        "            (0): 1\n"
        "            }\n"
        "         }\n"
        "         ATTRIBUTE \"need_grad\" {\n"
        "            DATATYPE  H5T_ENUM {\n"
        "               H5T_STD_I8LE;\n"
        "               \"FALSE\"            0;\n"
        "               \"TRUE\"             1;\n"
        "            }\n"
        "            DATASPACE  SCALAR\n"
        "            DATA {\n"
        "            (0): TRUE\n"
        "            }\n"
        "         }\n";
    assert_non_null(strstr(out, expect_attrs));
    assert_non_null(strstr(out, "            SIZE 24\n            OFFSET "));
    assert_non_null(strstr(out, "         FILTERS {\n            NONE\n         }\n"));
    free(out);
    free(cmd);
    /* the data as h5dump sees it */
    cmd = gir_strdupf("h5dump -d /conv1/conv/W -y -w 0 '%s'", path);
    out = run_capture(cmd);
    assert_non_null(strstr(out, "      1.5, -2, 3.25,\n      0, -0, 1e-30\n"));
    free(out);
    free(cmd);
    cmd = gir_strdupf("h5dump -d /flags -y -w 0 '%s'", path);
    out = run_capture(cmd);
    assert_non_null(strstr(out, "      TRUE, FALSE, TRUE\n"));
    free(out);
    free(cmd);
    free(path);
}

static void test_write_refusals(void **state)
{
    (void)state;
    char *path = tu_tmp("bad.h5");
    gir_error err = GIR_ERROR_INIT;
    wctx c = { sample_data, 0, 0, SIZE_MAX, 0, 0 };
    static const char *const bad_names[] = { "", "/a", "a/", "a//b", "a/./b", "../a", "a/.." };
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        gir_h5_param p = { (char *)bad_names[i], GIR_DT_F32, { 1, { 3 } }, false, 0, true };
        TU_FAILS(gir_h5_write(path, &p, 1, get_data, put_data, &c, &err), &err, GIR_E_ARGUMENT, "bad.h5");
        gir_error_clear(&err);
        assert_false(gir_path_exists(path));
    }
    gir_h5_param unk = { "x", GIR_DT_UNKNOWN, { 1, { 3 } }, false, 0, true };
    TU_FAILS(gir_h5_write(path, &unk, 1, get_data, put_data, &c, &err), &err, GIR_E_DTYPE,
             "parameter 'x' has no known element type");
    gir_error_clear(&err);
    gir_h5_param unknown_dim = { "x", GIR_DT_F32, { 1, { -1 } }, false, 0, true };
    TU_FAILS(gir_h5_write(path, &unknown_dim, 1, get_data, put_data, &c, &err), &err, GIR_E_SHAPE,
             "dimension 0 is unknown");
    gir_error_clear(&err);

    /* duplicates and group/dataset clashes */
    gir_h5_param dup[2] = {
        { "g/x", GIR_DT_F32, { 1, { 3 } }, false, 0, true },
        { "g/x", GIR_DT_F32, { 1, { 3 } }, false, 1, true },
    };
    const void *dd[2] = { B1, B1 };
    wctx c2 = { dd, 0, 0, SIZE_MAX, 0, 0 };
    TU_FAILS(gir_h5_write(path, dup, 2, get_data, put_data, &c2, &err), &err, GIR_E_DUPLICATE,
             "parameter 'g/x' appears more than once", "bad.h5");
    gir_error_clear(&err);
    assert_false(gir_path_exists(path));
    dup[1].name = "g/x/y";
    TU_FAILS(gir_h5_write(path, dup, 2, get_data, put_data, &c2, &err), &err, GIR_E_DUPLICATE,
             "parameter 'g/x/y' needs a group 'g/x', which is a parameter");
    gir_error_clear(&err);
    dup[0].name = "g/x/y";
    dup[1].name = "g/x";
    TU_FAILS(gir_h5_write(path, dup, 2, get_data, put_data, &c2, &err), &err, GIR_E_DUPLICATE,
             "parameter 'g/x' is also the group of other parameters");
    gir_error_clear(&err);

    /* a failing get_data stops the write and leaves no file */
    c = (wctx){ sample_data, 0, 0, 2, 0, 0 };
    TU_FAILS(gir_h5_write(path, sample_params, NPARAMS, get_data, put_data, &c, &err), &err, GIR_E_IO,
             "tensor 2 cannot be loaded", "bad.h5");
    assert_non_null(err.node);
    assert_string_equal(err.node, "bn/mean");
    gir_error_clear(&err);
    assert_int_equal(c.gets, 3);
    assert_int_equal(c.puts, 2);
    assert_false(gir_path_exists(path));
    /* an unwritable place */
    char *nodir = tu_tmp("no/such/dir.h5");
    c = (wctx){ sample_data, 0, 0, SIZE_MAX, 0, 0 };
    TU_FAILS(gir_h5_write(nodir, sample_params, 1, get_data, put_data, &c, &err), &err, GIR_E_IO,
             "cannot create the HDF5 file", "dir.h5");
    gir_error_clear(&err);
    free(nodir);
    /* zero parameters: an empty but valid file */
    TU_OK(gir_h5_write(path, NULL, 0, get_data, put_data, &c, &err), &err);
    size_t len;
    char *img = tu_slurp(path, &len);
    gir_h5_param *ps;
    size_t n;
    TU_OK(gir_h5_list(img, len, &ps, &n, &err), &err);
    assert_int_equal(n, 0);
    gir_h5_params_free(ps, n);
    free(img);
    free(path);
}

/* ---- a real file ---------------------------------------------------------- */

/* Every parameter.h5 inside the real .nnp files: our reader lists exactly
 * the datasets `h5ls -r` lists (name and dimensions) and reads the bytes
 * `h5dump -b LE` writes for each. */
static void compare_with_h5dump(const char *nnp)
{
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(nnp, NULL, &z, &err), &err);
    ptrdiff_t k = gir_zip_find(z, "parameter.h5");
    if (k < 0) {
        gir_zip_close(z);
        return;
    }
    void *img;
    size_t len;
    TU_OK(gir_zip_read(z, (size_t)k, &img, &len, &err), &err);
    gir_zip_close(z);
    char *h5 = tu_tmp("real.h5"), *bin = tu_tmp("real.bin");
    FILE *f = fopen(h5, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(img, 1, len, f), len);
    fclose(f);
    gir_h5_param *ps;
    size_t n;
    TU_OK(gir_h5_list(img, len, &ps, &n, &err), &err);
    char *cmd = gir_strdupf("h5ls -r '%s' | grep ' Dataset ' | sort", h5);
    char *ls = run_capture(cmd);
    free(cmd);
    gir_buf mine = GIR_BUF_INIT;
    char **sorted = calloc(n ? n : 1, sizeof *sorted);
    for (size_t i = 0; i < n; i++) {
        gir_buf b = GIR_BUF_INIT;
        gir_buf_printf(&b, "/%s", ps[i].name);
        /* h5ls pads the name to 24 columns */
        while (b.len < 24)
            gir_buf_putc(&b, ' ');
        gir_buf_puts(&b, " Dataset {");
        for (int d = 0; d < ps[i].shape.rank; d++)
            gir_buf_printf(&b, "%s%lld", d ? ", " : "", (long long)ps[i].shape.dims[d]);
        gir_buf_puts(&b, ps[i].shape.rank ? "}\n" : "SCALAR}\n");
        sorted[i] = gir_buf_take(&b);
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
            char *t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        gir_buf_puts(&mine, sorted[i]);
        free(sorted[i]);
    }
    free(sorted);
    char *m = gir_buf_take(&mine);
    assert_string_equal(m ? m : "", ls);
    free(m);
    free(ls);
    for (size_t i = 0; i < n; i++) {
        uint64_t nb;
        TU_OK(gir_tensor_size(ps[i].dtype, &ps[i].shape, &nb, &err), &err);
        void *mine_data = malloc(nb ? nb : 1);
        TU_OK(gir_h5_read(img, len, ps[i].name, mine_data, nb, ps[i].dtype, &err), &err);
        cmd = gir_strdupf("h5dump -b LE -d '/%s' -o '%s' '%s' >/dev/null", ps[i].name, bin, h5);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        size_t blen;
        char *ref = tu_slurp(bin, &blen);
        assert_int_equal(blen, nb);
        assert_memory_equal(ref, mine_data, nb);
        free(ref);
        free(mine_data);
    }
    gir_h5_params_free(ps, n);
    free(img);
    free(h5);
    free(bin);
}

static void test_real_files_h5dump(void **state)
{
    (void)state;
    if (!tu_have_program("h5dump") || !tu_have_program("h5ls")) {
        print_message("h5dump/h5ls are not installed: skipping\n");
        skip();
    }
    static const char *const dirs[] = { "realworld/nnp", "realworld/nnp-onnx-pairs", "incoming/nnp" };
    int files = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char *dir = tu_shared(dirs[d]);
        char *cmd = gir_strdupf("ls '%s' | grep '[.]nnp$' || true", dir);
        char *list = run_capture(cmd);
        free(cmd);
        for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
            char *path = gir_strdupf("%s/%s", dir, line);
            compare_with_h5dump(path);
            free(path);
            files++;
        }
        free(list);
        free(dir);
    }
    assert_true(files > 0);
}


static void test_real_model_simple(void **state)
{
    (void)state;
    char *nnp = tu_shared("realworld/nnp/model_simple.nnp");
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(nnp, NULL, &z, &err), &err);
    ptrdiff_t k = gir_zip_find(z, "parameter.h5");
    assert_true(k >= 0);
    void *img;
    size_t len;
    TU_OK(gir_zip_read(z, (size_t)k, &img, &len, &err), &err);
    gir_zip_close(z);
    assert_int_equal(len, 10696);

    gir_h5_param *ps;
    size_t n;
    TU_OK(gir_h5_list(img, len, &ps, &n, &err), &err);
    assert_int_equal(n, 4);
    static const char *const names[] = { "affine_1/affine/W", "affine_1/affine/b", "affine_2/affine/W",
                                         "affine_2/affine/b" };
    static const gir_shape shapes[] = { { 2, { 10, 50 } }, { 1, { 50 } }, { 2, { 50, 10 } }, { 1, { 10 } } };
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ps[i].name, names[i]);
        assert_int_equal(ps[i].dtype, GIR_DT_F32);
        assert_true(gir_shape_equal(&ps[i].shape, &shapes[i]));
        assert_true(ps[i].need_grad);
        assert_true(ps[i].has_index);
        assert_int_equal(ps[i].index, (int64_t)i);
    }
    gir_h5_params_free(ps, n);
    float w[500];
    TU_OK(gir_h5_read(img, len, "affine_1/affine/W", w, sizeof w, GIR_DT_F32, &err), &err);
    assert_float_equal(w[0], -0.307978, 1e-6);
    assert_float_equal(w[1], 0.208199, 1e-6);
    assert_float_equal(w[2], -0.140669, 1e-6);
    float b[10];
    TU_OK(gir_h5_read(img, len, "affine_2/affine/b", b, sizeof b, GIR_DT_F32, &err), &err);
    assert_float_equal(b[0], -0.206969, 1e-6);
    assert_float_equal(b[9], -0.124104, 1e-6);
    free(img);
    free(nnp);
}

/* ---- files crafted with HDF5 directly -------------------------------------- */

static hid_t new_file(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    return f;
}

static hid_t add_dset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(loc, name, type, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    H5Sclose(sp);
    H5Pclose(lcpl);
    return d;
}

static void add_attr(hid_t obj, const char *name, hid_t type, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, type, v) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
}

static char *image_of(const char *path, size_t *len)
{
    char *img = tu_slurp(path, len);
    assert_non_null(img);
    return img;
}

static void expect_list_fails(const char *path, gir_status code, const char *m1, const char *m2)
{
    size_t len;
    char *img = image_of(path, &len);
    gir_error err = GIR_ERROR_INIT;
    gir_h5_param *ps = (gir_h5_param *)1;
    size_t n = 7;
    TU_FAILS(gir_h5_list(img, len, &ps, &n, &err), &err, code, m1, m2 ? m2 : m1);
    assert_null(ps);
    assert_int_equal(n, 0);
    gir_error_clear(&err);
    free(img);
}

static void test_order_and_attributes(void **state)
{
    (void)state;
    /* index of any width restores the order; no index sorts by name after
     * the indexed ones; need_grad as a plain integer or absent. */
    char *path = tu_tmp("order.h5");
    hid_t f = new_file(path);
    hsize_t d2[1] = { 2 };
    hid_t d;
    int32_t i32 = 1;
    uint8_t u8 = 0;
    int16_t i16 = 5;
    int64_t big = INT64_C(1) << 40;
    uint8_t yes = 1;
    d = add_dset(f, "Affine/affine/W", H5T_IEEE_F32BE, 1, d2); /* big-endian data */
    add_attr(d, "index", H5T_STD_I32LE, &i32);
    add_attr(d, "need_grad", H5T_NATIVE_UINT8, &yes);
    float be[2] = { 1.25f, -4.0f };
    assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, be) >= 0);
    H5Dclose(d);
    d = add_dset(f, "Convolution/conv/W", H5T_IEEE_F32LE, 1, d2);
    add_attr(d, "index", H5T_STD_U8LE, &u8);
    H5Dclose(d);
    d = add_dset(f, "zz_noindex", H5T_STD_I64BE, 1, d2);
    H5Dclose(d);
    d = add_dset(f, "aa_noindex", H5T_STD_U16LE, 0, NULL);
    H5Dclose(d);
    d = add_dset(f, "tie_b", H5T_IEEE_F64LE, 1, d2);
    add_attr(d, "index", H5T_STD_I16BE, &i16);
    H5Dclose(d);
    d = add_dset(f, "tie_a", H5T_STD_I8LE, 1, d2);
    add_attr(d, "index", H5T_STD_I16LE, &i16);
    H5Dclose(d);
    d = add_dset(f, "huge_index", H5T_STD_U64LE, 1, d2);
    add_attr(d, "index", H5T_STD_I64LE, &big);
    H5Dclose(d);
    /* a named datatype is not a parameter */
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    assert_true(H5Tcommit2(f, "a_type", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Tclose(t);
    H5Fclose(f);

    size_t len;
    char *img = image_of(path, &len);
    gir_error err = GIR_ERROR_INIT;
    gir_h5_param *ps;
    size_t n;
    TU_OK(gir_h5_list(img, len, &ps, &n, &err), &err);
    assert_int_equal(n, 7);
    static const char *const order[] = { "Convolution/conv/W", "Affine/affine/W", "tie_a", "tie_b", "huge_index",
                                         "aa_noindex", "zz_noindex" };
    static const gir_dtype types[] = { GIR_DT_F32, GIR_DT_F32, GIR_DT_I8, GIR_DT_F64, GIR_DT_U64, GIR_DT_U16,
                                       GIR_DT_I64 };
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ps[i].name, order[i]);
        assert_int_equal(ps[i].dtype, types[i]);
    }
    assert_int_equal(ps[0].index, 0);
    assert_false(ps[0].need_grad);
    assert_int_equal(ps[1].index, 1);
    assert_true(ps[1].need_grad);
    assert_int_equal(ps[2].index, 5);
    assert_int_equal(ps[4].index, INT64_C(1) << 40);
    assert_false(ps[5].has_index);
    assert_int_equal(ps[5].index, -1);
    assert_int_equal(ps[5].shape.rank, 0);
    gir_h5_params_free(ps, n);
    float v[2];
    TU_OK(gir_h5_read(img, len, "Affine/affine/W", v, sizeof v, GIR_DT_F32, &err), &err);
    assert_true(v[0] == 1.25f && v[1] == -4.0f);
    free(img);
    free(path);
}

static void test_read_refusals(void **state)
{
    (void)state;
    char *path = tu_tmp("refuse.h5");
    hsize_t d1[1] = { 4 };
    hid_t f, d, t;

    /* a string dataset */
    f = new_file(path);
    t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 8);
    d = add_dset(f, "g/names", t, 1, d1);
    H5Dclose(d);
    H5Tclose(t);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_DTYPE, "dataset 'g/names' has 8-byte string elements, which are not supported",
                      NULL);

    /* a compound dataset */
    f = new_file(path);
    t = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(t, "a", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(t, "b", 4, H5T_NATIVE_FLOAT);
    d = add_dset(f, "pair", t, 1, d1);
    H5Dclose(d);
    H5Tclose(t);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_DTYPE, "dataset 'pair' has 8-byte compound elements", NULL);

    /* rank 9 */
    f = new_file(path);
    hsize_t d9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 2 };
    d = add_dset(f, "deep", H5T_IEEE_F32LE, 9, d9);
    H5Dclose(d);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_LIMIT, "dataset 'deep' has rank 9, more than the 8 supported", NULL);

    /* a byte count that overflows */
    f = new_file(path);
    hsize_t dh[3] = { (hsize_t)1 << 40, (hsize_t)1 << 40, 1 << 20 };
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t ch[3] = { 1, 1, 1 };
    H5Pset_chunk(dcpl, 3, ch);
    hid_t sp = H5Screate_simple(3, dh, NULL);
    d = H5Dcreate2(f, "huge", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    assert_true(d >= 0);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_LIMIT, "tensor of float32 is larger than", "node 'huge'");

    /* a float index */
    f = new_file(path);
    d = add_dset(f, "w", H5T_IEEE_F32LE, 1, d1);
    double fi = 1.0;
    add_attr(d, "index", H5T_IEEE_F64LE, &fi);
    H5Dclose(d);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_PARAMS, "dataset 'w': attribute index is float, expected an integer", NULL);

    /* a soft link and an external link */
    f = new_file(path);
    d = add_dset(f, "w", H5T_IEEE_F32LE, 1, d1);
    H5Dclose(d);
    assert_true(H5Lcreate_soft("/w", f, "alias", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_UNSUPPORTED, "'/alias' is a soft or external link", NULL);
    f = new_file(path);
    assert_true(H5Lcreate_external("/etc/some.h5", "/x", f, "ext", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    /* (an external link makes HDF5 store the group in its 1.8 format) */
    expect_list_fails(path, GIR_E_UNSUPPORTED,
                      "the root group is stored in the HDF5 1.8 format (libver='latest'), which is not supported",
                      NULL);
    /* ... and reading through one is refused too */
    f = new_file(path);
    d = add_dset(f, "w", H5T_IEEE_F32LE, 1, d1);
    H5Dclose(d);
    assert_true(H5Lcreate_soft("/w", f, "alias", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(f);
    size_t len;
    char *img = image_of(path, &len);
    float v[4];
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_h5_read(img, len, "w", v, sizeof v, GIR_DT_F32, &err), &err);
    TU_FAILS(gir_h5_read(img, len, "alias", v, sizeof v, GIR_DT_F32, &err), &err, GIR_E_UNSUPPORTED,
             "'/alias' is a soft or external link, which is not supported");
    gir_error_clear(&err);
    free(img);

    /* data in an external raw file */
    f = new_file(path);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, "/etc/passwd", 0, 16);
    sp = H5Screate_simple(1, d1, NULL);
    d = H5Dcreate2(f, "leak", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    assert_true(d >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_UNSUPPORTED, "dataset 'leak' keeps its data in other files", NULL);
    img = image_of(path, &len);
    TU_FAILS(gir_h5_read(img, len, "leak", v, sizeof v, GIR_DT_F32, &err), &err, GIR_E_UNSUPPORTED,
             "dataset 'leak' keeps its data in other files");
    gir_error_clear(&err);
    free(img);

    /* groups nested 70 deep */
    f = new_file(path);
    gir_buf b = GIR_BUF_INIT;
    for (int i = 0; i < 70; i++)
        gir_buf_puts(&b, i ? "/g" : "g");
    gir_buf_puts(&b, "/w");
    d = add_dset(f, b.data, H5T_IEEE_F32LE, 1, d1);
    gir_buf_free(&b);
    H5Dclose(d);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_LIMIT, "is nested deeper than 64 levels", NULL);

    /* a group that contains itself (hard link cycle) */
    f = new_file(path);
    hid_t g = H5Gcreate2(f, "loop", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Lcreate_hard(g, ".", g, "again", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Gclose(g);
    H5Fclose(f);
    expect_list_fails(path, GIR_E_UNSUPPORTED,
                      "'/loop/again' links to an object that is linked elsewhere too, which is not supported", NULL);
    free(path);
}


/* Variants of the subset written by libhdf5 are read; what lies outside it
 * is refused by name. */
static void test_subset_variants(void **state)
{
    (void)state;
    char *path = tu_tmp("variant.h5");
    hsize_t d3[1] = { 3 };
    static const float v3[3] = { 1.5f, -2.0f, 0.25f };
    gir_error err = GIR_ERROR_INIT;
    for (int variant = 0; variant < 6; variant++) {
        hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hsize_t ch[1] = { 3 };
        if (variant == 0)
            H5Pset_sizes(fcpl, 4, 4); /* 4-byte offsets and lengths */
        if (variant == 1)
            H5Pset_istore_k(fcpl, 64); /* superblock version 1 */
        if (variant == 2)
            H5Pset_layout(dcpl, H5D_COMPACT);
        if (variant == 3)
            H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
        if (variant == 4)
            H5Pset_chunk(dcpl, 1, ch);
        if (variant == 5) {
            H5Pset_chunk(dcpl, 1, ch);
            H5Pset_deflate(dcpl, 6);
        }
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
        assert_true(f >= 0);
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        hid_t sp = H5Screate_simple(1, d3, NULL);
        hid_t d = H5Dcreate2(f, "g/w", H5T_IEEE_F32LE, sp, lcpl, dcpl, H5P_DEFAULT);
        assert_true(d >= 0);
        assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v3) >= 0);
        int64_t idx = 7;
        add_attr(d, "index", H5T_STD_I64LE, &idx);
        H5Dclose(d);
        H5Sclose(sp);
        H5Pclose(lcpl);
        H5Pclose(dcpl);
        H5Pclose(fcpl);
        H5Pclose(fapl);
        H5Fclose(f);
        size_t len;
        char *img = image_of(path, &len);
        gir_h5_param *ps;
        size_t n;
        gir_status st = gir_h5_list(img, len, &ps, &n, &err);
        if (variant <= 2) {
            TU_OK(st, &err);
            assert_int_equal(n, 1);
            assert_string_equal(ps[0].name, "g/w");
            assert_int_equal(ps[0].index, 7);
            gir_h5_params_free(ps, n);
            float got[3];
            TU_OK(gir_h5_read(img, len, "g/w", got, sizeof got, GIR_DT_F32, &err), &err);
            assert_memory_equal(got, v3, sizeof got);
        } else {
            static const char *const why[] = { "HDF5 superblock version 3 (a file written with libver='latest') is "
                                               "not supported",
                                               "dataset 'g/w' is stored in chunks, which is not supported",
                                               "dataset 'g/w' is filtered (compressed), which is not supported" };
            assert_int_equal(st, GIR_E_UNSUPPORTED);
            assert_non_null(strstr(err.message, why[variant - 3]));
            gir_error_clear(&err);
        }
        free(img);
    }
    free(path);
}

static void test_bad_images(void **state)
{
    (void)state;
    gir_error err = GIR_ERROR_INIT;
    gir_h5_param *ps;
    size_t n;
    TU_FAILS(gir_h5_list("", 0, &ps, &n, &err), &err, GIR_E_PARAMS, "the HDF5 file is empty");
    gir_error_clear(&err);
    static const char junk[] = "this is not an HDF5 file, just some text that goes on for a while";
    TU_FAILS(gir_h5_list(junk, sizeof junk, &ps, &n, &err), &err, GIR_E_PARAMS, "not a readable HDF5 file: ");
    gir_error_clear(&err);
    float v[3];
    TU_FAILS(gir_h5_read(junk, sizeof junk, "w", v, sizeof v, GIR_DT_F32, &err), &err, GIR_E_PARAMS,
             "not a readable HDF5 file");
    gir_error_clear(&err);

    /* truncated copies of a valid file fail cleanly at every length tried */
    char *path = tu_tmp("trunc.h5");
    write_sample(path);
    size_t len;
    char *img = image_of(path, &len);
    size_t cuts[] = { 8, 100, 512, 800, len / 2, len - 200, len - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char *part = malloc(cuts[i]);
        memcpy(part, img, cuts[i]);
        gir_status st = gir_h5_list(part, cuts[i], &ps, &n, &err);
        if (st == GIR_OK) {
            /* the tail holds only raw data: listing may succeed, reading must not */
            gir_h5_params_free(ps, n);
            float w[6];
            st = gir_h5_read(part, cuts[i], "scalar", w, 4, GIR_DT_F32, &err);
        }
        assert_int_not_equal(st, GIR_OK);
        assert_int_equal(err.code, st);
        assert_non_null(err.message);
        gir_error_clear(&err);
        free(part);
    }
    /* the image buffer is never written to */
    char *copy = malloc(len);
    memcpy(copy, img, len);
    TU_OK(gir_h5_list(img, len, &ps, &n, &err), &err);
    gir_h5_params_free(ps, n);
    assert_memory_equal(copy, img, len);
    free(copy);
    free(img);
    free(path);
}

typedef struct thr {
    const char *img;
    size_t len;
    int bad;
} thr;

static void *reader(void *p)
{
    thr *t = p;
    for (int k = 0; k < 20; k++) {
        float w[6];
        gir_error err = GIR_ERROR_INIT;
        if (gir_h5_read(t->img, t->len, "conv1/conv/W", w, sizeof w, GIR_DT_F32, &err) != GIR_OK ||
            memcmp(w, W1, sizeof w) != 0)
            t->bad++;
        gir_error_clear(&err);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    char *path = tu_tmp("thr.h5");
    write_sample(path);
    size_t len;
    char *img = image_of(path, &len);
    pthread_t th[3];
    thr a[3];
    for (int i = 0; i < 3; i++) {
        a[i] = (thr){ img, len, 0 };
        assert_int_equal(pthread_create(&th[i], NULL, reader, &a[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].bad, 0);
    }
    free(img);
    free(path);
}

static void test_outfile_flow(void **state)
{
    (void)state;
    char *path = tu_tmp("atomic.h5");
    gir_error err = GIR_ERROR_INIT;
    gir_outfile *o;
    TU_OK(gir_outfile_open(path, false, &o, &err), &err);
    wctx c = { sample_data, 0, 0, SIZE_MAX, 0, 0 };
    TU_OK(gir_h5_write(gir_outfile_temp_path(o), sample_params, NPARAMS, get_data, put_data, &c, &err), &err);
    TU_OK(gir_outfile_commit(o, &err), &err);
    char *ref = tu_tmp("ref.h5");
    write_sample(ref);
    assert_true(tu_files_equal(path, ref));
    /* a failed write under an outfile leaves the old output untouched */
    TU_OK(gir_outfile_open(path, true, &o, &err), &err);
    c = (wctx){ sample_data, 0, 0, 0, 0, 0 };
    TU_FAILS(gir_h5_write(gir_outfile_temp_path(o), sample_params, NPARAMS, get_data, put_data, &c, &err), &err,
             GIR_E_IO, "tensor 0 cannot be loaded");
    gir_error_clear(&err);
    gir_outfile_abort(o);
    assert_true(tu_files_equal(path, ref));
    free(ref);
    free(path);
}

/* get_data may itself read HDF5 (re-saving lazily loaded parameters): the
 * writer must not hold the HDF5 lock while it runs. */
typedef struct copy_ctx {
    gir_h5 *src;
    const gir_h5_param *params;
    void *buf;
} copy_ctx;

static gir_status copy_get(void *ctx, size_t i, const void **data, gir_error *err)
{
    copy_ctx *c = ctx;
    uint64_t nb;
    gir_status st = gir_tensor_size(c->params[i].dtype, &c->params[i].shape, &nb, err);
    if (st)
        return st;
    c->buf = malloc((size_t)nb);
    assert_non_null(c->buf);
    st = gir_h5_read_open(c->src, c->params[i].name, c->buf, nb, c->params[i].dtype, err);
    *data = c->buf;
    return st;
}

static void copy_put(void *ctx, size_t i)
{
    (void)i;
    copy_ctx *c = ctx;
    free(c->buf);
    c->buf = NULL;
}

static void test_copy_through_reader(void **state)
{
    (void)state;
    char *a = tu_tmp("copy_src.h5"), *b = tu_tmp("copy_dst.h5");
    write_sample(a);
    size_t len;
    char *img = image_of(a, &len);
    gir_error err = GIR_ERROR_INIT;
    copy_ctx c = { NULL, NULL, NULL };
    TU_OK(gir_h5_open(img, len, &c.src, &err), &err);
    gir_h5_param *ps;
    size_t n;
    TU_OK(gir_h5_list_open(c.src, &ps, &n, &err), &err);
    c.params = ps;
    TU_OK(gir_h5_write(b, ps, n, copy_get, copy_put, &c, &err), &err);
    assert_true(tu_files_equal(a, b)); /* a faithful, byte-identical copy */
    gir_h5_params_free(ps, n);
    gir_h5_close(c.src);
    free(img);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_list_read),
        cmocka_unit_test(test_write_deterministic),
        cmocka_unit_test(test_layout_h5dump),
        cmocka_unit_test(test_write_refusals),
        cmocka_unit_test(test_real_model_simple),
        cmocka_unit_test(test_real_files_h5dump),
        cmocka_unit_test(test_order_and_attributes),
        cmocka_unit_test(test_read_refusals),
        cmocka_unit_test(test_bad_images),
        cmocka_unit_test(test_subset_variants),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_outfile_flow),
        cmocka_unit_test(test_copy_through_reader),
    };
    return cmocka_run_group_tests(tests, setup, tu_teardown_tempdir);
}
