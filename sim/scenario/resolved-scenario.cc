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

} // namespace hilosim
