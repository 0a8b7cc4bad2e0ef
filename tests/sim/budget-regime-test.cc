// What a budget buys on the modelled adapter and on the tiny learner
// (hilo/compress/budget-regime.h), and budget_transfer "directions", which hands the learner the
// modelled directions per matrix.
#include "hilo/compress/budget-regime.h"
#include "sim/cli/catalog.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/run/arm-check.h"
#include "sim/run/arm-context-builder.h"
#include "sim/run/arm-summary.h"
#include "sim/scenario/scenario-loader.h"

#include "hilo/core/lora-layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hilosim
{
namespace
{

// A learner standing for Qwen2.5-7B at the same LoRA rank (the modelled adapter trains at the
// arm's rank). Its directions per matrix, about f r d / (r + d), fall behind the modelled ones when
// the rank is large against the learner's width: kNarrow (rank 64 on width 16) buys a third.
const char* kModelled = R"(
name: "regime"
seed: 5
llm_profile: "Qwen2.5-7B"
workload {
  kind: "distill"
  steps: 2
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  gen_tokens: 8
  eval_prompts: 8
}
optimizer { kind: "adamw" lr: 0.01 }
learner { gpu: "H100-SXM" }
workers { count: 1 gpu: "H100-SXM" }
network { topology: "star" worker_link { bandwidth: "10Gbps" delay: "1ms" } }
arms { name: "spar" strategy: "hilo" compressor: "spar" budget: "1.6%" }
arms { name: "topk" strategy: "hilo" compressor: "topk" budget: "1.6%" }
arms { name: "full" strategy: "full" compressor: "dense" options { key: "dtype" value: "bf16" } }
)";

const std::vector<std::string> kNarrow = {"workload.model.d_model=16", "workload.lora.rank=64"};

LoadedScenario
Load(std::vector<std::string> overrides)
{
    overrides.insert(overrides.begin(), kNarrow.begin(), kNarrow.end());
    auto loaded = LoadScenarioText(kModelled, "regime.textproto", overrides, CurrentCatalog());
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return std::move(loaded).value();
}

hilo::BudgetPurchase
Purchase(const LoadedScenario& loaded, size_t arm)
{
    auto context = BuildArmContext(loaded.resolved, loaded.resolved.arms[arm]);
    EXPECT_TRUE(context.ok()) << context.status().ToString();
    return ArmBudgetPurchase(loaded.resolved, loaded.resolved.arms[arm], **context);
}

TEST(BudgetRegime, OnePointSixPercentBuysTheSevenBAboutOneDirectionPerMatrix)
{
    // 392 factor matrices with long sides 3584 / 512 / 18944 at rank 64: f r d / (r + d) per
    // matrix, about 1.0 at 1.6% (bf16 vectors and an f32 sigma per direction).
    auto layout = hilo::LoraLayout(28, hilo::AllLinearTargets(hilo::Qwen25_7bShape()), 64);
    ASSERT_TRUE(layout.ok());
    ASSERT_EQ(layout->size(), 392u);
    const int64_t budget = static_cast<int64_t>(0.016 * layout->adapter_bytes());
    const double d = hilo::BudgetBuys(budget, *layout, "spar", {});
    EXPECT_GT(d, 0.9);
    EXPECT_LT(d, 1.1);
    // bf16 -> fp32 halves it; sparq's 4-bit codes buy about four times the bf16 count.
    EXPECT_NEAR(hilo::BudgetBuys(budget, *layout, "spar", {{"dtype", "fp32"}}), d / 2, 0.02 * d);
    EXPECT_GT(hilo::BudgetBuys(budget, *layout, "sparq", {}), 3.5 * d);
    // An entry-based compressor buys the fraction of the entries.
    EXPECT_NEAR(hilo::BudgetBuys(budget, *layout, "topk", {}), 0.016, 1e-6);
    EXPECT_EQ(hilo::BudgetBuys(budget, *layout, "dense", {}), 0.0);
}

TEST(BudgetRegime, FractionRuleStarvesTheTinyLearnerAndWarns)
{
    LoadedScenario loaded = Load({});
    const hilo::BudgetPurchase spar = Purchase(loaded, 0);
    EXPECT_EQ(spar.unit, hilo::BudgetUnit::kDirections);
    // About 0.31 directions per matrix on the learner against about 1.0 on the modelled adapter.
    EXPECT_GT(spar.modelled / spar.learner, 2.5) << spar.modelled << " vs " << spar.learner;
    EXPECT_NEAR(spar.modelled, 1.0, 0.1);
    std::vector<std::string> warnings;
    ASSERT_TRUE(CheckScenarioArms(loaded, &warnings).ok());
    ASSERT_EQ(warnings.size(), 1u); // spar only: topk buys the same entry fraction on both
    EXPECT_NE(warnings[0].find("arm 'spar'"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("directions per factor matrix"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("budget_transfer"), std::string::npos) << warnings[0];
    const hilo::BudgetPurchase topk = Purchase(loaded, 1);
    EXPECT_EQ(topk.unit, hilo::BudgetUnit::kEntries);
    EXPECT_NEAR(topk.learner, topk.modelled, 0.01 * topk.modelled); // floors of a small budget
    EXPECT_EQ(Purchase(loaded, 2).unit, hilo::BudgetUnit::kNone);
}

TEST(BudgetRegime, DirectionsRuleGivesTheLearnerTheModelledDirectionsWithinTenPercent)
{
    LoadedScenario loaded = Load({"budget_transfer=directions"});
    for (size_t arm : {0u, 1u})
    {
        const hilo::BudgetPurchase p = Purchase(loaded, arm);
        SCOPED_TRACE(loaded.resolved.arms[arm].name);
        EXPECT_NEAR(p.learner, p.modelled, 0.1 * p.modelled);
    }
    std::vector<std::string> warnings;
    ASSERT_TRUE(CheckScenarioArms(loaded, &warnings).ok());
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    // Also with a size budget: the size is the modelled payload.
    LoadedScenario sized = Load({"budget_transfer=directions", "arms[0].budget=2MB"});
    const hilo::BudgetPurchase p = Purchase(sized, 0);
    EXPECT_NEAR(p.learner, p.modelled, 0.1 * p.modelled);
}

TEST(BudgetRegime, DirectionsRuleStillPutsTheModelledBudgetOnTheWire)
{
    for (const char* rule : {"fraction", "directions"})
    {
        SCOPED_TRACE(rule);
        LoadedScenario loaded = Load({std::string("budget_transfer=") + rule});
        auto context = BuildArmContext(loaded.resolved, loaded.resolved.arms[0]);
        ASSERT_TRUE(context.ok());
        const double modelled_budget = static_cast<double>((*context)->modelled_budget_bytes);
        auto result = RunArm(loaded.resolved, 0, nullptr, {});
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        ASSERT_TRUE(result->failure.ok()) << result->failure.ToString();
        const ArmSummary s = Summarize(*result);
        // The payload fills most of its budget; the frame's header rides on top, scaled.
        EXPECT_GT(s.wire_bytes_per_update_mean, 0.5 * modelled_budget);
        EXPECT_LT(s.wire_bytes_per_update_mean, 1.1 * modelled_budget);
        EXPECT_EQ(result->hash_mismatches, 0u);
    }
}

TEST(BudgetRegime, BadTransferIsAnErrorNamingTheField)
{
    std::vector<Diagnostic> diagnostics;
    auto bad = LoadScenarioText(kModelled, "regime.textproto", {"budget_transfer=rank"},
                                CurrentCatalog(), &diagnostics);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("budget_transfer"), std::string::npos)
        << bad.status().message();
    EXPECT_NE(bad.status().message().find("directions"), std::string::npos)
        << bad.status().message();
    auto unprofiled = LoadScenarioText(kModelled, "regime.textproto",
                                       {"budget_transfer=directions", "llm_profile="},
                                       CurrentCatalog(), &diagnostics);
    ASSERT_FALSE(unprofiled.ok());
    EXPECT_NE(unprofiled.status().message().find("needs llm_profile"), std::string::npos)
        << unprofiled.status().message();
}

} // namespace
} // namespace hilosim
