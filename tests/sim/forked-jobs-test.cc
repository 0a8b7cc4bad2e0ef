// RunForkedJobs: results in job order whatever order the children end in, a failing job stops
// the others and names itself, and no child outlives a caller that is killed.
#include "sim/run/forked-jobs.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

namespace hilosim
{
namespace
{

// Writes this process's pid to `fd` (a pipe the test reads), then waits to be killed.
[[noreturn]] void
ReportPidAndWait(int fd)
{
    const pid_t pid = getpid();
    (void) !write(fd, &pid, sizeof pid);
    for (;;)
        pause();
}

// True once `pid` no longer runs (gone, or a zombie waiting for its new parent to reap it).
bool
Ended(pid_t pid)
{
    for (int i = 0; i < 500; ++i)
    {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return true;
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string fields[3];
        if (!(stat >> fields[0] >> fields[1] >> fields[2]) || fields[2] == "Z" || fields[2] == "X")
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

std::vector<pid_t>
ReadPids(int fd, size_t n)
{
    std::vector<pid_t> pids(n);
    for (pid_t& p : pids)
        EXPECT_EQ(read(fd, &p, sizeof p), static_cast<ssize_t>(sizeof p));
    return pids;
}

TEST(ForkedJobs, ResultsComeBackInJobOrder)
{
    // The first job ends last; a result larger than a pipe's buffer arrives whole.
    std::vector<ForkedJob> jobs;
    jobs.push_back({"slow",
                    []() -> hilo::StatusOr<std::string>
                    {
                        std::this_thread::sleep_for(std::chrono::milliseconds(200));
                        return std::string("slow:") + std::to_string(getpid());
                    }});
    jobs.push_back({"big",
                    []() -> hilo::StatusOr<std::string>
                    {
                        std::string s(1 << 20, 'x');
                        s[12345] = 'y';
                        return s;
                    }});
    jobs.push_back({"empty", []() -> hilo::StatusOr<std::string> { return std::string(); }});
    auto r = RunForkedJobs(jobs, 2);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ((*r)[0].rfind("slow:", 0), 0u);
    EXPECT_NE((*r)[0], "slow:" + std::to_string(getpid())); // it ran in another process
    EXPECT_EQ((*r)[1].size(), size_t(1) << 20);
    EXPECT_EQ((*r)[1][12345], 'y');
    EXPECT_EQ((*r)[2], "");
}

TEST(ForkedJobs, AJobErrorComesBackUnchangedAndStopsTheOthers)
{
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    std::vector<ForkedJob> jobs;
    jobs.push_back({"waits", [&]() -> hilo::StatusOr<std::string> { ReportPidAndWait(fds[1]); }});
    jobs.push_back({"fails",
                    [&]() -> hilo::StatusOr<std::string>
                    {
                        // Fails only once the other job runs, so that there is one to stop.
                        pid_t other;
                        (void) !read(fds[0], &other, sizeof other);
                        (void) !write(fds[1], &other, sizeof other);
                        return hilo::Status::BudgetTooSmall("budget 1 B is below 80 B");
                    }});
    jobs.push_back({"never", []() -> hilo::StatusOr<std::string> { return std::string("ran"); }});
    auto r = RunForkedJobs(jobs, 2);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), hilo::StatusCode::kBudgetTooSmall);
    EXPECT_EQ(r.status().message(), "budget 1 B is below 80 B");
    const std::vector<pid_t> waiting = ReadPids(fds[0], 1);
    EXPECT_TRUE(Ended(waiting[0]));
    close(fds[0]);
    close(fds[1]);
}

TEST(ForkedJobs, AProcessWithoutAResultIsNamed)
{
    std::vector<ForkedJob> crash{{"arm 'b'",
                                  []() -> hilo::StatusOr<std::string>
                                  {
                                      raise(SIGSEGV);
                                      return std::string();
                                  }}};
    auto r = RunForkedJobs(crash, 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), hilo::StatusCode::kInternal);
    EXPECT_NE(r.status().message().find("arm 'b': its process was killed by signal 11"),
              std::string::npos)
        << r.status().message();

    std::vector<ForkedJob> exits{{"arm 'c'", []() -> hilo::StatusOr<std::string> { _exit(3); }}};
    r = RunForkedJobs(exits, 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "arm 'c': its process exited with code 3 without a result");

    std::vector<ForkedJob> throws{{"arm 'd'", []() -> hilo::StatusOr<std::string> {
                                       throw std::runtime_error("out of tensors");
                                   }}};
    r = RunForkedJobs(throws, 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), hilo::StatusCode::kInternal);
    EXPECT_EQ(r.status().message(), "out of tensors");

    EXPECT_EQ(RunForkedJobs(exits, 0).status().code(), hilo::StatusCode::kInvalidArgument);
}

TEST(ForkedJobs, KillingTheCallerEndsEveryChild)
{
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t caller = fork();
    ASSERT_GE(caller, 0);
    if (caller == 0)
    {
        std::vector<ForkedJob> jobs;
        for (int i = 0; i < 2; ++i)
            jobs.push_back(
                {"waits", [&]() -> hilo::StatusOr<std::string> { ReportPidAndWait(fds[1]); }});
        RunForkedJobs(jobs, 2);
        _exit(0);
    }
    const std::vector<pid_t> children = ReadPids(fds[0], 2);
    ASSERT_EQ(kill(caller, SIGTERM), 0);
    int status = 0;
    ASSERT_EQ(waitpid(caller, &status, 0), caller);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    for (pid_t child : children)
        EXPECT_TRUE(Ended(child)) << child;
    close(fds[0]);
    close(fds[1]);
}

} // namespace
} // namespace hilosim
