// The generation's grouped products at the quickstart's size (one rollout chunk: 256 workers of 4
// rows, one decode token): one direct sgemm per group (GroupedProduct) against at::bmm
// (GroupedProductBmm). Same bits (tests/models/grouped-product-test.cc); this measures what the
// direct calls save.
//   build/tests/models-grouped-product-bench --benchmark_min_time=1
#include "models/grouped-product.h"

#include <ATen/CPUGeneratorImpl.h>
#include <benchmark/benchmark.h>

namespace
{

struct Operands
{
    at::Tensor x;
    at::Tensor w;
    std::vector<int64_t> groups;
};

// range(0) = d_in, range(1) = d_out.
Operands
Make(const benchmark::State& state)
{
    at::Generator gen = at::detail::createCPUGenerator(1);
    Operands o;
    o.groups.assign(256, 4);
    o.x = at::randn({1024, 1, state.range(0)}, gen, at::kFloat);
    o.w = at::randn({state.range(1), state.range(0)}, gen, at::kFloat);
    return o;
}

void
BM_GroupedProductDirect(benchmark::State& state)
{
    const Operands o = Make(state);
    for (auto _ : state)
        benchmark::DoNotOptimize(models::GroupedProduct(o.x, o.w, o.groups));
}

void
BM_GroupedProductBmm(benchmark::State& state)
{
    const Operands o = Make(state);
    for (auto _ : state)
        benchmark::DoNotOptimize(models::GroupedProductBmm(o.x, o.w, o.groups));
}

} // namespace

// Attention projections, LoRA A and B factors, the MLP's two linears, the output layer.
#define HILO_GROUPED_SHAPES \
    Args({128, 128})        \
        ->Args({128, 64})   \
        ->Args({64, 128})   \
        ->Args({128, 512})  \
        ->Args({512, 128})  \
        ->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_GroupedProductDirect)->HILO_GROUPED_SHAPES;
BENCHMARK(BM_GroupedProductBmm)->HILO_GROUPED_SHAPES;
BENCHMARK_MAIN();
