// LearnerWiring: how hilo-node wires a LearnerRole to the node around it, apart from sockets.
// The hooks report training progress to the stall watchdog (a batch accepted, a member dropped
// from a round, a version published, a worker newly at the last version; not chatter such as a
// repeated done), log drops and checkpoint notes, close the connection of a member whose batch
// made the gradient non-finite, write the event log, and end the node once every worker still
// running holds the last version (exit 0; exit 1 when one holds another state hash). A worker
// that joins late (scenario faults) is not a member from the start, and one that crashes for
// good is not waited for at the end.
// Used by the learner node (learner-node.cc) and by the learner-session fuzz target, which runs
// the same wiring without a transport.
#ifndef HILOSIM_DRIVERS_PROCESS_LEARNER_WIRING_H
#define HILOSIM_DRIVERS_PROCESS_LEARNER_WIRING_H

#include "sim/drivers/process/event-log.h"
#include "sim/roles/learner-role.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace hilosim
{

/// What the learner's hooks do to the node around them.
struct LearnerNodeActions
{
    std::function<void()> progress;              // training moved on (the stall watchdog's)
    std::function<void(const std::string&)> log; // a line for stderr
    std::function<void(uint32_t peer, const std::string& why)> disconnect;
    std::function<void(int code, const std::string& message)> finish; // end the node
};

class LearnerWiring
{
  public:
    /// `workers`: the arm's; `late`: the workers that join late (members once they connect);
    /// `gone`: those that crash for good (not waited for at the end). `events` may be null and
    /// must outlive the wiring.
    LearnerWiring(uint32_t workers, std::set<uint32_t> late, std::set<uint32_t> gone,
                  EventLogWriter* events, LearnerNodeActions actions);

    /// The role's options: its members from the start, and its checkpoint.
    LearnerRoleOptions RoleOptions(const std::string& checkpoint, bool restore) const;
    /// The hooks to build the role with. They use the role given to SetRole.
    LearnerHooks Hooks();
    /// REQUIRES: before any hook fires; `role` outlives the wiring's use.
    void SetRole(LearnerRole* role) { m_role = role; }
    /// `peer`'s connection ended: what its last done said is forgotten.
    void PeerClosed(uint32_t peer) { m_doneBefore.erase(peer); }

  private:
    void WorkerDone(uint32_t worker, uint64_t version, uint64_t hash);

    uint32_t m_workers;
    std::set<uint32_t> m_late;
    std::set<uint32_t> m_gone;
    EventLogWriter* m_events;
    LearnerNodeActions m_actions;
    LearnerRole* m_role{nullptr};
    std::map<uint32_t, bool> m_doneBefore; // what each connected worker's last done said
};

/// "1, 2, 3", or "none".
std::string ListIds(const std::vector<uint32_t>& ids);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_LEARNER_WIRING_H
