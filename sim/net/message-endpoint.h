// A node's message transport: one endpoint per node, identified by a peer id, that listens for
// and makes connections (one TCP connection per pair of endpoints, used in both directions) and
// sends and receives framed messages (message-frame.h) by peer id.
//
// Connection model: the side that starts the exchange (a worker, or a relay towards the learner)
// connects; the other side (learner, relay) listens on one port and accepts any number of peers.
// The connecting side sends a hello carrying its id first, so the accepting side knows who is who
// before any message. Messages to a peer that has not connected yet wait in the endpoint and go
// out when it does; messages to a peer whose connection has ended are dropped (the protocol above
// recovers what they carried after a reconnection; see sim/roles). The connecting side redials a
// peer with Redial; the accepting side takes the new connection in place of the old one.
//
// Faults: Abort ends every connection at once, as the node's process dying would, and
// SetAccepting(false) makes the node ignore connection attempts, as a host whose server process
// is down does.
//
// Streaming forward (a relay): the "message started" callback announces each message from a peer
// as soon as its header has arrived; Forward, called then, sends that message on to other peers
// as its bytes arrive (message-stream.h), each of them receiving one whole framed message
// identical to a Send of the complete one.
#ifndef HILO_SIM_NET_MESSAGE_ENDPOINT_H
#define HILO_SIM_NET_MESSAGE_ENDPOINT_H

#include "sim/net/message-connection.h"
#include "sim/net/message-transport.h"
#include "sim/net/message.h"
#include "sim/net/socket-options.h"

#include "hilo/core/status.h"

#include "ns3/callback.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

class MessageEndpoint : public MessageTransport
{
  public:
    static ns3::TypeId GetTypeId();
    MessageEndpoint();
    ~MessageEndpoint() override;

    /// Trace signature of "MessageDropped" (the others are MessageTransport's).
    typedef void (*MessageDroppedTracedCallback)(uint32_t peerId, uint32_t type,
                                                 uint64_t wireBytes);

    /// Places the endpoint on `node` and aggregates it there, so the node's disposal (at
    /// Simulator::Destroy) disposes it. REQUIRES: called once; the node has an IPv4/TCP stack and
    /// no other MessageEndpoint.
    void Install(ns3::Ptr<ns3::Node> node);
    ns3::Ptr<ns3::Node> GetNode() const { return m_node; }
    uint32_t GetLocalId() const override { return m_localId; }

    /// The socket options built from the attributes (used when none are given).
    SocketOptions GetDefaultSocketOptions() const;

    /// Accepts connections on `port`. Accepted connections inherit `options`; buffer sizes set
    /// for a peer with SetPeerSocketOptions replace them once the peer's hello arrives. The
    /// segment size cannot change after accept, so peers behind paths with different MTUs should
    /// use different listening ports (TransportHelper does this). May be called for several ports.
    void Listen(uint16_t port, const SocketOptions& options);
    void Listen(uint16_t port) { Listen(port, GetDefaultSocketOptions()); }
    /// Buffer sizes for connections accepted from `peerId`.
    void SetPeerSocketOptions(uint32_t peerId, const SocketOptions& options);

    /// Connects to the endpoint `peerId` at address:port. Messages may be sent to peerId at once.
    /// REQUIRES: no connection to peerId exists yet.
    ns3::Ptr<MessageConnection> Connect(uint32_t peerId, ns3::Ipv4Address address, uint16_t port,
                                        const SocketOptions& options);

    /// Connects to `peerId` again, with the address, port and options of the last Connect to it;
    /// the previous connection, if still open, is closed (its queued messages dropped).
    /// REQUIRES: Connect(peerId, ...) was called before.
    void Redial(uint32_t peerId) override;
    /// The peers this endpoint has connected to with Connect, ascending.
    std::vector<uint32_t> GetDialedPeers() const override;

    /// Queues a message to `peerId` (see MessageConnection::Send): payload real bytes, then
    /// wireBytes - payload->size() virtual bytes. If the peer has not connected yet, the message
    /// waits here; if its connection has ended (and no new one exists yet), the message is dropped
    /// and reported by the "MessageDropped" trace. InvalidArgument for a bad size or type.
    hilo::Status Send(uint32_t peerId, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wireBytes) override;

