// EventRouter: hands a node's transport events (a message, a connection, a close) to its role.
// Events that arrive before the role has started (a peer's clock reached the run's epoch first)
// are kept, in order, and handed over right after it starts, up to kMaxEarlyMessages messages and
// kMaxEarlyBytes bytes (peer-limits.h): a peer past that is disconnected. A message the role
// cannot use (its handler returns an error) costs the sender its connection; the role goes on.
// It knows nothing of sockets or event loops: the node gives it what to call for progress and
// for a disconnect, so that it runs as well under a fuzzer (tests/fuzz/fuzz-learner-session.cc).
#ifndef HILOSIM_DRIVERS_PROCESS_EVENT_ROUTER_H
#define HILOSIM_DRIVERS_PROCESS_EVENT_ROUTER_H

#include "sim/roles/role-port.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hilosim
{

// Transport events that arrive before this node's role started: kept and handed over, in order.
class EarlyMessages
{
  public:
    enum Kind
    {
        kMessage,
        kConnected,
        kClosed, // cleanly
        kFailed, // closed with an error
    };
    /// False (nothing kept) once kMaxEarlyMessages or kMaxEarlyBytes are held (peer-limits.h).
    bool Keep(uint32_t peer, const RoleMessage& m);
    void KeepEvent(uint32_t peer, Kind kind) { m_kept.push_back({kind, peer, 0, {}, 0, 0}); }
    /// Hands every kept event, in order, to `message`, `connected` or `closed(peer, error)`, and
    /// forgets them.
    void Replay(const std::function<void(uint32_t, const RoleMessage&)>& message,
                const std::function<void(uint32_t)>& connected,
                const std::function<void(uint32_t, bool)>& closed);
    /// Payload bytes kept now.
    uint64_t bytes() const { return m_bytes; }

  private:
    struct Kept
    {
        Kind kind;
        uint32_t peer;
        uint32_t type;
        std::string payload;
        uint64_t wire_bytes;
        uint64_t sequence;
    };
    std::vector<Kept> m_kept;
    uint64_t m_bytes{0}; // payload bytes in m_kept
};

// What a role does with the transport's events.
struct RoleHandlers
{
    std::function<bool()> started;
    /// Whether a message counts as progress for the stall watchdog (empty: none does; the role's
    /// hooks report training progress instead, so that chatter cannot keep a stalled node up).
    std::function<bool(uint32_t peer, const RoleMessage& m)> progress;
    std::function<hilo::Status(uint32_t peer, const RoleMessage& m)> message;
    std::function<void(uint32_t peer)> connected;
    std::function<void(uint32_t peer, bool error)> closed;
};

class EventRouter
{
  public:
    /// `progress`: the node moved on (the stall watchdog's). `disconnect`: close `peer`'s
    /// connection, saying why (the transport then reports the close through OnClosed).
    EventRouter(std::function<void()> progress,
                std::function<void(uint32_t peer, const std::string& why)> disconnect);
    void SetHandlers(RoleHandlers handlers) { m_role = std::move(handlers); }

    void OnMessage(uint32_t peer, const RoleMessage& m);
    void OnConnected(uint32_t peer);
    void OnClosed(uint32_t peer, bool error);
    /// Hands over what arrived before the role started.
    void RoleStarted();
    /// Payload bytes kept for the role until it starts.
    uint64_t early_bytes() const { return m_early.bytes(); }

  private:
    void Handle(uint32_t peer, const RoleMessage& m);

    std::function<void()> m_progress;
    std::function<void(uint32_t, const std::string&)> m_disconnect;
    RoleHandlers m_role;
    EarlyMessages m_early;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_EVENT_ROUTER_H
