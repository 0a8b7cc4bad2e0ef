#include "sim/net/flow/max-min-fair.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>

namespace hilosim
{

std::vector<double>
MaxMinFairRates(const std::vector<double>& capacity, const std::vector<FlowDemand>& flows)
{
    MaxMinFairScratch scratch;
    std::vector<double> rate;
    MaxMinFairRates(capacity, flows.data(), flows.size(), &scratch, &rate);
    return rate;
}

void
MaxMinFairRates(const std::vector<double>& capacity, const FlowDemand* flows, size_t count,
                MaxMinFairScratch* scratch, std::vector<double>* rates)
{
    const size_t nLinks = capacity.size();
    const size_t nFlows = count;
    std::vector<double>& rate = *rates;
    rate.assign(nFlows, 0.0);
    std::vector<uint8_t>& frozen = scratch->frozen;
    frozen.assign(nFlows, 0);
    std::vector<double>& remaining = scratch->remaining; // capacity not used by frozen flows
    remaining.assign(capacity.begin(), capacity.end());
    std::vector<double>& weight = scratch->weight; // total weight of unfrozen flows per link
    weight.assign(nLinks, 0.0);
    std::vector<uint64_t>& version = scratch->version;
    version.assign(nLinks, 0);
    // The flows on each link, ascending, in one buffer: link l's are
    // flowsOn[onStart[l] .. onStart[l + 1]) (one allocation, not one per link).
    std::vector<uint32_t>& onStart = scratch->on_start;
    onStart.assign(nLinks + 1, 0);
    for (uint32_t f = 0; f < nFlows; ++f)
    {
        for (uint32_t l : flows[f].links)
        {
            weight[l] += flows[f].weight;
            ++onStart[l + 1];
        }
    }
    for (size_t l = 0; l < nLinks; ++l)
    {
        onStart[l + 1] += onStart[l];
    }
    std::vector<uint32_t>& flowsOn = scratch->flows_on;
    flowsOn.resize(onStart[nLinks]);
    std::vector<uint32_t>& fill = scratch->fill;
    fill.assign(onStart.begin(), onStart.end() - 1);
    for (uint32_t f = 0; f < nFlows; ++f)
    {
        for (uint32_t l : flows[f].links)
        {
            flowsOn[fill[l]++] = f;
        }
    }

    // Level at which each link saturates if every unfrozen flow on it runs at that level: a
    // min-heap (what std::priority_queue with std::greater keeps, in a buffer that is reused).
    using Entry = MaxMinFairScratch::Entry; // level, link, version
    std::vector<Entry>& heap = scratch->heap;
    heap.clear();
    const std::greater<Entry> later;
    auto push = [&](uint32_t l)
    {
        ++version[l];
        if (weight[l] > 0)
        {
            heap.emplace_back(std::max(0.0, remaining[l]) / weight[l], l, version[l]);
            std::push_heap(heap.begin(), heap.end(), later);
        }
    };
    auto pop = [&]()
    {
        std::pop_heap(heap.begin(), heap.end(), later);
        heap.pop_back();
    };
    for (uint32_t l = 0; l < nLinks; ++l)
    {
        push(l);
    }
    // Unfrozen flows by cap, smallest first (index order breaks ties: deterministic).
    std::vector<uint32_t>& byCap = scratch->by_cap;
    byCap.resize(nFlows);
    for (uint32_t f = 0; f < nFlows; ++f)
    {
        byCap[f] = f;
    }
    std::stable_sort(byCap.begin(), byCap.end(),
                     [&](uint32_t a, uint32_t b) { return flows[a].cap < flows[b].cap; });
    size_t nextCap = 0;

    auto freeze = [&](uint32_t f, double level)
    {
        frozen[f] = 1;
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
        while (!heap.empty() && std::get<2>(heap.front()) != version[std::get<1>(heap.front())])
        {
            pop();
        }
        const double capLevel =
            nextCap < nFlows ? flows[byCap[nextCap]].cap : std::numeric_limits<double>::infinity();
        const double linkLevel =
            heap.empty() ? std::numeric_limits<double>::infinity() : std::get<0>(heap.front());
        if (capLevel <= linkLevel)
        {
            // Also covers flows without links: they stop at their own cap.
            freeze(byCap[nextCap], capLevel);
            --left;
            continue;
        }
        const uint32_t link = std::get<1>(heap.front());
        pop();
        ++version[link];
        for (uint32_t i = onStart[link]; i < onStart[link + 1]; ++i)
        {
            const uint32_t f = flowsOn[i];
            if (!frozen[f])
            {
                freeze(f, linkLevel);
                --left;
            }
        }
    }
}

} // namespace hilosim
