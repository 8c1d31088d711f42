/* Reading files and writing outputs atomically (temporary file + rename). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/syscall.h>

static gir_status io_fail(gir_error *err, const char *what, const char *path)
{
    return gir_fail_file(err, path, GIR_E_IO, "%s: %s", what, strerror(errno));
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

void gir_file_id_from_stat(const struct stat *st, gir_file_id *id)
{
    id->dev = (uint64_t)st->st_dev;
    id->ino = (uint64_t)st->st_ino;
    id->size = (uint64_t)st->st_size;
    id->mtime_s = (int64_t)st->st_mtim.tv_sec;
    id->mtime_ns = (int64_t)st->st_mtim.tv_nsec;
}

gir_status gir_open_same(const char *path, const gir_file_id *id, const char *what, int *fd, gir_error *err)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        gir_status st = gir_fail(err, errno == ENOMEM ? GIR_E_NOMEM : GIR_E_IO,
                                 "cannot open %s again to load a tensor: %s (it was there when the model was read)",
                                 what, strerror(errno));
        gir_err_file(err, path);
        return st;
    }
    struct stat sb;
    if (fstat(*fd, &sb) != 0) {
        gir_status st = io_fail(err, "cannot stat", path);
        close(*fd);
        *fd = -1;
        return st;
    }
    gir_file_id now;
    gir_file_id_from_stat(&sb, &now);
    if (now.dev != id->dev || now.ino != id->ino || now.size != id->size || now.mtime_s != id->mtime_s ||
        now.mtime_ns != id->mtime_ns) {
        close(*fd);
        *fd = -1;
        gir_fail(err, GIR_E_IO,
                 "%s was %s after the model was read (another process wrote it meanwhile): its tensors may not "
                 "belong to the graph that was read, so none is taken from it; read the model again",
                 what, now.dev != id->dev || now.ino != id->ino ? "replaced" : "rewritten");
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    return GIR_OK;
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

gir_status gir_spool(const char *path, char **tmp, int *keep_fd, gir_error *err)
{
    *tmp = NULL;
    *keep_fd = -1;
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
    /* Where /proc is there, the copy loses its name at once and lives on as
     * /proc/self/fd/N while the descriptor is open: nothing is left behind
     * whatever ends the process. */
    char *proc = st ? NULL : gir_strdupf("/proc/self/fd/%d", out);
    struct stat a, b;
    if (proc && stat(proc, &a) == 0 && fstat(out, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
        unlink(t) == 0) {
        free(t);
        *tmp = proc;
        *keep_fd = out;
        return GIR_OK;
    }
    free(proc);
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
        return gir_fail_file(err, path, GIR_E_IO, "is a directory, not a file");
    }
    if (max_bytes && (uint64_t)st.st_size > max_bytes) {
        fclose(f);
        return gir_fail_file(err, path, GIR_E_LIMIT, "file is %lld bytes, more than the %zu allowed",
                             (long long)st.st_size, max_bytes);
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
                return gir_fail_file(err, path, GIR_E_LIMIT, "file is larger than the %zu bytes allowed", max_bytes);
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
        return gir_fail_file(err, path, GIR_E_IO, "is a directory, not a file");
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

/* A temporary output is NAME's directory's ".NAME.graphconv-PID-RANDOM.tmp";
 * a commit of several files at once writes the journal
 * ".FIRST.graphconv-commit" listing them.  Commits hold an exclusive
 * flock() on the output directory, so commits into one directory follow
 * one another (concurrent --force writers never mix their files), and a
 * journal seen by a process holding the lock belongs to a writer that died
 * mid-commit: its renames are finished (rolled forward) before anything
 * else.  Temporary files of processes that no longer exist are removed by
 * the next output opened in their directory. */

#define TMP_TAG ".graphconv-"
#define TMP_SUFFIX ".tmp"
#define JOURNAL_SUFFIX ".graphconv-commit"

struct gir_outfile {
    char *path;
    char *tmp;
    FILE *f;
    bool overwrite;
};

/* The temporary files alive in this process, for gir_outfile_remove_temps
 * (a signal handler's cleanup).  The only mutable global state of the
 * library: a fixed table of atomic slots, safe to read from a signal
 * handler.  A file that finds no free slot is still removed by the next
 * run (its process is gone by then). */
#define LIVE_SLOTS 256
static _Atomic(char *) live_tmp[LIVE_SLOTS];

static void live_add(char *tmp)
{
    for (size_t i = 0; i < LIVE_SLOTS; i++) {
        char *none = NULL;
        if (atomic_compare_exchange_strong(&live_tmp[i], &none, tmp))
            return;
    }
}

static void live_remove(char *tmp)
{
    for (size_t i = 0; i < LIVE_SLOTS; i++) {
        char *want = tmp;
        if (atomic_compare_exchange_strong(&live_tmp[i], &want, NULL))
            return;
    }
}

/* Empties and removes a staging directory with async-signal-safe calls
 * only (raw getdents64, no stdio or malloc). */
static void remove_stage_raw(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct linux_dirent64 {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *e = (struct linux_dirent64 *)(void *)(buf + off);
            if (strcmp(e->name, ".") != 0 && strcmp(e->name, "..") != 0)
                (void)unlinkat(fd, e->name, 0);
            off += e->reclen;
        }
    }
    close(fd);
    (void)rmdir(dir);
}

