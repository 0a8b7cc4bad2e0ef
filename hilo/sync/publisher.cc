#include "hilo/sync/publisher.h"

#include "hilo/core/finite.h"
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
    if (options.max_frame_body == 0 || options.max_frame_body > kMaxFrameBody)
    {
        return Status::InvalidArgument("publisher: max_frame_body " +
                                       std::to_string(options.max_frame_body) + " is outside 1.." +
                                       std::to_string(kMaxFrameBody));
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
    // Snapshot sizes never change after this point, so one check here covers every snapshot.
    const ReplicatedState& view = p->m_snapshot;
    const uint64_t bound = SnapshotBodyBytesBound(view.adapter.theta.size(),
                                                  view.optimizer.m.size(), view.optimizer.v.size());
    if (bound > options.max_frame_body)
    {
        return Status::InvalidArgument(
            "publisher: a snapshot of this adapter (" + std::to_string(layout.numel()) +
            " parameters" + (view.optimizer.m.empty() ? "" : " plus optimizer moments") +
            ") needs up to " + std::to_string(bound) + " bytes, over the frame limit of " +
            std::to_string(options.max_frame_body) +
            " bytes; snapshots travel in one frame, so the adapter must be smaller");
    }
    return p;
}

StatusOr<PublishedUpdate>
Publisher::Step(const std::vector<float>& grad)
{
    if (!m_failed.ok())
    {
        return m_failed;
    }
    if (static_cast<int64_t>(grad.size()) != m_layout.numel())
    {
        return Status::InvalidArgument("gradient holds " + std::to_string(grad.size()) +
                                       " values; the layout has " +
                                       std::to_string(m_layout.numel()));
    }
    if (!AllFiniteParallel(grad.data(), m_layout.numel()))
    {
        return Status::InvalidArgument("gradient holds a NaN or infinite value");
    }
    PublishedUpdate out;
    StatusOr<Encoded> enc = m_strategy->LearnerStep(grad, &m_state, &out.times);
    if (!enc.ok())
    {
        if (enc.status().code() == StatusCode::kCorruption)
        {
            // A non-finite optimizer step (or a payload the learner cannot decode itself): the
            // learner's state may be half-applied, so nothing more can be published from it.
            m_failed = Status(enc.status().code(),
                              "the learner's step failed and its state is unusable: " +
                                  enc.status().message());
            return m_failed;
        }
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

    StatusOr<std::string> frame = EncodeUpdateFrame(u, m_options.max_frame_body);
    if (!frame.ok())
    {
        m_failed = Status(frame.status().code(),
                          "publisher: version " + std::to_string(base + 1) +
                              " was applied but cannot be published: " + frame.status().message());
        return m_failed;
    }
    out.frame = std::move(*frame);
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

StatusOr<std::string>
Publisher::LatestSnapshotFrame() const
{
    if (!m_failed.ok())
    {
        return m_failed;
    }
    return EncodeSnapshotFrame(m_snapshot, m_config_hash, m_options.max_frame_body);
}

StatusOr<CatchUpPlan>
Publisher::CatchUpFrom(uint64_t from_version, bool with_snapshot) const
{
    if (!m_failed.ok())
    {
        return m_failed;
    }
    const uint64_t now = version();
    if (from_version > now)
    {
        return Status::InvalidArgument("replica claims version " + std::to_string(from_version) +
                                       ", ahead of the publisher's " + std::to_string(now));
    }
    const uint64_t ring_first = now - m_ring.size() + 1; // oldest version in the ring
    CatchUpPlan plan;
    uint64_t start = from_version;
    if (with_snapshot || from_version + 1 < ring_first)
    {
        const uint64_t snap = m_snapshot.adapter.version;
        if (snap + 1 < ring_first)
        {
            return Status::NotFound("versions " + std::to_string(snap + 1) + ".." +
                                    std::to_string(ring_first - 1) + " are no longer retained");
        }
        StatusOr<std::string> snapshot = LatestSnapshotFrame();
        if (!snapshot.ok())
        {
            return snapshot.status();
        }
        plan.snapshot_frame = std::move(*snapshot);
        start = snap;
    }
    for (uint64_t v = start + 1; v <= now; ++v)
    {
        plan.update_frames.push_back(m_ring[v - ring_first]);
    }
    return plan;
}

} // namespace hilo
