// powersgd: the warm start converges on a fixed low-rank signal, the rank follows the budget, and
// the built-in error feedback is the same arithmetic as the ErrorFeedback wrapper.
#include "hilo/compress/error-feedback.h"
#include "hilo/compress/powersgd.h"
#include "hilo/core/coding.h"
#include "tests/hilo/compress-test-util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

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

/// Per-matrix truncated-SVD error of `x` at rank k (the best any rank-k code can do), as
/// ||X - X_k|| / ||X|| over the whole buffer, in double.
double
TruncatedSvdError(const AdapterLayout& layout, const std::vector<float>& x, int64_t k)
{
    double err2 = 0.0, norm2 = 0.0;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        at::Tensor xi = at::from_blob(const_cast<float*>(x.data()) + layout.offset(i),
                                      {s.rows, s.cols}, at::kFloat)
                            .to(at::kDouble);
        at::Tensor sv = at::linalg_svdvals(xi);
        for (int64_t j = 0; j < sv.size(0); ++j)
        {
            const double v = sv[j].item<double>();
            norm2 += v * v;
            if (j >= k)
                err2 += v * v;
        }
    }
    return std::sqrt(err2 / norm2);
}

TEST(PowerSgd, FullRankReconstructsInOneIteration)
{
    // At k = min(rows, cols) P spans the whole column space, so P P^T M = M: one iteration from
    // the random start is exact up to fp32 rounding, for full-rank matrices of every shape.
    const AdapterLayout layout = LoraLayout(2, 8, 48, 96);
    const std::vector<float> x = testing::SpectralGradient(layout, 5, /*noise=*/1e-2);
    auto c = MakeCompressor("powersgd", layout, "dtype=fp32");
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() * 4);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e->kept_per_matrix[0], 8);
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    EXPECT_LT(testing::RelativeError(out, x), 1e-5);
}

TEST(PowerSgd, WarmStartReachesTheTruncatedSvdErrorInAFewSteps)
{
    const AdapterLayout layout = LoraLayout();
    // Rank-8 matrices, spectra decaying as j^-1 .. j^-2: compress the same matrix at rank 2.
    const std::vector<float> x = testing::SpectralGradient(layout, 12, 0.0, 1.0, 2.0);
    const double best = TruncatedSvdError(layout, x, 2);
    auto c = MakeCompressor("powersgd", layout, "dtype=fp32;max_rank=2");
    std::vector<float> out;
    double err = 0.0;
    for (int step = 0; step < 6; ++step)
    {
        StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes());
        ASSERT_TRUE(e.ok());
        ASSERT_TRUE(c->Decode(e->payload, &out).ok());
        err = testing::RelativeError(out, x);
    }
    EXPECT_GE(err, best * (1 - 1e-6));
    EXPECT_LT(err, best * 1.01) << "truncated-SVD error " << best;
}

TEST(PowerSgd, MatrixThatStartsAtZeroIsLearnedOnceItMoves)
{
    // LoRA's A factors get an exactly zero gradient while B is still zero (the usual init). A
    // warm start taken from that step is zero; the compressor must not stay stuck on it.
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = testing::SpectralGradient(layout, 3, /*noise=*/1e-3);
    std::vector<float> first = x;
    for (size_t i = 0; i < layout.size(); i += 2) // every lora_A
        std::fill(first.begin() + layout.offset(i),
                  first.begin() + layout.offset(i) + layout.matrix(i).numel(), 0.0f);
    auto c = MakeCompressor("powersgd", layout, "dtype=fp32");
    ASSERT_TRUE(c->Encode(first, layout.adapter_bytes() * 4).ok());
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() * 4);
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    EXPECT_LT(testing::RelativeError(out, x), 1e-5); // full rank: exact again
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

