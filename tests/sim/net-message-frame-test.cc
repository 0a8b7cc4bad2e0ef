// Message framing (sim/net/message-frame.h): the header's golden bytes, reassembly of real and
// virtual bytes from packets split at arbitrary points, and damaged bytes caught by the CRCs.
#include "sim/net/message-frame.h"

#include "hilo/core/crc32c.h"

#include "ns3/packet.h"

#include <gtest/gtest.h>

#include <random>

namespace hilosim
{
namespace
{

TEST(NetMessageFrame, HeaderGoldenBytes)
{
    FrameHeader h;
    h.type = 7;
    h.payload_bytes = 0x0102;
    h.wire_bytes = 0x0A0B0C;
    h.sent_at_steps = 1000000;
    h.payload_crc = 0xDEADBEEF;
    std::string bytes;
    h.AppendTo(&bytes);
    const std::string golden("\x48\x4C\x4D\x46"                 // magic "HLMF"
                             "\x07\x00\x00\x00"                 // type
                             "\x02\x01\x00\x00\x00\x00\x00\x00" // payload_bytes
                             "\x0C\x0B\x0A\x00\x00\x00\x00\x00" // wire_bytes
                             "\x40\x42\x0F\x00\x00\x00\x00\x00" // sent_at (time steps)
                             "\xEF\xBE\xAD\xDE"                 // payload_crc
                             "\x20\x61\x67\x74",                // header_crc of the 36 above
                             40);
    EXPECT_EQ(bytes, golden);
    auto parsed = FrameHeader::Parse(bytes, 1 << 20);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->type, 7u);
    EXPECT_EQ(parsed->payload_bytes, 0x0102u);
    EXPECT_EQ(parsed->wire_bytes, 0x0A0B0Cu);
    EXPECT_EQ(parsed->sent_at_steps, 1000000);
    EXPECT_EQ(parsed->payload_crc, 0xDEADBEEFu);
}

TEST(NetMessageFrame, BadHeadersAreCorruption)
{
    FrameHeader h;
    h.payload_bytes = 10;
    h.wire_bytes = 5;
    std::string bytes;
    h.AppendTo(&bytes);
    EXPECT_EQ(FrameHeader::Parse(bytes, 100).status().code(), hilo::StatusCode::kCorruption);
    h.wire_bytes = 10;
    bytes.clear();
    h.AppendTo(&bytes);
    EXPECT_EQ(FrameHeader::Parse(bytes, 9).status().code(), hilo::StatusCode::kCorruption)
        << "limit";
    // Any one flipped bit of the header: its CRC (or the magic) catches it.
    for (size_t i = 0; i < FrameHeader::kBytes * 8; ++i)
    {
        std::string flipped = bytes;
        flipped[i / 8] = static_cast<char>(flipped[i / 8] ^ (1 << (i % 8)));
        EXPECT_EQ(FrameHeader::Parse(flipped, 100).status().code(), hilo::StatusCode::kCorruption)
            << "bit " << i;
    }
}

/// Builds the stream of `messages` as (real bytes, padding) pieces, cut into packets at random.
std::vector<ns3::Ptr<ns3::Packet>>
StreamPackets(const std::vector<std::pair<std::string, uint64_t>>& messages, std::mt19937& rng)
{
    // Lay the stream out as runs: real run (header + payload) then virtual run (padding).
    struct Run
    {
        std::string real;
        uint64_t padding;
    };
    std::vector<Run> runs;
    uint32_t type = 1;
    for (const auto& [payload, wire] : messages)
    {
        FrameHeader h;
        h.type = type++;
        h.payload_bytes = payload.size();
        h.wire_bytes = wire;
        h.payload_crc = hilo::Crc32c(payload.data(), payload.size());
        Run run;
        h.AppendTo(&run.real);
        run.real += payload;
        run.padding = wire - payload.size();
        runs.push_back(run);
    }
    std::vector<ns3::Ptr<ns3::Packet>> packets;
    std::uniform_int_distribution<uint32_t> cut(1, 3000);
    for (const Run& run : runs)
    {
        size_t off = 0;
        while (off < run.real.size())
        {
            size_t n = std::min<size_t>(cut(rng), run.real.size() - off);
            packets.push_back(ns3::Create<ns3::Packet>(
                reinterpret_cast<const uint8_t*>(run.real.data() + off), n));
            off += n;
        }
        uint64_t left = run.padding;
        while (left > 0)
        {
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(cut(rng) * 50, left));
            packets.push_back(ns3::Create<ns3::Packet>(n));
            left -= n;
        }
    }
    // Merge some neighbours so that packets also span real/virtual and frame boundaries.
    std::vector<ns3::Ptr<ns3::Packet>> merged;
    for (auto& p : packets)
    {
        if (!merged.empty() && rng() % 3 == 0)
        {
            merged.back()->AddAtEnd(p);
        }
        else
        {
            merged.push_back(p->Copy());
        }
    }
    return merged;
}

