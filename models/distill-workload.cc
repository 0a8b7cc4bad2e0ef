// On-policy distillation (Workload kind "distill"): see workload.h for the task and its teachers.
#include "models/fortune-corpus.h"
#include "models/lm-checkpoint.h"
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
    /// `train_text` and `eval_text` empty: uniform random prompts; else windows of them.
    DistillWorkload(const WorkloadConfig& config, TinyLm student, TinyLm teacher,
                    std::string train_text, std::string eval_text)
      : LmWorkload(config, std::move(student), WorkloadKind::kDistill)
      , m_teacher(std::move(teacher))
      , m_train_text(std::move(train_text))
      , m_eval_text(std::move(eval_text))
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
    at::Tensor Prompts(uint64_t seed, int64_t count, bool eval) const override
    {
        if (m_train_text.empty())
        {
            return LmWorkload::Prompts(seed, count, eval);
        }
        SeededRng rng(seed);
        return TextWindows(eval ? m_eval_text : m_train_text, count, m_config.prompt_tokens, &rng);
    }

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
        at::Tensor prompts = Prompts(SeededRng::Mix({m_config.seed, kStreamEvalPrompts}),
                                     m_config.eval_prompts, /*eval=*/true);
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
    std::string m_train_text;
    std::string m_eval_text;
    double m_base_kl{0};
};

/// The finetuned teacher: base, teacher and held-out text from the text checkpoint.
hilo::StatusOr<std::unique_ptr<Workload>>
NewFinetunedDistill(const WorkloadConfig& config)
{
    const std::string path =
        config.text_checkpoint.empty() ? DefaultTextCheckpointPath() : config.text_checkpoint;
    hilo::StatusOr<LmCheckpoint> ckpt = LmCheckpoint::Read(path);
    if (!ckpt.ok())
    {
        return hilo::Status(ckpt.status().code(),
                            "workload.text_checkpoint: " + ckpt.status().message());
    }
    const TinyLmOptions options = LmWorkload::ModelOptions(config);
    hilo::StatusOr<TinyLm> student = TinyLm::FromBaseWeights(options, ckpt->WithPrefix("base."));
    if (!student.ok())
    {
        return hilo::Status::InvalidArgument(path + ": the base does not fit workload.model (" +
                                             student.status().message() + ")");
    }
    hilo::StatusOr<TinyLm> teacher = TinyLm::FromBaseWeights(options, ckpt->WithPrefix("teacher."));
    if (!teacher.ok())
    {
        return hilo::Status::InvalidArgument(path + ": the teacher does not fit workload.model (" +
                                             teacher.status().message() + ")");
    }
    auto text = ckpt->blobs.find("text.heldout.teacher");
    if (text == ckpt->blobs.end() ||
        text->second.size() < static_cast<size_t>(4 * config.prompt_tokens))
    {
        return hilo::Status::InvalidArgument(path + ": no held-out text (text.heldout.teacher)");
    }
    // Training prompts from the first half, evaluation prompts from the second.
    const size_t half = text->second.size() / 2;
    return std::unique_ptr<Workload>(
        new DistillWorkload(config, std::move(student).value(), std::move(teacher).value(),
                            text->second.substr(0, half), text->second.substr(half)));
}

} // namespace

hilo::StatusOr<std::unique_ptr<Workload>>
NewDistillWorkload(const WorkloadConfig& config)
{
    if (config.teacher_kind == "finetuned")
    {
        return NewFinetunedDistill(config);
    }
    hilo::StatusOr<TinyLm> student = TinyLm::Create(LmWorkload::ModelOptions(config));
    if (!student.ok())
    {
        return student.status();
    }
    TinyLm teacher = student->WithPlantedDelta(
        config.teacher_delta_rank, config.teacher_delta_decay, config.teacher_delta_scale,
        SeededRng::Mix({config.seed, kStreamTeacher}));
    return std::unique_ptr<Workload>(new DistillWorkload(
        config, std::move(student).value(), std::move(teacher), std::string(), std::string()));
}

} // namespace models
