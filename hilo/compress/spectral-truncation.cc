#include "hilo/compress/spectral-truncation.h"

#include "hilo/compress/allocation-policy.h"
#include "hilo/compress/blas-hooks.h"
#include "hilo/compress/counter-rng.h"
#include "hilo/compress/sketch-pass.h"
#include "hilo/compress/small-eigen.h"
#include "hilo/core/finite.h"
#include "hilo/core/parallel.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace hilo
{
namespace
{

// The stream Omega's signs are drawn from (any fixed value; changing it changes every sketch).
constexpr uint64_t kOmegaSeed = 0x53504152534b4554ULL;
// How far a restored basis's B^T B may be from the identity (fp32 QR gives ~1e-6).
constexpr double kOrthonormalTolerance = 1e-3;

/// Lower triangle (row-major) of the Gram matrix of the row-major rows x cols matrix `x`: X X^T
/// when rows <= cols, else X^T X. `g` is m x m contiguous fp32, m = min(rows, cols). ssyrk forms
/// only that triangle: half the FLOPs of at::mm, and faster than it here.
void
GramLower(const float* x, int64_t rows, int64_t cols, at::Tensor g)
{
    const BlasHooks& blas = Blas();
    const int64_t m = std::min(rows, cols);
    const int64_t k = std::max(rows, cols);
    if (blas.ssyrk && k <= INT32_MAX)
    {
        // Row-major X is column-major X^T (cols x rows, ld = cols). Upper triangle of the
        // column-major result = lower triangle of the row-major one.
        const int n = static_cast<int>(m);
        const int kk = static_cast<int>(k);
        const int lda = static_cast<int>(cols);
        const float one = 1.0f;
        const float zero = 0.0f;
        blas.ssyrk("U", rows <= cols ? "T" : "N", &n, &kk, &one, x, &lda, &zero,
                   g.data_ptr<float>(), &n);
        return;
    }
    at::Tensor xi = at::from_blob(const_cast<float*>(x), {rows, cols}, at::kFloat);
    if (rows <= cols)
        at::mm_out(g, xi, xi.t());
    else
        at::mm_out(g, xi.t(), xi);
}

bool
AllFinite(const at::Tensor& t)
{
    const float* p = t.data_ptr<float>();
    uint32_t acc = 0;
    for (int64_t k = 0; k < t.numel(); ++k)
        acc |= NonFiniteBits(p[k]);
    return !NonFiniteSeen(acc);
}

/// Orthonormal columns spanning the m x L fp32 `y`: Householder QR in double, orthonormal even
/// where Y is numerically rank-deficient (steep spectra), which the Rayleigh-Ritz step needs.
at::Tensor
Orthonormal(const at::Tensor& y)
{
    return std::get<0>(at::linalg_qr(y.to(at::kDouble), "reduced")).to(at::kFloat);
}

/// Gains from ascending eigenvalues `w` (double, n): non-increasing, negatives (rounding) as 0.
std::vector<double>
DescendingGains(const at::Tensor& w)
{
    const int64_t n = w.size(0);
    const double* ev = w.data_ptr<double>();
    std::vector<double> g(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
        g[static_cast<size_t>(j)] = std::max(0.0, ev[n - 1 - j]);
    return g;
}

} // namespace

SpectralTruncation::SpectralTruncation(const AdapterLayout& layout, int64_t sketch_width,
                                       bool screen, bool warm)
  : m_layout(layout)
  , m_width(sketch_width)
  , m_screen(screen && sketch_width > 0)
  , m_sketched(layout.size(), 0)
  , m_scratch_at(layout.size(), -1)
  , m_range_at(layout.size(), -1)
  , m_warm(warm && sketch_width > 0 && !m_screen)
  , m_basis(m_warm ? layout.size() : 0)
  , m_next_basis(m_warm ? layout.size() : 0)
  , m_exact(m_warm ? layout.size() : 0, 0)
  , m_next_exact(m_warm ? layout.size() : 0, 0)
{
    if (m_width <= 0)
        return;
    int64_t long_side = 0;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        if (std::min(s.rows, s.cols) > m_width)
        {
            m_sketched[i] = 1;
            long_side = std::max(long_side, std::max(s.rows, s.cols));
        }
    }
    m_omega = at::empty({long_side, m_width}, at::kFloat);
    float* o = m_omega.data_ptr<float>();
    for (int64_t r = 0; r < long_side; ++r)
    {
        // One draw per 64 entries of a row: entry (r, c) is bit c % 64 of draw (r, c / 64).
        for (int64_t c = 0; c < m_width; ++c)
        {
            const uint64_t bits = CounterRandom(
                kOmegaSeed, static_cast<uint64_t>(r * ((m_width + 63) / 64) + c / 64));
            o[r * m_width + c] = (bits >> (c % 64)) & 1u ? 1.0f : -1.0f;
        }
    }
}

int64_t
SpectralTruncation::MaxWidth(size_t i) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    return std::max(m_width, std::min(2 * m_width, std::min(s.rows, s.cols) / 2));
}

