#include "sim/drivers/process/child-process.h"

#include "sim/drivers/process/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

namespace hilosim
{

hilo::StatusOr<std::unique_ptr<ChildProcess>>
ChildProcess::Start(const std::vector<std::string>& argv, const std::string& stderr_path,
                    const std::string& name)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    {
        return hilo::Status::Internal("pipe: " + std::string(std::strerror(errno)));
    }
    const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err < 0)
    {
        return hilo::Status::Internal("cannot open " + stderr_path + ": " + std::strerror(errno));
    }
    auto spawned = SpawnChild(argv, in[0], out[1], err, "hilo-emu");
    if (!spawned.ok())
    {
        for (int fd : {in[0], in[1], out[0], out[1], err})
            close(fd);
        return spawned.status();
    }
    const pid_t pid = *spawned;
    close(in[0]);
    close(out[1]);
    close(err);
    std::unique_ptr<ChildProcess> c(new ChildProcess());
    c->m_pid = pid;
    c->m_stdin = in[1];
    c->m_stdout = out[0];
    c->m_name = name;
    c->m_stderrPath = stderr_path;
    return c;
}

ChildProcess::~ChildProcess()
{
    if (!m_exited && m_pid > 0)
    {
        Terminate(1.0);
    }
    if (m_stdin >= 0)
        close(m_stdin);
    if (m_stdout >= 0)
        close(m_stdout);
}

std::optional<std::string>
ChildProcess::ReadLine(double timeout_s)
{
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    while (true)
    {
        const size_t nl = m_buffer.find('\n');
        if (nl != std::string::npos)
        {
            std::string line = m_buffer.substr(0, nl);
            m_buffer.erase(0, nl + 1);
            return line;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0 || m_stdout < 0)
        {
            return std::nullopt;
        }
        pollfd p{m_stdout, POLLIN, 0};
        const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
        if (r < 0 && errno != EINTR)
        {
            return std::nullopt;
        }
        if (r > 0)
        {
            char buf[256];
            const ssize_t n = read(m_stdout, buf, sizeof(buf));
            if (n <= 0)
            {
                return std::nullopt; // end of file: the child closed stdout or exited
            }
            m_buffer.append(buf, static_cast<size_t>(n));
        }
        else if (Poll())
        {
            return std::nullopt;
        }
    }
}

bool
ChildProcess::WriteLine(const std::string& line)
{
    const std::string data = line + "\n";
    const ssize_t n = write(m_stdin, data.data(), data.size());
    return n == static_cast<ssize_t>(data.size());
}

bool
ChildProcess::Poll()
{
    if (m_exited)
    {
        return true;
    }
    int status = 0;
    rusage usage{};
    const pid_t r = wait4(m_pid, &status, WNOHANG, &usage);
    if (r == m_pid)
    {
        m_exited = true;
        m_peakRssKiB = static_cast<uint64_t>(usage.ru_maxrss);
        if (WIFSIGNALED(status))
        {
            m_signalled = true;
            m_code = 128 + WTERMSIG(status);
        }
        else
        {
            m_code = WEXITSTATUS(status);
        }
    }
    return m_exited;
}

std::string
ChildProcess::Describe() const
{
    if (!m_exited)
    {
        return "is still running";
    }
    if (m_signalled)
    {
        const int sig = m_code - 128;
        return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    return "exited with code " + std::to_string(m_code);
}

void
ChildProcess::Signal(int signal)
{
    if (!Poll())
    {
        kill(m_pid, signal);
    }
}

void
ChildProcess::Terminate(double grace_s)
{
    if (Poll())
    {
        return;
    }
    kill(m_pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(grace_s));
    while (!Poll() && std::chrono::steady_clock::now() < deadline)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!m_exited)
    {
        kill(m_pid, SIGKILL);
        int status = 0;
        rusage usage{};
        wait4(m_pid, &status, 0, &usage);
        m_peakRssKiB = static_cast<uint64_t>(usage.ru_maxrss);
        m_exited = true;
        m_signalled = true;
        m_code = 128 + SIGKILL;
    }
}

std::string
ChildProcess::StderrTail(int lines) const
{
    std::ifstream in(m_stderrPath);
    std::deque<std::string> tail;
    std::string line;
    while (std::getline(in, line))
    {
        tail.push_back(line);
        if (static_cast<int>(tail.size()) > lines)
            tail.pop_front();
    }
    std::string out;
    for (const std::string& l : tail)
        out += "    " + l + "\n";
    return out;
}

} // namespace hilosim
