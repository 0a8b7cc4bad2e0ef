#include "hilo/compress/sketch-pass.h"

#include "hilo/compress/blas-hooks.h"
#include "hilo/compress/sketch-kernel.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <climits>

namespace hilo
{
namespace
{

/// C (column-major p x n, ld ldc) = beta C + op(A) op(B), op(A) p x k, op(B) k x n: Fortran
/// sgemm when LibTorch's BLAS exports it, else at::mm on strided views of the same memory.
void
Gemm(bool trans_a, bool trans_b, int64_t p, int64_t n, int64_t k, const float* a, int64_t lda,
     const float* b, int64_t ldb, float beta, float* c, int64_t ldc)
{
    const BlasHooks& blas = Blas();
    if (blas.sgemm && std::max({p, n, k, lda, ldb, ldc}) <= INT_MAX)
    {
        const int pi = static_cast<int>(p), ni = static_cast<int>(n), ki = static_cast<int>(k);
        const int la = static_cast<int>(lda), lb = static_cast<int>(ldb),
                  lc = static_cast<int>(ldc);
        const float one = 1.0f;
        blas.sgemm(trans_a ? "T" : "N", trans_b ? "T" : "N", &pi, &ni, &ki, &one, a, &la, b, &lb,
                   &beta, c, &lc);
        return;
    }
    // Column-major p x q with leading dimension ld = a strided view with strides {1, ld}.
    auto view = [](const float* ptr, int64_t r, int64_t cols, int64_t ld) {
        return at::from_blob(const_cast<float*>(ptr), {r, cols}, {1, ld}, at::kFloat);
    };
    const at::Tensor ta = trans_a ? view(a, k, p, lda).t() : view(a, p, k, lda);
    const at::Tensor tb = trans_b ? view(b, n, k, ldb).t() : view(b, k, n, ldb);
    at::Tensor tc = view(c, p, n, ldc);
    if (beta == 0.0f)
        tc.copy_(at::mm(ta, tb));
    else
        tc.add_(at::mm(ta, tb));
}

} // namespace

void
SketchPass(const float* x, int64_t rows, int64_t cols, const float* q, int64_t l, float* w,
           float* z, float* h)
{
    if (l <= kSketchKernelMaxWidth)
        SketchKernel(BestSketchIsa(), x, rows, cols, q, l, w, z, h);
    else
        SketchPassBlas(x, rows, cols, q, l, w, z, h);
}

void
SketchPassBlas(const float* x, int64_t rows, int64_t cols, const float* q, int64_t l, float* w,
               float* z, float* h)
{
    // Column-major views of the row-major operands: Q^T is l x m (ld l), W^T is l x d (ld l),
    // Z^T is l x m (ld l). The stored X is X^T column-major (d x m, ld d) when rows <= cols, and
    // X column-major (m x d, ld m) when rows > cols.
    const bool wide = rows <= cols;
    const int64_t m = std::min(rows, cols);
    const int64_t d = std::max(rows, cols);
    for (int64_t c0 = 0; c0 < d; c0 += kSketchBlock)
    {
        const int64_t cb = std::min(kSketchBlock, d - c0);
        // Block b of X: columns c0.. of X, at x + c0 (wide: ld d) or x + c0 m (tall: ld m).
        const float* xb = wide ? x + c0 : x + c0 * m;
        const int64_t ldx = wide ? d : m;
        float* wb = w + c0 * l;
        // W_b^T (l x cb) = Q^T X_b.
        Gemm(false, wide, l, cb, m, q, l, xb, ldx, 0.0f, wb, l);
        if (z == nullptr)
            continue;
        // Z^T (l x m) += W_b^T X_b^T.
        Gemm(false, !wide, l, m, cb, wb, l, xb, ldx, c0 == 0 ? 0.0f : 1.0f, z, l);
    }
    if (h != nullptr)
        ColumnGram(w, d, l, h);
}

void
ColumnGram(const float* w, int64_t d, int64_t l, float* h)
{
    // H (l x l, symmetric: row- and column-major alike) = (W^T)(W^T)^T, W^T column-major l x d.
    Gemm(false, true, l, l, d, w, l, w, l, 0.0f, h, l);
}

} // namespace hilo
