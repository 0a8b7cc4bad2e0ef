// The scenario loader: every malformed file in tests/sim/data fails with a message naming the
// file, the line and the field; every scenario in scenarios/ loads; the resolved text is
// deterministic.
#include "sim/cli/catalog.h"
#include "sim/scenario/scenario-loader.h"
#include "sim/scenario/scenario-override.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

namespace hilosim
{
namespace
{

using test::DataPath;
using test::ReadFile;

struct BadCase
{
    const char* file;    // under tests/sim/data
    const char* marker;  // text on the line the error must name; null: no line
    int occurrence;      // which occurrence of marker (1-based)
    const char* field;   // the field path the error must name
    const char* message; // a substring of what is wrong / allowed
};

// Every bad-*.textproto file, what it provokes and where.
const BadCase kBadCases[] = {
    {"bad-unknown-field.textproto", "bandwith", 1, "network.worker_link.bandwith",
     "unknown field \"bandwith\" in hilosim.Link; allowed: bandwidth, delay, loss"},
    {"bad-bandwidth-unit.textproto", "100Mbit", 1, "network.worker_link.bandwidth",
     "data rate \"100Mbit\" has unknown unit \"Mbit\" (allowed units: bps, kbps"},
    {"bad-negative-bandwidth.textproto", "-5Mbps", 1, "network.worker_link.bandwidth",
     "data rate \"-5Mbps\" must be positive"},
    {"bad-negative-delay.textproto", "-3ms", 1, "network.worker_link.delay",
     "duration \"-3ms\" must not be negative"},
    {"bad-zero-workers.textproto", "count: 0", 1, "workers[0].count",
     "must be in [1, 4096], got 0"},
    {"bad-zero-steps.textproto", "steps: 0", 1, "workload.steps", "must be in [1, 1000000], got 0"},
    {"bad-v-freeze-sgd.textproto", "v_freeze_step: 5", 1, "optimizer.v_freeze_step",
     "needs kind \"adamw\""},
    {"bad-budget.textproto", "5 percent", 1, "arms[1].budget", "bad budget \"5 percent\""},
    {"bad-unknown-gpu.textproto", "H200-NVL", 1, "workers[0].gpu",
     "unknown GPU \"H200-NVL\"; allowed: H100-SXM"},
    {"bad-unknown-llm.textproto", "gpt-17", 1, "llm_profile",
     "unknown LLM profile \"gpt-17\"; allowed: "},
    {"bad-unknown-compressor.textproto", "zstd", 1, "arms[1].compressor",
     "unknown compressor \"zstd\"; allowed: dense"},
    {"bad-compressor-option.textproto", "dtpye", 1, "arms[0].options.dtpye",
     "unknown dense option 'dtpye'"},
    {"bad-compressor-option-value.textproto", "fp8", 1, "arms[0].options.dtype", "fp8"},
    {"bad-duplicate-arms.textproto", "name: \"full\"", 2, "arms[1].name",
     "duplicate arm name \"full\""},
    {"bad-loss.textproto", "loss: 1.5", 1, "network.worker_link.loss",
     "must be in [0, 1), got 1.5"},
    {"bad-mtu.textproto", "mtu: 100", 1, "network.worker_link.mtu", "must be in [576, 9000]"},
    {"bad-syntax.textproto", "steps 10", 1, "workload.steps", "Expected \":\""},
    {"bad-wrong-type.textproto", "\"ten\"", 1, "workload.steps", "Expected integer"},
    {"bad-topology.textproto", "mesh", 1, "network.topology",
     "unknown topology \"mesh\"; allowed: star, regions, relay"},
    {"bad-tcp.textproto", "reno", 1, "network.tcp",
     "TCP variant \"reno\" is not a TCP congestion control of this ns-3 build (allowed: newreno"},
    {"bad-queue.textproto", "sfq", 1, "network.worker_link.queue",
     "unknown queue discipline \"sfq\"; allowed: fifo, red"},
    {"bad-strategy.textproto", "gossip", 1, "arms[1].strategy",
     "unknown strategy \"gossip\"; allowed: full, hilo, delta"},
    {"bad-no-arms.textproto", nullptr, 0, "arms", "no arms"},
    {"bad-full-budget.textproto", "2%", 1, "arms[0].budget", "budget must be empty"},
    {"bad-modelled-tokens-no-llm.textproto", "modelled_gen_tokens", 1,
     "workload.modelled_gen_tokens", "needs llm_profile"},
    {"bad-modelled-prompt-only.textproto", "workload {", 1, "workload.modelled_gen_tokens",
     "must be set (> 0) when modelled_prompt_tokens is"},
    {"bad-grpo-task.textproto", "sorting", 1, "workload.grpo.task",
     "unknown GRPO task \"sorting\"; allowed: residue_stride, residue_chain"},
    {"bad-grpo-under-distill.textproto", "grpo {", 1, "workload.grpo",
     "only workload kind \"grpo\" has a GRPO task"},
    {"bad-dotdot-name.textproto", "name: \"..\"", 1, "name",
     "bad name \"..\" (\".\" and \"..\" are folder names, not names)"},
    {"bad-network-model.textproto", "fluid", 1, "network.model",
     "unknown network model \"fluid\"; allowed: packet, flow"},
    {"bad-tcp-buffer-unit.textproto", "6XB", 1, "network.tcp_buffer",
     "allowed: \"auto\" or a size such as \"6MiB\""},
    {"bad-tcp-buffer-range.textproto", "1GiB", 1, "network.tcp_buffer",
     "must be \"auto\" or a size in [16KiB, 256MiB], got \"1GiB\""},
    {"bad-node-parallel.textproto", "\"pp\"", 1, "workers[0].parallel",
     "unknown parallel mode \"pp\"; allowed: tp, dp"},
    {"bad-node-gpus.textproto", "gpus: 0", 1, "learner.gpus", "must be in [1, 64], got 0"},
    {"bad-micro-batch.textproto", "micro_batch_sequences", 1, "learner.micro_batch_sequences",
     "must be a multiple of workload.group_size (4): a gradient pass holds whole groups, got 6"},
    {"bad-node-memory.textproto", "workers {", 1, "workers[0].gpus",
     "Qwen2.5-72B does not fit a node of 1 x A10G for rollouts: each A10G needs"},
    {"bad-lora-experts-dense.textproto", "llm_lora_experts", 1, "llm_lora_experts",
     "needs an llm_profile with experts"},
};

// 1-based line of the `occurrence`-th line holding `marker` outside comments; 0 when none.
int
LineOf(const std::string& text, const char* marker, int occurrence)
{
    if (marker == nullptr)
        return 0;
    std::istringstream in(text);
    std::string line;
    int n = 0;
    while (std::getline(in, line))
    {
        ++n;
        if (line.rfind("#", 0) != 0 && line.find(marker) != std::string::npos && --occurrence == 0)
            return n;
    }
    return 0;
}

TEST(ScenarioLoader, MinimalScenarioLoads)
{
    auto loaded = LoadScenarioFile(DataPath("ok-minimal.textproto"), {}, CurrentCatalog());
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const ResolvedScenario& r = loaded->resolved;
    EXPECT_EQ(r.name, "bad-example");
    EXPECT_EQ(r.workload.steps, 10u);
    EXPECT_EQ(r.workload.model.d_model, 64u); // a default
    ASSERT_EQ(r.workers.size(), 2u);
    EXPECT_EQ(r.workers[1].index, 1u);
    EXPECT_EQ(r.workers[1].gpu, "A10G");
    EXPECT_EQ(r.workers[0].link.rate.GetBitRate(), 100000000u);
    EXPECT_EQ(r.workers[0].link.delay.GetNanoSeconds(), 40000000);
    EXPECT_EQ(r.workers[0].link.mtu, 1500u);
    EXPECT_EQ(r.workers[0].link.queue_disc, "fifo");
    EXPECT_EQ(r.network.tcp_type.GetName(), "ns3::TcpCubic");
    EXPECT_FALSE(r.network.learner_uplink.has_value());
    ASSERT_EQ(r.arms.size(), 2u);
    EXPECT_EQ(r.arms[0].sync.kind, hilo::SyncKind::kFull);
    EXPECT_EQ(r.arms[0].sync.compressor_options.at("dtype"), "bf16");
    EXPECT_FALSE(r.arms[0].sync.error_feedback.enabled);
    EXPECT_EQ(r.arms[1].sync.kind, hilo::SyncKind::kHilo);
    EXPECT_TRUE(r.arms[1].sync.error_feedback.enabled);
    EXPECT_TRUE(r.arms[1].sync.budget.unlimited());
    EXPECT_EQ(r.arms[1].training_rank, r.workload.lora_rank);
    EXPECT_EQ(r.optimizer.kind, hilo::OptimizerKind::kAdamW);
    EXPECT_EQ(r.optimizer.lr.total_steps, 10);
}

TEST(ScenarioLoader, EveryBadFileNamesFileLineAndField)
{
    for (const BadCase& c : kBadCases)
    {
        SCOPED_TRACE(c.file);
        const std::string path = DataPath(c.file);
        const std::string text = ReadFile(path);
        ASSERT_FALSE(text.empty());
        const int line = LineOf(text, c.marker, c.occurrence);
        if (c.marker != nullptr)
        {
            ASSERT_GT(line, 0) << "marker not found: " << c.marker;
        }
        std::vector<Diagnostic> diagnostics;
        auto loaded = LoadScenarioFile(path, {}, CurrentCatalog(), &diagnostics);
        ASSERT_FALSE(loaded.ok());
        EXPECT_EQ(loaded.status().code(), hilo::StatusCode::kInvalidArgument);
        const std::string& message = loaded.status().message();
        const std::string where = path + (line > 0 ? ":" + std::to_string(line) + ":" : ": ");
        EXPECT_NE(message.find(where), std::string::npos) << message;
        EXPECT_NE(message.find(c.field), std::string::npos) << message;
        EXPECT_NE(message.find(c.message), std::string::npos) << message;
        bool found = false;
        for (const Diagnostic& d : diagnostics)
        {
            found |= d.line == line && d.field == c.field &&
                     d.message.find(c.message) != std::string::npos;
        }
        EXPECT_TRUE(found) << message;
    }
}

TEST(ScenarioLoader, EveryBadFileIsCovered)
{
    // A new bad-*.textproto must get its expectation in kBadCases.
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(DataPath("")))
    {
        const std::string name = e.path().filename().string();
        if (name.rfind("bad-", 0) != 0)
            continue;
        ++files;
        bool listed = false;
        for (const BadCase& c : kBadCases)
            listed |= name == c.file;
        EXPECT_TRUE(listed) << name;
    }
    EXPECT_EQ(files, static_cast<int>(std::size(kBadCases)));
}

TEST(ScenarioLoader, ReportsEveryProblemNotJustTheFirst)
{
    const std::string text =
        ReadFile(DataPath("ok-minimal.textproto")) + "mode { max_staleness: -1 }\n";
    std::vector<Diagnostic> diagnostics;
    auto loaded =
        LoadScenarioText(text, "multi.textproto", {"workload.steps=0", "arms[1].budget=5x"},
                         CurrentCatalog(), &diagnostics);
    ASSERT_FALSE(loaded.ok());
    ASSERT_EQ(diagnostics.size(), 3u) << loaded.status().message();
    EXPECT_EQ(diagnostics[0].field, "workload.steps");
    EXPECT_EQ(diagnostics[0].origin, "--set workload.steps=0");
    EXPECT_EQ(diagnostics[1].field, "mode.max_staleness");
    EXPECT_GT(diagnostics[1].line, 0);
    EXPECT_EQ(diagnostics[2].field, "arms[1].budget");
    EXPECT_NE(loaded.status().message().find(
                  "multi.textproto: --set arms[1].budget=5x: arms[1].budget: bad budget"),
              std::string::npos)
        << loaded.status().message();
}

TEST(ScenarioLoader, DotNamesAreRejected)
{
    // "." and ".." are folder names: as a scenario name the default output folder
    // results/runs/.. would be results/ itself; arm names name pcap folders.
    for (const std::string name : {".", ".."})
    {
        for (const std::string path : {"name", "arms[0].name"})
        {
            auto loaded = LoadScenarioFile(DataPath("ok-minimal.textproto"), {path + "=" + name},
                                           CurrentCatalog());
            ASSERT_FALSE(loaded.ok()) << path << "=" << name << " was accepted";
            EXPECT_NE(loaded.status().message().find(path + ": bad name \"" + name + "\""),
                      std::string::npos)
                << loaded.status().message();
        }
    }
    // Dots inside a name stay allowed.
    EXPECT_TRUE(LoadScenarioFile(DataPath("ok-minimal.textproto"),
                                 {"name=run.1", "arms[0].name=..full"}, CurrentCatalog())
                    .ok());
}

TEST(ScenarioLoader, GrpoTaskIsSelectableAndItsDefaultsAreShown)
{
    // A GRPO workload gets the prompt-stride task unless it names another; resolved.textproto
    // shows every value used.
    auto grpo = LoadScenarioFile(DataPath("ok-minimal.textproto"), {"workload.kind=grpo"},
                                 CurrentCatalog());
    ASSERT_TRUE(grpo.ok()) << grpo.status().message();
    EXPECT_TRUE(grpo->resolved.workload.grpo_prompt_stride);
    EXPECT_EQ(grpo->resolved.workload.grpo_modulus, 4u);
    EXPECT_EQ(grpo->resolved.workload.grpo_entropy_coef, 0.0);
    EXPECT_NE(grpo->resolved_text.find("grpo {\n    task: \"residue_stride\"\n    modulus: 4\n"
                                       "    entropy_coef: 0\n  }"),
              std::string::npos)
        << grpo->resolved_text;
    auto chain = LoadScenarioFile(DataPath("ok-minimal.textproto"),
                                  {"workload.kind=grpo", "workload.grpo.task=residue_chain",
                                   "workload.grpo.modulus=5", "workload.grpo.entropy_coef=0.01"},
                                  CurrentCatalog());
    ASSERT_TRUE(chain.ok()) << chain.status().message();
    EXPECT_FALSE(chain->resolved.workload.grpo_prompt_stride);
    EXPECT_EQ(chain->resolved.workload.grpo_modulus, 5u);
    EXPECT_EQ(chain->resolved.workload.grpo_entropy_coef, 0.01);
    // A distillation scenario says nothing about GRPO.
    auto distill = LoadScenarioFile(DataPath("ok-minimal.textproto"), {}, CurrentCatalog());
    ASSERT_TRUE(distill.ok());
    EXPECT_EQ(distill->resolved_text.find("grpo"), std::string::npos);
    // Out of range: the modulus is a residue of a token, so at most the vocabulary.
    for (const auto& [assignment, message] : std::vector<std::pair<std::string, std::string>>{
             {"workload.grpo.modulus=1", "workload.grpo.modulus: must be in [2, 64], got 1"},
             {"workload.grpo.modulus=65", "workload.grpo.modulus: must be in [2, 64], got 65"},
             {"workload.grpo.entropy_coef=-0.1",
              "workload.grpo.entropy_coef: must be in [0, 10], got -0.1"}})
    {
        auto bad = LoadScenarioFile(DataPath("ok-minimal.textproto"),
                                    {"workload.kind=grpo", assignment}, CurrentCatalog());
        ASSERT_FALSE(bad.ok()) << assignment;
        EXPECT_NE(bad.status().message().find(message), std::string::npos)
            << bad.status().message();
    }
}

TEST(ScenarioLoader, RelayForwardingBelongsToTheRelayTopology)
{
    const std::vector<std::string> relay = {"network.topology=relay", "network.regions[0].name=eu",
                                            "network.regions[0].wan.bandwidth=100Mbps",
                                            "workers[0].region=eu"};
    auto streaming = LoadScenarioFile(DataPath("ok-minimal.textproto"), relay, CurrentCatalog());
    ASSERT_TRUE(streaming.ok()) << streaming.status().message();
    EXPECT_FALSE(streaming->resolved.network.relay_store_and_forward);
    EXPECT_NE(streaming->resolved_text.find("relay_forwarding: \"stream\""), std::string::npos)
        << streaming->resolved_text;
    std::vector<std::string> saf = relay;
    saf.push_back("network.relay_forwarding=store_and_forward");
    auto stored = LoadScenarioFile(DataPath("ok-minimal.textproto"), saf, CurrentCatalog());
    ASSERT_TRUE(stored.ok()) << stored.status().message();
    EXPECT_TRUE(stored->resolved.network.relay_store_and_forward);

    std::vector<std::string> typo = relay;
    typo.push_back("network.relay_forwarding=cut_through");
    auto bad = LoadScenarioFile(DataPath("ok-minimal.textproto"), typo, CurrentCatalog());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("network.relay_forwarding: unknown forwarding "
                                          "\"cut_through\"; allowed: stream, store_and_forward"),
              std::string::npos)
        << bad.status().message();
    auto star = LoadScenarioFile(DataPath("ok-minimal.textproto"),
                                 {"network.relay_forwarding=stream"}, CurrentCatalog());
    ASSERT_FALSE(star.ok());
    EXPECT_NE(star.status().message().find("only topology \"relay\" has relays"), std::string::npos)
        << star.status().message();
    // A star says nothing about relays.
    auto plain = LoadScenarioFile(DataPath("ok-minimal.textproto"), {}, CurrentCatalog());
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(plain->resolved_text.find("relay_forwarding"), std::string::npos);
}

