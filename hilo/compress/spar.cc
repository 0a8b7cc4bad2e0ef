#include "hilo/compress/spar.h"

#include "hilo/compress/allocation-policy.h"
#include "hilo/compress/factor-coding.h"
#include "hilo/compress/replay-aware.h"
#include "hilo/compress/spectral-truncation.h"
#include "hilo/core/coding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace hilo
{
namespace
{

class SparCompressor : public ReplayAwareCompressor
{
  public:
    SparCompressor(const AdapterLayout& layout, ValueDtype dtype, int64_t min_rank,
                   AllocationPolicy policy, int64_t sketch, bool screen, bool warm)
      : m_layout(layout)
      , m_dtype(dtype)
      , m_min_rank(policy.mode() == SparAllocation::kUniform ? std::max<int64_t>(min_rank, 1)
                                                             : min_rank)
      , m_mode(policy.mode())
      , m_policy(std::move(policy))
      , m_spectra(layout, sketch, screen, warm)
    {
        // Uniform keeps at least one triplet in every matrix: a common k of 0 ships nothing, and
        // an ablation that silently drops every update measures nothing.
        m_header_bytes = 1 + SpectralTruncation::RankSectionBytes(layout);
        m_min_bytes =
            m_header_bytes + SpectralTruncation::TripletBytes(
                                 layout, [this](const MatrixSpec& s) { return TripletBytes(s); },
                                 m_min_rank, &m_triplet_bytes);
    }

    std::string Name() const override { return "spar-v1"; }
    std::string Params() const override
    {
        CompressorOptions o = {{"dtype", ValueDtypeName(m_dtype)},
                               {"min_rank", std::to_string(m_min_rank)},
                               {"sketch", std::to_string(m_spectra.sketch_width())}};
        // Named only when on, so that the other configurations' parameters (and the strategy
        // hashes made from them) read as before the option existed.
        if (m_spectra.screen())
            o["screen"] = "true";
        if (m_spectra.warm() != DefaultWarm(m_spectra.sketch_width(), m_spectra.screen()))
            o["warm"] = m_spectra.warm() ? "true" : "false";
        m_policy.AddParams(&o, /*with_allocation=*/true);
        return FormatCompressorOptions(o);
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override { return m_min_bytes; }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override;
    Status Decode(std::string_view payload, std::vector<float>* out) const override;
    /// The sketch's bases (SpectralTruncation::SaveWarmState; empty unless warm), joined with
    /// the coverage counters when coverage is on (SaveEncoderState).
    std::string SaveLocalState() const override { return SaveEncoderState(m_spectra, m_policy); }
    Status RestoreLocalState(std::string_view state) override
    {
        return RestoreEncoderState(state, "spar", &m_spectra, &m_policy);
    }

    void SetOptimizerState(const OptimizerState* state, const OptimizerConfig* config) override
    {
        m_policy.SetOptimizerState(state, config);
    }
    bool NeedsOptimizerState() const override { return m_policy.preconditioned(); }
    double ErrorFeedbackMaxRatio() const override { return m_policy.ef_max_ratio(); }

  private:
    int64_t TripletBytes(const MatrixSpec& s) const
    {
        return 4 + CodedVectorBytes(s.rows, m_dtype) + CodedVectorBytes(s.cols, m_dtype);
    }
    /// Appends the k leading triplets of matrix i to `out`: sigma, then the coded u and v, with
    /// sigma v = X^T u recomputed from X (or taken from the sketch, where it is the same
    /// product), so each shipped triplet is an exact projection of X.
    void CodeTriplets(const std::vector<float>& x, size_t i, int64_t k,
                      const MatrixSpectrum& spectrum, std::string* out) const;
    int64_t PayloadBytes(const std::vector<int64_t>& ks) const
    {
        int64_t total = m_header_bytes;
        for (size_t i = 0; i < ks.size(); ++i)
            total += ks[i] * m_triplet_bytes[i];
        return total;
    }

    AdapterLayout m_layout;
    ValueDtype m_dtype;
    int64_t m_min_rank;
    SparAllocation m_mode;
    AllocationPolicy m_policy;
    SpectralTruncation m_spectra;
    int64_t m_header_bytes{0};
    int64_t m_min_bytes{0};
    std::vector<int64_t> m_triplet_bytes;
};

void
SparCompressor::CodeTriplets(const std::vector<float>& x, size_t i, int64_t k,
                             const MatrixSpectrum& spectrum, std::string* out) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t m = std::min(s.rows, s.cols);
    const bool left_basis = s.rows <= s.cols; // the short side is u (else v)
    out->reserve(static_cast<size_t>(k * TripletBytes(s)));
    ByteWriter w(out);
    // Rows of w_t / basis_t = one triplet each: sigma v (or sigma u) and the short-side vector.
    at::Tensor w_t = m_spectra.Projected(x, i, spectrum, k).t().contiguous();
    at::Tensor basis_t = spectrum.basis.narrow(1, 0, k).t().contiguous();
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
    HILO_RETURN_IF_ERROR(m_spectra.CheckEncode(x, budget_bytes, m_min_bytes, "spar"));
    SpectralPlan plan;
    Encoded e;
    try
    {
        StatusOr<const AllocationHints*> hints = m_policy.Hints(x, "spar");
        if (!hints.ok())
        {
            return hints.status();
        }
        StatusOr<SpectralPlan> planned = m_spectra.Plan(
            x, m_triplet_bytes, budget_bytes - m_header_bytes, m_min_rank, m_mode, "spar", *hints);
        if (!planned.ok())
        {
            return planned.status();
        }
        plan = std::move(*planned);
        // The kept triplets of each matrix, coded into a buffer of its own, in layout order.
        const std::vector<std::string> coded =
            m_spectra.CodeAll(plan, [&](size_t i, int64_t k, const MatrixSpectrum& sp,
                                        std::string* out) { CodeTriplets(x, i, k, sp, out); });
        e.payload.reserve(static_cast<size_t>(PayloadBytes(plan.ks)));
        ByteWriter w(&e.payload);
        w.PutU8(static_cast<uint8_t>(m_dtype));
        SpectralTruncation::PutRanksAndTriplets(&w, plan.ks, coded);
    }
    catch (const std::exception& ex)
    {
        return Status::Internal(std::string("spar: LibTorch failed during encode: ") + ex.what());
    }
    m_policy.Commit(plan.ks);
    e.kept_per_matrix = std::move(plan.ks);
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

    // Coverage: the overdue matrices' leading triplets first, as far as they fit.
    std::vector<size_t> due;
    for (size_t i = 0; i < n; ++i)
    {
        const SparCandidates& c = matrices[i];
        if (c.overdue > 0 && ks[i] == 0 && !c.gains.empty() && c.gains[0] > 0.0)
            due.push_back(i);
    }
    std::stable_sort(due.begin(), due.end(),
                     [&](size_t a, size_t b) { return matrices[a].overdue > matrices[b].overdue; });
    for (size_t i : due)
    {
        if (used + matrices[i].cost <= budget_bytes)
        {
            ks[i] = 1;
            used += matrices[i].cost;
        }
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
                cands.push_back({c.weight * c.gains[j] / static_cast<double>(c.cost),
                                 static_cast<uint32_t>(i), static_cast<uint32_t>(j)});
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
    AllocationPolicy policy(layout, &r, /*uniform_allowed=*/true);
    int64_t sketch = r.Int("sketch", kDefaultSketchWidth, 0, 1 << 20);
    const bool screen = r.Bool("screen", false);
    const bool warm = r.Bool("warm", DefaultWarm(sketch, screen));
    HILO_RETURN_IF_ERROR(r.Finish());
    HILO_RETURN_IF_ERROR(policy.Validate("spar"));
    if (screen && (policy.preconditioned() || policy.coverage() > 0))
    {
        return Status::InvalidArgument("spar: option screen=true works with allocation=energy "
                                       "and no coverage only");
    }
    if (sketch != 0 && sketch < 4)
    {
        return Status::InvalidArgument("spar: option sketch=" + std::to_string(sketch) +
                                       " is not allowed (0 for exact spectra, or >= 4)");
    }
    if (screen && sketch == 0)
    {
        return Status::InvalidArgument(
            "spar: option screen=true needs a sketch (sketch=4 or more)");
    }
    if (warm && (sketch == 0 || screen))
    {
        return Status::InvalidArgument(
            "spar: option warm=true needs a sketch (sketch=4 or more) and no screen");
    }
    return std::unique_ptr<Compressor>(
        new SparCompressor(layout, dtype, min_rank, std::move(policy), sketch, screen, warm));
}

} // namespace hilo
