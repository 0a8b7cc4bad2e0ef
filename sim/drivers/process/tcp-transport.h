// TcpTransport: the process driver's message transport. Framed messages (the simulator's stream
// format, sim/net/message-frame.h) over kernel TCP on Boost.Asio, addressed by peer id.
//
// Connection model (as the simulator's MessageEndpoint): the side that starts the exchange (a
// worker, or a relay towards the learner) connects and sends a hello with its peer id first; the
// other side listens and learns who is who from the hello. One connection per pair carries both
// directions. In a process every byte is real: a message standing for more wire bytes than its
// payload is followed by that many zero bytes, which the receiver reads and discards.
//
// Failures are expected events, never crashes:
// - a frame that fails the checks (bad magic, sizes past the limit, a message before the hello, a
//   malformed hello) closes that connection with a logged error; the others go on;
// - a connection this side made is re-made with exponential backoff whenever it ends;
// - messages to a peer that never connected wait for it; messages to a peer whose connection
//   ended are dropped (the roles recover through catch-up: a reconnecting worker is welcomed).
// Single-threaded: every call and callback runs on the io_context's thread.
#ifndef HILOSIM_DRIVERS_PROCESS_TCP_TRANSPORT_H
#define HILOSIM_DRIVERS_PROCESS_TCP_TRANSPORT_H

#include "sim/roles/role-port.h"

#include "hilo/core/status.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace hilosim
{

struct TcpTransportOptions
{
    uint32_t local_id{0};                         // announced in the hello of every connection
    uint64_t max_payload_bytes{(1ull << 31) - 1}; // a frame claiming more is corrupt
    std::string name{"node"};                     // prefix of log lines ("worker 3")
    double backoff_initial_s{0.05};               // first reconnect delay; doubles per failure
    double backoff_max_s{2.0};                    // reconnect delay cap
    std::function<int64_t()> clock_ns;            // sent_at of outgoing frames (may be empty)
};

struct TcpTransportCallbacks
{
    std::function<void(uint32_t peer, const RoleMessage& message)> message;
    std::function<void(uint32_t peer)> connected;
    /// `error`: the connection failed (I/O error, corrupt stream) rather than closing cleanly.
    std::function<void(uint32_t peer, bool error, const std::string& why)> closed;
    /// Log lines (errors and connection events); stderr when empty.
    std::function<void(const std::string& line)> log;
};

class TcpTransport
{
  public:
    TcpTransport(boost::asio::io_context& io, TcpTransportOptions options,
                 TcpTransportCallbacks callbacks);
    ~TcpTransport();
    TcpTransport(const TcpTransport&) = delete;
    TcpTransport& operator=(const TcpTransport&) = delete;

    /// Accepts connections on host:port (port 0: any free port). Returns the bound port.
    hilo::StatusOr<uint16_t> Listen(const std::string& host, uint16_t port);
    /// Connects to `peer` at host:port now and again, with backoff, whenever the connection
    /// ends, until CloseAll(). REQUIRES: not already connecting to `peer`.
    void Connect(uint32_t peer, const std::string& host, uint16_t port);

    /// Queues a message to `peer` (see the file comment for unconnected peers). InvalidArgument
    /// for wire_bytes < payload size, a payload over the limit, or the reserved hello type.
    hilo::Status Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wire_bytes);

    bool IsConnected(uint32_t peer) const;
    /// Closes the connection with `peer` as failed (logged with `why`); a peer this side dials is
    /// dialled again after the backoff.
    void Disconnect(uint32_t peer, const std::string& why);
    /// Stops listening, stops reconnecting and closes every connection (queued data is dropped).
    void CloseAll();
    /// Messages dropped because their peer's connection had ended.
    uint64_t dropped() const { return m_dropped; }

  private:
    class Connection;
    struct Outgoing
    {
        std::string host;
        uint16_t port{0};
        double backoff_s{0};
        std::unique_ptr<boost::asio::steady_timer> timer;
    };

    void Accept();
    void StartConnect(uint32_t peer);
    void ScheduleReconnect(uint32_t peer);
    void Register(const std::shared_ptr<Connection>& c, uint32_t peer);
    void OnMessage(const std::shared_ptr<Connection>& c, const RoleMessage& message);
    void OnClosed(const std::shared_ptr<Connection>& c, bool error, const std::string& why);
    void Log(const std::string& line) const;
    int64_t NowNs() const;

    boost::asio::io_context& m_io;
    TcpTransportOptions m_options;
    TcpTransportCallbacks m_callbacks;
    std::unique_ptr<boost::asio::ip::tcp::acceptor> m_acceptor;
    std::map<uint32_t, std::shared_ptr<Connection>> m_connections; // registered, by peer id
    std::set<std::shared_ptr<Connection>> m_unregistered;          // accepted, hello pending
    std::map<uint32_t, Outgoing> m_outgoing;                       // peers this side dials
    std::set<uint32_t> m_everConnected;
    struct Pending
    {
        uint32_t type;
        std::shared_ptr<const std::string> payload;
        uint64_t wire_bytes;
    };
    std::map<uint32_t, std::vector<Pending>> m_pending; // to peers never connected yet
    std::shared_ptr<const std::vector<char>> m_zeros;   // padding source
    uint64_t m_dropped{0};
    bool m_closed{false};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_TCP_TRANSPORT_H
