// What a hilo-node reads before its role runs, whatever the role: the scenario and the arm's
// context (as the simulator builds them), the event log, the port file, the check that a node
// without a key listens only on loopback (or --insecure). Each returns the process exit code
// (node-loop.h) or false, with the error written to `err`.
#ifndef HILOSIM_DRIVERS_PROCESS_NODE_SETUP_H
#define HILOSIM_DRIVERS_PROCESS_NODE_SETUP_H

#include "sim/drivers/process/event-log.h"
#include "sim/drivers/process/node-runner.h"
#include "sim/roles/arm-context.h"
#include "sim/scenario/scenario-loader.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace hilosim
{

// The scenario, the arm and its context, as the simulator builds them.
struct ArmSetup
{
    LoadedScenario loaded;
    size_t arm_index{0};
    std::shared_ptr<ArmContext> context;
    std::vector<uint32_t> order; // topology order
    std::string key;             // shared key (--key-file); empty: peers are not authenticated
    uint64_t frame_limit{0};     // largest message payload a peer may send (arm-frame-limit.h)
};

/// Loads the scenario with its overrides and builds the arm's context. kExitOk or kExitBadInput.
int LoadArm(const NodeOptions& o, const ScenarioCatalog& catalog, std::ostream& err,
            ArmSetup* setup);

/// The event log of --events (null without one); *ok false when it cannot be opened.
std::unique_ptr<EventLogWriter> OpenEvents(const NodeOptions& o, std::ostream& err, bool* ok);

/// Writes `port` to `path` (temp file + rename); true with an empty path.
bool WritePortFile(const std::string& path, uint16_t port, std::ostream& err);

/// A node that listens beyond loopback without a key lets anyone on the network join the run:
/// false (and why, to `err`) unless the node has a key, was told --insecure, or `host` is loopback.
bool ListenIsSafe(const std::string& who, const std::string& host, const NodeOptions& o,
                  const ArmSetup& setup, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_NODE_SETUP_H
