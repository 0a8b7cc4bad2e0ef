// ArmContext: everything the roles of one arm share: the learning workload, the sync
// configuration, the modelled LLM and GPUs, and the scale factors between the tiny real model and
// the modelled one. Built once per arm (sim/run/arm-context-builder.h); read-only for the roles
// except the workload, which they call one at a time (the simulator runs every role on one thread
// in simulated-time order; a process holds one role and so its own context).
#ifndef HILOSIM_ROLES_ARM_CONTEXT_H
#define HILOSIM_ROLES_ARM_CONTEXT_H

#include "hilo/core/adapter-layout.h"
#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"
#include "hilo/sync/replica-group.h"
#include "hilo/sync/sync-strategy.h"
#include "models/compute-model.h"
#include "models/gpu-node.h"
#include "models/gpu-profile.h"
#include "models/llm-profile.h"
#include "models/workload.h"
#include "sim/roles/rollout-cache.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

struct ArmContext
{
    std::string arm;                            // arm name, for messages
    std::unique_ptr<models::Workload> workload; // the real model (shared by every node)
    // Rollouts batched across the workers that share an adapter version (simulation: every role
    // in one process). Null: every worker samples on its own (a process holds one worker).
    std::shared_ptr<RolloutCache> rollout_cache;
    // The workers' replicas share the states that are bit-identical by construction
    // (hilo/sync/replica-group.h; simulation). Null: each replica holds its own.
    std::shared_ptr<hilo::ReplicaGroup> replica_group;
    hilo::SyncSpec sync;
    hilo::OptimizerConfig optimizer;
    hilo::AdapterState initial; // version 0, identical everywhere

    uint32_t steps{0};         // versions to publish
    uint32_t eval_every{0};    // evaluate the replica view every this many versions (and last)
    uint32_t max_staleness{0}; // 0: synchronous on-policy
    double round_timeout_s{0}; // a round's deadline (mode.round_timeout); 0: none
    uint32_t workers{0};

    // Timing model. `llm` is the modelled LLM (or a profile of the tiny model itself when the
    // scenario names none); GPU times come from models/compute-model.h.
    models::LlmProfile llm;
    models::ComputeOptions compute;
    models::GpuNode learner_gpu;
    std::vector<models::GpuNode> worker_gpus; // one per worker
    int64_t training_rank{0};
    hilo::AdapterLayout modelled_layout; // the modelled adapter (for encode cost)
    int64_t modelled_numel{0};
    int64_t modelled_adapter_bytes{0}; // modelled numel x 2
    // The modelled adapter as a tensor-parallel node holds it: parameters (decode + replay) and
    // bf16 bytes (full-sync load), with the part every GPU replicates.
    models::AdapterShards modelled_shards{0};
    models::AdapterShards modelled_byte_shards{0};
    double adapter_scale{1.0};         // modelled numel / real numel: parameter wire scale
    int64_t modelled_prompt_tokens{0}; // per sequence; 0: the real count
    int64_t modelled_gen_tokens{0};    // per sequence; 0: the real count
    // Wire bytes per real byte of an update frame: adapter_scale, or under budget_transfer
    // "directions" with a rank-based compressor the modelled adapter's per-direction bytes over
    // the learner's (hilo/compress/budget-regime.h), so the wire carries the modelled budget.
    double update_wire_scale{1.0};
    // The arm's budget on the modelled adapter (payload bytes per update); 0: unlimited.
    int64_t modelled_budget_bytes{0};

    /// Wire bytes of a message whose real size is `real_bytes`, scaled by `scale` (never below
    /// the real size: the real bytes always travel).
    static uint64_t WireBytes(uint64_t real_bytes, double scale);
};

} // namespace hilosim

#endif // HILOSIM_ROLES_ARM_CONTEXT_H
