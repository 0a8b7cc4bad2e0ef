// Topology builders (sim/net/topology-builder.h): structure (roles, addresses, paths, relays) and
// the behaviour that makes the kinds differ: a shared uplink is crossed once per receiver, a relay
// topology crosses each regional WAN once.
#include "net-test-util.h"

#include "sim/net/message-endpoint.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"

#include "ns3/ipv4.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

#include <set>

namespace hilosim
{
namespace
{

using testing::Link;
using testing::LinkByteCounter;
using testing::RandomPayload;
using testing::RunAndDestroy;

TEST(NetTopology, StarStructure)
{
    TopologySpec spec;
    spec.worker_links = {Link("100Mbps", "10ms"), Link("50Mbps", "30ms", 1500),
                         Link("1Gbps", "5ms")};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok()) << topo.status().ToString();
    EXPECT_EQ(topo->GetKind(), TopologyKind::kStar);
    EXPECT_EQ(topo->GetWorkerCount(), 3u);
    EXPECT_EQ(topo->GetAllNodes().GetN(), 4u) << "no uplink: no hub router";
    EXPECT_EQ(topo->GetLearnerUplink(), nullptr);
    EXPECT_FALSE(topo->HasRelays());
    EXPECT_FALSE(topo->GetRegionOf(0).has_value());
    std::set<uint32_t> addresses;
    for (uint32_t w = 0; w < 3; ++w)
    {
        addresses.insert(topo->GetWorkerAddress(w).Get());
        addresses.insert(topo->GetLearnerAddressFor(w).Get());
        // The learner's address for a worker is on the learner node.
        auto ipv4 = topo->GetLearner()->GetObject<ns3::Ipv4>();
        EXPECT_GE(ipv4->GetInterfaceForAddress(topo->GetLearnerAddressFor(w)), 0);
    }
    EXPECT_EQ(addresses.size(), 6u);
    const PathInfo& slow = topo->GetLearnerPathTo(1);
    EXPECT_EQ(slow.GetBottleneck().GetBitRate(), 50000000u);
    EXPECT_EQ(slow.GetOneWayDelay(), ns3::MilliSeconds(30));
    EXPECT_EQ(slow.GetMtu(), 1500u);
    EXPECT_EQ(slow.GetBdpBytes(), 375000u);
    ns3::Simulator::Destroy();

    spec.learner_uplink = Link("10Gbps", "1ms", 1500);
    topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok());
    EXPECT_EQ(topo->GetAllNodes().GetN(), 5u) << "uplink adds a hub router";
    ASSERT_NE(topo->GetLearnerUplink(), nullptr);
    EXPECT_EQ(topo->GetLearnerPathTo(0).GetHops(), 2u);
    EXPECT_EQ(topo->GetLearnerPathTo(0).GetMtu(), 1500u) << "path MTU is the smallest";
    EXPECT_EQ(topo->GetLearnerPathTo(0).GetOneWayDelay(), ns3::MilliSeconds(11));
    ns3::Simulator::Destroy();
}

TEST(NetTopology, RegionsAndRelayStructure)
{
    TopologySpec spec;
    spec.kind = TopologyKind::kRelay;
    spec.regions = {
        RegionSpec{"eu", Link("100Mbps", "20ms"), {Link("1Gbps", "1ms")}},
        RegionSpec{"us", Link("50Mbps", "40ms"), {Link("1Gbps", "1ms"), Link("1Gbps", "2ms")}}};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok()) << topo.status().ToString();
    EXPECT_EQ(topo->GetWorkerCount(), 3u);
    EXPECT_EQ(topo->GetRegionCount(), 2u);
    EXPECT_EQ(topo->GetRelayCount(), 2u);
    EXPECT_EQ(topo->GetRegionName(1), "us");
    EXPECT_EQ(topo->GetRegionWorkers(1), (std::vector<uint32_t>{1, 2}));
    EXPECT_EQ(*topo->GetRelayOf(0), 0u);
    EXPECT_EQ(*topo->GetRelayOf(2), 1u);
    EXPECT_EQ(topo->GetRelay(1), topo->GetRegionGateway(1));
    auto relayIp = topo->GetRelay(1)->GetObject<ns3::Ipv4>();
    EXPECT_GE(relayIp->GetInterfaceForAddress(topo->GetRelayAddressFor(2)), 0);
    EXPECT_EQ(topo->GetLearnerPathTo(2).GetOneWayDelay(), ns3::MilliSeconds(42));
    EXPECT_EQ(topo->GetLearnerPathTo(2).GetBottleneck().GetBitRate(), 50000000u);
    EXPECT_EQ(topo->GetRelayPathTo(2).GetOneWayDelay(), ns3::MilliSeconds(2));
    EXPECT_EQ(topo->GetLearnerPathToRelay(1).GetOneWayDelay(), ns3::MilliSeconds(40));
    ns3::Simulator::Destroy();

    spec.kind = TopologyKind::kRegions;
    topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok());
    EXPECT_FALSE(topo->HasRelays());
    EXPECT_FALSE(topo->GetRelayOf(0).has_value());
    EXPECT_EQ(*topo->GetRegionOf(2), 1u);
    ns3::Simulator::Destroy();
}

