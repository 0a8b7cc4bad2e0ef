// The names of everything an emulated run creates on the machine. Every network namespace, tap
// device and lock file carries the project's prefix "hilo-" and the run's tag (the owning
// hilo-emu's pid in base 36), so that a later run can tell its own resources from those of a run
// that was killed (sim/drivers/emulation/host-resources.h), and a person can find them:
//   namespaces  hilo-<tag>-core (the ns-3 process), hilo-<tag>-learner, hilo-<tag>-worker-<w>,
//               hilo-<tag>-relay-<r>
//   taps        hilo-<tag>-<n> (at most 15 characters, the kernel's limit)
//   lock        /run/hilo-emu/hilo-<tag>.lock, held (flock) for as long as the run lives
// Processes are hilo-emu, hilo-netem and hilo-node.
#ifndef HILOSIM_DRIVERS_EMULATION_RESOURCE_NAMES_H
#define HILOSIM_DRIVERS_EMULATION_RESOURCE_NAMES_H

#include "sim/drivers/process/node-network.h"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace hilosim
{

/// "hilo-".
extern const char* const kResourcePrefix;
/// Where the runs' lock files live ("/run/hilo-emu").
extern const char* const kLockDir;

/// The tag of the run owned by process `pid`: pid in base 36, at most 5 characters.
std::string RunTag(pid_t pid);
/// The tag of a resource name ("hilo-2f9k-worker-3" -> "2f9k"); nullopt for a name that is not
/// one of ours.
std::optional<std::string> TagOf(const std::string& name);

std::string CoreNamespace(const std::string& tag);
std::string HostNamespace(const std::string& tag, NodeRole role, uint32_t index);
/// REQUIRES: n < 10000.
std::string TapName(const std::string& tag, uint32_t n);
std::string LockPath(const std::string& tag);

/// "learner", "worker 3", "relay 0".
std::string NodeName(NodeRole role, uint32_t index);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_RESOURCE_NAMES_H
