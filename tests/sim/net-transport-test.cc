// Message transport over ns-3 TCP (sim/net/message-endpoint.h): real bytes arrive byte-equal and
// wire sizes are counted, whatever the size, loss, MTU or number of messages and receivers; the
// latency of a large transfer is close to the physical bound.
#include "net-test-util.h"

#include "sim/net/message-endpoint.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"

#include "ns3/simulator.h"
#include "ns3/tcp-bbr.h"
#include "ns3/tcp-congestion-ops.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace hilosim
{
namespace
{

using testing::Link;
using testing::RandomPayload;
using testing::RunAndDestroy;

struct Sent
{
    uint32_t type;
    std::shared_ptr<const std::string> payload;
    uint64_t wire;
};

/// Records what an endpoint receives, by peer.
struct Inbox
{
    std::map<uint32_t, std::vector<Message>> byPeer;
    std::map<uint32_t, std::vector<MessageMeta>> sentByPeer;

    void Attach(ns3::Ptr<MessageTransport> endpoint)
    {
        endpoint->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [this](uint32_t peer, const Message& m) { byPeer[peer].push_back(m); }));
        endpoint->TraceConnectWithoutContext("MessageSent",
                                             ns3::Callback<void, uint32_t, const MessageMeta&>(
                                                 [this](uint32_t peer, const MessageMeta& m)
                                                 { sentByPeer[peer].push_back(m); }));
    }
};

void
ExpectDelivered(const std::vector<Sent>& sent, const std::vector<Message>& got, const char* what)
{
    ASSERT_EQ(got.size(), sent.size()) << what;
    for (size_t i = 0; i < sent.size(); ++i)
    {
        EXPECT_EQ(got[i].type, sent[i].type) << what << " message " << i;
        EXPECT_EQ(got[i].sequence, i) << what;
        EXPECT_EQ(got[i].wire_bytes, sent[i].wire) << what << " message " << i;
        EXPECT_TRUE(got[i].payload == *sent[i].payload)
            << what << " message " << i << ": " << got[i].payload.size() << " of "
            << sent[i].payload->size() << " real bytes, content differs";
        EXPECT_GE(got[i].received_at, got[i].sent_at);
        if (i > 0)
        {
            EXPECT_GE(got[i].received_at, got[i - 1].received_at) << "in order";
        }
    }
}

/// One learner, one worker over `link`; messages both ways, all queued at t=0.
void
RunBothWays(const LinkSpec& link, const std::vector<Sent>& down, const std::vector<Sent>& up)
{
    TopologySpec spec;
    spec.worker_links = {link};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok()) << topo.status().ToString();
    TransportEndpoints ends = TransportHelper().Install(*topo);
    Inbox learner;
    Inbox worker;
    learner.Attach(ends.GetLearner());
    worker.Attach(ends.GetWorker(0));
    for (const Sent& s : down)
    {
        // Queued at the learner before the worker has connected: waits in the endpoint.
        ASSERT_TRUE(ends.GetLearner()->Send(WorkerPeerId(0), s.type, s.payload, s.wire).ok());
    }
    for (const Sent& s : up)
    {
        ASSERT_TRUE(ends.GetWorker(0)->Send(kLearnerPeerId, s.type, s.payload, s.wire).ok());
    }
    RunAndDestroy();
    ExpectDelivered(down, worker.byPeer[kLearnerPeerId], "learner->worker");
    ExpectDelivered(up, learner.byPeer[WorkerPeerId(0)], "worker->learner");
    ASSERT_EQ(learner.sentByPeer[WorkerPeerId(0)].size(), down.size()) << "MessageSent trace";
    for (size_t i = 0; i < down.size(); ++i)
    {
        const MessageMeta& meta = learner.sentByPeer[WorkerPeerId(0)][i];
        EXPECT_EQ(meta.sequence, i);
        EXPECT_EQ(meta.wire_bytes, down[i].wire);
        EXPECT_EQ(meta.payload_bytes, down[i].payload->size());
    }
}

TEST(NetTransport, SizesFromOneByteToTensOfMegabytesOverALossyLink)
{
    // 1% loss each way, jumbo frames: tests framing under retransmission, not packetisation cost.
    std::vector<Sent> down = {
        {1, RandomPayload(1, 1), 1},
        {2, RandomPayload(1, 2), 1000}, // 1 real byte, 999 virtual
        {3, RandomPayload(0, 3), 5000}, // no real bytes at all
        {4, RandomPayload(40000, 4), 40000},
        {5, RandomPayload(3000000, 5), 30000000}, // 3 MB real + 27 MB virtual
        {6, RandomPayload(123457, 6), 2000000},
    };
    std::vector<Sent> up = {
        {10, RandomPayload(700000, 10), 7000000},
        {11, RandomPayload(5, 11), 5},
    };
    RunBothWays(Link("1Gbps", "5ms", 9000, 0.01), down, up);
}

