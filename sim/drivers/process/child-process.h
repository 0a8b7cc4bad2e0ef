// ChildProcess: a node process hilo-emu started (fork + exec). Its stdin and stdout are pipes (the
// start handshake: "ready PORT" out, the run's epoch in), its stderr goes to a file. The child
// asks the kernel to SIGKILL it when its parent dies (PR_SET_PDEATHSIG), so even a hilo-emu
// killed with SIGKILL leaves no orphan; the destructor kills and reaps a child still running.
#ifndef HILOSIM_DRIVERS_PROCESS_CHILD_PROCESS_H
#define HILOSIM_DRIVERS_PROCESS_CHILD_PROCESS_H

#include "hilo/core/status.h"

#include <sys/types.h>

#include <cstdint>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

class ChildProcess
{
  public:
    /// Starts `argv` (argv[0]: the executable's path) with stderr appended to `stderr_path`.
    /// `name` ("worker 3") is for messages.
    static hilo::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                               const std::string& stderr_path,
                                                               const std::string& name);
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return m_pid; }
    const std::string& name() const { return m_name; }
    const std::string& stderr_path() const { return m_stderrPath; }

    /// Reads one line from the child's stdout, waiting at most `timeout_s`; nullopt on timeout,
    /// end of file or the child's exit.
    std::optional<std::string> ReadLine(double timeout_s);
    /// Writes `line` and a newline to the child's stdin. False when the pipe is closed.
    bool WriteLine(const std::string& line);

    /// Non-blocking: true once the child has exited (exit_code() then tells how).
    bool Poll();
    bool exited() const { return m_exited; }
    /// Exit status as a shell reports it: the code, or 128 + the signal that killed it.
    int exit_code() const { return m_code; }
    /// "exited with code 1" / "killed by signal 9 (Killed)".
    std::string Describe() const;
    /// Once exited: the most memory it held resident (the kernel's ru_maxrss, KiB); 0 before.
    uint64_t peak_rss_kib() const { return m_peakRssKiB; }

    /// Sends `signal` (when still running).
    void Signal(int signal);
    /// SIGTERM, then SIGKILL after `grace_s`; reaps the child.
    void Terminate(double grace_s);
    /// The last `lines` lines of its stderr file.
    std::string StderrTail(int lines) const;

  private:
    ChildProcess() = default;

    pid_t m_pid{-1};
    int m_stdin{-1};
    int m_stdout{-1};
    std::string m_name;
    std::string m_stderrPath;
    std::string m_buffer; // stdout bytes read but not yet returned as a line
    bool m_exited{false};
    int m_code{0};
    bool m_signalled{false};
    uint64_t m_peakRssKiB{0};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_CHILD_PROCESS_H
