// Inputs the fuzz targets (tests/fuzz) found crashing, each pinned as the behaviour its fix gives.
// The fuzzer's own bytes are in tests/fuzz/regressions/TARGET/, where scripts/fuzz.sh replays them
// under ASan and UBSan on every run: those see what a plain build cannot (the two bugs here were
// memcpy calls with a null destination and a length of 0, undefined behaviour that happens to
// work).
#include "hilo/core/coding.h"
#include "hilo/wire/messages.h"
#include "tests/hilo/compress-test-util.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

// fuzz-compressor-decode, regressions/fuzz-compressor-decode/topk-empty-selection: a top-k payload
// that keeps no entry -- what Encode writes at its smallest budget -- decoded by reading zero
// values into an empty vector's null data().
TEST(FuzzRegressions, TopKDecodesAnEmptySelection)
{
    const AdapterLayout layout = AdapterLayout::Create({{"a", 2, 3}, {"b", 3, 2}}).value();
    auto topk = testing::MakeCompressor("topk", layout, "dtype=fp32");
    const std::string payload("\x00\x00\x00\x00", 4); // fp32, global scope, k = 0, L = 0
    const std::vector<float> x = {0.5f, -3.0f, 0.25f, 1.0f,    0.0f, -0.125f,
                                  2.0f, 0.75f, -1.5f, 0.0625f, 4.0f, -0.5f};
    EXPECT_EQ(topk->Encode(x, topk->MinPayloadBytes()).value().payload, payload);

    std::vector<float> out(3, 7.0f);
    Status s = topk->Decode(payload, &out);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(out, std::vector<float>(12, 0.0f));
}

TEST(FuzzRegressions, ByteReaderReadsZeroFloatsWithoutABuffer)
{
    for (ValueDtype dtype : {ValueDtype::kFp32, ValueDtype::kBf16, ValueDtype::kFp16})
    {
        ByteReader r(std::string_view("ab", 2));
        EXPECT_TRUE(r.GetFloats(nullptr, 0, dtype));
        EXPECT_EQ(r.remaining(), 2u);
    }
}

// fuzz-frame, regressions/fuzz-frame/snapshot-of-empty-layout: a snapshot checked against a
// layout of no parameters copied its empty theta into a null pointer.
TEST(FuzzRegressions, SnapshotOfAnEmptyLayoutRoundTrips)
{
    ReplicatedState empty;
    empty.adapter.version = 3;
    const std::string frame = EncodeSnapshotFrame(empty, /*config_hash=*/5).value();
    StatusOr<DecodedSnapshot> back = DecodeSnapshotFrame(frame, /*numel=*/0);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(back->state.adapter.theta.empty());
    EXPECT_EQ(back->state.adapter.version, 3u);
    EXPECT_EQ(back->config_hash, 5u);
    // Values where the layout has none are still corrupt.
    ReplicatedState one;
    one.adapter.theta = {1.0f};
    EXPECT_EQ(DecodeSnapshotFrame(EncodeSnapshotFrame(one, 5).value(), 0).status().code(),
              StatusCode::kCorruption);
}

} // namespace
} // namespace hilo
