#include "hilo/compress/spar.h"

#include "hilo/compress/allocation-policy.h"
#include "hilo/compress/factor-coding.h"
#include "hilo/compress/replay-aware.h"
#include "hilo/compress/replicated-basis.h"
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
        // basis=replicated: a second rank section (coefficient counts, each <= m_i), no count.
        if (m_policy.replicated_basis())
            m_header_bytes += SpectralTruncation::RankSectionBytes(layout) -
                              VarintLength(static_cast<uint64_t>(layout.size()));
        m_min_bytes =
            m_header_bytes + SpectralTruncation::TripletBytes(
                                 layout, [this](const MatrixSpec& s) { return TripletBytes(s); },
                                 m_min_rank, &m_triplet_bytes);
    }

    std::string Name() const override
    {
        return m_policy.replicated_basis() ? "spar-rb-v1" : "spar-v1";
    }
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
    bool NeedsOptimizerState() const override
    {
        return m_policy.preconditioned() || m_policy.replicated_basis();
    }
    bool DecodeNeedsOptimizerState() const override { return m_policy.replicated_basis(); }
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
    /// Reads the payload's leading dtype byte; kCorruption unless it is the configured one.
    Status ReadDtype(ByteReader* r) const
    {
        uint8_t dtype = 0;
        if (!r->GetU8(&dtype) || dtype != static_cast<uint8_t>(m_dtype))
        {
            return Status::Corruption("spar: missing or wrong value dtype (configured " +
                                      std::string(ValueDtypeName(m_dtype)) + ")");
        }
        return Status::Ok();
    }
    /// Reads the triplets first..k-1 of matrix i into columns first..k-1 of `left` (sigma u, rows
    /// values each) and `right` (v, cols values each); kCorruption naming the triplet (counted
    /// from first) when one is missing or not finite.
    Status ReadTriplets(ByteReader* r, size_t i, int64_t first, int64_t k, float* left,
                        float* right) const
    {
        const MatrixSpec& s = m_layout.matrix(i);
        for (int64_t j = first; j < k; ++j)
        {
            float sigma = 0.0f;
            if (!r->GetF32(&sigma) || !std::isfinite(sigma) ||
                !GetCodedVector(r, left + j * s.rows, s.rows, m_dtype, sigma) ||
                !GetCodedVector(r, right + j * s.cols, s.cols, m_dtype, 1.0f))
            {
                return Status::Corruption("spar: triplet " + std::to_string(j - first) +
                                          " of matrix " + std::to_string(i) +
                                          " holds a non-finite value");
            }
        }
        return Status::Ok();
    }
    /// Bytes of one coefficient entry of basis=replicated: u8 direction, coded m values.
    int64_t CoefficientBytes(const MatrixSpec& s) const
    {
        return 1 + CodedVectorBytes(std::min(s.rows, s.cols), m_dtype);
    }
    /// The replicated basis of the state SetOptimizerState gave, or kInvalidArgument naming
    /// what is missing.
    /// `wanted`: DeriveReplicatedBasis's (null: every matrix).
    StatusOr<ReplicatedBasis> Basis(const char* what,
                                    const std::vector<uint8_t>* wanted = nullptr) const;
    StatusOr<Encoded> EncodeReplicated(const std::vector<float>& x, int64_t budget_bytes);
    Status DecodeReplicated(std::string_view payload, std::vector<float>* out) const;
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
    // basis=replicated: X with the basis projected out. Scratch only (every encode overwrites
    // it), kept so that each encode reuses its pages instead of faulting in fresh ones.
    std::vector<float> m_residual;
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
    if (m_policy.replicated_basis())
        return EncodeReplicated(x, budget_bytes);
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
    if (m_policy.replicated_basis())
        return DecodeReplicated(payload, out);
    ByteReader r(payload);
    HILO_RETURN_IF_ERROR(ReadDtype(&r));
    LowRankPayload p;
    HILO_RETURN_IF_ERROR(ReadLowRankRanks(
        &r, m_layout, "spar", [this](const MatrixSpec& s) { return TripletBytes(s); }, &p));
    for (size_t i = 0; i < p.ks.size(); ++i)
    {
        HILO_RETURN_IF_ERROR(ReadTriplets(&r, i, 0, p.ks[i], p.left.data() + p.left_at[i],
                                          p.right.data() + p.right_at[i]));
    }
    if (!ReconstructLowRankPayload(p, m_layout, out))
    {
        return Status::Corruption("spar: the reconstruction overflows (a value is not finite)");
    }
    return Status::Ok();
}

StatusOr<ReplicatedBasis>
SparCompressor::Basis(const char* what, const std::vector<uint8_t>* wanted) const
{
    const OptimizerState* state = m_policy.optimizer_state();
    if (state == nullptr || state->m.size() != static_cast<size_t>(m_layout.numel()))
    {
        return Status::InvalidArgument(
            std::string("spar: basis=replicated ") + what +
            " against the replayed optimizer's first moment, and none was given (strategy hilo "
            "with the adamw optimizer sets it)");
    }
    return DeriveReplicatedBasis(m_layout, state->m, m_policy.basis_width(), BestSketchIsa(),
                                 wanted);
}

