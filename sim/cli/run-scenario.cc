// RunScenario: the `hilo-sim run` engine. Runs every arm on identical seeds (one after another,
// or side by side in child processes), shows progress on stderr, writes the output files and
// prints the arms side by side.
#include "sim/cli/run-command.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/net/tcp-trace.h"
#include "sim/run/arm-result-codec.h"
#include "sim/run/forked-jobs.h"
#include "sim/run/output-writer.h"
#include "sim/run/progress-gate.h"

#include "models/cpu-timer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace hilosim
{
namespace
{

using Clock = std::chrono::steady_clock;

std::string
FormatDuration(double s)
{
    char buf[32];
    if (s >= 3600)
        std::snprintf(buf, sizeof(buf), "%dh%02dm", int(s / 3600), int(s / 60) % 60);
    else if (s >= 60)
        std::snprintf(buf, sizeof(buf), "%dm%02ds", int(s / 60), int(s) % 60);
    else
        std::snprintf(buf, sizeof(buf), "%.0fs", s);
    return buf;
}

// Progress lines on stderr. On a terminal, one per published version: in one process they
// redraw one line per arm; arms running side by side print whole lines (each names its arm),
// written at once so that lines of different processes do not mix. Into a file or pipe, a whole
// line every 10% of an arm's steps (ProgressGate).
struct ProgressLines
{
    const ResolvedScenario* scenario{nullptr};
    Clock::time_point start;
    double steps_before{0}; // steps of the arms this process finished before
    double steps_total{0};  // steps of the arms this process runs
    bool whole_lines{false};
    ProgressGate gate{ProgressGate::StderrIsTerminal()};

    void Show(size_t arm, uint64_t version, uint64_t steps)
    {
        if (!gate.ShouldShow(arm, version, steps))
            return;
        whole_lines = whole_lines || !gate.terminal();
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        const double done = steps_before + static_cast<double>(version);
        const double eta = done > 0 ? elapsed * (steps_total - done) / done : 0.0;
        char line[256];
        const int n = std::snprintf(
            line, sizeof(line), "%s[arm %zu/%zu %-14s] step %4llu/%llu  elapsed %s  ETA %s%s",
            whole_lines ? "" : "\r", arm + 1, scenario->arms.size(),
            scenario->arms[arm].name.substr(0, 14).c_str(),
            static_cast<unsigned long long>(version), static_cast<unsigned long long>(steps),
            FormatDuration(elapsed).c_str(), FormatDuration(eta).c_str(),
            whole_lines || version == steps ? "\n" : "   ");
        if (n > 0)
            (void) !write(STDERR_FILENO, line, std::min(static_cast<size_t>(n), sizeof(line) - 1));
    }
};

// Arm `i` run to its end. Errors are what the run stops with: the message to print after
// "hilo-sim: ", and kInternal for a runtime failure (exit 1), another code for bad input (exit 2).
hilo::StatusOr<ArmResult>
RunOneArm(const LoadedScenario& loaded, size_t i, const ProgressFn& progress,
          const ArmRunOptions& options)
{
    const models::CpuTimer cpu;
    auto result = RunArm(loaded.resolved, i, progress, options);
    if (!result.ok())
    {
        // Setup problems of an arm (budget below the smallest payload, an adapter that does
        // not fit the modelled GPU) are bad input: exit 2 before writing anything.
        return hilo::Status(result.status().code(), loaded.path + ": " + result.status().message());
    }
    if (!result->failure.ok())
    {
        return hilo::Status::Internal("arm '" + loaded.resolved.arms[i].name +
                                      "' failed: " + result->failure.ToString());
    }
    result->cpu_s = cpu.Seconds();
    return result;
}

int
ArmExitCode(const hilo::Status& s)
{
    return s.code() == hilo::StatusCode::kInternal ? 1 : 2;
}

void
WarnIfWindowLimited(const ResolvedScenario& sc, const ArmResult& result)
{
    if (result.window_limited_connections == 0)
        return;
    std::cerr << "hilo-sim: warning: arm '" << result.name
              << "': " << result.window_limited_connections << " of " << result.connections
              << " connections have a TCP window below their path's bandwidth-delay "
                 "product (network.tcp_buffer \""
              << sc.network.tcp_buffer << "\"); transfers on them were window-limited, "
              << "e.g. " << result.window_limited_example << "\n";
}

// Bad input of any arm (sim/run/arm-check.h), reported before the first arm spends time. The
// checks build each arm's workload, i.e. LibTorch state, whose thread pools do not survive fork:
// a run whose arms run in child processes checks in a child too. Returns the exit code.
int
CheckArms(const LoadedScenario& loaded, bool in_child)
{
    hilo::Status checked = hilo::Status::Ok();
    std::vector<std::string> warnings;
    if (in_child)
    {
        // The child's warnings come back one a line.
        std::vector<ForkedJob> checks{{"the arms' checks",
                                       [&]() -> hilo::StatusOr<std::string>
                                       {
                                           std::vector<std::string> found;
                                           hilo::Status s = CheckScenarioArms(loaded, &found);
                                           if (!s.ok())
                                               return hilo::Status::InvalidArgument(s.message());
                                           std::string lines;
                                           for (const std::string& w : found)
                                               lines += w + "\n";
                                           return lines;
                                       }}};
        auto done = RunForkedJobs(checks, 1);
        checked = done.status();
        if (done.ok())
        {
            std::istringstream lines(done->front());
            for (std::string line; std::getline(lines, line);)
                warnings.push_back(line);
        }
    }
    else
    {
        checked = CheckScenarioArms(loaded, &warnings);
        if (!checked.ok())
            checked = hilo::Status::InvalidArgument(checked.message());
    }
    for (const std::string& w : warnings)
        std::cerr << "hilo-sim: warning: " << w << "\n";
    if (checked.ok())
        return 0;
    std::cerr << "hilo-sim run: " << checked.message() << "\n";
    return ArmExitCode(checked);
}

// Every arm in this process, one after another. Returns the exit code (0: `results` complete).
int
RunArmsHere(const LoadedScenario& loaded, const RunOptions& options,
            const ArmRunOptions& arm_options, Clock::time_point start,
            std::vector<ArmResult>* results)
{
    const ResolvedScenario& sc = loaded.resolved;
    ProgressLines lines{&sc, start, 0, static_cast<double>(sc.arms.size()) * sc.workload.steps};
    ProgressFn progress = [&](size_t arm, uint64_t version, uint64_t steps)
    {
        if (!options.quiet)
            lines.Show(arm, version, steps);
    };
    for (size_t i = 0; i < sc.arms.size(); ++i)
    {
        auto result = RunOneArm(loaded, i, progress, arm_options);
        if (!result.ok())
        {
            std::cerr << (ArmExitCode(result.status()) == 1 ? "\n" : "")
                      << "hilo-sim: " << result.status().message() << "\n";
            return ArmExitCode(result.status());
        }
        WarnIfWindowLimited(sc, *result);
        results->push_back(std::move(*result));
        lines.steps_before += sc.workload.steps;
    }
    return 0;
}

// Every arm in a child process of its own, `jobs` at a time, forked before this process builds
// any workload or simulation (see CheckArms). Returns the exit code (0: `results` complete).
int
RunArmsInChildren(const LoadedScenario& loaded, const RunOptions& options,
                  const ArmRunOptions& arm_options, std::vector<ArmResult>* results)
{
    const ResolvedScenario& sc = loaded.resolved;
    std::vector<ForkedJob> arms;
    for (size_t i = 0; i < sc.arms.size(); ++i)
    {
        arms.push_back({"arm '" + sc.arms[i].name + "'",
                        [&, i]() -> hilo::StatusOr<std::string>
                        {
                            ProgressLines lines{&sc, Clock::now(), 0,
                                                static_cast<double>(sc.workload.steps), true};
                            ProgressFn progress = [&](size_t arm, uint64_t version, uint64_t steps)
                            {
                                if (!options.quiet)
                                    lines.Show(arm, version, steps);
                            };
                            auto result = RunOneArm(loaded, i, progress, arm_options);
                            if (!result.ok())
                                return result.status();
                            return EncodeArmResult(*result);
                        }});
    }
    auto encoded = RunForkedJobs(arms, options.jobs);
    if (!encoded.ok())
    {
        std::cerr << "hilo-sim: " << encoded.status().message() << "\n";
        return ArmExitCode(encoded.status());
    }
    for (size_t i = 0; i < encoded->size(); ++i)
    {
        auto result = DecodeArmResult((*encoded)[i]);
        if (!result.ok())
        {
            std::cerr << "hilo-sim: arm '" << sc.arms[i].name << "': " << result.status().message()
                      << "\n";
            return 1;
        }
        WarnIfWindowLimited(sc, *result);
        results->push_back(std::move(*result));
    }
    return 0;
}

} // namespace

int
RunScenario(const LoadedScenario& loaded, const RunOptions& options)
{
    const ResolvedScenario& sc = loaded.resolved;
    const auto start = Clock::now();
    const bool in_children = options.jobs > 1 && sc.arms.size() > 1;
    if (const int checked = CheckArms(loaded, in_children); checked != 0)
        return checked;

    ArmRunOptions arm_options;
    arm_options.pcap_dir = options.pcap_dir;
    arm_options.pcap_snaplen = options.pcap_snaplen;
    arm_options.trace_tcp_period_s = options.trace_tcp ? kTcpTracePeriodS : 0;
    if (!options.pcap_dir.empty())
    {
        // Refused before any arm spends time on it.
        std::error_code ec;
        std::filesystem::create_directories(options.pcap_dir, ec);
        if (ec || !std::filesystem::is_directory(options.pcap_dir))
        {
            std::cerr << "hilo-sim run: --pcap " << options.pcap_dir << ": cannot create the folder"
                      << (ec ? ": " + ec.message() : "") << "\n";
            return 2;
        }
    }

    std::vector<ArmResult> results;
    const int code = in_children ? RunArmsInChildren(loaded, options, arm_options, &results)
                                 : RunArmsHere(loaded, options, arm_options, start, &results);
    if (code != 0)
        return code;

    RunRecord record;
    record.scenario_name = sc.name;
    record.scenario_path = loaded.path;
    record.resolved_text = loaded.resolved_text;
    record.overrides = loaded.overrides;
    record.seed = sc.seed;
    record.llm_profile = sc.llm_profile;
    record.host = models::ReadHostInfo();
    record.round_timeout_s = sc.round_timeout.GetSeconds();
    record.trace_tcp = options.trace_tcp;
    hilo::Status written = WriteRunOutputs(options.out_dir, record, results);
    if (!written.ok())
    {
        std::cerr << "hilo-sim: " << written.message() << "\n";
        return 1;
    }
    PrintComparison(results, std::cout);
    // Printed under --quiet too: where the files went is not progress.
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    std::cerr << "wrote " << options.out_dir << " (summary.json, steps.csv, workers.csv, "
              << "rollouts.csv, allocation.csv, links.csv, resolved.textproto, timing.json"
              << (options.trace_tcp ? ", tcp-trace.csv)" : ")")
              << (options.pcap_dir.empty() ? "" : " and pcap traces to " + options.pcap_dir)
              << " in " << FormatDuration(wall) << " wall\n";
    return 0;
}

} // namespace hilosim
