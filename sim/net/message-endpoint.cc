#include "sim/net/message-endpoint.h"

#include "sim/net/tcp-linux-socket.h"

#include "ns3/abort.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/nstime.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloMessageEndpoint");

namespace
{
// Above any link a scenario may describe.
constexpr uint64_t kMaxPacingRateBps = uint64_t{1000} * 1000 * 1000 * 1000; // 1 Tbit/s
} // namespace
NS_OBJECT_ENSURE_REGISTERED(MessageEndpoint);

ns3::TypeId
MessageEndpoint::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::MessageEndpoint")
            .SetParent<MessageTransport>()
            .SetGroupName("Hilo")
            .AddConstructor<MessageEndpoint>()
            .AddAttribute("LocalId",
                          "This endpoint's peer id, sent in the hello of every connection it makes "
                          "(workers: worker index; see transport-helper.h for learner and relays).",
                          ns3::UintegerValue(0),
                          ns3::MakeUintegerAccessor(&MessageEndpoint::m_localId),
                          ns3::MakeUintegerChecker<uint32_t>())
            .AddAttribute(
                "TcpVariant", "Congestion control of sockets made with the default options.",
                ns3::TypeIdValue(ns3::TcpCubic::GetTypeId()),
                ns3::MakeTypeIdAccessor(&MessageEndpoint::m_tcpVariant), ns3::MakeTypeIdChecker())
            .AddAttribute("SegmentSize",
                          "TCP payload bytes per segment with the default options (MTU - 52).",
                          ns3::UintegerValue(1448),
                          ns3::MakeUintegerAccessor(&MessageEndpoint::m_segmentBytes),
                          ns3::MakeUintegerChecker<uint32_t>(64))
            .AddAttribute("SendBufferSize",
                          "TCP send buffer in bytes with the default options (bounds the data in "
                          "flight; whole segments).",
                          ns3::UintegerValue(90 * 1448),
                          ns3::MakeUintegerAccessor(&MessageEndpoint::m_sendBufferBytes),
                          ns3::MakeUintegerChecker<uint32_t>(1024))
            .AddAttribute("ReceiveBufferSize",
                          "TCP receive buffer in bytes with the default options. Keep it at least "
                          "2 x the peer's send buffer + 4 segments (see socket-options.h: ns-3 "
                          "3.37 crashes when a lossy sender is limited by the receive window).",
                          ns3::UintegerValue(184 * 1448),
                          ns3::MakeUintegerAccessor(&MessageEndpoint::m_receiveBufferBytes),
                          ns3::MakeUintegerChecker<uint32_t>(1024))
            .AddAttribute("MaxPayloadBytes",
                          "Largest real payload a received frame may announce; a larger one is "
                          "treated as a corrupt stream (bounds receiver memory).",
                          ns3::UintegerValue(uint64_t{1} << 31),
                          ns3::MakeUintegerAccessor(&MessageEndpoint::m_maxPayloadBytes),
                          ns3::MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("HeartbeatInterval",
                          "A connection that sent nothing for this long sends an empty internal "
                          "frame, so that TCP notices a path that died under an idle connection "
                          "(zero: never).",
                          ns3::TimeValue(ns3::Seconds(10)),
                          ns3::MakeTimeAccessor(&MessageEndpoint::m_heartbeat),
                          ns3::MakeTimeChecker(ns3::Time(0)))
            .AddAttribute("ForwardChunkBytes",
                          "A message forwarded while it arrives (Forward) is handed on in chunks "
                          "of at least this many arrived bytes (and its last bytes at once): "
                          "larger chunks mean fewer socket calls on a relay, and at most one "
                          "chunk's serialization more latency on the next link.",
                          ns3::UintegerValue(16384),
                          ns3::MakeUintegerAccessor(&MessageEndpoint::m_forwardChunkBytes),
                          ns3::MakeUintegerChecker<uint64_t>(1))
            .AddTraceSource("MessageDropped",
                            "A message to a peer whose connection had ended was dropped.",
                            ns3::MakeTraceSourceAccessor(&MessageEndpoint::m_droppedTrace),
                            "hilosim::MessageEndpoint::MessageDroppedTracedCallback");
    return tid;
}

