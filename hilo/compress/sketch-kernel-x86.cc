// The sketch kernel's AVX2 and AVX-512 block functions (sketch-kernel.h), compiled for those
// instruction sets function by function (target attributes: the build itself has no -march) and
// chosen at run time. Each lane holds one entry of W or one chain of Z and runs the fma chains of
// sketch-kernel.h in their order, so the results are bit-equal to the portable path's.
#include "hilo/compress/sketch-kernel.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#define HILO_TARGET_AVX512 __attribute__((target("avx512f")))
#define HILO_TARGET_AVX2   __attribute__((target("avx2,fma")))

namespace hilo
{
namespace
{

/// How far ahead along a stored row (floats) the wide tiles prefetch: two 16-column tiles.
constexpr int64_t kAhead = 32;

// Every lane: the AVX-512 shuffles are used in their maskz forms with these (the plain forms start
// from an undefined register, which GCC 12 reports as maybe uninitialized).
constexpr __mmask16 kAll16 = 0xffff;
constexpr __mmask8 kAll8 = 0xff;

/// One tile of C columns with AVX-512: C accumulators of 16 lanes (lanes >= l are 0, Q's padding).
/// kWide: sc == 1 (each stored row holds a row of X); otherwise si == 1 (each stored row holds
/// a column of X).
template<int C, bool kWide>
HILO_TARGET_AVX512 inline void
Tile512(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, __mmask16 mask,
        int64_t l, float* w, float* zb, float* buf)
{
    // A wide full tile copies its 16 columns of each row into `buf` as it reads them: the stored
    // rows lie d floats apart, and every LoRA shape's d is a multiple of 512, so the m rows share
    // few L1 sets and would be evicted before the Z step reads them again.
    constexpr bool kCopy = kWide && C == 16;
    __m512 acc[C];
#pragma GCC unroll 16
    for (int k = 0; k < C; ++k)
        acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = kWide ? x + i * si : x + i;
        if (kCopy)
        {
            _mm512_store_ps(buf + 16 * i, _mm512_loadu_ps(xi));
            _mm_prefetch(reinterpret_cast<const char*>(xi + kAhead), _MM_HINT_T0);
        }
        const __m512 qv = _mm512_load_ps(q16 + 16 * i);
#pragma GCC unroll 16
        for (int k = 0; k < C; ++k)
            acc[k] = _mm512_fmadd_ps(_mm512_set1_ps(kWide ? xi[k] : xi[k * sc]), qv, acc[k]);
    }
#pragma GCC unroll 16
    for (int k = 0; k < C; ++k)
        _mm512_mask_storeu_ps(w + k * l, mask, acc[k]);
    if (zb == nullptr)
        return;
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = kCopy ? buf + 16 * i : (kWide ? x + i * si : x + i);
        __m512 zv = _mm512_load_ps(zb + 16 * i);
#pragma GCC unroll 16
        for (int k = 0; k < C; ++k)
            zv = _mm512_fmadd_ps(_mm512_set1_ps(kWide ? xi[k] : xi[k * sc]), acc[k], zv);
        _mm512_store_ps(zb + 16 * i, zv);
    }
}

template<bool kWide>
HILO_TARGET_AVX512 void
Run512(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l, int64_t n,
       float* w, float* zb, float* buf)
{
    const auto mask = static_cast<__mmask16>((1u << l) - 1u);
    int64_t c = 0;
    for (; c + 16 <= n; c += 16)
        Tile512<16, kWide>(x + c * sc, si, sc, m, q16, mask, l, w + c * l, zb, buf);
    for (; c < n; ++c)
        Tile512<1, kWide>(x + c * sc, si, sc, m, q16, mask, l, w + c * l, zb, buf);
}

/// G consecutive floats at p in the lane order of sketch-kernel.h's chains: lane G j + g holds
/// p[g], for every j.
template<int G>
HILO_TARGET_AVX512 inline __m512
Spread512(const float* p)
{
    if constexpr (G == 16)
        return _mm512_loadu_ps(p);
    else if constexpr (G == 8)
        return _mm512_castpd_ps(_mm512_maskz_broadcast_f64x4(
            kAll8, _mm256_loadu_pd(reinterpret_cast<const double*>(p))));
    else if constexpr (G == 4)
        return _mm512_maskz_broadcast_f32x4(kAll16, _mm_loadu_ps(p));
    else
    {
        double pair; // p[0], p[1] as one 64-bit lane
        std::memcpy(&pair, p, sizeof pair);
        return _mm512_castpd_ps(_mm512_set1_pd(pair));
    }
}

