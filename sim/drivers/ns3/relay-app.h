// RelayApp: the relay host of a region in a simulation (the `relay` topology). A thin ns-3 adapter
// over RelayRole (sim/roles/relay-role.h): the node's MessageTransport carries the forwarded
// updates (streamed while they arrive unless the StoreAndForward attribute is set); every
// forward is a trace source event.
#ifndef HILOSIM_DRIVERS_NS3_RELAY_APP_H
#define HILOSIM_DRIVERS_NS3_RELAY_APP_H

#include "sim/drivers/ns3/ns3-role-port.h"
#include "sim/net/message-transport.h"
#include "sim/roles/relay-role.h"

#include "ns3/application.h"
#include "ns3/traced-callback.h"

#include <memory>
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
    void HandleMessageStarted(uint32_t peer, const hilosim::MessageMeta& meta);

    bool m_storeAndForward{false}; // attribute
    std::vector<uint32_t> m_workers;
    std::unique_ptr<Ns3RolePort> m_port;
    std::unique_ptr<RelayRole> m_role;
    ns3::TracedCallback<uint32_t, uint64_t, uint32_t> m_forwardTrace;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_NS3_RELAY_APP_H
