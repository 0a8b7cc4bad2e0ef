// RunLearner: the learner as a process (node-runner.h says what it does and when it exits):
// listens for the scenario's workers (and relays), runs a LearnerRole wired by LearnerWiring.
#ifndef HILOSIM_DRIVERS_PROCESS_LEARNER_NODE_H
#define HILOSIM_DRIVERS_PROCESS_LEARNER_NODE_H

#include "sim/drivers/process/node-runner.h"
#include "sim/drivers/process/node-setup.h"

#include <ostream>

namespace hilosim
{

/// Returns the process exit code; errors go to `err`.
int RunLearner(const NodeOptions& o, ArmSetup& setup, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_LEARNER_NODE_H
