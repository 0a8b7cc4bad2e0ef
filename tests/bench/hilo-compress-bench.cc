// Encode and decode time of every compressor on the 7B-rank-64-shaped adapter (161M LoRA params,
// hilo-compress-fixture.h) at 1.6%, 5% and 10% of the adapter's bytes (pulse, lossless and
// budget-free, on a synthetic Adam step), plus decode + AdamW replay and the machine's memory
// bandwidth for comparison. Two threads (LibTorch intra-op and OpenBLAS). Encodes are timed in
// the steady state, after one untimed encode whose CPU time is reported as first_cpu_s.
//   build-compress/tests/hilo-compress-bench --benchmark_out=results/compressors/bench.json
//       --benchmark_out_format=json
// Thread count: HILO_BENCH_THREADS (default 2; OpenBLAS follows OPENBLAS_NUM_THREADS).
// Arguments: /arm/budget where budget is in tenths of a percent (16 = 1.6%); 0 = the compressor's
// own minimum payload (quant, whose size is fixed).
#include "hilo/compress/base-aware.h"
#include "hilo/compress/compressor-factory.h"
#include "hilo/compress/replay-aware.h"
#include "hilo/optim/replay.h"
#include "tests/bench/hilo-compress-fixture.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

namespace
{

using namespace hilo;

struct Fixture
{
    AdapterLayout layout;
    std::vector<float> x;
};

const Fixture&
Shared()
{
    static const Fixture* f = []
    {
        const char* threads = std::getenv("HILO_BENCH_THREADS");
        at::set_num_threads(threads != nullptr ? std::max(1, std::atoi(threads)) : 2);
        auto* out = new Fixture;
        out->layout = bench::Qwen7BLoraLayout();
        out->x = bench::SyntheticLoraGradient(out->layout, 2024);
        return out;
    }();
    return *f;
}

std::unique_ptr<Compressor>
Make(int arm)
{
    const bench::Arm& a = bench::ReportArms()[static_cast<size_t>(arm)];
    return NewCompressor(a.kind, Shared().layout, *ParseCompressorOptions(a.options)).value();
}

int64_t
BudgetBytes(const Compressor& c, int64_t permille)
{
    if (permille == 0)
        return c.MinPayloadBytes();
    return Shared().layout.adapter_bytes() * permille / 1000;
}

/// The timed loop of every encode benchmark. `encode()` runs once untimed first: what a learner
/// pays on its first step only (scratch pages touched for the first time, PowerSGD's starting
/// draws) is reported apart, as first_cpu_s; the iterations are the encodes of every later step.
template<typename EncodeFn>
void
TimeEncodes(benchmark::State& state, EncodeFn encode)
{
    const double first0 = bench::ProcessCpuSeconds();
    StatusOr<Encoded> first = encode();
    if (!first.ok())
    {
        state.SkipWithError(first.status().ToString().c_str());
        return;
    }
    const double first_cpu_s = bench::ProcessCpuSeconds() - first0;
    size_t bytes = first->payload.size();
    const double cpu0 = bench::ProcessCpuSeconds();
    for (auto _ : state)
    {
        StatusOr<Encoded> e = encode();
        if (!e.ok())
        {
            state.SkipWithError(e.status().ToString().c_str());
            break;
        }
        bytes = e->payload.size();
        benchmark::DoNotOptimize(e->payload.data());
    }
    state.counters["process_cpu_s"] =
        benchmark::Counter(bench::ProcessCpuSeconds() - cpu0, benchmark::Counter::kAvgIterations);
    state.counters["first_cpu_s"] = first_cpu_s;
    state.counters["payload_bytes"] = static_cast<double>(bytes);
    state.counters["fraction"] = static_cast<double>(bytes) / Shared().layout.adapter_bytes();
}

/// The timed loop of every decode benchmark: `payload` decoded by `c` into a numel-sized buffer.
void
TimeDecodes(benchmark::State& state, const Compressor& c, const std::string& payload)
{
    std::vector<float> out(static_cast<size_t>(Shared().layout.numel()));
    const double cpu0 = bench::ProcessCpuSeconds();
    for (auto _ : state)
    {
        Status s = c.Decode(payload, &out);
        benchmark::DoNotOptimize(out.data());
        if (!s.ok())
            state.SkipWithError(s.ToString().c_str());
    }
    state.counters["process_cpu_s"] =
        benchmark::Counter(bench::ProcessCpuSeconds() - cpu0, benchmark::Counter::kAvgIterations);
}

void
BM_Encode(benchmark::State& state)
{
    const Fixture& f = Shared();
    auto c = Make(static_cast<int>(state.range(0)));
    const int64_t budget = BudgetBytes(*c, state.range(1));
    TimeEncodes(state, [&] { return c->Encode(f.x, budget); });
    state.SetLabel(bench::ReportArms()[static_cast<size_t>(state.range(0))].label);
}

void
BM_Decode(benchmark::State& state)
{
    const Fixture& f = Shared();
    auto c = Make(static_cast<int>(state.range(0)));
    StatusOr<Encoded> e = c->Encode(f.x, BudgetBytes(*c, state.range(1)));
    if (!e.ok())
    {
        state.SkipWithError(e.status().ToString().c_str());
        return;
    }
    auto worker = Make(static_cast<int>(state.range(0)));
    TimeDecodes(state, *worker, e->payload);
    state.SetLabel(bench::ReportArms()[static_cast<size_t>(state.range(0))].label);
}

/// Worker side of one HiLo step: decode, then the AdamW replay on theta, m, v (fp32).
void
BM_DecodeReplay(benchmark::State& state)
{
    const Fixture& f = Shared();
    auto c = Make(static_cast<int>(state.range(0)));
    StatusOr<Encoded> e = c->Encode(f.x, BudgetBytes(*c, state.range(1)));
    if (!e.ok())
    {
        state.SkipWithError(e.status().ToString().c_str());
        return;
    }
    OptimizerConfig opt;
    ReplicatedState s;
    s.adapter.theta.assign(f.x.size(), 0.01f);
    s.optimizer = NewOptimizerState(opt, f.layout.numel());
    std::vector<float> g(f.x.size());
    double decode_s = 0, replay_s = 0;
    for (auto _ : state)
    {
        auto t0 = std::chrono::steady_clock::now();
        (void) c->Decode(e->payload, &g);
        auto t1 = std::chrono::steady_clock::now();
        ReplayStep(opt, s, g, &s);
        auto t2 = std::chrono::steady_clock::now();
        decode_s += std::chrono::duration<double>(t1 - t0).count();
        replay_s += std::chrono::duration<double>(t2 - t1).count();
        benchmark::DoNotOptimize(s.adapter.theta.data());
    }
    state.counters["decode_s"] = benchmark::Counter(decode_s, benchmark::Counter::kAvgIterations);
    state.counters["replay_s"] = benchmark::Counter(replay_s, benchmark::Counter::kAvgIterations);
    state.SetLabel(bench::ReportArms()[static_cast<size_t>(state.range(0))].label);
}

/// spar with basis=replicated (hilo/compress/replicated-basis.h): encode and decode against a
/// replicated state whose first moment is another synthetic gradient of the layout (every matrix
/// full rank, so each derives its widest basis: 16 directions, the power step where m > 16).
/// Both include deriving the basis, which every replica pays on every decode.
struct BasisFixture
{
    OptimizerConfig config;
    OptimizerState state;
};

const BasisFixture&
SharedBasis()
{
    static const BasisFixture* f = []
    {
        auto* out = new BasisFixture;
        out->state = NewOptimizerState(out->config, Shared().layout.numel());
        out->state.m = bench::SyntheticLoraGradient(Shared().layout, 2023);
        return out;
    }();
    return *f;
}

std::unique_ptr<Compressor>
MakeBasis()
{
    std::unique_ptr<Compressor> c =
        NewCompressor("spar", Shared().layout,
                      *ParseCompressorOptions("basis=replicated;dtype=bf16"))
            .value();
    dynamic_cast<ReplayAwareCompressor*>(c.get())->SetOptimizerState(&SharedBasis().state,
                                                                     &SharedBasis().config);
    return c;
}

void
BM_EncodeBasis(benchmark::State& state)
{
    auto c = MakeBasis();
    const int64_t budget = BudgetBytes(*c, state.range(0));
    TimeEncodes(state, [&] { return c->Encode(Shared().x, budget); });
}

void
BM_DecodeBasis(benchmark::State& state)
{
    auto c = MakeBasis();
    StatusOr<Encoded> e = c->Encode(Shared().x, BudgetBytes(*c, state.range(0)));
    if (!e.ok())
    {
        state.SkipWithError(e.status().ToString().c_str());
        return;
    }
    TimeDecodes(state, *MakeBasis(), e->payload);
}

/// pulse on the same layout: base w ~ N(0, 0.02^2) (LoRA-scale parameters), change X ~ N(0,
/// (2e-5)^2) (an Adam step at lr 2e-5), so that a minority of entries change their bf16 value.
struct PulseFixture
{
    std::vector<float> base;
    std::vector<float> change;
};

const PulseFixture&
SharedPulse()
{
    static const PulseFixture* f = []
    {
        auto* out = new PulseFixture;
        const int64_t n = Shared().layout.numel();
        at::Generator g = at::detail::createCPUGenerator(2025);
        at::Tensor w = at::randn({n}, g) * 0.02;
        at::Tensor d = at::randn({n}, g) * 2e-5;
        out->base.assign(w.data_ptr<float>(), w.data_ptr<float>() + n);
        out->change.assign(d.data_ptr<float>(), d.data_ptr<float>() + n);
        return out;
    }();
    return *f;
}

std::unique_ptr<BaseAwareCompressor>
MakePulse()
{
    std::unique_ptr<Compressor> c = NewCompressor("pulse", Shared().layout, {}).value();
    return std::unique_ptr<BaseAwareCompressor>(static_cast<BaseAwareCompressor*>(c.release()));
}

void
BM_PulseEncode(benchmark::State& state)
{
    const PulseFixture& f = SharedPulse();
    auto c = MakePulse();
    TimeEncodes(state,
                [&]
                {
                    c->SetBase(&f.base);
                    return c->Encode(f.change, std::numeric_limits<int64_t>::max());
                });
}

void
BM_PulseDecode(benchmark::State& state)
{
    const PulseFixture& f = SharedPulse();
    auto c = MakePulse();
    c->SetBase(&f.base);
    StatusOr<Encoded> e = c->Encode(f.change, std::numeric_limits<int64_t>::max());
    if (!e.ok())
    {
        state.SkipWithError(e.status().ToString().c_str());
        return;
    }
    TimeDecodes(state, *c, e->payload);
}

/// STREAM-like triad a = b + s * c over three numel-sized fp32 arrays, two threads: the memory
/// bandwidth the decode + replay numbers are compared with (bytes: 16 x numel per pass: reads b
/// and c, writes a, and the cache reads each line of a before writing it).
void
BM_MemoryTriad(benchmark::State& state)
{
    const int64_t n = Shared().layout.numel();
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n), 1.0f),
        c(static_cast<size_t>(n), 2.0f);
    for (auto _ : state)
    {
        at::parallel_for(0, n, 1 << 16,
                         [&](int64_t lo, int64_t hi)
                         {
                             for (int64_t i = lo; i < hi; ++i)
                                 a[i] = b[i] + 0.5f * c[i];
                         });
        benchmark::DoNotOptimize(a.data());
    }
    state.SetBytesProcessed(state.iterations() * 16 * n);
}

void
Arms(benchmark::internal::Benchmark* b)
{
    const auto& arms = bench::ReportArms();
    for (size_t i = 0; i < arms.size(); ++i)
    {
        const std::string label = arms[i].label;
        if (label == "spar-uniform" || label == "topk-per-matrix" || label == "spar-int8")
            continue; // allocation / scope ablations: the error tool covers them
        if (std::string(arms[i].kind) == "quant")
        {
            b->Args({static_cast<int64_t>(i), 0});
            continue;
        }
        for (int64_t permille : {16, 50, 100})
            b->Args({static_cast<int64_t>(i), permille});
    }
}

BENCHMARK(BM_Encode)->Apply(Arms)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_Decode)->Apply(Arms)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_DecodeReplay)
    ->Args({0, 16})
    ->Args({0, 100})
    ->Args({3, 16})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK(BM_EncodeBasis)
    ->Arg(16)
    ->Arg(50)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK(BM_DecodeBasis)
    ->Arg(16)
    ->Arg(50)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
BENCHMARK(BM_PulseEncode)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_PulseDecode)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_MemoryTriad)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