/// Columns c .. c+31 of a tall X (stored row c + t holds X's column c + t) into `buf` as m rows
/// of 32: 16-by-16 transposes in registers, the last m mod 16 rows one by one.
HILO_TARGET_AVX512 inline void
Transpose32(const float* x, int64_t m, float* buf)
{
    int64_t i0 = 0;
    for (; i0 + 16 <= m; i0 += 16)
    {
        for (int half = 0; half < 2; ++half)
        {
            __m512 r[16];
            __m512 t[16];
#pragma GCC unroll 16
            for (int k = 0; k < 16; ++k)
            {
                r[k] = _mm512_loadu_ps(x + (16 * half + k) * m + i0);
            }
            // Within each 128-bit block L: pairs of rows, then quads (column 4L + q of rows 4k to
            // 4k + 3 in block L of r[4k + q]), then the blocks gathered across registers.
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k)
            {
                t[2 * k] = _mm512_maskz_unpacklo_ps(kAll16, r[2 * k], r[2 * k + 1]);
                t[2 * k + 1] = _mm512_maskz_unpackhi_ps(kAll16, r[2 * k], r[2 * k + 1]);
            }
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k)
            {
                const __m512d a = _mm512_castps_pd(t[4 * k]);
                const __m512d b = _mm512_castps_pd(t[4 * k + 1]);
                const __m512d c = _mm512_castps_pd(t[4 * k + 2]);
                const __m512d d = _mm512_castps_pd(t[4 * k + 3]);
                r[4 * k] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, a, c));
                r[4 * k + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, a, c));
                r[4 * k + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, b, d));
                r[4 * k + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, b, d));
            }
#pragma GCC unroll 4
            for (int q = 0; q < 4; ++q)
            {
                const __m512 s0 = _mm512_maskz_shuffle_f32x4(kAll16, r[q], r[4 + q], 0x88);
                const __m512 s1 = _mm512_maskz_shuffle_f32x4(kAll16, r[q], r[4 + q], 0xdd);
                const __m512 s2 = _mm512_maskz_shuffle_f32x4(kAll16, r[8 + q], r[12 + q], 0x88);
                const __m512 s3 = _mm512_maskz_shuffle_f32x4(kAll16, r[8 + q], r[12 + q], 0xdd);
                float* out = buf + 32 * i0 + 16 * half;
                _mm512_store_ps(out + 32 * q, _mm512_maskz_shuffle_f32x4(kAll16, s0, s2, 0x88));
                _mm512_store_ps(out + 32 * (4 + q),
                                _mm512_maskz_shuffle_f32x4(kAll16, s1, s3, 0x88));
                _mm512_store_ps(out + 32 * (8 + q),
                                _mm512_maskz_shuffle_f32x4(kAll16, s0, s2, 0xdd));
                _mm512_store_ps(out + 32 * (12 + q),
                                _mm512_maskz_shuffle_f32x4(kAll16, s1, s3, 0xdd));
            }
        }
    }
    for (; i0 < m; ++i0)
        for (int k = 0; k < 32; ++k)
            buf[32 * i0 + k] = x[k * m + i0];
}

/// G > 1 chains: one tile of 32 columns, C = 32 / G accumulators, lane G j + g of accumulator k
/// holding W[c + G k + g][j]. The tile's rows go to `buf` (32 floats each) for the Z step: copied
/// as they are read from a wide X (its stored rows share few L1 sets, see Tile512), transposed
/// there first from a tall one (Spread512 needs a row's 32 columns side by side).
template<int G, bool kTall>
HILO_TARGET_AVX512 inline void
TileG512(const float* x, int64_t si, int64_t m, const float* q16, int64_t l, float* w, float* zb,
         float* buf)
{
    constexpr int C = 32 / G;
    if (kTall)
        Transpose32(x, m, buf);
    __m512 acc[C];
#pragma GCC unroll 16
    for (int k = 0; k < C; ++k)
        acc[k] = _mm512_setzero_ps();
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = kTall ? buf + 32 * i : x + i * si;
        if (!kTall)
        {
            _mm512_store_ps(buf + 32 * i, _mm512_loadu_ps(xi));
            _mm512_store_ps(buf + 32 * i + 16, _mm512_loadu_ps(xi + 16));
            _mm_prefetch(reinterpret_cast<const char*>(xi + 2 * kAhead), _MM_HINT_T0);
        }
        const __m512 qv = _mm512_load_ps(q16 + 16 * i);
#pragma GCC unroll 16
        for (int k = 0; k < C; ++k)
            acc[k] = _mm512_fmadd_ps(Spread512<G>(xi + G * k), qv, acc[k]);
    }
    alignas(64) float lanes[16];
