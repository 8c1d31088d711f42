/* Reading parameter.h5 without libhdf5.
 *
 * A parameter file comes from anywhere, and libhdf5 is not written for
 * hostile input (crafted files reach heap overflows, use-after-free and
 * multi-gigabyte allocations inside it).  NNabla (h5py with its default
 * libver='earliest', or the C++ writer) and graphconv's own writer use a
 * small, old part of the HDF5 format; this file reads exactly that part,
 * checking every offset against the image, and refuses the rest by name:
 *
 *   superblock version 0 or 1 at offset 0, base address 0, 4- or 8-byte
 *     offsets and lengths, no driver information block;
 *   version 1 object headers with continuation blocks;
 *   groups as symbol tables (version 1 B-tree of group nodes, symbol table
 *     nodes, a local heap of names) holding hard links (not soft links);
 *   datasets: a fixed-point, IEEE floating-point (16, 32, 64 bits, bfloat16)
 *     or h5py-bool (enum of FALSE=0/TRUE=1 over one byte) element type of
 *     either byte order; a scalar or simple dataspace of rank <= 8; compact
 *     or contiguous storage inside the file (no chunks, no filters, no
 *     external files);
 *   attributes (messages of version 1 to 3): need_grad and index, scalars of
 *     an integer or integer-based enum type; other attributes are skipped;
 *   named datatypes (skipped); fill value, modification time, comment and
 *     NIL messages (ignored).
 *
 * Every object is reached by one link only (no cycles, no shared objects),
 * and counts are bounded (GIR_H5_MAX_OBJECTS objects, 64 nested groups).
 * The whole structure is parsed when the image is opened; reading a dataset
 * then only copies (and byte-swaps) bytes whose place was checked.  No
 * global state: any thread may read any image. */
#include "io/h5.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/ir.h"

#define H5_MAX_DEPTH 64
#define H5_MAX_OBJECTS 1000000
#define H5_MAX_CHUNKS 1024     /* object header continuation blocks per object */
#define H5_MAX_MESSAGES 65536  /* header messages per object */
#define H5_MAX_NODES 4000000   /* B-tree and symbol table nodes per file */

enum { MSG_NIL = 0x00, MSG_SPACE = 0x01, MSG_LINKINFO = 0x02, MSG_TYPE = 0x03, MSG_FILL_OLD = 0x04,
       MSG_FILL = 0x05, MSG_LINK = 0x06, MSG_EXTERNAL = 0x07, MSG_LAYOUT = 0x08, MSG_BOGUS = 0x09,
       MSG_GROUPINFO = 0x0a, MSG_FILTERS = 0x0b, MSG_ATTR = 0x0c, MSG_COMMENT = 0x0d, MSG_MTIME_OLD = 0x0e,
       MSG_CONT = 0x10, MSG_STAB = 0x11, MSG_MTIME = 0x12, MSG_BTREE_K = 0x13, MSG_ATTRINFO = 0x15 };

typedef struct h5ds {
    char *name;       /* full path without the leading '/' */
    gir_dtype dtype;
    gir_shape shape;
    bool need_grad, has_index;
    int64_t index;
    bool swap;        /* stored big-endian */
    uint64_t offset;  /* where the bytes lie in the image */
    uint64_t nbytes;
} h5ds;

typedef struct h5soft {
    char *name;
} h5soft;

struct gir_h5 {
    atomic_int refs;
    const unsigned char *img;
    uint64_t len;        /* the end of file the superblock states (<= image length) */
    unsigned so, sl;     /* sizes of offsets and lengths */
    h5ds *ds;            /* sorted by name */
    size_t n_ds, cap_ds;
    char *soft;          /* the first soft link met, or NULL */
    /* object headers already reached (open addressing, 0 = empty) */
    uint64_t *seen;
    size_t n_seen, cap_seen;
    size_t nodes;
};

/* ---- bytes ----------------------------------------------------------------- */

static uint64_t get_le(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Whether [off, off + n) lies inside the file. */
static bool in_file(const gir_h5 *h, uint64_t off, uint64_t n)
{
    return off <= h->len && n <= h->len - off;
}

/* An address field: UINT64_MAX for the undefined address. */
static uint64_t get_addr(const gir_h5 *h, const unsigned char *p)
{
    uint64_t v = get_le(p, h->so);
    if (h->so == 4 && v == UINT32_MAX)
        return UINT64_MAX;
    return v;
}

static uint64_t get_len(const gir_h5 *h, const unsigned char *p)
{
    uint64_t v = get_le(p, h->sl);
    if (h->sl == 4 && v == UINT32_MAX)
        return UINT64_MAX;
    return v;
}

static gir_status bad(gir_error *err, uint64_t at, const char *what)
{
    return gir_fail(err, GIR_E_PARAMS, "corrupt HDF5 file: %s at byte %llu", what, (unsigned long long)at);
}

/* ---- the set of object headers reached ------------------------------------ */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return x;
}

/* Adds addr (never 0: the superblock lies there) to the set; false if it was
 * there already.  *nomem on allocation failure. */
static bool seen_add(gir_h5 *h, uint64_t addr, bool *nomem)
{
    if ((h->n_seen + 1) * 2 > h->cap_seen) {
        size_t cap = h->cap_seen ? h->cap_seen * 2 : 64;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t) {
            *nomem = true;
            return false;
        }
        for (size_t i = 0; i < h->cap_seen; i++)
            if (h->seen[i])
                for (size_t k = mix(h->seen[i]) & (cap - 1);; k = (k + 1) & (cap - 1))
                    if (!t[k]) {
                        t[k] = h->seen[i];
                        break;
                    }
        free(h->seen);
        h->seen = t;
        h->cap_seen = cap;
    }
    for (size_t k = mix(addr) & (h->cap_seen - 1);; k = (k + 1) & (h->cap_seen - 1)) {
        if (h->seen[k] == addr)
            return false;
        if (!h->seen[k]) {
            h->seen[k] = addr;
            h->n_seen++;
            return true;
        }
    }
}

