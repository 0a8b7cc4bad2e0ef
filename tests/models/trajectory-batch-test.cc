// TrajectoryBatch wire format: round trip, golden bytes, and every kind of damage is kCorruption.
#include "models/trajectory-batch.h"

#include <gtest/gtest.h>

#include <cmath>

namespace models
{
namespace
{

TrajectoryBatch
Tiny()
{
    TrajectoryBatch b;
    b.kind = WorkloadKind::kGrpo;
    b.step = 3;
    b.worker = 1;
    b.sequences = 2;
    b.prompt_len = 1;
    b.gen_len = 1;
    b.group_size = 2;
    b.vocab = 5;
    b.tokens = {1, 2, 3, 4};
    b.behaviour_logp = {-0.5f, -1.0f};
    b.rewards = {0.25f, 1.0f};
    return b;
}

std::string
Hex(const std::string& s)
{
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s)
    {
        out.push_back(kDigits[c >> 4]);
        out.push_back(kDigits[c & 15]);
    }
    return out;
}

TEST(TrajectoryBatchTest, GoldenBytes)
{
    // Fails when the format changes by accident: bump the format byte and update FORMAT notes.
    EXPECT_EQ(Hex(Tiny().Serialize()),
              "4854524a0102030000000000000001000000020000000100000001000000020000000500000001000200"
              "03000400000000bf000080bf0000803e0000803fbfea1854");
}

TEST(TrajectoryBatchTest, RoundTrip)
{
    TrajectoryBatch b = Tiny();
    auto parsed = TrajectoryBatch::Parse(b.Serialize());
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->kind, b.kind);
    EXPECT_EQ(parsed->step, b.step);
    EXPECT_EQ(parsed->worker, b.worker);
    EXPECT_EQ(parsed->tokens, b.tokens);
    EXPECT_EQ(parsed->behaviour_logp, b.behaviour_logp);
    EXPECT_EQ(parsed->rewards, b.rewards);
    EXPECT_EQ(parsed->Serialize(), b.Serialize());
}

TEST(TrajectoryBatchTest, EveryFlippedByteIsCorruption)
{
    const std::string good = Tiny().Serialize();
    for (size_t i = 0; i < good.size(); ++i)
    {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ 0x40);
        EXPECT_EQ(TrajectoryBatch::Parse(bad).status().code(), hilo::StatusCode::kCorruption)
            << "byte " << i;
    }
    for (size_t n = 0; n < good.size(); ++n)
    {
        EXPECT_EQ(TrajectoryBatch::Parse(good.substr(0, n)).status().code(),
                  hilo::StatusCode::kCorruption)
            << "truncated to " << n;
    }
    EXPECT_EQ(TrajectoryBatch::Parse(good + "x").status().code(), hilo::StatusCode::kCorruption);
}

TEST(TrajectoryBatchTest, SemanticDamageWithValidCrcIsCorruption)
{
    TrajectoryBatch b = Tiny();
    b.tokens[2] = 4;
    b.vocab = 4; // token 4 is now outside the vocabulary; Serialize does not check
    EXPECT_FALSE(b.Validate().ok());
    EXPECT_EQ(TrajectoryBatch::Parse(b.Serialize()).status().code(), hilo::StatusCode::kCorruption);
    b = Tiny();
    b.behaviour_logp[0] = NAN;
    EXPECT_EQ(TrajectoryBatch::Parse(b.Serialize()).status().code(), hilo::StatusCode::kCorruption);
    b = Tiny();
    b.group_size = 3; // 2 sequences do not split into groups of 3
    EXPECT_EQ(TrajectoryBatch::Parse(b.Serialize()).status().code(), hilo::StatusCode::kCorruption);
}

} // namespace
} // namespace models
