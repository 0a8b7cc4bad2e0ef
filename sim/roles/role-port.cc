#include "sim/roles/role-port.h"

namespace hilosim
{

const char*
ComputePhaseName(ComputePhase phase)
{
    switch (phase)
    {
        case ComputePhase::kRollout:
            return "rollout";
        case ComputePhase::kTrain:
            return "train";
        case ComputePhase::kEncode:
            return "encode";
        case ComputePhase::kApply:
            return "apply";
        case ComputePhase::kCatchUp:
            return "catch_up";
        case ComputePhase::kTransport:
            return "transport";
    }
    return "unknown";
}

hilo::Status
RolePort::Forward(uint32_t, uint64_t, const std::vector<uint32_t>&)
{
    return hilo::Status::NotSupported("this driver cannot forward a message while it arrives");
}

} // namespace hilosim
