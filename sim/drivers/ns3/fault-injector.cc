#include "sim/drivers/ns3/fault-injector.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace hilosim
{

FaultInjector::FaultInjector(const std::vector<ResolvedFault>& faults, const Topology& topology,
                             const std::vector<uint32_t>& topology_index,
                             ns3::Ptr<LearnerApp> learner,
                             const std::vector<ns3::Ptr<WorkerApp>>& workers, int64_t stream_base,
                             std::vector<FaultRecord>* records, Listener listener)
  : m_faults(faults)
  , m_topology(topology)
  , m_topologyIndex(topology_index)
  , m_learner(learner)
  , m_workers(workers)
  , m_streamBase(stream_base)
  , m_records(records)
  , m_listener(std::move(listener))
{
    m_records->clear();
    for (const ResolvedFault& f : m_faults)
    {
        FaultRecord r;
        r.kind = FaultKindName(f.kind);
        r.target = f.target_text;
        r.start_s = f.at.GetSeconds();
        switch (f.target)
        {
            case FaultTargetKind::kWorker:
            case FaultTargetKind::kWorkerLink:
                r.workers.push_back(m_topologyIndex.at(f.index));
                break;
            case FaultTargetKind::kRegionWan:
                r.workers = m_topology.GetRegionWorkers(f.index);
                break;
            case FaultTargetKind::kUplink:
            case FaultTargetKind::kLearner:
                for (uint32_t w = 0; w < m_workers.size(); ++w)
                {
                    r.workers.push_back(w);
                }
                break;
        }
        m_records->push_back(r);
    }
}

std::set<uint32_t>
FaultInjector::LateWorkers() const
{
    std::set<uint32_t> late;
    for (const ResolvedFault& f : m_faults)
    {
        if (f.kind == FaultKind::kWorkerJoin)
        {
            late.insert(m_topologyIndex.at(f.index));
        }
    }
    return late;
}

bool
FaultInjector::NeedsChecksums() const
{
    for (const ResolvedFault& f : m_faults)
    {
        if (f.kind == FaultKind::kCorrupt)
        {
            return true;
        }
    }
    return false;
}

bool
FaultInjector::NeedsCheckpoints() const
{
    for (const ResolvedFault& f : m_faults)
    {
        if (f.kind == FaultKind::kLearnerRestart)
        {
            return true;
        }
    }
    return false;
}

std::vector<ns3::Ptr<LinkFaultModel>>
FaultInjector::ModelsFor(const ResolvedFault& f)
{
    const InstalledLink* link = nullptr;
    switch (f.target)
    {
        case FaultTargetKind::kWorkerLink:
            link = &m_topology.GetWorkerLink(m_topologyIndex.at(f.index));
            break;
        case FaultTargetKind::kRegionWan:
            link = &m_topology.GetRegionWan(f.index);
            break;
        case FaultTargetKind::kUplink:
            link = m_topology.GetLearnerUplink();
            break;
        default:
            break;
    }
    NS_ABORT_MSG_IF(link == nullptr,
                    "FaultInjector: fault on " << f.target_text << " has no link to act on");
    // One random stream per device, fixed by the link's place in the topology.
    const auto& links = m_topology.GetLinks();
    const int64_t position = link - links.data();
    std::vector<ns3::Ptr<LinkFaultModel>> models = {
        LinkFaultModel::InstallOn(link->device_a, m_streamBase + 2 * position),
        LinkFaultModel::InstallOn(link->device_b, m_streamBase + 2 * position + 1)};
    for (const auto& model : models)
    {
        if (std::find(m_models.begin(), m_models.end(), model) == m_models.end())
        {
            m_models.push_back(model);
        }
    }
    return models;
}

uint64_t
FaultInjector::CorruptedSegments() const
{
    uint64_t n = 0;
    for (const auto& model : m_models)
    {
        n += model->GetCorrupted();
    }
    return n;
}

void
FaultInjector::Schedule()
{
    for (size_t i = 0; i < m_faults.size(); ++i)
    {
        const ResolvedFault& f = m_faults[i];
        if (f.kind == FaultKind::kLinkDown || f.kind == FaultKind::kLossBurst ||
            f.kind == FaultKind::kCorrupt)
        {
            ModelsFor(f); // installed now, idle until the fault starts
        }
        ns3::Simulator::Schedule(f.at, &FaultInjector::Start, this, i);
    }
}

void
FaultInjector::Start(size_t i)
{
    const ResolvedFault& f = m_faults[i];
    FaultRecord& r = (*m_records)[i];
    r.injected = true;
    r.start_s = ns3::Simulator::Now().GetSeconds();
    const uint32_t w = f.target == FaultTargetKind::kWorker ? m_topologyIndex.at(f.index) : 0;
    switch (f.kind)
    {
        case FaultKind::kWorkerCrash:
            m_workers.at(w)->Crash();
            m_listener.worker_down(w, f.restart_after.has_value());
            if (f.restart_after)
            {
                ns3::Simulator::Schedule(*f.restart_after, &FaultInjector::End, this, i);
            }
            break;
        case FaultKind::kWorkerJoin:
            m_workers.at(w)->Join();
            r.end_s = r.start_s;
            m_listener.worker_up(w);
            break;
        case FaultKind::kReplayDivergence:
            m_workers.at(w)->DivergeNextReplay();
            break;
        case FaultKind::kLearnerRestart:
            m_learner->Crash();
            ns3::Simulator::Schedule(*f.restart_after, &FaultInjector::End, this, i);
            break;
        case FaultKind::kLinkDown:
        case FaultKind::kLossBurst:
        case FaultKind::kCorrupt:
        {
            const auto models = ModelsFor(f);
            m_dropBase[i] = {models[0]->GetFaultDrops(), models[1]->GetFaultDrops()};
            for (size_t k = 0; k < models.size(); ++k)
            {
                if (!FaultActsOnDevice(f, /*learner_side=*/k == 0))
                {
                    continue; // a one-way fault leaves this direction alone
                }
                const auto& model = models[k];
                if (f.kind == FaultKind::kLinkDown)
                    model->StartOutage(i);
                else if (f.kind == FaultKind::kLossBurst)
                    model->StartLossBurst(i, f.rate);
                else
                    model->StartCorruption(i, f.rate, f.after_tcp);
            }
            if (f.duration)
            {
                ns3::Simulator::Schedule(*f.duration, &FaultInjector::End, this, i);
            }
            break;
        }
    }
}

void
FaultInjector::End(size_t i)
{
    const ResolvedFault& f = m_faults[i];
    (*m_records)[i].end_s = ns3::Simulator::Now().GetSeconds();
    switch (f.kind)
    {
        case FaultKind::kWorkerCrash:
        {
            const uint32_t w = m_topologyIndex.at(f.index);
            m_workers.at(w)->Restart();
            m_listener.worker_up(w);
            break;
        }
        case FaultKind::kLearnerRestart:
            m_learner->Restart();
            break;
        case FaultKind::kLinkDown:
        case FaultKind::kLossBurst:
        case FaultKind::kCorrupt:
        {
            const auto models = ModelsFor(f);
            for (size_t k = 0; k < models.size(); ++k)
            {
                if (FaultActsOnDevice(f, /*learner_side=*/k == 0))
                {
                    models[k]->End(i);
                }
            }
            CountDrops(i);
            break;
        }
        default:
            break;
    }
}

void
FaultInjector::CountDrops(size_t i)
{
    auto base = m_dropBase.find(i);
    if (base == m_dropBase.end())
    {
        return;
    }
    const auto models = ModelsFor(m_faults[i]);
    FaultRecord& r = (*m_records)[i];
    r.dropped_up += models[0]->GetFaultDrops() - base->second.first;
    r.dropped_down += models[1]->GetFaultDrops() - base->second.second;
    m_dropBase.erase(base);
}

void
FaultInjector::FinishRecords()
{
    while (!m_dropBase.empty())
    {
        CountDrops(m_dropBase.begin()->first); // link faults that lasted to the end
    }
}

void
FaultInjector::OnHashMismatch(uint32_t worker, double now)
{
    for (size_t i = 0; i < m_faults.size(); ++i)
    {
        FaultRecord& r = (*m_records)[i];
        if (m_faults[i].kind == FaultKind::kReplayDivergence && r.injected && r.end_s < 0 &&
            r.workers.front() == worker)
        {
            r.end_s = now;
        }
    }
}

} // namespace hilosim
