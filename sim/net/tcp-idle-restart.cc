#include "sim/net/tcp-idle-restart.h"

#include "ns3/abort.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace hilosim
{

NS_OBJECT_ENSURE_REGISTERED(TcpIdleRestart);

ns3::TypeId
TcpIdleRestart::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("hilosim::TcpIdleRestart")
                                 .SetParent<ns3::TcpCongestionOps>()
                                 .SetGroupName("HiloSim")
                                 .AddConstructor<TcpIdleRestart>();
    return tid;
}

TcpIdleRestart::TcpIdleRestart(ns3::Ptr<ns3::TcpCongestionOps> inner)
  : m_inner(inner)
{
    NS_ABORT_MSG_IF(!inner, "TcpIdleRestart: nothing to wrap");
}

ns3::Time
TcpIdleRestart::GetLinuxRto() const
{
    if (!m_hasRtt)
    {
        return ns3::Time(0);
    }
    return m_srtt + std::max(4 * m_mdev, ns3::MilliSeconds(200));
}

std::string
TcpIdleRestart::GetName() const
{
    return m_inner->GetName();
}

void
TcpIdleRestart::Init(ns3::Ptr<ns3::TcpSocketState> tcb)
{
    m_inner->Init(tcb);
}

uint32_t
TcpIdleRestart::GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return m_inner->GetSsThresh(tcb, bytesInFlight);
}

void
TcpIdleRestart::IncreaseWindow(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked)
{
    m_inner->IncreaseWindow(tcb, segmentsAcked);
}

void
TcpIdleRestart::PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked,
                          const ns3::Time& rtt)
{
    m_lastAck = ns3::Simulator::Now();
    if (rtt.IsStrictlyPositive())
    {
        // Jacobson/Karels as Linux's tcp_rtt_estimator: srtt += (m - srtt) / 8, mdev += (|m -
        // srtt| - mdev) / 4.
        if (!m_hasRtt)
        {
            m_srtt = rtt;
            m_mdev = rtt / 2;
            m_hasRtt = true;
        }
        else
        {
            const ns3::Time err = rtt > m_srtt ? rtt - m_srtt : m_srtt - rtt;
            m_srtt += (rtt - m_srtt) / 8;
            m_mdev += (err - m_mdev) / 4;
        }
    }
    m_inner->PktsAcked(tcb, segmentsAcked, rtt);
}

void
TcpIdleRestart::CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                                   const ns3::TcpSocketState::TcpCongState_t newState)
{
    m_inner->CongestionStateSet(tcb, newState);
}

void
TcpIdleRestart::CwndEvent(ns3::Ptr<ns3::TcpSocketState> tcb,
                          const ns3::TcpSocketState::TcpCAEvent_t event)
{
    // ns-3 raises CA_EVENT_TX_START just before it sends with nothing in flight.
    if (event == ns3::TcpSocketState::CA_EVENT_TX_START && !m_inner->HasCongControl())
    {
        Restart(tcb);
    }
    m_inner->CwndEvent(tcb, event);
}

bool
TcpIdleRestart::HasCongControl() const
{
    return m_inner->HasCongControl();
}

void
TcpIdleRestart::CongControl(ns3::Ptr<ns3::TcpSocketState> tcb,
                            const ns3::TcpRateOps::TcpRateConnection& rc,
                            const ns3::TcpRateOps::TcpRateSample& rs)
{
    m_inner->CongControl(tcb, rc, rs);
}

ns3::Ptr<ns3::TcpCongestionOps>
TcpIdleRestart::Fork()
{
    // A new connection (an accepted socket): the algorithm's own copy, no RTT history.
    return ns3::CreateObject<TcpIdleRestart>(m_inner->Fork());
}

void
TcpIdleRestart::Restart(ns3::Ptr<ns3::TcpSocketState> tcb)
{
    const ns3::Time rto = GetLinuxRto();
    if (rto.IsZero() || tcb->m_segmentSize == 0)
    {
        return; // nothing sent and acknowledged yet: the initial window applies anyway
    }
    ns3::Time idle;
    if (tcb->m_rcvTimestampEchoReply != 0)
    {
        // The peer echoes the timestamp (ns-3: milliseconds of simulated time) of the last data
        // segment it received: all of them are acknowledged, so that is the last one sent.
        const uint32_t now_ms =
            static_cast<uint32_t>(ns3::Simulator::Now().GetMilliSeconds() & 0xffffffff);
        idle = ns3::MilliSeconds(static_cast<uint32_t>(now_ms - tcb->m_rcvTimestampEchoReply));
    }
    else
    {
        idle = ns3::Simulator::Now() - m_lastAck + m_srtt;
    }
    if (idle <= rto)
    {
        return;
    }
    const uint32_t segment = tcb->m_segmentSize;
    const uint32_t cwnd = tcb->m_cWnd;
    const uint32_t restart = std::min(tcb->m_initialCWnd * segment, cwnd);
    // tcp_current_ssthresh: in Open or Disorder state, at least 3/4 of cwnd.
    if (tcb->m_congState == ns3::TcpSocketState::CA_OPEN ||
        tcb->m_congState == ns3::TcpSocketState::CA_DISORDER)
    {
        tcb->m_ssThresh = std::max<uint32_t>(tcb->m_ssThresh, (cwnd >> 1) + (cwnd >> 2));
    }
    uint32_t restarted = cwnd;
    for (ns3::Time left = idle - rto; left.IsStrictlyPositive() && restarted > restart; left -= rto)
    {
        restarted >>= 1;
    }
    restarted = std::max(restarted, restart);
    tcb->m_cWnd = std::max(segment, restarted / segment * segment);
}

} // namespace hilosim
