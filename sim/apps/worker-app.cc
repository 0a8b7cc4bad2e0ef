#include "sim/apps/worker-app.h"

#include "hilo/wire/messages.h"
#include "sim/apps/app-messages.h"

#include "models/cpu-timer.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloWorkerApp");
NS_OBJECT_ENSURE_REGISTERED(WorkerApp);

ns3::TypeId
WorkerApp::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::WorkerApp")
            .SetParent<ns3::Application>()
            .SetGroupName("HiLo")
            .AddConstructor<WorkerApp>()
            .AddAttribute("CorruptVersion",
                          "Fault injection: flip one byte of the update to this version when it "
                          "arrives (0: never), to exercise rejection and resync.",
                          ns3::UintegerValue(0),
                          ns3::MakeUintegerAccessor(&WorkerApp::m_corruptVersion),
                          ns3::MakeUintegerChecker<uint64_t>())
            .AddTraceSource("RolloutDone", "A rollout finished and its trajectories were sent.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_rolloutTrace),
                            "hilosim::WorkerApp::RolloutTracedCallback")
            .AddTraceSource("UpdateReceived",
                            "A whole update message arrived (worker, position in arrival order).",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_updateReceivedTrace),
                            "hilosim::WorkerApp::VersionTracedCallback")
            .AddTraceSource("UpdateApplied", "The worker holds a new version, ready to sample.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_appliedTrace),
                            "hilosim::WorkerApp::ApplyTracedCallback")
            .AddTraceSource("HashMismatch",
                            "An update was rejected because the replayed state's hash differed.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_hashMismatchTrace),
                            "hilosim::WorkerApp::VersionTracedCallback")
            .AddTraceSource("Resync",
                            "The worker asked the learner for a catch-up from this version.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_resyncTrace),
                            "hilosim::WorkerApp::VersionTracedCallback");
    return tid;
}

WorkerApp::WorkerApp() = default;
WorkerApp::~WorkerApp() = default;

void
WorkerApp::Setup(std::shared_ptr<ArmContext> context, ns3::Ptr<hilosim::MessageTransport> endpoint,
                 uint32_t worker, uint32_t learner_peer)
{
    NS_ABORT_MSG_IF(m_context, "WorkerApp::Setup called twice");
    m_context = std::move(context);
    m_endpoint = endpoint;
    m_worker = worker;
    m_learnerPeer = learner_peer;
}

void
WorkerApp::DoDispose()
{
    m_endpoint = nullptr;
    m_replica.reset();
    m_context.reset();
    ns3::Application::DoDispose();
}

void
WorkerApp::StartApplication()
{
    NS_ABORT_MSG_IF(!m_context || !m_endpoint, "WorkerApp started without Setup");
    auto replica = hilo::Replica::Create(m_context->sync, m_context->workload->layout(),
                                         m_context->optimizer, m_context->initial);
    if (!replica.ok())
    {
        Fail(replica.status());
        return;
    }
    m_replica = std::move(*replica);
    m_endpoint->SetReceiveCallback(ns3::MakeCallback(&WorkerApp::HandleMessage, this));
    MaybeStartRound();
}

void
WorkerApp::StopApplication()
{
}

void
WorkerApp::Fail(const hilo::Status& status)
{
    if (m_failure.ok())
    {
        m_failure = status;
        NS_LOG_ERROR("worker " << m_worker << ": " << status.ToString());
        ns3::Simulator::Stop();
    }
}

void
WorkerApp::MaybeStartRound()
{
    if (m_rollingOut || m_resyncing || !m_failure.ok() || m_nextRound > m_context->steps)
    {
        return;
    }
    const uint64_t round = m_nextRound;
    const uint64_t version = m_replica->version();
    if (version + 1 + m_context->max_staleness < round)
    {
        return; // too stale: wait for updates
    }
    m_rollingOut = true;
    ++m_nextRound;

    models::RolloutInfo info;
    const models::CpuTimer timer;
    auto batch =
        m_context->workload->Rollout(m_replica->state().adapter.theta, round, m_worker, &info);
    if (!batch.ok())
    {
        Fail(batch.status());
        return;
    }
    RolloutEvent e;
    e.worker = m_worker;
    e.round = round;
    e.behaviour_version = version;
    e.started_s = ns3::Simulator::Now().GetSeconds();
    e.cpu_s = timer.Seconds();

    int64_t prompt = info.sequences > 0 ? info.prompt_tokens / info.sequences : 0;
    int64_t gen = info.sequences > 0 ? info.generated_tokens / info.sequences : 0;
    double token_scale = 1.0;
    if (m_context->modelled_gen_tokens > 0 && gen > 0)
    {
        token_scale = static_cast<double>(m_context->modelled_prompt_tokens +
                                          m_context->modelled_gen_tokens) /
                      static_cast<double>(prompt + gen);
        prompt = m_context->modelled_prompt_tokens;
        gen = m_context->modelled_gen_tokens;
    }
    auto rollout_s = models::RolloutSeconds(
        m_context->worker_gpus[m_worker], m_context->llm, m_context->training_rank, info.sequences,
        std::max<int64_t>(1, prompt), std::max<int64_t>(1, gen), m_context->compute);
    if (!rollout_s.ok())
    {
        Fail(rollout_s.status());
        return;
    }
    auto bytes = std::make_shared<const std::string>(EncodeTrajectories(round, version, *batch));
    e.real_bytes = bytes->size();
    e.wire_bytes = ArmContext::WireBytes(bytes->size(), token_scale);
    ns3::Simulator::Schedule(ns3::Seconds(*rollout_s), &WorkerApp::FinishRollout, this, round,
                             version, bytes, e);
}

