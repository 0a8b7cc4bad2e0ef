#include "sim/drivers/ns3/ns3-role-port.h"

#include "ns3/simulator.h"

namespace hilosim
{

Ns3RolePort::Ns3RolePort(ns3::Ptr<MessageTransport> endpoint)
  : m_endpoint(endpoint)
{
}

Ns3RolePort::~Ns3RolePort() = default;

double
Ns3RolePort::Now() const
{
    return ns3::Simulator::Now().GetSeconds();
}

void
Ns3RolePort::After(double modelled_s, ComputePhase, double, std::function<void()> fn)
{
    ns3::Simulator::Schedule(ns3::Seconds(modelled_s), std::move(fn));
}

hilo::Status
Ns3RolePort::Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                  uint64_t wire_bytes)
{
    return m_endpoint->Send(peer, type, std::move(payload), wire_bytes);
}

hilo::Status
Ns3RolePort::Forward(uint32_t from_peer, uint64_t sequence, const std::vector<uint32_t>& to_peers)
{
    return m_endpoint->Forward(from_peer, sequence, to_peers);
}

void
Ns3RolePort::Stop()
{
    ns3::Simulator::Stop();
}

void
Ns3RolePort::Dispose()
{
    m_endpoint = nullptr;
}

RoleMessage
ToRoleMessage(const Message& message)
{
    RoleMessage m;
    m.type = message.type;
    m.payload = message.payload;
    m.wire_bytes = message.wire_bytes;
    m.sequence = message.sequence;
    return m;
}

RoleMessageHead
ToRoleMessageHead(const MessageMeta& meta)
{
    RoleMessageHead h;
    h.type = meta.type;
    h.payload_bytes = meta.payload_bytes;
    h.wire_bytes = meta.wire_bytes;
    h.sequence = meta.sequence;
    return h;
}

} // namespace hilosim
