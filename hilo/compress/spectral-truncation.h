// The encoder side shared by the budgeted spectral truncations (spar, sparq): the leading singular
// structure of every LoRA factor matrix, and the rank allocation under one byte budget.
//
// Each matrix X (rows x cols) is seen from its short side (m = min(rows, cols), the LoRA rank) and
// its long side (d = max(rows, cols)). Two ways to find its spectrum:
//   exact:  the m x m Gram (ssyrk, fp32) eigendecomposed in double: all m gains sigma_j^2 and the
//           short-side singular vectors; m^2 d flops per matrix, compute-bound.
//   sketch: a randomized range finder of width L < m (Halko, Martinsson, Tropp 2011, alg. 4.1 and
//           5.1): Y = X Omega with a fixed +-1 matrix Omega (d x L), Q = orth(Y) (m x L), W = X^T Q
//           (d x L), then the Rayleigh-Ritz step on W^T W (L x L, double). The Ritz values are
//           gains (never above the true sigma_j^2) and u_j = Q e_j, sigma_j v_j = W e_j are exact
//           projections of X (W e_j = X^T u_j), so a shipped triplet needs no further pass over X.
//           4 L m d flops, two passes over X back to back (the second from cache).
// Only the leading L - L/4 Ritz pairs are offered to the allocator (the rest are too rough). When
// the allocation takes every pair a sketched matrix offers, that matrix is redone exactly and the
// allocation rerun, so a matrix that deserves more triplets than its sketch holds gets them, from
// its exact spectrum. Matrices with m <= L are always exact.
//
// Screening (optional, greedy allocation with min_rank 0 only): the first pass Y = X Omega alone
// gives every sketched matrix a rough spectrum, the eigenvalues of Y^T Y / L (E[Omega Omega^T] =
// L I, so they estimate the leading sigma_j^2, with the spread of a chi-square on L degrees of
// freedom). A greedy allocation on those estimates gives a threshold tau (the best gain per byte
// it leaves out; what it takes below tau only fills the bytes left over); only the matrices whose
// leading estimate per byte reaches tau / kScreenMargin get the second pass and their Ritz values,
// the others are offered nothing. The second pass, the usual allocation and the exact redos then
// run on the kept matrices alone: one pass over the matrices the budget leaves empty instead of
// two. A matrix wrongly screened out (its estimate below a quarter of its gain: for a steep
// spectrum, P(chi2_L / L < 1/4), about 2% at L = 8) loses its triplets to others, and the bytes
// the allocation would fill with triplets below tau go to the kept matrices, so screening can
// raise the error above the plain sketch's
// (results/compressors gives both).
//
// Warm start (optional, with a sketch and without the screen): subspace iteration across encodes,
// as PowerSGD reuses its Q. The encoder keeps, per sketched matrix, an orthonormal m x L basis
// B (learner-local state, saved and restored with the encoder). A Plan then skips the first pass:
// W = X^T B, the Rayleigh-Ritz step on W^T W as above, and one more product from the W just made,
// Z = X W = X X^T B (the matrix is still in cache), whose orthonormal basis is the next Plan's B:
// a power step further into the leading subspace than B. A matrix without a basis (the first
// encode, or a basis that lost a direction) starts from Y = X Omega; a matrix redone exactly
// leaves its leading singular vectors as its next basis. When gradients change slowly the basis
// tracks their leading subspace; on a repeated X it converges to it. A Plan that fails leaves the
// bases as they were.
// Each matrix's basis has a width of its own, from kMinWarmWidth up to the widest, max(L,
// min(2L, m_i / 2)): a matrix the allocation saturates is redone exactly this once and hands on
// its leading w_i singular vectors, w_i the narrowest width whose offered pairs exceed its rank,
// so that the next encode's sketch holds what it took instead of an exact Gram and
// eigendecomposition every step; a matrix whose rank fits a narrower width narrows to it (the
// next basis is Z R, the power step in descending Ritz order, whose leading columns span its
// leading directions), below L by halves while half the width still offers two pairs past its
// rank (at a small budget most matrices take 0-2 triplets: a width-2 or -4 sketch is all the
// allocator reads of them). Only matrices that want more than the widest sketch offers are still
// computed exactly, and they from the start of the next encode (no sketch that saturates, and
// no other matrix's allocation inflated by it until the redo).
// A warm pass reads each matrix from memory once: W = X^T B and Z = X W are formed block by block
// along the long side (hilo/compress/sketch-pass.h), and the L x L eigendecomposition and the
// basis's orthonormalization run in the project's own loops (hilo/compress/small-eigen.h).
//
// Deterministic: Omega is a pure function of its row and column (counter-based draws, no state),
// every matrix is computed by one thread with BLAS held at one thread, and the matrices' results
// do not depend on which thread ran them, so the plan does not depend on the thread count.
#ifndef HILO_COMPRESS_SPECTRAL_TRUNCATION_H
#define HILO_COMPRESS_SPECTRAL_TRUNCATION_H

