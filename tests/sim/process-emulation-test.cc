// Real processes end to end over loopback (hilo-emu --network direct; emulated links are
// tests/sim/emulation-ns3-test.cc): hilo-emu against hilo-sim on the same scenario, a worker
// killed with SIGKILL and restarted, garbage on the learner's port, a node that dies, SIGTERM to
// hilo-emu, and bad input. Every test checks that no node process is left behind.
#include "sim/cli/catalog.h"
#include "sim/drivers/process/child-process.h"
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/record-cipher.h"
#include "sim/net/frame-header.h"
#include "sim/roles/peer-ids.h"
#include "sim/roles/role-messages.h"
#include "sim/run/arm-context-builder.h"
#include "sim/scenario/scenario-loader.h"

#include "models/trajectory-batch.h"

#include "tests/sim/process-keyed-run-util.h"
#include "tests/sim/process-test-util.h"
#include "tests/sim/scenario-test-util.h"
#include "tests/sim/tcp-proxy.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace hilosim
{
namespace
{

namespace fs = std::filesystem;

const std::string kBin = std::string(HILO_BINARY_DIR) + "/sim/";

// A sandbox of this file's tests (test::ProcessSandbox).
struct Sandbox : test::ProcessSandbox
{
    Sandbox(const std::string& name, const std::string& source)
      : ProcessSandbox("hilo-proc-test-" + name + "-" + std::to_string(getpid()), source)
    {
    }
};

using test::Authenticate;
using test::Column;
using test::CountLines;
using test::Framed;
using test::FrameHeaderBytes;
using test::JsonValues;
using test::kRunKeyHex;
using test::ReadCsv;
using test::ReadUntilClosed;
using test::Sealed;
using test::WriteKeyFile;

// steps.csv's update_latency_net_s: in the simulator the latency itself; in the processes, whose
// real encode and replay outlast the modelled H100 time, the worst worker's latency less the
// overrun inside it, so between the largest latency less the encode overrun and that less the
// largest apply overrun too, and below the latency in at least one version.
void
ExpectNetLatencyLessOverrun(const std::vector<std::vector<std::string>>& emu,
                            const std::vector<std::vector<std::string>>& sim)
{
    const size_t net = Column(sim, "update_latency_net_s"),
                 lat = Column(sim, "update_latency_max_s");
    for (size_t r = 1; r < sim.size(); ++r)
        EXPECT_EQ(sim[r].at(net), sim[r].at(lat)) << "sim row " << r;
    const size_t enet = Column(emu, "update_latency_net_s"),
                 elat = Column(emu, "update_latency_max_s"), enc = Column(emu, "encode_overrun_s"),
                 app = Column(emu, "apply_overrun_s_max"), version = Column(emu, "version");
    int below = 0;
    for (size_t r = 1; r < emu.size(); ++r)
    {
        if (emu[r].at(version) == "0")
            continue;
        const double n = std::stod(emu[r].at(enet)), l = std::stod(emu[r].at(elat)),
                     e = std::stod(emu[r].at(enc)), a = std::stod(emu[r].at(app));
        EXPECT_LE(n, l - e + 1e-6) << "emu row " << r;
        EXPECT_GE(n, l - e - a - 1e-6) << "emu row " << r;
        below += n < l - 1e-6 ? 1 : 0;
    }
    EXPECT_GT(below, 0) << "no version's real compute overran: the check proves nothing";
}

TEST(HiloEmu, TinyScenarioRunsAsProcessesAndLearnsExactlyAsSimulated)
{
    Sandbox box("tiny", std::string(HILO_SOURCE_DIR) + "/tests/scripts/tiny.textproto");
    const std::string emu = (box.dir / "emu").string();
    const std::string sim = (box.dir / "sim").string();
    auto e = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                              " --network direct --quiet --out " + emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    auto s = test::RunCommand(kBin + "hilo-sim run " + box.scenario + " --quiet --out " + sim);
    ASSERT_EQ(s.exit_code, 0) << s.output;

    const std::string summary = test::ReadFile(emu + "/summary.json");
    EXPECT_NE(summary.find("\"mode\": \"emulation-direct\""), std::string::npos);
    EXPECT_EQ(summary.find("\"hash_mismatches\": 1"), std::string::npos);
    size_t arms = 0;
    for (size_t p = summary.find("\"workers_at_final_hash\": 2"); p != std::string::npos;
         p = summary.find("\"workers_at_final_hash\": 2", p + 1))
        ++arms;
    EXPECT_EQ(arms, 2u) << summary;
    // Each node process's peak RSS, from the kernel when hilo-emu reaped it: a LibTorch process
    // holds tens of MiB at least; 0 would mean nothing was read.
    const size_t peaks = summary.find("\"node_peak_rss_mib\": {");
    ASSERT_NE(peaks, std::string::npos) << summary;
    for (const char* node : {"learner", "worker-0", "worker-1"})
    {
        const size_t at = summary.find("\"" + std::string(node) + "\": ", peaks);
        ASSERT_NE(at, std::string::npos) << node << "\n" << summary;
        const double mib = std::strtod(summary.c_str() + at + std::strlen(node) + 4, nullptr);
        EXPECT_GT(mib, 16.0) << node;
        EXPECT_LT(mib, 4096.0) << node;
    }

    // Every worker applied every version with its hash checked, in its own process.
    auto workers = ReadCsv(emu + "/workers.csv");
    const size_t arm = Column(workers, "arm"), version = Column(workers, "version"),
                 worker = Column(workers, "worker"), hash_ok = Column(workers, "hash_ok"),
                 pid = Column(workers, "pid");
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    std::map<std::string, std::set<std::string>> pids;
    for (size_t r = 1; r < workers.size(); ++r)
    {
        seen.insert({workers[r][arm], workers[r][version], workers[r][worker]});
        EXPECT_EQ(workers[r][hash_ok], "1");
        pids[workers[r][arm]].insert(workers[r][pid]);
    }
    EXPECT_EQ(seen.size(), 2u * 3u * 2u); // arms x versions x workers
    for (const auto& [name, set] : pids)
    {
        EXPECT_EQ(set.size(), 2u) << name;
        EXPECT_EQ(set.count(std::to_string(getpid())), 0u);
    }

    // Synchronous learning does not depend on timing: the quality column is bit-identical.
    auto emu_steps = ReadCsv(emu + "/steps.csv");
    auto sim_steps = ReadCsv(sim + "/steps.csv");
    ASSERT_EQ(emu_steps.size(), sim_steps.size());
    const size_t q = Column(sim_steps, "quality");
    ASSERT_EQ(Column(emu_steps, "quality"), q);
    for (size_t r = 0; r < sim_steps.size(); ++r)
        EXPECT_EQ(emu_steps[r].at(q), sim_steps[r].at(q)) << "row " << r;
    EXPECT_NE(test::ReadFile(emu + "/steps.csv").find("apply_overrun_s_max"), std::string::npos);
    ExpectNetLatencyLessOverrun(emu_steps, sim_steps);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// The learner and two workers by hand (hilo-node), as across machines.
struct ManualRun : test::NodeRun
{
    using NodeRun::NodeRun;

    /// The learner and workers 0 and 1; worker `w` is SIGKILLed (and reaped) once it applied
    /// `applies` versions.
    void StartThenKillWorker(int w, int applies)
    {
        ASSERT_NO_FATAL_FAILURE(StartLearner());
        workers.push_back(StartWorker(0));
        workers.push_back(StartWorker(1));
        const fs::path events = box.dir / ("worker-" + std::to_string(w) + ".events");
        for (int i = 0; i < 600 && CountLines(events, "apply ") < applies; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ASSERT_GE(CountLines(events, "apply "), applies) << learner->StderrTail(20);
        workers[w]->Signal(SIGKILL);
        while (!workers[w]->Poll())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(workers[w]->exit_code(), 128 + SIGKILL);
    }

    /// "done W V HASH MATCH" lines of the learner's event log, by worker.
    std::map<int, std::string> Done()
    {
        std::map<int, std::string> done;
        std::ifstream in(box.dir / "learner.events");
        std::string line;
        while (std::getline(in, line))
        {
            if (line.rfind("done ", 0) == 0)
                done[std::stoi(line.substr(5))] = line;
        }
        return done;
    }
};

TEST(HiloNode, AWorkerKilledMidRunRejoinsCatchesUpAndEndsAtTheLearnersHash)
{
    Sandbox box("restart", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    ASSERT_NO_FATAL_FAILURE(run.StartThenKillWorker(1, 3));
    const fs::path w1 = box.dir / "worker-1.events";
    std::this_thread::sleep_for(std::chrono::milliseconds(800)); // the run stalls meanwhile
    run.workers[1] = run.StartWorker(1);

    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    for (auto& w : run.workers)
    {
        while (!w->Poll())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(w->exit_code(), 0) << w->StderrTail(20);
    }
    auto done = run.Done();
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].substr(done[0].size() - 2), " 1") << done[0];
    EXPECT_EQ(done[1].substr(done[1].size() - 2), " 1") << done[1];
    EXPECT_EQ(done[0].substr(0, done[0].size() - 2).substr(7),
              done[1].substr(0, done[1].size() - 2).substr(7)); // same version and hash
    // The new process caught up (snapshot + ring) instead of receiving the old versions.
    EXPECT_GE(CountLines(w1, "resync "), 1);
    EXPECT_EQ(CountLines(w1, "process worker 1 "), 2);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

/// The lines of `path` from the `n`th one starting with `prefix` on (n counts from 1).
std::vector<std::string>
LinesFrom(const fs::path& path, const std::string& prefix, int n)
{
    std::ifstream in(path);
    std::vector<std::string> lines;
    std::string line;
    int seen = 0;
    while (std::getline(in, line))
    {
        seen += line.rfind(prefix, 0) == 0 ? 1 : 0;
        if (seen >= n)
            lines.push_back(line);
    }
    return lines;
}

// A worker process started again with --rejoin (as hilo-emu starts every restarted worker) holds
// nothing of the run: it rolls out nothing before the learner's welcome, catches up from a
// snapshot first, and then rolls out only rounds the learner still needs, on the version it
// caught up to (never round 1 on version 0 again).
TEST(HiloNode, ARestartedWorkerWithRejoinRollsOutOnlyAfterCatchingUp)
{
    Sandbox box("rejoin", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    ASSERT_NO_FATAL_FAILURE(run.StartThenKillWorker(1, 3));
    const fs::path w1 = box.dir / "worker-1.events";
    run.extra = {"--rejoin"};
    run.workers[1] = run.StartWorker(1);
    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    for (auto& w : run.workers)
    {
        while (!w->Poll())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(w->exit_code(), 0) << w->StderrTail(20);
    }
    // The second process's lines: a catch-up from a snapshot before its first rollout.
    const std::vector<std::string> second = LinesFrom(w1, "process worker 1 ", 2);
    ASSERT_FALSE(second.empty());
    bool caught_up = false;
    int rollouts = 0;
    for (const std::string& line : second)
    {
        std::istringstream in(line);
        std::string kind;
        in >> kind;
        if (kind == "catchup")
            caught_up = true;
        if (kind != "rollout")
            continue;
        ++rollouts;
        uint32_t worker = 0;
        uint64_t round = 0, behaviour = 0;
        in >> worker >> round >> behaviour;
        EXPECT_TRUE(caught_up) << "rolled out before catching up: " << line;
        EXPECT_GT(round, 1u) << line;
        EXPECT_GT(behaviour, 0u) << line;
    }
    EXPECT_TRUE(caught_up);
    EXPECT_GE(rollouts, 1);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

/// How often `what` occurs in `text`.
int
CountOf(const std::string& text, const std::string& what)
{
    int n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1))
        ++n;
    return n;
}

TEST(HiloNode, GarbageAndTruncatedFramesOnTheLearnersPortAreDroppedAndTheRunCompletes)
{
    Sandbox box("garbage", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    boost::asio::io_context io;
    auto send = [&](const std::string& bytes)
    {
        boost::asio::ip::tcp::socket s(io);
        s.connect({boost::asio::ip::make_address("127.0.0.1"), run.port});
        boost::asio::write(s, boost::asio::buffer(bytes));
    };
    send(std::string(100, '\x01')); // not a frame at all
    auto hello = [](char id)
    {
        const std::string payload = std::string(1, id) + std::string(3, '\0');
        return FrameHeaderBytes(FrameHeader::kHelloType, 4, 4, payload) + payload;
    };
    send(hello(0) + FrameHeaderBytes(1, 100, 100, "") + "cut short"); // truncated
    send(hello(1) + FrameHeaderBytes(1, 3, 3, "abc") + "abc");        // unusable trajectories
    send(hello(42) + FrameHeaderBytes(1, 3, 3, "abc") + "abc");       // not a worker of the arm
    run.workers.push_back(run.StartWorker(0));
    run.workers.push_back(run.StartWorker(1));
    send(std::string(40, '\xff')); // and mid-run
    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    const std::string log = test::ReadFile((box.dir / "learner.stderr").string());
    EXPECT_NE(log.find("bad magic"), std::string::npos) << log;
    EXPECT_NE(log.find("truncated"), std::string::npos) << log;
    EXPECT_NE(log.find("unusable message"), std::string::npos) << log;
    EXPECT_NE(log.find("peer id 42 is not one this node accepts"), std::string::npos) << log;
    EXPECT_EQ(run.Done().size(), 2u);
    for (auto& w : run.workers)
    {
        while (!w->Poll())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// Key files as `openssl rand -hex 32` writes them (64 hex digits: 32 bytes).
const std::string kOtherKeyHex = "0e1d2c3b4a5968778695a4b3c2d1e0f0123456789abcdef0fedcba9876543210";

TEST(HiloNode, AWorkerWithTheWrongKeyIsRefusedAndTheRunWithTheRightWorkersCompletes)
{
    Sandbox box("wrong-key", test::DataPath("emu-slow.textproto"));
    const std::string right = WriteKeyFile(box.dir, "run.key", kRunKeyHex);
    const std::string wrong = WriteKeyFile(box.dir, "other.key", kOtherKeyHex);
    ManualRun run(box);
    run.extra = {"--key-file", right};
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());

    // The intruder takes the learner's failed proof for a port taken by another process: it
    // dials again after its backoff, again and again, until its stall timeout; never admitted.
    ManualRun intruder(box);
    intruder.port = run.port;
    intruder.stall_timeout = "2";
    intruder.extra = {"--key-file", wrong, "--events", (box.dir / "intruder.events").string()};
    auto bad = intruder.StartWorker(1);
    while (!bad->Poll())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(bad->exit_code(), 1) << bad->StderrTail(20);
    const std::string said = test::ReadFile((box.dir / "worker-1.stderr").string());
    EXPECT_GE(CountOf(said, "authentication failed"), 2) << said;
    EXPECT_NE(said.find("dialling again after the backoff"), std::string::npos) << said;
    EXPECT_NE(said.find("no progress"), std::string::npos) << said;

    run.workers.push_back(run.StartWorker(0));
    run.workers.push_back(run.StartWorker(1));
    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    for (auto& w : run.workers)
    {
        while (!w->Poll())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(w->exit_code(), 0) << w->StderrTail(20);
    }
    EXPECT_EQ(run.Done().size(), 2u);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// What a hostile client was tried with against a real learner with a key: a connection that never
// says hello, an authenticated worker asking for a future version, and one announcing a frame far
// past the arm's limit. Each costs only its own connection; the real workers then complete.
TEST(HiloNode, HostileClientsCostOnlyTheirConnection)
{
    Sandbox box("hostile", test::DataPath("emu-slow.textproto"));
    auto key = PeerAuth::ParseKey(kRunKeyHex, "run.key");
    ASSERT_TRUE(key.ok());
    ManualRun run(box);
    run.extra = {"--key-file", WriteKeyFile(box.dir, "run.key", kRunKeyHex)};
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    boost::asio::io_context io;

    boost::asio::ip::tcp::socket silent(io);
    silent.connect({boost::asio::ip::make_address("127.0.0.1"), run.port});
    EXPECT_TRUE(ReadUntilClosed(silent, 60)) << "a silent client was never dropped";

    boost::asio::ip::tcp::socket ahead(io);
    std::unique_ptr<RecordSealer> sealer;
    ASSERT_NO_FATAL_FAILURE(Authenticate(ahead, run.port, 1, *key, &sealer));
    boost::asio::write(
        ahead, boost::asio::buffer(
                   Sealed(*sealer, Framed(kResyncRequest, EncodeResyncRequest(1000, false)))));
    EXPECT_TRUE(ReadUntilClosed(ahead, 60));

    boost::asio::ip::tcp::socket big(io);
    ASSERT_NO_FATAL_FAILURE(Authenticate(big, run.port, 0, *key, &sealer));
    boost::asio::write(
        big, boost::asio::buffer(Sealed(*sealer, FrameHeaderBytes(kTrajectories, (1ull << 31) - 1,
                                                                  (1ull << 31) - 1, ""))));
    EXPECT_TRUE(ReadUntilClosed(big, 60));

    run.workers.push_back(run.StartWorker(0));
    run.workers.push_back(run.StartWorker(1));
    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    const std::string log = test::ReadFile((box.dir / "learner.stderr").string());
    EXPECT_NE(log.find("no hello within"), std::string::npos) << log;
    EXPECT_NE(log.find("ahead of the learner's version"), std::string::npos) << log;
    EXPECT_NE(log.find("exceeds the limit"), std::string::npos) << log;
    EXPECT_EQ(run.Done().size(), 2u);
    for (auto& w : run.workers)
    {
        while (!w->Poll())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        EXPECT_EQ(w->exit_code(), 0) << w->StderrTail(20);
    }
    EXPECT_EQ(box.LiveProcesses(), 0);
}

TEST(HiloNode, ListeningBeyondLoopbackNeedsAPrivateKeyOrInsecure)
{
    Sandbox box("insecure", std::string(HILO_SOURCE_DIR) + "/tests/scripts/tiny.textproto");
    const std::string learner =
        kBin + "hilo-node learner --scenario " + box.scenario + " --arm full";
    auto r = test::RunCommand(learner + " --listen 0.0.0.0:0");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("without --key-file"), std::string::npos) << r.output;
    const std::string key = WriteKeyFile(box.dir, "run.key", kRunKeyHex);
    fs::permissions(key, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
    r = test::RunCommand(learner + " --listen 127.0.0.1:0 --key-file " + key);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("chmod 600"), std::string::npos) << r.output;
    // 16 bytes as hex: too short (a key is at least 32 bytes: 64 hex digits or 32 raw bytes).
    const std::string short_key = WriteKeyFile(box.dir, "short.key", kRunKeyHex.substr(0, 32));
    r = test::RunCommand(learner + " --listen 127.0.0.1:0 --key-file " + short_key);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find(short_key + ": the key has 32 hex digits"), std::string::npos)
        << r.output;
    // (--insecure is not tried here: the test binds nothing beyond loopback.)
}

TEST(HiloNode, AHelloTimeoutThatIsNotPositiveIsBadInput)
{
    Sandbox box("hello-timeout", std::string(HILO_SOURCE_DIR) + "/tests/scripts/tiny.textproto");
    const std::string learner = kBin + "hilo-node learner --scenario " + box.scenario +
                                " --arm full --listen 127.0.0.1:0 --hello-timeout ";
    for (const char* bad : {"0", "nan"})
    {
        const auto r = test::RunCommand(learner + bad);
        EXPECT_EQ(r.exit_code, 2) << r.output;
        EXPECT_NE(r.output.find("--hello-timeout must be positive"), std::string::npos) << r.output;
    }
}

// A node that dies after "ready" closes the pipe hilo-emu sends the epoch on: hilo-emu reports it
// and stops the others instead of dying of SIGPIPE.
TEST(HiloEmu, ANodeGoneBeforeTheEpochIsReportedNotFatal)
{
    Sandbox box("sigpipe", test::DataPath("emu-slow.textproto"));
    const std::string fake = (box.dir / "node.sh").string();
    {
        std::ofstream f(fake);
        f << "#!/bin/sh\nexec 0<&-\necho ready 40000\nexec sleep 3\n";
    }
    fs::permissions(fake, fs::perms::owner_all);
    auto r = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                              " --network direct --quiet --node " + fake + " --out " +
                              (box.dir / "out").string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("cannot send the epoch"), std::string::npos) << r.output;
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// The teaching fault scenario on real processes (--network direct, so without its link fault):
// worker 1 is SIGKILLed at 1 s and started again 2 s later, worker 0's replay diverges. Nothing is
// lost, every worker ends at the learner's hash, and the same faults are injected as in hilo-sim.
TEST(HiloEmu, TheTeachingFaultsRunOnProcessesWithNothingLost)
{
    Sandbox box("faults", std::string(HILO_SOURCE_DIR) + "/scenarios/teaching/05-faults.textproto");
    ASSERT_TRUE(box.Erase("faults { kind: \"link_down\""));
    ASSERT_TRUE(box.Erase(test::kFullArmOf05, "\n}\n")); // both arms run the same faults
    const std::string emu = (box.dir / "emu").string();
    const std::string sim = (box.dir / "sim").string();
    auto e =
        test::RunCommand(kBin + "hilo-emu run " + box.scenario + " --network direct --out " + emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    EXPECT_NE(e.output.find("worker_crash: killed worker 1"), std::string::npos) << e.output;
    EXPECT_NE(e.output.find("worker_crash: started worker 1"), std::string::npos) << e.output;
    auto s = test::RunCommand(kBin + "hilo-sim run " + box.scenario + " --quiet --out " + sim);
    ASSERT_EQ(s.exit_code, 0) << s.output;
    const std::string es = test::ReadFile(emu + "/summary.json");
    const std::string ss = test::ReadFile(sim + "/summary.json");
    EXPECT_EQ(JsonValues(es, "faults_injected"), std::vector<std::string>{"2"}) << es;
    EXPECT_EQ(JsonValues(es, "faults_injected"), JsonValues(ss, "faults_injected"));
    EXPECT_EQ(JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(JsonValues(es, "workers_alive"), std::vector<std::string>{"3"}) << es;
    EXPECT_EQ(JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"3"}) << es;
    EXPECT_NE(JsonValues(es, "hash_mismatches"), std::vector<std::string>{"0"}) << es;
    // Worker 1 ran in two processes, and the second caught up from a snapshot.
    const std::string w1 = (box.dir / "emu" / "nodes" / "hilo-spar" / "worker-1.events").string();
    EXPECT_EQ(CountLines(w1, "process worker 1 "), 2);
    EXPECT_GE(CountLines(w1, "catchup 1 "), 1);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// learner_restart on processes: the learner's hilo-node is SIGKILLed mid-run and a new one starts
// on the same port from the checkpoint the first wrote after every version. The workers reconnect
// and are welcomed, nothing is lost, both end at the learner's hash, and the run injects the same
// faults as hilo-sim.
TEST(HiloEmu, ALearnerKilledAndRestartedFromItsCheckpointLosesNothing)
{
    Sandbox box("learner-restart", test::DataPath("emu-slow.textproto"));
    const std::string fault =
        "'faults[0]=kind: \"learner_restart\" at: \"1.5s\" target: \"learner\" "
        "restart_after: \"1s\"'";
    const std::string emu = (box.dir / "emu").string();
    const std::string sim = (box.dir / "sim").string();
    auto e = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                              " --network direct --set workload.steps=16 --set " + fault +
                              " --out " + emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    EXPECT_NE(e.output.find("learner_restart: killed the learner"), std::string::npos) << e.output;
    EXPECT_NE(e.output.find("learner_restart: started the learner again"), std::string::npos)
        << e.output;
    auto s = test::RunCommand(kBin + "hilo-sim run " + box.scenario +
                              " --quiet --set workload.steps=16 --set " + fault + " --out " + sim);
    ASSERT_EQ(s.exit_code, 0) << s.output;
    const std::string es = test::ReadFile(emu + "/summary.json");
    const std::string ss = test::ReadFile(sim + "/summary.json");
    EXPECT_EQ(JsonValues(es, "faults_injected"), std::vector<std::string>{"1"}) << es;
    EXPECT_EQ(JsonValues(es, "faults_injected"), JsonValues(ss, "faults_injected"));
    EXPECT_EQ(JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"2"}) << es;
    // Two learner processes, the second restored: it published only versions the first had not.
    const fs::path nodes = box.dir / "emu" / "nodes" / "hilo-spar";
    EXPECT_EQ(CountLines(nodes / "learner.events", "process learner "), 2);
    EXPECT_EQ(CountLines(nodes / "learner.events", "publish "), 16);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// The same behind relays: the relays' learner connection ends with the learner, and they dial it
// again (the relay role hears the close and redials after its backoff) while their workers stay;
// the run completes with all four workers at the learner's hash.
TEST(HiloEmu, RelaysDialALearnerRestartedFromItsCheckpointAgain)
{
    Sandbox box("relay-learner-restart",
                std::string(HILO_SOURCE_DIR) + "/scripts/chaos-relay.textproto");
    const std::string fault =
        "'faults[0]=kind: \"learner_restart\" at: \"1.5s\" target: \"learner\" "
        "restart_after: \"1s\"'";
    const std::string emu = (box.dir / "emu").string();
    auto e = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                              " --network direct --quiet --stall-timeout 60 --set " + fault +
                              " --out " + emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    const std::string es = test::ReadFile(emu + "/summary.json");
    EXPECT_EQ(JsonValues(es, "faults_injected"), std::vector<std::string>{"1"}) << es;
    EXPECT_EQ(JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"4"}) << es;
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// The same while none of relay 0's workers is connected (both crashed at 1 s, back at 3.5 s): the
// relay does not take the learner's end for the run's (it has not forwarded the last version),
// dials the restarted learner again and serves its workers when they return. Nothing is lost.
TEST(HiloEmu, AnIdleRelayWaitsForALearnerRestartedFromItsCheckpoint)
{
    Sandbox box("idle-relay-learner-restart",
                std::string(HILO_SOURCE_DIR) + "/scripts/chaos-relay.textproto");
    std::string faults;
    for (int w = 0; w < 2; ++w)
        faults += " --set 'faults[" + std::to_string(w) +
                  "]=kind: \"worker_crash\" at: \"1s\" target: \"worker:" + std::to_string(w) +
                  "\" restart_after: \"2.5s\"'";
    faults += " --set 'faults[2]=kind: \"learner_restart\" at: \"1.5s\" target: \"learner\" "
              "restart_after: \"1s\"'";
    const std::string emu = (box.dir / "emu").string();
    auto e =
        test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                         " --network direct --quiet --stall-timeout 30" + faults + " --out " + emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    const std::string es = test::ReadFile(emu + "/summary.json");
    EXPECT_EQ(JsonValues(es, "faults_injected"), std::vector<std::string>{"3"}) << es;
    EXPECT_EQ(JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"4"}) << es;
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// A relay killed and started again mid-run (hilo-emu --kill-relay): its workers dial it again, it
// dials the learner, and each worker that comes back is sent the latest update, so that one that
// missed versions sees the gap and catches up (at staleness 0 it would wait for the lost update
// forever otherwise). Every worker ends at the learner's hash with nothing lost.
TEST(HiloEmu, AKilledRelayIsStartedAgainAndItsWorkersCatchUp)
{
    Sandbox box("relay-kill", std::string(HILO_SOURCE_DIR) + "/scripts/chaos-relay.textproto");
    const std::string emu = (box.dir / "emu").string();
    auto e =
        test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                         " --network direct --stall-timeout 60 --kill-relay 1:1.5:1 --out " + emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    EXPECT_NE(e.output.find("chaos: killed relay 1"), std::string::npos) << e.output;
    EXPECT_NE(e.output.find("chaos: started relay 1 again"), std::string::npos) << e.output;
    const std::string es = test::ReadFile(emu + "/summary.json");
    EXPECT_EQ(JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"4"}) << es;
    EXPECT_EQ(box.LiveProcesses(), 0);

    auto bad = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                                " --network direct --quiet --kill-relay 2:1:1");
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("the scenario has 2 relays"), std::string::npos) << bad.output;
    bad = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                           " --network direct --quiet --kill-relay 0:1:-1");
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("expected R:AT:AFTER"), std::string::npos) << bad.output;
}

// A worker, a relay and the learner stopped (SIGSTOP) and continued later (hilo-emu --pause):
// their connections stay open and silent. The worker stopped for 3 s misses a 1 s round deadline
// (so it really stopped), nothing is lost and every worker ends at the learner's hash; bad pauses
// exit 2.
TEST(HiloEmu, PausedNodesAreContinuedAndNothingIsLost)
{
    Sandbox box("pause", std::string(HILO_SOURCE_DIR) + "/scripts/chaos-relay.textproto");
    const std::string emu = (box.dir / "emu").string();
    auto e = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                              " --network direct --stall-timeout 60 --set mode.round_timeout=1s"
                              " --pause worker:1:1:3 --pause relay:0:4.5:0.8"
                              " --pause learner:5.5:1 --out " +
                              emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    for (const char* name : {"worker 1", "relay 0", "the learner"})
    {
        EXPECT_NE(e.output.find(std::string("chaos: paused ") + name), std::string::npos)
            << name << "\n"
            << e.output;
        EXPECT_NE(e.output.find(std::string("chaos: continued ") + name), std::string::npos)
            << name << "\n"
            << e.output;
    }
    const std::string es = test::ReadFile(emu + "/summary.json");
    EXPECT_EQ(JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"4"}) << es;
    const std::vector<std::string> dropped = JsonValues(es, "members_dropped");
    ASSERT_EQ(dropped.size(), 1u) << es;
    EXPECT_NE(dropped[0], "0") << "the stopped worker made every round deadline\n" << es;
    EXPECT_EQ(box.LiveProcesses(), 0);

    for (const auto& [arg, says] : std::vector<std::pair<std::string, std::string>>{
             {"worker:4:1:1", "the scenario has 4 workers and 2 relays"},
             {"relay:2:1:1", "the scenario has 4 workers and 2 relays"},
             {"learner:1:0", "expected NODE:AT:FOR"},
             {"worker:1:1", "expected NODE:AT:FOR"},
             {"gpu:0:1:1", "expected NODE:AT:FOR"},
             {"worker:-1:1:1", "expected NODE:AT:FOR"}})
    {
        auto bad = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                                    " --network direct --quiet --pause " + arg);
        EXPECT_EQ(bad.exit_code, 2) << arg << "\n" << bad.output;
        EXPECT_NE(bad.output.find(says), std::string::npos) << arg << "\n" << bad.output;
    }
}

