#include "sim/drivers/process/node-runner.h"

#include "sim/drivers/process/arm-frame-limit.h"
#include "sim/drivers/process/event-log.h"
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/peer-limits.h"
#include "sim/drivers/process/process-faults.h"
#include "sim/drivers/process/process-port.h"
#include "sim/drivers/process/process-support.h"
#include "sim/drivers/process/tcp-info-sampler.h"
#include "sim/drivers/process/tcp-transport.h"
#include "sim/roles/learner-role.h"
#include "sim/roles/peer-ids.h"
#include "sim/roles/relay-role.h"
#include "sim/roles/role-messages.h"
#include "sim/roles/worker-role.h"
#include "sim/run/arm-context-builder.h"
#include "sim/scenario/scenario-loader.h"

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

namespace hilosim
{
namespace
{

namespace asio = boost::asio;

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitBadInput = 2;

// What every node shares: the event loop, the clock, the exit decision, the watchdog.
class NodeLoop
{
  public:
    NodeLoop(std::string label, std::ostream& err, int64_t epoch_ns, double stall_timeout_s)
      : m_label(std::move(label))
      , m_err(err)
      , m_epoch(epoch_ns > 0 ? SteadyFromNs(epoch_ns) : std::chrono::steady_clock::now())
      , m_stallTimeout(stall_timeout_s)
      , m_signals(m_io, SIGINT, SIGTERM)
      , m_watchdog(m_io)
    {
    }

    asio::io_context& io() { return m_io; }
    void SetEpochNs(int64_t ns) { m_epoch = SteadyFromNs(ns); }
    std::chrono::steady_clock::time_point epoch() const { return m_epoch; }
    int64_t NowNs() const
    {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - m_epoch)
            .count();
    }
    void Log(const std::string& line) { m_err << m_label << ": " << line << std::endl; }
    /// A line that already names its node (the transport's).
    void LogRaw(const std::string& line) { m_err << line << std::endl; }

    /// Ends the loop with `code` (the first call wins); `message` goes to stderr.
    void Finish(int code, const std::string& message)
    {
        if (m_code >= 0)
        {
            return;
        }
        m_code = code;
        if (!message.empty())
        {
            Log(message);
        }
        m_io.stop();
    }
    bool finished() const { return m_code >= 0; }

    void Progress() { m_lastProgress = std::chrono::steady_clock::now(); }

    /// Set-up is done: with `sync` tells hilo-emu (a "ready PORT" line on stdout) and waits for
    /// the run's epoch on stdin. False when stdin ends or carries no number.
    bool Ready(bool sync, uint16_t port)
    {
        if (!sync)
        {
            return true;
        }
        std::cout << "ready " << port << std::endl;
        std::string line;
        if (!std::getline(std::cin, line) || line.empty() ||
            line.find_first_not_of("0123456789") != std::string::npos)
        {
            Log("no epoch on stdin (got \"" + line + "\")");
            return false;
        }
        SetEpochNs(std::stoll(line));
        return true;
    }

    /// Calls `start` at the run's epoch (at once when it has passed): every node of a run starts
    /// its role at modelled time 0, as in the simulator, whatever its own start-up took.
    void AtEpoch(std::function<void()> start, bool late_is_expected = false)
    {
        const auto now = std::chrono::steady_clock::now();
        if (now >= m_epoch)
        {
            const double late = std::chrono::duration<double>(now - m_epoch).count();
            if (late > 0.05 && !late_is_expected)
            {
                Log("started " + std::to_string(late) +
                    " s after the run's epoch (start-up took longer than hilo-emu allowed)");
            }
            m_io.post(std::move(start));
            return;
        }
        m_startTimer = std::make_unique<asio::steady_timer>(m_io, m_epoch);
        m_startTimer->async_wait(
            [start = std::move(start)](const boost::system::error_code& ec)
            {
                if (!ec)
                    start();
            });
    }

    /// Runs until Finish. `waiting_for` says what a stalled node waits for.
    int Run(std::function<std::string()> waiting_for)
    {
        m_waitingFor = std::move(waiting_for);
        m_signals.async_wait(
            [this](const boost::system::error_code& ec, int sig)
            {
                if (!ec)
                    Finish(128 + sig, std::string("stopped by signal ") + std::to_string(sig));
            });
        Progress();
        Watch();
        if (m_code < 0)
        {
            m_io.run();
        }
        return m_code < 0 ? kExitRuntime : m_code;
    }

