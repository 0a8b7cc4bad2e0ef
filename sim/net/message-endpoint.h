// A node's message transport: one endpoint per node, identified by a peer id, that listens for
// and makes connections (one TCP connection per pair of endpoints, used in both directions) and
// sends and receives framed messages (message-frame.h) by peer id.
//
// Connection model: the side that starts the exchange (a worker, or a relay towards the learner)
// connects; the other side (learner, relay) listens on one port and accepts any number of peers.
// The connecting side sends a hello carrying its id first, so the accepting side knows who is who
// before any message. Messages to a peer that has not connected yet wait in the endpoint and go
// out when it does.
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

    /// Queues a message to `peerId` (see MessageConnection::Send): payload real bytes, then
    /// wireBytes - payload->size() virtual bytes. If the peer has not connected yet, the message
    /// waits here. InvalidArgument for a bad size or type, or a closed connection.
    /// A peer becomes reachable when our connect succeeded or its hello arrived; a closed
    /// callback's `error` is true for a TCP error or corrupt stream.
    hilo::Status Send(uint32_t peerId, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wireBytes) override;

    /// Forwards the message now arriving from `fromPeer` with sequence `sequence` to each of
    /// `toPeers` while it arrives: every byte leaves once it has arrived, in chunks of the
    /// ForwardChunkBytes attribute. Call it from the message-started callback (or later, while
    /// the message is still arriving). Peers not connected yet get it when they connect. If the
    /// message never completes (its connection ends), a peer whose copy had started loses its
    /// connection. NotFound if no such message is arriving; InvalidArgument for a closed peer.
    hilo::Status Forward(uint32_t fromPeer, uint64_t sequence,
                         const std::vector<uint32_t>& toPeers) override;

    /// The connection to `peerId`, or null if there is none (yet).
    ns3::Ptr<MessageConnection> GetConnection(uint32_t peerId) const;
    /// Peers with an established connection, ascending.
    std::vector<uint32_t> GetConnectedPeers() const override;
    /// Closes every connection once its queue has drained into TCP.
    void CloseAll() override;

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

    MessageConnection::Hooks MakeHooks();
    ns3::Ptr<ns3::Socket> NewSocket(const SocketOptions& options);
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
    uint64_t m_forwardChunkBytes{16384};

    ns3::Ptr<ns3::Node> m_node;
    std::vector<ns3::Ptr<ns3::Socket>> m_listeners;
    std::map<uint32_t, ns3::Ptr<MessageConnection>> m_connections; // by peer id
    std::vector<ns3::Ptr<MessageConnection>> m_accepting;          // accepted, hello pending
    std::map<uint32_t, std::vector<Pending>> m_pending;            // to peers not yet connected
    std::map<uint32_t, SocketOptions> m_peerOptions;
};

} // namespace hilosim

#endif // HILO_SIM_NET_MESSAGE_ENDPOINT_H
