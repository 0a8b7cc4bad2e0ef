// Helpers shared by the hilo tests: layouts, deterministic pseudo-gradients, the sketch kernel's
// instruction sets this host runs, and the hilo strategy's spec with AdamW.
#ifndef HILO_TESTS_HILO_TEST_UTIL_H
#define HILO_TESTS_HILO_TEST_UTIL_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/sketch-kernel.h"
#include "hilo/core/adapter-layout.h"
#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"
#include "hilo/sync/sync-strategy.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace hilo
{
namespace testing
{

/// splitmix64: a tiny seeded generator for test data (no global state).
class SplitMix
{
  public:
    explicit SplitMix(uint64_t seed)
      : m_state(seed)
    {
    }
    uint64_t Next()
    {
        uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    /// Uniform in [-1, 1).
    float Uniform()
    {
        return static_cast<float>(static_cast<double>(Next() >> 11) * 0x1.0p-52 - 1.0);
    }

  private:
    uint64_t m_state;
};

/// Fills `out` with a pseudo-gradient whose scale varies by matrix, like real LoRA gradients.
inline void
FillGradient(const AdapterLayout& layout, SplitMix* rng, std::vector<float>* out)
{
    out->resize(static_cast<size_t>(layout.numel()));
    for (size_t m = 0; m < layout.size(); ++m)
    {
        const float scale = 1e-3f * static_cast<float>(1 + m % 5);
        const int64_t off = layout.offset(m);
        for (int64_t i = 0; i < layout.matrix(m).numel(); ++i)
        {
            (*out)[static_cast<size_t>(off + i)] = scale * rng->Uniform();
        }
    }
}

/// A layout with the awkward shapes of a 7B adapter (64x4096 and 4096x64) plus small ones.
inline AdapterLayout
MixedLayout()
{
    return AdapterLayout::Create({{"l0.q.lora_A", 64, 4096},
                                  {"l0.q.lora_B", 4096, 64},
                                  {"l0.k.lora_A", 8, 96},
                                  {"l0.k.lora_B", 32, 8},
                                  {"l0.o.lora_A", 3, 5}})
        .value();
}

/// A small layout for error-path tests.
inline AdapterLayout
SmallLayout()
{
    return AdapterLayout::Create({{"a", 4, 16}, {"b", 16, 4}}).value();
}

/// Initial LoRA-like parameters: A factors small random, B factors zero.
inline AdapterState
InitialState(const AdapterLayout& layout, uint64_t seed)
{
    SplitMix rng(seed);
    AdapterState s;
    s.theta.assign(static_cast<size_t>(layout.numel()), 0.0f);
    for (size_t m = 0; m < layout.size(); m += 2)
    {
        for (int64_t i = 0; i < layout.matrix(m).numel(); ++i)
        {
            s.theta[static_cast<size_t>(layout.offset(m) + i)] = 0.02f * rng.Uniform();
        }
    }
    return s;
}

/// Whether `a` and `b` hold the same floats, bit for bit.
inline bool
SameBytes(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// Whether two replicated states hold the same parameters and moments, bit for bit.
inline bool
SameState(const ReplicatedState& a, const ReplicatedState& b)
{
    return SameBytes(a.adapter.theta, b.adapter.theta) && SameBytes(a.optimizer.m, b.optimizer.m) &&
           SameBytes(a.optimizer.v, b.optimizer.v);
}

/// The sketch kernel's instruction sets this host runs (kPortable first).
inline std::vector<SketchIsa>
SupportedIsas()
{
    std::vector<SketchIsa> out;
    for (SketchIsa isa : {SketchIsa::kPortable, SketchIsa::kAvx2, SketchIsa::kAvx512})
        if (SketchIsaSupported(isa))
            out.push_back(isa);
    return out;
}

/// AdamW at lr 1e-3, the rest at the defaults.
inline OptimizerConfig
Adam()
{
    OptimizerConfig opt;
    opt.lr.base_lr = 1e-3f;
    return opt;
}

/// Strategy hilo with `compressor` and its `options` text, `budget`, error feedback on or off.
inline SyncSpec
HiloSpec(const std::string& compressor, const std::string& options, Budget budget,
         bool error_feedback = true)
{
    SyncSpec spec;
    spec.kind = SyncKind::kHilo;
    spec.compressor = compressor;
    spec.compressor_options = ParseCompressorOptions(options).value();
    spec.budget = budget;
    spec.error_feedback = ErrorFeedbackOptions{error_feedback, 1.0f};
    return spec;
}

} // namespace testing
} // namespace hilo

#endif // HILO_TESTS_HILO_TEST_UTIL_H
