// Error feedback: a memory that wraps any compressor (GRACE shape). Before encoding, the residual
// of earlier steps is added to the input: X = G + decay * e. After the sender has decoded its own
// payload into X_hat, the residual becomes e = X - X_hat. Learner-local; never on the wire and
// never in a snapshot.
#ifndef HILO_COMPRESS_ERROR_FEEDBACK_H
#define HILO_COMPRESS_ERROR_FEEDBACK_H

#include <cstdint>
#include <vector>

namespace hilo
{

struct ErrorFeedbackOptions
{
    bool enabled{true}; // off: X = G and the residual stays zero (the ablation)
    float decay{1.0f};  // beta in X = G + beta * e; 1 is classic error feedback
};

class ErrorFeedback
{
  public:
    ErrorFeedback(int64_t numel, ErrorFeedbackOptions options);

    /// x = grad + decay * residual (or grad when disabled). `x` is resized.
    void Accumulate(const std::vector<float>& grad, std::vector<float>* x) const;
    /// residual = x - decoded (no-op when disabled). REQUIRES: equal sizes.
    void Absorb(const std::vector<float>& x, const std::vector<float>& decoded);

    const std::vector<float>& residual() const { return m_residual; }
    /// Replaces the residual (a restored learner checkpoint). REQUIRES: the same size.
    void set_residual(std::vector<float> residual) { m_residual = std::move(residual); }
    const ErrorFeedbackOptions& options() const { return m_options; }

  private:
    ErrorFeedbackOptions m_options;
    std::vector<float> m_residual;
};

} // namespace hilo

#endif // HILO_COMPRESS_ERROR_FEEDBACK_H