TEST(NetTransport, RealBytesSplitAcrossManySmallSegments)
{
    // 1500-byte MTU and 2% loss: the real bytes of one message span ~1400 segments.
    std::vector<Sent> down = {{1, RandomPayload(2000000, 7), 2000000},
                              {2, RandomPayload(1000, 8), 3000000}};
    RunBothWays(Link("100Mbps", "2ms", 1500, 0.02), down, {});
}

TEST(NetTransport, ManyMessagesBackToBackOnOneConnection)
{
    std::vector<Sent> down;
    for (uint32_t i = 0; i < 200; ++i)
    {
        const size_t real = (i * 7919) % 5000;
        const uint64_t wire = real + (i % 3 == 0 ? 0 : (i * 104729) % 200000);
        down.push_back({i, RandomPayload(real, 100 + i), wire});
    }
    down.push_back({999, RandomPayload(500000, 999), 8000000}); // a big one at the end
    std::vector<Sent> up;
    for (uint32_t i = 0; i < 50; ++i)
    {
        up.push_back({i, RandomPayload(100 + i, 500 + i), 100 + i});
    }
    RunBothWays(Link("100Mbps", "10ms", 9000, 0.001), down, up);
}

TEST(NetTransport, LearnerToEightWorkersAndBack)
{
    TopologySpec spec;
    for (int w = 0; w < 8; ++w)
    {
        // Heterogeneous links, one with a 1500-byte MTU (its own listening port).
        spec.worker_links.push_back(Link(w % 2 ? "50Mbps" : "200Mbps",
                                         std::to_string(5 + 5 * w) + "ms", w == 3 ? 1500 : 9000,
                                         w == 5 ? 0.01 : 0.0));
    }
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok()) << topo.status().ToString();
    TransportEndpoints ends = TransportHelper().Install(*topo);
    Inbox learner;
    learner.Attach(ends.GetLearner());
    std::vector<Inbox> workers(8);
    auto update = RandomPayload(200000, 77); // one buffer, shared by all eight sends
    const uint64_t wire = 4000000;
    for (uint32_t w = 0; w < 8; ++w)
    {
        workers[w].Attach(ends.GetWorker(w));
        ASSERT_TRUE(ends.GetLearner()->Send(WorkerPeerId(w), 1, update, wire).ok());
        ASSERT_TRUE(
            ends.GetWorker(w)->Send(kLearnerPeerId, 2, RandomPayload(10000 + w, w), 50000).ok());
    }
    RunAndDestroy();
    for (uint32_t w = 0; w < 8; ++w)
    {
        ExpectDelivered({{1, update, wire}}, workers[w].byPeer[kLearnerPeerId], "broadcast");
        ExpectDelivered({{2, RandomPayload(10000 + w, w), 50000}}, learner.byPeer[WorkerPeerId(w)],
                        "upload");
    }
}

TEST(NetTransport, LargeTransferLatencyNearThePhysicalBound)
{
    // 10 MB on the wire over a clean 100 Mbps / 20 ms link, sent once the connection is up.
    const LinkSpec link = Link("100Mbps", "20ms", 9000);
    TopologySpec spec;
    spec.worker_links = {link};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok());
    TransportEndpoints ends = TransportHelper().Install(*topo);
    const uint64_t wire = 10000000;
    auto payload = RandomPayload(100000, 3);
    ends.GetLearner()->SetPeerConnectedCallback(ns3::Callback<void, uint32_t>(
        [&](uint32_t peer) { ASSERT_TRUE(ends.GetLearner()->Send(peer, 1, payload, wire).ok()); }));
    Inbox worker;
    worker.Attach(ends.GetWorker(0));
    RunAndDestroy();
    ASSERT_EQ(worker.byPeer[kLearnerPeerId].size(), 1u);
    const Message& m = worker.byPeer[kLearnerPeerId][0];
    EXPECT_EQ(m.payload, *payload);
    const double latency = (m.received_at - m.sent_at).GetSeconds();
    const double bound = wire * 8.0 / link.rate.GetBitRate() + link.delay.GetSeconds();
    EXPECT_GT(latency, bound) << "cannot beat serialization + propagation";
    EXPECT_LT(latency, 3.0 * bound) << "slow start and headers cost far less than 2x here";
    RecordProperty("latency_s", std::to_string(latency));
    RecordProperty("bound_s", std::to_string(bound));
}

