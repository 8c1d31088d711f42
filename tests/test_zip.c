/* lib/io/zip: deterministic writing, safe reading, refusals of unsafe and
 * corrupt archives. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <utime.h>

#include "io/zip.h"

/* 2 MiB of a repeating pattern that deflates very well. */
static unsigned char *big_buffer(size_t *n)
{
    *n = (size_t)2 << 20;
    unsigned char *b = malloc(*n);
    assert_non_null(b);
    for (size_t i = 0; i < *n; i++)
        b[i] = (unsigned char)(i % 7 == 0 ? 'x' : 'a');
    return b;
}

/* Writes an archive: "hello.txt" (stored), "dir/" (empty), "dir/data.bin"
 * (deflated, 2 MiB), "from_file" (streamed from disk). */
static void write_sample(const char *path, const char *src_file)
{
    gir_error err = GIR_ERROR_INIT;
    gir_zipw *w;
    TU_OK(gir_zipw_open(path, &w, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "hello.txt", "hello\n", 6, false, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "dir/", NULL, 0, false, &err), &err);
    size_t n;
    unsigned char *big = big_buffer(&n);
    TU_OK(gir_zipw_add_buffer(w, "dir/data.bin", big, n, true, &err), &err);
    memset(big, 0, n); /* the writer copied the bytes */
    free(big);
    TU_OK(gir_zipw_add_file(w, "from_file", src_file, true, &err), &err);
    TU_OK(gir_zipw_close(w, &err), &err);
}

static char *make_src_file(const char *name, const char *text)
{
    char *p = tu_tmp(name);
    assert_true(tu_write(p, text, strlen(text)));
    return p;
}

static void test_write_read_roundtrip(void **state)
{
    (void)state;
    char *src = make_src_file("src.txt", "streamed from a file\n");
    char *path = tu_tmp("a.zip");
    write_sample(path, src);

    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_count(z), 4);
    assert_string_equal(gir_zip_name(z, 0), "hello.txt");
    assert_string_equal(gir_zip_name(z, 1), "dir/");
    assert_string_equal(gir_zip_name(z, 2), "dir/data.bin");
    assert_string_equal(gir_zip_name(z, 3), "from_file");
    assert_null(gir_zip_name(z, 4));
    assert_int_equal(gir_zip_size(z, 0), 6);
    assert_int_equal(gir_zip_size(z, 2), (size_t)2 << 20);
    assert_int_equal(gir_zip_size(z, 3), 21);
    assert_false(gir_zip_is_dir(z, 0));
    assert_true(gir_zip_is_dir(z, 1));
    assert_int_equal(gir_zip_find(z, "from_file"), 3);
    assert_int_equal(gir_zip_find(z, "dir/data.bin"), 2);
    assert_int_equal(gir_zip_find(z, "hello.txt"), 0);
    assert_int_equal(gir_zip_find(z, "dir"), -1);
    assert_int_equal(gir_zip_find(z, "zzz"), -1);

    void *data;
    size_t len;
    TU_OK(gir_zip_read(z, 0, &data, &len, &err), &err);
    assert_int_equal(len, 6);
    assert_memory_equal(data, "hello\n", 6);
    assert_int_equal(((char *)data)[6], '\0');
    free(data);
    TU_OK(gir_zip_read(z, 1, &data, &len, &err), &err);
    assert_int_equal(len, 0);
    free(data);
    TU_OK(gir_zip_read(z, 2, &data, &len, &err), &err);
    size_t bn;
    unsigned char *big = big_buffer(&bn);
    assert_int_equal(len, bn);
    assert_memory_equal(data, big, bn);
    free(big);
    free(data);
    TU_OK(gir_zip_read(z, 3, &data, &len, &err), &err);
    assert_string_equal(data, "streamed from a file\n");
    free(data);
    TU_FAILS(gir_zip_read(z, 4, &data, &len, &err), &err, GIR_E_ARGUMENT, "member index 4 out of range", "a.zip");
    gir_error_clear(&err);

    /* references: the archive lives until the last close */
    gir_zip *z2 = gir_zip_ref(z);
    gir_zip_close(z);
    TU_OK(gir_zip_read(z2, 0, &data, &len, &err), &err);
    free(data);
    gir_zip_close(z2);

    /* the same from memory */
    size_t flen;
    char *image = tu_slurp(path, &flen);
    assert_non_null(image);
    TU_OK(gir_zip_open_memory(image, flen, "mem.zip", NULL, &z, &err), &err);
    free(image);
    assert_int_equal(gir_zip_count(z), 4);
    TU_OK(gir_zip_read(z, 3, &data, &len, &err), &err);
    assert_string_equal(data, "streamed from a file\n");
    free(data);
    gir_zip_close(z);
    free(path);
    free(src);
}

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void test_write_deterministic(void **state)
{
    (void)state;
    char *src = make_src_file("src2.txt", "streamed from a file\n");
    char *a = tu_tmp("d1.zip"), *b = tu_tmp("d2.zip");
    write_sample(a, src);
    /* a different source mtime must not change the bytes */
    struct utimbuf ut = { 1234567890, 1234567890 };
    assert_int_equal(utime(src, &ut), 0);
    write_sample(b, src);
    assert_true(tu_files_equal(a, b));

    /* Every local header: time 00:00, date 1980-01-01, no extra field;
     * every central header: no extra field, unix 0644 attributes. */
    size_t len;
    unsigned char *d = (unsigned char *)tu_slurp(a, &len);
    assert_non_null(d);
    size_t pos = 0, locals = 0;
    while (pos + 30 <= len && gir_le32(d + pos) == 0x04034b50u) {
        assert_int_equal(rd16(d + pos + 6) & 0x8, 0); /* no data descriptor */
        assert_int_equal(rd16(d + pos + 10), 0);
        assert_int_equal(rd16(d + pos + 12), 0x21);
        assert_int_equal(rd16(d + pos + 28), 0);
        pos += 30 + rd16(d + pos + 26) + gir_le32(d + pos + 18);
        locals++;
    }
    assert_int_equal(locals, 4);
    size_t centrals = 0;
    while (pos + 46 <= len && gir_le32(d + pos) == 0x02014b50u) {
        assert_int_equal(d[pos + 5], 3); /* made by unix */
        assert_int_equal(rd16(d + pos + 12), 0);
        assert_int_equal(rd16(d + pos + 14), 0x21);
        assert_int_equal(rd16(d + pos + 30), 0);
        assert_int_equal(gir_le32(d + pos + 38), 0100644u << 16);
        pos += 46 + rd16(d + pos + 28);
        centrals++;
    }
    assert_int_equal(centrals, 4);
    assert_int_equal(gir_le32(d + pos), 0x06054b50u);
    assert_int_equal(pos + 22, len);
    free(d);
    free(a);
    free(b);
    free(src);
}