MessageEndpoint::MessageEndpoint() = default;
MessageEndpoint::~MessageEndpoint() = default;

void
MessageEndpoint::Install(ns3::Ptr<ns3::Node> node)
{
    NS_ABORT_MSG_IF(m_node,
                    "MessageEndpoint::Install: already installed on node " << m_node->GetId());
    NS_ABORT_MSG_IF(node->GetObject<MessageEndpoint>(), "MessageEndpoint::Install: node "
                                                            << node->GetId()
                                                            << " already has a MessageEndpoint");
    m_node = node;
    node->AggregateObject(ns3::Ptr<MessageEndpoint>(this));
}

SocketOptions
MessageEndpoint::GetDefaultSocketOptions() const
{
    SocketOptions o;
    o.congestion_control = m_tcpVariant;
    o.segment_bytes = m_segmentBytes;
    o.send_buffer_bytes = m_sendBufferBytes;
    o.receive_buffer_bytes = m_receiveBufferBytes;
    return o;
}

ns3::Ptr<ns3::Socket>
MessageEndpoint::NewSocket(const SocketOptions& options)
{
    NS_ABORT_MSG_IF(!m_node, "MessageEndpoint: Install on a node first");
    // ns-3 caps a pacing sender at TcpSocketState::MaxPacingRate, 4 Gbit/s by default, which a
    // faster link would measure instead of itself; Linux has no such cap. The state object is
    // made with the socket, so its default must be set first.
    ns3::Config::SetDefault("ns3::TcpSocketState::MaxPacingRate",
                            ns3::DataRateValue(ns3::DataRate(kMaxPacingRateBps)));
    ns3::Ptr<ns3::Socket> socket = TcpLinuxSocket::Create(m_node);
    options.ApplyTo(socket);
    return socket;
}

MessageConnection::Hooks
MessageEndpoint::MakeHooks()
{
    MessageConnection::Hooks hooks;
    hooks.connected = ns3::MakeCallback(&MessageEndpoint::HandleConnected, this);
    hooks.started = ns3::MakeCallback(&MessageEndpoint::HandleStarted, this);
    hooks.received = ns3::MakeCallback(&MessageEndpoint::HandleReceived, this);
    hooks.sent = ns3::MakeCallback(&MessageEndpoint::HandleSent, this);
    hooks.closed = ns3::MakeCallback(&MessageEndpoint::HandleClosed, this);
    return hooks;
}

void
MessageEndpoint::Listen(uint16_t port, const SocketOptions& options)
{
    auto listener = NewSocket(options);
    const int bound = listener->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port));
    NS_ABORT_MSG_IF(bound != 0, "MessageEndpoint::Listen: port " << port << " on node "
                                                                 << m_node->GetId() << " is taken");
    listener->Listen();
    listener->SetAcceptCallback(ns3::MakeCallback(&MessageEndpoint::HandleConnectionRequest, this),
                                ns3::MakeCallback(&MessageEndpoint::HandleAccept, this));
    m_listeners.push_back(listener);
}

void
MessageEndpoint::SetPeerSocketOptions(uint32_t peerId, const SocketOptions& options)
{
    m_peerOptions[peerId] = options;
}

ns3::Ptr<MessageConnection>
MessageEndpoint::Connect(uint32_t peerId, ns3::Ipv4Address address, uint16_t port,
                         const SocketOptions& options)
{
    NS_ABORT_MSG_IF(m_connections.count(peerId),
                    "MessageEndpoint::Connect: endpoint "
                        << m_localId << " already has a connection to peer " << peerId);
    m_dials[peerId] = DialPlan{address, port, options};
    return Dial(peerId);
}

void
MessageEndpoint::Redial(uint32_t peerId)
{
    NS_ABORT_MSG_IF(!m_dials.count(peerId), "MessageEndpoint::Redial: endpoint "
                                                << m_localId << " never connected to peer "
                                                << peerId);
    auto old = m_connections.find(peerId);
    if (old != m_connections.end())
    {
        old->second->Abort();
        m_connections.erase(old);
    }
    Dial(peerId);
}

