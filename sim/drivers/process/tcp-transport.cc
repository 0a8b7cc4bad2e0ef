#include "sim/drivers/process/tcp-transport.h"

#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/record-cipher.h"
#include "sim/drivers/process/record-stream.h"
#include "sim/net/frame-header.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <iostream>

namespace hilosim
{

namespace asio = boost::asio;
using asio::ip::tcp;

namespace
{

constexpr uint32_t kUnknownPeer = 0xFFFFFFFFu;
constexpr size_t kChunkBytes = 1 << 16; // padding is written and read in pieces of this size
// A payload's buffer grows by at most this much ahead of the bytes that arrived: a header that
// announces a large message costs nothing until its bytes come.
constexpr size_t kPayloadStepBytes = 256 << 10;
// The largest frame before the hello exchange is done: the largest hello-type message.
constexpr uint64_t kMaxHelloPayload = PeerAuth::kMaxHelloFrameBytes;

std::chrono::steady_clock::duration
Seconds(double s)
{
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(s));
}

// Keepalive probes and the user timeout: a peer that vanished (a host down, a link cut) without
// closing ends the connection in bounded time, as the simulator's heartbeats do.
void
SetKeepalive(tcp::socket& socket, const TcpTransportOptions& o)
{
    const int fd = socket.native_handle();
    const int on = 1;
    const int idle = std::max(1, static_cast<int>(o.keepalive_idle_s));
    const int interval = std::max(1, static_cast<int>(o.keepalive_interval_s));
    const int probes = std::max(1, o.keepalive_probes);
    const unsigned int user_ms = static_cast<unsigned int>(std::max(0.0, o.user_timeout_s) * 1000);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof(user_ms));
}

std::string
PeerName(uint32_t peer)
{
    return peer == kUnknownPeer ? std::string("(hello pending)") : std::to_string(peer);
}

} // namespace

// One TCP connection: frames out (header, payload, zero padding) and frames in.
class TcpTransport::Connection : public std::enable_shared_from_this<Connection>
{
  public:
    /// Where the hello exchange stands (peer-auth.h).
    enum class Hello
    {
        kAwaitHello,         // accepted: waiting for the dialler's hello
        kAwaitProof,         // accepted, key: challenge sent, waiting for the dialler's proof
        kAwaitChallenge,     // dialled, key: hello sent, waiting for the listener's challenge
        kAwaitListenerProof, // dialled, key: proof sent, waiting for the listener's proof
        kDone,               // messages flow (sealed, with a key)
    };

    Connection(TcpTransport* owner, tcp::socket socket, uint32_t peer, bool accepted, Hello hello)
      : m_owner(owner)
      , m_socket(std::move(socket))
      , m_peer(peer)
      , m_accepted(accepted)
      , m_hello(hello)
      , m_zeros(owner->m_zeros)
      , m_deadline(m_socket.get_executor())
    {
        boost::system::error_code ec;
        m_socket.set_option(tcp::no_delay(true), ec);
        SetKeepalive(m_socket, owner->m_options);
        auto remote = m_socket.remote_endpoint(ec);
        m_remote = ec ? std::string("?")
                      : remote.address().to_string() + ":" + std::to_string(remote.port());
        m_source = ec ? std::string("?") : remote.address().to_string();
    }

    uint32_t peer() const { return m_peer; }
    /// The kernel socket; -1 once closed (tcp-info-sampler.h reads its TCP_INFO).
    int fd() { return m_socket.is_open() ? m_socket.native_handle() : -1; }
    void set_peer(uint32_t peer) { m_peer = peer; }
    bool accepted() const { return m_accepted; }
    const std::string& remote() const { return m_remote; }
    /// The remote address without its port: where a connection comes from, for admission.
    const std::string& source() const { return m_source; }
    void Detach() { m_owner = nullptr; }
    Hello hello() const { return m_hello; }
    void set_hello(Hello hello)
    {
        m_hello = hello;
        if (hello == Hello::kDone)
        {
            m_deadline.cancel();
        }
    }
    // The exchange's nonces (peer-auth.h), as this side sees them.
    std::string local_nonce;
    std::string remote_nonce;

    /// From now on every byte each way goes through sealed records (record-stream.h): frames
    /// enqueued from here on are sealed with `send_key`, and every read after the current frame
    /// opens records with `receive_key`.
    void StartSealing(const std::string& send_key, const std::string& receive_key)
    {
        m_stream = std::make_unique<RecordStream>(m_socket, send_key, receive_key);
    }

