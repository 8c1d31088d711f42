/* Safe zip reading over libzip and deterministic zip writing. */
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
#include <zlib.h>

#include "core/internal.h"
#include "core/limits.h"

#define GIR_ZIP_RATIO_FLOOR (1u << 20) /* the ratio check applies above 1 MiB */
#define ZIP_OVERRUN (UINT64_C(1) << 20) /* inflated past a lying size to report it */

void gir_zip_limits_default(gir_zip_limits *lim)
{
    lim->max_total = gir_limit(GIR_LIM_UNZIP_BYTES);
    lim->max_member = gir_limit(GIR_LIM_UNZIP_BYTES);
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
    return gir_pread_full(s->fd, buf, n, off) == n;
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
        if (sb.size > lim->max_member) {
            if (lim->max_member == gir_limit(GIR_LIM_UNZIP_BYTES))
                return gir_limit_fail(err, GIR_LIM_UNZIP_BYTES, "member '%s' declares %llu bytes, more than the %llu "
                                      "allowed", nm, (unsigned long long)sb.size, (unsigned long long)lim->max_member);
            return gir_fail(err, GIR_E_ARCHIVE, "member '%s' declares %llu bytes, more than the %llu allowed", nm,
                            (unsigned long long)sb.size, (unsigned long long)lim->max_member);
        }
        if (!gir_add_u64(total, sb.size, &total) || total > lim->max_total) {
            if (lim->max_total == gir_limit(GIR_LIM_UNZIP_BYTES))
                return gir_limit_fail(err, GIR_LIM_UNZIP_BYTES,
                                      "members up to '%s' declare more than the %llu bytes allowed in total", nm,
                                      (unsigned long long)lim->max_total);
            return gir_fail(err, GIR_E_ARCHIVE,
                            "members up to '%s' declare more than the %llu bytes allowed in total", nm,
                            (unsigned long long)lim->max_total);
        }
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
        return gir_fail_file(err, path, GIR_E_IO, "cannot open: %s", strerror(errno));
    }
    struct stat sst;
    if (fstat(fd, &sst) != 0 || !S_ISREG(sst.st_mode)) {
        close(fd);
        return gir_fail_file(err, path, GIR_E_IO, "not a regular file");
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
        /* Count the rest to report the real size, but inflate no more than
         * ZIP_OVERRUN past the declared size (nor past the member limit):
         * a lying size must not make us inflate gigabytes. */
        uint64_t stop = m->size + ZIP_OVERRUN;
        if (stop > z->max_member)
            stop = z->max_member;
        unsigned char scratch[16384];
        bool more = false;
        for (;;) {
            zip_int64_t r = zip_fread(zf, scratch, sizeof scratch);
            if (r <= 0)
                break;
            got += (uint64_t)r;
            if (got > stop) {
                more = true;
                break;
            }
        }
        if (more)
            st = gir_fail(err, GIR_E_ARCHIVE, "member '%s': declared %llu bytes, got more than %llu", m->name,
                          (unsigned long long)m->size, (unsigned long long)stop);
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
        return gir_fail_file(err, z->path, GIR_E_ARGUMENT, "member index %zu out of range (archive has %zu)", i, z->n);
    }
    pthread_mutex_lock(&z->lock);
    gir_status st = read_locked(z, i, data, len, err);
    pthread_mutex_unlock(&z->lock);
    return gir_err_in_file(st, err, z->path);
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
        return gir_fail_file(err, z->path, GIR_E_IO, "cannot open: %s", strerror(errno));
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
    return gir_err_in_file(st, err, z->path);
}

GIR_REFCOUNTED(, gir_zip, gir_zip_ref, gir_zip_close, zip_free)

/* ---- writing -------------------------------------------------------------- */

/* The writer produces the archive itself (libzip would copy every member
 * through its own temporary file): local header, data, and at the end the
 * central directory, with zip64 records only where a size or offset needs
 * them.  Large stored members are written straight from the caller's
 * buffers with their CRC computed as they go. */

