// The hilo-sim executable: exit codes and messages of validate, list and run.
#include "sim/cli/catalog.h"
#include "sim/cli/hilo-sim-cli.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace hilosim
{
namespace
{

using test::DataPath;
using test::HiloSim;
using test::RunCommand;

// Runs hilo-sim in-process.
int
Cli(std::vector<const char*> args, std::string* out, std::string* err)
{
    args.insert(args.begin(), "hilo-sim");
    std::ostringstream o;
    std::ostringstream e;
    const int code = RunHiloSim(static_cast<int>(args.size()), args.data(), o, e);
    *out = o.str();
    *err = e.str();
    return code;
}

std::vector<std::string>
BadFiles()
{
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(DataPath("")))
    {
        if (e.path().filename().string().rfind("bad-", 0) == 0)
            files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<std::string>
ShippedScenarios()
{
    std::vector<std::string> files;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(std::string(HILO_SOURCE_DIR) + "/scenarios"))
    {
        if (e.path().extension() == ".textproto")
            files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

TEST(CliHiloSim, ValidateExitsTwoOnEachBadFile)
{
    const std::vector<std::string> files = BadFiles();
    ASSERT_GE(files.size(), 12u);
    // In-process, one file at a time: each one alone is exit code 2.
    for (const std::string& file : files)
    {
        SCOPED_TRACE(file);
        std::string out, err;
        EXPECT_EQ(Cli({"validate", file.c_str()}, &out, &err), kExitBadInput) << out;
        EXPECT_NE(err.find(file + ":"), std::string::npos) << err;
    }
    // The executable, once over all of them (each start loads LibTorch and ns-3, ~1 s): exit 2,
    // and every file reported with its line.
    ASSERT_TRUE(std::filesystem::exists(HiloSim())) << HiloSim();
    std::string command = HiloSim() + " validate";
    for (const std::string& file : files)
        command += " '" + file + "'";
    const auto r = RunCommand(command);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    for (const std::string& file : files)
    {
        EXPECT_NE(r.output.find(file + " is not a valid scenario"), std::string::npos) << file;
        EXPECT_NE(r.output.find(file + ":"), std::string::npos) << file;
    }
    // One bad file alone through the executable.
    const auto one = RunCommand(HiloSim() + " validate '" + DataPath("bad-syntax.textproto") + "'");
    EXPECT_EQ(one.exit_code, 2) << one.output;
    EXPECT_NE(one.output.find("bad-syntax.textproto:"), std::string::npos) << one.output;
}

TEST(CliHiloSim, ValidateAcceptsEveryShippedScenario)
{
    const std::vector<std::string> files = ShippedScenarios();
    ASSERT_GE(files.size(), 1u);
    std::string command = HiloSim() + " validate";
    for (const std::string& file : files)
        command += " '" + file + "'";
    const auto r = RunCommand(command);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& file : files)
        EXPECT_NE(r.output.find(file + ": ok: scenario"), std::string::npos) << r.output;
}

TEST(CliHiloSim, ValidateChecksBudgetsAgainstTheRealAdapter)
{
    // dense cannot shrink: a budget below its payload is bad input, found by validate.
    const std::string file = DataPath("ok-minimal.textproto");
    std::string out, err;
    EXPECT_EQ(Cli({"validate", file.c_str(), "--set=arms[hilo].budget=2%"}, &out, &err),
              kExitBadInput);
    EXPECT_NE(err.find("ok-minimal.textproto: arms[1] arm 'hilo': budget 2%"), std::string::npos)
        << err;
    EXPECT_NE(err.find("smallest dense payload"), std::string::npos) << err;
}

TEST(CliHiloSim, ValidateWithOverrides)
{
    const std::string file = DataPath("ok-minimal.textproto");
    auto r = RunCommand(HiloSim() + " validate " + file +
                        " --set workload.steps=12 --set 'arms[hilo].compressor=spar'"
                        " --set 'arms[hilo].budget=2%' --print");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("steps: 12"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("budget: \"2%\""), std::string::npos) << r.output;

    std::string out, err;
    EXPECT_EQ(Cli({"validate", file.c_str(), "--set", "workload.stepz=12"}, &out, &err),
              kExitBadInput);
    EXPECT_NE(err.find("--set workload.stepz=12"), std::string::npos) << err;
    EXPECT_NE(err.find("valid fields: kind, steps"), std::string::npos) << err;
    EXPECT_EQ(Cli({"validate", file.c_str(), "--set=arms[1].compressor=topk",
                   "--set=arms[1].budget=1%", "--set", "arms[full].options.dtype=fp32"},
                  &out, &err),
              kExitOk)
        << err;
}

TEST(CliHiloSim, BadCommandLinesExitTwo)
{
    std::string out, err;
    EXPECT_EQ(Cli({}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("usage:"), std::string::npos);
    EXPECT_EQ(Cli({"frobnicate"}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("unknown command \"frobnicate\"; allowed: run, validate, list"),
              std::string::npos);
    EXPECT_EQ(Cli({"validate"}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("expected at least one SCENARIO file"), std::string::npos);
    EXPECT_EQ(Cli({"run", "a.textproto", "b.textproto"}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("expected exactly one SCENARIO file, got 2"), std::string::npos);
    EXPECT_EQ(Cli({"validate", "a.textproto", "--bogus"}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("bogus"), std::string::npos) << err;
    EXPECT_EQ(Cli({"validate", "/no/such/file.textproto"}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("/no/such/file.textproto: cannot read"), std::string::npos) << err;
    EXPECT_EQ(Cli({"list"}, &out, &err), kExitBadInput);
    EXPECT_EQ(Cli({"list", "gpu"}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("allowed: gpus, models, compressors"), std::string::npos);
}

TEST(CliHiloSim, Help)
{
    std::string out, err;
    EXPECT_EQ(Cli({"--help"}, &out, &err), kExitOk);
    EXPECT_NE(out.find("hilo-sim run SCENARIO"), std::string::npos);
    EXPECT_EQ(Cli({"run", "--help"}, &out, &err), kExitOk);
    EXPECT_NE(out.find("--out"), std::string::npos) << out;
    EXPECT_NE(out.find("--quiet"), std::string::npos) << out;
    EXPECT_EQ(Cli({"validate", "-h"}, &out, &err), kExitOk);
    EXPECT_NE(out.find("--set"), std::string::npos) << out;
}

TEST(CliHiloSim, Lists)
{
    std::string out, err;
    EXPECT_EQ(Cli({"list", "gpus"}, &out, &err), kExitOk);
    for (const auto& [name, description] : KnownGpus())
        EXPECT_NE(out.find(name), std::string::npos) << name;
    EXPECT_NE(out.find("H100-SXM"), std::string::npos);
    EXPECT_EQ(Cli({"list", "models"}, &out, &err), kExitOk);
    ASSERT_FALSE(KnownLlms().empty());
    for (const auto& [name, description] : KnownLlms())
        EXPECT_NE(out.find(name), std::string::npos) << name;
    EXPECT_EQ(Cli({"list", "compressors"}, &out, &err), kExitOk);
    EXPECT_NE(out.find("dense"), std::string::npos);
    EXPECT_EQ(Cli({"list", "strategies"}, &out, &err), kExitOk);
    for (const char* name : {"full", "hilo", "delta", "primal"})
        EXPECT_NE(("\n" + out).find(std::string("\n") + name + " "), std::string::npos)
            << name << " in\n"
            << ("\n" + out);
    EXPECT_EQ(Cli({"list", "network-models"}, &out, &err), kExitOk);
    EXPECT_EQ(out.rfind("packet", 0), 0u) << out;
    EXPECT_NE(out.find("\nflow "), std::string::npos) << out;
    EXPECT_EQ(Cli({"list", "networks"}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("network-models"), std::string::npos) << err;
}

TEST(CliHiloSim, RunRejectsBadInputWithTwo)
{
    std::string out, err;
    EXPECT_EQ(Cli({"run", DataPath("bad-loss.textproto").c_str()}, &out, &err), kExitBadInput);
    EXPECT_NE(err.find("network.worker_link.loss"), std::string::npos) << err;
}

// A relay region behind a learner uplink: every kind of link (uplink, region WAN, LAN) appears.
const std::string kTinyRelay = R"(
name: "tiny-relay"
seed: 5
)" + std::string(test::kTinyWorkload) + R"(
workers { count: 2 gpu: "A10G" region: "r" }
network {
  topology: "relay"
  worker_link { bandwidth: "1Gbps" delay: "1ms" }
  learner_uplink { bandwidth: "10Gbps" delay: "1ms" }
  regions { name: "r" wan { bandwidth: "20Mbps" delay: "20ms" } }
}
arms { name: "full" strategy: "full" compressor: "dense" }
arms { name: "hilo" strategy: "hilo" compressor: "dense" options { key: "dtype" value: "bf16" } }
)";

struct PcapFile
{
    uint32_t magic{0};
    uint32_t snaplen{0};
    uint32_t linktype{0};
    uint64_t records{0};
    uint64_t orig_bytes{0}; // frame sizes on the wire
    uint64_t max_incl{0};   // longest record kept
    bool time_ordered{true};
    std::string data; // every record's captured bytes, concatenated
};

PcapFile
ReadPcap(const std::filesystem::path& path)
{
    const std::string bytes = test::ReadFile(path.string());
    auto u32 = [&](size_t at)
    {
        uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, 4); // the simulator writes host byte order
        return v;
    };
    PcapFile f;
    EXPECT_GE(bytes.size(), 24u) << path;
    if (bytes.size() < 24)
        return f;
    f.magic = u32(0);
    f.snaplen = u32(16);
    f.linktype = u32(20);
    double last = 0;
    for (size_t at = 24; at + 16 <= bytes.size();)
    {
        const double t = u32(at) + u32(at + 4) * 1e-6;
        const uint32_t incl = u32(at + 8);
        f.time_ordered &= t >= last;
        last = t;
        ++f.records;
        f.orig_bytes += u32(at + 12);
        f.max_incl = std::max<uint64_t>(f.max_incl, incl);
        f.data.append(bytes, at + 16, incl);
        at += 16 + incl;
        EXPECT_LE(at, bytes.size()) << path << ": record " << f.records << " cut short";
    }
    return f;
}

std::map<std::string, std::vector<std::string>>
ReadCsvByKey(const std::filesystem::path& path, int key_columns)
{
    std::istringstream in(test::ReadFile(path.string()));
    std::string line;
    std::getline(in, line); // header
    std::map<std::string, std::vector<std::string>> rows;
    while (std::getline(in, line))
    {
        std::vector<std::string> cells;
        std::istringstream row(line);
        std::string cell;
        while (std::getline(row, cell, ','))
            cells.push_back(cell);
        std::string key;
        for (int k = 0; k < key_columns; ++k)
            key += (k ? "|" : "") + cells.at(k);
        rows[key] = cells;
    }
    return rows;
}

TEST(CliHiloSim, RunWritesLinkUsageAndPcapTracesOfEveryLinkEnd)
{
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hilo-cli-pcap";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string scenario = (dir / "tiny-relay.textproto").string();
    std::ofstream(scenario) << kTinyRelay;
    const std::string out_dir = (dir / "out").string();
    const std::string pcap_dir = (dir / "pcap").string();
    std::string out, err;
    ASSERT_EQ(Cli({"run", scenario.c_str(), "--out", out_dir.c_str(), "--pcap", pcap_dir.c_str(),
                   "--quiet"},
                  &out, &err),
              kExitOk)
        << err;

    // links.csv: both directions of the four links, per arm.
    const auto links = ReadCsvByKey(std::filesystem::path(out_dir) / "links.csv", 3);
    const std::vector<std::string> names = {"uplink", "region r wan", "region r worker 0",
                                            "region r worker 1"};
    EXPECT_EQ(links.size(), 2 * names.size() * 2);
    const std::string summary = test::ReadFile(out_dir + "/summary.json");
    EXPECT_NE(summary.find("\"busiest_link\": {\"link\": \"region r wan\", \"direction\": "
                           "\"down\", \"bandwidth_bps\": 20000000"),
              std::string::npos)
        << summary;
    for (const std::string arm : {"full", "hilo"})
    {
        for (const std::string& name : names)
        {
            SCOPED_TRACE(arm + " " + name);
            const auto& down = links.at(arm + "|" + name + "|down");
            const auto& up = links.at(arm + "|" + name + "|up");
            const double mean = std::stod(down[6]);
            const double peak = std::stod(down[7]);
            EXPECT_GT(std::stoull(down[4]), 0u);
            EXPECT_GT(mean, 0.0);
            EXPECT_GE(peak, mean);
            EXPECT_LE(peak, 1.0);
            EXPECT_EQ(down[8], "0.1");

            // The pcap files: one per end, every frame the end sent or received, PPP framing.
            const auto base = std::filesystem::path(pcap_dir) / arm;
            std::string file = name;
            std::replace(file.begin(), file.end(), ' ', '-');
            const PcapFile a = ReadPcap(base / (file + "-a.pcap"));
            const PcapFile b = ReadPcap(base / (file + "-b.pcap"));
            for (const PcapFile* f : {&a, &b})
            {
                EXPECT_EQ(f->magic, 0xa1b2c3d4u);
                EXPECT_EQ(f->linktype, 9u); // DLT_PPP
                EXPECT_EQ(f->snaplen, 65535u);
                EXPECT_TRUE(f->time_ordered);
            }
            // Each end saw what it sent and (up to frames still in flight) what the other sent.
            const uint64_t sent = std::stoull(down[4]) + std::stoull(up[4]);
            EXPECT_GT(a.orig_bytes, std::stoull(down[4]));
            EXPECT_GT(b.orig_bytes, std::stoull(up[4]));
            EXPECT_LE(a.orig_bytes + b.orig_bytes, 2 * sent);
            EXPECT_GE(a.orig_bytes + b.orig_bytes, sent);
            // Full records: the real bytes are there, message frames ("HLMF") included.
            EXPECT_EQ(a.data.size(), a.orig_bytes);
            EXPECT_NE(a.data.find("HLMF"), std::string::npos);
        }
    }

    // A short snap length keeps only the start of each frame; a folder that cannot be made is
    // bad input before any arm runs.
    const std::string short_dir = (dir / "short").string();
    ASSERT_EQ(Cli({"run", scenario.c_str(), "--out", out_dir.c_str(), "--pcap", short_dir.c_str(),
                   "--pcap-snaplen", "96", "--quiet"},
                  &out, &err),
              kExitOk)
        << err;
    const PcapFile cut =
        ReadPcap(std::filesystem::path(short_dir) / "hilo" / "region-r-wan-a.pcap");
    EXPECT_EQ(cut.snaplen, 96u);
    EXPECT_EQ(cut.max_incl, 96u);
    EXPECT_GT(cut.orig_bytes, cut.data.size());
    const std::string blocked = (dir / "tiny-relay.textproto" / "pcap").string(); // in a file
    EXPECT_EQ(Cli({"run", scenario.c_str(), "--out", out_dir.c_str(), "--pcap", blocked.c_str(),
                   "--quiet"},
                  &out, &err),
              kExitBadInput);
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace hilosim
