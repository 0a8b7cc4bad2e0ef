#include "sim/roles/worker-role.h"

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
    auto replica = hilo::Replica::Create(m_context->sync, m_context->workload->layout(),
                                         m_context->optimizer, m_context->initial);
    if (!replica.ok())
    {
        Fail(replica.status());
        return;
    }
    m_replica = std::move(*replica);
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
    if (GpuBusy() || m_resyncing || !m_failure.ok() || m_nextRound > m_context->steps)
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
    e.started_s = m_port->Now();
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

double
WorkerRole::ApplySeconds() const
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

hilo::Status
WorkerRole::HandleMessage(uint32_t peer, const RoleMessage& message)
{
    const double now = m_port->Now();
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
        // The learner's view wins: a batch lost with the old connection is rolled out again (at
        // worst one redundant rollout, which the learner overwrites or drops as stale).
        m_nextRound = welcome->next_round;
        if (m_replica->version() < welcome->learner_version && !m_resyncing)
        {
            RequestResync();
        }
        NextGpuWork();
        return hilo::Status::Ok();
    }
    return hilo::Status::Corruption("worker got message type " + std::to_string(message.type) +
                                    " from peer " + std::to_string(peer));
}

void
WorkerRole::RequestResync()
{
    const uint64_t from = m_replica->version();
    m_resyncing = true;
    if (m_hooks.resync)
    {
        m_hooks.resync(m_worker, from);
    }
    hilo::Status sent =
        m_port->Send(m_learnerPeer, kResyncRequest,
                     std::make_shared<const std::string>(EncodeResyncRequest(from)), 8);
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
    // Decode + replay (or load) occupies the GPU; the real apply happens when it is done.
    m_port->After(ApplySeconds(), ComputePhase::kApply, 0.0,
                  [this, q = std::move(q)]()
                  {
                      m_applying = false;
                      const models::CpuTimer timer;
                      const WallTimer wall;
                      const uint64_t before = m_replica->version();
                      hilo::Status s = m_replica->Apply(q.frame);
                      ApplyEvent e;
                      e.worker = m_worker;
                      e.received_s = q.received_s;
                      e.ready_s = m_port->Now();
                      e.cpu_apply_s = timer.Seconds();
                      if (m_port->RealTime())
                      {
                          e.overrun_s = wall.Seconds();
                      }
                      if (s.ok())
                      {
                          e.version = m_replica->version();
                          if (m_hooks.applied)
                          {
                              m_hooks.applied(e);
                          }
                          VersionReached();
                      }
                      else if (s.code() != hilo::StatusCode::kStale) // stale: a catch-up had it
                      {
                          if (s.code() == hilo::StatusCode::kHashMismatch && m_hooks.hash_mismatch)
                          {
                              m_hooks.hash_mismatch(m_worker, before + 1);
                          }
                          // Corrupt, gap or mismatch: ask for a catch-up; hold later updates
                          // until it arrives.
                          if (!m_resyncing)
                          {
                              RequestResync();
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
    m_catchUp = PendingCatchUp{std::move(*plan), received_s};
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
                                         m_context->modelled_adapter_bytes, m_context->compute);
    busy_s += ApplySeconds() * static_cast<double>(pending.plan.update_frames.size());
    m_port->After(busy_s, ComputePhase::kCatchUp, 0.0,
                  [this, pending = std::move(pending)]()
                  {
                      m_catchingUp = false;
                      const models::CpuTimer timer;
                      const WallTimer wall;
                      const uint64_t before = m_replica->version();
                      hilo::Status s = m_replica->CatchUp(pending.plan.snapshot_frame,
                                                          pending.plan.update_frames);
                      if (!s.ok())
                      {
                          Fail(hilo::Status(s.code(), "catch-up failed: " + s.message()));
                          return;
                      }
                      const double cpu = timer.Seconds();
                      const double overrun = m_port->RealTime() ? wall.Seconds() : 0.0;
                      // Report every version the catch-up delivered, all ready now.
                      for (uint64_t v = before + 1; v <= m_replica->version(); ++v)
                      {
                          ApplyEvent e;
                          e.worker = m_worker;
                          e.version = v;
                          e.received_s = pending.received_s;
                          e.ready_s = m_port->Now();
                          e.via_resync = true;
                          e.cpu_apply_s = cpu;
                          e.overrun_s = overrun;
                          if (m_hooks.applied)
                          {
                              m_hooks.applied(e);
                          }
                      }
                      m_resyncing = false;
                      VersionReached();
                      NextGpuWork();
                  });
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
    }
}

} // namespace hilosim
