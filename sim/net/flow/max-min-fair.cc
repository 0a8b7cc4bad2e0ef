#include "sim/net/flow/max-min-fair.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <tuple>

namespace hilosim
{

std::vector<double>
MaxMinFairRates(const std::vector<double>& capacity, const std::vector<FlowDemand>& flows)
{
    const size_t nLinks = capacity.size();
    const size_t nFlows = flows.size();
    std::vector<double> rate(nFlows, 0.0);
    std::vector<bool> frozen(nFlows, false);
    std::vector<double> remaining(capacity); // capacity not used by frozen flows
    std::vector<double> weight(nLinks, 0.0); // total weight of unfrozen flows per link
    std::vector<std::vector<uint32_t>> flowsOn(nLinks);
    std::vector<uint64_t> version(nLinks, 0);
    for (uint32_t f = 0; f < nFlows; ++f)
    {
        for (uint32_t l : flows[f].links)
        {
            weight[l] += flows[f].weight;
            flowsOn[l].push_back(f);
        }
    }

    // Level at which each link saturates if every unfrozen flow on it runs at that level.
    using Entry = std::tuple<double, uint32_t, uint64_t>; // level, link, version
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    auto push = [&](uint32_t l)
    {
        ++version[l];
        if (weight[l] > 0)
        {
            heap.emplace(std::max(0.0, remaining[l]) / weight[l], l, version[l]);
        }
    };
    for (uint32_t l = 0; l < nLinks; ++l)
    {
        push(l);
    }
    // Unfrozen flows by cap, smallest first (index order breaks ties: deterministic).
    std::vector<uint32_t> byCap(nFlows);
    for (uint32_t f = 0; f < nFlows; ++f)
    {
        byCap[f] = f;
    }
    std::stable_sort(byCap.begin(), byCap.end(),
                     [&](uint32_t a, uint32_t b) { return flows[a].cap < flows[b].cap; });
    size_t nextCap = 0;

    auto freeze = [&](uint32_t f, double level)
    {
        frozen[f] = true;
        rate[f] = level;
        for (uint32_t l : flows[f].links)
        {
            remaining[l] -= level * flows[f].weight;
            weight[l] -= flows[f].weight;
            if (weight[l] < 1e-12)
            {
                weight[l] = 0;
            }
            push(l);
        }
    };

    size_t left = nFlows;
    while (left > 0)
    {
        while (nextCap < nFlows && frozen[byCap[nextCap]])
        {
            ++nextCap;
        }
        while (!heap.empty() && std::get<2>(heap.top()) != version[std::get<1>(heap.top())])
        {
            heap.pop();
        }
        const double capLevel =
            nextCap < nFlows ? flows[byCap[nextCap]].cap : std::numeric_limits<double>::infinity();
        const double linkLevel =
            heap.empty() ? std::numeric_limits<double>::infinity() : std::get<0>(heap.top());
        if (capLevel <= linkLevel)
        {
            // Also covers flows without links: they stop at their own cap.
            freeze(byCap[nextCap], capLevel);
            --left;
            continue;
        }
        const uint32_t link = std::get<1>(heap.top());
        heap.pop();
        ++version[link];
        for (uint32_t f : flowsOn[link])
        {
            if (!frozen[f])
            {
                freeze(f, linkLevel);
                --left;
            }
        }
    }
    return rate;
}

} // namespace hilosim
