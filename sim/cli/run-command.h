// `hilo-sim run`: runs every arm of a loaded scenario in ns-3 and writes summary.json, steps.csv,
// workers.csv, links.csv and resolved.textproto to the output folder (and tcp-trace.csv with
// --trace-tcp), and with a pcap folder a pcap trace of every link end.
#ifndef HILOSIM_CLI_RUN_COMMAND_H
#define HILOSIM_CLI_RUN_COMMAND_H

#include "sim/run/arm-check.h"
#include "sim/scenario/scenario-loader.h"

#include <string>
#include <vector>

namespace hilosim
{

struct RunOptions
{
    std::string out_dir;                // where results go; the CLI defaults it to
                                        // results/runs/<scenario name>
    bool quiet{false};                  // no progress on stderr (errors are still printed)
    std::vector<std::string> overrides; // the `--set` assignments (already applied to the
                                        // scenario; kept for the record of the run)
    std::string pcap_dir;               // non-empty: pcap traces of every link end, per arm
                                        // in pcap_dir/<arm>/ (sim/net/link-pcap.h)
    uint32_t pcap_snaplen{65535};       // bytes kept of each captured frame
    bool trace_tcp{false};              // tcp-trace.csv: every connection's TCP state
                                        // (sim/net/tcp-trace.h), sampled every 10 ms
    // Processes running arms at once (each arm is one simulation, and ns-3's Simulator is one per
    // process). 1: every arm in this process, one after another. More: each arm in a child
    // process forked before any simulation or workload exists; the outputs are byte-identical
    // to a run with 1 (timing.json aside).
    uint32_t jobs{1};
};

/// Runs `scenario` (valid, as LoadScenarioFile returns it). Returns the process exit code:
/// 0 on success, 1 on a runtime failure, 2 on bad input found by the arms' checks (message on
/// stderr; no output file is written).
int RunScenario(const LoadedScenario& scenario, const RunOptions& options);

} // namespace hilosim

#endif // HILOSIM_CLI_RUN_COMMAND_H
