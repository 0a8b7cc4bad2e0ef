// The result of building a TopologySpec: which node plays which role, which address to connect to,
// which node relays for which worker, and the installed links (for tracing bytes on a link).
// Built only by TopologyBuilder; read-only afterwards.
#ifndef HILO_SIM_NET_TOPOLOGY_H
#define HILO_SIM_NET_TOPOLOGY_H

#include "sim/net/link-helper.h"
#include "sim/net/link-spec.h"

#include "ns3/data-rate.h"
#include "ns3/ipv4-address.h"
#include "ns3/node-container.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

/// The physical properties of a route, from the links it crosses: what socket buffers and TCP
/// segment sizes are sized from (sim/net/socket-options.h).
class PathInfo
{
  public:
    PathInfo() = default;
    /// The route over `links`, in order. REQUIRES: at least one link.
    static PathInfo Over(const std::vector<const LinkSpec*>& links);

    ns3::DataRate GetBottleneck() const { return m_bottleneck; }
    ns3::Time GetOneWayDelay() const { return m_oneWayDelay; }
    /// Twice the one-way propagation delay (no serialization or queueing).
    ns3::Time GetRtt() const { return m_oneWayDelay + m_oneWayDelay; }
    /// Smallest MTU on the route.
    uint32_t GetMtu() const { return m_mtu; }
    /// Bottleneck rate times round-trip propagation delay, in bytes.
    uint64_t GetBdpBytes() const;
    /// Bytes the bottleneck link's queue holds (queue_packets full-MTU packets; the smallest
    /// such queue when several links share the bottleneck rate).
    uint64_t GetBottleneckQueueBytes() const { return m_bottleneckQueueBytes; }
    uint32_t GetHops() const { return m_hops; }

  private:
    ns3::DataRate m_bottleneck{0};
    ns3::Time m_oneWayDelay{0};
    uint32_t m_mtu{0};
    uint32_t m_hops{0};
    uint64_t m_bottleneckQueueBytes{0};
};

class Topology
{
  public:
    TopologyKind GetKind() const { return m_kind; }

    ns3::Ptr<ns3::Node> GetLearner() const { return m_learner; }
    uint32_t GetWorkerCount() const { return static_cast<uint32_t>(m_workers.size()); }
    /// REQUIRES: worker < GetWorkerCount() (here and below).
    ns3::Ptr<ns3::Node> GetWorker(uint32_t worker) const;
    ns3::Ipv4Address GetWorkerAddress(uint32_t worker) const;
    /// The learner address a worker (or its relay) should connect to: the learner's interface on
    /// the route towards it. Any learner address is reachable; this one is on the shortest route.
    ns3::Ipv4Address GetLearnerAddressFor(uint32_t worker) const;
    /// The route from the learner to the worker (through its relay/gateway where there is one).
    const PathInfo& GetLearnerPathTo(uint32_t worker) const;

    /// Region of a worker; nullopt in a star.
    std::optional<uint32_t> GetRegionOf(uint32_t worker) const;
    uint32_t GetRegionCount() const { return static_cast<uint32_t>(m_regions.size()); }
    const std::string& GetRegionName(uint32_t region) const;
    /// Workers of a region, in worker order.
    const std::vector<uint32_t>& GetRegionWorkers(uint32_t region) const;
    /// The region's gateway node (router in kRegions, relay host in kRelay).
    ns3::Ptr<ns3::Node> GetRegionGateway(uint32_t region) const;

    /// kRelay only: the relay nodes, one per region (index = region index).
    bool HasRelays() const { return m_kind == TopologyKind::kRelay; }
    uint32_t GetRelayCount() const { return HasRelays() ? GetRegionCount() : 0; }
    ns3::Ptr<ns3::Node> GetRelay(uint32_t relay) const;
    /// Relay serving `worker`; nullopt unless kRelay.
    std::optional<uint32_t> GetRelayOf(uint32_t worker) const;
    /// Address on the relay the worker connects to (the relay's side of the worker's LAN link).
    /// REQUIRES: GetRelayOf(worker) has a value.
    ns3::Ipv4Address GetRelayAddressFor(uint32_t worker) const;
    /// The learner address a relay connects to.
    ns3::Ipv4Address GetLearnerAddressForRelay(uint32_t relay) const;
    const PathInfo& GetLearnerPathToRelay(uint32_t relay) const;
    /// Route from a relay to one of its workers (the worker's LAN link).
    const PathInfo& GetRelayPathTo(uint32_t worker) const;

    /// The shared learner uplink, if the spec had one (device_a on the learner).
    const InstalledLink* GetLearnerUplink() const;
    /// The link that attaches the worker (star WAN link or region LAN link; device_b on the
    /// worker).
    const InstalledLink& GetWorkerLink(uint32_t worker) const;
    /// A region's shared WAN link (device_a on the learner side, device_b on the gateway).
    const InstalledLink& GetRegionWan(uint32_t region) const;
    /// Every installed link, in build order.
    const std::vector<InstalledLink>& GetLinks() const { return m_links; }

    /// Routes as indices into GetLinks(), starting at the learner (or relay) end. Every link of a
    /// route is crossed from its "a" end to its "b" end when going away from the learner (relay).
    /// The learner's route to a worker (through its gateway or relay host where there is one).
    const std::vector<size_t>& GetLearnerRouteTo(uint32_t worker) const;
    /// REQUIRES: a relay topology (as GetLearnerPathToRelay, GetRelayPathTo).
    const std::vector<size_t>& GetLearnerRouteToRelay(uint32_t relay) const;
    const std::vector<size_t>& GetRelayRouteTo(uint32_t worker) const;

    /// Learner, workers, routers and relays.
    ns3::NodeContainer GetAllNodes() const { return m_allNodes; }

  private:
    friend class TopologyBuilder;

    struct Worker
    {
        ns3::Ptr<ns3::Node> node;
        std::optional<uint32_t> region;
        size_t link; // index into m_links
        ns3::Ipv4Address learnerAddress;
        PathInfo learnerPath;
        PathInfo relayPath;
        std::vector<size_t> learnerRoute; // indices into m_links
        std::vector<size_t> relayRoute;
    };
    struct Region
    {
        std::string name;
        ns3::Ptr<ns3::Node> gateway;
        size_t wan; // index into m_links
        std::vector<uint32_t> workers;
        ns3::Ipv4Address learnerAddress;
        PathInfo learnerPath;
        std::vector<size_t> learnerRoute; // indices into m_links
    };

    TopologyKind m_kind{TopologyKind::kStar};
    ns3::Ptr<ns3::Node> m_learner;
    std::optional<size_t> m_uplink; // index into m_links
    std::vector<Worker> m_workers;
    std::vector<Region> m_regions;
    std::vector<InstalledLink> m_links;
    ns3::NodeContainer m_allNodes;
};

} // namespace hilosim

#endif // HILO_SIM_NET_TOPOLOGY_H
