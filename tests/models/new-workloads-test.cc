// The workloads nobody planted: GRPO on trlX's randomwalks task and distillation toward the text
// base's full fine-tune. Both learn under full sync, and under hilo + Spar at a small budget every
// worker's replica holds the learner's adapter bit for bit and samples the learner's bytes.
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "models/fortune-corpus.h"
#include "models/workload.h"

#include <gtest/gtest.h>

namespace models
{
namespace
{

WorkloadConfig
Walks()
{
    WorkloadConfig c;
    c.kind = "grpo";
    c.grpo_task = "randomwalks";
    c.seed = 3;
    c.vocab = 21;
    c.d_model = 32;
    c.layers = 1;
    c.heads = 2;
    c.context = 16;
    c.lora_rank = 4;
    c.lora_alpha = 8;
    c.prompt_tokens = 1;
    c.gen_tokens = 9;
    c.prompts_per_worker = 8;
    c.group_size = 8;
    c.entropy_coef = 0.01;
    c.walk_pretrain_steps = 150;
    c.eval_prompts = 128;
    return c;
}

WorkloadConfig
Finetuned()
{
    WorkloadConfig c;
    c.kind = "distill";
    c.teacher_kind = "finetuned";
    c.seed = 4;
    c.vocab = TextBaseShape::kVocab;
    c.d_model = TextBaseShape::kDModel;
    c.layers = TextBaseShape::kLayers;
    c.heads = TextBaseShape::kHeads;
    c.context = TextBaseShape::kContext;
    c.lora_rank = 8;
    c.lora_alpha = 16;
    c.prompt_tokens = 16;
    c.gen_tokens = 16;
    c.prompts_per_worker = 4;
    c.group_size = 1;
    c.eval_prompts = 32;
    return c;
}

std::unique_ptr<Workload>
Make(const WorkloadConfig& c)
{
    auto w = Workload::Create(c);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return std::move(w).value();
}

hilo::SyncSpec
Spec(hilo::SyncKind kind, const std::string& compressor, double fraction)
{
    hilo::SyncSpec s;
    s.kind = kind;
    s.compressor = compressor;
    if (compressor == "dense")
    {
        s.compressor_options = {{"dtype", "fp32"}};
    }
    if (fraction < 1)
    {
        s.budget = hilo::Budget::Fraction(fraction);
        s.error_feedback = hilo::ErrorFeedbackOptions{true, 1.0f};
    }
    return s;
}

/// Synchronous lockstep with `workers` replicas (sync-curves' protocol): round r samples at the
/// replicas' version r - 1, the learner differentiates at its gradient point. Checks the
/// replicas against the learner after every apply; returns the final replica-view quality.
double
Train(Workload* wl, const hilo::SyncSpec& spec, float lr, int rounds, int workers,
      bool check_identity)
{
    hilo::OptimizerConfig opt;
    opt.lr.base_lr = lr;
    const hilo::AdapterState init = wl->InitialAdapter();
    auto pub = hilo::Publisher::Create(spec, wl->layout(), opt, init).value();
    std::vector<std::unique_ptr<hilo::Replica>> replicas;
    for (int w = 0; w < workers; ++w)
    {
        replicas.push_back(hilo::Replica::Create(spec, wl->layout(), opt, init).value());
    }
    for (int r = 1; r <= rounds; ++r)
    {
        std::vector<std::string> batches;
        for (int w = 0; w < workers; ++w)
        {
            batches.push_back(
                wl->Rollout(replicas[w]->state().adapter.theta, r, w, nullptr).value());
            if (check_identity)
            {
                // The learner's own view samples the same bytes.
                EXPECT_EQ(batches.back(),
                          wl->Rollout(pub->replica_view().adapter.theta, r, w, nullptr).value());
            }
        }
        if (check_identity)
        {
            EXPECT_EQ(pub->gradient_point().Hash(), pub->replica_view().adapter.Hash());
        }
        auto grad = wl->Gradient(pub->gradient_point().theta, batches, nullptr);
        EXPECT_TRUE(grad.ok()) << grad.status().ToString();
        auto update = pub->Step(*grad);
        EXPECT_TRUE(update.ok()) << update.status().ToString();
        for (auto& rep : replicas)
        {
            hilo::Status s = rep->Apply(update->frame);
            EXPECT_TRUE(s.ok()) << s.ToString();
            if (check_identity)
            {
                EXPECT_EQ(rep->state().adapter.theta, pub->replica_view().adapter.theta)
                    << "round " << r;
            }
        }
    }
    return wl->Evaluate(replicas[0]->state().adapter.theta);
}

TEST(RandomWalksWorkload, BaseIsAPretrainedWalkerAndConfigIsChecked)
{
    auto wl = Make(Walks());
    const Evaluation e = wl->EvaluateAll(wl->InitialAdapter().theta);
    ASSERT_EQ(e.extra.at(0).first, "base_reward");
    EXPECT_EQ(e.quality, e.extra.at(0).second); // B = 0: the base itself
    EXPECT_LT(e.quality, 0.6);                  // far from shortest paths
    EXPECT_GT(e.quality, 0.05);                 // but it walks the graph (uniform tokens: ~0)
    WorkloadConfig c = Walks();
    c.prompt_tokens = 2;
    EXPECT_NE(c.Validate().message().find("prompt_tokens"), std::string::npos);
    c = Walks();
    c.vocab = 16;
    EXPECT_NE(c.Validate().message().find("walk_nodes"), std::string::npos);
    c = Walks();
    c.grpo_task = "mazes";
    EXPECT_NE(c.Validate().message().find("grpo_task"), std::string::npos);
}

TEST(RandomWalksWorkload, FullSyncGrpoRaisesReward)
{
    auto wl = Make(Walks());
    const double before = wl->Evaluate(wl->InitialAdapter().theta);
    const double after =
        Train(wl.get(), Spec(hilo::SyncKind::kFull, "dense", 1.0), 1e-2f, 30, 2, false);
    RecordProperty("reward_before", std::to_string(before));
    RecordProperty("reward_after", std::to_string(after));
    EXPECT_GT(after, before + 0.2) << "reward " << before << " -> " << after;
}

TEST(RandomWalksWorkload, HiloSparReplicasAreBitIdentical)
{
    auto wl = Make(Walks());
    Train(wl.get(), Spec(hilo::SyncKind::kHilo, "spar", 0.05), 1e-2f, 6, 2, true);
}

TEST(FinetunedDistillWorkload, KlFallsUnderFullSync)
{
    auto wl = Make(Finetuned());
    const Evaluation before = wl->EvaluateAll(wl->InitialAdapter().theta);
    ASSERT_GT(before.quality, 0.02);
    const double after =
        Train(wl.get(), Spec(hilo::SyncKind::kFull, "dense", 1.0), 5e-3f, 15, 2, false);
    RecordProperty("kl_before", std::to_string(before.quality));
    RecordProperty("kl_after", std::to_string(after));
    // Measured: 0.125 -> 0.105 nats per token (the rank-8 student closes the gap slowly: the
    // teacher's delta is full rank, results/quality/README.md).
    EXPECT_LT(after, 0.9 * before.quality) << "KL " << before.quality << " -> " << after;
}

TEST(FinetunedDistillWorkload, HiloSparReplicasAreBitIdentical)
{
    auto wl = Make(Finetuned());
    Train(wl.get(), Spec(hilo::SyncKind::kHilo, "spar", 0.016), 5e-3f, 4, 2, true);
}

TEST(FinetunedDistillWorkload, WrongShapeOrMissingCheckpointIsAnError)
{
    WorkloadConfig c = Finetuned();
    c.d_model = 64;
    auto w = Workload::Create(c);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().message().find("workload.model"), std::string::npos)
        << w.status().ToString();
    c = Finetuned();
    c.text_checkpoint = "/nonexistent/lm.bin";
    w = Workload::Create(c);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.status().message().find("/nonexistent/lm.bin"), std::string::npos);
    c = Finetuned();
    c.teacher_kind = "borrowed";
    EXPECT_NE(c.Validate().message().find("teacher_kind"), std::string::npos);
}

} // namespace
} // namespace models
