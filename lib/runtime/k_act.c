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
 * 1 - erfc would cancel.  GELU is x Phi(x) with Phi from erfc alone (1 -
 * erfc(z)/2 or erfc(z)/2, z = |x|/sqrt 2): Phi stays near 1/2 where erf
 * is small, so it needs no series (and no 1 + erf that cancels for
 * negative x); ConvNeXt's GELU over 16K floats: 17.5 -> 12.9 ns a
 * vector.  Each is compiled for AVX-512F, AVX2+FMA and portable C (GCC
 * vector extensions), chosen at run time. */
#include "gemm.h"
#include "rt.h"

#include <stdint.h>

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

/* 1/d for d in [1, 2] (and NaN). */
static inline v8f recip_generic(v8f d)
{
    return 1.0f / d;
}

/* One set of functions per vector type VF (lanes of float) and VI (int32
 * lanes of the same width). */
#define VM_MATH(SUFFIX, ATTR, VF, VI)                                                                         \
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
    /* erfc(z) for z >= 0 (NaN kept): t exp(-z^2 + Q(t)), t = 1/(1 + z/2) */ \
    ATTR static inline VF verfc_##SUFFIX(VF z)                                                                \
    {                                                                                                          \
        const VF zero = { 0 };                                                                                 \
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
        return t * vexp_##SUFFIX(q - z * z);                                                                   \
    }                                                                                                          \
    ATTR static inline VF verf_##SUFFIX(VF x)                                                                 \
    {                                                                                                          \
        const VF zero = { 0 };                                                                                 \
        VI neg = x < 0.0f;                                                                                     \
        VF z = (VF)((VI)x & 0x7fffffff);                                                                       \
        VF big = 1.0f - verfc_##SUFFIX(z);                                                                     \
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
    /* x Phi(x), Phi(x) = 1 - erfc(z)/2 for x >= 0, erfc(z)/2 below, z =      \
     * |x|/sqrt 2: erfc alone, no series (Phi is near 1/2 where erf is small) */ \
    ATTR static inline VF vgelu_##SUFFIX(VF x)                                                                \
    {                                                                                                          \
        VF z = (VF)((VI)x & 0x7fffffff) * 0.70710678118654752f;                                                \
        VF h = 0.5f * verfc_##SUFFIX(z);                                                                       \
        VI pos = x >= 0.0f;                                                                                    \
        VF phi = (VF)(((VI)(1.0f - h) & pos) | ((VI)h & ~pos));                                                \
        return x * phi;                                                                                        \
    }

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ACT_X86 1

/* The same functions written for AVX2+FMA and AVX-512F with fused
 * multiply-adds (ISO C mode contracts nothing by itself) and, on AVX-512,
 * roundscale and scalef: scalef(p, n) = p 2^n saturates to infinity and
 * goes through the subnormals to 0 by itself, so no lane needs fixing up
 * after it.  Same range reduction and polynomial as above. */
/* The polynomials, as functions of one ISA (FMA: its fused multiply-add,
 * SET1: its broadcast). */
#define X86_POLYS(SUF, ATTR, VF, FMA, SET1)                                                                    \
    /* e^r for |r| <= ln2/2: degree-7 Taylor */                                                               \
    ATTR static inline VF exp_poly_##SUF(VF r)                                                                 \
    {                                                                                                          \
        VF p = FMA(SET1(1.0f / 5040.0f), r, SET1(1.0f / 720.0f));                                              \
        p = FMA(p, r, SET1(1.0f / 120.0f));                                                                    \
        p = FMA(p, r, SET1(1.0f / 24.0f));                                                                     \
        p = FMA(p, r, SET1(1.0f / 6.0f));                                                                      \
        p = FMA(p, r, SET1(0.5f));                                                                             \
        p = FMA(p, r, SET1(1.0f));                                                                             \
        return FMA(p, r, SET1(1.0f));                                                                          \
    }                                                                                                          \
    /* erfc(z) = t exp(-z^2 + Q(t)) with t = 1 / (1 + z/2) */                                                 \
    ATTR static inline VF erfc_q_##SUF(VF t)                                                                   \
    {                                                                                                          \
        VF q = FMA(SET1(0.17087277f), t, SET1(-0.82215223f));                                                  \
        q = FMA(q, t, SET1(1.48851587f));                                                                      \
        q = FMA(q, t, SET1(-1.13520398f));                                                                     \
        q = FMA(q, t, SET1(0.27886807f));                                                                      \
        q = FMA(q, t, SET1(-0.18628806f));                                                                     \
        q = FMA(q, t, SET1(0.09678418f));                                                                      \
        q = FMA(q, t, SET1(0.37409196f));                                                                      \
        q = FMA(q, t, SET1(1.00002368f));                                                                      \
        return FMA(q, t, SET1(-1.26551223f));                                                                  \
    }                                                                                                          \
    /* erf(z) / (z 2/sqrt(pi)) for |z| < 0.5, in z^2 */                                                       \
    ATTR static inline VF erf_series_##SUF(VF z2)                                                              \
    {                                                                                                          \
        VF s = FMA(SET1(-1.0f / 75600.0f), z2, SET1(1.0f / 9360.0f));                                          \
        s = FMA(s, z2, SET1(-1.0f / 1320.0f));                                                                 \
        s = FMA(s, z2, SET1(1.0f / 216.0f));                                                                   \
        s = FMA(s, z2, SET1(-1.0f / 42.0f));                                                                   \
        s = FMA(s, z2, SET1(1.0f / 10.0f));                                                                    \
        s = FMA(s, z2, SET1(-1.0f / 3.0f));                                                                    \
        return FMA(s, z2, SET1(1.0f));                                                                         \
    }

X86_POLYS(avx2, __attribute__((target("avx2,fma"))), __m256, _mm256_fmadd_ps, _mm256_set1_ps)
X86_POLYS(avx512, __attribute__((target("avx512f"))), __m512, _mm512_fmadd_ps, _mm512_set1_ps)

#define SET1 _mm256_set1_ps
#define A2 __attribute__((target("avx2,fma")))
/* e^x: below -87.34 0, above 88.72 infinity, NaN kept */
A2 static inline __m256 exp_avx2(__m256 x)
{
    __m256 small = _mm256_cmp_ps(x, SET1(-87.33654f), _CMP_LT_OQ);
    __m256 big = _mm256_cmp_ps(x, SET1(88.72283f), _CMP_GT_OQ);
    /* max(lo, x) and min(hi, x) give x when it is NaN */
    __m256 xc = _mm256_min_ps(SET1(88.72283f), _mm256_max_ps(SET1(-87.33654f), x));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, SET1(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, SET1(0.693145751953125f), xc);
    r = _mm256_fnmadd_ps(n, SET1(1.428606765330187045e-06f), r);
    __m256 p = exp_poly_avx2(r);
    __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
    __m256 res = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), e));
    res = _mm256_andnot_ps(small, res);
    return _mm256_blendv_ps(res, SET1(INFINITY), big);
}
/* 1 / (1 + e^-|x|), times e^-|x| below 0: the divisor is in [1, 2] */
A2 static inline __m256 sigmoid_avx2(__m256 x)
{
    __m256 t = exp_avx2(_mm256_or_ps(x, SET1(-0.0f)));
    __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NGE_UQ); /* below 0 or NaN */
    __m256 num = _mm256_blendv_ps(SET1(1.0f), t, neg);
    return _mm256_div_ps(num, _mm256_add_ps(SET1(1.0f), t));
}
A2 static inline __m256 erf_avx2(__m256 x)
{
    __m256 sign = _mm256_and_ps(x, SET1(-0.0f));
    __m256 z = _mm256_andnot_ps(SET1(-0.0f), x);
    __m256 t = _mm256_div_ps(SET1(1.0f), _mm256_fmadd_ps(SET1(0.5f), z, SET1(1.0f)));
    __m256 q = erfc_q_avx2(t);
    __m256 z2 = _mm256_mul_ps(z, z);
    __m256 big = _mm256_fnmadd_ps(t, exp_avx2(_mm256_sub_ps(q, z2)), SET1(1.0f));
    __m256 smallv = _mm256_mul_ps(_mm256_mul_ps(erf_series_avx2(z2), z),
                                  SET1(1.12837916709551257f));
    __m256 r = _mm256_blendv_ps(big, smallv, _mm256_cmp_ps(z, SET1(0.5f), _CMP_LT_OQ));
    r = _mm256_or_ps(r, sign);
    return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
A2 static inline v8f vsigmoid_avx2(v8f x)
{
    return (v8f)sigmoid_avx2((__m256)x);
}
/* x Phi(x) as vgelu_generic says, through erfc alone */
A2 static inline __m256 gelu_avx2(__m256 x)
{
    __m256 z = _mm256_mul_ps(_mm256_andnot_ps(SET1(-0.0f), x), SET1(0.70710678118654752f));
    __m256 t = _mm256_div_ps(SET1(1.0f), _mm256_fmadd_ps(SET1(0.5f), z, SET1(1.0f)));
    __m256 q = erfc_q_avx2(t);
    __m256 h = _mm256_mul_ps(SET1(0.5f), _mm256_mul_ps(t, exp_avx2(_mm256_fnmadd_ps(z, z, q))));
    __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NGE_UQ); /* below 0 or NaN */
    return _mm256_mul_ps(x, _mm256_blendv_ps(_mm256_sub_ps(SET1(1.0f), h), h, neg));
}
A2 static inline v8f vgelu_avx2(v8f x)
{
    return (v8f)gelu_avx2((__m256)x);
}
A2 static inline v8f verf_avx2(v8f x)
{
    return (v8f)erf_avx2((__m256)x);
}
#undef SET1
#undef A2

