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
    out.m_learner = NewEndpoint(topology.GetLearner(), kLearnerPeerId, m_config);
    for (uint32_t w = 0; w < topology.GetWorkerCount(); ++w)
    {
        out.m_workers.push_back(NewEndpoint(topology.GetWorker(w), WorkerPeerId(w), m_config));
    }
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        out.m_relays.push_back(NewEndpoint(topology.GetRelay(r), RelayPeerId(r), m_config));
    }

    // Who connects to whom, with which options; listeners first so ports are known.
    struct Planned
    {
        ns3::Ptr<MessageEndpoint> from;
        uint32_t to;
        ns3::Ipv4Address address;
        SocketOptions options;
    };
    std::vector<Planned> plan;
    AcceptingSide learnerSide;
    std::vector<AcceptingSide> relaySides(topology.GetRelayCount());
    const bool relays = topology.HasRelays();
    for (uint32_t w = 0; w < topology.GetWorkerCount(); ++w)
    {
        auto options = SocketOptions::ForPath(topology.GetLearnerPathTo(w), m_config.tcp_variant,
                                              m_config.buffers);
        out.m_workerOptions.push_back(options);
        if (!relays || m_config.workers_connect_to_learner)
        {
            learnerSide.Add(WorkerPeerId(w), options);
            plan.push_back(
                {out.m_workers[w], kLearnerPeerId, topology.GetLearnerAddressFor(w), options});
        }
        if (relays)
        {
            const uint32_t r = *topology.GetRelayOf(w);
            auto lan = SocketOptions::ForPath(topology.GetRelayPathTo(w), m_config.tcp_variant,
                                              m_config.buffers);
            relaySides[r].Add(WorkerPeerId(w), lan);
            plan.push_back({out.m_workers[w], RelayPeerId(r), topology.GetRelayAddressFor(w), lan});
        }
    }
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        auto options = SocketOptions::ForPath(topology.GetLearnerPathToRelay(r),
                                              m_config.tcp_variant, m_config.buffers);
        learnerSide.Add(RelayPeerId(r), options);
        plan.push_back(
            {out.m_relays[r], kLearnerPeerId, topology.GetLearnerAddressForRelay(r), options});
    }

    std::map<uint32_t, uint16_t> learnerPorts = learnerSide.Listen(*out.m_learner, m_config.port);
    std::vector<std::map<uint32_t, uint16_t>> relayPorts;
    for (uint32_t r = 0; r < topology.GetRelayCount(); ++r)
    {
        relayPorts.push_back(relaySides[r].Listen(*out.m_relays[r], m_config.port));
    }
    for (const Planned& p : plan)
    {
        const uint32_t self = p.from->GetLocalId();
        const uint16_t port = p.to == kLearnerPeerId
                                  ? learnerPorts.at(self)
                                  : relayPorts.at(p.to - kRelayPeerIdBase).at(self);
        p.from->Connect(p.to, p.address, port, p.options);
    }
    return out;
}

} // namespace hilosim
