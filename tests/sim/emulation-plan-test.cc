// The parts of emulated links that need no root: how a topology maps onto namespaces, taps and
// kernel routes (NetworkPlan), the link traffic a scenario can put on the emulator, the names of
// the machine-wide resources, the congestion-control mapping, and the TapInlet that lets a tap's
// packets through the link's queue discipline -- on a plain ns-3 simulation.
#include "sim/drivers/emulation/host-requirements.h"
#include "sim/drivers/emulation/network-plan.h"
#include "sim/drivers/emulation/resource-names.h"
#include "sim/drivers/emulation/tap-inlet.h"
#include "sim/net/link-helper.h"
#include "sim/net/topology-builder.h"

#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/tcp-cubic.h"
#include "ns3/traffic-control-layer.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

LinkSpec
Link(const std::string& rate, const std::string& delay = "10ms")
{
    LinkSpec l;
    l.rate = ns3::DataRate(rate);
    l.delay = ns3::Time(delay);
    return l;
}

// Builds `spec`, plans it under tag "t1" and tears the simulation down again.
NetworkPlan
Plan(const TopologySpec& spec)
{
    auto topology = TopologyBuilder::Build(spec);
    EXPECT_TRUE(topology.ok()) << topology.status().message();
    NetworkPlan plan = PlanNetwork(*topology, spec, "t1");
    ns3::Simulator::Destroy();
    return plan;
}

uint32_t
Ip(const std::string& dotted)
{
    return ns3::Ipv4Address(dotted.c_str()).Get();
}

bool
InPrefix(const std::string& address, const std::string& network, uint32_t prefix)
{
    const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
    return (Ip(address) & mask) == (Ip(network) & mask);
}

// The next hop `host` uses towards `address`: the address itself when it is on one of the
// host's links, the gateway of the most specific route otherwise, "" when unreachable.
std::string
NextHop(const PlannedHost& host, const std::string& address)
{
    for (const PlannedTap& tap : host.taps)
    {
        if (InPrefix(address, tap.address, tap.prefix_length))
            return address;
    }
    std::string hop;
    uint32_t best = 0;
    for (const PlannedRoute& route : host.routes)
    {
        const size_t slash = route.destination.find('/');
        const uint32_t prefix = std::stoul(route.destination.substr(slash + 1));
        if (InPrefix(address, route.destination.substr(0, slash), prefix) &&
            (hop.empty() || prefix > best))
        {
            hop = route.gateway;
            best = prefix;
        }
    }
    return hop;
}

const PlannedTap*
TapTowards(const PlannedHost& host, const std::string& neighbour)
{
    for (const PlannedTap& tap : host.taps)
    {
        if (tap.peer == neighbour)
            return &tap;
    }
    return nullptr;
}

TEST(NetworkPlan, StarWithoutUplinkGivesTheLearnerATapOnEveryWorkerLinkAndNoRoutes)
{
    TopologySpec spec;
    spec.worker_links = {Link("10Mbps"), Link("20Mbps")};
    spec.worker_links[1].mtu = 9000;
    const NetworkPlan plan = Plan(spec);
    ASSERT_EQ(plan.hosts.size(), 3u);
    EXPECT_EQ(plan.core_netns, "hilo-t1-core");
    const PlannedHost& learner = plan.Host(NodeRole::kLearner, 0);
    EXPECT_EQ(learner.netns, "hilo-t1-learner");
    ASSERT_EQ(learner.taps.size(), 2u);
    EXPECT_TRUE(learner.routes.empty());
    EXPECT_FALSE(learner.forwards);
    for (uint32_t w = 0; w < 2; ++w)
    {
        const PlannedHost& worker = plan.Host(NodeRole::kWorker, w);
        EXPECT_EQ(worker.netns, "hilo-t1-worker-" + std::to_string(w));
        ASSERT_EQ(worker.taps.size(), 1u);
        EXPECT_EQ(worker.taps[0].prefix_length, 30u);
        // The other worker's link lies behind the learner (ns-3's routes; never used).
        ASSERT_EQ(worker.routes.size(), 1u);
        EXPECT_EQ(worker.routes[0].gateway, worker.taps[0].peer);
        // Each worker dials the learner's end of its own link.
        EXPECT_EQ(plan.learner_address_for_worker[w], worker.taps[0].peer);
        EXPECT_EQ(learner.taps[w].address, worker.taps[0].peer);
        EXPECT_EQ(learner.taps[w].mtu, w == 0 ? 1500u : 9000u);
        EXPECT_EQ(worker.taps[0].mtu, learner.taps[w].mtu);
    }
    std::set<std::string> names;
    for (const PlannedHost& h : plan.hosts)
    {
        for (const PlannedTap& t : h.taps)
        {
            EXPECT_EQ(TagOf(t.name), std::optional<std::string>("t1")) << t.name;
            names.insert(t.name);
        }
    }
    EXPECT_EQ(names.size(), plan.TapCount());
}