#define SET1 _mm512_set1_ps
#define A5 __attribute__((target("avx512f")))
A5 static inline __m512 exp_avx512(__m512 x)
{
    /* below -120 the result is 0 after scalef, above 89 infinity */
    __m512 xc = _mm512_min_ps(SET1(89.0f), _mm512_max_ps(SET1(-120.0f), x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, SET1(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, SET1(0.693145751953125f), xc);
    r = _mm512_fnmadd_ps(n, SET1(1.428606765330187045e-06f), r);
    return _mm512_scalef_ps(exp_poly_avx512(r), n);
}
/* 1/d for d in [1, 9] (and NaN): the 14-bit estimate and one Newton step
 * (relative error ~2^-28 before rounding) */
A5 static inline __m512 recip_avx512(__m512 d)
{
    __m512 r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, SET1(2.0f)));
}
A5 static inline __m512 sigmoid_avx512(__m512 x)
{
    __m512i bits = _mm512_castps_si512(x);
    __m512 t = exp_avx512(_mm512_castsi512_ps(_mm512_or_si512(bits, _mm512_set1_epi32(INT32_MIN))));
    __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    __m512 num = _mm512_mask_blend_ps(pos, t, SET1(1.0f));
    return _mm512_mul_ps(num, recip_avx512(_mm512_add_ps(SET1(1.0f), t)));
}
A5 static inline __m512 erf_avx512(__m512 x)
{
    __m512i bits = _mm512_castps_si512(x);
    __m512i sign = _mm512_and_si512(bits, _mm512_set1_epi32(INT32_MIN));
    __m512 z = _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32(INT32_MIN), bits));
    /* t from z clamped to 16 (NaN kept), so the reciprocal estimate stays
     * finite: above, e^-z^2 makes erfc 0 whatever t is */
    __m512 t = recip_avx512(_mm512_fmadd_ps(SET1(0.5f), _mm512_min_ps(SET1(16.0f), z), SET1(1.0f)));
    __m512 q = erfc_q_avx512(t);
    __m512 z2 = _mm512_mul_ps(z, z);
    __m512 big = _mm512_fnmadd_ps(t, exp_avx512(_mm512_sub_ps(q, z2)), SET1(1.0f));
    __m512 smallv = _mm512_mul_ps(_mm512_mul_ps(erf_series_avx512(z2), z),
                                  SET1(1.12837916709551257f));
    __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(z, SET1(0.5f), _CMP_LT_OQ), big, smallv);
    r = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(r), sign));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), r, x);
}
A5 static inline v16f vsigmoid_avx512(v16f x)
{
    return (v16f)sigmoid_avx512((__m512)x);
}
/* x Phi(x) as vgelu_generic says, through erfc alone (z clamped to 16 for
 * the reciprocal estimate, as in erf_avx512) */
