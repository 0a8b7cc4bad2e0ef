#include "hilo/sync/compressing-strategy.h"

#include "hilo/optim/replay.h"
#include "hilo/sync/strategy-util.h"

namespace hilo
{

CompressingStrategy::CompressingStrategy(std::unique_ptr<Compressor> compressor,
                                         const OptimizerConfig& optimizer, int64_t budget_bytes,
                                         const ErrorFeedbackOptions* ef)
  : m_compressor(std::move(compressor))
  , m_optimizer(optimizer)
  , m_budget_bytes(budget_bytes)
  , m_base_aware(dynamic_cast<BaseAwareCompressor*>(m_compressor.get()))
{
    if (ef != nullptr)
        m_ef.emplace(m_compressor->layout().numel(), *ef);
}

std::string
CompressingStrategy::SaveLearnerLocal() const
{
    return SaveLearnerLocalState(m_ef ? &*m_ef : nullptr, *m_compressor);
}

Status
CompressingStrategy::RestoreLearnerLocal(std::string_view state)
{
    return RestoreLearnerLocalState(state, m_ef ? &*m_ef : nullptr, m_compressor.get());
}

ReplicatedState
CompressingStrategy::Trainable(const AdapterState& initial) const
{
    ReplicatedState s;
    s.adapter = initial;
    s.optimizer = NewOptimizerState(m_optimizer, static_cast<int64_t>(initial.theta.size()));
    return s;
}

void
CompressingStrategy::InitTrainAndShadow(const AdapterState& initial, LearnerState* s) const
{
    s->train = Trainable(initial);
    s->shadow.adapter = initial;
    s->shadow.optimizer = OptimizerState();
}

void
CompressingStrategy::SetBase(const std::vector<float>* base)
{
    if (m_base_aware != nullptr)
        m_base_aware->SetBase(base);
}

StatusOr<Encoded>
CompressingStrategy::Encode(const std::vector<float>& x, int64_t budget_bytes, int64_t start_ns,
                            LearnerStepTimes* times)
{
    StatusOr<Encoded> enc = m_compressor->Encode(x, budget_bytes);
    times->encode_s = SecondsSince(start_ns);
    return enc;
}

Status
CompressingStrategy::ApplyDelta(std::string_view payload, const ReplicatedState& in,
                                ReplicatedState* out)
{
    return ApplyDecodedDelta(*m_compressor, payload, in, out, &m_decoded);
}

} // namespace hilo
