// End-to-end: tiny scenarios (seconds) through the whole testbed, one per strategy and topology.
// Every worker applies every version; full and hilo replicas never mismatch; delta drifts; the
// same scenario gives byte-identical CSVs; a corrupted update is rejected and repaired by resync.
#include "sim/cli/catalog.h"
#include "sim/cli/run-command.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/run/arm-context-builder.h"
#include "sim/run/arm-summary.h"
#include "sim/run/output-writer.h"
#include "sim/scenario/scenario-loader.h"

#include "models/compute-model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace hilosim
{
namespace
{

// Two workers on a 50 Mbps / 10 ms star, a tiny model, a handful of steps.
const char* kTiny = R"(
name: "tiny"
seed: 7
workload {
  kind: "distill"
  steps: 6
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  group_size: 2
  gen_tokens: 8
  teacher { delta_rank: 2 decay: 0.7 }
  eval_prompts: 8
  eval_every: 3
}
optimizer { kind: "adamw" lr: 0.01 }
learner { gpu: "H100-SXM" }
workers { count: 1 gpu: "A10G" }
workers { count: 1 gpu: "T4" }
network {
  topology: "star"
  worker_link { bandwidth: "50Mbps" delay: "10ms" }
}
arms { name: "full" strategy: "full" compressor: "dense" options { key: "dtype" value: "bf16" } }
arms { name: "hilo-dense" strategy: "hilo" compressor: "dense" }
arms { name: "delta-dense" strategy: "delta" compressor: "dense" options { key: "dtype" value: "bf16" } }
)";

LoadedScenario
Load(const std::string& text, const std::vector<std::string>& overrides = {})
{
    auto loaded = LoadScenarioText(text, "tiny.textproto", overrides, CurrentCatalog());
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
        EXPECT_TRUE(r->failure.ok()) << r->failure.ToString();
        out.push_back(std::move(*r));
    }
    return out;
}

void
ExpectEveryWorkerHasEveryVersion(const ArmResult& r, uint32_t workers, uint64_t steps)
{
    std::set<std::pair<uint32_t, uint64_t>> seen;
    for (const ApplyEvent& a : r.applies)
    {
        EXPECT_TRUE(a.hash_ok);
        EXPECT_GE(a.ready_s, a.received_s);
        seen.insert({a.worker, a.version});
    }
    EXPECT_EQ(seen.size(), workers * steps) << r.name;
    EXPECT_EQ(r.publishes.size(), steps);
}