A5 static inline __m512 gelu_avx512(__m512 x)
{
    __m512 z = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_andnot_si512(_mm512_set1_epi32(INT32_MIN),
                                                                     _mm512_castps_si512(x))),
                             SET1(0.70710678118654752f));
    __m512 t = recip_avx512(_mm512_fmadd_ps(SET1(0.5f), _mm512_min_ps(SET1(16.0f), z), SET1(1.0f)));
    __m512 q = erfc_q_avx512(t);
    __m512 h = _mm512_mul_ps(SET1(0.5f), _mm512_mul_ps(t, exp_avx512(_mm512_fnmadd_ps(z, z, q))));
    __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    return _mm512_mul_ps(x, _mm512_mask_blend_ps(pos, h, _mm512_sub_ps(SET1(1.0f), h)));
}
A5 static inline v16f vgelu_avx512(v16f x)
{
    return (v16f)gelu_avx512((__m512)x);
}
A5 static inline v16f verf_avx512(v16f x)
{
    return (v16f)erf_avx512((__m512)x);
}
#undef SET1
#undef A5
#endif

/* The activations over a vector type, given its exp-based functions. */
#define VM_BODY(SUFFIX, ATTR, VF, VI)                                                                         \
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
        case RT_ACT_GELU: ACT_LOOP(VF, vgelu_##SUFFIX(v)); break;                                              \
        case RT_ACT_ERF: ACT_LOOP(VF, verf_##SUFFIX(v)); break;                                               \
        default: ACT_LOOP(VF, vclamp_##SUFFIX(v, lo, hi)); break;                                             \
        }                                                                                                      \
    }

/* Four vectors at a time, each through the whole expression before the
 * next: the compiler interleaves their independent chains (SiLU over 16K
 * floats in L1: 9.3 -> 7.7 ns a vector), where the out-of-order window
 * alone overlapped too few iterations of one long chain.  Every element
 * takes the same operations as one vector at a time. */
#define ACT_LOOP(VF, EXPR)                                                                                     \
    do {                                                                                                       \
        size_t i = 0;                                                                                          \
        for (; i + 4 * L <= n; i += 4 * L) {                                                                   \
            VF v0_, v1_, v2_, v3_;                                                                             \
            memcpy(&v0_, x + i, sizeof v0_);                                                                   \
            memcpy(&v1_, x + i + L, sizeof v1_);                                                               \
            memcpy(&v2_, x + i + 2 * L, sizeof v2_);                                                           \
            memcpy(&v3_, x + i + 3 * L, sizeof v3_);                                                           \
            { VF v = v0_; v0_ = (EXPR); }                                                                      \
            { VF v = v1_; v1_ = (EXPR); }                                                                      \
            { VF v = v2_; v2_ = (EXPR); }                                                                      \
            { VF v = v3_; v3_ = (EXPR); }                                                                      \
            memcpy(y + i, &v0_, sizeof v0_);                                                                   \
            memcpy(y + i + L, &v1_, sizeof v1_);                                                               \
            memcpy(y + i + 2 * L, &v2_, sizeof v2_);                                                           \
            memcpy(y + i + 3 * L, &v3_, sizeof v3_);                                                           \
        }                                                                                                      \
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

VM_MATH(generic, , v8f, v8i)
VM_BODY(generic, , v8f, v8i)
#ifdef ACT_X86
VM_BODY(avx2, __attribute__((target("avx2,fma"))), v8f, v8i)
VM_BODY(avx512, __attribute__((target("avx512f"))), v16f, v16i)
#endif

typedef void (*act_fn)(const rt_act *a, const float *x, float *y, size_t n);

static act_fn act_select(int isa)
{
    return RT_ISA_PICK(isa, act_apply_generic, act_apply_avx2, act_apply_avx512);
}

void rt_act_map_isa(int isa, const rt_act *a, const float *x, float *y, size_t n)
{
    act_select(isa)(a, x, y, n);
}

void rt_act_map(const rt_act *a, const float *x, float *y, size_t n)
{
    static act_fn fn;
    act_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);
    if (!f) {
        f = act_select(GIR_GEMM_AUTO);
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
    size_t n, stride, end; /* end: the last row stops there */
} rows_job;

static void rows_part(void *ctx, size_t r0, size_t r1, int worker)
{
    (void)worker;
    const rows_job *j = ctx;
    for (size_t r = r0; r < r1; r++) {
        size_t at = r * j->stride, n = j->end - at < j->n ? j->end - at : j->n;
        rt_act_map(j->a, j->y + at, j->y + at, n);
    }
}

void rt_act_apply_rows(const rt_act *a, gir_threads *th, float *y, size_t rows, size_t n, size_t stride)
{
    if (!a->on || rows == 0 || n == 0)
        return;
    size_t end = (rows - 1) * stride + n;
    if (stride == n && n < 4096) { /* short contiguous rows (1x1 outputs): runs of 4096 */
        n = stride = 4096;
        rows = (end + n - 1) / n;
    }
    rows_job j = { a, y, n, stride, end };
    /* at least ~16k elements per worker, else the hand-off costs more */
    size_t min_rows = ((size_t)1 << 14) / n + 1;
    rt_parallel_for(th, rows, 1, min_rows, rows_part, &j);
}
