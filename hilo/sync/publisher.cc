#include "hilo/sync/publisher.h"

#include "hilo/wire/messages.h"

namespace hilo
{

Publisher::Publisher(const AdapterLayout& layout, const OptimizerConfig& optimizer,
                     std::unique_ptr<SyncStrategy> strategy, PublisherOptions options)
  : m_layout(layout)
  , m_optimizer(optimizer)
  , m_strategy(std::move(strategy))
  , m_options(options)
{
}

StatusOr<std::unique_ptr<Publisher>>
Publisher::Create(const SyncSpec& spec, const AdapterLayout& layout,
                  const OptimizerConfig& optimizer, const AdapterState& initial,
                  PublisherOptions options)
{
    if (static_cast<int64_t>(initial.theta.size()) != layout.numel())
    {
        return Status::InvalidArgument("initial parameters hold " +
                                       std::to_string(initial.theta.size()) +
                                       " values; the layout has " + std::to_string(layout.numel()));
    }
    if (options.ring_capacity == 0 || options.snapshot_interval == 0 ||
        options.snapshot_interval > options.ring_capacity)
    {
        return Status::InvalidArgument("publisher: need 0 < snapshot_interval <= ring_capacity (" +
                                       std::to_string(options.snapshot_interval) + " vs " +
                                       std::to_string(options.ring_capacity) + ")");
    }
    StatusOr<std::unique_ptr<SyncStrategy>> strategy = NewSyncStrategy(spec, layout, optimizer);
    if (!strategy.ok())
    {
        return strategy.status();
    }
    std::unique_ptr<Publisher> p(new Publisher(layout, optimizer, std::move(*strategy), options));
    p->m_config_hash = p->m_strategy->ConfigHash(optimizer);
    p->m_strategy->InitLearner(initial, &p->m_state);
    p->m_snapshot = p->replica_view();
    return p;
}

StatusOr<PublishedUpdate>
Publisher::Step(const std::vector<float>& grad)
{
    if (static_cast<int64_t>(grad.size()) != m_layout.numel())
    {
        return Status::InvalidArgument("gradient holds " + std::to_string(grad.size()) +
                                       " values; the layout has " +
                                       std::to_string(m_layout.numel()));
    }
    PublishedUpdate out;
    StatusOr<Encoded> enc = m_strategy->LearnerStep(grad, &m_state, &out.times);
    if (!enc.ok())
    {
        return enc.status();
    }
    const uint64_t base = version();
    m_state.train.adapter.version = base + 1;
    m_state.shadow.adapter.version = base + 1;
    m_state.master.adapter.version = base + 1;
    const ReplicatedState& view = replica_view();

    wire::Update u;
    u.set_format_version(kFormatVersion);
    u.set_version(base + 1);
    u.set_base_version(base);
    u.set_strategy(static_cast<wire::SyncKind>(m_strategy->kind()));
    u.set_compressor(m_strategy->compressor().Name());
    u.set_compressor_params(m_strategy->compressor().Params());
    u.set_payload(std::move(enc->payload));
    u.set_state_hash(view.adapter.Hash());
    u.set_config_hash(m_config_hash);

    out.frame = EncodeUpdateFrame(u);
    out.version = base + 1;
    out.payload_bytes = static_cast<int64_t>(u.payload().size());
    out.state_hash = u.state_hash();
    out.kept_per_matrix = std::move(enc->kept_per_matrix);

    m_ring.push_back(out.frame);
    while (m_ring.size() > m_options.ring_capacity)
    {
        m_ring.pop_front();
    }
    if (out.version % m_options.snapshot_interval == 0)
    {
        m_snapshot = view;
    }
    return out;
}

DriftStats
Publisher::drift() const
{
    return ComputeDrift(m_state.train.adapter.theta, replica_view().adapter.theta);
}

std::string
Publisher::LatestSnapshotFrame() const
{
    return EncodeSnapshotFrame(m_snapshot, m_config_hash);
}

StatusOr<CatchUpPlan>
Publisher::CatchUpFrom(uint64_t from_version) const
{
    const uint64_t now = version();
    if (from_version > now)
    {
        return Status::InvalidArgument("replica claims version " + std::to_string(from_version) +
                                       ", ahead of the publisher's " + std::to_string(now));
    }
    const uint64_t ring_first = now - m_ring.size() + 1; // oldest version in the ring
    CatchUpPlan plan;
    uint64_t start = from_version;
    if (from_version + 1 < ring_first)
    {
        const uint64_t snap = m_snapshot.adapter.version;
        if (snap + 1 < ring_first)
        {
            return Status::NotFound("versions " + std::to_string(snap + 1) + ".." +
                                    std::to_string(ring_first - 1) + " are no longer retained");
        }
        plan.snapshot_frame = LatestSnapshotFrame();
        start = snap;
    }
    for (uint64_t v = start + 1; v <= now; ++v)
    {
        plan.update_frames.push_back(m_ring[v - ring_first]);
    }
    return plan;
}

} // namespace hilo