/* ---- datatypes ------------------------------------------------------------- */

typedef struct h5type {
    gir_dtype dtype;   /* GIR_DT_UNKNOWN: not supported (see what) */
    const char *what;  /* the class, for messages */
    size_t size;
    bool be, is_signed;
    bool is_enum;      /* an enum over an integer (be, is_signed: the integer's) */
    unsigned cls;      /* HDF5 type class */
    size_t len;        /* bytes of the message */
} h5type;

static const char *const class_names[] = { "integer", "float", "time", "string", "bitfield", "opaque",
                                           "compound", "reference", "enum", "variable-length", "array" };

/* A fixed-point or floating-point type's fields; t->dtype is left UNKNOWN
 * for any other layout. */
static void atomic_type(const unsigned char *p, unsigned cls, uint32_t bits, h5type *t)
{
    size_t sz = t->size;
    if (cls == 0) {
        unsigned off = (unsigned)get_le(p + 8, 2), prec = (unsigned)get_le(p + 10, 2);
        t->be = bits & 1;
        t->is_signed = bits & 8;
        t->len = 12;
        if (off != 0 || prec != sz * 8)
            return;
        switch (sz) {
        case 1: t->dtype = t->is_signed ? GIR_DT_I8 : GIR_DT_U8; break;
        case 2: t->dtype = t->is_signed ? GIR_DT_I16 : GIR_DT_U16; break;
        case 4: t->dtype = t->is_signed ? GIR_DT_I32 : GIR_DT_U32; break;
        case 8: t->dtype = t->is_signed ? GIR_DT_I64 : GIR_DT_U64; break;
        default: break;
        }
        return;
    }
    /* floating point: byte order bits 0 and 6, mantissa normalisation bits
     * 4-5 (2: implied leading one), sign bit position in bits 8-15 */
    t->len = 20;
    t->be = (bits & 0x41) == 0x01;
    if ((bits & 0x40) || ((bits >> 4) & 3) != 2)
        return;
    unsigned off = (unsigned)get_le(p + 8, 2), prec = (unsigned)get_le(p + 10, 2);
    unsigned epos = p[12], esize = p[13], mpos = p[14], msize = p[15], sign = (bits >> 8) & 0xff;
    uint32_t bias = (uint32_t)get_le(p + 16, 4);
    if (off != 0 || prec != sz * 8 || mpos != 0 || sign != sz * 8 - 1 || epos != msize || epos + esize != sign)
        return;
    if (sz == 4 && esize == 8 && msize == 23 && bias == 127)
        t->dtype = GIR_DT_F32;
    else if (sz == 8 && esize == 11 && msize == 52 && bias == 1023)
        t->dtype = GIR_DT_F64;
    else if (sz == 2 && esize == 5 && msize == 10 && bias == 15)
        t->dtype = GIR_DT_F16;
    else if (sz == 2 && esize == 8 && msize == 7 && bias == 127)
        t->dtype = GIR_DT_BF16;
}

/* Decodes a datatype message of n bytes.  Fails only on bytes that cannot
 * be a datatype; a well-formed type outside the subset gives
 * t->dtype == GIR_DT_UNKNOWN and its class name in t->what. */
static gir_status parse_type(const unsigned char *p, size_t n, uint64_t at, h5type *t, gir_error *err)
{
    memset(t, 0, sizeof *t);
    t->dtype = GIR_DT_UNKNOWN;
    if (n < 8)
        return bad(err, at, "datatype message too short");
    unsigned cls = p[0] & 15, ver = p[0] >> 4;
    uint32_t bits = (uint32_t)get_le(p + 1, 3);
    t->size = (size_t)get_le(p + 4, 4);
    t->what = cls < sizeof class_names / sizeof class_names[0] ? class_names[cls] : "unknown";
    if (ver < 1 || ver > 3)
        return bad(err, at, "datatype message of an unknown version");
    if (t->size == 0)
        return bad(err, at, "datatype of size 0");
    t->cls = cls;
    if (cls == 0 || cls == 1) {
        if (n < (cls == 0 ? 12u : 20u))
            return bad(err, at, "datatype message too short");
        atomic_type(p, cls, bits, t);
        return GIR_OK;
    }
    if (cls != 8)
        return GIR_OK;
    /* enum: the base type, member names, then member values.  A dataset
     * may be h5py's bool (two members, values 0 and 1, over one byte); an
     * attribute may be any enum over an integer, read as that integer. */
    unsigned nmemb = bits & 0xffff;
    h5type base;
    TRY(parse_type(p + 8, n - 8, at + 8, &base, err));
    if (base.cls != 0 || base.dtype == GIR_DT_UNKNOWN || base.size != t->size)
        return GIR_OK;
    size_t pos = 8 + base.len;
    for (unsigned i = 0; i < nmemb; i++) {
        const unsigned char *z = pos < n ? memchr(p + pos, 0, n - pos) : NULL;
        if (!z)
            return bad(err, at, "enum member name runs past its message");
        size_t l = (size_t)(z - (p + pos)) + 1;
        if (ver < 3)
            l = (l + 7) & ~(size_t)7;
        pos += l;
    }
    if (pos > n || (uint64_t)nmemb * t->size > n - pos)
        return bad(err, at, "enum values run past their message");
    t->len = pos + nmemb * t->size;
    t->is_enum = true;
    t->be = base.be;
    t->is_signed = base.is_signed;
    if (nmemb == 2 && t->size == 1) {
        unsigned v0 = p[pos], v1 = p[pos + 1];
        if (v0 + v1 == 1 && v0 * v1 == 0)
            t->dtype = GIR_DT_BOOL;
    }
    return GIR_OK;
}

/* ---- dataspaces ----------------------------------------------------------- */

