// NodePause: a node's process stopped (SIGSTOP) and continued (SIGCONT) a while later, as hilo-emu
// --pause does in chaos runs: a hung or descheduled process whose connections stay open, which
// its peers can tell from a crash only by its silence. A slowed node (hilo-emu --slow) is stopped
// and continued in turn, running one tenth of the time: a slow reader, whose peers' sends back up
// in their queues while it still answers now and then.
#ifndef HILOSIM_DRIVERS_PROCESS_NODE_PAUSE_H
#define HILOSIM_DRIVERS_PROCESS_NODE_PAUSE_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hilosim
{

struct NodePause
{
    enum Role
    {
        kLearner,
        kWorker,
        kRelay,
    };
    Role role{kWorker};
    uint32_t index{0}; // worker (topology order) or relay (region index); 0 for the learner
    double at_s{0};    // modelled seconds after the run's epoch
    double for_s{0};   // continued this long after
    bool slow{false};  // slowed for FOR seconds (stopped 9/10 of the time) rather than stopped
};

/// One signal of a pause or a slow window, at a time after the run's epoch.
struct PauseAction
{
    double at_s{0};
    bool stop{true}; // SIGSTOP; false: SIGCONT
    NodePause pause;
    bool quiet{false}; // a slow window's inner stop or continue: not logged
};

/// A slow window's period: the node runs for the first tenth of each.
constexpr double kSlowPeriodS = 0.2;

/// Every pause's stop and continue, and each slow window's stops and continues (a stop at AT + k x
/// kSlowPeriodS + kSlowPeriodS / 10, a continue at AT + (k + 1) x kSlowPeriodS, the last at
/// AT + FOR), in time order (stable).
std::vector<PauseAction> PauseSchedule(const std::vector<NodePause>& pauses);

/// "NODE:AT:FOR" with NODE one of learner, worker:N, relay:R and AT, FOR seconds >= 0 (FOR > 0).
/// InvalidArgument saying what is expected otherwise.
hilo::StatusOr<NodePause> ParseNodePause(const std::string& text);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_NODE_PAUSE_H