TEST(NetTopology, BadSpecIsAnErrorNotAnAbort)
{
    TopologySpec spec;
    spec.kind = TopologyKind::kRelay;
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_FALSE(topo.ok());
    EXPECT_NE(topo.status().message().find("at least one region"), std::string::npos);
    spec.regions = {RegionSpec{"eu", Link("1Gbps", "1ms"), {}}};
    spec.regions[0].wan.queue_disc = "wfq";
    topo = TopologyBuilder::Build(spec);
    ASSERT_FALSE(topo.ok());
    EXPECT_NE(topo.status().message().find("region eu wan link"), std::string::npos);
    ns3::Simulator::Destroy();
}

/// Broadcasts `wire` bytes from the learner to every worker once all are connected; returns the
/// time from the send to the last worker holding the message.
double
BroadcastTime(const TopologySpec& spec, uint64_t wire, uint64_t* uplinkBytes)
{
    auto topo = TopologyBuilder::Build(spec);
    EXPECT_TRUE(topo.ok());
    TransportEndpoints ends = TransportHelper().Install(*topo);
    std::unique_ptr<LinkByteCounter> uplink;
    if (topo->GetLearnerUplink())
    {
        uplink = std::make_unique<LinkByteCounter>(topo->GetLearnerUplink()->device_a);
    }
    auto payload = RandomPayload(10000, 1);
    const uint32_t n = topo->GetWorkerCount();
    uint32_t connected = 0;
    ns3::Time start;
    ends.GetLearner()->SetPeerConnectedCallback(ns3::Callback<void, uint32_t>(
        [&](uint32_t)
        {
            if (++connected < n)
            {
                return;
            }
            start = ns3::Simulator::Now();
            for (uint32_t w = 0; w < n; ++w)
            {
                EXPECT_TRUE(ends.GetLearner()->Send(WorkerPeerId(w), 1, payload, wire).ok());
            }
        }));
    ns3::Time last;
    uint32_t received = 0;
    for (uint32_t w = 0; w < n; ++w)
    {
        ends.GetWorker(w)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [&](uint32_t, const Message& m)
            {
                ++received;
                last = std::max(last, m.received_at);
            }));
    }
    RunAndDestroy();
    EXPECT_EQ(received, n);
    if (uplinkBytes)
    {
        *uplinkBytes = uplink ? uplink->GetBytes() : 0;
    }
    return (last - start).GetSeconds();
}

TEST(NetTopology, SharedUplinkIsCrossedOncePerReceiver)
{
    TopologySpec spec;
    for (int w = 0; w < 4; ++w)
    {
        spec.worker_links.push_back(Link("100Mbps", "10ms"));
    }
    const uint64_t wire = 2000000;
    const double direct = BroadcastTime(spec, wire, nullptr);
    spec.learner_uplink = Link("100Mbps", "1ms");
    uint64_t uplinkBytes = 0;
    const double shared = BroadcastTime(spec, wire, &uplinkBytes);
    EXPECT_GT(shared, 2.0 * direct)
        << "direct " << direct << " s, shared uplink " << shared << " s";
    EXPECT_GE(uplinkBytes, 4 * wire) << "four copies cross the uplink";
    EXPECT_LT(uplinkBytes, 4 * wire * 11 / 10);
}

