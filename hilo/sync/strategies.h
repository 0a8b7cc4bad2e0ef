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

} // namespace hilo

#endif // HILO_SYNC_STRATEGIES_H