void gir_outfile_remove_temps(void)
{
    for (size_t i = 0; i < LIVE_SLOTS; i++) {
        char *t = atomic_exchange(&live_tmp[i], NULL);
        if (t && unlink(t) != 0 && (errno == EISDIR || errno == EPERM)) /* async-signal-safe */
            remove_stage_raw(t);
    }
}

/* The signals the CLI cleans up on are held while a commit renames files
 * (restored when the directory is unlocked), so that its handler never
 * removes a staged file that a journal still promises. */
static _Thread_local sigset_t held_mask;
static _Thread_local int held_depth;

static void hold_signals(void)
{
    if (held_depth++ == 0) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGINT);
        sigaddset(&s, SIGTERM);
        sigaddset(&s, SIGHUP);
        sigaddset(&s, SIGQUIT);
        pthread_sigmask(SIG_BLOCK, &s, &held_mask);
    }
}

static void release_signals(void)
{
    if (held_depth > 0 && --held_depth == 0)
        pthread_sigmask(SIG_SETMASK, &held_mask, NULL);
}

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : S_ISLNK(m) ? "a symbolic link"
           : "not a regular file";
}

/* Whether path may be written: absent, or a regular file and overwrite.
 * Only regular files are ever replaced. */
static gir_status check_target(const char *path, bool overwrite, gir_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? GIR_OK : io_fail(err, "cannot look at the output", path);
    if (!S_ISREG(st.st_mode)) {
        gir_fail(err, GIR_E_IO, "output is %s; graphconv replaces only regular files", file_kind(st.st_mode));
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    if (!overwrite) {
        gir_fail(err, GIR_E_EXISTS, "output exists; use --force to overwrite it");
        gir_err_file(err, path);
        return GIR_E_EXISTS;
    }
    return GIR_OK;
}

static int open_dir(const char *path)
{
    char *dir = gir_path_dirname(path);
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    free(dir);
    return fd;
}

/* Parses "PID-" after TMP_TAG in a directory entry name; 0 if not ours. */
static long tmp_owner(const char *name)
{
    if (name[0] != '.' || !gir_str_ends_with(name, TMP_SUFFIX))
        return 0;
    const char *tag = strstr(name, TMP_TAG);
    if (!tag)
        return 0;
    for (const char *t = strstr(tag + 1, TMP_TAG); t; t = strstr(t + 1, TMP_TAG))
        tag = t; /* the last tag: NAME may hold one too */
    char *end;
    long pid = strtol(tag + strlen(TMP_TAG), &end, 10);
    return pid > 0 && *end == '-' ? pid : 0;
}

/* Finishes the commit a journal describes: each "LEN TEMP\tLEN TARGET"
 * line whose temporary file still exists is renamed onto its target. */
static void roll_forward(int dfd, const char *journal)
{
    int fd = openat(dfd, journal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    char buf[16384];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) {
        buf[n] = '\0';
        char *p = strchr(buf, '\n'); /* skip the header line */
        while (p && *++p) {
            char *a = p, *tab = strchr(a, '\t'), *nl = tab ? strchr(tab, '\n') : NULL;
            if (!nl)
                break;
            *tab = *nl = '\0';
            /* a temporary file of this directory, or a file in one of its
             * staging directories (STAGE/NAME) */
            char *slash = strchr(a, '/');
            if (slash)
                *slash = '\0';
            bool ours = tmp_owner(a) && (!slash || (slash[1] && !strchr(slash + 1, '/')));
            if (slash)
                *slash = '/';
            if (ours && !strchr(tab + 1, '/'))
                (void)renameat(dfd, a, dfd, tab + 1);
            p = nl;
        }
    }
    (void)fsync(dfd);
    (void)unlinkat(dfd, journal, 0);
    (void)fsync(dfd);
}

static int create_temp(const char *dir, const char *base, bool is_dir, char **out);

/* A directory stream over fd, which it takes (closed when the stream cannot
 * be made; -1 gives NULL). */
static DIR *dir_stream(int fd)
{
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

/* Removes a dead process's staging directory name of dfd: its files (it
 * holds no directories), then itself. */
static void remove_stage(int dfd, const char *name)
{
    DIR *d = dir_stream(openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
    (void)unlinkat(dfd, name, AT_REMOVEDIR);
}

/* With the directory lock held: completes dead writers' commits, removes
 * temporary files and staging directories of processes that are gone. */
static void recover_dir(int dfd)
{
    DIR *d = dir_stream(dup(dfd));
    if (!d)
        return;
    /* journals first: they name temporary files to keep */
    for (int pass = 0; pass < 2; pass++) {
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d))) {
            if (pass == 0 && e->d_name[0] == '.' && gir_str_ends_with(e->d_name, JOURNAL_SUFFIX)) {
                roll_forward(dfd, e->d_name);
            } else if (pass == 1) {
                long pid = tmp_owner(e->d_name);
                if (pid && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH &&
                    unlinkat(dfd, e->d_name, 0) != 0 && (errno == EISDIR || errno == EPERM))
                    remove_stage(dfd, e->d_name);
            }
        }
    }
    closedir(d);
}

