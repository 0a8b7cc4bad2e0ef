// The record layer of keyed process connections (sim/drivers/process/record-cipher.h and
// record-stream.h): golden bytes, round trips, and every way a record can be tampered with --
// a flipped byte in its length, ciphertext or tag, a replayed, reordered, dropped or injected
// record, a stream cut inside a record, another key, the other direction's key.
#include "sim/drivers/process/record-cipher.h"
#include "sim/drivers/process/record-stream.h"

#include "hilo/core/coding.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace hilosim
{
namespace
{

namespace asio = boost::asio;

std::string
Hex(const std::string& bytes)
{
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes)
    {
        out += kHex[b >> 4];
        out += kHex[b & 15];
    }
    return out;
}

std::string
CountingKey(int first)
{
    std::string key;
    for (int i = 0; i < 32; ++i)
        key += static_cast<char>(first + i);
    return key;
}

SessionKeys
Keys(const std::string& shared, uint32_t dialler = 7, uint32_t listener = 100,
     const std::string& nd = std::string(16, 'd'), const std::string& nl = std::string(16, 'l'))
{
    auto keys = DeriveSessionKeys(shared, dialler, listener, nd, nl);
    EXPECT_TRUE(keys.ok()) << keys.status().ToString();
    return keys.ok() ? *keys : SessionKeys{};
}

/// `pieces` sealed one record each, as one stream; `ends[i]` is where record i ends.
std::string
SealAll(RecordSealer& sealer, const std::vector<std::string>& pieces,
        std::vector<size_t>* ends = nullptr)
{
    std::string stream;
    for (const std::string& p : pieces)
    {
        EXPECT_TRUE(sealer.Seal(p, &stream).ok());
        if (ends)
            ends->push_back(stream.size());
    }
    return stream;
}

/// Opens the records of `stream` in order, appending their plaintext to `*out`, until the first
/// failure (returned) or the end.
hilo::Status
OpenAll(RecordOpener& opener, std::string_view stream, std::string* out)
{
    while (!stream.empty())
    {
        if (stream.size() < RecordFormat::kHeaderBytes)
            return hilo::Status::Corruption("truncated header");
        const std::string_view header = stream.substr(0, RecordFormat::kHeaderBytes);
        auto body = opener.BodyBytes(header);
        if (!body.ok())
            return body.status();
        if (stream.size() - RecordFormat::kHeaderBytes < *body)
            return hilo::Status::Corruption("truncated body");
        std::string plain;
        HILO_RETURN_IF_ERROR(
            opener.Open(header, stream.substr(RecordFormat::kHeaderBytes, *body), &plain));
        out->append(plain);
        stream.remove_prefix(RecordFormat::kHeaderBytes + *body);
    }
    return hilo::Status::Ok();
}

// Bytes computed independently (Python: hmac/hashlib HKDF and cryptography's ChaCha20Poly1305)
// from the spec in record-cipher.h; a change to the format fails here.
TEST(ProcessRecordCipher, GoldenBytes)
{
    const SessionKeys keys = Keys(CountingKey(0));
    EXPECT_EQ(Hex(keys.dialler_to_listener),
              "c8ec37221ecd78d044f1b3d22c2fe402e1e189d6926ce3511a855d45b06ce988");
    EXPECT_EQ(Hex(keys.listener_to_dialler),
              "dc03398acaff909a427d675953e6032cb802072995c517dbb5885dd609142e23");
    RecordSealer sealer(CountingKey(0));
    std::string stream;
    ASSERT_TRUE(sealer.Seal("hilo", &stream).ok());
    EXPECT_EQ(Hex(stream), "0400000070d12e5ee222e4e8495efe92e87d11d33ccfdf10");
    stream.clear();
    ASSERT_TRUE(sealer.Seal("hilo", &stream).ok());
    EXPECT_EQ(Hex(stream), "04000000f73e9f305bc0227a11fec306143dcd9a4e07f976") << "record 1";
}

TEST(ProcessRecordCipher, RecordsRoundTripInOrder)
{
    const SessionKeys keys = Keys(CountingKey(1));
    RecordSealer sealer(keys.dialler_to_listener);
    RecordOpener opener(keys.dialler_to_listener);
    std::vector<std::string> pieces = {"x", std::string(RecordFormat::kMaxRecordBytes, '\0'),
                                       "frame header and payload", std::string(1000, 'z')};
    const std::string stream = SealAll(sealer, pieces);
    std::string plain;
    ASSERT_TRUE(OpenAll(opener, stream, &plain).ok());
    std::string expected;
    for (const auto& p : pieces)
        expected += p;
    EXPECT_EQ(plain, expected);
    EXPECT_EQ(sealer.records(), 4u);
    EXPECT_EQ(opener.records(), 4u);
    EXPECT_EQ(stream.size(), expected.size() + 4 * RecordFormat::kOverheadBytes);
    // The zero padding does not travel as zeros.
    EXPECT_EQ(stream.find(std::string(64, '\0')), std::string::npos);
    // Sizes a record cannot have.
    std::string out;
    EXPECT_FALSE(sealer.Seal("", &out).ok());
    EXPECT_FALSE(sealer.Seal(std::string(RecordFormat::kMaxRecordBytes + 1, 'a'), &out).ok());
    EXPECT_TRUE(out.empty());
}

// A flipped byte anywhere in a record fails it; the failure is final, and the failing record's
// bytes are not given out.
TEST(ProcessRecordCipher, AFlippedByteInLengthCiphertextOrTagFails)
{
    const SessionKeys keys = Keys(CountingKey(2));
    RecordSealer sealer(keys.dialler_to_listener);
    std::vector<size_t> ends;
    const std::string stream =
        SealAll(sealer, {"first record", std::string(100, 'p'), "third"}, &ends);
    const size_t second = ends[0]; // where record 1 starts
    struct Flip
    {
        const char* what;
        size_t at;
        unsigned char mask;
    };
    const Flip flips[] = {
        {"length, still in range", second, 0x01},
        {"length, out of range", second + 2, 0x40},
        {"ciphertext", second + RecordFormat::kHeaderBytes + 50, 0x80},
        {"tag", ends[1] - 1, 0x01},
    };
    for (const Flip& f : flips)
    {
        SCOPED_TRACE(f.what);
        std::string bad = stream;
        bad[f.at] ^= static_cast<char>(f.mask);
        RecordOpener opener(keys.dialler_to_listener);
        std::string plain;
        const hilo::Status s = OpenAll(opener, bad, &plain);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.code(), hilo::StatusCode::kCorruption);
        EXPECT_EQ(plain, "first record") << "only the record before the flip is given out";
        EXPECT_EQ(opener.records(), 1u);
        // Final: not even the untouched record 1 (which would open in its place) opens now.
        std::string retry;
        const std::string_view original(stream.data() + ends[0], ends[1] - ends[0]);
        EXPECT_FALSE(opener.Open(original.substr(0, 4), original.substr(4), &retry).ok());
        EXPECT_TRUE(retry.empty());
        EXPECT_FALSE(opener.error().ok());
    }
    // The unmodified stream opens.
    RecordOpener opener(keys.dialler_to_listener);
    std::string plain;
    EXPECT_TRUE(OpenAll(opener, stream, &plain).ok());
}

