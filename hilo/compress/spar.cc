#include "hilo/compress/spar.h"

#include "hilo/compress/blas-hooks.h"
#include "hilo/compress/factor-coding.h"
#include "hilo/core/coding.h"
#include "hilo/core/parallel.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace hilo
{
namespace
{

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

const char*
AllocationName(SparAllocation a)
{
    return a == SparAllocation::kGreedy ? "greedy" : "uniform";
}

class SparCompressor : public Compressor
{
  public:
    SparCompressor(const AdapterLayout& layout, ValueDtype dtype, int64_t min_rank,
                   SparAllocation mode)
      : m_layout(layout)
      , m_dtype(dtype)
      , m_min_rank(mode == SparAllocation::kUniform ? std::max<int64_t>(min_rank, 1) : min_rank)
      , m_mode(mode)
    {
        // Uniform keeps at least one triplet in every matrix: a common k of 0 ships nothing, and
        // an ablation that silently drops every update measures nothing.
        m_header_bytes = 1 + VarintLength(layout.size());
        for (const MatrixSpec& s : layout.matrices())
        {
            const int64_t m = std::min(s.rows, s.cols);
            m_header_bytes += VarintLength(static_cast<uint64_t>(m));
            m_min_bytes += std::min(m_min_rank, m) * TripletBytes(s);
        }
        m_min_bytes += m_header_bytes;
    }

    std::string Name() const override { return "spar-v1"; }
    std::string Params() const override
    {
        return FormatCompressorOptions({{"allocation", AllocationName(m_mode)},
                                        {"dtype", ValueDtypeName(m_dtype)},
                                        {"min_rank", std::to_string(m_min_rank)}});
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override { return m_min_bytes; }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override;
    Status Decode(std::string_view payload, std::vector<float>* out) const override;

  private:
    int64_t TripletBytes(const MatrixSpec& s) const
    {
        return 4 + CodedVectorBytes(s.rows, m_dtype) + CodedVectorBytes(s.cols, m_dtype);
    }
    /// Gram spectra of every matrix: gains (sigma^2, non-increasing) and the eigenvectors (double,
    /// m x m, columns in ascending eigenvalue order as LAPACK returns them).
    Status Spectra(const std::vector<float>& x, std::vector<SparCandidates>* cands,
                   std::vector<at::Tensor>* bases) const;
    /// Appends the k leading triplets of matrix i to `out`: sigma, then the coded u and v. The
    /// factor not given by the eigenvectors (`basis`, m x m, ascending eigenvalues) is recomputed
    /// from X, so each shipped triplet is an exact projection of X.
    void CodeTriplets(const std::vector<float>& x, size_t i, int64_t k, const at::Tensor& basis,
                      std::string* out) const;

    AdapterLayout m_layout;
    ValueDtype m_dtype;
    int64_t m_min_rank;
    SparAllocation m_mode;
    int64_t m_header_bytes{0};
    int64_t m_min_bytes{0};
};

at::Tensor
MatrixView(const std::vector<float>& x, const AdapterLayout& layout, size_t i)
{
    const MatrixSpec& s = layout.matrix(i);
    return at::from_blob(const_cast<float*>(x.data()) + layout.offset(i), {s.rows, s.cols},
                         at::TensorOptions().dtype(at::kFloat));
}

Status
SparCompressor::Spectra(const std::vector<float>& x, std::vector<SparCandidates>* cands,
                        std::vector<at::Tensor>* bases) const
{
    const size_t n = m_layout.size();
    cands->assign(n, SparCandidates());
    bases->assign(n, at::Tensor());
    // One matrix per task, the whole chain in the task (Gram, eigendecomposition, gains): every
    // matrix is read once, by one thread, with BLAS held at one thread (see SingleThreadedBlas),
    // and no batch tensors are built or copied. A matrix's result does not depend on which
    // thread ran it, so the encode does not depend on the thread count.
    std::vector<char> finite(n, 1);
    ParallelFor(0, static_cast<int64_t>(n), 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t t = b; t < e; ++t)
                    {
                        const size_t i = static_cast<size_t>(t);
                        const MatrixSpec& s = m_layout.matrix(i);
                        const int64_t m = std::min(s.rows, s.cols);
                        at::Tensor gram = at::zeros({m, m}, at::kFloat);
                        GramLower(x.data() + m_layout.offset(i), s.rows, s.cols, gram);
                        const float* g = gram.data_ptr<float>();
                        bool ok = true;
                        for (int64_t k = 0; k < m * m; ++k)
                            ok &= std::isfinite(g[k]);
                        SparCandidates& c = (*cands)[i];
                        c.cost = TripletBytes(s);
                        if (!ok)
                        {
                            finite[i] = 0;
                            continue;
                        }
                        // Eigendecomposition in double (only the lower triangle is read).
                        auto [w, v] = at::linalg_eigh(gram.to(at::kDouble));
                        const double* ev = w.data_ptr<double>();
                        c.gains.resize(static_cast<size_t>(m));
                        for (int64_t j = 0; j < m; ++j)
                            c.gains[static_cast<size_t>(j)] = std::max(0.0, ev[m - 1 - j]);
                        (*bases)[i] = v;
                    }
                });
    for (char f : finite)
    {
        if (!f)
            return Status::InvalidArgument("spar: the input holds non-finite values");
    }
    return Status::Ok();
}

void
SparCompressor::CodeTriplets(const std::vector<float>& x, size_t i, int64_t k,
                             const at::Tensor& eigvecs, std::string* out) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t m = std::min(s.rows, s.cols);
    const bool left_basis = s.rows <= s.cols; // eigenvectors are u (else v)
    out->reserve(static_cast<size_t>(k * TripletBytes(s)));
    ByteWriter w(out);
    // The k leading eigenvectors, largest first, as fp32 columns (m x k).
    at::Tensor basis = eigvecs.narrow(1, m - k, k).flip({1}).to(at::kFloat).contiguous();
    at::Tensor xi = MatrixView(x, m_layout, i);
    // The other side: X^T u (cols x k) or X v (rows x k); rows of w = one triplet each.
    at::Tensor w_t = (left_basis ? at::mm(xi.t(), basis) : at::mm(xi, basis)).t().contiguous();
    at::Tensor basis_t = basis.t().contiguous();
    const int64_t olen = left_basis ? s.cols : s.rows;
    std::vector<float> other(static_cast<size_t>(olen));
    for (int64_t j = 0; j < k; ++j)
    {
        const float* wj = w_t.data_ptr<float>() + j * olen;
        const float* bj = basis_t.data_ptr<float>() + j * m;
        double norm2 = 0.0;
        for (int64_t t = 0; t < olen; ++t)
        {
            norm2 += static_cast<double>(wj[t]) * static_cast<double>(wj[t]);
        }
        const double sigma = std::sqrt(norm2);
        const float inv = sigma > 0.0 ? static_cast<float>(1.0 / sigma) : 0.0f;
        for (int64_t t = 0; t < olen; ++t)
        {
            other[static_cast<size_t>(t)] = wj[t] * inv;
        }
        w.PutF32(static_cast<float>(sigma));
        if (left_basis)
        {
            PutCodedVector(&w, bj, s.rows, m_dtype);
            PutCodedVector(&w, other.data(), s.cols, m_dtype);
        }
        else
        {
            PutCodedVector(&w, other.data(), s.rows, m_dtype);
            PutCodedVector(&w, bj, s.cols, m_dtype);
        }
    }
}

