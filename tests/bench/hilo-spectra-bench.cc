// Cost of the pieces of a spectral truncation (hilo/compress/spectral-truncation.h) on single
// matrices shaped like the 7B-rank-64 adapter's (hilo-compress-fixture.h): the sketch's skinny
// products of width L, the warm sketch's fused pass (sgemm or the project's kernel), the exact
// path's Gram (ssyrk) and the small decompositions (eigh of the 64 x 64 Gram, QR of a 64 x 8
// sketch). One thread, BLAS at one thread; the matrix stays in cache between iterations (the
// 18944 x 64 one in L2 at best), so these are lower bounds of what an encode pays per matrix.
//   build/tests/hilo-spectra-bench
// Arguments: shape (0 = A of q, 64 x 3584; 1 = B of q, 3584 x 64; 2 = B of gate, 18944 x 64),
// width L, side; BM_Small: width, 0 = eigh / 1 = QR; BM_SketchPass: shape, width L, path (0 =
// sgemm, 1 = the kernel's portable loops, 2 = AVX2, 3 = AVX-512).
// BM_Plan: the whole plan (spectra + rank allocation) of spar bf16 on the full 161.5M adapter and
// its synthetic gradient (hilo-compress-fixture.h), on HILO_BENCH_THREADS threads (default 2),
// steady state (one untimed plan first); arguments width L (0 = exact), screen (0/1), budget in
// tenths of a percent. Counters: matrices per plan given a second pass (finished), screened out
// after one pass, and redone exactly; process_cpu_s = CPU of all threads per plan.
#include "hilo/compress/blas-hooks.h"
#include "hilo/compress/factor-coding.h"
#include "hilo/compress/sketch-kernel.h"
#include "hilo/compress/sketch-pass.h"
#include "hilo/compress/spectral-truncation.h"
#include "tests/bench/hilo-compress-fixture.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace
{

using namespace hilo;

// Shapes: 0 = A of q (64 x 3584), 1 = B of q (3584 x 64), 2 = B of gate (18944 x 64).
at::Tensor
Matrix(int64_t shape)
{
    const int64_t rows[] = {64, 3584, 18944};
    const int64_t cols[] = {3584, 64, 64};
    at::manual_seed(7);
    return at::randn({rows[shape], cols[shape]});
}

/// One skinny product with the matrix: side 0 = X Omega (long side reduced, d x L operand), side
/// 1 = X^T Q (short side reduced, m x L operand), as the sketch runs them.
void
BM_SkinnyProduct(benchmark::State& state)
{
    at::set_num_threads(1);
    SingleThreadedBlas one;
    at::Tensor x = Matrix(state.range(0));
    at::Tensor xs = x.size(0) <= x.size(1) ? x : x.t(); // m x d view
    const bool sketch = state.range(2) == 0;
    at::Tensor operand = at::randn({sketch ? xs.size(1) : xs.size(0), state.range(1)});
    for (auto _ : state)
    {
        at::Tensor y = sketch ? at::mm(xs, operand) : at::mm(xs.t(), operand);
        benchmark::DoNotOptimize(y.data_ptr<float>());
    }
    state.SetBytesProcessed(state.iterations() * x.numel() * 4);
}

/// The warm sketch's fused pass (sketch-pass.h) with W's Gram matrix: path 0 = sgemm
/// (SketchPassBlas), 1 = the kernel's portable loops, 2 = AVX2, 3 = AVX-512 (sketch-kernel.h).
void
BM_SketchPass(benchmark::State& state)
{
    at::set_num_threads(1);
    SingleThreadedBlas one;
    const at::Tensor x = Matrix(state.range(0));
    const int64_t m = std::min(x.size(0), x.size(1));
    const int64_t d = std::max(x.size(0), x.size(1));
    const int64_t l = state.range(1);
    const int64_t path = state.range(2);
    const SketchIsa isas[] = {SketchIsa::kPortable, SketchIsa::kAvx2, SketchIsa::kAvx512};
    if (path > 0 && !SketchIsaSupported(isas[path - 1]))
    {
        state.SkipWithError("this host does not run that instruction set");
        return;
    }
    const at::Tensor q = at::randn({m, l});
    std::vector<float> w(static_cast<size_t>(d * l));
    std::vector<float> z(static_cast<size_t>(m * l));
    std::vector<float> h(static_cast<size_t>(l * l));
    for (auto _ : state)
    {
        if (path == 0)
            SketchPassBlas(x.data_ptr<float>(), x.size(0), x.size(1), q.data_ptr<float>(), l,
                           w.data(), z.data(), h.data());
        else
            SketchKernel(isas[path - 1], x.data_ptr<float>(), x.size(0), x.size(1),
                         q.data_ptr<float>(), l, w.data(), z.data(), h.data());
        benchmark::DoNotOptimize(z.data());
    }
    state.SetBytesProcessed(state.iterations() * x.numel() * 4);
}

void
BM_Gram(benchmark::State& state)
{
    at::set_num_threads(1);
    SingleThreadedBlas one;
    at::Tensor x = Matrix(state.range(0));
    const int64_t m = std::min(x.size(0), x.size(1));
    const int64_t k = std::max(x.size(0), x.size(1));
    at::Tensor g = at::zeros({m, m});
    const int n = static_cast<int>(m), kk = static_cast<int>(k), lda = static_cast<int>(x.size(1));
    const float one_f = 1.0f, zero = 0.0f;
    for (auto _ : state)
    {
        Blas().ssyrk("U", x.size(0) <= x.size(1) ? "T" : "N", &n, &kk, &one_f, x.data_ptr<float>(),
                     &lda, &zero, g.data_ptr<float>(), &n);
        benchmark::DoNotOptimize(g.data_ptr<float>());
    }
    state.SetBytesProcessed(state.iterations() * x.numel() * 4);
}

void
BM_Small(benchmark::State& state)
{
    at::set_num_threads(1);
    SingleThreadedBlas one;
    at::Tensor a = at::randn({64, 64}, at::kDouble);
    a = at::mm(a, a.t());
    at::Tensor y = at::randn({64, state.range(0)}, at::kDouble);
    for (auto _ : state)
    {
        if (state.range(1) == 0)
            benchmark::DoNotOptimize(at::linalg_eigh(a));
        else
            benchmark::DoNotOptimize(at::linalg_qr(y, "reduced"));
    }
}

void
BM_Plan(benchmark::State& state)
{
    const char* threads = std::getenv("HILO_BENCH_THREADS");
    at::set_num_threads(threads != nullptr ? std::max(1, std::atoi(threads)) : 2);
    static const AdapterLayout layout = bench::Qwen7BLoraLayout();
    static const std::vector<float> x = bench::SyntheticLoraGradient(layout, 2024);
    std::vector<int64_t> triplet_bytes;
    SpectralTruncation::TripletBytes(
        layout,
        [](const MatrixSpec& s)
        {
            return 4 + CodedVectorBytes(s.rows, ValueDtype::kBf16) +
                   CodedVectorBytes(s.cols, ValueDtype::kBf16);
        },
        0, &triplet_bytes);
    const int64_t budget = layout.adapter_bytes() * state.range(2) / 1000 - 1 -
                           SpectralTruncation::RankSectionBytes(layout);
    SpectralTruncation t(layout, state.range(0), state.range(1) != 0);
    auto plan = [&]
    { return t.Plan(x, triplet_bytes, budget, 0, SparAllocation::kGreedy, "bench").value(); };
    SpectralPlan p = plan();
    const double cpu0 = bench::ProcessCpuSeconds();
    for (auto _ : state)
        p = plan();
    state.counters["process_cpu_s"] =
        benchmark::Counter(bench::ProcessCpuSeconds() - cpu0, benchmark::Counter::kAvgIterations);
    state.counters["finished"] = static_cast<double>(p.finished);
    state.counters["screened_out"] = static_cast<double>(p.screened_out);
    state.counters["exact_redos"] = static_cast<double>(p.exact_redos);
}

BENCHMARK(BM_SkinnyProduct)
    ->ArgsProduct({{0, 1, 2}, {1, 4, 8, 16}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SketchPass)
    ->ArgsProduct({{0, 1, 2}, {2, 4, 8, 16}, {0, 2, 3}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Gram)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Small)->Args({8, 0})->Args({8, 1})->Unit(benchmark::kMicrosecond);
void
PlanArgs(benchmark::internal::Benchmark* b)
{
    for (int64_t permille : {16, 50})
    {
        b->Args({0, 0, permille});
        for (int64_t width : {8, 16})
        {
            b->Args({width, 0, permille});
            b->Args({width, 1, permille});
        }
    }
}

BENCHMARK(BM_Plan)->Apply(PlanArgs)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
