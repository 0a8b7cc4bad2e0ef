#include "sim/drivers/emulation/lag-monitor.h"

#include "ns3/abort.h"
#include "ns3/realtime-simulator-impl.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
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
    m_bytes = 0;
    m_peakBps = 0;
    m_secondStart = ns3::Simulator::Now();
}

void
LagMonitor::Sample()
{
    auto impl = ns3::DynamicCast<ns3::RealtimeSimulatorImpl>(ns3::Simulator::GetImplementation());
    const ns3::Time now = ns3::Simulator::Now();
    m_lags.push_back(std::max(0.0, (impl->RealtimeNow() - now).GetSeconds()));
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
