#include "sim/drivers/ns3/arm-runner.h"

#include "sim/drivers/ns3/fault-injector.h"
#include "sim/drivers/ns3/learner-app.h"
#include "sim/drivers/ns3/relay-app.h"
#include "sim/drivers/ns3/worker-app.h"
#include "sim/net/flow/flow-transport-helper.h"
#include "sim/net/link-monitor.h"
#include "sim/net/link-pcap.h"
#include "sim/net/tcp-trace-sampler.h"
#include "sim/net/topology-builder.h"
#include "sim/net/transport-helper.h"
#include "sim/run/arm-context-builder.h"

#include "ns3/boolean.h"
#include "ns3/global-value.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <unordered_map>

namespace hilosim
{
namespace
{

class Recorder
{
  public:
    Recorder(ArmResult* result, uint32_t workers, uint64_t steps, ProgressFn progress,
             size_t arm_index, const std::set<uint32_t>& late)
      : m_result(result)
      , m_steps(steps)
      , m_progress(std::move(progress))
      , m_arm(arm_index)
      , m_state(workers, State::kUp)
      , m_version(workers, 0)
    {
        for (uint32_t w : late)
        {
            m_state.at(w) = State::kAbsent;
        }
    }

    void SetInjector(FaultInjector* injector) { m_injector = injector; }

    void OnPublish(const PublishEvent& e)
    {
        m_result->publishes.push_back(e);
        if (m_progress)
        {
            m_progress(m_arm, e.version, m_steps);
        }
        CheckDone();
    }
    void OnEval(const EvalEvent& e) { m_result->evals.push_back(e); }
    void OnRollout(const RolloutEvent& e) { m_result->rollouts.push_back(e); }
    void OnApply(const ApplyEvent& e)
    {
        m_result->applies.push_back(e);
        if (e.hash_ok)
        {
            m_version.at(e.worker) = e.version;
            CheckDone();
        }
    }
    void OnHashMismatch(uint32_t worker, uint64_t)
    {
        ++m_result->hash_mismatches;
        if (m_injector)
        {
            m_injector->OnHashMismatch(worker, ns3::Simulator::Now().GetSeconds());
        }
    }
    void OnResync(uint32_t, uint64_t) { ++m_result->resyncs; }
    void OnPeerClosed(uint32_t) { ++m_result->connections_closed; }
    void OnCatchUp(const CatchUpEvent& e) { m_result->catch_ups.push_back(e); }

    void WorkerDown(uint32_t worker, bool restarts)
    {
        m_state.at(worker) = restarts ? State::kDown : State::kDead;
        m_version.at(worker) = 0;
        CheckDone();
    }
    void WorkerUp(uint32_t worker)
    {
        m_state.at(worker) = State::kUp;
        m_version.at(worker) = 0;
    }

    /// The learner published every version and every worker that is (or will be) running holds
    /// the last one.
    bool Complete() const
    {
        if (m_result->publishes.size() != m_steps)
        {
            return false;
        }
        for (size_t w = 0; w < m_state.size(); ++w)
        {
            if (m_state[w] != State::kDead && (m_state[w] != State::kUp || m_version[w] != m_steps))
            {
                return false;
            }
        }
        return true;
    }
    bool Alive(uint32_t worker) const { return m_state.at(worker) == State::kUp; }
    uint64_t Version(uint32_t worker) const { return m_version.at(worker); }

    /// "worker 0 at version 3, worker 2 (down, restarting) ..." for the workers behind.
    std::string Behind() const
    {
        std::string out;
        for (size_t w = 0; w < m_state.size(); ++w)
        {
            std::string what;
            if (m_state[w] == State::kUp && m_version[w] != m_steps)
                what = "at version " + std::to_string(m_version[w]);
            else if (m_state[w] == State::kAbsent)
                what = "not joined yet";
            else if (m_state[w] == State::kDown)
                what = "crashed, not restarted yet";
            if (!what.empty())
                out += (out.empty() ? "" : ", ") + std::string("worker ") + std::to_string(w) +
                       " " + what;
        }
        return out;
    }

