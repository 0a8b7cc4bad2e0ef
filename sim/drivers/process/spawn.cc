#include "sim/drivers/process/spawn.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace hilosim
{

hilo::StatusOr<pid_t>
SpawnChild(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd, int stderr_fd,
           const char* what)
{
    std::vector<char*> args;
    for (const std::string& a : argv)
    {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    // Prepared before fork: the child makes only async-signal-safe calls until exec.
    const std::string failed =
        std::string(what) + ": exec of " + (argv.empty() ? "" : argv[0]) + " failed\n";
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0)
    {
        return hilo::Status::Internal("fork: " + std::string(std::strerror(errno)));
    }
    if (pid == 0)
    {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        signal(SIGPIPE, SIG_DFL);
        if (getppid() != parent)
        {
            _exit(127); // the parent died before the prctl took effect
        }
        dup2(stdin_fd, STDIN_FILENO);
        dup2(stdout_fd, STDOUT_FILENO);
        dup2(stderr_fd, STDERR_FILENO);
        if (!args.empty() && args[0] != nullptr)
        {
            execv(args[0], args.data());
        }
        (void) !write(STDERR_FILENO, failed.data(), failed.size());
        _exit(127);
    }
    return pid;
}

} // namespace hilosim