StatusOr<Encoded>
SparCompressor::Encode(const std::vector<float>& x, int64_t budget_bytes)
{
    if (static_cast<int64_t>(x.size()) != m_layout.numel())
    {
        return Status::InvalidArgument("spar: input has " + std::to_string(x.size()) +
                                       " values, layout has " + std::to_string(m_layout.numel()));
    }
    if (budget_bytes < m_min_bytes)
    {
        return Status::BudgetTooSmall("spar: budget " + std::to_string(budget_bytes) +
                                      " bytes is below the smallest payload (" +
                                      std::to_string(m_min_bytes) + " bytes)");
    }
    std::vector<SparCandidates> cands;
    std::vector<at::Tensor> bases;
    std::vector<int64_t> ks;
    Encoded e;
    try
    {
        SingleThreadedBlas one_blas_thread;
        HILO_RETURN_IF_ERROR(Spectra(x, &cands, &bases));
        StatusOr<std::vector<int64_t>> alloc =
            SparAllocate(cands, budget_bytes - m_header_bytes, m_min_rank, m_mode);
        if (!alloc.ok())
        {
            return alloc.status();
        }
        ks = std::move(*alloc);

        // The kept triplets of each matrix, coded into a buffer of its own (one task per matrix,
        // as in Spectra), then concatenated in layout order.
        std::vector<std::string> coded(ks.size());
        ParallelFor(0, static_cast<int64_t>(ks.size()), 1,
                    [&](int64_t b, int64_t end)
                    {
                        for (int64_t t = b; t < end; ++t)
                        {
                            const size_t i = static_cast<size_t>(t);
                            if (ks[i] > 0)
                                CodeTriplets(x, i, ks[i], bases[i], &coded[i]);
                        }
                    });
        int64_t total = m_header_bytes;
        for (size_t i = 0; i < ks.size(); ++i)
        {
            total += ks[i] * cands[i].cost;
        }
        e.payload.reserve(static_cast<size_t>(total));
        ByteWriter w(&e.payload);
        w.PutU8(static_cast<uint8_t>(m_dtype));
        w.PutVarint(m_layout.size());
        for (int64_t k : ks)
        {
            w.PutVarint(static_cast<uint64_t>(k));
        }
        for (const std::string& c : coded)
        {
            w.PutBytes(c.data(), c.size());
        }
    }
    catch (const std::exception& ex)
    {
        return Status::Internal(std::string("spar: LibTorch failed during encode: ") + ex.what());
    }
    e.kept_per_matrix = std::move(ks);
    return e;
}

