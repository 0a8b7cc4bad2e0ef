// `--set` overrides by reflection: nested fields, repeated elements by index and by name, map
// entries, typed scalars, whole messages in text format, and the errors of a bad path or value.
#include "sim/cli/catalog.h"
#include "sim/scenario/scenario-loader.h"
#include "sim/scenario/scenario-override.h"
#include "tests/sim/scenario-test-util.h"

#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

namespace hilosim
{
namespace
{

hilo::StatusOr<LoadedScenario>
LoadMinimal(const std::vector<std::string>& overrides)
{
    return LoadScenarioFile(test::DataPath("ok-minimal.textproto"), overrides, CurrentCatalog());
}

std::string
ErrorOf(google::protobuf::Message* m, const std::string& assignment)
{
    auto r = ApplyOverride(m, assignment);
    EXPECT_FALSE(r.ok()) << assignment << " was accepted";
    return r.ok() ? "" : r.status().message();
}

TEST(ScenarioOverride, NestedScalars)
{
    auto s = LoadMinimal({"workload.steps=25", "network.worker_link.bandwidth=1Gbps",
                          "workload.temperature=0.5", "seed=18446744073709551615",
                          "workload.model.d_model=96"});
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->resolved.workload.steps, 25u);
    EXPECT_EQ(s->resolved.workers[0].link.rate.GetBitRate(), 1000000000u);
    EXPECT_DOUBLE_EQ(s->resolved.workload.temperature, 0.5);
    EXPECT_EQ(s->resolved.seed, 18446744073709551615ull);
    EXPECT_EQ(s->resolved.workload.model.d_model, 96u);
}

// The frozen second moment reaches the optimizer both sides replay; beyond the run it is refused.
TEST(ScenarioOverride, FrozenSecondMomentReachesTheOptimizer)
{
    auto s = LoadMinimal({"optimizer.v_freeze_step=4"});
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->resolved.optimizer.v_freeze_step, 4);
    EXPECT_EQ(LoadMinimal({})->resolved.optimizer.v_freeze_step, 0);
    auto late = LoadMinimal({"optimizer.v_freeze_step=11"}); // the run has 10 steps
    ASSERT_FALSE(late.ok());
    EXPECT_NE(late.status().message().find("optimizer.v_freeze_step"), std::string::npos)
        << late.status().message();
}

TEST(ScenarioOverride, RepeatedByIndexAndByName)
{
    auto s = LoadMinimal({"arms[1].budget=5%", "arms[full].options.dtype=fp32",
                          "workers[0].count=3", "arms[hilo].error_feedback.enabled=false"});
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->resolved.arms[1].sync.budget.ResolveBytes(1000), 50);
    EXPECT_EQ(s->resolved.arms[1].budget_text, "5%");
    EXPECT_FALSE(s->resolved.arms[1].sync.error_feedback.enabled);
    EXPECT_EQ(s->resolved.arms[0].sync.compressor_options.at("dtype"), "fp32");
    EXPECT_EQ(s->resolved.workers.size(), 3u);
}

TEST(ScenarioOverride, AppendsAtIndexEqualToSize)
{
    auto s = LoadMinimal({"arms[2].name=delta", "arms[2].strategy=delta", "workers[1].count=1",
                          "workers[1].gpu=T4"});
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_EQ(s->resolved.arms.size(), 3u);
    EXPECT_EQ(s->resolved.arms[2].sync.kind, hilo::SyncKind::kDelta);
    ASSERT_EQ(s->resolved.workers.size(), 3u);
    EXPECT_EQ(s->resolved.workers[2].gpu, "T4");
}

TEST(ScenarioOverride, MapEntries)
{
    Scenario sc;
    auto a = ApplyOverride(&sc, "arms[0].options.dtype=bf16");
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(*a, "arms[0].options.dtype");
    auto b = ApplyOverride(&sc, "arms[0].options[min_rank]=2");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(*b, "arms[0].options.min_rank");
    ASSERT_TRUE(ApplyOverride(&sc, "arms[0].options.dtype=fp16").ok()); // replaces
    EXPECT_EQ(sc.arms(0).options().size(), 2u);
    EXPECT_EQ(sc.arms(0).options().at("dtype"), "fp16");
    EXPECT_EQ(sc.arms(0).options().at("min_rank"), "2");
}

TEST(ScenarioOverride, WholeMessageInTextFormat)
{
    auto s = LoadMinimal({"network.learner_uplink=bandwidth: \"2Gbps\" delay: \"3ms\""});
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE(s->resolved.network.learner_uplink.has_value());
    EXPECT_EQ(s->resolved.network.learner_uplink->rate.GetBitRate(), 2000000000u);
    Scenario sc;
    const std::string e = ErrorOf(&sc, "network.learner_uplink=bandwith: \"2Gbps\"");
    EXPECT_NE(e.find("fields: bandwidth, delay"), std::string::npos) << e;
}

TEST(ScenarioOverride, CanonicalPathResolvesNames)
{
    Scenario sc;
    sc.add_arms()->set_name("full");
    sc.add_arms()->set_name("hilo");
    auto p = ApplyOverride(&sc, "arms[hilo].budget=1%");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(*p, "arms[1].budget");
}