/* rank -1 for a null dataspace. */
static gir_status parse_space(const gir_h5 *h, const unsigned char *p, size_t n, uint64_t at, int *rank,
                              uint64_t dims[GIR_MAX_RANK + 1], int *true_rank, gir_error *err)
{
    if (n < 4)
        return bad(err, at, "dataspace message too short");
    unsigned ver = p[0], nd = p[1], flags = p[2];
    size_t pos;
    *rank = (int)nd;
    *true_rank = (int)nd;
    if (ver == 1) {
        pos = 8;
    } else if (ver == 2) {
        pos = 4;
        if (p[3] == 2)
            *rank = -1;
        else if (p[3] > 2)
            return bad(err, at, "dataspace of an unknown kind");
        else if (p[3] == 0 && nd != 0)
            return bad(err, at, "scalar dataspace with dimensions");
    } else {
        return bad(err, at, "dataspace message of an unknown version");
    }
    if (flags & 2)
        return gir_fail(err, GIR_E_UNSUPPORTED, "HDF5 dataspace with permuted dimensions (byte %llu) is not supported",
                        (unsigned long long)at);
    if (*rank < 0)
        return GIR_OK;
    if (n < pos || (uint64_t)nd * h->sl > n - pos)
        return bad(err, at, "dataspace dimensions run past their message");
    for (unsigned i = 0; i < nd && i <= GIR_MAX_RANK; i++)
        dims[i] = get_len(h, p + pos + (size_t)i * h->sl);
    return GIR_OK;
}

/* ---- object headers -------------------------------------------------------- */

typedef struct msg {
    const unsigned char *p;
    size_t n;
    uint64_t at;
} msg;

typedef struct h5obj {
    bool stab, newgroup, filters, external;
    uint64_t btree, heap;
    msg type, space, layout, ng, idx, fill;
    unsigned n_type, n_space, n_layout;
} h5obj;

/* An attribute message: records need_grad and index, skips the rest. */
static gir_status note_attr(const gir_h5 *h, const unsigned char *p, size_t n, uint64_t at, h5obj *o,
                            gir_error *err)
{
    (void)h;
    if (n < 8)
        return bad(err, at, "attribute message too short");
    unsigned ver = p[0];
    size_t name_len = (size_t)get_le(p + 2, 2);
    size_t pos = ver == 3 ? 9 : 8;
    if (ver < 1 || ver > 3)
        return bad(err, at, "attribute message of an unknown version");
    if (ver >= 2 && (p[1] & 3))
        return gir_fail(err, GIR_E_UNSUPPORTED, "HDF5 attribute with a shared datatype or dataspace (byte %llu) is not supported",
                        (unsigned long long)at);
    if (name_len == 0 || name_len > n - pos || p[pos + name_len - 1] != 0)
        return bad(err, at, "attribute name runs past its message");
    const char *name = (const char *)p + pos;
    msg m = { p, n, at };
    if (strcmp(name, "need_grad") == 0)
        o->ng = m;
    else if (strcmp(name, "index") == 0)
        o->idx = m;
    return GIR_OK;
}

/* Reads the messages of the version 1 object header at addr into o. */
static gir_status parse_header(const gir_h5 *h, uint64_t addr, h5obj *o, gir_error *err)
{
    memset(o, 0, sizeof *o);
    if (addr == UINT64_MAX || !in_file(h, addr, 16))
        return bad(err, addr, "object header outside the file");
    const unsigned char *p = h->img + addr;
    if (memcmp(p, "OHDR", 4) == 0)
        return gir_fail(err, GIR_E_UNSUPPORTED,
                        "HDF5 object header version 2 at byte %llu (a file written with libver='latest') is not "
                        "supported: graphconv reads the format nnabla and h5py write by default",
                        (unsigned long long)addr);
    if (p[0] != 1)
        return bad(err, addr, "object header of an unknown version");
    uint64_t size = get_le(p + 8, 4);
    if (!in_file(h, addr + 16, size))
        return bad(err, addr, "object header runs past the end of the file");
    uint64_t chunk_at[H5_MAX_CHUNKS], chunk_len[H5_MAX_CHUNKS];
    size_t nchunks = 1, nmsg = 0;
    chunk_at[0] = addr + 16;
    chunk_len[0] = size;
    for (size_t c = 0; c < nchunks; c++) {
        uint64_t pos = chunk_at[c], end = chunk_at[c] + chunk_len[c];
        while (end - pos >= 8) {
            const unsigned char *m = h->img + pos;
            unsigned type = (unsigned)get_le(m, 2), flags = m[4];
            size_t mlen = (size_t)get_le(m + 2, 2);
            if (mlen > end - pos - 8)
                return bad(err, pos, "header message runs past its block");
            if (++nmsg > H5_MAX_MESSAGES)
                return gir_fail(err, GIR_E_LIMIT, "HDF5 object header at byte %llu has more than %d messages",
                                (unsigned long long)addr, H5_MAX_MESSAGES);
            const unsigned char *d = m + 8;
            uint64_t at = pos + 8;
            msg ms = { d, mlen, at };
            if (flags & 2 && type != MSG_NIL)
                return gir_fail(err, GIR_E_UNSUPPORTED, "HDF5 shared header message (byte %llu) is not supported",
                                (unsigned long long)at);
            switch (type) {
            case MSG_FILL_OLD: case MSG_FILL: o->fill = ms; break;
            case MSG_NIL: case MSG_COMMENT: case MSG_MTIME_OLD: case MSG_MTIME:
            case MSG_BTREE_K: case MSG_BOGUS:
                break;
            case MSG_SPACE: o->space = ms; o->n_space++; break;
            case MSG_TYPE: o->type = ms; o->n_type++; break;
            case MSG_LAYOUT: o->layout = ms; o->n_layout++; break;
            case MSG_FILTERS: o->filters = true; break;
            case MSG_EXTERNAL: o->external = true; break;
            case MSG_LINKINFO: case MSG_LINK: case MSG_GROUPINFO: o->newgroup = true; break;
            case MSG_ATTRINFO:
                return gir_fail(err, GIR_E_UNSUPPORTED,
                                "HDF5 attribute storage of the 1.8 format (byte %llu) is not supported",
                                (unsigned long long)at);
            case MSG_ATTR: TRY(note_attr(h, d, mlen, at, o, err)); break;
            case MSG_STAB:
                if (mlen < 2u * h->so)
                    return bad(err, at, "symbol table message too short");
                o->stab = true;
                o->btree = get_addr(h, d);
                o->heap = get_addr(h, d + h->so);
                break;
            case MSG_CONT: {
                if (mlen < h->so + h->sl)
                    return bad(err, at, "continuation message too short");
                uint64_t ca = get_addr(h, d), cl = get_len(h, d + h->so);
                if (!in_file(h, ca, cl) || cl < 8)
                    return bad(err, at, "object header continuation outside the file");
                if (nchunks == H5_MAX_CHUNKS)
                    return gir_fail(err, GIR_E_LIMIT,
                                    "HDF5 object header at byte %llu has more than %d continuation blocks",
                                    (unsigned long long)addr, H5_MAX_CHUNKS);
                chunk_at[nchunks] = ca;
                chunk_len[nchunks++] = cl;
                break;
            }
            default:
                return gir_fail(err, GIR_E_UNSUPPORTED, "HDF5 header message of type %u (byte %llu) is not supported",
                                type, (unsigned long long)at);
            }
            pos += 8 + mlen;
        }
    }
    return GIR_OK;
}

