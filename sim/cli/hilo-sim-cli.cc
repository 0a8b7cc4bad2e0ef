#include "sim/cli/hilo-sim-cli.h"

#include "sim/cli/catalog.h"
#include "sim/cli/run-command.h"
#include "sim/scenario/scenario-loader.h"

#include "hilo/build-info.h"
#include "hilo/compress/compressor-factory.h"

#include <boost/program_options.hpp>

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace hilosim
{
namespace
{

namespace po = boost::program_options;

const char* const kUsage =
    "usage:\n"
    "  hilo-sim run SCENARIO [--set path=value ...] [--out DIR] [--quiet] [--pcap DIR]\n"
    "               [--jobs N] [--trace-tcp]\n"
    "  hilo-sim validate SCENARIO... [--set path=value ...] [--print]\n"
    "  hilo-sim list gpus|models|compressors|strategies|network-models|workloads\n"
    "  hilo-sim [COMMAND] --help\n"
    "  hilo-sim --version\n"
    "\n"
    "SCENARIO is a Protobuf text file (schema: sim/scenario/scenario.proto, example:\n"
    "scenarios/quickstart.textproto). --set overrides any field by its path, e.g.\n"
    "  --set workload.steps=50 --set arms[1].budget=5% --set arms[hilo-spar].options.dtype=bf16\n"
    "Exit codes: 0 success, 1 run-time failure, 2 bad input.\n";

po::options_description
ScenarioOptions(bool run)
{
    po::options_description desc(run ? "run options" : "validate options");
    desc.add_options()("set", po::value<std::vector<std::string>>()->composing(),
                       "override a scenario field: path.to.field=value (repeatable; repeated "
                       "fields by index or name, arms[1].budget=5%, maps by key, "
                       "arms[0].options.dtype=bf16)");
    if (run)
    {
        desc.add_options()("out", po::value<std::string>(),
                           "output folder (default results/runs/<scenario name>)")(
            "quiet", po::bool_switch(),
            "no progress on stderr (the arms' table and the \"wrote DIR\" line stay)")(
            "pcap", po::value<std::string>(),
            "write a pcap trace of each end of every link to DIR/<arm>/<link>-a.pcap (a: the end "
            "towards the learner) and <link>-b.pcap, for Wireshark; virtual bytes are zeros")(
            "pcap-snaplen", po::value<uint32_t>()->default_value(65535),
            "bytes kept of each captured frame (e.g. 128: headers and the start of the data)")(
            "trace-tcp", po::bool_switch(),
            "write tcp-trace.csv: every connection's cwnd, ssthresh, SRTT, delivery rate and "
            "HyStart exits every 10 ms of simulated time, when they change (sim/README.md)")(
            "jobs", po::value<int>()->default_value(1),
            "arms run at once, each in a process of its own (0: one per CPU); outputs are the "
            "same as with 1, timing.json aside");
    }
    else
    {
        desc.add_options()("print", po::bool_switch(),
                           "print the resolved scenario (overrides applied, defaults filled)");
    }
    return desc;
}

// Parses a sub-command's arguments: one positional SCENARIO plus `desc`.
bool
ParseScenarioCommand(const std::vector<std::string>& args, const po::options_description& desc,
                     po::variables_map* vm)
{
    po::options_description all;
    all.add(desc).add_options()("scenario", po::value<std::vector<std::string>>(), "");
    po::positional_options_description pos;
    pos.add("scenario", -1);
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), *vm);
    po::notify(*vm);
    return true;
}

std::vector<std::string>
Overrides(const po::variables_map& vm)
{
    return vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>();
}

std::vector<std::string>
ScenarioFiles(const po::variables_map& vm)
{
    return vm.count("scenario") ? vm["scenario"].as<std::vector<std::string>>()
                                : std::vector<std::string>();
}