int64_t
SpectralTruncation::Width(size_t i) const
{
    if (!m_warm || m_basis[i].empty())
        return m_width;
    const MatrixSpec& s = m_layout.matrix(i);
    return static_cast<int64_t>(m_basis[i].size()) / std::min(s.rows, s.cols);
}

int64_t
SpectralTruncation::WidthFor(size_t i, int64_t k) const
{
    auto offered = [](int64_t w) { return w - w / 4; };
    int64_t w = m_width;
    while (offered(w) < k + 1 && w < MaxWidth(i))
        w = std::min(2 * w, MaxWidth(i));
    // Narrower than L while half the width still offers a pair beyond the one past the rank:
    // the allocator reads a matrix's gains up to one past its rank, and the spare pair keeps a
    // rank that grows by one from saturating (and being redone exactly) at once.
    while (w <= m_width && w / 2 >= kMinWarmWidth && offered(w / 2) >= k + 2)
        w /= 2;
    return w;
}

void
SpectralTruncation::LayOutScratch()
{
    // Places every sketched matrix at width(i); returns the W and Y scratch sizes. With `record`,
    // writes the offsets.
    auto place = [this](const std::function<int64_t(size_t)>& width, bool record)
    {
        int64_t scratch = 0;
        int64_t range = 0;
        for (size_t i = 0; i < m_layout.size(); ++i)
        {
            if (!Sketched(i))
                continue;
            const MatrixSpec& s = m_layout.matrix(i);
            if (record)
            {
                m_scratch_at[i] = scratch;
                m_range_at[i] = range;
            }
            scratch += std::max(s.rows, s.cols) * width(i);
            range += std::min(s.rows, s.cols) * width(i);
        }
        return std::make_pair(static_cast<size_t>(scratch), static_cast<size_t>(range));
    };
    const auto now = place([this](size_t i) { return Width(i); }, true);
    // Grows only, to the widest layout at once (every sketched matrix at its widest): widths
    // that change between encodes then never reallocate, and the steady state allocates nothing.
    if (now.first > m_scratch.size() || now.second > m_range.size())
    {
        const auto widest =
            place([this](size_t i) { return m_warm ? MaxWidth(i) : m_width; }, false);
        m_scratch.resize(widest.first);
        m_range.resize(widest.second);
    }
}

int64_t
SpectralTruncation::Offered(const MatrixSpectrum& s) const
{
    const int64_t n = static_cast<int64_t>(s.gains.size());
    return s.exact ? n : n - n / 4;
}

