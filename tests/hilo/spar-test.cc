// Spar: the allocation against a brute-force optimum, monotone captured energy, agreement with a
// LAPACK SVD truncation, and the payload checks specific to its format.
#include "hilo/compress/factor-coding.h"
#include "hilo/compress/spar.h"
#include "hilo/core/coding.h"
#include "tests/hilo/compress-test-util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace hilo
{
namespace
{

using testing::LoraLayout;
using testing::MakeCompressor;
using testing::SpectralGradient;

double
Gain(const std::vector<SparCandidates>& m, const std::vector<int64_t>& ks)
{
    double g = 0;
    for (size_t i = 0; i < m.size(); ++i)
        for (int64_t j = 0; j < ks[i]; ++j)
            g += m[i].gains[static_cast<size_t>(j)];
    return g;
}

int64_t
Cost(const std::vector<SparCandidates>& m, const std::vector<int64_t>& ks)
{
    int64_t c = 0;
    for (size_t i = 0; i < m.size(); ++i)
        c += ks[i] * m[i].cost;
    return c;
}

/// The best total gain over every (k_1, ..., k_n) that fits, by exhaustive search.
double
BruteForceBest(const std::vector<SparCandidates>& m, int64_t budget)
{
    double best = 0;
    std::vector<int64_t> ks(m.size(), 0);
    std::function<void(size_t, int64_t, double)> rec = [&](size_t i, int64_t used, double gain)
    {
        if (i == m.size())
        {
            best = std::max(best, gain);
            return;
        }
        double g = gain;
        for (size_t k = 0; k <= m[i].gains.size(); ++k)
        {
            if (used + static_cast<int64_t>(k) * m[i].cost > budget)
                break;
            rec(i + 1, used + static_cast<int64_t>(k) * m[i].cost, g);
            if (k < m[i].gains.size())
                g += m[i].gains[k];
        }
    };
    rec(0, 0, 0.0);
    return best;
}

std::vector<SparCandidates>
RandomSpectra(std::mt19937_64& gen, size_t n, size_t m)
{
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    std::vector<SparCandidates> out(n);
    for (auto& c : out)
    {
        c.cost = 5 + static_cast<int64_t>(gen() % 40);
        const double alpha = 0.3 + 2.0 * unif(gen);
        const double scale = std::pow(10.0, 2.0 * unif(gen));
        for (size_t j = 0; j < m; ++j)
            c.gains.push_back(scale * std::pow(j + 1.0, -2.0 * alpha));
    }
    return out;
}

TEST(SparAllocate, GreedyIsWithinOneTripletOfTheBruteForceOptimum)
{
    std::mt19937_64 gen(3);
    for (int trial = 0; trial < 200; ++trial)
    {
        const auto m = RandomSpectra(gen, 2 + trial % 3, 2 + trial % 4);
        double max_gain = 0;
        int64_t total_cost = 0;
        for (const auto& c : m)
        {
            max_gain = std::max(max_gain, c.gains[0]);
            total_cost += c.cost * static_cast<int64_t>(c.gains.size());
        }
        const int64_t budget = static_cast<int64_t>(gen() % (total_cost + 1));
        StatusOr<std::vector<int64_t>> ks = SparAllocate(m, budget, 0, SparAllocation::kGreedy);
        ASSERT_TRUE(ks.ok());
        EXPECT_LE(Cost(m, *ks), budget);
        const double greedy = Gain(m, *ks);
        const double best = BruteForceBest(m, budget);
        EXPECT_LE(greedy, best * (1 + 1e-12));
        EXPECT_GE(greedy + max_gain * (1 + 1e-12), best) << "trial " << trial;
    }
}

TEST(SparAllocate, GainIsMonotoneInTheBudget)
{
    std::mt19937_64 gen(5);
    for (int trial = 0; trial < 20; ++trial)
    {
        const auto m = RandomSpectra(gen, 6, 8);
        double prev = -1;
        for (int64_t budget = 0; budget <= 1500; budget += 7)
        {
            StatusOr<std::vector<int64_t>> ks = SparAllocate(m, budget, 0, SparAllocation::kGreedy);
            ASSERT_TRUE(ks.ok());
            const double g = Gain(m, *ks);
            EXPECT_GE(g, prev) << "trial " << trial << " budget " << budget;
            prev = g;
        }
    }
}

TEST(SparAllocate, MinRankUniformAndTooSmall)
{
    std::vector<SparCandidates> m(3);
    m[0] = {10, {100, 1, 1}};
    m[1] = {20, {5, 4, 3, 2}};
    m[2] = {10, {50}};
    // Uniform: the largest common k (capped per matrix): k=2 costs 20 + 40 + 10 = 70.
    StatusOr<std::vector<int64_t>> u = SparAllocate(m, 75, 0, SparAllocation::kUniform);
    ASSERT_TRUE(u.ok());
    EXPECT_EQ(*u, (std::vector<int64_t>{2, 2, 1}));
    // Greedy by gain/cost: 100/10, 50/10, 5/20, 4/20, 3/20 ... with 60 bytes.
    StatusOr<std::vector<int64_t>> g = SparAllocate(m, 60, 0, SparAllocation::kGreedy);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(*g, (std::vector<int64_t>{1, 2, 1}));
    // min_rank=1 forces a triplet everywhere first.
    StatusOr<std::vector<int64_t>> r = SparAllocate(m, 40, 1, SparAllocation::kGreedy);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, (std::vector<int64_t>{1, 1, 1}));
    EXPECT_EQ(SparAllocate(m, 39, 1, SparAllocation::kGreedy).status().code(),
              StatusCode::kBudgetTooSmall);
}

TEST(Spar, MatchesLapackSvdTruncationAtTheAllocatedRanks)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = SpectralGradient(layout, 21, 1e-4);
    auto c = MakeCompressor("spar", layout, "dtype=fp32");
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() / 8);
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        at::Tensor xi =
            at::from_blob(const_cast<float*>(x.data()) + layout.offset(i), {s.rows, s.cols})
                .to(at::kDouble);
        auto [u, sv, vh] = at::linalg_svd(xi, /*full_matrices=*/false);
        const int64_t k = e->kept_per_matrix[i];
        at::Tensor best =
            at::mm(u.narrow(1, 0, k) * sv.narrow(0, 0, k).unsqueeze(0), vh.narrow(0, 0, k));
        at::Tensor got =
            at::from_blob(out.data() + layout.offset(i), {s.rows, s.cols}).to(at::kDouble);
        const double scale = sv[0].item<double>();
        EXPECT_LT((got - best).abs().max().item<double>(), 1e-4 * scale) << "matrix " << i;
    }
}

