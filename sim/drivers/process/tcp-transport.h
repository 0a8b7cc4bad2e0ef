// TcpTransport: the process driver's message transport. Framed messages (the simulator's stream
// format, sim/net/message-frame.h) over kernel TCP on Boost.Asio, addressed by peer id.
//
// Connection model (as the simulator's MessageEndpoint): the side that starts the exchange (a
// worker, or a relay towards the learner) connects and sends a hello with its peer id first; the
// other side listens and learns who is who from the hello. One connection per pair carries both
// directions. In a process every byte is real: a message standing for more wire bytes than its
// payload is followed by that many zero bytes, which the receiver reads and discards.
//
// Peers are authenticated when the options carry a key (peer-auth.h: each side proves it holds
// the shared key over the other's nonce before anything else is sent or delivered, the dialler
// first), and after the hello every byte each way is sealed (record-cipher.h: per-direction
// session keys, ChaCha20-Poly1305 records numbered per direction), so a frame modified, injected,
// replayed, reordered or cut short closes its connection and is never delivered. Without a key
// the hello is the dialler's id alone and frames carry their CRCs only. A listener accepts only
// the ids `accept_peer` allows. A second connection for an id that is connected replaces the live
// one when it proved the key (the peer restarted before its old connection was seen to end);
// without a key it is refused and the live one kept (anyone can claim an id).
//
// Every byte from a peer may be hostile, so everything a peer can make this side hold is bounded:
// frames before the hello exchange is done are at most a hello's size, later ones at most
// max_payload_bytes; a connection that has not completed its hello within hello_timeout_s is
// closed; a frame begun is closed when no byte of it came for frame_timeout_s; at most
// max_connections accepted connections are open at once; the kernel's keepalive and
// TCP_USER_TIMEOUT end a connection whose peer has vanished; and when accept() fails (out of
// descriptors) the listener waits before trying again instead of spinning.
//
// Heartbeats: past the hello each end sends a heartbeat frame (FrameHeader::kHeartbeatType, no
// payload; sealed like every frame with a key) when it sent nothing for heartbeat_interval_s, and
// closes a connection that received nothing for heartbeat_timeout_s. A stopped process (SIGSTOP)
// keeps its kernel's TCP alive, so keepalive alone never ends its connections; this does.
// Heartbeats are the transport's own: never delivered, never counted in a message's sequence.
// With a key, progress is seen a record (at most 64 KiB) at a time.
//
// Failures are expected events, never crashes:
// - a frame that fails the checks (bad magic, sizes past the limit, a message before the hello, a
//   malformed hello, a failed proof, a record that fails its tag) closes that connection with a
//   logged error; the others go on;
// - a connection this side made is re-made with exponential backoff whenever it ends, also when
//   the listener failed to prove the key (reported through authentication_failed): the port may
//   have been taken by another process while the real peer restarts;
// - messages to a peer that never connected wait for it; messages to a peer whose connection
//   ended are dropped (the roles recover through catch-up: a reconnecting worker is welcomed).
// Single-threaded: every call and callback runs on the io_context's thread.
//
// The pieces, each readable (and the first three fuzzed, tests/fuzz/fuzz-transport.cc) alone:
// frame-reader.h (the inbound frame parser and its limits, no socket), hello-exchange.h (one end
// of the hello, no socket), admission.h (which accepted connection makes room for a new one),
// tcp-connection.h (one connection on Asio), record-stream.h (the sealed records) and this file
// (the peer table, dialling and redialling).
#ifndef HILOSIM_DRIVERS_PROCESS_TCP_TRANSPORT_H
#define HILOSIM_DRIVERS_PROCESS_TCP_TRANSPORT_H

#include "sim/drivers/process/tcp-connection.h"
#include "sim/roles/role-port.h"

#include "hilo/core/status.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <deque>
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
    bool redial{true};                            // re-make a dialled connection by itself when
                                                  // it ends; false: only on Redial()
    std::function<int64_t()> clock_ns;            // sent_at of outgoing frames (may be empty)
    std::string key;                              // shared key, bytes (>= 32, peer-auth.h);
                                                  // empty: no authentication, no sealing, the
                                                  // hello is the id alone
    std::function<bool(uint32_t)> accept_peer;    // ids a listener accepts; empty: any
    double hello_timeout_s{5.0};                  // a connection must finish its hello by then
    double frame_timeout_s{30.0};                 // a frame begun (a byte of its header came)
                                                  // is closed when no byte of it came for this
                                                  // long: a stall, however slow the link;
                                                  // 0: never
    double heartbeat_interval_s{5.0};             // past the hello: a heartbeat goes out when
                                                  // nothing was sent for this long; 0: none
    double heartbeat_timeout_s{30.0};             // past the hello: closed when nothing was
                                                  // received for this long (a stopped or cut
                                                  // off peer); 0: never
    size_t max_connections{256};                  // accepted connections open at once; members
                                                  // (past their hello) are refused only when
                                                  // this many members are connected
    size_t max_pending_hellos{256};               // accepted connections in their hello at once;
                                                  // a new one past it drops the oldest
    size_t max_pending_per_source{64};            // of those, from one remote address
    double keepalive_idle_s{5.0};                 // TCP keepalive: first probe after this idle
    double keepalive_interval_s{2.0};             // between probes
    int keepalive_probes{3};                      // unanswered probes that end the connection
    double user_timeout_s{30.0};                  // TCP_USER_TIMEOUT: data unacknowledged this
                                                  // long ends the connection
    double accept_backoff_initial_s{0.01};        // wait after a failed accept(); doubles
    double accept_backoff_max_s{1.0};             // up to this, back to the start on success
    // Bounds on what one peer costs this node (sim/drivers/process/peer-limits.h makes them for
    // a node of an arm):
    std::function<uint64_t(uint32_t type)>
        max_payload_for;          // per message type, within
                                  // max_payload_bytes; empty: that limit alone.
                                  // A header announcing more closes the
                                  // connection before any byte of the payload
    uint64_t max_queued_bytes{0}; // real payload bytes queued to one peer; past
                                  // it the peer is closed (a slow reader or a
                                  // request flood); 0: no cap
};

