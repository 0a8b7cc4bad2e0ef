// The defaults of a scenario, in one place: fills every absent field whose default is not zero
// (the `optional` fields and empty choice strings of sim/scenario/scenario.proto), so that the
// printed scenario (resolved.textproto) states every value the run used.
#ifndef HILOSIM_SCENARIO_SCENARIO_DEFAULTS_H
#define HILOSIM_SCENARIO_SCENARIO_DEFAULTS_H

#include "sim/scenario/scenario.pb.h"

namespace hilosim
{

/// Fills absent fields of `scenario` with the defaults documented in scenario.proto. Fields that
/// are set are never changed. Per-group link overrides and region LAN links stay partial (their
/// unset fields fall back to network.worker_link, see scenario.proto). Idempotent.
void FillDefaults(Scenario* scenario);

} // namespace hilosim

#endif // HILOSIM_SCENARIO_SCENARIO_DEFAULTS_H