StatusOr<Encoded>
SparCompressor::EncodeReplicated(const std::vector<float>& x, int64_t budget_bytes)
{
    StatusOr<ReplicatedBasis> basis = Basis("encodes");
    if (!basis.ok())
        return basis.status();
    const size_t n = m_layout.size();
    Encoded e;
    SpectralPlan plan;
    std::vector<int64_t> cs(n, 0);
    std::vector<std::string> coded;
    try
    {
        StatusOr<const AllocationHints*> base = m_policy.Hints(x, "spar");
        if (!base.ok())
            return base.status();
        AllocationHints hints = *base != nullptr ? **base : AllocationHints();
        std::vector<float>& residual = m_residual;
        const BasisProjection proj = ProjectOntoBasis(m_layout, *basis, x, &residual);
        // Each matrix's directions in decreasing energy (ties: lower direction), so that the
        // greedy's prefix of its candidates is the best set of directions.
        std::vector<std::vector<int64_t>> order(n);
        std::vector<size_t> extra_of;
        for (size_t i = 0; i < n; ++i)
        {
            const int64_t width = basis->width[i];
            if (width == 0)
                continue;
            const double* g = proj.gains.data() + proj.gain_at[i];
            order[i].resize(static_cast<size_t>(width));
            for (int64_t j = 0; j < width; ++j)
                order[i][static_cast<size_t>(j)] = j;
            std::stable_sort(order[i].begin(), order[i].end(),
                             [g](int64_t a, int64_t b) { return g[a] > g[b]; });
            SparCandidates c;
            c.cost = CoefficientBytes(m_layout.matrix(i));
            for (int64_t j : order[i])
                c.gains.push_back(g[j]);
            c.weight = hints.weights.empty() ? 1.0 : hints.weights[i];
            c.capped = true;
            hints.extra.push_back(std::move(c));
            extra_of.push_back(i);
        }
        // The refresh rule (allocation-policy.h): the coefficients take at most basis_share of
        // the bytes, and leave room for one fresh triplet of the costliest matrix whose triplet
        // fits the budget at all.
        const int64_t net = budget_bytes - m_header_bytes;
        int64_t widest = 0;
        for (int64_t cost : m_triplet_bytes)
            if (cost <= net)
                widest = std::max(widest, cost);
        hints.extra_cap = std::min(
            static_cast<int64_t>(std::floor(m_policy.basis_share() * static_cast<double>(net))),
            net - widest);
        StatusOr<SpectralPlan> planned =
            m_spectra.Plan(residual, m_triplet_bytes, net, m_min_rank, m_mode, "spar", &hints);
        if (!planned.ok())
            return planned.status();
        plan = std::move(*planned);
        for (size_t t = 0; t < extra_of.size(); ++t)
            cs[extra_of[t]] = plan.extra_ks[t];
        coded = m_spectra.CodeAll(
            plan, [&](size_t i, int64_t k, const MatrixSpectrum& sp, std::string* out)
            { CodeTriplets(residual, i, k, sp, out); });
        e.payload.reserve(static_cast<size_t>(budget_bytes));
        ByteWriter w(&e.payload);
        w.PutU8(static_cast<uint8_t>(m_dtype));
        w.PutVarint(n);
        for (int64_t k : plan.ks)
            w.PutVarint(static_cast<uint64_t>(k));
        for (int64_t c : cs)
            w.PutVarint(static_cast<uint64_t>(c));
        for (size_t i = 0; i < n; ++i)
        {
            // The chosen directions in increasing index, each u8 index + its coefficients.
            std::vector<int64_t> chosen(order[i].begin(), order[i].begin() + cs[i]);
            std::sort(chosen.begin(), chosen.end());
            const int64_t m = std::min(m_layout.matrix(i).rows, m_layout.matrix(i).cols);
            for (int64_t j : chosen)
            {
                w.PutU8(static_cast<uint8_t>(j));
                PutCodedVector(&w, proj.coeffs.data() + proj.at[i] + j * m, m, m_dtype);
            }
            w.PutBytes(coded[i].data(), coded[i].size());
        }
    }
    catch (const std::exception& ex)
    {
        return Status::Internal(std::string("spar: LibTorch failed during encode: ") + ex.what());
    }
    std::vector<int64_t> kept(n);
    for (size_t i = 0; i < n; ++i)
        kept[i] = plan.ks[i] + cs[i];
    m_policy.Commit(kept);
    e.kept_per_matrix = std::move(kept);
    return e;
}

