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
    int64_t window_steps{1}; // the window in ns-3 time steps
    double window_s{0};
    std::vector<double> bits; // by window index

    void OnTx(ns3::Ptr<const ns3::Packet> packet)
    {
        usage.bytes += packet->GetSize();
        ++usage.packets;
        // The frame occupies the link from now for size / rate: spread its bits over the windows
        // that interval covers (in integer time steps, so that every pass advances).
        const int64_t begin = ns3::Simulator::Now().GetTimeStep();
        const int64_t end =
            begin +
            std::max<int64_t>(1, rate.CalculateBytesTxTime(packet->GetSize()).GetTimeStep());
        const double bits_per_step = 8.0 * packet->GetSize() / static_cast<double>(end - begin);
        for (int64_t at = begin; at < end;)
        {
            const int64_t w = at / window_steps;
            const int64_t until = std::min(end, (w + 1) * window_steps);
            if (bits.size() <= static_cast<size_t>(w))
            {
                bits.resize(w + 1, 0.0);
            }
            bits[w] += bits_per_step * static_cast<double>(until - at);
            at = until;
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
        d->window_steps = m_window.GetTimeStep();
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
