// NodeHost: what every node's set-up shares: the loop (node-loop.h), the transport with its
// callbacks routed to the role through an EventRouter (which keeps what arrives before the role
// starts), the role's port, an optional TCP trace, and the end. A node adds its own peers
// (options().accept_peer) and its own reactions to connections and closes before Open(), then
// hands the role over with Route(), listens or dials, and runs.
#ifndef HILOSIM_DRIVERS_PROCESS_NODE_HOST_H
#define HILOSIM_DRIVERS_PROCESS_NODE_HOST_H

#include "sim/drivers/process/event-router.h"
#include "sim/drivers/process/node-loop.h"
#include "sim/drivers/process/node-setup.h"
#include "sim/drivers/process/process-port.h"
#include "sim/drivers/process/tcp-info-sampler.h"
#include "sim/drivers/process/tcp-transport.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

namespace hilosim
{

class NodeHost
{
  public:
    /// A node labelled `label` (its log lines' prefix and its transport's name) with peer id `id`.
    NodeHost(const std::string& label, uint32_t id, const NodeOptions& o, const ArmSetup& setup,
             std::ostream& err);

    NodeLoop& loop() { return m_loop; }
    TcpTransportOptions& options() { return m_options; }
    TcpTransport& transport() { return *m_transport; }
    ProcessPort& port() { return *m_port; }

    /// Called on every connection before the role hears of it.
    std::function<void(uint32_t peer)> on_connected;
    /// Called on every close before the role hears of it; true: handled, the role is not told.
    std::function<bool(uint32_t peer, bool error)> on_closed;
    /// A peer this node dials failed to authenticate (empty: the transport logs it).
    std::function<void(uint32_t peer, const std::string& why)> on_authentication_failed;

    /// Makes the transport and the port; `failure` is the port's stop message.
    void Open(std::function<std::string()> failure);

    /// Hands the transport's events to `role` (kept until `started` says it runs).
    template<typename Role>
    void Route(Role* role, std::function<bool()> started,
               std::function<bool(uint32_t, const RoleMessage&)> progress = {})
    {
        m_router.SetHandlers(
            {std::move(started), std::move(progress),
             [role](uint32_t peer, const RoleMessage& m) { return role->HandleMessage(peer, m); },
             [role](uint32_t peer) { role->HandlePeerConnected(peer); },
             [role](uint32_t peer, bool error) { role->HandlePeerClosed(peer, error); }});
    }

    /// Listens on host:port and writes the bound port to `port_file` (when given). kExitOk, or
    /// the exit code, the error said: bad input when it cannot listen, runtime when the file
    /// cannot be written.
    int Listen(const std::string& who, const std::string& host, uint16_t port,
               const std::string& port_file, std::ostream& err, uint16_t* bound);

    /// Set-up is done: tells hilo-emu and takes the run's epoch (NodeLoop::Ready).
    bool Ready(bool sync, uint16_t port);

    /// Starts `role` at the run's epoch and hands it what arrived before.
    template<typename Role>
    void StartAtEpoch(Role* role, bool late_is_expected)
    {
        m_loop.AtEpoch(
            [this, role]()
            {
                role->Start();
                if (role->started())
                    m_router.RoleStarted();
            },
            late_is_expected);
    }

    /// Runs until the node ends, then stops its timers and connections.
    int Run(std::function<std::string()> waiting_for);

  private:
    /// With --trace-tcp, samples the connections from the run's epoch on (false: no trace file).
    bool StartTcpTrace();

    NodeLoop m_loop;
    TcpTransportOptions m_options;
    EventRouter m_router;
    std::unique_ptr<TcpTransport> m_transport;
    std::unique_ptr<ProcessPort> m_port;
    std::string m_tracePath;
    std::string m_traceArm;
    std::string m_traceNode;
    std::unique_ptr<TcpInfoSampler> m_tcpTrace; // after m_transport: destroyed first
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_NODE_HOST_H
