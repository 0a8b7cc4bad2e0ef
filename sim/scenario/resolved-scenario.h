// ResolvedScenario: a validated scenario in typed values (DataRate, Time, byte counts, hilo's
// OptimizerConfig and SyncSpec), the one form the simulator reads. Produced only by the scenario
// loader (sim/scenario/scenario-loader.h) after every check passed, so consumers may rely on the
// ranges documented in sim/scenario/scenario.proto without checking again. Defaults are already
// filled in. Units: rates in ns3::DataRate (bit/s), times in ns3::Time, sizes in bytes. Links are
// the network layer's own hilosim::LinkSpec, so they feed TopologySpec without conversion.
#ifndef HILOSIM_SCENARIO_RESOLVED_SCENARIO_H
#define HILOSIM_SCENARIO_RESOLVED_SCENARIO_H

#include "sim/net/link-spec.h"

#include "hilo/optim/optimizer-config.h"
#include "hilo/sync/sync-strategy.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

enum class WorkloadKind
{
    kDistill, // on-policy distillation to a planted teacher; quality = reverse KL (lower is better)
    kGrpo,    // reward-guided GRPO; quality = mean reward (higher is better)
};

const char* WorkloadKindName(WorkloadKind k);

struct ResolvedModelShape
{
    uint32_t vocab{0};
    uint32_t d_model{0};
    uint32_t layers{0};
    uint32_t heads{0};
    uint32_t context{0}; // tokens
};

struct ResolvedWorkload
{
    WorkloadKind kind{WorkloadKind::kDistill};
    uint32_t steps{0}; // optimizer steps per arm
    ResolvedModelShape model;
    uint32_t lora_rank{0}; // the workload's rank; an arm may override (ResolvedArm)
    double lora_alpha{0};  // adapter output scaled by alpha / rank
    uint32_t prompts_per_worker{0};
    uint32_t group_size{0}; // completions per prompt
    uint32_t gen_tokens{0}; // tokens per completion
    double temperature{1.0};
    std::string teacher_kind;       // distill only: "planted" or "finetuned"
    uint32_t teacher_delta_rank{0}; // distill only, planted
    double teacher_decay{0};        // distill only: sigma_k = decay^k * sigma_0
    // grpo only: the task (scenario.proto, Grpo): "residue" (prompt stride or not) or
    // "randomwalks".
    std::string grpo_task;
    bool grpo_prompt_stride{true}; // "residue_stride" (true) or "residue_chain" (stride 1)
    uint32_t grpo_modulus{0};      // K
    double grpo_entropy_coef{0};
    uint32_t eval_prompts{0};
    uint32_t eval_every{0}; // steps
    double clip_norm{0};    // 0 = no clipping
    // Per modelled sequence; modelled_gen_tokens 0: timing uses the real token counts.
    uint32_t modelled_prompt_tokens{0};
    uint32_t modelled_gen_tokens{0};
};

struct ResolvedRegion
{
    std::string name;
    hilosim::LinkSpec wan; // shared region <-> core link
    hilosim::LinkSpec lan; // per-worker link inside the region (before group overrides)
};

/// One rollout worker (groups expanded, in group order).
struct ResolvedWorker
{
    uint32_t index{0};          // 0-based over all workers
    uint32_t group{0};          // index into Scenario.workers
    std::string gpu;            // GPU profile name
    uint32_t gpus{1};           // GPUs of the worker node
    std::string parallel{"tp"}; // "tp" or "dp" (models::ParseNodeParallel)
    std::string region;         // empty under the star topology
    int32_t region_index{-1};   // index into ResolvedNetwork::regions; -1 under star
    hilosim::LinkSpec link;     // the worker's own access link (star: WAN; regions/relay: LAN)
};

enum class NetworkModel
{
    kPacket, // ns-3 TCP, segment by segment
    kFlow,   // max-min fair flows (sim/net/flow/)
};

/// "packet", "flow".
const char* NetworkModelName(NetworkModel model);

struct ResolvedNetwork
{
    TopologyKind topology{TopologyKind::kStar}; // sim/net/link-spec.h
    std::string tcp;      // as the scenario wrote it: "cubic", "TcpCubic", ...
    ns3::TypeId tcp_type; // the congestion control's ns-3 TypeId (ns3::TcpCubic, ...)
    std::optional<hilosim::LinkSpec> learner_uplink;
    std::vector<ResolvedRegion> regions; // empty under star
    NetworkModel model{NetworkModel::kPacket};
    std::string tcp_buffer{"auto"};      // as written
    uint64_t tcp_buffer_bytes{0};        // 0: "auto" (sized per path); else the fixed send buffer
    bool relay_store_and_forward{false}; // relay: forward whole updates instead of streaming
    bool slow_start_after_idle{true};    // Linux's net.ipv4.tcp_slow_start_after_idle
};

