// TapInlet: the ns-3 device a TapBridge is bridged to in an emulated network. It stands for one
// link device of a node whose traffic comes from a real process (through a tap) instead of ns-3's
// own IP stack:
//   - packets from the tap enter the link device through the node's traffic-control layer, so the
//     link's queue discipline and buffer (LinkHelper: a queue disc in front of a one-packet device
//     queue) treat them exactly as packets the node's own stack would send. A TapBridge bridged to
//     the link device itself would call its Send() directly, past the queue disc, into a
//     one-packet queue;
//   - only IPv4 enters: a point-to-point device aborts on any other protocol (ARP, IPv6), which a
//     kernel may send before its tap is configured;
//   - packets the link delivers go to the TapBridge (and never to the node's own stack, which
//     would answer TCP segments it does not know with resets).
// GetNode() returns a stand-in node without an IPv4 stack: TapBridge in ConfigureLocal mode then
// takes the tap's address and mask from its IpAddress and Netmask attributes instead of looking
// up an IPv4 interface of this device (which has none).
#ifndef HILOSIM_DRIVERS_EMULATION_TAP_INLET_H
#define HILOSIM_DRIVERS_EMULATION_TAP_INLET_H

#include "ns3/channel.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/ptr.h"
#include "ns3/traffic-control-layer.h"

namespace ns3
{
class Packet;
}

namespace hilosim
{

class TapInlet : public ns3::NetDevice
{
  public:
    static ns3::TypeId GetTypeId();
    TapInlet() = default;

    /// `device`: the link device, installed on its node with an IPv4 stack and traffic control.
    /// `stand_in`: a node without IPv4 (see the file comment).
    void Setup(ns3::Ptr<ns3::NetDevice> device, ns3::Ptr<ns3::Node> stand_in);

    /// Packets from the tap that were not IPv4 (dropped).
    uint64_t GetDroppedNonIpv4() const { return m_droppedNonIpv4; }

    // ns3::NetDevice
    void SetIfIndex(const uint32_t index) override { m_ifIndex = index; }
    uint32_t GetIfIndex() const override { return m_ifIndex; }
    ns3::Ptr<ns3::Channel> GetChannel() const override { return m_device->GetChannel(); }
    void SetAddress(ns3::Address address) override { m_device->SetAddress(address); }
    ns3::Address GetAddress() const override { return m_device->GetAddress(); }
    bool SetMtu(const uint16_t mtu) override { return m_device->SetMtu(mtu); }
    uint16_t GetMtu() const override { return m_device->GetMtu(); }
    bool IsLinkUp() const override { return m_device->IsLinkUp(); }
    void AddLinkChangeCallback(ns3::Callback<void> callback) override
    {
        m_device->AddLinkChangeCallback(callback);
    }
    bool IsBroadcast() const override { return m_device->IsBroadcast(); }
    ns3::Address GetBroadcast() const override { return m_device->GetBroadcast(); }
    bool IsMulticast() const override { return m_device->IsMulticast(); }
    ns3::Address GetMulticast(ns3::Ipv4Address group) const override
    {
        return m_device->GetMulticast(group);
    }
    ns3::Address GetMulticast(ns3::Ipv6Address group) const override
    {
        return m_device->GetMulticast(group);
    }
    bool IsBridge() const override { return false; }
    bool IsPointToPoint() const override { return m_device->IsPointToPoint(); }
    bool Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address& dest,
              uint16_t protocolNumber) override;
    bool SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address& source,
                  const ns3::Address& dest, uint16_t protocolNumber) override;
    ns3::Ptr<ns3::Node> GetNode() const override { return m_standIn; }
    void SetNode(ns3::Ptr<ns3::Node> node) override { m_standIn = node; }
    bool NeedsArp() const override { return false; }
    void SetReceiveCallback(ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override { return false; }

  protected:
    void DoDispose() override;

  private:
    bool FromLink(ns3::Ptr<ns3::NetDevice> device, ns3::Ptr<const ns3::Packet> packet,
                  uint16_t protocol, const ns3::Address& from);
    bool FromLinkPromisc(ns3::Ptr<ns3::NetDevice> device, ns3::Ptr<const ns3::Packet> packet,
                         uint16_t protocol, const ns3::Address& from, const ns3::Address& to,
                         PacketType type);

    ns3::Ptr<ns3::NetDevice> m_device;
    ns3::Ptr<ns3::TrafficControlLayer> m_tc;
    ns3::Ptr<ns3::Node> m_standIn;
    uint32_t m_ifIndex{0};
    ReceiveCallback m_rx;
    PromiscReceiveCallback m_promisc;
    uint64_t m_droppedNonIpv4{0};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_TAP_INLET_H
