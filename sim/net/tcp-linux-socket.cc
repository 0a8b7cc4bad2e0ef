#include "sim/net/tcp-linux-socket.h"

#include "sim/net/host-egress.h"
#include "sim/net/tcp-idle-restart.h"
#include "sim/net/tcp-linux-cubic.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/simulator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-option-sack.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/type-id.h"

#include <algorithm>

namespace hilosim
{

NS_OBJECT_ENSURE_REGISTERED(TcpLinuxSocket);

ns3::TypeId
TcpLinuxSocket::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::TcpLinuxSocket")
            .SetParent<ns3::TcpSocketBase>()
            .SetGroupName("HiloSim")
            .AddConstructor<TcpLinuxSocket>()
            .AddAttribute("TailLossProbe",
                          "Send a tail loss probe after 2 SRTT without an ACK (RFC 8985 section 7)",
                          ns3::BooleanValue(true),
                          ns3::MakeBooleanAccessor(&TcpLinuxSocket::m_tailLossProbe),
                          ns3::MakeBooleanChecker())
            .AddAttribute("Rack",
                          "Time-based loss detection of the first unacknowledged segment "
                          "(RFC 8985 section 6.2)",
                          ns3::BooleanValue(true),
                          ns3::MakeBooleanAccessor(&TcpLinuxSocket::m_rack),
                          ns3::MakeBooleanChecker());
    return tid;
}

ns3::TypeId
TcpLinuxSocket::GetInstanceTypeId() const
{
    return GetTypeId();
}

TcpLinuxSocket::TcpLinuxSocket(const TcpLinuxSocket& sock)
  : ns3::TcpSocketBase(sock)
  , m_tailLossProbe(sock.m_tailLossProbe)
  , m_rack(sock.m_rack)
{
}

ns3::Ptr<TcpLinuxSocket>
TcpLinuxSocket::Create(ns3::Ptr<ns3::Node> node)
{
    MakeHostEgressFair(node);
    auto tcp = node->GetObject<ns3::TcpL4Protocol>();
    NS_ABORT_MSG_IF(!tcp, "TcpLinuxSocket::Create: node " << node->GetId() << " has no TCP");
    auto make = [&](const char* attribute)
    {
        ns3::TypeIdValue type;
        tcp->GetAttribute(attribute, type);
        ns3::ObjectFactory factory;
        factory.SetTypeId(type.Get());
        return factory.Create();
    };
    auto socket = ns3::CreateObject<TcpLinuxSocket>();
    socket->SetNode(node);
    socket->SetTcp(tcp);
    socket->SetRtt(ns3::DynamicCast<ns3::RttEstimator>(make("RttEstimatorType")));
    socket->SetCongestionControlAlgorithm(
        ns3::DynamicCast<ns3::TcpCongestionOps>(make("SocketType")));
    socket->SetRecoveryAlgorithm(ns3::DynamicCast<ns3::TcpRecoveryOps>(make("RecoveryType")));
    tcp->AddSocket(socket);
    return socket;
}

ns3::Ptr<ns3::TcpSocketBase>
TcpLinuxSocket::Fork()
{
    return ns3::CopyObject<TcpLinuxSocket>(this);
}

void
TcpLinuxSocket::DoDispose()
{
    m_ptoEvent.Cancel();
    m_reorderEvent.Cancel();
    m_sent.clear();
    ns3::TcpSocketBase::DoDispose();
}

bool
TcpLinuxSocket::Open() const
{
    return m_tcb->m_congState == ns3::TcpSocketState::CA_OPEN ||
           m_tcb->m_congState == ns3::TcpSocketState::CA_DISORDER;
}

