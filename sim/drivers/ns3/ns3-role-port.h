// Ns3RolePort: the simulation driver's RolePort (sim/roles/role-port.h). Modelled time is ns-3's
// simulated time, timers are simulator events, messages go through the node's MessageTransport
// over ns-3 TCP, and a failed role stops the simulation. Real computation takes no simulated
// time, so phases never overrun.
#ifndef HILOSIM_DRIVERS_NS3_NS3_ROLE_PORT_H
#define HILOSIM_DRIVERS_NS3_NS3_ROLE_PORT_H

#include "sim/net/message-transport.h"
#include "sim/roles/role-port.h"

#include "ns3/ptr.h"

namespace hilosim
{

class Ns3RolePort : public RolePort
{
  public:
    explicit Ns3RolePort(ns3::Ptr<MessageTransport> endpoint);
    ~Ns3RolePort() override;

    double Now() const override;
    bool RealTime() const override { return false; }
    void After(double modelled_s, ComputePhase phase, double spent_s,
               std::function<void()> fn) override;
    hilo::Status Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wire_bytes) override;
    hilo::Status Forward(uint32_t from_peer, uint64_t sequence,
                         const std::vector<uint32_t>& to_peers) override;
    void Stop() override;

    ns3::Ptr<MessageTransport> endpoint() const { return m_endpoint; }
    /// Drops the endpoint (application disposal).
    void Dispose();

  private:
    ns3::Ptr<MessageTransport> m_endpoint;
};

/// The role's view of a message the endpoint delivered.
RoleMessage ToRoleMessage(const Message& message);
/// The role's view of a message whose header the endpoint announced.
RoleMessageHead ToRoleMessageHead(const MessageMeta& meta);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_NS3_NS3_ROLE_PORT_H
