#include "hilo/compress/budget.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace hilo
{

Budget
Budget::Bytes(int64_t bytes)
{
    Budget b;
    b.m_kind = Kind::kBytes;
    b.m_bytes = bytes;
    return b;
}

Budget
Budget::Fraction(double fraction)
{
    Budget b;
    b.m_kind = Kind::kFraction;
    b.m_fraction = fraction;
    return b;
}

Budget
Budget::Unlimited()
{
    return Budget();
}

Status
Budget::Validate() const
{
    if (m_kind == Kind::kBytes && m_bytes <= 0)
    {
        return Status::InvalidArgument("budget bytes must be > 0, got " + std::to_string(m_bytes));
    }
    if (m_kind == Kind::kFraction && !(m_fraction > 0.0 && std::isfinite(m_fraction)))
    {
        return Status::InvalidArgument("budget fraction must be > 0 and finite");
    }
    return Status::Ok();
}

int64_t
Budget::ResolveBytes(int64_t adapter_bytes) const
{
    switch (m_kind)
    {
        case Kind::kBytes:
            return m_bytes;
        case Kind::kFraction:
            return static_cast<int64_t>(
                std::floor(m_fraction * static_cast<double>(adapter_bytes)));
        case Kind::kUnlimited:
            break;
    }
    return std::numeric_limits<int64_t>::max();
}

std::string
Budget::ToString() const
{
    std::ostringstream os;
    switch (m_kind)
    {
        case Kind::kBytes:
            os << m_bytes << "B";
            break;
        case Kind::kFraction:
            os << m_fraction * 100.0 << "%";
            break;
        case Kind::kUnlimited:
            os << "unlimited";
            break;
    }
    return os.str();
}

} // namespace hilo