#pragma GCC unroll 16
    for (int k = 0; k < C; ++k)
    {
        _mm512_store_ps(lanes, acc[k]);
        for (int g = 0; g < G; ++g)
            for (int64_t j = 0; j < l; ++j)
                w[(G * k + g) * l + j] = lanes[G * j + g];
    }
    if (zb == nullptr)
        return;
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = buf + 32 * i;
        __m512 zv = _mm512_load_ps(zb + 16 * i);
#pragma GCC unroll 16
        for (int k = 0; k < C; ++k)
            zv = _mm512_fmadd_ps(Spread512<G>(xi + G * k), acc[k], zv);
        _mm512_store_ps(zb + 16 * i, zv);
    }
}

/// G > 1 chains, one column (block offset t) of either storage order: every lane G j + g computes
/// W[c][j] (the same chain), and only the lanes of chain t mod G take its Z terms.
template<int G>
HILO_TARGET_AVX512 inline void
ColumnG512(const float* x, int64_t si, int64_t m, const float* q16, int64_t l, int64_t t, float* w,
           float* zb)
{
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < m; ++i)
        acc = _mm512_fmadd_ps(_mm512_set1_ps(x[i * si]), _mm512_load_ps(q16 + 16 * i), acc);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc);
    for (int64_t j = 0; j < l; ++j)
        w[j] = lanes[G * j];
    if (zb == nullptr)
        return;
    uint32_t bits = 0;
    for (int lane = 0; lane < 16; ++lane)
        bits |= (lane % G == t % G ? 1u : 0u) << lane;
    const auto chain = static_cast<__mmask16>(bits);
    for (int64_t i = 0; i < m; ++i)
    {
        const __m512 zv = _mm512_load_ps(zb + 16 * i);
        _mm512_store_ps(zb + 16 * i,
                        _mm512_mask3_fmadd_ps(_mm512_set1_ps(x[i * si]), acc, zv, chain));
    }
}

template<int G>
HILO_TARGET_AVX512 void
RunG512(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l, int64_t n,
        float* w, float* zb, float* buf)
{
    int64_t c = 0;
    for (; c + 32 <= n; c += 32)
    {
        if (sc == 1)
            TileG512<G, false>(x + c, si, m, q16, l, w + c * l, zb, buf);
        else
            TileG512<G, true>(x + c * sc, si, m, q16, l, w + c * l, zb, buf);
    }
    for (; c < n; ++c)
        ColumnG512<G>(x + c * sc, si, m, q16, l, c, w + c * l, zb);
}

HILO_TARGET_AVX512 void
Block512(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l,
         int64_t chains, int64_t n, float* w, float* zb, float* buf)
{
    switch (chains)
    {
        case 16:
            return RunG512<16>(x, si, sc, m, q16, l, n, w, zb, buf);
        case 8:
            return RunG512<8>(x, si, sc, m, q16, l, n, w, zb, buf);
        case 4:
            return RunG512<4>(x, si, sc, m, q16, l, n, w, zb, buf);
        case 2:
            return RunG512<2>(x, si, sc, m, q16, l, n, w, zb, buf);
        default:
            break;
    }
    if (sc == 1)
        Run512<true>(x, si, sc, m, q16, l, n, w, zb, buf);
    else
        Run512<false>(x, si, sc, m, q16, l, n, w, zb, buf);
}

/// One tile of C columns with AVX2: NV vectors of 8 lanes per column (NV = 2: l > 8).
template<int NV, int C, bool kWide>
HILO_TARGET_AVX2 inline void
Tile256(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, __m256i mask0,
        __m256i mask1, int64_t l, float* w, float* zb)
{
    __m256 acc[C][NV];
#pragma GCC unroll 8
    for (int k = 0; k < C; ++k)
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
            acc[k][v] = _mm256_setzero_ps();
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = kWide ? x + i * si : x + i;
        if (kWide && C > 1)
            _mm_prefetch(reinterpret_cast<const char*>(xi + kAhead), _MM_HINT_T0);
        __m256 qv[NV];
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
            qv[v] = _mm256_load_ps(q16 + 16 * i + 8 * v);
#pragma GCC unroll 8
        for (int k = 0; k < C; ++k)
        {
            const __m256 b = _mm256_broadcast_ss(kWide ? xi + k : xi + k * sc);
#pragma GCC unroll 2
            for (int v = 0; v < NV; ++v)
                acc[k][v] = _mm256_fmadd_ps(b, qv[v], acc[k][v]);
        }
    }
