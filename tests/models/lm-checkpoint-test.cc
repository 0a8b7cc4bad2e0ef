// LmCheckpoint: round trip, and every malformed file is a kCorruption (never a crash).
#include "models/lm-checkpoint.h"

#include "hilo/core/hash.h"

#include <cstring>

#include <gtest/gtest.h>

namespace models
{
namespace
{

LmCheckpoint
Sample()
{
    LmCheckpoint c;
    c.tensors["base.embed"] = at::arange(12, at::kFloat).view({3, 4}) * 0.5;
    c.tensors["x"] = at::ones({2}, at::kFloat);
    c.blobs["meta"] = "vocab: 3\n";
    c.blobs["text.heldout.teacher"] = std::string("a\0b", 3);
    return c;
}

TEST(LmCheckpoint, RoundTrip)
{
    const std::string bytes = Sample().Serialize();
    auto c = LmCheckpoint::Parse(bytes);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_TRUE(at::equal(c->tensors.at("base.embed"), Sample().tensors.at("base.embed")));
    EXPECT_EQ(c->blobs.at("text.heldout.teacher"), std::string("a\0b", 3));
    EXPECT_EQ(c->Serialize(), bytes);
    EXPECT_EQ(c->WithPrefix("base.").size(), 1u);
    EXPECT_TRUE(c->WithPrefix("base.").count("embed"));
}

TEST(LmCheckpoint, EveryTruncationAndBitFlipIsCorruption)
{
    const std::string bytes = Sample().Serialize();
    for (size_t n = 0; n < bytes.size(); ++n)
    {
        auto c = LmCheckpoint::Parse(std::string_view(bytes.data(), n));
        ASSERT_FALSE(c.ok()) << n;
        ASSERT_EQ(c.status().code(), hilo::StatusCode::kCorruption) << n;
    }
    for (size_t i = 0; i < bytes.size(); ++i)
    {
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(flipped[i] ^ 0x10);
        auto c = LmCheckpoint::Parse(flipped);
        ASSERT_FALSE(c.ok()) << i;
        ASSERT_EQ(c.status().code(), hilo::StatusCode::kCorruption) << i;
    }
}

/// `bytes` with its trailing digest recomputed: a well-sealed but malformed file.
std::string
Reseal(std::string bytes)
{
    const uint64_t d = hilo::HashBytes(bytes.data(), bytes.size() - 8);
    std::memcpy(&bytes[bytes.size() - 8], &d, 8);
    return bytes;
}

TEST(LmCheckpoint, SealedButMalformedFilesAreCorruption)
{
    LmCheckpoint one;
    one.tensors["w"] = at::ones({2}, at::kFloat);
    const std::string bytes = one.Serialize();
    // magic 8, entries 4, type 1, name length 2, name "w" 1, ndim at offset 16.
    std::string bad = bytes;
    bad[16] = 9;
    auto c = LmCheckpoint::Parse(Reseal(bad));
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("ndim"), std::string::npos) << c.status().ToString();
    bad = bytes;
    const float inf = INFINITY;
    std::memcpy(&bad[21], &inf, 4); // the first value
    c = LmCheckpoint::Parse(Reseal(bad));
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("non-finite"), std::string::npos) << c.status().ToString();
    bad = bytes;
    bad[8] = 2; // two entries announced, one present
    c = LmCheckpoint::Parse(Reseal(bad));
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), hilo::StatusCode::kCorruption);
    bad = bytes;
    bad[15] = '/'; // name
    c = LmCheckpoint::Parse(Reseal(bad));
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("name"), std::string::npos) << c.status().ToString();
}

TEST(LmCheckpoint, MissingFileNamesThePath)
{
    auto c = LmCheckpoint::Read("/nonexistent/fortunes-lm.bin");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find("/nonexistent/fortunes-lm.bin"), std::string::npos);
}

} // namespace
} // namespace models
