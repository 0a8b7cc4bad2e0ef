// The records the roles report through their hooks (and the ns-3 applications through their trace
// sources): one struct per measurable event, so metric writers and tests subscribe instead of
// parsing logs. Times are the driver's modelled seconds (role-port.h).
#ifndef HILOSIM_ROLES_ROLE_EVENTS_H
#define HILOSIM_ROLES_ROLE_EVENTS_H

#include <cstdint>
#include <vector>

namespace hilosim
{

/// The learner finished a version and handed it to the transport.
struct PublishEvent
{
    uint64_t version{0};
    double grad_ready_s{0}; // simulated time the learner had the gradient (latency origin)
    double published_s{0};  // simulated time the update was handed to the transport
    double train_s{0};      // modelled GPU seconds of the training step
    double encode_s{0};     // modelled GPU seconds from gradient to publish: the learner's own
                            // optimizer step plus encode + decode (hilo, delta) or serialising
                            // the parameters (full)
    double loss{0};
    double grad_norm{0};
    int64_t payload_bytes{0}; // compressor payload, real
    int64_t frame_bytes{0};   // framed Update, real
    uint64_t wire_bytes{0};   // framed Update at the modelled scale (per receiver)
    uint64_t copies{0};       // transport sends (member workers, or relays)
    uint64_t state_hash{0};   // hash of the replicated state at this version
    double drift_rel_l2{0};   // learner parameters vs replica view
    double drift_max_abs{0};
    std::vector<int64_t> kept_per_matrix; // compressor's local allocation (rank or entries)
    // Members the version's round went without: batch not in by mode.round_timeout, or a
    // batch that made the gradient non-finite (the learner retook the step without it).
    uint32_t members_dropped{0};
    // Real-time drivers only: seconds by which the real computation outlasted the modelled time.
    double train_overrun_s{0};
    double encode_overrun_s{0};
    // Process CPU seconds (models::CpuTimer; not deterministic; reported apart from the CSVs).
    double cpu_gradient_s{0};
    double cpu_encode_s{0};
    double cpu_apply_s{0};
};

/// The replica view was evaluated on held-out prompts.
struct EvalEvent
{
    uint64_t version{0};
    double sim_time_s{0};
    double quality{0};
    double cpu_s{0};
};

/// A worker finished handling an update: applied it, or (hash_ok false) replayed it into a state
/// whose hash differs from the learner's, rejected it and started a resync.
struct ApplyEvent
{
    uint32_t worker{0};
    uint64_t version{0};    // the version the worker now holds (hash_ok false: the one rejected)
    double received_s{0};   // whole update arrived
    double ready_s{0};      // decoded + replayed (or loaded): ready to sample
    bool hash_ok{true};     // false: the replayed state failed its hash check (version not held)
    bool via_resync{false}; // reached through a catch-up
    double overrun_s{0};    // real-time drivers: real decode + replay time past the modelled time
    double cpu_apply_s{0};  // real CPU seconds (not deterministic)
};

/// A worker finished applying a catch-up from the learner: a snapshot (when the learner sent one)
/// and the ring's updates after it. Versions between from_version and snapshot_version were
/// skipped through the snapshot; those after it were replayed (and reported as ApplyEvents).
struct CatchUpEvent
{
    uint32_t worker{0};
    uint64_t from_version{0};     // the version held before
    int64_t snapshot_version{-1}; // the snapshot restored; -1: none
    uint64_t to_version{0};       // the version held after
    double done_s{0};
    bool ok{true}; // false: an update of the catch-up failed its checks (another resync follows)
};

/// A worker finished a rollout and sent its trajectories.
struct RolloutEvent
{
    uint32_t worker{0};
    uint64_t round{0};
    uint64_t behaviour_version{0};
    double started_s{0};
    double done_s{0};
    uint64_t real_bytes{0};
    uint64_t wire_bytes{0};
    double cpu_s{0};
    double overrun_s{0}; // real-time drivers: real sampling time past the modelled rollout time
};

} // namespace hilosim

#endif // HILOSIM_ROLES_ROLE_EVENTS_H