TEST(ScenarioOverride, MisspelledPathListsValidNames)
{
    Scenario sc;
    std::string e = ErrorOf(&sc, "workload.stepz=3");
    EXPECT_NE(e.find("workload.stepz"), std::string::npos) << e;
    EXPECT_NE(e.find("no field \"stepz\" at workload (hilosim.Workload)"), std::string::npos) << e;
    EXPECT_NE(e.find("valid fields: kind, steps, model, lora"), std::string::npos) << e;

    e = ErrorOf(&sc, "netwrk.tcp=bbr");
    EXPECT_NE(e.find("no field \"netwrk\" at the top level"), std::string::npos) << e;
    EXPECT_NE(e.find("valid fields: name, description, seed, workload"), std::string::npos) << e;

    e = ErrorOf(&sc, "arms[0].budgett=5%");
    EXPECT_NE(e.find("valid fields: name, strategy, compressor, options, budget"),
              std::string::npos)
        << e;
}

TEST(ScenarioOverride, BadSelectors)
{
    Scenario sc;
    sc.add_arms()->set_name("full");
    std::string e = ErrorOf(&sc, "arms.budget=5%");
    EXPECT_NE(e.find("arms is repeated (1 elements): select one as arms[INDEX] or arms[NAME]"),
              std::string::npos)
        << e;
    e = ErrorOf(&sc, "arms[5].budget=5%");
    EXPECT_NE(e.find("index 5 is out of range: arms has 1 elements"), std::string::npos) << e;
    e = ErrorOf(&sc, "arms[spar].budget=5%");
    EXPECT_NE(e.find("no element of arms is named \"spar\"; names: full"), std::string::npos) << e;
    e = ErrorOf(&sc, "workload[0].steps=1");
    EXPECT_NE(e.find("workload is not repeated"), std::string::npos) << e;
    e = ErrorOf(&sc, "workload.steps.x=1");
    EXPECT_NE(e.find("workload.steps is a int32, not a message"), std::string::npos) << e;
    e = ErrorOf(&sc, "arms[0].options=x");
    EXPECT_NE(e.find("is a map: name one key"), std::string::npos) << e;
    e = ErrorOf(&sc, "arms[0.budget=1%");
    EXPECT_NE(e.find("unclosed '['"), std::string::npos) << e;
    e = ErrorOf(&sc, "workload.steps");
    EXPECT_NE(e.find("expected path.to.field=value"), std::string::npos) << e;
}

TEST(ScenarioOverride, SelectorErrorsGiveTheValidIndexRange)
{
    Scenario sc;
    for (const char* name : {"full", "hilo", "delta"})
        sc.add_arms()->set_name(name);
    sc.add_workers()->set_count(1);
    // Three arms: indices 0 to 2 select one, 3 appends one.
    std::string e = ErrorOf(&sc, "arms[spar].budget=5%");
    EXPECT_NE(e.find("names: full, hilo, delta (or use an index from 0 to 2, or 3 to append one)"),
              std::string::npos)
        << e;
    // WorkerGroup has no name: only an index selects one.
    e = ErrorOf(&sc, "workers[gpu].count=2");
    EXPECT_NE(e.find("selector [gpu] must be an index from 0 to 0, or 1 to append one"),
              std::string::npos)
        << e;
    Scenario empty;
    e = ErrorOf(&empty, "arms[spar].budget=5%");
    EXPECT_NE(e.find("names: (none) (or use index 0 to append one)"), std::string::npos) << e;
}

TEST(ScenarioOverride, BadValuesNameThePathAndTheType)
{
    Scenario sc;
    std::string e = ErrorOf(&sc, "workload.steps=ten");
    EXPECT_NE(e.find("bad value \"ten\" for workload.steps: expected an int32"), std::string::npos)
        << e;
    e = ErrorOf(&sc, "workload.steps=99999999999");
    EXPECT_NE(e.find("expected an int32"), std::string::npos) << e;
    e = ErrorOf(&sc, "seed=-1");
    EXPECT_NE(e.find("expected a uint64"), std::string::npos) << e;
    e = ErrorOf(&sc, "workload.temperature=warm");
    EXPECT_NE(e.find("expected a number"), std::string::npos) << e;
    e = ErrorOf(&sc, "arms[0].error_feedback.enabled=yes");
    EXPECT_NE(e.find("expected a bool (true, false, 1, 0)"), std::string::npos) << e;
}

TEST(ScenarioOverride, EnumsByNameOrNumber)
{
    // The scenario schema uses strings for choices; enums are still supported for any message.
    google::protobuf::FieldDescriptorProto field;
    ASSERT_TRUE(ApplyOverride(&field, "type=TYPE_INT32").ok());
    EXPECT_EQ(field.type(), google::protobuf::FieldDescriptorProto::TYPE_INT32);
    ASSERT_TRUE(ApplyOverride(&field, "label=3").ok());
    EXPECT_EQ(field.label(), google::protobuf::FieldDescriptorProto::LABEL_REPEATED);
    const std::string e = ErrorOf(&field, "type=TYPE_INT128");
    EXPECT_NE(e.find("expected one of TYPE_DOUBLE, TYPE_FLOAT"), std::string::npos) << e;
}

TEST(ScenarioOverride, OverrideErrorsComeBackFromTheLoader)
{
    std::vector<Diagnostic> diagnostics;
    auto s =
        LoadScenarioFile(test::DataPath("ok-minimal.textproto"),
                         {"workload.stepz=3", "arms[1].budget=5%"}, CurrentCatalog(), &diagnostics);
    ASSERT_FALSE(s.ok());
    ASSERT_EQ(diagnostics.size(), 1u);
    EXPECT_EQ(diagnostics[0].origin, "--set workload.stepz=3");
    EXPECT_NE(s.status().message().find("ok-minimal.textproto: --set workload.stepz=3: "),
              std::string::npos)
        << s.status().message();
}

} // namespace
} // namespace hilosim
