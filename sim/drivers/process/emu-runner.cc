#include "sim/drivers/process/emu-runner.h"

#include "sim/drivers/process/arm-gather.h"
#include "sim/drivers/process/child-process.h"
#include "sim/drivers/process/disk-fill.h"
#include "sim/drivers/process/event-log.h"
#include "sim/drivers/process/node-network.h"
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/process-faults.h"
#include "sim/drivers/process/process-port.h"
#include "sim/drivers/process/process-support.h"
#include "sim/drivers/process/run-key.h"
#include "sim/drivers/process/tcp-info-sampler.h"
#include "sim/run/arm-check.h"
#include "sim/run/arm-context-builder.h"
#include "sim/run/arm-summary.h"
#include "sim/run/output-writer.h"
#include "sim/run/progress-gate.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

namespace hilosim
{
namespace
{

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitBadInput = 2;

// SIGINT and SIGTERM are blocked in hilo-emu and collected here, so that a signal interrupts the
// supervision loop at a well-defined point (children get them unblocked before exec).
class SignalWatch
{
  public:
    SignalWatch()
    {
        sigemptyset(&m_set);
        sigaddset(&m_set, SIGINT);
        sigaddset(&m_set, SIGTERM);
        sigprocmask(SIG_BLOCK, &m_set, &m_old);
    }
    ~SignalWatch() { sigprocmask(SIG_SETMASK, &m_old, nullptr); }
    /// The signal received since the last call, or 0.
    int Pending()
    {
        if (m_signal != 0)
            return m_signal;
        timespec zero{0, 0};
        const int s = sigtimedwait(&m_set, nullptr, &zero);
        if (s > 0)
            m_signal = s;
        return m_signal;
    }

  private:
    sigset_t m_set;
    sigset_t m_old;
    int m_signal{0};
};

// Why an arm could not finish.
struct ArmFailure
{
    int code{kExitRuntime};
    std::string message;
};

std::string
FormatDuration(double s)
{
    char buf[32];
    if (s >= 60)
        std::snprintf(buf, sizeof(buf), "%dm%02ds", int(s / 60), int(s) % 60);
    else
        std::snprintf(buf, sizeof(buf), "%.0fs", s);
    return buf;
}

size_t
CountPublishes(const std::string& events)
{
    std::ifstream in(events);
    std::string line;
    size_t n = 0;
    while (std::getline(in, line))
        n += line.rfind("publish ", 0) == 0 ? 1 : 0;
    return n;
}

class ArmEmulation
{
  public:
    ArmEmulation(const LoadedScenario& loaded, size_t arm_index, const EmuOptions& options,
                 NodeNetwork* network, std::string dir, SignalWatch* signals, std::ostream& err)
      : m_loaded(loaded)
      , m_sc(loaded.resolved)
      , m_arm(m_sc.arms[arm_index])
      , m_armIndex(arm_index)
      , m_options(options)
      , m_network(network)
      , m_dir(std::move(dir))
      , m_signals(signals)
      , m_err(err)
      , m_faults(m_sc)
      , m_records(m_faults.Records())
    {
        for (const RelayKill& k : options.relay_kills)
        {
            m_relayActions.push_back({k.at_s, FaultAction::kKill, false, k.relay, 0});
            m_relayActions.push_back(
                {k.at_s + k.restart_s, FaultAction::kStart, false, k.relay, 0});
        }
        std::stable_sort(m_relayActions.begin(), m_relayActions.end(),
                         [](const FaultAction& a, const FaultAction& b)
                         { return a.at_s < b.at_s; });
        m_pauseActions = PauseSchedule(options.pauses);
        for (const DiskFull& d : options.full_disks)
        {
            m_diskActions.push_back({d.at_s, true});
            m_diskActions.push_back({d.at_s + d.for_s, false});
        }
        std::stable_sort(m_diskActions.begin(), m_diskActions.end(),
                         [](const DiskAction& a, const DiskAction& b) { return a.at_s < b.at_s; });
        if (!m_diskActions.empty())
            m_diskFill = std::make_unique<DiskFill>(options.checkpoint_dir);
    }

