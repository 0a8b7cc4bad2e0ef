// update_latency_net_s: each (version, worker)'s update latency less the compute overrun inside it
// (the learner's encode overrun of the version and the worker's apply overrun), in summary.json
// (p50 / p99 / max) and steps.csv (the largest over workers, as update_latency_max_s), equal to
// the latency where nothing overran (a simulation).
#include "sim/run/arm-summary.h"
#include "sim/run/output-writer.h"
#include "tests/sim/process-test-util.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace hilosim
{
namespace
{

namespace fs = std::filesystem;

// Two versions to two workers; real compute overran: encode of version 1 by 0.010 s, of version 2
// by 0.030 s; worker 0's apply of version 1 by 0.004 s, worker 1's of version 2 by 0.050 s.
ArmResult
Overrunning()
{
    ArmResult a;
    a.name = "hilo";
    a.real_time = true;
    a.worker_gpu = {"A10G", "A10G"};
    a.worker_region = {"", ""};
    for (uint64_t v : {1, 2})
    {
        PublishEvent p;
        p.version = v;
        p.grad_ready_s = static_cast<double>(v);
        p.published_s = static_cast<double>(v) + 0.1;
        p.encode_overrun_s = v == 1 ? 0.010 : 0.030;
        a.publishes.push_back(p);
    }
    auto apply = [&](uint32_t w, uint64_t v, double latency, double overrun)
    {
        ApplyEvent e;
        e.worker = w;
        e.version = v;
        e.received_s = static_cast<double>(v) + 0.2;
        e.ready_s = static_cast<double>(v) + latency;
        e.overrun_s = overrun;
        a.applies.push_back(e);
    };
    apply(0, 1, 0.300, 0.004); // net 0.286
    apply(1, 1, 0.250, 0.0);   // net 0.240
    apply(0, 2, 0.400, 0.0);   // net 0.370
    apply(1, 2, 0.420, 0.050); // net 0.340
    return a;
}

TEST(NetLatency, IsLatencyLessEncodeAndApplyOverrun)
{
    const ArmResult a = Overrunning();
    const std::vector<double> lat = UpdateLatencies(a);
    const std::vector<double> net = UpdateLatenciesNet(a);
    ASSERT_EQ(net.size(), 4u);
    const double expected[] = {0.286, 0.240, 0.370, 0.340};
    for (size_t i = 0; i < net.size(); ++i)
    {
        EXPECT_NEAR(net[i], expected[i], 1e-12) << i;
        EXPECT_NEAR(lat[i] - net[i], ComputeOverrun(a, a.applies[i]), 1e-12) << i;
    }
    const ArmSummary s = Summarize(a);
    EXPECT_NEAR(s.latency_net_p50_s, 0.286, 1e-12); // nearest rank: 2nd of 4
    EXPECT_NEAR(s.latency_net_max_s, 0.370, 1e-12);
    EXPECT_NEAR(s.latency_max_s, 0.420, 1e-12);

    // The files: summary.json's update_latency_net_s and steps.csv's per-version column, the
    // largest net latency over workers (0.286 and 0.370, where the largest latency is 0.300 and
    // 0.420: not max latency less max overrun).
    const fs::path dir =
        fs::temp_directory_path() / ("hilo-net-latency-" + std::to_string(getpid()));
    RunRecord run;
    run.scenario_name = "net";
    ASSERT_TRUE(WriteRunOutputs(dir.string(), run, {a}).ok());
    const std::string summary = test::ReadFile((dir / "summary.json").string());
    const auto nets = test::JsonValues(summary, "update_latency_net_s");
    ASSERT_EQ(nets.size(), 1u) << summary;
    EXPECT_NE(summary.find("\"update_latency_net_s\": {\"p50\": 0.286, \"p99\": 0.37, "
                           "\"max\": 0.37}"),
              std::string::npos)
        << summary;
    const auto steps = test::ReadCsv((dir / "steps.csv").string());
    const size_t col = test::Column(steps, "update_latency_net_s");
    const size_t max = test::Column(steps, "update_latency_max_s");
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(steps[1][col], "0.286");
    EXPECT_EQ(steps[2][col], "0.37");
    EXPECT_EQ(steps[2][max], "0.42");
    fs::remove_all(dir);
}

TEST(NetLatency, EqualsLatencyWithoutOverrun)
{
    ArmResult a = Overrunning();
    a.real_time = false;
    for (PublishEvent& p : a.publishes)
        p.encode_overrun_s = 0;
    for (ApplyEvent& e : a.applies)
        e.overrun_s = 0;
    EXPECT_EQ(UpdateLatenciesNet(a), UpdateLatencies(a));
    const ArmSummary s = Summarize(a);
    EXPECT_EQ(s.latency_net_p50_s, s.latency_p50_s);
    EXPECT_EQ(s.latency_net_p99_s, s.latency_p99_s);
    EXPECT_EQ(s.latency_net_max_s, s.latency_max_s);
}

} // namespace
} // namespace hilosim
