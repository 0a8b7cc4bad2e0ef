// SpawnChild: fork + exec of a helper process the way every process the drivers start is started
// (hilo-emu's nodes, hilo-netem, iproute2 and other host tools): the child is SIGKILLed when its
// parent dies (PR_SET_PDEATHSIG; one whose parent died before that took effect exits 127), starts
// with no signal blocked and SIGPIPE at its default action (hilo-emu blocks SIGINT/SIGTERM and
// ignores SIGPIPE, and both would survive exec), and gets the given descriptors as its standard
// streams. An exec that fails writes "<what>: exec of ARGV0 failed" to its stderr and exits 127.
#ifndef HILOSIM_DRIVERS_PROCESS_SPAWN_H
#define HILOSIM_DRIVERS_PROCESS_SPAWN_H

#include "hilo/core/status.h"

#include <sys/types.h>

#include <string>
#include <vector>

namespace hilosim
{

/// Starts `argv` (argv[0]: the executable's path) with `stdin_fd`, `stdout_fd` and `stderr_fd`
/// as its standard streams (the caller keeps, and closes, its own copies). Returns the child's
/// pid; Internal when fork fails. `what` names the caller in the exec failure message.
hilo::StatusOr<pid_t> SpawnChild(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd,
                                 int stderr_fd, const char* what);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_SPAWN_H
