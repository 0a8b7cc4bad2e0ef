// Re-sharing a star: N streams, each over its own worker link and one link all of them share
// (the quickstart's learner uplink), so every change re-solves one component of N flows. This is
// the flow model's cost per event during a broadcast; a step has O(N) such events, so it sets how
// the flow model's CPU per step grows with the fleet. Not run by CTest. Usage:
//   build/tests/sim-max-min-star-bench [--benchmark_filter=...]
#include "sim/net/flow/incremental-max-min.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace
{

using hilosim::FlowDemand;
using hilosim::IncrementalMaxMinFair;

// Link 0 is shared; link 1 + i is stream i's own. Caps alternate between a window-bound value
// and none, as window-bound and share-bound streams do.
FlowDemand
StarDemand(uint32_t stream, double cap)
{
    FlowDemand d;
    d.links = {0, 1 + stream};
    d.cap = cap;
    d.weight = 1.03;
    return d;
}

// One event: a stream's cap changes (a round ended), then the component is re-solved.
void
BM_StarReshareOneChange(benchmark::State& state)
{
    const auto n = static_cast<uint32_t>(state.range(0));
    std::vector<double> capacity(n + 1, 12.5e6);
    capacity[0] = 125e6;
    IncrementalMaxMinFair fair(capacity);
    for (uint32_t i = 0; i < n; ++i)
    {
        fair.Set(i, StarDemand(i, (i % 2) ? 1e6 + i : 1e300));
    }
    fair.Reshare();
    uint32_t next = 0;
    for (auto _ : state)
    {
        fair.Set(next, StarDemand(next, 2e6 + next));
        benchmark::DoNotOptimize(fair.Reshare().size());
        next = (next + 1) % n;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StarReshareOneChange)->Arg(256)->Arg(1024)->Arg(4096);

} // namespace

BENCHMARK_MAIN();
