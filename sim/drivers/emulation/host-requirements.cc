#include "sim/drivers/emulation/host-requirements.h"

#include "sim/drivers/emulation/host-tools.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hilosim
{
namespace
{

constexpr int kCapNetAdmin = 12; // linux/capability.h
constexpr int kCapSysAdmin = 21;

// The effective capability set of this process, from /proc/self/status.
uint64_t
EffectiveCapabilities()
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
    {
        if (line.rfind("CapEff:", 0) == 0)
        {
            return std::stoull(line.substr(7), nullptr, 16);
        }
    }
    return 0;
}

std::string
KernelRelease()
{
    utsname u{};
    return uname(&u) == 0 ? u.release : "unknown";
}

} // namespace

hilo::Status
CheckEmulationPrivileges()
{
    const uint64_t caps = EffectiveCapabilities();
    std::string missing;
    if (!(caps & (uint64_t{1} << kCapNetAdmin)))
        missing += "CAP_NET_ADMIN";
    if (!(caps & (uint64_t{1} << kCapSysAdmin)))
        missing += std::string(missing.empty() ? "" : " and ") + "CAP_SYS_ADMIN";
    if (!missing.empty())
    {
        return hilo::Status::InvalidArgument(
            "emulated links need root: network namespaces take CAP_SYS_ADMIN and tap devices, "
            "addresses and routes CAP_NET_ADMIN, and this process (uid " +
            std::to_string(geteuid()) + ") lacks " + missing +
            ". Run hilo-emu as root, or use --network direct (loopback, no emulated links).");
    }
    if (access("/dev/net/tun", R_OK | W_OK) != 0)
    {
        return hilo::Status::InvalidArgument(
            "emulated links need /dev/net/tun (the kernel's tun/tap driver), which is missing "
            "or not accessible here");
    }
    return hilo::Status::Ok();
}

std::string
IpTool()
{
    return FindExecutable({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
}

const char*
InstalledTapCreator()
{
    return HILO_NS3_TAP_CREATOR;
}

hilo::StatusOr<std::string>
LinuxCongestionControl(const ns3::TypeId& tcp)
{
    static const std::vector<std::pair<const char*, const char*>> names = {
        {"ns3::TcpNewReno", "reno"},
        {"ns3::TcpLinuxReno", "reno"},
        {"ns3::TcpCubic", "cubic"},
        {"ns3::TcpBbr", "bbr"},
        {"ns3::TcpDctcp", "dctcp"},
        {"ns3::TcpVegas", "vegas"},
        {"ns3::TcpBic", "bic"},
        {"ns3::TcpHtcp", "htcp"},
        {"ns3::TcpWestwood", "westwood"},
        {"ns3::TcpHybla", "hybla"},
        {"ns3::TcpHighSpeed", "highspeed"},
        {"ns3::TcpScalable", "scalable"},
        {"ns3::TcpVeno", "veno"},
        {"ns3::TcpYeah", "yeah"},
        {"ns3::TcpIllinois", "illinois"},
        {"ns3::TcpLp", "lp"},
    };
    for (const auto& [ns3_name, linux_name] : names)
    {
        if (tcp.GetName() == ns3_name)
        {
            return std::string(linux_name);
        }
    }
    return hilo::Status::InvalidArgument("network.tcp " + tcp.GetName() +
                                         " has no Linux counterpart, so it cannot be emulated "
                                         "with kernel TCP");
}

hilo::Status
CheckKernelCongestionControl(const std::string& algorithm, const std::string& scenario_tcp)
{
    std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
    std::string available;
    std::getline(in, available);
    std::istringstream words(available);
    std::string word;
    while (words >> word)
    {
        if (word == algorithm)
        {
            return hilo::Status::Ok();
        }
    }
    const std::string release = KernelRelease();
    std::error_code ec;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             "/lib/modules/" + release + "/kernel/net/ipv4", ec))
    {
        if (entry.path().filename().string().rfind("tcp_" + algorithm + ".ko", 0) == 0)
        {
            return hilo::Status::Ok(); // loaded on first use
        }
    }
    return hilo::Status::InvalidArgument(
        "network.tcp \"" + scenario_tcp + "\" runs as Linux's \"" + algorithm +
        "\" congestion control, which this kernel (" + release + ") does not offer: it has " +
        (available.empty() ? "none listed" : available) + " and no tcp_" + algorithm +
        " module; choose one of those for emulation");
}

} // namespace hilosim
