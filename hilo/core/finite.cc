#include "hilo/core/finite.h"

#include "hilo/core/parallel.h"

#include <atomic>

namespace hilo
{

bool
AllFinite(const float* p, int64_t n)
{
    uint32_t acc = 0;
    for (int64_t i = 0; i < n; ++i)
    {
        acc |= NonFiniteBits(p[i]);
    }
    return !NonFiniteSeen(acc);
}

bool
AllFiniteParallel(const float* p, int64_t n)
{
    std::atomic<bool> bad{false};
    ParallelFor(0, n, 1 << 16,
                [&](int64_t b, int64_t e)
                {
                    if (!AllFinite(p + b, e - b))
                    {
                        bad.store(true, std::memory_order_relaxed);
                    }
                });
    return !bad.load();
}

} // namespace hilo
