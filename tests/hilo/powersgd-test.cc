// powersgd: the warm start converges on a fixed low-rank signal, the rank follows the budget, and
// the built-in error feedback is the same arithmetic as the ErrorFeedback wrapper.
#include "hilo/compress/error-feedback.h"
#include "hilo/compress/powersgd.h"
#include "hilo/core/coding.h"
#include "tests/hilo/compress-test-util.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

using testing::LoraLayout;
using testing::MakeCompressor;

TEST(PowerSgd, WarmStartReducesErrorOnAFixedLowRankSignal)
{
    const AdapterLayout layout = LoraLayout();
    // Rank-8 matrices with slowly decaying spectra; compress at rank 2 (max_rank caps it).
    const std::vector<float> x = testing::SpectralGradient(layout, 12, 0.0, 0.3, 0.6);
    auto c = MakeCompressor("powersgd", layout, "dtype=fp32;max_rank=2");
    auto spar = MakeCompressor("spar", layout, "allocation=uniform;dtype=fp32");
    std::vector<float> out;
    std::vector<double> errs;
    for (int step = 0; step < 12; ++step)
    {
        StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes());
        ASSERT_TRUE(e.ok());
        ASSERT_TRUE(c->Decode(e->payload, &out).ok());
        errs.push_back(testing::RelativeError(out, x));
    }
    EXPECT_LT(errs.back(), errs.front() * 0.9);
    for (size_t t = 1; t < errs.size(); ++t)
        EXPECT_LE(errs[t], errs[t - 1] * 1.0001) << "step " << t;
    // Converged to (nearly) the best rank-2 approximation: compare with spar at the same ranks.
    StatusOr<Encoded> best = spar->Encode(x, c->Encode(x, layout.adapter_bytes())->payload.size() +
                                                 layout.size() + 64 * 4);
    ASSERT_TRUE(best.ok());
    std::vector<float> s;
    ASSERT_TRUE(spar->Decode(best->payload, &s).ok());
    EXPECT_LT(errs.back(), testing::RelativeError(s, x) * 1.05);
}

TEST(PowerSgd, RankFollowsTheBudget)
{
    const AdapterLayout layout = LoraLayout(); // every matrix has min(rows, cols) = 8
    const std::vector<float> x = testing::SpectralGradient(layout, 1);
    auto c = MakeCompressor("powersgd", layout, "dtype=bf16");
    int64_t per_rank = 0;
    for (const MatrixSpec& s : layout.matrices())
        per_rank += 2 * (s.rows + s.cols);
    for (int64_t k = 1; k <= 8; ++k)
    {
        StatusOr<Encoded> e = c->Encode(x, 3 + k * per_rank);
        ASSERT_TRUE(e.ok());
        EXPECT_EQ(e->kept_per_matrix[0], k);
        EXPECT_EQ(static_cast<int64_t>(e->payload.size()), 3 + k * per_rank);
    }
    EXPECT_EQ(c->MinPayloadBytes(), 3 + per_rank);
}

TEST(PowerSgd, BuiltInErrorFeedbackEqualsTheWrapper)
{
    const AdapterLayout layout = LoraLayout();
    auto inner = MakeCompressor("powersgd", layout, "dtype=fp32;error_feedback=true;max_rank=1");
    auto plain = MakeCompressor("powersgd", layout, "dtype=fp32;error_feedback=false;max_rank=1");
    ErrorFeedback ef(layout.numel(), ErrorFeedbackOptions{true, 1.0f});
    std::vector<float> a, b, x;
    for (int step = 0; step < 4; ++step)
    {
        const std::vector<float> g = testing::SpectralGradient(layout, 100 + step);
        StatusOr<Encoded> ea = inner->Encode(g, layout.adapter_bytes());
        ef.Accumulate(g, &x);
        StatusOr<Encoded> eb = plain->Encode(x, layout.adapter_bytes());
        ASSERT_TRUE(ea.ok() && eb.ok());
        EXPECT_EQ(ea->payload, eb->payload) << "step " << step;
        ASSERT_TRUE(plain->Decode(eb->payload, &b).ok());
        ef.Absorb(x, b);
    }
}

TEST(PowerSgd, RankBeyondEveryMatrixIsCorruption)
{
    const AdapterLayout layout = LoraLayout(1, 4, 16, 24);
    auto c = MakeCompressor("powersgd", layout, "dtype=fp32");
    std::string p;
    ByteWriter w(&p);
    w.PutU8(0);
    w.PutVarint(layout.size());
    w.PutVarint(5);
    std::vector<float> out;
    EXPECT_EQ(c->Decode(p, &out).code(), StatusCode::kCorruption);
}

} // namespace
} // namespace hilo
