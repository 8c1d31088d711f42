/* The reference runtime's internal interface between the executor
 * (exec.c) and the kernels (one rt_kernel per canonical op, kernels.c). */
#ifndef GIR_RUNTIME_RT_H
#define GIR_RUNTIME_RT_H

#include "core/ir.h"
#include "threads.h"

#include <math.h>
#include <string.h>

/* A tensor as the executor hands it to a kernel: dtype, shape, element
 * count, and data (NULL during prepare unless the value is constant). */
typedef struct rt_tensor {
    gir_dtype dtype;
    gir_shape shape;
    size_t numel;
    void *data;
    /* The data is in channel blocks, [N][ceil(C/16)][H][W][16], not NCHW
     * (a partial last block has 16 lanes too, those past C not read): set
     * by a Conv's or MaxPool's prepare for the one Conv or MaxPool that
     * reads it (rt_call.reader), which then reads it so; never on a value
     * anyone else can see (k_conv.c).  The buffer holds rt_blocked_bytes. */
    bool blocked;
} rt_tensor;

/* Channels an image takes in memory: c, or c rounded up to whole blocks. */
#define RT_BLOCKED_CH(c, blocked) ((blocked) ? ((c) + 15) / 16 * 16 : (c))

/* Bytes of a float [N][C][spatial] tensor in channel blocks, or 0 when the
 * size overflows. */
static inline size_t rt_blocked_bytes(const rt_tensor *t)
{
    if (t->shape.rank < 2 || t->shape.dims[1] <= 0 || t->numel == 0)
        return t->numel * sizeof(float);
    size_t c = (size_t)t->shape.dims[1], per = t->numel / c; /* N x spatial */
    size_t cp = RT_BLOCKED_CH(c, true);
    return per > SIZE_MAX / sizeof(float) / cp ? 0 : per * cp * sizeof(float);
}

/* An activation a kernel applies to its result when the executor fuses the
 * following Relu or Clip into it (kernels flagged RT_FUSE_ACT: kind
 * RT_ACT_CLAMP only) or one of the other kinds (RT_FUSE_ACTX). */
enum {
    RT_ACT_CLAMP = 0, /* Relu, Clip: [lo, hi] */
    RT_ACT_SIGMOID,
    RT_ACT_SILU,      /* Sigmoid and Mul: x * sigmoid(x) */
    RT_ACT_HSWISH,    /* HardSigmoid and Mul: x * clamp(alpha x + beta, 0, 1) */
    RT_ACT_GELU,      /* 0.5 x (1 + erf(x / sqrt 2)) */
    RT_ACT_ERF,       /* erf(x) (the unary kernel's vector path) */
};
typedef struct rt_act {
    bool on;
    float lo, hi;
    int kind;          /* RT_ACT_* */
    float alpha, beta; /* RT_ACT_HSWISH */
} rt_act;

/* y[i] = act(x[i]) over n floats (x may be y), vectorised (k_act.c). */
void rt_act_map(const rt_act *a, const float *x, float *y, size_t n);
/* The same with the code for isa (a gir_gemm_isa; AUTO or unsupported: the
 * best): tests compare every ISA's. */
void rt_act_map_isa(int isa, const rt_act *a, const float *x, float *y, size_t n);
/* In place over n floats, or rows of n floats stride apart (split over
 * th's workers); nothing when a->on is false. */
void rt_act_apply(const rt_act *a, float *y, size_t n);
void rt_act_apply_rows(const rt_act *a, gir_threads *th, float *y, size_t rows, size_t n, size_t stride);

typedef struct rt_call {
    const gir_graph *g;
    const gir_node *node;
    size_t n_in, n_out;
    rt_tensor **in;   /* NULL for an omitted optional input */
    bool *in_const;   /* input i's data is constant and already loaded */
    bool *in_done;    /* prepare sets: input i's data is not read at run (packed
                       * or folded into the state), so the executor may drop it */
    rt_tensor **out;  /* NULL for an omitted optional output */
    void *state;      /* the kernel's per-node state (kept across plans) */
    size_t scratch_bytes; /* prepare: temporary space run needs */
    void *scratch;    /* run: 64-byte aligned, scratch_bytes long */
    gir_threads *th;
    rt_act act;       /* fused activation (set before prepare) */
    /* Fused residual (RT_FUSE_ADD): the result is added to the tensor that
     * is already in out[0]'s buffer (set before prepare). */
    bool accumulate;
    /* Fused bias (RT_FUSE_BIAS): a following Add of a constant float vector
     * along the result's last axis, added to every row (set before
     * prepare; the executor checks its length after). */
    const rt_tensor *bias;
    /* The Conv (with its constant weights) or MaxPool that alone reads this
     * node's result (after the fused nodes), when the result is no graph
     * output and the session keeps no values: the node may hand the result
     * over in channel blocks (rt_tensor.blocked, rt_reader_takes_blocks).
     * Set before prepare; NULLs otherwise. */
    const gir_node *reader;
    const rt_tensor *reader_w;
    void *stream;     /* stdio FILE * for side-effect ops (print) */
    struct gir_session *session; /* for rt_warn */
} rt_call;

