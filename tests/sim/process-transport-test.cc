// TcpTransport over real loopback TCP, in one process on one event loop: framed messages arrive
// whole and in order with their padding read off the stream; a peer connecting later gets what was
// queued for it; a dropped connection is dialled again; garbage, truncated frames and frames over
// the limit close only the offending connection. Also the event log round trip.
#include "sim/drivers/process/event-log.h"
#include "sim/drivers/process/tcp-transport.h"
#include "sim/net/frame-header.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>

namespace hilosim
{
namespace
{

namespace asio = boost::asio;

struct Received
{
    uint32_t peer;
    uint32_t type;
    std::string payload;
    uint64_t wire_bytes;
    uint64_t sequence;
};

struct Node
{
    std::vector<Received> received;
    std::vector<uint32_t> connected;
    std::vector<std::pair<uint32_t, bool>> closed;
    std::vector<std::string> log;
    std::unique_ptr<TcpTransport> transport;

    Node(asio::io_context& io, uint32_t id, uint64_t max_payload = (1ull << 31) - 1)
    {
        TcpTransportOptions o;
        o.local_id = id;
        o.name = "node " + std::to_string(id);
        o.max_payload_bytes = max_payload;
        o.backoff_initial_s = 0.01;
        TcpTransportCallbacks cb;
        cb.message = [this](uint32_t peer, const RoleMessage& m) {
            received.push_back({peer, m.type, std::string(m.payload), m.wire_bytes, m.sequence});
        };
        cb.connected = [this](uint32_t peer) { connected.push_back(peer); };
        cb.closed = [this](uint32_t peer, bool error, const std::string&)
        { closed.emplace_back(peer, error); };
        cb.log = [this](const std::string& line) { log.push_back(line); };
        transport = std::make_unique<TcpTransport>(io, o, cb);
    }
};

// Runs the loop until `done` or a time-out (then the test fails).
void
RunUntil(asio::io_context& io, const std::function<bool()>& done, double timeout_s = 10)
{
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!done() && std::chrono::steady_clock::now() < deadline)
    {
        io.run_for(std::chrono::milliseconds(5));
        io.restart();
    }
    ASSERT_TRUE(done()) << "timed out";
}

std::shared_ptr<const std::string>
Bytes(const std::string& s)
{
    return std::make_shared<const std::string>(s);
}

TEST(ProcessTransport, MessagesArriveWholeInOrderWithTheirPaddingRead)
{
    asio::io_context io;
    Node server(io, 100);
    Node client(io, 7);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    // Queued before the connection exists: delivered once it does.
    ASSERT_TRUE(client.transport->Send(100, 1, Bytes("early"), 5).ok());
    client.transport->Connect(100, "127.0.0.1", *port);
    std::string big(300000, 'x');
    for (size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>(i * 31);
    ASSERT_TRUE(client.transport->Send(100, 2, Bytes(big), big.size() + 5'000'000).ok());
    ASSERT_TRUE(client.transport->Send(100, 3, Bytes(""), 70'000).ok());
    RunUntil(io, [&]() { return server.received.size() == 3; });
    ASSERT_EQ(server.connected, std::vector<uint32_t>{7});
    EXPECT_EQ(server.received[0].payload, "early");
    EXPECT_EQ(server.received[0].wire_bytes, 5u);
    EXPECT_EQ(server.received[1].payload, big);
    EXPECT_EQ(server.received[1].wire_bytes, big.size() + 5'000'000);
    EXPECT_EQ(server.received[2].payload, "");
    EXPECT_EQ(server.received[2].wire_bytes, 70'000u);
    for (uint64_t i = 0; i < 3; ++i)
    {
        EXPECT_EQ(server.received[i].peer, 7u);
        EXPECT_EQ(server.received[i].sequence, i);
        EXPECT_EQ(server.received[i].type, i + 1);
    }
    // And back, on the same connection.
    ASSERT_TRUE(server.transport->Send(7, 9, Bytes("reply"), 1000).ok());
    RunUntil(io, [&]() { return client.received.size() == 1; });
    EXPECT_EQ(client.received[0].peer, 100u);
    EXPECT_EQ(client.received[0].payload, "reply");
}

TEST(ProcessTransport, BadArgumentsAreErrors)
{
    asio::io_context io;
    Node a(io, 1);
    EXPECT_EQ(a.transport->Send(2, 1, Bytes("abc"), 2).code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_EQ(a.transport->Send(2, FrameHeader::kHelloType, Bytes("abc"), 3).code(),
              hilo::StatusCode::kInvalidArgument);
    EXPECT_FALSE(a.transport->Listen("not-an-address", 0).ok());
}

TEST(ProcessTransport, ADroppedConnectionIsDialledAgainAndMessagesInBetweenAreDropped)
{
    asio::io_context io;
    Node server(io, 100);
    Node client(io, 7);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    client.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io, [&]() { return server.connected.size() == 1; });
    server.transport->Disconnect(7, "test");
    RunUntil(io, [&]() { return !client.closed.empty(); });
    // While it is down, messages to it are dropped, not queued for the next connection.
    if (!server.transport->IsConnected(7))
    {
        ASSERT_TRUE(server.transport->Send(7, 1, Bytes("lost"), 4).ok());
        EXPECT_EQ(server.transport->dropped(), 1u);
    }
    RunUntil(io, [&]() { return server.connected.size() == 2; });
    ASSERT_TRUE(server.transport->Send(7, 2, Bytes("after"), 5).ok());
    RunUntil(io, [&]() { return !client.received.empty(); });
    EXPECT_EQ(client.received.back().payload, "after");
    EXPECT_EQ(client.connected.size(), 2u);
}

// Writes `bytes` to `port` from a raw socket, then closes it.
void
RawSend(asio::io_context& io, uint16_t port, const std::string& bytes)
{
    asio::ip::tcp::socket s(io);
    s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    asio::write(s, asio::buffer(bytes));
    s.close();
}

std::string
Header(uint32_t type, uint64_t payload, uint64_t wire)
{
    FrameHeader h;
    h.type = type;
    h.payload_bytes = payload;
    h.wire_bytes = wire;
    std::string out;
    h.AppendTo(&out);
    return out;
}

/// A whole frame: header with the payload's CRC-32C, then the payload (no padding).
std::string
Framed(uint32_t type, const std::string& payload)
{
    FrameHeader h;
    h.type = type;
    h.payload_bytes = payload.size();
    h.wire_bytes = payload.size();
    h.payload_crc = hilo::Crc32c(payload.data(), payload.size());
    std::string out;
    h.AppendTo(&out);
    return out + payload;
}

std::string
Hello(uint32_t id)
{
    std::string payload;
    hilo::ByteWriter(&payload).PutU32(id);
    return Framed(FrameHeader::kHelloType, payload);
}

TEST(ProcessTransport, CorruptStreamsCloseOnlyTheirConnection)
{
    asio::io_context io;
    Node server(io, 100, /*max_payload=*/1 << 20);
    Node good(io, 1);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    good.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io, [&]() { return server.connected.size() == 1; });

    RawSend(io, *port, std::string(64, '\x5a'));                         // garbage: bad magic
    RawSend(io, *port, Header(5, 10, 10) + "0123456789");                // no hello first
    RawSend(io, *port, Hello(9) + Header(5, 1000, 1000) + "truncated");  // ends mid-frame
    RawSend(io, *port, Hello(10) + Header(5, 2 << 20, 2 << 20) + "big"); // over the limit
    RawSend(io, *port, Hello(11) + Header(5, 10, 4));                    // wire < payload
    std::string flipped = Framed(5, "0123456789");
    flipped.back() ^= 0x01;
    RawSend(io, *port, Hello(12) + flipped); // payload bit flip
    RunUntil(io, [&]() { return server.log.size() >= 6; });
    std::string all;
    for (const std::string& l : server.log)
        all += l + "\n";
    EXPECT_NE(all.find("bad magic"), std::string::npos) << all;
    EXPECT_NE(all.find("before the hello"), std::string::npos) << all;
    EXPECT_NE(all.find("truncated"), std::string::npos) << all;
    EXPECT_NE(all.find("exceeds the limit"), std::string::npos) << all;
    EXPECT_NE(all.find("wire_bytes"), std::string::npos) << all;
    EXPECT_NE(all.find("fails its CRC-32C"), std::string::npos) << all;
    // The well-behaved peer is still connected and served.
    ASSERT_TRUE(good.transport->Send(100, 4, Bytes("still here"), 10).ok());
    RunUntil(io, [&]() { return !server.received.empty(); });
    EXPECT_EQ(server.received.back().payload, "still here");
    EXPECT_TRUE(server.transport->IsConnected(1));
}

TEST(ProcessEventLog, RoundTripsEveryEventExactlyAndSkipsACutLastLine)
{
    const std::string path =
        (std::filesystem::temp_directory_path() / "hilo-event-log-test.events").string();
    std::filesystem::remove(path);
    {
        auto w = EventLogWriter::Open(path);
        ASSERT_TRUE(w.ok());
        (*w)->Process("worker", 3, 4242);
        PublishEvent p;
        p.version = 2;
        p.grad_ready_s = 0.1 + 0.2;
        p.published_s = 1.0 / 3.0;
        p.loss = 1e-300;
        p.payload_bytes = 123;
        p.wire_bytes = 1ull << 40;
        p.kept_per_matrix = {4, 0, 7};
        p.train_overrun_s = 0.25;
        (*w)->Publish(p);
        ApplyEvent a;
        a.worker = 3;
        a.version = 2;
        a.ready_s = 2.0 / 7.0;
        a.via_resync = true;
        a.overrun_s = 1e-5;
        (*w)->Apply(a);
        (*w)->Done(3, 2, 0xFFFFFFFFFFFFFFFFull, true);
        (*w)->Resync(3, 1);
    }
    {
        std::FILE* f = std::fopen(path.c_str(), "a");
        std::fputs("apply 3 9 0.5", f); // a process killed mid-line
        std::fclose(f);
    }
    EventRecord r;
    ASSERT_TRUE(ReadEventLog(path, &r).ok());
    ASSERT_EQ(r.publishes.size(), 1u);
    EXPECT_EQ(r.publishes[0].grad_ready_s, 0.1 + 0.2);
    EXPECT_EQ(r.publishes[0].published_s, 1.0 / 3.0);
    EXPECT_EQ(r.publishes[0].loss, 1e-300);
    EXPECT_EQ(r.publishes[0].wire_bytes, 1ull << 40);
    EXPECT_EQ(r.publishes[0].kept_per_matrix, (std::vector<int64_t>{4, 0, 7}));
    EXPECT_EQ(r.publishes[0].train_overrun_s, 0.25);
    ASSERT_EQ(r.applies.size(), 1u);
    EXPECT_EQ(r.applies[0].ready_s, 2.0 / 7.0);
    EXPECT_TRUE(r.applies[0].via_resync);
    EXPECT_EQ(r.applies[0].overrun_s, 1e-5);
    EXPECT_TRUE(r.done.at(3));
    EXPECT_EQ(r.resyncs, 1u);
    EXPECT_EQ(r.worker_pids.at(3), std::vector<int64_t>{4242});

    std::FILE* f = std::fopen(path.c_str(), "a");
    std::fputs("\npublish 1 2 three\n", f);
    std::fclose(f);
    EventRecord bad;
    hilo::Status s = ReadEventLog(path, &bad);
    EXPECT_EQ(s.code(), hilo::StatusCode::kCorruption);
    EXPECT_NE(s.message().find(path + ":"), std::string::npos) << s.message();
    std::filesystem::remove(path);
}

} // namespace
} // namespace hilosim