struct TcpTransportCallbacks
{
    std::function<void(uint32_t peer, const RoleMessage& message)> message;
    std::function<void(uint32_t peer)> connected;
    /// `error`: the connection failed (I/O error, corrupt stream) rather than closing cleanly.
    std::function<void(uint32_t peer, bool error, const std::string& why)> closed;
    /// Log lines (errors and connection events); stderr when empty.
    std::function<void(const std::string& line)> log;
    /// A peer this side dials failed to prove the shared key (a different key, or not the node
    /// it claims to be). It is dialled again after the backoff, like any connection that ended.
    std::function<void(uint32_t peer, const std::string& why)> authentication_failed;
};

class TcpTransport : private ConnectionOwner
{
  public:
    TcpTransport(boost::asio::io_context& io, TcpTransportOptions options,
                 TcpTransportCallbacks callbacks);
    ~TcpTransport();
    TcpTransport(const TcpTransport&) = delete;
    TcpTransport& operator=(const TcpTransport&) = delete;

    /// Accepts connections on host:port (port 0: any free port). Returns the bound port.
    hilo::StatusOr<uint16_t> Listen(const std::string& host, uint16_t port);
    /// Connects to `peer` at host:port now and (with options.redial) again, with backoff,
    /// whenever the connection ends, until CloseAll(). REQUIRES: not already connecting to `peer`.
    void Connect(uint32_t peer, const std::string& host, uint16_t port);
    /// Dials `peer` (given to Connect) again now, unless it is connected or being dialled.
    void Redial(uint32_t peer);

    /// Queues a message to `peer` (see the file comment for unconnected peers). InvalidArgument
    /// for wire_bytes < payload size, a payload over the limit, or the reserved hello type.
    hilo::Status Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wire_bytes);

    bool IsConnected(uint32_t peer) const;
    /// Every connected peer with its kernel socket, ascending by peer (tcp-info-sampler.h).
    std::vector<std::pair<uint32_t, int>> ConnectedSockets() const;
    /// Closes the connection with `peer` as failed (logged with `why`); a peer this side dials is
    /// dialled again after the backoff.
    void Disconnect(uint32_t peer, const std::string& why);
    /// Stops listening, stops reconnecting and closes every connection (queued data is dropped).
    void CloseAll();
    /// Messages dropped because their peer's connection had ended.
    uint64_t dropped() const { return m_dropped; }
    /// accept() calls that failed (each followed by a backoff).
    uint64_t accept_failures() const { return m_acceptFailures; }
    /// Connections accepted whose hello exchange is not done yet.
    size_t pending_hellos() const { return m_unregistered.size(); }

  private:
    struct Outgoing
    {
        std::string host;
        uint16_t port{0};
        double backoff_s{0};
        bool dialling{false}; // a connect, or its hello exchange, is under way
        std::unique_ptr<boost::asio::steady_timer> timer;
    };

    void Accept();
    /// Admits an accepted connection to its hello (see max_pending_hellos).
    void Admit(boost::asio::ip::tcp::socket socket);
    void StartConnect(uint32_t peer);
    void ScheduleReconnect(uint32_t peer);
    /// A hello-type frame on `c` (the exchange of peer-auth.h, or the plain hello).
    void OnHelloFrame(const std::shared_ptr<TcpConnection>& c, const std::string& payload) override;
    void Register(const std::shared_ptr<TcpConnection>& c, uint32_t peer);
    void OnMessage(const std::shared_ptr<TcpConnection>& c, const RoleMessage& message) override;
    void OnClosed(const std::shared_ptr<TcpConnection>& c, bool error,
                  const std::string& why) override;
    ConnectionOwner* Owner() { return this; }
    /// The hello options of this node's connections (hello-exchange.h).
    HelloOptions HelloOptionsFor() const;
    void Log(const std::string& line) const;
    int64_t NowNs() const;

    boost::asio::io_context& m_io;
    TcpTransportOptions m_options;
    ConnectionOptions m_connectionOptions; // what each connection takes from m_options
    TcpTransportCallbacks m_callbacks;
    std::unique_ptr<boost::asio::ip::tcp::acceptor> m_acceptor;
    std::unique_ptr<boost::asio::steady_timer> m_acceptTimer;
    double m_acceptBackoff{0};
    uint64_t m_acceptFailures{0};
    std::map<uint32_t, std::shared_ptr<TcpConnection>> m_connections; // registered, by peer id
    std::set<std::shared_ptr<TcpConnection>> m_unregistered;          // accepted, hello pending
    std::deque<std::weak_ptr<TcpConnection>> m_admitted;              // accepted, oldest first
    std::map<uint32_t, Outgoing> m_outgoing;                          // peers this side dials
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