TEST(NetworkPlan, StarWithUplinkRoutesThroughTheHubLikeTheSimulatedNodes)
{
    TopologySpec spec;
    spec.learner_uplink = Link("100Mbps", "1ms");
    spec.worker_links = {Link("10Mbps"), Link("10Mbps"), Link("10Mbps")};
    const NetworkPlan plan = Plan(spec);
    const PlannedHost& learner = plan.Host(NodeRole::kLearner, 0);
    ASSERT_EQ(learner.taps.size(), 1u);
    const std::string hub = learner.taps[0].peer;
    for (uint32_t w = 0; w < 3; ++w)
    {
        const PlannedHost& worker = plan.Host(NodeRole::kWorker, w);
        EXPECT_EQ(NextHop(learner, worker.taps[0].address), hub) << "worker " << w;
        EXPECT_EQ(plan.learner_address_for_worker[w], learner.taps[0].address);
        EXPECT_EQ(NextHop(worker, learner.taps[0].address), worker.taps[0].peer);
        for (const PlannedRoute& r : worker.routes)
            EXPECT_EQ(r.tap, worker.taps[0].name);
    }
}

TEST(NetworkPlan, RegionsKeepTheirGatewaysInsideNs3AndTheLearnerRoutesThroughThem)
{
    TopologySpec spec;
    spec.kind = TopologyKind::kRegions;
    spec.regions = {{"eu", Link("20Mbps"), {Link("50Mbps", "1ms"), Link("50Mbps", "1ms")}},
                    {"us", Link("20Mbps", "30ms"), {Link("50Mbps", "1ms")}}};
    const NetworkPlan plan = Plan(spec);
    ASSERT_EQ(plan.hosts.size(), 4u); // no host for the gateways
    const PlannedHost& learner = plan.Host(NodeRole::kLearner, 0);
    ASSERT_EQ(learner.taps.size(), 2u);
    for (uint32_t w = 0; w < 3; ++w)
    {
        const uint32_t region = w < 2 ? 0 : 1;
        const PlannedHost& worker = plan.Host(NodeRole::kWorker, w);
        EXPECT_EQ(NextHop(learner, worker.taps[0].address), learner.taps[region].peer);
        EXPECT_EQ(NextHop(worker, plan.learner_address_for_worker[w]), worker.taps[0].peer);
        EXPECT_EQ(plan.learner_address_for_worker[w], learner.taps[region].address);
    }
}

TEST(NetworkPlan, ARelayForwardsForItsWorkersAndTheyDialItOnTheirOwnLink)
{
    TopologySpec spec;
    spec.kind = TopologyKind::kRelay;
    spec.regions = {{"eu", Link("20Mbps"), {Link("50Mbps", "1ms"), Link("50Mbps", "1ms")}}};
    const NetworkPlan plan = Plan(spec);
    ASSERT_EQ(plan.hosts.size(), 4u);
    const PlannedHost& learner = plan.Host(NodeRole::kLearner, 0);
    const PlannedHost& relay = plan.Host(NodeRole::kRelay, 0);
    EXPECT_EQ(relay.netns, "hilo-t1-relay-0");
    EXPECT_TRUE(relay.forwards);
    ASSERT_EQ(relay.taps.size(), 3u); // WAN + two LAN links
    EXPECT_EQ(plan.learner_address_for_relay[0], learner.taps[0].address);
    for (uint32_t w = 0; w < 2; ++w)
    {
        const PlannedHost& worker = plan.Host(NodeRole::kWorker, w);
        EXPECT_FALSE(worker.forwards);
        EXPECT_EQ(plan.relay_address_for_worker[w], worker.taps[0].peer);
        ASSERT_NE(TapTowards(relay, worker.taps[0].address), nullptr);
        // Trajectories to the learner cross the relay's kernel; updates come back the same way.
        EXPECT_EQ(NextHop(worker, plan.learner_address_for_worker[w]), worker.taps[0].peer);
        EXPECT_EQ(NextHop(learner, worker.taps[0].address), learner.taps[0].peer);
        EXPECT_EQ(NextHop(relay, worker.taps[0].address), worker.taps[0].address);
    }
}

