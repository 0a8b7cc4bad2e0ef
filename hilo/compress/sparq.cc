#include "hilo/compress/sparq.h"

#include "hilo/compress/allocation-policy.h"
#include "hilo/compress/factor-coding.h"
#include "hilo/compress/replay-aware.h"
#include "hilo/compress/rounded-code.h"
#include "hilo/compress/spectral-truncation.h"
#include "hilo/core/coding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace hilo
{
namespace
{

int64_t
NumBlocks(int64_t n, int64_t block)
{
    return block == 0 ? 1 : (n + block - 1) / block;
}

int
Levels(int bits)
{
    return (1 << (bits - 1)) - 1;
}

// Clipping levels tried for each block's scale, as fractions of the block's absmax: for b <= 4
// the error-minimising clip of a bell-shaped vector sits well inside its largest value.
constexpr double kClips[] = {1.0, 0.9, 0.8, 0.7, 0.6, 0.5};

/// Quantizes x[0..n) into per-block scales and codes in [-L, L]; writes the dequantized values
/// (scale * q, in fp32 exactly as the decoder computes them) to `deq`.
void
Quantize(const double* x, int64_t n, int bits, int64_t block, std::vector<float>* scales,
         std::vector<int>* codes, float* deq)
{
    const int levels = Levels(bits);
    const int64_t nb = NumBlocks(n, block);
    const int64_t width = block == 0 ? n : block;
    scales->assign(static_cast<size_t>(nb), 0.0f);
    codes->assign(static_cast<size_t>(n), 0);
    for (int64_t b = 0; b < nb; ++b)
    {
        const int64_t lo = b * width;
        const int64_t hi = std::min(n, lo + width);
        double absmax = 0.0;
        for (int64_t i = lo; i < hi; ++i)
        {
            absmax = std::max(absmax, std::fabs(x[i]));
        }
        float best_scale = 0.0f;
        double best_err = 0.0;
        for (int64_t i = lo; i < hi; ++i)
        {
            best_err += x[i] * x[i];
        }
        for (double clip : kClips)
        {
            const float scale = static_cast<float>(absmax * clip / levels);
            if (!(scale > 0.0f) || !std::isfinite(scale))
            {
                continue;
            }
            double err = 0.0;
            for (int64_t i = lo; i < hi; ++i)
            {
                const double q = RoundedCode(x[i] / scale, levels);
                const double d = x[i] - static_cast<double>(scale * static_cast<float>(q));
                err += d * d;
            }
            if (err < best_err)
            {
                best_err = err;
                best_scale = scale;
            }
        }
        (*scales)[static_cast<size_t>(b)] = best_scale;
        for (int64_t i = lo; i < hi; ++i)
        {
            int q = 0;
            if (best_scale > 0.0f)
            {
                q = static_cast<int>(RoundedCode(x[i] / best_scale, levels));
            }
            (*codes)[static_cast<size_t>(i)] = q;
            deq[i] = best_scale * static_cast<float>(q);
        }
    }
}

void
PutLowBitVector(ByteWriter* w, const std::vector<float>& scales, const std::vector<int>& codes,
                int bits)
{
    for (float s : scales)
    {
        w->PutF32(s);
    }
    const int levels = Levels(bits);
    uint32_t acc = 0;
    int filled = 0;
    for (int q : codes)
    {
        acc |= static_cast<uint32_t>(q + levels) << filled;
        filled += bits;
        while (filled >= 8)
        {
            w->PutU8(static_cast<uint8_t>(acc & 0xffu));
            acc >>= 8;
            filled -= 8;
        }
    }
    if (filled > 0)
    {
        w->PutU8(static_cast<uint8_t>(acc & 0xffu));
    }
}

/// Reads a low-bit vector into out[0..n). False when bytes run out, a scale is negative or
/// non-finite, a code exceeds 2L, or the padding bits of the last byte are not zero.
bool
GetLowBitVector(ByteReader* r, float* out, int64_t n, int bits, int64_t block)
{
    const int levels = Levels(bits);
    const int64_t nb = NumBlocks(n, block);
    const int64_t width = block == 0 ? n : block;
    std::vector<float> scales(static_cast<size_t>(nb));
    for (float& s : scales)
    {
        if (!r->GetF32(&s) || !std::isfinite(s) || s < 0.0f)
        {
            return false;
        }
    }
    std::string_view bytes;
    if (!r->GetBytes(static_cast<size_t>((n * bits + 7) / 8), &bytes))
    {
        return false;
    }
    const uint32_t mask = (1u << bits) - 1u;
    uint32_t acc = 0;
    int filled = 0;
    size_t at = 0;
    for (int64_t i = 0; i < n; ++i)
    {
        while (filled < bits)
        {
            acc |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[at++])) << filled;
            filled += 8;
        }
        const int code = static_cast<int>(acc & mask);
        acc >>= bits;
        filled -= bits;
        if (code > 2 * levels)
        {
            return false;
        }
        out[i] = scales[static_cast<size_t>(i / width)] * static_cast<float>(code - levels);
    }
    return acc == 0; // canonical padding
}

