// The "ns3" NodeNetwork of hilo-emu (sim/drivers/process/node-network.h): real processes, each in
// its own network namespace, whose kernel TCP crosses the scenario's links modelled by ns-3 in
// real time (hilo-netem, sim/drivers/emulation/emulated-links.h).
//
// Per run (Prepare): checks root's capabilities, /dev/net/tun, iproute2, ns-3's tap creator and
// the kernel's congestion control (clear errors, exit 2); removes stale namespaces and taps of
// killed runs; takes the run's lock.
// Per arm (StartArm): creates the namespaces (IPv6 off before any tap exists: IPv6 neighbour
// traffic towards a tap that is down would abort ns-3's TapBridge), sets each host's TCP
// (net.ipv4.tcp_congestion_control from network.tcp; network.tcp_buffer "auto" keeps Linux's own
// buffer autotuning within the kernel's defaults, tcp_rmem 4096 131072 6291456 and tcp_wmem 4096
// 16384 4194304, set explicitly so that a run does not depend on how this machine's root
// namespace is tuned; a size S caps the autotuning at tcp_wmem S and tcp_rmem 2 x S, since Linux
// advertises about half its receive buffer as window), starts hilo-netem in the core
// namespace, moves each tap into its host's namespace and configures it (address, MTU, ARP off:
// a point-to-point link carries no ARP; the routes of ns-3's global routing). A fresh set of
// namespaces per arm: no arm inherits another's TCP metrics cache.
// FinishArm stops hilo-netem (its lag statistics go into the arm's EmulationHealth) and deletes
// the namespaces; the destructor finishes a running arm, puts back the host-wide
// net.ipv4.tcp_allowed_congestion_control it extended (unless another run is alive:
// host-setting-guard.h) and releases the lock, so every exit path of hilo-emu that unwinds cleans
// up, and a SIGKILLed hilo-emu's leftovers (that setting too) go at the next run.
#ifndef HILOSIM_DRIVERS_EMULATION_NS3_NETWORK_H
#define HILOSIM_DRIVERS_EMULATION_NS3_NETWORK_H

#include "sim/drivers/process/node-network.h"
#include "sim/scenario/scenario-loader.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace hilosim
{

struct Ns3NetworkOptions
{
    std::string netem_binary;           // hilo-netem
    std::vector<std::string> overrides; // the run's `--set` assignments (hilo-netem loads them)
    // hilo-netem runs under SCHED_RR at this priority (0: ordinary scheduling). On a loaded
    // machine an ordinary process waits for a CPU for milliseconds at a time, and every packet
    // with it (README, "Emulated links": lag at priority 0 and 10, nice -5 and -15).
    int netem_priority{10};
    // Link traffic (bits/s, all links summed) the emulator sustained on the reference machine
    // (README, "Emulated links"; results/validation/emulation-ceiling.md): scenarios whose links
    // can carry more get a warning.
    double sustained_link_traffic_bps{400e6};
    double lag_warning_p99_s{0.001}; // warn when the emulator's p99 lag exceeds this
    double setup_timeout_s{60};      // hilo-netem must have created its taps by then
    bool quiet{false};               // no progress lines (warnings still go to `err`)
    // Extra sysctls for every process's namespace ("net.ipv4.tcp_slow_start_after_idle", "0"),
    // set after the defaults above: to measure what a kernel setting changes.
    std::vector<std::pair<std::string, std::string>> sysctls;
};

/// REQUIRES: `scenario` and `err` outlive the network.
std::unique_ptr<NodeNetwork> NewNs3Network(const LoadedScenario& scenario,
                                           Ns3NetworkOptions options, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_NS3_NETWORK_H