#pragma GCC unroll 8
    for (int k = 0; k < C; ++k)
    {
        _mm256_maskstore_ps(w + k * l, mask0, acc[k][0]);
        if (NV == 2)
            _mm256_maskstore_ps(w + k * l + 8, mask1, acc[k][NV - 1]);
    }
    if (zb == nullptr)
        return;
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = kWide ? x + i * si : x + i;
        __m256 zv[NV];
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
            zv[v] = _mm256_load_ps(zb + 16 * i + 8 * v);
#pragma GCC unroll 8
        for (int k = 0; k < C; ++k)
        {
            const __m256 b = _mm256_broadcast_ss(kWide ? xi + k : xi + k * sc);
#pragma GCC unroll 2
            for (int v = 0; v < NV; ++v)
                zv[v] = _mm256_fmadd_ps(b, acc[k][v], zv[v]);
        }
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v)
            _mm256_store_ps(zb + 16 * i + 8 * v, zv[v]);
    }
}

template<int NV, bool kWide>
HILO_TARGET_AVX2 void
Run256(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l, int64_t n,
       float* w, float* zb)
{
    constexpr int kCols = NV == 1 ? 8 : 4; // 8 accumulators in either case
    alignas(32) int32_t lanes[16];
    for (int t = 0; t < 16; ++t)
        lanes[t] = t < l ? -1 : 0;
    const __m256i mask0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
    const __m256i mask1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes + 8));
    int64_t c = 0;
    for (; c + kCols <= n; c += kCols)
        Tile256<NV, kCols, kWide>(x + c * sc, si, sc, m, q16, mask0, mask1, l, w + c * l, zb);
    for (; c < n; ++c)
        Tile256<NV, 1, kWide>(x + c * sc, si, sc, m, q16, mask0, mask1, l, w + c * l, zb);
}

/// Spread512's lanes as two halves (lanes 0-7, 8-15).
template<int G>
HILO_TARGET_AVX2 inline void
Spread256(const float* p, __m256* lo, __m256* hi)
{
    if constexpr (G == 16)
    {
        *lo = _mm256_loadu_ps(p);
        *hi = _mm256_loadu_ps(p + 8);
    }
    else if constexpr (G == 8)
        *lo = *hi = _mm256_loadu_ps(p);
    else if constexpr (G == 4)
        *lo = *hi = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(p));
    else
    {
        double pair; // p[0], p[1] as one 64-bit lane (p need not be 8-byte aligned)
        std::memcpy(&pair, p, sizeof pair);
        *lo = *hi = _mm256_castpd_ps(_mm256_set1_pd(pair));
    }
}

/// TileG512 with AVX2: C = max(1, 8 / G) accumulators of two halves, a tile of G C columns.
template<int G>
HILO_TARGET_AVX2 inline void
TileG256(const float* x, int64_t si, int64_t m, const float* q16, int64_t l, float* w, float* zb)
{
    constexpr int C = G >= 8 ? 1 : 8 / G;
    __m256 acc[C][2];
#pragma GCC unroll 4
    for (int k = 0; k < C; ++k)
        acc[k][0] = acc[k][1] = _mm256_setzero_ps();
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = x + i * si;
        _mm_prefetch(reinterpret_cast<const char*>(xi + kAhead), _MM_HINT_T0);
        const __m256 q0 = _mm256_load_ps(q16 + 16 * i);
        const __m256 q1 = _mm256_load_ps(q16 + 16 * i + 8);
#pragma GCC unroll 4
        for (int k = 0; k < C; ++k)
        {
            __m256 b0, b1;
            Spread256<G>(xi + G * k, &b0, &b1);
            acc[k][0] = _mm256_fmadd_ps(b0, q0, acc[k][0]);
            acc[k][1] = _mm256_fmadd_ps(b1, q1, acc[k][1]);
        }
    }
    alignas(32) float lanes[16];
    for (int k = 0; k < C; ++k)
    {
        _mm256_store_ps(lanes, acc[k][0]);
        _mm256_store_ps(lanes + 8, acc[k][1]);
        for (int g = 0; g < G; ++g)
            for (int64_t j = 0; j < l; ++j)
                w[(G * k + g) * l + j] = lanes[G * j + g];
    }
    if (zb == nullptr)
        return;
    for (int64_t i = 0; i < m; ++i)
    {
        const float* xi = x + i * si;
        __m256 z0 = _mm256_load_ps(zb + 16 * i);
        __m256 z1 = _mm256_load_ps(zb + 16 * i + 8);
#pragma GCC unroll 4
        for (int k = 0; k < C; ++k)
        {
            __m256 b0, b1;
            Spread256<G>(xi + G * k, &b0, &b1);
            z0 = _mm256_fmadd_ps(b0, acc[k][0], z0);
            z1 = _mm256_fmadd_ps(b1, acc[k][1], z1);
        }
        _mm256_store_ps(zb + 16 * i, z0);
        _mm256_store_ps(zb + 16 * i + 8, z1);
    }
}

