// TcpTransport over real loopback TCP, in one process on one event loop: framed messages arrive
// whole and in order with their padding read off the stream; a peer connecting later gets what was
// queued for it; a dropped connection is dialled again; garbage, truncated frames and frames over
// the limit close only the offending connection. Also the event log round trip.
#include "sim/cli/catalog.h"
#include "sim/drivers/process/arm-gather.h"
#include "sim/drivers/process/event-log.h"
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/record-cipher.h"
#include "sim/drivers/process/tcp-transport.h"
#include "sim/net/frame-header.h"
#include "sim/run/arm-summary.h"
#include "sim/scenario/scenario-loader.h"

#include "tests/sim/process-transport-util.h"
#include "tests/sim/tcp-proxy.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

namespace hilosim
{
namespace
{

namespace asio = boost::asio;

using test::Bytes;
using test::Framed;
using test::FrameHeaderBytes;
using test::HelloFrame;
using test::Joined;
using test::RunFor;
using test::RunUntil;
using test::SayHello;
using test::WhileLooping;
using Node = test::TransportNode;
const char* const kKey = test::kTransportKey;

void
KeyedOptions(TcpTransportOptions& o)
{
    o.key = kKey;
}

/// Messages of every shape from a client to a server and back, both tuned by `tune`.
void
ExchangeWholeMessages(const std::function<void(TcpTransportOptions&)>& tune)
{
    asio::io_context io;
    Node server(io, 100, tune);
    Node client(io, 7, tune);
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

TEST(ProcessTransport, MessagesArriveWholeInOrderWithTheirPaddingRead)
{
    ExchangeWholeMessages([](TcpTransportOptions&) {});
}

// With a key every byte after the hello is sealed in records of at most 64 KiB: a message of many
// records, its padding and an empty payload arrive as they do without one.
TEST(ProcessTransport, SealedMessagesArriveWholeInOrderWithTheirPaddingRead)
{
    ExchangeWholeMessages(KeyedOptions);
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

TEST(ProcessTransport, CorruptStreamsCloseOnlyTheirConnection)
{
    asio::io_context io;
    Node server(io, 100, /*max_payload=*/1 << 20);
    Node good(io, 1);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    good.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io, [&]() { return server.connected.size() == 1; });

    RawSend(io, *port, std::string(64, '\x5a'));                    // garbage: bad magic
    RawSend(io, *port, FrameHeaderBytes(5, 10, 10) + "0123456789"); // no hello first
    RawSend(io, *port,
            HelloFrame(9) + FrameHeaderBytes(5, 1000, 1000) + "truncated"); // ends mid-frame
    RawSend(io, *port,
            HelloFrame(10) + FrameHeaderBytes(5, 2 << 20, 2 << 20) + "big"); // over the limit
    RawSend(io, *port, HelloFrame(11) + FrameHeaderBytes(5, 10, 4));         // wire < payload
    std::string flipped = Framed(5, "0123456789");
    flipped.back() ^= 0x01;
    RawSend(io, *port, HelloFrame(12) + flipped); // payload bit flip
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

TEST(ProcessTransport, PeersWithTheSameKeyAuthenticateAndExchangeMessages)
{
    asio::io_context io;
    auto keyed = [](TcpTransportOptions& o) { o.key = kKey; };
    Node server(io, 100, keyed);
    Node client(io, 7, keyed);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    ASSERT_TRUE(client.transport->Send(100, 1, Bytes("queued"), 6).ok());
    client.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io, [&]() { return server.received.size() == 1 && client.connected.size() == 1; });
    EXPECT_EQ(server.connected, std::vector<uint32_t>{7});
    ASSERT_EQ(server.received.size(), 1u);
    EXPECT_EQ(server.received[0].payload, "queued");
    ASSERT_TRUE(server.transport->Send(7, 2, Bytes("back"), 4).ok());
    RunUntil(io, [&]() { return client.received.size() == 1; });
    ASSERT_EQ(client.received.size(), 1u);
    EXPECT_EQ(client.received[0].payload, "back");
    EXPECT_TRUE(client.auth_failures.empty());
}

// Under another key the dialler's proof fails and the listener closes the connection without
// proving itself. To the dialler that listener failed to prove the key: it may be a process that
// took the port while the real peer restarts, so the dialler reports it and dials again with its
// backoff (doubling: 10, 20, 40, ... ms), and is never admitted.
TEST(ProcessTransport, AWrongKeyIsRefusedOnBothSidesAndDialledAgainWithBackoff)
{
    asio::io_context io;
    Node server(io, 100, [](TcpTransportOptions& o) { o.key = kKey; });
    Node intruder(io, 7,
                  [](TcpTransportOptions& o) { o.key = "another key, just as long as ours"; });
    Node plain(io, 8, [](TcpTransportOptions&) {}); // no key at all
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    ASSERT_TRUE(intruder.transport->Send(100, 1, Bytes("let me in"), 9).ok());
    intruder.transport->Connect(100, "127.0.0.1", *port);
    plain.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io,
             [&]()
             {
                 const std::string all = Joined(server.log);
                 return !intruder.auth_failures.empty() &&
                        all.find("before its hello: authentication failed: the peer claiming "
                                 "id 7") != std::string::npos &&
                        all.find("malformed hello") != std::string::npos;
             });
    ASSERT_FALSE(intruder.auth_failures.empty());
    EXPECT_NE(intruder.auth_failures[0].find("authentication failed"), std::string::npos);
    // Redials happen, ever more slowly: within 200 ms at most 1 + log2(200 / 10) of them.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < until)
    {
        io.run_for(std::chrono::milliseconds(5));
        io.restart();
    }
    EXPECT_GE(intruder.auth_failures.size(), 2u);
    EXPECT_LE(intruder.auth_failures.size(), 6u) << "the backoff did not grow";
    EXPECT_TRUE(server.connected.empty());
    EXPECT_TRUE(server.received.empty());
    EXPECT_TRUE(intruder.connected.empty());
    EXPECT_FALSE(intruder.transport->IsConnected(100));
}

/// Reads one whole frame (header and payload, no padding) from `s`.
std::pair<FrameHeader, std::string>
ReadFrame(asio::ip::tcp::socket& s)
{
    std::string head(FrameHeader::kBytes, '\0');
    asio::read(s, asio::buffer(&head[0], head.size()));
    auto h = FrameHeader::Parse(head, 1 << 20);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    std::string payload(h->payload_bytes, '\0');
    if (!payload.empty())
        asio::read(s, asio::buffer(&payload[0], payload.size()));
    return {*h, payload};
}

/// Bytes read from `s` until the peer closes it.
size_t
BytesUntilClosed(asio::ip::tcp::socket& s)
{
    size_t total = 0;
    char buf[4096];
    boost::system::error_code ec;
    while (!ec)
        total += s.read_some(asio::buffer(buf), ec);
    return total;
}

/// Connects `s` to `port` and sends the dialler's hello as `id` with `nonce`; returns the
/// listener's challenge.
std::string
HelloAndChallenge(asio::io_context& io, asio::ip::tcp::socket& s, uint16_t port, uint32_t id,
                  const std::string& nonce)
{
    s.connect({asio::ip::make_address("127.0.0.1"), port});
    asio::write(s, asio::buffer(Framed(FrameHeader::kHelloType, test::PeerIdBytes(id) + nonce)));
    std::pair<FrameHeader, std::string> challenge;
    WhileLooping(io, s, [&]() { challenge = ReadFrame(s); });
    EXPECT_EQ(challenge.first.type, FrameHeader::kHelloType);
    return challenge.second;
}

// The exchange of peer-auth.h, spoken by hand: the listener answers the hello with its id and
// nonce and no MAC; a dialler that fails its proof gets nothing more (no MAC to guess the key
// from offline) and nothing it sent is delivered; one that proves the key gets the listener's
// proof, and from then on both directions are records sealed under the session keys.
TEST(ProcessTransport, TheListenerProvesTheKeyOnlyAfterTheDiallerHas)
{
    asio::io_context io;
    Node server(io, 100, KeyedOptions);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    const std::string nonce(PeerAuth::kNonceBytes, 'n');

    asio::ip::tcp::socket guesser(io);
    std::string challenge = HelloAndChallenge(io, guesser, *port, 5, nonce);
    ASSERT_EQ(challenge.size(), 4u + PeerAuth::kNonceBytes) << "the challenge carries a MAC";
    std::string server_nonce = challenge.substr(4);
    const std::string wrong = PeerAuth("not the run's key, though as long")
                                  .Mac(PeerAuth::Side::kDialler, 5, 100, nonce, server_nonce);
    asio::write(guesser,
                asio::buffer(Framed(FrameHeader::kHelloType, wrong) + Framed(1, "payload")));
    size_t after = 1;
    WhileLooping(io, guesser, [&]() { after = BytesUntilClosed(guesser); });
    EXPECT_EQ(after, 0u) << "the listener sent something after a failed proof";
    EXPECT_NE(Joined(server.log).find("authentication failed: the peer claiming id 5"),
              std::string::npos);
    EXPECT_TRUE(server.connected.empty());
    EXPECT_TRUE(server.received.empty());

    asio::ip::tcp::socket dialler(io);
    challenge = HelloAndChallenge(io, dialler, *port, 6, nonce);
    ASSERT_EQ(challenge.size(), 4u + PeerAuth::kNonceBytes);
    server_nonce = challenge.substr(4);
    const PeerAuth auth(kKey);
    asio::write(dialler,
                asio::buffer(Framed(FrameHeader::kHelloType, auth.Mac(PeerAuth::Side::kDialler, 6,
                                                                      100, nonce, server_nonce))));
    std::pair<FrameHeader, std::string> proof;
    WhileLooping(io, dialler, [&]() { proof = ReadFrame(dialler); });
    EXPECT_EQ(proof.first.type, FrameHeader::kHelloType);
    EXPECT_TRUE(auth.Check(proof.second, PeerAuth::Side::kListener, 6, 100, nonce, server_nonce));
    RunUntil(io, [&]() { return server.connected.size() == 1; });

    auto keys = DeriveSessionKeys(kKey, 6, 100, nonce, server_nonce);
    ASSERT_TRUE(keys.ok());
    RecordSealer sealer(keys->dialler_to_listener);
    std::string records;
    ASSERT_TRUE(sealer.Seal(Framed(1, "sealed by hand"), &records).ok());
    asio::write(dialler, asio::buffer(records));
    RunUntil(io, [&]() { return server.received.size() == 1; });
    ASSERT_EQ(server.received.size(), 1u) << Joined(server.log);
    EXPECT_EQ(server.received[0].payload, "sealed by hand");

    ASSERT_TRUE(server.transport->Send(6, 2, Bytes("back"), 4).ok());
    std::string header(RecordFormat::kHeaderBytes, '\0');
    std::string body;
    WhileLooping(io, dialler,
                 [&]()
                 {
                     asio::read(dialler, asio::buffer(&header[0], header.size()));
                     body.resize(RecordFormat::kOverheadBytes - RecordFormat::kHeaderBytes +
                                 FrameHeader::kBytes + 4);
                     asio::read(dialler, asio::buffer(&body[0], body.size()));
                 });
    RecordOpener opener(keys->listener_to_dialler);
    std::string plain;
    ASSERT_TRUE(opener.Open(header, body, &plain).ok()) << opener.error().ToString();
    EXPECT_EQ(plain, Framed(2, "back"));
}

const std::string kFirst = "the first message, untouched";
const std::string kSecond = "the second message: 0 tokens";

/// A client (id 7) sends kFirst then kSecond to a server (id 100), both with options tuned by
/// `tune`, through a proxy that applies `patch`. Runs until the server holds two messages or
/// closed the connection, then a little longer for anything that would still come.
struct ProxiedRun
{
    asio::io_context io;
    std::unique_ptr<Node> server;
    std::unique_ptr<Node> client;
    std::unique_ptr<test::TcpProxy> proxy;

