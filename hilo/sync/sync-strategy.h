// SyncStrategy: how a new adapter version reaches the replicas. One
// interface for `full`, `hilo`, `delta` and `primal` (hilo/wire/FORMAT.md describes each) so
// publisher, replica and the simulator treat them alike. The learner half advances the learner's
// state and produces a payload; the replica half turns a payload plus the replica's state into the
// next state. Compressors plug in below this seam.
#ifndef HILO_SYNC_SYNC_STRATEGY_H
#define HILO_SYNC_SYNC_STRATEGY_H

#include "hilo/compress/budget.h"
#include "hilo/compress/compressor-options.h"
#include "hilo/compress/compressor.h"
#include "hilo/compress/error-feedback.h"
#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

enum class SyncKind : uint8_t
{
    kFull = 1,   // ship the parameters every version; replicas keep no optimizer state
    kHilo = 2,   // ship a compressed gradient; replicas replay the optimizer step bit for bit
    kDelta = 3,  // ship a compressed parameter delta; no replay, replicas drift from the learner
    kPrimal = 4, // primal error feedback: a shared adapter moves by compressed steps towards the
                 // learner's master copy; gradients are taken at the shared adapter
};

const char* SyncKindName(SyncKind k);
StatusOr<SyncKind> ParseSyncKind(std::string_view name);

/// Everything that defines an arm's synchronisation; learner and replicas build from equal specs.
struct SyncSpec
{
    SyncKind kind{SyncKind::kHilo};
    std::string compressor{"dense"}; // factory kind; `full` accepts only "dense"
    CompressorOptions compressor_options;
    Budget budget{Budget::Unlimited()}; // per update, payload bytes
    // hilo, delta and primal; NewSyncStrategy refuses it enabled for full, a decay outside (0, 1],
    // and a compressor that runs its own error feedback (powersgd error_feedback=true) beside it.
    ErrorFeedbackOptions error_feedback{/*enabled=*/false, /*decay=*/1.0f};
};

/// The learner's side of the state: what it trains with (the parameters it differentiates at),
/// an exact copy of what the replicas hold when that is something else, and for primal the master
/// copy its optimizer advances.
struct LearnerState
{
    ReplicatedState train;
    ReplicatedState shadow; // full and delta: what the replicas hold
    ReplicatedState master; // primal: the master parameters and their optimizer state
};

/// Timings of the learner's half of one step, in CPU seconds of this process.
struct LearnerStepTimes
{
    double encode_s{0};
    double decode_s{0};
    double apply_s{0};
};

class SyncStrategy
{
  public:
    virtual ~SyncStrategy() = default;

    virtual SyncKind kind() const = 0;
    virtual const Compressor& compressor() const = 0;
    /// True when replicas keep optimizer moments (hilo).
    virtual bool ReplicasKeepOptimizer() const = 0;

    /// Sets up `s` from the initial parameters: optimizer buffers, shadow copy.
    virtual void InitLearner(const AdapterState& initial, LearnerState* s) const = 0;
    /// The replicated state matching the learner's current version.
    virtual const ReplicatedState& ReplicaView(const LearnerState& s) const = 0;
    /// The optimizer's own parameters when they are not `train` (primal's master), else null.
    virtual const ReplicatedState* Master(const LearnerState& s) const
    {
        (void) s;
        return nullptr;
    }

    /// Learner step with gradient `grad`: advances `s` by one version and returns the payload.
    virtual StatusOr<Encoded> LearnerStep(const std::vector<float>& grad, LearnerState* s,
                                          LearnerStepTimes* times) = 0;

    /// Replica step: decodes `payload` and writes the next state into `out` (which must not alias
    /// `in`). On error `out` is garbage and `in` is untouched.
    virtual Status ReplicaApply(std::string_view payload, const ReplicatedState& in,
                                ReplicatedState* out) = 0;

    /// The learner-local state beyond LearnerState that later LearnerStep calls depend on (the
    /// error-feedback residual, the compressor's local state), serialized for a checkpoint.
    virtual std::string SaveLearnerLocal() const = 0;
    /// Restores SaveLearnerLocal()'s bytes into a strategy built from an equal spec. kCorruption
    /// for bytes it cannot use.
    virtual Status RestoreLearnerLocal(std::string_view state) = 0;

    /// Digest of layout, optimizer, strategy and compressor name + params.
    uint64_t ConfigHash(const OptimizerConfig& optimizer) const;
};

/// Builds the strategy described by `spec` for `layout` and `optimizer`. Errors name the field.
StatusOr<std::unique_ptr<SyncStrategy>> NewSyncStrategy(const SyncSpec& spec,
                                                        const AdapterLayout& layout,
                                                        const OptimizerConfig& optimizer);

} // namespace hilo

#endif // HILO_SYNC_SYNC_STRATEGY_H