  private:
    enum class State
    {
        kUp,     // running
        kAbsent, // joins later
        kDown,   // crashed, restarts later
        kDead,   // crashed for good
    };

    void CheckDone()
    {
        if (!m_done && Complete())
        {
            m_done = true;
            m_result->sim_time_s = ns3::Simulator::Now().GetSeconds();
            ns3::Simulator::Stop();
        }
    }

    ArmResult* m_result;
    uint64_t m_steps;
    ProgressFn m_progress;
    size_t m_arm;
    std::vector<State> m_state;      // by worker
    std::vector<uint64_t> m_version; // by worker: the version its current process holds
    FaultInjector* m_injector{nullptr};
    bool m_done{false};
};

/// ns-3 computes and checks IPv4 and TCP checksums while alive (a process-wide setting, so it is
/// put back when the arm ends).
class ChecksumsOn
{
  public:
    explicit ChecksumsOn(bool on)
      : m_on(on)
    {
        if (m_on)
            ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(true));
    }
    ~ChecksumsOn()
    {
        if (m_on)
            ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(false));
    }
    ChecksumsOn(const ChecksumsOn&) = delete;
    ChecksumsOn& operator=(const ChecksumsOn&) = delete;

  private:
    bool m_on;
};

/// A private temporary folder for the learner's checkpoint, removed with its contents.
class TempFolder
{
  public:
    TempFolder()
    {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "hilo-sim-learner-XXXXXX").string();
        if (mkdtemp(pattern.data()) != nullptr)
            m_path = pattern;
    }
    ~TempFolder()
    {
        std::error_code ec;
        if (!m_path.empty())
            std::filesystem::remove_all(m_path, ec);
    }
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;
    const std::string& path() const { return m_path; }

  private:
    std::string m_path;
};

