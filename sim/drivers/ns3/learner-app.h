// LearnerApp: the learner node of a simulation. A thin ns-3 adapter over LearnerRole
// (sim/roles/learner-role.h), which holds the behaviour: the application gives it simulated time
// and the node's MessageTransport (Ns3RolePort), exposes its tunables as attributes and its events
// as trace sources.
#ifndef HILOSIM_DRIVERS_NS3_LEARNER_APP_H
#define HILOSIM_DRIVERS_NS3_LEARNER_APP_H

#include "sim/drivers/ns3/ns3-role-port.h"
#include "sim/net/message-transport.h"
#include "sim/roles/arm-context.h"
#include "sim/roles/learner-role.h"
#include "sim/roles/role-events.h"

#include "hilo/sync/publisher.h"

#include "ns3/application.h"
#include "ns3/traced-callback.h"

#include <memory>
#include <vector>

namespace hilosim
{

class LearnerApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    LearnerApp();
    ~LearnerApp() override;

    /// REQUIRES: called once before start. `update_peers`: the transport peers every update goes
    /// to (worker peer ids, or relay peer ids in a relay topology).
    void Setup(std::shared_ptr<ArmContext> context, ns3::Ptr<hilosim::MessageTransport> endpoint,
               std::vector<uint32_t> update_peers);

    /// The learner's publisher (state, ring, snapshots), for tests and metrics.
    /// REQUIRES: the application started without failing.
    const hilo::Publisher& publisher() const { return m_role->publisher(); }
    /// Status of the first runtime failure, ok otherwise.
    const hilo::Status& failure() const;

    typedef void (*PublishTracedCallback)(const PublishEvent& event);
    typedef void (*EvalTracedCallback)(const EvalEvent& event);
    typedef void (*TrajectoriesTracedCallback)(uint32_t worker, uint64_t round,
                                               uint64_t wire_bytes);
    typedef void (*ResyncTracedCallback)(uint32_t worker, uint64_t from_version);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void HandleMessage(uint32_t peer, const hilosim::Message& message);
    void HandlePeerConnected(uint32_t peer);

    // Attributes.
    uint32_t m_ringCapacity;
    uint32_t m_snapshotInterval;

    std::shared_ptr<ArmContext> m_context;
    std::vector<uint32_t> m_updatePeers;
    std::unique_ptr<Ns3RolePort> m_port;
    std::unique_ptr<LearnerRole> m_role;
    hilo::Status m_setupFailure;

    ns3::TracedCallback<uint32_t, uint64_t, uint64_t> m_trajectoriesTrace;
    ns3::TracedCallback<const PublishEvent&> m_publishTrace;
    ns3::TracedCallback<const EvalEvent&> m_evalTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_resyncTrace;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_NS3_LEARNER_APP_H