  private:
    void Watch()
    {
        m_watchdog.expires_after(std::chrono::milliseconds(500));
        m_watchdog.async_wait(
            [this](const boost::system::error_code& ec)
            {
                if (ec)
                    return;
                const double idle =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - m_lastProgress)
                        .count();
                if (idle > m_stallTimeout)
                {
                    Finish(kExitRuntime,
                           "no progress for " + std::to_string(int(idle)) + " s (stall timeout " +
                               std::to_string(int(m_stallTimeout)) + " s): " + m_waitingFor());
                    return;
                }
                Watch();
            });
    }

    std::string m_label;
    std::ostream& m_err;
    asio::io_context m_io;
    std::chrono::steady_clock::time_point m_epoch;
    double m_stallTimeout;
    asio::signal_set m_signals;
    asio::steady_timer m_watchdog;
    std::chrono::steady_clock::time_point m_lastProgress;
    std::function<std::string()> m_waitingFor;
    std::unique_ptr<asio::steady_timer> m_startTimer;
    int m_code{-1};
};

// Transport events that arrive before this node's role started (a peer's clock reached the
// epoch first): kept and handed over, in order, right after the role starts.
class EarlyMessages
{
  public:
    enum Kind
    {
        kMessage,
        kConnected,
        kClosed, // cleanly
        kFailed, // closed with an error
    };
    /// False (nothing kept) once kMaxEarlyMessages or kMaxEarlyBytes are held (peer-limits.h).
    bool Keep(uint32_t peer, const RoleMessage& m)
    {
        if (m_kept.size() >= kMaxEarlyMessages || m_bytes + m.payload.size() > kMaxEarlyBytes)
            return false;
        m_bytes += m.payload.size();
        m_kept.push_back(
            {kMessage, peer, m.type, std::string(m.payload), m.wire_bytes, m.sequence});
        return true;
    }
    void KeepEvent(uint32_t peer, Kind kind) { m_kept.push_back({kind, peer, 0, {}, 0, 0}); }
    template<typename OnMessage, typename OnConnected, typename OnClosed>
    void Replay(OnMessage message, OnConnected connected, OnClosed closed)
    {
        std::vector<Kept> kept;
        kept.swap(m_kept);
        m_bytes = 0;
        for (const Kept& k : kept)
        {
            if (k.kind == kConnected)
            {
                connected(k.peer);
                continue;
            }
            if (k.kind != kMessage)
            {
                closed(k.peer, k.kind == kFailed);
                continue;
            }
            RoleMessage m;
            m.type = k.type;
            m.payload = k.payload;
            m.wire_bytes = k.wire_bytes;
            m.sequence = k.sequence;
            message(k.peer, m);
        }
    }

  private:
    struct Kept
    {
        Kind kind;
        uint32_t peer;
        uint32_t type;
        std::string payload;
        uint64_t wire_bytes;
        uint64_t sequence;
    };
    std::vector<Kept> m_kept;
    uint64_t m_bytes{0}; // payload bytes in m_kept
};

// What a role does with the transport's events.
struct RoleHandlers
{
    std::function<bool()> started;
    /// Whether a message counts as progress for the stall watchdog (empty: none does; the role's
    /// hooks report training progress instead, so that chatter cannot keep a stalled node up).
    std::function<bool(uint32_t peer, const RoleMessage& m)> progress;
    std::function<hilo::Status(uint32_t peer, const RoleMessage& m)> message;
    std::function<void(uint32_t peer)> connected;
    std::function<void(uint32_t peer, bool error)> closed;
};

// Routes the transport's events to a role: kept, in order, until the role has started, then
// handed to it. A message the role cannot use closes that peer's connection (logged by the
// transport); the role goes on.
class EventRouter
{
  public:
    EventRouter(NodeLoop* loop, TcpTransport* const* transport)
      : m_loop(loop)
      , m_transport(transport)
    {
    }
    void SetHandlers(RoleHandlers handlers) { m_role = std::move(handlers); }

