#include "sim/run/arm-runner.h"

#include "sim/drivers/ns3/learner-app.h"
#include "sim/drivers/ns3/relay-app.h"
#include "sim/drivers/ns3/worker-app.h"
#include "sim/net/link-monitor.h"
#include "sim/net/link-pcap.h"
#include "sim/net/flow/flow-transport-helper.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"
#include "sim/run/arm-context-builder.h"

#include "ns3/boolean.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <chrono>
#include <filesystem>

namespace hilosim
{
namespace
{

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
    if (options.batched_rollouts)
    {
        context->rollout_cache = std::make_shared<RolloutCache>(context->workers);
    }
    ArmResult result = NewArmResult(sc, arm, *context);

    // The network.
    ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(sc.seed % 0xfffffffeu) + 1);
    ns3::RngSeedManager::SetRun(1);
    hilosim::TopologySpec tspec = ScenarioTopologySpec(sc);
    auto topology = hilosim::TopologyBuilder::Build(tspec);
    if (!topology.ok())
    {
        ns3::Simulator::Destroy();
        return fail(topology.status());
    }
    LinkMonitor monitor(ns3::Seconds(kLinkPeakWindowS));
    for (const InstalledLink& link : topology->GetLinks())
    {
        monitor.Watch(link);
    }
    if (!options.pcap_dir.empty())
    {
        hilo::Status pcap = EnableLinkPcap(
            topology->GetLinks(), (std::filesystem::path(options.pcap_dir) / arm.name).string(),
            options.pcap_snaplen);
        if (!pcap.ok())
        {
            ns3::Simulator::Destroy();
            return fail(pcap);
        }
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
            relay->SetAttribute("StoreAndForward",
                                ns3::BooleanValue(sc.network.relay_store_and_forward));
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
    if (ns3::Simulator::Now().IsStrictlyPositive())
    {
        result.links = monitor.Usage(ns3::Simulator::Now());
    }

    result.failure = learner->failure();
    if (learner->failure().ok())
    {
        const uint64_t final_version = learner->publisher().version();
        const uint64_t final_hash = learner->publisher().replica_view().adapter.Hash();
        for (const auto& w : workers)
        {
            if (w->failure().ok() && w->replica().version() == final_version &&
                w->replica().state().adapter.Hash() == final_hash)
            {
                ++result.workers_at_final_hash;
            }
        }
    }
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
