// GpuNode: a learner or worker machine of `gpus` identical GPUs and how it spreads one model over
// them. The compute models (compute-model.h) take a node; a plain GpuProfile converts to a
// one-GPU node.
//   kTensor   ("tp"): one serving/training engine over all the GPUs, Megatron-style tensor
//             parallelism: weights, KV cache and LoRA factors split across the GPUs (see
//             llm-profile.h for which LoRA factor is split and which replicated), FLOPs and memory
//             traffic divided among them, and two all-reduces of the activations per layer in the
//             forward pass (two more in the backward pass) over the node's interconnect.
//   kReplicas ("dp"): one engine per GPU, each with the whole model and adapter; a rollout's
//             sequences are dealt out among them, training is data-parallel (an all-reduce of the
//             adapter gradient per step), and every GPU decodes and replays each update.
#ifndef MODELS_GPU_NODE_H
#define MODELS_GPU_NODE_H

#include "models/gpu-profile.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace models
{

enum class NodeParallel
{
    kTensor,   // "tp"
    kReplicas, // "dp"
};

/// The scenario names of NodeParallel, in enum order: "tp", "dp".
const std::vector<std::string>& NodeParallelNames();
/// "tp" or "dp"; kInvalidArgument names the allowed values.
hilo::StatusOr<NodeParallel> ParseNodeParallel(const std::string& name);

struct GpuNode
{
    GpuProfile gpu;
    int64_t gpus{1};
    NodeParallel parallel{NodeParallel::kTensor};

    GpuNode() = default;
    // Implicit: a profile is a node of one GPU.
    GpuNode(GpuProfile profile, int64_t count = 1, NodeParallel how = NodeParallel::kTensor)
      : gpu(std::move(profile))
      , gpus(count)
      , parallel(how)
    {
    }

    /// GPUs one model is split across (gpus under kTensor, else 1).
    int64_t tp() const { return parallel == NodeParallel::kTensor ? gpus : 1; }
    /// Independent engines (gpus under kReplicas, else 1).
    int64_t replicas() const { return parallel == NodeParallel::kReplicas ? gpus : 1; }
    /// "A10G", "8 x A10G (tp)".
    std::string Describe() const;
};

/// A LoRA adapter's size as a node holds it: `numel` parameters, `replicated` of which every
/// tensor-parallel GPU keeps whole (LlmProfile::LoraReplicatedParams); the rest is split.
struct AdapterShards
{
    int64_t numel{0};
    int64_t replicated{0};

    // Implicit: a bare count is an adapter of which nothing is replicated.
    AdapterShards(int64_t n, int64_t replicated_numel = 0)
      : numel(n)
      , replicated(replicated_numel)
    {
    }

    /// Parameters the busiest GPU of `node` holds: replicated + ceil((numel - replicated) / tp).
    int64_t PerGpu(const GpuNode& node) const;
};

} // namespace models

#endif // MODELS_GPU_NODE_H
