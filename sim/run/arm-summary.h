// ArmSummary: the per-arm figures of summary.json and of the side-by-side table, computed from an
// ArmResult (update latency of version v at worker w = ready time at w minus the time the
// learner had the gradient of step v).
#ifndef HILOSIM_RUN_ARM_SUMMARY_H
#define HILOSIM_RUN_ARM_SUMMARY_H

#include "sim/run/arm-result.h"

namespace hilosim
{

struct ArmSummary
{
    double wire_bytes_per_update_mean{0}; // modelled bytes of one update to one receiver
    double real_bytes_per_update_mean{0}; // real framed bytes of one update
    double fraction_of_adapter_bytes{0};  // wire bytes / adapter bytes
    double latency_p50_s{0};
    double latency_p99_s{0};
    double latency_max_s{0};
    // The same less each (version, worker)'s compute overrun (UpdateLatenciesNet): the network's
    // and the modelled GPU's share of the latency; equal to the latency in a simulation.
    double latency_net_p50_s{0};
    double latency_net_p99_s{0};
    double latency_net_max_s{0};
    double step_time_s_mean{0}; // mean simulated time between consecutive versions
                                // (from version 1 to the last)
    double final_quality{0};
    uint64_t steps{0};
    double drift_rel_l2_max{0};  // delta strategy: worst learner-replica distance
    uint64_t members_dropped{0}; // summed over the versions (PublishEvent::members_dropped)

    // Faults (zero without any).
    uint64_t faults_injected{0};
    // Versions 1..steps that a worker alive at the end neither applied (in any of its lives) nor
    // skipped by restoring a snapshot at or above them: the protocol's promise is 0.
    uint64_t versions_lost{0};
    uint32_t workers_alive{0}; // (ArmResult::workers_at_final_hash: those at the learner's hash)
    // Recovery of a worker affected by a fault: from the fault's end to the first moment it held
    // the version the learner had published by then (for a divergence, the rejected version
    // again); 0 when it already held it.
    double recovery_p50_s{0};
    double recovery_max_s{0};
    uint64_t recoveries{0}; // (fault, worker) pairs measured
};

ArmSummary Summarize(const ArmResult& result);

/// Latency of every (version, worker): ready time minus the version's gradient-ready time (rows of
/// a rejected replay excluded).
std::vector<double> UpdateLatencies(const ArmResult& result);

/// UpdateLatencies less the real computation's overrun inside each latency (real-time drivers;
/// 0 in a simulation): the learner's encode overrun of the version (its publish waited for it)
/// and the worker's apply overrun (its ready time waited for it), in the same order.
std::vector<double> UpdateLatenciesNet(const ArmResult& result);

/// One (version, worker)'s compute overrun as UpdateLatenciesNet subtracts it.
double ComputeOverrun(const ArmResult& result, const ApplyEvent& apply);

/// The recovery times of ArmSummary, one per (fault, worker) pair, in fault order.
std::vector<double> RecoveryTimes(const ArmResult& result);

/// ArmSummary::versions_lost.
uint64_t VersionsLost(const ArmResult& result);

} // namespace hilosim

#endif // HILOSIM_RUN_ARM_SUMMARY_H
