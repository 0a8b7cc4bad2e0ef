// One TCP connection carrying framed messages in both directions (format: message-frame.h).
//
// Sending: Send queues a message; the connection hands bytes to TCP only up to GetTxAvailable()
// and refills from the socket's send callback, so any number of messages of any size can be
// queued back to back. Real bytes are copied into packets chunk by chunk; padding is zero-area.
// Receiving: bytes are reassembled across segments; a message is delivered only when its last
// byte (real or virtual) has arrived. A streaming relay forwards a message while it arrives: the
// "started" hook announces each message once its header is in, StreamIncoming feeds its bytes to
// a MessageStream (message-stream.h) as they come, and SendStream on other connections sends that
// stream's frame no faster than its bytes arrive.
//
// Connections are made by a MessageEndpoint (message-endpoint.h), which owns them and reports
// their events; applications normally talk to the endpoint, not to connections.
#ifndef HILO_SIM_NET_MESSAGE_CONNECTION_H
#define HILO_SIM_NET_MESSAGE_CONNECTION_H

#include "sim/net/message-frame.h"
#include "sim/net/message-stream.h"
#include "sim/net/message.h"
#include "sim/net/socket-options.h"

#include "hilo/core/status.h"

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

namespace hilosim
{

class MessageConnection
  : public ns3::Object
  , private FrameObserver
{
  public:
    /// What the owning endpoint hears about. Any may be null.
    struct Hooks
    {
        /// Client: TCP connected. Server: the peer's hello arrived (peer id now known).
        ns3::Callback<void, ns3::Ptr<MessageConnection>> connected;
        /// A message's header arrived (its bytes follow); meta.sequence is the sequence the
        /// message will be delivered with, meta.sent_at the sender's time.
        ns3::Callback<void, ns3::Ptr<MessageConnection>, const MessageMeta&> started;
        ns3::Callback<void, ns3::Ptr<MessageConnection>, const Message&> received;
        /// The last byte of a message was transmitted for the first time.
        ns3::Callback<void, ns3::Ptr<MessageConnection>, const MessageMeta&> sent;
        /// The connection ended: peer closed (error false) or TCP error/corrupt stream (true).
        ns3::Callback<void, ns3::Ptr<MessageConnection>, bool> closed;
    };

    static ns3::TypeId GetTypeId();
    MessageConnection();
    ~MessageConnection() override;

    /// Client side: connects `socket` (not yet connected) to `peer`, sending a hello with
    /// `localId` ahead of any message. The TCP connect happens in an event at the current time
    /// (so this may be called before Simulator::Run). Messages may be queued at once.
    static ns3::Ptr<MessageConnection> Connect(ns3::Ptr<ns3::Socket> socket,
                                               const ns3::Address& peer, uint32_t localId,
                                               uint32_t peerId, uint64_t maxPayloadBytes,
                                               Hooks hooks);
    /// Server side: wraps a socket returned by accept; the peer id arrives with its hello.
    static ns3::Ptr<MessageConnection> Accept(ns3::Ptr<ns3::Socket> socket, uint32_t localId,
                                              uint64_t maxPayloadBytes, Hooks hooks);

    /// Queues a message: `payload` travels as real bytes, followed by wireBytes - payload->size()
    /// virtual bytes. The payload is shared, not copied, so one buffer can go to many peers.
    /// InvalidArgument if wireBytes < payload size, payload is null, the type is reserved
    /// (FrameHeader::kHelloType), or the connection is closed.
    hilo::Status Send(uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wireBytes);
    /// Queues the frame of `stream`, whose bytes leave as they arrive (message-stream.h). An
    /// aborted stream fails the connection if its frame had started to leave, and is dropped if
    /// not. InvalidArgument if the connection is closed or the stream null.
    hilo::Status SendStream(std::shared_ptr<MessageStream> stream);
    /// Receiving side: feeds the message now arriving, if its sequence is `sequence`, to a new
    /// stream (with the bytes that already arrived) and returns it; null if no such message is
    /// arriving. The stream is aborted if the connection ends before the message does.
    std::shared_ptr<MessageStream> StreamIncoming(uint64_t sequence, uint64_t chunkBytes);
    /// The checks Send makes on a message, without a connection.
    static hilo::Status CheckMessage(uint32_t type,
                                     const std::shared_ptr<const std::string>& payload,
                                     uint64_t wireBytes);

    /// Closes after every queued message has been handed to TCP (TCP then delivers them).
    void Close();

    uint32_t GetPeerId() const { return m_peerId; }
    bool HasPeerId() const { return m_peerKnown; }
    /// Connected at the TCP level (client) or hello received (server), and not closed.
    bool IsConnected() const { return m_connected && !m_closed; }
    bool IsClosed() const { return m_closed; }
    /// Stream bytes queued here and not yet accepted by the TCP socket.
    uint64_t GetUnsentBytes() const { return m_unsentBytes; }
    /// Stream bytes accepted by TCP and not yet transmitted for the first time.
    uint64_t GetBytesInSocket() const { return m_streamAccepted - m_streamTransmitted; }
    /// Stream bytes received (frame headers, payloads and padding).
    uint64_t GetReceivedStreamBytes() const { return m_rx.GetStreamBytes(); }
    ns3::Ptr<ns3::Socket> GetSocket() const { return m_socket; }

  protected:
    void DoDispose() override;

  private:
    struct Outgoing
    {
        std::string header;                         // 32 frame-header bytes
        std::shared_ptr<const std::string> payload; // real bytes
        uint64_t frameBytes{0};                     // header + wire bytes
        uint64_t handed{0};                         // frame bytes accepted by TCP so far
        MessageMeta meta;
        bool internal{false};                  // the hello: not reported
        std::shared_ptr<MessageStream> stream; // forwarded while it arrives (payload unused)
    };
    struct Mark
    {
        uint64_t streamEnd; // stream offset just past the frame
        MessageMeta meta;
        bool internal;
    };

    void Attach(ns3::Ptr<ns3::Socket> socket);
    void StartConnect(ns3::Address peer);
    void Enqueue(uint32_t type, std::shared_ptr<const std::string> payload, uint64_t wireBytes,
                 bool internal);
    void TrySend();
    void Fail();
    void HandleConnected(ns3::Ptr<ns3::Socket> socket);
    void HandleConnectFailed(ns3::Ptr<ns3::Socket> socket);
    void HandleSendSpace(ns3::Ptr<ns3::Socket> socket, uint32_t available);
    void Refill();
    void HandleDataSent(ns3::Ptr<ns3::Socket> socket, uint32_t bytes);
    void HandleRead(ns3::Ptr<ns3::Socket> socket);
    void HandlePeerClose(ns3::Ptr<ns3::Socket> socket);
    void HandleError(ns3::Ptr<ns3::Socket> socket);
    void Deliver(Message&& message);
    // FrameObserver: the message now arriving.
    void FrameStarted(const FrameHeader& header) override;
    void FrameBytes(std::string_view payload, uint64_t padding) override;
    void AbortIncomingStream();

    ns3::Ptr<ns3::Socket> m_socket;
    Hooks m_hooks;
    uint32_t m_localId{0};
    uint32_t m_peerId{0};
    bool m_peerKnown{false};
    bool m_connected{false};
    bool m_closed{false};
    bool m_closeWhenDrained{false};
    bool m_refillPending{false};

    std::deque<Outgoing> m_txQueue;
    std::deque<Mark> m_marks; // frames accepted by TCP, awaiting first transmission
    uint64_t m_unsentBytes{0};
    uint64_t m_streamAccepted{0};
    uint64_t m_streamTransmitted{0};
    uint64_t m_nextTxSequence{0};
    uint64_t m_nextRxSequence{0};
    MessageReassembler m_rx;
    bool m_rxFrameIsMessage{false};            // the frame arriving is a message (not a hello)
    std::shared_ptr<MessageStream> m_rxStream; // the message arriving, when it is forwarded
};

} // namespace hilosim

#endif // HILO_SIM_NET_MESSAGE_CONNECTION_H