std::string
ReadFile(const std::filesystem::path& p)
{
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

TEST(EndToEnd, EveryStrategyDeliversEveryVersion)
{
    LoadedScenario loaded = Load(kTiny);
    std::vector<ArmResult> results = RunAll(loaded.resolved);
    ASSERT_EQ(results.size(), 3u);
    for (const ArmResult& r : results)
    {
        ExpectEveryWorkerHasEveryVersion(r, 2, 6);
        EXPECT_EQ(r.hash_mismatches, 0u);
        EXPECT_EQ(r.resyncs, 0u);
        ArmSummary s = Summarize(r);
        EXPECT_GT(s.latency_p50_s, 0.0);
        EXPECT_GT(s.step_time_s_mean, 0.0);
        // Versions 0, 3, 6 were evaluated.
        ASSERT_EQ(r.evals.size(), 3u);
    }
    // full (bf16) and hilo replicas equal the learner's view: zero drift for hilo.
    EXPECT_EQ(Summarize(results[1]).drift_rel_l2_max, 0.0);
    // delta with bf16 deltas: replicas drift from the learner, and the drift is reported.
    EXPECT_GT(Summarize(results[2]).drift_rel_l2_max, 0.0);
    // dense fp32 gradients weigh 2x the bf16 parameters.
    EXPECT_NEAR(Summarize(results[1]).real_bytes_per_update_mean /
                    Summarize(results[0]).real_bytes_per_update_mean,
                2.0, 0.05);
}

TEST(EndToEnd, SameScenarioGivesIdenticalCsvs)
{
    LoadedScenario loaded = Load(kTiny, {"arms[0].strategy=hilo"});
    const std::filesystem::path base =
        std::filesystem::temp_directory_path() / "hilo-e2e-determinism";
    std::filesystem::remove_all(base);
    RunRecord record;
    record.scenario_name = "tiny";
    record.resolved_text = loaded.resolved_text;
    for (const char* run : {"a", "b"})
    {
        ASSERT_TRUE(WriteRunOutputs((base / run).string(), record, RunAll(loaded.resolved)).ok());
    }
    for (const char* file :
         {"steps.csv", "workers.csv", "rollouts.csv", "links.csv", "summary.json"})
    {
        const std::string a = ReadFile(base / "a" / file);
        EXPECT_FALSE(a.empty()) << file;
        EXPECT_EQ(a, ReadFile(base / "b" / file)) << file;
    }
    std::filesystem::remove_all(base);
}

TEST(EndToEnd, BatchedRolloutsChangeNoOutput)
{
    // Staleness 1: workers may roll out the same round at different versions too.
    LoadedScenario loaded = Load(kTiny, {"mode.max_staleness=1"});
    const std::filesystem::path base = std::filesystem::temp_directory_path() / "hilo-e2e-batched";
    std::filesystem::remove_all(base);
    RunRecord record;
    record.scenario_name = "tiny";
    record.resolved_text = loaded.resolved_text;
    ArmRunOptions separate;
    separate.batched_rollouts = false;
    ASSERT_TRUE(WriteRunOutputs((base / "batched").string(), record, RunAll(loaded.resolved)).ok());
    ASSERT_TRUE(
        WriteRunOutputs((base / "separate").string(), record, RunAll(loaded.resolved, separate))
            .ok());
    for (const char* file : {"steps.csv", "workers.csv", "rollouts.csv", "summary.json"})
    {
        const std::string a = ReadFile(base / "batched" / file);
        EXPECT_FALSE(a.empty()) << file;
        EXPECT_EQ(a, ReadFile(base / "separate" / file)) << file;
    }
    std::filesystem::remove_all(base);
}

TEST(EndToEnd, CorruptUpdateIsRejectedAndRepairedByResync)
{
    LoadedScenario loaded = Load(kTiny);
    ArmRunOptions options;
    options.corrupt_version_at_worker0 = 3;
    auto r = RunArm(loaded.resolved, /*arm_index=*/1, nullptr, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->failure.ok()) << r->failure.ToString();
    EXPECT_EQ(r->resyncs, 1u);
    ExpectEveryWorkerHasEveryVersion(*r, 2, 6);
    bool resynced = false;
    for (const ApplyEvent& a : r->applies)
    {
        resynced |= a.worker == 0 && a.version == 3 && a.via_resync;
    }
    EXPECT_TRUE(resynced);
}

const char* kRegions = R"(
name: "tiny-regions"
seed: 3
workload {
  kind: "grpo"
  steps: 5
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  group_size: 4
  gen_tokens: 8
  eval_prompts: 8
  eval_every: 5
}
optimizer { kind: "adamw" lr: 0.01 }
learner { gpu: "A100-80GB" }
workers { count: 2 gpu: "L40S" region: "eu" }
workers { count: 1 gpu: "RTX-4090" region: "us" }
network {
  topology: "relay"
  worker_link { bandwidth: "1Gbps" delay: "1ms" }
  regions { name: "eu" wan { bandwidth: "100Mbps" delay: "20ms" } }
  regions { name: "us" wan { bandwidth: "50Mbps" delay: "40ms" } }
}
mode { max_staleness: 1 }
arms { name: "hilo" strategy: "hilo" compressor: "dense" options { key: "dtype" value: "bf16" } }
)";

TEST(EndToEnd, RelayRegionsAndBoundedStaleness)
{
    for (const char* topology : {"relay", "regions"})
    {
        LoadedScenario loaded = Load(kRegions, {std::string("network.topology=") + topology});
        std::vector<ArmResult> results = RunAll(loaded.resolved);
        ASSERT_EQ(results.size(), 1u);
        ExpectEveryWorkerHasEveryVersion(results[0], 3, 5);
        EXPECT_EQ(results[0].hash_mismatches, 0u);
        EXPECT_EQ(results[0].quality_metric, "mean_reward");
        // With staleness 1 some rollouts run on a version older than round - 1.
        bool stale = false;
        for (const RolloutEvent& e : results[0].rollouts)
        {
            EXPECT_LE(e.round, e.behaviour_version + 2);
            stale |= e.behaviour_version + 1 < e.round;
        }
        EXPECT_TRUE(stale) << topology;
    }
}

