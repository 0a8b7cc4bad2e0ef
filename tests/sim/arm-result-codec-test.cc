// EncodeArmResult / DecodeArmResult: every field survives the round trip bit for bit (the run's
// output files written from the decoded result are byte-identical), and damaged bytes are a
// Corruption naming the field, never a crash.
#include "sim/run/arm-result-codec.h"
#include "sim/run/output-writer.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace hilosim
{
namespace
{

// Every field set, none to its default; doubles that print alike at "%.9g" but differ in bits.
ArmResult
FullResult()
{
    ArmResult a;
    a.name = "hilo, \"quoted\"";
    a.strategy = "hilo";
    a.compressor = "spar";
    a.compressor_params = "dtype=bf16";
    a.budget = "1.6%";
    a.budget_fraction = 0.016000000000000001;
    a.training_rank = 16;
    a.quality_metric = "kl";
    a.higher_is_better = true;
    a.real_numel = -3; // signed fields keep their sign
    a.real_adapter_bytes = 123456789012345;
    a.adapter_bytes = std::numeric_limits<int64_t>::max();
    a.adapter_scale = 1.0 / 3.0;
    a.worker_gpu = {"A10G", "8 x A10G (tp)"};
    a.worker_region = {"eu", ""};
    PublishEvent p;
    p.version = 1;
    p.grad_ready_s = 0.1;
    p.published_s = std::nextafter(0.2, 1.0);
    p.train_s = 3e-300;
    p.encode_s = -0.0;
    p.loss = std::numeric_limits<double>::infinity();
    p.grad_norm = 7.5;
    p.payload_bytes = 100;
    p.frame_bytes = 140;
    p.wire_bytes = 1ull << 40;
    p.copies = 2;
    p.state_hash = 0xfeedfacecafebeefull;
    p.drift_rel_l2 = 1e-7;
    p.drift_max_abs = 2e-7;
    p.kept_per_matrix = {4, -1, 0};
    p.train_overrun_s = 0.5;
    p.encode_overrun_s = 0.25;
    p.cpu_gradient_s = 1.5;
    p.cpu_encode_s = 2.5;
    p.cpu_apply_s = 3.5;
    a.publishes = {p, p};
    a.publishes[1].version = 2;
    a.evals = {EvalEvent{0, 0.0, 1.25, 0.5}, EvalEvent{2, 9.0, 0.75, 0.25}};
    a.applies = {ApplyEvent{1, 1, 0.3, 0.4, true, false, 0.01, 0.02},
                 ApplyEvent{0, 2, 0.5, 0.6, false, true, 0.03, 0.04}};
    a.rollouts = {RolloutEvent{1, 1, 0, 0.1, 0.2, 300, 4000, 0.05, 0.06}};
    a.catch_ups = {CatchUpEvent{0, 0, 1, 2, 0.7, false}};
    FaultRecord f;
    f.kind = "worker_crash";
    f.target = "worker 1";
    f.start_s = 0.5;
    f.end_s = -1;
    f.workers = {1, 4000000000u};
    f.injected = true;
    a.faults = {f};
    a.worker_end = {WorkerEnd{true, 2, 99}, WorkerEnd{false, 1, 98}};
    a.hash_mismatches = 1;
    a.resyncs = 2;
    a.segments_corrupted = 3;
    a.connections_closed = 4;
    a.sim_time_s = 12.5;
    a.workers_at_final_hash = 1;
    a.links = {LinkUsage{"worker 0", "down", 1000000000, 5000, 7, 0.25, 0.5, 0.1}};
    TcpTraceRow t{"arm", 0.01, "learner", "worker-1", {}};
    t.sample.peer = 1;
    t.sample.cwnd_bytes = 14480;
    t.sample.srtt_s = 0.041;
    t.sample.in_slow_start = false; // present and false; ssthresh_bytes absent
    t.sample.hystart_delay_exits = 1;
    a.tcp_trace = {t};
    a.real_time = true;
    a.worker_pid = {4242, -1};
    EmulationHealth e;
    e.lag_mean_s = 0.001;
    e.lag_p99_s = 0.002;
    e.lag_max_s = 0.003;
    e.lag_samples = 10;
    e.peak_link_traffic_bps = 2e9;
    e.carried_peak_bps = 1e9;
    e.warnings = {"lagged", ""};
    a.emulation = e;
    a.node_peak_rss = {{"learner", 123456}, {"worker-1", 7}, {"learner", 99}};
    a.network_model = "flow";
    a.connections = 2;
    a.window_limited_connections = 1;
    a.window_limited_example = "worker 0: 64 KiB window";
    a.wall_s = 1.75;
    a.cpu_s = 2.25;
    a.failure = hilo::Status::HashMismatch("worker 1 diverged");
    return a;
}

// The run's output files written from `arms`, concatenated with their names.
std::string
Outputs(const std::vector<ArmResult>& arms, const std::string& tag)
{
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("hilo-arm-codec-" + tag);
    std::filesystem::remove_all(dir);
    RunRecord run;
    run.scenario_name = "codec";
    EXPECT_TRUE(WriteRunOutputs(dir.string(), run, arms).ok());
    std::string all;
    for (const char* file : {"summary.json", "steps.csv", "workers.csv", "rollouts.csv",
                             "allocation.csv", "links.csv", "timing.json"})
        all += std::string(file) + ":\n" + test::ReadFile((dir / file).string());
    std::filesystem::remove_all(dir);
    return all;
}

TEST(ArmResultCodec, EveryFieldSurvivesBitForBit)
{
    const ArmResult a = FullResult();
    const std::string bytes = EncodeArmResult(a);
    auto b = DecodeArmResult(bytes);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(EncodeArmResult(*b), bytes);
    EXPECT_EQ(Outputs({*b}, "decoded"), Outputs({a}, "original"));
    // Fields the output files do not show, one by one.
    EXPECT_EQ(b->name, a.name);
    EXPECT_EQ(std::signbit(b->publishes[0].encode_s), true);
    EXPECT_EQ(b->publishes[0].published_s, a.publishes[0].published_s);
    EXPECT_EQ(b->publishes[1].kept_per_matrix, a.publishes[0].kept_per_matrix);
    EXPECT_EQ(b->publishes[0].copies, 2u);
    EXPECT_EQ(b->publishes[0].state_hash, a.publishes[0].state_hash);
    EXPECT_EQ(b->real_numel, -3);
    EXPECT_EQ(b->adapter_bytes, a.adapter_bytes);
    EXPECT_EQ(b->adapter_scale, a.adapter_scale);
    EXPECT_EQ(b->catch_ups.at(0).snapshot_version, 1);
    EXPECT_FALSE(b->catch_ups.at(0).ok);
    EXPECT_EQ(b->faults.at(0).workers, a.faults[0].workers);
    EXPECT_TRUE(b->faults.at(0).injected);
    EXPECT_EQ(b->worker_end.at(1).state_hash, 98u);
    EXPECT_EQ(b->segments_corrupted, 3u);
    EXPECT_EQ(b->connections_closed, 4u);
    EXPECT_EQ(b->worker_pid, a.worker_pid);
    ASSERT_TRUE(b->emulation.has_value());
    EXPECT_EQ(b->emulation->warnings, a.emulation->warnings);
    ASSERT_EQ(b->node_peak_rss.size(), 3u);
    EXPECT_EQ(b->node_peak_rss[1].node, "worker-1");
    EXPECT_EQ(b->node_peak_rss[2].kib, 99u);
    EXPECT_EQ(b->connections, 2u);
    EXPECT_EQ(b->window_limited_example, a.window_limited_example);
    EXPECT_EQ(b->cpu_s, 2.25);
    EXPECT_EQ(b->failure.code(), hilo::StatusCode::kHashMismatch);
    EXPECT_EQ(b->failure.message(), "worker 1 diverged");
    ASSERT_EQ(b->tcp_trace.size(), 1u);
    EXPECT_EQ(FormatTcpTraceRow(b->tcp_trace[0]), FormatTcpTraceRow(a.tcp_trace[0]));
    EXPECT_TRUE(b->tcp_trace[0].sample == a.tcp_trace[0].sample);
}

TEST(ArmResultCodec, DefaultResultRoundTrips)
{
    const ArmResult a;
    auto b = DecodeArmResult(EncodeArmResult(a));
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_FALSE(b->emulation.has_value());
    EXPECT_TRUE(b->failure.ok());
    EXPECT_EQ(EncodeArmResult(*b), EncodeArmResult(a));
}

TEST(ArmResultCodec, EveryTruncationIsCorruption)
{
    const std::string bytes = EncodeArmResult(FullResult());
    for (size_t n = 0; n < bytes.size(); ++n)
    {
        auto r = DecodeArmResult(std::string_view(bytes).substr(0, n));
        ASSERT_FALSE(r.ok()) << n;
        EXPECT_EQ(r.status().code(), hilo::StatusCode::kCorruption) << n;
    }
}

TEST(ArmResultCodec, DamagedBytesNameTheField)
{
    const std::string bytes = EncodeArmResult(FullResult());
    auto trailing = DecodeArmResult(bytes + "x");
    ASSERT_FALSE(trailing.ok());
    EXPECT_NE(trailing.status().message().find("1 bytes after the last field"), std::string::npos)
        << trailing.status().message();

    auto magic = DecodeArmResult("HILOARM2" + bytes.substr(8));
    ASSERT_FALSE(magic.ok());
    EXPECT_NE(magic.status().message().find("HILOARM1"), std::string::npos);

    // The first field is the name: a count far above the bytes left is refused before any
    // allocation.
    std::string huge = bytes.substr(0, 8) + std::string("\xff\xff\xff\xff\x0f", 5);
    auto count = DecodeArmResult(huge);
    ASSERT_FALSE(count.ok());
    EXPECT_NE(count.status().message().find("name: truncated"), std::string::npos)
        << count.status().message();

    // higher_is_better is a bool: 2 is not one. It follows name, strategy, compressor,
    // compressor_params, budget (strings), budget_fraction (8), budget_transfer (string),
    // purchase (unit, modelled, learner: 8 each), training_rank (8) and quality_metric (string).
    const ArmResult a = FullResult();
    size_t at = 8;
    for (const std::string* s :
         {&a.name, &a.strategy, &a.compressor, &a.compressor_params, &a.budget})
        at += 1 + s->size();
    at += 8 + 1 + a.budget_transfer.size() + 24 + 8 + 1 + a.quality_metric.size();
    std::string bad_bool = bytes;
    ASSERT_EQ(bad_bool[at], '\x01');
    bad_bool[at] = '\x02';
    auto flag = DecodeArmResult(bad_bool);
    ASSERT_FALSE(flag.ok());
    EXPECT_NE(flag.status().message().find("higher_is_better: not a bool"), std::string::npos)
        << flag.status().message();
}

} // namespace
} // namespace hilosim
