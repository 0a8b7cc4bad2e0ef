#include "sim/roles/finite-gradient.h"

#include <cmath>

namespace hilosim
{

bool
IsFiniteGradient(const std::vector<float>& grad, const models::GradientInfo& info)
{
    if (!std::isfinite(info.grad_norm) || !std::isfinite(info.loss))
    {
        return false;
    }
    for (float g : grad)
    {
        if (!std::isfinite(g))
        {
            return false;
        }
    }
    return true;
}

hilo::StatusOr<FiniteGradientResult>
FiniteGradient(models::Workload& workload, const std::vector<float>& theta,
               const std::vector<std::string>& batches)
{
    FiniteGradientResult out;
    auto all = workload.Gradient(theta, batches, &out.info);
    if (!all.ok())
    {
        return all.status();
    }
    if (IsFiniteGradient(*all, out.info))
    {
        out.grad = std::move(*all);
        return out;
    }
    std::vector<std::string> kept;
    for (size_t i = 0; i < batches.size(); ++i)
    {
        models::GradientInfo info;
        auto one = workload.Gradient(theta, {batches[i]}, &info);
        if (!one.ok())
        {
            return one.status();
        }
        if (IsFiniteGradient(*one, info))
            kept.push_back(batches[i]);
        else
            out.dropped.push_back(i);
    }
    // No single batch is to blame (only their sum overflows): none can be trusted.
    if (out.dropped.empty())
    {
        kept.clear();
        for (size_t i = 0; i < batches.size(); ++i)
            out.dropped.push_back(i);
    }
    out.info = models::GradientInfo();
    if (kept.empty())
    {
        return out;
    }
    auto again = workload.Gradient(theta, kept, &out.info);
    if (!again.ok())
    {
        return again.status();
    }
    if (!IsFiniteGradient(*again, out.info))
    {
        // Each kept batch is finite alone but not together: drop the round's batches.
        out.dropped.clear();
        for (size_t i = 0; i < batches.size(); ++i)
            out.dropped.push_back(i);
        out.info = models::GradientInfo();
        return out;
    }
    out.grad = std::move(*again);
    return out;
}

} // namespace hilosim
