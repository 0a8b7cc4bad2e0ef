// LagMonitor: how far an ns-3 real-time simulation falls behind the wall clock. In its default
// BestEffort mode the RealtimeSimulatorImpl runs late events as soon as it can and reports
// nothing, so the monitor samples the lag itself: every `interval` of simulated time an event
// records RealtimeNow() - Now() (how late that event ran), and the link traffic carried in each
// second. Lag means delays and rates in the emulation are not exact.
#ifndef HILOSIM_DRIVERS_EMULATION_LAG_MONITOR_H
#define HILOSIM_DRIVERS_EMULATION_LAG_MONITOR_H

#include "ns3/net-device-container.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

#include <cstdint>
#include <vector>

namespace hilosim
{

struct LagStats
{
    double mean_s{0};
    double p99_s{0};
    double max_s{0};
    uint64_t samples{0};
    double peak_traffic_bps{0}; // link traffic (all links summed) in the busiest whole second
};

class LagMonitor
{
  public:
    /// Counts the bytes every device in `devices` transmits. REQUIRES: interval > 0.
    LagMonitor(ns3::Time interval, const ns3::NetDeviceContainer& devices);

    /// Schedules the first sample. REQUIRES: the simulator is ns3::RealtimeSimulatorImpl.
    void Start();
    /// Forgets the samples so far (call from a simulation event).
    void Reset();
    LagStats Stats() const;

  private:
    void Sample();
    void Transmitted(ns3::Ptr<const ns3::Packet> packet);

    ns3::Time m_interval;
    std::vector<double> m_lags; // seconds
    uint64_t m_bytes{0};        // transmitted in the current second
    ns3::Time m_secondStart;
    double m_peakBps{0};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_LAG_MONITOR_H
