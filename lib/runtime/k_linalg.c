/* Gemm and MatMul through gir_sgemm. */
#include "gemm.h"
#include "rt.h"

#include <stdlib.h>

/* ---- Gemm ------------------------------------------------------------------ */

typedef enum gemm_cmode { CM_NONE, CM_BIAS_N, CM_BIAS_M, CM_FILL } gemm_cmode;

typedef struct gemmk_state {
    size_t M, N, K;
    bool ta, tb;
    float alpha, beta;
    gemm_cmode cmode;
} gemmk_state;

static gir_status gemm_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *a = c->in[0], *b = c->in[1], *cc = c->n_in > 2 ? c->in[2] : NULL;
    char sa[96], sb[96];
    TRY(rt_want_f32_pair(c, err));
    if (a->shape.rank != 2 || b->shape.rank != 2)
        return gir_fail(err, GIR_E_SHAPE, "Gemm operands %s and %s are not matrices",
                        gir_shape_str(&a->shape, sa, sizeof sa), gir_shape_str(&b->shape, sb, sizeof sb));
    bool ta = rt_int(c, "transA", 0) != 0, tb = rt_int(c, "transB", 0) != 0;
    size_t M = (size_t)a->shape.dims[ta ? 1 : 0], K = (size_t)a->shape.dims[ta ? 0 : 1];
    size_t Kb = (size_t)b->shape.dims[tb ? 1 : 0], N = (size_t)b->shape.dims[tb ? 0 : 1];
    if (K != Kb)
        return gir_fail(err, GIR_E_SHAPE, "Gemm inner dimensions differ: %s%s x %s%s",
                        gir_shape_str(&a->shape, sa, sizeof sa), ta ? "^T" : "", gir_shape_str(&b->shape, sb, sizeof sb),
                        tb ? "^T" : "");
    gir_shape os = { 2, { (int64_t)M, (int64_t)N } };
    gemm_cmode cm = CM_NONE;
    float beta = (float)rt_float(c, "beta", 1.0);
    if (cc) {
        TRY(rt_want_dtype(c, 2, GIR_DT_F32, err));
        gir_shape bs;
        TRY(rt_broadcast_shape(c, &os, &cc->shape, &bs, err));
        if (!gir_shape_equal(&bs, &os))
            return gir_fail(err, GIR_E_SHAPE, "Gemm C %s does not broadcast to [%zu,%zu]",
                            gir_shape_str(&cc->shape, sa, sizeof sa), M, N);
        bool is_n = (cc->shape.rank == 1 && (size_t)cc->shape.dims[0] == N && N != 1) ||
                    (cc->shape.rank == 2 && cc->shape.dims[0] == 1 && (size_t)cc->shape.dims[1] == N && N != 1);
        bool is_m = cc->shape.rank == 2 && cc->shape.dims[1] == 1 && (size_t)cc->shape.dims[0] == M && M != 1;
        cm = beta == 1.0f && is_n ? CM_BIAS_N : beta == 1.0f && is_m ? CM_BIAS_M : CM_FILL;
    }
    gemmk_state *s = rt_state(c, sizeof *s);
    if (!s)
        return gir_nomem(err);
    *s = (gemmk_state){ M, N, K, ta, tb, (float)rt_float(c, "alpha", 1.0), beta, cm };
    return rt_set_out(c->out[0], GIR_DT_F32, &os, err);
}

static void fill_broadcast(float *y, size_t M, size_t N, const rt_tensor *cc)
{
    const float *p = cc->data;
    size_t rows = 1, cols = 1;
    if (cc->shape.rank == 2) {
        rows = (size_t)cc->shape.dims[0];
        cols = (size_t)cc->shape.dims[1];
    } else if (cc->shape.rank == 1) {
        cols = (size_t)cc->shape.dims[0];
    }
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++)
            y[i * N + j] = p[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
}

