// The warm sketch's fused pass (sketch-pass.h) for bases of 1..16 columns, without BLAS.
//
// X (m x d, seen from its short side) is read one tile of columns at a time: the tile's W rows
// (W = X^T Q) are formed in registers, written out, and multiplied straight back into Z (Z = X W)
// while the tile is still in L1. Nothing is copied into a packed layout first (what sgemm does to
// X on each of the two products, most of their cost at these widths). For l <= 8 one vector of 16
// lanes holds the W rows of G = 16 / p columns (p the least power of two >= l), so one FMA serves
// G columns; Z's sums then run in G interleaved chains, one per lane.
//
// Summation order, the same on every instruction set (results are bit-equal across them, so an
// encode does not depend on the host's ISA), fixed by the shapes alone (one thread, no reordering
// by thread count or tile size):
//   W[c][j] = fma chain over i = 0..m-1 from +0:  w = fma(X[i][c], Q[i][j], w);
//   per block b of kSketchBlock columns c0, c0 + 1, ... (the last block shorter),
//     chain g of Zb[i][j], g = 0 .. G-1, = fma chain over the block's columns c with
//                (c - c0) mod G == g, ascending, from +0: zb = fma(X[i][c], W[c][j], zb)
//                (W[c][j] the fp32 value written out);
//     Zb[i][j] = ((+0 + chain_0) + chain_1) + ... + chain_{G-1};
//     G = 16 / p for l <= 8, p the least power of two >= l (l = 1: 16, 2: 8, 3-4: 4, 5-8: 2);
//     G = 1 for l > 8;
//   Z[i][j] = ((+0 + Zb_0[i][j]) + Zb_1[i][j]) + ...   in block order;
//   and the Gram matrix H = W^T W the same way, over W's rows c:
//     Hb[j][k] = fma chain over the block's rows c, ascending, from +0:
//                hb = fma(W[c][j], W[c][k], hb);   H = (+0 + Hb_0) + Hb_1 + ...
//     (symmetric bit for bit: a product does not depend on its operands' order).
// Each fp32 operation is IEEE round-to-nearest; std::fma is correctly rounded, as are the SIMD
// FMA instructions, so the portable path gives the same bits as the SIMD paths.
#ifndef HILO_COMPRESS_SKETCH_KERNEL_H
#define HILO_COMPRESS_SKETCH_KERNEL_H

#include <cstdint>

namespace hilo
{

/// The widest basis the kernel takes; wider ones go through sgemm (sketch-pass.cc).
constexpr int64_t kSketchKernelMaxWidth = 16;

/// The kernel's instruction sets: all give bit-equal results.
enum class SketchIsa
{
    kPortable, // plain C++ with std::fma
    kAvx2,     // AVX2 + FMA, 8 lanes
    kAvx512,   // AVX-512F, 16 lanes
};

/// Whether this host runs `isa` (kPortable: always).
bool SketchIsaSupported(SketchIsa isa);

/// The widest instruction set this host runs (checked once, immutable afterwards).
SketchIsa BestSketchIsa();

/// W = X^T Q into `w` (d x l row-major), when `z` is not null Z = X W into `z` (m x l
/// row-major), and when `h` is not null H = W^T W into `h` (l x l row-major), in the order above,
/// for X stored row-major at `x` as rows x cols (X the stored matrix when rows <= cols, its
/// transpose otherwise). `q` is m x l row-major. H is formed block by block right after each
/// block's W rows, while they are in cache.
/// REQUIRES: 1 <= l <= kSketchKernelMaxWidth; SketchIsaSupported(isa); `w`, `z`, `h` do not
/// overlap `x`, `q` or each other.
void SketchKernel(SketchIsa isa, const float* x, int64_t rows, int64_t cols, const float* q,
                  int64_t l, float* w, float* z, float* h = nullptr);

namespace sketch_kernel_internal
{

/// G of the order above for width l.
int64_t SketchChains(int64_t l);

/// Columns c0 .. c0+n-1 of one block: W rows written to `w` (W row c0 first, l floats each) and,
/// when `zb` is not null, the block's G = `chains` chains advanced: chain g of Zb[i][j] in
/// zb[16 i + G j + g] (m x 16; the other lanes stay 0). `x` points at X[0][c0]; X[i][c] lies at
/// x[i * si + (c - c0) * sc]. `q16` holds Q[i][j] in lanes G j .. G j + G - 1 of its row i (m x 16,
/// zeros past G l). `q16`, `zb` and `buf` (32 m floats of scratch) are 64-byte aligned.
using BlockFn = void (*)(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16,
                         int64_t l, int64_t chains, int64_t n, float* w, float* zb, float* buf);

/// Hb += the Gram chains of W's rows c0 .. c0+n-1 (`w` points at row c0, l floats each), Hb
/// l x 16 (lanes >= l stay 0), 64-byte aligned.
using GramFn = void (*)(const float* w, int64_t n, int64_t l, float* hb);

void BlockPortable(const float* x, int64_t si, int64_t sc, int64_t m, const float* q16, int64_t l,
                   int64_t chains, int64_t n, float* w, float* zb, float* buf);
void GramPortable(const float* w, int64_t n, int64_t l, float* hb);
/// nullptr where the build has no x86 SIMD path.
BlockFn Avx2Block();
BlockFn Avx512Block();
GramFn Avx2Gram();
GramFn Avx512Gram();

} // namespace sketch_kernel_internal

} // namespace hilo

#endif // HILO_COMPRESS_SKETCH_KERNEL_H