void
WorkerApp::FinishRollout(uint64_t round, uint64_t version, std::shared_ptr<const std::string> bytes,
                         RolloutEvent event)
{
    event.done_s = ns3::Simulator::Now().GetSeconds();
    hilo::Status s = m_endpoint->Send(m_learnerPeer, kTrajectories, bytes, event.wire_bytes);
    if (!s.ok())
    {
        Fail(s);
        return;
    }
    m_rolloutTrace(event);
    m_rollingOut = false;
    MaybeStartRound();
}

double
WorkerApp::ApplySeconds() const
{
    const models::GpuProfile& gpu = m_context->worker_gpus[m_worker];
    if (m_context->sync.kind == hilo::SyncKind::kFull)
    {
        return models::AdapterLoadSeconds(gpu, m_context->modelled_adapter_bytes,
                                          m_context->compute);
    }
    auto s =
        models::DecodeReplaySeconds(gpu, m_context->modelled_numel,
                                    hilo::SyncKindName(m_context->sync.kind), m_context->compute);
    return s.ok() ? *s : 0.0;
}

void
WorkerApp::HandleMessage(uint32_t peer, const hilosim::Message& message)
{
    const double now = ns3::Simulator::Now().GetSeconds();
    if (message.type == kUpdate)
    {
        m_updateReceivedTrace(m_worker, message.sequence + 1);
        std::string frame = message.payload;
        if (m_corruptVersion != 0 && !frame.empty())
        {
            auto parsed = hilo::DecodeUpdateFrame(frame);
            if (parsed.ok() && parsed->version() == m_corruptVersion)
            {
                frame[frame.size() / 2] = static_cast<char>(frame[frame.size() / 2] ^ 0x40);
            }
        }
        m_queue.push_back({std::move(frame), now});
        if (!m_applying && !m_resyncing)
        {
            ApplyNext();
        }
    }
    else if (message.type == kCatchUp)
    {
        HandleCatchUp(message.payload, now);
    }
    else
    {
        Fail(hilo::Status::Corruption("worker got message type " + std::to_string(message.type) +
                                      " from peer " + std::to_string(peer)));
    }
}

void
WorkerApp::ApplyNext()
{
    if (m_queue.empty() || m_resyncing)
    {
        m_applying = false;
        return;
    }
    m_applying = true;
    Queued q = std::move(m_queue.front());
    m_queue.pop_front();
    // Decode + replay (or load) occupies the GPU; the real apply happens when it is done.
    ns3::Simulator::Schedule(
        ns3::Seconds(ApplySeconds()),
        [this, q = std::move(q)]()
        {
            const models::CpuTimer timer;
            const uint64_t before = m_replica->version();
            hilo::Status s = m_replica->Apply(q.frame);
            ApplyEvent e;
            e.worker = m_worker;
            e.received_s = q.received_s;
            e.ready_s = ns3::Simulator::Now().GetSeconds();
            e.cpu_apply_s = timer.Seconds();
            if (s.ok())
            {
                e.version = m_replica->version();
                m_appliedTrace(e);
                MaybeStartRound();
                ApplyNext();
                return;
            }
            if (s.code() == hilo::StatusCode::kStale)
            {
                ApplyNext(); // already covered by a catch-up
                return;
            }
            if (s.code() == hilo::StatusCode::kHashMismatch)
            {
                m_hashMismatchTrace(m_worker, before + 1);
            }
            // Corrupt, gap or mismatch: ask for a catch-up; hold later updates until it arrives.
            m_resyncing = true;
            m_applying = false;
            m_resyncTrace(m_worker, before);
            hilo::Status sent = m_endpoint->Send(
                m_learnerPeer, kResyncRequest,
                std::make_shared<const std::string>(EncodeResyncRequest(before)), 8);
            if (!sent.ok())
            {
                Fail(sent);
            }
        });
}

void
WorkerApp::HandleCatchUp(const std::string& payload, double received_s)
{
    auto plan = DecodeCatchUp(payload);
    if (!plan.ok())
    {
        Fail(plan.status());
        return;
    }
    // Restoring a snapshot is a full load; replaying the ring costs one apply per update.
    double busy_s =
        plan->snapshot_frame.empty()
            ? 0.0
            : models::AdapterLoadSeconds(m_context->worker_gpus[m_worker],
                                         m_context->modelled_adapter_bytes, m_context->compute);
    busy_s += ApplySeconds() * static_cast<double>(plan->update_frames.size());
    ns3::Simulator::Schedule(
        ns3::Seconds(busy_s),
        [this, plan = std::move(*plan), received_s]()
        {
            const models::CpuTimer timer;
            const uint64_t before = m_replica->version();
            hilo::Status s = m_replica->CatchUp(plan.snapshot_frame, plan.update_frames);
            if (!s.ok())
            {
                Fail(hilo::Status(s.code(), "catch-up failed: " + s.message()));
                return;
            }
            const double cpu = timer.Seconds();
            // Report every version the catch-up delivered, all ready now.
            for (uint64_t v = before + 1; v <= m_replica->version(); ++v)
            {
                ApplyEvent e;
                e.worker = m_worker;
                e.version = v;
                e.received_s = received_s;
                e.ready_s = ns3::Simulator::Now().GetSeconds();
                e.via_resync = true;
                e.cpu_apply_s = cpu;
                m_appliedTrace(e);
            }
            m_resyncing = false;
            MaybeStartRound();
            ApplyNext();
        });
}

} // namespace hilosim
