// The chaos faults hilo-emu adds to a scenario's own: a slowed node (--slow: stopped nine tenths
// of the time, a slow reader) and a full disk under the learner's checkpoints (--full-disk, on a
// small tmpfs only). The schedule and the filling alone, then a run through both that loses
// nothing.
#include "sim/drivers/process/child-process.h"
#include "sim/drivers/process/disk-fill.h"
#include "sim/drivers/process/node-pause.h"

#include "tests/sim/process-test-util.h"
#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace hilosim
{
namespace
{

namespace fs = std::filesystem;

const std::string kBin = std::string(HILO_BINARY_DIR) + "/sim/";

// A tmpfs of `size` mounted on a fresh folder for one test; unmounted at the end. Needs root:
// ok() is false (and the test skips) where mount(2) is refused.
class Tmpfs
{
  public:
    Tmpfs(const std::string& name, const std::string& size)
      : m_dir(fs::temp_directory_path() / ("hilo-chaos-test-" + name))
    {
        ::umount2(m_dir.c_str(), MNT_DETACH);
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        m_ok = ::mount("hilo-test", m_dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                       ("size=" + size).c_str()) == 0;
    }
    ~Tmpfs()
    {
        if (m_ok)
            ::umount2(m_dir.c_str(), MNT_DETACH);
        fs::remove_all(m_dir);
    }
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;
    bool ok() const { return m_ok; }
    std::string dir() const { return m_dir.string(); }

  private:
    fs::path m_dir;
    bool m_ok{false};
};

TEST(NodePauseSchedule, ASlowWindowRunsTheNodeOneTenthOfTheTimeAndLogsItsEnds)
{
    NodePause slow;
    slow.role = NodePause::kWorker;
    slow.index = 2;
    slow.at_s = 2.0;
    slow.for_s = 1.0;
    slow.slow = true;
    NodePause pause;
    pause.role = NodePause::kLearner;
    pause.at_s = 2.5;
    pause.for_s = 0.3;
    const std::vector<PauseAction> actions = PauseSchedule({slow, pause});
    double running = 0, stopped_at = -1, last_at = -1;
    int logged = 0, stops = 0, pause_actions = 0;
    bool stopped = false;
    for (const PauseAction& a : actions)
    {
        EXPECT_GE(a.at_s, last_at) << "in time order";
        last_at = a.at_s;
        if (!a.pause.slow)
        {
            ++pause_actions;
            EXPECT_FALSE(a.quiet) << "a pause is logged";
            continue;
        }
        logged += a.quiet ? 0 : 1;
        if (a.stop)
        {
            EXPECT_FALSE(stopped) << "stops and continues alternate, at " << a.at_s;
            running += a.at_s - (stopped_at < 0 ? slow.at_s : stopped_at);
            stopped = true;
            ++stops;
        }
        else
        {
            EXPECT_TRUE(stopped) << "at " << a.at_s;
            stopped = false;
            stopped_at = a.at_s; // running again from here
        }
    }
    EXPECT_EQ(pause_actions, 2);
    EXPECT_FALSE(stopped) << "the window ends running";
    EXPECT_DOUBLE_EQ(last_at, 3.0) << "its last continue at AT + FOR";
    EXPECT_EQ(stops, 5) << "one per 0.2 s";
    EXPECT_NEAR(running, 0.1 * slow.for_s, 1e-9) << "a tenth of the window";
    EXPECT_EQ(logged, 2) << "the first stop and the last continue";
}

TEST(DiskFill, OnlyASmallTmpfsIsFilledAndFreedAgain)
{
    // A real disk and a large tmpfs are refused, naming the folder.
    const hilo::Status disk = DiskFill::Check(HILO_BINARY_DIR);
    EXPECT_FALSE(disk.ok());
    EXPECT_NE(disk.message().find(std::string(HILO_BINARY_DIR) + " must be on a tmpfs"),
              std::string::npos)
        << disk.message();
    EXPECT_FALSE(DiskFill::Check("/nonexistent/hilo").ok());

    Tmpfs small("fill", "2m");
    if (!small.ok())
        GTEST_SKIP() << "mounting a tmpfs needs root";
    Tmpfs large("large", "300m");
    ASSERT_TRUE(large.ok());
    const hilo::Status big = DiskFill::Check(large.dir());
    EXPECT_FALSE(big.ok());
    EXPECT_NE(big.message().find("a tmpfs of 300 MiB"), std::string::npos) << big.message();

    ASSERT_TRUE(DiskFill::Check(small.dir()).ok());
    const std::string probe = small.dir() + "/probe";
    auto write = [&](size_t bytes)
    {
        std::ofstream f(probe, std::ios::binary | std::ios::trunc);
        f << std::string(bytes, 'x');
        f.flush();
        return f.good();
    };
    {
        DiskFill fill(small.dir());
        auto taken = fill.Fill();
        ASSERT_TRUE(taken.ok()) << taken.status().message();
        EXPECT_GT(*taken, 1u << 20) << "most of the 2 MiB";
        EXPECT_LE(*taken, 2u << 20);
        EXPECT_TRUE(fill.full());
        EXPECT_FALSE(write(64 << 10)) << "the disk is full";
        fill.Free();
        EXPECT_TRUE(write(64 << 10)) << "and has room again";
        fs::remove(probe);
        ASSERT_TRUE(fill.Fill().ok());
    } // freed when it goes
    EXPECT_FALSE(fs::exists(small.dir() + "/.hilo-disk-fill"));
    EXPECT_TRUE(write(64 << 10));
}

// 4 workers behind 2 relays on loopback: worker 2 slowed for 3 s, the checkpoint disk full from 1 s
// to 4 s, the learner killed at 5 s and restored 1 s later. The checkpoints the full disk refused
// are reported and training goes on; later ones are written again (two generations); after the
// restart nothing is lost and every worker ends at the learner's hash.
TEST(HiloEmu, ASlowWorkerAndAFullCheckpointDiskLoseNothing)
{
    test::ProcessSandbox box("hilo-proc-test-slow-disk",
                             std::string(HILO_SOURCE_DIR) + "/scripts/chaos-relay.textproto");
    Tmpfs ckpt("ckpt", "16m");
    if (!ckpt.ok())
        GTEST_SKIP() << "mounting a tmpfs needs root";
    const std::string emu = (box.dir / "emu").string();
    auto e = test::RunCommand(
        kBin + "hilo-emu run " + box.scenario +
        " --network direct --stall-timeout 60 --set mode.round_timeout=2s"
        " --set 'faults[0]=kind: \"learner_restart\" at: \"5s\" target: \"learner\" "
        "restart_after: \"1s\"'"
        " --slow worker:2:1:3 --checkpoint-dir " +
        ckpt.dir() + " --full-disk 1:3 --out " + emu);
    ASSERT_EQ(e.exit_code, 0) << e.output;
    for (const char* says : {"chaos: slowed worker 2", "chaos: full speed again: worker 2",
                             "chaos: disk full at", "chaos: disk has room again"})
        EXPECT_NE(e.output.find(says), std::string::npos) << says << "\n" << e.output;
    std::string learner_log;
    for (const auto& f : fs::recursive_directory_iterator(emu))
    {
        if (f.path().filename().string().rfind("learner", 0) == 0 &&
            f.path().extension() == ".stderr")
            learner_log += test::ReadFile(f.path().string());
    }
    EXPECT_NE(learner_log.find("not written ("), std::string::npos) << learner_log;
    EXPECT_NE(learner_log.find("No space left on device"), std::string::npos) << learner_log;
    EXPECT_NE(learner_log.find("training goes on"), std::string::npos) << learner_log;
    EXPECT_NE(e.output.find("learner_restart: started the learner again"), std::string::npos)
        << e.output;
    EXPECT_TRUE(fs::exists(ckpt.dir() + "/hilo-spar-learner.ckpt"))
        << "written once there was room";
    EXPECT_TRUE(fs::exists(ckpt.dir() + "/hilo-spar-learner.ckpt.prev")) << "two generations";
    EXPECT_FALSE(fs::exists(ckpt.dir() + "/.hilo-disk-fill")) << "the space was freed";
    const std::string es = test::ReadFile(emu + "/summary.json");
    EXPECT_EQ(test::JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(test::JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"4"}) << es;
    EXPECT_EQ(box.LiveProcesses(), 0);

    for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
             {"--full-disk 1:1", "needs --checkpoint-dir"},
             {"--checkpoint-dir " + box.dir.string() + " --full-disk 1:1", "must be on a tmpfs"},
             {"--checkpoint-dir " + ckpt.dir() + " --full-disk 1", "expected AT:FOR"},
             {"--checkpoint-dir " + ckpt.dir() + " --full-disk 1:0", "expected AT:FOR"},
             {"--checkpoint-dir /nonexistent/hilo", "not a folder"},
             {"--slow worker:1:1", "expected NODE:AT:FOR"}})
    {
        auto bad = test::RunCommand(kBin + "hilo-emu run " + box.scenario +
                                    " --network direct --quiet " + args);
        EXPECT_EQ(bad.exit_code, 2) << args << "\n" << bad.output;
        EXPECT_NE(bad.output.find(says), std::string::npos) << args << "\n" << bad.output;
    }
}