TEST(NetworkPlan, PeakLinkTrafficFollowsWhatSharedLinksLetThrough)
{
    TopologySpec star;
    star.worker_links = {Link("10Mbps"), Link("20Mbps")};
    EXPECT_DOUBLE_EQ(PeakLinkTrafficBps(star), 30e6);
    star.learner_uplink = Link("15Mbps");
    EXPECT_DOUBLE_EQ(PeakLinkTrafficBps(star), 30e6); // 15 on the uplink, 15 behind it
    star.learner_uplink = Link("1Gbps");
    EXPECT_DOUBLE_EQ(PeakLinkTrafficBps(star), 60e6);

    TopologySpec regions;
    regions.kind = TopologyKind::kRegions;
    regions.regions = {{"eu", Link("20Mbps"), {Link("50Mbps"), Link("50Mbps")}},
                       {"us", Link("100Mbps"), {Link("30Mbps")}}};
    EXPECT_DOUBLE_EQ(PeakLinkTrafficBps(regions), 2 * 20e6 + 2 * 30e6);
    TopologySpec relay = regions;
    relay.kind = TopologyKind::kRelay; // relays send their own copies at LAN rates
    EXPECT_DOUBLE_EQ(PeakLinkTrafficBps(relay), 20e6 + 100e6 + 100e6 + 30e6);
}

TEST(ResourceNames, EveryNameCarriesThePrefixAndTheRunsTagAndFitsTheKernelsLimits)
{
    const std::string tag = RunTag(4194304); // the largest pid Linux hands out
    EXPECT_LE(tag.size(), 5u);
    EXPECT_EQ(RunTag(35), "z");
    EXPECT_EQ(RunTag(36), "10");
    EXPECT_LE(TapName(tag, 9999).size(), 15u); // IFNAMSIZ - 1
    for (const std::string& name :
         {TapName(tag, 3), CoreNamespace(tag), HostNamespace(tag, NodeRole::kLearner, 0),
          HostNamespace(tag, NodeRole::kWorker, 12), HostNamespace(tag, NodeRole::kRelay, 1)})
    {
        EXPECT_EQ(name.rfind("hilo-", 0), 0u) << name;
        EXPECT_EQ(TagOf(name), std::optional<std::string>(tag)) << name;
    }
    EXPECT_EQ(TagOf("hilo-sim"), std::nullopt);
    EXPECT_EQ(TagOf("hilo-toolong1-core"), std::nullopt);
    EXPECT_EQ(TagOf("hilo-A1-core"), std::nullopt);
    EXPECT_EQ(TagOf("eth0"), std::nullopt);
    EXPECT_EQ(LockPath(tag), "/run/hilo-emu/hilo-" + tag + ".lock");
}

TEST(HostRequirements, CongestionControlsMapToLinuxNamesOrAreRefused)
{
    auto name = [](const std::string& type)
    {
        auto r = LinuxCongestionControl(ns3::TypeId::LookupByName(type));
        return r.ok() ? *r : "error: " + r.status().message();
    };
    EXPECT_EQ(name("ns3::TcpCubic"), "cubic");
    EXPECT_EQ(name("ns3::TcpNewReno"), "reno");
    EXPECT_EQ(name("ns3::TcpLinuxReno"), "reno");
    EXPECT_EQ(name("ns3::TcpBbr"), "bbr");
    EXPECT_EQ(name("ns3::TcpDctcp"), "dctcp");
    EXPECT_NE(name("ns3::TcpLedbat").find("no Linux counterpart"), std::string::npos);
    auto missing = CheckKernelCongestionControl("no-such-algorithm", "TcpNoSuch");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(missing.message().find("network.tcp \"TcpNoSuch\""), std::string::npos);
    EXPECT_NE(missing.message().find("no-such-algorithm"), std::string::npos);
}