Status
SparCompressor::Decode(std::string_view payload, std::vector<float>* out) const
{
    ByteReader r(payload);
    uint8_t dtype = 0;
    if (!r.GetU8(&dtype) || dtype != static_cast<uint8_t>(m_dtype))
    {
        return Status::Corruption("spar: missing or wrong value dtype (configured " +
                                  std::string(ValueDtypeName(m_dtype)) + ")");
    }
    LowRankPayload p;
    HILO_RETURN_IF_ERROR(ReadLowRankRanks(
        &r, m_layout, "spar", [this](const MatrixSpec& s) { return TripletBytes(s); }, &p));
    for (size_t i = 0; i < p.ks.size(); ++i)
    {
        const MatrixSpec& s = m_layout.matrix(i);
        for (int64_t j = 0; j < p.ks[i]; ++j)
        {
            float sigma = 0.0f;
            if (!r.GetF32(&sigma) || !std::isfinite(sigma) ||
                !GetCodedVector(&r, p.left.data() + p.left_at[i] + j * s.rows, s.rows, m_dtype,
                                sigma) ||
                !GetCodedVector(&r, p.right.data() + p.right_at[i] + j * s.cols, s.cols, m_dtype,
                                1.0f))
            {
                return Status::Corruption("spar: triplet " + std::to_string(j) + " of matrix " +
                                          std::to_string(i) + " holds a non-finite value");
            }
        }
    }
    if (!ReconstructLowRankPayload(p, m_layout, out))
    {
        return Status::Corruption("spar: the reconstruction overflows (a value is not finite)");
    }
    return Status::Ok();
}

} // namespace

