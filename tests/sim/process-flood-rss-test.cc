// What a flood costs a real learner (`hilo-node learner` with a key, on loopback), measured as
// the growth of the learner process's resident memory (/proc/PID/status: VmHWM, the peak, against
// VmRSS before the flood), and that the run still completes for the honest workers:
// - 2,000 resync requests from an authenticated member that never reads (served once per
//   connection and learner version, sim/roles/learner-role.h);
// - a slow reader: an authenticated member that never reads while the learner publishes, asking
//   for a catch-up with a snapshot all the while (one per version; the send-queue cap behind it);
// - a header announcing 2 GiB, before and after the hello (refused on the header: nothing is
//   allocated for it);
// - 1,000 idle connections that never say hello (admission, tcp-transport.h).
// The arm is emu-slow at LoRA rank 32: a snapshot catch-up is ~0.2 MB and the send-queue cap
// (twice the frame limit, peer-limits.h) ~90 MB, so only the one-catch-up rule keeps the first
// two floods under the bound. Each test prints its numbers (results/faults/README.md).
#include "sim/drivers/process/child-process.h"
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/record-cipher.h"
#include "sim/net/frame-header.h"
#include "sim/roles/peer-ids.h"
#include "sim/roles/role-messages.h"

#include "tests/sim/process-keyed-run-util.h"
#include "tests/sim/process-test-util.h"
#include "tests/sim/scenario-test-util.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

namespace hilosim
{
namespace
{

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

using test::Authenticate;
using test::Framed;
using test::Sealed;

constexpr double kBoundMiB = 64;

/// A field of /proc/PID/status in kB ("VmHWM", "VmRSS"); -1 when the process is gone.
int64_t
StatusKb(pid_t pid, const std::string& field)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
    {
        if (line.rfind(field + ":", 0) == 0)
            return std::stoll(line.substr(field.size() + 1));
    }
    return -1;
}

/// The parts of a KeyedRun built before its nodes: a sandbox of emu-slow.textproto (its name
/// this process's own) and the run's key file.
struct KeyedSandbox
{
    test::ProcessSandbox sandbox;
    std::string key_file;
    std::string key; // bytes

