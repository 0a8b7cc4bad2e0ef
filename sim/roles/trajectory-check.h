// CheckTrajectoryBatch: the learner's check of one member's trajectory batch, made where the
// message arrives (LearnerRole::HandleMessage) so that a bad batch costs only the peer that sent
// it and never reaches training. The batch must parse as models/trajectory-batch.h says (magic,
// CRC-32C, sizes, every token below the vocabulary, finite log-probs <= 0 and finite rewards) and
// must be the one the workload asked this worker for: the workload's kind, prompt and generation
// lengths, group size and vocabulary; prompts_per_worker x group_size sequences; sampled for
// `round` by `worker`. Whatever passes is a batch LmWorkload::Gradient accepts.
#ifndef HILOSIM_ROLES_TRAJECTORY_CHECK_H
#define HILOSIM_ROLES_TRAJECTORY_CHECK_H

#include "hilo/core/status.h"
#include "models/workload.h"

#include <cstdint>
#include <string_view>

namespace hilosim
{

/// Ok, or kCorruption (does not parse) / kInvalidArgument (parses, but is not what the workload
/// asked `worker` for in `round`), with a message naming the worker, the round and the field.
hilo::Status CheckTrajectoryBatch(const models::WorkloadConfig& config, std::string_view batch,
                                  uint64_t round, uint32_t worker);

} // namespace hilosim

#endif // HILOSIM_ROLES_TRAJECTORY_CHECK_H
