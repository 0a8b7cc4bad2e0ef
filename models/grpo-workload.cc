// GRPO (Workload kind "grpo") on the residue-chain and randomwalks tasks: see workload.h for the
// tasks and the loss.
#include "models/lm-workload.h"
#include "models/next-token-trainer.h"
#include "models/random-walk-graph.h"
#include "models/seeded-rng.h"

namespace models
{

double
ResidueChainReward(const int64_t* row, int64_t prompt_len, int64_t gen_len, int64_t modulus,
                   bool prompt_stride)
{
    const int64_t stride = prompt_stride ? 1 + row[0] % (modulus - 1) : 1;
    int64_t hits = 0;
    for (int64_t t = prompt_len; t < prompt_len + gen_len; ++t)
    {
        hits += (row[t] % modulus) == ((row[t - 1] + stride) % modulus) ? 1 : 0;
    }
    return static_cast<double>(hits) / static_cast<double>(gen_len);
}

namespace
{

class GrpoWorkload : public LmWorkload
{
  public:
    GrpoWorkload(const WorkloadConfig& config, TinyLm student)
      : LmWorkload(config, std::move(student), WorkloadKind::kGrpo)
    {
    }

    std::string QualityMetric() const override { return "mean_reward"; }
    bool HigherIsBetter() const override { return true; }

    Evaluation EvaluateAll(const std::vector<float>& theta) override
    {
        Evaluation e;
        e.quality = MeanReward(m_student.LoraTensor(theta));
        e.extra.push_back(
            {"random_policy_reward", 1.0 / static_cast<double>(m_config.task_modulus)});
        return e;
    }

  protected:
    /// Mean reward of one sample per held-out prompt at `lora` (undefined: the base).
    double MeanReward(const at::Tensor& lora) const
    {
        at::NoGradGuard no_grad;
        at::Tensor prompts = Prompts(SeededRng::Mix({m_config.seed, kStreamEvalPrompts}),
                                     m_config.eval_prompts, /*eval=*/true);
        Generation g = m_student.Generate(prompts, m_config.gen_tokens, m_config.temperature, lora,
                                          SeededRng::Mix({m_config.seed, kStreamEvalSampling}));
        std::vector<float> r(m_config.eval_prompts, 0.0f);
        Score(g.tokens, &r);
        double sum = 0;
        for (float x : r)
        {
            sum += x;
        }
        return sum / static_cast<double>(r.size());
    }

    void Score(const at::Tensor& tokens, std::vector<float>* rewards) const override
    {
        const int64_t width = tokens.size(1);
        const int64_t* t = tokens.data_ptr<int64_t>();
        for (int64_t i = 0; i < tokens.size(0); ++i)
        {
            (*rewards)[i] = static_cast<float>(
                ResidueChainReward(t + i * width, m_config.prompt_tokens, m_config.gen_tokens,
                                   m_config.task_modulus, m_config.task_prompt_stride));
        }
    }

    at::Tensor Loss(const at::Tensor& lora, const MergedBatch& b) const override
    {
        const int64_t n = b.tokens.size(0);
        at::Tensor logits =
            m_student.Forward(b.tokens, lora).narrow(1, b.prompt_len - 1, b.gen_len);
        at::Tensor log_probs = at::log_softmax(logits / m_config.temperature, -1); // [N, G, V]
        at::Tensor logp =
            log_probs.gather(-1, b.tokens.narrow(1, b.prompt_len, b.gen_len).unsqueeze(-1))
                .squeeze(-1); // [N, G]
        // Group-normalized advantages (population std, as in GRPO).
        at::Tensor r = b.rewards.view({n / b.group_size, b.group_size});
        at::Tensor mean = r.mean(1, /*keepdim=*/true);
        at::Tensor std = (r - mean).pow(2).mean(1, /*keepdim=*/true).sqrt();
        at::Tensor adv = ((r - mean) / (std + 1e-4)).view({n, 1});
        at::Tensor surrogate;
        if (m_config.importance_ratio)
        {
            at::Tensor ratio = (logp - b.behaviour_logp).exp();
            at::Tensor clipped = ratio.clamp(1.0 - m_config.clip_eps, 1.0 + m_config.clip_eps);
            surrogate = at::min(ratio * adv, clipped * adv);
        }
        else
        {
            surrogate = logp * adv;
        }
        at::Tensor loss = -surrogate.mean();
        if (m_config.entropy_coef > 0)
        {
            at::Tensor entropy = -(log_probs.exp() * log_probs).sum(-1); // [N, G]
            loss = loss - m_config.entropy_coef * entropy.mean();
        }
        return loss;
    }
};

/// trlX's randomwalks task on a base pretrained on the graph's random walks.
class RandomWalksWorkload : public GrpoWorkload
{
  public:
    RandomWalksWorkload(const WorkloadConfig& config, TinyLm student, RandomWalkGraph graph)
      : GrpoWorkload(config, std::move(student))
      , m_graph(std::move(graph))
    {
        m_base_reward = MeanReward(at::Tensor());
    }