static void test_unzip_accepts(void **state)
{
    (void)state;
    if (!tu_have_program("unzip")) {
        print_message("unzip is not installed: skipping the unzip -t check\n");
        skip();
    }
    char *src = make_src_file("src3.txt", "streamed from a file\n");
    char *path = tu_tmp("t.zip");
    write_sample(path, src);
    char *cmd = gir_strdupf("unzip -tq '%s' >/dev/null", path);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 0);
    free(cmd);
    free(path);
    free(src);
}

static void test_write_empty(void **state)
{
    (void)state;
    char *path = tu_tmp("empty.zip");
    gir_error err = GIR_ERROR_INIT;
    gir_zipw *w;
    TU_OK(gir_zipw_open(path, &w, &err), &err);
    TU_OK(gir_zipw_close(w, &err), &err);
    size_t len;
    char *d = tu_slurp(path, &len);
    assert_non_null(d);
    assert_int_equal(len, 22);
    free(d);
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_count(z), 0);
    assert_int_equal(gir_zip_find(z, "x"), -1);
    gir_zip_close(z);

    /* discard writes nothing */
    char *p2 = tu_tmp("discarded.zip");
    TU_OK(gir_zipw_open(p2, &w, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "a", "x", 1, false, &err), &err);
    gir_zipw_discard(w);
    assert_false(gir_path_exists(p2));
    free(p2);
    free(path);
}

static void test_write_refuses_names(void **state)
{
    (void)state;
    char *path = tu_tmp("names.zip");
    gir_error err = GIR_ERROR_INIT;
    gir_zipw *w;
    TU_OK(gir_zipw_open(path, &w, &err), &err);
    static const struct {
        const char *name, *why;
    } bad[] = {
        { "", "has an empty name" },
        { "../x", "has a '..' component" },
        { "a/../../x", "has a '..' component" },
        { "a/..", "has a '..' component" },
        { "/etc/passwd", "has an absolute path" },
        { "C:evil", "has a drive letter" },
        { "a\\b", "has a backslash" },
        { "a//b", "has an empty path component" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TU_FAILS(gir_zipw_add_buffer(w, bad[i].name, "x", 1, false, &err), &err, GIR_E_ARGUMENT, bad[i].why,
                 "names.zip");
        gir_error_clear(&err);
    }
    TU_OK(gir_zipw_add_buffer(w, "a..b/..c", "x", 1, false, &err), &err); /* dots inside names are fine */
    TU_OK(gir_zipw_add_buffer(w, "ok", "x", 1, false, &err), &err);
    TU_FAILS(gir_zipw_add_buffer(w, "ok", "y", 1, true, &err), &err, GIR_E_DUPLICATE, "member 'ok' is added twice");
    gir_error_clear(&err);
    char *missing = tu_tmp("no-such-file");
    TU_FAILS(gir_zipw_add_file(w, "m", missing, false, &err), &err, GIR_E_IO, "cannot add member 'm'",
             "no-such-file");
    gir_error_clear(&err);
    free(missing);
    TU_OK(gir_zipw_close(w, &err), &err);
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_count(z), 2);
    gir_zip_close(z);
    free(path);
}