bool
SpectralTruncation::Exact(const std::vector<float>& x, size_t i, MatrixSpectrum* out) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t m = std::min(s.rows, s.cols);
    at::Tensor gram = at::zeros({m, m}, at::kFloat);
    GramLower(x.data() + m_layout.offset(i), s.rows, s.cols, gram);
    if (!AllFinite(gram))
        return false;
    // Eigendecomposition in double (only the lower triangle is read); ascending eigenvalues.
    auto [w, v] = at::linalg_eigh(gram.to(at::kDouble));
    out->gains = DescendingGains(w);
    out->basis = v.flip({1}).to(at::kFloat).contiguous();
    out->projected = at::Tensor();
    out->rotation = at::Tensor();
    out->exact = true;
    out->screened_out = false;
    return true;
}

at::Tensor
SpectralTruncation::ShortSideRows(const std::vector<float>& x, size_t i) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    at::Tensor xi = at::from_blob(const_cast<float*>(x.data()) + m_layout.offset(i),
                                  {s.rows, s.cols}, at::kFloat);
    return s.rows <= s.cols ? xi : xi.t();
}

bool
SpectralTruncation::Range(const std::vector<float>& x, size_t i, float* y_store,
                          std::vector<double>* estimates) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t m = std::min(s.rows, s.cols);
    const int64_t d = std::max(s.rows, s.cols);
    const at::Tensor xs = ShortSideRows(x, i);
    at::Tensor y = at::from_blob(y_store, {m, m_width}, at::kFloat);
    at::mm_out(y, xs, m_omega.narrow(0, 0, d));
    if (!AllFinite(y))
        return false;
    if (estimates != nullptr)
    {
        // Y^T Y (L x L) in double, then its eigenvalues: L^2 m multiply-adds, no pass over X.
        const int64_t l = m_width;
        at::Tensor h = at::empty({l, l}, at::kDouble);
        double* hp = h.data_ptr<double>();
        for (int64_t a = 0; a < l; ++a)
        {
            for (int64_t b = 0; b <= a; ++b)
            {
                double dot = 0.0;
                for (int64_t r = 0; r < m; ++r)
                    dot += static_cast<double>(y_store[r * l + a]) * y_store[r * l + b];
                hp[a * l + b] = dot;
                hp[b * l + a] = dot;
            }
        }
        *estimates = DescendingGains(at::linalg_eigvalsh(h));
        for (double& g : *estimates)
            g /= static_cast<double>(l);
    }
    return true;
}

bool
SpectralTruncation::Finish(const std::vector<float>& x, size_t i, const float* y_store,
                           float* w_store, MatrixSpectrum* out) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t m = std::min(s.rows, s.cols);
    at::Tensor y = at::from_blob(const_cast<float*>(y_store), {m, m_width}, at::kFloat);
    return RayleighRitz(x, i, Orthonormal(y), w_store, out);
}

bool
SpectralTruncation::RayleighRitz(const std::vector<float>& x, size_t i, const at::Tensor& q,
                                 float* w_store, MatrixSpectrum* out) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t d = std::max(s.rows, s.cols);
    const at::Tensor xs = ShortSideRows(x, i);
    at::Tensor w = at::from_blob(w_store, {d, q.size(1)}, at::kFloat);
    at::mm_out(w, xs.t(), q); // d x l = X^T Q
    return RitzStep(q, w, out);
}

