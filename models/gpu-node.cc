#include "models/gpu-node.h"

#include <algorithm>

namespace models
{

const std::vector<std::string>&
NodeParallelNames()
{
    static const std::vector<std::string> kNames{"tp", "dp"};
    return kNames;
}

hilo::StatusOr<NodeParallel>
ParseNodeParallel(const std::string& name)
{
    if (name == "tp")
        return NodeParallel::kTensor;
    if (name == "dp")
        return NodeParallel::kReplicas;
    return hilo::Status::InvalidArgument(
        "unknown parallel mode '" + name +
        "'; allowed: tp (tensor parallel), dp (a replica per GPU)");
}

std::string
GpuNode::Describe() const
{
    if (gpus == 1)
        return gpu.name;
    return std::to_string(gpus) + " x " + gpu.name + " (" +
           NodeParallelNames()[static_cast<size_t>(parallel)] + ")";
}

int64_t
AdapterShards::PerGpu(const GpuNode& node) const
{
    const int64_t tp = std::max<int64_t>(1, node.tp());
    const int64_t kept = std::clamp<int64_t>(replicated, 0, numel);
    return kept + (numel - kept + tp - 1) / tp;
}

} // namespace models
