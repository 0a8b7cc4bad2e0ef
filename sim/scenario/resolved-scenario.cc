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
TopologyName(Topology t)
{
    switch (t)
    {
        case Topology::kStar:
            return "star";
        case Topology::kRegions:
            return "regions";
        case Topology::kRelay:
            return "relay";
    }
    return "?";
}

} // namespace hilosim
