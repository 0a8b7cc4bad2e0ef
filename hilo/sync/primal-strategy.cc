// primal: primal error feedback (EF21-P: Gruntkowska, Tyurin and Richtarik, "EF21-P and Friends:
// Improved Theoretical Communication Complexity for Distributed Optimization with Bidirectional
// Compression", ICML 2023, arXiv:2209.15218). The learner keeps a master copy x advanced by its
// optimizer and a shared adapter w that every replica holds bit for bit; the learner takes its
// gradient AT w (LearnerState::train is w, so Publisher::train_state() and gradient_point() are
// w) and workers sample with w: rollouts, gradients and evaluation all use the same bits.
// Each step, with u_t the optimizer's step from grad f(w_t) and beta the error-feedback decay:
//   X       = u_t + beta (x_t - w_t)          (beta = 1: X = x_{t+1} - w_t, EF21-P itself)
//   w_{t+1} = w_t + C(X)                      (C: any compressor; the learner decodes its own
//                                              payload with the replicas' code)
//   x_{t+1} = w_t + X = w_{t+1} + (X - C(X))  (= x_t + u_t when beta = 1)
// The compression error stays in the gap x - w and is offered again next step. Unlike EF21-P's
// SGD setting, an Adam master keeps stepping ~lr per coordinate in the direction the gradient at
// the lagging w gives, so a long lag overshoots; beta < 1 pulls the master back towards w each
// step, which bounds the lag at the price of dropping part of the unsent error. Without error
// feedback X = u_t (every unsent part is lost).
#include "hilo/optim/replay.h"
#include "hilo/sync/compressing-strategy.h"
#include "hilo/sync/strategies.h"
#include "hilo/sync/strategy-util.h"

namespace hilo
{
namespace
{

// The master copy and its optimizer live in LearnerState (checkpointed with it), and the unsent
// error is the gap x - w, not a residual: no learner-side error feedback of its own.
class PrimalStrategy : public CompressingStrategy
{
  public:
    PrimalStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer,
                   int64_t budget_bytes, ErrorFeedbackOptions ef)
      : CompressingStrategy(std::move(compressor), optimizer, budget_bytes, nullptr)
      , m_beta(ef.enabled ? ef.decay : 0.0f)
    {
    }

    SyncKind kind() const override { return SyncKind::kPrimal; }
    bool ReplicasKeepOptimizer() const override { return false; }

    void InitLearner(const AdapterState& initial, LearnerState* s) const override
    {
        s->train.adapter = initial;
        s->train.optimizer = OptimizerState();
        s->shadow = ReplicatedState();
        s->master = Trainable(initial);
    }

    const ReplicatedState& ReplicaView(const LearnerState& s) const override { return s.train; }
    const ReplicatedState* Master(const LearnerState& s) const override { return &s.master; }

    StatusOr<Encoded> LearnerStep(const std::vector<float>& grad, LearnerState* s,
                                  LearnerStepTimes* times) override
    {
        // The master's step goes into a candidate first and is committed only once the payload
        // exists and has been applied to the shared adapter: an encode or decode error leaves
        // master, shared adapter and optimizer exactly as they were.
        int64_t t0 = NowNs();
        HILO_RETURN_IF_ERROR(ReplayStep(m_optimizer, s->master, grad, &m_next));
        times->apply_s = SecondsSince(t0);
        t0 = NowNs();
        const std::vector<float>& before = s->master.adapter.theta;
        std::vector<float>& after = m_next.adapter.theta;
        const std::vector<float>& shared = s->train.adapter.theta;
        m_x.resize(after.size());
        if (m_beta == 1.0f)
        {
            for (size_t i = 0; i < after.size(); ++i)
            {
                m_x[i] = after[i] - shared[i];
            }
        }
        else
        {
            for (size_t i = 0; i < after.size(); ++i)
            {
                m_x[i] = (after[i] - before[i]) + m_beta * (before[i] - shared[i]);
            }
        }
        SetBase(&shared);
        StatusOr<Encoded> enc = Encode(m_x, m_budget_bytes, t0, times);
        if (!enc.ok())
        {
            return enc.status();
        }
        t0 = NowNs();
        HILO_RETURN_IF_ERROR(m_compressor->Decode(enc->payload, &m_decoded));
        if (m_beta != 1.0f)
        {
            // x_{t+1} = w_t + X: the decayed gap plus this step.
            for (size_t i = 0; i < after.size(); ++i)
            {
                after[i] = shared[i] + m_x[i];
            }
        }
        if (!AddVectors(shared, m_decoded, &m_shared_next))
        {
            return Status::Corruption("primal: the shared adapter plus the decoded step is not "
                                      "finite");
        }
        std::swap(s->train.adapter.theta, m_shared_next);
        times->decode_s = SecondsSince(t0);
        std::swap(s->master.adapter.theta, m_next.adapter.theta);
        std::swap(s->master.optimizer, m_next.optimizer);
        return enc;
    }

    Status ReplicaApply(std::string_view payload, const ReplicatedState& in,
                        ReplicatedState* out) override
    {
        return ApplyDelta(payload, in, out);
    }

  private:
    float m_beta;                     // weight of the carried gap x - w in X (0: no feedback)
    ReplicatedState m_next;           // scratch: the master's candidate next state
    std::vector<float> m_x;           // scratch: X
    std::vector<float> m_shared_next; // scratch: w_{t+1}, swapped in once it is finite
};

} // namespace

std::unique_ptr<SyncStrategy>
NewPrimalStrategy(std::unique_ptr<Compressor> compressor, const OptimizerConfig& optimizer,
                  int64_t budget_bytes, ErrorFeedbackOptions ef)
{
    return std::make_unique<PrimalStrategy>(std::move(compressor), optimizer, budget_bytes, ef);
}

} // namespace hilo
