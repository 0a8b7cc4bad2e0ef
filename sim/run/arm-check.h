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

namespace hilosim
{

/// Checks arm `arm_index` (builds its context: sim/run/arm-context-builder.h). Errors name the arm.
hilo::Status CheckArm(const ResolvedScenario& scenario, size_t arm_index);

/// CheckArm for every arm; messages name the file and the arm.
hilo::Status CheckScenarioArms(const LoadedScenario& scenario);

} // namespace hilosim

#endif // HILOSIM_RUN_ARM_CHECK_H
