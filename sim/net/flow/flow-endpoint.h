// A node's message transport in the flow model: the same contract as MessageEndpoint (see
// message-transport.h), with each connection's two directions as FlowNetwork streams instead of
// an ns-3 TCP socket. No packet crosses the ns-3 links.
//
// Connection model, as in the packet model: the connecting side's connection is up one handshake
// round trip after it connects (its SYN-ACK arrived); it then sends a hello frame carrying its
// id ahead of any message. The accepting side learns of the peer when that hello arrives, and
// only then may send to it. Messages to a peer that is not reachable yet wait and leave when it
// is. Every message travels as its real frame (32-byte header + payload) plus its virtual
// padding; the receiver parses the header, so type, sizes and sent_at come off the wire.
#ifndef HILO_SIM_NET_FLOW_FLOW_ENDPOINT_H
#define HILO_SIM_NET_FLOW_FLOW_ENDPOINT_H

#include "sim/net/flow/flow-network.h"
#include "sim/net/message-transport.h"

#include "ns3/node.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

class FlowEndpoint : public MessageTransport
{
  public:
    static ns3::TypeId GetTypeId();
    FlowEndpoint();
    ~FlowEndpoint() override;

    /// Places the endpoint on `node` (aggregated, so the node's disposal disposes it) with peer id
    /// `localId`, sending over `network`. REQUIRES: called once; no other transport on the node.
    void Install(ns3::Ptr<ns3::Node> node, uint32_t localId, ns3::Ptr<FlowNetwork> network);

    /// This side connects to `peer`: `out` carries our messages, `in` the peer's. The hello
    /// leaves at once; the connection is up `handshakeRtt` from now. REQUIRES: no connection to
    /// `peer` yet; `peer` calls Accept with the same streams swapped.
    void Connect(uint32_t peer, uint32_t out, uint32_t in, ns3::Time handshakeRtt);
    /// This side accepts `peer`'s connection; the peer is reachable once its hello arrives.
    void Accept(uint32_t peer, uint32_t out, uint32_t in);

    uint32_t GetLocalId() const override { return m_localId; }
    hilo::Status Send(uint32_t peerId, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wireBytes) override;
    /// Every connected peer's outgoing stream (FlowNetwork::TraceSample).
    std::vector<TcpTraceSample> SampleTcp() const override;
    std::vector<uint32_t> GetConnectedPeers() const override;
    /// Closes every connection once its queued messages have left; the peer hears of it when the
    /// last one has arrived.
    void CloseAll() override;

  protected:
    void DoDispose() override;

  private:
    struct Connection
    {
        uint32_t out{0};
        uint32_t in{0};
        bool connected{false};
        bool closed{false};
        uint64_t nextTxSequence{0};
        uint64_t nextRxSequence{0};
    };
    struct Pending
    {
        uint32_t type;
        std::shared_ptr<const std::string> payload;
        uint64_t wireBytes;
    };

    void Attach(uint32_t peer, Connection connection);
    void Enqueue(uint32_t peer, Connection& c, uint32_t type,
                 std::shared_ptr<const std::string> payload, uint64_t wireBytes, bool internal);
    void HandleConnected(uint32_t peer);
    void HandleArrival(uint32_t peer, const FlowNetwork::Frame& frame);
    void HandleSent(uint32_t peer, const FlowNetwork::Frame& frame);
    void FlushPending(uint32_t peer);

    uint32_t m_localId{0};
    uint64_t m_maxPayloadBytes{0};
    ns3::Ptr<ns3::Node> m_node;
    ns3::Ptr<FlowNetwork> m_network;
    std::map<uint32_t, Connection> m_connections;       // by peer id
    std::map<uint32_t, std::vector<Pending>> m_pending; // to peers without a connection
};

} // namespace hilosim

#endif // HILO_SIM_NET_FLOW_FLOW_ENDPOINT_H
