#include "hilo/compress/sparq.h"

#include "hilo/compress/factor-coding.h"
#include "hilo/compress/spar.h"
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
                const double q = std::min<double>(
                    levels, std::max<double>(-levels, std::nearbyint(x[i] / scale)));
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
                q = static_cast<int>(std::min<double>(
                    levels, std::max<double>(-levels, std::nearbyint(x[i] / best_scale))));
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

class SparqCompressor : public Compressor
{
  public:
    SparqCompressor(const AdapterLayout& layout, int bits, int64_t block, int64_t min_rank)
      : m_layout(layout)
      , m_bits(bits)
      , m_block(block)
      , m_min_rank(min_rank)
    {
        m_header_bytes =
            1 + VarintLength(static_cast<uint64_t>(block)) + VarintLength(layout.size());
        for (const MatrixSpec& s : layout.matrices())
        {
            const int64_t m = std::min(s.rows, s.cols);
            m_header_bytes += VarintLength(static_cast<uint64_t>(m));
            m_min_bytes += std::min(m_min_rank, m) * TripletBytes(s);
        }
        m_min_bytes += m_header_bytes;
    }

    std::string Name() const override { return "sparq-v1"; }
    std::string Params() const override
    {
        return FormatCompressorOptions({{"bits", std::to_string(m_bits)},
                                        {"block", std::to_string(m_block)},
                                        {"min_rank", std::to_string(m_min_rank)}});
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override { return m_min_bytes; }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override;
    Status Decode(std::string_view payload, std::vector<float>* out) const override;

  private:
    int64_t TripletBytes(const MatrixSpec& s) const
    {
        return LowBitVectorBytes(s.rows, m_bits, m_block) +
               LowBitVectorBytes(s.cols, m_bits, m_block);
    }

    AdapterLayout m_layout;
    int m_bits;
    int64_t m_block;
    int64_t m_min_rank;
    int64_t m_header_bytes{0};
    int64_t m_min_bytes{0};
};

StatusOr<Encoded>
SparqCompressor::Encode(const std::vector<float>& x, int64_t budget_bytes)
{
    if (static_cast<int64_t>(x.size()) != m_layout.numel())
    {
        return Status::InvalidArgument("sparq: input has " + std::to_string(x.size()) +
                                       " values, layout has " + std::to_string(m_layout.numel()));
    }
    if (budget_bytes < m_min_bytes)
    {
        return Status::BudgetTooSmall("sparq: budget " + std::to_string(budget_bytes) +
                                      " bytes is below the smallest payload (" +
                                      std::to_string(m_min_bytes) + " bytes)");
    }
    Encoded e;
    try
    {
        const size_t n = m_layout.size();
        std::vector<SparCandidates> cands(n);
        std::vector<at::Tensor> mats(n);
        std::vector<at::Tensor> bases(n); // m x m eigenvectors, ascending eigenvalues
        for (size_t i = 0; i < n; ++i)
        {
            const MatrixSpec& s = m_layout.matrix(i);
            mats[i] = at::from_blob(const_cast<float*>(x.data()) + m_layout.offset(i),
                                    {s.rows, s.cols}, at::kFloat)
                          .to(at::kDouble);
            if (!at::isfinite(mats[i]).all().item<bool>())
            {
                return Status::InvalidArgument("sparq: the input holds non-finite values");
            }
            const at::Tensor& xi = mats[i];
            at::Tensor gram = s.rows <= s.cols ? at::mm(xi, xi.t()) : at::mm(xi.t(), xi);
            auto [evals, evecs] = at::linalg_eigh(gram);
            const int64_t m = evals.size(0);
            evals = evals.contiguous();
            const double* ev = evals.data_ptr<double>();
            cands[i].cost = TripletBytes(s);
            cands[i].gains.resize(static_cast<size_t>(m));
            for (int64_t j = 0; j < m; ++j)
            {
                cands[i].gains[static_cast<size_t>(j)] = std::max(0.0, ev[m - 1 - j]);
            }
            bases[i] = evecs;
        }
        StatusOr<std::vector<int64_t>> alloc =
            SparAllocate(cands, budget_bytes - m_header_bytes, m_min_rank, SparAllocation::kGreedy);
        if (!alloc.ok())
        {
            return alloc.status();
        }
        const std::vector<int64_t>& ks = *alloc;

        ByteWriter w(&e.payload);
        w.PutU8(static_cast<uint8_t>(m_bits));
        w.PutVarint(static_cast<uint64_t>(m_block));
        w.PutVarint(n);
        for (int64_t k : ks)
        {
            w.PutVarint(static_cast<uint64_t>(k));
        }
        std::vector<float> scales;
        std::vector<int> codes;
        for (size_t i = 0; i < n; ++i)
        {
            const int64_t k = ks[i];
            if (k == 0)
            {
                continue;
            }
            const MatrixSpec& s = m_layout.matrix(i);
            const bool left_basis = s.rows <= s.cols; // eigenvectors are u (else v)
            const int64_t m = std::min(s.rows, s.cols);
            const int64_t olen = left_basis ? s.cols : s.rows;
            at::Tensor residual = mats[i].clone();
            at::Tensor bq = at::empty({m}, at::kFloat);
            at::Tensor oq = at::empty({olen}, at::kFloat);
            for (int64_t j = 0; j < k; ++j)
            {
                at::Tensor b = bases[i].select(1, m - 1 - j).contiguous();
                Quantize(b.data_ptr<double>(), m, m_bits, m_block, &scales, &codes,
                         bq.data_ptr<float>());
                std::vector<float> b_scales = scales;
                std::vector<int> b_codes = codes;
                at::Tensor bd = bq.to(at::kDouble);
                const double bn2 = at::dot(bd, bd).item<double>();
                at::Tensor other = left_basis ? at::mv(residual.t(), bd) : at::mv(residual, bd);
                if (bn2 > 0.0)
                {
                    other = (other / bn2).contiguous();
                }
                else
                {
                    other = at::zeros({olen}, at::kDouble);
                }
                Quantize(other.data_ptr<double>(), olen, m_bits, m_block, &scales, &codes,
                         oq.data_ptr<float>());
                at::Tensor od = oq.to(at::kDouble);
                if (left_basis)
                {
                    residual -= at::outer(bd, od);
                    PutLowBitVector(&w, b_scales, b_codes, m_bits);
                    PutLowBitVector(&w, scales, codes, m_bits);
                }
                else
                {
                    residual -= at::outer(od, bd);
                    PutLowBitVector(&w, scales, codes, m_bits);
                    PutLowBitVector(&w, b_scales, b_codes, m_bits);
                }
            }
        }
        e.kept_per_matrix = ks;
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
    HILO_RETURN_IF_ERROR(r.Finish());
    if (block != 0 && block < 8)
    {
        return Status::InvalidArgument("sparq: option block=" + std::to_string(block) +
                                       " is not allowed (0 for one scale per vector, or 8..65536)");
    }
    return std::unique_ptr<Compressor>(
        new SparqCompressor(layout, static_cast<int>(bits), block, min_rank));
}

} // namespace hilo