TEST(NetTransport, CongestionControlVariantsAllDeliver)
{
    for (ns3::TypeId variant :
         {ns3::TcpNewReno::GetTypeId(), ns3::TcpCubic::GetTypeId(), ns3::TcpBbr::GetTypeId()})
    {
        SCOPED_TRACE(variant.GetName());
        TopologySpec spec;
        spec.worker_links = {Link("50Mbps", "10ms", 9000, 0.005)};
        auto topo = TopologyBuilder::Build(spec);
        ASSERT_TRUE(topo.ok());
        TransportConfig config;
        config.tcp_variant = variant;
        TransportEndpoints ends = TransportHelper(config).Install(*topo);
        Inbox worker;
        worker.Attach(ends.GetWorker(0));
        auto payload = RandomPayload(300000, 9);
        ASSERT_TRUE(ends.GetLearner()->Send(WorkerPeerId(0), 1, payload, 3000000).ok());
        RunAndDestroy();
        ExpectDelivered({{1, payload, 3000000}}, worker.byPeer[kLearnerPeerId], "variant");
    }
}

TEST(NetTransport, BadMessagesAreRejectedNotAborted)
{
    TopologySpec spec;
    spec.worker_links = {Link("10Mbps", "1ms")};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok());
    TransportEndpoints ends = TransportHelper().Install(*topo);
    auto payload = RandomPayload(100, 1);
    EXPECT_EQ(ends.GetLearner()->Send(0, 1, payload, 99).code(),
              hilo::StatusCode::kInvalidArgument);
    EXPECT_EQ(ends.GetLearner()->Send(0, FrameHeader::kHelloType, payload, 100).code(),
              hilo::StatusCode::kInvalidArgument);
    EXPECT_EQ(ends.GetWorker(0)->Send(kLearnerPeerId, 1, nullptr, 100).code(),
              hilo::StatusCode::kInvalidArgument);
    RunAndDestroy();
}

TEST(NetTransport, SocketOptionsFollowTheBdpWithinFloorQueueAndCeiling)
{
    BufferSizing sizing;
    // 1 Gbps / 40 ms, 1500-byte MTU: 1.25 x BDP would leave 2.5 MB standing in a 1.5 MB queue;
    // the window stops at BDP + half the queue. No cap in segments.
    const LinkSpec wan = Link("1Gbps", "40ms", 1500);
    auto path = PathInfo::Over({&wan});
    SocketOptions o = SocketOptions::ForPath(path, ns3::TcpCubic::GetTypeId(), sizing);
    EXPECT_EQ(path.GetBdpBytes(), 10000000u);
    EXPECT_EQ(path.GetBottleneckQueueBytes(), 1000u * 1500u);
    EXPECT_EQ(o.segment_bytes, 1448u);
    EXPECT_EQ(o.send_buffer_bytes, 7425u * 1448u) << "BDP + 750000 B, in whole segments";
    EXPECT_FALSE(o.window_limited);

    const LinkSpec jumboLink = Link("100Mbps", "40ms", 9000);
    auto jumbo = PathInfo::Over({&jumboLink});
    o = SocketOptions::ForPath(jumbo, ns3::TcpCubic::GetTypeId(), sizing);
    EXPECT_EQ(o.segment_bytes, 8948u);
    EXPECT_EQ(o.send_buffer_bytes, 140u * 8948u) << "1.25 x BDP, rounded up to whole segments";
    EXPECT_FALSE(o.window_limited);

    const LinkSpec lanLink = Link("10Gbps", "0ms", 9000);
    auto lan = PathInfo::Over({&lanLink});
    o = SocketOptions::ForPath(lan, ns3::TcpCubic::GetTypeId(), sizing);
    EXPECT_EQ(o.send_buffer_bytes, 8u * 8948u) << "the floor, in whole segments";
    EXPECT_EQ(o.receive_buffer_bytes, 2 * o.send_buffer_bytes + 4 * 8948) << "never binds";

    // 10 Gbps / 150 ms with a deep queue: the 256 MiB ceiling binds and the window is below BDP.
    LinkSpec far = Link("10Gbps", "150ms", 9000);
    far.queue_packets = 1000000;
    o = SocketOptions::ForPath(PathInfo::Over({&far}), ns3::TcpCubic::GetTypeId(), sizing);
    EXPECT_EQ(o.send_buffer_bytes, 30000u * 8948u) << "256 MiB rounded up to whole segments";
    EXPECT_TRUE(o.window_limited);
    EXPECT_LT(o.receive_buffer_bytes, 1u << 30) << "inside ns-3's largest scaled window";

    // A fixed size applies as given (whole segments) and is flagged below the BDP.
    sizing.fixed_bytes = 6u << 20;
    o = SocketOptions::ForPath(path, ns3::TcpCubic::GetTypeId(), sizing);
    EXPECT_EQ(o.send_buffer_bytes, 4345u * 1448u);
    EXPECT_TRUE(o.window_limited) << "6 MiB < 10 MB BDP";
    o = SocketOptions::ForPath(jumbo, ns3::TcpCubic::GetTypeId(), sizing);
    EXPECT_FALSE(o.window_limited) << "6 MiB > 1 MB BDP";
}

} // namespace
} // namespace hilosim
