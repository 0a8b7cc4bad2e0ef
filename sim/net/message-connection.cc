#include "sim/net/message-connection.h"

#include "hilo/core/coding.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloMessageConnection");
NS_OBJECT_ENSURE_REGISTERED(MessageConnection);

ns3::TypeId
MessageConnection::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("hilosim::MessageConnection")
                                 .SetParent<ns3::Object>()
                                 .SetGroupName("Hilo")
                                 .AddConstructor<MessageConnection>();
    return tid;
}

MessageConnection::MessageConnection()
  : m_rx(0)
{
}

MessageConnection::~MessageConnection() = default;

ns3::Ptr<MessageConnection>
MessageConnection::Connect(ns3::Ptr<ns3::Socket> socket, const ns3::Address& peer, uint32_t localId,
                           uint32_t peerId, uint64_t maxPayloadBytes, Hooks hooks)
{
    auto c = ns3::CreateObject<MessageConnection>();
    c->m_rx = MessageReassembler(maxPayloadBytes);
    c->m_hooks = std::move(hooks);
    c->m_localId = localId;
    c->m_peerId = peerId;
    c->m_peerKnown = true;
    // The hello goes first so that the acceptor learns who we are before any message.
    auto hello = std::make_shared<std::string>();
    hilo::ByteWriter(hello.get()).PutU32(localId);
    c->Enqueue(FrameHeader::kHelloType, hello, hello->size(), /*internal=*/true);
    c->Attach(socket);
    socket->SetConnectCallback(ns3::MakeCallback(&MessageConnection::HandleConnected, c),
                               ns3::MakeCallback(&MessageConnection::HandleConnectFailed, c));
    // From an event in the node's context: before Simulator::Run the node (and its traffic-control
    // layer) is not initialized yet, and sending then crashes ns-3; events at the same time run in
    // scheduling order, so this one runs after the node's initialization.
    ns3::Simulator::ScheduleWithContext(socket->GetNode()->GetId(), ns3::Time(0),
                                        &MessageConnection::StartConnect, c, peer);
    return c;
}

void
MessageConnection::StartConnect(ns3::Address peer)
{
    if (m_closed || !m_socket)
    {
        return;
    }
    if (m_socket->Connect(peer) != 0)
    {
        NS_LOG_WARN("connect to peer " << m_peerId << " failed at once: errno "
                                       << m_socket->GetErrno());
        Fail();
    }
}

ns3::Ptr<MessageConnection>
MessageConnection::Accept(ns3::Ptr<ns3::Socket> socket, uint32_t localId, uint64_t maxPayloadBytes,
                          Hooks hooks)
{
    auto c = ns3::CreateObject<MessageConnection>();
    c->m_rx = MessageReassembler(maxPayloadBytes);
    c->m_hooks = std::move(hooks);
    c->m_localId = localId;
    c->Attach(socket);
    return c;
}

void
MessageConnection::Attach(ns3::Ptr<ns3::Socket> socket)
{
    // Raw `this` in the socket callbacks: the socket is ours and is unhooked in DoDispose.
    m_socket = socket;
    m_socket->SetRecvCallback(ns3::MakeCallback(&MessageConnection::HandleRead, this));
    m_socket->SetSendCallback(ns3::MakeCallback(&MessageConnection::HandleSendSpace, this));
    m_socket->SetDataSentCallback(ns3::MakeCallback(&MessageConnection::HandleDataSent, this));
    m_socket->SetCloseCallbacks(ns3::MakeCallback(&MessageConnection::HandlePeerClose, this),
                                ns3::MakeCallback(&MessageConnection::HandleError, this));
}

void
MessageConnection::DoDispose()
{
    if (m_socket)
    {
        m_socket->SetRecvCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
        m_socket->SetSendCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, uint32_t>());
        m_socket->SetDataSentCallback(
            ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, uint32_t>());
        m_socket->SetCloseCallbacks(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                                    ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
        m_socket->SetConnectCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                                     ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>());
    }
    m_socket = nullptr;
    m_hooks = Hooks();
    m_txQueue.clear();
    m_marks.clear();
    AbortIncomingStream();
    ns3::Object::DoDispose();
}

hilo::Status
MessageConnection::CheckMessage(uint32_t type, const std::shared_ptr<const std::string>& payload,
                                uint64_t wireBytes)
{
    if (!payload)
    {
        return hilo::Status::InvalidArgument("Send: null payload");
    }
    if (type == FrameHeader::kHelloType)
    {
        return hilo::Status::InvalidArgument("Send: message type 0xFFFFFFFF is reserved");
    }
    if (wireBytes < payload->size())
    {
        return hilo::Status::InvalidArgument("Send: wire size " + std::to_string(wireBytes) +
                                             " is below the payload's " +
                                             std::to_string(payload->size()) + " real bytes");
    }
    return hilo::Status::Ok();
}

