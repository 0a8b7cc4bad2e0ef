// hilo-emu: runs a scenario's learner, relays and workers as real processes and writes the same
// outputs as hilo-sim (sim/drivers/process/emu-runner.h), over emulated links (--network ns3,
// sim/drivers/emulation/ns3-network.h) or loopback (--network direct).
#include "hilo/build-info.h"
#include "models/tensor-memory.h"
#include "sim/cli/catalog.h"
#include "sim/drivers/emulation/ns3-network.h"
#include "sim/drivers/process/disk-fill.h"
#include "sim/drivers/process/emu-runner.h"
#include "sim/drivers/process/node-network.h"
#include "sim/net/units.h"
#include "sim/scenario/scenario-loader.h"

#include <boost/program_options.hpp>

#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace po = boost::program_options;

namespace
{

const char* const kUsage =
    "usage:\n"
    "  hilo-emu run SCENARIO [--set path=value ...] [--out DIR] [--network ns3|direct] [--quiet]\n"
    "  hilo-emu --version\n"
    "Runs every arm of the scenario with the learner, any relays and each worker as separate\n"
    "hilo-node processes over kernel TCP, and writes to DIR (default\n"
    "results/runs/<scenario name>-emu) the files hilo-sim run writes -- summary.json,\n"
    "steps.csv, workers.csv, rollouts.csv, allocation.csv, links.csv, resolved.textproto and\n"
    "timing.json (see hilo-sim run --help) -- with a pid column in workers.csv, the emulator's\n"
    "health in summary.json, and each node's log and event file under DIR/nodes/.\n"
    "  --network ns3 (default): each process in its own network namespace, the scenario's links\n"
    "      (bandwidth, delay, loss, MTU, queues, topology) modelled by ns-3 in real time between\n"
    "      them (hilo-netem). Needs root. summary.json reports the emulator's lag.\n"
    "  --network direct: loopback TCP, no emulated links.\n"
    "Exit codes: 0 success, 1 run-time failure, 2 bad input (or a machine that cannot emulate:\n"
    "the message names what is missing), 128+N stopped by signal N.\n";

// A binary next to this executable (the build puts hilo-node and hilo-netem in build/sim/).
std::string
Sibling(const std::string& name)
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? name : (self.parent_path() / name).string();
}

} // namespace

