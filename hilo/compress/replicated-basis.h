// The replicated basis of spar's basis=replicated (hilo/compress/spar.h): per LoRA factor matrix,
// an orthonormal set of long-side directions that the learner and every replica derive from the
// optimizer state they already hold bit for bit (Adam's first moment M, before the step the
// payload is replayed as), so that a payload can ship a direction as its m short-side
// coefficients alone instead of a whole triplet (4 + m + d values).
//
// Derivation, matrix by matrix (M seen from its short side: m x d, m = min(rows, cols)):
//   Q = I_m when m <= kSketchKernelMaxWidth, else a fixed orthonormal m x 16 start (+-1 counter
//       draws, orthonormalized) and one power step: Z = M M^T Q, Q = orth(Z);
//   W = M^T Q (d x l) and H = W^T W (l x l) with the sketch kernel (hilo/compress/sketch-kernel.h:
//       a fixed summation order whose results are bit-equal on every instruction set);
//   H = R diag(lambda) R^T (SymmetricEigen, hilo/compress/small-eigen.h, in double);
//   direction j = W r_j / sqrt(lambda_j) for the leading eigenpairs with lambda_j > 0 and
//       lambda_j >= kReplicatedBasisRelTol * lambda_0 (at most `max_width`), orthonormalized in
//       double (Gram-Schmidt twice, fixed order) and rounded to fp32.
// With Q = I_m the directions are M's leading right singular vectors (exact); with the power
// step, the Rayleigh-Ritz vectors of its leading subspace. Everything after the kernel runs in
// the project's own scalar loops (no LAPACK, no BLAS), each matrix on one thread: the basis is a
// pure function of M's bits, the same on every thread count, instruction set and host.
#ifndef HILO_COMPRESS_REPLICATED_BASIS_H
#define HILO_COMPRESS_REPLICATED_BASIS_H

#include "hilo/compress/sketch-kernel.h"
#include "hilo/core/adapter-layout.h"

#include <cstdint>
#include <vector>

namespace hilo
{

/// Eigenvalues of H below this fraction of the leading one give no direction (rounding noise of
/// an fp32 Gram reaches about 1e-7 of lambda_0).
constexpr double kReplicatedBasisRelTol = 1e-5;

/// Every matrix's directions: matrix i has width[i] unit long-side vectors (d_i fp32 values each,
/// pairwise orthogonal), direction j at vectors[at[i] + j * d_i], in decreasing eigenvalue order
/// (each matrix has room for min(m_i, 16) directions; what lies past width[i] is unspecified).
struct ReplicatedBasis
{
    std::vector<int64_t> width;
    std::vector<int64_t> at;
    std::vector<float> vectors;
};

/// The basis of every matrix of `layout` derived from `first_moment` (layout.numel() values,
/// canonical order), at most `max_width` directions per matrix (0: up to m_i). A matrix whose M
/// is zero or holds a non-finite value gets none. `isa` picks the sketch kernel's instruction set
/// (tests; every one gives the same bits). `wanted` (null: all): only the matrices i with
/// wanted[i] != 0 are derived, the others get none (a decoder needs only the matrices its
/// payload ships coefficients of). REQUIRES: SketchIsaSupported(isa).
ReplicatedBasis DeriveReplicatedBasis(const AdapterLayout& layout,
                                      const std::vector<float>& first_moment, int64_t max_width,
                                      SketchIsa isa = BestSketchIsa(),
                                      const std::vector<uint8_t>* wanted = nullptr);

/// x seen in the basis: per matrix i (short-side view X_s, m x d) the coefficients c_ij = X_s v_ij
/// (m fp32 values each, at coeffs[at[i] + j * m]) and their energies ||c_ij||^2 (double, at
/// gains[gain_at[i] + j]); `residual` (resized to x's size) gets every matrix with all its basis
/// directions projected out, X_s - sum_j c_ij v_ij^T. Since the directions are orthonormal,
/// ||X||^2 = sum_j gains_ij + ||residual_i||^2 up to rounding: a direction's coefficients and
/// the residual's triplets are separate shares of X's energy. Learner only: sgemm with BLAS at
/// one thread per matrix, the same on every thread count of this host.
struct BasisProjection
{
    std::vector<int64_t> at;
    std::vector<float> coeffs;
    std::vector<int64_t> gain_at;
    std::vector<double> gains;
};
BasisProjection ProjectOntoBasis(const AdapterLayout& layout, const ReplicatedBasis& basis,
                                 const std::vector<float>& x, std::vector<float>* residual);

} // namespace hilo

#endif // HILO_COMPRESS_REPLICATED_BASIS_H
