#include "sim/net/tcp-idle-restart.h"

#include "sim/net/cwnd-restart.h"
#include "sim/net/tcp-linux-cubic.h"

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

TcpIdleRestart::TcpIdleRestart(ns3::Ptr<ns3::TcpCongestionOps> inner, bool restartAfterIdle)
  : m_inner(inner)
  , m_restartAfterIdle(restartAfterIdle)
{
    NS_ABORT_MSG_IF(!inner, "TcpIdleRestart: nothing to wrap");
}

TcpIdleRestart::~TcpIdleRestart()
{
    Unwatch();
}

void
TcpIdleRestart::DoDispose()
{
    Unwatch();
    m_inner = nullptr;
    ns3::TcpCongestionOps::DoDispose();
}

void
TcpIdleRestart::Watch(ns3::Ptr<ns3::TcpSocketState> tcb)
{
    if (tcb == m_tcb)
    {
        return;
    }
    Unwatch();
    m_tcb = tcb;
    m_tcb->m_highTxMark.ConnectWithoutContext(
        ns3::MakeCallback(&TcpIdleRestart::HighTxChanged, this));
    m_tcb->m_nextTxSequence.ConnectWithoutContext(
        ns3::MakeCallback(&TcpIdleRestart::NextTxChanged, this));
}

void
TcpIdleRestart::Unwatch()
{
    if (!m_tcb)
    {
        return;
    }
    m_tcb->m_highTxMark.DisconnectWithoutContext(
        ns3::MakeCallback(&TcpIdleRestart::HighTxChanged, this));
    m_tcb->m_nextTxSequence.DisconnectWithoutContext(
        ns3::MakeCallback(&TcpIdleRestart::NextTxChanged, this));
    m_tcb = nullptr;
}

void
TcpIdleRestart::HighTxChanged(ns3::SequenceNumber32 before, ns3::SequenceNumber32 after)
{
    if (after > before)
    {
        DataSent(after, true);
    }
}

void
TcpIdleRestart::NextTxChanged(ns3::SequenceNumber32 before, ns3::SequenceNumber32 after)
{
    // SND.NXT moves forward for every data segment sent, retransmissions included (and back
    // when a timeout rewinds it).
    if (after > before)
    {
        DataSent(after, false);
    }
}

void
TcpIdleRestart::DataSent(ns3::SequenceNumber32 end, bool newData)
{
    m_sentData = true;
    m_lastDataSent = ns3::Simulator::Now();
    if (!newData || !m_tcb)
    {
        return;
    }
    // tcp_cwnd_validate after the send. The socket refreshed m_bytesInFlight just before it
    // (AvailableWindow); the segment now leaving adds to it. cwnd is the limit when no further
    // full segment fits (ns-3 sends whole segments only while one fits).
    const uint32_t segment = std::max<uint32_t>(m_tcb->m_segmentSize, 1);
    const ns3::SequenceNumber32 high = std::max(end, m_tcb->m_highTxMark.Get());
    const uint32_t inFlight = m_tcb->m_bytesInFlight.Get() + segment;
    const bool limited = uint64_t{inFlight} + segment > m_tcb->m_cWnd.Get();
    if (m_tcb->m_lastAckedSeq >= m_usageEnd || limited ||
        (!m_cwndLimited && inFlight > m_maxInFlight))
    {
        m_cwndLimited = limited;
        m_maxInFlight = inFlight;
        m_usageEnd = high;
    }
}

bool
TcpIdleRestart::IsCwndLimited(ns3::Ptr<const ns3::TcpSocketState> tcb) const
{
    return CwndLimit(tcb->m_cWnd.Get(), tcb->m_ssThresh.Get(), m_cwndLimited, m_maxInFlight);
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
    Watch(tcb);
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
    Watch(tcb);
    if (!IsCwndLimited(tcb))
    {
        return; // tcp_cong_avoid's callers: no growth while cwnd is not what limits sending
    }
    m_inner->IncreaseWindow(tcb, segmentsAcked);
}

void
TcpIdleRestart::PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segmentsAcked,
                          const ns3::Time& rtt)
{
    Watch(tcb);
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
    Watch(tcb);
    // ns-3 raises CA_EVENT_TX_START just before it sends with nothing in flight.
    if (event == ns3::TcpSocketState::CA_EVENT_TX_START)
    {
        if (m_restartAfterIdle)
        {
            Restart(tcb);
        }
        // CUBIC's curve counts sending time only (cubictcp_cwnd_event), with or without the
        // restart.
        auto cubic = ns3::DynamicCast<TcpLinuxCubic>(m_inner);
        if (cubic && m_sentData)
        {
            cubic->OnSendAfterIdle(ns3::Simulator::Now() - m_lastDataSent);
        }
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
    return ns3::CreateObject<TcpIdleRestart>(m_inner->Fork(), m_restartAfterIdle);
}

void
TcpIdleRestart::Restart(ns3::Ptr<ns3::TcpSocketState> tcb)
{
    if (!m_sentData)
    {
        return; // nothing sent yet: the initial window applies anyway
    }
    CwndRestartInput in;
    in.cwnd_bytes = tcb->m_cWnd.Get();
    in.ssthresh_bytes = tcb->m_ssThresh.Get();
    in.initial_cwnd_bytes = static_cast<double>(tcb->m_initialCWnd) * tcb->m_segmentSize;
    in.segment_bytes = tcb->m_segmentSize;
    in.idle_s = (ns3::Simulator::Now() - m_lastDataSent).GetSeconds();
    in.rto_s = GetLinuxRto().GetSeconds();
    in.in_cwnd_reduction = tcb->m_congState == ns3::TcpSocketState::CA_CWR ||
                           tcb->m_congState == ns3::TcpSocketState::CA_RECOVERY;
    in.sets_cwnd_itself = m_inner->HasCongControl();
    const CwndRestartResult out = CwndAfterIdle(in);
    if (!out.restarted)
    {
        return;
    }
    tcb->m_ssThresh = static_cast<uint32_t>(std::min(out.ssthresh_bytes, 4294967295.0));
    tcb->m_cWnd = static_cast<uint32_t>(out.cwnd_bytes);
}

} // namespace hilosim
