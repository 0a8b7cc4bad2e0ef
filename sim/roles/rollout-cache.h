// RolloutCache: rollouts paid once per replica version. In a simulation every worker role runs in
// one process; workers that roll out the same round with bit-identical adapters (every `full` and
// `hilo` arm in step; `delta` replicas too, which all hold the learner's shadow) would each run the
// tiny model on their own prompts. The cache runs all workers' prompts of a (round, adapter) in one
// batched Workload::RolloutMany call the first time any of them asks, and hands each worker its
// own batch -- byte for byte what its own Rollout call would return (each worker keeps its prompt
// and sampling streams), so outputs do not change. Keyed by the adapter's state hash and version,
// so a worker whose replica differs (a fault, a drifted copy) simply gets its own call.
#ifndef HILOSIM_ROLES_ROLLOUT_CACHE_H
#define HILOSIM_ROLES_ROLLOUT_CACHE_H

#include "hilo/core/status.h"
#include "models/workload.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace hilosim
{

class RolloutCache
{
  public:
    /// `workers`: every worker of the arm (the batched call covers them all).
    explicit RolloutCache(uint32_t workers);

    /// The trajectory batch of `worker` for `round`, sampled with `theta` (version `version`,
    /// state hash `theta_hash`).
    hilo::StatusOr<std::string> Take(models::Workload& workload, const std::vector<float>& theta,
                                     uint64_t version, uint64_t theta_hash, uint64_t round,
                                     uint32_t worker, models::RolloutInfo* info);

    /// Batched calls made and batches served from them (for tests and cost reports).
    uint64_t batched_calls() const { return m_batchedCalls; }
    uint64_t served() const { return m_served; }

  private:
    struct Entry
    {
        std::vector<std::optional<std::string>> batches; // by worker; taken ones are reset
        std::vector<models::RolloutInfo> infos;
        uint32_t left{0};
    };
    using Key = std::tuple<uint64_t, uint64_t, uint64_t>; // round, version, state hash

    uint32_t m_workers;
    std::map<Key, Entry> m_entries;
    uint64_t m_batchedCalls{0};
    uint64_t m_served{0};
};

} // namespace hilosim

#endif // HILOSIM_ROLES_ROLLOUT_CACHE_H