/* Locks path's directory (exclusive flock on the directory itself: no lock
 * file is left behind) and cleans it up; -1 if the directory cannot be
 * opened or locked (a file system without flock: no cleanup then). */
static int lock_dir(const char *path)
{
    int dfd = open_dir(path);
    if (dfd < 0)
        return -1;
    hold_signals();
    while (flock(dfd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            close(dfd);
            release_signals();
            return -1;
        }
    }
    recover_dir(dfd);
    return dfd;
}

static void unlock_dir(int dfd)
{
    if (dfd >= 0) {
        flock(dfd, LOCK_UN);
        close(dfd);
        release_signals();
    }
}

int gir_outdir_lock(const char *path)
{
    return lock_dir(path);
}

gir_status gir_outdir_stage(const char *path, char **stage, gir_error *err)
{
    *stage = NULL;
    char *dir = gir_path_dirname(path);
    if (!dir)
        return gir_nomem(err);
    int r = create_temp(dir, gir_path_basename(path), true, stage);
    free(dir);
    if (r < 0)
        return io_fail(err, "cannot create a staging directory beside", path);
    return GIR_OK;
}

/* Whether dfd holds a commit journal. */
static bool has_journal(int dfd)
{
    DIR *d = dir_stream(dup(dfd));
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)))
        found = e->d_name[0] == '.' && gir_str_ends_with(e->d_name, JOURNAL_SUFFIX);
    closedir(d);
    return found;
}

