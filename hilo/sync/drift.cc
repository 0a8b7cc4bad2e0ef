#include "hilo/sync/drift.h"

#include <cmath>

namespace hilo
{

DriftStats
ComputeDrift(const std::vector<float>& reference, const std::vector<float>& other)
{
    DriftStats d;
    double diff2 = 0;
    double ref2 = 0;
    const size_t n = std::min(reference.size(), other.size());
    for (size_t i = 0; i < n; ++i)
    {
        const double r = reference[i];
        const double e = r - static_cast<double>(other[i]);
        d.max_abs = std::max(d.max_abs, std::fabs(e));
        diff2 += e * e;
        ref2 += r * r;
    }
    d.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    return d;
}

} // namespace hilo
