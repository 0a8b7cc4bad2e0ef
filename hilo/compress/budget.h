// Budget: how many payload bytes one update may use, as bytes or as a fraction of the adapter's
// bytes (numel x 2, the adapter in bf16). Payload bytes count every header and scale.
#ifndef HILO_COMPRESS_BUDGET_H
#define HILO_COMPRESS_BUDGET_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>

namespace hilo
{

class Budget
{
  public:
    /// An absolute byte budget. REQUIRES: bytes > 0.
    static Budget Bytes(int64_t bytes);
    /// A fraction of the adapter's bytes. REQUIRES: 0 < fraction.
    static Budget Fraction(double fraction);
    /// No limit: the compressor's natural size (dense, or a compressor's maximum).
    static Budget Unlimited();

    /// Checks the value is positive and finite.
    Status Validate() const;
    /// The byte budget for an adapter of `adapter_bytes` bytes (floor of fraction x bytes).
    int64_t ResolveBytes(int64_t adapter_bytes) const;
    bool unlimited() const { return m_kind == Kind::kUnlimited; }
    /// "4096B", "1.6%", "unlimited".
    std::string ToString() const;

  private:
    enum class Kind
    {
        kBytes,
        kFraction,
        kUnlimited
    };
    Kind m_kind{Kind::kUnlimited};
    int64_t m_bytes{0};
    double m_fraction{0.0};
};

} // namespace hilo

#endif // HILO_COMPRESS_BUDGET_H