    Evaluation EvaluateAll(const std::vector<float>& theta) override
    {
        Evaluation e;
        e.quality = MeanReward(m_student.LoraTensor(theta));
        e.extra.push_back({"base_reward", m_base_reward});
        return e;
    }

  protected:
    at::Tensor Prompts(uint64_t seed, int64_t count, bool /*eval*/) const override
    {
        at::Tensor p = at::empty({count, 1}, at::kLong);
        auto a = p.accessor<int64_t, 2>();
        SeededRng rng(seed);
        const std::vector<int64_t>& starts = m_graph.starts();
        for (int64_t i = 0; i < count; ++i)
        {
            a[i][0] = starts[rng.Below(starts.size())];
        }
        return p;
    }

    void Score(const at::Tensor& tokens, std::vector<float>* rewards) const override
    {
        const int64_t width = tokens.size(1);
        const int64_t* t = tokens.data_ptr<int64_t>();
        for (int64_t i = 0; i < tokens.size(0); ++i)
        {
            (*rewards)[i] = static_cast<float>(m_graph.Optimality(t + i * width, width));
        }
    }

  private:
    RandomWalkGraph m_graph;
    double m_base_reward{0};
};

} // namespace

hilo::StatusOr<std::unique_ptr<Workload>>
NewRandomWalksWorkload(const WorkloadConfig& config)
{
    RandomWalkGraph graph(config.walk_nodes, config.walk_edge_prob, config.gen_tokens + 1,
                          config.walk_graph_seed);
    if (graph.starts().empty())
    {
        return hilo::Status::InvalidArgument(
            "workload.walk_graph_seed: no node reaches the goal within gen_tokens + 1 nodes on "
            "this "
            "graph; choose another seed, more edges or longer walks");
    }
    hilo::StatusOr<TinyLm> student = TinyLm::Create(LmWorkload::ModelOptions(config));
    if (!student.ok())
    {
        return student.status();
    }
    // The base: next-token pretraining on uniform random walks from uniform non-goal starts (the
    // data of trlX's example), walks of max_length nodes (a walk at the goal stays there).
    NextTokenTrainerOptions pretrain;
    pretrain.steps = config.walk_pretrain_steps;
    pretrain.warmup_steps = std::min<int64_t>(20, config.walk_pretrain_steps);
    pretrain.lr = 3e-3;
    const int64_t len = config.gen_tokens + 1;
    auto batch = [&](int64_t step)
    {
        SeededRng rng(SeededRng::Mix({config.seed, kStreamPretrain, static_cast<uint64_t>(step)}));
        at::Tensor t = at::empty({config.walk_pretrain_batch, len}, at::kLong);
        auto a = t.accessor<int64_t, 2>();
        for (int64_t i = 0; i < config.walk_pretrain_batch; ++i)
        {
            const int64_t start =
                1 + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(config.walk_nodes - 1)));
            const std::vector<int64_t> walk = graph.SampleWalk(start, len, &rng);
            for (int64_t j = 0; j < len; ++j)
            {
                a[i][j] = walk[j];
            }
        }
        return t;
    };
    TrainNextToken(*student, batch, pretrain);
    return std::unique_ptr<Workload>(
        new RandomWalksWorkload(config, std::move(student).value(), std::move(graph)));
}

hilo::StatusOr<std::unique_ptr<Workload>>
NewGrpoWorkload(const WorkloadConfig& config)
{
    if (config.grpo_task == "randomwalks")
    {
        return NewRandomWalksWorkload(config);
    }
    hilo::StatusOr<TinyLm> student = TinyLm::Create(LmWorkload::ModelOptions(config));
    if (!student.ok())
    {
        return student.status();
    }
    return std::unique_ptr<Workload>(new GrpoWorkload(config, std::move(student).value()));
}

} // namespace models
