#include "hilo/compress/topk.h"

#include "hilo/compress/elias-fano.h"
#include "hilo/core/coding.h"
#include "hilo/core/parallel.h"

#include <algorithm>
#include <cmath>

namespace hilo
{
namespace
{

inline uint32_t
MagnitudeKey(float f)
{
    return FloatBits(f) & 0x7fffffffu;
}

/// Splits [0, n) into `parts` contiguous ranges (fixed, so results never depend on threads).
/// Loops take both ends once: inside a parallel lambda the compiler cannot prove that stores
/// through the output pointers leave the captured n unchanged, and would redo this 128-bit
/// division for every element.
inline int64_t
PartBegin(int64_t n, int64_t parts, int64_t p)
{
    return static_cast<int64_t>(static_cast<unsigned __int128>(n) * p / parts);
}

bool
AllFinite(const float* x, int64_t n)
{
    bool ok = true;
    std::vector<char> part_ok(16, 1);
    ParallelFor(0, 16, 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t p = b; p < e; ++p)
                    {
                        uint32_t worst = 0;
                        for (int64_t i = PartBegin(n, 16, p), stop = PartBegin(n, 16, p + 1);
                             i < stop; ++i)
                        {
                            worst = std::max(worst, MagnitudeKey(x[i]));
                        }
                        part_ok[static_cast<size_t>(p)] = worst < 0x7f800000u;
                    }
                });
    for (char c : part_ok)
    {
        ok &= c != 0;
    }
    return ok;
}

class TopKCompressor : public Compressor
{
  public:
    TopKCompressor(const AdapterLayout& layout, ValueDtype dtype, bool per_matrix)
      : m_layout(layout)
      , m_dtype(dtype)
      , m_per_matrix(per_matrix)
    {
    }

