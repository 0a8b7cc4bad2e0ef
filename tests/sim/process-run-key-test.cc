// hilo-emu's run key: its folder is private and removed at the end, and a new run sweeps the
// folders that killed runs left behind while leaving live runs' folders alone.
#include "sim/drivers/process/run-key.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace hilosim
{
namespace
{

namespace fs = std::filesystem;

class RunKeyTest : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        std::string pattern = (fs::temp_directory_path() / "run-key-test-XXXXXX").string();
        ASSERT_NE(mkdtemp(&pattern[0]), nullptr);
        m_base = pattern;
    }
    void TearDown() override
    {
        std::error_code ec;
        fs::remove_all(m_base, ec);
    }
    // A folder as a killed run leaves it: key and lock file, nobody holding the lock.
    fs::path LeftBehind(const std::string& name, bool with_lock)
    {
        const fs::path dir = fs::path(m_base) / name;
        fs::create_directory(dir);
        std::ofstream(dir / "run.key") << "key";
        if (with_lock)
            std::ofstream(dir / "run.lock");
        return dir;
    }
    std::string m_base;
};

TEST_F(RunKeyTest, ItsFolderIsPrivateAndGoesWithTheRun)
{
    std::string dir;
    {
        RunKey key(m_base);
        ASSERT_TRUE(key.Create().ok());
        dir = key.folder();
        EXPECT_TRUE(fs::exists(key.path()));
        struct stat st;
        ASSERT_EQ(stat(dir.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0700u);
    }
    EXPECT_FALSE(fs::exists(dir));
}

TEST_F(RunKeyTest, ANewRunSweepsTheFoldersOfKilledRunsAndKeepsLiveOnes)
{
    RunKey live(m_base);
    ASSERT_TRUE(live.Create().ok());
    const fs::path killed = LeftBehind("hilo-emu-key-dead01", /*with_lock=*/true);
    const fs::path old_unlocked = LeftBehind("hilo-emu-key-old001", /*with_lock=*/false);
    fs::last_write_time(old_unlocked, fs::file_time_type::clock::now() - std::chrono::minutes(5));
    const fs::path new_unlocked = LeftBehind("hilo-emu-key-new001", /*with_lock=*/false);
    const fs::path other = LeftBehind("someone-else-key", /*with_lock=*/true);

    RunKey next(m_base);
    ASSERT_TRUE(next.Create().ok());
    EXPECT_FALSE(fs::exists(killed));
    EXPECT_FALSE(fs::exists(old_unlocked));
    EXPECT_TRUE(fs::exists(new_unlocked)) << "a run between mkdtemp and its lock";
    EXPECT_TRUE(fs::exists(other)) << "not the project's folder";
    EXPECT_TRUE(fs::exists(live.path())) << "a live run's key was swept";
    EXPECT_EQ(next.swept().size(), 2u);
}

TEST_F(RunKeyTest, AnUnwritableBaseIsAClearError)
{
    RunKey key(m_base + "/no-such-folder");
    const hilo::Status s = key.Create();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("no-such-folder"), std::string::npos) << s.message();
}

} // namespace
} // namespace hilosim
