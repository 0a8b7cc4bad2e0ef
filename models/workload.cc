#include "models/workload.h"

#include "models/lm-workload.h"

#include <ATen/Parallel.h>

namespace models
{
namespace
{

hilo::Status
Bad(const std::string& field, const std::string& what)
{
    return hilo::Status::InvalidArgument("workload." + field + ": " + what);
}

} // namespace

hilo::Status
WorkloadConfig::Validate() const
{
    if (kind != "distill" && kind != "grpo")
    {
        return Bad("kind", "'" + kind + "' is not one of distill, grpo");
    }
    if (num_threads < 1)
    {
        return Bad("num_threads", "must be >= 1");
    }
    hilo::Status model = LmWorkload::ModelOptions(*this).Validate();
    if (!model.ok())
    {
        return Bad("model", model.message());
    }
    if (prompts_per_worker < 1)
    {
        return Bad("prompts_per_worker", "must be >= 1");
    }
    if (group_size < 1 || (kind == "grpo" && group_size < 2))
    {
        return Bad("group_size", "must be >= 1 (>= 2 for grpo: advantages are group-relative)");
    }
    if (prompt_tokens < 1 || gen_tokens < 1 || prompt_tokens + gen_tokens > context)
    {
        return Bad("gen_tokens", "need prompt_tokens >= 1, gen_tokens >= 1 and prompt_tokens + "
                                 "gen_tokens <= context (" +
                                     std::to_string(context) + ")");
    }
    if (!(temperature > 0))
    {
        return Bad("temperature", "must be > 0");
    }
    if (teacher_delta_rank < 1 || !(teacher_delta_decay > 0) || !(teacher_delta_decay <= 1) ||
        !(teacher_delta_scale >= 0))
    {
        return Bad("teacher_delta", "need rank >= 1, 0 < decay <= 1, scale >= 0");
    }
    if (teacher_kind != "planted" && teacher_kind != "finetuned")
    {
        return Bad("teacher_kind", "'" + teacher_kind + "' is not one of planted, finetuned");
    }
    if (grpo_task != "residue" && grpo_task != "randomwalks")
    {
        return Bad("grpo_task", "'" + grpo_task + "' is not one of residue, randomwalks");
    }
    if (task_modulus < 2 || task_modulus > vocab)
    {
        return Bad("task_modulus", "must be in [2, vocab]");
    }
    if (kind == "grpo" && grpo_task == "randomwalks")
    {
        if (prompt_tokens != 1)
        {
            return Bad("prompt_tokens", "must be 1 for randomwalks (the prompt is the start node)");
        }
        if (walk_nodes < 2 || walk_nodes > vocab)
        {
            return Bad("walk_nodes", "must be in [2, vocab] (" + std::to_string(vocab) + ")");
        }
        if (!(walk_edge_prob > 0) || !(walk_edge_prob <= 1))
        {
            return Bad("walk_edge_prob", "must be in (0, 1]");
        }
        if (walk_pretrain_steps < 0 || walk_pretrain_batch < 1)
        {
            return Bad("walk_pretrain_steps", "need walk_pretrain_steps >= 0 and "
                                              "walk_pretrain_batch >= 1");
        }
    }
    if (!(clip_eps > 0) || !(clip_eps < 1))
    {
        return Bad("clip_eps", "must be in (0, 1)");
    }
    if (!(entropy_coef >= 0) || !(entropy_coef <= 10))
    {
        return Bad("entropy_coef", "must be in [0, 10]");
    }
    if (eval_prompts < 1)
    {
        return Bad("eval_prompts", "must be >= 1");
    }
    if (micro_batch_sequences < 0 ||
        (micro_batch_sequences > 0 && micro_batch_sequences % group_size != 0))
    {
        return Bad("micro_batch_sequences",
                   "must be 0 (one pass) or a positive multiple of group_size (" +
                       std::to_string(group_size) + "), got " +
                       std::to_string(micro_batch_sequences));
    }
    return hilo::Status::Ok();
}

WorkloadConfig
PaperWorkloadConfig(const std::string& kind)
{
    WorkloadConfig c;
    c.kind = kind;
    c.vocab = 128;
    c.d_model = 256;
    c.layers = 2;
    c.heads = 8;
    c.context = 32;
    c.lora_rank = 64;
    c.lora_alpha = 128;
    c.teacher_delta_rank = 32; // a task that needs more than "train low" ranks offer
    c.teacher_delta_decay = 0.9;
    // GRPO: the stride-1 chain. With the prompt's stride the rank-64 / width-256 model learns the
    // prompt-blind part (reward ~0.35) and collapses there under every setting tried
    // (results/workloads/README.md); the stride-1 task it learns to ~0.95 at lr 3e-4.
    c.task_prompt_stride = false;
    return c;
}

hilo::StatusOr<std::unique_ptr<Workload>>
Workload::Create(const WorkloadConfig& config)
{
    HILO_RETURN_IF_ERROR(config.Validate());
    at::set_num_threads(config.num_threads);
    if (config.kind == "distill")
    {
        return NewDistillWorkload(config);
    }
    return NewGrpoWorkload(config);
}

hilo::StatusOr<std::vector<std::string>>
Workload::RolloutMany(const std::vector<float>& theta, uint64_t step,
                      const std::vector<uint32_t>& workers, std::vector<RolloutInfo>* infos)
{
    std::vector<std::string> out;
    if (infos != nullptr)
    {
        infos->assign(workers.size(), RolloutInfo());
    }
    for (size_t i = 0; i < workers.size(); ++i)
    {
        auto batch = Rollout(theta, step, workers[i], infos ? &(*infos)[i] : nullptr);
        if (!batch.ok())
        {
            return batch.status();
        }
        out.push_back(std::move(*batch));
    }
    return out;
}

} // namespace models
