// What an emulated network (hilo-emu --network ns3) needs from this machine, checked before
// anything is created: root's capabilities, /dev/net/tun, iproute2 and ns-3's tap creator, and a
// Linux congestion control matching the scenario's network.tcp. Each failure is an
// InvalidArgument naming what is missing (hilo-emu exits 2 with it).
#ifndef HILOSIM_DRIVERS_EMULATION_HOST_REQUIREMENTS_H
#define HILOSIM_DRIVERS_EMULATION_HOST_REQUIREMENTS_H

#include "hilo/core/status.h"

#include "ns3/type-id.h"

#include <string>
#include <vector>

namespace hilosim
{

/// CAP_NET_ADMIN (tap devices, addresses, routes, sysctls) and CAP_SYS_ADMIN (network
/// namespaces, setns) in this process's effective set, and /dev/net/tun.
hilo::Status CheckEmulationPrivileges();

/// iproute2's `ip`; "" when it is not installed.
std::string IpTool();

/// ns-3's tap-creator helper as installed (Debian: /usr/libexec/ns3/ns3.37-tap-creator).
const char* InstalledTapCreator();

/// The Linux name (net.ipv4.tcp_congestion_control) of ns-3 congestion control `tcp`
/// ("ns3::TcpCubic" -> "cubic"; NewReno and LinuxReno are both Linux's "reno", the NewReno with
/// SACK that Linux implements). InvalidArgument for a variant Linux does not have (LEDBAT).
hilo::StatusOr<std::string> LinuxCongestionControl(const ns3::TypeId& tcp);

/// OK when this kernel offers `algorithm` (net.ipv4.tcp_available_congestion_control) or has it
/// as a loadable module (tcp_<algorithm> under /lib/modules/<release>); otherwise an
/// InvalidArgument naming the scenario's `scenario_tcp`, the algorithm, the kernel and what it
/// offers.
hilo::Status CheckKernelCongestionControl(const std::string& algorithm,
                                          const std::string& scenario_tcp);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_HOST_REQUIREMENTS_H
