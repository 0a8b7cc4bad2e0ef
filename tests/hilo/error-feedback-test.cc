// Error feedback: the invariant X == decoded + residual (exact where the decoded entries are exact
// copies or zeros, within rounding for low-rank and quantized payloads), decay, and the off switch.
#include "hilo/compress/error-feedback.h"
#include "tests/hilo/compress-test-util.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

using testing::LoraLayout;
using testing::MakeCompressor;

struct Case
{
    const char* kind;
    const char* options;
    bool exact; // decoded entries are copies of X or zero: the invariant holds bit for bit
};

class ErrorFeedbackInvariant : public ::testing::TestWithParam<Case>
{
};

TEST_P(ErrorFeedbackInvariant, InputEqualsDecodedPlusResidual)
{
    const AdapterLayout layout = LoraLayout();
    auto c = MakeCompressor(GetParam().kind, layout, GetParam().options);
    ErrorFeedback ef(layout.numel(), ErrorFeedbackOptions{true, 1.0f});
    std::vector<float> x, decoded;
    const int64_t budget = std::max(c->MinPayloadBytes(), layout.adapter_bytes() / 10);
    for (int step = 0; step < 5; ++step)
    {
        const std::vector<float> g = testing::SpectralGradient(layout, 40 + step, 1e-3);
        ef.Accumulate(g, &x);
        StatusOr<Encoded> e = c->Encode(x, budget);
        ASSERT_TRUE(e.ok());
        ASSERT_TRUE(c->Decode(e->payload, &decoded).ok());
        ef.Absorb(x, decoded);
        double scale = 0;
        for (float v : x)
            scale = std::max(scale, static_cast<double>(std::fabs(v)));
        for (size_t i = 0; i < x.size(); ++i)
        {
            const float back = decoded[i] + ef.residual()[i];
            if (GetParam().exact)
                ASSERT_EQ(back, x[i]) << "step " << step << " entry " << i;
            else
                ASSERT_NEAR(back, x[i], 1e-6 * scale) << "step " << step << " entry " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Compressors, ErrorFeedbackInvariant,
    ::testing::Values(Case{"dense", "dtype=fp32", true}, Case{"topk", "dtype=fp32", true},
                      Case{"topk", "dtype=fp32;scope=per_matrix", true},
                      Case{"randk", "dtype=fp32", true}, Case{"spar", "dtype=fp32", false},
                      Case{"spar", "dtype=bf16", false}, Case{"powersgd", "dtype=fp32", false},
                      Case{"quant", "levels=7", false}),
    [](const ::testing::TestParamInfo<Case>& info)
    {
        std::string s = std::string(info.param.kind) + "_" + info.param.options;
        for (char& ch : s)
            if (!std::isalnum(static_cast<unsigned char>(ch)))
                ch = '_';
        return s;
    });

TEST(ErrorFeedback, DecayScalesTheCarriedResidual)
{
    ErrorFeedback ef(3, ErrorFeedbackOptions{true, 0.5f});
    std::vector<float> x;
    ef.Accumulate({1.0f, 2.0f, 3.0f}, &x);
    EXPECT_EQ(x, (std::vector<float>{1.0f, 2.0f, 3.0f}));
    ef.Absorb(x, {0.0f, 2.0f, 1.0f});
    EXPECT_EQ(ef.residual(), (std::vector<float>{1.0f, 0.0f, 2.0f}));
    ef.Accumulate({1.0f, 1.0f, 1.0f}, &x);
    EXPECT_EQ(x, (std::vector<float>{1.5f, 1.0f, 2.0f}));
}

TEST(ErrorFeedback, DisabledPassesTheGradientThroughAndKeepsNoResidual)
{
    ErrorFeedback ef(2, ErrorFeedbackOptions{false, 1.0f});
    std::vector<float> x;
    ef.Accumulate({1.0f, -2.0f}, &x);
    EXPECT_EQ(x, (std::vector<float>{1.0f, -2.0f}));
    ef.Absorb(x, {0.0f, 0.0f});
    EXPECT_EQ(ef.residual(), (std::vector<float>{0.0f, 0.0f}));
    ef.Accumulate({3.0f, 4.0f}, &x);
    EXPECT_EQ(x, (std::vector<float>{3.0f, 4.0f}));
}

TEST(ErrorFeedback, EventuallyShipsEverythingTopKDrops)
{
    // With feedback, the sum of the decoded payloads tracks the sum of the inputs: the gap is the
    // residual, which stays bounded.
    const AdapterLayout layout = LoraLayout();
    auto c = MakeCompressor("topk", layout, "dtype=fp32");
    ErrorFeedback ef(layout.numel(), ErrorFeedbackOptions{true, 1.0f});
    std::vector<double> sent(static_cast<size_t>(layout.numel()), 0.0);
    std::vector<double> given(static_cast<size_t>(layout.numel()), 0.0);
    std::vector<float> x, decoded;
    for (int step = 0; step < 30; ++step)
    {
        const std::vector<float> g = testing::GaussianVector(layout.numel(), 200 + step);
        ef.Accumulate(g, &x);
        ASSERT_TRUE(c->Decode(c->Encode(x, layout.adapter_bytes() / 8)->payload, &decoded).ok());
        ef.Absorb(x, decoded);
        for (size_t i = 0; i < g.size(); ++i)
        {
            sent[i] += decoded[i];
            given[i] += g[i];
        }
    }
    for (size_t i = 0; i < sent.size(); ++i)
        ASSERT_NEAR(sent[i] + ef.residual()[i], given[i], 1e-3);
}

} // namespace
} // namespace hilo
