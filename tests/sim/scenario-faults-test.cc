// The `faults` list, mode.max_sim_time and mode.round_timeout of the scenario schema: every kind
// resolves into typed values; every misuse (unknown kind, bad target, a field the kind does not
// take, a worker hit before it joins or while it is down) is an error naming the line and the
// field.
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
using test::ReadFile;

/// ok-minimal (two workers on a star) plus `extra` scenario text.
hilo::StatusOr<LoadedScenario>
Load(const std::string& extra, std::vector<Diagnostic>* diagnostics = nullptr,
     const std::vector<std::string>& overrides = {})
{
    return LoadScenarioText(ReadFile(DataPath("ok-minimal.textproto")) + extra, "faults.textproto",
                            overrides, CurrentCatalog(), diagnostics);
}

/// Loads `extra`, expecting exactly one problem, at `field`, whose message contains `message`.
void
ExpectOneError(const std::string& extra, const std::string& field, const std::string& message)
{
    std::vector<Diagnostic> diagnostics;
    auto loaded = Load(extra, &diagnostics);
    ASSERT_FALSE(loaded.ok()) << extra;
    EXPECT_EQ(loaded.status().code(), hilo::StatusCode::kInvalidArgument);
    ASSERT_EQ(diagnostics.size(), 1u) << loaded.status().message();
    EXPECT_EQ(diagnostics[0].field, field) << loaded.status().message();
    EXPECT_GT(diagnostics[0].line, 30) << "a line in the appended text";
    EXPECT_NE(diagnostics[0].message.find(message), std::string::npos) << diagnostics[0].message;
}

TEST(ScenarioFaults, EveryKindResolves)
{
    auto loaded = Load(R"(
faults { kind: "worker_crash" at: "2s" target: "worker:1" restart_after: "500ms" }
faults { kind: "worker_crash" at: "9s" target: "worker:1" }
faults { kind: "worker_join" at: "1s" target: "worker:0" }
faults { kind: "link_down" at: "3s" target: "worker:0" duration: "1.5s" }
faults { kind: "loss_burst" at: "4s" target: "worker:1" duration: "2s" rate: 0.1 }
faults { kind: "corrupt" at: "5s" target: "worker:1" duration: "1s" rate: 0.5 after_tcp: true }
faults { kind: "replay_divergence" at: "6s" target: "worker:0" }
faults { kind: "learner_restart" at: "7s" target: "learner" restart_after: "3s" }
faults { kind: "link_down" at: "8s" target: "worker:1" }
faults { kind: "link_down" at: "8.5s" target: "worker:0" duration: "1s" direction: "down" }
faults { kind: "loss_burst" at: "9.5s" target: "worker:0" duration: "1s" rate: 0.2 direction: "up" }
)");
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const std::vector<ResolvedFault>& f = loaded->resolved.faults;
    ASSERT_EQ(f.size(), 11u);
    EXPECT_EQ(f[3].direction, LinkDirection::kBoth) << "both ways unless told";
    EXPECT_EQ(f[9].direction, LinkDirection::kDown);
    EXPECT_EQ(f[10].direction, LinkDirection::kUp);
    EXPECT_FALSE(FaultActsOnDevice(f[9], /*learner_side=*/true));
    EXPECT_TRUE(FaultActsOnDevice(f[9], /*learner_side=*/false));
    EXPECT_TRUE(FaultActsOnDevice(f[10], /*learner_side=*/true));
    EXPECT_FALSE(FaultActsOnDevice(f[10], /*learner_side=*/false));
    EXPECT_TRUE(FaultActsOnDevice(f[3], true) && FaultActsOnDevice(f[3], false));
    EXPECT_EQ(f[0].kind, FaultKind::kWorkerCrash);
    EXPECT_EQ(f[0].target, FaultTargetKind::kWorker);
    EXPECT_EQ(f[0].index, 1u);
    EXPECT_EQ(f[0].at, ns3::Seconds(2));
    EXPECT_EQ(*f[0].restart_after, ns3::MilliSeconds(500));
    EXPECT_FALSE(f[1].restart_after.has_value()) << "never restarts";
    EXPECT_EQ(f[2].kind, FaultKind::kWorkerJoin);
    EXPECT_EQ(f[3].kind, FaultKind::kLinkDown);
    EXPECT_EQ(f[3].target, FaultTargetKind::kWorkerLink);
    EXPECT_EQ(*f[3].duration, ns3::MilliSeconds(1500));
    EXPECT_EQ(f[4].kind, FaultKind::kLossBurst);
    EXPECT_DOUBLE_EQ(f[4].rate, 0.1);
    EXPECT_EQ(f[5].kind, FaultKind::kCorrupt);
    EXPECT_TRUE(f[5].after_tcp);
    EXPECT_EQ(f[6].kind, FaultKind::kReplayDivergence);
    EXPECT_EQ(f[7].kind, FaultKind::kLearnerRestart);
    EXPECT_EQ(f[7].target, FaultTargetKind::kLearner);
    EXPECT_EQ(*f[7].restart_after, ns3::Seconds(3));
    EXPECT_FALSE(f[8].duration.has_value()) << "down until the run ends";
    EXPECT_EQ(loaded->resolved.max_sim_time, ns3::Hours(24)) << "the default bound";
    EXPECT_NE(loaded->resolved_text.find("max_sim_time: \"24h\""), std::string::npos);
}

