#include "sim/net/transport-installer.h"

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
        workerOptions->push_back(options);
        if (!relays || config.workers_connect_to_learner)
        {
            plan.push_back({WorkerPeerId(w), kLearnerPeerId, path, options});
        }
        if (relays)
        {
            const PathInfo& lan = topology.GetRelayPathTo(w);
            plan.push_back({WorkerPeerId(w), RelayPeerId(*topology.GetRelayOf(w)), lan,
                            SocketOptions::ForPath(lan, config.tcp_variant, config.buffers)});
        }
    }
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        const PathInfo& path = topology.GetLearnerPathToRelay(r);
        plan.push_back({RelayPeerId(r), kLearnerPeerId, path,
                        SocketOptions::ForPath(path, config.tcp_variant, config.buffers)});
    }
    return plan;
}

} // namespace hilosim