/* ---- datasets -------------------------------------------------------------- */

/* The integer value of a scalar attribute (integer or integer-based enum). */
static gir_status attr_int(const gir_h5 *h, const msg *m, const char *dset, const char *attr, int64_t *v,
                           gir_error *err)
{
    const unsigned char *p = m->p;
    size_t n = m->n;
    unsigned ver = p[0];
    size_t name_len = (size_t)get_le(p + 2, 2), tlen = (size_t)get_le(p + 4, 2), slen = (size_t)get_le(p + 6, 2);
    size_t pos = ver == 3 ? 9 : 8;
    size_t pad = ver == 1 ? 7 : 0;
    pos += (name_len + pad) & ~pad;
    if (pos > n || tlen > n - pos)
        return bad(err, m->at, "attribute datatype runs past its message");
    h5type t;
    TRY(parse_type(p + pos, tlen, m->at + pos, &t, err));
    pos += (tlen + pad) & ~pad;
    if (pos > n || slen > n - pos)
        return bad(err, m->at, "attribute dataspace runs past its message");
    int rank, true_rank;
    uint64_t dims[GIR_MAX_RANK + 1];
    TRY(parse_space(h, p + pos, slen, m->at + pos, &rank, dims, &true_rank, err));
    pos += (slen + pad) & ~pad;
    uint64_t count = rank < 0 ? 0 : 1;
    for (int i = 0; i < rank && i <= GIR_MAX_RANK; i++)
        if (!gir_mul_u64(count, dims[i], &count))
            count = UINT64_MAX;
    if (rank > GIR_MAX_RANK)
        count = UINT64_MAX;
    if (count != 1)
        return gir_fail(err, GIR_E_PARAMS, "dataset '%s': attribute %s holds %llu values, expected one", dset, attr,
                        (unsigned long long)count);
    bool integer = t.is_enum || (t.cls == 0 && t.dtype != GIR_DT_UNKNOWN);
    if (!integer && (t.cls == 0 || t.cls == 8))
        return gir_fail(err, GIR_E_PARAMS,
                        "dataset '%s': attribute %s is a %zu-byte %s whose bit layout is not supported, expected a "
                        "plain integer",
                        dset, attr, t.size, t.what);
    if (!integer || t.size > 8)
        return gir_fail(err, GIR_E_PARAMS, "dataset '%s': attribute %s is %s, expected an integer", dset, attr,
                        t.what);
    if (pos > n || t.size > n - pos)
        return bad(err, m->at, "attribute value runs past its message");
    const unsigned char *b = p + pos;
    uint64_t u = 0;
    for (size_t i = 0; i < t.size; i++)
        u = u << 8 | b[t.be ? i : t.size - 1 - i];
    if (t.is_signed && t.size < 8 && (u >> (t.size * 8 - 1)) & 1)
        u |= ~UINT64_C(0) << (t.size * 8);
    /* an unsigned 64-bit value above INT64_MAX saturates, as HDF5's
     * conversion did */
    *v = !t.is_signed && t.size == 8 && u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    return GIR_OK;
}

/* A dataset without storage reads as its fill value: zero unless a fill
 * value message (old: size + value; versions 1 and 2: a "defined" byte at
 * 2, then size + value; version 3: flag bit 5, then size + value) gives
 * bytes that are not all zero. */
static gir_status check_zero_fill(const h5obj *o, const char *name, gir_error *err)
{
    const unsigned char *p = o->fill.p;
    size_t n = o->fill.n, pos;
    if (!p)
        return GIR_OK;
    if (o->fill.p[-8] == MSG_FILL_OLD) {
        pos = 0;
    } else if (n >= 4 && (p[0] == 1 || p[0] == 2)) {
        if (!p[3])
            return GIR_OK;
        pos = 4;
    } else if (n >= 2 && p[0] == 3) {
        if (!(p[1] & 0x20))
            return GIR_OK;
        pos = 2;
    } else {
        return bad(err, o->fill.at, "fill value message of an unknown version");
    }
    if (n < pos + 4)
        return bad(err, o->fill.at, "fill value message too short");
    uint64_t size = get_le(p + pos, 4);
    if (size > n - pos - 4)
        return bad(err, o->fill.at, "fill value runs past its message");
    for (uint64_t i = 0; i < size; i++)
        if (p[pos + 4 + i])
            return gir_fail(err, GIR_E_UNSUPPORTED,
                            "dataset '%s' has no stored data and a fill value other than zero, which is not supported",
                            name);
    return GIR_OK;
}

