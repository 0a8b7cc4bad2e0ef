// WorkerApp: a rollout worker. Samples trajectories from its own hilo Replica (real sampling,
// modelled GPU time), sends them to the learner, and applies every update it receives in version
// order (modelled decode + replay or load time, then the real Replica::Apply with its hash check).
// A rejected update (corrupt, gap, hash mismatch) starts a resync: the worker asks the learner for
// a catch-up (snapshot + ring) and holds later updates until it is back in step.
// Round s (the batch for learner step s) may start once the replica holds version >= s-1-k, with k
// the arm's max staleness: k = 0 is synchronous on-policy.
#ifndef HILOSIM_APPS_WORKER_APP_H
#define HILOSIM_APPS_WORKER_APP_H

#include "sim/apps/app-events.h"
#include "sim/apps/arm-context.h"
#include "sim/net/message-transport.h"

#include "hilo/sync/replica.h"

#include "ns3/application.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <memory>
#include <string>

namespace hilosim
{

class WorkerApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    WorkerApp();
    ~WorkerApp() override;

    /// REQUIRES: called once before start; `learner_peer` is the learner's transport peer id.
    void Setup(std::shared_ptr<ArmContext> context, ns3::Ptr<hilosim::MessageTransport> endpoint,
               uint32_t worker, uint32_t learner_peer);

    const hilo::Replica& replica() const { return *m_replica; }
    const hilo::Status& failure() const { return m_failure; }

    typedef void (*RolloutTracedCallback)(const RolloutEvent& event);
    typedef void (*ApplyTracedCallback)(const ApplyEvent& event);
    typedef void (*VersionTracedCallback)(uint32_t worker, uint64_t version);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    void HandleMessage(uint32_t peer, const hilosim::Message& message);
    void MaybeStartRound();
    void FinishRollout(uint64_t round, uint64_t version, std::shared_ptr<const std::string> bytes,
                       RolloutEvent event);
    void ScheduleApply(std::string frame, double received_s);
    void ApplyNext();
    void HandleCatchUp(const std::string& payload, double received_s);
    void Fail(const hilo::Status& status);
    double ApplySeconds() const;

    // Attributes.
    uint64_t m_corruptVersion; // test hook: flip a byte of this version's update on arrival

    std::shared_ptr<ArmContext> m_context;
    ns3::Ptr<hilosim::MessageTransport> m_endpoint;
    uint32_t m_worker{0};
    uint32_t m_learnerPeer{0};
    std::unique_ptr<hilo::Replica> m_replica;
    uint64_t m_nextRound{1};
    bool m_rollingOut{false};
    struct Queued
    {
        std::string frame;
        double received_s;
    };
    std::deque<Queued> m_queue; // updates waiting for the apply pipeline
    bool m_applying{false};
    bool m_resyncing{false};
    hilo::Status m_failure;

    ns3::TracedCallback<const RolloutEvent&> m_rolloutTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_updateReceivedTrace;
    ns3::TracedCallback<const ApplyEvent&> m_appliedTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_hashMismatchTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_resyncTrace;
};

} // namespace hilosim

#endif // HILOSIM_APPS_WORKER_APP_H
