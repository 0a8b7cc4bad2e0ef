#include "sim/roles/worker-role.h"

#include "sim/roles/peer-ids.h"
#include "sim/roles/role-messages.h"
#include "sim/roles/wall-timer.h"

#include "hilo/wire/messages.h"
#include "models/cpu-timer.h"

#include <algorithm>

namespace hilosim
{

WorkerRole::WorkerRole(std::shared_ptr<ArmContext> context, RolePort* port, uint32_t worker,
                       uint32_t learner_peer, WorkerRoleOptions options, WorkerHooks hooks)
  : m_context(std::move(context))
  , m_port(port)
  , m_worker(worker)
  , m_learnerPeer(learner_peer)
  , m_options(options)
  , m_hooks(std::move(hooks))
{
}

WorkerRole::~WorkerRole() = default;

void
WorkerRole::Start()
{
    if (m_context->replica_group)
    {
        m_replica = hilo::Replica::Create(m_context->replica_group);
    }
    else
    {
        auto replica = hilo::Replica::Create(m_context->sync, m_context->workload->layout(),
                                             m_context->optimizer, m_context->initial);
        if (!replica.ok())
        {
            Fail(replica.status());
            return;
        }
        m_replica = std::move(*replica);
    }
    m_needSnapshot = m_options.rejoining;
    m_awaitWelcome = m_options.rejoining; // where the run is, only the learner can say
    NextGpuWork();
}

void
WorkerRole::Fail(const hilo::Status& status)
{
    if (m_failure.ok())
    {
        m_failure = status;
        m_port->Stop();
    }
}

void
WorkerRole::MaybeStartRound()
{
    if (GpuBusy() || m_resyncing || m_awaitWelcome || !m_failure.ok() ||
        m_nextRound > m_context->steps)
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
    m_rollingRound = round;
    ++m_nextRound;

    models::RolloutInfo info;
    const double started_s = m_port->Now(); // before the real sampling, which takes real time
    const models::CpuTimer timer;
    const WallTimer wall;
    const std::vector<float>& theta = m_replica->state().adapter.theta;
    auto batch = m_context->rollout_cache
                     ? m_context->rollout_cache->Take(*m_context->workload, theta, version,
                                                      m_replica->state().adapter.Hash(), round,
                                                      m_worker, &info)
                     : m_context->workload->Rollout(theta, round, m_worker, &info);
    if (!batch.ok())
    {
        Fail(batch.status());
        return;
    }
    RolloutEvent e;
    e.worker = m_worker;
    e.round = round;
    e.behaviour_version = version;
    e.started_s = started_s;
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
    auto rollout_s =
        RolloutSeconds(info.sequences, std::max<int64_t>(1, prompt), std::max<int64_t>(1, gen));
    if (!rollout_s.ok())
    {
        Fail(rollout_s.status());
        return;
    }
    auto bytes = std::make_shared<const std::string>(EncodeTrajectories(round, version, *batch));
    e.real_bytes = bytes->size();
    e.wire_bytes = ArmContext::WireBytes(bytes->size(), token_scale);
    const double spent = wall.Seconds();
    if (m_port->RealTime())
    {
        e.overrun_s = std::max(0.0, spent - *rollout_s);
    }
    m_port->After(*rollout_s, ComputePhase::kRollout, spent,
                  [this, round, version, bytes, e]() { FinishRollout(round, version, bytes, e); });
}

void
WorkerRole::FinishRollout(uint64_t round, uint64_t version,
                          std::shared_ptr<const std::string> bytes, RolloutEvent event)
{
    event.done_s = m_port->Now();
    hilo::Status s = m_port->Send(m_learnerPeer, kTrajectories, bytes, event.wire_bytes);
    if (!s.ok())
    {
        Fail(s);
        return;
    }
    if (m_hooks.rollout_done)
    {
        m_hooks.rollout_done(event);
    }
    m_rollingOut = false;
    NextGpuWork();
}

void
WorkerRole::NextGpuWork()
{
    // One modelled GPU per worker: rollout, decode + replay and catch-up take turns. Updates go
    // first, so the next round samples the newest version the worker has; a catch-up goes
    // before them (they wait for it anyway).
    if (GpuBusy() || !m_failure.ok())
    {
        return;
    }
    if (m_catchUp)
    {
        StartCatchUp();
        return;
    }
    if (!m_resyncing && !m_queue.empty())
    {
        StartApply();
        return;
    }
    MaybeStartRound();
}

hilo::StatusOr<double>
WorkerRole::RolloutSeconds(int64_t sequences, int64_t prompt_tokens, int64_t gen_tokens)
{
    RolloutShape& m = m_rolloutTime;
    if (m.sequences == sequences && m.prompt_tokens == prompt_tokens && m.gen_tokens == gen_tokens)
    {
        return m.seconds;
    }
    auto s = models::RolloutSeconds(m_context->worker_gpus[m_worker], m_context->llm,
                                    m_context->training_rank, sequences, prompt_tokens, gen_tokens,
                                    m_context->compute);
    if (s.ok())
    {
        m = RolloutShape{sequences, prompt_tokens, gen_tokens, *s};
    }
    return s;
}

double
WorkerRole::ApplySeconds()
{
    if (!m_applySeconds)
    {
        const models::GpuNode& gpu = m_context->worker_gpus[m_worker];
        if (m_context->sync.kind == hilo::SyncKind::kFull)
        {
            m_applySeconds = models::AdapterLoadSeconds(gpu, m_context->modelled_byte_shards,
                                                        m_context->compute);
        }
        else
        {
            auto s = models::DecodeReplaySeconds(gpu, m_context->modelled_shards,
                                                 hilo::SyncKindName(m_context->sync.kind),
                                                 m_context->compute);
            m_applySeconds = s.ok() ? *s : 0.0;
        }
    }
    return *m_applySeconds;
}

hilo::Status
WorkerRole::HandleMessage(uint32_t peer, const RoleMessage& message)
{
    const double now = m_port->Now();
    if (!m_failure.ok())
    {
        return hilo::Status::Ok();
    }
    // A worker's peers are the ones it dials: the learner and, in a relay topology, its
    // region's relay, which forwards updates and nothing else.
    if (peer != m_learnerPeer && !(message.type == kUpdate && IsRelayPeerId(peer)))
    {
        return hilo::Status::InvalidArgument("worker " + std::to_string(m_worker) +
                                             " got message type " + std::to_string(message.type) +
                                             " from peer " + std::to_string(peer) +
                                             ", which is neither its learner nor a relay");
    }
    if (message.type == kUpdate)
    {
        if (m_hooks.update_received)
        {
            m_hooks.update_received(m_worker, message.sequence + 1);
        }
        std::string frame(message.payload);
        if (m_options.corrupt_version != 0 && !frame.empty())
        {
            auto parsed = hilo::DecodeUpdateFrame(frame);
            if (parsed.ok() && parsed->version() == m_options.corrupt_version)
            {
                frame[frame.size() / 2] = static_cast<char>(frame[frame.size() / 2] ^ 0x40);
            }
        }
        m_queue.push_back({std::move(frame), now});
        NextGpuWork();
        return hilo::Status::Ok();
    }
    if (message.type == kCatchUp)
    {
        return HandleCatchUp(message.payload, now);
    }
    if (message.type == kWelcome)
    {
        auto welcome = DecodeWelcome(message.payload);
        if (!welcome.ok())
        {
            return welcome.status();
        }
        m_awaitWelcome = false;
        ++m_welcomes;
        m_welcomeLearnerVersion = welcome->learner_version;
        // The learner's view wins: a batch lost with the old connection (or by a restarted
        // learner) is rolled out again; at worst one redundant rollout, which the learner
        // overwrites or drops as stale.
        m_nextRound = welcome->next_round;
        if (m_rollingOut && m_rollingRound == m_nextRound)
        {
            ++m_nextRound; // already on its way
        }
        // A welcome comes with a new connection: a resync request still pending went out on the
        // old one and may be lost with it, so ask again (a second catch-up only repeats what the
        // first did).
        const bool behind = m_replica->version() < welcome->learner_version;
        // A learner that restored an older checkpoint than the version this worker holds (its
        // latest was torn, or not written on a full disk) trains the versions after its own
        // again, to other states: the worker drops what it holds past the learner's version and
        // takes the learner's state whole, and the updates it queued from before go with it.
        if (m_replica->version() > welcome->learner_version)
        {
            m_queue.clear();
            m_needSnapshot = true;
            m_rollbackTo = welcome->learner_version;
            m_catchUp.reset(); // a catch-up to the old learner's versions, not yet applied
        }
        if ((behind || m_needSnapshot) && !m_catchingUp && !m_catchUp)
        {
            RequestResync(m_needSnapshot);
        }
        // The learner forgets a done announced on a connection that ended: announce it again.
        m_doneSent = false;
        if (!behind && !m_needSnapshot && !m_resyncing)
        {
            VersionReached();
        }
        NextGpuWork();
        return hilo::Status::Ok();
    }
    return hilo::Status::Corruption("worker got message type " + std::to_string(message.type) +
                                    " from peer " + std::to_string(peer));
}

void
WorkerRole::HandlePeerConnected(uint32_t peer)
{
    m_backoff[peer].Reset();
}

void
WorkerRole::HandlePeerClosed(uint32_t peer, bool error)
{
    (void) error;
    if (!m_failure.ok())
    {
        return;
    }
    // Messages sent meanwhile are dropped by the transport; what they carried is recovered once
    // the learner's welcome arrives on the new connection (a round again, a catch-up).
    m_port->After(m_backoff[peer].Next(), ComputePhase::kTransport, 0.0,
                  [this, peer]()
                  {
                      if (m_failure.ok())
                      {
                          m_port->Reconnect(peer);
                      }
                  });
}

void
WorkerRole::DivergeNextReplay()
{
    if (m_replica)
    {
        m_replica->DivergeNextReplay();
    }
}

void
WorkerRole::RequestResync(bool with_snapshot)
{
    const uint64_t from =
        m_rollbackTo ? std::min(*m_rollbackTo, m_replica->version()) : m_replica->version();
    m_resyncing = true;
    if (m_hooks.resync)
    {
        m_hooks.resync(m_worker, from);
    }
    auto bytes = std::make_shared<const std::string>(EncodeResyncRequest(from, with_snapshot));
    hilo::Status sent = m_port->Send(m_learnerPeer, kResyncRequest, bytes, bytes->size());
    if (!sent.ok())
    {
        Fail(sent);
    }
}

void
WorkerRole::StartApply()
{
    m_applying = true;
    Queued q = std::move(m_queue.front());
    m_queue.pop_front();
    // Decode + replay (or load) occupies the GPU for the modelled time. The real apply runs
    // first, inside that time: a process then waits only for what is left of it, so the update
    // is ready at max(modelled, real) after it started, and only real time past the modelled
    // time is overrun (a simulator ignores the real time).
    const models::CpuTimer timer;
    const WallTimer wall;
    const uint64_t before = m_replica->version();
    hilo::Status s = m_replica->Apply(q.frame);
    ApplyEvent e;
    e.worker = m_worker;
    e.received_s = q.received_s;
    e.cpu_apply_s = timer.Seconds();
    const double modelled_s = ApplySeconds();
    const double spent_s = wall.Seconds();
    if (m_port->RealTime())
    {
        e.overrun_s = std::max(0.0, spent_s - modelled_s);
    }
    m_port->After(modelled_s, ComputePhase::kApply, spent_s,
                  [this, s, e, before]() mutable
                  {
                      m_applying = false;
                      e.ready_s = m_port->Now();
                      if (s.ok())
                      {
                          e.version = m_replica->version();
                          if (m_hooks.applied)
                          {
                              m_hooks.applied(e);
                          }
                          VersionReached();
                      }
                      else if (s.code() == hilo::StatusCode::kHashMismatch)
                      {
                          // The replica's own check failed: recorded as such (hash_ok 0), and
                          // the state, which may have diverged before this version's hash showed
                          // it, is rebuilt from a snapshot.
                          e.version = before + 1;
                          e.hash_ok = false;
                          if (m_hooks.applied)
                          {
                              m_hooks.applied(e);
                          }
                          if (m_hooks.hash_mismatch)
                          {
                              m_hooks.hash_mismatch(m_worker, before + 1);
                          }
                          m_needSnapshot = true;
                          RequestResync(/*with_snapshot=*/true);
                      }
                      else if (s.code() != hilo::StatusCode::kStale) // stale: a catch-up had it
                      {
                          // Corrupt or gap: ask for a catch-up; hold later updates until it
                          // arrives.
                          if (!m_resyncing)
                          {
                              RequestResync(m_needSnapshot);
                          }
                      }
                      NextGpuWork();
                  });
}

hilo::Status
WorkerRole::HandleCatchUp(std::string_view payload, double received_s)
{
    auto plan = DecodeCatchUp(payload);
    if (!plan.ok())
    {
        return plan.status();
    }
    m_catchUp = PendingCatchUp{std::move(*plan), received_s, m_welcomes};
    NextGpuWork();
    return hilo::Status::Ok();
}

void
WorkerRole::StartCatchUp()
{
    m_catchingUp = true;
    PendingCatchUp pending = std::move(*m_catchUp);
    m_catchUp.reset();
    // Restoring a snapshot is a full load; replaying the ring costs one apply per update.
    double busy_s =
        pending.plan.snapshot_frame.empty()
            ? 0.0
            : models::AdapterLoadSeconds(m_context->worker_gpus[m_worker],
                                         m_context->modelled_byte_shards, m_context->compute);
    busy_s += ApplySeconds() * static_cast<double>(pending.plan.update_frames.size());
    m_port->After(busy_s, ComputePhase::kCatchUp, 0.0,
                  [this, pending = std::move(pending)]()
                  { FinishCatchUp(pending.plan, pending.received_s, pending.welcomes); });
}

void
WorkerRole::FinishCatchUp(const hilo::CatchUpPlan& plan, double received_s, uint64_t welcomes)
{
    m_catchingUp = false;
    const models::CpuTimer timer;
    const WallTimer wall;
    const uint64_t before = m_replica->version();
    CatchUpEvent done;
    done.worker = m_worker;
    done.from_version = before;
    // Snapshot, then the ring's updates in order (those at or below the version reached are
    // skipped), as hilo::Replica::CatchUp does, one step at a time so that each version reached
    // is reported: the snapshot's (when above the version held) and each one replayed. Versions
    // in between were skipped through the snapshot (CatchUpEvent).
    std::vector<ApplyEvent> reached;
    auto reach = [&](bool hash_ok)
    {
        ApplyEvent e;
        e.worker = m_worker;
        e.version = hash_ok ? m_replica->version() : m_replica->version() + 1;
        e.received_s = received_s;
        e.ready_s = m_port->Now();
        e.hash_ok = hash_ok;
        e.via_resync = true;
        reached.push_back(e);
    };
    hilo::Status s = hilo::Status::Ok();
    if (!plan.snapshot_frame.empty())
    {
        s = m_replica->Restore(plan.snapshot_frame);
        if (s.ok())
        {
            done.snapshot_version = static_cast<int64_t>(m_replica->version());
            m_needSnapshot = false;
            m_rollbackTo.reset();
            if (m_replica->version() > before)
            {
                reach(true);
            }
        }
    }
    for (size_t i = 0; s.ok() && i < plan.update_frames.size(); ++i)
    {
        s = m_replica->Apply(plan.update_frames[i]);
        if (s.code() == hilo::StatusCode::kStale)
        {
            s = hilo::Status::Ok();
            continue;
        }
        if (s.ok() && m_replica->version() > before)
        {
            reach(true);
        }
        else if (s.code() == hilo::StatusCode::kHashMismatch)
        {
            reach(false);
            if (m_hooks.hash_mismatch)
            {
                m_hooks.hash_mismatch(m_worker, m_replica->version() + 1);
            }
        }
    }
    const double cpu = timer.Seconds();
    const double overrun = m_port->RealTime() ? wall.Seconds() : 0.0;
    for (ApplyEvent& e : reached)
    {
        e.cpu_apply_s = cpu;
        e.overrun_s = overrun;
        if (m_hooks.applied)
        {
            m_hooks.applied(e);
        }
    }
    done.to_version = m_replica->version();
    done.done_s = m_port->Now();
    done.ok = s.ok();
    if (m_hooks.caught_up)
    {
        m_hooks.caught_up(done);
    }
    if (!s.ok())
    {
        // A catch-up that does not apply leaves the worker where it got to; it asks again, from
        // a snapshot, which rebuilds whatever state it holds.
        m_needSnapshot = true;
        RequestResync(/*with_snapshot=*/true);
        NextGpuWork();
        return;
    }
    if (welcomes != m_welcomes && m_replica->version() > m_welcomeLearnerVersion)
    {
        // It came on a connection that has since ended, from a learner ahead of the one that
        // welcomed this worker since (a learner restored from an older checkpoint): as the
        // welcome would have, drop the versions past that learner's and take its state whole.
        m_queue.clear();
        m_needSnapshot = true;
        m_rollbackTo = m_welcomeLearnerVersion;
        RequestResync(/*with_snapshot=*/true);
        NextGpuWork();
        return;
    }
    m_resyncing = false;
    VersionReached();
    NextGpuWork();
}

void
WorkerRole::VersionReached()
{
    if (!m_options.announce_done || m_doneSent || m_replica->version() < m_context->steps)
    {
        return;
    }
    m_doneSent = true;
    auto bytes = std::make_shared<const std::string>(
        EncodeDone(m_replica->version(), m_replica->state().adapter.Hash()));
    hilo::Status s = m_port->Send(m_learnerPeer, kDone, bytes, bytes->size());
    if (!s.ok())
    {
        Fail(s);
        return;
    }
    if (m_hooks.done_sent)
    {
        m_hooks.done_sent(m_worker, m_replica->version());
    }
}

} // namespace hilosim
