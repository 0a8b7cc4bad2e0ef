#include "sim/drivers/emulation/ns3-network.h"

#include "sim/drivers/emulation/host-requirements.h"
#include "sim/drivers/emulation/host-resources.h"
#include "sim/drivers/emulation/host-setting-guard.h"
#include "sim/drivers/emulation/host-tools.h"
#include "sim/drivers/emulation/network-plan.h"
#include "sim/drivers/emulation/resource-names.h"
#include "sim/drivers/process/child-process.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <thread>

namespace hilosim
{
namespace
{

std::string
Mbps(double bps)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.0f Mbps", bps / 1e6);
    return buf;
}

std::string
Ms(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f ms", s * 1e3);
    return buf;
}

class Ns3Network : public NodeNetwork
{
  public:
    Ns3Network(const LoadedScenario& scenario, Ns3NetworkOptions options, std::ostream& err)
      : m_scenario(scenario)
      , m_options(std::move(options))
      , m_err(err)
      , m_tag(RunTag(getpid()))
      , m_allowedCongestion(HostSettingGuard::AllowedCongestionControl(m_tag))
    {
    }

    ~Ns3Network() override
    {
        FinishArm(nullptr);
        if (m_lock)
            RestoreHostSettings("");
    }

    std::string Name() const override { return "ns3"; }

    hilo::Status Prepare() override
    {
        HILO_RETURN_IF_ERROR(CheckEmulationPrivileges());
        m_ip = IpTool();
        if (m_ip.empty())
        {
            return hilo::Status::InvalidArgument(
                "emulated links need iproute2's `ip` (Debian package iproute2), which is not "
                "installed");
        }
        if (access(InstalledTapCreator(), X_OK) != 0)
        {
            return hilo::Status::InvalidArgument(
                std::string("emulated links need ns-3's tap creator ") + InstalledTapCreator() +
                " (Debian package ns3), which is missing");
        }
        if (access(m_options.netem_binary.c_str(), X_OK) != 0)
        {
            return hilo::Status::InvalidArgument(
                "the emulator binary " + m_options.netem_binary +
                " is missing or not executable (build the hilo-netem target, or pass --netem)");
        }
        const ResolvedNetwork& net = m_scenario.resolved.network;
        auto algorithm = LinuxCongestionControl(net.tcp_type);
        if (!algorithm.ok())
        {
            return algorithm.status();
        }
        m_congestionControl = *algorithm;
        HILO_RETURN_IF_ERROR(CheckKernelCongestionControl(m_congestionControl, net.tcp));
        // network.tcp_buffer: "auto" is Linux's own autotuning, within the kernel's defaults for
        // a namespace of its own (see the header); a size caps that autotuning instead.
        if (net.tcp_buffer_bytes > 0)
        {
            const uint64_t size = net.tcp_buffer_bytes;
            m_tcpWmem = "4096 " + std::to_string(std::min<uint64_t>(16384, size)) + " " +
                        std::to_string(size);
            m_tcpRmem = "4096 " + std::to_string(std::min<uint64_t>(131072, 2 * size)) + " " +
                        std::to_string(2 * size);
        }
        auto plan = PlanScenarioNetwork(m_scenario.resolved, m_tag);
        if (!plan.ok())
        {
            return plan.status();
        }
        m_plan = std::move(*plan);
        if (m_plan.TapCount() >= 10000)
        {
            return hilo::Status::InvalidArgument("the emulated network would need " +
                                                 std::to_string(m_plan.TapCount()) +
                                                 " tap devices; at most 9999 are named");
        }
        auto removed = RemoveStaleResources(m_ip);
        if (!removed.ok())
        {
            return hilo::Status::Internal("cannot remove what a killed run left behind: " +
                                          removed.status().message());
        }
        if (!removed->empty())
        {
            m_err << "hilo-emu: removed what killed runs left behind:";
            for (const std::string& r : *removed)
                m_err << " " << r;
            m_err << "\n";
        }
        // A run killed outright leaves the host settings it changed: put them back when no run
        // is alive any more.
        RestoreHostSettings(" (left by a killed run)");
        auto lock = RunLock::Acquire(m_tag);
        if (!lock.ok())
        {
            return lock.status();
        }
        m_lock = std::move(*lock);
        if (m_plan.peak_link_traffic_bps > m_options.sustained_link_traffic_bps)
        {
            m_ceilingWarning = "the scenario's links can carry " +
                               Mbps(m_plan.peak_link_traffic_bps) + " at once, more than the " +
                               Mbps(m_options.sustained_link_traffic_bps) +
                               " of link traffic this machine's emulator sustained without lag "
                               "(README, \"Emulated links\"): delays and rates may stretch";
        }
        if (!m_options.quiet)
        {
            m_err << "hilo-emu: emulated network " << kResourcePrefix << m_tag
                  << "-*: " << m_plan.hosts.size() << " namespaces, " << m_plan.TapCount()
                  << " taps, tcp " << m_congestionControl << "\n";
        }
        return hilo::Status::Ok();
    }

