// A host's egress (sim/net/host-egress.h): several connections leaving one host share its NIC in
// turn, as a Linux host's do (TCP small queues under fq_codel), and a single connection's
// packets leave in the order a FIFO would send them; AQM queue discs and routers are untouched.
#include "net-test-util.h"

#include "sim/net/host-egress.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"

#include "ns3/fifo-queue-disc.h"
#include "ns3/fq-codel-queue-disc.h"
#include "ns3/queue.h"
#include "ns3/red-queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace hilosim
{
namespace
{

using testing::Link;
using testing::RandomPayload;
using testing::RunAndDestroy;

ns3::Ptr<ns3::QueueDisc>
RootDisc(ns3::Ptr<ns3::Node> node, ns3::Ptr<ns3::NetDevice> device)
{
    return node->GetObject<ns3::TrafficControlLayer>()->GetRootQueueDiscOnDevice(device);
}

class HostEgress : public ::testing::Test
{
  protected:
    void TearDown() override { ns3::Simulator::Destroy(); }
};

TEST_F(HostEgress, AHostsFifoBecomesAnUnboundedFairQueueOverAOnePacketDevice)
{
    TopologySpec spec;
    spec.learner_uplink = Link("50Mbps", "1ms", 1500, 0.0, "fifo");
    spec.worker_links = {Link("1Gbps", "5ms", 1500, 0.0, "none"),
                         Link("1Gbps", "5ms", 1500, 0.0, "red")};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok()) << topo.status().ToString();
    const InstalledLink& uplink = topo->GetLinks().at(0);
    ASSERT_EQ(uplink.name, "uplink");
    ASSERT_TRUE(
        ns3::DynamicCast<ns3::FifoQueueDisc>(RootDisc(topo->GetLearner(), uplink.device_a)));

    for (int i = 0; i < 2; ++i) // the second call changes nothing
    {
        MakeHostEgressFair(topo->GetLearner());
        MakeHostEgressFair(topo->GetWorker(0));
        MakeHostEgressFair(topo->GetWorker(1));
    }
    // The learner's FIFO, and worker 0's bare device queue ("none"), are now fair queues.
    auto learner =
        ns3::DynamicCast<ns3::FqCoDelQueueDisc>(RootDisc(topo->GetLearner(), uplink.device_a));
    ASSERT_TRUE(learner);
    EXPECT_EQ(learner->GetMaxSize().GetValue(), kHostBacklogPackets);
    EXPECT_EQ(uplink.device_a->GetQueue()->GetMaxSize().GetValue(), 1u);
    const InstalledLink& worker0 = topo->GetWorkerLink(0);
    EXPECT_TRUE(
        ns3::DynamicCast<ns3::FqCoDelQueueDisc>(RootDisc(topo->GetWorker(0), worker0.device_b)));
    EXPECT_EQ(worker0.device_b->GetQueue()->GetMaxSize().GetValue(), 1u);
    // Worker 1's RED (an AQM the scenario chose) stays, and so does the hub's (a router) FIFO.
    const InstalledLink& worker1 = topo->GetWorkerLink(1);
    EXPECT_TRUE(
        ns3::DynamicCast<ns3::RedQueueDisc>(RootDisc(topo->GetWorker(1), worker1.device_b)));
    EXPECT_TRUE(ns3::DynamicCast<ns3::FifoQueueDisc>(
        RootDisc(uplink.device_b->GetNode(), uplink.device_b)));
}

// The learner sends one update of `wire` bytes to each of `workers` workers at once, over a
// 500 Mbps / 1 ms uplink and 100 Mbps / 40 ms worker links (MTU 1500): the shape of
// scenarios/validation/star-8-shared-uplink.textproto. Returns each worker's receive time minus
// the send time, seconds.
std::vector<double>
Broadcast(uint32_t workers, uint64_t wire)
{
    TopologySpec spec;
    spec.learner_uplink = Link("500Mbps", "1ms", 1500);
    for (uint32_t w = 0; w < workers; ++w)
    {
        spec.worker_links.push_back(Link("100Mbps", "40ms", 1500));
    }
    auto topo = TopologyBuilder::Build(spec);
    EXPECT_TRUE(topo.ok()) << topo.status().ToString();
    TransportEndpoints ends = TransportHelper().Install(*topo);
    auto payload = RandomPayload(wire, 3);
    std::vector<double> latency(workers, -1);
    const double sentAt = 1.0; // every connection is up by then
    ns3::Simulator::Schedule(
        ns3::Seconds(sentAt),
        [&]()
        {
            for (uint32_t w = 0; w < workers; ++w)
            {
                EXPECT_TRUE(ends.GetLearner()->Send(WorkerPeerId(w), 1, payload, wire).ok());
            }
        });
    for (uint32_t w = 0; w < workers; ++w)
    {
        ends.GetWorker(w)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [&latency, w, sentAt](uint32_t, const Message&)
            { latency[w] = ns3::Simulator::Now().GetSeconds() - sentAt; }));
    }
    RunAndDestroy(ns3::Seconds(60));
    return latency;
}

TEST_F(HostEgress, ConnectionsLeavingOneHostShareItsUplinkInTurn)
{
    // Eight 1.34 MB updates (925 segments each) leave the learner at once. Alone on its path
    // each needs seven slow-start rounds of 82 ms from the initial 10 segments (10, 20, ...,
    // 640), about 0.58 s with the last round's 0.05 s of serialization at 100 Mbps; the
    // uplink's 500 Mbps carries the eight rounds' bursts at the worker links' combined
    // 800 Mbps with little delay. Served in turn, every worker's rounds keep pace with the
    // others' and all eight arrive within a millisecond or two of each other. One window after
    // another (a FIFO holding every window: the first worker's round crosses the uplink before
    // the second's starts) the last workers' rounds end later each time, and they arrive 70-90
    // ms after the first.
    const std::vector<double> t = Broadcast(8, 1340000);
    for (double x : t)
    {
        ASSERT_GT(x, 0) << "never arrived";
    }
    const auto [first, last] = std::minmax_element(t.begin(), t.end());
    EXPECT_GT(*first, 0.55);
    EXPECT_LT(*last, 0.60);
    EXPECT_LT(*last - *first, 0.005) << "first " << *first << " s, last " << *last << " s";
}

} // namespace
} // namespace hilosim
