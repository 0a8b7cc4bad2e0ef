// ArmResult: everything one arm's run recorded, from the applications' trace sources. Output
// writers and tests read it; nothing here depends on wall-clock time except the cpu_/wall_ fields.
#ifndef HILOSIM_RUN_ARM_RESULT_H
#define HILOSIM_RUN_ARM_RESULT_H

#include "hilo/compress/budget-regime.h"
#include "sim/net/link-monitor.h"
#include "sim/net/tcp-trace.h"
#include "sim/roles/role-events.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

/// One scenario fault as it happened in an arm's run. Workers are numbered as in workers.csv.
struct FaultRecord
{
    std::string kind;   // "worker_crash", ... (FaultKindName)
    std::string target; // as the scenario wrote it
    double start_s{0};
    // When the fault was over: a link fault's end, a crashed worker's restart, a join, the
    // detection of a divergence, the learner's restart; -1 when it lasted to the end of the run.
    double end_s{-1};
    std::vector<uint32_t> workers; // the workers it affects
    bool injected{false};          // it started before the run ended
    // Link kinds, simulator: packets the link's fault models dropped while this fault was active,
    // travelling towards the learner and away from it (faults overlapping on one link share them).
    uint64_t dropped_up{0};
    uint64_t dropped_down{0};
};

/// A worker's state when the run ended.
struct WorkerEnd
{
    bool alive{false}; // running (not crashed for good, not still waiting to join or restart)
    uint64_t version{0};
    uint64_t state_hash{0};
};

/// One node process of a real-process run: the most memory it held resident.
struct NodePeakRss
{
    std::string node; // "learner", "worker-3", "relay-0" (a restarted node: one entry a process)
    uint64_t kib{0};  // the kernel's ru_maxrss when the process was reaped
};

/// The emulated network's own health during one arm (hilo-emu --network ns3 only): how far the
/// ns-3 real-time process fell behind the wall clock, sampled periodically, and why its numbers
/// may not be exact.
struct EmulationHealth
{
    double lag_mean_s{0}; // wall clock minus ns-3 time at the samples
    double lag_p99_s{0};
    double lag_max_s{0};
    uint64_t lag_samples{0};
    double peak_link_traffic_bps{0}; // the most traffic the scenario's links can carry at once
    double carried_peak_bps{0};      // the link traffic it carried in its busiest second
    std::vector<std::string> warnings;
};

struct ArmResult
{
    std::string name;
    std::string strategy;   // "full", "hilo", "delta"
    std::string compressor; // factory kind ("dense", "spar", ...)
    std::string compressor_params;
    std::string budget;                      // as written, or "unlimited"
    double budget_fraction{0};               // resolved budget / adapter bytes (0: unlimited)
    std::string budget_transfer{"fraction"}; // Scenario.budget_transfer as applied
    // What the budget buys on the modelled and on the learner's adapter: directions per factor
    // matrix (rank-based compressors) or entry fraction (entry-based);
    // hilo/compress/budget-regime.h.
    hilo::BudgetPurchase purchase;
    uint32_t training_rank{0};
    std::string quality_metric;
    bool higher_is_better{false};

    int64_t real_numel{0};         // LoRA parameters of the real (tiny) adapter
    int64_t real_adapter_bytes{0}; // real numel x 2
    int64_t adapter_bytes{0};      // modelled numel x 2 (= real when no LLM profile)
    double adapter_scale{1.0};

    std::vector<std::string> worker_gpu;    // by worker
    std::vector<std::string> worker_region; // by worker ("" in a star)
    // The learner adapter's factor matrices in layout order (allocation.csv's matrix_name).
    std::vector<std::string> matrix_names;

    std::vector<PublishEvent> publishes; // by version
    std::vector<EvalEvent> evals;        // version 0, every eval_every, last
    std::vector<ApplyEvent> applies;     // in simulated-time order
    std::vector<RolloutEvent> rollouts;  // in simulated-time order
    std::vector<CatchUpEvent> catch_ups; // in simulated-time order
    std::vector<FaultRecord> faults;     // in scenario order
    std::vector<WorkerEnd> worker_end;   // by worker
    uint64_t hash_mismatches{0};
    uint64_t resyncs{0};
    uint64_t segments_corrupted{0}; // TCP data segments a corrupt fault damaged
    uint64_t connections_closed{0}; // ends of a connection heard by learner, workers or relays
    double sim_time_s{0};           // when the last live worker held the last version
    // Workers holding the learner's last version with the learner's state hash at the end
    // (the simulator reads the replicas; processes announce theirs to the learner).
    uint32_t workers_at_final_hash{0};
    std::vector<LinkUsage> links; // every link, down then up, in topology build order
    // --trace-tcp only (empty otherwise): every connection end's sending state, in time order
    // (sim/net/tcp-trace.h; tcp-trace.csv).
    std::vector<TcpTraceRow> tcp_trace;

    // Real processes only (empty / false in a simulation).
    bool real_time{false};           // times are real: steps.csv gets the overrun columns
    std::vector<int64_t> worker_pid; // by worker: the process that ran it last (workers.csv)
    std::optional<EmulationHealth> emulation; // emulated links only (summary.json)
    std::vector<NodePeakRss> node_peak_rss;   // every node process, in start order

    std::string network_model;              // "packet" or "flow"
    uint32_t connections{0};                // transport connections opened
    uint32_t window_limited_connections{0}; // send buffer below the path's BDP
    std::string window_limited_example;     // one of them, described; empty when none

    double wall_s{0};     // wall-clock seconds of this arm's simulation (not deterministic)
    double cpu_s{0};      // CPU seconds of the process that ran this arm, setup included, while
                          // it ran (not deterministic; 0: not measured)
    hilo::Status failure; // first runtime failure; ok when the arm completed
};

} // namespace hilosim

#endif // HILOSIM_RUN_ARM_RESULT_H
