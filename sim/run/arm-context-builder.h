// BuildArmContext: everything the roles of one arm need before any network exists -- the real
// workload, the sync strategy, the modelled LLM and GPUs and the scale factors between them -- from
// a resolved scenario. Shared by the simulator (sim/run/arm-runner.h) and the process driver
// (sim/drivers/process/), so that both run an arm from identical contexts.
#ifndef HILOSIM_RUN_ARM_CONTEXT_BUILDER_H
#define HILOSIM_RUN_ARM_CONTEXT_BUILDER_H

#include "sim/roles/arm-context.h"
#include "sim/scenario/resolved-scenario.h"

#include "hilo/core/status.h"
#include "models/workload.h"

#include <memory>

namespace hilosim
{

/// The tiny real workload of `scenario` at LoRA rank `rank`.
models::WorkloadConfig ToWorkloadConfig(const ResolvedScenario& scenario, uint32_t rank);

/// The context of `arm`, worker GPUs in scenario order. Errors (a budget below the smallest
/// payload, compressor options the adapter rejects, a model that does not fit a modelled GPU)
/// are bad input; callers prefix the arm's name.
hilo::StatusOr<std::shared_ptr<ArmContext>> BuildArmContext(const ResolvedScenario& scenario,
                                                            const ResolvedArm& arm);

} // namespace hilosim

#endif // HILOSIM_RUN_ARM_CONTEXT_BUILDER_H
