// RunEmulation: `hilo-emu run`. For each arm of a scenario, builds the arm's network (a
// NodeNetwork: loopback with --network direct, namespaces and ns-3 real-time links with --network
// ns3), starts the learner, any relays and one process per worker in it (hilo-node, fork + exec),
// starts them together at one epoch, supervises them, gathers their event logs and writes the same
// files as `hilo-sim run` (sim/run/output-writer.h) with "mode": "emulation-<network>" in
// summary.json, a `pid` column in workers.csv and the compute-overrun columns in steps.csv.
//
// A child that dies is named, with its stderr tail; the others are stopped and the run exits 1.
// SIGINT or SIGTERM to hilo-emu stops every child (and a hilo-emu killed outright takes its
// children with it: PR_SET_PDEATHSIG) -- no orphans.
#ifndef HILOSIM_DRIVERS_PROCESS_EMU_RUNNER_H
#define HILOSIM_DRIVERS_PROCESS_EMU_RUNNER_H

#include "sim/drivers/process/node-network.h"
#include "sim/scenario/scenario-loader.h"

#include <ostream>
#include <string>
#include <vector>

namespace hilosim
{

struct EmuOptions
{
    std::string out_dir;                // results folder (the CLI defaults it)
    bool quiet{false};                  // no progress lines
    std::string node_binary;            // hilo-node; the CLI finds it next to hilo-emu
    double stall_timeout_s{300};        // passed to every node (bounded waits)
    double ready_timeout_s{120};        // a node that is not set up by then fails the run
    std::vector<std::string> overrides; // the `--set` assignments, passed to every node
};

/// Runs every arm of `scenario` as processes in `network`; returns the exit code (0 ok, 1 runtime
/// failure, 2 bad input -- the scenario, or a network this machine cannot build --, 128 + N when
/// stopped by signal N). Messages go to `err`, the comparison to `out`. Every arm's network is
/// finished (torn down) on every return path.
int RunEmulation(const LoadedScenario& scenario, const EmuOptions& options, NodeNetwork& network,
                 std::ostream& out, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_EMU_RUNNER_H
