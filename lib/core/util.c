/* Buffers, growable arrays, the arena, number text, paths. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* ---- buffers ------------------------------------------------------------ */

bool gir_buf_reserve(gir_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    size_t need;
    if (__builtin_add_overflow(b->len, extra, &need) || need == SIZE_MAX) {
        b->failed = true;
        return false;
    }
    need += 1; /* terminator */
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void gir_buf_append_grow(gir_buf *b, const void *p, size_t n)
{
    if (!gir_buf_reserve(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void gir_buf_puts(gir_buf *b, const char *s)
{
    gir_buf_append(b, s, strlen(s));
}

/* Decimal digits of v, right-aligned in buf[0..24); returns the start. */
static char *utoa(char buf[24], uint64_t v)
{
    char *p = buf + 24;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

void gir_buf_put_uint(gir_buf *b, uint64_t v)
{
    char buf[24];
    char *p = utoa(buf, v);
    gir_buf_append(b, p, (size_t)(buf + 24 - p));
}

/* v's text right-aligned in buf[0..24); returns the start. */
static char *itoa_right(char buf[24], int64_t v)
{
    char *p = utoa(buf, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
    if (v < 0)
        *--p = '-';
    return p;
}

void gir_buf_put_int(gir_buf *b, int64_t v)
{
    char buf[24];
    char *p = itoa_right(buf, v);
    gir_buf_append(b, p, (size_t)(buf + 24 - p));
}

size_t gir_fmt_int(char out[24], int64_t v)
{
    char buf[24];
    char *p = itoa_right(buf, v);
    size_t n = (size_t)(buf + 24 - p);
    memcpy(out, p, n);
    out[n] = '\0';
    return n;
}

void gir_buf_printf(gir_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
    } else if (gir_buf_reserve(b, (size_t)n)) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

char *gir_buf_take(gir_buf *b)
{
    char *s = NULL;
    if (!b->failed) {
        if (!b->data)
            gir_buf_reserve(b, 0);
        if (b->data)
            b->data[b->len] = '\0';
        s = b->data;
    } else {
        free(b->data);
    }
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    return s;
}

void gir_buf_free(gir_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

bool gir_grow(void **items, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : sz < 16 ? 64 / sz : 4; /* first: 4 elements, or 64 bytes of small ones */
    while (n < need) {
        if (n > SIZE_MAX / 2 / sz)
            return false;
        n *= 2;
    }
    size_t bytes;
    if (__builtin_mul_overflow(n, sz, &bytes))
        return false;
    void *p = realloc(*items, bytes);
    if (!p)
        return false;
    *items = p;
    *cap = n;
    return true;
}

/* ---- arena ---------------------------------------------------------------- */

struct gir_arena_block {
    gir_arena_block *next;
    size_t size;
    bool mapped; /* from block_new's mmap, else from malloc */
    _Alignas(16) unsigned char mem[];
};

/* Blocks start at 64 KiB and double up to 2 MiB (header included), so a
 * large arena needs few of them and a small one wastes little.  The head
 * block serves the small allocations (inline, from a->cur); a large one
 * gets a block of its own behind it. */
#define ARENA_BLOCK 65536u
#define ARENA_HUGE ((size_t)2 << 20)
#define ARENA_BLOCK_MAX (ARENA_HUGE - sizeof(gir_arena_block))

/* Maps n bytes (n >= 1 MiB) with their pages populated at once: an arena
 * that large is being filled, and faulting its pages in one by one costs
 * more than the filling (about 30 000 faults for a 100k-node graph).  A
 * mapping of 2 MiB or more is aligned to 2 MiB and offered to transparent
 * huge pages, which cuts the faults (and the kernel's bookkeeping) by 512;
 * where the system has neither, the pages simply fault in as used. */
static void *map_block(size_t n)
{
#if defined(MADV_HUGEPAGE) && defined(MADV_POPULATE_WRITE)
    if (n >= ARENA_HUGE && n <= SIZE_MAX - ARENA_HUGE) {
        unsigned char *p = mmap(NULL, n + ARENA_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        unsigned char *start = (unsigned char *)(((uintptr_t)p + ARENA_HUGE - 1) & ~(uintptr_t)(ARENA_HUGE - 1));
        if (start > p)
            munmap(p, (size_t)(start - p));
        size_t tail = (size_t)(p + n + ARENA_HUGE - (start + n));
        if (tail)
            munmap(start + n, tail);
        madvise(start, n, MADV_HUGEPAGE);
        madvise(start, n, MADV_POPULATE_WRITE);
        return start;
    }
#endif
#ifdef MAP_POPULATE
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
#else
    (void)n;
    return NULL;
#endif
}

/* A block of size bytes: mapped (map_block) from 1 MiB on, else malloc'd. */
static gir_arena_block *block_new(size_t size)
{
    gir_arena_block *b = size >= (1u << 20) ? map_block(sizeof *b + size) : NULL;
    if (b) {
        b->mapped = true;
    } else {
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->mapped = false;
    }
    b->size = size;
    return b;
}

static void block_free(gir_arena_block *b)
{
    if (b->mapped)
        munmap(b, sizeof *b + b->size);
    else
        free(b);
}

void *gir_arena_take_new(gir_arena *a, size_t n)
{
    gir_arena_block *b = a->head;
    /* The next regular block, twice the current one. */
    size_t regular = !b ? ARENA_BLOCK : b->size >= ARENA_BLOCK_MAX / 2 ? ARENA_BLOCK_MAX : 2 * b->size;
    if (regular < ARENA_BLOCK)
        regular = ARENA_BLOCK;
    bool one_off = n > regular / 4;
    size_t size = one_off ? n : regular;
    if (size > SIZE_MAX - sizeof *b - 15u)
        return NULL;
    size = (size + 15u) & ~(size_t)15u;
    gir_arena_block *nb = block_new(size);
    if (!nb)
        return NULL;
    a->used_total += n;
    if (b && one_off) {
        /* A large one-off block goes behind the current one so the
         * current block keeps serving small allocations. */
        nb->next = b->next;
        b->next = nb;
        return nb->mem;
    }
    nb->next = b;
    a->head = nb;
    a->cur = nb->mem + n;
    a->left = size - n;
    return nb->mem;
}

void *gir_arena_alloc(gir_arena *a, size_t n)
{
    void *p = gir_arena_alloc_uninit(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *gir_arena_strdup(gir_arena *a, const char *s)
{
    return s ? gir_arena_strndup(a, s, strlen(s)) : NULL;
}

void *gir_arena_memdup(gir_arena *a, const void *p, size_t n)
{
    void *q = gir_arena_alloc_uninit(a, n ? n : 1);
    if (q && n)
        memcpy(q, p, n);
    return q;
}

char *gir_arena_printf(gir_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *tmp = gir_vstrdupf(fmt, ap);
    va_end(ap);
    if (!tmp)
        return NULL;
    char *s = gir_arena_strdup(a, tmp);
    free(tmp);
    return s;
}

void gir_arena_free(gir_arena *a)
{
    gir_arena_block *b = a->head;
    while (b) {
        gir_arena_block *n = b->next;
        block_free(b);
        b = n;
    }
    a->head = NULL;
    a->cur = NULL;
    a->left = 0;
    a->used_total = 0;
}

/* ---- characters ---------------------------------------------------------- */

int gir_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

size_t gir_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- numbers ----------------------------------------------------------- */

/* Python repr style from the shortest digit string that round-trips:
 * positional when -4 <= exponent < 16, otherwise d.ddde+XX. */
static void fmt_repr(char out[48], double v, int maxprec, bool is_float, bool force_point)
{
    if (isnan(v)) {
        strcpy(out, "nan");
        return;
    }
    if (isinf(v)) {
        strcpy(out, v < 0 ? "-inf" : "inf");
        return;
    }
    char sci[40];
    /* The fewest significant digits that read back as v.  Away from powers
     * of two the values that round to v lie symmetrically around it, and
     * rounding to one more digit never moves farther from v, so reading
     * back is monotonic in the digit count: a binary search finds the
     * same count as trying 1, 2, ... in turn, in 5 conversions instead of
     * up to 17.  At a power of two the gap below is half the gap above,
     * so there every count is tried in turn. */
    int mexp;
    bool pow2 = is_float ? frexpf((float)v, &mexp) == 0.5f || frexpf((float)v, &mexp) == -0.5f
                         : frexp(v, &mexp) == 0.5 || frexp(v, &mexp) == -0.5;
    int prec;
    if (pow2) {
        for (prec = 1; prec < maxprec; prec++) {
            snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
            if (is_float ? strtof(sci, NULL) == (float)v : strtod(sci, NULL) == v)
                break;
        }
    } else {
        int lo = 1, hi = maxprec; /* maxprec digits always read back */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            snprintf(sci, sizeof sci, "%.*e", mid - 1, v);
            if (is_float ? strtof(sci, NULL) == (float)v : strtod(sci, NULL) == v)
                hi = mid;
            else
                lo = mid + 1;
        }
        prec = lo;
    }
    snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
    /* sci is [-]d[.ddd]e[+-]XX */
    const char *p = sci;
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[24];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < sizeof digits - 1)
            digits[nd++] = *p;
    digits[nd] = '\0';
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';
    int exp = atoi(p + 1);
    char *o = out;
    if (neg)
        *o++ = '-';
    if (v == 0) {
        strcpy(o, force_point ? "0.0" : "0");
        return;
    }
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = -1; i > exp; i--)
                *o++ = '0';
            memcpy(o, digits, nd);
            o += nd;
        } else {
            for (int i = 0; i <= exp; i++)
                *o++ = (size_t)i < nd ? digits[i] : '0';
            if ((size_t)exp + 1 < nd) {
                *o++ = '.';
                memcpy(o, digits + exp + 1, nd - (size_t)exp - 1);
                o += nd - (size_t)exp - 1;
            } else if (force_point) {
                *o++ = '.';
                *o++ = '0';
            }
        }
        *o = '\0';
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, nd - 1);
            o += nd - 1;
        }
        snprintf(o, 16, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
}

void gir_fmt_double(char out[48], double v, bool force_point)
{
    fmt_repr(out, v, 17, false, force_point);
}

void gir_fmt_float(char out[48], float v, bool force_point)
{
    fmt_repr(out, (double)v, 9, true, force_point);
}

double gir_float_widen(float v)
{
    if (isnan(v) || isinf(v))
        return (double)v;
    char text[48];
    gir_fmt_float(text, v, false);
    return strtod(text, NULL);
}

bool gir_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s)
        return false;
    *out = (int64_t)v;
    return true;
}

bool gir_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end)
        return false;
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL))
        return false;
    *out = v;
    return true;
}

/* ---- paths and strings ------------------------------------------------- */

char *gir_path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return gir_strdupf(".");
    if (slash == path)
        return gir_strdupf("/");
    return gir_strdupf("%.*s", (int)(slash - path), path);
}

const char *gir_path_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *gir_path_join(const char *dir, const char *name)
{
    if (name[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
        return gir_strdupf("%s", name);
    size_t n = strlen(dir);
    return gir_strdupf("%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", name);
}

char *gir_path_with_ext(const char *path, const char *ext)
{
    const char *base = gir_path_basename(path);
    const char *dot = strrchr(base, '.');
    size_t keep = dot && dot != base ? (size_t)(dot - path) : strlen(path);
    return gir_strdupf("%.*s%s", (int)keep, path, ext);
}

bool gir_path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bool gir_str_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

bool gir_str_ieq(const char *a, const char *b)
{
    return strcasecmp(a, b) == 0;
}