Status
SparCompressor::DecodeReplicated(std::string_view payload, std::vector<float>* out) const
{
    ByteReader r(payload);
    HILO_RETURN_IF_ERROR(ReadDtype(&r));
    const size_t n = m_layout.size();
    uint64_t count = 0;
    if (!r.GetVarint(&count) || count != n)
    {
        return Status::Corruption("spar: payload matrix count differs from the layout's " +
                                  std::to_string(n));
    }
    std::vector<int64_t> ks(n, 0);
    std::vector<int64_t> cs(n, 0);
    for (int section = 0; section < 2; ++section)
    {
        for (size_t i = 0; i < n; ++i)
        {
            const MatrixSpec& s = m_layout.matrix(i);
            uint64_t k = 0;
            if (!r.GetVarint(&k) || k > static_cast<uint64_t>(std::min(s.rows, s.cols)))
            {
                return Status::Corruption(
                    std::string("spar: ") + (section == 0 ? "rank" : "coefficient count") +
                    " of matrix " + std::to_string(i) + " is missing or exceeds its shape");
            }
            (section == 0 ? ks : cs)[i] = static_cast<int64_t>(k);
        }
    }
    LowRankPayload p;
    int64_t expected = 0;
    int64_t left_len = 0;
    int64_t right_len = 0;
    p.ks.resize(n);
    p.left_at.resize(n);
    p.right_at.resize(n);
    for (size_t i = 0; i < n; ++i)
    {
        const MatrixSpec& s = m_layout.matrix(i);
        p.ks[i] = ks[i] + cs[i];
        p.left_at[i] = left_len;
        p.right_at[i] = right_len;
        expected += ks[i] * TripletBytes(s) + cs[i] * CoefficientBytes(s);
        left_len += p.ks[i] * s.rows;
        right_len += p.ks[i] * s.cols;
    }
    if (static_cast<int64_t>(r.remaining()) != expected)
    {
        return Status::Corruption("spar: payload holds " + std::to_string(r.remaining()) +
                                  " bytes after its ranks, they need " + std::to_string(expected));
    }
    // Only now (the sizes hold), the basis of the matrices the payload ships coefficients of, and
    // no other.
    std::vector<uint8_t> wanted(n, 0);
    for (size_t i = 0; i < n; ++i)
        wanted[i] = cs[i] > 0 ? 1 : 0;
    StatusOr<ReplicatedBasis> basis = Basis("decodes", &wanted);
    if (!basis.ok())
        return basis.status();
    for (size_t i = 0; i < n; ++i)
    {
        if (cs[i] > basis->width[i])
        {
            return Status::Corruption("spar: coefficient count of matrix " + std::to_string(i) +
                                      " exceeds its replicated basis (" +
                                      std::to_string(basis->width[i]) + " directions)");
        }
    }
    p.left.assign(static_cast<size_t>(left_len), 0.0f);
    p.right.assign(static_cast<size_t>(right_len), 0.0f);
    for (size_t i = 0; i < n; ++i)
    {
        const MatrixSpec& s = m_layout.matrix(i);
        const bool short_rows = s.rows <= s.cols;
        const int64_t m = std::min(s.rows, s.cols);
        const int64_t d = std::max(s.rows, s.cols);
        float* left = p.left.data() + p.left_at[i];
        float* right = p.right.data() + p.right_at[i];
        int64_t last = -1;
        for (int64_t t = 0; t < cs[i]; ++t)
        {
            uint8_t j = 0;
            float* coeffs = short_rows ? left + t * s.rows : right + t * s.cols;
            float* dir = short_rows ? right + t * s.cols : left + t * s.rows;
            if (!r.GetU8(&j) || j <= last || j >= basis->width[i])
            {
                return Status::Corruption("spar: coefficient entry " + std::to_string(t) +
                                          " of matrix " + std::to_string(i) +
                                          " names a direction out of order or past its basis");
            }
            last = j;
            if (!GetCodedVector(&r, coeffs, m, m_dtype, 1.0f))
            {
                return Status::Corruption("spar: coefficients " + std::to_string(t) +
                                          " of matrix " + std::to_string(i) +
                                          " hold a non-finite value");
            }
            const float* v = basis->vectors.data() + basis->at[i] + j * d;
            std::copy(v, v + d, dir);
        }
        HILO_RETURN_IF_ERROR(ReadTriplets(&r, i, cs[i], p.ks[i], left, right));
    }
    if (!ReconstructLowRankPayload(p, m_layout, out))
        return Status::Corruption("spar: the reconstruction overflows (a value is not finite)");
    return Status::Ok();
}

} // namespace

StatusOr<std::vector<int64_t>>
SparAllocate(const std::vector<SparCandidates>& matrices, int64_t budget_bytes, int64_t min_rank,
             SparAllocation mode, int64_t capped_bytes)
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
    int64_t capped_used = 0;
    for (const Candidate& c : cands)
    {
        const size_t i = c.matrix;
        if (closed[i] || static_cast<int64_t>(c.j) != ks[i])
        {
            closed[i] = true; // out-of-order gains: keep the kept triplets a prefix
            continue;
        }
        const bool capped = capped_bytes >= 0 && matrices[i].capped;
        if (used + matrices[i].cost <= budget_bytes &&
            (!capped || capped_used + matrices[i].cost <= capped_bytes))
        {
            ++ks[i];
            used += matrices[i].cost;
            if (capped)
                capped_used += matrices[i].cost;
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
    if (policy.replicated_basis() && min_rank > 0)
    {
        return Status::InvalidArgument(
            "spar: option basis=replicated works with min_rank=0 only (got min_rank=" +
            std::to_string(min_rank) + ")");
    }
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