uint32_t
TcpLinuxSocket::SendDataPacket(ns3::SequenceNumber32 seq, uint32_t maxSize, bool withAck)
{
    const uint32_t sz = ns3::TcpSocketBase::SendDataPacket(seq, maxSize, withAck);
    if (sz == 0)
    {
        return sz;
    }
    const ns3::Time now = ns3::Simulator::Now();
    const ns3::SequenceNumber32 end = seq + sz;
    if (m_sent.empty() || seq >= m_sent.back().end)
    {
        m_sent.push_back({seq, end, now, false});
    }
    else
    {
        // A retransmission: its segments' transmission time is now, and they are in flight again.
        ++m_retransmits;
        for (Sent& s : m_sent)
        {
            if (s.begin >= seq && s.begin < end)
            {
                s.at = now;
                s.delivered = false;
                s.retransmitted = true;
            }
        }
    }
    if (!m_probing)
    {
        SchedulePto();
    }
    return sz;
}

void
TcpLinuxSocket::ReceivedAck(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& tcpHeader)
{
    const ns3::SequenceNumber32 headBefore = m_txBuffer->HeadSequence();
    RackDelivered(tcpHeader);
    ns3::TcpSocketBase::ReceivedAck(packet, tcpHeader);
    const ns3::SequenceNumber32 head = m_txBuffer->HeadSequence();
    if (head > headBefore)
    {
        m_probeOut = false; // new data acknowledged: the probe episode is over
        m_bytesAcked += static_cast<uint32_t>(head - headBefore);
    }
    while (!m_sent.empty() && m_sent.front().end <= head)
    {
        m_sent.pop_front();
    }
    if (m_sent.empty())
    {
        m_ptoEvent.Cancel();
        m_reorderEvent.Cancel();
        return;
    }
    SchedulePto();
}

void
TcpLinuxSocket::ProcessAck(const ns3::SequenceNumber32& ackNumber, bool scoreboardUpdated,
                           uint32_t currentDelivered, const ns3::SequenceNumber32& oldHeadSequence)
{
    ns3::TcpSocketBase::ProcessAck(ackNumber, scoreboardUpdated, currentDelivered, oldHeadSequence);
    if (m_rack)
    {
        RackDetect(currentDelivered);
    }
}

void
TcpLinuxSocket::ReTxTimeout()
{
    m_ptoEvent.Cancel();
    m_reorderEvent.Cancel();
    m_probeOut = false;
    ns3::TcpSocketBase::ReTxTimeout();
}

void
TcpLinuxSocket::SchedulePto()
{
    // RFC 8985 7.2 with Linux's timer values (tcp_schedule_loss_probe).
    if (!m_tailLossProbe || !m_sackEnabled || m_probeOut || m_probing ||
        m_tcb->m_congState != ns3::TcpSocketState::CA_OPEN || m_sent.empty())
    {
        m_ptoEvent.Cancel();
        return;
    }
    const ns3::Time srtt = m_rtt->GetEstimate();
    if (!srtt.IsStrictlyPositive() || !m_retxEvent.IsRunning())
    {
        return;
    }
    const bool oneSegment =
        m_tcb->m_highTxMark.Get() - m_txBuffer->HeadSequence() <= m_tcb->m_segmentSize;
    ns3::Time pto = 2 * srtt + (oneSegment ? ns3::MilliSeconds(200) : ns3::MilliSeconds(2));
    pto = std::min(pto, ns3::Simulator::GetDelayLeft(m_retxEvent));
    m_ptoEvent.Cancel();
    m_ptoEvent = ns3::Simulator::Schedule(pto, &TcpLinuxSocket::ProbeTimeout, this);
}

