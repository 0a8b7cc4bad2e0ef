// The fixture of the tests that drive TcpTransport over real loopback TCP in one process, on one
// event loop (process-transport-test.cc, process-transport-deadline-test.cc): a node that records
// what its transport reports, loop runners, and raw sockets that speak the stream by hand.
#ifndef HILOSIM_TESTS_PROCESS_TRANSPORT_UTIL_H
#define HILOSIM_TESTS_PROCESS_TRANSPORT_UTIL_H

#include "sim/drivers/process/tcp-transport.h"

#include "tests/sim/frame-bytes.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hilosim::test
{

/// A shared key of 32 bytes (as a key file holds it, decoded).
inline const char* const kTransportKey = "0123456789abcdef-the-run-key-of-32+";

/// One message as the transport delivered it.
struct Received
{
    uint32_t peer;
    uint32_t type;
    std::string payload;
    uint64_t wire_bytes;
    uint64_t sequence;
};

/// The lines joined, each ending in a newline.
inline std::string
Joined(const std::vector<std::string>& lines)
{
    std::string all;
    for (const std::string& l : lines)
        all += l + "\n";
    return all;
}

/// A TcpTransport with node id `id` (redials from 10 ms, options tuned by `tune`) and everything
/// it reports: messages, connections, closes, log lines and failed proofs of the key.
struct TransportNode
{
    std::vector<Received> received;
    std::vector<uint32_t> connected;
    std::vector<std::pair<uint32_t, bool>> closed; // (peer, error)
    std::vector<std::string> log;
    std::vector<std::string> auth_failures;
    std::unique_ptr<TcpTransport> transport;

    TransportNode(boost::asio::io_context& io, uint32_t id, uint64_t max_payload = (1ull << 31) - 1)
      : TransportNode(io, id,
                      [max_payload](TcpTransportOptions& o) { o.max_payload_bytes = max_payload; })
    {
    }

    TransportNode(boost::asio::io_context& io, uint32_t id,
                  const std::function<void(TcpTransportOptions&)>& tune)
    {
        TcpTransportOptions o;
        o.local_id = id;
        o.name = "node " + std::to_string(id);
        o.backoff_initial_s = 0.01;
        tune(o);
        TcpTransportCallbacks cb;
        cb.authentication_failed = [this](uint32_t, const std::string& why)
        { auth_failures.push_back(why); };
        cb.message = [this](uint32_t peer, const RoleMessage& m) {
            received.push_back({peer, m.type, std::string(m.payload), m.wire_bytes, m.sequence});
        };
        cb.connected = [this](uint32_t peer) { connected.push_back(peer); };
        cb.closed = [this](uint32_t peer, bool error, const std::string&)
        { closed.emplace_back(peer, error); };
        cb.log = [this](const std::string& line) { log.push_back(line); };
        transport = std::make_unique<TcpTransport>(io, o, cb);
    }

    std::string Log() const { return Joined(log); }
};

/// Runs the loop until `done` or a time-out (then the test fails).
inline void
RunUntil(boost::asio::io_context& io, const std::function<bool()>& done, double timeout_s = 10)
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

/// Runs the loop for `seconds`.
inline void
RunFor(boost::asio::io_context& io, double seconds)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until)
    {
        io.run_for(std::chrono::milliseconds(5));
        io.restart();
    }
}

inline std::shared_ptr<const std::string>
Bytes(const std::string& s)
{
    return std::make_shared<const std::string>(s);
}

/// Runs `read` (blocking reads of the raw socket `s`) on a thread while the loop runs; a read
/// that does not return in time is ended by shutting the socket down (and the test fails).
inline void
WhileLooping(boost::asio::io_context& io, boost::asio::ip::tcp::socket& s,
             const std::function<void()>& read)
{
    std::atomic<bool> done{false};
    std::thread reader(
        [&]()
        {
            read();
            done = true;
        });
    RunUntil(io, [&]() { return done.load(); });
    if (!done)
        ::shutdown(s.native_handle(), SHUT_RDWR);
    reader.join();
}

/// Connects `s` to `port` on loopback and says the plain hello of `id` (a keyless listener).
inline void
SayHello(boost::asio::ip::tcp::socket& s, uint16_t port, uint32_t id)
{
    s.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    boost::asio::write(s, boost::asio::buffer(HelloFrame(id)));
}

} // namespace hilosim::test

#endif // HILOSIM_TESTS_PROCESS_TRANSPORT_UTIL_H
