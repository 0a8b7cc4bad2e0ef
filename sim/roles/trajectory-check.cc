#include "sim/roles/trajectory-check.h"

#include "models/trajectory-batch.h"

#include <string>

namespace hilosim
{

hilo::Status
CheckTrajectoryBatch(const models::WorkloadConfig& config, std::string_view batch, uint64_t round,
                     uint32_t worker)
{
    const std::string who = "trajectory batch of worker " + std::to_string(worker) + " for round " +
                            std::to_string(round);
    auto parsed = models::TrajectoryBatch::Parse(batch);
    if (!parsed.ok())
    {
        return hilo::Status::Corruption(who + ": " + parsed.status().message());
    }
    const models::TrajectoryBatch& b = *parsed;
    auto differs = [&](const char* field, uint64_t got, uint64_t want)
    {
        return hilo::Status::InvalidArgument(who + ": " + field + " " + std::to_string(got) +
                                             ", the workload's is " + std::to_string(want));
    };
    const models::WorkloadKind kind =
        config.kind == "grpo" ? models::WorkloadKind::kGrpo : models::WorkloadKind::kDistill;
    if (b.kind != kind)
    {
        return differs("kind", static_cast<uint64_t>(b.kind), static_cast<uint64_t>(kind));
    }
    if (b.step != round)
    {
        return differs("step", b.step, round);
    }
    if (b.worker != worker)
    {
        return differs("worker", b.worker, worker);
    }
    if (b.prompt_len != static_cast<uint64_t>(config.prompt_tokens))
    {
        return differs("prompt_len", b.prompt_len, config.prompt_tokens);
    }
    if (b.gen_len != static_cast<uint64_t>(config.gen_tokens))
    {
        return differs("gen_len", b.gen_len, config.gen_tokens);
    }
    if (b.group_size != static_cast<uint64_t>(config.group_size))
    {
        return differs("group_size", b.group_size, config.group_size);
    }
    if (b.vocab != static_cast<uint64_t>(config.vocab))
    {
        return differs("vocab", b.vocab, config.vocab);
    }
    const uint64_t sequences = static_cast<uint64_t>(config.prompts_per_worker * config.group_size);
    if (b.sequences != sequences)
    {
        return differs("sequences", b.sequences, sequences);
    }
    return hilo::Status::Ok();
}

} // namespace hilosim
