#include "sim/drivers/process/tcp-connection.h"

#include "sim/drivers/process/record-stream.h"
#include "sim/net/frame-header.h"

#include "hilo/core/crc32c.h"

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>

namespace hilosim
{

namespace asio = boost::asio;
using asio::ip::tcp;

namespace
{

std::chrono::steady_clock::duration
Seconds(double s)
{
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(s));
}

// Keepalive probes and the user timeout: a peer that vanished (a host down, a link cut) without
// closing ends the connection in bounded time, as the simulator's heartbeats do.
void
SetKeepalive(tcp::socket& socket, const ConnectionOptions& o)
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

} // namespace

TcpConnection::TcpConnection(ConnectionOwner* owner, const ConnectionOptions& options,
                             tcp::socket socket, std::unique_ptr<HelloExchange> hello,
                             std::shared_ptr<const std::vector<char>> zeros)
  : m_owner(owner)
  , m_options(options)
  , m_socket(std::move(socket))
  , m_hello(std::move(hello))
  , m_zeros(std::move(zeros))
  , m_deadline(m_socket.get_executor())
  , m_watch(m_socket.get_executor())
  , m_lastReceived(std::chrono::steady_clock::now())
  , m_lastSent(m_lastReceived)
  , m_reader(options.frames)
{
    boost::system::error_code ec;
    m_socket.set_option(tcp::no_delay(true), ec);
    SetKeepalive(m_socket, m_options);
    auto remote = m_socket.remote_endpoint(ec);
    m_remote =
        ec ? std::string("?") : remote.address().to_string() + ":" + std::to_string(remote.port());
    m_source = ec ? std::string("?") : remote.address().to_string();
    m_reader.set_hello_done(m_hello->done());
}

TcpConnection::~TcpConnection() = default;

void
TcpConnection::HelloDone()
{
    m_deadline.cancel();
    m_reader.set_hello_done(true);
    m_lastSent = std::chrono::steady_clock::now();
    if (!m_hello->send_key().empty())
    {
        m_stream =
            std::make_unique<RecordStream>(m_socket, m_hello->send_key(), m_hello->receive_key());
    }
}

void
TcpConnection::Start()
{
    if (!m_hello->done())
    {
        auto self = shared_from_this();
        const double timeout_s = m_options.hello_timeout_s;
        m_deadline.expires_after(Seconds(timeout_s));
        m_deadline.async_wait(
            [self, timeout_s](const boost::system::error_code& ec)
            {
                if (!ec && !self->m_hello->done())
                {
                    self->Close(/*error=*/true,
                                "no hello within " + std::to_string(timeout_s) + " s");
                }
            });
    }
    ReadNext();
    Watch();
}

double
TcpConnection::WatchPeriod() const
{
    double shortest = 0;
    for (const double s :
         {m_options.frame_timeout_s, m_options.heartbeat_interval_s, m_options.heartbeat_timeout_s})
    {
        if (s > 0 && (shortest == 0 || s < shortest))
            shortest = s;
    }
    // A quarter of the shortest: a deadline is seen at most a quarter late.
    return shortest == 0 ? 0 : std::clamp(shortest / 4, 0.005, 1.0);
}

void
TcpConnection::Watch()
{
    const double period = WatchPeriod();
    if (period == 0 || m_closed)
    {
        return;
    }
    auto self = shared_from_this();
    m_watch.expires_after(Seconds(period));
    m_watch.async_wait(
        [self](const boost::system::error_code& ec)
        {
            if (!ec && !self->m_closed)
                self->OnWatch();
        });
}

void
TcpConnection::OnWatch()
{
    const auto now = std::chrono::steady_clock::now();
    const double quiet_s = std::chrono::duration<double>(now - m_lastReceived).count();
    // A frame begun whose bytes stopped coming. A deadline for the whole frame would close a
    // large frame on a slow link; one reset by progress closes only a stall.
    if (m_reader.mid_frame() && m_options.frame_timeout_s > 0 &&
        quiet_s >= m_options.frame_timeout_s)
    {
        std::string what;
        if (m_reader.frame_bytes() >= FrameHeader::kBytes)
        {
            const FrameHeader& h = m_reader.header();
            what = " (type " + std::to_string(h.type) + ", " +
                   std::to_string(FrameHeader::kBytes + h.wire_bytes) + " bytes on the wire)";
        }
        Close(/*error=*/true, "a frame stalled: " + std::to_string(m_reader.frame_bytes()) +
                                  " bytes of it arrived" + what + ", then none for " +
                                  std::to_string(m_options.frame_timeout_s) + " s");
        return;
    }
    if (m_hello->done() && m_options.heartbeat_timeout_s > 0 &&
        quiet_s >= m_options.heartbeat_timeout_s)
    {
        Close(/*error=*/true, "nothing received for " +
                                  std::to_string(m_options.heartbeat_timeout_s) +
                                  " s (heartbeat timeout: the peer is stopped or cut off)");
        return;
    }
    if (m_hello->done() && m_options.heartbeat_interval_s > 0 && m_out.empty() && !m_writing &&
        std::chrono::duration<double>(now - m_lastSent).count() >= m_options.heartbeat_interval_s)
    {
        static const auto kEmpty = std::make_shared<const std::string>();
        Enqueue(FrameHeader::kHeartbeatType, kEmpty, 0, 0);
        m_lastSent = now;
    }
    Watch();
}