// Loads scenario `file` with the command's overrides; on failure prints why and returns false.
bool
LoadOne(const std::string& file, const po::variables_map& vm, const char* command,
        std::ostream& err, LoadedScenario* loaded)
{
    auto result = LoadScenarioFile(file, Overrides(vm), CurrentCatalog());
    if (!result.ok())
    {
        err << result.status().message() << "\n";
        err << "hilo-sim " << command << ": " << file
            << " is not a valid scenario (schema: sim/scenario/scenario.proto)\n";
        return false;
    }
    *loaded = std::move(result).value();
    for (const std::string& warning : loaded->resolved.warnings)
        err << "hilo-sim: warning: " << warning << "\n";
    return true;
}

// "A10G", or "8 x A10G (tp)" for a node of several GPUs.
std::string
NodeName(const std::string& gpu, uint32_t gpus, const std::string& parallel)
{
    return gpus == 1 ? gpu : std::to_string(gpus) + " x " + gpu + " (" + parallel + ")";
}

std::string
Describe(const LoadedScenario& s)
{
    const ResolvedScenario& r = s.resolved;
    std::map<std::string, int> gpus;
    for (const ResolvedWorker& w : r.workers)
        gpus[w.gpus == 1 ? w.gpu : "(" + NodeName(w.gpu, w.gpus, w.parallel) + ")"]++;
    std::string mix;
    for (const auto& [gpu, n] : gpus)
        mix += (mix.empty() ? "" : ", ") + std::to_string(n) + " x " + gpu;
    std::string arms;
    for (const ResolvedArm& a : r.arms)
    {
        arms += (arms.empty() ? "" : ", ") + a.name + " (" + hilo::SyncKindName(a.sync.kind) + "/" +
                a.sync.compressor + ", budget " + a.budget_text + ")";
    }
    std::ostringstream os;
    os << s.path << ": ok: scenario \"" << r.name << "\"\n"
       << "  workload: " << WorkloadKindName(r.workload.kind) << ", " << r.workload.steps
       << " steps, lora rank " << r.workload.lora_rank
       << (r.llm_profile.empty() ? "" : ", modelled as " + r.llm_profile)
       << (r.budget_transfer == BudgetTransfer::kDirections
               ? " (budgets buy the modelled directions per matrix)"
               : "")
       << "\n"
       << "  learner: " << NodeName(r.learner_gpu, r.learner_gpus, r.learner_parallel)
       << "; workers: " << r.workers.size() << " (" << mix << ")\n"
       << "  network: " << TopologyKindName(r.network.topology) << ", tcp " << r.network.tcp
       << ", model " << NetworkModelName(r.network.model) << ", tcp_buffer " << r.network.tcp_buffer
       << "\n"
       << "  arms: " << arms << "\n";
    return os.str();
}

int
Validate(const std::vector<std::string>& args, bool help, std::ostream& out, std::ostream& err)
{
    const po::options_description desc = ScenarioOptions(/*run=*/false);
    if (help)
    {
        out << "hilo-sim validate SCENARIO... [--set path=value ...] [--print]\n"
            << "Checks scenarios (syntax, types, ranges, names, compressor options), the "
               "overrides applied to each; exits 0 when all are valid, 2 when one is not.\n\n"
            << desc;
        return kExitOk;
    }
    po::variables_map vm;
    ParseScenarioCommand(args, desc, &vm);
    const std::vector<std::string> files = ScenarioFiles(vm);
    if (files.empty())
    {
        err << "hilo-sim validate: expected at least one SCENARIO file\n\n" << kUsage;
        return kExitBadInput;
    }
    int code = kExitOk;
    for (const std::string& file : files)
    {
        LoadedScenario loaded;
        if (!LoadOne(file, vm, "validate", err, &loaded))
        {
            code = kExitBadInput;
            continue;
        }
        std::vector<std::string> warnings;
        hilo::Status arms = CheckScenarioArms(loaded, &warnings);
        if (!arms.ok())
        {
            err << arms.message() << "\n";
            code = kExitBadInput;
            continue;
        }
        for (const std::string& warning : warnings)
            err << "hilo-sim: warning: " << warning << "\n";
        out << Describe(loaded);
        if (vm["print"].as<bool>())
            out << loaded.resolved_text;
    }
    return code;
}

