// The two network models on whole (tiny) scenarios: they agree on update latency within the
// validation tolerances on a small star with a shared uplink, learn exactly the same thing (the
// network changes timing only), and both report windows below the bandwidth-delay product.
#include "sim/cli/catalog.h"
#include "sim/cli/hilo-sim-cli.h"
#include "sim/cli/run-command.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/run/arm-summary.h"
#include "sim/scenario/scenario-loader.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace hilosim
{
namespace
{

// Four workers behind 100 Mbps / 20 ms links and a shared 200 Mbps uplink; full updates of
// 11 MB (Llama-3.2-1B at rank 8), so the uplink is the broadcast's bottleneck.
const char* kStar = R"(
name: "small-star"
seed: 3
workload {
  kind: "distill"
  steps: 3
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 8 }
  prompts_per_worker: 2
  gen_tokens: 8
  teacher { delta_rank: 2 }
  eval_prompts: 8
  eval_every: 1
}
optimizer { kind: "adamw" lr: 0.01 }
llm_profile: "Llama-3.2-1B"
learner { gpu: "H100-SXM" }
workers { count: 4 gpu: "A10G" }
network {
  topology: "star"
  worker_link { bandwidth: "100Mbps" delay: "20ms" mtu: 9000 }
  learner_uplink { bandwidth: "200Mbps" delay: "1ms" mtu: 9000 }
}
arms { name: "full" strategy: "full" compressor: "dense" options { key: "dtype" value: "bf16" } }
arms { name: "hilo-spar" strategy: "hilo" compressor: "spar" budget: "10%" }
)";

LoadedScenario
Load(const std::vector<std::string>& overrides)
{
    auto loaded = LoadScenarioText(kStar, "small-star.textproto", overrides, CurrentCatalog());
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return std::move(loaded).value();
}

ArmResult
RunOne(const LoadedScenario& loaded, size_t arm)
{
    auto r = RunArm(loaded.resolved, arm, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->failure.ok()) << r->failure.ToString();
    return std::move(r).value();
}

TEST(FlowVsPacket, SmallStarAgreesOnLatencyAndLearnsTheSame)
{
    for (size_t arm = 0; arm < 2; ++arm)
    {
        const ArmResult packet = RunOne(Load({"network.model=packet"}), arm);
        const ArmResult flow = RunOne(Load({"network.model=flow"}), arm);
        SCOPED_TRACE(packet.name);
        EXPECT_EQ(packet.network_model, "packet");
        EXPECT_EQ(flow.network_model, "flow");
        const ArmSummary p = Summarize(packet);
        const ArmSummary f = Summarize(flow);
        EXPECT_NEAR(f.latency_p50_s / p.latency_p50_s, 1.0, 0.05)
            << "p50 packet " << p.latency_p50_s << " flow " << f.latency_p50_s;
        EXPECT_NEAR(f.latency_p99_s / p.latency_p99_s, 1.0, 0.10)
            << "p99 packet " << p.latency_p99_s << " flow " << f.latency_p99_s;
        // Synchronous on-policy: the same versions meet the same prompts, so the learning is
        // bit for bit the same and every replica matches the learner in both models.
        ASSERT_EQ(packet.publishes.size(), flow.publishes.size());
        for (size_t v = 0; v < packet.publishes.size(); ++v)
        {
            EXPECT_EQ(packet.publishes[v].loss, flow.publishes[v].loss) << "version " << v + 1;
            EXPECT_EQ(packet.publishes[v].wire_bytes, flow.publishes[v].wire_bytes);
        }
        ASSERT_EQ(packet.evals.size(), flow.evals.size());
        for (size_t e = 0; e < packet.evals.size(); ++e)
            EXPECT_EQ(packet.evals[e].quality, flow.evals[e].quality);
        EXPECT_EQ(packet.hash_mismatches, 0u);
        EXPECT_EQ(flow.hash_mismatches, 0u);
        EXPECT_EQ(flow.applies.size(), packet.applies.size());
    }
}

TEST(FlowVsPacket, FlowModelIsDeterministic)
{
    const ArmResult a = RunOne(Load({"network.model=flow"}), 0);
    const ArmResult b = RunOne(Load({"network.model=flow"}), 0);
    ASSERT_EQ(a.applies.size(), b.applies.size());
    for (size_t i = 0; i < a.applies.size(); ++i)
    {
        EXPECT_EQ(a.applies[i].worker, b.applies[i].worker);
        EXPECT_EQ(a.applies[i].received_s, b.applies[i].received_s) << "apply " << i;
        EXPECT_EQ(a.applies[i].ready_s, b.applies[i].ready_s);
    }
    EXPECT_EQ(a.sim_time_s, b.sim_time_s);
}

TEST(FlowVsPacket, WindowBelowTheBdpIsReportedInBothModels)
{
    // 100 Mbps / 20 ms: a BDP of 500 kB per worker path; a 16 KiB window caps each connection
    // near 16 KiB / 42 ms = 3 Mbit/s.
    for (const char* model : {"packet", "flow"})
    {
        SCOPED_TRACE(model);
        const std::string m = std::string("network.model=") + model;
        const ArmResult tight = RunOne(Load({m, "network.tcp_buffer=16KiB"}), 1);
        EXPECT_EQ(tight.connections, 4u);
        EXPECT_EQ(tight.window_limited_connections, 4u);
        EXPECT_NE(tight.window_limited_example.find("window"), std::string::npos);
        const ArmResult wide = RunOne(Load({m}), 1);
        EXPECT_EQ(wide.window_limited_connections, 0u);
        EXPECT_GT(Summarize(tight).latency_p50_s, 2 * Summarize(wide).latency_p50_s)
            << "the window is what limits the transfer";
    }
}

TEST(FlowVsPacket, RunWarnsAndSummaryJsonSaysWindowLimited)
{
    const std::string dir =
        (std::filesystem::temp_directory_path() / "hilo-flow-window-limited").string();
    std::filesystem::remove_all(dir);
    const std::string scenario = dir + ".textproto";
    {
        std::ofstream f(scenario);
        f << kStar;
    }
    std::vector<const char*> args = {
        "hilo-sim", "run",       scenario.c_str(), "--set", "network.tcp_buffer=16KiB",
        "--out",    dir.c_str(), "--quiet"};
    std::ostringstream out, err, cerr;
    // The run's warnings go to the process's stderr.
    std::streambuf* saved = std::cerr.rdbuf(cerr.rdbuf());
    const int code = RunHiloSim(static_cast<int>(args.size()), args.data(), out, err);
    std::cerr.rdbuf(saved);
    ASSERT_EQ(code, kExitOk) << err.str();
    EXPECT_NE(cerr.str().find("warning: arm 'full': 4 of 4 connections have a TCP window below"),
              std::string::npos)
        << cerr.str();
    EXPECT_NE(cerr.str().find("so at most 3.41 Mbit/s"), std::string::npos) << cerr.str();
    const std::string summary = test::ReadFile(dir + "/summary.json");
    EXPECT_NE(summary.find("\"window_limited\": true"), std::string::npos) << summary;
    EXPECT_NE(summary.find("\"window_limited_connections\": 4"), std::string::npos);
    std::filesystem::remove_all(dir);
    std::filesystem::remove(scenario);
}

} // namespace
} // namespace hilosim
