/* Vectorised float math (exp, sigmoid, erf) and the activations the
 * executor fuses into the producing kernel (rt_act_apply): Relu/Clip,
 * Sigmoid, SiLU (x * sigmoid(x)), HardSwish (x * HardSigmoid(x)) and GELU
 * (0.5 x (1 + erf(x / sqrt 2))).
 *
 * exp: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two parts so n ln2 is
 * exact), e^r by its degree-7 Taylor polynomial (truncation below 1e-8
 * relative), scaled by 2^n through the exponent bits: a few ulp over
 * [-87.3, 88.7] (Sigmoid built on it stays within 3 ulp, test_runtime
 * checks), 0 below, inf above, NaN kept.  erf: Abramowitz-Stegun 7.1.26-style rational forms are not
 * accurate enough, so it uses erf(x) = 1 - erfc(x) with erfc(x) =
 * t exp(-x^2 + P(t)), t = 1 / (1 + x/2) (the Numerical Recipes erfcc
 * Chebyshev fit, fractional error below 1.2e-7), and the odd Taylor
 * series x (2/sqrt(pi)) (1 - x^2/3 + x^4/10 - ...) for |x| < 0.5 where
 * 1 - erfc would cancel.  Each is compiled for AVX-512F, AVX2+FMA and
 * portable C (GCC vector extensions), chosen at run time. */
#include "gemm.h"
#include "rt.h"

#include <stdint.h>

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

/* 1/d for d in [1, 2] (and NaN): a division, or on AVX-512 the 14-bit
 * estimate and one Newton step (relative error ~2^-28 before rounding). */
static inline v8f recip_generic(v8f d)
{
    return 1.0f / d;
}
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2,fma"))) static inline v8f recip_avx2(v8f d)
{
    return 1.0f / d;
}
__attribute__((target("avx512f,avx512dq"))) static inline v16f recip_avx512(v16f d)
{
    v16f r = (v16f)_mm512_rcp14_ps((__m512)d);
    return r * (2.0f - d * r);
}
#endif

/* One set of functions per vector type VF (lanes of float) and VI (int32
 * lanes of the same width). */