    /// Starts reading; a connection whose hello exchange is not done within `hello_timeout_s`
    /// is closed.
    void Start(double hello_timeout_s)
    {
        if (m_hello != Hello::kDone)
        {
            auto self = shared_from_this();
            m_deadline.expires_after(Seconds(hello_timeout_s));
            m_deadline.async_wait(
                [self, hello_timeout_s](const boost::system::error_code& ec)
                {
                    if (!ec && self->m_hello != Hello::kDone)
                    {
                        self->Close(/*error=*/true,
                                    "no hello within " + std::to_string(hello_timeout_s) + " s");
                    }
                });
        }
        ReadHeader();
    }

    void Enqueue(uint32_t type, std::shared_ptr<const std::string> payload, uint64_t wire_bytes,
                 int64_t sent_at_ns)
    {
        FrameHeader h;
        h.type = type;
        h.payload_bytes = payload->size();
        h.wire_bytes = wire_bytes;
        h.sent_at_steps = sent_at_ns;
        h.payload_crc = hilo::Crc32c(payload->data(), payload->size());
        if (m_overflowed)
        {
            return; // being closed
        }
        const uint64_t cap = m_owner ? m_owner->m_options.max_queued_bytes : 0;
        if (cap > 0 && m_queued + payload->size() > cap)
        {
            // Closed from the loop, not from inside the sender's call (a role's handler).
            m_overflowed = true;
            auto self = shared_from_this();
            asio::post(m_socket.get_executor(),
                       [self, cap]()
                       {
                           self->Close(/*error=*/true,
                                       "send queue past " + std::to_string(cap) +
                                           " bytes (the peer reads too slowly or asks too much)");
                       });
            return;
        }
        Out out;
        h.AppendTo(&out.header);
        out.sealed = m_stream != nullptr;
        out.payload = std::move(payload);
        out.padding = wire_bytes - out.payload->size();
        m_queued += out.payload->size();
        m_out.push_back(std::move(out));
        WriteNext();
    }

    /// Closes the socket; `why` is reported once, through the owner.
    void Close(bool error, const std::string& why)
    {
        if (m_closed)
        {
            return;
        }
        m_closed = true;
        m_deadline.cancel();
        boost::system::error_code ec;
        m_socket.shutdown(tcp::socket::shutdown_both, ec);
        m_socket.close(ec);
        m_out.clear();
        m_queued = 0;
        if (m_owner)
        {
            m_owner->OnClosed(shared_from_this(), error, why);
        }
    }

  private:
    struct Out
    {
        std::string header;
        std::shared_ptr<const std::string> payload;
        uint64_t padding{0};
        bool sealed{false}; // enqueued after the hello: goes through m_stream
    };

    using IoHandler = std::function<void(const boost::system::error_code&, size_t)>;

    /// Writes `buffers` as they are (the hello's frames) or sealed.
    void Write(bool sealed, std::vector<asio::const_buffer> buffers, IoHandler handler)
    {
        if (sealed)
        {
            m_stream->AsyncWrite(std::move(buffers), std::move(handler));
        }
        else
        {
            asio::async_write(m_socket, buffers, std::move(handler));
        }
    }

    /// Fills `buffer` from the socket, or from the records once sealing started.
    void Read(asio::mutable_buffer buffer, IoHandler handler)
    {
        if (m_stream)
        {
            m_stream->AsyncRead(buffer, std::move(handler));
        }
        else
        {
            asio::async_read(m_socket, buffer, std::move(handler));
        }
    }

    void WriteNext()
    {
        if (m_writing || m_out.empty() || m_closed)
        {
            return;
        }
        m_writing = true;
        Out& out = m_out.front();
        std::vector<asio::const_buffer> buffers{asio::buffer(out.header),
                                                asio::buffer(*out.payload)};
        auto self = shared_from_this();
        Write(out.sealed, std::move(buffers),
              [self](const boost::system::error_code& ec, size_t)
              {
                  if (ec)
                  {
                      self->Fail(ec);
                      return;
                  }
                  self->WritePadding();
              });
    }