    hilo::Status StartArm(const std::string& dir) override
    {
        m_armActive = true;
        m_health = EmulationHealth();
        m_lagReported = false;
        m_corrupted = 0;
        HILO_RETURN_IF_ERROR(CreateNamespaces());
        HILO_RETURN_IF_ERROR(StartEmulator(dir));
        HILO_RETURN_IF_ERROR(ConfigureHosts());
        if (!m_netem->WriteLine("start"))
        {
            return hilo::Status::Internal("hilo-netem stopped reading its commands");
        }
        return hilo::Status::Ok();
    }

    std::string ListenAddress(NodeRole, uint32_t) const override { return "0.0.0.0:0"; }
    std::string LearnerHostForWorker(uint32_t worker) const override
    {
        return m_plan.learner_address_for_worker.at(worker);
    }
    std::string RelayHostForWorker(uint32_t worker) const override
    {
        return m_plan.relay_address_for_worker.at(worker);
    }
    std::string LearnerHostForRelay(uint32_t relay) const override
    {
        return m_plan.learner_address_for_relay.at(relay);
    }

    std::vector<std::string> Command(NodeRole role, uint32_t index,
                                     std::vector<std::string> argv) const override
    {
        std::vector<std::string> command{m_ip, "netns", "exec", HostNamespace(m_tag, role, index)};
        command.insert(command.end(), argv.begin(), argv.end());
        return command;
    }

    hilo::Status SetEpoch(int64_t epoch_ns) override
    {
        if (!m_netem || !m_netem->WriteLine("epoch " + std::to_string(epoch_ns)))
        {
            return hilo::Status::Internal("hilo-netem stopped reading its commands");
        }
        return hilo::Status::Ok();
    }

    hilo::Status Check() override
    {
        if (m_netem && m_netem->Poll())
        {
            return hilo::Status::Internal(
                "the emulator hilo-netem (pid " + std::to_string(m_netem->pid()) + ") " +
                m_netem->Describe() + "; the end of its stderr (" + m_netem->stderr_path() +
                "):\n" + m_netem->StderrTail(12));
        }
        return hilo::Status::Ok();
    }

    hilo::Status FinishArm(ArmResult* result) override
    {
        if (!m_armActive)
        {
            return hilo::Status::Ok();
        }
        m_armActive = false;
        hilo::Status status = StopEmulator();
        for (auto it = m_namespaces.rbegin(); it != m_namespaces.rend(); ++it)
        {
            hilo::Status deleted = DeleteNamespace(m_ip, *it);
            if (status.ok() && !deleted.ok())
                status = deleted;
        }
        m_namespaces.clear();
        if (result != nullptr && status.ok())
        {
            EmulationHealth health = m_health;
            health.peak_link_traffic_bps = m_plan.peak_link_traffic_bps;
            if (!m_ceilingWarning.empty())
                health.warnings.push_back(m_ceilingWarning);
            if (!m_lagReported)
            {
                health.warnings.push_back("the emulator reported no lag statistics");
            }
            else if (health.lag_p99_s > m_options.lag_warning_p99_s)
            {
                health.warnings.push_back(
                    "the emulator fell behind real time (lag p99 " + Ms(health.lag_p99_s) +
                    ", max " + Ms(health.lag_max_s) + ", mean " + Ms(health.lag_mean_s) +
                    "; warning above " + Ms(m_options.lag_warning_p99_s) +
                    " p99): delays and rates were stretched, so latencies are upper bounds");
            }
            result->emulation = health;
            result->segments_corrupted = m_corrupted;
        }
        return status;
    }

