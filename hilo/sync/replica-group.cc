#include "hilo/sync/replica-group.h"

#include "hilo/optim/replay.h"

#include <algorithm>
#include <cstring>

namespace hilo
{
namespace
{

// True when `a` and `b` share one control block: the same object, never one made later at the
// same address.
bool
SameObject(const std::weak_ptr<const ReplicatedState>& a,
           const std::shared_ptr<const ReplicatedState>& b)
{
    return !a.owner_before(b) && !b.owner_before(a);
}

} // namespace

ReplicaGroup::ReplicaGroup(const AdapterLayout& layout, const OptimizerConfig& optimizer,
                           std::shared_ptr<SyncStrategy> strategy, const AdapterState& initial)
  : m_layout(layout)
  , m_optimizer(optimizer)
  , m_strategy(std::move(strategy))
  , m_initial_adapter(initial)
{
    m_config_hash = m_strategy->ConfigHash(optimizer);
}

StatusOr<std::shared_ptr<ReplicaGroup>>
ReplicaGroup::Create(const SyncSpec& spec, const AdapterLayout& layout,
                     const OptimizerConfig& optimizer, const AdapterState& initial)
{
    if (static_cast<int64_t>(initial.theta.size()) != layout.numel())
    {
        return Status::InvalidArgument("initial parameters hold " +
                                       std::to_string(initial.theta.size()) +
                                       " values; the layout has " + std::to_string(layout.numel()));
    }
    StatusOr<std::unique_ptr<SyncStrategy>> strategy = NewSyncStrategy(spec, layout, optimizer);
    if (!strategy.ok())
    {
        return strategy.status();
    }
    return std::shared_ptr<ReplicaGroup>(
        new ReplicaGroup(layout, optimizer, std::move(*strategy), initial));
}

std::shared_ptr<const ReplicatedState>
ReplicaGroup::Initial()
{
    std::shared_ptr<const ReplicatedState> held = m_initial.lock();
    if (held)
    {
        return held;
    }
    auto made = std::make_shared<ReplicatedState>();
    made->adapter = m_initial_adapter;
    if (m_strategy->ReplicasKeepOptimizer())
    {
        made->optimizer = NewOptimizerState(m_optimizer, m_layout.numel());
    }
    m_initial = made;
    return made;
}

std::shared_ptr<const ReplicatedState>
ReplicaGroup::Find(const std::shared_ptr<const ReplicatedState>& base, std::string_view frame) const
{
    for (const Record& r : m_records)
    {
        if (SameObject(r.base, base) && r.frame.size() == frame.size() &&
            std::memcmp(r.frame.data(), frame.data(), frame.size()) == 0)
        {
            return r.result;
        }
    }
    return nullptr;
}

void
ReplicaGroup::Remember(const std::shared_ptr<const ReplicatedState>& base, std::string_view frame,
                       std::shared_ptr<const ReplicatedState> result)
{
    // A record's result may be the base of the next one, so forgetting one can free the next's
    // base: repeat until nothing more goes.
    size_t before = 0;
    do
    {
        before = m_records.size();
        m_records.erase(std::remove_if(m_records.begin(), m_records.end(),
                                       [](const Record& r) { return r.base.expired(); }),
                        m_records.end());
    } while (m_records.size() != before);
    m_records.push_back(Record{base, std::string(frame), std::move(result)});
}

} // namespace hilo