    void WritePadding()
    {
        if (m_closed)
        {
            return;
        }
        Out& out = m_out.front();
        if (out.padding == 0)
        {
            m_queued -= out.payload->size();
            m_out.pop_front();
            m_writing = false;
            WriteNext();
            return;
        }
        const size_t n = static_cast<size_t>(std::min<uint64_t>(out.padding, m_zeros->size()));
        out.padding -= n;
        auto self = shared_from_this();
        Write(out.sealed, {asio::buffer(m_zeros->data(), n)},
              [self](const boost::system::error_code& ec, size_t)
              {
                  if (ec)
                  {
                      self->Fail(ec);
                      return;
                  }
                  self->WritePadding();
              });
    }

    void ReadHeader()
    {
        auto self = shared_from_this();
        Read(asio::buffer(m_header, FrameHeader::kBytes),
             [self](const boost::system::error_code& ec, size_t n)
             {
                 if (ec)
                 {
                     self->Fail(ec, /*mid_frame=*/n > 0);
                     return;
                 }
                 self->OnHeader();
             });
    }

    void OnHeader()
    {
        if (m_closed || !m_owner)
        {
            return;
        }
        // Before the hello exchange is done a peer is nobody: it may claim a hello's bytes, no
        // more.
        const bool in_hello = m_hello != Hello::kDone;
        auto parsed =
            FrameHeader::Parse(std::string_view(m_header, FrameHeader::kBytes),
                               in_hello ? kMaxHelloPayload : m_owner->m_options.max_payload_bytes);
        if (!parsed.ok())
        {
            Close(/*error=*/true, parsed.status().message());
            return;
        }
        m_frame = *parsed;
        const bool hello = m_frame.type == FrameHeader::kHelloType;
        if (in_hello != hello)
        {
            Close(/*error=*/true, hello ? "unexpected hello" : "message before the hello");
            return;
        }
        if (hello && m_frame.wire_bytes != m_frame.payload_bytes)
        {
            Close(/*error=*/true, "malformed hello (" + std::to_string(m_frame.payload_bytes) +
                                      " payload bytes, " + std::to_string(m_frame.wire_bytes) +
                                      " wire bytes)");
            return;
        }
        const auto& limit_of = m_owner->m_options.max_payload_for;
        if (!in_hello && limit_of && m_frame.payload_bytes > limit_of(m_frame.type))
        {
            Close(/*error=*/true, "a message of type " + std::to_string(m_frame.type) +
                                      " announces " + std::to_string(m_frame.payload_bytes) +
                                      " bytes; this node takes at most " +
                                      std::to_string(limit_of(m_frame.type)) + " of that type");
            return;
        }
        m_payload.clear();
        ReadPayload();
    }

    // The payload in steps, its buffer growing with the bytes that came.
    void ReadPayload()
    {
        const size_t have = m_payload.size();
        if (have == m_frame.payload_bytes)
        {
            ReadPadding(m_frame.wire_bytes - m_frame.payload_bytes);
            return;
        }
        const size_t n =
            static_cast<size_t>(std::min<uint64_t>(kPayloadStepBytes, m_frame.payload_bytes - have));
        m_payload.resize(have + n);
        auto self = shared_from_this();
        Read(asio::buffer(&m_payload[have], n),
             [self](const boost::system::error_code& ec, size_t)
             {
                 if (ec)
                 {
                     self->Fail(ec, /*mid_frame=*/true);
                     return;
                 }
                 self->ReadPayload();
             });
    }

