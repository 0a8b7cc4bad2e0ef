#include "sim/roles/learner-role.h"

#include "sim/roles/role-messages.h"
#include "sim/roles/wall-timer.h"

#include "models/cpu-timer.h"

#include <algorithm>

namespace hilosim
{

LearnerRole::LearnerRole(std::shared_ptr<ArmContext> context, RolePort* port,
                         std::vector<uint32_t> update_peers, hilo::PublisherOptions options,
                         LearnerHooks hooks)
  : m_context(std::move(context))
  , m_port(port)
  , m_updatePeers(std::move(update_peers))
  , m_options(options)
  , m_hooks(std::move(hooks))
{
}

LearnerRole::~LearnerRole() = default;

void
LearnerRole::Start()
{
    auto publisher = hilo::Publisher::Create(m_context->sync, m_context->workload->layout(),
                                             m_context->optimizer, m_context->initial, m_options);
    if (!publisher.ok())
    {
        Fail(publisher.status());
        return;
    }
    m_publisher = std::move(*publisher);
    Evaluate(); // version 0
}

void
LearnerRole::Fail(const hilo::Status& status)
{
    if (m_failure.ok())
    {
        m_failure = status;
        m_port->Stop();
    }
}

uint64_t
LearnerRole::NextRoundFor(uint32_t worker) const
{
    uint64_t round = m_publisher->version() + 1;
    for (auto it = m_batches.find(round); it != m_batches.end() && it->first == round;
         ++it, ++round)
    {
        if (it->second.count(worker) == 0)
        {
            break;
        }
    }
    return round;
}

void
LearnerRole::HandlePeerConnected(uint32_t peer)
{
    const bool again = !m_seen.insert(peer).second;
    if (!m_failure.ok() || !m_publisher || peer >= m_context->workers)
    {
        return; // relays need nothing: they hold no state
    }
    if (!again && m_publisher->version() == 0)
    {
        return; // a worker at the start of the run is where the learner is
    }
    // A worker that restarted, reconnected or joins late: tell it where the run is. One behind
    // the learner asks for a catch-up from the version it holds (kResyncRequest).
    auto bytes = std::make_shared<const std::string>(
        EncodeWelcome(NextRoundFor(peer), m_publisher->version()));
    m_done.erase(peer);
    hilo::Status s = m_port->Send(peer, kWelcome, bytes, bytes->size());
    if (!s.ok())
    {
        Fail(s);
    }
}

void
LearnerRole::HandlePeerClosed(uint32_t peer, bool error)
{
    // Nothing to undo: batches already received stay valid, and a worker that comes back is
    // welcomed again (HandlePeerConnected). A worker that never comes back stalls the round it
    // owes; bounding that wait is the driver's job.
}

hilo::Status
LearnerRole::HandleMessage(uint32_t peer, const RoleMessage& message)
{
    if (!m_failure.ok())
    {
        return hilo::Status::Ok();
    }
    if (message.type == kTrajectories)
    {
        auto env = DecodeTrajectories(message.payload);
        if (!env.ok())
        {
            return env.status();
        }
        if (env->round <= m_publisher->version())
        {
            // A round already trained without this batch: only a worker that restarted sends one
            // (its welcome tells it the round to roll out next).
            return hilo::Status::Ok();
        }
        if (m_hooks.trajectories)
        {
            m_hooks.trajectories(peer, env->round, message.wire_bytes);
        }
        m_batches[env->round][peer] = std::move(env->batch);
        MaybeTrain();
        return hilo::Status::Ok();
    }
    if (message.type == kResyncRequest)
    {
        auto from = DecodeResyncRequest(message.payload);
        if (!from.ok())
        {
            return from.status();
        }
        auto plan = m_publisher->CatchUpFrom(*from);
        if (!plan.ok())
        {
            Fail(plan.status());
            return hilo::Status::Ok();
        }
        auto bytes = std::make_shared<const std::string>(EncodeCatchUp(*plan));
        if (m_hooks.resync_served)
        {
            m_hooks.resync_served(peer, *from);
        }
        hilo::Status s = m_port->Send(
            peer, kCatchUp, bytes, ArmContext::WireBytes(bytes->size(), m_context->adapter_scale));
        if (!s.ok())
        {
            Fail(s);
        }
        return hilo::Status::Ok();
    }
    if (message.type == kDone)
    {
        auto done = DecodeDone(message.payload);
        if (!done.ok())
        {
            return done.status();
        }
        const bool match = done->version == m_publisher->version() &&
                           done->state_hash == m_publisher->replica_view().adapter.Hash();
        m_done[peer] = match;
        if (m_hooks.worker_done)
        {
            m_hooks.worker_done(peer, done->version, done->state_hash);
        }
        return hilo::Status::Ok();
    }
    return hilo::Status::Corruption("learner got message type " + std::to_string(message.type) +
                                    " from peer " + std::to_string(peer));
}

void
LearnerRole::MaybeTrain()
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
    const WallTimer wall;
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
    const double spent = wall.Seconds();
    if (m_port->RealTime())
    {
        m_pending.train_overrun_s = std::max(0.0, spent - *train_s);
    }
    m_port->After(*train_s, ComputePhase::kTrain, spent, [this]() { FinishTraining(); });
}