hilo::Status
MessageConnection::Send(uint32_t type, std::shared_ptr<const std::string> payload,
                        uint64_t wireBytes)
{
    HILO_RETURN_IF_ERROR(CheckMessage(type, payload, wireBytes));
    if (m_closed || m_closeWhenDrained)
    {
        return hilo::Status::InvalidArgument("Send: connection to peer " +
                                             std::to_string(m_peerId) + " is closed");
    }
    Enqueue(type, std::move(payload), wireBytes, /*internal=*/false);
    TrySend();
    return hilo::Status::Ok();
}

hilo::Status
MessageConnection::SendStream(std::shared_ptr<MessageStream> stream)
{
    if (!stream)
    {
        return hilo::Status::InvalidArgument("SendStream: null stream");
    }
    if (m_closed || m_closeWhenDrained)
    {
        return hilo::Status::InvalidArgument("SendStream: connection to peer " +
                                             std::to_string(m_peerId) + " is closed");
    }
    const FrameHeader& h = stream->GetHeader();
    Outgoing out;
    out.meta.type = h.type;
    out.meta.payload_bytes = h.payload_bytes;
    out.meta.wire_bytes = h.wire_bytes;
    out.meta.sent_at = ns3::Simulator::Now();
    out.meta.sequence = m_nextTxSequence++;
    out.header = stream->GetHeaderBytes();
    out.frameBytes = stream->GetFrameBytes();
    out.stream = stream;
    m_unsentBytes += out.frameBytes;
    m_txQueue.push_back(std::move(out));
    if (!stream->IsComplete() && !stream->IsAborted())
    {
        ns3::Ptr<MessageConnection> self(this);
        stream->AddWaiter([self]() { self->TrySend(); });
    }
    TrySend();
    return hilo::Status::Ok();
}

std::shared_ptr<MessageStream>
MessageConnection::StreamIncoming(uint64_t sequence, uint64_t chunkBytes)
{
    if (!m_rxFrameIsMessage || m_nextRxSequence != sequence || m_closed)
    {
        return nullptr;
    }
    if (!m_rxStream)
    {
        m_rxStream = std::make_shared<MessageStream>(
            m_rx.GetCurrentFrame(), ns3::Simulator::Now().GetTimeStep(), chunkBytes);
        const std::string_view payload = m_rx.GetCurrentPayload();
        const uint64_t padding = m_rx.GetCurrentArrived() - payload.size();
        if (!payload.empty() || padding > 0)
        {
            m_rxStream->Append(payload, padding);
        }
    }
    return m_rxStream;
}

void
MessageConnection::FrameStarted(const FrameHeader& header)
{
    if (header.type == FrameHeader::kHelloType || !m_peerKnown)
    {
        return; // Deliver handles (or rejects) it
    }
    m_rxFrameIsMessage = true;
    if (!m_hooks.started.IsNull())
    {
        MessageMeta meta;
        meta.type = header.type;
        meta.payload_bytes = header.payload_bytes;
        meta.wire_bytes = header.wire_bytes;
        meta.sequence = m_nextRxSequence;
        meta.sent_at = ns3::TimeStep(static_cast<uint64_t>(header.sent_at_steps));
        m_hooks.started(ns3::Ptr<MessageConnection>(this), meta);
    }
}

void
MessageConnection::FrameBytes(std::string_view payload, uint64_t padding)
{
    if (m_rxStream)
    {
        m_rxStream->Append(payload, padding);
    }
}

void
MessageConnection::AbortIncomingStream()
{
    m_rxFrameIsMessage = false;
    if (m_rxStream)
    {
        std::shared_ptr<MessageStream> stream = std::move(m_rxStream);
        m_rxStream = nullptr;
        stream->Abort();
    }
}

void
MessageConnection::Enqueue(uint32_t type, std::shared_ptr<const std::string> payload,
                           uint64_t wireBytes, bool internal)
{
    Outgoing out;
    out.meta.type = type;
    out.meta.payload_bytes = payload->size();
    out.meta.wire_bytes = wireBytes;
    out.meta.sent_at = ns3::Simulator::Now();
    out.meta.sequence = internal ? 0 : m_nextTxSequence++;
    FrameHeader header;
    header.type = type;
    header.payload_bytes = payload->size();
    header.wire_bytes = wireBytes;
    header.sent_at_steps = out.meta.sent_at.GetTimeStep();
    header.AppendTo(&out.header);
    out.payload = std::move(payload);
    out.frameBytes = FrameHeader::kBytes + wireBytes;
    out.internal = internal;
    m_unsentBytes += out.frameBytes;
    m_txQueue.push_back(std::move(out));
}