static gir_status gemm_run(rt_call *c, gir_error *err)
{
    (void)err;
    const gemmk_state *s = c->state;
    const rt_tensor *cc = c->n_in > 2 ? c->in[2] : NULL;
    float *y = c->out[0]->data;
    gir_gemm_args a = { 0 };
    a.m = s->M;
    a.n = s->N;
    a.k = s->K;
    a.alpha = s->alpha;
    a.a = c->in[0]->data;
    a.lda = (size_t)c->in[0]->shape.dims[1];
    a.trans_a = s->ta;
    a.b = c->in[1]->data;
    a.ldb = (size_t)c->in[1]->shape.dims[1];
    a.trans_b = s->tb;
    a.c = y;
    a.ldc = s->N;
    a.clamp = c->act.on;
    a.lo = c->act.lo;
    a.hi = c->act.hi;
    if (s->cmode == CM_BIAS_N)
        a.bias_n = cc->data;
    else if (s->cmode == CM_BIAS_M)
        a.bias_m = cc->data;
    else if (s->cmode == CM_FILL && s->beta != 0.0f) {
        fill_broadcast(y, s->M, s->N, cc);
        a.beta = s->beta;
    }
    gir_sgemm(&a, c->th);
    return GIR_OK;
}

const rt_kernel gir_k_gemm = { gemm_prepare, gemm_run, free, RT_FUSE_ACT };

/* ---- MatMul (numpy semantics) ---------------------------------------------------- */

typedef struct matmul_state {
    size_t M, N, K, batch;
    bool a_vec, b_vec;
    gir_shape bshape;      /* broadcast batch dims */
    int brank;
    size_t ast[GIR_MAX_RANK], bst[GIR_MAX_RANK]; /* batch strides (matrices) */
    bool flatten;          /* B is one matrix: A's batch folds into M */
    float *packed_b;       /* a constant B matrix packed once (K x N in bl) */
    size_t pk, pn;
    gir_gemm_blayout bl;
} matmul_state;

RT_RELEASE_FREEING(matmul_release, matmul_state, packed_b)

static gir_status matmul_prepare(rt_call *c, gir_error *err)
{
    const rt_tensor *a = c->in[0], *b = c->in[1];
    char sa[96], sb[96];
    TRY(rt_want_f32_pair(c, err));
    if (a->shape.rank < 1 || b->shape.rank < 1)
        return gir_fail(err, GIR_E_SHAPE, "MatMul operands must have rank 1 or more");
    gir_shape as = a->shape, bs = b->shape;
    bool a_vec = as.rank == 1, b_vec = bs.rank == 1;
    if (a_vec) { /* [K] -> [1, K] */
        as.rank = 2;
        as.dims[1] = as.dims[0];
        as.dims[0] = 1;
    }
    if (b_vec) { /* [K] -> [K, 1] */
        bs.rank = 2;
        bs.dims[1] = 1;
    }
    size_t M = (size_t)as.dims[as.rank - 2], K = (size_t)as.dims[as.rank - 1];
    size_t Kb = (size_t)bs.dims[bs.rank - 2], N = (size_t)bs.dims[bs.rank - 1];
    if (K != Kb)
        return gir_fail(err, GIR_E_SHAPE, "MatMul inner dimensions differ: %s x %s",
                        gir_shape_str(&a->shape, sa, sizeof sa), gir_shape_str(&b->shape, sb, sizeof sb));
    gir_shape ab = { as.rank - 2, { 0 } }, bb = { bs.rank - 2, { 0 } }, batch;
    for (int i = 0; i < ab.rank; i++)
        ab.dims[i] = as.dims[i];
    for (int i = 0; i < bb.rank; i++)
        bb.dims[i] = bs.dims[i];
    TRY(rt_broadcast_shape(c, &ab, &bb, &batch, err));
    matmul_state *s = rt_state(c, sizeof *s);
    if (!s)
        return gir_nomem(err);
    /* this plan's geometry; a packed B carries over (see below) */
    *s = (matmul_state){ .M = M, .N = N, .K = K, .batch = rt_numel(&batch), .a_vec = a_vec, .b_vec = b_vec,
                         .bshape = batch, .brank = batch.rank, .packed_b = s->packed_b, .pk = s->pk, .pn = s->pn,
                         .bl = s->bl };
    /* matrix strides of each operand along the broadcast batch dims */
    for (int k = 0; k < 2; k++) {
        const gir_shape *src = k == 0 ? &ab : &bb;
        size_t *st_out = k == 0 ? s->ast : s->bst;
        size_t acc = 1;
        for (int i = batch.rank - 1; i >= 0; i--) {
            int si = i - (batch.rank - src->rank);
            size_t d = si >= 0 ? (size_t)src->dims[si] : 1;
            st_out[i] = d == 1 ? 0 : acc;
            acc *= d;
        }
    }
    s->flatten = rt_numel(&bb) == 1 && rt_numel(&ab) == s->batch;
    /* One constant B matrix (weights): packed once, replacing it. */
    /* (kept across plans while K and N stay: constants do not change) */
    if (c->in_const[1] && b->data && !b_vec && rt_numel(&bb) == 1) {
        if (!s->packed_b || s->pk != K || s->pn != N) {
            free(s->packed_b);
            s->packed_b = NULL;
            s->bl = gir_gemm_b_layout(GIR_GEMM_AUTO);
            size_t floats = gir_gemm_packed_b_floats(&s->bl, K, N);
            if (floats == 0 && K > 0 && N > 0)
                return gir_fail(err, GIR_E_LIMIT, "MatMul weights of %zu x %zu are too large to pack", K, N);
            if (posix_memalign((void **)&s->packed_b, 64, (floats ? floats : 1) * sizeof(float)) != 0) {
                s->packed_b = NULL;
                return gir_nomem(err);
            }
            gir_gemm_pack_b(&s->bl, false, K, N, b->data, N, s->packed_b);
            s->pk = K;
            s->pn = N;
        }
        c->in_done[1] = true;
    } else {
        free(s->packed_b);
        s->packed_b = NULL;
    }
    gir_shape os;
    os.rank = 0;
    for (int i = 0; i < batch.rank; i++)
        os.dims[os.rank++] = batch.dims[i];
    if (!a_vec)
        os.dims[os.rank++] = (int64_t)M;
    if (!b_vec)
        os.dims[os.rank++] = (int64_t)N;
    return rt_set_out(c->out[0], GIR_DT_F32, &os, err);
}

