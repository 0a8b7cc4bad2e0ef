#include "sim/drivers/process/tcp-transport.h"

#include "sim/drivers/process/admission.h"
#include "sim/drivers/process/tcp-connection.h"
#include "sim/net/frame-header.h"

#include <algorithm>
#include <chrono>
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

std::chrono::steady_clock::duration
Seconds(double s)
{
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(s));
}

// "address:port" of the socket's peer, as a connection names it.
std::string
RemoteOf(const tcp::socket& socket)
{
    boost::system::error_code ec;
    auto remote = socket.remote_endpoint(ec);
    return ec ? std::string("?")
              : remote.address().to_string() + ":" + std::to_string(remote.port());
}

std::string
PeerName(uint32_t peer)
{
    return peer == kUnknownPeer ? std::string("(hello pending)") : std::to_string(peer);
}

} // namespace

TcpTransport::TcpTransport(asio::io_context& io, TcpTransportOptions options,
                           TcpTransportCallbacks callbacks)
  : m_io(io)
  , m_options(std::move(options))
  , m_callbacks(std::move(callbacks))
  , m_zeros(std::make_shared<const std::vector<char>>(kChunkBytes, '\0'))
{
    m_connectionOptions.frames.max_payload_bytes = m_options.max_payload_bytes;
    m_connectionOptions.frames.max_payload_for = m_options.max_payload_for;
    m_connectionOptions.frames.payload_step_bytes = kPayloadStepBytes;
    m_connectionOptions.max_queued_bytes = m_options.max_queued_bytes;
    m_connectionOptions.hello_timeout_s = m_options.hello_timeout_s;
    m_connectionOptions.frame_timeout_s = m_options.frame_timeout_s;
    m_connectionOptions.heartbeat_interval_s = m_options.heartbeat_interval_s;
    m_connectionOptions.heartbeat_timeout_s = m_options.heartbeat_timeout_s;
    m_connectionOptions.keepalive_idle_s = m_options.keepalive_idle_s;
    m_connectionOptions.keepalive_interval_s = m_options.keepalive_interval_s;
    m_connectionOptions.keepalive_probes = m_options.keepalive_probes;
    m_connectionOptions.user_timeout_s = m_options.user_timeout_s;
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
    boost::system::error_code ignored;
    auto endpoint = socket.remote_endpoint(ignored);
    const std::string source = ignored ? std::string("?") : endpoint.address().to_string();
    size_t members = 0;
    for (const auto& [peer, c] : m_connections)
    {
        members += c->accepted() ? 1 : 0;
    }
    std::vector<std::shared_ptr<TcpConnection>> pending; // accepted, in their hello, oldest first
    std::vector<std::string> sources;
    for (auto it = m_admitted.begin(); it != m_admitted.end();)
    {
        auto c = it->lock();
        if (!c || m_unregistered.count(c) == 0)
        {
            it = m_admitted.erase(it);
            continue;
        }
        pending.push_back(c);
        sources.push_back(c->source());
        ++it;
    }
    const AdmissionDecision d =
        DecideAdmission(members, sources, source,
                        {m_options.max_connections, m_options.max_pending_hellos,
                         m_options.max_pending_per_source});
    if (d.refuse)
    {
        Log(d.refuse_why);
        socket.close(ignored);
        return;
    }
    if (d.evict)
    {
        pending[d.evict_index]->Close(/*error=*/true, d.evict_why);
    }
    auto c = std::make_shared<TcpConnection>(Owner(), m_connectionOptions, std::move(socket),
                                             HelloExchange::Listener(HelloOptionsFor()), m_zeros);
    m_unregistered.insert(c);
    m_admitted.push_back(c);
    c->Start();
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
            auto hello_exchange =
                HelloExchange::Dialler(HelloOptionsFor(), peer, RemoteOf(*socket));
            auto c =
                std::make_shared<TcpConnection>(Owner(), m_connectionOptions, std::move(*socket),
                                                std::move(hello_exchange), m_zeros);
            // The hello goes first so that the acceptor learns who we are before any message.
            auto hello = c->hello().Start();
            if (!hello.ok())
            {
                Log(hello.status().message());
                m_outgoing.at(peer).dialling = false;
                ScheduleReconnect(peer);
                return;
            }
            c->Enqueue(FrameHeader::kHelloType, std::make_shared<const std::string>(*hello),
                       hello->size(), NowNs());
            if (!c->hello().done())
            {
                // Registered once the listener proves the key.
                m_unregistered.insert(c);
                c->Start();
                return;
            }
            c->Start();
            m_outgoing.at(peer).dialling = false;
            Register(c, peer);
        });
}

HelloOptions
TcpTransport::HelloOptionsFor() const
{
    HelloOptions h;
    h.local_id = m_options.local_id;
    h.key = m_options.key;
    h.accept_peer = m_options.accept_peer;
    return h;
}

void
TcpTransport::OnHelloFrame(const std::shared_ptr<TcpConnection>& c, const std::string& payload)
{
    std::vector<std::string> send;
    const hilo::Status step = c->hello().OnFrame(payload, &send);
    if (!step.ok())
    {
        c->Close(/*error=*/true, step.message());
        return;
    }
    for (std::string& frame : send)
    {
        const uint64_t n = frame.size();
        c->Enqueue(FrameHeader::kHelloType, std::make_shared<const std::string>(std::move(frame)),
                   n, NowNs());
    }
    if (!c->hello().done())
    {
        return;
    }
    // Sealed from here on (a proof enqueued above still goes out as it is).
    c->HelloDone();
    if (!c->accepted())
    {
        m_outgoing.at(c->peer()).dialling = false;
    }
    Register(c, c->peer());
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
TcpTransport::Register(const std::shared_ptr<TcpConnection>& c, uint32_t peer)
{
    auto old = m_connections.find(peer);
    if (old != m_connections.end() && old->second != c)
    {
        if (!m_options.key.empty() && c->accepted())
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
TcpTransport::OnMessage(const std::shared_ptr<TcpConnection>& c, const RoleMessage& message)
{
    if (m_callbacks.message)
    {
        m_callbacks.message(c->peer(), message);
    }
}

void
TcpTransport::OnClosed(const std::shared_ptr<TcpConnection>& c, bool error, const std::string& why)
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
        const bool unproved = c->hello().state() == HelloExchange::State::kAwaitListenerProof;
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
    if (type == FrameHeader::kHeartbeatType)
    {
        return hilo::Status::InvalidArgument(
            "message type 0xFFFFFFFE is reserved for the transport's heartbeat");
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