int
Run(const std::vector<std::string>& args, bool help, std::ostream& out, std::ostream& err)
{
    const po::options_description desc = ScenarioOptions(/*run=*/true);
    if (help)
    {
        out << "hilo-sim run SCENARIO [--set path=value ...] [--out DIR] [--quiet] [--pcap DIR] "
               "[--jobs N] [--trace-tcp]\n"
            << "Runs every arm of the scenario, prints the arms side by side on stdout and "
               "writes to DIR:\n"
               "  summary.json        one entry per arm (latency, bytes, quality, health)\n"
               "  steps.csv           a row per arm and version (times, loss, quality, bytes)\n"
               "  workers.csv         a row per arm, version and worker (receive/ready times)\n"
               "  rollouts.csv        a row per arm, round and worker (rollout times, bytes)\n"
               "  allocation.csv      Spar's kept rank per arm, version and matrix\n"
               "  links.csv           bytes and utilisation per arm, link and direction\n"
               "  resolved.textproto  the scenario after overrides, defaults filled\n"
               "  timing.json         wall and CPU seconds per arm (not deterministic)\n"
               "  tcp-trace.csv       with --trace-tcp: every connection's TCP state over time\n"
               "  and with --pcap, DIR/<arm>/<link>-{a,b}.pcap under the --pcap folder.\n"
               "Progress goes to stderr: one redrawn line on a terminal, a line per 10% of an "
               "arm's steps otherwise.\n\n"
            << desc;
        return kExitOk;
    }
    po::variables_map vm;
    ParseScenarioCommand(args, desc, &vm);
    const std::vector<std::string> files = ScenarioFiles(vm);
    if (files.size() != 1)
    {
        err << "hilo-sim run: expected exactly one SCENARIO file, got " << files.size() << "\n\n"
            << kUsage;
        return kExitBadInput;
    }
    LoadedScenario loaded;
    if (!LoadOne(files[0], vm, "run", err, &loaded))
        return kExitBadInput;
    RunOptions options;
    options.out_dir =
        vm.count("out") ? vm["out"].as<std::string>() : "results/runs/" + loaded.resolved.name;
    options.quiet = vm["quiet"].as<bool>();
    options.overrides = loaded.overrides;
    if (vm.count("pcap"))
    {
        options.pcap_dir = vm["pcap"].as<std::string>();
        if (options.pcap_dir.empty())
        {
            err << "hilo-sim run: --pcap needs a folder\n";
            return kExitBadInput;
        }
    }
    options.pcap_snaplen = vm["pcap-snaplen"].as<uint32_t>();
    options.trace_tcp = vm["trace-tcp"].as<bool>();
    if (options.pcap_snaplen < 1)
    {
        err << "hilo-sim run: --pcap-snaplen must be at least 1\n";
        return kExitBadInput;
    }
    const int jobs = vm["jobs"].as<int>();
    if (jobs < 0)
    {
        err << "hilo-sim run: --jobs must be 0 (one per CPU) or more, got " << jobs << "\n";
        return kExitBadInput;
    }
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    options.jobs =
        jobs > 0 ? static_cast<uint32_t>(jobs) : static_cast<uint32_t>(std::max(cpus, 1L));
    try
    {
        return RunScenario(loaded, options);
    }
    catch (const std::exception& e)
    {
        err << "hilo-sim run: " << e.what() << "\n";
        return kExitRuntime;
    }
}

void
PrintTable(const std::vector<std::pair<std::string, std::string>>& rows, std::ostream& out)
{
    size_t width = 0;
    for (const auto& row : rows)
        width = std::max(width, row.first.size());
    for (const auto& [name, description] : rows)
        out << std::left << std::setw(static_cast<int>(width) + 2) << name << description << "\n";
}