void
TcpLinuxSocket::ProbeTimeout()
{
    if (m_tcb->m_congState != ns3::TcpSocketState::CA_OPEN || m_sent.empty() || m_probeOut ||
        (m_state != ESTABLISHED && m_state != CLOSE_WAIT))
    {
        return;
    }
    // RFC 8985 7.3: new data if the window allows, else the last segment again.
    m_probing = true;
    m_probeOut = true;
    ++m_probes;
    const uint32_t segment = m_tcb->m_segmentSize;
    uint32_t sent = 0;
    if (m_txBuffer->SizeFromSequence(m_tcb->m_nextTxSequence) > 0 &&
        m_rWnd.Get() >= BytesInFlight() + segment)
    {
        sent = SendDataPacket(m_tcb->m_nextTxSequence, segment, true);
        m_tcb->m_nextTxSequence += sent;
    }
    if (sent == 0)
    {
        const Sent last = m_sent.back();
        SendDataPacket(last.begin, static_cast<uint32_t>(last.end - last.begin), true);
    }
    m_probing = false;
    // Linux re-arms the RTO from the probe (tcp_send_loss_probe -> tcp_rearm_rto).
    m_retxEvent.Cancel();
    m_retxEvent = ns3::Simulator::Schedule(m_rto, &TcpLinuxSocket::ReTxTimeout, this);
}

ns3::TcpOptionSack::SackList
TcpLinuxSocket::SackBlocks(const ns3::TcpHeader& tcpHeader)
{
    if (!tcpHeader.HasOption(ns3::TcpOption::SACK))
    {
        return {};
    }
    auto sack =
        ns3::DynamicCast<const ns3::TcpOptionSack>(tcpHeader.GetOption(ns3::TcpOption::SACK));
    return sack ? sack->GetSackList() : ns3::TcpOptionSack::SackList();
}

bool
TcpLinuxSocket::Covers(const Sent& s, ns3::SequenceNumber32 ack,
                       const ns3::TcpOptionSack::SackList& blocks)
{
    bool covered = s.end <= ack;
    for (const auto& [left, right] : blocks)
    {
        covered |= left <= s.begin && s.end <= right;
    }
    return covered;
}

ns3::Time
TcpLinuxSocket::AckRttSample(const ns3::TcpHeader& tcpHeader) const
{
    if (m_sent.empty() || !(tcpHeader.GetFlags() & ns3::TcpHeader::ACK))
    {
        return ns3::Time(0);
    }
    const ns3::SequenceNumber32 ack = tcpHeader.GetAckNumber();
    const ns3::TcpOptionSack::SackList blocks = SackBlocks(tcpHeader);
    const Sent* latest = nullptr;
    for (const Sent& s : m_sent)
    {
        if (!s.delivered && !s.retransmitted && Covers(s, ack, blocks) &&
            (latest == nullptr || s.at >= latest->at))
        {
            latest = &s;
        }
    }
    return latest == nullptr ? ns3::Time(0) : ns3::Simulator::Now() - latest->at;
}

void
TcpLinuxSocket::EstimateRtt(const ns3::TcpHeader& tcpHeader)
{
    const ns3::Time lastSample = m_tcb->m_lastRtt.Get();
    ns3::TcpSocketBase::EstimateRtt(tcpHeader); // SRTT and RTO as ns-3 (RFC 6298)
    const ns3::Time sample = AckRttSample(tcpHeader);
    if (sample.IsStrictlyPositive())
    {
        m_tcb->m_lastRtt = sample;
        m_tcb->m_minRtt = std::min(m_tcb->m_minRtt, sample);
    }
    else if (lastSample.IsStrictlyPositive())
    {
        m_tcb->m_lastRtt = lastSample; // ns-3 put its SRTT there
    }
}

void
TcpLinuxSocket::RackDelivered(const ns3::TcpHeader& tcpHeader)
{
    if (m_sent.empty() || !(tcpHeader.GetFlags() & ns3::TcpHeader::ACK))
    {
        return;
    }
    const ns3::SequenceNumber32 ack = tcpHeader.GetAckNumber();
    const ns3::TcpOptionSack::SackList blocks = SackBlocks(tcpHeader);
    const ns3::Time now = ns3::Simulator::Now();
    for (Sent& s : m_sent)
    {
        if (s.delivered || !Covers(s, ack, blocks))
        {
            continue;
        }
        s.delivered = true;
        const ns3::Time rtt = now - s.at;
        m_minRtt = std::min(m_minRtt, rtt);
        // RACK.xmit_ts, RACK.end_seq and RACK.rtt follow the most recently sent segment
        // delivered (RFC 8985 section 6.2, RACK_sent_after: a later send time, or the same time
        // and a higher end sequence -- unpaced bursts leave at one instant).
        if (s.at > m_rackXmit || (s.at == m_rackXmit && s.end > m_rackEnd))
        {
            m_rackXmit = s.at;
            m_rackEnd = s.end;
            m_rackRtt = rtt;
        }
    }
}

