#include "sim/net/message-transport.h"

#include "ns3/trace-source-accessor.h"

namespace hilosim
{

NS_OBJECT_ENSURE_REGISTERED(MessageTransport);

ns3::TypeId
MessageTransport::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::MessageTransport")
            .SetParent<ns3::Object>()
            .SetGroupName("Hilo")
            .AddTraceSource("MessageStarted",
                            "A message's header arrived from a peer; its bytes follow.",
                            ns3::MakeTraceSourceAccessor(&MessageTransport::m_startedTrace),
                            "hilosim::MessageTransport::MessageStartedTracedCallback")
            .AddTraceSource("MessageSent",
                            "The last byte of a message left this node for the first time.",
                            ns3::MakeTraceSourceAccessor(&MessageTransport::m_sentTrace),
                            "hilosim::MessageTransport::MessageSentTracedCallback")
            .AddTraceSource("MessageReceived", "A whole message (real and virtual bytes) arrived.",
                            ns3::MakeTraceSourceAccessor(&MessageTransport::m_receivedTrace),
                            "hilosim::MessageTransport::MessageReceivedTracedCallback")
            .AddTraceSource("PeerConnected", "A peer became reachable.",
                            ns3::MakeTraceSourceAccessor(&MessageTransport::m_peerConnectedTrace),
                            "hilosim::MessageTransport::PeerTracedCallback")
            .AddTraceSource("PeerClosed", "A peer's connection ended.",
                            ns3::MakeTraceSourceAccessor(&MessageTransport::m_peerClosedTrace),
                            "hilosim::MessageTransport::PeerTracedCallback");
    return tid;
}

MessageTransport::MessageTransport() = default;
MessageTransport::~MessageTransport() = default;

void
MessageTransport::SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&> callback)
{
    m_receiveCallback = callback;
}

void
MessageTransport::SetMessageStartedCallback(
    ns3::Callback<void, uint32_t, const MessageMeta&> callback)
{
    m_startedCallback = callback;
}

hilo::Status
MessageTransport::Forward(uint32_t, uint64_t, const std::vector<uint32_t>&)
{
    return hilo::Status::NotSupported("this network model does not forward messages while they "
                                      "arrive");
}

void
MessageTransport::NotifyMessageStarted(uint32_t peerId, const MessageMeta& meta)
{
    m_startedTrace(peerId, meta);
    if (!m_startedCallback.IsNull())
    {
        m_startedCallback(peerId, meta);
    }
}

void
MessageTransport::SetPeerConnectedCallback(ns3::Callback<void, uint32_t> callback)
{
    m_connectedCallback = callback;
}

void
MessageTransport::SetPeerClosedCallback(ns3::Callback<void, uint32_t, bool> callback)
{
    m_closedCallback = callback;
}

void
MessageTransport::NotifySent(uint32_t peerId, const MessageMeta& meta)
{
    m_sentTrace(peerId, meta);
}

void
MessageTransport::NotifyReceived(uint32_t peerId, const Message& message)
{
    m_receivedTrace(peerId, message);
    if (!m_receiveCallback.IsNull())
    {
        m_receiveCallback(peerId, message);
    }
}

void
MessageTransport::NotifyPeerConnected(uint32_t peerId)
{
    m_peerConnectedTrace(peerId);
    if (!m_connectedCallback.IsNull())
    {
        m_connectedCallback(peerId);
    }
}

void
MessageTransport::NotifyPeerClosed(uint32_t peerId, bool error)
{
    m_peerClosedTrace(peerId);
    if (!m_closedCallback.IsNull())
    {
        m_closedCallback(peerId, error);
    }
}

void
MessageTransport::DoDispose()
{
    m_receiveCallback = ns3::MakeNullCallback<void, uint32_t, const Message&>();
    m_startedCallback = ns3::MakeNullCallback<void, uint32_t, const MessageMeta&>();
    m_connectedCallback = ns3::MakeNullCallback<void, uint32_t>();
    m_closedCallback = ns3::MakeNullCallback<void, uint32_t, bool>();
    ns3::Object::DoDispose();
}

} // namespace hilosim