    void Run(const std::function<void(TcpTransportOptions&)>& tune,
             std::map<uint64_t, uint8_t> patch)
    {
        server = std::make_unique<Node>(io, 100, tune);
        client = std::make_unique<Node>(io, 7,
                                        [&](TcpTransportOptions& o)
                                        {
                                            tune(o);
                                            o.redial = false;
                                        });
        auto port = server->transport->Listen("127.0.0.1", 0);
        ASSERT_TRUE(port.ok());
        proxy = std::make_unique<test::TcpProxy>(io, *port, std::move(patch));
        ASSERT_TRUE(client->transport->Send(100, 1, Bytes(kFirst), kFirst.size()).ok());
        ASSERT_TRUE(client->transport->Send(100, 2, Bytes(kSecond), kSecond.size()).ok());
        client->transport->Connect(100, "127.0.0.1", proxy->port());
        RunUntil(io, [&]() { return server->received.size() == 2 || !server->closed.empty(); });
        RunFor(io, 0.3);
    }
};

// The attack of issue 37 without a key: a proxy that knows nothing rewrites a byte of the second
// message and both its CRCs; the server takes the rewritten message as sent. (What the record
// layer is for; the keyed test below runs the same proxy.)
TEST(ProcessTransport, WithoutAKeyAProxyCanRewriteAFrameAndItsCRCs)
{
    // The client's hello, then the first message's frame, then the second's.
    const uint64_t second_at = (FrameHeader::kBytes + 4) + (FrameHeader::kBytes + kFirst.size());
    ProxiedRun run;
    run.Run([](TcpTransportOptions&) {},
            test::RewriteFrame(second_at, kSecond.size(), 20, '0' ^ '9'));
    const Node& s = *run.server;
    ASSERT_EQ(s.received.size(), 2u) << Joined(s.log);
    EXPECT_EQ(s.received[0].payload, kFirst);
    EXPECT_EQ(s.received[1].payload, "the second message: 9 tokens");
}

// The same proxy against keyed peers: it relays the hello untouched, then rewrites the second
// message's record (a byte of its payload and both CRCs). The record fails its tag: the server
// closes that connection, logs why, and the rewritten message is never delivered.
TEST(ProcessTransport, AProxyWithoutTheKeyThatRewritesAFrameGetsItsConnectionClosed)
{
    // The dialler's hello and proof, then the first message's record, then the second's, whose
    // plaintext (the frame) starts after its 4 length bytes.
    const uint64_t hello = (FrameHeader::kBytes + PeerAuth::kHelloBytes) +
                           (FrameHeader::kBytes + PeerAuth::kProofBytes);
    const uint64_t first_record =
        RecordFormat::kOverheadBytes + FrameHeader::kBytes + kFirst.size();
    const uint64_t second_at = hello + first_record + RecordFormat::kHeaderBytes;
    ProxiedRun run;
    run.Run(KeyedOptions, test::RewriteFrame(second_at, kSecond.size(), 20, '0' ^ '9'));
    const Node& s = *run.server;
    ASSERT_EQ(s.connected, std::vector<uint32_t>{7}) << "the hello went through untouched";
    ASSERT_EQ(s.received.size(), 1u) << "the rewritten message was delivered";
    EXPECT_EQ(s.received[0].payload, kFirst);
    ASSERT_FALSE(s.closed.empty());
    EXPECT_EQ(s.closed[0], std::make_pair(7u, true));
    EXPECT_NE(Joined(s.log).find("record 1 fails its authentication tag"), std::string::npos)
        << Joined(s.log);
}

// The dialler's hello names an id; a listener that was told which ids exist refuses the rest.
// Without a key anyone can claim an id, so a second connection from a connected id is refused and
// the live one kept.
TEST(ProcessTransport, UnknownAndDuplicateIdsAreRefusedAndTheLivePeerIsKept)
{
    asio::io_context io;
    Node server(io, 100,
                [](TcpTransportOptions& o) { o.accept_peer = [](uint32_t id) { return id < 4; }; });
    auto keyless = [](TcpTransportOptions&) {};
    Node first(io, 3, keyless);
    Node second(io, 3, keyless);
    Node stranger(io, 9, keyless);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    first.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io, [&]() { return server.connected.size() == 1; });
    second.transport->Connect(100, "127.0.0.1", *port);
    stranger.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io,
             [&]()
             {
                 const std::string all = Joined(server.log);
                 return all.find("refused a second connection from peer 3") != std::string::npos &&
                        all.find("peer id 9 is not one this node accepts") != std::string::npos;
             });
    EXPECT_EQ(server.connected, std::vector<uint32_t>{3});
    ASSERT_TRUE(first.transport->Send(100, 1, Bytes("first"), 5).ok());
    RunUntil(io, [&]() { return !server.received.empty(); });
    ASSERT_FALSE(server.received.empty());
    EXPECT_EQ(server.received[0].payload, "first");
    EXPECT_TRUE(server.closed.empty()) << "the live connection was dropped";
    EXPECT_TRUE(first.closed.empty());
}