// Update latency (ready at the worker minus gradient ready at the learner) by (version, worker).
std::map<std::pair<uint64_t, uint32_t>, double>
LatencyByVersionAndWorker(const ArmResult& r)
{
    std::map<std::pair<uint64_t, uint32_t>, double> out;
    for (const ApplyEvent& a : r.applies)
        out[{a.version, a.worker}] = a.ready_s - r.publishes.at(a.version - 1).grad_ready_s;
    return out;
}

TEST(EndToEnd, AStreamingRelayIsAsFastAsARouterAndStoreAndForwardAddsALanTransfer)
{
    // One worker per region, so that the "regions" topology (a router at the region's edge,
    // one copy per worker on the WAN) carries exactly what the relay does: its latency is one
    // WAN transfer + the LAN delay. 5.7 MB updates: a LAN transfer (1 Gbps) takes 46 ms, the WAN
    // one (100 / 50 Mbps) 0.46 / 0.92 s.
    const std::vector<std::string> base = {
        "llm_profile=Llama-3.2-1B",       "workload.steps=2",
        "mode.max_staleness=0",           "workers[0].count=1",
        "network.worker_link.mtu=9000",   "network.regions[0].wan.mtu=9000",
        "network.regions[1].wan.mtu=9000"};
    auto run = [&](std::vector<std::string> extra)
    {
        extra.insert(extra.begin(), base.begin(), base.end());
        LoadedScenario loaded = Load(kRegions, extra);
        auto r = RunArm(loaded.resolved, 0, nullptr, {});
        EXPECT_TRUE(r.ok() && r->failure.ok());
        ExpectEveryWorkerHasEveryVersion(*r, 2, 2);
        EXPECT_EQ(r->hash_mismatches, 0u);
        return LatencyByVersionAndWorker(*r);
    };
    const auto router = run({"network.topology=regions"});
    const auto streamed = run({}); // kRegions is a relay scenario; streaming is the default
    const auto stored = run({"network.relay_forwarding=store_and_forward"});
    ASSERT_EQ(router.size(), 4u);
    const double lan_transfer_s = 5.7e6 * 8 / 1e9;
    for (const auto& [key, latency] : router)
    {
        SCOPED_TRACE("version " + std::to_string(key.first) + " worker " +
                     std::to_string(key.second));
        // Never slower than the router (the first update is even faster: two shorter TCP
        // connections leave slow start sooner than one across both links).
        EXPECT_LT(streamed.at(key), latency + 0.05 * lan_transfer_s);
        EXPECT_GT(stored.at(key) - streamed.at(key), 0.8 * lan_transfer_s);
    }
}

TEST(EndToEnd, GrpoTaskReachesTheWorkload)
{
    LoadedScenario stride = Load(kRegions);
    LoadedScenario chain =
        Load(kRegions, {"workload.grpo.task=residue_chain", "workload.grpo.modulus=3",
                        "workload.grpo.entropy_coef=0.02"});
    auto a = BuildArmContext(stride.resolved, stride.resolved.arms[0]);
    auto b = BuildArmContext(chain.resolved, chain.resolved.arms[0]);
    ASSERT_TRUE(a.ok() && b.ok());
    const models::WorkloadConfig& x = (*a)->workload->config();
    const models::WorkloadConfig& y = (*b)->workload->config();
    EXPECT_TRUE(x.task_prompt_stride);
    EXPECT_EQ(x.task_modulus, 4);
    EXPECT_EQ(x.entropy_coef, 0.0);
    EXPECT_FALSE(y.task_prompt_stride);
    EXPECT_EQ(y.task_modulus, 3);
    EXPECT_EQ(y.entropy_coef, 0.02);
    // The task is the reward: the same untrained adapter scores differently on the two.
    const std::vector<float>& theta = (*a)->initial.theta;
    EXPECT_NE((*a)->workload->Evaluate(theta), (*b)->workload->Evaluate(theta));
}