/// ColumnG512 with AVX2 (the chain's lanes chosen by a blend).
template<int G>
HILO_TARGET_AVX2 inline void
ColumnG256(const float* x, int64_t si, int64_t m, const float* q16, int64_t l, int64_t t, float* w,
           float* zb)
{
    __m256 a0 = _mm256_setzero_ps();
    __m256 a1 = _mm256_setzero_ps();
    for (int64_t i = 0; i < m; ++i)
    {
        const __m256 b = _mm256_broadcast_ss(x + i * si);
        a0 = _mm256_fmadd_ps(b, _mm256_load_ps(q16 + 16 * i), a0);
        a1 = _mm256_fmadd_ps(b, _mm256_load_ps(q16 + 16 * i + 8), a1);
    }
    alignas(32) float lanes[16];
    _mm256_store_ps(lanes, a0);
    _mm256_store_ps(lanes + 8, a1);
    for (int64_t j = 0; j < l; ++j)
        w[j] = lanes[G * j];
    if (zb == nullptr)
        return;
    alignas(32) int32_t pick[16];
    for (int lane = 0; lane < 16; ++lane)
        pick[lane] = lane % G == t % G ? -1 : 0;
    const __m256 m0 =
        _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(pick)));
    const __m256 m1 =
        _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(pick + 8)));
    for (int64_t i = 0; i < m; ++i)
    {
        const __m256 b = _mm256_broadcast_ss(x + i * si);
        const __m256 z0 = _mm256_load_ps(zb + 16 * i);
        const __m256 z1 = _mm256_load_ps(zb + 16 * i + 8);
        _mm256_store_ps(zb + 16 * i, _mm256_blendv_ps(z0, _mm256_fmadd_ps(b, a0, z0), m0));
        _mm256_store_ps(zb + 16 * i + 8, _mm256_blendv_ps(z1, _mm256_fmadd_ps(b, a1, z1), m1));
    }
}

template<int G>
HILO_TARGET_AVX2 void
RunG256(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l, int64_t n,
        float* w, float* zb, float* buf)
{
    constexpr int64_t kTile = G >= 8 ? G : 8;
    int64_t c = 0;
    for (; c + kTile <= n; c += kTile)
    {
        if (sc == 1)
        {
            TileG256<G>(x + c, si, m, q16, l, w + c * l, zb);
            continue;
        }
        // Tall: the tile's columns side by side first (m rows of kTile floats).
        const float* xc = x + c * sc;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t t = 0; t < kTile; ++t)
                buf[kTile * i + t] = xc[t * sc + i];
        TileG256<G>(buf, kTile, m, q16, l, w + c * l, zb);
    }
    for (; c < n; ++c)
        ColumnG256<G>(x + c * sc, si, m, q16, l, c, w + c * l, zb);
}

HILO_TARGET_AVX2 void
Block256(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l,
         int64_t chains, int64_t n, float* w, float* zb, float* buf)
{
    switch (chains)
    {
        case 16:
            return RunG256<16>(x, si, sc, m, q16, l, n, w, zb, buf);
        case 8:
            return RunG256<8>(x, si, sc, m, q16, l, n, w, zb, buf);
        case 4:
            return RunG256<4>(x, si, sc, m, q16, l, n, w, zb, buf);
        case 2:
            return RunG256<2>(x, si, sc, m, q16, l, n, w, zb, buf);
        default:
            break;
    }
    // One chain (l > 8): two vectors of 8 lanes per column.
    if (sc == 1)
        Run256<2, true>(x, si, sc, m, q16, l, n, w, zb);
    else
        Run256<2, false>(x, si, sc, m, q16, l, n, w, zb);
}