TEST(ScenarioLoader, MissingFileIsBadInput)
{
    auto loaded = LoadScenarioFile(DataPath("no-such-file.textproto"), {}, CurrentCatalog());
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(loaded.status().message().find("no-such-file.textproto: cannot read"),
              std::string::npos);
}

TEST(ScenarioLoader, CatalogIsPassedIn)
{
    ScenarioCatalog catalog;
    catalog.gpus = {"H100-SXM"}; // A10G unknown here
    auto loaded = LoadScenarioFile(DataPath("ok-minimal.textproto"), {}, catalog);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.status().message().find("unknown GPU \"A10G\"; allowed: H100-SXM"),
              std::string::npos);
}

TEST(ScenarioLoader, RegionsTopology)
{
    const std::string text = R"(
name: "regions"
workload { kind: "grpo" steps: 3 }
learner { gpu: "H100-SXM" }
workers { count: 2 gpu: "A10G" region: "eu" }
workers { count: 1 gpu: "T4" region: "us" link { bandwidth: "20Mbps" } }
network {
  topology: "regions"
  worker_link { bandwidth: "1Gbps" delay: "1ms" }
  regions { name: "eu" wan { bandwidth: "200Mbps" delay: "30ms" } }
  regions { name: "us" wan { bandwidth: "100Mbps" delay: "60ms" } lan { delay: "2ms" } }
}
arms { name: "a" strategy: "hilo" }
)";
    auto loaded = LoadScenarioText(text, "regions.textproto", {}, CurrentCatalog());
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const ResolvedScenario& r = loaded->resolved;
    EXPECT_EQ(r.network.topology, TopologyKind::kRegions);
    ASSERT_EQ(r.network.regions.size(), 2u);
    EXPECT_EQ(r.network.regions[1].lan.delay.GetNanoSeconds(), 2000000);
    EXPECT_EQ(r.network.regions[1].lan.rate.GetBitRate(), 1000000000u);
    ASSERT_EQ(r.workers.size(), 3u);
    EXPECT_EQ(r.workers[0].region_index, 0);
    EXPECT_EQ(r.workers[2].region_index, 1);
    EXPECT_EQ(r.workers[2].link.rate.GetBitRate(), 20000000u);    // group override
    EXPECT_EQ(r.workers[2].link.delay.GetNanoSeconds(), 2000000); // from the region's lan
    EXPECT_EQ(r.workload.group_size, 4u);                         // grpo default

    auto bad =
        LoadScenarioText(text, "regions.textproto", {"workers[1].region=asia"}, CurrentCatalog());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("unknown region \"asia\"; allowed: eu, us"),
              std::string::npos)
        << bad.status().message();
}

