// pulse (lossless sparse sync of the bf16 parameters that changed): replicas land exactly on the
// bf16 value of what they are sent, only entries whose bf16 value changes travel, the payload is
// pinned by golden bytes, damaged payloads are corruption, and the strategies it can serve are
// enforced. Over 1,000 delta steps the replicas hold exactly bf16 of the learner's parameters.
#include "hilo/compress/base-aware.h"
#include "hilo/core/coding.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "tests/hilo/compress-test-util.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

std::string
Hex(const std::string& s)
{
    static const char* d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s)
    {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

std::unique_ptr<BaseAwareCompressor>
MakePulse(const AdapterLayout& layout)
{
    std::unique_ptr<Compressor> c = testing::MakeCompressor("pulse", layout, "");
    auto* p = dynamic_cast<BaseAwareCompressor*>(c.get());
    EXPECT_NE(p, nullptr);
    c.release();
    return std::unique_ptr<BaseAwareCompressor>(p);
}

TEST(Pulse, GoldenBytes)
{
    // Base: 1.0 (bf16), 0.1 (an fp32 value off the bf16 grid), 2.0, 0.5. Changes: +2^-7 (one
    // ulp: a bf16 delta), +0.01 (lands on bf16(0.11) = 0.10986328125: an fp32 delta),
    // +0.001 (below half an ulp of 2: bf16 unchanged, nothing sent), -2^-9 (0.5 - 2^-9 crosses a
    // power of two yet the delta itself is a bf16 value).
    const AdapterLayout layout = AdapterLayout::Create({{"a", 2, 2}}).value();
    auto c = MakePulse(layout);
    const std::vector<float> base = {1.0f, 0.1f, 2.0f, 0.5f};
    const std::vector<float> x = {0.0078125f, 0.01f, 0.001f, -0.001953125f};
    c->SetBase(&base);
    StatusOr<Encoded> e = c->Encode(x, 1 << 20);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    // k16 = 2, Elias-Fano L = 0 over n = 4 (indices 0, 3: upper bits 0 and 4 -> 0x11); k32 = 1
    // (index 1: bit 1 -> 0x02); bf16 2^-7 = 0x3c00, -2^-9 = 0xbb00; fp32 0.10986328125 - 0.1.
    const float d1 = 0.10986328125f - 0.1f;
    std::string f32;
    ByteWriter f32w(&f32);
    f32w.PutF32(d1);
    EXPECT_EQ(Hex(e->payload), "020011010002003c00bb" + Hex(f32));
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    EXPECT_EQ(out, (std::vector<float>{0.0078125f, d1, 0.0f, -0.001953125f}));
    EXPECT_EQ(base[1] + out[1], 0.10986328125f); // lands exactly on the bf16 value
    EXPECT_EQ(e->kept_per_matrix, (std::vector<int64_t>{3}));
}

TEST(Pulse, ReplicasLandOnTheBf16ValueAndOnlyChangedEntriesTravel)
{
    const AdapterLayout layout = testing::LoraLayout();
    auto c = MakePulse(layout);
    std::vector<float> base = testing::GaussianVector(layout.numel(), 3, 0.05);
    for (size_t i = 0; i < base.size(); i += 2)
        base[i] = RoundBf16(base[i]); // half on the bf16 grid, half initial fp32 values
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 4, 1e-4);
    c->SetBase(&base);
    StatusOr<Encoded> e = c->Encode(x, 1 << 30);
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    int64_t changed = 0;
    for (size_t i = 0; i < base.size(); ++i)
    {
        const float target = RoundBf16(base[i] + x[i]);
        if (FloatToBf16(target) == FloatToBf16(base[i]))
        {
            EXPECT_EQ(out[i], 0.0f) << i;
        }
        else
        {
            ++changed;
            EXPECT_EQ(base[i] + out[i], target) << i;
        }
    }
    int64_t shipped = 0;
    for (int64_t k : e->kept_per_matrix)
        shipped += k;
    EXPECT_EQ(shipped, changed);
    EXPECT_GT(changed, 0);
    EXPECT_LT(changed, layout.numel()); // steps of 1e-4 on weights of ~0.05 leave many unchanged
}

TEST(Pulse, TinyStepsShipAlmostNothing)
{
    const AdapterLayout layout = testing::LoraLayout();
    auto c = MakePulse(layout);
    std::vector<float> base = testing::GaussianVector(layout.numel(), 5, 0.5);
    for (float& v : base)
        v = RoundBf16(v);
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 6, 1e-6);
    c->SetBase(&base);
    StatusOr<Encoded> e = c->Encode(x, 1 << 30);
    ASSERT_TRUE(e.ok());
    EXPECT_LT(static_cast<int64_t>(e->payload.size()), layout.adapter_bytes() / 100);
}