void
MessageConnection::TrySend()
{
    if (!m_socket || m_closed || !m_connected)
    {
        return;
    }
    while (!m_txQueue.empty())
    {
        const uint32_t available = m_socket->GetTxAvailable();
        if (available == 0)
        {
            return; // HandleSendSpace resumes
        }
        Outgoing& out = m_txQueue.front();
        // A forwarded message leaves no faster than it arrives.
        uint64_t limit = out.frameBytes;
        std::string_view payload;
        if (out.stream)
        {
            if (out.stream->IsAborted())
            {
                if (out.handed > 0)
                {
                    NS_LOG_WARN("a message forwarded to peer "
                                << m_peerId << " ended before its last byte arrived");
                    Fail(); // the peer holds half a frame: the stream cannot go on
                    return;
                }
                m_unsentBytes -= out.frameBytes;
                m_txQueue.pop_front(); // never started: drop it
                continue;
            }
            limit = out.stream->GetAvailableBytes();
            payload = out.stream->GetPayload();
        }
        else
        {
            payload = *out.payload;
        }
        if (out.handed == limit)
        {
            return; // the stream wakes us when more has arrived
        }
        const uint64_t realEnd = FrameHeader::kBytes + out.meta.payload_bytes;
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(available, limit - out.handed));
        ns3::Ptr<ns3::Packet> packet;
        if (out.handed < realEnd)
        {
            // Real bytes (rest of the header, then payload) go in their own packet, so that the
            // padding packet that follows stays zero-area.
            n = static_cast<uint32_t>(std::min<uint64_t>(n, realEnd - out.handed));
            std::string chunk;
            chunk.reserve(n);
            if (out.handed < FrameHeader::kBytes)
            {
                const size_t h = std::min<uint64_t>(n, FrameHeader::kBytes - out.handed);
                chunk.append(out.header, out.handed, h);
            }
            const uint64_t payloadOffset =
                std::max<uint64_t>(out.handed, FrameHeader::kBytes) - FrameHeader::kBytes;
            chunk.append(payload.substr(payloadOffset, n - chunk.size()));
            packet = ns3::Create<ns3::Packet>(reinterpret_cast<const uint8_t*>(chunk.data()), n);
        }
        else
        {
            packet = ns3::Create<ns3::Packet>(n); // virtual padding: no payload memory
        }
        const int sent = m_socket->Send(packet);
        if (sent <= 0)
        {
            NS_LOG_WARN("socket refused " << n << " bytes (errno " << m_socket->GetErrno()
                                          << "); retrying on the next send callback");
            return;
        }
        out.handed += static_cast<uint64_t>(sent);
        m_unsentBytes -= static_cast<uint64_t>(sent);
        m_streamAccepted += static_cast<uint64_t>(sent);
        if (out.handed == out.frameBytes)
        {
            m_marks.push_back(Mark{m_streamAccepted, out.meta, out.internal});
            m_txQueue.pop_front();
        }
    }
    if (m_closeWhenDrained)
    {
        m_closed = true;
        m_socket->Close(); // TCP still delivers what it holds, then sends FIN
    }
}

void
MessageConnection::Close()
{
    if (m_closed || m_closeWhenDrained)
    {
        return;
    }
    m_closeWhenDrained = true;
    if (!m_connected)
    {
        // Nothing can drain before the connection exists; closing now drops the queue.
        m_closed = true;
        m_txQueue.clear();
        m_unsentBytes = 0;
        if (m_socket)
        {
            m_socket->Close();
        }
        return;
    }
    TrySend();
}

void
MessageConnection::Fail()
{
    if (m_closed)
    {
        return;
    }
    ns3::Ptr<MessageConnection> self(this);
    m_closed = true;
    m_txQueue.clear();
    m_unsentBytes = 0;
    if (m_socket)
    {
        m_socket->Close();
    }
    AbortIncomingStream();
    if (!m_hooks.closed.IsNull())
    {
        m_hooks.closed(self, /*error=*/true);
    }
}

void
MessageConnection::HandleConnected(ns3::Ptr<ns3::Socket> socket)
{
    NS_LOG_FUNCTION(this << m_peerId);
    ns3::Ptr<MessageConnection> self(this);
    m_connected = true;
    TrySend();
    if (!m_hooks.connected.IsNull())
    {
        m_hooks.connected(self);
    }
}

