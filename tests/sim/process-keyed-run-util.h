// A learner and its workers started by hand as `hilo-node` processes on loopback, as across
// machines, and a raw peer that proves the run's key to that learner: shared by the tests of real
// nodes (process-emulation-test.cc) and of what a flood costs a keyed learner
// (process-flood-rss-test.cc).
#ifndef HILOSIM_TESTS_PROCESS_KEYED_RUN_UTIL_H
#define HILOSIM_TESTS_PROCESS_KEYED_RUN_UTIL_H

#include "sim/drivers/process/child-process.h"
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/record-cipher.h"
#include "sim/net/frame-header.h"
#include "sim/roles/peer-ids.h"

#include "tests/sim/frame-bytes.h"
#include "tests/sim/process-test-util.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace hilosim::test
{

/// A run key as `openssl rand -hex 32` writes it (64 hex digits: 32 bytes).
inline const std::string kRunKeyHex =
    "5f1c0a9e3b7d42681e0f6a2c9d8b7e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d";

/// Writes `key` to the file `name` in `dir`, of mode 0600 as a key file must be; its path.
inline std::string
WriteKeyFile(const std::filesystem::path& dir, const std::string& name, const std::string& key)
{
    const std::string path = (dir / name).string();
    {
        std::ofstream f(path);
        f << key << "\n";
    }
    std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write);
    return path;
}

/// The learner and workers of arm hilo-spar of `box`'s scenario, each a `hilo-node` started by
/// hand: the learner listens on a free loopback port, the workers dial it; every node's event
/// log and stderr go to the sandbox (learner.events, worker-I.stderr, ...).
struct NodeRun
{
    const ProcessSandbox& box;
    std::unique_ptr<ChildProcess> learner;
    std::vector<std::unique_ptr<ChildProcess>> workers;
    uint16_t port{0};                // the learner's
    std::vector<std::string> extra;  // appended to every node's arguments (--key-file F)
    std::string stall_timeout{"60"}; // seconds

    explicit NodeRun(const ProcessSandbox& b)
      : box(b)
    {
    }

    /// The command line of node `index` of `role`.
    std::vector<std::string> Args(const std::string& role, int index) const
    {
        const std::string node = std::string(HILO_BINARY_DIR) + "/sim/hilo-node";
        std::vector<std::string> a{node,
                                   role,
                                   "--scenario",
                                   box.scenario,
                                   "--arm",
                                   "hilo-spar",
                                   "--index",
                                   std::to_string(index),
                                   "--out",
                                   box.dir.string(),
                                   "--stall-timeout",
                                   stall_timeout};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }

    /// Starts the learner, `extra_args` appended to its command line, and waits (30 s at most)
    /// for the port it listens on.
    void StartLearner(std::vector<std::string> extra_args = {})
    {
        auto args = Args("learner", 0);
        const std::string port_file = (box.dir / "learner.port").string();
        args.insert(args.end(), {"--listen", "127.0.0.1:0", "--port-file", port_file});
        args.insert(args.end(), extra_args.begin(), extra_args.end());
        auto c = ChildProcess::Start(args, (box.dir / "learner.stderr").string(), "learner");
        ASSERT_TRUE(c.ok()) << c.status().ToString();
        learner = std::move(*c);
        for (int i = 0; i < 600 && !std::filesystem::exists(port_file); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ASSERT_TRUE(std::filesystem::exists(port_file)) << learner->StderrTail(20);
        port = static_cast<uint16_t>(std::stoi(ReadFile(port_file)));
    }

    /// Starts worker `w`, dialling the learner at `port`; null (and the test fails) when it
    /// cannot be started.
    std::unique_ptr<ChildProcess> StartWorker(int w) const
    {
        auto args = Args("worker", w);
        args.insert(args.end(), {"--connect", "127.0.0.1:" + std::to_string(port)});
        auto c = ChildProcess::Start(
            args, (box.dir / ("worker-" + std::to_string(w) + ".stderr")).string(),
            "worker " + std::to_string(w));
        EXPECT_TRUE(c.ok()) << c.status().ToString();
        return c.ok() ? std::move(*c) : nullptr;
    }

    /// The learner's exit code once it ends (-1 after `timeout_s`).
    int WaitLearner(double timeout_s)
    {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
        while (!learner->Poll() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return learner->exited() ? learner->exit_code() : -1;
    }

    /// Lines of the learner's event log starting with `prefix`.
    int EventLines(const std::string& prefix) const
    {
        return CountLines(box.dir / "learner.events", prefix);
    }
};

/// Reads from `s` until the peer closes it (true) or `timeout_s` passes (false).
inline bool
ReadUntilClosed(boost::asio::ip::tcp::socket& s, double timeout_s)
{
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    char buf[65536];
    while (std::chrono::steady_clock::now() < deadline)
    {
        pollfd p{s.native_handle(), POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        if (recv(s.native_handle(), buf, sizeof(buf), 0) <= 0)
            return true;
    }
    return false;
}

/// Reads one whole hello-type frame's payload from `s` (empty, and the test fails, when the
/// header does not parse).
inline std::string
ReadHelloFrame(boost::asio::ip::tcp::socket& s)
{
    std::string head(FrameHeader::kBytes, '\0');
    boost::asio::read(s, boost::asio::buffer(&head[0], head.size()));
    auto h = FrameHeader::Parse(head, 1024);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (!h.ok())
        return "";
    std::string payload(h->payload_bytes, '\0');
    boost::asio::read(s, boost::asio::buffer(&payload[0], payload.size()));
    return payload;
}

/// Connects `s` to the learner on loopback `port` and completes the hello exchange (peer-auth.h)
/// as worker `id` with `key` (bytes); `*sealer` then seals what this side sends
/// (record-cipher.h).
inline void
Authenticate(boost::asio::ip::tcp::socket& s, uint16_t port, uint32_t id, const std::string& key,
             std::unique_ptr<RecordSealer>* sealer)
{
    s.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    const std::string nonce(PeerAuth::kNonceBytes, 'r');
    boost::asio::write(
        s, boost::asio::buffer(Framed(FrameHeader::kHelloType, PeerIdBytes(id) + nonce)));
    const std::string challenge = ReadHelloFrame(s);
    ASSERT_EQ(challenge.size(), PeerAuth::kChallengeBytes);
    const std::string learner_nonce = challenge.substr(4, PeerAuth::kNonceBytes);
    const PeerAuth auth(key);
    const std::string proof =
        auth.Mac(PeerAuth::Side::kDialler, id, kLearnerPeerId, nonce, learner_nonce);
    boost::asio::write(s, boost::asio::buffer(Framed(FrameHeader::kHelloType, proof)));
    ASSERT_TRUE(auth.Check(ReadHelloFrame(s), PeerAuth::Side::kListener, id, kLearnerPeerId, nonce,
                           learner_nonce));
    auto keys = DeriveSessionKeys(key, id, kLearnerPeerId, nonce, learner_nonce);
    ASSERT_TRUE(keys.ok());
    *sealer = std::make_unique<RecordSealer>(keys->dialler_to_listener);
}

/// As above, returning the sealer: null (and the test fails) when the exchange fails.
inline std::unique_ptr<RecordSealer>
Authenticate(boost::asio::ip::tcp::socket& s, uint16_t port, uint32_t id, const std::string& key)
{
    std::unique_ptr<RecordSealer> sealer;
    Authenticate(s, port, id, key, &sealer);
    return sealer;
}

/// `bytes` sealed in one record.
inline std::string
Sealed(RecordSealer& sealer, const std::string& bytes)
{
    std::string record;
    EXPECT_TRUE(sealer.Seal(bytes, &record).ok());
    return record;
}

} // namespace hilosim::test

#endif // HILOSIM_TESTS_PROCESS_KEYED_RUN_UTIL_H