    void ReadPadding(uint64_t left)
    {
        if (left == 0)
        {
            Deliver();
            return;
        }
        if (m_scratch.empty())
        {
            m_scratch.resize(kChunkBytes);
        }
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left, m_scratch.size()));
        auto self = shared_from_this();
        Read(asio::buffer(m_scratch.data(), n),
             [self, left, n](const boost::system::error_code& ec, size_t)
             {
                 if (ec)
                 {
                     self->Fail(ec, /*mid_frame=*/true);
                     return;
                 }
                 self->ReadPadding(left - n);
             });
    }

    void Deliver()
    {
        if (m_closed || !m_owner)
        {
            return;
        }
        if (hilo::Crc32c(m_payload.data(), m_payload.size()) != m_frame.payload_crc)
        {
            Close(/*error=*/true, "message of type " + std::to_string(m_frame.type) + " with " +
                                      std::to_string(m_frame.payload_bytes) +
                                      " real bytes fails its CRC-32C");
            return;
        }
        if (m_frame.type == FrameHeader::kHelloType)
        {
            m_owner->OnHelloFrame(shared_from_this(), m_payload);
        }
        else
        {
            RoleMessage m;
            m.type = m_frame.type;
            m.payload = m_payload;
            m.wire_bytes = m_frame.wire_bytes;
            m.sequence = m_received++;
            m_owner->OnMessage(shared_from_this(), m);
        }
        if (!m_closed)
        {
            ReadHeader();
        }
    }

    void Fail(const boost::system::error_code& ec, bool mid_frame = false)
    {
        if (ec == asio::error::operation_aborted)
        {
            return; // our own Close
        }
        if (m_stream && !m_stream->error().ok())
        {
            Close(/*error=*/true, "sealed stream: " + m_stream->error().message());
            return;
        }
        if (ec == asio::error::eof)
        {
            Close(/*error=*/mid_frame, mid_frame ? "connection ended mid-frame (truncated message)"
                                                 : "closed by the peer");
            return;
        }
        Close(/*error=*/true, ec.message());
    }

    TcpTransport* m_owner;
    tcp::socket m_socket;
    uint32_t m_peer;
    bool m_accepted;
    Hello m_hello;
    std::shared_ptr<const std::vector<char>> m_zeros;
    asio::steady_timer m_deadline;
    std::string m_remote;
    std::string m_source;
    bool m_closed{false};
    std::unique_ptr<RecordStream> m_stream; // after a keyed hello: the sealed records

    char m_header[FrameHeader::kBytes];
    FrameHeader m_frame;
    std::string m_payload;
    std::vector<char> m_scratch;
    uint64_t m_received{0};

    std::deque<Out> m_out;
    uint64_t m_queued{0};      // real payload bytes in m_out
    bool m_overflowed{false}; // the queue passed its cap: closing
    bool m_writing{false};
};

TcpTransport::TcpTransport(asio::io_context& io, TcpTransportOptions options,
                           TcpTransportCallbacks callbacks)
  : m_io(io)
  , m_options(std::move(options))
  , m_callbacks(std::move(callbacks))
  , m_zeros(std::make_shared<const std::vector<char>>(kChunkBytes, '\0'))
{
    if (!m_options.key.empty())
    {
        m_auth = std::make_unique<PeerAuth>(m_options.key);
    }
    m_acceptBackoff = m_options.accept_backoff_initial_s;
}

TcpTransport::~TcpTransport()
{
    CloseAll();
}

void
TcpTransport::Log(const std::string& line) const
{
    const std::string text = m_options.name + ": " + line;
    if (m_callbacks.log)
    {
        m_callbacks.log(text);
    }
    else
    {
        std::cerr << text << "\n";
    }
}

int64_t
TcpTransport::NowNs() const
{
    return m_options.clock_ns ? m_options.clock_ns() : 0;
}

hilo::StatusOr<uint16_t>
TcpTransport::Listen(const std::string& host, uint16_t port)
{
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec)
    {
        return hilo::Status::InvalidArgument("bad listen address \"" + host +
                                             "\": " + ec.message());
    }
    auto acceptor = std::make_unique<tcp::acceptor>(m_io);
    const tcp::endpoint endpoint(address, port);
    acceptor->open(endpoint.protocol(), ec);
    if (!ec)
        acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
        acceptor->bind(endpoint, ec);
    if (!ec)
        acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
    {
        return hilo::Status::InvalidArgument("cannot listen on " + host + ":" +
                                             std::to_string(port) + ": " + ec.message());
    }
    const uint16_t bound = acceptor->local_endpoint().port();
    m_acceptor = std::move(acceptor);
    Accept();
    return bound;
}

void
TcpTransport::Accept()
{
    m_acceptor->async_accept(
        [this](const boost::system::error_code& ec, tcp::socket socket)
        {
            if (ec == asio::error::operation_aborted || m_closed)
            {
                return;
            }
            if (ec)
            {
                // Out of descriptors (EMFILE, ENFILE) or memory: the pending connection stays in
                // the backlog and accept() would fail again at once. Wait, doubling the wait.
                ++m_acceptFailures;
                Log("accept failed: " + ec.message() + "; trying again in " +
                    std::to_string(m_acceptBackoff) + " s");
                if (!m_acceptTimer)
                {
                    m_acceptTimer = std::make_unique<asio::steady_timer>(m_io);
                }
                m_acceptTimer->expires_after(Seconds(m_acceptBackoff));
                m_acceptBackoff = std::min(2 * m_acceptBackoff, m_options.accept_backoff_max_s);
                m_acceptTimer->async_wait(
                    [this](const boost::system::error_code& e)
                    {
                        if (!e && !m_closed)
                            Accept();
                    });
                return;
            }
            m_acceptBackoff = m_options.accept_backoff_initial_s;
            Admit(std::move(socket));
            Accept();
        });
}