    /// Builds the arm's network and runs its processes to the end. On failure every child is
    /// stopped; the network is the caller's to finish (NodeNetwork::FinishArm) in every case.
    bool Run(ArmFailure* failure)
    {
        hilo::Status network = m_network->StartArm(m_dir);
        if (!network.ok())
        {
            failure->message =
                "cannot set up the " + m_network->Name() + " network: " + network.message();
            return false;
        }
        const auto start = std::chrono::steady_clock::now();
        const bool ok = RunChildren(failure);
        for (ChildProcess* c : m_paused)
            c->Signal(SIGCONT); // a stopped process cannot act on SIGTERM
        m_paused.clear();
        for (auto& c : m_children)
            c->Terminate(2.0);
        if (m_diskFill)
            m_diskFill->Free();
        m_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return ok;
    }

    double wall_s() const { return m_wall; }
    const std::string& dir() const { return m_dir; }
    /// By worker: whether it was running when the arm ended (not crashed for good).
    std::vector<bool> alive_at_end() const
    {
        std::vector<bool> alive(m_sc.workers.size(), true);
        for (uint32_t w : m_faults.gone())
            alive[w] = false;
        return alive;
    }
    /// The scenario's faults as they happened in this arm (times in modelled s from the epoch).
    const std::vector<FaultRecord>& fault_records() const { return m_records; }
    /// After Run: every node process's peak resident memory, in start order.
    std::vector<NodePeakRss> node_peak_rss() const
    {
        std::vector<NodePeakRss> peaks;
        for (size_t i = 0; i < m_children.size(); ++i)
            peaks.push_back({m_childLabels[i], m_children[i]->peak_rss_kib()});
        return peaks;
    }

  private:
    std::vector<std::string> NodeArgs(const std::string& role, uint32_t index,
                                      const std::string& events) const
    {
        std::vector<std::string> a{m_options.node_binary,
                                   role,
                                   "--scenario",
                                   m_loaded.path,
                                   "--arm",
                                   m_arm.name,
                                   "--index",
                                   std::to_string(index),
                                   "--stall-timeout",
                                   std::to_string(m_options.stall_timeout_s)};
        if (!events.empty())
        {
            a.push_back("--events");
            a.push_back(events);
        }
        if (m_options.trace_tcp)
        {
            a.push_back("--trace-tcp");
            a.push_back(m_dir + "/" +
                        (role == "learner" ? role : role + "-" + std::to_string(index)) +
                        ".tcp-trace.csv");
        }
        if (!m_options.key_file.empty())
        {
            a.push_back("--key-file");
            a.push_back(m_options.key_file);
        }
        for (const std::string& o : m_options.overrides)
        {
            a.push_back("--set");
            a.push_back(o);
        }
        return a;
    }

    ChildProcess* Spawn(NodeRole role, uint32_t index, std::vector<std::string> args,
                        const std::string& file, const std::string& name, ArmFailure* failure)
    {
        auto child = ChildProcess::Start(m_network->Command(role, index, std::move(args)),
                                         m_dir + "/" + file + ".stderr", name);
        if (!child.ok())
        {
            failure->message = "cannot start " + name + ": " + child.status().message();
            return nullptr;
        }
        m_children.push_back(std::move(*child));
        m_childLabels.push_back(file);
        return m_children.back().get();
    }

    // Waits for "ready PORT" from `c`; false (with the failure filled in) otherwise.
    bool AwaitReady(ChildProcess* c, uint16_t* port, ArmFailure* failure)
    {
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration<double>(m_options.ready_timeout_s);
        while (std::chrono::steady_clock::now() < deadline)
        {
            if (Interrupted(failure))
                return false;
            auto line = c->ReadLine(0.2);
            if (line)
            {
                unsigned p = 0;
                if (std::sscanf(line->c_str(), "ready %u", &p) != 1)
                {
                    failure->message = c->name() + " printed \"" + *line + "\" instead of ready";
                    return false;
                }
                *port = static_cast<uint16_t>(p);
                return true;
            }
            if (c->Poll())
            {
                ChildFailed(c, failure);
                return false;
            }
            if (NetworkFailed(failure))
                return false;
        }
        failure->message = c->name() + " was not ready after " +
                           std::to_string(int(m_options.ready_timeout_s)) + " s";
        return false;
    }

