#include "sim/apps/relay-app.h"

#include "sim/apps/app-messages.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <memory>

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
    m_endpoint = endpoint;
    m_workers = std::move(worker_peers);
}

void
RelayApp::DoDispose()
{
    m_endpoint = nullptr;
    ns3::Application::DoDispose();
}

void
RelayApp::StartApplication()
{
    NS_ABORT_MSG_IF(!m_endpoint, "RelayApp started without Setup");
    m_endpoint->SetReceiveCallback(ns3::MakeCallback(&RelayApp::HandleMessage, this));
}

void
RelayApp::StopApplication()
{
}

void
RelayApp::HandleMessage(uint32_t peer, const hilosim::Message& message)
{
    if (message.type != kUpdate)
    {
        NS_LOG_WARN("relay: ignoring message type " << message.type << " from " << peer);
        return;
    }
    auto bytes = std::make_shared<const std::string>(message.payload);
    for (uint32_t w : m_workers)
    {
        hilo::Status s = m_endpoint->Send(w, kUpdate, bytes, message.wire_bytes);
        NS_ABORT_MSG_IF(!s.ok(), "relay forward failed: " << s.ToString());
    }
    m_forwardTrace(message.type, message.wire_bytes, static_cast<uint32_t>(m_workers.size()));
}

} // namespace hilosim
