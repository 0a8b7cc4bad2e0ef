// faults: kinds, times, targets, and what only the whole list shows (joins, overlapping downs).
#include "sim/scenario/scenario-checker.h"

#include <algorithm>
#include <map>

namespace hilosim
{
namespace scenario_check
{

namespace
{

const std::vector<std::string> kFaultKinds = {"worker_crash",   "worker_join", "link_down",
                                              "loss_burst",     "corrupt",     "replay_divergence",
                                              "learner_restart"};
// Fault.direction, in LinkDirection's order.
const std::vector<std::string> kDirections = {"both", "down", "up"};

} // namespace

bool
Checker::CheckFaultTarget(const Node& fn, const Fault& f, const ResolvedScenario& sc,
                          ResolvedFault* out)
{
    const std::string& t = f.target();
    out->target_text = t;
    const bool link = f.kind() == "link_down" || f.kind() == "loss_burst" || f.kind() == "corrupt";
    const bool learner = f.kind() == "learner_restart";
    const std::string allowed =
        learner ? "\"learner\""
        : link  ? "\"worker:N\" (a worker's access link), \"region:NAME\" (a region's WAN link) "
                  "or \"uplink\" (the learner uplink)"
                : "\"worker:N\" with N a worker index";
    auto bad = [&](const std::string& why)
    {
        Error(fn, "target", (t.empty() ? std::string("missing") : why) + "; allowed: " + allowed);
        return false;
    };
    if (learner)
    {
        if (t != "learner")
            return bad("a learner_restart hits the learner, not \"" + t + "\"");
        out->target = FaultTargetKind::kLearner;
        return true;
    }
    if (t.rfind("worker:", 0) == 0)
    {
        const std::string digits = t.substr(7);
        const bool numeric =
            !digits.empty() && digits.size() <= 6 &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!numeric)
            return bad("bad worker index in \"" + t + "\"");
        const uint64_t w = std::stoull(digits);
        if (w >= sc.workers.size())
        {
            return bad("worker " + digits + " does not exist (the scenario has " +
                       std::to_string(sc.workers.size()) + " workers, 0-based)");
        }
        out->target = link ? FaultTargetKind::kWorkerLink : FaultTargetKind::kWorker;
        out->index = static_cast<uint32_t>(w);
        return true;
    }
    if (!link)
        return bad("\"" + t + "\" is not a worker");
    if (t == "uplink")
    {
        if (!sc.network.learner_uplink)
            return bad("the scenario has no network.learner_uplink");
        out->target = FaultTargetKind::kUplink;
        return true;
    }
    if (t.rfind("region:", 0) == 0)
    {
        const std::string name = t.substr(7);
        for (size_t r = 0; r < sc.network.regions.size(); ++r)
        {
            if (sc.network.regions[r].name == name)
            {
                out->target = FaultTargetKind::kRegionWan;
                out->index = static_cast<uint32_t>(r);
                return true;
            }
        }
        return bad("no region named \"" + name + "\"");
    }
    return bad("unknown target \"" + t + "\"");
}

void
Checker::CheckFaults(const Node& root, const Scenario& s, const ResolvedScenario& sc,
                     std::vector<ResolvedFault>* out)
{
    // Field by field first; then what only the whole list can tell (joins, overlapping downs).
    std::vector<std::pair<int, ResolvedFault>> resolved;
    for (int i = 0; i < s.faults_size(); ++i)
    {
        const Fault& f = s.faults(i);
        const Node fn = root.Child("faults", i);
        if (sc.network.model == NetworkModel::kFlow)
        {
            // The flow model has no packets to lose or connections to cut.
            Error(fn, "kind",
                  "faults need network.model: \"packet\"; the flow model cannot inject them");
            continue;
        }
        if (!Choice(fn, "kind", f.kind(), kFaultKinds, "fault kind"))
            continue;
        ResolvedFault rf;
        rf.kind = static_cast<FaultKind>(
            std::find(kFaultKinds.begin(), kFaultKinds.end(), f.kind()) - kFaultKinds.begin());
        bool ok = true;
        if (f.at().empty())
        {
            Error(fn, "at", "missing; allowed: a time >= 0, e.g. \"20s\"");
            ok = false;
        }
        else
        {
            auto at = hilosim::ParseTime(f.at());
            if (at.ok() && sc.max_sim_time.IsStrictlyPositive() && *at >= sc.max_sim_time)
            {
                Error(fn, "at",
                      "\"" + f.at() + "\" is not before mode.max_sim_time (\"" +
                          s.mode().max_sim_time() +
                          "\"): the fault would never happen; allowed: a time in [0, "
                          "max_sim_time)");
                ok = false;
            }
            else if (at.ok())
                rf.at = *at;
            else
            {
                Error(fn, "at", at.status().message());
                ok = false;
            }
        }
        ok &= CheckFaultTarget(fn, f, sc, &rf);
        const bool link = rf.kind == FaultKind::kLinkDown || rf.kind == FaultKind::kLossBurst ||
                          rf.kind == FaultKind::kCorrupt;
        auto unused = [&](const char* field, bool set)
        {
            if (!set)
                return true;
            Error(fn, field, std::string("does not apply to a ") + f.kind() + " fault; remove it");
            return false;
        };
        if (link)
            ok &= PositiveTime(fn, "duration", f.duration(), &rf.duration);
        else
            ok &= unused("duration", !f.duration().empty());
        if (rf.kind == FaultKind::kWorkerCrash || rf.kind == FaultKind::kLearnerRestart)
        {
            ok &= PositiveTime(fn, "restart_after", f.restart_after(), &rf.restart_after);
            if (rf.kind == FaultKind::kLearnerRestart && f.restart_after().empty())
            {
                Error(fn, "restart_after",
                      "missing: how long the learner is down, > 0 (e.g. \"5s\")");
                ok = false;
            }
        }
        else
        {
            ok &= unused("restart_after", !f.restart_after().empty());
        }
        if (rf.kind == FaultKind::kLossBurst || rf.kind == FaultKind::kCorrupt)
        {
            ok &= DoubleIn(fn, "rate", f.rate(), 0, true, 1, false);
            rf.rate = f.rate();
        }
        else
        {
            ok &= unused("rate", f.rate() != 0);
        }
        if (link && !f.direction().empty())
        {
            if (Choice(fn, "direction", f.direction(), kDirections, "direction"))
                rf.direction = static_cast<LinkDirection>(
                    std::find(kDirections.begin(), kDirections.end(), f.direction()) -
                    kDirections.begin());
            else
                ok = false;
        }
        else if (!link)
        {
            ok &= unused("direction", !f.direction().empty());
        }
        if (rf.kind == FaultKind::kCorrupt)
            rf.after_tcp = f.after_tcp();
        else
            ok &= unused("after_tcp", f.after_tcp());
        if (ok)
            resolved.emplace_back(i, std::move(rf));
    }

    const auto where = [&](int j)
    {
        return "faults[" + std::to_string(j) + "] (line " +
               std::to_string(root.Child("faults", j).line()) + ")";
    };
    // A worker joins at most once, and nothing hits it before it has joined.
    std::map<uint32_t, int> join_of; // worker -> index into `resolved`
    for (size_t k = 0; k < resolved.size(); ++k)
    {
        const auto& [i, rf] = resolved[k];
        if (rf.kind != FaultKind::kWorkerJoin)
            continue;
        auto [it, inserted] = join_of.emplace(rf.index, static_cast<int>(k));
        if (!inserted)
        {
            Error(root.Child("faults", i), "target",
                  "worker " + std::to_string(rf.index) + " already joins in " +
                      where(resolved[it->second].first) + "; a worker joins once");
        }
    }
    // Intervals in which a worker (or the learner) is down after a crash.
    struct Down
    {
        ns3::Time from;
        std::optional<ns3::Time> until; // none: for good
        int fault;
    };
    std::map<uint32_t, std::vector<Down>> downs;
    std::vector<Down> learner_downs;
    std::vector<size_t> by_time(resolved.size());
    for (size_t k = 0; k < by_time.size(); ++k)
        by_time[k] = k;
    std::stable_sort(by_time.begin(), by_time.end(),
                     [&](size_t a, size_t b)
                     { return resolved[a].second.at < resolved[b].second.at; });
    std::vector<bool> keep(resolved.size(), false);
    for (size_t k : by_time)
    {
        const auto& [i, rf] = resolved[k];
        const Node fn = root.Child("faults", i);
        bool ok = true;
        if (rf.target == FaultTargetKind::kWorker && rf.kind != FaultKind::kWorkerJoin)
        {
            auto join = join_of.find(rf.index);
            if (join != join_of.end() && rf.at < resolved[join->second].second.at)
            {
                Error(fn, "at",
                      "worker " + std::to_string(rf.index) + " is absent until it joins at " +
                          s.faults(resolved[join->second].first).at() + " (" +
                          where(resolved[join->second].first) + "); nothing to hit before that");
                continue;
            }
            for (const Down& d : downs[rf.index])
            {
                if (rf.at >= d.from && (!d.until || rf.at < *d.until))
                {
                    Error(fn, "at",
                          "worker " + std::to_string(rf.index) + " is down then (crashed in " +
                              where(d.fault) + (d.until ? ")" : ", never to restart)"));
                    ok = false;
                    break;
                }
            }
            if (ok && rf.kind == FaultKind::kWorkerCrash)
            {
                downs[rf.index].push_back({rf.at,
                                           rf.restart_after
                                               ? std::optional<ns3::Time>(rf.at + *rf.restart_after)
                                               : std::nullopt,
                                           i});
            }
        }
        if (rf.kind == FaultKind::kLearnerRestart)
        {
            for (const Down& d : learner_downs)
            {
                if (rf.at >= d.from && rf.at < *d.until)
                {
                    Error(fn, "at",
                          "the learner is down then (restarting in " + where(d.fault) + ")");
                    ok = false;
                    break;
                }
            }
            if (ok)
                learner_downs.push_back({rf.at, rf.at + *rf.restart_after, i});
        }
        keep[k] = ok;
    }
    for (size_t k = 0; k < resolved.size(); ++k)
    {
        if (keep[k])
            out->push_back(std::move(resolved[k].second));
    }
}

} // namespace scenario_check
} // namespace hilosim