#include "hilo/compress/spar.h"
#include "hilo/core/adapter-layout.h"
#include "hilo/core/coding.h"
#include "hilo/core/status.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

struct AllocationHints;

/// The sketch width spar and sparq use unless told otherwise (option sketch=): exact spectra. On
/// the 161.5M layout a width-8 sketch makes the spectra ~1.7x cheaper but raises the relative error
/// at 1.6% from 0.365 to 0.385 (results/compressors), so it is a choice, not the default.
constexpr int64_t kDefaultSketchWidth = 0;

/// Whether spar and sparq warm-start their sketch unless told (option warm=): with a sketch and
/// without the screen.
constexpr bool kDefaultWarm = false;
inline bool
DefaultWarm(int64_t sketch_width, bool screen)
{
    return kDefaultWarm && sketch_width > 0 && !screen;
}

/// Screening keeps a matrix when its leading estimated gain per byte is at least the estimated
/// threshold divided by this.
constexpr double kScreenMargin = 4.0;

/// The narrowest basis a matrix keeps in warm mode (two pairs: its rank is 0 and one gain past it).
constexpr int64_t kMinWarmWidth = 2;

/// One matrix's leading singular structure as the allocator and the coders see it.
struct MatrixSpectrum
{
    std::vector<double> gains; // sigma_j^2 (estimates when sketched), non-increasing
    at::Tensor basis;          // m x gains.size() fp32: short-side singular vector j in column j
    // Sketched only (else undefined): W = X^T Q (d x L fp32) and the Ritz rotation R (L x L fp32)
    // with u_j = Q r_j, so that X^T u_j = sigma_j v_j = W r_j without another pass over X.
    at::Tensor projected;
    at::Tensor rotation;
    bool exact{false};
    bool screened_out{false}; // screening: no second pass, nothing offered (gains empty)
};

/// The ranks chosen for every matrix and the spectra they were chosen from.
struct SpectralPlan
{
    std::vector<int64_t> ks;
    std::vector<int64_t> extra_ks; // the ranks of AllocationHints::extra, in its order
    std::vector<MatrixSpectrum> spectra;
    // What the plan cost, in passes over matrices (profiling and tests): sketches finished
    // (second passes), matrices screened out after one pass, exact spectra redone after a sketch.
    int64_t finished{0};
    int64_t screened_out{0};
    int64_t exact_redos{0};
};

class SpectralTruncation
{
  public:
    /// `sketch_width` L: 0 computes every spectrum exactly; otherwise L >= 4. `screen` (with
    /// L > 0): the single-pass screen above.
    /// `warm` (with L > 0 and no screen): the warm start above.
    SpectralTruncation(const AdapterLayout& layout, int64_t sketch_width, bool screen,
                       bool warm = false);

    int64_t sketch_width() const { return m_width; }
    bool screen() const { return m_screen; }
    bool warm() const { return m_warm; }

    /// The warm-start bases (learner-local state; empty unless warm): u32 matrix count, then per
    /// matrix u8 1 (or 2: computed exactly at the next Plan), its width w_i (varint) and its
    /// m_i x w_i fp32 basis (row-major), or u8 0 (none yet, or not sketched).
    std::string SaveWarmState() const;
    /// Restores SaveWarmState()'s bytes; kCorruption (prefixed `name`, the bases unchanged) for
    /// a wrong count, flag or length, a basis on a matrix that is not sketched, a width outside
    /// [kMinWarmWidth, MaxWidth(i)], a non-finite value, or a basis that is not orthonormal.
    Status RestoreWarmState(std::string_view state, const std::string& name);

