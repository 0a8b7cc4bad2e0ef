// Writes a run's outputs: summary.json, steps.csv, workers.csv,
// rollouts.csv, allocation.csv, links.csv, resolved.textproto (tcp-trace.csv with --trace-tcp),
// plus timing.json with the real CPU
// and wall seconds (the only non-deterministic file). Each file is written to a temporary name and
// renamed, so a crash never leaves a half-written file under its final name.
#ifndef HILOSIM_RUN_OUTPUT_WRITER_H
#define HILOSIM_RUN_OUTPUT_WRITER_H

#include "sim/run/arm-result.h"

#include "models/host-info.h"

#include "hilo/core/status.h"

#include <ostream>
#include <string>
#include <vector>

namespace hilosim
{

struct RunRecord
{
    std::string scenario_name;
    std::string scenario_path;
    std::string resolved_text;
    std::vector<std::string> overrides;
    uint64_t seed{0};
    std::string llm_profile;
    std::string mode{"simulation"}; // or "emulation-direct", "emulation-ns3"
    models::HostInfo host;          // the machine that made the numbers (summary.json "host")
    double round_timeout_s{0};      // mode.round_timeout; > 0 adds members_dropped to the outputs
    bool trace_tcp{false};          // --trace-tcp: tcp-trace.csv from the arms' tcp_trace rows
};

hilo::Status WriteRunOutputs(const std::string& dir, const RunRecord& run,
                             const std::vector<ArmResult>& arms);

/// The side-by-side comparison printed at the end of a run.
void PrintComparison(const std::vector<ArmResult>& arms, std::ostream& out);

/// "%.9g": the one number format of every output file (deterministic, round-trippable enough).
std::string FormatNumber(double v);

} // namespace hilosim

#endif // HILOSIM_RUN_OUTPUT_WRITER_H