// Records are numbered: one replayed, reordered, dropped or injected fails its tag.
TEST(ProcessRecordCipher, ReplayedReorderedDroppedOrInjectedRecordsFail)
{
    const SessionKeys keys = Keys(CountingKey(3));
    RecordSealer sealer(keys.dialler_to_listener);
    std::vector<size_t> ends;
    const std::string stream = SealAll(sealer, {"r0", "r1", "r2"}, &ends);
    const std::string r0 = stream.substr(0, ends[0]);
    const std::string r1 = stream.substr(ends[0], ends[1] - ends[0]);
    const std::string r2 = stream.substr(ends[1], ends[2] - ends[1]);
    // Sealed under the same key, but as record 0 of another stream.
    RecordSealer other(keys.dialler_to_listener);
    std::string injected;
    ASSERT_TRUE(other.Seal("r1", &injected).ok());
    struct Case
    {
        const char* what;
        std::string stream;
        const char* delivered;
    };
    const Case cases[] = {
        {"replayed", r0 + r1 + r1 + r2, "r0r1"},
        {"reordered", r0 + r2 + r1, "r0"},
        {"dropped", r0 + r2, "r0"},
        {"injected", r0 + injected + r1, "r0"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.what);
        RecordOpener opener(keys.dialler_to_listener);
        std::string plain;
        const hilo::Status s = OpenAll(opener, c.stream, &plain);
        EXPECT_FALSE(s.ok());
        EXPECT_NE(s.message().find("fails its authentication tag"), std::string::npos)
            << s.message();
        EXPECT_EQ(plain, c.delivered);
    }
    RecordOpener opener(keys.dialler_to_listener);
    std::string plain;
    EXPECT_TRUE(OpenAll(opener, r0 + r1 + r2, &plain).ok());
    EXPECT_EQ(plain, "r0r1r2");
}