    void ChildFailed(ChildProcess* c, ArmFailure* failure)
    {
        failure->code = c->exit_code() == kExitBadInput ? kExitBadInput : kExitRuntime;
        failure->message = c->name() + " (pid " + std::to_string(c->pid()) + ") " + c->Describe() +
                           "; the end of its stderr (" + c->stderr_path() + "):\n" +
                           c->StderrTail(12);
    }

    bool NetworkFailed(ArmFailure* failure)
    {
        hilo::Status s = m_network->Check();
        if (s.ok())
            return false;
        failure->message = "the " + m_network->Name() + " network failed: " + s.message();
        return true;
    }

    bool Interrupted(ArmFailure* failure)
    {
        const int sig = m_signals->Pending();
        if (sig == 0)
            return false;
        failure->code = 128 + sig;
        failure->message = std::string("stopped by signal ") + std::to_string(sig) + " (" +
                           strsignal(sig) + "); every node process was stopped";
        return true;
    }

    bool RunChildren(ArmFailure* failure)
    {
        m_learnerArgs = NodeArgs("learner", 0, m_dir + "/learner.events");
        if (!m_options.checkpoint_dir.empty())
        {
            m_learnerArgs.push_back("--checkpoint");
            m_learnerArgs.push_back(m_options.checkpoint_dir + "/" + m_arm.name + "-learner.ckpt");
        }
        else if (m_faults.learner_restarts())
        {
            m_learnerArgs.push_back("--checkpoint");
            m_learnerArgs.push_back(m_dir + "/learner.ckpt");
        }
        {
            auto args = m_learnerArgs;
            args.push_back("--sync-start");
            args.push_back("--listen");
            args.push_back(m_network->ListenAddress(NodeRole::kLearner, 0));
            m_learner = Spawn(NodeRole::kLearner, 0, args, "learner", "learner", failure);
        }
        uint16_t learner_port = 0;
        if (!m_learner || !AwaitReady(m_learner, &learner_port, failure))
            return false;
        const std::string port = ":" + std::to_string(learner_port);
        // A restarted learner listens where the first one did: its peers dial that address.
        const std::string listen = m_network->ListenAddress(NodeRole::kLearner, 0);
        m_learnerArgs.push_back("--listen");
        m_learnerArgs.push_back(listen.substr(0, listen.rfind(':')) + port);

        std::vector<std::string> relay_ports;
        const bool relayed = m_sc.network.topology == TopologyKind::kRelay;
        if (relayed)
        {
            for (uint32_t r = 0; r < m_sc.network.regions.size(); ++r)
            {
                auto args = NodeArgs("relay", r, /*events=*/"");
                args.push_back("--connect");
                args.push_back(m_network->LearnerHostForRelay(r) + port);
                auto first = args;
                first.push_back("--sync-start");
                first.push_back("--listen");
                first.push_back(m_network->ListenAddress(NodeRole::kRelay, r));
                ChildProcess* c = Spawn(NodeRole::kRelay, r, first, "relay-" + std::to_string(r),
                                        "relay " + std::to_string(r), failure);
                uint16_t relay_port = 0;
                if (!c || !AwaitReady(c, &relay_port, failure))
                    return false;
                relay_ports.push_back(":" + std::to_string(relay_port));
                // A restarted relay listens where the first one did: its workers dial that.
                const std::string listen = m_network->ListenAddress(NodeRole::kRelay, r);
                args.push_back("--listen");
                args.push_back(listen.substr(0, listen.rfind(':')) + relay_ports.back());
                m_relayArgs.push_back(args);
                m_relay.push_back(c);
            }
        }
        const std::vector<uint32_t> order = TopologyWorkerOrder(m_sc);
        m_workerArgs.clear();
        m_worker.assign(order.size(), nullptr);
        for (uint32_t w = 0; w < order.size(); ++w)
        {
            auto args = NodeArgs("worker", w, m_dir + "/worker-" + std::to_string(w) + ".events");
            args.push_back("--connect");
            args.push_back(m_network->LearnerHostForWorker(w) + port);
            if (relayed)
            {
                args.push_back("--relay");
                args.push_back(m_network->RelayHostForWorker(w) +
                               relay_ports.at(m_sc.workers[order[w]].region_index));
            }
            for (double at : m_faults.divergences()[w])
            {
                args.push_back("--diverge-at");
                args.push_back(std::to_string(at));
            }
            m_workerArgs.push_back(args);
            if (m_faults.late().count(w) != 0)
                continue; // started at its worker_join time
            args.push_back("--sync-start");
            ChildProcess* c = Spawn(NodeRole::kWorker, w, args, "worker-" + std::to_string(w),
                                    "worker " + std::to_string(w), failure);
            if (!c)
                return false;
            m_worker[w] = c;
        }
        for (ChildProcess* c : m_worker)
        {
            uint16_t unused = 0;
            if (c && !AwaitReady(c, &unused, failure))
                return false;
        }
        // Everyone is set up: start every role at one epoch, a moment from now.
        m_epochNs = SteadyNowNs() + 200'000'000;
        for (auto& c : m_children)
        {
            if (!c->WriteLine(std::to_string(m_epochNs)))
            {
                failure->message = "cannot send the epoch to " + c->name();
                return false;
            }
        }
        hilo::Status timed = m_network->SetEpoch(m_epochNs);
        if (!timed.ok())
        {
            failure->message = "the " + m_network->Name() + " network: " + timed.message();
            return false;
        }
        return Supervise(failure);
    }

