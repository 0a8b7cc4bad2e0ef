// Faults end to end (tiny scenarios, seconds): under each fault kind, for `full` and `hilo`, the
// run completes, no live worker loses a version and every live worker ends at the learner's last
// version and state hash; each kind leaves the trace it should (a resync from a snapshot, a hash
// mismatch recorded in workers.csv, TCP retransmissions or a frame check, a restart from the
// checkpoint). The relay topology survives a fan-out link outage; 10% loss over a window-limited
// path completes; a run that cannot finish stops at mode.max_sim_time naming the stuck workers;
// fault runs repeat byte for byte.
#include "sim/cli/catalog.h"
#include "sim/cli/hilo-sim-cli.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/run/arm-summary.h"
#include "sim/run/output-writer.h"
#include "sim/scenario/scenario-loader.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace hilosim
{
namespace
{

// Three workers on a 50 Mbps / 10 ms star; 8 versions take about 0.2 s of simulated time.
const char* kBase = R"(
name: "faults"
seed: 11
workload {
  kind: "distill"
  steps: 8
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  group_size: 2
  gen_tokens: 8
  teacher { delta_rank: 2 decay: 0.7 }
  eval_prompts: 8
  eval_every: 4
}
optimizer { kind: "adamw" lr: 0.01 }
learner { gpu: "H100-SXM" }
workers { count: 3 gpu: "A10G" }
network {
  topology: "star"
  worker_link { bandwidth: "50Mbps" delay: "10ms" }
}
mode { max_sim_time: "10min" }
arms { name: "full" strategy: "full" compressor: "dense" options { key: "dtype" value: "bf16" } }
arms { name: "hilo" strategy: "hilo" compressor: "dense" }
)";

// The same workers behind two relays: workers 0 and 1 in "eu", worker 2 in "us".
const std::vector<std::string> kRelay = {
    "network.topology=relay",
    "network.worker_link.bandwidth=1Gbps",
    "network.worker_link.delay=1ms",
    "network.regions[0]=name: \"eu\" wan { bandwidth: \"100Mbps\" delay: \"20ms\" }",
    "network.regions[1]=name: \"us\" wan { bandwidth: \"100Mbps\" delay: \"40ms\" }",
    "workers[0].region=eu",
    "workers[0].count=2",
    "workers[1]=count: 1 gpu: \"T4\" region: \"us\""};

LoadedScenario
Load(const std::string& text, const std::vector<std::string>& overrides = {})
{
    auto loaded = LoadScenarioText(text, "faults.textproto", overrides, CurrentCatalog());
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return std::move(loaded).value();
}

std::vector<ArmResult>
RunAll(const ResolvedScenario& sc, const ArmRunOptions& options = {})
{
    std::vector<ArmResult> out;
    for (size_t i = 0; i < sc.arms.size(); ++i)
    {
        auto r = RunArm(sc, i, nullptr, options);
        EXPECT_TRUE(r.ok()) << r.status().ToString();
        out.push_back(std::move(*r));
    }
    return out;
}

/// The promise: the arm completed, nothing lost, every live worker at the last version and hash.
void
ExpectPromiseKept(const ArmResult& r, uint32_t alive)
{
    ASSERT_TRUE(r.failure.ok()) << r.name << ": " << r.failure.ToString();
    const ArmSummary s = Summarize(r);
    EXPECT_EQ(s.steps, 8u) << r.name;
    EXPECT_EQ(s.faults_injected, r.faults.size()) << r.name;
    EXPECT_EQ(s.versions_lost, 0u) << r.name;
    EXPECT_EQ(s.workers_alive, alive) << r.name;
    EXPECT_EQ(r.workers_at_final_hash, alive) << r.name;
    for (size_t v = 0; v < r.publishes.size(); ++v)
    {
        EXPECT_EQ(r.publishes[v].version, v + 1) << r.name << ": versions in order, once each";
    }
    for (const WorkerEnd& w : r.worker_end)
    {
        if (w.alive)
        {
            EXPECT_EQ(w.version, 8u) << r.name;
            EXPECT_EQ(w.state_hash, r.publishes.back().state_hash) << r.name;
        }
    }
}

/// True when `worker` restored a snapshot in a catch-up that ended at or after `after_s`.
bool
RestoredSnapshot(const ArmResult& r, uint32_t worker, double after_s)
{
    for (const CatchUpEvent& c : r.catch_ups)
    {
        if (c.worker == worker && c.done_s >= after_s && c.snapshot_version >= 0 && c.ok)
            return true;
    }
    return false;
}

struct FaultCase
{
    const char* name;
    const char* fault; // a faults { ... } entry
    uint32_t alive;    // workers alive at the end
    void (*check)(const ArmResult&);
};

void
CheckCrashRestart(const ArmResult& r)
{
    // Worker 1 lost everything at 0.1 s and came back empty at 0.15 s: a snapshot plus the ring.
    EXPECT_GE(r.resyncs, 1u) << r.name;
    EXPECT_TRUE(RestoredSnapshot(r, 1, 0.15)) << r.name;
    EXPECT_GE(Summarize(r).recoveries, 1u) << r.name;
}

void
CheckCrashForGood(const ArmResult& r)
{
    // The learner stopped waiting for worker 1 and went on with the two others.
    EXPECT_FALSE(r.worker_end[1].alive) << r.name;
    bool late_apply = false;
    for (const ApplyEvent& a : r.applies)
        late_apply |= a.worker == 1 && a.ready_s > 0.1;
    EXPECT_FALSE(late_apply) << r.name << ": a dead worker applies nothing";
}

void
CheckJoin(const ArmResult& r)
{
    for (const ApplyEvent& a : r.applies)
    {
        if (a.worker == 2)
            EXPECT_GE(a.ready_s, 0.1) << r.name << ": nothing before the join";
    }
    for (const RolloutEvent& e : r.rollouts)
    {
        if (e.worker == 2)
            EXPECT_GE(e.started_s, 0.1) << r.name;
    }
    EXPECT_TRUE(RestoredSnapshot(r, 2, 0.1)) << r.name;
}

void
CheckLinkFault(const ArmResult& r)
{
    EXPECT_EQ(Summarize(r).recoveries, 1u) << r.name;
    EXPECT_GT(r.sim_time_s, 0.4) << r.name << ": the outage cost time (TCP waits out its RTO)";
}

// A link outage drops packets only in its direction(s) (`down`: away from the learner, `up`:
// towards it); the other direction, data one way and ACKs the other, keeps arriving.
void
CheckLinkDownDrops(const ArmResult& r, bool down, bool up)
{
    CheckLinkFault(r);
    ASSERT_EQ(r.faults.size(), 1u);
    EXPECT_EQ(r.faults[0].dropped_down > 0, down) << r.name << ": " << r.faults[0].dropped_down;
    EXPECT_EQ(r.faults[0].dropped_up > 0, up) << r.name << ": " << r.faults[0].dropped_up;
}

void
CheckCorruptBeforeTcp(const ArmResult& r)
{
    // Segments were damaged, TCP's checksum dropped every one (the sender resent them): no frame
    // check fired, so no connection closed and nothing needed a resync.
    EXPECT_GT(r.segments_corrupted, 0u) << r.name;
    EXPECT_EQ(r.connections_closed, 0u) << r.name;
    EXPECT_EQ(r.resyncs, 0u) << r.name;
}

void
CheckCorruptAfterTcp(const ArmResult& r)
{
    // The damage passed TCP: the frame CRC caught it, the receiver closed the connection, the
    // worker reconnected and caught up.
    EXPECT_GT(r.segments_corrupted, 0u) << r.name;
    EXPECT_GT(r.connections_closed, 0u) << r.name;
    EXPECT_EQ(r.hash_mismatches, 0u) << r.name << ": nothing damaged reached a replica";
}

void
CheckDivergence(const ArmResult& r)
{
    // workers.csv: a hash_ok = 0 row for the diverged version, then the same version again
    // through a resync from a snapshot.
    const ApplyEvent* rejected = nullptr;
    for (const ApplyEvent& a : r.applies)
    {
        if (a.worker == 0 && !a.hash_ok)
        {
            EXPECT_EQ(rejected, nullptr) << r.name << ": one divergence";
            rejected = &a;
        }
    }
    ASSERT_NE(rejected, nullptr) << r.name;
    EXPECT_GE(rejected->ready_s, 0.1) << r.name;
    EXPECT_EQ(r.hash_mismatches, 1u) << r.name;
    bool healed = false;
    for (const ApplyEvent& a : r.applies)
    {
        healed |= a.worker == 0 && a.hash_ok && a.via_resync && a.version == rejected->version &&
                  a.ready_s > rejected->ready_s;
    }
    EXPECT_TRUE(healed) << r.name;
    EXPECT_TRUE(RestoredSnapshot(r, 0, rejected->ready_s)) << r.name;
    ASSERT_EQ(r.faults.size(), 1u);
    EXPECT_DOUBLE_EQ(r.faults[0].end_s, rejected->ready_s) << "detection ends the fault";
}

void
CheckLearnerRestart(const ArmResult& r)
{
    // Every connection to the learner ended; the workers kept their state (no snapshot needed).
    EXPECT_GE(r.connections_closed, 3u) << r.name;
    for (uint32_t w = 0; w < 3; ++w)
        EXPECT_FALSE(RestoredSnapshot(r, w, 0)) << r.name << " worker " << w;
    bool after = false;
    for (const PublishEvent& p : r.publishes)
        after |= p.published_s > 0.3;
    EXPECT_TRUE(after) << r.name << ": the restarted learner published the rest";
}

const FaultCase kCases[] = {
    {"CrashAndRestart",
     R"(faults { kind: "worker_crash" at: "0.1s" target: "worker:1" restart_after: "50ms" })", 3,
     CheckCrashRestart},
    {"CrashForGood", R"(faults { kind: "worker_crash" at: "0.1s" target: "worker:1" })", 2,
     CheckCrashForGood},
    {"Join", R"(faults { kind: "worker_join" at: "0.1s" target: "worker:2" })", 3, CheckJoin},
    {"LinkDown", R"(faults { kind: "link_down" at: "0.1s" target: "worker:0" duration: "300ms" })",
     3, [](const ArmResult& r) { CheckLinkDownDrops(r, true, true); }},
    {"LinkDownOneWayDown",
     R"(faults { kind: "link_down" at: "0.1s" target: "worker:0" duration: "300ms"
                 direction: "down" })",
     3, [](const ArmResult& r) { CheckLinkDownDrops(r, true, false); }},
    {"LinkDownOneWayUp",
     R"(faults { kind: "link_down" at: "0.1s" target: "worker:0" duration: "300ms"
                 direction: "up" })",
     3, [](const ArmResult& r) { CheckLinkDownDrops(r, false, true); }},
    {"LossBurst",
     R"(faults { kind: "loss_burst" at: "50ms" target: "worker:0" duration: "300ms" rate: 0.3 })",
     3, CheckLinkFault},
    {"CorruptBeforeTcp",
     R"(faults { kind: "corrupt" at: "50ms" target: "worker:0" duration: "300ms" rate: 0.5 })", 3,
     CheckCorruptBeforeTcp},
    {"CorruptAfterTcp",
     R"(faults { kind: "corrupt" at: "50ms" target: "worker:0" duration: "300ms" rate: 0.5
                 after_tcp: true })",
     3, CheckCorruptAfterTcp},
    {"ReplayDivergence", R"(faults { kind: "replay_divergence" at: "0.1s" target: "worker:0" })", 3,
     CheckDivergence},
    {"LearnerRestart",
     R"(faults { kind: "learner_restart" at: "0.1s" target: "learner" restart_after: "200ms" })", 3,
     CheckLearnerRestart},
};