  private:
    hilo::Status CreateNamespaces()
    {
        // IPv6 off in every namespace before any interface arrives; see the header.
        const std::vector<std::pair<std::string, std::string>> no_ipv6 = {
            {"net.ipv6.conf.all.disable_ipv6", "1"},
            {"net.ipv6.conf.default.disable_ipv6", "1"},
        };
        auto allowed = m_allowedCongestion.AddWord(m_congestionControl);
        if (!allowed.ok())
        {
            return allowed.status();
        }
        if (!allowed->empty())
        {
            m_err << "hilo-emu: added " << m_congestionControl << " to "
                  << m_allowedCongestion.name() << " (was \"" << *allowed
                  << "\"), so that network namespaces may use it; restored when the run ends\n";
        }
        HILO_RETURN_IF_ERROR(NewNamespace(m_plan.core_netns));
        HILO_RETURN_IF_ERROR(WriteSysctls(m_plan.core_netns, no_ipv6));
        for (const PlannedHost& host : m_plan.hosts)
        {
            HILO_RETURN_IF_ERROR(NewNamespace(host.netns));
            auto settings = no_ipv6;
            settings.insert(settings.end(),
                            {
                                {"net.ipv4.tcp_congestion_control", m_congestionControl},
                                {"net.ipv4.tcp_rmem", m_tcpRmem},
                                {"net.ipv4.tcp_wmem", m_tcpWmem},
                                {"net.ipv4.conf.all.rp_filter", "0"},
                                {"net.ipv4.conf.default.rp_filter", "0"},
                                {"net.ipv4.ip_forward", host.forwards ? "1" : "0"},
                            });
            settings.insert(settings.end(), m_options.sysctls.begin(), m_options.sysctls.end());
            HILO_RETURN_IF_ERROR(WriteSysctls(host.netns, settings));
        }
        return hilo::Status::Ok();
    }

    // Puts back the host-wide settings runs changed, unless another run is alive (host-setting-
    // guard.h); says so on stderr. `why` ends the message.
    void RestoreHostSettings(const std::string& why)
    {
        auto restored = m_allowedCongestion.RestoreIfNoRunAlive();
        if (!restored.ok())
        {
            m_err << "hilo-emu: warning: cannot restore " << m_allowedCongestion.name() << ": "
                  << restored.status().message() << "\n";
        }
        else if (!restored->empty())
        {
            m_err << "hilo-emu: restored " << m_allowedCongestion.name() << " to \"" << *restored
                  << "\"" << why << "\n";
        }
    }

    hilo::Status NewNamespace(const std::string& name)
    {
        HILO_RETURN_IF_ERROR(CreateNamespace(m_ip, name));
        m_namespaces.push_back(name);
        return hilo::Status::Ok();
    }

    hilo::Status StartEmulator(const std::string& dir)
    {
        std::vector<std::string> args{m_ip,
                                      "netns",
                                      "exec",
                                      m_plan.core_netns,
                                      m_options.netem_binary,
                                      "--scenario",
                                      m_scenario.path,
                                      "--tag",
                                      m_tag,
                                      "--realtime-priority",
                                      std::to_string(m_options.netem_priority)};
        for (const std::string& o : m_options.overrides)
        {
            args.push_back("--set");
            args.push_back(o);
        }
        auto child = ChildProcess::Start(args, dir + "/netem.stderr", "hilo-netem");
        if (!child.ok())
        {
            return hilo::Status::Internal("cannot start hilo-netem: " + child.status().message());
        }
        m_netem = std::move(*child);
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration<double>(m_options.setup_timeout_s);
        while (std::chrono::steady_clock::now() < deadline)
        {
            auto line = m_netem->ReadLine(0.2);
            if (line)
            {
                if (line->rfind("ready ", 0) == 0)
                    return hilo::Status::Ok();
                return hilo::Status::Internal("hilo-netem printed \"" + *line +
                                              "\" instead of ready");
            }
            HILO_RETURN_IF_ERROR(Check());
        }
        return hilo::Status::Internal("hilo-netem had not created its taps after " +
                                      std::to_string(int(m_options.setup_timeout_s)) +
                                      " s; its stderr: " + m_netem->stderr_path());
    }