// The learner killed at 4 s; while it is down its latest checkpoint is torn (cut to half its
// bytes, as a crash in the middle of a write without the temp file would leave it). The new learner
// restores from the previous generation, says so, and the run completes with nothing lost.
TEST(HiloEmu, ATornLatestCheckpointRestoresFromThePreviousOneAndNothingIsLost)
{
    test::ProcessSandbox box("hilo-proc-test-torn",
                             std::string(HILO_SOURCE_DIR) + "/scripts/chaos-relay.textproto");
    const std::string ckpt = (box.dir / "ckpt").string(), emu = (box.dir / "emu").string();
    fs::create_directories(ckpt);
    const std::string err = (box.dir / "emu.stderr").string();
    auto started = ChildProcess::Start(
        {kBin + "hilo-emu", "run", box.scenario, "--network", "direct", "--stall-timeout", "60",
         "--set",
         "faults[0]=kind: \"learner_restart\" at: \"4s\" target: \"learner\" restart_after: "
         "\"3s\"",
         "--checkpoint-dir", ckpt, "--out", emu},
        err, "hilo-emu");
    ASSERT_TRUE(started.ok()) << started.status().message();
    std::unique_ptr<ChildProcess> run = std::move(*started);
    const std::string latest = ckpt + "/hilo-spar-learner.ckpt";
    bool torn = false;
    while (!run->Poll())
    {
        if (!torn &&
            test::ReadFile(err).find("learner_restart: killed the learner") != std::string::npos)
        {
            ASSERT_TRUE(fs::exists(latest)) << test::ReadFile(err);
            ASSERT_TRUE(fs::exists(latest + ".prev")) << "two generations";
            fs::resize_file(latest, fs::file_size(latest) / 2);
            torn = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(run->exit_code(), 0) << test::ReadFile(err);
    ASSERT_TRUE(torn) << "the learner was never killed\n" << test::ReadFile(err);
    const std::string log = test::ReadFile(emu + "/nodes/hilo-spar/learner.stderr");
    EXPECT_NE(log.find("restored " + latest + ".prev at version"), std::string::npos) << log;
    const std::string es = test::ReadFile(emu + "/summary.json");
    EXPECT_EQ(test::JsonValues(es, "versions_lost"), std::vector<std::string>{"0"}) << es;
    EXPECT_EQ(test::JsonValues(es, "workers_at_final_hash"), std::vector<std::string>{"4"}) << es;
    EXPECT_EQ(box.LiveProcesses(), 0);
}

} // namespace
} // namespace hilosim
