// LinkMonitor: bytes and utilisation of every installed link, per direction, from the devices'
// PhyTxBegin trace (every frame as it starts on the wire, PPP header included). A frame's bits are
// spread over the time it occupies the link (size / rate), so a window's utilisation never
// exceeds 1. "down" is the direction away from the learner (device a transmits), "up" towards it.
#ifndef HILO_SIM_NET_LINK_MONITOR_H
#define HILO_SIM_NET_LINK_MONITOR_H

#include "sim/net/link-helper.h"

#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

/// One direction of one link over a run.
struct LinkUsage
{
    std::string link;      // InstalledLink::name ("worker 0", "region eu wan", "uplink", ...)
    std::string direction; // "down" (a -> b, away from the learner) or "up"
    uint64_t bandwidth_bps{0};
    uint64_t bytes{0};          // frames started, PPP + IP + TCP headers included
    uint64_t packets{0};        // frames started
    double mean_utilisation{0}; // bits / (bandwidth x duration)
    double peak_utilisation{0}; // the busiest window's bits / (bandwidth x window); the last
                                // window ends with the run
    double window_s{0};         // the window of peak_utilisation
};

class LinkMonitor
{
  public:
    /// `window`: the window of the peak utilisation. REQUIRES: window > 0.
    explicit LinkMonitor(ns3::Time window);
    ~LinkMonitor();
    LinkMonitor(const LinkMonitor&) = delete;
    LinkMonitor& operator=(const LinkMonitor&) = delete;

    /// Starts counting both directions of `link`. The monitor must outlive the simulation run
    /// (its trace sinks are called until Simulator::Destroy).
    void Watch(const InstalledLink& link);

    /// Usage of every watched direction over [0, `end`] (the end of the run), in the order
    /// watched (down, then up). REQUIRES: end > 0.
    std::vector<LinkUsage> Usage(ns3::Time end) const;

  private:
    struct Direction;
    ns3::Time m_window;
    std::vector<std::unique_ptr<Direction>> m_directions;
};

} // namespace hilosim

#endif // HILO_SIM_NET_LINK_MONITOR_H
