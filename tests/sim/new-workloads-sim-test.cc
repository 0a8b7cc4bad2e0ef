// The workloads nobody planted run through hilo-sim exactly as in lockstep: a tiny randomwalks
// GRPO scenario and a finetuned-teacher distillation scenario, each with a hilo + Spar arm, give
// the same quality at every evaluated version in the simulator as a lockstep loop over the same
// ArmContext (sync-curves' protocol), and every worker holds the learner's state at every version.
#include "sim/cli/catalog.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/run/arm-context-builder.h"
#include "sim/scenario/scenario-loader.h"

#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"

#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

const char* kWalks = R"(
name: "walks"
seed: 5
workload {
  kind: "grpo"
  steps: 4
  model { vocab: 24 d_model: 32 layers: 1 heads: 2 context: 16 }
  lora { rank: 4 }
  prompts_per_worker: 4
  group_size: 4
  grpo { task: "randomwalks" entropy_coef: 0.01 }
  eval_prompts: 64
  eval_every: 2
}
optimizer { kind: "adamw" lr: 0.02 }
learner { gpu: "H100-SXM" }
workers { count: 2 gpu: "A10G" }
network { topology: "star" worker_link { bandwidth: "50Mbps" delay: "10ms" } }
arms { name: "hilo-spar" strategy: "hilo" compressor: "spar" budget: "5%" }
)";

const char* kText = R"(
name: "text"
seed: 6
workload {
  kind: "distill"
  steps: 3
  teacher { kind: "finetuned" }
  lora { rank: 4 }
  prompts_per_worker: 2
  gen_tokens: 8
  eval_prompts: 8
  eval_every: 1
}
optimizer { kind: "adamw" lr: 0.005 }
learner { gpu: "H100-SXM" }
workers { count: 2 gpu: "A10G" }
network { topology: "star" worker_link { bandwidth: "50Mbps" delay: "10ms" } }
arms { name: "hilo-spar" strategy: "hilo" compressor: "spar" budget: "5%" }
)";

/// version -> quality of a lockstep run of arm 0: round r samples with each worker's replica at
/// version r - 1, the learner differentiates at its gradient point over the batches in worker
/// order, evaluation at the replicas' adapter at version 0, every eval_every and the last.
std::map<uint64_t, double>
Lockstep(const ResolvedScenario& sc)
{
    auto ctx = BuildArmContext(sc, sc.arms[0]);
    EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
    ArmContext& c = **ctx;
    auto pub = hilo::Publisher::Create(c.sync, c.workload->layout(), c.optimizer, c.initial);
    EXPECT_TRUE(pub.ok()) << pub.status().ToString();
    const uint32_t workers = static_cast<uint32_t>(TopologyWorkerOrder(sc).size());
    std::vector<std::unique_ptr<hilo::Replica>> reps;
    for (uint32_t w = 0; w < workers; ++w)
    {
        reps.push_back(
            hilo::Replica::Create(c.sync, c.workload->layout(), c.optimizer, c.initial).value());
    }
    std::map<uint64_t, double> q;
    q[0] = c.workload->Evaluate((*pub)->replica_view().adapter.theta);
    for (uint64_t r = 1; r <= sc.workload.steps; ++r)
    {
        std::vector<std::string> batches;
        for (uint32_t w = 0; w < workers; ++w)
        {
            batches.push_back(
                c.workload->Rollout(reps[w]->state().adapter.theta, r, w, nullptr).value());
        }
        auto grad = c.workload->Gradient((*pub)->gradient_point().theta, batches, nullptr);
        EXPECT_TRUE(grad.ok()) << grad.status().ToString();
        auto update = (*pub)->Step(*grad);
        EXPECT_TRUE(update.ok()) << update.status().ToString();
        for (auto& rep : reps)
        {
            EXPECT_TRUE(rep->Apply(update->frame).ok());
            EXPECT_EQ(rep->state().adapter.theta, (*pub)->replica_view().adapter.theta);
        }
        if (r % sc.workload.eval_every == 0 || r == sc.workload.steps)
        {
            q[r] = c.workload->Evaluate((*pub)->replica_view().adapter.theta);
        }
    }
    return q;
}

void
ExpectSimulatorMatchesLockstep(const char* text)
{
    auto loaded = LoadScenarioText(text, "new.textproto", {}, CurrentCatalog());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const ResolvedScenario& sc = loaded->resolved;
    auto r = RunArm(sc, 0, nullptr, ArmRunOptions());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->failure.ok()) << r->failure.ToString();
    for (const ApplyEvent& a : r->applies)
    {
        EXPECT_TRUE(a.hash_ok) << "worker " << a.worker << " version " << a.version;
    }
    const std::map<uint64_t, double> want = Lockstep(sc);
    std::map<uint64_t, double> got;
    for (const EvalEvent& e : r->evals)
    {
        got[e.version] = e.quality;
    }
    EXPECT_EQ(got, want);
    ASSERT_GE(got.size(), 2u);
    EXPECT_NE(got.begin()->second, got.rbegin()->second); // it trained
}

TEST(NewWorkloadsSim, RandomWalksLearnsTheSameInTheSimulatorAndInLockstep)
{
    ExpectSimulatorMatchesLockstep(kWalks);
}

TEST(NewWorkloadsSim, FinetunedDistillLearnsTheSameInTheSimulatorAndInLockstep)
{
    ExpectSimulatorMatchesLockstep(kText);
}

TEST(NewWorkloadsSim, ScenarioFieldsAreCheckedAndReachTheWorkload)
{
    auto walks = LoadScenarioText(kWalks, "w.textproto", {}, CurrentCatalog());
    ASSERT_TRUE(walks.ok()) << walks.status().ToString();
    const models::WorkloadConfig wc = ToWorkloadConfig(walks->resolved, 4);
    EXPECT_EQ(wc.grpo_task, "randomwalks");
    EXPECT_EQ(wc.prompt_tokens, 1);
    EXPECT_EQ(wc.gen_tokens, 9); // the default walk of 10 nodes
    auto text = LoadScenarioText(kText, "t.textproto", {}, CurrentCatalog());
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(ToWorkloadConfig(text->resolved, 4).teacher_kind, "finetuned");
    EXPECT_EQ(text->resolved.workload.model.d_model, 128u); // the checkpoint's shape

    auto bad =
        LoadScenarioText(kText, "t.textproto", {"workload.model.d_model=64"}, CurrentCatalog());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("d_model"), std::string::npos) << bad.status().ToString();
    bad =
        LoadScenarioText(kText, "t.textproto", {"workload.teacher.delta_rank=4"}, CurrentCatalog());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("planted"), std::string::npos);
    bad = LoadScenarioText(kText, "t.textproto", {"workload.teacher.kind=borrowed"},
                           CurrentCatalog());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("finetuned"), std::string::npos);
    bad = LoadScenarioText(kWalks, "w.textproto", {"workload.model.vocab=16"}, CurrentCatalog());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("vocab"), std::string::npos);
    bad = LoadScenarioText(kWalks, "w.textproto", {"workload.grpo.modulus=4"}, CurrentCatalog());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("modulus"), std::string::npos);
}

} // namespace
} // namespace hilosim
