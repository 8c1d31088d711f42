/* Reading files and writing outputs atomically (temporary file + rename). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gir_status io_fail(gir_error *err, const char *what, const char *path)
{
    gir_status st = gir_fail(err, GIR_E_IO, "%s: %s", what, strerror(errno));
    gir_err_file(err, path);
    return st;
}

/* At most 1 GiB a call: some systems refuse larger transfers. */
#define IO_CHUNK ((uint64_t)1 << 30)

uint64_t gir_pread_full(int fd, void *buf, uint64_t n, uint64_t off)
{
    uint64_t done = 0;
    while (done < n) {
        size_t want = (size_t)(n - done > IO_CHUNK ? IO_CHUNK : n - done);
        ssize_t r = pread(fd, (char *)buf + done, want, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = 0;
            break;
        }
        done += (uint64_t)r;
    }
    return done;
}

bool gir_pwrite_full(int fd, const void *buf, uint64_t n, uint64_t off)
{
    uint64_t done = 0;
    while (done < n) {
        size_t want = (size_t)(n - done > IO_CHUNK ? IO_CHUNK : n - done);
        ssize_t r = pwrite(fd, (const char *)buf + done, want, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = ENOSPC;
            return false;
        }
        done += (uint64_t)r;
    }
    return true;
}

bool gir_path_is_stream(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

gir_status gir_spool(const char *path, char **tmp, gir_error *err)
{
    *tmp = NULL;
    const char *dir = getenv("TMPDIR");
    char *t = gir_path_join(dir && *dir ? dir : "/tmp", "graphconv-input-XXXXXX");
    if (!t)
        return gir_nomem(err);
    int in = open(path, O_RDONLY);
    if (in < 0) {
        free(t);
        return io_fail(err, "cannot open", path);
    }
    int out = mkstemp(t);
    if (out < 0) {
        gir_status st = gir_fail(err, GIR_E_IO, "cannot make a temporary file to hold the input: %s: %s", t,
                                 strerror(errno));
        gir_err_file(err, path);
        close(in);
        free(t);
        return st;
    }
    gir_status st = GIR_OK;
    char buf[65536];
    uint64_t copied = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf); /* a stream: read as it comes */
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = io_fail(err, "cannot read", path);
            break;
        }
        if (n == 0)
            break;
        if (!gir_pwrite_full(out, buf, (uint64_t)n, copied)) {
            st = io_fail(err, "cannot copy the input to a temporary file", path);
            break;
        }
        copied += (uint64_t)n;
    }
    close(in);
    if (close(out) != 0 && !st)
        st = io_fail(err, "cannot copy the input to a temporary file", path);
    if (st) {
        unlink(t);
        free(t);
        return st;
    }
    *tmp = t;
    return GIR_OK;
}

gir_status gir_read_file(const char *path, size_t max_bytes, char **data, size_t *len, gir_error *err)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return io_fail(err, "cannot open", path);
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fclose(f);
        return io_fail(err, "cannot stat", path);
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        gir_fail(err, GIR_E_IO, "is a directory, not a file");
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    if (max_bytes && (uint64_t)st.st_size > max_bytes) {
        fclose(f);
        gir_fail(err, GIR_E_LIMIT, "file is %lld bytes, more than the %zu allowed", (long long)st.st_size,
                 max_bytes);
        gir_err_file(err, path);
        return GIR_E_LIMIT;
    }
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return gir_nomem(err);
    }
    size_t n = 0;
    for (;;) {
        if (n + 1 >= cap) {
            if (max_bytes && n >= max_bytes) {
                free(buf);
                fclose(f);
                gir_fail(err, GIR_E_LIMIT, "file is larger than the %zu bytes allowed", max_bytes);
                gir_err_file(err, path);
                return GIR_E_LIMIT;
            }
            if (cap > SIZE_MAX / 2) {
                free(buf);
                fclose(f);
                return gir_nomem(err);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return gir_nomem(err);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                free(buf);
                gir_status stt = io_fail(err, "cannot read", path);
                fclose(f);
                return stt;
            }
            break;
        }
    }
    fclose(f);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return GIR_OK;
}

