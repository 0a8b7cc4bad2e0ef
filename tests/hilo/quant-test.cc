// quant: QSGD stochastic levels are unbiased, int8 absmax is within half a step, the payload size
// is fixed (budget below it is typed), and out-of-range codes or scales are corruption.
#include "hilo/compress/quant.h"
#include "tests/hilo/compress-test-util.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

using testing::LoraLayout;
using testing::MakeCompressor;

TEST(Quant, Int8IsWithinHalfAStepOfEveryValue)
{
    const AdapterLayout layout = LoraLayout();
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 1);
    auto c = MakeCompressor("quant", layout, "block=64;scheme=int8");
    StatusOr<Encoded> e = c->Encode(x, c->MinPayloadBytes());
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const int64_t n = layout.matrix(i).numel();
        for (int64_t b = 0; b < n; b += 64)
        {
            float absmax = 0;
            const int64_t off = layout.offset(i) + b;
            for (int64_t t = 0; t < std::min<int64_t>(64, n - b); ++t)
                absmax = std::max(absmax, std::fabs(x[off + t]));
            for (int64_t t = 0; t < std::min<int64_t>(64, n - b); ++t)
                ASSERT_LE(std::fabs(out[off + t] - x[off + t]), absmax / 127 * 0.5001f);
        }
    }
    // Size: header + one f32 scale per block + one byte per value.
    EXPECT_EQ(static_cast<int64_t>(e->payload.size()), c->MinPayloadBytes());
}

TEST(Quant, QsgdIsUnbiased)
{
    const AdapterLayout layout = LoraLayout(1, 4, 16, 24);
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 2);
    for (const char* opts : {"levels=1", "levels=7;norm=l2"})
    {
        auto c = MakeCompressor("quant", layout, opts);
        std::vector<double> mean(x.size(), 0.0);
        std::vector<float> out;
        const int trials = 2000;
        for (int t = 0; t < trials; ++t)
        {
            StatusOr<Encoded> e = c->Encode(x, c->MinPayloadBytes());
            ASSERT_TRUE(e.ok());
            ASSERT_TRUE(c->Decode(e->payload, &out).ok());
            for (size_t i = 0; i < x.size(); ++i)
                mean[i] += out[i] / trials;
        }
        double err = 0, norm = 0;
        for (size_t i = 0; i < x.size(); ++i)
        {
            err += (mean[i] - x[i]) * (mean[i] - x[i]);
            norm += static_cast<double>(x[i]) * x[i];
        }
        EXPECT_LT(std::sqrt(err / norm), 0.05) << opts;
    }
}

TEST(Quant, TernaryPacksFiveValuesPerByte)
{
    const AdapterLayout layout = LoraLayout();
    auto c = MakeCompressor("quant", layout, "block=1024;levels=1");
    int64_t blocks = 0;
    for (const MatrixSpec& s : layout.matrices())
        blocks += (s.numel() + 1023) / 1024;
    EXPECT_EQ(c->MinPayloadBytes(), 3 + 2 + 4 * blocks + (layout.numel() + 4) / 5);
    StatusOr<Encoded> e = c->Encode(std::vector<float>(layout.numel(), 1.0f), 1 << 30);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(static_cast<int64_t>(e->payload.size()), c->MinPayloadBytes());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    for (float v : out)
        ASSERT_EQ(v, 1.0f); // |x| = scale: level 1 with certainty
}

TEST(Quant, OutOfRangeCodesAndBadScalesAreCorruption)
{
    const AdapterLayout layout = LoraLayout(1, 2, 8, 8);
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 3);
    std::vector<float> out;
    for (const char* opts : {"levels=1", "levels=7", "levels=127", "scheme=int8"})
    {
        auto c = MakeCompressor("quant", layout, opts);
        StatusOr<Encoded> e = c->Encode(x, c->MinPayloadBytes());
        ASSERT_TRUE(e.ok());
        std::string p = e->payload;
        p.back() = static_cast<char>(0xff); // 255 >= 243; nibble 15; int8 -1 is valid...
        Status s = c->Decode(p, &out);
        if (std::string(opts) == "levels=127" || std::string(opts) == "scheme=int8")
        {
            p.back() = static_cast<char>(0x80); // ... but -128 is not
            s = c->Decode(p, &out);
        }
        EXPECT_EQ(s.code(), StatusCode::kCorruption) << opts;
        std::string q = e->payload;
        const float nan = std::nanf("");
        std::memcpy(&q[5], &nan, 4); // first block scale (header is 5 bytes with block=1024)
        EXPECT_EQ(c->Decode(q, &out).code(), StatusCode::kCorruption) << opts;
    }
}

TEST(Quant, OptionsAreStrictPerScheme)
{
    const AdapterLayout layout = LoraLayout();
    EXPECT_EQ(NewCompressor("quant", layout, {{"scheme", "int8"}, {"levels", "7"}}).status().code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(NewCompressor("quant", layout, {{"levels", "3"}}).status().code(),
              StatusCode::kInvalidArgument);
}

} // namespace
} // namespace hilo
