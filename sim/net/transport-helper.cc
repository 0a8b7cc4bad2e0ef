#include "sim/net/transport-helper.h"

#include "ns3/abort.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <map>

namespace hilosim
{
namespace
{

/// The accepting side of one node: one listener per distinct segment size.
class AcceptingSide
{
  public:
    void Add(uint32_t peer, const SocketOptions& options) { m_peers.emplace_back(peer, options); }

    /// Starts the listeners on `endpoint`, sets per-peer buffers, returns the port per peer.
    std::map<uint32_t, uint16_t> Listen(MessageEndpoint& endpoint, uint16_t firstPort) const
    {
        std::map<uint32_t, SocketOptions> bySegment; // segment size -> listener options
        for (const auto& [peer, options] : m_peers)
        {
            auto [it, inserted] = bySegment.emplace(options.segment_bytes, options);
            SocketOptions& l = it->second;
            // The listener's receive buffer fixes the window scale: take the largest.
            l.send_buffer_bytes = std::max(l.send_buffer_bytes, options.send_buffer_bytes);
            l.receive_buffer_bytes = std::max(l.receive_buffer_bytes, options.receive_buffer_bytes);
        }
        std::map<uint32_t, uint16_t> portOfSegment;
        uint16_t port = firstPort;
        for (const auto& [segment, options] : bySegment)
        {
            endpoint.Listen(port, options);
            portOfSegment[segment] = port++;
        }
        std::map<uint32_t, uint16_t> portOfPeer;
        for (const auto& [peer, options] : m_peers)
        {
            endpoint.SetPeerSocketOptions(peer, options);
            portOfPeer[peer] = portOfSegment[options.segment_bytes];
        }
        return portOfPeer;
    }

  private:
    std::vector<std::pair<uint32_t, SocketOptions>> m_peers;
};

ns3::Ptr<MessageEndpoint>
NewEndpoint(ns3::Ptr<ns3::Node> node, uint32_t id, const TransportConfig& config)
{
    auto endpoint = ns3::CreateObject<MessageEndpoint>();
    endpoint->SetAttribute("LocalId", ns3::UintegerValue(id));
    endpoint->SetAttribute("TcpVariant", ns3::TypeIdValue(config.tcp_variant));
    endpoint->Install(node);
    return endpoint;
}

} // namespace

TransportHelper::TransportHelper(TransportConfig config)
  : m_config(std::move(config))
{
}

TransportEndpoints
TransportHelper::Install(const Topology& topology) const
{
    NS_ABORT_MSG_IF(m_config.port == 0, "TransportHelper: port 0 is not a listening port");
    TransportEndpoints out;
    std::map<uint32_t, ns3::Ptr<MessageEndpoint>> byId;
    auto add = [&](ns3::Ptr<ns3::Node> node, uint32_t id)
    {
        auto endpoint = NewEndpoint(node, id, m_config);
        byId[id] = endpoint;
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

    // Listeners first so that ports are known.
    std::vector<SocketOptions> workerOptions;
    const std::vector<PlannedConnection> plan = PlanConnections(topology, m_config, &workerOptions);
    for (const SocketOptions& o : workerOptions)
    {
        out.AddWorkerOptions(o);
    }
    std::map<uint32_t, AcceptingSide> accepting; // by accepting peer id
    for (const PlannedConnection& p : plan)
    {
        accepting[p.to].Add(p.from, p.options);
        out.AddConnection(p);
    }
    std::map<uint32_t, std::map<uint32_t, uint16_t>> ports; // accepting id -> peer -> port
    // The learner listens first, then the relays in order.
    std::vector<uint32_t> listeners = {kLearnerPeerId};
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        listeners.push_back(RelayPeerId(r));
    }
    for (uint32_t id : listeners)
    {
        ports[id] = accepting[id].Listen(*byId.at(id), m_config.port);
    }
    for (const PlannedConnection& p : plan)
    {
        const ns3::Ipv4Address address =
            p.to == kLearnerPeerId
                ? (p.from >= kRelayPeerIdBase
                       ? topology.GetLearnerAddressForRelay(p.from - kRelayPeerIdBase)
                       : topology.GetLearnerAddressFor(p.from))
                : topology.GetRelayAddressFor(p.from);
        byId.at(p.from)->Connect(p.to, address, ports.at(p.to).at(p.from), p.options);
    }
    return out;
}

} // namespace hilosim
