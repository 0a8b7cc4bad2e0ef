// Constructors of the built-in sync strategies; use NewSyncStrategy (sync-strategy.h) instead.
#ifndef HILO_SYNC_STRATEGIES_H
#define HILO_SYNC_STRATEGIES_H

#include "hilo/sync/sync-strategy.h"

namespace hilo
{

std::unique_ptr<SyncStrategy> NewFullStrategy(std::unique_ptr<Compressor> compressor,
                                              const OptimizerConfig& optimizer);
std::unique_ptr<SyncStrategy> NewHiloStrategy(std::unique_ptr<Compressor> compressor,
                                              const OptimizerConfig& optimizer,
                                              int64_t budget_bytes, ErrorFeedbackOptions ef);
std::unique_ptr<SyncStrategy> NewDeltaStrategy(std::unique_ptr<Compressor> compressor,
                                               const OptimizerConfig& optimizer,
                                               int64_t budget_bytes, ErrorFeedbackOptions ef);
std::unique_ptr<SyncStrategy> NewPrimalStrategy(std::unique_ptr<Compressor> compressor,
                                                const OptimizerConfig& optimizer,
                                                int64_t budget_bytes, ErrorFeedbackOptions ef);

/// out[i] = a[i] + b[i], elementwise in fp32 (the delta strategy's apply; thread-count
/// independent).
void AddVectors(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>* out);

/// The replica side of the parameter-delta strategies (delta, primal): out's adapter = in's +
/// the decoded payload (through `scratch`), no optimizer state. On error `out` is unspecified.
Status ApplyDecodedDelta(const Compressor& compressor, std::string_view payload,
                         const ReplicatedState& in, ReplicatedState* out,
                         std::vector<float>* scratch);

/// A strategy's learner-local state: the error-feedback residual (`ef` may be null: none) and the
/// compressor's local state. Layout: u64 n, n fp32 residual values, u64 m, m compressor bytes.
std::string SaveLearnerLocalState(const ErrorFeedback* ef, const Compressor& compressor);
/// The inverse; changes nothing unless every part is valid.
Status RestoreLearnerLocalState(std::string_view state, ErrorFeedback* ef, Compressor* compressor);

/// Seconds on a steady clock since `start` (for LearnerStepTimes).
double SecondsSince(int64_t start_ns);
int64_t NowNs();

} // namespace hilo

#endif // HILO_SYNC_STRATEGIES_H
