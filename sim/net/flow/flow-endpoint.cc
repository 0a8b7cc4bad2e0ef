#include "sim/net/flow/flow-endpoint.h"

#include "sim/net/message-connection.h"
#include "sim/net/message-frame.h"

#include "hilo/core/coding.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloFlowEndpoint");
NS_OBJECT_ENSURE_REGISTERED(FlowEndpoint);

ns3::TypeId
FlowEndpoint::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::FlowEndpoint")
            .SetParent<MessageTransport>()
            .SetGroupName("Hilo")
            .AddConstructor<FlowEndpoint>()
            .AddAttribute("MaxPayloadBytes",
                          "Largest real payload a received frame may announce; a larger one is "
                          "treated as a corrupt stream (as in the packet model).",
                          ns3::UintegerValue(uint64_t{1} << 31),
                          ns3::MakeUintegerAccessor(&FlowEndpoint::m_maxPayloadBytes),
                          ns3::MakeUintegerChecker<uint64_t>(1));
    return tid;
}

FlowEndpoint::FlowEndpoint() = default;
FlowEndpoint::~FlowEndpoint() = default;

void
FlowEndpoint::Install(ns3::Ptr<ns3::Node> node, uint32_t localId, ns3::Ptr<FlowNetwork> network)
{
    NS_ABORT_MSG_IF(m_node, "FlowEndpoint::Install: already installed on node " << m_node->GetId());
    NS_ABORT_MSG_IF(node->GetObject<MessageTransport>(),
                    "FlowEndpoint::Install: node " << node->GetId() << " already has a transport");
    m_node = node;
    m_localId = localId;
    m_network = network;
    node->AggregateObject(ns3::Ptr<FlowEndpoint>(this));
}

void
FlowEndpoint::Attach(uint32_t peer, Connection connection)
{
    NS_ABORT_MSG_IF(m_connections.count(peer), "FlowEndpoint: endpoint "
                                                   << m_localId
                                                   << " already has a connection to peer " << peer);
    // Raw `this`: the handlers are removed in DoDispose.
    m_network->SetSentHandler(connection.out, [this, peer](const FlowNetwork::Frame& frame)
                              { HandleSent(peer, frame); });
    m_network->SetArrivalHandler(connection.in, [this, peer](const FlowNetwork::Frame& frame)
                                 { HandleArrival(peer, frame); });
    m_connections[peer] = connection;
}

void
FlowEndpoint::Connect(uint32_t peer, uint32_t out, uint32_t in, ns3::Time handshakeRtt)
{
    Connection c;
    c.out = out;
    c.in = in;
    Attach(peer, c);
    auto hello = std::make_shared<std::string>();
    hilo::ByteWriter(hello.get()).PutU32(m_localId);
    Enqueue(peer, m_connections[peer], FrameHeader::kHelloType, hello, hello->size(),
            /*internal=*/true);
    FlushPending(peer);
    ns3::Simulator::ScheduleWithContext(m_node->GetId(), handshakeRtt,
                                        &FlowEndpoint::HandleConnected,
                                        ns3::Ptr<FlowEndpoint>(this), peer);
}

void
FlowEndpoint::Accept(uint32_t peer, uint32_t out, uint32_t in)
{
    Connection c;
    c.out = out;
    c.in = in;
    Attach(peer, c);
}

void
FlowEndpoint::HandleConnected(uint32_t peer)
{
    auto it = m_connections.find(peer);
    if (!m_network || it == m_connections.end() || it->second.closed)
    {
        return;
    }
    it->second.connected = true;
    m_network->Open(it->second.out);
    NotifyPeerConnected(peer);
}

void
FlowEndpoint::FlushPending(uint32_t peer)
{
    auto pending = m_pending.find(peer);
    if (pending == m_pending.end())
    {
        return;
    }
    Connection& c = m_connections.at(peer);
    for (Pending& p : pending->second)
    {
        Enqueue(peer, c, p.type, std::move(p.payload), p.wireBytes, /*internal=*/false);
    }
    m_pending.erase(pending);
}

void
FlowEndpoint::Enqueue(uint32_t peer, Connection& c, uint32_t type,
                      std::shared_ptr<const std::string> payload, uint64_t wireBytes, bool internal)
{
    FlowNetwork::Frame frame;
    frame.meta.type = type;
    frame.meta.payload_bytes = payload->size();
    frame.meta.wire_bytes = wireBytes;
    frame.meta.sent_at = ns3::Simulator::Now();
    frame.meta.sequence = internal ? 0 : c.nextTxSequence++;
    FrameHeader header;
    header.type = type;
    header.payload_bytes = payload->size();
    header.wire_bytes = wireBytes;
    header.sent_at_steps = frame.meta.sent_at.GetTimeStep();
    header.AppendTo(&frame.header);
    frame.payload = std::move(payload);
    frame.stream_bytes = FrameHeader::kBytes + wireBytes;
    frame.internal = internal;
    m_network->Enqueue(c.out, std::move(frame));
}

