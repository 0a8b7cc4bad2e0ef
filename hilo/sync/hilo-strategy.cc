// hilo: compressed gradient + local optimizer replay (hilo/wire/FORMAT.md, "Strategies"). The
// learner encodes X = G + e, decodes its own payload with the replicas' decode code, keeps e = X -
// G_hat, and applies G_hat (never G) so that learner and replicas run the same replay on the same
// bits.
#include "hilo/compress/replay-aware.h"
#include "hilo/optim/replay.h"
#include "hilo/sync/compressing-strategy.h"
#include "hilo/sync/strategies.h"
#include "hilo/sync/strategy-util.h"

namespace hilo
{
namespace
{

class HiloStrategy : public CompressingStrategy
{
  public:
    HiloStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer,
                 int64_t budget_bytes, ErrorFeedbackOptions ef)
      : CompressingStrategy(std::move(compressor), optimizer, budget_bytes, &ef)
      , m_replay_aware(dynamic_cast<ReplayAwareCompressor*>(m_compressor.get()))
    {
    }

    SyncKind kind() const override { return SyncKind::kHilo; }
    bool ReplicasKeepOptimizer() const override { return true; }

    void InitLearner(const AdapterState& initial, LearnerState* s) const override
    {
        s->train = Trainable(initial);
        s->shadow = ReplicatedState();
    }

    const ReplicatedState& ReplicaView(const LearnerState& s) const override { return s.train; }

    StatusOr<Encoded> LearnerStep(const std::vector<float>& grad, LearnerState* s,
                                  LearnerStepTimes* times) override
    {
        int64_t t0 = NowNs();
        m_ef->Accumulate(grad, &m_x);
        // The encoder may read the state its payload will be replayed into (the replicas hold
        // the same bits); only for this Encode.
        if (m_replay_aware != nullptr)
            m_replay_aware->SetOptimizerState(&s->train.optimizer, &m_optimizer);
        StatusOr<Encoded> enc = Encode(m_x, m_budget_bytes, t0, times);
        // A payload decoded against the state (basis=replicated) keeps it through the Decode
        // below: s->train is still the state before this step, as on every replica.
        if (m_replay_aware != nullptr &&
            (!enc.ok() || !m_replay_aware->DecodeNeedsOptimizerState()))
            m_replay_aware->SetOptimizerState(nullptr, nullptr);
        if (!enc.ok())
        {
            return enc.status();
        }
        t0 = NowNs();
        const Status decoded = m_compressor->Decode(enc->payload, &m_decoded);
        if (m_replay_aware != nullptr)
            m_replay_aware->SetOptimizerState(nullptr, nullptr);
        HILO_RETURN_IF_ERROR(decoded);
        m_ef->Absorb(m_x, m_decoded);
        m_ef->BoundResidual(grad);
        times->decode_s = SecondsSince(t0);
        t0 = NowNs();
        HILO_RETURN_IF_ERROR(ReplayStep(m_optimizer, s->train, m_decoded, &s->train));
        times->apply_s = SecondsSince(t0);
        return enc;
    }

    Status ReplicaApply(std::string_view payload, const ReplicatedState& in,
                        ReplicatedState* out) override
    {
        const bool with_state =
            m_replay_aware != nullptr && m_replay_aware->DecodeNeedsOptimizerState();
        if (with_state)
            m_replay_aware->SetOptimizerState(&in.optimizer, &m_optimizer);
        const Status decoded = m_compressor->Decode(payload, &m_decoded);
        if (with_state)
            m_replay_aware->SetOptimizerState(nullptr, nullptr);
        HILO_RETURN_IF_ERROR(decoded);
        return ReplayStep(m_optimizer, in, m_decoded, out);
    }

  private:
    ReplayAwareCompressor* m_replay_aware; // m_compressor when it reads the optimizer, else null
    std::vector<float> m_x;                // scratch: G + e
};

} // namespace

std::unique_ptr<SyncStrategy>
NewHiloStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer,
                int64_t budget_bytes, ErrorFeedbackOptions ef)
{
    return std::make_unique<HiloStrategy>(std::move(compressor), optimizer, budget_bytes, ef);
}

} // namespace hilo
