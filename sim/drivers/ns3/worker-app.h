// WorkerApp: a rollout worker node of a simulation. A thin ns-3 adapter over WorkerRole
// (sim/roles/worker-role.h), which holds the behaviour: the application gives it simulated time
// and the node's MessageTransport (Ns3RolePort), exposes its fault-injection hook as an attribute
// and its events as trace sources.
#ifndef HILOSIM_DRIVERS_NS3_WORKER_APP_H
#define HILOSIM_DRIVERS_NS3_WORKER_APP_H

#include "sim/drivers/ns3/ns3-role-port.h"
#include "sim/net/message-transport.h"
#include "sim/roles/arm-context.h"
#include "sim/roles/role-events.h"
#include "sim/roles/worker-role.h"

#include "hilo/sync/replica.h"

#include "ns3/application.h"
#include "ns3/traced-callback.h"

#include <memory>

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

    /// REQUIRES: the application started without failing.
    const hilo::Replica& replica() const { return m_role->replica(); }
    const hilo::Status& failure() const;

    typedef void (*RolloutTracedCallback)(const RolloutEvent& event);
    typedef void (*ApplyTracedCallback)(const ApplyEvent& event);
    typedef void (*VersionTracedCallback)(uint32_t worker, uint64_t version);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void HandleMessage(uint32_t peer, const hilosim::Message& message);

    // Attributes.
    uint64_t m_corruptVersion; // test hook: flip a byte of this version's update on arrival

    std::shared_ptr<ArmContext> m_context;
    uint32_t m_worker{0};
    uint32_t m_learnerPeer{0};
    std::unique_ptr<Ns3RolePort> m_port;
    std::unique_ptr<WorkerRole> m_role;
    hilo::Status m_setupFailure;

    ns3::TracedCallback<const RolloutEvent&> m_rolloutTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_updateReceivedTrace;
    ns3::TracedCallback<const ApplyEvent&> m_appliedTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_hashMismatchTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_resyncTrace;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_NS3_WORKER_APP_H
