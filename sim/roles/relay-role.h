// RelayRole: the relay host of a region (the `relay` topology), whoever runs it. Receives each
// update once from the learner over the region's WAN link and forwards the same bytes to every
// worker of its region over their LAN links, so the WAN carries one copy per region instead of one
// per worker. Streaming (the default) forwards an update while it arrives (RolePort::Forward):
// a worker's copy completes one LAN delay after the relay's, as behind a router. Store and
// forward waits for the whole update first, adding a LAN transfer per update; so does streaming
// on a driver that cannot stream.
#ifndef HILOSIM_ROLES_RELAY_ROLE_H
#define HILOSIM_ROLES_RELAY_ROLE_H

#include "sim/roles/role-port.h"

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace hilosim
{

enum class RelayForwarding
{
    kStream,          // forward each update's bytes as they arrive
    kStoreAndForward, // forward each update once it has arrived whole
};

/// "stream", "store_and_forward".
const char* RelayForwardingName(RelayForwarding forwarding);

struct RelayHooks
{
    /// An update was forwarded: message type, wire bytes, copies sent.
    std::function<void(uint32_t type, uint64_t wire_bytes, uint32_t copies)> forwarded;
};

class RelayRole
{
  public:
    /// `worker_peers`: the region's workers. `port` must outlive the role.
    RelayRole(RolePort* port, std::vector<uint32_t> worker_peers, RelayHooks hooks,
              RelayForwarding forwarding = RelayForwarding::kStream);

    /// A message's header arrived from `peer`. Streaming: an update starts to go out to every
    /// worker of the region now. A failed forward is returned as the transport's error; other
    /// message types are left to HandleMessage.
    hilo::Status HandleMessageStart(uint32_t peer, const RoleMessageHead& head);
    /// A whole message arrived from `peer`. An update that is not already streaming goes to every
    /// worker of the region now. A message of another type is forwarded nowhere and returned as
    /// NotSupported (the driver logs it and goes on); a failed forward is returned as the
    /// transport's error.
    hilo::Status HandleMessage(uint32_t peer, const RoleMessage& message);

  private:
    RolePort* m_port;
    std::vector<uint32_t> m_workers;
    RelayForwarding m_forwarding;
    RelayHooks m_hooks;
    std::map<uint32_t, uint64_t> m_streaming; // peer -> sequence of the update it is streaming
};

} // namespace hilosim

#endif // HILOSIM_ROLES_RELAY_ROLE_H
