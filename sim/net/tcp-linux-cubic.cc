#include "sim/net/tcp-linux-cubic.h"

#include "ns3/boolean.h"
#include "ns3/simulator.h"

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
        m_hystart.Restart(ns3::Simulator::Now(), tcb->m_highTxMark.Get().GetValue());
    }
}

ns3::Ptr<ns3::TcpCongestionOps>
TcpLinuxCubic::Fork()
{
    return ns3::CopyObject<TcpLinuxCubic>(this);
}

} // namespace hilosim
