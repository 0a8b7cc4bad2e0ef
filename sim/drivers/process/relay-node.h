// RunRelay: a region's relay as a process (node-runner.h says what it does and when it exits):
// listens for its region's workers, dials the learner, stores and forwards its updates.
#ifndef HILOSIM_DRIVERS_PROCESS_RELAY_NODE_H
#define HILOSIM_DRIVERS_PROCESS_RELAY_NODE_H

#include "sim/drivers/process/node-runner.h"
#include "sim/drivers/process/node-setup.h"

#include <ostream>

namespace hilosim
{

/// Returns the process exit code; errors go to `err`.
int RunRelay(const NodeOptions& o, ArmSetup& setup, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_RELAY_NODE_H