bool
SpectralTruncation::RitzStep(const at::Tensor& q_in, const at::Tensor& w, MatrixSpectrum* out,
                             const float* h_given) const
{
    // L x L and m x L work in the project's own loops (small-eigen.h): no LibTorch call per
    // matrix but the two tensors the spectrum keeps.
    const at::Tensor q = q_in.contiguous();
    const int64_t m = q.size(0);
    const int64_t l = w.size(1);
    std::vector<float> h(static_cast<size_t>(l * l));
    if (h_given != nullptr)
        std::copy(h_given, h_given + l * l, h.begin());
    else
        ColumnGram(w.data_ptr<float>(), w.size(0), l, h.data());
    if (!hilo::AllFinite(h.data(), l * l))
        return false;
    std::vector<double> values;
    std::vector<double> vectors;
    SymmetricEigen(l, std::vector<double>(h.begin(), h.end()), &values, &vectors);
    at::Tensor e = at::empty({l, l}, at::kFloat); // descending Ritz values
    float* ep = e.data_ptr<float>();
    for (int64_t k = 0; k < l * l; ++k)
        ep[k] = static_cast<float>(vectors[static_cast<size_t>(k)]);
    at::Tensor basis = at::empty({m, l}, at::kFloat); // Q R
    const float* qp = q.data_ptr<float>();
    float* bp = basis.data_ptr<float>();
    for (int64_t r = 0; r < m; ++r)
    {
        for (int64_t j = 0; j < l; ++j)
        {
            double acc = 0.0;
            for (int64_t k = 0; k < l; ++k)
                acc += static_cast<double>(qp[r * l + k]) * ep[k * l + j];
            bp[r * l + j] = static_cast<float>(acc);
        }
    }
    out->gains.resize(static_cast<size_t>(l));
    for (int64_t j = 0; j < l; ++j) // negatives (rounding) as 0
        out->gains[static_cast<size_t>(j)] = std::max(0.0, values[static_cast<size_t>(j)]);
    out->basis = basis;
    out->projected = w;
    out->rotation = e;
    out->exact = false;
    out->screened_out = false;
    return true;
}

bool
SpectralTruncation::WarmSketch(const std::vector<float>& x, size_t i, float* y_store,
                               float* w_store, MatrixSpectrum* out)
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t m = std::min(s.rows, s.cols);
    const int64_t d = std::max(s.rows, s.cols);
    const int64_t l = Width(i);
    at::Tensor q;
    if (!m_basis[i].empty())
    {
        q = at::from_blob(m_basis[i].data(), {m, l}, at::kFloat);
    }
    else
    {
        if (!Range(x, i, y_store, nullptr))
            return false;
        q = Orthonormal(at::from_blob(y_store, {m, l}, at::kFloat));
    }
    // W = X^T Q, its Gram matrix W^T W and the next basis's Z = X W = X X^T Q in one pass over X
    // (sketch-pass.h): one power step further. Z's columns then go in descending Ritz order
    // (Z R), so that the leading ones span the leading directions and a narrower next basis is
    // their first columns.
    const at::Tensor qc = q.contiguous();
    std::vector<float> h(static_cast<size_t>(l * l));
    SketchPass(x.data() + m_layout.offset(i), s.rows, s.cols, qc.data_ptr<float>(), l, w_store,
               y_store, h.data());
    if (!RitzStep(qc, at::from_blob(w_store, {d, l}, at::kFloat), out, h.data()))
        return false;
    at::Tensor z = at::from_blob(y_store, {m, l}, at::kFloat);
    std::vector<float>& next = m_next_basis[i];
    next.clear();
    if (AllFinite(z))
    {
        // Z R in double, orthonormalized (small-eigen.h), the next basis.
        std::vector<double> zr(static_cast<size_t>(m * l));
        const float* zp = z.data_ptr<float>();
        const float* rp = out->rotation.data_ptr<float>();
        for (int64_t r = 0; r < m; ++r)
        {
            for (int64_t j = 0; j < l; ++j)
            {
                double acc = 0.0;
                for (int64_t k = 0; k < l; ++k)
                    acc += static_cast<double>(zp[r * l + k]) * rp[k * l + j];
                zr[static_cast<size_t>(r * l + j)] = acc;
            }
        }
        OrthonormalizeColumns(m, l, &zr);
        next.resize(zr.size());
        for (size_t k = 0; k < zr.size(); ++k)
            next[k] = static_cast<float>(zr[k]);
        if (!hilo::AllFinite(next.data(), m * l))
            next.clear();
    }
    return true;
}

