#include "hilo/compress/sketch-kernel.h"

#include "hilo/compress/sketch-pass.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace hilo
{
namespace sketch_kernel_internal
{

int64_t
SketchChains(int64_t l)
{
    if (l > 8)
        return 1;
    int64_t p = 1;
    while (p < l)
        p *= 2;
    return 16 / p;
}

void
BlockPortable(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l,
              int64_t chains, int64_t n, float* w, float* zb, float* /*buf*/)
{
    for (int64_t c = 0; c < n; ++c)
    {
        const float* xc = x + c * sc;
        float* wc = w + c * l;
        for (int64_t j = 0; j < l; ++j)
        {
            float acc = 0.0f;
            for (int64_t i = 0; i < m; ++i)
                acc = std::fma(xc[i * si], q16[i * 16 + j * chains], acc);
            wc[j] = acc;
        }
        if (zb == nullptr)
            continue;
        const int64_t g = c % chains;
        for (int64_t i = 0; i < m; ++i)
        {
            const float xv = xc[i * si];
            for (int64_t j = 0; j < l; ++j)
                zb[i * 16 + j * chains + g] = std::fma(xv, wc[j], zb[i * 16 + j * chains + g]);
        }
    }
}

void
GramPortable(const float* w, int64_t n, int64_t l, float* hb)
{
    for (int64_t c = 0; c < n; ++c)
    {
        const float* wc = w + c * l;
        for (int64_t j = 0; j < l; ++j)
            for (int64_t k = 0; k < l; ++k)
                hb[j * 16 + k] = std::fma(wc[j], wc[k], hb[j * 16 + k]);
    }
}

} // namespace sketch_kernel_internal

namespace
{

using sketch_kernel_internal::BlockFn;
using sketch_kernel_internal::GramFn;

/// The pass's two per-block functions for one instruction set.
struct IsaFns
{
    BlockFn block;
    GramFn gram;
};

IsaFns
FnsFor(SketchIsa isa)
{
    switch (isa)
    {
        case SketchIsa::kAvx512:
            return {sketch_kernel_internal::Avx512Block(), sketch_kernel_internal::Avx512Gram()};
        case SketchIsa::kAvx2:
            return {sketch_kernel_internal::Avx2Block(), sketch_kernel_internal::Avx2Gram()};
        case SketchIsa::kPortable:
            break;
    }
    return {&sketch_kernel_internal::BlockPortable, &sketch_kernel_internal::GramPortable};
}

/// `n` floats of zeroed scratch starting at a 64-byte boundary inside `storage`.
float*
Aligned64(std::vector<float>* storage, int64_t n)
{
    storage->assign(static_cast<size_t>(n + 16), 0.0f);
    const auto p = reinterpret_cast<uintptr_t>(storage->data());
    return storage->data() + ((64 - p % 64) % 64) / sizeof(float);
}

} // namespace

bool
SketchIsaSupported(SketchIsa isa)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    switch (isa)
    {
        case SketchIsa::kAvx512:
            return sketch_kernel_internal::Avx512Block() != nullptr &&
                   __builtin_cpu_supports("avx512f");
        case SketchIsa::kAvx2:
            return sketch_kernel_internal::Avx2Block() != nullptr &&
                   __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case SketchIsa::kPortable:
            return true;
    }
    return false;
#else
    return isa == SketchIsa::kPortable;
#endif
}

SketchIsa
BestSketchIsa()
{
    static const SketchIsa best = []
    {
        for (SketchIsa isa : {SketchIsa::kAvx512, SketchIsa::kAvx2})
            if (SketchIsaSupported(isa))
                return isa;
        return SketchIsa::kPortable;
    }();
    return best;
}

void
SketchKernel(SketchIsa isa, const float* x, int64_t rows, int64_t cols, const float* q, int64_t l,
             float* w, float* z, float* h)
{
    const bool wide = rows <= cols;
    const int64_t m = std::min(rows, cols);
    const int64_t d = std::max(rows, cols);
    // X[i][c] at x[i * si + c * sc]: the stored row i (wide) or the stored row c (tall).
    const int64_t si = wide ? d : 1;
    const int64_t sc = wide ? 1 : m;
    std::vector<float> storage;
    float* q16 = Aligned64(&storage, 5 * 16 * m + 2 * 16 * 16);
    float* zb = q16 + 16 * m;   // this block's chains
    float* zsum = zb + 16 * m;  // the sum of the blocks so far (lane j)
    float* buf = zsum + 16 * m; // the block function's scratch, 32 m
    float* hb = buf + 32 * m;   // this block's Hb
    float* hsum = hb + 16 * 16; // the sum of the blocks so far
    const int64_t chains = sketch_kernel_internal::SketchChains(l);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < l; ++j)
            std::fill(q16 + i * 16 + j * chains, q16 + i * 16 + (j + 1) * chains, q[i * l + j]);
    const IsaFns fns = FnsFor(isa);
    const BlockFn block = fns.block;
    const GramFn gram = fns.gram;
    for (int64_t c0 = 0; c0 < d; c0 += kSketchBlock)
    {
        const int64_t n = std::min(kSketchBlock, d - c0);
        if (z != nullptr)
            std::fill(zb, zb + 16 * m, 0.0f);
        block(x + c0 * sc, si, sc, m, q16, l, chains, n, w + c0 * l, z != nullptr ? zb : nullptr,
              buf);
        if (z != nullptr)
        {
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < l; ++j)
                {
                    float sum = 0.0f;
                    for (int64_t g = 0; g < chains; ++g)
                        sum += zb[i * 16 + j * chains + g];
                    zsum[i * 16 + j] += sum;
                }
        }
        if (h != nullptr)
        {
            std::fill(hb, hb + 16 * 16, 0.0f);
            gram(w + c0 * l, n, l, hb);
            for (int64_t k = 0; k < 16 * 16; ++k)
                hsum[k] += hb[k];
        }
    }
    if (z != nullptr)
    {
        for (int64_t i = 0; i < m; ++i)
            std::copy(zsum + i * 16, zsum + i * 16 + l, z + i * l);
    }
    if (h != nullptr)
    {
        for (int64_t j = 0; j < l; ++j)
            std::copy(hsum + j * 16, hsum + j * 16 + l, h + j * l);
    }
}

} // namespace hilo