std::vector<uint32_t>
MessageEndpoint::GetDialedPeers() const
{
    std::vector<uint32_t> peers;
    for (const auto& [peer, dial] : m_dials)
    {
        peers.push_back(peer);
    }
    return peers;
}

ns3::Ptr<MessageConnection>
MessageEndpoint::Dial(uint32_t peerId)
{
    const DialPlan& dial = m_dials.at(peerId);
    auto socket = NewSocket(dial.options);
    auto connection =
        MessageConnection::Connect(socket, ns3::InetSocketAddress(dial.address, dial.port),
                                   m_localId, peerId, m_maxPayloadBytes, MakeHooks());
    connection->SetHeartbeat(m_heartbeat);
    m_connections[peerId] = connection;
    auto pending = m_pending.find(peerId);
    if (pending != m_pending.end())
    {
        SendPending(connection, &pending->second);
        m_pending.erase(pending);
    }
    return connection;
}

hilo::Status
MessageEndpoint::Send(uint32_t peerId, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wireBytes)
{
    // Same checks as the connection, so a bad message fails now, not when the peer arrives.
    HILO_RETURN_IF_ERROR(MessageConnection::CheckMessage(type, payload, wireBytes));
    auto it = m_connections.find(peerId);
    if (it == m_connections.end())
    {
        m_pending[peerId].push_back(Pending{type, std::move(payload), wireBytes});
        return hilo::Status::Ok();
    }
    if (it->second->IsClosed() || !it->second->Send(type, payload, wireBytes).ok())
    {
        NS_LOG_INFO("endpoint " << m_localId << ": dropping a message of type " << type
                                << " to peer " << peerId << ", whose connection has ended");
        m_droppedTrace(peerId, type, wireBytes);
    }
    return hilo::Status::Ok();
}

void
MessageEndpoint::SendPending(ns3::Ptr<MessageConnection> connection, std::vector<Pending>* pending)
{
    for (auto& p : *pending)
    {
        if (p.stream)
        {
            connection->SendStream(std::move(p.stream));
        }
        else
        {
            connection->Send(p.type, std::move(p.payload), p.wireBytes);
        }
    }
}

hilo::Status
MessageEndpoint::Forward(uint32_t fromPeer, uint64_t sequence, const std::vector<uint32_t>& toPeers)
{
    auto from = m_connections.find(fromPeer);
    std::shared_ptr<MessageStream> stream =
        from == m_connections.end() ? nullptr
                                    : from->second->StreamIncoming(sequence, m_forwardChunkBytes);
    if (!stream)
    {
        return hilo::Status::NotFound("Forward: no message " + std::to_string(sequence) +
                                      " is arriving from peer " + std::to_string(fromPeer));
    }
    for (uint32_t peer : toPeers)
    {
        auto it = m_connections.find(peer);
        if (it != m_connections.end())
        {
            if (it->second->IsClosed() || !it->second->SendStream(stream).ok())
            {
                // As Send: a peer whose connection has ended misses the message.
                m_droppedTrace(peer, stream->GetHeader().type, stream->GetHeader().wire_bytes);
            }
        }
        else
        {
            const FrameHeader& h = stream->GetHeader();
            m_pending[peer].push_back(Pending{h.type, nullptr, h.wire_bytes, stream});
        }
    }
    return hilo::Status::Ok();
}

ns3::Ptr<MessageConnection>
MessageEndpoint::GetConnection(uint32_t peerId) const
{
    auto it = m_connections.find(peerId);
    return it == m_connections.end() ? nullptr : it->second;
}

std::vector<TcpTraceSample>
MessageEndpoint::SampleTcp() const
{
    std::vector<TcpTraceSample> samples;
    for (const auto& [peer, connection] : m_connections)
    {
        auto socket = ns3::DynamicCast<TcpLinuxSocket>(connection->GetSocket());
        if (connection->IsConnected() && socket)
        {
            samples.push_back(socket->TraceSample(peer));
        }
    }
    return samples;
}

