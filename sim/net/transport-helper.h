// Installs the packet model: a MessageEndpoint (ns-3 TCP) on every learner, worker and relay node
// of a Topology, connected as transport-installer.h describes. One TCP connection per endpoint
// pair carries both directions. Socket options are sized per path (SocketOptions::ForPath): the
// connecting side uses its own path's options; the accepting side applies the same buffers per
// peer once the peer's hello arrives. Peers whose paths have different MTUs connect to different
// listening ports (port, port + 1, ... by ascending segment size), because a TCP segment size
// cannot change after accept.
#ifndef HILO_SIM_NET_TRANSPORT_HELPER_H
#define HILO_SIM_NET_TRANSPORT_HELPER_H

#include "sim/net/message-endpoint.h"
#include "sim/net/socket-options.h"
#include "sim/net/topology.h"
#include "sim/net/transport-installer.h"

namespace hilosim
{

class TransportHelper : public TransportInstaller
{
  public:
    explicit TransportHelper(TransportConfig config = TransportConfig());

    /// See TransportInstaller::Install. The transports are MessageEndpoints.
    TransportEndpoints Install(const Topology& topology) const override;

  private:
    TransportConfig m_config;
};

} // namespace hilosim

#endif // HILO_SIM_NET_TRANSPORT_HELPER_H
