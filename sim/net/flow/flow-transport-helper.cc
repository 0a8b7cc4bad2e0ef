#include "sim/net/flow/flow-transport-helper.h"

#include "sim/net/flow/flow-endpoint.h"
#include "sim/net/flow/flow-network.h"
#include "sim/net/flow/tcp-flow-model.h"

#include "ns3/abort.h"
#include "ns3/rng-seed-manager.h"

#include <map>

namespace hilosim
{

FlowTransportHelper::FlowTransportHelper(TransportConfig config, bool lossDraws)
  : m_config(std::move(config))
  , m_lossDraws(lossDraws)
{
}

TransportEndpoints
FlowTransportHelper::Install(const Topology& topology) const
{
    // Directed link 2i carries link i from its "a" end to its "b" end, 2i + 1 back.
    const std::vector<InstalledLink>& links = topology.GetLinks();
    std::vector<double> capacity;
    for (const InstalledLink& link : links)
    {
        const double bytesPerSecond = static_cast<double>(link.spec.rate.GetBitRate()) / 8.0;
        capacity.push_back(bytesPerSecond);
        capacity.push_back(bytesPerSecond);
    }
    std::optional<uint64_t> lossSeed;
    if (m_lossDraws)
    {
        lossSeed = (static_cast<uint64_t>(ns3::RngSeedManager::GetSeed()) << 32) |
                   ns3::RngSeedManager::GetRun();
    }
    auto network = ns3::Create<FlowNetwork>(capacity, lossSeed);

    TransportEndpoints out;
    std::map<uint32_t, ns3::Ptr<FlowEndpoint>> byId;
    std::map<uint32_t, uint32_t> nodeOf; // peer id -> ns-3 node id
    auto add = [&](ns3::Ptr<ns3::Node> node, uint32_t id)
    {
        auto endpoint = ns3::CreateObject<FlowEndpoint>();
        endpoint->Install(node, id, network);
        byId[id] = endpoint;
        nodeOf[id] = node->GetId();
        return endpoint;
    };
    out.SetLearner(add(topology.GetLearner(), kLearnerPeerId));
    for (uint32_t w = 0; w < topology.GetWorkerCount(); ++w)
    {
        out.AddWorker(add(topology.GetWorker(w), WorkerPeerId(w)));
    }
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        out.AddRelay(add(topology.GetRelay(r), RelayPeerId(r)));
    }

    std::vector<SocketOptions> workerOptions;
    const std::vector<PlannedConnection> plan = PlanConnections(topology, m_config, &workerOptions);
    for (const SocketOptions& o : workerOptions)
    {
        out.AddWorkerOptions(o);
    }
    struct Streams
    {
        uint32_t up;   // connecting side -> accepting side
        uint32_t down; // accepting side -> connecting side
        double handshake;
    };
    std::vector<Streams> streams;
    for (const PlannedConnection& p : plan)
    {
        out.AddConnection(p);
        std::vector<const LinkSpec*> downSpecs;
        std::vector<uint32_t> downLinks;
        std::vector<const LinkSpec*> upSpecs;
        std::vector<uint32_t> upLinks;
        for (size_t i : p.route)
        {
            downSpecs.push_back(&links.at(i).spec);
            downLinks.push_back(static_cast<uint32_t>(2 * i));
        }
        for (auto it = p.route.rbegin(); it != p.route.rend(); ++it)
        {
            upSpecs.push_back(&links.at(*it).spec);
            upLinks.push_back(static_cast<uint32_t>(2 * *it + 1));
        }
        const TcpFlowParams up = TcpFlowParamsFor(upSpecs, p.options);
        const TcpFlowParams down = TcpFlowParamsFor(downSpecs, p.options);
        Streams s;
        s.up = network->AddStream(upLinks, up, nodeOf.at(p.to));
        s.down = network->AddStream(downLinks, down, nodeOf.at(p.from));
        s.handshake = up.handshake_rtt_s;
        streams.push_back(s);
    }
    // Accepting sides first, as listeners come before connects in the packet model.
    for (size_t i = 0; i < plan.size(); ++i)
    {
        byId.at(plan[i].to)->Accept(plan[i].from, streams[i].down, streams[i].up);
    }
    for (size_t i = 0; i < plan.size(); ++i)
    {
        byId.at(plan[i].from)
            ->Connect(plan[i].to, streams[i].up, streams[i].down,
                      ns3::Seconds(streams[i].handshake));
    }
    return out;
}

} // namespace hilosim