/* ---- hand-patched archives ------------------------------------------------ */

/* Offsets of the local and central headers of a stored/deflated archive
 * written by gir_zipw (no data descriptors). */
typedef struct zmap {
    unsigned char *d;
    size_t len;
    size_t local[8], central[8];
    size_t n;
} zmap;

static void zmap_load(zmap *m, const char *path)
{
    m->d = (unsigned char *)tu_slurp(path, &m->len);
    assert_non_null(m->d);
    size_t pos = 0;
    m->n = 0;
    while (gir_le32(m->d + pos) == 0x04034b50u) {
        m->local[m->n++] = pos;
        pos += 30 + rd16(m->d + pos + 26) + gir_le32(m->d + pos + 18);
    }
    for (size_t i = 0; i < m->n; i++) {
        assert_int_equal(gir_le32(m->d + pos), 0x02014b50u);
        m->central[i] = pos;
        pos += 46 + rd16(m->d + pos + 28);
    }
}

static void zmap_save(zmap *m, const char *path)
{
    assert_true(tu_write(path, m->d, m->len));
    free(m->d);
}

/* Overwrites the name of member i (same length) in both headers. */
static void zmap_rename(zmap *m, size_t i, const char *name, size_t nlen)
{
    assert_int_equal(rd16(m->d + m->local[i] + 26), nlen);
    memcpy(m->d + m->local[i] + 30, name, nlen);
    memcpy(m->d + m->central[i] + 46, name, nlen);
}

static void zmap_set_usize(zmap *m, size_t i, uint32_t size)
{
    gir_put_le32(m->d + m->local[i] + 22, size);
    gir_put_le32(m->d + m->central[i] + 24, size);
}

/* Writes members name_k = "data_k" (each 6 bytes, stored) and returns the map. */
static void make_plain(const char *path, size_t n, const char *const *names, bool deflate_big_last)
{
    gir_error err = GIR_ERROR_INIT;
    gir_zipw *w;
    TU_OK(gir_zipw_open(path, &w, &err), &err);
    for (size_t i = 0; i < n; i++) {
        if (deflate_big_last && i == n - 1) {
            size_t bn;
            unsigned char *big = big_buffer(&bn);
            TU_OK(gir_zipw_add_buffer(w, names[i], big, bn, true, &err), &err);
            free(big);
        } else {
            TU_OK(gir_zipw_add_buffer(w, names[i], "data_k", 6, false, &err), &err);
        }
    }
    TU_OK(gir_zipw_close(w, &err), &err);
}

static void expect_open_fails(const char *path, const gir_zip_limits *lim, gir_status code, const char *m1,
                              const char *m2)
{
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z = (gir_zip *)1;
    gir_status st = gir_zip_open(path, lim, &z, &err);
    assert_null(z);
    TU_FAILS(st, &err, code, m1, m2 ? m2 : m1);
    assert_non_null(err.file);
    assert_string_equal(err.file, path);
    gir_error_clear(&err);
}

