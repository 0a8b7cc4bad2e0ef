// quant: per-block scalar quantization of every entry. Two schemes:
//   qsgd: stochastic rounding to s levels (QSGD, Alistarh et al. 2017): with block scale S (the
//         block's max |x| by default, or its L2 norm as in the paper), level l = floor(|x| s / S)
//         plus one with probability frac(|x| s / S); value = sign * l * (S / s). Unbiased. The
//         rounding draws come from a counter-based stream seeded per payload by the encoder
//         (learner-local; not needed to decode).
//   int8: deterministic round-to-nearest with absmax scale S = max|x|, s = 127.
// The payload size is fixed by the layout and the options; it cannot shrink to a budget, so a
// budget below it is kBudgetTooSmall naming MinPayloadBytes() (for s = 1 it is about 10.2% of the
// adapter's bf16 bytes with the default block).
//
// Payload `quant-v1`:
//   u8 scheme (0 qsgd, 1 int8), u8 levels s (1, 7 or 127), u8 norm (0 max, 1 l2), varint block
//   f32 scale for every block: each matrix cut into ceil(numel_i / block) blocks, in layout order
//   codes q in [-s, s] for all numel entries in canonical order:
//     s = 1:   base 3, five entries per byte, byte = sum_t (q_t + 1) 3^t (< 243)
//     s = 7:   4 bits each, q + 7 in [0, 14], low nibble first
//     s = 127: one int8 each, -128 invalid
// Nothing follows. Decode: x_hat = q * (S / s) in fp32.
//
// Options: scheme=qsgd|int8 (default qsgd); block=N values per scale (default 1024); for qsgd only:
// levels=1|7|127 (default 1), norm=max|l2 (default max), seed=N (default 1).
#ifndef HILO_COMPRESS_QUANT_H
#define HILO_COMPRESS_QUANT_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>

namespace hilo
{

StatusOr<std::unique_ptr<Compressor>> NewQuantCompressor(const AdapterLayout& layout,
                                                         const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_QUANT_H