// With a key, a new connection that proves it for a live id is that peer restarted before its old
// connection was seen to end: it replaces the old one at once (rather than waiting up to 30 s for
// keepalive to notice the dead one).
TEST(ProcessTransport, AnAuthenticatedHelloForALiveIdReplacesTheOldConnection)
{
    asio::io_context io;
    Node server(io, 100, [](TcpTransportOptions& o) { o.key = kKey; });
    auto keyed = [](TcpTransportOptions& o)
    {
        o.key = kKey;
        o.redial = false;
    };
    Node first(io, 3, keyed);
    Node second(io, 3, keyed);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    first.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io, [&]() { return server.connected.size() == 1; });
    second.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(io, [&]() { return server.connected.size() == 2 && !first.closed.empty(); });
    EXPECT_EQ(server.connected, (std::vector<uint32_t>{3, 3}));
    ASSERT_EQ(server.closed.size(), 1u);
    EXPECT_EQ(server.closed[0], std::make_pair(3u, true));
    EXPECT_NE(Joined(server.log).find("replaced by a new authenticated connection from peer 3"),
              std::string::npos);
    ASSERT_TRUE(second.transport->Send(100, 1, Bytes("second"), 6).ok());
    RunUntil(io, [&]() { return !server.received.empty(); });
    ASSERT_FALSE(server.received.empty());
    EXPECT_EQ(server.received[0].payload, "second");
}

