// Publisher: the learner side of HiLo. Holds the learner's state, the sync strategy (compressor and
// error-feedback residual inside), a ring of the last K update frames and a snapshot every S
// versions, so that any replica that fell behind can catch up. A checkpoint of all of it lets a
// restarted learner continue bit-identically (publisher-checkpoint.cc).
#ifndef HILO_SYNC_PUBLISHER_H
#define HILO_SYNC_PUBLISHER_H

#include "hilo/sync/drift.h"
#include "hilo/sync/sync-strategy.h"
#include "hilo/wire/framing.h"

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

struct PublisherOptions
{
    size_t ring_capacity{64};       // update frames kept for catch-up
    uint64_t snapshot_interval{32}; // versions between snapshots; <= ring_capacity so the ring
                                    // always reaches back to the latest snapshot
    uint64_t max_frame_body{kDefaultMaxFrameBody}; // largest frame body to send; 1..kMaxFrameBody
};

/// One published version: the frame every worker receives plus learner-local facts.
struct PublishedUpdate
{
    std::string frame; // what goes on the wire (framed Update)
    uint64_t version{0};
    int64_t payload_bytes{0};             // compressor payload only
    uint64_t state_hash{0};               // hash the replicas must reach
    std::vector<int64_t> kept_per_matrix; // local: per-matrix rank or entries (Encoded)
    LearnerStepTimes times;
};

/// What a replica at some version needs to reach the publisher's current version.
struct CatchUpPlan
{
    std::string snapshot_frame;             // empty when the ring alone suffices
    std::vector<std::string> update_frames; // in version order
};

class Publisher
{
  public:
    /// REQUIRES: initial.theta.size() == layout.numel(). kInvalidArgument when the options are
    /// out of range or when a snapshot of this adapter cannot fit in one frame of
    /// options.max_frame_body bytes (snapshots are never split).
    static StatusOr<std::unique_ptr<Publisher>> Create(const SyncSpec& spec,
                                                       const AdapterLayout& layout,
                                                       const OptimizerConfig& optimizer,
                                                       const AdapterState& initial,
                                                       PublisherOptions options = {});

    /// Compresses (per strategy), applies to the learner's own state and publishes version+1.
    /// On error the learner's state is unchanged only if the error came before the apply
    /// (invalid gradient size, a NaN or infinite gradient value: kInvalidArgument; budget);
    /// encode errors never leave a half-applied state. An optimizer step that overflows to a
    /// non-finite value (kCorruption) is final, like an oversized frame below.
    /// An update whose frame would exceed max_frame_body (a payload near the 2 GiB frame limit)
    /// is refused after the apply: the learner has then advanced past what it published, so that
    /// error is final and every later Step, CatchUpFrom and LatestSnapshotFrame returns it.
    StatusOr<PublishedUpdate> Step(const std::vector<float>& grad);

    uint64_t version() const { return m_state.train.adapter.version; }
    uint64_t config_hash() const { return m_config_hash; }
    const AdapterLayout& layout() const { return m_layout; }
    const SyncStrategy& strategy() const { return *m_strategy; }
    /// The parameters and optimizer state the learner trains with: its gradient for the next
    /// Step must be taken at train_state().adapter (gradient_point()). For primal these are the
    /// shared adapter the replicas hold, and the optimizer state lives in master_state().
    const ReplicatedState& train_state() const { return m_state.train; }
    /// Where the learner computes the gradient of the next Step: train_state().adapter for every
    /// strategy (full, hilo, delta: the learner's own parameters; primal: the shared adapter,
    /// bit-identical to replica_view()).
    const AdapterState& gradient_point() const { return m_state.train.adapter; }
    /// What every in-sync replica holds at version().
    const ReplicatedState& replica_view() const { return m_strategy->ReplicaView(m_state); }
    /// primal: the master copy the optimizer advances (null for the other strategies).
    const ReplicatedState* master_state() const { return m_strategy->Master(m_state); }
    /// Learner parameters vs replica parameters (zero for full-fp32, hilo and primal).
    DriftStats drift() const;

    /// Frames that bring a replica at `from_version` to version(): the ring alone when it
    /// reaches back far enough, else the latest snapshot and the ring after it. With
    /// `with_snapshot` the plan always starts from the latest snapshot (a replica whose state
    /// cannot be trusted, or that has none). kNotFound when the ring and the latest snapshot
    /// cannot cover it (cannot happen with valid options).
    StatusOr<CatchUpPlan> CatchUpFrom(uint64_t from_version, bool with_snapshot = false) const;
    /// The latest snapshot, framed (version <= version()).
    StatusOr<std::string> LatestSnapshotFrame() const;
    uint64_t latest_snapshot_version() const { return m_snapshot.adapter.version; }

    /// Everything a restarted learner needs to continue exactly where this one is: its state,
    /// the strategy's learner-local state (error-feedback residual, compressor warm starts and
    /// stream positions), the ring and the latest snapshot, under a CRC-32C.
    std::string Checkpoint() const;
    /// A publisher continuing from `checkpoint`, built from the spec, layout, optimizer and options
    /// the checkpointed one was built from: its Step calls give the frames, bit for bit, that the
    /// checkpointed publisher's would have. kCorruption for damaged or truncated bytes,
    /// kConfigMismatch for a checkpoint of another configuration, kInvalidArgument for other
    /// options.
    static StatusOr<std::unique_ptr<Publisher>> Restore(const SyncSpec& spec,
                                                        const AdapterLayout& layout,
                                                        const OptimizerConfig& optimizer,
                                                        std::string_view checkpoint,
                                                        PublisherOptions options = {});

  private:
    Publisher(const AdapterLayout& layout, const OptimizerConfig& optimizer,
              std::unique_ptr<SyncStrategy> strategy, PublisherOptions options);

    AdapterLayout m_layout;
    OptimizerConfig m_optimizer;
    std::unique_ptr<SyncStrategy> m_strategy;
    PublisherOptions m_options;
    uint64_t m_config_hash{0};
    LearnerState m_state;
    std::deque<std::string> m_ring; // frames for versions (version() - size() + 1) .. version()
    ReplicatedState m_snapshot;     // replica view at latest_snapshot_version()
    Status m_failed;                // non-ok once an applied step could not be framed
};

} // namespace hilo

#endif // HILO_SYNC_PUBLISHER_H
