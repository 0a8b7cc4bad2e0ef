#include "hilo/compress/dense.h"

#include "hilo/core/coding.h"
#include "hilo/core/finite.h"
#include "hilo/core/parallel.h"

#include <atomic>

namespace hilo
{
namespace
{

class DenseCompressor : public Compressor
{
  public:
    DenseCompressor(const AdapterLayout& layout, ValueDtype dtype)
      : m_layout(layout)
      , m_dtype(dtype)
    {
    }

    std::string Name() const override { return "dense-v1"; }
    std::string Params() const override
    {
        return FormatCompressorOptions({{"dtype", ValueDtypeName(m_dtype)}});
    }
    const AdapterLayout& layout() const override { return m_layout; }

    int64_t MinPayloadBytes() const override
    {
        return 1 + m_layout.numel() * BytesPerValue(m_dtype);
    }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override
    {
        if (static_cast<int64_t>(x.size()) != m_layout.numel())
        {
            return Status::InvalidArgument("dense: input has " + std::to_string(x.size()) +
                                           " values, layout has " +
                                           std::to_string(m_layout.numel()));
        }
        if (budget_bytes < MinPayloadBytes())
        {
            return Status::BudgetTooSmall("dense: payload is " + std::to_string(MinPayloadBytes()) +
                                          " bytes, budget " + std::to_string(budget_bytes));
        }
        Encoded e;
        e.payload.reserve(static_cast<size_t>(MinPayloadBytes()));
        ByteWriter w(&e.payload);
        w.PutU8(static_cast<uint8_t>(m_dtype));
        w.PutFloats(x.data(), x.size(), m_dtype);
        return e;
    }

    Status Decode(std::string_view payload, std::vector<float>* out) const override
    {
        ByteReader r(payload);
        uint8_t dtype = 0;
        if (!r.GetU8(&dtype))
        {
            return Status::Corruption("dense: empty payload");
        }
        if (dtype != static_cast<uint8_t>(m_dtype))
        {
            return Status::Corruption("dense: payload dtype " + std::to_string(dtype) +
                                      " differs from the configured " + ValueDtypeName(m_dtype));
        }
        const size_t n = static_cast<size_t>(m_layout.numel());
        if (r.remaining() != n * static_cast<size_t>(BytesPerValue(m_dtype)))
        {
            return Status::Corruption("dense: payload holds " + std::to_string(r.remaining()) +
                                      " value bytes, expected " +
                                      std::to_string(n * BytesPerValue(m_dtype)));
        }
        out->resize(n);
        // Element-wise conversion, split across threads: every value is decoded on its own, so
        // the split cannot change a bit. Each chunk is checked for NaN and infinities while it is
        // still in cache.
        const size_t width = static_cast<size_t>(BytesPerValue(m_dtype));
        std::string_view values;
        r.GetBytes(n * width, &values);
        float* o = out->data();
        std::atomic<bool> bad{false};
        ParallelFor(0, static_cast<int64_t>(n), 1 << 16,
                    [&](int64_t b, int64_t e)
                    {
                        ByteReader part(values.substr(static_cast<size_t>(b) * width,
                                                      static_cast<size_t>(e - b) * width));
                        part.GetFloats(o + b, static_cast<size_t>(e - b), m_dtype);
                        if (!AllFinite(o + b, e - b))
                        {
                            bad.store(true, std::memory_order_relaxed);
                        }
                    });
        if (bad.load())
        {
            return Status::Corruption("dense: a value is NaN or infinite");
        }
        return Status::Ok();
    }

  private:
    AdapterLayout m_layout;
    ValueDtype m_dtype;
};

} // namespace

StatusOr<std::unique_ptr<Compressor>>
NewDenseCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("dense", options);
    ValueDtype dtype = r.Dtype("dtype", ValueDtype::kFp32,
                               {ValueDtype::kFp32, ValueDtype::kBf16, ValueDtype::kFp16});
    HILO_RETURN_IF_ERROR(r.Finish());
    return std::unique_ptr<Compressor>(new DenseCompressor(layout, dtype));
}

} // namespace hilo
