#include "sim/run/arm-context-builder.h"

#include "hilo/compress/budget-regime.h"

#include "hilo/sync/sync-strategy.h"
#include "models/compute-model.h"
#include "models/gpu-node.h"
#include "models/gpu-profile.h"
#include "models/llm-profile.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace hilosim
{
namespace
{

// The tiny real model described as an LLM profile, for timing when the scenario models none.
models::LlmProfile
TinyProfile(const models::WorkloadConfig& c)
{
    models::LlmProfile p;
    p.name = "tiny";
    p.layers = c.layers;
    p.hidden = c.d_model;
    p.intermediate = 4 * c.d_model;
    p.heads = c.heads;
    p.kv_heads = c.heads;
    p.head_dim = c.d_model / c.heads;
    p.vocab = c.vocab;
    return p;
}

// The node a scenario names (validated names; errors only if the tables changed under it).
hilo::StatusOr<models::GpuNode>
Node(const std::string& gpu, uint32_t gpus, const std::string& parallel)
{
    auto profile = models::FindGpu(gpu);
    if (!profile.ok())
    {
        return profile.status();
    }
    auto how = models::ParseNodeParallel(parallel);
    if (!how.ok())
    {
        return how.status();
    }
    return models::GpuNode(*profile, gpus, *how);
}

} // namespace

std::vector<uint32_t>
TopologyWorkerOrder(const ResolvedScenario& sc)
{
    std::vector<uint32_t> order;
    if (sc.network.topology == TopologyKind::kStar)
    {
        for (const ResolvedWorker& w : sc.workers)
        {
            order.push_back(w.index);
        }
        return order;
    }
    for (size_t r = 0; r < sc.network.regions.size(); ++r)
    {
        for (const ResolvedWorker& w : sc.workers)
        {
            if (w.region_index == static_cast<int32_t>(r))
            {
                order.push_back(w.index);
            }
        }
    }
    return order;
}

hilosim::TopologySpec
ScenarioTopologySpec(const ResolvedScenario& sc)
{
    hilosim::TopologySpec spec;
    if (sc.network.learner_uplink)
    {
        spec.learner_uplink = *sc.network.learner_uplink;
    }
    if (sc.network.topology == TopologyKind::kStar)
    {
        spec.kind = hilosim::TopologyKind::kStar;
        for (const ResolvedWorker& w : sc.workers)
        {
            spec.worker_links.push_back(w.link);
        }
        return spec;
    }
    spec.kind = sc.network.topology == TopologyKind::kRelay ? hilosim::TopologyKind::kRelay
                                                            : hilosim::TopologyKind::kRegions;
    for (size_t r = 0; r < sc.network.regions.size(); ++r)
    {
        hilosim::RegionSpec region;
        region.name = sc.network.regions[r].name;
        region.wan = sc.network.regions[r].wan;
        for (const ResolvedWorker& w : sc.workers)
        {
            if (w.region_index == static_cast<int32_t>(r))
            {
                region.worker_links.push_back(w.link);
            }
        }
        spec.regions.push_back(region);
    }
    return spec;
}

models::WorkloadConfig
ToWorkloadConfig(const ResolvedScenario& sc, uint32_t rank)
{
    const ResolvedWorkload& w = sc.workload;
    models::WorkloadConfig c;
    c.kind = w.kind == WorkloadKind::kGrpo ? "grpo" : "distill";
    c.seed = sc.seed;
    c.vocab = w.model.vocab;
    c.d_model = w.model.d_model;
    c.layers = w.model.layers;
    c.heads = w.model.heads;
    c.context = w.model.context;
    c.lora_rank = rank;
    c.lora_alpha = w.lora_alpha;
    c.prompts_per_worker = w.prompts_per_worker;
    c.group_size = w.group_size;
    c.gen_tokens = w.gen_tokens;
    c.temperature = w.temperature;
    if (!w.teacher_kind.empty())
    {
        c.teacher_kind = w.teacher_kind;
    }
    if (w.teacher_delta_rank > 0)
    {
        c.teacher_delta_rank = w.teacher_delta_rank;
        c.teacher_delta_decay = w.teacher_decay;
    }
    if (w.kind == WorkloadKind::kGrpo)
    {
        c.task_prompt_stride = w.grpo_prompt_stride;
        if (w.grpo_modulus > 0)
        {
            c.task_modulus = w.grpo_modulus;
        }
        if (w.grpo_task == "randomwalks")
        {
            c.grpo_task = "randomwalks";
            c.prompt_tokens = 1; // the start node
        }
        c.entropy_coef = w.grpo_entropy_coef;
    }
    c.eval_prompts = w.eval_prompts;
    c.grad_clip_norm = w.clip_norm;
    c.micro_batch_sequences = sc.learner_micro_batch_sequences;
    return c;
}

hilo::StatusOr<std::shared_ptr<ArmContext>>
BuildArmContext(const ResolvedScenario& sc, const ResolvedArm& arm)
{
    auto context = std::make_shared<ArmContext>();
    context->arm = arm.name;
    const models::WorkloadConfig wc = ToWorkloadConfig(sc, arm.training_rank);
    auto workload = models::Workload::Create(wc);
    if (!workload.ok())
    {
        return workload.status();
    }
    context->workload = std::move(*workload);
    context->sync = arm.sync;
    context->optimizer = sc.optimizer;
    context->initial = context->workload->InitialAdapter();
    context->steps = sc.workload.steps;
    context->eval_every = sc.workload.eval_every;
    context->max_staleness = sc.max_staleness;
    context->round_timeout_s = sc.round_timeout.GetSeconds();
    context->workers = static_cast<uint32_t>(sc.workers.size());
    context->training_rank = arm.training_rank;
    context->modelled_prompt_tokens = sc.workload.modelled_prompt_tokens;
    context->modelled_gen_tokens = sc.workload.modelled_gen_tokens;

    // The modelled side.
    if (sc.llm_profile.empty())
    {
        context->llm = TinyProfile(wc);
        context->compute.targets = wc.lora_targets;
    }
    else
    {
        auto llm = models::FindLlm(sc.llm_profile);
        if (!llm.ok())
        {
            return llm.status();
        }
        context->llm = *llm;
        if (sc.llm_lora_experts)
        {
            context->compute.targets.push_back("experts");
        }
    }
    auto modelled = context->llm.LoraLayout(arm.training_rank, context->compute.targets);
    if (!modelled.ok())
    {
        return modelled.status();
    }
    context->modelled_layout = *modelled;
    context->modelled_numel = modelled->numel();
    context->modelled_adapter_bytes = modelled->adapter_bytes();
    const int64_t replicated =
        context->llm.LoraReplicatedParams(arm.training_rank, context->compute.targets).value();
    context->modelled_shards = models::AdapterShards(context->modelled_numel, replicated);
    context->modelled_byte_shards =
        models::AdapterShards(context->modelled_adapter_bytes, 2 * replicated);
    const int64_t real_numel = context->workload->layout().numel();
    context->adapter_scale = sc.llm_profile.empty() ? 1.0
                                                    : static_cast<double>(context->modelled_numel) /
                                                          static_cast<double>(real_numel);
    context->update_wire_scale = context->adapter_scale;
    // Without llm_profile the modelled adapter is the learner's own.
    const int64_t budget_adapter_bytes = sc.llm_profile.empty()
                                             ? context->workload->layout().adapter_bytes()
                                             : context->modelled_adapter_bytes;
    context->modelled_budget_bytes =
        arm.sync.budget.unlimited() ? 0 : arm.sync.budget.ResolveBytes(budget_adapter_bytes);
    const bool directions =
        sc.budget_transfer == BudgetTransfer::kDirections && !sc.llm_profile.empty() &&
        !arm.sync.budget.unlimited() &&
        hilo::CompressorBudgetUnit(arm.sync.compressor) == hilo::BudgetUnit::kDirections;
    if (directions)
    {
        // The budget that buys the learner the modelled directions per matrix; its frames travel
        // scaled back by the same ratio (hilo/compress/budget-regime.h). Floor: never over.
        const double ratio =
            hilo::DirectionsTransferRatio(context->workload->layout(), context->modelled_layout,
                                          arm.sync.compressor, arm.sync.compressor_options);
        const double real = std::floor(static_cast<double>(context->modelled_budget_bytes) * ratio);
        context->sync.budget =
            hilo::Budget::Bytes(std::max<int64_t>(1, static_cast<int64_t>(real)));
        context->update_wire_scale = 1.0 / ratio;
    }
    else if (arm.budget_wire_bytes > 0 && !sc.llm_profile.empty())
    {
        // A size is wire bytes of the modelled adapter's payload; the real payload travels
        // scaled by adapter_scale, so the real compressor gets size / scale (floor: never over).
        const double real =
            std::floor(static_cast<double>(arm.budget_wire_bytes) / context->adapter_scale);
        context->sync.budget =
            hilo::Budget::Bytes(std::max<int64_t>(1, static_cast<int64_t>(real)));
    }
    auto learner_gpu = Node(sc.learner_gpu, sc.learner_gpus, sc.learner_parallel);
    if (!learner_gpu.ok())
    {
        return learner_gpu.status();
    }
    context->learner_gpu = *learner_gpu;
    for (uint32_t index : TopologyWorkerOrder(sc))
    {
        const ResolvedWorker& w = sc.workers[index];
        auto gpu = Node(w.gpu, w.gpus, w.parallel);
        if (!gpu.ok())
        {
            return gpu.status();
        }
        context->worker_gpus.push_back(*gpu);
    }
    // A budget below the smallest payload, or options the compressor rejects for this adapter.
    auto probe = hilo::NewSyncStrategy(context->sync, context->workload->layout(), sc.optimizer);
    if (!probe.ok())
    {
        if (probe.status().code() == hilo::StatusCode::kBudgetTooSmall &&
            context->adapter_scale != 1.0)
        {
            std::ostringstream scale;
            scale << "; with llm_profile " << sc.llm_profile << " every real byte stands for "
                  << context->adapter_scale << " wire bytes";
            return hilo::Status::BudgetTooSmall(probe.status().message() + scale.str());
        }
        return probe.status();
    }
    // The modelled model and adapter must fit every GPU: the learner's for training, the
    // workers' for rollouts (the validator checks the same with the same function).
    const int64_t context_tokens =
        static_cast<int64_t>(sc.workload.modelled_prompt_tokens + sc.workload.modelled_gen_tokens);
    HILO_RETURN_IF_ERROR(models::CheckNodeMemory(context->learner_gpu, context->llm,
                                                 arm.training_rank, context_tokens,
                                                 models::NodeWork::kTrain, context->compute));
    for (const models::GpuNode& gpu : context->worker_gpus)
    {
        HILO_RETURN_IF_ERROR(models::CheckNodeMemory(gpu, context->llm, arm.training_rank,
                                                     context_tokens, models::NodeWork::kRollout,
                                                     context->compute));
    }
    return context;
}

hilo::BudgetPurchase
ArmBudgetPurchase(const ResolvedScenario& sc, const ResolvedArm& arm, const ArmContext& context)
{
    hilo::BudgetPurchase p;
    p.unit = hilo::CompressorBudgetUnit(arm.sync.compressor);
    if (context.sync.budget.unlimited())
        return p;
    const hilo::AdapterLayout& learner = context.workload->layout();
    p.modelled = hilo::BudgetBuys(context.modelled_budget_bytes,
                                  sc.llm_profile.empty() ? learner : context.modelled_layout,
                                  arm.sync.compressor, arm.sync.compressor_options);
    p.learner = hilo::BudgetBuys(context.sync.budget.ResolveBytes(learner.adapter_bytes()), learner,
                                 arm.sync.compressor, arm.sync.compressor_options);
    return p;
}

ArmResult
NewArmResult(const ResolvedScenario& sc, const ResolvedArm& arm, const ArmContext& context)
{
    ArmResult result;
    result.name = arm.name;
    result.strategy = hilo::SyncKindName(arm.sync.kind);
    result.compressor = arm.sync.compressor;
    result.compressor_params = hilo::FormatCompressorOptions(arm.sync.compressor_options);
    result.budget = arm.budget_text;
    const int64_t real_adapter_bytes = context.workload->layout().adapter_bytes();
    result.budget_fraction =
        context.sync.budget.unlimited()
            ? 0.0
            : static_cast<double>(context.sync.budget.ResolveBytes(real_adapter_bytes)) /
                  static_cast<double>(real_adapter_bytes);
    result.budget_transfer =
        sc.budget_transfer == BudgetTransfer::kDirections ? "directions" : "fraction";
    result.purchase = ArmBudgetPurchase(sc, arm, context);
    result.training_rank = arm.training_rank;
    result.quality_metric = context.workload->QualityMetric();
    result.higher_is_better = context.workload->HigherIsBetter();
    result.real_numel = context.workload->layout().numel();
    result.real_adapter_bytes = real_adapter_bytes;
    result.adapter_bytes =
        sc.llm_profile.empty() ? real_adapter_bytes : context.modelled_adapter_bytes;
    result.adapter_scale = context.adapter_scale;
    for (const hilo::MatrixSpec& m : context.workload->layout().matrices())
        result.matrix_names.push_back(m.name);
    for (uint32_t index : TopologyWorkerOrder(sc))
    {
        result.worker_gpu.push_back(sc.workers[index].gpu);
        result.worker_region.push_back(sc.workers[index].region);
    }
    return result;
}

} // namespace hilosim
