#include "sim/net/flow/incremental-max-min.h"

#include "ns3/abort.h"

#include <algorithm>

namespace hilosim
{

IncrementalMaxMinFair::IncrementalMaxMinFair(std::vector<double> capacity)
  : m_capacity(std::move(capacity))
  , m_flowsOn(m_capacity.size())
  , m_linkDirty(m_capacity.size(), 0)
  , m_linkSeen(m_capacity.size(), 0)
  , m_linkLocal(m_capacity.size(), 0)
{
}

void
IncrementalMaxMinFair::SortIds(std::vector<uint32_t>* ids, size_t range)
{
    // Distinct ids below `range`: when they are a good part of it, one pass over the range puts
    // them in order for less than a comparison sort (a star's shared link holds every flow).
    if (ids->size() < 64 || ids->size() * 8 < range)
    {
        std::sort(ids->begin(), ids->end());
        return;
    }
    if (m_sortMark.size() < range)
    {
        m_sortMark.resize(range, 0);
    }
    for (uint32_t id : *ids)
    {
        m_sortMark[id] = 1;
    }
    ids->clear();
    for (size_t id = 0; id < range; ++id)
    {
        if (m_sortMark[id])
        {
            m_sortMark[id] = 0;
            ids->push_back(static_cast<uint32_t>(id));
        }
    }
}

void
IncrementalMaxMinFair::MarkLinks(const std::vector<uint32_t>& links)
{
    for (uint32_t l : links)
    {
        if (!m_linkDirty[l])
        {
            m_linkDirty[l] = 1;
            m_dirtyLinks.push_back(l);
        }
    }
}

void
IncrementalMaxMinFair::Detach(uint32_t id)
{
    Flow& f = m_flows[id];
    for (size_t k = 0; k < f.demand.links.size(); ++k)
    {
        std::vector<uint32_t>& on = m_flowsOn[f.demand.links[k]];
        const uint32_t slot = f.slots[k];
        const uint32_t moved = on.back();
        on[slot] = moved;
        on.pop_back();
        if (moved != id)
        {
            Flow& m = m_flows[moved];
            for (size_t j = 0; j < m.demand.links.size(); ++j)
            {
                if (m.demand.links[j] == f.demand.links[k])
                {
                    m.slots[j] = slot;
                    break;
                }
            }
        }
    }
    MarkLinks(f.demand.links);
    f.slots.clear();
    f.present = false;
}

void
IncrementalMaxMinFair::Set(uint32_t id, const FlowDemand& demand)
{
    for (uint32_t l : demand.links)
    {
        NS_ABORT_MSG_IF(l >= m_capacity.size(),
                        "IncrementalMaxMinFair: link " << l << " does not exist");
    }
    if (id >= m_flows.size())
    {
        m_flows.resize(id + 1);
        m_flowSeen.resize(id + 1, 0);
    }
    if (m_flows[id].present)
    {
        Detach(id);
    }
    Flow& f = m_flows[id];
    f.demand = demand;
    f.present = true;
    f.rate = 0;
    f.slots.resize(demand.links.size());
    for (size_t k = 0; k < demand.links.size(); ++k)
    {
        std::vector<uint32_t>& on = m_flowsOn[demand.links[k]];
        f.slots[k] = static_cast<uint32_t>(on.size());
        on.push_back(id);
    }
    MarkLinks(demand.links);
    if (demand.links.empty())
    {
        m_dirtyLoose.push_back(id);
    }
}

void
IncrementalMaxMinFair::Remove(uint32_t id)
{
    if (!Has(id))
    {
        return;
    }
    Detach(id);
    m_flows[id].rate = 0;
}

const std::vector<uint32_t>&
IncrementalMaxMinFair::Reshare()
{
    m_result.clear();
    // Flows without links form components of their own: they get their cap.
    for (uint32_t id : m_dirtyLoose)
    {
        Flow& f = m_flows[id];
        if (f.present && f.demand.links.empty() && !m_flowSeen[id])
        {
            m_flowSeen[id] = 1;
            f.rate = f.demand.cap;
            m_result.push_back(id);
            ++m_resolvedFlows;
            ++m_components;
        }
    }
    std::vector<uint32_t>& links = m_links;
    std::vector<uint32_t>& flows = m_componentFlows;
    std::vector<uint32_t>& stack = m_stack;
    std::vector<uint32_t>& seenLinks = m_seenLinks;
    seenLinks.clear();
    for (uint32_t start : m_dirtyLinks)
    {
        if (m_linkSeen[start])
        {
            continue;
        }
        // The component of `start`: links and the flows crossing them, transitively.
        links.clear();
        flows.clear();
        stack.assign(1, start);
        m_linkSeen[start] = 1;
        while (!stack.empty())
        {
            const uint32_t l = stack.back();
            stack.pop_back();
            links.push_back(l);
            seenLinks.push_back(l);
            for (uint32_t f : m_flowsOn[l])
            {
                if (m_flowSeen[f])
                {
                    continue;
                }
                m_flowSeen[f] = 1;
                flows.push_back(f);
                for (uint32_t next : m_flows[f].demand.links)
                {
                    if (!m_linkSeen[next])
                    {
                        m_linkSeen[next] = 1;
                        stack.push_back(next);
                    }
                }
            }
        }
        if (flows.empty())
        {
            continue; // links every flow left
        }
        // The global orders break progressive filling's ties: keep them.
        SortIds(&links, m_capacity.size());
        SortIds(&flows, m_flows.size());
        std::vector<double>& capacity = m_componentCapacity;
        capacity.resize(links.size());
        for (size_t i = 0; i < links.size(); ++i)
        {
            capacity[i] = m_capacity[links[i]];
            m_linkLocal[links[i]] = static_cast<uint32_t>(i);
        }
        // Reused across calls: each demand's link list keeps its allocation.
        std::vector<FlowDemand>& demands = m_demands; // the first flows.size() are this one's
        if (demands.size() < flows.size())
        {
            demands.resize(flows.size());
        }
        for (size_t i = 0; i < flows.size(); ++i)
        {
            const FlowDemand& d = m_flows[flows[i]].demand;
            demands[i].cap = d.cap;
            demands[i].weight = d.weight;
            demands[i].links.clear();
            for (uint32_t l : d.links)
            {
                demands[i].links.push_back(m_linkLocal[l]);
            }
        }
        std::vector<double>& rates = m_rates;
        MaxMinFairRates(capacity, demands.data(), flows.size(), &m_solver, &rates);
        for (size_t i = 0; i < flows.size(); ++i)
        {
            m_flows[flows[i]].rate = rates[i];
            m_result.push_back(flows[i]);
        }
        m_resolvedFlows += flows.size();
        ++m_components;
    }
    // Reset the scratch marks (links stay seen until every dirty start is handled: a later
    // start may lie in a component already solved).
    for (uint32_t l : seenLinks)
    {
        m_linkSeen[l] = 0;
    }
    for (uint32_t id : m_result)
    {
        m_flowSeen[id] = 0;
    }
    for (uint32_t l : m_dirtyLinks)
    {
        m_linkDirty[l] = 0;
    }
    m_dirtyLinks.clear();
    m_dirtyLoose.clear();
    SortIds(&m_result, m_flows.size());
    return m_result;
}

} // namespace hilosim
