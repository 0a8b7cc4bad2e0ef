// The spectra shared by spar and sparq: sketched gains never above the exact ones, sketched
// triplets that are exact projections of X, saturated matrices redone exactly, and encodes that
// do not depend on the thread count.
#include "hilo/compress/spar.h"
#include "hilo/compress/sparq.h"
#include "hilo/compress/spectral-truncation.h"
#include "hilo/core/parallel.h"
#include "tests/hilo/compress-test-util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

namespace hilo
{
namespace
{

using testing::MakeCompressor;
using testing::RelativeError;
using testing::SpectralGradient;

// Rank 32 > the sketch width 8, so every matrix is sketched first.
AdapterLayout
Rank32()
{
    return testing::LoraLayout(2, 32, 96, 192);
}

std::vector<int64_t>
TripletBytes(const AdapterLayout& layout)
{
    std::vector<int64_t> out;
    for (const MatrixSpec& s : layout.matrices())
        out.push_back(4 + 4 * (s.rows + s.cols));
    return out;
}

at::Tensor
MatrixOf(const std::vector<float>& x, const AdapterLayout& layout, size_t i)
{
    const MatrixSpec& s = layout.matrix(i);
    return at::from_blob(const_cast<float*>(x.data()) + layout.offset(i), {s.rows, s.cols})
        .to(at::kDouble);
}

TEST(SpectralTruncation, SketchedGainsAreRitzValuesAndTripletsAreExactProjections)
{
    const AdapterLayout layout = Rank32();
    const std::vector<float> x = SpectralGradient(layout, 3, 1e-3);
    SpectralTruncation sketch(layout, 8, false);
    const int64_t budget = layout.adapter_bytes() / 50;
    StatusOr<SpectralPlan> plan =
        sketch.Plan(x, TripletBytes(layout), budget, 0, SparAllocation::kGreedy, "test");
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    int sketched = 0;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpectrum& sp = plan->spectra[i];
        const at::Tensor xi = MatrixOf(x, layout, i);
        const at::Tensor sv = at::linalg_svdvals(xi);
        if (sp.exact)
            continue;
        ++sketched;
        ASSERT_EQ(sp.gains.size(), 8u);
        const bool short_rows = xi.size(0) <= xi.size(1);
        const at::Tensor projected = sketch.Projected(x, i, sp, 8).to(at::kDouble);
        for (int64_t j = 0; j < 8; ++j)
        {
            const double exact = sv[j].item<double>() * sv[j].item<double>();
            // Rayleigh-Ritz: never above the true sigma_j^2 (Cauchy interlacing).
            EXPECT_LE(sp.gains[static_cast<size_t>(j)], exact * (1 + 1e-4)) << i << " " << j;
            // u_j unit, and the long side is X^T u_j, recomputed here in double.
            const at::Tensor u = sp.basis.select(1, j).to(at::kDouble);
            EXPECT_NEAR(u.norm().item<double>(), 1.0, 1e-5);
            const at::Tensor want = short_rows ? at::mv(xi.t(), u) : at::mv(xi, u);
            const double scale = sv[0].item<double>();
            EXPECT_LT((projected.select(1, j) - want).abs().max().item<double>(), 1e-4 * scale)
                << "matrix " << i << " triplet " << j;
            EXPECT_NEAR(want.norm().item<double>() * want.norm().item<double>(),
                        sp.gains[static_cast<size_t>(j)], 1e-4 * scale * scale);
        }
        // The leading Ritz value holds a good part of sigma_1^2 even on the flattest spectra.
        EXPECT_GT(sp.gains[0], 0.5 * sv[0].item<double>() * sv[0].item<double>()) << i;
    }
    EXPECT_GT(sketched, 0); // the budget leaves some matrices on their sketch
}

TEST(SpectralTruncation, MatricesThatWantMoreThanTheirSketchAreRedoneExactly)
{
    const AdapterLayout layout = Rank32();
    const std::vector<float> x = SpectralGradient(layout, 4, 1e-3);
    SpectralTruncation sketch(layout, 8, false);
    SpectralTruncation exact(layout, 0, false);
    // Bytes for more triplets than a width-8 sketch offers (6) in every matrix: each saturates.
    const int64_t budget = layout.adapter_bytes() * 2;
    StatusOr<SpectralPlan> a =
        sketch.Plan(x, TripletBytes(layout), budget, 0, SparAllocation::kGreedy, "test");
    StatusOr<SpectralPlan> b =
        exact.Plan(x, TripletBytes(layout), budget, 0, SparAllocation::kGreedy, "test");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->ks, b->ks);
    int beyond_sketch = 0;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        EXPECT_TRUE(a->spectra[i].exact) << i;
        beyond_sketch += a->ks[i] > 6 ? 1 : 0;
    }
    EXPECT_GT(beyond_sketch, 0); // some matrices got more triplets than any sketch offers
    // min_rank above what a sketch offers also forces the exact spectrum.
    StatusOr<SpectralPlan> c = sketch.Plan(x, TripletBytes(layout), layout.adapter_bytes(), 7,
                                           SparAllocation::kGreedy, "test");
    ASSERT_TRUE(c.ok());
    for (size_t i = 0; i < layout.size(); ++i)
    {
        EXPECT_TRUE(c->spectra[i].exact) << i;
        EXPECT_GE(c->ks[i], 7);
    }
}

