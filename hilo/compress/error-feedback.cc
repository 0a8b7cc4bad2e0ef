#include "hilo/compress/error-feedback.h"

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

} // namespace hilo