    void OnMessage(uint32_t peer, const RoleMessage& m)
    {
        if (m_role.progress && m_role.progress(peer, m))
            m_loop->Progress();
        if (!m_role.started())
        {
            if (!m_early.Keep(peer, m))
                (*m_transport)->Disconnect(peer, "more messages before this node's role started "
                                                 "than it keeps (peer-limits.h)");
        }
        else
            Handle(peer, m);
    }
    void OnConnected(uint32_t peer)
    {
        if (!m_role.started())
            m_early.KeepEvent(peer, EarlyMessages::kConnected);
        else
            m_role.connected(peer);
    }
    void OnClosed(uint32_t peer, bool error)
    {
        if (!m_role.started())
            m_early.KeepEvent(peer, error ? EarlyMessages::kFailed : EarlyMessages::kClosed);
        else
            m_role.closed(peer, error);
    }
    /// Hands over what arrived before the role started.
    void RoleStarted()
    {
        m_early.Replay([this](uint32_t peer, const RoleMessage& m) { Handle(peer, m); },
                       [this](uint32_t peer) { m_role.connected(peer); },
                       [this](uint32_t peer, bool error) { m_role.closed(peer, error); });
    }

  private:
    void Handle(uint32_t peer, const RoleMessage& m)
    {
        hilo::Status s = m_role.message(peer, m);
        if (!s.ok())
            (*m_transport)->Disconnect(peer, "unusable message: " + s.message());
    }

    NodeLoop* m_loop;
    TcpTransport* const* m_transport;
    RoleHandlers m_role;
    EarlyMessages m_early;
};

// The scenario, the arm and its context, as the simulator builds them.
struct ArmSetup
{
    LoadedScenario loaded;
    size_t arm_index{0};
    std::shared_ptr<ArmContext> context;
    std::vector<uint32_t> order; // topology order
    std::string key;             // shared key (--key-file); empty: peers are not authenticated
    uint64_t frame_limit{0};     // largest message payload a peer may send (arm-frame-limit.h)
};

