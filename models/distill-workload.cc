// On-policy distillation (Workload kind "distill"): see workload.h for the task.
#include "models/lm-workload.h"
#include "models/seeded-rng.h"

namespace models
{
namespace
{

/// Mean over rows and positions of KL(p || q) from log-probs [..., V].
at::Tensor
ReverseKl(const at::Tensor& logp_student, const at::Tensor& logp_teacher)
{
    return (logp_student.exp() * (logp_student - logp_teacher)).sum(-1).mean();
}

class DistillWorkload : public LmWorkload
{
  public:
    DistillWorkload(const WorkloadConfig& config, TinyLm student, TinyLm teacher)
      : LmWorkload(config, std::move(student), WorkloadKind::kDistill)
      , m_teacher(std::move(teacher))
    {
        m_base_kl = EvalKl(at::Tensor());
    }

    std::string QualityMetric() const override { return "reverse_kl"; }
    bool HigherIsBetter() const override { return false; }

    Evaluation EvaluateAll(const std::vector<float>& theta) override
    {
        Evaluation e;
        e.quality = EvalKl(m_student.LoraTensor(theta));
        e.extra.push_back({"gap_closed", m_base_kl > 0 ? 1.0 - e.quality / m_base_kl : 0.0});
        e.extra.push_back({"base_kl", m_base_kl});
        return e;
    }

  protected:
    at::Tensor Loss(const at::Tensor& lora, const MergedBatch& b) const override
    {
        // Position P-1+j predicts generated token j: the distributions the student sampled from.
        at::Tensor student = at::log_softmax(
            m_student.Forward(b.tokens, lora).narrow(1, b.prompt_len - 1, b.gen_len), -1);
        at::Tensor teacher;
        {
            at::NoGradGuard no_grad;
            teacher = at::log_softmax(
                m_teacher.Forward(b.tokens, at::Tensor()).narrow(1, b.prompt_len - 1, b.gen_len),
                -1);
        }
        return ReverseKl(student, teacher);
    }

  private:
    /// On-policy reverse KL at temperature 1 on the held-out prompts with a fixed sampling seed.
    double EvalKl(const at::Tensor& lora) const
    {
        at::NoGradGuard no_grad;
        at::Tensor prompts =
            Prompts(SeededRng::Mix({m_config.seed, kStreamEvalPrompts}), m_config.eval_prompts);
        Generation g = m_student.Generate(prompts, m_config.gen_tokens, /*temperature=*/1.0, lora,
                                          SeededRng::Mix({m_config.seed, kStreamEvalSampling}));
        const int64_t p = m_config.prompt_tokens;
        at::Tensor s = at::log_softmax(
            m_student.Forward(g.tokens, lora).narrow(1, p - 1, m_config.gen_tokens), -1);
        at::Tensor t = at::log_softmax(
            m_teacher.Forward(g.tokens, at::Tensor()).narrow(1, p - 1, m_config.gen_tokens), -1);
        return ReverseKl(s, t).item<double>();
    }

    TinyLm m_teacher;
    double m_base_kl{0};
};

} // namespace

hilo::StatusOr<std::unique_ptr<Workload>>
NewDistillWorkload(const WorkloadConfig& config)
{
    hilo::StatusOr<TinyLm> student = TinyLm::Create(LmWorkload::ModelOptions(config));
    if (!student.ok())
    {
        return student.status();
    }
    TinyLm teacher = student->WithPlantedDelta(
        config.teacher_delta_rank, config.teacher_delta_decay, config.teacher_delta_scale,
        SeededRng::Mix({config.seed, kStreamTeacher}));
    return std::unique_ptr<Workload>(
        new DistillWorkload(config, std::move(student).value(), std::move(teacher)));
}

} // namespace models
