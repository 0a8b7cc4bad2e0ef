#include "sim/net/link-helper.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/error-model.h"
#include "ns3/ipv4-interface-container.h"
#include "ns3/net-device-container.h"
#include "ns3/nstime.h"
#include "ns3/pie-queue-disc.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/pointer.h"
#include "ns3/queue-disc-container.h"
#include "ns3/queue-size.h"
#include "ns3/red-queue-disc.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace hilosim
{

LinkHelper::LinkHelper(int64_t firstStream)
  : m_nextStream(firstStream)
{
}

InstalledLink
LinkHelper::Install(const std::string& name, ns3::Ptr<ns3::Node> a, ns3::Ptr<ns3::Node> b,
                    const LinkSpec& spec, ns3::Ipv4AddressHelper& addresses)
{
    NS_ABORT_MSG_IF(!spec.Validate(name).ok(),
                    "LinkHelper::Install: link "
                        << name << " was not validated: " << spec.Validate(name).message());
    const bool withQueueDisc = spec.queue_disc != "none";
    const uint32_t deviceQueue = withQueueDisc ? 1 : spec.queue_packets;

    ns3::PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", ns3::DataRateValue(spec.rate));
    p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(spec.mtu));
    p2p.SetChannelAttribute("Delay", ns3::TimeValue(spec.delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                 ns3::QueueSizeValue(ns3::QueueSize(ns3::PACKETS, deviceQueue)));
    ns3::NetDeviceContainer devices = p2p.Install(a, b);

    if (spec.loss_rate > 0)
    {
        for (uint32_t i = 0; i < devices.GetN(); ++i)
        {
            auto loss = ns3::CreateObject<ns3::RateErrorModel>();
            loss->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
            loss->SetRate(spec.loss_rate);
            m_nextStream += loss->AssignStreams(m_nextStream);
            devices.Get(i)->SetAttribute("ReceiveErrorModel", ns3::PointerValue(loss));
        }
    }

    // A root queue disc must exist before addresses are assigned, or Ipv4AddressHelper installs
    // the default pfifo_fast.
    ns3::TrafficControlHelper tch;
    const ns3::QueueSizeValue limit(ns3::QueueSize(ns3::PACKETS, spec.queue_packets));
    if (spec.queue_disc == "fifo")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", limit);
    }
    else if (spec.queue_disc == "red")
    {
        // Classic guidance: min_th a fifth of the buffer, max_th three times min_th.
        const double minTh = std::max(1.0, spec.queue_packets / 5.0);
        const double maxTh = std::min<double>(spec.queue_packets, 3.0 * minTh);
        tch.SetRootQueueDisc(
            "ns3::RedQueueDisc", "MaxSize", limit, "MinTh", ns3::DoubleValue(minTh), "MaxTh",
            ns3::DoubleValue(maxTh), "MeanPktSize", ns3::UintegerValue(spec.mtu), "LinkBandwidth",
            ns3::DataRateValue(spec.rate), "LinkDelay", ns3::TimeValue(spec.delay));
    }
    else if (spec.queue_disc == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", limit);
    }
    else if (spec.queue_disc == "fq_codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", limit);
    }
    else if (spec.queue_disc == "pie")
    {
        tch.SetRootQueueDisc("ns3::PieQueueDisc", "MaxSize", limit);
    }
    if (withQueueDisc)
    {
        ns3::QueueDiscContainer discs = tch.Install(devices);
        for (uint32_t i = 0; i < discs.GetN(); ++i)
        {
            if (auto red = ns3::DynamicCast<ns3::RedQueueDisc>(discs.Get(i)))
            {
                m_nextStream += red->AssignStreams(m_nextStream);
            }
            else if (auto pie = ns3::DynamicCast<ns3::PieQueueDisc>(discs.Get(i)))
            {
                m_nextStream += pie->AssignStreams(m_nextStream);
            }
        }
    }

    ns3::Ipv4InterfaceContainer interfaces = addresses.Assign(devices);
    addresses.NewNetwork();
    if (!withQueueDisc)
    {
        tch.Uninstall(devices); // drop the default pfifo_fast Assign installed
    }

    InstalledLink link;
    link.name = name;
    link.spec = spec;
    link.device_a = ns3::DynamicCast<ns3::PointToPointNetDevice>(devices.Get(0));
    link.device_b = ns3::DynamicCast<ns3::PointToPointNetDevice>(devices.Get(1));
    link.address_a = interfaces.GetAddress(0);
    link.address_b = interfaces.GetAddress(1);
    return link;
}

} // namespace hilosim
