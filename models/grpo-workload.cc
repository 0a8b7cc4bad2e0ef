// GRPO on the residue-chain task (Workload kind "grpo"): see workload.h for the task and loss.
#include "models/lm-workload.h"
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
        at::NoGradGuard no_grad;
        at::Tensor prompts =
            Prompts(SeededRng::Mix({m_config.seed, kStreamEvalPrompts}), m_config.eval_prompts);
        Generation g = m_student.Generate(prompts, m_config.gen_tokens, m_config.temperature,
                                          m_student.LoraTensor(theta),
                                          SeededRng::Mix({m_config.seed, kStreamEvalSampling}));
        std::vector<float> r(m_config.eval_prompts, 0.0f);
        Score(g.tokens, &r);
        double sum = 0;
        for (float x : r)
        {
            sum += x;
        }
        Evaluation e;
        e.quality = sum / static_cast<double>(r.size());
        e.extra.push_back(
            {"random_policy_reward", 1.0 / static_cast<double>(m_config.task_modulus)});
        return e;
    }

  protected:
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

} // namespace

hilo::StatusOr<std::unique_ptr<Workload>>
NewGrpoWorkload(const WorkloadConfig& config)
{
    hilo::StatusOr<TinyLm> student = TinyLm::Create(LmWorkload::ModelOptions(config));
    if (!student.ok())
    {
        return student.status();
    }
    return std::unique_ptr<Workload>(new GrpoWorkload(config, std::move(student).value()));
}

} // namespace models
