#include "sim/drivers/process/peer-limits.h"

#include "sim/roles/role-messages.h"

#include "models/trajectory-batch.h"

namespace hilosim
{

uint64_t
TrajectoryMessageBytes(const models::WorkloadConfig& workload)
{
    // Measured on a batch of the shape, not computed from the format: one source of truth.
    models::TrajectoryBatch b;
    b.kind = workload.kind == "grpo" ? models::WorkloadKind::kGrpo : models::WorkloadKind::kDistill;
    b.group_size = static_cast<uint32_t>(workload.group_size);
    b.sequences = static_cast<uint32_t>(workload.prompts_per_worker * workload.group_size);
    b.prompt_len = static_cast<uint32_t>(workload.prompt_tokens);
    b.gen_len = static_cast<uint32_t>(workload.gen_tokens);
    b.vocab = static_cast<uint32_t>(workload.vocab);
    b.tokens.assign(static_cast<size_t>(b.sequences) * (b.prompt_len + b.gen_len), 0);
    b.behaviour_logp.assign(static_cast<size_t>(b.sequences) * b.gen_len, 0.0f);
    b.rewards.assign(b.sequences, 0.0f);
    return EncodeTrajectories(0, 0, b.Serialize()).size();
}

std::function<uint64_t(uint32_t)>
PeerLimits::PayloadLimit() const
{
    return [limits = payload_by_type](uint32_t type)
    {
        auto it = limits.find(type);
        return it == limits.end() ? uint64_t{0} : it->second;
    };
}

PeerLimits
PeerLimitsFor(const std::string& role, const models::WorkloadConfig& workload, uint64_t frame_limit)
{
    PeerLimits l;
    l.max_queued_bytes = 2 * frame_limit;
    if (role == "learner")
    {
        l.payload_by_type[kTrajectories] = TrajectoryMessageBytes(workload);
        l.payload_by_type[kResyncRequest] = EncodeResyncRequest(0, false).size();
        l.payload_by_type[kDone] = EncodeDone(0, 0).size();
    }
    else if (role == "worker")
    {
        l.payload_by_type[kUpdate] = frame_limit;
        l.payload_by_type[kCatchUp] = frame_limit;
        l.payload_by_type[kWelcome] = EncodeWelcome(0, 0).size();
    }
    else
    {
        l.payload_by_type[kUpdate] = frame_limit;
    }
    return l;
}

} // namespace hilosim