// A restored encoder continues bit-identically through the paths that draw fresh random warm
// starts: the rank changes with the budget (a new Q at the new rank) and a matrix that is all
// zero on some steps (its columns vanish and are refreshed from new draws). The draw counters are
// part of the local state; restored from counter 0 the encoder would draw other columns.
TEST(PowerSgd, RestoredLocalStateContinuesThroughRankChangesAndRefreshes)
{
    const AdapterLayout layout = LoraLayout();
    const std::string options = "dtype=fp32;error_feedback=true;max_rank=6";
    auto original = MakeCompressor("powersgd", layout, options);
    const int64_t min_bytes = original->MinPayloadBytes();
    const int64_t budget_steps[] = {1, 4, 2, 6, 3, 1, 5, 2, 4, 6, 1, 3};
    auto gradient = [&](int step)
    {
        std::vector<float> g = testing::SpectralGradient(layout, 300 + step);
        if (step % 3 != 0) // matrix 0 is zero on most steps: its warm-start columns vanish
        {
            std::fill(g.begin(), g.begin() + layout.matrix(0).numel(), 0.0f);
        }
        return g;
    };
    std::unique_ptr<Compressor> restored;
    std::set<int64_t> ranks;
    for (int step = 0; step < 12; ++step)
    {
        if (step == 5)
        {
            restored = MakeCompressor("powersgd", layout, options);
            ASSERT_TRUE(restored->RestoreLocalState(original->SaveLocalState()).ok());
            EXPECT_EQ(restored->SaveLocalState(), original->SaveLocalState());
        }
        const std::vector<float> g = gradient(step);
        const int64_t budget = min_bytes * budget_steps[step];
        StatusOr<Encoded> a = original->Encode(g, budget);
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        ranks.insert(a->kept_per_matrix.at(1));
        if (restored)
        {
            StatusOr<Encoded> b = restored->Encode(g, budget);
            ASSERT_TRUE(b.ok()) << b.status().ToString();
            EXPECT_EQ(a->payload, b->payload) << "step " << step;
        }
    }
    EXPECT_GE(ranks.size(), 4u) << "the budgets must change the rank";
}

TEST(PowerSgd, LocalStateWithAWarmStartButNoDrawIsRefused)
{
    const AdapterLayout layout = LoraLayout();
    auto c = MakeCompressor("powersgd", layout, "dtype=fp32;max_rank=2");
    ASSERT_TRUE(c->Encode(testing::SpectralGradient(layout, 1), c->MinPayloadBytes()).ok());
    std::string state = c->SaveLocalState();
    // The first matrix's draw counter (u64 after the u32 matrix count) set to 0.
    std::fill(state.begin() + 4, state.begin() + 12, '\0');
    auto fresh = MakeCompressor("powersgd", layout, "dtype=fp32;max_rank=2");
    EXPECT_EQ(fresh->RestoreLocalState(state).code(), StatusCode::kCorruption);
    EXPECT_EQ(fresh->SaveLocalState(),
              MakeCompressor("powersgd", layout, "dtype=fp32;max_rank=2")->SaveLocalState());
}

// fuzz-restore, regressions/fuzz-restore/powersgd-warm-start-columns-above-int64: a warm start
// whose u64 column count is above INT64_MAX passed the shape check as a negative int64 and made
// at::empty throw out of RestoreLocalState.
TEST(PowerSgd, LocalStateWithAHugeColumnCountIsCorruption)
{
    const AdapterLayout layout = LoraLayout();
    auto c = MakeCompressor("powersgd", layout, "dtype=fp32;max_rank=2");
    std::string state;
    ByteWriter w(&state);
    w.PutU32(static_cast<uint32_t>(layout.size()));
    w.PutU64(1);                                            // draws
    w.PutU64(static_cast<uint64_t>(layout.matrix(0).cols)); // rows of Q
    w.PutU64(~uint64_t{0});                                 // cols of Q
    EXPECT_EQ(c->RestoreLocalState(state).code(), StatusCode::kCorruption);
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