// What every node's transport shares: its id and name, the run's clock, the key, the frame limit,
// and the one reconnect policy (the roles': the transport does not redial by itself).
TcpTransportOptions
BaseTransportOptions(uint32_t id, const std::string& name, NodeLoop& loop, const ArmSetup& setup)
{
    TcpTransportOptions topt;
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

int
LoadArm(const NodeOptions& o, const ScenarioCatalog& catalog, std::ostream& err, ArmSetup* setup)
{
    auto loaded = LoadScenarioFile(o.scenario, o.overrides, catalog);
    if (!loaded.ok())
    {
        err << loaded.status().message() << "\nhilo-node: " << o.scenario
            << " is not a valid scenario\n";
        return kExitBadInput;
    }
    setup->loaded = std::move(*loaded);
    const ResolvedScenario& sc = setup->loaded.resolved;
    std::string names;
    bool found = false;
    for (size_t i = 0; i < sc.arms.size(); ++i)
    {
        names += (i ? ", " : "") + sc.arms[i].name;
        if (sc.arms[i].name == o.arm)
        {
            setup->arm_index = i;
            found = true;
        }
    }
    if (!found)
    {
        err << "hilo-node: --arm \"" << o.arm << "\" is not an arm of " << o.scenario
            << "; allowed: " << names << "\n";
        return kExitBadInput;
    }
    auto context = BuildArmContext(sc, sc.arms[setup->arm_index]);
    if (!context.ok())
    {
        err << "hilo-node: " << o.scenario << ": arm '" << o.arm
            << "': " << context.status().message() << "\n";
        return kExitBadInput;
    }
    setup->context = std::move(*context);
    setup->order = TopologyWorkerOrder(sc);
    return kExitOk;
}

std::unique_ptr<EventLogWriter>
OpenEvents(const NodeOptions& o, std::ostream& err, bool* ok)
{
    *ok = true;
    if (o.events.empty())
    {
        return nullptr;
    }
    auto w = EventLogWriter::Open(o.events);
    if (!w.ok())
    {
        err << "hilo-node: " << w.status().message() << "\n";
        *ok = false;
        return nullptr;
    }
    return std::move(*w);
}

bool
WritePortFile(const std::string& path, uint16_t port, std::ostream& err)
{
    if (path.empty())
    {
        return true;
    }
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << port << "\n";
        if (!f.flush())
        {
            err << "hilo-node: cannot write " << tmp << "\n";
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
    {
        err << "hilo-node: cannot rename " << tmp << " to " << path << "\n";
        return false;
    }
    return true;
}

// A node that listens beyond loopback without a key lets anyone on the network join the run.
bool
ListenIsSafe(const std::string& who, const std::string& host, const NodeOptions& o,
             const ArmSetup& setup, std::ostream& err)
{
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(host, ec);
    if (!setup.key.empty() || o.insecure || (!ec && address.is_loopback()))
    {
        return true;
    }
    err << "hilo-node " << who << ": refusing to listen on " << host
        << " without --key-file: any host that can reach it could join the run as a worker or "
           "relay, feed the learner batches and be served its updates. Give every node of the "
           "run the same --key-file (for example one made with `openssl rand -hex 32`), or pass "
           "--insecure on a network you trust.\n";
    return false;
}

std::string
ListIds(const std::vector<uint32_t>& ids)
{
    std::string s;
    for (uint32_t id : ids)
        s += (s.empty() ? "" : ", ") + std::to_string(id);
    return s.empty() ? "none" : s;
}

// What every node's set-up shares: the loop, the transport with its callbacks routed to the role
// (through the router, which keeps what arrives before the role starts), the port, and the end.
// A node adds its own peers (options().accept_peer) and its own reactions to connections and
// closes before Open(), then hands the role over with Route().
class NodeHost
{
  public:
    NodeHost(const std::string& label, uint32_t id, const NodeOptions& o, const ArmSetup& setup,
             std::ostream& err)
      : m_loop(label, err, o.epoch_ns, o.stall_timeout_s)
      , m_options(BaseTransportOptions(id, label, m_loop, setup))
      , m_router(&m_loop, &m_transportPtr)
      , m_tracePath(o.trace_tcp)
      , m_traceArm(o.arm)
      , m_traceNode(TcpTraceNodeName(id))
    {
    }

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
    void Open(std::function<std::string()> failure)
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
        m_transportPtr = m_transport.get();
        m_port = std::make_unique<ProcessPort>(m_loop.io(), m_transport.get(), m_loop.epoch(),
                                               [this, failure = std::move(failure)]()
                                               { m_loop.Finish(kExitRuntime, failure()); });
    }

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

    /// Set-up is done: tells hilo-emu and takes the run's epoch (NodeLoop::Ready).
    bool Ready(bool sync, uint16_t port)
    {
        if (!m_loop.Ready(sync, port))
            return false;
        m_port->SetEpoch(m_loop.epoch());
        return StartTcpTrace();
    }

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
    int Run(std::function<std::string()> waiting_for)
    {
        const int code = m_loop.Run(std::move(waiting_for));
        if (m_tcpTrace)
            m_tcpTrace->Stop(); // before the connections close
        m_port->CancelTimers();
        m_transport->CloseAll();
        return code;
    }

  private:
    /// With --trace-tcp, samples the connections from the run's epoch on (false: no trace file).
    bool StartTcpTrace()
    {
        if (m_tracePath.empty())
            return true;
        auto sampler = TcpInfoSampler::Open(
            m_loop.io(), m_transport.get(), m_traceArm, m_traceNode,
            [this]()
            {
                return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                     m_loop.epoch())
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

    NodeLoop m_loop;
    TcpTransportOptions m_options;
    TcpTransport* m_transportPtr{nullptr};
    EventRouter m_router;
    std::unique_ptr<TcpTransport> m_transport;
    std::unique_ptr<ProcessPort> m_port;
    std::string m_tracePath;
    std::string m_traceArm;
    std::string m_traceNode;
    std::unique_ptr<TcpInfoSampler> m_tcpTrace; // after m_transport: destroyed first
};

int
RunLearner(const NodeOptions& o, ArmSetup& setup, std::ostream& err)
{
    std::string host;
    uint16_t listen_port = 0;
    if (!SplitHostPort(o.listen, &host, &listen_port))
    {
        err << "hilo-node learner: --listen must be HOST:PORT, got \"" << o.listen << "\"\n";
        return kExitBadInput;
    }
    if (!ListenIsSafe("learner", host, o, setup, err))
        return kExitBadInput;
    if (o.restore && o.checkpoint.empty())
    {
        err << "hilo-node learner: --restore needs --checkpoint FILE (the file to start from)\n";
        return kExitBadInput;
    }
    bool ok = true;
    auto events = OpenEvents(o, err, &ok);
    if (!ok)
        return kExitBadInput;
    const ResolvedScenario& sc = setup.loaded.resolved;
    const uint32_t workers = setup.context->workers;
    std::vector<uint32_t> update_peers;
    if (sc.network.topology == TopologyKind::kRelay)
    {
        for (uint32_t r = 0; r < sc.network.regions.size(); ++r)
            update_peers.push_back(RelayPeerId(r));
    }
    else
    {
        for (uint32_t w = 0; w < workers; ++w)
            update_peers.push_back(WorkerPeerId(w));
    }

    std::unique_ptr<LearnerRole> role; // outlives the node: the transport's callbacks use it
    NodeHost node("learner", kLearnerPeerId, o, setup, err);
    NodeLoop& loop = node.loop();
    // The scenario's workers, and its relays in a relay topology; nobody else.
    const uint32_t relays = sc.network.topology == TopologyKind::kRelay
                                ? static_cast<uint32_t>(sc.network.regions.size())
                                : 0;
    node.options().accept_peer = [workers, relays](uint32_t id)
    { return id < workers || (IsRelayPeerId(id) && id - kRelayPeerIdBase < relays); };
    std::map<uint32_t, bool> done_before; // what each connected worker's last done said
    node.on_closed = [&](uint32_t peer, bool)
    {
        done_before.erase(peer);
        return false; // the role hears of it too
    };
    node.Open([&]() { return role->failure().ToString(); });

    LearnerHooks hooks;
    // Training progress for the watchdog: a batch accepted, a member dropped from a round, a
    // version published, a worker newly at the last version; not chatter (a repeated done).
    hooks.trajectories = [&](uint32_t, uint64_t, uint64_t) { loop.Progress(); };
    hooks.member_dropped = [&](uint32_t worker, uint64_t, DropReason reason, const std::string& why)
    {
        loop.Progress();
        loop.Log("dropped worker " + std::to_string(worker) + " from its round: " + why);
        if (reason == DropReason::kNonFiniteGradient)
            node.transport().Disconnect(WorkerPeerId(worker), why);
    };
    hooks.checkpoint_note = [&](const std::string& line) { loop.Log(line); };
    hooks.published = [&](const PublishEvent& e)
    {
        loop.Progress();
        if (events)
            events->Publish(e);
    };
    hooks.evaluated = [&](const EvalEvent& e)
    {
        if (events)
            events->Eval(e);
    };
    // Restored from the checkpoint: its version's publish (and eval) logged once, even when the
    // first learner was killed between writing the checkpoint and logging them.
    hooks.restored = [&](const PublishEvent& e)
    {
        if (!events)
            return;
        auto evaluated = events->Restored(e);
        if (!evaluated.ok())
            loop.Finish(kExitRuntime, evaluated.status().message());
        else if (!*evaluated && role->EvaluatesAt(e.version))
            role->Evaluate();
    };
    const ProcessFaults faults(sc);
    hooks.worker_done = [&](uint32_t worker, uint64_t version, uint64_t hash)
    {
        const bool match = role->done_workers().at(worker);
        auto seen = done_before.find(worker);
        if (seen == done_before.end() || seen->second != match)
            loop.Progress();
        done_before[worker] = match;
        if (events)
            events->Done(worker, version, hash, match);
        // Every worker still running at the end (not crashed for good) must hold the last version.
        for (uint32_t w = 0; w < workers; ++w)
        {
            if (faults.gone().count(w) == 0 && role->done_workers().count(w) == 0)
                return;
        }
        std::vector<uint32_t> bad;
        for (const auto& [w, m] : role->done_workers())
        {
            if (!m)
                bad.push_back(w);
        }
        loop.Finish(bad.empty() ? kExitOk : kExitRuntime,
                    bad.empty() ? ""
                                : "workers " + ListIds(bad) +
                                      " ended at a state hash other than the learner's");
    };
    LearnerRoleOptions lopt;
    std::vector<uint32_t> initial;
    for (uint32_t w = 0; w < workers; ++w)
    {
        if (faults.late().count(w) == 0)
            initial.push_back(WorkerPeerId(w)); // a late joiner is waited for once it connects
    }
    lopt.members = initial;
    lopt.checkpoint_path = o.checkpoint;
    lopt.restore = o.restore;
    role = std::make_unique<LearnerRole>(setup.context, &node.port(), update_peers,
                                         hilo::PublisherOptions{}, std::move(hooks), lopt);
    node.Route(role.get(), [&]() { return role->started(); });
    uint16_t bound = 0;
    const int listening =
        node.Listen("hilo-node learner", host, listen_port, o.port_file, err, &bound);
    if (listening != kExitOk)
        return listening;
    if (events)
        events->Process("learner", 0, getpid());
    if (!node.Ready(o.sync_start, bound))
        return kExitRuntime;
    node.StartAtEpoch(role.get(), /*late_is_expected=*/o.restore);
    return node.Run(
        [&]()
        {
            if (!role->started())
                return std::string("not started");
            const uint64_t v = role->publisher().version();
            if (v < setup.context->steps)
            {
                std::vector<uint32_t> missing;
                for (uint32_t w = 0; w < workers; ++w)
                {
                    if (!node.transport().IsConnected(WorkerPeerId(w)))
                        missing.push_back(w);
                }
                return "at version " + std::to_string(v) + ", waiting for trajectories of round " +
                       std::to_string(v + 1) + " (workers not connected: " + ListIds(missing) + ")";
            }
            std::vector<uint32_t> missing;
            for (uint32_t w = 0; w < workers; ++w)
            {
                if (role->done_workers().count(w) == 0)
                    missing.push_back(w);
            }
            return "published the last version; waiting for workers " + ListIds(missing) +
                   " to hold it";
        });
}

int
RunWorker(const NodeOptions& o, ArmSetup& setup, std::ostream& err)
{
    const ResolvedScenario& sc = setup.loaded.resolved;
    const uint32_t workers = setup.context->workers;
    if (o.index >= workers)
    {
        err << "hilo-node worker: --index " << o.index << " is out of range; the scenario has "
            << workers << " workers (0 to " << workers - 1 << ")\n";
        return kExitBadInput;
    }
    std::string learner_host, relay_host;
    uint16_t learner_port = 0, relay_port = 0;
    if (!SplitHostPort(o.connect, &learner_host, &learner_port) || learner_port == 0)
    {
        err << "hilo-node worker: --connect must be the learner's HOST:PORT, got \"" << o.connect
            << "\"\n";
        return kExitBadInput;
    }
    const bool relayed = sc.network.topology == TopologyKind::kRelay;
    if (relayed != !o.relay.empty() ||
        (relayed && (!SplitHostPort(o.relay, &relay_host, &relay_port) || relay_port == 0)))
    {
        err << "hilo-node worker: "
            << (relayed ? "a relay topology needs --relay HOST:PORT (its region's relay)"
                        : "--relay is only for relay topologies")
            << "\n";
        return kExitBadInput;
    }
    bool ok = true;
    auto events = OpenEvents(o, err, &ok);
    if (!ok)
        return kExitBadInput;

    const std::string label = "worker " + std::to_string(o.index);
    std::unique_ptr<WorkerRole> role; // outlives the node: the transport's callbacks use it
    NodeHost node(label, WorkerPeerId(o.index), o, setup, err);
    NodeLoop& loop = node.loop();
    bool done_sent = false;
    bool ever_connected = false;
    node.on_connected = [&](uint32_t peer)
    {
        if (peer == kLearnerPeerId)
            ever_connected = true;
    };
    node.on_closed = [&](uint32_t peer, bool)
    {
        if (peer != kLearnerPeerId || !done_sent)
            return false;
        loop.Finish(kExitOk, ""); // the learner ends the run once every worker is done
        return true;
    };
    // A listener that fails its proof may be a process that took the port while the learner
    // restarts: the role redials with its backoff (the watchdog bounds the wait).
    node.on_authentication_failed = [&](uint32_t peer, const std::string&)
    {
        loop.Log(std::string("the ") + (peer == kLearnerPeerId ? "learner" : "relay") +
                 " did not prove the key; dialling again after the backoff");
    };
    node.Open([&]() { return role->failure().ToString(); });
    WorkerHooks hooks;
    hooks.rollout_done = [&](const RolloutEvent& e)
    {
        loop.Progress();
        if (events)
            events->Rollout(e);
    };
    hooks.applied = [&](const ApplyEvent& e)
    {
        loop.Progress();
        if (events)
            events->Apply(e);
    };
    // Only a kDone that left (the last version reached with its hash checked) lets the learner's
    // close end this worker with success.
    hooks.done_sent = [&](uint32_t, uint64_t) { done_sent = true; };
    hooks.hash_mismatch = [&](uint32_t worker, uint64_t version)
    {
        if (events)
            events->Mismatch(worker, version);
    };
    hooks.resync = [&](uint32_t worker, uint64_t from)
    {
        if (events)
            events->Resync(worker, from);
    };
    hooks.caught_up = [&](const CatchUpEvent& e)
    {
        loop.Progress();
        if (events)
            events->CatchUp(e);
    };
    WorkerRoleOptions wopt;
    wopt.announce_done = true;
    wopt.rejoining = o.rejoin;
    role = std::make_unique<WorkerRole>(setup.context, &node.port(), o.index, kLearnerPeerId, wopt,
                                        std::move(hooks));
    node.Route(role.get(), [&]() { return role->started(); });
    if (events)
        events->Process("worker", o.index, getpid());
    node.transport().Connect(kLearnerPeerId, learner_host, learner_port);
    if (relayed)
    {
        const int32_t region = sc.workers[setup.order[o.index]].region_index;
        node.transport().Connect(RelayPeerId(static_cast<uint32_t>(region)), relay_host,
                                 relay_port);
    }
    if (!node.Ready(o.sync_start, 0))
        return kExitRuntime;
    node.StartAtEpoch(role.get(), /*late_is_expected=*/o.rejoin);
    // Fault injection: replays that diverge after the given modelled times.
    std::vector<std::unique_ptr<boost::asio::steady_timer>> diverge;
    for (double at : o.diverge_at_s)
    {
        diverge.push_back(std::make_unique<boost::asio::steady_timer>(
            loop.io(), loop.epoch() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::duration<double>(at))));
        diverge.back()->async_wait(
            [&](const boost::system::error_code& ec)
            {
                if (!ec && role->started())
                    role->DivergeNextReplay();
            });
    }
    return node.Run(
        [&]()
        {
            if (!node.transport().IsConnected(kLearnerPeerId))
            {
                return std::string(ever_connected ? "lost" : "never reached") + " the learner at " +
                       o.connect;
            }
            if (!role->started())
                return std::string("not started");
            return "at version " + std::to_string(role->replica().version()) +
                   ", waiting for updates from the learner";
        });
}

int
RunRelay(const NodeOptions& o, ArmSetup& setup, std::ostream& err)
{
    const ResolvedScenario& sc = setup.loaded.resolved;
    if (sc.network.topology != TopologyKind::kRelay)
    {
        err << "hilo-node relay: the scenario's topology is "
            << TopologyKindName(sc.network.topology) << ", not relay\n";
        return kExitBadInput;
    }
    if (o.index >= sc.network.regions.size())
    {
        err << "hilo-node relay: --index " << o.index << " is out of range; the scenario has "
            << sc.network.regions.size() << " regions\n";
        return kExitBadInput;
    }
    const std::string forwarding = UnsupportedRelayForwarding(sc);
    if (!forwarding.empty())
    {
        err << "hilo-node relay: " << o.scenario << ": " << forwarding << "\n";
        return kExitBadInput;
    }
    std::string host, learner_host;
    uint16_t listen_port = 0, learner_port = 0;
    if (!SplitHostPort(o.listen, &host, &listen_port) ||
        !SplitHostPort(o.connect, &learner_host, &learner_port) || learner_port == 0)
    {
        err << "hilo-node relay: needs --listen HOST:PORT and --connect LEARNER_HOST:PORT\n";
        return kExitBadInput;
    }
    if (!ListenIsSafe("relay", host, o, setup, err))
        return kExitBadInput;
    std::vector<uint32_t> region_workers;
    for (uint32_t t = 0; t < setup.order.size(); ++t)
    {
        if (sc.workers[setup.order[t]].region_index == static_cast<int32_t>(o.index))
            region_workers.push_back(WorkerPeerId(t));
    }
    const std::string label = "relay " + std::to_string(o.index);
    std::unique_ptr<RelayRole> role; // outlives the node: the transport's callbacks use it
    NodeHost node(label, RelayPeerId(o.index), o, setup, err);
    // The region's workers; nobody else.
    node.options().accept_peer = [&region_workers](uint32_t id)
    { return std::find(region_workers.begin(), region_workers.end(), id) != region_workers.end(); };
    // The run is over once the learner is gone after the last version, and so are the region's
    // workers (they leave when the learner closes at the end). A learner gone before the last
    // version (killed, about to be restarted) is dialled again after the role's backoff, whether
    // or not any of the region's workers is connected.
    bool learner_seen = false; // a dial that never connected is no sign of the end
    bool learner_gone = false;
    node.on_connected = [&](uint32_t peer)
    {
        if (peer == kLearnerPeerId)
        {
            learner_seen = true;
            learner_gone = false;
        }
    };
    node.on_closed = [&](uint32_t peer, bool)
    {
        if (peer == kLearnerPeerId)
            learner_gone = learner_seen;
        for (uint32_t w : region_workers)
        {
            if (node.transport().IsConnected(w))
                return false;
        }
        if (!learner_gone || !role->HoldsLastVersion())
            return false;
        node.loop().Finish(kExitOk, "");
        return true;
    };
    node.on_authentication_failed = [&](uint32_t, const std::string& why)
    { node.loop().Finish(kExitRuntime, "authentication failed with the learner: " + why); };
    node.Open([]() { return std::string("relay failed"); });
    RelayRoleOptions ropt;
    ropt.learner_peer = kLearnerPeerId; // updates come from the learner only
    ropt.restarted = o.rejoin;
    ropt.last_version = setup.context->steps;
    role = std::make_unique<RelayRole>(&node.port(), region_workers, RelayHooks{},
                                       RelayForwarding::kStoreAndForward, ropt);
    // The role hears every connection and close: a worker that reconnects gets the latest update,
    // and the learner is dialled again after the role's backoff.
    node.Route(
        role.get(), []() { return true; },
        [](uint32_t peer, const RoleMessage& m)
        { return peer == kLearnerPeerId && m.type == kUpdate; });
    uint16_t bound = 0;
    const int listening = node.Listen(label, host, listen_port, o.port_file, err, &bound);
    if (listening != kExitOk)
        return listening;
    node.transport().Connect(kLearnerPeerId, learner_host, learner_port);
    if (!node.Ready(o.sync_start, bound))
        return kExitRuntime;
    return node.Run([&]() { return "no update from the learner at " + o.connect; });
}

} // namespace

bool
SplitHostPort(const std::string& text, std::string* host, uint16_t* port)
{
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size())
    {
        return false;
    }
    const std::string digits = text.substr(colon + 1);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 5)
    {
        return false;
    }
    const unsigned long value = std::stoul(digits);
    if (value > 65535)
    {
        return false;
    }
    *host = text.substr(0, colon);
    *port = static_cast<uint16_t>(value);
    return true;
}