TEST(ScenarioLoader, ResolvedTextIsDeterministicAndRoundTrips)
{
    const std::string path = DataPath("ok-minimal.textproto");
    const std::vector<std::string> overrides = {"arms[1].options.dtype=fp32",
                                                "arms[1].options[dtype]=bf16", "workload.steps=7"};
    auto a = LoadScenarioFile(path, overrides, CurrentCatalog());
    auto b = LoadScenarioFile(path, overrides, CurrentCatalog());
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a->resolved_text, b->resolved_text);
    EXPECT_NE(a->resolved_text.find("steps: 7"), std::string::npos);
    EXPECT_NE(a->resolved_text.find("d_model: 64"), std::string::npos); // defaults are explicit
    // The resolved text is itself a valid scenario that resolves to the same text.
    auto again = LoadScenarioText(a->resolved_text, "resolved.textproto", {}, CurrentCatalog());
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(again->resolved_text, a->resolved_text);

    // Map entries print sorted by key, whatever order they were written in.
    Scenario x;
    Scenario y;
    ASSERT_TRUE(ApplyOverride(&x, "arms[0].options.b=1").ok());
    ASSERT_TRUE(ApplyOverride(&x, "arms[0].options.a=2").ok());
    ASSERT_TRUE(ApplyOverride(&y, "arms[0].options.a=2").ok());
    ASSERT_TRUE(ApplyOverride(&y, "arms[0].options.b=1").ok());
    EXPECT_EQ(PrintScenario(x), PrintScenario(y));
    EXPECT_LT(PrintScenario(x).find("\"a\""), PrintScenario(x).find("\"b\""));
}

TEST(ScenarioLoader, EveryShippedScenarioLoads)
{
    int n = 0;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(std::string(HILO_SOURCE_DIR) + "/scenarios"))
    {
        if (e.path().extension() != ".textproto")
            continue;
        ++n;
        SCOPED_TRACE(e.path().string());
        auto loaded = LoadScenarioFile(e.path().string(), {}, CurrentCatalog());
        EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    }
    EXPECT_GE(n, 1);
}

} // namespace
} // namespace hilosim