static uint32_t crc32_of(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= b[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* A one-member stored archive with any name bytes. */
static void write_raw_stored(const char *path, const char *name, size_t nlen, const void *data, size_t len)
{
    unsigned char buf[512] = { 0 };
    assert_true(nlen < 64 && len < 64);
    uint32_t crc = crc32_of(data, len);
    size_t p = 0;
    gir_put_le32(buf, 0x04034b50u);
    buf[4] = 20;
    buf[12] = 0x21;
    gir_put_le32(buf + 14, crc);
    gir_put_le32(buf + 18, (uint32_t)len);
    gir_put_le32(buf + 22, (uint32_t)len);
    buf[26] = (unsigned char)nlen;
    memcpy(buf + 30, name, nlen);
    memcpy(buf + 30 + nlen, data, len);
    p = 30 + nlen + len;
    size_t cd = p;
    gir_put_le32(buf + p, 0x02014b50u);
    buf[p + 4] = 20;
    buf[p + 6] = 20;
    buf[p + 14] = 0x21;
    gir_put_le32(buf + p + 16, crc);
    gir_put_le32(buf + p + 20, (uint32_t)len);
    gir_put_le32(buf + p + 24, (uint32_t)len);
    buf[p + 28] = (unsigned char)nlen;
    memcpy(buf + p + 46, name, nlen);
    p += 46 + nlen;
    gir_put_le32(buf + p, 0x06054b50u);
    buf[p + 8] = 1;
    buf[p + 10] = 1;
    gir_put_le32(buf + p + 12, (uint32_t)(p - cd));
    gir_put_le32(buf + p + 16, (uint32_t)cd);
    p += 22;
    assert_true(tu_write(path, buf, p));
}

static void test_read_refuses_names(void **state)
{
    (void)state;
    static const char *const names[] = { "aaaa", "bbbb/cccc" };
    char *path = tu_tmp("patched.zip");
    static const struct {
        size_t member;
        const char *name;
        size_t len;
        const char *why;
    } cases[] = {
        { 0, "../a", 4, "member '../a' has a '..' component" },
        { 1, "bbbb/../c", 9, "member 'bbbb/../c' has a '..' component" },
        { 0, "/etc", 4, "member '/etc' has an absolute path" },
        { 0, "C:/x", 4, "member 'C:/x' has a drive letter" },
        { 0, "a\\bc", 4, "member 'a\\bc' has a backslash" },
        { 0, "a\0bc", 4, "has a NUL byte in its name" },
        { 1, "aaaa\0cccc", 9, "has a NUL byte in its name" },
        { 1, "aaaa/cccc", 9, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_plain(path, 2, names, false);
        zmap m;
        zmap_load(&m, path);
        zmap_rename(&m, cases[i].member, cases[i].name, cases[i].len);
        zmap_save(&m, path);
        if (cases[i].why) {
            expect_open_fails(path, NULL, GIR_E_ARCHIVE, cases[i].why, NULL);
        } else {
            gir_error err = GIR_ERROR_INIT;
            gir_zip *z;
            TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
            gir_zip_close(z);
        }
    }
    /* duplicates */
    make_plain(path, 2, (const char *const[]){ "same", "samf" }, false);
    zmap m;
    zmap_load(&m, path);
    zmap_rename(&m, 1, "same", 4);
    zmap_save(&m, path);
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "member 'same' appears more than once", NULL);
    /* empty name: the writer refuses one, so the archive is built by hand */
    write_raw_stored(path, "", 0, "data", 4);
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "member '' has an empty name", NULL);
    write_raw_stored(path, "ok", 2, "data", 4);
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    void *data;
    size_t len;
    TU_OK(gir_zip_read(z, 0, &data, &len, &err), &err);
    assert_memory_equal(data, "data", 4);
    free(data);
    gir_zip_close(z);
    free(path);
}

static void test_read_limits(void **state)
{
    (void)state;
    char *path = tu_tmp("limits.zip");
    static const char *const names[] = { "a", "b", "c", "big" };
    make_plain(path, 4, names, true);
    gir_zip_limits lim;
    gir_zip_limits_default(&lim);
    assert_int_equal(lim.max_total, UINT64_C(4) << 30);
    assert_int_equal(lim.max_member, UINT64_C(4) << 30);
    assert_int_equal(lim.max_members, 65536);
    assert_int_equal(lim.max_ratio, 1000);
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(path, &lim, &z, &err), &err);
    gir_zip_close(z);

    gir_zip_limits l2 = lim;
    l2.max_members = 3;
    expect_open_fails(path, &l2, GIR_E_ARCHIVE, "archive has 4 members, more than the 3 allowed", NULL);
    l2 = lim;
    l2.max_member = 1 << 20;
    expect_open_fails(path, &l2, GIR_E_ARCHIVE, "member 'big' declares 2097152 bytes, more than the 1048576 allowed",
                      NULL);
    l2 = lim;
    l2.max_total = ((size_t)2 << 20) + 17;
    expect_open_fails(path, &l2, GIR_E_ARCHIVE,
                      "members up to 'big' declare more than the 2097169 bytes allowed in total", NULL);
    l2.max_total = ((size_t)2 << 20) + 18; /* exactly the sum: allowed */
    TU_OK(gir_zip_open(path, &l2, &z, &err), &err);
    gir_zip_close(z);
    l2 = lim;
    l2.max_ratio = 10;
    expect_open_fails(path, &l2, GIR_E_ARCHIVE, "member 'big' declares 2097152 bytes from ", "a ratio above the 10");
    l2.max_ratio = 0; /* disabled */
    TU_OK(gir_zip_open(path, &l2, &z, &err), &err);
    gir_zip_close(z);
    /* the member count is checked on the end record, before libzip reads
     * the (here inconsistent) central directory */
    size_t flen;
    unsigned char *d = (unsigned char *)tu_slurp(path, &flen);
    d[flen - 22 + 8] = 0xe8, d[flen - 22 + 9] = 0x03;   /* 1000 entries on this disk */
    d[flen - 22 + 10] = 0xe8, d[flen - 22 + 11] = 0x03; /* 1000 in total */
    assert_true(tu_write(path, d, flen));
    free(d);
    l2 = lim;
    l2.max_members = 3;
    expect_open_fails(path, &l2, GIR_E_ARCHIVE, "archive has 1000 members, more than the 3 allowed", NULL);
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "not a valid zip archive: ", NULL);
    free(path);
}

