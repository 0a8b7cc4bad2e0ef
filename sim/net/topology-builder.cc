#include "sim/net/topology-builder.h"

#include "sim/net/link-helper.h"

#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/node.h"

namespace hilosim
{

hilo::StatusOr<Topology>
TopologyBuilder::Build(const TopologySpec& spec, bool ip_routing)
{
    HILO_RETURN_IF_ERROR(spec.Validate());

    Topology topo;
    topo.m_kind = spec.kind;
    ns3::InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    auto newNode = [&]()
    {
        auto node = ns3::CreateObject<ns3::Node>();
        stack.Install(node);
        topo.m_allNodes.Add(node);
        return node;
    };
    ns3::Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
    LinkHelper links(spec.rng_stream_base);
    auto addLink = [&](const std::string& name, ns3::Ptr<ns3::Node> a, ns3::Ptr<ns3::Node> b,
                       const LinkSpec& link)
    {
        topo.m_links.push_back(links.Install(name, a, b, link, addresses));
        return topo.m_links.size() - 1;
    };

    topo.m_learner = newNode();
    ns3::Ptr<ns3::Node> hub = topo.m_learner;
    std::vector<const LinkSpec*> prefix; // links every learner route starts with
    std::vector<size_t> prefixRoute;     // the same, as indices into m_links
    if (spec.learner_uplink)
    {
        hub = newNode();
        topo.m_uplink = addLink("uplink", topo.m_learner, hub, *spec.learner_uplink);
        prefix.push_back(&*spec.learner_uplink);
        prefixRoute.push_back(*topo.m_uplink);
    }
    // The learner's address on the first link of a route that leaves `firstLink`.
    auto learnerSide = [&](size_t firstLink)
    {
        return topo.m_uplink ? topo.m_links[*topo.m_uplink].address_a
                             : topo.m_links[firstLink].address_a;
    };

    if (spec.kind == TopologyKind::kStar)
    {
        for (size_t i = 0; i < spec.worker_links.size(); ++i)
        {
            Topology::Worker worker;
            worker.node = newNode();
            worker.link =
                addLink("worker " + std::to_string(i), hub, worker.node, spec.worker_links[i]);
            worker.learnerAddress = learnerSide(worker.link);
            auto route = prefix;
            route.push_back(&spec.worker_links[i]);
            worker.learnerPath = PathInfo::Over(route);
            worker.learnerRoute = prefixRoute;
            worker.learnerRoute.push_back(worker.link);
            topo.m_workers.push_back(worker);
        }
    }
    else
    {
        for (size_t r = 0; r < spec.regions.size(); ++r)
        {
            const RegionSpec& regionSpec = spec.regions[r];
            Topology::Region region;
            region.name = regionSpec.name;
            region.gateway = newNode();
            region.wan =
                addLink("region " + region.name + " wan", hub, region.gateway, regionSpec.wan);
            region.learnerAddress = learnerSide(region.wan);
            auto wanRoute = prefix;
            wanRoute.push_back(&regionSpec.wan);
            region.learnerPath = PathInfo::Over(wanRoute);
            region.learnerRoute = prefixRoute;
            region.learnerRoute.push_back(region.wan);
            for (size_t i = 0; i < regionSpec.worker_links.size(); ++i)
            {
                const LinkSpec& lan = regionSpec.worker_links[i];
                Topology::Worker worker;
                worker.node = newNode();
                worker.region = static_cast<uint32_t>(r);
                worker.link = addLink("region " + region.name + " worker " + std::to_string(i),
                                      region.gateway, worker.node, lan);
                worker.learnerAddress = region.learnerAddress;
                auto route = wanRoute;
                route.push_back(&lan);
                worker.learnerPath = PathInfo::Over(route);
                worker.relayPath = PathInfo::Over({&lan});
                worker.learnerRoute = region.learnerRoute;
                worker.learnerRoute.push_back(worker.link);
                worker.relayRoute = {worker.link};
                region.workers.push_back(static_cast<uint32_t>(topo.m_workers.size()));
                topo.m_workers.push_back(worker);
            }
            topo.m_regions.push_back(region);
        }
    }

    if (ip_routing)
    {
        ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }
    return topo;
}

} // namespace hilosim