gir_status gir_read_head(const char *path, unsigned char *buf, size_t n, size_t *got, gir_error *err)
{
    *got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return io_fail(err, "cannot open", path);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        gir_fail(err, GIR_E_IO, "is a directory, not a file");
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    size_t total = 0;
    while (total < n) {
        ssize_t r = read(fd, buf + total, n - total);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            gir_status st2 = io_fail(err, "cannot read", path);
            close(fd);
            return st2;
        }
        if (r == 0)
            break;
        total += (size_t)r;
    }
    close(fd);
    *got = total;
    return GIR_OK;
}

/* ---- atomic outputs ------------------------------------------------------ */

struct gir_outfile {
    char *path;
    char *tmp;
    FILE *f;
    bool overwrite;
};

gir_status gir_outfile_open(const char *path, bool overwrite, gir_outfile **out, gir_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            gir_fail(err, GIR_E_IO, "output is a directory");
            gir_err_file(err, path);
            return GIR_E_IO;
        }
        if (!overwrite) {
            gir_fail(err, GIR_E_EXISTS, "output exists; use --force to overwrite it");
            gir_err_file(err, path);
            return GIR_E_EXISTS;
        }
    }
    gir_outfile *o = calloc(1, sizeof *o);
    if (!o)
        return gir_nomem(err);
    o->overwrite = overwrite;
    o->path = gir_strdupf("%s", path);
    char *dir = gir_path_dirname(path);
    char *tmpl = dir ? gir_strdupf("%s/.%s.tmpXXXXXX", dir, gir_path_basename(path)) : NULL;
    free(dir);
    if (!o->path || !tmpl) {
        free(tmpl);
        free(o->path);
        free(o);
        return gir_nomem(err);
    }
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        gir_status st2 = io_fail(err, "cannot create a temporary file beside the output", path);
        free(tmpl);
        free(o->path);
        free(o);
        return st2;
    }
    /* mkstemp makes 0600; outputs get the usual umask-governed mode. */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    o->tmp = tmpl;
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        close(fd);
        unlink(tmpl);
        free(tmpl);
        free(o->path);
        free(o);
        return gir_nomem(err);
    }
    *out = o;
    return GIR_OK;
}

gir_status gir_outfile_write(gir_outfile *f, const void *p, size_t n, gir_error *err)
{
    if (n && fwrite(p, 1, n, f->f) != n)
        return io_fail(err, "cannot write", f->path);
    return GIR_OK;
}

void *gir_outfile_stream(gir_outfile *f)
{
    return f->f;
}

const char *gir_outfile_temp_path(const gir_outfile *f)
{
    return f->tmp;
}

static void outfile_free(gir_outfile *f)
{
    free(f->tmp);
    free(f->path);
    free(f);
}

gir_status gir_outfile_commit(gir_outfile *f, gir_error *err)
{
    gir_status st = GIR_OK;
    if (f->f) {
        if (fflush(f->f) != 0 || fsync(fileno(f->f)) != 0)
            st = io_fail(err, "cannot write", f->path);
        if (fclose(f->f) != 0 && st == GIR_OK)
            st = io_fail(err, "cannot write", f->path);
        f->f = NULL;
    }
    if (st == GIR_OK && !f->overwrite) {
        /* Re-check: something may have appeared while we wrote. link()
         * fails if the target exists, so the check and the move are one. */
        if (link(f->tmp, f->path) == 0) {
            unlink(f->tmp);
            outfile_free(f);
            return GIR_OK;
        }
        if (errno == EEXIST) {
            gir_fail(err, GIR_E_EXISTS, "output exists; use --force to overwrite it");
            gir_err_file(err, f->path);
            st = GIR_E_EXISTS;
        }
        /* other errors (e.g. no hard links on this file system): rename */
    }
    if (st == GIR_OK && rename(f->tmp, f->path) != 0)
        st = io_fail(err, "cannot rename the temporary file onto", f->path);
    if (st != GIR_OK)
        unlink(f->tmp);
    outfile_free(f);
    return st;
}

void gir_outfile_abort(gir_outfile *f)
{
    if (!f)
        return;
    if (f->f)
        fclose(f->f);
    unlink(f->tmp);
    outfile_free(f);
}