    std::string Name() const override { return "topk-v1"; }
    std::string Params() const override
    {
        return FormatCompressorOptions({{"dtype", ValueDtypeName(m_dtype)},
                                        {"scope", m_per_matrix ? "per_matrix" : "global"}});
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override { return PayloadBytes(0); }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override;
    Status Decode(std::string_view payload, std::vector<float>* out) const override;

  private:
    int64_t MatrixK(int64_t big_k, size_t i) const
    {
        return static_cast<int64_t>(static_cast<unsigned __int128>(big_k) *
                                    m_layout.matrix(i).numel() / m_layout.numel());
    }
    static int64_t IndexBytes(int64_t k, int64_t n)
    {
        return VarintLength(static_cast<uint64_t>(k)) +
               EliasFanoBytes(k, n, EliasFanoBestLowBits(k, n));
    }
    /// Payload bytes for k (global) or K (per matrix).
    int64_t PayloadBytes(int64_t k) const
    {
        const int64_t bpv = BytesPerValue(m_dtype);
        if (!m_per_matrix)
        {
            return 2 + IndexBytes(k, m_layout.numel()) + k * bpv;
        }
        int64_t total = 2;
        for (size_t i = 0; i < m_layout.size(); ++i)
        {
            const int64_t ki = MatrixK(k, i);
            total += IndexBytes(ki, m_layout.matrix(i).numel()) + ki * bpv;
        }
        return total;
    }

    AdapterLayout m_layout;
    ValueDtype m_dtype;
    bool m_per_matrix;
    std::vector<int64_t> m_indices; // scratch
    std::vector<float> m_values;    // scratch
};

StatusOr<Encoded>
TopKCompressor::Encode(const std::vector<float>& x, int64_t budget_bytes)
{
    const int64_t n = m_layout.numel();
    if (static_cast<int64_t>(x.size()) != n)
    {
        return Status::InvalidArgument("topk: input has " + std::to_string(x.size()) +
                                       " values, layout has " + std::to_string(n));
    }
    if (budget_bytes < MinPayloadBytes())
    {
        return Status::BudgetTooSmall("topk: budget " + std::to_string(budget_bytes) +
                                      " bytes is below the smallest payload (" +
                                      std::to_string(MinPayloadBytes()) + " bytes)");
    }
    if (!AllFinite(x.data(), n))
    {
        return Status::InvalidArgument("topk: the input holds non-finite values");
    }
    // The largest k (or K) that fits: PayloadBytes is non-decreasing in it.
    int64_t lo = 0;
    int64_t hi = n;
    while (lo < hi)
    {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (PayloadBytes(mid) <= budget_bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    const int64_t k = lo;

    Encoded e;
    e.payload.reserve(static_cast<size_t>(PayloadBytes(k)));
    ByteWriter w(&e.payload);
    w.PutU8(static_cast<uint8_t>(m_dtype));
    w.PutU8(m_per_matrix ? 1 : 0);
    m_values.clear();
    e.kept_per_matrix.assign(m_layout.size(), 0);
    if (!m_per_matrix)
    {
        SelectLargestMagnitudes(x.data(), n, k, &m_indices);
        w.PutVarint(static_cast<uint64_t>(k));
        PutEliasFano(&w, m_indices.data(), k, n, EliasFanoBestLowBits(k, n));
        m_values.resize(static_cast<size_t>(k));
        size_t mat = 0;
        for (int64_t t = 0; t < k; ++t)
        {
            const int64_t idx = m_indices[static_cast<size_t>(t)];
            m_values[static_cast<size_t>(t)] = x[static_cast<size_t>(idx)];
            while (mat + 1 < m_layout.size() && idx >= m_layout.offset(mat + 1))
            {
                ++mat;
            }
            ++e.kept_per_matrix[mat];
        }
    }
    else
    {
        // One matrix per intra-op task (its selection then runs on that thread alone), each
        // coded into a buffer of its own; concatenated in layout order. One thread hand-off per
        // encode instead of several per matrix.
        const size_t nmat = m_layout.size();
        std::vector<std::string> coded(nmat);
        std::vector<std::vector<float>> values(nmat);
        ParallelFor(0, static_cast<int64_t>(nmat), 1,
                    [&](int64_t b, int64_t end)
                    {
                        std::vector<int64_t> indices;
                        for (int64_t t = b; t < end; ++t)
                        {
                            const size_t i = static_cast<size_t>(t);
                            const int64_t ni = m_layout.matrix(i).numel();
                            const int64_t ki = MatrixK(k, i);
                            const float* xi = x.data() + m_layout.offset(i);
                            SelectLargestMagnitudes(xi, ni, ki, &indices);
                            ByteWriter wi(&coded[i]);
                            wi.PutVarint(static_cast<uint64_t>(ki));
                            PutEliasFano(&wi, indices.data(), ki, ni, EliasFanoBestLowBits(ki, ni));
                            values[i].reserve(indices.size());
                            for (int64_t idx : indices)
                            {
                                values[i].push_back(xi[idx]);
                            }
                            e.kept_per_matrix[i] = ki;
                        }
                    });
        for (size_t i = 0; i < nmat; ++i)
        {
            w.PutBytes(coded[i].data(), coded[i].size());
            m_values.insert(m_values.end(), values[i].begin(), values[i].end());
        }
    }
    w.PutFloats(m_values.data(), m_values.size(), m_dtype);
    return e;
}

Status
TopKCompressor::Decode(std::string_view payload, std::vector<float>* out) const
{
    const int64_t n = m_layout.numel();
    ByteReader r(payload);
    uint8_t dtype = 0;
    uint8_t scope = 0;
    if (!r.GetU8(&dtype) || dtype != static_cast<uint8_t>(m_dtype))
    {
        return Status::Corruption("topk: missing or wrong value dtype (configured " +
                                  std::string(ValueDtypeName(m_dtype)) + ")");
    }
    if (!r.GetU8(&scope) || scope != (m_per_matrix ? 1 : 0))
    {
        return Status::Corruption("topk: missing or wrong scope byte");
    }
    std::vector<int64_t> all;
    std::vector<int64_t> part;
    const size_t nmat = m_per_matrix ? m_layout.size() : 1;
    for (size_t i = 0; i < nmat; ++i)
    {
        const int64_t ni = m_per_matrix ? m_layout.matrix(i).numel() : n;
        const int64_t base = m_per_matrix ? m_layout.offset(i) : 0;
        uint64_t k = 0;
        // The count must fit the bytes left (its index bits and every value so far) before the
        // index vector is sized by it.
        if (!r.GetVarint(&k) || k > static_cast<uint64_t>(ni) ||
            r.remaining() < (all.size() + k) * BytesPerValue(m_dtype) + MinEliasFanoBytes(k) ||
            !GetEliasFano(&r, static_cast<int64_t>(k), ni, m_per_matrix ? &part : &all))
        {
            return Status::Corruption("topk: index block " + std::to_string(i) +
                                      " is truncated, inconsistent or larger than its matrix");
        }
        if (m_per_matrix)
        {
            for (int64_t idx : part)
            {
                all.push_back(base + idx);
            }
        }
    }
    const size_t k = all.size();
    const size_t bpv = static_cast<size_t>(BytesPerValue(m_dtype));
    if (r.remaining() != k * bpv)
    {
        return Status::Corruption("topk: payload holds " + std::to_string(r.remaining()) +
                                  " value bytes, expected " + std::to_string(k * bpv));
    }
    std::vector<float> values(k);
    r.GetFloats(values.data(), k, m_dtype);
    for (float v : values)
    {
        if (!std::isfinite(v))
        {
            return Status::Corruption("topk: a kept value is not finite");
        }
    }
    out->resize(static_cast<size_t>(n));
    float* o = out->data();
    ParallelFor(0, n, 1 << 16, [&](int64_t b, int64_t e) { std::fill(o + b, o + e, 0.0f); });
    const int64_t* idx = all.data();
    const float* val = values.data();
    ParallelFor(0, static_cast<int64_t>(k), 1 << 16,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t t = b; t < e; ++t)
                    {
                        o[idx[t]] = val[t];
                    }
                });
    return Status::Ok();
}

} // namespace

