// What the sync strategies share: the elementwise sum of the parameter-delta strategies and their
// replica apply, the learner-local state layout, and the step timer.
#ifndef HILO_SYNC_STRATEGY_UTIL_H
#define HILO_SYNC_STRATEGY_UTIL_H

#include "hilo/compress/compressor.h"
#include "hilo/compress/error-feedback.h"
#include "hilo/core/adapter-state.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

/// out[i] = a[i] + b[i], elementwise in fp32 (the delta strategy's apply; thread-count
/// independent). Returns false when a sum is not finite (out then holds it).
bool AddVectors(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>* out);

/// The replica side of the parameter-delta strategies (delta, primal): out's adapter = in's +
/// the decoded payload (through `scratch`), no optimizer state. kCorruption when a sum is not
/// finite. On error `out` is unspecified.
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

#endif // HILO_SYNC_STRATEGY_UTIL_H