TEST(HiloEmu, LinkFaultsNeedEmulatedLinks)
{
    Sandbox box("link-faults",
                std::string(HILO_SOURCE_DIR) + "/scenarios/teaching/05-faults.textproto");
    auto r = test::RunCommand(kBin + "hilo-emu run " + box.scenario + " --network direct --quiet");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("faults[1] (link_down"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--network ns3"), std::string::npos) << r.output;
}

// A process relay stores and forwards whole updates: a scenario asking for a streaming relay (the
// default of relay topologies) is refused, naming the field, instead of run with another relay.
TEST(HiloEmu, AStreamingRelayIsRefusedNamingTheField)
{
    Sandbox box("streaming-relay", std::string(HILO_SOURCE_DIR) + "/scripts/chaos-relay.textproto");
    const std::string out = (box.dir / "out").string();
    auto r = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                              " --network direct --quiet --set network.relay_forwarding=stream" +
                              " --out " + out);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("network.relay_forwarding: \"stream\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("store_and_forward"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(out + "/nodes")) << "a node was started";
    r = test::RunCommand(kBin + "hilo-node relay --scenario " + box.scenario +
                         " --set network.relay_forwarding=stream --arm hilo-spar --index 0" +
                         " --listen 127.0.0.1:0 --connect 127.0.0.1:1 --stall-timeout 5");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("network.relay_forwarding"), std::string::npos) << r.output;
    EXPECT_EQ(box.LiveProcesses(), 0);
}