#define LFH_SIG 0x04034b50u
#define CDH_SIG 0x02014b50u
#define EOCD_SIG 0x06054b50u
#define EOCD64_SIG 0x06064b50u
#define LOC64_SIG 0x07064b50u
#define U32_MAX_ 0xffffffffu
#define PAD_ID 0x4743 /* "GC": the padding extra field of a member stored in place */
/* 1980-01-01 00:00:00 in MS-DOS date and time fields. */
#define DOS_DATE_1980 ((0u << 9) | (1u << 5) | 1u)
#define DOS_TIME_0 0u
/* Written data is handed to the kernel's writeback every this many bytes,
 * so a large archive is mostly on disk when the caller syncs it. */
#define WRITEBACK_STEP (UINT64_C(32) << 20)

typedef struct zipw_entry {
    char *name;
    uint64_t lh_off;  /* local header */
    uint64_t usize, csize;
    uint32_t crc;
    uint16_t method;  /* 0 stored, 8 deflate */
    uint16_t flags;
    bool zip64_local; /* the local header carries a zip64 extra field */
} zipw_entry;

struct gir_zipw {
    int fd;
    char *path;
    bool created;      /* path did not exist before gir_zipw_open */
    uint64_t pos;      /* where the next local header goes */
    uint64_t head;     /* bytes at the start left for a member stored in place */
    uint64_t inplace_end; /* where that member ends (the file's size at open) */
    bool head_used;
    zipw_entry *e;
    size_t n, cap;
    /* the member being streamed (gir_zipw_begin .. gir_zipw_end) */
    bool streaming;
    uint64_t s_expect, s_done;
    uint32_t s_crc;
    uint64_t synced;   /* bytes handed to writeback so far */
    bool failed;       /* a write failed: the archive can only be discarded */
};

static gir_status zipw_write_fail(gir_zipw *w, int e, gir_error *err)
{
    w->failed = true;
    return gir_fail_file(err, w->path, GIR_E_IO, "cannot write the archive: %s", strerror(e));
}

static gir_status pwrite_all(gir_zipw *w, const void *data, size_t len, uint64_t off, gir_error *err)
{
    return gir_pwrite_full(w->fd, data, len, off) ? GIR_OK : zipw_write_fail(w, errno, err);
}

/* Appends at w->pos and starts writeback of what is complete. */
static gir_status zipw_append(gir_zipw *w, const void *data, size_t len, gir_error *err)
{
    gir_status st = pwrite_all(w, data, len, w->pos, err);
    if (st)
        return st;
    w->pos += len;
#ifdef SYNC_FILE_RANGE_WRITE
    if (w->pos - w->synced >= WRITEBACK_STEP) {
        (void)sync_file_range(w->fd, (off_t)w->synced, (off_t)(w->pos - w->synced), SYNC_FILE_RANGE_WRITE);
        w->synced = w->pos;
    }
#endif
    return GIR_OK;
}

uint32_t gir_crc32(uint32_t crc, const void *data, size_t len)
{
    return (uint32_t)crc32_z(crc, data, len);
}

/* Below this a thread costs more than it saves. */
#define CRC_THREAD_MIN ((size_t)4 << 20)

static void *crc_worker(void *arg)
{
    gir_crc_job *j = arg;
    j->crc = gir_crc32(j->crc, j->data, j->len);
    return NULL;
}

void gir_crc32_start(gir_crc_job *job, uint32_t crc, const void *data, size_t len)
{
    job->threaded = false;
    job->data = data;
    job->len = len;
    job->crc = crc;
    if (len >= CRC_THREAD_MIN && pthread_create(&job->thread, NULL, crc_worker, job) == 0)
        job->threaded = true;
    else
        job->crc = gir_crc32(crc, data, len);
}

uint32_t gir_crc32_finish(gir_crc_job *job)
{
    if (job->threaded) {
        pthread_join(job->thread, NULL);
        job->threaded = false;
    }
    return job->crc;
}

uint32_t gir_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
    /* zlib's z_off64_t is signed; members are below 2^63 bytes */
    return (uint32_t)crc32_combine64(crc1, crc2, (z_off64_t)len2);
}

