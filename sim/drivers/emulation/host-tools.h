// Small, shell-free access to the host's networking tools for the emulated network: running a
// command (iproute2's `ip`) and writing sysctls inside a network namespace.
#ifndef HILOSIM_DRIVERS_EMULATION_HOST_TOOLS_H
#define HILOSIM_DRIVERS_EMULATION_HOST_TOOLS_H

#include "hilo/core/status.h"

#include <string>
#include <utility>
#include <vector>

namespace hilosim
{

struct ToolResult
{
    int exit_code{-1};  // as a shell reports it (128 + N when killed by signal N)
    std::string output; // stdout and stderr together
};

/// Runs `argv` (argv[0]: an executable's path; no shell) with `input` on its stdin and waits for
/// it, at most `timeout_s` (then kills it). The child dies with its parent (PR_SET_PDEATHSIG) and
/// starts with no signal blocked. Internal when it cannot be started.
hilo::StatusOr<ToolResult> RunTool(const std::vector<std::string>& argv,
                                   const std::string& input = "", double timeout_s = 30);

/// As RunTool, but an exit code other than 0 is an Internal error quoting the command and its
/// output.
hilo::Status RunToolOk(const std::vector<std::string>& argv, const std::string& input = "",
                       double timeout_s = 30);

/// The first of `candidates` that is an executable file; "" when none is.
std::string FindExecutable(const std::vector<std::string>& candidates);

/// Writes each sysctl ("net.ipv4.ip_forward", "1") inside the network namespace `netns` (a name
/// under /run/netns). The calling thread enters the namespace and returns to its own before
/// this returns. The first failure is an error naming the key, the value and the namespace.
hilo::Status WriteSysctls(const std::string& netns,
                          const std::vector<std::pair<std::string, std::string>>& values);

/// Reads one sysctl of namespace `netns` (trailing newline removed).
hilo::StatusOr<std::string> ReadSysctl(const std::string& netns, const std::string& key);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_HOST_TOOLS_H
