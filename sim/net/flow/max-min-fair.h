// Max-min fair rates of flows over capacitated links, by progressive filling (Bertsekas and
// Gallager, "Data Networks", 2nd ed., section 6.5.2): every unfrozen flow's rate rises at the same
// pace; a flow freezes when a link on its path saturates or when it reaches its own cap. The result
// is the unique allocation in which no flow can gain without a flow of equal or smaller rate
// losing.
//
// Flows may weigh differently on links: a flow at goodput rate r uses r * weight of each link on
// its path (weight = wire bytes per payload byte, so that per-packet header overhead counts).
// Fairness is on goodput: unfrozen flows rise together in goodput.
//
// Cost: O((sum of path lengths + links) * log(links)), with a heap of link saturation levels.
#ifndef HILO_SIM_NET_FLOW_MAX_MIN_FAIR_H
#define HILO_SIM_NET_FLOW_MAX_MIN_FAIR_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

namespace hilosim
{

struct FlowDemand
{
    std::vector<uint32_t> links; // indices into the capacity vector; duplicates not allowed
    double cap{std::numeric_limits<double>::infinity()}; // the flow's own limit, >= 0
    double weight{1.0};                                  // link use per unit of rate, > 0
};

/// Rates (same unit as the capacities, per unit of weight) of `flows` over links of `capacity`.
/// A flow with no links gets its cap (infinity if it has none). REQUIRES: capacities >= 0, link
/// indices < capacity.size().
std::vector<double> MaxMinFairRates(const std::vector<double>& capacity,
                                    const std::vector<FlowDemand>& flows);
/// Buffers of MaxMinFairRates, kept by a caller that solves often so that a solve allocates
/// nothing once they have grown.
struct MaxMinFairScratch
{
    using Entry = std::tuple<double, uint32_t, uint64_t>; // level, link, version
    std::vector<uint8_t> frozen;
    std::vector<double> remaining;
    std::vector<double> weight;
    std::vector<uint64_t> version;
    std::vector<uint32_t> on_start;
    std::vector<uint32_t> flows_on;
    std::vector<uint32_t> fill;
    std::vector<Entry> heap;
    std::vector<uint32_t> by_cap;
};

/// The same for the `count` flows at `flows`, into `rates`, with `scratch`'s buffers.
void MaxMinFairRates(const std::vector<double>& capacity, const FlowDemand* flows, size_t count,
                     MaxMinFairScratch* scratch, std::vector<double>* rates);

} // namespace hilosim

#endif // HILO_SIM_NET_FLOW_MAX_MIN_FAIR_H