    /// Modelled seconds since the run's epoch.
    double Now() const { return static_cast<double>(SteadyNowNs() - m_epochNs) * 1e-9; }

    /// Injects the faults due by now (process-faults.h). False when a process cannot start.
    bool InjectFaults(ArmFailure* failure)
    {
        const double now = Now();
        for (size_t i = 0; i < m_sc.faults.size(); ++i)
        {
            const ResolvedFault& f = m_sc.faults[i];
            FaultRecord& r = m_records[i];
            const bool link = f.kind == FaultKind::kLinkDown || f.kind == FaultKind::kLossBurst ||
                              f.kind == FaultKind::kCorrupt;
            if ((f.kind == FaultKind::kReplayDivergence || link) && !r.injected &&
                now >= f.at.GetSeconds())
            {
                // The worker's own timer perturbs its next replay; hilo-netem starts a link fault
                // on the same clock.
                r.injected = true;
                r.start_s = f.at.GetSeconds();
            }
            if (link && r.injected && r.end_s < 0 && f.duration &&
                now >= f.at.GetSeconds() + f.duration->GetSeconds())
            {
                r.end_s = f.at.GetSeconds() + f.duration->GetSeconds();
            }
        }
        for (; m_nextRelayAction < m_relayActions.size() &&
               m_relayActions[m_nextRelayAction].at_s <= now;
             ++m_nextRelayAction)
        {
            if (!RestartRelay(m_relayActions[m_nextRelayAction], now, failure))
                return false;
        }
        for (; m_nextPause < m_pauseActions.size() && m_pauseActions[m_nextPause].at_s <= now;
             ++m_nextPause)
            Pause(m_pauseActions[m_nextPause], now);
        for (; m_nextDisk < m_diskActions.size() && m_diskActions[m_nextDisk].at_s <= now;
             ++m_nextDisk)
            FillDisk(m_diskActions[m_nextDisk].full, now);
        const std::vector<FaultAction>& actions = m_faults.actions();
        for (; m_nextAction < actions.size() && actions[m_nextAction].at_s <= now; ++m_nextAction)
        {
            const FaultAction& a = actions[m_nextAction];
            FaultRecord& r = m_records[a.fault];
            if (a.learner)
            {
                if (!RestartLearner(a, now, &r, failure))
                    return false;
                continue;
            }
            const std::string name = "worker " + std::to_string(a.worker);
            if (a.kind == FaultAction::kKill)
            {
                Kill(&m_worker[a.worker]);
                r.injected = true;
                r.start_s = now;
                m_err << "hilo-emu: " << r.kind << ": killed " << name << " at " << now << " s\n";
                continue;
            }
            // A new process for the worker: it rejoins the run, on the run's clock.
            ChildProcess* c =
                Respawn(NodeRole::kWorker, a.worker, m_workerArgs[a.worker], "--rejoin",
                        "worker-" + std::to_string(a.worker), name, failure);
            if (!c)
                return false;
            m_worker[a.worker] = c;
            if (r.kind == "worker_join")
            {
                r.injected = true;
                r.start_s = now;
            }
            r.end_s = now;
            m_err << "hilo-emu: " << r.kind << ": started " << name << " at " << now << " s\n";
        }
        return true;
    }

