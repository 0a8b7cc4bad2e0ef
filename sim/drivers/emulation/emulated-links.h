// EmulatedLinks: the scenario's network running in real time inside hilo-netem. The topology is
// built by the simulator's own TopologyBuilder and LinkHelper (same links, rates, delays, loss
// models and seeds, MTUs, queue disciplines, addresses and routes); every link device of a node
// that runs a process is bridged to a tap (TapBridge, ConfigureLocal mode: ns-3 creates the tap
// with the device's MAC and IPv4 address) through a TapInlet, so that the node is a "ghost"
// standing for the process: its kernel sends and receives on the tap, and ns-3 carries the
// packets across the modelled links. Routers without a process (hub, region gateways) forward
// inside ns-3.
#ifndef HILOSIM_DRIVERS_EMULATION_EMULATED_LINKS_H
#define HILOSIM_DRIVERS_EMULATION_EMULATED_LINKS_H

#include "sim/drivers/emulation/network-plan.h"
#include "sim/net/topology.h"
#include "sim/scenario/resolved-scenario.h"

#include "hilo/core/status.h"

#include "ns3/net-device-container.h"

#include <memory>
#include <string>

namespace hilosim
{

class EmulatedLinks
{
  public:
    /// Builds the network; the taps come into being when the simulation starts (the TapBridges'
    /// start events at time 0), in the caller's network namespace.
    /// REQUIRES: SimulatorImplementationType is ns3::RealtimeSimulatorImpl and ChecksumEnabled
    /// is true (the kernel drops packets whose checksums ns-3 left zero); nothing else was built
    /// in this simulation.
    static hilo::StatusOr<std::unique_ptr<EmulatedLinks>> Build(const ResolvedScenario& scenario,
                                                                const std::string& tag);

    const NetworkPlan& plan() const { return m_plan; }
    const Topology& topology() const { return m_topology; }
    /// Every link device (both ends of every link).
    ns3::NetDeviceContainer LinkDevices() const;

  private:
    EmulatedLinks(Topology topology, NetworkPlan plan);

    Topology m_topology;
    NetworkPlan m_plan;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_EMULATED_LINKS_H
