// LinkMonitor (sim/net/link-monitor.h): bytes per link direction equal the frames the device put
// on the wire; a link saturated by one transfer shows a peak utilisation of ~1 (never above), and
// the mean over the run is the bits over bandwidth x duration.
#include "net-test-util.h"

#include "sim/net/link-monitor.h"
#include "sim/net/message-endpoint.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"

#include "ns3/simulator.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

using testing::Link;
using testing::LinkByteCounter;
using testing::RandomPayload;

TEST(NetLinkMonitor, CountsEveryFrameAndFindsTheSaturatedWindow)
{
    TopologySpec spec;
    spec.worker_links = {Link("100Mbps", "10ms", 1500)};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok());
    const InstalledLink& link = topo->GetLinks().at(0);
    LinkMonitor monitor(ns3::MilliSeconds(100));
    monitor.Watch(link);
    LinkByteCounter down_frames(link.device_a); // the device's MacTx: the same frames
    LinkByteCounter up_frames(link.device_b);
    uint32_t largest = 0;
    link.device_a->TraceConnectWithoutContext("PhyTxBegin",
                                              ns3::Callback<void, ns3::Ptr<const ns3::Packet>>(
                                                  [&](ns3::Ptr<const ns3::Packet> p)
                                                  { largest = std::max(largest, p->GetSize()); }));
    TransportEndpoints ends = TransportHelper().Install(*topo);
    const uint64_t wire = 5000000; // 0.4 s at 100 Mbps: several saturated windows
    ASSERT_TRUE(ends.GetLearner()->Send(WorkerPeerId(0), 1, RandomPayload(1000, 1), wire).ok());
    ns3::Simulator::Stop(ns3::Seconds(2));
    ns3::Simulator::Run();
    const std::vector<LinkUsage> usage = monitor.Usage(ns3::Seconds(2));
    ns3::Simulator::Destroy();

    ASSERT_EQ(usage.size(), 2u);
    const LinkUsage& down = usage[0];
    const LinkUsage& up = usage[1];
    EXPECT_EQ(down.link, link.name);
    EXPECT_EQ(down.direction, "down");
    EXPECT_EQ(up.direction, "up");
    EXPECT_EQ(down.bandwidth_bps, 100000000u);
    EXPECT_EQ(largest, 1502u); // a full frame: the 1500-byte IP packet and the PPP header
    // Every frame the device took, all transmitted by the end of the run.
    EXPECT_EQ(down.bytes, down_frames.GetBytes());
    EXPECT_EQ(up.bytes, up_frames.GetBytes());
    EXPECT_GT(down.bytes, wire);
    EXPECT_NEAR(down.mean_utilisation, down.bytes * 8.0 / (1e8 * 2.0), 1e-12);
    EXPECT_GT(down.peak_utilisation, 0.95); // a window inside the transfer is full
    EXPECT_LE(down.peak_utilisation, 1.0);
    EXPECT_LT(up.peak_utilisation, 0.1); // ACKs only
    EXPECT_EQ(down.window_s, 0.1);
}

TEST(NetLinkMonitor, FramesStartingOnWindowBoundariesAreSpreadExactly)
{
    // 2000 frames, each starting exactly on a window boundary (k x 10 ms): every frame's bits
    // land in the window it starts in (it lasts 8.16 us at 100 Mbps), none is lost or counted
    // twice, whatever the rounding of k x 10 ms. (IPv6 frames: the nodes have no IPv6 stack, so
    // nothing answers them.)
    TopologySpec spec;
    spec.worker_links = {Link("100Mbps", "1ms", 1500)};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok());
    const InstalledLink& link = topo->GetLinks().at(0);
    LinkMonitor monitor(ns3::MilliSeconds(10));
    monitor.Watch(link);
    const int frames = 2000;
    for (int k = 1; k <= frames; ++k)
    {
        ns3::Simulator::Schedule(ns3::MilliSeconds(10) * k,
                                 [&link]() {
                                     link.device_a->Send(ns3::Create<ns3::Packet>(100),
                                                         link.device_b->GetAddress(), 0x86DD);
                                 });
    }
    ns3::Simulator::Stop(ns3::Seconds(21));
    ns3::Simulator::Run();
    const std::vector<LinkUsage> usage = monitor.Usage(ns3::Seconds(21));
    ns3::Simulator::Destroy();
    const LinkUsage& down = usage.at(0);
    EXPECT_EQ(down.packets, static_cast<uint64_t>(frames));
    EXPECT_EQ(down.bytes, static_cast<uint64_t>(frames) * 102); // PPP header on each
    EXPECT_NEAR(down.mean_utilisation, frames * 102 * 8.0 / (1e8 * 21), 1e-12);
    EXPECT_NEAR(down.peak_utilisation, 102 * 8.0 / (1e8 * 0.01), 1e-12); // one frame per window
}

} // namespace
} // namespace hilosim
