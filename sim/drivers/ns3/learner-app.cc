#include "sim/drivers/ns3/learner-app.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloLearnerApp");
NS_OBJECT_ENSURE_REGISTERED(LearnerApp);

ns3::TypeId
LearnerApp::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::LearnerApp")
            .SetParent<ns3::Application>()
            .SetGroupName("HiLo")
            .AddConstructor<LearnerApp>()
            .AddAttribute(
                "RingCapacity", "Update frames kept for catch-up of workers that fell behind.",
                ns3::UintegerValue(64), ns3::MakeUintegerAccessor(&LearnerApp::m_ringCapacity),
                ns3::MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("SnapshotInterval", "Versions between snapshots (<= RingCapacity).",
                          ns3::UintegerValue(32),
                          ns3::MakeUintegerAccessor(&LearnerApp::m_snapshotInterval),
                          ns3::MakeUintegerChecker<uint32_t>(1))
            .AddTraceSource("TrajectoriesReceived",
                            "A worker's trajectory batch for a round arrived.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_trajectoriesTrace),
                            "hilosim::LearnerApp::TrajectoriesTracedCallback")
            .AddTraceSource("UpdatePublished",
                            "A version was trained, encoded and handed to the transport.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_publishTrace),
                            "hilosim::LearnerApp::PublishTracedCallback")
            .AddTraceSource("Evaluated", "The replica view was evaluated on the held-out prompts.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_evalTrace),
                            "hilosim::LearnerApp::EvalTracedCallback")
            .AddTraceSource("ResyncServed",
                            "A worker asked to catch up and was sent snapshot + updates.",
                            ns3::MakeTraceSourceAccessor(&LearnerApp::m_resyncTrace),
                            "hilosim::LearnerApp::ResyncTracedCallback");
    return tid;
}

LearnerApp::LearnerApp() = default;
LearnerApp::~LearnerApp() = default;

void
LearnerApp::Setup(std::shared_ptr<ArmContext> context, ns3::Ptr<hilosim::MessageTransport> endpoint,
                  std::vector<uint32_t> update_peers)
{
    NS_ABORT_MSG_IF(m_context, "LearnerApp::Setup called twice");
    m_context = std::move(context);
    m_port = std::make_unique<Ns3RolePort>(endpoint);
    m_updatePeers = std::move(update_peers);
}

const hilo::Status&
LearnerApp::failure() const
{
    return m_role ? m_role->failure() : m_setupFailure;
}

void
LearnerApp::DoDispose()
{
    m_role.reset();
    if (m_port)
    {
        m_port->Dispose();
    }
    m_context.reset();
    ns3::Application::DoDispose();
}

void
LearnerApp::StartApplication()
{
    NS_ABORT_MSG_IF(!m_context || !m_port, "LearnerApp started without Setup");
    LearnerHooks hooks;
    hooks.trajectories = [this](uint32_t worker, uint64_t round, uint64_t wire_bytes)
    { m_trajectoriesTrace(worker, round, wire_bytes); };
    hooks.published = [this](const PublishEvent& e) { m_publishTrace(e); };
    hooks.evaluated = [this](const EvalEvent& e) { m_evalTrace(e); };
    hooks.resync_served = [this](uint32_t worker, uint64_t from) { m_resyncTrace(worker, from); };
    m_role = std::make_unique<LearnerRole>(
        m_context, m_port.get(), m_updatePeers,
        hilo::PublisherOptions{m_ringCapacity, m_snapshotInterval}, std::move(hooks));
    m_port->endpoint()->SetReceiveCallback(ns3::MakeCallback(&LearnerApp::HandleMessage, this));
    m_port->endpoint()->SetPeerConnectedCallback(
        ns3::MakeCallback(&LearnerApp::HandlePeerConnected, this));
    m_role->Start();
}

void
LearnerApp::StopApplication()
{
}

void
LearnerApp::HandleMessage(uint32_t peer, const hilosim::Message& message)
{
    hilo::Status s = m_role->HandleMessage(peer, ToRoleMessage(message));
    if (!s.ok())
    {
        m_role->Fail(s); // TCP delivers what was sent: an unusable message is a bug
    }
}

void
LearnerApp::HandlePeerConnected(uint32_t peer)
{
    m_role->HandlePeerConnected(peer);
}

} // namespace hilosim