std::vector<uint32_t>
MessageEndpoint::GetConnectedPeers() const
{
    std::vector<uint32_t> peers;
    for (const auto& [peer, connection] : m_connections)
    {
        if (connection->IsConnected())
        {
            peers.push_back(peer);
        }
    }
    return peers;
}

void
MessageEndpoint::CloseAll()
{
    for (auto& [peer, connection] : m_connections)
    {
        connection->Close();
    }
    for (auto& listener : m_listeners)
    {
        listener->Close();
    }
}

void
MessageEndpoint::Abort()
{
    for (auto& [peer, connection] : m_connections)
    {
        connection->Abort();
    }
    for (auto& connection : m_accepting)
    {
        connection->Abort();
    }
    m_accepting.clear();
    m_pending.clear();
}

void
MessageEndpoint::SetAccepting(bool accepting)
{
    m_acceptsConnections = accepting;
}

bool
MessageEndpoint::HandleConnectionRequest(ns3::Ptr<ns3::Socket>, const ns3::Address&)
{
    return m_acceptsConnections;
}

void
MessageEndpoint::HandleAccept(ns3::Ptr<ns3::Socket> socket, const ns3::Address& from)
{
    NS_LOG_FUNCTION(this << m_localId << socket);
    m_accepting.push_back(
        MessageConnection::Accept(socket, m_localId, m_maxPayloadBytes, MakeHooks()));
    m_accepting.back()->SetHeartbeat(m_heartbeat);
}

void
MessageEndpoint::HandleConnected(ns3::Ptr<MessageConnection> connection)
{
    const uint32_t peer = connection->GetPeerId();
    auto accepting = std::find(m_accepting.begin(), m_accepting.end(), connection);
    if (accepting != m_accepting.end())
    {
        m_accepting.erase(accepting);
        auto existing = m_connections.find(peer);
        if (existing != m_connections.end() && existing->second != connection)
        {
            NS_LOG_WARN("endpoint " << m_localId << ": peer " << peer
                                    << " connected again; the new connection replaces the old");
            existing->second->Abort();
        }
        m_connections[peer] = connection;
        auto options = m_peerOptions.find(peer);
        if (options != m_peerOptions.end())
        {
            options->second.ApplyBuffersTo(connection->GetSocket());
        }
        auto pending = m_pending.find(peer);
        if (pending != m_pending.end())
        {
            SendPending(connection, &pending->second);
            m_pending.erase(pending);
        }
    }
    NotifyPeerConnected(peer);
}

void
MessageEndpoint::HandleStarted(ns3::Ptr<MessageConnection> connection, const MessageMeta& meta)
{
    NotifyMessageStarted(connection->GetPeerId(), meta);
}

void
MessageEndpoint::HandleReceived(ns3::Ptr<MessageConnection> connection, const Message& message)
{
    NotifyReceived(connection->GetPeerId(), message);
}

void
MessageEndpoint::HandleSent(ns3::Ptr<MessageConnection> connection, const MessageMeta& meta)
{
    NotifySent(connection->GetPeerId(), meta);
}

void
MessageEndpoint::HandleClosed(ns3::Ptr<MessageConnection> connection, bool error)
{
    if (!connection->HasPeerId())
    {
        m_accepting.erase(std::remove(m_accepting.begin(), m_accepting.end(), connection),
                          m_accepting.end());
        return;
    }
    // A connection that another one to the same peer has already replaced says nothing about
    // the peer: only the current connection's end is news.
    auto current = m_connections.find(connection->GetPeerId());
    if (current == m_connections.end() || current->second != connection)
    {
        return;
    }
    NotifyPeerClosed(connection->GetPeerId(), error);
}

void
MessageEndpoint::DoDispose()
{
    for (auto& [peer, connection] : m_connections)
    {
        connection->Dispose();
    }
    for (auto& connection : m_accepting)
    {
        connection->Dispose();
    }
    m_connections.clear();
    m_accepting.clear();
    m_pending.clear();
    for (auto& listener : m_listeners)
    {
        listener->SetAcceptCallback(
            ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
            ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, const ns3::Address&>());
    }
    m_listeners.clear();
    m_node = nullptr;
    MessageTransport::DoDispose();
}

} // namespace hilosim
