// Plain descriptions of links and topologies, in simulator units (ns3::DataRate, ns3::Time).
//
// The scenario layer converts its unit strings once (sim/net/units.h) and fills these structs;
// TopologyBuilder (sim/net/topology-builder.h) turns them into ns-3 nodes, devices and routes.
// Validate() reports every problem as a hilo::Status so bad scenario input never aborts.
#ifndef HILO_SIM_NET_LINK_SPEC_H
#define HILO_SIM_NET_LINK_SPEC_H

#include "hilo/core/status.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

/// One full-duplex point-to-point link. Both directions get the same parameters.
struct LinkSpec
{
    ns3::DataRate rate{1000000000}; // bandwidth per direction; must be positive
    ns3::Time delay{ns3::Time(0)};  // one-way propagation delay; zero allowed
    double loss_rate{0.0};          // per-direction packet loss probability in [0, 1)
    uint32_t mtu{1500};             // IP MTU in bytes, 576..65535; 9000 cuts simulation cost
    std::string queue_disc{"fifo"}; // "fifo", "red", "codel", "fq_codel", "pie" or "none"
    uint32_t queue_packets{1000};   // queue-disc limit in packets (device queue if "none")

    /// InvalidArgument naming the first bad field; `where` prefixes the message ("worker 3 link").
    hilo::Status Validate(const std::string& where) const;
};

/// The queue disciplines LinkSpec::queue_disc accepts, for error messages and CLI listings.
const std::vector<std::string>& SupportedQueueDiscs();

/// A group of workers behind one shared regional WAN link.
struct RegionSpec
{
    std::string name;                   // unique, non-empty; used in messages and metrics
    LinkSpec wan;                       // shared link between the learner side and the region
    std::vector<LinkSpec> worker_links; // one LAN link per worker in the region (may be empty)
};

enum class TopologyKind
{
    kStar,    // learner -- [shared uplink] -- one WAN link per worker
    kRegions, // learner -- [shared uplink] -- regional WAN link -- region gateway -- LAN links
    kRelay,   // as kRegions, but each region gateway is a relay host the applications use
};

/// "star", "regions", "relay".
const char* TopologyKindName(TopologyKind kind);
/// Inverse of TopologyKindName; InvalidArgument listing the allowed names otherwise.
hilo::StatusOr<TopologyKind> ParseTopologyKind(const std::string& name);

/// What to build. Workers are numbered 0..N-1: for kStar in `worker_links` order, for kRegions
/// and kRelay region by region in `regions` order.
struct TopologySpec
{
    TopologyKind kind{TopologyKind::kStar};
    // A link every learner packet crosses before it fans out (learner NIC, datacenter egress).
    // Absent: the learner attaches directly to each worker link (star) or regional link.
    std::optional<LinkSpec> learner_uplink;
    std::vector<LinkSpec> worker_links; // kStar only: one WAN link per worker
    std::vector<RegionSpec> regions;    // kRegions and kRelay only
    // First ns-3 random stream given to the loss models (one per lossy device, in build order),
    // so that runs with the same seed and run number drop the same packets.
    int64_t rng_stream_base{1000};

    /// Checks kind-specific shape (star needs worker_links, regions need at least one region and
    /// unique names, at least one worker overall) and every link.
    hilo::Status Validate() const;
    /// Total workers described.
    uint32_t WorkerCount() const;
};

} // namespace hilosim

#endif // HILO_SIM_NET_LINK_SPEC_H