// A record cut short is refused, whatever its length says.
TEST(ProcessRecordCipher, ATruncatedRecordFails)
{
    const SessionKeys keys = Keys(CountingKey(4));
    RecordSealer sealer(keys.dialler_to_listener);
    std::string record;
    ASSERT_TRUE(sealer.Seal(std::string(200, 'q'), &record).ok());
    for (size_t cut : {size_t{1}, size_t{16}, size_t{199}})
    {
        RecordOpener opener(keys.dialler_to_listener);
        std::string plain = "stale";
        const std::string_view body(record.data() + 4, record.size() - 4 - cut);
        const hilo::Status s = opener.Open(record.substr(0, 4), body, &plain);
        EXPECT_EQ(s.code(), hilo::StatusCode::kCorruption) << cut;
        EXPECT_TRUE(plain.empty());
    }
}

// Keys come from the shared key, both nonces and both ids, one per direction: another shared key,
// another nonce or id, or the other direction's key opens nothing.
TEST(ProcessRecordCipher, KeysDifferPerDirectionConnectionAndSharedKey)
{
    const std::string shared = CountingKey(5);
    const SessionKeys keys = Keys(shared);
    EXPECT_EQ(keys.dialler_to_listener.size(), RecordFormat::kKeyBytes);
    EXPECT_EQ(keys.listener_to_dialler.size(), RecordFormat::kKeyBytes);
    EXPECT_NE(keys.dialler_to_listener, keys.listener_to_dialler);
    const SessionKeys again = Keys(shared);
    EXPECT_EQ(again.dialler_to_listener, keys.dialler_to_listener) << "deterministic";
    RecordSealer sealer(keys.dialler_to_listener);
    std::string record;
    ASSERT_TRUE(sealer.Seal("to the listener", &record).ok());
    const std::vector<std::pair<const char*, std::string>> wrong = {
        {"the other direction (a reflected record)", keys.listener_to_dialler},
        {"another shared key", Keys(CountingKey(6)).dialler_to_listener},
        {"another dialler nonce", Keys(shared, 7, 100, std::string(16, 'D')).dialler_to_listener},
        {"another listener nonce",
         Keys(shared, 7, 100, std::string(16, 'd'), std::string(16, 'L')).dialler_to_listener},
        {"another dialler id", Keys(shared, 8, 100).dialler_to_listener},
        {"ids swapped", Keys(shared, 100, 7).dialler_to_listener},
    };
    for (const auto& [what, key] : wrong)
    {
        SCOPED_TRACE(what);
        EXPECT_NE(key, keys.dialler_to_listener);
        RecordOpener opener(key);
        std::string plain;
        EXPECT_FALSE(OpenAll(opener, record, &plain).ok());
        EXPECT_TRUE(plain.empty());
    }
    RecordOpener right(keys.dialler_to_listener);
    std::string plain;
    EXPECT_TRUE(OpenAll(right, record, &plain).ok());
    EXPECT_EQ(plain, "to the listener");
}

/// Two connected loopback sockets.
struct SocketPair
{
    asio::io_context io;
    asio::ip::tcp::socket a{io};
    asio::ip::tcp::socket b{io};
    SocketPair()
    {
        asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
        a.connect(acceptor.local_endpoint());
        acceptor.accept(b);
    }
    void RunUntil(const std::function<bool()>& done)
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!done() && std::chrono::steady_clock::now() < deadline)
        {
            io.run_for(std::chrono::milliseconds(5));
            io.restart();
        }
        ASSERT_TRUE(done()) << "timed out";
    }
};

struct ReadResult
{
    bool done{false};
    boost::system::error_code ec;
    size_t bytes{0};
};

RecordStream::Handler
Into(ReadResult* r)
{
    return [r](const boost::system::error_code& ec, size_t n)
    {
        r->done = true;
        r->ec = ec;
        r->bytes = n;
    };
}

