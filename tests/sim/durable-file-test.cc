// The learner checkpoint's file writes (sim/roles/durable-file.h): two generations, a temporary
// name that is created afresh and never followed, and nothing left behind.
#include "sim/roles/durable-file.h"

#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hilosim
{
namespace
{

namespace fs = std::filesystem;

fs::path
FreshDir(const std::string& name)
{
    const fs::path dir =
        fs::temp_directory_path() / ("hilo-durable-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

TEST(DurableFile, KeepsTwoGenerationsAndNoTemporaryFile)
{
    const fs::path dir = FreshDir("generations");
    const std::string path = (dir / "learner.checkpoint").string();
    ASSERT_TRUE(WriteDurably(path, "first").ok());
    EXPECT_EQ(test::ReadFile(path), "first");
    EXPECT_FALSE(fs::exists(path + ".prev"));
    ASSERT_TRUE(WriteDurably(path, "second").ok());
    ASSERT_TRUE(WriteDurably(path, "third").ok());
    EXPECT_EQ(test::ReadFile(path), "third");
    EXPECT_EQ(test::ReadFile(path + ".prev"), "second");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2)
        << "a temporary file was left behind";
    EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(ReadGenerations(path), (std::vector<std::string>{path, path + ".prev"}));
    auto read = ReadWholeFile(path + ".prev");
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(*read, "second");
    EXPECT_EQ(ReadWholeFile((dir / "none").string()).status().code(), hilo::StatusCode::kNotFound);
    fs::remove_all(dir);
}

// A symlink planted at the temporary name (by anyone who can write the directory) is removed, not
// written through: the file it points to is untouched.
TEST(DurableFile, APlantedSymlinkAtTheTemporaryNameIsNotFollowed)
{
    const fs::path dir = FreshDir("symlink");
    const std::string path = (dir / "learner.checkpoint").string();
    const fs::path victim = dir / "victim";
    {
        std::ofstream f(victim);
        f << "precious";
    }
    fs::create_symlink(victim, path + ".tmp");
    ASSERT_TRUE(WriteDurably(path, "checkpoint").ok());
    EXPECT_EQ(test::ReadFile(victim.string()), "precious");
    EXPECT_EQ(test::ReadFile(path), "checkpoint");
    EXPECT_FALSE(fs::is_symlink(path));
    fs::remove_all(dir);
}

TEST(DurableFile, AFailedWriteSaysWhereAndLeavesTheGenerationsAlone)
{
    const fs::path dir = FreshDir("fails");
    const std::string path = (dir / "learner.checkpoint").string();
    ASSERT_TRUE(WriteDurably(path, "good").ok());
    // A directory where the temporary file must go: its creation fails, as a full disk's would.
    fs::create_directory(path + ".tmp");
    fs::create_directory(path + ".tmp/x"); // not empty: unlink and rmdir both refuse it
    hilo::Status s = WriteDurably(path, "lost");
    EXPECT_EQ(s.code(), hilo::StatusCode::kInternal);
    EXPECT_NE(s.message().find(path + ".tmp"), std::string::npos) << s.message();
    EXPECT_EQ(test::ReadFile(path), "good");
    EXPECT_FALSE(fs::exists(path + ".prev"));
    fs::remove_all(dir);
}

} // namespace
} // namespace hilosim
