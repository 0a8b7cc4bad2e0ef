// full: the learner applies its own gradient and ships the whole parameter vector (dense fp32 or
// bf16). Replicas hold exactly the decoded parameters and no optimizer state; the learner keeps a
// copy of what they hold (its own parameters rounded through the wire dtype).
#include "hilo/optim/replay.h"
#include "hilo/sync/compressing-strategy.h"
#include "hilo/sync/strategies.h"
#include "hilo/sync/strategy-util.h"

namespace hilo
{
namespace
{

class FullStrategy : public CompressingStrategy
{
  public:
    FullStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer)
      : CompressingStrategy(std::move(compressor), optimizer, /*budget_bytes=*/0, nullptr)
    {
    }

    SyncKind kind() const override { return SyncKind::kFull; }
    bool ReplicasKeepOptimizer() const override { return false; }

    void InitLearner(const AdapterState& initial, LearnerState* s) const override
    {
        InitTrainAndShadow(initial, s);
    }

    const ReplicatedState& ReplicaView(const LearnerState& s) const override { return s.shadow; }

    StatusOr<Encoded> LearnerStep(const std::vector<float>& grad, LearnerState* s,
                                  LearnerStepTimes* times) override
    {
        int64_t t0 = NowNs();
        HILO_RETURN_IF_ERROR(ReplayStep(m_optimizer, s->train, grad, &s->train));
        times->apply_s = SecondsSince(t0);
        StatusOr<Encoded> enc =
            Encode(s->train.adapter.theta, m_compressor->MinPayloadBytes(), NowNs(), times);
        if (!enc.ok())
        {
            return enc.status();
        }
        t0 = NowNs();
        HILO_RETURN_IF_ERROR(m_compressor->Decode(enc->payload, &s->shadow.adapter.theta));
        times->decode_s = SecondsSince(t0);
        return enc;
    }

    Status ReplicaApply(std::string_view payload, const ReplicatedState& in,
                        ReplicatedState* out) override
    {
        (void) in;
        HILO_RETURN_IF_ERROR(m_compressor->Decode(payload, &out->adapter.theta));
        out->optimizer = OptimizerState();
        return Status::Ok();
    }
};

} // namespace

std::unique_ptr<SyncStrategy>
NewFullStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer)
{
    return std::make_unique<FullStrategy>(std::move(compressor), optimizer);
}

} // namespace hilo
