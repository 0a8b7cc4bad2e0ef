// Teaching scenario 6 (a 72B model on 8-GPU nodes over a WAN) runs briefly and answers its
// question: HiLo + Spar's update reaches the nodes sooner than full sync's, each GPU replays only
// its share of the adapter, and the same fleet of one-GPU workers is refused with the bytes.
#include "sim/cli/hilo-sim-cli.h"
#include "tests/sim/scenario-test-util.h"

#include "models/compute-model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace hilosim
{
namespace
{

using test::Column;
using test::ReadCsv;

const std::string kScenario =
    std::string(HILO_SOURCE_DIR) + "/scenarios/teaching/06-72b-on-8-gpu-nodes.textproto";

int
Cli(std::vector<const char*> args, std::string* err)
{
    args.insert(args.begin(), "hilo-sim");
    std::ostringstream o;
    std::ostringstream e;
    const int code = RunHiloSim(static_cast<int>(args.size()), args.data(), o, e);
    *err = e.str();
    return code;
}

TEST(TeachingNodes, SeventyTwoBillionOnEightGpuNodesRunsAndAnswersItsQuestion)
{
    const std::filesystem::path out =
        std::filesystem::temp_directory_path() / "hilo-teaching-06-test";
    std::filesystem::remove_all(out);
    std::string err;
    ASSERT_EQ(Cli({"run", kScenario.c_str(), "--quiet", "--out", out.c_str(), "--set",
                   "workload.steps=1", "--set", "workers[0].count=2"},
                  &err),
              kExitOk)
        << err;
    const auto steps = ReadCsv((out / "steps.csv").string());
    const size_t arm = Column(steps, "arm");
    const size_t version = Column(steps, "version");
    const size_t latency = Column(steps, "update_latency_max_s");
    const size_t apply = Column(steps, "apply_s_max");
    double full_latency = -1;
    double hilo_latency = -1;
    double hilo_apply = -1;
    for (size_t r = 1; r < steps.size(); ++r)
    {
        if (steps[r][version] != "1")
            continue;
        if (steps[r][arm] == "full")
            full_latency = std::stod(steps[r][latency]);
        if (steps[r][arm] == "hilo-spar")
        {
            hilo_latency = std::stod(steps[r][latency]);
            hilo_apply = std::stod(steps[r][apply]);
        }
    }
    ASSERT_GT(full_latency, 0);
    ASSERT_GT(hilo_latency, 0);
    // 1.68 GB per update over 1 Gbps against 1.6% of it.
    EXPECT_GT(full_latency, 5 * hilo_latency);
    // Each GPU of the 8 x A10G node decodes and replays its share: less than one A10G would
    // with the whole adapter, more than an eighth of that (the replicated factors).
    const models::LlmProfile llm = models::FindLlm("Qwen2.5-72B").value();
    const models::GpuProfile a10g = models::FindGpu("A10G").value();
    const int64_t numel = llm.LoraParams(64, models::LlmTargetNames()).value();
    const double one_gpu = models::DecodeReplaySeconds(a10g, numel, "hilo").value();
    EXPECT_LT(hilo_apply, one_gpu);
    EXPECT_GT(hilo_apply, one_gpu / 8);
    std::filesystem::remove_all(out);

    // One A10G per worker cannot hold the model: bad input, with the bytes.
    EXPECT_EQ(Cli({"validate", kScenario.c_str(), "--set", "workers[0].gpus=1"}, &err),
              kExitBadInput);
    EXPECT_NE(err.find("workers[0].gpus: Qwen2.5-72B does not fit a node of 1 x A10G"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("weights 145410768896 bytes"), std::string::npos) << err;
}

} // namespace
} // namespace hilosim
