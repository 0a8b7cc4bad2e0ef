// Dense kernels for the sketch's small matrices (L x L Rayleigh-Ritz matrices, m x L bases with
// m, L <= 64), in double, without LAPACK or LibTorch dispatch: at ~400 matrices per encode, a
// LibTorch call's fixed cost (allocation, dispatch, type conversion) is what these sizes pay most.
// Both are deterministic functions of their input: no threads, no host library.
#ifndef HILO_COMPRESS_SMALL_EIGEN_H
#define HILO_COMPRESS_SMALL_EIGEN_H

#include <cstdint>
#include <vector>

namespace hilo
{

/// Eigenvalues and eigenvectors of the n x n symmetric row-major `a` (both triangles read) by
/// cyclic Jacobi rotations. `values`: n eigenvalues, non-increasing; `vectors`: n x n row-major,
/// column j the unit eigenvector of values[j], to working precision.
void SymmetricEigen(int64_t n, std::vector<double> a, std::vector<double>* values,
                    std::vector<double>* vectors);

/// Orthonormalizes the m x l row-major columns of `y` in place (l <= m): Gram-Schmidt run twice
/// per column (orthogonal to working precision). A column that vanishes against the earlier
/// ones (Y rank-deficient) is replaced by the first unit vector e_r that does not, so the result
/// is always an orthonormal basis whose leading columns span Y's leading columns.
void OrthonormalizeColumns(int64_t m, int64_t l, std::vector<double>* y);

} // namespace hilo

#endif // HILO_COMPRESS_SMALL_EIGEN_H
