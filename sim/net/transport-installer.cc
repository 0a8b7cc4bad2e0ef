#include "sim/net/transport-installer.h"

#include "sim/net/units.h"

#include <iomanip>
#include <sstream>

namespace hilosim
{

std::vector<PlannedConnection>
PlanConnections(const Topology& topology, const TransportConfig& config,
                std::vector<SocketOptions>* workerOptions)
{
    std::vector<PlannedConnection> plan;
    workerOptions->clear();
    const bool relays = topology.HasRelays();
    for (uint32_t w = 0; w < topology.GetWorkerCount(); ++w)
    {
        const PathInfo& path = topology.GetLearnerPathTo(w);
        auto options = SocketOptions::ForPath(path, config.tcp_variant, config.buffers);
        options.restart_after_idle = config.slow_start_after_idle;
        workerOptions->push_back(options);
        if (!relays || config.workers_connect_to_learner)
        {
            plan.push_back(
                {WorkerPeerId(w), kLearnerPeerId, path, topology.GetLearnerRouteTo(w), options});
        }
        if (relays)
        {
            const PathInfo& lan = topology.GetRelayPathTo(w);
            auto lanOptions = SocketOptions::ForPath(lan, config.tcp_variant, config.buffers);
            lanOptions.restart_after_idle = config.slow_start_after_idle;
            plan.push_back({WorkerPeerId(w), RelayPeerId(*topology.GetRelayOf(w)), lan,
                            topology.GetRelayRouteTo(w), lanOptions});
        }
    }
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        const PathInfo& path = topology.GetLearnerPathToRelay(r);
        auto relayOptions = SocketOptions::ForPath(path, config.tcp_variant, config.buffers);
        relayOptions.restart_after_idle = config.slow_start_after_idle;
        plan.push_back({RelayPeerId(r), kLearnerPeerId, path, topology.GetLearnerRouteToRelay(r),
                        relayOptions});
    }
    return plan;
}

namespace
{
std::string
PeerName(uint32_t id)
{
    if (id == kLearnerPeerId)
    {
        return "learner";
    }
    if (id >= kRelayPeerIdBase)
    {
        return "relay " + std::to_string(id - kRelayPeerIdBase);
    }
    return "worker " + std::to_string(id);
}
} // namespace

WindowReport
ReportWindowLimits(const TransportEndpoints& endpoints)
{
    WindowReport report;
    for (const PlannedConnection& c : endpoints.GetConnections())
    {
        ++report.connections;
        if (!c.options.window_limited)
        {
            continue;
        }
        if (++report.window_limited == 1)
        {
            std::ostringstream os;
            os << PeerName(c.from) << " <-> " << PeerName(c.to) << ": window "
               << c.options.send_buffer_bytes << " B < BDP " << c.path.GetBdpBytes() << " B ("
               << FormatDataRate(c.path.GetBottleneck()) << ", RTT "
               << c.path.GetRtt().GetMilliSeconds() << " ms), so at most " << std::setprecision(3)
               << 8e-6 * c.options.send_buffer_bytes / c.path.GetRtt().GetSeconds() << " Mbit/s";
            report.example = os.str();
        }
    }
    return report;
}

} // namespace hilosim