// Two nodes on one 1 Mbps link with a 10-packet FIFO queue disc, as LinkHelper installs it; a
// TapInlet on node A's device stands where a tap's packets come in.
class TapInletTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        nodes.Create(2);
        ns3::InternetStackHelper stack;
        stack.SetIpv6StackInstall(false);
        stack.Install(nodes);
        LinkSpec spec = Link("1Mbps", "1ms");
        spec.queue_packets = 10;
        ns3::Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
        link = LinkHelper(1).Install("test", nodes.Get(0), nodes.Get(1), spec, addresses);
        inlet = ns3::CreateObject<TapInlet>();
        inlet->Setup(link.device_a, ns3::CreateObject<ns3::Node>());
        link.device_b->TraceConnectWithoutContext(
            "MacRx", ns3::MakeCallback(&TapInletTest::Delivered, this));
    }
    void TearDown() override
    {
        inlet = nullptr;
        ns3::Simulator::Destroy();
    }
    void Delivered(ns3::Ptr<const ns3::Packet>) { ++delivered; }

    ns3::Ptr<ns3::Packet> Ipv4Packet()
    {
        ns3::Ipv4Header h;
        h.SetSource(link.address_a);
        h.SetDestination(link.address_b);
        h.SetProtocol(17);
        h.SetPayloadSize(1000);
        h.SetTtl(64);
        auto p = ns3::Create<ns3::Packet>(1000);
        p->AddHeader(h);
        return p;
    }

    ns3::NodeContainer nodes;
    InstalledLink link;
    ns3::Ptr<TapInlet> inlet;
    int delivered{0};
};

TEST_F(TapInletTest, PacketsFromTheTapQueueInTheLinksQueueDiscAndOnlyIpv4GetsThrough)
{
    // A burst of 50: the queue disc holds 10, the device one more and the wire one.
    ns3::Simulator::Schedule(ns3::Seconds(0),
                             [this]()
                             {
                                 for (int i = 0; i < 50; ++i)
                                     inlet->Send(Ipv4Packet(), link.device_b->GetAddress(),
                                                 ns3::Ipv4L3Protocol::PROT_NUMBER);
                                 inlet->Send(ns3::Create<ns3::Packet>(60),
                                             link.device_b->GetAddress(), 0x0806); // ARP
                             });
    ns3::Simulator::Run();
    auto disc = nodes.Get(0)->GetObject<ns3::TrafficControlLayer>()->GetRootQueueDiscOnDevice(
        link.device_a);
    ASSERT_TRUE(disc);
    EXPECT_EQ(disc->GetStats().nTotalReceivedPackets, 50u);
    EXPECT_GT(disc->GetStats().nTotalDroppedPackets, 0u);
    EXPECT_EQ(static_cast<uint64_t>(delivered), 50u - disc->GetStats().nTotalDroppedPackets);
    EXPECT_LE(delivered, 12);
    EXPECT_EQ(inlet->GetDroppedNonIpv4(), 1u);
}

TEST_F(TapInletTest, PacketsFromTheLinkGoToTheBridgeAndNeverToTheGhostNodesOwnStack)
{
    int bridged = 0;
    inlet->SetReceiveCallback(ns3::NetDevice::ReceiveCallback(
        [](ns3::Ptr<ns3::NetDevice>, ns3::Ptr<const ns3::Packet>, uint16_t, const ns3::Address&)
        { return true; }));
    inlet->SetPromiscReceiveCallback(ns3::NetDevice::PromiscReceiveCallback(
        [&bridged, this](ns3::Ptr<ns3::NetDevice> device, ns3::Ptr<const ns3::Packet>,
                         uint16_t protocol, const ns3::Address&, const ns3::Address&,
                         ns3::NetDevice::PacketType)
        {
            EXPECT_EQ(device, ns3::Ptr<ns3::NetDevice>(inlet));
            EXPECT_EQ(protocol, ns3::Ipv4L3Protocol::PROT_NUMBER);
            ++bridged;
            return true;
        }));
    int stack_rx = 0;
    nodes.Get(0)->GetObject<ns3::Ipv4L3Protocol>()->TraceConnectWithoutContext(
        "Rx", ns3::Callback<void, ns3::Ptr<const ns3::Packet>, ns3::Ptr<ns3::Ipv4>, uint32_t>(
                  [&stack_rx](ns3::Ptr<const ns3::Packet>, ns3::Ptr<ns3::Ipv4>, uint32_t)
                  { ++stack_rx; }));
    ns3::Simulator::Schedule(ns3::Seconds(0),
                             [this]()
                             {
                                 for (int i = 0; i < 2; ++i) // the device queue holds one
                                     link.device_b->Send(Ipv4Packet(), link.device_a->GetAddress(),
                                                         ns3::Ipv4L3Protocol::PROT_NUMBER);
                             });
    ns3::Simulator::Run();
    EXPECT_EQ(bridged, 2);
    EXPECT_EQ(stack_rx, 0);
}

} // namespace
} // namespace hilosim