void
LearnerRole::FinishTraining()
{
    m_pending.grad_ready_s = m_port->Now();
    const models::CpuTimer timer;
    const WallTimer wall;
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

    // The learner's GPU time from gradient to publish. Every strategy runs the learner's own
    // optimizer step, modelled as the fused AdamW pass a worker's replay runs (gradient buffer
    // plus theta, m and v: DecodeReplaySeconds "hilo"). On top of it: full serialises the new
    // parameters (a copy, modelled as an adapter load); hilo encodes its gradient (the step then
    // applies the decoded one); delta encodes the parameter delta and adds its decode to the
    // replicas' shadow copy.
    const std::string& compressor = m_context->sync.compressor;
    const hilo::SyncKind kind = m_context->sync.kind;
    auto step = models::DecodeReplaySeconds(m_context->learner_gpu, m_context->modelled_numel,
                                            "hilo", m_context->compute);
    if (!step.ok())
    {
        Fail(step.status());
        return;
    }
    double encode_s = *step;
    if (kind == hilo::SyncKind::kFull)
    {
        encode_s += models::AdapterLoadSeconds(
            m_context->learner_gpu, m_context->modelled_adapter_bytes, m_context->compute);
    }
    else
    {
        int64_t rank = m_context->training_rank;
        if (!m_pending.kept_per_matrix.empty())
        {
            rank = *std::max_element(m_pending.kept_per_matrix.begin(),
                                     m_pending.kept_per_matrix.end());
        }
        auto enc =
            models::EncodeSeconds(m_context->learner_gpu, m_context->modelled_layout, compressor,
                                  std::max<int64_t>(1, rank), m_context->compute);
        if (!enc.ok())
        {
            Fail(enc.status());
            return;
        }
        encode_s += *enc;
        if (kind == hilo::SyncKind::kDelta)
        {
            auto add = models::DecodeReplaySeconds(
                m_context->learner_gpu, m_context->modelled_numel, "delta", m_context->compute);
            if (!add.ok())
            {
                Fail(add.status());
                return;
            }
            encode_s += *add;
        }
    }
    m_pending.encode_s = encode_s;
    const double spent = wall.Seconds();
    if (m_port->RealTime())
    {
        m_pending.encode_overrun_s = std::max(0.0, spent - encode_s);
    }
    m_port->After(encode_s, ComputePhase::kEncode, spent, [this]() { Broadcast(); });
}

void
LearnerRole::Broadcast()
{
    m_pending.published_s = m_port->Now();
    for (uint32_t peer : m_updatePeers)
    {
        hilo::Status s = m_port->Send(peer, kUpdate, m_frame, m_pending.wire_bytes);
        if (!s.ok())
        {
            Fail(s);
            return;
        }
    }
    m_pending.copies = m_updatePeers.size();
    if (m_hooks.published)
    {
        m_hooks.published(m_pending);
    }
    const uint64_t v = m_pending.version;
    if (v == m_context->steps || (m_context->eval_every > 0 && v % m_context->eval_every == 0))
    {
        Evaluate();
    }
    m_busy = false;
    MaybeTrain();
}

void
LearnerRole::Evaluate()
{
    const models::CpuTimer timer;
    EvalEvent e;
    e.version = m_publisher->version();
    e.sim_time_s = m_port->Now();
    e.quality = m_context->workload->Evaluate(m_publisher->replica_view().adapter.theta);
    e.cpu_s = timer.Seconds();
    if (m_hooks.evaluated)
    {
        m_hooks.evaluated(e);
    }
}

} // namespace hilosim