gir_status gir_zipw_open(const char *path, gir_zipw **out, gir_error *err)
{
    return gir_zipw_open_inplace(path, 0, out, err);
}

gir_status gir_zipw_open_inplace(const char *path, uint64_t head, gir_zipw **out, gir_error *err)
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
    w->fd = -1;
    if (head == 0) {
        w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (w->fd >= 0)
            w->created = true;
        else if (errno == EEXIST)
            w->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    } else {
        w->fd = open(path, O_WRONLY | O_CLOEXEC);
    }
    struct stat sst;
    if (w->fd < 0 || fstat(w->fd, &sst) != 0) {
        int e = errno;
        gir_fail(err, GIR_E_IO, "cannot create the archive: %s", strerror(e));
        gir_err_file(err, path);
        if (w->fd >= 0)
            close(w->fd);
        free(w->path);
        free(w);
        return GIR_E_IO;
    }
    if (head) {
        if ((uint64_t)sst.st_size < head) {
            close(w->fd);
            gir_fail(err, GIR_E_ARGUMENT, "the file is shorter (%llu bytes) than its head room of %llu bytes",
                     (unsigned long long)sst.st_size, (unsigned long long)head);
            gir_err_file(err, path);
            free(w->path);
            free(w);
            return GIR_E_ARGUMENT;
        }
        w->pos = (uint64_t)sst.st_size;
        w->synced = w->pos;
        w->inplace_end = w->pos;
    }
    w->head = head;
    *out = w;
    return GIR_OK;
}

static gir_status zipw_check_name(gir_zipw *w, const char *name, gir_error *err)
{
    const char *why = name_problem(name, strlen(name));
    gir_status st = GIR_OK;
    if (why)
        st = gir_fail(err, GIR_E_ARGUMENT, "member '%s' %s", name, why);
    else if (strlen(name) > 0xffff)
        st = gir_fail(err, GIR_E_ARGUMENT, "member name of %zu bytes is too long", strlen(name));
    for (size_t i = 0; !st && i < w->n; i++)
        if (strcmp(w->e[i].name, name) == 0)
            st = gir_fail(err, GIR_E_DUPLICATE, "member '%s' is added twice", name);
    if (!st && w->streaming)
        st = gir_fail(err, GIR_E_INTERNAL, "member '%s' added while another is being written", name);
    if (!st && w->failed)
        st = gir_fail(err, GIR_E_IO, "the archive already failed to write");
    return gir_err_in_file(st, err, w->path);
}

static gir_status zipw_new_entry(gir_zipw *w, const char *name, zipw_entry **out, gir_error *err)
{
    *out = NULL;
    if (!GIR_GROW(w->e, w->cap, w->n + 1))
        return gir_nomem(err);
    zipw_entry *e = &w->e[w->n];
    memset(e, 0, sizeof *e);
    e->name = gir_strdupf("%s", name);
    if (!e->name)
        return gir_nomem(err);
    for (const char *c = name; *c; c++)
        if ((unsigned char)*c >= 0x80)
            e->flags = 0x0800; /* the name is UTF-8 */
    w->n++;
    *out = e;
    return GIR_OK;
}

/* Forgets the last entry (its member failed). */
static void zipw_drop_entry(gir_zipw *w)
{
    w->n--;
    free(w->e[w->n].name);
}

/* The 26 bytes local and central headers share, from "version needed to
 * extract" to "extra field length": version, e's flags, method, time,
 * date and CRC, the 32-bit sizes given, the name and extra lengths. */
