/* Safe zip reading and deterministic zip writing over libzip. */
#include "io/zip.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "core/internal.h"

#define GIR_ZIP_RATIO_FLOOR (1u << 20) /* the ratio check applies above 1 MiB */

void gir_zip_limits_default(gir_zip_limits *lim)
{
    lim->max_total = UINT64_C(4) << 30;
    lim->max_member = UINT64_C(4) << 30;
    lim->max_members = 65536;
    lim->max_ratio = 1000;
}

/* ---- names ------------------------------------------------------------------ */

/* NULL when name is a safe relative member path, else why not.  A trailing
 * '/' (directory entry) is allowed; empty components are not. */
static const char *name_problem(const char *name, size_t len)
{
    if (len == 0)
        return "has an empty name";
    if (memchr(name, '\0', len))
        return "has a NUL byte in its name";
    if (memchr(name, '\\', len))
        return "has a backslash in its name";
    if (name[0] == '/')
        return "has an absolute path";
    if (len >= 2 && name[1] == ':' &&
        ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')))
        return "has a drive letter";
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && name[i] != '/')
            continue;
        size_t clen = i - start;
        if (clen == 2 && name[start] == '.' && name[start + 1] == '.')
            return "has a '..' component";
        if (clen == 0 && i < len)
            return "has an empty path component";
        start = i + 1;
    }
    return NULL;
}

/* ---- reading -------------------------------------------------------------- */

typedef struct zip_member {
    char *name;
    uint64_t size;
} zip_member;

struct gir_zip {
    atomic_int refs;
    pthread_mutex_t lock; /* libzip handles are not thread-safe */
    zip_t *za;
    char *path;           /* for error messages (may be NULL) */
    zip_member *members;
    size_t n;
    size_t *sorted;       /* member indices sorted by name */
    uint64_t max_member;
    bool is_file;         /* opened from the file at path */
};

static char *libzip_reason(int code)
{
    zip_error_t ze;
    zip_error_init_with_code(&ze, code);
    char *s = gir_strdupf("%s", zip_error_strerror(&ze));
    zip_error_fini(&ze);
    return s;
}

static gir_status fail_libzip_code(gir_error *err, int code, const char *what)
{
    char *r = libzip_reason(code);
    gir_status st = gir_fail(err, code == ZIP_ER_MEMORY ? GIR_E_NOMEM : GIR_E_ARCHIVE, "%s: %s", what,
                             r ? r : "unknown libzip error");
    free(r);
    return st;
}

static gir_status fail_zip_error(gir_error *err, zip_error_t *ze, const char *what)
{
    int code = zip_error_code_zip(ze);
    gir_status st = gir_fail(err, code == ZIP_ER_MEMORY ? GIR_E_NOMEM : GIR_E_ARCHIVE, "%s: %s", what,
                             zip_error_strerror(ze));
    return st;
}

/* Where the central directory's raw names are read from: libzip replaces
 * NUL bytes in names with spaces, so the names are checked on the raw
 * central directory as well. */
typedef struct raw_src {
    int fd;                    /* a file, or -1 */
    const unsigned char *mem;  /* or memory */
    uint64_t size;
} raw_src;

