#include "tests/fuzz/transport-input.h"

#include "tests/fuzz/fuzz-fixture.h"
#include "tests/sim/frame-bytes.h"

#include "sim/net/frame-header.h"

#include <fstream>
#include <vector>

namespace hilo::fuzz
{

namespace
{

namespace fs = std::filesystem;
using hilosim::test::Framed;
using hilosim::test::PeerIdBytes;

void
Put(const fs::path& dir, const std::string& name, uint8_t mode,
    const std::vector<std::string>& chunks)
{
    fs::create_directories(dir);
    std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
    f << static_cast<char>(mode) << JoinChunks(chunks);
}

std::vector<std::string>
Bytewise(const std::string& s)
{
    std::vector<std::string> out;
    for (char c : s)
        out.emplace_back(1, c);
    return out;
}

} // namespace

std::string
TransportRecordKey()
{
    return "fuzz-transport record key, 32 b.";
}

std::string
TransportRunKey()
{
    return "fuzz-transport run key of 32 by.";
}

void
WriteTransportSeeds(const fs::path& dir)
{
    const uint8_t frames = static_cast<uint8_t>(TransportMode::kFrames);
    const std::string stream = Framed(hilosim::FrameHeader::kHelloType, PeerIdBytes(7)) +
                               Framed(1, "abc") + Framed(2, "padded", 20) + Framed(3, "") +
                               Framed(4, std::string(100, 'x'));
    Put(dir, "frames-whole", frames | (3 << 4), {stream});
    Put(dir, "frames-bytewise", frames | (7 << 4), Bytewise(stream.substr(0, 200)));
    Put(dir, "frames-limits", frames | kTransportHelloDone | kTransportTypeLimits,
        {Framed(1, "123456789") + Framed(2, std::string(18, 'y')) +
         Framed(2, std::string(19, 'z'))});
    const std::string announced =
        hilosim::test::FrameHeaderBytes(1, (2ull << 30) - 1, (2ull << 30) - 1);
    Put(dir, "frames-2GiB", frames | kTransportHelloDone | (15 << 4),
        {announced, std::string(300, 'q')});
    std::string bad = Framed(1, "crc");
    bad.back() ^= 1;
    Put(dir, "frames-bad-crc", frames | kTransportHelloDone, {bad});

    const uint8_t hello = static_cast<uint8_t>(TransportMode::kHello);
    const std::vector<std::string> honest = {std::string(1, '\0'), std::string(1, '\1'),
                                             std::string(1, '\0'), std::string(1, '\1')};
    Put(dir, "hello-keyed", hello | kTransportKeyed, honest);
    Put(dir, "hello-plain", hello, {std::string(1, '\0')});
    Put(dir, "hello-keyed-flipped-proof", hello | kTransportKeyed,
        {std::string(1, '\0'), std::string(1, '\1'), std::string("\x0c\x05", 2),
         std::string(1, '\1')});
    Put(dir, "hello-injected", hello | kTransportKeyed,
        {std::string(1, '\2') + PeerIdBytes(5) + std::string(16, 'n'), std::string(1, '\1'),
         std::string(1, '\0')});

    const uint8_t records = static_cast<uint8_t>(TransportMode::kRecords);
    Put(dir, "records", records,
        {std::string(1, '\0') + Framed(1, "sealed"), std::string(1, '\0') + Framed(2, "", 30),
         std::string(1, '\0') + Framed(3, "x")});
    Put(dir, "records-flipped", records,
        {std::string(1, '\0') + Framed(1, "sealed"), std::string("\x09\x07", 2) + Framed(2, "a"),
         std::string(1, '\0') + Framed(3, "x")});

    const uint8_t admission = static_cast<uint8_t>(TransportMode::kAdmission);
    Put(dir, "admission", admission,
        {std::string("\x05\x03\x02\x01\x00"
                     "abcaab",
                     11)});
}

} // namespace hilo::fuzz
