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
#define SPLAT(c) ((v8f){ 0 } + (c))

#define VM_BODY(SUFFIX, ATTR)                                                                                  \
    ATTR static inline v8f vexp_##SUFFIX(v8f x)                                                               \
    {                                                                                                          \
        const v8f hi = { 88.72283f, 88.72283f, 88.72283f, 88.72283f, 88.72283f, 88.72283f, 88.72283f,        \
                         88.72283f };                                                                          \
        v8i big = x > hi, small = x < -87.33654f;                                                              \
        v8f xc = x;                                                                                            \
        xc = (v8f)((v8i)xc & ~(big | small)); /* clamped lanes computed at 0, fixed below */                 \
        v8f t = xc * 1.44269504088896341f;                                                                     \
        v8f nf = __builtin_convertvector(__builtin_convertvector(t + (v8f)((v8i)(v8f){ 0.5f, 0.5f, 0.5f, 0.5f, \
                                                                                         0.5f, 0.5f, 0.5f,   \
                                                                                         0.5f } |             \
                                                                         ((v8i)t & (int32_t)0x80000000)),    \
                                                                  v8i),                                        \
                                         v8f);                                                                 \
        v8f r = xc - nf * 0.693145751953125f;                                                                  \
        r = r - nf * 1.428606765330187045e-06f;                                                                \
        v8f p = SPLAT(1.0f / 5040.0f);                                                                                \
        p = p * r + 1.0f / 720.0f;                                                                             \
        p = p * r + 1.0f / 120.0f;                                                                             \
        p = p * r + 1.0f / 24.0f;                                                                              \
        p = p * r + 1.0f / 6.0f;                                                                               \
        p = p * r + 0.5f;                                                                                      \
        p = p * r + 1.0f;                                                                                      \
        p = p * r + 1.0f;                                                                                      \
        v8i n = __builtin_convertvector(nf, v8i);                                                              \
        v8f res = (v8f)((v8i)p + (n << 23));                                                                   \
        const v8f inf = { INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY };   \
        res = (v8f)(((v8i)res & ~(big | small)) | ((v8i)inf & big));                                          \
        v8i nan = x != x;                                                                                      \
        return (v8f)(((v8i)res & ~nan) | ((v8i)x & nan));                                                     \
    }                                                                                                          \
    ATTR static inline v8f vsigmoid_##SUFFIX(v8f x)                                                           \
    {                                                                                                          \
        return 1.0f / (1.0f + vexp_##SUFFIX(-x));                                                             \
    }                                                                                                          \
    ATTR static inline v8f verf_##SUFFIX(v8f x)                                                               \
    {                                                                                                          \
        v8i neg = x < 0.0f;                                                                                    \
        v8f z = (v8f)((v8i)x & 0x7fffffff);                                                                    \
        v8f t = 1.0f / (1.0f + 0.5f * z);                                                                      \
        v8f q = SPLAT(0.17087277f);                                                                                   \
        q = q * t - 0.82215223f;                                                                               \
        q = q * t + 1.48851587f;                                                                               \
        q = q * t - 1.13520398f;                                                                               \
        q = q * t + 0.27886807f;                                                                               \
        q = q * t - 0.18628806f;                                                                               \
        q = q * t + 0.09678418f;                                                                               \
        q = q * t + 0.37409196f;                                                                               \
        q = q * t + 1.00002368f;                                                                               \
        q = q * t - 1.26551223f;                                                                               \
        v8f erfc = t * vexp_##SUFFIX(q - z * z);                                                               \
        v8f big = 1.0f - erfc;                                                                                 \
        v8f z2 = z * z;                                                                                        \
        /* odd series for |x| < 0.5: 2/sqrt(pi) * sum (-1)^k x^(2k+1) / (k! (2k+1)) */                      \
        v8f s = SPLAT(-1.0f / 75600.0f);                                                                              \
        s = s * z2 + 1.0f / 9360.0f;                                                                           \
        s = s * z2 - 1.0f / 1320.0f;                                                                           \
        s = s * z2 + 1.0f / 216.0f;                                                                            \
        s = s * z2 - 1.0f / 42.0f;                                                                             \
        s = s * z2 + 1.0f / 10.0f;                                                                             \
        s = s * z2 - 1.0f / 3.0f;                                                                              \
        s = s * z2 + 1.0f;                                                                                     \
        v8f smallv = s * z * 1.12837916709551257f;                                                             \
        v8i use_small = z < 0.5f;                                                                              \
        v8f r = (v8f)(((v8i)smallv & use_small) | ((v8i)big & ~use_small));                                   \
        r = (v8f)((v8i)r ^ (neg & (int32_t)0x80000000));                                                       \
        v8i nan = x != x;                                                                                      \
        return (v8f)(((v8i)r & ~nan) | ((v8i)x & nan));                                                       \
    }                                                                                                          \
    ATTR static inline v8f vact_##SUFFIX(const rt_act *a, v8f x)                                              \
    {                                                                                                          \
        switch (a->kind) {                                                                                     \
        case RT_ACT_SIGMOID: return vsigmoid_##SUFFIX(x);                                                     \
        case RT_ACT_SILU: return x * vsigmoid_##SUFFIX(x);                                                    \
        case RT_ACT_HSWISH: {                                                                                  \
            v8f h = a->alpha * x + a->beta;                                                                    \
            h = (v8f)((v8i)h & ~(h < 0.0f)); /* NaN stays */                                                   \
            v8i one = h > 1.0f;                                                                                \
            h = (v8f)(((v8i)h & ~one) | ((v8i)SPLAT(1.0f) & one));                                             \
            return x * h;                                                                                      \
        }                                                                                                      \
        case RT_ACT_GELU: return 0.5f * x * (1.0f + verf_##SUFFIX(x * 0.70710678118654752f));                 \
        case RT_ACT_ERF: return verf_##SUFFIX(x);                                                             \
        default: {                                                                                             \
            /* NaN passes through (comparisons with NaN are false) */                                          \
            v8i below = x < a->lo, above = x > a->hi;                                                          \
            v8f lo = a->lo - (v8f){ 0 }, hi = a->hi - (v8f){ 0 };                                              \
            return (v8f)(((v8i)x & ~(below | above)) | ((v8i)lo & below) | ((v8i)hi & above));               \
        }                                                                                                      \
        }                                                                                                      \
    }                                                                                                          \
    ATTR static void act_apply_##SUFFIX(const rt_act *a, const float *x, float *y, size_t n)                  \
    {                                                                                                          \
        size_t i = 0;                                                                                          \
        for (; i + 8 <= n; i += 8) {                                                                           \
            v8f v;                                                                                             \
            memcpy(&v, x + i, sizeof v);                                                                       \
            v = vact_##SUFFIX(a, v);                                                                           \
            memcpy(y + i, &v, sizeof v);                                                                       \
        }                                                                                                      \
        if (i < n) {                                                                                           \
            v8f v = { 0 };                                                                                     \
            memcpy(&v, x + i, (n - i) * sizeof(float));                                                        \
            v = vact_##SUFFIX(a, v);                                                                           \
            memcpy(y + i, &v, (n - i) * sizeof(float));                                                        \
        }                                                                                                      \
    }

VM_BODY(generic, )
#if defined(__x86_64__) && defined(__GNUC__)
#define ACT_X86 1
VM_BODY(avx2, __attribute__((target("avx2,fma"))))
VM_BODY(avx512, __attribute__((target("avx512f,avx512dq,avx512vl,prefer-vector-width=256"))))
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