std::string
FormatSeconds(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g s", s);
    return buf;
}

} // namespace

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
    if (options.shared_replicas)
    {
        auto group = hilo::ReplicaGroup::Create(context->sync, context->workload->layout(),
                                                context->optimizer, context->initial);
        if (!group.ok())
        {
            return fail(group.status());
        }
        context->replica_group = std::move(*group);
    }
    ArmResult result = NewArmResult(sc, arm, *context);

    // The network.
    ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(sc.seed % 0xfffffffeu) + 1);
    ns3::RngSeedManager::SetRun(1);
    hilosim::TopologySpec tspec = ScenarioTopologySpec(sc);
    auto topology = hilosim::TopologyBuilder::Build(tspec, /*ip_routing=*/sc.network.model !=
                                                               NetworkModel::kFlow);
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
    tc.slow_start_after_idle = sc.network.slow_start_after_idle;
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

    // Faults: scenario worker s is topology worker topology_index[s].
    const std::vector<uint32_t> order = TopologyWorkerOrder(sc);
    std::vector<uint32_t> topology_index(order.size());
    for (uint32_t t = 0; t < order.size(); ++t)
    {
        topology_index[order[t]] = t;
    }
    auto learner = ns3::CreateObject<LearnerApp>();
    std::vector<ns3::Ptr<WorkerApp>> workers;
    for (uint32_t w = 0; w < context->workers; ++w)
    {
        workers.push_back(ns3::CreateObject<WorkerApp>());
    }
    FaultInjector::Listener listener;
    Recorder* recorder_ptr = nullptr;
    listener.worker_down = [&recorder_ptr](uint32_t w, bool restarts)
    { recorder_ptr->WorkerDown(w, restarts); };
    listener.worker_up = [&recorder_ptr](uint32_t w) { recorder_ptr->WorkerUp(w); };
    FaultInjector injector(sc.faults, *topology, topology_index, learner, workers,
                           tspec.rng_stream_base + 1000000, &result.faults, listener);
    const std::set<uint32_t> late = injector.LateWorkers();
    const ChecksumsOn checksums(injector.NeedsChecksums());
    std::unique_ptr<TempFolder> checkpoints;
    LearnerRoleOptions learner_options;
    if (injector.NeedsCheckpoints())
    {
        checkpoints = std::make_unique<TempFolder>();
        if (checkpoints->path().empty())
        {
            ns3::Simulator::Destroy();
            return hilo::Status::Internal("arm '" + arm.name +
                                          "': cannot create a folder for the learner checkpoint");
        }
        learner_options.checkpoint_path = checkpoints->path() + "/learner.ckpt";
    }
    std::vector<uint32_t> initial_members;
    for (uint32_t w = 0; w < context->workers; ++w)
    {
        if (late.count(w) == 0)
        {
            initial_members.push_back(hilosim::WorkerPeerId(w));
        }
    }
    learner_options.members = initial_members;

    Recorder recorder(&result, context->workers, context->steps, progress, arm_index, late);
    recorder_ptr = &recorder;
    recorder.SetInjector(&injector);
    std::vector<uint32_t> update_peers;
    std::vector<ns3::Ptr<RelayApp>> relays;
    if (topology->HasRelays())
    {
        for (uint32_t r = 0; r < topology->GetRelayCount(); ++r)
        {
            update_peers.push_back(hilosim::RelayPeerId(r));
            auto relay = ns3::CreateObject<RelayApp>();
            relay->SetAttribute("StoreAndForward",
                                ns3::BooleanValue(sc.network.relay_store_and_forward));
            std::vector<uint32_t> region_workers;
            RelayRoleOptions relay_options;
            relay_options.learner_peer = hilosim::kLearnerPeerId;
            for (uint32_t w : topology->GetRegionWorkers(r))
            {
                region_workers.push_back(hilosim::WorkerPeerId(w));
                if (late.count(w) != 0)
                {
                    relay_options.late_workers.push_back(hilosim::WorkerPeerId(w));
                }
            }
            relay->Setup(endpoints.GetRelay(r), region_workers, relay_options);
            topology->GetRelay(r)->AddApplication(relay);
            relays.push_back(relay);
        }
    }
    else
    {
        for (uint32_t w = 0; w < context->workers; ++w)
        {
            update_peers.push_back(hilosim::WorkerPeerId(w));
        }
    }
    learner->Setup(context, endpoints.GetLearner(), update_peers, learner_options);
    topology->GetLearner()->AddApplication(learner);
    learner->TraceConnectWithoutContext("UpdatePublished",
                                        ns3::MakeCallback(&Recorder::OnPublish, &recorder));
    learner->TraceConnectWithoutContext("Evaluated",
                                        ns3::MakeCallback(&Recorder::OnEval, &recorder));

    for (uint32_t w = 0; w < context->workers; ++w)
    {
        const ns3::Ptr<WorkerApp>& app = workers[w];
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
        app->TraceConnectWithoutContext("CaughtUp",
                                        ns3::MakeCallback(&Recorder::OnCatchUp, &recorder));
        if (late.count(w) != 0)
        {
            app->DeferStart();
        }
    }
    injector.Schedule();
    std::vector<ns3::Ptr<MessageTransport>> all_endpoints = {endpoints.GetLearner()};
    for (uint32_t w = 0; w < endpoints.GetWorkerCount(); ++w)
        all_endpoints.push_back(endpoints.GetWorker(w));
    for (uint32_t r = 0; r < endpoints.GetRelayCount(); ++r)
        all_endpoints.push_back(endpoints.GetRelay(r));
    for (const auto& endpoint : all_endpoints)
    {
        endpoint->TraceConnectWithoutContext("PeerClosed",
                                             ns3::MakeCallback(&Recorder::OnPeerClosed, &recorder));
    }
    std::unique_ptr<TcpTraceSampler> tcp_trace;
    if (options.trace_tcp_period_s > 0)
    {
        tcp_trace =
            std::make_unique<TcpTraceSampler>(arm.name, ns3::Seconds(options.trace_tcp_period_s));
        for (const auto& endpoint : all_endpoints)
            tcp_trace->Watch(endpoint);
        tcp_trace->Start();
    }
    ns3::Simulator::Stop(sc.max_sim_time);

    const auto start = std::chrono::steady_clock::now();
    ns3::Simulator::Run();
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double ended_s = ns3::Simulator::Now().GetSeconds();
    result.segments_corrupted = injector.CorruptedSegments();
    injector.FinishRecords();
    if (tcp_trace)
    {
        result.tcp_trace = tcp_trace->TakeRows();
    }
    if (ns3::Simulator::Now().IsStrictlyPositive())
    {
        result.links = monitor.Usage(ns3::Simulator::Now());
    }

    result.failure = learner->failure();
    for (const auto& w : workers)
    {
        if (result.failure.ok() && !w->failure().ok())
        {
            result.failure = w->failure();
        }
    }
    for (const auto& r : relays)
    {
        if (result.failure.ok() && !r->failure().ok())
        {
            result.failure = r->failure();
        }
    }
    // Every worker's end state, and the promise: each live one at the learner's last version and
    // state hash.
    const uint64_t final_hash = result.publishes.empty() ? 0 : result.publishes.back().state_hash;
    std::string mismatched;
    const bool complete = recorder.Complete();
    // Replicas of a group share state objects; every replica is alive here, so one object (one
    // address) is one state, hashed once.
    std::unordered_map<const hilo::ReplicatedState*, uint64_t> hashes;
    for (uint32_t w = 0; w < workers.size(); ++w)
    {
        WorkerEnd end;
        end.alive = recorder.Alive(w) && workers[w]->IsUp();
        end.version = recorder.Version(w);
        if (end.alive && workers[w]->failure().ok())
        {
            end.version = workers[w]->replica().version();
            const hilo::ReplicatedState& state = workers[w]->replica().state();
            auto known = hashes.find(&state);
            if (known == hashes.end())
            {
                known = hashes.emplace(&state, state.adapter.Hash()).first;
            }
            end.state_hash = known->second;
            if (end.version == context->steps && end.state_hash == final_hash)
            {
                ++result.workers_at_final_hash;
            }
            if (complete && end.state_hash != final_hash)
            {
                char buf[96];
                std::snprintf(buf, sizeof(buf), "worker %u holds state hash %016llx", w,
                              static_cast<unsigned long long>(end.state_hash));
                mismatched += (mismatched.empty() ? "" : ", ") + std::string(buf);
            }
        }
        result.worker_end.push_back(end);
    }
    if (result.failure.ok() && !recorder.Complete())
    {
        const bool bounded = ended_s >= sc.max_sim_time.GetSeconds();
        std::string learner_state = "the learner published " +
                                    std::to_string(result.publishes.size()) + " of " +
                                    std::to_string(context->steps) + " versions";
        if (!learner->IsUp())
        {
            learner_state += " and is down";
        }
        else if (!learner->role().MissingBatches().empty())
        {
            learner_state += " and waits for the next round's batches of workers";
            for (uint32_t w : learner->role().MissingBatches())
            {
                learner_state += " " + std::to_string(w);
            }
        }
        result.failure = hilo::Status::Internal(
            std::string(bounded ? "stopped at mode.max_sim_time ("
                                : "the simulation ran out of "
                                  "events at (") +
            FormatSeconds(ended_s) + ") before every live worker held version " +
            std::to_string(context->steps) + ": " + recorder.Behind() + "; " + learner_state);
    }
    else if (result.failure.ok() && !mismatched.empty())
    {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(final_hash));
        result.failure = hilo::Status::HashMismatch("at the last version " + mismatched +
                                                    "; the learner's is " + buf);
    }
    workers.clear();
    relays.clear();
    learner = nullptr;
    ns3::Simulator::Destroy();
    return result;
}

} // namespace hilosim
