// The warm sketch's BLAS-free kernel (sketch-kernel.h): W = X^T Q and Z = X W against a double
// reference for both storage orders and every width 1..16 on long sides that leave a partial block
// and a partial tile, with W's Gram matrix H = W^T W; every SIMD path bit-equal to the portable
// one; the documented summation order reproduced bit for bit by a separate plain loop; SketchPass
// using it for these widths, the same bits on any thread.
#include "hilo/compress/sketch-kernel.h"
#include "hilo/compress/sketch-pass.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace hilo
{
namespace
{

using testing::SupportedIsas;

struct Problem
{
    int64_t rows;
    int64_t cols;
    int64_t l;
    std::vector<float> x; // rows x cols row-major
    std::vector<float> q; // m x l row-major

    int64_t m() const { return std::min(rows, cols); }
    int64_t d() const { return std::max(rows, cols); }
    /// X[i][c] of the short-side view.
    float At(int64_t i, int64_t c) const
    {
        return rows <= cols ? x[static_cast<size_t>(i * cols + c)]
                            : x[static_cast<size_t>(c * cols + i)];
    }
};

Problem
MakeProblem(int64_t rows, int64_t cols, int64_t l, uint64_t seed)
{
    testing::SplitMix rng(seed);
    Problem p{rows, cols, l, {}, {}};
    p.x.resize(static_cast<size_t>(rows * cols));
    for (float& v : p.x)
        v = rng.Uniform();
    p.q.resize(static_cast<size_t>(p.m() * l));
    for (float& v : p.q)
        v = rng.Uniform();
    return p;
}

struct Result
{
    std::vector<float> w;
    std::vector<float> z;
    std::vector<float> h;
};

Result
RunKernel(SketchIsa isa, const Problem& p, bool with_z = true)
{
    // Sentinels: every entry must be overwritten (W, Z) and none past them written.
    Result r{std::vector<float>(static_cast<size_t>(p.d() * p.l + 1), -7.0f),
             std::vector<float>(static_cast<size_t>(p.m() * p.l + 1), 1e30f),
             std::vector<float>(static_cast<size_t>(p.l * p.l + 1), 1e30f)};
    SketchKernel(isa, p.x.data(), p.rows, p.cols, p.q.data(), p.l, r.w.data(),
                 with_z ? r.z.data() : nullptr, with_z ? r.h.data() : nullptr);
    EXPECT_EQ(r.w.back(), -7.0f);
    EXPECT_EQ(r.z.back(), 1e30f);
    EXPECT_EQ(r.h.back(), 1e30f);
    r.w.pop_back();
    r.z.pop_back();
    r.h.pop_back();
    return r;
}

bool
BitEqual(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string
Name(SketchIsa isa)
{
    switch (isa)
    {
        case SketchIsa::kAvx512:
            return "avx512";
        case SketchIsa::kAvx2:
            return "avx2";
        case SketchIsa::kPortable:
            break;
    }
    return "portable";
}

/// (wide, l): X stored as m x d (wide) or d x m, basis width l.
class SketchKernelWidth : public ::testing::TestWithParam<std::tuple<bool, int>>
{
};

TEST_P(SketchKernelWidth, MatchesTheDoubleProducts)
{
    const bool wide = std::get<0>(GetParam());
    const int64_t l = std::get<1>(GetParam());
    // m = 17 + l (past a 16-row transpose, unlike l); d: one full block, then 3 tiles of 16 and 7 +
    // l columns (a partial block that ends in a partial tile for every SIMD tile width).
    const int64_t m = 17 + l;
    const int64_t d = kSketchBlock + 3 * 16 + 7 + l;
    const Problem p = MakeProblem(wide ? m : d, wide ? d : m, l, 100 + l + (wide ? 50 : 0));
    std::vector<double> w_ref(static_cast<size_t>(d * l));
    std::vector<double> z_ref(static_cast<size_t>(m * l));
    std::vector<double> w_scale(w_ref.size()); // sum |terms|: the scale of each entry's error
    std::vector<double> z_scale(z_ref.size());
    for (int64_t c = 0; c < d; ++c)
        for (int64_t j = 0; j < l; ++j)
            for (int64_t i = 0; i < m; ++i)
            {
                const double t = static_cast<double>(p.At(i, c)) * p.q[i * l + j];
                w_ref[c * l + j] += t;
                w_scale[c * l + j] += std::fabs(t);
            }
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < l; ++j)
            for (int64_t c = 0; c < d; ++c)
            {
                const double t = static_cast<double>(p.At(i, c)) * w_ref[c * l + j];
                z_ref[i * l + j] += t;
                z_scale[i * l + j] += std::fabs(t);
            }
    for (SketchIsa isa : SupportedIsas())
    {
        SCOPED_TRACE(Name(isa));
        const Result r = RunKernel(isa, p);
        // The fp32 error bound of a chain of n terms, n u sum |terms| (u = 2^-24, here 7e-8):
        // n = m for W; for Z, W's own error plus a chain of up to kSketchBlock terms and the
        // block sums.
        for (size_t k = 0; k < w_ref.size(); ++k)
            ASSERT_LE(std::fabs(r.w[k] - w_ref[k]), 7e-8 * (m + 1) * w_scale[k]) << k;
        for (size_t k = 0; k < z_ref.size(); ++k)
            ASSERT_LE(std::fabs(r.z[k] - z_ref[k]), 7e-8 * (kSketchBlock + 2 * m + 4) * z_scale[k])
                << k;
        // H = W^T W of the W it returned, symmetric bit for bit.
        for (int64_t j = 0; j < l; ++j)
            for (int64_t k = 0; k < l; ++k)
            {
                double ref = 0.0;
                double scale = 0.0;
                for (int64_t c = 0; c < d; ++c)
                {
                    const double t = static_cast<double>(r.w[c * l + j]) * r.w[c * l + k];
                    ref += t;
                    scale += std::fabs(t);
                }
                ASSERT_LE(std::fabs(r.h[j * l + k] - ref), 7e-8 * (kSketchBlock + 4) * scale)
                    << j << "," << k;
                ASSERT_EQ(r.h[j * l + k], r.h[k * l + j]) << j << "," << k;
            }
        // Without Z and H: the same W.
        EXPECT_TRUE(BitEqual(RunKernel(isa, p, false).w, r.w));
    }
}

INSTANTIATE_TEST_SUITE_P(BothOrdersEveryWidth, SketchKernelWidth,
                         ::testing::Combine(::testing::Bool(), ::testing::Range(1, 17)));

TEST(SketchKernel, SimdPathsEqualThePortablePathBitForBit)
{
    if (SupportedIsas().size() == 1)
        GTEST_SKIP() << "this host runs no SIMD path";
    // The fixture's shapes (m = 64; d = 3584, 512 and 18944 have partial last blocks) and odd ones.
    const struct
    {
        int64_t m, d;
    } shapes[] = {{64, 3584}, {64, 512}, {64, 18944}, {17, 2 * kSketchBlock + 13}, {1, 40}, {3, 2}};
    for (const auto& s : shapes)
        for (bool wide : {true, false})
            for (int64_t l = 1; l <= kSketchKernelMaxWidth; ++l)
            {
                if (s.d > 4096 && l != 2 && l != 16)
                    continue; // the long shape at one width with chains, one without
                SCOPED_TRACE(::testing::Message()
                             << s.m << "x" << s.d << " wide " << wide << " l " << l);
                const Problem p = MakeProblem(wide ? s.m : s.d, wide ? s.d : s.m, l, 7 * l + s.d);
                const Result ref = RunKernel(SketchIsa::kPortable, p);
                for (SketchIsa isa : SupportedIsas())
                {
                    if (isa == SketchIsa::kPortable)
                        continue;
                    const Result r = RunKernel(isa, p);
                    EXPECT_TRUE(BitEqual(r.w, ref.w)) << Name(isa);
                    EXPECT_TRUE(BitEqual(r.z, ref.z)) << Name(isa);
                    EXPECT_TRUE(BitEqual(r.h, ref.h)) << Name(isa);
                }
            }
}

TEST(SketchKernel, FollowsTheDocumentedSummationOrder)
{
    // sketch-kernel.h's order written out as plain loops: W by fma chains over i; Z by G
    // interleaved fma chains over each block's columns (G = 16, 8, 4, 2 for l = 1, 2, 3-4, 5-8; 1
    // above), the chains added in order from +0, then the block sums; H like Z with one chain.
    for (bool wide : {true, false})
        for (int64_t l : {1, 2, 3, 5, 8, 9, 16})
        {
            const int64_t chains = l == 1 ? 16 : l == 2 ? 8 : l <= 4 ? 4 : l <= 8 ? 2 : 1;
            const int64_t m = 19;
            const int64_t d = 2 * kSketchBlock + 21;
            const Problem p = MakeProblem(wide ? m : d, wide ? d : m, l, 900 + l);
            std::vector<float> w(static_cast<size_t>(d * l));
            std::vector<float> z(static_cast<size_t>(m * l), 0.0f);
            std::vector<float> h(static_cast<size_t>(l * l), 0.0f);
            for (int64_t c = 0; c < d; ++c)
                for (int64_t j = 0; j < l; ++j)
                {
                    float acc = 0.0f;
                    for (int64_t i = 0; i < m; ++i)
                        acc = std::fma(p.At(i, c), p.q[i * l + j], acc);
                    w[c * l + j] = acc;
                }
            for (int64_t c0 = 0; c0 < d; c0 += kSketchBlock)
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < l; ++j)
                    {
                        float zb = 0.0f;
                        for (int64_t g = 0; g < chains; ++g)
                        {
                            float chain = 0.0f;
                            for (int64_t c = c0 + g; c < std::min(d, c0 + kSketchBlock);
                                 c += chains)
                                chain = std::fma(p.At(i, c), w[c * l + j], chain);
                            zb += chain;
                        }
                        z[i * l + j] += zb;
                    }
            for (int64_t c0 = 0; c0 < d; c0 += kSketchBlock)
                for (int64_t j = 0; j < l; ++j)
                    for (int64_t k = 0; k < l; ++k)
                    {
                        float hb = 0.0f;
                        for (int64_t c = c0; c < std::min(d, c0 + kSketchBlock); ++c)
                            hb = std::fma(w[c * l + j], w[c * l + k], hb);
                        h[j * l + k] += hb;
                    }
            for (SketchIsa isa : SupportedIsas())
            {
                const Result r = RunKernel(isa, p);
                EXPECT_TRUE(BitEqual(r.w, w)) << Name(isa) << " wide " << wide << " l " << l;
                EXPECT_TRUE(BitEqual(r.z, z)) << Name(isa) << " wide " << wide << " l " << l;
                EXPECT_TRUE(BitEqual(r.h, h)) << Name(isa) << " wide " << wide << " l " << l;
            }
        }
}

TEST(SketchKernel, SketchPassUsesItAndRepeatsOnAnyThread)
{
    for (bool wide : {true, false})
        for (int64_t l : {2, 4, 8, 16})
        {
            const Problem p = MakeProblem(wide ? 64 : 3584, wide ? 3584 : 64, l, 40 + l);
            const Result best = RunKernel(BestSketchIsa(), p);
            // SketchPass on this thread and on two others at once: the same bits each time.
            std::vector<Result> got(3, Result{std::vector<float>(best.w.size()),
                                              std::vector<float>(best.z.size()),
                                              std::vector<float>(best.h.size())});
            auto pass = [&p](Result* r) {
                SketchPass(p.x.data(), p.rows, p.cols, p.q.data(), p.l, r->w.data(), r->z.data(),
                           r->h.data());
            };
            pass(&got[0]);
            std::thread a(pass, &got[1]);
            std::thread b(pass, &got[2]);
            a.join();
            b.join();
            for (const Result& r : got)
            {
                EXPECT_TRUE(BitEqual(r.w, best.w)) << "wide " << wide << " l " << l;
                EXPECT_TRUE(BitEqual(r.z, best.z)) << "wide " << wide << " l " << l;
                EXPECT_TRUE(BitEqual(r.h, best.h)) << "wide " << wide << " l " << l;
            }
        }
}

} // namespace
} // namespace hilo
