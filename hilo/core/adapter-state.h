// AdapterState: the LoRA parameters of one adapter version, fp32, one flat buffer in canonical
// layout order (matrix i occupies [layout.offset(i), layout.offset(i) + numel_i), row-major).
// OptimizerState: the moments and step counters that replicas keep so they can replay steps.
#ifndef HILO_CORE_ADAPTER_STATE_H
#define HILO_CORE_ADAPTER_STATE_H

#include "hilo/core/adapter-layout.h"

#include <cstdint>
#include <vector>

namespace hilo
{

struct AdapterState
{
    std::vector<float> theta; // layout.numel() values
    uint64_t version{0};      // number of updates applied since version 0

    /// XXH64 of theta's bytes (canonical order); the hash every Update carries.
    uint64_t Hash() const;
};

/// Optimizer state, replicated on workers for HiLo replay. Bias-correction products are running
/// fp32 products (beta^t computed by repeated multiplication, never pow, so every host agrees).
struct OptimizerState
{
    std::vector<float> m; // first moment (AdamW) or momentum buffer (SGD); empty if unused
    std::vector<float> v; // second moment (AdamW); empty if unused
    uint64_t step{0};     // optimizer steps taken
    float beta1_prod{1.0f};
    float beta2_prod{1.0f};

    /// XXH64 over step, products, m and v (for tests and snapshots).
    uint64_t Hash() const;
};

/// What a replica holds and what a snapshot restores: parameters plus optimizer state.
struct ReplicatedState
{
    AdapterState adapter;
    OptimizerState optimizer;
};

} // namespace hilo

#endif // HILO_CORE_ADAPTER_STATE_H
