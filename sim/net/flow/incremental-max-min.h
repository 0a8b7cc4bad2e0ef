// IncrementalMaxMinFair: the max-min fair rates of max-min-fair.h, kept up to date as flows come,
// go and change their caps, re-solving only the flows that a change can affect.
//
// Max-min fairness decomposes over the connected components of the graph in which flows and
// links are joined when the flow crosses the link: progressive filling in one component never
// reads the state of another. So when flows change, only the components that hold a changed flow
// (or a link a removed flow left) are re-solved, by the same progressive filling restricted to
// them. The sub-problem keeps the global order of flows (by id) and links (by index), which is
// how progressive filling breaks ties, so the rates are exactly (bit for bit) those of
// MaxMinFairRates over every flow at once: tests/sim/net-flow-incremental-test.cc checks it on
// random cases.
//
// Cost of Reshare: O((sum of path lengths + links) * log(links)) over the components touched,
// instead of over the whole network; Set and Remove are O(path length). Its buffers are kept
// between calls: a re-share allocates nothing once they have grown.
#ifndef HILO_SIM_NET_FLOW_INCREMENTAL_MAX_MIN_H
#define HILO_SIM_NET_FLOW_INCREMENTAL_MAX_MIN_H

#include "sim/net/flow/max-min-fair.h"

#include <cstdint>
#include <vector>

namespace hilosim
{

class IncrementalMaxMinFair
{
  public:
    /// Links of `capacity` (same units as FlowDemand rates x weight).
    explicit IncrementalMaxMinFair(std::vector<double> capacity);

    /// Adds flow `id` or replaces its demand. REQUIRES: link indices < capacity size, each once.
    void Set(uint32_t id, const FlowDemand& demand);
    /// Removes flow `id` (no-op when absent).
    void Remove(uint32_t id);
    bool Has(uint32_t id) const { return id < m_flows.size() && m_flows[id].present; }

    /// Re-solves every component touched since the last call. Returns the ids of the present
    /// flows whose rate was recomputed, ascending (their rate may or may not have changed).
    const std::vector<uint32_t>& Reshare();
    /// The rate of flow `id` at the last Reshare (0 if absent or never solved).
    double Rate(uint32_t id) const { return Has(id) ? m_flows[id].rate : 0.0; }

    /// Flows re-solved and components solved since construction (cost measurements).
    uint64_t resolved_flows() const { return m_resolvedFlows; }
    uint64_t components() const { return m_components; }

  private:
    struct Flow
    {
        FlowDemand demand;
        std::vector<uint32_t> slots; // position in m_flowsOn[demand.links[k]]
        bool present{false};
        double rate{0};
    };

    void Detach(uint32_t id);
    void MarkLinks(const std::vector<uint32_t>& links);
    /// Sorts `ids`, distinct and each below `range`, ascending.
    void SortIds(std::vector<uint32_t>* ids, size_t range);

    std::vector<double> m_capacity;
    std::vector<Flow> m_flows;                    // by id
    std::vector<std::vector<uint32_t>> m_flowsOn; // by link: present flows crossing it
    std::vector<uint32_t> m_dirtyLinks;           // links whose component must be re-solved
    std::vector<uint8_t> m_linkDirty;             // by link
    std::vector<uint32_t> m_dirtyLoose;           // changed flows without links
    std::vector<uint32_t> m_result;
    // Scratch of Reshare, kept to avoid reallocating.
    std::vector<uint8_t> m_linkSeen;
    std::vector<uint8_t> m_flowSeen;
    std::vector<uint32_t> m_linkLocal; // by link: its index in the component being solved
    std::vector<uint8_t> m_sortMark;   // SortIds' marks, all 0 between calls
    std::vector<uint32_t> m_links;
    std::vector<uint32_t> m_componentFlows;
    std::vector<uint32_t> m_stack;
    std::vector<uint32_t> m_seenLinks;
    std::vector<double> m_componentCapacity;
    std::vector<FlowDemand> m_demands; // grows only, so each demand keeps its link list's buffer
    MaxMinFairScratch m_solver;
    std::vector<double> m_rates;
    uint64_t m_resolvedFlows{0};
    uint64_t m_components{0};
};

} // namespace hilosim

#endif // HILO_SIM_NET_FLOW_INCREMENTAL_MAX_MIN_H
