// RolePort: everything a learner, worker or relay role needs from the world it runs in, and
// nothing more (the shape of leveldb's `Env`): a clock in modelled seconds with timers, a
// message transport addressed by peer id, and a way to end the run. Two drivers implement it:
// ns-3 applications (simulated time, ns-3 TCP; sim/drivers/ns3/) and real processes (a steady
// clock, kernel TCP on Boost.Asio; sim/drivers/process/). The roles never know which one runs them.
#ifndef HILOSIM_ROLES_ROLE_PORT_H
#define HILOSIM_ROLES_ROLE_PORT_H

#include "hilo/core/status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hilosim
{

/// A message as a role receives it. `payload` is valid only during the call that delivers it.
struct RoleMessage
{
    uint32_t type{0};         // role message type (role-messages.h)
    std::string_view payload; // the real bytes, exactly as sent
    uint64_t wire_bytes{0};   // modelled size on the wire (>= payload.size())
    uint64_t sequence{0};     // index of this message on its connection and direction, from 0
};

/// A message whose header has arrived and whose bytes are still coming (for roles that forward
/// while receiving, like a streaming relay).
struct RoleMessageHead
{
    uint32_t type{0};
    uint64_t payload_bytes{0}; // real bytes to come
    uint64_t wire_bytes{0};    // modelled size on the wire
    uint64_t sequence{0};      // the sequence the whole message will be delivered with
};

/// The modelled GPU phases whose time a role waits out. The process driver records, per phase,
/// how much longer the real computation took than the modelled time (its "overrun").
enum class ComputePhase
{
    kRollout,   // worker: sampling trajectories
    kTrain,     // learner: the training step (gradient)
    kEncode,    // learner: compress + its own decode and apply
    kApply,     // worker: decode + replay (or load) of one update
    kCatchUp,   // worker: snapshot restore + replay of ring updates
    kTransport, // not a GPU phase: a timer of the protocol itself (waits, backoff)
};

/// "rollout", "train", "encode", "apply", "catch_up", "transport".
const char* ComputePhaseName(ComputePhase phase);

class RolePort
{
  public:
    virtual ~RolePort() = default;

    /// Modelled seconds since the run started (simulated time, or steady-clock time).
    virtual double Now() const = 0;
    /// True when modelled time is real time (a process): real computation then takes modelled
    /// time, and a phase whose real computation outlasts its modelled time overruns.
    virtual bool RealTime() const = 0;

    /// Calls `fn` once `modelled_s` seconds of phase `phase` have passed, counted from the moment
    /// the role started the phase. `spent_s` is the real wall time the role already spent on the
    /// phase's real computation before this call: a simulator ignores it (real computation takes
    /// no simulated time); a process waits only for the rest, max(0, modelled_s - spent_s), and
    /// records max(0, spent_s - modelled_s) as the phase's overrun.
    virtual void After(double modelled_s, ComputePhase phase, double spent_s,
                       std::function<void()> fn) = 0;

    /// Queues a framed message to `peer`: `payload` real bytes standing for `wire_bytes` on the
    /// wire. Messages to one peer arrive in order. InvalidArgument for a bad size or type;
    /// messages to a peer that is not connected (yet, or any more) are the driver's to hold or
    /// drop as its header says.
    virtual hilo::Status Send(uint32_t peer, uint32_t type,
                              std::shared_ptr<const std::string> payload, uint64_t wire_bytes) = 0;

    /// Forwards the message now arriving from `from_peer` (announced with `sequence`) to each of
    /// `to_peers` while its bytes arrive: each gets one whole framed message, identical to a Send
    /// of the complete one, whose bytes leave as they come in. Only valid while the message is
    /// arriving. NotSupported from a driver that cannot stream (the default): the role then
    /// sends the whole message on arrival instead.
    virtual hilo::Status Forward(uint32_t from_peer, uint64_t sequence,
                                 const std::vector<uint32_t>& to_peers);

    /// The role has failed (its failure() says why): end the run.
    virtual void Stop() = 0;

    /// Opens the connection to `peer` again, after the role heard it close (HandlePeerClosed):
    /// only for peers this node connects to (a worker to its learner and relay, a relay to the
    /// learner). The attempt's outcome arrives as HandlePeerConnected or HandlePeerClosed. The
    /// default does nothing: for a driver whose transport reconnects by itself.
    virtual void Reconnect(uint32_t peer) { (void) peer; }
};

} // namespace hilosim

#endif // HILOSIM_ROLES_ROLE_PORT_H
