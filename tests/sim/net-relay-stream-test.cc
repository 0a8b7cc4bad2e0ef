// Forwarding while a message arrives (MessageEndpoint::Forward, sim/net/message-stream.h): a relay
// that streams hands each worker the same whole framed message a store-and-forward relay would,
// but the copy's last byte leaves one LAN delay after the original's last byte arrived, not one
// LAN transfer later; a message that never completes never reaches the workers half-done.
#include "net-test-util.h"

#include "sim/net/message-endpoint.h"
#include "sim/net/message-stream.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"

#include "ns3/simulator.h"

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

constexpr uint32_t kWorkers = 2;

struct RelayRun
{
    Message at_relay;                 // the whole message, as the relay received it
    std::vector<Message> at_workers;  // what each worker received (one message expected)
    std::vector<uint32_t> received;   // messages received per worker
    std::vector<MessageMeta> started; // the relay's MessageStarted trace
    uint32_t closed{0};               // worker-side connection ends
};

// One region: learner -(wan)- relay -(lan)- two workers. The learner sends one message of
// `wire` bytes (`real` of them real) to the relay once connected; the relay forwards it to both
// workers, streaming or after it has arrived.
RelayRun
RunRelay(bool stream, const LinkSpec& wan, const LinkSpec& lan, size_t real, uint64_t wire,
         double abort_at_s = 0)
{
    TopologySpec spec;
    spec.kind = TopologyKind::kRelay;
    RegionSpec region;
    region.name = "r";
    region.wan = wan;
    region.worker_links = std::vector<LinkSpec>(kWorkers, lan);
    spec.regions = {region};
    auto topo = TopologyBuilder::Build(spec);
    EXPECT_TRUE(topo.ok()) << topo.status().ToString();
    TransportConfig config;
    config.workers_connect_to_learner = false;
    TransportEndpoints ends = TransportHelper(config).Install(*topo);
    ns3::Ptr<MessageTransport> learner = ends.GetLearner();
    ns3::Ptr<MessageEndpoint> relay = ns3::DynamicCast<MessageEndpoint>(ends.GetRelay(0));
    const std::vector<uint32_t> workers = {WorkerPeerId(0), WorkerPeerId(1)};
    auto payload = RandomPayload(real, 42);

    RelayRun run;
    run.received.assign(kWorkers, 0);
    run.at_workers.resize(kWorkers);
    learner->SetPeerConnectedCallback(ns3::Callback<void, uint32_t>(
        [&](uint32_t peer)
        {
            if (peer == RelayPeerId(0))
                EXPECT_TRUE(learner->Send(peer, 7, payload, wire).ok());
        }));
    relay->TraceConnectWithoutContext(
        "MessageStarted", ns3::Callback<void, uint32_t, const MessageMeta&>(
                              [&](uint32_t, const MessageMeta& m) { run.started.push_back(m); }));
    if (stream)
    {
        relay->SetMessageStartedCallback(ns3::Callback<void, uint32_t, const MessageMeta&>(
            [&](uint32_t peer, const MessageMeta& m)
            { EXPECT_TRUE(relay->Forward(peer, m.sequence, workers).ok()); }));
    }
    relay->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
        [&](uint32_t, const Message& m)
        {
            run.at_relay = m;
            if (!stream)
            {
                auto copy = std::make_shared<const std::string>(m.payload);
                for (uint32_t w : workers)
                    EXPECT_TRUE(relay->Send(w, m.type, copy, m.wire_bytes).ok());
            }
        }));
    for (uint32_t w = 0; w < kWorkers; ++w)
    {
        ends.GetWorker(w)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [&run, w](uint32_t, const Message& m)
            {
                run.at_workers[w] = m;
                ++run.received[w];
            }));
        ends.GetWorker(w)->SetPeerClosedCallback(
            ns3::Callback<void, uint32_t, bool>([&run](uint32_t, bool) { ++run.closed; }));
    }
    if (abort_at_s > 0)
    {
        // The relay loses its learner connection in the middle of the message.
        ns3::Simulator::Schedule(ns3::Seconds(abort_at_s),
                                 [relay]() { relay->GetConnection(kLearnerPeerId)->Dispose(); });
    }
    RunAndDestroy(ns3::Seconds(60));
    for (uint32_t w = 0; w < kWorkers && abort_at_s == 0; ++w)
    {
        EXPECT_EQ(run.received[w], 1u) << "worker " << w;
        const Message& m = run.at_workers[w];
        EXPECT_EQ(m.type, 7u);
        EXPECT_EQ(m.wire_bytes, wire);
        EXPECT_EQ(m.sequence, 0u);
        EXPECT_TRUE(m.payload == *payload) << "worker " << w << ": real bytes differ";
    }
    return run;
}