void
SpectralTruncation::CommitBases(const SpectralPlan& plan, const std::vector<int64_t>& ks)
{
    for (size_t i = 0; i < m_layout.size(); ++i)
    {
        if (!Sketched(i))
            continue;
        const MatrixSpectrum& sp = plan.spectra[i];
        std::vector<float>& next = m_next_basis[i];
        const int64_t m = std::min(m_layout.matrix(i).rows, m_layout.matrix(i).cols);
        m_next_exact[i] = 0;
        if (sp.exact)
        {
            // Exact: its leading singular vectors (basis columns, descending), as many as its
            // rank asks for. When even the widest sketch would not hold its rank with the same
            // margin, the next Plan computes it exactly from the start: a sketch that saturates
            // costs its passes and lends its bytes to other matrices until it is redone.
            const int64_t w = WidthFor(i, ks[i]);
            const at::Tensor lead = sp.basis.narrow(1, 0, w).contiguous();
            next.assign(lead.data_ptr<float>(), lead.data_ptr<float>() + m * w);
            m_next_exact[i] = w - w / 4 < ks[i] + 1 ? 1 : 0;
            continue;
        }
        if (next.empty())
            continue;
        // Sketched: narrower when its rank fits a narrower width (never wider: not saturated).
        const int64_t l = static_cast<int64_t>(sp.gains.size());
        const int64_t w = std::min(l, WidthFor(i, ks[i]));
        if (w < l)
        {
            for (int64_t r = 0; r < m; ++r)
                std::copy(next.begin() + r * l, next.begin() + r * l + w, next.begin() + r * w);
            next.resize(static_cast<size_t>(m * w));
        }
    }
    m_basis.swap(m_next_basis);
    m_exact.swap(m_next_exact);
}

std::string
SpectralTruncation::SaveWarmState() const
{
    std::string out;
    if (!m_warm)
        return out;
    ByteWriter w(&out);
    w.PutU32(static_cast<uint32_t>(m_layout.size()));
    for (size_t i = 0; i < m_layout.size(); ++i)
    {
        w.PutU8(m_basis[i].empty() ? 0 : m_exact[i] ? 2 : 1);
        if (m_basis[i].empty())
            continue;
        w.PutVarint(static_cast<uint64_t>(Width(i)));
        w.PutFloats(m_basis[i].data(), m_basis[i].size(), ValueDtype::kFp32);
    }
    return out;
}

Status
SpectralTruncation::RestoreWarmState(std::string_view state, const std::string& name)
{
    if (!m_warm)
    {
        return state.empty() ? Status::Ok()
                             : Status::Corruption(name + " keeps no local state, got " +
                                                  std::to_string(state.size()) + " bytes");
    }
    ByteReader r(state);
    uint32_t n = 0;
    if (!r.GetU32(&n) || n != m_layout.size())
        return Status::Corruption(name + ": local state does not hold one entry per matrix");
    std::vector<std::vector<float>> bases(m_layout.size());
    std::vector<uint8_t> exact(m_layout.size(), 0);
    for (size_t i = 0; i < m_layout.size(); ++i)
    {
        uint8_t set = 0;
        if (!r.GetU8(&set) || set > 2)
            return Status::Corruption(name + ": local state entry " + std::to_string(i) +
                                      " is truncated or has a bad flag");
        if (!set)
            continue;
        exact[i] = set == 2 ? 1 : 0;
        if (!Sketched(i))
            return Status::Corruption(name + ": local state holds a basis for matrix " +
                                      std::to_string(i) + ", which is not sketched");
        uint64_t width = 0;
        if (!r.GetVarint(&width) || width < static_cast<uint64_t>(kMinWarmWidth) ||
            width > static_cast<uint64_t>(MaxWidth(i)))
        {
            return Status::Corruption(name + ": local basis " + std::to_string(i) +
                                      " has no width in [" + std::to_string(kMinWarmWidth) + ", " +
                                      std::to_string(MaxWidth(i)) + "]");
        }
        const MatrixSpec& s = m_layout.matrix(i);
        const int64_t len = std::min(s.rows, s.cols) * static_cast<int64_t>(width);
        // The width is bounded, so is this allocation; the length check reads before it fills.
        if (r.remaining() < static_cast<size_t>(len) * sizeof(float))
            return Status::Corruption(name + ": local state truncated in matrix " +
                                      std::to_string(i));
        bases[i].resize(static_cast<size_t>(len));
        if (!r.GetFloats(bases[i].data(), static_cast<size_t>(len), ValueDtype::kFp32))
            return Status::Corruption(name + ": local state truncated in matrix " +
                                      std::to_string(i));
        if (!hilo::AllFinite(bases[i].data(), len))
            return Status::Corruption(name + ": local basis " + std::to_string(i) +
                                      " holds a non-finite value");
        // Plans use a basis as it is (no QR per encode), so it must be orthonormal: a forged
        // one with large entries would make Ritz values and triplets that overflow.
        const int64_t m = std::min(s.rows, s.cols);
        const int64_t w = static_cast<int64_t>(width);
        const float* b = bases[i].data();
        for (int64_t p = 0; p < w; ++p)
        {
            for (int64_t q = 0; q <= p; ++q)
            {
                double dot = 0.0;
                for (int64_t r = 0; r < m; ++r)
                    dot += static_cast<double>(b[r * w + p]) * b[r * w + q];
                if (std::fabs(dot - (p == q ? 1.0 : 0.0)) > kOrthonormalTolerance)
                    return Status::Corruption(name + ": local basis " + std::to_string(i) +
                                              " is not orthonormal");
            }
        }
    }
    if (!r.empty())
        return Status::Corruption(name + ": local state has " + std::to_string(r.remaining()) +
                                  " trailing bytes");
    m_basis = std::move(bases);
    m_exact = std::move(exact);
    return Status::Ok();
}

