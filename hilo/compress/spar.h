// spar: budget-aware spectral truncation of every LoRA factor gradient.
//
// Encode (learner only): the leading singular triplets of every matrix X_i (rows x cols, m_i =
// min(rows, cols)) come from hilo/compress/spectral-truncation.h: a randomized sketch of width L
// (option sketch, default 0 = none) for matrices with m_i > L, the exact m x m Gram
// eigendecomposition otherwise and wherever the allocation wants more triplets than the sketch
// offers. Every triplet
// (i, j) is a candidate with gain sigma_ij^2 and cost c_i = 4 + CodedVectorBytes(rows_i) +
// CodedVectorBytes(cols_i) bytes (sigma, then both vectors). SparAllocate picks k_i per matrix
// (greedy by gain / cost, or uniform); the long-side factor of each kept triplet is X^T u (or
// X v), so that the shipped triplet is an exact projection of X: sigma = ||X^T u||.
//
// Payload `spar-v1`:
//   u8     value dtype (0 fp32, 1 bf16, 2 fp16, 3 int8)
//   varint number of matrices (must equal the layout's)
//   varint k_i for each matrix in layout order, k_i <= min(rows_i, cols_i)
//   for each matrix i with k_i > 0, for j = 0..k_i-1 (decreasing sigma):
//     f32 sigma_ij, coded vector u_ij (rows_i values), coded vector v_ij (cols_i values)
//   (coded vectors: hilo/compress/factor-coding.h; int8 vectors carry their own f32 scale)
// Nothing follows. Decode: X_hat_i = sum_j (sigma_ij u_ij) v_ij^T with LowRankReconstructAll.
//
// Payload `spar-rb-v1` (option basis=replicated; allocation-policy.h): a direction may also be
// shipped in the basis learner and replicas derive from Adam's first moment before this step
// (hilo/compress/replicated-basis.h; w_i directions for matrix i, unit vectors of its long side):
//   u8     value dtype
//   varint number of matrices (must equal the layout's)
//   varint k_i for each matrix (fresh triplets, k_i <= m_i)
//   varint c_i for each matrix (coefficient entries, c_i <= w_i)
//   for each matrix i: c_i entries, each u8 direction j (strictly increasing, < w_i) and a coded
//     vector of m_i coefficients c (X_s v_j, X_s the matrix seen from its short side); then its
//     k_i fresh triplets as in spar-v1, from X with every basis direction projected out.
// Decode: X_hat_i = sum over entries of c v_j^T, then the triplets, with LowRankReconstructAll.
// A direction costs 1 + CodedVectorBytes(m_i) bytes instead of a triplet's 4 + coded m_i + d_i;
// the greedy takes both kinds by gain (||c||^2 or sigma^2, separate shares of X's energy) per
// byte, the coefficients within basis_share of the bytes. Decode needs the same state as the
// encode (the strategy sets it; without it kInvalidArgument).
//
// Options: dtype=fp32|bf16|fp16|int8 (default bf16), min_rank=N (default 0; triplets every matrix
// keeps, capped at m_i), allocation=energy|preconditioned|uniform (default energy, the greedy by
// sigma^2 / cost; greedy is its older name; preconditioned = the greedy by the size of the step
// Adam will take, hilo/compress/allocation-policy.h; uniform = the same k for every matrix, the
// ablation; it keeps k >= 1, so its smallest payload holds a triplet of every matrix),
// coverage=N, ef_max_ratio=R (allocation-policy.h; encoder only), basis=fresh|replicated with
// basis_width=N and basis_share=S (allocation-policy.h; replicated changes the format, above,
// and needs min_rank=0),
// sketch=0|4..N (default 0 = exact spectra everywhere; encoder only, the payload format is the
// same), screen=true|false (default false; needs sketch > 0: the single-pass screen of
// spectral-truncation.h, a second pass only over the matrices it keeps; greedy, min_rank=0 only,
// otherwise ignored; encoder only), warm=true|false (default DefaultWarm(); needs sketch > 0 and no
// screen: the sketch warm-started from the previous encode's bases, spectral-truncation.h; the
// bases are learner-local state, SaveLocalState; encoder only).
// Budget: header bytes are reserved first (the k_i varints at their widest), then triplets are
// allocated; MinPayloadBytes() is the header plus min_rank triplets everywhere.
#ifndef HILO_COMPRESS_SPAR_H
#define HILO_COMPRESS_SPAR_H

#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"

#include <memory>
#include <vector>

namespace hilo
{

enum class SparAllocation : uint8_t
{
    kGreedy = 0,  // by gain / cost across all matrices
    kUniform = 1, // the same k for all matrices (capped at each m_i)
};

/// One matrix as the allocator sees it.
struct SparCandidates
{
    int64_t cost{0};           // bytes per triplet
    std::vector<double> gains; // sigma_j^2, non-increasing; size m_i
    double weight{1.0};        // greedy: the gain of triplet j is weight * gains[j] (>= 0)
    int64_t overdue{0};        // greedy: > 0 asks for one triplet before the greedy runs
    bool capped{false};        // greedy: counts against SparAllocate's capped_bytes
};

/// Chooses k_i for every matrix so that sum_i k_i * cost_i <= budget_bytes (the budget net of
/// headers), every k_i >= min(min_rank, m_i). Greedy: first every matrix with overdue > 0, no
/// triplet yet and a non-zero leading gain gets one, most overdue first (ties: lower matrix),
/// each when it fits; then candidates in decreasing weight * gain / cost (ties: lower matrix,
/// then lower j), each taken when it fits; a matrix whose next triplet does not fit is closed, and
/// its later triplets (same cost) never fit either, so the bytes left over are fewer than the
/// cost of any matrix with a positive-gain candidate left: the budget is filled to within one
/// smallest triplet. Within one triplet's gain of the optimum (gains are sorted per matrix) and
/// monotone in the budget. Uniform (weights and overdue ignored): the largest common k. Returns
/// kBudgetTooSmall when the minimum ranks alone do not fit.
/// `capped_bytes` >= 0 (greedy only): the candidates of the matrices marked `capped` take at most
/// that many bytes together (a capped matrix whose next triplet would pass it is closed), so the
/// rest of the budget is left to the others (spar's basis=replicated, basis_share).
StatusOr<std::vector<int64_t>> SparAllocate(const std::vector<SparCandidates>& matrices,
                                            int64_t budget_bytes, int64_t min_rank,
                                            SparAllocation mode, int64_t capped_bytes = -1);

StatusOr<std::unique_ptr<Compressor>> NewSparCompressor(const AdapterLayout& layout,
                                                        const CompressorOptions& options);

} // namespace hilo

#endif // HILO_COMPRESS_SPAR_H
