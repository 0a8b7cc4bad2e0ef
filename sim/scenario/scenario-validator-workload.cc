// workload (its model, LoRA, GRPO task, teacher) and optimizer.
#include "sim/scenario/scenario-checker.h"

#include "models/fortune-corpus.h"
#include "models/workload.h"

#include <algorithm>

namespace hilosim
{
namespace scenario_check
{

namespace
{

const std::vector<std::string> kWorkloadKinds = {"distill", "grpo"};
const std::vector<std::string> kGrpoTasks = {"residue_stride", "residue_chain", "randomwalks"};
const std::vector<std::string> kTeacherKinds = {"planted", "finetuned"};
// Graph nodes of the randomwalks task (models::WorkloadConfig::walk_nodes), one token each.
const int32_t kWalkNodes = static_cast<int32_t>(models::WorkloadConfig().walk_nodes);
const std::vector<std::string> kOptimizerKinds = {"adamw", "sgd"};
const std::vector<std::string> kSchedules = {"constant", "linear_warmup", "cosine"};

} // namespace

void
Checker::CheckWorkload(const Node& n, const Workload& w, ResolvedWorkload* out)
{
    if (Choice(n, "kind", w.kind(), kWorkloadKinds, "workload"))
    {
        out->kind = w.kind() == "grpo" ? WorkloadKind::kGrpo : WorkloadKind::kDistill;
    }
    IntIn(n, "steps", w.steps(), 1, 1000000);
    out->steps = static_cast<uint32_t>(std::max(0, w.steps()));

    const Node m = n.Child("model");
    const ModelShape& ms = w.model();
    IntIn(m, "vocab", ms.vocab(), 2, 65536);
    IntIn(m, "d_model", ms.d_model(), 8, 8192);
    IntIn(m, "layers", ms.layers(), 1, 64);
    const bool heads_ok = IntIn(m, "heads", ms.heads(), 1, 128);
    IntIn(m, "context", ms.context(), 2, 8192);
    if (heads_ok && ms.d_model() > 0 && ms.d_model() % ms.heads() != 0)
    {
        Error(m, "d_model",
              "must be a multiple of heads (" + std::to_string(ms.heads()) + "), got " +
                  std::to_string(ms.d_model()));
    }
    out->model = {static_cast<uint32_t>(std::max(0, ms.vocab())),
                  static_cast<uint32_t>(std::max(0, ms.d_model())),
                  static_cast<uint32_t>(std::max(0, ms.layers())),
                  static_cast<uint32_t>(std::max(0, ms.heads())),
                  static_cast<uint32_t>(std::max(0, ms.context()))};

    const Node lora = n.Child("lora");
    IntIn(lora, "rank", w.lora().rank(), 1, 4096);
    DoubleIn(lora, "alpha", w.lora().alpha(), 0, true, 1e6, false);
    out->lora_rank = static_cast<uint32_t>(std::max(0, w.lora().rank()));
    out->lora_alpha = w.lora().alpha();

    IntIn(n, "prompts_per_worker", w.prompts_per_worker(), 1, 4096);
    IntIn(n, "group_size", w.group_size(), 1, 1024);
    if (ms.context() >= 2)
    {
        IntIn(n, "gen_tokens", w.gen_tokens(), 1, ms.context() - 1);
    }
    DoubleIn(n, "temperature", w.temperature(), 0, true, 10, false);
    IntIn(n, "eval_prompts", w.eval_prompts(), 1, 100000);
    IntIn(n, "eval_every", w.eval_every(), 1, 1000000);
    DoubleIn(n, "clip_norm", w.clip_norm(), 0, false, 1e6, false);
    out->prompts_per_worker = static_cast<uint32_t>(std::max(0, w.prompts_per_worker()));
    out->group_size = static_cast<uint32_t>(std::max(0, w.group_size()));
    out->gen_tokens = static_cast<uint32_t>(std::max(0, w.gen_tokens()));
    out->temperature = w.temperature();
    out->eval_prompts = static_cast<uint32_t>(std::max(0, w.eval_prompts()));
    out->eval_every = static_cast<uint32_t>(std::max(0, w.eval_every()));
    out->clip_norm = w.clip_norm();
    IntIn(n, "modelled_prompt_tokens", w.modelled_prompt_tokens(), 0, 1000000);
    IntIn(n, "modelled_gen_tokens", w.modelled_gen_tokens(), 0, 1000000);
    if (w.modelled_prompt_tokens() > 0 && w.modelled_gen_tokens() == 0)
    {
        Error(n, "modelled_gen_tokens",
              "must be set (> 0) when modelled_prompt_tokens is: the modelled counts replace the "
              "real ones only together");
    }
    out->modelled_prompt_tokens = static_cast<uint32_t>(std::max(0, w.modelled_prompt_tokens()));
    out->modelled_gen_tokens = static_cast<uint32_t>(std::max(0, w.modelled_gen_tokens()));

    if (w.kind() == "grpo")
    {
        const Node g = n.Child("grpo");
        Choice(g, "task", w.grpo().task(), kGrpoTasks, "GRPO task");
        const bool walks = w.grpo().task() == "randomwalks";
        if (walks)
        {
            if (w.grpo().has_modulus())
            {
                Error(g, "modulus", "applies to the residue tasks only (remove it)");
            }
            if (ms.vocab() < kWalkNodes)
            {
                Error(m, "vocab",
                      "must be >= " + std::to_string(kWalkNodes) +
                          " for task \"randomwalks\" (one token per graph node), got " +
                          std::to_string(ms.vocab()));
            }
        }
        else
        {
            IntIn(g, "modulus", w.grpo().modulus(), 2, std::max(2, ms.vocab()));
        }
        DoubleIn(g, "entropy_coef", w.grpo().entropy_coef(), 0, false, 10, false);
        out->grpo_task = walks ? "randomwalks" : "residue";
        out->grpo_prompt_stride = w.grpo().task() != "residue_chain";
        out->grpo_modulus = static_cast<uint32_t>(std::max(0, w.grpo().modulus()));
        out->grpo_entropy_coef = w.grpo().entropy_coef();
    }
    else if (w.has_grpo())
    {
        Error(n, "grpo",
              "only workload kind \"grpo\" has a GRPO task; this workload is \"" + w.kind() +
                  "\" (remove grpo)");
    }
    if (w.kind() == "distill")
    {
        const Node t = n.Child("teacher");
        Choice(t, "kind", w.teacher().kind(), kTeacherKinds, "teacher");
        out->teacher_kind = w.teacher().kind();
        if (w.teacher().kind() == "finetuned")
        {
            if (w.teacher().has_delta_rank() || w.teacher().has_decay())
            {
                Error(t, w.teacher().has_delta_rank() ? "delta_rank" : "decay",
                      "applies to the planted teacher only (remove it)");
            }
            const std::pair<const char*, int64_t> shape[] = {{"vocab", ms.vocab()},
                                                             {"d_model", ms.d_model()},
                                                             {"layers", ms.layers()},
                                                             {"heads", ms.heads()},
                                                             {"context", ms.context()}};
            const int64_t want[] = {models::TextBaseShape::kVocab, models::TextBaseShape::kDModel,
                                    models::TextBaseShape::kLayers, models::TextBaseShape::kHeads,
                                    models::TextBaseShape::kContext};
            for (size_t i = 0; i < 5; ++i)
            {
                if (shape[i].second != want[i])
                {
                    Error(m, shape[i].first,
                          "must be " + std::to_string(want[i]) +
                              " with the finetuned teacher (the shape of the pretrained text "
                              "base), got " +
                              std::to_string(shape[i].second));
                }
            }
        }
        else
        {
            IntIn(t, "delta_rank", w.teacher().delta_rank(), 1, 4096);
            DoubleIn(t, "decay", w.teacher().decay(), 0, true, 1, false);
            out->teacher_delta_rank = static_cast<uint32_t>(std::max(0, w.teacher().delta_rank()));
            out->teacher_decay = w.teacher().decay();
        }
    }
}

void
Checker::CheckOptimizer(const Node& n, const Optimizer& o, uint32_t steps,
                        hilo::OptimizerConfig* out)
{
    bool ok = Choice(n, "kind", o.kind(), kOptimizerKinds, "optimizer");
    ok &= Choice(n, "schedule", o.schedule(), kSchedules, "schedule");
    ok &= DoubleIn(n, "lr", o.lr(), 0, false, 10, false);
    ok &= IntIn(n, "warmup_steps", o.warmup_steps(), 0, std::max<int64_t>(steps, 0));
    ok &= DoubleIn(n, "beta1", o.beta1(), 0, false, 1, true);
    ok &= DoubleIn(n, "beta2", o.beta2(), 0, false, 1, true);
    ok &= DoubleIn(n, "eps", o.eps(), 0, true, 1, false);
    ok &= DoubleIn(n, "weight_decay", o.weight_decay(), 0, false, 10, false);
    ok &= DoubleIn(n, "momentum", o.momentum(), 0, false, 1, true);
    ok &= DoubleIn(n, "min_lr_ratio", o.min_lr_ratio(), 0, false, 1, false);
    ok &= IntIn(n, "v_freeze_step", o.v_freeze_step(), 0, std::max<int64_t>(steps, 0));
    if (o.v_freeze_step() > 0 && o.kind() == "sgd")
    {
        Error(n, "v_freeze_step", "needs kind \"adamw\" (sgd keeps no second moment)");
        ok = false;
    }
    if (!ok)
    {
        return;
    }
    out->kind = *hilo::ParseOptimizerKind(o.kind());
    out->lr.kind = *hilo::ParseLrScheduleKind(o.schedule());
    out->lr.base_lr = static_cast<float>(o.lr());
    out->lr.warmup_steps = o.warmup_steps();
    out->lr.total_steps = std::max<int64_t>(steps, 1);
    out->lr.min_lr_ratio = static_cast<float>(o.min_lr_ratio());
    out->beta1 = static_cast<float>(o.beta1());
    out->beta2 = static_cast<float>(o.beta2());
    out->eps = static_cast<float>(o.eps());
    out->weight_decay = static_cast<float>(o.weight_decay());
    out->momentum = static_cast<float>(o.momentum());
    out->dampening = 0.0f;
    out->v_freeze_step = o.v_freeze_step();
    hilo::Status s = out->Validate();
    if (!s.ok())
    {
        ErrorAt(n, s.message());
    }
}

} // namespace scenario_check
} // namespace hilosim
