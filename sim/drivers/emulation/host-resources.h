// The machine-wide resources of emulated runs (names: resource-names.h): the run lock that marks a
// run alive, network namespaces, and stale leftovers of runs that were killed (SIGKILL, a crash,
// a power cut of the supervisor): a run removes every namespace and tap with the project's prefix
// whose run is no longer alive, and the processes inside those namespaces, before it creates its
// own. Runs alive at the same time leave each other alone.
#ifndef HILOSIM_DRIVERS_EMULATION_HOST_RESOURCES_H
#define HILOSIM_DRIVERS_EMULATION_HOST_RESOURCES_H

#include "hilo/core/status.h"

#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

/// A run's claim on its tag: kLockDir/hilo-<tag>.lock, held with flock(2) for as long as this
/// object (and so the process) lives; the kernel releases it when the process dies, however it
/// dies. The file is removed by the destructor.
class RunLock
{
  public:
    static hilo::StatusOr<std::unique_ptr<RunLock>> Acquire(const std::string& tag);
    ~RunLock();
    RunLock(const RunLock&) = delete;
    RunLock& operator=(const RunLock&) = delete;

  private:
    RunLock(std::string path, int fd);
    std::string m_path;
    int m_fd;
};

/// True while some process holds the lock of the run tagged `tag`.
bool RunIsAlive(const std::string& tag);

/// Names of the network namespaces (/run/netns) that carry the project's prefix.
std::vector<std::string> ProjectNamespaces();
/// Names of the links that carry the project's prefix, in this process's namespace.
std::vector<std::string> ProjectLinks(const std::string& ip);

/// Creates namespace `name` with `ip`.
hilo::Status CreateNamespace(const std::string& ip, const std::string& name);
/// SIGKILLs every process inside namespace `name` (waiting until they are gone), then deletes it.
hilo::Status DeleteNamespace(const std::string& ip, const std::string& name);

/// Removes the namespaces and links with the project's prefix whose run is not alive (and their
/// processes), and the lock files of dead runs. Returns the names it removed.
hilo::StatusOr<std::vector<std::string>> RemoveStaleResources(const std::string& ip);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_HOST_RESOURCES_H
