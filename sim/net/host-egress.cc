#include "sim/net/host-egress.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/fifo-queue-disc.h"
#include "ns3/fq-codel-queue-disc.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-size.h"
#include "ns3/queue.h"
#include "ns3/string.h"
#include "ns3/traffic-control-layer.h"

namespace hilosim
{

namespace
{

const ns3::QueueSize kBacklog(ns3::PACKETS, kHostBacklogPackets);

ns3::Ptr<ns3::QueueDisc>
FairQueue(uint32_t mtu)
{
    auto fq = ns3::CreateObject<ns3::FqCoDelQueueDisc>();
    fq->SetAttribute("MaxSize", ns3::QueueSizeValue(kBacklog));
    // CoDel disarmed: with TSQ a Linux socket's packets never sit in fq_codel long enough for it
    // to act; here the whole backlog waits in the queue disc, so CoDel must not see it.
    fq->SetAttribute("Target", ns3::StringValue("1000000s"));
    fq->SetAttribute("Interval", ns3::StringValue("1000000s"));
    fq->SetQuantum(mtu); // one packet per flow per round (no attribute in ns-3 3.37)
    fq->SetAttribute("EnableSetAssociativeHash", ns3::BooleanValue(true));
    return fq;
}

} // namespace

void
MakeHostEgressFair(ns3::Ptr<ns3::Node> node)
{
    auto tc = node->GetObject<ns3::TrafficControlLayer>();
    NS_ABORT_MSG_IF(!tc, "MakeHostEgressFair: node " << node->GetId() << " has no internet stack");
    bool replaced = false;
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        auto device = ns3::DynamicCast<ns3::PointToPointNetDevice>(node->GetDevice(i));
        if (!device)
        {
            continue;
        }
        ns3::Ptr<ns3::QueueDisc> disc = tc->GetRootQueueDiscOnDevice(device);
        ns3::Ptr<ns3::Queue<ns3::Packet>> queue = device->GetQueue();
        if (disc && !ns3::DynamicCast<ns3::FifoQueueDisc>(disc))
        {
            continue; // an AQM the scenario chose, or already fair
        }
        const bool busy = (disc && disc->GetNPackets() > 0) || (queue && queue->GetNPackets() > 0);
        if (busy)
        {
            // Packets already queued keep their order: only room for the backlog is added.
            if (disc && disc->GetMaxSize().GetValue() < kHostBacklogPackets)
            {
                disc->SetMaxSize(kBacklog);
            }
            else if (!disc && queue->GetMaxSize().GetValue() < kHostBacklogPackets)
            {
                queue->SetMaxSize(kBacklog);
            }
            continue;
        }
        if (disc)
        {
            tc->DeleteRootQueueDiscOnDevice(device);
        }
        tc->SetRootQueueDiscOnDevice(device, FairQueue(device->GetMtu()));
        if (queue)
        {
            // The queue disc is the buffer; the device holds the packet being sent, as in the
            // ns-3 AQM examples (and LinkHelper with a queue disc).
            queue->SetMaxSize(ns3::QueueSize(ns3::PACKETS, 1));
        }
        replaced = true;
    }
    if (replaced && tc->IsInitialized())
    {
        // Already running: wire the new queue discs to their devices now (before Simulator::Run
        // the layer's own initialization does it).
        tc->ScanDevices();
        for (uint32_t i = 0; i < node->GetNDevices(); ++i)
        {
            if (auto disc = tc->GetRootQueueDiscOnDevice(node->GetDevice(i)))
            {
                disc->Initialize();
            }
        }
    }
}

} // namespace hilosim
