// The warm sketch's products over one LoRA factor matrix in a single pass over it.
//
// X is the matrix seen from its short side (m x d, m = min(rows, cols)); it is stored row-major as
// rows x cols, so X is the stored matrix when rows <= cols and its transpose otherwise. Given an
// m x l basis Q, the warm sketch needs W = X^T Q (d x l) and Z = X W = X X^T Q (m x l). Both are
// formed block by block along the long side: for kSketchBlock columns of X at a time,
// W_b = X_b^T Q, then Z += X_b W_b while X_b is still in the core's cache. X is read from memory
// once instead of twice (PowerSGD's two products, P = M Q and M^T P, cannot be fused: P is
// orthonormalized between them).
//
// Deterministic: the blocks are fixed by d alone and summed in order, on the calling thread (BLAS,
// used for widths above 16 only, should be held at one thread by the caller), so the result does
// not depend on the thread count.
#ifndef HILO_COMPRESS_SKETCH_PASS_H
#define HILO_COMPRESS_SKETCH_PASS_H

#include <cstdint>

namespace hilo
{

/// Columns of X (long-side entries) per block: 64 x 1024 fp32 = 256 KiB, within a core's L2.
constexpr int64_t kSketchBlock = 1024;

/// W = X^T Q into `w` (d x l row-major), when `z` is not null Z = X W into `z` (m x l
/// row-major) and when `h` is not null H = W^T W into `h` (l x l row-major), for the matrix
/// stored row-major at `x` as rows x cols. `q` is m x l row-major. Widths up to
/// kSketchKernelMaxWidth (every width the warm sketch uses) go through sketch-kernel.h: no BLAS,
/// each tile of X read once, W's Gram matrix formed block by block with it, and the same bits on
/// every host; wider ones through sgemm.
/// REQUIRES: l >= 1; `w`, `z`, `h` do not overlap `x`, `q` or each other.
void SketchPass(const float* x, int64_t rows, int64_t cols, const float* q, int64_t l, float* w,
                float* z, float* h = nullptr);

/// SketchPass through sgemm at any width (two products per block, each packing X_b): what
/// SketchPass runs above kSketchKernelMaxWidth, and the kernel's comparison in benchmarks.
void SketchPassBlas(const float* x, int64_t rows, int64_t cols, const float* q, int64_t l, float* w,
                    float* z, float* h = nullptr);

/// H = W^T W (l x l row-major, symmetric) of the d x l row-major `w`.
void ColumnGram(const float* w, int64_t d, int64_t l, float* h);

} // namespace hilo

#endif // HILO_COMPRESS_SKETCH_PASS_H
