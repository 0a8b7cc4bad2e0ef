// Replay throughput on a Qwen2.5-7B rank-64 shaped adapter (161,480,704 LoRA parameters) next to
// the memory bandwidth this machine sustains (copy and triad loops over buffers of the same size).
// Not run by CTest. Run: build/tests/hilo-replay-bench --benchmark_counters_tabular=true
#include "hilo/core/lora-layout.h"
#include "hilo/optim/replay.h"

#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cstring>

namespace
{

int64_t
ReferenceNumel()
{
    const hilo::TransformerShape s = hilo::Qwen25_7bShape();
    return hilo::LoraLayout(s.layers, hilo::AllLinearTargets(s), 64)->numel();
}

std::vector<float>
Filled(int64_t n, float v)
{
    return std::vector<float>(static_cast<size_t>(n), v);
}

// AdamW replay, in place (learner) or into a second buffer set (replica), finiteness check
// included. In place it moves 28 bytes per parameter: reads theta, m, v, g (16) and writes theta,
// m, v (12). Out of place the three written buffers are not read by the loop, so the cache first
// reads each written line (write-allocate): 40 bytes per parameter.
void
BM_AdamWReplay(benchmark::State& state)
{
    at::set_num_threads(static_cast<int>(state.range(0)));
    const bool out_of_place = state.range(1) != 0;
    const int64_t n = ReferenceNumel();
    hilo::OptimizerConfig config;
    config.weight_decay = 0.01f;
    hilo::ReplicatedState s;
    s.adapter.theta = Filled(n, 0.01f);
    s.optimizer = hilo::NewOptimizerState(config, n);
    hilo::ReplicatedState next = out_of_place ? s : hilo::ReplicatedState();
    const std::vector<float> g = Filled(n, 1e-3f);
    for (auto _ : state)
    {
        if (out_of_place)
        {
            benchmark::DoNotOptimize(hilo::ReplayStep(config, s, g, &next).ok());
            std::swap(s, next);
        }
        else
        {
            benchmark::DoNotOptimize(hilo::ReplayStep(config, s, g, &s).ok());
        }
        benchmark::DoNotOptimize(s.adapter.theta.data());
    }
    state.SetItemsProcessed(state.iterations() * n);
    state.SetBytesProcessed(state.iterations() * n * (out_of_place ? 40 : 28));
    state.counters["params"] = static_cast<double>(n);
}
BENCHMARK(BM_AdamWReplay)
    ->ArgNames({"threads", "out_of_place"})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// STREAM-style triad a = b + s * c over three parameter-sized buffers: 16 bytes per element
// (reads b and c, writes a, and the cache reads each line of a before writing it).
void
BM_Triad(benchmark::State& state)
{
    at::set_num_threads(static_cast<int>(state.range(0)));
    const int64_t n = ReferenceNumel();
    std::vector<float> a = Filled(n, 0.0f), b = Filled(n, 1.0f), c = Filled(n, 2.0f);
    const float scalar = 0.5f;
    for (auto _ : state)
    {
        float* pa = a.data();
        const float* pb = b.data();
        const float* pc = c.data();
        at::parallel_for(0, n, 1 << 15,
                         [&](int64_t begin, int64_t end)
                         {
                             for (int64_t i = begin; i < end; ++i)
                             {
                                 pa[i] = pb[i] + scalar * pc[i];
                             }
                         });
        benchmark::DoNotOptimize(a.data());
    }
    state.SetItemsProcessed(state.iterations() * n);
    state.SetBytesProcessed(state.iterations() * n * 16);
}
BENCHMARK(BM_Triad)
    ->ArgNames({"threads"})
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// memcpy of one parameter-sized buffer: 8 bytes moved per element (read + write).
void
BM_Copy(benchmark::State& state)
{
    const int64_t n = ReferenceNumel();
    std::vector<float> a = Filled(n, 0.0f), b = Filled(n, 1.0f);
    for (auto _ : state)
    {
        std::memcpy(a.data(), b.data(), static_cast<size_t>(n) * sizeof(float));
        benchmark::DoNotOptimize(a.data());
    }
    state.SetItemsProcessed(state.iterations() * n);
    state.SetBytesProcessed(state.iterations() * n * 8);
}
BENCHMARK(BM_Copy)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