TEST(NetRelayStream, StreamingAddsTheLanDelayNotALanTransfer)
{
    // WAN 100 Mbps / 20 ms, LAN 200 Mbps / 1 ms; 4 MB on the wire (400 kB real): the WAN transfer
    // takes ~0.32 s, a LAN transfer ~0.16 s.
    const LinkSpec wan = Link("100Mbps", "20ms");
    const LinkSpec lan = Link("200Mbps", "1ms");
    const uint64_t wire = 4000000;
    const double lan_transfer_s = wire * 8.0 / lan.rate.GetBitRate();
    RelayRun streamed = RunRelay(/*stream=*/true, wan, lan, 400000, wire);
    RelayRun stored = RunRelay(/*stream=*/false, wan, lan, 400000, wire);
    ASSERT_EQ(streamed.started.size(), 1u);
    EXPECT_EQ(streamed.started[0].wire_bytes, wire);
    EXPECT_EQ(streamed.started[0].payload_bytes, 400000u);
    // The relay itself still gets the whole message, at the same time either way.
    EXPECT_EQ(streamed.at_relay.received_at, stored.at_relay.received_at);
    for (uint32_t w = 0; w < kWorkers; ++w)
    {
        const double streamed_after =
            (streamed.at_workers[w].received_at - streamed.at_relay.received_at).GetSeconds();
        const double stored_after =
            (stored.at_workers[w].received_at - stored.at_relay.received_at).GetSeconds();
        // Streaming: the LAN delay plus the last chunk (16 KiB, 0.66 ms at 200 Mbps) and a few
        // segments' serialization; never a transfer.
        EXPECT_GT(streamed_after, lan.delay.GetSeconds()) << "worker " << w;
        EXPECT_LT(streamed_after, lan.delay.GetSeconds() + 0.004) << "worker " << w;
        // Store and forward: a whole LAN transfer after the last byte arrived.
        EXPECT_GT(stored_after, lan_transfer_s) << "worker " << w;
        RecordProperty("streamed_after_s_" + std::to_string(w), std::to_string(streamed_after));
        RecordProperty("stored_after_s_" + std::to_string(w), std::to_string(stored_after));
    }
}

TEST(NetRelayStream, SmallAndRealOnlyMessagesStreamIntact)
{
    // No padding at all (every byte real and spread over many segments), and a message smaller
    // than one chunk: both arrive whole and byte-equal (RunRelay checks).
    RunRelay(/*stream=*/true, Link("50Mbps", "5ms", 1500), Link("1Gbps", "1ms", 1500), 300000,
             300000);
    RunRelay(/*stream=*/true, Link("50Mbps", "5ms"), Link("1Gbps", "1ms"), 10, 5000);
}

TEST(NetRelayStream, AMessageThatNeverCompletesNeverReachesAWorkerHalfDone)
{
    // The learner -> relay connection ends 0.1 s into a 0.8 s transfer: the workers' copies had
    // started, so their connections end instead of delivering part of a message.
    RelayRun run = RunRelay(/*stream=*/true, Link("100Mbps", "20ms"), Link("1Gbps", "1ms"), 100000,
                            10000000, /*abort_at_s=*/0.1);
    for (uint32_t w = 0; w < kWorkers; ++w)
    {
        EXPECT_EQ(run.received[w], 0u) << "worker " << w;
    }
    EXPECT_EQ(run.closed, kWorkers);
}

TEST(NetRelayStream, MessageStreamReleasesBytesInChunksAndOnCompletion)
{
    FrameHeader h;
    h.type = 3;
    h.payload_bytes = 4;
    h.wire_bytes = 100;
    MessageStream s(h, /*sentAtSteps=*/5, /*chunkBytes=*/30);
    int wakes = 0;
    s.AddWaiter([&]() { ++wakes; });
    EXPECT_EQ(s.GetAvailableBytes(), FrameHeader::kBytes); // the header leaves at once
    EXPECT_EQ(s.GetFrameBytes(), FrameHeader::kBytes + 100);
    s.Append("ab", 0);
    EXPECT_EQ(wakes, 0);
    s.Append("cd", 20);
    EXPECT_EQ(wakes, 0); // 24 bytes: below a chunk
    s.Append("", 10);
    EXPECT_EQ(wakes, 1); // 34 bytes
    EXPECT_EQ(s.GetPayload(), "abcd");
    EXPECT_EQ(s.GetAvailableBytes(), FrameHeader::kBytes + 34);
    s.Append("", 66);
    EXPECT_TRUE(s.IsComplete());
    EXPECT_EQ(wakes, 2); // completion always wakes
    // The forwarded header is the original's but for the forwarding time.
    auto parsed = FrameHeader::Parse(s.GetHeaderBytes(), 1000);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->type, 3u);
    EXPECT_EQ(parsed->payload_bytes, 4u);
    EXPECT_EQ(parsed->wire_bytes, 100u);
    EXPECT_EQ(parsed->sent_at_steps, 5);

    MessageStream cut(h, 0, 30);
    int cut_wakes = 0;
    cut.AddWaiter([&]() { ++cut_wakes; });
    cut.Append("ab", 0);
    cut.Abort();
    EXPECT_TRUE(cut.IsAborted());
    EXPECT_EQ(cut_wakes, 1);
}

} // namespace
} // namespace hilosim