void
PrintTo(const FaultCase& c, std::ostream* os)
{
    *os << c.name;
}

class FaultKinds : public ::testing::TestWithParam<FaultCase>
{
};

TEST_P(FaultKinds, EveryLiveWorkerEndsAtTheLearnersHash)
{
    const FaultCase& c = GetParam();
    LoadedScenario loaded = Load(std::string(kBase) + c.fault);
    ASSERT_EQ(loaded.resolved.faults.size(), 1u);
    for (const ArmResult& r : RunAll(loaded.resolved))
    {
        SCOPED_TRACE(r.name);
        ExpectPromiseKept(r, c.alive);
        ASSERT_EQ(r.faults.size(), 1u);
        EXPECT_TRUE(r.faults[0].injected);
        c.check(r);
    }
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultKinds, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<FaultCase>& info)
                         { return std::string(info.param.name); });

// Replicas that share their bit-identical states (hilo/sync/replica-group.h) write the same
// bytes as replicas that each hold their own, under every fault: a diverged replay still fails
// its hash check, a restarted or joining worker restores its own state.
void
ExpectSharedReplicasChangeNoOutput(const std::string& fault, const std::string& name)
{
    LoadedScenario loaded = Load(std::string(kBase) + fault);
    const std::filesystem::path base =
        std::filesystem::temp_directory_path() / ("hilo-faults-shared-" + name);
    std::filesystem::remove_all(base);
    RunRecord record;
    record.scenario_name = "faults";
    record.resolved_text = loaded.resolved_text;
    ArmRunOptions own;
    own.shared_replicas = false;
    ASSERT_TRUE(WriteRunOutputs((base / "shared").string(), record, RunAll(loaded.resolved)).ok());
    ASSERT_TRUE(
        WriteRunOutputs((base / "own").string(), record, RunAll(loaded.resolved, own)).ok());
    for (const char* file : {"steps.csv", "workers.csv", "rollouts.csv", "summary.json"})
    {
        std::ifstream a(base / "shared" / file);
        std::ifstream b(base / "own" / file);
        std::stringstream sa;
        std::stringstream sb;
        sa << a.rdbuf();
        sb << b.rdbuf();
        EXPECT_FALSE(sa.str().empty()) << file;
        EXPECT_EQ(sa.str(), sb.str()) << file;
    }
    std::filesystem::remove_all(base);
}

