#include "sim/roles/rollout-cache.h"

namespace hilosim
{

namespace
{
// Entries kept at most: a few rounds' worth; an evicted entry is only recomputed, never wrong.
constexpr size_t kMaxEntries = 16;
} // namespace

RolloutCache::RolloutCache(uint32_t workers)
  : m_workers(workers)
{
}

hilo::StatusOr<std::string>
RolloutCache::Take(models::Workload& workload, const std::vector<float>& theta, uint64_t version,
                   uint64_t theta_hash, uint64_t round, uint32_t worker, models::RolloutInfo* info)
{
    const Key key{round, version, theta_hash};
    auto it = m_entries.find(key);
    if (it == m_entries.end() || worker >= it->second.batches.size() || !it->second.batches[worker])
    {
        if (it != m_entries.end())
        {
            // This worker already took its batch of this key: a repeated round (a restarted
            // worker). Sample it alone.
            return workload.Rollout(theta, round, worker, info);
        }
        std::vector<uint32_t> all(m_workers);
        for (uint32_t w = 0; w < m_workers; ++w)
        {
            all[w] = w;
        }
        Entry e;
        auto batches = workload.RolloutMany(theta, round, all, &e.infos);
        if (!batches.ok())
        {
            return batches.status();
        }
        ++m_batchedCalls;
        e.batches.assign(batches->begin(), batches->end());
        e.left = m_workers;
        while (m_entries.size() >= kMaxEntries)
        {
            m_entries.erase(m_entries.begin()); // the oldest round
        }
        it = m_entries.emplace(key, std::move(e)).first;
    }
    Entry& e = it->second;
    std::string batch = std::move(*e.batches[worker]);
    e.batches[worker].reset();
    if (info != nullptr)
    {
        *info = e.infos[worker];
    }
    ++m_served;
    if (--e.left == 0)
    {
        m_entries.erase(it);
    }
    return batch;
}

} // namespace hilosim