TEST(ScenarioFaults, RegionAndUplinkTargets)
{
    const std::string faults = R"(
faults { kind: "link_down" at: "1s" target: "region:eu" duration: "1s" }
faults { kind: "loss_burst" at: "1s" target: "uplink" duration: "1s" rate: 1 }
)";
    auto loaded = Load(faults, nullptr,
                       {"network.topology=relay", "network.learner_uplink=bandwidth: \"1Gbps\"",
                        "network.regions[0]=name: \"eu\" wan { bandwidth: \"100Mbps\" }",
                        "workers[0].region=eu"});
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    ASSERT_EQ(loaded->resolved.faults.size(), 2u);
    EXPECT_EQ(loaded->resolved.faults[0].target, FaultTargetKind::kRegionWan);
    EXPECT_EQ(loaded->resolved.faults[0].index, 0u);
    EXPECT_EQ(loaded->resolved.faults[1].target, FaultTargetKind::kUplink);
}

TEST(ScenarioFaults, BadFieldsAreErrorsWithLines)
{
    ExpectOneError("faults { kind: \"meteor\" at: \"1s\" target: \"worker:0\" }\n",
                   "faults[0].kind", "unknown fault kind \"meteor\"; allowed: worker_crash");
    ExpectOneError("faults { kind: \"worker_crash\" target: \"worker:0\" }\n", "faults[0].at",
                   "missing");
    ExpectOneError("faults { kind: \"worker_crash\" at: \"1 parsec\" target: \"worker:0\" }\n",
                   "faults[0].at", "unknown unit");
    ExpectOneError("faults { kind: \"worker_crash\" at: \"1s\" target: \"worker:2\" }\n",
                   "faults[0].target", "worker 2 does not exist (the scenario has 2 workers");
    ExpectOneError("faults { kind: \"worker_crash\" at: \"1s\" target: \"worker:x\" }\n",
                   "faults[0].target", "bad worker index");
    ExpectOneError("faults { kind: \"worker_crash\" at: \"1s\" }\n", "faults[0].target",
                   "missing; allowed: \"worker:N\"");
    ExpectOneError("faults { kind: \"replay_divergence\" at: \"1s\" target: \"uplink\" }\n",
                   "faults[0].target", "is not a worker");
    ExpectOneError("faults { kind: \"link_down\" at: \"1s\" target: \"uplink\" }\n",
                   "faults[0].target", "no network.learner_uplink");
    ExpectOneError("faults { kind: \"link_down\" at: \"1s\" target: \"region:eu\" }\n",
                   "faults[0].target", "no region named \"eu\"");
    ExpectOneError("faults { kind: \"link_down\" at: \"1s\" target: \"worker:0\" rate: 0.5 }\n",
                   "faults[0].rate", "does not apply to a link_down fault");
    ExpectOneError("faults { kind: \"link_down\" at: \"1s\" target: \"worker:0\" duration: "
                   "\"0s\" }\n",
                   "faults[0].duration", "must be > 0");
    ExpectOneError("faults { kind: \"loss_burst\" at: \"1s\" target: \"worker:0\" }\n",
                   "faults[0].rate", "must be in (0, 1], got 0");
    ExpectOneError("faults { kind: \"corrupt\" at: \"1s\" target: \"worker:0\" rate: 1.5 }\n",
                   "faults[0].rate", "must be in (0, 1], got 1.5");
    ExpectOneError("faults { kind: \"loss_burst\" at: \"1s\" target: \"worker:0\" rate: 0.2 "
                   "after_tcp: true }\n",
                   "faults[0].after_tcp", "does not apply to a loss_burst fault");
    ExpectOneError("faults { kind: \"worker_join\" at: \"1s\" target: \"worker:0\" "
                   "restart_after: \"1s\" }\n",
                   "faults[0].restart_after", "does not apply");
    ExpectOneError("faults { kind: \"learner_restart\" at: \"1s\" target: \"learner\" }\n",
                   "faults[0].restart_after", "missing: how long the learner is down");
    ExpectOneError("faults { kind: \"learner_restart\" at: \"1s\" target: \"worker:0\" "
                   "restart_after: \"1s\" }\n",
                   "faults[0].target", "a learner_restart hits the learner");
    ExpectOneError("faults { kind: \"link_down\" at: \"1s\" target: \"worker:0\" direction: "
                   "\"sideways\" }\n",
                   "faults[0].direction",
                   "unknown direction \"sideways\"; allowed: both, down, up");
    ExpectOneError("faults { kind: \"worker_crash\" at: \"1s\" target: \"worker:0\" direction: "
                   "\"up\" }\n",
                   "faults[0].direction", "does not apply to a worker_crash fault");
    ExpectOneError("mode { max_sim_time: \"0s\" }\n", "mode.max_sim_time", "must be > 0");
    ExpectOneError("mode { max_sim_time: \"soon\" }\n", "mode.max_sim_time", "duration");
}

