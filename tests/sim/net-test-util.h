// Small helpers shared by the sim/net tests: link specs, payloads, running a simulation.
#ifndef HILO_TESTS_SIM_NET_TEST_UTIL_H
#define HILO_TESTS_SIM_NET_TEST_UTIL_H

#include "sim/net/link-spec.h"
#include "sim/net/units.h"

#include "ns3/nstime.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"

#include <cstdint>
#include <memory>
#include <random>
#include <string>

namespace hilosim::testing
{

inline LinkSpec
Link(const std::string& rate, const std::string& delay, uint32_t mtu = 9000, double loss = 0.0,
     const std::string& queueDisc = "fifo")
{
    LinkSpec link;
    link.rate = *ParseDataRate(rate);
    link.delay = *ParseTime(delay);
    link.mtu = mtu;
    link.loss_rate = loss;
    link.queue_disc = queueDisc;
    return link;
}

inline std::shared_ptr<const std::string>
RandomPayload(size_t size, uint32_t seed)
{
    std::mt19937 rng(seed);
    auto s = std::make_shared<std::string>(size, '\0');
    for (auto& c : *s)
    {
        c = static_cast<char>(rng());
    }
    return s;
}

/// Runs the simulation to quiescence (or `limit` of simulated time) and destroys it.
inline void
RunAndDestroy(ns3::Time limit = ns3::Seconds(600))
{
    ns3::Simulator::Stop(limit);
    ns3::Simulator::Run();
    ns3::Simulator::Destroy();
}

/// Counts bytes a device puts on its link (its MacTx trace: IP packets with their 2-byte PPP
/// header, as they enter the device).
class LinkByteCounter
{
  public:
    explicit LinkByteCounter(ns3::Ptr<ns3::PointToPointNetDevice> device)
    {
        device->TraceConnectWithoutContext(
            "MacTx", ns3::Callback<void, ns3::Ptr<const ns3::Packet>>(
                         [this](ns3::Ptr<const ns3::Packet> p) { m_bytes += p->GetSize(); }));
    }
    LinkByteCounter(const LinkByteCounter&) = delete;
    LinkByteCounter& operator=(const LinkByteCounter&) = delete;
    uint64_t GetBytes() const { return m_bytes; }

  private:
    uint64_t m_bytes{0};
};

} // namespace hilosim::testing

#endif // HILO_TESTS_SIM_NET_TEST_UTIL_H