static void put_shared_fields(unsigned char *p, const zipw_entry *e, unsigned version, uint32_t csize,
                              uint32_t usize, size_t nl, size_t extra)
{
    p[0] = (unsigned char)version;
    p[1] = 0;
    p[2] = (unsigned char)e->flags;
    p[3] = (unsigned char)(e->flags >> 8);
    p[4] = (unsigned char)e->method;
    p[5] = 0;
    p[6] = DOS_TIME_0 & 0xff;
    p[7] = DOS_TIME_0 >> 8;
    p[8] = DOS_DATE_1980 & 0xff;
    p[9] = DOS_DATE_1980 >> 8;
    gir_put_le32(p + 10, e->crc);
    gir_put_le32(p + 14, csize);
    gir_put_le32(p + 18, usize);
    p[22] = (unsigned char)nl;
    p[23] = (unsigned char)(nl >> 8);
    p[24] = (unsigned char)extra;
    p[25] = (unsigned char)(extra >> 8);
}

/* The local header of e (padding extra field of pad bytes, 0 for none) in
 * buf, which has room for 30 + name + 20 + 4 + pad bytes; returns its size. */
static size_t local_header(const zipw_entry *e, size_t pad, unsigned char *buf)
{
    size_t nl = strlen(e->name);
    size_t extra = (e->zip64_local ? 20 : 0) + (pad ? 4 + pad : 0);
    gir_put_le32(buf, LFH_SIG);
    put_shared_fields(buf + 4, e, e->zip64_local ? 45 : 20, e->zip64_local ? U32_MAX_ : (uint32_t)e->csize,
                      e->zip64_local ? U32_MAX_ : (uint32_t)e->usize, nl, extra);
    memcpy(buf + 30, e->name, nl);
    size_t p = 30 + nl;
    if (e->zip64_local) {
        buf[p] = 1;
        buf[p + 1] = 0;
        buf[p + 2] = 16;
        buf[p + 3] = 0;
        gir_put_le64(buf + p + 4, e->usize);
        gir_put_le64(buf + p + 12, e->csize);
        p += 20;
    }
    if (pad) {
        buf[p] = PAD_ID & 0xff;
        buf[p + 1] = PAD_ID >> 8;
        buf[p + 2] = (unsigned char)pad;
        buf[p + 3] = (unsigned char)(pad >> 8);
        memset(buf + p + 4, 0, pad);
        p += 4 + pad;
    }
    return p;
}

/* Writes e's local header at w->pos (sizes and CRC as e has them now) and
 * moves past it. */
static gir_status zipw_put_local(gir_zipw *w, zipw_entry *e, gir_error *err)
{
    unsigned char *buf = malloc(30 + strlen(e->name) + 20);
    if (!buf)
        return gir_nomem(err);
    size_t len = local_header(e, 0, buf);
    e->lh_off = w->pos;
    gir_status st = zipw_append(w, buf, len, err);
    free(buf);
    return st;
}

/* Rewrites e's local header once its CRC and sizes are known. */
static gir_status zipw_patch_local(gir_zipw *w, const zipw_entry *e, gir_error *err)
{
    unsigned char *buf = malloc(30 + strlen(e->name) + 20);
    if (!buf)
        return gir_nomem(err);
    size_t len = local_header(e, 0, buf);
    gir_status st = pwrite_all(w, buf, len, e->lh_off, err);
    free(buf);
    return st;
}

/* Raw DEFLATE of data into malloc'd *out (level 6, like zlib's default). */
static gir_status deflate_buffer(const void *data, size_t len, unsigned char **out, size_t *olen, gir_error *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return gir_nomem(err);
    uLong bound = deflateBound(&zs, (uLong)len);
    unsigned char *buf = malloc(bound ? bound : 1);
    if (!buf) {
        deflateEnd(&zs);
        return gir_nomem(err);
    }
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.next_out = buf;
    size_t in_left = len;
    int rc = Z_OK;
    while (rc == Z_OK) {
        uInt chunk = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        zs.avail_in = chunk;
        zs.avail_out = (uInt)(bound - zs.total_out > (1u << 30) ? (1u << 30) : bound - zs.total_out);
        rc = deflate(&zs, chunk == in_left ? Z_FINISH : Z_NO_FLUSH);
        in_left -= chunk - zs.avail_in;
        if (rc == Z_BUF_ERROR && zs.avail_out == 0)
            break;
        if (rc == Z_BUF_ERROR)
            rc = Z_OK;
    }
    *olen = (size_t)zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        return gir_fail(err, GIR_E_INTERNAL, "deflate failed (%d)", rc);
    }
    *out = buf;
    return GIR_OK;
}

