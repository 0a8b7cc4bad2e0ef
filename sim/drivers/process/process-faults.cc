#include "sim/drivers/process/process-faults.h"

#include "sim/run/arm-context-builder.h"

#include <algorithm>

namespace hilosim
{

ProcessFaults::ProcessFaults(const ResolvedScenario& scenario)
  : m_scenario(scenario)
{
    const std::vector<uint32_t> order = TopologyWorkerOrder(scenario);
    m_topologyIndex.assign(order.size(), 0);
    for (uint32_t t = 0; t < order.size(); ++t)
    {
        m_topologyIndex[order[t]] = t;
    }
    m_diverge.assign(order.size(), {});
    for (size_t i = 0; i < scenario.faults.size(); ++i)
    {
        const ResolvedFault& f = scenario.faults[i];
        if (f.kind == FaultKind::kLearnerRestart)
        {
            const double at = f.at.GetSeconds();
            m_learnerRestarts = true;
            m_actions.push_back({at, FaultAction::kKill, true, 0, i});
            m_actions.push_back(
                {at + f.restart_after->GetSeconds(), FaultAction::kStart, true, 0, i});
            continue;
        }
        if (f.target != FaultTargetKind::kWorker)
        {
            continue;
        }
        const uint32_t w = m_topologyIndex.at(f.index);
        const double at = f.at.GetSeconds();
        switch (f.kind)
        {
            case FaultKind::kWorkerCrash:
                m_actions.push_back({at, FaultAction::kKill, false, w, i});
                if (f.restart_after)
                    m_actions.push_back(
                        {at + f.restart_after->GetSeconds(), FaultAction::kStart, false, w, i});
                else
                    m_gone.insert(w);
                break;
            case FaultKind::kWorkerJoin:
                m_late.insert(w);
                m_actions.push_back({at, FaultAction::kStart, false, w, i});
                break;
            case FaultKind::kReplayDivergence:
                m_diverge[w].push_back(at);
                break;
            default:
                break;
        }
    }
    std::stable_sort(m_actions.begin(), m_actions.end(),
                     [](const FaultAction& a, const FaultAction& b) { return a.at_s < b.at_s; });
}

std::string
ProcessFaults::Unsupported(const std::string& network) const
{
    for (size_t i = 0; i < m_scenario.faults.size(); ++i)
    {
        const ResolvedFault& f = m_scenario.faults[i];
        const std::string what = "faults[" + std::to_string(i) + "] (" + FaultKindName(f.kind) +
                                 " at " + std::to_string(f.at.GetSeconds()) + " s on " +
                                 f.target_text + ")";
        switch (f.kind)
        {
            case FaultKind::kLinkDown:
            case FaultKind::kLossBurst:
            case FaultKind::kCorrupt:
                if (network != "ns3")
                    return what + ": a link fault needs emulated links; run it with "
                                  "--network ns3, or under hilo-sim";
                break;
            default:
                break;
        }
    }
    return "";
}

std::vector<FaultRecord>
ProcessFaults::Records() const
{
    std::vector<FaultRecord> records;
    for (const ResolvedFault& f : m_scenario.faults)
    {
        FaultRecord r;
        r.kind = FaultKindName(f.kind);
        r.target = f.target_text;
        r.start_s = f.at.GetSeconds();
        if (f.target == FaultTargetKind::kWorker || f.target == FaultTargetKind::kWorkerLink)
        {
            r.workers.push_back(m_topologyIndex.at(f.index));
        }
        else
        {
            for (uint32_t w = 0; w < m_topologyIndex.size(); ++w)
                r.workers.push_back(w);
        }
        records.push_back(r);
    }
    return records;
}

} // namespace hilosim
