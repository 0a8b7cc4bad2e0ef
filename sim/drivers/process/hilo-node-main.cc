// hilo-node: one learner, worker or relay of a scenario's arm as a real process over kernel TCP
// (sim/drivers/process/node-runner.h). hilo-emu starts these; across real machines, start them by
// hand (README.md, "Running across real machines").
#include "hilo/build-info.h"
#include "models/tensor-memory.h"
#include "sim/cli/catalog.h"
#include "sim/drivers/process/node-runner.h"

#include <boost/program_options.hpp>

#include <iostream>

namespace po = boost::program_options;

namespace
{

const char* const kUsage =
    "usage:\n"
    "  hilo-node learner --scenario S --arm NAME --listen HOST:PORT --key-file F\n"
    "                    [--out DIR] [--set ...]\n"
    "  hilo-node worker  --scenario S --arm NAME --index I --connect HOST:PORT --key-file F\n"
    "                    [--relay HOST:PORT] [--out DIR] [--set ...]\n"
    "  hilo-node relay   --scenario S --arm NAME --index R --listen HOST:PORT\n"
    "                    --connect HOST:PORT --key-file F [--set ...]\n"
    "  hilo-node --version\n"
    "The first word is the role: learner, worker or relay.\n"
    "Every node of a run takes the same --key-file (make one with `openssl rand -hex 32`,\n"
    "mode 0600); a node listening beyond loopback without one refuses to start unless\n"
    "--insecure.\n"
    "Each role takes its GPU, workload, seed and arm from the scenario. Workers are indexed in\n"
    "topology order (scenario order in a star, region by region otherwise), relays by region.\n"
    "Exit codes: 0 success, 1 run-time failure, 2 bad input, 128+N killed by signal N.\n";

} // namespace

int
main(int argc, char** argv)
{
    // Freed tensor memory is kept for reuse, as in hilo-sim (models/tensor-memory.h).
    if (const hilo::Status m = models::KeepFreedMemoryForReuse(); !m.ok())
        std::cerr << "hilo-node: warning: " << m.message() << "\n";
    hilosim::NodeOptions o;
    std::string out;
    po::options_description desc("hilo-node options");
    desc.add_options()("help,h", "this text")("scenario", po::value(&o.scenario),
                                              "scenario file (Protobuf text format)")(
        "arm", po::value(&o.arm), "arm name")("index", po::value(&o.index)->default_value(0),
                                              "worker index (topology order) or relay region")(
        "listen", po::value(&o.listen), "learner, relay: HOST:PORT to listen on (port 0: any)")(
        "connect", po::value(&o.connect), "worker, relay: the learner's HOST:PORT")(
        "relay", po::value(&o.relay), "worker in a relay topology: its relay's HOST:PORT")(
        "set", po::value(&o.overrides)->composing(), "override a scenario field (repeatable)")(
        "out", po::value(&out),
        "folder for this node's event log (learner.events, worker-I.events)")(
        "events", po::value(&o.events), "event log path (overrides --out)")(
        "trace-tcp", po::value(&o.trace_tcp),
        "append this node's TCP trace (every connection's TCP_INFO every 10 ms, when it "
        "changes; the columns of hilo-sim's tcp-trace.csv) to FILE")(
        "port-file", po::value(&o.port_file), "learner, relay: write the bound port here")(
        "epoch-ns", po::value(&o.epoch_ns)->default_value(0),
        "steady-clock epoch of the run in ns (hilo-emu passes one to every node; 0: now)")(
        "sync-start", po::bool_switch(&o.sync_start),
        "print \"ready PORT\" after set-up and read the run's epoch (ns) from stdin")(
        "stall-timeout", po::value(&o.stall_timeout_s)->default_value(300),
        "seconds without progress before giving up")(
        "hello-timeout", po::value(&o.hello_timeout_s)->default_value(5),
        "seconds a connection has to finish its hello (prove the key) before it is closed")(
        "rejoin", po::bool_switch(&o.rejoin),
        "worker: a restarted or late process (waits for the learner's welcome, then catches up "
        "from a snapshot); relay: a restarted one (sends each worker that connects the latest "
        "update)")("diverge-at", po::value(&o.diverge_at_s)->composing(),
                   "worker, fault injection: the next replay after this modelled time "
                   "diverges from the learner's (repeatable)")(
        "checkpoint", po::value(&o.checkpoint),
        "learner: write the learner's checkpoint to this file after every version")(
        "restore", po::bool_switch(&o.restore),
        "learner: start from the --checkpoint file (a restarted learner)")(
        "key-file", po::value(&o.key_file),
        "shared key of the run's nodes (64+ hex digits or 32+ raw bytes, mode 0600): peers "
        "prove it (HMAC-SHA-256 challenge-response), then seal every frame under keys derived "
        "from it (HKDF, ChaCha20-Poly1305)")(
        "insecure", po::bool_switch(&o.insecure),
        "allow listening beyond loopback without --key-file (a trusted network only)")(
        "version", "print the commit and build type");
    // The role is the first word (learner, worker or relay), not an option: hidden from --help.
    po::options_description hidden;
    hidden.add_options()("role", po::value(&o.role), "");
    po::options_description all;
    all.add(desc).add(hidden);
    po::positional_options_description pos;
    pos.add("role", 1);
    po::variables_map vm;
    try
    {
        po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
        po::notify(vm);
    }
    catch (const po::error& e)
    {
        std::cerr << "hilo-node: " << e.what() << "\n\n" << kUsage;
        return 2;
    }
    if (vm.count("help"))
    {
        std::cout << kUsage << "\n" << desc;
        return 0;
    }
    if (vm.count("version"))
    {
        std::cout << hilo::VersionLine("hilo-node") << "\n";
        return 0;
    }
    if (o.role.empty() || o.scenario.empty() || o.arm.empty())
    {
        std::cerr << "hilo-node: a role, --scenario and --arm are required\n\n" << kUsage;
        return 2;
    }
    if (o.events.empty() && !out.empty())
    {
        o.events = out + "/" +
                   (o.role == "learner" ? std::string("learner")
                                        : o.role + "-" + std::to_string(o.index)) +
                   ".events";
    }
    return hilosim::RunNode(o, hilosim::CurrentCatalog(), std::cerr);
}
