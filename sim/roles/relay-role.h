// RelayRole: the relay host of a region (the `relay` topology), whoever runs it. Receives each
// update once from the learner over the region's WAN link and forwards the same bytes to every
// worker of its region over their LAN links, so the WAN carries one copy per region instead of one
// per worker.
//
// Faults: a forward to a worker whose connection has ended is dropped by the transport; when that
// worker connects again, the relay sends it the latest update it forwarded, so that a worker that
// missed versions sees the gap and catches up from the learner. When the connection to the
// learner ends, the relay dials it again after a backoff (the learner then sends the latest update
// again, for the same reason).
#ifndef HILOSIM_ROLES_RELAY_ROLE_H
#define HILOSIM_ROLES_RELAY_ROLE_H

#include "sim/roles/reconnect-backoff.h"
#include "sim/roles/role-port.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace hilosim
{

struct RelayRoleOptions
{
    static constexpr uint32_t kNoLearner = 0xFFFFFFFFu;
    /// The learner's peer id: the relay dials it again when its connection ends.
    uint32_t learner_peer{kNoLearner};
    /// Workers absent at the start (late joiners): nothing is forwarded to them before they
    /// connect for the first time.
    std::vector<uint32_t> late_workers;
};

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
              RelayRoleOptions options = {});

    /// Forwards an update to every worker of the region (but late joiners that have not connected
    /// yet). A message of another type is forwarded
    /// nowhere and returned as NotSupported (the driver logs it and goes on); a failed forward is
    /// returned as the transport's error.
    hilo::Status HandleMessage(uint32_t peer, const RoleMessage& message);
    /// `peer` connected: a worker connecting again is sent the latest update.
    void HandlePeerConnected(uint32_t peer);
    /// `peer`'s connection ended: the learner is dialled again after a backoff.
    void HandlePeerClosed(uint32_t peer, bool error);

  private:
    RolePort* m_port;
    std::vector<uint32_t> m_workers;
    RelayHooks m_hooks;
    uint32_t m_learner;
    std::set<uint32_t> m_seen;   // workers that connected before
    std::set<uint32_t> m_absent; // late joiners not connected yet
    std::shared_ptr<const std::string> m_latest;
    uint64_t m_latestWire{0};
    ReconnectBackoff m_backoff;
};

} // namespace hilosim

#endif // HILOSIM_ROLES_RELAY_ROLE_H
