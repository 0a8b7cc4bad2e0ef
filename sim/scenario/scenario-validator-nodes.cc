// The nodes: llm_profile (with budget_transfer, how its budgets reach the learner), the learner,
// the worker groups (placement, GPUs, links) and whether the modelled LLM fits their GPUs.
#include "sim/scenario/scenario-checker.h"

#include "models/compute-model.h"
#include "models/gpu-node.h"

#include <algorithm>

namespace hilosim
{
namespace scenario_check
{

namespace
{

// A learner's round above this many sequences in one gradient pass gets a warning: at 1,024
// quickstart workers (4,096 sequences a round) one pass took 4.2x the run's CPU and 6x its peak
// memory of passes of 256 (results/sim/cost-table.md, "One gradient pass or passes of 256").
constexpr uint64_t kOnePassWarnSequences = 1024;
const std::vector<std::string> kBudgetTransfers = {"fraction", "directions"};

} // namespace

void
Checker::CheckLlmProfile(const Node& root, const Scenario& s, ResolvedScenario* out)
{
    if (!s.llm_profile().empty())
    {
        Choice(root, "llm_profile", s.llm_profile(), m_catalog.llms, "LLM profile");
    }
    out->llm_profile = s.llm_profile();
    const Workload& w = s.workload();
    if ((w.modelled_prompt_tokens() > 0 || w.modelled_gen_tokens() > 0) && s.llm_profile().empty())
    {
        Error(root.Child("workload"),
              w.modelled_gen_tokens() > 0 ? "modelled_gen_tokens" : "modelled_prompt_tokens",
              "needs llm_profile: modelled token counts scale the modelled LLM's compute times");
    }
    if (!s.budget_transfer().empty() &&
        Choice(root, "budget_transfer", s.budget_transfer(), kBudgetTransfers, "budget transfer"))
    {
        out->budget_transfer = s.budget_transfer() == "directions" ? BudgetTransfer::kDirections
                                                                   : BudgetTransfer::kFraction;
        if (out->budget_transfer == BudgetTransfer::kDirections && s.llm_profile().empty())
            Error(root, "budget_transfer",
                  "\"directions\" needs llm_profile: without a modelled adapter the learner's "
                  "adapter is the one whose directions the budget buys");
    }
}

void
Checker::CheckLearner(const Node& root, const Scenario& s, ResolvedScenario* out)
{
    const Node learner = root.Child("learner");
    Choice(learner, "gpu", s.learner().gpu(), m_catalog.gpus, "GPU");
    out->learner_gpu = s.learner().gpu();
    if (IntIn(learner, "gpus", s.learner().gpus(), 1, 64))
        out->learner_gpus = static_cast<uint32_t>(s.learner().gpus());
    Choice(learner, "parallel", s.learner().parallel(), models::NodeParallelNames(),
           "parallel mode");
    out->learner_parallel = s.learner().parallel();
    const int32_t micro = s.learner().micro_batch_sequences();
    if (s.learner().has_micro_batch_sequences() &&
        IntIn(learner, "micro_batch_sequences", micro, 1, 1 << 20))
    {
        const uint32_t group = std::max<uint32_t>(1, out->workload.group_size);
        if (static_cast<uint32_t>(micro) % group != 0)
            Error(learner, "micro_batch_sequences",
                  "must be a multiple of workload.group_size (" + std::to_string(group) +
                      "): a gradient pass holds whole groups, got " + std::to_string(micro));
        else
            out->learner_micro_batch_sequences = static_cast<uint32_t>(micro);
    }
    out->llm_lora_experts = s.llm_lora_experts();
}

void
Checker::CheckWorkers(const Node& root, const Scenario& s, const ResolvedNetwork& net,
                      std::vector<ResolvedWorker>* out)
{
    if (s.workers_size() == 0)
    {
        Error(root, "workers",
              "no worker groups: add at least one workers { count: N gpu: \"...\" }");
        return;
    }
    const Network& network = s.network();
    const bool star = network.topology() == "star";
    std::vector<std::string> region_names;
    for (const Region& r : network.regions())
        region_names.push_back(r.name());
    int64_t total = 0;
    for (int g = 0; g < s.workers_size(); ++g)
    {
        const WorkerGroup& group = s.workers(g);
        const Node gn = root.Child("workers", g);
        bool ok = IntIn(gn, "count", group.count(), 1, 4096);
        ok &= Choice(gn, "gpu", group.gpu(), m_catalog.gpus, "GPU");
        ok &= IntIn(gn, "gpus", group.gpus(), 1, 64);
        ok &=
            Choice(gn, "parallel", group.parallel(), models::NodeParallelNames(), "parallel mode");
        int region_index = -1;
        if (star)
        {
            if (!group.region().empty())
            {
                Error(gn, "region",
                      "only topology \"regions\" or \"relay\" places workers in regions; this "
                      "scenario's topology is \"star\" (remove region)");
                ok = false;
            }
        }
        else if (Choice(gn, "region", group.region(), region_names, "region"))
        {
            region_index = static_cast<int>(
                std::find(region_names.begin(), region_names.end(), group.region()) -
                region_names.begin());
        }
        else
        {
            ok = false;
        }
        ok &= CheckLinkFields(gn.Child("link"), group.link());
        if (net.model == NetworkModel::kFlow)
            WarnFlowQueue(gn.Child("link"), group.link());
        Link merged = network.worker_link();
        if (region_index >= 0)
            merged.MergeFrom(network.regions(region_index).lan());
        merged.MergeFrom(group.link());
        if (merged.bandwidth().empty())
        {
            Error(gn, "link",
                  "no bandwidth for this group's links: set network.worker_link.bandwidth (or "
                  "this group's link.bandwidth" +
                      std::string(star ? "" : ", or its region's lan.bandwidth") + ")");
            ok = false;
        }
        if (!ok || group.count() <= 0)
            continue;
        const hilosim::LinkSpec link = ToLinkSpec(merged);
        for (int k = 0; k < group.count(); ++k)
        {
            ResolvedWorker w;
            w.index = static_cast<uint32_t>(total + k);
            w.group = static_cast<uint32_t>(g);
            w.gpu = group.gpu();
            w.gpus = static_cast<uint32_t>(group.gpus());
            w.parallel = group.parallel();
            w.region = group.region();
            w.region_index = region_index;
            w.link = link;
            out->push_back(std::move(w));
        }
        total += group.count();
    }
    if (total > 65536)
    {
        Error(root, "workers",
              "too many workers in all (" + std::to_string(total) + "); allowed: at most 65536");
    }
    // Regions nobody is placed in: a relay would still get its copy of every update over the
    // uplink (an error); a worker-less region of "regions" only adds an unused link (a warning).
    if (star)
        return;
    std::vector<int64_t> placed(region_names.size(), 0);
    for (const WorkerGroup& group : s.workers())
    {
        auto it = std::find(region_names.begin(), region_names.end(), group.region());
        if (it != region_names.end() && group.count() > 0)
            placed[it - region_names.begin()] += group.count();
    }
    for (size_t r = 0; r < placed.size(); ++r)
    {
        if (placed[r] > 0)
            continue;
        const Node rn = root.Child("network").Child("regions", static_cast<int>(r));
        const std::string what = "region \"" + region_names[r] + "\" has no workers";
        if (network.topology() == "relay")
        {
            Error(rn, "name",
                  what +
                      ": its relay would still receive every update over the uplink; place "
                      "a worker group in it (workers { region: \"" +
                      region_names[r] + "\" }) or remove the region");
        }
        else
        {
            Warn(rn, "name", what + "; its WAN link carries nothing");
        }
    }
}

void
Checker::WarnOfOneLargeGradientPass(const Node& learner, const Scenario& s,
                                    const ResolvedScenario& sc)
{
    if (s.learner().has_micro_batch_sequences())
        return;
    const uint64_t group = std::max<uint32_t>(1, sc.workload.group_size);
    const uint64_t sequences = sc.workers.size() * sc.workload.prompts_per_worker * group;
    if (sequences <= kOnePassWarnSequences)
        return;
    Warn(learner, "micro_batch_sequences",
         "unset, so the learner's gradient is one pass over a round's " +
             std::to_string(sequences) + " sequences (" + std::to_string(sc.workers.size()) +
             " workers x prompts_per_worker " + std::to_string(sc.workload.prompts_per_worker) +
             " x group_size " + std::to_string(group) +
             "), whose autograd graph grows with the fleet; set it (e.g. 256, a multiple of "
             "group_size) to bound the learner's memory and CPU: the same gradient up to float "
             "rounding");
}

void
Checker::CheckNodeMemory(const Node& root, const Scenario& s, const ResolvedScenario& sc)
{
    if (s.llm_lora_experts())
    {
        auto llm = models::FindLlm(s.llm_profile());
        if (!llm.ok() || !llm->moe())
        {
            Error(root, "llm_lora_experts",
                  "needs an llm_profile with experts (mixture of experts, `hilo-sim list "
                  "models`)" +
                      std::string(
                          s.llm_profile().empty() ? "" : "; \"" + s.llm_profile() + "\" has none"));
            return;
        }
    }
    // The modelled model must fit every GPU of every node (the tiny model always does).
    if (sc.llm_profile.empty() || sc.arms.empty())
        return;
    auto llm = models::FindLlm(sc.llm_profile);
    if (!llm.ok())
        return; // reported at llm_profile
    uint32_t rank = 0;
    for (const ResolvedArm& arm : sc.arms)
        rank = std::max(rank, arm.training_rank);
    models::ComputeOptions options;
    if (sc.llm_lora_experts)
        options.targets.push_back("experts");
    const int64_t context =
        static_cast<int64_t>(sc.workload.modelled_prompt_tokens + sc.workload.modelled_gen_tokens);
    auto check = [&](const Node& n, const std::string& gpu, int64_t gpus,
                     const std::string& parallel, models::NodeWork work)
    {
        auto profile = models::FindGpu(gpu);
        auto how = models::ParseNodeParallel(parallel);
        if (!profile.ok() || !how.ok() || gpus < 1)
            return; // reported at gpu, gpus or parallel
        const hilo::Status fits = models::CheckNodeMemory(models::GpuNode(*profile, gpus, *how),
                                                          *llm, rank, context, work, options);
        if (!fits.ok())
            Error(n, "gpus", fits.message());
    };
    check(root.Child("learner"), s.learner().gpu(), s.learner().gpus(), s.learner().parallel(),
          models::NodeWork::kTrain);
    for (int g = 0; g < s.workers_size(); ++g)
    {
        const WorkerGroup& group = s.workers(g);
        check(root.Child("workers", g), group.gpu(), group.gpus(), group.parallel(),
              models::NodeWork::kRollout);
    }
}

} // namespace scenario_check
} // namespace hilosim
