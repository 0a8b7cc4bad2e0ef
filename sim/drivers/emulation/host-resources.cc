#include "sim/drivers/emulation/host-resources.h"

#include "sim/drivers/emulation/host-tools.h"
#include "sim/drivers/emulation/resource-names.h"
#include "sim/drivers/process/file-lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

namespace hilosim
{
namespace
{

// True when `fd` still is the file at `path` (no one removed or replaced it meanwhile).
bool
SameFile(int fd, const std::string& path)
{
    struct stat a
    {
    }, b{};
    return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_ino == b.st_ino &&
           a.st_dev == b.st_dev;
}

} // namespace

RunLock::RunLock(std::string path, int fd)
  : m_path(std::move(path))
  , m_fd(fd)
{
}

RunLock::~RunLock()
{
    unlink(m_path.c_str());
    close(m_fd);
}

hilo::StatusOr<std::unique_ptr<RunLock>>
RunLock::Acquire(const std::string& tag)
{
    std::error_code ec;
    std::filesystem::create_directories(kLockDir, ec);
    if (ec)
    {
        return hilo::Status::Internal(std::string("cannot create ") + kLockDir + ": " +
                                      ec.message());
    }
    const std::string path = LockPath(tag);
    for (int attempt = 0; attempt < 100; ++attempt)
    {
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
        {
            return hilo::Status::Internal("cannot create " + path + ": " + std::strerror(errno));
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        {
            close(fd);
            return hilo::Status::Internal(path + " is held by another process");
        }
        if (SameFile(fd, path))
        {
            return std::unique_ptr<RunLock>(new RunLock(path, fd));
        }
        close(fd); // a cleaner removed the file between our open and flock: take a fresh one
    }
    return hilo::Status::Internal("cannot take " + path);
}

bool
RunIsAlive(const std::string& tag)
{
    int fd = -1;
    if (!TryLockFile(LockPath(tag), &fd))
    {
        // No lock file (never alive, or cleaned up) or a lock held by its run.
        return access(LockPath(tag).c_str(), F_OK) == 0;
    }
    close(fd);
    return false;
}

std::vector<std::string>
ProjectNamespaces()
{
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec))
    {
        const std::string name = entry.path().filename().string();
        if (name.rfind(kResourcePrefix, 0) == 0)
            names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string>
ProjectLinks(const std::string& ip)
{
    std::vector<std::string> names;
    auto r = RunTool({ip, "-o", "link", "show"});
    if (!r.ok() || r->exit_code != 0)
        return names;
    std::istringstream lines(r->output);
    std::string line;
    while (std::getline(lines, line))
    {
        // "7: hilo-2f9k-0: <BROADCAST,...> mtu 1500 ..." (a name may carry "@peer").
        const size_t colon = line.find(": ");
        if (colon == std::string::npos)
            continue;
        std::string name = line.substr(colon + 2, line.find(':', colon + 2) - colon - 2);
        name = name.substr(0, name.find('@'));
        if (name.rfind(kResourcePrefix, 0) == 0)
            names.push_back(name);
    }
    return names;
}

hilo::Status
CreateNamespace(const std::string& ip, const std::string& name)
{
    return RunToolOk({ip, "netns", "add", name});
}

hilo::Status
DeleteNamespace(const std::string& ip, const std::string& name)
{
    auto pids = RunTool({ip, "netns", "pids", name});
    if (pids.ok() && pids->exit_code == 0)
    {
        std::istringstream in(pids->output);
        std::vector<pid_t> alive;
        for (long pid; in >> pid;)
        {
            if (pid > 1 && kill(static_cast<pid_t>(pid), SIGKILL) == 0)
                alive.push_back(static_cast<pid_t>(pid));
        }
        // Not our children (or already reaped): wait until the kernel has let them go.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (pid_t pid : alive)
        {
            while (kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    return RunToolOk({ip, "netns", "delete", name});
}

hilo::StatusOr<std::vector<std::string>>
RemoveStaleResources(const std::string& ip)
{
    std::vector<std::string> removed;
    std::vector<std::string> dead_tags;
    auto dead = [&](const std::string& name)
    {
        auto tag = TagOf(name);
        if (!tag || RunIsAlive(*tag))
            return false;
        if (std::find(dead_tags.begin(), dead_tags.end(), *tag) == dead_tags.end())
            dead_tags.push_back(*tag);
        return true;
    };
    for (const std::string& ns : ProjectNamespaces())
    {
        if (!dead(ns))
            continue;
        HILO_RETURN_IF_ERROR(DeleteNamespace(ip, ns));
        removed.push_back("namespace " + ns);
    }
    for (const std::string& link : ProjectLinks(ip))
    {
        if (!dead(link))
            continue;
        HILO_RETURN_IF_ERROR(RunToolOk({ip, "link", "delete", link}));
        removed.push_back("link " + link);
    }
    // Lock files of dead runs: remove while holding them, so a run taking the same tag at this
    // moment notices (RunLock::Acquire checks that its file is still the one at the path).
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(kLockDir, ec))
    {
        const std::string path = entry.path().string();
        int fd = -1;
        if (TryLockFile(path, &fd))
        {
            unlink(path.c_str());
            close(fd);
        }
    }
    return removed;
}

} // namespace hilosim
