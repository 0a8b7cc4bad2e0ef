// The transport under faults (sim/net): a link outage delays but loses nothing; bytes damaged
// before TCP are repaired by TCP (checksums on), bytes damaged after TCP are caught by the frame
// checks, in real and in virtual bytes, and end the connection; an aborted peer is heard, messages
// to it are dropped, and a redial brings the connection back; heartbeats make an idle connection
// over a dead path end instead of hanging forever.
#include "net-test-util.h"

#include "sim/net/link-fault-model.h"
#include "sim/net/message-endpoint.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <vector>

namespace hilosim
{
namespace
{

using testing::Link;
using testing::RandomPayload;

/// ns-3's IPv4 and TCP checksums on for one test (a process-wide setting).
class Checksums
{
  public:
    Checksums() { ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(true)); }
    ~Checksums() { ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(false)); }
};

/// One worker and the learner over one link; what each end hears.
struct Pair
{
    explicit Pair(const LinkSpec& link, ns3::Time heartbeat = ns3::Seconds(10))
    {
        TopologySpec spec;
        spec.worker_links = {link};
        auto built = TopologyBuilder::Build(spec);
        EXPECT_TRUE(built.ok());
        topology = std::move(*built);
        ns3::Config::SetDefault("hilosim::MessageEndpoint::HeartbeatInterval",
                                ns3::TimeValue(heartbeat));
        ends = TransportHelper().Install(topology);
        ns3::Config::SetDefault("hilosim::MessageEndpoint::HeartbeatInterval",
                                ns3::TimeValue(ns3::Seconds(10)));
        ends.GetLearner()->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [this](uint32_t, const Message& m) { at_learner.push_back(m); }));
        ends.GetWorker(0)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [this](uint32_t, const Message& m) { at_worker.push_back(m); }));
        ends.GetLearner()->SetPeerClosedCallback(ns3::Callback<void, uint32_t, bool>(
            [this](uint32_t, bool error) {
                learner_closed.push_back({ns3::Simulator::Now().GetSeconds(), error});
            }));
        ends.GetWorker(0)->SetPeerClosedCallback(ns3::Callback<void, uint32_t, bool>(
            [this](uint32_t, bool error) {
                worker_closed.push_back({ns3::Simulator::Now().GetSeconds(), error});
            }));
        ends.GetLearner()->TraceConnectWithoutContext(
            "MessageDropped", ns3::Callback<void, uint32_t, uint32_t, uint64_t>(
                                  [this](uint32_t, uint32_t, uint64_t) { ++dropped; }));
        const InstalledLink& l = topology.GetWorkerLink(0);
        to_worker = LinkFaultModel::InstallOn(l.device_b, 77);
        to_learner = LinkFaultModel::InstallOn(l.device_a, 78);
    }

    Topology topology;
    TransportEndpoints ends;
    std::vector<Message> at_learner, at_worker;
    std::vector<std::pair<double, bool>> learner_closed, worker_closed; // (time, error)
    uint64_t dropped{0};
    ns3::Ptr<LinkFaultModel> to_worker;  // damages what the worker receives
    ns3::Ptr<LinkFaultModel> to_learner; // damages what the learner receives
};

TEST(NetFaults, AnOutageDelaysButLosesNothing)
{
    Pair p(Link("100Mbps", "10ms", 1500));
    ns3::Simulator::Schedule(ns3::Seconds(0.5), [&]() { p.to_worker->StartOutage(1); });
    ns3::Simulator::Schedule(ns3::Seconds(3.5), [&]() { p.to_worker->End(1); });
    auto payload = RandomPayload(200000, 1);
    ns3::Simulator::Schedule(
        ns3::Seconds(0.6),
        [&]() { ASSERT_TRUE(p.ends.GetLearner()->Send(0, 1, payload, 2000000).ok()); });
    testing::RunAndDestroy(ns3::Seconds(60));
    ASSERT_EQ(p.at_worker.size(), 1u);
    EXPECT_EQ(p.at_worker[0].payload, *payload);
    EXPECT_GT(p.at_worker[0].received_at, ns3::Seconds(3.5)) << "nothing crossed while down";
    EXPECT_GT(p.to_worker->GetFaultDrops(), 0u);
    EXPECT_TRUE(p.learner_closed.empty() && p.worker_closed.empty()) << "TCP rode it out";
}

TEST(NetFaults, DamageBeforeTcpIsRepairedByTcp)
{
    const Checksums on;
    Pair p(Link("100Mbps", "10ms", 1500));
    p.to_worker->StartCorruption(1, 0.3, /*after_tcp=*/false);
    auto real = RandomPayload(300000, 2);
    auto mostly_virtual = RandomPayload(1000, 3);
    ASSERT_TRUE(p.ends.GetLearner()->Send(0, 1, real, 300000).ok());
    ASSERT_TRUE(p.ends.GetLearner()->Send(0, 2, mostly_virtual, 3000000).ok());
    // At 30% segment loss the 3 MB message takes minutes of simulated time (unpaced CUBIC with
    // HyStart delivered it at 125 s, paced slow start before 120 s): the horizon leaves room, since
    // what is checked is that TCP repairs every damaged segment, not how fast.
    testing::RunAndDestroy(ns3::Seconds(600));
    EXPECT_GT(p.to_worker->GetCorrupted(), 50u);
    ASSERT_EQ(p.at_worker.size(), 2u);
    EXPECT_EQ(p.at_worker[0].payload, *real) << "TCP dropped every damaged segment and resent it";
    EXPECT_EQ(p.at_worker[1].payload, *mostly_virtual);
    EXPECT_TRUE(p.learner_closed.empty() && p.worker_closed.empty());
}