/* Whether c's reader (rt_call.reader) takes c's result, n x ch channels of
 * h x w, in channel blocks: a Conv in a form that reads them (k_conv.c),
 * or a 2-D MaxPool (k_pool.c). */
bool rt_reader_takes_blocks(const rt_call *c, size_t n, size_t ch, size_t h, size_t w);
/* Whether MaxPool call c (its input's shape set) reads channel blocks. */
bool rt_maxpool_reads_blocks(const rt_call *c);

/* Records a warning of this run (the library never prints; the CLI shows
 * them): "node 'NAME': MESSAGE". */
void rt_warn(rt_call *c, const char *fmt, ...) GIR_PRINTF(2, 3);

enum {
    RT_VIEW = 1u << 0,     /* out[0] is in[0]'s data reinterpreted (same bytes) */
    RT_INPLACE = 1u << 1,  /* out[0] may share in[0]'s buffer (same size) */
    RT_FUSE_ACT = 1u << 2, /* accepts a fused Relu/Clip */
    RT_FUSE_ADD = 1u << 3, /* accepts accumulate (a fused residual Add) */
    RT_SIDE_EFFECT = 1u << 4, /* runs even when nothing consumes its outputs */
    RT_FUSE_ACTX = 1u << 5, /* accepts every rt_act kind, not only clamps */
    RT_FUSE_BIAS = 1u << 6, /* accepts a fused bias (rt_call.bias) */
};

typedef struct rt_kernel {
    /* Checks attributes and input types/shapes, sets every present
     * output's dtype and shape, may build state (packed weights) and
     * request scratch.  Called once per plan, in topological order. */
    gir_status (*prepare)(rt_call *c, gir_error *err);
    gir_status (*run)(rt_call *c, gir_error *err);
    void (*release)(void *state);
    unsigned flags;
} rt_kernel;

/* The kernel for op, or NULL when the runtime has none. */
const rt_kernel *gir_rt_kernel(gir_op op);

/* Introspection for tests: bytes of intermediate buffers the current plan
 * holds, nodes fused into their producer, and values handed over in
 * channel blocks. */
struct gir_session;
size_t gir_rt_planned_bytes(const struct gir_session *s);
size_t gir_rt_fused_count(const struct gir_session *s);
size_t gir_rt_blocked_count(const struct gir_session *s);

/* ---- helpers for kernels ------------------------------------------------- */

/* Fails E_NO_KERNEL: "no kernel for OP on DTYPE". */
gir_status rt_no_kernel_dtype(const rt_call *c, gir_dtype dt, gir_error *err);
/* Sets out's dtype and shape and its element count (E_LIMIT on overflow). */
gir_status rt_set_out(rt_tensor *out, gir_dtype dt, const gir_shape *shape, gir_error *err);
/* Requires input i present with dtype dt (E_DTYPE otherwise). */
gir_status rt_want_dtype(const rt_call *c, size_t i, gir_dtype dt, gir_error *err);
/* Inputs 0 and 1 of a float32-only kernel: E_NO_KERNEL for input 0's
 * dtype (rt_no_kernel_dtype), then rt_want_dtype for input 1's. */
static inline gir_status rt_want_f32_pair(const rt_call *c, gir_error *err)
{
    if (c->in[0]->dtype != GIR_DT_F32)
        return rt_no_kernel_dtype(c, c->in[0]->dtype, err);
    return rt_want_dtype(c, 1, GIR_DT_F32, err);
}
/* Normalises axis in [-rank, rank) (E_ATTRIBUTE naming the attribute). */
gir_status rt_axis(const rt_call *c, const char *attr, int64_t axis, int rank, int *out, gir_error *err);
/* numpy broadcasting of a and b into out (E_SHAPE when incompatible). */
gir_status rt_broadcast_shape(const rt_call *c, const gir_shape *a, const gir_shape *b, gir_shape *out,
                              gir_error *err);