gir_status gir_indir_lock(const char *path, int *fd, gir_error *err)
{
    *fd = -1;
    int dfd = open_dir(path);
    if (dfd < 0)
        return GIR_OK; /* nothing to lock: the file is read as it is */
    for (int attempt = 0; attempt < 8; attempt++) {
        while (flock(dfd, LOCK_SH) != 0)
            if (errno != EINTR) {
                close(dfd);
                return GIR_OK; /* no locks on this file system */
            }
        if (!has_journal(dfd)) {
            *fd = dfd;
            return GIR_OK;
        }
        /* a writer died mid-commit: finish its commit (exclusively), then
         * read under the shared lock again */
        flock(dfd, LOCK_UN);
        int x = lock_dir(path);
        unlock_dir(x);
    }
    close(dfd);
    gir_fail(err, GIR_E_IO,
             "the model's directory holds an unfinished commit of graphconv (a .NAME" JOURNAL_SUFFIX
             " journal) that could not be finished (read-only?): its files may be a new graph beside old "
             "weights; finish it by writing any output into that directory, or remove the journal after "
             "checking the files");
    gir_err_file(err, path);
    return GIR_E_IO;
}

void gir_indir_unlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}

void gir_outdir_unstage(char *stage)
{
    if (stage)
        live_remove(stage);
    free(stage);
}

void gir_outdir_unlock(int fd)
{
    unlock_dir(fd);
}

/* A new file DIR/.BASE.graphconv-PID-RANDOM.tmp created exclusively, mode
 * 0666 less the umask (applied by open itself: the process umask is never
 * changed); with is_dir a directory of that name (mode 0700): 0, not an fd. */
static int create_temp(const char *dir, const char *base, bool is_dir, char **out)
{
    static _Atomic unsigned long counter;
    unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20) ^
                              (unsigned long long)(uintptr_t)&seed;
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned long long r = seed + (unsigned long long)atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ull;
        r ^= r >> 29;
        r *= 0xbf58476d1ce4e5b9ull;
        r ^= r >> 32;
        char *t = gir_strdupf("%s/.%s" TMP_TAG "%ld-%06llx" TMP_SUFFIX, dir, base, (long)getpid(),
                              r & 0xffffffull);
        if (!t) {
            errno = ENOMEM;
            return -1;
        }
        int fd = is_dir ? mkdir(t, 0700) : open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) {
            live_add(t);
            *out = t;
            return fd;
        }
        free(t);
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

gir_status gir_outfile_open(const char *path, bool overwrite, gir_outfile **out, gir_error *err)
{
    *out = NULL;
    TRY(check_target(path, overwrite, err));
    /* stale files of earlier runs go first */
    unlock_dir(lock_dir(path));
    gir_outfile *o = calloc(1, sizeof *o);
    if (!o)
        return gir_nomem(err);
    o->overwrite = overwrite;
    o->path = gir_strdupf("%s", path);
    char *dir = gir_path_dirname(path);
    if (!o->path || !dir) {
        free(dir);
        free(o->path);
        free(o);
        return gir_nomem(err);
    }
    int fd = create_temp(dir, gir_path_basename(path), false, &o->tmp);
    free(dir);
    if (fd < 0) {
        gir_status st2 = io_fail(err, "cannot create a temporary file beside the output", path);
        free(o->path);
        free(o);
        return st2;
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
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
    if (f->tmp)
        live_remove(f->tmp);
    free(f->tmp);
    free(f->path);
    free(f);
}

/* Puts tmp at path without ever replacing an existing file: link() (which
 * fails if path exists), else renameat2(RENAME_NOREPLACE) on file systems
 * without hard links; never a plain rename(). */
static gir_status publish_new(const gir_outfile *f, gir_error *err)
{
    if (link(f->tmp, f->path) == 0) {
        unlink(f->tmp);
        return GIR_OK;
    }
    int e = errno;
    if (e != EEXIST) {
#ifdef RENAME_NOREPLACE
        if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_NOREPLACE) == 0)
            return GIR_OK;
        e = errno;
#endif
    }
    if (e == EEXIST) {
        gir_fail(err, GIR_E_EXISTS, "output exists; use --force to overwrite it");
        gir_err_file(err, f->path);
        return GIR_E_EXISTS;
    }
    errno = e;
    return io_fail(err, "cannot move the temporary file to the output without risking to overwrite another file",
                   f->path);
}