std::vector<size_t>
SpectralTruncation::Screen(const std::vector<std::vector<double>>& estimates,
                           const std::vector<int64_t>& triplet_bytes, int64_t budget_bytes,
                           std::vector<MatrixSpectrum>* spectra) const
{
    const size_t n = m_layout.size();
    std::vector<SparCandidates> cands(n);
    for (size_t i = 0; i < n; ++i)
    {
        cands[i].cost = triplet_bytes[i];
        const std::vector<double>& g = Sketched(i) ? estimates[i] : (*spectra)[i].gains;
        const size_t offered = Sketched(i) ? g.size() - g.size() / 4 : g.size();
        cands[i].gains.assign(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(offered));
    }
    // min_rank 0 always fits (the caller checked the budget against the headers).
    const std::vector<int64_t> ks =
        SparAllocate(cands, budget_bytes, 0, SparAllocation::kGreedy).value();
    // tau: the best gain per byte the allocation leaves out. What it takes below tau only fills
    // the bytes left over; matrices that would get nothing else are not worth a second pass.
    double tau = 0.0;
    for (size_t i = 0; i < n; ++i)
    {
        const size_t k = static_cast<size_t>(ks[i]);
        if (k < cands[i].gains.size())
            tau = std::max(tau, cands[i].gains[k] / static_cast<double>(cands[i].cost));
    }
    std::vector<size_t> kept;
    for (size_t i = 0; i < n; ++i)
    {
        if (!Sketched(i))
            continue;
        const double lead = estimates[i].empty() ? 0.0 : estimates[i][0];
        if (lead > 0.0 && lead / static_cast<double>(cands[i].cost) >= tau / kScreenMargin)
        {
            kept.push_back(i);
        }
        else
        {
            MatrixSpectrum& sp = (*spectra)[i];
            sp = MatrixSpectrum();
            sp.screened_out = true;
        }
    }
    return kept;
}

Status
SpectralTruncation::CheckEncode(const std::vector<float>& x, int64_t budget_bytes,
                                int64_t min_bytes, const std::string& name) const
{
    if (static_cast<int64_t>(x.size()) != m_layout.numel())
    {
        return Status::InvalidArgument(name + ": input has " + std::to_string(x.size()) +
                                       " values, layout has " + std::to_string(m_layout.numel()));
    }
    if (budget_bytes < min_bytes)
    {
        return Status::BudgetTooSmall(name + ": budget " + std::to_string(budget_bytes) +
                                      " bytes is below the smallest payload (" +
                                      std::to_string(min_bytes) + " bytes)");
    }
    return Status::Ok();
}