TEST(SpectralTruncation, NonFiniteInputIsRefusedOnBothPaths)
{
    const AdapterLayout layout = Rank32();
    std::vector<float> x = SpectralGradient(layout, 5);
    x[static_cast<size_t>(layout.offset(3)) + 17] = std::numeric_limits<float>::quiet_NaN();
    for (int64_t width : {0, 8, -8})
    {
        // -8: width 8 with the single-pass screen.
        SpectralTruncation t(layout, std::abs(width), width < 0);
        StatusOr<SpectralPlan> plan = t.Plan(x, TripletBytes(layout), layout.adapter_bytes() / 10,
                                             0, SparAllocation::kGreedy, "test");
        EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument) << width;
    }
}

class ThreadCount : public ::testing::Test
{
  protected:
    void SetUp() override { m_threads = at::get_num_threads(); }
    void TearDown() override { at::set_num_threads(m_threads); }

    /// The payload of `kind` with `options` on one thread and on two (asserting that two threads
    /// really ran); both must be the same bytes.
    void ExpectSamePayload(const char* kind, const char* options)
    {
        const AdapterLayout layout = Rank32();
        const std::vector<float> x = SpectralGradient(layout, 6, 1e-3);
        const int64_t budget = layout.adapter_bytes() / 20;
        at::set_num_threads(1);
        StatusOr<Encoded> one = MakeCompressor(kind, layout, options)->Encode(x, budget);
        at::set_num_threads(2);
        ParallelTally tally;
        StatusOr<Encoded> two = MakeCompressor(kind, layout, options)->Encode(x, budget);
        ASSERT_TRUE(one.ok() && two.ok());
        EXPECT_EQ(tally.threads(), 2) << kind << " " << options;
        EXPECT_TRUE(one->payload == two->payload) << kind << " " << options;
        EXPECT_GT(one->payload.size(), 100u);
    }

  private:
    int m_threads{1};
};

TEST_F(ThreadCount, SparAndSparqEncodesDoNotDependOnIt)
{
    ExpectSamePayload("spar", "dtype=bf16;sketch=8");
    ExpectSamePayload("spar", "dtype=bf16;screen=true;sketch=8");
    ExpectSamePayload("spar", "dtype=bf16");
    ExpectSamePayload("sparq", "bits=4;sketch=8");
    ExpectSamePayload("sparq", "bits=3;block=16");
}

TEST(SpectralTruncation, SketchedAndScreenedSparAreCloseToExactSpar)
{
    const AdapterLayout layout = Rank32();
    for (uint64_t seed : {7, 9})
    {
        const std::vector<float> x = SpectralGradient(layout, seed, 1e-3);
        auto exact = MakeCompressor("spar", layout, "dtype=fp32");
        for (const char* options : {"dtype=fp32;sketch=8", "dtype=fp32;screen=true;sketch=8"})
        {
            auto sketched = MakeCompressor("spar", layout, options);
            for (int pct : {2, 5, 10})
            {
                const int64_t budget = layout.adapter_bytes() * pct / 100;
                StatusOr<Encoded> e = sketched->Encode(x, budget);
                ASSERT_TRUE(e.ok());
                EXPECT_LE(static_cast<int64_t>(e->payload.size()), budget);
                std::vector<float> a, b;
                ASSERT_TRUE(exact->Decode(exact->Encode(x, budget)->payload, &a).ok());
                ASSERT_TRUE(sketched->Decode(e->payload, &b).ok());
                const double ea = RelativeError(a, x);
                const double eb = RelativeError(b, x);
                // Exact truncation is optimal.
                EXPECT_GE(eb, ea * (1 - 1e-4)) << options << " " << pct << "%";
                EXPECT_LE(eb, ea * 1.1) << options << " " << pct << "%";
            }
        }
    }
}

// Every odd matrix 1e-4 times weaker than it was: at 2% of the bytes the budget gives those
// nothing.
std::vector<float>
HalfNegligible(const AdapterLayout& layout, uint64_t seed)
{
    std::vector<float> x = SpectralGradient(layout, seed, 1e-5);
    for (size_t i = 1; i < layout.size(); i += 2)
    {
        float* p = x.data() + layout.offset(i);
        for (int64_t t = 0; t < layout.matrix(i).numel(); ++t)
            p[t] *= 1e-4f;
    }
    return x;
}