static void test_read_size_mismatch(void **state)
{
    (void)state;
    char *path = tu_tmp("bomb.zip");
    static const char *const names[] = { "small", "big" };
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    void *data = (void *)1;
    size_t len = 99;

    /* a deflated member that declares fewer bytes than it inflates to */
    make_plain(path, 2, names, true);
    zmap m;
    zmap_load(&m, path);
    zmap_set_usize(&m, 1, 1000);
    zmap_save(&m, path);
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_size(z, 1), 1000);
    TU_FAILS(gir_zip_read(z, 1, &data, &len, &err), &err, GIR_E_ARCHIVE,
             "member 'big': declared 1000 bytes, got more than 1049576", "bomb.zip");
    assert_null(data);
    assert_int_equal(len, 0);
    gir_error_clear(&err);
    gir_zip_close(z);
    /* (1 MiB more than declared is all that is inflated: the member holds 2 MiB) */

    /* ... and beyond the member limit: counting stops there */
    gir_zip_limits lim;
    gir_zip_limits_default(&lim);
    lim.max_member = 4096;
    TU_OK(gir_zip_open(path, &lim, &z, &err), &err);
    TU_FAILS(gir_zip_read(z, 1, &data, &len, &err), &err, GIR_E_ARCHIVE,
             "member 'big': declared 1000 bytes, got more than 4096");
    gir_error_clear(&err);
    gir_zip_close(z);

    /* a member that declares more than it holds */
    make_plain(path, 2, names, true);
    zmap_load(&m, path);
    zmap_set_usize(&m, 1, (2u << 20) + 5);
    zmap_save(&m, path);
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    TU_FAILS(gir_zip_read(z, 1, &data, &len, &err), &err, GIR_E_ARCHIVE, "member 'big'");
    gir_error_clear(&err);
    /* the other member still reads */
    TU_OK(gir_zip_read(z, 0, &data, &len, &err), &err);
    assert_memory_equal(data, "data_k", 6);
    free(data);
    gir_zip_close(z);
    free(path);
}

static void test_read_corrupt(void **state)
{
    (void)state;
    char *path = tu_tmp("corrupt.zip");
    static const char *const names[] = { "one", "two" };
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    void *data;
    size_t len;

    /* CRC mismatch in a stored member */
    make_plain(path, 2, names, false);
    zmap m;
    zmap_load(&m, path);
    m.d[m.local[1] + 30 + 3] ^= 0x20;
    zmap_save(&m, path);
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    TU_OK(gir_zip_read(z, 0, &data, &len, &err), &err);
    free(data);
    TU_FAILS(gir_zip_read(z, 1, &data, &len, &err), &err, GIR_E_ARCHIVE, "member 'two': CRC error", "corrupt.zip");
    gir_error_clear(&err);
    gir_zip_close(z);

    /* truncated: the end of central directory is gone */
    make_plain(path, 2, names, false);
    size_t flen;
    char *d = tu_slurp(path, &flen);
    assert_true(tu_write(path, d, flen - 10));
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "not a valid zip archive: ", NULL);
    /* truncated in the middle of the data */
    assert_true(tu_write(path, d, 40));
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "not a valid zip archive: ", NULL);
    /* central directory pointing elsewhere */
    gir_put_le32((unsigned char *)d + flen - 6, 3);
    assert_true(tu_write(path, d, flen));
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "not a valid zip archive: ", NULL);
    free(d);
    /* not a zip at all */
    assert_true(tu_write(path, "this is text, not an archive\n", 29));
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "not a valid zip archive: Not a zip archive", NULL);
    /* empty file */
    assert_true(tu_write(path, "", 0));
    expect_open_fails(path, NULL, GIR_E_ARCHIVE, "not a valid zip archive: ", NULL);
    /* from memory, with the name given */
    TU_FAILS(gir_zip_open_memory("PK\3\4garbage", 11, "inner.zip", NULL, &z, &err), &err, GIR_E_ARCHIVE,
             "inner.zip: not a valid zip archive: ");
    gir_error_clear(&err);
    /* missing file and directory */
    char *missing = tu_tmp("missing.zip");
    expect_open_fails(missing, NULL, GIR_E_IO, "cannot open: No such file or directory", NULL);
    free(missing);
    expect_open_fails(tu_dir, NULL, GIR_E_IO, "not a regular file", NULL);
    free(path);
}