static gir_status add_dataset(gir_h5 *h, const h5obj *o, const char *name, gir_error *err)
{
    if (o->n_type != 1 || o->n_space != 1 || o->n_layout != 1)
        return bad(err, o->layout.at, "dataset without exactly one datatype, dataspace and layout");
    h5ds d = { 0 };
    h5type t;
    TRY(parse_type(o->type.p, o->type.n, o->type.at, &t, err));
    if (t.dtype == GIR_DT_UNKNOWN)
        return gir_fail(err, GIR_E_DTYPE, "dataset '%s' has %zu-byte %s elements, which are not supported", name,
                        t.size, t.what);
    d.dtype = t.dtype;
    d.swap = t.be && t.size > 1;
    int rank, true_rank;
    uint64_t dims[GIR_MAX_RANK + 1];
    TRY(parse_space(h, o->space.p, o->space.n, o->space.at, &rank, dims, &true_rank, err));
    if (rank < 0)
        return gir_fail(err, GIR_E_PARAMS, "dataset '%s' has no dataspace (a null dataspace)", name);
    if (rank > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_LIMIT, "dataset '%s' has rank %d, more than the %d supported", name, rank,
                        GIR_MAX_RANK);
    d.shape.rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i] > (uint64_t)INT64_MAX)
            return gir_fail(err, GIR_E_LIMIT, "dataset '%s': dimension %d is too large", name, i);
        d.shape.dims[i] = (int64_t)dims[i];
    }
    gir_status st = gir_tensor_size(d.dtype, &d.shape, &d.nbytes, err);
    if (st) {
        gir_err_node(err, name);
        return st;
    }
    if (o->external)
        return gir_fail(err, GIR_E_UNSUPPORTED, "dataset '%s' keeps its data in other files", name);
    if (o->filters)
        return gir_fail(err, GIR_E_UNSUPPORTED,
                        "dataset '%s' is filtered (compressed), which is not supported: nnabla writes contiguous "
                        "datasets",
                        name);
    /* layout: version 3 (HDF5 1.6 to 1.10 by default) or 1 and 2 */
    const unsigned char *p = o->layout.p;
    size_t n = o->layout.n;
    uint64_t at = o->layout.at;
    if (n < 2)
        return bad(err, at, "layout message too short");
    unsigned ver = p[0], cls;
    uint64_t addr = UINT64_MAX, size = 0;
    const unsigned char *compact = NULL;
    if (ver == 3) {
        cls = p[1];
        if (cls == 0) {
            if (n < 4)
                return bad(err, at, "layout message too short");
            size = get_le(p + 2, 2);
            if (size > n - 4)
                return bad(err, at, "compact data runs past its message");
            compact = p + 4;
        } else if (cls == 1) {
            if (n < 2u + h->so + h->sl)
                return bad(err, at, "layout message too short");
            addr = get_addr(h, p + 2);
            size = get_len(h, p + 2 + h->so);
        }
    } else if (ver == 1 || ver == 2) {
        if (n < 8)
            return bad(err, at, "layout message too short");
        unsigned nd = p[1];
        cls = p[2];
        size_t pos = 8;
        if (cls != 0) {
            if (n < pos + h->so)
                return bad(err, at, "layout message too short");
            addr = get_addr(h, p + pos);
            pos += h->so;
        }
        if ((uint64_t)nd * 4 > n - pos)
            return bad(err, at, "layout dimensions run past their message");
        pos += (size_t)nd * 4;
        size = d.nbytes;
        if (cls == 0) {
            if (n - pos < 4)
                return bad(err, at, "layout message too short");
            size = get_le(p + pos, 4);
            if (size > n - pos - 4)
                return bad(err, at, "compact data runs past its message");
            compact = p + pos + 4;
        }
    } else {
        return gir_fail(err, GIR_E_UNSUPPORTED,
                        "dataset '%s' has a layout message of version %u (libver='latest'), which is not supported",
                        name, ver);
    }
    if (cls == 2)
        return gir_fail(err, GIR_E_UNSUPPORTED,
                        "dataset '%s' is stored in chunks, which is not supported: nnabla writes contiguous datasets",
                        name);
    if (cls == 3)
        return gir_fail(err, GIR_E_UNSUPPORTED, "dataset '%s' keeps its data in other files", name);
    if (cls > 3)
        return bad(err, at, "layout of an unknown class");
    if (compact) {
        if (size != d.nbytes)
            return gir_fail(err, GIR_E_PARAMS, "dataset '%s' stores %llu bytes for %llu", name,
                            (unsigned long long)size, (unsigned long long)d.nbytes);
        d.offset = (uint64_t)(compact - h->img);
    } else if (d.nbytes > 0 && addr == UINT64_MAX) {
        /* never written: all fill value, which must be zero */
        TRY(check_zero_fill(o, name, err));
        d.offset = UINT64_MAX;
    } else if (d.nbytes > 0) {
        if (size != d.nbytes)
            return gir_fail(err, GIR_E_PARAMS, "dataset '%s' stores %llu bytes for %llu", name,
                            (unsigned long long)size, (unsigned long long)d.nbytes);
        if (!in_file(h, addr, size))
            return gir_fail(err, GIR_E_PARAMS,
                            "dataset '%s': its %llu bytes at byte %llu lie past the end of the file (%llu bytes)",
                            name, (unsigned long long)size, (unsigned long long)addr, (unsigned long long)h->len);
        d.offset = addr;
    }
    int64_t v = 0;
    if (o->ng.p) {
        TRY(attr_int(h, &o->ng, name, "need_grad", &v, err));
        d.need_grad = v != 0;
    }
    d.index = -1;
    if (o->idx.p) {
        TRY(attr_int(h, &o->idx, name, "index", &d.index, err));
        d.has_index = true;
    }
    if (!GIR_GROW(h->ds, h->cap_ds, h->n_ds + 1) || !(d.name = gir_strdupf("%s", name)))
        return gir_nomem(err);
    h->ds[h->n_ds++] = d;
    return GIR_OK;
}

/* ---- groups ---------------------------------------------------------------- */

typedef struct pending {
    char *path; /* "" for the root, else "a/b" */
    int depth;
    uint64_t btree, heap;
} pending;

