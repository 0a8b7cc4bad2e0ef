#include "sim/drivers/emulation/emulated-link-faults.h"

#include "sim/run/arm-context-builder.h"

#include "ns3/simulator.h"

#include <algorithm>

namespace hilosim
{
namespace
{

// The simulator's fault streams (sim/drivers/ns3/arm-runner.cc: the topology's stream base +
// 1000000).
constexpr int64_t kFaultStreamOffset = 1000000;

} // namespace

EmulatedLinkFaults::EmulatedLinkFaults(const ResolvedScenario& scenario, const Topology& topology)
{
    const std::vector<uint32_t> order = TopologyWorkerOrder(scenario);
    std::vector<uint32_t> topology_index(order.size(), 0);
    for (uint32_t t = 0; t < order.size(); ++t)
        topology_index[order[t]] = t;
    const int64_t stream_base = ScenarioTopologySpec(scenario).rng_stream_base + kFaultStreamOffset;
    const auto& links = topology.GetLinks();
    for (size_t i = 0; i < scenario.faults.size(); ++i)
    {
        const ResolvedFault& f = scenario.faults[i];
        if (f.kind != FaultKind::kLinkDown && f.kind != FaultKind::kLossBurst &&
            f.kind != FaultKind::kCorrupt)
            continue;
        const InstalledLink* link = nullptr;
        switch (f.target)
        {
            case FaultTargetKind::kWorkerLink:
                link = &topology.GetWorkerLink(topology_index.at(f.index));
                break;
            case FaultTargetKind::kRegionWan:
                link = &topology.GetRegionWan(f.index);
                break;
            case FaultTargetKind::kUplink:
                link = topology.GetLearnerUplink();
                break;
            default:
                break;
        }
        if (link == nullptr)
            continue; // the validator gives every link fault a link
        // One random stream per device, fixed by the link's place in the topology.
        const int64_t position = link - links.data();
        m_faults.push_back(
            {i,
             f,
             {LinkFaultModel::InstallOn(link->device_a, stream_base + 2 * position),
              LinkFaultModel::InstallOn(link->device_b, stream_base + 2 * position + 1)}});
    }
}

void
EmulatedLinkFaults::ScheduleFromNow(double delay_s)
{
    for (size_t k = 0; k < m_faults.size(); ++k)
    {
        const ResolvedFault& f = m_faults[k].fault;
        const ns3::Time at = ns3::Seconds(std::max(0.0, delay_s + f.at.GetSeconds()));
        ns3::Simulator::Schedule(at, [this, k]() { Start(m_faults[k]); });
        if (f.duration)
            ns3::Simulator::Schedule(at + *f.duration, [this, k]() { End(m_faults[k]); });
    }
}

void
EmulatedLinkFaults::Start(const LinkFault& f)
{
    for (size_t k = 0; k < f.models.size(); ++k)
    {
        if (!FaultActsOnDevice(f.fault, /*learner_side=*/k == 0))
            continue; // a one-way fault
        const auto& model = f.models[k];
        if (f.fault.kind == FaultKind::kLinkDown)
            model->StartOutage(f.id);
        else if (f.fault.kind == FaultKind::kLossBurst)
            model->StartLossBurst(f.id, f.fault.rate);
        else
            model->StartCorruption(f.id, f.fault.rate, f.fault.after_tcp);
    }
}

void
EmulatedLinkFaults::End(const LinkFault& f)
{
    for (size_t k = 0; k < f.models.size(); ++k)
        if (FaultActsOnDevice(f.fault, /*learner_side=*/k == 0))
            f.models[k]->End(f.id);
}

uint64_t
EmulatedLinkFaults::CorruptedSegments() const
{
    std::vector<LinkFaultModel*> seen;
    uint64_t n = 0;
    for (const LinkFault& f : m_faults)
    {
        for (const auto& model : f.models)
        {
            if (std::find(seen.begin(), seen.end(), model.operator->()) != seen.end())
                continue;
            seen.push_back(model.operator->());
            n += model->GetCorrupted();
        }
    }
    return n;
}

} // namespace hilosim