/* Attributes: gir_session_new validates the graph first (every attribute's
 * type against the op table, gir_op_check_node), so kernels read them
 * without checking their type again.
 * Reads an integer list attribute: *n elements at *v, or absent (-1). */
static inline ptrdiff_t rt_ints(const rt_call *c, const char *name, const int64_t **v)
{
    return gir_attrs_get_ints(&c->node->attrs, name, v);
}
static inline int64_t rt_int(const rt_call *c, const char *name, int64_t dflt)
{
    return gir_attrs_get_int(&c->node->attrs, name, dflt);
}
static inline double rt_float(const rt_call *c, const char *name, double dflt)
{
    return gir_attrs_get_float(&c->node->attrs, name, dflt);
}
static inline const char *rt_string(const rt_call *c, const char *name, const char *dflt)
{
    return gir_attrs_get_string(&c->node->attrs, name, dflt);
}
/* The node's state: c->state, else a new zeroed block of size bytes that
 * becomes c->state (the kernel's release frees it); NULL when out of memory. */
void *rt_state(rt_call *c, size_t size);
/* Defines NAME, the release function of a state of type T that owns one
 * malloc'd block, s->FIELD. */
#define RT_RELEASE_FREEING(NAME, T, FIELD) \
    static void NAME(void *p)              \
    {                                      \
        T *s = p;                          \
        if (s)                             \
            free(s->FIELD);                \
        free(s);                           \
    }

static inline size_t rt_numel(const gir_shape *s)
{
    size_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= (size_t)s->dims[i];
    return n;
}

/* Row-major strides of a shape (elements). */
static inline void rt_strides(const gir_shape *s, size_t *st)
{
    size_t acc = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        st[i] = acc;
        acc *= (size_t)s->dims[i];
    }
}

/* Product of dims [from, to). */
static inline size_t rt_dims_prod(const gir_shape *s, int from, int to)
{
    size_t n = 1;
    for (int i = from; i < to; i++)
        n *= (size_t)s->dims[i];
    return n;
}

/* At run: input 0's axis attribute (default dflt, which prepare checked)
 * normalised, with the element counts before the axis (*outer) and after
 * it (*inner). */
static inline int rt_run_axis(const rt_call *c, int64_t dflt, size_t *outer, size_t *inner)
{
    const gir_shape *s = &c->in[0]->shape;
    int axis;
    rt_axis(c, "axis", rt_int(c, "axis", dflt), s->rank, &axis, NULL);
    *outer = rt_dims_prod(s, 0, axis);
    *inner = rt_dims_prod(s, axis + 1, s->rank);
    return axis;
}

/* Copies to y, one after another, part bytes at offset off of each of the
 * outer rows of x (row bytes apart): one output of a split along an axis. */
static inline void rt_copy_parts(void *y, const void *x, size_t outer, size_t row, size_t off, size_t part)
{
    for (size_t o = 0; o < outer; o++)
        memcpy((char *)y + o * part, (const char *)x + o * row + off, part);
}

/* Runs fn(ctx, begin, end, worker) over [0, total) in aligned pieces
 * handed out to the pool's workers as they finish (gir_threads_chunks;
 * serially, as worker 0, when total < min_per_thread * 2).  worker indexes
 * per-worker scratch: an item's result must not depend on the worker or
 * the piece. */
void rt_parallel_for(gir_threads *th, size_t total, size_t align, size_t min_per_thread,
                     void (*fn)(void *ctx, size_t begin, size_t end, int worker), void *ctx);

/* A reduction of contiguous rows: row r of x (n floats) gives y[r]; flag
 * picks the kernel's variant (maximum or mean, sum or mean).  Run over the
 * rows by rt_parallel_rows. */
typedef struct rt_rows_job {
    const float *x;
    float *y;
    size_t n;
    bool flag;
} rt_rows_job;

/* fn over j's rows [0, rows), at least ~32k elements per worker. */
static inline void rt_parallel_rows(gir_threads *th, size_t rows, void (*fn)(void *ctx, size_t, size_t, int),
                                    rt_rows_job *j)
{
    rt_parallel_for(th, rows, 1, ((size_t)1 << 15) / (j->n ? j->n : 1) + 1, fn, j);
}

/* ---- window geometry (Conv, ConvTranspose, pooling) ---------------------- */

/* Spatial dims are kept as 3 (depth, height, width): a 1-D or 2-D window
 * has leading entries of size 1 with stride 1 and no padding. */
