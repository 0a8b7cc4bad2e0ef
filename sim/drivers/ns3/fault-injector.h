// FaultInjector: puts a scenario's faults (ResolvedScenario::faults) into one arm's simulation.
// Worker crashes, restarts and joins act on the WorkerApps, the learner's restart on the
// LearnerApp, divergence on a worker's next replay, and link faults on a LinkFaultModel installed
// on both devices of the target link. Every fault is recorded as a FaultRecord (start, end, the
// workers it affects) for the run's summary; the runner hears of workers going down and up.
//
// Worker numbers: scenario faults name workers in group order; the records, like workers.csv, use
// the topology's numbering (region by region), which the runner's order map translates.
#ifndef HILOSIM_DRIVERS_NS3_FAULT_INJECTOR_H
#define HILOSIM_DRIVERS_NS3_FAULT_INJECTOR_H

#include "sim/drivers/ns3/learner-app.h"
#include "sim/drivers/ns3/worker-app.h"
#include "sim/net/link-fault-model.h"
#include "sim/net/topology.h"
#include "sim/run/arm-result.h"
#include "sim/scenario/resolved-scenario.h"

#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace hilosim
{

class FaultInjector
{
  public:
    struct Listener
    {
        /// A worker's process died; `restarts`: it will start again.
        std::function<void(uint32_t worker, bool restarts)> worker_down;
        /// A worker started again after a crash, or joined.
        std::function<void(uint32_t worker)> worker_up;
    };

    /// `topology_index[s]`: the topology number of scenario worker s. `records` receives one
    /// FaultRecord per fault, in scenario order. Everything passed must outlive the simulation.
    FaultInjector(const std::vector<ResolvedFault>& faults, const Topology& topology,
                  const std::vector<uint32_t>& topology_index, ns3::Ptr<LearnerApp> learner,
                  const std::vector<ns3::Ptr<WorkerApp>>& workers, int64_t stream_base,
                  std::vector<FaultRecord>* records, Listener listener);

    /// The workers absent from the start (worker_join targets), topology numbering.
    std::set<uint32_t> LateWorkers() const;
    /// True when a fault corrupts bytes (the run needs ns-3 checksums on).
    bool NeedsChecksums() const;
    /// True when the learner restarts (it must write checkpoints).
    bool NeedsCheckpoints() const;

    /// Schedules every fault. REQUIRES: the applications are set up, before Simulator::Run;
    /// late workers were given DeferStart.
    void Schedule();
    /// A worker's replay failed its hash check at `now`: ends that worker's pending divergence.
    void OnHashMismatch(uint32_t worker, double now);
    /// TCP data segments the corrupt faults damaged so far.
    uint64_t CorruptedSegments() const;
    /// Counts the packets dropped by link faults still active (FaultRecord::dropped_up, _down).
    /// REQUIRES: the simulation has ended.
    void FinishRecords();

  private:
    void Start(size_t i);
    void End(size_t i);
    /// The models on the fault's link, {learner side, far side}, installed on both devices (a
    /// one-way fault acts on one: FaultActsOnDevice).
    std::vector<ns3::Ptr<LinkFaultModel>> ModelsFor(const ResolvedFault& f);
    /// Adds what link fault i's models dropped since it started to its record.
    void CountDrops(size_t i);

    std::vector<ResolvedFault> m_faults;
    const Topology& m_topology;
    std::vector<uint32_t> m_topologyIndex;
    ns3::Ptr<LearnerApp> m_learner;
    std::vector<ns3::Ptr<WorkerApp>> m_workers;
    int64_t m_streamBase;
    std::vector<FaultRecord>* m_records;
    Listener m_listener;
    std::vector<ns3::Ptr<LinkFaultModel>> m_models; // every model installed
    // Active link faults: their models' drop counts {learner side, far side} when they started.
    std::map<size_t, std::pair<uint64_t, uint64_t>> m_dropBase;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_NS3_FAULT_INJECTOR_H
