#include "sim/drivers/process/learner-wiring.h"

#include "sim/drivers/process/node-runner.h"
#include "sim/roles/peer-ids.h"

namespace hilosim
{

LearnerWiring::LearnerWiring(uint32_t workers, std::set<uint32_t> late, std::set<uint32_t> gone,
                             EventLogWriter* events, LearnerNodeActions actions)
  : m_workers(workers)
  , m_late(std::move(late))
  , m_gone(std::move(gone))
  , m_events(events)
  , m_actions(std::move(actions))
{
}

LearnerRoleOptions
LearnerWiring::RoleOptions(const std::string& checkpoint, bool restore) const
{
    LearnerRoleOptions lopt;
    std::vector<uint32_t> initial;
    for (uint32_t w = 0; w < m_workers; ++w)
    {
        if (m_late.count(w) == 0)
            initial.push_back(WorkerPeerId(w)); // a late joiner is waited for once it connects
    }
    lopt.members = initial;
    lopt.checkpoint_path = checkpoint;
    lopt.restore = restore;
    return lopt;
}

LearnerHooks
LearnerWiring::Hooks()
{
    LearnerHooks hooks;
    hooks.trajectories = [this](uint32_t, uint64_t, uint64_t) { m_actions.progress(); };
    hooks.member_dropped =
        [this](uint32_t worker, uint64_t, DropReason reason, const std::string& why)
    {
        m_actions.progress();
        m_actions.log("dropped worker " + std::to_string(worker) + " from its round: " + why);
        if (reason == DropReason::kNonFiniteGradient)
            m_actions.disconnect(WorkerPeerId(worker), why);
    };
    hooks.checkpoint_note = [this](const std::string& line) { m_actions.log(line); };
    hooks.resync_repeated = [this](uint32_t worker, uint64_t repeats)
    {
        m_actions.log("dropped " + std::to_string(repeats) +
                      " repeated resync request(s) from worker " + std::to_string(worker) +
                      " (one catch-up per connection and version; logged again at " +
                      std::to_string(repeats * 10) + ")");
    };
    hooks.published = [this](const PublishEvent& e)
    {
        m_actions.progress();
        if (m_events)
            m_events->Publish(e);
    };
    hooks.evaluated = [this](const EvalEvent& e)
    {
        if (m_events)
            m_events->Eval(e);
    };
    // Restored from the checkpoint: its version's publish (and eval) logged once, even when the
    // first learner was killed between writing the checkpoint and logging them.
    hooks.restored = [this](const PublishEvent& e)
    {
        if (!m_events)
            return;
        auto evaluated = m_events->Restored(e);
        if (!evaluated.ok())
            m_actions.finish(kExitRuntime, evaluated.status().message());
        else if (!*evaluated && m_role->EvaluatesAt(e.version))
            m_role->Evaluate();
    };
    hooks.worker_done = [this](uint32_t worker, uint64_t version, uint64_t hash)
    { WorkerDone(worker, version, hash); };
    return hooks;
}

void
LearnerWiring::WorkerDone(uint32_t worker, uint64_t version, uint64_t hash)
{
    const bool match = m_role->done_workers().at(worker);
    auto seen = m_doneBefore.find(worker);
    if (seen == m_doneBefore.end() || seen->second != match)
        m_actions.progress();
    m_doneBefore[worker] = match;
    if (m_events)
        m_events->Done(worker, version, hash, match);
    // Every worker still running at the end (not crashed for good) must hold the last version.
    for (uint32_t w = 0; w < m_workers; ++w)
    {
        if (m_gone.count(w) == 0 && m_role->done_workers().count(w) == 0)
            return;
    }
    std::vector<uint32_t> bad;
    for (const auto& [w, m] : m_role->done_workers())
    {
        if (!m)
            bad.push_back(w);
    }
    m_actions.finish(bad.empty() ? kExitOk : kExitRuntime,
                     bad.empty() ? ""
                                 : "workers " + ListIds(bad) +
                                       " ended at a state hash other than the learner's");
}

std::string
ListIds(const std::vector<uint32_t>& ids)
{
    std::string s;
    for (uint32_t id : ids)
        s += (s.empty() ? "" : ", ") + std::to_string(id);
    return s.empty() ? "none" : s;
}

} // namespace hilosim
