// TcpLinuxCubic: ns-3 3.37's TcpCubic with Linux's HyStart (sim/net/hystart.h) in place of ns-3's
// own, whose exit thresholds are twice (ACK train) and up to eight times (delay increase)
// Linux's, and Linux's congestion avoidance (sim/net/cubic-window.h: the cubic curve with the
// TCP-friendly region, which ns-3 3.37 lacks, beta 717/1024 and fast convergence) in place of
// TcpCubic's. SocketOptions::ApplyTo builds it wherever a scenario asks for CUBIC. Slow start
// is Linux's tcp_slow_start: cwnd grows by the segments acknowledged, up to ssthresh, and what
// is left of the ACK goes to congestion avoidance.
//
// The sender's pacing matters to HyStart: Linux halves the ACK-train threshold when the socket
// does not pace, because its bursts then reach the bottleneck back to back. TcpLinuxCubic reads
// it from the socket state (m_pacing).
#ifndef HILO_SIM_NET_TCP_LINUX_CUBIC_H
#define HILO_SIM_NET_TCP_LINUX_CUBIC_H

#include "sim/net/cubic-window.h"
#include "sim/net/hystart.h"

#include "ns3/tcp-cubic.h"

namespace hilosim
{

class TcpLinuxCubic : public ns3::TcpCubic
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override;
    TcpLinuxCubic();
    TcpLinuxCubic(const TcpLinuxCubic& other);

    std::string GetName() const override;
    void Init(ns3::Ptr<ns3::TcpSocketState> tcb) override;
    void IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked) override;
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked,
                   const ns3::Time& rtt) override;
    void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                            const ns3::TcpSocketState::TcpCongState_t newState) override;
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override;

    /// Data leaves with nothing in flight, `idle` after the last data segment (TcpIdleRestart
    /// tells it, as Linux's CA_EVENT_TX_START): CUBIC's epoch moves forward by the idle time.
    void OnSendAfterIdle(ns3::Time idle);

    /// The slow-start exit search (for tests and traces).
    const HyStart& GetHyStart() const { return m_hystart; }
    /// The congestion-avoidance state (for tests and traces).
    const CubicWindow& GetCubicWindow() const { return m_window; }
    /// How many times HyStart ended slow start.
    uint32_t GetHyStartExits() const { return m_exits; }

  protected:
    void NotifyConstructionCompleted() override;

  private:
    HyStart m_hystart;
    CubicWindow m_window;
    uint32_t m_exits{0};
};

} // namespace hilosim

#endif // HILO_SIM_NET_TCP_LINUX_CUBIC_H