// mode.round_timeout: off unless set; a duration > 0 otherwise, from the file or from --set.
TEST(ScenarioFaults, RoundTimeoutIsOffByDefaultOrADurationAboveZero)
{
    auto off = Load("");
    ASSERT_TRUE(off.ok()) << off.status().message();
    EXPECT_TRUE(off->resolved.round_timeout.IsZero());
    EXPECT_EQ(off->resolved_text.find("round_timeout"), std::string::npos);
    auto on = Load("mode { round_timeout: \"30s\" }\n");
    ASSERT_TRUE(on.ok()) << on.status().message();
    EXPECT_EQ(on->resolved.round_timeout, ns3::Seconds(30));
    auto set = Load("", nullptr, {"mode.round_timeout=2500ms"});
    ASSERT_TRUE(set.ok()) << set.status().message();
    EXPECT_EQ(set->resolved.round_timeout, ns3::MilliSeconds(2500));
    ExpectOneError("mode { round_timeout: \"0s\" }\n", "mode.round_timeout", "must be > 0");
    ExpectOneError("mode { round_timeout: \"soon\" }\n", "mode.round_timeout", "duration");
    ExpectOneError("mode { round_timeout: \"30\" }\n", "mode.round_timeout", "");
}

TEST(ScenarioFaults, WorkersMustBeThereToBeHit)
{
    ExpectOneError(R"(
faults { kind: "worker_join" at: "5s" target: "worker:1" }
faults { kind: "replay_divergence" at: "1s" target: "worker:1" }
)",
                   "faults[1].at", "worker 1 is absent until it joins at 5s");
    ExpectOneError(R"(
faults { kind: "worker_crash" at: "1s" target: "worker:1" }
faults { kind: "worker_join" at: "5s" target: "worker:1" }
)",
                   "faults[0].at", "absent until it joins");
    ExpectOneError(R"(
faults { kind: "worker_join" at: "5s" target: "worker:1" }
faults { kind: "worker_join" at: "6s" target: "worker:1" }
)",
                   "faults[1].target", "a worker joins once");
    ExpectOneError(R"(
faults { kind: "worker_crash" at: "2s" target: "worker:0" restart_after: "3s" }
faults { kind: "replay_divergence" at: "4s" target: "worker:0" }
)",
                   "faults[1].at", "worker 0 is down then (crashed in faults[0]");
    ExpectOneError(R"(
faults { kind: "worker_crash" at: "2s" target: "worker:0" }
faults { kind: "worker_crash" at: "9s" target: "worker:0" }
)",
                   "faults[1].at", "never to restart");
    ExpectOneError(R"(
faults { kind: "learner_restart" at: "2s" target: "learner" restart_after: "5s" }
faults { kind: "learner_restart" at: "3s" target: "learner" restart_after: "1s" }
)",
                   "faults[1].at", "the learner is down then");
    // After the restart the worker is there again.
    auto loaded = Load(R"(
faults { kind: "worker_crash" at: "2s" target: "worker:0" restart_after: "3s" }
faults { kind: "replay_divergence" at: "5s" target: "worker:0" }
)");
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
}

TEST(ScenarioFaults, SetAddsAndChangesFaults)
{
    auto loaded = Load("", nullptr,
                       {"faults[0]=kind: \"link_down\" at: \"1s\" target: \"worker:1\"",
                        "faults[0].duration=2s", "mode.max_sim_time=10min"});
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    ASSERT_EQ(loaded->resolved.faults.size(), 1u);
    EXPECT_EQ(*loaded->resolved.faults[0].duration, ns3::Seconds(2));
    EXPECT_EQ(loaded->resolved.max_sim_time, ns3::Minutes(10));
    std::vector<Diagnostic> diagnostics;
    auto bad = Load("", &diagnostics,
                    {"faults[0]=kind: \"link_down\" at: \"1s\"", "faults[0].target=worker:7"});
    ASSERT_FALSE(bad.ok());
    ASSERT_EQ(diagnostics.size(), 1u);
    EXPECT_EQ(diagnostics[0].origin, "--set faults[0].target=worker:7");
}

TEST(ScenarioFaults, FlowModelCannotInjectFaults)
{
    std::vector<Diagnostic> diagnostics;
    auto loaded = Load(R"(
faults { kind: "link_down" at: "1s" target: "worker:0" }
)",
                       &diagnostics, {"network.model=flow"});
    ASSERT_FALSE(loaded.ok());
    ASSERT_EQ(diagnostics.size(), 1u) << loaded.status().message();
    EXPECT_EQ(diagnostics[0].field, "faults[0].kind");
    EXPECT_NE(diagnostics[0].message.find("network.model"), std::string::npos)
        << diagnostics[0].message;
    EXPECT_TRUE(Load("", nullptr, {"network.model=flow"}).ok())
        << "no faults: the flow model is fine";
}

} // namespace
} // namespace hilosim
