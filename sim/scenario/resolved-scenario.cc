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

bool
FaultActsOnDevice(const ResolvedFault& f, bool learner_side)
{
    switch (f.direction)
    {
        case LinkDirection::kDown:
            return !learner_side;
        case LinkDirection::kUp:
            return learner_side;
        case LinkDirection::kBoth:
            break;
    }
    return true;
}

const char*
FaultKindName(FaultKind kind)
{
    switch (kind)
    {
        case FaultKind::kWorkerCrash:
            return "worker_crash";
        case FaultKind::kWorkerJoin:
            return "worker_join";
        case FaultKind::kLinkDown:
            return "link_down";
        case FaultKind::kLossBurst:
            return "loss_burst";
        case FaultKind::kCorrupt:
            return "corrupt";
        case FaultKind::kReplayDivergence:
            return "replay_divergence";
        case FaultKind::kLearnerRestart:
            return "learner_restart";
    }
    return "?";
}

} // namespace hilosim