void
MessageConnection::HandleConnectFailed(ns3::Ptr<ns3::Socket> socket)
{
    NS_LOG_WARN("connection to peer " << m_peerId << " failed");
    Fail();
}

void
MessageConnection::HandleSendSpace(ns3::Ptr<ns3::Socket> socket, uint32_t available)
{
    // Refill from a fresh event, never from inside the socket: ns-3 3.37 calls this from the
    // middle of TcpSocketBase::SendPendingData, and adding data there crashed it under loss
    // (null TcpTxItem in TcpRateLinux::SkbSent). Same simulated time, so no throughput cost.
    if (!m_refillPending)
    {
        m_refillPending = true;
        ns3::Simulator::ScheduleNow(&MessageConnection::Refill, ns3::Ptr<MessageConnection>(this));
    }
}

void
MessageConnection::Refill()
{
    m_refillPending = false;
    TrySend();
}

void
MessageConnection::HandleDataSent(ns3::Ptr<ns3::Socket> socket, uint32_t bytes)
{
    ns3::Ptr<MessageConnection> self(this);
    m_streamTransmitted += bytes;
    while (!m_marks.empty() && m_marks.front().streamEnd <= m_streamTransmitted)
    {
        const Mark mark = m_marks.front();
        m_marks.pop_front();
        if (!mark.internal && !m_hooks.sent.IsNull())
        {
            m_hooks.sent(self, mark.meta);
        }
    }
}

void
MessageConnection::HandleRead(ns3::Ptr<ns3::Socket> socket)
{
    ns3::Ptr<MessageConnection> self(this);
    const auto deliver = [this](Message&& message) { Deliver(std::move(message)); };
    while (ns3::Ptr<ns3::Packet> packet = socket->Recv())
    {
        if (packet->GetSize() == 0)
        {
            break;
        }
        hilo::Status status = m_rx.Consume(packet, deliver, this);
        if (!status.ok())
        {
            NS_LOG_ERROR("closing connection with peer " << m_peerId << ": " << status.ToString());
            Fail();
            return;
        }
        if (m_closed && !m_socket)
        {
            return; // disposed from a callback
        }
    }
}

void
MessageConnection::Deliver(Message&& message)
{
    m_rxFrameIsMessage = false;
    m_rxStream = nullptr; // complete: the forwarders hold it until their copies are out
    if (message.type == FrameHeader::kHelloType)
    {
        uint32_t peerId = 0;
        if (m_peerKnown || !hilo::ByteReader(message.payload).GetU32(&peerId))
        {
            NS_LOG_ERROR("unexpected or malformed hello on connection with peer " << m_peerId);
            ns3::Simulator::ScheduleNow(&MessageConnection::Fail,
                                        ns3::Ptr<MessageConnection>(this));
            return;
        }
        m_peerId = peerId;
        m_peerKnown = true;
        m_connected = true;
        TrySend();
        if (!m_hooks.connected.IsNull())
        {
            m_hooks.connected(ns3::Ptr<MessageConnection>(this));
        }
        return;
    }
    if (!m_peerKnown)
    {
        NS_LOG_ERROR("message before hello on an accepted connection");
        ns3::Simulator::ScheduleNow(&MessageConnection::Fail, ns3::Ptr<MessageConnection>(this));
        return;
    }
    message.sequence = m_nextRxSequence++;
    message.received_at = ns3::Simulator::Now();
    if (!m_hooks.received.IsNull())
    {
        m_hooks.received(ns3::Ptr<MessageConnection>(this), message);
    }
}

void
MessageConnection::HandlePeerClose(ns3::Ptr<ns3::Socket> socket)
{
    NS_LOG_FUNCTION(this << m_peerId);
    ns3::Ptr<MessageConnection> self(this);
    const bool wasClosed = m_closed;
    if (m_rx.IsMidFrame())
    {
        NS_LOG_WARN("peer " << m_peerId << " closed in the middle of a message");
        AbortIncomingStream();
    }
    if (!wasClosed)
    {
        // Finish sending what is queued, then close our half.
        m_closeWhenDrained = true;
        TrySend();
        if (!m_hooks.closed.IsNull())
        {
            m_hooks.closed(self, /*error=*/false);
        }
    }
}

void
MessageConnection::HandleError(ns3::Ptr<ns3::Socket> socket)
{
    NS_LOG_WARN("TCP error on connection with peer " << m_peerId << ": errno "
                                                     << socket->GetErrno());
    Fail();
}

} // namespace hilosim