    /// The widest basis matrix i may keep in warm mode: max(L, min(2L, m_i / 2)). Wider sketches
    /// cost about what the exact spectrum costs (two passes of width 4L against a Gram).
    int64_t MaxWidth(size_t i) const;
    /// The width matrix i's sketch has at the next Plan: its basis's in warm mode, else L.
    int64_t Width(size_t i) const;

    /// kInvalidArgument when x is not the layout's size, kBudgetTooSmall when `budget_bytes` is
    /// below `min_bytes` (messages prefixed `name`).
    Status CheckEncode(const std::vector<float>& x, int64_t budget_bytes, int64_t min_bytes,
                       const std::string& name) const;

    /// Spectra of every matrix of `x` and the ranks SparAllocate picks from them for
    /// `budget_bytes` (net of headers), with `triplet_bytes[i]` per triplet of matrix i.
    /// kInvalidArgument (prefixed `name`) when x holds non-finite values; SparAllocate's errors.
    /// The plan's `projected` tensors live in this object's scratch: valid until the next Plan.
    /// `hints` (hilo/compress/allocation-policy.h; null: none) go to SparAllocate with every
    /// matrix's candidates; the screen runs only without them.
    StatusOr<SpectralPlan> Plan(const std::vector<float>& x,
                                const std::vector<int64_t>& triplet_bytes, int64_t budget_bytes,
                                int64_t min_rank, SparAllocation mode, const std::string& name,
                                const AllocationHints* hints = nullptr);

    /// The leading k long-side vectors X^T u_j (d x k fp32, column j = sigma_j v_j) of matrix i.
    /// REQUIRES: k <= spectrum.gains.size().
    at::Tensor Projected(const std::vector<float>& x, size_t i, const MatrixSpectrum& spectrum,
                         int64_t k) const;

    /// Codes every matrix the plan keeps triplets of: code(i, k_i, spectrum_i, &buffer_i), one
    /// task per matrix with BLAS held at one thread; the buffers in layout order (empty where
    /// k_i = 0). A matrix's bytes do not depend on the thread that coded it.
    using TripletCoder =
        std::function<void(size_t i, int64_t k, const MatrixSpectrum& spectrum, std::string* out)>;
    std::vector<std::string> CodeAll(const SpectralPlan& plan, const TripletCoder& code) const;

    /// Bytes of the rank section at its widest (varint matrix count, varint k_i <= m_i each).
    static int64_t RankSectionBytes(const AdapterLayout& layout);
    /// Fills `per_matrix` with triplet_bytes(matrix i); returns the bytes of min_rank triplets
    /// (capped at m_i) in every matrix.
    static int64_t TripletBytes(const AdapterLayout& layout,
                                const std::function<int64_t(const MatrixSpec&)>& triplet_bytes,
                                int64_t min_rank, std::vector<int64_t>* per_matrix);

    /// Appends the rank section (varint matrix count, varint k_i each) and then the coded
    /// triplets: the layout hilo/compress/factor-coding.h's ReadLowRankRanks reads.
    static void PutRanksAndTriplets(ByteWriter* w, const std::vector<int64_t>& ks,
                                    const std::vector<std::string>& coded);

    /// X^T b (long side) for the m x k fp32 short-side columns `b` of matrix i: d x k fp32.
    at::Tensor ProjectShortSide(const std::vector<float>& x, size_t i, const at::Tensor& b) const;

