// Installs the flow model: a FlowEndpoint on every learner, worker and relay node of a Topology,
// connected as transport-installer.h describes, over one FlowNetwork whose links are the
// topology's links (each direction its own capacity). Each connection's streams follow the same
// routes as the packet model's packets and use the same socket options (segment size from the
// path MTU, send buffer from TransportConfig::buffers). The ns-3 nodes and links stay as built
// (addresses, routes), but no packet is sent on them.
#ifndef HILO_SIM_NET_FLOW_FLOW_TRANSPORT_HELPER_H
#define HILO_SIM_NET_FLOW_FLOW_TRANSPORT_HELPER_H

#include "sim/net/topology.h"
#include "sim/net/transport-installer.h"

namespace hilosim
{

class FlowTransportHelper : public TransportInstaller
{
  public:
    /// `lossDraws`: draw each segment's loss from a generator seeded by ns-3's seed and run (the
    /// scenario's seed in a run), with its repair's delay (flow-network.h); false: expected
    /// losses, as before the draws (for the closed-form checks).
    explicit FlowTransportHelper(TransportConfig config = TransportConfig(), bool lossDraws = true);

    /// See TransportInstaller::Install. The transports are FlowEndpoints.
    TransportEndpoints Install(const Topology& topology) const override;

  private:
    TransportConfig m_config;
    bool m_lossDraws;
};

} // namespace hilosim

#endif // HILO_SIM_NET_FLOW_FLOW_TRANSPORT_HELPER_H