gir_status gir_zipw_add_buffer(gir_zipw *w, const char *name, const void *data, size_t len, bool compress,
                               gir_error *err)
{
    gir_status st = zipw_check_name(w, name, err);
    if (st)
        return st;
    unsigned char *packed = NULL;
    size_t plen = len;
    if (compress && len) {
        st = deflate_buffer(data, len, &packed, &plen, err);
        if (st)
            return st;
    } else {
        compress = false;
    }
    zipw_entry *e;
    st = zipw_new_entry(w, name, &e, err);
    if (st) {
        free(packed);
        return st;
    }
    e->method = compress ? 8 : 0;
    e->usize = len;
    e->csize = plen;
    e->crc = len ? gir_crc32(0, data, len) : 0;
    e->zip64_local = e->usize >= U32_MAX_ || e->csize >= U32_MAX_;
    st = zipw_put_local(w, e, err);
    if (!st && plen)
        st = zipw_append(w, packed ? packed : data, plen, err);
    free(packed);
    if (st)
        zipw_drop_entry(w);
    return st;
}

gir_status gir_zipw_add_file(gir_zipw *w, const char *name, const char *src_path, bool compress, gir_error *err)
{
    gir_status st = zipw_check_name(w, name, err);
    if (st)
        return st;
    int fd = open(src_path, O_RDONLY | O_CLOEXEC);
    struct stat sst;
    if (fd < 0 || fstat(fd, &sst) != 0 || !S_ISREG(sst.st_mode)) {
        int e = fd < 0 ? errno : 0;
        if (fd >= 0)
            close(fd);
        return gir_fail_file(err, src_path, GIR_E_IO, "cannot add member '%s': %s", name,
                             e ? strerror(e) : "not a regular file");
    }
    uint64_t size = (uint64_t)sst.st_size;
    enum { CHUNK = 1 << 20 };
    unsigned char *in = malloc(CHUNK), *zout = compress ? malloc(CHUNK) : NULL;
    z_stream zs;
    bool zinit = false;
    zipw_entry *e = NULL;
    if (!in || (compress && !zout)) {
        st = gir_nomem(err);
    } else if (compress) {
        memset(&zs, 0, sizeof zs);
        if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            st = gir_nomem(err);
        else
            zinit = true;
    }
    if (!st)
        st = zipw_new_entry(w, name, &e, err);
    if (!st) {
        e->method = compress ? 8 : 0;
        e->usize = size;
        /* deflate may outgrow the input by a little: zip64 from 4 GiB - 1 MiB */
        e->zip64_local = size >= U32_MAX_ - (compress ? CHUNK : 0);
        st = zipw_put_local(w, e, err);
    }
    uint64_t done = 0, csize = 0;
    uint32_t crc = 0;
    while (!st && done < size) {
        size_t r = size - done > CHUNK ? CHUNK : (size_t)(size - done);
        if (gir_pread_full(fd, in, r, done) < r) {
            st = gir_fail(err, GIR_E_IO, "cannot add member '%s': %s", name,
                          errno ? strerror(errno) : "the file shrank while it was read");
            gir_err_file(err, src_path);
            break;
        }
        crc = gir_crc32(crc, in, r);
        done += r;
        if (!compress) {
            st = zipw_append(w, in, r, err);
            csize += r;
            continue;
        }
        zs.next_in = in;
        zs.avail_in = (uInt)r;
        do {
            zs.next_out = zout;
            zs.avail_out = CHUNK;
            int rc = deflate(&zs, done == size ? Z_FINISH : Z_NO_FLUSH);
            if (rc == Z_STREAM_ERROR) {
                st = gir_fail(err, GIR_E_INTERNAL, "deflate failed (%d)", rc);
                break;
            }
            size_t got = CHUNK - zs.avail_out;
            if (got)
                st = zipw_append(w, zout, got, err);
            csize += got;
        } while (!st && (zs.avail_out == 0 || (done == size && zs.avail_in)));
    }
    if (!st && compress && size == 0) {
        /* an empty input still needs the final empty block */
        zs.next_in = in;
        zs.avail_in = 0;
        zs.next_out = zout;
        zs.avail_out = CHUNK;
        if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
            st = gir_fail(err, GIR_E_INTERNAL, "deflate failed");
        else
            st = zipw_append(w, zout, CHUNK - zs.avail_out, err);
        csize = CHUNK - zs.avail_out;
    }
    if (zinit)
        deflateEnd(&zs);
    close(fd);
    free(in);
    free(zout);
    if (!st) {
        e->crc = crc;
        e->csize = csize;
        if (!e->zip64_local && csize >= U32_MAX_)
            st = gir_fail(err, GIR_E_LIMIT, "member '%s' compressed to more than 4 GiB", name);
        else if (size)
            st = zipw_patch_local(w, e, err);
    }
    if (st && e)
        zipw_drop_entry(w);
    return st;
}