TEST(EndToEnd, BudgetBelowTheSmallestPayloadIsBadInputBeforeAnyArmRuns)
{
    LoadedScenario loaded = Load(kTiny, {"arms[1].budget=100B"});
    hilo::Status s = CheckScenarioArms(loaded);
    EXPECT_EQ(s.code(), hilo::StatusCode::kBudgetTooSmall) << s.ToString();
    EXPECT_NE(s.message().find("tiny.textproto"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("arms[1]"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("hilo-dense"), std::string::npos) << s.message();
    RunOptions options;
    options.out_dir = (std::filesystem::temp_directory_path() / "hilo-e2e-bad-budget").string();
    options.quiet = true;
    std::filesystem::remove_all(options.out_dir);
    EXPECT_EQ(RunScenario(loaded, options), 2);
    EXPECT_FALSE(std::filesystem::exists(options.out_dir)); // nothing written, nothing run
}

TEST(EndToEnd, StepsCsvRowsHaveTheHeaderWidth)
{
    LoadedScenario loaded = Load(kTiny);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hilo-e2e-columns";
    RunRecord record;
    ASSERT_TRUE(WriteRunOutputs(dir.string(), record, {RunAll(loaded.resolved)[0]}).ok());
    std::istringstream steps(ReadFile(dir / "steps.csv"));
    std::string line;
    std::getline(steps, line);
    const auto width = std::count(line.begin(), line.end(), ',');
    int rows = 0;
    while (std::getline(steps, line))
    {
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), width) << line;
        ++rows;
    }
    EXPECT_EQ(rows, 7); // version 0 (evaluation only) and versions 1..6
    std::filesystem::remove_all(dir);
}

// allocation.csv names each matrix as the learner's adapter layout does, in layout order.
TEST(EndToEnd, AllocationCsvNamesEachMatrixInLayoutOrder)
{
    const std::string text = std::string(kTiny) +
                             "arms { name: \"hilo-spar\" strategy: \"hilo\" compressor: \"spar\" "
                             "budget: \"10%\" }\n";
    LoadedScenario loaded = Load(text);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hilo-e2e-alloc";
    auto spar = RunArm(loaded.resolved, loaded.resolved.arms.size() - 1, nullptr, {});
    ASSERT_TRUE(spar.ok()) << spar.status().ToString();
    RunRecord record;
    ASSERT_TRUE(WriteRunOutputs(dir.string(), record, {*spar}).ok());
    std::istringstream csv(ReadFile(dir / "allocation.csv"));
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "arm,version,matrix,matrix_name,kept");
    // One layer: q, k, v, o, up, down, each factor A then B (models/tiny-lm.cc's order).
    const std::vector<std::string> projections = {"attn.q", "attn.k", "attn.v",
                                                  "attn.o", "mlp.up", "mlp.down"};
    std::vector<std::string> expected;
    for (const std::string& p : projections)
    {
        expected.push_back("layers.0." + p + ".lora_A");
        expected.push_back("layers.0." + p + ".lora_B");
    }
    int rows = 0;
    while (std::getline(csv, line))
    {
        std::vector<std::string> f;
        std::stringstream fields(line);
        for (std::string x; std::getline(fields, x, ',');)
            f.push_back(x);
        ASSERT_EQ(f.size(), 5u) << line;
        const size_t matrix = std::stoul(f[2]);
        ASSERT_LT(matrix, expected.size()) << line;
        EXPECT_EQ(f[3], expected[matrix]) << line;
        ++rows;
    }
    EXPECT_EQ(rows, 6 * 12); // six versions x twelve matrices
    std::filesystem::remove_all(dir);
}

TEST(EndToEnd, ConnectionsThatIdledThroughARolloutShareTheLearnerUplinkFairly)
{
    // Four workers' connections wake up together after every rollout and cross one learner
    // uplink. Unpaced, each sent its whole window at once, the learner's own queue overflowed
    // and three of four workers waited out a retransmission timeout (2.2 s instead of 0.23 s).
    LoadedScenario loaded = Load(
        kTiny, {"llm_profile=Qwen2.5-7B", "workload.steps=3", "workload.modelled_prompt_tokens=256",
                "workload.modelled_gen_tokens=512", "workers[0].count=3", "workers[1].gpu=A10G",
                "network.worker_link.bandwidth=1Gbps", "network.worker_link.delay=40ms",
                "network.worker_link.mtu=9000", "network.learner_uplink.bandwidth=100Gbps",
                "network.learner_uplink.delay=1ms", "network.learner_uplink.mtu=9000"});
    auto r = RunArm(loaded.resolved, 0, nullptr, {}); // full sync, 20 MB per update
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::map<uint64_t, std::pair<double, double>> ready; // version -> first, last ready_s
    for (const ApplyEvent& a : r->applies)
    {
        auto [it, fresh] = ready.try_emplace(a.version, a.ready_s, a.ready_s);
        it->second.first = std::min(it->second.first, a.ready_s);
        it->second.second = std::max(it->second.second, a.ready_s);
    }
    ASSERT_EQ(ready.size(), 3u);
    for (const auto& [version, range] : ready)
    {
        // Same bytes, same links: the workers finish together (0.2 s apart at most, not 1.9 s).
        EXPECT_LT(range.second - range.first, 0.2) << "version " << version;
    }
}

