// NodePause: a node's process stopped (SIGSTOP) and continued (SIGCONT) a while later, as hilo-emu
// --pause does in chaos runs: a hung or descheduled process whose connections stay open, which
// its peers can tell from a crash only by its silence.
#ifndef HILOSIM_DRIVERS_PROCESS_NODE_PAUSE_H
#define HILOSIM_DRIVERS_PROCESS_NODE_PAUSE_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>

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
};

/// "NODE:AT:FOR" with NODE one of learner, worker:N, relay:R and AT, FOR seconds >= 0 (FOR > 0).
/// InvalidArgument saying what is expected otherwise.
hilo::StatusOr<NodePause> ParseNodePause(const std::string& text);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_NODE_PAUSE_H
