// NodeNetwork: where hilo-emu's node processes run and how they reach one another. hilo-emu
// (sim/drivers/process/emu-runner.h) asks it for the address each node listens on and dials, and
// for the command that starts a node; the network may wrap that command (to enter a network
// namespace) and watch over machinery of its own while an arm runs.
//
// Two implementations: "direct" (here: loopback, no emulated links; also what hilo-node does by
// hand across real machines) and "ns3" (sim/drivers/emulation/: one network namespace per
// process and the scenario's links in an ns-3 real-time process between them).
#ifndef HILOSIM_DRIVERS_PROCESS_NODE_NETWORK_H
#define HILOSIM_DRIVERS_PROCESS_NODE_NETWORK_H

#include "sim/run/arm-result.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

enum class NodeRole
{
    kLearner,
    kWorker, // index: topology order
    kRelay,  // index: region
};

class NodeNetwork
{
  public:
    virtual ~NodeNetwork() = default;

    /// "direct", "ns3": summary.json says "mode": "emulation-<name>".
    virtual std::string Name() const = 0;

    /// Once per run, before any arm starts. An error here is about the scenario or this machine
    /// (missing privileges, tools or kernel features): hilo-emu exits 2 with its message.
    virtual hilo::Status Prepare() = 0;

    /// Builds the network of one arm; `dir` is the arm's node folder (logs may go there). Runtime
    /// errors (hilo-emu exits 1). Every call is paired with FinishArm, also after a failure.
    virtual hilo::Status StartArm(const std::string& dir) = 0;

    /// HOST:PORT a listening node binds (port 0: any free port; the node reports the one it got).
    virtual std::string ListenAddress(NodeRole role, uint32_t index) const = 0;
    /// The host a worker dials for the learner, and for its relay (relay topologies).
    virtual std::string LearnerHostForWorker(uint32_t worker) const = 0;
    virtual std::string RelayHostForWorker(uint32_t worker) const = 0;
    /// The host relay `relay` dials for the learner.
    virtual std::string LearnerHostForRelay(uint32_t relay) const = 0;

    /// The command line that runs `argv` (argv[0]: an executable's path) as the given node.
    virtual std::vector<std::string> Command(NodeRole role, uint32_t index,
                                             std::vector<std::string> argv) const = 0;

    /// Every node is set up and starts at `epoch_ns` (steady clock): the network times the
    /// scenario's link faults from it (ns3). An error when the network cannot be told.
    virtual hilo::Status SetEpoch(int64_t epoch_ns)
    {
        (void) epoch_ns;
        return hilo::Status::Ok();
    }

    /// Polled while the arm runs: an error when the network itself has failed (the message names
    /// what, with its log).
    virtual hilo::Status Check() = 0;

    /// Tears the arm's network down (idempotent; also after a failed or interrupted arm) and, when
    /// `result` is given, records the network's health in it (ArmResult::emulation).
    virtual hilo::Status FinishArm(ArmResult* result) = 0;
};

/// Loopback: every node on 127.0.0.1, commands unchanged, nothing to set up.
std::unique_ptr<NodeNetwork> NewDirectNetwork();

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_NODE_NETWORK_H
