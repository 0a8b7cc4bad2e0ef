// TcpTransport's deadlines over real loopback TCP, against raw-socket peers: a frame that stops
// arriving is closed once no byte of it came for frame_timeout_s (a slow but steady one is not);
// a connection that received nothing for heartbeat_timeout_s is closed, also an authenticated one
// whose peer still holds the socket open; an idle live peer stays connected because both ends
// send heartbeats, which are sealed, consumed by the transport and never delivered.
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/record-cipher.h"
#include "sim/drivers/process/tcp-transport.h"
#include "sim/net/frame-header.h"

#include "tests/sim/process-transport-util.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>

namespace hilosim
{
namespace
{

namespace asio = boost::asio;

const char* const kKey = test::kTransportKey;
using test::Framed;
using test::PeerIdBytes;
using test::RunFor;
using test::RunUntil;
using Node = test::TransportNode;

/// A raw peer that said its plain hello as `id`.
std::unique_ptr<asio::ip::tcp::socket>
PlainPeer(asio::io_context& io, uint16_t port, uint32_t id)
{
    auto s = std::make_unique<asio::ip::tcp::socket>(io);
    test::SayHello(*s, port, id);
    return s;
}

/// Reads exactly `n` bytes from `s` on a thread while the loop runs.
std::string
ReadWhileLooping(asio::io_context& io, asio::ip::tcp::socket& s, size_t n)
{
    std::string out(n, '\0');
    test::WhileLooping(io, s,
                       [&]()
                       {
                           boost::system::error_code ec;
                           asio::read(s, asio::buffer(&out[0], n), ec);
                       });
    return out;
}

/// A raw peer (id `id`) that proves the key by hand (peer-auth.h); `keys` gets the session keys.
std::unique_ptr<asio::ip::tcp::socket>
KeyedPeer(asio::io_context& io, uint16_t port, uint32_t id, uint32_t listener, SessionKeys* keys)
{
    auto s = std::make_unique<asio::ip::tcp::socket>(io);
    s->connect({asio::ip::make_address("127.0.0.1"), port});
    const std::string nonce(PeerAuth::kNonceBytes, 'n');
    asio::write(*s, asio::buffer(Framed(FrameHeader::kHelloType, PeerIdBytes(id) + nonce)));
    const std::string challenge =
        ReadWhileLooping(io, *s, FrameHeader::kBytes + PeerAuth::kChallengeBytes)
            .substr(FrameHeader::kBytes + 4);
    const PeerAuth auth(kKey);
    asio::write(
        *s, asio::buffer(Framed(FrameHeader::kHelloType, auth.Mac(PeerAuth::Side::kDialler, id,
                                                                  listener, nonce, challenge))));
    ReadWhileLooping(io, *s, FrameHeader::kBytes + PeerAuth::kProofBytes);
    *keys = *DeriveSessionKeys(kKey, id, listener, nonce, challenge);
    return s;
}

bool
Closed(const Node& p, uint32_t peer)
{
    for (const auto& [id, error] : p.closed)
        if (id == peer)
            return true;
    return false;
}

// A peer that sends a header, or part of one, or part of a payload, and then nothing more is
// closed once no byte of that frame came for frame_timeout_s; a frame that keeps arriving, however
// slowly, is not; and the node's other connections are untouched.
TEST(ProcessTransport, AFrameThatStallsIsClosedAndOtherPeersAreNot)
{
    asio::io_context io;
    auto tune = [](TcpTransportOptions& o)
    {
        o.frame_timeout_s = 0.4;
        o.heartbeat_interval_s = 0; // no heartbeats: the frame's own deadline alone
        o.heartbeat_timeout_s = 0;
    };
    Node server(io, 100, tune);
    Node good(io, 1, tune);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    good.transport->Connect(100, "127.0.0.1", *port);
    auto header_only = PlainPeer(io, *port, 5);
    auto part_header = PlainPeer(io, *port, 6);
    auto part_payload = PlainPeer(io, *port, 7);
    auto steady = PlainPeer(io, *port, 8);
    RunUntil(io, [&]() { return server.connected.size() == 5; });
    const std::string frame = Framed(1, std::string(1000, 'p'));
    asio::write(*header_only, asio::buffer(frame.substr(0, FrameHeader::kBytes)));
    asio::write(*part_header, asio::buffer(frame.substr(0, 17)));
    asio::write(*part_payload, asio::buffer(frame.substr(0, 500)));
    // The steady peer sends its frame 50 bytes every 0.1 s: 2 s in all, 5x the timeout.
    size_t sent = 0;
    const auto start = std::chrono::steady_clock::now();
    while (sent < frame.size())
    {
        asio::write(*steady, asio::buffer(frame.substr(sent, 50)));
        sent += 50;
        RunFor(io, 0.1);
        if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(300))
        {
            EXPECT_TRUE(server.closed.empty()) << "closed before the frame timeout";
        }
    }
    RunUntil(io, [&]() { return server.received.size() == 1 && server.closed.size() == 3; });
    EXPECT_TRUE(Closed(server, 5) && Closed(server, 6) && Closed(server, 7)) << server.Log();
    EXPECT_FALSE(Closed(server, 8));
    ASSERT_EQ(server.received.size(), 1u);
    EXPECT_EQ(server.received[0].peer, 8u);
    const std::string log = server.Log();
    EXPECT_NE(log.find("a frame stalled: 40 bytes of it arrived (type 1, 1040 bytes on the wire)"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("a frame stalled: 17 bytes of it arrived"), std::string::npos) << log;
    EXPECT_NE(log.find("a frame stalled: 500 bytes of it arrived"), std::string::npos) << log;
    ASSERT_TRUE(good.transport->Send(100, 2, std::make_shared<const std::string>("still"), 5).ok());
    RunUntil(io, [&]() { return server.received.size() == 2; });
    EXPECT_EQ(server.received[1].peer, 1u);
    EXPECT_TRUE(server.transport->IsConnected(1));
}

// An authenticated peer that goes silent (its process stopped: the kernel keeps its TCP alive, so
// keepalive never ends it) is closed after heartbeat_timeout_s with nothing received. Meanwhile
// this side's heartbeats reach it sealed under the session keys, like every frame.
TEST(ProcessTransport, ASilentAuthenticatedPeerIsClosedAfterTheHeartbeatTimeout)
{
    asio::io_context io;
    Node server(io, 100,
                [](TcpTransportOptions& o)
                {
                    o.key = kKey;
                    o.heartbeat_interval_s = 0.1;
                    o.heartbeat_timeout_s = 0.6;
                });
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    SessionKeys keys;
    auto silent = KeyedPeer(io, *port, 6, 100, &keys);
    RunUntil(io, [&]() { return server.connected.size() == 1; });
    // The first heartbeat: one sealed record holding a heartbeat frame.
    const std::string record =
        ReadWhileLooping(io, *silent, RecordFormat::kOverheadBytes + FrameHeader::kBytes);
    RecordOpener opener(keys.listener_to_dialler);
    std::string plain;
    ASSERT_TRUE(opener
                    .Open(record.substr(0, RecordFormat::kHeaderBytes),
                          record.substr(RecordFormat::kHeaderBytes), &plain)
                    .ok())
        << opener.error().ToString();
    auto h = FrameHeader::Parse(plain, 0);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->type, FrameHeader::kHeartbeatType);
    EXPECT_FALSE(Closed(server, 6)) << "closed before its timeout";
    RunUntil(
        io, [&]() { return Closed(server, 6); }, 5);
    EXPECT_EQ(server.closed[0], std::make_pair(6u, true));
    EXPECT_NE(server.Log().find("nothing received for 0.6"), std::string::npos) << server.Log();
}

// Two idle nodes stay connected across many heartbeat intervals: each end's heartbeats keep the
// other's timeout from firing, and none of them reaches the role (no message, and the first real
// message is still number 0 on its connection).
TEST(ProcessTransport, IdlePeersStayConnectedAcrossHeartbeatIntervals)
{
    for (const bool keyed : {false, true})
    {
        asio::io_context io;
        auto tune = [keyed](TcpTransportOptions& o)
        {
            o.key = keyed ? kKey : "";
            o.heartbeat_interval_s = 0.1;
            o.heartbeat_timeout_s = 0.4;
        };
        Node server(io, 100, tune);
        Node client(io, 7, tune);
        auto port = server.transport->Listen("127.0.0.1", 0);
        ASSERT_TRUE(port.ok());
        client.transport->Connect(100, "127.0.0.1", *port);
        RunUntil(io,
                 [&]() { return server.connected.size() == 1 && client.connected.size() == 1; });
        RunFor(io, 2.0); // 20 intervals, 5 timeouts
        EXPECT_TRUE(server.closed.empty()) << (keyed ? "keyed: " : "plain: ") << server.Log();
        EXPECT_TRUE(client.closed.empty()) << client.Log();
        EXPECT_TRUE(server.received.empty());
        EXPECT_TRUE(client.received.empty());
        ASSERT_TRUE(
            client.transport->Send(100, 3, std::make_shared<const std::string>("late"), 4).ok());
        RunUntil(io, [&]() { return server.received.size() == 1; });
        EXPECT_EQ(server.received[0].payload, "late");
        EXPECT_EQ(server.connected.size(), 1u) << "reconnected in between";
    }
}

TEST(ProcessTransport, TheHeartbeatTypeIsTheTransportsOwn)
{
    asio::io_context io;
    Node server(io, 100, [](TcpTransportOptions&) {});
    EXPECT_EQ(server.transport
                  ->Send(5, FrameHeader::kHeartbeatType, std::make_shared<const std::string>(""), 0)
                  .code(),
              hilo::StatusCode::kInvalidArgument);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    // A heartbeat carries nothing: one with a payload closes its connection.
    auto s = PlainPeer(io, *port, 5);
    asio::write(*s, asio::buffer(Framed(FrameHeader::kHeartbeatType, "") +
                                 Framed(FrameHeader::kHeartbeatType, "x")));
    RunUntil(io, [&]() { return Closed(server, 5); });
    EXPECT_TRUE(server.received.empty());
    EXPECT_NE(server.Log().find("malformed heartbeat"), std::string::npos) << server.Log();
}

} // namespace
} // namespace hilosim