    /// Chaos: SIGSTOP the node's running process, or SIGCONT the one this pause stopped (a node
    /// killed and started again in between is a new process, running: left alone).
    void Pause(const PauseAction& a, double now)
    {
        ChildProcess* c = nullptr;
        std::string name = "the learner";
        switch (a.pause.role)
        {
            case NodePause::kLearner:
                c = m_learner;
                break;
            case NodePause::kWorker:
                c = a.pause.index < m_worker.size() ? m_worker[a.pause.index] : nullptr;
                name = "worker " + std::to_string(a.pause.index);
                break;
            case NodePause::kRelay:
                c = a.pause.index < m_relay.size() ? m_relay[a.pause.index] : nullptr;
                name = "relay " + std::to_string(a.pause.index);
                break;
        }
        if (a.stop)
        {
            if (!c || m_paused.count(c) || m_killed.count(c))
                return;
            c->Signal(SIGSTOP);
            m_paused.insert(c);
            if (!a.quiet)
                m_err << "hilo-emu: chaos: " << (a.pause.slow ? "slowed " : "paused ") << name
                      << " at " << now << " s\n";
            return;
        }
        if (c && m_paused.erase(c))
        {
            c->Signal(SIGCONT);
            if (!a.quiet)
                m_err << "hilo-emu: chaos: " << (a.pause.slow ? "full speed again: " : "continued ")
                      << name << " at " << now << " s\n";
        }
    }

    /// Chaos: fills the checkpoint folder's filesystem (full) or frees it again.
    void FillDisk(bool full, double now)
    {
        if (!full)
        {
            if (m_diskFill->full())
                m_err << "hilo-emu: chaos: disk has room again at " << now << " s\n";
            m_diskFill->Free();
            return;
        }
        auto taken = m_diskFill->Fill();
        if (taken.ok())
            m_err << "hilo-emu: chaos: disk full at " << now << " s (" << (*taken >> 10)
                  << " KiB taken)\n";
        else
            m_err << "hilo-emu: chaos: could not fill the disk: " << taken.status().message()
                  << "\n";
    }

    /// SIGKILLs the node in `slot` (when there is one; it is reaped with the others) and empties
    /// the slot.
    void Kill(ChildProcess** slot)
    {
        if (*slot)
        {
            m_paused.erase(*slot); // SIGKILL ends a stopped process too
            (*slot)->Signal(SIGKILL);
            m_killed.insert(*slot);
        }
        *slot = nullptr;
    }

    /// A node started again mid-run: its first arguments, `flag` (--rejoin, --restore) and the
    /// run's clock. Null when it cannot start (`failure` says why).
    ChildProcess* Respawn(NodeRole role, uint32_t index, std::vector<std::string> args,
                          const char* flag, const std::string& file, const std::string& name,
                          ArmFailure* failure)
    {
        args.push_back(flag);
        args.push_back("--epoch-ns");
        args.push_back(std::to_string(m_epochNs));
        return Spawn(role, index, std::move(args), file, name, failure);
    }