void
TcpTransport::Admit(tcp::socket socket)
{
    // Members (connections past their hello) are never refused for want of room: only
    // connections still in their hello count against the caps, and when one is full the oldest
    // of them (from the same source, for the per-source cap) makes room. A flood of idle
    // connections then delays a real peer by at most its own hello exchange.
    boost::system::error_code ignored;
    auto endpoint = socket.remote_endpoint(ignored);
    const std::string source = ignored ? std::string("?") : endpoint.address().to_string();
    size_t members = 0;
    for (const auto& [peer, c] : m_connections)
    {
        members += c->accepted() ? 1 : 0;
    }
    std::vector<std::shared_ptr<Connection>> pending; // accepted, in their hello, oldest first
    size_t from_source = 0;
    for (auto it = m_admitted.begin(); it != m_admitted.end();)
    {
        auto c = it->lock();
        if (!c || m_unregistered.count(c) == 0)
        {
            it = m_admitted.erase(it);
            continue;
        }
        pending.push_back(c);
        from_source += c->source() == source ? 1 : 0;
        ++it;
    }
    if (members >= m_options.max_connections)
    {
        Log("refused a connection from " + source + ": " + std::to_string(members) +
            " members are connected (the limit)");
        socket.close(ignored);
        return;
    }
    const bool source_full = from_source >= m_options.max_pending_per_source;
    const bool all_full = pending.size() >= m_options.max_pending_hellos ||
                          members + pending.size() >= m_options.max_connections;
    if (source_full || all_full)
    {
        for (const auto& c : pending)
        {
            if (!source_full || c->source() == source)
            {
                c->Close(/*error=*/true,
                         std::string("oldest of the connections in their hello") +
                             (source_full ? " from " + source : "") + ", dropped for a new one");
                break;
            }
        }
    }
    auto c = std::make_shared<Connection>(this, std::move(socket), kUnknownPeer,
                                          /*accepted=*/true, Connection::Hello::kAwaitHello);
    m_unregistered.insert(c);
    m_admitted.push_back(c);
    c->Start(m_options.hello_timeout_s);
}

void
TcpTransport::Connect(uint32_t peer, const std::string& host, uint16_t port)
{
    Outgoing& o = m_outgoing[peer];
    o.host = host;
    o.port = port;
    o.backoff_s = m_options.backoff_initial_s;
    o.timer = std::make_unique<asio::steady_timer>(m_io);
    StartConnect(peer);
}

void
TcpTransport::Redial(uint32_t peer)
{
    auto it = m_outgoing.find(peer);
    if (m_closed || it == m_outgoing.end() || it->second.dialling || m_connections.count(peer) > 0)
    {
        return;
    }
    it->second.timer->cancel();
    StartConnect(peer);
}

void
TcpTransport::StartConnect(uint32_t peer)
{
    if (m_closed)
    {
        return;
    }
    Outgoing& o = m_outgoing.at(peer);
    o.dialling = true;
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(o.host, ec);
    if (ec)
    {
        Log("bad address \"" + o.host + "\" of peer " + PeerName(peer) + ": " + ec.message());
        return;
    }
    auto socket = std::make_shared<tcp::socket>(m_io);
    socket->async_connect(
        tcp::endpoint(address, o.port),
        [this, peer, socket](const boost::system::error_code& ec)
        {
            if (m_closed || ec == asio::error::operation_aborted)
            {
                return;
            }
            if (ec)
            {
                m_outgoing.at(peer).dialling = false;
                if (m_options.redial)
                {
                    ScheduleReconnect(peer);
                }
                else if (m_callbacks.closed)
                {
                    m_callbacks.closed(peer, /*error=*/true, "connect failed: " + ec.message());
                }
                return;
            }
            auto c = std::make_shared<Connection>(
                this, std::move(*socket), peer, /*accepted=*/false,
                m_auth ? Connection::Hello::kAwaitChallenge : Connection::Hello::kDone);
            // The hello goes first so that the acceptor learns who we are before
            // any message.
            auto hello = std::make_shared<std::string>();
            hilo::ByteWriter(hello.get()).PutU32(m_options.local_id);
            if (m_auth)
            {
                auto nonce = PeerAuth::Nonce();
                if (!nonce.ok())
                {
                    Log(nonce.status().message());
                    m_outgoing.at(peer).dialling = false;
                    ScheduleReconnect(peer);
                    return;
                }
                c->local_nonce = *nonce;
                hello->append(*nonce);
            }
            c->Enqueue(FrameHeader::kHelloType, hello, hello->size(), NowNs());
            if (m_auth)
            {
                // Registered once the listener proves the key.
                m_unregistered.insert(c);
                c->Start(m_options.hello_timeout_s);
                return;
            }
            c->Start(m_options.hello_timeout_s);
            m_outgoing.at(peer).dialling = false;
            Register(c, peer);
        });
}

