// PeerAuth's key files (sim/drivers/process/peer-auth.h): a key is bytes, written as hex digits
// (decoded) or raw; either way at least 32 bytes, and a shorter one is an error naming the file.
#include "sim/drivers/process/peer-auth.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hilosim
{
namespace
{

namespace fs = std::filesystem;

const std::string kHex64 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

std::string
Counting(int n)
{
    std::string s;
    for (int i = 0; i < n; ++i)
        s += static_cast<char>(i);
    return s;
}

TEST(ProcessPeerAuth, AHexKeyIsDecodedToItsBytes)
{
    auto key = PeerAuth::ParseKey(kHex64 + "\n", "run.key");
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(*key, Counting(32));
    // Upper case, and wrapped as `xxd -p` writes it (60 digits a line).
    std::string wrapped = kHex64.substr(0, 60) + "\n" + kHex64.substr(60) + "\n";
    for (char& c : wrapped)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    key = PeerAuth::ParseKey(wrapped, "run.key");
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(*key, Counting(32));
    // More than 64 digits is a longer key.
    key = PeerAuth::ParseKey(kHex64 + "ff", "run.key");
    ASSERT_TRUE(key.ok());
    EXPECT_EQ(key->size(), 33u);
}

TEST(ProcessPeerAuth, ARawKeyIsEveryByteAsItIs)
{
    std::string raw = Counting(31) + "\n"; // 32 bytes, the last a newline: kept
    auto key = PeerAuth::ParseKey(raw, "raw.key");
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(*key, raw);
    const std::string phrase = "a passphrase of thirty-two bytes";
    ASSERT_EQ(phrase.size(), 32u);
    key = PeerAuth::ParseKey(phrase, "raw.key");
    ASSERT_TRUE(key.ok());
    EXPECT_EQ(*key, phrase);
}

TEST(ProcessPeerAuth, AShortKeyIsAnErrorNamingTheFile)
{
    struct Case
    {
        const char* what;
        std::string text;
        const char* says;
    };
    const Case cases[] = {
        {"62 hex digits", kHex64.substr(0, 62) + "\n", "62 hex digits"},
        {"an odd number of hex digits", kHex64 + "f", "65 hex digits"},
        {"31 raw bytes", Counting(31), "31 bytes"},
        {"a short passphrase", "the-run-key-0123456789abcdef\n", "29 bytes"},
        {"empty", "", "0 bytes"},
        {"whitespace", " \n", "2 bytes"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.what);
        auto key = PeerAuth::ParseKey(c.text, "/some/where/run.key");
        ASSERT_FALSE(key.ok());
        EXPECT_EQ(key.status().code(), hilo::StatusCode::kInvalidArgument);
        EXPECT_NE(key.status().message().find("/some/where/run.key"), std::string::npos)
            << key.status().message();
        EXPECT_NE(key.status().message().find(c.says), std::string::npos) << key.status().message();
    }
}

// What hilo-emu writes is what hilo-node reads: 32 random bytes.
TEST(ProcessPeerAuth, AWrittenKeyFileReadsBackAs32Bytes)
{
    std::string dir = (fs::temp_directory_path() / "peer-auth-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(&dir[0]), nullptr);
    const std::string path = dir + "/run.key";
    ASSERT_TRUE(PeerAuth::WriteNewKeyFile(path).ok());
    auto key = PeerAuth::ReadKeyFile(path);
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(key->size(), 32u);
    EXPECT_FALSE(PeerAuth::WriteNewKeyFile(path).ok()) << "an existing file is overwritten";
    const std::string raw = dir + "/raw.key";
    {
        std::ofstream f(raw, std::ios::binary);
        f << Counting(40);
    }
    fs::permissions(raw, fs::perms::owner_read | fs::perms::owner_write);
    key = PeerAuth::ReadKeyFile(raw);
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(*key, Counting(40));
    fs::remove_all(dir);
}

} // namespace
} // namespace hilosim
