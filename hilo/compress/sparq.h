// sparq: Spar with low-bit factor codes. The same budgeted spectral truncation as `spar` (leading
// singular triplets of every matrix, greedy gain / cost allocation across matrices under one byte
// budget, SparAllocate), but each kept factor vector travels as b-bit integer codes with one fp32
// absmax scale per block of values, so a triplet costs ~(rows + cols) b / 8 bytes instead of
// 2 (rows + cols) in bf16: at 4 bits four times the rank for the same bytes. The encoder fits the
// quantization: triplet j's second vector is refit against what the earlier quantized triplets
// left over (w = R^T u_hat / |u_hat|^2 on the residual R), so later triplets absorb the rounding
// of earlier ones, and each block's scale is the best of a few clipping levels (least squared
// error). Any error left goes to the caller's error feedback.
//
// Payload `sparq-v1`:
//   u8     bits b, 2..8 (codes q in [-L, L], L = 2^(b-1) - 1)
//   varint block (values per scale; 0 = one scale per vector)
//   varint number of matrices (must equal the layout's)
//   varint k_i for each matrix in layout order, k_i <= min(rows_i, cols_i)
//   for each matrix i, for j = 0..k_i-1: low-bit vector u_ij (rows_i values), low-bit vector
//   v_ij (cols_i values)
// Low-bit vector of n values: nb = ceil(n / block) (1 when block is 0) fp32 scales (finite, >= 0),
// then ceil(n b / 8) bytes of codes q + L, b bits each, packed least significant bit first;
// value = scale of its block * q. A code above 2L is corrupt. Nothing follows the last triplet.
// Decode: X_hat_i = sum_j u_ij v_ij^T with LowRankReconstruct (fixed order, thread-independent).
//
// Spectra and allocation: hilo/compress/spectral-truncation.h, as spar.
//
// Options: bits=2..8 (default 4), block=0|8..65536 (default 0), min_rank=N (default 0),
// sketch=0|4..N and warm=true|false (defaults as spar's; warm needs a sketch; the warm bases are
// learner-local state, SaveLocalState), allocation=energy|preconditioned, coverage=N,
// ef_max_ratio=R and basis=fresh (hilo/compress/allocation-policy.h; all encoder only).
// MinPayloadBytes() is the header plus min_rank triplets everywhere.
#ifndef HILO_COMPRESS_SPARQ_H
#define HILO_COMPRESS_SPARQ_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>

namespace hilo
{

/// Bytes of one low-bit vector of `n` values (scales + packed codes).
int64_t LowBitVectorBytes(int64_t n, int bits, int64_t block);

StatusOr<std::unique_ptr<Compressor>> NewSparqCompressor(const AdapterLayout& layout,
                                                         const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_SPARQ_H
