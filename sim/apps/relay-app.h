// RelayApp: the relay host of a region (the `relay` topology). Receives each update once from the
// learner over the region's WAN link and forwards the same bytes to every worker of its region
// over their LAN links, so the WAN carries one copy per region instead of one per worker.
#ifndef HILOSIM_APPS_RELAY_APP_H
#define HILOSIM_APPS_RELAY_APP_H

#include "sim/net/message-transport.h"

#include "ns3/application.h"
#include "ns3/traced-callback.h"

#include <vector>

namespace hilosim
{

class RelayApp : public ns3::Application
{
  public:
    static ns3::TypeId GetTypeId();
    RelayApp();
    ~RelayApp() override;

    /// REQUIRES: called once before start. `worker_peers`: the region's workers.
    void Setup(ns3::Ptr<hilosim::MessageTransport> endpoint, std::vector<uint32_t> worker_peers);

    typedef void (*ForwardTracedCallback)(uint32_t type, uint64_t wire_bytes, uint32_t copies);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void HandleMessage(uint32_t peer, const hilosim::Message& message);

    ns3::Ptr<hilosim::MessageTransport> m_endpoint;
    std::vector<uint32_t> m_workers;
    ns3::TracedCallback<uint32_t, uint64_t, uint32_t> m_forwardTrace;
};

} // namespace hilosim

#endif // HILOSIM_APPS_RELAY_APP_H
