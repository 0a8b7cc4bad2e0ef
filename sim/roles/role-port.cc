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

} // namespace hilosim
