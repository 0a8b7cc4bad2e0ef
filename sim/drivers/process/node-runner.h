// RunNode: one role of one arm as a real process (`hilo-node`). Loads the scenario, builds the
// arm's context exactly as the simulator does (sim/run/arm-context-builder.h), and runs the
// learner, a worker or a relay on a Boost.Asio event loop with a ProcessPort and a TcpTransport.
//
// - learner: listens; exits 0 once every worker has announced the last version with the
//   learner's state hash, 1 if one announced another hash. With scenario faults (process-faults.h)
//   a worker that joins late is not waited for before it connects, and one that crashes for good
//   is not waited for at the end. With --checkpoint it writes its checkpoint (publisher and
//   members) after every version; with --restore it continues from that file (a learner killed
//   and started again: the workers and relays reconnect and are welcomed).
// - worker: connects to the learner (and to its region's relay in a relay topology), re-dialling
//   with backoff whenever a connection ends; a restarted worker is welcomed by the learner and
//   catches up. Exits 0 when it holds the last version, has announced it, and the learner has
//   closed the connection.
// - relay: listens for its region's workers, connects to the learner, stores and forwards updates
//   (network.relay_forwarding must be "store_and_forward"); when the learner's connection ends it
//   dials again after the role's backoff, and exits 0 once the learner is gone and none of its
//   region's workers is connected any more (the run is over).
// With a key file every connection is authenticated (sim/drivers/process/peer-auth.h), every
// byte after the hello is sealed (record-cipher.h: a modified, replayed or injected frame closes
// its connection), and a worker or relay whose learner does not prove the same key says
// "authentication failed" and dials again until its stall timeout ends it (exit 1).
// A node accepts only the scenario's ids (the learner: its workers and relays; a relay: its
// region's workers), and a message its role cannot use costs the sender its connection, never
// the run. Without a key file a node refuses to listen beyond loopback unless told --insecure.
// Every node gives up with exit 1 and a message naming what it waited for when it sees no
// progress for `stall_timeout_s` (bounded waits), and exits 128 + N on signal N (SIGINT,
// SIGTERM). Exit 2: bad input (scenario, arm, index, addresses).
#ifndef HILOSIM_DRIVERS_PROCESS_NODE_RUNNER_H
#define HILOSIM_DRIVERS_PROCESS_NODE_RUNNER_H

#include "sim/scenario/scenario-validator.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace hilosim
{

/// RunNode's exit codes (and 128 + N on signal N).
constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;  // a runtime failure, or no progress for the stall timeout
constexpr int kExitBadInput = 2; // bad scenario, arm, index or addresses

struct NodeOptions
{
    std::string role;                   // "learner", "worker" or "relay"
    std::string scenario;               // scenario file
    std::vector<std::string> overrides; // `--set` assignments
    std::string arm;                    // arm name
    uint32_t index{0};                  // worker (topology order) or relay (region) index
    std::string listen;                 // learner, relay: HOST:PORT (port 0: any free port)
    std::string connect;                // worker, relay: the learner's HOST:PORT
    std::string relay;                  // worker of a relay topology: its relay's HOST:PORT
    std::string events;                 // event log (sim/drivers/process/event-log.h); "": none
    std::string trace_tcp;              // TCP trace of this node's connections, sampled every
                                        // kTcpTracePeriodS (tcp-info-sampler.h); "": none
    std::string port_file;              // learner, relay: the bound port is written here
    int64_t epoch_ns{0};                // steady-clock epoch of the run; 0: this process's start
    bool sync_start{false};             // after set-up print "ready PORT" on stdout and read the
                                        // run's epoch (steady-clock ns) from stdin (hilo-emu)
    double stall_timeout_s{300};        // bounded waits: give up after this long without progress
    double hello_timeout_s{5};          // a connection that has not finished its hello by then is
                                        // closed (TcpTransportOptions::hello_timeout_s)
    bool rejoin{false};                 // worker: a restarted or late process; waits for the
                                        // learner's welcome and catches up from a snapshot.
                                        // relay: a restarted one; a worker that connects is
                                        // sent the latest update
    std::vector<double> diverge_at_s;   // worker (fault injection): the next replay after each of
                                        // these modelled times diverges from the learner's
    std::string checkpoint;             // learner: write its checkpoint here after every version
    bool restore{false};                // learner: start from `checkpoint` (a restarted learner)
    std::string key_file;               // shared key of the run's nodes (peer-auth.h); "": none
    bool insecure{false};               // listen beyond loopback without a key
};

/// Runs the node; `catalog` names the GPUs, workloads and profiles its scenario may use (the
/// executable passes sim/cli/catalog.h's). Returns the process exit code. Errors go to `err`.
int RunNode(const NodeOptions& options, const ScenarioCatalog& catalog, std::ostream& err);

/// "HOST:PORT" -> host and port; false when malformed.
bool SplitHostPort(const std::string& text, std::string* host, uint16_t* port);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_NODE_RUNNER_H