gir_status gir_zipw_begin(gir_zipw *w, const char *name, uint64_t size, gir_error *err)
{
    gir_status st = zipw_check_name(w, name, err);
    if (st)
        return st;
    zipw_entry *e;
    TRY(zipw_new_entry(w, name, &e, err));
    e->usize = e->csize = size;
    e->zip64_local = size >= U32_MAX_;
    st = zipw_put_local(w, e, err);
    if (st) {
        zipw_drop_entry(w);
        return st;
    }
    w->streaming = true;
    w->s_expect = size;
    w->s_done = 0;
    w->s_crc = 0;
    return GIR_OK;
}

gir_status gir_zipw_write(gir_zipw *w, const void *data, size_t len, gir_error *err)
{
    if (!w->streaming || w->failed)
        return gir_fail(err, GIR_E_INTERNAL, "no member is being written");
    if (len > w->s_expect - w->s_done) {
        w->failed = true;
        return gir_fail(err, GIR_E_INTERNAL, "member '%s' gets more than its declared %llu bytes",
                        w->e[w->n - 1].name, (unsigned long long)w->s_expect);
    }
    if (!len)
        return GIR_OK;
    gir_crc_job job;
    gir_crc32_start(&job, w->s_crc, data, len);
    gir_status st = zipw_append(w, data, len, err);
    w->s_crc = gir_crc32_finish(&job);
    w->s_done += len;
    return st;
}

gir_status gir_zipw_end(gir_zipw *w, gir_error *err)
{
    if (!w->streaming || w->failed)
        return gir_fail(err, GIR_E_INTERNAL, "no member is being written");
    w->streaming = false;
    zipw_entry *e = &w->e[w->n - 1];
    if (w->s_done != w->s_expect) {
        w->failed = true;
        return gir_fail(err, GIR_E_INTERNAL, "member '%s' got %llu bytes, %llu declared", e->name,
                        (unsigned long long)w->s_done, (unsigned long long)w->s_expect);
    }
    e->crc = w->s_crc;
    return zipw_patch_local(w, e, err);
}

