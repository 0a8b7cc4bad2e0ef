// spar warm=true: the sketch warm-started from the previous encode's bases. The bases are encoder
// state: encodes that do not depend on the thread count, a checkpoint that continues byte for
// byte, restored bytes checked, and an error that approaches exact spar's on a repeated gradient.
#include "hilo/compress/spar.h"
#include "hilo/compress/spectral-truncation.h"
#include "hilo/core/coding.h"
#include "hilo/core/parallel.h"
#include "tests/hilo/compress-test-util.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace hilo
{
namespace
{

using testing::MakeCompressor;
using testing::RelativeError;
using testing::SpectralGradient;

constexpr const char* kWarm = "dtype=bf16;sketch=8;warm=true";

// Rank 32 > the sketch width 8, so every matrix is sketched.
AdapterLayout
Rank32()
{
    return testing::LoraLayout(2, 32, 96, 192);
}

/// Step t's gradient: a fixed spectral gradient plus a drift that changes every step, so the
/// warm start meets a new X each time (as in training).
std::vector<float>
StepGradient(const AdapterLayout& layout, int t)
{
    std::vector<float> x = SpectralGradient(layout, 11, 1e-3);
    const std::vector<float> drift = SpectralGradient(layout, 100 + static_cast<uint64_t>(t), 1e-3);
    for (size_t k = 0; k < x.size(); ++k)
        x[k] += 0.3f * drift[k];
    return x;
}

/// Step t's budget: changes between steps, so that saturated matrices (exact redos) come and go.
int64_t
StepBudget(const AdapterLayout& layout, int t)
{
    const int64_t pct[] = {2, 5, 3, 10, 2, 20, 4, 8};
    return layout.adapter_bytes() * pct[t % 8] / 100;
}

std::vector<std::string>
Frames(Compressor* c, const AdapterLayout& layout, int from, int to)
{
    std::vector<std::string> out;
    for (int t = from; t < to; ++t)
    {
        StatusOr<Encoded> e = c->Encode(StepGradient(layout, t), StepBudget(layout, t));
        EXPECT_TRUE(e.ok()) << e.status().ToString();
        out.push_back(e.ok() ? e->payload : std::string());
    }
    return out;
}

/// The width of every basis in a warm state (SpectralTruncation::SaveWarmState), 0 where none.
std::vector<int64_t>
StateWidths(const AdapterLayout& layout, const std::string& state)
{
    ByteReader r(state);
    uint32_t n = 0;
    EXPECT_TRUE(r.GetU32(&n));
    std::vector<int64_t> widths;
    for (uint32_t i = 0; i < n; ++i)
    {
        uint8_t set = 0;
        uint64_t w = 0;
        EXPECT_TRUE(r.GetU8(&set));
        if (set && r.GetVarint(&w))
        {
            const MatrixSpec& s = layout.matrix(i);
            std::vector<float> skip(static_cast<size_t>(w * std::min(s.rows, s.cols)));
            EXPECT_TRUE(r.GetFloats(skip.data(), skip.size(), ValueDtype::kFp32));
        }
        widths.push_back(static_cast<int64_t>(w));
    }
    EXPECT_TRUE(r.empty());
    return widths;
}

class WarmThreads : public ::testing::Test
{
  protected:
    void SetUp() override { m_threads = at::get_num_threads(); }
    void TearDown() override { at::set_num_threads(m_threads); }

  private:
    int m_threads{1};
};

TEST_F(WarmThreads, EncodesDoNotDependOnTheThreadCount)
{
    const AdapterLayout layout = Rank32();
    at::set_num_threads(1);
    auto one = MakeCompressor("spar", layout, kWarm);
    const std::vector<std::string> a = Frames(one.get(), layout, 0, 6);
    at::set_num_threads(2);
    ParallelTally tally;
    auto two = MakeCompressor("spar", layout, kWarm);
    const std::vector<std::string> b = Frames(two.get(), layout, 0, 6);
    EXPECT_EQ(tally.threads(), 2);
    ASSERT_EQ(a.size(), b.size());
    for (size_t t = 0; t < a.size(); ++t)
    {
        EXPECT_GT(a[t].size(), 100u) << t;
        EXPECT_TRUE(a[t] == b[t]) << "step " << t;
    }
    EXPECT_EQ(one->SaveLocalState(), two->SaveLocalState());
}

TEST(SparWarm, TheBasesAreStateThatChangesTheFrames)
{
    const AdapterLayout layout = Rank32();
    auto warm = MakeCompressor("spar", layout, kWarm);
    auto cold = MakeCompressor("spar", layout, "dtype=bf16;sketch=8");
    // Before any encode: one unset entry per matrix; the first encode is the cold sketch's.
    const std::string empty = warm->SaveLocalState();
    EXPECT_EQ(empty.size(), 4 + layout.size());
    const std::vector<float> x = StepGradient(layout, 0);
    const int64_t budget = StepBudget(layout, 0);
    EXPECT_EQ(warm->Encode(x, budget)->payload, cold->Encode(x, budget)->payload);
    const std::string after_one = warm->SaveLocalState();
    EXPECT_GT(after_one.size(), empty.size());
    // The second encode of the same X starts from the bases and differs from the cold sketch's.
    EXPECT_NE(warm->Encode(x, budget)->payload, cold->Encode(x, budget)->payload);
    EXPECT_NE(warm->SaveLocalState(), after_one);
    // The plain sketch keeps no state.
    EXPECT_TRUE(cold->SaveLocalState().empty());
}

TEST(SparWarm, ACheckpointContinuesByteForByte)
{
    const AdapterLayout layout = Rank32();
    auto kept = MakeCompressor("spar", layout, kWarm);
    const std::vector<std::string> before = Frames(kept.get(), layout, 0, 4);
    const std::string state = kept->SaveLocalState();
    // Mid-run, some bases have widened (steps 1 and 3 saturate matrices at 5% and 10%).
    const std::vector<int64_t> widths = StateWidths(layout, state);
    EXPECT_GT(std::count(widths.begin(), widths.end(), 16), 0);
    EXPECT_GT(std::count(widths.begin(), widths.end(), 8), 0);
    const std::vector<std::string> want = Frames(kept.get(), layout, 4, 8);

    auto restored = MakeCompressor("spar", layout, kWarm);
    ASSERT_TRUE(restored->RestoreLocalState(state).ok());
    EXPECT_EQ(restored->SaveLocalState(), state);
    const std::vector<std::string> got = Frames(restored.get(), layout, 4, 8);
    auto fresh = MakeCompressor("spar", layout, kWarm);
    const std::vector<std::string> unrestored = Frames(fresh.get(), layout, 4, 8);
    int differs = 0;
    for (size_t t = 0; t < want.size(); ++t)
    {
        EXPECT_TRUE(got[t] == want[t]) << "step " << 4 + t;
        differs += unrestored[t] == want[t] ? 0 : 1;
    }
    EXPECT_GT(differs, 0); // the restored state mattered
    EXPECT_EQ(restored->SaveLocalState(), kept->SaveLocalState());
}

TEST(SparWarm, RestoreRefusesBadStateAndKeepsItsOwn)
{
    const AdapterLayout layout = Rank32();
    auto c = MakeCompressor("spar", layout, kWarm);
    (void) Frames(c.get(), layout, 0, 2);
    const std::string good = c->SaveLocalState();
    // Entry 0: flag at byte 4 (1, or 2: exact next), its width at byte 5, then m x w fp32 (m =
    // 32: the LoRA rank).
    ASSERT_TRUE(good[4] == 1 || good[4] == 2);
    ASSERT_TRUE(good[5] == 8 || good[5] == 16);
    std::vector<std::string> bad;
    bad.push_back(good.substr(0, good.size() - 1)); // truncated
    bad.push_back(good + std::string(1, '\0'));     // trailing byte
    bad.push_back(good.substr(0, 3));               // no count
    std::string count = good;
    count[0] = static_cast<char>(count[0] + 1); // wrong matrix count
    bad.push_back(count);
    std::string flag = good;
    flag[4] = 3; // bad flag
    bad.push_back(flag);
    std::string nan = good;
    const float q = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(&nan[6 + 4 * 7], &q, 4); // a NaN in basis 0 (after its one-byte width)
    bad.push_back(nan);
    std::string scaled = good; // finite, but not orthonormal: a basis entry times 2^20
    float e = 0.0f;
    std::memcpy(&e, &scaled[6 + 4 * 3], 4);
    e = e * 1048576.0f + 1.0f;
    std::memcpy(&scaled[6 + 4 * 3], &e, 4);
    bad.push_back(scaled);
    for (size_t k = 0; k < bad.size(); ++k)
    {
        const Status s = c->RestoreLocalState(bad[k]);
        EXPECT_EQ(s.code(), StatusCode::kCorruption) << k << " " << s.ToString();
        EXPECT_TRUE(c->SaveLocalState() == good) << k;
    }
    // A basis on a matrix that is not sketched (rank 8 = the width: exact only).
    const AdapterLayout small = testing::LoraLayout(2, 8, 96, 192);
    auto s = MakeCompressor("spar", small, kWarm);
    std::string forged;
    ByteWriter w(&forged);
    w.PutU32(static_cast<uint32_t>(small.size()));
    w.PutU8(1);
    for (int k = 0; k < 8 * 8; ++k)
        w.PutF32(0.125f);
    for (size_t i = 1; i < small.size(); ++i)
        w.PutU8(0);
    EXPECT_EQ(s->RestoreLocalState(forged).code(), StatusCode::kCorruption);
    // Non-warm spar keeps no state.
    auto plain = MakeCompressor("spar", layout, "dtype=bf16;sketch=8");
    EXPECT_EQ(plain->RestoreLocalState(good).code(), StatusCode::kCorruption);
    EXPECT_TRUE(plain->RestoreLocalState("").ok());
}

TEST(SparWarm, ASaturatedMatrixWidensItsBasisInsteadOfBeingRedoneEveryStep)
{
    // m = 32 (widths 8 and 16, offering 6 and 12 pairs) and m = 24 (v's B: widths 8 and 12).
    const AdapterLayout layout = Rank32();
    const std::vector<float> x = SpectralGradient(layout, 4, 1e-3);
    SpectralTruncation warm(layout, 8, false, true);
    SpectralTruncation exact(layout, 0, false);
    std::vector<int64_t> bytes;
    for (const MatrixSpec& s : layout.matrices())
        bytes.push_back(4 + 4 * (s.rows + s.cols));
    const int64_t budget = layout.adapter_bytes() * 2 / 5;
    StatusOr<SpectralPlan> want = exact.Plan(x, bytes, budget, 0, SparAllocation::kGreedy, "t");
    ASSERT_TRUE(want.ok());
    int64_t wide = 0;   // want more than a width-8 sketch offers, and fit in the widest one
    int64_t beyond = 0; // want all the widest sketch offers, or more
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const int64_t k = want->ks[i];
        const int64_t w = warm.MaxWidth(i);
        wide += k >= 6 && k < w - w / 4 ? 1 : 0;
        beyond += k >= w - w / 4 ? 1 : 0;
    }
    ASSERT_GT(wide, 0);
    ASSERT_GT(beyond, 0);
    for (int step = 0; step < 4; ++step)
    {
        StatusOr<SpectralPlan> p = warm.Plan(x, bytes, budget, 0, SparAllocation::kGreedy, "t");
        ASSERT_TRUE(p.ok());
        int64_t exact_spectra = 0;
        for (const MatrixSpectrum& sp : p->spectra)
            exact_spectra += sp.exact ? 1 : 0;
        if (step == 0)
        {
            // Saturated at width 8: redone exactly.
            EXPECT_GE(p->exact_redos, wide + beyond);
        }
        else
        {
            // Then sketched at their new widths; those beyond are exact from the start.
            EXPECT_EQ(p->exact_redos, 0) << step;
            EXPECT_EQ(exact_spectra, beyond) << step;
        }
        if (step == 3)
        {
            EXPECT_EQ(p->ks, want->ks);
        }
        for (size_t i = 0; i < layout.size(); ++i)
        {
            if (want->ks[i] >= 6)
            {
                EXPECT_EQ(warm.Width(i), warm.MaxWidth(i)) << "step " << step << " matrix " << i;
                continue;
            }
            // Narrower than 8 only while it still offers more pairs than its rank; width 2
            // where it takes nothing.
            const int64_t k = p->ks[i];
            const int64_t w = warm.Width(i);
            EXPECT_LE(w, 8) << "step " << step << " matrix " << i;
            EXPECT_GT(w - w / 4, k) << "step " << step << " matrix " << i;
            if (k == 0)
                EXPECT_EQ(w, kMinWarmWidth) << "step " << step << " matrix " << i;
        }
    }
    // A budget that takes at most 4 triplets anywhere narrows every basis to width 8 or less:
    // 2 where it takes none, 4 where it takes one.
    const int64_t small = layout.adapter_bytes() / 50;
    StatusOr<SpectralPlan> p = warm.Plan(x, bytes, small, 0, SparAllocation::kGreedy, "t");
    ASSERT_TRUE(p.ok());
    std::vector<int64_t> widths;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        ASSERT_LE(p->ks[i], 4) << i;
        const int64_t w = warm.Width(i);
        EXPECT_LE(w, 8) << i;
        EXPECT_GT(w - w / 4, p->ks[i]) << i;
        if (p->ks[i] <= 1)
            EXPECT_EQ(w, p->ks[i] == 0 ? 2 : 4) << i;
        widths.push_back(w);
    }
    EXPECT_LT(*std::min_element(widths.begin(), widths.end()), 8);
    EXPECT_EQ(StateWidths(layout, warm.SaveWarmState()), widths);
}

