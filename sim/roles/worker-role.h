// WorkerRole: what a rollout worker does, whoever runs it. Samples trajectories from its own hilo
// Replica (real sampling, modelled GPU time), sends them to the learner, and applies every update
// it receives in version order (modelled decode + replay or load time, then the real Replica::Apply
// with its hash check). A rejected update (corrupt, gap, hash mismatch) starts a resync: the worker
// asks the learner for a catch-up (ring, or snapshot + ring) and holds later updates until it is
// back in step. A hash mismatch means the worker's state can no longer be trusted, so that
// catch-up starts from a snapshot; so does the first one of a worker that (re)starts empty, which
// also rolls out nothing before the learner's welcome. A welcome from the learner (after a restart
// or reconnect) sets the next round to roll out and, when the worker is behind, starts the same
// catch-up (again, if one was pending: the closed connection may have lost it). When a connection
// ends, the worker dials the peer again after a backoff (reconnect-backoff.h), unless the
// driver's transport redials by itself.
// Round s (the batch for learner step s) may start once the replica holds version >= s-1-k, with k
// the arm's max staleness: k = 0 is synchronous on-policy.
// The worker has one modelled GPU: a rollout, the decode + replay of an update and a catch-up
// never run at the same time. When the GPU comes free, a pending catch-up goes first, then
// queued updates (so the next round samples the newest version held), then the next round. An
// update that arrives during a rollout therefore waits for it; its ready time says so.
#ifndef HILOSIM_ROLES_WORKER_ROLE_H
#define HILOSIM_ROLES_WORKER_ROLE_H

#include "sim/roles/arm-context.h"
#include "sim/roles/reconnect-backoff.h"
#include "sim/roles/role-events.h"
#include "sim/roles/role-port.h"