gir_status gir_zipw_add_inplace(gir_zipw *w, const char *name, const gir_zip_extent *known, size_t n_known,
                                gir_error *err)
{
    gir_status st = zipw_check_name(w, name, err);
    if (st)
        return st;
    size_t nl = strlen(name);
    uint64_t start = w->head, end = w->inplace_end, size = end - start;
    bool z64 = size >= U32_MAX_;
    uint64_t min_head = 30 + nl + (z64 ? 20 : 0);
    if (w->head_used || !w->head ||
        (start != min_head && (start < min_head + 4 || start - min_head - 4 > 0xffff - (z64 ? 20 : 0))))
        return gir_fail(err, GIR_E_INTERNAL,
                        "member '%s' cannot be stored in place (head room %llu, data up to %llu, file %llu)", name,
                        (unsigned long long)w->head, (unsigned long long)end, (unsigned long long)w->pos);
    /* The CRC: the known extents as given, the bytes between them read back. */
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = NULL;
    uint64_t at = start;
    uint32_t crc = 0;
    int rfd = -1;
    for (size_t k = 0; !st && k <= n_known; k++) {
        uint64_t gap_end = k < n_known ? known[k].offset : end;
        if (gap_end < at || gap_end > end || (k < n_known && known[k].len > end - gap_end)) {
            st = gir_fail(err, GIR_E_INTERNAL, "member '%s': extent %zu is out of order or outside the member",
                          name, k);
            break;
        }
        while (!st && at < gap_end) {
            if (!buf) {
                buf = malloc(CHUNK);
                rfd = open(w->path, O_RDONLY | O_CLOEXEC);
                if (!buf || rfd < 0) {
                    st = buf ? gir_fail(err, GIR_E_IO, "cannot read back member '%s': %s", name, strerror(errno))
                             : gir_nomem(err);
                    break;
                }
            }
            size_t r = gap_end - at > CHUNK ? CHUNK : (size_t)(gap_end - at);
            if (gir_pread_full(rfd, buf, r, at) < r) {
                st = gir_fail(err, GIR_E_IO, "cannot read back member '%s': %s", name,
                              errno ? strerror(errno) : "the file is shorter than expected");
                break;
            }
            crc = gir_crc32(crc, buf, r);
            at += r;
        }
        if (!st && k < n_known) {
            crc = gir_crc32_combine(crc, known[k].crc, known[k].len);
            at += known[k].len;
        }
    }
    free(buf);
    if (rfd >= 0)
        close(rfd);
    zipw_entry *e = NULL;
    if (!st)
        st = zipw_new_entry(w, name, &e, err);
    if (!st) {
        e->usize = e->csize = size;
        e->crc = crc;
        e->zip64_local = z64;
        e->lh_off = 0;
        size_t pad = start == min_head ? 0 : (size_t)(start - min_head - 4);
        unsigned char *lh = malloc((size_t)start);
        if (!lh) {
            st = gir_nomem(err);
        } else {
            size_t len = local_header(e, pad, lh);
            st = len == start ? pwrite_all(w, lh, len, 0, err)
                              : gir_fail(err, GIR_E_INTERNAL, "local header of %zu bytes for %llu", len,
                                         (unsigned long long)start);
            free(lh);
        }
        if (st)
            zipw_drop_entry(w);
        else
            w->head_used = true;
    }
    return gir_err_in_file(st, err, w->path);
}

