// TrajectoryBatch: the rollouts of one worker for one step, as they travel to the learner.
//
// Wire format `hilo-traj-v1` (little-endian):
//   u32 magic 0x4a525448 ("HTRJ"), u8 format = 1, u8 kind (1 distill, 2 grpo),
//   u64 step, u32 worker, u32 sequences, u32 prompt_len, u32 gen_len,
//   u32 group_size, u32 vocab,
//   u16 tokens[sequences x (prompt_len + gen_len)]   row-major, each < vocab
//   f32 behaviour_logp[sequences x gen_len]          log-prob of each sampled token, finite, <= 0
//   f32 rewards[sequences]                           finite (zeros for distill)
//   u32 crc32c of every byte above.
// sequences is a multiple of group_size; rows g*group_size .. (g+1)*group_size-1 share a prompt.
#ifndef MODELS_TRAJECTORY_BATCH_H
#define MODELS_TRAJECTORY_BATCH_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace models
{

enum class WorkloadKind : uint8_t
{
    kDistill = 1,
    kGrpo = 2,
};

struct TrajectoryBatch
{
    WorkloadKind kind{WorkloadKind::kDistill};
    uint64_t step{0};   // rollout step the batch was sampled for
    uint32_t worker{0}; // sampling worker
    uint32_t sequences{0};
    uint32_t prompt_len{0};
    uint32_t gen_len{0};
    uint32_t group_size{1};
    uint32_t vocab{0};
    std::vector<int32_t> tokens;       // sequences x (prompt_len + gen_len)
    std::vector<float> behaviour_logp; // sequences x gen_len
    std::vector<float> rewards;        // sequences

    /// Checks sizes, token range, finiteness and group divisibility.
    hilo::Status Validate() const;
    /// The wire bytes. REQUIRES: Validate() ok.
    std::string Serialize() const;
    /// Parses and validates; any malformed input is kCorruption.
    static hilo::StatusOr<TrajectoryBatch> Parse(std::string_view bytes);
};

} // namespace models

#endif // MODELS_TRAJECTORY_BATCH_H
