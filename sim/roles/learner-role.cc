#include "sim/roles/learner-role.h"

#include "sim/roles/finite-gradient.h"
#include "sim/roles/publish-record.h"
#include "sim/roles/role-messages.h"
#include "sim/roles/trajectory-check.h"
#include "sim/roles/wall-timer.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"
#include "models/cpu-timer.h"

#include <algorithm>

namespace hilosim
{

LearnerRole::LearnerRole(std::shared_ptr<ArmContext> context, RolePort* port,
                         std::vector<uint32_t> update_peers, hilo::PublisherOptions options,
                         LearnerHooks hooks, LearnerRoleOptions role_options)
  : m_context(std::move(context))
  , m_port(port)
  , m_updatePeers(std::move(update_peers))
  , m_options(options)
  , m_hooks(std::move(hooks))
  , m_roleOptions(std::move(role_options))
{
    if (m_roleOptions.members)
    {
        m_initial.insert(m_roleOptions.members->begin(), m_roleOptions.members->end());
    }
    else
    {
        for (uint32_t w = 0; w < m_context->workers; ++w)
        {
            m_initial.insert(w);
        }
    }
    m_members = m_initial;
}

LearnerRole::~LearnerRole() = default;

void
LearnerRole::Start()
{
    if (m_roleOptions.restore)
    {
        hilo::Status s = ReadCheckpoint();
        if (!s.ok())
        {
            Fail(hilo::Status(s.code(), "learner restart from " + m_roleOptions.checkpoint_path +
                                            ": " + s.message()));
            return;
        }
        m_checkpointed = m_publisher->version();
        if (m_hooks.restored)
        {
            m_hooks.restored(m_pending);
        }
        OpenRound();
        return;
    }
    auto publisher = hilo::Publisher::Create(m_context->sync, m_context->workload->layout(),
                                             m_context->optimizer, m_context->initial, m_options);
    if (!publisher.ok())
    {
        Fail(publisher.status());
        return;
    }
    m_publisher = std::move(*publisher);
    Evaluate(); // version 0
    OpenRound();
}

void
LearnerRole::OpenRound()
{
    m_dropped.clear();
    m_deadlinePassed = false;
    const uint64_t opened = ++m_roundOpened;
    if (m_context->round_timeout_s <= 0 || m_publisher->version() >= m_context->steps)
    {
        return;
    }
    m_port->After(m_context->round_timeout_s, ComputePhase::kTransport, 0.0,
                  [this, opened]()
                  {
                      if (opened != m_roundOpened || !m_failure.ok())
                      {
                          return; // that round trained in time
                      }
                      m_deadlinePassed = true;
                      MaybeTrain();
                  });
}

void
LearnerRole::Drop(uint32_t worker, uint64_t round, DropReason reason, const std::string& why)
{
    m_dropped.insert(worker);
    if (m_hooks.member_dropped)
    {
        m_hooks.member_dropped(worker, round, reason, why);
    }
}

// The checkpoint file: u32 magic "HLL3", u32 n, n x u32 members, the publish record of its
// version (publish-record.h), u32 its members_dropped, u32 CRC-32C of those bytes, then the
// publisher's checkpoint (which has its own CRC).
namespace
{
constexpr uint32_t kLearnerCheckpointMagic = 0x334C4C48;
} // namespace

hilo::Status
LearnerRole::WriteCheckpoint() const
{
    std::string bytes;
    hilo::ByteWriter w(&bytes);
    w.PutU32(kLearnerCheckpointMagic);
    w.PutU32(static_cast<uint32_t>(m_members.size()));
    for (uint32_t member : m_members)
    {
        w.PutU32(member);
    }
    PutPublishEvent(&w, m_pending);
    w.PutU32(m_pending.members_dropped);
    w.PutU32(hilo::Crc32c(bytes.data(), bytes.size()));
    bytes += m_publisher->Checkpoint();
    const std::string& path = m_roleOptions.checkpoint_path;
    return m_roleOptions.write_file ? m_roleOptions.write_file(path, bytes)
                                    : WriteDurably(path, bytes);
}

hilo::Status
LearnerRole::ReadCheckpoint()
{
    std::string why;
    for (const std::string& path : ReadGenerations(m_roleOptions.checkpoint_path))
    {
        auto bytes = ReadWholeFile(path);
        hilo::Status s = bytes.ok() ? RestoreFrom(*bytes) : bytes.status();
        if (s.ok())
        {
            if (!why.empty() && m_hooks.checkpoint_note)
            {
                m_hooks.checkpoint_note("restored " + path + " at version " +
                                        std::to_string(m_publisher->version()) +
                                        " instead: " + why);
            }
            return s;
        }
        why += (why.empty() ? "" : "; ") + path + ": " + s.message();
    }
    return hilo::Status::Corruption("no usable checkpoint generation (" + why + ")");
}

hilo::Status
LearnerRole::RestoreFrom(const std::string& bytes)
{
    hilo::ByteReader r(bytes);
    uint32_t magic = 0;
    uint32_t n = 0;
    if (!r.GetU32(&magic) || magic != kLearnerCheckpointMagic || !r.GetU32(&n) ||
        n > m_context->workers)
    {
        return hilo::Status::Corruption("not a learner checkpoint");
    }
    std::set<uint32_t> members;
    for (uint32_t i = 0; i < n; ++i)
    {
        uint32_t member = 0;
        if (!r.GetU32(&member))
        {
            return hilo::Status::Corruption("learner checkpoint truncated");
        }
        members.insert(member);
    }
    PublishEvent published;
    HILO_RETURN_IF_ERROR(GetPublishEvent(&r, &published));
    if (!r.GetU32(&published.members_dropped))
    {
        return hilo::Status::Corruption("learner checkpoint truncated after its publish record");
    }
    const size_t head = bytes.size() - r.remaining();
    uint32_t crc = 0;
    if (!r.GetU32(&crc) || crc != hilo::Crc32c(bytes.data(), head))
    {
        return hilo::Status::Corruption("learner checkpoint fails its CRC-32C");
    }
    auto publisher = hilo::Publisher::Restore(m_context->sync, m_context->workload->layout(),
                                              m_context->optimizer,
                                              std::string_view(bytes).substr(head + 4), m_options);
    if (!publisher.ok())
    {
        return publisher.status();
    }
    if (published.version != (*publisher)->version())
    {
        return hilo::Status::Corruption(
            "learner checkpoint holds version " + std::to_string((*publisher)->version()) +
            " but the publish record of version " + std::to_string(published.version));
    }
    m_publisher = std::move(*publisher);
    m_members = std::move(members);
    m_pending = std::move(published);
    return hilo::Status::Ok();
}

std::vector<uint32_t>
LearnerRole::MissingBatches() const
{
    std::vector<uint32_t> missing;
    if (!m_publisher || m_busy || m_publisher->version() >= m_context->steps)
    {
        return missing;
    }
    auto it = m_batches.find(m_publisher->version() + 1);
    for (uint32_t w : m_members)
    {
        if (it == m_batches.end() || it->second.count(w) == 0)
        {
            missing.push_back(w);
        }
    }
    return missing;
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
    const bool again = !m_seen.insert(peer).second || m_roleOptions.restore;
    m_resyncServed.erase(peer); // a new connection: nothing is in flight on it yet
    if (!m_failure.ok() || !m_publisher)
    {
        return;
    }
    if (!IsWorker(peer))
    {
        // A relay holds no state, but the update its workers missed while it was away would
        // never reach them: the latest one again shows them the gap.
        if (again && m_publisher->version() > 0)
        {
            if (!m_lastBroadcast)
            {
                auto plan = m_publisher->CatchUpFrom(m_publisher->version() - 1);
                if (!plan.ok() || plan->update_frames.empty())
                {
                    Fail(plan.ok() ? hilo::Status::Internal("empty ring") : plan.status());
                    return;
                }
                m_lastBroadcast = std::make_shared<const std::string>(plan->update_frames.back());
                m_lastBroadcastWire =
                    ArmContext::WireBytes(m_lastBroadcast->size(), m_context->update_wire_scale);
            }
            hilo::Status s = m_port->Send(peer, kUpdate, m_lastBroadcast, m_lastBroadcastWire);
            if (!s.ok())
            {
                Fail(s);
            }
        }
        return;
    }
    m_members.insert(peer);
    if (!again && m_initial.count(peer) != 0 && m_publisher->version() == 0)
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
    (void) error;
    // Batches already received stay valid; the learner just stops waiting for this worker. One
    // that comes back is welcomed again (HandlePeerConnected) and told which round to send, and
    // announces again what it holds: a done announced by a process that has since gone (a crash
    // after kDone) says nothing about the one that comes back.
    if (IsWorker(peer))
    {
        m_done.erase(peer);
        m_resyncServed.erase(peer); // a catch-up in flight went with the connection
    }
    if (!IsWorker(peer) || m_members.erase(peer) == 0 || !m_failure.ok() || !m_publisher)
    {
        return;
    }
    MaybeTrain();
}

hilo::Status
LearnerRole::HandleMessage(uint32_t peer, const RoleMessage& message)
{
    if (!m_failure.ok())
    {
        return hilo::Status::Ok();
    }
    const bool member = IsWorker(peer) && m_members.count(peer) != 0;
    if (message.type == kTrajectories)
    {
        if (!member)
        {
            return NotAMember(peer, "trajectories");
        }
        auto env = DecodeTrajectories(message.payload);
        if (!env.ok())
        {
            return env.status();
        }
        // A worker rolls out round s once it holds version s-1-k (k: max staleness), and no
        // worker holds a version the learner has not published: a later round is not one this
        // worker can have sampled, and storing it would let any peer fill the learner's memory.
        const uint64_t newest = std::min<uint64_t>(m_context->steps, m_publisher->version() + 1 +
                                                                         m_context->max_staleness);
        if (env->round > newest)
        {
            return hilo::Status::InvalidArgument(
                "trajectories for round " + std::to_string(env->round) + " from worker " +
                std::to_string(peer) + "; at version " + std::to_string(m_publisher->version()) +
                " the learner accepts rounds up to " + std::to_string(newest));
        }
        if (env->round <= m_publisher->version())
        {
            // A round already trained without this batch: only a worker that restarted sends one
            // (its welcome tells it the round to roll out next).
            return hilo::Status::Ok();
        }
        if (env->behaviour_version > m_publisher->version())
        {
            return hilo::Status::InvalidArgument(
                "trajectories from worker " + std::to_string(peer) + " sampled at version " +
                std::to_string(env->behaviour_version) + ", which the learner (at version " +
                std::to_string(m_publisher->version()) + ") has not published");
        }
        // Checked here, where it arrives: a batch that training would refuse costs only its
        // sender (the driver closes it), never the learner.
        HILO_RETURN_IF_ERROR(
            CheckTrajectoryBatch(m_context->workload->config(), env->batch, env->round, peer));
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
        if (!member)
        {
            return NotAMember(peer, "a resync request");
        }
        auto request = DecodeResyncRequest(message.payload);
        if (!request.ok())
        {
            return request.status();
        }
        if (request->version > m_publisher->version())
        {
            // No worker holds a version the learner has not published: the peer, not the
            // learner, is wrong.
            return hilo::Status::InvalidArgument(
                "resync request from worker " + std::to_string(peer) + " for version " +
                std::to_string(request->version) + ", ahead of the learner's version " +
                std::to_string(m_publisher->version()));
        }
        // One catch-up per connection and version: a worker sends one request and waits for its
        // answer, which TCP delivers on the same connection (a connection that ends takes the
        // record with it). A repeat before the learner publishes again would get the same bytes
        // and costs the learner a snapshot's encoding each time, so it is dropped; only the
        // escalation to a catch-up with a snapshot (a worker whose replay failed) is served.
        const auto served = m_resyncServed.find(peer);
        if (served != m_resyncServed.end() && served->second.version == m_publisher->version() &&
            (served->second.with_snapshot || !request->with_snapshot))
        {
            ++m_resyncsRepeated;
            const uint64_t repeats = ++served->second.repeats;
            uint64_t digits = repeats; // said at 1, 10, 100, ...
            while (digits % 10 == 0)
                digits /= 10;
            if (digits == 1 && m_hooks.resync_repeated)
                m_hooks.resync_repeated(peer, repeats);
            return hilo::Status::Ok();
        }
        m_resyncServed[peer] = {m_publisher->version(), request->with_snapshot, 0};
        auto plan = m_publisher->CatchUpFrom(request->version, request->with_snapshot);
        if (!plan.ok())
        {
            Fail(plan.status()); // a valid request the learner cannot serve: its own failure
            return hilo::Status::Ok();
        }
        auto bytes = std::make_shared<const std::string>(EncodeCatchUp(*plan));
        if (m_hooks.resync_served)
        {
            m_hooks.resync_served(peer, request->version);
        }
        // The snapshot is parameters and moments (adapter scale), the rest update frames.
        const uint64_t snapshot = plan->snapshot_frame.size();
        const uint64_t wire =
            m_context->update_wire_scale == m_context->adapter_scale
                ? ArmContext::WireBytes(bytes->size(), m_context->adapter_scale)
                : ArmContext::WireBytes(snapshot, m_context->adapter_scale) +
                      ArmContext::WireBytes(bytes->size() - snapshot, m_context->update_wire_scale);
        hilo::Status s = m_port->Send(peer, kCatchUp, bytes, wire);
        if (!s.ok())
        {
            Fail(s);
        }
        return hilo::Status::Ok();
    }
    if (message.type == kDone)
    {
        if (!member)
        {
            return NotAMember(peer, "a done announcement");
        }
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

hilo::Status
LearnerRole::NotAMember(uint32_t peer, const std::string& what) const
{
    return hilo::Status::InvalidArgument(
        "learner got " + what + " from peer " + std::to_string(peer) +
        (IsWorker(peer) ? ", a worker that is not a member now"
                        : ", which is not a worker of the arm (workers 0 to " +
                              std::to_string(m_context->workers - 1) + ")"));
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
    if (it == m_batches.end() || it->second.empty())
    {
        return; // nothing to train on, deadline or not
    }
    // Fewer batches than members still waited for: one is surely missing, known without a
    // look-up per member on every arrival (which would cost workers^2 per step).
    if (!m_deadlinePassed && it->second.size() + m_dropped.size() < m_members.size())
    {
        return;
    }
    std::vector<uint32_t> missing;
    for (uint32_t w : m_members)
    {
        if (it->second.count(w) == 0 && m_dropped.count(w) == 0)
        {
            if (!m_deadlinePassed)
            {
                return;
            }
            missing.push_back(w);
        }
    }
    for (uint32_t w : missing)
    {
        Drop(w, next, DropReason::kDeadline,
             "no batch for round " + std::to_string(next) + " within mode.round_timeout (" +
                 std::to_string(m_context->round_timeout_s) + " s)");
    }
    m_busy = true;
    std::vector<std::string> batches;
    std::vector<uint32_t> senders;
    batches.reserve(it->second.size());
    for (auto& [worker, batch] : it->second) // worker order: deterministic
    {
        batches.push_back(std::move(batch));
        senders.push_back(worker);
    }
    m_batches.erase(it);

    const models::CpuTimer timer;
    const WallTimer wall;
    auto grad =
        FiniteGradient(*m_context->workload, m_publisher->train_state().adapter.theta, batches);
    if (!grad.ok())
    {
        Fail(grad.status());
        return;
    }
    for (size_t i : grad->dropped)
    {
        Drop(senders[i], next, DropReason::kNonFiniteGradient,
             "the batch of worker " + std::to_string(senders[i]) + " for round " +
                 std::to_string(next) + " makes the gradient non-finite; round " +
                 std::to_string(next) + " is trained without it");
    }
    if (grad->grad.empty())
    {
        // Every batch was dropped: the round waits for new ones (a dropped sender that comes
        // back is welcomed to this round).
        m_busy = false;
        return;
    }
    const models::GradientInfo& info = grad->info;
    m_grad = std::move(grad->grad);
    m_pending = PublishEvent();
    m_pending.members_dropped = static_cast<uint32_t>(m_dropped.size());
    m_pending.version = next;
    m_pending.loss = info.loss;
    m_pending.grad_norm = info.grad_norm;
    m_pending.cpu_gradient_s = timer.Seconds();

    // Modelled tokens: each real generated token stands for gen_scale modelled ones.
    int64_t tokens = info.tokens;
    if (m_context->modelled_gen_tokens > 0)
    {
        const int64_t sequences = static_cast<int64_t>(batches.size() - grad->dropped.size()) *
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
    m_pending.state_hash = update->state_hash;
    m_pending.frame_bytes = static_cast<int64_t>(update->frame.size());
    m_pending.wire_bytes =
        ArmContext::WireBytes(update->frame.size(), m_context->update_wire_scale);
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
    auto step = models::DecodeReplaySeconds(m_context->learner_gpu, m_context->modelled_shards,
                                            "hilo", m_context->compute);
    if (!step.ok())
    {
        Fail(step.status());
        return;
    }
    double encode_s = *step;
    if (kind == hilo::SyncKind::kFull)
    {
        encode_s += models::AdapterLoadSeconds(m_context->learner_gpu,
                                               m_context->modelled_byte_shards, m_context->compute);
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
                m_context->learner_gpu, m_context->modelled_shards, "delta", m_context->compute);
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
    // On disk before it leaves, with its publish record: a restarted learner never has less than
    // any worker saw, never a version no worker could have seen (a crash during encode loses
    // that step), and can report the publish of the version it holds.
    m_pending.published_s = m_port->Now();
    m_pending.copies = 0;
    for (uint32_t peer : m_updatePeers)
    {
        m_pending.copies += IsWorker(peer) && m_members.count(peer) == 0 ? 0 : 1;
    }
    if (!m_roleOptions.checkpoint_path.empty())
    {
        hilo::Status written = WriteCheckpoint();
        if (written.ok())
        {
            m_checkpointed = m_pending.version;
        }
        else if (m_hooks.checkpoint_note)
        {
            // A full disk must not end the run: training goes on, and a later write may succeed.
            m_hooks.checkpoint_note("checkpoint of version " + std::to_string(m_pending.version) +
                                    " not written (" + written.message() +
                                    "); training goes on; a restart now would restore version " +
                                    std::to_string(m_checkpointed));
        }
    }
    for (uint32_t peer : m_updatePeers)
    {
        if (IsWorker(peer) && m_members.count(peer) == 0)
        {
            continue; // away: it catches up when it comes back
        }
        hilo::Status s = m_port->Send(peer, kUpdate, m_frame, m_pending.wire_bytes);
        if (!s.ok())
        {
            Fail(s);
            return;
        }
    }
    m_lastBroadcast = m_frame;
    m_lastBroadcastWire = m_pending.wire_bytes;
    if (m_hooks.published)
    {
        m_hooks.published(m_pending);
    }
    if (EvaluatesAt(m_pending.version))
    {
        Evaluate();
    }
    m_busy = false;
    OpenRound();
    MaybeTrain();
}

bool
LearnerRole::EvaluatesAt(uint64_t version) const
{
    return version == m_context->steps ||
           (m_context->eval_every > 0 && version % m_context->eval_every == 0);
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