void
TcpLinuxSocket::RackDetect(uint32_t currentDelivered)
{
    if (!Open())
    {
        m_reorderEvent.Cancel();
        return; // in recovery ns-3's scoreboard decides; after a timeout the RTO did
    }
    const Sent* first = nullptr;
    for (const Sent& s : m_sent)
    {
        if (!s.delivered && s.begin >= m_txBuffer->HeadSequence())
        {
            first = &s;
            break;
        }
    }
    if (first == nullptr ||
        !(m_rackXmit > first->at || (m_rackXmit == first->at && m_rackEnd > first->end)))
    {
        return; // nothing sent after it has been delivered yet
    }
    const ns3::Time reorderWindow = m_minRtt == ns3::Time::Max() ? ns3::Time(0) : m_minRtt / 4;
    const ns3::Time deadline = first->at + m_rackRtt + reorderWindow;
    const ns3::Time now = ns3::Simulator::Now();
    if (now >= deadline)
    {
        m_reorderEvent.Cancel();
        ++m_rackRecoveries;
        EnterRecovery(currentDelivered);
        return;
    }
    if (!m_reorderEvent.IsRunning())
    {
        m_reorderEvent =
            ns3::Simulator::Schedule(deadline - now, &TcpLinuxSocket::ReorderTimeout, this);
    }
}

void
TcpLinuxSocket::ReorderTimeout()
{
    if (!Open() || m_sent.empty())
    {
        return;
    }
    RackDetect(0);
    if (m_tcb->m_congState == ns3::TcpSocketState::CA_RECOVERY)
    {
        SendPendingData(m_connected); // RFC 6675 (C): what the window allows besides the head
    }
}

TcpTraceSample
TcpLinuxSocket::TraceSample(uint32_t peer) const
{
    TcpTraceSample s;
    s.peer = peer;
    const uint32_t cwnd = m_tcb->m_cWnd.Get();
    const uint32_t ssthresh = m_tcb->m_ssThresh.Get();
    s.cwnd_bytes = cwnd;
    // ns-3 starts ssthresh at UINT32_MAX, Linux at 0x7fffffff segments: both mean "none yet".
    if (ssthresh < 0x7fffffffu)
        s.ssthresh_bytes = ssthresh;
    s.in_slow_start = cwnd < ssthresh;
    if (m_rtt && m_rtt->GetNSamples() > 0)
        s.srtt_s = m_rtt->GetEstimate().GetSeconds();
    if (m_minRtt != ns3::Time::Max())
        s.min_rtt_s = m_minRtt.GetSeconds();
    s.bytes_acked = m_bytesAcked;
    s.retransmits = m_retransmits;
    // SocketOptions wraps the congestion control in the idle restart (tcp-idle-restart.h).
    ns3::Ptr<ns3::TcpCongestionOps> cc = m_congestionControl;
    if (auto wrapper = ns3::DynamicCast<TcpIdleRestart>(cc))
        cc = wrapper->GetInner();
    if (auto cubic = ns3::DynamicCast<TcpLinuxCubic>(cc))
    {
        s.hystart_train_exits = cubic->GetHyStart().GetTrainExits();
        s.hystart_delay_exits = cubic->GetHyStart().GetDelayExits();
    }
    return s;
}

} // namespace hilosim
