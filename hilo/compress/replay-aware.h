// ReplayAwareCompressor: a gradient compressor whose encoder reads the optimizer state that HiLo
// replays its payload into (spar and sparq; hilo/compress/allocation-policy.h). The hilo strategy
// calls SetOptimizerState with the learner's replicated state (bit-identical to every replica's)
// before every Encode. Most payload formats do not depend on it, so replicas decode as usual;
// where the format does (spar's basis=replicated: DecodeNeedsOptimizerState), the strategy also
// sets, before every Decode on learner and replicas alike, the state the payload is about to be
// replayed into (the same bits everywhere). The strategy also reads the compressor's bound on the
// error-feedback backlog (option ef_max_ratio) into its ErrorFeedback. NewSyncStrategy refuses the
// options that need the replayed optimizer (allocation=preconditioned, ef_max_ratio) with any
// strategy but hilo.
#ifndef HILO_COMPRESS_REPLAY_AWARE_H
#define HILO_COMPRESS_REPLAY_AWARE_H

#include "hilo/compress/compressor.h"
#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"

namespace hilo
{

class ReplayAwareCompressor : public Compressor
{
  public:
    /// The state (and its optimizer's config) the next Encode's decoded payload will be replayed
    /// into. Both pointers must stay valid until that Encode returns; null clears them.
    virtual void SetOptimizerState(const OptimizerState* state, const OptimizerConfig* config) = 0;
    /// True when Encode needs SetOptimizerState first (allocation=preconditioned,
    /// basis=replicated).
    virtual bool NeedsOptimizerState() const = 0;
    /// True when Decode needs it too (basis=replicated): the state before the replayed step.
    virtual bool DecodeNeedsOptimizerState() const { return false; }
    /// The error-feedback backlog bound ||e|| <= ratio ||G|| the strategy should keep; 0 = none.
    virtual double ErrorFeedbackMaxRatio() const = 0;
};

} // namespace hilo

#endif // HILO_COMPRESS_REPLAY_AWARE_H
