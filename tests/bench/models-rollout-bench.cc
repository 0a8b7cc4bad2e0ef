// Rollouts of W workers holding the same adapter: one batched RolloutMany call against W Rollout
// calls (the simulator's cost per round when every worker samples on its own). Same samples either
// way (tests/models/batched-rollout-test.cc); this measures what batching saves.
//   build/tests/models-rollout-bench --benchmark_min_time=2
#include "models/workload.h"

#include <benchmark/benchmark.h>

namespace
{

models::WorkloadConfig
Config()
{
    models::WorkloadConfig c; // the quickstart's tiny model
    c.kind = "distill";
    c.seed = 42;
    c.vocab = 64;
    c.d_model = 128;
    c.layers = 2;
    c.heads = 4;
    c.context = 64;
    c.lora_rank = 64;
    c.lora_alpha = 128;
    c.prompts_per_worker = 4;
    c.group_size = 1;
    c.gen_tokens = 16;
    return c;
}

void
BM_RolloutPerWorker(benchmark::State& state)
{
    auto w = std::move(models::Workload::Create(Config())).value();
    const std::vector<float> theta = w->InitialAdapter().theta;
    const auto workers = static_cast<uint32_t>(state.range(0));
    for (auto _ : state)
    {
        for (uint32_t i = 0; i < workers; ++i)
            benchmark::DoNotOptimize(w->Rollout(theta, 1, i, nullptr));
    }
    state.counters["workers/s"] =
        benchmark::Counter(double(workers) * state.iterations(), benchmark::Counter::kIsRate);
}

void
BM_RolloutBatched(benchmark::State& state)
{
    auto w = std::move(models::Workload::Create(Config())).value();
    const std::vector<float> theta = w->InitialAdapter().theta;
    std::vector<uint32_t> workers(static_cast<size_t>(state.range(0)));
    for (uint32_t i = 0; i < workers.size(); ++i)
        workers[i] = i;
    for (auto _ : state)
        benchmark::DoNotOptimize(w->RolloutMany(theta, 1, workers, nullptr));
    state.counters["workers/s"] = benchmark::Counter(double(workers.size()) * state.iterations(),
                                                     benchmark::Counter::kIsRate);
}

} // namespace

BENCHMARK(BM_RolloutPerWorker)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RolloutBatched)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