// A connection that never says hello, or says more than a hello can hold, costs the listener
// nothing for long; neither do connections past the cap.
TEST(ProcessTransport, SilentOversizeAndExcessConnectionsAreDropped)
{
    asio::io_context io;
    Node server(io, 100,
                [](TcpTransportOptions& o)
                {
                    o.key = kKey;
                    o.hello_timeout_s = 0.2;
                    o.max_connections = 2;
                });
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    const asio::ip::tcp::endpoint at(asio::ip::make_address("127.0.0.1"), *port);
    asio::ip::tcp::socket silent(io), big(io), third(io);
    silent.connect(at);
    // A hello-type frame claiming a megabyte: refused on its header, before any byte of it.
    big.connect(at);
    asio::write(big, asio::buffer(FrameHeaderBytes(FrameHeader::kHelloType, 1 << 20, 1 << 20)));
    RunUntil(io,
             [&]() { return Joined(server.log).find("exceeds the limit") != std::string::npos; });
    silent.non_blocking(true);
    RunUntil(io, [&]() { return Joined(server.log).find("no hello within") != std::string::npos; });
    if (HasFatalFailure())
        return; // the read below would wait for ever
    EXPECT_EQ(server.transport->pending_hellos(), 0u);
    char byte;
    boost::system::error_code ec;
    silent.non_blocking(false);
    silent.read_some(asio::buffer(&byte, 1), ec);
    EXPECT_EQ(ec, asio::error::eof) << ec.message();

    // The cap: two silent connections are held (until their deadline); a third takes the place
    // of the oldest, so that idle connections cannot keep a real peer out.
    asio::ip::tcp::socket a(io), b(io);
    a.connect(at);
    RunUntil(io, [&]() { return server.transport->pending_hellos() == 1; });
    b.connect(at);
    RunUntil(io, [&]() { return server.transport->pending_hellos() == 2; });
    third.connect(at);
    RunUntil(io, [&]()
             { return Joined(server.log).find("dropped for a new one") != std::string::npos; });
    EXPECT_EQ(server.transport->pending_hellos(), 2u);
    a.non_blocking(false);
    a.read_some(asio::buffer(&byte, 1), ec);
    EXPECT_EQ(ec, asio::error::eof) << "the oldest was not the one dropped: " << ec.message();
    EXPECT_TRUE(server.connected.empty());
}

