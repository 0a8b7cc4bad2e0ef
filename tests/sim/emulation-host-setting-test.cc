// HostSettingGuard (sim/drivers/emulation/host-setting-guard.h) on a stand-in setting file and
// lock folder: what hilo-emu changes host-wide goes back to its value when the last run ends, also
// after a run that was killed outright, and never while another run is alive.
#include "sim/drivers/emulation/host-setting-guard.h"

#include "tests/sim/scenario-test-util.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace hilosim
{
namespace
{

namespace fs = std::filesystem;

struct Folder
{
    fs::path dir;
    std::string setting;
    std::string locks;

    Folder()
    {
        dir = fs::temp_directory_path() / ("hilo-host-setting-test-" + std::to_string(getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir / "locks");
        setting = (dir / "allowed").string();
        locks = (dir / "locks").string();
        std::ofstream(setting) << "reno cubic\n";
    }
    ~Folder() { fs::remove_all(dir); }

    std::string Value() const
    {
        std::string v = test::ReadFile(setting);
        return v.substr(0, v.find('\n'));
    }
    HostSettingGuard Guard(const std::string& tag) const
    {
        return HostSettingGuard("allowed", setting, locks, tag);
    }
    /// A run's lock file, held (the run is alive) until the returned descriptor is closed.
    int HoldRunLock(const std::string& tag) const
    {
        const std::string path = locks + "/hilo-" + tag + ".lock";
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
        return fd;
    }
};

TEST(HostSettingGuard, ARunPutsBackWhatItAddedWhenItEnds)
{
    Folder f;
    const int own = f.HoldRunLock("a1"); // this run's own lock does not count as another run
    HostSettingGuard guard = f.Guard("a1");
    auto was = guard.AddWord("bbr");
    ASSERT_TRUE(was.ok()) << was.status().ToString();
    EXPECT_EQ(*was, "reno cubic");
    EXPECT_EQ(f.Value(), "reno cubic bbr");
    auto again = guard.AddWord("bbr"); // the next arm: already listed
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, "");
    auto listed = guard.AddWord("cubic");
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(*listed, "");
    EXPECT_EQ(f.Value(), "reno cubic bbr");

    auto restored = guard.RestoreIfNoRunAlive();
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ(*restored, "reno cubic");
    EXPECT_EQ(f.Value(), "reno cubic");
    auto twice = guard.RestoreIfNoRunAlive(); // nothing kept any more
    ASSERT_TRUE(twice.ok());
    EXPECT_EQ(*twice, "");
    EXPECT_EQ(f.Value(), "reno cubic");
    close(own);
}

TEST(HostSettingGuard, NothingIsRestoredWhileAnotherRunIsAliveAndTheLastOneOutRestores)
{
    Folder f;
    HostSettingGuard first = f.Guard("a1");
    HostSettingGuard second = f.Guard("b2");
    ASSERT_TRUE(first.AddWord("bbr").ok());
    const int other = f.HoldRunLock("b2");
    auto second_adds = second.AddWord("vegas"); // the original value is kept, not this one
    ASSERT_TRUE(second_adds.ok());
    EXPECT_EQ(*second_adds, "reno cubic bbr");
    EXPECT_EQ(f.Value(), "reno cubic bbr vegas");

    auto early = first.RestoreIfNoRunAlive(); // b2 still runs and relies on the setting
    ASSERT_TRUE(early.ok());
    EXPECT_EQ(*early, "");
    EXPECT_EQ(f.Value(), "reno cubic bbr vegas");

    close(other); // b2 ends (its lock released): the last one out restores the first value
    auto last = second.RestoreIfNoRunAlive();
    ASSERT_TRUE(last.ok());
    EXPECT_EQ(*last, "reno cubic");
    EXPECT_EQ(f.Value(), "reno cubic");
}

TEST(HostSettingGuard, TheNextRunRestoresWhatAKilledRunLeft)
{
    Folder f;
    {
        const int killed = f.HoldRunLock("dead");
        ASSERT_TRUE(f.Guard("dead").AddWord("bbr").ok());
        close(killed); // SIGKILL: the kernel drops the lock, nothing was restored
    }
    EXPECT_EQ(f.Value(), "reno cubic bbr");
    auto restored = f.Guard("next").RestoreIfNoRunAlive();
    ASSERT_TRUE(restored.ok());
    EXPECT_EQ(*restored, "reno cubic");
    EXPECT_EQ(f.Value(), "reno cubic");
}

TEST(HostSettingGuard, AnUnreadableSettingIsAnError)
{
    Folder f;
    HostSettingGuard guard("missing", (f.dir / "no-such-setting").string(), f.locks, "a1");
    auto r = guard.AddWord("bbr");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("no-such-setting"), std::string::npos);
}

} // namespace
} // namespace hilosim