  private:
    /// The exact spectrum of matrix i; false when its Gram holds a non-finite value.
    bool Exact(const std::vector<float>& x, size_t i, MatrixSpectrum* out) const;
    /// Matrix i of `x` as an m x d view (its transpose when it has more rows than columns).
    at::Tensor ShortSideRows(const std::vector<float>& x, size_t i) const;
    /// The first pass of the sketch of matrix i: Y = X Omega (m x L) into `y`; with `estimates`,
    /// also the eigenvalues of Y^T Y / L, descending. False when Y holds a non-finite value.
    bool Range(const std::vector<float>& x, size_t i, float* y,
               std::vector<double>* estimates) const;
    /// The second pass from Range's `y`: the sketched spectrum of matrix i, W = X^T Q into `w`.
    /// False when a product holds a non-finite value.
    bool Finish(const std::vector<float>& x, size_t i, const float* y, float* w,
                MatrixSpectrum* out) const;
    /// The Rayleigh-Ritz step of matrix i on the orthonormal m x l basis `q`: W = X^T Q into `w`.
    bool RayleighRitz(const std::vector<float>& x, size_t i, const at::Tensor& q, float* w,
                      MatrixSpectrum* out) const;
    /// The Rayleigh-Ritz step from W = X^T Q (d x l, made by the caller): Ritz values, basis
    /// Q R and rotation R into `out`. False when W^T W holds a non-finite value.
    /// `h`: W^T W (l x l) when the caller formed it with W (SketchPass), else null.
    bool RitzStep(const at::Tensor& q, const at::Tensor& w, MatrixSpectrum* out,
                  const float* h = nullptr) const;
    /// Warm mode's pass over matrix i: the sketch from its basis (or from Y = X Omega into `y`
    /// when it has none) and its next basis into m_next_basis. False on a non-finite product.
    bool WarmSketch(const std::vector<float>& x, size_t i, float* y, float* w, MatrixSpectrum* out);
    /// Warm mode, after a successful Plan with ranks `ks`: the next bases, at the widths the
    /// ranks ask for (exact spectra give their leading singular vectors), become the current ones.
    void CommitBases(const SpectralPlan& plan, const std::vector<int64_t>& ks);
    /// The width a basis of matrix i gets for rank k: the narrowest of L, 2L, ... (capped at
    /// MaxWidth(i)) whose offered pairs exceed k; below L, halved while half of it offers at
    /// least k + 2 pairs (not below kMinWarmWidth).
    int64_t WidthFor(size_t i, int64_t k) const;
    /// Places every sketched matrix's W and Y in the scratch at its current width.
    void LayOutScratch();
    /// Which sketched matrices get their second pass, from their Range estimates (the rest are
    /// marked screened out in `spectra`).
    std::vector<size_t> Screen(const std::vector<std::vector<double>>& estimates,
                               const std::vector<int64_t>& triplet_bytes, int64_t budget_bytes,
                               std::vector<MatrixSpectrum>* spectra) const;
    bool Sketched(size_t i) const { return m_sketched[i] != 0; }
    /// The leading gains a spectrum offers the allocator.
    int64_t Offered(const MatrixSpectrum& s) const;

    AdapterLayout m_layout;
    int64_t m_width;
    bool m_screen;
    at::Tensor m_omega; // max long side x L fp32, entries +-1 (rows 0..d-1 serve a matrix)
    std::vector<uint8_t> m_sketched; // 1 where min(rows, cols) > L
    // Learner-local scratch for the sketches' W (d_i x w_i at m_scratch_at[i]) and Y (m_i x w_i
    // at m_range_at[i]), laid out by every Plan at the current widths and reused: it only grows,
    // and fresh pages for every encode cost more than the products that fill them. Holds no
    // state: every Plan overwrites what it reads.
    std::vector<int64_t> m_scratch_at;
    std::vector<int64_t> m_range_at;
    std::vector<float> m_scratch;
    std::vector<float> m_range;
    // Warm mode: the bases (m_i x w_i row-major, empty where none) and the next Plan's, written
    // by this Plan and swapped in when it succeeds. Per matrix, so that a width change moves no
    // other matrix's basis; their capacity is kept from Plan to Plan.
    bool m_warm;
    std::vector<std::vector<float>> m_basis;
    std::vector<std::vector<float>> m_next_basis;
    // Warm mode: 1 where the next Plan computes the matrix exactly from the start (its rank is
    // beyond what its widest sketch offers), and the next Plan's.
    std::vector<uint8_t> m_exact;
    std::vector<uint8_t> m_next_exact;
};

} // namespace hilo

#endif // HILO_COMPRESS_SPECTRAL_TRUNCATION_H
