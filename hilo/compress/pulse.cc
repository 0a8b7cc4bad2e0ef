#include "hilo/compress/pulse.h"

#include "hilo/compress/base-aware.h"
#include "hilo/compress/elias-fano.h"
#include "hilo/core/coding.h"

#include <cmath>

namespace hilo
{
namespace
{

class PulseCompressor : public BaseAwareCompressor
{
  public:
    explicit PulseCompressor(const AdapterLayout& layout)
      : m_layout(layout)
    {
    }

    std::string Name() const override { return "pulse-v1"; }
    std::string Params() const override { return ""; }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override
    {
        return 2 * (VarintLength(0) + EliasFanoBytes(0, m_layout.numel(), 0));
    }
    void SetBase(const std::vector<float>* base) override { m_base = base; }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override
    {
        const int64_t n = m_layout.numel();
        if (static_cast<int64_t>(x.size()) != n)
        {
            return Status::InvalidArgument("pulse: input has " + std::to_string(x.size()) +
                                           " values, layout has " + std::to_string(n));
        }
        if (m_base == nullptr || static_cast<int64_t>(m_base->size()) != n)
        {
            return Status::InvalidArgument("pulse: no base parameters set (it encodes against "
                                           "what the replicas hold; use strategy delta or primal)");
        }
        const std::vector<float>& w = *m_base;
        m_base = nullptr;
        m_idx16.clear();
        m_val16.clear();
        m_idx32.clear();
        m_val32.clear();
        for (int64_t i = 0; i < n; ++i)
        {
            const float target = RoundBf16(w[i] + x[i]);
            if (!std::isfinite(target))
            {
                return Status::InvalidArgument("pulse: non-finite parameter at index " +
                                               std::to_string(i));
            }
            const float d = target - w[i];
            if (FloatToBf16(target) == FloatToBf16(w[i]) || d == 0.0f)
            {
                continue; // the bf16 value did not change: nothing to ship
            }
            if (RoundBf16(d) == d)
            {
                m_idx16.push_back(i);
                m_val16.push_back(d);
            }
            else
            {
                m_idx32.push_back(i);
                m_val32.push_back(d);
            }
        }
        const int64_t k16 = static_cast<int64_t>(m_idx16.size());
        const int64_t k32 = static_cast<int64_t>(m_idx32.size());
        const int low16 = EliasFanoBestLowBits(k16, n);
        const int low32 = EliasFanoBestLowBits(k32, n);
        const int64_t bytes = VarintLength(static_cast<uint64_t>(k16)) +
                              EliasFanoBytes(k16, n, low16) +
                              VarintLength(static_cast<uint64_t>(k32)) +
                              EliasFanoBytes(k32, n, low32) + 2 * k16 + 4 * k32;
        if (bytes > budget_bytes)
        {
            return Status::BudgetTooSmall("pulse is lossless: " + std::to_string(k16 + k32) +
                                          " changed entries need " + std::to_string(bytes) +
                                          " bytes, budget " + std::to_string(budget_bytes) +
                                          " (leave the budget empty)");
        }
        Encoded e;
        e.payload.reserve(static_cast<size_t>(bytes));
        ByteWriter out(&e.payload);
        out.PutVarint(static_cast<uint64_t>(k16));
        PutEliasFano(&out, m_idx16.data(), k16, n, low16);
        out.PutVarint(static_cast<uint64_t>(k32));
        PutEliasFano(&out, m_idx32.data(), k32, n, low32);
        out.PutFloats(m_val16.data(), m_val16.size(), ValueDtype::kBf16);
        out.PutFloats(m_val32.data(), m_val32.size(), ValueDtype::kFp32);
        e.kept_per_matrix.assign(m_layout.size(), 0);
        for (const std::vector<int64_t>* set : {&m_idx16, &m_idx32})
        {
            size_t m = 0;
            for (int64_t i : *set)
            {
                while (i >= m_layout.offset(m) + m_layout.matrix(m).numel())
                {
                    ++m;
                }
                ++e.kept_per_matrix[m];
            }
        }
        return e;
    }

    Status Decode(std::string_view payload, std::vector<float>* out) const override
    {
        const int64_t n = m_layout.numel();
        ByteReader r(payload);
        uint64_t k16 = 0;
        uint64_t k32 = 0;
        std::vector<int64_t> idx16;
        std::vector<int64_t> idx32;
        // Every count is checked against the bytes left before anything is sized by it: k
        // entries need at least k / 8 bytes of Elias-Fano upper bits besides their values, so the
        // index vectors (8 bytes per entry) stay within a few times the payload's size.
        if (!r.GetVarint(&k16) || k16 > static_cast<uint64_t>(n) ||
            r.remaining() < 2 * k16 + MinEliasFanoBytes(k16) ||
            !GetEliasFano(&r, static_cast<int64_t>(k16), n, &idx16) || !r.GetVarint(&k32) ||
            k32 > static_cast<uint64_t>(n) - k16 ||
            r.remaining() < 2 * k16 + 4 * k32 + MinEliasFanoBytes(k32) ||
            !GetEliasFano(&r, static_cast<int64_t>(k32), n, &idx32))
        {
            return Status::Corruption("pulse: invalid entry count or index block");
        }
        if (r.remaining() != 2 * k16 + 4 * k32)
        {
            return Status::Corruption("pulse: payload holds " + std::to_string(r.remaining()) +
                                      " value bytes, " + std::to_string(k16) + " bf16 and " +
                                      std::to_string(k32) + " fp32 entries need " +
                                      std::to_string(2 * k16 + 4 * k32));
        }
        std::vector<float> v16(static_cast<size_t>(k16));
        std::vector<float> v32(static_cast<size_t>(k32));
        r.GetFloats(v16.data(), v16.size(), ValueDtype::kBf16);
        r.GetFloats(v32.data(), v32.size(), ValueDtype::kFp32);
        out->assign(static_cast<size_t>(n), 0.0f);
        for (const auto& [idx, val] : {std::make_pair(&idx16, &v16), std::make_pair(&idx32, &v32)})
        {
            for (size_t j = 0; j < val->size(); ++j)
            {
                float& slot = (*out)[static_cast<size_t>((*idx)[j])];
                const float v = (*val)[j];
                if (!std::isfinite(v) || v == 0.0f || slot != 0.0f)
                {
                    return Status::Corruption("pulse: entry " + std::to_string((*idx)[j]) +
                                              " is zero, non-finite or shipped twice");
                }
                slot = v;
            }
        }
        return Status::Ok();
    }

  private:
    AdapterLayout m_layout;
    const std::vector<float>* m_base{nullptr}; // set by SetBase, consumed by the next Encode
    std::vector<int64_t> m_idx16;              // scratch: entries with a bf16 delta
    std::vector<float> m_val16;
    std::vector<int64_t> m_idx32; // scratch: entries with an fp32 delta
    std::vector<float> m_val32;
};

} // namespace

StatusOr<std::unique_ptr<Compressor>>
NewPulseCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("pulse", options);
    HILO_RETURN_IF_ERROR(r.Finish());
    return std::unique_ptr<Compressor>(new PulseCompressor(layout));
}

} // namespace hilo