int
main(int argc, char** argv)
{
    // A node that dies after "ready" closes the pipe hilo-emu writes the epoch to: that write must
    // fail (and the death be reported, every other node stopped), not kill hilo-emu with SIGPIPE
    // before it cleans up. Nodes get the default action back before exec (child-process.cc).
    std::signal(SIGPIPE, SIG_IGN);
    // Freed tensor memory is kept for reuse, as in hilo-sim (models/tensor-memory.h).
    if (const hilo::Status m = models::KeepFreedMemoryForReuse(); !m.ok())
        std::cerr << "hilo-emu: warning: " << m.message() << "\n";
    hilosim::EmuOptions options;
    hilosim::Ns3NetworkOptions ns3;
    std::string command, scenario, network, sustained;
    std::vector<std::string> overrides;
    std::vector<std::string> sysctls;
    std::vector<std::string> relay_kills;
    std::vector<std::string> pauses;
    std::vector<std::string> slows;
    std::vector<std::string> full_disks;
    po::options_description desc("hilo-emu run options");
    desc.add_options()("help,h",
                       "this text")("set", po::value(&overrides)->composing(),
                                    "override a scenario field: path.to.field=value (repeatable)")(
        "out", po::value(&options.out_dir), "output folder (default results/runs/<name>-emu)")(
        "network", po::value(&network)->default_value("ns3"),
        "ns3: emulated links between network namespaces (root); direct: loopback")(
        "quiet", po::bool_switch(&options.quiet),
        "no progress on stderr (the arms' table and the \"wrote DIR\" line stay)")(
        "trace-tcp", po::bool_switch(&options.trace_tcp),
        "write tcp-trace.csv: every node's connections (TCP_INFO) every 10 ms, when they "
        "change, in hilo-sim's columns; each node's network namespace HyStart counters "
        "beside its trace in DIR/nodes/<arm>/")(
        "netem", po::value(&ns3.netem_binary),
        "--network ns3: the hilo-netem binary (default: next to hilo-emu)")(
        "netem-priority", po::value(&ns3.netem_priority)->default_value(10),
        "--network ns3: SCHED_RR priority of hilo-netem, 1-99 (0: ordinary scheduling)")(
        "sysctl", po::value(&sysctls)->composing(),
        "--network ns3: set KEY=VALUE in every process's namespace, after hilo-emu's own TCP "
        "settings (repeatable; e.g. net.ipv4.tcp_slow_start_after_idle=0)")(
        "sustained-rate", po::value(&sustained)->default_value("400Mbps"),
        "--network ns3: link traffic (all links summed) this machine's emulator sustains; "
        "scenarios whose links can carry more get a warning (README, \"Emulated links\")")(
        "stall-timeout", po::value(&options.stall_timeout_s)->default_value(300),
        "seconds a node waits without progress before it gives up")(
        "kill-relay", po::value(&relay_kills)->composing(),
        "chaos: R:AT:AFTER SIGKILLs relay R (its region's index) AT seconds after the run's "
        "start and starts it again AFTER seconds later, on the same port (repeatable)")(
        "pause", po::value(&pauses)->composing(),
        "chaos: NODE:AT:FOR stops NODE's process (SIGSTOP; NODE is learner, worker:N or relay:R) "
        "AT seconds after the run's start and continues it FOR seconds later (repeatable)")(
        "slow", po::value(&slows)->composing(),
        "chaos: NODE:AT:FOR slows NODE's process for FOR seconds from AT: it is stopped 9/10 of "
        "every 0.2 s, a slow reader whose peers' sends back up (repeatable)")(
        "checkpoint-dir", po::value(&options.checkpoint_dir),
        "the learners write their checkpoints (<arm>-learner.ckpt, two generations) into this "
        "folder, whether or not a learner restarts (default: the arm's folder, with "
        "learner_restart faults only)")(
        "full-disk", po::value(&full_disks)->composing(),
        "chaos: AT:FOR fills the filesystem of --checkpoint-dir (a tmpfs of at most 256 MiB) "
        "AT seconds after the run's start and frees it FOR seconds later (repeatable)")(
        "node", po::value(&options.node_binary),
        "the hilo-node binary (default: next to hilo-emu)")("version",
                                                            "print the commit and build type");
    // `run` and SCENARIO are positional words, not options: hidden from --help.
    po::options_description hidden;
    hidden.add_options()("command", po::value(&command), "")("scenario", po::value(&scenario), "");
    po::options_description all;
    all.add(desc).add(hidden);
    po::positional_options_description pos;
    pos.add("command", 1).add("scenario", 1);
    po::variables_map vm;
    try
    {
        po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
        po::notify(vm);
    }
    catch (const po::error& e)
    {
        std::cerr << "hilo-emu: " << e.what() << "\n\n" << kUsage;
        return 2;
    }
    if (vm.count("help"))
    {
        std::cout << kUsage << "\n" << desc;
        return 0;
    }
    if (vm.count("version"))
    {
        std::cout << hilo::VersionLine("hilo-emu") << "\n";
        return 0;
    }
    if (network != "ns3" && network != "direct")
    {
        std::cerr << "hilo-emu: --network " << network << " is not available; allowed: ns3, direct"
                  << "\n\n"
                  << kUsage;
        return 2;
    }
    if (ns3.netem_priority < 0 || ns3.netem_priority > 99)
    {
        std::cerr << "hilo-emu: --netem-priority " << ns3.netem_priority << " is outside 0..99\n";
        return 2;
    }
    auto sustained_rate = hilosim::ParseDataRate(sustained);
    if (!sustained_rate.ok())
    {
        std::cerr << "hilo-emu: --sustained-rate: " << sustained_rate.status().message() << "\n";
        return 2;
    }
    for (const std::string& kv : sysctls)
    {
        const size_t eq = kv.find('=');
        if (eq == 0 || eq == std::string::npos || kv.rfind("net.", 0) != 0)
        {
            std::cerr << "hilo-emu: --sysctl " << kv
                      << ": expected KEY=VALUE with a network key (net.*)\n";
            return 2;
        }
        ns3.sysctls.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    for (const std::string& k : relay_kills)
    {
        unsigned relay = 0;
        double at = 0, after = 0;
        char end = 0;
        if (std::sscanf(k.c_str(), "%u:%lf:%lf%c", &relay, &at, &after, &end) != 3 || !(at >= 0) ||
            !(after >= 0) || k.find('-') != std::string::npos)
        {
            std::cerr << "hilo-emu: --kill-relay " << k
                      << ": expected R:AT:AFTER (relay index, seconds >= 0, seconds >= 0)\n";
            return 2;
        }
        options.relay_kills.push_back({relay, at, after});
    }
    for (const std::string& p : pauses)
    {
        auto pause = hilosim::ParseNodePause(p);
        if (!pause.ok())
        {
            std::cerr << "hilo-emu: --pause " << p << ": " << pause.status().message() << "\n";
            return 2;
        }
        options.pauses.push_back(*pause);
    }
    for (const std::string& p : slows)
    {
        auto slow = hilosim::ParseNodePause(p);
        if (!slow.ok())
        {
            std::cerr << "hilo-emu: --slow " << p << ": " << slow.status().message() << "\n";
            return 2;
        }
        slow->slow = true;
        options.pauses.push_back(*slow);
    }
    if (!options.checkpoint_dir.empty())
    {
        std::error_code ec;
        if (!std::filesystem::is_directory(options.checkpoint_dir, ec))
        {
            std::cerr << "hilo-emu: --checkpoint-dir " << options.checkpoint_dir
                      << ": not a folder\n";
            return 2;
        }
    }
    for (const std::string& d : full_disks)
    {
        double at = 0, len = 0;
        char end = 0;
        if (std::sscanf(d.c_str(), "%lf:%lf%c", &at, &len, &end) != 2 || !(at >= 0) || !(len > 0) ||
            !std::isfinite(at) || !std::isfinite(len))
        {
            std::cerr << "hilo-emu: --full-disk " << d
                      << ": expected AT:FOR (seconds >= 0, seconds > 0)\n";
            return 2;
        }
        if (options.checkpoint_dir.empty())
        {
            std::cerr << "hilo-emu: --full-disk " << d
                      << ": needs --checkpoint-dir (the folder whose disk it fills)\n";
            return 2;
        }
        if (const hilo::Status ok = hilosim::DiskFill::Check(options.checkpoint_dir); !ok.ok())
        {
            std::cerr << "hilo-emu: --full-disk: " << ok.message() << "\n";
            return 2;
        }
        options.full_disks.push_back({at, len});
    }
    if (command != "run" || scenario.empty())
    {
        std::cerr << (command.empty() || command == "run"
                          ? std::string("hilo-emu: expected a SCENARIO file")
                          : "hilo-emu: unknown command \"" + command + "\"; allowed: run")
                  << "\n\n"
                  << kUsage;
        return 2;
    }
    auto loaded = hilosim::LoadScenarioFile(scenario, overrides, hilosim::CurrentCatalog());
    if (!loaded.ok())
    {
        std::cerr << loaded.status().message() << "\nhilo-emu run: " << scenario
                  << " is not a valid scenario (schema: sim/scenario/scenario.proto)\n";
        return 2;
    }
    // network.slow_start_after_idle is Linux's own sysctl in every namespace; a --sysctl of the
    // same key, written after it, still wins.
    ns3.sysctls.insert(ns3.sysctls.begin(),
                       {"net.ipv4.tcp_slow_start_after_idle",
                        loaded->resolved.network.slow_start_after_idle ? "1" : "0"});
    if (options.out_dir.empty())
    {
        options.out_dir = "results/runs/" + loaded->resolved.name + "-emu";
    }
    if (options.node_binary.empty())
    {
        options.node_binary = Sibling("hilo-node");
    }
    if (access(options.node_binary.c_str(), X_OK) != 0)
    {
        std::cerr << "hilo-emu: the node binary " << options.node_binary
                  << " is missing or not executable (build the hilo-node target, or pass --node)\n";
        return 2;
    }
    options.overrides = loaded->overrides;
    std::unique_ptr<hilosim::NodeNetwork> nodes;
    if (network == "ns3")
    {
        if (ns3.netem_binary.empty())
            ns3.netem_binary = Sibling("hilo-netem");
        ns3.overrides = loaded->overrides;
        ns3.quiet = options.quiet;
        ns3.sustained_link_traffic_bps = static_cast<double>(sustained_rate->GetBitRate());
        nodes = hilosim::NewNs3Network(*loaded, ns3, std::cerr);
    }
    else
    {
        nodes = hilosim::NewDirectNetwork();
    }
    return hilosim::RunEmulation(*loaded, options, *nodes, std::cout, std::cerr);
}
