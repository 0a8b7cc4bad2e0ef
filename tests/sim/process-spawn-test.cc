// SpawnChild (sim/drivers/process/spawn.h), which starts every node, hilo-netem and host tool: a
// child starts with no signal blocked and SIGPIPE at its default action whatever its parent set
// (hilo-emu blocks SIGINT/SIGTERM and ignores SIGPIPE), asks to die with its parent, and a
// failed exec says so and exits 127.
#include "sim/drivers/process/spawn.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <sstream>
#include <string>

namespace hilosim
{
namespace
{

// Runs argv through SpawnChild and returns its exit code and what it wrote (stdout and stderr).
std::pair<int, std::string>
RunSpawned(const std::vector<std::string>& argv)
{
    int out[2];
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    const int null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    auto pid = SpawnChild(argv, null_in, out[1], out[1], "spawn-test");
    close(null_in);
    close(out[1]);
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(out[0], buf, sizeof(buf))) > 0;)
        text.append(buf, static_cast<size_t>(n));
    close(out[0]);
    int status = 0;
    waitpid(*pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

// The hexadecimal mask after `field` ("SigBlk:") in /proc/PID/status text.
unsigned long long
Mask(const std::string& status, const std::string& field)
{
    const size_t at = status.find(field);
    EXPECT_NE(at, std::string::npos) << status;
    return std::stoull(status.substr(at + field.size()), nullptr, 16);
}

TEST(SpawnChild, AChildStartsWithNoSignalBlockedAndSigpipeAtItsDefault)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    ASSERT_EQ(sigprocmask(SIG_BLOCK, &block, &old), 0);
    const auto old_pipe = signal(SIGPIPE, SIG_IGN);
    auto [code, status] = RunSpawned({"/bin/cat", "/proc/self/status"});
    signal(SIGPIPE, old_pipe);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    EXPECT_EQ(code, 0) << status;
    EXPECT_EQ(Mask(status, "SigBlk:"), 0u) << status;
    EXPECT_EQ(Mask(status, "SigIgn:") & (1ull << (SIGPIPE - 1)), 0u) << "SIGPIPE still ignored";
}

TEST(SpawnChild, AFailedExecSaysSoAndExits127)
{
    auto [code, text] = RunSpawned({"/nonexistent/binary", "arg"});
    EXPECT_EQ(code, 127);
    EXPECT_NE(text.find("spawn-test: exec of /nonexistent/binary failed"), std::string::npos)
        << text;
}

} // namespace
} // namespace hilosim
