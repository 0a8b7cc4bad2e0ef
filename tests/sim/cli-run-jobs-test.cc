// `hilo-sim run --jobs N`: arms in child processes write exactly the files one process writes
// (timing.json aside), bad input still stops the run before any output, and the children's
// progress lines stay whole.
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

namespace hilosim
{
namespace
{

using test::HiloSim;
using test::ReadFile;
using test::RunCommand;

const std::string kThreeArms = R"(
name: "jobs"
seed: 11
)" + std::string(test::kTinyWorkload) +
                               R"(
workers { count: 3 gpu: "A10G" }
network { worker_link { bandwidth: "50Mbps" delay: "5ms" } }
arms { name: "full" strategy: "full" compressor: "dense" }
arms { name: "hilo" strategy: "hilo" compressor: "dense" options { key: "dtype" value: "bf16" } }
arms { name: "spar" strategy: "hilo" compressor: "spar" budget: "20%" }
)";

class CliRunJobs : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        m_dir = std::filesystem::temp_directory_path() /
                ("hilo-run-jobs-" +
                 std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
        m_scenario = (m_dir / "jobs.textproto").string();
        std::ofstream(m_scenario) << kThreeArms;
    }

    void TearDown() override { std::filesystem::remove_all(m_dir); }

    test::CommandResult Run(const std::string& out, const std::string& flags)
    {
        return RunCommand(HiloSim() + " run " + m_scenario + " --out " + (m_dir / out).string() +
                          " " + flags);
    }

    std::filesystem::path m_dir;
    std::string m_scenario;
};

TEST_F(CliRunJobs, ArmsInChildProcessesWriteTheSameFiles)
{
    const auto serial = Run("one", "--quiet --jobs 1");
    ASSERT_EQ(serial.exit_code, 0) << serial.output;
    const auto parallel = Run("two", "--quiet --jobs 2");
    ASSERT_EQ(parallel.exit_code, 0) << parallel.output;
    // The side-by-side table; the "wrote DIR ... in N s wall" line (printed under --quiet too)
    // names each run's own folder and wall time.
    auto table = [](const std::string& output)
    {
        std::istringstream in(output);
        std::string line, kept;
        while (std::getline(in, line))
        {
            if (line.rfind("wrote ", 0) != 0)
                kept += line + "\n";
        }
        return kept;
    };
    EXPECT_NE(serial.output.find("wrote "), std::string::npos) << serial.output;
    EXPECT_EQ(table(parallel.output), table(serial.output));
    for (const char* file : {"summary.json", "steps.csv", "workers.csv", "rollouts.csv",
                             "allocation.csv", "links.csv", "resolved.textproto"})
    {
        SCOPED_TRACE(file);
        const std::string one = ReadFile((m_dir / "one" / file).string());
        EXPECT_FALSE(one.empty());
        EXPECT_EQ(ReadFile((m_dir / "two" / file).string()), one);
    }
    // timing.json differs in its seconds only: every arm is there, in scenario order.
    const std::string timing = ReadFile((m_dir / "two" / "timing.json").string());
    const size_t full = timing.find("\"name\": \"full\"");
    const size_t hilo = timing.find("\"name\": \"hilo\"");
    const size_t spar = timing.find("\"name\": \"spar\"");
    ASSERT_NE(spar, std::string::npos) << timing;
    EXPECT_LT(full, hilo);
    EXPECT_LT(hilo, spar);
}

TEST_F(CliRunJobs, ProgressLinesOfChildrenStayWhole)
{
    const auto r = Run("out", "--jobs 3");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find('\r'), std::string::npos) << r.output;
    const std::regex line(
        R"(\[arm ([123])/3 (full|hilo|spar) *\] step +([12])/2  elapsed \S+  ETA \S+)");
    std::istringstream in(r.output);
    std::string text;
    int progress = 0;
    while (std::getline(in, text))
    {
        if (text.find("[arm") == std::string::npos)
            continue;
        EXPECT_TRUE(std::regex_match(text, line)) << "'" << text << "'";
        ++progress;
    }
    EXPECT_EQ(progress, 6) << r.output; // 3 arms x 2 steps
}

TEST_F(CliRunJobs, BadInputStopsTheRunBeforeAnyOutput)
{
    const auto r = Run("out", "--quiet --jobs 2 --set=arms[hilo].compressor=spar "
                              "--set=arms[hilo].budget=0.001%");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("arms[1] arm 'hilo'"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(m_dir / "out" / "summary.json"));

    const auto negative = Run("out", "--jobs -1");
    EXPECT_EQ(negative.exit_code, 2) << negative.output;
    EXPECT_NE(negative.output.find("--jobs must be 0"), std::string::npos) << negative.output;
}

} // namespace
} // namespace hilosim