typedef struct walk {
    pending *stack;
    size_t n, cap;
    size_t objects;
} walk;

typedef struct heap {
    uint64_t data, size;
} heap;

static gir_status read_heap(const gir_h5 *h, uint64_t addr, heap *out, gir_error *err)
{
    size_t need = 8 + 2u * h->sl + h->so;
    if (addr == UINT64_MAX || !in_file(h, addr, need))
        return bad(err, addr, "local heap outside the file");
    const unsigned char *p = h->img + addr;
    if (memcmp(p, "HEAP", 4) != 0 || p[4] != 0)
        return bad(err, addr, "no local heap");
    out->size = get_len(h, p + 8);
    out->data = get_addr(h, p + 8 + 2 * h->sl);
    if (!in_file(h, out->data, out->size))
        return bad(err, addr, "local heap data outside the file");
    return GIR_OK;
}

/* One link of group cur: name at heap offset, object header at obj. */
static gir_status visit_link(gir_h5 *h, walk *w, const pending *cur, const heap *hp, uint64_t name_off,
                             uint64_t obj, uint32_t cache, uint64_t at, gir_error *err)
{
    if (name_off >= hp->size)
        return bad(err, at, "link name outside the local heap");
    if (cache != 2 && (obj == 0 || obj == UINT64_MAX))
        return bad(err, at, "link to no object header");
    const char *s = (const char *)h->img + hp->data + name_off;
    const char *z = memchr(s, 0, (size_t)(hp->size - name_off));
    if (!z)
        return bad(err, at, "link name runs past the local heap");
    if (z == s)
        return bad(err, at, "link with an empty name");
    if (memchr(s, '/', (size_t)(z - s)))
        return bad(err, at, "link name with a '/'");
    char *path = cur->path[0] ? gir_strdupf("%s/%s", cur->path, s) : gir_strdupf("%s", s);
    if (!path)
        return gir_nomem(err);
    gir_status st = GIR_OK;
    bool nomem = false;
    if (++w->objects > H5_MAX_OBJECTS) {
        st = gir_fail(err, GIR_E_LIMIT, "the file has more than %d objects", H5_MAX_OBJECTS);
    } else if (cache == 2) {
        if (!h->soft)
            h->soft = path, path = NULL;
    } else if (cache > 2) {
        st = bad(err, at, "symbol table entry of an unknown kind");
    } else if (!seen_add(h, obj, &nomem)) {
        st = nomem ? gir_nomem(err)
                   : gir_fail(err, GIR_E_UNSUPPORTED,
                              "'/%s' links to an object that is linked elsewhere too, which is not supported", path);
    } else {
        h5obj o;
        st = parse_header(h, obj, &o, err);
        if (st == GIR_OK && o.newgroup) {
            st = gir_fail(err, GIR_E_UNSUPPORTED,
                          "group '/%s' is stored in the HDF5 1.8 format (libver='latest'), which is not supported",
                          path);
        } else if (st == GIR_OK && o.stab) {
            if (cur->depth + 1 > H5_MAX_DEPTH)
                st = gir_fail(err, GIR_E_LIMIT, "group '/%s' is nested deeper than %d levels", path, H5_MAX_DEPTH);
            else if (!GIR_GROW(w->stack, w->cap, w->n + 1))
                st = gir_nomem(err);
            else {
                w->stack[w->n++] = (pending){ path, cur->depth + 1, o.btree, o.heap };
                path = NULL;
            }
        } else if (st == GIR_OK && o.n_layout) {
            st = add_dataset(h, &o, path, err);
        } else if (st == GIR_OK && !o.n_type) {
            st = gir_fail(err, GIR_E_UNSUPPORTED, "'/%s' is neither a group, a dataset nor a datatype", path);
        }
        /* a named datatype (a datatype message alone) is not a parameter */
    }
    free(path);
    return st;
}

/* Lists group cur: its B-tree's symbol table nodes, in key order. */
static gir_status walk_group(gir_h5 *h, walk *w, const pending *cur, gir_error *err)
{
    heap hp = { 0 };
    TRY(read_heap(h, cur->heap, &hp, err));
    typedef struct node {
        uint64_t addr;
        int level; /* -1: any (the root) */
    } node;
    node *todo = NULL;
    size_t nt = 0, ct = 0;
    gir_status st = GIR_OK;
    if (!GIR_GROW(todo, ct, 1))
        return gir_nomem(err);
    todo[nt++] = (node){ cur->btree, -1 };
    while (st == GIR_OK && nt > 0) {
        node nd = todo[--nt];
        if (++h->nodes > H5_MAX_NODES) {
            st = gir_fail(err, GIR_E_LIMIT, "the file has more than %d group nodes", H5_MAX_NODES);
            break;
        }
        size_t head = 8 + 2u * h->so;
        if (nd.addr == UINT64_MAX || !in_file(h, nd.addr, head)) {
            st = bad(err, nd.addr, "group B-tree node outside the file");
            break;
        }
        const unsigned char *p = h->img + nd.addr;
        if (memcmp(p, "TREE", 4) != 0 || p[4] != 0) {
            st = bad(err, nd.addr, "no group B-tree node");
            break;
        }
        int level = p[5];
        size_t used = (size_t)get_le(p + 6, 2);
        if (nd.level >= 0 && level != nd.level) {
            st = bad(err, nd.addr, "group B-tree node at the wrong level");
            break;
        }
        uint64_t body = (uint64_t)used * (h->so + h->sl) + h->sl;
        if (!in_file(h, nd.addr + head, body)) {
            st = bad(err, nd.addr, "group B-tree node runs past the end of the file");
            break;
        }
        /* children in reverse so that the stack pops them in key order */
        if (level > 0 && !GIR_GROW(todo, ct, nt + used)) {
            st = gir_nomem(err);
            break;
        }
        for (size_t k = used; st == GIR_OK && k-- > 0;) {
            uint64_t child = get_addr(h, p + head + h->sl + k * (h->so + h->sl));
            if (level > 0) {
                todo[nt++] = (node){ child, level - 1 };
                continue;
            }
            /* a symbol table node: its entries */
            size_t ent = 2u * h->so + 24;
            if (child == UINT64_MAX || !in_file(h, child, 8)) {
                st = bad(err, child, "symbol table node outside the file");
                break;
            }
            const unsigned char *s = h->img + child;
            if (memcmp(s, "SNOD", 4) != 0 || s[4] != 1) {
                st = bad(err, child, "no symbol table node");
                break;
            }
            size_t count = (size_t)get_le(s + 6, 2);
            if (!in_file(h, child + 8, (uint64_t)count * ent)) {
                st = bad(err, child, "symbol table node runs past the end of the file");
                break;
            }
            if (++h->nodes > H5_MAX_NODES) {
                st = gir_fail(err, GIR_E_LIMIT, "the file has more than %d group nodes", H5_MAX_NODES);
                break;
            }
            /* entries are kept in name order; visited last to first, then
             * the group stack reverses that again */
            for (size_t e = 0; st == GIR_OK && e < count; e++) {
                const unsigned char *q = s + 8 + e * ent;
                uint64_t at = child + 8 + e * ent;
                st = visit_link(h, w, cur, &hp, get_len(h, q), get_addr(h, q + h->so),
                                (uint32_t)get_le(q + 2 * h->so, 4), at, err);
            }
        }
    }
    free(todo);
    return st;
}