    /// Forwards the message now arriving from `fromPeer` with sequence `sequence` to each of
    /// `toPeers` while it arrives: every byte leaves once it has arrived, in chunks of the
    /// ForwardChunkBytes attribute. Call it from the message-started callback (or later, while
    /// the message is still arriving). Peers not connected yet get it when they connect. If the
    /// message never completes (its connection ends), a peer whose copy had started loses its
    /// connection. A peer whose connection has ended misses it (as with Send: "MessageDropped").
    /// NotFound if no such message is arriving.
    hilo::Status Forward(uint32_t fromPeer, uint64_t sequence,
                         const std::vector<uint32_t>& toPeers) override;

    /// The connection to `peerId`, or null if there is none (yet).
    ns3::Ptr<MessageConnection> GetConnection(uint32_t peerId) const;
    /// Every connection's TcpLinuxSocket (TcpLinuxSocket::TraceSample).
    std::vector<TcpTraceSample> SampleTcp() const override;
    /// Peers with an established connection, ascending.
    std::vector<uint32_t> GetConnectedPeers() const override;
    /// Closes every connection once its queue has drained into TCP.
    void CloseAll() override;
    /// Ends every connection at once (MessageConnection::Abort) and drops the messages waiting
    /// for peers that have not connected; no callback hears about these connections again.
    /// Connect parameters are kept for Redial.
    void Abort() override;
    /// Whether listeners accept new connections (true by default). While false, connection
    /// attempts get no answer and the connecting side's TCP retries, then gives up.
    void SetAccepting(bool accepting) override;

  protected:
    void DoDispose() override;

  private:
    struct Pending
    {
        uint32_t type;
        std::shared_ptr<const std::string> payload;
        uint64_t wireBytes;
        std::shared_ptr<MessageStream> stream; // a forwarded message (payload unused)
    };
    void SendPending(ns3::Ptr<MessageConnection> connection, std::vector<Pending>* pending);

    struct DialPlan
    {
        ns3::Ipv4Address address;
        uint16_t port;
        SocketOptions options;
    };

    MessageConnection::Hooks MakeHooks();
    ns3::Ptr<ns3::Socket> NewSocket(const SocketOptions& options);
    ns3::Ptr<MessageConnection> Dial(uint32_t peerId);
    bool HandleConnectionRequest(ns3::Ptr<ns3::Socket> socket, const ns3::Address& from);
    void HandleAccept(ns3::Ptr<ns3::Socket> socket, const ns3::Address& from);
    void HandleConnected(ns3::Ptr<MessageConnection> connection);
    void HandleStarted(ns3::Ptr<MessageConnection> connection, const MessageMeta& meta);
    void HandleReceived(ns3::Ptr<MessageConnection> connection, const Message& message);
    void HandleSent(ns3::Ptr<MessageConnection> connection, const MessageMeta& meta);
    void HandleClosed(ns3::Ptr<MessageConnection> connection, bool error);

    // Attributes.
    uint32_t m_localId{0};
    ns3::TypeId m_tcpVariant;
    uint32_t m_segmentBytes{1448};
    uint32_t m_sendBufferBytes{90 * 1448};
    uint32_t m_receiveBufferBytes{184 * 1448};
    uint64_t m_maxPayloadBytes{0};
    ns3::Time m_heartbeat;
    uint64_t m_forwardChunkBytes{16384};

    ns3::Ptr<ns3::Node> m_node;
    std::vector<ns3::Ptr<ns3::Socket>> m_listeners;
    std::map<uint32_t, ns3::Ptr<MessageConnection>> m_connections; // by peer id
    std::vector<ns3::Ptr<MessageConnection>> m_accepting;          // accepted, hello pending
    std::map<uint32_t, std::vector<Pending>> m_pending;            // to peers not yet connected
    std::map<uint32_t, SocketOptions> m_peerOptions;
    std::map<uint32_t, DialPlan> m_dials; // how Connect reached each peer, for Redial
    bool m_acceptsConnections{true};

    ns3::TracedCallback<uint32_t, uint32_t, uint64_t> m_droppedTrace;
};

} // namespace hilosim

#endif // HILO_SIM_NET_MESSAGE_ENDPOINT_H
