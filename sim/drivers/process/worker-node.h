// RunWorker: a worker as a process (node-runner.h says what it does and when it exits): dials
// the learner (and its region's relay), runs a WorkerRole, redials with the role's backoff.
#ifndef HILOSIM_DRIVERS_PROCESS_WORKER_NODE_H
#define HILOSIM_DRIVERS_PROCESS_WORKER_NODE_H

#include "sim/drivers/process/node-runner.h"
#include "sim/drivers/process/node-setup.h"

#include <ostream>

namespace hilosim
{

/// Returns the process exit code; errors go to `err`.
int RunWorker(const NodeOptions& o, ArmSetup& setup, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_WORKER_NODE_H