TEST(SparWarm, RestoreRefusesAForgedWidth)
{
    const AdapterLayout layout = Rank32(); // widths 2 to 16
    SpectralTruncation t(layout, 8, false, true);
    const std::string before = t.SaveWarmState();
    auto forged = [&](uint64_t width, uint64_t floats)
    {
        std::string out;
        ByteWriter w(&out);
        w.PutU32(static_cast<uint32_t>(layout.size()));
        w.PutU8(1);
        w.PutVarint(width);
        for (uint64_t k = 0; k < floats; ++k)
            w.PutF32(width > 0 && k / width == k % width ? 1.0f : 0.0f); // orthonormal
        for (size_t i = 1; i < layout.size(); ++i)
            w.PutU8(0);
        return out;
    };
    for (uint64_t width : {uint64_t{0}, uint64_t{1}, uint64_t{17}, uint64_t{32}, uint64_t{1} << 30})
    {
        // Forged with the floats its width asks for (capped), so only the width is wrong.
        const Status s = t.RestoreWarmState(forged(width, 32 * std::min<uint64_t>(width, 64)), "t");
        EXPECT_EQ(s.code(), StatusCode::kCorruption) << width;
        EXPECT_NE(s.message().find("width"), std::string::npos) << s.ToString();
        EXPECT_EQ(t.SaveWarmState(), before) << width;
    }
    // Widths in range are restored as they are.
    for (uint64_t width : {uint64_t{2}, uint64_t{4}, uint64_t{7}, uint64_t{8}, uint64_t{16}})
    {
        const std::string state = forged(width, 32 * width);
        ASSERT_TRUE(t.RestoreWarmState(state, "t").ok()) << width;
        EXPECT_EQ(t.Width(0), static_cast<int64_t>(width));
        EXPECT_EQ(t.SaveWarmState(), state);
    }
}

