// The hilo-sim executable: exit codes and messages of validate, list and run.
#include "sim/cli/catalog.h"
#include "sim/cli/hilo-sim-cli.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
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

} // namespace
} // namespace hilosim
