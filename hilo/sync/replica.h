// Replica: the worker side of HiLo. Applies framed updates strictly in version order; checks
// framing, CRC, format, config hash, strategy and versions before touching state; decodes and
// replays into scratch buffers and commits only when the state hash matches. Every failure is a
// typed Status and leaves the replica's state exactly as it was.
#ifndef HILO_SYNC_REPLICA_H
#define HILO_SYNC_REPLICA_H

#include "hilo/sync/replica-group.h"
#include "hilo/sync/sync-strategy.h"
#include "hilo/wire/framing.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

struct ReplicaOptions
{
    uint64_t max_frame_body{kDefaultMaxFrameBody}; // frames declaring more are corrupt
};

/// Counters a worker reports.
struct ReplicaStats
{
    uint64_t applied{0};
    uint64_t rejected{0}; // every non-ok Apply
    uint64_t hash_mismatches{0};
    uint64_t restores{0}; // snapshots restored (resyncs)
};

class Replica
{
  public:
    /// A replica at version 0 holding `initial` (the seeded initial adapter every side derives).
    static StatusOr<std::unique_ptr<Replica>> Create(const SyncSpec& spec,
                                                     const AdapterLayout& layout,
                                                     const OptimizerConfig& optimizer,
                                                     const AdapterState& initial,
                                                     ReplicaOptions options = {});
    /// A replica of `group` at version 0 (hilo/sync/replica-group.h): its states are shared with
    /// the group's other replicas wherever they are bit-identical by construction.
    static std::unique_ptr<Replica> Create(std::shared_ptr<ReplicaGroup> group,
                                           ReplicaOptions options = {});

    /// Applies one framed Update. Errors: kCorruption (frame, CRC, parse, payload), kNotSupported
    /// (format), kConfigMismatch (config hash, strategy, compressor), kStale (version already
    /// held), kGap (base version ahead), kHashMismatch (state after replay differs).
    Status Apply(std::string_view frame);

    /// Replaces the state with a framed snapshot (any version, for resync or late join).
    Status Restore(std::string_view snapshot_frame);

    /// Restore (if `snapshot_frame` is non-empty), then apply `update_frames` in order; update
    /// frames at or below the reached version are skipped. Stops at the first error; the replica
    /// then holds the last version it reached, never a partial one.
    Status CatchUp(std::string_view snapshot_frame, const std::vector<std::string>& update_frames);

    /// Fault injection: the next Apply that replays an update perturbs the replayed state (the
    /// lowest bit of one parameter) before its hash check, as a replay that diverged from the
    /// learner's would. The check then fails (kHashMismatch) and the state stays as it was.
    void DivergeNextReplay() { m_diverge_next = true; }

    uint64_t version() const { return m_state->adapter.version; }
    const ReplicatedState& state() const { return *m_state; }
    uint64_t config_hash() const { return m_config_hash; }
    const ReplicaStats& stats() const { return m_stats; }
    const SyncStrategy& strategy() const { return *m_strategy; }

  private:
    Replica(const AdapterLayout& layout, const OptimizerConfig& optimizer,
            std::shared_ptr<SyncStrategy> strategy, ReplicaOptions options);
    Status ApplyChecked(std::string_view frame);
    Status RestoreChecked(std::string_view snapshot_frame);

    AdapterLayout m_layout;
    OptimizerConfig m_optimizer;
    std::shared_ptr<SyncStrategy> m_strategy; // the group's, if any
    ReplicaOptions m_options;
    uint64_t m_config_hash{0};
    // Immutable once made (copy-on-write): an Apply makes a new state and swaps it in on success.
    std::shared_ptr<const ReplicatedState> m_state;
    std::shared_ptr<ReplicaGroup> m_group; // null: nothing shared
    ReplicaStats m_stats;
    bool m_diverge_next{false};
};

} // namespace hilo

#endif // HILO_SYNC_REPLICA_H