static int cmp_ds_name(const void *a, const void *b)
{
    return strcmp(((const h5ds *)a)->name, ((const h5ds *)b)->name);
}

/* The superblock, then every group from the root down. */
static gir_status parse_file(gir_h5 *h, size_t len, gir_error *err)
{
    static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
    if (len == 0)
        return gir_fail(err, GIR_E_PARAMS, "the HDF5 file is empty");
    if (len < 8 || memcmp(h->img, sig, 8) != 0)
        return gir_fail(err, GIR_E_PARAMS, "not a readable HDF5 file: no HDF5 signature at its start");
    if (len < 24)
        return gir_fail(err, GIR_E_PARAMS, "not a readable HDF5 file: its superblock is cut short");
    const unsigned char *p = h->img;
    unsigned ver = p[8];
    if (ver > 1)
        return gir_fail(err, GIR_E_UNSUPPORTED,
                        "HDF5 superblock version %u (a file written with libver='latest') is not supported: "
                        "graphconv reads versions 0 and 1, which nnabla and h5py write by default",
                        ver);
    if (p[9] != 0 || p[10] != 0 || p[12] != 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "HDF5 superblock with free-space, symbol table or shared "
                                                "message versions other than 0 is not supported");
    h->so = p[13];
    h->sl = p[14];
    if ((h->so != 4 && h->so != 8) || (h->sl != 4 && h->sl != 8))
        return gir_fail(err, GIR_E_UNSUPPORTED,
                        "HDF5 file with %u-byte offsets and %u-byte lengths is not supported (4 or 8 bytes)", h->so,
                        h->sl);
    size_t pos = ver == 0 ? 24 : 28;
    size_t need = pos + 4u * h->so + 2u * h->so + 24;
    if (len < need)
        return gir_fail(err, GIR_E_PARAMS, "not a readable HDF5 file: its superblock is cut short");
    h->len = len;
    uint64_t base = get_addr(h, p + pos), eof = get_addr(h, p + pos + 2 * h->so),
             drv = get_addr(h, p + pos + 3 * h->so);
    if (base != 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "HDF5 file with a user block (base address %llu) is not supported",
                        (unsigned long long)base);
    if (drv != UINT64_MAX)
        return gir_fail(err, GIR_E_UNSUPPORTED, "HDF5 file with a driver information block is not supported");
    if (eof > len)
        return gir_fail(err, GIR_E_PARAMS, "the HDF5 file is truncated: it should have %llu bytes, it has %zu",
                        (unsigned long long)eof, len);
    h->len = eof;
    /* the root group's symbol table entry */
    const unsigned char *root = p + pos + 4 * h->so;
    uint64_t root_addr = get_addr(h, root + h->so);
    bool nomem = false;
    if (root_addr == 0 || root_addr == UINT64_MAX)
        return bad(err, pos + 5u * h->so, "no root group");
    seen_add(h, root_addr, &nomem);
    if (nomem)
        return gir_nomem(err);
    h5obj o;
    TRY(parse_header(h, root_addr, &o, err));
    if (o.newgroup)
        return gir_fail(err, GIR_E_UNSUPPORTED, "the root group is stored in the HDF5 1.8 format (libver='latest'), "
                                                "which is not supported");
    if (!o.stab)
        return bad(err, root_addr, "the root object is not a group");
    walk w = { 0 };
    gir_status st = GIR_OK;
    if (!GIR_GROW(w.stack, w.cap, 1) || !(w.stack[0].path = gir_strdupf("%s", ""))) {
        free(w.stack);
        return gir_nomem(err);
    }
    w.stack[0].depth = 0;
    w.stack[0].btree = o.btree;
    w.stack[0].heap = o.heap;
    w.n = 1;
    while (st == GIR_OK && w.n > 0) {
        pending cur = w.stack[--w.n];
        st = walk_group(h, &w, &cur, err);
        free(cur.path);
    }
    for (size_t i = 0; i < w.n; i++)
        free(w.stack[i].path);
    free(w.stack);
    free(h->seen);
    h->seen = NULL;
    h->cap_seen = h->n_seen = 0;
    if (st)
        return st;
    if (h->n_ds > 1)
        qsort(h->ds, h->n_ds, sizeof *h->ds, cmp_ds_name);
    return GIR_OK;
}

/* ---- public API ------------------------------------------------------------ */

static void h5_free(gir_h5 *h)
{
    for (size_t i = 0; i < h->n_ds; i++)
        free(h->ds[i].name);
    free(h->ds);
    free(h->soft);
    free(h->seen);
    free(h);
}

