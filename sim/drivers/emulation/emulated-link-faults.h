// EmulatedLinkFaults: the scenario's link faults (link_down, loss_burst, corrupt) inside
// hilo-netem, by the simulator's own LinkFaultModel (sim/net/link-fault-model.h) on both devices of
// the target link, with the random streams the simulator gives them. Real kernel TCP then meets the
// outage, the losses or the damaged segments. Fault times are modelled seconds after the run's
// epoch (steady clock, which hilo-emu sends once every node is ready); hilo-netem's real-time
// simulator starts and ends each fault at that moment.
#ifndef HILOSIM_DRIVERS_EMULATION_EMULATED_LINK_FAULTS_H
#define HILOSIM_DRIVERS_EMULATION_EMULATED_LINK_FAULTS_H

#include "sim/net/link-fault-model.h"
#include "sim/net/topology.h"
#include "sim/scenario/resolved-scenario.h"

#include "ns3/ptr.h"

#include <cstdint>
#include <vector>

namespace hilosim
{

class EmulatedLinkFaults
{
  public:
    /// Installs an idle LinkFaultModel on both devices of every link a link fault of `scenario`
    /// targets. REQUIRES: `topology` was built from `scenario` and outlives this object.
    EmulatedLinkFaults(const ResolvedScenario& scenario, const Topology& topology);

    /// Number of link faults in the scenario.
    size_t size() const { return m_faults.size(); }

    /// Schedules every link fault at its time after an epoch `delay_s` seconds from now (the
    /// simulator's clock). REQUIRES: called in the simulator's context, once.
    void ScheduleFromNow(double delay_s);

    /// TCP data segments the corrupt faults damaged so far.
    uint64_t CorruptedSegments() const;

  private:
    struct LinkFault
    {
        size_t id; // index in the scenario's faults
        ResolvedFault fault;
        // {learner side, far side}; a one-way fault acts on one (FaultActsOnDevice)
        std::vector<ns3::Ptr<LinkFaultModel>> models;
    };
    void Start(const LinkFault& f);
    void End(const LinkFault& f);

    std::vector<LinkFault> m_faults;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_EMULATED_LINK_FAULTS_H
