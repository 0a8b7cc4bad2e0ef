#include "sim/apps/learner-app.h"

#include "sim/apps/app-messages.h"
#include "sim/net/transport-helper.h"

#include "models/cpu-timer.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloLearnerApp");
NS_OBJECT_ENSURE_REGISTERED(LearnerApp);

ns3::TypeId
LearnerApp::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::LearnerApp")
            .SetParent<ns3::Application>()
            .SetGroupName("HiLo")
            .AddConstructor<LearnerApp>()
            .AddAttribute(
                "RingCapacity", "Update frames kept for catch-up of workers that fell behind.",
                ns3::UintegerValue(64), ns3::MakeUintegerAccessor(&LearnerApp::m_ringCapacity),
                ns3::MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("SnapshotInterval", "Versions between snapshots (<= RingCapacity).",
                          ns3::UintegerValue(32),
                          ns3::MakeUintegerAccessor(&LearnerApp::m_snapshotInterval),
                          ns3::MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("TrajectoriesReceived",
                            "A worker's trajectory batch for a round arrived.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_trajectoriesTrace),
                            "hilosim::LearnerApp::TrajectoriesTracedCallback")
            .AddTraceSource("UpdatePublished",
                            "A version was trained, encoded and handed to the transport.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_publishTrace),
                            "hilosim::LearnerApp::PublishTracedCallback")
            .AddTraceSource("Evaluated", "The replica view was evaluated on the held-out prompts.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_evalTrace),
                            "hilosim::LearnerApp::EvalTracedCallback")
            .AddTraceSource("ResyncServed",
                            "A worker asked to catch up and was sent snapshot + updates.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_resyncTrace),
                            "hilosim::LearnerApp::ResyncTracedCallback");
    return tid;
}

LearnerApp::LearnerApp() = default;
LearnerApp::~LearnerApp() = default;

void
LearnerApp::Setup(std::shared_ptr<ArmContext> context, ns3::Ptr<hilosim::MessageTransport> endpoint,
                  std::vector<uint32_t> update_peers)
{
    NS_ABORT_MSG_IF(m_context, "LearnerApp::Setup called twice");
    m_context = std::move(context);
    m_endpoint = endpoint;
    m_updatePeers = std::move(update_peers);
}

void
LearnerApp::DoDispose()
{
    m_endpoint = nullptr;
    m_publisher.reset();
    m_context.reset();
    ns3::Application::DoDispose();
}

void
LearnerApp::StartApplication()
{
    NS_ABORT_MSG_IF(!m_context || !m_endpoint, "LearnerApp started without Setup");
    auto publisher = hilo::Publisher::Create(
        m_context->sync, m_context->workload->layout(), m_context->optimizer, m_context->initial,
        hilo::PublisherOptions{m_ringCapacity, m_snapshotInterval});
    if (!publisher.ok())
    {
        Fail(publisher.status());
        return;
    }
    m_publisher = std::move(*publisher);
    m_endpoint->SetReceiveCallback(ns3::MakeCallback(&LearnerApp::HandleMessage, this));
    Evaluate(); // version 0
}

void
LearnerApp::StopApplication()
{
}

void
LearnerApp::Fail(const hilo::Status& status)
{
    if (m_failure.ok())
    {
        m_failure = status;
        NS_LOG_ERROR("learner: " << status.ToString());
        ns3::Simulator::Stop();
    }
}

void
LearnerApp::HandleMessage(uint32_t peer, const hilosim::Message& message)
{
    if (!m_failure.ok())
    {
        return;
    }
    if (message.type == kTrajectories)
    {
        auto env = DecodeTrajectories(message.payload);
        if (!env.ok())
        {
            Fail(env.status());
            return;
        }
        m_trajectoriesTrace(peer, env->round, message.wire_bytes);
        m_batches[env->round][peer] = std::move(env->batch);
        MaybeTrain();
    }
    else if (message.type == kResyncRequest)
    {
        auto from = DecodeResyncRequest(message.payload);
        if (!from.ok())
        {
            Fail(from.status());
            return;
        }
        auto plan = m_publisher->CatchUpFrom(*from);
        if (!plan.ok())
        {
            Fail(plan.status());
            return;
        }
        auto bytes = std::make_shared<const std::string>(EncodeCatchUp(*plan));
        m_resyncTrace(peer, *from);
        hilo::Status s = m_endpoint->Send(
            peer, kCatchUp, bytes, ArmContext::WireBytes(bytes->size(), m_context->adapter_scale));
        if (!s.ok())
        {
            Fail(s);
        }
    }
    else
    {
        Fail(hilo::Status::Corruption("learner got message type " + std::to_string(message.type) +
                                      " from peer " + std::to_string(peer)));
    }
}

void
LearnerApp::MaybeTrain()
{
    const uint64_t next = m_publisher->version() + 1;
    if (m_busy || next > m_context->steps)
    {
        return;
    }
    auto it = m_batches.find(next);
    if (it == m_batches.end() || it->second.size() < m_context->workers)
    {
        return;
    }
    m_busy = true;
    std::vector<std::string> batches;
    batches.reserve(it->second.size());
    for (auto& [worker, batch] : it->second) // worker order: deterministic
    {
        batches.push_back(std::move(batch));
    }
    m_batches.erase(it);

    models::GradientInfo info;
    const models::CpuTimer timer;
    auto grad =
        m_context->workload->Gradient(m_publisher->train_state().adapter.theta, batches, &info);
    if (!grad.ok())
    {
        Fail(grad.status());
        return;
    }
    m_grad = std::move(*grad);
    m_pending = PublishEvent();
    m_pending.version = next;
    m_pending.loss = info.loss;
    m_pending.grad_norm = info.grad_norm;
    m_pending.cpu_gradient_s = timer.Seconds();

    // Modelled tokens: each real generated token stands for gen_scale modelled ones.
    int64_t tokens = info.tokens;
    if (m_context->modelled_gen_tokens > 0)
    {
        const int64_t sequences = m_context->workers *
                                  m_context->workload->config().prompts_per_worker *
                                  m_context->workload->config().group_size;
        tokens = sequences * (m_context->modelled_prompt_tokens + m_context->modelled_gen_tokens);
    }
    auto train_s =
        models::TrainStepSeconds(m_context->learner_gpu, m_context->llm, m_context->training_rank,
                                 std::max<int64_t>(1, tokens), m_context->compute);
    if (!train_s.ok())
    {
        Fail(train_s.status());
        return;
    }
    m_pending.train_s = *train_s;
    ns3::Simulator::Schedule(ns3::Seconds(*train_s), &LearnerApp::FinishTraining, this);
}

void
LearnerApp::FinishTraining()
{
    m_pending.grad_ready_s = ns3::Simulator::Now().GetSeconds();
    const models::CpuTimer timer;
    auto update = m_publisher->Step(m_grad);
    if (!update.ok())
    {
        Fail(update.status());
        return;
    }
    m_pending.cpu_encode_s = timer.Seconds();
    m_pending.cpu_apply_s = update->times.apply_s;
    m_pending.payload_bytes = update->payload_bytes;
    m_pending.frame_bytes = static_cast<int64_t>(update->frame.size());
    m_pending.wire_bytes = ArmContext::WireBytes(update->frame.size(), m_context->adapter_scale);
    m_pending.kept_per_matrix = std::move(update->kept_per_matrix);
    const hilo::DriftStats drift = m_publisher->drift();
    m_pending.drift_rel_l2 = drift.rel_l2;
    m_pending.drift_max_abs = drift.max_abs;
    m_frame = std::make_shared<const std::string>(std::move(update->frame));

    // Encode on the learner GPU: the compressor's own cost (full: serialising the parameters is
    // a copy, modelled as an adapter load), plus the learner's decode + apply of the same payload.
    const std::string& compressor = m_context->sync.compressor;
    const bool full = m_context->sync.kind == hilo::SyncKind::kFull;
    int64_t rank = m_context->training_rank;
    if (!m_pending.kept_per_matrix.empty())
    {
        rank =
            *std::max_element(m_pending.kept_per_matrix.begin(), m_pending.kept_per_matrix.end());
    }
    double encode_s = 0;
    if (full)
    {
        encode_s = models::AdapterLoadSeconds(
            m_context->learner_gpu, m_context->modelled_adapter_bytes, m_context->compute);
    }
    else
    {
        auto enc =
            models::EncodeSeconds(m_context->learner_gpu, m_context->modelled_layout, compressor,
                                  std::max<int64_t>(1, rank), m_context->compute);
        auto dec = models::DecodeReplaySeconds(m_context->learner_gpu, m_context->modelled_numel,
                                               hilo::SyncKindName(m_context->sync.kind),
                                               m_context->compute);
        if (!enc.ok() || !dec.ok())
        {
            Fail(!enc.ok() ? enc.status() : dec.status());
            return;
        }
        encode_s = *enc + *dec;
    }
    m_pending.encode_s = encode_s;
    ns3::Simulator::Schedule(ns3::Seconds(encode_s), &LearnerApp::Broadcast, this);
}

void
LearnerApp::Broadcast()
{
    m_pending.published_s = ns3::Simulator::Now().GetSeconds();
    for (uint32_t peer : m_updatePeers)
    {
        hilo::Status s = m_endpoint->Send(peer, kUpdate, m_frame, m_pending.wire_bytes);
        if (!s.ok())
        {
            Fail(s);
            return;
        }
    }
    m_pending.copies = m_updatePeers.size();
    m_publishTrace(m_pending);
    const uint64_t v = m_pending.version;
    if (v == m_context->steps || (m_context->eval_every > 0 && v % m_context->eval_every == 0))
    {
        Evaluate();
    }
    m_busy = false;
    MaybeTrain();
}

void
LearnerApp::Evaluate()
{
    const models::CpuTimer timer;
    EvalEvent e;
    e.version = m_publisher->version();
    e.sim_time_s = ns3::Simulator::Now().GetSeconds();
    e.quality = m_context->workload->Evaluate(m_publisher->replica_view().adapter.theta);
    e.cpu_s = timer.Seconds();
    m_evalTrace(e);
}

} // namespace hilosim