/// Hb += W^T W over n rows of width L with AVX-512: row j of Hb in one register, lanes k.
template<int L>
HILO_TARGET_AVX512 void
Gram512(const float* w, int64_t n, float* hb)
{
    const auto mask = static_cast<__mmask16>((1u << L) - 1u);
    __m512 h[L];
#pragma GCC unroll 16
    for (int j = 0; j < L; ++j)
        h[j] = _mm512_load_ps(hb + 16 * j);
    for (int64_t c = 0; c < n; ++c)
    {
        const float* wc = w + c * L;
        const __m512 wv = _mm512_maskz_loadu_ps(mask, wc);
#pragma GCC unroll 16
        for (int j = 0; j < L; ++j)
            h[j] = _mm512_fmadd_ps(_mm512_set1_ps(wc[j]), wv, h[j]);
    }
#pragma GCC unroll 16
    for (int j = 0; j < L; ++j)
        _mm512_store_ps(hb + 16 * j, h[j]);
}

/// The same with AVX2: row j of Hb in NV registers of 8 lanes (NV = 2 when L > 8).
template<int L>
HILO_TARGET_AVX2 void
Gram256(const float* w, int64_t n, float* hb)
{
    constexpr int kNv = L > 8 ? 2 : 1;
    alignas(32) int32_t lanes[16];
    for (int t = 0; t < 16; ++t)
        lanes[t] = t < L ? -1 : 0;
    __m256i mask[kNv];
    for (int v = 0; v < kNv; ++v)
        mask[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes + 8 * v));
    __m256 h[L][kNv];
    for (int j = 0; j < L; ++j)
        for (int v = 0; v < kNv; ++v)
            h[j][v] = _mm256_load_ps(hb + 16 * j + 8 * v);
    for (int64_t c = 0; c < n; ++c)
    {
        const float* wc = w + c * L;
        __m256 wv[kNv];
#pragma GCC unroll 2
        for (int v = 0; v < kNv; ++v)
            wv[v] = _mm256_maskload_ps(wc + 8 * v, mask[v]);
#pragma GCC unroll 16
        for (int j = 0; j < L; ++j)
        {
            const __m256 b = _mm256_broadcast_ss(wc + j);
#pragma GCC unroll 2
            for (int v = 0; v < kNv; ++v)
                h[j][v] = _mm256_fmadd_ps(b, wv[v], h[j][v]);
        }
    }
    for (int j = 0; j < L; ++j)
        for (int v = 0; v < kNv; ++v)
            _mm256_store_ps(hb + 16 * j + 8 * v, h[j][v]);
}

/// Gram<1> .. Gram<16> by width.
template<template<int> class Pick, int... Ls>
constexpr std::array<sketch_kernel_internal::GramFn, sizeof...(Ls)>
GramTable(std::integer_sequence<int, Ls...>)
{
    return {&Pick<Ls + 1>::Fn...};
}

template<int L>
struct Pick512
{
    static void Fn(const float* w, int64_t n, int64_t /*l*/, float* hb) { Gram512<L>(w, n, hb); }
};

template<int L>
struct Pick256
{
    static void Fn(const float* w, int64_t n, int64_t /*l*/, float* hb) { Gram256<L>(w, n, hb); }
};

void
GramBy512(const float* w, int64_t n, int64_t l, float* hb)
{
    static constexpr auto kTable = GramTable<Pick512>(std::make_integer_sequence<int, 16>());
    kTable[static_cast<size_t>(l - 1)](w, n, l, hb);
}

void
GramBy256(const float* w, int64_t n, int64_t l, float* hb)
{
    static constexpr auto kTable = GramTable<Pick256>(std::make_integer_sequence<int, 16>());
    kTable[static_cast<size_t>(l - 1)](w, n, l, hb);
}

} // namespace

namespace sketch_kernel_internal
{

BlockFn
Avx2Block()
{
    return &Block256;
}

BlockFn
Avx512Block()
{
    return &Block512;
}

GramFn
Avx2Gram()
{
    return &GramBy256;
}

GramFn
Avx512Gram()
{
    return &GramBy512;
}

} // namespace sketch_kernel_internal
} // namespace hilo

#else // no x86 SIMD path in this build

namespace hilo
{
namespace sketch_kernel_internal
{

BlockFn
Avx2Block()
{
    return nullptr;
}

BlockFn
Avx512Block()
{
    return nullptr;
}

GramFn
Avx2Gram()
{
    return nullptr;
}

GramFn
Avx512Gram()
{
    return nullptr;
}

} // namespace sketch_kernel_internal
} // namespace hilo

#endif
