// FiniteGradient: the learner's gradient over a round's batches that never lets one batch make
// the step non-finite. Batches pass CheckTrajectoryBatch on arrival, yet a finite batch can still
// drive the loss to inf or NaN (GRPO rewards near FLT_MAX overflow the group's spread, log-probs
// far below any the policy gives blow up the importance ratio). When the gradient over all the
// batches is not finite, each batch's own gradient names the ones that make it so; those are
// dropped and the gradient is taken again over the rest: the round's step is retaken without
// them. The common case costs one Gradient call and one pass over the result.
#ifndef HILOSIM_ROLES_FINITE_GRADIENT_H
#define HILOSIM_ROLES_FINITE_GRADIENT_H

#include "hilo/core/status.h"
#include "models/workload.h"

#include <cstddef>
#include <string>
#include <vector>

namespace hilosim
{

struct FiniteGradientResult
{
    std::vector<float> grad;     // empty when every batch was dropped
    models::GradientInfo info;   // of the gradient over the kept batches
    std::vector<size_t> dropped; // indices into the batches given, ascending
};

/// REQUIRES: `batches` is not empty. Errors are Gradient's own (the learner's, not a peer's:
/// the batches were checked on arrival).
hilo::StatusOr<FiniteGradientResult> FiniteGradient(models::Workload& workload,
                                                    const std::vector<float>& theta,
                                                    const std::vector<std::string>& batches);

/// True when every value and the norm are finite.
bool IsFiniteGradient(const std::vector<float>& grad, const models::GradientInfo& info);

} // namespace hilosim

#endif // HILOSIM_ROLES_FINITE_GRADIENT_H
