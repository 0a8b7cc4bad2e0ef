// RunEmulation: `hilo-emu run`. For each arm of a scenario, builds the arm's network (a
// NodeNetwork: loopback with --network direct, namespaces and ns-3 real-time links with --network
// ns3), starts the learner, any relays and one process per worker in it (hilo-node, fork + exec),
// starts them together at one epoch, supervises them, gathers their event logs and writes the same
// files as `hilo-sim run` (sim/run/output-writer.h) with "mode": "emulation-<network>" in
// summary.json, a `pid` column in workers.csv and the compute-overrun columns in steps.csv.
//
// The scenario's faults happen to the processes (process-faults.h): a worker crash is a SIGKILL,
// a restart or a late join a new process that rejoins, a replay divergence a perturbed replay, a
// learner restart a SIGKILL of the learner and a new one from its checkpoint on the same port;
// link faults happen in hilo-netem's links (--network ns3), timed from the run's epoch.
// summary.json then reports faults_injected, versions_lost, workers_alive, workers_at_final_hash
// and recovery_s measured from the processes' event logs (arm-gather.h). What processes cannot
// take (link faults under --network direct, a streaming relay: process-support.h) is refused with
// exit 2, naming the field, before anything starts.
// Every run has a fresh random key (a 0600 file in a private temporary folder, removed on every
// return path): the nodes authenticate one another with it (sim/drivers/process/peer-auth.h).
// A child that dies is named, with its stderr tail; the others are stopped and the run exits 1.
// SIGINT or SIGTERM to hilo-emu stops every child (and a hilo-emu killed outright takes its
// children with it: PR_SET_PDEATHSIG) -- no orphans.
#ifndef HILOSIM_DRIVERS_PROCESS_EMU_RUNNER_H
#define HILOSIM_DRIVERS_PROCESS_EMU_RUNNER_H

#include "sim/drivers/process/node-network.h"
#include "sim/drivers/process/node-pause.h"
#include "sim/scenario/scenario-loader.h"

#include <ostream>
#include <string>
#include <vector>

namespace hilosim
{

/// A relay process killed and started again (chaos runs: relays are no scenario fault target).
struct RelayKill
{
    uint32_t relay{0};   // region index
    double at_s{0};      // modelled seconds after the run's epoch
    double restart_s{0}; // started again this long after the kill
};

/// A window in which the checkpoint folder's disk is full (hilo-emu --full-disk AT:FOR).
struct DiskFull
{
    double at_s{0};  // seconds after the run's epoch
    double for_s{0}; // then freed again
};

struct EmuOptions
{
    std::string out_dir;                // results folder (the CLI defaults it)
    bool quiet{false};                  // no progress lines
    std::string node_binary;            // hilo-node; the CLI finds it next to hilo-emu
    double stall_timeout_s{300};        // passed to every node (bounded waits)
    double ready_timeout_s{120};        // a node that is not set up by then fails the run
    std::vector<std::string> overrides; // the `--set` assignments, passed to every node
    std::string key_file;               // set by RunEmulation: the run's fresh key, passed to
                                        // every node (--key-file)
    std::vector<RelayKill> relay_kills; // in any order
    std::vector<NodePause> pauses;      // in any order (pauses and slow windows)
    std::string checkpoint_dir;         // the learners' checkpoints (<arm>-learner.ckpt) go here;
                                        // empty: the arm's folder, with learner_restart faults only
    std::vector<DiskFull> full_disks;   // chaos: checkpoint_dir's filesystem full (DiskFill)
    bool trace_tcp{false};              // every node samples its connections' TCP_INFO
                                        // (tcp-info-sampler.h): tcp-trace.csv
};

/// Runs every arm of `scenario` as processes in `network`; returns the exit code (0 ok, 1 runtime
/// failure, 2 bad input -- the scenario, or a network this machine cannot build --, 128 + N when
/// stopped by signal N). Messages go to `err`, the comparison to `out`. Every arm's network is
/// finished (torn down) on every return path.
int RunEmulation(const LoadedScenario& scenario, const EmuOptions& options, NodeNetwork& network,
                 std::ostream& out, std::ostream& err);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_EMU_RUNNER_H