/// Relay (or plain regions) topology: the learner sends the update once per relay, which forwards
/// it to its workers; or once per worker without relays. Returns bytes on each regional WAN.
std::vector<uint64_t>
RegionalWanBytes(TopologyKind kind, uint64_t wire)
{
    TopologySpec spec;
    spec.kind = kind;
    for (const char* name : {"eu", "us"})
    {
        spec.regions.push_back(
            RegionSpec{name,
                       Link("50Mbps", "20ms"),
                       {Link("1Gbps", "1ms"), Link("1Gbps", "1ms"), Link("1Gbps", "1ms")}});
    }
    auto topo = TopologyBuilder::Build(spec);
    EXPECT_TRUE(topo.ok());
    TransportEndpoints ends = TransportHelper().Install(*topo);
    std::vector<std::unique_ptr<LinkByteCounter>> wans;
    for (uint32_t r = 0; r < topo->GetRegionCount(); ++r)
    {
        wans.push_back(std::make_unique<LinkByteCounter>(topo->GetRegionWan(r).device_a));
    }
    auto payload = RandomPayload(50000, 5);
    if (kind == TopologyKind::kRelay)
    {
        for (uint32_t r = 0; r < ends.GetRelayCount(); ++r)
        {
            EXPECT_TRUE(ends.GetLearner()->Send(RelayPeerId(r), 1, payload, wire).ok());
            // The relay "application": forward what the learner sends to the region's workers.
            auto relay = ends.GetRelay(r);
            std::vector<uint32_t> workers = topo->GetRegionWorkers(r);
            relay->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
                [relay, workers](uint32_t from, const Message& m)
                {
                    auto copy = std::make_shared<const std::string>(m.payload);
                    for (uint32_t w : workers)
                    {
                        EXPECT_TRUE(relay->Send(WorkerPeerId(w), m.type, copy, m.wire_bytes).ok());
                    }
                }));
        }
    }
    else
    {
        for (uint32_t w = 0; w < topo->GetWorkerCount(); ++w)
        {
            EXPECT_TRUE(ends.GetLearner()->Send(WorkerPeerId(w), 1, payload, wire).ok());
        }
    }
    uint32_t received = 0;
    for (uint32_t w = 0; w < topo->GetWorkerCount(); ++w)
    {
        ends.GetWorker(w)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [&](uint32_t, const Message& m)
            {
                ++received;
                EXPECT_EQ(m.payload, *payload);
                EXPECT_EQ(m.wire_bytes, wire);
            }));
    }
    RunAndDestroy();
    EXPECT_EQ(received, 6u) << TopologyKindName(kind);
    std::vector<uint64_t> bytes;
    for (auto& c : wans)
    {
        bytes.push_back(c->GetBytes());
    }
    return bytes;
}

TEST(NetTopology, RelaySendsOneCopyPerRegionOverTheWan)
{
    const uint64_t wire = 1000000;
    for (uint64_t b : RegionalWanBytes(TopologyKind::kRelay, wire))
    {
        EXPECT_GE(b, wire);
        EXPECT_LT(b, wire * 11 / 10) << "one copy plus headers and handshakes";
    }
    for (uint64_t b : RegionalWanBytes(TopologyKind::kRegions, wire))
    {
        EXPECT_GE(b, 3 * wire) << "without relays each worker's copy crosses the WAN";
        EXPECT_LT(b, 3 * wire * 11 / 10);
    }
}

TEST(NetTopology, EveryQueueDiscCarriesTraffic)
{
    for (const std::string& disc : SupportedQueueDiscs())
    {
        SCOPED_TRACE(disc);
        TopologySpec spec;
        LinkSpec link = Link("20Mbps", "10ms", 1500, 0.0, disc);
        link.queue_packets = 100;
        spec.worker_links = {link};
        spec.learner_uplink = link;
        auto topo = TopologyBuilder::Build(spec);
        ASSERT_TRUE(topo.ok()) << topo.status().ToString();
        TransportEndpoints ends = TransportHelper().Install(*topo);
        auto payload = RandomPayload(20000, 2);
        uint32_t received = 0;
        ends.GetWorker(0)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
            [&](uint32_t, const Message& m)
            { received += m.payload == *payload && m.wire_bytes == 1000000; }));
        ASSERT_TRUE(ends.GetLearner()->Send(WorkerPeerId(0), 1, payload, 1000000).ok());
        RunAndDestroy();
        EXPECT_EQ(received, 1u);
    }
}

// Also a regression test: with 5% loss and buffers that were not whole segments, Debian's
// ns-3 3.37 crashed in TcpRateLinux::SkbSent (SocketOptions::ForPath now rounds to segments).
TEST(NetTopology, LossModelDropsAboutTheConfiguredFraction)
{
    TopologySpec spec;
    spec.worker_links = {Link("100Mbps", "5ms", 9000, 0.05)};
    auto topo = TopologyBuilder::Build(spec);
    ASSERT_TRUE(topo.ok());
    uint64_t dropped = 0;
    uint64_t sent = 0;
    topo->GetWorkerLink(0).device_b->TraceConnectWithoutContext(
        "PhyRxDrop", ns3::Callback<void, ns3::Ptr<const ns3::Packet>>(
                         [&](ns3::Ptr<const ns3::Packet>) { ++dropped; }));
    topo->GetWorkerLink(0).device_a->TraceConnectWithoutContext(
        "PhyTxEnd", ns3::Callback<void, ns3::Ptr<const ns3::Packet>>(
                        [&](ns3::Ptr<const ns3::Packet>) { ++sent; }));
    TransportEndpoints ends = TransportHelper().Install(*topo);
    uint32_t received = 0;
    ends.GetWorker(0)->SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&>(
        [&](uint32_t, const Message&) { ++received; }));
    ASSERT_TRUE(ends.GetLearner()->Send(WorkerPeerId(0), 1, RandomPayload(1000, 1), 20000000).ok());
    RunAndDestroy();
    EXPECT_EQ(received, 1u);
    ASSERT_GT(sent, 1000u);
    const double rate = static_cast<double>(dropped) / sent;
    EXPECT_GT(rate, 0.03);
    EXPECT_LT(rate, 0.07);
}

} // namespace
} // namespace hilosim
