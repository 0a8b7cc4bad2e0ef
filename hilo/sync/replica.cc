#include "hilo/sync/replica.h"

#include "hilo/optim/replay.h"
#include "hilo/wire/messages.h"

#include <cstring>
#include <sstream>

namespace hilo
{
namespace
{

std::string
Hex(uint64_t v)
{
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
}

} // namespace

Replica::Replica(const AdapterLayout& layout, const OptimizerConfig& optimizer,
                 std::shared_ptr<SyncStrategy> strategy, ReplicaOptions options)
  : m_layout(layout)
  , m_optimizer(optimizer)
  , m_strategy(std::move(strategy))
  , m_options(options)
{
}

StatusOr<std::unique_ptr<Replica>>
Replica::Create(const SyncSpec& spec, const AdapterLayout& layout, const OptimizerConfig& optimizer,
                const AdapterState& initial, ReplicaOptions options)
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
    std::unique_ptr<Replica> r(new Replica(layout, optimizer, std::move(*strategy), options));
    r->m_config_hash = r->m_strategy->ConfigHash(optimizer);
    auto state = std::make_shared<ReplicatedState>();
    state->adapter = initial;
    if (r->m_strategy->ReplicasKeepOptimizer())
    {
        state->optimizer = NewOptimizerState(optimizer, layout.numel());
    }
    r->m_state = std::move(state);
    return r;
}

std::unique_ptr<Replica>
Replica::Create(std::shared_ptr<ReplicaGroup> group, ReplicaOptions options)
{
    std::unique_ptr<Replica> r(
        new Replica(group->layout(), group->optimizer(), group->strategy(), options));
    r->m_config_hash = group->config_hash();
    r->m_state = group->Initial();
    r->m_group = std::move(group);
    return r;
}

Status
Replica::Apply(std::string_view frame)
{
    Status s = ApplyChecked(frame);
    if (s.ok())
    {
        ++m_stats.applied;
    }
    else
    {
        ++m_stats.rejected;
        if (s.code() == StatusCode::kHashMismatch)
        {
            ++m_stats.hash_mismatches;
        }
    }
    return s;
}

Status
Replica::ApplyChecked(std::string_view frame)
{
    StatusOr<wire::Update> parsed = DecodeUpdateFrame(frame, m_options.max_frame_body);
    if (!parsed.ok())
    {
        return parsed.status();
    }
    const wire::Update& u = *parsed;
    if (u.config_hash() != m_config_hash)
    {
        return Status::ConfigMismatch("update config hash " + Hex(u.config_hash()) +
                                      " differs from this replica's " + Hex(m_config_hash));
    }
    if (static_cast<int>(u.strategy()) != static_cast<int>(m_strategy->kind()) ||
        u.compressor() != m_strategy->compressor().Name() ||
        u.compressor_params() != m_strategy->compressor().Params())
    {
        return Status::ConfigMismatch(
            "update made by strategy " + std::to_string(u.strategy()) + " with compressor '" +
            u.compressor() + "' (" + u.compressor_params() + "); this replica runs " +
            SyncKindName(m_strategy->kind()) + " with '" + m_strategy->compressor().Name() + "' (" +
            m_strategy->compressor().Params() + ")");
    }
    const uint64_t current = version();
    if (u.version() <= current)
    {
        return Status::Stale("update to version " + std::to_string(u.version()) +
                             " but the replica already holds version " + std::to_string(current));
    }
    if (u.base_version() != current)
    {
        return Status::Gap("update applies to version " + std::to_string(u.base_version()) +
                           " but the replica holds version " + std::to_string(current));
    }
    // A byte-identical frame applied to this very state by another replica of the group made a
    // state that passed the same checks; replay is deterministic, so it is this replay's result.
    // A replica told to diverge replays on its own.
    if (m_group && !m_diverge_next)
    {
        std::shared_ptr<const ReplicatedState> made = m_group->Find(m_state, frame);
        if (made)
        {
            m_state = std::move(made);
            return Status::Ok();
        }
    }
    auto next = std::make_shared<ReplicatedState>();
    HILO_RETURN_IF_ERROR(m_strategy->ReplicaApply(u.payload(), *m_state, next.get()));
    if (static_cast<int64_t>(next->adapter.theta.size()) != m_layout.numel())
    {
        return Status::Corruption("decoded state has the wrong size");
    }
    bool perturbed = false;
    if (m_diverge_next && !next->adapter.theta.empty())
    {
        m_diverge_next = false;
        perturbed = true;
        float& value = next->adapter.theta[next->adapter.theta.size() / 2];
        uint32_t bits = 0;
        std::memcpy(&bits, &value, sizeof(bits));
        bits ^= 1u;
        std::memcpy(&value, &bits, sizeof(bits));
    }
    const uint64_t hash = next->adapter.Hash();
    if (hash != u.state_hash())
    {
        return Status::HashMismatch("state after applying version " + std::to_string(u.version()) +
                                    " hashes to " + Hex(hash) + "; the learner's is " +
                                    Hex(u.state_hash()));
    }
    next->adapter.version = u.version();
    std::shared_ptr<const ReplicatedState> made = std::move(next);
    if (m_group && !perturbed)
    {
        m_group->Remember(m_state, frame, made);
    }
    m_state = std::move(made);
    return Status::Ok();
}

Status
Replica::Restore(std::string_view snapshot_frame)
{
    Status s = RestoreChecked(snapshot_frame);
    if (s.ok())
    {
        ++m_stats.restores;
    }
    else
    {
        ++m_stats.rejected;
    }
    return s;
}

Status
Replica::RestoreChecked(std::string_view snapshot_frame)
{
    StatusOr<DecodedSnapshot> snap =
        DecodeSnapshotFrame(snapshot_frame, m_layout.numel(), m_options.max_frame_body);
    if (!snap.ok())
    {
        return snap.status();
    }
    if (snap->config_hash != m_config_hash)
    {
        return Status::ConfigMismatch("snapshot config hash " + Hex(snap->config_hash) +
                                      " differs from this replica's " + Hex(m_config_hash));
    }
    if (m_strategy->ReplicasKeepOptimizer())
    {
        Status moments = CheckOptimizerState(m_optimizer, snap->state.optimizer, m_layout.numel());
        if (!moments.ok())
        {
            return Status::Corruption("snapshot: " + moments.message());
        }
    }
    else if (!snap->state.optimizer.m.empty() || !snap->state.optimizer.v.empty())
    {
        return Status::Corruption("snapshot carries optimizer moments, which replicas of the " +
                                  std::string(SyncKindName(m_strategy->kind())) +
                                  " strategy do not keep");
    }
    m_state = std::make_shared<ReplicatedState>(std::move(snap->state));
    return Status::Ok();
}

Status
Replica::CatchUp(std::string_view snapshot_frame, const std::vector<std::string>& update_frames)
{
    if (!snapshot_frame.empty())
    {
        HILO_RETURN_IF_ERROR(Restore(snapshot_frame));
    }
    for (const std::string& frame : update_frames)
    {
        Status s = Apply(frame);
        if (s.code() == StatusCode::kStale)
        {
            continue;
        }
        HILO_RETURN_IF_ERROR(s);
    }
    return Status::Ok();
}

} // namespace hilo
