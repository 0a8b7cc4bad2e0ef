// RelayRole: the relay host of a region (the `relay` topology), whoever runs it. Receives each
// update once from the learner over the region's WAN link and forwards the same bytes to every
// worker of its region over their LAN links, so the WAN carries one copy per region instead of one
// per worker.
#ifndef HILOSIM_ROLES_RELAY_ROLE_H
#define HILOSIM_ROLES_RELAY_ROLE_H

#include "sim/roles/role-port.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace hilosim
{

struct RelayHooks
{
    /// An update was forwarded: message type, wire bytes, copies sent.
    std::function<void(uint32_t type, uint64_t wire_bytes, uint32_t copies)> forwarded;
};

class RelayRole
{
  public:
    /// `worker_peers`: the region's workers. `port` must outlive the role.
    RelayRole(RolePort* port, std::vector<uint32_t> worker_peers, RelayHooks hooks);

    /// Forwards an update to every worker of the region. A message of another type is forwarded
    /// nowhere and returned as NotSupported (the driver logs it and goes on); a failed forward is
    /// returned as the transport's error.
    hilo::Status HandleMessage(uint32_t peer, const RoleMessage& message);

  private:
    RolePort* m_port;
    std::vector<uint32_t> m_workers;
    RelayHooks m_hooks;
};

} // namespace hilosim

#endif // HILOSIM_ROLES_RELAY_ROLE_H