gir_status gir_outdir_journal(int dfd, size_t n, const char *const *temps, const char *const *targets, char **name,
                              gir_error *err)
{
    gir_buf b = GIR_BUF_INIT;
    gir_buf_printf(&b, "graphconv-commit 1 %ld\n", (long)getpid());
    for (size_t i = 0; i < n; i++)
        gir_buf_printf(&b, "%s\t%s\n", temps[i], targets[i]);
    *name = gir_strdupf(".%s" JOURNAL_SUFFIX, targets[0]);
    char *tmp = gir_strdupf(".%s" TMP_TAG "%ld-journal" TMP_SUFFIX, targets[0], (long)getpid());
    if (!b.data || !*name || !tmp) {
        gir_buf_free(&b);
        free(tmp);
        free(*name);
        *name = NULL;
        return gir_nomem(err);
    }
    gir_status st = GIR_OK;
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || !gir_pwrite_full(fd, b.data, b.len, 0) || fsync(fd) != 0 ||
        renameat(dfd, tmp, dfd, *name) != 0 || fsync(dfd) != 0)
        st = gir_fail(err, GIR_E_IO, "cannot write the commit journal %s beside the output: %s", *name, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (st) {
        unlinkat(dfd, tmp, 0);
        free(*name);
        *name = NULL;
    }
    gir_buf_free(&b);
    free(tmp);
    return st;
}

void gir_outdir_journal_done(int dfd, char *name)
{
    if (dfd >= 0) {
        (void)fsync(dfd);
        if (name) {
            unlinkat(dfd, name, 0);
            (void)fsync(dfd);
        }
    }
    free(name);
}

/* The journal of a commit of n > 1 files (all in dfd's directory). */
static gir_status write_journal(int dfd, gir_outfile **fs, size_t n, char **name, gir_error *err)
{
    const char **t = calloc(2 * n, sizeof *t);
    if (!t)
        return gir_nomem(err);
    for (size_t i = 0; i < n; i++) {
        t[i] = gir_path_basename(fs[i]->tmp);
        t[n + i] = gir_path_basename(fs[i]->path);
    }
    gir_status st = gir_outdir_journal(dfd, n, t, t + n, name, err);
    free(t);
    return st;
}

gir_status gir_outfile_commit_all(gir_outfile **fs, size_t n, gir_error *err)
{
    gir_status st = GIR_OK;
    for (size_t i = 0; i < n; i++) {
        gir_outfile *f = fs[i];
        if (!f->f)
            continue;
        if ((fflush(f->f) != 0 || fsync(fileno(f->f)) != 0) && st == GIR_OK)
            st = io_fail(err, "cannot write", f->path);
        if (fclose(f->f) != 0 && st == GIR_OK)
            st = io_fail(err, "cannot write", f->path);
        f->f = NULL;
    }
    int dfd = st == GIR_OK ? lock_dir(fs[0]->path) : -1;
    bool same_dir = true;
    for (size_t i = 1; i < n; i++) {
        char *a = gir_path_dirname(fs[0]->path), *b = gir_path_dirname(fs[i]->path);
        same_dir = same_dir && a && b && strcmp(a, b) == 0;
        free(a);
        free(b);
    }
    for (size_t i = 0; st == GIR_OK && i < n; i++)
        st = check_target(fs[i]->path, fs[i]->overwrite, err);
    char *journal = NULL;
    if (st == GIR_OK && n > 1 && dfd >= 0 && same_dir)
        st = write_journal(dfd, fs, n, &journal, err);
    size_t done = 0;
    for (; st == GIR_OK && done < n; done++) {
        gir_outfile *f = fs[done];
        if (!f->overwrite)
            st = publish_new(f, err);
        else if (rename(f->tmp, f->path) != 0)
            st = io_fail(err, "cannot rename the temporary file onto", f->path);
        if (st)
            break;
    }
    if (st && done > 0) {
        /* undo what this commit published where nothing was replaced */
        for (size_t i = 0; i < done; i++)
            if (!fs[i]->overwrite)
                unlink(fs[i]->path);
    }
    gir_outdir_journal_done(dfd, journal);
    unlock_dir(dfd);
    for (size_t i = 0; i < n; i++) {
        unlink(fs[i]->tmp); /* gone when published */
        outfile_free(fs[i]);
    }
    return st;
}

gir_status gir_outfile_commit(gir_outfile *f, gir_error *err)
{
    return gir_outfile_commit_all(&f, 1, err);
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
