#include "sim/net/topology.h"

#include "ns3/abort.h"

#include <algorithm>
#include <limits>

namespace hilosim
{

PathInfo
PathInfo::Over(const std::vector<const LinkSpec*>& links)
{
    NS_ABORT_MSG_IF(links.empty(), "PathInfo::Over: a path needs at least one link");
    PathInfo path;
    uint64_t bottleneck = std::numeric_limits<uint64_t>::max();
    path.m_mtu = std::numeric_limits<uint32_t>::max();
    for (const LinkSpec* link : links)
    {
        bottleneck = std::min<uint64_t>(bottleneck, link->rate.GetBitRate());
        path.m_oneWayDelay += link->delay;
        path.m_mtu = std::min(path.m_mtu, link->mtu);
    }
    path.m_bottleneckQueueBytes = std::numeric_limits<uint64_t>::max();
    for (const LinkSpec* link : links)
    {
        if (link->rate.GetBitRate() == bottleneck)
        {
            path.m_bottleneckQueueBytes = std::min<uint64_t>(
                path.m_bottleneckQueueBytes, uint64_t{link->queue_packets} * link->mtu);
        }
    }
    path.m_bottleneck = ns3::DataRate(bottleneck);
    path.m_hops = static_cast<uint32_t>(links.size());
    return path;
}

uint64_t
PathInfo::GetBdpBytes() const
{
    return static_cast<uint64_t>(m_bottleneck.GetBitRate() * GetRtt().GetSeconds() / 8.0);
}

namespace
{
void
CheckWorker(uint32_t worker, size_t count)
{
    NS_ABORT_MSG_IF(worker >= count,
                    "Topology: worker " << worker << " out of range (" << count << " workers)");
}
} // namespace

ns3::Ptr<ns3::Node>
Topology::GetWorker(uint32_t worker) const
{
    CheckWorker(worker, m_workers.size());
    return m_workers[worker].node;
}

ns3::Ipv4Address
Topology::GetWorkerAddress(uint32_t worker) const
{
    return GetWorkerLink(worker).address_b;
}

ns3::Ipv4Address
Topology::GetLearnerAddressFor(uint32_t worker) const
{
    CheckWorker(worker, m_workers.size());
    return m_workers[worker].learnerAddress;
}

const PathInfo&
Topology::GetLearnerPathTo(uint32_t worker) const
{
    CheckWorker(worker, m_workers.size());
    return m_workers[worker].learnerPath;
}

std::optional<uint32_t>
Topology::GetRegionOf(uint32_t worker) const
{
    CheckWorker(worker, m_workers.size());
    return m_workers[worker].region;
}

const std::string&
Topology::GetRegionName(uint32_t region) const
{
    NS_ABORT_MSG_IF(region >= m_regions.size(), "Topology: region " << region << " out of range");
    return m_regions[region].name;
}

const std::vector<uint32_t>&
Topology::GetRegionWorkers(uint32_t region) const
{
    NS_ABORT_MSG_IF(region >= m_regions.size(), "Topology: region " << region << " out of range");
    return m_regions[region].workers;
}

ns3::Ptr<ns3::Node>
Topology::GetRegionGateway(uint32_t region) const
{
    NS_ABORT_MSG_IF(region >= m_regions.size(), "Topology: region " << region << " out of range");
    return m_regions[region].gateway;
}

ns3::Ptr<ns3::Node>
Topology::GetRelay(uint32_t relay) const
{
    NS_ABORT_MSG_IF(!HasRelays(), "Topology::GetRelay: a " << TopologyKindName(m_kind)
                                                           << " topology has no relays");
    return GetRegionGateway(relay);
}

std::optional<uint32_t>
Topology::GetRelayOf(uint32_t worker) const
{
    CheckWorker(worker, m_workers.size());
    return HasRelays() ? m_workers[worker].region : std::nullopt;
}

ns3::Ipv4Address
Topology::GetRelayAddressFor(uint32_t worker) const
{
    NS_ABORT_MSG_IF(!GetRelayOf(worker).has_value(),
                    "Topology::GetRelayAddressFor: worker " << worker << " has no relay");
    return GetWorkerLink(worker).address_a;
}

ns3::Ipv4Address
Topology::GetLearnerAddressForRelay(uint32_t relay) const
{
    NS_ABORT_MSG_IF(!HasRelays() || relay >= m_regions.size(),
                    "Topology: relay " << relay << " does not exist");
    return m_regions[relay].learnerAddress;
}

const PathInfo&
Topology::GetLearnerPathToRelay(uint32_t relay) const
{
    NS_ABORT_MSG_IF(!HasRelays() || relay >= m_regions.size(),
                    "Topology: relay " << relay << " does not exist");
    return m_regions[relay].learnerPath;
}

const PathInfo&
Topology::GetRelayPathTo(uint32_t worker) const
{
    NS_ABORT_MSG_IF(!GetRelayOf(worker).has_value(),
                    "Topology::GetRelayPathTo: worker " << worker << " has no relay");
    return m_workers[worker].relayPath;
}

const std::vector<size_t>&
Topology::GetLearnerRouteTo(uint32_t worker) const
{
    CheckWorker(worker, m_workers.size());
    return m_workers[worker].learnerRoute;
}

const std::vector<size_t>&
Topology::GetLearnerRouteToRelay(uint32_t relay) const
{
    NS_ABORT_MSG_IF(!HasRelays() || relay >= m_regions.size(),
                    "Topology: relay " << relay << " does not exist");
    return m_regions[relay].learnerRoute;
}

const std::vector<size_t>&
Topology::GetRelayRouteTo(uint32_t worker) const
{
    NS_ABORT_MSG_IF(!GetRelayOf(worker).has_value(),
                    "Topology::GetRelayRouteTo: worker " << worker << " has no relay");
    return m_workers[worker].relayRoute;
}

const InstalledLink*
Topology::GetLearnerUplink() const
{
    return m_uplink ? &m_links[*m_uplink] : nullptr;
}

const InstalledLink&
Topology::GetWorkerLink(uint32_t worker) const
{
    CheckWorker(worker, m_workers.size());
    return m_links[m_workers[worker].link];
}

const InstalledLink&
Topology::GetRegionWan(uint32_t region) const
{
    NS_ABORT_MSG_IF(region >= m_regions.size(), "Topology: region " << region << " out of range");
    return m_links[m_regions[region].wan];
}

} // namespace hilosim
