// RelayRole: the relay host of a region (the `relay` topology), whoever runs it. Receives each
// update once from the learner over the region's WAN link and forwards the same bytes to every
// worker of its region over their LAN links, so the WAN carries one copy per region instead of one
// per worker. Streaming (the default) forwards an update while it arrives (RolePort::Forward):
// a worker's copy completes one LAN delay after the relay's, as behind a router. Store and
// forward waits for the whole update first, adding a LAN transfer per update; so does streaming
// on a driver that cannot stream.
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
#include <map>
#include <memory>
#include <set>
#include <string>
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

struct RelayRoleOptions
{
    static constexpr uint32_t kNoLearner = 0xFFFFFFFFu;
    /// The learner's peer id: the relay dials it again when its connection ends.
    uint32_t learner_peer{kNoLearner};
    /// Workers absent at the start (late joiners): nothing is forwarded to them before they
    /// connect for the first time.
    std::vector<uint32_t> late_workers;
    /// A relay started again mid-run (its process was killed): every worker that connects is one
    /// connecting again and is sent the latest update once there is one.
    bool restarted{false};
    /// The run's last version (its steps): the relay reads the version of each update it
    /// forwards, so that it knows whether it holds the last one (HoldsLastVersion); 0: not read.
    uint64_t last_version{0};
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
              RelayForwarding forwarding = RelayForwarding::kStream, RelayRoleOptions options = {});

    /// A message's header arrived from `peer`. Streaming: an update starts to go out to every
    /// present worker of the region now. A failed forward is returned as the transport's error;
    /// other message types are left to HandleMessage.
    hilo::Status HandleMessageStart(uint32_t peer, const RoleMessageHead& head);
    /// A whole message arrived from `peer`. An update that is not already streaming goes to every
    /// present worker of the region now (not to late joiners that have not connected yet). A
    /// message of another type is forwarded nowhere and returned as NotSupported (the driver logs
    /// it and goes on, or closes that peer); an update from a peer other than the learner (when
    /// options name it) is forwarded nowhere and returned as InvalidArgument; a failed forward
    /// is returned as the transport's error.
    hilo::Status HandleMessage(uint32_t peer, const RoleMessage& message);
    /// `peer` connected: a worker connecting again is sent the latest update.
    void HandlePeerConnected(uint32_t peer);
    /// `peer`'s connection ended: the learner is dialled again after a backoff.
    void HandlePeerClosed(uint32_t peer, bool error);

    /// The version of the latest update forwarded (0: none yet, or versions not read).
    uint64_t latest_version() const { return m_latestVersion; }
    /// True once the update of options' last_version went through: a learner gone after it has
    /// ended the run; one gone before it is only away (killed, to be restarted) and is waited
    /// for, whether or not any worker is connected.
    bool HoldsLastVersion() const { return m_lastVersion != 0 && m_latestVersion >= m_lastVersion; }

  private:
    std::vector<uint32_t> PresentWorkers() const;
    /// Ok when `peer` may send updates: the learner, or anyone when options name no learner.
    hilo::Status FromLearner(uint32_t peer) const;

    RolePort* m_port;
    std::vector<uint32_t> m_workers;
    RelayForwarding m_forwarding;
    RelayHooks m_hooks;
    std::map<uint32_t, uint64_t> m_streaming; // peer -> sequence of the update it is streaming
    uint32_t m_learner;
    std::set<uint32_t> m_seen;   // workers that connected before
    std::set<uint32_t> m_absent; // late joiners not connected yet
    std::shared_ptr<const std::string> m_latest;
    uint64_t m_latestWire{0};
    uint64_t m_latestVersion{0};
    uint64_t m_lastVersion{0};
    ReconnectBackoff m_backoff;
};

} // namespace hilosim

#endif // HILOSIM_ROLES_RELAY_ROLE_H