/// Damage after TCP on the learner -> worker direction, from the first data segment on: the
/// worker's frame checks refuse the message and close the connection.
void
ExpectCaughtAfterTcp(size_t real_bytes, uint64_t wire_bytes)
{
    const Checksums on;
    Pair p(Link("100Mbps", "10ms", 1500));
    p.to_worker->StartCorruption(1, 1.0, /*after_tcp=*/true);
    auto payload = RandomPayload(real_bytes, 4);
    ASSERT_TRUE(p.ends.GetLearner()->Send(0, 1, payload, wire_bytes).ok());
    testing::RunAndDestroy(ns3::Seconds(60));
    EXPECT_GT(p.to_worker->GetCorrupted(), 0u);
    EXPECT_TRUE(p.at_worker.empty()) << "a damaged message is never delivered";
    ASSERT_FALSE(p.worker_closed.empty()) << "the worker ends the stream it cannot trust";
    EXPECT_TRUE(p.worker_closed.front().second) << "as an error";
    EXPECT_FALSE(p.learner_closed.empty()) << "and the learner hears of it";
}

TEST(NetFaults, DamageAfterTcpIsCaughtByTheFrameChecksInRealBytes)
{
    ExpectCaughtAfterTcp(100000, 100000);
}

TEST(NetFaults, DamageAfterTcpIsCaughtByTheFrameChecksInVirtualBytes)
{
    ExpectCaughtAfterTcp(10, 1000000); // every data segment after the first is padding
}

TEST(NetFaults, AnAbortedPeerIsHeardDroppedAndRedialled)
{
    Pair p(Link("1Gbps", "5ms"));
    // The worker's process dies at 1 s: the learner hears the connection end; what it sends then
    // is dropped (and traced); at 2 s the worker dials again and messages flow both ways.
    ns3::Simulator::Schedule(ns3::Seconds(1), [&]() { p.ends.GetWorker(0)->Abort(); });
    ns3::Simulator::Schedule(
        ns3::Seconds(1.5),
        [&]() { ASSERT_TRUE(p.ends.GetLearner()->Send(0, 1, RandomPayload(10, 5), 10).ok()); });
    ns3::Simulator::Schedule(ns3::Seconds(2),
                             [&]() { p.ends.GetWorker(0)->Redial(kLearnerPeerId); });
    ns3::Simulator::Schedule(
        ns3::Seconds(2.5),
        [&]()
        {
            ASSERT_TRUE(p.ends.GetLearner()->Send(0, 2, RandomPayload(10, 6), 10).ok());
            ASSERT_TRUE(
                p.ends.GetWorker(0)->Send(kLearnerPeerId, 3, RandomPayload(10, 7), 10).ok());
        });
    testing::RunAndDestroy(ns3::Seconds(60));
    ASSERT_EQ(p.learner_closed.size(), 1u);
    EXPECT_NEAR(p.learner_closed[0].first, 1.0, 0.1);
    EXPECT_TRUE(p.worker_closed.empty()) << "an aborted endpoint hears nothing of its own end";
    EXPECT_EQ(p.dropped, 1u);
    ASSERT_EQ(p.at_worker.size(), 1u);
    EXPECT_EQ(p.at_worker[0].type, 2u);
    EXPECT_EQ(p.at_worker[0].sequence, 0u) << "a new connection";
    ASSERT_EQ(p.at_learner.size(), 1u);
    EXPECT_EQ(p.at_learner[0].type, 3u);
}

TEST(NetFaults, HeartbeatsEndAnIdleConnectionOverADeadPath)
{
    // The path dies for good at 1 s while both ends are idle. With heartbeats, each end soon has
    // data in flight and TCP gives up on it; without them nothing would ever notice.
    for (bool heartbeats : {true, false})
    {
        Pair p(Link("1Gbps", "5ms"), heartbeats ? ns3::Seconds(10) : ns3::Time(0));
        ns3::Simulator::Schedule(ns3::Seconds(1),
                                 [&]()
                                 {
                                     p.to_worker->StartOutage(1);
                                     p.to_learner->StartOutage(1);
                                 });
        testing::RunAndDestroy(ns3::Seconds(1000));
        if (heartbeats)
        {
            ASSERT_EQ(p.learner_closed.size(), 1u);
            ASSERT_EQ(p.worker_closed.size(), 1u);
            EXPECT_TRUE(p.learner_closed[0].second && p.worker_closed[0].second);
            EXPECT_LT(p.learner_closed[0].first, 300.0);
        }
        else
        {
            EXPECT_TRUE(p.learner_closed.empty() && p.worker_closed.empty());
        }
    }
}

} // namespace
} // namespace hilosim
