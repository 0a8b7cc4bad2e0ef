#include "sim/run/arm-runner.h"

#include "sim/apps/learner-app.h"
#include "sim/apps/relay-app.h"
#include "sim/apps/worker-app.h"
#include "sim/net/flow/flow-transport-helper.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"

#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <chrono>

namespace hilosim
{
namespace
{

// Topology worker order is region-major; returns the scenario worker index of each topology
// worker together with the spec.
hilosim::TopologySpec
ToTopologySpec(const ResolvedScenario& sc, std::vector<uint32_t>* order)
{
    hilosim::TopologySpec spec;
    if (sc.network.learner_uplink)
    {
        spec.learner_uplink = *sc.network.learner_uplink;
    }
    order->clear();
    if (sc.network.topology == TopologyKind::kStar)
    {
        spec.kind = hilosim::TopologyKind::kStar;
        for (const ResolvedWorker& w : sc.workers)
        {
            spec.worker_links.push_back(w.link);
            order->push_back(w.index);
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
                order->push_back(w.index);
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
    if (w.teacher_delta_rank > 0)
    {
        c.teacher_delta_rank = w.teacher_delta_rank;
        c.teacher_delta_decay = w.teacher_decay;
    }
    c.eval_prompts = w.eval_prompts;
    c.grad_clip_norm = w.clip_norm;
    return c;
}

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

class Recorder
{
  public:
    Recorder(ArmResult* result, uint32_t workers, uint64_t steps, ProgressFn progress,
             size_t arm_index)
      : m_result(result)
      , m_workers(workers)
      , m_steps(steps)
      , m_progress(std::move(progress))
      , m_arm(arm_index)
    {
    }

    void OnPublish(const PublishEvent& e)
    {
        m_result->publishes.push_back(e);
        if (m_progress)
        {
            m_progress(m_arm, e.version, m_steps);
        }
    }
    void OnEval(const EvalEvent& e) { m_result->evals.push_back(e); }
    void OnRollout(const RolloutEvent& e) { m_result->rollouts.push_back(e); }
    void OnApply(const ApplyEvent& e)
    {
        m_result->applies.push_back(e);
        if (e.version == m_steps && ++m_finished == m_workers)
        {
            m_result->sim_time_s = e.ready_s;
            ns3::Simulator::Stop();
        }
    }
    void OnHashMismatch(uint32_t, uint64_t) { ++m_result->hash_mismatches; }
    void OnResync(uint32_t, uint64_t) { ++m_result->resyncs; }

  private:
    ArmResult* m_result;
    uint32_t m_workers;
    uint64_t m_steps;
    ProgressFn m_progress;
    size_t m_arm;
    uint32_t m_finished{0};
};

// Everything an arm needs before the network exists. Worker GPUs are in scenario order.
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
    }
    auto modelled = context->llm.LoraLayout(arm.training_rank, context->compute.targets);
    if (!modelled.ok())
    {
        return modelled.status();
    }
    context->modelled_layout = *modelled;
    context->modelled_numel = modelled->numel();
    context->modelled_adapter_bytes = modelled->adapter_bytes();
    const int64_t real_numel = context->workload->layout().numel();
    context->adapter_scale = sc.llm_profile.empty() ? 1.0
                                                    : static_cast<double>(context->modelled_numel) /
                                                          static_cast<double>(real_numel);
    auto learner_gpu = models::FindGpu(sc.learner_gpu);
    if (!learner_gpu.ok())
    {
        return learner_gpu.status();
    }
    context->learner_gpu = *learner_gpu;
    for (const ResolvedWorker& w : sc.workers)
    {
        auto gpu = models::FindGpu(w.gpu);
        if (!gpu.ok())
        {
            return gpu.status();
        }
        context->worker_gpus.push_back(*gpu);
    }
    // A budget below the smallest payload, or options the compressor rejects for this adapter.
    auto probe = hilo::NewSyncStrategy(arm.sync, context->workload->layout(), sc.optimizer);
    if (!probe.ok())
    {
        return probe.status();
    }
    // The modelled model and adapter must fit the modelled GPUs.
    std::vector<models::GpuProfile> gpus = context->worker_gpus;
    gpus.push_back(context->learner_gpu);
    for (const models::GpuProfile& gpu : gpus)
    {
        auto fits =
            models::RolloutSeconds(gpu, context->llm, arm.training_rank, 1, 1, 1, context->compute);
        if (!fits.ok())
        {
            return hilo::Status(fits.status().code(), gpu.name + ": " + fits.status().message());
        }
    }
    return context;
}

} // namespace

hilo::Status
CheckArm(const ResolvedScenario& sc, size_t arm_index)
{
    const ResolvedArm& arm = sc.arms.at(arm_index);
    auto context = BuildArmContext(sc, arm);
    if (!context.ok())
    {
        return hilo::Status(context.status().code(),
                            "arm '" + arm.name + "': " + context.status().message());
    }
    return hilo::Status::Ok();
}

hilo::StatusOr<ArmResult>
RunArm(const ResolvedScenario& sc, size_t arm_index, const ProgressFn& progress,
       const ArmRunOptions& options)
{
    const ResolvedArm& arm = sc.arms.at(arm_index);
    auto fail = [&](const hilo::Status& s)
    { return hilo::Status(s.code(), "arm '" + arm.name + "': " + s.message()); };
    auto built = BuildArmContext(sc, arm);
    if (!built.ok())
    {
        return fail(built.status());
    }
    std::shared_ptr<ArmContext> context = std::move(*built);
    const int64_t real_numel = context->workload->layout().numel();

    ArmResult result;
    result.name = arm.name;
    result.strategy = hilo::SyncKindName(arm.sync.kind);
    result.compressor = arm.sync.compressor;
    result.compressor_params = hilo::FormatCompressorOptions(arm.sync.compressor_options);
    result.budget = arm.budget_text;
    const int64_t real_adapter_bytes = context->workload->layout().adapter_bytes();
    result.budget_fraction =
        arm.sync.budget.unlimited()
            ? 0.0
            : static_cast<double>(arm.sync.budget.ResolveBytes(real_adapter_bytes)) /
                  static_cast<double>(real_adapter_bytes);
    result.training_rank = arm.training_rank;
    result.quality_metric = context->workload->QualityMetric();
    result.higher_is_better = context->workload->HigherIsBetter();
    result.real_numel = real_numel;
    result.real_adapter_bytes = real_adapter_bytes;
    result.adapter_bytes =
        sc.llm_profile.empty() ? real_adapter_bytes : context->modelled_adapter_bytes;
    result.adapter_scale = context->adapter_scale;

    // The network.
    ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(sc.seed % 0xfffffffeu) + 1);
    ns3::RngSeedManager::SetRun(1);
    std::vector<uint32_t> order;
    hilosim::TopologySpec tspec = ToTopologySpec(sc, &order);
    auto topology = hilosim::TopologyBuilder::Build(tspec);
    if (!topology.ok())
    {
        ns3::Simulator::Destroy();
        return fail(topology.status());
    }
    // Topology order is region-major: reorder the per-worker GPUs to match.
    std::vector<models::GpuProfile> by_scenario = context->worker_gpus;
    context->worker_gpus.clear();
    for (uint32_t t = 0; t < order.size(); ++t)
    {
        const ResolvedWorker& w = sc.workers[order[t]];
        context->worker_gpus.push_back(by_scenario[order[t]]);
        result.worker_gpu.push_back(w.gpu);
        result.worker_region.push_back(w.region);
    }
    hilosim::TransportConfig tc;
    tc.tcp_variant = sc.network.tcp_type;
    tc.buffers.fixed_bytes = static_cast<uint32_t>(sc.network.tcp_buffer_bytes);
    std::unique_ptr<hilosim::TransportInstaller> installer;
    if (sc.network.model == NetworkModel::kFlow)
        installer = std::make_unique<hilosim::FlowTransportHelper>(tc);
    else
        installer = std::make_unique<hilosim::TransportHelper>(tc);
    hilosim::TransportEndpoints endpoints = installer->Install(*topology);
    const hilosim::WindowReport windows = hilosim::ReportWindowLimits(endpoints);
    result.network_model = NetworkModelName(sc.network.model);
    result.connections = windows.connections;
    result.window_limited_connections = windows.window_limited;
    result.window_limited_example = windows.example;

