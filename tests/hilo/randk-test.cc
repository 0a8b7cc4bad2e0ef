// randk: the seed travels (any decoder rebuilds the indices), every payload draws a new subset,
// strata give sorted distinct indices with uniform coverage, and the unbiased option scales.
#include "hilo/compress/randk.h"
#include "hilo/core/coding.h"
#include "tests/hilo/compress-test-util.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

using testing::LoraLayout;
using testing::MakeCompressor;

TEST(RandK, IndicesAreSortedDistinctAndOnePerStratum)
{
    for (int64_t n : {1, 10, 1000, 123457})
    {
        for (int64_t k : {int64_t{1}, n / 7 + 1, n})
        {
            int64_t prev = -1;
            for (int64_t j = 0; j < k; ++j)
            {
                const int64_t i = RandKIndex(99, j, k, n);
                ASSERT_GT(i, prev);
                ASSERT_LT(i, n);
                ASSERT_GE(i, j * n / k);
                ASSERT_LT(i, (j + 1) * n / k);
                prev = i;
            }
        }
    }
}

TEST(RandK, CoverageIsUniformAcrossSeeds)
{
    const int64_t n = 100, k = 10;
    std::vector<int> hits(n, 0);
    for (uint64_t seed = 0; seed < 20000; ++seed)
        for (int64_t j = 0; j < k; ++j)
            ++hits[static_cast<size_t>(RandKIndex(seed, j, k, n))];
    for (int h : hits) // expected 2000 each
        EXPECT_NEAR(h, 2000, 200);
}

TEST(RandK, SeedTravelsAndEveryPayloadDrawsAFreshSubset)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 1);
    auto learner = MakeCompressor("randk", layout, "dtype=fp32;seed=5");
    auto worker =
        MakeCompressor("randk", layout, "dtype=fp32;seed=77"); // seed option: encoder only
    StatusOr<Encoded> a = learner->Encode(x, layout.adapter_bytes() / 10);
    StatusOr<Encoded> b = learner->Encode(x, layout.adapter_bytes() / 10);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->payload, b->payload);
    std::vector<float> da, db;
    ASSERT_TRUE(worker->Decode(a->payload, &da).ok());
    ASSERT_TRUE(worker->Decode(b->payload, &db).ok());
    int64_t kept = 0, same = 0;
    for (size_t i = 0; i < x.size(); ++i)
    {
        if (da[i] != 0.0f)
        {
            EXPECT_EQ(da[i], x[i]); // fp32: kept entries are exact
            ++kept;
            same += db[i] != 0.0f;
        }
    }
    int64_t reported = 0;
    for (int64_t k : a->kept_per_matrix)
        reported += k;
    EXPECT_EQ(kept, reported);
    EXPECT_LT(same, kept / 2);
    // A learner rebuilt from the same options replays the same seed stream.
    auto again = MakeCompressor("randk", layout, "dtype=fp32;seed=5");
    EXPECT_EQ(again->Encode(x, layout.adapter_bytes() / 10)->payload, a->payload);
}

TEST(RandK, UnbiasedScalesByNOverK)
{
    const AdapterLayout layout = LoraLayout();
    std::vector<float> x(static_cast<size_t>(layout.numel()), 1.0f);
    auto c = MakeCompressor("randk", layout, "dtype=fp32;unbiased=true");
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() / 4);
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    double sum = 0;
    for (float v : out)
        sum += v;
    EXPECT_NEAR(sum, static_cast<double>(layout.numel()), 1e-3 * layout.numel());
}

TEST(RandK, KLargerThanTheAdapterIsCorruption)
{
    const AdapterLayout layout = LoraLayout(1, 2, 4, 8);
    auto c = MakeCompressor("randk", layout, "dtype=bf16");
    std::string p;
    ByteWriter w(&p);
    w.PutU8(1);
    w.PutU8(0);
    w.PutU64(3);
    w.PutVarint(static_cast<uint64_t>(layout.numel() + 1));
    p += std::string(static_cast<size_t>(2 * (layout.numel() + 1)), '\0');
    std::vector<float> out;
    EXPECT_EQ(c->Decode(p, &out).code(), StatusCode::kCorruption);
}

} // namespace
} // namespace hilo
