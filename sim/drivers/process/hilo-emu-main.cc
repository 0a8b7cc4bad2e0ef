// hilo-emu: runs a scenario's learner, relays and workers as real processes and writes the same
// outputs as hilo-sim (sim/drivers/process/emu-runner.h).
#include "sim/cli/catalog.h"
#include "sim/drivers/process/emu-runner.h"
#include "sim/scenario/scenario-loader.h"

#include <boost/program_options.hpp>

#include <unistd.h>

#include <filesystem>
#include <iostream>

namespace po = boost::program_options;

namespace
{

const char* const kUsage =
    "usage:\n"
    "  hilo-emu run SCENARIO [--set path=value ...] [--out DIR] [--network direct] [--quiet]\n"
    "Runs every arm of the scenario with the learner, any relays and each worker as separate\n"
    "hilo-node processes over real TCP (--network direct: loopback), and writes summary.json,\n"
    "steps.csv, workers.csv, rollouts.csv, allocation.csv and resolved.textproto to DIR\n"
    "(default results/runs/<scenario name>-emu), as hilo-sim run does.\n"
    "Exit codes: 0 success, 1 run-time failure, 2 bad input, 128+N stopped by signal N.\n";

// hilo-node next to this executable (the build puts both in build/sim/).
std::string
NodeBinary()
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("hilo-node") : (self.parent_path() / "hilo-node").string();
}

} // namespace

int
main(int argc, char** argv)
{
    hilosim::EmuOptions options;
    std::string command, scenario;
    std::vector<std::string> overrides;
    po::options_description desc("hilo-emu run options");
    desc.add_options()("help,h",
                       "this text")("set", po::value(&overrides)->composing(),
                                    "override a scenario field: path.to.field=value (repeatable)")(
        "out", po::value(&options.out_dir), "output folder (default results/runs/<name>-emu)")(
        "network", po::value(&options.network)->default_value("direct"),
        "direct: loopback TCP between the processes")("quiet", po::bool_switch(&options.quiet),
                                                      "no progress on stderr")(
        "stall-timeout", po::value(&options.stall_timeout_s)->default_value(300),
        "seconds a node waits without progress before it gives up")(
        "node", po::value(&options.node_binary),
        "the hilo-node binary (default: next to hilo-emu)")("command", po::value(&command), "")(
        "scenario", po::value(&scenario), "");
    po::positional_options_description pos;
    pos.add("command", 1).add("scenario", 1);
    po::variables_map vm;
    try
    {
        po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
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
    if (options.out_dir.empty())
    {
        options.out_dir = "results/runs/" + loaded->resolved.name + "-emu";
    }
    if (options.node_binary.empty())
    {
        options.node_binary = NodeBinary();
    }
    if (access(options.node_binary.c_str(), X_OK) != 0)
    {
        std::cerr << "hilo-emu: the node binary " << options.node_binary
                  << " is missing or not executable (build the hilo-node target, or pass --node)\n";
        return 2;
    }
    options.overrides = loaded->overrides;
    return hilosim::RunEmulation(*loaded, options, std::cout, std::cerr);
}