void
TcpConnection::Enqueue(uint32_t type, std::shared_ptr<const std::string> payload,
                       uint64_t wire_bytes, int64_t sent_at_ns)
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
    const uint64_t cap = m_owner ? m_options.max_queued_bytes : 0;
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

void
TcpConnection::Close(bool error, const std::string& why)
{
    if (m_closed)
    {
        return;
    }
    m_closed = true;
    m_deadline.cancel();
    m_watch.cancel();
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

void
TcpConnection::Write(bool sealed, std::vector<asio::const_buffer> buffers, IoHandler handler)
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

void
TcpConnection::Read(asio::mutable_buffer buffer, IoHandler handler)
{
    if (m_stream)
    {
        m_stream->AsyncReadSome(buffer, std::move(handler));
    }
    else
    {
        m_socket.async_read_some(buffer, std::move(handler));
    }
}

void
TcpConnection::WriteNext()
{
    if (m_writing || m_out.empty() || m_closed)
    {
        return;
    }
    m_writing = true;
    Out& out = m_out.front();
    std::vector<asio::const_buffer> buffers{asio::buffer(out.header), asio::buffer(*out.payload)};
    auto self = shared_from_this();
    Write(out.sealed, std::move(buffers),
          [self](const boost::system::error_code& ec, size_t)
          {
              if (self->Wrote(ec))
              {
                  self->WritePadding();
              }
          });
}

bool
TcpConnection::Wrote(const boost::system::error_code& ec)
{
    if (ec)
    {
        Fail(ec, /*mid_frame=*/false);
        return false;
    }
    m_lastSent = std::chrono::steady_clock::now();
    return true;
}

void
TcpConnection::WritePadding()
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
              if (self->Wrote(ec))
              {
                  self->WritePadding();
              }
          });
}

void
TcpConnection::ReadNext()
{
    const FrameReader::Span span = m_reader.Buffer();
    auto self = shared_from_this();
    Read(asio::buffer(span.data, span.size),
         [self](const boost::system::error_code& ec, size_t n)
         {
             if (ec)
             {
                 self->Fail(ec, /*mid_frame=*/n > 0 || self->m_reader.mid_frame());
                 return;
             }
             self->OnRead(n);
         });
}

void
TcpConnection::OnRead(size_t n)
{
    if (m_closed || !m_owner)
    {
        return;
    }
    m_lastReceived = std::chrono::steady_clock::now();
    switch (m_reader.Commit(n))
    {
        case FrameReader::Event::kError:
            Close(/*error=*/true, m_reader.error().message());
            return;
        case FrameReader::Event::kFrame:
            Deliver();
            break;
        case FrameReader::Event::kNeedMore:
            break;
    }
    if (!m_closed)
    {
        ReadNext();
    }
}

void
TcpConnection::Deliver()
{
    const FrameHeader& frame = m_reader.header();
    const std::string payload = m_reader.TakePayload();
    if (frame.type == FrameHeader::kHeartbeatType && m_hello->done())
    {
        return; // the transport's own: m_lastReceived is all it was for
    }
    if (frame.type == FrameHeader::kHelloType)
    {
        m_owner->OnHelloFrame(shared_from_this(), payload);
        return;
    }
    RoleMessage m;
    m.type = frame.type;
    m.payload = payload;
    m.wire_bytes = frame.wire_bytes;
    m.sequence = m_received++;
    m_owner->OnMessage(shared_from_this(), m);
}

void
TcpConnection::Fail(const boost::system::error_code& ec, bool mid_frame)
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
        Close(/*error=*/mid_frame,
              mid_frame ? "connection ended mid-frame (truncated message)" : "closed by the peer");
        return;
    }
    Close(/*error=*/true, ec.message());
}

} // namespace hilosim
