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
                            "hilosim::WorkerApp::VersionTracedCallback");
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
    m_port = std::make_unique<Ns3RolePort>(endpoint);
    m_worker = worker;
    m_learnerPeer = learner_peer;
}

const hilo::Status&
WorkerApp::failure() const
{
    return m_role ? m_role->failure() : m_setupFailure;
}

void
WorkerApp::DoDispose()
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
WorkerApp::StartApplication()
{
    NS_ABORT_MSG_IF(!m_context || !m_port, "WorkerApp started without Setup");
    WorkerHooks hooks;
    hooks.rollout_done = [this](const RolloutEvent& e) { m_rolloutTrace(e); };
    hooks.update_received = [this](uint32_t worker, uint64_t position)
    { m_updateReceivedTrace(worker, position); };
    hooks.applied = [this](const ApplyEvent& e) { m_appliedTrace(e); };
    hooks.hash_mismatch = [this](uint32_t worker, uint64_t version)
    { m_hashMismatchTrace(worker, version); };
    hooks.resync = [this](uint32_t worker, uint64_t from) { m_resyncTrace(worker, from); };
    WorkerRoleOptions options;
    options.corrupt_version = m_corruptVersion;
    m_role = std::make_unique<WorkerRole>(m_context, m_port.get(), m_worker, m_learnerPeer, options,
                                          std::move(hooks));
    m_port->endpoint()->SetReceiveCallback(ns3::MakeCallback(&WorkerApp::HandleMessage, this));
    m_role->Start();
}

void
WorkerApp::StopApplication()
{
}

void
WorkerApp::HandleMessage(uint32_t peer, const hilosim::Message& message)
{
    hilo::Status s = m_role->HandleMessage(peer, ToRoleMessage(message));
    if (!s.ok())
    {
        m_role->Fail(s); // TCP delivers what was sent: an unusable message is a bug
    }
}

} // namespace hilosim