int
RunNode(const NodeOptions& o, const ScenarioCatalog& catalog, std::ostream& err)
{
    if (o.role != "learner" && o.role != "worker" && o.role != "relay")
    {
        err << "hilo-node: unknown role \"" << o.role << "\"; allowed: learner, worker, relay\n";
        return kExitBadInput;
    }
    if (o.stall_timeout_s <= 0)
    {
        err << "hilo-node: --stall-timeout must be positive, got " << o.stall_timeout_s << "\n";
        return kExitBadInput;
    }
    ArmSetup setup;
    const int loaded = LoadArm(o, catalog, err, &setup);
    if (loaded != kExitOk)
    {
        return loaded;
    }
    if (!o.key_file.empty())
    {
        auto key = PeerAuth::ReadKeyFile(o.key_file);
        if (!key.ok())
        {
            err << "hilo-node: " << key.status().message() << "\n";
            return kExitBadInput;
        }
        setup.key = std::move(*key);
    }
    auto limit = ArmFrameLimit(*setup.context, hilo::PublisherOptions{});
    if (!limit.ok())
    {
        err << "hilo-node: " << o.scenario << ": arm '" << o.arm
            << "': " << limit.status().message() << "\n";
        return kExitBadInput;
    }
    setup.frame_limit = *limit;
    if (o.role == "learner")
        return RunLearner(o, setup, err);
    if (o.role == "worker")
        return RunWorker(o, setup, err);
    return RunRelay(o, setup, err);
}

} // namespace hilosim
