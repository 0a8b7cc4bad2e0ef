// hilo-netem: the ns-3 real-time process of an emulated network (sim/drivers/emulation/
// emulated-links.h). hilo-emu starts it inside the run's core network namespace, where it creates
// one tap per link end of every process node; hilo-emu then moves each tap into its node's
// namespace. It talks to hilo-emu over its standard streams:
//   stdout  "ready TAPS" once every tap exists; at the end "lag MEAN P99 MAX SAMPLES PEAK_BPS
//           CORRUPTED" (seconds; link traffic in bits per second; TCP segments the corrupt
//           faults damaged) and "done";
//   stderr  errors, and at the end the lag spikes (FormatLagSpikes: samples 4 ms or more late,
//           in run time from the epoch);
//   stdin   "start": forget the lag samples so far (the set-up's); "epoch NS": the run's epoch
//           (steady clock, ns), from which the scenario's link faults are timed
//           (emulated-link-faults.h); "stop" or end of file: stop.
#include "hilo/build-info.h"
#include "sim/cli/catalog.h"
#include "sim/drivers/emulation/emulated-link-faults.h"
#include "sim/drivers/emulation/emulated-links.h"
#include "sim/drivers/emulation/lag-monitor.h"
#include "sim/scenario/scenario-loader.h"

#include "ns3/boolean.h"
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <boost/program_options.hpp>

#include <sched.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

namespace po = boost::program_options;

namespace
{

const char* const kUsage =
    "usage:\n"
    "  hilo-netem --scenario S --tag TAG [--set path=value ...] [--lag-sample-ms MS]\n"
    "             [--realtime-priority P]\n"
    "  hilo-netem --version\n"
    "Runs the scenario's links in ns-3 in real time, bridged to one tap device per link end of\n"
    "every learner, worker and relay (names hilo-TAG-N). Started by hilo-emu --network ns3.\n"
    "Exit codes: 0 success, 1 run-time failure, 2 bad input.\n";

} // namespace

int
main(int argc, char** argv)
{
    std::string scenario, tag;
    std::vector<std::string> overrides;
    double sample_ms = 10;
    int priority = 0;
    po::options_description desc("hilo-netem options");
    desc.add_options()("help,h", "this text")("version", "print the commit and build type")(
        "scenario", po::value(&scenario), "scenario file (Protobuf text format)")(
        "tag", po::value(&tag), "the run's tag (names the taps)")(
        "set", po::value(&overrides)->composing(), "override a scenario field (repeatable)")(
        "lag-sample-ms", po::value(&sample_ms)->default_value(10),
        "milliseconds of simulated time between lag samples")(
        "realtime-priority", po::value(&priority)->default_value(0),
        "run under SCHED_RR at this priority (1-99; 0: ordinary scheduling)");
    po::variables_map vm;
    try
    {
        po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
        po::notify(vm);
    }
    catch (const po::error& e)
    {
        std::cerr << "hilo-netem: " << e.what() << "\n\n" << kUsage;
        return 2;
    }
    if (vm.count("help"))
    {
        std::cout << kUsage << "\n" << desc;
        return 0;
    }
    if (vm.count("version"))
    {
        std::cout << hilo::VersionLine("hilo-netem") << "\n";
        return 0;
    }
    if (scenario.empty() || tag.empty() || !(sample_ms > 0) || priority < 0 || priority > 99)
    {
        std::cerr << "hilo-netem: --scenario, --tag, a positive --lag-sample-ms and a "
                     "--realtime-priority in 0..99 are required\n\n"
                  << kUsage;
        return 2;
    }
    if (priority > 0)
    {
        // Before any thread exists, so that the tap readers inherit it: a tap reader that waits
        // for a CPU delays packets into ns-3 without the lag monitor seeing it.
        sched_param param{};
        param.sched_priority = priority;
        if (sched_setscheduler(0, SCHED_RR, &param) != 0)
        {
            std::cerr << "hilo-netem: cannot run under SCHED_RR priority " << priority << ": "
                      << std::strerror(errno) << "\n";
            return 1;
        }
    }
    auto loaded = hilosim::LoadScenarioFile(scenario, overrides, hilosim::CurrentCatalog());
    if (!loaded.ok())
    {
        std::cerr << loaded.status().message() << "\nhilo-netem: " << scenario
                  << " is not a valid scenario\n";
        return 2;
    }

    ns3::GlobalValue::Bind("SimulatorImplementationType",
                           ns3::StringValue("ns3::RealtimeSimulatorImpl"));
    // Routers rewrite IPv4 headers (TTL); without checksums ns-3 writes zero and the kernel
    // drops the packet.
    ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(true));
    auto links = hilosim::EmulatedLinks::Build(loaded->resolved, tag);
    if (!links.ok())
    {
        std::cerr << "hilo-netem: " << links.status().message() << "\n";
        return 2;
    }
    hilosim::LagMonitor monitor(ns3::MicroSeconds(static_cast<int64_t>(sample_ms * 1000)),
                                (*links)->LinkDevices());
    monitor.Start();
    const size_t taps = (*links)->plan().TapCount();
    // After the TapBridges' own start events at time 0, which create the taps.
    ns3::Simulator::Schedule(ns3::Seconds(0),
                             [taps]() { std::cout << "ready " << taps << std::endl; });

    hilosim::EmulatedLinkFaults faults(loaded->resolved, (*links)->topology());

    std::atomic<int64_t> run_epoch_ns{0};
    std::thread commands(
        [&monitor, &faults, &run_epoch_ns]()
        {
            std::string line;
            bool epoch_seen = false;
            while (std::getline(std::cin, line) && line != "stop")
            {
                if (line == "start")
                {
                    ns3::Simulator::ScheduleWithContext(ns3::Simulator::NO_CONTEXT, ns3::Seconds(0),
                                                        [&monitor]() { monitor.Reset(); });
                }
                else if (line.rfind("epoch ", 0) == 0 && !epoch_seen &&
                         line.find_first_not_of("0123456789", 6) == std::string::npos &&
                         line.size() > 6 && line.size() < 26)
                {
                    epoch_seen = true;
                    const int64_t epoch_ns = std::stoll(line.substr(6));
                    run_epoch_ns = epoch_ns;
                    ns3::Simulator::ScheduleWithContext(
                        ns3::Simulator::NO_CONTEXT, ns3::Seconds(0),
                        [&faults, epoch_ns]()
                        {
                            // Timed from now, in the simulator's thread: its clock is real time.
                            const int64_t now_ns =
                                std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count();
                            faults.ScheduleFromNow(static_cast<double>(epoch_ns - now_ns) * 1e-9);
                        });
                }
            }
            ns3::Simulator::ScheduleWithContext(ns3::Simulator::NO_CONTEXT, ns3::Seconds(0),
                                                []() { ns3::Simulator::Stop(); });
        });
    ns3::Simulator::Run();
    commands.join();
    const hilosim::LagStats stats = monitor.Stats();
    // To the log (kept under the run's nodes/ folder): when the emulator ran late enough to
    // disturb TCP's RTT samples, to set beside a --trace-tcp trace.
    std::cerr << "hilo-netem: " << hilosim::FormatLagSpikes(monitor.Spikes(), run_epoch_ns)
              << std::endl;
    std::cout << "lag " << stats.mean_s << " " << stats.p99_s << " " << stats.max_s << " "
              << stats.samples << " " << stats.peak_traffic_bps << " " << faults.CorruptedSegments()
              << std::endl;
    links->reset();
    ns3::Simulator::Destroy();
    std::cout << "done" << std::endl;
    return 0;
}
