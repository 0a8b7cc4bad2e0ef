#include "sim/drivers/emulation/network-plan.h"

#include "sim/drivers/emulation/resource-names.h"
#include "sim/net/topology-builder.h"
#include "sim/run/arm-context-builder.h"

#include "ns3/abort.h"
#include "ns3/ipv4-global-routing.h"
#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-table-entry.h"
#include "ns3/ipv4.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace hilosim
{
namespace
{

std::string
ToString(ns3::Ipv4Address a)
{
    std::ostringstream o;
    a.Print(o);
    return o.str();
}

// The address and prefix of `device`'s first IPv4 address on its node.
ns3::Ipv4InterfaceAddress
AddressOf(ns3::Ptr<ns3::NetDevice> device)
{
    auto ipv4 = device->GetNode()->GetObject<ns3::Ipv4>();
    const int32_t interface = ipv4->GetInterfaceForDevice(device);
    NS_ABORT_MSG_IF(interface < 0, "PlanNetwork: a link device without an IPv4 interface");
    return ipv4->GetAddress(static_cast<uint32_t>(interface), 0);
}

PlannedHost
PlanHost(const Topology& topology, ns3::Ptr<ns3::Node> node, NodeRole role, uint32_t index,
         const std::string& tag, uint32_t* next_tap)
{
    PlannedHost host;
    host.role = role;
    host.index = index;
    host.netns = HostNamespace(tag, role, index);
    host.forwards = role == NodeRole::kRelay;
    const auto& links = topology.GetLinks();
    std::vector<std::pair<ns3::Ipv4Address, ns3::Ipv4Mask>> subnets;
    for (uint32_t d = 0; d < node->GetNDevices(); ++d)
    {
        ns3::Ptr<ns3::NetDevice> device = node->GetDevice(d);
        for (size_t l = 0; l < links.size(); ++l)
        {
            const bool a = links[l].device_a == device;
            if (!a && links[l].device_b != device)
                continue;
            const ns3::Ipv4InterfaceAddress ifaddr = AddressOf(device);
            PlannedTap tap;
            tap.name = TapName(tag, (*next_tap)++);
            tap.link = l;
            tap.side_a = a;
            tap.link_name = links[l].name;
            tap.address = ToString(ifaddr.GetLocal());
            tap.prefix_length = ifaddr.GetMask().GetPrefixLength();
            tap.peer = ToString(a ? links[l].address_b : links[l].address_a);
            tap.mtu = links[l].spec.mtu;
            host.taps.push_back(tap);
            subnets.emplace_back(ifaddr.GetLocal().CombineMask(ifaddr.GetMask()), ifaddr.GetMask());
        }
    }
    // Routes through a next hop, as ns-3's global routing computed them for this node; routes to
    // the node's own subnets are the kernel's connected routes already.
    auto ipv4 = node->GetObject<ns3::Ipv4>();
    auto global =
        ns3::Ipv4RoutingHelper::GetRouting<ns3::Ipv4GlobalRouting>(ipv4->GetRoutingProtocol());
    NS_ABORT_MSG_IF(!global, "PlanNetwork: a node without global routing");
    std::set<std::string> seen;
    for (uint32_t i = 0; i < global->GetNRoutes(); ++i)
    {
        ns3::Ipv4RoutingTableEntry* entry = global->GetRoute(i);
        if (!entry->IsGateway())
            continue;
        const ns3::Ipv4Mask mask = entry->GetDestNetworkMask();
        const ns3::Ipv4Address dest = entry->GetDestNetwork().CombineMask(mask);
        bool on_link = false;
        for (const auto& [net, net_mask] : subnets)
        {
            on_link = on_link || (net_mask.GetPrefixLength() <= mask.GetPrefixLength() &&
                                  dest.CombineMask(net_mask) == net);
        }
        const std::string destination =
            ToString(dest) + "/" + std::to_string(mask.GetPrefixLength());
        if (on_link || !seen.insert(destination).second)
            continue;
        ns3::Ptr<ns3::NetDevice> out = ipv4->GetNetDevice(entry->GetInterface());
        std::string tap;
        for (size_t t = 0; t < host.taps.size(); ++t)
        {
            const InstalledLink& link = links[host.taps[t].link];
            if ((host.taps[t].side_a ? link.device_a : link.device_b) == out)
                tap = host.taps[t].name;
        }
        NS_ABORT_MSG_IF(tap.empty(), "PlanNetwork: a route leaves through a device without a tap");
        host.routes.push_back({destination, ToString(entry->GetGateway()), tap});
    }
    return host;
}

// Max flow into the subtree behind a link of rate `rate` whose far end takes `below`.
double
Through(double rate, double below)
{
    return std::min(rate, below);
}

} // namespace

const PlannedHost&
NetworkPlan::Host(NodeRole role, uint32_t index) const
{
    for (const PlannedHost& h : hosts)
    {
        if (h.role == role && h.index == index)
            return h;
    }
    NS_FATAL_ERROR("NetworkPlan: no " << NodeName(role, index));
}

size_t
NetworkPlan::TapCount() const
{
    size_t n = 0;
    for (const PlannedHost& h : hosts)
        n += h.taps.size();
    return n;
}

NetworkPlan
PlanNetwork(const Topology& topology, const TopologySpec& spec, const std::string& tag)
{
    NetworkPlan plan;
    plan.tag = tag;
    plan.core_netns = CoreNamespace(tag);
    uint32_t next_tap = 0;
    plan.hosts.push_back(
        PlanHost(topology, topology.GetLearner(), NodeRole::kLearner, 0, tag, &next_tap));
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        plan.hosts.push_back(
            PlanHost(topology, topology.GetRelay(r), NodeRole::kRelay, r, tag, &next_tap));
        plan.learner_address_for_relay.push_back(ToString(topology.GetLearnerAddressForRelay(r)));
    }
    for (uint32_t w = 0; w < topology.GetWorkerCount(); ++w)
    {
        plan.hosts.push_back(
            PlanHost(topology, topology.GetWorker(w), NodeRole::kWorker, w, tag, &next_tap));
        plan.learner_address_for_worker.push_back(ToString(topology.GetLearnerAddressFor(w)));
        plan.relay_address_for_worker.push_back(
            topology.GetRelayOf(w) ? ToString(topology.GetRelayAddressFor(w)) : "");
    }
    plan.peak_link_traffic_bps = PeakLinkTrafficBps(spec);
    return plan;
}