#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace hilosim
{

/// Where the worker's measurable events go (any may be empty).
struct WorkerHooks
{
    std::function<void(const RolloutEvent&)> rollout_done;
    /// A whole update message arrived (worker, position in arrival order from 1).
    std::function<void(uint32_t worker, uint64_t position)> update_received;
    std::function<void(const ApplyEvent&)> applied;
    std::function<void(uint32_t worker, uint64_t version)> hash_mismatch;
    /// The worker asked the learner for a catch-up from this version.
    std::function<void(uint32_t worker, uint64_t from_version)> resync;
    /// A catch-up was applied (or failed part way).
    std::function<void(const CatchUpEvent&)> caught_up;
    /// The worker announced the last version to the learner (kDone; announce_done), after its
    /// replica reached it with the hash checked.
    std::function<void(uint32_t worker, uint64_t version)> done_sent;
};

struct WorkerRoleOptions
{
    uint64_t corrupt_version{0}; // test hook: flip a byte of this version's update on arrival
    bool announce_done{false};   // send kDone to the learner on reaching the last version
    bool rejoining{false};       // starts without the run's state (restart, late join): waits for
                                 // the learner's welcome; its first catch-up starts from a snapshot
};

class WorkerRole
{
  public:
    /// `worker`: this worker's index; `learner_peer`: the learner's peer id. `port` must outlive
    /// the role.
    WorkerRole(std::shared_ptr<ArmContext> context, RolePort* port, uint32_t worker,
               uint32_t learner_peer, WorkerRoleOptions options, WorkerHooks hooks);
    ~WorkerRole();

    /// Builds the replica at version 0 and starts the first round.
    void Start();
    /// A message from `peer`. A message this role cannot use (corrupt, of an unknown type, or
    /// from a peer other than the learner, or other than an update from a relay) is returned as
    /// an error and changes nothing: the driver closes that peer's connection.
    hilo::Status HandleMessage(uint32_t peer, const RoleMessage& message);
    /// The connection to `peer` is up (first time or again).
    void HandlePeerConnected(uint32_t peer);
    /// The connection to `peer` ended (`error`: a TCP error or a corrupt stream, else the peer
    /// closed it). The worker reconnects after a backoff (RolePort::Reconnect).
    void HandlePeerClosed(uint32_t peer, bool error);

    /// Fault injection: the next update this worker replays yields a state that differs from
    /// the learner's (hilo::Replica::DivergeNextReplay).
    void DivergeNextReplay();

    void Fail(const hilo::Status& status);
    const hilo::Status& failure() const { return m_failure; }
    /// REQUIRES: Start() succeeded.
    const hilo::Replica& replica() const { return *m_replica; }
    bool started() const { return m_replica != nullptr; }
    uint32_t worker() const { return m_worker; }

  private:
    /// Starts the next job on the GPU if it is free (see the class comment for the order).
    void NextGpuWork();
    bool GpuBusy() const { return m_rollingOut || m_applying || m_catchingUp; }
    void MaybeStartRound();
    void FinishRollout(uint64_t round, uint64_t version, std::shared_ptr<const std::string> bytes,
                       RolloutEvent event);
    /// REQUIRES: the GPU is free, the queue is not empty and no resync is under way.
    void StartApply();
    void RequestResync(bool with_snapshot);
    hilo::Status HandleCatchUp(std::string_view payload, double received_s);
    /// REQUIRES: the GPU is free and a catch-up is pending.
    void StartCatchUp();
    void FinishCatchUp(const hilo::CatchUpPlan& plan, double received_s, uint64_t welcomes);
    void VersionReached();
    double ApplySeconds();
    /// models::RolloutSeconds for this worker's GPU node, remembered for the last shape asked
    /// (a pure function of the shape here: every other input is fixed for the worker's life).
    hilo::StatusOr<double> RolloutSeconds(int64_t sequences, int64_t prompt_tokens,
                                          int64_t gen_tokens);

    std::shared_ptr<ArmContext> m_context;
    RolePort* m_port;
    uint32_t m_worker;
    uint32_t m_learnerPeer;
    WorkerRoleOptions m_options;
    WorkerHooks m_hooks;

    std::unique_ptr<hilo::Replica> m_replica;
    uint64_t m_nextRound{1};
    bool m_rollingOut{false};
    uint64_t m_rollingRound{0}; // the round being rolled out (m_rollingOut)
    struct Queued
    {
        std::string frame;
        double received_s;
    };
    std::deque<Queued> m_queue; // updates waiting for the GPU
    struct PendingCatchUp
    {
        hilo::CatchUpPlan plan;
        double received_s;
        uint64_t welcomes; // m_welcomes when it arrived
    };
    std::optional<PendingCatchUp> m_catchUp; // arrived, waiting for the GPU
    bool m_applying{false};                  // the GPU is decoding + replaying an update
    bool m_catchingUp{false};                // the GPU is restoring a catch-up
    bool m_resyncing{false};                 // asked for a catch-up; updates wait for it
    bool m_needSnapshot{false};              // the next catch-up must start from a snapshot
    // A learner behind this worker (it restored an older checkpoint): the catch-up asked for
    // starts at its version, and the snapshot replaces the later versions this worker holds.
    std::optional<uint64_t> m_rollbackTo;
    uint64_t m_welcomes{0};              // welcomes received, the latest one's learner version:
    uint64_t m_welcomeLearnerVersion{0}; // a catch-up from before it may be from an older learner
    bool m_awaitWelcome{false};          // rejoining: no rollout before the learner's welcome
    std::map<uint32_t, ReconnectBackoff> m_backoff; // by peer
    bool m_doneSent{false};
    hilo::Status m_failure;
    // Modelled GPU times, computed once: a simulation asks for the same ones every step.
    struct RolloutShape
    {
        int64_t sequences{-1};
        int64_t prompt_tokens{-1};
        int64_t gen_tokens{-1};
        double seconds{0};
    };
    RolloutShape m_rolloutTime;
    std::optional<double> m_applySeconds;
};

} // namespace hilosim

#endif // HILOSIM_ROLES_WORKER_ROLE_H
