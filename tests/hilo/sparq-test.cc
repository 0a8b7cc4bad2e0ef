// sparq (Spar with low-bit factor codes): the payload format pinned by a hand-made payload, the
// exact triplet sizes behind the budget, strict rejection of codes, scales and padding no encoder
// writes, error that only falls as the budget grows, and more accuracy than bf16 Spar for the
// same bytes on a spectrum that is not steeply low-rank (the reason it exists).
#include "hilo/compress/rounded-code.h"
#include "hilo/compress/sparq.h"
#include "hilo/core/coding.h"
#include "tests/hilo/compress-test-util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace hilo
{
namespace
{

using testing::MakeCompressor;
using testing::RelativeError;

AdapterLayout
Tiny()
{
    return AdapterLayout::Create({{"a", 2, 3}, {"b", 3, 2}}).value();
}

// bits 4, block 0, 2 matrices, k = (1, 0); u = 0.5 x (2, -1), v = 1 x (1, 0, -7).
std::string
HandMadePayload()
{
    std::string p;
    ByteWriter w(&p);
    w.PutU8(4);
    w.PutVarint(0);
    w.PutVarint(2);
    w.PutVarint(1);
    w.PutVarint(0);
    w.PutF32(0.5f);
    w.PutU8(0x69); // codes + 7: 9, 6 (low nibble first)
    w.PutF32(1.0f);
    w.PutU8(0x78); // 8, 7
    w.PutU8(0x00); // 0, then four zero padding bits
    return p;
}

TEST(Sparq, HandMadePayloadDecodes)
{
    const std::string p = HandMadePayload();
    EXPECT_EQ(p.size(), 5u + 4 + 1 + 4 + 2);
    auto c = MakeCompressor("sparq", Tiny(), "bits=4");
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(p, &out).ok());
    EXPECT_EQ(out, (std::vector<float>{1, 0, -7, -0.5f, 0, 3.5f, 0, 0, 0, 0, 0, 0}));
}

TEST(Sparq, InvalidCodesScalesPaddingAndHeadersAreCorruption)
{
    auto c = MakeCompressor("sparq", Tiny(), "bits=4");
    std::vector<float> out;
    const std::string good = HandMadePayload();
    auto damaged = [&](std::vector<std::pair<size_t, uint8_t>> edits)
    {
        std::string p = good;
        for (const auto& [at, value] : edits)
            p[at] = static_cast<char>(value);
        return c->Decode(p, &out).code();
    };
    EXPECT_EQ(damaged({{0, 5}}), StatusCode::kCorruption);               // bits
    EXPECT_EQ(damaged({{1, 1}}), StatusCode::kCorruption);               // block
    EXPECT_EQ(damaged({{9, 0x6f}}), StatusCode::kCorruption);            // code 15 > 14
    EXPECT_EQ(damaged({{15, 0x10}}), StatusCode::kCorruption);           // padding bit
    EXPECT_EQ(damaged({{8, 0xbf}}), StatusCode::kCorruption);            // scale -0.5
    EXPECT_EQ(damaged({{7, 0xc0}, {8, 0x7f}}), StatusCode::kCorruption); // scale NaN
    EXPECT_EQ(damaged({{3, 3}}), StatusCode::kCorruption);               // k above min(2, 3)
    EXPECT_EQ(damaged({{15, 0x07}}), StatusCode::kOk);                   // a valid code: control

    // Two bits: codes 0..2 are -1..1, code 3 is not a level.
    auto two = MakeCompressor("sparq", Tiny(), "bits=2");
    std::string p;
    ByteWriter w(&p);
    w.PutU8(2);
    w.PutVarint(0);
    w.PutVarint(2);
    w.PutVarint(0);
    w.PutVarint(1);
    w.PutF32(1.0f);
    w.PutU8(0x26); // 2, 1, 2 (+ two zero bits): values 1, 0, 1
    w.PutF32(2.0f);
    w.PutU8(0x00); // -1, -1
    ASSERT_TRUE(two->Decode(p, &out).ok());
    EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0, 0, 0, -2, -2, 0, 0, -2, -2}));
    p[p.size() - 6] = 0x27; // first code 3
    EXPECT_EQ(two->Decode(p, &out).code(), StatusCode::kCorruption);
}

