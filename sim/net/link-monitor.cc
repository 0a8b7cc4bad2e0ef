#include "sim/net/link-monitor.h"

#include "ns3/abort.h"
#include "ns3/callback.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace hilosim
{

struct LinkMonitor::Direction
{
    LinkUsage usage;
    ns3::DataRate rate{0};
    double window_s{0};
    std::vector<double> bits; // by window index

    void OnTx(ns3::Ptr<const ns3::Packet> packet)
    {
        usage.bytes += packet->GetSize();
        ++usage.packets;
        // The frame occupies the link from now for size / rate: spread its bits over the windows
        // that interval covers.
        double start = ns3::Simulator::Now().GetSeconds();
        const double end = start + rate.CalculateBytesTxTime(packet->GetSize()).GetSeconds();
        const double bps = static_cast<double>(rate.GetBitRate());
        while (start < end)
        {
            const size_t w = static_cast<size_t>(start / window_s);
            const double window_end = static_cast<double>(w + 1) * window_s;
            const double until = std::min(end, window_end);
            if (bits.size() <= w)
            {
                bits.resize(w + 1, 0.0);
            }
            bits[w] += (until - start) * bps;
            start = until;
        }
    }
};

LinkMonitor::LinkMonitor(ns3::Time window)
  : m_window(window)
{
    NS_ABORT_MSG_IF(!window.IsStrictlyPositive(), "LinkMonitor: the window must be > 0");
}

LinkMonitor::~LinkMonitor() = default;

void
LinkMonitor::Watch(const InstalledLink& link)
{
    const std::pair<const char*, ns3::Ptr<ns3::PointToPointNetDevice>> ends[] = {
        {"down", link.device_a}, {"up", link.device_b}};
    for (const auto& [direction, device] : ends)
    {
        auto d = std::make_unique<Direction>();
        d->usage.link = link.name;
        d->usage.direction = direction;
        d->usage.bandwidth_bps = link.spec.rate.GetBitRate();
        d->usage.window_s = m_window.GetSeconds();
        d->rate = link.spec.rate;
        d->window_s = m_window.GetSeconds();
        device->TraceConnectWithoutContext("PhyTxBegin",
                                           ns3::MakeCallback(&Direction::OnTx, d.get()));
        m_directions.push_back(std::move(d));
    }
}

std::vector<LinkUsage>
LinkMonitor::Usage(ns3::Time end) const
{
    NS_ABORT_MSG_IF(!end.IsStrictlyPositive(), "LinkMonitor::Usage: end must be > 0");
    std::vector<LinkUsage> out;
    for (const auto& d : m_directions)
    {
        LinkUsage u = d->usage;
        const double bps = static_cast<double>(u.bandwidth_bps);
        const double end_s = end.GetSeconds();
        double total = 0;
        double peak = 0;
        for (size_t w = 0; w < d->bits.size(); ++w)
        {
            // The last window ends with the run; a frame still on the wire then counts in full,
            // so a window's share is capped at the whole link.
            const double span = std::min(d->window_s, end_s - static_cast<double>(w) * d->window_s);
            if (span <= 0)
                break;
            total += d->bits[w];
            peak = std::max(peak, std::min(1.0, d->bits[w] / (bps * span)));
        }
        u.mean_utilisation = total / (bps * end_s);
        u.peak_utilisation = peak;
        out.push_back(u);
    }
    return out;
}

} // namespace hilosim