hilo::Status
FlowEndpoint::Send(uint32_t peerId, uint32_t type, std::shared_ptr<const std::string> payload,
                   uint64_t wireBytes)
{
    HILO_RETURN_IF_ERROR(MessageConnection::CheckMessage(type, payload, wireBytes));
    auto it = m_connections.find(peerId);
    if (it == m_connections.end())
    {
        m_pending[peerId].push_back(Pending{type, std::move(payload), wireBytes});
        return hilo::Status::Ok();
    }
    if (it->second.closed)
    {
        return hilo::Status::InvalidArgument("Send: connection to peer " + std::to_string(peerId) +
                                             " is closed");
    }
    Enqueue(peerId, it->second, type, std::move(payload), wireBytes, /*internal=*/false);
    return hilo::Status::Ok();
}

std::vector<TcpTraceSample>
FlowEndpoint::SampleTcp() const
{
    std::vector<TcpTraceSample> samples;
    for (const auto& [peer, c] : m_connections)
    {
        if (c.connected)
        {
            samples.push_back(m_network->TraceSample(c.out));
            samples.back().peer = peer;
        }
    }
    return samples;
}

std::vector<uint32_t>
FlowEndpoint::GetConnectedPeers() const
{
    std::vector<uint32_t> peers;
    for (const auto& [peer, c] : m_connections)
    {
        if (c.connected && !c.closed)
        {
            peers.push_back(peer);
        }
    }
    return peers;
}

void
FlowEndpoint::CloseAll()
{
    for (auto& [peer, c] : m_connections)
    {
        if (c.closed)
        {
            continue;
        }
        c.closed = true;
        // A frame of no bytes stands for the FIN: it arrives right behind the last message.
        FlowNetwork::Frame fin;
        fin.internal = true;
        m_network->Enqueue(c.out, std::move(fin));
    }
}

void
FlowEndpoint::HandleSent(uint32_t peer, const FlowNetwork::Frame& frame)
{
    NotifySent(peer, frame.meta);
}

void
FlowEndpoint::HandleArrival(uint32_t peer, const FlowNetwork::Frame& frame)
{
    auto it = m_connections.find(peer);
    if (it == m_connections.end())
    {
        return;
    }
    Connection& c = it->second;
    if (frame.header.empty())
    {
        // The peer closed: finish our side too, as the packet model does on a FIN.
        const bool wasClosed = c.closed;
        c.connected = false;
        if (!wasClosed)
        {
            CloseAll();
        }
        NotifyPeerClosed(peer, /*error=*/false);
        return;
    }
    auto header = FrameHeader::Parse(frame.header, m_maxPayloadBytes);
    if (!header.ok() || header->payload_bytes != frame.payload->size())
    {
        NS_LOG_ERROR("corrupt frame from peer " << peer);
        c.closed = true;
        NotifyPeerClosed(peer, /*error=*/true);
        return;
    }
    if (header->type == FrameHeader::kHelloType)
    {
        uint32_t id = 0;
        if (c.connected || !hilo::ByteReader(*frame.payload).GetU32(&id) || id != peer)
        {
            NS_LOG_ERROR("unexpected or malformed hello from peer " << peer);
            c.closed = true;
            NotifyPeerClosed(peer, /*error=*/true);
            return;
        }
        c.connected = true;
        m_network->Open(c.out);
        NotifyPeerConnected(peer);
        return;
    }
    Message message;
    message.type = header->type;
    message.payload = *frame.payload;
    message.wire_bytes = header->wire_bytes;
    message.sequence = c.nextRxSequence++;
    message.sent_at = ns3::TimeStep(header->sent_at_steps);
    message.received_at = ns3::Simulator::Now();
    NotifyReceived(peer, message);
}

void
FlowEndpoint::DoDispose()
{
    if (m_network)
    {
        for (const auto& [peer, c] : m_connections)
        {
            m_network->SetSentHandler(c.out, nullptr);
            m_network->SetArrivalHandler(c.in, nullptr);
        }
    }
    m_connections.clear();
    m_pending.clear();
    m_network = nullptr;
    m_node = nullptr;
    MessageTransport::DoDispose();
}

} // namespace hilosim