#define VM_BODY(SUFFIX, ATTR, VF, VI)                                                                         \
    ATTR static inline VF vexp_##SUFFIX(VF x)                                                                 \
    {                                                                                                          \
        const VF zero = { 0 };                                                                                 \
        VI big = x > 88.72283f, small = x < -87.33654f;                                                        \
        VF xc = (VF)((VI)x & ~(big | small)); /* clamped lanes computed at 0, fixed below */                  \
        VF t = xc * 1.44269504088896341f;                                                                      \
        VF half = (VF)((VI)(zero + 0.5f) | ((VI)t & (int32_t)0x80000000)); /* +-0.5: round half away */     \
        VF nf = __builtin_convertvector(__builtin_convertvector(t + half, VI), VF);                            \
        VF r = xc - nf * 0.693145751953125f;                                                                   \
        r = r - nf * 1.428606765330187045e-06f;                                                                \
        VF p = zero + 1.0f / 5040.0f;                                                                          \
        p = p * r + 1.0f / 720.0f;                                                                             \
        p = p * r + 1.0f / 120.0f;                                                                             \
        p = p * r + 1.0f / 24.0f;                                                                              \
        p = p * r + 1.0f / 6.0f;                                                                               \
        p = p * r + 0.5f;                                                                                      \
        p = p * r + 1.0f;                                                                                      \
        p = p * r + 1.0f;                                                                                      \
        VI n = __builtin_convertvector(nf, VI);                                                                \
        VF res = (VF)((VI)p + (n << 23));                                                                      \
        res = (VF)(((VI)res & ~(big | small)) | ((VI)(zero + INFINITY) & big));                               \
        VI nan = x != x;                                                                                       \
        return (VF)(((VI)res & ~nan) | ((VI)x & nan));                                                        \
    }                                                                                                          \
    /* t = e^-|x| in (0, 1]: 1/(1 + t) for x >= 0, t/(1 + t) below, the      \
     * divisor in [1, 2] (a reciprocal estimate refined once is exact enough) */ \
    ATTR static inline VF vsigmoid_##SUFFIX(VF x)                                                             \
    {                                                                                                          \
        VF t = vexp_##SUFFIX((VF)((VI)x | (int32_t)0x80000000));                                               \
        VI pos = x >= 0.0f;                                                                                    \
        VF num = (VF)(((VI)((VF){ 0 } + 1.0f) & pos) | ((VI)t & ~pos));                                       \
        return num * recip_##SUFFIX(1.0f + t);                                                                 \
    }                                                                                                          \
    ATTR static inline VF verf_##SUFFIX(VF x)                                                                 \
    {                                                                                                          \
        const VF zero = { 0 };                                                                                 \
        VI neg = x < 0.0f;                                                                                     \
        VF z = (VF)((VI)x & 0x7fffffff);                                                                       \
        VF t = 1.0f / (1.0f + 0.5f * z);                                                                       \
        VF q = zero + 0.17087277f;                                                                             \
        q = q * t - 0.82215223f;                                                                               \
        q = q * t + 1.48851587f;                                                                               \
        q = q * t - 1.13520398f;                                                                               \
        q = q * t + 0.27886807f;                                                                               \
        q = q * t - 0.18628806f;                                                                               \
        q = q * t + 0.09678418f;                                                                               \
        q = q * t + 0.37409196f;                                                                               \
        q = q * t + 1.00002368f;                                                                               \
        q = q * t - 1.26551223f;                                                                               \
        VF erfc = t * vexp_##SUFFIX(q - z * z);                                                                \
        VF big = 1.0f - erfc;                                                                                  \
        VF z2 = z * z;                                                                                         \
        /* odd series for |x| < 0.5: 2/sqrt(pi) * sum (-1)^k x^(2k+1) / (k! (2k+1)) */                      \
        VF s = zero - 1.0f / 75600.0f;                                                                         \
        s = s * z2 + 1.0f / 9360.0f;                                                                           \
        s = s * z2 - 1.0f / 1320.0f;                                                                           \
        s = s * z2 + 1.0f / 216.0f;                                                                            \
        s = s * z2 - 1.0f / 42.0f;                                                                             \
        s = s * z2 + 1.0f / 10.0f;                                                                             \
        s = s * z2 - 1.0f / 3.0f;                                                                              \
        s = s * z2 + 1.0f;                                                                                     \
        VF smallv = s * z * 1.12837916709551257f;                                                              \
        VI use_small = z < 0.5f;                                                                               \
        VF r = (VF)(((VI)smallv & use_small) | ((VI)big & ~use_small));                                        \
        r = (VF)((VI)r ^ (neg & (int32_t)0x80000000));                                                         \
        VI nan = x != x;                                                                                       \
        return (VF)(((VI)r & ~nan) | ((VI)x & nan));                                                          \
    }                                                                                                          \
    ATTR static inline VF vhswish_##SUFFIX(VF x, float alpha, float beta)                                     \
    {                                                                                                          \
        VF h = alpha * x + beta;                                                                               \
        h = (VF)((VI)h & ~(h < 0.0f)); /* NaN stays */                                                        \
        VI one = h > 1.0f;                                                                                     \
        h = (VF)(((VI)h & ~one) | ((VI)((VF){ 0 } + 1.0f) & one));                                            \
        return x * h;                                                                                          \
    }                                                                                                          \
    ATTR static inline VF vclamp_##SUFFIX(VF x, float lo, float hi)                                           \
    {                                                                                                          \
        /* NaN passes through (comparisons with NaN are false) */                                              \
        VI below = x < lo, above = x > hi;                                                                     \
        VF vlo = (VF){ 0 } + lo, vhi = (VF){ 0 } + hi;                                                         \
        return (VF)(((VI)x & ~(below | above)) | ((VI)vlo & below) | ((VI)vhi & above));                     \
    }                                                                                                          \
    /* the kind is chosen once per call; each loop is over whole vectors and \
     * a zero-padded tail */                                                                                   \
    ATTR static void act_apply_##SUFFIX(const rt_act *a, const float *x, float *y, size_t n)                  \
    {                                                                                                          \
        const size_t L = sizeof(VF) / sizeof(float);                                                           \
        const float al = a->alpha, be = a->beta, lo = a->lo, hi = a->hi;                                       \
        switch (a->kind) {                                                                                     \
        case RT_ACT_SIGMOID: ACT_LOOP(VF, vsigmoid_##SUFFIX(v)); break;                                       \
        case RT_ACT_SILU: ACT_LOOP(VF, v * vsigmoid_##SUFFIX(v)); break;                                      \
        case RT_ACT_HSWISH: ACT_LOOP(VF, vhswish_##SUFFIX(v, al, be)); break;                                 \
        case RT_ACT_GELU: ACT_LOOP(VF, 0.5f * v * (1.0f + verf_##SUFFIX(v * 0.70710678118654752f))); break;   \
        case RT_ACT_ERF: ACT_LOOP(VF, verf_##SUFFIX(v)); break;                                               \
        default: ACT_LOOP(VF, vclamp_##SUFFIX(v, lo, hi)); break;                                             \
        }                                                                                                      \
    }

#define ACT_LOOP(VF, EXPR)                                                                                     \
    do {                                                                                                       \
        size_t i = 0;                                                                                          \
        for (; i + L <= n; i += L) {                                                                           \
            VF v;                                                                                              \
            memcpy(&v, x + i, sizeof v);                                                                       \
            v = (EXPR);                                                                                        \
            memcpy(y + i, &v, sizeof v);                                                                       \
        }                                                                                                      \
        if (i < n) {                                                                                           \
            VF v = { 0 };                                                                                      \
            memcpy(&v, x + i, (n - i) * sizeof(float));                                                        \
            v = (EXPR);                                                                                        \
            memcpy(y + i, &v, (n - i) * sizeof(float));                                                        \
        }                                                                                                      \
    } while (0)

VM_BODY(generic, , v8f, v8i)
#if defined(__x86_64__) && defined(__GNUC__)
#define ACT_X86 1
VM_BODY(avx2, __attribute__((target("avx2,fma"))), v8f, v8i)
VM_BODY(avx512, __attribute__((target("avx512f,avx512dq"))), v16f, v16i)
#endif

typedef void (*act_fn)(const rt_act *a, const float *x, float *y, size_t n);

static act_fn act_select(void)
{
#ifdef ACT_X86
    gir_gemm_isa isa = gir_gemm_isa_best();
    if (isa == GIR_GEMM_AVX512)
        return act_apply_avx512;
    if (isa == GIR_GEMM_AVX2)
        return act_apply_avx2;
#endif
    return act_apply_generic;
}

void rt_act_map(const rt_act *a, const float *x, float *y, size_t n)
{
    static act_fn fn;
    act_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (!f) {
        f = act_select();
        __atomic_store_n(&fn, f, __ATOMIC_RELAXED);
    }
    f(a, x, y, n);
}

void rt_act_apply(const rt_act *a, float *y, size_t n)
{
    if (a->on)
        rt_act_map(a, y, y, n);
}

typedef struct rows_job {
    const rt_act *a;
    float *y;
    size_t n, stride;
} rows_job;

static void rows_part(void *ctx, size_t r0, size_t r1, int worker)
{
    (void)worker;
    const rows_job *j = ctx;
    for (size_t r = r0; r < r1; r++)
        rt_act_map(j->a, j->y + r * j->stride, j->y + r * j->stride, j->n);
}

void rt_act_apply_rows(const rt_act *a, gir_threads *th, float *y, size_t rows, size_t n, size_t stride)
{
    if (!a->on || rows == 0 || n == 0)
        return;
    rows_job j = { a, y, n, stride };
    /* at least ~16k elements per worker, else the hand-off costs more */
    size_t min_rows = ((size_t)1 << 14) / n + 1;
    rt_parallel_for(th, rows, 1, min_rows, rows_part, &j);
}
