// topk and its Elias-Fano index coding: exact selection with deterministic ties, the closed-form
// size, per-matrix scope, and rejection of inconsistent index blocks.
#include "hilo/compress/elias-fano.h"
#include "hilo/compress/topk.h"
#include "hilo/core/parallel.h"
#include "tests/hilo/compress-test-util.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace hilo
{
namespace
{

using testing::LoraLayout;
using testing::MakeCompressor;

std::vector<int64_t>
ReferenceTopK(const std::vector<float>& x, int64_t k)
{
    std::vector<int64_t> idx(x.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](int64_t a, int64_t b) { return std::fabs(x[a]) > std::fabs(x[b]); });
    idx.resize(static_cast<size_t>(k));
    std::sort(idx.begin(), idx.end());
    return idx;
}

TEST(SelectLargestMagnitudes, MatchesASortWithLowIndexTieBreakForEveryThreadCount)
{
    std::mt19937_64 gen(1);
    // 1,100,003 values make 4 fixed parts (one per 2^18 values, at most 16), so the selection
    // really splits across two threads; the smaller sizes take the single-part path.
    for (int64_t n : {1, 7, 1000, 300000, 1100003})
    {
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) // many exact ties: few distinct magnitudes, both signs
            v = static_cast<float>(static_cast<int>(gen() % 50) - 25) * 0.125f;
        for (int64_t k : {int64_t{0}, int64_t{1}, n / 3, n - 1, n})
        {
            if (k < 0)
                continue;
            const std::vector<int64_t> want = ReferenceTopK(x, k);
            for (int threads : {1, 2})
            {
                at::set_num_threads(threads);
                std::vector<int64_t> got;
                ParallelTally tally;
                SelectLargestMagnitudes(x.data(), n, k, &got);
                EXPECT_EQ(got, want) << "n " << n << " k " << k << " threads " << threads;
                if (n >= (1 << 19) && k > 0 && k < n)
                {
                    EXPECT_EQ(tally.threads(), threads) << "n " << n << " k " << k;
                }
            }
        }
    }
    at::set_num_threads(2);
}

TEST(EliasFano, RoundTripsAndHasTheClosedFormSize)
{
    std::mt19937_64 gen(2);
    for (int64_t n : {1, 2, 100, 1 << 20})
    {
        for (int64_t k : {int64_t{0}, int64_t{1}, n / 50, n / 2, n})
        {
            std::vector<int64_t> all(static_cast<size_t>(n));
            std::iota(all.begin(), all.end(), 0);
            std::shuffle(all.begin(), all.end(), gen);
            std::vector<int64_t> idx(all.begin(), all.begin() + k);
            std::sort(idx.begin(), idx.end());
            const int l = EliasFanoBestLowBits(k, n);
            std::string p;
            ByteWriter w(&p);
            PutEliasFano(&w, idx.data(), k, n, l);
            EXPECT_EQ(static_cast<int64_t>(p.size()), EliasFanoBytes(k, n, l));
            if (k > 0 && n >= 64) // within ~2 bits per index plus rounding of log2(n/k)
            {
                EXPECT_LE(8.0 * p.size(), k * (std::log2(static_cast<double>(n) / k) + 3.0) + 24);
            }
            ByteReader r(p);
            std::vector<int64_t> back;
            ASSERT_TRUE(GetEliasFano(&r, k, n, &back));
            EXPECT_EQ(back, idx);
            EXPECT_TRUE(r.empty());
        }
    }
}

TEST(EliasFano, RejectsInconsistentBlocks)
{
    const int64_t n = 1000;
    std::vector<int64_t> idx = {3, 17, 500, 999};
    std::string p;
    ByteWriter w(&p);
    PutEliasFano(&w, idx.data(), 4, n, EliasFanoBestLowBits(4, n));
    std::vector<int64_t> out;
    {
        ByteReader r(p); // claims more indices than the bits hold
        EXPECT_FALSE(GetEliasFano(&r, 5, n, &out));
    }
    {
        ByteReader r(p.substr(0, p.size() - 1)); // truncated
        EXPECT_FALSE(GetEliasFano(&r, 4, n, &out));
    }
    {
        std::string q = p;
        q[0] = 60; // L out of range
        ByteReader r(q);
        EXPECT_FALSE(GetEliasFano(&r, 4, n, &out));
    }
    {
        ByteReader r(p); // universe smaller than the largest index
        EXPECT_FALSE(GetEliasFano(&r, 4, 999, &out));
    }
    {
        ByteReader r(p); // k > n
        EXPECT_FALSE(GetEliasFano(&r, 2000, n, &out));
    }
}

TEST(TopK, KeepsExactlyTheLargestEntriesAtFp32)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 3);
    auto c = MakeCompressor("topk", layout, "dtype=fp32");
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() / 10);
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    int64_t kept = 0;
    for (int64_t k : e->kept_per_matrix)
        kept += k;
    const std::vector<int64_t> want = ReferenceTopK(x, kept);
    std::vector<float> expect(x.size(), 0.0f);
    for (int64_t i : want)
        expect[static_cast<size_t>(i)] = x[static_cast<size_t>(i)];
    EXPECT_EQ(out, expect);
    // Index bytes are far below a 4-byte index: the Elias-Fano coding is being used.
    EXPECT_LT(static_cast<double>(e->payload.size()) / kept, 4.0 + 1.5);
}

TEST(TopK, PerMatrixGivesEveryMatrixItsShare)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 4);
    auto c = MakeCompressor("topk", layout, "scope=per_matrix");
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() / 8);
    ASSERT_TRUE(e.ok());
    int64_t total = 0;
    for (int64_t k : e->kept_per_matrix)
        total += k;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const double share = static_cast<double>(layout.matrix(i).numel()) / layout.numel();
        EXPECT_NEAR(e->kept_per_matrix[i], share * total, 1.0 + 0.01 * total);
    }
}

TEST(TopK, KGrowsWithTheBudget)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 5);
    auto c = MakeCompressor("topk", layout, "");
    int64_t prev = -1;
    for (int64_t b = c->MinPayloadBytes(); b < layout.adapter_bytes(); b += 997)
    {
        StatusOr<Encoded> e = c->Encode(x, b);
        ASSERT_TRUE(e.ok());
        int64_t k = 0;
        for (int64_t v : e->kept_per_matrix)
            k += v;
        EXPECT_GE(k, prev);
        // Tight: one more entry would not have fitted (2 value bytes + at most 2 index bytes).
        EXPECT_GT(static_cast<int64_t>(e->payload.size()) + 5, b);
        prev = k;
    }
}

} // namespace
} // namespace hilo