TEST(HiloEmu, ANodeThatDiesIsNamedWithItsStderrAndNoProcessIsLeft)
{
    Sandbox box("dies", test::DataPath("emu-slow.textproto"));
    // A node binary that is hilo-node, except that worker 1 fails after a moment.
    const std::string wrapper = (box.dir / "node.sh").string();
    {
        std::ofstream f(wrapper);
        f << "#!/bin/sh\n"
          << "case \"$*\" in *'worker '*'--index 1 '*) sleep 1; echo 'worker one gives up' >&2;"
          << " exit 3;; esac\n"
          << "exec " << kBin << "hilo-node \"$@\"\n";
    }
    fs::permissions(wrapper, fs::perms::owner_all);
    auto r = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                              " --network direct --quiet --node " + wrapper + " --out " +
                              (box.dir / "out").string());
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("worker 1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("exited with code 3"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("worker one gives up"), std::string::npos) << r.output;
    EXPECT_EQ(box.LiveProcesses(), 0);
    EXPECT_FALSE(fs::exists(box.dir / "out" / "summary.json"));
}

TEST(HiloEmu, SigtermStopsEveryChild)
{
    Sandbox box("sigterm", test::DataPath("emu-slow.textproto"));
    auto emu = ChildProcess::Start({kBin + "hilo-emu", "run", box.scenario, "--network", "direct",
                                    "--quiet", "--out", (box.dir / "out").string()},
                                   (box.dir / "emu.stderr").string(), "hilo-emu");
    ASSERT_TRUE(emu.ok());
    const fs::path events = box.dir / "out" / "nodes" / "hilo-spar" / "worker-0.events";
    for (int i = 0; i < 3000 && CountLines(events, "apply ") < 1; ++i) // 60 s on a loaded host
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_GE(CountLines(events, "apply "), 1) << (*emu)->StderrTail(20);
    EXPECT_GE(box.LiveProcesses(), 3); // learner + 2 workers
    (*emu)->Signal(SIGTERM);
    while (!(*emu)->Poll())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ((*emu)->exit_code(), 128 + SIGTERM) << (*emu)->StderrTail(20);
    EXPECT_NE(test::ReadFile((box.dir / "emu.stderr").string()).find("stopped by signal"),
              std::string::npos);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

TEST(HiloEmu, BadInputExitsTwoNamingWhatIsWrong)
{
    const std::string tiny = std::string(HILO_SOURCE_DIR) + "/tests/scripts/tiny.textproto";
    auto r = test::RunCommand(kBin + "hilo-emu run " + tiny + " --network carrier-pigeon");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("--network carrier-pigeon"), std::string::npos) << r.output;
    r = test::RunCommand(kBin + "hilo-emu run /nonexistent.textproto");
    EXPECT_EQ(r.exit_code, 2);
    r = test::RunCommand(kBin + "hilo-emu run " + tiny + " --set workload.steps=0");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("workload.steps"), std::string::npos) << r.output;
    r = test::RunCommand(kBin + "hilo-emu run " + tiny + " --network direct --set " +
                         "'faults[0]=kind: \"link_down\" at: \"1s\" target: \"worker:0\"'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("faults[0] (link_down"), std::string::npos) << r.output;
    r = test::RunCommand(kBin + "hilo-node worker --scenario " + tiny +
                         " --arm full --index 5 --connect 127.0.0.1:1");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("--index 5"), std::string::npos) << r.output;
    r = test::RunCommand(kBin + "hilo-node learner --scenario " + tiny +
                         " --arm nope --listen 127.0.0.1:0");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("allowed: full, hilo-spar"), std::string::npos) << r.output;
    r = test::RunCommand(kBin + "hilo-node worker --scenario " + tiny +
                         " --arm full --connect localhost");
    EXPECT_EQ(r.exit_code, 2);
}

