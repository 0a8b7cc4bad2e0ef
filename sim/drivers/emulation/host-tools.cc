#include "sim/drivers/emulation/host-tools.h"

#include "sim/drivers/process/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>

namespace hilosim
{
namespace
{

std::string
Errno(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

std::string
Join(const std::vector<std::string>& argv)
{
    std::string s;
    for (const std::string& a : argv)
    {
        s += (s.empty() ? "" : " ") + a;
    }
    return s;
}

std::string
SysctlPath(const std::string& key)
{
    std::string path = "/proc/sys/" + key;
    std::replace(path.begin() + 10, path.end(), '.', '/');
    return path;
}

// Runs `fn` with the calling thread inside network namespace `netns`, then returns it to the
// namespace it was in.
hilo::Status
InNamespace(const std::string& netns, const std::function<hilo::Status()>& fn)
{
    const int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (own < 0)
    {
        return hilo::Status::Internal(Errno("cannot open this thread's network namespace"));
    }
    const std::string path = "/run/netns/" + netns;
    const int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0)
    {
        const std::string e = Errno("cannot open " + path);
        close(own);
        return hilo::Status::Internal(e);
    }
    if (setns(target, CLONE_NEWNET) != 0)
    {
        const std::string e = Errno("cannot enter network namespace " + netns);
        close(target);
        close(own);
        return hilo::Status::Internal(e);
    }
    close(target);
    hilo::Status status = fn();
    if (setns(own, CLONE_NEWNET) != 0)
    {
        // Staying in the wrong namespace would put every later child there: give up loudly.
        std::perror("hilo-emu: cannot return to its own network namespace");
        std::abort();
    }
    close(own);
    return status;
}

} // namespace

hilo::StatusOr<ToolResult>
RunTool(const std::vector<std::string>& argv, const std::string& input, double timeout_s)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0)
    {
        return hilo::Status::Internal(Errno("pipe"));
    }
    if (pipe2(out, O_CLOEXEC) != 0)
    {
        close(in[0]);
        close(in[1]);
        return hilo::Status::Internal(Errno("pipe"));
    }
    auto spawned = SpawnChild(argv, in[0], out[1], out[1], "hilo-emu");
    if (!spawned.ok())
    {
        for (int fd : {in[0], in[1], out[0], out[1]})
            close(fd);
        return spawned.status();
    }
    const pid_t pid = *spawned;
    close(in[0]);
    close(out[1]);
    ToolResult result;
    size_t written = 0;
    int to_child = in[1];
    if (input.empty())
    {
        close(to_child);
        to_child = -1;
    }
    else
    {
        fcntl(to_child, F_SETFL, O_NONBLOCK);
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    bool timed_out = false;
    while (true)
    {
        pollfd fds[2] = {{out[0], POLLIN, 0}, {to_child, POLLOUT, 0}};
        const int n = to_child >= 0 ? 2 : 1;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0)
        {
            timed_out = true;
            break;
        }
        const int r = poll(fds, n, static_cast<int>(std::min<long long>(left, 1000)));
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (to_child >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP)))
        {
            const ssize_t w = write(to_child, input.data() + written, input.size() - written);
            if (w > 0)
                written += static_cast<size_t>(w);
            if (w < 0 || written == input.size())
            {
                close(to_child);
                to_child = -1;
            }
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
            char buf[4096];
            const ssize_t got = read(out[0], buf, sizeof(buf));
            if (got <= 0)
                break; // end of file: the child is done
            result.output.append(buf, static_cast<size_t>(got));
        }
    }
    if (to_child >= 0)
        close(to_child);
    close(out[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    {
    }
    if (timed_out)
    {
        return hilo::Status::Internal("\"" + Join(argv) + "\" did not finish within " +
                                      std::to_string(int(timeout_s)) + " s");
    }
    result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    return result;
}

hilo::Status
RunToolOk(const std::vector<std::string>& argv, const std::string& input, double timeout_s)
{
    auto r = RunTool(argv, input, timeout_s);
    if (!r.ok())
    {
        return r.status();
    }
    if (r->exit_code != 0)
    {
        std::string output = r->output;
        while (!output.empty() && output.back() == '\n')
            output.pop_back();
        return hilo::Status::Internal("\"" + Join(argv) + "\" exited with code " +
                                      std::to_string(r->exit_code) + ": " + output);
    }
    return hilo::Status::Ok();
}

std::string
FindExecutable(const std::vector<std::string>& candidates)
{
    for (const std::string& c : candidates)
    {
        if (access(c.c_str(), X_OK) == 0)
        {
            return c;
        }
    }
    return "";
}

hilo::Status
WriteSysctls(const std::string& netns,
             const std::vector<std::pair<std::string, std::string>>& values)
{
    return InNamespace(netns,
                       [&]() -> hilo::Status
                       {
                           for (const auto& [key, value] : values)
                           {
                               const std::string path = SysctlPath(key);
                               const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
                               const bool ok = fd >= 0 && write(fd, value.data(), value.size()) ==
                                                              static_cast<ssize_t>(value.size());
                               const int error = errno;
                               if (fd >= 0)
                                   close(fd);
                               if (!ok)
                               {
                                   return hilo::Status::Internal(
                                       "cannot set " + key + " = \"" + value + "\" in namespace " +
                                       netns + ": " + std::strerror(error));
                               }
                           }
                           return hilo::Status::Ok();
                       });
}

hilo::StatusOr<std::string>
ReadSysctl(const std::string& netns, const std::string& key)
{
    std::string value;
    hilo::Status s = InNamespace(netns,
                                 [&]() -> hilo::Status
                                 {
                                     const std::string path = SysctlPath(key);
                                     const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
                                     if (fd < 0)
                                         return hilo::Status::Internal(Errno("cannot read " + key));
                                     char buf[512];
                                     const ssize_t n = read(fd, buf, sizeof(buf));
                                     close(fd);
                                     if (n < 0)
                                         return hilo::Status::Internal(Errno("cannot read " + key));
                                     value.assign(buf, static_cast<size_t>(n));
                                     return hilo::Status::Ok();
                                 });
    if (!s.ok())
    {
        return s;
    }
    while (!value.empty() && (value.back() == '\n' || value.back() == ' '))
        value.pop_back();
    return value;
}

} // namespace hilosim
