// Network settings the validator refuses or warns about: congestion controls the flow model
// cannot model, queue settings it ignores, regions without workers, faults after the run's end,
// and network.slow_start_after_idle.
#include "sim/cli/catalog.h"
#include "sim/scenario/scenario-loader.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hilosim
{
namespace
{

using test::DataPath;

hilo::StatusOr<LoadedScenario>
Load(const std::vector<std::string>& overrides)
{
    return LoadScenarioFile(DataPath("ok-minimal.textproto"), overrides, CurrentCatalog());
}

bool
Has(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

TEST(NetworkValidation, TheFlowModelRefusesVariantsItCannotModel)
{
    for (const char* variant : {"bbr", "vegas", "ledbat", "westwood"})
    {
        SCOPED_TRACE(variant);
        auto loaded = Load({"network.model=flow", std::string("network.tcp=") + variant});
        ASSERT_FALSE(loaded.ok());
        EXPECT_TRUE(Has(loaded.status().message(),
                        "--set network.tcp=" + std::string(variant) +
                            ": network.tcp: the flow network model cannot model \"" + variant +
                            "\" (its window follows rate, delay or window-size rules the model "
                            "does not have); allowed with network.model \"flow\": cubic, "
                            "newreno, linuxreno, bic, scalable (or network.model: \"packet\")"))
            << loaded.status().message();
        // The packet model runs them.
        EXPECT_TRUE(Load({std::string("network.tcp=") + variant}).ok());
    }
    for (const char* variant : {"cubic", "newreno", "linuxreno", "bic", "scalable"})
    {
        auto loaded = Load({"network.model=flow", std::string("network.tcp=") + variant});
        EXPECT_TRUE(loaded.ok()) << variant << ": " << loaded.status().message();
    }
}

TEST(NetworkValidation, QueueSettingsAreAWarningUnderTheFlowModel)
{
    auto flow = Load({"network.model=flow", "network.worker_link.queue=codel",
                      "network.worker_link.queue_packets=50"});
    ASSERT_TRUE(flow.ok()) << flow.status().message();
    const std::vector<std::string>& w = flow->resolved.warnings;
    ASSERT_EQ(w.size(), 2u);
    EXPECT_TRUE(Has(w[0], "--set network.worker_link.queue=codel: network.worker_link.queue: "
                          "ignored by network.model \"flow\", which has no queues (no queueing "
                          "delay, no drops, no AQM); use network.model \"packet\" to model "
                          "\"codel\""))
        << w[0];
    EXPECT_TRUE(Has(w[1], "network.worker_link.queue_packets: network.model \"flow\" has no "
                          "queues: it only bounds the automatic TCP window"))
        << w[1];
    // The packet model uses them: no warning.
    auto packet = Load({"network.worker_link.queue=codel", "network.worker_link.queue_packets=50"});
    ASSERT_TRUE(packet.ok());
    EXPECT_TRUE(packet->resolved.warnings.empty());
    // The defaults say nothing.
    auto plain = Load({"network.model=flow"});
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(plain->resolved.warnings.empty());
}

TEST(NetworkValidation, ARelayWithoutWorkersIsAnErrorAndAnEmptyRegionAWarning)
{
    const std::vector<std::string> twoRegions = {
        "network.regions[0].name=eu", "network.regions[0].wan.bandwidth=100Mbps",
        "network.regions[1].name=us", "network.regions[1].wan.bandwidth=100Mbps",
        "workers[0].region=eu"};
    std::vector<std::string> relay = twoRegions;
    relay.push_back("network.topology=relay");
    auto bad = Load(relay);
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(Has(bad.status().message(),
                    "network.regions[1].name: region \"us\" has no workers: its relay would "
                    "still receive every update over the uplink; place a worker group in it "
                    "(workers { region: \"us\" }) or remove the region"))
        << bad.status().message();

    std::vector<std::string> regions = twoRegions;
    regions.push_back("network.topology=regions");
    auto warned = Load(regions);
    ASSERT_TRUE(warned.ok()) << warned.status().message();
    ASSERT_EQ(warned->resolved.warnings.size(), 1u);
    EXPECT_TRUE(Has(warned->resolved.warnings[0],
                    "network.regions[1].name: region \"us\" has no workers; its WAN link "
                    "carries nothing"))
        << warned->resolved.warnings[0];
}

TEST(NetworkValidation, AFaultAtOrAfterMaxSimTimeIsAnError)
{
    const std::vector<std::string> fault = {"mode.max_sim_time=10min", "faults[0].kind=link_down",
                                            "faults[0].target=worker:0", "faults[0].duration=1s"};
    std::vector<std::string> late = fault;
    late.push_back("faults[0].at=10min");
    auto bad = Load(late);
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(Has(bad.status().message(),
                    "faults[0].at: \"10min\" is not before mode.max_sim_time (\"10min\"): the "
                    "fault would never happen; allowed: a time in [0, max_sim_time)"))
        << bad.status().message();
    std::vector<std::string> inTime = fault;
    inTime.push_back("faults[0].at=9min");
    auto ok = Load(inTime);
    ASSERT_TRUE(ok.ok()) << ok.status().message();
    ASSERT_EQ(ok->resolved.faults.size(), 1u);
}

TEST(NetworkValidation, SlowStartAfterIdleDefaultsToLinuxsDefault)
{
    auto plain = Load({});
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(plain->resolved.network.slow_start_after_idle);
    EXPECT_TRUE(Has(plain->resolved_text, "slow_start_after_idle: true"));
    auto warm = Load({"network.slow_start_after_idle=false"});
    ASSERT_TRUE(warm.ok()) << warm.status().message();
    EXPECT_FALSE(warm->resolved.network.slow_start_after_idle);
}

} // namespace
} // namespace hilosim