TEST(Pulse, NeedsABaseAndAnUnboundedBudget)
{
    const AdapterLayout layout = testing::LoraLayout();
    auto c = MakePulse(layout);
    const std::vector<float> base(static_cast<size_t>(layout.numel()), 0.0f);
    const std::vector<float> x = testing::GaussianVector(layout.numel(), 7, 1.0);
    EXPECT_EQ(c->Encode(x, 1 << 30).status().code(), StatusCode::kInvalidArgument); // no base
    c->SetBase(&base);
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() / 2);
    EXPECT_EQ(e.status().code(), StatusCode::kBudgetTooSmall);
    EXPECT_NE(e.status().message().find("lossless"), std::string::npos);
    c->SetBase(&base);
    EXPECT_TRUE(c->Encode(x, 1 << 30).ok());

    // It takes no budget, and strategies that ship gradients or whole parameters cannot use it.
    {
        SyncSpec spec;
        spec.kind = SyncKind::kDelta;
        spec.compressor = "pulse";
        spec.budget = Budget::Fraction(0.5);
        StatusOr<std::unique_ptr<SyncStrategy>> s = NewSyncStrategy(spec, layout, {});
        EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
        EXPECT_NE(s.status().message().find("budget"), std::string::npos);
        spec.budget = Budget::Unlimited();
        EXPECT_TRUE(NewSyncStrategy(spec, layout, {}).ok());
    }
    for (SyncKind kind : {SyncKind::kHilo, SyncKind::kFull})
    {
        SyncSpec spec;
        spec.kind = kind;
        spec.compressor = "pulse";
        StatusOr<std::unique_ptr<SyncStrategy>> s = NewSyncStrategy(spec, layout, {});
        EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << SyncKindName(kind);
    }
}

TEST(Pulse, DamagedPayloadsAreCorruption)
{
    const AdapterLayout layout = AdapterLayout::Create({{"a", 2, 2}}).value();
    auto c = MakePulse(layout);
    std::vector<float> out;
    auto decode = [&](const std::string& hex)
    {
        std::string p;
        for (size_t i = 0; i + 1 < hex.size(); i += 2)
            p.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
        return c->Decode(p, &out).code();
    };
    EXPECT_EQ(decode("0100010000803f"), StatusCode::kOk);                   // entry 0 = 1.0 (bf16)
    EXPECT_EQ(decode("00000100010000803f"), StatusCode::kOk);               // entry 0 = 1.0 (fp32)
    EXPECT_EQ(decode("010001010001803f0000803f"), StatusCode::kCorruption); // entry 0 twice
    EXPECT_EQ(decode("0100010000"), StatusCode::kCorruption);               // value missing
    EXPECT_EQ(decode("0100010000803f00"), StatusCode::kCorruption);         // trailing byte
    EXPECT_EQ(decode("01000100000000"), StatusCode::kCorruption);           // a zero delta
    EXPECT_EQ(decode("010001000080ff"), StatusCode::kCorruption);           // -inf
    EXPECT_EQ(decode("0500"), StatusCode::kCorruption);                     // 5 entries of 4
}

TEST(Pulse, ThousandDeltaStepsHoldTheBf16OfTheLearner)
{
    const AdapterLayout layout = testing::LoraLayout();
    const AdapterState init = testing::InitialState(layout, 9);
    SyncSpec spec;
    spec.kind = SyncKind::kDelta;
    spec.compressor = "pulse";
    spec.error_feedback = ErrorFeedbackOptions{true, 1.0f};
    OptimizerConfig opt;
    opt.lr.base_lr = 1e-4f;
    auto pub = Publisher::Create(spec, layout, opt, init).value();
    auto rep = Replica::Create(spec, layout, opt, init).value();
    testing::SplitMix rng(77);
    std::vector<float> g;
    int64_t bytes = 0;
    int64_t off = 0; // entry-steps where the replica is one bf16 ulp from bf16(learner)
    for (int step = 1; step <= 1000; ++step)
    {
        testing::FillGradient(layout, &rng, &g);
        PublishedUpdate u = pub->Step(g).value();
        bytes += u.payload_bytes;
        ASSERT_TRUE(rep->Apply(u.frame).ok()) << "step " << step;
        const std::vector<float>& learner = pub->train_state().adapter.theta;
        const std::vector<float>& held = rep->state().adapter.theta;
        ASSERT_TRUE(testing::BitIdentical(held, pub->replica_view().adapter.theta));
        for (size_t i = 0; i < held.size(); ++i)
        {
            const bool untouched =
                held[i] == init.theta[i] && FloatToBf16(learner[i]) == FloatToBf16(init.theta[i]);
            if (held[i] == RoundBf16(learner[i]) || untouched)
                continue;
            // Pulse lands on bf16(w + X); with error feedback w + X is the learner's parameter up
            // to the fp32 rounding of the residual's bookkeeping, which can tip a value sitting
            // on a bf16 rounding boundary by one ulp.
            const int bits =
                static_cast<int>(FloatToBf16(held[i])) - static_cast<int>(FloatToBf16(learner[i]));
            ASSERT_LE(std::abs(bits), 1) << "step " << step << " entry " << i;
            ++off;
        }
    }
    EXPECT_GT(bytes, 0);
    EXPECT_LT(off, layout.numel() * 1000 / 10000);
}

} // namespace
} // namespace hilo
