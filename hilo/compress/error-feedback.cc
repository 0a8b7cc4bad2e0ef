#include "hilo/compress/error-feedback.h"

#include <cmath>

namespace hilo
{

ErrorFeedback::ErrorFeedback(int64_t numel, ErrorFeedbackOptions options)
  : m_options(options)
  , m_residual(static_cast<size_t>(numel), 0.0f)
{
}

void
ErrorFeedback::Accumulate(const std::vector<float>& grad, std::vector<float>* x) const
{
    x->resize(grad.size());
    if (!m_options.enabled)
    {
        std::copy(grad.begin(), grad.end(), x->begin());
        return;
    }
    const float beta = m_options.decay;
    for (size_t i = 0; i < grad.size(); ++i)
    {
        const float carried = beta * m_residual[i];
        (*x)[i] = grad[i] + carried;
    }
}

void
ErrorFeedback::Absorb(const std::vector<float>& x, const std::vector<float>& decoded)
{
    if (!m_options.enabled)
    {
        return;
    }
    for (size_t i = 0; i < x.size(); ++i)
    {
        m_residual[i] = x[i] - decoded[i];
    }
}

namespace
{

double
SquaredNorm(const std::vector<float>& v)
{
    double s = 0.0;
    for (float x : v)
        s += static_cast<double>(x) * static_cast<double>(x);
    return s;
}

} // namespace

double
ErrorFeedback::BoundResidual(const std::vector<float>& grad)
{
    if (!m_options.enabled || !(m_options.max_ratio > 0.0))
    {
        return 0.0;
    }
    const double e = std::sqrt(SquaredNorm(m_residual));
    const double g = std::sqrt(SquaredNorm(grad));
    const double limit = m_options.max_ratio * g;
    if (e > limit)
    {
        // Rounded down so that the scaled residual's norm does not exceed the limit by the
        // float rounding of the product.
        const float scale = e > 0.0 ? static_cast<float>(limit / e * (1.0 - 1e-6)) : 0.0f;
        for (float& r : m_residual)
            r *= scale;
    }
    return g > 0.0 ? e / g : 0.0;
}

} // namespace hilo
