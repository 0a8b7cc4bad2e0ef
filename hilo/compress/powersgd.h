// powersgd: rank-k approximation by one warm-started power iteration per matrix (Vogels et al.,
// NeurIPS 2019). For each matrix M (rows x cols), k_i = min(k, rows, cols):
//   P = M Q;  P = orth(P) (modified Gram-Schmidt);  Q = M^T P;  M_hat = P Q^T.
// Q (cols x k_i) stays in the encoder instance and starts the next step (warm start); it is drawn
// N(0, 1) from the option seed the first time and whenever the rank changes, and a column whose P
// column vanished (M Q_j = 0, e.g. an all-zero gradient) is drawn afresh, so that a matrix whose
// gradient starts at zero is not stuck at zero forever. Learner-local; never on the wire.
//
// The rank k is the same for every matrix and derived from the budget: the largest k whose payload
// fits (capped by max_rank when set), so comparisons with other compressors are at equal bytes.
//
// Payload `powersgd-v1`:
//   u8     value dtype (0 fp32, 1 bf16, 2 fp16, 3 int8)
//   varint number of matrices (must equal the layout's)
//   varint k (the common rank; k_i = min(k, rows_i, cols_i))
//   for each matrix i, for j = 0..k_i-1: coded vector p_ij (rows_i values), coded vector q_ij
//   (cols_i values) (hilo/compress/factor-coding.h)
// Nothing follows. Decode: M_hat_i = sum_j p_ij q_ij^T with LowRankReconstructAll.
//
// Options: dtype=fp32|bf16|fp16|int8 (default bf16); max_rank=N (default 0: no cap); seed=N
// (default 1, the initial Q); error_feedback=true|false (default false): the reference design's
// own memory, M = X + e, e = M - M_hat, kept per encoder. It is the same arithmetic as the
// strategy-level ErrorFeedback wrapper; enable one of them, never both.
#ifndef HILO_COMPRESS_POWERSGD_H
#define HILO_COMPRESS_POWERSGD_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>

namespace hilo
{

StatusOr<std::unique_ptr<Compressor>> NewPowerSgdCompressor(const AdapterLayout& layout,
                                                            const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_POWERSGD_H