hilo::StatusOr<NetworkPlan>
PlanScenarioNetwork(const ResolvedScenario& scenario, const std::string& tag)
{
    const TopologySpec spec = ScenarioTopologySpec(scenario);
    auto topology = TopologyBuilder::Build(spec);
    if (!topology.ok())
    {
        ns3::Simulator::Destroy();
        return topology.status();
    }
    NetworkPlan plan = PlanNetwork(*topology, spec, tag);
    ns3::Simulator::Destroy();
    return plan;
}

double
PeakLinkTrafficBps(const TopologySpec& spec)
{
    auto rate = [](const LinkSpec& l) { return static_cast<double>(l.rate.GetBitRate()); };
    // Behind the learner (or its uplink): `flow` enters the branches, `traffic` is what that flow
    // puts on the branches' links, and `relayed` what relays send on their own LAN links.
    double flow = 0, traffic = 0, relayed = 0;
    if (spec.kind == TopologyKind::kStar)
    {
        for (const LinkSpec& l : spec.worker_links)
        {
            flow += rate(l);
            traffic += rate(l);
        }
    }
    else
    {
        for (const RegionSpec& region : spec.regions)
        {
            double lans = 0;
            for (const LinkSpec& l : region.worker_links)
                lans += rate(l);
            if (spec.kind == TopologyKind::kRelay)
            {
                // The relay receives one copy and sends its own: its LAN links run at their
                // rates whatever the WAN carries.
                flow += rate(region.wan);
                traffic += rate(region.wan);
                relayed += lans;
            }
            else
            {
                const double f = Through(rate(region.wan), lans);
                flow += f;
                traffic += 2 * f; // the WAN, then the LAN links behind the gateway
            }
        }
    }
    if (!spec.learner_uplink)
    {
        return traffic + relayed;
    }
    // A shared uplink carries at most its rate; behind it every branch is scaled down alike.
    const double through = Through(rate(*spec.learner_uplink), flow);
    return through + (flow > 0 ? traffic * through / flow : 0.0) + relayed;
}

} // namespace hilosim