// A flood of idle connections from one source cannot keep a peer that says its hello out: past
// the per-source cap each new connection replaces that source's oldest.
TEST(ProcessTransport, AFloodOfIdleConnectionsDoesNotKeepAPeerOut)
{
    asio::io_context io;
    Node server(io, 100,
                [](TcpTransportOptions& o)
                {
                    o.key = kKey;
                    o.max_pending_per_source = 8;
                });
    Node worker(io, 3, [](TcpTransportOptions& o) { o.key = kKey; });
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    const asio::ip::tcp::endpoint at(asio::ip::make_address("127.0.0.1"), *port);
    std::vector<std::unique_ptr<asio::ip::tcp::socket>> flood;
    for (int i = 0; i < 300; ++i)
    {
        flood.push_back(std::make_unique<asio::ip::tcp::socket>(io));
        flood.back()->connect(at);
        io.poll();
        io.restart();
    }
    RunUntil(io, [&]() { return server.transport->pending_hellos() == 8; });
    // Well before the idle ones reach their 5 s hello deadline.
    worker.transport->Connect(100, "127.0.0.1", *port);
    RunUntil(
        io, [&]() { return server.connected.size() == 1; }, /*timeout_s=*/3);
    EXPECT_EQ(server.connected, std::vector<uint32_t>{3});
    EXPECT_LE(server.transport->pending_hellos(), 8u);
}

