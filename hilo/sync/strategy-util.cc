#include "hilo/sync/strategies.h"

#include "hilo/core/parallel.h"

#include <chrono>

namespace hilo
{

void
AddVectors(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>* out)
{
    out->resize(a.size());
    const float* pa = a.data();
    const float* pb = b.data();
    float* po = out->data();
    ParallelFor(0, static_cast<int64_t>(a.size()), 1 << 15,
                [&](int64_t begin, int64_t end)
                {
                    for (int64_t i = begin; i < end; ++i)
                    {
                        po[i] = pa[i] + pb[i];
                    }
                });
}

int64_t
NowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double
SecondsSince(int64_t start_ns)
{
    return static_cast<double>(NowNs() - start_ns) * 1e-9;
}

} // namespace hilo
