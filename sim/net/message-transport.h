// The message transport the applications talk to: one per node, identified by a peer id, sending
// framed messages (real payload bytes standing for `wireBytes` on the network) to peers by id and
// reporting what arrives. Two network models implement it:
//   - MessageEndpoint (message-endpoint.h): ns-3 TCP, segment by segment (the "packet" model);
//   - FlowEndpoint (flow/flow-endpoint.h): each message a flow with max-min fair rates on the
//     same topology (the "flow" model).
// Both deliver the payload bytes exactly as sent, in order per peer, with sent_at/received_at in
// simulated time, so an application cannot tell which one it runs on except by the timing.
//
// This base owns the callbacks and trace sources; implementations report events through the
// protected Notify* methods, which fire the trace first and then the callback.
#ifndef HILO_SIM_NET_MESSAGE_TRANSPORT_H
#define HILO_SIM_NET_MESSAGE_TRANSPORT_H

#include "sim/net/message.h"
#include "sim/net/tcp-trace.h"

#include "hilo/core/status.h"

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

class MessageTransport : public ns3::Object
{
  public:
    static ns3::TypeId GetTypeId();
    MessageTransport();
    ~MessageTransport() override;

    /// Trace signatures.
    typedef void (*MessageSentTracedCallback)(uint32_t peerId, const MessageMeta& meta);
    typedef void (*MessageReceivedTracedCallback)(uint32_t peerId, const Message& message);
    typedef void (*MessageStartedTracedCallback)(uint32_t peerId, const MessageMeta& meta);
    typedef void (*PeerTracedCallback)(uint32_t peerId);

    /// This endpoint's peer id (see transport-installer.h for the id space).
    virtual uint32_t GetLocalId() const = 0;

    /// Queues a message to `peerId`: payload real bytes, then wireBytes - payload->size()
    /// virtual bytes. The payload is shared, not copied. If the peer is not reachable yet, the
    /// message waits and leaves when it is. InvalidArgument for a null payload, wireBytes below
    /// the payload size, the reserved type 0xFFFFFFFF, or a closed connection.
    virtual hilo::Status Send(uint32_t peerId, uint32_t type,
                              std::shared_ptr<const std::string> payload, uint64_t wireBytes) = 0;

    /// Forwards the message now arriving from `fromPeer` (announced by the message-started
    /// callback with `sequence`) to each of `toPeers` while it arrives, each receiving one whole
    /// framed message identical to a Send of the complete one (a streaming relay). NotSupported
    /// from a network model that cannot (the caller then sends the whole message once it has
    /// arrived); NotFound if no such message is arriving.
    virtual hilo::Status Forward(uint32_t fromPeer, uint64_t sequence,
                                 const std::vector<uint32_t>& toPeers);

    /// Faults (a node's process dying and coming back): end every connection at once, dial a
    /// peer this node connected to again, the peers it dials, and whether it accepts
    /// connections. The packet model implements them; a network model that cannot aborts (the
    /// scenario validator admits faults only under models that support them).
    virtual void Abort();
    virtual void Redial(uint32_t peerId);
    virtual std::vector<uint32_t> GetDialedPeers() const;
    virtual void SetAccepting(bool accepting);

    /// Peers with an established connection, ascending.
    virtual std::vector<uint32_t> GetConnectedPeers() const = 0;
    /// Closes every connection once what is queued on it has been handed to the network.
    virtual void CloseAll() = 0;
    /// The sending state of this node's end of each connection, ascending by peer, for the TCP
    /// trace (sim/net/tcp-trace.h); only reads. Empty from a model that has none.
    virtual std::vector<TcpTraceSample> SampleTcp() const { return {}; }

    /// Called for every message received from any peer, after the "MessageReceived" trace.
    void SetReceiveCallback(ns3::Callback<void, uint32_t, const Message&> callback);
    /// Called when a message's header has arrived from a peer (its bytes follow), after the
    /// "MessageStarted" trace: type, sizes, the sequence it will be delivered with, sender time.
    void SetMessageStartedCallback(ns3::Callback<void, uint32_t, const MessageMeta&> callback);
    /// Called when a peer becomes reachable.
    void SetPeerConnectedCallback(ns3::Callback<void, uint32_t> callback);
    /// Called when a peer's connection ends; `error` is true for a transport error.
    void SetPeerClosedCallback(ns3::Callback<void, uint32_t, bool> callback);

  protected:
    void DoDispose() override;

    /// The last byte of a message left this node for the first time.
    void NotifySent(uint32_t peerId, const MessageMeta& meta);
    /// A whole message arrived.
    void NotifyReceived(uint32_t peerId, const Message& message);
    /// A message's header arrived; its bytes follow.
    void NotifyMessageStarted(uint32_t peerId, const MessageMeta& meta);
    void NotifyPeerConnected(uint32_t peerId);
    void NotifyPeerClosed(uint32_t peerId, bool error);

  private:
    ns3::Callback<void, uint32_t, const Message&> m_receiveCallback;
    ns3::Callback<void, uint32_t, const MessageMeta&> m_startedCallback;
    ns3::Callback<void, uint32_t> m_connectedCallback;
    ns3::Callback<void, uint32_t, bool> m_closedCallback;

    ns3::TracedCallback<uint32_t, const MessageMeta&> m_sentTrace;
    ns3::TracedCallback<uint32_t, const Message&> m_receivedTrace;
    ns3::TracedCallback<uint32_t, const MessageMeta&> m_startedTrace;
    ns3::TracedCallback<uint32_t> m_peerConnectedTrace;
    ns3::TracedCallback<uint32_t> m_peerClosedTrace;
};

} // namespace hilosim

#endif // HILO_SIM_NET_MESSAGE_TRANSPORT_H
