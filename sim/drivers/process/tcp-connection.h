// TcpConnection: one TCP connection of a TcpTransport (tcp-transport.h) on Boost.Asio. Frames out
// (header, payload, real zero padding; sealed into records once StartSealing is called) and frames
// in (through a FrameReader, frame-reader.h, over the socket or the records). Hello-type frames
// and messages go to its owner, which drives the hello (hello-exchange.h) and the peer table; the
// connection itself only reads, writes, bounds its send queue and keeps its deadlines.
// Single-threaded, on the socket's executor.
#ifndef HILOSIM_DRIVERS_PROCESS_TCP_CONNECTION_H
#define HILOSIM_DRIVERS_PROCESS_TCP_CONNECTION_H

#include "sim/drivers/process/frame-reader.h"
#include "sim/drivers/process/hello-exchange.h"
#include "sim/roles/role-port.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

class RecordStream;
class TcpConnection;

/// What a connection reports to whoever owns it.
class ConnectionOwner
{
  public:
    /// A whole hello-type frame.
    virtual void OnHelloFrame(const std::shared_ptr<TcpConnection>& c,
                              const std::string& payload) = 0;
    /// A whole message after the hello.
    virtual void OnMessage(const std::shared_ptr<TcpConnection>& c, const RoleMessage& message) = 0;
    /// The connection ended (reported once); `error`: failed rather than closed cleanly.
    virtual void OnClosed(const std::shared_ptr<TcpConnection>& c, bool error,
                          const std::string& why) = 0;

  protected:
    ~ConnectionOwner() = default;
};

/// The transport's options a connection uses (tcp-transport.h says what each means).
struct ConnectionOptions
{
    FrameReaderOptions frames;
    uint64_t max_queued_bytes{0};
    double hello_timeout_s{5.0};
    double frame_timeout_s{30.0};
    double heartbeat_interval_s{5.0};
    double heartbeat_timeout_s{30.0};
    double keepalive_idle_s{5.0};
    double keepalive_interval_s{2.0};
    int keepalive_probes{3};
    double user_timeout_s{30.0};
};

class TcpConnection : public std::enable_shared_from_this<TcpConnection>
{
  public:
    TcpConnection(ConnectionOwner* owner, const ConnectionOptions& options,
                  boost::asio::ip::tcp::socket socket, std::unique_ptr<HelloExchange> hello,
                  std::shared_ptr<const std::vector<char>> zeros);
    ~TcpConnection();

    /// The peer's id as the hello has it so far.
    uint32_t peer() const { return m_hello->peer(); }
    HelloExchange& hello() { return *m_hello; }
    const HelloExchange& hello() const { return *m_hello; }
    bool accepted() const { return !m_hello->dialler(); }
    /// The kernel socket; -1 once closed (tcp-info-sampler.h reads its TCP_INFO).
    int fd() { return m_socket.is_open() ? m_socket.native_handle() : -1; }
    const std::string& remote() const { return m_remote; }
    /// The remote address without its port: where a connection comes from, for admission.
    const std::string& source() const { return m_source; }
    void Detach() { m_owner = nullptr; }

    /// Called by the owner once the hello is done: frames after it are checked against the
    /// limits of a member, and the hello deadline stops. With a key every byte each way goes
    /// through sealed records from here on: frames enqueued later are sealed with the hello's
    /// send key, and every read after the current frame opens records with its receive key.
    void HelloDone();

    /// Starts reading; a connection whose hello is not done within hello_timeout_s is closed.
    void Start();
    /// Queues a frame (the send-queue cap closes the connection, from the loop, when passed).
    void Enqueue(uint32_t type, std::shared_ptr<const std::string> payload, uint64_t wire_bytes,
                 int64_t sent_at_ns);
    /// Closes the socket; `why` is reported once, through the owner.
    void Close(bool error, const std::string& why);

  private:
    struct Out
    {
        std::string header;
        std::shared_ptr<const std::string> payload;
        uint64_t padding{0};
        bool sealed{false}; // enqueued after the hello: goes through m_stream
    };
    using IoHandler = std::function<void(const boost::system::error_code&, size_t)>;

    void Write(bool sealed, std::vector<boost::asio::const_buffer> buffers, IoHandler handler);
    void Read(boost::asio::mutable_buffer buffer, IoHandler handler);
    void WriteNext();
    void WritePadding();
    /// A write's completion: false (the connection failed) on an error, else notes the time.
    bool Wrote(const boost::system::error_code& ec);
    void ReadNext();
    void OnRead(size_t n);
    void Deliver();
    void Fail(const boost::system::error_code& ec, bool mid_frame);
    /// The deadlines and the heartbeat, checked every WatchPeriod() (tcp-transport.h).
    void Watch();
    void OnWatch();
    double WatchPeriod() const;

    ConnectionOwner* m_owner;
    ConnectionOptions m_options;
    boost::asio::ip::tcp::socket m_socket;
    std::unique_ptr<HelloExchange> m_hello;
    std::shared_ptr<const std::vector<char>> m_zeros;
    boost::asio::steady_timer m_deadline;
    boost::asio::steady_timer m_watch;
    std::chrono::steady_clock::time_point m_lastReceived; // the last byte in
    std::chrono::steady_clock::time_point m_lastSent;     // the last write done (or the hello)
    std::string m_remote;
    std::string m_source;
    bool m_closed{false};
    std::unique_ptr<RecordStream> m_stream; // after a keyed hello: the sealed records

    FrameReader m_reader;
    uint64_t m_received{0};

    std::deque<Out> m_out;
    uint64_t m_queued{0};     // real payload bytes in m_out
    bool m_overflowed{false}; // the queue passed its cap: closing
    bool m_writing{false};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_TCP_CONNECTION_H