TEST(Spar, CapturedEnergyIsMonotoneInTheBudget)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = SpectralGradient(layout, 4, 1e-3);
    auto c = MakeCompressor("spar", layout, "dtype=fp32");
    double prev_err = 2.0;
    std::vector<float> out;
    for (int64_t budget = c->MinPayloadBytes(); budget <= layout.adapter_bytes() * 5;
         budget += layout.adapter_bytes() / 20)
    {
        StatusOr<Encoded> e = c->Encode(x, budget);
        ASSERT_TRUE(e.ok());
        ASSERT_TRUE(c->Decode(e->payload, &out).ok());
        const double err = testing::RelativeError(out, x);
        EXPECT_LE(err, prev_err + 1e-6) << "budget " << budget;
        prev_err = std::min(prev_err, err);
    }
    EXPECT_LT(prev_err, 1e-5);
}

TEST(Spar, GreedyBeatsUniformOnUnevenSpectra)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = SpectralGradient(layout, 8, 1e-4);
    auto greedy = MakeCompressor("spar", layout, "dtype=bf16");
    auto uniform = MakeCompressor("spar", layout, "allocation=uniform;dtype=bf16");
    std::vector<float> a, b;
    // Uniform's smallest payload holds one triplet per matrix; half again lets neither fill it.
    const int64_t budget = uniform->MinPayloadBytes() * 3 / 2;
    ASSERT_TRUE(greedy->Decode(greedy->Encode(x, budget)->payload, &a).ok());
    ASSERT_TRUE(uniform->Decode(uniform->Encode(x, budget)->payload, &b).ok());
    EXPECT_LT(testing::RelativeError(a, x), testing::RelativeError(b, x));
}

TEST(Spar, KeptRanksRespectMinRankAndUniformMode)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = SpectralGradient(layout, 9);
    auto c = MakeCompressor("spar", layout, "allocation=uniform;min_rank=2");
    EXPECT_EQ(c->Encode(x, layout.adapter_bytes() / 5).status().code(),
              StatusCode::kBudgetTooSmall); // two triplets everywhere cost more
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() / 2);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    for (int64_t k : e->kept_per_matrix)
    {
        EXPECT_GE(k, 2);
        EXPECT_EQ(k, e->kept_per_matrix[0]);
    }
}

TEST(Spar, UniformNeverShipsAnEmptyUpdate)
{
    // A common k of 0 would drop the update: uniform's smallest payload is one triplet everywhere.
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = SpectralGradient(layout, 10);
    auto greedy = MakeCompressor("spar", layout, "dtype=bf16");
    auto uniform = MakeCompressor("spar", layout, "allocation=uniform;dtype=bf16");
    EXPECT_GT(uniform->MinPayloadBytes(), greedy->MinPayloadBytes());
    EXPECT_EQ(uniform->Encode(x, uniform->MinPayloadBytes() - 1).status().code(),
              StatusCode::kBudgetTooSmall);
    StatusOr<Encoded> e = uniform->Encode(x, uniform->MinPayloadBytes());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    for (int64_t k : e->kept_per_matrix)
    {
        EXPECT_EQ(k, 1);
    }
}

