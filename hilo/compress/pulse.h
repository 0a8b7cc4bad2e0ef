// pulse: lossless sparse sync of the bf16 parameters that changed (the PULSE observation, arXiv
// 2602.03839: at full-fine-tuning learning rates bf16 rounding swallows most Adam steps, so the
// entries whose bf16 value changes are few). A base-aware compressor for `delta` and `primal`:
// given the replicas' parameters w (SetBase) and the wanted change X, entry i is shipped exactly
// when its bf16 value changes, bf16(w_i + X_i) != bf16(w_i), and then as the delta that lands the
// replica on that bf16 value, d_i = bf16(w_i + X_i) - w_i (fp32 arithmetic; exact, and w_i + d_i
// is exactly the bf16 value, whenever w_i and the target are within 2^16 of each other in scale).
// Nothing else is lost: the unsent part goes to the strategy's error feedback (delta) or stays in
// the master's gap (primal), as PULSE's fp32 master keeps accumulating. With error feedback on,
// replicas hold bf16(x) of the learner's parameters at every version (entries the run never
// changed keep their initial fp32 value), i.e. full bf16 sync shipped sparsely.
//
// Payload `pulse-v1`: the shipped entries in two disjoint sets, those whose delta is a bf16 value
// (the common case: old and new value share an exponent, so the delta is a multiple of their ulp
// below 2^8) and the rest (crossing a power of two, or leaving an initial fp32 value) in fp32:
//   varint k16, Elias-Fano block of the k16 indices over numel (hilo/compress/elias-fano.h)
//   varint k32, Elias-Fano block of the k32 indices over numel
//   k16 bf16 values, then k32 fp32 values, each set in index order
// Decode: zeros, then out[index] = value. Values must be finite and non-zero, the sets disjoint,
// k16 + k32 <= numel. PULSE itself ships the new bf16 value instead of the delta (2 bytes per
// entry either way); the fp32 set is what keeps this decode free of the replica's state.
//
// Options: none. It is lossless, so it takes no byte budget: an update whose changed entries do
// not fit a finite budget is kBudgetTooSmall (leave the budget empty).
#ifndef HILO_COMPRESS_PULSE_H
#define HILO_COMPRESS_PULSE_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>

namespace hilo
{

StatusOr<std::unique_ptr<Compressor>> NewPulseCompressor(const AdapterLayout& layout,
                                                         const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_PULSE_H
