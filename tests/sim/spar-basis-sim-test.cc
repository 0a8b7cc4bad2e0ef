// spar's basis=replicated end to end in the simulator: learner and workers run real training and
// real ns-3 transfers, every worker decodes against its own replicated state and ends at the
// learner's hash; a strategy that keeps no moments is refused with the option named.
#include "sim/cli/catalog.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/run/arm-context-builder.h"
#include "sim/scenario/scenario-loader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hilosim
{
namespace
{

const char* kScenario = R"(
name: "basis"
seed: 7
workload {
  kind: "distill"
  steps: 6
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 8 }
  prompts_per_worker: 2
  gen_tokens: 8
  eval_prompts: 8
}
optimizer { kind: "adamw" lr: 0.01 }
learner { gpu: "H100-SXM" }
workers { count: 2 gpu: "H100-SXM" }
network { topology: "star" worker_link { bandwidth: "100Mbps" delay: "5ms" } }
arms { name: "basis" strategy: "hilo" compressor: "spar" budget: "5%"
       options { key: "basis" value: "replicated" } }
arms { name: "fresh" strategy: "hilo" compressor: "spar" budget: "5%" }
)";

TEST(SparBasisSim, WorkersDecodeAgainstTheirOwnStateAndEndAtTheLearnersHash)
{
    auto loaded = LoadScenarioText(kScenario, "basis.textproto", {}, CurrentCatalog());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    std::vector<uint64_t> hashes;
    for (size_t arm = 0; arm < 2; ++arm)
    {
        auto result = RunArm(loaded->resolved, arm, nullptr, {});
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        ASSERT_TRUE(result->failure.ok()) << result->failure.ToString();
        EXPECT_EQ(result->hash_mismatches, 0u) << arm;
        EXPECT_EQ(result->workers_at_final_hash, 2u) << arm;
        ASSERT_EQ(result->worker_end.size(), 2u);
        EXPECT_EQ(result->worker_end[0].state_hash, result->worker_end[1].state_hash);
        hashes.push_back(result->worker_end[0].state_hash);
    }
    // The basis changed what was shipped, so the two arms end apart.
    EXPECT_NE(hashes[0], hashes[1]);
}

TEST(SparBasisSim, AStrategyWithoutMomentsIsRefusedNamingTheOption)
{
    auto loaded = LoadScenarioText(kScenario, "basis.textproto", {"arms[0].strategy=delta"},
                                   CurrentCatalog());
    hilo::Status status = loaded.ok() ? hilo::Status::Ok() : loaded.status();
    if (loaded.ok())
    {
        auto context = BuildArmContext(loaded->resolved, loaded->resolved.arms[0]);
        status = context.ok() ? hilo::Status::Ok() : context.status();
    }
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find("basis=replicated"), std::string::npos) << status.message();
}

} // namespace
} // namespace hilosim
