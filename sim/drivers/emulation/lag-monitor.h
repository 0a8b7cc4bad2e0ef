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
#include <string>
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

/// A lag sample at or above LagMonitor::kSpikeS: when (steady clock, ns) and how late (s).
struct LagSpike
{
    int64_t steady_ns{0};
    double lag_s{0};
};

/// One line for the emulator's log: the spikes' times from the run's epoch (`epoch_ns`, steady
/// clock; 0: none given, times from the first spike) and their lags, at most `limit` of them
/// (the largest), in time order. A lag spike above Linux's HyStart delay threshold
/// (clamp(min RTT / 8, 4 ms, 16 ms)) during a slow-start round can end slow start on a link
/// that queues nothing (results/validation/emulation-notes.md).
std::string FormatLagSpikes(const std::vector<LagSpike>& spikes, int64_t epoch_ns,
                            size_t limit = 100);

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
    /// Samples whose lag was kSpikeS or more since the last Reset, with their wall-clock times.
    const std::vector<LagSpike>& Spikes() const { return m_spikes; }
    static constexpr double kSpikeS = 0.004; // HyStart's smallest delay threshold

  private:
    void Sample();
    void Transmitted(ns3::Ptr<const ns3::Packet> packet);

    ns3::Time m_interval;
    std::vector<double> m_lags; // seconds
    std::vector<LagSpike> m_spikes;
    uint64_t m_bytes{0}; // transmitted in the current second
    ns3::Time m_secondStart;
    double m_peakBps{0};
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_EMULATION_LAG_MONITOR_H