    /// learner_restart: SIGKILL the learner; at restart_after, a new learner on the same port from
    /// its checkpoint, on the run's clock. False when the new process cannot start.
    bool RestartLearner(const FaultAction& a, double now, FaultRecord* r, ArmFailure* failure)
    {
        if (a.kind == FaultAction::kKill)
        {
            Kill(&m_learner);
            r->injected = true;
            r->start_s = now;
            m_err << "hilo-emu: " << r->kind << ": killed the learner at " << now << " s\n";
            return true;
        }
        m_learner = Respawn(NodeRole::kLearner, 0, m_learnerArgs, "--restore", "learner", "learner",
                            failure);
        if (!m_learner)
            return false;
        r->end_s = now;
        m_err << "hilo-emu: " << r->kind << ": started the learner again at " << now << " s\n";
        return true;
    }

    /// Chaos: SIGKILL a relay, or start it again on the same port (it rejoins: every worker that
    /// connects is sent the latest update). False when the new process cannot start.
    bool RestartRelay(const FaultAction& a, double now, ArmFailure* failure)
    {
        const std::string name = "relay " + std::to_string(a.worker);
        if (a.worker >= m_relay.size())
            return true; // not a relay topology: checked before the run
        if (a.kind == FaultAction::kKill)
        {
            Kill(&m_relay[a.worker]);
            m_err << "hilo-emu: chaos: killed " << name << " at " << now << " s\n";
            return true;
        }
        ChildProcess* c = Respawn(NodeRole::kRelay, a.worker, m_relayArgs[a.worker], "--rejoin",
                                  "relay-" + std::to_string(a.worker), name, failure);
        if (!c)
            return false;
        m_relay[a.worker] = c;
        m_err << "hilo-emu: chaos: started " << name << " again at " << now << " s\n";
        return true;
    }

