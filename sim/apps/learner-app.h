// LearnerApp: the learner node. Collects one trajectory batch per worker and round, trains on them
// (real LibTorch gradient, modelled GPU time), publishes the next version through a hilo
// Publisher (real encode, modelled encode time) and sends the framed update to every worker (or
// to every relay, which fans out). Serves catch-up requests from its ring and snapshots.
#ifndef HILOSIM_APPS_LEARNER_APP_H
#define HILOSIM_APPS_LEARNER_APP_H

#include "sim/apps/app-events.h"
#include "sim/apps/arm-context.h"
#include "sim/net/message-transport.h"

#include "hilo/sync/publisher.h"

#include "ns3/application.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>
#include <string>
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
    const hilo::Publisher& publisher() const { return *m_publisher; }
    /// Status of the first runtime failure, ok otherwise.
    const hilo::Status& failure() const { return m_failure; }

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
    void MaybeTrain();
    void FinishTraining();
    void Broadcast();
    void Evaluate();
    void Fail(const hilo::Status& status);

    // Attributes.
    uint32_t m_ringCapacity;
    uint32_t m_snapshotInterval;

    std::shared_ptr<ArmContext> m_context;
    ns3::Ptr<hilosim::MessageTransport> m_endpoint;
    std::vector<uint32_t> m_updatePeers;
    std::unique_ptr<hilo::Publisher> m_publisher;
    std::map<uint64_t, std::map<uint32_t, std::string>> m_batches; // round -> worker -> batch
    bool m_busy{false};
    std::vector<float> m_grad;
    PublishEvent m_pending;                     // the version being produced
    std::shared_ptr<const std::string> m_frame; // its framed update
    hilo::Status m_failure;

    ns3::TracedCallback<uint32_t, uint64_t, uint64_t> m_trajectoriesTrace;
    ns3::TracedCallback<const PublishEvent&> m_publishTrace;
    ns3::TracedCallback<const EvalEvent&> m_evalTrace;
    ns3::TracedCallback<uint32_t, uint64_t> m_resyncTrace;
};

} // namespace hilosim

#endif // HILOSIM_APPS_LEARNER_APP_H
