// GatherArm: one arm's outputs read back from its node processes' event logs (event-log.h) into
// the simulator's ArmResult, so that hilo-emu writes the same files as hilo-sim. The fault figures
// of summary.json are measured from what the processes recorded: versions_lost from every
// worker's applies and catch-ups (a version a worker alive at the end neither applied nor skipped
// through a snapshot is lost), workers_at_final_hash from the learner's record of the workers'
// announcements.
#ifndef HILOSIM_DRIVERS_PROCESS_ARM_GATHER_H
#define HILOSIM_DRIVERS_PROCESS_ARM_GATHER_H

#include "sim/run/arm-result.h"
#include "sim/scenario/resolved-scenario.h"

#include "hilo/core/status.h"

#include <string>
#include <vector>

namespace hilosim
{

/// Reads `dir`/learner.events and `dir`/worker-W.events of arm `arm_index`. `alive`: by worker,
/// whether its process was running when the arm ended. `faults`: the scenario's faults as hilo-emu
/// injected them (a replay divergence ends when its worker's hash check fails, read from the
/// logs). Corruption or InvalidArgument (naming the file) for an unreadable log; Internal when the
/// learner did not publish every version.
hilo::StatusOr<ArmResult> GatherArm(const ResolvedScenario& sc, size_t arm_index,
                                    const std::string& dir, double wall_s,
                                    const std::vector<bool>& alive,
                                    std::vector<FaultRecord> faults = {});

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_ARM_GATHER_H