StatusOr<std::vector<int64_t>>
SparAllocate(const std::vector<SparCandidates>& matrices, int64_t budget_bytes, int64_t min_rank,
             SparAllocation mode)
{
    const size_t n = matrices.size();
    std::vector<int64_t> ks(n, 0);
    int64_t used = 0;
    int64_t max_m = 0;
    for (size_t i = 0; i < n; ++i)
    {
        const int64_t m = static_cast<int64_t>(matrices[i].gains.size());
        ks[i] = std::min(min_rank, m);
        used += ks[i] * matrices[i].cost;
        max_m = std::max(max_m, m);
    }
    if (used > budget_bytes)
    {
        return Status::BudgetTooSmall("spar: " + std::to_string(budget_bytes) +
                                      " bytes cannot hold min_rank=" + std::to_string(min_rank) +
                                      " triplets for every matrix (" + std::to_string(used) +
                                      " bytes)");
    }
    if (mode == SparAllocation::kUniform)
    {
        int64_t best = std::min(min_rank, max_m);
        for (int64_t k = best + 1; k <= max_m; ++k)
        {
            int64_t total = 0;
            for (const SparCandidates& c : matrices)
            {
                total += std::min<int64_t>(k, static_cast<int64_t>(c.gains.size())) * c.cost;
            }
            if (total > budget_bytes)
            {
                break;
            }
            best = k;
        }
        for (size_t i = 0; i < n; ++i)
        {
            ks[i] = std::min<int64_t>(best, static_cast<int64_t>(matrices[i].gains.size()));
        }
        return ks;
    }

    struct Candidate
    {
        double ratio;
        uint32_t matrix;
        uint32_t j;
    };
    std::vector<Candidate> cands;
    for (size_t i = 0; i < n; ++i)
    {
        const SparCandidates& c = matrices[i];
        for (size_t j = static_cast<size_t>(ks[i]); j < c.gains.size() && c.cost > 0; ++j)
        {
            if (c.gains[j] > 0.0) // a zero triplet cannot lower the error
            {
                cands.push_back({c.gains[j] / static_cast<double>(c.cost), static_cast<uint32_t>(i),
                                 static_cast<uint32_t>(j)});
            }
        }
    }
    std::sort(cands.begin(), cands.end(),
              [](const Candidate& a, const Candidate& b)
              {
                  if (a.ratio != b.ratio)
                      return a.ratio > b.ratio;
                  if (a.matrix != b.matrix)
                      return a.matrix < b.matrix;
                  return a.j < b.j;
              });
    std::vector<bool> closed(n, false);
    for (const Candidate& c : cands)
    {
        const size_t i = c.matrix;
        if (closed[i] || static_cast<int64_t>(c.j) != ks[i])
        {
            closed[i] = true; // out-of-order gains: keep the kept triplets a prefix
            continue;
        }
        if (used + matrices[i].cost <= budget_bytes)
        {
            ++ks[i];
            used += matrices[i].cost;
        }
        else
        {
            closed[i] = true;
        }
    }
    return ks;
}

StatusOr<std::unique_ptr<Compressor>>
NewSparCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("spar", options);
    ValueDtype dtype =
        r.Dtype("dtype", ValueDtype::kBf16,
                {ValueDtype::kFp32, ValueDtype::kBf16, ValueDtype::kFp16, ValueDtype::kInt8});
    int64_t min_rank = r.Int("min_rank", 0, 0, 1 << 20);
    std::string mode = r.Choice("allocation", "greedy", {"greedy", "uniform"});
    HILO_RETURN_IF_ERROR(r.Finish());
    return std::unique_ptr<Compressor>(
        new SparCompressor(layout, dtype, min_rank,
                           mode == "greedy" ? SparAllocation::kGreedy : SparAllocation::kUniform));
}

} // namespace hilo