StatusOr<SpectralPlan>
SpectralTruncation::Plan(const std::vector<float>& x, const std::vector<int64_t>& triplet_bytes,
                         int64_t budget_bytes, int64_t min_rank, SparAllocation mode,
                         const std::string& name, const AllocationHints* hints)
{
    const size_t n = m_layout.size();
    LayOutScratch();
    const bool screen =
        m_screen && min_rank == 0 && mode == SparAllocation::kGreedy && hints == nullptr;
    SpectralPlan plan;
    plan.spectra.assign(n, MatrixSpectrum());
    std::vector<std::vector<double>> estimates(screen ? n : 0);
    std::vector<char> finite(n, 1);
    SingleThreadedBlas one_blas_thread;
    // What a pass computes for each matrix it is given.
    enum class Pass
    {
        kFirst,  // exact where m <= L or L = 0; else the sketch (its first half when screening)
        kFinish, // the sketch's second half (screening)
        kExact,
    };
    // One matrix per task, its whole chain in the task: every matrix is read by one thread, with
    // BLAS held at one thread, and no batch tensors are built or copied.
    auto compute = [&](const std::vector<size_t>& which, Pass pass)
    {
        ParallelFor(0, static_cast<int64_t>(which.size()), 1,
                    [&](int64_t b, int64_t e)
                    {
                        for (int64_t t = b; t < e; ++t)
                        {
                            const size_t i = which[static_cast<size_t>(t)];
                            MatrixSpectrum* sp = &plan.spectra[i];
                            bool ok = false;
                            if (pass == Pass::kExact || !Sketched(i) || (m_warm && m_exact[i]))
                            {
                                ok = Exact(x, i, sp);
                            }
                            else
                            {
                                float* y = m_range.data() + m_range_at[i];
                                float* w = m_scratch.data() + m_scratch_at[i];
                                if (pass == Pass::kFinish)
                                    ok = Finish(x, i, y, w, sp);
                                else if (m_warm)
                                    ok = WarmSketch(x, i, y, w, sp);
                                else if (screen)
                                    ok = Range(x, i, y, &estimates[i]);
                                else
                                    ok = Range(x, i, y, nullptr) && Finish(x, i, y, w, sp);
                            }
                            finite[i] = ok ? 1 : 0;
                        }
                    });
        for (size_t i : which)
        {
            if (!finite[i])
                return Status::InvalidArgument(name + ": the input holds non-finite values");
        }
        return Status::Ok();
    };
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; ++i)
        all[i] = i;
    HILO_RETURN_IF_ERROR(compute(all, Pass::kFirst));
    for (size_t i = 0; i < n; ++i)
        plan.finished += Sketched(i) && !screen ? 1 : 0;
    if (screen)
    {
        const std::vector<size_t> kept =
            Screen(estimates, triplet_bytes, budget_bytes, &plan.spectra);
        HILO_RETURN_IF_ERROR(compute(kept, Pass::kFinish));
        plan.finished = static_cast<int64_t>(kept.size());
        for (size_t i = 0; i < n; ++i)
            plan.screened_out += plan.spectra[i].screened_out ? 1 : 0;
    }

    std::vector<SparCandidates> cands(n);
    for (;;)
    {
        for (size_t i = 0; i < n; ++i)
        {
            const MatrixSpectrum& sp = plan.spectra[i];
            cands[i].cost = triplet_bytes[i];
            cands[i].gains.assign(sp.gains.begin(), sp.gains.begin() + Offered(sp));
            if (hints != nullptr && !hints->weights.empty())
                cands[i].weight = hints->weights[i];
            if (hints != nullptr && !hints->overdue.empty())
                cands[i].overdue = hints->overdue[i];
        }
        const bool extra = hints != nullptr && !hints->extra.empty();
        if (extra)
        {
            cands.resize(n);
            cands.insert(cands.end(), hints->extra.begin(), hints->extra.end());
        }
        StatusOr<std::vector<int64_t>> alloc = SparAllocate(
            cands, budget_bytes, min_rank, mode, hints != nullptr ? hints->extra_cap : -1);
        if (!alloc.ok())
            return alloc.status();
        if (extra)
        {
            plan.extra_ks.assign(alloc->begin() + static_cast<std::ptrdiff_t>(n), alloc->end());
            alloc->resize(n);
        }
        // A sketched matrix whose every offered pair was taken may deserve more: redo it exactly.
        std::vector<size_t> saturated;
        for (size_t i = 0; i < n; ++i)
        {
            const MatrixSpectrum& sp = plan.spectra[i];
            if (!sp.exact && !sp.screened_out && (*alloc)[i] >= Offered(sp))
                saturated.push_back(i);
        }
        if (saturated.empty())
        {
            if (m_warm)
                CommitBases(plan, *alloc);
            plan.ks = std::move(*alloc);
            return plan;
        }
        HILO_RETURN_IF_ERROR(compute(saturated, Pass::kExact));
        plan.exact_redos += static_cast<int64_t>(saturated.size());
    }
}

