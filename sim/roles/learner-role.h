// LearnerRole: what the learner does, whoever runs it. Collects one trajectory batch per member
// worker and round, trains on them (real LibTorch gradient, modelled GPU time), publishes the next
// version through a hilo Publisher (real encode, modelled encode time) and sends the framed update
// to every update peer (the member workers, or the relays that fan out). Serves catch-up requests
// from its ring and snapshots, and welcomes a worker that (re)connects after the run has moved on
// with the learner's version and the round the learner expects from it next.
//
// Arrival: a trajectory message is checked where it arrives (HandleMessage): its envelope, its
// round, and its batch against the workload (sim/roles/trajectory-check.h). A batch that fails
// is an error for the driver, which closes that peer; nothing of it is kept. A batch that passes
// but makes the gradient non-finite is dropped at training (sim/roles/finite-gradient.h) and the
// step is taken again without it: no batch a peer sends can stop the learner.
//
// Deadline: with mode.round_timeout (ArmContext::round_timeout_s > 0), a round opens when the
// learner is ready for it (Start, then each publish) and a member whose batch has not arrived
// round_timeout_s later is dropped from that round (PublishEvent::members_dropped); the round
// trains on the batches it has (on the first to arrive when it has none). A restored learner
// thus waits only for the members that come back within the timeout.
//
// Membership: the learner waits for a round's batch from every member. The members are the
// workers expected from the start; a worker whose connection ends stops being one (the learner
// does not wait for the dead), and one that connects (again, or for the first time as a late
// joiner) becomes one. A relay that reconnects is sent the latest update again, so that workers
// behind it that missed versions see the gap and catch up.
//
// Restart: with a checkpoint path the learner writes its publisher (hilo Publisher::Checkpoint),
// its members and the version's publish record to that file as it publishes each version, before
// the update leaves; a learner started with `restore` continues from the file, bit-identically,
// reports the restored version's publish (hooks.restored) and welcomes every worker that
// reconnects. A step that was trained but not yet published when the learner stopped is lost and
// trained again from new batches: no worker can have seen it.
#ifndef HILOSIM_ROLES_LEARNER_ROLE_H
#define HILOSIM_ROLES_LEARNER_ROLE_H

#include "sim/roles/arm-context.h"
#include "sim/roles/durable-file.h"
#include "sim/roles/role-events.h"
#include "sim/roles/role-port.h"

