#include "sim/drivers/emulation/tap-inlet.h"

#include "ns3/abort.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/packet.h"

namespace hilosim
{

NS_OBJECT_ENSURE_REGISTERED(TapInlet);

ns3::TypeId
TapInlet::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("hilosim::TapInlet")
                                 .SetParent<ns3::NetDevice>()
                                 .SetGroupName("HiloSim")
                                 .AddConstructor<TapInlet>();
    return tid;
}

void
TapInlet::Setup(ns3::Ptr<ns3::NetDevice> device, ns3::Ptr<ns3::Node> stand_in)
{
    m_device = device;
    m_standIn = stand_in;
    m_tc = device->GetNode()->GetObject<ns3::TrafficControlLayer>();
    NS_ABORT_MSG_IF(!m_tc, "TapInlet: the link's node has no traffic-control layer");
}

bool
TapInlet::Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address& dest, uint16_t protocolNumber)
{
    if (protocolNumber != ns3::Ipv4L3Protocol::PROT_NUMBER)
    {
        ++m_droppedNonIpv4;
        return false;
    }
    // The queue disc item carries the IPv4 header apart from the payload (the flow hash of
    // fq_codel reads it) and puts it back when the device takes the packet: serialized again, so
    // its checksum must be computed again too.
    ns3::Ipv4Header header;
    packet->RemoveHeader(header);
    header.EnableChecksum();
    m_tc->Send(m_device, ns3::Create<ns3::Ipv4QueueDiscItem>(packet, dest, protocolNumber, header));
    return true;
}

bool
TapInlet::SendFrom(ns3::Ptr<ns3::Packet>, const ns3::Address&, const ns3::Address&, uint16_t)
{
    NS_FATAL_ERROR(
        "TapInlet::SendFrom: not supported (TapBridge in ConfigureLocal mode uses Send)");
    return false;
}

void
TapInlet::SetReceiveCallback(ReceiveCallback cb)
{
    m_rx = cb;
    m_device->SetReceiveCallback(ns3::MakeCallback(&TapInlet::FromLink, this));
}

void
TapInlet::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
    m_promisc = cb;
    m_device->SetPromiscReceiveCallback(ns3::MakeCallback(&TapInlet::FromLinkPromisc, this));
}

bool
TapInlet::FromLink(ns3::Ptr<ns3::NetDevice>, ns3::Ptr<const ns3::Packet> packet, uint16_t protocol,
                   const ns3::Address& from)
{
    return m_rx.IsNull() || m_rx(this, packet, protocol, from);
}

bool
TapInlet::FromLinkPromisc(ns3::Ptr<ns3::NetDevice>, ns3::Ptr<const ns3::Packet> packet,
                          uint16_t protocol, const ns3::Address& from, const ns3::Address& to,
                          PacketType type)
{
    return m_promisc.IsNull() || m_promisc(this, packet, protocol, from, to, type);
}

void
TapInlet::DoDispose()
{
    m_device = nullptr;
    m_tc = nullptr;
    m_standIn = nullptr;
    m_rx = ReceiveCallback();
    m_promisc = PromiscReceiveCallback();
    ns3::NetDevice::DoDispose();
}

} // namespace hilosim