struct ResolvedArm
{
    std::string name;
    hilo::SyncSpec sync;     // strategy, compressor + options, budget, error feedback
    std::string budget_text; // as written ("1.6%", "64KiB"; "unlimited" when empty)
    // A budget given as a size: payload bytes on the wire per update at the modelled scale
    // (with llm_profile the real compressor gets this / the adapter scale). 0 for a fraction or
    // no budget. sync.budget holds the size unconverted until the arm's context is built.
    uint64_t budget_wire_bytes{0};
    uint32_t training_rank{0}; // never 0: the workload's rank when the arm left it unset
};

enum class FaultKind
{
    kWorkerCrash,      // the worker loses all state; optionally restarts empty
    kWorkerJoin,       // the worker is absent until the fault's time
    kLinkDown,         // every packet on a link is lost
    kLossBurst,        // a link loses packets at a rate
    kCorrupt,          // a link flips a payload byte of data segments at a rate
    kReplayDivergence, // a worker's next replay yields a different state
    kLearnerRestart,   // the learner stops and restarts from its checkpoint
};

/// "worker_crash", "worker_join", "link_down", "loss_burst", "corrupt", "replay_divergence",
/// "learner_restart" (the scenario's spelling).
const char* FaultKindName(FaultKind kind);

/// What a fault hits.
enum class FaultTargetKind
{
    kWorker,     // a worker (worker kinds)
    kWorkerLink, // a worker's access link (link kinds)
    kRegionWan,  // a region's shared WAN link (link kinds)
    kUplink,     // the learner uplink (link kinds)
    kLearner,    // the learner (learner_restart)
};

/// Which way a link fault acts (Fault.direction).
enum class LinkDirection
{
    kBoth, // every packet crossing the link
    kDown, // packets travelling away from the learner
    kUp,   // packets travelling towards the learner
};

struct ResolvedFault
{
    FaultKind kind{FaultKind::kLinkDown};
    ns3::Time at; // start, >= 0
    FaultTargetKind target{FaultTargetKind::kWorker};
    uint32_t index{0};                      // worker index (kWorker, kWorkerLink) or region index
    std::string target_text;                // as written: "worker:2", "region:eu", "uplink", ...
    std::optional<ns3::Time> duration;      // link kinds; none: until the run ends
    std::optional<ns3::Time> restart_after; // worker_crash (optional), learner_restart (set)
    double rate{0};                         // loss_burst, corrupt: probability in (0, 1]
    bool after_tcp{false};                  // corrupt: the flip passes TCP's checksum
    LinkDirection direction{LinkDirection::kBoth}; // link kinds
};

/// Whether link fault `f` acts on the packets its link's device on the learner side receives
/// (`learner_side`: packets travelling towards the learner) or on those the far side receives.
bool FaultActsOnDevice(const ResolvedFault& f, bool learner_side);

/// How an arm's budget reaches the tiny learner's compressor under an llm_profile (scenario.proto,
/// Scenario.budget_transfer).
enum class BudgetTransfer
{
    kFraction,   // the same fraction of the learner's adapter bytes
    kDirections, // the budget that buys the modelled rank-1 directions per factor matrix
};

struct ResolvedScenario
{
    std::string name;
    std::string description;
    uint64_t seed{0};
    ResolvedWorkload workload;
    /// lr.total_steps = workload.steps.
    hilo::OptimizerConfig optimizer;
    std::string llm_profile; // empty: no scaling
    std::string learner_gpu;
    uint32_t learner_gpus{1};
    std::string learner_parallel{"tp"};
    uint32_t learner_micro_batch_sequences{0}; // 0: one gradient pass over all sequences
    bool llm_lora_experts{false};              // the modelled adapter covers the routed experts
    std::vector<ResolvedWorker> workers;       // at least one
    ResolvedNetwork network;
    uint32_t max_staleness{0};         // 0 = synchronous on-policy
    ns3::Time max_sim_time;            // bound on each arm's simulated time (> 0)
    ns3::Time round_timeout;           // mode.round_timeout; zero: rounds have no deadline
    std::vector<ResolvedArm> arms;     // at least one, unique names
    std::vector<ResolvedFault> faults; // in scenario order
    // Problems that do not stop a run, one "FILE:LINE:COL: field: message" each (settings the
    // chosen network model ignores, a region without workers).
    std::vector<std::string> warnings;
    // How arms' budgets reach the tiny learner's compressor (Scenario.budget_transfer).
    BudgetTransfer budget_transfer{BudgetTransfer::kFraction};
};

} // namespace hilosim

#endif // HILOSIM_SCENARIO_RESOLVED_SCENARIO_H