TEST(EndToEnd, EveryStrategyChargesTheLearnersOwnOptimizerStep)
{
    // Whatever it ships, the learner runs AdamW on its own adapter before it publishes: full sync
    // serialises the new parameters on top of it, hilo encodes and decodes its gradient, delta
    // encodes the parameter delta and adds its decode to the replicas' shadow copy.
    LoadedScenario loaded = Load(
        kTiny, {"llm_profile=Llama-3.2-1B", "workload.steps=2", "network.worker_link.mtu=9000"});
    for (size_t i = 0; i < loaded.resolved.arms.size(); ++i)
    {
        auto context = BuildArmContext(loaded.resolved, loaded.resolved.arms[i]);
        ASSERT_TRUE(context.ok()) << context.status().ToString();
        const ArmContext& c = **context;
        // The step = the fused AdamW pass a worker's replay runs (gradient buffer + theta, m, v).
        const double step =
            models::DecodeReplaySeconds(c.learner_gpu, c.modelled_numel, "hilo", c.compute).value();
        double floor_s = step;
        if (c.sync.kind == hilo::SyncKind::kFull)
        {
            floor_s +=
                models::AdapterLoadSeconds(c.learner_gpu, c.modelled_adapter_bytes, c.compute);
        }
        if (c.sync.kind == hilo::SyncKind::kDelta)
        {
            floor_s +=
                models::DecodeReplaySeconds(c.learner_gpu, c.modelled_numel, "delta", c.compute)
                    .value();
        }
        auto r = RunArm(loaded.resolved, i, nullptr, {});
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        ASSERT_EQ(r->publishes.size(), 2u);
        for (const PublishEvent& p : r->publishes)
        {
            EXPECT_GE(p.encode_s, floor_s * (1 - 1e-12)) << r->name << " v" << p.version;
            // Published after the learner's time, never before.
            EXPECT_NEAR(p.published_s - p.grad_ready_s, p.encode_s, 1e-9) << r->name;
        }
    }
}

TEST(EndToEnd, ASizeBudgetIsWireBytesOfTheModelledAdapter)
{
    // "1MB" means one megabyte of payload on the wire per update at the modelled scale
    // (Llama-3.2-1B at rank 4: a 5.6 MB adapter), not one megabyte of the tiny real adapter's
    // (4.6 KB) payload. The budget bounds the compressor's payload; the update's own header
    // (version, hashes, compressor name) comes on top, as it does without a profile.
    LoadedScenario loaded =
        Load(kTiny, {"llm_profile=Llama-3.2-1B", "workload.steps=2", "arms[1].compressor=topk",
                     "arms[1].budget=1MB", "arms[2].compressor=topk", "arms[2].budget=5%"});
    auto sized = RunArm(loaded.resolved, 1, nullptr, {});
    auto fraction = RunArm(loaded.resolved, 2, nullptr, {});
    ASSERT_TRUE(sized.ok() && fraction.ok());
    const double adapter = static_cast<double>(sized->adapter_bytes);
    EXPECT_GT(adapter, 5e6);
    const double scale = sized->adapter_scale;
    for (const PublishEvent& p : sized->publishes)
    {
        const double payload_wire = static_cast<double>(p.payload_bytes) * scale;
        EXPECT_LE(payload_wire, 1e6) << p.version;
        EXPECT_GE(payload_wire, 0.9e6) << p.version; // top-k spends its budget
    }
    EXPECT_NEAR(sized->budget_fraction, 1e6 / adapter, 1e-3);
    // A fraction already meant a share of the (modelled) adapter's bytes.
    for (const PublishEvent& p : fraction->publishes)
    {
        const double payload_wire = static_cast<double>(p.payload_bytes) * scale;
        EXPECT_LE(payload_wire, 0.05 * adapter) << p.version;
        EXPECT_GE(payload_wire, 0.045 * adapter) << p.version;
    }
    // Without an LLM profile the real bytes are the wire bytes: a size is what it says.
    LoadedScenario real =
        Load(kTiny, {"workload.steps=1", "arms[1].compressor=topk", "arms[1].budget=2KB"});
    auto small = RunArm(real.resolved, 1, nullptr, {});
    ASSERT_TRUE(small.ok());
    EXPECT_LE(small->publishes[0].payload_bytes, 2000);
    EXPECT_GE(small->publishes[0].payload_bytes, 1800);
}