TEST(Spar, ZeroInputShipsOnlyTheHeader)
{
    const AdapterLayout layout = LoraLayout(1, 4, 16, 24);
    std::vector<float> x(static_cast<size_t>(layout.numel()), 0.0f);
    auto c = MakeCompressor("spar", layout, "dtype=fp32");
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes());
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(static_cast<int64_t>(e->payload.size()), c->MinPayloadBytes());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    EXPECT_EQ(out, x);
}

std::string
HandMadePayload(const AdapterLayout& layout, const std::vector<uint64_t>& ks, float sigma,
                float fill)
{
    std::string p;
    ByteWriter w(&p);
    w.PutU8(static_cast<uint8_t>(ValueDtype::kFp32));
    w.PutVarint(layout.size());
    for (uint64_t k : ks)
        w.PutVarint(k);
    for (size_t i = 0; i < layout.size(); ++i)
    {
        for (uint64_t j = 0; j < ks[i]; ++j)
        {
            w.PutF32(sigma);
            for (int64_t t = 0; t < layout.matrix(i).rows + layout.matrix(i).cols; ++t)
                w.PutF32(fill);
        }
    }
    return p;
}

TEST(Spar, InconsistentPayloadsAreCorruption)
{
    const AdapterLayout layout = LoraLayout(1, 4, 16, 24);
    auto c = MakeCompressor("spar", layout, "dtype=fp32");
    std::vector<uint64_t> ks(layout.size(), 1);
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(HandMadePayload(layout, ks, 1.0f, 0.5f), &out).ok());
    // k larger than the shape (min(rows, cols) = 4).
    std::vector<uint64_t> big = ks;
    big[2] = 5;
    EXPECT_EQ(c->Decode(HandMadePayload(layout, big, 1.0f, 0.5f), &out).code(),
              StatusCode::kCorruption);
    // An absurd k must not allocate: it is rejected from the header alone.
    std::string absurd;
    ByteWriter w(&absurd);
    w.PutU8(static_cast<uint8_t>(ValueDtype::kFp32));
    w.PutVarint(layout.size());
    w.PutVarint(uint64_t{1} << 60);
    EXPECT_EQ(c->Decode(absurd, &out).code(), StatusCode::kCorruption);
    // NaN and infinite sigma / values.
    EXPECT_EQ(c->Decode(HandMadePayload(layout, ks, std::nanf(""), 0.5f), &out).code(),
              StatusCode::kCorruption);
    EXPECT_EQ(c->Decode(HandMadePayload(layout, ks, 1.0f, INFINITY), &out).code(),
              StatusCode::kCorruption);
    // Wrong matrix count, wrong dtype, missing triplet bytes.
    std::string p = HandMadePayload(layout, ks, 1.0f, 0.5f);
    std::string wrong_count = p;
    wrong_count[1] = static_cast<char>(layout.size() + 1);
    EXPECT_EQ(c->Decode(wrong_count, &out).code(), StatusCode::kCorruption);
    std::string wrong_dtype = p;
    wrong_dtype[0] = 1;
    EXPECT_EQ(c->Decode(wrong_dtype, &out).code(), StatusCode::kCorruption);
    EXPECT_EQ(c->Decode(p.substr(0, p.size() - 4), &out).code(), StatusCode::kCorruption);
}

TEST(Spar, Int8ScalesThatAreNaNAreCorruption)
{
    const AdapterLayout layout = LoraLayout(1, 4, 16, 24);
    auto c = MakeCompressor("spar", layout, "dtype=int8");
    const std::vector<float> x = SpectralGradient(layout, 2);
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes());
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    EXPECT_LT(testing::RelativeError(out, x), 0.05);
    // The first triplet's u scale sits right after the header and sigma.
    const size_t header = 1 + 1 + layout.size();
    std::string p = e->payload;
    const float nan = std::nanf("");
    std::memcpy(&p[header + 4], &nan, 4);
    EXPECT_EQ(c->Decode(p, &out).code(), StatusCode::kCorruption);
}

TEST(FactorCoding, ReconstructionIsFixedOrderFp32)
{
    // Two triplets: out = l0 * r0 + l1 * r1 with one rounding per multiply and add.
    const float left[] = {1.5f, -2.0f, 0.25f, 3.0f}; // k=2, rows=2
    const float right[] = {1e8f, 1.0f, -1e8f, 1.0f}; // k=2, cols=2
    float out[4];
    LowRankReconstruct(2, 2, 2, left, right, out);
    EXPECT_EQ(out[0], 1.5f * 1e8f + 0.25f * -1e8f);
    EXPECT_EQ(out[1], 1.5f * 1.0f + 0.25f * 1.0f);
    EXPECT_EQ(out[2], -2.0f * 1e8f + 3.0f * -1e8f);
    LowRankReconstruct(2, 2, 0, left, right, out);
    EXPECT_EQ(out[3], 0.0f);
}

} // namespace
} // namespace hilo