/// The highest descriptor number this process has open.
int
HighestOpenDescriptor()
{
    int highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
        highest = std::max(highest, std::atoi(entry.path().filename().c_str()));
    return highest;
}

// Out of descriptors, accept() fails while the connection waits in the backlog: the listener
// waits (doubling the wait) instead of trying again at once, and accepts once descriptors are
// free again. A listener that re-armed at once would fail thousands of times here.
TEST(ProcessTransport, OutOfDescriptorsTheListenerBacksOffAndRecovers)
{
    asio::io_context io;
    Node server(io, 100,
                [](TcpTransportOptions& o)
                {
                    o.accept_backoff_initial_s = 0.05;
                    o.accept_backoff_max_s = 0.2;
                });
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    asio::ip::tcp::socket client(io);
    client.open(asio::ip::tcp::v4());
    rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
    rlimit low = old;
    low.rlim_cur = static_cast<rlim_t>(HighestOpenDescriptor() + 1);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    std::vector<int> fillers; // every descriptor still free: none is left to accept with
    for (int fd = dup(0); fd >= 0; fd = dup(0))
        fillers.push_back(fd);
    client.connect({asio::ip::make_address("127.0.0.1"), *port});
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < until)
    {
        io.run_for(std::chrono::milliseconds(5));
        io.restart();
    }
    const uint64_t failures = server.transport->accept_failures();
    for (int fd : fillers)
        close(fd);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    EXPECT_GE(failures, 1u);
    EXPECT_LE(failures, 10u) << "accept() was retried without a pause";
    RunUntil(io, [&]() { return server.transport->pending_hellos() == 1; });
    EXPECT_NE(Joined(server.log).find("trying again in"), std::string::npos) << Joined(server.log);
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