#include "hilo/sync/publisher.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace hilosim
{

/// Why the learner went on without a member's batch for a round.
enum class DropReason
{
    kDeadline,          // no batch by mode.round_timeout after the round opened
    kNonFiniteGradient, // its batch made the gradient non-finite: the step was retaken without it
};

/// Where the learner's measurable events go (any may be empty).
struct LearnerHooks
{
    std::function<void(uint32_t worker, uint64_t round, uint64_t wire_bytes)> trajectories;
    std::function<void(const PublishEvent&)> published;
    std::function<void(const EvalEvent&)> evaluated;
    std::function<void(uint32_t worker, uint64_t from_version)> resync_served;
    /// A worker announced it holds the last version (kDone), with its state hash.
    std::function<void(uint32_t worker, uint64_t version, uint64_t state_hash)> worker_done;
    /// Start restored the checkpoint: the publish of the version it holds, as `published`
    /// reported it before the learner stopped (a driver whose log may have lost that report, the
    /// learner having stopped between writing the checkpoint and reporting, records it now).
    std::function<void(const PublishEvent&)> restored;
    /// `worker` was dropped from `round` (`why` says what happened). It stays a member and takes
    /// part again from the next round on; a batch of its for a round already trained is ignored.
    std::function<void(uint32_t worker, uint64_t round, DropReason reason, const std::string& why)>
        member_dropped;
    /// Something the operator should know about the checkpoint that did not stop the learner:
    /// a write that failed (a full disk: training goes on, a restart would restore the last
    /// version written), or a latest generation that was unusable at restore (the previous one
    /// was restored).
    std::function<void(const std::string& line)> checkpoint_note;
    /// A worker repeated a resync request that was already answered on its connection at this
    /// version (dropped unanswered): called at the 1st, 10th, 100th, ... repeat, with the count,
    /// so that a flood shows in the log without flooding it.
    std::function<void(uint32_t worker, uint64_t repeats)> resync_repeated;
};

struct LearnerRoleOptions
{
    /// The workers the learner waits for from the start; absent: every worker of the arm.
    std::optional<std::vector<uint32_t>> members;
    /// Where to write the learner's checkpoint after every version (sim/roles/durable-file.h:
    /// fsync'd, two generations, `checkpoint_path` and `checkpoint_path.prev`); empty: none.
    std::string checkpoint_path;
    /// Start from the checkpoint at checkpoint_path instead of version 0 (from its previous
    /// generation when the latest is missing, torn or corrupt).
    bool restore{false};
    /// How the checkpoint is written; empty: WriteDurably. (A seam for tests of a full disk.)
    FileSink write_file;
};

class LearnerRole
{
  public:
    /// `update_peers`: the peers every update goes to (worker ids, or relay ids in a relay
    /// topology). `port` must outlive the role.
    LearnerRole(std::shared_ptr<ArmContext> context, RolePort* port,
                std::vector<uint32_t> update_peers, hilo::PublisherOptions options,
                LearnerHooks hooks, LearnerRoleOptions role_options = {});
    ~LearnerRole();

    /// Builds the publisher (or restores it from the checkpoint) and evaluates version 0. On error
    /// the role has failed (failure()).
    void Start();

    /// A message from `peer`. A message this role cannot use is returned as an error and changes
    /// nothing: the driver closes that peer's connection and the learner goes on. Unusable are:
    /// a corrupt message or one of an unknown type; trajectories, a resync request or a done
    /// announcement from a peer that is not a member worker now; trajectories for a round past
    /// the newest one a worker can have sampled (version + 1 + max staleness, at most the last
    /// step); a resync request for a version ahead of the learner's. A resync request is served
    /// once per connection and learner version (and once more to escalate to a snapshot): a
    /// repeat is dropped without an answer (resyncs_repeated()).
    hilo::Status HandleMessage(uint32_t peer, const RoleMessage& message);
    /// `peer` connected and is a member from now on. A worker is sent a welcome (the next round
    /// the learner needs from it and its version) unless it is one of the members expected from
    /// the start connecting for the first time at version 0. A relay that connects again is sent
    /// the latest update.
    void HandlePeerConnected(uint32_t peer);
    /// `peer`'s connection ended (error: a TCP error or a corrupt stream): it is no longer a
    /// member, its done announcement (if any) is forgotten, and a round that waited only for it
    /// goes ahead.
    void HandlePeerClosed(uint32_t peer, bool error);

    /// Records the first runtime failure and asks the driver to stop.
    void Fail(const hilo::Status& status);
    const hilo::Status& failure() const { return m_failure; }
    /// REQUIRES: Start() succeeded.
    const hilo::Publisher& publisher() const { return *m_publisher; }
    bool started() const { return m_publisher != nullptr; }
    /// Workers that announced the last version, and whether their hash matched the learner's.
    const std::map<uint32_t, bool>& done_workers() const { return m_done; }
    /// The workers the learner waits for, ascending.
    const std::set<uint32_t>& members() const { return m_members; }
    /// Resync requests dropped as repeats of one already served (see HandleMessage).
    uint64_t resyncs_repeated() const { return m_resyncsRepeated; }
    /// The members whose batch for the next round has not arrived (empty when training or done).
    std::vector<uint32_t> MissingBatches() const;
    /// Whether the learner evaluates right after publishing `version` (the last one, and every
    /// eval_every).
    bool EvaluatesAt(uint64_t version) const;
    /// Evaluates the replica view now and reports it (hooks.evaluated). REQUIRES: started().
    void Evaluate();

  private:
    void MaybeTrain();
    /// Opens round version + 1: forgets the last round's drops and starts its deadline.
    void OpenRound();
    void Drop(uint32_t worker, uint64_t round, DropReason reason, const std::string& why);
    void FinishTraining();
    void Broadcast();
    /// The oldest round the learner still needs from `worker`.
    uint64_t NextRoundFor(uint32_t worker) const;
    hilo::Status WriteCheckpoint() const;
    hilo::Status ReadCheckpoint();
    hilo::Status RestoreFrom(const std::string& bytes);
    bool IsWorker(uint32_t peer) const { return peer < m_context->workers; }
    /// The error for `what` (a message kind) from `peer`, which is not a member worker.
    hilo::Status NotAMember(uint32_t peer, const std::string& what) const;

    std::shared_ptr<ArmContext> m_context;
    RolePort* m_port;
    std::vector<uint32_t> m_updatePeers;
    hilo::PublisherOptions m_options;
    LearnerHooks m_hooks;
    LearnerRoleOptions m_roleOptions;

    std::unique_ptr<hilo::Publisher> m_publisher;
    std::map<uint64_t, std::map<uint32_t, std::string>> m_batches; // round -> worker -> batch
    std::set<uint32_t> m_seen;                                     // peers that ever connected
    std::set<uint32_t> m_members;                                  // workers waited for
    std::set<uint32_t> m_initial;                                  // members expected at start
    std::map<uint32_t, bool> m_done;                               // worker -> hash matched
    bool m_busy{false};
    std::set<uint32_t> m_dropped; // members the open round goes without
    bool m_deadlinePassed{false}; // the open round's deadline has passed
    uint64_t m_roundOpened{0};    // counts OpenRound calls: a timer of an older round is stale
    std::vector<float> m_grad;
    PublishEvent m_pending;                             // the version being produced
    std::shared_ptr<const std::string> m_frame;         // its framed update
    std::shared_ptr<const std::string> m_lastBroadcast; // the latest update sent
    uint64_t m_lastBroadcastWire{0};
    uint64_t m_checkpointed{0}; // the last version whose checkpoint was written
    struct ServedResync
    {
        uint64_t version{0}; // the learner's version when it was served
        bool with_snapshot{false};
        uint64_t repeats{0}; // requests dropped since, on this connection at this version
    };
    std::map<uint32_t, ServedResync> m_resyncServed; // worker -> the last catch-up it was sent
    uint64_t m_resyncsRepeated{0};
    hilo::Status m_failure;
};

} // namespace hilosim

#endif // HILOSIM_ROLES_LEARNER_ROLE_H
