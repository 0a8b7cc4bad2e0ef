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
    SpectralTruncation sketch(layout, 8);
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
    SpectralTruncation sketch(layout, 8);
    SpectralTruncation exact(layout, 0);
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
    for (int64_t width : {0, 8})
    {
        SpectralTruncation t(layout, width);
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
    ExpectSamePayload("spar", "dtype=bf16");
    ExpectSamePayload("sparq", "bits=4;sketch=8");
    ExpectSamePayload("sparq", "bits=3;block=16");
}

TEST(SpectralTruncation, SketchedSparIsCloseToExactSpar)
{
    const AdapterLayout layout = Rank32();
    const std::vector<float> x = SpectralGradient(layout, 7, 1e-3);
    auto exact = MakeCompressor("spar", layout, "dtype=fp32");
    auto sketched = MakeCompressor("spar", layout, "dtype=fp32;sketch=8");
    for (int pct : {2, 5, 10})
    {
        const int64_t budget = layout.adapter_bytes() * pct / 100;
        std::vector<float> a, b;
        ASSERT_TRUE(exact->Decode(exact->Encode(x, budget)->payload, &a).ok());
        ASSERT_TRUE(sketched->Decode(sketched->Encode(x, budget)->payload, &b).ok());
        const double ea = RelativeError(a, x);
        const double eb = RelativeError(b, x);
        EXPECT_GE(eb, ea * (1 - 1e-4)) << pct << "%"; // exact truncation is optimal
        EXPECT_LE(eb, ea * 1.1) << pct << "%";
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
}

} // namespace
} // namespace hilo