TEST(NetMessageFrame, ReassemblesAcrossArbitrarySplits)
{
    std::mt19937 rng(42);
    std::vector<std::pair<std::string, uint64_t>> messages;
    for (uint64_t size : {0ull, 1ull, 31ull, 32ull, 33ull, 1000ull, 70000ull})
    {
        std::string payload(size, '\0');
        for (auto& c : payload)
        {
            c = static_cast<char>(rng());
        }
        messages.emplace_back(payload, size);             // no padding
        messages.emplace_back(payload, size * 3 + 12345); // padded
    }
    auto packets = StreamPackets(messages, rng);
    MessageReassembler rx(1 << 20);
    std::vector<Message> out;
    for (auto& p : packets)
    {
        ASSERT_TRUE(rx.Consume(p, [&](Message&& m) { out.push_back(std::move(m)); }).ok());
        EXPECT_EQ(p->GetSize(), 0u);
    }
    ASSERT_EQ(out.size(), messages.size());
    uint64_t stream = 0;
    for (size_t i = 0; i < out.size(); ++i)
    {
        EXPECT_EQ(out[i].type, i + 1);
        EXPECT_EQ(out[i].payload, messages[i].first) << "message " << i;
        EXPECT_EQ(out[i].wire_bytes, messages[i].second);
        stream += FrameHeader::kBytes + messages[i].second;
    }
    EXPECT_EQ(rx.GetStreamBytes(), stream);
    EXPECT_FALSE(rx.IsMidFrame());
}

TEST(NetMessageFrame, DamagedPayloadIsCaughtByItsCrcAndNeverDelivered)
{
    std::mt19937 rng(5);
    std::string payload(5000, '\0');
    for (auto& c : payload)
    {
        c = static_cast<char>(rng());
    }
    for (size_t at : {size_t{0}, size_t{1234}, payload.size() - 1})
    {
        std::mt19937 cuts(static_cast<uint32_t>(at));
        auto packets = StreamPackets({{payload, 9000}, {payload, 5000}}, cuts);
        // Flip one bit of the first message's payload, wherever the packets cut it.
        size_t offset = FrameHeader::kBytes + at;
        for (auto& p : packets)
        {
            if (offset < p->GetSize())
            {
                std::string bytes(p->GetSize(), '\0');
                p->CopyData(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size());
                bytes[offset] = static_cast<char>(bytes[offset] ^ 0x08);
                p = ns3::Create<ns3::Packet>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                             bytes.size());
                break;
            }
            offset -= p->GetSize();
        }
        MessageReassembler rx(1 << 20);
        int delivered = 0;
        hilo::Status status;
        for (auto& p : packets)
        {
            status = rx.Consume(p, [&](Message&&) { ++delivered; });
            if (!status.ok())
                break;
        }
        EXPECT_EQ(status.code(), hilo::StatusCode::kCorruption) << at;
        EXPECT_EQ(delivered, 0) << "nothing after the damaged message either";
    }
}

TEST(NetMessageFrame, CorruptStreamIsReportedNotDelivered)
{
    MessageReassembler rx(1 << 20);
    std::string garbage(64, 'x');
    auto p = ns3::Create<ns3::Packet>(reinterpret_cast<const uint8_t*>(garbage.data()), 64);
    int delivered = 0;
    auto s = rx.Consume(p, [&](Message&&) { ++delivered; });
    EXPECT_EQ(s.code(), hilo::StatusCode::kCorruption);
    EXPECT_EQ(delivered, 0);
    auto again = ns3::Create<ns3::Packet>(10);
    EXPECT_EQ(rx.Consume(again, [&](Message&&) { ++delivered; }).code(),
              hilo::StatusCode::kCorruption);
}

} // namespace
} // namespace hilosim