void
TcpTransport::OnHelloFrame(const std::shared_ptr<Connection>& c, const std::string& payload)
{
    using Hello = Connection::Hello;
    hilo::ByteReader r(payload);
    const auto refuse = [&](const std::string& why) { c->Close(/*error=*/true, why); };
    if (c->hello() == Hello::kAwaitHello)
    {
        const size_t expected = m_auth ? PeerAuth::kHelloBytes : 4;
        uint32_t id = 0;
        if (payload.size() != expected || !r.GetU32(&id))
        {
            refuse("malformed hello (" + std::to_string(payload.size()) + " bytes, expected " +
                   std::to_string(expected) +
                   (m_auth ? "; this node requires the shared key)" : ")"));
            return;
        }
        if (m_options.accept_peer && !m_options.accept_peer(id))
        {
            refuse("peer id " + std::to_string(id) + " is not one this node accepts");
            return;
        }
        c->set_peer(id);
        if (!m_auth)
        {
            c->set_hello(Hello::kDone);
            Register(c, id);
            return;
        }
        auto nonce = PeerAuth::Nonce();
        if (!nonce.ok())
        {
            refuse(nonce.status().message());
            return;
        }
        c->remote_nonce = payload.substr(4);
        c->local_nonce = *nonce;
        auto challenge = std::make_shared<std::string>();
        hilo::ByteWriter(challenge.get()).PutU32(m_options.local_id);
        challenge->append(c->local_nonce); // no MAC: this side proves the key only after the
                                           // dialler has (peer-auth.h)
        c->set_hello(Hello::kAwaitProof);
        c->Enqueue(FrameHeader::kHelloType, challenge, challenge->size(), NowNs());
        return;
    }
    if (c->hello() == Hello::kAwaitProof)
    {
        if (payload.size() != PeerAuth::kProofBytes ||
            !m_auth->Check(payload, PeerAuth::Side::kDialler, c->peer(), m_options.local_id,
                           c->remote_nonce, c->local_nonce))
        {
            refuse("authentication failed: the peer claiming id " + std::to_string(c->peer()) +
                   " did not prove the shared key");
            return;
        }
        // Only now, the dialler having proved the key, does this side prove it in turn.
        auto keys = DeriveSessionKeys(m_options.key, c->peer(), m_options.local_id, c->remote_nonce,
                                      c->local_nonce);
        if (!keys.ok())
        {
            refuse(keys.status().message());
            return;
        }
        auto proof = std::make_shared<std::string>(m_auth->Mac(PeerAuth::Side::kListener, c->peer(),
                                                               m_options.local_id, c->remote_nonce,
                                                               c->local_nonce));
        c->Enqueue(FrameHeader::kHelloType, proof, proof->size(), NowNs());
        c->StartSealing(keys->listener_to_dialler, keys->dialler_to_listener);
        c->set_hello(Hello::kDone);
        Register(c, c->peer());
        return;
    }
    if (c->hello() == Hello::kAwaitChallenge)
    {
        const uint32_t peer = c->peer();
        uint32_t listener = 0;
        if (payload.size() != PeerAuth::kChallengeBytes || !r.GetU32(&listener))
        {
            refuse("malformed challenge (" + std::to_string(payload.size()) + " bytes)");
            return;
        }
        if (listener != peer)
        {
            refuse("the node at " + c->remote() + " is peer " + std::to_string(listener) +
                   ", not peer " + std::to_string(peer));
            return;
        }
        c->remote_nonce = payload.substr(4, PeerAuth::kNonceBytes);
        auto proof = std::make_shared<std::string>(m_auth->Mac(
            PeerAuth::Side::kDialler, m_options.local_id, peer, c->local_nonce, c->remote_nonce));
        c->Enqueue(FrameHeader::kHelloType, proof, proof->size(), NowNs());
        c->set_hello(Hello::kAwaitListenerProof);
        return;
    }
    if (c->hello() == Hello::kAwaitListenerProof)
    {
        const uint32_t peer = c->peer();
        if (payload.size() != PeerAuth::kProofBytes ||
            !m_auth->Check(payload, PeerAuth::Side::kListener, m_options.local_id, peer,
                           c->local_nonce, c->remote_nonce))
        {
            refuse("authentication failed: the node at " + c->remote() + " (peer " +
                   std::to_string(peer) +
                   ") did not prove the shared key; is its key file the same as this node's?");
            return; // reported by OnClosed
        }
        auto keys = DeriveSessionKeys(m_options.key, m_options.local_id, peer, c->local_nonce,
                                      c->remote_nonce);
        if (!keys.ok())
        {
            refuse(keys.status().message());
            return;
        }
        c->StartSealing(keys->dialler_to_listener, keys->listener_to_dialler);
        c->set_hello(Hello::kDone);
        m_outgoing.at(peer).dialling = false;
        Register(c, peer);
        return;
    }
    refuse("unexpected hello");
}

