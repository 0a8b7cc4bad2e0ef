#include "sim/net/tcp-linux-cubic.h"

#include "ns3/boolean.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace hilosim
{

NS_OBJECT_ENSURE_REGISTERED(TcpLinuxCubic);

ns3::TypeId
TcpLinuxCubic::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("hilosim::TcpLinuxCubic")
                                 .SetParent<ns3::TcpCubic>()
                                 .SetGroupName("HiloSim")
                                 .AddConstructor<TcpLinuxCubic>();
    return tid;
}

ns3::TypeId
TcpLinuxCubic::GetInstanceTypeId() const
{
    return GetTypeId();
}

TcpLinuxCubic::TcpLinuxCubic() = default;

TcpLinuxCubic::TcpLinuxCubic(const TcpLinuxCubic& other)
  : ns3::TcpCubic(other)
  , m_hystart(other.m_hystart)
  , m_window(other.m_window)
  , m_exits(0)
{
}

void
TcpLinuxCubic::NotifyConstructionCompleted()
{
    ns3::TcpCubic::NotifyConstructionCompleted();
    // After the attribute defaults are applied: ns-3's HyStart off, Linux's (PktsAcked) instead.
    SetAttribute("HyStart", ns3::BooleanValue(false));
}

std::string
TcpLinuxCubic::GetName() const
{
    return "TcpLinuxCubic";
}

void
TcpLinuxCubic::Init(ns3::Ptr<ns3::TcpSocketState> tcb)
{
    ns3::TcpCubic::Init(tcb);
    m_hystart.Reset(ns3::Simulator::Now(), tcb->m_highTxMark.Get().GetValue());
}

void
TcpLinuxCubic::IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked)
{
    // cubictcp_cong_avoid (the cwnd-limited check is TcpIdleRestart's, which wraps this).
    const uint32_t segment = tcb->m_segmentSize;
    if (tcb->m_cWnd.Get() < tcb->m_ssThresh.Get())
    {
        // tcp_slow_start: cwnd = min(cwnd + acked, ssthresh); the rest of the ACK goes on.
        const uint64_t room = (tcb->m_ssThresh.Get() - tcb->m_cWnd.Get() + segment - 1) / segment;
        const uint32_t used = static_cast<uint32_t>(std::min<uint64_t>(segmentsAcked, room));
        tcb->m_cWnd = static_cast<uint32_t>(std::min<uint64_t>(
            uint64_t{tcb->m_cWnd.Get()} + uint64_t{used} * segment, tcb->m_ssThresh.Get()));
        segmentsAcked -= used;
        if (segmentsAcked == 0)
        {
            return;
        }
    }
    const uint32_t cwnd = tcb->GetCwndInSegments();
    const uint32_t grown =
        m_window.OnAck(ns3::Simulator::Now(), cwnd, segmentsAcked, m_hystart.GetDelayMin());
    if (grown > cwnd)
    {
        tcb->m_cWnd = tcb->m_cWnd.Get() + (grown - cwnd) * segment;
    }
}

void
TcpLinuxCubic::OnSendAfterIdle(ns3::Time idle)
{
    m_window.OnSendAfterIdle(ns3::Simulator::Now(), idle);
}

uint32_t
TcpLinuxCubic::GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t)
{
    return m_window.OnLoss(tcb->GetCwndInSegments()) * tcb->m_segmentSize;
}

void
TcpLinuxCubic::PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked,
                         const ns3::Time& rtt)
{
    ns3::TcpCubic::PktsAcked(tcb, segmentsAcked, rtt);
    HyStartAck ack;
    ack.now = ns3::Simulator::Now();
    ack.rtt = rtt;
    ack.cwnd_segments = tcb->GetCwndInSegments();
    ack.in_slow_start = tcb->m_cWnd.Get() < tcb->m_ssThresh.Get();
    ack.snd_una = tcb->m_lastAckedSeq.GetValue();
    ack.snd_nxt = tcb->m_highTxMark.Get().GetValue();
    ack.paced = tcb->m_pacing;
    // Linux's pacing rate in slow start (tcp_update_pacing_rate): 2 x cwnd per smoothed RTT,
    // here per this RTT sample.
    if (rtt.IsStrictlyPositive())
    {
        ack.pacing_rate_Bps = 2.0 * tcb->m_cWnd.Get() / rtt.GetSeconds();
    }
    if (m_hystart.OnAck(ack))
    {
        tcb->m_ssThresh = tcb->m_cWnd.Get();
        ++m_exits;
    }
}

void
TcpLinuxCubic::CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                                  const ns3::TcpSocketState::TcpCongState_t newState)
{
    ns3::TcpCubic::CongestionStateSet(tcb, newState);
    if (newState == ns3::TcpSocketState::CA_LOSS)
    {
        m_window.Reset();
        m_hystart.Restart(ns3::Simulator::Now(), tcb->m_highTxMark.Get().GetValue());
    }
}

ns3::Ptr<ns3::TcpCongestionOps>
TcpLinuxCubic::Fork()
{
    return ns3::CopyObject<TcpLinuxCubic>(this);
}

} // namespace hilosim