TEST(Sparq, TripletBytesFollowTheBitsAndBlocks)
{
    EXPECT_EQ(LowBitVectorBytes(64, 4, 0), 4 + 32);
    EXPECT_EQ(LowBitVectorBytes(65, 4, 0), 4 + 33);
    EXPECT_EQ(LowBitVectorBytes(64, 3, 0), 4 + 24);
    EXPECT_EQ(LowBitVectorBytes(100, 2, 32), 4 * 4 + 25);
    const AdapterLayout layout = testing::LoraLayout(1, 8, 48, 96);
    auto c = MakeCompressor("sparq", layout, "bits=4;min_rank=1");
    int64_t want = 1 + 1 + 1; // bits, block varint, matrix count
    for (const MatrixSpec& s : layout.matrices())
        want += 1 + LowBitVectorBytes(s.rows, 4, 0) + LowBitVectorBytes(s.cols, 4, 0);
    EXPECT_EQ(c->MinPayloadBytes(), want);
}

TEST(Sparq, ErrorNeverGrowsWithTheBudget)
{
    // Triplet j of a matrix depends only on what triplets 0..j-1 left over, so a larger budget
    // ships a superset of the same triplets.
    const AdapterLayout layout = testing::LoraLayout();
    const std::vector<float> x = testing::SpectralGradient(layout, 21, 1e-3);
    for (const char* opts : {"bits=3", "bits=4;block=16"})
    {
        auto c = MakeCompressor("sparq", layout, opts);
        double last = 2.0;
        for (int pct = 1; pct <= 40; pct += 3)
        {
            StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() * pct / 100);
            ASSERT_TRUE(e.ok()) << e.status().ToString();
            std::vector<float> out;
            ASSERT_TRUE(c->Decode(e->payload, &out).ok());
            const double err = RelativeError(out, x);
            EXPECT_LE(err, last + 1e-12) << opts << " at " << pct << "%";
            last = err;
        }
        EXPECT_LT(last, 0.25) << opts;
    }
}

TEST(Sparq, MoreAccurateThanBf16SparForTheSameBytes)
{
    // A gradient whose spectrum decays slowly: rank buys more than precision.
    const AdapterLayout layout = testing::LoraLayout(2, 16, 64, 128);
    const std::vector<float> x = testing::SpectralGradient(layout, 5, 1e-3, 0.3, 0.8);
    auto spar = MakeCompressor("spar", layout, "dtype=bf16");
    auto sparq = MakeCompressor("sparq", layout, "bits=4");
    for (int pct : {2, 5, 10})
    {
        const int64_t budget = layout.adapter_bytes() * pct / 100;
        std::vector<float> a, b;
        StatusOr<Encoded> ea = spar->Encode(x, budget);
        StatusOr<Encoded> eb = sparq->Encode(x, budget);
        ASSERT_TRUE(ea.ok() && eb.ok());
        EXPECT_LE(static_cast<int64_t>(eb->payload.size()), budget);
        ASSERT_TRUE(spar->Decode(ea->payload, &a).ok());
        ASSERT_TRUE(sparq->Decode(eb->payload, &b).ok());
        EXPECT_LT(RelativeError(b, x), 0.9 * RelativeError(a, x)) << pct << "%";
    }
}

TEST(Sparq, OptionsAreStrict)
{
    const AdapterLayout layout = Tiny();
    for (const char* bad : {"bits=1", "bits=9", "block=4", "block=-1", "dtype=bf16"})
    {
        StatusOr<CompressorOptions> o = ParseCompressorOptions(bad);
        ASSERT_TRUE(o.ok());
        EXPECT_EQ(NewSparqCompressor(layout, *o).status().code(), StatusCode::kInvalidArgument)
            << bad;
    }
}

// Quantize's codes come from RoundedCode instead of nearbyint: the same code for every value,
// ties included (1.5, 2.5 and -0.5 round to even), and the same clamping of NaN and infinities.
TEST(Sparq, RoundedCodeIsClampedNearbyint)
{
    const auto reference = [](double v, double levels)
    { return std::min(levels, std::max(-levels, std::nearbyint(v))); };
    std::vector<double> values = {0.0,
                                  -0.0,
                                  0.49999999999999994,
                                  -0.49999999999999994,
                                  4503599627370495.5,
                                  1e300,
                                  -1e300,
                                  std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN()};
    for (int k = -2100; k <= 2100; ++k)
        values.push_back(k / 8.0); // every tie x.5 up to +-262, both parities
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> wide(-300.0, 300.0);
    for (int t = 0; t < 100000; ++t)
        values.push_back(wide(gen));
    for (double levels : {1.0, 3.0, 7.0, 127.0})
    {
        for (double v : values)
        {
            const double want = reference(v, levels);
            const double got = RoundedCode(v, levels);
            ASSERT_EQ(got, want) << "v=" << v << " levels=" << levels; // -0 == +0
            ASSERT_EQ(static_cast<int>(got), static_cast<int>(want));
        }
    }
}

} // namespace
} // namespace hilo
