// ProcessFaults: what a scenario's `faults` mean for an arm run as processes (hilo-emu, hilo-node),
// as the simulator's fault injector reads them: which workers start late (worker_join), which are
// gone at the end (worker_crash without restart_after), and, for hilo-emu, the actions to take at
// which modelled time. Workers are in topology order, as everywhere in the process driver.
//
// As processes: worker_crash = SIGKILL of that worker's hilo-node; restart_after = a new process,
// which rejoins (welcome, then a snapshot + ring catch-up); worker_join = the worker's process is
// started at the fault's time; replay_divergence = the worker's next replay after that time is
// perturbed (hilo-node --diverge-at); learner_restart = SIGKILL of the learner's hilo-node and,
// restart_after later, a new one on the same port from the checkpoint the learner writes after
// every version (hilo-node --checkpoint, --restore). Link faults need emulated links (Unsupported
// names why under --network direct); under --network ns3 hilo-netem injects them into its links.
#ifndef HILOSIM_DRIVERS_PROCESS_PROCESS_FAULTS_H
#define HILOSIM_DRIVERS_PROCESS_PROCESS_FAULTS_H

#include "sim/run/arm-result.h"
#include "sim/scenario/resolved-scenario.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace hilosim
{

/// One thing hilo-emu does to a node process during an arm.
struct FaultAction
{
    enum Kind
    {
        kKill,  // SIGKILL the node's process
        kStart, // start a (new) process for the node: a worker rejoins, the learner restores
    };
    double at_s{0}; // modelled seconds after the run's epoch
    Kind kind{kKill};
    bool learner{false}; // the learner's process; otherwise worker `worker`'s
    uint32_t worker{0};  // topology order
    size_t fault{0};     // index in the scenario's faults
};

class ProcessFaults
{
  public:
    explicit ProcessFaults(const ResolvedScenario& scenario);

    /// Workers whose process starts at their worker_join time, not with the run.
    const std::set<uint32_t>& late() const { return m_late; }
    /// Workers that crash and never restart: not running when the run ends.
    const std::set<uint32_t>& gone() const { return m_gone; }
    /// Worker -> the times (modelled s) after which its next replay diverges.
    const std::vector<std::vector<double>>& divergences() const { return m_diverge; }
    /// True when the learner is restarted (it must write checkpoints).
    bool learner_restarts() const { return m_learnerRestarts; }
    /// Every kill and start, in time order (faults in scenario order at equal times).
    const std::vector<FaultAction>& actions() const { return m_actions; }

    /// A sentence naming the first fault processes on `network` ("direct", "ns3") cannot inject
    /// and why; empty when every fault can be injected.
    std::string Unsupported(const std::string& network) const;

    /// One FaultRecord per scenario fault, not yet injected (FaultRecord::workers filled).
    std::vector<FaultRecord> Records() const;

  private:
    const ResolvedScenario& m_scenario;
    std::vector<uint32_t> m_topologyIndex; // scenario worker index -> topology order
    std::set<uint32_t> m_late;
    std::set<uint32_t> m_gone;
    std::vector<std::vector<double>> m_diverge;
    std::vector<FaultAction> m_actions;
    bool m_learnerRestarts{false};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_PROCESS_FAULTS_H