int
List(const std::vector<std::string>& args, bool help, std::ostream& out, std::ostream& err)
{
    const char* const kListUsage =
        "hilo-sim list gpus|models|compressors|strategies|network-models|workloads\n"
        "Lists the names scenarios may use: GPU profiles (learner.gpu, workers.gpu), modelled "
        "LLMs (llm_profile), compressors (arms.compressor), sync strategies (arms.strategy), "
        "network models (network.model), workload kinds, teachers and tasks (workload.kind, "
        "workload.teacher.kind, workload.grpo.task).\n";
    if (help)
    {
        out << kListUsage;
        return kExitOk;
    }
    po::options_description desc;
    desc.add_options()("what", po::value<std::vector<std::string>>(), "");
    po::positional_options_description pos;
    pos.add("what", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    const std::vector<std::string> what =
        vm.count("what") ? vm["what"].as<std::vector<std::string>>() : std::vector<std::string>();
    if (what.size() != 1)
    {
        err << "hilo-sim list: name one of gpus, models, compressors, strategies, "
               "network-models, workloads\n\n"
            << kListUsage;
        return kExitBadInput;
    }
    if (what[0] == "gpus")
    {
        PrintTable(KnownGpus(), out);
    }
    else if (what[0] == "models")
    {
        PrintTable(KnownLlms(), out);
    }
    else if (what[0] == "compressors")
    {
        std::vector<std::pair<std::string, std::string>> rows;
        for (const hilo::CompressorInfo& c : hilo::ListCompressors())
            rows.emplace_back(c.kind, c.description);
        PrintTable(rows, out);
    }
    else if (what[0] == "strategies")
    {
        PrintTable(KnownStrategies(), out);
    }
    else if (what[0] == "network-models")
    {
        PrintTable(KnownNetworkModels(), out);
    }
    else if (what[0] == "workloads")
    {
        PrintTable(KnownWorkloads(), out);
    }
    else
    {
        err << "hilo-sim list: unknown list \"" << what[0]
            << "\"; allowed: gpus, models, compressors, strategies, network-models, "
               "workloads\n";
        return kExitBadInput;
    }
    return kExitOk;
}

using Command = int (*)(const std::vector<std::string>&, bool, std::ostream&, std::ostream&);

struct CommandEntry
{
    const char* name;
    Command command;
};

const CommandEntry kCommands[] = {{"run", &Run}, {"validate", &Validate}, {"list", &List}};

} // namespace

int
RunHiloSim(int argc, const char* const* argv, std::ostream& out, std::ostream& err)
{
    try
    {
        // The first positional word picks the command; everything else goes to the command's own
        // parser (the pattern of Boost.Program_options' documentation for sub-commands).
        po::options_description global("hilo-sim");
        global.add_options()("help,h", "show help (of a command when one is given)")(
            "version", "print the commit and build type")("command", po::value<std::string>(), "")(
            "args", po::value<std::vector<std::string>>(), "");
        po::positional_options_description pos;
        pos.add("command", 1).add("args", -1);
        po::parsed_options parsed = po::command_line_parser(argc, argv)
                                        .options(global)
                                        .positional(pos)
                                        .allow_unregistered()
                                        .run();
        po::variables_map vm;
        po::store(parsed, vm);
        const bool help = vm.count("help") > 0;
        if (vm.count("version"))
        {
            out << hilo::VersionLine("hilo-sim") << "\n";
            return kExitOk;
        }
        if (!vm.count("command"))
        {
            (help ? out : err) << kUsage;
            return help ? kExitOk : kExitBadInput;
        }
        const std::string name = vm["command"].as<std::string>();
        std::vector<std::string> args =
            po::collect_unrecognized(parsed.options, po::include_positional);
        args.erase(std::find(args.begin(), args.end(), name)); // the command itself
        for (const CommandEntry& c : kCommands)
        {
            if (name == c.name)
                return c.command(args, help, out, err);
        }
        err << "hilo-sim: unknown command \"" << name << "\"; allowed: run, validate, list\n\n"
            << kUsage;
        return kExitBadInput;
    }
    catch (const po::error& e)
    {
        err << "hilo-sim: " << e.what() << "\n\n" << kUsage;
        return kExitBadInput;
    }
}

} // namespace hilosim