typedef struct rt_geom {
    int nsp;                  /* spatial dims of the tensor: 1..3 */
    size_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} rt_geom;

/* Reads strides, dilations (when allowed), pads and auto_pad for a window of
 * kernel k[0..nsp) over x's trailing nsp dims and computes the output size
 * (ceil_mode: pooling's rounding up). */
gir_status rt_geom_make(const rt_call *c, const gir_shape *x, const int64_t *k, int nsp, bool dilations,
                        bool ceil_mode, rt_geom *g, gir_error *err);
/* Sets out to float32 [n, ch, then the last nsp of sp] (a window's result). */
gir_status rt_set_window_out(rt_tensor *out, size_t n, size_t ch, int nsp, const size_t sp[3], gir_error *err);
/* Reads an INTS attribute of exactly n values each >= min (absent: dflt). */
gir_status rt_ints_n(const rt_call *c, const char *name, size_t n, int64_t min, int64_t dflt, int64_t *out,
                     gir_error *err);

/* ---- the kernels (defined in k_*.c, listed in kernels.c) ------------------ */

extern const rt_kernel gir_k_unary, gir_k_not, gir_k_identity, gir_k_cast, gir_k_binary, gir_k_prelu,
    gir_k_variadic, gir_k_where;
extern const rt_kernel gir_k_conv, gir_k_conv_transpose;
extern const rt_kernel gir_k_gemm, gir_k_matmul;
extern const rt_kernel gir_k_batchnorm, gir_k_instancenorm, gir_k_lrn, gir_k_softmax, gir_k_dropout;
extern const rt_kernel gir_k_maxpool, gir_k_avgpool, gir_k_globalpool;
extern const rt_kernel gir_k_reduce, gir_k_argminmax;
extern const rt_kernel gir_k_reshape, gir_k_flatten, gir_k_transpose, gir_k_squeeze, gir_k_unsqueeze,
    gir_k_concat, gir_k_split, gir_k_slice, gir_k_pad, gir_k_tile, gir_k_expand, gir_k_gather, gir_k_resize,
    gir_k_depth_to_space, gir_k_space_to_depth, gir_k_shape;
extern const rt_kernel gir_k_print, gir_k_sort, gir_k_gather_blocks, gir_k_range_fill, gir_k_squeezedet_box_decode,
    gir_k_yolov3_decode, gir_k_submean, gir_k_dot_product, gir_k_stack, gir_k_unstack;
extern const rt_kernel gir_k_rnn;

/* ---- depthwise convolution plane (k_conv.c; exposed for tests) ------------ */

typedef struct rt_dwplane {
    size_t h, w, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw;
    const size_t *ow_lo, *ow_hi; /* per kw: output columns whose input is inside */
    bool accumulate;             /* add to what y holds */
    bool act;
    float lo, hi;
} rt_dwplane;

typedef void (*rt_dwplane_fn)(const rt_dwplane *a, const float *x, const float *w, float bias, float *y);
/* The plane kernel compiled for isa (a gir_gemm_isa; AUTO = the best). */
rt_dwplane_fn rt_dwplane_select(int isa);

/* The plane and window fields rt_dwplane and rt_dwpad share (h, w, oh, ow,
 * kh, kw, sh, sw, ph, pw), from the last two axes of rt_geom *g. */
#define RT_WINDOW_FROM_GEOM(a, g)                                                                               \
    do {                                                                                                        \
        (a)->h = (g)->in[1], (a)->w = (g)->in[2], (a)->oh = (g)->out[1], (a)->ow = (g)->out[2];                 \
        (a)->kh = (g)->k[1], (a)->kw = (g)->k[2], (a)->sh = (g)->s[1], (a)->sw = (g)->s[2];                     \
        (a)->ph = (g)->pb[1], (a)->pw = (g)->pb[2];                                                             \
    } while (0)

/* The vector kernels of k_dw.c: dilation 1, horizontal stride 1 or 2, on a
 * zero-padded copy of the plane (prows x pstride, with slack). */
typedef struct rt_dwpad {
    size_t h, w, oh, ow, kh, kw, sh, sw, ph, pw;
    size_t prows, pstride; /* (oh-1)*sh + kh rows; >= (ow-1)*sw + kw + 32 */
    bool accumulate, act;
    float lo, hi;
    /* columns stored as two phases, even then odd, pstride/2 each (a
     * multiple of 8 and >= ow + kw/2): what the convolution kernels read
     * when sw is 2; max pooling reads the columns in order */
    bool split;
} rt_dwpad;
typedef void (*rt_dwpad_fn)(const rt_dwpad *a, const float *p, const float *w, float bias, float *y);
size_t rt_dwpad_floats(const rt_dwpad *a);
/* a's plane and window from the last two axes of a window geometry (prows
 * too; pstride, split and the rest are left zero). */
