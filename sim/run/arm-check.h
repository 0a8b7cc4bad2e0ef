// The checks of a scenario's arms that only the real adapter can answer, without running anything:
// a budget below the smallest payload of the arm's compressor, compressor options the adapter's
// shapes reject, a modelled model that does not fit a modelled GPU. Every driver runs them before
// its first arm starts (`hilo-sim validate` and `run`, `hilo-emu run`).
#ifndef HILOSIM_RUN_ARM_CHECK_H
#define HILOSIM_RUN_ARM_CHECK_H

#include "sim/scenario/resolved-scenario.h"
#include "sim/scenario/scenario-loader.h"

#include "hilo/core/status.h"

#include <cstddef>
#include <string>
#include <vector>

namespace hilosim
{

/// An arm whose budget buys the learner's compressor more than this many times fewer (or more)
/// rank-1 directions per matrix, or entries, than the modelled adapter's gets a warning.
constexpr double kRegimeWarnFactor = 2.0;

/// Checks arm `arm_index` (builds its context: sim/run/arm-context-builder.h). Errors name the arm.
/// Appends to `warnings` (when not null) what does not stop the run: a budget that buys the
/// learner a regime kRegimeWarnFactor away from the modelled adapter's.
hilo::Status CheckArm(const ResolvedScenario& scenario, size_t arm_index,
                      std::vector<std::string>* warnings = nullptr);
/// CheckArm for every arm; messages and warnings name the file and the arm.
hilo::Status CheckScenarioArms(const LoadedScenario& scenario,
                               std::vector<std::string>* warnings = nullptr);

} // namespace hilosim

#endif // HILOSIM_RUN_ARM_CHECK_H