// A learner restored from its checkpoint reports the publish the checkpoint holds: logged when the
// first learner was killed before logging it (between writing the checkpoint and the log line),
// not again when the log has it; and whether the version's eval is logged.
TEST(ProcessEventLog, ARestoredPublishIsLoggedOnceAndItsEvalLooked)
{
    const std::string path =
        (std::filesystem::temp_directory_path() / "hilo-event-log-restored.events").string();
    std::filesystem::remove(path);
    PublishEvent p;
    p.version = 1;
    p.published_s = 0.5;
    p.kept_per_matrix = {3};
    {
        auto w = EventLogWriter::Open(path);
        ASSERT_TRUE(w.ok());
        (*w)->Process("learner", 0, 1);
        (*w)->Publish(p);
        EvalEvent e;
        e.version = 1;
        (*w)->Eval(e);
    }
    auto w = EventLogWriter::Open(path); // the restored learner's
    ASSERT_TRUE(w.ok());
    (*w)->Process("learner", 0, 2);
    p.version = 2; // checkpointed, then killed before the log line
    p.published_s = 1.25;
    auto evaluated = (*w)->Restored(p);
    ASSERT_TRUE(evaluated.ok()) << evaluated.status().ToString();
    EXPECT_FALSE(*evaluated);
    evaluated = (*w)->Restored(p); // a second restart at the same version
    ASSERT_TRUE(evaluated.ok());
    EXPECT_FALSE(*evaluated);
    EvalEvent e;
    e.version = 2;
    (*w)->Eval(e);
    evaluated = (*w)->Restored(p);
    ASSERT_TRUE(evaluated.ok());
    EXPECT_TRUE(*evaluated);
    p.version = 1; // killed after logging: nothing written again
    evaluated = (*w)->Restored(p);
    ASSERT_TRUE(evaluated.ok());
    EXPECT_TRUE(*evaluated);
    EventRecord r;
    ASSERT_TRUE(ReadEventLog(path, &r).ok());
    ASSERT_EQ(r.publishes.size(), 2u);
    EXPECT_EQ(r.publishes[0].version, 1u);
    EXPECT_EQ(r.publishes[1].version, 2u);
    EXPECT_EQ(r.publishes[1].published_s, 1.25);
    EXPECT_EQ(r.publishes[1].kept_per_matrix, std::vector<int64_t>{3});

    std::FILE* f = std::fopen(path.c_str(), "a");
    std::fputs("publish 3 x\n", f);
    std::fclose(f);
    p.version = 3;
    EXPECT_EQ((*w)->Restored(p).status().code(), hilo::StatusCode::kCorruption);
    std::filesystem::remove(path);
}

// versions_lost of an emulation is measured from the workers' own logs: a version a live worker
// neither applied nor skipped through a snapshot counts, a dead worker's do not.
TEST(ProcessGather, VersionsLostAreMeasuredFromTheWorkersLogs)
{
    const std::string tiny = std::string(HILO_SOURCE_DIR) + "/tests/scripts/tiny.textproto";
    auto loaded = LoadScenarioFile(tiny, {}, CurrentCatalog());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const ResolvedScenario& sc = loaded->resolved;
    ASSERT_EQ(sc.workload.steps, 3u);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hilo-gather-test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto open = [&](const std::string& name)
    {
        auto w = EventLogWriter::Open((dir / name).string());
        EXPECT_TRUE(w.ok());
        return std::move(*w);
    };
    auto apply = [](uint32_t worker, uint64_t version)
    {
        ApplyEvent a;
        a.worker = worker;
        a.version = version;
        a.ready_s = static_cast<double>(version);
        return a;
    };
    {
        auto learner = open("learner.events");
        for (uint64_t v = 1; v <= 3; ++v)
        {
            PublishEvent p;
            p.version = v;
            p.published_s = static_cast<double>(v);
            learner->Publish(p);
        }
        auto w0 = open("worker-0.events");
        for (uint64_t v = 1; v <= 3; ++v)
            w0->Apply(apply(0, v));
        auto w1 = open("worker-1.events");
        w1->Apply(apply(1, 1));
        w1->Apply(apply(1, 3)); // version 2 never reached worker 1
    }
    auto gathered = GatherArm(sc, 0, dir.string(), 1.0, {true, true});
    ASSERT_TRUE(gathered.ok()) << gathered.status().ToString();
    EXPECT_EQ(Summarize(*gathered).versions_lost, 1u);
    EXPECT_EQ(Summarize(*gathered).workers_alive, 2u);
    EXPECT_EQ(gathered->worker_end[1].version, 3u);

    // Worker 1 dead at the end: its gap is not a loss.
    gathered = GatherArm(sc, 0, dir.string(), 1.0, {true, false});
    ASSERT_TRUE(gathered.ok());
    EXPECT_EQ(Summarize(*gathered).versions_lost, 0u);
    EXPECT_EQ(Summarize(*gathered).workers_alive, 1u);

    // A catch-up that restored the snapshot of version 2 skipped it: nothing is lost.
    {
        auto w1 = open("worker-1.events");
        CatchUpEvent c;
        c.worker = 1;
        c.from_version = 1;
        c.snapshot_version = 2;
        c.to_version = 2;
        w1->CatchUp(c);
    }
    gathered = GatherArm(sc, 0, dir.string(), 1.0, {true, true});
    ASSERT_TRUE(gathered.ok());
    EXPECT_EQ(Summarize(*gathered).versions_lost, 0u);
    ASSERT_EQ(gathered->catch_ups.size(), 1u);
    EXPECT_EQ(gathered->catch_ups[0].snapshot_version, 2);
    std::filesystem::remove_all(dir);
}