void
TcpTransport::ScheduleReconnect(uint32_t peer)
{
    auto it = m_outgoing.find(peer);
    if (m_closed || it == m_outgoing.end())
    {
        return;
    }
    Outgoing& o = it->second;
    const double delay = o.backoff_s;
    o.backoff_s = std::min(o.backoff_s * 2, m_options.backoff_max_s);
    o.timer->expires_after(Seconds(delay));
    o.timer->async_wait(
        [this, peer](const boost::system::error_code& ec)
        {
            if (!ec)
            {
                StartConnect(peer);
            }
        });
}

void
TcpTransport::Register(const std::shared_ptr<Connection>& c, uint32_t peer)
{
    c->set_peer(peer);
    auto old = m_connections.find(peer);
    if (old != m_connections.end() && old->second != c)
    {
        if (m_auth && c->accepted())
        {
            // A new connection that proved the key for a live id is the peer itself, restarted
            // before its old connection was seen to end: the old one goes, so that it need not
            // wait for keepalive to notice.
            auto stale = old->second;
            stale->Close(/*error=*/true, "replaced by a new authenticated connection from peer " +
                                             std::to_string(peer));
        }
        else
        {
            // Without a key anyone can claim an id: the live connection is kept. (A peer that
            // restarted before its old connection was seen to end dials again after its
            // backoff; the old one ends on its own, at the latest by keepalive.)
            c->Close(/*error=*/true, "refused a second connection from peer " +
                                         std::to_string(peer) + " (the live connection is kept)");
            return;
        }
    }
    m_unregistered.erase(c);
    m_connections[peer] = c;
    m_everConnected.insert(peer);
    if (!c->accepted())
    {
        // Only a connection that passed its hello resets the backoff: a process on the port that
        // fails the proof is dialled ever more slowly.
        m_outgoing.at(peer).backoff_s = m_options.backoff_initial_s;
    }
    auto pending = m_pending.find(peer);
    if (pending != m_pending.end())
    {
        for (Pending& p : pending->second)
        {
            c->Enqueue(p.type, std::move(p.payload), p.wire_bytes, NowNs());
        }
        m_pending.erase(pending);
    }
    if (m_callbacks.connected)
    {
        m_callbacks.connected(peer);
    }
}

void
TcpTransport::OnMessage(const std::shared_ptr<Connection>& c, const RoleMessage& message)
{
    if (m_callbacks.message)
    {
        m_callbacks.message(c->peer(), message);
    }
}

