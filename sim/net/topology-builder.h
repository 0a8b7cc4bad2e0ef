// Builds a TopologySpec into ns-3 nodes, point-to-point links, IPv4 addresses and global routes.
// A thin installer: the layout rules live here, link details in LinkHelper, and the result is a
// read-only Topology.
#ifndef HILO_SIM_NET_TOPOLOGY_BUILDER_H
#define HILO_SIM_NET_TOPOLOGY_BUILDER_H

#include "sim/net/link-spec.h"
#include "sim/net/topology.h"

#include "hilo/core/status.h"

namespace hilosim
{

/// Layouts (every box is an ns-3 node with an IPv4 stack, every edge a LinkSpec):
///
///   star, no uplink:    learner ── worker link i ── worker i
///   star, uplink:       learner ── uplink ── hub ── worker link i ── worker i
///   regions / relay:    learner [── uplink ── hub] ── region WAN r ── gateway r ── LAN link ──
///   worker
///
/// Without an uplink the learner attaches directly to every worker or regional link (so nothing
/// is shared between workers on the learner side). With one, every learner packet crosses it: a
/// broadcast to N workers crosses it N times. In `relay` the gateway of a region is the relay
/// host (it runs applications); in `regions` it is a plain router. Addresses are /30 subnets of
/// 10.0.0.0/8 in build order; routes come from ns-3 global routing.
class TopologyBuilder
{
  public:
    /// Validates `spec` (InvalidArgument naming the field otherwise), then creates the nodes and
    /// links and, with `ip_routing`, populates the routing tables of every node in the
    /// simulation. Only packets need them: the flow model follows each worker's learnerRoute /
    /// relayRoute, and global routing costs O(nodes^2) (most of the setup of a 4,096-worker
    /// star).
    /// REQUIRES: one topology per simulation run (between Simulator::Destroy calls): global
    /// routing and the address allocator are simulation-wide.
    static hilo::StatusOr<Topology> Build(const TopologySpec& spec, bool ip_routing = true);
};

} // namespace hilosim

#endif // HILO_SIM_NET_TOPOLOGY_BUILDER_H