/// This process's resident set size, from /proc/self/status (VmRSS).
uint64_t
RssBytes()
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
    {
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stoull(line.substr(6)) * 1024;
    }
    ADD_FAILURE() << "no VmRSS in /proc/self/status";
    return 0;
}

// A header announcing a large message costs the receiver only the bytes that arrived: the
// payload's buffer grows with them (here 256 MiB announced and 1 KiB sent: under 1 MiB of RSS,
// where a buffer of the announced size would be 256 MiB of zeros).
TEST(ProcessTransport, AnAnnouncedMessageCostsOnlyTheBytesThatArrived)
{
    asio::io_context io;
    Node server(io, 100);
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    asio::ip::tcp::socket s(io);
    SayHello(s, *port, 5);
    RunUntil(io, [&]() { return server.connected.size() == 1; });
    const uint64_t before = RssBytes();
    asio::write(s,
                asio::buffer(FrameHeaderBytes(1, 256u << 20, 256u << 20) + std::string(1024, 'x')));
    RunFor(io, 0.3);
    const uint64_t after = RssBytes();
    EXPECT_LT(after > before ? after - before : 0, 1u << 20) << before << " -> " << after;
    EXPECT_TRUE(server.received.empty());
    EXPECT_TRUE(server.closed.empty()) << "the message is still arriving";
}

// Each message type has its own inbound limit (a node knows what each type can hold): a header
// announcing more than its type's closes the connection on the header.
TEST(ProcessTransport, EachMessageTypeHasItsOwnInboundLimit)
{
    asio::io_context io;
    Node server(io, 100,
                [](TcpTransportOptions& o)
                { o.max_payload_for = [](uint32_t type) { return type == 1 ? 100u : 0u; }; });
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    asio::ip::tcp::socket s(io);
    SayHello(s, *port, 5);
    asio::write(s, asio::buffer(Framed(1, std::string(100, 'a')) + Framed(3, "") +
                                FrameHeaderBytes(2, 1, 1) + "b"));
    RunUntil(io, [&]() { return !server.closed.empty(); });
    ASSERT_EQ(server.received.size(), 2u); // the 100 bytes of type 1, and type 3 with none
    EXPECT_EQ(server.received[0].payload.size(), 100u);
    EXPECT_EQ(server.closed[0], std::make_pair(5u, true));
    EXPECT_NE(Joined(server.log)
                  .find("a message of type 2 announces 1 bytes; this node takes at "
                        "most 0 of that type"),
              std::string::npos)
        << Joined(server.log);
}

// A peer that does not read (or reads slowly) cannot make its sender queue without bound: past
// the cap on the bytes queued to it, it is closed; the sender's other peers are untouched.
TEST(ProcessTransport, ASlowReaderIsClosedAtItsSendQueueCap)
{
    asio::io_context io;
    Node server(io, 100, [](TcpTransportOptions& o) { o.max_queued_bytes = 4u << 20; });
    auto port = server.transport->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    asio::ip::tcp::socket s(io);
    SayHello(s, *port, 5);
    RunUntil(io, [&]() { return server.connected.size() == 1; });
    const auto payload = Bytes(std::string(1u << 20, 'p'));
    int sent = 0;
    for (; sent < 400 && server.closed.empty(); ++sent)
    {
        ASSERT_TRUE(server.transport->Send(5, 1, payload, payload->size()).ok());
        io.run_for(std::chrono::milliseconds(1));
        io.restart();
    }
    RunUntil(io, [&]() { return !server.closed.empty(); });
    EXPECT_EQ(server.closed[0], std::make_pair(5u, true));
    EXPECT_NE(Joined(server.log).find("send queue past 4194304 bytes"), std::string::npos)
        << Joined(server.log);
    EXPECT_LT(sent, 400) << "never closed";
}

} // namespace
} // namespace hilosim