/* Appends the central directory and the end records. */
static gir_status zipw_finish(gir_zipw *w, gir_error *err)
{
    gir_buf cd = GIR_BUF_INIT;
    uint64_t cd_off = w->pos;
    gir_status st = GIR_OK;
    for (size_t i = 0; !st && i < w->n; i++) {
        const zipw_entry *e = &w->e[i];
        size_t nl = strlen(e->name);
        bool zu = e->usize >= U32_MAX_, zc = e->csize >= U32_MAX_, zo = e->lh_off >= U32_MAX_;
        size_t extra = (zu || zc || zo) ? 4 + 8 * ((size_t)zu + zc + zo) : 0;
        unsigned char h[46 + 28];
        gir_put_le32(h, CDH_SIG);
        h[4] = (zu || zc || zo || e->zip64_local) ? 45 : 20; /* version made by: 2.0 or 4.5 */
        h[5] = 3;                                            /* unix */
        put_shared_fields(h + 6, e, h[4], zc ? U32_MAX_ : (uint32_t)e->csize, zu ? U32_MAX_ : (uint32_t)e->usize, nl,
                          extra);
        memset(h + 32, 0, 6); /* comment length, disk, internal attributes */
        gir_put_le32(h + 38, (uint32_t)0100644u << 16);
        gir_put_le32(h + 42, zo ? U32_MAX_ : (uint32_t)e->lh_off);
        unsigned char x[28];
        size_t xl = 0;
        if (extra) {
            x[0] = 1;
            x[1] = 0;
            x[2] = (unsigned char)(extra - 4);
            x[3] = 0;
            xl = 4;
            if (zu) {
                gir_put_le64(x + xl, e->usize);
                xl += 8;
            }
            if (zc) {
                gir_put_le64(x + xl, e->csize);
                xl += 8;
            }
            if (zo) {
                gir_put_le64(x + xl, e->lh_off);
                xl += 8;
            }
        }
        gir_buf_append(&cd, h, 46);
        gir_buf_append(&cd, e->name, nl);
        if (xl)
            gir_buf_append(&cd, x, xl);
        if (cd.failed)
            st = gir_nomem(err);
    }
    uint64_t cd_size = cd.len;
    bool z64 = w->n >= 0xffff || cd_off >= U32_MAX_ || cd_size >= U32_MAX_;
    unsigned char tail[56 + 20 + 22];
    size_t tl = 0;
    if (!st && z64) {
        uint64_t rec_off = cd_off + cd_size;
        gir_put_le32(tail, EOCD64_SIG);
        gir_put_le64(tail + 4, 44);
        tail[12] = 45;
        tail[13] = 3;
        tail[14] = 45;
        tail[15] = 0;
        memset(tail + 16, 0, 8); /* this disk, disk of the central directory */
        gir_put_le64(tail + 24, w->n);
        gir_put_le64(tail + 32, w->n);
        gir_put_le64(tail + 40, cd_size);
        gir_put_le64(tail + 48, cd_off);
        gir_put_le32(tail + 56, LOC64_SIG);
        gir_put_le32(tail + 60, 0);
        gir_put_le64(tail + 64, rec_off);
        gir_put_le32(tail + 72, 1);
        tl = 76;
    }
    unsigned char *eo = tail + tl;
    gir_put_le32(eo, EOCD_SIG);
    memset(eo + 4, 0, 4);
    uint16_t n16 = w->n >= 0xffff ? 0xffff : (uint16_t)w->n;
    eo[8] = eo[10] = (unsigned char)n16;
    eo[9] = eo[11] = (unsigned char)(n16 >> 8);
    gir_put_le32(eo + 12, cd_size >= U32_MAX_ ? U32_MAX_ : (uint32_t)cd_size);
    gir_put_le32(eo + 16, cd_off >= U32_MAX_ ? U32_MAX_ : (uint32_t)cd_off);
    eo[20] = eo[21] = 0;
    tl += 22;
    if (!st && cd.len)
        st = zipw_append(w, cd.data, cd.len, err);
    if (!st)
        st = zipw_append(w, tail, tl, err);
    gir_buf_free(&cd);
    return st;
}

static void zipw_free(gir_zipw *w, bool remove)
{
    if (w->fd >= 0)
        close(w->fd);
    if (remove && w->created)
        unlink(w->path);
    for (size_t i = 0; i < w->n; i++)
        free(w->e[i].name);
    free(w->e);
    free(w->path);
    free(w);
}

gir_status gir_zipw_close(gir_zipw *w, gir_error *err)
{
    gir_status st = GIR_OK;
    if (w->failed)
        st = gir_fail(err, GIR_E_IO, "the archive failed to write");
    else if (w->streaming)
        st = gir_fail(err, GIR_E_INTERNAL, "member '%s' was not finished", w->e[w->n - 1].name);
    else if (w->head && !w->head_used)
        st = gir_fail(err, GIR_E_INTERNAL, "the head room of %llu bytes holds no member",
                      (unsigned long long)w->head);
    if (!st)
        st = zipw_finish(w, err);
    if (!st && ftruncate(w->fd, (off_t)w->pos) != 0)
        st = zipw_write_fail(w, errno, err);
    if (!st && close(w->fd) != 0)
        st = zipw_write_fail(w, errno, err);
    if (!st)
        w->fd = -1;
    if (st)
        gir_err_file(err, w->path);
    zipw_free(w, st != GIR_OK);
    return st;
}

void gir_zipw_discard(gir_zipw *w)
{
    if (w)
        zipw_free(w, true);
}