typedef struct thr_arg {
    gir_zip *z;
    int bad;
} thr_arg;

static void *reader_thread(void *p)
{
    thr_arg *a = p;
    size_t bn;
    unsigned char *big = big_buffer(&bn);
    for (int k = 0; k < 4; k++) {
        void *data;
        size_t len;
        gir_error err = GIR_ERROR_INIT;
        if (gir_zip_read(a->z, 2, &data, &len, &err) != GIR_OK || len != bn || memcmp(data, big, bn) != 0)
            a->bad++;
        else
            free(data);
        gir_error_clear(&err);
    }
    free(big);
    return NULL;
}

static void test_read_threads(void **state)
{
    (void)state;
    char *src = make_src_file("src4.txt", "streamed from a file\n");
    char *path = tu_tmp("thr.zip");
    write_sample(path, src);
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    pthread_t t[3];
    thr_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i] = (thr_arg){ gir_zip_ref(z), 0 };
        assert_int_equal(pthread_create(&t[i], NULL, reader_thread, &args[i]), 0);
    }
    gir_zip_close(z);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(args[i].bad, 0);
        gir_zip_close(args[i].z);
    }
    free(path);
    free(src);
}

/* Every real .nnp archive opens and every member reads at its declared size. */
static size_t check_real_dir(const char *rel)
{
    char *dir = tu_shared(rel);
    size_t n, archives = 0;
    char **names = tu_list_files(dir, NULL, ".nnp", &n);
    assert_non_null(names);
    for (size_t f = 0; f < n; f++) {
        char *path = tu_join(dir, names[f]);
        gir_error err = GIR_ERROR_INIT;
        gir_zip *z;
        TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
        assert_true(gir_zip_count(z) >= 3);
        for (size_t i = 0; i < gir_zip_count(z); i++) {
            void *data;
            size_t len;
            TU_OK(gir_zip_read(z, i, &data, &len, &err), &err);
            assert_int_equal(len, gir_zip_size(z, i));
            free(data);
        }
        ptrdiff_t v = gir_zip_find(z, "nnp_version.txt");
        assert_true(v >= 0);
        gir_zip_close(z);
        free(path);
        archives++;
    }
    tu_free_list(names, n);
    free(dir);
    return archives;
}

static void test_real_archives(void **state)
{
    (void)state;
    assert_int_equal(check_real_dir("realworld/nnp"), 3);
    assert_true(check_real_dir("realworld/nnp-onnx-pairs") >= 30);

    char *path = tu_shared("realworld/nnp/lenet_010000.nnp");
    gir_error err = GIR_ERROR_INIT;
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_count(z), 3);
    assert_string_equal(gir_zip_name(z, 0), "nnp_version.txt");
    assert_string_equal(gir_zip_name(z, 1), "network.nntxt");
    assert_string_equal(gir_zip_name(z, 2), "parameter.protobuf");
    assert_int_equal(gir_zip_size(z, 1), 5517);
    assert_int_equal(gir_zip_size(z, 2), 81023);
    void *data;
    size_t len;
    TU_OK(gir_zip_read(z, 0, &data, &len, &err), &err);
    assert_int_equal(len, 4);
    assert_string_equal(data, "0.1\n");
    free(data);
    TU_OK(gir_zip_read(z, 2, &data, &len, &err), &err);
    /* the first parameter record: tag 200, then "conv1/conv/W" */
    assert_memory_equal(data, "\xc2\x0c", 2);
    assert_non_null(memmem(data, 64, "conv1/conv/W", 12));
    free(data);
    gir_zip_close(z);
    free(path);
}

/* The documented way to write atomically: the writer targets a gir_outfile's
 * temporary path and the caller commits. */
static void test_outfile_flow(void **state)
{
    (void)state;
    char *path = tu_tmp("atomic.nnp");
    gir_error err = GIR_ERROR_INIT;
    for (int round = 0; round < 2; round++) {
        gir_outfile *o;
        TU_OK(gir_outfile_open(path, round == 1, &o, &err), &err);
        gir_zipw *w;
        TU_OK(gir_zipw_open(gir_outfile_temp_path(o), &w, &err), &err);
        TU_OK(gir_zipw_add_buffer(w, "nnp_version.txt", "0.1\n", 4, false, &err), &err);
        TU_OK(gir_zipw_add_buffer(w, "network.nntxt", round ? "b" : "a", 1, true, &err), &err);
        TU_OK(gir_zipw_close(w, &err), &err);
        TU_OK(gir_outfile_commit(o, &err), &err);
        gir_zip *z;
        TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
        void *data;
        size_t len;
        TU_OK(gir_zip_read(z, 1, &data, &len, &err), &err);
        assert_string_equal(data, round ? "b" : "a");
        free(data);
        gir_zip_close(z);
    }
    /* an existing output without overwrite is refused before any writing */
    gir_outfile *o;
    TU_FAILS(gir_outfile_open(path, false, &o, &err), &err, GIR_E_EXISTS, "atomic.nnp");
    gir_error_clear(&err);
    /* a discarded archive leaves only the (aborted) temporary behind */
    TU_OK(gir_outfile_open(path, true, &o, &err), &err);
    gir_zipw *w;
    TU_OK(gir_zipw_open(gir_outfile_temp_path(o), &w, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "x", "y", 1, false, &err), &err);
    gir_zipw_discard(w);
    gir_outfile_abort(o);
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err); /* the previous one is intact */
    assert_int_equal(gir_zip_count(z), 2);
    gir_zip_close(z);
    free(path);
}

