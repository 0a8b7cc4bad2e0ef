// randk: a seeded random subset of the entries; the seed travels, the indices do not. Stratified
// sampling: the flat adapter [0, numel) is cut into k strata [floor(j n / k), floor((j+1) n / k))
// and one index is drawn uniformly in each (CounterRandom(seed, j) mod stratum size), so every
// entry is kept with probability ~k/n, indices come out sorted and distinct, and any stratum can be
// rebuilt independently (parallel decode). k is the largest that fits the budget.
//
// Payload `randk-v1`:
//   u8 value dtype (0 fp32, 1 bf16, 2 fp16), u8 flags (bit 0: unbiased), u64 seed, varint k
//   (k <= numel), then k values in index order.
// Nothing follows. Decode: zeros except the drawn entries, which get value * (numel / k) in fp32
// when unbiased, else the value.
//
// Options: dtype=fp32|bf16|fp16 (default bf16); seed=N (default 1): seeds the encoder's stream of
// per-payload seeds, so every step draws a fresh subset; unbiased=true|false (default false: with
// error feedback the unscaled values are the better choice).
#ifndef HILO_COMPRESS_RANDK_H
#define HILO_COMPRESS_RANDK_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>

namespace hilo
{

/// The j-th of k stratified indices over [0, n) for `seed`.
int64_t RandKIndex(uint64_t seed, int64_t j, int64_t k, int64_t n);

StatusOr<std::unique_ptr<Compressor>> NewRandKCompressor(const AdapterLayout& layout,
                                                         const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_RANDK_H
