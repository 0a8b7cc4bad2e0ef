#include "hilo/compress/randk.h"

#include "hilo/compress/counter-rng.h"
#include "hilo/core/coding.h"
#include "hilo/core/parallel.h"

#include <algorithm>
#include <cmath>

namespace hilo
{
namespace
{

class RandKCompressor : public Compressor
{
  public:
    RandKCompressor(const AdapterLayout& layout, ValueDtype dtype, uint64_t seed, bool unbiased)
      : m_layout(layout)
      , m_dtype(dtype)
      , m_seed(seed)
      , m_unbiased(unbiased)
      , m_seeds(seed)
    {
    }

    std::string Name() const override { return "randk-v1"; }
    std::string Params() const override
    {
        return FormatCompressorOptions({{"dtype", ValueDtypeName(m_dtype)},
                                        {"seed", std::to_string(m_seed)},
                                        {"unbiased", m_unbiased ? "true" : "false"}});
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override { return PayloadBytes(0); }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override
    {
        const int64_t n = m_layout.numel();
        if (static_cast<int64_t>(x.size()) != n)
        {
            return Status::InvalidArgument("randk: input has " + std::to_string(x.size()) +
                                           " values, layout has " + std::to_string(n));
        }
        if (budget_bytes < MinPayloadBytes())
        {
            return Status::BudgetTooSmall("randk: budget " + std::to_string(budget_bytes) +
                                          " bytes is below the smallest payload (" +
                                          std::to_string(MinPayloadBytes()) + " bytes)");
        }
        int64_t k = std::min<int64_t>(n, (budget_bytes - PayloadBytes(0)) / BytesPerValue(m_dtype));
        while (k > 0 && PayloadBytes(k) > budget_bytes)
        {
            --k;
        }
        const uint64_t seed = m_seeds.Next();
        std::vector<float> values(static_cast<size_t>(k));
        bool finite = true;
        for (int64_t j = 0; j < k; ++j)
        {
            const float v = x[static_cast<size_t>(RandKIndex(seed, j, k, n))];
            finite &= std::isfinite(v);
            values[static_cast<size_t>(j)] = v;
        }
        if (!finite)
        {
            return Status::InvalidArgument("randk: a drawn input value is not finite");
        }
        Encoded e;
        e.payload.reserve(static_cast<size_t>(PayloadBytes(k)));
        ByteWriter w(&e.payload);
        w.PutU8(static_cast<uint8_t>(m_dtype));
        w.PutU8(m_unbiased ? 1 : 0);
        w.PutU64(seed);
        w.PutVarint(static_cast<uint64_t>(k));
        w.PutFloats(values.data(), values.size(), m_dtype);
        e.kept_per_matrix.assign(m_layout.size(), 0);
        for (size_t i = 0; i < m_layout.size(); ++i)
        {
            // Strata are contiguous, so the count inside a matrix follows from its bounds.
            const int64_t b = m_layout.offset(i);
            const int64_t end = b + m_layout.matrix(i).numel();
            e.kept_per_matrix[i] = CountBelow(seed, k, n, end) - CountBelow(seed, k, n, b);
        }
        return e;
    }

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
            return Status::Corruption("randk: local state is not one 8-byte stream position");
        }
        m_seeds.set_counter(counter);
        return Status::Ok();
    }

    Status Decode(std::string_view payload, std::vector<float>* out) const override
    {
        const int64_t n = m_layout.numel();
        ByteReader r(payload);
        uint8_t dtype = 0;
        uint8_t flags = 0;
        uint64_t seed = 0;
        uint64_t k = 0;
        if (!r.GetU8(&dtype) || dtype != static_cast<uint8_t>(m_dtype))
        {
            return Status::Corruption("randk: missing or wrong value dtype (configured " +
                                      std::string(ValueDtypeName(m_dtype)) + ")");
        }
        if (!r.GetU8(&flags) || flags != (m_unbiased ? 1 : 0) || !r.GetU64(&seed) ||
            !r.GetVarint(&k))
        {
            return Status::Corruption("randk: truncated header or flags differ from the options");
        }
        const size_t bpv = static_cast<size_t>(BytesPerValue(m_dtype));
        if (k > static_cast<uint64_t>(n) || r.remaining() != k * bpv)
        {
            return Status::Corruption("randk: k = " + std::to_string(k) +
                                      " is larger than the adapter or disagrees with the " +
                                      std::to_string(r.remaining()) + " value bytes");
        }
        std::vector<float> values(static_cast<size_t>(k));
        r.GetFloats(values.data(), values.size(), m_dtype);
        const float scale =
            m_unbiased && k > 0 ? static_cast<float>(static_cast<double>(n) / k) : 1.0f;
        for (float& v : values)
        {
            v = v * scale;
            if (!std::isfinite(v))
            {
                return Status::Corruption("randk: a value is not finite");
            }
        }
        out->resize(static_cast<size_t>(n));
        float* o = out->data();
        ParallelFor(0, n, 1 << 16, [&](int64_t b, int64_t e) { std::fill(o + b, o + e, 0.0f); });
        const int64_t kk = static_cast<int64_t>(k);
        ParallelFor(0, kk, 1 << 15,
                    [&](int64_t b, int64_t e)
                    {
                        for (int64_t j = b; j < e; ++j)
                        {
                            o[RandKIndex(seed, j, kk, n)] = values[static_cast<size_t>(j)];
                        }
                    });
        return Status::Ok();
    }

  private:
    int64_t PayloadBytes(int64_t k) const
    {
        return 2 + 8 + VarintLength(static_cast<uint64_t>(k)) + k * BytesPerValue(m_dtype);
    }
    /// Number of drawn indices below `bound` (indices are increasing in j): binary search.
    static int64_t CountBelow(uint64_t seed, int64_t k, int64_t n, int64_t bound)
    {
        int64_t lo = 0;
        int64_t hi = k;
        while (lo < hi)
        {
            const int64_t mid = lo + (hi - lo) / 2;
            if (RandKIndex(seed, mid, k, n) < bound)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }

    AdapterLayout m_layout;
    ValueDtype m_dtype;
    uint64_t m_seed;
    bool m_unbiased;
    CounterRng m_seeds; // learner-local: one fresh payload seed per Encode
};

} // namespace

int64_t
RandKIndex(uint64_t seed, int64_t j, int64_t k, int64_t n)
{
    using u128 = unsigned __int128;
    const int64_t lo = static_cast<int64_t>(static_cast<u128>(j) * n / k);
    const int64_t hi = static_cast<int64_t>(static_cast<u128>(j + 1) * n / k);
    const uint64_t width = static_cast<uint64_t>(hi - lo); // >= 1 because k <= n
    return lo + static_cast<int64_t>(CounterRandom(seed, static_cast<uint64_t>(j)) % width);
}

StatusOr<std::unique_ptr<Compressor>>
NewRandKCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("randk", options);
    ValueDtype dtype = r.Dtype("dtype", ValueDtype::kBf16,
                               {ValueDtype::kFp32, ValueDtype::kBf16, ValueDtype::kFp16});
    int64_t seed = r.Int("seed", 1, 0, INT64_MAX);
    bool unbiased = r.Bool("unbiased", false);
    HILO_RETURN_IF_ERROR(r.Finish());
    return std::unique_ptr<Compressor>(
        new RandKCompressor(layout, dtype, static_cast<uint64_t>(seed), unbiased));
}

} // namespace hilo
