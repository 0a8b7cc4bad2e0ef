// What installs a network model's transport on a Topology, and what it hands back: one
// MessageTransport per learner, worker and relay node, connected as the applications expect
//   - every worker connects to the learner (unless TransportConfig::workers_connect_to_learner is
//     false in a relay topology);
//   - in a relay topology, every relay connects to the learner and every worker to its relay.
// TransportHelper installs the packet model (ns-3 TCP), FlowTransportHelper the flow model.
#ifndef HILO_SIM_NET_TRANSPORT_INSTALLER_H
#define HILO_SIM_NET_TRANSPORT_INSTALLER_H

#include "sim/net/message-transport.h"
#include "sim/net/socket-options.h"
#include "sim/net/topology.h"
#include "sim/roles/peer-ids.h"

#include "ns3/ptr.h"
#include "ns3/tcp-cubic.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hilosim
{

struct TransportConfig
{
    uint16_t port{7000};                                 // first listening port (packet model)
    ns3::TypeId tcp_variant{ns3::TcpCubic::GetTypeId()}; // congestion control everywhere
    BufferSizing buffers;                                // socket buffers from path BDP
    bool workers_connect_to_learner{true};               // relay topologies: also learner link
    bool slow_start_after_idle{true}; // Linux's restart after idle (SocketOptions)
};

/// One connection an installer opens: `from` connects to `to` (peer ids) over `path`, with
/// socket options sized for that path (both sides use the same buffers).
struct PlannedConnection
{
    uint32_t from;
    uint32_t to;
    PathInfo path;
    std::vector<size_t> route; // Topology::GetLinks() indices, from the `to` end (see topology.h)
    SocketOptions options;
};

/// The transports an installer created, by role.
class TransportEndpoints
{
  public:
    ns3::Ptr<MessageTransport> GetLearner() const { return m_learner; }
    /// REQUIRES: worker < worker count of the topology.
    ns3::Ptr<MessageTransport> GetWorker(uint32_t worker) const { return m_workers.at(worker); }
    uint32_t GetWorkerCount() const { return static_cast<uint32_t>(m_workers.size()); }
    /// REQUIRES: a relay topology and relay < relay count.
    ns3::Ptr<MessageTransport> GetRelay(uint32_t relay) const { return m_relays.at(relay); }
    uint32_t GetRelayCount() const { return static_cast<uint32_t>(m_relays.size()); }
    /// The socket options of a worker's connection to the learner (or to its relay's uplink
    /// path in a relay topology without direct learner connections).
    const SocketOptions& GetWorkerOptions(uint32_t worker) const
    {
        return m_workerOptions.at(worker);
    }
    /// Every connection opened, in order (for reporting window limits).
    const std::vector<PlannedConnection>& GetConnections() const { return m_connections; }

    /// For installers.
    void SetLearner(ns3::Ptr<MessageTransport> learner) { m_learner = learner; }
    void AddWorker(ns3::Ptr<MessageTransport> worker) { m_workers.push_back(worker); }
    void AddRelay(ns3::Ptr<MessageTransport> relay) { m_relays.push_back(relay); }
    void AddWorkerOptions(const SocketOptions& options) { m_workerOptions.push_back(options); }
    void AddConnection(const PlannedConnection& c) { m_connections.push_back(c); }

  private:
    ns3::Ptr<MessageTransport> m_learner;
    std::vector<ns3::Ptr<MessageTransport>> m_workers;
    std::vector<ns3::Ptr<MessageTransport>> m_relays;
    std::vector<SocketOptions> m_workerOptions;
    std::vector<PlannedConnection> m_connections;
};

/// The connections of `topology` under `config`, in the order they are opened: for each worker
/// its learner connection (when it has one), then its relay connection (relay topologies); then
/// each relay's learner connection. `workerOptions` receives, per worker, the options sized for
/// its learner path (whether or not it connects there).
std::vector<PlannedConnection> PlanConnections(const Topology& topology,
                                               const TransportConfig& config,
                                               std::vector<SocketOptions>* workerOptions);

/// Connections whose window (send buffer) is below their path's bandwidth-delay product: on those
/// a transfer longer than one window runs at most at window / RTT.
struct WindowReport
{
    uint32_t connections{0};
    uint32_t window_limited{0};
    std::string example; // the first such connection, for a warning; empty when none
};
WindowReport ReportWindowLimits(const TransportEndpoints& endpoints);

class TransportInstaller
{
  public:
    virtual ~TransportInstaller() = default;

    /// Creates and installs the transports and starts the connections now (call before
    /// Simulator::Run, or from an event at the time the connections should open). Messages can be
    /// sent through the returned transports at once; they leave when their connection is up.
    /// REQUIRES: the topology's nodes have no transport yet.
    virtual TransportEndpoints Install(const Topology& topology) const = 0;
};

} // namespace hilosim

#endif // HILO_SIM_NET_TRANSPORT_INSTALLER_H
