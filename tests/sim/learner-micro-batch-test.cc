// learner.micro_batch_sequences: a run that splits the learner's real gradient into passes writes
// the same bytes every time, and a limit that covers every sequence of a round writes the bytes
// of the default (one pass), so scenarios that do not set it keep their results.
#include "sim/cli/catalog.h"
#include "sim/cli/hilo-sim-cli.h"
#include "sim/run/arm-context-builder.h"
#include "sim/scenario/scenario-loader.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace hilosim
{
namespace
{

using test::ReadFile;

const std::string kScenario = std::string(HILO_SOURCE_DIR) + "/scenarios/quickstart.textproto";

/// Runs the quickstart (flow model, 2 steps, 4 workers x 4 sequences per round) into `name`
/// under the temporary folder with the extra `--set` overrides; returns the output folder.
std::filesystem::path
RunQuickstart(const std::string& name, const std::vector<std::string>& sets)
{
    const std::filesystem::path out =
        std::filesystem::temp_directory_path() / ("hilo-micro-batch-" + name);
    std::filesystem::remove_all(out);
    std::vector<std::string> args{"hilo-sim", "run",
                                  kScenario,  "--quiet",
                                  "--out",    out.string(),
                                  "--set",    "network.model=flow",
                                  "--set",    "workload.steps=2",
                                  "--set",    "workload.eval_every=2"};
    for (const std::string& s : sets)
    {
        args.push_back("--set");
        args.push_back(s);
    }
    std::vector<const char*> argv;
    for (const std::string& a : args)
        argv.push_back(a.c_str());
    std::ostringstream o;
    std::ostringstream e;
    EXPECT_EQ(RunHiloSim(static_cast<int>(argv.size()), argv.data(), o, e), kExitOk) << e.str();
    return out;
}

// The files whose bytes depend only on the scenario and seed (timing.json holds wall times).
const char* const kFiles[] = {"steps.csv",      "workers.csv", "rollouts.csv",
                              "allocation.csv", "links.csv",   "summary.json"};

void
ExpectSameBytes(const std::filesystem::path& a, const std::filesystem::path& b)
{
    for (const char* file : kFiles)
    {
        const std::string sa = ReadFile((a / file).string());
        EXPECT_FALSE(sa.empty()) << file;
        EXPECT_EQ(sa, ReadFile((b / file).string())) << file;
    }
}

TEST(LearnerMicroBatch, TheLimitReachesTheWorkloadAndUnsetIsOnePass)
{
    auto unset = LoadScenarioFile(kScenario, {}, CurrentCatalog());
    ASSERT_TRUE(unset.ok()) << unset.status().message();
    EXPECT_EQ(unset->resolved.learner_micro_batch_sequences, 0u);
    EXPECT_EQ(ToWorkloadConfig(unset->resolved, 64).micro_batch_sequences, 0);
    auto set = LoadScenarioFile(kScenario, {"learner.micro_batch_sequences=4"}, CurrentCatalog());
    ASSERT_TRUE(set.ok()) << set.status().message();
    EXPECT_EQ(set->resolved.learner_micro_batch_sequences, 4u);
    EXPECT_EQ(ToWorkloadConfig(set->resolved, 64).micro_batch_sequences, 4);
}

// One pass over a large round is a warning naming the round's size and the setting; a round of
// 1,024 sequences (the quickstart's 4 per worker x 256 workers), or one with the setting, is not.
TEST(LearnerMicroBatch, UnsetOverMoreThan1024SequencesARoundIsAWarning)
{
    auto large = LoadScenarioFile(kScenario, {"workers[0].count=129", "workers[1].count=128"},
                                  CurrentCatalog());
    ASSERT_TRUE(large.ok()) << large.status().message();
    ASSERT_EQ(large->resolved.warnings.size(), 1u);
    EXPECT_NE(large->resolved.warnings[0].find(
                  "learner.micro_batch_sequences: unset, so the learner's gradient is one pass "
                  "over a round's 1028 sequences (257 workers x prompts_per_worker 4 x "
                  "group_size 1), whose autograd graph grows with the fleet; set it (e.g. 256"),
              std::string::npos)
        << large->resolved.warnings[0];
    auto at_limit = LoadScenarioFile(kScenario, {"workers[0].count=128", "workers[1].count=128"},
                                     CurrentCatalog());
    ASSERT_TRUE(at_limit.ok());
    EXPECT_TRUE(at_limit->resolved.warnings.empty()) << at_limit->resolved.warnings[0];
    auto set = LoadScenarioFile(kScenario,
                                {"workers[0].count=129", "workers[1].count=128",
                                 "learner.micro_batch_sequences=256"},
                                CurrentCatalog());
    ASSERT_TRUE(set.ok());
    EXPECT_TRUE(set->resolved.warnings.empty()) << set->resolved.warnings[0];
}

TEST(LearnerMicroBatch, SameSeedSameBytesWithPasses)
{
    // 16 sequences per round in passes of 4.
    const auto a = RunQuickstart("a", {"learner.micro_batch_sequences=4"});
    const auto b = RunQuickstart("b", {"learner.micro_batch_sequences=4"});
    ExpectSameBytes(a, b);
    EXPECT_EQ(ReadFile((a / "resolved.textproto").string()),
              ReadFile((b / "resolved.textproto").string()));
    std::filesystem::remove_all(a);
    std::filesystem::remove_all(b);
}

TEST(LearnerMicroBatch, ACoveringLimitWritesTheDefaultsBytes)
{
    const auto unset = RunQuickstart("unset", {});
    const auto covering = RunQuickstart("covering", {"learner.micro_batch_sequences=16"});
    ExpectSameBytes(unset, covering);
    // Passes of 4 sum the same gradient in another order: the loss differs in its last bits
    // at most, so the runs stay close without being the same bytes.
    const auto split = RunQuickstart("split", {"learner.micro_batch_sequences=4"});
    const auto rows_unset = test::ReadCsv((unset / "steps.csv").string());
    const auto rows_split = test::ReadCsv((split / "steps.csv").string());
    ASSERT_EQ(rows_unset.size(), rows_split.size());
    const size_t loss = test::Column(rows_unset, "loss");
    int compared = 0;
    for (size_t r = 1; r < rows_unset.size(); ++r)
    {
        if (rows_unset[r][loss].empty()) // a row without training (version 0)
            continue;
        ++compared;
        const double u = std::stod(rows_unset[r][loss]);
        EXPECT_NEAR(std::stod(rows_split[r][loss]), u, 1e-4 * std::abs(u) + 1e-9) << r;
    }
    EXPECT_EQ(compared, 4); // 2 arms x 2 steps
    for (const auto& dir : {unset, covering, split})
        std::filesystem::remove_all(dir);
}

} // namespace
} // namespace hilosim