gir_status gir_h5_open(const void *image, size_t len, gir_h5 **out, gir_error *err)
{
    *out = NULL;
    gir_h5 *h = calloc(1, sizeof *h);
    if (!h)
        return gir_nomem(err);
    atomic_init(&h->refs, 1);
    h->img = image;
    gir_status st = parse_file(h, len, err);
    if (st) {
        h5_free(h);
        return st;
    }
    *out = h;
    return GIR_OK;
}

GIR_REFCOUNTED(, gir_h5, gir_h5_ref, gir_h5_close, h5_free)

void gir_h5_params_free(gir_h5_param *params, size_t n)
{
    for (size_t i = 0; params && i < n; i++)
        free(params[i].name);
    free(params);
}

static int cmp_param(const void *a, const void *b)
{
    const gir_h5_param *x = a, *y = b;
    if (x->has_index != y->has_index)
        return x->has_index ? -1 : 1;
    if (x->has_index && x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return strcmp(x->name, y->name);
}

gir_status gir_h5_list_open(gir_h5 *h, gir_h5_param **params, size_t *n, gir_error *err)
{
    *params = NULL;
    *n = 0;
    if (h->soft)
        return gir_fail(err, GIR_E_UNSUPPORTED, "'/%s' is a soft or external link, which is not supported",
                        h->soft);
    gir_h5_param *ps = calloc(h->n_ds ? h->n_ds : 1, sizeof *ps);
    if (!ps)
        return gir_nomem(err);
    for (size_t i = 0; i < h->n_ds; i++) {
        const h5ds *d = &h->ds[i];
        ps[i] = (gir_h5_param){ gir_strdupf("%s", d->name), d->dtype, d->shape, d->need_grad, d->index,
                                d->has_index };
        if (!ps[i].name) {
            gir_h5_params_free(ps, i);
            return gir_nomem(err);
        }
    }
    if (h->n_ds > 1)
        qsort(ps, h->n_ds, sizeof *ps, cmp_param);
    *params = ps;
    *n = h->n_ds;
    return GIR_OK;
}

/* The dataset called name (leading '/' ignored). */
static gir_status find(gir_h5 *h, const char *name, const h5ds **out, gir_error *err)
{
    while (name[0] == '/')
        name++;
    if (!name[0])
        return gir_fail(err, GIR_E_ARGUMENT, "empty dataset name");
    if (h->soft && strcmp(name, h->soft) == 0)
        return gir_fail(err, GIR_E_UNSUPPORTED, "'/%s' is a soft or external link, which is not supported", name);
    h5ds key = { 0 };
    key.name = (char *)name;
    *out = h->n_ds ? bsearch(&key, h->ds, h->n_ds, sizeof key, cmp_ds_name) : NULL;
    if (!*out)
        return gir_fail(err, GIR_E_REFERENCE, "cannot open dataset '%s': there is no such dataset", name);
    return GIR_OK;
}

gir_status gir_h5_read_open(gir_h5 *h, const char *name, void *dst, uint64_t nbytes, gir_dtype dtype,
                            gir_error *err)
{
    const h5ds *d;
    TRY(find(h, name, &d, err));
    if (d->dtype != dtype) {
        gir_fail(err, GIR_E_DTYPE, "dataset '%s' holds %s, which cannot be read as %s", d->name,
                 gir_dtype_name(d->dtype), gir_dtype_name(dtype));
        gir_err_node(err, d->name);
        return GIR_E_DTYPE;
    }
    if (nbytes != d->nbytes) {
        char sh[128];
        gir_shape_str(&d->shape, sh, sizeof sh);
        gir_fail(err, GIR_E_SHAPE, "dataset '%s' of shape %s holds %llu bytes as %s, not %llu", d->name, sh,
                 (unsigned long long)d->nbytes, gir_dtype_name(dtype), (unsigned long long)nbytes);
        gir_err_node(err, d->name);
        return GIR_E_SHAPE;
    }
    if (nbytes == 0)
        return GIR_OK;
    if (d->offset == UINT64_MAX) {
        memset(dst, 0, (size_t)nbytes); /* never written: the zero fill value */
        return GIR_OK;
    }
    memcpy(dst, h->img + d->offset, (size_t)nbytes);
    size_t es = gir_dtype_size(dtype);
    unsigned char *b = dst;
    if (d->swap)
        for (uint64_t i = 0; i < nbytes; i += es)
            for (size_t k = 0; k < es / 2; k++) {
                unsigned char c = b[i + k];
                b[i + k] = b[i + es - 1 - k];
                b[i + es - 1 - k] = c;
            }
    if (dtype == GIR_DT_BOOL)
        for (uint64_t i = 0; i < nbytes; i++)
            b[i] = b[i] != 0;
    return GIR_OK;
}

gir_status gir_h5_raw_extent_open(gir_h5 *h, const char *name, gir_dtype dtype, uint64_t *offset, uint64_t *nbytes,
                                  bool *found, gir_error *err)
{
    *found = false;
    *offset = 0;
    *nbytes = 0;
    const h5ds *d;
    TRY(find(h, name, &d, err));
    if (d->dtype == dtype && dtype != GIR_DT_BOOL && !d->swap && d->nbytes > 0 && d->offset != UINT64_MAX) {
        *offset = d->offset;
        *nbytes = d->nbytes;
        *found = true;
    }
    return GIR_OK;
}

gir_status gir_h5_list(const void *image, size_t len, gir_h5_param **params, size_t *n, gir_error *err)
{
    *params = NULL;
    *n = 0;
    gir_h5 *h;
    TRY(gir_h5_open(image, len, &h, err));
    gir_status st = gir_h5_list_open(h, params, n, err);
    gir_h5_close(h);
    return st;
}

gir_status gir_h5_read(const void *image, size_t len, const char *name, void *dst, uint64_t nbytes,
                       gir_dtype dtype, gir_error *err)
{
    gir_h5 *h;
    TRY(gir_h5_open(image, len, &h, err));
    gir_status st = gir_h5_read_open(h, name, dst, nbytes, dtype, err);
    gir_h5_close(h);
    return st;
}
