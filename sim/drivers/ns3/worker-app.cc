#include "sim/drivers/ns3/worker-app.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloWorkerApp");
NS_OBJECT_ENSURE_REGISTERED(WorkerApp);

ns3::TypeId
WorkerApp::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::WorkerApp")
            .SetParent<ns3::Application>()
            .SetGroupName("HiLo")
            .AddConstructor<WorkerApp>()
            .AddAttribute("CorruptVersion",
                          "Fault injection: flip one byte of the update to this version when it "
                          "arrives (0: never), to exercise rejection and resync.",
                          ns3::UintegerValue(0),
                          ns3::MakeUintegerAccessor(&WorkerApp::m_corruptVersion),
                          ns3::MakeUintegerChecker<uint64_t>())
            .AddTraceSource("RolloutDone", "A rollout finished and its trajectories were sent.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_rolloutTrace),
                            "hilosim::WorkerApp::RolloutTracedCallback")
            .AddTraceSource("UpdateReceived",
                            "A whole update message arrived (worker, position in arrival order).",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_updateReceivedTrace),
                            "hilosim::WorkerApp::VersionTracedCallback")
            .AddTraceSource("UpdateApplied", "The worker holds a new version, ready to sample.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_appliedTrace),
                            "hilosim::WorkerApp::ApplyTracedCallback")
            .AddTraceSource("HashMismatch",
                            "An update was rejected because the replayed state's hash differed.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_hashMismatchTrace),
                            "hilosim::WorkerApp::VersionTracedCallback")
            .AddTraceSource("Resync",
                            "The worker asked the learner for a catch-up from this version.",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_resyncTrace),
                            "hilosim::WorkerApp::VersionTracedCallback")
            .AddTraceSource("CaughtUp",
                            "The worker applied a catch-up (snapshot and ring updates).",
                            ns3::MakeTraceSourceAccessor(&WorkerApp::m_caughtUpTrace),
                            "hilosim::WorkerApp::CatchUpTracedCallback");
    return tid;
}

WorkerApp::WorkerApp() = default;
WorkerApp::~WorkerApp() = default;

void
WorkerApp::Setup(std::shared_ptr<ArmContext> context, ns3::Ptr<hilosim::MessageTransport> endpoint,
                 uint32_t worker, uint32_t learner_peer)
{
    NS_ABORT_MSG_IF(m_context, "WorkerApp::Setup called twice");
    m_context = std::move(context);
    m_endpoint = endpoint;
    m_worker = worker;
    m_learnerPeer = learner_peer;
}

void
WorkerApp::DeferStart()
{
    NS_ABORT_MSG_IF(!m_endpoint, "WorkerApp::DeferStart before Setup");
    m_deferred = true;
    m_endpoint->Abort(); // the connections TransportHelper opened never get going
}

const hilo::Status&
WorkerApp::failure() const
{
    return m_role && !m_role->failure().ok() ? m_role->failure() : m_failure;
}

void
WorkerApp::DoDispose()
{
    EndRole();
    m_endpoint = nullptr;
    m_context.reset();
    ns3::Application::DoDispose();
}

void
WorkerApp::StartApplication()
{
    NS_ABORT_MSG_IF(!m_context || !m_endpoint, "WorkerApp started without Setup");
    m_endpoint->SetReceiveCallback(ns3::MakeCallback(&WorkerApp::HandleMessage, this));
    m_endpoint->SetPeerConnectedCallback(ns3::MakeCallback(&WorkerApp::HandlePeerConnected, this));
    m_endpoint->SetPeerClosedCallback(ns3::MakeCallback(&WorkerApp::HandlePeerClosed, this));
    if (!m_deferred)
    {
        StartRole(/*rejoining=*/false);
    }
}

void
WorkerApp::StartRole(bool rejoining)
{
    WorkerHooks hooks;
    hooks.rollout_done = [this](const RolloutEvent& e) { m_rolloutTrace(e); };
    hooks.update_received = [this](uint32_t worker, uint64_t position)
    { m_updateReceivedTrace(worker, position); };
    hooks.applied = [this](const ApplyEvent& e) { m_appliedTrace(e); };
    hooks.hash_mismatch = [this](uint32_t worker, uint64_t version)
    { m_hashMismatchTrace(worker, version); };
    hooks.resync = [this](uint32_t worker, uint64_t from) { m_resyncTrace(worker, from); };
    hooks.caught_up = [this](const CatchUpEvent& e) { m_caughtUpTrace(e); };
    WorkerRoleOptions options;
    options.corrupt_version = m_corruptVersion;
    options.rejoining = rejoining;
    m_port = std::make_unique<Ns3RolePort>(m_endpoint);
    m_role = std::make_unique<WorkerRole>(m_context, m_port.get(), m_worker, m_learnerPeer, options,
                                          std::move(hooks));
    m_role->Start();
}

void
WorkerApp::EndRole()
{
    if (m_role && m_failure.ok() && !m_role->failure().ok())
    {
        m_failure = m_role->failure();
    }
    if (m_port)
    {
        m_port->Dispose();
    }
    m_role.reset();
    m_port.reset();
}

void
WorkerApp::Join()
{
    NS_ABORT_MSG_IF(!m_deferred || m_role,
                    "WorkerApp::Join: worker " << m_worker << " is not waiting to join");
    m_deferred = false;
    for (uint32_t peer : m_endpoint->GetDialedPeers())
    {
        m_endpoint->Redial(peer);
    }
    StartRole(/*rejoining=*/true);
}

void
WorkerApp::Crash()
{
    NS_ABORT_MSG_IF(!m_role, "WorkerApp::Crash: worker " << m_worker << " is not running");
    EndRole();
    m_endpoint->Abort();
}

void
WorkerApp::Restart()
{
    NS_ABORT_MSG_IF(m_role || m_deferred,
                    "WorkerApp::Restart: worker " << m_worker << " has not crashed");
    for (uint32_t peer : m_endpoint->GetDialedPeers())
    {
        m_endpoint->Redial(peer);
    }
    StartRole(/*rejoining=*/true);
}

void
WorkerApp::DivergeNextReplay()
{
    NS_ABORT_MSG_IF(!m_role,
                    "WorkerApp::DivergeNextReplay: worker " << m_worker << " is not running");
    m_role->DivergeNextReplay();
}

void
WorkerApp::StopApplication()
{
}

void
WorkerApp::HandleMessage(uint32_t peer, const hilosim::Message& message)
{
    if (!m_role)
    {
        return; // crashed or not joined: nobody reads
    }
    hilo::Status s = m_role->HandleMessage(peer, ToRoleMessage(message));
    if (!s.ok())
    {
        m_role->Fail(s); // the frame checks passed: an unusable message is a bug
    }
}

void
WorkerApp::HandlePeerConnected(uint32_t peer)
{
    if (m_role)
    {
        m_role->HandlePeerConnected(peer);
    }
}

void
WorkerApp::HandlePeerClosed(uint32_t peer, bool error)
{
    if (m_role)
    {
        m_role->HandlePeerClosed(peer, error);
    }
}

} // namespace hilosim