/* ---- streamed and in-place members ------------------------------------------ */

static unsigned char *noise(size_t n, uint32_t seed)
{
    unsigned char *b = malloc(n ? n : 1);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = (unsigned char)(seed >> 24);
    }
    return b;
}

static void assert_unzip_ok(const char *path)
{
    if (!tu_have_program("unzip"))
        return;
    char *cmd = gir_strdupf("unzip -tq '%s' >/dev/null", path);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 0);
    free(cmd);
}

static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(gir_crc32(0, "123456789", 9), 0xcbf43926u); /* the check value of CRC-32 */
    size_t n = (size_t)9 << 20;
    unsigned char *b = noise(n, 7);
    uint32_t whole = gir_crc32(0, b, n);
    /* pieces and combination agree with one pass, threaded or not */
    size_t cut = (5u << 20) + 3;
    assert_int_equal(gir_crc32(gir_crc32(0, b, cut), b + cut, n - cut), whole);
    assert_int_equal(gir_crc32_combine(gir_crc32(0, b, cut), gir_crc32(0, b + cut, n - cut), n - cut), whole);
    gir_crc_job j;
    gir_crc32_start(&j, 0, b, n);
    assert_int_equal(gir_crc32_finish(&j), whole);
    gir_crc32_start(&j, gir_crc32(0, b, 10), b + 10, 100);
    assert_int_equal(gir_crc32_finish(&j), gir_crc32(0, b, 110));
    free(b);
}

/* A member streamed in pieces (one big enough for the CRC thread) reads
 * back exactly, with a correct CRC, and unzip agrees. */
static void test_write_stream(void **state)
{
    (void)state;
    char *path = tu_tmp("stream.zip");
    gir_error err = GIR_ERROR_INIT;
    size_t n = (size_t)6 << 20;
    unsigned char *b = noise(n, 11);
    gir_zipw *w;
    TU_OK(gir_zipw_open(path, &w, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "first", "1", 1, false, &err), &err);
    TU_OK(gir_zipw_begin(w, "big.bin", n, &err), &err);
    TU_FAILS(gir_zipw_add_buffer(w, "other", "x", 1, false, &err), &err, GIR_E_INTERNAL, "being written");
    gir_error_clear(&err);
    TU_OK(gir_zipw_write(w, b, 100, &err), &err);
    TU_OK(gir_zipw_write(w, b + 100, 0, &err), &err);
    TU_OK(gir_zipw_write(w, b + 100, n - 200, &err), &err);
    TU_OK(gir_zipw_write(w, b + n - 100, 100, &err), &err);
    TU_OK(gir_zipw_end(w, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "last", "22", 2, true, &err), &err);
    TU_OK(gir_zipw_close(w, &err), &err);
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_count(z), 3);
    assert_string_equal(gir_zip_name(z, 1), "big.bin");
    void *data;
    size_t len;
    TU_OK(gir_zip_read(z, 1, &data, &len, &err), &err);
    assert_int_equal(len, n);
    assert_memory_equal(data, b, n);
    free(data);
    TU_OK(gir_zip_read(z, 2, &data, &len, &err), &err);
    assert_string_equal(data, "22");
    free(data);
    gir_zip_close(z);
    assert_unzip_ok(path);

    /* more bytes than declared, or fewer: the archive cannot be finished */
    TU_OK(gir_zipw_open(path, &w, &err), &err);
    TU_OK(gir_zipw_begin(w, "m", 10, &err), &err);
    TU_FAILS(gir_zipw_write(w, b, 11, &err), &err, GIR_E_INTERNAL, "more than its declared 10 bytes");
    gir_error_clear(&err);
    TU_FAILS(gir_zipw_close(w, &err), &err, GIR_E_IO, "failed to write");
    gir_error_clear(&err);
    TU_OK(gir_zipw_open(path, &w, &err), &err);
    TU_OK(gir_zipw_begin(w, "m", 10, &err), &err);
    TU_OK(gir_zipw_write(w, b, 9, &err), &err);
    TU_FAILS(gir_zipw_end(w, &err), &err, GIR_E_INTERNAL, "got 9 bytes, 10 declared");
    gir_error_clear(&err);
    gir_zipw_discard(w);
    /* the path existed: discard leaves it (the caller's outfile removes it) */
    assert_true(gir_path_exists(path));
    remove(path);
    free(b);
    free(path);
}