TEST_P(FaultKinds, SharedReplicasChangeNoOutput)
{
    ExpectSharedReplicasChangeNoOutput(GetParam().fault, GetParam().name);
}

// The workers replay in index order, so worker 0 makes every shared state and the others find
// it: a later worker told to diverge must still replay on its own.
TEST(Faults, SharedReplicasStillDivergeWhenTold)
{
    for (const char* worker : {"1", "2"})
    {
        SCOPED_TRACE(worker);
        ExpectSharedReplicasChangeNoOutput(
            std::string(R"(faults { kind: "replay_divergence" at: "0.1s" target: "worker:)") +
                worker + "\" }",
            std::string("divergence-") + worker);
    }
}

TEST(Faults, WorkersCsvRecordsTheRejectedReplay)
{
    const auto divergence =
        std::find_if(std::begin(kCases), std::end(kCases),
                     [](const FaultCase& c) { return std::string(c.name) == "ReplayDivergence"; });
    ASSERT_NE(divergence, std::end(kCases));
    LoadedScenario loaded = Load(std::string(kBase) + divergence->fault, {"arms[0].strategy=hilo"});
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "hilo-faults-divergence";
    std::filesystem::remove_all(dir);
    RunRecord record;
    record.scenario_name = "faults";
    record.resolved_text = loaded.resolved_text;
    ASSERT_TRUE(WriteRunOutputs(dir.string(), record, RunAll(loaded.resolved)).ok());
    std::ifstream csv(dir / "workers.csv");
    std::string line;
    std::getline(csv, line);
    ASSERT_EQ(line, "arm,version,worker,gpu,region,received_s,ready_s,latency_s,hash_ok,resync");
    int rejected = 0;
    std::string rejected_version;
    bool resynced_after = false;
    while (std::getline(csv, line))
    {
        std::vector<std::string> f;
        std::stringstream s(line);
        for (std::string cell; std::getline(s, cell, ',');)
            f.push_back(cell);
        ASSERT_EQ(f.size(), 10u) << line;
        if (f[0] != "full" || f[2] != "0")
            continue;
        if (f[8] == "0")
        {
            ++rejected;
            rejected_version = f[1];
        }
        else if (rejected > 0 && f[1] == rejected_version && f[9] == "1")
        {
            resynced_after = true;
        }
    }
    EXPECT_EQ(rejected, 1);
    EXPECT_TRUE(resynced_after);
    std::ifstream summary(dir / "summary.json");
    std::stringstream text;
    text << summary.rdbuf();
    EXPECT_NE(text.str().find("\"versions_lost\": 0"), std::string::npos);
    EXPECT_NE(text.str().find("\"workers_at_final_hash\": 3"), std::string::npos);
    EXPECT_NE(text.str().find("\"faults_injected\": 1"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(Faults, RelayTopologySurvivesAFanOutLinkOutage)
{
    // Worker 1's LAN link to its relay is down for 200 s: long enough for TCP to give up on every
    // connection across it. The learner goes on without worker 1; the relay drops what it cannot
    // forward; once the link is back, worker 1 dials again and catches up.
    LoadedScenario loaded = Load(std::string(kBase) +
                                     R"(faults { kind: "link_down" at: "0.1s" target: "worker:1"
                                                 duration: "200s" })",
                                 kRelay);
    ASSERT_EQ(loaded.resolved.network.topology, TopologyKind::kRelay);
    for (const ArmResult& r : RunAll(loaded.resolved))
    {
        SCOPED_TRACE(r.name);
        ExpectPromiseKept(r, 3);
        EXPECT_GT(r.connections_closed, 0u);
        EXPECT_GE(r.resyncs, 1u);
        EXPECT_GT(r.sim_time_s, 200.0);
        // The others were not held up by the outage: they had every version long before.
        double others_done = 0;
        for (const ApplyEvent& a : r.applies)
        {
            if (a.worker != 1 && a.version == 8 && a.hash_ok)
                others_done = std::max(others_done, a.ready_s);
        }
        EXPECT_LT(others_done, 200.0);
    }
}

TEST(Faults, TenPercentLossOverAWindowLimitedPathCompletes)
{
    // 1 Gbps with a 200 ms RTT: the 25 MB bandwidth-delay product is far above the largest socket
    // buffer, so every connection is window-limited; every worker link loses 10% of its packets
    // each way for the whole run.
    LoadedScenario loaded =
        Load(kBase, {"network.worker_link.bandwidth=1Gbps", "network.worker_link.delay=100ms",
                     "network.worker_link.loss=0.1"});
    for (const ArmResult& r : RunAll(loaded.resolved))
    {
        SCOPED_TRACE(r.name);
        ExpectPromiseKept(r, 3);
    }
}

TEST(Faults, ARunThatCannotFinishStopsAtMaxSimTime)
{
    // Worker 1's link goes down and never comes back: the learner finishes without it, and the
    // run stops at the bound, exit code 1, naming worker 1 and the version it is stuck at.
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / "hilo-faults-forever.textproto";
    {
        std::ofstream out(file);
        out << kBase << R"(faults { kind: "link_down" at: "0.1s" target: "worker:1" })";
    }
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hilo-forever";
    std::vector<const char*> args = {
        "hilo-sim",  "run",     file.c_str(), "--out",
        dir.c_str(), "--quiet", "--set",      "mode.max_sim_time=5min"};
    std::ostringstream out, err;
    // The run engine reports on std::cerr.
    std::streambuf* cerr = std::cerr.rdbuf(err.rdbuf());
    const int code = RunHiloSim(static_cast<int>(args.size()), args.data(), out, err);
    std::cerr.rdbuf(cerr);
    EXPECT_EQ(code, kExitRuntime) << err.str();
    EXPECT_NE(err.str().find("stopped at mode.max_sim_time (300 s)"), std::string::npos)
        << err.str();
    EXPECT_NE(err.str().find("worker 1 at version"), std::string::npos) << err.str();
    EXPECT_EQ(err.str().find("worker 0 at"), std::string::npos) << "only the stuck one";
    std::filesystem::remove(file);
    std::filesystem::remove_all(dir);
}

TEST(Faults, FaultRunsRepeatByteForByte)
{
    LoadedScenario loaded = Load(std::string(kBase) + R"(
faults { kind: "worker_crash" at: "60ms" target: "worker:2" restart_after: "40ms" }
faults { kind: "corrupt" at: "50ms" target: "worker:0" duration: "200ms" rate: 0.3 after_tcp: true }
faults { kind: "loss_burst" at: "80ms" target: "worker:1" duration: "200ms" rate: 0.2 }
faults { kind: "replay_divergence" at: "0.15s" target: "worker:1" }
)");
    const std::filesystem::path base = std::filesystem::temp_directory_path() / "hilo-faults-det";
    std::filesystem::remove_all(base);
    RunRecord record;
    record.scenario_name = "faults";
    record.resolved_text = loaded.resolved_text;
    for (const char* run : {"a", "b"})
    {
        std::vector<ArmResult> results = RunAll(loaded.resolved);
        for (const ArmResult& r : results)
            ExpectPromiseKept(r, 3);
        ASSERT_TRUE(WriteRunOutputs((base / run).string(), record, results).ok());
    }
    for (const char* file : {"steps.csv", "workers.csv", "rollouts.csv", "summary.json"})
    {
        std::ifstream a(base / "a" / file), b(base / "b" / file);
        std::stringstream sa, sb;
        sa << a.rdbuf();
        sb << b.rdbuf();
        EXPECT_FALSE(sa.str().empty()) << file;
        EXPECT_EQ(sa.str(), sb.str()) << file;
    }
    std::filesystem::remove_all(base);
}

} // namespace
} // namespace hilosim