TEST(SpectralTruncation, ScreeningSkipsTheSecondPassOfMatricesTheBudgetBarelyReaches)
{
    const AdapterLayout layout = Rank32();
    const std::vector<float> x = HalfNegligible(layout, 8);
    const int64_t budget = layout.adapter_bytes() / 5; // ~6 triplets per strong matrix
    SpectralTruncation plain(layout, 8, false);
    SpectralTruncation screened(layout, 8, true);
    StatusOr<SpectralPlan> a =
        plain.Plan(x, TripletBytes(layout), budget, 0, SparAllocation::kGreedy, "test");
    StatusOr<SpectralPlan> b =
        screened.Plan(x, TripletBytes(layout), budget, 0, SparAllocation::kGreedy, "test");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(b->screened_out, static_cast<int64_t>(layout.size() / 2));
    EXPECT_EQ(b->finished, static_cast<int64_t>(layout.size() / 2)); // second passes
    EXPECT_EQ(a->finished, static_cast<int64_t>(layout.size()));
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpectrum& sp = b->spectra[i];
        EXPECT_EQ(sp.screened_out, i % 2 == 1) << i; // the weak ones, and only those
        if (sp.screened_out)
        {
            EXPECT_TRUE(sp.gains.empty()) << i;
            EXPECT_FALSE(sp.projected.defined()) << i;
            EXPECT_EQ(b->ks[i], 0) << i;
            continue;
        }
        // A kept matrix has the plain sketch's spectrum (or both were redone exactly), and the
        // bytes the weak ones no longer fill can only add to its triplets.
        EXPECT_EQ(sp.exact, a->spectra[i].exact) << i;
        EXPECT_EQ(sp.gains, a->spectra[i].gains) << i;
        EXPECT_GE(b->ks[i], a->ks[i]) << i;
    }
    // So spar's error is the plain sketch's, up to the weak matrices' share.
    auto plain_spar = MakeCompressor("spar", layout, "dtype=fp32;sketch=8");
    auto screened_spar = MakeCompressor("spar", layout, "dtype=fp32;screen=true;sketch=8");
    std::vector<float> xa, xb;
    ASSERT_TRUE(plain_spar->Decode(plain_spar->Encode(x, budget)->payload, &xa).ok());
    ASSERT_TRUE(screened_spar->Decode(screened_spar->Encode(x, budget)->payload, &xb).ok());
    EXPECT_LE(RelativeError(xb, x), RelativeError(xa, x) + 1e-6);
    // Screening is off where the allocation does not pick by gain: min_rank > 0 or uniform.
    for (int64_t min_rank : {0, 1})
    {
        const SparAllocation mode =
            min_rank == 0 ? SparAllocation::kUniform : SparAllocation::kGreedy;
        StatusOr<SpectralPlan> c =
            screened.Plan(x, TripletBytes(layout), budget * 12, min_rank, mode, "test");
        ASSERT_TRUE(c.ok());
        for (size_t i = 0; i < layout.size(); ++i)
        {
            EXPECT_FALSE(c->spectra[i].screened_out) << i;
            EXPECT_GE(c->ks[i], 1) << i;
        }
    }
}

TEST(SpectralTruncation, SketchOptionIsChecked)
{
    const AdapterLayout layout = Rank32();
    for (const char* kind : {"spar", "sparq"})
    {
        for (const char* bad : {"sketch=1", "sketch=3", "sketch=-1"})
        {
            StatusOr<CompressorOptions> o = ParseCompressorOptions(bad);
            ASSERT_TRUE(o.ok());
            EXPECT_EQ(NewCompressor(kind, layout, *o).status().code(), StatusCode::kInvalidArgument)
                << kind << " " << bad;
        }
        EXPECT_NE(MakeCompressor(kind, layout, "sketch=4")->Params().find("sketch=4"),
                  std::string::npos);
        EXPECT_NE(MakeCompressor(kind, layout, "")->Params().find("sketch=0"), std::string::npos);
    }
    // The screen needs a sketch, and is named in the parameters only when on.
    for (const char* bad : {"screen=true", "screen=true;sketch=0", "screen=maybe;sketch=8"})
    {
        StatusOr<CompressorOptions> o = ParseCompressorOptions(bad);
        ASSERT_TRUE(o.ok());
        EXPECT_EQ(NewCompressor("spar", layout, *o).status().code(), StatusCode::kInvalidArgument)
            << bad;
    }
    EXPECT_NE(MakeCompressor("spar", layout, "screen=true;sketch=8")->Params().find("screen=true"),
              std::string::npos);
    EXPECT_EQ(MakeCompressor("spar", layout, "sketch=8")->Params().find("screen"),
              std::string::npos);
}

} // namespace
} // namespace hilo