static bool raw_read(const raw_src *s, uint64_t off, void *buf, size_t n)
{
    if (off > s->size || n > s->size - off)
        return false;
    if (s->mem) {
        memcpy(buf, s->mem + off, n);
        return true;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(s->fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        done += (size_t)r;
    }
    return true;
}

static inline uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* The raw central directory: its bytes and where each entry's name is. */
typedef struct raw_cd {
    unsigned char *bytes;
    size_t n;
    size_t *name_off;
    uint16_t *name_len;
} raw_cd;

static void raw_cd_free(raw_cd *cd)
{
    free(cd->bytes);
    free(cd->name_off);
    free(cd->name_len);
}

/* Finds the end of central directory record (zip64 aware): the entry
 * count and where the central directory is. */
static gir_status raw_eocd(const raw_src *s, uint64_t *entries_out, uint64_t *cd_off_out, uint64_t *cd_size_out,
                           gir_error *err)
{
    enum { EOCD = 22, TAIL = 65535 + EOCD };
    uint64_t tail = s->size < TAIL ? s->size : TAIL;
    if (tail < EOCD)
        return gir_fail(err, GIR_E_ARCHIVE, "no end of central directory record");
    unsigned char *buf = malloc((size_t)tail);
    if (!buf)
        return gir_nomem(err);
    uint64_t base = s->size - tail;
    if (!raw_read(s, base, buf, (size_t)tail)) {
        free(buf);
        return gir_fail(err, GIR_E_ARCHIVE, "cannot read the end of central directory record");
    }
    /* The last signature whose comment ends exactly at the end of file, else
     * the last one that fits. */
    ptrdiff_t found = -1, fits = -1;
    for (ptrdiff_t p = (ptrdiff_t)tail - EOCD; p >= 0 && found < 0; p--) {
        if (gir_le32(buf + p) != 0x06054b50u)
            continue;
        uint64_t end = (uint64_t)p + EOCD + le16(buf + p + 20);
        if (end == tail)
            found = p;
        else if (end < tail && fits < 0)
            fits = p;
    }
    if (found < 0)
        found = fits;
    if (found < 0) {
        free(buf);
        return gir_fail(err, GIR_E_ARCHIVE, "no end of central directory record");
    }
    const unsigned char *e = buf + found;
    uint64_t entries = le16(e + 10), cd_size = gir_le32(e + 12), cd_off = gir_le32(e + 16);
    uint64_t eocd_pos = base + (uint64_t)found;
    if (eocd_pos >= 20) {
        unsigned char loc[20], z64[56];
        if (raw_read(s, eocd_pos - 20, loc, sizeof loc) && gir_le32(loc) == 0x07064b50u &&
            raw_read(s, gir_le64(loc + 8), z64, sizeof z64) && gir_le32(z64) == 0x06064b50u) {
            entries = gir_le64(z64 + 32);
            cd_size = gir_le64(z64 + 40);
            cd_off = gir_le64(z64 + 48);
        }
    }
    free(buf);
    *entries_out = entries;
    *cd_off_out = cd_off;
    *cd_size_out = cd_size;
    return GIR_OK;
}

/* Locates and reads the central directory (at most max_entries entries). */
static gir_status raw_cd_read(const raw_src *s, uint64_t max_entries, raw_cd *out, gir_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t entries, cd_off, cd_size;
    gir_status st = raw_eocd(s, &entries, &cd_off, &cd_size, err);
    if (st)
        return st;
    if (entries > max_entries)
        return gir_fail(err, GIR_E_ARCHIVE, "archive has %llu members, more than the %llu allowed",
                        (unsigned long long)entries, (unsigned long long)max_entries);
    if (cd_off > s->size || cd_size > s->size - cd_off || cd_size / 46 < entries)
        return gir_fail(err, GIR_E_ARCHIVE, "central directory lies outside the file");
    out->bytes = malloc(cd_size ? (size_t)cd_size : 1);
    out->name_off = malloc((entries ? (size_t)entries : 1) * sizeof *out->name_off);
    out->name_len = malloc((entries ? (size_t)entries : 1) * sizeof *out->name_len);
    if (!out->bytes || !out->name_off || !out->name_len) {
        raw_cd_free(out);
        return gir_nomem(err);
    }
    if (!raw_read(s, cd_off, out->bytes, (size_t)cd_size)) {
        raw_cd_free(out);
        return gir_fail(err, GIR_E_ARCHIVE, "cannot read the central directory");
    }
    uint64_t pos = 0;
    for (size_t i = 0; i < entries; i++) {
        const unsigned char *c = out->bytes + pos;
        if (cd_size - pos < 46 || gir_le32(c) != 0x02014b50u) {
            raw_cd_free(out);
            return gir_fail(err, GIR_E_ARCHIVE, "central directory entry %zu is malformed", i);
        }
        uint64_t rec = 46 + (uint64_t)le16(c + 28) + le16(c + 30) + le16(c + 32);
        if (cd_size - pos < rec) {
            raw_cd_free(out);
            return gir_fail(err, GIR_E_ARCHIVE, "central directory entry %zu is truncated", i);
        }
        out->name_off[i] = (size_t)pos + 46;
        out->name_len[i] = le16(c + 28);
        pos += rec;
    }
    out->n = (size_t)entries;
    return GIR_OK;
}

/* After libzip accepted the archive: the raw names must have no NUL. */
static gir_status raw_check_names(const raw_src *s, const gir_zip *z, gir_error *err)
{
    raw_cd cd;
    gir_status st = raw_cd_read(s, z->n, &cd, err);
    if (st)
        return st;
    if (cd.n != z->n)
        st = gir_fail(err, GIR_E_ARCHIVE, "central directory has %zu entries, libzip found %zu", cd.n, z->n);
    for (size_t i = 0; st == GIR_OK && i < cd.n; i++)
        if (memchr(cd.bytes + cd.name_off[i], '\0', cd.name_len[i]))
            st = gir_fail(err, GIR_E_ARCHIVE, "member '%s' has a NUL byte in its name", z->members[i].name);
    raw_cd_free(&cd);
    return st;
}

typedef struct name_idx {
    const char *name;
    size_t idx;
} name_idx;

static int cmp_name_idx(const void *a, const void *b)
{
    const name_idx *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

/* libzip refused duplicate names without saying which: find one. */
static gir_status raw_report_duplicate(const raw_src *s, const gir_zip_limits *lim, gir_error *err)
{
    raw_cd cd;
    gir_status st = raw_cd_read(s, lim->max_members, &cd, err);
    if (st)
        return st;
    char **names = calloc(cd.n ? cd.n : 1, sizeof *names);
    name_idx *ni = calloc(cd.n ? cd.n : 1, sizeof *ni);
    st = names && ni ? GIR_OK : gir_nomem(err);
    for (size_t i = 0; st == GIR_OK && i < cd.n; i++) {
        names[i] = gir_strdupf("%.*s", (int)cd.name_len[i], (const char *)cd.bytes + cd.name_off[i]);
        if (!names[i])
            st = gir_nomem(err);
        ni[i] = (name_idx){ names[i], i };
    }
    if (st == GIR_OK) {
        qsort(ni, cd.n, sizeof *ni, cmp_name_idx);
        for (size_t k = 1; k < cd.n; k++)
            if (strcmp(ni[k - 1].name, ni[k].name) == 0) {
                st = gir_fail(err, GIR_E_ARCHIVE, "member '%s' appears more than once", ni[k].name);
                break;
            }
    }
    for (size_t i = 0; names && i < cd.n; i++)
        free(names[i]);
    free(names);
    free(ni);
    raw_cd_free(&cd);
    return st;
}

static void zip_free(gir_zip *z)
{
    if (!z)
        return;
    if (z->za)
        zip_discard(z->za);
    for (size_t i = 0; i < z->n; i++)
        free(z->members[i].name);
    free(z->members);
    free(z->sorted);
    free(z->path);
    pthread_mutex_destroy(&z->lock);
    free(z);
}

/* Validates the open archive z->za against lim and fills the member table. */
static gir_status zip_validate(gir_zip *z, const gir_zip_limits *lim, const raw_src *raw, gir_error *err)
{
    zip_int64_t ne = zip_get_num_entries(z->za, 0);
    if (ne < 0)
        return gir_fail(err, GIR_E_ARCHIVE, "cannot count the members");
    if ((uint64_t)ne > lim->max_members)
        return gir_fail(err, GIR_E_ARCHIVE, "archive has %lld members, more than the %u allowed", (long long)ne,
                        lim->max_members);
    z->members = calloc(ne ? (size_t)ne : 1, sizeof *z->members);
    z->sorted = calloc(ne ? (size_t)ne : 1, sizeof *z->sorted);
    if (!z->members || !z->sorted)
        return gir_nomem(err);
    uint64_t total = 0;
    for (zip_int64_t i = 0; i < ne; i++) {
        zip_stat_t sb;
        zip_stat_init(&sb);
        if (zip_stat_index(z->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW, &sb) != 0 || !sb.name)
            return fail_zip_error(err, zip_get_error(z->za), "cannot read a central directory entry");
        z->members[i].name = gir_strdupf("%s", sb.name);
        if (!z->members[i].name)
            return gir_nomem(err);
        z->n = (size_t)i + 1;
        const char *nm = z->members[i].name;
        const char *why = name_problem(nm, strlen(nm));
        if (why)
            return gir_fail(err, GIR_E_ARCHIVE, "member '%s' %s", nm, why);
        const zip_uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
        if ((sb.valid & need) != need)
            return gir_fail(err, GIR_E_ARCHIVE, "member '%s': sizes are missing", nm);
        if ((sb.valid & ZIP_STAT_ENCRYPTION_METHOD) && sb.encryption_method != ZIP_EM_NONE)
            return gir_fail(err, GIR_E_UNSUPPORTED, "member '%s' is encrypted", nm);
        if (!zip_compression_method_supported((zip_int32_t)sb.comp_method, 0))
            return gir_fail(err, GIR_E_UNSUPPORTED, "member '%s' uses compression method %u, which is not supported",
                            nm, (unsigned)sb.comp_method);
        z->members[i].size = sb.size;
        if (sb.size > lim->max_member)
            return gir_fail(err, GIR_E_ARCHIVE, "member '%s' declares %llu bytes, more than the %llu allowed", nm,
                            (unsigned long long)sb.size, (unsigned long long)lim->max_member);
        if (!gir_add_u64(total, sb.size, &total) || total > lim->max_total)
            return gir_fail(err, GIR_E_ARCHIVE,
                            "members up to '%s' declare more than the %llu bytes allowed in total", nm,
                            (unsigned long long)lim->max_total);
        uint64_t cap;
        if (lim->max_ratio && sb.size > GIR_ZIP_RATIO_FLOOR &&
            gir_mul_u64(sb.comp_size, lim->max_ratio, &cap) && sb.size > cap)
            return gir_fail(err, GIR_E_ARCHIVE,
                            "member '%s' declares %llu bytes from %llu compressed, a ratio above the %u allowed", nm,
                            (unsigned long long)sb.size, (unsigned long long)sb.comp_size, lim->max_ratio);
        z->sorted[i] = (size_t)i;
    }
    if (z->n > 1) {
        name_idx *ni = malloc(z->n * sizeof *ni);
        if (!ni)
            return gir_nomem(err);
        for (size_t k = 0; k < z->n; k++)
            ni[k] = (name_idx){ z->members[k].name, k };
        qsort(ni, z->n, sizeof *ni, cmp_name_idx);
        for (size_t k = 0; k < z->n; k++)
            z->sorted[k] = ni[k].idx;
        free(ni);
        for (size_t k = 1; k < z->n; k++)
            if (strcmp(z->members[z->sorted[k - 1]].name, z->members[z->sorted[k]].name) == 0)
                return gir_fail(err, GIR_E_ARCHIVE, "member '%s' appears more than once",
                                z->members[z->sorted[k]].name);
    }
    return raw_check_names(raw, z, err);
}

/* Opens src (taken) into z->za and validates it. */
static gir_status zip_open_validate(gir_zip *z, zip_source_t *src, const raw_src *raw, const gir_zip_limits *lim,
                                    gir_error *err)
{
    zip_error_t ze;
    zip_error_init(&ze);
    gir_status st = GIR_OK;
    /* Refuse huge member counts before libzip allocates for every entry. */
    uint64_t entries, cd_off, cd_size;
    if (raw_eocd(raw, &entries, &cd_off, &cd_size, NULL) == GIR_OK && entries > lim->max_members) {
        zip_source_free(src);
        zip_error_fini(&ze);
        return gir_fail(err, GIR_E_ARCHIVE, "archive has %llu members, more than the %u allowed",
                        (unsigned long long)entries, lim->max_members);
    }
    z->za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
    if (!z->za) {
        if (zip_error_code_zip(&ze) == ZIP_ER_EXISTS)
            st = raw_report_duplicate(raw, lim, err);
        if (st == GIR_OK)
            st = fail_zip_error(err, &ze, "not a valid zip archive");
        zip_source_free(src);
    }
    zip_error_fini(&ze);
    return st ? st : zip_validate(z, lim, raw, err);
}

static gir_status zip_new(const char *name, const gir_zip_limits *lim, gir_zip **out, gir_error *err)
{
    *out = NULL;
    gir_zip *z = calloc(1, sizeof *z);
    if (!z)
        return gir_nomem(err);
    atomic_init(&z->refs, 1);
    pthread_mutex_init(&z->lock, NULL);
    if (name && !(z->path = gir_strdupf("%s", name))) {
        zip_free(z);
        return gir_nomem(err);
    }
    z->max_member = lim->max_member;
    *out = z;
    return GIR_OK;
}

gir_status gir_zip_open(const char *path, const gir_zip_limits *lim, gir_zip **out, gir_error *err)
{
    gir_zip_limits dl;
    if (!lim) {
        gir_zip_limits_default(&dl);
        lim = &dl;
    }
    *out = NULL;
    /* Own the file descriptor so libzip and the raw scan see the same file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        gir_fail(err, GIR_E_IO, "cannot open: %s", strerror(errno));
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    struct stat sst;
    if (fstat(fd, &sst) != 0 || !S_ISREG(sst.st_mode)) {
        close(fd);
        gir_fail(err, GIR_E_IO, "not a regular file");
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    gir_zip *z;
    gir_status st = zip_new(path, lim, &z, err);
    if (st) {
        close(fd);
        return st;
    }
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_file_create(path, 0, -1, &ze);
    raw_src raw = { fd, NULL, (uint64_t)sst.st_size };
    st = src ? zip_open_validate(z, src, &raw, lim, err) : fail_zip_error(err, &ze, "cannot open the archive");
    zip_error_fini(&ze);
    close(fd);
    if (st) {
        gir_err_file(err, path);
        zip_free(z);
        return st;
    }
    z->is_file = true;
    *out = z;
    return GIR_OK;
}

gir_status gir_zip_open_memory(const void *data, size_t len, const char *name, const gir_zip_limits *lim,
                               gir_zip **out, gir_error *err)
{
    gir_zip_limits dl;
    if (!lim) {
        gir_zip_limits_default(&dl);
        lim = &dl;
    }
    *out = NULL;
    gir_zip *z;
    gir_status st = zip_new(name, lim, &z, err);
    if (st)
        return st;
    /* libzip owns and frees the copy (an empty image has none). */
    unsigned char *copy = NULL;
    if (len) {
        copy = malloc(len);
        if (!copy) {
            zip_free(z);
            return gir_nomem(err);
        }
        memcpy(copy, data, len);
    }
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(copy, len, len > 0, &ze);
    raw_src raw = { -1, copy, len }; /* copy lives as long as z->za */
    if (src) {
        st = zip_open_validate(z, src, &raw, lim, err);
    } else {
        free(copy);
        st = fail_zip_error(err, &ze, "cannot open the archive");
    }
    zip_error_fini(&ze);
    if (st) {
        gir_err_file(err, name);
        zip_free(z);
        return st;
    }
    *out = z;
    return GIR_OK;
}

size_t gir_zip_count(const gir_zip *z)
{
    return z->n;
}

const char *gir_zip_name(const gir_zip *z, size_t i)
{
    return i < z->n ? z->members[i].name : NULL;
}

uint64_t gir_zip_size(const gir_zip *z, size_t i)
{
    return i < z->n ? z->members[i].size : 0;
}

bool gir_zip_is_dir(const gir_zip *z, size_t i)
{
    if (i >= z->n)
        return false;
    const char *nm = z->members[i].name;
    size_t l = strlen(nm);
    return l > 0 && nm[l - 1] == '/';
}

ptrdiff_t gir_zip_find(const gir_zip *z, const char *name)
{
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(z->members[z->sorted[mid]].name, name);
        if (c == 0)
            return (ptrdiff_t)z->sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static gir_status read_locked(gir_zip *z, size_t i, void **data, size_t *len, gir_error *err)
{
    const zip_member *m = &z->members[i];
    if (m->size >= SIZE_MAX)
        return gir_fail(err, GIR_E_LIMIT, "member '%s' of %llu bytes does not fit in memory", m->name,
                        (unsigned long long)m->size);
    unsigned char *buf = malloc((size_t)m->size + 1);
    if (!buf)
        return gir_nomem(err);
    zip_file_t *zf = zip_fopen_index(z->za, i, 0);
    if (!zf) {
        free(buf);
        char what[64];
        snprintf(what, sizeof what, "cannot open member %zu", i);
        gir_status st = fail_zip_error(err, zip_get_error(z->za), what);
        gir_err_replace_message(err, "member '%s': %s", m->name, zip_error_strerror(zip_get_error(z->za)));
        return st;
    }
    /* Read one byte more than declared to notice members that are longer. */
    uint64_t got = 0;
    gir_status st = GIR_OK;
    for (;;) {
        uint64_t room = m->size + 1 - got;
        if (room == 0)
            break;
        zip_int64_t r = zip_fread(zf, buf + got, room);
        if (r < 0) {
            zip_error_t *ze = zip_file_get_error(zf);
            st = gir_fail(err, zip_error_code_zip(ze) == ZIP_ER_MEMORY ? GIR_E_NOMEM : GIR_E_ARCHIVE,
                          "member '%s': %s", m->name, zip_error_strerror(ze));
            break;
        }
        if (r == 0)
            break;
        got += (uint64_t)r;
    }
    if (st == GIR_OK && got > m->size) {
        /* Count the rest, up to the member limit, to report the real size. */
        unsigned char scratch[16384];
        bool more = false;
        for (;;) {
            zip_int64_t r = zip_fread(zf, scratch, sizeof scratch);
            if (r <= 0)
                break;
            got += (uint64_t)r;
            if (got > z->max_member) {
                more = true;
                break;
            }
        }
        if (more)
            st = gir_fail(err, GIR_E_ARCHIVE, "member '%s': declared %llu bytes, got more than %llu", m->name,
                          (unsigned long long)m->size, (unsigned long long)z->max_member);
        else
            st = gir_fail(err, GIR_E_ARCHIVE, "member '%s': declared %llu bytes, got %llu", m->name,
                          (unsigned long long)m->size, (unsigned long long)got);
    } else if (st == GIR_OK && got < m->size) {
        st = gir_fail(err, GIR_E_ARCHIVE, "member '%s': declared %llu bytes, got %llu", m->name,
                      (unsigned long long)m->size, (unsigned long long)got);
    }
    zip_fclose(zf);
    if (st) {
        free(buf);
        return st;
    }
    buf[got] = '\0';
    *data = buf;
    *len = (size_t)got;
    return GIR_OK;
}

gir_status gir_zip_read(gir_zip *z, size_t i, void **data, size_t *len, gir_error *err)
{
    *data = NULL;
    *len = 0;
    if (i >= z->n) {
        gir_fail(err, GIR_E_ARGUMENT, "member index %zu out of range (archive has %zu)", i, z->n);
        gir_err_file(err, z->path);
        return GIR_E_ARGUMENT;
    }
    pthread_mutex_lock(&z->lock);
    gir_status st = read_locked(z, i, data, len, err);
    pthread_mutex_unlock(&z->lock);
    if (st)
        gir_err_file(err, z->path);
    return st;
}

/* The zip64 extended information of a central directory entry: replaces
 * the 32-bit fields that are 0xffffffff, in the order the format gives. */
static bool zip64_fields(const unsigned char *extra, size_t len, uint64_t *usize, uint64_t *csize, uint64_t *lh_off)
{
    size_t p = 0;
    while (len - p >= 4) {
        uint16_t id = le16(extra + p), sz = le16(extra + p + 2);
        if (sz > len - p - 4)
            return false;
        if (id == 0x0001) {
            const unsigned char *f = extra + p + 4;
            size_t q = 0;
            uint64_t *fields[3] = { usize, csize, lh_off };
            for (int k = 0; k < 3; k++) {
                if (*fields[k] != 0xffffffffu)
                    continue;
                if (sz - q < 8)
                    return false;
                *fields[k] = gir_le64(f + q);
                q += 8;
            }
            return true;
        }
        p += 4 + (size_t)sz;
    }
    return true;
}

gir_status gir_zip_stored_offset(gir_zip *z, size_t i, uint64_t *offset, gir_error *err)
{
    *offset = 0;
    if (i >= z->n)
        return gir_fail(err, GIR_E_ARGUMENT, "member index %zu out of range (archive has %zu)", i, z->n);
    if (!z->is_file)
        return gir_fail(err, GIR_E_UNSUPPORTED, "the archive was opened from memory");
    const char *name = z->members[i].name;
    int fd = open(z->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        gir_fail(err, GIR_E_IO, "cannot open: %s", strerror(errno));
        gir_err_file(err, z->path);
        return GIR_E_IO;
    }
    struct stat sst;
    gir_status st = GIR_OK;
    raw_cd cd = { 0 };
    if (fstat(fd, &sst) != 0) {
        st = gir_fail(err, GIR_E_IO, "cannot stat: %s", strerror(errno));
    } else {
        raw_src raw = { fd, NULL, (uint64_t)sst.st_size };
        st = raw_cd_read(&raw, z->n, &cd, err);
        if (!st && cd.n != z->n)
            st = gir_fail(err, GIR_E_ARCHIVE, "central directory has %zu entries, libzip found %zu", cd.n, z->n);
        if (!st) {
            const unsigned char *c = cd.bytes + cd.name_off[i] - 46;
            uint16_t flags = le16(c + 8), method = le16(c + 10);
            uint64_t csize = gir_le32(c + 20), usize = gir_le32(c + 24), lh = gir_le32(c + 42);
            if (!zip64_fields(c + 46 + le16(c + 28), le16(c + 30), &usize, &csize, &lh))
                st = gir_fail(err, GIR_E_ARCHIVE, "member '%s' has a malformed zip64 field", name);
            else if (method != 0 || (flags & 1))
                st = gir_fail(err, GIR_E_UNSUPPORTED, "member '%s' is %s", name,
                              (flags & 1) ? "encrypted" : "compressed");
            else if (csize != usize || usize != z->members[i].size)
                st = gir_fail(err, GIR_E_ARCHIVE, "member '%s' is stored with sizes that disagree", name);
            unsigned char lfh[30];
            if (!st && !raw_read(&raw, lh, lfh, sizeof lfh))
                st = gir_fail(err, GIR_E_ARCHIVE, "member '%s': local header outside the file", name);
            if (!st && (gir_le32(lfh) != 0x04034b50u || le16(lfh + 8) != 0))
                st = gir_fail(err, GIR_E_ARCHIVE, "member '%s': local header disagrees with the central directory",
                              name);
            if (!st) {
                uint64_t data = lh + 30 + le16(lfh + 26) + le16(lfh + 28);
                if (data > raw.size || usize > raw.size - data)
                    st = gir_fail(err, GIR_E_ARCHIVE, "member '%s': data outside the file", name);
                else
                    *offset = data;
            }
        }
    }
    raw_cd_free(&cd);
    close(fd);
    if (st)
        gir_err_file(err, z->path);
    return st;
}

gir_zip *gir_zip_ref(gir_zip *z)
{
    if (z)
        atomic_fetch_add(&z->refs, 1);
    return z;
}

void gir_zip_close(gir_zip *z)
{
    if (z && atomic_fetch_sub(&z->refs, 1) == 1)
        zip_free(z);
}

/* ---- writing -------------------------------------------------------------- */

struct gir_zipw {
    zip_t *za;
    char *path;
    size_t n;
};

/* 1980-01-01 00:00:00 in MS-DOS date and time fields. */
#define DOS_DATE_1980 ((0u << 9) | (1u << 5) | 1u)
#define DOS_TIME_0 0u

gir_status gir_zipw_open(const char *path, gir_zipw **out, gir_error *err)
{
    *out = NULL;
    gir_zipw *w = calloc(1, sizeof *w);
    if (!w)
        return gir_nomem(err);
    w->path = gir_strdupf("%s", path);
    if (!w->path) {
        free(w);
        return gir_nomem(err);
    }
    int code = 0;
    w->za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!w->za) {
        gir_status st = fail_libzip_code(err, code, "cannot create the archive");
        gir_err_file(err, path);
        free(w->path);
        free(w);
        return st;
    }
    *out = w;
    return GIR_OK;
}

static gir_status zipw_add(gir_zipw *w, const char *name, zip_source_t *src, bool deflate, gir_error *err)
{
    zip_int64_t idx = zip_file_add(w->za, name, src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
        zip_error_t *ze = zip_get_error(w->za);
        gir_status st;
        if (zip_error_code_zip(ze) == ZIP_ER_EXISTS)
            st = gir_fail(err, GIR_E_DUPLICATE, "member '%s' is added twice", name);
        else
            st = gir_fail(err, GIR_E_ARCHIVE, "cannot add member '%s': %s", name, zip_error_strerror(ze));
        zip_source_free(src);
        return st;
    }
    zip_uint64_t i = (zip_uint64_t)idx;
    if (zip_set_file_compression(w->za, i, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, deflate ? 6 : 0) != 0 ||
        zip_file_set_dostime(w->za, i, DOS_TIME_0, DOS_DATE_1980, 0) != 0 ||
        zip_file_set_external_attributes(w->za, i, 0, ZIP_OPSYS_UNIX, (zip_uint32_t)0100644u << 16) != 0 ||
        zip_file_extra_field_delete(w->za, i, ZIP_EXTRA_FIELD_ALL, ZIP_FL_CENTRAL | ZIP_FL_LOCAL) != 0)
        return gir_fail(err, GIR_E_ARCHIVE, "cannot set the attributes of member '%s': %s", name,
                        zip_error_strerror(zip_get_error(w->za)));
    w->n++;
    return GIR_OK;
}

static gir_status zipw_check_name(gir_zipw *w, const char *name, gir_error *err)
{
    const char *why = name_problem(name, strlen(name));
    if (why) {
        gir_fail(err, GIR_E_ARGUMENT, "member '%s' %s", name, why);
        gir_err_file(err, w->path);
        return GIR_E_ARGUMENT;
    }
    return GIR_OK;
}

gir_status gir_zipw_add_buffer(gir_zipw *w, const char *name, const void *data, size_t len, bool deflate,
                               gir_error *err)
{
    gir_status st = zipw_check_name(w, name, err);
    if (st)
        return st;
    /* libzip frees the copy after writing (an empty member has none). */
    void *copy = NULL;
    if (len) {
        copy = malloc(len);
        if (!copy)
            return gir_nomem(err);
        memcpy(copy, data, len);
    }
    zip_source_t *src = zip_source_buffer(w->za, copy, len, len > 0);
    if (!src) {
        free(copy);
        return gir_nomem(err);
    }
    st = zipw_add(w, name, src, deflate, err);
    if (st)
        gir_err_file(err, w->path);
    return st;
}

gir_status gir_zipw_add_file(gir_zipw *w, const char *name, const char *src_path, bool deflate, gir_error *err)
{
    gir_status st = zipw_check_name(w, name, err);
    if (st)
        return st;
    struct stat sst;
    if (stat(src_path, &sst) != 0 || !S_ISREG(sst.st_mode)) {
        gir_fail(err, GIR_E_IO, "cannot add member '%s': %s", name,
                 errno && !S_ISREG(sst.st_mode) ? strerror(errno) : "not a regular file");
        gir_err_file(err, src_path);
        return GIR_E_IO;
    }
    zip_source_t *src = zip_source_file(w->za, src_path, 0, -1);
    if (!src) {
        gir_fail(err, GIR_E_IO, "cannot add member '%s': %s", name, zip_error_strerror(zip_get_error(w->za)));
        gir_err_file(err, src_path);
        return GIR_E_IO;
    }
    st = zipw_add(w, name, src, deflate, err);
    if (st)
        gir_err_file(err, w->path);
    return st;
}

static gir_status write_empty_archive(const char *path, gir_error *err)
{
    unsigned char eocd[22] = { 0x50, 0x4b, 0x05, 0x06 };
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(eocd, 1, sizeof eocd, f) != sizeof eocd) {
        int e = errno;
        if (f)
            fclose(f);
        gir_fail(err, GIR_E_IO, "cannot write: %s", strerror(e));
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    if (fclose(f) != 0) {
        gir_fail(err, GIR_E_IO, "cannot write: %s", strerror(errno));
        gir_err_file(err, path);
        return GIR_E_IO;
    }
    return GIR_OK;
}

gir_status gir_zipw_close(gir_zipw *w, gir_error *err)
{
    gir_status st = GIR_OK;
    if (w->n == 0) {
        zip_discard(w->za);
        st = write_empty_archive(w->path, err);
    } else if (zip_close(w->za) != 0) {
        zip_error_t *ze = zip_get_error(w->za);
        int code = zip_error_code_zip(ze);
        st = gir_fail(err, code == ZIP_ER_MEMORY ? GIR_E_NOMEM : GIR_E_IO, "cannot write the archive: %s",
                      zip_error_strerror(ze));
        gir_err_file(err, w->path);
        zip_discard(w->za);
    }
    free(w->path);
    free(w);
    return st;
}

void gir_zipw_discard(gir_zipw *w)
{
    if (!w)
        return;
    zip_discard(w->za);
    free(w->path);
    free(w);
}