// Over a socket: a write is cut into records of at most 64 KiB, and reads of any size get the
// bytes back across record boundaries.
TEST(ProcessRecordStream, WritesAreSealedInRecordsAndReadsCrossThem)
{
    SocketPair pair;
    const SessionKeys keys = Keys(CountingKey(7));
    RecordStream dialler(pair.a, keys.dialler_to_listener, keys.listener_to_dialler);
    RecordStream listener(pair.b, keys.listener_to_dialler, keys.dialler_to_listener);
    std::string big(1 << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>(i * 7 + i / 251);
    const std::string head = "a 40-byte frame header, more or less...";
    ReadResult wrote;
    dialler.AsyncWrite({asio::buffer(head), asio::buffer(big), asio::buffer("tail", 4)},
                       Into(&wrote));
    std::string got(head.size() + big.size() + 4, '\0');
    size_t at = 0;
    for (size_t piece : {size_t{40}, size_t{1}, size_t{70000}, got.size() - 70041})
    {
        ReadResult read;
        listener.AsyncRead(asio::buffer(&got[at], piece), Into(&read));
        pair.RunUntil([&]() { return read.done; });
        ASSERT_FALSE(read.ec) << read.ec.message();
        ASSERT_EQ(read.bytes, piece);
        at += piece;
    }
    pair.RunUntil([&]() { return wrote.done; });
    EXPECT_FALSE(wrote.ec);
    EXPECT_EQ(wrote.bytes, got.size());
    EXPECT_EQ(got, head + big + "tail");
    EXPECT_EQ(dialler.records_sealed(),
              (got.size() + RecordFormat::kMaxRecordBytes - 1) / RecordFormat::kMaxRecordBytes);
    EXPECT_EQ(listener.records_opened(), dialler.records_sealed());
    // The other direction has its own key and count.
    ReadResult back, heard;
    std::string answer(5, '\0');
    listener.AsyncWrite({asio::buffer("hello", 5)}, Into(&back));
    dialler.AsyncRead(asio::buffer(answer), Into(&heard));
    pair.RunUntil([&]() { return heard.done; });
    EXPECT_FALSE(heard.ec);
    EXPECT_EQ(answer, "hello");
}

// A stream that ends inside a record fails the read as truncated (an error), one that ends
// between records as end of file; a flipped byte fails the read and gives none of its bytes.
TEST(ProcessRecordStream, TruncatedAndModifiedStreamsFailTheRead)
{
    const SessionKeys keys = Keys(CountingKey(8));
    RecordSealer sealer(keys.dialler_to_listener);
    std::string records;
    ASSERT_TRUE(sealer.Seal("whole", &records).ok());
    const size_t first = records.size();
    ASSERT_TRUE(sealer.Seal("cut short", &records).ok());
    struct Case
    {
        const char* what;
        std::string bytes;
        bool error; // bad_message (else eof)
        const char* why;
    };
    std::string flipped = records;
    flipped[first + 6] ^= 0x20;
    const Case cases[] = {
        {"cut inside the body", records.substr(0, records.size() - 3), true, "truncated"},
        {"cut inside the length", records.substr(0, first + 2), true, "truncated"},
        {"cut between records", records.substr(0, first), false, ""},
        {"a flipped byte", flipped, true, "fails its authentication tag"},
    };
    for (const Case& c : cases)
    {
        SCOPED_TRACE(c.what);
        SocketPair pair;
        RecordStream listener(pair.b, keys.listener_to_dialler, keys.dialler_to_listener);
        asio::write(pair.a, asio::buffer(c.bytes));
        pair.a.close();
        std::string got(5, '\0');
        ReadResult read;
        listener.AsyncRead(asio::buffer(got), Into(&read));
        pair.RunUntil([&]() { return read.done; });
        ASSERT_FALSE(read.ec);
        EXPECT_EQ(got, "whole");
        std::string more(9, '\0');
        ReadResult next;
        listener.AsyncRead(asio::buffer(more), Into(&next));
        pair.RunUntil([&]() { return next.done; });
        EXPECT_EQ(next.bytes, 0u);
        if (c.error)
        {
            EXPECT_EQ(next.ec,
                      boost::system::errc::make_error_code(boost::system::errc::bad_message))
                << next.ec.message();
            EXPECT_NE(listener.error().message().find(c.why), std::string::npos)
                << listener.error().message();
        }
        else
        {
            EXPECT_EQ(next.ec, asio::error::eof) << next.ec.message();
            EXPECT_TRUE(listener.error().ok());
        }
        EXPECT_EQ(more, std::string(9, '\0')) << "bytes of a failed record were given out";
    }
}

} // namespace
} // namespace hilosim
