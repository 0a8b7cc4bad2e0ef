#include "sim/drivers/ns3/relay-app.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloRelayApp");
NS_OBJECT_ENSURE_REGISTERED(RelayApp);

ns3::TypeId
RelayApp::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::RelayApp")
            .SetParent<ns3::Application>()
            .SetGroupName("HiLo")
            .AddConstructor<RelayApp>()
            .AddAttribute("StoreAndForward",
                          "Forward each update only once it has arrived whole (a LAN transfer "
                          "more per update) instead of streaming its bytes as they arrive.",
                          ns3::BooleanValue(false),
                          ns3::MakeBooleanAccessor(&RelayApp::m_storeAndForward),
                          ns3::MakeBooleanChecker())
            .AddTraceSource("Forwarded",
                            "An update from the learner was forwarded to the region's workers.",
                            ns3::MakeTraceSourceAccessor(&RelayApp::m_forwardTrace),
                            "hilosim::RelayApp::ForwardTracedCallback");
    return tid;
}

RelayApp::RelayApp() = default;
RelayApp::~RelayApp() = default;

void
RelayApp::Setup(ns3::Ptr<hilosim::MessageTransport> endpoint, std::vector<uint32_t> worker_peers)
{
    m_port = std::make_unique<Ns3RolePort>(endpoint);
    m_workers = std::move(worker_peers);
}

void
RelayApp::DoDispose()
{
    m_role.reset();
    if (m_port)
    {
        m_port->Dispose();
    }
    ns3::Application::DoDispose();
}

void
RelayApp::StartApplication()
{
    NS_ABORT_MSG_IF(!m_port, "RelayApp started without Setup");
    RelayHooks hooks;
    hooks.forwarded = [this](uint32_t type, uint64_t wire_bytes, uint32_t copies)
    { m_forwardTrace(type, wire_bytes, copies); };
    m_role = std::make_unique<RelayRole>(m_port.get(), m_workers, std::move(hooks),
                                         m_storeAndForward ? RelayForwarding::kStoreAndForward
                                                           : RelayForwarding::kStream);
    m_port->endpoint()->SetReceiveCallback(ns3::MakeCallback(&RelayApp::HandleMessage, this));
    m_port->endpoint()->SetMessageStartedCallback(
        ns3::MakeCallback(&RelayApp::HandleMessageStarted, this));
}

void
RelayApp::StopApplication()
{
}

void
RelayApp::HandleMessageStarted(uint32_t peer, const hilosim::MessageMeta& meta)
{
    hilo::Status s = m_role->HandleMessageStart(peer, ToRoleMessageHead(meta));
    NS_ABORT_MSG_IF(!s.ok(), s.ToString());
}

void
RelayApp::HandleMessage(uint32_t peer, const hilosim::Message& message)
{
    hilo::Status s = m_role->HandleMessage(peer, ToRoleMessage(message));
    if (s.code() == hilo::StatusCode::kNotSupported)
    {
        NS_LOG_WARN(s.message());
        return;
    }
    NS_ABORT_MSG_IF(!s.ok(), s.ToString());
}

} // namespace hilosim