TEST(EndToEnd, RolloutAndApplyShareTheWorkersGpuUnderStaleness)
{
    // With max_staleness 1 a T4 worker is still rolling out the next round when an update
    // arrives. Rollout and decode + replay run on the same modelled GPU: they take turns, so no
    // apply's GPU interval [ready - apply time, ready] overlaps a rollout of the same worker.
    LoadedScenario loaded =
        Load(kTiny, {"llm_profile=Llama-3.2-1B", "workload.steps=5", "workload.lora.rank=16",
                     "workers[0].gpu=H100-SXM", "workers[1].count=2", "mode.max_staleness=1",
                     "network.worker_link.bandwidth=1Gbps", "network.worker_link.delay=20ms",
                     "arms[1].compressor=spar", "arms[1].budget=1.6%"});
    auto context = BuildArmContext(loaded.resolved, loaded.resolved.arms[1]);
    ASSERT_TRUE(context.ok());
    auto r = RunArm(loaded.resolved, 1, nullptr, {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->failure.ok()) << r->failure.ToString();
    ExpectEveryWorkerHasEveryVersion(*r, 3, 5);
    int waited = 0; // applies that had to wait for a rollout to finish
    for (const ApplyEvent& a : r->applies)
    {
        const models::GpuProfile gpu = models::FindGpu(r->worker_gpu.at(a.worker)).value();
        const double apply_s =
            models::DecodeReplaySeconds(gpu, (*context)->modelled_numel, "hilo").value();
        const double gpu_start = a.ready_s - apply_s;
        for (const RolloutEvent& e : r->rollouts)
        {
            if (e.worker != a.worker)
                continue;
            const bool overlap = gpu_start < e.done_s - 1e-9 && e.started_s < a.ready_s - 1e-9;
            EXPECT_FALSE(overlap) << "worker " << a.worker << " applied v" << a.version << " on ["
                                  << gpu_start << ", " << a.ready_s << "] during rollout round "
                                  << e.round << " [" << e.started_s << ", " << e.done_s << "]";
            waited += std::abs(gpu_start - e.done_s) < 1e-9 && a.received_s < e.done_s;
        }
    }
    EXPECT_GT(waited, 0); // the scenario does make updates arrive during rollouts
    // Staleness still pays: some rounds were sampled from a version older than round - 1.
    bool stale = false;
    for (const RolloutEvent& e : r->rollouts)
        stale |= e.behaviour_version + 1 < e.round;
    EXPECT_TRUE(stale);
}

TEST(EndToEnd, ModelledTokenCountsSetRolloutTimeAndTrajectoryBytes)
{
    // Same arm, same real learning; only the modelled tokens per sequence differ.
    const std::vector<std::string> base = {"llm_profile=Llama-3.2-1B", "workload.steps=2"};
    std::vector<std::string> modelled = base;
    modelled.push_back("workload.modelled_prompt_tokens=512");
    modelled.push_back("workload.modelled_gen_tokens=1024");
    LoadedScenario real = Load(kTiny, base);
    LoadedScenario big = Load(kTiny, modelled);
    EXPECT_EQ(big.resolved.workload.modelled_gen_tokens, 1024u);
    auto a = RunArm(real.resolved, 1, nullptr, {});
    auto b = RunArm(big.resolved, 1, nullptr, {});
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->rollouts.size(), b->rollouts.size());
    ASSERT_FALSE(a->rollouts.empty());
    for (size_t i = 0; i < a->rollouts.size(); ++i)
    {
        const RolloutEvent& x = a->rollouts[i];
        const RolloutEvent& y = b->rollouts[i];
        // 1,536 modelled tokens per sequence against 16 real ones.
        EXPECT_GT(y.done_s - y.started_s, 10 * (x.done_s - x.started_s)) << i;
        EXPECT_GT(y.wire_bytes, 10 * x.wire_bytes) << i;
        EXPECT_EQ(y.real_bytes, x.real_bytes) << i;
    }
    ASSERT_EQ(a->evals.size(), b->evals.size());
    EXPECT_EQ(a->evals.back().quality, b->evals.back().quality); // learning is unaffected
}

} // namespace
} // namespace hilosim
