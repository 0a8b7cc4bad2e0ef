#include "sim/drivers/process/node-host.h"

#include "sim/drivers/process/peer-limits.h"
#include "sim/roles/peer-ids.h"

namespace hilosim
{
namespace
{

// What every node's transport shares: its id and name, the run's clock, the key, the frame limit,
// and the one reconnect policy (the roles': the transport does not redial by itself).
TcpTransportOptions
BaseTransportOptions(uint32_t id, const std::string& name, NodeLoop& loop, const ArmSetup& setup,
                     double hello_timeout_s)
{
    TcpTransportOptions topt;
    topt.hello_timeout_s = hello_timeout_s;
    topt.local_id = id;
    topt.name = name;
    topt.clock_ns = [&loop]() { return loop.NowNs(); };
    topt.key = setup.key;
    topt.max_payload_bytes = setup.frame_limit;
    const std::string role =
        id == kLearnerPeerId ? "learner" : (IsRelayPeerId(id) ? "relay" : "worker");
    const PeerLimits limits =
        PeerLimitsFor(role, setup.context->workload->config(), setup.frame_limit);
    topt.max_payload_for = limits.PayloadLimit();
    topt.max_queued_bytes = limits.max_queued_bytes;
    topt.redial = false;
    return topt;
}

} // namespace

NodeHost::NodeHost(const std::string& label, uint32_t id, const NodeOptions& o,
                   const ArmSetup& setup, std::ostream& err)
  : m_loop(label, err, o.epoch_ns, o.stall_timeout_s)
  , m_options(BaseTransportOptions(id, label, m_loop, setup, o.hello_timeout_s))
  , m_router([this]() { m_loop.Progress(); },
             [this](uint32_t peer, const std::string& why) { m_transport->Disconnect(peer, why); })
  , m_tracePath(o.trace_tcp)
  , m_traceArm(o.arm)
  , m_traceNode(TcpTraceNodeName(id))
{
}

void
NodeHost::Open(std::function<std::string()> failure)
{
    TcpTransportCallbacks tcb;
    tcb.log = [this](const std::string& line) { m_loop.LogRaw(line); };
    tcb.connected = [this](uint32_t peer)
    {
        if (on_connected)
            on_connected(peer);
        m_router.OnConnected(peer);
    };
    tcb.closed = [this](uint32_t peer, bool error, const std::string&)
    {
        if (!on_closed || !on_closed(peer, error))
            m_router.OnClosed(peer, error);
    };
    tcb.message = [this](uint32_t peer, const RoleMessage& m) { m_router.OnMessage(peer, m); };
    tcb.authentication_failed = on_authentication_failed;
    m_transport = std::make_unique<TcpTransport>(m_loop.io(), m_options, tcb);
    m_port = std::make_unique<ProcessPort>(m_loop.io(), m_transport.get(), m_loop.epoch(),
                                           [this, failure = std::move(failure)]()
                                           { m_loop.Finish(kExitRuntime, failure()); });
}

int
NodeHost::Listen(const std::string& who, const std::string& host, uint16_t port,
                 const std::string& port_file, std::ostream& err, uint16_t* bound)
{
    auto listening = m_transport->Listen(host, port);
    if (!listening.ok())
    {
        err << who << ": " << listening.status().message() << "\n";
        return kExitBadInput;
    }
    *bound = *listening;
    return WritePortFile(port_file, *bound, err) ? kExitOk : kExitRuntime;
}

bool
NodeHost::Ready(bool sync, uint16_t port)
{
    if (!m_loop.Ready(sync, port))
        return false;
    m_port->SetEpoch(m_loop.epoch());
    return StartTcpTrace();
}

int
NodeHost::Run(std::function<std::string()> waiting_for)
{
    const int code = m_loop.Run(std::move(waiting_for));
    if (m_tcpTrace)
        m_tcpTrace->Stop(); // before the connections close
    m_port->CancelTimers();
    m_transport->CloseAll();
    return code;
}

bool
NodeHost::StartTcpTrace()
{
    if (m_tracePath.empty())
        return true;
    auto sampler = TcpInfoSampler::Open(
        m_loop.io(), m_transport.get(), m_traceArm, m_traceNode,
        [this]()
        {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_loop.epoch())
                .count();
        },
        m_tracePath, kTcpTracePeriodS);
    if (!sampler.ok())
    {
        m_loop.LogRaw(m_traceNode + ": " + sampler.status().message());
        return false;
    }
    m_tcpTrace = std::move(*sampler);
    m_tcpTrace->Start();
    return true;
}

} // namespace hilosim