    hilo::Status ConfigureHosts()
    {
        std::string moves;
        for (const PlannedHost& host : m_plan.hosts)
        {
            for (const PlannedTap& tap : host.taps)
                moves += "link set dev " + tap.name + " netns " + host.netns + "\n";
        }
        HILO_RETURN_IF_ERROR(RunToolOk({m_ip, "-n", m_plan.core_netns, "-batch", "-"}, moves));
        for (const PlannedHost& host : m_plan.hosts)
        {
            // Moving a tap clears its address and takes it down: configure it again here.
            std::string batch = "link set dev lo up\n";
            for (const PlannedTap& tap : host.taps)
            {
                batch += "address add " + tap.address + "/" + std::to_string(tap.prefix_length) +
                         " dev " + tap.name + "\n";
                batch += "link set dev " + tap.name + " mtu " + std::to_string(tap.mtu) +
                         " arp off up\n";
            }
            for (const PlannedRoute& route : host.routes)
            {
                batch += "route add " + route.destination + " via " + route.gateway + " dev " +
                         route.tap + "\n";
            }
            HILO_RETURN_IF_ERROR(RunToolOk({m_ip, "-n", host.netns, "-batch", "-"}, batch));
        }
        return hilo::Status::Ok();
    }

    hilo::Status StopEmulator()
    {
        if (!m_netem)
        {
            return hilo::Status::Ok();
        }
        hilo::Status status = hilo::Status::Ok();
        if (!m_netem->Poll() && m_netem->WriteLine("stop"))
        {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (std::chrono::steady_clock::now() < deadline)
            {
                auto line = m_netem->ReadLine(0.2);
                if (!line)
                {
                    if (m_netem->Poll())
                        break;
                    continue;
                }
                if (line->rfind("lag ", 0) == 0)
                {
                    std::istringstream in(line->substr(4));
                    in >> m_health.lag_mean_s >> m_health.lag_p99_s >> m_health.lag_max_s >>
                        m_health.lag_samples >> m_health.carried_peak_bps;
                    m_lagReported = !in.fail();
                    in >> m_corrupted;
                }
                if (*line == "done")
                    break;
            }
        }
        // It exits by itself after "done"; only one that does not is terminated.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!m_netem->Poll() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        m_netem->Terminate(2.0);
        if (m_netem->exit_code() != 0)
        {
            status = hilo::Status::Internal("hilo-netem " + m_netem->Describe() +
                                            "; the end of its stderr (" + m_netem->stderr_path() +
                                            "):\n" + m_netem->StderrTail(12));
        }
        m_netem.reset();
        return status;
    }

    const LoadedScenario& m_scenario;
    Ns3NetworkOptions m_options;
    std::ostream& m_err;
    std::string m_tag;
    std::string m_ip;
    std::string m_congestionControl;
    std::string m_tcpRmem{"4096 131072 6291456"}; // Linux's defaults
    std::string m_tcpWmem{"4096 16384 4194304"};
    NetworkPlan m_plan;
    HostSettingGuard m_allowedCongestion;
    std::unique_ptr<RunLock> m_lock;
    std::string m_ceilingWarning;

    bool m_armActive{false};
    std::vector<std::string> m_namespaces; // created for the current arm, in creation order
    std::unique_ptr<ChildProcess> m_netem;
    EmulationHealth m_health;
    bool m_lagReported{false};
    uint64_t m_corrupted{0}; // TCP segments the arm's corrupt faults damaged (hilo-netem)
};

} // namespace

std::unique_ptr<NodeNetwork>
NewNs3Network(const LoadedScenario& scenario, Ns3NetworkOptions options, std::ostream& err)
{
    return std::make_unique<Ns3Network>(scenario, std::move(options), err);
}

} // namespace hilosim
