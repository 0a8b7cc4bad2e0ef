// What the built-in strategies (full, hilo, delta, primal) share: the compressor, the optimizer
// and the per-update budget, the learner-side error feedback of those that keep one, the learner-
// local state made of them, and the steps every LearnerStep takes the same way.
#ifndef HILO_SYNC_COMPRESSING_STRATEGY_H
#define HILO_SYNC_COMPRESSING_STRATEGY_H

#include "hilo/compress/base-aware.h"
#include "hilo/sync/sync-strategy.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

class CompressingStrategy : public SyncStrategy
{
  public:
    const Compressor& compressor() const final { return *m_compressor; }
    /// The error-feedback residual (none without it) and the compressor's local state
    /// (strategy-util.h's layout).
    std::string SaveLearnerLocal() const final;
    Status RestoreLearnerLocal(std::string_view state) final;

  protected:
    /// `ef` null: the strategy keeps no learner-side residual.
    CompressingStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer,
                        int64_t budget_bytes, const ErrorFeedbackOptions* ef);

    /// `initial` with fresh optimizer buffers: the state the optimizer advances.
    ReplicatedState Trainable(const AdapterState& initial) const;
    /// train = Trainable(initial); shadow = `initial` with no optimizer state: the learner's copy
    /// of what the replicas of full and delta hold.
    void InitTrainAndShadow(const AdapterState& initial, LearnerState* s) const;
    /// Points a base-aware compressor at the parameters its payload will be applied to (no-op
    /// for the others).
    void SetBase(const std::vector<float>* base);
    /// Encodes `x` within `budget_bytes`; times->encode_s counts from `start_ns`.
    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes, int64_t start_ns,
                             LearnerStepTimes* times);
    /// The replica side of the parameter-delta strategies: out = in + the decoded payload.
    Status ApplyDelta(std::string_view payload, const ReplicatedState& in, ReplicatedState* out);

    std::unique_ptr<Compressor> m_compressor;
    OptimizerConfig m_optimizer;
    int64_t m_budget_bytes;
    std::optional<ErrorFeedback> m_ef;
    std::vector<float> m_decoded; // scratch: the decoded payload

  private:
    BaseAwareCompressor* m_base_aware; // m_compressor when it encodes against a base, else null
};

} // namespace hilo

#endif // HILO_SYNC_COMPRESSING_STRATEGY_H