void
TcpTransport::OnClosed(const std::shared_ptr<Connection>& c, bool error, const std::string& why)
{
    if (m_unregistered.erase(c) > 0)
    {
        if (c->accepted())
        {
            Log("dropped connection from " + c->remote() + " before its hello: " + why);
            return;
        }
        // A connection this side dialled that ended during the hello exchange. Once this side
        // sent its proof the listener had to prove the key in turn: an end without that (its
        // proof failed, or it closed the connection, not taking this side's) is a failed
        // authentication (authentication_failed).
        const bool unproved = c->hello() == Connection::Hello::kAwaitListenerProof;
        const std::string what =
            !unproved || why.rfind("authentication failed", 0) == 0
                ? why
                : "authentication failed: the node at " + c->remote() + " (peer " +
                      PeerName(c->peer()) +
                      ") ended the connection after this node's proof without proving the "
                      "shared key (" +
                      why + "); is its key file the same as this node's?";
        Log("connection to peer " + PeerName(c->peer()) + " (" + c->remote() +
            ") ended during the hello: " + what);
        if (unproved && m_callbacks.authentication_failed)
        {
            m_callbacks.authentication_failed(c->peer(), what);
        }
        auto it = m_outgoing.find(c->peer());
        if (it != m_outgoing.end())
        {
            it->second.dialling = false;
            if (m_options.redial)
            {
                ScheduleReconnect(c->peer());
            }
            else if (m_callbacks.closed)
            {
                m_callbacks.closed(c->peer(), /*error=*/true, "ended during the hello: " + why);
            }
        }
        return;
    }
    const uint32_t peer = c->peer();
    auto it = m_connections.find(peer);
    if (it == m_connections.end() || it->second != c)
    {
        return; // a replaced connection
    }
    m_connections.erase(it);
    if (error)
    {
        Log("closed connection with peer " + PeerName(peer) + " (" + c->remote() + "): " + why);
    }
    if (m_callbacks.closed)
    {
        m_callbacks.closed(peer, error, why);
    }
    if (m_outgoing.count(peer) > 0 && m_options.redial)
    {
        ScheduleReconnect(peer);
    }
}

hilo::Status
TcpTransport::Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                   uint64_t wire_bytes)
{
    if (!payload || wire_bytes < payload->size())
    {
        return hilo::Status::InvalidArgument("message wire bytes below its payload size");
    }
    if (payload->size() > m_options.max_payload_bytes)
    {
        return hilo::Status::InvalidArgument("message payload of " +
                                             std::to_string(payload->size()) +
                                             " bytes exceeds the frame limit");
    }
    if (type == FrameHeader::kHelloType)
    {
        return hilo::Status::InvalidArgument("message type 0xFFFFFFFF is reserved for the hello");
    }
    auto it = m_connections.find(peer);
    if (it != m_connections.end())
    {
        it->second->Enqueue(type, std::move(payload), wire_bytes, NowNs());
    }
    else if (m_everConnected.count(peer) == 0)
    {
        m_pending[peer].push_back({type, std::move(payload), wire_bytes});
    }
    else
    {
        ++m_dropped;
    }
    return hilo::Status::Ok();
}

std::vector<std::pair<uint32_t, int>>
TcpTransport::ConnectedSockets() const
{
    std::vector<std::pair<uint32_t, int>> sockets;
    for (const auto& [peer, c] : m_connections)
    {
        if (const int fd = c->fd(); fd >= 0)
            sockets.emplace_back(peer, fd);
    }
    return sockets;
}

bool
TcpTransport::IsConnected(uint32_t peer) const
{
    return m_connections.count(peer) > 0;
}

void
TcpTransport::Disconnect(uint32_t peer, const std::string& why)
{
    auto it = m_connections.find(peer);
    if (it != m_connections.end())
    {
        auto c = it->second;
        c->Close(/*error=*/true, why);
    }
}

void
TcpTransport::CloseAll()
{
    if (m_closed)
    {
        return;
    }
    m_closed = true;
    if (m_acceptor)
    {
        boost::system::error_code ec;
        m_acceptor->close(ec);
    }
    if (m_acceptTimer)
    {
        m_acceptTimer->cancel();
    }
    for (auto& [peer, o] : m_outgoing)
    {
        o.timer->cancel();
    }
    auto connections = m_connections;
    auto unregistered = m_unregistered;
    m_connections.clear();
    m_unregistered.clear();
    for (auto& [peer, c] : connections)
    {
        c->Detach();
        c->Close(false, "transport closed");
    }
    for (const auto& c : unregistered)
    {
        c->Detach();
        c->Close(false, "transport closed");
    }
    m_pending.clear();
}

} // namespace hilosim
