// Golden bytes: the exact frames of one Update and one Snapshot. If one of these fails, the wire
// format changed: bump kFormatVersion / the compressor Name() and update FORMAT.md on purpose.
#include "hilo/sync/publisher.h"
#include "hilo/wire/messages.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

std::string
Hex(const std::string& bytes)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes)
    {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

struct Fixture
{
    AdapterLayout layout = AdapterLayout::Create({{"a", 1, 2}, {"b", 2, 1}}).value();
    OptimizerConfig opt;
    SyncSpec spec;
    AdapterState init;

    Fixture()
    {
        spec.kind = SyncKind::kHilo;
        spec.compressor = "dense";
        spec.compressor_options = {{"dtype", "bf16"}};
        init.theta = {0.5f, -0.25f, 0.0f, 0.0f};
    }
};

TEST(WireGolden, Update)
{
    Fixture f;
    auto p = Publisher::Create(f.spec, f.layout, f.opt, f.init).value();
    PublishedUpdate u = p->Step({1.0f, -2.0f, 0.5f, 0.125f}).value();
    EXPECT_EQ(Hex(u.frame),
              "484c4f310100000039000000000000000cb507730801100120022a0864656e73652d763132"
              "0a64747970653d626631363a0901803f00c0003f003e418c750ccf95706148494a462707493f"
              "c604");
}

TEST(WireGolden, Snapshot)
{
    Fixture f;
    auto p = Publisher::Create(f.spec, f.layout, f.opt, f.init,
                               PublisherOptions{/*ring_capacity=*/4, /*snapshot_interval=*/1})
                 .value();
    ASSERT_TRUE(p->Step({1.0f, -2.0f, 0.5f, 0.125f}).ok());
    EXPECT_EQ(p->latest_snapshot_version(), 1u);
    EXPECT_EQ(Hex(p->LatestSnapshotFrame().value()),
              "484c4f3102000000580000000000000001a0601a08011001194a462707493fc6042210ee7cff3e"
              "dbf97ebe6f1283ba6e1283ba2a10d0cccc3dd0cc4cbed0cc4c3dd0cc4c3c32100012833a0012"
              "833b00128339001283373801456666663f4d77be7f3f518c750ccf95706148");
}

TEST(WireGolden, SnapshotRoundTrip)
{
    Fixture f;
    auto p = Publisher::Create(f.spec, f.layout, f.opt, f.init,
                               PublisherOptions{/*ring_capacity=*/4, /*snapshot_interval=*/1})
                 .value();
    ASSERT_TRUE(p->Step({1.0f, -2.0f, 0.5f, 0.125f}).ok());
    auto snap = DecodeSnapshotFrame(p->LatestSnapshotFrame().value(), f.layout.numel()).value();
    EXPECT_EQ(snap.config_hash, p->config_hash());
    EXPECT_EQ(snap.state.adapter.theta, p->train_state().adapter.theta);
    EXPECT_EQ(snap.state.optimizer.m, p->train_state().optimizer.m);
    EXPECT_EQ(snap.state.optimizer.v, p->train_state().optimizer.v);
    EXPECT_EQ(snap.state.optimizer.step, 1u);
    EXPECT_EQ(snap.state.optimizer.beta1_prod, p->train_state().optimizer.beta1_prod);
    EXPECT_EQ(snap.state.adapter.version, 1u);
}

} // namespace
} // namespace hilo