std::vector<std::string>
SpectralTruncation::CodeAll(const SpectralPlan& plan, const TripletCoder& code) const
{
    std::vector<std::string> coded(plan.ks.size());
    SingleThreadedBlas one_blas_thread;
    ParallelFor(0, static_cast<int64_t>(plan.ks.size()), 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t t = b; t < e; ++t)
                    {
                        const size_t i = static_cast<size_t>(t);
                        if (plan.ks[i] > 0)
                            code(i, plan.ks[i], plan.spectra[i], &coded[i]);
                    }
                });
    return coded;
}

int64_t
SpectralTruncation::RankSectionBytes(const AdapterLayout& layout)
{
    int64_t bytes = VarintLength(layout.size());
    for (const MatrixSpec& s : layout.matrices())
        bytes += VarintLength(static_cast<uint64_t>(std::min(s.rows, s.cols)));
    return bytes;
}

int64_t
SpectralTruncation::TripletBytes(const AdapterLayout& layout,
                                 const std::function<int64_t(const MatrixSpec&)>& triplet_bytes,
                                 int64_t min_rank, std::vector<int64_t>* per_matrix)
{
    per_matrix->clear();
    int64_t min_bytes = 0;
    for (const MatrixSpec& s : layout.matrices())
    {
        per_matrix->push_back(triplet_bytes(s));
        min_bytes += std::min(min_rank, std::min(s.rows, s.cols)) * per_matrix->back();
    }
    return min_bytes;
}

void
SpectralTruncation::PutRanksAndTriplets(ByteWriter* w, const std::vector<int64_t>& ks,
                                        const std::vector<std::string>& coded)
{
    w->PutVarint(ks.size());
    for (int64_t k : ks)
        w->PutVarint(static_cast<uint64_t>(k));
    for (const std::string& c : coded)
        w->PutBytes(c.data(), c.size());
}

at::Tensor
SpectralTruncation::Projected(const std::vector<float>& x, size_t i, const MatrixSpectrum& spectrum,
                              int64_t k) const
{
    if (spectrum.projected.defined())
        return at::mm(spectrum.projected, spectrum.rotation.narrow(1, 0, k));
    return ProjectShortSide(x, i, spectrum.basis.narrow(1, 0, k).contiguous());
}

at::Tensor
SpectralTruncation::ProjectShortSide(const std::vector<float>& x, size_t i,
                                     const at::Tensor& b) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    at::Tensor xi = at::from_blob(const_cast<float*>(x.data()) + m_layout.offset(i),
                                  {s.rows, s.cols}, at::kFloat);
    return s.rows <= s.cols ? at::mm(xi.t(), b) : at::mm(xi, b);
}

} // namespace hilo
