// An on-path attacker for the process transport's tests: a TCP proxy on 127.0.0.1 that knows no
// key, relays every connection both ways and rewrites chosen bytes of the first connection's
// client-to-server stream as they pass; and the masks that rewrite a frame's payload byte and both
// its CRC-32Cs without knowing the frame (message-frame.h).
#ifndef HILOSIM_TESTS_SIM_TCP_PROXY_H
#define HILOSIM_TESTS_SIM_TCP_PROXY_H

#include "sim/net/frame-header.h"

#include "hilo/core/crc32c.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hilosim::test
{

/// Relays connections to 127.0.0.1:`server_port`; XORs the masks of `patch` (stream offset ->
/// mask) into the first connection's client-to-server bytes. Runs on `io`'s thread.
class TcpProxy
{
  public:
    TcpProxy(boost::asio::io_context& io, uint16_t server_port, std::map<uint64_t, uint8_t> patch)
      : m_io(io)
      , m_acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0})
      , m_serverPort(server_port)
      , m_patch(std::move(patch))
    {
        Accept();
    }
    uint16_t port() const { return m_acceptor.local_endpoint().port(); }
    /// Connections relayed so far.
    size_t connections() const { return m_pairs.size(); }

  private:
    struct Pair
    {
        explicit Pair(boost::asio::io_context& io)
          : down(io)
          , up(io)
        {
        }
        boost::asio::ip::tcp::socket down; // the client's connection
        boost::asio::ip::tcp::socket up;   // to the server
        std::vector<char> to_server = std::vector<char>(1 << 16);
        std::vector<char> to_client = std::vector<char>(1 << 16);
        uint64_t forwarded{0}; // client-to-server bytes so far
        bool patched{false};
    };

    void Accept()
    {
        auto pair = std::make_shared<Pair>(m_io);
        m_acceptor.async_accept(
            pair->down,
            [this, pair](const boost::system::error_code& ec)
            {
                if (ec)
                    return;
                boost::system::error_code e;
                pair->up.connect({boost::asio::ip::make_address("127.0.0.1"), m_serverPort}, e);
                pair->patched = m_pairs.empty();
                m_pairs.push_back(pair);
                Relay(pair, /*to_server=*/true);
                Relay(pair, /*to_server=*/false);
                Accept();
            });
    }

    void Relay(const std::shared_ptr<Pair>& p, bool to_server)
    {
        auto& from = to_server ? p->down : p->up;
        auto& buf = to_server ? p->to_server : p->to_client;
        from.async_read_some(
            boost::asio::buffer(buf),
            [this, p, to_server](const boost::system::error_code& ec, size_t n)
            {
                auto& to = to_server ? p->up : p->down;
                auto& buf = to_server ? p->to_server : p->to_client;
                if (ec)
                {
                    boost::system::error_code ignored;
                    to.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
                    return;
                }
                if (to_server && p->patched)
                {
                    for (const auto& [at, mask] : m_patch)
                    {
                        if (at >= p->forwarded && at < p->forwarded + n)
                            buf[at - p->forwarded] ^= static_cast<char>(mask);
                    }
                }
                if (to_server)
                    p->forwarded += n;
                boost::asio::async_write(
                    to, boost::asio::buffer(buf.data(), n),
                    [this, p, to_server](const boost::system::error_code& e, size_t)
                    {
                        if (!e)
                            Relay(p, to_server);
                    });
            });
    }

    boost::asio::io_context& m_io;
    boost::asio::ip::tcp::acceptor m_acceptor;
    uint16_t m_serverPort;
    std::map<uint64_t, uint8_t> m_patch;
    std::vector<std::shared_ptr<Pair>> m_pairs;
};

/// The masks that add `delta` (XOR) to byte `j` of the payload of the frame at stream offset
/// `frame_at` (a frame of `payload_bytes` real bytes) and make its two CRCs match again. CRC-32C
/// is affine, so this needs none of the frame's bytes, and under a stream cipher (ChaCha20) the
/// same masks do the same to the plaintext without the key: the attack only a MAC stops.
inline std::map<uint64_t, uint8_t>
RewriteFrame(uint64_t frame_at, size_t payload_bytes, size_t j, uint8_t delta)
{
    std::string flip(payload_bytes, '\0');
    flip[j] = static_cast<char>(delta);
    const std::string zeros(payload_bytes, '\0');
    const uint32_t payload_crc =
        hilo::Crc32c(flip.data(), flip.size()) ^ hilo::Crc32c(zeros.data(), zeros.size());
    std::string head(36, '\0');
    for (int i = 0; i < 4; ++i)
        head[32 + i] = static_cast<char>(payload_crc >> (8 * i));
    const std::string head_zeros(36, '\0');
    const uint32_t header_crc =
        hilo::Crc32c(head.data(), head.size()) ^ hilo::Crc32c(head_zeros.data(), 36);
    std::map<uint64_t, uint8_t> patch;
    patch[frame_at + FrameHeader::kBytes + j] = delta;
    for (int i = 0; i < 4; ++i)
    {
        patch[frame_at + 32 + i] = static_cast<uint8_t>(payload_crc >> (8 * i));
        patch[frame_at + 36 + i] = static_cast<uint8_t>(header_crc >> (8 * i));
    }
    return patch;
}

} // namespace hilosim::test

#endif // HILOSIM_TESTS_SIM_TCP_PROXY_H