/* A member whose bytes were already in the file behind 512 bytes of head
 * room: its local header lands at 0, padded so the data starts at 512; the
 * CRC comes from the known extents plus the bytes read back. */
static void test_write_inplace(void **state)
{
    (void)state;
    char *path = tu_tmp("inplace.zip");
    gir_error err = GIR_ERROR_INIT;
    size_t n = (size_t)3 << 20;
    unsigned char *img = noise(512 + n, 5);
    memset(img, 0xee, 512);
    assert_true(tu_write(path, img, 512 + n));
    const unsigned char *payload = img + 512;
    gir_zip_extent known[2] = {
        { 512 + 1000, 4096, gir_crc32(0, payload + 1000, 4096) },
        { 512 + 100000, n - 100000, gir_crc32(0, payload + 100000, n - 100000) },
    };
    gir_zipw *w;
    TU_OK(gir_zipw_open_inplace(path, 512, &w, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "a.txt", "alpha", 5, false, &err), &err);
    /* extents out of order are refused */
    gir_zip_extent bad[2] = { known[1], known[0] };
    TU_FAILS(gir_zipw_add_inplace(w, "p.h5", bad, 2, &err), &err, GIR_E_INTERNAL, "out of order");
    gir_error_clear(&err);
    TU_OK(gir_zipw_add_inplace(w, "p.h5", known, 2, &err), &err);
    TU_FAILS(gir_zipw_add_inplace(w, "q.h5", NULL, 0, &err), &err, GIR_E_INTERNAL, "cannot be stored in place");
    gir_error_clear(&err);
    TU_OK(gir_zipw_add_buffer(w, "b.txt", "beta", 4, true, &err), &err);
    TU_OK(gir_zipw_close(w, &err), &err);
    gir_zip *z;
    TU_OK(gir_zip_open(path, NULL, &z, &err), &err);
    assert_int_equal(gir_zip_count(z), 3);
    assert_string_equal(gir_zip_name(z, 0), "a.txt");
    assert_string_equal(gir_zip_name(z, 1), "p.h5");
    assert_string_equal(gir_zip_name(z, 2), "b.txt");
    uint64_t off;
    TU_OK(gir_zip_stored_offset(z, 1, &off, &err), &err);
    assert_int_equal(off, 512);
    void *data;
    size_t len;
    TU_OK(gir_zip_read(z, 1, &data, &len, &err), &err); /* checks the CRC */
    assert_int_equal(len, n);
    assert_memory_equal(data, payload, n);
    free(data);
    gir_zip_close(z);
    assert_unzip_ok(path);
    /* deterministic: the same again gives the same bytes */
    char *again = tu_tmp("inplace2.zip");
    assert_true(tu_write(again, img, 512 + n));
    TU_OK(gir_zipw_open_inplace(again, 512, &w, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "a.txt", "alpha", 5, false, &err), &err);
    TU_OK(gir_zipw_add_inplace(w, "p.h5", known, 2, &err), &err);
    TU_OK(gir_zipw_add_buffer(w, "b.txt", "beta", 4, true, &err), &err);
    TU_OK(gir_zipw_close(w, &err), &err);
    assert_true(tu_files_equal(path, again));
    /* head room never filled: the archive is refused */
    assert_true(tu_write(again, img, 512 + n));
    TU_OK(gir_zipw_open_inplace(again, 512, &w, &err), &err);
    TU_FAILS(gir_zipw_close(w, &err), &err, GIR_E_INTERNAL, "holds no member");
    gir_error_clear(&err);
    remove(again);
    remove(path);
    free(again);
    free(img);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_read_roundtrip),
        cmocka_unit_test(test_write_deterministic),
        cmocka_unit_test(test_unzip_accepts),
        cmocka_unit_test(test_write_empty),
        cmocka_unit_test(test_write_refuses_names),
        cmocka_unit_test(test_read_refuses_names),
        cmocka_unit_test(test_read_limits),
        cmocka_unit_test(test_read_size_mismatch),
        cmocka_unit_test(test_read_corrupt),
        cmocka_unit_test(test_read_threads),
        cmocka_unit_test(test_real_archives),
        cmocka_unit_test(test_outfile_flow),
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_write_stream),
        cmocka_unit_test(test_write_inplace),
    };
    return cmocka_run_group_tests(tests, tu_setup_tempdir, tu_teardown_tempdir);
}
