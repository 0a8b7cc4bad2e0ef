// The process transport's socket-free pieces, exactly: the frame reader's memory bound and
// limits, the hello exchange on both ends, admission. (tests/fuzz/fuzz-transport.cc fuzzes the
// same invariants.)
#include "sim/drivers/process/admission.h"
#include "sim/drivers/process/frame-reader.h"
#include "sim/drivers/process/hello-exchange.h"
#include "sim/net/frame-header.h"

#include "tests/sim/frame-bytes.h"

#include <gtest/gtest.h>

#include <cstring>

namespace hilosim
{
namespace
{

using test::Framed;

/// Feeds `bytes` in reads of at most `read` bytes; returns the last event.
FrameReader::Event
Feed(FrameReader& r, const std::string& bytes, size_t read, std::vector<std::string>* frames)
{
    FrameReader::Event e = FrameReader::Event::kNeedMore;
    for (size_t at = 0; at < bytes.size();)
    {
        const FrameReader::Span span = r.Buffer();
        const size_t n = std::min({span.size, read, bytes.size() - at});
        std::memcpy(span.data, bytes.data() + at, n);
        at += n;
        e = r.Commit(n);
        if (e == FrameReader::Event::kError)
            return e;
        if (e == FrameReader::Event::kFrame)
            frames->push_back(r.TakePayload());
    }
    return e;
}

TEST(ProcessFrameReader, AnAnnouncedPayloadCostsTheBytesThatArrivedPlusOneStep)
{
    FrameReader r({});
    r.set_hello_done(true);
    const std::string header = test::FrameHeaderBytes(1, (2ull << 30) - 1, (2ull << 30) - 1);
    std::vector<std::string> frames;
    EXPECT_EQ(Feed(r, header, 1 << 20, &frames), FrameReader::Event::kNeedMore);
    EXPECT_EQ(r.payload_allocated_bytes(), 256u << 10);
    EXPECT_EQ(Feed(r, std::string(1 << 20, 'x'), 1 << 20, &frames), FrameReader::Event::kNeedMore);
    EXPECT_EQ(r.payload_arrived_bytes(), 1u << 20);
    EXPECT_LE(r.payload_allocated_bytes(), (1u << 20) + (256u << 10));
    EXPECT_TRUE(r.mid_frame());
    EXPECT_EQ(r.frame_bytes(), FrameHeader::kBytes + (1u << 20));
}

TEST(ProcessFrameReader, FramesComeOutWholeHoweverTheBytesAreCut)
{
    const std::string big(700000, 'b');
    const std::string stream = Framed(FrameHeader::kHelloType, "abcd") + Framed(1, "one") +
                               Framed(2, big, 100000) + Framed(3, "", 5) +
                               Framed(FrameHeader::kHeartbeatType, "");
    for (const size_t read : {size_t{1}, size_t{7}, size_t{1} << 20})
    {
        FrameReader r({});
        std::vector<std::string> frames;
        ASSERT_EQ(Feed(r, stream.substr(0, FrameHeader::kBytes + 4), read, &frames),
                  FrameReader::Event::kFrame);
        r.set_hello_done(true);
        ASSERT_EQ(Feed(r, stream.substr(FrameHeader::kBytes + 4), read, &frames),
                  FrameReader::Event::kFrame)
            << r.error().ToString();
        ASSERT_EQ(frames.size(), 5u);
        EXPECT_EQ(frames[1], "one");
        EXPECT_EQ(frames[2], big);
        EXPECT_EQ(frames[3], "");
        EXPECT_EQ(r.header().type, FrameHeader::kHeartbeatType);
        EXPECT_FALSE(r.mid_frame());
    }
}

TEST(ProcessFrameReader, LimitsAreCheckedOnTheHeaderAndAFailureIsFinal)
{
    const auto refused = [](bool hello_done, const std::string& bytes, const std::string& why)
    {
        FrameReaderOptions o;
        o.max_payload_bytes = 100;
        o.max_payload_for = [](uint32_t type) { return type == 1 ? 10u : 0u; };
        FrameReader r(o);
        r.set_hello_done(hello_done);
        std::vector<std::string> frames;
        EXPECT_EQ(Feed(r, bytes, 1 << 20, &frames), FrameReader::Event::kError) << why;
        EXPECT_NE(r.error().message().find(why), std::string::npos) << r.error().message();
        EXPECT_EQ(r.Commit(1), FrameReader::Event::kError);
        EXPECT_EQ(r.Buffer().size, 0u);
    };
    refused(false, Framed(1, "x"), "message before the hello");
    refused(false, Framed(FrameHeader::kHelloType, std::string(33, 'h')), "exceeds the limit");
    refused(false, Framed(FrameHeader::kHelloType, "id", 1), "malformed hello");
    refused(true, Framed(FrameHeader::kHelloType, "id"), "unexpected hello");
    refused(true, Framed(1, std::string(11, 'a')), "takes at most 10 of that type");
    refused(true, Framed(2, std::string(101, 'a')), "exceeds the limit of 100");
    refused(true, Framed(FrameHeader::kHeartbeatType, "", 1), "malformed heartbeat");
    std::string flipped = Framed(1, "abc");
    flipped.back() ^= 1;
    refused(true, flipped, "fails its CRC-32C");
}

const char* const kKey = "0123456789abcdef-the-run-key-of-32+";

HelloOptions
Options(uint32_t id, const std::string& key)
{
    HelloOptions o;
    o.local_id = id;
    o.key = key;
    o.accept_peer = [](uint32_t peer) { return peer < 50; };
    return o;
}

/// Hands every frame each end sends to the other until neither sends; false on a failure.
bool
Exchange(HelloExchange& listener, HelloExchange& dialler, std::vector<std::string> to_listener,
         std::string* why)
{
    std::vector<std::string> to_dialler;
    while (!to_listener.empty() || !to_dialler.empty())
    {
        std::vector<std::string> next_l, next_d;
        for (const std::string& f : to_listener)
        {
            if (const hilo::Status s = listener.OnFrame(f, &next_d); !s.ok())
            {
                *why = s.message();
                return false;
            }
        }
        for (const std::string& f : to_dialler)
        {
            if (const hilo::Status s = dialler.OnFrame(f, &next_l); !s.ok())
            {
                *why = s.message();
                return false;
            }
        }
        to_listener = next_l;
        to_dialler = next_d;
    }
    return true;
}

TEST(ProcessHelloExchange, KeyedEndsFinishWithCrossedSessionKeys)
{
    auto listener = HelloExchange::Listener(Options(100, kKey));
    auto dialler = HelloExchange::Dialler(Options(7, kKey), 100, "127.0.0.1:1");
    auto hello = dialler->Start();
    ASSERT_TRUE(hello.ok());
    std::string why;
    ASSERT_TRUE(Exchange(*listener, *dialler, {*hello}, &why)) << why;
    ASSERT_TRUE(listener->done() && dialler->done());
    EXPECT_EQ(listener->peer(), 7u);
    EXPECT_EQ(listener->send_key(), dialler->receive_key());
    EXPECT_EQ(listener->receive_key(), dialler->send_key());
    EXPECT_NE(listener->send_key(), listener->receive_key());
    EXPECT_EQ(listener->send_key().size(), RecordFormat::kKeyBytes);

    auto plain_listener = HelloExchange::Listener(Options(100, ""));
    auto plain_dialler = HelloExchange::Dialler(Options(7, ""), 100, "127.0.0.1:1");
    EXPECT_TRUE(plain_dialler->done());
    ASSERT_TRUE(Exchange(*plain_listener, *plain_dialler, {*plain_dialler->Start()}, &why)) << why;
    EXPECT_TRUE(plain_listener->done());
    EXPECT_TRUE(plain_listener->send_key().empty());
}

TEST(ProcessHelloExchange, AWrongKeyOrAnUnknownIdFailsAndSendsNothing)
{
    auto listener = HelloExchange::Listener(Options(100, kKey));
    auto dialler =
        HelloExchange::Dialler(Options(7, "another key, just as long as ours"), 100, "there");
    std::string why;
    EXPECT_FALSE(Exchange(*listener, *dialler, {*dialler->Start()}, &why));
    EXPECT_NE(why.find("authentication failed: the peer claiming id 7"), std::string::npos) << why;
    EXPECT_EQ(listener->state(), HelloExchange::State::kFailed);
    std::vector<std::string> send;
    EXPECT_FALSE(listener->OnFrame("anything", &send).ok());
    EXPECT_TRUE(send.empty());

    auto picky = HelloExchange::Listener(Options(100, kKey));
    auto stranger = HelloExchange::Dialler(Options(77, kKey), 100, "there");
    EXPECT_FALSE(Exchange(*picky, *stranger, {*stranger->Start()}, &why));
    EXPECT_NE(why.find("peer id 77 is not one this node accepts"), std::string::npos) << why;
}

TEST(ProcessAdmission, AFullSourceOrNodeDropsItsOldestPendingConnection)
{
    const AdmissionLimits limits{/*max_connections=*/10, /*max_pending_hellos=*/4,
                                 /*max_pending_per_source=*/2};
    EXPECT_TRUE(DecideAdmission(10, {}, "a", limits).refuse);
    const AdmissionDecision room = DecideAdmission(2, {"a", "b"}, "a", limits);
    EXPECT_FALSE(room.refuse || room.evict);
    const AdmissionDecision source = DecideAdmission(2, {"b", "a", "a"}, "a", limits);
    ASSERT_TRUE(source.evict);
    EXPECT_EQ(source.evict_index, 1u);
    const AdmissionDecision node = DecideAdmission(2, {"b", "c", "a", "d"}, "e", limits);
    ASSERT_TRUE(node.evict);
    EXPECT_EQ(node.evict_index, 0u);
}

} // namespace
} // namespace hilosim
