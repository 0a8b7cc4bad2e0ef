// Runs one arm of a scenario in its own ns-3 simulation: builds the topology and transport,
// installs learner, worker (and relay) applications over a shared ArmContext, subscribes to their
// trace sources, runs until every worker holds the last version, and destroys the simulation.
#ifndef HILOSIM_DRIVERS_NS3_ARM_RUNNER_H
#define HILOSIM_DRIVERS_NS3_ARM_RUNNER_H

#include "sim/run/arm-result.h"
#include "sim/scenario/resolved-scenario.h"

#include <functional>
#include <string>

namespace hilosim
{

/// Called after each published version (for progress lines): arm index, version, steps.
using ProgressFn = std::function<void(size_t arm, uint64_t version, uint64_t steps)>;

struct ArmRunOptions
{
    uint64_t corrupt_version_at_worker0{0}; // fault injection for tests (0: none)
    bool batched_rollouts{true};  // workers with identical adapters share one batched rollout call
                                  // (same samples; false: one call per worker, for tests)
    bool shared_replicas{true};   // workers' replicas share bit-identical states (same outputs;
                                  // false: every replica holds its own, for tests)
    std::string pcap_dir;         // non-empty: pcap traces of every link end go to pcap_dir/<arm>/
    uint32_t pcap_snaplen{65535}; // bytes kept of each captured frame
    double trace_tcp_period_s{0}; // > 0: ArmResult::tcp_trace sampled on this period of
                                  // simulated time (sim/net/tcp-trace-sampler.h); 0: off
};

/// Window of the peak link utilisation in ArmResult::links.
constexpr double kLinkPeakWindowS = 0.1;

/// Runs arm `arm_index` of `scenario`. Setup errors (a budget below the smallest payload, an
/// adapter that does not fit the modelled GPU...) come back as kInvalidArgument-like statuses
/// naming the arm; runtime failures are in ArmResult::failure.
hilo::StatusOr<ArmResult> RunArm(const ResolvedScenario& scenario, size_t arm_index,
                                 const ProgressFn& progress, const ArmRunOptions& options = {});

} // namespace hilosim

#endif // HILOSIM_DRIVERS_NS3_ARM_RUNNER_H
