// Installs a MessageEndpoint on every learner, worker and relay node of a Topology and opens the
// connections the applications use:
//   - every worker connects to the learner (unless workers_connect_to_learner is false in a relay
//     topology);
//   - in a relay topology, every relay connects to the learner and every worker to its relay.
// One TCP connection per endpoint pair carries both directions. Socket options are sized per
// path (SocketOptions::ForPath): the connecting side uses its own path's options; the accepting
// side applies the same buffers per peer once the peer's hello arrives. Peers whose paths have
// different MTUs connect to different listening ports (port, port + 1, ... by ascending segment
// size), because a TCP segment size cannot change after accept.
#ifndef HILO_SIM_NET_TRANSPORT_HELPER_H
#define HILO_SIM_NET_TRANSPORT_HELPER_H

#include "sim/net/message-endpoint.h"
#include "sim/net/socket-options.h"
#include "sim/net/topology.h"
#include "sim/roles/peer-ids.h"

#include "ns3/ptr.h"
#include "ns3/tcp-cubic.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <vector>

namespace hilosim
{

struct TransportConfig
{
    uint16_t port{7000};                                 // first listening port
    ns3::TypeId tcp_variant{ns3::TcpCubic::GetTypeId()}; // congestion control everywhere
    BufferSizing buffers;                                // socket buffers from path BDP
    bool workers_connect_to_learner{true};               // relay topologies: also learner link
};

/// The endpoints TransportHelper installed, by role.
class TransportEndpoints
{
  public:
    ns3::Ptr<MessageEndpoint> GetLearner() const { return m_learner; }
    /// REQUIRES: worker < worker count of the topology.
    ns3::Ptr<MessageEndpoint> GetWorker(uint32_t worker) const { return m_workers.at(worker); }
    uint32_t GetWorkerCount() const { return static_cast<uint32_t>(m_workers.size()); }
    /// REQUIRES: a relay topology and relay < relay count.
    ns3::Ptr<MessageEndpoint> GetRelay(uint32_t relay) const { return m_relays.at(relay); }
    uint32_t GetRelayCount() const { return static_cast<uint32_t>(m_relays.size()); }
    /// The socket options a worker's connection to the learner was made with.
    const SocketOptions& GetWorkerOptions(uint32_t worker) const
    {
        return m_workerOptions.at(worker);
    }

  private:
    friend class TransportHelper;
    ns3::Ptr<MessageEndpoint> m_learner;
    std::vector<ns3::Ptr<MessageEndpoint>> m_workers;
    std::vector<ns3::Ptr<MessageEndpoint>> m_relays;
    std::vector<SocketOptions> m_workerOptions;
};

class TransportHelper
{
  public:
    explicit TransportHelper(TransportConfig config = TransportConfig());

    /// Creates and installs the endpoints and starts the connections now (call before
    /// Simulator::Run, or from an event at the time the connections should open). Messages can be
    /// sent through the returned endpoints at once; they leave when their connection is up.
    /// REQUIRES: the topology's nodes have no MessageEndpoint yet.
    TransportEndpoints Install(const Topology& topology) const;

  private:
    TransportConfig m_config;
};

} // namespace hilosim

#endif // HILO_SIM_NET_TRANSPORT_HELPER_H
