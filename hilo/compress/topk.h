// topk: the entries of largest magnitude, values plus Elias-Fano coded indices. Scope `global`
// picks the k largest |x| over the whole adapter; `per_matrix` gives every matrix the same
// fraction, k_i = floor(K * numel_i / numel). k (or K) is the largest that fits the budget, from
// the closed-form size of the encoding, so comparisons are at equal bytes. Ties at the threshold go
// to the lower index (deterministic).
//
// Payload `topk-v1`:
//   u8 value dtype (0 fp32, 1 bf16, 2 fp16), u8 scope (0 global, 1 per_matrix)
//   global:     varint k, Elias-Fano(k indices, universe numel) (hilo/compress/elias-fano.h)
//   per_matrix: for each matrix in layout order: varint k_i, Elias-Fano(k_i indices within the
//               matrix, universe numel_i)
//   then the kept values in index order (global order for per_matrix), dtype-coded.
// Nothing follows. Decode: zeros everywhere except the kept entries.
//
// Options: dtype=fp32|bf16|fp16 (default bf16), scope=global|per_matrix (default global).
#ifndef HILO_COMPRESS_TOPK_H
#define HILO_COMPRESS_TOPK_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>
#include <vector>

namespace hilo
{

/// Indices (ascending) of the k entries of x[0..n) with the largest |x|; ties at the threshold go
/// to the lower index. Exact radix selection on the magnitude bits; parallel, and the result does
/// not depend on the thread count. REQUIRES: every x finite, 0 <= k <= n.
void SelectLargestMagnitudes(const float* x, int64_t n, int64_t k, std::vector<int64_t>* out);

StatusOr<std::unique_ptr<Compressor>> NewTopKCompressor(const AdapterLayout& layout,
                                                        const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_TOPK_H