/* One product of the batch: y (m x N) = a (m x K) * B, with the fused bias
 * and activation; a non-clamp activation is applied to blocks of rows
 * while they are in cache. */
static void matmul_one(rt_call *c, const matmul_state *s, size_t m, const float *A, const float *B, float *Y)
{
    gir_gemm_args a = { 0 };
    a.n = s->N;
    a.k = s->K;
    a.alpha = 1.0f;
    a.lda = s->K;
    a.b = B;
    a.ldb = s->N;
    a.ldc = s->N;
    if (s->packed_b) {
        a.packed_b = s->packed_b;
        a.isa = s->bl.isa;
    }
    /* the result's last axis: N, or M when B is a vector (dropped) */
    const float *bias = c->bias ? c->bias->data : NULL;
    if (!s->b_vec)
        a.bias_n = bias;
    a.clamp = c->act.on && c->act.kind == RT_ACT_CLAMP;
    a.lo = c->act.lo;
    a.hi = c->act.hi;
    bool post_act = c->act.on && !a.clamp;
    size_t rows = m;
    if (post_act) {
        rows = ((size_t)1 << 16) / (s->N ? s->N : 1);
        if (rows < 16)
            rows = 16;
    }
    for (size_t r0 = 0; r0 < m; r0 += rows) {
        a.m = m - r0 < rows ? m - r0 : rows;
        a.a = A + r0 * s->K;
        a.c = Y + r0 * s->N;
        if (s->b_vec && bias)
            a.bias_m = bias + r0;
        gir_sgemm(&a, c->th);
        if (post_act)
            rt_act_apply_rows(&c->act, c->th, a.c, a.m, s->N, s->N);
    }
}

static gir_status matmul_run(rt_call *c, gir_error *err)
{
    (void)err;
    const matmul_state *s = c->state;
    const float *A = c->in[0]->data, *B = c->in[1]->data;
    float *Y = c->out[0]->data;
    if (s->flatten && !(s->b_vec && c->bias)) { /* (a bias along M repeats per matrix) */
        matmul_one(c, s, s->M * s->batch, A, B, Y);
        return GIR_OK;
    }
    for (size_t bi = 0; bi < s->batch; bi++) {
        size_t r = bi, ao = 0, bo = 0;
        for (int i = s->brank - 1; i >= 0; i--) {
            size_t idx = r % (size_t)s->bshape.dims[i];
            r /= (size_t)s->bshape.dims[i];
            ao += idx * s->ast[i];
            bo += idx * s->bst[i];
        }
        matmul_one(c, s, s->M, A + ao * s->M * s->K, B + bo * s->K * s->N, Y + bi * s->M * s->N);
    }
    return GIR_OK;
}

/* A fused bias is a vector along the last axis (the executor checks its
 * length); activations as for Conv. */
const rt_kernel gir_k_matmul = { matmul_prepare, matmul_run, matmul_release,
                                  RT_FUSE_ACT | RT_FUSE_ACTX | RT_FUSE_BIAS };
