#include "sim/scenario/resolved-scenario.h"

namespace hilosim
{

const char*
WorkloadKindName(WorkloadKind k)
{
    switch (k)
    {
        case WorkloadKind::kDistill:
            return "distill";
        case WorkloadKind::kGrpo:
            return "grpo";
    }
    return "?";
}

const char*
NetworkModelName(NetworkModel model)
{
    switch (model)
    {
        case NetworkModel::kPacket:
            return "packet";
        case NetworkModel::kFlow:
            return "flow";
    }
    return "?";
}

} // namespace hilosim