/// A socket that said hello as `id` to the keyless learner on `port` (no key: no proof).
std::unique_ptr<boost::asio::ip::tcp::socket>
RawPeer(boost::asio::io_context& io, uint16_t port, uint32_t id)
{
    auto s = std::make_unique<boost::asio::ip::tcp::socket>(io);
    s->connect({boost::asio::ip::make_address("127.0.0.1"), port});
    boost::asio::write(*s, boost::asio::buffer(test::HelloFrame(id)));
    return s;
}

/// The learner's "publish" event lines, in order.
std::vector<std::string>
PublishLines(const Sandbox& box)
{
    std::vector<std::string> lines;
    std::ifstream in(box.dir / "learner.events");
    std::string line;
    while (std::getline(in, line))
    {
        if (line.rfind("publish ", 0) == 0)
            lines.push_back(line);
    }
    return lines;
}

/// Waits for `worker` to exit and expects success.
void
ExpectExitsZero(ChildProcess& worker)
{
    while (!worker.Poll())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(worker.exit_code(), 0) << worker.StderrTail(20);
}

// The batch that once ended the learner ("batch 1: trajectory batch CRC mismatch", exit 1): a
// member's round-1 batch of zeros. It is refused where it arrives and costs that member its
// connection; the real workers then complete the run.
// The attack of issue 37 on a real learner: a proxy that knows no key relays worker 0's hello
// untouched, then flips one byte of the first frame the worker sends after it. The learner
// closes that connection (the record fails its tag) and never takes the frame; the worker dials
// again (through the proxy, untouched from then on), and the run completes with both workers at
// the learner's final hash.
TEST(HiloNode, AProxyThatFlipsAByteOfAWorkersFrameCostsOnlyThatConnection)
{
    Sandbox box("proxy-flip", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    run.extra = {"--key-file", WriteKeyFile(box.dir, "run.key", kRunKeyHex)};
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    // The worker's hello and proof, then its first record's length, then the first frame.
    const uint64_t first_frame = (FrameHeader::kBytes + PeerAuth::kHelloBytes) +
                                 (FrameHeader::kBytes + PeerAuth::kProofBytes) +
                                 RecordFormat::kHeaderBytes;
    boost::asio::io_context io;
    test::TcpProxy proxy(io, run.port, {{first_frame + 10, 0x01}});
    std::thread relay([&]() { io.run(); });
    const uint16_t learner_port = run.port;
    run.port = proxy.port();
    run.workers.push_back(run.StartWorker(0));
    run.port = learner_port;
    run.workers.push_back(run.StartWorker(1));
    const int rc = run.WaitLearner(120);
    io.stop();
    relay.join();
    ASSERT_EQ(rc, 0) << run.learner->StderrTail(20);
    const std::string log = test::ReadFile((box.dir / "learner.stderr").string());
    EXPECT_NE(log.find("record 0 fails its authentication tag"), std::string::npos) << log;
    EXPECT_GE(proxy.connections(), 2u) << "worker 0 did not dial again";
    auto done = run.Done();
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].substr(done[0].size() - 2), " 1") << done[0];
    EXPECT_EQ(done[1].substr(done[1].size() - 2), " 1") << done[1];
    for (auto& w : run.workers)
        ExpectExitsZero(*w);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

