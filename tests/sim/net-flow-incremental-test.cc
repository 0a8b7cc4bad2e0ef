// The incremental max-min fair allocator re-solves only the components a change touches and
// gets exactly (bit for bit) the rates of the full progressive filling, on seeded random cases.
#include "sim/net/flow/incremental-max-min.h"
#include "sim/net/flow/max-min-fair.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <random>

namespace hilosim
{
namespace
{

// The full progressive filling over every present flow, in id order.
std::map<uint32_t, double>
FullRates(const std::vector<double>& capacity, const std::map<uint32_t, FlowDemand>& flows)
{
    std::vector<FlowDemand> demands;
    for (const auto& [id, d] : flows)
        demands.push_back(d);
    const std::vector<double> rates = MaxMinFairRates(capacity, demands);
    std::map<uint32_t, double> out;
    size_t i = 0;
    for (const auto& [id, d] : flows)
        out[id] = rates[i++];
    return out;
}

FlowDemand
RandomDemand(std::mt19937_64& rng, uint32_t links)
{
    FlowDemand d;
    std::uniform_int_distribution<uint32_t> pathLength(0, std::min<uint32_t>(4, links));
    std::uniform_int_distribution<uint32_t> link(0, links - 1);
    const uint32_t n = rng() % 10 == 0 ? 0 : std::max<uint32_t>(1, pathLength(rng));
    while (d.links.size() < n)
    {
        const uint32_t l = link(rng);
        if (std::find(d.links.begin(), d.links.end(), l) == d.links.end())
            d.links.push_back(l);
    }
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    // Caps: none, a random one, or a popular value (ties between flows and links).
    const double pick = unit(rng);
    d.cap = pick < 0.4   ? std::numeric_limits<double>::infinity()
            : pick < 0.6 ? 2.5
                         : 10.0 * unit(rng);
    d.weight = rng() % 2 == 0 ? 1.0 : 1.0 + 0.1 * unit(rng);
    return d;
}

TEST(IncrementalMaxMinFair, EqualsFullProgressiveFillingOnRandomCases)
{
    std::mt19937_64 rng(20261201);
    int checks = 0;
    uint64_t resolved = 0;
    uint64_t present = 0;
    for (int round = 0; round < 200; ++round)
    {
        const uint32_t nLinks = 1 + static_cast<uint32_t>(rng() % 40);
        std::vector<double> capacity(nLinks);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (double& c : capacity)
            c = rng() % 8 == 0 ? 5.0 : 10.0 * unit(rng); // some equal capacities: ties
        IncrementalMaxMinFair inc(capacity);
        std::map<uint32_t, FlowDemand> flows;
        const uint32_t ids = 1 + static_cast<uint32_t>(rng() % 80);
        for (int batch = 0; batch < 30; ++batch)
        {
            const int ops = 1 + static_cast<int>(rng() % 5);
            for (int op = 0; op < ops; ++op)
            {
                const uint32_t id = static_cast<uint32_t>(rng() % ids);
                if (rng() % 4 == 0)
                {
                    inc.Remove(id);
                    flows.erase(id);
                }
                else
                {
                    const FlowDemand d = RandomDemand(rng, nLinks);
                    inc.Set(id, d);
                    flows[id] = d;
                }
            }
            const std::vector<uint32_t>& solved = inc.Reshare();
            resolved += solved.size();
            present += flows.size();
            for (uint32_t id : solved)
                ASSERT_TRUE(flows.count(id)) << "solved an absent flow " << id;
            const std::map<uint32_t, double> full = FullRates(capacity, flows);
            for (const auto& [id, rate] : full)
            {
                ASSERT_TRUE(inc.Has(id));
                ASSERT_EQ(inc.Rate(id), rate)
                    << "round " << round << " batch " << batch << " flow " << id;
                ++checks;
            }
        }
    }
    EXPECT_GT(checks, 10000);
    // Incremental: on these sparse random networks most flows are not re-solved each time.
    EXPECT_LT(resolved, present);
}

// A star, the shape a fleet makes: every flow crosses one shared link and its own. Components of
// hundreds of flows take the solver's large-component paths (ids put in order by one pass over
// the id range; buffers reused as components grow and shrink); rates stay those of the full
// progressive filling, bit for bit, and the solved ids are exactly the present ones, ascending.
TEST(IncrementalMaxMinFair, EqualsFullProgressiveFillingOnLargeStars)
{
    std::mt19937_64 rng(20261202);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int round = 0; round < 6; ++round)
    {
        const uint32_t spokes = 100 + static_cast<uint32_t>(rng() % 500);
        std::vector<double> capacity(spokes + 1);
        capacity[0] = 50.0 + 100.0 * unit(rng);
        for (uint32_t l = 1; l <= spokes; ++l)
            capacity[l] = rng() % 4 == 0 ? 1.0 : 2.0 * unit(rng);
        IncrementalMaxMinFair inc(capacity);
        std::map<uint32_t, FlowDemand> flows;
        for (int batch = 0; batch < 40; ++batch)
        {
            // Mostly adds at first, then mostly removals: the component grows, then shrinks.
            const double removeShare = batch < 20 ? 0.1 : 0.6;
            const int ops = 1 + static_cast<int>(rng() % 60);
            bool changed = false; // removing an absent flow changes nothing
            for (int op = 0; op < ops; ++op)
            {
                const uint32_t id = static_cast<uint32_t>(rng() % spokes);
                if (unit(rng) < removeShare)
                {
                    changed = changed || flows.count(id) != 0;
                    inc.Remove(id);
                    flows.erase(id);
                    continue;
                }
                changed = true;
                FlowDemand d;
                d.links = {0, 1 + id};
                const double pick = unit(rng);
                d.cap = pick < 0.5 ? std::numeric_limits<double>::infinity()
                                   : (pick < 0.7 ? 0.25 : unit(rng));
                d.weight = rng() % 2 == 0 ? 1.0 : 1.0 + 0.05 * unit(rng);
                inc.Set(id, d);
                flows[id] = d;
            }
            const std::vector<uint32_t> solved = inc.Reshare();
            std::vector<uint32_t> present;
            for (const auto& [id, d] : flows)
                present.push_back(id);
            // Every change touches the shared link: the whole star is re-solved.
            if (changed)
            {
                ASSERT_EQ(solved, present) << "round " << round << " batch " << batch;
            }
            for (const auto& [id, rate] : FullRates(capacity, flows))
                ASSERT_EQ(inc.Rate(id), rate)
                    << "round " << round << " batch " << batch << " flow " << id;
        }
    }
}

TEST(IncrementalMaxMinFair, ResolvesOnlyTheComponentThatChanged)
{
    // Two separate bottlenecks, two flows on each; a third link joins flows 4 and 0.
    IncrementalMaxMinFair inc({10.0, 6.0, 100.0});
    inc.Set(0, {{0}, std::numeric_limits<double>::infinity(), 1.0});
    inc.Set(1, {{0}, 2.0, 1.0});
    inc.Set(2, {{1}, std::numeric_limits<double>::infinity(), 1.0});
    inc.Set(3, {{1}, std::numeric_limits<double>::infinity(), 1.0});
    EXPECT_EQ(inc.Reshare(), (std::vector<uint32_t>{0, 1, 2, 3}));
    EXPECT_EQ(inc.Rate(0), 8.0);
    EXPECT_EQ(inc.Rate(1), 2.0);
    EXPECT_EQ(inc.Rate(2), 3.0);
    // Flow 3 leaves: only link 1's component is re-solved.
    inc.Remove(3);
    EXPECT_EQ(inc.Reshare(), (std::vector<uint32_t>{2}));
    EXPECT_EQ(inc.Rate(2), 6.0);
    EXPECT_EQ(inc.Rate(3), 0.0);
    // Flow 1's cap changes: link 0's component.
    inc.Set(1, {{0}, 4.0, 1.0});
    EXPECT_EQ(inc.Reshare(), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(inc.Rate(0), 6.0);
    // A flow over links 0 and 2 joins flow 0's component.
    inc.Set(4, {{2, 0}, std::numeric_limits<double>::infinity(), 1.0});
    EXPECT_EQ(inc.Reshare(), (std::vector<uint32_t>{0, 1, 4}));
    EXPECT_DOUBLE_EQ(inc.Rate(4), 10.0 / 3.0); // link 0 shared three ways (cap 4 unused)
    // Nothing changed: nothing re-solved.
    EXPECT_TRUE(inc.Reshare().empty());
    EXPECT_EQ(inc.components(), 5u);
}

} // namespace
} // namespace hilosim
