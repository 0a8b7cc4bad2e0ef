// NetworkPlan: how a scenario's topology maps onto the machine when it is emulated. Every node
// that runs a process (learner, workers, relays) gets a network namespace; each of that node's
// link devices becomes a tap device in its namespace with the device's address, and the node's
// routes towards every other subnet are the ones ns-3's global routing computed for it, so the
// kernel forwards exactly as the simulated node would. Routers without a process (the shared
// uplink's hub, region gateways) stay inside ns-3.
//
// The plan is a pure function of the topology and the run's tag: hilo-emu (which configures the
// namespaces) and hilo-netem (which bridges the taps into ns-3) compute it independently from the
// same scenario and agree on every name and address.
#ifndef HILOSIM_DRIVERS_EMULATION_NETWORK_PLAN_H
#define HILOSIM_DRIVERS_EMULATION_NETWORK_PLAN_H

#include "sim/drivers/process/node-network.h"
#include "sim/net/link-spec.h"
#include "sim/net/topology.h"
#include "sim/scenario/resolved-scenario.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hilosim
{

struct PlannedTap
{
    std::string name;      // hilo-<tag>-<n>
    size_t link{0};        // index into Topology::GetLinks()
    bool side_a{false};    // the link's device_a end (else device_b)
    std::string link_name; // "worker 3", "uplink", ... (for messages)
    std::string address;   // the device's IPv4 address
    uint32_t prefix_length{0};
    std::string peer; // the address at the link's other end
    uint32_t mtu{0};
};

struct PlannedRoute
{
    std::string destination; // "10.0.0.8/30"
    std::string gateway;     // next hop, on one of the host's links
    std::string tap;         // the tap towards it
};

struct PlannedHost
{
    NodeRole role{NodeRole::kLearner};
    uint32_t index{0};
    std::string netns;
    std::vector<PlannedTap> taps; // in the node's device order
    std::vector<PlannedRoute> routes;
    bool forwards{false}; // a relay also forwards its workers' traffic to and from the learner
};

struct NetworkPlan
{
    std::string tag;
    std::string core_netns;         // where hilo-netem runs and creates the taps
    std::vector<PlannedHost> hosts; // learner, relays by region, workers in topology order
    std::vector<std::string> learner_address_for_worker;
    std::vector<std::string> relay_address_for_worker; // relay topologies only
    std::vector<std::string> learner_address_for_relay;
    double peak_link_traffic_bps{0}; // PeakLinkTrafficBps of the topology

    /// REQUIRES: the host exists.
    const PlannedHost& Host(NodeRole role, uint32_t index) const;
    size_t TapCount() const;
};

/// The plan of a built topology. REQUIRES: `topology` was built from `spec` and its routing
/// tables are populated (TopologyBuilder::Build does both).
NetworkPlan PlanNetwork(const Topology& topology, const TopologySpec& spec, const std::string& tag);

/// Builds the scenario's topology in a throwaway ns-3 simulation, plans it and destroys the
/// simulation again (hilo-emu's side). Errors: the topology's own validation.
/// REQUIRES: no other ns-3 simulation is alive in this process.
hilo::StatusOr<NetworkPlan> PlanScenarioNetwork(const ResolvedScenario& scenario,
                                                const std::string& tag);

/// The most link traffic (bits per second, summed over every link it crosses) a broadcast from
/// the learner can put on the links at once: per link, the flow the links above it let through
/// (a shared uplink or a region's WAN link caps what crosses the links behind it; a relay sends
/// its own copies, so its LAN links run at their own rates). What the emulator must carry at
/// most in one direction.
double PeakLinkTrafficBps(const TopologySpec& spec);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_NETWORK_PLAN_H