TEST(HiloNode, AMembersGarbageBatchClosesOnlyThatMemberAndTheRunCompletes)
{
    Sandbox box("garbage-batch", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    boost::asio::io_context io;
    auto hostile = RawPeer(io, run.port, 1);
    boost::asio::write(
        *hostile, boost::asio::buffer(
                      Framed(kTrajectories, EncodeTrajectories(1, 0, std::string(100, '\0')))));
    EXPECT_TRUE(ReadUntilClosed(*hostile, 30)) << "the member sending garbage was kept";
    // More than one batch of the workload's shape: closed on the header (peer-limits.h).
    auto oversize = RawPeer(io, run.port, 1);
    boost::asio::write(
        *oversize, boost::asio::buffer(
                       Framed(kTrajectories, EncodeTrajectories(1, 0, std::string(4096, 'x')))));
    EXPECT_TRUE(ReadUntilClosed(*oversize, 30)) << "an oversize batch was taken";
    run.workers.push_back(run.StartWorker(0));
    run.workers.push_back(run.StartWorker(1));
    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    const std::string log = test::ReadFile((box.dir / "learner.stderr").string());
    EXPECT_NE(log.find("unusable message: trajectory batch of worker 1 for round 1: trajectory "
                       "batch CRC mismatch"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("this node takes at most 194 of that type"), std::string::npos) << log;
    EXPECT_EQ(run.Done().size(), 2u);
    for (auto& w : run.workers)
        ExpectExitsZero(*w);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// A batch that passes every check on arrival but makes the gradient non-finite (GRPO, behaviour
// log-probs of -3e38): the learner retakes the round's step without it, closes that member, and
// the run completes with every worker at the learner's hash.
TEST(HiloNode, AMembersNonFiniteBatchIsDroppedAndTheRunCompletes)
{
    Sandbox box("non-finite-batch", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    run.extra = {"--set", "workload.kind=grpo", "--set", "workload.steps=4"};
    auto loaded = LoadScenarioFile(box.scenario, {"workload.kind=grpo"}, CurrentCatalog());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto context = BuildArmContext(loaded->resolved, loaded->resolved.arms[0]);
    ASSERT_TRUE(context.ok()) << context.status().ToString();
    auto mine = (*context)->workload->Rollout((*context)->initial.theta, 1, 1, nullptr);
    ASSERT_TRUE(mine.ok());
    auto b = models::TrajectoryBatch::Parse(*mine);
    ASSERT_TRUE(b.ok());
    b->behaviour_logp.assign(b->behaviour_logp.size(), -3e38f);
    for (size_t i = 0; i < b->rewards.size(); ++i)
        b->rewards[i] = i % 2 == 0 ? 1.0f : 0.0f;

    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    boost::asio::io_context io;
    auto hostile = RawPeer(io, run.port, 1);
    boost::asio::write(*hostile, boost::asio::buffer(Framed(
                                     kTrajectories, EncodeTrajectories(1, 0, b->Serialize()))));
    run.workers.push_back(run.StartWorker(0));
    EXPECT_TRUE(ReadUntilClosed(*hostile, 60)) << "the member was kept";
    run.workers.push_back(run.StartWorker(1));
    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    const std::string log = test::ReadFile((box.dir / "learner.stderr").string());
    EXPECT_NE(log.find("the batch of worker 1 for round 1 makes the gradient non-finite"),
              std::string::npos)
        << log;
    const std::vector<std::string> published = PublishLines(box);
    ASSERT_EQ(published.size(), 4u);
    EXPECT_EQ(published[0].substr(published[0].rfind(' ')), " 1") << published[0];
    EXPECT_EQ(run.Done().size(), 2u);
    for (const auto& [w, line] : run.Done())
        EXPECT_EQ(line.substr(line.rfind(' ')), " 1") << line; // the hash matched
    for (auto& w : run.workers)
        ExpectExitsZero(*w);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// mode.round_timeout on real processes: a member that connects and never sends is dropped from
// every round after the deadline, and the learner publishes every version with the other worker.
// (Without the deadline the learner waits for it until its stall timeout and exits 1.) Once the
// silent connection ends, the real worker 1 catches up and the run completes.
TEST(HiloNode, ASilentMemberIsDroppedAfterTheRoundTimeoutAndTheRunCompletes)
{
    Sandbox box("silent-member", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    run.extra = {"--set", "mode.round_timeout=500ms", "--set", "workload.steps=3"};
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    boost::asio::io_context io;
    auto silent = RawPeer(io, run.port, 1);
    run.workers.push_back(run.StartWorker(0));
    for (int i = 0; i < 1500 && PublishLines(box).size() < 3; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::vector<std::string> published = PublishLines(box);
    ASSERT_EQ(published.size(), 3u) << run.learner->StderrTail(20);
    for (const std::string& line : published)
        EXPECT_EQ(line.substr(line.rfind(' ')), " 1") << line; // one member dropped
    boost::system::error_code ignored;
    silent->shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored); // a FIN, unread or not
    silent->close(ignored);
    run.workers.push_back(run.StartWorker(1));
    ASSERT_EQ(run.WaitLearner(120), 0) << run.learner->StderrTail(20);
    const std::string log = test::ReadFile((box.dir / "learner.stderr").string());
    EXPECT_NE(log.find("dropped worker 1 from its round: no batch for round 1 within "
                       "mode.round_timeout"),
              std::string::npos)
        << log;
    EXPECT_EQ(run.Done().size(), 2u);
    for (auto& w : run.workers)
        ExpectExitsZero(*w);
    EXPECT_EQ(box.LiveProcesses(), 0);
}

// The stall watchdog counts training progress, not chatter: a member that repeats its done
// announcement every 100 ms does not keep a learner that cannot train alive past its stall
// timeout.
TEST(HiloNode, ChatterDoesNotKeepAStalledLearnerAlive)
{
    Sandbox box("chatter", test::DataPath("emu-slow.textproto"));
    ManualRun run(box);
    run.stall_timeout = "2";
    ASSERT_NO_FATAL_FAILURE(run.StartLearner());
    boost::asio::io_context io;
    auto chatty = RawPeer(io, run.port, 1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!run.learner->Poll() && std::chrono::steady_clock::now() < until)
    {
        boost::system::error_code ec;
        boost::asio::write(*chatty, boost::asio::buffer(Framed(kDone, EncodeDone(0, 0))), ec);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(run.learner->exited()) << "chatter kept the learner alive for 20 s";
    EXPECT_EQ(run.learner->exit_code(), 1);
    const std::string log = test::ReadFile((box.dir / "learner.stderr").string());
    EXPECT_NE(log.find("no progress for"), std::string::npos) << log;
    EXPECT_EQ(box.LiveProcesses(), 0);
}

} // namespace
} // namespace hilosim
