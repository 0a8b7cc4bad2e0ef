#include "sim/roles/arm-context.h"

#include <cmath>

namespace hilosim
{

uint64_t
ArmContext::WireBytes(uint64_t real_bytes, double scale)
{
    const double scaled = std::ceil(static_cast<double>(real_bytes) * scale);
    return std::max<uint64_t>(real_bytes, static_cast<uint64_t>(scaled));
}

} // namespace hilosim