class SparqCompressor : public ReplayAwareCompressor
{
  public:
    SparqCompressor(const AdapterLayout& layout, int bits, int64_t block, int64_t min_rank,
                    AllocationPolicy policy, int64_t sketch, bool warm)
      : m_layout(layout)
      , m_bits(bits)
      , m_block(block)
      , m_min_rank(min_rank)
      , m_policy(std::move(policy))
      , m_spectra(layout, sketch, false, warm)
    {
        m_header_bytes = 1 + VarintLength(static_cast<uint64_t>(block)) +
                         SpectralTruncation::RankSectionBytes(layout);
        m_min_bytes =
            m_header_bytes + SpectralTruncation::TripletBytes(
                                 layout, [this](const MatrixSpec& s) { return TripletBytes(s); },
                                 m_min_rank, &m_triplet_bytes);
    }

    std::string Name() const override { return "sparq-v1"; }
    std::string Params() const override
    {
        CompressorOptions o = {{"bits", std::to_string(m_bits)},
                               {"block", std::to_string(m_block)},
                               {"min_rank", std::to_string(m_min_rank)},
                               {"sketch", std::to_string(m_spectra.sketch_width())}};
        // Named only when on or not the default, as spar's.
        if (m_spectra.warm() != DefaultWarm(m_spectra.sketch_width(), false))
            o["warm"] = m_spectra.warm() ? "true" : "false";
        m_policy.AddParams(&o, /*with_allocation=*/false);
        return FormatCompressorOptions(o);
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override { return m_min_bytes; }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override;
    Status Decode(std::string_view payload, std::vector<float>* out) const override;
    /// As spar's: the warm bases, joined with the coverage counters when coverage is on.
    std::string SaveLocalState() const override { return SaveEncoderState(m_spectra, m_policy); }
    Status RestoreLocalState(std::string_view state) override
    {
        return RestoreEncoderState(state, "sparq", &m_spectra, &m_policy);
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
        return LowBitVectorBytes(s.rows, m_bits, m_block) +
               LowBitVectorBytes(s.cols, m_bits, m_block);
    }
    /// Appends the k triplets of matrix i (low-bit u, then low-bit v) to `out`.
    void CodeTriplets(const std::vector<float>& x, size_t i, int64_t k,
                      const MatrixSpectrum& spectrum, std::string* out) const;

    AdapterLayout m_layout;
    int m_bits;
    int64_t m_block;
    int64_t m_min_rank;
    AllocationPolicy m_policy;
    SpectralTruncation m_spectra;
    int64_t m_header_bytes{0};
    int64_t m_min_bytes{0};
    std::vector<int64_t> m_triplet_bytes;
};

void
SparqCompressor::CodeTriplets(const std::vector<float>& x, size_t i, int64_t k,
                              const MatrixSpectrum& spectrum, std::string* out) const
{
    const MatrixSpec& s = m_layout.matrix(i);
    const bool left_basis = s.rows <= s.cols; // the short side is u (else v)
    const int64_t m = std::min(s.rows, s.cols);
    const int64_t olen = std::max(s.rows, s.cols);
    // The short-side vectors do not depend on one another: quantize them all first.
    at::Tensor basis_t = spectrum.basis.narrow(1, 0, k).t().to(at::kDouble).contiguous();
    at::Tensor bq_t = at::empty({k, m}, at::kFloat); // dequantized, one vector per row
    std::vector<std::vector<float>> b_scales(static_cast<size_t>(k));
    std::vector<std::vector<int>> b_codes(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j)
    {
        Quantize(basis_t.data_ptr<double>() + j * m, m, m_bits, m_block,
                 &b_scales[static_cast<size_t>(j)], &b_codes[static_cast<size_t>(j)],
                 bq_t.data_ptr<float>() + j * m);
    }
    // One pass over X for all of them: p_j = X^T b_j (long side).
    at::Tensor p_t = m_spectra.ProjectShortSide(x, i, bq_t.t()).t().to(at::kDouble).contiguous();
    at::Tensor bd_t = bq_t.to(at::kDouble);
    const double* bd = bd_t.data_ptr<double>();
    // Triplet j's long-side vector is fit to what the earlier quantized triplets left over:
    // R_j^T b_j / |b_j|^2 with R_j = X - sum_{t<j} b_t o_t^T, i.e. (p_j - sum_t (b_t . b_j) o_t)
    // / |b_j|^2, without forming R_j.
    std::vector<std::vector<double>> oq(static_cast<size_t>(k));
    std::vector<double> other(static_cast<size_t>(olen));
    std::vector<float> deq(static_cast<size_t>(olen));
    std::vector<float> scales;
    std::vector<int> codes;
    out->reserve(static_cast<size_t>(k * TripletBytes(s)));
    ByteWriter w(out);
    for (int64_t j = 0; j < k; ++j)
    {
        const double* bj = bd + j * m;
        double bn2 = 0.0;
        for (int64_t t = 0; t < m; ++t)
            bn2 += bj[t] * bj[t];
        const double* pj = p_t.data_ptr<double>() + j * olen;
        std::copy(pj, pj + olen, other.begin());
        for (int64_t t = 0; t < j; ++t)
        {
            const double* bt = bd + t * m;
            double dot = 0.0;
            for (int64_t r = 0; r < m; ++r)
                dot += bt[r] * bj[r];
            const std::vector<double>& ot = oq[static_cast<size_t>(t)];
            for (int64_t r = 0; r < olen; ++r)
                other[static_cast<size_t>(r)] -= dot * ot[static_cast<size_t>(r)];
        }
        for (double& v : other)
            v = bn2 > 0.0 ? v / bn2 : 0.0;
        Quantize(other.data(), olen, m_bits, m_block, &scales, &codes, deq.data());
        oq[static_cast<size_t>(j)].assign(deq.begin(), deq.end());
        if (left_basis)
        {
            PutLowBitVector(&w, b_scales[static_cast<size_t>(j)], b_codes[static_cast<size_t>(j)],
                            m_bits);
            PutLowBitVector(&w, scales, codes, m_bits);
        }
        else
        {
            PutLowBitVector(&w, scales, codes, m_bits);
            PutLowBitVector(&w, b_scales[static_cast<size_t>(j)], b_codes[static_cast<size_t>(j)],
                            m_bits);
        }
    }
}

StatusOr<Encoded>
SparqCompressor::Encode(const std::vector<float>& x, int64_t budget_bytes)
{
    HILO_RETURN_IF_ERROR(m_spectra.CheckEncode(x, budget_bytes, m_min_bytes, "sparq"));
    Encoded e;
    try
    {
        StatusOr<const AllocationHints*> hints = m_policy.Hints(x, "sparq");
        if (!hints.ok())
        {
            return hints.status();
        }
        StatusOr<SpectralPlan> plan =
            m_spectra.Plan(x, m_triplet_bytes, budget_bytes - m_header_bytes, m_min_rank,
                           SparAllocation::kGreedy, "sparq", *hints);
        if (!plan.ok())
        {
            return plan.status();
        }
        const std::vector<std::string> coded =
            m_spectra.CodeAll(*plan, [&](size_t i, int64_t k, const MatrixSpectrum& sp,
                                         std::string* out) { CodeTriplets(x, i, k, sp, out); });
        ByteWriter w(&e.payload);
        w.PutU8(static_cast<uint8_t>(m_bits));
        w.PutVarint(static_cast<uint64_t>(m_block));
        SpectralTruncation::PutRanksAndTriplets(&w, plan->ks, coded);
        m_policy.Commit(plan->ks);
        e.kept_per_matrix = plan->ks;
    }
    catch (const std::exception& ex)
    {
        return Status::Internal(std::string("sparq: LibTorch failed during encode: ") + ex.what());
    }
    return e;
}

Status
SparqCompressor::Decode(std::string_view payload, std::vector<float>* out) const
{
    ByteReader r(payload);
    uint8_t bits = 0;
    uint64_t block = 0;
    if (!r.GetU8(&bits) || bits != m_bits || !r.GetVarint(&block) ||
        block != static_cast<uint64_t>(m_block))
    {
        return Status::Corruption(
            "sparq: missing or wrong bits/block (configured bits=" + std::to_string(m_bits) +
            " block=" + std::to_string(m_block) + ")");
    }
    LowRankPayload p;
    HILO_RETURN_IF_ERROR(ReadLowRankRanks(
        &r, m_layout, "sparq", [this](const MatrixSpec& s) { return TripletBytes(s); }, &p));
    for (size_t i = 0; i < p.ks.size(); ++i)
    {
        const MatrixSpec& s = m_layout.matrix(i);
        for (int64_t j = 0; j < p.ks[i]; ++j)
        {
            if (!GetLowBitVector(&r, p.left.data() + p.left_at[i] + j * s.rows, s.rows, m_bits,
                                 m_block) ||
                !GetLowBitVector(&r, p.right.data() + p.right_at[i] + j * s.cols, s.cols, m_bits,
                                 m_block))
            {
                return Status::Corruption("sparq: triplet " + std::to_string(j) + " of matrix " +
                                          std::to_string(i) +
                                          " holds an invalid scale, code or padding");
            }
        }
    }
    if (!ReconstructLowRankPayload(p, m_layout, out))
    {
        return Status::Corruption("sparq: the reconstruction overflows (a value is not finite)");
    }
    return Status::Ok();
}

} // namespace

