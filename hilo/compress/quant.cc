#include "hilo/compress/quant.h"

#include "hilo/compress/counter-rng.h"
#include "hilo/core/coding.h"
#include "hilo/core/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hilo
{
namespace
{

class QuantCompressor : public Compressor
{
  public:
    QuantCompressor(const AdapterLayout& layout, bool int8, int levels, bool l2, int64_t block,
                    uint64_t seed)
      : m_layout(layout)
      , m_int8(int8)
      , m_levels(levels)
      , m_l2(l2)
      , m_block(block)
      , m_seed(seed)
      , m_seeds(seed)
    {
        for (size_t i = 0; i < layout.size(); ++i)
        {
            m_block_start.push_back(m_blocks);
            m_blocks += (layout.matrix(i).numel() + block - 1) / block;
        }
        m_header_bytes = 3 + VarintLength(static_cast<uint64_t>(block));
    }

    std::string Name() const override { return "quant-v1"; }
    std::string Params() const override
    {
        if (m_int8)
        {
            return FormatCompressorOptions(
                {{"block", std::to_string(m_block)}, {"scheme", "int8"}});
        }
        return FormatCompressorOptions({{"block", std::to_string(m_block)},
                                        {"levels", std::to_string(m_levels)},
                                        {"norm", m_l2 ? "l2" : "max"},
                                        {"scheme", "qsgd"},
                                        {"seed", std::to_string(m_seed)}});
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override
    {
        return m_header_bytes + 4 * m_blocks + CodeBytes(m_layout.numel());
    }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override;
    Status Decode(std::string_view payload, std::vector<float>* out) const override;

    std::string SaveLocalState() const override
    {
        std::string out;
        ByteWriter(&out).PutU64(m_seeds.counter());
        return out;
    }
    Status RestoreLocalState(std::string_view state) override
    {
        ByteReader r(state);
        uint64_t counter = 0;
        if (!r.GetU64(&counter) || !r.empty())
        {
            return Status::Corruption("quant: local state is not one 8-byte stream position");
        }
        m_seeds.set_counter(counter);
        return Status::Ok();
    }

  private:
    int64_t CodeBytes(int64_t n) const
    {
        switch (m_levels)
        {
            case 1:
                return (n + 4) / 5;
            case 7:
                return (n + 1) / 2;
            default:
                return n;
        }
    }
    /// Calls f(begin, end, block_index) for every block of every matrix, in parallel.
    template<typename F>
    void ForEachBlock(F f) const
    {
        ParallelFor(0, m_blocks, 16,
                    [&](int64_t b, int64_t e)
                    {
                        size_t mat = static_cast<size_t>(
                            std::upper_bound(m_block_start.begin(), m_block_start.end(), b) -
                            m_block_start.begin() - 1);
                        for (int64_t blk = b; blk < e; ++blk)
                        {
                            while (mat + 1 < m_block_start.size() && blk >= m_block_start[mat + 1])
                            {
                                ++mat;
                            }
                            const int64_t local = (blk - m_block_start[mat]) * m_block;
                            const int64_t begin = m_layout.offset(mat) + local;
                            const int64_t end =
                                m_layout.offset(mat) +
                                std::min(local + m_block, m_layout.matrix(mat).numel());
                            f(begin, end, blk);
                        }
                    });
    }

    AdapterLayout m_layout;
    bool m_int8;
    int m_levels;
    bool m_l2;
    int64_t m_block;
    uint64_t m_seed;
    CounterRng m_seeds;                 // learner-local: one rounding stream per Encode
    std::vector<int64_t> m_block_start; // first block of each matrix
    int64_t m_blocks{0};
    int64_t m_header_bytes{0};
    std::vector<int8_t> m_codes; // scratch
};

StatusOr<Encoded>
QuantCompressor::Encode(const std::vector<float>& x, int64_t budget_bytes)
{
    const int64_t n = m_layout.numel();
    if (static_cast<int64_t>(x.size()) != n)
    {
        return Status::InvalidArgument("quant: input has " + std::to_string(x.size()) +
                                       " values, layout has " + std::to_string(n));
    }
    if (budget_bytes < MinPayloadBytes())
    {
        return Status::BudgetTooSmall("quant: budget " + std::to_string(budget_bytes) +
                                      " bytes is below its fixed payload (" +
                                      std::to_string(MinPayloadBytes()) + " bytes)");
    }
    const uint64_t seed = m_seeds.Next();
    const float s = static_cast<float>(m_levels);
    std::vector<float> scales(static_cast<size_t>(m_blocks));
    m_codes.resize(static_cast<size_t>(n));
    std::vector<char> bad(static_cast<size_t>(m_blocks), 0);
    // Locals, not members: the int8 code stores may alias any memory, so the compiler would
    // otherwise reload every member and pointer for each element.
    const float* xp = x.data();
    int8_t* codes = m_codes.data();
    const bool int8 = m_int8;
    const bool l2 = m_l2;
    ForEachBlock(
        [&](int64_t begin, int64_t end, int64_t blk)
        {
            const float* in = xp;
            int8_t* out = codes;
            const float smax = s;
            const uint64_t sd = seed;
            const bool is_int8 = int8;
            double acc = 0.0;
            float absmax = 0.0f;
            for (int64_t t = begin; t < end; ++t)
            {
                absmax = std::max(absmax, std::fabs(in[t]));
                acc += static_cast<double>(in[t]) * in[t];
            }
            const float scale = l2 ? static_cast<float>(std::sqrt(acc)) : absmax;
            scales[static_cast<size_t>(blk)] = scale;
            bad[static_cast<size_t>(blk)] =
                !std::isfinite(acc) || !std::isfinite(scale); // NaN, Inf
            const float inv = scale > 0.0f ? smax / scale : 0.0f;
            for (int64_t t = begin; t < end; ++t)
            {
                const float a = std::min(smax, std::fabs(in[t]) * inv);
                float level;
                if (is_int8)
                {
                    level = std::nearbyint(a);
                }
                else
                {
                    level = std::floor(a);
                    if (CounterUniform(sd, static_cast<uint64_t>(t)) < a - level)
                        level += 1.0f;
                }
                level = std::min(level, smax);
                const int q = static_cast<int>(level);
                out[t] = static_cast<int8_t>(in[t] < 0.0f ? -q : q);
            }
        });
    for (char b : bad)
    {
        if (b)
            return Status::InvalidArgument("quant: the input holds non-finite values");
    }
    Encoded e;
    e.payload.reserve(static_cast<size_t>(MinPayloadBytes()));
    ByteWriter w(&e.payload);
    w.PutU8(m_int8 ? 1 : 0);
    w.PutU8(static_cast<uint8_t>(m_levels));
    w.PutU8(m_l2 ? 1 : 0);
    w.PutVarint(static_cast<uint64_t>(m_block));
    w.PutFloats(scales.data(), scales.size(), ValueDtype::kFp32);
    const size_t start = e.payload.size();
    const int64_t nbytes = CodeBytes(n);
    e.payload.resize(start + static_cast<size_t>(nbytes));
    auto* p = reinterpret_cast<unsigned char*>(&e.payload[start]);
    const int8_t* q = m_codes.data();
    ParallelFor(
        0, nbytes, 1 << 16,
        [&](int64_t b, int64_t end)
        {
            for (int64_t byte = b; byte < end; ++byte)
            {
                unsigned v = 0;
                if (m_levels == 1)
                {
                    for (int64_t t = byte * 5 + 4; t >= byte * 5; --t)
                        v = v * 3 + (t < n ? static_cast<unsigned>(q[t] + 1) : 1u); // pad: zero
                }
                else if (m_levels == 7)
                {
                    v = static_cast<unsigned>(q[2 * byte] + 7);
                    v |= (2 * byte + 1 < n ? static_cast<unsigned>(q[2 * byte + 1] + 7) : 7u) << 4;
                }
                else
                {
                    v = static_cast<unsigned char>(q[byte]);
                }
                p[byte] = static_cast<unsigned char>(v);
            }
        });
    e.kept_per_matrix.clear();
    return e;
}

Status
QuantCompressor::Decode(std::string_view payload, std::vector<float>* out) const
{
    const int64_t n = m_layout.numel();
    ByteReader r(payload);
    uint8_t scheme = 0;
    uint8_t levels = 0;
    uint8_t norm = 0;
    uint64_t block = 0;
    if (!r.GetU8(&scheme) || !r.GetU8(&levels) || !r.GetU8(&norm) || !r.GetVarint(&block) ||
        scheme != (m_int8 ? 1 : 0) || levels != m_levels || norm != (m_l2 ? 1 : 0) ||
        block != static_cast<uint64_t>(m_block))
    {
        return Status::Corruption("quant: header is truncated or differs from the options");
    }
    if (static_cast<int64_t>(r.remaining()) != 4 * m_blocks + CodeBytes(n))
    {
        return Status::Corruption("quant: payload holds " + std::to_string(r.remaining()) +
                                  " bytes after the header, expected " +
                                  std::to_string(4 * m_blocks + CodeBytes(n)));
    }
    std::vector<float> steps(static_cast<size_t>(m_blocks));
    r.GetFloats(steps.data(), steps.size(), ValueDtype::kFp32);
    const float s = static_cast<float>(m_levels);
    for (float& v : steps)
    {
        if (!std::isfinite(v) || v < 0.0f)
        {
            return Status::Corruption("quant: a block scale is negative or not finite");
        }
        v = v / s;
        // Codes satisfy |q| <= levels and rounding is monotone: every q * step is finite iff
        // levels * step is.
        if (!std::isfinite(s * v))
        {
            return Status::Corruption("quant: a block scale overflows when applied to its codes");
        }
    }
    std::string_view codes;
    r.GetBytes(r.remaining(), &codes);
    const auto* p = reinterpret_cast<const unsigned char*>(codes.data());
    out->resize(static_cast<size_t>(n));
    float* o = out->data();
    std::vector<char> bad(static_cast<size_t>(m_blocks), 0);
    ForEachBlock(
        [&](int64_t begin, int64_t end, int64_t blk)
        {
            const float step = steps[static_cast<size_t>(blk)];
            bool ok = true;
            for (int64_t t = begin; t < end; ++t)
            {
                int q;
                if (m_levels == 1)
                {
                    unsigned byte = p[t / 5];
                    ok &= byte < 243;
                    for (int64_t d = t % 5; d > 0; --d)
                        byte /= 3;
                    q = static_cast<int>(byte % 3) - 1;
                }
                else if (m_levels == 7)
                {
                    const unsigned nib = (p[t >> 1] >> (4 * (t & 1))) & 0xfu;
                    ok &= nib != 15;
                    q = static_cast<int>(nib) - 7;
                }
                else
                {
                    q = static_cast<int8_t>(p[t]);
                    ok &= q != -128;
                }
                o[t] = static_cast<float>(q) * step;
            }
            bad[static_cast<size_t>(blk)] = !ok;
        });
    for (char b : bad)
    {
        if (b)
            return Status::Corruption("quant: a code is outside its range");
    }
    return Status::Ok();
}

} // namespace

StatusOr<std::unique_ptr<Compressor>>
NewQuantCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("quant", options);
    std::string scheme = r.Choice("scheme", "qsgd", {"qsgd", "int8"});
    int64_t block = r.Int("block", 1024, 1, int64_t{1} << 30);
    int64_t levels = 127;
    std::string norm = "max";
    int64_t seed = 1;
    if (scheme == "qsgd")
    {
        levels = r.Int("levels", 1, 1, 127);
        norm = r.Choice("norm", "max", {"max", "l2"});
        seed = r.Int("seed", 1, 0, INT64_MAX);
        if (levels != 1 && levels != 7 && levels != 127)
        {
            return Status::InvalidArgument("quant option 'levels': " + std::to_string(levels) +
                                           " is not one of: 1, 7, 127");
        }
    }
    HILO_RETURN_IF_ERROR(r.Finish());
    return std::unique_ptr<Compressor>(new QuantCompressor(layout, scheme == "int8",
                                                           static_cast<int>(levels), norm == "l2",
                                                           block, static_cast<uint64_t>(seed)));
}

} // namespace hilo
