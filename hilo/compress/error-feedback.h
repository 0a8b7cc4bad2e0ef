// Error feedback: a memory that wraps any compressor (GRACE shape). Before encoding, the residual
// of earlier steps is added to the input: X = G + decay * e. After the sender has decoded its own
// payload into X_hat, the residual becomes e = X - X_hat. Learner-local; never on the wire and
// never in a snapshot.
//
// Backlog bound (max_ratio > 0, spar's and sparq's option ef_max_ratio): after Absorb,
// BoundResidual(G) scales e down to max_ratio ||G|| whenever ||e|| exceeds it (both norms in
// double, fixed order). A compressor that ships a small share of X per step lets e grow to many
// times the gradient, and HiLo replays Adam on what arrives: a coordinate whose backlog arrives
// every N steps moves about 1/sqrt(N) of the dense distance, so most of a large stale backlog is
// wasted on the normalised step while it crowds out the fresh gradient. The bound drops the
// oldest part of the backlog (a decay applied only when it is needed) and breaks the invariant
// X == X_hat + e by exactly what it drops.
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
    // ||e|| <= max_ratio ||G|| after every step (BoundResidual); 0 = unbounded (classic).
    double max_ratio{0.0};
};

class ErrorFeedback
{
  public:
    ErrorFeedback(int64_t numel, ErrorFeedbackOptions options);

    /// x = grad + decay * residual (or grad when disabled). `x` is resized.
    void Accumulate(const std::vector<float>& grad, std::vector<float>* x) const;
    /// residual = x - decoded (no-op when disabled). REQUIRES: equal sizes.
    void Absorb(const std::vector<float>& x, const std::vector<float>& decoded);
    /// With max_ratio > 0 and enabled: scales the residual by max_ratio ||grad|| / ||residual||
    /// when that is below 1 (the residual becomes zero when grad is). Returns ||e|| / ||grad||
    /// before the bound (0 when grad is zero). No-op returning 0 otherwise.
    /// REQUIRES: grad has the residual's size.
    double BoundResidual(const std::vector<float>& grad);

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