    bool Supervise(ArmFailure* failure)
    {
        const auto start = std::chrono::steady_clock::now();
        size_t shown = 0;
        auto last_progress_check = start;
        ProgressGate gate(ProgressGate::StderrIsTerminal());
        while (true)
        {
            if (Interrupted(failure) || NetworkFailed(failure) || !InjectFaults(failure))
                return false;
            for (auto& c : m_children)
            {
                if (c.get() != m_learner && m_killed.count(c.get()) == 0 && c->Poll() &&
                    c->exit_code() != kExitOk)
                {
                    ChildFailed(c.get(), failure);
                    return false;
                }
            }
            if (m_learner && m_learner->Poll())
            {
                if (m_learner->exit_code() != kExitOk)
                {
                    ChildFailed(m_learner, failure);
                    return false;
                }
                break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (!m_options.quiet && now - last_progress_check > std::chrono::milliseconds(500))
            {
                last_progress_check = now;
                const size_t done = CountPublishes(m_dir + "/learner.events");
                if (done != shown)
                {
                    shown = done;
                    const double elapsed = std::chrono::duration<double>(now - start).count();
                    const double eta =
                        done > 0 ? elapsed * double(m_sc.workload.steps - done) / double(done)
                                 : 0.0;
                    const uint64_t total = static_cast<uint64_t>(m_sc.workload.steps);
                    if (gate.ShouldShow(m_armIndex, done, total))
                    {
                        std::fprintf(stderr,
                                     "%s[arm %zu/%zu %-14s] step %4zu/%d  elapsed %s  ETA %s%s",
                                     gate.LineStart(), m_armIndex + 1, m_sc.arms.size(),
                                     m_arm.name.substr(0, 14).c_str(), done, m_sc.workload.steps,
                                     FormatDuration(elapsed).c_str(), FormatDuration(eta).c_str(),
                                     gate.LineEnd(done, total));
                        std::fflush(stderr);
                    }
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        // The learner ended the run: every live worker holds the last version and closes.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        for (ChildProcess* w : m_worker)
        {
            if (!w)
                continue; // crashed for good, or its join came after the end
            while (!w->Poll() && std::chrono::steady_clock::now() < deadline)
            {
                if (Interrupted(failure))
                    return false;
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            if (!w->exited())
            {
                failure->message = w->name() + " (pid " + std::to_string(w->pid()) +
                                   ") did not exit within 30 s of the learner";
                return false;
            }
            if (w->exit_code() != kExitOk)
            {
                ChildFailed(w, failure);
                return false;
            }
        }
        return true;
    }

    const LoadedScenario& m_loaded;
    const ResolvedScenario& m_sc;
    const ResolvedArm& m_arm;
    size_t m_armIndex;
    const EmuOptions& m_options;
    NodeNetwork* m_network;
    std::string m_dir;
    SignalWatch* m_signals;
    std::ostream& m_err;
    std::vector<std::unique_ptr<ChildProcess>> m_children;
    std::vector<std::string> m_childLabels; // by child: "learner", "worker-3", "relay-0"
    double m_wall{0};
    ProcessFaults m_faults;
    std::vector<FaultRecord> m_records;
    std::vector<std::string> m_learnerArgs;            // a restarted learner's, less --restore
    std::vector<std::vector<std::string>> m_relayArgs; // by region: a restarted relay's
    std::vector<ChildProcess*> m_relay;                // by region: its running process
    std::vector<FaultAction> m_relayActions;           // chaos kills and restarts, in time order
    size_t m_nextRelayAction{0};
    std::vector<PauseAction> m_pauseActions; // chaos pauses, in time order
    size_t m_nextPause{0};
    struct DiskAction
    {
        double at_s;
        bool full; // false: free it
    };
    std::vector<DiskAction> m_diskActions; // chaos full disks, in time order
    size_t m_nextDisk{0};
    std::unique_ptr<DiskFill> m_diskFill;               // frees the space when the arm ends
    std::set<ChildProcess*> m_paused;                   // stopped now
    ChildProcess* m_learner{nullptr};                   // the learner's running process
    std::vector<std::vector<std::string>> m_workerArgs; // by worker, without --sync-start
    std::vector<ChildProcess*> m_worker;                // by worker: its running process
    std::set<ChildProcess*> m_killed;                   // killed on purpose
    size_t m_nextAction{0};
    int64_t m_epochNs{0};
};

} // namespace

int
RunEmulation(const LoadedScenario& loaded, const EmuOptions& options, NodeNetwork& network,
             std::ostream& out, std::ostream& err)
{
    const ResolvedScenario& sc = loaded.resolved;
    hilo::Status checked = CheckScenarioArms(loaded);
    if (!checked.ok())
    {
        err << "hilo-emu run: " << checked.message() << "\n";
        return kExitBadInput;
    }
    for (const RelayKill& k : options.relay_kills)
    {
        if (sc.network.topology != TopologyKind::kRelay || k.relay >= sc.network.regions.size())
        {
            err << "hilo-emu run: --kill-relay " << k.relay << ": the scenario has "
                << (sc.network.topology == TopologyKind::kRelay ? sc.network.regions.size() : 0)
                << " relays (network.topology \"" << TopologyKindName(sc.network.topology)
                << "\")\n";
            return kExitBadInput;
        }
    }
    for (const NodePause& p : options.pauses)
    {
        const size_t relays =
            sc.network.topology == TopologyKind::kRelay ? sc.network.regions.size() : 0;
        if ((p.role == NodePause::kWorker && p.index >= sc.workers.size()) ||
            (p.role == NodePause::kRelay && p.index >= relays))
        {
            err << "hilo-emu run: " << (p.slow ? "--slow " : "--pause ")
                << (p.role == NodePause::kWorker ? "worker:" : "relay:") << p.index
                << ": the scenario has " << sc.workers.size() << " workers and " << relays
                << " relays\n";
            return kExitBadInput;
        }
    }
    for (const RelayKill& k : options.relay_kills)
    {
        for (const RelayKill& other : options.relay_kills)
        {
            if (&other != &k && other.relay == k.relay && other.at_s >= k.at_s &&
                other.at_s <= k.at_s + k.restart_s)
            {
                err << "hilo-emu run: --kill-relay " << k.relay << " at " << other.at_s
                    << " s: relay " << k.relay << " is down then (killed at " << k.at_s
                    << " s, restarted " << k.restart_s << " s later)\n";
                return kExitBadInput;
            }
        }
    }
    const std::string relay = UnsupportedRelayForwarding(sc);
    if (!relay.empty())
    {
        err << "hilo-emu run: " << loaded.path << ": " << relay << "\n";
        return kExitBadInput;
    }
    const std::string unsupported = ProcessFaults(sc).Unsupported(network.Name());
    if (!unsupported.empty())
    {
        // Not silently fault-free: the scenario asks for a fault this runtime does not inject.
        err << "hilo-emu run: " << loaded.path << ": " << unsupported << "\n";
        return kExitBadInput;
    }
    // Signals are collected from here on, so that an interrupted set-up is undone too.
    SignalWatch signals;
    RunKey key;
    hilo::Status keyed = key.Create();
    if (!keyed.ok())
    {
        err << "hilo-emu run: " << keyed.message() << "\n";
        return kExitRuntime;
    }
    EmuOptions run_options = options;
    run_options.key_file = key.path();
    hilo::Status prepared = network.Prepare();
    if (!prepared.ok())
    {
        err << "hilo-emu run: --network " << network.Name() << ": " << prepared.message() << "\n";
        return kExitBadInput;
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<ArmResult> results;
    for (size_t i = 0; i < sc.arms.size(); ++i)
    {
        const std::string dir = options.out_dir + "/nodes/" + sc.arms[i].name;
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
        std::filesystem::create_directories(dir, ec);
        if (ec)
        {
            err << "hilo-emu run: cannot create " << dir << ": " << ec.message() << "\n";
            return kExitRuntime;
        }
        ArmEmulation arm(loaded, i, run_options, &network, dir, &signals, err);
        ArmFailure failure;
        if (!arm.Run(&failure))
        {
            network.FinishArm(nullptr);
            err << "\nhilo-emu: arm '" << sc.arms[i].name << "' failed: " << failure.message
                << "\n";
            return failure.code;
        }
        auto result = GatherArm(sc, i, dir, arm.wall_s(), arm.alive_at_end(), arm.fault_records());
        hilo::Status finished = network.FinishArm(result.ok() ? &*result : nullptr);
        if (!result.ok())
        {
            err << "hilo-emu: arm '" << sc.arms[i].name
                << "': cannot gather its records: " << result.status().message() << "\n";
            return kExitRuntime;
        }
        if (!finished.ok())
        {
            err << "hilo-emu: arm '" << sc.arms[i].name
                << "': the network did not shut down cleanly: " << finished.message() << "\n";
            return kExitRuntime;
        }
        if (options.trace_tcp)
        {
            auto trace = ReadNodeTcpTraces(dir);
            if (!trace.ok())
            {
                err << "hilo-emu: arm '" << sc.arms[i].name
                    << "': cannot gather its TCP trace: " << trace.status().message() << "\n";
                return kExitRuntime;
            }
            result->tcp_trace = std::move(*trace);
        }
        result->node_peak_rss = arm.node_peak_rss();
        if (result->emulation)
        {
            for (const std::string& w : result->emulation->warnings)
                err << "hilo-emu: warning: arm '" << sc.arms[i].name << "': " << w << "\n";
        }
        results.push_back(std::move(*result));
    }
    RunRecord record;
    record.scenario_name = sc.name;
    record.scenario_path = loaded.path;
    record.resolved_text = loaded.resolved_text;
    record.overrides = loaded.overrides;
    record.seed = sc.seed;
    record.llm_profile = sc.llm_profile;
    record.host = models::ReadHostInfo();
    record.round_timeout_s = sc.round_timeout.GetSeconds();
    record.mode = "emulation-" + network.Name();
    record.trace_tcp = options.trace_tcp;
    hilo::Status written = WriteRunOutputs(options.out_dir, record, results);
    if (!written.ok())
    {
        err << "hilo-emu: " << written.message() << "\n";
        return kExitRuntime;
    }
    PrintComparison(results, out);
    // Printed under --quiet too: where the files went is not progress.
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    err << "wrote " << options.out_dir << " (summary.json, steps.csv, workers.csv, "
        << "rollouts.csv, allocation.csv, links.csv, resolved.textproto, timing.json"
        << (options.trace_tcp ? ", tcp-trace.csv" : "") << "; node logs in " << options.out_dir
        << "/nodes/) in " << FormatDuration(wall) << " wall\n";
    return kExitOk;
}

} // namespace hilosim
