// ReplicaGroup: replicas that live in one process and share what is bit-identical by
// construction. Every replica of a group runs the same strategy, layout and optimizer and starts
// from the same initial state; a replica's state is immutable and shared (copy-on-write): applying
// an update makes a new state, and when another replica of the group applies a byte-identical
// update frame to the very same state object, it takes the state the first one made instead of
// decoding and replaying again. Replay is deterministic, so that state is byte for byte what its
// own replay would have produced, and it was checked against the frame's state hash when it was
// made. Nothing that can differ is shared: a replica told to diverge replays on its own (and fails
// the hash check on its own); a frame that differs by one byte misses; a replica that restores a
// snapshot holds its own state from then on (it leaves the sharing until it applies the same
// frames to the same objects again, which it never does). The strategy object (decode scratch,
// an error-feedback buffer replicas never use) is one per group too.
// A simulation runs every worker in one process, so its workers form one group per arm; a process
// that holds one replica needs no group (Replica::Create).
// REQUIRES: the replicas of a group are used from one thread at a time.
#ifndef HILO_SYNC_REPLICA_GROUP_H
#define HILO_SYNC_REPLICA_GROUP_H

#include "hilo/core/adapter-layout.h"
#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"
#include "hilo/sync/sync-strategy.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

class ReplicaGroup
{
  public:
    /// A group whose replicas start at version 0 holding `initial`. Errors as Replica::Create.
    static StatusOr<std::shared_ptr<ReplicaGroup>> Create(const SyncSpec& spec,
                                                          const AdapterLayout& layout,
                                                          const OptimizerConfig& optimizer,
                                                          const AdapterState& initial);

    const AdapterLayout& layout() const { return m_layout; }
    const OptimizerConfig& optimizer() const { return m_optimizer; }
    uint64_t config_hash() const { return m_config_hash; }
    /// The strategy every replica of the group runs.
    const std::shared_ptr<SyncStrategy>& strategy() const { return m_strategy; }

    /// The initial state, one object for every replica that holds it (made again once no replica
    /// holds it any more).
    std::shared_ptr<const ReplicatedState> Initial();

    /// The state that applying `frame` to `base` made in this group, or null if no replica of the
    /// group has applied a byte-identical frame to this same object (the same object, not equal
    /// bytes: two objects are only known to be equal when one was made from the other's history).
    std::shared_ptr<const ReplicatedState> Find(const std::shared_ptr<const ReplicatedState>& base,
                                                std::string_view frame) const;

    /// Records that applying `frame` to `base` made `result`, which passed the frame's checks.
    /// Forgets records whose base no replica holds any more.
    /// REQUIRES: `result` is exactly what the strategy's replay of `frame` on `base` produced.
    void Remember(const std::shared_ptr<const ReplicatedState>& base, std::string_view frame,
                  std::shared_ptr<const ReplicatedState> result);

    /// Records held (for tests: bounded by the versions replicas hold at once).
    size_t records() const { return m_records.size(); }

  private:
    ReplicaGroup(const AdapterLayout& layout, const OptimizerConfig& optimizer,
                 std::shared_ptr<SyncStrategy> strategy, const AdapterState& initial);

    struct Record
    {
        std::weak_ptr<const ReplicatedState> base; // held weakly: a record dies with its base
        std::string frame;
        std::shared_ptr<const ReplicatedState> result;
    };

    AdapterLayout m_layout;
    OptimizerConfig m_optimizer;
    std::shared_ptr<SyncStrategy> m_strategy;
    uint64_t m_config_hash{0};
    AdapterState m_initial_adapter;
    std::weak_ptr<const ReplicatedState> m_initial;
    std::vector<Record> m_records;
};

} // namespace hilo

#endif // HILO_SYNC_REPLICA_GROUP_H