    explicit KeyedSandbox(const std::string& name)
      : sandbox("hilo-node-rss-" + name + "-" + std::to_string(getpid()),
                test::DataPath("emu-slow.textproto"))
      , key_file(test::WriteKeyFile(sandbox.dir, "run.key", test::kRunKeyHex))
    {
        auto parsed = PeerAuth::ParseKey(test::kRunKeyHex, "run.key");
        EXPECT_TRUE(parsed.ok());
        key = parsed.ok() ? *parsed : "";
    }
};

// The learner (with the run's key) and its honest workers, started by hand as across machines,
// every node with the scenario `overrides` (--set).
struct KeyedRun
  : KeyedSandbox
  , test::NodeRun
{
    KeyedRun(const std::string& name, const std::vector<std::string>& overrides)
      : KeyedSandbox(name)
      , NodeRun(sandbox)
    {
        extra = {"--key-file", key_file};
        for (const std::string& s : overrides)
            extra.insert(extra.end(), {"--set", s});
    }

    void StartWorker(int w)
    {
        auto c = NodeRun::StartWorker(w);
        ASSERT_TRUE(c);
        workers.push_back(std::move(c));
    }

    /// Both honest workers run to the end: the learner exits 0 and so does every worker, each
    /// having announced the last version.
    void ExpectHonestRunCompletes()
    {
        ASSERT_NO_FATAL_FAILURE(StartWorker(0));
        ASSERT_NO_FATAL_FAILURE(StartWorker(1));
        ASSERT_NO_FATAL_FAILURE(ExpectEveryoneEndsWell());
        PrintLog();
    }

    /// The learner exits 0 having heard both workers' done, every worker started exits 0, and no
    /// process of the run is left.
    void ExpectEveryoneEndsWell()
    {
        ASSERT_EQ(WaitLearner(180), 0) << learner->StderrTail(30);
        EXPECT_EQ(EventLines("done "), 2);
        for (auto& w : workers)
        {
            while (!w->Poll())
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            EXPECT_EQ(w->exit_code(), 0) << w->StderrTail(20);
        }
        EXPECT_EQ(box.LiveProcesses(), 0);
    }

    std::string Log() const { return test::ReadFile((box.dir / "learner.stderr").string()); }
    /// Prints the learner's log so far (results/faults/README.md quotes it).
    void PrintLog() const
    {
        std::istringstream in(Log());
        std::string line;
        while (std::getline(in, line))
            std::cout << "[log] " << line << "\n";
        std::cout << std::flush;
    }
};

// The learner's memory before a flood and at its peak since.
struct Rss
{
    pid_t pid;
    int64_t before_kb{0};
    explicit Rss(pid_t p)
      : pid(p)
      , before_kb(StatusKb(p, "VmRSS"))
    {
    }
    /// VmHWM now less VmRSS before, in MiB.
    double GrowthMiB() const { return (StatusKb(pid, "VmHWM") - before_kb) / 1024.0; }
    void Print(const std::string& what) const
    {
        std::cout << "[rss] " << what << ": VmRSS before " << before_kb << " kB, VmHWM "
                  << StatusKb(pid, "VmHWM") << " kB, VmRSS now " << StatusKb(pid, "VmRSS")
                  << " kB, growth " << GrowthMiB() << " MiB" << std::endl;
    }
};

const std::vector<std::string> kRank32{"workload.lora.rank=32"};

TEST(HiloNode, TwoThousandResyncRequestsFromAMemberCostTheLearnerUnder64MiB)
{
    KeyedRun run("resync", kRank32);
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the role has started
    const Rss rss(run.learner->pid());
    asio::io_context io;
    tcp::socket member(io);
    auto sealer = Authenticate(member, run.port, 1, run.key);
    ASSERT_TRUE(sealer);
    std::string flood;
    for (int i = 0; i < 2000; ++i)
        flood += Sealed(*sealer, Framed(kResyncRequest, EncodeResyncRequest(0, i % 2 == 0)));
    asio::write(member, asio::buffer(flood)); // and never reads
    // The learner answers as the requests arrive; a queue that grows keeps growing for a while.
    double peak = 0;
    for (int i = 0; i < 30; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        peak = std::max(peak, rss.GrowthMiB());
    }
    rss.Print("2,000 resync requests");
    EXPECT_LT(peak, kBoundMiB);
    // The flood shows in the learner's log, once per power of ten (1,999 repeats dropped).
    const std::string said = test::ReadFile(run.learner->stderr_path());
    EXPECT_NE(said.find("dropped 1000 repeated resync request(s) from worker 1"), std::string::npos)
        << said;
    member.close();
    ASSERT_NO_FATAL_FAILURE(run.ExpectHonestRunCompletes());
}

TEST(HiloNode, ASlowReaderCostsTheLearnerUnder64MiBAndTheRunCompletes)
{
    KeyedRun run("slow-reader", {"workload.lora.rank=32", "mode.round_timeout=300ms"});
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const Rss rss(run.learner->pid());
    asio::io_context io;
    tcp::socket slow(io);
    auto sealer = Authenticate(slow, run.port, 1, run.key);
    ASSERT_TRUE(sealer);
    // Worker 1 is this peer: it never sends a batch (dropped from every round at the deadline)
    // and never reads, and asks for a catch-up with a snapshot every 10 ms while worker 0 runs.
    ASSERT_NO_FATAL_FAILURE(run.StartWorker(0));
    double peak = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (run.EventLines("publish ") < 10 && std::chrono::steady_clock::now() < until &&
           !run.learner->Poll())
    {
        boost::system::error_code ec;
        asio::write(
            slow,
            asio::buffer(Sealed(*sealer, Framed(kResyncRequest, EncodeResyncRequest(0, true)))),
            ec);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        peak = std::max(peak, rss.GrowthMiB());
    }
    rss.Print("a slow reader over " + std::to_string(run.EventLines("publish ")) + " versions");
    EXPECT_EQ(run.EventLines("publish "), 10) << run.learner->StderrTail(20);
    EXPECT_LT(peak, kBoundMiB);
    slow.close();
    // The real worker 1 joins, catches up, and the run completes.
    ASSERT_NO_FATAL_FAILURE(run.StartWorker(1));
    ASSERT_NO_FATAL_FAILURE(run.ExpectEveryoneEndsWell());
    run.PrintLog();
}

TEST(HiloNode, AHeaderAnnouncingTwoGiBCostsTheLearnerUnderOneMiB)
{
    KeyedRun run("big-header", kRank32);
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    asio::io_context io;
    {
        // The baseline includes what any connection costs (a hello, a session's ciphers).
        tcp::socket warm(io);
        ASSERT_TRUE(Authenticate(warm, run.port, 0, run.key));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const Rss rss(run.learner->pid());
    const uint64_t two_gib = (1ull << 31) - 1; // the transport's ceiling
    // Before the hello: a hello frame announcing 2 GiB, then 1 MiB of its bytes.
    tcp::socket stranger(io);
    stranger.connect({asio::ip::make_address("127.0.0.1"), run.port});
    boost::system::error_code ec;
    asio::write(stranger,
                asio::buffer(test::FrameHeaderBytes(FrameHeader::kHelloType, two_gib, two_gib)),
                ec);
    asio::write(stranger, asio::buffer(std::string(1 << 20, 'x')), ec);
    EXPECT_TRUE(test::ReadUntilClosed(stranger, 10));
    // After it: an authenticated member's trajectories announcing 2 GiB, then 1 MiB.
    tcp::socket member(io);
    auto sealer = Authenticate(member, run.port, 0, run.key);
    ASSERT_TRUE(sealer);
    asio::write(
        member,
        asio::buffer(Sealed(*sealer, test::FrameHeaderBytes(kTrajectories, two_gib, two_gib))), ec);
    std::string body;
    for (int i = 0; i < 16; ++i)
        body += Sealed(*sealer, std::string(60000, 'y'));
    asio::write(member, asio::buffer(body), ec);
    EXPECT_TRUE(test::ReadUntilClosed(member, 10));
    rss.Print("2 GiB headers before and after the hello");
    EXPECT_LT(rss.GrowthMiB(), 1.0);
    ASSERT_NO_FATAL_FAILURE(run.ExpectHonestRunCompletes());
}

// 1,000 connections that never say hello, from the workers' own address, and every one the
// learner drops is opened again at once (a flood that refills itself, as an attacker's would):
// the workers must still get in within 30 s. The learner's hello deadline is 120 s here, so no
// connection's deadline makes room for them in that time: only admission that evicts the oldest
// pending connection for a new one does (a learner that refuses newcomers instead keeps them out).
TEST(HiloNode, AThousandIdleConnectionsDoNotKeepKeyedWorkersOut)
{
    KeyedRun run("idle-flood", kRank32);
    ASSERT_NO_FATAL_FAILURE(run.StartLearner({"--hello-timeout", "120"}));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const Rss rss(run.learner->pid());
    // 1,000 sockets here (the learner keeps at most 64 pending from one address).
    rlimit files{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
    if (files.rlim_cur < 1100 && files.rlim_max >= 1100)
    {
        files.rlim_cur = 1100;
        ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);
    }
    sockaddr_in learner{};
    learner.sin_family = AF_INET;
    learner.sin_port = htons(run.port);
    learner.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto open_one = [&]()
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 &&
            ::connect(fd, reinterpret_cast<const sockaddr*>(&learner), sizeof(learner)) != 0)
        {
            ::close(fd);
            return -1;
        }
        return fd;
    };
    std::vector<pollfd> idle;
    for (int i = 0; i < 1000; ++i)
    {
        const int fd = open_one();
        if (fd >= 0)
            idle.push_back({fd, POLLIN, 0});
    }
    EXPECT_EQ(idle.size(), 1000u);
    std::atomic<bool> stop{false};
    std::atomic<int> reopened{0};
    std::thread refill(
        [&]()
        {
            while (!stop)
            {
                if (::poll(idle.data(), idle.size(), 10) <= 0)
                    continue;
                for (pollfd& p : idle)
                {
                    char byte = 0;
                    if (p.revents == 0 || ::recv(p.fd, &byte, 1, MSG_DONTWAIT) > 0)
                        continue;  // still open (a byte from the learner would be odd; ignored)
                    ::close(p.fd); // the learner dropped it: open another
                    p.fd = open_one();
                    p.revents = 0;
                    reopened += p.fd >= 0 ? 1 : 0;
                    if (p.fd < 0)
                        p.fd = -1; // poll ignores it
                }
            }
        });
    std::this_thread::sleep_for(std::chrono::seconds(1));
    rss.Print("1,000 idle connections");
    EXPECT_LT(rss.GrowthMiB(), kBoundMiB);
    // The workers come while the flood goes on; both are taken in within 30 s (a few seconds on a
    // busy machine).
    const auto start = std::chrono::steady_clock::now();
    ASSERT_NO_FATAL_FAILURE(run.StartWorker(0));
    ASSERT_NO_FATAL_FAILURE(run.StartWorker(1));
    // A worker applies an update only once the learner has taken it in (its first rollout comes
    // before: a worker rolls out round 1 as it starts, connected or not).
    auto taken_in = [&](int w)
    {
        return test::CountLines(run.box.dir / ("worker-" + std::to_string(w) + ".events"),
                                "apply ") > 0;
    };
    while (!(taken_in(0) && taken_in(1)) &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(30))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(taken_in(0) && taken_in(1)) << "a worker was kept out for 30 s\n"
                                            << run.learner->StderrTail(10);
    stop = true;
    refill.join();
    std::cout << "[flood] " << reopened
              << " idle connections opened again after the learner dropped them\n";
    for (const pollfd& p : idle)
        if (p.fd >= 0)
            ::close(p.fd);
    EXPECT_GT(reopened, 0) << "the flood never had to refill: nothing was tested";
    ASSERT_NO_FATAL_FAILURE(run.ExpectEveryoneEndsWell());
}

} // namespace
} // namespace hilosim
