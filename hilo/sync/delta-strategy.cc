// delta: the learner applies its own gradient and ships a compressed parameter delta
// X = (theta_{t+1} - theta_t) + decay * e, with e = X - X_hat (learner-side error feedback).
// Replicas add X_hat; no optimizer replay, so they drift from the learner. The learner keeps an
// exact copy of what replicas hold (the shadow) so drift can be measured and hashes checked.
#include "hilo/optim/replay.h"
#include "hilo/sync/compressing-strategy.h"
#include "hilo/sync/strategies.h"
#include "hilo/sync/strategy-util.h"

namespace hilo
{
namespace
{

class DeltaStrategy : public CompressingStrategy
{
  public:
    DeltaStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer,
                  int64_t budget_bytes, ErrorFeedbackOptions ef)
      : CompressingStrategy(std::move(compressor), optimizer, budget_bytes, &ef)
    {
    }

    SyncKind kind() const override { return SyncKind::kDelta; }
    bool ReplicasKeepOptimizer() const override { return false; }

    void InitLearner(const AdapterState& initial, LearnerState* s) const override
    {
        InitTrainAndShadow(initial, s);
    }

    const ReplicatedState& ReplicaView(const LearnerState& s) const override { return s.shadow; }

    StatusOr<Encoded> LearnerStep(const std::vector<float>& grad, LearnerState* s,
                                  LearnerStepTimes* times) override
    {
        // The learner's step goes into a candidate state first and is committed only after the
        // payload exists: an encode or decode error leaves the learner, the shadow and the
        // residual exactly as they were (Publisher::Step's contract).
        int64_t t0 = NowNs();
        HILO_RETURN_IF_ERROR(ReplayStep(m_optimizer, s->train, grad, &m_next));
        times->apply_s = SecondsSince(t0);
        t0 = NowNs();
        const std::vector<float>& before = s->train.adapter.theta;
        const std::vector<float>& after = m_next.adapter.theta;
        m_delta.resize(after.size());
        for (size_t i = 0; i < after.size(); ++i)
        {
            m_delta[i] = after[i] - before[i];
        }
        m_ef->Accumulate(m_delta, &m_x);
        SetBase(&s->shadow.adapter.theta);
        StatusOr<Encoded> enc = Encode(m_x, m_budget_bytes, t0, times);
        if (!enc.ok())
        {
            return enc.status();
        }
        t0 = NowNs();
        HILO_RETURN_IF_ERROR(m_compressor->Decode(enc->payload, &m_decoded));
        if (!AddVectors(s->shadow.adapter.theta, m_decoded, &m_shadow_next))
        {
            return Status::Corruption("delta: the replicas' parameters plus the decoded change "
                                      "are not finite");
        }
        m_ef->Absorb(m_x, m_decoded);
        std::swap(s->shadow.adapter.theta, m_shadow_next);
        times->decode_s = SecondsSince(t0);
        std::swap(s->train.adapter.theta, m_next.adapter.theta);
        std::swap(s->train.optimizer, m_next.optimizer);
        return enc;
    }

    Status ReplicaApply(std::string_view payload, const ReplicatedState& in,
                        ReplicatedState* out) override
    {
        return ApplyDelta(payload, in, out);
    }

  private:
    ReplicatedState m_next;           // scratch: the learner's candidate next state
    std::vector<float> m_delta;       // scratch: theta_{t+1} - theta_t
    std::vector<float> m_x;           // scratch: delta + e
    std::vector<float> m_shadow_next; // scratch: the replicas' next parameters, once finite
};

} // namespace

std::unique_ptr<SyncStrategy>
NewDeltaStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer,
                 int64_t budget_bytes, ErrorFeedbackOptions ef)
{
    return std::make_unique<DeltaStrategy>(std::move(compressor), optimizer, budget_bytes, ef);
}

} // namespace hilo
