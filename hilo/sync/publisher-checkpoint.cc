// Publisher checkpoints. Format (little-endian, hilo/core/coding.h):
//
//   u32 magic "HLCK" (0x4B434C48), u32 format 2
//   u64 config hash, u64 ring capacity, u64 snapshot interval
//   state  train            (the learner's parameters and optimizer state)
//   state  shadow           (what replicas hold, for strategies that differ from train)
//   state  master           (primal: the master copy and its optimizer state; else empty)
//   u64 n, n bytes          learner-local state of the strategy (SyncStrategy::SaveLearnerLocal)
//   u32 k, k x (u64 n, n bytes)   the ring: update frames of versions version-k+1 .. version
//   state  snapshot         (the latest snapshot)
//   u32 CRC-32C of every byte before it
//
// where a `state` is: u64 version, u64 n, n fp32 parameters, u64 optimizer step, f32 beta1
// product, f32 beta2 product, u64 n, n fp32 first moments, u64 n, n fp32 second moments.
// fp32 values travel as their bit patterns, so a restored publisher is bit-identical.
#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"
#include "hilo/core/finite.h"
#include "hilo/optim/replay.h"
#include "hilo/sync/publisher.h"

namespace hilo
{
namespace
{

constexpr uint32_t kCheckpointMagic = 0x4B434C48;
constexpr uint32_t kCheckpointFormat = 2; // 2: the master state (primal)

void
PutVector(ByteWriter* w, const std::vector<float>& v)
{
    w->PutU64(v.size());
    w->PutFloats(v.data(), v.size(), ValueDtype::kFp32);
}

void
PutState(ByteWriter* w, const ReplicatedState& s)
{
    w->PutU64(s.adapter.version);
    PutVector(w, s.adapter.theta);
    w->PutU64(s.optimizer.step);
    w->PutF32(s.optimizer.beta1_prod);
    w->PutF32(s.optimizer.beta2_prod);
    PutVector(w, s.optimizer.m);
    PutVector(w, s.optimizer.v);
}

// Vectors are bounded by `max_values` (the layout's size), so a corrupt length cannot allocate
// more than the adapter; a NaN or infinite value makes the checkpoint corrupt.
bool
GetVector(ByteReader* r, uint64_t max_values, std::vector<float>* v)
{
    uint64_t n = 0;
    if (!r->GetU64(&n) || n > max_values || n * 4 > r->remaining())
    {
        return false;
    }
    v->resize(n);
    return r->GetFloats(v->data(), n, ValueDtype::kFp32) &&
           AllFinite(v->data(), static_cast<int64_t>(n)); // a NaN would reach every replica
}

bool
GetState(ByteReader* r, uint64_t numel, ReplicatedState* s)
{
    return r->GetU64(&s->adapter.version) && GetVector(r, numel, &s->adapter.theta) &&
           r->GetU64(&s->optimizer.step) && r->GetF32(&s->optimizer.beta1_prod) &&
           r->GetF32(&s->optimizer.beta2_prod) && GetVector(r, numel, &s->optimizer.m) &&
           GetVector(r, numel, &s->optimizer.v);
}

} // namespace

std::string
Publisher::Checkpoint() const
{
    std::string out;
    ByteWriter w(&out);
    w.PutU32(kCheckpointMagic);
    w.PutU32(kCheckpointFormat);
    w.PutU64(m_config_hash);
    w.PutU64(m_options.ring_capacity);
    w.PutU64(m_options.snapshot_interval);
    PutState(&w, m_state.train);
    PutState(&w, m_state.shadow);
    PutState(&w, m_state.master);
    const std::string local = m_strategy->SaveLearnerLocal();
    w.PutU64(local.size());
    w.PutBytes(local.data(), local.size());
    w.PutU32(static_cast<uint32_t>(m_ring.size()));
    for (const std::string& frame : m_ring)
    {
        w.PutU64(frame.size());
        w.PutBytes(frame.data(), frame.size());
    }
    PutState(&w, m_snapshot);
    w.PutU32(Crc32c(out.data(), out.size()));
    return out;
}

StatusOr<std::unique_ptr<Publisher>>
Publisher::Restore(const SyncSpec& spec, const AdapterLayout& layout,
                   const OptimizerConfig& optimizer, std::string_view checkpoint,
                   PublisherOptions options)
{
    if (checkpoint.size() < 12)
    {
        return Status::Corruption("publisher checkpoint of " + std::to_string(checkpoint.size()) +
                                  " bytes is too short");
    }
    const std::string_view body = checkpoint.substr(0, checkpoint.size() - 4);
    uint32_t crc = 0;
    ByteReader tail(checkpoint.substr(checkpoint.size() - 4));
    tail.GetU32(&crc);
    if (crc != Crc32c(body.data(), body.size()))
    {
        return Status::Corruption("publisher checkpoint fails its CRC-32C");
    }
    ByteReader r(body);
    uint32_t magic = 0;
    uint32_t format = 0;
    uint64_t config_hash = 0;
    uint64_t ring_capacity = 0;
    uint64_t snapshot_interval = 0;
    if (!r.GetU32(&magic) || magic != kCheckpointMagic || !r.GetU32(&format))
    {
        return Status::Corruption("not a publisher checkpoint (bad magic)");
    }
    if (format != kCheckpointFormat)
    {
        return Status::NotSupported("publisher checkpoint format " + std::to_string(format) +
                                    "; this build reads format " +
                                    std::to_string(kCheckpointFormat));
    }
    if (!r.GetU64(&config_hash) || !r.GetU64(&ring_capacity) || !r.GetU64(&snapshot_interval))
    {
        return Status::Corruption("publisher checkpoint truncated in its header");
    }
    if (ring_capacity != options.ring_capacity || snapshot_interval != options.snapshot_interval)
    {
        return Status::InvalidArgument("publisher checkpoint was made with ring capacity " +
                                       std::to_string(ring_capacity) + " and snapshot interval " +
                                       std::to_string(snapshot_interval) + ", not " +
                                       std::to_string(options.ring_capacity) + " and " +
                                       std::to_string(options.snapshot_interval));
    }
    // Built from the initial state of the right size, then overwritten piece by piece.
    AdapterState placeholder;
    placeholder.theta.assign(static_cast<size_t>(layout.numel()), 0.0f);
    auto built = Create(spec, layout, optimizer, placeholder, options);
    if (!built.ok())
    {
        return built.status();
    }
    std::unique_ptr<Publisher> p = std::move(*built);
    if (config_hash != p->m_config_hash)
    {
        return Status::ConfigMismatch("publisher checkpoint belongs to another configuration");
    }
    const uint64_t numel = static_cast<uint64_t>(layout.numel());
    LearnerState state;
    uint64_t local_bytes = 0;
    std::string_view local;
    if (!GetState(&r, numel, &state.train) || !GetState(&r, numel, &state.shadow) ||
        !GetState(&r, numel, &state.master) || !r.GetU64(&local_bytes) ||
        !r.GetBytes(local_bytes, &local))
    {
        return Status::Corruption("publisher checkpoint truncated in the learner state");
    }
    // The optimizer state lives in the master copy where the strategy keeps one (primal).
    const ReplicatedState* master = p->m_strategy->Master(state);
    const ReplicatedState& optimized = master != nullptr ? *master : state.train;
    if (state.train.adapter.theta.size() != numel || optimized.adapter.theta.size() != numel ||
        !CheckOptimizerState(optimizer, optimized.optimizer, layout.numel()).ok())
    {
        return Status::Corruption("publisher checkpoint: learner state does not fit the layout");
    }
    uint32_t ring_size = 0;
    if (!r.GetU32(&ring_size) || ring_size > ring_capacity ||
        ring_size > state.train.adapter.version)
    {
        return Status::Corruption("publisher checkpoint: bad ring size");
    }
    std::deque<std::string> ring;
    for (uint32_t i = 0; i < ring_size; ++i)
    {
        uint64_t n = 0;
        std::string_view frame;
        if (!r.GetU64(&n) || !r.GetBytes(n, &frame))
        {
            return Status::Corruption("publisher checkpoint truncated in ring frame " +
                                      std::to_string(i));
        }
        ring.emplace_back(frame);
    }
    ReplicatedState snapshot;
    if (!GetState(&r, numel, &snapshot) || !r.empty())
    {
        return Status::Corruption("publisher checkpoint truncated or too long in the snapshot");
    }
    if (snapshot.adapter.theta.size() != numel ||
        snapshot.adapter.version > state.train.adapter.version)
    {
        return Status::Corruption("publisher checkpoint: snapshot does not fit");
    }
    HILO_RETURN_IF_ERROR(p->m_strategy->RestoreLearnerLocal(local));
    p->m_state = std::move(state);
    p->m_ring = std::move(ring);
    p->m_snapshot = std::move(snapshot);
    return p;
}

} // namespace hilo