int64_t
LowBitVectorBytes(int64_t n, int bits, int64_t block)
{
    return 4 * NumBlocks(n, block) + (n * bits + 7) / 8;
}

StatusOr<std::unique_ptr<Compressor>>
NewSparqCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("sparq", options);
    const int64_t bits = r.Int("bits", 4, 2, 8);
    const int64_t block = r.Int("block", 0, 0, 65536);
    const int64_t min_rank = r.Int("min_rank", 0, 0, 1 << 20);
    AllocationPolicy policy(layout, &r, /*uniform_allowed=*/false);
    const int64_t sketch = r.Int("sketch", kDefaultSketchWidth, 0, 1 << 20);
    const bool warm = r.Bool("warm", DefaultWarm(sketch, /*screen=*/false));
    HILO_RETURN_IF_ERROR(r.Finish());
    HILO_RETURN_IF_ERROR(policy.Validate("sparq"));
    if (warm && sketch == 0)
    {
        return Status::InvalidArgument("sparq: option warm=true needs a sketch (sketch=4 or more)");
    }
    if (sketch != 0 && sketch < 4)
    {
        return Status::InvalidArgument("sparq: option sketch=" + std::to_string(sketch) +
                                       " is not allowed (0 for exact spectra, or >= 4)");
    }
    if (block != 0 && block < 8)
    {
        return Status::InvalidArgument("sparq: option block=" + std::to_string(block) +
                                       " is not allowed (0 for one scale per vector, or 8..65536)");
    }
    return std::unique_ptr<Compressor>(new SparqCompressor(
        layout, static_cast<int>(bits), block, min_rank, std::move(policy), sketch, warm));
}

} // namespace hilo
