#include "sim/run/forked-jobs.h"

#include "hilo/core/coding.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>

namespace hilosim
{
namespace
{

// What a child writes to its pipe before it exits 0: a u8 status code (0: ok), a u64 length, and
// that many bytes (the result, or the error's message).
constexpr size_t kFrameHeaderBytes = 9;

struct Running
{
    size_t job{0};
    pid_t pid{-1};
    int fd{-1};        // read end of the child's pipe; -1 once it reached end of file
    std::string frame; // bytes read so far
};

bool
WriteAll(int fd, const std::string& bytes)
{
    size_t done = 0;
    while (done < bytes.size())
    {
        const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

// The child's side: runs the job, writes its frame, never returns.
[[noreturn]] void
RunChild(const ForkedJob& job, int write_fd, pid_t parent)
{
    // Killed with the caller, whatever kills it (a caller that died before this took effect is
    // no longer our parent).
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(1);
    hilo::StatusOr<std::string> result = hilo::Status::Internal("the job did not run");
    try
    {
        result = job.run();
    }
    catch (const std::exception& e)
    {
        result = hilo::Status::Internal(e.what());
    }
    const std::string& body = result.ok() ? *result : result.status().message();
    std::string frame;
    hilo::ByteWriter w(&frame);
    w.PutU8(result.ok() ? 0 : static_cast<uint8_t>(result.status().code()));
    w.PutU64(body.size());
    frame += body;
    std::fflush(nullptr);
    _exit(WriteAll(write_fd, frame) ? 0 : 1);
}

std::string
Ended(int wait_status)
{
    if (WIFSIGNALED(wait_status))
    {
        const int sig = WTERMSIG(wait_status);
        return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    return "exited with code " + std::to_string(WEXITSTATUS(wait_status));
}

// The job's result from its finished child: its frame when it exited 0 with a whole one.
hilo::StatusOr<std::string>
Collect(const ForkedJob& job, const Running& r, int wait_status)
{
    hilo::ByteReader reader(r.frame);
    uint8_t code = 0;
    uint64_t size = 0;
    const bool whole = reader.GetU8(&code) && reader.GetU64(&size) && size == reader.remaining() &&
                       code <= static_cast<uint8_t>(hilo::StatusCode::kInternal);
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 || !whole)
    {
        return hilo::Status::Internal(job.name + ": its process " + Ended(wait_status) +
                                      " without a result");
    }
    std::string body = r.frame.substr(kFrameHeaderBytes);
    if (code != 0)
        return hilo::Status(static_cast<hilo::StatusCode>(code), std::move(body));
    return body;
}

int
WaitFor(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    {
    }
    return status;
}

// Ends every child still running (SIGTERM) and reaps it.
void
StopAll(std::vector<Running>* running)
{
    for (const Running& r : *running)
        kill(r.pid, SIGTERM);
    for (Running& r : *running)
    {
        if (r.fd >= 0)
            close(r.fd);
        WaitFor(r.pid);
    }
    running->clear();
}

hilo::StatusOr<Running>
Start(const std::vector<ForkedJob>& jobs, size_t job, const std::vector<Running>& running)
{
    int fds[2];
    if (pipe(fds) != 0)
        return hilo::Status::Internal("pipe: " + std::string(std::strerror(errno)));
    std::fflush(nullptr); // nothing buffered is written twice
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0)
    {
        const std::string why = std::strerror(errno);
        close(fds[0]);
        close(fds[1]);
        return hilo::Status::Internal("fork: " + why);
    }
    if (pid == 0)
    {
        close(fds[0]);
        for (const Running& r : running)
        {
            if (r.fd >= 0)
                close(r.fd);
        }
        RunChild(jobs[job], fds[1], parent);
    }
    close(fds[1]);
    Running r;
    r.job = job;
    r.pid = pid;
    r.fd = fds[0];
    return r;
}

} // namespace

hilo::StatusOr<std::vector<std::string>>
RunForkedJobs(const std::vector<ForkedJob>& jobs, size_t parallel)
{
    if (parallel < 1)
        return hilo::Status::InvalidArgument("RunForkedJobs: parallel must be at least 1");
    std::vector<std::string> results(jobs.size());
    std::vector<Running> running;
    size_t next = 0;
    while (next < jobs.size() || !running.empty())
    {
        while (running.size() < parallel && next < jobs.size())
        {
            auto started = Start(jobs, next++, running);
            if (!started.ok())
            {
                StopAll(&running);
                return started.status();
            }
            running.push_back(std::move(*started));
        }
        std::vector<pollfd> polled;
        for (const Running& r : running)
            polled.push_back(pollfd{r.fd, POLLIN, 0});
        if (poll(polled.data(), polled.size(), -1) < 0)
        {
            if (errno == EINTR)
                continue;
            const std::string why = std::strerror(errno);
            StopAll(&running);
            return hilo::Status::Internal("poll: " + why);
        }
        for (size_t i = 0; i < polled.size(); ++i)
        {
            if (polled[i].revents == 0)
                continue;
            Running& r = running[i];
            char buf[1 << 16];
            const ssize_t n = read(r.fd, buf, sizeof(buf));
            if (n > 0)
            {
                r.frame.append(buf, static_cast<size_t>(n));
                continue;
            }
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            // End of file (or a broken pipe): the child is done writing.
            close(r.fd);
            r.fd = -1;
        }
        for (size_t i = 0; i < running.size();)
        {
            if (running[i].fd >= 0)
            {
                ++i;
                continue;
            }
            const Running done = std::move(running[i]);
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
            auto result = Collect(jobs[done.job], done, WaitFor(done.pid));
            if (!result.ok())
            {
                StopAll(&running);
                return result.status();
            }
            results[done.job] = std::move(*result);
        }
    }
    return results;
}

} // namespace hilosim
