// Installs one LinkSpec between two nodes: point-to-point devices and channel, receive-side loss,
// queue discipline and an IPv4 /30 subnet. A thin installer in the ns-3 helper sense: it holds no
// state beyond the next random stream to hand out.
#ifndef HILO_SIM_NET_LINK_HELPER_H
#define HILO_SIM_NET_LINK_HELPER_H

#include "sim/net/link-spec.h"

#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-address.h"
#include "ns3/node.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>

namespace hilosim
{

/// One installed link. "a" is the end given first to Install (by convention the learner side).
struct InstalledLink
{
    std::string name;                              // "uplink", "worker 3", "region eu wan", ...
    LinkSpec spec;                                 // what was installed
    ns3::Ptr<ns3::PointToPointNetDevice> device_a; // transmits a -> b
    ns3::Ptr<ns3::PointToPointNetDevice> device_b; // transmits b -> a
    ns3::Ipv4Address address_a;
    ns3::Ipv4Address address_b;
};

class LinkHelper
{
  public:
    /// `firstStream`: the ns-3 random stream of the first loss model this helper creates.
    explicit LinkHelper(int64_t firstStream);

    /// REQUIRES: spec.Validate(...) is ok; both nodes carry an IPv4 stack; `addresses` has a base
    /// set (a /30 mask is enough). Takes the current network of `addresses` and advances it.
    /// Loss applies to each direction independently (a RateErrorModel on each receiving device).
    /// With queue_disc "none" the device's drop-tail queue holds `queue_packets`; otherwise the
    /// device queue holds one packet and the queue disc is the link's buffer, as in the ns-3 AQM
    /// examples.
    InstalledLink Install(const std::string& name, ns3::Ptr<ns3::Node> a, ns3::Ptr<ns3::Node> b,
                          const LinkSpec& spec, ns3::Ipv4AddressHelper& addresses);

    /// The stream the next loss model will get.
    int64_t GetNextStream() const { return m_nextStream; }

  private:
    int64_t m_nextStream;
};

} // namespace hilosim

#endif // HILO_SIM_NET_LINK_HELPER_H