void rt_dwpad_from_geom(rt_dwpad *a, const rt_geom *g);
/* Copies plane x into p, pad around it (0 for convolution, -inf for max
 * pooling). */
void rt_dwpad_fill(const rt_dwpad *a, const float *x, float *p, float pad);
/* NULL when isa (AUTO = the best) has no such kernel. */
rt_dwpad_fn rt_dwpad_select(int isa);
/* For 3x3 and 5x5 windows at stride 1: a kernel that reads the plane
 * itself (p = x, unpadded; prows, pstride and split unused), or NULL. */
rt_dwpad_fn rt_dwdirect_select(int isa, const rt_dwpad *a);
/* Max pooling, 2-D, dilation 1, horizontal stride 1 or 2, from plane x
 * itself (a's plane, window and pstride; prows and split unused), with row t
 * of pstride floats to work in. */
typedef void (*rt_maxpool_fn)(const rt_dwpad *a, const float *x, float *t, float *y);
rt_maxpool_fn rt_maxpool_select(int isa);

/* ---- Winograd F(2x2, 3x3) and F(4x4, 3x3) for 3x3 stride-1 convolutions (k_winograd.c) ---- */

#include "gemm.h"

/* Memory-bound loops (binary arithmetic, unary math, BatchNormalization,
 * pooling, sums over a row) compiled for AVX-512 and AVX2 as well as the
 * baseline, the copy picked when the library is loaded: the baseline's
 * SSE2 moves 16 bytes per instruction, which leaves them several times
 * slower than the cache could feed them. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define RT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef RT_CLONES
#define RT_CLONES
#endif

/* One kernel compiled per ISA: the one for isa (gir_gemm_isa_resolve).  Off
 * x86 the AVX names are dropped unread, so they need not exist there. */
#if defined(__x86_64__) && defined(__GNUC__)
#define RT_ISA_PICK(isa, generic, avx2, avx512)                                                                 \
    (gir_gemm_isa_resolve(isa) == GIR_GEMM_AVX512 ? (avx512)                                                    \
     : gir_gemm_isa_resolve(isa) == GIR_GEMM_AVX2 ? (avx2)                                                      \
                                                  : (generic))
#else
#define RT_ISA_PICK(isa, generic, avx2, avx512) ((void)(isa), (generic))
#endif

typedef struct rt_wino {
    size_t C, M, H, W, OH, OW, ph, pw;
    size_t e;       /* outputs a tile down and across: 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3)) */
    int nx;         /* products: (e + 2)^2, 16 or 36 */
    size_t th, tw;  /* tiles down and across */
    size_t chunk;   /* tiles per pass with one worker (wino_chunk: with several) */
    int isa;        /* gir_gemm_isa of the transforms (AUTO: the best; tests set others) */
    gir_gemm_packed u[36]; /* transformed weights, M x C each (nx of them) */
} rt_wino;

/* Whether the transform pays for a C -> M convolution of OH x OW outputs. */
bool rt_wino_applies(size_t C, size_t M, size_t OH, size_t OW);
/* The tile (e of rt_wino_new) for OH x OW outputs: 4 on large maps, else 2
 * (whatever the number of workers: the results do not depend on it). */
size_t rt_wino_tile(size_t OH, size_t OW);
/* Transforms and packs weights wt (M x C x 3 x 3) for an H x W input with
 * pads ph (top), pw (left) and output OH x OW, in tiles of e x e outputs
 * (2 or 4). */
gir_status rt_wino_new(const float *wt, size_t M, size_t C, size_t H, size_t W, size_t OH, size_t OW, size_t ph,
                       size_t pw, size_t e, rt_wino **out, gir_error *err);
void rt_wino_free(rt_wino *w);
/* Scratch for a run with this many workers. */
size_t rt_wino_scratch_floats(const rt_wino *w, int workers);
/* One image: x is C x H x W, y is M x OH x OW (added to when accumulate). */
void rt_wino_run(const rt_wino *w, const float *x, const float *bias, float *y, const rt_act *act, bool accumulate,
                 float *scratch, gir_threads *th);

#endif