void
SelectLargestMagnitudes(const float* x, int64_t n, int64_t k, std::vector<int64_t>* out)
{
    out->clear();
    if (k <= 0)
    {
        return;
    }
    if (k >= n)
    {
        out->resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
            (*out)[static_cast<size_t>(i)] = i;
        return;
    }
    // Fixed parts: the work split never depends on the thread count.
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(16, n >> 18));
    constexpr int kHiBits = 16;
    constexpr int kLoBits = 15; // key = 31 magnitude bits = hi (16) | lo (15)
    // Pass 1: histogram of the high 16 bits of the key.
    std::vector<std::vector<int64_t>> hist(static_cast<size_t>(parts));
    ParallelFor(0, parts, 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t p = b; p < e; ++p)
                    {
                        std::vector<int64_t>& h = hist[static_cast<size_t>(p)];
                        h.assign(size_t{1} << kHiBits, 0);
                        for (int64_t i = PartBegin(n, parts, p), stop = PartBegin(n, parts, p + 1);
                             i < stop; ++i)
                        {
                            ++h[MagnitudeKey(x[i]) >> kLoBits];
                        }
                    }
                });
    int64_t above = 0;
    uint32_t hi_bucket = 0;
    for (int64_t bkt = (int64_t{1} << kHiBits) - 1; bkt >= 0; --bkt)
    {
        int64_t c = 0;
        for (const auto& h : hist)
            c += h[static_cast<size_t>(bkt)];
        if (above + c >= k)
        {
            hi_bucket = static_cast<uint32_t>(bkt);
            break;
        }
        above += c;
    }
    // Pass 2: histogram of the low bits within that bucket.
    ParallelFor(0, parts, 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t p = b; p < e; ++p)
                    {
                        std::vector<int64_t>& h = hist[static_cast<size_t>(p)];
                        h.assign(size_t{1} << kLoBits, 0);
                        for (int64_t i = PartBegin(n, parts, p), stop = PartBegin(n, parts, p + 1);
                             i < stop; ++i)
                        {
                            const uint32_t key = MagnitudeKey(x[i]);
                            if ((key >> kLoBits) == hi_bucket)
                                ++h[key & ((1u << kLoBits) - 1)];
                        }
                    }
                });
    uint32_t threshold = 0;
    for (int64_t bkt = (int64_t{1} << kLoBits) - 1; bkt >= 0; --bkt)
    {
        int64_t c = 0;
        for (const auto& h : hist)
            c += h[static_cast<size_t>(bkt)];
        if (above + c >= k)
        {
            threshold = (hi_bucket << kLoBits) | static_cast<uint32_t>(bkt);
            break;
        }
        above += c;
    }
    // `above` entries are strictly larger than the threshold; take k - above equal ones, lowest
    // index first. Pass 3 counts per part, pass 4 writes.
    std::vector<int64_t> greater(static_cast<size_t>(parts), 0);
    std::vector<int64_t> equal(static_cast<size_t>(parts), 0);
    ParallelFor(0, parts, 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t p = b; p < e; ++p)
                    {
                        int64_t g = 0;
                        int64_t q = 0;
                        for (int64_t i = PartBegin(n, parts, p), stop = PartBegin(n, parts, p + 1);
                             i < stop; ++i)
                        {
                            const uint32_t key = MagnitudeKey(x[i]);
                            g += key > threshold;
                            q += key == threshold;
                        }
                        greater[static_cast<size_t>(p)] = g;
                        equal[static_cast<size_t>(p)] = q;
                    }
                });
    std::vector<int64_t> take_equal(static_cast<size_t>(parts), 0);
    std::vector<int64_t> start(static_cast<size_t>(parts), 0);
    int64_t need = k - above;
    int64_t pos = 0;
    for (size_t p = 0; p < static_cast<size_t>(parts); ++p)
    {
        take_equal[p] = std::min(equal[p], need);
        need -= take_equal[p];
        start[p] = pos;
        pos += greater[p] + take_equal[p];
    }
    out->resize(static_cast<size_t>(pos));
    int64_t* o = out->data();
    ParallelFor(0, parts, 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t p = b; p < e; ++p)
                    {
                        int64_t w = start[static_cast<size_t>(p)];
                        int64_t eq_left = take_equal[static_cast<size_t>(p)];
                        for (int64_t i = PartBegin(n, parts, p), stop = PartBegin(n, parts, p + 1);
                             i < stop; ++i)
                        {
                            const uint32_t key = MagnitudeKey(x[i]);
                            if (key > threshold || (key == threshold && eq_left > 0))
                            {
                                eq_left -= key == threshold;
                                o[w++] = i;
                            }
                        }
                    }
                });
}

StatusOr<std::unique_ptr<Compressor>>
NewTopKCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("topk", options);
    ValueDtype dtype = r.Dtype("dtype", ValueDtype::kBf16,
                               {ValueDtype::kFp32, ValueDtype::kBf16, ValueDtype::kFp16});
    std::string scope = r.Choice("scope", "global", {"global", "per_matrix"});
    HILO_RETURN_IF_ERROR(r.Finish());
    return std::unique_ptr<Compressor>(new TopKCompressor(layout, dtype, scope == "per_matrix"));
}

} // namespace hilo
