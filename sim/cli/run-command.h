// `hilo-sim run`: runs every arm of a loaded scenario in ns-3 and writes summary.json, steps.csv,
// workers.csv, links.csv and resolved.textproto to the output folder, and
// with a pcap folder a pcap trace of every link end.
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
};

/// Runs `scenario` (valid, as LoadScenarioFile returns it). Returns the process exit code:
/// 0 on success, 1 on a runtime failure (message on stderr). Bad input was rejected earlier.
int RunScenario(const LoadedScenario& scenario, const RunOptions& options);

} // namespace hilosim

#endif // HILOSIM_CLI_RUN_COMMAND_H