    Recorder recorder(&result, context->workers, context->steps, progress, arm_index);
    auto learner = ns3::CreateObject<LearnerApp>();
    std::vector<uint32_t> update_peers;
    if (topology->HasRelays())
    {
        for (uint32_t r = 0; r < topology->GetRelayCount(); ++r)
        {
            update_peers.push_back(hilosim::RelayPeerId(r));
            auto relay = ns3::CreateObject<RelayApp>();
            std::vector<uint32_t> region_workers;
            for (uint32_t w : topology->GetRegionWorkers(r))
            {
                region_workers.push_back(hilosim::WorkerPeerId(w));
            }
            relay->Setup(endpoints.GetRelay(r), region_workers);
            topology->GetRelay(r)->AddApplication(relay);
        }
    }
    else
    {
        for (uint32_t w = 0; w < context->workers; ++w)
        {
            update_peers.push_back(hilosim::WorkerPeerId(w));
        }
    }
    learner->Setup(context, endpoints.GetLearner(), update_peers);
    topology->GetLearner()->AddApplication(learner);
    learner->TraceConnectWithoutContext("UpdatePublished",
                                        ns3::MakeCallback(&Recorder::OnPublish, &recorder));
    learner->TraceConnectWithoutContext("Evaluated",
                                        ns3::MakeCallback(&Recorder::OnEval, &recorder));

    std::vector<ns3::Ptr<WorkerApp>> workers;
    for (uint32_t w = 0; w < context->workers; ++w)
    {
        auto app = ns3::CreateObject<WorkerApp>();
        if (w == 0 && options.corrupt_version_at_worker0 != 0)
        {
            app->SetAttribute("CorruptVersion",
                              ns3::UintegerValue(options.corrupt_version_at_worker0));
        }
        app->Setup(context, endpoints.GetWorker(w), w, hilosim::kLearnerPeerId);
        topology->GetWorker(w)->AddApplication(app);
        app->TraceConnectWithoutContext("RolloutDone",
                                        ns3::MakeCallback(&Recorder::OnRollout, &recorder));
        app->TraceConnectWithoutContext("UpdateApplied",
                                        ns3::MakeCallback(&Recorder::OnApply, &recorder));
        app->TraceConnectWithoutContext("HashMismatch",
                                        ns3::MakeCallback(&Recorder::OnHashMismatch, &recorder));
        app->TraceConnectWithoutContext("Resync",
                                        ns3::MakeCallback(&Recorder::OnResync, &recorder));
        workers.push_back(app);
    }

    const auto start = std::chrono::steady_clock::now();
    ns3::Simulator::Run();
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    result.failure = learner->failure();
    for (const auto& w : workers)
    {
        if (result.failure.ok() && !w->failure().ok())
        {
            result.failure = w->failure();
        }
    }
    if (result.failure.ok() && result.publishes.size() != context->steps)
    {
        result.failure = hilo::Status::Internal("simulation ended after " +
                                                std::to_string(result.publishes.size()) + " of " +
                                                std::to_string(context->steps) + " versions");
    }
    workers.clear();
    learner = nullptr;
    ns3::Simulator::Destroy();
    return result;
}

} // namespace hilosim
