// BuildArmContext: everything the roles of one arm need before any network exists -- the real
// workload, the sync strategy, the modelled LLM and GPUs and the scale factors between them -- from
// a resolved scenario. Shared by the simulator (sim/drivers/ns3/arm-runner.h) and the process
// driver (sim/drivers/process/), so that both run an arm from identical contexts.
#ifndef HILOSIM_RUN_ARM_CONTEXT_BUILDER_H
#define HILOSIM_RUN_ARM_CONTEXT_BUILDER_H

#include "hilo/compress/budget-regime.h"
#include "sim/net/link-spec.h"
#include "sim/roles/arm-context.h"
#include "sim/run/arm-result.h"
#include "sim/scenario/resolved-scenario.h"

#include "hilo/core/status.h"
#include "models/workload.h"

#include <memory>

namespace hilosim
{

/// The tiny real workload of `scenario` at LoRA rank `rank`.
models::WorkloadConfig ToWorkloadConfig(const ResolvedScenario& scenario, uint32_t rank);

/// The scenario index of each worker in topology order: workers are numbered in scenario order in
/// a star, region by region (in `network.regions` order) otherwise. Every per-worker vector of a
/// run (ArmContext::worker_gpus, ArmResult, workers.csv) and every worker index (rollout seeds,
/// peer ids, `hilo-node worker --index`) uses this order.
std::vector<uint32_t> TopologyWorkerOrder(const ResolvedScenario& scenario);

/// The scenario's network as the topology builder takes it (sim/net/link-spec.h), workers in
/// topology order. Shared by the simulator and the emulated network (sim/drivers/emulation/), so
/// that both build the same links, addresses and routes.
TopologySpec ScenarioTopologySpec(const ResolvedScenario& scenario);

/// The context of `arm`, worker GPUs in topology order. Errors (a budget below the smallest
/// payload, compressor options the adapter rejects, a model that does not fit a modelled GPU)
/// are bad input; callers prefix the arm's name.
hilo::StatusOr<std::shared_ptr<ArmContext>> BuildArmContext(const ResolvedScenario& scenario,
                                                            const ResolvedArm& arm);

/// What `arm`'s budget buys on the modelled adapter and on the learner's
/// (hilo/compress/budget-regime.h).
hilo::BudgetPurchase ArmBudgetPurchase(const ResolvedScenario& scenario, const ResolvedArm& arm,
                                       const ArmContext& context);

/// An ArmResult with everything known before the run: names, budget, adapter sizes and scale,
/// quality metric, and the workers' GPUs and regions in topology order.
ArmResult NewArmResult(const ResolvedScenario& scenario, const ResolvedArm& arm,
                       const ArmContext& context);

} // namespace hilosim

#endif // HILOSIM_RUN_ARM_CONTEXT_BUILDER_H
