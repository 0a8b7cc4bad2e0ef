#include "sim/drivers/emulation/lag-monitor.h"

#include "ns3/abort.h"
#include "ns3/realtime-simulator-impl.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace hilosim
{

LagMonitor::LagMonitor(ns3::Time interval, const ns3::NetDeviceContainer& devices)
  : m_interval(interval)
{
    NS_ABORT_MSG_IF(!interval.IsStrictlyPositive(), "LagMonitor: the interval must be positive");
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        devices.Get(i)->TraceConnectWithoutContext(
            "PhyTxEnd", ns3::MakeCallback(&LagMonitor::Transmitted, this));
    }
}

void
LagMonitor::Start()
{
    NS_ABORT_MSG_IF(
        !ns3::DynamicCast<ns3::RealtimeSimulatorImpl>(ns3::Simulator::GetImplementation()),
        "LagMonitor: the simulator is not ns3::RealtimeSimulatorImpl");
    m_secondStart = ns3::Simulator::Now();
    ns3::Simulator::Schedule(m_interval, &LagMonitor::Sample, this);
}

void
LagMonitor::Reset()
{
    m_lags.clear();
    m_spikes.clear();
    m_bytes = 0;
    m_peakBps = 0;
    m_secondStart = ns3::Simulator::Now();
}

void
LagMonitor::Sample()
{
    auto impl = ns3::DynamicCast<ns3::RealtimeSimulatorImpl>(ns3::Simulator::GetImplementation());
    const ns3::Time now = ns3::Simulator::Now();
    const double lag = std::max(0.0, (impl->RealtimeNow() - now).GetSeconds());
    m_lags.push_back(lag);
    if (lag >= kSpikeS)
    {
        m_spikes.push_back({std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count(),
                            lag});
    }
    const double elapsed = (now - m_secondStart).GetSeconds();
    if (elapsed >= 1.0)
    {
        m_peakBps = std::max(m_peakBps, 8.0 * static_cast<double>(m_bytes) / elapsed);
        m_bytes = 0;
        m_secondStart = now;
    }
    ns3::Simulator::Schedule(m_interval, &LagMonitor::Sample, this);
}

void
LagMonitor::Transmitted(ns3::Ptr<const ns3::Packet> packet)
{
    m_bytes += packet->GetSize();
}

std::string
FormatLagSpikes(const std::vector<LagSpike>& spikes, int64_t epoch_ns, size_t limit)
{
    std::vector<LagSpike> kept = spikes;
    if (kept.size() > limit)
    {
        std::stable_sort(kept.begin(), kept.end(),
                         [](const LagSpike& a, const LagSpike& b) { return a.lag_s > b.lag_s; });
        kept.resize(limit);
        std::stable_sort(kept.begin(), kept.end(),
                         [](const LagSpike& a, const LagSpike& b)
                         { return a.steady_ns < b.steady_ns; });
    }
    const int64_t origin = epoch_ns != 0 ? epoch_ns : (kept.empty() ? 0 : kept.front().steady_ns);
    std::string line = "lag spikes (at least " +
                       std::to_string(static_cast<int>(LagMonitor::kSpikeS * 1000 + 0.5)) +
                       " ms): " + std::to_string(spikes.size());
    if (kept.size() < spikes.size())
    {
        line += " (the " + std::to_string(kept.size()) + " largest below)";
    }
    line += epoch_ns != 0 ? "; run time s: lag ms" : "; s from the first: lag ms";
    for (const LagSpike& k : kept)
    {
        char item[64];
        std::snprintf(item, sizeof(item), " %.3f:%.1f",
                      static_cast<double>(k.steady_ns - origin) * 1e-9, k.lag_s * 1e3);
        line += item;
    }
    return line;
}

LagStats
LagMonitor::Stats() const
{
    LagStats s;
    s.samples = m_lags.size();
    s.peak_traffic_bps = m_peakBps;
    if (m_lags.empty())
    {
        return s;
    }
    std::vector<double> sorted = m_lags;
    std::sort(sorted.begin(), sorted.end());
    s.mean_s = std::accumulate(sorted.begin(), sorted.end(), 0.0) / sorted.size();
    const size_t p99 = static_cast<size_t>(std::ceil(0.99 * sorted.size())) - 1;
    s.p99_s = sorted[std::min(p99, sorted.size() - 1)];
    s.max_s = sorted.back();
    return s;
}

} // namespace hilosim