TEST(SparWarm, ARefusedEncodeLeavesTheBases)
{
    const AdapterLayout layout = Rank32();
    auto c = MakeCompressor("spar", layout, kWarm);
    (void) Frames(c.get(), layout, 0, 2);
    const std::string state = c->SaveLocalState();
    std::vector<float> x = StepGradient(layout, 2);
    x[static_cast<size_t>(layout.offset(3)) + 5] = std::numeric_limits<float>::infinity();
    EXPECT_EQ(c->Encode(x, StepBudget(layout, 2)).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(c->SaveLocalState(), state);
}

TEST(SparWarm, ErrorApproachesExactSparOnARepeatedGradient)
{
    const AdapterLayout layout = Rank32();
    for (uint64_t seed : {7, 9})
    {
        const std::vector<float> x = SpectralGradient(layout, seed, 1e-3);
        auto exact = MakeCompressor("spar", layout, "dtype=fp32");
        auto warm = MakeCompressor("spar", layout, "dtype=fp32;sketch=8;warm=true");
        for (int pct : {2, 5, 10})
        {
            const int64_t budget = layout.adapter_bytes() * pct / 100;
            std::vector<float> a, b;
            ASSERT_TRUE(exact->Decode(exact->Encode(x, budget)->payload, &a).ok());
            const double ea = RelativeError(a, x);
            double first = 0.0;
            for (int step = 0; step < 4; ++step)
            {
                StatusOr<Encoded> e = warm->Encode(x, budget);
                ASSERT_TRUE(e.ok());
                EXPECT_LE(static_cast<int64_t>(e->payload.size()), budget);
                ASSERT_TRUE(warm->Decode(e->payload, &b).ok());
                const double eb = RelativeError(b, x);
                EXPECT_GE(eb, ea * (1 - 1e-4)) << pct << "% step " << step; // exact is optimal
                if (step == 0)
                    first = eb;
                else
                    EXPECT_LE(eb, first * (1 + 1e-3)) << pct << "% step " << step;
                if (step == 3)
                    EXPECT_LE(eb, ea * 1.02) << pct << "%";
            }
        }
    }
}

TEST(SparWarm, OptionIsChecked)
{
    const AdapterLayout layout = Rank32();
    for (const char* bad : {"warm=true", "sketch=0;warm=true", "screen=true;sketch=8;warm=true",
                            "sketch=8;warm=perhaps"})
    {
        StatusOr<CompressorOptions> o = ParseCompressorOptions(bad);
        ASSERT_TRUE(o.ok());
        EXPECT_EQ(NewCompressor("spar", layout, *o).status().code(), StatusCode::kInvalidArgument)
            << bad;
    }
    EXPECT_NE(MakeCompressor("spar", layout, kWarm)->Params().find("warm=true"), std::string::npos);
    EXPECT_EQ(MakeCompressor("spar", layout, "sketch=8")->Params().find("warm"), std::string::npos);
}

} // namespace
} // namespace hilo
