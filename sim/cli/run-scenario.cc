// RunScenario: the `hilo-sim run` engine. Runs every arm on identical seeds, shows progress on
// stderr, writes the output files and prints the arms side by side.
#include "sim/cli/run-command.h"
#include "sim/drivers/ns3/arm-runner.h"
#include "sim/run/output-writer.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace hilosim
{
namespace
{

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

} // namespace

int
RunScenario(const LoadedScenario& loaded, const RunOptions& options)
{
    const ResolvedScenario& sc = loaded.resolved;
    const size_t arms = sc.arms.size();
    const double total_steps = static_cast<double>(arms) * sc.workload.steps;
    const auto start = std::chrono::steady_clock::now();
    double done_before_arm = 0;

    ProgressFn progress = [&](size_t arm, uint64_t version, uint64_t steps)
    {
        if (options.quiet)
            return;
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double done = done_before_arm + static_cast<double>(version);
        const double eta = done > 0 ? elapsed * (total_steps - done) / done : 0.0;
        std::fprintf(stderr, "\r[arm %zu/%zu %-14s] step %4llu/%llu  elapsed %s  ETA %s   ",
                     arm + 1, arms, sc.arms[arm].name.substr(0, 14).c_str(),
                     static_cast<unsigned long long>(version),
                     static_cast<unsigned long long>(steps), FormatDuration(elapsed).c_str(),
                     FormatDuration(eta).c_str());
        if (version == steps)
            std::fputc('\n', stderr);
        std::fflush(stderr);
    };

    // Bad input of any arm is reported before the first arm spends time.
    hilo::Status checked = CheckScenarioArms(loaded);
    if (!checked.ok())
    {
        std::cerr << "hilo-sim run: " << checked.message() << "\n";
        return 2;
    }

    ArmRunOptions arm_options;
    arm_options.pcap_dir = options.pcap_dir;
    arm_options.pcap_snaplen = options.pcap_snaplen;
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
    for (size_t i = 0; i < arms; ++i)
    {
        auto result = RunArm(sc, i, progress, arm_options);
        if (!result.ok())
        {
            // Setup problems of an arm (budget below the smallest payload, an adapter that does
            // not fit the modelled GPU) are bad input: exit 2 before writing anything.
            std::cerr << "hilo-sim: " << loaded.path << ": " << result.status().message() << "\n";
            return result.status().code() == hilo::StatusCode::kInternal ? 1 : 2;
        }
        if (!result->failure.ok())
        {
            std::cerr << "\nhilo-sim: arm '" << sc.arms[i].name
                      << "' failed: " << result->failure.ToString() << "\n";
            return 1;
        }
        if (result->window_limited_connections > 0)
        {
            std::cerr << "hilo-sim: warning: arm '" << sc.arms[i].name
                      << "': " << result->window_limited_connections << " of "
                      << result->connections
                      << " connections have a TCP window below their path's bandwidth-delay "
                         "product (network.tcp_buffer \""
                      << sc.network.tcp_buffer << "\"); transfers on them were window-limited, "
                      << "e.g. " << result->window_limited_example << "\n";
        }
        results.push_back(std::move(*result));
        done_before_arm += sc.workload.steps;
    }

    RunRecord record;
    record.scenario_name = sc.name;
    record.scenario_path = loaded.path;
    record.resolved_text = loaded.resolved_text;
    record.overrides = loaded.overrides;
    record.seed = sc.seed;
    record.llm_profile = sc.llm_profile;
    hilo::Status written = WriteRunOutputs(options.out_dir, record, results);
    if (!written.ok())
    {
        std::cerr << "hilo-sim: " << written.message() << "\n";
        return 1;
    }
    PrintComparison(results, std::cout);
    if (!options.quiet)
    {
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cerr << "wrote " << options.out_dir << " (summary.json, steps.csv, workers.csv, "
                  << "rollouts.csv, allocation.csv, links.csv, resolved.textproto, timing.json)"
                  << (options.pcap_dir.empty() ? "" : " and pcap traces to " + options.pcap_dir)
                  << " in " << FormatDuration(wall) << " wall\n";
    }
    return 0;
}

} // namespace hilosim
