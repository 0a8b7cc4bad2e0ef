// Drift between two parameter vectors: how far replicas of the `delta` strategy are from the
// learner. Reductions run in index order in double precision (deterministic).
#ifndef HILO_SYNC_DRIFT_H
#define HILO_SYNC_DRIFT_H

#include <vector>

namespace hilo
{

struct DriftStats
{
    double max_abs{0}; // max_i |a_i - b_i|
    double rel_l2{0};  // ||a - b|| / ||a|| (the absolute distance when a is zero)
};

DriftStats ComputeDrift(const std::vector<float>& reference, const std::vector<float>& other);

} // namespace hilo

#endif // HILO_SYNC_DRIFT_H
